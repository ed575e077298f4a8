"""What lowering produces besides values (kiln/lowering/loop_ir.py): the nodes the
scheduler fuses and the wrapper calls.

- :class:`ComputeNode` — a realized computation, one buffer written by a loop nest:
  ``pointwise`` (its ``value`` over the buffer's shape), ``reduction`` (its ``src``
  over ``in_shape``, reduced over ``axes`` with ``combine``) or ``scan`` (its ``src``
  over the buffer's shape, each prefix along the one axis in ``axes`` combined and
  stored: cumsum, cumprod);
- :class:`ExternNode` — a call of an op's NumPy kernel from the wrapper;
- :class:`Opaque` — a Python object only the wrapper handles (a tuple an extern returned).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops.registry import iter_leaves, map_leaves
from .handler import RecordingHandler
from .loop_ir import Affine, Buffer, BufferValue, Pointwise, Value


class Opaque(Value):
    """A Python object only the wrapper handles (a tuple from an extern, say)."""

    def __init__(self, name: str, meta: Any) -> None:
        self.name = name
        self.meta = meta
        self.shape = getattr(meta, "shape", ())
        self.dtype = getattr(meta, "dtype", np.dtype(object))


class ComputeNode:
    """A realized computation: one buffer written by a loop nest (fused later)."""

    def __init__(self, name: str, buf: Buffer, kind: str, origins: tuple) -> None:
        self.name = name
        self.buf = buf
        self.kind = kind  # 'pointwise' | 'reduction' | 'scan'
        self.origins = origins
        # pointwise: value (shape == buf.shape)
        self.value: Value | None = None
        # reduction: src value over in_shape, reduced axes, combine, accumulator dtype
        self.src: Value | None = None
        self.in_shape: tuple = ()
        self.axes: tuple = ()
        self.combine = ""
        self.acc_dtype: np.dtype | None = None
        # a sum of a selection x[mask] (reductions.py lower_selected): (mask, x), whose
        # selected terms a loop in NumPy's order adds compacted; src is where(mask, x, 0)
        self.select: tuple | None = None

    @property
    def shape(self) -> tuple:
        return self.in_shape if self.kind in ("reduction", "scan") else self.buf.shape

    @property
    def loop_axes(self) -> tuple:
        """The axes a kernel running this node loops over per outer point."""
        return self.axes if self.kind in ("reduction", "scan") else ()

    def __repr__(self) -> str:
        return f"ComputeNode({self.name}, {self.kind}, {self.buf.shape})"


class ExternNode:
    """A call of an op's NumPy kernel from the wrapper (matmul, linalg, unlowered ops)."""

    def __init__(self, name: str, op: Any, args: tuple, params: dict, out: Value,
                 origins: tuple) -> None:
        self.name = name
        self.op = op
        self.args = args
        self.params = params
        self.out = out
        self.origins = origins
        self.kind = "extern"

    def may_raise(self) -> bool:
        """May this call raise for some input values (Op.raises on the graph call it
        lowers: ``x[1:] = v`` into a float array cannot, ``x[i] = v`` can)?"""
        node = self.origins[0] if self.origins else None
        if getattr(node, "target", None) is self.op:
            return self.op.raises(node.args, node.kwargs)
        return self.op.may_raise or self.op.raises_for is not None

    def __repr__(self) -> str:
        return f"ExternNode({self.name}, {self.op.name})"


def iter_values(value: Any):
    return (v for v in iter_leaves(value) if isinstance(v, Value))


def map_values(value: Any, fn) -> Any:
    return map_leaves(value, lambda v: fn(v) if isinstance(v, Value) else v)


def buffers_read(value: Value) -> set:
    """Names of the buffers a value's code loads (recorded by an ops handler)."""
    if isinstance(value, BufferValue):
        return {value.buf.name}
    if not isinstance(value, Pointwise):
        return set()
    rec = RecordingHandler()
    value.fn(rec, [Affine.var(f"d{k}") for k in range(len(value.shape))])
    return {b.name for b, _ in rec.loads}
