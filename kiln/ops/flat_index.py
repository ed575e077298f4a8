"""Flat positions and index tuples: np.unravel_index, np.ravel_multi_index and np.ix_.

Both are EXTERN ops calling NumPy's kernel (an index out of range raises NumPy's
ValueError, so they are ``may_raise``). ``unravel_index`` gives one array per dimension of
``shape``: the op stacks them (``(len(shape),) + indices.shape``) and its composite
spelling hands back NumPy's tuple as rows of it (so a 0-d index gives NumPy scalars).
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .meta import TensorMeta, columns_array, ndim_of, reject, shape_of, to_fake
from .numeric import _dtype
from .registry import Bound, Category, Composite, F, N, declare, iter_leaves, spell, spell_composite

INTP = np.dtype(np.intp)


def _dims(shape: Any) -> tuple:
    return (operator.index(shape),) if not isinstance(shape, (tuple, list)) else \
        tuple(operator.index(n) for n in shape)


def _unravel_impl(indices, shape, order="C"):
    found = np.unravel_index(indices, shape, order=order)
    # NumPy's arrays are the columns of one C-ordered (..., len(shape)) array: that array
    # (np.stack's Python took ~3 us); of a scalar index, NumPy scalars
    base = columns_array(found)
    if base is not None:
        return base
    if all(type(v) is INTP.type for v in found):
        return np.array(found, INTP)
    return np.stack(found, axis=-1)


def _unravel_meta(indices, shape, order="C"):
    # NumPy's own errors for a float index or a bad shape, on an empty stand-in
    np.unravel_index(np.zeros((0,), _dtype(indices)), shape, order=order)
    return TensorMeta(tuple(shape_of(indices)) + (len(shape),), INTP)


unravel_index = declare(
    "unravel_index", Category.EXTERN, _unravel_impl, inputs=("indices",),
    params={"shape": (), "order": "C"}, meta=_unravel_meta, may_raise=True, fresh_result=True,
    doc="numpy.unravel_index's arrays, stacked on a new last axis (NumPy's own layout: "
        "each array is a strided view of one (..., len(shape)) array)")


def _unravel(indices, shape, order):
    p = F.unravel_index(indices, shape=shape, order=order)
    lead = (slice(None),) * ndim_of(indices)
    return tuple(N.getitem(p, lead + (i,)) for i in range(len(shape)))


def _unravel_normalize(indices, shape, order="C"):
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    if not hasattr(indices, "dtype"):
        indices = np.asarray(indices)
    return Composite(_unravel, (indices,), {"shape": _dims(shape), "order": order})


spell_composite(np.unravel_index, ("unravel_index", "getitem"), _unravel_normalize,
                "numpy.unravel_index")


def _ravel_multi_meta(multi_index, dims, mode="raise", order="C"):
    np.ravel_multi_index(tuple(np.zeros((0,), _dtype(i)) for i in multi_index), dims,
                         mode=mode, order=order)
    shape = np.broadcast_shapes(*[tuple(shape_of(i)) for i in multi_index])
    return TensorMeta(shape, INTP)


ravel_multi_index = declare(
    "ravel_multi_index", Category.EXTERN,
    lambda multi_index, dims, mode="raise", order="C": np.ravel_multi_index(
        multi_index, dims, mode=mode, order=order),
    inputs=("*multi_index",), params={"dims": (), "mode": "raise", "order": "C"},
    meta=_ravel_multi_meta, may_raise=True, fresh_result=True,
    doc="numpy.ravel_multi_index: the flat positions of index tuples")


def _ravel_multi_normalize(multi_index, dims, mode="raise", order="C"):
    dims = _dims(dims)
    if isinstance(mode, (tuple, list)):
        mode = tuple(mode)
    arrays = tuple(i if hasattr(i, "dtype") else np.asarray(i) for i in multi_index)
    return Bound(ravel_multi_index, (arrays,), {"dims": dims, "mode": mode, "order": order})


spell(np.ravel_multi_index, ravel_multi_index, _ravel_multi_normalize,
      "numpy.ravel_multi_index")


# np.ix_: each sequence reshaped onto its own axis, (1,) * k + (n,) + (1,) * (nd - k - 1),
# a view as NumPy's reshape of a 1-D array is. Sequences that are not arrays become arrays
# here as NumPy makes them (an empty one as intp); a boolean array is its nonzero
# positions, taken here for a constant one (a traced one's count is known only when the
# graph runs: rejected, so the call runs as Python).

def _ix(*seqs):
    nd = len(seqs)
    return tuple(N.reshape(N.asarray(s) if isinstance(s, list) else s, (1,) * k + (-1,) + (1,) * (nd - k - 1))
                 for k, s in enumerate(seqs))


def _ix_normalize(*args):
    seqs = []
    for new in args:
        if isinstance(new, (list, tuple)) and any(isinstance(v, TensorMeta) for v in iter_leaves(new)):
            # ``dofs = [2 * n1, 2 * n1 + 1]`` of numbers computed in the function: an
            # array made in the graph (_ix), checked here on what NumPy makes of stand-ins
            made = np.asarray(to_fake(new))
            if made.ndim == 1 and made.dtype != np.bool_:
                seqs.append(list(new))
                continue
            new = TensorMeta(made.shape, made.dtype)
        elif not hasattr(new, "dtype") or not hasattr(new, "shape"):
            new = np.asarray(new)
            if new.size == 0:
                new = new.astype(INTP)
        if ndim_of(new) != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if _dtype(new) == np.bool_:
            if not isinstance(new, np.ndarray):
                reject("numpy.ix_", "*args", "<a boolean array computed in the graph>",
                       "its positions are known only when the graph runs, so the call runs "
                       "as Python")
            new = new.nonzero()[0]
        seqs.append(new)
    return Composite(_ix, tuple(seqs), {})


spell_composite(np.ix_, ("reshape",), _ix_normalize, "numpy.ix_")
