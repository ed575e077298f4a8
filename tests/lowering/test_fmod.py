"""Float fmod in kernels (kiln/codegen_templates/cpp_fmod.h: NumPy's inline x87 fprem, libm's
fmod where that gives NaN), under np.fmod and NumPy's npy_divmod (//, %, np.remainder,
np.divmod) and in loop nodes (loop_prelude.py): bit for bit NumPy's results over edge values
and random data whose exponents are far apart (fprem's loop takes many rounds), the same
warnings, array and scalar divisors. benchmarks/fmod_speed.py has the speed."""
import warnings

import numpy as np
import pytest

import kiln
from kiln.ops.loops import stats as loop_stats

EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 3.0, -3.0, 7.5, -7.5, 0.1, -0.1, 1e-300, -1e-300, 5e-324,
         -5e-324, 2.5e-310, 1e-40, 1e-45, 3.4e38, -3.4e38, 1e300, -1e300, 1.7976931348623157e308,
         2.0 ** 60, 2.0 ** -60, 16777217.0, np.inf, -np.inf, np.nan, -np.nan]

OPS = {"fmod": lambda a, b: np.fmod(a, b), "%": lambda a, b: a % b,
       "remainder": lambda a, b: np.remainder(a, b), "//": lambda a, b: a // b,
       "divmod": lambda a, b: np.divmod(a, b)}


def operands(dtype, n=20000):
    with np.errstate(over="ignore"):
        e = np.array(EDGES).astype(dtype)
    a, b = (v.ravel() for v in np.meshgrid(e, e))
    rng = np.random.default_rng(5)
    top = 35 if dtype == np.float32 else 300
    wide = [rng.standard_normal(n) * 10.0 ** rng.integers(-top, top, n) for _ in range(2)]
    near = [rng.uniform(-100, 100, n), rng.uniform(0.5, 7, n) * rng.choice([-1, 1], n)]
    with np.errstate(over="ignore", under="ignore"):
        return (np.concatenate([a, wide[0].astype(dtype), near[0].astype(dtype)]),
                np.concatenate([b, wide[1].astype(dtype), near[1].astype(dtype)]))


def run(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args)
    return (out if isinstance(out, tuple) else (out,)), sorted(str(w.message) for w in caught)


def assert_same_bits(got, want, a, b, op):
    # (NaNs too: np.remainder(-nan, nan) is +nan, fprem's, and np.fmod's -nan, libm's)
    bits = np.uint32 if want.dtype == np.float32 else np.uint64
    same = got.view(bits) == want.view(bits)
    bad = np.flatnonzero(~same)
    assert not bad.size, f"{op}: {a[bad[:5]]} , {b[bad[:5]]} -> {got[bad[:5]]}, NumPy {want[bad[:5]]}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", list(OPS))
def test_array_divisors_match_numpy_bit_for_bit(op, dtype):
    a, b = operands(dtype)
    want, want_warns = run(OPS[op], a, b)
    got, got_warns = run(kiln.compile(OPS[op]), a, b)
    assert got_warns == want_warns
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        assert_same_bits(g, w, a, b, op)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("divisor", [2.5, -0.75, 1e-30, 0.0, float("inf")])
def test_scalar_divisors_match_numpy_bit_for_bit(divisor, dtype):
    a, _ = operands(dtype, 4000)

    def f(x):
        return np.fmod(x, divisor), x % divisor, x // divisor

    want, want_warns = run(f, a)
    got, got_warns = run(kiln.compile(f), a)
    assert got_warns == want_warns
    for g, w, op in zip(got, want, ("fmod", "%", "//"), strict=True):
        assert_same_bits(g, w, a, np.full_like(a, divisor), op)


def test_loop_node_float_remainder_matches_python():
    # loop_prelude.py's kiln_mod_f64 / kiln_floordiv_f64 (Python float % and //) take
    # kiln_fmod too; huge and tiny magnitudes make fprem loop
    a, b = operands(np.float64, 2000)
    keep = np.isfinite(a) & np.isfinite(b) & (b != 0)
    a, b = a[keep], b[keep]

    def pairs(a, b, q, r):
        for i in range(a.shape[0]):
            q[i] = float(a[i]) // float(b[i])
            r[i] = float(a[i]) % float(b[i])
        return q, r

    want = pairs(a, b, np.zeros_like(a), np.zeros_like(a))
    before = loop_stats["native"]
    got = kiln.compile(pairs)(a, b, np.zeros_like(a), np.zeros_like(a))
    assert loop_stats["native"] > before
    for g, w in zip(got, want):
        assert_same_bits(g, w, a, b, "loop")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_loop_node_numpy_scalar_remainder_keeps_fprems_nan(dtype):
    # NumPy's scalar math (npy_divmod) keeps fprem's NaN: np.float64(-nan) % np.float64(nan)
    # is +nan, where Python's float % (CPython's libm fmod) gives -nan; loop_prelude.py's
    # kiln_mod_npf64 / kiln_mod_f32 and kiln_mod_f64 (Python floats, above)
    e = np.array([np.nan, -np.nan, 1.0, -2.5, 0.0, np.inf], dtype)
    a, b = (v.ravel() for v in np.meshgrid(e, e))
    a, b = np.tile(a, 3), np.tile(b, 3)

    def pairs(a, b, q, r):
        for i in range(a.shape[0]):
            q[i] = a[i] // b[i]
            r[i] = a[i] % b[i]
        return q, r

    with np.errstate(all="ignore"):
        want = pairs(a, b, np.zeros_like(a), np.zeros_like(a))
        before = loop_stats["native"]
        got = kiln.compile(pairs)(a, b, np.zeros_like(a), np.zeros_like(a))
    assert loop_stats["native"] > before
    for g, w in zip(got, want):
        assert_same_bits(g, w, a, b, "loop")
