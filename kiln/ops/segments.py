"""Segment reductions: ``np.<ufunc>.reduceat(a, indices, axis)`` (a CSR matrix-vector
product's row sums ``np.add.reduceat(data * x[indices], indptr[:-1])``, per-group maxima
of sorted keys).

One op for the binary ufuncs, named by the ufunc in its params. Its kernel is NumPy's own
``reduceat`` (an extern call), so the odd cases keep NumPy's meaning without kiln
restating them: a segment whose next index is not larger is the single element at its
start, the last runs to the end, an index out of range raises NumPy's IndexError (a
``may_raise`` op, never removed as dead code). The result's shape depends only on how
many indices there are, so the call stays in the graph; its dtype is the one NumPy's loop
gives (the shape rule runs the kernel on stand-ins). No derivative rule yet
(``Differentiation rule for 'reduceat' not implemented``).

    >>> import numpy as np
    >>> from kiln.ops import F
    >>> F.reduceat(np.arange(6.0), np.array([0, 4, 1]), ufunc="add", axis=0, dtype=None)
    array([ 6.,  4., 15.])
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .meta import ndim_of, normalize_one_axis
from .reduction import dtype_param, loop_dtype, out_param
from .registry import Bound, Category, declare, spell, ufunc_method_key


def _reduceat_impl(a: Any, indices: Any, ufunc: str = "add", axis: int = 0, dtype: Any = None) -> Any:
    return getattr(np, ufunc).reduceat(a, indices, axis=axis, dtype=dtype)


reduceat = declare("reduceat", Category.EXTERN, _reduceat_impl, inputs=("a", "indices"),
                   params={"ufunc": "add", "axis": 0, "dtype": None}, may_raise=True,
                   fresh_result=True,
                   doc="numpy.<ufunc>.reduceat(a, indices, axis, dtype): reductions over "
                       "the segments that start at indices")


def _normalizer(ufunc: np.ufunc):
    name = f"numpy.{ufunc.__name__}.reduceat"

    def normalize(array, indices, axis=0, dtype=None, out=None):
        axis = normalize_one_axis(axis, ndim_of(array))
        return Bound(reduceat, (array, indices),
                     {"ufunc": ufunc.__name__, "axis": axis,
                      "dtype": dtype_param(loop_dtype(array, dtype, out), name)},
                     out_param(out))
    return normalize


# The binary ufuncs whose reduceat users write (a fixed list, so the spellings are the same
# on every NumPy version); others run as Python.
_UFUNCS = ("add", "subtract", "multiply", "divide", "floor_divide", "power", "maximum",
           "minimum", "fmax", "fmin", "logical_and", "logical_or", "logical_xor", "bitwise_and",
           "bitwise_or", "bitwise_xor", "logaddexp", "logaddexp2", "hypot", "gcd", "lcm")

for _name in _UFUNCS:
    spell(ufunc_method_key(getattr(np, _name), "reduceat"), reduceat,
          _normalizer(getattr(np, _name)), f"numpy.{_name}.reduceat")
