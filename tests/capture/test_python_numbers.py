"""Python-number arithmetic on run-time scalar arguments feeding array work
(kiln/capture/python_numbers.py, kiln/ops/python_numbers.py): checked against the same
function run without kiln — values bit for bit, dtypes (NEP 50: a Python float meeting
float32 stays float32), exceptions, warnings under ``np.errstate(all='raise')``, Python
numbers returned as Python objects of their type — with the cost model on and off, and
the number of compiles for new values."""
import math
import sys
import warnings

from pathlib import Path

import numpy as np
import pytest

import kiln
from kiln.config import config

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.idioms import lorenz_rhs_empty  # noqa: E402


@pytest.fixture(params=[True, False], ids=["cost_model", "compiled"])
def cost_model(request, monkeypatch):
    monkeypatch.setattr(config, "cost_model", request.param)
    return request.param


def _same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes(), (got, want)   # bit for bit, signed zeros too
    elif isinstance(want, float):
        assert math.copysign(1.0, got) == math.copysign(1.0, want) and (
            got == want or got != got and want != want), (got, want)
    else:
        assert got == want


def _check(fn, *args, calls=3):
    """Run ``fn`` compiled and plainly on ``args`` ``calls`` times; same results or errors."""
    cf = kiln.compile(fn)
    for _ in range(calls):
        try:
            want = fn(*args)
        except Exception as e:
            with pytest.raises(type(e)):
                cf(*args)
            continue
        _same(cf(*args), want)
    return cf


lorenz = lorenz_rhs_empty   # the idiom itself (benchmarks/idioms.py)


def test_lorenz_bit_for_bit(cost_model):
    rng = np.random.default_rng(1)
    cf = kiln.compile(lorenz)
    for _ in range(20):
        args = (0.0, *map(float, rng.standard_normal(3) * 10), 10.0, 28.0, 8.0 / 3.0)
        _same(cf(*args), lorenz(*args))
    assert len(cf._entries) == 1   # new values of the floats compile nothing


def test_lorenz_is_one_graph_call_from_c(monkeypatch):
    """Compiled, the arithmetic is in the graph, whose inputs are the arguments themselves:
    the entry calls it from C."""
    monkeypatch.setattr(config, "cost_model", False)
    cf = kiln.compile(lorenz)
    args = (0.0, 1.0, 2.0, 3.0, 10.0, 28.0, 8.0 / 3.0)
    _same(cf(*args), lorenz(*args))
    graph = cf._entries[0].graph
    assert {n.op.name for n in graph.calls} >= {"python_subtract", "python_multiply"}
    assert sorted(p.target for p in graph.placeholders) == ["beta", "rho", "sigma", "x", "y", "z"]
    assert type(cf._entries[0].fast).__name__ in ("SimpleEntry", "NoneType")


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "complex128", "bool"])
def test_element_writes_into_every_dtype(cost_model, dtype):
    def f(a, b, c):
        out = np.zeros(4, dtype=dtype)
        out[0] = a * b
        out[1] = a - b * c
        out[2:] = -(a + c)
        return out
    _check(f, 1.5, -2.25, 3.0)
    _check(f, 1e-300, 1e-300, 0.5)   # underflow to 0.0: no warning, no error


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int32", "uint8", "bool",
                                   "complex64", "complex128"])
def test_elementwise_operands_keep_nep50(cost_model, dtype):
    def f(x, a, b):
        return x * (a - b) + a * b, x > a * b
    x = (np.arange(6) - 2).astype(dtype)
    _check(f, x, 0.1, 0.7)      # float32: the weak float rounds into float32's loop
    _check(f, x, 3.0, 1.0)


def test_ints_and_bools_mixed_with_floats(cost_model):
    def f(x, n, flag, a):
        return x * (n * a) + (flag - a) * x - (n + n) * x
    x = np.linspace(-1, 1, 5)
    _check(f, x, 3, True, 0.5)
    _check(f, x, 2 ** 62, False, 1.5)      # n + n past int64: Python's int, not a wrap
    _check(f, x, 2 ** 80, True, -0.5)


def test_int_arithmetic_past_int64_stays_python(cost_model):
    def f(x, n, m):
        x[0] = n * m     # 2**80 into a float array: NumPy's conversion of the Python int
        return x, n * m
    _check(f, np.zeros(3), 2 ** 40, 2 ** 40)
    _check(f, np.zeros(3, dtype=np.int64), 2 ** 40, 2 ** 40)   # OverflowError, as NumPy


@pytest.mark.parametrize("mode", ["raise", "warn", "ignore"])
def test_overflow_to_inf_is_silent_as_in_python(cost_model, mode):
    def f(x, a, b):
        y = np.empty(3)
        y[0] = a * b          # inf: Python says nothing
        y[1] = a * b - a * b  # nan
        y[2] = -(a * b)
        return y, x + a * b
    x = np.ones(2)
    with np.errstate(all=mode), warnings.catch_warnings():
        warnings.simplefilter("error")
        _check(f, x, 1e200, 1e200)
        _check(f, x, 1.0, 2.0)


def test_division_by_zero_raises_as_in_python(cost_model):
    def f(a, b, c):
        out = np.empty(2)
        out[0] = a * c / b
        out[1] = (a - c) % b
        return out
    _check(f, 1.0, 2.0, 3.0)
    _check(f, 1.0, 0.0, 3.0)   # ZeroDivisionError
    _check(f, 1.0, -0.0, 3.0)


def test_values_also_used_as_python_numbers(cost_model):
    def f(x, a, b):
        s = a * b - a
        x = x * s
        if s > 1.0:
            x = x + 1.0
        return x, s, int(s) if s < 100 else s, [s, -s]
    _check(f, np.arange(3.0), 2.0, 3.0)
    _check(f, np.arange(3.0), -2.0, 3.0)   # the other branch: another entry


def test_graph_break_after_the_arithmetic(cost_model, capsys):
    def f(x, a, b):
        c = a * (b - a)
        y = x * c
        print("between", c)
        y = y + c * a
        return y, c
    _check(f, np.arange(4.0), 1.5, 0.25)
    out = capsys.readouterr().out
    assert out.count("between") == 6


def test_signed_zeros_nan_and_inf(cost_model):
    def f(a, b):
        out = np.empty(4)
        out[0] = a * 0.0
        out[1] = -(a - a)
        out[2] = a * b
        out[3] = b - b
        return out
    for a, b in [(-1.0, 2.0), (1.0, float("inf")), (-0.0, float("nan")), (5e-324, 0.5)]:
        _check(f, a, b)


def test_float_subclass_and_numpy_scalars_do_not_take_the_float_path(cost_model):
    class MyFloat(float):
        pass

    def f(x, a, b):
        return x * (a * b)
    _check(f, np.ones(3, np.float32), MyFloat(0.1), 3.0)
    _check(f, np.ones(3, np.float32), np.float64(0.1), 3.0)   # strong: float64 result
    _check(f, np.ones(3, np.float32), 0.1, 3.0)


def test_gradients_through_float_arguments():
    def loss(w, a, b):
        return ((w * (a * b - a)) ** 2).sum()
    w = np.array([0.5, -1.0, 2.0])

    @kiln.compile
    def compiled_grad(w, a, b):
        return kiln.grad(loss)(w, a, b)
    got = compiled_grad(w, 1.25, 3.0)
    eps = 1e-6
    fd = np.array([(loss(w + eps * e, 1.25, 3.0) - loss(w - eps * e, 1.25, 3.0)) / (2 * eps)
                   for e in np.eye(3)])
    np.testing.assert_allclose(got, fd, rtol=1e-6)
    np.testing.assert_allclose(compiled_grad(w, -2.0, 0.5),
                               np.array([(loss(w + eps * e, -2.0, 0.5) - loss(w - eps * e, -2.0, 0.5))
                                         / (2 * eps) for e in np.eye(3)]), rtol=1e-6)


def test_tensor_meets_python_float_arithmetic():
    def f(t, a, b):
        return (t * (a * b) - (a - b)).sum()
    t = kiln.Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    cf = kiln.compile(f)
    out = cf(t, 0.5, 4.0)
    out.backward()
    np.testing.assert_allclose(np.asarray(t.grad), np.full(3, 2.0))
    np.testing.assert_allclose(np.asarray(out), f(np.array([1.0, 2.0, 3.0]), 0.5, 4.0))


@pytest.mark.parametrize("mode", ["raise", "warn"])
def test_floats_read_from_data_overflow_as_in_python(cost_model, mode):
    """A Python float the graph reads from data (``np.random.random()``) in Python
    arithmetic: ``inf`` with no NumPy error, as Python gives (it used to be NumPy's
    multiply on a 0-d value, which raised FloatingPointError under errstate raise)."""
    def f(x, a):
        s = (np.random.random() + 1.0) * 1e308 * 10.0
        t = np.random.random() * a - a
        return x * 2.0 + s, s, t
    cf = kiln.compile(f)
    x = np.ones(3)
    with np.errstate(all=mode), warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            np.random.seed(7)
            want = f(x, 1e300)
            np.random.seed(7)
            _same(cf(x, 1e300), want)


def test_new_float_values_compile_nothing(monkeypatch):
    monkeypatch.setattr(config, "cost_model", False)

    def f(x, a, b, c):
        y = x * (a * b - c)
        y[0] = -(a - c) * b
        return y
    cf = kiln.compile(f)
    rng = np.random.default_rng(3)
    x = np.linspace(0.0, 1.0, 5)
    for _ in range(25):
        a, b, c = map(float, rng.standard_normal(3) * 100)
        _same(cf(x, a, b, c), f(x, a, b, c))
    assert len(cf._entries) == 1 and len(cf.records) == 1


def _offsets(pts, dx, dy):
    return pts + np.array([dx, dy])


def _rotation(pts, c, s):
    return pts @ np.array([[c, -s], [s, c]]).T


def _weights(x, w):             # a list argument of floats
    return x * np.asarray(w)


def _mixed(x, dx, k):           # an int among floats: float64, as in NumPy
    return x + np.array([dx, k, 1.5])


def _state_rows(pts, s, e):      # NumPy float arguments: a row written, an array made
    out = pts.copy()
    out[0] = s, e                   # (a SEIR step's ``out[step] = S, E, I, R``)
    out[1] = np.array([s, e])
    out[2] = [s, 2.0]
    return out


def _joined(pts, s, e):           # np.stack/np.hstack/np.full of NumPy float arguments
    return (pts + np.stack([s, float(e)]), np.hstack([[s], e]), np.concatenate([pts[0], [e]]),
            np.full((), e), np.asarray(s), np.vstack([e, e]))


@pytest.mark.parametrize("fn, draw", [
    (_joined, lambda r: (np.float64(r.standard_normal()), np.float32(r.standard_normal()))),
    (_offsets, lambda r: (float(r.standard_normal()), float(r.standard_normal()))),
    (_state_rows, lambda r: (np.float64(r.standard_normal()), np.float64(r.standard_normal()))),
    (_rotation, lambda r: (math.cos(r.uniform(0, 6)), math.sin(r.uniform(0, 6)))),
    (_weights, lambda r: (list(map(float, r.standard_normal(2))),)),
    (_mixed, lambda r: (float(r.standard_normal()), int(r.integers(-5, 5)))),
])
def test_arrays_made_of_float_arguments_compile_once(monkeypatch, fn, draw):
    """np.array([dx, dy]) of float arguments was a constant of the graph, guarded by
    value: every call with new values recompiled, until the recompile limit made them all
    run uncompiled. The array is made in the graph now (kiln/ops/numeric.py); so are the
    0-d arrays NumPy makes of each scalar np.stack and np.hstack join (opcall's
    _run_time_items_made), and np.full's NumPy fill value (an entry per call before)."""
    monkeypatch.setattr(config, "cost_model", False)
    cf = kiln.compile(fn)
    rng = np.random.default_rng(5)
    pts = rng.standard_normal((4, 3 if fn is _mixed else 2))
    for _ in range(12):
        args = (pts,) + draw(rng)
        _same(cf(*args), fn(*args))
    assert len(cf._entries) == 1 and len(cf.records) == 1


def _mask_count(x, flags, first):   # a list of bools, a bool argument, a literal True
    m = np.array(flags, dtype=bool)
    return x[np.array([first, True, flags[0]])].sum() + np.count_nonzero(m), np.asarray([flags, flags[::-1]])


def test_arrays_of_bool_arguments_compile_once(monkeypatch):
    """np.array(flags) of a new list of bools each call compiled an entry per list (every
    True is one object, so capture could not tell the bools apart and specialized them):
    a loop over many lists met the recompile limit. Now each bool is an input, taken in
    the list's order (Composite.in_order)."""
    monkeypatch.setattr(config, "cost_model", False)
    cf = kiln.compile(_mask_count, backend="eager")   # (capture is what is tested)
    rng = np.random.default_rng(6)
    x = np.arange(3.0)
    for _ in range(12):
        flags = [bool(b) for b in rng.integers(0, 2, 7)]
        first = bool(rng.integers(0, 2))
        _same(cf(x, flags, first), _mask_count(x, flags, first))
    assert len(cf._entries) == 1 and len(cf.records) == 1


def test_arrays_of_int_or_bool_arguments_stay_specialized(monkeypatch):
    """Their dtype follows the values (an int past int64 is uint64 or object): guarded."""
    monkeypatch.setattr(config, "cost_model", False)

    def f(x, i, j):
        return x + np.array([i, j])
    cf = kiln.compile(f)
    x = np.zeros(2)
    for i, j in ((1, 2), (3, 4), (True, 2.5)):
        _same(cf(x, i, j), f(x, i, j))
    assert len(cf._entries) == 3


def _widths(x, n):
    return x * n.bit_count() + n.bit_length(), (n - 1).bit_length(), x[:n.bit_length()]


def test_bit_count_and_bit_length_of_an_int_argument_are_run_time_ints():
    # guarded by value before (n == 13): a compile for every n
    x = np.arange(12.0)
    cf = kiln.compile(_widths)
    for n in (13, 14, 2 ** 70, -7, 200):
        _same(cf(x, n), _widths(x, n))
    assert len(cf.cache_entries) == 1


# Python 3.12+ adds a sum() of exact floats with Neumaier's compensation (sum([1e16, 1.0,
# -1e16]) is 1.0 there, 0.0 on 3.11): compiled code gives whatever this Python's sum gives.
def _sum_generator(x):
    return sum(float(v) for v in x) + x[0]


def _sum_arguments(a, b, c):
    return sum([a, b, c]), sum((a, b, c, 1)), sum([a, b], 0.5), np.full(2, sum([b, c]))


def _sum_constants(x):
    return x + sum([1e16, 1.0, -1e16, 3])


def _sum_then_numpy_scalar(x, a):
    # the compensation joins the total at the NumPy scalar (3.12+); adding is plain after it
    return sum([a, float(x[1]), float(x[2]), x[0], 1.0])


def _sum_overflowing(x):
    return sum([float(x[0]) * 1e300, float(x[0]) * 1e300, -1e308, 1.0])


@pytest.mark.parametrize("fn, args", [
    (_sum_generator, (np.array([1e16, 1.0, -1e16]),)),
    (_sum_arguments, (1e16, 1.0, -1e16)),
    (_sum_arguments, (-0.0, -0.0, -0.0)),
    (_sum_arguments, (1e16, math.inf, 1.0)),
    (_sum_constants, (np.arange(3.0),)),
    (_sum_then_numpy_scalar, (np.array([0.5, 1.0, -1e16]), 1e16)),
    (_sum_overflowing, (np.array([1e10, 0.0]),)),
], ids=["generator", "arguments", "negative_zeros", "inf", "constants", "numpy_scalar", "overflow"])
def test_sum_of_python_floats_is_this_pythons(cost_model, fn, args):
    _same(kiln.compile(fn)(*args), fn(*args))
