"""A NumPy call the lowering plans for a graph of writes is priced as the cost model prices
that call as Python (kiln/runtime/cost.py ``_extern_us``), and so is a graph resumed after
a break: the tally counts a mean as kernel work, but the mean of a boolean selection (its
size known only at run time) is NumPy's own, a Python function over several ufunc calls.
kmeans' ``if m.any(): C[j] = X[m].mean(0)`` compiled after its break at 1.3x NumPy's time
(the graph 7.1 us against NumPy's 7.2, plus the break's segment each iteration)."""
import numpy as np
import pytest

import kiln
from kiln.config import config


@pytest.fixture(autouse=True)
def _cost_model_on(monkeypatch):
    kiln.reset()
    monkeypatch.setattr(config, "cost_model", True)


def assign_then_update(X, C):
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    lab = d.argmin(1)
    for j in range(2):
        m = lab == j
        if m.any():
            C[j] = X[m].mean(0)
    return C, lab


def test_a_resumed_graph_of_numpy_s_means_runs_as_python():
    X = np.arange(12.0).reshape(6, 2)
    C = X[[0, 5]].copy()
    out = kiln.explain(assign_then_update)(X, C.copy())
    assert out.graph_count == 1 and out.graph_break_count == 1   # the assignment compiles
    [note] = out.runs_as_python
    assert "<resume at" in note and "1 graph break" in note, note
    compiled = kiln.compile(assign_then_update)
    for _ in range(2):
        given, mine = C.copy(), C.copy()
        got, want = compiled(X, given), assign_then_update(X, mine)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        assert got[0] is given   # the argument written, and returned, as in NumPy
        np.testing.assert_array_equal(given, mine)
