"""NumPy's SVML loops (kiln/lowering/svml.py): where NumPy computes a function with the
SVML it exports (AVX512_SKX: pow, arctan2, tan, the inverse and hyperbolic functions but
tanh, exp2, log2, log10, expm1, log1p, cbrt), kernels call the same functions, so values
are NumPy's bit for bit and warnings NumPy's, in float32 and float64; hypot is glibc's scalar
function in NumPy's loops and in kernels. (Not yet: an operand
NumPy's inner loop reads backwards, x[::-1], which NumPy computes with libm's scalar function.)"""
import warnings

import numpy as np
import pytest

import kiln
from kiln.config import config
from kiln.lowering.cpp_ops import call_width, libm_scalar_ufunc, svml_ufunc
from kiln.lowering.svml import kernels_call_svml, numpy_own_f32_loops, numpy_scalar_libm, numpy_uses_svml

UNARY = [np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.arcsinh, np.arccosh,
         np.arctanh, np.exp2, np.log2, np.log10, np.expm1, np.log1p, np.cbrt]


def all_of_them(x, y):
    return tuple(f(x) for f in UNARY) + (np.power(x, y), x[::2] ** y[1::2], np.arctan2(x, y), np.hypot(x, y))


def chosen(dtype):
    """~300 values: edges (NaN, infinities, zeros, subnormals, the largest), around 1, and
    magnitudes over the dtype's whole exponent range, both signs."""
    info = np.finfo(dtype)
    rng = np.random.default_rng(7)
    edges = [np.nan, np.inf, -np.inf, 0.0, -0.0, info.smallest_subnormal, -info.smallest_subnormal,
             info.tiny, info.max, -info.max, 1.0, -1.0, 0.5, -0.5, 2.0, 3.0, -3.0, 100.0, 1000.0, -1000.0]
    mags = np.exp2(rng.uniform(np.log2(info.smallest_subnormal), np.log2(info.max), 180))
    with np.errstate(over="ignore"):
        return np.concatenate([edges, rng.uniform(-2, 2, 100), mags * rng.choice([-1.0, 1.0], 180)]).astype(dtype)


def same_bits(got, want):
    nan = np.isnan(got) & np.isnan(want)   # (a NaN's sign and payload are not NumPy's rule)
    return np.flatnonzero((got.view(f"u{got.itemsize}") != want.view(f"u{want.itemsize}")) & ~nan)


def warned(fn, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, sorted({str(m.message) for m in w})


@pytest.mark.skipif(not kernels_call_svml(config.cxx_flags) and not numpy_scalar_libm(),
                    reason="NumPy's loops call SVML on this CPU, and kiln's flags build no AVX-512 code")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_svml_functions_are_numpys_bit_for_bit(dtype):
    """With AVX512_SKX NumPy's SVML functions; without (AVX2: NumPy's generic loops),
    glibc's scalar functions, as NumPy's loops call them (libmvec's are 1 ulp off)."""
    x = chosen(dtype)
    y = np.random.default_rng(8).permutation(x)
    want, want_warnings = warned(all_of_them, x, y)
    got, got_warnings = warned(kiln.compile(all_of_them), x, y)
    for f, g, w in zip([f.__name__ for f in UNARY] + ["power", "power strided", "arctan2", "hypot"], got, want):
        assert g.dtype == w.dtype
        differ = same_bits(g, w)
        assert differ.size == 0, (f, x[differ[:5]], g[differ[:5]], w[differ[:5]])
    assert got_warnings == want_warnings


def test_which_functions_go_to_svml():
    """NumPy's own loops for sin, cos, tanh and float32 exp, log (not SVML); float64 exp
    and log are SVML's; none without AVX-512 code."""
    assert not any(svml_ufunc(f, "-O3 -march=native", dt) for f in ("sin", "cos", "tanh", "hypot")
                   for dt in ("float32", "float64"))
    assert not any(svml_ufunc(f, "-O3 -march=native", "float32") for f in ("exp", "log"))
    assert all(svml_ufunc(f, "-O3 -march=native") == numpy_uses_svml() for f in ("exp", "log"))
    assert svml_ufunc("power", "-O3 -march=native") == numpy_uses_svml()
    assert svml_ufunc("arcsinh", "-O3 -march=x86-64-v4 -fopenmp") == numpy_uses_svml()
    assert not svml_ufunc("power", "-O3 -fopenmp")
    assert not svml_ufunc("power", "-O3 -march=native -mno-avx512f")
    assert not svml_ufunc("power", "-O3 -march=native -march=haswell")


def test_scalar_libm_keeps_a_loop_scalar():
    """Without AVX512_SKX NumPy's loops of SVML's functions call glibc's scalar function
    per element; kernels call it too, in a scalar loop (call_width): float64 log too, but
    not kiln's own inline float64 exp, nor float32 exp and log (NumPy's own vector loops)."""
    scalar = numpy_scalar_libm() and not kernels_call_svml(config.cxx_flags)
    for fn, dt in [("power", "float64"), ("power", "float32"), ("cbrt", "float64"), ("arctan2", "float32"),
                   ("tan", "float32"), ("log", "float64")]:
        assert libm_scalar_ufunc(fn, dt) == numpy_scalar_libm()
        assert (call_width(fn, dt) == "scalar") == scalar, (fn, dt)
    assert not any(libm_scalar_ufunc(fn, dt) for fn, dt in [("exp", "float64"), ("exp", "float32"),
                                                            ("log", "float32"), ("tanh", "float64")])


def npmath(x):
    return np.exp(x), np.log(x), np.exp(x[::3]), np.log(x[1::2]), np.sin(x), np.cos(x), np.sin(x[::-2])


@pytest.mark.parametrize("dtype, flags", [(np.float32, None), (np.float64, None),
                                          (np.float32, "-O3 -march=haswell -fopenmp -fno-trapping-math")])
def test_exp_log_sin_cos_are_numpys_bit_for_bit(dtype, flags, monkeypatch):
    """float64 exp and log: NumPy's SVML functions (AVX512_SKX); float32 exp, log, sin and
    cos: ports of NumPy's own vector loops (where NumPy takes them); float64 sin and cos:
    glibc's scalar functions, as NumPy's loops. Contiguous, strided, reversed and short
    (tail) operands, and NumPy's warnings, no others; float32 exp and log also built for
    AVX2 (the prelude's per-lane port; with AVX-512 the support object's intrinsics)."""
    if flags:
        monkeypatch.setattr(config, "cxx_flags", flags)
        kiln.reset()
    if dtype == np.float64 and not kernels_call_svml(config.cxx_flags):
        pytest.skip("NumPy's float64 exp/log do not call SVML here, or kiln builds no AVX-512 code")
    if dtype == np.float32 and not numpy_own_f32_loops():
        pytest.skip("NumPy's float32 exp/log/sin/cos take its scalar loops on this CPU")
    x = chosen(dtype)
    x = np.concatenate([x, np.float32([88.72283935546875, 88.7228317, -103.972084, -103.97208, -1e-45,
                                       1e-40, 0.70710677, 1.0000001, 0.99999994]).astype(dtype)])
    want, want_warnings = warned(npmath, x)
    got, got_warnings = warned(kiln.compile(npmath), x)
    names = ["exp", "log", "exp strided", "log strided", "sin", "cos", "sin reversed"]
    for f, g, w in list(zip(names, got, want))[:None if kernels_call_svml(config.cxx_flags) else 4]:
        differ = same_bits(g, w)
        assert differ.size == 0, (f, g[differ[:5]], w[differ[:5]])
    assert got_warnings == want_warnings
    if flags:
        kiln.reset()
