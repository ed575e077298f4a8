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
