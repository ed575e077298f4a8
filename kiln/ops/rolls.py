"""Differences, rolls and rotations along an axis: ``np.diff``, ``np.roll``, ``np.rot90``.

Composite spellings (see kiln/ops/numeric.py): each normalizes to a
:class:`~kiln.ops.registry.Composite` written with ``N.<numpy name>(...)`` calls, so it
fuses, differentiates and runs on every backend through the ops it calls (getitem,
concatenate, flip, transpose, take, ...). ``np.diff`` and ``np.roll`` cut slices that
count from the ends of an axis, so one entry serves every size that admits the same cut
(``relative_sizes``); ``np.roll`` by a shift read from an array (a 0-d integer) gathers
with ``take`` at run time. The registrations happen on import (kiln/ops/__init__.py).
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .meta import ndim_of, normalize_one_axis, reject, shape_of
from .numeric import _dtype, _is_array, _slice_along, array_like
from .registry import Composite, F, N, spell_composite


def _diff(a: Any, n: int, axis: int, prepend: Any, append: Any) -> Any:
    a = array_like(a)
    nd = ndim_of(a)
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_one_axis(axis, nd)
    parts = []
    for extra in (prepend, append):
        if extra is None:
            parts.append(None)
            continue
        if not _is_array(extra) or ndim_of(extra) == 0:
            shape = list(shape_of(a))
            shape[axis] = 1
            extra = N.broadcast_to(extra, tuple(shape))
        parts.append(extra)
    if parts[0] is not None or parts[1] is not None:
        a = N.concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis=axis)
    for _ in range(n):
        hi = N.getitem(a, _slice_along(nd, axis, slice(1, None)))
        lo = N.getitem(a, _slice_along(nd, axis, slice(None, -1)))
        a = N.not_equal(hi, lo) if _dtype(a) == np.bool_ else N.subtract(hi, lo)
    return a


def _diff_normalize(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    return Composite(_diff, (a,), {"n": n, "axis": axis,
                                   "prepend": None if prepend is np._NoValue else prepend,
                                   "append": None if append is np._NoValue else append},
                     relative_sizes=True)


spell_composite(np.diff, ("getitem", "subtract", "concatenate"), _diff_normalize, "numpy.diff")


def _roll_shifts(a: Any, shift: Any, axis: Any) -> dict:
    """{axis: the sum of its shifts} of np.roll(a, shift, axis) (axis not None)."""
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    shifts, axes = np.broadcast_arrays(np.asarray(shifts), np.asarray(axes))
    total: dict = {}
    for s, ax in zip(shifts.ravel().tolist(), axes.ravel().tolist()):
        ax = normalize_one_axis(ax, ndim_of(a))
        total[ax] = total.get(ax, 0) + int(s)
    return total


def _runtime_shift(s: Any) -> bool:
    """A shift known when the graph runs (an element of an array: ``np.roll(f, c[i])``)."""
    return _is_array(s) and not isinstance(s, (np.ndarray, np.generic))


def _roll(a: Any, *run_shifts: Any, shift: Any, axis: Any, run_axes: tuple = ()) -> Any:
    if axis is None and ndim_of(a) == 1:
        axis = 0   # (the flattened array is a)
    if axis is None:
        return N.reshape(_roll(N.ravel(a), *run_shifts, shift=shift, axis=0, run_axes=run_axes),
                         tuple(shape_of(a)))
    original = a
    nd = ndim_of(a)
    total = _roll_shifts(a, shift, axis)
    for ax, s in total.items():
        size = shape_of(a)[ax]
        if ax in run_axes:
            continue   # (gathered below, with the run-time shifts)
        if size and s and s % size == 0:
            # a whole turn at this size only: a[:size] (the example's number, not relative)
            # pins it, else another size would share this entry's unrolled copy
            a = N.getitem(a, _slice_along(nd, ax, slice(None, size)))
        if size == 0 or s % size == 0:
            continue
        # |s| < size: a[-s:] and a[:-s] count from the ends, the same slices for every
        # such size (_roll_normalize: relative_sizes); else the example's own cut
        cut = -s if abs(s) < size else size - s % size
        head = N.getitem(a, _slice_along(nd, ax, slice(cut, None)))
        tail = N.getitem(a, _slice_along(nd, ax, slice(None, cut)))
        a = N.concatenate([head, tail], axis=ax)
    for ax in dict.fromkeys(run_axes):
        size = shape_of(a)[ax]
        if size == 0:
            continue
        # a shift read from data: result[i] = a[(i - shift) % size], a gather
        source = np.arange(size) - total.get(ax, 0)
        for s, at in zip(run_shifts, run_axes):
            if at == ax:
                source = N.subtract(source, s)
        a = N.take(a, N.remainder(source, size), axis=ax)
    if run_axes or (total and any(shape_of(a)[ax] and s % shape_of(a)[ax] for ax, s in total.items())):
        return F.relayout(a, original, rule="K")   # NumPy's empty_like(a), filled
    return N.copy(a)


def _roll_normalize(a, shift, axis=None):
    # Every shift of a size smaller than its axis's (0 < |s| < n) is cut from the ends: the
    # part of length n - |s| is guarded (>= 2, or == 1) as a slice's length is, so each
    # size the entry admits is one where that cut is np.roll's; a shift of 0 reads no size.
    # Else (|s| >= n, or an axis of 0 or 1) the cut is the example's: specialized.
    shape = tuple(shape_of(a))
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    if any(_runtime_shift(s) for s in shifts):
        # shifts read from arrays (0-d integers) are inputs; the others stay numbers
        if not all(ndim_of(s) == 0 and np.dtype(s.dtype).kind in "iu" and np.dtype(s.dtype) != np.uint64
                   for s in shifts if _runtime_shift(s)):
            reject("numpy.roll", "shift", "<an array other than a 0-d integer>",
                   "pass Python ints or 0-d integer arrays as shifts")
        axes = axis if isinstance(axis, (tuple, list)) else (0 if axis is None else axis,)
        axes = tuple(normalize_one_axis(ax, 1 if axis is None else len(shape)) for ax in axes)
        np.broadcast(np.empty(len(shifts)), np.empty(len(axes)))   # (NumPy's error where not)
        pairs = list(zip(*np.broadcast_arrays(np.array(shifts, dtype=object), np.array(axes))))
        run = [(s, int(ax)) for s, ax in pairs if _runtime_shift(s)]
        static = [(s, int(ax)) for s, ax in pairs if not _runtime_shift(s)] or [(0, run[0][1])]
        static, static_axes = zip(*static)
        return Composite(_roll, (a,) + tuple(s for s, _ in run),
                         {"shift": static, "axis": None if axis is None else static_axes,
                          "run_axes": tuple(ax for _, ax in run)})
    relative = (axis is not None or len(shape) == 1) and all(
        s == 0 or abs(s) < shape[ax] for ax, s in _roll_shifts(a, shift, 0 if axis is None else axis).items())
    return Composite(_roll, (a,), {"shift": shift, "axis": axis}, relative_sizes=relative)


spell_composite(np.roll, ("getitem", "concatenate", "reshape", "copy", "relayout", "take", "subtract", "remainder"), _roll_normalize, "numpy.roll")


def _rot90(m: Any, k: int, axes: tuple) -> Any:
    a0, a1 = axes
    k %= 4
    if k == 0:
        return N.getitem(m, (slice(None),) * ndim_of(m))
    if k == 2:
        return N.flip(N.flip(m, a0), a1)
    perm = list(range(ndim_of(m)))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return N.transpose(N.flip(m, a1), perm)
    return N.flip(N.transpose(m, perm), a1)


def _rot90_normalize(m, k=1, axes=(0, 1)):
    axes = tuple(axes)
    nd = ndim_of(m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == nd:
        raise ValueError("Axes must be different.")
    if axes[0] >= nd or axes[0] < -nd or axes[1] >= nd or axes[1] < -nd:
        raise ValueError(f"Axes={axes} out of range for array of ndim={nd}.")
    return Composite(_rot90, (m,), {"k": operator.index(k),
                                    "axes": (axes[0] % nd, axes[1] % nd)})


spell_composite(np.rot90, ("flip", "transpose"), _rot90_normalize, "numpy.rot90")
