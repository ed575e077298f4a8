"""The scalar-loop generator (scalar_loops.py: element loops over 1-d arrays of 13 dtypes,
Python and NumPy scalar accumulators, operators, casts, element reads and writes at
their ends, branches, break/continue, appends and early returns; values, types,
exceptions, arguments after the call and warnings compared with plain Python) on a fixed
seed set, eager and cpp (seeds 100, 108, 217 found an element store's OverflowError, a
zero-trip loop's type and a path not taken's warning: docs/fuzzing.md "Stop 58")."""
from __future__ import annotations

import os

import pytest

from kiln.config import config

from .scalar_loops import check_seed

SEEDS = [int(s) for s in (os.environ.get("KILN_FUZZ_SLOOPS_SUITE") or "100,108,217").split(",")]


@pytest.fixture(autouse=True)
def _no_cost_model(monkeypatch):
    monkeypatch.setattr(config, "cost_model", False)


@pytest.mark.parametrize("backend", ["eager", "cpp"])
@pytest.mark.parametrize("seed", SEEDS)
def test_scalar_loop_programs_match_python(seed, backend):
    check_seed(seed, (backend,))
