"""``a * b`` on NumPy scalars: NumPy's scalar math, not its ufunc.

An operator whose operands are NumPy scalars (``np.int8(100) * np.int8(100)``,
``x.sum() / n``), or a NumPy scalar and a Python number, runs NumPy's scalar math, which
computes what the ufunc computes but checks integer overflow (a RuntimeWarning, or
FloatingPointError under ``np.errstate(over='raise')``) and names itself in its messages
("overflow encountered in scalar multiply"). ``np.multiply(a, b)`` on the same scalars is
the ufunc: no integer overflow check, "... in multiply". A graph keeps the difference in
the op: ``scalar_binary`` (param ``ufunc``: the ufunc op's name) runs the Python operator
as its NumPy kernel (eager backends, aot replay, a compiled call run as NumPy under a
trapping error mode or ``-W error``), and lowers to the ufunc op, whose kernel computes
the same value.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .meta import TensorMeta, infer_meta
from .registry import REGISTRY, Category, F, declare

# the ufunc op -> the Python operator NumPy's scalar math implements for it
OPERATORS = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "true_divide": operator.truediv, "floor_divide": operator.floordiv,
    "remainder": operator.mod, "power": operator.pow, "left_shift": operator.lshift,
    "right_shift": operator.rshift, "bitwise_and": operator.and_,
    "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
}


def _is_scalar(v: Any) -> bool:
    """A NumPy scalar as the program holds it: a value, or capture's stand-in for one."""
    return isinstance(v, np.generic) or bool(getattr(v, "numpy_scalar", False))


def uses_scalar_math(x: Any, y: Any) -> bool:
    """Does ``x <op> y`` run NumPy's scalar math (no array operand, one NumPy scalar)?"""
    python = (bool, int, float, complex)
    return (_is_scalar(x) or type(x) in python) and (_is_scalar(y) or type(y) in python) and \
        (_is_scalar(x) or _is_scalar(y))


def _impl(x: Any, y: Any, ufunc: str) -> Any:
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):   # 0-d values of a graph
        x = x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x
        y = y[()] if isinstance(y, np.ndarray) and y.ndim == 0 else y
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            return REGISTRY[ufunc].impl(x, y)
    return OPERATORS[ufunc](x, y)


def _meta(x: Any, y: Any, ufunc: str) -> TensorMeta:
    return infer_meta(REGISTRY[ufunc], (x, y), {})


def _vjp(g: Any, out: Any, x: Any, y: Any, ufunc: str) -> Any:
    return REGISTRY[ufunc].vjp(g, out, x, y)


scalar_binary = declare(
    "scalar_binary", Category.POINTWISE, _impl, inputs=("x", "y"), params={"ufunc": None},
    meta=_meta, vjp=_vjp,
    # the ufunc's loop code, or this op's own call where the ufunc's would be an extern
    # (integer power: NumPy's own error from scalar math)
    lowering={"decompose": lambda x, y, ufunc: F.__getattr__(ufunc)(x, y), "or_extern": True},
    doc="x <op> y on NumPy scalars: NumPy's scalar math (its overflow checks and messages)")
