"""Op-table rows for the numba-list functions: flat writes (np.put, np.place,
np.fill_diagonal), flat indices (unravel_index, ravel_multi_index), lexsort, sort_complex."""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.ops import F
from kiln.ops.registry import call_spelling

from .gen import ALL, COMPLEX, FLOATS, I64, NUMERIC, Case, Ctx, index_arg
from .rows_numeric import C, E, shaped
from .spec import A, REAL, Row, applied, scalar_of, spelled


def put_spelling(a, ind, v, mode="raise"):
    np.put(a, ind, v, mode=mode)
    return a


def put_reference(a, ind, v, mode="raise"):
    return put_spelling(np.array(a, copy=True), ind, v, mode)


def put_case(ctx: Ctx) -> Case:
    shape = ctx.shape(min_dims=1)
    n = int(np.prod(shape))
    mode = ctx.choice(["raise", "wrap", "clip"], "mode") if n else "raise"
    k = ctx.integer(0, 5, "count")
    if mode == "raise":
        ind = ctx.rng.integers(-n, n, k) if n else np.zeros(0, np.int64)
    else:
        ind = ctx.rng.integers(-2 * n - 2, 2 * n + 2, k)
    v: Any = scalar_of(ctx, REAL) if not ctx.grad and ctx.boolean("scalar") else \
        ctx.arg((ctx.integer(1, 4, "values"),))
    return Case([ctx.arg(shape), index_arg(ind), v], {"mode": mode})


def place_spelling(arr, mask, vals):
    np.place(arr, mask, vals)
    return arr


def place_case(ctx: Ctx) -> Case:
    shape = ctx.shape(min_dims=1)
    mask = index_arg(ctx.rng.random(shape) < 0.5)
    vals: Any = ctx.arg((ctx.integer(1, 4, "values"),))
    if ctx.grad:
        # np.place casts arrays only safely: float32 arr with float64 vals (the table's
        # mixed precision pass) raises; a list converts (vals' gradient: test_numba_list.py)
        vals = [float(v) for v in vals.value]
    return Case([ctx.arg(shape), mask, vals])


def fill_diagonal_spelling(a, val, wrap=False):
    np.fill_diagonal(a, val, wrap=wrap)
    return a


def fill_diagonal_case(ctx: Ctx) -> Case:
    n = ctx.integer(1, 4, "n")
    shape = (n, n, n) if ctx.boolean("cube") else (ctx.integer(1, 6, "rows"), n)
    val: Any = scalar_of(ctx, REAL) if not ctx.grad and ctx.boolean("scalar") else ctx.arg((ctx.integer(1, 3, "k"),))
    return Case([ctx.arg(shape), val], {"wrap": ctx.boolean("wrap")})


def flat_index_case(ctx: Ctx) -> Case:
    dims = ctx.shape(min_dims=1, min_side=1)
    n = int(np.prod(dims))
    ind = ctx.rng.integers(0, n, ctx.shape(max_dims=2))
    return Case([index_arg(ind)], {"shape": dims, "order": ctx.choice(["C", "F"], "order")})


def multi_index_case(ctx: Ctx) -> Case:
    dims = ctx.shape(min_dims=1, max_dims=3, min_side=1)
    shape = ctx.shape(max_dims=2)
    mode = ctx.choice(["raise", "wrap", "clip"], "mode")
    span = 0 if mode == "raise" else 3
    arrays = tuple(index_arg(ctx.rng.integers(-span, d + span, shape)) for d in dims)
    return Case(list(arrays), {"dims": dims, "mode": mode, "order": ctx.choice(["C", "F"], "order")})


def lexsort_case(ctx: Ctx) -> Case:
    shape = ctx.shape(min_dims=1, max_dims=2)
    keys = [ctx.arg(shape) for _ in range(ctx.integer(1, 3, "keys"))]
    for k in keys:   # repeated values, so later keys decide ties
        k.base[...] = np.round(np.nan_to_num(k.base))
    return Case(keys, {"axis": ctx.choice(list(range(-len(shape), len(shape))), "axis")})


def poly_pair(ctx: Ctx) -> Case:
    return Case([ctx.arg((ctx.integer(1, 4, "n"),)), ctx.arg((ctx.integer(1, 4, "m"),))])


def coefficients(ctx: Ctx) -> Case:
    return Case([ctx.arg((ctx.integer(0, 5, "n"),))])


def polyint_case(ctx: Ctx) -> Case:
    m = ctx.integer(0, 2, "m")
    return Case([ctx.arg((ctx.integer(0, 4, "n"),))], {"m": m, "k": ctx.choice([None, 1.5, [1.0, -2.0]], "k")})


def polyfit_case(ctx: Ctx) -> Case:
    n = ctx.integer(3, 6, "points")
    x = np.linspace(-1.0, 1.0, n) + ctx.rng.random(n) * 0.1   # distinct abscissae
    # (x of the loop dtype too: the coefficients stay float64 for float32 x and y)
    x = index_arg(x.astype(ctx.dtype) if ctx.boolean("x_in_loop_dtype") else x)
    y = ctx.arg((n,) if ctx.boolean("vector") else (n, 2))
    y.base[...] = np.nan_to_num(y.base)
    w = index_arg(ctx.rng.random(n) + 0.5) if ctx.boolean("weights") else None
    return Case([x, y, w], {"deg": ctx.integer(0, 2, "deg")})


def polydiv_case(ctx: Ctx) -> Case:
    u = ctx.arg((ctx.integer(1, 5, "n"),), writable=True, layout="C")
    v = ctx.arg((ctx.integer(1, 3, "m"),), writable=True, layout="C")
    for a in (u, v):
        a.base[...] = np.nan_to_num(a.base)
    v.base[0] = 1.5 if abs(v.base[0]) < 0.5 else v.base[0]
    return Case([u, v])


def square_complex(ctx: Ctx) -> Case:
    n = ctx.integer(1, 3, "n")
    a = ctx.arg(ctx.shape(max_dims=1, min_side=1) + (n, n), layout="C", writable=True)
    a.base[...] = np.nan_to_num(a.base) + 3.0 * np.eye(n)
    return Case([a])


def cond_case(ctx: Ctx) -> Case:
    n = ctx.integer(1, 3, "n")
    a = ctx.arg(ctx.shape(max_dims=1, min_side=1) + (n, n), layout="C", writable=True)
    a.base[...] = np.clip(np.nan_to_num(a.base), -1e3, 1e3)
    return Case([a], {"p": ctx.choice([None, 2, -2, 1, -1, np.inf, "fro", "nuc"], "p")})


def insert_case(ctx: Ctx) -> Case:
    """np.insert at positions computed in the graph (an index array argument)."""
    shape = ctx.shape(min_dims=1, max_dims=2, min_side=1)
    axis = ctx.choice([None] + list(range(len(shape))), "axis")
    n = int(np.prod(shape)) if axis is None else shape[axis]
    k = ctx.integer(1, 3, "count")
    obj = index_arg(ctx.rng.integers(-n, n + 1, k))
    values: Any = ctx.arg((k,)) if axis is None else scalar_of(ctx, REAL)
    return Case([ctx.arg(shape), obj, values], {"axis": axis})


def delete_case(ctx: Ctx) -> Case:
    """np.delete at one position computed in the graph (a size-1 index array argument)."""
    shape = ctx.shape(min_dims=1, max_dims=2, min_side=1)
    axis = ctx.choice([None] + list(range(len(shape))), "axis")
    n = int(np.prod(shape)) if axis is None else shape[axis]
    obj = index_arg(ctx.rng.integers(-n, n, ctx.choice([(), (1,)], "obj shape")))
    return Case([ctx.arg(shape), obj], {"axis": axis})


def constant_splice_case(insert: bool):
    """np.insert / np.delete at constant positions (an int, a list or a slice): slices
    joined, laid out as NumPy's allocation is (the op relayout)."""
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape(min_dims=1, max_dims=3, min_side=1)
        axis = ctx.choice([None] + list(range(len(shape))), "axis")
        n = int(np.prod(shape)) if axis is None else shape[axis]
        hi = n if insert else n - 1
        kind = ctx.choice(["int", "list", "slice"], "obj kind")
        if kind == "int":
            obj: Any = ctx.integer(-n, hi, "position")
        elif kind == "list":
            obj = [ctx.integer(-n, hi, f"position {i}") for i in range(ctx.integer(0, 3, "count"))]
        else:
            obj = slice(ctx.integer(0, n, "start"), ctx.integer(0, n, "stop"), ctx.choice([1, 2, -1], "step"))
        params = {"obj": obj, "axis": axis}
        if insert:
            params["values"] = scalar_of(ctx, REAL)
        return Case([ctx.arg(shape)], params)
    return case


def coverage_rows() -> list[Row]:
    return [
        C("relayout", np.insert, constant_splice_case(True), dtypes=ALL, name="insert"),
        C("relayout", np.delete, constant_splice_case(False), dtypes=ALL, name="delete"),
        C("relayout", np.roll, shaped(1, shift=lambda ctx, shape: ctx.integer(-3, 3, "shift"),
                                      axis=lambda ctx, shape: ctx.integer(0, len(shape) - 1, "axis")),
          dtypes=ALL, name="roll_axis"),
        C("insert_index", np.insert, insert_case, dtypes=ALL, name="insert_at_computed",
          bad=(Case([A(3), index_arg(np.array([0, 5])), 1.0]),)),
        C("delete_index", np.delete, delete_case, dtypes=ALL, name="delete_at_one_computed",
          bad=(Case([A(3), index_arg(np.array([3]))]),)),
        Row("put", numpy=put_spelling, mutates=True, case=put_case, dtypes=NUMERIC,
            via_op=lambda a, ind, v, mode="raise": (F.put(a, ind, v, mode=mode), a)[1],
            bad=(Case([A(2, 3), np.array([6]), 1.0]), Case([A(2, 3), np.array([0.5]), 1.0]))),
        Row("put_values", numpy=put_reference, case=put_case, dtypes=NUMERIC, grad=True,
            via_op=lambda a, ind, v, mode="raise": F.put_values(a, ind, v, mode=mode),
            tensor=lambda a, ind, v, mode="raise": applied("put_values")(a, ind, v, mode=mode)),
        Row("put", numpy=lambda a, ind, v, mode="raise": (a.put(ind, v, mode=mode), a)[1],
            name="ndarray.put", mutates=True, case=put_case, dtypes=FLOATS,
            via_op=lambda a, ind, v, mode="raise": (F.put(a, ind, v, mode=mode), a)[1]),
        Row("place", numpy=place_spelling, mutates=True, case=place_case, dtypes=NUMERIC,
            via_op=lambda arr, mask, vals: (F.place(arr, mask, vals), arr)[1],
            bad=(Case([A(2, 3), np.ones(5, bool), A(2)]), Case([A(2, 3), np.ones((2, 3), bool), A(0)]))),
        Row("placed", numpy=lambda arr, mask, vals: place_spelling(np.array(arr, copy=True), mask, vals),
            case=place_case, dtypes=NUMERIC, grad=True,
            via_op=lambda arr, mask, vals: F.placed(arr, mask, vals),
            tensor=lambda arr, mask, vals: applied("placed")(arr, mask, vals)),
        Row("put", numpy=fill_diagonal_spelling, name="fill_diagonal", mutates=True,
            case=fill_diagonal_case, dtypes=NUMERIC,
            via_op=lambda a, val, wrap=False: (call_spelling(np.fill_diagonal, a, val, wrap=wrap), a)[1],
            bad=(Case([A(3), 1.0]), Case([A(2, 2, 3), 1.0]))),
        C("unravel_index", np.unravel_index, flat_index_case, dtypes=(I64,), grad=False,
          bad=(Case([index_arg(np.array([30]))], {"shape": (4, 5)}),)),
        E("unravel_index", lambda i, shape, order="C": np.stack(np.unravel_index(i, shape, order=order), axis=-1),
          flat_index_case, dtypes=(I64,), name="unravel_index_packed",
          via=lambda i, shape, order="C": F.unravel_index(i, shape=shape, order=order),
          tensor=lambda i, shape, order="C": applied("unravel_index")(i, shape=shape, order=order)),
        Row("ravel_multi_index", numpy=lambda *ix, **p: np.ravel_multi_index(ix, **p),
            via_op=lambda *ix, **p: F.ravel_multi_index(ix, **p), case=multi_index_case,
            dtypes=(I64,), bad=(Case([index_arg(np.array([5]))], {"dims": (2, 2)}),)),
        Row("lexsort", numpy=lambda *keys, axis=-1: np.lexsort(keys, axis=axis),
            via_op=lambda *keys, axis=-1: F.lexsort(keys, axis=axis), case=lexsort_case,
            dtypes=NUMERIC),
        E("sort_complex", np.sort_complex, lambda ctx: Case([ctx.arg(ctx.shape(min_dims=1))]),
          dtypes=NUMERIC + COMPLEX),
            # polynomials (kiln/ops/polynomials.py)
        C("add", np.polyadd, poly_pair, dtypes=NUMERIC),
        C("subtract", np.polysub, poly_pair, dtypes=NUMERIC),
        C("multiply", np.polyder, lambda ctx: Case([ctx.arg((ctx.integer(0, 5, "n"),))],
                                                   {"m": ctx.integer(0, 3, "m")}), dtypes=NUMERIC),
        C("true_divide", np.polyint, polyint_case),
        C("convolve", np.poly, lambda ctx: Case([ctx.arg((ctx.integer(1, 4, "n"),))]), dtypes=NUMERIC),
        Row("polyfit", numpy=lambda x, y, w, deg: np.polyfit(x, y, deg, w=w),
            via_op=lambda x, y, w, deg: F.polyfit(x, y, w, deg=deg), case=polyfit_case,
            tensor=lambda x, y, w, deg: applied("polyfit")(x, y, w, deg=deg),
            bad=(Case([np.arange(3.0), A(4), None], {"deg": 1}),)),
        Row("polydiv_q", numpy=lambda u, v: np.polydiv(u, v)[0], via_op=lambda u, v: F.polydiv_q(u, v),
            tensor=lambda u, v: applied("polydiv_q")(u, v), case=polydiv_case, name="polydiv_quotient"),
        # linalg: eig and eigvals of complex matrices, cond
        E("eig_packed", lambda a: np.concatenate([np.linalg.eig(a)[0][..., None, :], np.linalg.eig(a)[1]], -2),
          square_complex, dtypes=COMPLEX, via=lambda a: F.eig_packed(a),
          tensor=lambda a: applied("eig_packed")(a)),
        E("eigvals", np.linalg.eigvals, square_complex, dtypes=COMPLEX),
        E("cond", np.linalg.cond, cond_case, dtypes=FLOATS + COMPLEX, grad=True,
          bad=(Case([A(2, 3)], {"p": 1}), Case([A(0, 0)]))),
        # unwrap, asfortranarray, asarray_chkfinite
        C("cumsum", np.unwrap, lambda ctx: Case([ctx.arg(ctx.shape(min_dims=1, min_side=1))])),
        C("cumsum", lambda p, axis: np.unwrap(p, axis=axis, period=4.0, discont=1.0),
          lambda ctx: (lambda shape: Case([ctx.arg(shape)], {"axis": ctx.integer(0, len(shape) - 1, "axis")}))(
              ctx.shape(min_dims=1, min_side=1)),
          name="unwrap_period", via=lambda p, axis: call_spelling(np.unwrap, p, axis=axis, period=4.0, discont=1.0)),
        # (NumPy converts a Tensor to its data here: the Tensor spelling is kiln's normalizer)
        C("asfortranarray", np.asfortranarray, lambda ctx: Case([ctx.arg(ctx.shape())]), dtypes=ALL + COMPLEX,
          tensor=spelled(np.asfortranarray)),
        C("finite_or_raise", np.asarray_chkfinite, lambda ctx: Case([ctx.arg(ctx.shape())]), dtypes=ALL + COMPLEX,
          tensor=spelled(np.asarray_chkfinite)),
        Row("finite_or_raise", numpy=lambda x: (np.asarray_chkfinite(x), np.zeros((), bool))[1],
            via_op=lambda x: F.finite_or_raise(x), tensor=lambda x: applied("finite_or_raise")(x),
            case=lambda ctx: Case([ctx.arg(ctx.shape())]), dtypes=ALL + COMPLEX,
            bad=(Case([np.array([1.0, np.nan])]),)),
    ]
