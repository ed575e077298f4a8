"""A fourth set of real NumPy programs through kiln.compile, checked like
tests/test_programs.py (values, dtypes, shapes, exceptions, arguments after the call,
aliasing, layouts) on every backend: textbook numerical methods written the way
scientists write them (conjugate gradient, SOR sweeps, LU and Householder QR by hand,
Simpson and Romberg, natural cubic splines, finite-element assembly, Crank-Nicolson,
Newton with a line search, Bogacki-Shampine steps, particle-in-cell), data code (group-by
aggregates, pivots, as-of merges, datetime64 resampling, structured records, np.char,
masked arrays, ECDFs), small ML (perceptron, Pegasos SVM, Gini splits, k-fold ridge,
Fisher LDA, kernel ridge, label smoothing, dropout, multinomial naive Bayes, clipping by
global norm), image and signal code (FFT low-pass, resampling, Welch PSD, Harris corners,
histogram matching, Goertzel, Bresenham, flood fill, union-find labels) and the Python
around them (in-place writes through views, keyword-only defaults, global config,
recursion, jitter retries around LinAlgError, complex impedances, checksums).
Every program has its own generator; sizes are small and few (each graph is a g++ build).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tests.test_programs import BACKENDS, program_registry, program_test

f32, f64, i32, i64, u8 = np.float32, np.float64, np.int32, np.int64, np.uint8

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)


def _spd(n, seed, dtype=f64):
    g = np.random.default_rng(seed)
    M = g.standard_normal((n, n))
    return (M @ M.T + n * np.eye(n)).astype(dtype)


# ----------------------------------------------------------------------------- numerical methods

_g = np.random.default_rng(401)


@program((_spd(8, 1), _g.standard_normal(8), 1e-10, 50), (_spd(5, 2, f32), _g.standard_normal(5).astype(f32), 1e-5, 3),
         (np.eye(3), np.zeros(3), 1e-12, 10))
def conjugate_gradient(A, b, tol, maxiter):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rs = r @ r
    history = [np.sqrt(rs)]
    for k in range(maxiter):
        if np.sqrt(rs) < tol:
            break
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x += alpha * p
        r -= alpha * Ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        rs = rs_new
        history.append(np.sqrt(rs))
    return x, k, np.array(history)


_g = np.random.default_rng(402)


@program((_spd(6, 3), _g.standard_normal(6), 1.2, 8), (_spd(4, 4, f32), np.ones(4, f32), 1.0, 5))
def sor_sweeps_row_by_row(A, b, omega, sweeps):
    n = len(b)
    x = np.zeros(n, dtype=A.dtype)
    res = []
    for _ in range(sweeps):
        for i in range(n):
            sigma = A[i, :i] @ x[:i] + A[i, i + 1:] @ x[i + 1:]
            x[i] = (1 - omega) * x[i] + omega * (b[i] - sigma) / A[i, i]
        res.append(np.linalg.norm(b - A @ x))
    return x, res


_g = np.random.default_rng(403)


@program((_g.standard_normal((5, 5)),), (_g.standard_normal((4, 4)).astype(f32),),
         (np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]]),), (np.array([[0.0, 1], [1, 0]]),),
         (np.array([[0.0, 1], [0, 1]]),))
def lu_partial_pivoting_by_hand(A):
    A = A.astype(np.float64)
    n = A.shape[0]
    perm = np.arange(n)
    U = A.copy()
    L = np.eye(n)
    for k in range(n - 1):
        p = k + np.argmax(np.abs(U[k:, k]))
        if np.isclose(U[p, k], 0.0):
            raise np.linalg.LinAlgError(f"singular at column {k}")
        if p != k:
            U[[k, p], :] = U[[p, k], :]
            L[[k, p], :k] = L[[p, k], :k]
            perm[[k, p]] = perm[[p, k]]
        L[k + 1:, k] = U[k + 1:, k] / U[k, k]
        U[k + 1:, k:] -= np.outer(L[k + 1:, k], U[k, k:])
    return perm, L, np.triu(U), np.allclose(L @ np.triu(U), A[perm])


@program((0.0, 2.0, 16), (0.0, np.pi, 8), (1.0, 3.0, 4))
def simpson_and_romberg(a, b, n):
    def f(x):
        return np.exp(-x * x) * np.cos(3 * x)
    x = np.linspace(a, b, n + 1)
    y = f(x)
    h = (b - a) / n
    simpson = h / 3 * (y[0] + y[-1] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum())
    R = np.zeros((5, 5))
    R[0, 0] = 0.5 * (b - a) * (f(a) + f(b))
    for i in range(1, 5):
        hi = (b - a) / 2 ** i
        mids = a + hi * np.arange(1, 2 ** i, 2)
        R[i, 0] = 0.5 * R[i - 1, 0] + hi * f(mids).sum()
        for j in range(1, i + 1):
            R[i, j] = R[i, j - 1] + (R[i, j - 1] - R[i - 1, j - 1]) / (4 ** j - 1)
    return simpson, R[4, 4], np.abs(np.diag(R)[1:] - np.diag(R)[:-1])


_g = np.random.default_rng(405)


@program((np.sort(_g.random(7)) * 10, _g.standard_normal(7), np.linspace(0, 10, 15)),
         (np.arange(5.0, dtype=f32), np.array([0, 1, 0, 1, 0], f32), np.array([0.5, 3.9, 4.0], f32)))
def natural_cubic_spline(x, y, xq):
    n = len(x) - 1
    h = np.diff(x)
    A = np.zeros((n + 1, n + 1))
    rhs = np.zeros(n + 1)
    A[0, 0] = A[n, n] = 1.0
    i = np.arange(1, n)
    A[i, i - 1] = h[:-1]
    A[i, i] = 2 * (h[:-1] + h[1:])
    A[i, i + 1] = h[1:]
    rhs[1:-1] = 3 * ((y[2:] - y[1:-1]) / h[1:] - (y[1:-1] - y[:-2]) / h[:-1])
    c = np.linalg.solve(A, rhs)
    b = (y[1:] - y[:-1]) / h - h * (2 * c[:-1] + c[1:]) / 3
    d = (c[1:] - c[:-1]) / (3 * h)
    k = np.clip(np.searchsorted(x, xq, side="right") - 1, 0, n - 1)
    t = xq - x[k]
    return y[k] + t * (b[k] + t * (c[k] + t * d[k])), c


_g = np.random.default_rng(406)


@program((np.linspace(0, 1, 9), 1.0), (np.sort(np.r_[0.0, _g.random(5), 1.0]), 2.5), (np.linspace(0, 2, 4).astype(f32), 0.5))
def fem_1d_poisson_assembly(nodes, load):
    n = len(nodes)
    elems = np.column_stack([np.arange(n - 1), np.arange(1, n)])
    h = np.diff(nodes)
    ke = np.array([[1.0, -1.0], [-1.0, 1.0]])[None] / h[:, None, None]
    K = np.zeros((n, n))
    rows = np.repeat(elems, 2, axis=1)
    cols = np.tile(elems, (1, 2))
    np.add.at(K, (rows.ravel(), cols.ravel()), ke.reshape(len(h), 4).ravel())
    F = np.bincount(elems.ravel(), weights=np.repeat(load * h / 2, 2), minlength=n)
    inner = slice(1, n - 1)
    u = np.zeros(n)
    u[inner] = np.linalg.solve(K[inner, inner], F[inner])
    exact = load / 2 * (nodes - nodes[0]) * (nodes[-1] - nodes)
    return u, np.abs(u - exact).max(), K.sum(axis=1)


_g = np.random.default_rng(407)


@program((np.sin(np.pi * np.linspace(0, 1, 12)), 0.4, 6), (np.exp(-((np.linspace(-1, 1, 8)) ** 2) * 10).astype(f32), 1.0, 3))
def crank_nicolson_heat(u0, r, steps):
    n = len(u0) - 2
    off = np.ones(n - 1)
    A = np.diag((1 + r) * np.ones(n)) - np.diag(r / 2 * off, 1) - np.diag(r / 2 * off, -1)
    B = np.diag((1 - r) * np.ones(n)) + np.diag(r / 2 * off, 1) + np.diag(r / 2 * off, -1)
    u = u0.astype(np.float64).copy()
    energy = [np.sum(u ** 2)]
    for _ in range(steps):
        u[1:-1] = np.linalg.solve(A, B @ u[1:-1])
        energy.append(np.sum(u ** 2))
    return u.astype(u0.dtype), np.array(energy), bool(np.all(np.diff(energy) <= 1e-12))


@program((np.array([-1.2, 1.0]), 30), (np.array([2.0, 2.0], f32), 20), (np.array([1.0, 1.0]), 5))
def newton_backtracking_rosenbrock(x0, max_iter):
    def f(x):
        return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2

    def grad(x):
        return np.array([-2 * (1 - x[0]) - 400 * x[0] * (x[1] - x[0] ** 2), 200 * (x[1] - x[0] ** 2)])

    def hess(x):
        return np.array([[2 - 400 * x[1] + 1200 * x[0] ** 2, -400 * x[0]], [-400 * x[0], 200.0]])
    x = x0.astype(np.float64)
    steps = []
    for it in range(max_iter):
        g = grad(x)
        if np.linalg.norm(g) < 1e-10:
            return x, it, steps
        p = -np.linalg.solve(hess(x), g)
        t = 1.0
        while f(x + t * p) > f(x) + 1e-4 * t * (g @ p):
            t *= 0.5
        steps.append(t)
        x = x + t * p
    return x, max_iter, steps


@program((np.array([10.0, 5.0]), 0.0, 4.0, 1e-6), (np.array([2.0, 1.0], f32), 0.0, 1.0, 1e-3))
def bogacki_shampine_lotka_volterra(y0, t0, t1, tol):
    a, b, c, d = 1.1, 0.4, 0.4, 0.1

    def rhs(y):
        return np.array([a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1]])
    t, y, h = t0, y0.astype(np.float64), 0.1
    ts, ys, rejected = [t], [y], 0
    k1 = rhs(y)
    while t < t1:
        h = min(h, t1 - t)
        k2 = rhs(y + 0.5 * h * k1)
        k3 = rhs(y + 0.75 * h * k2)
        y_new = y + h * (2 * k1 + 3 * k2 + 4 * k3) / 9
        k4 = rhs(y_new)
        err = h * np.abs(-5 * k1 / 72 + k2 / 12 + k3 / 9 - k4 / 8)
        scale = tol * (1 + np.abs(y))
        ratio = np.max(err / scale)
        if ratio <= 1:
            t, y, k1 = t + h, y_new, k4
            ts.append(t)
            ys.append(y)
        else:
            rejected += 1
        h *= min(5.0, max(0.2, 0.9 * ratio ** (-1 / 3))) if ratio > 0 else 5.0
    return np.array(ts), np.stack(ys), rejected


_g = np.random.default_rng(410)


@program((_g.standard_normal((6, 4)),), (_g.standard_normal((3, 3)).astype(f32),), (np.zeros((3, 2)),))
def householder_qr(A):
    m, n = A.shape
    R = A.astype(np.float64).copy()
    Q = np.eye(m)
    for k in range(min(m - 1, n)):
        x = R[k:, k]
        alpha = np.linalg.norm(x)
        if alpha == 0:
            continue
        v = x.copy()
        v[0] += np.copysign(alpha, x[0])
        v /= np.linalg.norm(v)
        R[k:, :] -= 2.0 * np.outer(v, v @ R[k:, :])
        Q[:, k:] -= 2.0 * np.outer(Q[:, k:] @ v, v)
    return Q, np.triu(R), np.abs(Q @ R - A).max()


_g = np.random.default_rng(411)


@program((_spd(5, 11), _g.standard_normal(5), 20), (_spd(3, 12, f32), np.ones(3, f32), 5), (np.diag([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.0]), 5))
def rayleigh_quotient_iteration(A, x0, iters):
    x = x0 / np.linalg.norm(x0)
    mu = x @ A @ x
    I = np.eye(A.shape[0], dtype=A.dtype)
    for it in range(iters):
        try:
            y = np.linalg.solve(A - mu * I, x)
        except np.linalg.LinAlgError:
            return mu, x, it, "exact"
        x = y / np.linalg.norm(y)
        mu_new = x @ A @ x
        if abs(mu_new - mu) < 1e-12 * abs(mu_new):
            return mu_new, x * np.sign(x[np.argmax(np.abs(x))]), it, "converged"
        mu = mu_new
    return mu, x * np.sign(x[np.argmax(np.abs(x))]), iters, "max_iter"


_g = np.random.default_rng(412)


@program((_g.uniform(-3, 3, 12), np.full(12, -5.0), np.full(12, 5.0), 30),
         (np.array([0.0, 1.0, 8.0], f32), np.array([-2.0, -2.0, -2.0], f32), np.array([3.0, 3.0, 3.0], f32), 15))
def vectorized_bisection_cubics(c, lo, hi, iters):
    # roots of x**3 + x - c, one per entry, all bracketed at once
    def f(x):
        return x ** 3 + x - c
    lo, hi = lo.copy(), hi.copy()
    if np.any(np.sign(f(lo)) == np.sign(f(hi))):
        raise ValueError("a bracket does not change sign")
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        left = np.sign(f(mid)) == np.sign(f(lo))
        lo = np.where(left, mid, lo)
        hi = np.where(left, hi, mid)
    return 0.5 * (lo + hi), np.abs(f(0.5 * (lo + hi))).max()


@program((0.0, 4.0, 1e-8), (-1.0, 1.0, 1e-4), (2.0, 2.0, 1e-3))
def golden_section_search(a, b, tol):
    invphi = (np.sqrt(5.0) - 1) / 2

    def f(x):
        return np.sin(x) + 0.1 * (x - 2) ** 2
    c, d = b - invphi * (b - a), a + invphi * (b - a)
    n = 0
    while abs(b - a) > tol:
        if f(c) < f(d):
            b = d
        else:
            a = c
        c, d = b - invphi * (b - a), a + invphi * (b - a)
        n += 1
    return (a + b) / 2, n


_g = np.random.default_rng(414)


@program((_g.random(64), 16, 0.05, 5), (_g.random(20).astype(f32), 8, 0.1, 2))
def particle_in_cell_1d(xp, ng, dt, steps):
    L = 1.0
    dx = L / ng
    vp = np.zeros_like(xp)
    k = 2 * np.pi * np.fft.rfftfreq(ng, d=dx)
    energies = []
    for _ in range(steps):
        cell = np.floor(xp / dx).astype(np.int64)
        frac = xp / dx - cell
        rho = np.bincount(cell % ng, weights=1 - frac, minlength=ng) + \
            np.bincount((cell + 1) % ng, weights=frac, minlength=ng)
        rho = rho / (len(xp) * dx) - 1.0
        rho_k = np.fft.rfft(rho)
        phi_k = np.zeros_like(rho_k)
        phi_k[1:] = rho_k[1:] / k[1:] ** 2
        E = -np.gradient(np.fft.irfft(phi_k, n=ng), dx)
        Ep = (1 - frac) * E[cell % ng] + frac * E[(cell + 1) % ng]
        vp = vp - dt * Ep
        xp = (xp + dt * vp) % L
        energies.append(0.5 * np.sum(E ** 2) * dx)
    return xp, vp, np.array(energies)


# ----------------------------------------------------------------------------- data code

_g = np.random.default_rng(421)


@program((np.array(["b", "a", "c", "a", "b", "a", "c", "c"]), _g.standard_normal(8)),
         (np.array([3, 1, 3, 3, 7], dtype=i32), np.array([1.0, 2.0, 3.0, 4.0, 5.0], f32)),
         (np.array([], dtype=i64), np.array([], dtype=f64)))
def groupby_aggregates_unique_inverse(keys, vals):
    groups, inv, counts = np.unique(keys, return_inverse=True, return_counts=True)
    inv = inv.ravel()
    sums = np.bincount(inv, weights=vals, minlength=len(groups))
    means = sums / np.maximum(counts, 1)
    sq = np.bincount(inv, weights=vals * vals, minlength=len(groups))
    var = sq / np.maximum(counts, 1) - means ** 2
    mins = np.full(len(groups), np.inf)
    maxs = np.full(len(groups), -np.inf)
    np.minimum.at(mins, inv, vals)
    np.maximum.at(maxs, inv, vals)
    first = np.zeros(len(groups), dtype=np.intp)
    first[inv[::-1]] = np.arange(len(keys))[::-1]
    return groups, counts, sums, means, np.sqrt(np.maximum(var, 0)), mins, maxs, first


_g = np.random.default_rng(422)


@program((_g.integers(0, 3, 20), _g.integers(0, 4, 20), _g.random(20) * 100),
         (np.array([1, 1, 2], dtype=i32), np.array([5, 6, 5], dtype=i32), np.array([1.0, 2.0, 3.0], f32)))
def pivot_table_mean_with_missing(rk, ck, vals):
    rows, ri = np.unique(rk, return_inverse=True)
    cols, ci = np.unique(ck, return_inverse=True)
    total = np.zeros((len(rows), len(cols)))
    count = np.zeros((len(rows), len(cols)), dtype=np.int64)
    np.add.at(total, (ri, ci), vals)
    np.add.at(count, (ri, ci), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / count
    margins = np.nansum(total, axis=1) / count.sum(axis=1)
    return rows, cols, mean, count, margins, np.isnan(mean).sum()


_g = np.random.default_rng(423)


@program((np.sort(_g.uniform(0, 100, 15)), np.sort(_g.uniform(0, 100, 9)), _g.standard_normal(9), 5.0),
         (np.array([1.0, 2.0, 3.0], f32), np.array([2.5, 10.0], f32), np.array([7.0, 8.0], f32), 1.0),
         (np.array([4.0, 5.0]), np.array([], dtype=f64), np.array([], dtype=f64), 1.0))
def merge_asof_backward(left_t, right_t, right_v, tolerance):
    idx = np.searchsorted(right_t, left_t, side="right") - 1
    found = idx >= 0
    safe = np.where(found, idx, 0)
    if len(right_t) == 0:
        return np.full(len(left_t), np.nan), np.zeros(len(left_t), bool)
    lag = left_t - right_t[safe]
    ok = found & (lag <= tolerance)
    merged = np.where(ok, right_v[safe], np.nan)
    return merged, ok


_g = np.random.default_rng(424)
_ts = np.datetime64("2024-03-08T22:00:00") + np.sort(_g.integers(0, 5 * 86400, 30)).astype("timedelta64[s]")


@program((_ts, _g.random(30) * 10), (np.array(["2024-01-01T00:00", "2024-01-01T23:59", "2024-01-03T12:00"], dtype="datetime64[m]"), np.array([1.0, 2.0, 4.0], f32)))
def datetime64_daily_resample(ts, vals):
    days = ts.astype("datetime64[D]")
    uniq, inv = np.unique(days, return_inverse=True)
    daily = np.bincount(inv.ravel(), weights=vals)
    weekday = (uniq.astype(np.int64) + 3) % 7                  # 1970-01-01 was a Thursday
    span = ts[-1] - ts[0]
    hours = (ts - days).astype("timedelta64[h]").astype(np.int64)
    full = np.arange(uniq[0], uniq[-1] + np.timedelta64(1, "D"), dtype="datetime64[D]")
    filled = np.zeros(len(full))
    filled[(uniq - uniq[0]).astype(np.int64)] = daily
    return uniq, daily, weekday, span / np.timedelta64(1, "h"), np.bincount(hours, minlength=24), filled, \
        np.is_busday(uniq)


_rec = np.array([(3, b"AAPL", 10.5, 100), (1, b"MSFT", 20.0, 50), (2, b"AAPL", 11.0, 30), (4, b"GOOG", 5.25, 80)],
                dtype=[("id", "i4"), ("sym", "S4"), ("price", "f8"), ("qty", "i8")])


@program((_rec,), (_rec[::2],), lambda: (_rec.copy()[:0],))
def structured_trades_by_column(trades):
    notional = trades["price"] * trades["qty"]
    order = np.argsort(trades, order=["sym", "id"])
    syms, inv = np.unique(trades["sym"], return_inverse=True)
    vwap = np.bincount(inv.ravel(), weights=notional, minlength=len(syms)) / \
        np.maximum(np.bincount(inv.ravel(), weights=trades["qty"], minlength=len(syms)), 1)
    big = trades[notional > 1000]
    trades["qty"][trades["price"] > 10] -= 10
    return notional, trades["id"][order], syms, vwap, big["id"], trades["qty"].sum()


@program((np.array(["  Alice ", "bob", "CAROL", " dave", "alice"]),), (np.array(["x"]),), (np.array(["a1", "b22", "A1 "]),))
def char_names_cleanup(names):
    clean = np.char.lower(np.char.strip(names))
    starts_a = np.char.startswith(clean, "a")
    lengths = np.char.str_len(clean)
    uniq, counts = np.unique(clean, return_counts=True)
    tagged = np.char.add(np.char.upper(clean), np.char.mod("_%d", lengths))
    return clean, starts_a, lengths, uniq[counts > 1], tagged, np.char.center(clean, 7, "*")


_g = np.random.default_rng(427)


def _with_bad(n, dtype):
    x = np.random.default_rng(n).standard_normal(n).astype(dtype)
    x[1] = np.nan
    x[-1] = np.inf
    return x


@program((_with_bad(12, f64), _g.random(12) > 0.8), (_with_bad(6, f32), np.zeros(6, bool)), (np.full(3, np.nan), np.zeros(3, bool)))
def masked_array_sensor_stats(x, flagged):
    m = np.ma.masked_invalid(x)
    m = np.ma.masked_where(flagged, m)
    mean = m.mean()
    std = m.std()
    z = (m - mean) / std
    filled = m.filled(0.0)
    n_valid = m.count()
    return filled, np.ma.getmaskarray(m), n_valid, float(mean) if n_valid else None, \
        z.filled(np.nan) if n_valid else None


_g = np.random.default_rng(428)


@program((_g.standard_normal(30), _g.standard_normal(20) + 0.5), (_g.standard_normal(6).astype(f32), _g.standard_normal(4).astype(f32)),
         (np.array([1.0, 2.0, 2.0, 3.0]), np.array([2.0, 2.0])))
def ecdf_ks_two_sample(a, b):
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    cdf_a = np.searchsorted(a, grid, side="right") / len(a)
    cdf_b = np.searchsorted(b, grid, side="right") / len(b)
    d = np.abs(cdf_a - cdf_b)
    i = np.argmax(d)
    n_eff = len(a) * len(b) / (len(a) + len(b))
    return d[i], grid[i], np.exp(-2 * n_eff * d[i] ** 2), np.quantile(grid, [0.1, 0.5, 0.9], method="lower")


_g = np.random.default_rng(429)


@program((_g.standard_normal(40).cumsum(), 8, [10, 50, 90]), (_g.standard_normal(10).astype(f32), 3, [25, 75]))
def rolling_percentile_bands(x, w, qs):
    win = sliding_window_view(x, w)
    bands = np.percentile(win, qs, axis=-1)
    iqr_like = bands[-1] - bands[0]
    med = np.median(win, axis=1)
    outlier = np.abs(x[w - 1:] - med) > 1.5 * iqr_like
    near = np.percentile(win, 50, axis=-1, method="nearest")
    return bands, outlier, near, np.quantile(x, 0.5, method="midpoint")


_g = np.random.default_rng(430)


@program((_g.standard_normal(25) * 3, 5, 95), (np.array([1.0, np.nan, 100.0, -50.0, 2.0, 3.0]), 10, 90),
         (np.arange(7, dtype=i32), 0, 100))
def winsorize_and_robust_z(x, lo_pct, hi_pct):
    lo, hi = np.nanpercentile(x, [lo_pct, hi_pct])
    w = np.clip(x, lo, hi)
    med = np.nanmedian(w)
    mad = np.nanmedian(np.abs(w - med)) * 1.4826
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (w - med) / mad
    return w, med, mad, z, np.count_nonzero(w != x)


_g = np.random.default_rng(431)


@program((_g.integers(0, 5, 15).astype(f64), _g.standard_normal(15)), (np.array([1, 2, 2, 3], f32), np.array([4, 3, 3, 1], f32)),
         (np.array([5, 5, 5]), np.array([1, 2, 3])))
def spearman_by_average_ranks(x, y):
    def rank(v):
        order = np.argsort(v, kind="mergesort")
        sv = v[order]
        first = np.r_[True, sv[1:] != sv[:-1]]
        grp = np.cumsum(first) - 1
        starts = np.flatnonzero(first)
        ends = np.r_[starts[1:], len(v)]
        avg = (starts + ends + 1) / 2.0
        out = np.empty(len(v))
        out[order] = avg[grp]
        return out
    rx, ry = rank(x), rank(y)
    rx -= rx.mean()
    ry -= ry.mean()
    denom = np.sqrt((rx ** 2).sum() * (ry ** 2).sum())
    return rx, ry, (rx * ry).sum() / denom if denom > 0 else np.nan


_g = np.random.default_rng(432)


@program((_g.exponential(2.0, 50), np.array([0.0, 0.5, 1, 2, 5, 10])), (np.array([0.0, 1.0, 1.0, 3.0, 99.0], f32), np.array([0.0, 1.0, 2.0], f32)))
def digitize_histogram_cdf(x, edges):
    idx = np.digitize(x, edges, right=True)
    counts, _ = np.histogram(x, bins=edges)
    under, over = (x < edges[0]).sum(), (x > edges[-1]).sum()
    cdf = np.cumsum(counts) / max(len(x), 1)
    widths = np.diff(edges)
    dens = counts / (counts.sum() * widths)
    return idx, counts, under, over, cdf, dens, np.histogram_bin_edges(x, bins=4)

# ----------------------------------------------------------------------------- small ML

_g = np.random.default_rng(441)
_Xp = _g.standard_normal((30, 3))


@program((_Xp, np.where(_Xp @ [1.0, -2.0, 0.5] > 0, 1, -1), 20), (np.array([[1.0, 1], [2, 2], [-1, -1]], f32), np.array([1, 1, -1]), 5),
         (np.array([[1.0, 0], [1, 0]]), np.array([1, -1]), 3))
def perceptron_until_no_mistakes(X, y, epochs):
    w = np.zeros(X.shape[1], dtype=X.dtype)
    b = 0.0
    mistakes = []
    for epoch in range(epochs):
        n_wrong = 0
        for xi, yi in zip(X, y):
            if yi * (xi @ w + b) <= 0:
                w += yi * xi
                b += yi
                n_wrong += 1
        mistakes.append(n_wrong)
        if n_wrong == 0:
            break
    return w, b, mistakes


_g = np.random.default_rng(442)


@program((_g.standard_normal((24, 2)), np.where(_g.random(24) > 0.5, 1.0, -1.0), 0.1, 40, np.random.default_rng(7)),
         (_g.standard_normal((6, 3)).astype(f32), np.array([1.0, -1, 1, -1, 1, -1], f32), 0.5, 6, np.random.default_rng(8)))
def pegasos_linear_svm(X, y, lam, T, rng):
    w = np.zeros(X.shape[1])
    for t in range(1, T + 1):
        i = rng.integers(len(y))
        eta = 1.0 / (lam * t)
        if y[i] * (X[i] @ w) < 1:
            w = (1 - eta * lam) * w + eta * y[i] * X[i]
        else:
            w = (1 - eta * lam) * w
        norm = np.linalg.norm(w)
        if norm > 1 / np.sqrt(lam):
            w *= 1 / (np.sqrt(lam) * norm)
    margins = y * (X @ w)
    return w, np.maximum(0, 1 - margins).mean() + lam / 2 * w @ w, (margins > 0).mean()


_g = np.random.default_rng(443)


@program((_g.standard_normal((20, 3)), _g.integers(0, 3, 20), 3), (np.array([[1.0], [2.0], [2.0], [3.0]], f32), np.array([0, 0, 1, 1]), 2),
         (np.ones((4, 2)), np.array([0, 1, 0, 1]), 2))
def gini_best_split_sorted_cumsum(X, y, n_classes):
    n = len(y)
    best = (np.inf, -1, np.nan)
    for j in range(X.shape[1]):
        order = np.argsort(X[:, j], kind="stable")
        xs, ys = X[order, j], y[order]
        left = np.cumsum(np.eye(n_classes, dtype=np.int64)[ys], axis=0)[:-1]
        right = left[-1] + np.eye(n_classes, dtype=np.int64)[ys[-1]] - left
        nl = np.arange(1, n)
        nr = n - nl
        gini_l = 1 - ((left / nl[:, None]) ** 2).sum(1)
        gini_r = 1 - ((right / nr[:, None]) ** 2).sum(1)
        score = (nl * gini_l + nr * gini_r) / n
        valid = xs[1:] != xs[:-1]
        if not valid.any():
            continue
        score = np.where(valid, score, np.inf)
        k = np.argmin(score)
        if score[k] < best[0]:
            best = (score[k], j, (xs[k] + xs[k + 1]) / 2)
    return best


_g = np.random.default_rng(444)


@program((_g.standard_normal((20, 3)), _g.standard_normal(20), [0.01, 0.1, 1.0, 10.0], 4),
         (_g.standard_normal((9, 2)).astype(f32), _g.standard_normal(9).astype(f32), [0.5], 3))
def kfold_ridge_closed_form(X, y, lambdas, k):
    folds = np.array_split(np.arange(len(y)), k)
    scores = np.zeros(len(lambdas))
    for li, lam in enumerate(lambdas):
        for f in folds:
            train = np.setdiff1d(np.arange(len(y)), f)
            Xt, yt = X[train], y[train]
            w = np.linalg.solve(Xt.T @ Xt + lam * np.eye(X.shape[1]), Xt.T @ yt)
            scores[li] += np.mean((X[f] @ w - y[f]) ** 2) / k
    best = lambdas[int(np.argmin(scores))]
    w = np.linalg.solve(X.T @ X + best * np.eye(X.shape[1]), X.T @ y)
    return scores, best, w


_g = np.random.default_rng(445)


@program((_g.standard_normal((15, 2)) + [2, 0], _g.standard_normal((12, 2)) - [2, 0], _g.standard_normal((5, 2))),
         (_g.standard_normal((4, 3)).astype(f32), _g.standard_normal((5, 3)).astype(f32) + 1, np.zeros((1, 3), f32)))
def fisher_lda_two_class(A, B, Xq):
    ma, mb = A.mean(0), B.mean(0)
    Sw = (A - ma).T @ (A - ma) + (B - mb).T @ (B - mb)
    w = np.linalg.solve(Sw + 1e-6 * np.eye(len(ma)), ma - mb)
    w /= np.linalg.norm(w)
    thresh = 0.5 * (ma + mb) @ w
    proj = Xq @ w
    sep = (ma @ w - mb @ w) ** 2 / ((A @ w).var() + (B @ w).var())
    return w, proj > thresh, sep


_g = np.random.default_rng(446)


@program((_g.uniform(-3, 3, (25, 1)), 0.5, 1e-2, np.linspace(-3, 3, 7).reshape(7, 1)),
         (_g.uniform(0, 1, (6, 2)).astype(f32), 2.0, 1e-1, _g.uniform(0, 1, (3, 2)).astype(f32)))
def kernel_ridge_rbf(X, gamma, lam, Xq):
    y = np.sin(2 * X[:, 0]) + 0.1 * X.sum(1)

    def rbf(P, Q):
        d2 = (P ** 2).sum(1)[:, None] + (Q ** 2).sum(1)[None] - 2 * P @ Q.T
        return np.exp(-gamma * np.maximum(d2, 0))
    K = rbf(X, X)
    I = np.eye(len(X), dtype=X.dtype)   # float32 stays float32 (float64 results of float32 exp would meet 1e-12)
    alpha = np.linalg.solve(K + lam * I, y)
    fit = K @ alpha
    return rbf(Xq, X) @ alpha, np.sqrt(np.mean((fit - y) ** 2)), np.linalg.cond(K + lam * I)


_g = np.random.default_rng(447)


@program((_g.standard_normal((8, 5)).astype(f32), np.array([0, 4, -100, 2, 1, -100, 3, 3]), 0.1),
         (_g.standard_normal((4, 3)) * 30, np.array([2, 0, 1, 1]), 0.0),
         (np.zeros((2, 3), f32), np.array([-100, -100]), 0.2))
def label_smoothing_cross_entropy_ignore_index(logits, labels, eps):
    keep = labels != -100
    n_cls = logits.shape[1]
    m = logits.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(logits - m).sum(axis=1))
    logp = logits - lse[:, None]
    safe = np.where(keep, labels, 0)
    nll = -logp[np.arange(len(labels)), safe]
    smooth = -logp.mean(axis=1)
    loss = (1 - eps) * nll + eps * smooth
    n = keep.sum()
    return (loss * keep).sum() / n if n else np.float32(0) * logits.sum(), np.exp(logp)


_g = np.random.default_rng(448)


@dataclasses.dataclass
class _Layer:
    W: np.ndarray
    b: np.ndarray
    p_drop: float = 0.5


@program((_Layer(_g.standard_normal((4, 3)) * 0.5, np.zeros(3)), _g.standard_normal((6, 4)), _g.standard_normal((6, 3)), np.random.default_rng(3), 0.1),
         (_Layer(_g.standard_normal((2, 2)).astype(f32), np.ones(2, f32), 0.0), np.ones((3, 2), f32), np.zeros((3, 2), f32), np.random.default_rng(4), 0.5))
def dropout_train_step_on_a_dataclass(layer, X, Y, rng, lr):
    h = X @ layer.W + layer.b
    keep = 1.0 - layer.p_drop
    mask = (rng.random(h.shape) < keep) / keep if keep < 1 else np.ones_like(h)
    out = np.maximum(h, 0) * mask
    err = out - Y
    dh = err * mask * (h > 0) / len(X)
    layer.W -= lr * X.T @ dh
    layer.b -= lr * dh.sum(0)
    return 0.5 * np.mean(err ** 2), layer


_g = np.random.default_rng(449)


@program((_g.integers(0, 4, (12, 6)), _g.integers(0, 3, 12), _g.integers(0, 4, (3, 6)), 1.0),
         (np.array([[1, 0], [0, 2], [3, 0]], dtype=i32), np.array([0, 1, 0]), np.array([[0, 0], [5, 5]], dtype=i32), 0.5))
def multinomial_naive_bayes_counts(Xc, y, Xq, alpha):
    classes = np.unique(y)
    counts = np.stack([Xc[y == c].sum(0) for c in classes]).astype(np.float64)
    smoothed = counts + alpha
    log_theta = np.log(smoothed) - np.log(smoothed.sum(1, keepdims=True))
    log_prior = np.log(np.bincount(y)[classes] / len(y))
    jll = Xq @ log_theta.T + log_prior
    post = jll - np.logaddexp.reduce(jll, axis=1, keepdims=True)
    return classes[jll.argmax(1)], np.exp(post)


_g = np.random.default_rng(450)


@program(({"W1": _g.standard_normal((3, 4)), "b1": _g.standard_normal(4), "W2": _g.standard_normal(4)}, 1.0),
         ({"w": np.array([3.0, 4.0], f32), "b": np.array(0.0, f32)}, 10.0),
         ({"w": np.zeros(2)}, 1.0))
def clip_grads_by_global_norm_in_place(grads, max_norm):
    total = np.sqrt(sum(np.sum(g * g) for g in grads.values()))
    scale = max_norm / (total + 1e-6)
    if scale < 1:
        for name in grads:
            grads[name] *= scale
    return total, min(scale, 1.0), {k: float(np.linalg.norm(v)) for k, v in grads.items()}

# ----------------------------------------------------------------------------- image and signal

_g = np.random.default_rng(461)


@program((_g.random((16, 12)), 0.15), (_g.integers(0, 256, (8, 8)).astype(u8), 0.3))
def fft_gaussian_lowpass_2d(img, cutoff):
    F = np.fft.fft2(img)
    fy = np.fft.fftfreq(img.shape[0])[:, None]
    fx = np.fft.fftfreq(img.shape[1])[None, :]
    H = np.exp(-(fx ** 2 + fy ** 2) / (2 * cutoff ** 2))
    smooth = np.fft.ifft2(F * H).real
    power = np.abs(np.fft.fftshift(F)) ** 2
    return smooth, np.log1p(power), np.abs(smooth.mean() - img.mean()) < 1e-9


_g = np.random.default_rng(462)


@program((np.sin(2 * np.pi * 3 * np.arange(50) / 50), 50.0, 80.0), (_g.standard_normal(9).astype(f32), 9.0, 4.0),
         (np.array([1.0]), 1.0, 2.0))
def resample_linear_np_interp(x, fs_in, fs_out):
    t_in = np.arange(len(x)) / fs_in
    n_out = int(np.floor(len(x) * fs_out / fs_in))
    t_out = np.arange(n_out) / fs_out
    y = np.interp(t_out, t_in, x)
    phase = np.interp(t_out, t_in, np.arange(len(x), dtype=np.float64), period=len(x) / fs_in)
    return y, phase, t_out


_g = np.random.default_rng(463)


@program((_g.standard_normal(256) + np.sin(2 * np.pi * 0.1 * np.arange(256)), 64, 32),
         (_g.standard_normal(40).astype(f32), 16, 8))
def welch_psd_hann(x, nperseg, step):
    win = np.hanning(nperseg)
    segs = sliding_window_view(x, nperseg)[::step]
    segs = segs - segs.mean(axis=1, keepdims=True)
    spec = np.abs(np.fft.rfft(segs * win, axis=1)) ** 2
    psd = spec.mean(axis=0) / (win ** 2).sum()
    psd[1:-1] *= 2
    freqs = np.fft.rfftfreq(nperseg)
    return freqs, psd, freqs[np.argmax(psd[1:]) + 1], len(segs)


_g = np.random.default_rng(464)
_sq = np.zeros((14, 14))
_sq[4:10, 4:10] = 1.0


@program((_sq + 0.01 * _g.standard_normal((14, 14)), 0.05, 4), (_g.random((9, 9)).astype(f32), 0.04, 2))
def harris_corners_top_k(img, k, n):
    Ix = np.zeros_like(img)
    Iy = np.zeros_like(img)
    Ix[:, 1:-1] = (img[:, 2:] - img[:, :-2]) / 2
    Iy[1:-1, :] = (img[2:, :] - img[:-2, :]) / 2

    def box3(a):
        p = np.pad(a, 1, mode="edge")
        return sum(p[i:i + a.shape[0], j:j + a.shape[1]] for i in range(3) for j in range(3)) / 9
    Sxx, Syy, Sxy = box3(Ix * Ix), box3(Iy * Iy), box3(Ix * Iy)
    R = Sxx * Syy - Sxy ** 2 - k * (Sxx + Syy) ** 2
    padded = np.pad(R, 1, mode="constant", constant_values=-np.inf)
    local_max = R >= sliding_window_view(padded, (3, 3)).max(axis=(-1, -2))
    cand = np.flatnonzero(local_max & (R > 0))
    top = cand[np.argsort(-R.ravel()[cand], kind="stable")[:n]]
    return R, np.column_stack(np.unravel_index(top, R.shape))


_g = np.random.default_rng(465)


@program((_g.integers(50, 120, (10, 10)).astype(u8), _g.integers(0, 256, (12, 8)).astype(u8)),
         (np.array([[0, 0], [255, 255]], u8), np.array([[10, 20, 30]], u8)))
def histogram_matching_u8(src, ref):
    s_vals, s_idx, s_counts = np.unique(src.ravel(), return_inverse=True, return_counts=True)
    r_vals, r_counts = np.unique(ref.ravel(), return_counts=True)
    s_cdf = np.cumsum(s_counts) / src.size
    r_cdf = np.cumsum(r_counts) / ref.size
    mapped = np.interp(s_cdf, r_cdf, r_vals)
    out = np.round(mapped[s_idx.ravel()]).astype(np.uint8).reshape(src.shape)
    return out, mapped, np.abs(out.astype(np.int16) - src).max()


_g = np.random.default_rng(466)
_fs = 8000
_tt = np.arange(205) / _fs


@program((np.sin(2 * np.pi * 697 * _tt) + np.sin(2 * np.pi * 1336 * _tt), [697, 770, 852, 941, 1209, 1336, 1477], _fs),
         ((0.1 * _g.standard_normal(64)).astype(f32), [1000], 8000))
def goertzel_dtmf_detect(x, freqs, fs):
    n = len(x)
    powers = []
    for f in freqs:
        kk = int(0.5 + n * f / fs)
        w = 2 * np.pi * kk / n
        coeff = 2 * np.cos(w)
        s1 = s2 = 0.0
        for v in x:
            s0 = v + coeff * s1 - s2
            s2, s1 = s1, s0
        powers.append(s1 * s1 + s2 * s2 - coeff * s1 * s2)
    powers = np.array(powers)
    return powers, np.array(freqs)[powers > 0.3 * powers.max()]


@program((np.zeros((8, 10), u8), 0, 0, 9, 6, 255), (np.zeros((5, 5), bool), 4, 4, 0, 1, True), (np.full((3, 3), 7, i32), 1, 1, 1, 1, -1))
def bresenham_line_draw(canvas, x0, y0, x1, y1, value):
    dx, dy = abs(x1 - x0), -abs(y1 - y0)
    sx = 1 if x0 < x1 else -1
    sy = 1 if y0 < y1 else -1
    err = dx + dy
    n = 0
    while True:
        canvas[y0, x0] = value
        n += 1
        if x0 == x1 and y0 == y1:
            break
        e2 = 2 * err
        if e2 >= dy:
            err += dy
            x0 += sx
        if e2 <= dx:
            err += dx
            y0 += sy
    return n, canvas.sum(dtype=np.int64)


_g = np.random.default_rng(468)


@program(((_g.random((9, 9)) > 0.35).astype(u8), (4, 4), 2), (np.array([[1, 1, 0], [0, 1, 0], [1, 0, 1]], u8), (0, 0), 5),
         (np.zeros((2, 2), u8), (1, 1), 0))
def flood_fill_bfs_in_place(img, seed, new):
    old = img[seed]
    if old == new:
        return 0
    queue = [seed]
    img[seed] = new
    filled = 1
    h, w = img.shape
    while queue:
        r, c = queue.pop(0)
        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            rr, cc = r + dr, c + dc
            if 0 <= rr < h and 0 <= cc < w and img[rr, cc] == old:
                img[rr, cc] = new
                filled += 1
                queue.append((rr, cc))
    return filled


_g = np.random.default_rng(469)


@program((_g.random((7, 8)) > 0.55,), (np.array([[1, 0, 1], [1, 0, 1], [1, 1, 1]], bool),), (np.zeros((2, 3), bool),))
def union_find_component_labels(mask):
    h, w = mask.shape
    parent = np.arange(h * w)

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    for r in range(h):
        for c in range(w):
            if not mask[r, c]:
                continue
            i = r * w + c
            for j in ((r - 1) * w + c if r > 0 and mask[r - 1, c] else -1,
                      r * w + c - 1 if c > 0 and mask[r, c - 1] else -1):
                if j >= 0:
                    a, b = find(i), find(j)
                    if a != b:
                        parent[max(a, b)] = min(a, b)
    roots = np.array([find(i) for i in range(h * w)]).reshape(h, w)
    roots = np.where(mask, roots, -1)
    _, labels = np.unique(roots, return_inverse=True)
    labels = labels.reshape(h, w) + (0 if (~mask).any() else 1)
    return labels * mask, len(np.unique(roots[mask]))


_g = np.random.default_rng(470)


@program((_g.integers(0, 256, (10, 9)).astype(u8), 1.5, 1.0), (_g.random((6, 6)).astype(f32), 0.5, 2.0))
def unsharp_mask_clipped(img, amount, sigma):
    x = np.arange(-2, 3)
    k = np.exp(-x ** 2 / (2 * sigma ** 2))
    k /= k.sum()
    f = img.astype(np.float32)
    p = np.pad(f, 2, mode="reflect")
    blur = np.apply_along_axis(lambda r: np.convolve(r, k, mode="valid"), 1, p)
    blur = np.apply_along_axis(lambda c: np.convolve(c, k, mode="valid"), 0, blur)
    sharp = f + amount * (f - blur)
    if img.dtype == np.uint8:
        return np.clip(sharp, 0, 255).round().astype(np.uint8), blur
    return np.clip(sharp, 0, 1), blur


_g = np.random.default_rng(471)


@program((_g.standard_normal(32) + 1j * _g.standard_normal(32),), (np.arange(8, dtype=f64),), (_g.standard_normal(4).astype(np.complex64),))
def recursive_radix2_fft(x):
    def fft(a):
        n = len(a)
        if n == 1:
            return a.astype(np.complex128)
        even, odd = fft(a[0::2]), fft(a[1::2])
        tw = np.exp(-2j * np.pi * np.arange(n // 2) / n) * odd
        return np.concatenate([even + tw, even - tw])
    if len(x) & (len(x) - 1):
        raise ValueError("length must be a power of two")
    X = fft(x)
    return X, np.allclose(X, np.fft.fft(x))

# ----------------------------------------------------------------------------- the Python around them

@program((np.arange(10.0),), (np.arange(7, dtype=i32),), (np.zeros((0,), f32),))
def writes_through_views_copyto_put_place(x):
    x[::2] += 1
    x[1::3] *= 2
    np.copyto(x, -x, where=x > 5)
    np.put(x, [0, -1, 100], [9, 8, 7], mode="wrap") if x.size else None
    np.place(x, x == 2, [42])
    x.flat[::4] = 0
    x.flat[-1:] = 3 if x.size else x.flat[-1:]
    return x.copy(), x[::-1], np.count_nonzero(x)


_CONFIG = {"eps": 1e-8, "momentum": 0.9, "clip": 5.0}


@program((np.ones(4), np.array([0.5, -30.0, 2.0, 0.0])), (np.ones(3, f32), np.array([1.0, 2.0, 3.0], f32)))
def momentum_step_keyword_only_defaults(w, g, *, lr=0.1, velocity=None, config=_CONFIG):
    if velocity is None:
        velocity = np.zeros_like(w)
    g = np.clip(g, -config["clip"], config["clip"])
    velocity *= config["momentum"]
    velocity += g
    w -= lr * velocity / (np.linalg.norm(velocity) + config["eps"])
    return w, velocity


_g = np.random.default_rng(482)


@program((_g.standard_normal((6, 3)),), (np.ones((4, 4)),), (np.zeros((3, 3), f32),), (_g.standard_normal((2, 2)).astype(f32),))
def cholesky_with_jitter_retries(X):
    C = X.T @ X if X.shape[0] != X.shape[1] else X @ X.T - np.diag(np.diag(X @ X.T)) * 0
    jitter, tries = 0.0, 0
    while True:
        try:
            L = np.linalg.cholesky(C + jitter * np.eye(len(C), dtype=C.dtype))
            break
        except np.linalg.LinAlgError:
            tries += 1
            jitter = 1e-6 if jitter == 0 else jitter * 10
            if tries > 8:
                raise
    logdet = 2 * np.log(np.diag(L)).sum()
    return L, jitter, tries, logdet


_g = np.random.default_rng(483)


@program((np.logspace(1, 5, 9), 50.0, 1e-3, 1e-6), (np.array([1.0, 1e3], f32), 10.0, 1e-2, 1e-5), (np.array([0.0, 5032.9]), 1.0, 1e-3, 1e-6))
def rlc_impedance_bode(freqs, R, L, C):
    w = 2 * np.pi * freqs
    with np.errstate(divide="ignore", invalid="ignore"):
        Z = R + 1j * w * L + 1 / (1j * w * C)
    mag_db = 20 * np.log10(np.abs(Z))
    phase = np.unwrap(np.angle(Z))
    resonance = 1 / (2 * np.pi * np.sqrt(L * C))
    i = np.nanargmin(np.abs(Z))
    return Z, mag_db, np.degrees(phase), resonance, freqs[i], Z.conj() * Z


@program((np.frombuffer(b"Wikipedia", dtype=u8),), (np.zeros(0, u8),), (np.full(6000, 255, u8),))
def adler32_checksum(data):
    MOD = 65521
    a = (1 + np.cumsum(data, dtype=np.int64)) % MOD
    b = (data.size + np.sum((data.size - np.arange(data.size)) * data.astype(np.int64)) % MOD) % MOD
    b_loop = 0
    aa = 1
    for v in data[:50]:
        aa = (aa + int(v)) % MOD
        b_loop = (b_loop + aa) % MOD
    a_last = int(a[-1]) if data.size else 1
    return (b << 16) | a_last, np.uint32(b) << np.uint32(16) | np.uint32(a_last), b_loop


_g = np.random.default_rng(485)


@program((_g.standard_normal(13), 4), (_g.standard_normal(6).astype(f32), 3), (np.array([], dtype=f64), 2))
def chunked_sums_generator_and_star_args(x, n_chunks):
    def stats(*arrays, ddof=0, **opts):
        out = [(a.sum(), a.var(ddof=ddof) if a.size > ddof else np.nan) for a in arrays]
        if opts.get("total"):
            out.append(sum(s for s, _ in out))
        return out

    def chunks(a, n):
        for part in np.array_split(a, n):
            if part.size:
                yield part
    parts = list(chunks(x, n_chunks))
    res = stats(*parts, ddof=1, total=True)
    return res, sum(p.max() for p in chunks(x, n_chunks)) if parts else None, len(parts)


class _RunningStats:
    def __init__(self, dim, dtype=np.float64):
        self.n = 0
        self.mean = np.zeros(dim, dtype)
        self.M2 = np.zeros(dim, dtype)

    def push(self, batch):
        for row in batch:
            self.n += 1
            d = row - self.mean
            self.mean += d / self.n
            self.M2 += d * (row - self.mean)
        return self

    @property
    def var(self):
        return self.M2 / max(self.n - 1, 1)


_g = np.random.default_rng(486)


@program((_RunningStats(3), _g.standard_normal((7, 3))), (_RunningStats(2, f32), _g.standard_normal((3, 2)).astype(f32)))
def running_stats_object_method(rs, batch):
    rs.push(batch[:2]).push(batch[2:])
    return rs.mean.copy(), rs.var, rs.n, np.allclose(rs.var, batch.var(axis=0, ddof=1))


_g = np.random.default_rng(487)


@program((_g.integers(-2**62, 2**62, 6, dtype=i64), np.array([2**63 - 1, -2**63, 0], dtype=i64)),
         (np.array([2**31 - 1, -2**31, 7], dtype=i32), np.array([1, -1], dtype=i32)))
def huge_int_midpoints_and_overflow_checks(a, b):
    mid_safe = a // 2 + b[0] // 2 + (a % 2 + b[0] % 2) // 2
    span = np.abs(a.astype(np.float64) - b[0])
    with np.errstate(over="ignore"):
        wrapped = a + b[0]
    overflowed = (a > 0) & (b[0] > 0) & (wrapped < 0)
    ext = np.iinfo(a.dtype)
    return mid_safe, span, wrapped, overflowed, ext.max - a.max(), np.sort(np.concatenate([a, b]))


_g = np.random.default_rng(488)


@program((_g.standard_normal((4, 5)).astype(f32), np.array(2.0, f32), np.float32(0.5)),
         (_g.standard_normal((0, 3)), np.array(1.0), 1.0),
         (np.full((2, 2), np.inf), np.array(0.0), 0.0))
def zero_d_and_empty_normalisation(x, scale, shift):
    col_max = x.max(axis=0, initial=-np.inf)
    s = scale * 1
    y = (x - shift) * s
    nrm = np.sqrt((y * y).sum(axis=1))
    safe = np.divide(y, nrm[:, None], out=np.zeros_like(y), where=nrm[:, None] > 0)
    return col_max, s, s.ndim, y, safe, np.isfinite(y).all(), x.shape[0] * float(scale)

# ----------------------------------------------------------------------------- loops whose names follow each other

@program((1.0, 0.7, 0.1, 30), (np.float64(2.0), 1.5, 0.05, 1), (np.linspace(0.5, 2.0, 5), 0.3, 0.2, 12),
         (np.float32(1.0), np.float32(2.0), np.float32(0.1), 6))
def adams_bashforth2_decay(y0, k, h, n):
    y = y0
    f_prev = f = -k * y            # one start value for both: f_prev follows f
    for _ in range(n):
        y = y + h * (1.5 * f - 0.5 * f_prev)
        f_prev, f = f, -k * y
    return y, f_prev, f


_g = np.random.default_rng(491)


@program((np.eye(4) * 0.6 + 0.05, _g.standard_normal(4), 1e-10, 200), (np.eye(3) * 0.5, np.ones(3), 1e-3, 2),
         (np.eye(2), np.zeros(2), 1e-8, 10))
def fixed_point_with_residual_history(A, b, tol, maxit):
    x = np.zeros_like(b)
    res_prev = res = np.linalg.norm(b)
    k = 0
    while res > tol and k < maxit:
        x = x + 0.5 * (b - A @ x)
        res_prev, res = res, np.linalg.norm(b - A @ x)
        k += 1
    rate = res / res_prev if res_prev > 0 else 0.0
    return x, k, res, rate


@program((np.array([[0.2, 0.3, 0.1], [0.95, 0.1, 0.2], [0.4, 0.2, 0.3], [0.1, 0.99, 0.5]]), 0.9),
         (np.random.default_rng(492).random((6, 5)), 0.8), (np.zeros((3, 3), f32), 0.5))
def first_alarm_or_last_seen(readings, limit):
    alarm = last = -1
    for t in range(readings.shape[0]):
        for s in range(readings.shape[1]):
            if readings[t, s] > limit:
                alarm = last = t * readings.shape[1] + s
                break
        else:
            last = alarm
    return alarm, last


test_program = program_test(PROGRAMS, BACKENDS, share=8)
