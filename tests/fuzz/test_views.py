"""The views generator (views.py: arrays a call returns that are views or copies of its
arguments, written by the caller between calls that pass the same, mutated arguments
again; flags, ``.base``, strides and aliasing compared with NumPy's) on a fixed seed set
against plain Python: on eager (seeds that found an out= of sizes no guard tied, an unused
np.where dropped, flatten's run-time size: docs/fuzzing.md "Stop 56"), and one on cpp."""
from __future__ import annotations

import os

import pytest

from kiln.config import config

from .views import check_seed

SEEDS = [int(s) for s in (os.environ.get("KILN_FUZZ_VIEWS_SUITE") or "7015,7263,7308").split(",")]
CPP_SEEDS = [int(s) for s in (os.environ.get("KILN_FUZZ_VIEWS_SUITE_CPP") or "7263").split(",")]


@pytest.fixture(autouse=True)
def _no_cost_model(monkeypatch):
    monkeypatch.setattr(config, "cost_model", False)


@pytest.mark.parametrize("seed", SEEDS)
def test_views_programs_match_numpy(seed):
    check_seed(seed, ("eager",))


@pytest.mark.parametrize("seed", CPP_SEEDS)
def test_views_programs_match_numpy_on_cpp(seed):
    check_seed(seed, ("cpp",))
