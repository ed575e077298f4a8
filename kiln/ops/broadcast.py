"""broadcast_to and sum_to: each is the other's derivative, and every rule that
broadcasts relies on sum_to to bring a gradient back to its input's shape."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import layout
from .meta import TensorMeta, shape_of
from .registry import Bound, Category, F, declare, spell


def sum_to_impl(x: Any, shape: tuple) -> Any:
    """Sum ``x`` over the dimensions that broadcasting added to reach it from ``shape``."""
    x = np.asarray(x)
    shape = tuple(shape)
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and x.shape[lead + i] != 1)
    if axes:
        x = x.sum(axis=axes, keepdims=True)
        if lead:
            x = x.reshape(x.shape[lead:])
    return x.reshape(shape) if x.shape != shape else x


def _sum_to_meta(x: Any, shape: tuple) -> TensorMeta:
    return TensorMeta(shape, x.dtype)


sum_to = declare("sum_to", Category.REDUCTION, sum_to_impl, inputs=("x",),
                 params={"shape": ()}, meta=_sum_to_meta,
                 vjp=lambda g, out, x, shape: (F.broadcast_to(g, shape=shape_of(x)),),
                 doc="sum over broadcast dimensions down to `shape` (the adjoint of broadcast_to)")
sum_to.lowering = {"reduce": "sum", "axes": "broadcast"}  # a sum over the axes broadcast to ``shape``


def _broadcast_to_impl(x: Any, shape: tuple) -> Any:
    return np.broadcast_to(x, shape)


broadcast_to = declare("broadcast_to", Category.VIEW, _broadcast_to_impl, inputs=("x",),
                       params={"shape": ()}, layout=layout.broadcast_to, read_only=True,
                       vjp=lambda g, out, x, shape: (F.sum_to(g, shape=shape_of(x)),),
                       doc="numpy.broadcast_to: a read-only zero-stride view")


def _broadcast_to_normalize(array, shape, subok=False):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return Bound(broadcast_to, (array,), {"shape": shape})


spell(np.broadcast_to, broadcast_to, _broadcast_to_normalize, "numpy.broadcast_to")

# Linear maps with real coefficients: their rules hold for complex values as written.
for _name in ('broadcast_to', 'sum_to'):
    F.__getattr__(_name).complex_grad = True
