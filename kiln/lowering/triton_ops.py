"""Triton syntax of the ops handler: Triton types, typed constants, one table from scalar
function to Triton, and :class:`TritonEmitter`, the handler that writes a kernel body.

Templates are per dtype kind of the loop ('f' float, 'i' signed, 'u' unsigned, 'b' bool,
'*' any), with {x} {y} {z} the operands (already cast to the loop dtype), {T} the
Triton dtype (``tl.float32``) and {ones} the all-ones value of an integer dtype. NumPy's semantics, not Triton's defaults: float32 division
and square root round correctly (``tl.math.div_rn``/``sqrt_rn``; Triton's ``/`` and
``tl.sqrt`` are approximate for float32), transcendentals are libdevice's, max/min
propagate NaN, integer ``//`` and ``%`` floor and never trap (helpers named ``kiln_*`` in
kiln/codegen_templates/triton_prelude.py). Constants are typed (``tl.full([], v, T)``):
a bare Python float in a kernel is float32.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .handler import OpsHandler

TL_TYPES = {"bool": "tl.int1", "int8": "tl.int8", "int16": "tl.int16", "int32": "tl.int32",
            "int64": "tl.int64", "uint8": "tl.uint8", "uint16": "tl.uint16",
            "uint32": "tl.uint32", "uint64": "tl.uint64", "float32": "tl.float32",
            "float64": "tl.float64"}
# Signature types of pointer and scalar kernel arguments.
SIG_TYPES = {"bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
             "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
             "float32": "fp32", "float64": "fp64"}


def tltype(dtype: Any) -> str:
    return TL_TYPES[np.dtype(dtype).name]


def sigtype(dtype: Any) -> str:
    return SIG_TYPES[np.dtype(dtype).name]


def literal(value: Any, dtype: Any) -> str:
    """Python source of ``value`` converted to ``dtype`` (as NumPy converts it), exact."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return "1" if bool(value) else "0"
    if dt.kind in "iu":
        return str(int(np.asarray(value).astype(dt)))
    v = float(np.asarray(value, dtype=dt))
    if math.isnan(v):
        return "float('nan')"
    if math.isinf(v):
        return "float('inf')" if v > 0 else "float('-inf')"
    return repr(v)   # the shortest decimal that reads back as the same double


def _lib(name: str) -> dict:
    return {"f": f"libdevice.{name}({{x}})"}


SYNTAX: dict[str, dict[str, str]] = {
    # unary
    "negative": {"*": "-{x}"}, "positive": {"*": "{x}"}, "conjugate": {"*": "{x}"},
    "absolute": {"f": "tl.abs({x})", "i": "tl.abs({x})", "u": "{x}", "b": "{x}"},
    "sign": {"f": "tl.where({x} != {x}, {x}, ({x} > 0).to({T}) - ({x} < 0).to({T}))",
             "i": "({x} > 0).to({T}) - ({x} < 0).to({T})", "u": "({x} > 0).to({T})"},
    "exp": _lib("exp"), "exp2": _lib("exp2"), "expm1": _lib("expm1"), "log": _lib("log"),
    "log2": _lib("log2"), "log10": _lib("log10"), "log1p": _lib("log1p"), "cbrt": _lib("cbrt"),
    "sin": _lib("sin"), "cos": _lib("cos"), "tan": _lib("tan"), "arcsin": _lib("asin"),
    "arccos": _lib("acos"), "arctan": _lib("atan"), "sinh": _lib("sinh"), "cosh": _lib("cosh"),
    "tanh": _lib("tanh"), "arcsinh": _lib("asinh"), "arccosh": _lib("acosh"),
    "arctanh": _lib("atanh"),
    "sqrt": {"f": "kiln_sqrt({x})"},
    "square": {"f": "{x} * {x}", "i": "{x} * {x}", "u": "{x} * {x}", "b": "{x} & {x}"},
    "reciprocal": {"f": "kiln_div(tl.full([], 1, {T}), {x})"},
    "floor": {"f": "libdevice.floor({x})", "i": "{x}", "u": "{x}", "b": "{x}"},
    "ceil": {"f": "libdevice.ceil({x})", "i": "{x}", "u": "{x}", "b": "{x}"},
    "trunc": {"f": "libdevice.trunc({x})", "i": "{x}", "u": "{x}", "b": "{x}"},
    "rint": {"f": "libdevice.rint({x})", "i": "{x}", "u": "{x}", "b": "{x}"},
    "logical_not": {"*": "{x} == 0"},
    "isnan": {"*": "{x} != {x}"},
    "isinf": {"f": "tl.abs({x}) == float('inf')", "*": "{x} != {x}"},
    "isfinite": {"f": "tl.abs({x}) < float('inf')", "*": "{x} == {x}"},
    "signbit": {"f": "libdevice.signbit({x}) != 0", "i": "{x} < 0", "*": "{x} != {x}"},
    "invert": {"i": "~{x}", "u": "{x} ^ tl.full([], {ones}, {T})", "b": "{x} == 0"},
    "fabs": {"f": "tl.abs({x})"},
    "deg2rad": {"f": "{x} * kiln_div(tl.full([], 3.141592653589793, {T}), tl.full([], 180, {T}))"},
    "rad2deg": {"f": "{x} * kiln_div(tl.full([], 180, {T}), tl.full([], 3.141592653589793, {T}))"},
    # binary
    "add": {"*": "{x} + {y}", "b": "{x} | {y}"},
    "subtract": {"*": "{x} - {y}"},
    "multiply": {"*": "{x} * {y}", "b": "{x} & {y}"},
    "true_divide": {"f": "kiln_div({x}, {y})"},
    "floor_divide": {"f": "kiln_floor_divide({x}, {y})", "i": "kiln_floor_divide_int({x}, {y})",
                     "u": "kiln_divide_uint({x}, {y})"},
    "remainder": {"f": "kiln_remainder({x}, {y})", "i": "kiln_remainder_int({x}, {y})",
                  "u": "kiln_remainder_uint({x}, {y})"},
    "fmod": {"f": "libdevice.fmod({x}, {y})", "i": "kiln_fmod_int({x}, {y})",
             "u": "kiln_remainder_uint({x}, {y})"},
    "power": {"f": "libdevice.pow({x}, {y})"},
    # a zero-stride exponent: NumPy's fast paths (ops/scalar_paths.py power_runtime_scalar)
    "power_scalar_exponent": {"f": "tl.where({y} == 2, {x} * {x}, tl.where({y} == 0.5, kiln_sqrt({x}), "
                                   "tl.where({y} == 1, {x}, tl.where({y} == 0, tl.full([], 1, {T}), "
                                   "tl.where({y} == -1, kiln_div(tl.full([], 1, {T}), {x}), "
                                   "libdevice.pow({x}, {y}))))))"},
    "float_power": {"f": "libdevice.pow({x}, {y})"},
    # NaN-propagating; on ties (0.0 vs -0.0) the second operand wins, as in NumPy's loops.
    # (Nested tl.where rather than `|` of two comparisons: the interpreter cannot `|` a
    # scalar's comparison with a block's.)
    "maximum": {"f": "tl.where({x} != {x}, {x}, tl.where({x} > {y}, {x}, {y}))", "*": "tl.where({x} >= {y}, {x}, {y})"},
    "minimum": {"f": "tl.where({x} != {x}, {x}, tl.where({x} < {y}, {x}, {y}))", "*": "tl.where({x} <= {y}, {x}, {y})"},
    "fmax": {"f": "tl.where({y} != {y}, {x}, tl.where({x} > {y}, {x}, {y}))", "*": "tl.where({x} >= {y}, {x}, {y})"},
    "fmin": {"f": "tl.where({y} != {y}, {x}, tl.where({x} < {y}, {x}, {y}))", "*": "tl.where({x} <= {y}, {x}, {y})"},
    "arctan2": {"f": "libdevice.atan2({x}, {y})"},
    "hypot": {"f": "libdevice.hypot({x}, {y})"},
    "logaddexp": {"f": "kiln_logaddexp({x}, {y})"},
    "copysign": {"f": "libdevice.copysign({x}, {y})"},
    "heaviside": {"f": "tl.where({x} != {x}, {x}, tl.where({x} == 0, {y}, "
                       "tl.where({x} < 0, tl.full([], 0, {T}), tl.full([], 1, {T}))))"},
    "equal": {"*": "{x} == {y}"}, "not_equal": {"*": "{x} != {y}"},
    "less": {"*": "{x} < {y}"}, "less_equal": {"*": "{x} <= {y}"},
    "greater": {"*": "{x} > {y}"}, "greater_equal": {"*": "{x} >= {y}"},
    "logical_and": {"*": "({x} != 0) & ({y} != 0)"},
    "logical_or": {"*": "({x} != 0) | ({y} != 0)"},
    "logical_xor": {"*": "({x} != 0) ^ ({y} != 0)"},
    "bitwise_and": {"i": "{x} & {y}", "u": "{x} & {y}", "b": "{x} & {y}"},
    "bitwise_or": {"i": "{x} | {y}", "u": "{x} | {y}", "b": "{x} | {y}"},
    "bitwise_xor": {"i": "{x} ^ {y}", "u": "{x} ^ {y}", "b": "{x} ^ {y}"},
    "left_shift": {"i": "kiln_lshift({x}, {y})", "u": "kiln_lshift({x}, {y})"},
    "right_shift": {"i": "kiln_rshift({x}, {y})", "u": "kiln_rshift({x}, {y})"},
    # ternary
    "where": {"*": "tl.where({x}, {y}, {z})"},
    "clip": {"f": "kiln_clip({x}, {y}, {z})", "*": "kiln_clip_int({x}, {y}, {z})"},
}

def template(fn: str, dtype: Any) -> str | None:
    """The Triton of scalar function ``fn`` in a loop of ``dtype``; None: not implemented."""
    forms = SYNTAX.get(fn)
    if forms is None:
        return None
    kind = np.dtype(dtype).kind
    return forms.get(kind, forms.get("*"))


def _float_to_int(var: str, dst: np.dtype) -> str:
    """NumPy's float -> integer conversion: C's cast as compiled for x86, whose truncating
    conversion gives the minimum of its int32 or int64 for NaN and any value out of its
    range (1e10 and NaN -> -2**31 as int32); to (u)int8/16 through int32, keeping the low
    bits (-1.0 -> 255 and 300.0 -> 44 as uint8, silently); to uint32/uint64 as NumPy's
    SIMD loop: the signed conversion of the same width below 2**(bits-1), that of
    x - 2**(bits-1) with the top bit flipped above (-5.0 -> 2**32 - 5, inf -> 0). Triton's
    direct conversion is undefined out of range; PTX's cvt.rzi.sat saturates (1e10 ->
    2**31 - 1, NaN -> 0), so each conversion here reads only the values in range."""
    T = tltype(dst)
    bits = 64 if dst.itemsize == 8 else 32
    signed, top = f"tl.int{bits}", f"{2.0 ** (bits - 1)!r}"
    least = f"tl.full([], {-2 ** (bits - 1)}, {signed})"

    def trunc(v: str) -> str:
        return f"tl.where(({v} >= -{top}) & ({v} < {top}), {v}.to({signed}), {least})"
    if dst.kind == "u" and dst.itemsize >= 4:
        value = f"tl.where({var} >= {top}, {trunc(f'({var} - {top})')} ^ {least}, {trunc(var)})"
    else:
        value = trunc(var)
    return value if T == signed else f"{value}.to({T})"


class TritonEmitter(OpsHandler):
    """The Triton ops handler: collects a kernel body's statements, sharing equal ones.

    ``index_of(buf, affine)`` renders an element offset and says which masks it needs
    (set by the renderer, which knows the kernel's index variables); ``forwarded`` maps
    (buffer name, index) to a variable already holding that element in this scope;
    ``locals`` maps a kernel-local reduction result to its variable.
    """

    def __init__(self, index_of: Any, args: "KernelArgs") -> None:
        self.lines: list[str] = []
        self.cse: dict[str, str] = {}
        self.index_of = index_of
        self.args = args
        self.forwarded: dict = {}
        self.locals: dict[str, str] = {}
        self.loads: list = []
        self.count = 0

    def temp(self) -> str:
        self.count += 1
        return f"tmp{self.count - 1}"

    def assign(self, expr: str) -> str:
        found = self.cse.get(expr)
        if found is not None:
            return found
        name = self.temp()
        self.lines.append(f"{name} = {expr}")
        self.cse[expr] = name
        return name

    # -- the handler ------------------------------------------------------------------
    def load(self, buf: Any, index: Any) -> str:
        if buf.name in self.locals:
            return self.locals[buf.name]
        found = self.forwarded.get((buf.name, index))
        if found is not None:
            return found
        self.loads.append((buf, index))
        offset, mask = self.index_of(index)
        ptr = self.args.pointer(buf)
        where = f"{ptr} + {offset}" if offset != "0" else ptr
        if mask is None:
            return self.assign(f"tl.load({where})")
        return self.assign(f"tl.load({where}, {mask}, other=0)")

    def constant(self, value: Any, dtype: Any) -> str:
        return self.assign(f"tl.full([], {literal(value, dtype)}, {tltype(dtype)})")

    def scalar_arg(self, scalar: Any) -> str:
        name = self.args.scalar(scalar)
        if np.dtype(scalar.dtype).kind == "b":       # passed as int8
            return self.assign(f"{name} != 0")
        return name

    def size(self, n: Any) -> str:
        if not isinstance(n, int):   # a Size over the kernel's int64 size parameters
            return self.assign(f"tl.full([], 0, tl.int64) + ({n})")
        return self.assign(f"tl.full([], {int(n)}, tl.int64)")

    def cast(self, var: str, src: Any, dst: Any) -> str:
        src, dst = np.dtype(src), np.dtype(dst)
        if src == dst:
            return var
        if dst.kind == "b":
            return self.assign(f"{var} != 0")
        if src.kind == "f" and dst.kind in "iu":
            return self.assign(_float_to_int(var, dst))
        return self.assign(f"{var}.to({tltype(dst)})")

    def index(self, index: Any) -> str:
        offset, _ = self.index_of(index)
        return self.assign(f"({offset})")

    def bind_index(self, value: str) -> str:
        # The renderer's extents (its int32 offset check) count only its own loop variables.
        raise NotImplementedError("the Triton renderer has no loads at computed indices yet")

    def call(self, fn: str, args: Sequence[str], dtype: Any, out: Any = None) -> str:
        if fn == "identity":
            return args[0]
        text = template(fn, dtype)
        if text is None:
            raise NotImplementedError(f"the Triton renderer has no {fn} for {np.dtype(dtype)}")
        dt = np.dtype(dtype)
        ones = np.iinfo(dt).max if dt.kind == "u" else -1
        return self.assign(text.format(T=tltype(dt), ones=ones, **dict(zip("xyz", args))))


class KernelArgs:
    """The kernel's pointer and scalar arguments, named in the order first used."""

    def __init__(self) -> None:
        self.buffers: dict[str, Any] = {}
        self.scalars: dict[str, Any] = {}

    def pointer(self, buf: Any) -> str:
        self.buffers.setdefault(buf.name, buf)
        return f"p_{buf.name}"

    def scalar(self, scalar: Any) -> str:
        name = getattr(scalar, "name", None) or scalar.expr
        self.scalars.setdefault(name, scalar)
        return f"s_{name}"

    def signature(self) -> dict[str, str]:
        sig = {f"p_{n}": "*" + sigtype(b.dtype) for n, b in self.buffers.items()}
        for n, s in self.scalars.items():
            sig[f"s_{n}"] = "i8" if np.dtype(s.dtype).kind == "b" else sigtype(s.dtype)
        return sig
