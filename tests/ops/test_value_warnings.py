"""NumPy's warnings that depend on values come out of compiled graphs (kiln/ops/
value_warnings.py): "All-NaN slice encountered" (np.nanmax, np.nanmin), "Mean of empty
slice" (np.nanmean), "Degrees of freedom <= 0 for slice." (np.nanvar, np.nanstd), with
NumPy's category, message, count and place (the user's line, or NumPy's own line where
NumPy's points there), on first and later calls, once per place under the default filter,
raised under an "error" filter; none where NumPy gives none (np.fmax.reduce, data with a
value in every slice, the 0 / 0 of an all-NaN mean)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln

_rng = np.random.default_rng(2051)
_A = _rng.standard_normal((4, 5))
_A[1] = np.nan           # one all-NaN row
_A[2, :4] = np.nan       # one value left in a row (ddof=1 leaves no degree of freedom)
_A[:, 3] = np.nan        # one all-NaN column
_FULL = _rng.standard_normal((4, 5))


def nanmax_rows(x):
    return np.nanmax(x, axis=1)


def nanmin_cols(x):
    return np.nanmin(x, axis=0, keepdims=True)


def nanmax_all(x):
    return np.nanmax(x[1]) + 1.0


def nanmean_rows(x):
    return np.nanmean(x, axis=1)


def nanmean_all(x):
    return np.nanmean(x[1])


def nanvar_rows(x):
    return np.nanvar(x, axis=1, ddof=1)


def nanstd_cols(x):
    return np.nanstd(x, axis=0)


def nanstd_ddof(x):
    return np.nanstd(x, axis=1, ddof=1) * 2.0


def several(x):
    a = np.nanmax(x, axis=0)
    b = np.nanmean(x, axis=1)
    return a, b, np.nanvar(x)


def fmax_reduce(x):   # NumPy's ufunc method does not warn
    return np.fmax.reduce(x, axis=1)


def nanmedian_rows(x):   # (an extern: NumPy's call warned from kiln/ops/sorting.py's line)
    return np.nanmedian(x, axis=1)


FUNCS = [nanmax_rows, nanmin_cols, nanmax_all, nanmean_rows, nanmean_all, nanvar_rows,
         nanstd_cols, nanstd_ddof, several, fmax_reduce, nanmedian_rows]


def _record(fn, *args):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [(w.category, str(w.message), w.filename, w.lineno) for w in got]


def _same(got, want):
    assert len(got[0]) == len(want[0]) if isinstance(want[0], tuple) else True
    for g, w in zip(got[0] if isinstance(got[0], tuple) else (got[0],),
                    want[0] if isinstance(want[0], tuple) else (want[0],)):
        assert type(g) is type(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert got[1] == want[1]


@pytest.mark.parametrize("backend", ["cpp", "eager"])
@pytest.mark.parametrize("fn", FUNCS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_warnings_as_numpy(fn, backend, dtype):
    a, full = _A.astype(dtype), _FULL.astype(dtype)
    compiled = kiln.compile(fn, backend=backend)
    for x in (a, full, a, a[::-1].copy()):
        _same(_record(compiled, x), _record(fn, x))


@pytest.mark.parametrize("fn", [nanmax_rows, nanmean_rows, nanstd_ddof], ids=lambda f: f.__name__)
def test_complex_and_0d(fn):
    c = (_A + 1j * _A[::-1]).astype(np.complex128)
    if fn is nanmax_rows:   # (complex nanmax runs as NumPy; a 0-d array here)
        c = np.array(np.nan)
        fn = np.nanmax
    compiled = kiln.compile(lambda x: fn(x))
    got, want = _record(compiled, c), _record(lambda x: fn(x), c)
    assert [w[:2] for w in got[1]] == [w[:2] for w in want[1]] and want[1]
    np.testing.assert_allclose(got[0], want[0])


def _thrice_under_the_default_filter(f, x):
    """The warnings of three calls ``f(x)`` under the default filter: (message, file, line)."""
    with warnings.catch_warnings(record=True) as got:
        warnings.resetwarnings()
        warnings.simplefilter("default")
        globals().pop("__warningregistry__", None)
        for _ in range(3):
            f(x)
    return [(str(w.message), w.filename, w.lineno) for w in got]


def test_once_per_line_under_the_default_filter():
    """The default action shows a warning once per place (the module's
    __warningregistry__), as NumPy's warnings.warn does."""
    def twice(x):
        return np.nanmax(x, axis=1)

    want = _thrice_under_the_default_filter(twice, _A)
    assert _thrice_under_the_default_filter(kiln.compile(twice), _A) == want and len(want) == 1


def test_error_filter_raises_numpys_warning():
    def f(x):
        return np.nanmean(x, axis=1) + 1.0
    compiled = kiln.compile(f)
    compiled(_FULL)
    for fn in (f, compiled):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            with pytest.raises(RuntimeWarning, match="Mean of empty slice"):
                fn(_A)


def test_the_check_is_in_the_graph():
    """The check is part of the graph: no break."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = kiln.explain(nanmax_rows)(_A)
    assert out.graph_break_count == 0 and out.graph_count == 1
    assert any("warn_if_any" in ops for ops in out.ops_per_graph)


def test_gradient_through_nanmax_keeps_the_warning():
    def loss(x):
        return np.nanmean(x, axis=1).sum()
    x = np.where(np.isnan(_A), 0.0, _A)
    x[1] = np.nan
    want = _record(lambda v: kiln.grad(loss)(v), x)
    got = _record(lambda v: kiln.grad(kiln.compile(loss))(v), x)
    np.testing.assert_allclose(got[0], want[0])
    assert [w[:2] for w in got[1]] == [w[:2] for w in want[1]]


def cov_one_observation(x):
    return np.cov(x[:, :1]) * 2.0


def cov_ddof(x):
    return np.cov(x, ddof=5)


def corrcoef_one_observation(x):
    return np.corrcoef(x[:, :1])


@pytest.mark.parametrize("backend", ["cpp", "eager"])
@pytest.mark.parametrize("fn", [cov_one_observation, cov_ddof, corrcoef_one_observation],
                         ids=lambda f: f.__name__)
def test_shape_only_warnings_as_numpy(fn, backend):
    """Warnings that shapes and params decide ("Degrees of freedom <= 0 for slice" of
    np.cov and np.corrcoef of one observation, or ddof >= n): the call runs as NumPy,
    with NumPy's floating-point warnings after it (same files and lines)."""
    compiled = kiln.compile(fn, backend=backend)
    for x in (_FULL, _FULL * 2.0):
        got, want = _record(compiled, x), _record(fn, x)
        assert got[1] == want[1] and want[1]
        np.testing.assert_allclose(got[0], want[0], equal_nan=True)


# A selection's length is known only at run time: its mean/var/std run as NumPy's call (an
# extern), which warns when nothing is selected. NumPy's methods warn at the user's line,
# its functions in fromnumeric.py, and x.std()'s warning is x.var()'s in _methods.py.
def var_method(x):
    return x[x > 0.5].var()


def var_function(x):
    return np.var(x[x > 0.5])


def mean_method_axis(x):
    return x[x > 0.5].mean(axis=0)


def mean_function_axis(x):
    return np.mean(x[x > 0.5], axis=0)


def std_method(x):
    return x[x > 0.5].std(ddof=1)


def var_method_in_helper(x):
    return _var_of(x[x > 0.5]) * 2.0


def _var_of(s):
    return s.var(axis=0)


@pytest.mark.parametrize("backend", ["cpp", "aot_eager", "eager"])
@pytest.mark.parametrize("fn", [var_method, var_function, mean_method_axis, mean_function_axis,
                                std_method, var_method_in_helper], ids=lambda f: f.__name__)
def test_selection_reductions_warn_where_numpy_does(fn, backend):
    compiled = kiln.compile(fn, backend=backend)
    nothing = np.linspace(-1.0, 0.4, 7)
    for x in (nothing, np.random.default_rng(77).random(9) + 0.3, nothing[::-1].copy()):
        got, want = _record(compiled, x), _record(fn, x)
        assert got[1] == want[1]
        np.testing.assert_allclose(got[0], want[0], equal_nan=True)
        assert np.asarray(got[0]).dtype == np.asarray(want[0]).dtype


def test_selection_var_warns_once_per_line_under_the_default_filter():
    want = _thrice_under_the_default_filter(var_method, np.zeros(4))
    assert _thrice_under_the_default_filter(kiln.compile(var_method), np.zeros(4)) == want and want
