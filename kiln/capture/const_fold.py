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

from ..ops.meta import supported_dtype
from .variables.base import ConstantVariable


def _number(value: Any) -> bool:
    if type(value) in (bool, int, float, complex):
        return True
    return isinstance(value, np.generic) and supported_dtype(value.dtype)


def fold_ufunc(key: Any, args: list, kwargs: dict) -> ConstantVariable | None:
    """The constant ``key(*args)`` is, or None when it must be recorded (see the module doc)."""
    if not isinstance(key, np.ufunc) or kwargs or key.nout != 1 or len(args) != key.nin:
        return None
    if not all(type(a) is ConstantVariable and _number(a.value) for a in args):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            with np.errstate(all="raise"):
                result = key(*(a.value for a in args))
        except Exception:
            return None
    if not isinstance(result, np.generic) or not supported_dtype(result.dtype):
        return None
    return ConstantVariable(result)
