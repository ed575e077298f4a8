"""NumPy's memory layout of computed results (``order='K'``).

NumPy allocates a ufunc's, a reduction's, a scan's or a join's result in the axis order
its iterator picks from the operands' strides: Fortran-ordered in, Fortran-ordered out; a
transposed operand makes a transposed result (``np.concatenate``, ``np.cumsum``,
``np.sort`` and ``np.copy`` follow it too). Users see it in ``.strides``, ``.flags``,
``ravel(order='K')`` and in whether a later ``.T.ravel()`` is a view. Rather than
re-implementing the iterator's rule per op, kiln asks NumPy: the op's own kernel runs on
tiny stand-ins (every dimension longer than 1 shrunk to 2) that keep each operand's axis
order, zero strides and reversed axes, and the order of the stand-in result is the order
of the real one. Lowering asks it for the buffers it returns (kiln/lowering/result_layouts.py
``note_layout``); aot's alias analysis for the stand-ins of computed values
(kiln/aot/functionalize.py), so a view of one is a view or a copy as in NumPy.

    >>> import numpy as np
    >>> layout_of(np.add, [Strided((3, 4), (1, 3)), 1.0], {}, (3, 4))   # Fortran in, Fortran out
    (1, 3)
    >>> layout_of(np.concatenate, [(Strided((3, 4), (1, 3)), Strided((3, 4), (1, 3)))], {}, (6, 4))
    (1, 6)
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from .meta import on_stand_ins


class Strided(NamedTuple):
    """An operand's shape, strides (elements) and dtype: what its stand-in is built from
    (the dtype too: ``np.invert`` or ``np.left_shift`` take no float)."""
    shape: tuple
    strides: tuple
    dtype: Any = np.float64


def c_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """C-contiguous strides (elements); a size-0 axis counts as 1, as NumPy does."""
    return strides_in_order(shape, range(len(shape)))


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


def empty_in_order(shape: Sequence[int], order: Sequence[int], dtype: Any, xp: Any = np) -> Any:
    """An empty array of ``shape`` laid out slowest-to-fastest as ``order`` (axes in place:
    ``xp.empty`` of the permuted shape, transposed back)."""
    return xp.empty(tuple(shape[a] for a in order), dtype).transpose(tuple(np.argsort(order)))


def is_c(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """C-contiguous with NumPy's own strides (size-1 axes included: they show in .strides)."""
    return tuple(strides) == c_strides(shape)


def _stand_in(shape: Sequence[int], strides: Sequence[int], dtype: Any = np.float64) -> np.ndarray:
    """A small real array with the axis order, zero strides and reversals of a window,
    contiguous only where the window is (order='A' and np.insert's Fortran rule ask)."""
    small = tuple(min(d, 2) for d in shape)
    live = [a for a in range(len(shape)) if strides[a] != 0 or shape[a] <= 1]
    order = [a for a in axis_order(shape, strides) if a in live]
    base = np.ones(tuple(small[a] for a in order), dtype)   # nonzero: argwhere finds them all
    gapped = [i for i, a in enumerate(order) if small[a] > 1]
    if gapped and len(live) == len(shape) and \
            contiguous_order(shape, [abs(s) for s in strides]) is None:
        # every second element of a twice-as-long fastest axis: not contiguous either
        fastest = gapped[-1]
        wide = np.ones(base.shape[:fastest] + (2 * base.shape[fastest],) + base.shape[fastest + 1:], dtype)
        base = wide[(slice(None),) * fastest + (slice(None, None, 2),)]
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


def _order_of_result(res: np.ndarray) -> tuple[int, ...] | None:
    return contiguous_order(res.shape, [s // res.itemsize for s in res.strides])


def _leaves(value: Any) -> Any:
    if isinstance(value, Strided):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)


def _filled(value: Any) -> Any:
    if isinstance(value, Strided):
        return _stand_in(value.shape, value.strides, value.dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(_filled(v) for v in value)
    return value


def layout_of(impl: Any, operands: Sequence[Any], params: dict, shape: tuple) -> tuple[int, ...] | None:
    """Strides (elements) NumPy gives ``impl(*operands, **params)`` of ``shape``, or None
    for C order (or where the stand-ins cannot tell). Each array operand is a
    :class:`Strided`, also inside a sequence (a join's arrays); anything else passes as is
    (a scalar operand whose value is not known: any value of its dtype)."""
    if not getattr(impl, "layout_of_c_inputs", False) and params.get("order") != "F" and \
            not any(not is_c(o.shape, o.strides) for o in _leaves(operands)):
        # C order in, C order out (but np.delete's arr[:, keep] says otherwise, and so does
        # order='F': np.zeros_like(x, order='F') + s, methods.py hand probe)
        return None
    try:
        res = on_stand_ins(impl, *_filled(operands), **params)
    except Exception:   # noqa: BLE001 - a kernel the tiny stand-ins do not fit: C order
        return None
    if not isinstance(res, np.ndarray) or res.ndim != len(shape) or res.size == 0:
        return None
    order = _order_of_result(res)
    if order is None:
        return None
    strides = strides_in_order(shape, order)
    return None if is_c(shape, strides) else strides
