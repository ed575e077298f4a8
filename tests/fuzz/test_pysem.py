"""The Python-semantics generator (pysem.py: module arrays, defaults and an object's
attributes mutated and rebound between calls, bound methods, containers of arrays,
exceptions around array ops, Python numbers mixed with NumPy scalars of every dtype) on a
fixed seed set against plain Python, on eager (what is checked is capture and the scalar
rules; one seed on cpp, whose kernels wrote a global in place; the long run checks cpp:
docs/fuzzing.md)."""
from __future__ import annotations

import os

import pytest

from kiln.config import config

from .pysem import check_seed

SEEDS = [int(s) for s in (os.environ.get("KILN_FUZZ_PYSEM_SUITE") or "211,2032,3155,5033").split(",")]
CPP_SEEDS = [int(s) for s in (os.environ.get("KILN_FUZZ_PYSEM_SUITE_CPP") or "8123").split(",")]


@pytest.fixture(autouse=True)
def _no_cost_model(monkeypatch):
    monkeypatch.setattr(config, "cost_model", False)


@pytest.mark.parametrize("seed", SEEDS)
def test_python_semantics_programs_match_python(seed):
    check_seed(seed, ("eager",))


@pytest.mark.parametrize("seed", CPP_SEEDS)
def test_python_semantics_programs_match_python_on_cpp(seed):
    check_seed(seed, ("cpp",))
