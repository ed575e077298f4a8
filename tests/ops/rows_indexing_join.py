"""Op-table rows: indexing, gathers and scatters; joining and replicating."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from kiln.ops import F

from .gen import ALL, F64, I64, NUMERIC, REAL, Case, Ctx, index_arg
from .spec import A, Row, applied, getattr_op, scalar_of, suffix_shape


# ==========================================================================================
# Indexing

def basic_index(ctx: Ctx, shape: tuple, in_range: bool = True) -> tuple:
    """A basic index (ints, slices, None, Ellipsis) for an array of ``shape``."""
    entries: list = []
    used = ctx.integer(0, len(shape), "indexed dims")
    for d in shape[:used]:
        kind = ctx.choice(["int", "slice", "slice", "all"] if d else ["slice", "all"], "entry")
        if kind == "int":
            entries.append(int(ctx.rng.integers(-d, d)))
        elif kind == "slice":
            bound = [None] + list(range(-d - 1, d + 2))
            step = ctx.choice([None, 1, 2, -1, -2], "step")
            entries.append(slice(ctx.choice(bound, "start"), ctx.choice(bound, "stop"), step))
        else:
            entries.append(slice(None))
    if ctx.boolean("newaxis"):
        entries.insert(ctx.integer(0, len(entries), "at"), None)
    if ctx.boolean("ellipsis"):
        # Entries after an Ellipsis index the trailing axes: only where none are left over.
        at = ctx.integer(0, len(entries), "at") if used == len(shape) else len(entries)
        entries.insert(at, Ellipsis)
    if not in_range and shape:
        entries = [shape[0]] + entries[1:] if ctx.boolean("out of range") else entries + [0] * (len(shape) + 1)
    return tuple(entries)


def advanced_index(ctx: Ctx, shape: tuple, unique: bool = False) -> tuple:
    """An index with at least one integer array (adjacent or not), maybe with slices/ints."""
    nd = len(shape)
    entries: list = []
    arrays = 0
    ishape = ctx.shape(max_dims=2) if not unique else (ctx.integer(0, 3, "n"),)
    for i, d in enumerate(shape[:ctx.integer(1, nd, "indexed dims")]):
        kind = ctx.choice(["array", "array", "slice", "int"] if d else ["array", "slice"], "entry")
        if kind == "array" and not (unique and arrays) and (d or unique or 0 in ishape):
            # (an index array for a size-0 axis is empty: only where the others are too)
            if unique:
                n = min(ishape[0], d)
                entries.append(ctx.rng.permutation(d)[:n] - (d if ctx.boolean("neg") else 0))
            else:
                entries.append(ctx.rng.integers(-d, d, size=ishape) if d else np.zeros(ishape, np.intp))
            arrays += 1
        elif kind == "int" and d:
            entries.append(int(ctx.rng.integers(-d, d)))
        else:
            entries.append(slice(None, None, ctx.choice([None, 2, -1], "step")))
    if not arrays:
        d = shape[0]
        first = ctx.rng.permutation(d)[:min(d, 2)] if unique else ctx.rng.integers(0, max(d, 1), size=(2 if d else 0,))
        entries[0] = np.asarray(first, dtype=np.intp)
    return tuple(entries)


def getitem_case(ctx: Ctx) -> Case:
    shape = ctx.shape()
    x = ctx.arg(shape)
    return Case([x, basic_index(ctx, shape, in_range=ctx.grad or ctx.integer(0, 9, "bad") > 0)])


def index_case(ctx: Ctx) -> Case:
    shape = ctx.shape(min_dims=1)
    return Case([ctx.arg(shape), advanced_index(ctx, shape)])


def scatter_case(unique: bool, allow_basic: bool = True):
    """x, an index and a value broadcastable to x[index] (maybe a Python scalar)."""
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape(min_dims=1)
        x = ctx.arg(shape)
        if allow_basic and ctx.boolean("basic"):
            index = basic_index(ctx, shape)
        else:
            index = advanced_index(ctx, shape, unique=unique)
        target = np.empty(shape)[index].shape
        if not ctx.grad and ctx.boolean("scalar"):
            value: Any = scalar_of(ctx, REAL)
        else:
            vshape = suffix_shape(ctx, target)
            if not ctx.grad and ctx.boolean("leading 1"):
                vshape = (1,) + vshape   # x[i] = v drops it; np.add.at refuses it
            value = ctx.arg(vshape)
        return Case([x, index, value])
    return case


def index_put_reference(x, index, value):
    out = np.array(x, copy=True)
    out[index] = value
    return out


def index_add_reference(x, index, value, ufunc=np.add):
    """np.add.at (or another ufunc.at) with the value broadcast first: NumPy 2.4's np.add.at
    reads garbage when a value broadcasts against a multi-dimensional index (see
    test_index_add_broadcast_value)."""
    out = np.array(x, copy=True)
    target = out[index].shape
    if np.ndim(value) <= len(target):
        value = np.broadcast_to(value, target)
    ufunc.at(out, index, value)
    return out


def take_case(ctx: Ctx) -> Case:
    shape = ctx.shape()
    nd = len(shape)
    axis = ctx.choice([None] + list(range(-nd, nd)), "axis")
    n = int(np.prod(shape)) if axis is None else shape[axis]
    ishape = ctx.shape(max_dims=2) if n else (0,)
    indices = ctx.rng.integers(-n, n, size=ishape) if n else np.zeros(ishape, np.int64)
    return Case([ctx.arg(shape), index_arg(indices, ctx.layout(len(ishape)))], {"axis": axis})


def choose_case(ctx: Ctx) -> Case:
    n = ctx.integer(1, 3, "choices")
    shapes = ctx.broadcast_shapes(n + 1)
    mode = ctx.choice(["raise", "wrap", "clip"], "mode")
    lo, hi = (0, n) if mode == "raise" else (-3, n + 3)
    index = index_arg(ctx.rng.integers(lo, hi, size=shapes[0]), ctx.layout(len(shapes[0])))
    return Case([index] + [ctx.arg(s) for s in shapes[1:]], {"mode": mode})


def along_axis_case(values: bool):
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape(min_dims=1)
        nd = len(shape)
        axis = ctx.choice(list(range(-nd, nd)) + ([None] if nd == 1 else []), "axis")
        ax = 0 if axis is None else axis % nd
        n = shape[ax]
        ishape = tuple(ctx.integer(0, 3, "picks") if i == ax else (1 if ctx.boolean("unit") else d)
                       for i, d in enumerate(shape))
        if not n:
            ishape = ishape[:ax] + (0,) + ishape[ax + 1:]
        indices = ctx.rng.integers(-n, n, size=ishape) if n else np.zeros(ishape, np.int64)
        args: list = [ctx.arg(shape), index_arg(indices)]
        if values:
            vshape = tuple(1 if ctx.boolean("unit v") else d for d in ishape)
            args.append(ctx.arg(vshape))
        return Case(args, {"axis": axis})
    return case


def put_along_axis_add_reference(x, indices, values, axis):
    """np.add.at along an axis, one element at a time (independent of kiln's fancy index).

    The indices broadcast against x's other axes, as in take_along_axis; the values
    broadcast to that shape."""
    out = np.array(x, copy=True)
    if axis is None:
        np.add.at(out.reshape(-1), indices, values)
        return out
    axis = axis % out.ndim
    other = out.shape[:axis] + (1,) + out.shape[axis + 1:]
    shape = np.broadcast_shapes(indices.shape, other)
    indices = np.broadcast_to(indices, shape)
    values = np.broadcast_to(values, shape)
    for pos in np.ndindex(*shape):
        target = list(pos)
        target[axis] = indices[pos]
        out[tuple(target)] += values[pos]
    return out


def indexing_rows() -> list[Row]:
    return [
        Row("getitem", numpy=lambda x, index: x[index], via_op=getattr_op("getitem"),
            case=getitem_case, dtypes=ALL, grad=True,
            bad=(Case([A(2, 3), (0, 0, 0)]), Case([A(2, 3), (5,)]), Case([A(2, 3), (Ellipsis, Ellipsis)]))),
        Row("index", numpy=lambda x, index: x[index], via_op=getattr_op("index"),
            case=index_case, dtypes=ALL, grad=True,
            bad=(Case([A(2, 3), (np.array([2]),)]),
                 Case([A(2, 3), (np.array([0, 1]), np.array([0, 1, 2]))]),
                 Case([A(2, 3), (np.array([0.5]),)]))),
        Row("index_put", numpy=index_put_reference, via_op=getattr_op("index_put"),
            tensor=applied("index_put"), case=scatter_case(unique=True), dtypes=ALL, grad=True),
        Row("index_add", numpy=index_add_reference, via_op=getattr_op("index_add"),
            tensor=applied("index_add"), case=scatter_case(unique=False), dtypes=NUMERIC,
            grad=True),
        Row("index_ufunc_at", numpy=lambda x, index, value: index_add_reference(x, index, value, np.maximum),
            via_op=lambda x, index, value: F.index_ufunc_at(x, index, value, ufunc="maximum"),
            tensor=applied("index_ufunc_at", ufunc="maximum"), case=scatter_case(unique=False),
            dtypes=NUMERIC),
        Row("take", numpy=np.take, via_op=lambda x, i, axis=None: F.take(
                x, i, axis=None if axis is None else normalize_axis_index(axis, x.ndim)),
            case=take_case, dtypes=ALL, grad=True, alts=(lambda x, i, axis=None: x.take(i, axis=axis),),
            bad=(Case([A(2, 3), index_arg(np.array([3]))], {"axis": 1}),
                 Case([A(2, 3), index_arg(np.array([0]))], {"axis": 2}, traced=False),
                 Case([A(2, 0), index_arg(np.array([0]))], {"axis": 1}))),
        Row("choose", numpy=lambda a, *cs, mode="raise": np.choose(a, list(cs), mode=mode),
            via_op=lambda a, *cs, mode="raise": F.choose(a, cs, mode=mode),
            tensor=lambda a, *cs, mode="raise": np.choose(a, list(cs), mode=mode),
            case=choose_case, dtypes=ALL, grad=True,
            bad=(Case([index_arg(np.array([0, 2])), A(2), A(2)], {}),
                 Case([A(2), A(2), A(2)], {}),
                 Case([index_arg(np.array([0, 1])), A(3), A(2)], {}),
                 Case([index_arg(np.array([0, 1])), A(2)], {"mode": "bogus"}, traced=False))),
        Row("take_along_axis", numpy=np.take_along_axis,
            via_op=lambda x, i, axis: F.take_along_axis(
                x, i, axis=None if axis is None else normalize_axis_index(axis, x.ndim)),
            case=along_axis_case(values=False), dtypes=ALL, grad=True,
            bad=(Case([A(2, 3), index_arg(np.zeros((2,), np.int64))], {"axis": 1}),
                 Case([A(2, 3), index_arg(np.zeros((3, 3), np.int64))], {"axis": 1}))),
        Row("put_along_axis_add", numpy=put_along_axis_add_reference,
            via_op=lambda x, i, v, axis: F.put_along_axis_add(
                x, i, v, axis=None if axis is None else normalize_axis_index(axis, x.ndim)),
            tensor=lambda x, i, v, axis: applied("put_along_axis_add")(
                x, i, v, axis=None if axis is None else normalize_axis_index(axis, x.ndim)),
            case=along_axis_case(values=True), dtypes=NUMERIC, grad=True),
    ]


# ==========================================================================================
# Joining and replicating

def join_case(new_axis: bool):
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape(min_dims=0 if new_axis else 1)
        nd = len(shape)
        count = ctx.integer(1, 3, "arrays")
        if new_axis:
            axis = ctx.integer(-nd - 1, nd, "axis")
            shapes = [shape] * count
        else:
            axis = ctx.choice([None] + list(range(-nd, nd)), "axis")
            ax = 0 if axis is None else axis % nd
            shapes = [shape[:ax] + (ctx.integer(0, 3, "len"),) + shape[ax + 1:] if axis is not None
                      else ctx.shape() for _ in range(count)]
        dtypes = [ctx.choice([ctx.dtype, ctx.dtype, F64, I64], "dtype") if not ctx.grad else ctx.dtype
                  for _ in range(count)]
        return Case([ctx.arg(s, dtype=d) for s, d in zip(shapes, dtypes)], {"axis": axis})
    return case


def concatenate_via_op(*arrays, axis):
    if axis is not None and arrays[0].ndim:
        axis = normalize_axis_index(axis, arrays[0].ndim)
    return F.concatenate(tuple(arrays), axis=axis, dtype=None, casting="same_kind")


def stack_via_op(*arrays, axis):
    return F.stack(tuple(arrays), axis=normalize_axis_index(axis, arrays[0].ndim + 1), dtype=None,
                   casting="same_kind")


def repeat_case(ctx: Ctx) -> Case:
    shape = ctx.shape()
    nd = len(shape)
    axis = ctx.choice([None] + list(range(-nd, nd)), "axis")
    n = int(np.prod(shape)) if axis is None else shape[axis]
    if ctx.boolean("per element") and n:
        repeats: Any = tuple(int(r) for r in ctx.rng.integers(0, 3, size=n))
    else:
        repeats = ctx.integer(0, 3, "repeats")
    return Case([ctx.arg(shape)], {"repeats": repeats, "axis": axis})


def tile_case(ctx: Ctx) -> Case:
    reps = ctx.shape(max_dims=3)
    return Case([ctx.arg(ctx.shape())], {"reps": reps if ctx.boolean("tuple") or not reps else reps[0]})


def join_rows() -> list[Row]:
    return [
        Row("concatenate", numpy=lambda *arrays, axis: np.concatenate(arrays, axis=axis),
            via_op=concatenate_via_op, case=join_case(new_axis=False), dtypes=ALL, grad=True,
            bad=(Case([A(2, 3), A(3, 3)], {"axis": 1}), Case([A(2, 3), A(3)], {"axis": 0}),
                 Case([A(), A()], {"axis": 0}), Case([A(2, 3)], {"axis": 2}, traced=False))),
        Row("stack", numpy=lambda *arrays, axis: np.stack(arrays, axis=axis),
            via_op=stack_via_op, case=join_case(new_axis=True), dtypes=ALL, grad=True,
            bad=(Case([A(2, 3), A(3, 2)], {"axis": 0}), Case([A(2, 3)], {"axis": 3}, traced=False))),
        Row("repeat", numpy=np.repeat, via_op=lambda x, repeats, axis: F.repeat(
                x, repeats=repeats, axis=None if axis is None else normalize_axis_index(axis, x.ndim)),
            case=repeat_case, dtypes=ALL, grad=True,
            alts=(lambda x, repeats, axis: x.repeat(repeats, axis=axis),),
            bad=(Case([A(2, 3)], {"repeats": (1, 2), "axis": 1}),
                 Case([A(2, 3)], {"repeats": -1, "axis": 0}),
                 Case([A(2, 3)], {"repeats": 1, "axis": 2}, traced=False))),
        Row("tile", numpy=np.tile, via_op=lambda x, reps: F.tile(
                x, reps=tuple(reps) if isinstance(reps, tuple) else (reps,)),
            case=tile_case, dtypes=ALL, grad=True, bad=(Case([A(2, 3)], {"reps": (-1, 2)}),)),
    ]
