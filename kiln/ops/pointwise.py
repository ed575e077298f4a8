"""Pointwise ops: NumPy's ufuncs, plus where, clip and astype (the ufuncs with two
outputs: ufunc_pairs.py).

Each row of the tables below is one op: its ufunc (the eager kernel, and the NumPy
spellings ``np.<name>``, operators and ufunc methods map to it) and its derivative rule,
written with other ops. ``g`` is the cotangent of the output, ``out`` the output.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from .meta import (as_array, integer_power_raises, pointwise_meta_for, python_int_overflow, reject, reject_where,
                   TensorMeta, shape_of, dtype_token, to_fake)
from .masked import masked_call
from .scalar_paths import clip_keeping_ties, power_runtime_scalar, power_scalar_exponent_selects
from .ufunc_casting import typed_ufunc_call
from .scalar_math import OPERATORS as SCALAR_OPERATORS
from .scalar_math import complex_scalar_comparison, scalar_math, uses_scalar_math
from .registry import (REGISTRY, Bound, Category, Composite, F, N, Op, declare, is_complex_like,
                       is_float_like,
                       spell, spell_composite, ufunc_method_key)

LN2 = math.log(2.0)
LN10 = math.log(10.0)


def _zero(g: Any, x: Any) -> Any:
    return F.zeros_like(x) if hasattr(x, "shape") else None


def conj(v: Any) -> Any:
    """conj(v) for a complex value, v itself otherwise: the derivative rules of the ops with
    ``complex_grad`` multiply by conj(f'(z)), and a real graph gains no op."""
    if isinstance(v, complex):
        return v.conjugate()
    return F.conjugate(v) if is_complex_like(v) else v


def _absolute_vjp(g, out, x):
    if is_complex_like(x):   # d|z| = Re(conj(z/|z|) dz): the gradient g z/|z| (0 at 0)
        return (F.multiply(g, F.true_divide(x, F.where(F.equal(out, 0), 1.0, out))),)
    return (F.multiply(g, F.sign(x)),)


# ---- unary: name -> (ufunc, vjp(g, out, x)) -----------------------------------------------
UNARY: dict[str, tuple[np.ufunc, Callable | None]] = {
    "negative": (np.negative, lambda g, out, x: (F.negative(g),)),
    "positive": (np.positive, lambda g, out, x: (g,)),
    "absolute": (np.absolute, _absolute_vjp),
    "sign": (np.sign, lambda g, out, x: (_zero(g, x),)),
    "exp": (np.exp, lambda g, out, x: (F.multiply(g, conj(out)),)),
    "exp2": (np.exp2, lambda g, out, x: (F.multiply(g, F.multiply(out, LN2)),)),
    "expm1": (np.expm1, lambda g, out, x: (F.multiply(g, F.add(out, 1.0)),)),
    "log": (np.log, lambda g, out, x: (F.true_divide(g, conj(x)),)),
    "log2": (np.log2, lambda g, out, x: (F.true_divide(g, F.multiply(x, LN2)),)),
    "log10": (np.log10, lambda g, out, x: (F.true_divide(g, F.multiply(x, LN10)),)),
    "log1p": (np.log1p, lambda g, out, x: (F.true_divide(g, F.add(x, 1.0)),)),
    "sqrt": (np.sqrt, lambda g, out, x: (F.true_divide(g, conj(F.multiply(out, 2.0))),)),
    "cbrt": (np.cbrt, lambda g, out, x: (F.true_divide(g, F.multiply(F.square(out), 3.0)),)),
    "square": (np.square, lambda g, out, x: (F.multiply(g, conj(F.multiply(x, 2.0))),)),
    "reciprocal": (np.reciprocal, lambda g, out, x: (F.negative(F.multiply(g, conj(F.square(out)))),)),
    "sin": (np.sin, lambda g, out, x: (F.multiply(g, conj(F.cos(x))),)),
    "cos": (np.cos, lambda g, out, x: (F.negative(F.multiply(g, conj(F.sin(x)))),)),
    "tan": (np.tan, lambda g, out, x: (F.multiply(g, conj(F.add(F.square(out), 1.0))),)),
    "arcsin": (np.arcsin, lambda g, out, x: (F.true_divide(g, F.sqrt(F.subtract(1.0, F.square(x)))),)),
    "arccos": (np.arccos, lambda g, out, x: (F.negative(F.true_divide(g, F.sqrt(F.subtract(1.0, F.square(x))))),)),
    "arctan": (np.arctan, lambda g, out, x: (F.true_divide(g, F.add(F.square(x), 1.0)),)),
    "sinh": (np.sinh, lambda g, out, x: (F.multiply(g, conj(F.cosh(x))),)),
    "cosh": (np.cosh, lambda g, out, x: (F.multiply(g, conj(F.sinh(x))),)),
    "tanh": (np.tanh, lambda g, out, x: (F.multiply(g, conj(F.subtract(1.0, F.square(out)))),)),
    "arcsinh": (np.arcsinh, lambda g, out, x: (F.true_divide(g, F.sqrt(F.add(F.square(x), 1.0))),)),
    "arccosh": (np.arccosh, lambda g, out, x: (F.true_divide(g, F.sqrt(F.subtract(F.square(x), 1.0))),)),
    "arctanh": (np.arctanh, lambda g, out, x: (F.true_divide(g, F.subtract(1.0, F.square(x))),)),
    "floor": (np.floor, lambda g, out, x: (_zero(g, x),)),
    "ceil": (np.ceil, lambda g, out, x: (_zero(g, x),)),
    "trunc": (np.trunc, lambda g, out, x: (_zero(g, x),)),
    "rint": (np.rint, lambda g, out, x: (_zero(g, x),)),
    "logical_not": (np.logical_not, None),
    "isnan": (np.isnan, None),
    "isinf": (np.isinf, None),
    "isfinite": (np.isfinite, None),
    "signbit": (np.signbit, None),
    "invert": (np.invert, None),
    "fabs": (np.fabs, lambda g, out, x: (F.multiply(g, F.sign(x)),)),
    "deg2rad": (np.deg2rad, lambda g, out, x: (F.multiply(g, math.pi / 180.0),)),
    "radians": (np.radians, lambda g, out, x: (F.multiply(g, math.pi / 180.0),)),
    "rad2deg": (np.rad2deg, lambda g, out, x: (F.multiply(g, 180.0 / math.pi),)),
    "degrees": (np.degrees, lambda g, out, x: (F.multiply(g, 180.0 / math.pi),)),
    # spacing(x) is a step function of x (the ulp at x): its derivative is 0 almost everywhere
    "spacing": (np.spacing, lambda g, out, x: (_zero(g, x),)),
}


def _number(value) -> bool:
    """A Python or NumPy scalar: a constant of the derivative (only Tensors get gradients),
    so a rule need not read the other operand for it (which may have been overwritten)."""
    return isinstance(value, (bool, int, float, np.generic))


def _extremum_side(g, a, b, wins, loses):
    """Cotangent of ``a`` in maximum/minimum(a, b) (``wins(a, b)``: a is the result).

    Ties split the gradient evenly, as PyTorch does; a NaN input gets the whole gradient
    (NumPy propagates it). Sides that cannot carry a gradient cost nothing: relu's 0.
    """
    if not is_float_like(a):
        return None
    if isinstance(b, (bool, int, np.integer)) or isinstance(b, (float, np.floating)) and not np.isnan(b):
        # b is a number, never NaN: a NaN a compares unordered, so it falls through to g.
        return F.where(loses(a, b), 0.0, F.where(F.equal(a, b), F.multiply(g, 0.5), g))
    return F.where(F.isnan(a), g, F.where(wins(a, b), g,
                                          F.where(F.equal(a, b), F.multiply(g, 0.5), 0.0)))


def _maximum_vjp(g, out, x, y):
    return (_extremum_side(g, x, y, F.greater, F.less),
            _extremum_side(g, y, x, F.greater, F.less))


def _minimum_vjp(g, out, x, y):
    return (_extremum_side(g, x, y, F.less, F.greater),
            _extremum_side(g, y, x, F.less, F.greater))


def _fmax_vjp(g, out, x, y):
    # fmax ignores NaN: the non-NaN side gets the gradient.
    gx = F.where(F.greater(x, y), g, F.where(F.equal(x, y), F.multiply(g, 0.5), 0.0))
    gy = F.where(F.less(x, y), g, F.where(F.equal(x, y), F.multiply(g, 0.5), 0.0))
    return F.where(F.isnan(y), g, gx), F.where(F.isnan(x), g, gy)


def _fmin_vjp(g, out, x, y):
    gx = F.where(F.less(x, y), g, F.where(F.equal(x, y), F.multiply(g, 0.5), 0.0))
    gy = F.where(F.greater(x, y), g, F.where(F.equal(x, y), F.multiply(g, 0.5), 0.0))
    return F.where(F.isnan(y), g, gx), F.where(F.isnan(x), g, gy)


def _power_vjp(g, out, x, y):
    # (complex values: conj of the derivative, Op.complex_grad; log is the principal
    # branch, NumPy's x ** y = exp(y log x))
    gx = F.multiply(g, conj(_power_slope(x, y))) if is_float_like(x) or is_complex_like(x) else None
    if not (is_float_like(y) or is_complex_like(y)):
        return gx, None
    # d/dy x**y = x**y * log(x); at x == 0 (y > 0) the limit is 0, not nan.
    safe_log = F.log(F.where(F.equal(x, 0), 1.0, x))
    gy = F.multiply(g, conj(F.multiply(out, safe_log)))
    return gx, gy


def _power_slope(x, y):
    """d/dx x**y = y * x**(y-1), and 0 where y == 0 (x**0 is constant; the formula gives
    0 * 0**-1 = nan at x == 0, as in np.vander(x)'s last column): JAX's and PyTorch's rule."""
    slope = F.multiply(y, F.power(x, F.subtract(y, 1)))
    if isinstance(y, (int, float, complex, np.generic, np.ndarray)) and np.all(np.asarray(y) != 0):
        return slope     # a known exponent with no zero (x ** 2): nothing to mask
    return F.where(F.equal(y, 0), 0.0, slope)


def _hypot_vjp(g, out, x, y):
    safe = F.where(F.equal(out, 0), 1.0, out)
    return F.multiply(g, F.true_divide(x, safe)), F.multiply(g, F.true_divide(y, safe))


def _arctan2_vjp(g, out, y, x):
    denom = F.add(F.square(x), F.square(y))
    return F.multiply(g, F.true_divide(x, denom)), F.negative(F.multiply(g, F.true_divide(y, denom)))


# ---- binary: name -> (ufunc, vjp(g, out, x, y)) -------------------------------------------
BINARY: dict[str, tuple[np.ufunc, Callable | None]] = {
    "add": (np.add, lambda g, out, x, y: (g, g)),
    "subtract": (np.subtract, lambda g, out, x, y: (g, F.negative(g))),
    "multiply": (np.multiply, lambda g, out, x, y: (None if _number(x) else F.multiply(g, conj(y)),
                                                    None if _number(y) else F.multiply(g, conj(x)))),
    "true_divide": (np.true_divide, lambda g, out, x, y: (
        F.true_divide(g, conj(y)), F.negative(F.multiply(g, conj(F.true_divide(out, y)))))),
    "floor_divide": (np.floor_divide, lambda g, out, x, y: (_zero(g, x), _zero(g, y))),
    "remainder": (np.remainder, lambda g, out, x, y: (
        g, F.negative(F.multiply(g, F.floor_divide(x, y))))),
    "fmod": (np.fmod, lambda g, out, x, y: (
        g, F.negative(F.multiply(g, F.trunc(F.true_divide(x, y)))))),
    "power": (np.power, _power_vjp),
    "maximum": (np.maximum, _maximum_vjp),
    "minimum": (np.minimum, _minimum_vjp),
    "fmax": (np.fmax, _fmax_vjp),
    "fmin": (np.fmin, _fmin_vjp),
    "arctan2": (np.arctan2, _arctan2_vjp),
    "hypot": (np.hypot, _hypot_vjp),
    # d/dx = exp(x - out) = sigmoid(x - y): one exp, without out (a fused backward then
    # recomputes no logaddexp: logistic regression's gradient 1.2x NumPy's time -> below)
    "logaddexp": (np.logaddexp, lambda g, out, x, y: (
        F.true_divide(g, F.add(1.0, F.exp(F.subtract(y, x)))),
        F.true_divide(g, F.add(1.0, F.exp(F.subtract(x, y)))))),
    "copysign": (np.copysign, lambda g, out, x, y: (
        F.multiply(g, F.multiply(F.sign(x), F.where(F.signbit(out), -1.0, 1.0))), _zero(g, y))),
    "equal": (np.equal, None),
    "not_equal": (np.not_equal, None),
    "less": (np.less, None),
    "less_equal": (np.less_equal, None),
    "greater": (np.greater, None),
    "greater_equal": (np.greater_equal, None),
    "logical_and": (np.logical_and, None),
    "logical_or": (np.logical_or, None),
    "logical_xor": (np.logical_xor, None),
    "bitwise_and": (np.bitwise_and, None),
    "bitwise_or": (np.bitwise_or, None),
    "bitwise_xor": (np.bitwise_xor, None),
    "left_shift": (np.left_shift, None),
    "right_shift": (np.right_shift, None),
    "float_power": (np.float_power, _power_vjp),
    "logaddexp2": (np.logaddexp2, lambda g, out, x, y: (
        F.multiply(g, F.exp2(F.subtract(x, out))), F.multiply(g, F.exp2(F.subtract(y, out))))),
    # 0 for x < 0, 1 for x > 0, h0 at x == 0: only h0 carries a gradient
    "heaviside": (np.heaviside, lambda g, out, x, y: (
        _zero(g, x), F.where(F.equal(x, 0), g, 0.0))),
    # nextafter(x, y) is x moved by one ulp: the derivative of x's (as for rint and floor, 0
    # would be the step function's; the identity is what the value follows)
    "nextafter": (np.nextafter, lambda g, out, x, y: (g, _zero(g, y))),
    "ldexp": (np.ldexp, lambda g, out, x, y: (F.ldexp(g, y), None)),
    "gcd": (np.gcd, None),
    "lcm": (np.lcm, None),
}

# Python operators that NumPy routes to these ufuncs (capture maps BINARY_OP through them).
OPERATORS = {
    "add": (operator.add, operator.iadd), "subtract": (operator.sub, operator.isub),
    "multiply": (operator.mul, operator.imul), "true_divide": (operator.truediv, operator.itruediv),
    "floor_divide": (operator.floordiv, operator.ifloordiv), "remainder": (operator.mod, operator.imod),
    "power": (operator.pow, operator.ipow), "bitwise_and": (operator.and_, operator.iand),
    "bitwise_or": (operator.or_, operator.ior), "bitwise_xor": (operator.xor, operator.ixor),
    "left_shift": (operator.lshift, operator.ilshift), "right_shift": (operator.rshift, operator.irshift),
    "equal": (operator.eq, None), "not_equal": (operator.ne, None), "less": (operator.lt, None),
    "less_equal": (operator.le, None), "greater": (operator.gt, None), "greater_equal": (operator.ge, None),
    "negative": (operator.neg, None), "positive": (operator.pos, None), "absolute": (abs, None),
    "invert": (operator.invert, None),
}

UFUNC_KWARGS = ("out", "where", "casting", "order", "dtype", "subok", "signature")


def ufunc_normalizer(op: Op, ufunc: np.ufunc, in_place_first: bool = False,
                     operator_form: bool = False) -> Callable[..., Bound]:
    """Normalize ``ufunc(*args, out=..., where=..., ...)`` into a call of ``op``
    (``operator_form``: the Python operator, which is NumPy's scalar math on NumPy
    scalars: kiln/ops/scalar_math.py)."""

    def normalize(*args: Any, **kwargs: Any) -> Bound:
        if operator_form and not in_place_first and len(args) == 2 and not kwargs:
            if op.name in SCALAR_OPERATORS and uses_scalar_math(*args) \
                    or complex_scalar_comparison(op.name, *args):
                return scalar_math(op.name, *args)
        if operator_form and len(args) == 1 and not kwargs and uses_scalar_math(args[0], 0):
            return scalar_math(op.name, args[0])   # -x, abs(x): checked like x - y
        name = f"numpy.{ufunc.__name__}"
        out = kwargs.pop("out", None)
        if len(args) == ufunc.nin + 1 and out is None:
            *args, out = args
        if len(args) != ufunc.nin:
            raise TypeError(f"{ufunc.__name__}() takes from {ufunc.nin} to {ufunc.nin + 1} "
                            f"positional arguments but {len(args)} were given")
        where = kwargs.pop("where", True)
        dtype, casting = kwargs.pop("dtype", None), kwargs.pop("casting", "same_kind")
        if out is None or where is True or where is np._NoValue:
            reject_where(where, name)   # without out=, NumPy leaves the masked-off elements unset
            where = True
        for key, value in kwargs.items():
            if key == "order" and value in ("K", "A"):
                continue
            if key in ("signature", "subok") and value is None or (key == "subok" and value is True):
                continue
            if key not in UFUNC_KWARGS:
                raise TypeError(f"{ufunc.__name__}() got an unexpected keyword argument '{key}'")
            reject(name, key, value, "compute the result without it (e.g. call .astype(...) on "
                                      "the inputs), or call the function without kiln")
        if isinstance(out, tuple):
            if len(out) != 1:
                raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")
            out = out[0]
        if in_place_first:
            out = args[0]
        if dtype is not None or casting != "same_kind":
            if where is not True:
                reject(name, "dtype" if dtype is not None else "casting",
                       dtype if dtype is not None else casting,
                       "call .astype(...) on the inputs instead, or call the function without kiln")
            return typed_ufunc_call(op, ufunc, tuple(args), dtype, casting, out)
        if where is not True:   # ufunc(..., out=o, where=m): o keeps its values where m is False
            return Composite(masked_call(op.name, ufunc.nin), tuple(args) + (where, out), {}, out,
                             out_broadcasts=True)
        return Bound(op, tuple(args), {}, out)

    return normalize


def _power_operator(op: Op, ufunc: np.ufunc, in_place_first: bool = False,
                    operator_form: bool = True) -> Callable[..., Bound]:
    """``x ** y`` / ``x **= y``: ndarray.__pow__ takes np.square for an exact Python int 2,
    and on inexact arrays np.reciprocal for -1 and np.sqrt for a Python float 0.5 (NumPy's
    fast_scalar_power). That changes the result on a bool array (square gives int8, power
    int64; ``m **= 2`` then raises NumPy's casting error) and on a complex one (power's
    complex loop rounds otherwise: ``z ** 2`` is not ``np.power(z, 2)`` to the last bit),
    and on a float one the warnings' names: ``x ** 0.5`` of a negative float is NumPy's
    "invalid value encountered in sqrt", ``x ** -1`` of a zero "... in reciprocal", an
    overflowing ``x ** 2`` "... in square" (fuzzer seed 45958). Integer arrays keep power
    (the same values, no warnings); a NumPy scalar's ``**`` is power."""
    normal = ufunc_normalizer(op, ufunc, in_place_first, operator_form)
    fast = {(int, 2): ("square", "bfc"), (int, -1): ("reciprocal", "fc"), (float, 0.5): ("sqrt", "fc")}

    def normalize(*args: Any, **kwargs: Any) -> Bound:
        bound = normal(*args, **kwargs)
        if bound.op is not op:   # NumPy scalars: scalar math (kiln/ops/scalar_math.py)
            return bound
        x, y = bound.inputs
        name, kinds = fast.get((type(y), y), (None, ""))
        if name is not None and isinstance(x, TensorMeta) and x.dtype.kind in kinds \
                and not getattr(x, "numpy_scalar", False):
            return Bound(REGISTRY[name], (x,), {}, bound.out)
        return bound

    return normalize


def _declare_ufunc(name: str, ufunc: np.ufunc, vjp: Callable | None) -> Op:
    inputs = ("x",) if ufunc.nin == 1 else ("x", "y")
    op = declare(name, Category.POINTWISE, ufunc, inputs=inputs, meta=pointwise_meta_for(ufunc),
                 vjp=vjp, doc=f"numpy.{ufunc.__name__}, elementwise",
                 raises_for=integer_power_raises(ufunc) if name == "power" else python_int_overflow(ufunc))
    op.ufunc = ufunc
    spell(ufunc, op, ufunc_normalizer(op, ufunc), f"numpy.{ufunc.__name__}")
    fn, inplace = OPERATORS.get(name, (None, None))
    normalizer = _power_operator if name == "power" else ufunc_normalizer
    if fn is not None:
        spell(fn, op, normalizer(op, ufunc, operator_form=True), f"operator.{getattr(fn, '__name__', name)}")
    if inplace is not None:
        spell(inplace, op, normalizer(op, ufunc, in_place_first=True),
              f"operator.{inplace.__name__}")
    return op


for _name, (_ufunc, _vjp) in UNARY.items():
    _declare_ufunc(_name, _ufunc, _vjp)
for _name, (_ufunc, _vjp) in BINARY.items():
    _declare_ufunc(_name, _ufunc, _vjp)


def _outer_normalizer(op: Op, ufunc: np.ufunc) -> Callable[..., Composite]:
    """``ufunc.outer(a, b)``: the ufunc of ``a`` with ``ndim(b)`` new trailing axes and ``b``."""
    name = f"numpy.{ufunc.__name__}.outer"

    def outer(a: Any, b: Any) -> Any:
        # (made arrays here, in the graph: ``[c, s]`` of values computed in the function
        # is their stack, as np.asarray makes it)
        a, b = (v if hasattr(v, "shape") else N.asarray(v) for v in (a, b))
        return op(F.reshape(a, shape=tuple(shape_of(a)) + (1,) * len(shape_of(b))), b)

    def normalize(a: Any, b: Any, out: Any = None, **kwargs: Any) -> Composite:
        for key, value in kwargs.items():
            reject(name, key, value, "compute the result without it, or call it without kiln")
        return Composite(outer, (a, b), {}, out[0] if isinstance(out, tuple) else out, out_broadcasts=True)
    return normalize


for _name, (_ufunc, _vjp) in BINARY.items():
    spell_composite(ufunc_method_key(_ufunc, "outer"), (_name, "reshape"),
                    _outer_normalizer(F.__getattr__(_name), _ufunc), f"numpy.{_ufunc.__name__}.outer")


# ---- where, clip, astype ------------------------------------------------------------------

def _where_meta(condition, x, y):
    try:
        shape = np.broadcast_shapes(shape_of(condition), shape_of(x), shape_of(y))
    except ValueError:
        np.where(*to_fake((condition, x, y)))  # NumPy's own message
        raise
    # (Python numbers are weak, NEP 50: np.where(m, 1j, float32) is complex64)
    dtype = np.result_type(dtype_token(x) if not isinstance(x, (int, float, complex)) else x,
                           dtype_token(y) if not isinstance(y, (int, float, complex)) else y)
    return TensorMeta(shape, dtype)


def _where_vjp(g, out, condition, x, y):
    return None, F.where(condition, g, 0.0), F.where(condition, 0.0, g)


# (np.where itself: its warnings, "overflow encountered in cast" of a Python float past
# float32, point at the line calling it, as NumPy's)
where = declare("where", Category.POINTWISE, np.where, inputs=("condition", "x", "y"),
                meta=_where_meta, vjp=_where_vjp, doc="numpy.where(condition, x, y)")


def _where_normalize(condition, x=None, y=None):
    if x is None and y is None:  # np.nonzero(condition): kiln/ops/selection.py
        return Composite(lambda c: N.nonzero(c), (condition,))
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return Bound(where, (condition, x, y), {})


spell(np.where, where, _where_normalize, "numpy.where")


def _clip_impl(x, lo, hi):
    return np.clip(x, lo, hi)


def _clip_meta(x, lo, hi):
    if lo is None and hi is None:  # NumPy still runs a loop (none for bool: its error)
        return TensorMeta(np.shape(np.clip(to_fake(x), None, None)), x.dtype)
    return pointwise_meta_for(np.minimum)(
        pointwise_meta_for(np.maximum)(x, lo) if lo is not None else x, hi) if hi is not None \
        else pointwise_meta_for(np.maximum)(x, lo) if lo is not None else TensorMeta(shape_of(x), x.dtype)


def _clip_vjp(g, out, x, lo, hi):
    # np.clip is minimum(maximum(x, lo), hi): with lo > hi every element is hi.
    inside = F.logical_and(F.greater_equal(x, lo) if lo is not None else True,
                           F.less_equal(x, hi) if hi is not None else True)
    gx = F.where(inside, g, 0.0)
    glo = ghi = None
    if lo is not None and not _number(lo):
        wins = F.less(x, lo) if hi is None else F.logical_and(F.less(x, lo), F.less_equal(lo, hi))
        glo = F.where(wins, g, 0.0)
    if hi is not None and not _number(hi):
        ghi = F.where(F.greater(x if lo is None else F.maximum(x, lo), hi), g, 0.0)
    return gx, glo, ghi


clip = declare("clip", Category.POINTWISE, _clip_impl, inputs=("x", "lo", "hi"),
               meta=_clip_meta, vjp=_clip_vjp, doc="numpy.clip(x, lo, hi)")


def _clip_normalize(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue,
                    max=np._NoValue, **kwargs):
    # numpy.clip's own argument rules (NumPy's messages), then ndarray.clip's.
    if a_min is np._NoValue and a_max is np._NoValue:
        a_min = None if min is np._NoValue else min
        a_max = None if max is np._NoValue else max
    elif a_min is np._NoValue:
        raise TypeError("clip() missing 1 required positional argument: 'a_min'")
    elif a_max is np._NoValue:
        raise TypeError("clip() missing 1 required positional argument: 'a_max'")
    elif min is not np._NoValue or max is not np._NoValue:
        raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` "
                         "are provided is forbidden.")
    return _clip_method_normalize(a, a_min, a_max, out, **kwargs)


def _clip_method_normalize(a, min=None, max=None, out=None, **kwargs):
    reject_where(kwargs.pop("where", True), "numpy.clip")
    if kwargs:   # (NumPy's error comes from the ufunc it picks)
        reject("numpy.clip", next(iter(kwargs)), kwargs[next(iter(kwargs))], "drop the argument")
    return Bound(clip, (a, min, max), {}, out)


spell(np.clip, clip, _clip_normalize, "numpy.clip")
spell(("method", "clip"), clip, _clip_method_normalize, "ndarray.clip")


def _astype_impl(x, dtype, copy=True):
    if isinstance(x, np.generic):  # np.float32(s), s.astype(...): a NumPy scalar stays one
        return x.astype(dtype)
    return as_array(x).astype(dtype, copy=copy)


def _astype_meta(x, dtype, copy=True):
    return TensorMeta(shape_of(x), np.dtype(dtype))


astype = declare("astype", Category.POINTWISE, _astype_impl, inputs=("x",),
                 params={"dtype": None, "copy": True}, meta=_astype_meta, aliases=True,
                 vjp=lambda g, out, x, dtype, copy: (g,), numpy_method="astype",
                 doc="ndarray.astype(dtype): elementwise conversion")


def itself(x: Any) -> Any:
    """A composite's answer where NumPy hands back its operand itself (``x.astype(x.dtype,
    copy=False)``, ``x.real`` of a real array): capture's value is then the same object."""
    return x


def array_not_scalar(x: Any) -> bool:
    """An array (a value or capture's stand-in for one), not a NumPy scalar."""
    return hasattr(x, "shape") and not isinstance(x, np.generic) and not getattr(x, "numpy_scalar", False)


def _astype_normalize(x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    if order not in ("K", "A", "C"):
        reject("ndarray.astype", "order", order, "drop order= (kiln arrays are C-ordered)")
    if casting != "unsafe":
        reject("ndarray.astype", "casting", casting, "drop casting=")
    if not copy and order == "K" and array_not_scalar(x) and np.dtype(dtype) == x.dtype:
        # NumPy returns x itself: so does capture (``v is x``, and a boolean selection
        # ``v = x[m]`` applied after the graph is one array, returned twice)
        return Composite(itself, (x,))
    return Bound(astype, (x,), {"dtype": np.dtype(dtype), "copy": bool(copy)})


spell(("method", "astype"), astype, _astype_normalize, "ndarray.astype")


# ---- lowering: the scalar function of each op's loop ------------------------------------
# ``{"scalar": fn, "kinds": ...}``: the loop computes scalar function ``fn`` (named after the
# ufunc; renderers spell it, kiln/lowering/cpp_ops.py for C++) for loops of these dtype
# kinds ('f' float, 'i' signed, 'u' unsigned, 'b' bool, 'c' complex), the loop being the one NumPy's type
# resolution picks. A kind left out makes the node an extern call of the NumPy kernel
# (integer power raises on negative exponents, for example). ``when`` maps a constant
# operand ("y=2" for loops of real kinds, a complex loop only by a "c:" key; "f:y=0.5" for
# float loops only; "f:y=scalar" for a runtime scalar or a 0-d value the program computed,
# "f:y=scalar:one" the same in a result of one element, which C++ computes straight-line;
# "f:rest=0d" when every operand but the first is 0-d) to a decomposition
# ``(ops, dtype, *operands)`` written with other scalar functions.

_F, _ALL = "f", "fiub"
_KINDS = {
    "negative": _ALL, "positive": _ALL, "absolute": _ALL, "sign": "fiu",
    **{name: _F for name in ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "cbrt",
                             "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
                             "tanh", "arcsinh", "arccosh", "arctanh", "sqrt", "reciprocal",
                             "true_divide", "power", "arctan2", "hypot", "logaddexp",
                             "copysign")},
    "square": _ALL, "floor": _ALL, "ceil": _ALL, "trunc": _ALL, "rint": _ALL,
    "logical_not": _ALL, "isnan": _ALL, "isinf": _ALL, "isfinite": _ALL, "signbit": _ALL,
    "invert": "iub",
    "add": _ALL, "subtract": _ALL, "multiply": _ALL,
    "floor_divide": "fiu", "remainder": "fiu", "fmod": "fiu",
    "maximum": _ALL, "minimum": _ALL, "fmax": _ALL, "fmin": _ALL,
    "equal": _ALL, "not_equal": _ALL, "less": _ALL, "less_equal": _ALL, "greater": _ALL,
    "greater_equal": _ALL, "logical_and": _ALL, "logical_or": _ALL, "logical_xor": _ALL,
    "bitwise_and": "iub", "bitwise_or": "iub", "bitwise_xor": "iub",
    "left_shift": "iu", "right_shift": "iu",
    "fabs": _F, "deg2rad": _F, "radians": _F, "rad2deg": _F, "degrees": _F, "heaviside": _F,
    "float_power": _F,
}


_WHEN = {
    # Small constant exponents multiply: x*x is exactly pow(x, 2). (Not x*x*x for 3:
    # NumPy's loop calls pow there, whose bits differ from x*x*x in a quarter of float64
    # values; kiln calls the same pow.)
    "power": {"y=2": lambda ops, dt, x, y: ops.call("multiply", [x, x], dt),
              "y=1": lambda ops, dt, x, y: x,
              "f:y=0.5": lambda ops, dt, x, y: ops.call("sqrt", [x], dt),
              # (NumPy's loop divides for a zero-stride -1: pow rounds otherwise)
              "f:y=-1": lambda ops, dt, x, y: ops.call("true_divide", [ops.constant(1.0, dt), x], dt),
              "f:y=scalar": power_runtime_scalar,   # also a 0-d exponent the program computed
              "f:y=scalar:one": power_scalar_exponent_selects},
}


# Complex loops ('c') lower for these (NumPy's formulas: kiln/lowering/cpp_ops.py); the
# other complex ufuncs stay extern calls of NumPy's loops.
for _name in ("negative", "positive", "absolute", "exp", "true_divide", "add", "subtract",
              "multiply", "square", "equal", "not_equal"):
    _KINDS[_name] += "c"

# Derivative rules that hold for complex values (conj where f is holomorphic; tests/ops/
# test_complex_grads.py checks each against finite differences in complex128).
for _name in ("negative", "positive", "absolute", "exp", "log", "sqrt", "square", "sin", "cos",
              "tan", "sinh", "cosh", "tanh", "reciprocal", "power", "true_divide", "add",
              "subtract", "multiply", "astype"):
    F.__getattr__(_name).complex_grad = True

# ufuncs whose loop is another's scalar function (radians is deg2rad's loop). float_power's
# loop (float64) is libm's scalar pow, not power's (NumPy's SVML on AVX-512): its own name.
_SCALAR = {"radians": "deg2rad", "degrees": "rad2deg"}
for _name, _kinds in _KINDS.items():
    F.__getattr__(_name).lowering = {"scalar": _SCALAR.get(_name, _name), "kinds": _kinds, **(
        {"when": _WHEN[_name]} if _name in _WHEN else {})}
# where/clip/astype: every input is first cast to the output dtype (where's condition to
# bool: ``input_dtypes``); a missing clip bound (None) is an infinite one.
# where's "picks": the inputs it takes each element from, which NumPy computes at every
# element, also those it does not take (their warnings too: kiln/lowering/lower.py)
where.lowering = {"scalar": "where", "kinds": _ALL + "c", "input_dtypes": (np.dtype(bool), None, None),
                  "picks": (1, 2)}
clip.lowering = {"scalar": "clip", "kinds": _ALL, "when": {"f:rest=0d": clip_keeping_ties}}
astype.lowering = {"scalar": "identity", "kinds": _ALL + "c"}  # the cast to the output dtype is the whole op
