"""A tenth set of real NumPy programs through kiln.compile, checked like
tests/test_programs.py (values, dtypes, shapes, exceptions, arguments after the call,
aliasing): image processing (a 3x3 convolution by slicing, histogram equalization, Sobel,
grey dilation by np.maximum over shifted views), signal processing (a FIR filter in a loop,
a biquad IIR filter sample by sample, an STFT by stride tricks and np.fft.rfft), statistics
(a bootstrap with a seeded Generator, weighted mean and variance, percentiles, histograms),
finance (an EWMA loop, drawdown by np.maximum.accumulate), physics (an n-body step, a heat
equation stencil, Ising sweeps with a seeded Generator), ML (k-means, logistic regression by
kiln.grad, PCA by SVD, softmax cross-entropy, kNN by argpartition), text and data
(np.unique counts, np.searchsorted binning, record arrays sorted by np.lexsort, np.bincount)
and utility code (np.pad, np.tile/np.repeat, np.meshgrid, np.einsum, np.linalg.solve and
lstsq). Every program ran against NumPy on cpp and aot_eager with two shapes each (and
four with inputs NumPy raises for). What differed: speed (np.linalg.lstsq of a 9x3 system
2.4x NumPy's time: tests/ops/test_mask_take.py, tests/aot/test_view_outputs.py); float32
np.log 1 ulp from NumPy's, which the np.diff of log prices near 100 turns into 9e-6
relative in a volatility (the EWMA's float32 call, eager here).
"""
from __future__ import annotations

import numpy as np

import kiln
from tests.test_programs import program_registry, program_test

f32, f64, i32, i64, u8 = np.float32, np.float64, np.int32, np.int64, np.uint8

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)

_g = np.random.default_rng(1001)


# ----------------------------------------------------------------------------- images

@program((_g.random((9, 11)), np.array([[1.0, 2, 1], [2, 4, 2], [1, 2, 1]]) / 16),
         (_g.random((6, 5)).astype(f32), np.ones((3, 3), f32) / 9))
def convolve3x3_by_slicing(img, k):
    H, W = img.shape
    p = np.pad(img, 1, mode="edge")
    out = np.zeros_like(img)
    for i in range(3):
        for j in range(3):
            out += k[i, j] * p[i:i + H, j:j + W]
    return out


@program((_g.integers(0, 256, (8, 10)).astype(u8),), (_g.integers(40, 90, (5, 7)).astype(u8),))
def histogram_equalization(img):
    hist = np.bincount(img.ravel(), minlength=256)
    cdf = hist.cumsum()
    cdf_min = cdf[cdf > 0].min()
    lut = np.round((cdf - cdf_min) / (img.size - cdf_min) * 255)
    lut = np.clip(lut, 0, 255).astype(np.uint8)
    return lut[img], hist.max()


@program((_g.random((8, 9)),), (_g.random((5, 6)).astype(f32),))
def sobel_edges(img):
    gx = (img[:-2, 2:] + 2 * img[1:-1, 2:] + img[2:, 2:]) - (img[:-2, :-2] + 2 * img[1:-1, :-2] + img[2:, :-2])
    gy = (img[2:, :-2] + 2 * img[2:, 1:-1] + img[2:, 2:]) - (img[:-2, :-2] + 2 * img[:-2, 1:-1] + img[:-2, 2:])
    mag = np.hypot(gx, gy)
    ang = np.arctan2(gy, gx)
    edges = mag > mag.mean() + mag.std()
    return mag, ang, edges, np.count_nonzero(edges)


@program((_g.random((7, 8)) > 0.7, 1), (_g.random((5, 5)) > 0.5, 2))
def binary_dilation_erosion(mask, r):
    m = mask.astype(np.uint8)
    for _ in range(r):
        p = np.pad(m, 1)
        m = np.maximum.reduce([p[1:-1, 1:-1], p[:-2, 1:-1], p[2:, 1:-1], p[1:-1, :-2], p[1:-1, 2:]])
    dil = m.astype(bool)
    e = mask.astype(np.float64)
    for _ in range(r):
        p = np.pad(e, 1, constant_values=1.0)
        e = np.minimum(np.minimum(p[1:-1, 1:-1], p[:-2, 1:-1]), np.minimum(p[2:, 1:-1], np.minimum(p[1:-1, :-2], p[1:-1, 2:])))
    return dil, e > 0, dil.sum() - mask.sum()


# ----------------------------------------------------------------------------- signals

@program((_g.standard_normal(40), np.hanning(7) / np.hanning(7).sum()),
         (_g.standard_normal(13).astype(f32), np.array([0.25, 0.5, 0.25], f32)))
def fir_filter_loop(x, h):
    n = len(h)
    y = np.zeros_like(x)
    for k in range(n):
        y[k:] += h[k] * x[:len(x) - k]
    ref = np.convolve(x, h)[:len(x)]
    return y, ref


@program((_g.standard_normal(30), 0.2), (_g.standard_normal(12), 0.45))
def biquad_lowpass(x, fc):
    w0 = 2 * np.pi * fc
    alpha = np.sin(w0) / (2 * 0.7071)
    b = np.array([(1 - np.cos(w0)) / 2, 1 - np.cos(w0), (1 - np.cos(w0)) / 2])
    a = np.array([1 + alpha, -2 * np.cos(w0), 1 - alpha])
    b, a = b / a[0], a / a[0]
    y = np.empty_like(x)
    x1 = x2 = y1 = y2 = 0.0
    for n in range(len(x)):
        y[n] = b[0] * x[n] + b[1] * x1 + b[2] * x2 - a[1] * y1 - a[2] * y2
        x2, x1 = x1, x[n]
        y2, y1 = y1, y[n]
    return y


@program((_g.standard_normal(64), 16, 8), (_g.standard_normal(40), 8, 4), (np.ones(5), 8, 2))
def stft_magnitude(x, nfft, hop):
    win = np.hanning(nfft)
    frames = np.lib.stride_tricks.sliding_window_view(x, nfft)[::hop]
    spec = np.fft.rfft(frames * win, axis=-1)
    mag = np.abs(spec)
    power_db = 10 * np.log10(mag ** 2 + 1e-12)
    freqs = np.fft.rfftfreq(nfft, d=1 / 100.0)
    peak = freqs[np.argmax(mag, axis=1)]
    return mag, power_db, peak


# ----------------------------------------------------------------------------- statistics

@program((_g.standard_normal(25), 50, 7), (_g.standard_normal(9), 20, 3))
def bootstrap_mean_ci(x, n_boot, seed):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(x), size=(n_boot, len(x)))
    means = x[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return means.mean(), lo, hi, np.median(means), means.std(ddof=1)


@program((_g.standard_normal((6, 4)), _g.random(6)), (_g.standard_normal((3, 2)).astype(f32), _g.random(3).astype(f32)))
def weighted_mean_var(X, w):
    w = w / w.sum()
    mu = np.average(X, axis=0, weights=w)
    var = (w[:, None] * (X - mu) ** 2).sum(axis=0)
    v1, v2 = w.sum(), (w ** 2).sum()
    unbiased = var / (1 - v2 / v1 ** 2)
    z = (X - mu) / np.sqrt(var)
    return mu, var, unbiased, z


@program((_g.standard_normal(50), 8), (_g.exponential(size=11), 4), (np.array([1.0, np.nan, 2.0]), 3))
def histogram_summary(x, bins):
    counts, edges = np.histogram(x, bins=bins)
    centers = (edges[:-1] + edges[1:]) / 2
    density = counts / (counts.sum() * np.diff(edges))
    q = np.percentile(x, [25, 50, 75])
    iqr = q[2] - q[0]
    cum = np.cumsum(counts) / len(x)
    mode = centers[np.argmax(counts)]
    return counts, centers, density, q, iqr, cum, mode, np.median(x)


# ----------------------------------------------------------------------------- finance

@program((100 + np.cumsum(_g.standard_normal(30)), 0.1), (100 + np.cumsum(_g.standard_normal(8)).astype(f32), 0.5))
def ewma_and_drawdown(prices, alpha):
    ewma = np.empty_like(prices)
    ewma[0] = prices[0]
    for t in range(1, len(prices)):
        ewma[t] = alpha * prices[t] + (1 - alpha) * ewma[t - 1]
    peak = np.maximum.accumulate(prices)
    dd = (prices - peak) / peak
    rets = np.diff(np.log(prices))
    vol = rets.std(ddof=1) * np.sqrt(252)
    return ewma, dd, dd.min(), int(dd.argmin()), vol


@program((_g.standard_normal((20, 3)) * 0.01, np.array([0.5, 0.3, 0.2])),
         (_g.standard_normal((6, 2)) * 0.02, np.array([0.9, 0.1])))
def portfolio_stats(returns, weights):
    port = returns @ weights
    wealth = np.cumprod(1 + port)
    cov = np.cov(returns, rowvar=False)
    risk = np.sqrt(weights @ cov @ weights)
    sharpe = port.mean() / port.std(ddof=1)
    var95 = -np.percentile(port, 5)
    return wealth, cov, risk, sharpe, var95


# ----------------------------------------------------------------------------- physics

@program((_g.standard_normal((5, 3)), np.zeros((5, 3)), _g.random(5) + 0.5, 3),
         (_g.standard_normal((3, 3)), _g.standard_normal((3, 3)) * 0.1, np.ones(3), 2))
def nbody_leapfrog(pos, vel, mass, steps):
    dt, eps = 0.01, 0.1
    for _ in range(steps):
        d = pos[None, :, :] - pos[:, None, :]
        r2 = (d ** 2).sum(-1) + eps ** 2
        inv = r2 ** -1.5
        np.fill_diagonal(inv, 0.0)
        acc = (d * (inv * mass[None, :])[:, :, None]).sum(axis=1)
        vel += acc * dt
        pos += vel * dt
    ke = 0.5 * (mass * (vel ** 2).sum(1)).sum()
    return pos, vel, ke


@program((np.sin(np.linspace(0, np.pi, 12)), 0.4, 20), (np.linspace(0, 1, 6).astype(f32) ** 2, 0.25, 5))
def heat_equation_explicit(u0, r, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u, u.sum()


@program((_g.random((6, 6)), 0.1, 4), (_g.random((4, 5)), 0.2, 2))
def heat_2d_stencil_swap(T, alpha, steps):
    a = T.copy()
    b = np.empty_like(a)
    b[0, :], b[-1, :], b[:, 0], b[:, -1] = a[0, :], a[-1, :], a[:, 0], a[:, -1]
    for _ in range(steps):
        b[1:-1, 1:-1] = a[1:-1, 1:-1] + alpha * (a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2] - 4 * a[1:-1, 1:-1])
        a, b = b, a
    return a, np.abs(a - T).max()


@program((8, 0.6, 3, 5), (4, 2.5, 2, 1))
def ising_checkerboard(n, beta, sweeps, seed):
    rng = np.random.default_rng(seed)
    s = rng.choice(np.array([-1, 1], dtype=np.int8), size=(n, n))
    ii, jj = np.indices((n, n))
    for _ in range(sweeps):
        for parity in (0, 1):
            nb = np.roll(s, 1, 0) + np.roll(s, -1, 0) + np.roll(s, 1, 1) + np.roll(s, -1, 1)
            dE = 2 * s * nb
            flip = (rng.random((n, n)) < np.exp(-beta * dE)) & ((ii + jj) % 2 == parity)
            s[flip] *= -1
    return s, s.mean(), np.abs(s.sum()) / s.size


# ----------------------------------------------------------------------------- ML

@program((np.concatenate([_g.standard_normal((6, 2)), _g.standard_normal((6, 2)) + 4]), 2, 5),
         (_g.standard_normal((7, 3)), 3, 3))
def kmeans(X, k, iters):
    C = X[:k].copy()
    for _ in range(iters):
        d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
        lab = d.argmin(1)
        for j in range(k):
            m = lab == j
            if m.any():
                C[j] = X[m].mean(0)
    inertia = d[np.arange(len(X)), lab].sum()
    return C, lab, inertia, np.bincount(lab, minlength=k)


def _logreg_loss(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0, z) - y * z) + 0.01 * np.sum(w * w)


@program((_g.standard_normal((10, 3)), (_g.random(10) > 0.5).astype(f64), 4),
         (_g.standard_normal((5, 2)), np.array([0.0, 1, 1, 0, 1]), 2))
def logistic_regression_grad_steps(X, y, steps):
    g = kiln.grad(_logreg_loss)
    w = np.zeros(X.shape[1])
    for _ in range(steps):
        w = w - 0.5 * g(w, X, y)
    p = 1 / (1 + np.exp(-(X @ w)))
    return w, p, ((p > 0.5) == y).mean()


@program((_g.standard_normal((8, 4)), 2), (_g.standard_normal((5, 3)), 1))
def pca_svd(X, k):
    Xc = X - X.mean(0)
    U, S, Vt = np.linalg.svd(Xc, full_matrices=False)
    signs = np.sign(Vt[:, 0])
    signs[signs == 0] = 1
    Vt = Vt * signs[:, None]
    comps = Vt[:k]
    explained = S ** 2 / (len(X) - 1)
    ratio = explained / explained.sum()
    return Xc @ comps.T, comps, ratio[:k], np.cumsum(ratio)


@program((_g.standard_normal((6, 4)), _g.integers(0, 4, 6)), (_g.standard_normal((3, 5)).astype(f32), np.array([4, 0, 2])),
         (np.ones((2, 3)), np.array([0, 3])))
def softmax_cross_entropy(logits, labels):
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    loss = -logp[np.arange(len(labels)), labels].mean()
    p = np.exp(logp)
    grad = p.copy()
    grad[np.arange(len(labels)), labels] -= 1
    grad /= len(labels)
    acc = (logp.argmax(1) == labels).mean()
    return loss, grad, acc


@program((_g.standard_normal((12, 2)), _g.integers(0, 3, 12), _g.standard_normal((4, 2)), 3),
         (_g.standard_normal((5, 3)), np.array([1, 1, 0, 0, 1]), _g.standard_normal((2, 3)), 2))
def knn_classify(Xtr, ytr, Xte, k):
    d = (Xte ** 2).sum(1)[:, None] - 2 * Xte @ Xtr.T + (Xtr ** 2).sum(1)[None, :]
    nn = np.argpartition(d, k - 1, axis=1)[:, :k]
    nd = np.take_along_axis(d, nn, axis=1)
    order = np.argsort(nd, axis=1, kind="stable")
    nn = np.take_along_axis(nn, order, axis=1)
    votes = ytr[nn]
    pred = np.array([np.bincount(v, minlength=ytr.max() + 1).argmax() for v in votes])
    return pred, nn, np.sort(d, axis=1)[:, :k]


# ----------------------------------------------------------------------------- text and data

@program((_g.integers(0, 6, 30), _g.random(30)), (np.array([3, 3, 1, 1, 1]), np.array([1.0, 2, 3, 4, 5])))
def groupby_unique_counts(keys, vals):
    uk, inv, cnt = np.unique(keys, return_inverse=True, return_counts=True)
    sums = np.bincount(inv, weights=vals)
    means = sums / cnt
    maxs = np.full(len(uk), -np.inf)
    np.maximum.at(maxs, inv, vals)
    top = uk[np.argsort(-cnt, kind="stable")]
    return uk, cnt, sums, means, maxs, top


@program((_g.uniform(0, 100, 20), np.array([0.0, 18, 35, 65, 100])), (np.array([18.0, 0, 100, 50]), np.array([0.0, 50, 100])))
def searchsorted_binning(ages, edges):
    left = np.searchsorted(edges, ages, side="left")
    right = np.searchsorted(edges, ages, side="right") - 1
    right = np.clip(right, 0, len(edges) - 2)
    counts = np.bincount(right, minlength=len(edges) - 1)
    dig = np.digitize(ages, edges[1:-1])
    return left, right, counts, dig


_REC = np.dtype([("name", "U8"), ("dept", "i4"), ("salary", "f8")])


@program((np.array([("ann", 2, 50.0), ("bob", 1, 60.0), ("cy", 2, 40.0), ("di", 1, 60.0), ("ed", 3, 55.0)], dtype=_REC),),
         (np.array([("x", 1, 1.0), ("y", 1, 2.0)], dtype=_REC),))
def record_array_lexsort(rec):
    order = np.lexsort((-rec["salary"], rec["dept"]))
    srt = rec[order]
    depts, first = np.unique(srt["dept"], return_index=True)
    top_paid = srt["name"][first]
    avg = np.bincount(rec["dept"], weights=rec["salary"])[depts] / np.bincount(rec["dept"])[depts]
    rec["salary"] *= 1.1
    return srt, depts, top_paid, avg


@program((_g.integers(0, 8, 25),), (np.array([5, 5, 5]),))
def word_id_stats(ids):
    counts = np.bincount(ids)
    nz = np.flatnonzero(counts)
    freq = counts[nz] / ids.size
    entropy = -(freq * np.log2(freq)).sum()
    ranks = np.empty_like(nz)
    ranks[np.argsort(-counts[nz], kind="stable")] = np.arange(1, len(nz) + 1)
    bigrams = ids[:-1] * (ids.max() + 1) + ids[1:]
    ub, bc = np.unique(bigrams, return_counts=True)
    return nz, freq, entropy, ranks, ub, bc


# ----------------------------------------------------------------------------- utility

@program((_g.standard_normal((3, 4)), 2, 3), (_g.standard_normal((2, 2)).astype(f32), 1, 2))
def pad_tile_repeat(a, r, c):
    p1 = np.pad(a, ((1, 2), (0, 1)), mode="reflect")
    p2 = np.pad(a, 1, mode="constant", constant_values=-1)
    t = np.tile(a, (r, c))
    rep = np.repeat(a, [r] * a.shape[0], axis=0)
    kron = np.kron(np.eye(r, dtype=a.dtype), a)
    return p1, p2, t, rep, kron


@program((np.linspace(-1, 1, 5), np.linspace(0, 2, 4)), (np.linspace(0, 1, 3).astype(f32), np.array([0.5], f32)))
def meshgrid_field(x, y):
    X, Y = np.meshgrid(x, y)
    R = np.sqrt(X ** 2 + Y ** 2)
    Z = np.exp(-R ** 2) * np.cos(3 * X)
    gy, gx = np.gradient(Z) if Z.shape[0] > 1 else (np.zeros_like(Z), np.gradient(Z, axis=1))
    XI, YI = np.meshgrid(x, y, indexing="ij", sparse=True)
    return Z, gx, gy, (XI + YI).shape, np.trapezoid(Z, x, axis=1)


@program((_g.standard_normal((3, 4)), _g.standard_normal((4, 5)), _g.standard_normal((2, 3, 4))),
         (_g.standard_normal((2, 2)), _g.standard_normal((2, 3)), _g.standard_normal((1, 2, 2))))
def einsum_contractions(A, B, T):
    mm = np.einsum("ij,jk->ik", A, B)
    tr = np.einsum("ii->", A[:, :A.shape[0]])
    outer = np.einsum("i,j->ij", A[0], B[:, 0])
    bat = np.einsum("bij,jk->bik", T, B)
    rowdot = np.einsum("ij,ij->i", A, A)
    return mm, tr, outer, bat, rowdot


@program((_g.standard_normal((5, 5)) + 5 * np.eye(5), _g.standard_normal(5), _g.standard_normal((9, 3)), _g.standard_normal(9)),
         (_g.standard_normal((2, 2)) + 3 * np.eye(2), _g.standard_normal(2), _g.standard_normal((4, 2)), _g.standard_normal(4)),
         (np.zeros((3, 3)), np.ones(3), np.ones((4, 2)), np.ones(4)))
def linear_solve_lstsq(A, b, X, y):
    x = np.linalg.solve(A, b)
    resid = A @ x - b
    beta, res, rank, sv = np.linalg.lstsq(X, y, rcond=None)
    Xa = np.column_stack([np.ones(len(X)), X])
    beta2 = np.linalg.solve(Xa.T @ Xa, Xa.T @ y)
    cond = np.linalg.cond(A)
    return x, np.abs(resid).max(), beta, res, rank, sv, beta2, cond


@program((np.array([1.0, -999, 3, 4, -999, 6]),), (np.array([-999.0, 2]),))
def masked_sentinel_stats(x):
    m = np.ma.masked_equal(x, -999)
    return m.mean(), m.std(), m.filled(np.nan), m.count(), np.ma.getmaskarray(m)


_CPP = ("convolve3x3_by_slicing", "sobel_edges", "heat_2d_stencil_swap", "softmax_cross_entropy")
test_program = program_test({k: (PROGRAMS[k][0], PROGRAMS[k][1][:1]) for k in _CPP}, ["cpp"])
test_program_eager = program_test(PROGRAMS, ["eager", "aot_eager"], share=4)
