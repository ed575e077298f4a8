"""Python-float arithmetic as graph values: ``sigma * (y - x)`` on run-time float arguments.

Capture keeps arithmetic on run-time Python numbers as an expression the entry evaluates
before the graph (kiln/capture/variables/arrays.py, ``SymScalarVariable``). Where such a
float only feeds array work (an element write, an elementwise operand) and a float64
0-d value gives NumPy's result as the weak Python float would (kiln/capture/
python_numbers.py decides), the arithmetic becomes these ops instead, so the whole
function is one graph call with the numbers passed in unboxed.

``+ - *`` and unary ``-`` of Python floats are the IEEE double operations (no fused
multiply-add: kernels build with -ffp-contract=off), and Python raises nothing and warns
about nothing for them: the kernel here is the Python operation itself, so NumPy's
error mode (``np.errstate(all='raise')``) never applies to them, whichever backend or
fallback runs the graph. ``/`` is ``python_true_divide`` below, an extern call of Python's
own division (ZeroDivisionError "float division by zero" where a double kernel gives
inf); ``**``, ``//`` and ``%`` are not here: Python raises ZeroDivisionError or
OverflowError where a double kernel would not. The result is a
float64 0-d value (a NumPy scalar); Python floats carry no derivative, so the ops have no
derivative rule (capture builds them from Python numbers only).

    >>> import numpy as np
    >>> python_multiply.impl(1e308, 10.0), python_negative.impl(np.float64(0.0))
    (np.float64(inf), np.float64(-0.0))
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from .meta import TensorMeta
from .registry import Category, declare

_FLOAT64 = np.dtype(np.float64)


def _meta(*args: Any) -> TensorMeta:
    for a in args:
        if isinstance(a, TensorMeta) and (a.shape != () or a.dtype != _FLOAT64) \
                or not isinstance(a, (TensorMeta, float)):
            raise TypeError(f"Python-float arithmetic on {a!r}: a Python float or a float64 "
                            f"0-d value is needed")
    return TensorMeta((), _FLOAT64)


def _kernel(fn: Callable[..., float]) -> Callable[..., np.float64]:
    def impl(*args: Any) -> np.float64:
        return np.float64(fn(*(float(a) for a in args)))
    return impl


# name -> (the Python operation, the scalar function lowering spells, inputs)
PYTHON_FLOAT_OPS = {
    "python_add": (operator.add, "add", ("x", "y")),
    "python_subtract": (operator.sub, "subtract", ("x", "y")),
    "python_multiply": (operator.mul, "multiply", ("x", "y")),
    "python_negative": (operator.neg, "negative", ("x",)),
}

for _name, (_fn, _scalar, _inputs) in PYTHON_FLOAT_OPS.items():
    globals()[_name] = declare(
        _name, Category.POINTWISE, _kernel(_fn), inputs=_inputs, meta=_meta,
        lowering={"scalar": _scalar, "kinds": "f"},
        python_us=lambda node, per_op_us: 0.03,   # a float operation in the interpreter
        doc=f"Python's float {_fn.__name__.strip('_')} of run-time numbers, as a float64 0-d value")

# Python operator -> op name (capture maps a SymScalarVariable's operation through it).
BY_OPERATOR = {fn: name for name, (fn, _, _) in PYTHON_FLOAT_OPS.items()}


# ``x / y`` of Python floats read from data (``x = float(a[0]); y = x / float(a[1])``):
# Python's division itself as the kernel, so a zero divisor raises Python's
# ZeroDivisionError, never inf; an extern call (no backend fuses it), as math's are below.
python_true_divide = declare(
    "python_true_divide", Category.POINTWISE, _kernel(operator.truediv), inputs=("x", "y"),
    meta=_meta, may_raise=True,
    python_us=lambda node, per_op_us: 0.03,
    doc="Python's float / of run-time numbers, as a float64 0-d value (ZeroDivisionError)")


# ``np.uint16(n)``, ``np.float32(x)`` of a Python number read from data (``n =
# int(hdr[0])``): NumPy's own constructor on the Python number itself, so its value, its
# OverflowError ("Python integer 70000 out of bounds for uint16") and its cast warnings
# are NumPy's. An extern call (no backend fuses it); the result is the NumPy scalar.
SCALAR_TYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "float32", "float64", "complex64", "complex128")
_KINDS = {"int": int, "float": float, "bool": bool}


def _scalar_type_meta(x: Any, type: str, kind: str) -> TensorMeta:
    if type not in SCALAR_TYPES or kind not in _KINDS:
        raise TypeError(f"np.{type} of a Python {kind}: not a NumPy scalar type kiln makes")
    return TensorMeta((), np.dtype(type))


def _scalar_type_kernel(x: Any, type: str, kind: str) -> np.generic:
    return np.dtype(type).type(_KINDS[kind](x))


python_scalar_type = declare(
    "python_scalar_type", Category.POINTWISE, _scalar_type_kernel, inputs=("x",),
    params={"type": None, "kind": None}, meta=_scalar_type_meta, may_raise=True,
    python_us=lambda node, per_op_us: 0.1,   # a NumPy scalar made in the interpreter
    doc="np.<type>(a Python int/float/bool read from data): NumPy's scalar, its OverflowError")


# ``math.<fn>`` of a number read from array data (``math.sqrt(v @ v)``, ``math.sin(u[1])``):
# Python converts the NumPy scalar with ``float()`` and calls C's libm, raising ValueError
# ("math domain error") or OverflowError ("math range error") where the double result
# would be NaN or infinite. The kernel is that call itself: no backend fuses it (an extern
# call in a compiled graph), so its bits and its exceptions are Python's. Functions of
# one or two real numbers that return a float; ``floor``/``ceil``/``trunc`` (ints) and
# ``isnan``-style tests (bools) are not here.
import math as _math  # noqa: E402

MATH_FUNCTIONS = {1: ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
                      "asinh", "acosh", "atanh", "exp", "expm1", "log", "log2", "log10",
                      "log1p", "sqrt", "fabs", "erf", "erfc", "gamma", "lgamma", "degrees",
                      "radians") + tuple(n for n in ("exp2", "cbrt") if hasattr(_math, n)),
                  2: ("atan2", "hypot", "pow", "copysign", "fmod", "remainder", "log")}


def _math_meta(*args: Any, fn: str) -> TensorMeta:
    for a in args:
        if isinstance(a, TensorMeta) and (a.shape != () or np.dtype(a.dtype).kind not in "biuf") \
                or not isinstance(a, (TensorMeta, float, int)):
            raise TypeError(f"math.{fn} of {a!r}: a real number is needed")
    return TensorMeta((), _FLOAT64)


def _math_kernel(*args: Any, fn: str) -> np.float64:
    return np.float64(getattr(_math, fn)(*(float(a) for a in args)))


# arity -> op (capture: kiln/capture/variables/functions.py, MathFunctionVariable)
PYTHON_MATH = {nin: declare(
    f"python_math{nin}", Category.POINTWISE, _math_kernel, inputs=("x", "y")[:nin],
    params={"fn": None}, meta=_math_meta, may_raise=True,
    python_us=lambda node, per_op_us: 0.05,   # a math call in the interpreter
    doc=f"math.<fn> of {nin} real number(s): Python's float result as a float64 0-d value "
        f"(Python's ValueError/OverflowError)") for nin in (1, 2)}
