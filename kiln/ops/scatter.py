"""Functional scatters: ``index_put`` (a copy of x with ``x[index] = value``) and
``index_add`` (``np.add.at`` semantics: repeated indices accumulate), the derivatives of
the gathers in kiln/ops/indexing.py and the ops mutation.py maps in-place writes onto.
Shapes come from the index (kiln/ops/indexing.py: ``indexed_shape``), never a fake run.
"""
from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

from .indexing import (_fmt_shape, _static_slices, gather, index_kind, indexed_shape,
                       is_array_entry)
from .meta import TensorMeta, as_array, broadcast_shapes, fresh_copy, shape_of
from .registry import Category, F, declare, is_complex_like, is_float_like
from .result_layout import Strided, axis_order, layout_of
from .value_warnings import ufunc_at


# -- functional scatters: index_put (x[index] = value), index_add (np.add.at) --------------

def _value_grad(g, index, value, last_write_wins: bool = False):
    """Cotangent of the value written at ``index``: the cotangent read back from there,
    brought to the value's shape (the write broadcast it). For an assignment a repeated
    target keeps only its last write, which alone gets the cotangent (np.add.at adds
    every one)."""
    if not (is_float_like(value) or is_complex_like(value)):
        return None
    vshape = tuple(shape_of(value))
    gv = None
    if index_kind(index) == "mask":
        static = _masked_value_grad(g, index, vshape)
        if static is not None:
            return static
        gv = _masked_positions_grad(g, index, vshape)
    if gv is None:
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


def _one_mask_axes(g: Any, index: tuple) -> tuple | None:
    """``(mask, trailing)`` for an index of one boolean mask among full slices and
    Ellipsis: the axes of g after the mask's (the slices after it, or what the slices
    before it leave). None for other indices."""
    masks = [i for i, v in enumerate(index) if is_array_entry(v)]
    others = [v for v in index if not is_array_entry(v)]
    if len(masks) != 1 or not all(v is Ellipsis or v == slice(None) for v in others):
        return None
    pos = masks[0]
    mask = index[pos]
    gnd, mnd = len(shape_of(g)), len(shape_of(mask))
    if any(v is Ellipsis for v in index[:pos]):
        trailing = len(index) - pos - 1
    else:
        trailing = gnd - pos - mnd
    if not 0 <= trailing <= gnd - mnd:
        return None
    return mask, trailing


def _strip_unit_axes(vshape: tuple, trailing: int) -> tuple:
    """The value's shape less the leading unit axes the write broadcast away."""
    vs = vshape
    while len(vs) > trailing and vs[0] == 1:
        vs = vs[1:]
    return vs


def _masked_positions_grad(g: Any, index: tuple, vshape: tuple) -> Any:
    """The value's cotangent for ``x[..., mask, ...] = value`` when the value spans the
    masked positions with a length of its own (``y[m] = v``, v as long as m has Trues):
    ``g[..., mask, ...]`` with no data-dependent shape, each masked position's cotangent
    added at its rank among the Trues (a cumsum of the mask). The gather ``g[mask]`` would
    only bound that length in a compiled graph (the mask's size), and the backward's sum to
    the value's shape could not be compiled. None when the index or value is not of that
    form (the gather answers)."""
    found = _one_mask_axes(g, index)
    if found is None or isinstance(g, np.ndarray):
        return None   # (on the eager tape g[mask] has its length: the gather is cheaper)
    mask, trailing = found
    vs = _strip_unit_axes(vshape, trailing)
    mshape, gshape = tuple(shape_of(mask)), tuple(shape_of(g))
    if not mshape or len(vs) <= trailing or vs[-trailing - 1] == 1:
        return None
    n = vs[-trailing - 1]   # (a number, or a dynamic size: ir.SizeRef)
    before = len(gshape) - trailing - len(mshape)
    after = gshape[len(gshape) - trailing:]
    flat_mask, flat_g = mask, g
    if len(mshape) > 1:   # a mask over several axes: over their flattening
        if not all(isinstance(d, (int, np.integer)) for d in mshape):
            return None
        size = int(np.prod(mshape, dtype=np.int64))
        flat_mask = F.reshape(mask, shape=(size,))
        flat_g = F.reshape(g, shape=gshape[:before] + (size,) + after)
    rank = F.where(flat_mask, F.subtract(F.cumsum(flat_mask, axis=0, dtype=np.int64), 1), 0)
    keep = F.reshape(flat_mask, shape=tuple(shape_of(flat_mask)) + (1,) * trailing) if trailing \
        else flat_mask
    target = gshape[:before] + (n,) + after
    zeros = F.zeros_like(g, shape=target, dtype=np.dtype(g.dtype))
    if isinstance(n, (int, np.integer)) and n == 0:
        return zeros   # no True: no rank for the masked-out positions' zeros to land on
    return F.index_add(zeros, (slice(None),) * before + (rank,), F.where(keep, flat_g, 0.0))


def _masked_value_grad(g: Any, index: tuple, vshape: tuple) -> Any:
    """The value's cotangent for ``x[..., mask, ...] = value`` when the value does not
    span the masked positions (a scalar, a row broadcast over masked rows): a masked sum
    of g, with no data-dependent shape. None when the index or value is not of that form."""
    found = _one_mask_axes(g, index)
    if found is None:
        return None
    mask, trailing = found
    vs = _strip_unit_axes(vshape, trailing)
    if len(vs) > trailing:
        return None  # the value spans the masked positions: _masked_positions_grad
    keep = F.reshape(mask, shape=tuple(shape_of(mask)) + (1,) * trailing) if trailing else mask
    gv = F.sum_to(F.where(keep, g, 0.0), shape=vs)
    return F.reshape(gv, shape=vshape) if vs != vshape else gv


def _index_put_impl(x: Any, index: tuple, value: Any, *, store: Any = operator.setitem) -> Any:
    out = fresh_copy(x)
    store(out, index, value)
    return out


def stores_at(impl: Any, numpy_store: Any) -> Any:
    """Op.impl_at of a write ``impl(x, ..., *, store)`` (or its inplace_impl, given as
    ``fn``) whose NumPy call is ``numpy_store(x, ...)`` (``x[index] = value``, np.add.at,
    ``x.fill(v)``): made from the user's line, where NumPy's cast and floating-point
    warnings point ("invalid value encountered in at")."""
    return lambda filename, lineno, fn=impl: functools.partial(
        fn, store=ufunc_at(numpy_store, filename, lineno))


def _scatter_meta(strip_leading_ones: bool):
    def rule(x: Any, index: tuple, value: Any) -> TensorMeta:
        xshape = tuple(shape_of(x))
        if index_kind(index) != "mask" and _static_slices(index):
            target = indexed_shape(xshape, index)
            vshape = tuple(shape_of(value))
            if strip_leading_ones and vshape and len(index) == len(xshape) and not any(
                    v is None or v is Ellipsis or isinstance(v, slice) or is_array_entry(v)
                    for v in index) and not (np.dtype(x.dtype) == np.bool_ and all(d == 1 for d in vshape)):
                # One element, named by an int per axis: NumPy stores a scalar there and
                # takes no array of ndim > 0, not even of one element (but a bool element
                # takes the truth of a one-element array, as bool(a) does).
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
    gx = F.index_put(g, index, 0.0) if is_float_like(x) or is_complex_like(x) else None
    return gx, None, _value_grad(g, index, value, last_write_wins=True)


# The largest finite float16: a Python int within it fits every float dtype.
FLOAT16_MAX = 65504


def _index_put_raises(x: Any, index: Any, value: Any) -> bool:
    """May ``x[index] = value`` raise for some run-time values? Not for a basic index of
    constants into a float or complex array of static shape (no dynamic sizes in the
    graph: the shape rule checked the index and the value's shape at capture) given a
    float, int or bool array, a Python float (``out[0] = a * b``) or a Python int no
    float dtype overflows on (|v| <= 65504, float16's largest: ``z[0] = -1`` counted as
    raising and made an earlier write into the caller's array copy it); a larger int
    could be too large for a float (OverflowError), other indices out of range. Nor for
    a boolean mask of x's whole shape (``hit[new] = 7``) given a scalar x's dtype holds:
    a constant Python int in an integer dtype's range, or one of the above into a float
    array, a constant int (an array value may not match the count of True elements)."""
    def constant(e: Any) -> bool:
        if isinstance(e, slice):
            return all(b is None or type(b) is int for b in (e.start, e.stop, e.step))
        return type(e) is int or e is None or e is Ellipsis
    meta, graph = getattr(x, "val", None), getattr(x, "graph", None)
    if not isinstance(meta, TensorMeta) or graph is None or not isinstance(index, tuple) \
            or any(p.meta.get("dynamic_dims") for p in graph.placeholders):
        return True
    v = getattr(value, "val", value)
    mask = getattr(index[0], "val", None) if len(index) == 1 else None
    if isinstance(mask, TensorMeta) and mask.dtype == np.bool_ and tuple(mask.shape) == tuple(meta.shape):
        if meta.dtype.kind in "iu":
            info = np.iinfo(meta.dtype)
            return not (type(v) is bool or type(v) is int and value is v and info.min <= v <= info.max)
        return meta.dtype.kind not in "fc" or not (type(v) in (bool, float) or type(
            v) is int and value is v and -FLOAT16_MAX <= v <= FLOAT16_MAX)
    if not all(constant(e) for e in index) or meta.dtype.kind not in "fc":
        return True
    return not (type(v) is float or type(v) is int and -FLOAT16_MAX <= v <= FLOAT16_MAX
                or isinstance(v, TensorMeta) and v.dtype.kind in "fiub")


index_put = declare("index_put", Category.GATHER, _index_put_impl,
                    inputs=("x", "index", "value"), meta=_scatter_meta(True),
                    vjp=_index_put_vjp,
                    doc="a copy of x with x[index] = value (the functional setitem)",
                    raises_for=_index_put_raises)
# Compiled with a basic index: a select between value and x (kiln/lowering/fills.py).
index_put.lowering = {"region_write": True}


def element_store_may_raise(src: Any, dst: Any) -> bool:
    """Can NumPy's ``x[i, j] = v`` (one element), ``v`` a NumPy scalar of dtype ``src`` and
    ``x`` of dtype ``dst``, raise? A signed integer ``x`` takes the value as a Python int,
    as ``int()`` does: ValueError for NaN, OverflowError for an infinity and for a value
    out of range ("Python integer 300 out of bounds for int8" for ``np.int16(300)`` or
    ``np.float32(300.0)``; "Python int too large to convert to C long" for
    ``np.uint64(2**63)`` into int64). Any other ``x`` casts: an unsigned one wraps
    (``np.int16(-1)`` is 255 in uint8) and a float one overflows to inf, with NumPy's cast
    warnings. (A Python int raises for either kind of integer: ``-1`` into uint8.)"""
    src, dst = np.dtype(src), np.dtype(dst)
    return dst.kind == "i" and src.kind in "iufc" and not np.can_cast(src, dst)


def _element_value_impl(value: Any, *, dtype: Any, store: Any = operator.setitem) -> Any:
    out = np.zeros((), dtype)
    store(out, (), value[()] if isinstance(value, np.ndarray) else value)
    return out


# ``x[i] = v`` of a NumPy scalar that NumPy converts with a range check (above): the
# conversion as NumPy's own element store, an extern call (no backend fuses it), so its
# ValueError and OverflowError are NumPy's; the store then writes a value of x's dtype.
element_value = declare("element_value", Category.POINTWISE, _element_value_impl, inputs=("value",),
                        params={"dtype": None}, may_raise=True,
                        meta=lambda value, dtype: TensorMeta((), np.dtype(dtype)),
                        impl_at=stores_at(_element_value_impl, operator.setitem),
                        python_us=lambda node, per_op_us: 0.2,
                        doc="NumPy's conversion of a NumPy scalar stored into one element of "
                            "a signed integer array (int(): its ValueError, OverflowError)")


def _index_add_impl(x: Any, index: tuple, value: Any, *, store: Any = np.add.at) -> Any:
    out = fresh_copy(x)
    add_at_broadcast(out, index, value, store=store)
    return out


def _index_put_inplace(x: Any, index: tuple, value: Any, *, store: Any = operator.setitem) -> Any:
    store(x, index, value)
    return x


def _index_add_inplace(x: Any, index: tuple, value: Any, *, store: Any = np.add.at) -> Any:
    add_at_broadcast(x, index, value, store=store)
    return x


def _same_int_arrays(entries: tuple, ndim: int) -> bool:
    """Are ``entries`` (an index) 1 to ``ndim`` integer arrays of one shape?"""
    if not 0 < len(entries) <= ndim:
        return False
    shape = getattr(entries[0], "shape", None)
    for e in entries:
        if type(e) is not np.ndarray or e.dtype.kind not in "iu" or e.shape != shape:
            return False
    return True


def add_at_broadcast(x: Any, index: tuple, value: Any, ufunc: np.ufunc = np.add,
                     store: Any = None) -> None:
    """``np.add.at`` (or another binary ``ufunc.at``) with ``value`` broadcast to
    ``x[index]`` first: NumPy 2.4 reads uninitialised memory when a value broadcasts
    against a multi-dimensional index. ``store``: what calls ``ufunc.at`` (Op.impl_at)."""
    if not (type(value) is np.ndarray and type(x) is np.ndarray):   # (as_array's own shortcut)
        value = as_array(value, x)
    elif x.ndim == 1 and type(index) is tuple and len(index) == 1 and type(index[0]) is np.ndarray \
            and index[0].shape == value.shape and index[0].dtype.kind in "iu":
        # x[i] of a vector, i integers of value's shape (a scatter by label): nothing to
        # broadcast; _same_int_arrays's frame and the shape work took ~0.3 us of ~3 (slow11)
        (store or ufunc.at)(x, index, value)
        return
    if value.ndim == 0:
        # a single value (np.maximum.at(v, i, 10.0)) broadcasts correctly on NumPy 2.4 and
        # 2.5; the shape work and broadcast_to took ~4 of the call's ~5 us
        (store or ufunc.at)(x, index, value)
        return
    entries = index if isinstance(index, tuple) else (index,)
    if _same_int_arrays(entries, x.ndim if type(x) is np.ndarray else np.ndim(x)):
        # x[i] or x[i, j] of integer arrays of one shape (a scatter by label, into cells;
        # ~10 us faster than indexed_shape): their shape, then x's dims they leave
        target_shape = entries[0].shape + x.shape[len(entries):]
    elif any(getattr(v, "dtype", None) == np.bool_ or type(v) is bool for v in entries):
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
            pass  # let ufunc.at raise its own message
    (store or ufunc.at)(x, index, value)


index_add = declare("index_add", Category.GATHER, _index_add_impl,
                    inputs=("x", "index", "value"), meta=_scatter_meta(False),
                    vjp=lambda g, out, x, index, value: (g, None, _value_grad(g, index, value)),
                    doc="a copy of x with value added at index; repeats accumulate (np.add.at)",
                    may_raise=True)

index_put.inplace_impl = _index_put_inplace
index_put.impl_at = stores_at(_index_put_impl, operator.setitem)
index_add.impl_at = stores_at(_index_add_impl, np.add.at)
index_put.subscript = True   # inplace_impl is x[index] = value


def _copy_order(xshape: tuple, xstrides: tuple, *rest: Any, **params: Any) -> tuple | None:
    """A scatter's result is ``fresh_copy(x)``, laid out as x (order='K'): a Fortran-
    ordered x gives a Fortran-ordered result, so a later ``.ravel()`` of it is a copy
    (fuzzer seed 20522). Lowering keeps that layout rather than converting to C."""
    strides = layout_of(fresh_copy, [Strided(tuple(xshape), tuple(xstrides))], {}, tuple(xshape))
    return None if strides is None else axis_order(xshape, strides)


index_put.result_order = index_add.result_order = _copy_order
# Linear in x and value with real coefficients (a copy, a gather): their rules hold for
# complex values as written (Op.complex_grad; ``z.real = x`` writes a real value into a
# complex array, whose cotangent fit_grad takes the real part of).
index_put.complex_grad = index_add.complex_grad = True


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


def _index_put_overlap(args: tuple) -> bool:
    """``x[index] = value`` with a basic index (ints, slices): NumPy copies a value that
    overlaps ``x`` before it writes (``x[1:] = x[:-1]``). Not claimed for an index of
    arrays, which may themselves be views of ``x``."""
    index = args[1] if isinstance(args[1], tuple) else (args[1],)
    return all(e is None or e is Ellipsis or isinstance(e, (int, slice)) or getattr(e, "shape", None) == ()
               for e in index)


index_put.inplace_overlap = _index_put_overlap
index_add.inplace_impl = _index_add_inplace
