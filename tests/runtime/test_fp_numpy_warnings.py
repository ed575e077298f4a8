"""Compiled calls give NumPy's floating-point RuntimeWarnings (runtime/fpwarn.py): the
same (category, message, file, line) list as the plain function, on first and later
calls and from a fresh compile of a cached build; none where NumPy gives none (NaN
through comparisons, min/max, where, masked ufuncs); each kind as np.errstate says."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln
from kiln.config import config


def _record(fn, args):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [(w.category, str(w.message), w.filename, w.lineno) for w in got]


def _same(got, want):
    """The same warnings; the same file and line where NumPy names the user's (np.sum
    warns from numpy/_core/fromnumeric.py: a compiled call names the user's line)."""
    assert [w[:2] for w in got] == [w[:2] for w in want]
    for g, w in zip(got, want):
        if w[2] == __file__:
            assert g[2:] == w[2:]
        else:
            assert g[2] == __file__


def log_plus(x):
    return np.log(x) + 1.0


def log2_times(x):
    return np.log2(x) * 3.0


def log10_minus(x):
    return np.log10(x) - 2.0


def log1p_half(x):
    return np.log1p(x) / 2.0


def sqrt_plus(x):
    return np.sqrt(x) + 1.0


def divide(x, y):
    return x / y


def exp_plus(x):
    return np.exp(x) + 1.0


def expm1_of(x):
    return np.expm1(x * 0.5)


def arcsin_of(x):
    return np.arcsin(x) + 0.0


def arccos_of(x):
    return np.arccos(x) * 2.0


def arctanh_of(x):
    return np.arctanh(x) - 1.0


def power_of(x):
    return np.power(x, 0.3) + 1.0


def square_power(x):
    return x ** 2.0 + 1.0


def float_floor_divide(x, y):
    return x // y


def float_remainder(x, y):
    return x % y


def int_floor_divide(a, b):
    return a // b + 1


def int_remainder(a, b):
    return a % b + 1


def to_float32(x):
    return (x * 1.0).astype(np.float32)


def widened_exp(x):
    return np.exp(x.astype(np.float64)) + 1.0


def to_int(x):
    return (x * 2.0).astype(np.int64)


def inf_minus_inf(x, y):
    return x - y


def f32_multiply(x):
    return x * np.float32(1e30)


def total(x):
    return np.sum(x * 1.0)


def running(x):
    return np.cumsum(x * 1.0)


def two_lines(x):
    a = np.log(x)
    b = np.sqrt(x + 1.0)
    return a + b


a3 = np.array([0.0, -1.0, 2.0])
BIG = np.array([1e308, 1e308, 5.0])
WARNING_CASES = [
    (log_plus, lambda: (a3.copy(),)),
    (log2_times, lambda: (a3.copy(),)),
    (log10_minus, lambda: (a3.copy(),)),
    (log1p_half, lambda: (np.array([-1.0, -2.0, 3.0]),)),
    (sqrt_plus, lambda: (a3.copy(),)),
    (divide, lambda: (np.array([1.0, 0.0, 3.0]), np.array([0.0, 0.0, 2.0]))),
    (divide, lambda: (np.array([1, 2, 3]), np.array([0, 1, 2]))),
    (exp_plus, lambda: (np.array([1000.0, 1.0, 2.0]),)),
    (expm1_of, lambda: (np.array([2000.0, 1.0]),)),
    (arcsin_of, lambda: (np.array([2.0, 0.5]),)),
    (arccos_of, lambda: (np.array([-2.0, 0.5]),)),
    (arctanh_of, lambda: (np.array([1.0, 2.0, 0.5]),)),
    (power_of, lambda: (np.array([-2.0, 2.0]),)),
    (square_power, lambda: (BIG.copy(),)),
    (float_floor_divide, lambda: (np.array([1.0, 0.0, 3.0]), np.array([0.0, 0.0, 2.0]))),
    (float_remainder, lambda: (np.array([1.0, 3.0]), np.array([0.0, 2.0]))),
    (int_floor_divide, lambda: (np.arange(4), np.array([1, 0, 2, 3]))),
    (int_remainder, lambda: (np.arange(4), np.array([1, 0, 2, 3]))),
    (int_floor_divide, lambda: (np.arange(4, dtype=np.uint16), np.array([1, 0, 2, 3], np.uint16))),
    (int_floor_divide, lambda: (np.array([-128, 5], np.int8), np.array([-1, 2], np.int8))),
    (int_floor_divide, lambda: (np.array([np.iinfo(np.int64).min, 5]), np.array([-1, 0]))),
    (to_float32, lambda: (BIG.copy(),)),
    (to_int, lambda: (np.array([1e20, 1.0]),)),
    (widened_exp, lambda: (np.array([1000.0, 1.0], np.float32),)),
    (inf_minus_inf, lambda: (np.array([np.inf, 1.0]), np.array([np.inf, 2.0]))),
    (f32_multiply, lambda: (np.array([1e10, 1.0], np.float32),)),
    (total, lambda: (BIG.copy(),)),
    (running, lambda: (BIG.copy(),)),
    (log_plus, lambda: (np.array([1.0, 2.0]),)),      # no flag, no warning
    (divide, lambda: (np.array([1.0, 2.0]), np.array([3.0, 4.0]))),
]


@pytest.mark.parametrize("fn, make", WARNING_CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(WARNING_CASES)])
def test_compiled_calls_warn_as_numpy(fn, make):
    want_out, want = _record(fn, make())
    for compiled in (kiln.compile(fn, backend="cpp"), kiln.compile(fn, backend="cpp")):
        for _ in range(2):   # the call that builds, then calls of the cached build
            out, got = _record(compiled, make())
            np.testing.assert_allclose(out, want_out, rtol=1e-15)   # (libm: an ulp)
            _same(got, want)


def test_ops_of_different_messages_that_may_raise_one_flag_each_warn_for_their_own():
    """log and sqrt in one kernel may both raise the invalid flag: the kernel computes
    where each raised it (ops/fp_errors.py raises_where), so log's warns and sqrt's,
    whose operand is never negative here, does not (the flag alone said nothing)."""
    x = np.array([0.0, -1.0, 2.0])
    _, want = _record(two_lines, (x,))
    compiled = kiln.compile(two_lines, backend="cpp")
    assert [w[1] for w in want] == ["divide by zero encountered in log",
                                    "invalid value encountered in log"]
    for _ in range(2):
        assert _record(compiled, (x,))[1] == want
    _, want = _record(two_lines, (x - 2.0,))
    assert [w[1] for w in want] == ["divide by zero encountered in log", "invalid value encountered in log",
                                    "invalid value encountered in sqrt"]
    assert _record(compiled, (x - 2.0,))[1] == want


def test_a_threaded_kernel_reports_its_threads_flags():
    x = np.linspace(1.0, 2.0, 400_000)
    x[-3] = 0.0     # in the last chunk: not the calling thread's, on two threads
    x[5] = -1.0
    old = config.num_threads
    config.num_threads = 2
    try:
        big = np.ones(2_000_000)
        big[-2:] = 1e308    # the sum's last subtree: a thread of kiln_pairwise_threads
        for fn, arg in ((log_plus, x), (total, big)):
            compiled = kiln.compile(fn, backend="cpp")
            _, want = _record(fn, (arg,))
            assert want
            for _ in range(2):
                _, got = _record(compiled, (arg,))
                _same(got, want)
    finally:
        config.num_threads = old


def compare_nan(x):
    return (x < 1.0) & (x >= -1.0)


def max_nan(x):
    return np.maximum(x, 0.5) + np.minimum(x, 2.0)


def where_nan(x):
    return np.where(x > 0, x - 1.0, 0.0)


def nan_reductions(x):
    return np.nanmax(x) + np.nansum(x) + np.nanmin(x)


def isnan_sign(x):
    return np.isnan(x) | np.isfinite(x) | (np.sign(x) > 0)


def clip_nan(x):
    return np.clip(x, 0.0, 1.0) * 2.0


def sqrt_of_abs(x):
    return np.sqrt(np.abs(x)) + (x > 0)


def max_reduce(x):
    return x.max() + x.min()


def masked_log(x):
    out = np.zeros_like(x)
    np.log(x, out=out, where=x > 0)
    return out + 1.0


SILENT_CASES = [compare_nan, max_nan, where_nan, nan_reductions, isnan_sign, clip_nan,
                sqrt_of_abs, max_reduce]


@pytest.mark.parametrize("fn", SILENT_CASES, ids=[f.__name__ for f in SILENT_CASES])
def test_nan_through_comparisons_and_min_max_stays_silent(fn):
    x = np.array([np.nan, -1.5, 0.25, 3.0, np.inf, -7.0, np.nan, 1.0])
    want_out, want = _record(fn, (x,))
    assert want == []
    compiled = kiln.compile(fn, backend="cpp")
    for _ in range(2):
        out, got = _record(compiled, (x.copy(),))
        np.testing.assert_array_equal(out, want_out)
        assert got == []
    with np.errstate(invalid="ignore"):   # NaN in and out of real invalid operations
        assert _record(fn, (x,))[1] == _record(compiled, (x,))[1] == []


def test_masked_off_elements_do_not_warn_and_masked_on_ones_are_not_misnamed():
    compiled = kiln.compile(masked_log, backend="cpp")
    x = np.array([0.0, -1.0, 2.0])
    _, want = _record(masked_log, (x,))
    _, got = _record(compiled, (x,))
    assert want == [] and got == []


def log_and_compare(x):
    return np.log(x) + (x > 0.5)


def test_invalid_is_not_claimed_when_the_kernel_reads_a_nan():
    """``x > 0.5`` on a NaN sets the invalid flag in a kernel (signalling compares): with a
    NaN read, an invalid log cannot be told from it, so that kind stays silent; divide
    still warns."""
    compiled = kiln.compile(log_and_compare, backend="cpp")
    x = np.array([np.nan, 0.0, 2.0])
    _, want = _record(log_and_compare, (x,))
    _, got = _record(compiled, (x,))
    assert [w[1] for w in want] == ["divide by zero encountered in log"]
    assert got == want
    x = np.array([np.nan, -1.0, 2.0])   # log(-1): NumPy warns invalid; kiln cannot know
    _, want = _record(log_and_compare, (x,))
    _, got = _record(compiled, (x,))
    assert [w[1] for w in want] == ["invalid value encountered in log"]
    assert got == []
    x = np.array([3.0, -1.0, 2.0])      # no NaN read: the invalid flag is log's
    _, want = _record(log_and_compare, (x,))
    _, got = _record(compiled, (x,))
    assert got == want and len(want) == 1


def test_errstate_around_the_call_is_followed_per_kind():
    compiled = kiln.compile(log_plus, backend="cpp")
    x = np.array([0.0, -1.0, 2.0])
    for mode in ({"all": "ignore"}, {"divide": "ignore"}, {"invalid": "ignore"},
                 {"divide": "ignore", "invalid": "warn"}, {"all": "warn"}):
        with np.errstate(**mode):
            _, want = _record(log_plus, (x,))
            _, got = _record(compiled, (x,))
        assert got == want, mode
    with np.errstate(all="ignore"):
        assert _record(compiled, (x,))[1] == []


def log_quietly(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
    return y + 1.0


def test_errstate_inside_the_function_is_followed():
    compiled = kiln.compile(log_quietly, backend="cpp")
    x = np.array([0.0, -1.0, 2.0])
    _, want = _record(log_quietly, (x,))
    assert [w[1] for w in want] == ["invalid value encountered in log"]
    for _ in range(2):
        assert _record(compiled, (x,))[1] == want


def test_the_default_filter_shows_a_line_once_as_numpy_does():
    compiled = kiln.compile(sqrt_plus, backend="cpp")
    x = np.array([-1.0, 4.0])
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("default")
        for _ in range(3):
            compiled(x)
    assert [str(w.message) for w in got] == ["invalid value encountered in sqrt"]


def test_a_warning_filter_for_one_message_still_sees_it():
    compiled = kiln.compile(log_plus, backend="cpp")
    x = np.array([0.0, 2.0])
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("ignore")
        warnings.filterwarnings("always", message="divide by zero", category=RuntimeWarning)
        compiled(x)
        log_plus(x)
    assert [str(w.message) for w in got] == ["divide by zero encountered in log"] * 2


SCRIPT = """import numpy as np, kiln
def f(x):
    return np.log(x) + 1.0
g = kiln.compile(f, backend="cpp")
for _ in range(3):
    g(np.array([0.0, 2.0]))
f(np.array([0.0, 2.0]))
print("done")
"""


@pytest.mark.parametrize("how", ["stdin", "-c"])
def test_code_of_no_module_file_warns_once_as_numpy_with_default_filters(how):
    """``python < script`` and ``python -c``: the warning is __main__'s, shown once for the
    line by the default filter (then NumPy's own at that line is not shown again), and
    the call does not fail (linecache cannot load <stdin> through __main__'s loader)."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    argv = [sys.executable] + (["-c", SCRIPT] if how == "-c" else [])
    run = subprocess.run(argv, input=SCRIPT if how == "stdin" else None, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "done"
    assert run.stderr.count("RuntimeWarning: divide by zero encountered in log") == 1, run.stderr


def nan_literal(x):
    y = np.where(x > 0, x, np.nan)
    return (y < 1.0) + np.sqrt(x + 5.0)


def test_a_nan_literal_compared_does_not_make_sqrt_warn():
    """No NaN comes in, but the kernel may compare a NaN it makes from a literal (a
    signalling compare would set the invalid flag; GCC 12 folds this one away): sqrt
    must not be blamed for it (fp_flags: a NaN literal makes the kernel's invalid flag
    opaque)."""
    x = np.array([-1.0, 0.5, 2.0])
    _, want = _record(nan_literal, (x,))
    compiled = kiln.compile(nan_literal, backend="cpp")
    assert want == []
    for _ in range(2):
        assert _record(compiled, (x,))[1] == []


def test_the_launcher_calls_the_handler_only_for_kinds_it_can_attribute():
    from kiln.ops.fp_errors import DIVIDE, INVALID, OVER
    from kiln.runtime.fpwarn import kernel_warnings
    log = (DIVIDE | INVALID, "log", __file__, 1, True)
    sqrt = (INVALID, "sqrt", __file__, 2, True)
    masked = (OVER, "exp", __file__, 3, False)
    assert kernel_warnings((log, sqrt)).mask == DIVIDE          # invalid: log's or sqrt's
    assert kernel_warnings((log,)).mask == DIVIDE | INVALID
    assert kernel_warnings((log,), opaque=True).mask == DIVIDE
    assert kernel_warnings((masked, (OVER, "exp", __file__, 4, True))).mask == 0


def sqrt_beside_compare(x):
    return np.sqrt(np.abs(x) - 0.5) + (x > 0)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "reversed", "float32", "strided"])
def test_the_launcher_screens_nan_data_itself(layout, monkeypatch):
    """Data with a NaN sets the invalid flag through the comparison on every call: the C
    launcher finds the NaN (any layout, float32 or float64) and ends the call without the
    Python handler; NaN-free data with an invalid sqrt still reaches it and warns."""
    from kiln.runtime import fpwarn
    calls = []
    real = fpwarn._has_nan
    monkeypatch.setattr(fpwarn, "_has_nan", lambda v: calls.append(1) or real(v))
    base = np.linspace(-2.0, 2.0, 24).reshape(4, 6)
    make = {"contiguous": lambda a: a, "transposed": lambda a: a.T,
            "reversed": lambda a: a[::-1, ::-1], "float32": lambda a: a.astype(np.float32),
            "strided": lambda a: a[:, ::2]}[layout]
    compiled = kiln.compile(sqrt_beside_compare, backend="cpp")
    with_nan = base.copy()
    with_nan[3, 4] = np.nan     # the last element the odometer reaches in most layouts
    x = make(with_nan)
    assert np.isnan(x).any()
    for _ in range(2):
        got = _record(compiled, (x,))
        assert got[1] == [] and calls == []
        np.testing.assert_array_equal(got[0], sqrt_beside_compare(x))
    clean = make(base)
    _, want = _record(sqrt_beside_compare, (clean,))
    assert want and _record(compiled, (clean,))[1] == want and calls


def empty_statistics(x):
    centred = x - 1.0
    return (np.mean(centred), np.var(x, axis=0), np.std(centred, axis=0, ddof=1),
            np.nanmean(x, axis=0), centred.mean(axis=-1), np.sum(x) * 2)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0)], ids=str)
def test_empty_slices_warn_as_numpy_on_every_call(shape):
    """NumPy's "Mean of empty slice" / "Degrees of freedom <= 0" (and its 0 / 0) depend only
    on shapes, which the graph fixes: those calls run as NumPy, on every call, and stand-in
    runs while compiling add none."""
    x = np.zeros(shape)
    want_out, want = _record(empty_statistics, (x,))
    assert want
    compiled = kiln.compile(empty_statistics, backend="cpp")
    for _ in range(3):
        out, got = _record(compiled, (x.copy(),))
        assert got == want
        for o, w in zip(out, want_out):
            np.testing.assert_array_equal(o, w)
    assert kiln.compile(empty_statistics)(np.ones((2, 3)))[0] == 0.0   # non-empty: no break


def sqrt_after_in_place(x):
    x *= 2
    return np.sqrt(x - 3)


def sqrt_after_in_place_then_test(x):
    x += 1
    y = np.sqrt(x - 5)
    if np.isnan(y).any():
        return 0.0
    return y


def zero_by_zero_after_in_place(x):
    x -= 5
    return x / 0.0


@pytest.mark.parametrize("fn", [sqrt_after_in_place, sqrt_after_in_place_then_test,
                                zero_by_zero_after_in_place])
@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.float32])
def test_an_input_updated_in_place_does_not_silence_invalid(fn, dtype):
    """``x *= 2; np.sqrt(x - 3)`` in one kernel: x is overwritten, so no check can see the
    NaNs it held, and the invalid flag was never attributed (silent where NumPy warns).
    Kernels of NaN-quiet ops only (ops/fp_errors.py NAN_QUIET) need no such check."""
    x = np.array([1, 2, 5, 6]).astype(dtype)
    want_x = x.copy()
    want_out, want = _record(fn, (want_x,))
    assert any(w[1].startswith("invalid value encountered in") for w in want)
    compiled = kiln.compile(fn, backend="cpp")
    for _ in range(2):
        got_x = x.copy()
        out, got = _record(compiled, (got_x,))
        _same(got, want)
        np.testing.assert_allclose(out, want_out, rtol=1e-6)
        np.testing.assert_array_equal(got_x, want_x)


def nan_data_math(x):
    return np.sqrt(x - 1.0) * 2.0 + 1.0


def nan_data_quiet_ops(x):
    a = np.abs(x)
    s = np.where(np.isnan(x), 0.0, x)
    return ((x + 1.0) * (x - 2.0) / (a + 1.0) - np.square(x) + 1.0 / (a + 1.0) + np.sqrt(a)
            + np.cumsum(x) + np.cumprod(x / 10.0) + (x == 1.0) + (x != 2.0)
            + np.fabs(-x)).sum() + x.mean() + x.astype(np.float32).prod() + s.sum()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nans_in_the_data_do_not_hide_an_invalid_sqrt(dtype):
    """NaNs in the data read by a kernel of NaN-quiet ops: an invalid sqrt still warns, and
    NaNs alone (every op in its domain otherwise) warn nothing, as in NumPy."""
    for n in (5, 12, 40, 131):   # (the loops' SIMD body and scalar tail both read NaNs)
        rng = np.random.default_rng(14 + n)
        x = (rng.random(n) * 3 + 1.5).astype(dtype)
        x[[0, n // 2, n - 1]] = np.nan
        for fn in (nan_data_math, nan_data_quiet_ops):
            compiled = kiln.compile(fn, backend="cpp")
            out_want, want = _record(fn, (x,))
            assert want == []
            out, got = _record(compiled, (x,))
            assert got == []
            np.testing.assert_array_equal(np.isnan(out), np.isnan(out_want))
        y = x.copy()
        y[1] = 0.5   # sqrt(-0.5): NumPy warns invalid beside the NaNs
        _, want = _record(nan_data_math, (y,))
        assert [w[1] for w in want] == ["invalid value encountered in sqrt"]
        _same(_record(kiln.compile(nan_data_math, backend="cpp"), (y,))[1], want)


def exp_of_divided_ints(x):
    return np.exp(x / 100)


def exp_of_halved_ints(x):
    return np.exp(x * 0.5) * 0.25


@pytest.mark.parametrize("fn", [exp_of_divided_ints, exp_of_halved_ints])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
def test_an_integer_array_by_a_constant_leaves_overflow_to_exp(fn, dtype):
    """``np.exp(ints / 100)``: an integer array divided (or multiplied) by a finite
    constant can raise no flag, so exp owns the overflow; both had counted as possible
    owners and the kernel said nothing (NumPy: 'overflow encountered in exp')."""
    x = np.array([5, 75_000, 100, 1]).astype(dtype)
    want_out, want = _record(fn, (x,))
    assert [w[1] for w in want] == ["overflow encountered in exp"]
    compiled = kiln.compile(fn, backend="cpp")
    for _ in range(2):
        out, got = _record(compiled, (x,))
        _same(got, want)
        np.testing.assert_allclose(out, want_out, rtol=1e-14)


def _divisions(x, y):
    return x // y, np.divmod(x, y)[1]


def test_a_division_loops_invalid_is_told_beside_a_nan():
    """``x // y`` and np.divmod read NaNs noisily, so the runtime drops an invalid flag
    raised beside a NaN; the loop's predicate tells NumPy's 0 // 0 and inf % 1 apart
    (ops/fp_errors.py TOLD_BESIDE_NAN), under np.errstate too."""
    compiled = kiln.compile(_divisions, backend="cpp")
    cases = [(np.array([0.0, np.nan, 1.0]), np.array([0.0, 1.0, 0.0])),   # 0 // 0, 1 // 0
             (np.array([np.inf, np.nan]), np.array([1.0, 2.0])),          # inf // 1
             (np.array([np.nan, 2.0]), np.array([0.0, 1.0]))]             # NaN alone: silent
    for x, y in cases:
        for mode in ("warn", "ignore"):
            with np.errstate(invalid=mode):
                want, got = _record(_divisions, (x, y)), _record(compiled, (x, y))
            np.testing.assert_array_equal(got[0][0], want[0][0])
            assert got[1] == want[1]


def _log_then_inv(x, a):
    y = np.log(x)
    m = np.linalg.inv(a)
    return y.sum() + m


def test_earlier_warnings_come_before_a_later_error():
    """NumPy warns of the log, then raises LinAlgError: the log's kernel (fused into its
    sum, after the inv) runs before the extern that may raise (lowering/lower.py)."""
    compiled = kiln.compile(_log_then_inv, backend="cpp")
    args = (np.array([0.0, -1.0, 2.0]), np.zeros((2, 2)))
    for fn in (_log_then_inv, compiled):
        with warnings.catch_warnings(record=True) as seen, pytest.raises(np.linalg.LinAlgError):
            warnings.simplefilter("always")
            fn(*args)
        assert [str(w.message) for w in seen] == ["divide by zero encountered in log",
                                                  "invalid value encountered in log"]


def test_a_result_of_one_ufunc_call_is_named_in_the_graphs_text():
    """np.divmod(x, y)[0] warns "in divmod", x // y "in floor_divide": the graph's text
    (a build's cache key: runtime/artifacts.py) tells them apart."""
    quotient = kiln.compile(lambda x, y: np.divmod(x, y)[0], backend="aot_eager")
    args = (np.array([1.0]), np.array([2.0]))
    quotient(*args)
    assert "result 0 of np.divmod" in quotient.records[0].graph.python_code()


def _add_huge(x):
    return x + 1e300


def test_a_constant_past_a_narrower_loops_range_warns_on_every_call():
    """``float32_array + 1e300``: NumPy converts the constant on every call, and warns
    "overflow encountered in cast" each time (the build's own conversion says nothing)."""
    compiled = kiln.compile(_add_huge, backend="cpp")
    x = np.zeros(3, np.float32)
    want = _record(_add_huge, (x,))
    assert want[1]
    for _ in range(2):
        got = _record(compiled, (x,))
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1]


def _outer(x):
    return np.outer(x, x)


def test_np_outer_warns_as_numpys_multiply():
    """np.outer is NumPy's np.multiply of a column and a row: "overflow encountered in
    multiply" (from numpy/_core/numeric.py there; here at the user's line)."""
    x = np.array([0.0, 1e300, 2.0])
    want = _record(_outer, (x,))
    got = _record(kiln.compile(_outer, backend="cpp"), (x,))
    np.testing.assert_array_equal(got[0], want[0])
    assert [w[:2] for w in got[1]] == [w[:2] for w in want[1]] == \
        [(RuntimeWarning, "overflow encountered in multiply")]


def _complex_times(z, w):
    return z * w


def _complex_by(z, w):
    return z / w


def _float_as_complex_doubled(x):
    return (x + 0j) * 2


def _complex_exp_doubled(z):
    return np.exp(z) * 2


def test_complex_multiply_and_divide_warn_as_numpys_loops():
    """A complex loop's kernel code is NumPy's formula (cpp_prelude.h kiln_cmul,
    kiln_cdiv), so its flags are NumPy's: "overflow"/"invalid value encountered in
    multiply" of huge or infinite parts ((inf + 0j) * 2's imaginary part is inf * 0: no
    constant narrows a product), "divide by zero" of a zero divisor (they were silent)."""
    for dtype in (np.complex128, np.complex64):
        big = float(np.finfo(dtype).max)
        z = np.array([big * (1 + 1j), complex(np.inf, 0), 1 + 1j, complex(np.nan, 1)], dtype)
        w = np.array([2 + 2j, 0j, 0j, 1j], dtype)
        for fn in (_complex_times, _complex_by):
            args = (z, w)
            want = _record(fn, args)
            got = _record(kiln.compile(fn, backend="cpp"), args)
            np.testing.assert_array_equal(got[0], want[0])
            _same(got[1], want[1])
            assert len(got[1]) == (2 if fn is _complex_times else 3)
    x = np.array([1e308, np.inf, 1.0])
    want = _record(_float_as_complex_doubled, (x,))
    got = _record(kiln.compile(_float_as_complex_doubled, backend="cpp"), (x,))
    np.testing.assert_array_equal(got[0], want[0])
    _same(got[1], want[1])
    assert [w[1] for w in got[1]] == ["overflow encountered in multiply", "invalid value encountered in multiply"]
    # beside an op the table does not know (complex exp: libm's cexp), the kernel still
    # compiles (it fell back to NumPy op by op with a warning of its own) and says
    # nothing NumPy does not
    z = np.array([1000 + 0j, 1j])
    want = _record(_complex_exp_doubled, (z,))
    got = _record(kiln.compile(_complex_exp_doubled, backend="cpp"), (z,))
    np.testing.assert_array_equal(got[0], want[0])
    assert [w[1] for w in got[1] if w[:2] not in [v[:2] for v in want[1]]] == []   # (no fallback's)


def _complex_exp(z):
    return np.exp(z)


def test_complex_exp_warns_as_libms_cexp():
    """A kernel's complex exp is libm's cexp, which NumPy's npy_cexp is: its flags are
    NumPy's, for NaN parts too (cpp_prelude.h kiln_cexp; ops/fp_errors.py COMPLEX_LIBM):
    "invalid value encountered in exp" of inf + inf j and of 1 + NaN j, none of inf + NaN j,
    "overflow" of a huge real part (all were silent)."""
    compiled = kiln.compile(_complex_exp, backend="cpp")
    for dtype, huge in ((np.complex128, 1000.0), (np.complex64, 100.0)):
        for row, said in (([complex(np.inf, np.inf), 1j, 2, 3], ["invalid"]),
                          ([complex(1, np.nan), 1j, 2, 3], ["invalid"]),
                          ([complex(np.inf, np.nan), complex(np.nan, 0), 2, 3], []),
                          ([complex(huge, 1), 1j, 2, 3], ["overflow"])):
            z = np.array(row, dtype)
            want = _record(_complex_exp, (z,))
            got = _record(compiled, (z,))
            np.testing.assert_array_equal(got[0], want[0])
            _same(got[1], want[1])
            assert [w[1].split()[0] for w in got[1]] == said


def _vdot_beside_a_product(z):
    return np.vdot(z, z), (z * z.conj()).real


def _angles_beside_a_product(z):
    return np.angle(z), np.angle(z, deg=True), (z * z.conj()).real


@pytest.mark.parametrize("fn", [_vdot_beside_a_product, _angles_beside_a_product])
def test_an_op_that_raises_nothing_does_not_hide_a_products_overflow(fn):
    """Ops whose flags were unknown beside a complex product, each a second candidate for
    every kind in the kernel computing ``z * z.conj()``, whose overflow then went unsaid
    (tests/test_programs_real24.py complex64_reductions: NumPy warns "overflow encountered
    in multiply" of 1e20 + 1e20j in complex64): np.vdot's conjugate step (a composite's
    complex steps are left unknown, as NumPy may run one under errstate(ignore); shared
    with the user's ``z.conj()``) and np.angle (arctan2 of the parts: silent, as arctan2)."""
    for dtype in (np.complex64, np.complex128):
        big = float(np.finfo(dtype).max) ** 0.5 * 2
        z = np.array([0j, complex(big, big)], dtype)
        want = _record(fn, (z,))
        got = _record(kiln.compile(fn, backend="cpp"), (z,))
        np.testing.assert_array_equal(got[0][-1], want[0][-1])
        _same(got[1], want[1])
        assert [w[1] for w in got[1]] == ["overflow encountered in multiply"]


def _row_norms(x):
    return np.linalg.norm(x, axis=1)


def test_norm_over_an_axis_warns_as_numpys_steps():
    """np.linalg.norm over an axis is vector_norm, whose kernel computes sqrt(sum(x * x))
    under one node: its overflow was unattributed, so silent. NumPy's op on the argument
    tells it (ops/fp_errors.py NUMPY_TELLS): "overflow encountered in multiply" of 1e200's
    square, "... in reduce" of two squares of 1.3e154 summed."""
    x = np.array([[1e200, 1.0], [1.3e154, 1.3e154], [1.0, 2.0]])
    want = _record(_row_norms, (x,))
    got = _record(kiln.compile(_row_norms, backend="cpp"), (x,))
    np.testing.assert_array_equal(got[0], want[0])
    _same(got[1], want[1])
    assert [w[1] for w in got[1]] == ["overflow encountered in multiply", "overflow encountered in reduce"]


def _spreads_of_cheap(x, y, s):
    return (np.var(2 * x), np.abs(y).std(), np.var(x + 1.0, axis=0), x.reshape(1, 3).var(axis=1), x[1:].var(),
            np.std(x - s))


def test_var_and_std_of_a_cheap_value_their_kernel_computes_warn_as_numpys_steps():
    """A cheap value computed inside var's reduction (not stored: realize_early.py
    ``_store_told_input``) is computed again by NumPy from the kernel's arguments after a
    launch that raised a flag (lowering/fp_flags.py ``_recipe``, runtime/fpwarn.py
    ``recomputed``), and NumPy's var of it warns: "overflow encountered in square" of
    2e200's deviation, "invalid value encountered in subtract" of an inf (all silent;
    a reshape and a slice of an argument too, and a run-time scalar's difference)."""
    x = np.array([1e200, -1e200, 3.0])
    y = np.array([np.inf, 1.0, 2.0])
    want = _record(_spreads_of_cheap, (x, y, 1.0))
    compiled = kiln.compile(_spreads_of_cheap, backend="cpp")
    got = _record(compiled, (x, y, 1.0))
    for g, w in zip(got[0], want[0]):
        np.testing.assert_array_equal(g, w)
    _same(got[1], want[1])
    assert [w[1] for w in got[1]] == ["overflow encountered in square", "invalid value encountered in subtract",
                                      "overflow encountered in square", "overflow encountered in square",
                                      "overflow encountered in square", "overflow encountered in square"]


def _spreads_of_computed(y):
    return np.log(y).std(), np.exp(y).var(axis=0)


def test_var_and_std_of_a_value_their_kernel_computes_warn_as_numpys_steps():
    """var and std tell NumPy's four steps' warnings by NumPy's own op on the array they
    read; a value computed in their kernel is stored for that (lowering/realize_early.py
    ``_store_told_input``): the std of ``np.log(y)`` with a 0 and an inf in y gave
    "divide by zero encountered in log" alone, NumPy adds "invalid value encountered in
    reduce" (-inf + inf); the var of ``np.exp(y)`` "... in subtract" (it was silent)."""
    y = np.array([[0.0, 1.0], [np.inf, 2.0], [3.0, 4.0]])
    want = _record(_spreads_of_computed, (y,))
    compiled = kiln.compile(_spreads_of_computed, backend="cpp")
    for _ in range(2):
        got = _record(compiled, (y,))
        for g, w in zip(got[0], want[0]):
            np.testing.assert_array_equal(g, w)
        _same(got[1], want[1])
    assert [w[1] for w in got[1]] == ["divide by zero encountered in log", "invalid value encountered in reduce",
                                      "invalid value encountered in subtract"]
