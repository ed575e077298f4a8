"""Histograms: np.histogram (counts and edges; equal bins over a given range fuse into a
kernel, edges from the data come with the counts from one NumPy call), np.histogram of a
selection (the ops take the mask), np.histogram_bin_edges, np.histogram2d, and the
estimators' bins ('auto', ...), whose number the data decides.

EXTERN ops calling NumPy, as in sorting.py; counts have nothing to differentiate.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .meta import TensorMeta, namespace, reject, shape_of
from .reduction import dtype_of
from .registry import Bound, Category, Composite, F, declare, spell, spell_composite, spell_masked


# ---- histograms ------------------------------------------------------------------------------

def _hist_counts(a, weights, edges, mask, bins=10, range=None, density=None):
    if mask is not None:  # np.histogram(a[mask], ...): the selection is taken in here
        a, weights = a[mask], (weights[mask] if weights is not None else None)
    return np.histogram(a, bins=edges if edges is not None else bins, range=range,
                        density=density, weights=weights)[0]


def _hist_edges(a, edges, mask, bins=10, range=None):
    if mask is not None and edges is None and range is None:  # else the data is not read
        a = a[mask]
    if edges is not None:
        return np.histogram_bin_edges(a, bins=edges)
    return np.histogram_bin_edges(a, bins=bins, range=range)


histogram_counts = declare(
    "histogram_counts", Category.EXTERN, _hist_counts, inputs=("a", "weights", "edges", "mask"),
    params={"bins": 10, "range": None, "density": None}, may_raise=True,
    doc="np.histogram(...)[0]: counts (weighted sums, densities); edges given as an array "
        "or computed from bins/range; mask (or None): the histogram of a[mask]")
histogram_bin_edges = declare(
    "histogram_bin_edges", Category.EXTERN, _hist_edges, inputs=("a", "edges", "mask"),
    params={"bins": 10, "range": None}, may_raise=True,
    doc="numpy.histogram_bin_edges (np.histogram(...)[1]), of a[mask] when a mask is given")


def _bins_param(name: str, bins: Any) -> tuple:
    """(edges input, bins param): an int count, a list of edges (a constant), or an array."""
    if isinstance(bins, str):
        reject(name, "bins", bins, "pass a number of bins or the edges")
    if hasattr(bins, "shape") and not isinstance(bins, np.ndarray):
        return bins, 10
    if isinstance(bins, (list, tuple, np.ndarray)):
        return np.asarray(bins), 10
    return None, operator.index(bins)


def _range_param(range: Any) -> Any:
    return None if range is None else tuple(float(v) for v in range)


histogram_bin_counts = declare(
    "histogram_bin_counts", Category.EXTERN,
    lambda index, bins=10: np.bincount(index, minlength=bins + 1)[:bins],
    inputs=("index",), params={"bins": 10},
    doc="the counts of a histogram from each value's bin (0..bins-1; bins: dropped): "
        "np.bincount(index, minlength=bins + 1)[:bins], one pass")


def _uniform_counts(a, mask, bins: int, lo: float, hi: float):
    """np.histogram's counts for ``bins`` equal bins over [lo, hi] of float64 ``a`` (of
    ``a[mask]``), NumPy's algorithm elementwise: the bin (a - lo) / (hi - lo) * bins, moved
    by one where it disagrees with the edge np.linspace gives (edge i is i * step + lo, the
    last one hi). Everything but the count fuses into the kernel computing ``mask``."""
    i64, f64 = np.dtype(np.int64), np.dtype(np.float64)
    step = (hi - lo) / bins

    def edge(i):
        return F.where(F.equal(i, bins), hi, F.add(F.multiply(F.astype(i, dtype=f64), step), lo))

    keep = F.logical_and(F.greater_equal(a, lo), F.less_equal(a, hi))
    if mask is not None:
        keep = F.logical_and(keep, mask)
    x = F.where(keep, a, lo)   # dropped values (nan too) go nowhere near the int cast
    i = F.astype(F.multiply(F.true_divide(F.subtract(x, lo), hi - lo), bins), dtype=i64)
    i = F.where(F.equal(i, bins), bins - 1, i)
    i = F.where(F.less(x, edge(i)), F.subtract(i, 1), i)
    i = F.where(F.logical_and(F.greater_equal(x, edge(F.add(i, 1))), F.not_equal(i, bins - 1)),
                F.add(i, 1), i)
    # dropped values count in bin ``bins``: i + (bins - i) * !keep (as arithmetic, GCC 12
    # vectorizes the loop; a where on keep, a bool also selecting a double, it does not)
    i = F.add(i, F.multiply(F.subtract(bins, i), F.logical_not(keep)))
    return F.histogram_bin_counts(F.reshape(i, shape=(-1,)), bins=bins)


def _fuses_uniformly(a, weights, edges, bins, range, density) -> bool:
    """np.histogram's equal-bin loop with a range NumPy accepts (else NumPy's own call,
    which raises where NumPy raises)."""
    if weights is not None or edges is not None or density or range is None or \
            getattr(a, "dtype", None) != np.float64 or bins < 1:
        return False
    lo, hi = range
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo >= hi:
        return False
    e = np.linspace(lo, hi, bins + 1)
    closed_form = np.arange(bins + 1) * ((hi - lo) / bins) + lo   # _uniform_counts' edges
    closed_form[-1] = hi
    return bool(np.all(e[:-1] < e[1:])) and np.array_equal(e, closed_form)


def _hist_both_impl(a, weights, mask, bins=10, density=None):
    if mask is not None:
        a, weights = a[mask], (weights[mask] if weights is not None else None)
    counts, edges = np.histogram(a, bins=bins, density=density, weights=weights)
    # (made where the inputs live: a CuPy array's results stay on its GPU)
    dtype = np.result_type(counts.dtype, edges.dtype)   # (exact: counts < 2**53)
    out = namespace(counts, edges).empty(bins + bins + 1, dtype)
    out[:bins] = counts
    out[bins:] = edges
    return out


histogram_both = declare(
    "histogram_both", Category.EXTERN, _hist_both_impl, inputs=("a", "weights", "mask"),
    params={"bins": 10, "density": None}, may_raise=True, fresh_result=True,
    doc="np.histogram(...) with edges from the data (no range): its counts, then its edges, "
        "side by side in one array of both dtypes' result type, from one call (the edges "
        "computed by a call of their own cost 40% of a histogram of 100 values)")


def _histogram_one_call(a, weights, mask, bins, density):
    """np.histogram's (counts, edges) from one call of it: sliced from ``histogram_both``
    and cast back where their dtype is not the packed one (int64 counts)."""
    probe = np.zeros(1, dtype_of(a))
    counts, edges = np.histogram(probe, 1, density=density,
                                 weights=None if weights is None else np.zeros(1, dtype_of(weights)))
    packed = F.histogram_both(a, weights, mask, bins=bins, density=density)
    parts = (F.getitem(packed, (slice(0, bins),)), F.getitem(packed, (slice(bins, None),)))
    return tuple(p if dtype_of(p) == want.dtype else F.astype(p, dtype=want.dtype)
                 for p, want in zip(parts, (counts, edges)))


def _histogram(a, weights, edges, bins, range, density, mask=None):
    if range is None and edges is None:   # the edges depend on the data: one call for both
        return _histogram_one_call(a, weights, mask, bins, density)
    if _fuses_uniformly(a, weights, edges, bins, range, density):
        counts = _uniform_counts(a, mask, bins, *range)
    else:
        counts = F.histogram_counts(a, weights, edges, mask, bins=bins, range=range, density=density)
    # with a range (or the edges) given, the edges do not depend on the data
    mask = None if range is not None or edges is not None else mask
    if range is not None and edges is None and np.isfinite(range).all() and range[0] <= range[1]:
        # nor on anything but a's dtype: NumPy's edges, computed once here (a constant the
        # graph copies per call), not np.histogram_bin_edges' Python on every call
        # (equalize_with_interp in test_programs_apps.py: 1.2-1.5x NumPy's time compiled)
        return counts, _hist_edges(np.zeros(0, dtype_of(a)), None, None, bins=bins, range=range)
    return counts, F.histogram_bin_edges(a, edges, mask, bins=bins, range=range)


# ---- histograms with an estimator's bins ('auto', 'fd', ...): how many depends on the data

_ESTIMATORS = ("auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt")


def _hist_auto_impl(a, bins="auto", range=None, density=None, part="counts"):
    counts, edges = np.histogram(a, bins=bins, range=range, density=density)
    return counts if part == "counts" else edges


def _hist_auto_meta(a, bins="auto", range=None, density=None, part="counts"):
    n = max(int(np.prod(shape_of(a))), 2)   # an example length: the data decides
    if part == "edges":
        return TensorMeta((n + 1,), np.histogram_bin_edges(np.zeros(1, a.dtype), 1).dtype)
    return TensorMeta((n,), np.histogram(np.zeros(1, a.dtype), 1, density=density)[0].dtype)


histogram_auto = declare(
    "histogram_auto", Category.EXTERN, _hist_auto_impl, inputs=("a",),
    params={"bins": "auto", "range": None, "density": None, "part": "counts"},
    meta=_hist_auto_meta, data_dependent=True, may_raise=True, fresh_result=True,
    unbacked=lambda a, bins, range, density, part: (("histogram_auto", 0, bins, range, part), ("u",)),
    doc="np.histogram(a, bins=<an estimator name>)'s counts or edges (part): the number of "
        "bins is known only after it ran")


def _histogram_auto(a, bins, range, density):
    return tuple(F.histogram_auto(a, bins=bins, range=range, density=density, part=part)
                 for part in ("counts", "edges"))


def _histogram_normalize(a, bins=10, range=None, density=None, weights=None):
    if isinstance(bins, str):
        if bins not in _ESTIMATORS:
            raise ValueError(f"{bins!r} is not a valid estimator for `bins`")
        if weights is not None:
            raise TypeError("Automated estimation of the number of bins is not supported for "
                            "weighted data")
        return Composite(_histogram_auto, (a,), {"bins": bins, "range": _range_param(range),
                                                 "density": density}, one_call=True)
    edges, count = _bins_param("numpy.histogram", bins)
    range = _range_param(range)
    # (one NumPy call either way, but equal bins over a range are a kernel compiled: priced
    # as the ops they are, not as one call, which would send them back to NumPy's)
    fused = _fuses_uniformly(a, weights, edges, count, range, density)
    return Composite(_histogram, (a, weights, edges), {"bins": count, "range": range,
                                                       "density": density}, one_call=not fused)


spell_composite(np.histogram, ("histogram_counts", "histogram_bin_edges", "histogram_auto",
                               "histogram_both", "getitem", "astype"),
                _histogram_normalize,
                "numpy.histogram")
spell(np.histogram_bin_edges, histogram_bin_edges,
      lambda a, bins=10, range=None, weights=None: Bound(
          histogram_bin_edges, (a, _bins_param("numpy.histogram_bin_edges", bins)[0], None),
          {"bins": _bins_param("numpy.histogram_bin_edges", bins)[1], "range": _range_param(range)}),
      "numpy.histogram_bin_edges")


def _hist2d_impl(x, y, weights, bins=(10, 10), range=None, density=None, padded=False):
    h, xe, ye = np.histogram2d(x, y, bins=bins, range=range, density=density, weights=weights)
    n = (h.shape[0] + 2) * (h.shape[1] + 2) if padded else h.size
    dtype = np.result_type(h.dtype, xe.dtype, ye.dtype)
    out = namespace(h, xe, ye).zeros(n + xe.size + ye.size, dtype)
    if padded:
        out[:n].reshape(h.shape[0] + 2, -1)[1:-1, 1:-1] = h
    else:
        out[:n] = h.reshape(-1)
    out[n:n + xe.size] = xe
    out[n + xe.size:] = ye
    return out


histogram2d_both = declare(
    "histogram2d_both", Category.EXTERN, _hist2d_impl, inputs=("x", "y", "weights"),
    params={"bins": (10, 10), "range": None, "density": None, "padded": False}, may_raise=True,
    fresh_result=True,
    doc="np.histogram2d(...) with bins a pair of ints: its counts (flattened; padded: inside "
        "a border of one bin, where NumPy's counts are a view of such an array), x edges and "
        "y edges side by side, from one call")


def _histogram2d(x, y, weights, bins, range, density):
    bx, by = bins
    # NumPy's results on a stand-in of the same kind: dtypes (an empty x's edges are float64
    # whatever its dtype, as are edges of a range) and the counts' layout
    n = 0 if any(type(d) is int and d == 0 for d in shape_of(x)) else 1   # (0 stays specialized)
    want = np.histogram2d(np.zeros(n, dtype_of(x)), np.zeros(n, dtype_of(y)), bins=bins, range=range,
                          density=density)
    padded = not want[0].flags.c_contiguous
    packed = F.histogram2d_both(x, y, weights, bins=bins, range=range, density=density, padded=padded)
    size = (bx + 2) * (by + 2) if padded else bx * by
    h = F.getitem(packed, (slice(0, size),))
    h = F.getitem(F.reshape(h, shape=(bx + 2, by + 2)), (slice(1, -1), slice(1, -1))) if padded \
        else F.reshape(h, shape=(bx, by))
    edges = (F.getitem(packed, (slice(size, size + bx + 1),)), F.getitem(packed, (slice(size + bx + 1, None),)))
    return tuple(v if dtype_of(v) == w.dtype else F.astype(v, dtype=w.dtype)
                 for v, w in zip((h,) + edges, want))


def _histogram2d_normalize(x, y, bins=10, range=None, density=None, weights=None):
    if isinstance(bins, (int, np.integer)):
        bins = (int(bins), int(bins))
    elif isinstance(bins, (list, tuple)) and len(bins) == 2 and all(
            isinstance(b, (int, np.integer)) for b in bins):
        bins = (int(bins[0]), int(bins[1]))
    else:
        reject("numpy.histogram2d", "bins", "<edges>", "pass bins as an int or a pair of ints")
    if range is not None:
        range = (_range_param(range[0]), _range_param(range[1]))
    return Composite(_histogram2d, (x, y, weights), {"bins": bins, "range": range,
                                                     "density": density}, one_call=True)


spell_composite(np.histogram2d, ("histogram2d_both", "getitem", "reshape", "astype"),
                _histogram2d_normalize, "numpy.histogram2d")


def _masked_histogram(x, mask, bins=10, range=None, density=None, weights=None):
    """np.histogram(x[mask], ...): the histogram ops take the selection themselves, so the
    graph never holds a value of data-dependent size (and NumPy's speed is kept)."""
    if weights is not None and tuple(shape_of(weights)) != tuple(shape_of(x)) or isinstance(bins, str):
        return None   # (an estimator's bins read the selection itself)
    edges, count = _bins_param("numpy.histogram", bins)
    return Composite(_histogram, (x, weights, edges), {"bins": count, "range": _range_param(range),
                                                       "density": density, "mask": mask})


spell_masked(np.histogram, _masked_histogram)
