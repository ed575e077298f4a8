"""Whole-array predicates NumPy answers with a Python bool: allclose, array_equal,
array_equiv, ``v in a`` (``ndarray.__contains__``); and np.asarray_chkfinite's check.

Each is a composite whose function computes the answer as a 0-d bool array (an ``all``
over an elementwise comparison, so the comparison fuses into the reduction) and whose
``python=bool`` says NumPy hands back a Python ``bool``: capture converts it where it
leaves the graph (kiln/capture/variables/arrays.py, PyValueVariable), the eager paths
at once. Shapes that can never match are answered while capturing (a constant False).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .meta import shape_of
from .numeric import _dtype, _is_array, array_like
from .meta import TensorMeta, namespace
from .registry import Category, Composite, F, N, declare, method_key, spell_composite


def _allclose(a, b, rtol, atol, equal_nan):
    a, b = (x if isinstance(x, (bool, int, float, complex)) else array_like(x) for x in (a, b))
    return N.all(N.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


spell_composite(np.allclose, ("isclose", "all"),
                lambda a, b, rtol=1e-05, atol=1e-08, equal_nan=False: Composite(
                    _allclose, (a, b), {"rtol": rtol, "atol": atol, "equal_nan": bool(equal_nan)},
                    python=bool), "numpy.allclose")


def _contains(a, v):
    return N.any(N.equal(a, v))   # NumPy's ndarray.__contains__: (a == v).any()


# ``v in a``; ``v not in a`` is the logical_not of it (kiln/capture/translator.py).
spell_composite(method_key("__contains__"), ("equal", "any"),
                lambda a, v: Composite(_contains, (a, v), python=bool), "ndarray.__contains__")


def _can_hold_nan(x: Any) -> bool:
    return _dtype(x).kind in "fc"


def _array_equal(a1, a2, equal_nan):
    if tuple(shape_of(a1)) != tuple(shape_of(a2)):
        return False
    same = N.equal(a1, a2)
    if equal_nan and (_can_hold_nan(a1) or _can_hold_nan(a2)):
        # NumPy: the NaNs at the same places, and the other values equal
        n1, n2 = N.isnan(a1), N.isnan(a2)
        return N.all(N.logical_and(N.equal(n1, n2), N.logical_or(same, n1)))
    return N.all(same)


def _array_equal_normalize(a1, a2, equal_nan=False):
    return Composite(_array_equal, (a1, a2), {"equal_nan": bool(equal_nan)}, python=bool)


spell_composite(np.array_equal, ("equal", "isnan", "all"), _array_equal_normalize,
                "numpy.array_equal")


def _array_equiv(a1, a2):
    try:
        np.broadcast_shapes(tuple(shape_of(a1)), tuple(shape_of(a2)))
    except ValueError:
        return False
    return N.all(N.equal(a1, a2))


spell_composite(np.array_equiv, ("equal", "all"),
                lambda a1, a2: Composite(_array_equiv, (a1, a2), python=bool),
                "numpy.array_equiv")


# ---- asarray_chkfinite: a check kept for its error ------------------------------------------

def _finite_or_raise(x):
    if np.dtype(x.dtype).kind in "fc" and not np.isfinite(x).all():
        raise ValueError("array must not contain infs or NaNs")
    return namespace(x).zeros((), bool)


finite_or_raise = declare(
    "finite_or_raise", Category.EXTERN, _finite_or_raise, inputs=("x",), may_raise=True,
    meta=lambda x: TensorMeta((), np.dtype(bool)),
    doc="raises NumPy's ValueError when a float array holds an inf or a NaN (what "
        "np.asarray_chkfinite checks); never removed as dead code")


def _chkfinite(a, dtype):
    if not _is_array(a):    # a list or a Python scalar: NumPy's asarray first
        a = N.asarray(a, dtype=dtype)
    if dtype is not None and np.dtype(dtype) != _dtype(a):
        a = N.method("astype", a, dtype)
    F.finite_or_raise(a)
    return N.asarray(a)   # the array itself, as NumPy returns it (a scalar: a 0-d array)


def _chkfinite_normalize(a, dtype=None, order=None):
    if order not in (None, "C", "K", "A") and len(shape_of(a)) > 1:
        from .meta import reject
        reject("numpy.asarray_chkfinite", "order", order, "drop order=")
    return Composite(_chkfinite, (a,), {"dtype": dtype})


spell_composite(np.asarray_chkfinite, ("finite_or_raise", "astype"), _chkfinite_normalize,
                "numpy.asarray_chkfinite", builds_array=True)


# ---- isscalar: a question about the type --------------------------------------------------

def _isscalar_normalize(element):
    # an array stand-in knows whether it is a NumPy scalar at run time (capture guards it)
    answer = bool(getattr(element, "numpy_scalar", False)) if isinstance(element, TensorMeta) \
        else np.isscalar(element)
    return Composite(lambda element: answer, (element,), type_only=True)


spell_composite(np.isscalar, (), _isscalar_normalize, "numpy.isscalar")
