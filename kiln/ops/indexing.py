"""Indexing: ``x[index]``, its scatter counterparts, take and take_along_axis.

An index is normalized once into a tuple whose entries are ints, slices, ``None``,
``Ellipsis`` and arrays (integer or boolean). Its contents choose the op:

- ``getitem``       basic indexing only (ints, slices, None, ...): a VIEW, as in NumPy;
- ``index``         integer arrays (advanced indexing): a GATHER with a static shape;
- ``getitem_mask``  any boolean array: the output length is the number of True values,
                    so the op is ``data_dependent``; one mask over x's leading dims runs
                    in graphs with that length an "unbacked" size (kiln/ops/selection.py).

The derivative of a gather scatters the cotangent back: ``index_add`` (a copy of x with
values added at index, ``np.add.at`` semantics, so repeated indices accumulate) into
zeros. ``index_put`` is the functional form of ``x[index] = value``; mutation.py maps the
in-place spellings onto both. Rules compute shapes directly rather than by a fake run,
because a fake gather would allocate the whole result.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..errors import Unsupported
from . import layout
from .meta import (as_array, namespace, TensorMeta, broadcast_shapes, fake, fresh_copy, normalize_one_axis, reject,
                   shape_of, to_fake)
from .registry import Bound, Category, F, declare, is_float_like, method_key, spell


# -- index normalization and classification -----------------------------------------------

def is_array_entry(value: Any) -> bool:
    """An index entry that is an array (concrete, fake, TensorMeta or traced)."""
    return (hasattr(value, "dtype") and hasattr(value, "shape")
            and not isinstance(value, np.generic))


def _slice_part(v: Any) -> Any:
    if v is None or isinstance(v, int) or is_array_entry(v):
        return v
    if isinstance(v, np.integer):
        return int(v)
    return v  # anything else: NumPy raises its own TypeError when the slice is used


def _entry(v: Any) -> Any:
    if v is None or v is Ellipsis:
        return v
    if isinstance(v, slice):
        return slice(_slice_part(v.start), _slice_part(v.stop), _slice_part(v.step))
    if isinstance(v, (bool, np.bool_)):
        # A boolean scalar is a 0-d mask in NumPy (it adds an axis of length 1 or 0).
        return np.asarray(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (list, tuple)):
        # A nested sequence is an array index; NumPy reads an empty one as intp.
        arr = np.asarray(v)
        return arr.astype(np.intp) if arr.size == 0 and arr.dtype.kind == "f" else arr
    if is_array_entry(v):
        return v
    if hasattr(v, "__index__"):
        return operator.index(v)
    return v  # floats, strings...: NumPy raises its IndexError when the index is used


def normalize_index(index: Any) -> tuple:
    """Any NumPy index as a tuple of ints, slices, None, Ellipsis and arrays.

    A tuple indexes several axes; anything else (a list included) is one entry.
    """
    entries = index if isinstance(index, tuple) else (index,)
    return tuple(_entry(v) for v in entries)


def index_kind(index: tuple) -> str:
    """'mask' (a boolean array present), 'advanced' (integer arrays) or 'basic'."""
    kind = "basic"
    for v in index:
        if is_array_entry(v):
            if np.dtype(v.dtype).kind == "b":
                return "mask"
            kind = "advanced"
    return kind


def _fmt_shape(shape: tuple) -> str:
    """A shape as NumPy writes it in messages: (2,) or (3,4)."""
    return "(" + ",".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def indexed_shape(shape: tuple, index: tuple) -> tuple:
    """Shape of ``x[index]`` for basic and integer-array indexes, with NumPy's errors.

    Integer arrays broadcast together; when any is present, ints count as 0-d arrays.
    The broadcast shape replaces the advanced entries where they are adjacent in the
    index (``None`` separates them), otherwise it goes first, as in NumPy.
    """
    ndim = len(shape)
    if sum(1 for v in index if v is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for v in index if v is not None and v is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, "
                         f"but {consumed} were indexed")
    fill = [slice(None)] * (ndim - consumed)
    entries: list = []
    for v in index:
        entries.extend(fill if v is Ellipsis else [v])
    if not any(v is Ellipsis for v in index):
        entries.extend(fill)
    advanced = any(is_array_entry(v) for v in entries)
    out: list = []
    adv_shapes: list = []
    adv_pos: list = []
    insert_at = 0
    dim = 0
    for pos, v in enumerate(entries):
        if v is None:
            out.append(1)
            continue
        size = shape[dim]
        if isinstance(v, slice) and v == slice(None):
            out.append(size)   # the whole dim, also when its size is symbolic
        elif isinstance(v, slice):
            out.append(len(range(*v.indices(size))))
        elif is_array_entry(v):
            if np.dtype(v.dtype).kind not in "iu":
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
            if not adv_pos:
                insert_at = len(out)
            adv_shapes.append(tuple(shape_of(v)))
            adv_pos.append(pos)
        else:
            i = operator.index(v)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {size}")
            if advanced:
                if not adv_pos:
                    insert_at = len(out)
                adv_shapes.append(())
                adv_pos.append(pos)
        dim += 1
    if not advanced:
        return tuple(out)
    nonscalar = {s for s in adv_shapes if s != ()}
    try:
        # one shape among them: that one (its sizes may be symbols, which NumPy cannot take)
        bshape = nonscalar.pop() if len(nonscalar) == 1 else np.broadcast_shapes(*adv_shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         "with shapes " + "".join(_fmt_shape(s) + " " for s in adv_shapes
                                                  if s != ())) from None
    adjacent = adv_pos == list(range(adv_pos[0], adv_pos[0] + len(adv_pos)))
    if not adjacent:
        insert_at = 0
    return tuple(out[:insert_at]) + tuple(bshape) + tuple(out[insert_at:])


def _static_slices(index: tuple) -> bool:
    """True when every slice bound is a Python int or None (not a traced value)."""
    return all(isinstance(p, (int, type(None)))
               for v in index if isinstance(v, slice) for p in (v.start, v.stop, v.step))


def zeros_for(g: Any, x: Any) -> Any:
    """Zeros with x's shape and dtype, built from the cotangent ``g``.

    Only x's metadata is read, so a saved x overwritten in place since stays usable, and
    under tracing the zeros are a node (not a constant the size of x)."""
    dtype = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype
    return F.zeros_like(g, shape=tuple(shape_of(x)), dtype=np.dtype(dtype))


def gather(x: Any, index: tuple) -> Any:
    """``x[index]`` through the op its index calls for (used by derivative rules)."""
    kind = index_kind(index)
    op = {"basic": F.getitem, "advanced": F.index, "mask": F.getitem_mask}[kind]
    return op(x, index)


# -- x[index] -----------------------------------------------------------------------------

def _getitem_impl(x: Any, index: tuple) -> Any:
    return x[index]


def _getitem_vjp(g, out, x, index):
    # Basic indexing reaches each element of x at most once: a plain put suffices.
    return F.index_put(zeros_for(g, x), index, g), None


def _runtime_int_index(x: Any, index: Any) -> bool:
    """Does the index hold an integer that is a graph value (``x[i]``, ``i`` a run-time
    int), which NumPy rejects with an IndexError when out of range?"""
    return isinstance(index, tuple) and any(
        not isinstance(e, (int, slice, type(None), type(Ellipsis))) and not is_array_entry(e)
        for e in index)


getitem = declare("getitem", Category.VIEW, _getitem_impl, inputs=("x", "index"),
                  layout=layout.getitem, runtime_slices=1, raises_for=_runtime_int_index,
                  vjp=_getitem_vjp,
                  doc="x[index] with ints, slices, None and Ellipsis: a view, as in NumPy")


def _index_impl(x: Any, index: tuple) -> Any:
    return as_array(x)[index]


def _index_meta(x: Any, index: tuple) -> TensorMeta:
    if not _static_slices(index):
        # A traced slice bound: only running the kernel knows (the fake run).
        return TensorMeta(shape_of(_index_impl(fake(x), to_fake(index))), x.dtype)
    return TensorMeta(indexed_shape(shape_of(x), index), x.dtype)


def _scatter_back(g, x, index):
    return F.index_add(zeros_for(g, x), index, g)


index_op = declare("index", Category.GATHER, _index_impl, inputs=("x", "index"),
                   meta=_index_meta,
                   vjp=lambda g, out, x, index: (_scatter_back(g, x, index), None),
                   doc="x[index] with integer arrays (advanced indexing): a gather", may_raise=True)


def _one_mask(x: Any, index: tuple) -> int | None:
    """The number of dims ``x[mask]`` selects from, when the index is one boolean array
    over x's leading dims (the form graphs hold); None for any other boolean index."""
    if len(index) != 1 or not is_array_entry(index[0]) or np.dtype(index[0].dtype) != np.bool_:
        return None
    k = len(shape_of(index[0]))
    return k if 1 <= k <= len(shape_of(x)) and tuple(shape_of(index[0])) == tuple(shape_of(x)[:k]) \
        else None


def _mask_meta(x: Any, index: tuple) -> TensorMeta:
    k = _one_mask(x, index)
    if k is None:
        _index_impl(fake(x), to_fake(index))   # NumPy's IndexError for mismatched shapes
        raise Unsupported("x[index] with a boolean array among other entries has a "
                          "data-dependent shape kiln does not model; it runs as Python. "
                          "Use np.where(mask, x, 0) or index with one mask")
    shape = shape_of(x)
    n = 1
    for d in shape[:k]:
        n *= d
    return TensorMeta((n,) + tuple(shape[k:]), x.dtype)   # the largest it can be


def _mask_unbacked(x: Any, index: tuple) -> Any:
    k = _one_mask(x, index)
    if k is None:
        return None
    return ("nonzero", (1, 0)), ("u",) + tuple((0, d) for d in range(k, len(shape_of(x))))


getitem_mask = declare("getitem_mask", Category.GATHER, _index_impl, inputs=("x", "index"),
                       meta=_mask_meta, data_dependent=True, masked_selection=True,
                       unbacked=_mask_unbacked,
                       vjp=lambda g, out, x, index: (_scatter_back(g, x, index), None),
                       doc="x[index] with a boolean mask: its length depends on the data")


def _getitem_normalize(x, index):
    index = normalize_index(index)
    op = {"basic": getitem, "advanced": index_op, "mask": getitem_mask}[index_kind(index)]
    return Bound(op, (x, index), {})


spell(method_key("__getitem__"), getitem, _getitem_normalize, "ndarray.__getitem__")


# -- functional scatters: index_put (x[index] = value), index_add (np.add.at) --------------

def _value_grad(g, index, value, last_write_wins: bool = False):
    """Cotangent of the value written at ``index``: the cotangent read back from there,
    brought to the value's shape (the write broadcast it). For an assignment a repeated
    target keeps only its last write, which alone gets the cotangent (np.add.at adds
    every one)."""
    if not is_float_like(value):
        return None
    vshape = tuple(shape_of(value))
    if index_kind(index) == "mask":
        static = _masked_value_grad(g, index, vshape)
        if static is not None:
            return static
    gv = gather(g, index)
    gshape = tuple(shape_of(gv))
    if last_write_wins and index_kind(index) == "advanced":
        gv = F.where(_last_writes(g, index, gshape), gv, 0.0)
    if len(vshape) > len(gshape):
        # NumPy drops leading unit axes of the value before broadcasting it.
        gv = F.reshape(gv, shape=(1,) * (len(vshape) - len(gshape)) + gshape)
    return gv


def _last_writes(g: Any, index: tuple, gshape: tuple) -> Any:
    """Which written positions land (integer arrays may repeat a target: NumPy keeps the
    last write there): write each position's number with the same index, read back."""
    size = int(np.prod(gshape, dtype=np.int64))
    ids = F.reshape(F.arange(start=0, stop=size, step=1, dtype=np.int64), shape=gshape)
    owner = F.index_put(F.full_like(g, -1, shape=None, dtype=np.int64), index, ids)
    return F.equal(F.index(owner, index), ids)


def _masked_value_grad(g: Any, index: tuple, vshape: tuple) -> Any:
    """The value's cotangent for ``x[..., mask, ...] = value`` when the value does not
    span the masked positions (a scalar, a row broadcast over masked rows): a masked sum
    of g, with no data-dependent shape. None when the index or value is not of that form."""
    masks = [i for i, v in enumerate(index) if is_array_entry(v)]
    others = [v for v in index if not is_array_entry(v)]
    if len(masks) != 1 or not all(v is Ellipsis or v == slice(None) for v in others):
        return None
    pos = masks[0]
    mask = index[pos]
    gnd, mnd = len(shape_of(g)), len(shape_of(mask))
    # Axes after the mask's: the slices after it, or what the slices before it leave.
    if any(v is Ellipsis for v in index[:pos]):
        trailing = len(index) - pos - 1
    else:
        trailing = gnd - pos - mnd
    if not 0 <= trailing <= gnd - mnd:
        return None
    vs = vshape
    while len(vs) > trailing and vs[0] == 1:  # unit axes the write broadcast away
        vs = vs[1:]
    if len(vs) > trailing:
        return None  # the value spans the masked positions: only a gather can answer
    keep = F.reshape(mask, shape=tuple(shape_of(mask)) + (1,) * trailing) if trailing else mask
    gv = F.sum_to(F.where(keep, g, 0.0), shape=vs)
    return F.reshape(gv, shape=vshape) if vs != vshape else gv


def _index_put_impl(x: Any, index: tuple, value: Any) -> Any:
    out = fresh_copy(x)
    out[index] = value
    return out


def _scatter_meta(strip_leading_ones: bool):
    def rule(x: Any, index: tuple, value: Any) -> TensorMeta:
        xshape = tuple(shape_of(x))
        if index_kind(index) != "mask" and _static_slices(index):
            target = indexed_shape(xshape, index)
            vshape = tuple(shape_of(value))
            if strip_leading_ones and vshape and len(index) == len(xshape) and not any(
                    v is None or v is Ellipsis or isinstance(v, slice) or is_array_entry(v)
                    for v in index):
                # One element, named by an int per axis: NumPy stores a scalar there and
                # takes no array of ndim > 0, not even of one element.
                raise ValueError("setting an array element with a sequence.")
            if strip_leading_ones:
                while len(vshape) > len(target) and vshape[0] == 1:
                    vshape = vshape[1:]
            try:
                ok = broadcast_shapes(vshape, target) == target
            except ValueError:
                ok = False
            if not ok and strip_leading_ones:
                raise ValueError(f"could not broadcast input array from shape "
                                 f"{_fmt_shape(tuple(shape_of(value)))} into shape "
                                 f"{_fmt_shape(target)}")
            if not ok:
                raise ValueError("array is not broadcastable to correct shape")
        return TensorMeta(xshape, x.dtype)

    return rule


def _index_put_vjp(g, out, x, index, value):
    # Where x was overwritten its gradient is zero. With repeated integer indices NumPy
    # keeps the last write; every written copy of value still gets the gradient here.
    gx = F.index_put(g, index, 0.0) if is_float_like(x) else None
    return gx, None, _value_grad(g, index, value, last_write_wins=True)


def _index_put_raises(x: Any, index: Any, value: Any) -> bool:
    """May ``x[index] = value`` raise for some run-time values? Not for a basic index of
    constants into a float or complex array of static shape (no dynamic sizes in the
    graph: the shape rule checked the index and the value's shape at capture) given a
    float, int or bool array or a Python float (``out[0] = a * b``); a Python int could
    be too large for a float (OverflowError), other indices out of range."""
    def constant(e: Any) -> bool:
        if isinstance(e, slice):
            return all(b is None or type(b) is int for b in (e.start, e.stop, e.step))
        return type(e) is int or e is None or e is Ellipsis
    meta, graph = getattr(x, "val", None), getattr(x, "graph", None)
    if not isinstance(index, tuple) or not all(constant(e) for e in index) \
            or not isinstance(meta, TensorMeta) or meta.dtype.kind not in "fc" or graph is None \
            or any(p.meta.get("dynamic_dims") for p in graph.placeholders):
        return True
    v = getattr(value, "val", value)
    return not (type(v) is float or isinstance(v, TensorMeta) and v.dtype.kind in "fiub")


index_put = declare("index_put", Category.GATHER, _index_put_impl,
                    inputs=("x", "index", "value"), meta=_scatter_meta(True),
                    vjp=_index_put_vjp,
                    doc="a copy of x with x[index] = value (the functional setitem)",
                    raises_for=_index_put_raises)
# Compiled with a basic index: a select between value and x (kiln/lowering/fills.py).
index_put.lowering = {"region_write": True}


def _index_add_impl(x: Any, index: tuple, value: Any) -> Any:
    out = fresh_copy(x)
    add_at_broadcast(out, index, value)
    return out


def _index_put_inplace(x: Any, index: tuple, value: Any) -> Any:
    x[index] = value
    return x


def _index_add_inplace(x: Any, index: tuple, value: Any) -> Any:
    add_at_broadcast(x, index, value)
    return x


def add_at_broadcast(x: Any, index: tuple, value: Any) -> None:
    """``np.add.at`` with ``value`` broadcast to ``x[index]`` first: NumPy 2.4 reads
    uninitialised memory when a value broadcasts against a multi-dimensional index."""
    value = as_array(value, x)
    entries = index if isinstance(index, tuple) else (index,)
    if any(getattr(v, "dtype", None) == np.bool_ or type(v) is bool for v in entries):
        target_shape = np.shape(x[index])
    else:   # from the shapes alone: x[index] would gather the whole selection first
        try:
            target_shape = indexed_shape(np.shape(x), entries)
        except (IndexError, TypeError, ValueError):
            target_shape = np.shape(x[index])   # NumPy's own error, or an index kind not modelled
    if value.shape != target_shape:
        try:
            value = np.broadcast_to(value, target_shape)
        except ValueError:
            pass  # let np.add.at raise its own message
    np.add.at(x, index, value)


index_add = declare("index_add", Category.GATHER, _index_add_impl,
                    inputs=("x", "index", "value"), meta=_scatter_meta(False),
                    vjp=lambda g, out, x, index, value: (g, None, _value_grad(g, index, value)),
                    doc="a copy of x with value added at index; repeats accumulate (np.add.at)",
                    may_raise=True)

index_put.inplace_impl = _index_put_inplace


def _index_put_atomic(args: tuple) -> bool:
    """``x[index] = value`` raises only before writing (bounds, shapes, a Python scalar's
    conversion are checked first) unless a cast of an array value can warn (NaN into an
    int array) and warnings are errors: so only a value that casts safely qualifies."""
    x, value = args[0], args[2]
    if getattr(value, "weak", False) or type(value) in (bool, int, float, complex):
        return True
    vd, xd = getattr(value, "dtype", None), getattr(x, "dtype", None)
    return vd is not None and xd is not None and bool(np.can_cast(vd, xd, "safe"))


# np.add.at is not: adding twice is not adding once (an error replay would add again).
index_put.inplace_atomic = _index_put_atomic
index_add.inplace_impl = _index_add_inplace


# -- take ---------------------------------------------------------------------------------

def _take_impl(x: Any, indices: Any, axis: int | None) -> Any:
    return np.take(x, indices, axis=axis)


def _take_meta(x: Any, indices: Any, axis: int | None) -> TensorMeta:
    xshape = tuple(shape_of(x))
    ishape = tuple(shape_of(indices))
    idt = np.dtype(indices.dtype if hasattr(indices, "dtype") else np.asarray(indices).dtype)
    if idt.kind not in "biu":
        np.take(fake(x), np.zeros(0, idt), axis=axis)  # NumPy's casting TypeError
        raise TypeError(f"Cannot cast array data from {idt!r} to dtype('int64') "
                        f"according to the rule 'safe'")
    if axis is None:
        size = 1
        for d in xshape:
            size *= d
        base, ax = (size,), 0
    else:
        base, ax = xshape, axis
    n = base[ax]
    if n == 0 and int(np.prod(ishape)) > 0:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    if isinstance(indices, int) and not -n <= indices < n:
        raise IndexError(f"index {indices} is out of bounds for axis {ax} with size {n}")
    return TensorMeta(base[:ax] + ishape + base[ax + 1:], x.dtype)


def _take_vjp(g, out, x, indices, axis):
    if hasattr(indices, "dtype") and np.dtype(indices.dtype).kind == "b":
        # take reads booleans as 0/1; as an index they would be a mask.
        indices = F.astype(indices, dtype=np.dtype(np.intp))
    if axis is None:
        flat = F.index_add(F.ravel(zeros_for(g, x)), (indices,), g)
        return F.reshape(flat, shape=shape_of(x)), None
    return F.index_add(zeros_for(g, x), (slice(None),) * axis + (indices,), g), None


take = declare("take", Category.GATHER, _take_impl, inputs=("x", "indices"),
               params={"axis": None}, meta=_take_meta, vjp=_take_vjp,
               doc="numpy.take: elements at indices along an axis (of the flat array if None)",
               may_raise=True)


def _take_normalize(a, indices, axis=None, out=None, mode="raise"):
    if mode != "raise":
        reject("numpy.take", "mode", mode, "wrap or clip the indices first "
               "(np.mod(i, n) or np.clip(i, 0, n - 1)) and use mode='raise'")
    if isinstance(indices, (list, tuple)):
        # NumPy force-casts a sequence to intp (floats truncate, bools become 0/1).
        indices = np.array(indices, dtype=np.intp)
    elif isinstance(indices, np.integer):
        indices = int(indices)
    if axis is not None:
        axis = normalize_one_axis(axis, np.ndim(a) if not hasattr(a, "ndim") else a.ndim)
    return Bound(take, (a, indices), {"axis": axis}, out)


spell(np.take, take, _take_normalize, "numpy.take")
spell(method_key("take"), take, _take_normalize, "ndarray.take")


# -- take_along_axis and its adjoint ------------------------------------------------------

def _along_axis_index(shape: tuple, indices: Any, axis: int) -> tuple:
    """NumPy's fancy index for take_along_axis: aranges on the other axes."""
    nd = len(shape)
    fancy = []
    for dim, n in enumerate(shape):
        if dim == axis:
            fancy.append(indices)
        else:
            fancy.append(namespace(indices).arange(n).reshape((1,) * dim + (-1,) + (1,) * (nd - dim - 1)))
    return tuple(fancy)


def _along_axis_shape(xshape: tuple, indices: Any, axis: int | None) -> tuple:
    ishape = tuple(shape_of(indices))
    if axis is None:
        if len(ishape) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
    if np.dtype(indices.dtype).kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        return ishape
    if len(ishape) != len(xshape):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    other = xshape[:axis] + (1,) + xshape[axis + 1:]
    try:
        return np.broadcast_shapes(ishape, other)
    except ValueError:
        # NumPy's message lists the fancy index it builds: an arange per other axis.
        parts = [ishape if d == axis else tuple(n if j == d else 1 for j in range(len(xshape)))
                 for d, n in enumerate(xshape)]
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                         "shapes " + "".join(_fmt_shape(p) + " " for p in parts)) from None


take_along_axis = declare(
    "take_along_axis", Category.GATHER,
    lambda x, indices, axis: np.take_along_axis(x, indices, axis=axis),
    inputs=("x", "indices"), params={"axis": -1},
    meta=lambda x, indices, axis: TensorMeta(
        _along_axis_shape(tuple(shape_of(x)), indices, axis), x.dtype),
    vjp=lambda g, out, x, indices, axis: (
        F.put_along_axis_add(zeros_for(g, x), indices, g, axis=axis), None),
    doc="numpy.take_along_axis: pick along one axis with an index array of the same rank",
    may_raise=True)


def _take_along_axis_normalize(arr, indices, axis=-1):
    if isinstance(indices, (list, tuple)):
        indices = np.asarray(indices)
    if axis is not None:
        axis = normalize_one_axis(axis, np.ndim(arr) if not hasattr(arr, "ndim") else arr.ndim)
    return Bound(take_along_axis, (arr, indices), {"axis": axis})


spell(np.take_along_axis, take_along_axis, _take_along_axis_normalize, "numpy.take_along_axis")


def _put_along_axis_add_impl(x: Any, indices: Any, values: Any, axis: int | None) -> Any:
    out = fresh_copy(x)
    if axis is None:
        np.add.at(out.reshape(-1), indices, values)  # a view: out is a fresh C array
    else:
        np.add.at(out, _along_axis_index(out.shape, indices, axis), values)
    return out


def _put_along_axis_add_meta(x, indices, values, axis):
    xshape = tuple(shape_of(x))
    target = _along_axis_shape(xshape, indices, axis)
    try:
        ok = np.broadcast_shapes(tuple(shape_of(values)), target) == target
    except ValueError:
        ok = False
    if not ok:
        raise ValueError("array is not broadcastable to correct shape")
    return TensorMeta(xshape, x.dtype)


put_along_axis_add = declare(
    "put_along_axis_add", Category.GATHER, _put_along_axis_add_impl,
    inputs=("x", "indices", "values"), params={"axis": -1}, meta=_put_along_axis_add_meta,
    vjp=lambda g, out, x, indices, values, axis: (
        g, None, F.take_along_axis(g, indices, axis=axis) if is_float_like(values) else None),
    doc="a copy of x with values added where take_along_axis would read (the adjoint)",
    may_raise=True)


# The functional scatters return new arrays; writes through a basic index go back with
# index_put (functionalization).
index_put.fresh_result = index_add.fresh_result = True
getitem.put_back = lambda base, new, index: F.index_put(base, index, new)

# Linear maps with real coefficients: their rules hold for complex values as written.
for _name in ('getitem',):
    F.__getattr__(_name).complex_grad = True
