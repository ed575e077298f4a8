"""Statistics as composite spellings (see kiln/ops/numeric.py): the NaN-aware reductions
(``np.nansum`` ... ``np.nancumprod``), weighted statistics (``np.average``, ``np.cov``,
``np.corrcoef``), and the whole-array reductions of a boolean-mask selection ``x[mask]``
written without taking it (``spell_masked``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .fp_errors import ZERO_BY_ZERO
from .meta import TensorMeta, fake, ndim_of, normalize_one_axis, on_stand_ins, reject, shape_of
from .numeric import _dtype, scalar_if_0d
from .reduction import OPS, check_index_out
from .reduction_where import compacts, where_initial
from .registry import (Composite, F, N, call_spelling, method_key, spell_composite, spell_masked,
                       ufunc_method_key)
from .value_warnings import numpy_site, runs_as_numpy, warn_where


# ---- NaN-aware reductions -------------------------------------------------------------------

# (Capture specializes a run-time small int before a composite runs: ops/registry.py
# Composite.passes_scalars; the float literals below predate that.)
def _nan_filled(a: Any, fill: Any) -> Any:
    return N.where(N.isnan(a), fill, a) if _dtype(a).kind in "fc" else a


def _nansum(a, axis, dtype, keepdims):
    return N.sum(_nan_filled(a, 0.0), axis=axis, dtype=dtype, keepdims=keepdims)


def _nanprod(a, axis, dtype, keepdims):
    return N.prod(_nan_filled(a, 1.0), axis=axis, dtype=dtype, keepdims=keepdims)


def _count(a, axis, keepdims, dtype=np.intp):
    return N.sum(N.logical_not(N.isnan(a)), axis=axis, dtype=dtype, keepdims=keepdims)


_DOF = "Degrees of freedom <= 0 for slice."
# np.nanstd's warning is np.nanvar's, at nanstd's line in NumPy's file (value_warnings.py)
_NANSTD_SITE = numpy_site(lambda: np.nanstd(np.array([np.nan])), _DOF)


def _nanmean(a, axis, dtype, keepdims, warn=True):
    if _dtype(a).kind not in "fc":
        return N.mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    if dtype is not None and not issubclass(np.dtype(dtype).type, np.inexact):
        raise TypeError("If a is inexact, then dtype must be inexact")
    total = N.sum(_nan_filled(a, 0.0), axis=axis, dtype=dtype, keepdims=keepdims)
    count = _count(a, axis, keepdims, total.dtype if dtype is None else dtype)
    empty = N.equal(count, 0.0)
    if warn:
        warn_where(empty, "Mean of empty slice")
    # NaN where a slice is all NaN, as NumPy's 0 / 0 under np.errstate(invalid="ignore"),
    # without the flag that 0 / 0 raises: no "invalid value" warning NumPy does not give
    if _dtype(total).kind == "c":
        # (a complex division by NaN raises "invalid": its loop compares the divisor's
        # parts, kiln_cdiv as NumPy's. NumPy's 0j / 0j is both parts 0 / 0's NaN)
        return N.where(empty, complex(ZERO_BY_ZERO, ZERO_BY_ZERO),
                       N.true_divide(total, N.where(empty, 1.0, count)))
    return N.true_divide(total, N.where(empty, ZERO_BY_ZERO, count))


def _nanvar(a, axis, dtype, keepdims, ddof, root=False):
    if _dtype(a).kind not in "fc":
        return (N.std if root else N.var)(a, axis=axis, dtype=dtype, keepdims=keepdims, ddof=ddof)
    mean = _nanmean(a, axis, dtype, True, warn=False)
    dev = N.where(N.isnan(a), 0.0, N.subtract(a, mean))  # only NumPy's own NaNs are skipped
    sq = N.multiply(dev, N.conjugate(dev)) if _dtype(a).kind == "c" else N.square(dev)
    if _dtype(a).kind == "c":
        sq = N.real(sq)
    total = N.sum(sq, axis=axis, dtype=dtype, keepdims=keepdims)
    n = N.subtract(_count(a, axis, keepdims, total.dtype), ddof)
    no_dof = N.less_equal(n, 0.0)
    warn_where(no_dof, _DOF, _NANSTD_SITE if root else None)
    out = N.true_divide(total, N.where(no_dof, np.nan, n))   # NumPy: NaN where dof <= 0
    return N.sqrt(out) if root else out


def _nanextremum(which: str, warn: bool = True):
    """np.nanmax/nanmin (with NumPy's "All-NaN slice encountered"), or np.fmax.reduce/
    fmin.reduce (``warn`` False: NumPy's ufunc method does not warn)."""
    reduce, fill = (N.max, -np.inf) if which == "max" else (N.min, np.inf)

    def fn(a, axis, keepdims):
        if _dtype(a).kind == "c":   # NumPy's fmin/fmax.reduce, whose complex order no fill gives
            reject(f"numpy.nan{which}", "a", "<a complex array>", "it runs as NumPy")
        if _dtype(a).kind != "f":
            return reduce(a, axis=axis, keepdims=keepdims)
        best = reduce(_nan_filled(a, fill), axis=axis, keepdims=keepdims)
        all_nan = N.all(N.isnan(a), axis=axis, keepdims=keepdims)
        if warn:
            warn_where(all_nan, "All-NaN slice encountered")
        out = N.where(all_nan, np.nan, best)
        return scalar_if_0d(out)
    return fn


def _nan_normalizer(fn, ddof_param: bool = False, dtype_param: bool = True, name: str = ""):
    def normalize(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, ddof=np._NoValue,
                  initial=np._NoValue, where=np._NoValue, **kwargs):
        if ddof is not np._NoValue and not ddof_param:     # (np.nansum(x, ddof=1): NumPy's error)
            raise TypeError(f"{name.rsplit('.', 1)[-1]}() got an unexpected keyword argument 'ddof'")
        if where is not np._NoValue or initial is not np._NoValue or kwargs:
            reject(name, "where/initial", where, "call it without kiln")
        ddof = 0 if ddof is np._NoValue else ddof
        params = {"axis": axis, "keepdims": keepdims is True}
        if dtype_param:
            params["dtype"] = dtype
        elif dtype is not None:
            reject(name, "dtype", dtype, "cast with .astype(...) first")
        if ddof_param:
            params["ddof"] = ddof
        return Composite(fn, (a,), params, out)
    return normalize


def _nan_minmax_normalize(fn, name):
    def normalize(a, axis=None, out=None, keepdims=np._NoValue, initial=np._NoValue,
                  where=np._NoValue):
        if where is not np._NoValue or initial is not np._NoValue:
            reject(name, "where/initial", where, "call it without kiln")
        return Composite(fn, (a,), {"axis": axis, "keepdims": keepdims is True}, out)
    return normalize


spell_composite(np.nansum, ("where", "isnan", "sum"), _nan_normalizer(_nansum, name="numpy.nansum"))
spell_composite(np.nanprod, ("where", "isnan", "prod"), _nan_normalizer(_nanprod, name="numpy.nanprod"))
spell_composite(np.nanmean, ("where", "isnan", "sum", "true_divide", "warn_if_any"),
                _nan_normalizer(_nanmean, name="numpy.nanmean"))
spell_composite(np.nanvar, ("where", "isnan", "sum", "square", "true_divide", "warn_if_any"),
                _nan_normalizer(lambda a, axis, dtype, keepdims, ddof: _nanvar(a, axis, dtype, keepdims, ddof),
                                ddof_param=True, name="numpy.nanvar"))
spell_composite(np.nanstd, ("where", "isnan", "sum", "square", "sqrt", "warn_if_any"),
                _nan_normalizer(lambda a, axis, dtype, keepdims, ddof: _nanvar(a, axis, dtype, keepdims, ddof, True),
                                ddof_param=True, name="numpy.nanstd"))
spell_composite(np.nanmax, ("where", "isnan", "max", "all", "warn_if_any"),
                _nan_minmax_normalize(_nanextremum("max"), "numpy.nanmax"))
spell_composite(np.nanmin, ("where", "isnan", "min", "all", "warn_if_any"),
                _nan_minmax_normalize(_nanextremum("min"), "numpy.nanmin"))


def _fminmax_reduce_normalize(ufunc: np.ufunc, which: str):
    """``np.fmax.reduce`` / ``np.fmin.reduce``: nanmax/nanmin's composite (NaNs skipped, an
    all-NaN slice gives NaN), without nanmax's "All-NaN slice" warning, as NumPy's. Its
    errors are NumPy's own, from the ufunc on a stand-in: an empty slice ("zero-size array
    to reduction operation fmax which has no identity"), a bad axis. Complex values order
    by (real, imag) with NaN rules of their own: they run as Python."""
    name = f"numpy.{ufunc.__name__}.reduce"
    extremum = _nanextremum(which, warn=False)

    def normalize(array, axis=0, dtype=None, out=None, keepdims=False, initial=np._NoValue,
                  where=True):
        if initial is not np._NoValue or where is not True:
            reject(name, "initial/where", where, "call it without kiln")
        if dtype is not None:
            reject(name, "dtype", dtype, "cast with .astype(...) first")
        kind = _dtype(array).kind
        if kind not in "biuf":
            reject(name, "an array of dtype", _dtype(array), "call it without kiln")
        shape = shape_of(array)
        if all(type(n) is int for n in shape):
            on_stand_ins(ufunc.reduce, fake(TensorMeta(shape, _dtype(array))), axis=axis,
                         keepdims=bool(keepdims))
        else:
            reject(name, "an array of run-time sizes", shape, "call it without kiln")
        return Composite(extremum, (array,), {"axis": axis, "keepdims": bool(keepdims)}, out)
    return normalize


spell_composite(ufunc_method_key(np.fmax, "reduce"), ("where", "isnan", "max", "all"),
                _fminmax_reduce_normalize(np.fmax, "max"), "numpy.fmax.reduce")
spell_composite(ufunc_method_key(np.fmin, "reduce"), ("where", "isnan", "min", "all"),
                _fminmax_reduce_normalize(np.fmin, "min"), "numpy.fmin.reduce")


def _nancum(kind: str):
    def fn(a, axis, dtype):
        filled = _nan_filled(a, 0 if kind == "sum" else 1)
        return (N.cumsum if kind == "sum" else N.cumprod)(filled, axis=axis, dtype=dtype)
    return fn


spell_composite(np.nancumsum, ("where", "isnan", "cumsum"),
                lambda a, axis=None, dtype=None, out=None: Composite(_nancum("sum"), (a,), {"axis": axis, "dtype": dtype}, out),
                "numpy.nancumsum")
spell_composite(np.nancumprod, ("where", "isnan", "cumprod"),
                lambda a, axis=None, dtype=None, out=None: Composite(_nancum("prod"), (a,), {"axis": axis, "dtype": dtype}, out),
                "numpy.nancumprod")


# ---- weighted statistics --------------------------------------------------------------------

def _average(a, weights, axis, returned, keepdims):
    if weights is None:
        avg = N.mean(a, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        n = np.prod([shape_of(a)[i] for i in (range(ndim_of(a)) if axis is None else
                                              np.atleast_1d(axis))]) if ndim_of(a) else 1
        return avg, scalar_if_0d(N.full_like(avg, n))   # NumPy's avg.dtype.type(n) when 0-d
    w = weights
    if shape_of(w) != shape_of(a):
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if ndim_of(w) != 1:
            raise TypeError("1D weights expected when shapes of a and weights differ.")
        ax = normalize_one_axis(axis, ndim_of(a))
        if shape_of(w)[0] != shape_of(a)[ax]:
            raise ValueError("Length of weights not compatible with specified axis.")
        w = N.reshape(w, tuple(shape_of(w)[0] if i == ax else 1 for i in range(ndim_of(a))))
    dt = np.result_type(_dtype(a), _dtype(w), *(("f8",) if _dtype(a).kind in "biu" else ()))
    spread = w if tuple(shape_of(w)) == tuple(shape_of(a)) else N.broadcast_to(w, tuple(shape_of(a)))
    wsum = N.sum(spread, axis=axis, dtype=dt, keepdims=keepdims)
    wsum = F.nonzero_or_raise(wsum, message="Weights sum to zero, can't be normalized",
                              error="ZeroDivisionError")
    # NumPy multiplies in the result dtype: uint8 counts times uint8 weights must not wrap
    prod = N.multiply(N.asarray(a, dtype=dt), N.asarray(w, dtype=dt))
    avg = N.true_divide(N.sum(prod, axis=axis, dtype=dt, keepdims=keepdims), wsum)
    return (avg, scalar_if_0d(N.broadcast_to(wsum, tuple(shape_of(avg))))) if returned else avg


def _average_normalize(a, axis=None, weights=None, returned=False, *, keepdims=np._NoValue):
    if axis is not None:      # (NumPy's errors for a bad axis: "axis: axis 2 is out of bounds ...")
        np.lib.array_utils.normalize_axis_tuple(axis, ndim_of(a), argname="axis")
    # weights of a's shape, no count returned: _average spells no size (one build for all)
    relative = weights is not None and not returned and tuple(shape_of(weights)) == tuple(shape_of(a))
    return Composite(_average, (a, weights), {"axis": axis, "returned": bool(returned),
                                              "keepdims": keepdims is True}, relative_sizes=relative)


spell_composite(np.average, ("mean", "sum", "multiply", "true_divide"), _average_normalize,
                "numpy.average")


# NumPy >= 2.2 (gh-27658) transposes any 2-D m when rowvar=False, a (1, n) one too; older
# NumPy left a single row as it was: the installed NumPy decides.
_COV_T_BY_NDIM = np.cov(np.ones((1, 2)), rowvar=False, ddof=0).shape == (2, 2)


def _cov(m, y, rowvar, bias, ddof, dtype):
    if ndim_of(m) > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(_dtype(m), np.float64) if y is None else \
            np.result_type(_dtype(m), _dtype(y), np.float64)
    X = N.array(m, ndmin=2, dtype=dtype)
    if not rowvar and (ndim_of(m) != 1 if _COV_T_BY_NDIM else shape_of(X)[0] != 1):
        X = N.transpose(X)
    if y is not None:
        if ndim_of(y) > 2:
            raise ValueError("y has more than 2 dimensions")
        Y = N.array(y, ndmin=2, dtype=dtype)
        if not rowvar and shape_of(Y)[0] != 1:
            Y = N.transpose(Y)
        X = N.concatenate([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = shape_of(X)[1]
    if type(n) is int and n - ddof <= 0:
        runs_as_numpy("numpy.cov", "Degrees of freedom <= 0 for slice")
    X = N.subtract(X, N.mean(X, axis=1, keepdims=True))
    Xc = N.conjugate(X) if np.dtype(dtype).kind == "c" else X
    c = N.matmul(X, N.transpose(Xc))
    if type(n) is int:
        # NumPy's ``c *= np.true_divide(1, fact)``: times a float64 reciprocal (not / fact:
        # an ulp apart), in float64 for a float32 c, cast back by the in-place write
        wide = np.result_type(dtype, np.float64)
        c = N.multiply(c if wide == dtype else N.asarray(c, dtype=wide), np.true_divide(1, n - ddof))
        c = c if wide == dtype else N.asarray(c, dtype=dtype)
    else:
        c = N.true_divide(c, max(n - ddof, 0))
    return N.squeeze(c)


def _cov_normalize(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
                   *, dtype=None):
    if fweights is not None or aweights is not None:
        reject("numpy.cov", "fweights/aweights", fweights, "compute the weighted covariance "
               "with np.average, or call it without kiln")
    return Composite(_cov, (m, y), {"rowvar": bool(rowvar), "bias": bool(bias), "ddof": ddof,
                                    "dtype": dtype})


spell_composite(np.cov, ("mean", "subtract", "matmul", "true_divide"), _cov_normalize, "numpy.cov")


def _corrcoef(x, y, rowvar, dtype):
    c = _cov(x, y, rowvar, False, None, dtype)
    if ndim_of(c) == 0:
        return N.true_divide(c, c)
    d = N.diagonal(c)
    stddev = N.sqrt(N.real(d) if _dtype(d).kind == "c" else d)
    c = N.true_divide(c, N.reshape(stddev, (-1, 1)))
    c = N.true_divide(c, N.reshape(stddev, (1, -1)))
    if _dtype(c).kind == "c":
        return N.add(N.clip(N.real(c), -1, 1), N.multiply(N.clip(N.imag(c), -1, 1), 1j))
    return N.clip(c, -1, 1)


def _corrcoef_normalize(x, y=None, rowvar=True, *, dtype=None, **kwargs):
    return Composite(_corrcoef, (x, y), {"rowvar": bool(rowvar), "dtype": dtype})


spell_composite(np.corrcoef, ("mean", "matmul", "diagonal", "sqrt", "true_divide", "clip"),
                _corrcoef_normalize, "numpy.corrcoef")


# ---- reductions of a boolean-mask selection x[mask], without taking it ---------------------

def _masked_reduction(kind: str, key: Any):
    def form(x, mask, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if axis is not None or out is not None or keepdims or kwargs:
            return None  # the selection is 1-D: only whole reductions are written here
        # float (and complex) sums of the selection in NumPy's order (selected_sum); integer
        # sums are exact in any order: the sum of the mask-filled whole array
        compact = compacts(x, dtype, kind == "mean")
        if kind == "sum" and compact:
            return Composite(lambda a, m: F.selected_sum(a, m, dtype=dtype), (x, mask),
                             relative_sizes=True)
        if kind == "sum":   # (neither spells a size of x: one build for every length)
            return Composite(lambda a, m: N.sum(N.where(m, a, 0), dtype=dtype), (x, mask),
                             relative_sizes=True)
        if kind == "mean" and compact:   # NumPy's where= mean (its warnings), of that sum
            name = "numpy.mean" if key is np.mean else "ndarray.mean"
            return where_initial(OPS["mean"], name, x, None, None, False, mask, None, dtype, {},
                                 compact=True)
        if kind == "mean":   # the mean over the mask: NumPy's own where= reduction
            # (its own spelling: NumPy's "Mean of empty slice" points where the call's does)
            return Composite(lambda a, m: call_spelling(key, a, dtype=dtype, where=m), (x, mask))
        return None
    return form


for _key, _kind in ((np.sum, "sum"), (method_key("sum"), "sum"), (np.mean, "mean"),
                    (method_key("mean"), "mean")):
    spell_masked(_key, _masked_reduction(_kind, _key))


def _nanarg(which: str):
    """np.nanargmin/nanargmax: NaNs filled with +inf (-inf), NumPy's ValueError when a
    slice is all NaN (checked by ``nonzero_or_raise`` on the slices that are not)."""
    reduce, fill = (N.argmax, -np.inf) if which == "max" else (N.argmin, np.inf)

    def fn(a, axis, keepdims):
        if _dtype(a).kind not in "fc":   # (complex: NumPy's own fill too, complex(inf, 0))
            return reduce(a, axis=axis, keepdims=keepdims)
        best = reduce(_nan_filled(a, fill), axis=axis, keepdims=keepdims)
        some = N.any(N.logical_not(N.isnan(a)), axis=axis, keepdims=keepdims)
        checked = F.nonzero_or_raise(some, message="All-NaN slice encountered")
        out = N.where(checked, best, best)   # the check stays in the graph
        return scalar_if_0d(out)
    return fn


def _nanarg_normalize(fn, name):
    def normalize(a, axis=None, out=None, *, keepdims=np._NoValue):
        check_index_out(out)
        return Composite(fn, (a,), {"axis": axis, "keepdims": keepdims is True}, out)
    return normalize


spell_composite(np.nanargmin, ("where", "isnan", "argmin", "nonzero_or_raise"),
                _nanarg_normalize(_nanarg("min"), "numpy.nanargmin"))
spell_composite(np.nanargmax, ("where", "isnan", "argmax", "nonzero_or_raise"),
                _nanarg_normalize(_nanarg("max"), "numpy.nanargmax"))
