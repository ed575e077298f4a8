"""The cost model prices returned views (kiln/runtime/cost.py ``_returned_views_us``):
a compiled call rebuilds each view it returns by calling the view ops' NumPy kernels after
the graph ran (aot/view_outputs.py), 0.48 us for ``return a.T`` against NumPy's 0.1 and
2.2 us against 0.46 for three views of a 3x3 array; such small graphs run as Python.
Whichever way they run, views stay views of the arrays NumPy's would view. Returned
scalars are priced too (``_returned_scalars_us``): each is a 0-d buffer and a NumPy
scalar made from it."""
import sys
from pathlib import Path

import numpy as np
import pytest

import kiln
from kiln.config import config
from kiln.runtime import cost

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.slowdowns import identity_aliases  # noqa: E402


@pytest.fixture(autouse=True)
def _cost_model_on(monkeypatch):
    kiln.reset()
    monkeypatch.setattr(config, "cost_model", True)


def three_views(a):
    return a.T[::2], a.reshape(-1), a.swapaxes(0, 1)


def chained_view(a):
    return a.T[::2][::-1][1:]


def shared_base(a):
    b = a * 2.0
    return b, b.T, b[::2]


def _check_same(fn, compiled, a):
    got, want = compiled(a), fn(a)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)   # (a kernel's libm vs NumPy's)
        assert g.dtype == w.dtype and g.strides == w.strides
        assert np.shares_memory(g, a) == np.shares_memory(w, a)
    for i, w in enumerate(want):   # views of one result share its memory, as NumPy's do
        for j in range(i):
            assert np.shares_memory(got[i], got[j]) == np.shares_memory(w, want[j])


@pytest.mark.parametrize("fn", [three_views, chained_view, shared_base])
def test_small_graphs_returning_views_run_as_python(fn):
    a = np.random.default_rng(11).standard_normal((3, 3))
    compiled = kiln.compile(fn)
    _check_same(fn, compiled, a)
    [record] = compiled.records
    assert record.graph is None and "runs as Python" in record.runs_as_python, record.runs_as_python
    _check_same(fn, compiled, a + 1.0)
    # other kinds of argument: guards (or the verdict's types) send them elsewhere, right
    for other in (np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(12.0).reshape(3, 4)[:, ::2],
                  np.ones((4, 4, 1))[..., 0]):
        _check_same(fn, compiled, other)


def test_the_estimate_counts_each_replayed_view():
    compiled = kiln.compile(three_views, backend=lambda graph, example: graph)
    compiled(np.ones((3, 3)))
    graph = compiled.records[0].graph
    python, compiled_us = cost.estimate(graph, c_guards=True, direct=True)
    # (a.reshape(-1) is a view or a copy as a's layout says: the call checks it first)
    assert compiled_us == pytest.approx(cost.ENTRY_DIRECT_US + cost.VIEW_OUTPUTS_US + 4 * cost.VIEW_REPLAY_US
                                        + cost.VIEW_LAYOUT_US)
    assert python < compiled_us


def test_returned_aliases_are_priced_as_replays():
    """``x.astype(x.dtype, copy=False)``, ``np.ascontiguousarray(x)`` and ``x.view()``
    (aliasing ops, not views) are NumPy's no-copy calls, and compiled each is rebuilt after
    the graph, behind a check of x's layout: nine of them on float32[4] took 1.5x NumPy's
    time compiled (priced 2.4 us against 3.8); now they run as Python, and stay the
    argument itself, views of it and fresh copies as in NumPy."""
    x = np.arange(4.0, dtype=np.float32)
    compiled = kiln.compile(identity_aliases)
    got, want = compiled(x), identity_aliases(x)
    [record] = compiled.records
    assert record.graph is None and "runs as Python" in record.runs_as_python, record.runs_as_python
    for g, w in zip(got, want):
        assert (g is x) == (w is x) and np.shares_memory(g, x) == np.shares_memory(w, x)
        assert g.dtype == w.dtype and np.array_equal(g, w)
    graph_of = kiln.compile(identity_aliases, backend=lambda graph, example: graph)
    graph_of(x)
    graph = graph_of.records[0].graph
    python, compiled_us = cost.estimate(graph, c_guards=True)
    # astype(copy=False), ascontiguousarray, view: NumPy's cheap calls; replayed compiled
    assert cost.VIEW_LAYOUT_US + 5 * cost.VIEW_REPLAY_US < compiled_us
    assert python < compiled_us


def heavy_with_a_view(a):
    return np.sin(a) * np.cos(a) + np.exp(a) * np.tanh(a), a.T


def contiguous_view_of_a_result(a):
    return (a * 2.0 + 1.0)[1:]


@pytest.mark.parametrize("fn", [heavy_with_a_view, contiguous_view_of_a_result])
def test_graphs_whose_work_outweighs_their_views_still_compile(fn):
    """Five ufuncs on 9 elements cost NumPy more than a kernel and one replayed view; a
    C-contiguous row slice of a result returned alone is computed by the kernel (no
    replay, nothing priced)."""
    a = np.random.default_rng(12).standard_normal((3, 3))
    compiled = kiln.compile(fn)
    _check_same(fn, compiled, a)
    [record] = compiled.records
    assert record.graph is not None and not record.runs_as_python
    _check_same(fn, compiled, a * 0.5)


def doubled(x):
    return [float(v) * 2 for v in x]


def doubled_sum(x):
    return float((x * 2).sum())


@pytest.mark.parametrize("n", [8, 24])
def test_a_graph_returning_a_scalar_an_element_runs_as_python(n):
    """``[float(v) * 2 for v in x]`` unrolls to one returned scalar an element: compiled
    ~0.24 us each (OUTPUT_SCALAR_US), 2.5x NumPy's time on 48 elements while the model
    priced the graph at 0.8 us. Summed to one scalar, the work still compiles (one
    returned scalar is the entry's: ``z + 1`` of a 0-d z compiles, test_cost_model.py)."""
    x = np.random.default_rng(3).standard_normal(n)
    compiled = kiln.compile(doubled)
    for arg in (x, x + 1.0):
        got, want = compiled(arg), doubled(arg)
        assert got == want and [type(v) for v in got] == [type(v) for v in want]
    [record] = compiled.records
    assert record.graph is None and "runs as Python" in record.runs_as_python, record.runs_as_python
    summed = kiln.compile(doubled_sum)
    assert summed(x) == pytest.approx(doubled_sum(x), rel=1e-15)
    [record] = summed.records
    assert record.graph is not None, record.runs_as_python


def test_returned_scalars_are_priced_once_each_past_the_first():
    from kiln.ir import trace
    from kiln.ops import F, TensorMeta

    def twice(x):
        s = F.sum(x)
        return s, s, F.max(x), F.multiply(x, x)   # (an array result is NumPy's as well)
    g = trace(twice, [TensorMeta((3,), np.float64)], ["x"])
    assert cost._returned_scalars_us(g) == pytest.approx(cost.OUTPUT_SCALAR_US)   # (past the first)
