"""NumPy's memory layout of results (``order='K'``), for the buffers kiln returns.

NumPy allocates a ufunc's or a reduction's result in the axis order its iterator picks
from the operands' strides: Fortran-ordered in, Fortran-ordered out; a transposed operand
makes a transposed result. Users see it in ``.strides``, ``.flags`` and
``ravel(order='K')``. Rather than re-implementing the iterator's rule, kiln asks NumPy:
the op's own kernel runs on tiny stand-ins (every dimension longer than 1 shrunk to 2)
that keep each operand's axis order, zero strides and reversed axes, and the order of the
stand-in result is the order of the real one.

    >>> import numpy as np
    >>> layout_of(np.add, [((3, 4), (1, 3)), 1.0], {}, (3, 4))   # Fortran in, Fortran out
    (1, 3)
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .loop_ir import contiguous_strides


def axis_order(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, ...]:
    """Axes from slowest to fastest varying in memory (ties keep C order)."""
    return tuple(sorted(range(len(shape)), key=lambda a: (-abs(strides[a]), a)))


def strides_in_order(shape: Sequence[int], order: Sequence[int]) -> tuple[int, ...]:
    """Contiguous strides (elements) for ``shape`` laid out slowest-to-fastest as ``order``."""
    strides = [0] * len(shape)
    acc = 1
    for a in reversed(order):
        strides[a] = acc
        acc *= max(shape[a], 1)
    return tuple(strides)


def is_c(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """C-contiguous with NumPy's own strides (size-1 axes included: they show in .strides)."""
    return tuple(strides) == contiguous_strides(shape)


def _stand_in(shape: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """A small real array with the axis order, zero strides and reversals of a window."""
    small = tuple(min(d, 2) for d in shape)
    live = [a for a in range(len(shape)) if strides[a] != 0 or shape[a] <= 1]
    order = [a for a in axis_order(shape, strides) if a in live]
    base = np.zeros(tuple(small[a] for a in order))
    arr = base.transpose(np.argsort(order))          # axes back in place, memory in `order`
    arr = arr.reshape(tuple(small[a] if a in live else 1 for a in range(len(shape))))
    arr = np.broadcast_to(arr, small)
    flip = tuple(slice(None, None, -1) if strides[a] < 0 and small[a] > 1 else slice(None)
                 for a in range(len(shape)))
    return arr[flip]


def contiguous_order(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, ...] | None:
    """The slowest-to-fastest axis order of contiguous strides (elements; size-1 axes placed
    where their strides put them, as NumPy does), or None when they are not contiguous."""
    left = list(range(len(shape)))
    fastest_first: list[int] = []
    acc = 1
    while left:
        here = [a for a in left if strides[a] == acc or shape[a] <= 1 and abs(strides[a]) <= acc]
        if not here:
            return None
        here.sort(key=lambda a: (shape[a] > 1, -a))
        a = here[0]
        fastest_first.append(a)
        left.remove(a)
        acc *= max(shape[a], 1)
    return tuple(reversed(fastest_first))


def in_order(a: np.ndarray, strides: tuple, order: tuple) -> np.ndarray:
    """``a`` when its strides (bytes) are ``strides`` on every axis longer than 1 (the
    layout NumPy gave it and a kernel was built for), else a copy in that layout (the
    wrapper's check of an extern result: kiln/lowering/externs.py ``_numpy_order``)."""
    if a.ndim == len(strides) and all(s == t or n <= 1 for s, t, n in zip(a.strides, strides, a.shape)):
        return a
    out = np.empty(tuple(a.shape[k] for k in order), a.dtype).transpose(tuple(np.argsort(order)))
    out[...] = a
    return out


def _order_of_result(res: np.ndarray) -> tuple[int, ...] | None:
    return contiguous_order(res.shape, [s // res.itemsize for s in res.strides])


def layout_of(impl: Any, operands: list, params: dict, shape: tuple) -> tuple[int, ...] | None:
    """Strides (elements) NumPy gives ``impl(*operands, **params)`` of ``shape``, or None
    for C order. Each array operand is ``(shape, strides)``; anything else passes as is."""
    if not any(isinstance(o, tuple) and len(o) == 2 and isinstance(o[0], tuple)
               and not is_c(*o) for o in operands):
        return None
    args = [_stand_in(*o) if isinstance(o, tuple) and len(o) == 2 and isinstance(o[0], tuple)
            else o for o in operands]
    try:
        with np.errstate(all="ignore"):
            res = impl(*args, **params)
    except Exception:
        return None
    if not isinstance(res, np.ndarray) or res.ndim != len(shape) or res.size == 0:
        return None
    order = _order_of_result(res)
    if order is None:
        return None
    strides = strides_in_order(shape, order)
    return None if is_c(shape, strides) else strides


def contiguous_like(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, ...] | None:
    """A window's layout made contiguous (a view of a bigger array keeps its axis order,
    a reversed axis stays reversed: np.flip's negative strides); None for C order."""
    if math.prod(shape) <= 1:
        return None
    out = strides_in_order(shape, axis_order(shape, strides))
    out = tuple(-s if strides[a] < 0 and shape[a] > 1 else s for a, s in enumerate(out))
    return None if is_c(shape, out) else out
