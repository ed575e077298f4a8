"""Reduction parameters whose meaning depends on sizes or casts, each against NumPy on
the cpp and eager backends, first and later calls:

- ``initial=`` is cast into the reduction's dtype as NumPy casts it (``np.max(ints,
  initial=2.5)`` is an int, ``np.sum(ints, initial=2.5)`` adds 2); np.max/np.min with an
  initial give it for an empty reduction, also for a selection whose length is known only
  at run time (``x[x > 0].max(initial=0)`` of no positive element);
- np.var/np.std with a ``ddof`` that leaves no degree of freedom warn "Degrees of freedom
  <= 0 for slice" with NumPy's divide warnings, also when the graph was made for dynamic
  sizes at other lengths."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln

BACKENDS = ["cpp", "eager"]
_rng = np.random.default_rng(4107)


def _run(fn, *args):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        try:
            out = fn(*args)
        except Exception as e:  # noqa: BLE001 - compared with NumPy's
            out = (type(e), str(e))
    return out, sorted((w.category.__name__, str(w.message)) for w in got)


def _same(got, want):
    assert got[1] == want[1]
    g, w = got[0], want[0]
    if isinstance(w, tuple) and len(w) == 2 and isinstance(w[0], type):
        assert g == w
        return
    for a, b in zip(g if isinstance(w, tuple) else (g,), w if isinstance(w, tuple) else (w,)):
        assert type(a) is type(b) and np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a, b)


INITIAL = [
    lambda x: np.max(x, initial=2.5),
    lambda x: np.min(x, axis=0, initial=1.5, where=x > 1),
    lambda x: np.sum(x, initial=2.5),
    lambda x: np.prod(x, axis=-1, initial=2.5, keepdims=True),
    lambda x: np.maximum.reduce(x, initial=7.9),
    lambda x: (x * 1.0).max(initial=np.nan),
    lambda x: x[x > 2].max(initial=0),
    lambda x: np.min(x[x > 2], initial=-1.5) * 2,
    lambda x: (x[x > 2] * 0.5).min(initial=9.0),
    lambda x: x.astype(np.int8).max(initial=300),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(INITIAL)))
def test_initial_as_numpy(case, backend):
    fn = INITIAL[case]
    compiled = kiln.compile(fn, backend=backend)
    for x in (np.arange(1, 6), np.array([3, 1, 4, 1, 5, 9, 2, 6]), np.array([1, 2, 0, 1]),
              np.arange(1, 6)):
        _same(_run(compiled, x), _run(fn, x))


def test_initial_gradient_where_initial_wins():
    """d max(x, initial=c) / dx is 0 where c is the maximum (not 0 * g / 0)."""
    grad = kiln.grad(lambda x: np.max(x, initial=10.0) + np.min(x, initial=-1.0).sum())
    np.testing.assert_array_equal(grad(np.array([1.0, 3.0, 2.0])), [0.0, 0.0, 0.0])
    grad = kiln.grad(lambda x: np.max(x, initial=0.0))
    np.testing.assert_array_equal(grad(np.array([1.0, 3.0, 2.0])), [0.0, 1.0, 0.0])


def var_ddof1(x):
    return np.var(x, ddof=1)


def std_ddof3(x):
    return x.std(ddof=3) + 1.0


def var_rows(x):
    return np.var(x.reshape(2, -1), axis=1, ddof=2.5)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [var_ddof1, std_ddof3, var_rows], ids=lambda f: f.__name__)
def test_no_degree_of_freedom_warns_as_numpy(fn, backend):
    compiled = kiln.compile(fn, backend=backend)
    for n in (10, 12, 2, 4, 6, 8, 1, 14, 0):
        x = _rng.standard_normal(n)
        if fn is var_rows and n % 2:
            continue
        _same(_run(compiled, x), _run(fn, x))


def mean_of_selection(x):
    return x[x > 0].mean() + 1.0


def np_mean_of_selection(x):
    return np.mean(x[x > 0])


def mean_where(x):
    return np.mean(x, where=x > 0)


def mean_where_rows(x):
    return x.reshape(2, -1).mean(axis=1, where=x.reshape(2, -1) > 0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [mean_of_selection, np_mean_of_selection, mean_where, mean_where_rows],
                         ids=lambda f: f.__name__)
def test_mean_of_nothing_warns_where_numpy_does(fn, backend):
    """"Mean of empty slice" from a selection or where= mask that selects nothing at run
    time, once per call, pointing where NumPy's points (the user's line for x.mean(),
    NumPy's fromnumeric.py for np.mean), then NumPy's 0 / 0: "invalid value encountered in
    scalar divide" (or "in divide" along an axis) from NumPy's _methods.py, as np.errstate
    says (the second was missing: the kernel's 0 / 0 flag had two possible owners)."""
    def record(f, x):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            out = f(x)
        return out, [(w.category, str(w.message), w.filename, w.lineno) for w in got]
    compiled = kiln.compile(fn, backend=backend)
    for x in ([1.0, -2, 3, 4], [1.0, -2, -3, 4], [-1.0, -2, -3, -4], [-1.0, -2, 3, 4]):
        for dtype in (np.float64, np.float32, np.int64):
            x = np.array(x).astype(dtype)
            got, want = record(compiled, x), record(fn, x)
            assert got[1] == want[1]
            assert got[0].dtype == want[0].dtype
            np.testing.assert_array_equal(got[0], want[0])
            with np.errstate(invalid="ignore"):
                got, want = record(compiled, x), record(fn, x)
            assert got[1] == want[1]
