"""``np.delete``, ``np.insert``, ``np.append`` and the ``np.split`` family.

``np.delete`` and ``np.insert`` at positions known while capturing (Python ints, lists,
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

import warnings
from typing import Any

import numpy as np

from .indexing import is_array_entry
from .meta import TensorMeta, as_array, ndim_of, normalize_one_axis, reject, shape_of, to_host
from .numeric import _dtype, _is_array, _slice_along
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


def _along(axis: int, index: Any) -> tuple:
    return (slice(None),) * axis + (index,)


# ---- the result as slices joined --------------------------------------------------------------
# NumPy copies slices of the array (and the values' block) into the new array; a gather
# by the element numbers would read an index as large as the result. Where the index is
# made of whole slabs along the axis, in few runs, the result is those slices joined.

_MAX_PIECES = 16   # beyond it, one gather (a join of many slices costs more than it saves)


def _slabs(index: np.ndarray, shape: tuple, axis: int) -> tuple[list, list] | None:
    """The result of a gather by ``index`` (element numbers of an array of ``shape``, the
    values numbered after it) as pieces along ``axis``: ("arr", start, stop) slices of
    the array and ("values", start, stop) slices of the values' block, in order, with
    the block's positions in the result; None where the result is not made of whole
    slabs, or of more than ``_MAX_PIECES`` pieces."""
    size = int(np.prod(shape, dtype=np.int64))
    numbers = _numbers(shape)
    pieces: list = []
    block: list = []
    for j in range(index.shape[axis]):
        slab = np.take(index, j, axis)
        if slab.size == 0:
            return None
        first = int(slab.flat[0])
        if first < size:
            i = int(np.unravel_index(first, shape)[axis])
            if not np.array_equal(slab, np.take(numbers, i, axis)):
                return None
            what, at = "arr", i
        elif (slab >= size).all():
            what, at = "values", len(block)
            block.append(j)
        else:
            return None
        if pieces and pieces[-1][0] == what and pieces[-1][2] == at:
            pieces[-1][2] = at + 1
        else:
            pieces.append([what, at, at + 1])
        if len(pieces) > _MAX_PIECES:
            return None
    return pieces, block


def _joined(arr: Any, block: Any, pieces: list, axis: int) -> Any:
    parts = [N.getitem(arr if what == "arr" else block, _along(axis, slice(a, b)))
             for what, a, b in pieces]
    if not parts:   # everything deleted
        parts = [N.getitem(arr, _along(axis, slice(0, 0)))]
    while len(parts) > _JOIN_GROUP:   # joins of a few pieces each (each fuses as a select)
        parts = [N.concatenate(tuple(parts[i:i + _JOIN_GROUP]), axis=axis) if len(parts[i:i + _JOIN_GROUP]) > 1
                 else parts[i] for i in range(0, len(parts), _JOIN_GROUP)]
    return N.concatenate(tuple(parts), axis=axis)


_JOIN_GROUP = 4


def _values_block(values: Any, dtype: np.dtype, index: np.ndarray, positions: list, axis: int,
                  size: int) -> Any:
    """The inserted values as one block of the result's shape but ``len(positions)`` long
    on the axis (NumPy's broadcast of them), cast to the array's dtype."""
    flat = N.ravel(values)
    if _dtype(values) != dtype:
        flat = N.method("astype", flat, dtype)
    return _gather(flat, np.take(index, positions, axis) - size)


# ---- delete ------------------------------------------------------------------------------------

def _delete(arr, index, pieces, axis, keep):
    if axis is None:        # NumPy deletes from the flattened array
        flat = N.ravel(arr)
        return _gather(flat, index) if pieces is None else _joined(flat, None, pieces, 0)
    if keep is not None:    # several positions: NumPy's own arr[..., keep]
        if pieces is None:
            return N.getitem(arr, _along(axis, keep))
        return F.relayout(_joined(arr, None, pieces, axis), arr, rule=axis)
    result = _gather(N.ravel(arr), index) if pieces is None else _joined(arr, None, pieces, axis)
    return F.relayout(result, arr, rule="A")


def _allocates(obj: Any) -> bool:
    """Does np.delete make its result with ``empty(..., arrorder)`` for these positions
    (a slice or one integer position), rather than as ``arr[..., keep]``?"""
    if isinstance(obj, slice) or isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_)):
        return True
    obj = np.asarray(obj)
    return obj.size == 1 and obj.dtype.kind in "ui"


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
    result = N.reshape(N.take(N.ravel(arr), N.ravel(index)), tuple(shape_of(index)))
    return result if axis is None or len(shape) < 2 else F.relayout(result, arr, rule="A")


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
    obj = _constant_positions("numpy.delete", obj)
    index = np.delete(_numbers(shape), obj, axis)   # (NumPy's errors)
    if axis is None or len(shape) < 2:
        found = _slabs(index, (int(np.prod(shape, dtype=np.int64)),), 0)
        return Composite(_delete, (arr,), {"index": index, "pieces": found and found[0],
                                           "axis": None, "keep": None})
    axis = int(axis) % len(shape)
    found = _slabs(index, shape, axis)
    keep = None if _allocates(obj) else \
        np.isin(np.arange(shape[axis]), np.delete(np.arange(shape[axis]), obj))
    return Composite(_delete, (arr,), {"index": index, "pieces": found and found[0], "axis": axis,
                                       "keep": keep})


spell_composite(np.delete, ("ravel", "take", "reshape", "ones", "setitem", "getitem_mask", "delete_index",
                            "getitem", "concatenate", "relayout"),
                _delete_normalize, "numpy.delete")


# ---- insert ------------------------------------------------------------------------------------

def _insert(arr, values, index, dtype, axis, pieces, block):
    size = int(np.prod(shape_of(arr), dtype=np.int64))
    if pieces is None:   # one gather from the array and the values after it
        flat_values = N.ravel(values)
        if _dtype(values) != dtype:
            flat_values = N.method("astype", flat_values, dtype)
        result = _gather(N.concatenate((N.ravel(arr), flat_values)), index)
    else:
        along = 0 if axis is None else axis
        source = N.ravel(arr) if axis is None else arr
        result = _joined(source, _values_block(values, dtype, index, block, along, size), pieces, along)
    return result if axis is None else F.relayout(result, arr, rule="A")


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
    result = N.reshape(N.take(flat, N.ravel(index)), tuple(shape_of(index)))
    return result if axis is None or len(shape) < 2 else F.relayout(result, arr, rule="A")


def _insert_normalize(arr, obj, values, axis=None):
    arr = arr if hasattr(arr, "shape") else np.asarray(arr)
    if not hasattr(values, "shape"):
        # NumPy converts Python values with the array's dtype, which refuses what a cast
        # wraps (np.insert(uint8_x, 0, -1): OverflowError; NaN into integers: ValueError)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.array(values, dtype=_dtype(arr))
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
    size = int(np.prod(shape, dtype=np.int64))
    numbers = _numbers(tuple(shape_of(values)), size)
    index = np.insert(_numbers(shape), _constant_positions("numpy.insert", obj), numbers, axis)
    if axis is None or len(shape) < 2:   # (NumPy flattens the array)
        axis, found = None, _slabs(index, (size,), 0)
    else:
        axis = int(axis) % len(shape)
        found = _slabs(index, shape, axis)
    return Composite(_insert, (arr, values), {"index": index, "dtype": dtype, "axis": axis,
                                              "pieces": found and found[0], "block": found and found[1]})


spell_composite(np.insert, ("ravel", "astype", "concatenate", "take", "reshape", "insert_index",
                            "getitem", "relayout"),
                _insert_normalize, "numpy.insert")


# ---- joins and splits ----------------------------------------------------------------------

def _append(arr, values, axis):
    if axis is None:
        arr = N.ravel(arr) if _is_array(arr) else np.ravel(arr)
        values = N.ravel(values) if _is_array(values) else np.ravel(values)
        axis = 0
    return N.concatenate([arr, values], axis=axis)


spell_composite(np.append, ("concatenate", "ravel"),
                lambda arr, values, axis=None: Composite(_append, (arr, values), {"axis": axis},
                                                         relative_sizes=True),
                "numpy.append")


def _split(ary, sections, axis, strict):
    nd = ndim_of(ary)
    axis = normalize_one_axis(axis, nd)
    n = shape_of(ary)[axis]
    if isinstance(sections, (int, np.integer)):
        count = int(sections)
        if count <= 0:
            raise ValueError("number sections must be larger than 0.")
        if strict and n % count:
            raise ValueError("array split does not result in an equal division")
        each, extra = divmod(n, count)
        sizes = [each + 1] * extra + [each] * (count - extra)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    else:   # (``ary[k:]`` for the last: the same slice for any length, relative_sizes)
        bounds = [0] + [int(i) for i in sections] + [None]
    return [N.getitem(ary, _slice_along(nd, axis, slice(lo, hi)))
            for lo, hi in zip(bounds[:-1], bounds[1:])]


def _split_normalizer(strict: bool, fixed_axis: int | None = None, min_nd: int = 1):
    def normalize(ary, indices_or_sections, axis=0):
        if fixed_axis is not None:
            if ndim_of(ary) < min_nd:
                raise ValueError(f"{['', 'hsplit', 'vsplit', 'dsplit'][min_nd]} only works on "
                                 f"arrays of {min_nd} or more dimensions")
            axis = fixed_axis if not (fixed_axis == 1 and ndim_of(ary) == 1) else 0
        sections = indices_or_sections
        if _is_array(sections):
            reject("numpy.split", "indices_or_sections", "<array>", "pass a list of ints")
        # split points slice from the ends (np.split(x, [2, 5]) of any length); a number
        # of sections divides the length the example has
        return Composite(_split, (ary,), {"sections": sections, "axis": axis, "strict": strict},
                         relative_sizes=not isinstance(sections, (int, np.integer)))
    return normalize


spell_composite(np.split, ("getitem",), _split_normalizer(True), "numpy.split")
spell_composite(np.array_split, ("getitem",), _split_normalizer(False), "numpy.array_split")
spell_composite(np.hsplit, ("getitem",),
                lambda ary, s: _split_normalizer(True, 1, 1)(ary, s), "numpy.hsplit")
spell_composite(np.vsplit, ("getitem",),
                lambda ary, s: _split_normalizer(True, 0, 2)(ary, s), "numpy.vsplit")
spell_composite(np.dsplit, ("getitem",),
                lambda ary, s: _split_normalizer(True, 2, 3)(ary, s), "numpy.dsplit")
