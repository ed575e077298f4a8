"""``np.delete`` and ``np.insert`` at positions known while capturing (Python ints, lists,
slices, constant arrays): composites gathering from the array (and, for insert, the
values after it) with a constant index array, so they fuse and differentiate as ``take``
does.

The index array is NumPy's own answer: ``np.delete``/``np.insert`` run on arrays of
element numbers of the same shapes (values numbered after the array's elements), so
every rule of theirs — negative and out-of-range positions, boolean masks, a scalar
position inserting a broadcast block, ``axis=None`` flattening — and every error message
is NumPy's. An integer array of positions computed in the graph deletes as NumPy does
(a mask of the kept elements, then ``x[mask]``: its length is an unbacked size) where the
result is one-dimensional; other positions computed in the graph run as Python. Insert
at positions computed in the graph (any shape, any axis) has a length known while
capturing: the op ``insert_index`` runs ``np.insert`` on the element numbers at run time
(NumPy's placement and errors), and the result is a gather from it; so is delete at one
position computed in the graph (``delete_index``: one element or slice fewer).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .indexing import is_array_entry
from .meta import TensorMeta, as_array, reject, shape_of, to_host
from .numeric import _dtype
from .registry import Category, Composite, F, N, declare, spell_composite


def _constant_positions(name: str, obj: Any) -> Any:
    if isinstance(obj, TensorMeta):   # an array computed in the graph
        reject(name, "obj", "<an array of positions computed in the graph>", "the result's "
               "length would depend on its values; pass the positions as constants")
    if hasattr(obj, "__array__") and not isinstance(obj, np.ndarray):
        obj = np.asarray(obj)        # (a Tensor's values, in eager code)
    return obj


def _numbers(shape: tuple, start: int = 0) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    return np.arange(start, start + n, dtype=np.intp).reshape(shape)


def _gather(flat: Any, index: np.ndarray) -> Any:
    return N.reshape(N.take(flat, index.ravel()), index.shape)


def _delete(arr, index):
    return _gather(N.ravel(arr), index)


def _delete_at_computed(arr, obj, n):
    # NumPy's own algorithm for an integer array of positions: keep = ones(N, bool);
    # keep[obj,] = False; arr[keep] -- a boolean-mask selection (an unbacked size)
    keep = N.ones(n, dtype=bool)
    N.method("__setitem__", keep, (obj,), False)
    return N.getitem(N.ravel(arr), (keep,))


def _delete_index_impl(obj, shape, axis):
    # the positions are read on the host, as np.delete reads them (one value, on a GPU an
    # explicit copy), and the numbers made there go to obj's device
    return as_array(np.delete(_numbers(shape), to_host(obj), axis), obj)


delete_index = declare(
    "delete_index", Category.EXTERN, _delete_index_impl, inputs=("obj",),
    params={"shape": (), "axis": None},
    # one position (a size-1 array) removes one element or slice, wherever it is
    meta=lambda obj, shape, axis: TensorMeta(
        _delete_index_impl(np.zeros(tuple(shape_of(obj)), _dtype(obj)), shape, axis).shape, np.dtype(np.intp)),
    may_raise=True, fresh_result=True,
    doc="np.delete of the element numbers of an array of `shape` at one position obj "
        "computed in the graph: where each element of the result comes from")


def _delete_at_one_computed(arr, obj, shape, axis):
    index = F.delete_index(obj, shape=shape, axis=axis)
    return N.reshape(N.take(N.ravel(arr), N.ravel(index)), tuple(shape_of(index)))


def _delete_normalize(arr, obj, axis=None):
    arr = arr if hasattr(arr, "shape") else np.asarray(arr)
    shape = tuple(shape_of(arr))
    if is_array_entry(obj) and not isinstance(obj, np.ndarray) and _dtype(obj).kind in "iu" \
            and int(np.prod(shape_of(obj))) == 1:
        # one position computed in the graph (np.argmax(x)): a length known while capturing
        return Composite(_delete_at_one_computed, (arr, obj), {"shape": shape, "axis": axis})
    if isinstance(obj, TensorMeta) and np.dtype(obj.dtype).kind in "iu" and int(np.prod(obj.shape)) != 1 \
            and (axis is None or len(shape) == 1 and axis in (0, -1)):
        # positions computed in the graph, a one-dimensional result: its length is known
        # once they are (NumPy takes a size-1 array as one position: constant length)
        return Composite(_delete_at_computed, (arr, obj), {"n": int(np.prod(shape, dtype=np.int64))})
    index = np.delete(_numbers(tuple(shape_of(arr))), _constant_positions("numpy.delete", obj), axis)
    return Composite(_delete, (arr,), {"index": index})


spell_composite(np.delete, ("ravel", "take", "reshape", "ones", "setitem", "getitem_mask", "delete_index"),
                _delete_normalize, "numpy.delete")


def _insert(arr, values, index, dtype):
    flat_values = N.ravel(values)
    if _dtype(values) != dtype:
        flat_values = N.method("astype", flat_values, dtype)
    return _gather(N.concatenate((N.ravel(arr), flat_values)), index)


def _insert_index_impl(obj, shape, values_shape, axis):
    size = int(np.prod(shape, dtype=np.int64))
    # (positions read on the host, as for delete_index)
    return as_array(np.insert(_numbers(shape), to_host(obj), _numbers(values_shape, size), axis), obj)


def _insert_index_meta(obj, shape, values_shape, axis):
    # where the elements go depends on obj's values, how many there are does not (an
    # integer array of k positions adds k, one position adds the values' block)
    example = np.zeros(tuple(shape_of(obj)), _dtype(obj))
    return TensorMeta(_insert_index_impl(example, shape, values_shape, axis).shape, np.dtype(np.intp))


insert_index = declare(
    "insert_index", Category.EXTERN, _insert_index_impl, inputs=("obj",),
    params={"shape": (), "values_shape": (), "axis": None}, meta=_insert_index_meta,
    may_raise=True, fresh_result=True,
    doc="np.insert of the element numbers of an array of `shape` and of its values at the "
        "positions obj (computed in the graph): where each element of the result comes from")


def _insert_at_computed(arr, values, obj, shape, values_shape, axis, dtype):
    index = F.insert_index(obj, shape=shape, values_shape=values_shape, axis=axis)
    flat_values = N.ravel(values)
    if _dtype(values) != dtype:
        flat_values = N.method("astype", flat_values, dtype)
    flat = N.concatenate((N.ravel(arr), flat_values))
    return N.reshape(N.take(flat, N.ravel(index)), tuple(shape_of(index)))


def _insert_normalize(arr, obj, values, axis=None):
    arr = arr if hasattr(arr, "shape") else np.asarray(arr)
    if not hasattr(values, "shape"):
        values = np.asarray(values)
    dtype, vdtype = _dtype(arr), _dtype(values)
    if vdtype.kind == "c" and dtype.kind != "c" or vdtype.kind not in "biufc":
        reject("numpy.insert", "values", f"<{vdtype} values>", "NumPy's conversion into "
               f"{dtype} decides there; it runs as Python")
    shape = tuple(shape_of(arr))
    if is_array_entry(obj) and not isinstance(obj, np.ndarray) and _dtype(obj).kind in "iu":
        # positions computed in the graph: NumPy's np.insert places element numbers at
        # run time (its errors too), and the result gathers from them
        return Composite(_insert_at_computed, (arr, values, obj),
                         {"shape": shape, "values_shape": tuple(shape_of(values)), "axis": axis,
                          "dtype": dtype})
    numbers = _numbers(tuple(shape_of(values)), int(np.prod(shape, dtype=np.int64)))
    index = np.insert(_numbers(shape), _constant_positions("numpy.insert", obj), numbers, axis)
    return Composite(_insert, (arr, values), {"index": index, "dtype": dtype})


spell_composite(np.insert, ("ravel", "astype", "concatenate", "take", "reshape", "insert_index"),
                _insert_normalize, "numpy.insert")
