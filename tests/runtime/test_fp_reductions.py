"""A sum's or product's floating-point warnings beside other ops of its kernel that may
raise the same kind: the kernel's second body tells the reduction's by its predicate (a
non-finite result of finite terms: "overflow encountered in reduce"; a NaN of terms that
are no NaN: "invalid value encountered in reduce"), with term accumulators
(lowering/cpp_stages.py ``_term_accumulators``). Before stop 62 two sums in one kernel, a
sum beside NumPy scalar math and a sum's inf - inf beside a multiply said nothing."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln


def _said(fn, *args):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fn(*(a.copy() for a in args))
    return sorted({f"{w.category.__name__}: {w.message}" for w in got})


def two_sums(x, y):
    return x.sum() + y.sum()


def sum_over_first(x, y):
    return x.sum() / x[0]


def sum_of_products(x, y):
    return (x * y).sum()


def sum_times_prod(x, y):
    return x.sum() * y.prod()


def two_means(x, y):
    return x.mean() - y.mean()


def sum_beside_logs(x, y):
    return x.sum() + np.log(np.abs(y)).sum()


def row_sums(x, y):
    return x.reshape(4, -1).sum(axis=1) * y[:4]


PROGRAMS = [two_sums, sum_over_first, sum_of_products, sum_times_prod, two_means, sum_beside_logs,
            row_sums]
OVERFLOWING = "RuntimeWarning: overflow encountered in reduce"
INVALID = "RuntimeWarning: invalid value encountered in reduce"


@pytest.mark.parametrize("fn, dtype, value", [
    (two_sums, np.float32, 3e37), (two_sums, np.float64, 1e308),
    (sum_over_first, np.float32, 3e37), (two_means, np.float32, 3e37),
    (sum_beside_logs, np.float64, 1e308), (sum_times_prod, np.float32, 3e37),
    (row_sums, np.float64, 1e308),
])
def test_a_reduction_overflowing_beside_others_warns(fn, dtype, value):
    x, y = np.full(40, value, dtype), np.full(40, 2.0, dtype)
    said = _said(kiln.compile(fn, backend="cpp"), x, y)
    assert OVERFLOWING in said and said == _said(fn, x, y)


@pytest.mark.parametrize("fn", [two_sums, sum_of_products, two_means, sum_beside_logs])
def test_the_sum_of_opposite_infinities_beside_others_warns_invalid(fn):
    x, y = np.full(40, np.inf), np.full(40, 2.0)
    x[1::3] = -np.inf
    said = _said(kiln.compile(fn, backend="cpp"), x, y)
    assert INVALID in said and said == _said(fn, x, y)


def test_a_product_that_overflows_beside_a_sum_warns():
    x, y = np.full(40, 1.0), np.full(40, 1e20)
    said = _said(kiln.compile(sum_times_prod, backend="cpp"), x, y)
    assert OVERFLOWING in said and said == _said(sum_times_prod, x, y)


EDGES = {np.float64: [0.0, -0.0, np.nan, np.inf, -np.inf, np.finfo(np.float64).max,
                      np.finfo(np.float64).tiny, 1e308, -1e308, 1.0],
         np.float32: [0.0, -0.0, np.nan, np.inf, -np.inf, np.finfo(np.float32).max,
                      np.finfo(np.float32).tiny, 3e37, -3e37, 1.0]}


@pytest.mark.parametrize("fn", PROGRAMS)
def test_edge_values_never_warn_what_numpy_does_not(fn):
    """Over edge values, the reductions' warnings are NumPy's (NumPy scalar math's, which
    kiln does not tell, and an overflow beside an infinite term may be missing: never one
    NumPy does not give)."""
    compiled = kiln.compile(fn, backend="cpp")
    for dtype, edges in EDGES.items():
        for v in edges:
            for w in (1.0, v, -v if v == v else 2.0):
                x = np.full(40, v, dtype)
                x[1::3] = w
                y = np.full(40, 2.0, dtype)
                y[5] = v
                theirs, ours = _said(fn, x, y), _said(compiled, x, y)
                assert set(ours) <= set(theirs), (dtype, v, w)
                assert [s for s in theirs if s.endswith("reduce")] == [s for s in ours if s.endswith("reduce")] \
                    or fn is sum_of_products, (dtype, v, w, theirs, ours)
