"""ufunc(..., out=o, where=m) computes only where m is True, on every path that runs a
graph as NumPy (kiln/ops/masked.py): the eager backends, aot's op-by-op replay, explain,
the C++ backend's NumPy run under np.errstate(...='raise') and its extern calls of ufuncs
it does not fuse. Masked-off elements must not warn, raise or change the result."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln

BACKENDS = ["eager", "aot_eager", "cpp"]


def divide_where(t, d):
    np.divide(t, d, out=t, where=d != 0)
    return t


def log_where_fresh(x):
    out = np.full_like(x, -1.0)
    np.log(x, out=out, where=x > 0)
    return out * 2.0


def int_power_where(a, b):
    out = np.zeros_like(a)
    np.power(a, b, out=out, where=b >= 0)   # NumPy: ValueError for a negative int exponent
    return out


def gcd_where(a, b):
    out = np.full_like(a, 7)
    np.gcd(a, b, out=out, where=a > 2)      # an op the C++ backend runs as a NumPy call
    return out + 1


def f32_into_f64(x, m):
    o = np.zeros(x.shape)
    np.sqrt(x, out=o, where=m)
    return o


CASES = {
    "divide_where": (divide_where, lambda: (np.arange(6.0), np.array([0.0, 1, 2, 0, 3, 4]))),
    "log_where_fresh": (log_where_fresh, lambda: (np.array([[0.0, 1.0, -2.0], [3.0, 0.0, 5.0]]),)),
    "int_power_where": (int_power_where, lambda: (np.arange(1, 7), np.array([2, -1, 3, -2, 0, 1]))),
    "gcd_where": (gcd_where, lambda: (np.arange(6), np.array([4, 6, 8, 9, 0, 10]))),
    "f32_into_f64": (f32_into_f64, lambda: (np.array([-1.0, 4.0, 9.0], np.float32),
                                            np.array([False, True, True]))),
}


def _same(got, exp):
    assert type(got) is type(exp) and got.dtype == exp.dtype and got.shape == exp.shape
    np.testing.assert_array_equal(got, exp)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_masked_off_elements_neither_warn_nor_raise(name, backend):
    fn, make = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exp_args = make()
        exp = fn(*exp_args)
    compiled = kiln.compile(fn, backend=backend)
    for mode in ({}, {"all": "raise"}, {"all": "warn"}):
        args = make()
        with warnings.catch_warnings(), np.errstate(**mode):
            warnings.simplefilter("error")    # -W error: any RuntimeWarning is a failure
            got = compiled(*args)
        _same(got, exp)
        for a, e in zip(args, exp_args):
            _same(a, e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_masked_on_elements_still_raise_as_numpy(backend):
    # an unmasked zero divisor: NumPy's FloatingPointError under errstate(divide='raise')
    def f(t, d):
        np.divide(t, d, out=t, where=d > -1)
        return t
    compiled = kiln.compile(f, backend=backend)
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
            f(np.ones(3), np.array([1.0, 0.0, 2.0]))
        with pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
            compiled(np.ones(3), np.array([1.0, 0.0, 2.0]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_mask_is_numpys_type_error(backend):
    def f(a, m):
        o = np.zeros_like(a)
        np.add(a, a, out=o, where=m)
        return o
    with pytest.raises(TypeError) as exp:
        f(np.arange(3.0), np.array([1, 0, 1]))
    with pytest.raises(TypeError) as got:
        kiln.compile(f, backend=backend)(np.arange(3.0), np.array([1, 0, 1]))
    assert str(got.value) == str(exp.value)


def test_explain_runs_the_masked_call_quietly():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = kiln.explain(divide_where)(np.arange(6.0), np.array([0.0, 1, 2, 0, 3, 4]))
    assert out.graph_count == 1 and out.graph_break_count == 0


def _log_where_loss(x, y):
    o = y * 1.0
    np.log(x, out=o, where=x > 0)
    return (o * o).sum()


@pytest.mark.parametrize("compiled", [False, True])
def test_masked_ufunc_differentiates_like_where_of_the_ufunc(compiled):
    xv, yv = np.array([0.5, -1.0, 2.0, 0.0]), np.array([1.0, 2.0, 3.0, 4.0])
    g = kiln.grad(_log_where_loss, argnums=(0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore" if compiled else "error")   # see the xfail below
        gx, gy = (kiln.compile(g) if compiled else g)(xv, yv)
    m = xv > 0
    safe = np.where(m, xv, 1.0)
    np.testing.assert_allclose(gx, np.where(m, 2 * np.log(safe) / safe, 0.0), rtol=1e-12)
    np.testing.assert_allclose(gy, np.where(m, 0.0, 2 * yv), rtol=1e-12)


def test_compiled_grad_is_quiet_under_warnings_as_errors():
    g = kiln.compile(kiln.grad(_log_where_loss, argnums=(0, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g(np.array([0.5, -1.0, 2.0, 0.0]), np.array([1.0, 2.0, 3.0, 4.0]))


# Selected elements warn as NumPy: the kernel computes the masked-off lanes on values that
# raise no flag (ops/masked.py quiet_operands), so its flags are the selected elements'
def _selected_divide(x, c, m):
    return x[m] / c[m]


def _selected_log(x, m):
    return np.log(x[m]) * 2


def _log_where_into(x, m):
    out = np.zeros_like(x)
    np.log(x, out=out, where=m)
    return out


def _row_divide(x, c, rows):
    return x[rows] / c[rows]


def _selected_scaled(x, m):
    # a masked multiply's mask (bool) was taken for one of its factors, at most 1: the
    # kernel was said never to overflow, and x[m] * 1e10 of a selected 1e300 warned nothing
    return x[m] * 1e10


def _multiply_where(x, m):
    return np.multiply(x, 1e10, where=m, out=np.zeros_like(x))


def _arctanh_where(x, m):
    out = np.ones_like(x)
    np.arctanh(x, out=out, where=m)
    return out


_X = np.array([1.0, -2.5, 3.7, 0.0, 2.0])
_C = np.array([1.0, 0.0, 2.0, 3.0, 0.0])
_M = np.array([True, True, False, True, False])
SELECTED = {
    # (function, arguments where a selected element warns, arguments where only
    # masked-off ones would)
    "selected_divide": (_selected_divide, (_X, _C, _M), (_X, _C, ~_M & (_C != 0))),
    "selected_log": (_selected_log, (_X, _M), (_X, _X > 0)),
    "selected_log_f32": (_selected_log, (_X.astype(np.float32), _M), (_X.astype(np.float32), _X > 0)),
    "log_where_into": (_log_where_into, (_X, _M), (_X, _X > 0)),
    "row_divide": (_row_divide, (_X.reshape(5, 1) * np.ones(3), _C.reshape(5, 1) * np.ones(3), _M),
                   (_X.reshape(5, 1) * np.ones(3), _C.reshape(5, 1) * np.ones(3), _C != 0)),
    "selected_scaled": (_selected_scaled, (_X * 1e300, _M), (_X * 1e300, ~_M)),
    "multiply_where": (_multiply_where, (_X * 1e300, _M), (_X * 1e300, _X == 0)),
    "selected_scaled_rows": (_selected_scaled, (_X.reshape(5, 1) * [1e300, 1.0], _M),
                             (_X.reshape(5, 1) * [1e300, 1.0], _X == 0)),
    "arctanh_where": (_arctanh_where, (np.array([0.0, 1.0, -1.0, 2.0]), np.array([True, True, False, False])),
                      (np.array([0.0, 1.0, -1.0, 2.0]), np.array([True, False, False, False]))),
}


def _recorded(fn, *args):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [(w.category, str(w.message), w.filename, w.lineno) for w in seen]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(SELECTED))
def test_selected_elements_warn_as_numpy(name, backend, monkeypatch):
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    fn, warns, quiet = SELECTED[name]
    compiled = kiln.compile(fn, backend=backend)
    for args in (warns, quiet, warns):
        exp, want = _recorded(fn, *args)
        got, seen = _recorded(compiled, *args)
        _same(got, exp)
        if backend == "cpp":
            assert seen == want
        else:   # (the reference backends run NumPy's ufunc: its warning names kiln's line)
            assert [w[:2] for w in seen] == [w[:2] for w in want]
    assert want   # (the table's first arguments warn in NumPy)


def _where_of_warning_branches(z, w):
    a = np.where(z > 0, 1 / z, 0)           # 1 / 0 where the where takes 0
    b = np.where(w != 0, w / w, w) * 2      # 0 / 0 (float32) where it takes w
    return a, b


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_where_warns_of_the_branches_numpy_computes_everywhere(backend, monkeypatch):
    # np.where(z > 0, 1 / z, 0): NumPy computes 1 / z at every element and warns "divide by
    # zero" for z == 0; fused into the select, GCC divided only in the lanes kept (AVX-512
    # masked vdivpd) and the kernel warned of nothing (the branch is stored now: lower.py
    # _store_picked)
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    compiled = kiln.compile(_where_of_warning_branches, backend=backend)
    z = np.linspace(-1.0, 1.0, 64)
    z[[5, 40]] = 0.0
    w = np.linspace(-1.0, 1.0, 64).astype(np.float32)
    w[[3, 50]] = 0.0
    for args in ((z, w), (np.abs(z) + 1, w + 2)):
        exp, want = _recorded(_where_of_warning_branches, *args)
        got, seen = _recorded(compiled, *args)
        for g, e in zip(got, exp):
            _same(g, e)
        assert seen == want
    assert len(_recorded(_where_of_warning_branches, z, w)[1]) == 2


def test_a_masked_call_run_as_numpy_infers_its_meta_once_per_operands(monkeypatch):
    # The op run as NumPy (a wrapper's extern call: newton_fractal_complex64's masked
    # power, 15 a call) inferred its result's dtype and layout on every call, ~100 us of a
    # call NumPy's ufunc makes in ~25. Cached by the operands' shapes, dtypes, strides and
    # scalars (type and value): the cached results are NumPy's for each of them.
    from kiln.ops import masked
    seen = []
    real = masked._meta
    monkeypatch.setattr(masked, "_meta", lambda *a, **k: seen.append(1) or real(*a, **k))
    for cached in vars(masked).values():   # (this test's counts from an empty cache)
        getattr(cached, "cache_clear", lambda: None)()
    z = (np.linspace(-1, 1, 42) + 0.5j).astype(np.complex64).reshape(6, 7)
    m = (np.arange(42) % 3 != 0).reshape(6, 7)
    cases = [(m, z, z, 3), (m, z, z, 3), (m.T, np.complex64(0), z.T, 3), (m.T, np.complex64(0), z.T, 3),
             (m, z, z, 3.0), (m, z, z, np.float64(3)), (m, z, z, 2), (m, 0, z.real, 2), (m, 0, z.real, 2),
             (m, 0, z.real, 2.5), (m, np.int8(0), np.arange(42, dtype=np.int8).reshape(6, 7), 2)]
    for mask, fallback, x, y in cases:
        with np.errstate(all="ignore"):   # (z.real ** 2.5 of its negative values: NaN)
            got = masked._impl(mask, fallback, x, y, ufunc="power")
            want = np.where(mask, np.power(x, y), fallback)   # in the out= array's layout:
        laid = np.empty_like(fallback, dtype=want.dtype) if isinstance(fallback, np.ndarray) else want
        assert got.dtype == want.dtype and got.strides == laid.strides
        np.testing.assert_array_equal(got, want)
    assert len(seen) == len(cases) - 3   # (each repeated operand set: no inference)
