"""NumPy ufuncs on numbers capture knows exactly, computed while capturing.

``np.log(p)`` with ``p = min(x.shape)`` (fixed by the shape guards) or ``np.sqrt(2)`` is a
number every call of this entry gives the same: NumPy returns a NumPy scalar, and so does
capture, as a constant. ``int()``, ``float()``, a branch or a size then read it without a
graph break (``n = int(np.log(n) / np.log(2))`` broke the graph and sent the rest of the
function to Python). Folded only when the call is exact and quiet: a ufunc of numbers
alone, no keywords, one output of a dtype kiln supports, and no floating-point error or
warning (``np.log(0)`` warns in every call NumPy makes, so it stays in the graph).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..ops import defined_in_numpy
from ..ops.meta import supported_dtype
from .variables.base import ConstantVariable
from .variables.containers import ListVariable, TupleVariable


def _number(value: Any) -> bool:
    if type(value) in (bool, int, float, complex):
        return True
    return isinstance(value, np.generic) and supported_dtype(value.dtype)


def _known(var: Any) -> bool:
    """A number, or a tuple or list of them, that capture knows exactly."""
    if type(var) is ConstantVariable:
        value = var.value
        return all(_number(v) for v in value) if isinstance(value, tuple) else _number(value)
    return type(var) in (TupleVariable, ListVariable) and all(_known(v) for v in var.item_list)


def _value(var: Any) -> Any:
    if type(var) is ConstantVariable:
        return var.value
    values = [_value(v) for v in var.item_list]
    return values if type(var) is ListVariable else tuple(values)


def fold_ufunc(key: Any, op: Any, args: list, kwargs: dict) -> ConstantVariable | None:
    """The constant ``key(*args, **kwargs)`` is, or None when it must be recorded (see the
    module doc). ``op``: the spelling's op (elementwise and reduction functions fold, as
    ``np.sum((1, 2))`` does; every ufunc does)."""
    if isinstance(key, np.ufunc):
        if key.nout != 1 or len(args) != key.nin or kwargs:
            return None
    elif not (callable(key) and defined_in_numpy(key)
              and not getattr(key, "__module__", "").startswith("numpy.random")
              and op is not None and str(getattr(op, "category", "")) in ("pointwise", "reduction")
              and not getattr(op, "mutates", False)):
        return None
    if not all(_known(a) for a in list(args) + list(kwargs.values())):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            with np.errstate(all="raise"):
                result = key(*(_value(a) for a in args), **{k: _value(v) for k, v in kwargs.items()})
        except Exception:
            return None
    if not isinstance(result, np.generic) or not supported_dtype(result.dtype):
        return None
    return ConstantVariable(result)
