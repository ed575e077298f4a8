"""Loop-level IR: affine indices, values as functions of an index, and kernel emitters.

A value during lowering is one of

- :class:`BufferValue` — memory: an input, a constant, or a computed/extern buffer, seen
  through a strided window (``offset + sum(strides[d] * index[d])``, in elements). Views of
  buffers (transposes, slices, broadcasts, reshapes that NumPy does without copying) only
  change the window, never the memory;
- :class:`Pointwise` — an unrealized computation: ``fn(em, index) -> C variable``. Chains of
  pointwise ops compose these closures, which is how they fuse (Inductor's ``inner_fn``);
- :class:`Scalar` — a C expression that does not depend on the index (a literal or a
  runtime scalar argument of the kernel).

Indices are :class:`Affine` forms over loop variables, so every access is known exactly:
the scheduler compares them to decide fusion, the renderer collapses contiguous loops.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np


class Affine:
    """``const + sum(coef * var)``: an index into memory or into one dimension."""

    __slots__ = ("const", "terms")

    def __init__(self, const: int = 0, terms: dict[str, int] | None = None) -> None:
        self.const = int(const)
        self.terms = {v: int(c) for v, c in (terms or {}).items() if c}

    @staticmethod
    def var(name: str) -> "Affine":
        return Affine(0, {name: 1})

    def __add__(self, other: "Affine | int") -> "Affine":
        if isinstance(other, int):
            return Affine(self.const + other, self.terms)
        terms = dict(self.terms)
        for v, c in other.terms.items():
            terms[v] = terms.get(v, 0) + c
        return Affine(self.const + other.const, terms)

    def __mul__(self, k: int) -> "Affine":
        return Affine(self.const * k, {v: c * k for v, c in self.terms.items()})

    def key(self) -> tuple:
        return (self.const, tuple(sorted(self.terms.items())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Affine) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def render(self, rename: Callable[[dict[str, int]], list[tuple[str, int]]] | None = None) -> str:
        terms = rename(self.terms) if rename else sorted(self.terms.items())
        parts = []
        for v, c in terms:
            parts.append(v if c == 1 else f"{c}*{v}")
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts).replace("+ -", "- ")

    def __repr__(self) -> str:
        return f"Affine({self.render()})"


def linear(offset: int, strides: Sequence[int], index: Sequence[Affine]) -> Affine:
    """The flat element offset of ``index`` in a strided window."""
    out = Affine(offset)
    for s, ix in zip(strides, index):
        if s:
            out = out + ix * s
    return out


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(strides))


# -- C types and literals -------------------------------------------------------------------

CTYPES = {"bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
          "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
          "uint64": "uint64_t", "float32": "float", "float64": "double"}


def ctype(dtype: Any) -> str:
    return CTYPES[np.dtype(dtype).name]


def kind(dtype: Any) -> str:
    """'f', 'i', 'u' or 'b': which template of an op applies."""
    return np.dtype(dtype).kind


def literal(value: Any, dtype: Any) -> str:
    """An exact C literal of ``value`` converted to ``dtype`` (as NumPy converts it)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return "true" if bool(value) else "false"
    if dt.kind in "iu":
        v = int(np.asarray(value).astype(dt))
        if dt.kind == "i" and v == -(1 << 63):
            return "(-9223372036854775807LL - 1)"
        return f"({ctype(dt)}){v}{'ULL' if dt.kind == 'u' else 'LL'}"
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
    return float(v).hex() + suffix


# -- values ---------------------------------------------------------------------------------

class Value:
    shape: tuple
    dtype: np.dtype

    @property
    def size(self) -> int:
        return math.prod(self.shape)


class Buffer:
    """A named allocation (or argument) the wrapper owns; kernels see it as a pointer."""

    def __init__(self, name: str, shape: tuple, dtype: Any, kind: str) -> None:
        self.name = name
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.kind = kind  # input | const | computed | extern
        self.strides = contiguous_strides(shape)  # inputs: overwritten with the real strides
        self.offset = 0
        self.order: tuple | None = None  # computed in another axis order (NumPy's layout)

    def __repr__(self) -> str:
        return f"Buffer({self.name}, {self.shape}, {self.dtype.name}, {self.kind})"


class BufferValue(Value):
    """A strided window on a :class:`Buffer`. ``py`` rebuilds it in the wrapper (views)."""

    def __init__(self, buf: Buffer, shape: tuple, strides: tuple, offset: int,
                 py: Any = None) -> None:
        self.buf = buf
        self.shape = tuple(shape)
        self.dtype = buf.dtype
        self.strides = tuple(strides)
        self.offset = int(offset)
        self.py = py  # (op, base value, params) when this is a view the wrapper may need

    @classmethod
    def whole(cls, buf: Buffer) -> "BufferValue":
        return cls(buf, buf.shape, buf.strides, buf.offset)

    def is_whole(self) -> bool:
        return (self.shape == self.buf.shape and self.strides == self.buf.strides
                and self.offset == self.buf.offset)

    def load(self, em: "Emitter", index: Sequence[Affine]) -> str:
        return em.load(self.buf, linear(self.offset, self.strides, index))


class Pointwise(Value):
    """An unrealized elementwise value: ``fn(em, index)`` emits code, returns a C variable."""

    def __init__(self, shape: tuple, dtype: Any, fn: Callable[["Emitter", Sequence[Affine]], str],
                 cost: int, origins: tuple) -> None:
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.fn = fn
        self.cost = cost
        self.origins = origins  # graph nodes it came from (names, source lines)

    def load(self, em: "Emitter", index: Sequence[Affine]) -> str:
        return self.fn(em, index)


class Scalar(Value):
    """An index-independent C expression of a given dtype (weak: a Python scalar)."""

    def __init__(self, expr: str, dtype: Any, weak: bool = False, value: Any = None) -> None:
        self.shape = ()
        self.dtype = np.dtype(dtype)
        self.expr = expr
        self.weak = weak
        self.value = value  # the Python value when it is a compile-time constant

    def load(self, em: "Emitter", index: Sequence[Affine]) -> str:
        if getattr(self, "arg", False):
            em.names.scalars[self.expr] = self
        return self.expr


def broadcast_index(value_shape: tuple, out_index: Sequence[Affine]) -> list[Affine]:
    """Index into a value broadcast to a larger shape (NumPy's right-aligned rule)."""
    lead = len(out_index) - len(value_shape)
    return [Affine(0) if d == 1 else out_index[lead + k] for k, d in enumerate(value_shape)]


# -- emitter: one loop body being generated --------------------------------------------------

class Emitter:
    """Collects C statements for one loop body, with common-subexpression elimination.

    ``forwarded`` maps (buffer name, index) to a variable already holding that element
    (a value computed earlier in the same loop body), so fused consumers read registers.
    ``locals`` maps a kernel-local reduction buffer to its per-row scalar.
    """

    def __init__(self, names: "NameSource", forwarded: dict | None = None,
                 locals_: dict | None = None) -> None:
        self.lines: list[str] = []
        self.cse: dict[str, str] = {}
        self.names = names
        self.forwarded = forwarded if forwarded is not None else {}
        self.locals = locals_ if locals_ is not None else {}
        self.loads: list[tuple[Buffer, Affine]] = []
        self.uses: list[Affine] = []   # indices tested in conditions (no loop collapses them)
        self.rename: Callable | None = None
        self.rowlocal: dict[str, tuple[str, set]] = {}

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
        return self.assign(f"{self.names.arg(buf)}[{index.render(self.rename)}]", buf.dtype)

    def index_expr(self, index: Affine) -> str:
        """An index as a C expression for a condition (``x2 == 0``): its loop stays its own."""
        self.uses.append(index)
        return f"({index.render(self.rename)})"

    def assign(self, expr: str, dtype: Any) -> str:
        found = self.cse.get(expr)
        if found is not None:
            return found
        name = self.names.temp()
        self.lines.append(f"{ctype(dtype)} {name} = {expr};")
        self.cse[expr] = name
        return name

    def cast(self, var: str, src: Any, dst: Any) -> str:
        src, dst = np.dtype(src), np.dtype(dst)
        if src == dst:
            return var
        if dst.kind == "b":
            return self.assign(f"({var} != 0)", dst)
        return self.assign(f"({ctype(dst)})({var})", dst)


class NameSource:
    """Fresh temporaries and the kernel-argument name of each buffer."""

    def __init__(self, inplace: dict[str, Buffer] | None = None) -> None:
        self.count = 0
        self.args: dict[str, str] = {}
        self.buffers: dict[str, Buffer] = {}
        self.scalars: dict[str, Scalar] = {}
        # output buffer name -> the input whose memory (and kernel argument) it takes
        self.inplace = inplace or {}

    def temp(self) -> str:
        self.count += 1
        return f"t{self.count - 1}"

    def arg(self, buf: Buffer) -> str:
        if buf.name in self.inplace:
            return self.arg(self.inplace[buf.name])
        if buf.name not in self.args:
            self.args[buf.name] = f"p_{buf.name}"
            self.buffers[buf.name] = buf
        return self.args[buf.name]
