"""Op-table rows: creation, mutation and shape ops, and the NumPy spellings whose
normalizer composes or chooses ops (hstack, atleast_2d, fliplr, identity, ...)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from kiln.ops import F

from .gen import (ALL, BOOL, F32, F64, FLOATS, I64, NUMERIC, REAL, Case, Ctx, axis_choices,
                  index_arg)
from .rows_indexing_join import index_add_reference, scatter_case
from .spec import (A, Row, applied, getattr_op, scalar_of, spelled, suffix_shape, unary_case,
                   via_spelling)


# ==========================================================================================
# Creation

def filled_case(ctx: Ctx) -> Case:
    shape = ctx.shape()
    return Case([], {"shape": shape if ctx.boolean("tuple") or len(shape) != 1 else shape[0],
                     "dtype": ctx.dtype})


def filled_row(name: str, oracle: Callable) -> Row:
    return Row(name, numpy=oracle, tensor=spelled(getattr(np, name)),
               via_op=lambda shape, dtype: getattr(F, name)(
                   shape=shape if isinstance(shape, tuple) else (shape,), dtype=np.dtype(dtype)),
               case=filled_case, dtypes=ALL, grad=False,
               bad=(Case([], {"shape": (2, -1), "dtype": F64}),))


def like_case(fill: bool):
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape()
        params: dict = {}
        if not ctx.grad and ctx.boolean("dtype?"):
            params["dtype"] = ctx.choice([F32, F64, I64, BOOL], "dtype")
        if ctx.boolean("shape?"):
            params["shape"] = ctx.shape()
        args: list = [ctx.arg(shape)]
        if fill:
            out = params.get("shape", shape)
            if ctx.grad or ctx.boolean("array fill"):
                args.append(ctx.arg(suffix_shape(ctx, out)))
            else:
                args.append(scalar_of(ctx, REAL))
        return Case(args, params)
    return case


def like_row(name: str, oracle: Callable, fill: bool = False) -> Row:
    def via_op(x, *fill_value, dtype=None, shape=None):
        return getattr(F, name)(x, *fill_value, dtype=None if dtype is None else np.dtype(dtype),
                                shape=shape)
    return Row(name, numpy=oracle, via_op=via_op, case=like_case(fill), dtypes=ALL, grad=True)


def full_case(ctx: Ctx) -> Case:
    shape = ctx.shape()
    if ctx.grad or ctx.boolean("array fill"):
        fill: Any = ctx.arg(suffix_shape(ctx, shape))
    else:
        fill = scalar_of(ctx, REAL)
    params: dict = {"shape": shape}
    if not ctx.grad and ctx.boolean("dtype"):
        params["dtype"] = ctx.choice([F32, F64, I64, BOOL], "dtype")
    return Case([fill], params)


def full_via_op(fill_value, shape, dtype=None):
    if dtype is None:
        dtype = fill_value.dtype if hasattr(fill_value, "dtype") else np.asarray(fill_value).dtype
    return F.full(fill_value, shape=shape, dtype=np.dtype(dtype))


def arange_case(ctx: Ctx) -> Case:
    kind = ctx.choice(["int", "float"] if ctx.dtype.kind == "f" else ["int"], "kind")
    if kind == "int":
        start, stop = ctx.integer(-4, 4, "start"), ctx.integer(-4, 6, "stop")
        step = ctx.choice([1, 2, -1, 3], "step")
    else:
        start, stop = float(ctx.rng.uniform(-3, 3)), float(ctx.rng.uniform(-3, 3))
        step = ctx.choice([0.5, 0.7, -0.3], "step")
    params = {"start": start, "stop": stop, "step": step}
    if ctx.boolean("dtype"):
        params["dtype"] = ctx.dtype
    return Case([], params)


def arange_via_op(start, stop, step, dtype=None):
    if dtype is None:
        dtype = np.result_type(np.intp, *(np.asarray(v).dtype for v in (start, stop, step)))
    return F.arange(start=start, stop=stop, step=step, dtype=np.dtype(dtype))


def linspace_case(ctx: Ctx) -> Case:
    s0, s1 = ctx.broadcast_shapes(2, max_dims=2)
    arrays = ctx.grad or ctx.boolean("arrays")
    start = ctx.arg(s0) if arrays else scalar_of(ctx, REAL)
    stop = ctx.arg(s1) if arrays else scalar_of(ctx, REAL)
    nd = len(np.broadcast_shapes(s0, s1)) if arrays else 0
    params = {"num": ctx.integer(0, 5, "num"), "endpoint": ctx.boolean("endpoint"),
              "axis": ctx.integer(-nd - 1, nd, "axis")}
    if not ctx.grad and ctx.boolean("dtype"):
        params["dtype"] = ctx.choice([F32, F64], "dtype")
    return Case([start, stop], params)


def linspace_via_op(start, stop, num, endpoint=True, axis=0, dtype=None):
    nd = len(np.broadcast_shapes(np.shape(start) if not hasattr(start, "shape") else start.shape,
                                 np.shape(stop) if not hasattr(stop, "shape") else stop.shape))
    return F.linspace(start, stop, num=num, endpoint=endpoint,
                      dtype=None if dtype is None else np.dtype(dtype),
                      axis=normalize_axis_index(axis, nd + 1))


def eye_case(ctx: Ctx) -> Case:
    return Case([], {"N": ctx.integer(0, 4, "N"), "M": ctx.choice([None, 0, 1, 3, 4], "M"),
                     "k": ctx.integer(-3, 3, "k"), "dtype": ctx.dtype})


def tri_case(ctx: Ctx) -> Case:
    return Case([ctx.arg(ctx.shape(min_dims=1))], {"k": ctx.integer(-3, 3, "k")})


def creation_rows() -> list[Row]:
    return [
        filled_row("zeros", np.zeros),
        filled_row("ones", np.ones),
        # np.empty's contents are undefined; kiln's eager kernel fills zeros (deterministic).
        filled_row("empty", lambda shape, dtype: np.zeros(shape, dtype)),
        Row("full", numpy=lambda fill, shape, dtype=None: np.full(shape, fill, dtype=dtype),
            tensor=lambda fill, shape, dtype=None: spelled(np.full)(shape, fill, dtype=dtype),
            via_op=full_via_op, case=full_case, dtypes=ALL, grad=True,
            bad=(Case([A(3)], {"shape": (2, 2)}), Case([1.0], {"shape": (-1,)}))),
        like_row("zeros_like", np.zeros_like),
        like_row("ones_like", np.ones_like),
        # As for empty: compared with zeros_like.
        Row("empty_like", numpy=np.zeros_like, tensor=np.empty_like,
            via_op=lambda x, dtype=None, shape=None: F.empty_like(
                x, dtype=None if dtype is None else np.dtype(dtype), shape=shape),
            case=like_case(False), dtypes=ALL, grad=True),
        like_row("full_like", np.full_like, fill=True),
        Row("arange", numpy=lambda start, stop, step, dtype=None: np.arange(start, stop, step, dtype=dtype),
            tensor=lambda start, stop, step, dtype=None: spelled(np.arange)(start, stop, step, dtype=dtype),
            via_op=arange_via_op, case=arange_case, dtypes=NUMERIC, grad=False,
            bad=(Case([], {"start": 0, "stop": 3, "step": 0}),)),
        Row("linspace", numpy=np.linspace, via_op=linspace_via_op, case=linspace_case,
            tensor=lambda start, stop, **p: spelled(np.linspace)(start, stop, **p),
            dtypes=FLOATS, grad=True, bad=(Case([0.0, 1.0], {"num": -1}, traced=False),)),
        Row("eye", numpy=lambda N, M, k, dtype: np.eye(N, M, k, dtype=dtype),
            tensor=lambda N, M, k, dtype: spelled(np.eye)(N, M, k, dtype=dtype),
            via_op=lambda N, M, k, dtype: F.eye(N=N, M=N if M is None else M, k=k, dtype=np.dtype(dtype)),
            case=eye_case, dtypes=ALL, grad=False,
            bad=(Case([], {"N": -1, "M": None, "k": 0, "dtype": F64}),)),
        Row("triu", numpy=np.triu, via_op=getattr_op("triu"), case=tri_case, dtypes=ALL, grad=True,
            bad=(Case([A()], {"k": 0}),)),
        Row("tril", numpy=np.tril, via_op=getattr_op("tril"), case=tri_case, dtypes=ALL, grad=True,
            bad=(Case([A()], {"k": 0}),)),
        Row("copy", numpy=np.copy, via_op=lambda x: getattr_op("copy")(x, order="K"), case=unary_case(), dtypes=ALL,
            grad=True, alts=(lambda x: x.copy(),)),
    ]


# ==========================================================================================
# Mutation: the NumPy spelling writes into input 0 and returns it

def setitem_spelling(x, index, value):
    x[index] = value
    return x


def add_at_spelling(x, index, value):
    np.add.at(x, index, value)
    return x


def copyto_spelling(dst, src, where=True, casting="same_kind"):
    np.copyto(dst, src, casting=casting, where=where)
    return dst


def fill_spelling(x, value):
    x.fill(value)
    return x


def copyto_case(ctx: Ctx) -> Case:
    shape = ctx.shape()
    src_dtype = ctx.choice([ctx.dtype, ctx.dtype, F64, I64, BOOL], "src dtype") if not ctx.grad else F64
    src: Any = (ctx.arg(suffix_shape(ctx, shape), dtype=src_dtype)
                if ctx.grad or ctx.boolean("array src") else scalar_of(ctx, REAL))
    where: Any = True if ctx.boolean("no where") else index_arg(ctx.rng.random(suffix_shape(ctx, shape)) < 0.5)
    params: dict = {}
    if not ctx.grad and ctx.boolean("casting?"):
        params["casting"] = ctx.choice(["unsafe", "safe", "no"], "casting")
    return Case([ctx.arg(shape), src, where], params)


def fill_case(ctx: Ctx) -> Case:
    return Case([ctx.arg(ctx.shape()), scalar_of(ctx, REAL)])


def copy_into_via_op(dst, src, where=True, casting="same_kind"):
    return F.copy_into(dst, src, where, casting=casting)


def mutation_rows() -> list[Row]:
    return [
        Row("setitem", numpy=setitem_spelling, mutates=True,
            via_op=lambda x, index, value: (F.setitem(x, index, value), x)[1],
            case=scatter_case(unique=True), dtypes=ALL,
            bad=(Case([A(2, 3), (slice(None),), A(2)]), Case([A(2, 3), (5,), 1.0]))),
        Row("add_at", numpy=lambda x, index, value: copyto_spelling(   # see index_add_reference
                x, index_add_reference(x, index, value)),
            tensor=add_at_spelling, mutates=True,
            via_op=lambda x, index, value: (F.add_at(x, index, value), x)[1],
            case=scatter_case(unique=False), dtypes=NUMERIC,
            bad=(Case([A(2, 3), (np.array([0, 5]),), 1.0]),)),
        Row("ufunc_at", numpy=lambda x, index, value: copyto_spelling(
                x, index_add_reference(x, index, value, np.minimum)),
            tensor=lambda x, index, value: (np.minimum.at(x, index, value), x)[1], mutates=True,
            via_op=lambda x, index, value: (F.ufunc_at(x, index, value, ufunc="minimum"), x)[1],
            case=scatter_case(unique=False), dtypes=NUMERIC,
            bad=(Case([A(2, 3), (np.array([0, 5]),), 1.0]),)),
        Row("copyto", numpy=copyto_spelling, mutates=True,
            via_op=lambda dst, src, where=True, casting="same_kind": (
                F.copyto(dst, src, where, casting=casting), dst)[1],
            case=copyto_case, dtypes=ALL,
            bad=(Case([A(2, 3), A(2)]), Case([A(2, 3, dtype=I64), A(3)]))),
        Row("fill", numpy=fill_spelling, mutates=True,
            via_op=lambda x, value: (F.fill(x, value, shape=None, dtype=None), x)[1],
            case=fill_case, dtypes=ALL),
        Row("filled", numpy=lambda x, value: fill_spelling(np.array(x, copy=True), value),
            via_op=lambda x, value: F.filled(x, value, shape=None, dtype=None),
            tensor=lambda x, value: applied("filled")(x, value, shape=None, dtype=None),
            case=fill_case, dtypes=ALL, grad=True),
        Row("copy_into", numpy=lambda dst, src, where=True, casting="same_kind": copyto_spelling(
                np.array(dst, copy=True), src, where, casting),
            via_op=copy_into_via_op,
            tensor=lambda dst, src, where=True, casting="same_kind": applied("copy_into")(
                dst, src, where, casting=casting),
            case=copyto_case, dtypes=ALL, grad=True),
    ]


# ==========================================================================================
# Shape

def reshape_case(ctx: Ctx) -> Case:
    shape = ctx.shape()
    size = int(np.prod(shape))
    options = [(size,), (-1,), shape[::-1], (1,) + shape, shape + (1,), (size, 1), (1, -1)]
    if len(shape) >= 2:
        options += [(shape[0], -1), (-1,) + shape[2:]]
    if not ctx.grad:
        options += [(size + 1,), (-1, -1)]
    return Case([ctx.arg(shape)], {"shape": ctx.choice(options, "new shape")})


def transpose_case(ctx: Ctx) -> Case:
    shape = ctx.shape()
    nd = len(shape)
    perm = [int(a) for a in ctx.rng.permutation(nd)]
    axes = ctx.choice([None, tuple(perm), tuple(a - nd if ctx.boolean("neg") else a for a in perm)]
                      + ([] if ctx.grad or nd < 1 else [tuple(perm[:-1]), (0,) * nd]), "axes")
    return Case([ctx.arg(shape)], {"axes": axes})


def transpose_via_op(x, axes=None):
    if axes is not None:
        axes = tuple(normalize_axis_index(a, x.ndim) for a in axes)
    return F.transpose(x, axes=axes)


def swapaxes_case(ctx: Ctx) -> Case:
    shape = ctx.shape(min_dims=1)
    nd = len(shape)
    return Case([ctx.arg(shape)], {"axis1": ctx.integer(-nd, nd - 1, "a1"),
                                   "axis2": ctx.integer(-nd, nd - 1, "a2")})


def moveaxis_case(ctx: Ctx) -> Case:
    shape = ctx.shape(min_dims=1)
    nd = len(shape)
    k = ctx.integer(1, nd, "moved")
    src = [int(a) for a in ctx.rng.permutation(nd)[:k]]
    dst = [int(a) - (nd if ctx.boolean("neg") else 0) for a in ctx.rng.permutation(nd)[:k]]
    if k == 1 and ctx.boolean("ints"):
        return Case([ctx.arg(shape)], {"source": src[0], "destination": dst[0]})
    return Case([ctx.arg(shape)], {"source": src, "destination": dst})


def moveaxis_via_op(x, source, destination):
    nd = x.ndim
    src = tuple(normalize_axis_tuple(source, nd))
    dst = tuple(normalize_axis_tuple(destination, nd))
    return F.moveaxis(x, source=src, destination=dst)


def expand_dims_case(ctx: Ctx) -> Case:
    shape = ctx.shape()
    nd = len(shape)
    k = ctx.integer(1, 2, "new axes")
    axes = [int(a) for a in ctx.rng.permutation(nd + k)[:k]]
    axes = [a - (nd + k) if ctx.boolean("neg") else a for a in axes]
    return Case([ctx.arg(shape)], {"axis": axes[0] if k == 1 else tuple(axes)})


def squeeze_case(ctx: Ctx) -> Case:
    shape = tuple(1 if ctx.boolean("unit") else d for d in ctx.shape())
    nd = len(shape)
    units = [i for i, d in enumerate(shape) if d == 1]
    options: list = [None] + [(i,) for i in units] + ([tuple(units)] if units else [])
    options += [units[0] - nd] if units else []
    if not ctx.grad and nd and len(units) < nd:
        options.append(next(i for i, d in enumerate(shape) if d != 1))
    return Case([ctx.arg(shape)], {"axis": ctx.choice(options, "axis")})


def flip_case(ctx: Ctx) -> Case:
    shape = ctx.shape()
    return Case([ctx.arg(shape)], {"axis": ctx.choice(axis_choices(len(shape))[:-1] or [None], "axis")})


def shape_rows() -> list[Row]:
    axes_of = lambda axis, x: None if axis is None else tuple(sorted(normalize_axis_tuple(axis, x.ndim)))
    return [
        Row("reshape", numpy=lambda x, shape: np.reshape(x, shape),
            via_op=lambda x, shape: F.reshape(x, shape=shape), case=reshape_case, dtypes=ALL,
            grad=True, alts=(lambda x, shape: x.reshape(shape), lambda x, shape: x.reshape(*shape)),
            bad=(Case([A(2, 3)], {"shape": (4,)}), Case([A(2, 3)], {"shape": (-1, -1)}))),
        Row("ravel", numpy=np.ravel, via_op=getattr_op("ravel"), case=unary_case(), dtypes=ALL,
            grad=True, alts=(lambda x: x.ravel(),)),
        Row("flatten", numpy=lambda x: x.flatten(), via_op=getattr_op("flatten"),
            case=unary_case(), dtypes=ALL, grad=True),
        Row("transpose", numpy=np.transpose, via_op=transpose_via_op, case=transpose_case,
            dtypes=ALL, grad=True,
            alts=(lambda x, axes=None: x.transpose(axes), lambda x, axes=None: np.permute_dims(x, axes),
                  lambda x, axes=None: x.T if axes is None else x.transpose(*axes)),
            bad=(Case([A(2, 3)], {"axes": (0, 0)}), Case([A(2, 3)], {"axes": (0,)}))),
        Row("swapaxes", numpy=np.swapaxes, via_op=lambda x, axis1, axis2: F.swapaxes(
                x, axis1=normalize_axis_index(axis1, x.ndim), axis2=normalize_axis_index(axis2, x.ndim)),
            case=swapaxes_case, dtypes=ALL, grad=True,
            alts=(lambda x, axis1, axis2: x.swapaxes(axis1, axis2),),
            bad=(Case([A(2, 3)], {"axis1": 0, "axis2": 2}, traced=False),)),
        Row("moveaxis", numpy=np.moveaxis, via_op=moveaxis_via_op, case=moveaxis_case,
            dtypes=ALL, grad=True,
            bad=(Case([A(2, 3)], {"source": [0, 1], "destination": [0]}),
                 Case([A(2, 3)], {"source": 0, "destination": 2}, traced=False),
                 Case([A(2, 3)], {"source": [0, 0], "destination": [0, 1]}, traced=False))),
        Row("expand_dims", numpy=np.expand_dims, case=expand_dims_case, dtypes=ALL, grad=True,
            via_op=lambda x, axis: F.expand_dims(x, axis=tuple(sorted(normalize_axis_tuple(
                axis, x.ndim + (len(axis) if isinstance(axis, tuple) else 1))))),
            bad=(Case([A(2, 3)], {"axis": 3}, traced=False),
                 Case([A(2, 3)], {"axis": (0, 0)}, traced=False))),
        Row("squeeze", numpy=np.squeeze, via_op=lambda x, axis: F.squeeze(x, axis=axes_of(axis, x)),
            case=squeeze_case, dtypes=ALL, grad=True,
            alts=(lambda x, axis: x.squeeze(axis),),
            bad=(Case([A(2, 3)], {"axis": 0}), Case([A(1, 3)], {"axis": 2}, traced=False))),
        Row("flip", numpy=np.flip, via_op=lambda x, axis: F.flip(x, axis=axes_of(axis, x)),
            case=flip_case, dtypes=ALL, grad=True,
            bad=(Case([A(2, 3)], {"axis": 2}, traced=False),)),
    ]


# ==========================================================================================
# More spellings: NumPy functions whose normalizer composes or chooses ops

def stacked_case(axis: int):
    """1-3 arrays of one rank for hstack & co; lengths differ along the joined ``axis``."""
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape()
        shapes = []
        for _ in range(ctx.integer(1, 3, "arrays")):
            ax = min(axis, len(shape) - 1)
            if ax >= 0 and ctx.boolean("other length"):
                shapes.append(shape[:ax] + (ctx.integer(0, 3, "len"),) + shape[ax + 1:])
            else:
                shapes.append(shape)
        return Case([ctx.arg(s) for s in shapes])
    return case


def sequence_row(fn: Callable, op: str, axis: int) -> Row:
    return Row(op, numpy=lambda *arrays: fn(arrays),
               via_op=lambda *arrays: via_spelling(fn)(arrays), case=stacked_case(axis),
               dtypes=ALL, grad=True, name=f"{op}[{fn.__name__}]",
               bad=(Case([A(2, 3), A(3, 2)]),))


def spelling_rows() -> list[Row]:
    unary = dict(case=unary_case(), dtypes=ALL, grad=True)
    return [
        sequence_row(np.hstack, "concatenate", 1),
        sequence_row(np.vstack, "concatenate", 0),
        sequence_row(np.dstack, "concatenate", 2),
        sequence_row(np.column_stack, "concatenate", 1),
        Row("reshape", numpy=np.atleast_1d, via_op=via_spelling(np.atleast_1d), name="reshape[atleast_1d]", **unary),
        Row("reshape", numpy=np.atleast_2d, via_op=via_spelling(np.atleast_2d), name="reshape[atleast_2d]", **unary),
        Row("reshape", numpy=np.atleast_3d, via_op=via_spelling(np.atleast_3d), name="reshape[atleast_3d]", **unary),
        Row("flip", numpy=np.fliplr, via_op=via_spelling(np.fliplr), name="flip[fliplr]", **unary),
        Row("flip", numpy=np.flipud, via_op=via_spelling(np.flipud), name="flip[flipud]", **unary),
        Row("transpose", numpy=np.matrix_transpose, via_op=via_spelling(np.matrix_transpose),
            name="transpose[matrix_transpose]", alts=(lambda x: x.mT,), **unary),
        # NumPy never hands np.ascontiguousarray to __array_function__ (it dispatches on
        # like= only): on a Tensor it returns an ndarray. Capture maps it; test that mapping.
        Row("ascontiguousarray", numpy=np.ascontiguousarray, via_op=via_spelling(np.ascontiguousarray),
            tensor=spelled(np.ascontiguousarray), **unary),
        Row("eye", numpy=lambda n, dtype: np.identity(n, dtype=dtype),
            tensor=lambda n, dtype: spelled(np.identity)(n, dtype=dtype),
            via_op=lambda n, dtype: via_spelling(np.identity)(n, dtype=dtype), name="eye[identity]",
            case=lambda ctx: Case([], {"n": ctx.integer(0, 4, "n"), "dtype": ctx.dtype}),
            dtypes=ALL, grad=False),
    ]
