"""Sorting, searching, order statistics and interpolation (histograms: histograms.py).

These are EXTERN ops: every backend calls NumPy's kernel (a sort does not fuse). Their
shape rules run the kernel on zero-stride fakes of the right shape (``meta=None``), so
NumPy's own errors come out for bad arguments. ``sort`` and ``partition`` are
differentiable (the cotangent goes back to where each value came from, through
``argsort``/``argpartition``); the integer-valued ones (``argsort``, ``searchsorted``,
``digitize``, histogram counts) have nothing to differentiate; order statistics
(``median``, ``percentile``, ``quantile``) and ``interp`` have no derivative rule yet.
"""
from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

from ..errors import NoDerivative
from .meta import (TensorMeta, from_result, ndim_of, normalize_axis, normalize_one_axis, on_stand_ins,
                   reject, shape_of, to_fake)
from .reduction import dtype_of, keep
from .registry import (Bound, Category, Composite, F, N, declare, is_float_like, method_key, spell,
                       spell_composite)
from .value_warnings import ufunc_at


def _axis(axis: Any, x: Any) -> int | None:
    return None if axis is None else normalize_one_axis(axis, max(ndim_of(x), 1))


def _kind(name: str, kind: Any, stable: Any) -> str | None:
    # NumPy's own checks, on a stand-in: kind and stable together (ValueError), a kind
    # that is not a str (TypeError), one it does not know; it takes 'quick', 'Q'...
    np.sort(np.zeros(1), kind=kind, stable=stable)
    return "stable" if stable else kind


# ---- sort, argsort, partition ------------------------------------------------------------------

def _scatter_back(g: Any, x: Any, idx: Any, axis: int | None) -> Any:
    """The cotangent of a permutation along ``axis`` (``idx`` from argsort/argpartition)."""
    if axis is None:
        flat = F.put_along_axis_add(F.zeros(shape=(int(np.prod(shape_of(x))),), dtype=g.dtype),
                                    idx, g, axis=0)
        return (F.reshape(flat, shape=tuple(shape_of(x))),)
    return (F.put_along_axis_add(F.zeros_like(g), idx, g, axis=axis),)


sort = declare("sort", Category.EXTERN, lambda x, axis=-1, kind=None: np.sort(x, axis=axis, kind=kind),
               inputs=("x",), params={"axis": -1, "kind": None},
               vjp=lambda g, out, x, axis, kind: _scatter_back(
                   g, x, F.argsort(x if axis is not None else F.ravel(x),
                                   axis=axis if axis is not None else 0, kind=kind), axis),
               doc="numpy.sort (a sorted copy); axis None sorts the flattened array")
argsort = declare("argsort", Category.EXTERN,
                  lambda x, axis=-1, kind=None: np.argsort(x, axis=axis, kind=kind),
                  inputs=("x",), params={"axis": -1, "kind": None},
                  doc="numpy.argsort / ndarray.argsort: the indices that sort x")


def _sort_normalizer(op, name):
    def normalize(a, axis=-1, kind=None, order=None, *, stable=None):
        if order is not None:
            reject(name, "order", order, "structured arrays are not supported by kiln")
        return Bound(op, (a,), {"axis": _axis(axis, a), "kind": _kind(name, kind, stable)})
    return normalize


spell(np.sort, sort, _sort_normalizer(sort, "numpy.sort"), "numpy.sort")
spell(np.argsort, argsort, _sort_normalizer(argsort, "numpy.argsort"), "numpy.argsort")
spell(method_key("argsort"), argsort, _sort_normalizer(argsort, "ndarray.argsort"), "ndarray.argsort")


def _sort_in_place(a, axis, kind):
    N.copyto(a, F.sort(a, axis=axis, kind=kind))   # (None, as NumPy's method returns)


def _sort_method_normalize(a, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        reject("ndarray.sort", "order", order, "structured arrays are not supported by kiln")
    return Composite(_sort_in_place, (a,), {"axis": normalize_one_axis(operator.index(axis), max(ndim_of(a), 1)),
                                            "kind": _kind("ndarray.sort", kind, stable)})


spell_composite(method_key("sort"), ("sort", "copyto"), _sort_method_normalize, "ndarray.sort")


def _partition_vjp(g, out, x, kth, axis):
    ax = axis if axis is not None else 0
    src = x if axis is not None else F.ravel(x)
    return _scatter_back(g, x, F.argpartition(src, kth=kth, axis=ax), axis)


partition = declare("partition", Category.EXTERN,
                    lambda x, kth, axis=-1: np.partition(x, kth, axis=axis),
                    inputs=("x",), params={"kth": 0, "axis": -1}, vjp=_partition_vjp,
                    doc="numpy.partition: x with the kth element(s) in sorted position")
argpartition = declare("argpartition", Category.EXTERN,
                       lambda x, kth, axis=-1: np.argpartition(x, kth, axis=axis),
                       inputs=("x",), params={"kth": 0, "axis": -1},
                       doc="numpy.argpartition: the indices that partition x")


def _partition_normalizer(op, name):
    def normalize(a, kth, axis=-1, kind="introselect", order=None):
        if order is not None:
            reject(name, "order", order, "structured arrays are not supported by kiln")
        np.partition(np.zeros(1), 0, kind=kind)   # NumPy's check of kind (kind=1: TypeError)
        if isinstance(kth, (list, tuple)) or hasattr(kth, "shape"):
            kth = tuple(int(k) for k in np.asarray(kth).ravel().tolist()) if not hasattr(kth, "var") \
                else reject(name, "kth", "<array>", "pass kth as an int or a list of ints")
        else:
            kth = operator.index(kth)
        return Bound(op, (a,), {"kth": kth, "axis": _axis(axis, a)})
    return normalize


spell(np.partition, partition, _partition_normalizer(partition, "numpy.partition"), "numpy.partition")
spell(np.argpartition, argpartition, _partition_normalizer(argpartition, "numpy.argpartition"),
      "numpy.argpartition")


def _searchsorted_impl(a, v, side="left"):
    return np.searchsorted(a, v, side=side)


searchsorted = declare("searchsorted", Category.EXTERN, _searchsorted_impl, inputs=("a", "v"),
                       params={"side": "left"},
                       doc="numpy.searchsorted(a, v, side): insertion points of v in sorted a")


def _searchsorted_sorter_impl(a, v, sorter, side="left"):
    return np.searchsorted(a, v, side=side, sorter=sorter)


# Not a[sorter] searched: NumPy raises "Sorter index out of range." for an entry of sorter
# outside [0, len(a)) that the binary search visits (a[sorter] would wrap a negative one,
# and one never visited raises nothing), which only the data decides; NumPy's own kernel
# makes that check on every backend.
searchsorted_sorter = declare("searchsorted_sorter", Category.EXTERN, _searchsorted_sorter_impl,
                              inputs=("a", "v", "sorter"), params={"side": "left"}, may_raise=True,
                              doc="numpy.searchsorted(a, v, side, sorter): insertion points of v "
                                  "in a[sorter] (sorter's entries checked where visited)")


def _searchsorted_normalize(a, v, side="left", sorter=None):
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    if sorter is not None:
        return Bound(searchsorted_sorter, (a, v, sorter), {"side": side})
    return Bound(searchsorted, (a, v), {"side": side})


spell(np.searchsorted, searchsorted, _searchsorted_normalize, "numpy.searchsorted")
spell(method_key("searchsorted"), searchsorted, _searchsorted_normalize, "ndarray.searchsorted")


def _digitize_impl(x, bins, right=False):
    return np.digitize(x, bins, right=right)


digitize = declare("digitize", Category.EXTERN, _digitize_impl, inputs=("x", "bins"),
                   params={"right": False}, may_raise=True,
                   doc="numpy.digitize: the bin of each value (bins monotonic)")
spell(np.digitize, digitize, lambda x, bins, right=False: Bound(digitize, (x, bins), {"right": bool(right)}),
      "numpy.digitize")


# ---- order statistics ------------------------------------------------------------------------

_QUANTILES = {"quantile": np.quantile, "nanquantile": np.nanquantile}
# np.median is not np.quantile(x, 0.5): it averages the middle two values (quantile
# interpolates, which rounds differently in about one call in five), takes bool arrays,
# and runs 2-4x faster (np.nanmedian on short axes far more: nanquantile goes column by column)
_MEDIANS = {"median": np.median, "nanmedian": np.nanmedian}


def _valid_quantiles(q) -> bool:
    return bool(np.all(0 <= q) and np.all(q <= 1))     # NaN fails, as in NumPy


def _quantile_impl(x, q, axis=None, method="linear", keepdims=False, kind="quantile",
                   percent=False, at=None):
    if percent and not _valid_quantiles(q):   # q arrived divided by 100: percentile's words
        raise ValueError("Percentiles must be in the range [0, 100]")
    call = _MEDIANS[kind] if kind in _MEDIANS else _QUANTILES[kind]
    if at is not None:   # called from the user's line, where NumPy's warnings point
        call = ufunc_at(call, at[0], at[1])
    if kind in _MEDIANS:   # q is 0.5, method linear
        return call(x, axis=axis, keepdims=keepdims)
    return call(x, q, axis=axis, method=method, keepdims=keepdims)


def _quantile_impl_at(filename: str, lineno: int, impl: Any = _quantile_impl) -> Any:
    """Op.impl_at: np.nanmedian's "All-NaN slice encountered" points at the line calling
    it (stacklevel 2), the user's, not this file."""
    return functools.partial(impl, at=(filename, lineno))


# The weight of the element ranked lo + 1 (lo = floor(pos), t = pos - lo, pos = q * (m - 1))
# for NumPy's methods of that virtual index; lo's weight is 1 minus it: linear interpolates,
# lower takes lo, higher ceil(pos), midpoint the two halves (lo alone at a whole pos),
# nearest np.around(pos) (half to even).
_STEP_WEIGHT = {
    "linear": lambda pos, lo, t: t,
    "lower": lambda pos, lo, t: F.multiply(t, 0.0),
    "higher": lambda pos, lo, t: F.multiply(F.greater(t, 0.0), 1.0),
    "midpoint": lambda pos, lo, t: F.multiply(F.greater(t, 0.0), 0.5),
    "nearest": lambda pos, lo, t: F.subtract(F.rint(pos), lo),
}


def _quantile_vjp(g, out, x, q, axis=None, method="linear", keepdims=False, kind="quantile",
                  percent=False):
    """A linear quantile is ``(1 - t) * s[k] + t * s[k + 1]`` of the sorted values s at
    ``k + t = q * (m - 1)`` (m the values counted: the nan* kinds skip the NaNs, which sort
    last; a median is q = 0.5, the middle two averaged): the gradient goes to the elements
    ranked k and k + 1 (of tied values, to those sorted there). The other methods of that
    index weigh the same two elements (``_STEP_WEIGHT``)."""
    if not is_float_like(x):
        return (None, None)
    if "median" in kind:
        q = 0.5
    if method not in _STEP_WEIGHT or not isinstance(q, float) or (axis is not None and len(axis) != 1):
        raise NoDerivative(f"no derivative rule for a quantile with method={method!r}, a "
                           f"quantile array or several axes; detach it or compute it under "
                           f"kiln.no_grad()")
    flat, ax = (F.reshape(x, shape=(-1,)), 0) if axis is None else (x, axis[0])
    rank = F.argsort(F.argsort(flat, axis=ax, kind="stable"), axis=ax, kind="stable")
    valid = F.logical_not(F.isnan(flat)) if kind.startswith("nan") else F.ones_like(flat, dtype=np.dtype(bool))
    pos = F.multiply(F.subtract(F.sum(valid, axis=(ax,), keepdims=True), 1), q)
    lo = F.floor(pos)
    t = _STEP_WEIGHT[method](pos, lo, F.subtract(pos, lo))
    w = F.add(F.multiply(F.equal(rank, lo), F.subtract(1.0, t)),
              F.multiply(F.equal(rank, F.add(lo, 1)), t))
    w = F.multiply(w, valid)     # a lane of NaNs only (m = 0) has none to give it to
    grad = F.multiply(keep(g, x, axis, keepdims), F.reshape(w, shape=shape_of(x)) if axis is None else w)
    return (grad, None)


def _quantile_meta(x, q, axis=None, method="linear", keepdims=False, kind="quantile", percent=False):
    """q's shape, then x's without the axes (ones with keepdims); the dtype NumPy gives on
    a stand-in of one element per axis. (Not the kernel on stand-ins of x's size: nan*
    quantiles go lane by lane in Python, and capture's size probes of a dynamic dim make
    stand-ins thousands of lanes long: 3-12 s to capture np.nanquantile(x, q, axis=1).)"""
    shape = tuple(shape_of(x))
    one = (lambda v: TensorMeta((1,) * len(v.shape), v.dtype) if isinstance(v, TensorMeta) else v) \
        if 0 not in shape else (lambda v: v)   # (an empty x: NumPy's own error, or result)
    got = from_result(on_stand_ins(_quantile_impl, *to_fake((one(x), one(q))), axis=axis, method=method,
                                   keepdims=keepdims, kind=kind, percent=percent))
    if 0 in shape:
        return got
    q_shape = () if kind in _MEDIANS else tuple(shape_of(q)) if hasattr(q, "shape") else np.shape(q)
    axes = range(len(shape)) if axis is None else axis
    rest = tuple(1 if i in axes else d for i, d in enumerate(shape)) if keepdims else \
        tuple(d for i, d in enumerate(shape) if i not in axes)
    return TensorMeta(tuple(q_shape) + rest, got.dtype)


def _runtime_quantiles(x: Any, q: Any = None) -> bool:
    """A quantile the program computes may fall outside [0, 1] (NumPy's ValueError), so the
    call stays in the graph even when nothing uses its value."""
    return hasattr(q, "graph")


quantile = declare("quantile", Category.EXTERN, _quantile_impl, inputs=("x", "q"),
                   params={"axis": None, "method": "linear", "keepdims": False, "kind": "quantile",
                           "percent": False},
                   meta=_quantile_meta, vjp=_quantile_vjp, vjp_refuses=True, raises_for=_runtime_quantiles,
                   impl_at=_quantile_impl_at,
                   doc="numpy.quantile/percentile/median and their nan* forms (q in [0, 1]; "
                       "kind 'nanquantile' ignores NaNs, 'median'/'nanmedian' run NumPy's median; "
                       "percent: q was a percentile divided by 100, for the error's words)")


def _quantile_normalizer(name: str, scale: float, kind: str, fixed_q: Any = None):
    def normalize(a, q=None, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
        if weights is not None:
            reject(name, "weights", "<array>", "call it without kiln")
        if interpolation is not None:
            method = interpolation
        qv = fixed_q if fixed_q is not None else q
        if isinstance(qv, (list, tuple)):
            qv = np.asarray(qv)
        axis = normalize_axis(axis, ndim_of(a))
        # (_quantile_call reads no size of a: a dynamic length stays dynamic, a median of
        # x[~mask] that shrinks each call keeps its entry)
        return Composite(_quantile_call, (a, qv), {"axis": axis, "method": method,
                                                   "keepdims": bool(keepdims), "kind": kind,
                                                   "scale": scale}, out, relative_sizes=True)
    return normalize


def _quantile_call(x, q, axis, method, keepdims, kind, scale):
    if not hasattr(q, "shape") or isinstance(q, np.ndarray):
        q = np.true_divide(np.asarray(q, dtype=np.float64), scale)
        if not _valid_quantiles(q):
            raise ValueError("Percentiles must be in the range [0, 100]" if scale != 1.0
                             else "Quantiles must be in the range [0, 1]")
        if q.ndim == 0:
            q = float(q)
    elif scale != 1.0:
        q = F.true_divide(q, scale)
        return F.quantile(x, q, axis=axis, method=method, keepdims=keepdims, kind=kind,
                          percent=True)
    return F.quantile(x, q, axis=axis, method=method, keepdims=keepdims, kind=kind)


spell_composite(np.quantile, ("quantile",), _quantile_normalizer("numpy.quantile", 1.0, "quantile"))
spell_composite(np.percentile, ("quantile",), _quantile_normalizer("numpy.percentile", 100.0, "quantile"))
spell_composite(np.nanquantile, ("quantile",), _quantile_normalizer("numpy.nanquantile", 1.0, "nanquantile"))
spell_composite(np.nanpercentile, ("quantile",),
                _quantile_normalizer("numpy.nanpercentile", 100.0, "nanquantile"))


def _median_normalizer(name: str, kind: str):
    q = _quantile_normalizer(name, 1.0, kind, fixed_q=0.5)

    def normalize(a, axis=None, out=None, overwrite_input=False, keepdims=False):
        return q(a, None, axis, out, overwrite_input, "linear", keepdims)
    return normalize


spell_composite(np.median, ("quantile",), _median_normalizer("numpy.median", "median"))
spell_composite(np.nanmedian, ("quantile",), _median_normalizer("numpy.nanmedian", "nanmedian"))


# ---- interpolation -----------------------------------------------------------------------------

def _interp_impl(x, xp, fp, left=None, right=None, period=None):
    return np.interp(x, xp, fp, left=left, right=right, period=period)


def _interp_vjp(g, out, x, xp, fp, left=None, right=None, period=None):
    """y = fp[j] + t (fp[j+1] - fp[j]) on xp[j] <= x < xp[j+1], t = (x - xp[j]) / (xp[j+1] - xp[j]):
    x gets the segment's slope; fp[j], fp[j+1] get 1 - t and t (scattered with index_add);
    xp[j], xp[j+1] get slope (t - 1) and -slope t. Outside xp, y is left/right (or fp's end
    value when they are None, and fp[-1] at x == xp[-1]), which only fp's ends can feed."""
    if period is not None:
        raise NoDerivative("Differentiation rule for 'interp' with period= not implemented; "
                           "detach the inputs (x.detach()) or compute it under kiln.no_grad()")
    n = shape_of(xp)[0]
    first, last = F.getitem(xp, (0,)), F.getitem(xp, (n - 1,))
    below, above, at_end = F.less(x, first), F.greater(x, last), F.equal(x, last)
    inside = F.logical_and(F.greater_equal(x, first), F.less(x, last))
    j = F.clip(F.subtract(F.searchsorted(xp, x, side="right"), 1), 0, max(n - 2, 0))
    k = F.add(j, 1) if n > 1 else j
    x0, x1, f0, f1 = F.take(xp, j), F.take(xp, k), F.take(fp, j), F.take(fp, k)
    width = F.subtract(x1, x0)
    t = F.true_divide(F.subtract(x, x0), width)
    slope = F.true_divide(F.subtract(f1, f0), width)
    w0 = F.where(inside, F.multiply(g, F.subtract(1.0, t)), 0.0)   # (where: t is nan off xp
    w1 = F.where(inside, F.multiply(g, t), 0.0)                    # when xp has one point)
    if left is None:
        w0 = F.add(w0, F.where(below, g, 0.0))
    w1 = F.add(w1, F.where(F.logical_or(at_end, above) if right is None else at_end, g, 0.0))
    zeros = F.zeros(shape=(n,), dtype=dtype_of(fp))
    gfp = F.index_add(F.index_add(zeros, (j,), w0), (k,), w1)
    gs = F.where(inside, F.multiply(g, slope), 0.0)
    zeros = F.zeros(shape=(n,), dtype=dtype_of(xp))
    gxp = F.index_add(F.index_add(zeros, (j,), F.where(inside, F.multiply(gs, F.subtract(t, 1.0)), 0.0)),
                      (k,), F.where(inside, F.negative(F.multiply(gs, t)), 0.0))
    return (gs if hasattr(x, "shape") else None), gxp, gfp


interp = declare("interp", Category.EXTERN, _interp_impl, inputs=("x", "xp", "fp"),
                 params={"left": None, "right": None, "period": None}, may_raise=True,
                 vjp=_interp_vjp, vjp_refuses=True,
                 doc="numpy.interp: piecewise-linear interpolation (xp increasing)")


def _interp_normalize(x, xp, fp, left=None, right=None, period=None):
    for name, v in (("left", left), ("right", right), ("period", period)):
        if hasattr(v, "shape") and not isinstance(v, np.ndarray):
            reject("numpy.interp", name, "<array>", "pass a Python number")
    return Bound(interp, (x, xp, fp), {"left": left, "right": right, "period": period})


spell(np.interp, interp, _interp_normalize, "numpy.interp")
