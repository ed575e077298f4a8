"""NumPy's SVML loops: which math functions NumPy computes with Intel's SVML, and whether
it does in this process, so that kernels call the same functions and get NumPy's bits.

On a CPU with AVX512_SKX, NumPy (2.x, numpy/_core/src/umath/loops_umath_fp.dispatch.c.src)
runs the float32 and float64 loops of the functions in :data:`SVML` through the SVML
functions it links and exports from ``_multiarray_umath`` (``__svml_powf16``,
``__svml_pow8_ha``, ...), one 512-bit vector at a time; glibc's vector math (libmvec),
which kernels call otherwise, is 1 ulp off them in up to a third of the elements (float64
cbrt: 36%; float32 pow: 4-21%). Where NumPy uses them, a kernel spells such a call
``kiln_np_<name>[f]`` (cpp_ops.py); the support object (codegen_templates/cpp_support.cpp)
defines those names' vector variants on top of NumPy's own SVML functions, found in the
loaded module at load time.

float64 exp and log are SVML's too (loops_exponent_log.dispatch.c.src, DOUBLE_exp/log:
``__svml_exp8_ha``/``__svml_log8_ha`` on AVX512_SKX where NumPy links SVML; its own
AVX512F code, Tang's table-driven exp, only where it does not): they bind the same way,
float64 only (kiln's own inline exp, cpp_prelude.h 'exp', steps aside for it). float32
exp, log, sin and cos are NumPy's own vector loops (:data:`NUMPY_OWN_F32`): kernels call
ports of them, ``kiln_np_<name>f`` (the support object's AVX512F intrinsics with AVX-512;
else for exp and log the prelude's per-lane C++, for sin and cos glibc's). float32 tanh
(NumPy's own port of SVML's) is not ported: kernels keep glibc's vector tanhf.
float64 sin and cos are glibc's scalar functions in NumPy's loops (it turned its vector
ones off), and in kernels there (cpp_ops.py ``SCALAR_F64``).

Without AVX512_SKX (an AVX2 CPU: NumPy's dispatch takes X86_V3), NumPy's loops of the
functions in :data:`SVML` are its generic ones, which call libm's scalar function per
element (npy_pow: glibc's pow); glibc's vector variants (libmvec, ``_ZGVdN4v_pow``), which
kernels would call, are 1 ulp off them (x**3 of float64: 14% of elements; cbrt: 58%). There
(:func:`numpy_scalar_libm`) the prelude binds the ``kiln_np_`` names to glibc's scalar
functions and a loop calling one stays scalar (cpp_ops.py ``call_width``), as NumPy's.
"""
from __future__ import annotations

import ctypes
import functools
import os
import re

# C name -> (SVML name, operands, the value NumPy loads into a short vector's unused lanes,
# the C types whose NumPy loop is SVML's)
_FD, _D = ("float", "double"), ("double",)   # float32 and float64; float64 only
SVML = {"exp2": ("exp2", 1, 0, _FD), "log2": ("log2", 1, 1, _FD), "log10": ("log10", 1, 1, _FD),
        "expm1": ("expm1", 1, 1, _FD), "log1p": ("log1p", 1, 0, _FD), "cbrt": ("cbrt", 1, 0, _FD),
        "tan": ("tan", 1, 0, _FD), "asin": ("asin", 1, 0, _FD), "acos": ("acos", 1, 0, _FD),
        "atan": ("atan", 1, 0, _FD), "sinh": ("sinh", 1, 0, _FD), "cosh": ("cosh", 1, 0, _FD),
        "asinh": ("asinh", 1, 0, _FD), "acosh": ("acosh", 1, 1, _FD), "atanh": ("atanh", 1, 0, _FD),
        "pow": ("pow", 2, 1, _FD), "atan2": ("atan2", 2, 1, _FD),
        "exp": ("exp", 1, 0, _D), "log": ("log", 1, 1, _D)}
# SVML's suffix per C type: float32 16 lanes, float64 8 lanes in the high-accuracy version
SUFFIX = {"float": "f16", "double": "8_ha"}


@functools.lru_cache(maxsize=None)
def numpy_uses_svml() -> bool:
    """Whether NumPy's loops of :data:`SVML` call SVML in this process: its dispatch chose
    AVX512_SKX (the CPU has it and NPY_DISABLE_CPU_FEATURES did not turn it off) and its
    module exports every function kernels would call."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:   # NumPy 1.x: other loops; kernels keep glibc's
        return False
    if not getattr(umath, "__cpu_features__", {}).get("AVX512_SKX"):
        return False
    # The support object finds NumPy's module with dl_iterate_phdr/dlopen/dlsym, which a
    # kernel module (linked -nodefaultlibs -lc, runtime/build.py) gets from libc only since
    # glibc 2.34 (before, libdl): elsewhere kernels keep glibc's functions, as before.
    import platform
    libc, version = platform.libc_ver()
    try:
        if libc != "glibc" or tuple(int(p) for p in version.split(".")[:2]) < (2, 34):
            return False
    except ValueError:
        return False
    return _links_svml(umath)


def _links_svml(umath) -> bool:
    """Whether NumPy's module ``umath`` exports every SVML function kernels would call."""
    try:
        lib = ctypes.CDLL(umath.__file__, mode=os.RTLD_NOLOAD)
    except (OSError, AttributeError):
        return False
    return all(hasattr(lib, f"__svml_{svml}{SUFFIX[ctype]}") for svml, _n, _fill, ctypes_ in SVML.values()
               for ctype in ctypes_)


@functools.lru_cache(maxsize=None)
def numpy_scalar_libm() -> bool:
    """Whether NumPy's loops of :data:`SVML` (float64 exp and log included) call libm's
    scalar functions per element in this process: NumPy 2.x on glibc whose dispatch did
    not choose AVX512_SKX (an AVX2 CPU, or NPY_DISABLE_CPU_FEATURES turned it off; its
    AVX512_SKX loops are SVML's, :func:`numpy_uses_svml`). Kernels then call the same
    scalar functions (cpp_prelude.h), for NumPy's bits."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:   # NumPy 1.x: other loops (its AVX512F exp and log); kernels keep glibc's
        return False
    import platform
    if platform.libc_ver()[0] != "glibc":
        return False
    features = getattr(umath, "__cpu_features__", {})
    # (AVX512_SKX without SVML linked, a rare build: float64 exp and log are NumPy's own
    # AVX512F code, the others scalar; kernels keep glibc's vector functions there)
    return not features.get("AVX512_SKX")


# float32 functions NumPy computes with its own vector loops where its dispatch chose AVX512F
# or AVX2+FMA3 (loops_exponent_log.dispatch.c.src simd_exp_FLOAT, simd_log_FLOAT;
# loops_trigonometric.dispatch.cpp simd_sincos_f32): kernels spell them kiln_np_<name>f too,
# defined as ports of NumPy's code (cpp_support.cpp, cpp_prelude.h; glibc's elsewhere)
NUMPY_OWN_F32 = ("exp", "log", "sin", "cos")


@functools.lru_cache(maxsize=None)
def numpy_own_f32_loops() -> bool:
    """Whether NumPy's float32 exp, log, sin and cos (:data:`NUMPY_OWN_F32`) take its own
    vector loops in this process: its dispatch chose the X86_V4 or X86_V3 target (AVX512F,
    or AVX2 with FMA3), which the CPU has and NPY_DISABLE_CPU_FEATURES did not turn off.
    Where they take NumPy's scalar loops (npy_expf: glibc's), so do kernels."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:   # NumPy 1.x: kernels keep glibc's
        return False
    features = getattr(umath, "__cpu_features__", {})
    if "X86_V3" in features:   # NumPy 2.4+: its x86 targets are the microarchitecture levels
        return bool(features.get("X86_V4") or features.get("X86_V3"))
    return bool(features.get("AVX512F") or (features.get("AVX2") and features.get("FMA3")))


# Flags that build AVX-512 code on a CPU that has it (the prelude declares the SVML names
# only then: ``#ifdef __AVX512F__``). -march=native is kiln's default.
_AVX512 = re.compile(r"-march=(native|x86-64-v4|skylake-avx512|cascadelake|cooperlake|icelake\S*|tigerlake|"
                     r"sapphirerapids|emeraldrapids|graniterapids\S*|rocketlake|znver[45])$|-mavx512f$")


def kernels_call_svml(cxx_flags: str) -> bool:
    """Whether kernels built with ``cxx_flags`` call NumPy's SVML functions (and so raise
    the floating-point flags NumPy's loops raise, no others)."""
    words = cxx_flags.split()
    on = False
    for w in words:   # the last of -march/-mavx512f/-mno-avx512f wins, as in GCC
        on = True if _AVX512.match(w) else False if w == "-mno-avx512f" or w.startswith("-march=") else on
    return on and numpy_uses_svml()

