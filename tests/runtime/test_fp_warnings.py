"""NumPy's floating-point warnings and errors through compiled functions (DESIGN.md §1):
kernels compute IEEE results and warn as NumPy does under its default mode
(tests/runtime/test_fp_numpy_warnings.py); whenever NumPy would *raise* — np.errstate/np.seterr set to raise,
call or log, or a warning filter that makes its RuntimeWarning an error (-W error) — the
compiled call runs its graph with NumPy, so the same exception (type and message), or the
same handler call, comes out. Changes between calls must not reuse an earlier answer."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln
from kiln.runtime.fpmode import errors_trapped, runtime_warnings_raise


def log_plus(x):
    return np.log(x) + 1.0


def to_int(x):
    return (x * 2.0).astype(np.int64)


def int_floor_div(a, b):
    return a // b + 1


CASES = [
    (log_plus, lambda: (np.array([0.0, 1.0, 2.0]),), "divide by zero encountered in log"),
    (to_int, lambda: (np.array([np.nan, 1.0]),), "invalid value encountered in cast"),
    (int_floor_div, lambda: (np.arange(4), np.array([1, 0, 2, 3])),
     "divide by zero encountered in floor_divide"),
]


def _outcome(fn, args):
    try:
        return "ok", fn(*args)
    except Exception as e:   # noqa: BLE001 - the exception is what is compared
        return "raise", e


@pytest.mark.parametrize("fn, make, message", CASES, ids=[c[0].__name__ for c in CASES])
def test_warnings_as_errors_raise_numpys_runtime_warning(fn, make, message):
    compiled = kiln.compile(fn, backend="cpp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quiet = fn(*make())
        np.testing.assert_array_equal(compiled(*make()), quiet)   # built, silent
    for install in (lambda: warnings.simplefilter("error"),
                    lambda: warnings.filterwarnings("error", category=RuntimeWarning),
                    lambda: warnings.filterwarnings("error", message="divide by zero")):
        with warnings.catch_warnings():
            install()
            exp = _outcome(fn, make())
            got = _outcome(compiled, make())
        if exp[0] == "ok":   # a filter for another message: NumPy's value, no error
            assert got[0] == "ok"
            np.testing.assert_array_equal(got[1], exp[1])
        else:
            assert got[0] == "raise" and type(got[1]) is RuntimeWarning, got
            assert str(got[1]) == str(exp[1]) == message
        # the filters are back: the cached answer must follow
        np.testing.assert_array_equal(compiled(*make()), quiet)


def test_an_ignore_filter_or_errstate_inside_the_error_filter_keeps_numpys_value():
    compiled = kiln.compile(log_plus, backend="cpp")
    x = np.array([0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(compiled(x), [-np.inf, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal(compiled(x), [-np.inf, 1.0])


def test_seterr_changes_between_calls_are_followed():
    compiled = kiln.compile(log_plus, backend="cpp")
    x = np.array([0.0, 1.0])
    with np.errstate(divide="ignore"):
        compiled(x)
    old = np.seterr(divide="raise")
    try:
        with pytest.raises(FloatingPointError, match="divide by zero encountered in log"):
            compiled(x)
        np.seterr(divide="ignore")
        np.testing.assert_array_equal(compiled(x), [-np.inf, 1.0])
        np.seterr(divide="raise")
        with pytest.raises(FloatingPointError):
            compiled(x)
    finally:
        np.seterr(**old)


def test_seterrcall_handler_sees_numpys_calls():
    x = np.array([0.0, 1.0, -1.0])
    fn = lambda x: np.sqrt(np.log(x))   # noqa: E731
    compiled = kiln.compile(fn, backend="cpp")
    with np.errstate(all="ignore"):
        compiled(x)
    for run in (fn, compiled):
        seen = []
        old_call = np.seterrcall(lambda kind, flag: seen.append(kind))
        try:
            with np.errstate(all="call"):
                out = run(x)
        finally:
            np.seterrcall(old_call)
        if run is fn:
            want = seen
        else:
            assert seen == want and want   # once per NumPy call, the same kinds
        np.testing.assert_array_equal(out, np.array([np.nan, 0.0, np.nan]))


def test_runtime_warnings_raise_reads_filters_in_order():
    err = ("error", None, RuntimeWarning, None, 0)
    ign = ("ignore", None, RuntimeWarning, None, 0)
    every = ("error", None, Warning, None, 0)
    other = ("error", None, DeprecationWarning, None, 0)
    assert runtime_warnings_raise([err]) and runtime_warnings_raise([every])
    assert not runtime_warnings_raise([ign, err]) and runtime_warnings_raise([err, ign])
    assert not runtime_warnings_raise([other]) and not runtime_warnings_raise([])
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        assert errors_trapped() is False
        warnings.simplefilter("error")
        assert errors_trapped() is True
        warnings.simplefilter("ignore")
        assert errors_trapped() is False
    assert errors_trapped() is runtime_warnings_raise(warnings.filters)


# -- NumPy scalar math (kiln/ops/scalar_math.py): an operator on NumPy scalars checks
# integer overflow and says "scalar" in its messages; the ufunc spelling does neither

def int8_scalar_product(x):
    return x[0] * x[1] + x[2]


def f32_scalar_product(x):
    return x[0] * np.float32(1e38)


def ratio_of_sums(x):
    return x.sum() / x[:0].sum()


def ufunc_int8_product(x):
    return np.multiply(x[0], x[1])   # the ufunc on NumPy scalars: no overflow check


SCALAR_CASES = [
    (int8_scalar_product, lambda: (np.array([100, 100, 1], np.int8),)),
    (f32_scalar_product, lambda: (np.array([10.0], np.float32),)),
    (ratio_of_sums, lambda: (np.ones(4),)),
    (ufunc_int8_product, lambda: (np.array([100, 100], np.int8),)),
]


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpp"])
@pytest.mark.parametrize("fn, make", SCALAR_CASES, ids=[c[0].__name__ for c in SCALAR_CASES])
def test_numpy_scalar_math_warns_and_raises_as_numpy(fn, make, backend):
    compiled = kiln.compile(fn, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(compiled(*make()), fn(*make()))
    for mode, action in (({"all": "raise"}, "default"), ({}, "error")):
        with warnings.catch_warnings(), np.errstate(**mode):
            warnings.simplefilter(action)
            exp, got = _outcome(fn, make()), _outcome(compiled, make())
        assert exp[0] == got[0], (exp, got)
        if exp[0] == "raise":
            assert type(got[1]) is type(exp[1]) and str(got[1]) == str(exp[1])
        else:
            assert type(got[1]) is type(exp[1]) and got[1] == exp[1]
    # compiled calls warn as NumPy (runtime/fpwarn.py; an integer scalar's overflow, which
    # raises no flag in a kernel, through scalar_math.py's scalar_int_check)
    with warnings.catch_warnings(record=True) as seen_np:
        warnings.simplefilter("always")
        fn(*make())
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        compiled(*make())
    assert [str(w.message) for w in seen] == [str(w.message) for w in seen_np]


def test_the_wrappers_check_agrees_with_the_python_one_through_filter_changes():
    # fpmode.errors_trapped is launch_fp.c's ErrorMode where the launcher builds (it caches
    # the filter list by identity, length and first entry); fpmode._errors_trapped is the
    # same logic in Python
    from kiln.runtime import fpmode
    check, reference = fpmode.errors_trapped, fpmode._errors_trapped
    seen = []
    with warnings.catch_warnings():
        warnings.resetwarnings()
        seen.append((check(), reference(), False))
        warnings.simplefilter("error")
        seen.append((check(), reference(), True))
        with np.errstate(all="ignore"):
            seen.append((check(), reference(), False))
        warnings.simplefilter("ignore", RuntimeWarning)      # inserted in front
        seen.append((check(), reference(), False))
        warnings.filters.pop(0)                               # the same list, shorter
        seen.append((check(), reference(), True))
        warnings.filters[0] = ("ignore", None, Warning, None, 0)   # same length, new first
        seen.append((check(), reference(), False))
        with np.errstate(over="raise"):
            seen.append((check(), reference(), True))
    seen.append((check(), reference(), False))
    assert all(c == r == want for c, r, want in seen), seen
