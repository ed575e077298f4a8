"""NumPy functions that call the user's functions (``np.piecewise``'s funclist): written
here in NumPy, and inlined by capture like a user helper, so the user's callables are
captured (and guarded) as the user wrote them and the array work becomes ops.

Capture looks them up in :data:`POLYFILLS` (kiln/capture/variables/functions.py). Each
follows NumPy's own implementation step by step; where it must differ, the docstring says.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> Any:
    """numpy.piecewise: y[cond] = func(x[cond]) (or the constant) per condition, in order;
    with one function more than conditions, the last one takes where no condition holds.

    Unlike NumPy, a function is called on an empty selection too (NumPy skips it: the
    test is a data-dependent branch); a masked write of an empty selection changes
    nothing, so results agree unless the function raises on an empty array.
    """
    if isinstance(x, (list, tuple, bool, int, float)):   # (np.asanyarray would detach a Tensor)
        x = np.asarray(x)
    n2 = len(funclist)
    # NumPy asks isinstance(condlist[0], (list, ndarray)); .ndim also sees a kiln.Tensor
    # (it differs only for a 0-d array among the conditions of a non-0-d x)
    first = None if isinstance(condlist, (bool, int, float, np.generic)) else condlist[0]
    first_is_array = isinstance(first, list) or (
        first is not None and not isinstance(first, (bool, int, float)) and first.ndim > 0)
    if isinstance(condlist, (bool, int, float, np.generic)) or (not first_is_array and x.ndim != 0):
        condlist = [condlist]
    condlist = np.asarray(condlist, dtype=bool)
    n = len(condlist)
    if n == n2 - 1:   # the otherwise function
        condelse = ~np.any(condlist, axis=0, keepdims=True)
        condlist = np.concatenate([condlist, condelse], axis=0)
        n += 1
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = np.zeros_like(x)
    for i in range(n):
        cond, func = condlist[i], funclist[i]
        if not callable(func):
            y[cond] = func
        else:
            y[cond] = func(x[cond], *args, **kw)
    return y


POLYFILLS = {np.piecewise: piecewise}
