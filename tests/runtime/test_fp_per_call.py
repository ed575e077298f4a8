"""A compiled call warns as many times as NumPy's run of the function: once per op of
the user's program and kind, whichever kernels compute that op (the scheduler computes
a cheap producer again in each consumer's kernel: runtime/fpwarn.py ``once``)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln
from kiln.runtime.fpwarn import stats


def _messages(fn, args, action="always"):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter(action)
        try:
            fn(*args)
        except RuntimeWarning as error:   # (under "error": the first one)
            return ["raised: " + str(error)]
    return [(str(w.message), w.lineno) for w in got]


def weights(X, w, y32, v):
    w = w / w.sum()                     # computed again in both kernels below
    hi = np.maximum(X, w[:, None]).max(0)
    lo = w.min()
    y32[1:] = v[1:]                     # the cast, computed again by the next line's kernel
    y32[:2] += v[:2]
    return hi, lo, y32


def _args():
    return (np.ones((3, 2)), np.zeros(3), np.zeros(3, np.float32), np.array([1e300, 1e300, 1e300]))


def test_an_op_computed_in_two_kernels_warns_once_per_call():
    compiled = kiln.compile(weights)
    for action in ("always", "error", "default"):
        want = _messages(weights, _args(), action)
        for _ in range(2):
            assert _messages(compiled, _args(), action) == want, action
    assert len(want) == 3   # divide, cast, add
    with np.errstate(invalid="ignore"):
        assert _messages(compiled, _args()) == _messages(weights, _args())


def logaddexp_of_log(x, y):
    return np.logaddexp(np.log(x), y) * 2.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_logaddexp_of_a_nan_warns_invalid_as_numpys_loop(dtype):
    # npy_logaddexp's ordered compare signals for a NaN operand, one that came in or one
    # an op before it made (log(-1): both ops warn); infinities of either sign do not
    compiled = kiln.compile(logaddexp_of_log)
    nan, inf = np.nan, np.inf
    for x, y in (([1.0, 2.0], [nan, 1.0]), ([-1.0, 1.0], [1.0, 2.0]), ([inf, 0.0], [inf, -inf]),
                 ([1.0, 2.0], [3.0, 1.0])):
        args = (np.array(x, dtype), np.array(y, dtype))
        assert _messages(compiled, args) == _messages(logaddexp_of_log, args), (x, y)


def spreads(x64, x32):
    return x64.var(), x32.std(axis=1), x32.var(axis=0, ddof=1)


def test_var_and_std_warn_as_numpys_steps():
    # NumPy's var is add.reduce, subtract, square, add.reduce: 1e300 overflows in square,
    # 3e38 in float32 in both; the kernel's flags cannot say which step raised, so the
    # runtime asks NumPy's var of the same argument (fp_errors.NUMPY_TELLS)
    compiled = kiln.compile(spreads)
    big = np.array([[1e300, -1e300, 1.0], [1e300, 2.0, -1e300]])
    big32 = np.array([[3e38, -3e38, 1.0], [3e38, 2.0, 3e38]], np.float32)
    for x64, x32 in ((big, np.full((2, 3), 3e38, np.float32)), (big, big32),
                     (np.ones((2, 3)), np.ones((2, 3), np.float32)),
                     (np.array([[np.inf, -np.inf, 1.0], [1.0, 2.0, 3.0]]), np.ones((2, 3), np.float32))):
        # (NumPy's lines are numpy/_core/_methods.py's; the compiled call's the user's)
        got, want = _messages(compiled, (x64, x32)), _messages(spreads, (x64, x32))
        assert [m for m, _ in got] == [m for m, _ in want]
        assert {line for _, line in got} <= {spreads.__code__.co_firstlineno + 1}
    with np.errstate(over="ignore"):
        assert _messages(compiled, (big, big32)) == []


def test_var_under_ignoring_filters_runs_no_numpy():
    compiled = kiln.compile(spreads)
    args = (np.array([[1e300, -1e300, 1.0], [1e300, 2.0, -1e300]]), np.ones((2, 3), np.float32))
    _messages(compiled, args)   # (compiled, and warned once)
    runs = stats["numpy_runs"]
    assert _messages(compiled, args, "ignore") == [] and stats["numpy_runs"] == runs
    assert _messages(compiled, args) == [("overflow encountered in square", spreads.__code__.co_firstlineno + 1)]
    assert stats["numpy_runs"] == runs + 1


def quotients(a, b):
    q = a // b
    r = a % b
    q2, r2 = np.divmod(a, b)
    return q + r, q2 * r2


def test_filters_that_drop_every_warning_cost_no_warn_call(monkeypatch):
    # a zero divisor on every call (stop 52: 1.5x NumPy's time under simplefilter("ignore"),
    # the handler's warn_explicit per op): the filters' answer is kept per filter list
    compiled = kiln.compile(quotients)
    a, b = np.arange(1, 9), np.array([0, 1, 0, 2, 0, 3, 0, 1])
    assert _messages(compiled, (a, b)) == _messages(quotients, (a, b))
    calls = []
    real = warnings.warn_explicit
    monkeypatch.setattr(warnings, "warn_explicit", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    assert _messages(compiled, (a, b), "ignore") == [] and calls == []
    # a filter of one message drops that one alone; the others are still given
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", "divide by zero encountered in remainder")
        compiled(a, b)
    assert [str(w.message) for w in got] == ["divide by zero encountered in floor_divide",
                                             "divide by zero encountered in divmod"]
    assert _messages(compiled, (a, b)) == _messages(quotients, (a, b))
