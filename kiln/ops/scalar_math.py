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

Integer overflow and division by zero in that scalar math ("overflow encountered in scalar
subtract" for ``x.max() - x.min()`` on int8 data) raise no flag in a kernel, so capture
records ``scalar_int_check`` after each such op whose result is an integer: after the
kernels, it redoes the op on the 0-d operands with Python's exact integers, and where
the result leaves the dtype's range (or a divisor is 0) it warns NumPy's RuntimeWarning at
the user's line, as NumPy's error mode says ('ignore' silences; 'raise', 'call' and 'log'
run NumPy's own scalar math, which raises or calls as NumPy does). No array kernel checks
anything: only the 0-d operands of integer scalar math are read.
"""
from __future__ import annotations

import functools
import operator
import warnings
from typing import Any

import numpy as np

from .meta import TensorMeta, infer_meta, ufunc_may_raise
from .registry import REGISTRY, Bound, Category, Composite, F, declare
from .value_warnings import call_site, ufunc_at, warn_at

# the ufunc op -> the Python operator NumPy's scalar math implements for it
OPERATORS = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "true_divide": operator.truediv, "floor_divide": operator.floordiv,
    "remainder": operator.mod, "power": operator.pow, "left_shift": operator.lshift,
    "right_shift": operator.rshift, "bitwise_and": operator.and_,
    "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
}
# NumPy's scalar comparisons never warn; its complex loops' ordered ones do ("invalid value
# encountered in less" for a NaN part), so a complex scalar comparison is scalar math too
# (real ones give the ufunc's values and its silence: they stay the ufunc)
COMPARISONS = {
    "less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
    "greater_equal": operator.ge, "equal": operator.eq, "not_equal": operator.ne,
}
_CALLS = {**OPERATORS, **COMPARISONS}


def _is_scalar(v: Any) -> bool:
    """A NumPy scalar as the program holds it: a value, or capture's stand-in for one."""
    return isinstance(v, np.generic) or bool(getattr(v, "numpy_scalar", False))


def uses_scalar_math(x: Any, y: Any) -> bool:
    """Does ``x <op> y`` run NumPy's scalar math (no array operand, one NumPy scalar)?
    Not where the scalar whose method Python calls (``x``'s, or ``y``'s when ``x`` is a
    Python number) is an ``np.bool_``: NumPy has no bool scalar math and runs the ufunc,
    which checks no integer overflow (``np.True_ + np.int8(127)``) and names no "scalar"
    (``np.True_ // 0``: "divide by zero encountered in floor_divide")."""
    python = (bool, int, float, complex)
    if not ((_is_scalar(x) or type(x) in python) and (_is_scalar(y) or type(y) in python) and
            (_is_scalar(x) or _is_scalar(y))):
        return False
    first, other = (x, y) if _is_scalar(x) else (y, x)
    mine = np.dtype(first.dtype)
    if mine == np.bool_:
        return False
    if type(other) in python:
        # A Python number of a higher kind than the scalar's (``np.int8(-2) ** 0.5``, a float
        # with an integer, a complex with a real) is no scalar math: the ufunc, which names
        # no "scalar" ("invalid value encountered in power")
        return _PY_KINDS[type(other)] <= _KIND_ORDER[mine.kind]
    theirs = np.dtype(other.dtype)
    # Two NumPy scalars: the math of the one the other casts to safely (``np.int8(1) /
    # np.float64(0)``: float64's "scalar divide"); neither (int64 and float32, int8 and
    # uint8): promoted, the ufunc ("invalid value encountered in divide")
    return np.can_cast(theirs, mine) or np.can_cast(mine, theirs)


def complex_scalar_comparison(ufunc: str, x: Any, y: Any) -> bool:
    """Is ``x <op> y`` (``ufunc`` a comparison) NumPy's complex scalar math, which never
    warns: ``np.complex128(nan) < 1`` is silent where ``np.less`` of the same values (0-d
    arrays) says "invalid value encountered in less"? Not a complex64 and a float64
    (promoted: the ufunc, which warns), nor an ``np.bool_`` first (:func:`uses_scalar_math`)."""
    return ufunc in COMPARISONS and uses_scalar_math(x, y) and any(
        type(v) is complex or np.dtype(getattr(v, "dtype", "b")).kind == "c" for v in (x, y))


_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_PY_KINDS = {bool: 0, int: 1, float: 2, complex: 3}


# the ufunc ops whose integer scalar math NumPy checks (its scalar power and shifts wrap
# silently), with the exact integer operation; unary ones read x alone
CHECKED = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "floor_divide": operator.floordiv, "remainder": operator.mod,
    "negative": lambda a, b: -a, "absolute": lambda a, b: abs(a),
}
_UNARY = {"negative": operator.neg, "absolute": abs}
_BOUNDS: dict[str, tuple[int, int]] = {}


def _impl(x: Any, y: Any, ufunc: str, *, at: tuple[str, int] | None = None) -> Any:
    if ufunc in CHECKED and _integral(x) and _integral(y):
        # an integer result: the check after this op warns or raises, at the user's line
        # (NumPy's own warning from here would point at this file)
        with np.errstate(over="ignore", divide="ignore"):
            value = _value(x, y, ufunc, at)
        if getattr(value, "dtype", np.dtype(float)).kind in "iub":
            return value
    return _value(x, y, ufunc, at)


def _impl_at(filename: str, lineno: int, impl: Any = _impl) -> Any:
    """The impl whose scalar math runs from a frame at ``filename:lineno`` (Op.impl_at):
    ``np.float64(1) / x[0]`` warns "divide by zero" at the user's line, as NumPy's."""
    return functools.partial(impl, at=(filename, lineno))


def _integral(v: Any) -> bool:
    return isinstance(v, (int, np.integer, np.bool_)) or \
        isinstance(v, np.ndarray) and v.dtype.kind in "iub"


def _value(x: Any, y: Any, ufunc: str, at: tuple[str, int] | None = None) -> Any:
    call = _CALLS[ufunc]
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):   # 0-d values of a graph
        x = x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x
        y = y[()] if isinstance(y, np.ndarray) and y.ndim == 0 else y
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            call = REGISTRY[ufunc].impl
    return call(x, y) if at is None else ufunc_at(call, at[0], at[1])(x, y)


def _fault(x: Any, y: Any, ufunc: str, dtype: str) -> str | None:
    """NumPy's error kind ("over", "divide") for integer scalar math ``x <ufunc> y`` whose
    result has ``dtype``, or None: the exact result outside the dtype's range."""
    a, b = int(x), int(y)
    if b == 0 and ufunc in ("floor_divide", "remainder"):
        return "divide"
    if ufunc == "remainder":
        return None
    lo, hi = _bounds(dtype)
    return None if lo <= CHECKED[ufunc](a, b) <= hi else "over"


def _bounds(dtype: str) -> tuple[int, int]:
    if dtype not in _BOUNDS:
        info = np.iinfo(dtype)
        _BOUNDS[dtype] = (int(info.min), int(info.max))
    return _BOUNDS[dtype]


_TEXT = {"over": "overflow", "divide": "divide by zero"}


def _report(x: Any, y: Any, ufunc: str, dtype: str, site: Any) -> None:
    kind = _fault(x, y, ufunc, dtype)
    if kind is None:
        return
    mode = np.geterr()[kind]
    if mode == "ignore":
        return
    if mode != "warn":   # raise, call, print, log: NumPy's own scalar math does it
        x = x[()] if isinstance(x, np.ndarray) else x
        y = y[()] if isinstance(y, np.ndarray) else y
        unary = _UNARY.get(ufunc)
        unary(x) if unary is not None else OPERATORS[ufunc](x, y)
        return
    message = f"{_TEXT[kind]} encountered in scalar {ufunc}"
    if site is None:
        warnings.warn(message, RuntimeWarning, stacklevel=3)
    else:
        warn_at(message, site[0], site[1])


def _check_impl(x: Any, y: Any, ufunc: str = "", dtype: str = "", site: Any = None) -> Any:
    _report(x, y, ufunc, dtype, site)
    return np.zeros(1, bool)   # (not 0-d: capture would run it on fake arrays for its type)


def _check(ufunc: str = "", dtype: str = "", site: Any = None) -> Any:
    """The check a generated wrapper calls after the kernels (``Op.check_impl``)."""
    exact, (lo, hi) = CHECKED[ufunc], _bounds(dtype)
    divides = ufunc in ("floor_divide", "remainder")

    def check(x: Any, y: Any) -> None:
        # (the common case, no fault, in a few hundred nanoseconds; _report says which)
        b = int(y)
        if divides and b == 0 or ufunc != "remainder" and not lo <= exact(int(x), b) <= hi:
            _report(x, y, ufunc, dtype, site)
    return check


scalar_int_check = declare(
    "scalar_int_check", Category.EXTERN, _check_impl, inputs=("x", "y"),
    params={"ufunc": "", "dtype": "", "site": None}, may_raise=True, check_impl=_check,
    meta=lambda x, y, ufunc="", dtype="", site=None: TensorMeta((1,), np.dtype(bool)),
    doc="NumPy's integer overflow / division-by-zero warning of scalar math ``x <ufunc> y`` "
        "whose result has ``dtype``, at ``site``; never removed as dead code")


def _checked(x: Any, y: Any, ufunc: str) -> Any:
    unary = ufunc in _UNARY
    r = F.__getattr__(ufunc)(x) if unary else F.scalar_binary(x, y, ufunc=ufunc)
    dtype = getattr(r, "dtype", None)
    if dtype is not None and dtype.kind in "iu":
        F.scalar_int_check(x, y, ufunc=ufunc, dtype=dtype.name, site=call_site())
    return r


def scalar_math(ufunc: str, x: Any, y: Any = None) -> Any:
    """The call NumPy's scalar math ``x <op> y`` (``op`` the ufunc op's name; ``-x`` and
    ``abs(x)`` with y None) normalizes to: :data:`scalar_binary`, and where NumPy checks
    integer results, :data:`scalar_int_check` after it."""
    if y is None and ufunc not in _UNARY:   # +x, ~x: the ufunc, which checks nothing
        return Bound(REGISTRY[ufunc], (x,), {})
    if ufunc not in CHECKED:
        return Bound(scalar_binary, (x, y), {"ufunc": ufunc})
    return Composite(_checked, (x, x if y is None else y), {"ufunc": ufunc}, passes_scalars=True)


def _meta(x: Any, y: Any, ufunc: str) -> TensorMeta:
    return infer_meta(REGISTRY[ufunc], (x, y), {})


def _vjp(g: Any, out: Any, x: Any, y: Any, ufunc: str) -> Any:
    return REGISTRY[ufunc].vjp(g, out, x, y)


scalar_binary = declare(
    "scalar_binary", Category.POINTWISE, _impl, inputs=("x", "y"), params={"ufunc": None},
    meta=_meta, vjp=_vjp, raises_for=ufunc_may_raise, impl_at=_impl_at,
    # (its rule is its ufunc's: so is whether it holds for complex values)
    complex_grad=lambda params: REGISTRY[params["ufunc"]].complex_rule({}),
    # the ufunc's loop code, or this op's own call where the ufunc's would be an extern
    # (integer power: NumPy's own error from scalar math)
    lowering={"decompose": lambda x, y, ufunc: F.__getattr__(ufunc)(x, y), "or_extern": True},
    doc="x <op> y on NumPy scalars: NumPy's scalar math (its overflow checks and messages)")
