"""More real NumPy programs through kiln.compile, checked like tests/test_programs.py
(values, dtypes, shapes, exceptions, arguments after the call, aliasing, layouts) on every
backend: option pricing (Black-Scholes, binomial trees, Monte-Carlo paths), portfolio
maths, image filters (separable blur, Otsu, integral images, median windows, gamma LUTs),
statistics (bootstrap, kernel density, Welford, least squares, naive Bayes), small ML
(decision stumps, kNN regression, softmax regression), geometry (quaternions, Rodrigues,
shoelace, point in polygon), sparse-ish scatters (COO to CSR), text-ish counting and
ranking, time series (autocorrelation by FFT, convolve, rolling windows) and the user-code
details around them (out=, early returns, user exceptions, float32/int inputs, NaNs).
Every program has its own generator; sizes are small and few (each graph is a g++ build).
"""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import kiln
from tests.test_programs import BACKENDS, program_registry, program_test

f32, f64, i32, i64, u8 = np.float32, np.float64, np.int32, np.int64, np.uint8

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)


def _norm_cdf(x):
    return 0.5 * (1.0 + _erf(x / math.sqrt(2.0)))


def _erf(x):
    # Abramowitz-Stegun 7.1.26, as people write it when scipy is not around
    s = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
               + 0.254829592) * t * np.exp(-x * x)
    return s * y


# ----------------------------------------------------------------------------- finance

_g = np.random.default_rng(301)


@program((_g.uniform(80, 120, 10), 100.0, 0.05, _g.uniform(0.1, 0.4, 10), _g.uniform(0.1, 2, 10)),
         (_g.uniform(80, 120, 7).astype(f32), 95, 0.01, np.float32(0.2), np.float32(1.0)))
def black_scholes_greeks(S, K, r, sigma, T):
    sqrtT = np.sqrt(T)
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * sqrtT)
    d2 = d1 - sigma * sqrtT
    disc = np.exp(-r * T)
    call = S * _norm_cdf(d1) - K * disc * _norm_cdf(d2)
    put = call - S + K * disc                       # put-call parity
    delta = _norm_cdf(d1)
    gamma = np.exp(-0.5 * d1 ** 2) / (math.sqrt(2 * math.pi) * S * sigma * sqrtT)
    return call, put, delta, gamma


@program((100.0, 100.0, 0.03, 0.25, 1.0, 12), (50.0, 55.0, 0.01, 0.4, 0.5, 7))
def binomial_american_put(S0, K, r, sigma, T, steps):
    dt = T / steps
    u = np.exp(sigma * np.sqrt(dt))
    d = 1.0 / u
    p = (np.exp(r * dt) - d) / (u - d)
    disc = np.exp(-r * dt)
    j = np.arange(steps + 1)
    prices = S0 * u ** (steps - j) * d ** j
    values = np.maximum(K - prices, 0.0)
    for i in range(steps - 1, -1, -1):
        prices = prices[:i + 1] * d * u           # one step back: S*u^(i-j)*d^j
        prices = S0 * u ** (i - np.arange(i + 1)) * d ** np.arange(i + 1)
        values = disc * (p * values[:-1] + (1 - p) * values[1:])
        values = np.maximum(values, K - prices)
    return values[0]


_g = np.random.default_rng(302)


@program((_g.standard_normal((64, 20)), 100.0, 0.02, 0.3, 1.0, 105.0),
         (_g.standard_normal((32, 10)).astype(f32), 100.0, 0.02, 0.3, 1.0, 95.0))
def gbm_paths_barrier_option(z, S0, r, sigma, T, barrier):
    n_paths, n_steps = z.shape
    dt = T / n_steps
    incr = (r - 0.5 * sigma * sigma) * dt + sigma * np.sqrt(dt) * z
    paths = S0 * np.exp(np.cumsum(incr, axis=1))
    paths = np.concatenate([np.full((n_paths, 1), S0, dtype=paths.dtype), paths], axis=1)
    knocked = (paths >= barrier).any(axis=1)
    payoff = np.where(knocked, 0.0, np.maximum(paths[:, -1] - 100.0, 0.0))
    price = np.exp(-r * T) * payoff.mean()
    stderr = payoff.std(ddof=1) / np.sqrt(n_paths)
    return price, stderr, knocked.mean(), paths.max(axis=1)


_g = np.random.default_rng(303)


@program((_g.standard_normal((60, 4)) * 0.01 + 0.001,), (_g.standard_normal((30, 3)).astype(f32) * 0.02,))
def min_variance_portfolio(returns):
    mu = returns.mean(axis=0)
    C = np.cov(returns, rowvar=False)
    ones = np.ones(C.shape[0], dtype=C.dtype)
    w = np.linalg.solve(C, ones)
    w /= w.sum()
    port = returns @ w
    vol = np.sqrt(w @ C @ w)
    corr = C / np.outer(np.sqrt(np.diag(C)), np.sqrt(np.diag(C)))
    return w, port.mean() / vol * np.sqrt(252), corr, mu


_g = np.random.default_rng(304)


@program((_g.standard_normal(50) * 0.02, 0.95), (_g.standard_normal(80).astype(f32) * 0.01, 0.99))
def historical_var_and_drawdown(rets, level):
    wealth = np.cumprod(1.0 + rets)
    peak = np.maximum.accumulate(wealth)
    dd = wealth / peak - 1.0
    var = -np.percentile(rets, 100 * (1 - level))
    tail = rets[rets <= -var]
    es = -tail.mean() if tail.size else np.nan
    end = np.argmin(dd)
    start = np.argmax(wealth[:end + 1])
    return var, es, dd.min(), (start, end), wealth[-1]


# ----------------------------------------------------------------------------- images

_g = np.random.default_rng(311)


@program((_g.integers(0, 256, (12, 10)).astype(u8), 1.0), (_g.random((9, 14)).astype(f32), 0.7))
def separable_gaussian_blur(img, sigma):
    r = 2
    x = np.arange(-r, r + 1)
    k = np.exp(-x ** 2 / (2 * sigma ** 2))
    k /= k.sum()
    a = np.pad(img.astype(np.float64), r, mode="reflect")
    h = sum(k[i] * a[:, i:i + a.shape[1] - 2 * r] for i in range(2 * r + 1))
    v = sum(k[i] * h[i:i + h.shape[0] - 2 * r, :] for i in range(2 * r + 1))
    if img.dtype == np.uint8:
        return np.clip(np.rint(v), 0, 255).astype(np.uint8)
    return v.astype(img.dtype)


_g = np.random.default_rng(312)


@program((_g.integers(0, 256, (16, 16)).astype(u8),), (np.concatenate([np.full((4, 8), 40), np.full((4, 8), 200)]).astype(u8),))
def otsu_threshold(img):
    hist = np.bincount(img.ravel(), minlength=256).astype(np.float64)
    p = hist / hist.sum()
    omega = np.cumsum(p)
    mu = np.cumsum(p * np.arange(256))
    mu_t = mu[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma_b = (mu_t * omega - mu) ** 2 / (omega * (1.0 - omega))
    sigma_b = np.nan_to_num(sigma_b)
    t = int(np.argmax(sigma_b))
    return t, (img > t).astype(np.uint8) * 255, sigma_b.max()


_g = np.random.default_rng(313)


@program((_g.integers(0, 256, (10, 12)).astype(u8), 3), (_g.random((8, 8)).astype(f32), 2))
def box_filter_integral_image(img, r):
    ii = np.zeros((img.shape[0] + 1, img.shape[1] + 1), dtype=np.float64)
    ii[1:, 1:] = img.cumsum(axis=0).cumsum(axis=1)
    k = 2 * r + 1
    s = ii[k:, k:] - ii[:-k, k:] - ii[k:, :-k] + ii[:-k, :-k]
    return s / (k * k), ii[-1, -1] == img.sum(dtype=np.float64)


_g = np.random.default_rng(314)


@program((_g.integers(0, 256, (9, 11)).astype(u8),), (_g.integers(0, 256, (5, 6)).astype(u8),))
def median_filter_windows(img):
    p = np.pad(img, 1, mode="edge")
    w = sliding_window_view(p, (3, 3))
    med = np.median(w.reshape(*w.shape[:2], 9), axis=-1)
    noisy = np.abs(img.astype(np.int16) - med) > 40
    out = img.copy()
    out[noisy] = med[noisy].astype(np.uint8)
    return out, noisy.sum()


_g = np.random.default_rng(315)


@program((_g.integers(0, 256, (6, 7, 3)).astype(u8), 2.2), (_g.integers(0, 256, (4, 4, 3)).astype(u8), 0.5))
def gamma_lut_and_grayscale(img, gamma):
    lut = (255.0 * (np.arange(256) / 255.0) ** (1.0 / gamma) + 0.5).astype(np.uint8)
    corrected = lut[img]
    gray = corrected @ np.array([0.299, 0.587, 0.114])
    img[..., 0] = lut[img[..., 0]]                    # red channel corrected in place
    return corrected, gray.astype(np.uint8), img.mean(axis=(0, 1))


_g = np.random.default_rng(316)


@program((_g.random((8, 8)), 12, 10), (_g.random((5, 7)).astype(f32), 3, 4))
def resize_bilinear_meshgrid(img, H, W):
    h, w = img.shape
    ys = np.linspace(0, h - 1, H)
    xs = np.linspace(0, w - 1, W)
    X, Y = np.meshgrid(xs, ys)
    x0 = np.floor(X).astype(int)
    y0 = np.floor(Y).astype(int)
    x1 = np.minimum(x0 + 1, w - 1)
    y1 = np.minimum(y0 + 1, h - 1)
    fx, fy = X - x0, Y - y0
    top = img[y0, x0] * (1 - fx) + img[y0, x1] * fx
    bot = img[y1, x0] * (1 - fx) + img[y1, x1] * fx
    return (top * (1 - fy) + bot * fy).astype(img.dtype)


_g = np.random.default_rng(317)


@program((_g.random((10, 10)) > 0.6,), (_g.random((6, 9)) > 0.3,))
def dilate_erode_close(mask):
    def dilate(m):
        out = m.copy()
        out[1:, :] |= m[:-1, :]
        out[:-1, :] |= m[1:, :]
        out[:, 1:] |= m[:, :-1]
        out[:, :-1] |= m[:, 1:]
        return out

    def erode(m):
        return ~dilate(~m)
    closed = erode(dilate(mask))
    return closed, closed.sum() - mask.sum(), np.argwhere(closed & ~mask)


# ----------------------------------------------------------------------------- statistics

_g = np.random.default_rng(321)


@program((_g.standard_normal(30), np.random.default_rng(5), 50),
         (_g.standard_normal(12).astype(f32), np.random.default_rng(6), 20))
def bootstrap_ci(x, rng, n_boot):
    idx = rng.integers(0, x.shape[0], size=(n_boot, x.shape[0]))
    means = x[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return x.mean(), lo, hi, means.std()


_g = np.random.default_rng(322)


@program((_g.standard_normal(40), np.linspace(-3, 3, 25)), (_g.standard_normal(15).astype(f32), np.linspace(-2, 2, 9, dtype=f32)))
def gaussian_kde_silverman(samples, grid):
    n = samples.shape[0]
    iqr = np.subtract(*np.percentile(samples, [75, 25]))
    bw = 0.9 * min(samples.std(ddof=1), iqr / 1.34) * n ** -0.2
    u = (grid[:, None] - samples[None, :]) / bw
    dens = np.exp(-0.5 * u * u).sum(axis=1) / (n * bw * np.sqrt(2 * np.pi))
    return dens, bw, np.trapezoid(dens, grid) if hasattr(np, "trapezoid") else np.trapz(dens, grid)


_g = np.random.default_rng(323)


@program((_g.standard_normal(25),), (_g.standard_normal(9).astype(f32) + 100,), (np.arange(6),))
def welford_online(x):
    n = 0
    mean = 0.0
    m2 = 0.0
    for v in x:
        n += 1
        delta = v - mean
        mean += delta / n
        m2 += delta * (v - mean)
    var = m2 / (n - 1)
    return mean, var, np.isclose(var, np.var(x, ddof=1))


_g = np.random.default_rng(324)


@program((_g.random(20) * 10, _g.standard_normal(20)), (np.arange(8.0), np.arange(8.0) * 2 + 1))
def lstsq_regression_report(x, noise):
    y = 2.0 + 0.5 * x - 0.03 * x ** 2 + noise
    A = np.column_stack([np.ones_like(x), x, x ** 2])
    coef, res, rank, sv = np.linalg.lstsq(A, y, rcond=None)
    fitted = A @ coef
    ss_res = np.sum((y - fitted) ** 2)
    ss_tot = np.sum((y - y.mean()) ** 2)
    return coef, 1 - ss_res / ss_tot, rank, sv, res


_g = np.random.default_rng(325)


@program((_g.standard_normal((30, 3)), _g.integers(0, 3, 30), _g.standard_normal((5, 3))),
         (_g.standard_normal((12, 2)).astype(f32), np.array([0, 1] * 6), _g.standard_normal((4, 2)).astype(f32)))
def gaussian_naive_bayes(X, y, Xq):
    classes = np.unique(y)
    means = np.stack([X[y == c].mean(axis=0) for c in classes])
    var = np.stack([X[y == c].var(axis=0) for c in classes]) + 1e-9
    prior = np.array([(y == c).mean() for c in classes])
    ll = -0.5 * (np.log(2 * np.pi * var)[None] + (Xq[:, None, :] - means[None]) ** 2 / var[None]).sum(-1)
    jll = ll + np.log(prior)
    post = np.exp(jll - jll.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    return classes[jll.argmax(axis=1)], post


_g = np.random.default_rng(326)


@program((_g.standard_normal((20, 4)), (_g.random(20) > 0.5).astype(int), 0.1, 30),
         (_g.standard_normal((10, 2)).astype(f32), (_g.random(10) > 0.5).astype(int), 0.5, 5))
def logistic_gd_with_history(X, y, lr, epochs):
    w = np.zeros(X.shape[1], dtype=X.dtype)
    b = 0.0
    losses = []
    for _ in range(epochs):
        z = X @ w + b
        p = 1.0 / (1.0 + np.exp(-z))
        eps = 1e-12
        losses.append(-np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps)))
        g = p - y
        w -= lr * (X.T @ g) / len(y)
        b -= lr * g.mean()
    return w, b, np.array(losses)


# ----------------------------------------------------------------------------- small ML

_g = np.random.default_rng(331)


@program((_g.standard_normal((24, 3)), np.where(_g.random(24) > 0.5, 1, -1), np.full(24, 1 / 24)),
         (_g.standard_normal((8, 2)).astype(f32), np.array([1, -1] * 4), np.full(8, 0.125, f32)))
def decision_stump_weighted(X, y, w):
    best = (np.inf, 0, 0.0, 1)
    for j in range(X.shape[1]):
        thresholds = np.unique(X[:, j])
        for t in thresholds:
            for s in (1, -1):
                pred = np.where(X[:, j] <= t, s, -s)
                err = w[pred != y].sum()
                if err < best[0]:
                    best = (err, j, t, s)
    err, j, t, s = best
    alpha = 0.5 * np.log((1 - err) / max(err, 1e-10))
    return best, alpha


_g = np.random.default_rng(332)


@program((_g.standard_normal((20, 2)), _g.standard_normal(20), _g.standard_normal((6, 2)), 3),
         (_g.standard_normal((9, 3)).astype(f32), _g.standard_normal(9).astype(f32), _g.standard_normal((2, 3)).astype(f32), 4))
def knn_regression_argpartition(Xtr, ytr, Xq, k):
    d2 = (Xq * Xq).sum(1)[:, None] - 2 * Xq @ Xtr.T + (Xtr * Xtr).sum(1)[None]
    nn = np.argpartition(d2, k, axis=1)[:, :k]
    dk = np.take_along_axis(d2, nn, axis=1)
    wts = 1.0 / (np.sqrt(np.maximum(dk, 0)) + 1e-8)
    return (ytr[nn] * wts).sum(1) / wts.sum(1), np.sort(nn, axis=1)


_g = np.random.default_rng(333)


@program((_g.standard_normal((18, 4)), _g.integers(0, 3, 18), 3, 0.5, 20),
         (_g.standard_normal((8, 2)).astype(f32), np.array([0, 1, 2, 3] * 2), 4, 0.1, 3))
def softmax_regression_eye_onehot(X, y, n_classes, lr, steps):
    Y = np.eye(n_classes)[y]
    W = np.zeros((X.shape[1], n_classes))
    for _ in range(steps):
        logits = X @ W
        logits -= logits.max(axis=1, keepdims=True)
        P = np.exp(logits)
        P /= P.sum(axis=1, keepdims=True)
        W -= lr * X.T @ (P - Y) / X.shape[0]
    acc = (P.argmax(1) == y).mean()
    return W, acc, -np.log(P[np.arange(len(y)), y]).mean()


_g = np.random.default_rng(334)


@program((_g.standard_normal((15, 2)) + np.repeat([[0, 0], [5, 5], [0, 6]], 5, axis=0), 3, 10),
         (_g.standard_normal((8, 3)).astype(f32), 2, 4))
def kmeans_plus_lloyd_with_empty_guard(X, k, iters):
    C = X[np.linspace(0, len(X) - 1, k).astype(int)].copy()
    for it in range(iters):
        d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
        lab = d.argmin(1)
        newC = np.zeros_like(C)
        np.add.at(newC, lab, X)
        cnt = np.bincount(lab, minlength=k)
        empty = cnt == 0
        newC[~empty] /= cnt[~empty, None]
        newC[empty] = C[empty]
        if np.allclose(newC, C):
            return newC, lab, it
        C = newC
    return C, lab, iters


_g = np.random.default_rng(336)


@program((_g.standard_normal((40, 3)), _g.standard_normal((5, 3)) * 4),
         (_g.standard_normal((9, 2)).astype(f32), np.array([[0, 0], [9, 9], [-9, 9]], f32)))
def kmeans_step_row_masks(X, C):
    # a center no point is nearest to (far away) keeps its place: rows masked by counts
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    onehot = d.argmin(1)[:, None] == np.arange(len(C))
    cnt = onehot.sum(0)
    newC = (onehot.T @ X).astype(C.dtype)
    empty = cnt == 0
    newC[~empty] /= cnt[~empty, None]
    newC[empty] = C[empty]
    newC[empty, :] *= 0.5
    return newC, cnt


_g = np.random.default_rng(335)


@program((_g.standard_normal((12, 5)), 2), (_g.standard_normal((6, 3)).astype(f32), 3))
def pca_whiten_svd(X, k):
    Xc = X - X.mean(axis=0)
    U, S, Vt = np.linalg.svd(Xc, full_matrices=False)
    signs = np.sign(U[np.abs(U).argmax(axis=0), np.arange(U.shape[1])])
    U *= signs
    Vt *= signs[:, None]
    explained = S ** 2 / (S ** 2).sum()
    Z = Xc @ Vt[:k].T / (S[:k] / np.sqrt(X.shape[0] - 1))
    return np.abs(Z), explained[:k], np.cumsum(explained)


# ----------------------------------------------------------------------------- geometry

_g = np.random.default_rng(341)


def _qmul(a, b):
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=-1)


@program((_g.standard_normal((5, 4)), _g.standard_normal((7, 3))), (_g.standard_normal((1, 4)).astype(f32), _g.standard_normal((3, 3)).astype(f32)))
def quaternion_rotate_points(q, pts):
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    conj = q * np.array([1, -1, -1, -1], dtype=q.dtype)
    p = np.concatenate([np.zeros(pts.shape[:-1] + (1,), pts.dtype), pts], axis=-1)
    rotated = _qmul(_qmul(q[:, None, :], p[None, :, :]), conj[:, None, :])[..., 1:]
    return rotated, np.linalg.norm(rotated, axis=-1) - np.linalg.norm(pts, axis=-1)


_g = np.random.default_rng(342)


@program((_g.standard_normal(3), 0.7, _g.standard_normal((6, 3))), (np.array([0, 0, 2.0]), np.pi / 2, np.eye(3)))
def rodrigues_rotation_matrix(axis, angle, pts):
    k = axis / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    R = np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * (K @ K)
    out = pts @ R.T
    return R, out, np.linalg.det(R), np.allclose(R @ R.T, np.eye(3))


_g = np.random.default_rng(343)


@program((_g.random((9, 2)),), (np.array([[0, 0], [4, 0], [4, 3], [0, 3]], dtype=f32),), (np.array([[0, 0], [1, 1]]),))
def shoelace_and_orientation(poly):
    if len(poly) < 3:
        raise ValueError(f"a polygon needs 3 vertices, got {len(poly)}")
    x, y = poly[:, 0], poly[:, 1]
    area2 = np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))
    e = np.roll(poly, -1, axis=0) - poly
    e2 = np.roll(e, -1, axis=0)
    turn = e[:, 0] * e2[:, 1] - e[:, 1] * e2[:, 0]
    convex = np.all(turn >= 0) or np.all(turn <= 0)
    centroid = poly.mean(axis=0)
    return 0.5 * abs(area2), np.sign(area2), convex, centroid


_g = np.random.default_rng(344)


@program((np.array([[0, 0], [4, 0], [4, 4], [2, 2], [0, 4]], dtype=f64), _g.random((20, 2)) * 5),
         (np.array([[0, 0], [3, 0], [0, 3]], dtype=f32), _g.random((7, 2)).astype(f32) * 3))
def point_in_polygon_ray_casting(poly, pts):
    x, y = pts[:, 0:1], pts[:, 1:2]
    x0, y0 = poly[:, 0], poly[:, 1]
    x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
    straddle = (y0 > y) != (y1 > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        xint = x0 + (y - y0) * (x1 - x0) / (y1 - y0)
    crossings = (straddle & (x < xint)).sum(axis=1)
    return crossings % 2 == 1, crossings


_g = np.random.default_rng(345)


@program((_g.random((10, 3)), _g.random((6, 3))), (_g.random((4, 2)).astype(f32), _g.random((5, 2)).astype(f32)))
def pairwise_nearest_and_hausdorff(A, B):
    D = np.sqrt(np.maximum(((A[:, None, :] - B[None, :, :]) ** 2).sum(-1), 0))
    ia = D.argmin(axis=1)
    ib = D.argmin(axis=0)
    mutual = ib[ia] == np.arange(len(A))
    haus = max(D.min(axis=1).max(), D.min(axis=0).max())
    iu = np.triu_indices(len(A), k=1)
    dA = np.linalg.norm(A[iu[0]] - A[iu[1]], axis=1)
    return ia, mutual, haus, dA.min(), dA.mean()


# ----------------------------------------------------------------------------- sparse-ish

_g = np.random.default_rng(351)


@program((_g.integers(0, 6, 20), _g.integers(0, 5, 20), _g.standard_normal(20), (6, 5), _g.standard_normal(5)),
         (np.array([2, 0, 2, 1]), np.array([1, 1, 1, 0]), np.array([1.0, 2, 3, 4], f32), (3, 2), np.ones(2, f32)))
def coo_to_csr_then_matvec(rows, cols, vals, shape, x):
    order = np.lexsort((cols, rows))
    r, c, v = rows[order], cols[order], vals[order]
    key = r * shape[1] + c
    first = np.concatenate([[True], key[1:] != key[:-1]])
    seg = np.flatnonzero(first)
    v = np.add.reduceat(v, seg)
    r, c = r[seg], c[seg]
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=shape[0]), out=indptr[1:])
    y = np.zeros(shape[0], dtype=np.result_type(v, x))
    np.add.at(y, r, v * x[c])
    dense = np.zeros(shape, dtype=v.dtype)
    dense[r, c] = v
    return indptr, c, v, y, np.allclose(dense @ x, y)


_g = np.random.default_rng(352)


@program((_g.integers(0, 8, (12, 2)), 8), (np.array([[0, 1], [1, 2], [2, 0], [3, 3]]), 4))
def graph_degree_and_pagerank(edges, n):
    src, dst = edges[:, 0], edges[:, 1]
    out_deg = np.bincount(src, minlength=n)
    in_deg = np.bincount(dst, minlength=n)
    pr = np.full(n, 1.0 / n)
    for _ in range(20):
        share = np.where(out_deg > 0, pr / np.maximum(out_deg, 1), 0.0)
        nxt = np.zeros(n)
        np.add.at(nxt, dst, share[src])
        dangling = pr[out_deg == 0].sum()
        pr = 0.15 / n + 0.85 * (nxt + dangling / n)
    return out_deg, in_deg, pr, np.argsort(-pr, kind="stable")


# ----------------------------------------------------------------------------- text-ish

_g = np.random.default_rng(361)


@program((_g.integers(0, 12, 40), _g.integers(0, 3, 40)), (np.array([5, 5, 1, 5, 1, 9], dtype=i32), np.array([0, 1, 0, 1, 1, 0])))
def token_counts_tfidf(tokens, doc):
    vocab, inv, counts = np.unique(tokens, return_inverse=True, return_counts=True)
    n_docs = doc.max() + 1
    tf = np.zeros((n_docs, len(vocab)))
    np.add.at(tf, (doc, inv), 1)
    df = (tf > 0).sum(axis=0)
    idf = np.log((1 + n_docs) / (1 + df)) + 1
    tfidf = tf * idf
    tfidf /= np.linalg.norm(tfidf, axis=1, keepdims=True)
    top = vocab[np.argsort(-counts, kind="stable")[:3]]
    return vocab, counts, tfidf, top


_g = np.random.default_rng(362)


@program((_g.integers(0, 5, 15).astype(f64),), (np.array([3, 1, 3, 3, 2], dtype=f32),), (np.array([7, 7, 7]),))
def rank_dense_min_max_ordinal(scores):
    order = np.argsort(scores, kind="stable")
    ordinal = np.empty(len(scores), dtype=np.intp)
    ordinal[order] = np.arange(1, len(scores) + 1)
    s = scores[order]
    new = np.r_[True, s[1:] != s[:-1]]
    dense = np.cumsum(new)[np.argsort(order, kind="stable")]
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], len(s)]
    grp = np.cumsum(new) - 1
    rmin = (starts + 1)[grp][np.argsort(order, kind="stable")]
    rmax = ends[grp][np.argsort(order, kind="stable")]
    return ordinal, dense, rmin, rmax


_g = np.random.default_rng(363)


@program((_g.random(30) * 100, np.array([0, 18, 35, 65, 100.0])), (np.array([5, 18, 18.5, 99, 100], f32), np.array([0, 18, 100], f32)))
def searchsorted_age_bins(ages, edges):
    if not np.all(np.diff(edges) > 0):
        raise ValueError("edges must increase")
    idx = np.searchsorted(edges, ages, side="right") - 1
    idx = np.clip(idx, 0, len(edges) - 2)
    counts = np.bincount(idx, minlength=len(edges) - 1)
    labels = np.array([f"{int(a)}-{int(b)}" for a, b in zip(edges[:-1], edges[1:])])
    return idx, counts, labels[counts.argmax()]


# ----------------------------------------------------------------------------- time series

_g = np.random.default_rng(371)


@program((np.sin(np.arange(64) * 0.4) + 0.3 * _g.standard_normal(64), 10),
         (_g.standard_normal(20).astype(f32), 5))
def autocorrelation_fft(x, max_lag):
    n = len(x)
    xc = x - x.mean()
    f = np.fft.rfft(xc, n=2 * n)
    acf = np.fft.irfft(f * np.conj(f))[:n]
    acf /= acf[0]
    direct = np.array([np.dot(xc[:n - k], xc[k:]) for k in range(max_lag + 1)]) / np.dot(xc, xc)
    return acf[:max_lag + 1], direct, np.argmax(acf[1:max_lag + 1] < 0.0) + 1


_g = np.random.default_rng(372)


@program((_g.standard_normal(30), 5), (_g.standard_normal(9).astype(f32), 3), (np.arange(4.0), 6))
def convolve_smoothers(x, w):
    if w > len(x):
        raise ValueError(f"window {w} longer than the series ({len(x)})")
    box = np.convolve(x, np.ones(w) / w, mode="valid")
    tri = np.convolve(x, np.bartlett(w + 2)[1:-1] / np.bartlett(w + 2)[1:-1].sum(), mode="same")
    full = np.convolve(x, [1, -1])
    return box, tri, full, np.correlate(x, x[:w], mode="valid")


_g = np.random.default_rng(373)


@program((_g.standard_normal(40).cumsum(), 7), (_g.standard_normal(12).astype(f32).cumsum(), 4))
def rolling_zscore_and_bands(x, w):
    win = sliding_window_view(x, w)
    m = win.mean(axis=-1)
    s = win.std(axis=-1, ddof=1)
    z = (x[w - 1:] - m) / s
    pad = np.full(w - 1, np.nan, dtype=z.dtype)
    upper = np.concatenate([pad, m + 2 * s])
    lower = np.concatenate([pad, m - 2 * s])
    med = np.median(win, axis=-1)
    return np.concatenate([pad, z]), upper, lower, med, np.nanmax(upper)


_g = np.random.default_rng(374)


@program((_g.standard_normal(25), 0.3, None), (_g.standard_normal(10).astype(f32), 0.5, np.zeros(10, f32)))
def ewma_loop_into_out(x, alpha, out):
    if not 0 < alpha <= 1:
        raise ValueError("alpha must be in (0, 1]")
    if out is None:
        out = np.empty_like(x)
    out[0] = x[0]
    for t in range(1, len(x)):
        out[t] = alpha * x[t] + (1 - alpha) * out[t - 1]
    return out


_g = np.random.default_rng(375)


@program((_g.standard_normal(30).cumsum(), 3, 8), (_g.standard_normal(15).astype(f32).cumsum(), 2, 5))
def macd_crossovers(price, fast, slow):
    def ema(x, span):
        a = 2.0 / (span + 1)
        w = (1 - a) ** np.arange(len(x))[::-1]
        out = np.empty_like(x, dtype=np.float64)
        for i in range(len(x)):
            ww = w[-(i + 1):]
            out[i] = (ww * x[:i + 1]).sum() / ww.sum()
        return out
    macd = ema(price, fast) - ema(price, slow)
    sign = np.sign(macd)
    cross = np.flatnonzero(np.diff(sign) != 0) + 1
    return macd, cross


# ----------------------------------------------------------------------------- user-code details

_g = np.random.default_rng(381)


@program((_g.standard_normal((6, 4)), np.zeros(6)), (_g.standard_normal((3, 4)).astype(f32), np.zeros(3, f32)))
def row_norms_into_out_then_normalize(X, norms):
    np.sqrt((X * X).sum(axis=1), out=norms)
    np.divide(X, norms[:, None], out=X, where=norms[:, None] > 0)
    X[norms == 0] = 0
    return norms.max(), X


_g = np.random.default_rng(382)


@program((_g.standard_normal((5, 5)),), (np.array([[1.0, 2], [2, 4]]),), (np.eye(3, dtype=f32) * 2,))
def solve_or_report_singular(A):
    cond = np.linalg.cond(A)
    if not np.isfinite(cond) or cond > 1e12:
        return {"ok": False, "cond": cond}
    inv = np.linalg.inv(A)
    return {"ok": True, "cond": cond, "inv": inv, "resid": np.abs(A @ inv - np.eye(len(A))).max()}


class ConvergenceError(Exception):
    pass


_g = np.random.default_rng(383)


@program((np.array([2.0, 10, 0.5]), 30), (np.array([4.0, 9.0], f32), 30), (np.array([2.0, -1.0]), 30), (np.array([1e6]), 3))
def newton_sqrt_or_raise(a, max_iter):
    if np.any(a < 0):
        raise ValueError(f"negative input at {np.flatnonzero(a < 0).tolist()}")
    x = np.maximum(a, 1.0)
    for i in range(max_iter):
        nxt = 0.5 * (x + a / x)
        if np.max(np.abs(nxt - x)) < 1e-12 * np.max(x):
            return nxt, i
        x = nxt
    raise ConvergenceError(f"no convergence after {max_iter} iterations: {x}")


_g = np.random.default_rng(384)


@program((np.arange(12).reshape(3, 4), np.array([1, 2, 3, 4])), (np.array([[255, 1], [3, 4]], dtype=u8), np.array([2, 2], dtype=u8)),
         (np.arange(6, dtype=i32).reshape(2, 3), np.array([1.5, 2.5, 3.5], f32)))
def int_inputs_to_float_code(counts, weights):
    frac = counts / counts.sum(axis=1, keepdims=True)
    weighted = (counts * weights).astype(np.float64)
    logc = np.log1p(counts)
    mean_w = np.average(counts, axis=1, weights=weights)
    return frac, weighted, logc, mean_w, counts.mean(), (counts // 2) * weights


_g = np.random.default_rng(385)


def _nan_series(n, dtype, every):
    x = np.random.default_rng(n).standard_normal(n).astype(dtype)
    x[::every] = np.nan
    return x


@program((_nan_series(20, f64, 4),), (_nan_series(9, f32, 3),), (np.full(4, np.nan),))
def nan_fill_and_stats(x):
    mask = np.isnan(x)
    if mask.all():
        return None, 0
    idx = np.where(~mask, np.arange(len(x)), 0)
    np.maximum.accumulate(idx, out=idx)
    ffill = x[idx]
    valid = ~np.isnan(ffill)
    interp = x.copy()
    interp[mask] = np.interp(np.flatnonzero(mask), np.flatnonzero(~mask), x[~mask])
    return ffill, interp, np.nanmean(x), np.nanstd(x), np.nanmedian(x), valid.sum()


_g = np.random.default_rng(386)


@program((_g.standard_normal((4, 6)), [0, 2]), (_g.standard_normal((3, 3)).astype(f32), [1]))
def mutate_columns_and_report(table, cols):
    before = table[:, cols].copy()
    for c in cols:
        col = table[:, c]
        col -= col.mean()
        col /= col.std() if col.std() > 0 else 1
    table[table > 2.5] = 2.5
    changed = ~np.isclose(table[:, cols], before)
    return before, changed.sum(), table[:, cols].std(axis=0)


_g = np.random.default_rng(387)


@program((_g.integers(1, 7, (50, 2)),), (_g.integers(1, 7, (8, 2)).astype(i32),))
def dice_two_way_table(rolls):
    table = np.zeros((6, 6), dtype=np.int64)
    np.add.at(table, (rolls[:, 0] - 1, rolls[:, 1] - 1), 1)
    totals = rolls.sum(axis=1)
    dist = np.bincount(totals, minlength=13)[2:]
    expected = table.sum(0)[None, :] * table.sum(1)[:, None] / table.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        chi2 = np.nansum((table - expected) ** 2 / expected)
    return table, dist, chi2, np.unravel_index(table.argmax(), table.shape)


_g = np.random.default_rng(388)


@program((_g.standard_normal((3, 8)), np.array([0.5, 1.0, 2.0])), (_g.standard_normal((2, 9)).astype(f32), np.array([1.0, 3.0], f32)))
def fir_lowpass_design_and_apply(x, cutoffs):
    taps = 7
    n = np.arange(taps) - (taps - 1) / 2
    out = np.empty_like(x)
    for i, fc in enumerate(cutoffs):
        h = np.sinc(2 * fc / 8 * n) * np.hamming(taps)
        h /= h.sum()
        out[i] = np.convolve(x[i], h, mode="same")
    return out, np.abs(np.fft.rfft(out, axis=1))


@program((np.array([3.0, -1.0, 2.0]),), (np.arange(4, dtype=f32),))
def lists_as_text_in_a_report(x):
    # a list made in the frame, written as text: '[1, 2]', never a tuple's '(1, 2)'
    shape = [x.shape[0], 1]
    lines = [f"shape {shape}", str([round(float(v), 2) for v in (x.min(), x.max())]), repr([x.ndim])]
    lines.append("{} / {!r}".format([x.size], ["a", x.size]))
    return "; ".join(lines), x.reshape(shape) * 2


@program((np.array([np.nan, 1.0, 0.0, -0.0]), np.arange(5)),
         (np.array([2.0, -1.0, -0.0, 0.0], f32), np.array([7, -7], dtype=i32)))
def builtin_min_max_of_numpy_scalars(x, k):
    # Python's min/max on NumPy scalars: the first wins ties, NaN only when it is first
    a, b, z, nz = x[0] * 1, x[1] * 1, x[2] * 1, x[3] * 1
    return (min(a, b), min(b, a), min(z, nz), max(nz, z), max(a, b), max(b, a),
            min(b, z, nz), max(k.sum(), 3 * k[0]), min(x.std(), np.ptp(x) / 1.34))


test_program = program_test(PROGRAMS, BACKENDS, share=8)


def _equalize_by_lut(img):
    hist = np.bincount(img.ravel(), minlength=256)
    cdf = np.cumsum(hist) / img.size
    mean_level = (hist * np.arange(256)).sum() / img.size   # meets a 256-long array
    return (cdf[img] * 255).astype(np.uint8), hist, mean_level


def _mean_by_count(x):
    n = 0
    total = 0.0
    for v in x:
        n += 1
        total += v
    return total / n, x / n, n


def test_counts_of_a_uint8_image_have_their_static_length():
    """np.bincount of uint8 values with minlength=256 has 256 entries whatever the data:
    the code after it (cdf, lookup, products with np.arange(256)) stays in the graph
    instead of breaking where a size known only after the count meets 256 (otsu_threshold)."""
    img = np.random.default_rng(390).integers(0, 256, (6, 5)).astype(u8)
    out = kiln.explain(_equalize_by_lut)(img)
    assert out.graph_break_count == 0 and out.graph_count == 1, str(out)


def test_a_count_from_a_loop_divides_in_the_graph():
    """A Python int counted in a loop node (``n += 1``) divides float64 values in the
    graph: NumPy converts the weak int to float64 there, as the graph does (it broke
    with 'passed to a NumPy function': welford_online)."""
    x = np.random.default_rng(391).standard_normal(7)
    out = kiln.explain(_mean_by_count)(x)
    assert out.graph_break_count == 0 and out.graph_count == 1, str(out)
    for backend in ("eager", "cpp"):
        got, want = kiln.compile(_mean_by_count, backend=backend)(x), _mean_by_count(x)
        assert type(got[0]) is type(want[0]) and type(got[2]) is int and got[2] == want[2]
        np.testing.assert_allclose(got[1], want[1], rtol=1e-15)
        assert got[0] == want[0]


def test_builtin_min_of_numpy_scalars_stays_in_the_graph():
    """Silverman's bandwidth, ``min(samples.std(ddof=1), iqr / 1.34)``: builtin min of
    two float64 scalars is a select in the graph (it broke with 'builtin min() compares
    array values'); of scalars of different dtypes it still breaks (the result's type
    would depend on the values)."""
    fn, calls = PROGRAMS["gaussian_kde_silverman"]
    out = kiln.explain(fn)(*calls[0])
    assert out.graph_break_count == 0 and out.graph_count == 1, str(out)

    def mixed(x, k):
        return min(x.sum(), k.sum())
    out = kiln.explain(mixed)(np.ones(3), np.arange(3))
    assert out.graph_break_count == 1 and "min()" in out.break_reasons[0].reason


def test_row_mask_updates_of_kmeans_centers_stay_in_the_graph():
    """``newC[~empty] /= cnt[~empty, None]; newC[empty] = C[empty]``: selections by a mask
    over the leading axis run as masked ops over the whole arrays (they broke the graph
    at ``cnt[~empty, None]``: kmeans_step_row_masks)."""
    fn = PROGRAMS["kmeans_step_row_masks"][0]
    for args in PROGRAMS["kmeans_step_row_masks"][1]:
        out = kiln.explain(fn)(*args)
        assert out.graph_break_count == 0 and out.graph_count == 1, str(out)


def _kmeans_counts(X, C, bump):
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    lab = d.argmin(1)
    view = lab[:]
    if bump:
        view[0] += len(C) + 2     # a value past minlength: NumPy's counts grow
    cnt = np.bincount(lab, minlength=len(C))
    empty = cnt == 0
    return cnt, cnt[~empty] * 2.0, empty.sum()


def test_counts_of_argmin_indices_have_their_static_length():
    """np.bincount(d.argmin(1), minlength=k) over k columns has exactly k entries: the row
    masks made from it meet the centers' k rows in the graph (kmeans_plus_lloyd_with_empty_guard
    broke there); an index written past k (through a view) or fewer minlength than the
    columns keep NumPy's length."""
    g = np.random.default_rng(392)
    X, C = g.standard_normal((30, 2)), g.standard_normal((4, 2)) * 5
    C[3] = 100.0   # no point nearest: a zero count
    fn = PROGRAMS["kmeans_plus_lloyd_with_empty_guard"][0]
    out = kiln.explain(fn)(X, 4, 5)
    assert not any(r.kind == "data_dependent" and "allclose" not in str(r)
                   for r in out.break_reasons), str(out)
    for bump in (False, True):
        want = _kmeans_counts(X, C, bump)
        for backend in ("eager", "cpp"):
            got = kiln.compile(_kmeans_counts, backend=backend)(X, C, bump)
            for a, b in zip(got, want):
                assert np.asarray(a).dtype == np.asarray(b).dtype
                np.testing.assert_array_equal(a, b)
    out = kiln.explain(_kmeans_counts)(X, C, False)
    assert out.graph_break_count == 0, str(out)
