"""A family whose loop breaks every trip (kiln/family.py ``resume_hops``, kiln/api.py
``_run_new``).

A loop over ``zip(a.tolist(), b.tolist())`` with a deque (no model: it breaks) hops
through resume functions several times a trip. When nothing of the family compiles, the
root's first call leaves a verdict and later calls run as Python. A graph after the loop
priced with one break (``np.array(gains)`` of 30 floats, 33 ops as NumPy calls) compiled,
and its existence kept every hop alive: real21's FIFO cost basis on 60 trades took 9.6x
NumPy's time. It is priced with the hops the first call made; and a call that hopped many
times keeps its verdict up to its own sizes even where a list too long to capture made
sizes matter (600 trades: 9.8x without)."""
from collections import deque

import numpy as np
import pytest

import kiln
from kiln.config import config


@pytest.fixture(autouse=True)
def _cost_model_on(monkeypatch):
    kiln.reset()
    monkeypatch.setattr(config, "cost_model", True)


def matched_gains(qty, price):
    lots = deque()
    gains = []
    for q, p in zip(qty.tolist(), price.tolist()):
        if q > 0:
            lots.append(p)
            continue
        gains.append(p - lots.popleft())
    g = np.array(gains)
    return g, g.sum() / len(g)


@pytest.mark.parametrize("n", [6, 60, 600])
def test_a_graph_after_a_loop_that_breaks_every_trip_is_priced_with_its_hops(n):
    qty, price = np.tile([1, -1], n // 2), 100.0 + np.arange(n) % 7
    compiled = kiln.compile(matched_gains)
    for _ in range(3):
        got, want = compiled(qty, price), matched_gains(qty, price)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1] and type(got[1]) is type(want[1])
    # the whole function runs as Python, from the dispatcher, without its entries
    assert not any(e.graph is not None for e in compiled.cache_entries)
    assert compiled._as_python is not None
    out = kiln.explain(matched_gains)(qty, price)
    assert out.graph_count == 0
    hops = int(out.runs_as_python[-1].split(" graph breaks")[0].rsplit(" ", 1)[1])
    assert hops >= n, out.runs_as_python[-1]   # (about two a trip)


def test_a_single_hop_still_compiles_the_graph_after_it():
    def tail(x):
        n = len(x.tolist())   # one break, no loop
        return np.sin(x) * 2 + np.cos(x) * n

    x = np.linspace(0, 1, 4000)
    out = kiln.explain(tail)(x)
    assert out.graph_count == 1 and not out.runs_as_python
    np.testing.assert_allclose(kiln.compile(tail)(x), tail(x), rtol=1e-12)
