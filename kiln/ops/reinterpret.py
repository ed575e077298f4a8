"""``ndarray.view(dtype)``: the same bytes read as another dtype.

With the same itemsize every element is reinterpreted where it stands, whatever the
layout. With another itemsize NumPy regroups the bytes of the last axis, which must be
contiguous (else NumPy's ValueError): the last dim becomes ``n * old // new`` (NumPy's
error when that does not divide). The op's result is NumPy's view of its input (the
kernel is ``x.view(dtype)``), so it aliases input 0 like ``astype(copy=False)``: writes
through it reach the input as in NumPy.

Which arrays NumPy holds with a contiguous last axis is known while capturing only for
arguments (their strides, guarded) and for one-dimensional results of ops (NumPy lays
those out contiguously); another itemsize of anything else runs as Python, so a
view that NumPy refuses is never taken on a layout kiln chose differently.

    >>> import numpy as np
    >>> from kiln.ops import F
    >>> F.view_dtype(np.ones(2), dtype=np.dtype(np.int64))[0] == np.ones(1).view(np.int64)[0]
    np.True_
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .meta import TensorMeta, reject, shape_of
from .registry import Bound, Category, F, declare, method_key, spell


def _meta(x: Any, dtype: np.dtype) -> TensorMeta:
    shape, old = tuple(shape_of(x)), np.dtype(x.dtype).itemsize
    if dtype.itemsize == old:
        return TensorMeta(shape, dtype)
    if not shape:
        raise ValueError("Changing the dtype of a 0d array is only supported if the itemsize is unchanged")
    last = shape[-1] * old
    if last % dtype.itemsize:
        raise ValueError("When changing to a larger dtype, its size must be a divisor of the total "
                         "size in bytes of the last axis of the array.")
    return TensorMeta(shape[:-1] + (last // dtype.itemsize,), dtype)


view_dtype = declare("view_dtype", Category.EXTERN, lambda x, dtype: x.view(dtype), inputs=("x",),
                     params={"dtype": np.dtype(np.float64)}, meta=_meta, aliases=True, may_raise=True,
                     numpy_layout=lambda x, dtype: dtype.itemsize != np.dtype(x.dtype).itemsize,
                     # a write through the view: the base is the written bytes read back
                     put_back=lambda base, new: F.view_dtype(new, dtype=np.dtype(base.dtype)),
                     doc="ndarray.view(dtype): the same bytes as another dtype (a view)")


def _view_normalize(x, dtype=None, type=None):
    if type is not None or (isinstance(dtype, builtins_type) and issubclass(dtype, np.ndarray)):
        reject("ndarray.view", "type", type or dtype, "kiln arrays are plain ndarrays; drop type=")
    if dtype is None:
        dtype = x.dtype
    dtype = np.dtype(dtype)
    if dtype.fields is not None or dtype.subdtype is not None or dtype.kind in "OSUVMm":
        reject("ndarray.view", "dtype", dtype, "kiln views numbers as numbers only")
    return Bound(view_dtype, (x,), {"dtype": dtype})


builtins_type = type
spell(method_key("view"), view_dtype, _view_normalize, "ndarray.view")
