"""Loop-level IR: affine indices, values as functions of an index, and the values lowering works on.

A value during lowering is one of

- :class:`BufferValue` — memory: an input, a constant, or a computed/extern buffer, seen
  through a strided window (``offset + sum(strides[d] * index[d])``, in elements). Views of
  buffers (transposes, slices, broadcasts, reshapes that NumPy does without copying) only
  change the window, never the memory;
- :class:`Pointwise` — an unrealized computation: ``fn(ops, index)`` builds it by calling
  an ops handler (kiln/lowering/handler.py). Chains of pointwise ops compose these
  closures, which is how they fuse (Inductor's ``inner_fn``);
- :class:`Scalar` — a value that does not depend on the index (a constant or a runtime
  scalar argument of the kernel).

Indices are :class:`Affine` forms over loop variables, so every access is known exactly:
the scheduler compares them to decide fusion, the renderer collapses contiguous loops.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .sizes import Size, product, render as render_size


# Around a marked index's constant (Affine.render(mark=True)); never in finished text.
OFFSET_MARKS = ("\x01", "\x02")


class Affine:
    """``const + sum(coef * var)``: an index into memory or into one dimension.

    Coefficients and the constant are sizes: ints, or :class:`~kiln.lowering.sizes.Size`
    polynomials when dynamic (a row-major stride of ``s1``)."""

    __slots__ = ("const", "terms")

    def __init__(self, const: Any = 0, terms: dict[str, Any] | None = None) -> None:
        self.const = _size(const)
        self.terms = {v: _size(c) for v, c in (terms or {}).items() if not _zero(c)}

    @staticmethod
    def var(name: str) -> "Affine":
        return Affine(0, {name: 1})

    def __add__(self, other: "Affine | int") -> "Affine":
        if not isinstance(other, Affine):
            return Affine(self.const + other, self.terms)
        terms = dict(self.terms)
        for v, c in other.terms.items():
            terms[v] = terms.get(v, 0) + c
        return Affine(self.const + other.const, terms)

    def __mul__(self, k: Any) -> "Affine":
        return Affine(self.const * k, {v: c * k for v, c in self.terms.items()})

    def key(self) -> tuple:
        return (self.const, tuple(sorted(self.terms.items())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Affine) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def render(self, rename: Callable[[dict[str, int]], list[tuple[str, int]]] | None = None,
               mark: bool = False) -> str:
        """C-like text of the index. ``mark``: an int constant, zero included, is written
        between OFFSET_MARKS (a renderer's kernels that differ only in such offsets can
        share one build, the offsets passed as arguments: lowering/renderer.py)."""
        terms = rename(self.terms) if rename else sorted(self.terms.items())
        parts = []
        for v, c in terms:
            parts.append(v if isinstance(c, int) and c == 1 else f"{render_size(c)}*{v}")
        if mark and isinstance(self.const, int):
            return " + ".join(parts + [f"{OFFSET_MARKS[0]}{self.const}{OFFSET_MARKS[1]}"]).replace("+ -", "- ")
        if not _zero(self.const) or not parts:
            parts.append(render_size(self.const))
        return " + ".join(parts).replace("+ -", "- ")

    def __repr__(self) -> str:
        return f"Affine({self.render()})"


def linear(offset: Any, strides: Sequence[Any], index: Sequence[Affine]) -> Affine:
    """The flat element offset of ``index`` in a strided window."""
    out = Affine(offset)
    for s, ix in zip(strides, index):
        if not _zero(s):
            out = out + ix * s
    return out


def _zero(value: Any) -> bool:
    return isinstance(value, int) and value == 0


def _size(value: Any) -> Any:
    return value if isinstance(value, Size) else int(value)


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc = acc * (1 if _zero(d) else d)
    return tuple(reversed(strides))


# Dtypes kernels hold (every renderer declares its own C/Triton type for each).
DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "float32", "float64"})


def kind(dtype: Any) -> str:
    """'f', 'i', 'u' or 'b': which loop of an op applies."""
    return np.dtype(dtype).kind


# -- values ---------------------------------------------------------------------------------

class Value:
    shape: tuple
    dtype: np.dtype

    @property
    def size(self) -> Any:
        return product(self.shape)


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
        self.flips: tuple = ()           # and with these axes reversed (negative strides)

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
        self.offset = _size(offset)  # elements: an int, or a Size (x[::-1] of a dynamic dim)
        self.py = py  # (op, base value, params) when this is a view the wrapper may need

    @classmethod
    def whole(cls, buf: Buffer) -> "BufferValue":
        return cls(buf, buf.shape, buf.strides, buf.offset)

    def is_whole(self) -> bool:
        return (self.shape == self.buf.shape and self.strides == self.buf.strides
                and self.offset == self.buf.offset)

    def load(self, ops: Any, index: Sequence[Affine]) -> Any:
        return ops.load(self.buf, linear(self.offset, self.strides, index))


class Pointwise(Value):
    """An unrealized elementwise value: ``fn(ops, index)`` builds it with an ops handler
    (kiln/lowering/handler.py) and returns the handler's value."""

    def __init__(self, shape: tuple, dtype: Any, fn: Callable[[Any, Sequence[Affine]], Any],
                 cost: int, origins: tuple) -> None:
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.fn = fn
        self.cost = cost
        self.origins = origins  # graph nodes it came from (names, source lines)
        # computed from reductions' results (and constants) alone: see RECOMPUTE_COST
        self.per_point = False

    def load(self, ops: Any, index: Sequence[Affine]) -> Any:
        return self.fn(ops, index)


class Scalar(Value):
    """An index-independent value: a compile-time constant (``value``) or a runtime scalar
    argument of the kernel (``name``, the graph input it comes from). ``weak``: a Python
    scalar (NEP 50)."""

    def __init__(self, dtype: Any, weak: bool = False, value: Any = None,
                 name: str | None = None) -> None:
        self.shape = ()
        self.dtype = np.dtype(dtype)
        self.weak = weak
        self.value = value  # the Python value when it is a compile-time constant
        self.name = name

    @property
    def arg(self) -> bool:
        return self.name is not None

    def load(self, ops: Any, index: Sequence[Affine]) -> Any:
        if self.arg:
            return ops.scalar_arg(self)
        return ops.constant(self.value, self.dtype)


def run_time_index(value: Any) -> bool:
    """Is ``value`` a run-time integer a subscript can take as a size symbol (``x[i]``,
    ``x[:n]``, kiln/lowering/sizes.py kind "int"): a Python int input, or a NumPy integer
    one (``np.int64(3)``, an ``np.argmax`` result passed in), which NumPy reads the same
    way (``__index__``)?"""
    if not isinstance(value, Scalar) or not value.arg:
        return False
    pytype = getattr(value, "pytype", None)
    return pytype is int or (pytype is None and not value.weak and value.dtype.kind in "iu")


# A closure read through a broadcast is computed again for every repeat along the dims it
# is broadcast over. Where those dims are all inside the dims it varies along (a row's
# mean against its row) the C compiler hoists it out of the inner loop; where one is
# outside (``np.exp(a) * B`` with ``a`` along B's rows: every row recomputes every exp)
# it is computed once into a buffer instead, once it costs about a libm call and would be
# computed RECOMPUTE_REPEATS times or more (3x slower than NumPy's one pass per op before).
# A closure of reductions' results alone (``per_point``: a mean, a std, ``1 / s``) read
# back along the reduced axes is realized at any cost: it becomes one statement per point
# of the reduction's own kernel (a 'scalar' stage), no buffer and no launch. In a column
# reduction's kernel the points run innermost, so nothing else hoists it: ``(x - m) / s``
# of x.mean(0), x.std(0) on 1000x10 divided and took a square root per element (31 us,
# split by a graph break 13 us).
RECOMPUTE_COST = 8
RECOMPUTE_REPEATS = 4


def recompute_repeats(value_shape: tuple, out_shape: tuple, broadcast: Sequence[bool] | None = None) -> int:
    """How many times a value of ``value_shape`` read at every point of ``out_shape`` is
    recomputed that a compiler cannot hoist: the product of the broadcast dims outside
    the innermost dim it varies along (a symbolic size counts as RECOMPUTE_REPEATS).
    ``broadcast`` (one flag per out dim) says which dims are broadcast where the value's
    own shape does not (a zero-stride view)."""
    if broadcast is None:
        lead = len(out_shape) - len(value_shape)
        padded = (1,) * lead + tuple(value_shape)
        broadcast = [isinstance(v, int) and v == 1 for v in padded]
    if any(isinstance(n, int) and n == 0 for n in out_shape):
        return 1
    varying = [d for d, (b, n) in enumerate(zip(broadcast, out_shape))
               if not b and not (isinstance(n, int) and n == 1)]
    if not varying:
        return 1      # loop-invariant everywhere: hoisted
    repeats = 1
    for d in range(varying[-1]):
        n = out_shape[d]
        if broadcast[d] and not (isinstance(n, int) and n == 1):
            repeats *= n if isinstance(n, int) else RECOMPUTE_REPEATS
    return repeats


def recomputed(value: Value, out_shape: tuple, broadcast: Sequence[bool] | None = None) -> bool:
    """Should ``value`` (a closure) be realized before being read at every point of
    ``out_shape``? (see RECOMPUTE_COST)"""
    return isinstance(value, Pointwise) and value.cost >= (1 if value.per_point else RECOMPUTE_COST) and \
        recompute_repeats(tuple(value.shape), tuple(out_shape), broadcast) >= RECOMPUTE_REPEATS


def broadcast_index(value_shape: tuple, out_index: Sequence[Affine]) -> list[Affine]:
    """Index into a value broadcast to a larger shape (NumPy's right-aligned rule)."""
    lead = len(out_index) - len(value_shape)
    return [Affine(0) if d == 1 else out_index[lead + k] for k, d in enumerate(value_shape)]
