"""A twenty-first set of real NumPy programs through kiln.compile, from fields and idioms
the earlier rounds left out: signal processing (an analytic signal by FFT, cepstral pitch,
a Schroeder reverberator, Karplus-Strong), time series (LOESS, the Hodrick-Prescott
filter, Ljung-Box), nonparametric statistics (Mann-Whitney U with ties, the log-rank
test, Kruskal-Wallis, Theil-Sen, Fisher's exact test by math.comb), machine learning
(AdaBoost on stumps, lasso by coordinate descent, a 1-D Gaussian mixture by EM, Huber
regression by IRLS), graphs (label propagation, spectral bisection), numerics (a shooting
method, Euler-Maruyama, Halton quasi-Monte Carlo, a projectile with an event in a while
loop), geometry and vision (Kabsch alignment, a DLT homography, Hu moments, an ordered
Bayer dither, Ramer-Douglas-Peucker by recursion, segment intersections), bytes (RC4, a
base64 encoder), trading (parabolic SAR, Heikin-Ashi with ATR, FIFO cost basis with a
deque), data (weekly groups of datetime64, a bigram model in dicts, a bank queue by
heapq, inversions by merge sort), int32 overflow against Python ints, and objects,
try/except, generators, structured dtypes, masked arrays and NaN groups. Every program ran
against NumPy on cpp, cpp-dynamic, eager and aot_eager, on cpp with the cost model on at
its sizes and scaled x10 and x30 (benchmarks.cost_model_sweep), and was timed against
NumPy (benchmarks.slowdown_sweep). Fixed: the bank queue's ``busy = defaultdict(float)``
gained ``1: 0.0`` on its second call (explaining a recompile read ``busy[1]``:
tests/guards); with the cost model on, the FIFO cost basis raised UnboundLocalError
'___tmp0' and Ramer-Douglas-Peucker IndexError (a priced-out region from a resume entered
mid-statement: test_cost_model_resumed); ``[0.0] * tellers`` broke the graph
(test_list_mutation); Kabsch's ``np.diag([1.0, 1.0, d])`` broke it
(test_spellings_captured); Kruskal-Wallis's ``ties ** 3 - ties`` sent its graph to the
NumPy interpreter, 1.3x NumPy (test_extern_operands); Mann-Whitney's ``min(p, 1.0)`` of
``p = math.erfc(...)`` broke it, 1.6x NumPy (test_python_math). LOESS returns x's dtype:
kiln's float32 ``w ** 3`` is libmvec's powf, 1 ulp off glibc's scalar powf NumPy calls on
5% of inputs on an AVX2 machine, and a float64 result amplified it past 1e-12. Left: the
FIFO cost basis at 60 trades runs 7x NumPy with the cost model on (its loop's breaks
resume every trip once the graph after the loop compiles).
"""
from __future__ import annotations

import heapq
import itertools
import math
import operator
from collections import Counter, defaultdict, deque

import numpy as np

from tests.test_programs import program_registry, program_test

f32, f64, i32, i64, u8 = np.float32, np.float64, np.int32, np.int64, np.uint8

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)

_g = np.random.default_rng(2121)
_t = np.arange(128) / 128.0


# ----------------------------------------------------------------------------- signal processing

@program((np.sin(2 * np.pi * 10 * _t) * (1 + 0.5 * np.sin(2 * np.pi * 2 * _t)), 128.0),
         (np.cos(2 * np.pi * 5 * _t[:51]).astype(f32), 51.0))
def hilbert_envelope_inst_freq(x, fs):
    n = x.shape[0]
    X = np.fft.fft(x)
    h = np.zeros(n)
    if n % 2 == 0:
        h[0] = h[n // 2] = 1
        h[1:n // 2] = 2
    else:
        h[0] = 1
        h[1:(n + 1) // 2] = 2
    z = np.fft.ifft(X * h)
    env = np.abs(z)
    phase = np.unwrap(np.angle(z))
    inst_f = np.diff(phase) / (2.0 * np.pi) * fs
    return env, inst_f, z.real


@program((np.sign(np.sin(2 * np.pi * 8 * np.arange(256) / 256.0)) + 0.1 * _g.standard_normal(256), 256.0, 4.0, 40.0),
         (np.sin(2 * np.pi * 12 * np.arange(200) / 200.0) ** 3, 200.0, 5.0, 50.0))
def cepstrum_pitch(frame, fs, fmin, fmax):
    w = np.hanning(len(frame))
    spec = np.fft.rfft(frame * w)
    ceps = np.fft.irfft(np.log(np.abs(spec) + 1e-12), n=len(frame))
    qmin, qmax = int(fs / fmax), int(fs / fmin)
    band = ceps[qmin:qmax]
    q = qmin + int(np.argmax(band))
    return fs / q, ceps[:8]


def _comb(x, delay, g):
    y = np.zeros_like(x)
    buf = np.zeros(delay)
    k = 0
    for i in range(len(x)):
        out = buf[k]
        y[i] = out
        buf[k] = x[i] + g * out
        k = (k + 1) % delay
    return y


def _allpass(x, delay, g):
    y = np.empty_like(x)
    buf = np.zeros(delay)
    k = 0
    for i in range(len(x)):
        b = buf[k]
        y[i] = -g * x[i] + b
        buf[k] = x[i] + g * y[i]
        k = (k + 1) % delay
    return y


@program((np.r_[1.0, np.zeros(99)], (7, 11, 13), 0.7), (_g.standard_normal(60), (5, 9), 0.5))
def schroeder_reverb(x, delays, g):
    wet = sum(_comb(x, d, g) for d in delays) / len(delays)
    wet = _allpass(wet, 5, 0.7)
    return _allpass(wet, 3, 0.7)


@program((np.random.default_rng(3), 20, 120, 0.996), (np.random.default_rng(4), 7, 50, 0.99))
def karplus_strong(rng, period, n, decay):
    buf = deque(rng.uniform(-1, 1, period))
    out = np.empty(n)
    for i in range(n):
        first = buf.popleft()
        out[i] = first
        buf.append(decay * 0.5 * (first + buf[0]))
    return out, float(np.abs(out[-period:]).max())


# ----------------------------------------------------------------------------- time series

@program((np.linspace(0, 10, 40), np.sin(np.linspace(0, 10, 40)) + 0.2 * _g.standard_normal(40), 0.3),
         (np.linspace(0, 1, 12).astype(f32), np.linspace(0, 1, 12).astype(f32) ** 2, 0.5))
def loess_local_linear(x, y, frac):
    n = len(x)
    r = max(int(math.ceil(frac * n)), 2)
    fitted = np.empty(n, dtype=x.dtype)
    for i in range(n):
        d = np.abs(x - x[i])
        h = np.sort(d)[r - 1]
        w = np.clip(d / h, 0.0, 1.0)
        w = (1 - w ** 3) ** 3
        A = np.stack([np.ones(n), x - x[i]], axis=1) * np.sqrt(w)[:, None]
        beta = np.linalg.lstsq(A, y * np.sqrt(w), rcond=None)[0]
        fitted[i] = beta[0]
    return fitted


@program((np.cumsum(_g.standard_normal(30)) + np.linspace(0, 5, 30), 100.0), (np.arange(6.0) ** 2, 1600.0))
def hodrick_prescott(y, lam):
    n = len(y)
    D = np.diff(np.eye(n), n=2, axis=0)
    trend = np.linalg.solve(np.eye(n) + lam * D.T @ D, y)
    return trend, y - trend


@program((_g.standard_normal(80), 10), (np.sin(np.arange(50) / 3.0), 5), (np.ones(4), 2))
def ljung_box(x, lags):
    n = len(x)
    xc = x - x.mean()
    denom = np.dot(xc, xc)
    if denom == 0:
        raise ZeroDivisionError("constant series has no autocorrelation")
    acf = np.correlate(xc, xc, mode="full")[n - 1:n + lags] / denom
    k = np.arange(1, lags + 1)
    q = n * (n + 2) * np.cumsum(acf[1:] ** 2 / (n - k))
    return acf, q


# ----------------------------------------------------------------------------- nonparametric statistics

def _avg_ranks(a):
    vals, inv, counts = np.unique(a, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    starts = ends - counts + 1
    return ((starts + ends) / 2.0)[inv.ravel()], counts


@program((_g.normal(0, 1, 15), _g.normal(0.8, 1, 12)), (np.array([1, 2, 2, 3, 3, 3]), np.array([2, 3, 4, 4, 5])))
def mann_whitney_u(x, y):
    n1, n2 = len(x), len(y)
    ranks, ties = _avg_ranks(np.concatenate([x, y]))
    r1 = ranks[:n1].sum()
    u1 = r1 - n1 * (n1 + 1) / 2
    u2 = n1 * n2 - u1
    n = n1 + n2
    tie_term = (ties ** 3 - ties).sum()
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    z = (max(u1, u2) - n1 * n2 / 2 - 0.5) / sigma
    p = math.erfc(z / math.sqrt(2))
    return u1, u2, z, min(p, 1.0)


@program((np.array([6, 6, 6, 7, 10, 13, 16, 22, 23, 6, 9, 10, 11, 17, 19, 20, 25, 32, 32, 34, 35]),
          np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
          np.array([0] * 9 + [1] * 12)),
         (np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 1, 1]), np.array([0, 1, 0, 1])))
def log_rank_test(time, event, group):
    O1 = E1 = V = 0.0
    for t in np.unique(time[event == 1]):
        at_risk = time >= t
        n = at_risk.sum()
        n1 = (at_risk & (group == 0)).sum()
        d = ((time == t) & (event == 1)).sum()
        d1 = ((time == t) & (event == 1) & (group == 0)).sum()
        O1 += d1
        E1 += d * n1 / n
        if n > 1:
            V += d * (n1 / n) * (1 - n1 / n) * (n - d) / (n - 1)
    chi2 = (O1 - E1) ** 2 / V
    return O1, E1, V, chi2


@program(({"a": np.array([2.9, 3.0, 2.5, 2.6, 3.2]), "b": np.array([3.8, 2.7, 4.0, 2.4]), "c": np.array([2.8, 3.4, 3.7, 2.2, 2.0])},),
         ({"x": np.array([1, 1, 2]), "y": np.array([1, 2, 2, 3])},))
def kruskal_wallis(groups):
    names = sorted(groups)
    allv = np.concatenate([groups[k] for k in names])
    ranks, ties = _avg_ranks(allv)
    n = len(allv)
    h = 0.0
    pos = 0
    means = {}
    for k in names:
        m = len(groups[k])
        r = ranks[pos:pos + m]
        means[k] = r.mean()
        h += r.sum() ** 2 / m
        pos += m
    h = 12.0 / (n * (n + 1)) * h - 3 * (n + 1)
    h /= 1 - (ties ** 3 - ties).sum() / (n ** 3 - n)
    return h, means


@program((np.arange(20.0), 2.0 * np.arange(20.0) + _g.standard_normal(20)),
         (np.array([1.0, 2.0, 2.0, 4.0]), np.array([1.0, 3.0, 5.0, 4.0])))
def theil_sen(x, y):
    i, j = np.triu_indices(len(x), 1)
    dx = x[j] - x[i]
    ok = dx != 0
    slopes = (y[j] - y[i])[ok] / dx[ok]
    m = np.median(slopes)
    b = np.median(y - m * x)
    return m, b, len(slopes)


@program((3, 1, 1, 3), (8, 2, 1, 5), (0, 5, 5, 0))
def fisher_exact(a, b, c, d):
    r1, r2, c1 = a + b, c + d, a + c
    n = r1 + r2
    lo, hi = max(0, c1 - r2), min(r1, c1)
    ks = np.arange(lo, hi + 1)
    probs = np.array([math.comb(r1, k) * math.comb(r2, c1 - k) for k in range(lo, hi + 1)], dtype=float)
    probs /= math.comb(n, c1)
    p_obs = probs[a - lo]
    p = probs[probs <= p_obs * (1 + 1e-7)].sum()
    odds = (a * d) / (b * c) if b * c else math.inf
    return ks, probs, min(p, 1.0), odds


# ----------------------------------------------------------------------------- machine learning

def _best_stump(X, y, w):
    best = (np.inf, 0, 0.0, 1)
    for f in range(X.shape[1]):
        for thr in np.unique(X[:, f]):
            for pol in (1, -1):
                pred = np.where(pol * (X[:, f] - thr) >= 0, 1, -1)
                err = w[pred != y].sum()
                if err < best[0]:
                    best = (err, f, thr, pol)
    return best


@program((np.round(_g.standard_normal((16, 2)), 1), np.where(_g.standard_normal(16) > 0, 1, -1), 4),
         (np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([-1, -1, 1, 1]), 3))
def adaboost_stumps(X, y, rounds):
    n = len(y)
    w = np.full(n, 1.0 / n)
    model = []
    F = np.zeros(n)
    for _ in range(rounds):
        err, f, thr, pol = _best_stump(X, y, w)
        err = max(err, 1e-10)
        alpha = 0.5 * np.log((1 - err) / err)
        pred = np.where(pol * (X[:, f] - thr) >= 0, 1, -1)
        w *= np.exp(-alpha * y * pred)
        w /= w.sum()
        F += alpha * pred
        model.append((f, float(thr), pol, float(alpha)))
        if err <= 1e-10:
            break
    return model, np.sign(F), w


@program((_g.standard_normal((25, 5)), _g.standard_normal(25), 0.1), (np.eye(3), np.array([1.0, -0.05, 2.0]), 0.1))
def lasso_coordinate_descent(X, y, lam):
    n, p = X.shape
    beta = np.zeros(p)
    r = y.copy()
    col_sq = (X ** 2).sum(axis=0) / n
    for sweep in range(200):
        max_step = 0.0
        for j in range(p):
            old = beta[j]
            rho = X[:, j] @ r / n + col_sq[j] * old
            new = np.sign(rho) * max(abs(rho) - lam, 0.0) / col_sq[j]
            if new != old:
                r -= X[:, j] * (new - old)
                beta[j] = new
                max_step = max(max_step, abs(new - old))
        if max_step < 1e-10:
            break
    return beta, sweep, r


@program((np.r_[_g.normal(-2, 0.5, 40), _g.normal(3, 1.0, 60)],), (np.array([0.0, 0.1, 0.2, 5.0, 5.1, 5.3]),))
def gmm_em_1d(x):
    mu = np.array([x.min(), x.max()])
    var = np.full(2, x.var())
    pi = np.array([0.5, 0.5])
    prev = -np.inf
    history = []
    for it in range(200):
        logp = np.log(pi) - 0.5 * np.log(2 * np.pi * var) - (x[:, None] - mu) ** 2 / (2 * var)
        m = logp.max(axis=1, keepdims=True)
        ll = (m[:, 0] + np.log(np.exp(logp - m).sum(axis=1))).sum()
        resp = np.exp(logp - m)
        resp /= resp.sum(axis=1, keepdims=True)
        nk = resp.sum(axis=0)
        pi = nk / len(x)
        mu = (resp * x[:, None]).sum(axis=0) / nk
        var = (resp * (x[:, None] - mu) ** 2).sum(axis=0) / nk + 1e-6
        history.append(ll)
        if ll - prev < 1e-9:
            break
        prev = ll
    return mu, var, pi, np.array(history)


@program((np.c_[np.ones(30), np.linspace(0, 3, 30)], np.r_[1 + 2 * np.linspace(0, 3, 30)[:27], 30.0, -20.0, 40.0], 1.345),)
def huber_irls(X, y, c):
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    for it in range(50):
        r = y - X @ beta
        s = np.median(np.abs(r - np.median(r))) / 0.6745
        u = np.abs(r / s)
        w = np.where(u <= c, 1.0, c / u)
        Xw = X * w[:, None]
        new = np.linalg.solve(X.T @ Xw, Xw.T @ y)
        done = np.allclose(new, beta, atol=1e-10)
        beta = new
        if done:
            break
    return beta, w, it


# ----------------------------------------------------------------------------- graphs

def _two_cliques(k):
    A = np.zeros((2 * k, 2 * k), dtype=np.int64)
    A[:k, :k] = 1
    A[k:, k:] = 1
    np.fill_diagonal(A, 0)
    A[k - 1, k] = A[k, k - 1] = 1
    return A


@program((_two_cliques(5), np.random.default_rng(7)), (np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]]), np.random.default_rng(1)))
def label_propagation(A, rng):
    n = A.shape[0]
    labels = np.arange(n)
    for sweep in range(20):
        changed = 0
        for v in rng.permutation(n):
            nb = np.flatnonzero(A[v])
            if nb.size == 0:
                continue
            counts = np.bincount(labels[nb], minlength=n)
            best = np.flatnonzero(counts == counts.max())
            new = best.min() if labels[v] not in best else labels[v]
            if new != labels[v]:
                labels[v] = new
                changed += 1
        if changed == 0:
            break
    _, compact = np.unique(labels, return_inverse=True)
    return compact.ravel(), sweep


@program((_two_cliques(4).astype(f64),), (_two_cliques(3).astype(f64) * 2.0,))
def spectral_bisection(A):
    d = A.sum(axis=1)
    L = np.diag(d) - A
    vals, vecs = np.linalg.eigh(L)
    fiedler = vecs[:, 1]
    fiedler = fiedler * np.sign(fiedler[0] or 1.0)
    part = fiedler > 0
    cut = A[part][:, ~part].sum()
    return np.round(vals, 10), part, cut


# ----------------------------------------------------------------------------- numerics

def _rk4_path(f, y0, t0, t1, n):
    h = (t1 - t0) / n
    y = np.array(y0, dtype=float)
    t = t0
    for _ in range(n):
        k1 = f(t, y)
        k2 = f(t + h / 2, y + h / 2 * k1)
        k3 = f(t + h / 2, y + h / 2 * k2)
        k4 = f(t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += h
    return y


@program((1.0, 2.0, 40), (0.5, -1.0, 20))
def shooting_method_bvp(alpha, beta, n):
    # y'' = -sin(y) + t, y(0) = alpha, y(1) = beta: find y'(0) by the secant method
    def rhs(t, y):
        return np.array([y[1], -np.sin(y[0]) + t])

    def miss(s):
        return _rk4_path(rhs, [alpha, s], 0.0, 1.0, n)[0] - beta

    s0, s1 = 0.0, 1.0
    f0, f1 = miss(s0), miss(s1)
    for it in range(30):
        s2 = s1 - f1 * (s1 - s0) / (f1 - f0)
        s0, f0, s1, f1 = s1, f1, s2, miss(s2)
        if abs(f1) < 1e-12:
            break
    return s1, f1, it


@program((np.random.default_rng(11), 200, 8, 1.5, 0.0, 0.3, 0.01), (np.random.default_rng(12), 50, 3, 0.5, 1.0, 1.0, 0.02))
def euler_maruyama_ou(rng, steps, paths, theta, mu, sigma, dt):
    x = np.zeros((steps + 1, paths))
    x[0] = 1.0
    sq = np.sqrt(dt)
    for k in range(steps):
        dW = rng.standard_normal(paths) * sq
        x[k + 1] = x[k] + theta * (mu - x[k]) * dt + sigma * dW
    stat_var = sigma ** 2 / (2 * theta)
    return x[-1], x.mean(axis=1), stat_var


def _van_der_corput(n, base):
    seq = []
    for i in range(1, n + 1):
        f, r = 1.0, 0.0
        while i > 0:
            f /= base
            r += f * (i % base)
            i //= base
        seq.append(r)
    return np.array(seq)


@program((64,), (17,))
def halton_qmc_integral(n):
    pts = np.column_stack([_van_der_corput(n, 2), _van_der_corput(n, 3)])
    inside = (pts ** 2).sum(axis=1) <= 1.0
    pi_est = 4.0 * inside.mean()
    g = np.exp(-(pts ** 2).sum(axis=1))
    return pts, pi_est, g.mean()


@program((30.0, 45.0, 0.05, 0.01), (10.0, 80.0, 0.0, 0.005), (5.0, 10.0, 0.2, 0.02))
def projectile_with_drag_event(v0, angle_deg, k, dt):
    th = np.radians(angle_deg)
    pos = np.array([0.0, 0.0])
    vel = v0 * np.array([np.cos(th), np.sin(th)])
    g = np.array([0.0, -9.81])
    t = 0.0
    peak = 0.0
    while True:
        acc = g - k * np.linalg.norm(vel) * vel
        new_vel = vel + acc * dt
        new_pos = pos + 0.5 * (vel + new_vel) * dt
        t += dt
        peak = max(peak, new_pos[1])
        if new_pos[1] < 0:
            frac = pos[1] / (pos[1] - new_pos[1])
            land = pos + frac * (new_pos - pos)
            return t - dt + frac * dt, land[0], peak
        pos, vel = new_pos, new_vel


# ----------------------------------------------------------------------------- geometry and vision

def _rot(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


_P = _g.standard_normal((12, 3))


@program((_P, _P @ _rot(0.7).T + np.array([1.0, -2.0, 0.5])),
         (_P[:4], (_P[:4] @ _rot(2.0).T) * np.array([1, 1, -1]) + 0.01 * _g.standard_normal((4, 3))))
def kabsch_rmsd(P, Q):
    pc, qc = P.mean(axis=0), Q.mean(axis=0)
    H = (P - pc).T @ (Q - qc)
    U, S, Vt = np.linalg.svd(H)
    d = np.sign(np.linalg.det(Vt.T @ U.T))
    D = np.diag([1.0, 1.0, d])
    R = Vt.T @ D @ U.T
    aligned = (P - pc) @ R.T + qc
    rmsd = np.sqrt(((aligned - Q) ** 2).sum(axis=1).mean())
    return R, rmsd, d


_H = np.array([[1.2, 0.1, 3.0], [-0.2, 0.9, 1.0], [0.001, 0.002, 1.0]])
_src = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.3], [0.2, 0.8]], dtype=float) * 10


def _apply_h(H, pts):
    ph = np.c_[pts, np.ones(len(pts))] @ H.T
    return ph[:, :2] / ph[:, 2:]


@program((_src, _apply_h(_H, _src)), (_src[:4], _src[:4] * 2 + 1))
def homography_dlt(src, dst):
    def normalize(p):
        c = p.mean(axis=0)
        s = np.sqrt(2) / np.sqrt(((p - c) ** 2).sum(axis=1)).mean()
        T = np.array([[s, 0, -s * c[0]], [0, s, -s * c[1]], [0, 0, 1]])
        return T, _apply_h(T, p)

    Ts, a = normalize(src)
    Td, b = normalize(dst)
    rows = []
    for (x, y), (u, v) in zip(a, b):
        rows.append([-x, -y, -1, 0, 0, 0, u * x, u * y, u])
        rows.append([0, 0, 0, -x, -y, -1, v * x, v * y, v])
    _, _, Vt = np.linalg.svd(np.array(rows))
    Hn = Vt[-1].reshape(3, 3)
    H = np.linalg.inv(Td) @ Hn @ Ts
    H /= H[2, 2]
    err = np.abs(_apply_h(H, src) - dst).max()
    return H, err


def _blob(h, w):
    yy, xx = np.mgrid[:h, :w]
    return ((xx - w / 3) ** 2 / 9 + (yy - h / 2) ** 2 / 4 < 4).astype(np.uint8) * 200


@program((_blob(16, 20),), (_blob(9, 9).astype(f32),))
def hu_moments(img):
    img = img.astype(np.float64)
    h, w = img.shape
    y, x = np.mgrid[:h, :w]
    m00 = img.sum()
    cx, cy = (x * img).sum() / m00, (y * img).sum() / m00

    def mu(p, q):
        return ((x - cx) ** p * (y - cy) ** q * img).sum()

    def eta(p, q):
        return mu(p, q) / m00 ** (1 + (p + q) / 2)

    n20, n02, n11 = eta(2, 0), eta(0, 2), eta(1, 1)
    n30, n03, n21, n12 = eta(3, 0), eta(0, 3), eta(2, 1), eta(1, 2)
    hu1 = n20 + n02
    hu2 = (n20 - n02) ** 2 + 4 * n11 ** 2
    hu3 = (n30 - 3 * n12) ** 2 + (3 * n21 - n03) ** 2
    hu4 = (n30 + n12) ** 2 + (n21 + n03) ** 2
    return np.array([hu1, hu2, hu3, hu4]), (cx, cy)


_BAYER4 = np.array([[0, 8, 2, 10], [12, 4, 14, 6], [3, 11, 1, 9], [15, 7, 13, 5]])


@program((np.tile(np.linspace(0, 255, 10).astype(u8), (6, 1)), 2), (_g.integers(0, 256, (5, 7)).astype(u8), 4))
def ordered_dither_bayer(img, levels):
    h, w = img.shape
    t = (_BAYER4 + 0.5) / 16.0
    thresh = np.tile(t, (h // 4 + 1, w // 4 + 1))[:h, :w]
    x = img / 255.0 * (levels - 1)
    q = np.floor(x) + (x - np.floor(x) > thresh)
    return (q * (255 // (levels - 1))).astype(np.uint8)


def _rdp(pts, eps):
    if len(pts) < 3:
        return pts
    a, b = pts[0], pts[-1]
    ab = b - a
    norm = np.hypot(ab[0], ab[1])
    rel = pts[1:-1] - a
    if norm == 0:
        d = np.hypot(rel[:, 0], rel[:, 1])
    else:
        d = np.abs(ab[0] * rel[:, 1] - ab[1] * rel[:, 0]) / norm
    i = int(np.argmax(d)) + 1
    if d[i - 1] > eps:
        left = _rdp(pts[:i + 1], eps)
        right = _rdp(pts[i:], eps)
        return np.vstack([left[:-1], right])
    return np.vstack([a, b])


@program((np.c_[np.linspace(0, 10, 30), np.sin(np.linspace(0, 10, 30))], 0.1),
         (np.array([[0.0, 0.0], [1.0, 0.1], [2.0, -0.1], [3.0, 5.0], [4.0, 6.0], [5.0, 7.0], [6.0, 8.1], [7.0, 9.0]]), 1.0),
         (np.array([[0.0, 0.0], [1.0, 1.0]]), 0.5))
def ramer_douglas_peucker(pts, eps):
    simp = _rdp(pts, eps)
    return simp, len(simp)


@program((_g.random((6, 2, 2)), _g.random((5, 2, 2))),
         (np.array([[[0.0, 0.0], [2.0, 2.0]], [[0.0, 0.0], [1.0, 0.0]]]), np.array([[[0.0, 2.0], [2.0, 0.0]], [[2.0, 0.0], [3.0, 0.0]]])))
def segment_intersections(A, B):
    def orient(p, q, r):
        return np.sign((q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1]) - (q[..., 1] - p[..., 1]) * (r[..., 0] - p[..., 0]))

    p1, p2 = A[:, None, 0], A[:, None, 1]
    q1, q2 = B[None, :, 0], B[None, :, 1]
    o1, o2 = orient(p1, p2, q1), orient(p1, p2, q2)
    o3, o4 = orient(q1, q2, p1), orient(q1, q2, p2)
    hit = (o1 != o2) & (o3 != o4) & (o1 != 0) & (o2 != 0) & (o3 != 0) & (o4 != 0)
    i, j = np.nonzero(hit)
    d1, d2 = p2 - p1, q2 - q1
    den = d1[..., 0] * d2[..., 1] - d1[..., 1] * d2[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = ((q1 - p1)[..., 0] * d2[..., 1] - (q1 - p1)[..., 1] * d2[..., 0]) / den
    pts = (p1 + t[..., None] * d1)[i, j]
    return np.stack([i, j], axis=1), pts


# ----------------------------------------------------------------------------- bytes

@program((np.frombuffer(b"Key", dtype=u8), np.frombuffer(b"Plaintext", dtype=u8)),
         (np.frombuffer(b"Secret", dtype=u8), np.frombuffer(b"Attack at dawn", dtype=u8)))
def rc4_encrypt(key, data):
    S = np.arange(256, dtype=np.uint8)
    j = 0
    for i in range(256):
        j = (j + int(S[i]) + int(key[i % len(key)])) % 256
        S[i], S[j] = S[j], S[i]
    out = np.empty_like(data)
    i = j = 0
    for n in range(len(data)):
        i = (i + 1) % 256
        j = (j + int(S[i])) % 256
        S[i], S[j] = S[j], S[i]
        out[n] = data[n] ^ S[(int(S[i]) + int(S[j])) % 256]
    return out, out.tobytes().hex()


_B64 = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", dtype=u8)


@program((b"Many hands make light work.",), (b"ab",), (b"",))
def base64_by_hand(data):
    a = np.frombuffer(data, dtype=np.uint8)
    pad = (-len(a)) % 3
    a = np.concatenate([a, np.zeros(pad, dtype=np.uint8)]).reshape(-1, 3).astype(np.uint32)
    word = (a[:, 0] << 16) | (a[:, 1] << 8) | a[:, 2]
    idx = np.stack([(word >> s) & 63 for s in (18, 12, 6, 0)], axis=1).ravel()
    chars = _B64[idx]
    if pad:
        chars[-pad:] = ord("=")
    return chars.tobytes().decode("ascii")


# ----------------------------------------------------------------------------- trading

_px = 100 + np.cumsum(_g.standard_normal(40))


@program((_px + 0.8, _px - 0.8, 0.02, 0.2), (np.array([10.0, 11, 12, 11, 9, 8, 9]), np.array([9.0, 10, 11, 10, 8, 7, 8]), 0.02, 0.2))
def parabolic_sar(high, low, step, max_af):
    n = len(high)
    sar = np.empty(n)
    up = True
    af = step
    ep = high[0]
    sar[0] = low[0]
    flips = []
    for i in range(1, n):
        prev = sar[i - 1]
        s = prev + af * (ep - prev)
        if up:
            s = min(s, low[i - 1], low[max(i - 2, 0)])
            if low[i] < s:
                up, s, ep, af = False, ep, low[i], step
                flips.append(i)
            elif high[i] > ep:
                ep, af = high[i], min(af + step, max_af)
        else:
            s = max(s, high[i - 1], high[max(i - 2, 0)])
            if high[i] > s:
                up, s, ep, af = True, ep, high[i], step
                flips.append(i)
            elif low[i] < ep:
                ep, af = low[i], min(af + step, max_af)
        sar[i] = s
    return sar, flips


@program((_px - 0.3, _px + 1.0, _px - 1.0, _px + 0.2, 5), (np.array([1.0, 2, 3]), np.array([2.0, 3, 4]), np.array([0.5, 1, 2]), np.array([1.5, 2.5, 3.5]), 2))
def heikin_ashi_atr(o, h, l, c, period):
    ha_c = (o + h + l + c) / 4
    ha_o = np.empty_like(o)
    ha_o[0] = (o[0] + c[0]) / 2
    for i in range(1, len(o)):
        ha_o[i] = (ha_o[i - 1] + ha_c[i - 1]) / 2
    ha_h = np.maximum.reduce([h, ha_o, ha_c])
    ha_l = np.minimum.reduce([l, ha_o, ha_c])
    prev_c = np.r_[c[0], c[:-1]]
    tr = np.max(np.stack([h - l, np.abs(h - prev_c), np.abs(l - prev_c)]), axis=0)
    atr = np.full(len(tr), np.nan)
    if len(tr) >= period:
        atr[period - 1] = tr[:period].mean()
        for i in range(period, len(tr)):
            atr[i] = (atr[i - 1] * (period - 1) + tr[i]) / period
    return ha_o, ha_h, ha_l, ha_c, atr


@program((np.array([10, 5, -8, 4, -6, -3]), np.array([100.0, 110.0, 120.0, 105.0, 130.0, 90.0])),
         (np.array([3, -5]), np.array([1.0, 2.0])))
def fifo_cost_basis(qty, price):
    lots = deque()
    realized = []
    for q, p in zip(qty.tolist(), price.tolist()):
        if q > 0:
            lots.append([q, p])
            continue
        sell, pnl = -q, 0.0
        while sell > 0:
            if not lots:
                raise ValueError(f"short sale of {sell} shares at {p:.2f}")
            lot = lots[0]
            take = min(sell, lot[0])
            pnl += take * (p - lot[1])
            lot[0] -= take
            sell -= take
            if lot[0] == 0:
                lots.popleft()
        realized.append(pnl)
    left = np.array([l[0] for l in lots], dtype=np.int64)
    basis = np.array([l[1] for l in lots])
    return np.array(realized), left, float(left @ basis) if len(left) else 0.0


# ----------------------------------------------------------------------------- data

_days = np.datetime64("2024-01-01") + _g.integers(0, 60, 50).astype("timedelta64[D]")


@program((_days, _g.random(50) * 100), (np.array(["2023-12-31", "2024-01-01", "2024-01-07"], dtype="datetime64[D]"), np.array([1.0, 2.0, 4.0])))
def weekly_groupby_datetime64(days, amount):
    # ISO weeks start on Monday; datetime64[W] counts weeks from a Thursday
    monday = days - ((days.astype("datetime64[D]").view("int64") - 4) % 7).astype("timedelta64[D]")
    weeks, inv = np.unique(monday, return_inverse=True)
    inv = inv.ravel()
    total = np.bincount(inv, weights=amount)
    count = np.bincount(inv)
    span = (days.max() - days.min()).astype(int)
    return weeks, total, count, total / count, span


_text = ("the cat sat on the mat the dog sat on the log and the cat saw the dog "
         "a cat and a dog sat")


@program((_text, "the cat sat on the log", 1.0), (_text, "a dog saw a mat", 0.5), ("x y", "", 1.0))
def bigram_laplace_perplexity(corpus, sentence, alpha):
    words = corpus.split()
    vocab = sorted(set(words))
    index = {w: i for i, w in enumerate(vocab)}
    V = len(vocab)
    counts = np.zeros((V, V))
    for a, b in zip(words, words[1:]):
        counts[index[a], index[b]] += 1
    probs = (counts + alpha) / (counts.sum(axis=1, keepdims=True) + alpha * V)
    s = [w for w in sentence.split() if w in index]
    if len(s) < 2:
        return probs, None, Counter(words).most_common(2)
    logp = sum(np.log(probs[index[a], index[b]]) for a, b in zip(s, s[1:]))
    ppl = float(np.exp(-logp / (len(s) - 1)))
    return probs, round(ppl, 9), Counter(words).most_common(2)


@program((np.random.default_rng(5), 30, 2, 1.0, 1.6), (np.random.default_rng(6), 8, 1, 2.0, 1.0))
def bank_queue_heapq(rng, n_customers, tellers, mean_arrival, mean_service):
    arrivals = np.cumsum(rng.exponential(mean_arrival, n_customers))
    service = rng.exponential(mean_service, n_customers)
    free = [0.0] * tellers
    heapq.heapify(free)
    waits = np.empty(n_customers)
    busy = defaultdict(float)
    for k in range(n_customers):
        t_free = heapq.heappop(free)
        start = max(arrivals[k], t_free)
        waits[k] = start - arrivals[k]
        busy[k % tellers] += service[k]
        heapq.heappush(free, start + service[k])
    return waits, waits.mean(), np.percentile(waits, 90), dict(busy)


def _sort_count(a):
    if len(a) <= 1:
        return a, 0
    mid = len(a) // 2
    left, cl = _sort_count(a[:mid])
    right, cr = _sort_count(a[mid:])
    out = np.empty(len(a), dtype=a.dtype)
    i = j = k = 0
    inv = cl + cr
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            out[k] = left[i]
            i += 1
        else:
            out[k] = right[j]
            inv += len(left) - i
            j += 1
        k += 1
    out[k:] = np.concatenate([left[i:], right[j:]])
    return out, inv


@program((_g.integers(0, 50, 24),), (np.array([5.0, 4.0, 3.0, 2.0, 1.0]),), (np.array([], dtype=np.int64),))
def merge_sort_inversions(a):
    s, inv = _sort_count(a)
    return s, inv


@program((np.arange(1, 16, dtype=np.int32),), (np.array([3, 7, 11, 13], dtype=np.int32),))
def int32_running_products_overflow(n):
    prod = np.multiply.accumulate(n)     # int32 wraps silently (np.cumprod would widen)
    exact = list(itertools.accumulate((int(k) for k in n), operator.mul))
    wrapped = [((e + 2 ** 31) % 2 ** 32) - 2 ** 31 for e in exact]
    first_bad = next((int(k) for k, e in zip(n, exact) if e > np.iinfo(np.int32).max), None)
    return prod, prod.astype(np.int64) == np.array(wrapped, dtype=np.int64), first_bad


# ----------------------------------------------------------------------------- objects, exceptions, generators

class EwmaVolatility:
    """RiskMetrics-style EWMA variance, updated one return at a time."""

    def __init__(self, lam, seed_var):
        self.lam = lam
        self.var = seed_var
        self.n = 0

    def update(self, r):
        self.var = self.lam * self.var + (1 - self.lam) * r * r
        self.n += 1
        return self

    @property
    def vol(self):
        return math.sqrt(self.var)


@program((_g.standard_normal(60) * 0.01, 0.94, 252), (np.array([0.01, -0.02, 0.0]), 0.97, 12), (np.zeros(0), 0.94, 252))
def ewma_vol_object(returns, lam, periods):
    est = EwmaVolatility(lam, returns[:5].var() if len(returns) >= 5 else 1e-4)
    path = np.empty(len(returns))
    for k, r in enumerate(returns):
        path[k] = est.update(r).vol
    annual = path * np.sqrt(periods)
    return annual, est.n, f"{est.vol * 100:.4f}%"


def _F(v, a):
    x, y = v
    return np.array([x * x + y * y - a, x - y * y * y])


def _J(v):
    x, y = v
    return np.array([[2 * x, 2 * y], [1.0, -3 * y * y]])


@program((np.array([1.0, 1.0]), 4.0), (np.array([0.0, 0.0]), 2.0), (np.array([2.0, -1.0]), 1.0))
def newton_system_singular_fallback(v0, a):
    v = v0.astype(float)
    fallbacks = 0
    for it in range(50):
        F = _F(v, a)
        try:
            step = np.linalg.solve(_J(v), -F)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(_J(v), -F, rcond=None)[0]
            if not np.any(step):
                step = np.array([0.5, 0.5])
            fallbacks += 1
        v = v + step
        if np.linalg.norm(step) < 1e-13:
            break
    return v, it, fallbacks, np.linalg.norm(_F(v, a))


_ORDER = np.dtype([("id", "i4"), ("side", "U4"), ("price", "f8"), ("qty", "i8")])


@program((np.array([(1, "buy", 10.1, 5), (2, "sell", 10.3, 2), (3, "buy", 10.2, 7), (4, "sell", 10.25, 1), (5, "buy", 10.2, 3)], dtype=_ORDER),),
         (np.array([(9, "sell", 1.0, 1)], dtype=_ORDER),))
def order_book_structured(orders):
    bids = np.sort(orders[orders["side"] == "buy"], order=["price", "id"])[::-1]
    asks = np.sort(orders[orders["side"] == "sell"], order=["price", "id"])
    levels, inv = np.unique(bids["price"], return_inverse=True)
    depth = np.bincount(inv.ravel(), weights=bids["qty"]) if len(bids) else np.zeros(0)
    best_bid = bids["price"][0] if len(bids) else np.nan
    best_ask = asks["price"][0] if len(asks) else np.nan
    spread = best_ask - best_bid
    book = [f"{o['side']:>4} {o['qty']:3d} @ {o['price']:.2f}" for o in np.concatenate([asks[::-1], bids])]
    return bids["id"], asks["id"], levels, depth, spread, book


@program((np.where(_g.random((3, 12)) < 0.15, np.nan, 15 + 10 * np.sin(np.arange(12) / 12 * 2 * np.pi) + _g.standard_normal((3, 12))), -50.0),
         (np.array([[1.0, np.nan, -99.0], [2.0, 3.0, 4.0]]), -99.0))
def masked_monthly_anomaly(temps, missing):
    m = np.ma.masked_invalid(temps)
    m = np.ma.masked_less_equal(m, missing)
    clim = m.mean(axis=0)
    anom = m - clim
    valid = m.count(axis=0)
    return anom.filled(np.nan), clim.filled(np.nan), valid, float(np.ma.std(anom))


def _batches(X, y, size, rng):
    order = rng.permutation(len(y))
    for start in range(0, len(y), size):
        idx = order[start:start + size]
        yield X[idx], y[idx]


@program((_g.standard_normal((40, 3)), _g.standard_normal(40), np.random.default_rng(8), 8, 3, 0.05),
         (_g.standard_normal((10, 2)), _g.standard_normal(10), np.random.default_rng(9), 4, 2, 0.1))
def minibatch_sgd_generator(X, y, rng, batch, epochs, lr):
    w = np.zeros(X.shape[1])
    losses = []
    for epoch in range(epochs):
        for xb, yb in _batches(X, y, batch, rng):
            err = xb @ w - yb
            w -= lr * 2 * xb.T @ err / len(yb)
        losses.append(float(np.mean((X @ w - y) ** 2)))
    return w, losses


@program((np.frombuffer(b"abracadabra cadabra abra", dtype=u8), np.frombuffer(b"abra", dtype=u8)),
         (np.frombuffer(b"aaaaa", dtype=u8), np.frombuffer(b"aa", dtype=u8)),
         (np.frombuffer(b"xy", dtype=u8), np.frombuffer(b"xyz", dtype=u8)))
def rabin_karp_uint64(text, pat):
    base = np.uint64(257)
    m, n = len(pat), len(text)
    if m > n:
        return []
    top = np.uint64(1)
    for _ in range(m - 1):
        top = top * base                   # wraps modulo 2**64, as C would
    hp = ht = np.uint64(0)
    for k in range(m):
        hp = hp * base + np.uint64(pat[k])
        ht = ht * base + np.uint64(text[k])
    hits = []
    for s in range(n - m + 1):
        if hp == ht and np.array_equal(text[s:s + m], pat):
            hits.append(s)
        if s + m < n:
            ht = (ht - np.uint64(text[s]) * top) * base + np.uint64(text[s + m])
    return hits


@program((np.r_[_g.standard_normal(20), np.nan, np.nan, _g.standard_normal(6)], np.r_[np.zeros(10, int), np.ones(12, int), np.full(6, 2)], (10, 50, 90)),
         (np.array([np.nan, np.nan, 1.0, 2.0]), np.array([0, 0, 1, 1]), (25, 75)))
def nan_group_percentiles(x, g, qs):
    out = {}
    for key in np.unique(g):
        vals = x[g == key]
        if np.isnan(vals).all():
            out[int(key)] = np.full(len(qs), np.nan)
            continue
        out[int(key)] = np.nanpercentile(vals, qs)
    nan_share = np.bincount(g, weights=np.isnan(x)) / np.bincount(g)
    return out, nan_share


# (every program ran on cpp, cpp-dynamic, eager and aot_eager, with the cost model on and
# off, when written; the fused ones and those of the fixes keep C++ in the suite's budget)
_CPP = ("schroeder_reverb", "loess_local_linear", "mann_whitney_u", "kruskal_wallis", "kabsch_rmsd",
        "hu_moments", "segment_intersections", "rc4_encrypt", "heikin_ashi_atr", "bank_queue_heapq")
test_program = program_test({k: PROGRAMS[k] for k in _CPP}, ["cpp"])
test_program_eager = program_test(PROGRAMS, ["eager", "aot_eager"], share=4)
