"""Edges of NumPy's floating-point behaviour through compiled functions, each against
plain NumPy: the arguments' state when a call raises for NumPy's error mode (NumPy has
written ``out=`` by then), and the warnings of ops that kernels fuse."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln


def _outcome(fn, *args, setup=None):
    """(exception repr, the arguments after the call, warnings' texts) of ``fn(*args)``
    on copies of the arguments, inside ``setup()`` (a context manager) if given."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            if setup is None:
                fn(*args)
            else:
                with setup():
                    fn(*args)
            error = None
        except Exception as e:   # noqa: BLE001 - the exception is what is compared
            error = repr(e)
    return error, args, [f"{w.category.__name__}: {w.message}" for w in seen]


def _same(exp, got):
    assert got[0] == exp[0]
    for a, b in zip(exp[1], got[1]):
        np.testing.assert_array_equal(b, a)
    assert got[2] == exp[2]


def out_divide(x, y):
    np.divide(x[1:], y[1:], out=x[1:])   # (into a view of the argument)
    return x


def inplace_chain(x, y):
    x += 1
    x /= y
    x *= 2
    return x


def _callback(kind, flag):
    raise ValueError(f"handler: {kind}")


def _warnings_are_errors():
    manager = warnings.catch_warnings()

    class Errors:
        def __enter__(self):
            manager.__enter__()
            warnings.simplefilter("error")

        def __exit__(self, *exc):
            return manager.__exit__(*exc)
    return Errors()


MODES = {
    "raise": lambda: np.errstate(all="raise"),
    "divide-raises-over-warns": lambda: np.errstate(divide="raise", over="warn"),
    "over-raises-divide-warns": lambda: np.errstate(over="raise", divide="warn"),
    "call": lambda: np.errstate(call=_callback, all="call"),
    "warnings-are-errors": _warnings_are_errors,
}


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_a_raising_out_or_inplace_op_has_written_its_target_as_numpy(backend):
    # NumPy computes the whole ufunc into out=, then checks the flags and raises: the
    # ops before it and the raising op itself are written, the ones after it are not.
    x = np.array([1.0, 2.0, 3.0, 1e308, 5.0])
    y = np.array([1.0, 0.0, 2.0, 0.5, -1.0])
    for fn in (inplace_chain, out_divide):
        compiled = kiln.compile(fn, backend=backend)
        for name, mode in MODES.items():
            exp = _outcome(fn, x, y, setup=mode)
            assert exp[0] is not None, name
            _same(exp, _outcome(compiled, x, y, setup=mode))
        _same(_outcome(fn, x, y), _outcome(compiled, x, y))   # the default mode: warnings


def test_an_error_before_the_ufunc_computes_writes_nothing():
    # np.copyto(x, np.log(y)): NumPy raises in np.log, before copyto; not an out= write
    def copy_log(x, y):
        np.copyto(x, np.log(y))
        return x

    compiled = kiln.compile(copy_log, backend="eager")
    x, y = np.ones(3), np.array([1.0, 0.0, 2.0])
    for mode in MODES.values():
        _same(_outcome(copy_log, x, y, setup=mode), _outcome(compiled, x, y, setup=mode))


def divmod_parts(x, y, z, w):
    q, r = np.divmod(x, y)                 # both results: one kernel
    return q + 1, r * 2, np.divmod(z, w)[0] * 3, np.divmod(w, z)[1] - 1   # one result each


@pytest.mark.parametrize("x, y", [
    ([1.0, 2.0, 3.0], [0.0, 1.0, 2.0]),          # divide by zero; fmod(1, 0): invalid
    ([1e308, 2.0, 3.0], [1e-10, 1.0, 2.0]),      # the quotient overflows; inf - inf: invalid
    ([np.inf, 0.0, 3.0], [1.0, 0.0, -np.inf]),   # fmod(inf, 1), 0 / 0: invalid
    ([np.nan, 2.0, 3.0], [0.0, np.nan, 2.0]),    # NaN operands: nothing
])
def test_float_divmod_warns_each_kind_of_its_call(x, y):
    # NumPy's loop computes fmod, then (a - mod) / b floored: the call warns for what
    # either result's computation raises, once, as "divmod"; each result alone too
    compiled = kiln.compile(divmod_parts, backend="cpp")
    x, y = np.array(x), np.array(y)
    z, w = np.append(x, 4.0), np.append(y, 5.0)   # (other kernels: other shapes)
    exp = _outcome(divmod_parts, x, y, z, w)
    got = _outcome(compiled, x, y, z, w)
    assert got[2] == exp[2]
    with np.errstate(all="ignore"):
        for a, b in zip(divmod_parts(x, y, z, w), compiled(x, y, z, w)):
            np.testing.assert_array_equal(b, a)


def where_sums(x, m):
    return np.sum(x, where=m), np.mean(x, axis=1, where=m), x.sum(where=m[0], initial=1e16)


@pytest.mark.parametrize("backend", ["eager", "cpp"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_where_sum_is_numpys_masked_loop_bit_for_bit(backend, dtype):
    # NumPy adds each run of selected elements pairwise into a running total: neither the
    # filled copy's pairwise sum nor the compacted selection's
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((24, 40)) * 1e3).astype(dtype)
    x[::3] = 1e7 if dtype == np.float32 else 1e16
    m = rng.random(x.shape) < 0.6
    compiled = kiln.compile(where_sums, backend=backend)
    for a, b in zip(where_sums(x, m), compiled(x, m)):
        assert type(b) is type(a) and b.dtype == a.dtype
        np.testing.assert_array_equal(b, a)


def test_a_where_sums_gradient():
    from kiln.autograd.gradcheck import gradcheck
    m = np.array([[True, False, True], [True, True, False]])
    assert gradcheck(lambda x: np.sum(x * x, where=m) + np.mean(x, axis=0, where=m).sum(),
                     [np.array([[1.0, 2.0, -3.0], [0.5, 4.0, 2.0]])])


def two_logs(x, y):
    return np.log(x) - np.log(y) * 2.0


def test_no_second_run_for_warnings_the_filters_ignore():
    # which log raised a kind is told by the kernel's second body (runtime/fpwarn.py
    # SecondBody), run only when a told kind was raised and NumPy's error mode warns of
    # it, and now only when the warnings filters would show one of its warnings
    from kiln.runtime import fpwarn
    compiled = kiln.compile(two_logs, backend="cpp")
    x, y = np.array([0.0, 1.0, 2.0, 0.5]), np.array([1.0, 0.0, 3.0, -1.0])
    filters = {"ignore": lambda: warnings.simplefilter("ignore"),
               "ignore RuntimeWarning": lambda: warnings.filterwarnings("ignore", category=RuntimeWarning),
               "ignore one message": lambda: warnings.filterwarnings("ignore", message="divide by zero")}
    with np.errstate(all="ignore"):
        value = two_logs(x, y)
    for name, install in filters.items():
        for fn in (two_logs, compiled):
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                install()
                before = fpwarn.stats["reruns"]
                np.testing.assert_allclose(fn(x, y), value, rtol=1e-15)   # (log: 1 ulp)
                reruns = fpwarn.stats["reruns"] - before
            if fn is two_logs:
                want = [str(w.message) for w in seen]
            else:
                assert [str(w.message) for w in seen] == want, name
                assert reruns == (1 if want else 0), name


def empty_means(x):
    return x[x > 5].mean(), np.nanmean(x, axis=0), np.mean(x, axis=0, where=x > 1.5)


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_a_mean_of_nothing_is_numpys_zero_by_zero_bit_for_bit(backend):
    # NumPy divides 0 by 0: the CPU's default NaN (x86: its sign bit set)
    x = np.array([[np.nan, 1.0], [np.nan, 2.0]])
    compiled = kiln.compile(empty_means, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in zip(empty_means(x), compiled(x)):
            np.testing.assert_array_equal(np.asarray(b).view(np.uint64), np.asarray(a).view(np.uint64))


def tiny_product(x):
    return x * 1e-300 + 1.0


def test_errstate_under_warn_warns_of_underflow_as_numpy():
    # kernels report no underflow flag: under="warn" runs the graph as NumPy
    compiled = kiln.compile(tiny_product, backend="cpp")
    x = np.array([1e-300, 2.0])
    for mode in ({"under": "warn"}, {"all": "warn"}, {"under": "raise"}, {}):
        _same(_outcome(tiny_product, x, setup=lambda: np.errstate(**mode)),
              _outcome(compiled, x, setup=lambda: np.errstate(**mode)))


def scalar_powers(x, y):
    y **= 0.5   # (in place: NumPy's fast_scalar_power too)
    return x ** 2, x ** -1, x ** 0.5, x ** 2.0, x ** -1.0


@pytest.mark.parametrize("backend", ["eager", "cpp"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scalar_powers_warn_in_the_ufunc_numpy_takes(backend, dtype, monkeypatch):
    """ndarray's ``**`` with a Python int 2 or -1 or a float 0.5 runs np.square,
    np.reciprocal or np.sqrt on a float array, and NumPy's warnings name those ufuncs
    ("invalid value encountered in sqrt"; kiln said "... in power"; fuzzer seed 45958);
    2.0 and -1.0 stay np.power."""
    monkeypatch.setattr(kiln.config, "cost_model", False)
    big = np.finfo(dtype).max / 4   # (its square overflows)
    x = np.array([0.0, big, -1.0, -np.inf, -0.0, 3.0], dtype)
    want = _outcome(lambda a, b: scalar_powers(a, b), x, x)
    compiled = kiln.compile(scalar_powers, backend=backend)
    _same(want, _outcome(compiled, x, x))
    with np.errstate(all="ignore"):
        for got, exp in zip(compiled(x, x.copy()), scalar_powers(x, x.copy())):
            assert got.dtype == exp.dtype
            np.testing.assert_array_equal(np.signbit(got), np.signbit(exp))


def unused_ops(x, n, s):
    a = np.log(x)                  # divide by zero (and invalid for x < 0)
    b = np.exp(x) * 2              # overflow of a kept op's input, exp's own too
    c = (x * 1e300).sum()          # a reduction: overflow in multiply, invalid in reduce
    d = n // (n - n)               # integers: divide by zero in floor_divide
    e = s / 0.0                    # NumPy scalar math: divide by zero in scalar divide
    f = np.negative(x)             # never warns: dropped
    return x + 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpp"])
def test_unused_ops_warn_as_numpy(backend):
    """``y = np.log(x); return x + 1``: NumPy computes the unused log, and warns "divide by
    zero encountered in log"; dead-code elimination dropped it (and the kernel computed
    nothing it did not store). Under np.errstate(all="ignore") nothing warns."""
    compiled = kiln.compile(unused_ops, backend=backend)
    x, n, s = np.array([0.0, 1000.0, -1.0, 1e10]), np.arange(3), np.float64(1.0)
    for mode in ({}, {"all": "ignore"}, {"divide": "ignore"}):
        _same(_outcome(unused_ops, x, n, s, setup=lambda: np.errstate(**mode)),
              _outcome(compiled, x, n, s, setup=lambda: np.errstate(**mode)))
