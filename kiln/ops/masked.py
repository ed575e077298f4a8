"""``ufunc(*xs, out=o, where=m)``: a ufunc computed only where a mask is True.

The value is ``where(m, ufunc(*xs), o)``, and that is how a kernel computes it (the
lowering decomposes into the two ops, which fuse into one loop that never stores the
masked-off results). Run as NumPy (the eager backends, the aot replay, ``kiln.explain``,
a compiled call under ``np.errstate(...='raise')``, an extern call of an op the renderer
does not fuse), the node calls the ufunc with its own ``where=``: NumPy never computes the
masked-off elements, so ``np.divide(t, d, out=t, where=d != 0)`` neither warns nor raises
on the zeros it skips, and an integer ``np.power`` skips its negative exponents.

Two ops (one- and two-input ufuncs) serve every ufunc (param ``ufunc``: its op's name). Its result is a new array of
the broadcast shape in the dtype ``where`` gives (``out=`` then casts it into ``o`` as
NumPy's ufunc does).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .meta import TensorMeta, dtype_token, infer_meta, namespace, ufunc_may_raise
from .registry import REGISTRY, Category, F, declare
from .result_layout import Strided, axis_order, empty_in_order, layout_of


def _check_mask(mask: Any) -> None:
    """NumPy casts ``where=`` to bool with the 'safe' rule: an int mask is a TypeError."""
    dt = np.dtype(dtype_token(mask)) if hasattr(mask, "dtype") else np.asarray(mask).dtype
    if not np.can_cast(dt, np.bool_, "safe"):
        raise TypeError(f"Cannot cast array data from {dt!r} to dtype('bool') according to "
                        f"the rule 'safe'")


def _impl(mask: Any, fallback: Any, *xs: Any, ufunc: str) -> Any:
    fn = REGISTRY[ufunc].ufunc
    values = (mask, fallback, *xs)
    key = tuple(map(_key_of, values))
    try:
        meta = _cached_meta(key, ufunc)
    except TypeError:   # (an unhashable operand, or the ufunc's own TypeError: computed again)
        meta = _meta(*map(_meta_of, values), ufunc=ufunc)
        key = None
    xp = namespace(mask, fallback, *xs)
    if xp is not np:   # CuPy's ufuncs take no where= (and emit no floating-point warnings)
        return xp.where(mask, fn(*xs), fallback).astype(meta.dtype, copy=False)
    out = _allocated(mask, fallback, xs, fn, meta, key, ufunc)
    np.copyto(out, fallback, casting="unsafe")   # where's own cast of the fallback
    fn(*xs, out=out, where=mask)
    return out


# Each call of the op run as NumPy (a compiled wrapper's extern call: newton_fractal's
# masked complex64 power, 15 a call) inferred its result's meta again, ~25-65 us of a call
# NumPy's ufunc does in ~12 (loaded machine); and its layout, ~3 us. Both depend only on
# the operands' shapes, dtypes (strides, for the layout) and scalars (type and value: NEP
# 50's weak scalars, an int out of an integer dtype's range), which key these caches.
def _key_of(value: Any) -> Any:
    if type(value) is np.ndarray:
        return ("array", value.shape, value.dtype, value.strides)
    if hasattr(value, "shape") and not isinstance(value, np.generic):
        strides = getattr(value, "strides", None) if isinstance(value, np.ndarray) else None
        return ("array", tuple(value.shape), np.dtype(value.dtype), strides)
    return (type(value), value)


@functools.lru_cache(maxsize=256)
def _cached_meta(key: tuple, ufunc: str) -> TensorMeta:
    return _meta(*(TensorMeta(k[1], k[2]) if k[0] == "array" else k[1] for k in key), ufunc=ufunc)


@functools.lru_cache(maxsize=256)
def _cached_layout(key: tuple, ufunc: str, shape: tuple) -> Any:
    fn = REGISTRY[ufunc].ufunc
    return _where_layout(fn, [Strided(k[1], tuple(s // k[2].itemsize for s in k[3]), k[2])
                              if k[0] == "array" else k[1] for k in key], shape)


def _where_layout(fn: Any, operands: list, shape: tuple) -> Any:
    """The strides NumPy gives ``where(m, fn(*x), o)`` of ``operands`` (Strided or scalars)."""
    return layout_of(lambda m, o, *x: np.where(m, fn(*x), o), operands, {}, shape)


def _allocated(mask: Any, fallback: Any, xs: tuple, fn: Any, meta: TensorMeta,
               key: tuple | None = None, ufunc: str = "") -> np.ndarray:
    """The result's memory, laid out as NumPy's: the out= array's own layout when the
    fallback is one (ufunc(x, out=o, where=m) returns o); else where(m, ufunc(x), o)'s
    (``key``: the operands' :func:`_key_of`, to take it from the cache)."""
    shape = tuple(meta.shape)
    if isinstance(fallback, np.ndarray) and fallback.shape == shape:
        return np.empty_like(fallback, dtype=meta.dtype)
    if key is not None and all(k[0] != "array" or k[3] is not None for k in key):
        strides = _cached_layout(key, ufunc, shape)
    else:
        strides = _where_layout(fn, [Strided(a.shape, tuple(s // a.itemsize for s in a.strides), a.dtype)
                                     if isinstance(a, np.ndarray) else a for a in (mask, fallback, *xs)], shape)
    if strides is None:
        return np.empty(shape, meta.dtype)
    return empty_in_order(shape, axis_order(shape, strides), meta.dtype)


def _meta_of(value: Any) -> Any:
    return TensorMeta(tuple(value.shape), value.dtype) if hasattr(value, "shape") and \
        not isinstance(value, np.generic) else value


def _meta(mask: Any, fallback: Any, *xs: Any, ufunc: str) -> TensorMeta:
    _check_mask(mask)
    inner = infer_meta(REGISTRY[ufunc], xs, {})
    return REGISTRY["where"].meta(mask, inner, fallback)


def _vjp(g: Any, out: Any, mask: Any, fallback: Any, *xs: Any, ufunc: str) -> tuple:
    op = REGISTRY[ufunc]
    if op.vjp is None:
        return (None, F.where(mask, 0.0, g)) + (None,) * len(xs)
    inner = op(*xs)   # the ufunc's own output where the mask is True (backward: no warnings)
    grads = op.vjp(F.where(mask, g, 0.0), inner, *xs)
    # masked again: a rule's 0 * (1 / 0) at a skipped element (log at 0) is not the
    # gradient of a value NumPy never computed
    return (None, F.where(mask, 0.0, g)) + tuple(
        None if gr is None else F.where(mask, gr, 0.0) for gr in grads)


_UNKNOWN = object()


def _operand(x: Any) -> Any:
    """An operand as :func:`quiet_operands` reads it: an array's dtype, a constant, or
    ``_UNKNOWN`` for a 0-d value (a run-time scalar is the same in every lane, masked-off
    ones too: no value can stand in for it there)."""
    dtype = getattr(x, "dtype", None)
    if dtype is None or isinstance(x, np.generic):
        return x
    if tuple(getattr(x, "shape", ())) == ():
        value = getattr(x, "value", None)   # (a lowering's constant Scalar)
        if value is None or getattr(x, "name", None) is not None:
            return _UNKNOWN
        return value if getattr(x, "weak", False) else np.dtype(dtype).type(value)
    return np.dtype(dtype)


def _raises_nothing(fn: Any, values: list) -> bool:
    try:
        with np.errstate(all="raise"):
            fn(*values)
    except (ArithmeticError, ValueError, TypeError):   # (FloatingPointError among them)
        return False
    return True


@functools.lru_cache(maxsize=None)
def _quiet(ufunc: str, operands: tuple) -> tuple | None:
    fn = getattr(REGISTRY[ufunc], "ufunc", None)
    if fn is None:
        return None
    for candidate in (1, 0.5, 2, 3):
        values, quiet = [], []
        for x in operands:
            if isinstance(x, np.dtype):
                v = x.type(candidate)
                if v != candidate:   # (0.5 in an integer dtype)
                    break
                values.append(np.full(1, v, x))
                quiet.append(v.item())   # (a Python number: weak, the dtype stays x's)
            else:
                values.append(x)
                quiet.append(None)
        else:
            if _raises_nothing(fn, values):
                return tuple(quiet)
    return None


def quiet_operands(ufunc: str, xs: tuple) -> tuple | None:
    """For ``ufunc(*xs, where=m)``: a value for each array operand (None for a constant)
    on which the ufunc raises no floating-point flag (1 for np.log; 0.5 for np.arctanh,
    which 1 sends to inf), asked of NumPy once per ufunc and dtypes; None if the ufunc
    never raises one here, an operand is a 0-d value not known while compiling, or no such
    value is found. A kernel computes the ufunc on every element: given these in the
    masked-off lanes, its flags are NumPy's, which computes only the selected ones
    (lowering/fp_flags.py then attributes them).

    >>> quiet_operands("log", (np.zeros(3),)), quiet_operands("arctanh", (np.zeros(3),))
    ((1.0,), (0.5,))
    """
    from .fp_errors import fp_kinds
    operands = tuple(_operand(x) for x in xs)
    if any(x is _UNKNOWN for x in operands):
        return None
    kinds = [x.kind for x in operands if isinstance(x, np.dtype)]
    kind = "f" if "f" in kinds else "c" if "c" in kinds else (kinds[0] if kinds else "?")
    consts = tuple(None if isinstance(x, np.dtype) else x for x in operands)
    known = fp_kinds(ufunc, kind, consts)
    if known is not None and not known[0] or not kinds:
        return None
    try:
        return _quiet(ufunc, operands)
    except TypeError:   # (an unhashable constant)
        return None


def _decompose(mask: Any, fallback: Any, *xs: Any, ufunc: str) -> Any:
    quiet = quiet_operands(ufunc, xs)
    if quiet is not None:   # (the masked-off lanes compute on values that raise nothing)
        xs = tuple(x if q is None else F.where(mask, x, q) for x, q in zip(xs, quiet))
    return F.where(mask, F.__getattr__(ufunc)(*xs), fallback)


def _declare(name: str, nin: int) -> Any:
    return declare(
        name, Category.POINTWISE, _impl, inputs=("mask", "fallback") + ("x", "y")[:nin],
        params={"ufunc": None}, meta=_meta, vjp=_vjp,
        raises_for=lambda mask, fallback, *xs: ufunc_may_raise(*xs),
        # lowering/lower.py: the decomposition unless the ufunc would run there as an extern
        # NumPy call, which computes the masked-off elements: then this op's own call
        lowering={"decompose": _decompose, "or_extern": True},
        doc=f"numpy.<ufunc>({', '.join(('x', 'y')[:nin])}, out=fallback, where=mask): the "
            f"ufunc where mask is True, fallback elsewhere")


MASKED = {1: _declare("masked_unary", 1), 2: _declare("masked_binary", 2)}


def masked_call(ufunc: str, nin: int):
    """``fn(*xs, mask, fallback)`` for a Composite: the node of ``ufunc(*xs, where=mask)``."""
    op = MASKED[nin]
    return lambda *xs: op(xs[-2], xs[-1], *xs[:-2], ufunc=ufunc)
