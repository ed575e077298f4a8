"""NumPy 2's array-API functions in ``np.linalg`` (and ``np.unstack``, ``np.vecmat``): each
is NumPy's older function over the last axes, so each is spelled as the op or composite
that one already is (``np.linalg.diagonal(x)`` is ``np.diagonal(x, axis1=-2, axis2=-1)``),
with NumPy's own checks. They had no op: a NoOpError under kiln.grad, a graph break
compiled."""
from __future__ import annotations

import numpy as np

from .matrix import _cross_normalize, _diagonal_normalize, _trace_normalize, diagonal, vecdot_normalize
from .meta import ndim_of, shape_of
from .norms import _norm_normalize, norm
from .registry import Composite, N, call_spelling, spell, spell_composite
from .shape import _matrix_transpose_normalize, transpose


def _linalg_cross_normalize(x1, x2, /, *, axis=-1):
    n1, n2 = shape_of(x1)[axis], shape_of(x2)[axis]
    if n1 != 3 or n2 != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                         f"are {n1} and {n2} dimensional instead.")
    return _cross_normalize(x1, x2, axis=axis)


def _vector_norm(x, axis, keepdims, ord):
    """NumPy's: the axes in front, merged into one, then a vector norm over it; keepdims
    puts ones back where they were."""
    shape = list(shape_of(x))
    nd = len(shape)
    if axis is None:
        y, kept = N.ravel(x), range(nd)
    elif isinstance(axis, tuple):
        kept = tuple(a % nd for a in axis)
        rest = tuple(i for i in range(nd) if i not in kept)
        size = int(np.prod([shape[i] for i in kept], dtype=int))
        y = N.reshape(N.transpose(x, axis + rest), (size, *[shape[i] for i in rest]))
    else:
        y, kept = x, (axis % nd,)
    res = call_spelling(np.linalg.norm, y, axis=0 if axis is None or isinstance(axis, tuple) else axis, ord=ord)
    if keepdims:
        for i in kept:
            shape[i] = 1
        res = N.reshape(res, tuple(shape))
    return res


def _vector_norm_normalize(x, /, *, axis=None, keepdims=False, ord=2):
    np.linalg.vector_norm(np.ones((1,) * ndim_of(x)), axis=axis, ord=ord)   # NumPy's errors (ones: see norms.py)
    return Composite(_vector_norm, (x,), {"axis": axis, "keepdims": bool(keepdims), "ord": ord})


if hasattr(np.linalg, "vector_norm"):   # NumPy 2.0+
    spell(np.linalg.diagonal, diagonal,
          lambda x, /, *, offset=0: _diagonal_normalize(x, offset, -2, -1), "numpy.linalg.diagonal")
    spell_composite(np.linalg.trace, ("diagonal", "sum"),
                    lambda x, /, *, offset=0, dtype=None: _trace_normalize(x, offset, -2, -1, dtype),
                    "numpy.linalg.trace")
    spell(np.linalg.matrix_transpose, transpose, _matrix_transpose_normalize,
          "numpy.linalg.matrix_transpose")
    spell_composite(np.linalg.vecdot, ("conjugate", "multiply", "sum"), vecdot_normalize,
                    "numpy.linalg.vecdot")
    spell_composite(np.linalg.cross, ("multiply", "subtract", "stack", "moveaxis"),
                    _linalg_cross_normalize, "numpy.linalg.cross")
    spell(np.linalg.matrix_norm, norm,
          lambda x, /, *, keepdims=False, ord="fro": _norm_normalize(x, ord, (-2, -1), keepdims),
          "numpy.linalg.matrix_norm")
    spell_composite(np.linalg.vector_norm, ("norm", "ravel", "transpose", "reshape"),
                    _vector_norm_normalize, "numpy.linalg.vector_norm")
def _unstack(x, axis):
    moved = N.moveaxis(x, axis, 0)
    return tuple(N.getitem(moved, i) for i in range(shape_of(moved)[0]))


def _unstack_normalize(x, /, *, axis=0):
    if ndim_of(x) == 0:
        raise ValueError("Input array must be at least 1-d.")
    return Composite(_unstack, (x,), {"axis": axis})


if hasattr(np, "unstack"):   # NumPy 2.1+: the arrays along an axis, as a tuple
    spell_composite(np.unstack, ("moveaxis", "getitem"), _unstack_normalize, "numpy.unstack")
