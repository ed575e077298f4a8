"""Application programs written as NumPy users write them, through kiln.compile and
checked like tests/test_programs.py (values, dtypes, shapes, exceptions, argument states,
aliasing): image processing (separable blurs by slicing, Sobel with non-maximum
quantization, histogram equalization, morphology on sliding windows, bilinear resizing,
tiled equalization), machine learning by hand (k-means, PCA, softmax cross-entropy with
one-hot rows, batch norm forward and backward, Adam state mutated in place, training
loops with kiln.value_and_grad), scientific codes (stencils, Runge-Kutta, Verlet, particle
binning, CSR products with np.add.reduceat, Monte Carlo with a Generator passed in) and
finance (rolling statistics, EWMA, drawdowns, quantiles). Each program draws its data from
its own generator. The programs found the graph breaks that ufunc.reduceat, the reduce and
accumulate of ufuncs without a fused op, and ufunc.at other than np.add.at used to cost
(kiln/ops/ufunc_methods.py): tests at the end keep those in the graph.
"""
from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import kiln
from tests.test_programs import BACKENDS, program_registry, program_test

f32 = np.float32
PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)


def g(seed):
    return np.random.default_rng(seed)


# ----------------------------------------------------------------------------- images

@program((g(1).standard_normal((9, 11)),), (g(2).standard_normal((8, 8)).astype(f32),))
def gaussian_blur_separable(img):
    k = np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16.0
    p = np.pad(img, 2, mode="reflect")
    rows = sum(k[i] * p[:, i:i + img.shape[1]] for i in range(5))
    return sum(k[i] * rows[i:i + img.shape[0], :] for i in range(5))


@program((g(3).standard_normal((12, 10)),), (g(4).standard_normal((9, 9)).astype(f32),))
def sobel_quantized_directions(img):
    p = np.pad(img, 1, mode="edge")
    w = sliding_window_view(p, (3, 3))
    kx = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], dtype=img.dtype)
    gx = np.einsum("ijkl,kl->ij", w, kx)
    gy = np.einsum("ijkl,kl->ij", w, kx.T)
    mag = np.hypot(gx, gy)
    ang = np.rad2deg(np.arctan2(gy, gx)) % 180
    q = np.select([ang < 22.5, ang < 67.5, ang < 112.5, ang < 157.5], [0, 45, 90, 135], 0)
    return mag, q, np.percentile(mag, 90, method="nearest")


@program((g(5).integers(0, 256, (10, 12)).astype(np.uint8),), (g(6).integers(0, 50, (6, 7)).astype(np.uint8),))
def equalize_with_interp(img):
    hist, bins = np.histogram(img.ravel(), bins=256, range=(0, 256))
    cdf = hist.cumsum()
    cdf = cdf / cdf[-1]
    out = np.interp(img.ravel(), bins[:-1], cdf * 255)
    return out.reshape(img.shape).astype(np.uint8), hist.argmax()


@program((g(7).integers(0, 256, (16, 16), dtype=np.uint8), 4),)
def equalize_per_tile(img, t):
    h, w = img.shape
    tiles = img.reshape(h // t, t, w // t, t).swapaxes(1, 2)
    out = np.empty_like(img)
    for i in range(h // t):
        for j in range(w // t):
            tile = tiles[i, j]
            cdf = np.cumsum(np.bincount(tile.ravel(), minlength=256))
            lut = np.round((cdf - cdf.min()) * 255.0 / max(cdf.max() - cdf.min(), 1)).astype(np.uint8)
            out[i * t:(i + 1) * t, j * t:(j + 1) * t] = lut[tile]
    return out


@program((g(8).random((7, 9)) > 0.6,), (g(9).random((5, 5)) > 0.3,))
def open_binary_mask(mask):
    eroded = sliding_window_view(np.pad(mask, 1), (3, 3)).all(axis=(-1, -2))
    opened = sliding_window_view(np.pad(eroded, 1), (3, 3)).any(axis=(-1, -2))
    return opened, eroded.sum(), (opened ^ mask).mean()


@program((g(10).standard_normal((6, 8)), 11, 13), (g(11).standard_normal((5, 5)).astype(f32), 3, 7))
def resize_bilinear_ix(img, H, W):
    h, w = img.shape
    ys = np.linspace(0, h - 1, H)
    xs = np.linspace(0, w - 1, W)
    y0 = np.floor(ys).astype(int)
    x0 = np.floor(xs).astype(int)
    y1 = np.minimum(y0 + 1, h - 1)
    x1 = np.minimum(x0 + 1, w - 1)
    wy = (ys - y0)[:, None]
    wx = (xs - x0)[None, :]
    a, b = img[np.ix_(y0, x0)], img[np.ix_(y0, x1)]
    c, d = img[np.ix_(y1, x0)], img[np.ix_(y1, x1)]
    return a * (1 - wy) * (1 - wx) + b * (1 - wy) * wx + c * wy * (1 - wx) + d * wy * wx


# ----------------------------------------------------------------------------- machine learning

@program((g(12).standard_normal((20, 2)), 3, 5), (g(13).standard_normal((15, 3)).astype(f32), 2, 4))
def kmeans_argmin_assign(X, k, iters):
    C = X[:k].copy()
    for _ in range(iters):
        d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
        lab = np.argmin(d, axis=1)
        for j in range(k):
            m = lab == j
            if m.any():
                C[j] = X[m].mean(axis=0)
    return C, lab, d[np.arange(len(X)), lab].sum()


@program((g(14).standard_normal((30, 4)),), (g(15).standard_normal((6, 4)).astype(f32),))
def pca_by_eigh_sorted(X):
    Xc = X - X.mean(0)
    w, V = np.linalg.eigh(Xc.T @ Xc / (len(X) - 1))
    order = np.argsort(w)[::-1]
    w, V = w[order], V[:, order]
    V = V * np.sign(V[0])
    return w, V, (Xc @ V[:, :2]).shape, w / w.sum()


@program((g(16).standard_normal((10, 5)),), (g(17).standard_normal((4, 4)),))
def svd_low_rank(A):
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    Ak = (U[:, :2] * s[:2]) @ Vt[:2]
    return s, np.linalg.norm(A - Ak), np.allclose(U.T @ U, np.eye(len(s)))


@program((g(18).standard_normal((8, 5)), np.array([0, 2, 1, 1, 0, 2, 2, 1]), 3),)
def softmax_xent_one_hot(logits, y, k):
    Y = np.eye(k)[y]
    z = logits[:, :k] - logits[:, :k].max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -(Y * logp).sum() / len(y), (logp.argmax(1) == y).mean(), Y.dtype


@program((g(19).standard_normal((16, 4)), g(20).standard_normal((4, 3)), np.arange(16) % 3),)
def softmax_regression_logaddexp(X, W, y):
    z = X @ W
    lse = np.logaddexp.reduce(z, axis=1)
    p = np.exp(z - lse[:, None])
    grad = X.T @ (p - np.eye(3)[y]) / len(y)
    return (lse - z[np.arange(len(y)), y]).mean(), grad, np.maximum.reduce(z, axis=0)


@program((g(21).standard_normal((6, 3)), np.ones(3), np.zeros(3), np.zeros(3), np.ones(3), True),
         (g(22).standard_normal((6, 3)), np.ones(3), np.zeros(3), np.full(3, 0.5), np.full(3, 2.0), False))
def batchnorm_running_stats(x, gamma, beta, rmean, rvar, training):
    if training:
        mu, var = x.mean(0), x.var(0)
        rmean *= 0.9
        rmean += 0.1 * mu
        rvar *= 0.9
        rvar += 0.1 * var * len(x) / (len(x) - 1)
    else:
        mu, var = rmean, rvar
    return gamma * (x - mu) / np.sqrt(var + 1e-5) + beta


@program((g(23).standard_normal((8, 4)), g(24).standard_normal(4), g(25).standard_normal(4),
          g(26).standard_normal((8, 4))),)
def batchnorm_backward_by_hand(x, gamma, beta, dout):
    N = x.shape[0]
    xc = x - x.mean(0)
    std = np.sqrt((xc ** 2).mean(0) + 1e-5)
    xh = xc / std
    dxh = dout * gamma
    dx = (1.0 / N) / std * (N * dxh - dxh.sum(0) - xh * (dxh * xh).sum(0))
    return gamma * xh + beta, dx, (dout * xh).sum(0), dout.sum(0)


class Adam:
    def __init__(self, n, lr=1e-2):
        self.m, self.v, self.t, self.lr = np.zeros(n), np.zeros(n), 0, lr

    def step(self, w, grad, b1=0.9, b2=0.999, eps=1e-8):
        self.t += 1
        self.m *= b1
        self.m += (1 - b1) * grad
        self.v *= b2
        self.v += (1 - b2) * grad * grad
        w -= self.lr * (self.m / (1 - b1 ** self.t)) / (np.sqrt(self.v / (1 - b2 ** self.t)) + eps)
        return w


@program(lambda: (Adam(4), np.linspace(-1, 1, 4), 3), lambda: (Adam(4, lr=0.1), np.linspace(0, 2, 4), 2))
def adam_object_updates_in_place(opt, w, steps):
    for _ in range(steps):
        opt.step(w, 2 * w - 1)
    return w, opt.t


class LogisticModel:
    def __init__(self, d):
        self.w, self.b = np.zeros(d), 0.0

    def predict(self, X):
        return 1 / (1 + np.exp(-(X @ self.w + self.b)))

    def fit_step(self, X, y, lr):
        p = self.predict(X)
        self.w -= lr * X.T @ (p - y) / len(y)
        self.b -= lr * (p - y).mean()
        return -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))


@program(lambda: (LogisticModel(3), np.linspace(-1, 1, 30).reshape(10, 3), (np.arange(10) % 2).astype(float), 0.5, 4),)
def methods_training_loop(m, X, y, lr, n):
    losses = [m.fit_step(X, y, lr) for _ in range(n)]
    return np.array(losses), m.w, m.b


def _logistic_loss(w, X, y):
    return np.mean(np.logaddexp(0, -y * (X @ w))) + 0.01 * (w ** 2).sum()


@program((np.linspace(-1, 1, 40).reshape(10, 4), np.where(np.arange(10) % 3 == 0, 1.0, -1.0), 0.3, 5),)
def value_and_grad_training_loop(X, y, lr, n):
    w = np.zeros(X.shape[1])
    hist = []
    for _ in range(n):
        loss, grad = kiln.value_and_grad(_logistic_loss)(w, X, y)
        w = w - lr * grad
        hist.append(loss)
    return w, hist


@program((g(27).standard_normal((12, 3)), g(28).standard_normal((3, 3))),)
def adam_state_in_a_dict(X, W):
    state = {"m": np.zeros_like(W), "v": np.zeros_like(W), "t": 0}
    for _ in range(3):
        grad = X.T @ (X @ W) / len(X)
        state["t"] += 1
        state["m"][:] = 0.9 * state["m"] + 0.1 * grad
        state["v"][...] = 0.999 * state["v"] + 0.001 * grad ** 2
        W -= 0.01 * (state["m"] / (1 - 0.9 ** state["t"])) / (np.sqrt(state["v"] / (1 - 0.999 ** state["t"])) + 1e-8)
    return W, state


# ----------------------------------------------------------------------------- science

@program((np.zeros((8, 8)), 5, 0.2),)
def heat_2d_fresh_laplacian(u, steps, k):
    u[3:5, 3:5] = 1.0
    for _ in range(steps):
        lap = np.zeros_like(u)
        lap[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
        u = u + k * lap
    return u, u.sum()


@program((np.zeros((10, 10)), 20),)
def wave_equation_two_buffers(u0, steps):
    u = u0.copy()
    u[4:6, 4:6] = 1.0
    prev = u.copy()
    for _ in range(steps):
        lap = np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4 * u
        nxt = 2 * u - prev + 0.2 * lap
        nxt[0, :] = nxt[-1, :] = nxt[:, 0] = nxt[:, -1] = 0
        prev, u = u, nxt
    return u, np.abs(u).max()


def _rhs(t, y):
    return np.array([y[1], -y[0]])


@program((np.array([1.0, 0.0]), 0.1, 5),)
def rk4_with_a_rhs_function(y0, h, n):
    t, y = 0.0, y0
    ys = [y0]
    for _ in range(n):
        k1 = _rhs(t, y)
        k2 = _rhs(t + h / 2, y + h / 2 * k1)
        k3 = _rhs(t + h / 2, y + h / 2 * k2)
        k4 = _rhs(t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += h
        ys.append(y)
    return np.stack(ys), t


@program((g(29).standard_normal((20, 2)), g(30).standard_normal((20, 2)) * 0.1, 0.05, 10),)
def verlet_pairwise_gravity(pos, vel, dt, steps):
    pos, vel = pos.copy(), vel.copy()

    def acc(p):
        d = p[None, :, :] - p[:, None, :]
        r2 = (d ** 2).sum(-1) + 0.1
        np.fill_diagonal(r2, np.inf)
        return (d / r2[..., None] ** 1.5).sum(1)
    a = acc(pos)
    for _ in range(steps):
        pos += vel * dt + 0.5 * a * dt ** 2
        a_new = acc(pos)
        vel += 0.5 * (a + a_new) * dt
        a = a_new
    return pos, vel, 0.5 * (vel ** 2).sum()


@program((g(31).standard_normal(30), np.ones(30), np.linspace(-3, 3, 7)),)
def particle_binning_four_ways(pos, w, edges):
    idx = np.searchsorted(edges, pos, side="right") - 1
    ok = (idx >= 0) & (idx < len(edges) - 1)
    acc = np.zeros(len(edges) - 1)
    np.add.at(acc, idx[ok], w[ok])
    cnt = np.bincount(idx[ok], minlength=len(edges) - 1)
    u, c = np.unique(idx[ok], return_counts=True)
    return acc, cnt, u, c


@program((g(32).standard_normal(30), g(33).integers(0, 5, 30)),
         (g(34).standard_normal(12).astype(f32), g(35).integers(0, 5, 12)))
def scatter_extremes_per_cell(v, cell):
    hi = np.full(5, -np.inf, dtype=v.dtype)
    lo = np.full(5, np.inf, dtype=v.dtype)
    np.maximum.at(hi, cell, v)
    np.minimum.at(lo, cell, v)
    prod = np.ones(5, dtype=v.dtype)
    np.multiply.at(prod, cell, np.abs(v) + 0.5)
    return hi, lo, prod, hi - lo


@program((np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([0, 2, 1, 0, 2]), np.array([0, 2, 3, 5]), np.arange(3.0)),
         (np.array([1.0, 2.0, 3.0]), np.array([0, 1, 2]), np.array([0, 0, 3, 3]), np.array([1.0, -1.0, 2.0])))
def csr_matvec_reduceat(data, indices, indptr, x):
    # (an empty row's reduceat gives the next row's first product, as in NumPy: the caller masks it)
    rows = np.add.reduceat(data * x[indices], indptr[:-1])
    return np.where(np.diff(indptr) > 0, rows, 0.0)


@program((np.array([0.1, 0.5, 0.5, 0.9, 1.7, 2.2]), np.array([0.0, 1.0, 2.0, 3.0]),
          np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])),)
def histogram_weights_density_inverse(x, edges, w):
    h, e = np.histogram(x, bins=edges, weights=w)
    d, _ = np.histogram(x, bins=edges, density=True)
    u, inv, cnt = np.unique(np.digitize(x, edges) - 1, return_inverse=True, return_counts=True)
    return h, d, e, u, inv, cnt, np.interp([-1.0, 0.5, 9.0], edges, np.arange(4.0), left=-5, right=5)


@program(lambda: (100, np.random.default_rng(7)), lambda: (50, np.random.default_rng(8)))
def monte_carlo_pi_generator_argument(n, rng):
    inside = (rng.random((n, 2)) ** 2).sum(axis=1) <= 1.0
    return 4 * inside.mean(), inside.sum(), rng


# ----------------------------------------------------------------------------- finance

@program((np.cumsum(g(36).standard_normal(40)) + 100, 5),)
def rolling_stats_by_cumsum_and_windows(p, w):
    r = np.diff(np.log(p))
    c = np.cumsum(np.insert(r, 0, 0.0))
    c2 = np.cumsum(np.insert(r * r, 0, 0.0))
    mean = (c[w:] - c[:-w]) / w
    var = (c2[w:] - c2[:-w]) / w - mean ** 2
    return (mean, np.sqrt(np.maximum(var, 0)), sliding_window_view(r, w).std(axis=-1),
            np.percentile(r, [5, 50, 95]), np.quantile(r, 0.1))


@program((g(37).standard_normal(50), 7), (g(38).standard_normal(30).astype(f32), 5))
def rolling_nan_aware_and_ffill(x, w):
    x = x.copy()
    x[::7] = np.nan
    win = sliding_window_view(x, w)
    m, s = np.nanmean(win, axis=1), np.nanstd(win, axis=1)
    idx = np.where(~np.isnan(x), np.arange(len(x)), 0)
    np.maximum.accumulate(idx, out=idx)
    return (x[w - 1:] - m) / s, x[idx], np.nanmedian(win, axis=1)


@program((np.cumsum(g(39).standard_normal(30)) + 50, 0.2),)
def ewma_loop_and_drawdown(p, alpha):
    out = np.empty_like(p)
    out[0] = p[0]
    for i in range(1, len(p)):
        out[i] = alpha * p[i] + (1 - alpha) * out[i - 1]
    peak = np.maximum.accumulate(p)
    dd = (p - peak) / peak
    return out, dd.min(), dd.argmin()


@program((g(40).standard_normal(20), 4),)
def ewm_by_weights(x, span):
    a = 2 / (span + 1)
    w = (1 - a) ** np.arange(len(x))[::-1]
    return np.cumsum(w * x) / np.cumsum(w)


@program((np.cumsum(g(41).standard_normal(60) * 0.01),),)
def drawdown_periods(lr):
    wealth = np.exp(np.cumsum(lr))
    dd = wealth / np.maximum.accumulate(wealth) - 1
    end = int(np.argmin(dd))
    start = int(np.argmax(wealth[:end + 1])) if end > 0 else 0
    edges = np.diff((dd < 0).astype(np.int8))
    return dd.min(), start, end, np.flatnonzero(edges == 1), np.cumprod(1 + np.expm1(lr))[-1]


@program((np.cumsum(g(42).standard_normal(25)) + 100,),)
def sharpe_and_sortino(p):
    r = p[1:] / p[:-1] - 1
    down = r[r < 0]
    sortino = r.mean() / down.std() if down.size else np.inf
    return r.mean() / r.std(ddof=1) * np.sqrt(252), sortino, np.diff(np.log(p)).sum()


@program((g(43).standard_normal((40, 3)),),)
def covariance_correlation_var(R):
    return (np.cov(R, rowvar=False), np.corrcoef(R.T), np.quantile(R, [0.05, 0.5, 0.95], axis=0),
            -np.quantile(R @ np.array([0.5, 0.3, 0.2]), 0.05, method="lower"))


@program(lambda: (np.random.default_rng(5), 200, 0.05), lambda: (np.random.default_rng(6), 100, 0.2))
def asian_option_monte_carlo(rng, n, sigma):
    z = rng.standard_normal((n, 12))
    paths = 100 * np.exp(np.cumsum((0.01 - 0.5 * sigma ** 2) / 12 + sigma * np.sqrt(1 / 12) * z, axis=1))
    payoff = np.maximum(paths.mean(axis=1) - 100, 0)
    return payoff.mean(), payoff.std(ddof=1) / np.sqrt(n), rng


test_program = program_test(PROGRAMS, BACKENDS, share=8)


# ----------------------------------------------------------------------------- no graph break

def _breaks(fn, *args):
    return [b.reason for b in kiln.explain(fn)(*args).break_reasons]


@pytest.mark.parametrize("name", ["csr_matvec_reduceat", "softmax_regression_logaddexp",
                                  "scatter_extremes_per_cell"])
def test_ufunc_methods_stay_in_the_graph(name):
    """np.add.reduceat, np.logaddexp.reduce and np.maximum.at (and the other ufunc methods
    without a fused op) used to break the graph: 'numpy.add.reduceat has no kiln op'."""
    fn, calls = PROGRAMS[name]
    assert _breaks(fn, *calls[0]) == []


def test_a_generator_argument_draws_in_the_graph():
    """A Generator passed in (a new one per call) is drawn from in the graph, guarded by
    its type; its draws broke the graph and ran as Python."""
    fn, calls = PROGRAMS["monte_carlo_pi_generator_argument"]
    assert _breaks(fn, *calls[0]()) == []
