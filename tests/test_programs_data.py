"""Data-analysis, statistics and machine-learning programs through kiln.compile, checked
like tests/test_programs.py (values, dtypes, shapes, exceptions, mutated arguments,
aliasing; no kernel build may fall back): group-bys with np.unique/np.bincount/np.add.at,
histograms and binning, order statistics, nan-aware reductions, ranking and sorting,
one-hot encoding, splits with index arrays, k-means, PCA, gradient-descent loops,
metrics, membership tests and dict-of-arrays data. Shapes are few: each distinct graph
costs one g++ build."""
from __future__ import annotations

import numpy as np

import kiln
from tests.test_programs import BACKENDS, f32, i32, program_registry, program_test, ri, rn

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)


@program((rn(12, 4),), (np.asfortranarray(rn(12, 4, dtype=f32)),))
def standardize_to_dict(X):
    mu = X.mean(axis=0)
    sd = X.std(axis=0, ddof=1)
    sd[sd == 0] = 1.0
    return {"z": (X - mu) / sd, "mean": mu, "std": sd, "n": X.shape[0]}


@program((ri(0, 4, 20), rn(20)), (ri(0, 4, 20, dtype=i32), rn(20, dtype=f32)))
def groupby_mean_bincount(keys, vals):
    uniq, inv = np.unique(keys, return_inverse=True)
    sums = np.bincount(inv, weights=vals)
    cnts = np.bincount(inv)
    return uniq, sums / cnts, cnts, vals - (sums / cnts)[inv]


@program((ri(-3, 3, 10), rn(10, 2)),)
def add_at_with_negative_indices(idx, v):
    acc = np.zeros((3, 2), dtype=v.dtype)
    np.add.at(acc, idx, v)
    cnt = np.zeros(3, dtype=np.int64)
    np.add.at(cnt, idx, 1)
    return acc, cnt, acc / np.maximum(cnt, 1)[:, None]


@program((rn(40),), (rn(40, dtype=f32),))
def histogram_and_digitize(x):
    counts, edges = np.histogram(x, bins=6, range=(-3, 3))
    dens, _ = np.histogram(x, bins=edges, density=True)
    idx = np.digitize(x, edges[1:-1])
    return counts, edges, dens, idx, np.bincount(idx, minlength=6)


def _with_nans(a):
    a = a.copy()
    a[::3, 1] = np.nan
    a[2, :] = np.nan
    return a


@program((_with_nans(rn(8, 5)),), (_with_nans(rn(8, 5, dtype=f32)),))
def nan_aware_summary(x):
    m = np.nanmean(x, axis=0)
    return m, np.nanstd(x, axis=0, ddof=1), np.nanargmax(x, axis=0), np.where(np.isnan(x), m, x), \
        np.sum(~np.isnan(x), axis=1), np.nanmedian(x, axis=0), np.median(x[:, 0])


@program((_with_nans(rn(8, 2))[:, 1],), (rn(6, dtype=f32),), (np.array([np.nan, 2.0, np.nan]),))
def nan_extremes_of_a_row(v):
    # a reduction over every axis of a 1-D array (axis=0, axis=-1, a tuple) gives a NumPy
    # scalar, as NumPy's does: nanmax/nanmin/nanargmax/nanargmin returned a 0-d array
    return np.nanmax(v, axis=0), np.nanmin(v, axis=-1), np.nanargmax(v, axis=0), \
        np.nanargmin(v, axis=-1), np.nanmax(v[None], axis=(0, 1)), np.nanmin(v[:, None], axis=0)


@program((_with_nans(rn(6, 3)),), (rn(4, 5, dtype=f32),), (ri(-5, 5, 3, 4, dtype=i32),),
         (np.array([[np.nan, np.nan], [np.nan, 2.0]]),), (np.zeros((0, 3)),))
def fmax_fmin_reduce(x):
    # NaN-skipping extremes as ufunc reductions: an all-NaN slice is NaN with no warning
    # (nanmax warns), an empty one NumPy's "zero-size array ... fmax" ValueError
    return np.fmax.reduce(x), np.fmin.reduce(x, axis=1), np.fmax.reduce(x, axis=None), \
        np.fmin.reduce(x, axis=(0, 1), keepdims=True), np.fmax.reduce(x.T, axis=-1) - x[0]


@program((rn(9, 4),), (ri(0, 10, 9, 4, dtype=i32),))
def percentile_methods(x):
    out = {m: np.percentile(x, [10, 50, 90], axis=0, method=m) for m in ("linear", "lower", "nearest")}
    out["med"] = np.median(x, axis=1, keepdims=True)
    out["iqr"] = np.subtract(*np.percentile(x, [75, 25]))
    return out


@program((rn(10),), (np.array([3.0, 1.0, 3.0, 2.0, 1.0]),))
def rankdata_average_ties(a):
    sorter = np.argsort(a, kind="mergesort")
    inv = np.empty(sorter.size, dtype=np.intp)
    inv[sorter] = np.arange(sorter.size, dtype=np.intp)
    arr = a[sorter]
    obs = np.concatenate(([True], arr[1:] != arr[:-1]))
    dense = obs.cumsum()[inv]
    count = np.concatenate((np.nonzero(obs)[0], [len(obs)]))
    return 0.5 * (count[dense] + count[dense - 1] + 1), dense


@program((ri(0, 4, 10), 4), (np.array([], dtype=np.int64), 3))
def one_hot_three_ways(y, k):
    oh = np.zeros((y.size, k), dtype=np.float32)
    oh[np.arange(y.size), y] = 1
    eq = (y[:, None] == np.arange(k)).astype(np.float64)
    return oh, eq, np.eye(k)[y].sum(0), oh.argmax(axis=1) if y.size else y


@program((rn(20, 3), ri(0, 2, 20), np.random.default_rng(0).permutation(20)),)
def split_with_index_arrays(X, y, perm):
    n_test = int(0.25 * X.shape[0])
    te, tr = perm[:n_test], perm[n_test:]
    mu, sd = X[tr].mean(0), X[tr].std(0)
    return (X[tr] - mu) / sd, (X[te] - mu) / sd, y[tr], y[te]


def _assign(X, C):
    d2 = (X ** 2).sum(1)[:, None] - 2 * X @ C.T + (C ** 2).sum(1)[None, :]
    return np.argmin(d2, axis=1), d2


@program((rn(24, 2), rn(3, 2), 3),)
def kmeans_lloyd(X, C, iters):
    C = C.copy()
    for _ in range(iters):
        lab, d2 = _assign(X, C)
        for j in range(C.shape[0]):
            m = lab == j
            if m.any():
                C[j] = X[m].mean(axis=0)
    return C, lab, np.take_along_axis(d2, lab[:, None], axis=1).sum()


@program((rn(15, 4),),)
def pca_by_svd_and_eigh(X):
    Xc = X - X.mean(axis=0, keepdims=True)
    _, S, Vt = np.linalg.svd(Xc, full_matrices=False)
    ratio = S ** 2 / (S ** 2).sum()
    w, V = np.linalg.eigh(Xc.T @ Xc / (len(X) - 1))
    return np.abs(Xc @ Vt[:2].T), np.cumsum(ratio), w[::-1], np.abs(V[:, -1])


@program((rn(30, 3), ri(0, 2, 30).astype(float), 0.5, 6), (rn(30, 3, dtype=f32), ri(0, 2, 30).astype(f32), 0.5, 6))
def logistic_regression_gd(X, y, lr, epochs):
    w = np.zeros(X.shape[1], dtype=X.dtype)
    b = 0.0
    losses = []
    for _ in range(epochs):
        p = 1.0 / (1.0 + np.exp(-(X @ w + b)))
        losses.append(-np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12)))
        g = p - y
        w -= lr * (X.T @ g) / len(y)
        b -= lr * g.mean()
    return w, b, np.array(losses)


@program((ri(0, 3, 30), ri(0, 3, 30), 3),)
def confusion_matrix_f1(y_true, y_pred, k):
    cm = np.bincount(y_true * k + y_pred, minlength=k * k).reshape(k, k)
    tp = np.diag(cm)
    prec = tp / np.maximum(cm.sum(axis=0), 1)
    rec = tp / np.maximum(cm.sum(axis=1), 1)
    f1 = np.where(prec + rec > 0, 2 * prec * rec / (prec + rec + 1e-300), 0.0)
    return cm, f1, f1.mean(), tp.sum() / cm.sum()


@program((ri(0, 2, 40), rn(40)), (ri(0, 2, 40).astype(bool), rn(40, dtype=f32)))
def roc_auc_by_cumsum(y, score):
    order = np.argsort(-score, kind="mergesort")
    y = y[order].astype(np.float64)
    tps, fps = np.cumsum(y), np.cumsum(1 - y)
    tpr = np.concatenate([[0.0], tps / tps[-1]])
    fpr = np.concatenate([[0.0], fps / fps[-1]])
    return np.trapezoid(tpr, fpr), tpr, fpr


@program((rn(10, 3), rn(4, 3), ri(0, 3, 10), 3),)
def knn_vote(Xtr, Xte, ytr, k):
    d = np.sqrt(np.maximum(((Xte[:, None, :] - Xtr[None]) ** 2).sum(-1), 0))
    nn = np.argsort(d, axis=1)[:, :k]
    pred = np.array([np.bincount(v, minlength=3).argmax() for v in ytr[nn]])
    return pred, np.sort(np.take_along_axis(d, np.argpartition(d, k - 1, axis=1)[:, :k], 1), axis=1)


@program(({"x": rn(10), "y": rn(10), "w": np.ones(10)},),)
def dict_of_arrays_in_and_out(data):
    x, y, w = data["x"], data["y"], data["w"]
    slope = (w * x * y).sum() / (w * x * x).sum()
    data["resid"] = y - slope * x
    data["x"] = x - x.mean()
    return {k: v.mean() for k, v in data.items()}, {"slope": slope}


@program((rn(6, 4),), (np.asfortranarray(rn(6, 4, dtype=f32)),))
def minmax_scale_in_place(X):
    lo, hi = X.min(axis=0), X.max(axis=0)
    rng = hi - lo
    rng[rng == 0] = 1
    X -= lo
    X /= rng
    np.clip(X, 0, 1, out=X)
    return X, lo


# np.isin past a small test set runs NumPy's isin (it was an every-pair comparison, 25x
# slower for 1,000 in 1,000); kind='table' on floats raises NumPy's ValueError (it was
# ignored).
@program((ri(0, 60, 50), ri(0, 60, 40), None), (ri(0, 60, 50), ri(0, 60, 3), "table"),
         (rn(5), rn(30), "table"), (rn(5), rn(30), "sort"))
def membership(ids, known, kind):
    seen = np.isin(ids, known, kind=kind)
    return seen, np.isin(ids, known, invert=True, kind=kind).sum(), ids[seen]


# np.polyfit's coefficients are float64 for float32 data (its shape rule said float32, so
# the C++ backends computed the polyval and residuals in float32); np.vander's dtype is
# x's promoted with int64.
@program((np.sort(rn(16, dtype=f32)), rn(16, dtype=f32)), (np.sort(rn(16)), rn(16)))
def trend_fit(t, y):
    p1 = np.polyfit(t, y, 1)
    resid = y - np.polyval(p1, t)
    beta = np.linalg.lstsq(np.vander(t, 3), y, rcond=None)[0]
    return p1, resid.std(), beta, np.interp(np.linspace(t.min(), t.max(), 4), t, y)


# Signed overflow wraps as in NumPy (kernels build with -fwrapv: GCC had rewritten
# max(-x) as -min(x) and folded (x + 1) > x to True).
@program((np.array([np.iinfo(np.int32).min, -1, 0, 5, np.iinfo(np.int32).max], dtype=i32),),
         (np.array([np.iinfo(np.int64).min, 7, -3, 0, np.iinfo(np.int64).max]),))
def hashing_and_int_edges(x):
    h = (x * 1103515245 + 12345) ^ (x >> 7)
    return np.negative(x).max(), np.abs(x).min(), ((x + 1) > x).all(), (x - 1 < x).sum(), \
        h % 16, np.bincount(np.abs(h % 16).astype(np.int64), minlength=16)


def _prices_with_gaps():
    p = 100 + np.cumsum(rn(40))
    p[[5, 17]] = np.nan              # missing quotes
    p[20:23] = p[19]                 # a flat stretch: ties with the running peak
    return p


@program((100 + np.cumsum(rn(60)),), (100 + np.cumsum(rn(33, dtype=f32)),), (_prices_with_gaps(),))
def max_drawdown(prices):
    peak = np.maximum.accumulate(prices)
    dd = (prices - peak) / peak
    trough = np.fmin.accumulate(dd)
    best = np.fmax.accumulate(prices)
    return dd, trough, best, np.nanmin(dd)


@program((rn(6, 9),), (np.array([[0.0, -0.0, 0.0, np.nan, 1.0], [-0.0, 0.0, -0.0, -np.inf, np.inf]]),),
         (ri(-5, 5, 7, 4, dtype=i32),))
def running_envelope(x):
    hi = np.maximum.accumulate(x, axis=1)
    lo = np.minimum.accumulate(x, axis=-1)
    first = np.minimum.accumulate(x)          # axis 0 by default
    return hi - lo, first, np.fmax.accumulate(x.T, axis=0, dtype=np.float64)


test_program = program_test(PROGRAMS, BACKENDS, share=8)


def test_running_extrema_capture_without_a_break():
    """ufunc.accumulate of maximum/minimum/fmax/fmin is an op (kiln/ops/running.py), not
    a graph break that split the drawdown program in three."""
    for fn, args in (PROGRAMS["max_drawdown"][0], (100 + np.cumsum(rn(60)),)), \
                     (PROGRAMS["running_envelope"][0], (rn(6, 9),)):
        out = kiln.explain(fn)(*args)
        assert out.graph_break_count == 0, str(out)
        assert out.graph_count == 1
