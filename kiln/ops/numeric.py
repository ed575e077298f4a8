"""NumPy functions that are compositions of other ops (composite spellings).

Each spelling here normalizes to a :class:`~kiln.ops.registry.Composite`: a function
written with ``N.<numpy name>(...)`` calls, which run kiln's own spellings, so they fuse
(pointwise chains become one kernel), differentiate (each op's derivative rule) and run
on every backend with no kernel, shape rule or derivative of their own. What NumPy
validates (bad axes, shape mismatches) is validated by the ops they call, with NumPy's
messages. Arguments kiln does not model raise ``UnsupportedArgument`` (a graph break).

Families: rounding and cleaning (round, nan_to_num, isclose), polynomials (polyval,
vander), selection (select, count_nonzero), small helpers (isposinf, sinc, trapezoid,
broadcast_arrays, ...). Differences, rolls and rotations (diff, roll, rot90) are in
kiln/ops/rolls.py. Grids and functions of constants (meshgrid, indices, triu/tril
indices, logspace) are in kiln/ops/grids.py.
np.append and the split family are in kiln/ops/splice.py.
Statistics (nan* reductions, average, cov, corrcoef) are in kiln/ops/statistics.py;
arrays made from data (asarray, array, ndarray) in kiln/ops/from_data.py.
"""
from __future__ import annotations

import math
import operator
from types import SimpleNamespace
from typing import Any

import numpy as np

from .meta import TensorMeta, as_array, fresh_copy, ndim_of, normalize_one_axis, reject, shape_of
from .registry import Category, Composite, F, N, declare, method_key, spell_composite


def _dtype(x: Any) -> np.dtype:
    if isinstance(x, (bool, int, float, complex)):
        return np.asarray(x).dtype
    return np.dtype(getattr(x, "dtype", None) or np.asarray(x).dtype)


def _is_array(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")


def array_like(x: Any) -> Any:
    """A composite's array input as NumPy's ``asanyarray`` makes it: an array stays, a list
    (of a loop's energies, say: ``np.diff(energies)``) or a number becomes one."""
    return x if _is_array(x) else N.asarray(x)


def scalar_if_0d(out: Any) -> Any:
    """NumPy's ``out[()]``: a 0-d result becomes a NumPy scalar (np.nan_to_num of a 0-d
    value, a reduction over every axis written with np.where); others stay arrays."""
    return N.getitem(out, ()) if ndim_of(out) == 0 else out


def _sym(name: str) -> Any:
    return getattr(np, name)


def _slice_along(nd: int, axis: int, s: slice) -> tuple:
    return (slice(None),) * axis + (s,)


# ---- a check NumPy makes on values ----------------------------------------------------------

_ERRORS = {"ZeroDivisionError": ZeroDivisionError, "ValueError": ValueError}


def _nonzero_or_raise(x, message="", error="ValueError"):
    if np.any(as_array(x) == 0):
        raise _ERRORS[error](message)
    return fresh_copy(x)


nonzero_or_raise = declare(
    "nonzero_or_raise", Category.EXTERN, _nonzero_or_raise, inputs=("x",),
    params={"message": "", "error": "ValueError"}, may_raise=True,
    meta=lambda x, message, error: TensorMeta(shape_of(x), _dtype(x)),
    vjp=lambda g, out, x, message, error: (g,),
    doc="x itself, after raising error(message) where NumPy checks that no value is zero "
        "(np.average's weights)")


# ---- rounding, cleaning, comparing ----------------------------------------------------------

def _round(a: Any, decimals: int) -> Any:
    kind = _dtype(a).kind
    if kind == "b":   # NumPy: float16 for decimals=0, a casting error otherwise
        reject("numpy.round", "a.dtype", _dtype(a), "round a float or integer array instead")
    if kind in "iu":
        if decimals >= 0:
            # a copy, and for a 0-d array a NumPy scalar, as ndarray.round returns: a ufunc
            # that leaves the values alone does both; laid out as NumPy's copy (order='K':
            # a broadcast array's follows its strides, a ufunc's result is C; seed 3350)
            out = N.positive(a)
            return out if ndim_of(a) < 2 else F.relayout(out, a, rule="K")
        reject("numpy.round", "decimals", decimals, "round integers with // and * instead")
    if kind == "c":
        # NumPy rounds the real and imaginary parts each on its own: a complex division by
        # 10 ** decimals rounds otherwise (1.75 - 0.875j to 1.8000001 - 0.90000004j in
        # complex64, where NumPy gives 1.8 - 0.9j; methods.py seed 3083)
        # (into a copy of a in its own memory order: order='K', seed 2751)
        out = F.complex_parts(_round(F.real(a), decimals), _round(F.imag(a), decimals))
        return scalar_if_0d(out) if ndim_of(a) < 2 else F.relayout(out, a, rule="K")
    if decimals == 0:
        return N.rint(a)
    if decimals > 0:
        scale = 10.0 ** decimals
        out = N.true_divide(N.rint(N.multiply(a, scale)), scale)
    else:
        scale = 10.0 ** -decimals
        out = N.multiply(N.rint(N.true_divide(a, scale)), scale)
    # NumPy allocates this result first: np.empty(shape, order='F' if a is Fortran-
    # contiguous only, else 'C') (a reversed Fortran-ordered view rounds into C order)
    return out if ndim_of(a) < 2 else F.relayout(out, a, rule="A")


def _round_normalize(a, decimals=0, out=None):
    decimals = operator.index(decimals)
    if not -2**31 <= decimals < 2**31:   # NumPy reads it as a C int, whatever a's dtype
        raise OverflowError(f"signed integer is {'greater than maximum' if decimals > 0 else 'less than minimum'}")
    return Composite(_round, (a,), {"decimals": decimals}, out)


spell_composite(np.round, ("rint", "multiply", "true_divide", "copy"), _round_normalize, "numpy.round")
spell_composite(np.around, ("rint", "multiply", "true_divide", "copy"), _round_normalize, "numpy.around")
spell_composite(method_key("round"), ("rint", "multiply", "true_divide", "copy"), _round_normalize,
                "ndarray.round")


def _fix(x: Any) -> Any:
    # NumPy's fix is ceil where x < 0 and floor elsewhere: trunc, for -0.0, NaN, infinities
    # and integers (a copy in their dtype) too
    return N.trunc(x)


spell_composite(np.fix, ("trunc",), lambda x, out=None: Composite(_fix, (x,), {}, out, out_broadcasts=True),
                "numpy.fix")


def _nan_to_num(x: Any, nan: float, posinf: Any, neginf: Any) -> Any:
    out = _nan_to_num_array(x, nan, posinf, neginf)
    # NumPy hands back x[()] for a 0-d x: a NumPy scalar (np.nan_to_num(1.0) is np.float64)
    return scalar_if_0d(out)


def _nan_to_num_array(x: Any, nan: float, posinf: Any, neginf: Any) -> Any:
    dt = _dtype(x)
    if dt.kind not in "fc":
        return N.copy(x)
    if dt.kind == "c":
        return N.add(_nan_to_num_array(N.real(x), nan, posinf, neginf),
                     N.multiply(_nan_to_num_array(N.imag(x), nan, posinf, neginf), 1j))
    info = np.finfo(dt)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    big = N.where(N.greater(x, 0), dt.type(hi), dt.type(lo))
    return N.where(N.isnan(x), dt.type(nan), N.where(N.isinf(x), big, x))


def _nan_to_num_normalize(x, copy=True, nan=0.0, posinf=None, neginf=None):
    if not copy:
        reject("numpy.nan_to_num", "copy", copy, "assign the result instead: x = np.nan_to_num(x)")
    return Composite(_nan_to_num, (x,), {"nan": nan, "posinf": posinf, "neginf": neginf})


spell_composite(np.nan_to_num, ("where", "isnan", "isinf", "greater"), _nan_to_num_normalize,
                "numpy.nan_to_num")


def _isclose(a: Any, b: Any, rtol: float, atol: float, equal_nan: bool) -> Any:
    # NumPy 2: |a - b| <= atol + rtol * |b|, for finite b; equal infinities are close. Only b
    # is made inexact (an array in its inexact dtype, a Python int a float): a and Python
    # numbers stay as they are, so NEP 50 keeps float32 a with a Python float b float32.
    y = b
    if _is_array(b):
        dt = np.result_type(_dtype(b), 1.0)
        y = b if _dtype(b) == dt else N.method("astype", b, dt)
    elif isinstance(b, int):
        y = float(b)
    # NumPy computes |a - y| <= atol + rtol * |y| under np.errstate(invalid="ignore"):
    # inf - inf (equal infinities) and 0 * inf give no warning. That term counts only where
    # y is finite, so elsewhere it reads 0 for y and raises nothing (its overflow warns, as
    # NumPy's).
    finite = N.isfinite(y)
    y_finite = N.where(finite, y, 0) if _is_array(y) else y if math.isfinite(y.real) else 0.0
    tol = N.add(atol, N.multiply(rtol, N.absolute(y_finite)))
    if _is_array(a) and not any(_is_array(v) for v in (y, atol, rtol)):
        # NumPy computes Python numbers' atol + rtol * abs(y) in Python: a float that meets
        # |a - y| weakly, in a's precision (float32 a: rounded to float32)
        real = np.finfo(np.result_type(_dtype(a), 1.0)).dtype
        tol = tol if real == _dtype(tol) else N.method("astype", tol, real)
    close = N.less_equal(N.absolute(N.subtract(a, y_finite)), tol)
    close = N.logical_or(N.logical_and(close, finite), N.equal(a, y))
    if equal_nan:
        close = N.logical_or(close, N.logical_and(N.isnan(a), N.isnan(y)))
    return close


def _isclose_normalize(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    tols = []
    for name, tol in (("rtol", rtol), ("atol", atol)):
        # NumPy warns "One of rtol or atol is not valid" for a non-finite one (np.geterr's
        # invalid decides how): such a call runs as NumPy. (A graph's array tolerance is
        # not seen here.) A Python number is passed on as a new float object (the same
        # value: NumPy adds it to a float), which leaves a run-time number unused: capture
        # guards it by value, so a later inf is not computed without the warning.
        if not isinstance(tol, TensorMeta) and not np.all(np.isfinite(tol)):
            reject("numpy.isclose", name, tol, "it runs as NumPy, which warns about it")
        tols.append(tol + 0.0 if isinstance(tol, (bool, int, float)) and not _is_array(tol) else tol)
    return Composite(_isclose, (a, b), {"rtol": tols[0], "atol": tols[1], "equal_nan": bool(equal_nan)})


spell_composite(np.isclose, ("absolute", "subtract", "less_equal", "isfinite", "equal", "where"),
                _isclose_normalize, "numpy.isclose")


# ---- polynomials ----------------------------------------------------------------------------

def _polyval(p, x):
    if not _is_array(p):
        p = np.asarray(p)
    if ndim_of(p) == 0:   # NumPy's loop `for pv in p` over a 0-d array: its TypeError
        iter(np.zeros(()))
    if shape_of(p)[0] == 0:   # NumPy's zeros_like(asanyarray(x)): x's dtype, an array
        return N.zeros_like(x if _is_array(x) else np.asarray(x))
    # (p of more dimensions: its rows are the coefficients, each an array, as in NumPy)
    y = N.zeros_like(x, dtype=np.result_type(_dtype(p), _dtype(x))) if _is_array(x) else 0
    for i in range(shape_of(p)[0]):
        y = N.add(N.multiply(y, x), N.getitem(p, i))
    return y


spell_composite(np.polyval, ("multiply", "add", "getitem"),
                lambda p, x: Composite(_polyval, (p, x)), "numpy.polyval")


# ---- selection and counting -------------------------------------------------------------------

def _select(condlist, choicelist, default):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(choicelist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    for i, c in enumerate(condlist):
        if _dtype(c) != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    dtype = np.result_type(*[_dtype(v) if _is_array(v) else v for v in list(choicelist) + [default]])

    def cast(v, casting):    # NumPy copies a Python number in as an array of its own dtype:
        # the default unsafely (np.select([c], [x], default=-1) of a uint8 x is 255 where it
        # is not c), a choice as np.copyto does ('same_kind': a Python int into uint8 raises)
        if _is_array(v):
            return v
        if not np.can_cast(_dtype(v), dtype, casting):
            raise TypeError(f"Cannot cast array data from {_dtype(v)!r} to {dtype!r} according to the "
                            f"rule {casting!r}")
        return N.method("astype", N.asarray(v), dtype)
    out = cast(default, "unsafe")
    for cond, choice in zip(reversed(condlist), reversed(choicelist)):
        out = N.where(cond, cast(choice, "same_kind"), out)
    shape = np.broadcast_shapes(*[shape_of(v) for v in list(condlist) + list(choicelist)])
    if tuple(shape_of(out)) != shape:
        out = N.broadcast_to(out, shape)
    return N.method("astype", out, dtype) if _dtype(out) != dtype else out


spell_composite(np.select, ("where",),
                lambda condlist, choicelist, default=0: Composite(
                    _select, (list(condlist), list(choicelist), default)), "numpy.select")


def _count_nonzero(a, axis, keepdims):
    return N.sum(N.not_equal(a, 0), axis=axis, dtype=np.intp, keepdims=keepdims)


# With no axis, older NumPy returns a Python int (converted where it leaves the graph),
# NumPy 2.4 an np.intp (the sum's own scalar): the installed NumPy's type decides.
_COUNT_TYPE = type(np.count_nonzero(np.ones(2)))


def _count_nonzero_normalize(a, axis=None, *, keepdims=False):
    python = _COUNT_TYPE if axis is None and not keepdims and _COUNT_TYPE is int else None
    return Composite(_count_nonzero, (a,), {"axis": axis, "keepdims": bool(keepdims)},
                     python=python)


spell_composite(np.count_nonzero, ("not_equal", "sum"), _count_nonzero_normalize,
                "numpy.count_nonzero")


# ---- small elementwise and shape helpers NumPy users reach for -------------------------------

def _signed_inf(a: Any, sign: int) -> Any:
    if _dtype(a).kind == "c":   # NumPy's signbit has no complex loop
        raise TypeError(f"This operation is not supported for {_dtype(a)} values because it "
                        f"would be ambiguous.")
    return N.logical_and(N.isinf(a), N.greater(a, 0) if sign > 0 else N.less(a, 0))


spell_composite(np.isposinf, ("isinf", "greater"), lambda x, out=None: Composite(
    _signed_inf, (x,), {"sign": 1}, out), "numpy.isposinf")
spell_composite(np.isneginf, ("isinf", "less"), lambda x, out=None: Composite(
    _signed_inf, (x,), {"sign": -1}, out), "numpy.isneginf")


def _constant_answer(a: Any, value: bool) -> Any:
    """np.iscomplex / np.isreal of a real array: all ``value``; of a 0-d one a NumPy bool,
    as NumPy's ``res[()]`` and ``imag(x) == 0`` give."""
    return scalar_if_0d((N.ones if value else N.zeros)(shape_of(a), dtype=bool))


spell_composite(np.iscomplex, ("imag", "not_equal"), lambda x: Composite(
    lambda a: N.not_equal(N.imag(a), 0) if _dtype(a).kind == "c" else _constant_answer(a, False),
    (x,)), "numpy.iscomplex")
spell_composite(np.isreal, ("imag", "equal"), lambda x: Composite(
    lambda a: N.equal(N.imag(a), 0) if _dtype(a).kind == "c" else _constant_answer(a, True),
    (x,)), "numpy.isreal")


def _sinc(x):
    # NumPy >= 2.2 (gh-27784): pi * x first, then zeros become the dtype's eps; the older
    # 1e-20 underflows in float16 and gave nan at 0.
    y = N.multiply(np.pi, x)
    kind = _dtype(y).kind
    eps = float(np.finfo(_dtype(y)).eps) if kind == "f" else 1.0e-20
    y = N.where(N.not_equal(y, 0), y, eps)
    return N.true_divide(N.sin(y), y)


spell_composite(np.sinc, ("sin", "true_divide", "where"), lambda x: Composite(_sinc, (x,)), "numpy.sinc")


def _ediff1d(ary, to_end, to_begin):
    for name, v in (("to_begin", to_begin), ("to_end", to_end)):
        if v is not None and not np.can_cast(_dtype(v), _dtype(ary), casting="same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under "
                            f"the `same_kind` rule.")
    flat = N.ravel(ary)
    d = N.subtract(N.getitem(flat, (slice(1, None),)), N.getitem(flat, (slice(None, -1),)))
    parts = [N.ravel(N.asarray(v, dtype=_dtype(ary))) for v in (to_begin,) if v is not None] + [d] + \
        [N.ravel(N.asarray(v, dtype=_dtype(ary))) for v in (to_end,) if v is not None]
    return N.concatenate(parts) if len(parts) > 1 else d


spell_composite(np.ediff1d, ("ravel", "subtract", "concatenate"),
                lambda ary, to_end=None, to_begin=None: Composite(
                    _ediff1d, (ary,), {"to_end": to_end, "to_begin": to_begin}), "numpy.ediff1d")


def _trapezoid(y, x, dx, axis):
    y, x = array_like(y), None if x is None else array_like(x)
    nd = ndim_of(y)
    axis = normalize_one_axis(axis, nd)
    hi = N.getitem(y, _slice_along(nd, axis, slice(1, None)))
    lo = N.getitem(y, _slice_along(nd, axis, slice(None, -1)))
    if x is None:
        width = dx
    else:
        d = N.diff(x)
        if ndim_of(x) == 1 and nd > 1:
            d = N.reshape(d, tuple(-1 if i == axis else 1 for i in range(nd)))
        width = d
    return N.sum(N.multiply(N.multiply(width, N.add(hi, lo)), 0.5), axis=axis)


spell_composite(np.trapezoid, ("getitem", "add", "multiply", "sum"),
                lambda y, x=None, dx=1.0, axis=-1: Composite(
                    _trapezoid, (y, x), {"dx": dx, "axis": axis}), "numpy.trapezoid")


def _broadcast_arrays(*args):
    # NumPy hands back an argument that already has the broadcast shape itself, and
    # views of the others that are writeable with a warning (not broadcast_to's read-only):
    # the op does both at run time. (Not ``a`` itself here: under dynamic sizes the shapes
    # this sees are the example's, and only an op's shape param ties them at run time; a
    # (3,) and a (4,) came back unbroadcast, no ValueError.)
    shape = np.broadcast_shapes(*[tuple(shape_of(a)) for a in args])
    return tuple(F.broadcast_arrays_view(a, shape=shape) for a in args)


spell_composite(np.broadcast_arrays, ("broadcast_arrays_view",),
                lambda *args, subok=False: Composite(_broadcast_arrays, tuple(args)),
                "numpy.broadcast_arrays")


def _vander(x, N_, increasing):
    m = shape_of(x)[0]
    n = m if N_ is None else N_
    # NumPy's vander has x's dtype promoted with int64: int8 or bool x gives int64 powers
    # (no wrapping at int8), float32 x float64 ones
    dt = np.promote_types(_dtype(x), np.int64)
    column = N.reshape(x, (-1, 1))
    column = column if _dtype(x) == dt else N.method("astype", column, dt)
    # NumPy's columns: 1, then multiply.accumulate of x (x, x * x, (x * x) * x, ...): the
    # same products in the same order give its values (x ** k by pow rounds otherwise: 2240
    # of 90x40 float64 values differed, and 3600 pows took 2x NumPy's time)
    table = F.full(1, shape=(m, min(n, 1)), dtype=dt)
    if n > 1:
        powers = F.cumprod(F.broadcast_to(column, shape=(m, n - 1)), axis=1)
        table = F.concatenate((table, powers), axis=1)
    if increasing:
        return table
    return F.ascontiguousarray(F.getitem(table, (slice(None), slice(None, None, -1))))


spell_composite(np.vander, ("reshape", "full", "broadcast_to", "cumprod", "concatenate", "getitem",
                            "ascontiguousarray"),
                lambda x, N=None, increasing=False: Composite(_vander, (x,), {"N_": N, "increasing": bool(increasing)}),
                "numpy.vander")
# Predicates of the type or dtype only: Python answers, known while capturing.
spell_composite(np.iscomplexobj, (), lambda x: Composite(lambda a: _dtype(a).kind == "c", (x,)),
                "numpy.iscomplexobj")
spell_composite(np.isrealobj, (), lambda x: Composite(lambda a: _dtype(a).kind != "c", (x,)),
                "numpy.isrealobj")
spell_composite(np.shape, (), lambda a: Composite(lambda a: tuple(shape_of(a)), (a,), attribute="shape"),
                "numpy.shape")
spell_composite(np.ndim, (), lambda a: Composite(lambda a: len(shape_of(a)), (a,), attribute="ndim"),
                "numpy.ndim")


def _size(a, axis):
    # NumPy's own np.size on the shape (its axis checks and errors, its version's axis forms)
    shape = tuple(shape_of(a))
    return np.size(SimpleNamespace(shape=shape, size=math.prod(shape)), axis)


spell_composite(np.size, (), lambda a, axis=None: Composite(_size, (a,), {"axis": axis},
                                                            attribute="size" if axis is None else None),
                "numpy.size")


isin = declare("isin", Category.EXTERN,
               lambda element, test_elements, invert=False, kind=None:
               np.isin(element, test_elements, invert=invert, kind=kind),
               inputs=("element", "test_elements"), params={"invert": False, "kind": None},
               doc="numpy.isin, by NumPy (it sorts or tabulates): for test sets too large to "
                   "compare every element with every test element")
# Up to this many test elements, every element is compared with each of them: one fused
# comparison and any per element (NumPy itself loops over a small test set the same way).
# Past it, or when the size is known only at run time, that is O(n * m) work where NumPy's
# sort or table is O((n + m) log): 25x slower for 1,000 elements in 1,000.
_ISIN_FUSED_MAX = 16


def _isin(element, test_elements, invert, kind):
    m = shape_of(test_elements)
    fused = kind is None and all(isinstance(d, int) for d in m) and np.prod(m) <= _ISIN_FUSED_MAX
    # (not for an empty element array: the any over it would not have NumPy's strides;
    # sizes 0 stay static under dynamic shapes)
    if not fused or 0 in shape_of(element):
        return F.isin(element, test_elements, invert=invert, kind=kind)   # kind: NumPy's checks
    flat = N.ravel(test_elements)
    # (NumPy ravels element and reshapes its answer: C order whatever element's layout)
    hit = N.any(N.equal(N.reshape(element, (-1, 1)), flat), axis=-1)
    hit = N.reshape(N.logical_not(hit) if invert else hit, tuple(shape_of(element)))
    return hit


def _isin_normalize(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    element = element if _is_array(element) else np.asarray(element)
    test_elements = test_elements if _is_array(test_elements) else np.asarray(test_elements)
    return Composite(_isin, (element, test_elements), {"invert": bool(invert), "kind": kind})


spell_composite(np.isin, ("equal", "any", "reshape", "isin"), _isin_normalize, "numpy.isin")
