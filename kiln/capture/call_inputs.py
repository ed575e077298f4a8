"""What capture asks of a bound NumPy call's inputs before it records a node: the
normalizers' view of an array (:class:`ArrayArg`), positions in nested inputs, and
questions answered on stand-ins (does NumPy return a scalar here, does the output's
meta depend on an input's value)."""
from __future__ import annotations

from typing import Any
import warnings

import numpy as np

from ..ops import Bound, Composite, TensorMeta, infer_meta
from ..ops.meta import on_stand_ins, to_fake
from ..ops.registry import iter_leaves, map_leaves
from ..ops.value_warnings import DEPRECATIONS, may_deprecate
from .variables.arrays import ArrayVariable


class ArrayArg(TensorMeta):
    """What an op normalizer sees for an array: its shape and dtype (and its tracker)."""
    __slots__ = ("var", "below")

    def __init__(self, var: ArrayVariable, below: int | None = None) -> None:
        super().__init__(var.meta.shape, var.meta.dtype)
        self.var = var
        self.below = below   # every value is below it (Op.values_below), where known

    @property
    def T(self) -> "TensorMeta":
        return TensorMeta(self.shape[::-1], self.dtype)

    @property
    def numpy_scalar(self) -> bool:
        """Is it a NumPy scalar (np.float64), not a 0-d array, in the user's program?"""
        return bool(self.var.scalar)


def as_meta(v: Any) -> Any:
    return TensorMeta(v.shape, v.dtype) if isinstance(v, ArrayArg) else v


def input_at(inputs: tuple, where: Any) -> Any:
    """An op input by position, or by a path into a tuple input (``(1, 0)``: x[mask]'s mask)."""
    for i in (where if isinstance(where, tuple) else (where,)):
        inputs = inputs[i]
    return inputs


def replace_at(inputs: tuple, where: Any, value: Any) -> tuple:
    path = where if isinstance(where, tuple) else (where,)
    items = list(inputs)
    items[path[0]] = value if len(path) == 1 else replace_at(items[path[0]], path[1:], value)
    return tuple(items)


def numpy_returns_scalar(op, inputs: tuple, params: dict) -> bool:
    """Does NumPy give a scalar (``np.float64``), not a 0-d array, for this 0-d result?
    (A full reduction, an integer index, arithmetic on scalars: ``type()``, ``isinstance``
    and ``s += 1`` — a new value, not a write — depend on it.)"""
    if op.state is not None:   # (its kernel would draw: the spelling says what NumPy gives)
        return False

    def stand_in(v: Any) -> Any:
        if isinstance(v, ArrayArg):
            return np.dtype(v.dtype).type(1) if v.var.scalar else TensorMeta(v.shape, v.dtype)
        return v
    try:
        return isinstance(on_stand_ins(op.impl, *to_fake(map_leaves(inputs, stand_in)), **params),
                          np.generic)
    except Exception:
        return False


def _writes_or_draws(fn: Any, bound: Any) -> bool:
    """Does the call write (``out=``, an in-place op) or draw random numbers? Then no
    probe runs it, not even on stand-ins."""
    if isinstance(bound, Bound) and (bound.op.mutates or bound.out is not None
                                     or bound.op.state is not None):
        return True
    if isinstance(bound, Composite) and bound.out is not None:
        return True
    owner = getattr(fn, "__self__", None)
    return "random" in (getattr(fn, "__module__", None) or "") or \
        isinstance(owner, (np.random.Generator, np.random.RandomState))


def _call_on_stand_ins(fn: Any, args: list, kwargs: dict, cap: int | None = None) -> Any:
    """NumPy's ``fn(*args, **kwargs)`` with each array argument a fake of its shape and
    dtype (no memory of the user's is read or written), each dimension at most ``cap``
    (1: what a ufunc broadcasts as before, one element computed); raises what NumPy
    raises."""
    def stand_in(v: Any) -> Any:
        if isinstance(v, ArrayArg):
            shape = v.shape if cap is None else tuple(min(d, cap) for d in v.shape)
            return np.dtype(v.dtype).type(0) if v.var.scalar else to_fake(TensorMeta(shape, v.dtype))
        return v
    args = map_leaves(list(args), stand_in)
    if isinstance(fn, tuple) and fn[0] == "method" and args:   # x.mean(): a method key
        fn, args = getattr(args[0], fn[1]), args[1:]
    return fn(*args, **{k: map_leaves(v, stand_in) for k, v in kwargs.items()})


def numpy_warns_on_empty(fn: Any, bound: Any, args: list, kwargs: dict) -> str | None:
    """The first warning NumPy's ``fn(*args, **kwargs)`` gives when an array argument is
    empty ("Mean of empty slice", "Degrees of freedom <= 0 for slice", 0 / 0 in a mean), or
    None. Such a warning depends only on shapes, which the graph fixes: a compiled kernel
    over no elements says nothing, so the call runs as NumPy. Asked only with an empty
    array among the arguments (then the run costs nothing), and never for a call that
    writes (``out=``, an in-place op) or draws random numbers."""
    arrays = [v for v in flatten(list(args) + list(kwargs.values())) if isinstance(v, ArrayArg)]
    if not any(0 in a.shape for a in arrays) or _writes_or_draws(fn, bound):
        return None
    with np.errstate(divide="warn", over="warn", invalid="warn", under="ignore"), \
            warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            _call_on_stand_ins(fn, args, kwargs)
        except Exception:
            return None   # (the kernel's own checks and errors decide)
    found = [w for w in seen if issubclass(w.category, RuntimeWarning)]
    return str(found[0].message) if found else None


_PROBE_SIZE = 4096


def numpy_deprecation(fn: Any, bound: Any, args: list, kwargs: dict) -> Warning | None:
    """The DeprecationWarning, FutureWarning or VisibleDeprecationWarning NumPy's
    ``fn(*args, **kwargs)`` gives on the installed NumPy for these arguments (np.fix on
    NumPy 2.5; np.linalg.qr with ``mode='full'``), or None. A compiled op never calls
    NumPy's function, so such a call runs as NumPy and its warning comes out at the user's
    line. Tried for a function whose code can give one (ops/value_warnings.py
    may_deprecate), on stand-ins, stopping at the warning, and for a ufunc (whose C code
    warns for some arguments: np.maximum(a, b, out) with ``out`` positional on NumPy 2.5)
    on one element; never for a call that draws random numbers."""
    ufunc = isinstance(fn, np.ufunc)
    if not ufunc and (isinstance(fn, tuple) or not may_deprecate(fn)) or \
            (isinstance(bound, Bound) and bound.op.state is not None) or _writes_or_draws(fn, None):
        return None
    # (a large call, a QR of 4000 x 4000, is tried on its arrays cut to 3 along every
    # dimension: the small dims a deprecation is about, 2-vectors, stay as they are)
    arrays = [v for v in flatten(list(args) + list(kwargs.values())) if isinstance(v, ArrayArg)]
    cap = 1 if ufunc else 3 if any(np.prod(a.shape) > _PROBE_SIZE for a in arrays) else None
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for category in DEPRECATIONS:
            warnings.simplefilter("error", category)
        try:
            _call_on_stand_ins(fn, args, kwargs, cap)
        except DEPRECATIONS as w:
            return w
        except Exception:
            return None
    return None


def _perturbed(value: Any) -> Any:
    if isinstance(value, (bool, np.bool_)):
        return not value
    if isinstance(value, (int, np.integer)):
        return type(value)(value + 1 if value < 2 else value - 1)
    return type(value)(value * 0.5 + 0.25)


def value_free(op, inputs: tuple, params: dict, position: int) -> bool:
    """Does the output's shape/dtype stay put when input ``position`` takes another value?"""
    metas = tuple(v if not isinstance(v, ArrayArg) else TensorMeta(v.shape, v.dtype) for v in inputs)
    other = metas[:position] + (_perturbed(metas[position]),) + metas[position + 1:]
    try:
        return infer_meta(op, metas, params) == infer_meta(op, other, params)
    except Exception:
        return False


def flatten(values: Any):
    """The leaves of nested tuples and lists, in order."""
    for v in values:
        if isinstance(v, (tuple, list)):
            yield from flatten(v)
        else:
            yield v


def objects_the_normalizer_added(given: list, bound: Bound, scalars: dict) -> list[int]:
    """The run-time scalars (ids of their example objects) that a normalized call holds more
    often than the user passed them: a default or a constant of the normalizer
    (np.copyto's ``where=True``) that is the very object of a run-time ``True`` or small
    int, which CPython shares, and would be taken for it."""
    def count(values: list) -> dict:
        counts: dict = {}
        for v in (v for value in values for v in iter_leaves(value) if id(v) in scalars):
            counts[id(v)] = counts.get(id(v), 0) + 1
        return counts
    passed, held = count(given), count([*bound.inputs, *bound.params.values()])
    return [ident for ident, n in held.items() if n > passed.get(ident, 0)]
