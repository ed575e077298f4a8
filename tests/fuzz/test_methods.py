"""The methods generator (methods.py: ndarray methods and attributes as code chains them,
keyword edges of reductions and ufuncs, Python and NumPy scalars and 0-d arrays at their
ends; values, scalar types, flags and aliasing compared with NumPy's) on a fixed seed set
against plain Python on eager (seed 21 found ``v.flat[0] = s``'s error: docs/fuzzing.md
"Stop 57")."""
from __future__ import annotations

import os

import pytest

from kiln.config import config

from .methods import check_seed

SEEDS = [int(s) for s in (os.environ.get("KILN_FUZZ_METHODS_SUITE") or "21,1").split(",")]


@pytest.fixture(autouse=True)
def _no_cost_model(monkeypatch):
    monkeypatch.setattr(config, "cost_model", False)


@pytest.mark.parametrize("seed", SEEDS)
def test_methods_programs_match_numpy(seed):
    check_seed(seed, ("eager",))
