"""The op table: one spec row per op in kiln's inventory.

A row names the op, how NumPy users spell it (``numpy``, the oracle, run on plain arrays
and, unless ``tensor`` says otherwise, on kiln Tensors), how to call the op itself
(``via_op``, with ``F`` and canonical parameters, used for tracing), how to draw its
inputs (``case``), which dtypes to try and whether it has a derivative rule.
test_op_table.py runs every row through the same checks.
"""
from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

import kiln
from kiln.ops import REGISTRY, F
from kiln.ops.registry import Bound
from kiln.tensor import apply

from .gen import (ALL, BOOL, EXPONENT, F32, F64, FLOATS, GT1, I64, INTEGRAL, NONZERO, NUMERIC,
                  OFF_INT, POS, REAL, SHIFT, SMALL, UNIT, Arg, Case, Ctx, Domain, axis_choices,
                  index_arg)


@dataclass(frozen=True)
class Row:
    op: str                               # the op's name in kiln.ops.REGISTRY
    numpy: Callable                       # NumPy spelling (the oracle): numpy(*args, **params)
    via_op: Callable                      # the op itself: via_op(*args, **params), with F
    case: Callable[[Ctx], Case]           # draws the arguments
    dtypes: tuple = FLOATS
    grad: bool = False                    # has a derivative rule (checked against the registry)
    tensor: Callable | None = None        # how to call it on Tensors, when not `numpy`
    alts: tuple = ()                      # more spellings: each on Tensors vs on arrays
    mutates: bool = False                 # writes into its first argument
    bad: tuple = ()                       # Cases NumPy rejects: kiln must raise the same
    name: str | None = None               # test id, when an op has several rows

    def __repr__(self) -> str:
        return f"Row({self.id})"

    @property
    def id(self) -> str:
        return self.name or self.op

    @property
    def on_tensors(self) -> Callable:
        return self.tensor or self.numpy


def A(*shape: int, dtype: Any = F64) -> Arg:
    """A fixed contiguous array argument for the error cases."""
    base = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) if shape else np.zeros((), dtype)
    return Arg(base, lambda b: b, "C")


# ==========================================================================================
# Case builders

def unary_case(domain: Domain = REAL, grad_domain: Domain | None = None):
    def case(ctx: Ctx) -> Case:
        dom = grad_domain if (ctx.grad and grad_domain is not None) else domain
        return Case([ctx.arg(ctx.shape(), dom)])
    return case


def scalar_of(ctx: Ctx, domain: Domain) -> Any:
    """A Python scalar of the kind matching the dtype under test (NEP 50 weak scalars)."""
    value = domain.sample(ctx.rng, (), ctx.dtype, specials=False)[()]
    return value.item()


def binary_case(dx: Domain = REAL, dy: Domain = REAL, *, scalars: bool = True,
                relate: Callable | None = None, grad_dx: Domain | None = None,
                grad_dy: Domain | None = None):
    """Two broadcast-compatible arrays; sometimes one is a Python scalar (forward only).

    ``relate(ctx, x, y)`` adjusts x given y in gradient cases (keeping x/y off integers for
    floor_divide and remainder); then x has the full broadcast shape.
    """
    def case(ctx: Ctx) -> Case:
        sx, sy = ctx.broadcast_shapes(2)
        domx = grad_dx if (ctx.grad and grad_dx) else dx
        domy = grad_dy if (ctx.grad and grad_dy) else dy
        if ctx.grad and relate is not None:
            sx = np.broadcast_shapes(sx, sy)
        if not ctx.grad and scalars:
            which = ctx.choice(["none", "none", "x", "y"], "scalar")
            if which == "x":
                return Case([scalar_of(ctx, domx), ctx.arg(sy, domy)])
            if which == "y":
                return Case([ctx.arg(sx, domx), scalar_of(ctx, domy)])
        x, y = ctx.arg(sx, domx), ctx.arg(sy, domy)
        if ctx.grad and relate is not None:
            relate(ctx, x, y)
        return Case([x, y])
    return case


def off_integer_quotient(ctx: Ctx, x: Arg, y: Arg) -> None:
    """Make x/y sit between integers, away from floor/remainder's jumps."""
    yb = np.broadcast_to(y.value, x.value.shape)
    k = ctx.rng.integers(-2, 3, size=x.value.shape)
    frac = ctx.rng.choice(np.array([0.2, 0.35, 0.5, 0.65, 0.8]), size=x.value.shape)
    x.value[...] = yb * (k + frac)


def where_case(ctx: Ctx) -> Case:
    sc, sx, sy = ctx.broadcast_shapes(3)
    cond = index_arg(ctx.rng.random(sc) < 0.5, ctx.layout(len(sc)) if not ctx.grad else "C")
    x = ctx.arg(sx)
    y = scalar_of(ctx, REAL) if (not ctx.grad and ctx.boolean("scalar y")) else ctx.arg(sy)
    return Case([cond, x, y])


def clip_case(ctx: Ctx) -> Case:
    sx, slo, shi = ctx.broadcast_shapes(3)
    lo_dom, hi_dom = Domain(-2.0, -0.5, -3, -1), Domain(0.5, 2.0, 1, 3)
    kinds = ["array", "scalar", "none"]
    klo, khi = ctx.choice(kinds, "lo"), ctx.choice(kinds, "hi")
    if ctx.grad and klo == khi == "none":
        klo = "array"
    make = {"array": lambda s, d: ctx.arg(s, d), "scalar": lambda s, d: scalar_of(ctx, d),
            "none": lambda s, d: None}
    return Case([ctx.arg(sx), make[klo](slo, lo_dom), make[khi](shi, hi_dom)])


def astype_case(ctx: Ctx) -> Case:
    target = F64 if ctx.grad else ctx.choice([F32, F64, I64, BOOL, np.dtype(np.int32)], "dtype")
    return Case([ctx.arg(ctx.shape())], {"dtype": target})


def sum_to_case(ctx: Ctx) -> Case:
    (small,) = ctx.broadcast_shapes(1)
    # Grow `small` into a shape it broadcasts to: new leading dims, and 1s widened.
    lead = tuple(ctx.integer(1, 3, "lead") for _ in range(ctx.integer(0, 1, "nlead")))
    widened = tuple(ctx.integer(1, 3, "wide") if d == 1 else d for d in small)
    big = lead + widened
    return Case([ctx.arg(big)], {"shape": small})


def broadcast_to_case(ctx: Ctx) -> Case:
    (small,) = ctx.broadcast_shapes(1)
    lead = tuple(ctx.integer(0, 3, "lead") for _ in range(ctx.integer(0, 1, "nlead")))
    widened = tuple(ctx.integer(0, 3, "wide") if d == 1 else d for d in small)
    return Case([ctx.arg(small)], {"shape": lead + widened})


def sum_to_reference(x: np.ndarray, shape: tuple) -> np.ndarray:
    """sum_to written independently: sum the added leading axes, then the widened ones."""
    x = np.asarray(x)
    lead = x.ndim - len(shape)
    out = np.sum(x, axis=tuple(range(lead))) if lead else x
    for i, d in enumerate(shape):
        if d == 1 and out.shape[i] != 1:
            out = np.sum(out, axis=i, keepdims=True)
    return np.asarray(out, dtype=x.dtype).reshape(shape)


# ==========================================================================================
# Rows: pointwise

def ufunc_row(name: str, case: Callable, dtypes: tuple, grad: bool, alts: tuple = (),
              bad: tuple = ()) -> Row:
    ufunc = getattr(np, name)
    return Row(name, numpy=ufunc, via_op=getattr_op(name), case=case, dtypes=dtypes, grad=grad,
               alts=alts, bad=bad)


def getattr_op(name: str) -> Callable:
    """``F.<name>`` looked up when called, so a row can exist before its op is declared."""
    return lambda *args, **params: getattr(F, name)(*args, **params)


# name: (domain, gradient domain or None, dtypes, differentiable)
UNARY = {
    "negative": (REAL, None, ALL, True),
    "positive": (REAL, None, NUMERIC, True),
    "absolute": (REAL, NONZERO, ALL, True),
    "sign": (REAL, NONZERO, NUMERIC, True),
    "exp": (SMALL, None, NUMERIC, True),
    "exp2": (SMALL, None, NUMERIC, True),
    "expm1": (SMALL, None, NUMERIC, True),
    "log": (POS, None, NUMERIC, True),
    "log2": (POS, None, NUMERIC, True),
    "log10": (POS, None, NUMERIC, True),
    "log1p": (Domain(-0.6, 3.0, 0, 5), None, NUMERIC, True),
    "sqrt": (POS, None, NUMERIC, True),
    "cbrt": (REAL, NONZERO, NUMERIC, True),
    "square": (REAL, None, ALL, True),
    "reciprocal": (NONZERO, None, NUMERIC, True),
    "sin": (REAL, None, ALL, True),
    "cos": (REAL, None, NUMERIC, True),
    "tan": (Domain(-1.2, 1.2, -1, 1), None, NUMERIC, True),
    "arcsin": (UNIT, None, NUMERIC, True),
    "arccos": (UNIT, None, NUMERIC, True),
    "arctan": (REAL, None, NUMERIC, True),
    "sinh": (SMALL, None, NUMERIC, True),
    "cosh": (SMALL, None, NUMERIC, True),
    "tanh": (REAL, None, NUMERIC, True),
    "arcsinh": (REAL, None, NUMERIC, True),
    "arccosh": (GT1, None, NUMERIC, True),
    "arctanh": (UNIT, None, FLOATS, True),
    "floor": (OFF_INT, None, ALL, True),
    "ceil": (OFF_INT, None, NUMERIC, True),
    "trunc": (OFF_INT, None, NUMERIC, True),
    "rint": (OFF_INT, None, NUMERIC, True),
    "logical_not": (REAL, None, ALL, False),
    "isnan": (REAL, None, ALL, False),
    "isinf": (REAL, None, NUMERIC, False),
    "isfinite": (REAL, None, NUMERIC, False),
    "signbit": (REAL, None, NUMERIC, False),
    "invert": (REAL, None, INTEGRAL, False),
}

UNARY_OPERATORS = {"negative": operator.neg, "positive": operator.pos, "absolute": abs,
                   "invert": operator.invert}

QUOTIENT = dict(dy=NONZERO, relate=off_integer_quotient)

# name: (case, dtypes, differentiable)
BINARY = {
    "add": (binary_case(), ALL, True),
    "subtract": (binary_case(), NUMERIC, True),
    "multiply": (binary_case(), ALL, True),
    "true_divide": (binary_case(dy=NONZERO), NUMERIC, True),
    "floor_divide": (binary_case(**QUOTIENT), NUMERIC, True),
    "remainder": (binary_case(**QUOTIENT), NUMERIC, True),
    "fmod": (binary_case(**QUOTIENT), NUMERIC, True),
    "power": (binary_case(SMALL, EXPONENT, grad_dx=POS), NUMERIC, True),
    "maximum": (binary_case(), ALL, True),
    "minimum": (binary_case(), ALL, True),
    "fmax": (binary_case(), NUMERIC, True),
    "fmin": (binary_case(), NUMERIC, True),
    "arctan2": (binary_case(REAL, REAL, grad_dx=NONZERO, grad_dy=NONZERO), NUMERIC, True),
    "hypot": (binary_case(REAL, REAL, grad_dx=NONZERO, grad_dy=NONZERO), NUMERIC, True),
    "logaddexp": (binary_case(), NUMERIC, True),
    "copysign": (binary_case(REAL, REAL, grad_dx=NONZERO, grad_dy=NONZERO), NUMERIC, True),
    "equal": (binary_case(Domain(-2, 2, -2, 2), Domain(-2, 2, -2, 2)), ALL, False),
    "not_equal": (binary_case(), ALL, False),
    "less": (binary_case(), ALL, False),
    "less_equal": (binary_case(), ALL, False),
    "greater": (binary_case(), ALL, False),
    "greater_equal": (binary_case(), ALL, False),
    "logical_and": (binary_case(), ALL, False),
    "logical_or": (binary_case(), ALL, False),
    "logical_xor": (binary_case(), ALL, False),
    "bitwise_and": (binary_case(), INTEGRAL, False),
    "bitwise_or": (binary_case(), INTEGRAL, False),
    "bitwise_xor": (binary_case(), INTEGRAL, False),
    "left_shift": (binary_case(SHIFT, SHIFT), INTEGRAL, False),
    "right_shift": (binary_case(SHIFT, SHIFT), INTEGRAL, False),
}

BINARY_OPERATORS = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "true_divide": operator.truediv, "floor_divide": operator.floordiv,
    "remainder": operator.mod, "power": operator.pow, "bitwise_and": operator.and_,
    "bitwise_or": operator.or_, "bitwise_xor": operator.xor, "left_shift": operator.lshift,
    "right_shift": operator.rshift, "equal": operator.eq, "not_equal": operator.ne,
    "less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
    "greater_equal": operator.ge,
}

MISMATCH = (Case([A(3), A(4)]), Case([A(2, 3), A(3, 2)]))


def pointwise_rows() -> list[Row]:
    rows = []
    for name, (dom, gdom, dtypes, grad) in UNARY.items():
        alts = (UNARY_OPERATORS[name],) if name in UNARY_OPERATORS else ()
        # Integer-only ufuncs reject floats; floating-only ones reject... nothing: NumPy
        # casts. The error must be NumPy's own.
        bad = (Case([A(3)]),) if dtypes == INTEGRAL else ()
        rows.append(ufunc_row(name, unary_case(dom, gdom), dtypes, grad, alts, bad))
    for name, (case, dtypes, grad) in BINARY.items():
        alts = (BINARY_OPERATORS[name],) if name in BINARY_OPERATORS else ()
        bad = MISMATCH + ((Case([A(3), A(3)]),) if dtypes == INTEGRAL else ())
        rows.append(ufunc_row(name, case, dtypes, grad, alts, bad))
    rows += [
        Row("where", numpy=np.where, via_op=getattr_op("where"), case=where_case,
            dtypes=ALL, grad=True,
            bad=(Case([index_arg(np.ones(3, bool)), A(4), A(3)]),)),
        Row("clip", numpy=np.clip, via_op=getattr_op("clip"), case=clip_case, dtypes=NUMERIC,
            grad=True, alts=(lambda x, lo, hi: x.clip(lo, hi),)),
        Row("astype", numpy=lambda x, dtype: x.astype(dtype),
            via_op=lambda x, dtype: F.astype(x, dtype=np.dtype(dtype)), case=astype_case,
            dtypes=ALL, grad=True),
        Row("sum_to", numpy=sum_to_reference, via_op=lambda x, shape: F.sum_to(x, shape=shape),
            tensor=lambda x, shape: apply(Bound(REGISTRY["sum_to"], (x,), {"shape": shape})),
            case=sum_to_case, dtypes=NUMERIC, grad=True),
        Row("broadcast_to", numpy=np.broadcast_to,
            via_op=lambda x, shape: F.broadcast_to(x, shape=shape), case=broadcast_to_case,
            dtypes=ALL, grad=True,
            bad=(Case([A(3), (4,)]), Case([A(2, 3), (3, 2)]))),
    ]
    return rows


# ==========================================================================================
# Helpers for the other families

def spelled(key: Any) -> Callable:
    """Call a NumPy spelling the way kiln does for Tensors: its normalizer, then ``apply``.

    For spellings NumPy never dispatches to Tensors (np.zeros has no array argument;
    np.full does not dispatch on its fill value)."""
    return lambda *args, **kwargs: apply(kiln.ops.lookup(key).bind(*args, **kwargs))


def applied(op_name: str, **fixed: Any) -> Callable:
    """Run an op with no NumPy spelling on Tensors: ``apply(Bound(op, inputs, params))``."""
    def call(*inputs: Any, **params: Any) -> Any:
        return apply(Bound(REGISTRY[op_name], inputs, {**fixed, **params}))
    return call


def axes(axis: Any, nd: int, legacy: bool = False) -> tuple | None:
    """A reduction's canonical axis: None or a sorted tuple of non-negative ints.

    ``legacy``: ufunc reductions let a 0-d array be reduced over axis 0 or -1."""
    if axis is None:
        return None
    if legacy and nd == 0 and not isinstance(axis, tuple) and axis in (0, -1):
        return None
    return tuple(sorted(normalize_axis_tuple(axis, nd)))


def one_axis(axis: Any, nd: int) -> int | None:
    """argmax's and the scans' axis: None or one non-negative int (a 0-d input is 1-d)."""
    if axis is None:
        return None
    axis = normalize_axis_index(axis, max(nd, 1))
    return axis if nd else None


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


def symmetric(a: Any) -> Any:
    """(a + a^T) / 2 over the last two axes; anything but a stack of square matrices is
    returned as it is, for cholesky to reject."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        return a
    return (a + np.swapaxes(a, -1, -2)) / 2


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


PROD_GRAD = Domain(0.5, 1.5, nonzero=True)   # prod's rule divides by x: keep it off zero


def reduction_rows() -> list[Row]:
    return [
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
    ]


# ==========================================================================================
# Linear algebra

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
        ords = [None, "fro"] + ([] if ctx.grad else ["nuc", 1, -1, 2, inf, -inf])
        params = {"ord": ctx.choice(ords, "ord"), "axis": (a0, a1 - nd)}
    params["keepdims"] = ctx.boolean("keepdims")
    return Case([ctx.arg(shape, NONZERO if ctx.grad else REAL)], params)


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
        Row("inv", numpy=np.linalg.inv, via_op=getattr_op("inv"), case=square_case(),
            dtypes=FLOATS, grad=True, bad=SQUARE_BAD),
        Row("solve", numpy=np.linalg.solve, via_op=getattr_op("solve"),
            case=square_case(rhs=True), dtypes=FLOATS, grad=True,
            bad=(Case([A(2, 2), A(3)]), Case([A(2, 3), A(2)]))),
        # NumPy reads one triangle of the input; kiln's gradient is the symmetric one (the
        # PyTorch/JAX convention). The oracle symmetrizes its input, so finite differences
        # of single entries see the symmetric derivative; on the (symmetric) inputs drawn
        # here the values are exactly NumPy's cholesky.
        Row("cholesky", numpy=lambda a, upper=False: np.linalg.cholesky(symmetric(a), upper=upper),
            via_op=lambda a, upper=False: F.cholesky(a, upper=upper),
            case=square_case(spd=True, upper=True), dtypes=FLOATS, grad=True,
            alts=(lambda a, upper=False: np.linalg.cholesky(a, upper=upper),),
            bad=SQUARE_BAD),
    ]


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
        if kind == "array" and not (unique and arrays):
            if unique:
                n = min(ishape[0], d)
                entries.append(ctx.rng.permutation(d)[:n] - (d if ctx.boolean("neg") else 0))
            elif d:
                entries.append(ctx.rng.integers(-d, d, size=ishape))
            else:
                entries.append(np.zeros((0,), np.intp))
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
            keep = ctx.integer(0, len(target), "value dims")
            vshape = tuple(1 if ctx.boolean("unit") else d for d in target[len(target) - keep:])
            value = ctx.arg(vshape)
        return Case([x, index, value])
    return case


def index_put_reference(x, index, value):
    out = np.array(x, copy=True)
    out[index] = value
    return out


def index_add_reference(x, index, value):
    out = np.array(x, copy=True)
    np.add.at(out, index, value)
    return out


def take_case(ctx: Ctx) -> Case:
    shape = ctx.shape()
    nd = len(shape)
    axis = ctx.choice([None] + list(range(-nd, nd)), "axis")
    n = int(np.prod(shape)) if axis is None else shape[axis]
    ishape = ctx.shape(max_dims=2) if n else (0,)
    indices = ctx.rng.integers(-n, n, size=ishape) if n else np.zeros(ishape, np.int64)
    return Case([ctx.arg(shape), index_arg(indices, ctx.layout(len(ishape)))], {"axis": axis})


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
        Row("take", numpy=np.take, via_op=lambda x, i, axis=None: F.take(
                x, i, axis=None if axis is None else normalize_axis_index(axis, x.ndim)),
            case=take_case, dtypes=ALL, grad=True, alts=(lambda x, i, axis=None: x.take(i, axis=axis),),
            bad=(Case([A(2, 3), index_arg(np.array([3]))], {"axis": 1}),
                 Case([A(2, 3), index_arg(np.array([0]))], {"axis": 2}, traced=False),
                 Case([A(2, 0), index_arg(np.array([0]))], {"axis": 1}))),
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
                fshape = out[len(out) - ctx.integer(0, len(out), "fill dims"):]
                args.append(ctx.arg(tuple(1 if ctx.boolean("unit") else d for d in fshape)))
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
        fshape = shape[len(shape) - ctx.integer(0, len(shape), "fill dims"):]
        fill: Any = ctx.arg(tuple(1 if ctx.boolean("unit") else d for d in fshape))
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
        Row("copy", numpy=np.copy, via_op=getattr_op("copy"), case=unary_case(), dtypes=ALL,
            grad=True, alts=(lambda x: x.copy(),)),
    ]


# ==========================================================================================
# Mutation: the NumPy spelling writes into a fresh copy of input 0 and returns it

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


def suffix_shape(ctx: Ctx, shape: tuple) -> tuple:
    """A shape that broadcasts to ``shape``: a suffix of it with some dims set to 1."""
    kept = shape[len(shape) - ctx.integer(0, len(shape), "dims"):]
    return tuple(1 if ctx.boolean("unit") else d for d in kept)


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
        Row("add_at", numpy=add_at_spelling, mutates=True,
            via_op=lambda x, index, value: (F.add_at(x, index, value), x)[1],
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

def via_spelling(key: Any) -> Callable:
    """Call the op kiln's normalizer for this NumPy spelling chooses (on traced values, the
    normalizer's own reshapes record too)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        bound = kiln.ops.lookup(key).bind(*args, **kwargs)
        return bound.op(*bound.inputs, **bound.params)
    return call


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
        Row("copy", numpy=np.ascontiguousarray, via_op=via_spelling(np.ascontiguousarray),
            tensor=spelled(np.ascontiguousarray), name="copy[ascontiguousarray]", **unary),
        Row("eye", numpy=lambda n, dtype: np.identity(n, dtype=dtype),
            tensor=lambda n, dtype: spelled(np.identity)(n, dtype=dtype),
            via_op=lambda n, dtype: via_spelling(np.identity)(n, dtype=dtype), name="eye[identity]",
            case=lambda ctx: Case([], {"n": ctx.integer(0, 4, "n"), "dtype": ctx.dtype}),
            dtypes=ALL, grad=False),
    ]


# ==========================================================================================
# The table

ROWS: list[Row] = (pointwise_rows() + reduction_rows() + linalg_rows() + indexing_rows()
                   + join_rows() + creation_rows() + mutation_rows() + shape_rows()
                   + spelling_rows())

# Ops that cannot be a row of this table, and why; each is tested on its own.
NOT_ROWS: dict[str, str] = {
    "getitem_mask": "x[mask]: the result's length is the number of True values, so it runs "
                    "eagerly only and cannot be traced (test_boolean_mask_indexing)",
}
