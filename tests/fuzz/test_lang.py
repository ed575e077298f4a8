"""The language generator (lang.py: control flow, comprehensions, closures, unpacking,
match, try/with, helpers around arrays) on a fixed seed set, against plain Python.
Mostly the eager backend: what is checked is capture, not the kernels (two seeds on cpp)."""
from __future__ import annotations

import os

import pytest

from kiln.config import config

from .lang import check_seed

# (a long run: python -m tests.fuzz.lang, docs/fuzzing.md)
SEEDS = [int(s) for s in (os.environ.get("KILN_FUZZ_LANG_SUITE") or "139,56,88,137,48,78").split(",")]
CPP_SEEDS = [int(s) for s in (os.environ.get("KILN_FUZZ_LANG_SUITE_CPP") or "110,109").split(",")]


@pytest.fixture(autouse=True)
def _no_cost_model(monkeypatch):
    monkeypatch.setattr(config, "cost_model", False)


@pytest.mark.parametrize("seed", SEEDS)
def test_language_programs_match_python(seed):
    check_seed(seed, ("eager",))


@pytest.mark.parametrize("seed", CPP_SEEDS)
def test_language_programs_match_python_on_cpp(seed):
    check_seed(seed, ("cpp",))
