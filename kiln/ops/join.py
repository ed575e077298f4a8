"""Joining and replicating arrays: concatenate, stack, repeat, tile.

``concatenate`` and ``stack`` take a *sequence* input (named ``*arrays``): the op receives
a tuple of arrays as one positional input, and its derivative rule returns a tuple of
cotangents for it, one per array. hstack, vstack, dstack and column_stack are
concatenations (or stacks) of arrays first promoted to a common rank; concatenate's
``shapes`` parameter carries that promotion.

Rules compute shapes directly (a fake run would allocate the joined result) and raise
the errors NumPy raises, with NumPy's messages. Derivatives slice the cotangent back
apart (concatenate, stack) or fold the copies back onto the original with a reshape and
a ``sum_to`` (repeat, tile).
"""
from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

from .indexing import is_array_entry, zeros_for
from .meta import TensorMeta, below_of_inputs, check_casting, normalize_one_axis, reject, shape_of
from .registry import (Bound, Category, Composite, F, N, declare, is_float_like, method_key, spell,
                       spell_composite)
from .shape import shape_arg


def _dtype_of(value: Any) -> np.dtype:
    return np.dtype(value.dtype) if hasattr(value, "dtype") else np.asarray(value).dtype


def _size(shape: tuple) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _dtype_arg(dtype: Any) -> np.dtype | None:
    return None if dtype is None else np.dtype(dtype)


def as_sequence(arrays: Any) -> tuple:
    """The arrays of a joining call as a tuple; non-arrays (scalars, lists) become arrays
    as NumPy makes them. A single ndarray is a sequence of its rows, as in NumPy."""
    if isinstance(arrays, TensorMeta):
        # A traced array (capture binds metas): its rows are not separate values here.
        reject("joining arrays", "arrays", "<one array>", "pass a list of arrays (e.g. "
               "list(a) to join the rows of a)")
    if is_array_entry(arrays):
        arrays = list(arrays)
    return tuple(a if is_array_entry(a) else np.asarray(a) for a in arrays)


def _result_dtype(arrays: tuple, dtype: np.dtype | None, casting: str) -> np.dtype:
    dtypes = [_dtype_of(a) for a in arrays]
    if dtype is None:
        return np.result_type(*dtypes)
    for dt in dtypes:
        if not np.can_cast(dt, dtype, casting):
            raise TypeError(f"Cannot cast array data from {dt!r} to {dtype!r} according to "
                            f"the rule '{casting}'")
    return dtype


def _check_out(arrays: tuple, dtype: np.dtype | None, casting: str, out: Any) -> None:
    """``casting=`` as NumPy checks it; ``out=``: NumPy refuses it next to ``dtype=``, and casts each array into out's dtype
    under ``casting`` (``casting='no'`` into a complex64 ``out`` raises), which the later
    write into ``out`` (same_kind) would not check."""
    check_casting(casting)
    if out is None:
        return
    if dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both "
                        "were provided.")
    if hasattr(out, "dtype"):
        _result_dtype(arrays, np.dtype(out.dtype), casting)


# -- concatenate --------------------------------------------------------------------------
# ``shapes`` (None, or one shape per array, None for an array joined as it is) reshapes the
# arrays before joining them: it is how hstack/vstack/dstack/column_stack promote lower-rank
# arrays (a reshape that only adds unit axes) without a normalizer having to call ops.
# np.concatenate itself never sets it.

def _joined_shapes(arrays: tuple, shapes: tuple | None) -> list:
    own = [tuple(shape_of(a)) for a in arrays]
    if shapes is None:
        return own
    shapes = [o if s is None else s for o, s in zip(own, shapes)]
    for o, s in zip(own, shapes):
        # A promotion only adds unit axes: the same number of elements. Checked so that a
        # size known only at run time (the length of x[mask]) that the promoted shape
        # baked in is caught where capture moves it (kiln/capture/dims.py), not computed
        # with the example's length (fuzzer seed 9111).
        if _size(o) != _size(tuple(s)):
            raise ValueError(f"cannot reshape array of size {_size(o)} into shape {tuple(s)}")
    return [tuple(s) for s in shapes]


def _concatenate_impl(arrays: tuple, axis: int | None, dtype: Any, casting: str,
                      shapes: tuple | None) -> Any:
    if shapes is not None:
        # (the method where there is one: np.reshape's dispatch through a generator cost
        # ~5 us for two pieces, more than np.column_stack's whole call)
        arrays = [a if s is None else a.reshape(s) if hasattr(a, "reshape") else np.reshape(a, s)
                  for a, s in zip(arrays, shapes)]
    return np.concatenate(arrays, axis=axis, dtype=dtype, casting=casting)


def _concatenate_meta(arrays: tuple, axis: int | None, dtype: Any, casting: str,
                      shapes: tuple | None) -> TensorMeta:
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    shapes = _joined_shapes(arrays, shapes)
    if axis is None:
        shapes, ax = [(_size(s),) for s in shapes], 0
    else:
        if len(shapes[0]) == 0:
            raise ValueError("zero-dimensional arrays cannot be concatenated")
        ax = normalize_one_axis(axis, len(shapes[0]))
    first = shapes[0]
    for i, s in enumerate(shapes[1:], 1):
        if len(s) != len(first):
            raise ValueError(f"all the input arrays must have same number of dimensions, but "
                             f"the array at index 0 has {len(first)} dimension(s) and the "
                             f"array at index {i} has {len(s)} dimension(s)")
        for d, (a, b) in enumerate(zip(first, s)):
            if d != ax and a != b:
                raise ValueError(f"all the input array dimensions except for the "
                                 f"concatenation axis must match exactly, but along dimension "
                                 f"{d}, the array at index 0 has size {a} and the array at "
                                 f"index {i} has size {b}")
    shape = first[:ax] + (sum(s[ax] for s in shapes),) + first[ax + 1:]
    return TensorMeta(shape, _result_dtype(arrays, dtype, casting))


def _concatenate_vjp(g, out, arrays, axis, dtype, casting, shapes):
    grads, start = [], 0
    for a, joined in zip(arrays, _joined_shapes(arrays, shapes)):
        own = tuple(shape_of(a))
        n = _size(joined) if axis is None else joined[axis]
        if is_float_like(a):
            if axis is None:
                piece = F.getitem(g, (slice(start, start + n),))
            else:
                piece = F.getitem(g, (slice(None),) * axis + (slice(start, start + n),))
            grads.append(piece if tuple(shape_of(piece)) == own else F.reshape(piece, shape=own))
        else:
            grads.append(None)
        start += n
    return (tuple(grads),)


concatenate = declare("concatenate", Category.JOIN, _concatenate_impl, inputs=("*arrays",),
                      params={"axis": 0, "dtype": None, "casting": "same_kind", "shapes": None},
                      meta=_concatenate_meta, vjp=_concatenate_vjp,
                      doc="numpy.concatenate: join arrays along an existing axis "
                          "(axis=None: of the flattened arrays), each first reshaped to "
                          "shapes[i] when shapes is given")


def _concat_bound(arrays: tuple, axis: Any, dtype: Any = None, casting: str = "same_kind",
                  out: Any = None, shapes: tuple | None = None) -> Bound:
    # Canonical axis where it is valid; else the rule raises NumPy's error.
    joined = _joined_shapes(arrays, shapes)
    if axis is not None and arrays and len(joined[0]) > 0:
        axis = normalize_one_axis(axis, len(joined[0]))
    _check_out(arrays, _dtype_arg(dtype), casting, out)
    return Bound(concatenate, (arrays,), {"axis": axis, "dtype": _dtype_arg(dtype),
                                          "casting": casting, "shapes": shapes}, out)


def _concatenate_normalize(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = _weak_numbers(arrays, dtype, casting)
    return _into_out(_concat_bound(as_sequence(arrays), axis, dtype, casting, out))


def _python_number(value: Any) -> bool:
    return type(value) in (int, float, complex)


def _weak_numbers(arrays: Any, dtype: Any, casting: str) -> Any:
    """np.concatenate's Python numbers (``axis=None``) are weak, NEP 50: ``[float32 array,
    1.0]`` joins as float32 (np.stack and np.hstack make float64 arrays of them first), and
    ``casting=`` sees the weak value (300 goes into int8 under 'safe', 1.5 not under
    'same_kind'). Each number becomes a 0-d array of the join's dtype as NumPy's cast makes
    it (300 wraps to 44 in int8); one whose conversion warns or fails (1e300 into float32,
    2**70) runs as NumPy, which warns or raises at every call."""
    if isinstance(arrays, TensorMeta) or is_array_entry(arrays) or \
            not isinstance(arrays, (list, tuple)) or not any(map(_python_number, arrays)):
        return arrays
    check_casting(casting)
    numbers = [a for a in arrays if _python_number(a)]
    target = np.dtype(dtype) if dtype is not None else \
        np.result_type(*(_dtype_of(a) for a in arrays if not _python_number(a)), *numbers)
    for number in numbers:
        weak = np.result_type(target, number)
        if not np.can_cast(weak, target, casting):
            raise TypeError(f"Cannot cast scalar from {weak!r} to {target!r} according to the "
                            f"rule '{casting}'")
    try:
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")
            return [np.asarray(a).astype(target) if _python_number(a) else a for a in arrays]
    except (Warning, FloatingPointError, OverflowError, TypeError, ValueError):
        reject("numpy.concatenate", "arrays", arrays, "it runs as NumPy")


def _into_out(bound: Bound) -> Bound | Composite:
    """A join with ``out=`` of the result's shape as NumPy runs it (:func:`_join_into`);
    ``bound`` as it is otherwise (no out=, or out='s shape error comes from it)."""
    out, (arrays,), params = bound.out, bound.inputs, bound.params
    if out is None or not hasattr(out, "shape") or \
            tuple(shape_of(out)) != tuple(bound.op.meta(arrays, **params).shape):
        return bound
    return Composite(_join_into, (out, arrays), {"axis": params["axis"], "casting": params["casting"],
                                                 "stack": bound.op is stack})


def _join_into(out: Any, arrays: tuple, axis: Any, casting: str, stack: bool) -> Any:
    """``np.concatenate(arrays, axis, out=out)`` (``np.stack`` with ``stack``) as NumPy runs
    it: each array copied into its slice of ``out`` in turn. Each copy is buffered where it
    overlaps its slice, the sequence is not: ``np.concatenate([x[3:], x[:3]], out=x)`` reads
    ``x[:3]`` after the first copy wrote it."""
    start = 0
    for a in arrays:
        if stack:
            a = N.expand_dims(a, axis)
        if axis is None:
            n = _size(tuple(shape_of(a)))
            a, window = N.ravel(a), (slice(start, start + n),)
        else:
            n = shape_of(a)[axis]
            window = (slice(None),) * axis + (slice(start, start + n),)
        N.copyto(N.getitem(out, window), a, casting=casting)
        start += n
    return out


spell(np.concatenate, concatenate, _concatenate_normalize, "numpy.concatenate", array_items="strong")


# -- stack ---------------------------------------------------------------------------------

def _stack_impl(arrays: tuple, axis: int, dtype: Any, casting: str) -> Any:
    if dtype is None and arrays and all((type(a) is np.ndarray or isinstance(a, np.generic)) and a.shape == ()
                                        for a in arrays):
        d = arrays[0].dtype
        if d.kind in "biufcmM" and all(a.dtype == d for a in arrays):
            # 0-d arrays of one dtype (np.array of a list of NumPy scalars, each one a
            # reduction's): NumPy's array of them, without np.stack's Python (~2 us)
            return np.array(arrays, d)
    return np.stack(arrays, axis=axis, dtype=dtype, casting=casting)


def _stack_meta(arrays: tuple, axis: int, dtype: Any, casting: str) -> TensorMeta:
    if not arrays:
        raise ValueError("need at least one array to stack")
    shapes = {tuple(shape_of(a)) for a in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    (shape,) = shapes
    ax = normalize_one_axis(axis, len(shape) + 1)
    return TensorMeta(shape[:ax] + (len(arrays),) + shape[ax:],
                      _result_dtype(arrays, dtype, casting))


def _stack_vjp(g, out, arrays, axis, dtype, casting):
    return (tuple(F.getitem(g, (slice(None),) * axis + (i,)) if is_float_like(a) else None
                  for i, a in enumerate(arrays)),)


stack = declare("stack", Category.JOIN, _stack_impl, inputs=("*arrays",),
                params={"axis": 0, "dtype": None, "casting": "same_kind"},
                meta=_stack_meta, vjp=_stack_vjp,
                doc="numpy.stack: join same-shaped arrays along a new axis")


def _stack_bound(arrays: tuple, axis: Any, dtype: Any = None, casting: str = "same_kind",
                 out: Any = None) -> Bound:
    if arrays:
        axis = normalize_one_axis(axis, len(shape_of(arrays[0])) + 1)
    _check_out(arrays, _dtype_arg(dtype), casting, out)
    return Bound(stack, (arrays,), {"axis": axis, "dtype": _dtype_arg(dtype),
                                    "casting": casting}, out)


def _stack_normalize(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return _into_out(_stack_bound(as_sequence(arrays), axis, dtype, casting, out))


spell(np.stack, stack, _stack_normalize, "numpy.stack", array_items="all")
# Compiled with a small result: a select among the pieces (kiln/lowering/fills.py).
stack.lowering = {"join": "stack"}
concatenate.lowering = {"join": "concatenate"}


# -- hstack, vstack, dstack, column_stack ------------------------------------------------
# Each promotes its arrays to a minimum rank, then concatenates. When every array has the
# same shape the promotion is folded into a single op (a concatenate, or a stack where the
# promotion just adds the joined axis). Otherwise concatenate's ``shapes`` parameter
# carries the promoted shapes: normalizers never call ops (capture binds them on metas).

def _promoted(arrays: tuple, promote) -> tuple | None:
    """The promoted shape of each array (None for one that keeps its own: a parameter naming
    a dynamic size would pin it, the `np.hstack((jm, j))` of a growing history), or None
    when no array changes."""
    own = [tuple(shape_of(a)) for a in arrays]
    new = tuple(None if p == s else p for s, p in ((s, promote(s)) for s in own))
    return None if all(s is None for s in new) else new


def _atleast_1d(s):
    return s if len(s) >= 1 else (1,)


def _atleast_2d(s):
    return s if len(s) >= 2 else (1,) * (2 - len(s)) + s


def _atleast_3d(s):
    return {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}.get(len(s), s)


def _column(s):
    return s if len(s) >= 2 else (s + (1,) if len(s) == 1 else (1, 1))


def _same_shapes(arrays: tuple, ndim: int) -> bool:
    """All arrays of rank ``ndim`` and one shape: the promotion-free stack applies (mismatched
    shapes take the concatenate path, so errors carry NumPy's concatenate message)."""
    shapes = {tuple(shape_of(a)) for a in arrays}
    return len(shapes) == 1 and len(next(iter(shapes))) == ndim


def _hstack_normalize(tup, *, dtype=None, casting="same_kind"):
    arrays = as_sequence(tup)
    if _same_shapes(arrays, 0):
        return _stack_bound(arrays, 0, dtype, casting)
    shapes = _promoted(arrays, _atleast_1d)
    axis = 0 if arrays and len(_joined_shapes(arrays, shapes)[0]) == 1 else 1
    return _concat_bound(arrays, axis, dtype, casting, shapes=shapes)


def _vstack_normalize(tup, *, dtype=None, casting="same_kind"):
    arrays = as_sequence(tup)
    if _same_shapes(arrays, 1):
        return _stack_bound(arrays, 0, dtype, casting)  # rows (n,) -> (k, n)
    return _concat_bound(arrays, 0, dtype, casting, shapes=_promoted(arrays, _atleast_2d))


def _dstack_normalize(tup):
    arrays = as_sequence(tup)
    if _same_shapes(arrays, 2):
        return _stack_bound(arrays, 2)
    return _concat_bound(arrays, 2, shapes=_promoted(arrays, _atleast_3d))


def _column_stack_normalize(tup):
    arrays = as_sequence(tup)
    if _same_shapes(arrays, 1):
        return _stack_bound(arrays, 1)  # columns (n,) -> (n, k)
    return _concat_bound(arrays, 1, shapes=_promoted(arrays, _column))


spell(np.hstack, concatenate, _hstack_normalize, "numpy.hstack", array_items="all")
spell(np.vstack, concatenate, _vstack_normalize, "numpy.vstack", array_items="all")
spell(np.dstack, concatenate, _dstack_normalize, "numpy.dstack", array_items="all")
spell(np.column_stack, concatenate, _column_stack_normalize, "numpy.column_stack", array_items="all")


# -- repeat --------------------------------------------------------------------------------

def _repeat_base(x: Any, axis: int | None) -> tuple[tuple, int]:
    shape = tuple(shape_of(x))
    return ((_size(shape),), 0) if axis is None else (shape, axis)


def _repeat_meta(x: Any, repeats: Any, axis: int | None) -> TensorMeta:
    base, ax = _repeat_base(x, axis)
    n = base[ax]
    if isinstance(repeats, int):
        if repeats < 0:
            raise ValueError("negative dimensions are not allowed")
        new = n * repeats
    else:
        if len(repeats) != n:
            raise ValueError(f"operands could not be broadcast together with shape "
                             f"({n},) ({len(repeats)},)")
        if any(r < 0 for r in repeats):
            raise ValueError("repeats may not contain negative values.")
        new = sum(repeats)
    return TensorMeta(base[:ax] + (new,) + base[ax + 1:], _dtype_of(x))


def _repeat_vjp(g, out, x, repeats, axis):
    base, ax = _repeat_base(x, axis)
    n = base[ax]
    if isinstance(repeats, int):
        # Each element's copies are adjacent: split the axis into (n, repeats), fold them.
        split = base[:ax] + (n, repeats) + base[ax + 1:]
        folded = F.sum_to(F.reshape(g, shape=split), shape=base[:ax] + (n, 1) + base[ax + 1:])
    else:
        # Uneven repeats: add each copy back onto its source element (a constant index).
        owner = np.repeat(np.arange(n, dtype=np.intp), repeats)
        zeros = zeros_for(g, x) if axis is not None else F.ravel(zeros_for(g, x))
        folded = F.index_add(zeros, (slice(None),) * ax + (owner,), g)
    return (F.reshape(folded, shape=tuple(shape_of(x))),)


repeat = declare("repeat", Category.JOIN, lambda x, repeats, axis: np.repeat(x, repeats, axis),
                 inputs=("x",), params={"repeats": 1, "axis": None},
                 meta=_repeat_meta, vjp=_repeat_vjp,
                 doc="numpy.repeat: repeat each element (of the flat array if axis is None)")


def _repeat_normalize(a, repeats, axis=None):
    # repeats is static: an int, or a tuple of ints (one per element along the axis).
    if isinstance(repeats, TensorMeta):
        reject("numpy.repeat", "repeats", "<traced array>", "the output shape depends on "
               "its values; pass the counts as a Python int or list")
    if not isinstance(repeats, (int, np.integer)):
        reps = np.asarray(repeats)
        if reps.dtype.kind not in "iu" and reps.size:
            raise TypeError(f"Cannot cast array data from {reps.dtype!r} to dtype('int64') "
                            f"according to the rule 'safe'")
        reps = reps.astype(np.intp).reshape(-1)
        # One count broadcasts over the axis, exactly like an int.
        repeats = int(reps[0]) if reps.size == 1 else tuple(int(r) for r in reps)
    else:
        repeats = int(repeats)
    if axis is not None:
        axis = normalize_one_axis(axis, len(shape_of(a)))
    return Bound(repeat, (a,), {"repeats": repeats, "axis": axis})


spell(np.repeat, repeat, _repeat_normalize, "numpy.repeat")
# Compiled with one count along an axis: a load at index // repeats (lowering/fills.py).
repeat.lowering = {"repeat": True}
spell(method_key("repeat"), repeat, _repeat_normalize, "ndarray.repeat")


# -- tile ----------------------------------------------------------------------------------

def _tile_shapes(x: Any, reps: tuple) -> tuple[tuple, tuple]:
    """The input's shape and reps, both padded with leading ones to a common rank."""
    shape = tuple(shape_of(x))
    nd = max(len(shape), len(reps))
    return (1,) * (nd - len(shape)) + shape, (1,) * (nd - len(reps)) + tuple(reps)


def _tile_meta(x: Any, reps: tuple) -> TensorMeta:
    shape, reps = _tile_shapes(x, reps)
    if any(r < 0 for r in reps):
        raise ValueError("negative dimensions are not allowed")
    return TensorMeta(tuple(d * r for d, r in zip(shape, reps)), _dtype_of(x))


def _tile_vjp(g, out, x, reps):
    shape, reps = _tile_shapes(x, reps)
    # Output axis i is (reps[i], shape[i]) in row-major order: split, fold the copies.
    split = tuple(v for pair in zip(reps, shape) for v in pair)
    folded = tuple(v for d in shape for v in (1, d))
    g = F.sum_to(F.reshape(g, shape=split), shape=folded)
    return (F.reshape(g, shape=tuple(shape_of(x))),)


tile = declare("tile", Category.JOIN, lambda x, reps: np.tile(x, reps), inputs=("x",),
               params={"reps": ()}, meta=_tile_meta, vjp=_tile_vjp,
               doc="numpy.tile: the array repeated reps times along each axis")


def _tile_normalize(A, reps):
    return Bound(tile, (A,), {"reps": shape_arg(reps, bools=True)})


spell(np.tile, tile, _tile_normalize, "numpy.tile")


def _resize(a: Any, shape: tuple) -> Any:
    """np.resize: the flattened array repeated to fill ``shape`` (zeros when either is empty)."""
    flat, size = N.ravel(a), math.prod(shape)
    n = math.prod(shape_of(a))
    if n == 0 or size == 0:
        return N.zeros(shape, dtype=getattr(a, "dtype", None))
    return N.reshape(N.getitem(N.concatenate([flat] * -(-size // n)), (slice(None, size),)), shape)


def _resize_normalize(a, new_shape):
    shape = (operator.index(new_shape),) if not isinstance(new_shape, (tuple, list)) else \
        tuple(operator.index(d) for d in new_shape)
    if any(d < 0 for d in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    return Composite(_resize, (a,), {"shape": shape})


spell_composite(np.resize, ("ravel", "concatenate", "getitem", "reshape"), _resize_normalize,
                "numpy.resize")


# (their values are their inputs': np.bincount of them is as long as the bound says)
for _op in (concatenate, stack, repeat, tile):
    _op.values_below = below_of_inputs


# -- block ---------------------------------------------------------------------------------
# np.block of nested lists: each leaf promoted to the result's rank by leading ones, the
# innermost lists joined along the last axis, the next along the one before, and so on: a
# tree of concatenates (NumPy's own ``_block_slicing`` computes the same). It had no op: a
# NoOpError under kiln.grad, a graph break compiled.

def _block_leaves(arrays: Any, leaves: list) -> Any:
    """The nesting of ``arrays`` with each leaf replaced by its position in ``leaves``."""
    if isinstance(arrays, list):
        return [_block_leaves(a, leaves) for a in arrays]
    leaves.append(arrays)
    return len(leaves) - 1


def _stand_in(tree: Any, leaves: list) -> Any:
    """A zero array of each leaf's shape and dtype in the leaf's place (NumPy's errors)."""
    if isinstance(tree, list):
        return [_stand_in(t, leaves) for t in tree]
    return np.zeros(tuple(shape_of(leaves[tree])), dtype=_dtype_of(leaves[tree]))


def _block(*leaves, tree, depth, ndim):
    def join(node, level):
        if isinstance(node, list):
            return N.concatenate([join(n, level + 1) for n in node], axis=level - depth)
        leaf = leaves[node]
        shape = tuple(shape_of(leaf))
        return N.reshape(leaf, (1,) * (ndim - len(shape)) + shape)
    return join(tree, 0) if depth else N.copy(leaves[0])


def _block_normalize(arrays):
    if isinstance(arrays, tuple):
        np.block(arrays)     # NumPy's TypeError for a tuple
    leaves: list = []
    tree = _block_leaves(arrays, leaves)
    out = np.block(_stand_in(tree, leaves))   # NumPy's errors: depths, empty lists, shapes
    depth = 0
    node = arrays
    while isinstance(node, list):
        node, depth = node[0], depth + 1
    return Composite(_block, tuple(leaves), {"tree": tree, "depth": depth, "ndim": out.ndim})


spell_composite(np.block, ("concatenate", "reshape", "copy"), _block_normalize, "numpy.block")
