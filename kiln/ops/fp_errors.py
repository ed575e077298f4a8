"""Which floating-point RuntimeWarnings NumPy gives for an op, and under which name.

Under NumPy's default error mode a ufunc that sets the CPU's divide-by-zero, overflow or
invalid flag warns "divide by zero encountered in log" (the kind's text, then the ufunc's
name; "reduce", "accumulate" and "cast" for np.add.reduce, np.cumsum and astype). A
compiled kernel reports the flags its threads raised (kiln/runtime/fpwarn.py); this
module says which of a kernel's graph nodes could have raised each one:

    >>> fp_kinds("log", "f", ())
    (5, 'log')
    >>> fp_kinds("multiply", "f", (0.5,))   # by a finite constant under 1: no overflow
    (0, 'multiply')
    >>> fp_kinds("maximum", "f", ())         # never warns
    (0, 'maximum')
    >>> fp_kinds("var", "f", ()) is None     # not known here: nothing may be said
    True
"""
from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

DIVIDE, OVER, INVALID = 1, 2, 4   # the bits kernels report (cpp_prelude.h kiln_fp_take)
# NumPy's 0 / 0, the CPU's default NaN (x86: its sign bit set): what a mean of nothing is.
# Where kiln gives that NaN without the division (no flag, so no "invalid value" warning
# NumPy does not give), it is this one, bit for bit.
with np.errstate(invalid="ignore"):
    ZERO_BY_ZERO = float(np.float64(0.0) / np.float64(0.0))
ALL = DIVIDE | OVER | INVALID
# NumPy's order within one ufunc call (npy_fpe: divide, over, under, invalid) and texts
KINDS = ((DIVIDE, "divide", "divide by zero"), (OVER, "over", "overflow"),
         (INVALID, "invalid", "invalid value"))

_D, _O, _I = DIVIDE, OVER, INVALID
# float loops: the kinds NumPy's loop can warn about
_FLOAT: dict[str, int] = {
    "add": _O | _I, "subtract": _O | _I, "multiply": _O | _I, "true_divide": _D | _O | _I,
    "floor_divide": _D | _O | _I, "remainder": _I, "fmod": _I, "divmod": _D | _O | _I,
    "power": _D | _O | _I,
    "float_power": _D | _O | _I, "square": _O, "reciprocal": _D | _O,
    "log": _D | _I, "log2": _D | _I, "log10": _D | _I, "log1p": _D | _I,
    "sqrt": _I, "exp": _O, "exp2": _O, "expm1": _O, "sinh": _O, "cosh": _O,
    "arcsin": _I, "arccos": _I, "arccosh": _I, "arctanh": _D | _I,
    "sin": _I, "cos": _I, "tan": _I, "rad2deg": _O, "degrees": _O, "hypot": _O,
    "logaddexp": _I,   # (a NaN operand: its loop's ordered compare, x - y > 0, signals)
    # reductions and scans: NumPy names the ufunc method
    "sum": _O | _I, "prod": _O | _I, "mean": _O | _I, "cumsum": _O | _I, "cumprod": _O | _I,
    "selected_sum": _O | _I,   # x[m].sum(): np.add.reduce of the selection
    "outer": _O | _I,   # np.outer(a, b): NumPy's np.multiply of a column and a row
}
# integer loops (kernels raise the divide flag themselves: cpp_prelude.h); only signed
# MIN // -1 overflows
_INT: dict[str, int] = {"floor_divide": _D | _O, "remainder": _D, "fmod": _D, "divmod": _D | _O}
_METHOD = {"sum": "reduce", "selected_sum": "reduce", "prod": "reduce", "mean": "reduce", "cumsum": "accumulate",
           "cumprod": "accumulate", "astype": "cast", "index_put": "cast", "outer": "multiply"}
# Ops that cast an input to their result's dtype, which warns as NumPy's cast does
# ("overflow encountered in cast": 1e300 into float32): astype's x, and the value
# ``x[index] = value`` writes (index_put; NumPy's write casts it so)
CAST_INPUT = {"astype": 0, "index_put": 2}
# ops that never warn, whatever their dtypes (views, copies, selections, comparisons,
# NaN-quiet min/max, rounding, predicates)
# complex loops whose kernel code (cpp_prelude.h kiln_cadd ... kiln_cdiv: NumPy's formulas;
# kiln_cexp: libm's cexp, which NumPy's npy_cexp is) raises the flags NumPy's loop does:
# the kinds it can warn about
_COMPLEX: dict[str, int] = {"add": _O | _I, "subtract": _O | _I, "multiply": _O | _I, "square": _O | _I,
                            "true_divide": _D | _O | _I, "exp": _O | _I}
# of those, NumPy's complex scalar math whose formulas are its loops' (scalarmath.c.src:
# part by part; Smith's division, whose ordered compare of a NaN divisor part raises
# "invalid": ``2**40 / np.complex128(nan+0j)``, "invalid value encountered in scalar
# divide"); not its multiply, which fuses no product as the kernels' kiln_cmul may
_COMPLEX_SCALAR = frozenset({"add", "subtract", "true_divide"})
# complex loops whose kernel code is the libm function NumPy's loop calls, so the flags it
# raises for NaN operands are NumPy's too (cexp(1 + NaN j) raises "invalid", cexp(inf +
# NaN j) does not): NaN-quiet in the sense of NAN_QUIET (lowering/fp_flags.py nan_quiet)
COMPLEX_LIBM = frozenset({"exp"})

_SILENT = frozenset("""
    negative positive absolute fabs sign floor ceil trunc rint conjugate isnan isinf isfinite
    signbit invert logical_not logical_and logical_or logical_xor bitwise_and bitwise_or
    bitwise_xor left_shift right_shift maximum minimum fmax fmin clip where copysign heaviside
    equal not_equal less less_equal greater greater_equal tanh arctan arcsinh arctan2
    cbrt deg2rad radians spacing nextafter max min ptp any all argmax argmin angle
    flatten copy ascontiguousarray copy_into broadcast_to broadcast_arrays_view reshape ravel transpose swapaxes
    moveaxis expand_dims squeeze flip getitem real imag diagonal concatenate stack repeat tile
    zeros ones empty full zeros_like ones_like empty_like full_like arange eye triu tril
    filled index take take_along_axis setitem copyto fill put place
""".split())

# ops whose kernel code raises no flag for a quiet NaN operand: IEEE 754's basic operations
# (+ - * / sqrt, which signal only for a signalling NaN), sign-bit operations (negative,
# fabs), == and != and isnan (quiet predicates), selects, sums, copies and views. Not here:
# libm's functions (glibc's scalar log1p raises invalid for a NaN, its vector one does
# not: which one runs depends on the loop's tail), power, ordered comparisons, min/max,
# clip, casts to integers. A kernel made of these ops alone reads NaNs silently, so a flag
# it raises is its ops' own (lowering/fp_flags.py nan_quiet).
NAN_QUIET = frozenset("""
    add subtract multiply true_divide square reciprocal negative positive absolute fabs sqrt
    sum prod mean cumsum cumprod copy copy_into broadcast_to reshape ravel transpose getitem
    flatten where isnan equal not_equal any all logical_not logical_and logical_or
""".split())


# Where NumPy's loop raises each kind, as a predicate on the loop's operands and result
# (IEEE 754's rules, which these loops follow; tests/runtime/test_fp_owner_predicates.py
# checks every op here against NumPy's warnings over edge values, float32 and float64):
# overflow and divide by zero give an infinite result of finite operands (a zero
# divisor, or power's zero base, tells divide from overflow), invalid a NaN result of
# operands that are no NaN. A kernel in which several ops may raise one kind computes
# these (lowering/fp_flags.py, runtime/fpwarn.py). Not here: floor_divide (1e308 // 1e-10
# is inf, and NumPy warns invalid too: :func:`_divmod_raises_where`), reductions (:data:`REDUCES`), casts to
# integers, the int loops.
# One gap: power's overflow of an infinite exponent (np.power(1e300, inf) warns, 2.0 **
# inf does not: where is libm's business) is never said.
_RAISES = frozenset("""
    add subtract multiply true_divide power float_power square reciprocal log log2 log10
    log1p sqrt exp exp2 expm1 sinh cosh arcsin arccos arccosh arctanh sin cos tan rad2deg
    degrees fmod remainder astype hypot logaddexp
""".split())
# Ops of several NumPy steps whose kernel code cannot say which step raised a flag (var:
# NumPy's add.reduce, subtract, square, add.reduce; "overflow encountered in square" of
# 1e300, "invalid value encountered in reduce" of inf - inf). Where such an op reads a
# whole argument of its kernel, a launch that raises a flag runs NumPy's op on it and
# gives the warnings NumPy's gives (runtime/fpwarn.py ``numpy_tells``): a second
# computation only when a flag is raised.
# (the names of the steps in its warnings: ``warnings.simplefilter("ignore")`` or a
# filter per message that drops them all spares that computation)
NUMPY_TELLS = {"var": ("reduce", "subtract", "square", "divide"),
               "std": ("reduce", "subtract", "square", "divide"),
               # (np.linalg.norm over an axis: multiply x * x, add.reduce; the kernel's
               # decomposition, ops/norms.py, raises each one's overflow)
               "vector_norm": ("multiply", "reduce")}
# Of those, the ops that read their input twice (var's two passes), so that a costly
# computed input stored for NumPy's op to read pays for itself (lowering/realize_early.py
# ``_store_told_input``); stored for vector_norm's one pass, np.linalg.norm(np.log(y),
# axis=0) on 1e6 float64 took 1.12 ms against 0.93.
STORES_TOLD_INPUT = frozenset({"var", "std"})
# Ops whose "invalid" a kernel that reads a NaN still tells, by the op's predicate, where
# it is the kernel's one op that may raise it (lowering/fp_flags.py fp_table): a NaN read
# by a comparison or by the op raises the flag, so the runtime drops it unless a predicate
# tells (runtime/fpwarn.py), and every launch on data with a NaN then runs the body with
# the predicates again: ~2x the time of x // y on 1M float64 holding a NaN, ~7x that of
# np.log(x) + (x > 0.5). So the division loops' (np.divmod, //, %, np.fmod: 0 // 0 beside
# a NaN), not yet log's or sqrt's (their invalid beside a NaN stays silent).
TOLD_BESIDE_NAN = frozenset({"floor_divide", "remainder", "fmod", "divmod"})
_ZERO_DIVISOR = {"true_divide": 1, "reciprocal": 0, "power": 0, "float_power": 0}
# float loops whose "invalid" is raised by any NaN operand: an ordered comparison of it
# (npy_logaddexp's x - y > 0, after a quiet x == y)
_NAN_SIGNALS = frozenset({"logaddexp"})


@functools.lru_cache(maxsize=None)
def _zero_to_minus_inf_divides(dtype: Any) -> bool:
    """Does NumPy's ``power`` loop for float ``dtype`` warn "divide by zero" for
    ``0.0 ** -inf``? Which loop runs depends on the CPU NumPy dispatches to: its AVX512_SKX
    loop (SVML's pow) raises the flag, glibc's pow (the AVX2 and baseline loops: an AMD EPYC
    without AVX-512) does not. So NumPy is asked, once per dtype, on a contiguous run of
    the length its vector loops take. (np.float_power's 0.0 ** -inf never warns.)"""
    base = np.zeros(16, dtype)
    with np.errstate(all="ignore", divide="raise"):
        try:
            np.power(base, np.full(16, -np.inf, dtype))
        except FloatingPointError:
            return True
    return False


def _int_raises_where(op: str, bit: int) -> Any:
    """:func:`raises_where` of NumPy's integer loops: a zero divisor divides by zero
    (floor_divide, remainder, fmod, divmod), MIN // -1 overflows (signed floor_divide
    and divmod)."""
    if not _INT.get(op, 0) & bit:
        return None

    def where(ops: Any, result: tuple, operands: list) -> Any:
        (x, xdt), (y, ydt) = operands
        zero = ops.call("equal", [y, ops.constant(0 if bit == DIVIDE else -1, ydt)], ydt, np.bool_)
        if bit == DIVIDE:
            return zero
        least = ops.call("equal", [x, ops.constant(np.iinfo(xdt).min, xdt)], xdt, np.bool_)
        return ops.call("logical_and", [least, zero], np.bool_)
    return where


# The kinds the code of result i of a float ufunc call with two results raises exactly
# where NumPy's one call warns, the other result's code not computed: np.divmod's loop
# takes fmod(a, b), then (a - mod) / b, floored, so the call also warns "invalid" for
# fmod(a, 0) and fmod(inf, b) (the remainder's) and for inf - floor(inf) when the
# quotient overflows (the quotient's): the quotient's code alone is exact for its division
# by zero and overflow, the remainder's for nothing. Both codes together raise what the
# call does (lowering/fp_flags.py).
_PART_EXACT = {("divmod", 0): DIVIDE | OVER, ("divmod", 1): 0}


def part_exact(ufunc: str, i: int, kind: str) -> int:
    """:data:`_PART_EXACT` of result ``i`` of ``ufunc`` in its float loop (``kind`` 'f');
    every kind otherwise."""
    return _PART_EXACT.get((ufunc, i), ALL) if kind == "f" else ALL


def _divmod_raises_where(bit: int, quotient: bool = False) -> Any:
    """:func:`raises_where` of np.divmod's float loop (either result: the call's kinds);
    ``quotient``: np.floor_divide's, the same but for a zero divisor (inf // 0 is silent,
    0 // 0 invalid, and no remainder is taken)."""
    def where(ops: Any, result: tuple, operands: list) -> Any:
        (a, adt), (b, bdt) = operands

        def both(*conds: Any) -> Any:
            cond = conds[0]
            for c in conds[1:]:
                cond = ops.call("logical_and", [cond, c], np.bool_)
            return cond
        zero = ops.call("equal", [b, ops.constant(0, bdt)], bdt, np.bool_)
        finite_a = ops.call("isfinite", [a], adt, np.bool_)
        if bit == DIVIDE:   # a / 0 of a finite nonzero a
            return both(zero, finite_a, ops.call("not_equal", [a, ops.constant(0, adt)], adt, np.bool_))
        q_inf = ops.call("isinf", [ops.call("floor_divide", [a, b], adt)], adt, np.bool_)
        if bit == OVER:     # (a - mod) / b past the largest float, of finite a and b
            return both(q_inf, finite_a, ops.call("isfinite", [b], bdt, np.bool_),
                        ops.call("logical_not", [zero], np.bool_))
        # fmod(a, 0), fmod(inf, b), inf - floor(inf), of no NaN
        made = ops.call("logical_or", [ops.call("isinf", [a], adt, np.bool_), q_inf], np.bool_)
        if quotient:   # 0 // 0, or inf // b and the overflows of a nonzero b
            made = ops.call("logical_or", [
                both(zero, ops.call("equal", [a, ops.constant(0, adt)], adt, np.bool_)),
                both(ops.call("logical_not", [zero], np.bool_), made)], np.bool_)
        else:
            made = ops.call("logical_or", [zero, made], np.bool_)
        return both(made, ops.call("equal", [a, a], adt, np.bool_), ops.call("equal", [b, b], bdt, np.bool_))
    return where


# Reductions whose NumPy loop (np.add.reduce, np.multiply.reduce; a mean's sum) raises
# overflow where a partial sum or product of finite terms leaves the finite numbers, and
# invalid where one makes a NaN of terms that are no NaN (inf + -inf, inf * 0). Their
# predicate is of the result and of whether a term spoiled it, an infinity or NaN for
# overflow, a NaN for invalid: the told body's term accumulators (lowering/cpp_stages.py,
# cpp_prelude.h ``kiln_fp_spoils``).
REDUCES = frozenset({"sum", "prod", "mean", "selected_sum"})


def _cast_raises_where(to: Any) -> Any:
    """:func:`raises_where` of a float-to-integer cast's "invalid": NumPy's cast converts
    with x86's truncating conversion of 32 bits (to int8 through int32, uint16) or 64 bits
    (int64; uint64 as int64 below 2**63, as int64 of x - 2**63 above), which raises it for
    a NaN or a value that truncates out of the conversion's range (300.0 to int8 wraps to
    44 silently, 1e10 warns). uint32: NumPy's result and warning for values in [2**31,
    2**64) and below -2**31 depend on its SIMD path (the array's length); it warns for NaN,
    infinities and values out of uint64's range whatever the path, and so does the
    kernel (not for those others)."""
    to = np.dtype(to)
    if to.kind not in "iu":
        return None
    # [lo, hi) of the conversion, in float64 (exact for float16/32 operands): above
    # -2**31 - 1 (values in between truncate to -2**31), at least -2**63 (no float64 lies
    # between -2**63 - 1 and -2**63)
    lo, hi = (-2.0 ** 63, 2.0 ** 64) if to.kind == "u" and to.itemsize >= 4 else \
        (-2.0 ** 63, 2.0 ** 63) if to.itemsize == 8 else (-2.0 ** 31 - 1, 2.0 ** 31)
    f64 = np.dtype(np.float64)

    def where(ops: Any, result: tuple, operands: list) -> Any:
        (x, xdt), = operands
        x = ops.cast(x, xdt, f64)
        above = ops.call("greater_equal" if lo == -2.0 ** 63 else "greater", [x, ops.constant(lo, f64)],
                         f64, np.bool_)
        inside = ops.call("logical_and", [above, ops.call("less", [x, ops.constant(hi, f64)], f64, np.bool_)],
                          np.bool_)
        return ops.call("logical_not", [inside], np.bool_)   # (NaN: no comparison holds)
    return where


def raises_where(op: str, bit: int, kind: str = "f", to: Any = None) -> Any:
    """``fn(ops, result, operands)``: a bool value, built with an ops handler
    (lowering/handler.py), true where NumPy's loop of ``op`` raises kind ``bit``; None
    where that is not known. ``kind``: the loop's ('f' float, 'i' or 'u' integer, of
    which only the loops that divide raise). ``operands`` are (value, dtype) in the
    loop's dtype, ``result`` (value, dtype) NumPy's result; ``to`` its dtype, for a cast.

    >>> raises_where("log", DIVIDE) is not None, raises_where("log", OVER), raises_where("tanh", OVER)
    (True, None, None)
    >>> raises_where("remainder", DIVIDE, "i") is not None, raises_where("remainder", OVER, "i")
    (True, None)
    """
    if kind in ("i", "u"):
        return _int_raises_where(op, bit) if kind == "i" or bit != OVER else None
    if kind == "c":
        from .fp_predicates import complex_raises_where
        return complex_raises_where(op, bit)
    if op == "astype" and to is not None and np.dtype(to).kind in "iu":
        return _cast_raises_where(to) if bit == INVALID else None
    if op in ("divmod", "floor_divide"):
        return _divmod_raises_where(bit, quotient=op == "floor_divide")
    if op in REDUCES:
        from .fp_predicates import reduce_raises_where
        return reduce_raises_where(bit)
    if op not in _RAISES or not _FLOAT.get(op, OVER) & bit:
        return None

    def where(ops: Any, result: tuple, operands: list) -> Any:
        # (few tests: a kernel computes them at every point)
        r, rdt = result
        floats = [(v, dt) for v, dt in operands if np.dtype(dt).kind == "f"]
        if op in _NAN_SIGNALS:   # a NaN operand (its result is then NaN too)
            return ops.call("not_equal", [r, r], rdt, np.bool_)
        if bit == INVALID:   # a NaN made of no NaN
            cond = ops.call("not_equal", [r, r], rdt, np.bool_)
            for v, dt in floats:
                cond = ops.call("logical_and", [cond, ops.call("equal", [v, v], dt, np.bool_)], np.bool_)
            return cond
        # an infinity made of finite operands (a NaN operand makes a NaN, so of these ops
        # only hypot(nan, inf) is infinite with one, and inf is no finite operand)
        cond = _isinf(ops, r, rdt)
        at = _ZERO_DIVISOR.get(op)
        # (power's zero base to any power under 0, -inf too, is a division by zero; a
        # complex operand: a cast to complex64)
        finite = floats + [(v, dt) for v, dt in operands if np.dtype(dt).kind == "c"]
        minus_inf_divides = bit == DIVIDE and op == "power" and _zero_to_minus_inf_divides(np.dtype(rdt))
        for v, dt in finite[:1] if minus_inf_divides else finite:
            cond = ops.call("logical_and", [cond, ops.call("logical_not", [_isinf(ops, v, dt)], np.bool_)],
                            np.bool_)
        if at is not None and at < len(operands):
            v, dt = operands[at]
            zero = ops.call("equal" if bit == DIVIDE else "not_equal", [v, ops.constant(0, dt)], dt, np.bool_)
            cond = ops.call("logical_and", [cond, zero], np.bool_)
        return cond
    return where


def _isinf(ops: Any, v: Any, dt: Any) -> Any:
    """``np.isinf(v)``, of a complex value: either part infinite (an overflow of a cast to
    complex64 makes one of them so)."""
    dt = np.dtype(dt)
    if dt.kind != "c":
        return ops.call("isinf", [v], dt, np.bool_)
    part = np.dtype(dt.char.lower())
    return ops.call("logical_or", [ops.call("isinf", [ops.call(p, [v], dt, part)], part, np.bool_)
                                   for p in ("real", "imag")], np.bool_)


# Flags a compiled kernel's code for an op raises where NumPy's loop raises none, or
# misses. Kernels call glibc's vector math (libmvec; kiln's own exp for float64), NumPy
# its own loops or libm's scalar functions, and the flags differ: "overflow" for huge
# operands (sin, cos, tan, arcsin, arccos, arctan, arcsinh, arccosh, arctanh of +-1e300;
# cosh(710.0), which is finite; exp of -1e308), "invalid" for infinite ones (tanh(-inf),
# exp2(-inf), expm1(-inf), log1p(inf), arccosh(1.0)) and for hypot(0, 0), and pow misses
# pow(0, -inf)'s division by zero (AVX2 and AVX-512 variants, tails included: that one a
# kernel may still miss, lowering/cpp_fp.py). Where such
# an op may raise a kind, the kernel tells that kind only by its ops' predicates
# (lowering/fp_flags.py; this table is checked by tests/runtime/test_fp_owner_predicates.py).
# (log, log2 and log10 raise "invalid" for a NaN operand alone: a NaN that came in is
# screened for, and one made in the kernel came from an op that raised it.)
_KERNEL_NOISE = {**{op: OVER | INVALID for op in """
    exp exp2 expm1 log1p cbrt sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh
    arccosh arctanh arctan2 hypot logaddexp""".split()}, "power": ALL, "float_power": ALL,
    "power_scalar_exponent": ALL}   # (power's scalar function for a zero-stride exponent)


def exact_kinds(entry: tuple) -> int:
    """The kinds whose flag an entry's op raises exactly where NumPy warns (an entry of
    kiln/lowering/fp_flags.py; its fifth field, a mask of kinds: an op whose kernel code
    raises some kind NumPy's loop does not (kernel_noise) stays exact for its other kinds;
    True/False in wrappers cached before it was a mask)."""
    exact = entry[4]
    return ALL if exact is True else 0 if exact is False else exact


# Signed integer loops whose kernel code may raise a kind NumPy's loop would not: a
# division by a divisor the same at every point (a constant, a run-time Python int) raises
# "overflow" once, before its loop, where that divisor is -1 (cpp_prelude.h
# kiln_divisor32/64; in the loop a flag write stops GCC vectorizing), whether or not MIN is
# among the dividends: the op's predicate (MIN by -1) tells.
_INT_NOISE = {"floor_divide": OVER, "divmod": OVER}


def kernel_noise(op: str, kind: str = "f") -> int:
    """The kinds the kernel code of ``op`` in its ``kind`` loop ('f', or 'i' signed
    integer) may raise that NumPy's loop would not.

    >>> kernel_noise("hypot") == OVER | INVALID, kernel_noise("log"), kernel_noise("floor_divide", "i")
    (True, 0, 2)
    """
    return _INT_NOISE.get(op, 0) if kind == "i" else _KERNEL_NOISE.get(op, 0) if kind == "f" else 0


def ufunc_name(op: str) -> str:
    """NumPy's name for op ``op`` in its warnings (``true_divide`` is np.divide)."""
    from .pointwise import BINARY, UNARY
    if op in _METHOD:
        return _METHOD[op]
    entry = UNARY.get(op) or BINARY.get(op)
    return entry[0].__name__ if entry else op


class Bounded(float):
    """An operand that is no constant but finite and at most this large (a bool or integer
    array: ``x + (x > 0)`` is never inf - inf)."""


def _constant(value: Any) -> float | None:
    if isinstance(value, (bool, np.bool_, np.complexfloating)) or \
            not isinstance(value, (int, float, np.number)):
        return None   # (a complex constant is no bound: float() would drop its imaginary part)
    try:
        return float(value)
    except (OverflowError, TypeError):
        return None


def _by_constant(op: str, kinds: int, consts: tuple) -> int:
    """``kinds`` of a binary op narrowed by a constant operand: ``x + 1.0`` cannot overflow
    (1.0 is under half an ulp of the largest double) nor be inf - inf; ``x * 0.5`` neither;
    ``x / 2`` cannot divide by zero nor overflow; ``x ** 2.0`` is never invalid. A
    bounded operand (an integer array's values) with a constant: ``ints / 100`` and
    ``ints * 0.5`` raise nothing."""
    bounded = [c for _, c in consts if isinstance(c, Bounded)]
    if len(consts) == 2 and len(bounded) == 1:
        (pos, c), = [(p, c) for p, c in consts if not isinstance(c, Bounded)]
        b = bounded[0]
        if c is None or not math.isfinite(c):
            return kinds
        if op in ("add", "subtract", "multiply"):
            return kinds & ~INVALID & (~OVER if b * max(abs(c), 1.0) + abs(c) < 2.0 ** 1000 else ALL)
        if op == "true_divide" and pos == 1 and c != 0:
            return kinds & ~DIVIDE & ~INVALID & (~OVER if b / abs(c) < 2.0 ** 1000 else ALL)
        return kinds
    if len(consts) != 1 or consts[0][1] is None or not math.isfinite(consts[0][1]):
        return kinds
    pos, c = consts[0]
    if op in ("add", "subtract"):
        return kinds & ~INVALID & (ALL if abs(c) >= 2.0 ** 960 else ~OVER)
    if isinstance(c, Bounded):
        return kinds
    if op == "multiply" and c != 0:
        return kinds & ~INVALID & (ALL if abs(c) > 1 else ~OVER)
    if op == "true_divide" and pos == 1 and c != 0:
        return kinds & ~DIVIDE & ~INVALID & (ALL if abs(c) < 1 else ~OVER)
    if op == "power" and pos == 1:
        if c >= 0:
            kinds &= ~DIVIDE
        if c == int(c):
            kinds &= ~INVALID
        if 0 <= c <= 1:
            kinds &= ~OVER
    return kinds


def fp_kinds(op: str, kind: str, args: tuple, out_kind: str | None = None,
             narrows: bool = True, scalar: bool = False) -> tuple[int, str] | None:
    """``(kinds, name)``: the floating-point warnings NumPy's ``op`` may give on operands
    whose dtype kind is ``kind`` ('f', 'i', 'u', 'b', 'c'; the float one where any is a
    float), ``args`` its operands (numbers where they are constants, :class:`Bounded`
    where only a bound is known, else None); ``out_kind`` the
    result's dtype kind and ``narrows`` whether it is smaller (for casts: float64 to
    float32 may overflow, float32 to float64 never); ``scalar``: NumPy's scalar math
    (``np.float64(1e308) * 10``: "overflow encountered in scalar multiply"; its integer
    overflow raises no flag in a kernel, so it is not claimed: scalar_math.py's
    scalar_int_check warns for it). None: not known, so nothing may be said about a
    kernel that computes it."""
    name = ("scalar " if scalar else "") + ufunc_name(op)
    if scalar and kind != "f" and not (kind == "c" and op in _COMPLEX_SCALAR):
        return None
    if op in _SILENT or kind == "b":
        return 0, name
    if op in CAST_INPUT:
        if kind == "f" and out_kind in "iu":
            return INVALID, name
        # (a complex cast narrows its parts: float64 to complex64 overflows as to float32)
        return (OVER if kind in "fc" and out_kind in "fc" and narrows else 0), name
    if kind in "iu":
        kinds = _INT.get(op, 0) & (ALL if kind == "i" else ~OVER)
        divisor = _constant(args[1]) if kinds and len(args) == 2 else None
        if divisor is not None and divisor != 0 and not isinstance(args[1], Bounded):
            # x // 7, x % 7: no division by zero; only MIN // -1 overflows
            kinds = OVER if op in ("floor_divide", "divmod") and divisor == -1 else 0
        return kinds, name
    if kind == "c":
        kinds = _complex_kinds(op, args)
        return None if kinds is None else (kinds, name)
    if kind != "f":
        return None
    if op not in _FLOAT:
        return None
    consts = tuple((i, a if isinstance(a, Bounded) else _constant(a)) for i, a in enumerate(args)
                   if _constant(a) is not None)
    return _by_constant(op, _FLOAT[op], consts), name


def _complex_kinds(op: str, args: tuple) -> int | None:
    """The kinds NumPy's complex loop of ``op`` may warn about (None: not known). Its add
    and subtract are the float ones part by part, so a constant narrows them as each of
    its parts does a float's; a product mixes the parts (``(inf + 0j) * 2``'s imaginary part is
    ``inf * 0``: "invalid value encountered in multiply"), so no constant narrows it."""
    if op not in _COMPLEX:
        return None
    consts = [(i, a) for i, a in enumerate(args) if isinstance(a, (complex, np.complexfloating))
              or _constant(a) is not None and not isinstance(a, Bounded)]
    if op not in ("add", "subtract") or len(consts) != 1:
        return _COMPLEX[op]
    (i, c), = consts   # (x + 0j: each part's add narrowed by its part of the constant)
    return _by_constant(op, _COMPLEX[op], ((i, _constant(complex(c).real)),)) | \
        _by_constant(op, _COMPLEX[op], ((i, _constant(complex(c).imag)),))


def may_warn(op: str, operand_kinds: tuple, args: tuple, out_kind: str | None,
             elementwise: bool) -> bool:
    """May NumPy's call of ``op`` give a floating-point RuntimeWarning ("divide by zero
    encountered in log") under its default error mode? ``operand_kinds`` the dtype kinds
    of its array operands, ``args`` its operands as :func:`fp_kinds` takes them,
    ``out_kind`` its result's; ``elementwise``: a ufunc loop, reduction or scan, which
    may warn for a float or complex operand where this table does not know the op
    (``np.log`` of a complex zero). Such a call stays in the graph when its value is
    unused (kiln/ir/passes.py ``must_stay``): NumPy computes it, and warns. A cast of
    complex values to a real dtype other than bool warns too (a ComplexWarning).

    >>> may_warn("log", ("f",), (None,), "f", True), may_warn("negative", ("f",), (None,), "f", True)
    (True, False)
    >>> may_warn("multiply", ("f",), (None, 0.5), "f", True)   # overflows for 1e308 * 2, not * 0.5
    False
    """
    if op == "astype" and operand_kinds[:1] == ("c",) and out_kind in ("f", "i", "u"):
        return True   # (NumPy's ComplexWarning: "Casting complex values to real discards ...")
    kinds = tuple(k for k in operand_kinds if k) + ((out_kind,) if out_kind else ())
    kind = operand_kinds[0] if op == "astype" and operand_kinds else \
        "f" if "f" in kinds else (out_kind or "?")
    known = fp_kinds(op, kind or "?", args, out_kind) if op else None
    if known is None:
        return elementwise and any(k in "fc" for k in kinds)
    return bool(known[0])


# Ops that compute the NumPy ufunc their ``ufunc`` param names (its masked form, its
# Python-scalar form).
BY_UFUNC_PARAM = frozenset({"masked_unary", "masked_binary", "scalar_binary"})


def numpy_name(op_name: str, kwargs: dict, part: tuple | None = None) -> str:
    """The name NumPy computes a call by, as this table knows ops: the ufunc whose one call
    gives it (``part``, a node's ``meta["ufunc"]``: np.divmod's quotient and remainder are
    "divmod"), else the ufunc an op of :data:`BY_UFUNC_PARAM` computes, else the op's own."""
    name = part[0] if part else op_name
    if name in BY_UFUNC_PARAM:
        name = kwargs.get("ufunc") or ""
    return name if isinstance(name, str) else getattr(name, "__name__", "")


# ops whose run-time code reads NumPy's error mode itself (ops/scalar_math.py,
# python_numbers.py), so an errstate around them must be NumPy's real one
_READS_MODE = ("scalar_binary", "scalar_int_check", "python_")


def reads_error_mode(op: Any) -> bool:
    """Whether ``op``'s run-time code asks NumPy's error mode as it runs (its warnings
    follow the mode in effect then, not a with block capture recorded): NumPy scalar
    math, Python numbers' checks, and any op with a ``check_impl``."""
    return op.name.startswith(_READS_MODE) or op.check_impl is not None
