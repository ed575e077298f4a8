"""broadcast_to and sum_to: each is the other's derivative, and every rule that
broadcasts relies on sum_to to bring a gradient back to its input's shape."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import layout
from .meta import TensorMeta, as_array, namespace, shape_of
from .registry import Bound, Category, F, declare, spell


def sum_to_impl(x: Any, shape: tuple) -> Any:
    """Sum ``x`` over the dimensions that broadcasting added to reach it from ``shape``."""
    x = as_array(x)
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


# With nothing to sum (a gradient already of its input's shape) the result is ``x`` itself
# or a reshape of it: it may alias, so a backend keeps x's memory alive while it lives
# (a wrapper that reused it wrote np.cross's gradient over an input still being read).
sum_to = declare("sum_to", Category.REDUCTION, sum_to_impl, inputs=("x",),
                 params={"shape": ()}, meta=_sum_to_meta, aliases=True,
                 vjp=lambda g, out, x, shape: (F.broadcast_to(g, shape=shape_of(x)),),
                 doc="sum over broadcast dimensions down to `shape` (the adjoint of broadcast_to)")
sum_to.lowering = {"reduce": "sum", "axes": "broadcast"}  # a sum over the axes broadcast to ``shape``


def _broadcast_to_impl(x: Any, shape: tuple) -> Any:
    return np.broadcast_to(x, shape)


broadcast_to = declare("broadcast_to", Category.VIEW, _broadcast_to_impl, inputs=("x",),
                       params={"shape": ()}, layout=layout.broadcast_to, read_only=True, view_of_input=True,
                       vjp=lambda g, out, x, shape: (F.sum_to(g, shape=shape_of(x)),),
                       doc="numpy.broadcast_to: a read-only zero-stride view")


def _broadcast_to_normalize(array, shape, subok=False):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return Bound(broadcast_to, (array,), {"shape": shape})


spell(np.broadcast_to, broadcast_to, _broadcast_to_normalize, "numpy.broadcast_to")


def _broadcast_arrays_impl(x: Any, shape: tuple) -> Any:
    # NumPy's own: writeable with a FutureWarning on reading the flag and a
    # DeprecationWarning on writing, where x is writeable (read-only otherwise)
    xp = namespace(x)   # (CuPy's on a GPU array: NumPy's would see a foreign operand)
    if xp is np:
        # NumPy's first step for each argument; one already of the shape is given back
        # as it is (x itself, a Python scalar's 0-d array): no broadcast_arrays call, whose
        # Python layers cost ~3 us (pmt_fv_broadcast_when in test_programs_real7.py, five
        # scalars: 1.6x NumPy's time compiled)
        a = np.array(x, copy=None)
        if a.shape == tuple(shape):
            return a
    return xp.broadcast_arrays(x, xp.broadcast_to(xp.zeros((), np.bool_), shape))[0]


# What np.broadcast_arrays gives for each argument: x itself where it has the shape
# already, else a zero-stride view (numeric.py). Kiln never writes into it
# (read_only): a write runs as Python, where NumPy warns and writes.
broadcast_arrays_view = declare(
    "broadcast_arrays_view", Category.VIEW, _broadcast_arrays_impl, inputs=("x",),
    params={"shape": ()}, layout=layout.broadcast_to, read_only=True,
    vjp=lambda g, out, x, shape: (F.sum_to(g, shape=shape_of(x)),),
    doc="an argument of numpy.broadcast_arrays: itself at the shape already, else a "
        "zero-stride view, writeable with NumPy's warnings where its base is")

# Linear maps with real coefficients: their rules hold for complex values as written.
for _name in ('broadcast_to', 'broadcast_arrays_view', 'sum_to'):
    F.__getattr__(_name).complex_grad = True


# ---- sliding_window_view: a read-only view with the windowed axes repeated -------------------

def _sliding_impl(x: Any, window_shape: tuple, axis: tuple) -> Any:
    return np.lib.stride_tricks.sliding_window_view(x, window_shape, axis)


def _sliding_layout(w: layout.Window, window_shape: tuple, axis: tuple) -> layout.Window | None:
    # NumPy's own construction: each windowed axis shrinks by its window - 1 and comes back
    # at the end with the same stride
    shape = list(w.shape)
    for a, n in zip(axis, window_shape):
        if not isinstance(shape[a], int) or shape[a] < n:
            return None
        shape[a] -= n - 1
    return layout.Window(tuple(shape) + tuple(window_shape),
                         tuple(w.strides) + tuple(w.strides[a] for a in axis), w.offset)


def _sliding_vjp(g, out, x, window_shape, axis):
    # each element of x appears in every window covering it: scatter-add g back through
    # the windows of x's flat positions (static for the shapes of this graph)
    shape = tuple(shape_of(x))
    size = int(np.prod(shape))
    where = np.lib.stride_tricks.sliding_window_view(np.arange(size).reshape(shape), window_shape, axis)
    flat = F.index_add(F.zeros(shape=(size,), dtype=g.dtype), (where.reshape(-1),),
                       F.reshape(g, shape=(where.size,)))
    return (F.reshape(flat, shape=shape),)


sliding_window_view = declare(
    "sliding_window_view", Category.VIEW, _sliding_impl, inputs=("x",),
    params={"window_shape": (), "axis": ()}, layout=_sliding_layout, read_only=True,
    vjp=_sliding_vjp, doc="numpy.lib.stride_tricks.sliding_window_view: a read-only view")


def _sliding_normalize(x, window_shape, axis=None, *, subok=False, writeable=False):
    from .meta import normalize_one_axis, reject
    if writeable:
        reject("sliding_window_view", "writeable", True, "write into x itself")
    window_shape = tuple(window_shape) if np.iterable(window_shape) else (window_shape,)
    nd = len(shape_of(x))
    if axis is None:
        if len(window_shape) != nd:
            raise ValueError(f"Since axis is `None`, must provide window_shape for all "
                             f"dimensions of `x`; got {len(window_shape)} window_shape "
                             f"elements and `x.ndim` is {nd}.")
        axis = tuple(range(nd))
    else:
        axis = tuple(axis) if np.iterable(axis) else (axis,)
        if len(window_shape) != len(axis):
            raise ValueError(f"Must provide matching length window_shape and axis; got "
                             f"{len(window_shape)} window_shape elements and {len(axis)} axes elements.")
        axis = tuple(normalize_one_axis(a, nd) for a in axis)
    if any(int(n) < 0 for n in window_shape):
        raise ValueError("`window_shape` cannot contain negative values")
    return Bound(sliding_window_view, (x,), {"window_shape": tuple(int(n) for n in window_shape),
                                             "axis": axis})


spell(np.lib.stride_tricks.sliding_window_view, sliding_window_view, _sliding_normalize,
      "numpy.lib.stride_tricks.sliding_window_view")
