"""Op-table rows: pointwise ops (ufuncs, where, clip, astype) and broadcast_to/sum_to."""

from __future__ import annotations

import operator
from typing import Callable

import numpy as np

from kiln.ops import REGISTRY, F
from kiln.ops.registry import Bound
from kiln.tensor import apply

from .gen import (ALL, BOOL, COMPLEX, EXPONENT, F32, F64, FLOATS, GT1, I64, INTEGRAL, NONZERO, NUMERIC,
                  OFF_INT, POS, REAL, SHIFT, SMALL, UNIT, Arg, Case, Ctx, Domain, index_arg)
from .spec import A, Row, getattr_op, scalar_of, unary_case, via_spelling


# ==========================================================================================
# Case builders

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


def masked_case(ufunc: str, *domains: Domain):
    """ufunc(*xs, out=fallback, where=mask) (kiln/ops/masked.py): mask, fallback, xs."""
    def case(ctx: Ctx) -> Case:
        sc, sf, *sxs = ctx.broadcast_shapes(2 + len(domains))
        cond = index_arg(ctx.rng.random(sc) < 0.5, ctx.layout(len(sc)) if not ctx.grad else "C")
        xs = [ctx.arg(s, d) for s, d in zip(sxs, domains)]
        return Case([cond, ctx.arg(sf), *xs], {"ufunc": ufunc})
    return case


def masked_numpy(mask, fallback, *xs, ufunc):
    # the value by another route: where of the ufunc computed everywhere
    with np.errstate(all="ignore"):
        return np.where(mask, REGISTRY[ufunc].ufunc(*xs), fallback)


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


def sliding_case(ctx: Ctx) -> Case:
    shape = ctx.shape(min_dims=1, min_side=1)
    axis = ctx.integer(0, len(shape) - 1, "axis")
    window = ctx.integer(1, shape[axis], "window") if shape[axis] else 0
    return Case([ctx.arg(shape)], {"window_shape": (window,), "axis": (axis,)})


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
# Rows

def ufunc_row(name: str, case: Callable, dtypes: tuple, grad: bool, alts: tuple = (),
              bad: tuple = ()) -> Row:
    ufunc = getattr(np, name)
    return Row(name, numpy=ufunc, via_op=getattr_op(name), case=case, dtypes=dtypes, grad=grad,
               alts=alts, bad=bad)


# name: (domain, gradient domain or None, dtypes, differentiable)
UNARY = {
    "negative": (REAL, None, ALL + COMPLEX, True),
    "positive": (REAL, None, NUMERIC, True),
    "absolute": (REAL, NONZERO, ALL + COMPLEX, True),
    "sign": (REAL, NONZERO, NUMERIC, True),
    "exp": (SMALL, None, NUMERIC + COMPLEX, True),
    "exp2": (SMALL, None, NUMERIC, True),
    "expm1": (SMALL, None, NUMERIC, True),
    "log": (POS, None, NUMERIC + COMPLEX, True),
    "log2": (POS, None, NUMERIC, True),
    "log10": (POS, None, NUMERIC, True),
    "log1p": (Domain(-0.6, 3.0, 0, 5), None, NUMERIC, True),
    "sqrt": (POS, None, NUMERIC + COMPLEX, True),
    "cbrt": (REAL, NONZERO, NUMERIC, True),
    "square": (REAL, None, ALL + COMPLEX, True),
    "reciprocal": (NONZERO, None, NUMERIC + COMPLEX, True),
    "sin": (REAL, None, ALL + COMPLEX, True),
    "cos": (REAL, None, NUMERIC + COMPLEX, True),
    "tan": (Domain(-1.2, 1.2, -1, 1), None, NUMERIC, True),
    "arcsin": (UNIT, None, NUMERIC, True),
    "arccos": (UNIT, None, NUMERIC, True),
    "arctan": (REAL, None, NUMERIC, True),
    "sinh": (SMALL, None, NUMERIC, True),
    "cosh": (SMALL, None, NUMERIC, True),
    "tanh": (REAL, None, NUMERIC + COMPLEX, True),
    "arcsinh": (REAL, None, NUMERIC, True),
    "arccosh": (GT1, None, NUMERIC, True),
    "arctanh": (UNIT, None, FLOATS, True),
    "floor": (OFF_INT, None, ALL, True),
    "ceil": (OFF_INT, None, NUMERIC, True),
    "trunc": (OFF_INT, None, NUMERIC, True),
    "rint": (OFF_INT, None, NUMERIC, True),
    "logical_not": (REAL, None, ALL, False),
    "isnan": (REAL, None, ALL + COMPLEX, False),
    "isinf": (REAL, None, NUMERIC, False),
    "isfinite": (REAL, None, NUMERIC + COMPLEX, False),
    "signbit": (REAL, None, NUMERIC, False),
    "invert": (REAL, None, INTEGRAL, False),
    "fabs": (REAL, NONZERO, NUMERIC, True),
    "deg2rad": (REAL, None, NUMERIC, True),
    "radians": (REAL, None, NUMERIC, True),
    "rad2deg": (REAL, None, NUMERIC, True),
    "degrees": (REAL, None, NUMERIC, True),
    "spacing": (REAL, NONZERO, NUMERIC, True),
}


UNARY_OPERATORS = {"negative": operator.neg, "positive": operator.pos, "absolute": abs,
                   "invert": operator.invert}


QUOTIENT = dict(dy=NONZERO, relate=off_integer_quotient)


# name: (case, dtypes, differentiable)
BINARY = {
    "add": (binary_case(), ALL + COMPLEX, True),
    "subtract": (binary_case(), NUMERIC + COMPLEX, True),
    "multiply": (binary_case(), ALL + COMPLEX, True),
    "true_divide": (binary_case(dy=NONZERO), NUMERIC + COMPLEX, True),
    "floor_divide": (binary_case(**QUOTIENT), NUMERIC, True),
    "remainder": (binary_case(**QUOTIENT), NUMERIC, True),
    "fmod": (binary_case(**QUOTIENT), NUMERIC, True),
    "power": (binary_case(SMALL, EXPONENT, grad_dx=POS), NUMERIC + COMPLEX, True),
    "maximum": (binary_case(), ALL, True),
    "minimum": (binary_case(), ALL, True),
    "fmax": (binary_case(), NUMERIC, True),
    "fmin": (binary_case(), NUMERIC, True),
    "arctan2": (binary_case(REAL, REAL, grad_dx=NONZERO, grad_dy=NONZERO), NUMERIC, True),
    "hypot": (binary_case(REAL, REAL, grad_dx=NONZERO, grad_dy=NONZERO), NUMERIC, True),
    "logaddexp": (binary_case(), NUMERIC, True),
    "copysign": (binary_case(REAL, REAL, grad_dx=NONZERO, grad_dy=NONZERO), NUMERIC, True),
    "equal": (binary_case(Domain(-2, 2, -2, 2), Domain(-2, 2, -2, 2)), ALL + COMPLEX, False),
    "not_equal": (binary_case(), ALL + COMPLEX, False),
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
    "float_power": (binary_case(SMALL, EXPONENT, grad_dx=POS), NUMERIC, True),
    "logaddexp2": (binary_case(), NUMERIC, True),
    "heaviside": (binary_case(REAL, REAL, grad_dx=NONZERO), NUMERIC, True),
    "nextafter": (binary_case(), NUMERIC, True),
    "gcd": (binary_case(SHIFT, SHIFT), (I64,), False),
    "lcm": (binary_case(SHIFT, SHIFT), (I64,), False),
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


def ldexp_case(ctx: Ctx) -> Case:
    sx, sy = ctx.broadcast_shapes(2)
    return Case([ctx.arg(sx), index_arg(ctx.rng.integers(-3, 4, size=sy))])


def pair_case(nin: int) -> Callable:
    """The two-output ufuncs (divmod, modf, frexp): x away from integers for divmod's jumps."""
    def case(ctx: Ctx) -> Case:
        if nin == 1:
            return Case([ctx.arg(ctx.shape(), OFF_INT if ctx.grad else REAL)])
        return binary_case(**QUOTIENT)(ctx)
    return case


def ufunc_pair_rows() -> list[Row]:
    """The ufuncs with two outputs: composites of one op per output."""
    def row(op, ufunc, nin, grad):
        return Row(op, numpy=ufunc, via_op=via_spelling(ufunc), case=pair_case(nin),
                   dtypes=NUMERIC, grad=grad, composite=True, name=ufunc.__name__)
    return [row("floor_divide", np.divmod, 2, True), row("trunc", np.modf, 1, True),
            row("frexp_mantissa", np.frexp, 1, True)]


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
    rows += ufunc_pair_rows() + [
        Row("ldexp", numpy=np.ldexp, via_op=getattr_op("ldexp"), case=ldexp_case, dtypes=FLOATS,
            grad=True),
        Row("frexp_exponent", numpy=lambda x: np.frexp(x)[1], via_op=getattr_op("frexp_exponent"),
            case=unary_case(), dtypes=NUMERIC),
        Row("where", numpy=np.where, via_op=getattr_op("where"), case=where_case,
            dtypes=ALL, grad=True,
            bad=(Case([index_arg(np.ones(3, bool)), A(4), A(3)]),)),
        Row("scalar_binary", numpy=lambda x, y, ufunc: REGISTRY[ufunc].ufunc(x, y),
            case=lambda ctx: Case(binary_case()(ctx).args, {"ufunc": "multiply"}), grad=True,
            via_op=lambda x, y, ufunc: F.scalar_binary(x, y, ufunc=ufunc)),
        Row("masked_unary", numpy=masked_numpy, case=masked_case("log", POS), grad=True,
            via_op=lambda m, fb, x, ufunc: F.masked_unary(m, fb, x, ufunc=ufunc)),
        Row("masked_binary", numpy=masked_numpy, case=masked_case("true_divide", REAL, NONZERO),
            grad=True, via_op=lambda m, fb, x, y, ufunc: F.masked_binary(m, fb, x, y, ufunc=ufunc)),
        Row("clip", numpy=np.clip, via_op=getattr_op("clip"), case=clip_case, dtypes=NUMERIC,
            grad=True, alts=(lambda x, lo, hi: x.clip(lo, hi),)),
        Row("astype", numpy=lambda x, dtype: x.astype(dtype),
            via_op=lambda x, dtype: F.astype(x, dtype=np.dtype(dtype)), case=astype_case,
            dtypes=ALL, grad=True),
        Row("sum_to", numpy=sum_to_reference, via_op=lambda x, shape: F.sum_to(x, shape=shape),
            tensor=lambda x, shape: apply(Bound(REGISTRY["sum_to"], (x,), {"shape": shape})),
            case=sum_to_case, dtypes=NUMERIC, grad=True),
        Row("sliding_window_view", numpy=np.lib.stride_tricks.sliding_window_view,
            via_op=lambda x, window_shape, axis: F.sliding_window_view(x, window_shape=window_shape, axis=axis),
            case=sliding_case, dtypes=ALL, grad=True, bad=(Case([A(3)], {"window_shape": (4,), "axis": (0,)}),)),
        Row("broadcast_to", numpy=np.broadcast_to,
            via_op=lambda x, shape: F.broadcast_to(x, shape=shape), case=broadcast_to_case,
            dtypes=ALL, grad=True,
            bad=(Case([A(3), (4,)]), Case([A(2, 3), (3, 2)]))),
        Row("broadcast_arrays_view", numpy=lambda x, shape: np.broadcast_arrays(x, np.empty(shape, bool))[0],
            via_op=lambda x, shape: F.broadcast_arrays_view(x, shape=shape), case=broadcast_to_case,
            dtypes=ALL, grad=True,
            bad=(Case([A(3), (4,)]), Case([A(2, 3), (3, 2)]))),
    ]
    return rows
