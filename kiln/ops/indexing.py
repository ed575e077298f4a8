"""Indexing: ``x[index]`` (its scatter counterparts are in kiln/ops/scatter.py, take and
take_along_axis in kiln/ops/take.py).

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
from .meta import as_array, TensorMeta, below_of_inputs, fake, shape_of, to_fake
from .registry import Bound, Category, F, declare, method_key, spell


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
                  vjp=_getitem_vjp, subscript=True, view_of_input=True,
                  doc="x[index] with ints, slices, None and Ellipsis: a view, as in NumPy")


def _index_impl(x: Any, index: tuple) -> Any:
    return as_array(x)[index]


def _index_meta(x: Any, index: tuple) -> TensorMeta:
    if not _static_slices(index):
        # A traced slice bound: only running the kernel knows (the fake run).
        return TensorMeta(shape_of(_index_impl(fake(x), to_fake(index))), x.dtype)
    return TensorMeta(indexed_shape(shape_of(x), index), x.dtype)


def advanced_order(xshape: tuple, xstrides: tuple, index: tuple) -> tuple | None:
    """The memory order NumPy gives ``x[index]`` (integer arrays), slowest axis first, from
    x's strides (elements): NumPy fills a new array whose broadcast index dims come first
    in C order, then the other ("subspace") dims in x's own order of them (order='K'),
    and, when the advanced entries (ints count, beside arrays) are adjacent but not first,
    hands back its transpose with the broadcast dims moved to their place. So
    ``x[:, k, i, j]`` of a C-ordered x keeps x's first axis fastest in memory (im2col:
    ``.transpose(1, 2, 0).reshape(...)`` of it is a view). None when the index holds None
    or Ellipsis, or a slice step or stride is not a number (callers keep C order)."""
    if any(v is None or v is Ellipsis for v in index):
        return None
    advanced = [k for k, v in enumerate(index) if not isinstance(v, slice)]
    arrays = [v for v in index if not isinstance(v, (slice, int))]
    if not arrays or len(index) > len(xshape):
        return None
    nb = max(len(getattr(v, "shape", ())) for v in arrays)
    # subspace dims: the slices, then x's dims past the index; their x strides
    sub = []
    for k in range(len(xshape)):
        v = index[k] if k < len(index) else slice(None)
        if isinstance(v, slice):
            step = 1 if v.step is None else v.step
            if not isinstance(step, int) or not isinstance(xstrides[k], int):
                return None
            sub.append(xstrides[k] * step)
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    first = sum(1 for k in range(advanced[0]) if isinstance(index[k], slice)) \
        if adjacent and advanced[0] > 0 else 0
    # result axes: subspace dims before the broadcast dims, the broadcast dims, the rest
    sub_axes = list(range(first)) + list(range(first + nb, first + nb + len(sub) - first))
    bcast_axes = list(range(first, first + nb))
    by_stride = sorted(range(len(sub)), key=lambda d: -abs(sub[d]))   # stable: ties keep order
    return tuple(bcast_axes) + tuple(sub_axes[d] for d in by_stride)


def _scatter_back(g, x, index):
    return F.index_add(zeros_for(g, x), index, g)


index_op = declare("index", Category.GATHER, _index_impl, inputs=("x", "index"),
                   meta=_index_meta,
                   vjp=lambda g, out, x, index: (_scatter_back(g, x, index), None),
                   doc="x[index] with integer arrays (advanced indexing): a gather", may_raise=True,
                   result_order=advanced_order, fresh_result=True)


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


# A mask whose runs (of Trues or Falses) are shorter than this on average is taken by its
# positions: NumPy's x[m] copies run by run, ~10 ns a run, so a random mask took 1.1 ms per
# 1e5 float64 elements against 0.11 ms for flatnonzero + take (the same values); masks of
# longer runs (x > c of smooth data) copy faster NumPy's way. Measured on the mask's first
# MASK_SAMPLE elements. Below MASK_TAKE_MIN elements of x NumPy's own x[m] is at least as
# fast as the positions (1.7 against 3.2 us for 64 float64, 4.5 against 5.7 for 1024; rows
# of 3 from 512 on take faster) and the sampling alone costs ~2 us: a 2-element mask took
# 3.7 us against 0.3 (np.linalg.lstsq's residuals are one).
SHORT_RUNS = 6
MASK_SAMPLE = 8192
MASK_TAKE_MIN = 1024


def _mask_impl(x: Any, index: tuple) -> Any:
    """``x[m]`` of one boolean mask over x's leading dims: NumPy's values and layout (a new
    C-ordered array), taken through the positions of a mask of short runs."""
    m = index[0] if len(index) == 1 else None
    if type(x) is np.ndarray and x.size >= MASK_TAKE_MIN and type(m) is np.ndarray \
            and m.dtype == np.bool_ and m.ndim >= 1 and x.shape[:m.ndim] == m.shape \
            and (x.ndim == 1 or x.flags.c_contiguous):
        flat = m.reshape(-1)
        s = flat[:MASK_SAMPLE]
        if s.size > 1 and np.count_nonzero(s[1:] != s[:-1]) * SHORT_RUNS > s.size:
            return x.reshape((-1,) + x.shape[m.ndim:]).take(np.flatnonzero(flat), axis=0)
    return _index_impl(x, index)


getitem_mask = declare("getitem_mask", Category.GATHER, _mask_impl, inputs=("x", "index"),
                       meta=_mask_meta, data_dependent=True, masked_selection=True,
                       unbacked=_mask_unbacked, fresh_result=True,
                       vjp=lambda g, out, x, index: (_scatter_back(g, x, index), None),
                       doc="x[index] with a boolean mask: its length depends on the data")
# Gathers always copy (NumPy's advanced indexing, a 0-d integer array included, never
# gives a view): a kernel may write over their result (``y = x[idx]; y[0] = 99``).
# Gathers: their rules (a scatter-add into zeros of x's dtype) hold for complex values.
index_op.complex_grad = getitem_mask.complex_grad = True


def _getitem_normalize(x, index):
    index = normalize_index(index)
    op = {"basic": getitem, "advanced": index_op, "mask": getitem_mask}[index_kind(index)]
    return Bound(op, (x, index), {})


spell(method_key("__getitem__"), getitem, _getitem_normalize, "ndarray.__getitem__")


def _getitem_below(x, index=(), **params):
    """x[i] reads x's values (the index's own bounds say nothing about them); an element
    read gives none (a number, never counted: capture would only look it up again)."""
    entries = index if isinstance(index, tuple) else (index,)
    if all(isinstance(e, (int, np.integer)) for e in entries):
        return None
    return below_of_inputs(x)


getitem.values_below = _getitem_below


def _flat_item_meta(x: Any, index: Any) -> TensorMeta:
    if isinstance(index, TensorMeta) and (index.shape != () or np.dtype(index.dtype).kind not in "iu"):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) "
                         "and integer or boolean arrays are valid indices")
    return TensorMeta((), x.dtype)


# ``Z.flat[Z.argmin()]``, ``a.flat[k]`` of a run-time int: the element at C-order position
# ``index`` (NumPy's own ``flat``: its wrap of a negative index and its IndexError, "index 7
# is out of bounds for size 6", which indexing's differs from). A constant index is an
# element read (kiln/capture/variables/numpy_objects.py FlatIterVariable).
flat_item = declare("flat_item", Category.EXTERN, lambda x, index: x.flat[index],
                    inputs=("x", "index"), meta=_flat_item_meta, may_raise=True,
                    doc="x.flat[index] of a run-time integer index: one element, a NumPy scalar")
