"""Casts NumPy warns about, compiled, against plain NumPy: float to integer of NaN,
infinities and values out of the conversion's range ("invalid value encountered in
cast"), float64 to float32 past its range ("overflow encountered in cast"), alone and
fused, on both backends: values, warnings (category, message, the user's file and line),
np.errstate, and the line a FloatingPointError is raised at."""
from __future__ import annotations

import traceback
import warnings

import numpy as np
import pytest

import kiln

BACKENDS = ["eager", "cpp"]
# (uint32 out of range: NumPy's value and warning depend on its SIMD path: not compared)
TARGETS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint64]
EDGES = np.array([np.nan, np.inf, -np.inf, 1e300, -1e300, -1.0, -0.5, 300.0, 7e4, 2.0 ** 31,
                  -2.0 ** 31 - 1, 2.0 ** 32, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 3.5])
FINE = np.array([1.0, -1.0, 3.5, 0.0, 100.0])


def _run(fn, args, **errstate):
    with warnings.catch_warnings(record=True) as seen, np.errstate(**errstate):
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [(w.category, str(w.message), w.filename, w.lineno) for w in seen]


def _same(got, want):
    assert got[1] == want[1]
    assert type(got[0]) is type(want[0]) and got[0].dtype == want[0].dtype
    np.testing.assert_array_equal(got[0], want[0])


def cast(x, dt):
    return x.astype(dt)


def cast_fused(x, dt):
    return (x * 1.0).astype(dt) + 1


def cast_of_sum(x, y, dt):
    return (x + y).astype(dt)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", TARGETS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn", [cast, cast_fused], ids=lambda f: f.__name__)
def test_float_to_int_casts_warn_as_numpy(fn, dt, backend):
    compiled = kiln.compile(fn, backend=backend)
    for src in (np.float64, np.float32):
        with np.errstate(over="ignore"):
            x = np.tile(EDGES, 5).astype(src)
        for args in ((x, dt), (FINE.astype(src), dt), (x, dt)):
            _same(_run(compiled, args), _run(fn, args))
        want = _run(fn, (x, dt))[1]
        assert want and want[0][2] == __file__


@pytest.mark.parametrize("backend", BACKENDS)
def test_negative_floats_to_unsigned_wrap_as_numpy(backend):
    # -1.0 -> 2**64 - 1 with no warning, NaN -> 2**63 with one (NumPy's conversion)
    x = np.tile([-1.0, -2.0 ** 31 - 1, -0.5, 7.0, np.nan, -np.inf], 20)
    compiled = kiln.compile(cast_of_sum, backend=backend)
    for args in ((x, 0.0, np.uint64), (x[:3], 0.0, np.uint64)):
        _same(_run(compiled, args), _run(cast_of_sum, args))
    # uint32 where NumPy's value does not depend on its SIMD path (-5.0 -> 2**32 - 5: GCC's
    # AVX-512 vcvttpd2udq gave 2**32 - 1 for every negative)
    args = (np.tile([-5.0, -2.0 ** 31 + 1, -0.5, 7.0, 3e9, 2.0 ** 32 - 256], 20), 0.0, np.uint32)
    _same(_run(compiled, args), _run(cast_of_sum, args))


@pytest.mark.parametrize("backend", BACKENDS)
def test_narrowing_float_cast_overflows_as_numpy(backend):
    x = np.array([1e39, -1e39, 1.0, np.nan] * 10)
    for fn in (cast, cast_fused):
        compiled = kiln.compile(fn, backend=backend)
        _same(_run(compiled, (x, np.float32)), _run(fn, (x, np.float32)))


def _user_line(tb):
    return [f.lineno for f in traceback.extract_tb(tb) if f.filename == __file__][-1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_cast_errors_follow_the_error_mode(backend):
    x = np.array([np.nan, 1e300, 1.0] * 10)
    compiled = kiln.compile(cast_fused, backend=backend)
    _same(_run(compiled, (x, np.int32), invalid="ignore"), _run(cast_fused, (x, np.int32), invalid="ignore"))
    with np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError) as want:
            cast_fused(x, np.int32)
        with pytest.raises(FloatingPointError) as got:
            compiled(x, np.int32)
    assert str(got.value) == str(want.value)
    assert _user_line(got.value.__traceback__) == _user_line(want.value.__traceback__)


def with_python_float(x, m, e):
    return np.where(m, x, e), np.maximum(x, e) - e


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_floats_past_a_narrower_loop_warn_in_cast(backend):
    # NEP 50: a float32 (float16, complex64) loop converts the run-time Python float once,
    # and past its largest value NumPy warns "overflow encountered in cast" at the user's
    # line (the kernel's cast raised the flag of the op it fed: "overflow encountered in
    # subtract", or nothing; the eager np.where warned in kiln's file)
    compiled = kiln.compile(with_python_float, backend=backend)
    for dt in (np.float32, np.float16, np.complex64):
        x = np.arange(6).astype(dt)
        m = np.arange(6) > 2
        limit = 3.4028235677973366e+38 if dt != np.float16 else 65520.0
        # (complex inf - inf: NumPy warns "invalid value", a kernel not: complex flags are
        # not told)
        edges = (np.inf, np.nan) if dt != np.complex64 else ()
        for e in (0.5, 1e150, -1e150, limit, np.nextafter(limit, 0).item(), *edges, 2.0):
            got, want = _run(compiled, (x, m, e)), _run(with_python_float, (x, m, e))
            assert got[1] == want[1], (dt, e)
            for g, w in zip(got[0], want[0]):
                assert g.dtype == w.dtype
                np.testing.assert_array_equal(g, w)


def times_huge(x):
    return x * 1e300


def test_a_constant_past_a_narrower_loop_is_its_infinity():
    # 1e300 in a float32 loop is inf (NEP 50: "overflow encountered in cast"), so 0 * inf
    # is "invalid value encountered in multiply": the finite constant had narrowed the
    # multiply's kinds to overflow alone, and the kernel said nothing of it
    compiled = kiln.compile(times_huge, backend="cpp")
    x = np.array([0.0, 1.0, 2.0], np.float32)
    got, want = _run(compiled, (x,)), _run(times_huge, (x,))
    _same(got, want)
    assert [w[1] for w in got[1]] == ["overflow encountered in cast", "invalid value encountered in multiply"]


def writes_of_floats(a, v, w):
    b = np.zeros(3, np.float32)
    b[1:] = v
    a[:2] = w
    a[2] = 1e300
    return a, b


@pytest.mark.parametrize("backend", BACKENDS)
def test_floats_written_into_a_narrower_array_warn_in_cast(backend):
    # x32[...] = v converts a Python float or a np.float64 once a write: past float32's
    # range NumPy warns "overflow encountered in cast" at each call; a cpp kernel's
    # conversion said nothing, and a constant warned once, at compile time. (Lines are not
    # compared: a write NumPy runs for kiln, the eager backend's among them, warns at
    # kiln's line, not the user's.)
    compiled = kiln.compile(writes_of_floats, backend=backend)
    for v, w in ((1e300, np.float64(-1e300)), (0.5, np.float64(2.0)), (1e300, np.float64(1e39)),
                 (np.inf, np.float64(np.nan))):
        got = _run(compiled, (np.ones(3, np.float32), v, w))
        want = _run(writes_of_floats, (np.ones(3, np.float32), v, w))
        assert [w[:2] for w in got[1]] == [w[:2] for w in want[1]], (v, w)
        for g, e in zip(got[0], want[0]):
            assert g.dtype == e.dtype
            np.testing.assert_array_equal(g, e)



def writes_of_arrays(y, v):
    y[1:] = v[1:]      # float64 into float32: "overflow encountered in cast"
    return y * 2


def out_of_a_narrower_dtype(u, v):
    np.negative(v, out=u)   # NumPy's cast in the ufunc's call: "overflow encountered in negative"
    return u * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_arrays_written_into_a_narrower_array_warn_as_numpy(backend, monkeypatch):
    # The write's cast (index_put) raised the overflow flag in the kernel, but a write
    # tells no flags: 1e300 written into float32 warned nothing (its cast is told now:
    # ops/fp_errors.py CAST_INPUT)
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    compiled = kiln.compile(writes_of_arrays, backend=backend)
    for v in (np.linspace(-3.0, 3.0, 16) * 1e300, np.linspace(-3.0, 3.0, 16)):
        got = _run(compiled, (np.ones(16, np.float32), v))
        want = _run(writes_of_arrays, (np.ones(16, np.float32), v))
        _same(got, want)
    assert not want[1] and _run(writes_of_arrays, (np.ones(16, np.float32), v * 1e300))[1]


def complex_writes(z, x):
    z[:] = x * 2       # complex128 into complex64, in one kernel with the multiply
    return z


def test_a_cast_into_complex64_beside_another_overflow_warns_as_numpy():
    # two ops of the kernel may overflow, so predicates tell which: the cast's tested
    # its complex result as a float (np.isinf of a complex: false) and never held
    compiled = kiln.compile(complex_writes)
    # (not here: an infinity or 1e308, whose complex multiply NumPy warns for, kiln not)
    for data in ([1e300, 1.0], [1.0 + 1e300j, 1.0], [-1e300, 3e38], [2.0, 1.0], [1.0, 2.0]):
        x = np.array(data, np.complex128)
        _same(_run(compiled, (np.zeros(2, np.complex64), x)), _run(complex_writes, (np.zeros(2, np.complex64), x)))


def test_a_ufuncs_cast_into_a_narrower_out_warns_in_the_ufuncs_name(monkeypatch):
    # np.negative(v, out=u32): the cpp kernel's cast in the write raised overflow, which
    # no entry told (the negative cannot overflow), so nothing was said. (The eager
    # backend's np.copyto says "... in cast": not compared.)
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    compiled = kiln.compile(out_of_a_narrower_dtype)
    for v in (np.linspace(-3.0, 3.0, 16) * 1e300, np.linspace(-3.0, 3.0, 16)):
        got = _run(compiled, (np.ones(16, np.float32), v))
        want = _run(out_of_a_narrower_dtype, (np.ones(16, np.float32), v))
        _same(got, want)
    assert not want[1] and _run(out_of_a_narrower_dtype, (np.ones(16, np.float32), v * 1e300))[1]


def copy_cast(y, v):
    np.copyto(y, v, casting="unsafe")
    return y


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_copy_whose_cast_raises_writes_first_as_numpy(backend):
    # np.copyto(y, v, casting="unsafe") of a NaN into int32 under errstate(invalid="raise"):
    # NumPy writes y, then raises; kiln cast first (an astype of its own) and raised before
    # the write, leaving the caller's y as it was (the write is out_write now)
    compiled = kiln.compile(copy_cast, backend=backend)
    v = np.array([1.0, 2.0, np.nan, 4.0] * 4)
    got, want = np.zeros(16, np.int32), np.zeros(16, np.int32)
    with np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError) as e_want:
            copy_cast(want, v)
        with pytest.raises(FloatingPointError) as e_got:
            compiled(got, v)
    assert str(e_got.value) == str(e_want.value)
    np.testing.assert_array_equal(got, want)
    assert want[0] == 1


def integer_ops_of_casts(x, dt):
    """Integer ops whose result depends on the sign or range of a float -> integer cast
    whose source GCC knows the sign of (fabs, a square): NaN, the infinities and values
    out of range convert to the minimum, as x86 (and NumPy) converts them."""
    a = np.abs(x).astype(dt)
    s = (x * x).astype(dt)
    return a % dt(5), a // dt(3), a < 0, a >> dt(2), np.maximum(s, dt(0)), np.abs(a), np.bincount(
        (np.abs(x).astype(np.int64) % 5))


@pytest.mark.parametrize("dt", TARGETS, ids=lambda d: np.dtype(d).name)
def test_integer_ops_of_an_undefined_cast_are_numpys(dt):
    # np.bincount(np.abs(x).astype(np.int64) % 5) with NaN in x counted it under 3: the plain
    # C cast (int64_t)fabs(x) is undefined for NaN, GCC took it as non-negative and dropped
    # the remainder's sign fix (NumPy: INT64_MIN % 5 is 2); np.maximum((x * x).astype(int), 0)
    # lost the maximum (INT64_MIN, NumPy 0). cpp_prelude.h kiln_ftoi
    compiled = kiln.compile(integer_ops_of_casts)
    for src in (np.float64, np.float32):
        with np.errstate(over="ignore"):
            x = np.tile(EDGES, 3).astype(src)
        with np.errstate(invalid="ignore", over="ignore"):
            want, got = integer_ops_of_casts(x, dt), compiled(x, dt)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


def test_an_undefined_cast_in_a_loop_body_is_numpys():
    def counts(x):
        out = np.zeros(3, np.int64)
        for i in range(x.shape[0]):
            out += (np.abs(x[i]) * np.ones(3)).astype(np.int64) % 5
        return out
    x = np.array([1.5, 2.0, np.nan, 3.2, np.inf, -1e300])
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(kiln.compile(counts)(x), counts(x))
