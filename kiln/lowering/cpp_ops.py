"""C++ syntax of the ops handler: C types, literals, one table from scalar function to C,
and :class:`CppEmitter`, the handler that writes a loop body's statements.

Templates are per dtype kind of the loop ('f' float, 'i' signed, 'u' unsigned, 'b' bool,
'*' any). Placeholders: {x} {y} {z} (the operands, already cast to the loop dtype), {f}
('f' for float32 libm names, '' for float64), {T} (the C type of the loop). Helpers named
kiln_* live in kiln/codegen_templates/cpp_prelude.h and reproduce NumPy's integer division
by zero, floor division/remainder signs and shift overflow. Which loops an op lowers for,
and what a constant operand changes (``x ** 2`` multiplies), is the op's business
(kiln/ops/pointwise.py); this table is only how C++ spells each function.
"""
from __future__ import annotations

import functools
import math
import re
from typing import Any, Callable, Sequence

import numpy as np

from .handler import OpsHandler
from .loop_ir import Affine, Buffer
from .svml import NUMPY_OWN_F32, SVML, kernels_call_svml, numpy_scalar_libm

CTYPES = {"bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
          "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
          "uint64": "uint64_t", "float32": "float", "float64": "double",
          "complex64": "kiln_c64", "complex128": "kiln_c128"}


def ctype(dtype: Any) -> str:
    return CTYPES[np.dtype(dtype).name]


def literal(value: Any, dtype: Any) -> str:
    """An exact C literal of ``value`` converted to ``dtype`` (as NumPy converts it)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return "true" if bool(value) else "false"
    if dt.kind == "c":
        z = complex(np.asarray(value).astype(dt))
        part = np.float32 if dt == np.complex64 else np.float64
        return f"{ctype(dt)}{{{literal(z.real, part)}, {literal(z.imag, part)}}}"
    if dt.kind in "iu":
        v = int(np.asarray(value).astype(dt))
        if dt.kind == "i" and v == -(1 << 63):
            return "((int64_t)(-9223372036854775807LL - 1))"   # typed like every other literal
        return f"({ctype(dt)}){v}{'ULL' if dt.kind == 'u' else 'LL'}"
    with np.errstate(over="ignore"):   # (NumPy's "overflow in cast" is the wrapper's, per call)
        v = float(np.asarray(value, dtype=dt)) if not isinstance(value, float) or dt != np.float64 \
            else value
    suffix = "f" if dt == np.float32 else ""
    if math.isnan(v):
        return f"__builtin_nan{suffix}(\"\")" if not math.copysign(1, v) < 0 else f"-__builtin_nan{suffix}(\"\")"
    if math.isinf(v):
        return f"__builtin_inf{suffix}()" if v > 0 else f"-__builtin_inf{suffix}()"
    if v == int(v) and abs(v) < 2 ** 53:
        text = f"{int(v)}.0" if not (v == 0 and math.copysign(1, v) < 0) else "-0.0"
        return text + suffix
    # The shortest decimal that reads back as the same value in this dtype (C parses it
    # correctly rounded, as NumPy prints it): 0.1f, 1e-08, 0.30000000000000004.
    text = str(np.float32(v)) if dt == np.float32 else repr(v)
    if "." not in text and "e" not in text:
        text += ".0"
    return text + suffix


def _libm(name: str) -> dict:
    return {"f": f"{name}{{f}}({{x}})"}


SYNTAX: dict[str, dict[str, str]] = {
    # unary
    "negative": {"*": "-{x}"}, "positive": {"*": "{x}"}, "conjugate": {"*": "{x}"},
    "absolute": {"f": "__builtin_fabs{f}({x})", "i": "({x} < 0 ? -{x} : {x})", "u": "{x}", "b": "{x}"},
    "sign": {"f": "({x} > 0 ? ({T})1 : ({x} < 0 ? ({T})-1 : ({x} == 0 ? ({T})0 : {x})))",
             "i": "(({x} > 0) - ({x} < 0))", "u": "({x} > 0)"},
    # kiln's own exp (cpp_prelude.h 'exp'): float64 inline, float32 libmvec's expf
    "exp": {"f": "kiln_exp({x})"}, "exp2": _libm("exp2"), "expm1": _libm("expm1"),
    "log": _libm("log"),
    "log2": _libm("log2"), "log10": _libm("log10"), "log1p": _libm("log1p"), "cbrt": _libm("cbrt"),
    "sin": _libm("sin"), "cos": _libm("cos"), "tan": _libm("tan"), "arcsin": _libm("asin"),
    "arccos": _libm("acos"), "arctan": _libm("atan"), "sinh": _libm("sinh"), "cosh": _libm("cosh"),
    "tanh": _libm("tanh"), "arcsinh": _libm("asinh"), "arccosh": _libm("acosh"),
    "arctanh": _libm("atanh"),
    "sqrt": {"f": "__builtin_sqrt{f}({x})"},
    "square": {"f": "{x} * {x}", "i": "{x} * {x}", "u": "{x} * {x}", "b": "{x}"},
    "reciprocal": {"f": "({T})1 / {x}"},
    "floor": {"f": "__builtin_floor{f}({x})", "i": "{x}", "u": "{x}", "b": "{x}"},
    "ceil": {"f": "__builtin_ceil{f}({x})", "i": "{x}", "u": "{x}", "b": "{x}"},
    "trunc": {"f": "__builtin_trunc{f}({x})", "i": "{x}", "u": "{x}", "b": "{x}"},
    "rint": {"f": "__builtin_rint{f}({x})", "i": "{x}", "u": "{x}", "b": "{x}"},
    "logical_not": {"*": "({x} == 0)"},
    "isnan": {"f": "({x} != {x})", "*": "false"},
    "isinf": {"f": "(__builtin_fabs{f}({x}) == __builtin_inf{f}())", "*": "false"},
    "isfinite": {"f": "(__builtin_fabs{f}({x}) < __builtin_inf{f}())", "*": "true"},
    "signbit": {"f": "(__builtin_signbit({x}) != 0)", "i": "({x} < 0)", "u": "false", "b": "false"},
    "invert": {"i": "~{x}", "u": "~{x}", "b": "!{x}"},
    "fabs": {"f": "__builtin_fabs{f}({x})"},
    # NumPy's npy_deg2rad/npy_rad2deg: the constant formed in the loop's own precision
    "deg2rad": {"f": "{x} * (({T})3.141592653589793238462643383279502884 / ({T})180)"},
    "rad2deg": {"f": "{x} * (({T})180 / ({T})3.141592653589793238462643383279502884)"},
    # binary
    "add": {"*": "{x} + {y}", "b": "({x} | {y})"},
    "subtract": {"*": "{x} - {y}"},
    "multiply": {"*": "{x} * {y}", "b": "({x} & {y})"},
    "true_divide": {"f": "{x} / {y}"},
    "floor_divide": {"f": "kiln_floor_divide({x}, {y})", "i": "kiln_floor_divide_int({x}, {y})",
                     "u": "({y} == 0 ? kiln_int_by_zero<{T}>() : {x} / {y})"},
    "remainder": {"f": "kiln_remainder({x}, {y})", "i": "kiln_remainder_int({x}, {y})",
                  "u": "({y} == 0 ? kiln_int_by_zero<{T}>() : {x} % {y})"},
    "fmod": {"f": "kiln_fmod({x}, {y})",   # (the prelude's: NumPy's inline fprem)
             "i": "({y} == 0 ? kiln_int_by_zero<{T}>() : {y} == -1 ? ({T})0 : {x} % {y})",
             "u": "({y} == 0 ? kiln_int_by_zero<{T}>() : {x} % {y})"},
    "power": {"f": "pow{f}({x}, {y})"},
    # a zero-stride exponent: NumPy's fast paths (ops/scalar_paths.py power_runtime_scalar) as
    # branches on the exponent, which GCC takes out of the loop (-funswitch-loops): the
    # copy for a fast exponent computes no pow. Each fast path reads x only where its
    # exponent is the one taken, 1 elsewhere, so the paths GCC computes beside it (selects)
    # raise no flag of their own: (1e200) ** 0.5 computed no overflowing x * x.
    "power_scalar_exponent": {"f": "(({y} == ({T})2) | ({y} == ({T})0.5) | ({y} == ({T})1) | ({y} == ({T})0) "
                                   "| ({y} == ({T})-1) ? ({y} == ({T})2 "
                                   "? ({y} == ({T})2 ? {x} : ({T})1) * ({y} == ({T})2 ? {x} : ({T})1) "
                                   ": {y} == ({T})0.5 ? __builtin_sqrt{f}({y} == ({T})0.5 ? {x} : ({T})1) "
                                   ": {y} == ({T})1 ? {x} : {y} == ({T})0 ? ({T})1 "
                                   ": ({T})1 / ({y} == ({T})-1 ? {x} : ({T})1)) : pow{f}({x}, {y}))"},
    # np.float_power's loop calls libm's pow an element at a time (no SVML, no fast paths)
    "float_power": {"f": "kiln_libm_pow({x}, {y})"},
    # NaN-propagating; on ties (0.0 vs -0.0) the second operand wins, as in NumPy's loops.
    # A NaN comes out as x + y (x's NaN, as NumPy's, when both are): GCC 12 leaves nested
    # ``(x < y || x != x) ? x : y`` selects scalar (a Floyd-Warshall step, 0.6x NumPy).
    "maximum": {"f": "(__builtin_isunordered({x}, {y}) ? {x} + {y} : ({x} > {y} ? {x} : {y}))",
                "*": "({x} >= {y} ? {x} : {y})"},
    "minimum": {"f": "(__builtin_isunordered({x}, {y}) ? {x} + {y} : ({x} < {y} ? {x} : {y}))",
                "*": "({x} <= {y} ? {x} : {y})"},
    "fmax": {"f": "(({x} > {y} || {y} != {y}) ? {x} : {y})", "*": "({x} >= {y} ? {x} : {y})"},
    "fmin": {"f": "(({x} < {y} || {y} != {y}) ? {x} : {y})", "*": "({x} <= {y} ? {x} : {y})"},
    "arctan2": {"f": "atan2{f}({x}, {y})"},
    # glibc's scalar hypot, as NumPy's loop (cpp_prelude.h 'hypot'; libmvec's: 1 ulp off in 4%)
    "hypot": {"f": "kiln_hypot({x}, {y})"},
    "logaddexp": {"f": "kiln_logaddexp({x}, {y})"},
    "copysign": {"f": "__builtin_copysign{f}({x}, {y})"},
    "heaviside": {"f": "({x} != {x} ? {x} : ({x} == 0 ? {y} : ({x} < 0 ? ({T})0 : ({T})1)))"},
    "equal": {"*": "({x} == {y})"}, "not_equal": {"*": "({x} != {y})"},
    "less": {"*": "({x} < {y})"}, "less_equal": {"*": "({x} <= {y})"},
    "greater": {"*": "({x} > {y})"}, "greater_equal": {"*": "({x} >= {y})"},
    # & and |, not && and ||: both sides are computed values, and GCC 12 vectorizes no
    # loop whose bool results come from short-circuit ones mixed with other widths (a
    # game of life step on int8 counts ran at 0.3x NumPy)
    "logical_and": {"*": "(({x} != 0) & ({y} != 0))"},
    "logical_or": {"*": "(({x} != 0) | ({y} != 0))"},
    "logical_xor": {"*": "(({x} != 0) != ({y} != 0))"},
    "bitwise_and": {"i": "({x} & {y})", "u": "({x} & {y})", "b": "({x} & {y})"},
    "bitwise_or": {"i": "({x} | {y})", "u": "({x} | {y})", "b": "({x} | {y})"},
    "bitwise_xor": {"i": "({x} ^ {y})", "u": "({x} ^ {y})", "b": "({x} != {y})"},
    "left_shift": {"i": "kiln_lshift({x}, {y})", "u": "kiln_lshift({x}, {y})"},
    "right_shift": {"i": "kiln_rshift({x}, {y})", "u": "kiln_rshift({x}, {y})"},
    # ternary
    # (kiln_select: a select by bit masks between 8-byte elements; cpp_prelude.h says why)
    "where": {"*": "kiln_select<{T}>({x}, {y}, {z})", "c": "kiln_cselect({x}, {y}, {z})"},
    "clip": {"f": "kiln_clip<{T}>({x}, {y}, {z})", "*": "kiln_clip_int<{T}>({x}, {y}, {z})"},
}

# Complex loops ('c'): only these; a "*" template is never used for them (C++ has no
# operators on kiln_c64/kiln_c128). absolute's result is real (the call's ``out``).
for _fn, _form in {"negative": "kiln_cneg({x})", "positive": "{x}", "add": "kiln_cadd({x}, {y})",
                   "subtract": "kiln_csub({x}, {y})", "multiply": "kiln_cmul({x}, {y})",
                   "square": "kiln_cmul({x}, {x})", "true_divide": "kiln_cdiv({x}, {y})",
                   "absolute": "kiln_cabs({x})", "exp": "kiln_cexp({x})",
                   "conjugate": "kiln_cconj({x})", "equal": "kiln_ceq({x}, {y})",
                   "not_equal": "kiln_cne({x}, {y})", "real": "{x}.re", "imag": "{x}.im",
                   "complex_parts": "{T}{{{x}.re, {y}.re}}"}.items():
    SYNTAX[_fn] = {**SYNTAX[_fn], "c": _form} if _fn in SYNTAX else {"c": _form}

VECTOR_MATH = ["sin", "cos", "tan", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
               "cbrt", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"]
VECTOR_MATH2 = ["atan2", "pow"]
# float64 functions whose double version is glibc's scalar one, as in NumPy's loops: NumPy
# 2.x turned its vector float64 sin and cos off (loops_trigonometric.dispatch.cpp calls
# npy_sin/npy_cos per element); glibc's vector ones are 1 ulp off in ~32% of elements
SCALAR_F64 = ["sin", "cos"]
SCALAR_MATH2 = ["fmod", "hypot"]
# scalar functions whose kernel code calls libm's scalar functions, as NumPy's loops do, for
# these dtypes: float_power's pow, float32 logaddexp's expf and log1pf (the prelude)
SCALAR_LOOPS = {"float_power": ("float64",), "logaddexp": ("float32",)}


def no_builtin_flags() -> list[str]:
    """-fno-builtin-<fn> for every math function the prelude declares (so its declarations
    win). Here, not in cpp.py: every build's key reads it, and importing cpp.py (the whole
    lowering) cost a cached loop function's first call 27-99 ms."""
    names = VECTOR_MATH + VECTOR_MATH2 + SCALAR_MATH2
    return [f"-fno-builtin-{n}{suffix}" for n in names for suffix in ("", "f")]
_LIBM_CALL = re.compile(r"\b(?:(?:kiln_np_)?(?:%s)\{f\}|kiln_exp|kiln_hypot|kiln_fmod)\(" % "|".join(VECTOR_MATH + VECTOR_MATH2 + SCALAR_MATH2))
# per C type: the calls a template spells kiln_np_<name> (svml.py: NumPy's loop of that type is SVML's)
# (and float32's NumPy's own exp and log: the prelude ports NumPy's loops)
_SVML_CALL = {c: re.compile(r"\b(%s)(?=\{f\}\()" % "|".join(
    [n for n, e in SVML.items() if c in e[3]] + (list(NUMPY_OWN_F32) if c == "float" else [])))
    for c in ("float", "double")}
# a call in a template that may be SVML's: kiln_np_<name>{f}( or kiln's own kiln_exp(, whose
# float64 version the prelude makes NumPy's SVML exp where that is NumPy's loop
_SVML_USE = re.compile(r"\bkiln_(?:np_)?([a-z0-9]+)(?:\{f\})?\(")


def calls_svml() -> bool:
    """Whether kernels built now call NumPy's SVML functions for the ``kiln_np_`` names
    (the prelude decides; elsewhere those names are glibc's functions)."""
    from ..config import config
    return kernels_call_svml(config.cxx_flags)


def svml_ufunc(name: str, cxx_flags: str, dtype: Any = "float64") -> bool:
    """Whether a ``dtype`` kernel built with ``cxx_flags`` computes ufunc ``name`` with
    NumPy's own SVML function (its template calls a ``kiln_np_`` name, or float64's
    ``kiln_exp``, and those are SVML's).

    >>> svml_ufunc("sin", "-O3 -march=native")   # NumPy's loop is glibc's scalar sin
    False
    """
    ctype = "float" if np.dtype(dtype) == np.float32 else "double"
    return any(ctype in SVML.get(used, ((),) * 4)[3] for used in _SVML_USE.findall(template(name, dtype) or "")) \
        and kernels_call_svml(cxx_flags)


# a call of a kiln_np_ name (not kiln's own float64 kiln_exp, which stays inline)
_NP_CALL = re.compile(r"\bkiln_np_([a-z0-9]+)(?:\{f\})?\(")


def libm_scalar_ufunc(name: str, dtype: Any = "float64") -> bool:
    """Whether a ``dtype`` kernel computes ufunc ``name`` with libm's scalar function, as
    NumPy's loop does where it is not SVML's (svml.py ``numpy_scalar_libm``: the prelude
    binds the ``kiln_np_`` names to glibc's scalar functions)."""
    ctype = "float" if np.dtype(dtype) == np.float32 else "double"
    return numpy_scalar_libm() and any(ctype in SVML.get(used, ((),) * 4)[3]
                                       for used in _NP_CALL.findall(template(name, dtype) or ""))


def template(fn: str, dtype: Any) -> str | None:
    """The C++ of scalar function ``fn`` in a loop of ``dtype``; None: not implemented."""
    forms = SYNTAX.get(fn)
    if forms is None:
        return None
    kind = np.dtype(dtype).kind
    text = forms.get(kind, forms.get("*") if kind != "c" else None)
    if text is not None and kind == "f":
        # NumPy's own SVML function where its loop calls one (svml.py: the prelude makes the
        # name glibc's function where NumPy's loop is not SVML's)
        ctype = "float" if np.dtype(dtype) == np.float32 else "double"
        text = _SVML_CALL[ctype].sub(r"kiln_np_\1", text)
        if ctype == "float":   # (kiln_exp's float version, by name: a module links the
            text = text.replace("kiln_exp(", "kiln_np_exp{f}(")   # functions it names, cpp_text.py)
    return text


def call_width(fn: str, dtype: Any) -> str | None:
    """:meth:`Renderer.call_width` for C++ kernels: glibc's scalar functions (SCALAR_F64,
    SCALAR_MATH2, SCALAR_LOOPS; the kiln_np_ names without AVX512_SKX) keep a loop scalar; NumPy's SVML functions are "vector":
    a scalar loop calls their 512-bit vector once per element (np.sin(np.arctan2(z, p))
    of 20000 float64: 4x NumPy; np.sin(beta) ** 3 with negative bases: 14x)."""
    from ..config import config
    return _call_width(fn, np.dtype(dtype).name, config.cxx_flags)


@functools.lru_cache(maxsize=None)
def _call_width(fn: str, dtype: str, cxx_flags: str) -> str | None:
    dt = np.dtype(dtype)
    if fn in SCALAR_F64 and dt == np.float64 or fn in SCALAR_MATH2 or dtype in SCALAR_LOOPS.get(fn, ()) \
            or dt.kind == "f" and libm_scalar_ufunc(fn, dt):
        return "scalar"
    return "vector" if dt.kind == "f" and svml_ufunc(fn, cxx_flags, dt) else None


# What one vector-math call costs in statements. Measured per element on one thread
# (100k-1M float64, AVX-512 and AVX2 machines): a fused statement ~0.02 ns, exp ~0.7 ns,
# log ~1 ns, sin ~0.7 ns, tanh ~2 ns: 30-100 statements.
LIBM_CALL_COST = 32
# glibc's scalar float64 sin/cos (SCALAR_F64: NumPy's loops; SCALAR_LOOPS alike) cost
# ~15-20 ns an element on one thread (1M elements, sin: ~17 ms idle), some 1000 statements
SCALAR_CALL_COST = 1000


def call_cost(fn: str, dtype: Any) -> int:
    """Statements one call costs (a libm call counts LIBM_CALL_COST, a scalar float64 one
    SCALAR_CALL_COST): decides when threads pay off."""
    text = template(fn, dtype) or ""
    if fn in SCALAR_F64 and np.dtype(dtype) == np.float64 or np.dtype(dtype).name in SCALAR_LOOPS.get(fn, ()) \
            or np.dtype(dtype).kind == "f" and libm_scalar_ufunc(fn, dtype):
        return SCALAR_CALL_COST
    return 1 + (LIBM_CALL_COST - 1) * len(_LIBM_CALL.findall(text))


BOOL_LOAD = "(const uint8_t*)"   # how a term reads a bool array (as bytes: CppEmitter.load)
_MATH_CALL = re.compile(r"\b(?:(?:kiln_np_)?(?:%s)f?|kiln_exp|kiln_hypot|kiln_fmod)\(" % "|".join(VECTOR_MATH + VECTOR_MATH2 + SCALAR_MATH2))


def calls_math(lines: list[str]) -> bool:
    """Whether printed C++ statements call a libm / vector-math function."""
    return any(_MATH_CALL.search(line) for line in lines)


INVARIANT_TEXT = 2000


def _paren(expr: str) -> str:
    return expr if _WORD.fullmatch(expr) else f"({expr})"


def _part(dtype: Any) -> str:
    """The C type of one part (real or imaginary) of a complex dtype."""
    return "float" if np.dtype(dtype) == np.complex64 else "double"


class NameSource:
    """Fresh temporaries and the kernel-argument name of each buffer and scalar."""

    def __init__(self, inplace: dict[str, Buffer] | None = None) -> None:
        self.count = 0
        self.args: dict[str, str] = {}
        self.buffers: dict[str, Buffer] = {}
        self.scalars: dict[str, Any] = {}
        # output buffer name -> the input whose memory (and kernel argument) it takes
        self.inplace = inplace or {}
        self.complex = False   # a body holds complex values (struct locals)
        # declarations made once per kernel call, before its loops (a divisor's magic
        # number): the C expression -> the name it is declared as
        self.hoisted: dict[str, str] = {}
        # memory offsets written marked (Affine.render(mark=True)): the kernel printer
        # (cpp.py) resolves them, to literals or to offset arguments
        self.mark_offsets = False
        # graph node -> (slot, predicate) per floating-point kind whose raiser the kernel
        # tells by its ops' predicates (lowering/fp_flags.py fp_table); the slots emitted
        self.fp_slots: dict[Any, list] = {}
        self.fp_emitted: dict[int, str] = {}   # slot -> the C type of its word
        self.loaded: set[str] = set()   # the buffers it loads (by name)

    def hoist(self, expr: str) -> str:
        """A name for ``expr`` computed once before the kernel's loops."""
        if expr not in self.hoisted:
            self.hoisted[expr] = f"h{len(self.hoisted)}"
        return self.hoisted[expr]

    def prologue(self, work: str) -> list[str]:
        """The hoisted declarations; ``work``: the points the kernel iterates (a C
        expression), which a divisor's setup reads (``kiln_points``)."""
        lines = [f"const auto {name} = {expr};" for expr, name in self.hoisted.items()]
        if any("kiln_points" in expr for expr in self.hoisted):
            lines.insert(0, f"const int64_t kiln_points = {work};")
        return lines

    def temp(self) -> str:
        self.count += 1
        return f"t{self.count - 1}"

    def at(self, index: Affine, rename: Callable | None) -> str:
        """The text of a memory index (into a kernel argument's elements)."""
        return index.render(rename, mark=self.mark_offsets)

    def arg(self, buf: Buffer) -> str:
        if buf.name in self.inplace:
            return self.arg(self.inplace[buf.name])
        if buf.name not in self.args:
            self.args[buf.name] = f"p_{buf.name}"
            self.buffers[buf.name] = buf
        return self.args[buf.name]


_SIZE = re.compile(r"\d+")
_NAME = re.compile(r"[A-Za-z_]\w*")
_WORD = re.compile(r"\b\w+\b")
# Integer floor division and remainder by a loop-invariant divisor (cpp_prelude.h)
DIVIDE_BY = {"floor_divide": "kiln_floor_divide_by", "remainder": "kiln_remainder_by"}


class CppEmitter(OpsHandler):
    """The C++ ops handler: collects one loop body's statements, sharing equal expressions.

    ``forwarded`` maps (buffer name, index) to a variable already holding that element
    (a value computed earlier in the same loop body), so fused consumers read registers.
    ``locals`` maps a kernel-local reduction buffer to its per-row scalar; ``rowlocal`` a
    buffer kept in a per-row array to (array, the inner loop variables).
    """

    def __init__(self, names: NameSource, forwarded: dict | None = None,
                 locals_: dict | None = None) -> None:
        self.lines: list[str] = []
        self.cse: dict[str, str] = {}
        self.names = names
        self.forwarded = forwarded if forwarded is not None else {}
        self.locals = locals_ if locals_ is not None else {}
        self.loads: list[tuple[Buffer, Affine]] = []
        self.uses: list[Affine] = []   # indices used as values (no loop collapses them)
        self.rename: Callable | None = None
        self.rowlocal: dict[str, tuple[str, set]] = {}
        # integer temps that are a float value converted (var -> (float var, its dtype))
        self.truncated: dict[str, tuple] = {}   # int var -> (float var, its dtype, int dtype or None)
        # values the same at every point (literals, scalar arguments and what is computed
        # from them only) -> a C expression of them that needs no loop variable
        self.invariant: dict[str, str] = {}
        # complex temporaries -> their struct type (handed to helpers part by part)
        self.complex_temps: dict[str, str] = {}

    def load(self, buf: Buffer, index: Affine) -> str:
        if buf.name in self.locals:
            return self.locals[buf.name]
        key = (buf.name, index)
        if key in self.forwarded:
            return self.forwarded[key]
        if buf.name in self.rowlocal:  # a per-row array: index by the inner variables only
            array, inner = self.rowlocal[buf.name]
            within = Affine(0, {v: c for v, c in index.terms.items() if v in inner})
            return self.assign(f"{array}[{within.render(self.rename)}]", buf.dtype)
        self.loads.append((buf, index))
        self.names.loaded.add(buf.name)
        element = f"{self.names.arg(buf)}[{self.names.at(index, self.rename)}]"
        if np.dtype(buf.dtype).kind == "c":  # part by part: GCC vectorizes no struct copy
            return self.assign(f"{ctype(buf.dtype)}{{{element}.re, {element}.im}}", buf.dtype)
        if np.dtype(buf.dtype) == np.bool_:
            # read as a byte: GCC 12 vectorizes no loop that loads a C++ bool and also
            # works on wider types (np.where(mask, a, b) on float64 ran ~2x slower than NumPy)
            element = f"({BOOL_LOAD}{self.names.arg(buf)})[{self.names.at(index, self.rename)}]"
        return self.assign(element, buf.dtype)

    def constant(self, value: Any, dtype: Any) -> str:
        text = literal(value, dtype)
        self.invariant[text] = text
        return text

    def scalar_arg(self, scalar: Any) -> str:
        self.names.scalars[scalar.name] = scalar
        self.invariant[f"s_{scalar.name}"] = f"s_{scalar.name}"
        return f"s_{scalar.name}"

    def size(self, n: Any) -> str:
        return str(n)

    def index(self, index: Affine) -> str:
        self.uses.append(index)
        # int64_t: a loop over one element renders its index as the literal 0 (an int),
        # which the int64 templates (kiln_clip_int<T>) would not deduce.
        return f"((int64_t)({index.render(self.rename)}))"

    def bind_index(self, value: str) -> str:
        return value if _NAME.fullmatch(value) else self.assign(value, np.int64)

    def call(self, fn: str, args: Sequence[str], dtype: Any, out: Any = None) -> str:
        if fn == "identity":
            return args[0]
        text = template(fn, dtype)
        if text is None:
            raise NotImplementedError(f"the C++ renderer has no {fn} for {np.dtype(dtype)}")
        # A negative literal after a unary operator is parenthesized: ``-{x}`` of -1.0
        # would read ``--1.0``, a decrement.
        names = {k: f"({a})" if a.startswith("-") and any(f"{u}{{{k}}}" in text for u in "-~!") else a
                 for k, a in zip("xyz", args)}
        # A complex temporary goes to a helper rebuilt from its parts: a struct local passed
        # whole is addressable when OpenMP lowers the loop (before inlining), so omp simd
        # turns it into a per-lane array and the loop stays scalar (np.abs(z).max(axis=1)
        # ran at 0.14x NumPy); read member by member it is two registers.
        names = {k: f"{self.complex_temps[a]}{{{a}.re, {a}.im}}" if a in self.complex_temps
                 and re.search(re.escape(f"{{{k}}}") + r"(?!\.(?:re|im)\b)", text) else a for k, a in names.items()}
        by = DIVIDE_BY.get(fn)
        if by is not None and np.dtype(dtype).kind in "iu" and args[1] in self.invariant \
                and args[0] not in self.invariant:
            # a divisor the same at every point: its magic number is made once, before
            # the loops, and the loop vectorizes (kiln_divisor32/64 in cpp_prelude.h)
            width = 64 if np.dtype(dtype).itemsize == 8 else 32
            d = self.invariant[args[1]]
            d = d if d.startswith(f"({ctype(dtype)})") else f"({ctype(dtype)})({d})"
            magic = self.names.hoist(f"kiln_divisor{width}({d}, kiln_points)")
            return self.assign(f"{by}({args[0]}, {magic})", dtype)
        suffix = "f" if np.dtype(dtype) in (np.float32, np.complex64) else ""
        return self.assign(text.format(f=suffix, T=ctype(dtype), **names), out if out is not None else dtype,
                           operands=args)

    def raised(self, node: Any, result: tuple, operands: list) -> None:
        # own<slot> collects where the op raised the kind (OR-reduced by the loops' pragmas),
        # in words as wide as the op's lanes: GCC 12 moves bool masks of double lanes into
        # 32-bit words slowly (5.8 ms against 1.8 for a 4-op chain's 9 slots on 1M float64),
        # and float lanes into 64-bit words as slowly (y += 2.0 * x on 1e5 float32: 58 us
        # with 64-bit words, 31 with 32-bit ones, NumPy 19)
        wide = any(np.dtype(dt).itemsize >= 8 for _v, dt in (result, *operands))
        word = "uint64_t" if wide else "uint32_t"
        for slot, where in self.names.fp_slots.get(node, ()):
            line = f"own{slot} |= ({word}){where(self, result, operands)};"
            if line not in self.lines[-8:]:
                self.lines.append(line)
            self.names.fp_emitted[slot] = "uint64_t" if wide or self.names.fp_emitted.get(slot) == "uint64_t" \
                else word

    def assign(self, expr: str, dtype: Any, operands: Sequence[str] | None = None) -> str:
        """A temporary holding ``expr``; with ``operands`` (the values ``expr`` is made
        of), it is loop-invariant when they all are."""
        found = self.cse.get(expr)
        if found is not None:
            return found
        name = self.names.temp()
        if np.dtype(dtype).kind == "c":
            self.names.complex = True
            self.complex_temps[name] = ctype(dtype)
        self.lines.append(f"{ctype(dtype)} {name} = {expr};")
        self.cse[expr] = name
        # (an invariant's text is its expression over the kernel's arguments, for code
        # hoisted before the loops; past INVARIANT_TEXT characters it is left a temporary:
        # squaring a complex invariant again and again quadrupled its text each time, 10 s
        # of re.sub for 14 squares)
        if operands and all(a in self.invariant and len(self.invariant[a]) <= INVARIANT_TEXT
                            for a in operands):
            self.invariant[name] = _WORD.sub(
                lambda m: _paren(self.invariant[m.group()]) if m.group() in operands else m.group(), expr)
        return name

    def cast(self, var: str, src: Any, dst: Any) -> str:
        src, dst = np.dtype(src), np.dtype(dst)
        if src == dst:
            return var
        if src.kind == "c" and dst.kind == "b":
            return self.assign(f"({var}.re != 0 || {var}.im != 0)", dst)
        if src.kind == "c" and dst.kind == "c":
            return self.assign(f"{ctype(dst)}{{({_part(dst)}){var}.re, ({_part(dst)}){var}.im}}", dst)
        if src.kind == "c":  # astype(float): the real part, as NumPy (with its ComplexWarning)
            return self.assign(f"({ctype(dst)})({var}.re)", dst)
        if dst.kind == "c":
            return self.assign(f"{ctype(dst)}{{({_part(dst)})({var}), 0}}", dst)
        if dst.kind == "b":
            return self.assign(f"({var} != 0)", dst)
        if src.kind == "b" and dst.kind == "f":
            # a select, not (double)(b): GCC 12 leaves a bool -> float conversion scalar,
            # so (x > 0).mean() ran at 1.5x NumPy and .astype(np.float32).sum() at 13x
            return self.assign(f"kiln_select<{ctype(dst)}>({var}, {literal(1, dst)}, {literal(0, dst)})",
                               dst, operands=(var,))
        if _SIZE.fullmatch(var):  # a size: a literal of the new type, inline
            self.invariant[f"({ctype(dst)}){var}"] = f"({ctype(dst)}){var}"
            return f"({ctype(dst)}){var}"
        source = self.truncated.get(var)
        if source is not None and dst.kind == "f":
            # GCC (-fno-trapping-math) folds a float -> int -> float round trip into trunc(),
            # which keeps the sign of zero: (double)(int64_t)-0.25 would be -0.0, where
            # NumPy's integer 0 converts to +0.0. Spelled as that trunc plus 0.0 (x + 0.0 is
            # x, but +0.0 for -0.0), it is NumPy's value and still vectorizes.
            # The fold holds only where the value fits the integer: NaN, infinities and
            # values out of an int32/int64's range convert to its minimum on x86, as in
            # NumPy (1 / np.asarray(np.inf, np.int32) is -4.66e-10, not 0; seed 13128).
            # (uint32/uint64 out of range: NumPy's own result depends on its SIMD path.)
            fvar, fdt, first = source
            via = first if first.name in ("int32", "int64") else None
            f = 'f' if fdt == np.float32 else ''
            expr = f"__builtin_trunc{f}({fvar})"
            if fdt != dst:
                expr = f"({ctype(dst)})({expr})"
            expr = f"{expr} + {literal(0.0, dst)}"
            if via is not None:
                bits = via.itemsize * 8 - 1
                expr = (f"(__builtin_fabs{f}({fvar}) < {literal(2.0 ** bits, fdt)} ? {expr} : "
                        f"{literal(-2.0 ** bits, dst)})")
            return self.assign(expr, dst)
        # (float -> integer: kiln_ftoi, x86's conversion with NaN, the infinities and values
        # out of range defined as the minimum, which GCC cannot read a range off: a plain
        # (int64_t)fabs(x) % 5 lost the remainder's sign fix, cpp_prelude.h)
        ftoi = f"kiln_ftoi<{{}}, {ctype(src)}>"
        if src.kind == "f" and dst.kind in "iu" and dst.itemsize < 4:
            # to int8/int16/uint8/uint16 through int32, as x86 converts (and NumPy: 300.0 ->
            # int8 is 44, NaN is 0): spelled out, GCC does not fold a round trip into trunc()
            return self.assign(f"({ctype(dst)}){ftoi.format('int32_t')}({var})", dst, operands=(var,))
        if src.kind == "f" and dst.kind == "u" and dst.itemsize >= 4:
            # NumPy's conversion (x86-64 without AVX-512's vcvttpd2uqq/vcvttpd2udq, which GCC
            # picks under -march=native and which give all ones for a negative: -5.0 as
            # uint32 was 4294967295, NumPy's 4294967291): the signed one of the same width
            # below 2**(bits-1), that of x - 2**(bits-1) with the top bit flipped above, so
            # NaN and -inf give 2**(bits-1) and inf 0, as NumPy's SIMD loops
            bits = dst.itemsize * 8
            top, signed = literal(2.0 ** (bits - 1), src), ftoi.format(f"int{bits}_t")
            flip = "0x8000000000000000ULL" if bits == 64 else "0x80000000u"
            # (one conversion, of x or x - 2**(bits-1): kiln_ftoi's select in each arm cost
            # 1.4x the plain casts, uint32 from float32)
            return self.assign(f"(({ctype(dst)}){signed}({var} >= {top} ? {var} - {top} : {var}) ^ "
                               f"({var} >= {top} ? {flip} : 0))", dst, operands=(var,))
        if src.kind == "f" and dst.kind == "i":
            out = self.assign(f"{ftoi.format(ctype(dst))}({var})", dst, operands=(var,))
        else:
            out = self.assign(f"({ctype(dst)})({var})", dst, operands=(var,))
        if src.kind == "f" and dst.kind in "iu":
            self.truncated[out] = (var, src, dst)
        elif source is not None and dst.kind in "iu" and np.can_cast(source[2], dst, "safe"):
            self.truncated[out] = source   # a widening keeps the value: GCC folds it too
        return out
