"""The trip-count generator (trips.py: loops whose counts and sizes change between calls,
dynamic=None and True) on a fixed seed set against plain Python, on eager (what is checked
is capture's loop nodes and their entries; the long run checks cpp: docs/fuzzing.md)."""
from __future__ import annotations

import os

import pytest

from kiln.config import config

from .trips import check_seed

SEEDS = [int(s) for s in (os.environ.get("KILN_FUZZ_TRIPS_SUITE") or "7,9").split(",")]


@pytest.fixture(autouse=True)
def _no_cost_model(monkeypatch):
    monkeypatch.setattr(config, "cost_model", False)


@pytest.mark.parametrize("seed", SEEDS)
def test_trip_count_programs_match_python(seed):
    check_seed(seed, ("eager",))
