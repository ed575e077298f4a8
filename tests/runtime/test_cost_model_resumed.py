"""Graphs resumed after a break (kiln/runtime/cost.py, kiln/api.py).

A NumPy call the lowering plans for a graph of writes is priced as the cost model prices
that call as Python (kiln/runtime/cost.py ``_extern_us``), and so is a graph resumed after
a break: the tally counts a mean as kernel work, but the mean of a boolean selection (its
size known only at run time) is NumPy's own, a Python function over several ufunc calls.
kmeans' ``if m.any(): C[j] = X[m].mean(0)`` compiled after its break at 1.3x NumPy's time
(the graph 7.1 us against NumPy's 7.2, plus the break's segment each iteration).

A resume function's graph in a family that compiled nothing before it pays the break's
segment on every call (priced with it, kiln/api.py ``_compile``): declined, the whole
function runs as Python."""
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


def tail_after_try(A):
    try:
        if A[0, 0] > 2:          # data-dependent: the whole try statement runs as Python
            raise ValueError("large")
        k = A.shape[1]
    except ValueError:
        k = 1
    ortho = np.abs(A.T @ A - np.eye(k)).max()
    return ortho < 1e-5, ortho


def test_a_tail_after_a_break_before_any_work_prices_the_segment():
    """The tail (7 ops on 4x3, priced 2.4 us compiled against 3.4 with no break) kept the
    try statement a segment and the tail a resume function's dispatch on every call:
    modified_gram_schmidt_or_lstsq took 1.15x NumPy's time compiled. Priced with the
    segment, it runs as Python, and so does the whole function from its next call."""
    A = np.eye(4, 3)
    out = kiln.explain(tail_after_try)(A)
    assert out.graph_count == 0 and out.graph_break_count == 1
    [note] = out.runs_as_python
    assert "<resume at" in note and "1 graph break" in note, note
    compiled = kiln.compile(tail_after_try)
    for x in (A, A * 3.0, A):
        assert compiled(x) == tail_after_try(x)
    assert compiled._as_python is not None   # the root's verdict: no segment, no guards


def lots_left(qty):
    from collections import deque
    lots = deque([q, 2.0] for q in qty.tolist())
    left = np.array([lot[0] for lot in lots], dtype=np.int64)   # breaks: iterating a deque
    basis = np.array([lot[1] for lot in lots])                   # breaks again, mid-statement
    return left, basis


def test_a_priced_out_region_from_a_resume_entered_mid_statement_runs_to_that_statement_s_end():
    # The resume function after the first break starts inside ``np.array(...)`` of the
    # first line (three values on its stack); the second break's graph priced out, and the
    # region from the resume's start ran until the stack was back at those three values,
    # not to the second statement's end: its exit held the second np.array's NULL
    # (UnboundLocalError '___tmp0', real21's FIFO cost basis; its Ramer-Douglas-Peucker
    # raised IndexError building the resume function). The region ends with the statement.
    compiled = kiln.compile(lots_left)
    for n in (2, 5, 5):
        qty = np.arange(1, n + 1)
        for got, want in zip(compiled(qty), lots_left(qty)):
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype
