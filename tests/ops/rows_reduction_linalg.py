"""Op-table rows: reductions and scans, and linear algebra."""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from kiln.ops import F

from .gen import (ALL, F32, F64, FLOATS, I64, NONZERO, NUMERIC, REAL, SMALL, Arg, Case, Ctx, Domain,
                  axis_choices, index_arg)
from .spec import A, Row, axes, getattr_op, one_axis


# ==========================================================================================
# Reductions and scans

def reduce_case(kind: str = "multi", domain: Domain = REAL, grad_domain: Domain | None = None,
                ddof: bool = False, dtype_param: bool = False, keepdims: bool = True):
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape()
        nd = len(shape)
        if kind == "multi":
            axis = ctx.choice(axis_choices(nd), "axis")
        else:  # one axis; a 0-d input counts as 1-d
            axis = ctx.choice([None] + list(range(-max(nd, 1), max(nd, 1))), "axis")
        params: dict = {"axis": axis}
        if keepdims:
            params["keepdims"] = ctx.boolean("keepdims")
        if ddof:
            params["ddof"] = ctx.choice([0, 1], "ddof")
        if dtype_param and not ctx.grad:
            dtype = ctx.choice([None, None, F64, F32, I64], "dtype")
            if dtype is not None:
                params["dtype"] = dtype
        dom = grad_domain if (ctx.grad and grad_domain is not None) else domain
        return Case([ctx.arg(shape, dom)], params)
    return case


def reduction_row(name: str, np_fn: Callable, dtypes: tuple, grad: bool, *, ufunc: Any = None,
                  method: bool = True, legacy: bool = True, kind: str = "multi",
                  amax: Callable | None = None, **case_kwargs: Any) -> Row:
    def via_op(x, axis=None, keepdims=False, **params):
        canon = one_axis(axis, x.ndim) if kind == "one" else axes(axis, x.ndim, legacy)
        return getattr(F, name)(x, axis=canon, keepdims=keepdims, **params)

    alts: tuple = ()
    if method:
        alts += (lambda x, **p: getattr(x, name)(**p),)
    if ufunc is not None:
        alts += (lambda x, **p: ufunc.reduce(x, **p),)
    if amax is not None:
        alts += (amax,)
    bad = (Case([A(2, 3)], {"axis": 2}, traced=False), Case([A(2, 3)], {"axis": -3}, traced=False))
    if kind == "multi":
        bad += (Case([A(2, 3)], {"axis": (0, 0)}, traced=False),)
    return Row(name, numpy=np_fn, via_op=via_op, case=reduce_case(kind, **case_kwargs),
               dtypes=dtypes, grad=grad, alts=alts, bad=bad)


def scan_row(name: str, np_fn: Callable, ufunc: np.ufunc, grad_domain: Domain | None) -> Row:
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape()
        nd = len(shape)
        params: dict = {"axis": ctx.choice([None] + list(range(-max(nd, 1), max(nd, 1))), "axis")}
        if not ctx.grad and ctx.boolean("dtype?"):
            params["dtype"] = ctx.choice([F64, I64], "dtype")
        dom = grad_domain if (ctx.grad and grad_domain is not None) else REAL
        return Case([ctx.arg(shape, dom)], params)

    def via_op(x, axis=None, dtype=None):
        return getattr(F, name)(x, axis=one_axis(axis, x.ndim),
                                dtype=None if dtype is None else np.dtype(dtype))

    cumulative = getattr(np, name.replace("cum", "cumulative_"))
    return Row(name, numpy=np_fn, via_op=via_op, case=case, dtypes=ALL, grad=True,
               alts=(lambda x, **p: getattr(x, name)(**p),
                     lambda x, axis=None, dtype=None: ufunc.accumulate(x, axis=axis, dtype=dtype),
                     lambda x, axis=None, dtype=None: cumulative(x, axis=axis, dtype=dtype)),
               bad=(Case([A(2, 3)], {"axis": 2}, traced=False),
                    Case([A(2, 3)], {"axis": (0, 1)}, traced=False)))


def accumulate_row(name: str, ufunc: np.ufunc) -> Row:
    """ufunc.accumulate of a running extremum (kiln/ops/running.py): one int axis
    (default 0), no 0-d input; nan, inf and signed zeros planted in forward checks."""
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape(min_dims=1)
        params: dict = {"axis": ctx.choice(list(range(-len(shape), len(shape))), "axis")}
        if not ctx.grad and ctx.boolean("dtype?"):
            params["dtype"] = ctx.choice([F64, I64], "dtype")
        return Case([ctx.arg(shape, REAL)], params)

    def via_op(x, axis=0, dtype=None):
        return getattr(F, name)(x, axis=normalize_axis_index(axis, x.ndim),
                                dtype=None if dtype is None else np.dtype(dtype))

    return Row(name, numpy=lambda x, **p: ufunc.accumulate(x, **p), via_op=via_op, case=case,
               dtypes=ALL, grad=True,
               alts=(lambda x, axis=0, dtype=None: ufunc.accumulate(x, axis, dtype),
                     lambda x, axis=0, dtype=None: ufunc.accumulate(x, axis=(axis,), dtype=dtype)),
               bad=(Case([A(2, 3)], {"axis": 2}, traced=False),
                    Case([A(2, 3)], {"axis": (0, 1)}, traced=False),
                    Case([A(2, 3)], {"axis": None}, traced=False),
                    Case([A()], {}, traced=False)))


def reduceat_row(ufunc: np.ufunc) -> Row:
    """ufunc.reduceat (kiln/ops/segments.py): segments starting at indices in range,
    increasing or not (a non-increasing next index makes a one-element segment)."""
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape(min_dims=1, min_side=1)
        axis = ctx.choice(list(range(-len(shape), len(shape))), "axis")
        n = shape[axis]
        idx = ctx.arg((ctx.integer(1, 4, "m"),), dtype=I64, layout="C", writable=True)
        idx.base[...] = np.random.default_rng(ctx.integer(0, 99, "seed")).integers(0, n, idx.base.shape)
        params: dict = {"axis": axis}
        if ctx.boolean("dtype?"):
            params["dtype"] = ctx.choice([F64, I64], "dtype")
        return Case([ctx.arg(shape, REAL), idx], params)

    def via_op(a, indices, axis=0, dtype=None):
        return F.reduceat(a, indices, ufunc=ufunc.__name__, axis=normalize_axis_index(axis, a.ndim),
                          dtype=None if dtype is None else np.dtype(dtype))

    return Row("reduceat", numpy=lambda a, i, **p: ufunc.reduceat(a, i, **p), via_op=via_op,
               case=case, dtypes=NUMERIC, name=f"reduceat_{ufunc.__name__}",
               bad=(Case([A(2, 3), np.array([0, 3])], {"axis": 1}),
                    Case([A(2, 3), np.array([0, 1])], {"axis": 2}, traced=False),
                    Case([A(2, 3), np.array([0.0, 1.0])], {})))


def ufunc_reduce_row(ufunc: np.ufunc, dtypes: tuple, grad: bool = False) -> Row:
    """ufunc.reduce of a ufunc without a reduction op (kiln/ops/ufunc_methods.py): one
    axis, several (reorderable ufuncs), or None; keepdims; an initial value. ``grad``:
    the ufunc's reduce has a derivative rule (logaddexp's)."""
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape(min_dims=1, min_side=1)
        axes = [None] + list(range(-len(shape), len(shape)))
        if ufunc.__name__ != "subtract" and len(shape) > 1:
            axes.append((0, len(shape) - 1))
        params: dict = {"axis": ctx.choice(axes, "axis"), "keepdims": ctx.boolean("keepdims")}
        if ctx.boolean("initial?"):
            params["initial"] = 1
        return Case([ctx.arg(shape, SMALL)], params)

    def via_op(a, axis=0, keepdims=False, initial=np._NoValue):
        return F.ufunc_reduce(a, ufunc=ufunc.__name__, axis=normalize_axis_tuple(axis, a.ndim)
                              if axis is not None else None, dtype=None, keepdims=keepdims,
                              initial=() if initial is np._NoValue else (initial,))

    return Row("ufunc_reduce", numpy=lambda a, **p: ufunc.reduce(a, **p), via_op=via_op,
               case=case, dtypes=dtypes, name=f"reduce_{ufunc.__name__}", grad=grad,
               bad=(Case([A(2, 3)], {"axis": 2}, traced=False),)
               + ((Case([A(0)], {"axis": 0}),) if ufunc.identity is None else ()))


def ufunc_accumulate_row(ufunc: np.ufunc, dtypes: tuple) -> Row:
    """ufunc.accumulate of a ufunc without a scan op (kiln/ops/ufunc_methods.py)."""
    def case(ctx: Ctx) -> Case:
        shape = ctx.shape(min_dims=1)
        return Case([ctx.arg(shape, SMALL)],
                    {"axis": ctx.choice(list(range(-len(shape), len(shape))), "axis")})

    def via_op(a, axis=0):
        return F.ufunc_accumulate(a, ufunc=ufunc.__name__, axis=normalize_axis_index(axis, a.ndim),
                                  dtype=None)

    return Row("ufunc_accumulate", numpy=lambda a, **p: ufunc.accumulate(a, **p), via_op=via_op,
               case=case, dtypes=dtypes, name=f"accumulate_{ufunc.__name__}",
               bad=(Case([A(2, 3)], {"axis": 2}, traced=False),))


PROD_GRAD = Domain(0.5, 1.5, nonzero=True)   # prod's rule divides by x: keep it off zero


def selected_sum_case(ctx: Ctx) -> Case:
    """x[mask].sum() (ops/reduction_where.py): x and a mask of its shape."""
    shape = ctx.shape()
    mask = index_arg(ctx.rng.random(shape) < 0.5, ctx.layout(len(shape)) if not ctx.grad else "C")
    return Case([ctx.arg(shape), mask], {})


def reduction_rows() -> list[Row]:
    return [
        Row("selected_sum", numpy=lambda x, mask: np.sum(x[mask]), case=selected_sum_case,
            via_op=lambda x, mask: F.selected_sum(x, mask), dtypes=FLOATS, grad=True),
        Row("where_sum", numpy=lambda x, mask: np.sum(x, where=mask), case=selected_sum_case,
            via_op=lambda x, mask: F.where_sum(x, mask), dtypes=FLOATS, grad=True),
        reduction_row("sum", np.sum, ALL, True, ufunc=np.add, dtype_param=True),
        reduction_row("prod", np.prod, ALL, True, ufunc=np.multiply, dtype_param=True,
                      domain=Domain(-1.5, 1.5, -2, 2), grad_domain=PROD_GRAD),
        reduction_row("mean", np.mean, ALL, True, legacy=False, dtype_param=True),
        reduction_row("var", np.var, NUMERIC, True, legacy=False, ddof=True),
        reduction_row("std", np.std, NUMERIC, True, legacy=False, ddof=True),
        reduction_row("max", np.max, ALL, True, ufunc=np.maximum, amax=np.amax),
        reduction_row("min", np.min, ALL, True, ufunc=np.minimum, amax=np.amin),
        reduction_row("ptp", np.ptp, ALL, True, method=False),
        reduction_row("any", np.any, ALL, False, ufunc=np.logical_or),
        reduction_row("all", np.all, ALL, False, ufunc=np.logical_and),
        reduction_row("argmax", np.argmax, ALL, False, kind="one"),
        reduction_row("argmin", np.argmin, ALL, False, kind="one"),
        scan_row("cumsum", np.cumsum, np.add, None),
        scan_row("cumprod", np.cumprod, np.multiply, PROD_GRAD),
        accumulate_row("cummax", np.maximum),
        accumulate_row("cummin", np.minimum),
        accumulate_row("cumfmax", np.fmax),
        accumulate_row("cumfmin", np.fmin),
        reduceat_row(np.add),
        reduceat_row(np.maximum),
        ufunc_reduce_row(np.logaddexp, FLOATS, grad=True),
        ufunc_reduce_row(np.subtract, NUMERIC),
        ufunc_accumulate_row(np.logaddexp, FLOATS),
        ufunc_accumulate_row(np.subtract, NUMERIC),
    ]


# ==========================================================================================
# Linear algebra

def well_conditioned(ctx: Ctx, shape: tuple, spd: bool = False) -> Arg:
    """A stack of square matrices with a dominant diagonal (symmetric positive definite
    when ``spd``), laid out in any writable layout."""
    arg = ctx.arg(shape, writable=True)
    n = shape[-1] if shape else 0
    m = ctx.rng.uniform(-1.0, 1.0, size=shape)
    if spd:
        m = m @ np.swapaxes(m, -1, -2) / max(n, 1)
    arg.value[...] = m + (n + 1.0) * np.eye(n)
    return arg


def matmul_case(ctx: Ctx) -> Case:
    n, k, m = (ctx.integer(0 if not ctx.grad else 1, 3, "dim") for _ in range(3))
    bx, by = ctx.broadcast_shapes(2, max_dims=2)
    form = ctx.choice(["mm", "batch", "vec-mat", "mat-vec", "vec-vec"], "form")
    sx = {"mm": (n, k), "batch": bx + (n, k), "vec-mat": (k,), "mat-vec": bx + (n, k),
          "vec-vec": (k,)}[form]
    sy = {"mm": (k, m), "batch": by + (k, m), "vec-mat": by + (k, m), "mat-vec": (k,),
          "vec-vec": (k,)}[form]
    return Case([ctx.arg(sx), ctx.arg(sy)])


def dot_case(inner: bool):
    def case(ctx: Ctx) -> Case:
        k = ctx.integer(0 if not ctx.grad else 1, 3, "k")
        na, nb = ctx.integer(0, 3, "ndim a"), ctx.integer(0, 3, "ndim b")
        sa = ctx.shape(min_dims=max(na - 1, 0), max_dims=max(na - 1, 0)) + ((k,) if na else ())
        if nb == 0:
            sb: tuple = ()
        elif nb == 1 or inner:
            sb = ctx.shape(min_dims=nb - 1, max_dims=nb - 1) + (k,)
        else:
            rest = ctx.shape(min_dims=nb - 1, max_dims=nb - 1)
            sb = rest[:-1] + (k,) + rest[-1:]
        if na == 0:
            sa = ()
        return Case([ctx.arg(sa), ctx.arg(sb)])
    return case


def outer_case(ctx: Ctx) -> Case:
    return Case([ctx.arg(ctx.shape(max_dims=2)), ctx.arg(ctx.shape(max_dims=2))])


def tensordot_case(ctx: Ctx) -> Case:
    sa = ctx.shape(min_dims=0, max_dims=3)
    c = ctx.integer(0, min(len(sa), 2), "contracted")
    extra = ctx.shape(min_dims=0, max_dims=2)
    if ctx.boolean("int axes"):
        sb = sa[len(sa) - c:] + extra
        return Case([ctx.arg(sa), ctx.arg(sb)], {"axes": c})
    a_axes = list(ctx.rng.permutation(len(sa))[:c])
    nb = c + len(extra)
    b_axes = list(ctx.rng.permutation(nb)[:c])
    sb_list = list(extra)
    for pos, ax in sorted(zip(b_axes, a_axes)):
        sb_list.insert(pos, sa[ax])
    axes_param = ([int(a) - (len(sa) if ctx.boolean("neg") else 0) for a in a_axes],
                  [int(b) for b in b_axes])
    return Case([ctx.arg(sa), ctx.arg(tuple(sb_list))], {"axes": axes_param})


def tensordot_via_op(a, b, axes=2):
    na, nb = a.ndim, b.ndim
    if isinstance(axes, int):
        pair = (tuple(range(na - axes, na)), tuple(range(axes)))
    else:
        pair = (tuple(normalize_axis_index(i, na) for i in axes[0]),
                tuple(normalize_axis_index(j, nb) for j in axes[1]))
    return F.tensordot(a, b, axes=pair)


# subscripts -> (explicit form, operand shapes from (n, k, m, b), differentiable)
EINSUM = {
    "ij,jk->ik": ("ij,jk->ik", lambda n, k, m, b: [(n, k), (k, m)], True),
    "ij,jk": ("ij,jk->ik", lambda n, k, m, b: [(n, k), (k, m)], True),
    "i,i->": ("i,i->", lambda n, k, m, b: [(k,), (k,)], True),
    "i,j->ij": ("i,j->ij", lambda n, k, m, b: [(n,), (m,)], True),
    "ij->ji": ("ij->ji", lambda n, k, m, b: [(n, k)], True),
    "ij->": ("ij->", lambda n, k, m, b: [(n, k)], True),
    "ij,ij->i": ("ij,ij->i", lambda n, k, m, b: [(n, k), (n, k)], True),
    "bij,bjk->bik": ("bij,bjk->bik", lambda n, k, m, b: [(b, n, k), (b, k, m)], True),
    "...ij,jk->...ik": ("Zij,jk->Zik", lambda n, k, m, b: [(b, n, k), (k, m)], True),
    "ij,jk,kl->il": ("ij,jk,kl->il", lambda n, k, m, b: [(n, k), (k, m), (m, b)], True),
    "ii->i": ("ii->i", lambda n, k, m, b: [(n, n)], False),
}


def einsum_case(ctx: Ctx) -> Case:
    patterns = [s for s, (_, _, grad) in EINSUM.items() if grad or not ctx.grad]
    subscripts = ctx.choice(patterns, "subscripts")
    dims = [ctx.integer(1 if ctx.grad else 0, 3, "dim") for _ in range(4)]
    shapes = EINSUM[subscripts][1](*dims)
    return Case([ctx.arg(s) for s in shapes], {"subscripts": subscripts})


def norm_case(ctx: Ctx) -> Case:
    form = ctx.choice(["all", "vector", "matrix"], "form")
    inf = float("inf")
    if form == "all":
        shape = ctx.shape(max_dims=3)
        ords = [None] if ctx.grad else [None, None, 2, 1, inf]
        params = {"ord": ctx.choice(ords, "ord"), "axis": None}
    elif form == "vector":
        shape = ctx.shape(min_dims=1)
        nd = len(shape)
        ords = [None, 2, 1, 3, inf, -inf] + ([] if ctx.grad else [0, -1, 0.5])
        params = {"ord": ctx.choice(ords, "ord"), "axis": ctx.integer(-nd, nd - 1, "axis")}
    else:
        shape = ctx.shape(min_dims=2, min_side=1)
        nd = len(shape)
        a0 = ctx.integer(0, nd - 1, "axis0")
        a1 = ctx.choice([a for a in range(nd) if a != a0], "axis1")
        ords = [None, "fro", "nuc", 1, -1, 2, -2, inf, -inf]
        params = {"ord": ctx.choice(ords, "ord"), "axis": (a0, a1 - nd)}
    params["keepdims"] = ctx.boolean("keepdims")
    return Case([ctx.arg(shape, NONZERO if ctx.grad else REAL)], params)


def vector_norm_case(ctx: Ctx) -> Case:
    shape = ctx.shape(min_dims=1)
    nd = len(shape)
    params = {"axis": ctx.integer(-nd, nd - 1, "axis"), "keepdims": ctx.boolean("keepdims")}
    return Case([ctx.arg(shape, NONZERO if ctx.grad else REAL)], params)


def vector_norm_via_op(x, axis, keepdims=False):
    return F.vector_norm(x, axis=(normalize_axis_index(axis, x.ndim),), keepdims=keepdims)


def norm_via_op(x, ord=None, axis=None, keepdims=False):
    nd = x.ndim
    if axis is None:
        canon = None if ord is None else tuple(range(nd))
    else:
        canon = tuple(normalize_axis_index(a, nd) for a in (axis if isinstance(axis, tuple) else (axis,)))
        if len(canon) == 2 and ord in (None, "fro"):
            canon = tuple(sorted(canon))
    return F.norm(x, ord=ord, axis=canon, keepdims=keepdims)


def square_case(spd: bool = False, rhs: bool = False, upper: bool = False):
    def case(ctx: Ctx) -> Case:
        n = ctx.integer(0 if not ctx.grad else 1, 3, "n")
        batch = ctx.shape(max_dims=2)
        args: list = [well_conditioned(ctx, batch + (n, n), spd)]
        params: dict = {}
        if rhs:
            args.append(ctx.arg((n,) if ctx.boolean("vector b") else batch + (n, ctx.integer(0, 2, "k"))))
        if upper:
            params["upper"] = ctx.boolean("upper")
        return Case(args, params)
    return case


SQUARE_BAD = (Case([A(2, 3)]), Case([A(3)]))


def linalg_rows() -> list[Row]:
    return [
        Row("matmul", numpy=np.matmul, via_op=getattr_op("matmul"), case=matmul_case,
            dtypes=ALL, grad=True, alts=(operator.matmul, np.linalg.matmul),
            bad=(Case([A(2, 3), A(4, 5)]), Case([A(3), A()]), Case([A(2, 2, 3), A(3, 3, 1)]))),
        Row("dot", numpy=np.dot, via_op=getattr_op("dot"), case=dot_case(inner=False),
            dtypes=NUMERIC, grad=True, alts=(lambda a, b: a.dot(b),),
            bad=(Case([A(2, 3), A(2, 3)]),)),
        Row("inner", numpy=np.inner, via_op=getattr_op("inner"), case=dot_case(inner=True),
            dtypes=NUMERIC, grad=True, bad=(Case([A(2, 3), A(2, 2)]),)),
        Row("outer", numpy=np.outer, via_op=getattr_op("outer"), case=outer_case,
            dtypes=ALL, grad=True, alts=(np.linalg.outer,)),
        Row("tensordot", numpy=np.tensordot, via_op=tensordot_via_op, case=tensordot_case,
            dtypes=NUMERIC, grad=True, alts=(lambda a, b, axes: np.linalg.tensordot(a, b, axes=axes),),
            bad=(Case([A(2, 3), A(2, 3)], {"axes": 1}), Case([A(2, 3), A(3, 2)], {"axes": ([0], [0])}))),
        Row("einsum", numpy=lambda *ops, subscripts: np.einsum(subscripts, *ops),
            via_op=lambda *ops, subscripts: F.einsum(tuple(ops), subscripts=EINSUM[subscripts][0]),
            case=einsum_case, dtypes=NUMERIC, grad=True,
            bad=(Case([A(2, 3), A(2, 3)], {"subscripts": "ij,jk->ik"}),
                 Case([A(2, 3)], {"subscripts": "ijk->i"}, traced=False))),
        Row("norm", numpy=np.linalg.norm, via_op=norm_via_op, case=norm_case, dtypes=NUMERIC,
            grad=True, bad=(Case([A(2, 2, 2)], {"ord": 2}, traced=False),
                            Case([A(3)], {"ord": "fro"}, traced=False),
                            Case([A(2, 3)], {"axis": 2}, traced=False))),
        Row("vector_norm", numpy=lambda x, axis, keepdims=False: np.linalg.norm(x, axis=axis, keepdims=keepdims),
            via_op=vector_norm_via_op, case=vector_norm_case, dtypes=FLOATS, grad=True),
        Row("inv", numpy=np.linalg.inv, via_op=getattr_op("inv"), case=square_case(),
            dtypes=FLOATS, grad=True, bad=SQUARE_BAD),
        Row("solve", numpy=np.linalg.solve, via_op=getattr_op("solve"),
            case=square_case(rhs=True), dtypes=FLOATS, grad=True,
            bad=(Case([A(2, 2), A(3)]), Case([A(2, 3), A(2)]))),
        # NumPy reads one triangle of the input, and so does kiln's gradient (zero on the
        # other): finite differences of single entries of NumPy's own cholesky.
        Row("cholesky", numpy=lambda a, upper=False: np.linalg.cholesky(a, upper=upper),
            via_op=lambda a, upper=False: F.cholesky(a, upper=upper),
            case=square_case(spd=True, upper=True), dtypes=FLOATS, grad=True, bad=SQUARE_BAD),
    ]
