"""Spellings NumPy computes in one call (``Composite.one_call``: LAPACK factorizations,
np.histogram) are priced as that one call when run as Python, and a packed factorization's
compiled call as NumPy's call and its packing (kiln/runtime/cost.py, ``PACKED_CALL_US`` in
kiln/ops/factorizations.py). Priced per op before, a 9x3 ``np.linalg.lstsq`` (eleven nodes
compiled: two kernels, a range and a mask selection) compiled at ~1.4-1.8x NumPy, and a
graph of LAPACK calls on 4x4 inputs at ~1.4x."""
import numpy as np
import pytest

import kiln
from kiln.config import config
from tests.test_programs_library import linalg_suite


@pytest.fixture(autouse=True)
def _cost_model_on(monkeypatch):
    kiln.reset()
    monkeypatch.setattr(config, "cost_model", True)


def lstsq(a, b):
    return np.linalg.lstsq(a, b, rcond=None)


def _same(got, want):
    for g, w in zip(got, want):
        if isinstance(w, tuple):
            _same(g, w)
        else:
            np.testing.assert_array_equal(g, w)
            assert np.asarray(g).dtype == np.asarray(w).dtype


@pytest.mark.parametrize("fn, shapes", [(lstsq, [(9, 3), (9,)]), (linalg_suite, [(4, 4)])])
def test_small_lapack_graphs_run_as_python(fn, shapes):
    args = [np.random.default_rng(5).standard_normal(s) for s in shapes]
    compiled = kiln.compile(fn)
    _same(compiled(*args), fn(*args))
    [record] = compiled.records
    assert record.graph is None and "runs as Python" in record.runs_as_python, record.runs_as_python
    out = kiln.explain(fn)(*args)
    assert out.graph_count == 0 and out.runs_as_python


def test_one_calls_nodes_share_one_group():
    seen = []
    kiln.compile(lambda a, b: lstsq(a, b), backend=lambda g, ex: seen.append(g) or g)(
        np.ones((9, 3)) + np.eye(9, 3), np.arange(9.0))
    [graph] = seen
    groups = {n.meta.get("one_call") for n in graph.nodes if n.kind == "call"}
    assert len(groups) == 1 and None not in groups


def test_a_histogram_is_one_call_unless_its_equal_bins_fuse():
    # edges from the data: np.histogram's one call either way, run as Python; equal bins
    # over a range: a kernel compiled, priced as its ops (NumPy's call costs ~50 us)
    x = np.random.default_rng(6).standard_normal(100)
    for fn, compiles in ((lambda x: np.histogram(x, 10), False),
                         (lambda x: np.histogram(x, 10, range=(-1.0, 1.0)), True)):
        compiled = kiln.compile(fn)
        _same(compiled(x), fn(x))
        [record] = compiled.records
        assert (record.graph is not None) == compiles, record.runs_as_python



def unique_then_arithmetic(k, v):
    u, inv = np.unique(k, return_inverse=True)
    return u, inv, v * 2 + 1 - v


def test_unique_with_its_extra_results_is_one_call():
    # np.unique(k, return_inverse=True) is one NumPy call (~5 us on 20 values); compiled,
    # the values and the inverse are a call each, which the elementwise work saved (one
    # kernel for three ufuncs) does not pay for. Priced as two calls as Python, it compiled
    groupby = [np.random.default_rng(6).integers(0, 5, 20), np.random.default_rng(7).standard_normal(20)]
    compiled = kiln.compile(unique_then_arithmetic)
    _same(compiled(*groupby), unique_then_arithmetic(*groupby))
    [record] = compiled.records
    assert record.graph is None and "runs as Python" in record.runs_as_python, record.runs_as_python
