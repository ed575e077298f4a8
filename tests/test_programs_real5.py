"""A fifth set of real NumPy programs through kiln.compile, checked like
tests/test_programs.py (values, dtypes, shapes, exceptions, arguments after the call,
aliasing, layouts) on every backend: scientific libraries' internals re-written in NumPy
(lfilter in transposed direct form, Savitzky-Golay by a pseudo-inverse, uniform filters by
cumsum, Kendall's tau, permutation tests with a Generator, PCHIP slopes, Nelder-Mead,
BFGS with outer-product updates, BFS with a frontier mask, array Dijkstra, Bellman-Ford by
np.minimum.at, Kahn's topological order), astronomy and geodesy (haversine, Julian dates,
Kepler's equation, slerp on the sphere), molecular and particle code (radial distribution
histograms, cell lists), finance (antithetic Monte Carlo, Welford volatility), data code
(structured arrays sorted by np.lexsort, np.unique(axis=0), run-length encoding by
np.split, packbits, 12-bit uint16 frames, int8 wrap-around, complex64 IQ demodulation,
datetime64 month bins) and Python around them (functools.partial, lambdas passed in,
compiled methods on a class holding arrays, kiln.compile inside a loop, a mutated global
array, np.fromiter of a generator, assert statements, user exceptions).
Every program has its own generator; sizes are small and few (each graph is a g++ build).
PYTEST_DONT_REWRITE: the programs' assert statements must stay plain Python (pytest's
rewritten messages name object addresses, which differ between the two runs).
"""
from __future__ import annotations

import functools
import math

import numpy as np

import kiln
from tests.test_programs import BACKENDS, program_registry, program_test

f16, f32, f64, i8, i32, i64, u8, u16 = (np.float16, np.float32, np.float64, np.int8, np.int32, np.int64,
                                       np.uint8, np.uint16)

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)


# ----------------------------------------------------------------------------- scipy internals by hand

_g = np.random.default_rng(501)


@program((np.array([0.2, 0.3, 0.2]), np.array([1.0, -0.5, 0.1]), _g.standard_normal(12)),
         (np.array([0.5, 0.5], f32), np.array([2.0, 0.3], f32), _g.standard_normal(9).astype(f32)),
         (np.array([1.0]), np.array([1.0]), np.zeros(0)),
         (np.array([1.0, 1.0]), np.array([0.0, 1.0]), np.ones(3)))
def lfilter_transposed_direct_form(b, a, x):
    if a[0] == 0:
        raise ValueError("filter coefficient a[0] must be non-zero")
    b = b / a[0]
    a = a / a[0]
    n = max(len(a), len(b))
    b = np.concatenate([b, np.zeros(n - len(b), b.dtype)])
    a = np.concatenate([a, np.zeros(n - len(a), a.dtype)])
    z = np.zeros(n - 1, dtype=np.result_type(b, x))
    y = np.empty_like(x, dtype=np.result_type(b, x))
    for k in range(len(x)):
        y[k] = b[0] * x[k] + (z[0] if n > 1 else 0)
        for j in range(n - 2):
            z[j] = b[j + 1] * x[k] + z[j + 1] - a[j + 1] * y[k]
        if n > 1:
            z[n - 2] = b[n - 1] * x[k] - a[n - 1] * y[k]
    return y, z


_g = np.random.default_rng(502)


@program((np.sin(np.linspace(0, 6, 25)) + 0.1 * _g.standard_normal(25), 7, 2),
         (np.linspace(0, 1, 11).astype(f32) ** 2, 5, 3), (np.arange(6.0), 5, 1))
def savgol_by_pseudo_inverse(y, window, order):
    if window % 2 == 0 or window <= order:
        raise ValueError("window must be odd and larger than the order")
    half = window // 2
    t = np.arange(-half, half + 1, dtype=np.float64)
    A = np.vander(t, order + 1, increasing=True)
    coeffs = np.linalg.pinv(A)[0]
    padded = np.concatenate([np.full(half, y[0]), y, np.full(half, y[-1])])
    smooth = np.convolve(padded, coeffs[::-1], mode="valid")
    return smooth.astype(y.dtype), coeffs


_g = np.random.default_rng(503)


@program((_g.random((6, 7)), 3), (_g.random((5, 5)).astype(f32), 1), (np.asfortranarray(_g.random((4, 6))), 5))
def uniform_filter_by_cumsum_reflect(img, size):
    half = size // 2
    out = img.astype(np.float64)
    for axis in (0, 1):
        p = np.pad(out, [(half, size - 1 - half) if ax == axis else (0, 0) for ax in range(2)], mode="reflect")
        c = np.cumsum(p, axis=axis)
        c = np.concatenate([np.zeros_like(np.take(c, [0], axis=axis)), c], axis=axis)
        n = out.shape[axis]
        hi = np.take(c, np.arange(size, size + n), axis=axis)
        lo = np.take(c, np.arange(0, n), axis=axis)
        out = (hi - lo) / size
    return out


_g = np.random.default_rng(504)


@program((_g.standard_normal(7), _g.standard_normal(7)), (np.array([1, 2, 2, 3, 3, 3], i32), np.array([3, 1, 1, 2, 4, 4], i32)),
         (np.arange(5.0), np.arange(5.0)[::-1]), (np.ones(3), np.arange(3.0)))
def kendall_tau_b_loop(x, y):
    n = len(x)
    concordant = discordant = ties_x = ties_y = 0
    for i in range(n - 1):
        dx = np.sign(x[i + 1:] - x[i])
        dy = np.sign(y[i + 1:] - y[i])
        s = dx * dy
        concordant += int(np.sum(s > 0))
        discordant += int(np.sum(s < 0))
        ties_x += int(np.sum((dx == 0) & (dy != 0)))
        ties_y += int(np.sum((dy == 0) & (dx != 0)))
    denom = math.sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y))
    tau = (concordant - discordant) / denom if denom else float("nan")
    return tau, concordant, discordant


_g = np.random.default_rng(505)


@program((_g.standard_normal(12), _g.standard_normal(9) + 0.8, np.random.default_rng(5), 50),
         (_g.random(5).astype(f32), _g.random(6).astype(f32), np.random.default_rng(6), 20))
def permutation_test_mean_difference(a, b, rng, n_perm):
    pooled = np.concatenate([a, b])
    observed = a.mean() - b.mean()
    count = 0
    diffs = np.empty(n_perm)
    for k in range(n_perm):
        perm = rng.permutation(pooled)
        d = perm[:len(a)].mean() - perm[len(a):].mean()
        diffs[k] = d
        count += abs(d) >= abs(observed)
    return observed, (count + 1) / (n_perm + 1), diffs.std(), rng


_g = np.random.default_rng(506)


@program((np.cumsum(_g.random(8)), np.array([0.0, 1, 1, 2, 5, 5, 4, 4.5]), np.linspace(0.1, 3.5, 9)),
         (np.arange(5.0, dtype=f32), np.array([0, 1, 4, 9, 16], f32), np.array([0.5, 2.5], f32)))
def pchip_interpolate(x, y, xq):
    h = np.diff(x)
    delta = np.diff(y) / h
    d = np.zeros_like(y)
    w1 = 2 * h[1:] + h[:-1]
    w2 = h[1:] + 2 * h[:-1]
    same = np.sign(delta[1:]) * np.sign(delta[:-1]) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        harm = (w1 + w2) / (w1 / delta[:-1] + w2 / delta[1:])
    d[1:-1] = np.where(same, harm, 0.0)
    d[0] = ((2 * h[0] + h[1]) * delta[0] - h[0] * delta[1]) / (h[0] + h[1])
    d[-1] = ((2 * h[-1] + h[-2]) * delta[-1] - h[-1] * delta[-2]) / (h[-1] + h[-2])
    for end, k in ((0, 0), (-1, -1)):
        if np.sign(d[end]) != np.sign(delta[k]):
            d[end] = 0.0
    i = np.clip(np.searchsorted(x, xq) - 1, 0, len(x) - 2)
    t = (xq - x[i]) / h[i]
    h00 = (1 + 2 * t) * (1 - t) ** 2
    h10 = t * (1 - t) ** 2
    h01 = t * t * (3 - 2 * t)
    h11 = t * t * (t - 1)
    return h00 * y[i] + h10 * h[i] * d[i] + h01 * y[i + 1] + h11 * h[i] * d[i + 1]


@program((np.array([-1.0, 2.0]), 60), (np.array([0.5, 0.5], f32), 25), (np.array([1.0, 1.0]), 3))
def nelder_mead_rosenbrock(x0, iters):
    def f(p):
        return (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2
    n = len(x0)
    simplex = np.vstack([x0] + [x0 + 0.1 * np.eye(n, dtype=x0.dtype)[i] for i in range(n)]).astype(np.float64)
    fs = np.array([f(p) for p in simplex])
    for _ in range(iters):
        order = np.argsort(fs, kind="stable")
        simplex, fs = simplex[order], fs[order]
        centroid = simplex[:-1].mean(axis=0)
        xr = centroid + (centroid - simplex[-1])
        fr = f(xr)
        if fr < fs[0]:
            xe = centroid + 2 * (centroid - simplex[-1])
            fe = f(xe)
            simplex[-1], fs[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < fs[-2]:
            simplex[-1], fs[-1] = xr, fr
        else:
            xc = centroid + 0.5 * (simplex[-1] - centroid)
            fc = f(xc)
            if fc < fs[-1]:
                simplex[-1], fs[-1] = xc, fc
            else:
                simplex[1:] = simplex[0] + 0.5 * (simplex[1:] - simplex[0])
                fs = np.array([f(p) for p in simplex])
    best = np.argmin(fs)
    return simplex[best], fs[best]


@program((np.array([3.0, -2.0, 1.0]), 20), (np.array([1.0, 1.0], f32), 10), (np.zeros(2), 5))
def bfgs_with_outer_updates(x0, iters):
    A = np.diag(np.arange(1.0, len(x0) + 1)) + 0.1
    c = np.linspace(-1, 1, len(x0))

    def grad(x):
        return A @ x - c
    x = x0.astype(np.float64)
    H = np.eye(len(x))
    g = grad(x)
    norms = []
    for _ in range(iters):
        if np.linalg.norm(g) < 1e-12:
            break
        p = -H @ g
        alpha = -(g @ p) / (p @ A @ p)
        s = alpha * p
        x_new = x + s
        g_new = grad(x_new)
        y = g_new - g
        rho = 1.0 / (y @ s)
        I = np.eye(len(x))
        H = (I - rho * np.outer(s, y)) @ H @ (I - rho * np.outer(y, s)) + rho * np.outer(s, s)
        x, g = x_new, g_new
        norms.append(np.linalg.norm(g))
    return x, np.array(norms), np.allclose(A @ x, c)


def _adjacency(n, p, seed):
    g = np.random.default_rng(seed)
    A = g.random((n, n)) < p
    A = A | A.T
    np.fill_diagonal(A, False)
    return A


@program((_adjacency(9, 0.25, 1), 0), (_adjacency(6, 0.0, 2), 3), (np.ones((4, 4), bool) ^ np.eye(4, dtype=bool), 2))
def bfs_levels_frontier_mask(adj, source):
    n = adj.shape[0]
    level = np.full(n, -1)
    level[source] = 0
    frontier = np.zeros(n, dtype=bool)
    frontier[source] = True
    depth = 0
    while frontier.any():
        depth += 1
        reached = adj[frontier].any(axis=0) & (level < 0)
        level[reached] = depth
        frontier = reached
    return level, int((level >= 0).sum()), depth - 1


_g = np.random.default_rng(510)


def _weights(n, seed):
    g = np.random.default_rng(seed)
    W = np.where(g.random((n, n)) < 0.4, g.integers(1, 10, (n, n)).astype(float), np.inf)
    np.fill_diagonal(W, 0)
    return W


@program((_weights(7, 1), 0), (_weights(5, 2).astype(f32), 4), (np.array([[0.0, np.inf], [np.inf, 0.0]]), 1))
def dijkstra_dense_arrays(W, source):
    n = W.shape[0]
    dist = np.full(n, np.inf, dtype=W.dtype)
    prev = np.full(n, -1)
    done = np.zeros(n, dtype=bool)
    dist[source] = 0
    for _ in range(n):
        cand = np.where(done, np.inf, dist)
        u = int(np.argmin(cand))
        if not np.isfinite(cand[u]):
            break
        done[u] = True
        alt = dist[u] + W[u]
        better = alt < dist
        dist = np.where(better, alt, dist)
        prev[better] = u
    return dist, prev, done


@program((np.array([0, 0, 1, 2, 3, 1]), np.array([1, 2, 3, 3, 4, 4]), np.array([4.0, 1.0, -2.0, 5.0, 1.0, 7.0]), 5, 0),
         (np.array([0, 1, 2], i32), np.array([1, 2, 0], i32), np.array([1.0, 1.0, -3.0]), 3, 0),
         (np.array([0, 1]), np.array([1, 2]), np.array([2.5, 0.5], f32), 4, 1))
def bellman_ford_minimum_at(src, dst, w, n, source):
    dist = np.full(n, np.inf, dtype=w.dtype)
    dist[source] = 0
    for _ in range(n - 1):
        cand = dist[src] + w
        new = dist.copy()
        np.minimum.at(new, dst, cand)
        if np.array_equal(new, dist):
            break
        dist = new
    if np.any(dist[src] + w < dist[dst]):
        raise ValueError("graph contains a negative cycle")
    return dist


@program((np.array([[0, 1, 1, 0], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]], bool),),
         (np.triu(np.random.default_rng(512).random((7, 7)) < 0.4, 1),),
         (np.array([[0, 1], [1, 0]], bool),))
def kahn_topological_order(adj):
    indeg = adj.sum(axis=0)
    order = []
    ready = list(np.flatnonzero(indeg == 0))
    while ready:
        v = ready.pop(0)
        order.append(v)
        for w in np.flatnonzero(adj[v]):
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    if len(order) != adj.shape[0]:
        raise ValueError("graph has a cycle")
    return np.array(order), indeg


# ----------------------------------------------------------------------------- astronomy and geodesy

_g = np.random.default_rng(520)


@program((np.deg2rad(_g.uniform(-80, 80, 6)), np.deg2rad(_g.uniform(-180, 180, 6)), 6371.0),
         (np.array([0.0, 0.5], f32), np.array([0.0, 3.0], f32), np.float32(1.0)),
         (np.zeros(0), np.zeros(0), 1.0))
def haversine_pairwise_matrix(lat, lon, radius):
    dlat = lat[:, None] - lat[None, :]
    dlon = lon[:, None] - lon[None, :]
    a = np.sin(dlat / 2) ** 2 + np.cos(lat)[:, None] * np.cos(lat)[None, :] * np.sin(dlon / 2) ** 2
    d = 2 * radius * np.arcsin(np.sqrt(np.clip(a, 0, 1)))
    nearest = np.argsort(d + np.diag(np.full(len(lat), np.inf)), axis=1)[:, :1] if len(lat) else np.zeros((0, 1), int)
    return d, nearest


@program((np.array([2000, 1999, 2024, 1858], i32), np.array([1, 12, 2, 11], i32), np.array([1.5, 31.0, 29.25, 17.0])),
         (np.array([2026]), np.array([3]), np.array([0.0])))
def julian_day_from_calendar(year, month, day):
    y = np.where(month <= 2, year - 1, year)
    m = np.where(month <= 2, month + 12, month)
    a = y // 100
    b = 2 - a + a // 4
    jd = np.floor(365.25 * (y + 4716)) + np.floor(30.6001 * (m + 1)) + day + b - 1524.5
    mjd = jd - 2400000.5
    weekday = (np.floor(jd + 1.5).astype(np.int64) % 7)
    return jd, mjd, weekday


_g = np.random.default_rng(522)


@program((_g.uniform(0, 2 * np.pi, 8), 0.3, 1e-12), (np.linspace(0, 6, 5).astype(f32), np.float32(0.9), 1e-5),
         (np.array([0.0, np.pi]), 0.0, 1e-12), (np.array([1.0]), 1.5, 1e-9))
def kepler_equation_newton(M, e, tol):
    if not 0 <= e < 1:
        raise ValueError(f"elliptic orbits need 0 <= e < 1, got {e}")
    E = np.where(e > 0.8, np.full_like(M, np.pi), M)
    for it in range(50):
        dE = (E - e * np.sin(E) - M) / (1 - e * np.cos(E))
        E = E - dE
        if np.max(np.abs(dE)) < tol:
            break
    nu = 2 * np.arctan2(np.sqrt(1 + e) * np.sin(E / 2), np.sqrt(1 - e) * np.cos(E / 2))
    r = 1 - e * np.cos(E)
    return E, nu, r, it


@program((np.array([0.0, 0.0]), np.array([0.5, 1.0]), np.linspace(0, 1, 5)),
         (np.deg2rad(np.array([51.5, -0.1], f32)), np.deg2rad(np.array([40.7, -74.0], f32)), np.array([0.0, 0.5, 1.0], f32)),
         (np.array([0.2, 0.3]), np.array([0.2, 0.3]), np.array([0.5])))
def great_circle_slerp(p, q, t):
    def to_xyz(ll):
        lat, lon = ll[0], ll[1]
        return np.array([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)])
    a, b = to_xyz(p), to_xyz(q)
    omega = np.arccos(np.clip(a @ b, -1.0, 1.0))
    if omega < 1e-12:
        pts = np.repeat(a[None], len(t), axis=0)
    else:
        pts = (np.sin((1 - t) * omega)[:, None] * a + np.sin(t * omega)[:, None] * b) / np.sin(omega)
    lat = np.arcsin(np.clip(pts[:, 2], -1, 1))
    lon = np.arctan2(pts[:, 1], pts[:, 0])
    return np.stack([lat, lon], axis=1), omega


@program((np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.3, -0.4, 0.866]]), np.deg2rad(23.44)),
         (np.random.default_rng(524).standard_normal((5, 3)).astype(f32), np.float32(0.4)))
def equatorial_to_ecliptic(xyz, obliquity):
    c, s = np.cos(obliquity), np.sin(obliquity)
    R = np.array([[1, 0, 0], [0, c, s], [0, -s, c]])
    ecl = xyz @ R.T
    r = np.linalg.norm(ecl, axis=1)
    lon = np.mod(np.arctan2(ecl[:, 1], ecl[:, 0]), 2 * np.pi)
    lat = np.arcsin(ecl[:, 2] / r)
    return ecl, np.rad2deg(lon), np.rad2deg(lat)


# ----------------------------------------------------------------------------- molecules and particles

_g = np.random.default_rng(530)


@program((_g.random((20, 3)) * 4.0, 4.0, 8), (_g.random((6, 2)).astype(f32), 1.0, 4), (np.zeros((1, 3)), 2.0, 3))
def radial_distribution_function(pos, box, nbins):
    n, dim = pos.shape
    d = pos[:, None, :] - pos[None, :, :]
    d -= box * np.round(d / box)
    r = np.sqrt((d ** 2).sum(-1))[np.triu_indices(n, 1)]
    edges = np.linspace(0, box / 2, nbins + 1)
    counts, _ = np.histogram(r, bins=edges)
    shell = np.diff(edges ** dim) * (np.pi if dim == 2 else 4 * np.pi / 3)
    density = n / box ** dim
    with np.errstate(invalid="ignore", divide="ignore"):
        g = 2 * counts / (n * density * shell) if n > 1 else np.zeros(nbins)
    return 0.5 * (edges[1:] + edges[:-1]), g, counts


_g = np.random.default_rng(531)


@program((_g.random((9, 2)) * 3, 3.0, 1.0), (_g.random((4, 2)).astype(f32), 1.0, 0.5))
def cell_list_neighbour_counts(pos, box, rc):
    ncell = max(int(box // rc), 1)
    cell = np.floor(pos / box * ncell).astype(np.int64) % ncell
    flat = cell[:, 0] * ncell + cell[:, 1]
    order = np.argsort(flat, kind="stable")
    starts = np.searchsorted(flat[order], np.arange(ncell * ncell))
    ends = np.searchsorted(flat[order], np.arange(ncell * ncell), side="right")
    counts = np.zeros(len(pos), dtype=np.int64)
    for i in range(len(pos)):
        cx, cy = cell[i]
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                c = ((cx + dx) % ncell) * ncell + (cy + dy) % ncell
                js = order[starts[c]:ends[c]]
                d = pos[js] - pos[i]
                d -= box * np.round(d / box)
                counts[i] += int(np.sum((d ** 2).sum(1) < rc * rc)) - int(np.any(js == i) and ncell >= 3 and dx == dy == 0)
    return counts, ends - starts


# ----------------------------------------------------------------------------- finance

_g = np.random.default_rng(540)


@program((100.0, 105.0, 0.02, 0.25, 1.0, _g.standard_normal(64)),
         (np.float32(50.0), np.float32(45.0), 0.01, 0.4, 0.5, _g.standard_normal(16).astype(f32)))
def antithetic_monte_carlo_call(s0, k, r, sigma, t, z):
    drift = (r - 0.5 * sigma ** 2) * t
    vol = sigma * np.sqrt(t)
    up = s0 * np.exp(drift + vol * z)
    down = s0 * np.exp(drift - vol * z)
    pay = 0.5 * (np.maximum(up - k, 0) + np.maximum(down - k, 0))
    disc = np.exp(-r * t)
    price = disc * pay.mean()
    stderr = disc * pay.std(ddof=1) / np.sqrt(len(z))
    return price, stderr, pay.dtype


_g = np.random.default_rng(541)


@program((100 * np.exp(np.cumsum(0.01 * _g.standard_normal(30))), 252),
         (np.array([10.0, 10.5, 10.2, np.nan, 10.8], f32), 12), (np.array([5.0]), 252))
def welford_running_volatility(prices, periods):
    r = np.diff(np.log(prices))
    mean = 0.0
    m2 = 0.0
    n = 0
    vols = np.full(len(r), np.nan)
    for k, x in enumerate(r):
        if np.isnan(x):
            continue
        n += 1
        delta = x - mean
        mean += delta / n
        m2 += delta * (x - mean)
        if n > 1:
            vols[k] = np.sqrt(m2 / (n - 1) * periods)
    return vols, n, mean


# ----------------------------------------------------------------------------- data processing

_g = np.random.default_rng(550)


@program((_g.integers(0, 3, 12).astype(i32), _g.integers(0, 4, 12), np.round(_g.random(12) * 100, 1)),
         (np.array([1, 1, 0], i32), np.array([2, 2, 2]), np.array([1.0, -np.inf, 3.0])))
def structured_records_lexsort(dept, grade, salary):
    rec = np.zeros(len(dept), dtype=[("dept", "i4"), ("grade", "i8"), ("salary", "f8")])
    rec["dept"] = dept
    rec["grade"] = grade
    rec["salary"] = salary
    order = np.lexsort((-rec["salary"], rec["grade"], rec["dept"]))
    rec = rec[order]
    keys = rec["dept"].astype(np.int64) * 100 + rec["grade"]
    first = np.r_[True, keys[1:] != keys[:-1]]
    return rec, rec[first]["salary"], np.flatnonzero(first)


_g = np.random.default_rng(551)


@program((_g.integers(0, 3, (10, 2)),), (np.array([[1.5, 2.0], [1.5, 2.0], [np.nan, 1.0]], f32),),
         (np.zeros((0, 3), i32),))
def unique_rows_with_counts(points):
    rows, idx, inv, counts = np.unique(points, axis=0, return_index=True, return_inverse=True, return_counts=True)
    dup = counts[inv.ravel()] > 1
    return rows, idx, inv.ravel(), counts, dup


@program((np.array([3, 3, 3, 1, 1, 2, 3, 3], u8),), (np.array([True, True, False, True]),), (np.zeros(0, i32),),
         (np.array([7.0]),))
def run_length_encode_split(x):
    if len(x) == 0:
        return np.zeros(0, x.dtype), np.zeros(0, np.int64), []
    cuts = np.flatnonzero(np.diff(x.astype(np.int64) if x.dtype == bool else x)) + 1
    runs = np.split(x, cuts)
    values = np.array([r[0] for r in runs], dtype=x.dtype)
    lengths = np.array([len(r) for r in runs])
    decoded = np.repeat(values, lengths)
    assert np.array_equal(decoded, x)
    return values, lengths, [int(c) for c in cuts]


_g = np.random.default_rng(553)


@program((_g.random((5, 12)) > 0.5,), (np.eye(3, dtype=bool),), (np.zeros((2, 0), bool),))
def packbits_fingerprints_tanimoto(bits):
    packed = np.packbits(bits, axis=1)
    popcount = np.unpackbits(packed, axis=1).sum(axis=1)
    inter = np.array([[np.unpackbits(a & b).sum() for b in packed] for a in packed])
    union = popcount[:, None] + popcount[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        tanimoto = np.where(union > 0, inter / union, 1.0)
    back = np.unpackbits(packed, axis=1, count=bits.shape[1]).astype(bool)
    return packed, tanimoto, np.array_equal(back, bits)


_g = np.random.default_rng(554)


@program((_g.integers(0, 4096, (6, 8)).astype(u16), _g.integers(0, 300, (6, 8)).astype(u16), 4095),
         (np.array([[10, 4095], [0, 2000]], u16), np.array([[20, 5], [1, 0]], u16), 4095))
def twelve_bit_dark_frame(raw, dark, white):
    sub = raw.astype(np.int32) - dark
    sub = np.clip(sub, 0, white).astype(np.uint16)
    wrapped = raw - dark                       # the uint16 wrap-around people hit by accident
    norm = sub.astype(np.float32) / white
    img8 = (norm * 255 + 0.5).astype(np.uint8)
    hot = np.argwhere(sub >= white - 1)
    return sub, wrapped, img8, hot, (raw >> 4).astype(np.uint8)


@program((np.array([100, 120, -100, 7, -128], i8), np.array([100, 10, -100, 1, -1], i8)),
         (np.array([127], i8), np.array([1], i8)))
def int8_wraparound_accumulators(a, b):
    s = a + b
    d = a - b
    prod = a * b
    wide = a.astype(np.int16) + b
    acc = np.zeros(1, np.int8)
    for v in a:
        acc += v
    neg = -a
    return s, d, prod, wide, acc, np.abs(a), neg, a.sum(), a.sum(dtype=np.int8)


_g = np.random.default_rng(556)


@program((np.exp(2j * np.pi * 0.1 * np.arange(32)).astype(np.complex64) * (1 + 0.05 * _g.standard_normal(32)).astype(f32),
          np.float32(0.1), 4),
         (np.ones(8, np.complex64), np.float32(0.0), 2))
def iq_demodulate_complex64(iq, f0, decim):
    n = np.arange(len(iq), dtype=np.float32)
    lo = np.exp(-2j * np.pi * f0 * n).astype(np.complex64)
    base = iq * lo
    kern = np.ones(decim, np.float32) / decim
    filt = np.convolve(base, kern, mode="valid")[::decim]
    phase = np.angle(filt)
    freq = np.diff(np.unwrap(phase)) / (2 * np.pi * decim)
    power_db = 10 * np.log10(np.abs(filt) ** 2 + np.float32(1e-12))
    return base, filt, freq, power_db, np.vdot(base, base)


@program((np.array(["2024-01-03", "2024-01-31", "2024-02-01", "2024-03-15", "2024-03-16"], "M8[D]"),
          np.array([1.0, 2.0, 3.0, 4.0, 5.0])),
         (np.array(["2023-12-31T23:00", "2024-01-01T01:00"], "M8[m]"), np.array([2.5, 0.5], f32)))
def datetime64_month_bins(t, v):
    months = t.astype("M8[M]")
    first, last = months.min(), months.max()
    nmonths = int((last - first).astype(int)) + 1
    idx = (months - first).astype(np.int64)
    total = np.bincount(idx, weights=v, minlength=nmonths)
    count = np.bincount(idx, minlength=nmonths)
    labels = first + np.arange(nmonths)
    days_in = ((labels + 1).astype("M8[D]") - labels.astype("M8[D]")).astype(np.int64)
    return labels, total, count, days_in, (t - t[0]) / np.timedelta64(1, "h")


# ----------------------------------------------------------------------------- the Python around them

def _poly_eval(coeffs, x, *, scale=1.0):
    return scale * np.polyval(coeffs, x)


@program((np.array([1.0, -2.0, 0.5]), np.linspace(-1, 1, 7)), (np.array([2.0, 1.0], f32), np.arange(3, dtype=f32)))
def functools_partial_helpers(coeffs, x):
    p = functools.partial(_poly_eval, coeffs, scale=2.0)
    q = functools.partial(np.clip, a_min=-1.0, a_max=1.0)
    return p(x), q(p(x)), functools.reduce(np.add, [x, x * 2, x * 3])


@program((np.linspace(-2, 2, 9), lambda v: np.tanh(v) * 2), (np.arange(4, dtype=f32), lambda v: v ** 2 - 1),
         (np.ones(3), np.exp))
def bisection_on_a_passed_function(target, f):
    lo = np.full_like(target, -10.0)
    hi = np.full_like(target, 10.0)
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        above = f(mid) > target
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    return 0.5 * (lo + hi)


class _Standardizer:
    def __init__(self, X):
        self.mean = X.mean(axis=0)
        self.scale = X.std(axis=0)
        self.scale[self.scale == 0] = 1.0

    @kiln.compile
    def transform(self, X):
        return (X - self.mean) / self.scale

    def inverse(self, Z):
        return Z * self.scale + self.mean


_g = np.random.default_rng(560)


@program((_g.standard_normal((8, 3)) * [1, 5, 0.1], _g.standard_normal((2, 3))),
         (np.c_[np.ones(4), np.arange(4.0)].astype(f32), np.ones((1, 2), f32)))
def compiled_method_of_a_class_holding_arrays(X, Xnew):
    s = _Standardizer(X)
    Z = s.transform(Xnew)
    back = s.inverse(Z)
    s.mean += 1.0
    Z2 = s.transform(Xnew)            # the compiled method sees the new attribute
    return Z, back, Z2, s.scale


@program((np.linspace(0, 1, 6), (1.0, 2.0, 3.0)), (np.arange(3, dtype=f32), (0.5,)))
def kiln_compile_inside_a_loop(x, gains):
    outs = []
    for g in gains:
        @kiln.compile
        def step(v):
            return np.sin(v) * g + v
        outs.append(step(x))
    return np.stack(outs), len(outs)


_WORK = np.zeros((3, 4))          # a module-level work buffer, refilled on every call


@program((np.array([0, 2, 2, 1, 0]), np.array([1, 3, 3, 0, 1]), np.array([1.0, 2.0, 0.5, 4.0, 1.0]), 0.5),
         (np.array([2]), np.array([3]), np.array([7.0]), 0.25))
def global_work_buffer_mutated_in_place(rows, cols, vals, decay):
    _WORK.fill(0.0)
    np.add.at(_WORK, (rows, cols), vals)
    _WORK[:] = decay * _WORK + (1 - decay) * _WORK.mean()
    _WORK[np.unravel_index(np.argmax(_WORK), _WORK.shape)] += 1
    return _WORK.copy(), _WORK.sum(), _WORK


@program((5, 0.5), (0, 2.0), (8, np.float32(1.5)))
def fromiter_of_a_generator(n, ratio):
    def terms():
        v = 1.0
        for k in range(n):
            yield v
            v *= ratio
    geo = np.fromiter(terms(), dtype=np.float64, count=n)
    squares = np.fromiter((k * k for k in range(n)), dtype=np.int32)
    return geo, squares, geo.sum()


@program((np.array([[0.1, 0.9], [0.5, 0.5]]), np.array([1, 0])), (np.array([[0.2, 0.7]]), np.array([0])),
         (np.array([[0.6, 0.6]]), np.array([1])), (np.array([[1.0, 0.0]], f32), np.array([2])))
def assert_statements_on_input(probs, labels):
    assert probs.ndim == 2, "probs must be 2-D"
    assert np.allclose(probs.sum(axis=1), 1.0), f"rows must sum to 1, got {probs.sum(axis=1)}"
    assert labels.max() < probs.shape[1], "label out of range"
    nll = -np.log(probs[np.arange(len(labels)), labels])
    return nll.mean(), nll


class ShapeMismatch(Exception):
    pass


@program((np.ones((3, 2)), np.ones((2, 4))), (np.ones((3, 2), f32), np.ones((3, 4), f32)), (np.ones(3), np.ones((3, 1))))
def user_exception_for_bad_shapes(a, b):
    if a.ndim != 2 or b.ndim != 2:
        raise TypeError(f"need matrices, got {a.ndim}-D and {b.ndim}-D")
    if a.shape[1] != b.shape[0]:
        raise ShapeMismatch(f"inner dimensions {a.shape[1]} and {b.shape[0]} differ")
    return a @ b


@program(({"w": np.array([1.0, 2.0]), "b": np.array(0.5)}, [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 1.0])]),
         ({"w": np.array([0.5], f32), "b": np.array(0.0, f32)}, [np.array([2.0], f32)]))
def dict_of_params_zip_enumerate(params, rows):
    preds = {}
    for i, (row, sign) in enumerate(zip(rows, [1, -1] * len(rows))):
        preds[f"row{i}"] = sign * (row @ params["w"] + params["b"])
    stacked = np.stack([preds[k] for k in preds])
    params["b"] = params["b"] + stacked.mean()
    return preds, stacked, params


@program((np.array([[3.0, 1.0], [2.0, 2.0], [0.0, 5.0]]), 4.0), (np.array([[1.0, 1.0]], f32), 10.0), (np.zeros((2, 2)), -1.0))
def early_return_inside_row_loop(rows, budget):
    spent = 0.0
    for i, row in enumerate(rows):
        cost = row.sum()
        if spent + cost > budget:
            return i, spent, rows[:i].copy()
        spent += cost
    return len(rows), spent, rows


_g = np.random.default_rng(570)


@program((_g.standard_normal((5, 4)),), (np.asfortranarray(_g.standard_normal((4, 3)).astype(f32)),),
         (_g.standard_normal((6, 6))[::2, 1::2],))
def modified_gram_schmidt(A):
    m, n = A.shape
    Q = np.array(A, dtype=np.result_type(A, np.float32), copy=True)
    R = np.zeros((n, n), dtype=Q.dtype)
    for j in range(n):
        R[j, j] = np.linalg.norm(Q[:, j])
        Q[:, j] /= R[j, j]
        for k in range(j + 1, n):
            R[j, k] = Q[:, j] @ Q[:, k]
            Q[:, k] -= R[j, k] * Q[:, j]
    return Q, R


@program((np.array([[0.0, 1.0], [-1.0, 0.0]]),), (np.array([[1.0, 2.0], [0.0, -1.0]], f32) * 3,), (np.zeros((3, 3)),))
def expm_scaling_and_squaring_taylor(A):
    norm = np.linalg.norm(A, 1)
    s = max(0, int(np.ceil(np.log2(norm))) + 1) if norm > 0 else 0
    B = A / 2 ** s
    E = np.eye(len(A), dtype=A.dtype)
    term = np.eye(len(A), dtype=A.dtype)
    for k in range(1, 14):
        term = term @ B / k
        E = E + term
    for _ in range(s):
        E = E @ E
    return E, s


@program((np.array([0.5, 0.3, 0.2]), np.array([[0.7, 0.2, 0.1], [0.3, 0.5, 0.2], [0.2, 0.3, 0.5]]),
          np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]]), np.array([0, 1, 1, 0, 1])),
         (np.array([1.0, 0.0]), np.array([[0.9, 0.1], [0.0, 1.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1])))
def viterbi_log_space_backtrack(pi, A, B, obs):
    with np.errstate(divide="ignore"):
        lpi, lA, lB = np.log(pi), np.log(A), np.log(B)
    T, S = len(obs), len(pi)
    delta = np.empty((T, S))
    psi = np.zeros((T, S), dtype=np.int64)
    delta[0] = lpi + lB[:, obs[0]]
    for t in range(1, T):
        scores = delta[t - 1][:, None] + lA
        psi[t] = np.argmax(scores, axis=0)
        delta[t] = scores[psi[t], np.arange(S)] + lB[:, obs[t]]
    path = np.empty(T, dtype=np.int64)
    path[-1] = np.argmax(delta[-1])
    for t in range(T - 1, 0, -1):
        path[t - 1] = psi[t, path[t]]
    return path, delta[-1].max()


@program((np.array([0, 0, 0, 1, 0, 0, 0], u8), 30, 5), (np.array([1, 0, 1, 1], u8), 110, 3), (np.zeros(3, u8), 90, 0))
def elementary_cellular_automaton(row, rule, steps):
    table = np.array([(rule >> i) & 1 for i in range(8)], dtype=np.uint8)
    history = [row]
    for _ in range(steps):
        left, right = np.roll(row, 1), np.roll(row, -1)
        row = table[(left << 2) | (row << 1) | right]
        history.append(row)
    return np.stack(history), row.sum()


@program((np.linspace(-2, 0.5, 6), np.linspace(-1.2, 1.2, 5), 20),
         (np.array([0.0, 0.3], f32), np.array([0.0, 0.5], f32), 8))
def mandelbrot_escape_complex64(re, im, maxit):
    c = (re[None, :] + 1j * im[:, None]).astype(np.complex64)
    z = np.zeros_like(c)
    counts = np.zeros(c.shape, dtype=np.int32)
    alive = np.ones(c.shape, dtype=bool)
    for _ in range(maxit):
        z[alive] = z[alive] ** 2 + c[alive]
        escaped = alive & (np.abs(z) > 2)
        alive &= ~escaped
        counts[alive] += 1
    return counts, z.dtype, alive.sum()


@program((50,), (2,), (1,))
def sieve_of_eratosthenes(n):
    is_prime = np.ones(n + 1, dtype=bool)
    is_prime[:2] = False
    for p in range(2, int(n ** 0.5) + 1):
        if is_prime[p]:
            is_prime[p * p::p] = False
    primes = np.flatnonzero(is_prime)
    gaps = np.diff(primes)
    return primes, gaps.max() if len(gaps) else 0, np.cumsum(is_prime)


_g = np.random.default_rng(580)


@program((_g.random(20) * 3, np.random.default_rng(9)), (np.array([0.1, 0.1, 0.8], f32), np.random.default_rng(10)),
         (np.array([0.0, 1.0]), np.random.default_rng(11)))
def systematic_resampling_particle_filter(weights, rng):
    w = weights / weights.sum()
    n = len(w)
    u = (rng.random() + np.arange(n)) / n
    cdf = np.cumsum(w)
    cdf[-1] = 1.0
    idx = np.searchsorted(cdf, u)
    ess = 1.0 / np.sum(w ** 2)
    return idx, np.bincount(idx, minlength=n), ess, rng


@program((np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0], [1.0, 0.5], [0.0, 2.0], [2.0, 2.0], [1.0, 3.0]]),),
         (np.random.default_rng(581).random((12, 2)).astype(f32),), (np.array([[0.0, 0.0], [1.0, 1.0]]),))
def convex_hull_monotone_chain(pts):
    order = np.lexsort((pts[:, 1], pts[:, 0]))
    p = pts[order]

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    lower, upper = [], []
    for i in range(len(p)):
        while len(lower) >= 2 and cross(p[lower[-2]], p[lower[-1]], p[i]) <= 0:
            lower.pop()
        lower.append(i)
    for i in range(len(p) - 1, -1, -1):
        while len(upper) >= 2 and cross(p[upper[-2]], p[upper[-1]], p[i]) <= 0:
            upper.pop()
        upper.append(i)
    hull = order[np.array(lower[:-1] + upper[:-1])]
    h = pts[hull]
    area = 0.5 * np.abs(np.dot(h[:, 0], np.roll(h[:, 1], 1)) - np.dot(h[:, 1], np.roll(h[:, 0], 1)))
    return hull, area


_g = np.random.default_rng(582)


@program((np.zeros(3), _g.standard_normal((6, 3)), np.array([[0.0, 0.0, 5.0], [2.0, 0.0, 5.0]]), np.array([1.0, 0.5])),
         (np.zeros(3, f32), np.array([[0, 0, 1], [1, 0, 0]], f32), np.array([[0, 0, 3]], f32), np.array([1.0], f32)))
def ray_sphere_nearest_hit(origin, dirs, centers, radii):
    d = dirs / np.linalg.norm(dirs, axis=1, keepdims=True)
    oc = origin - centers
    b = np.einsum("rk,sk->rs", d, oc)
    c = (oc ** 2).sum(1) - radii ** 2
    disc = b ** 2 - c
    hit = disc >= 0
    with np.errstate(invalid="ignore"):
        t = np.where(hit, -b - np.sqrt(disc), np.inf)
    t = np.where(t > 0, t, np.inf)
    which = np.argmin(t, axis=1)
    tmin = t[np.arange(len(d)), which]
    which = np.where(np.isfinite(tmin), which, -1)
    return which, tmin


@program((np.array([1e8, 1.0, -1e8, 1e-3] * 50, f32),), (np.full(1000, 0.1, f32),), (np.zeros(0, f32),))
def kahan_summation_float32(x):
    s = np.float32(0.0)
    c = np.float32(0.0)
    for v in x:
        y = v - c
        t = s + y
        c = (t - s) - y
        s = t
    return s, x.sum(), np.float32(math.fsum(x.tolist()))


@program((np.arange(8, dtype=np.complex128) + 1j,), (np.exp(2j * np.pi * np.arange(16) / 16 * 3),), (np.ones(1, complex),))
def iterative_radix2_fft_bit_reversal(x):
    n = len(x)
    if n & (n - 1):
        raise ValueError("length must be a power of two")
    bits = n.bit_length() - 1
    idx = np.arange(n)
    rev = np.zeros(n, dtype=np.int64)
    for b in range(bits):
        rev |= ((idx >> b) & 1) << (bits - 1 - b)
    a = x[rev].astype(np.complex128)
    size = 2
    while size <= n:
        w = np.exp(-2j * np.pi * np.arange(size // 2) / size)
        a = a.reshape(-1, size)
        even, odd = a[:, :size // 2].copy(), a[:, size // 2:] * w
        a[:, :size // 2] = even + odd
        a[:, size // 2:] = even - odd
        a = a.ravel()
        size *= 2
    return a, np.allclose(a, np.fft.fft(x))


@program((np.uint64(12345), 6), (np.uint64(2 ** 63 + 7), 3))
def lcg_and_xorshift_uint64(seed, n):
    out = np.empty(n, dtype=np.uint64)
    state = np.uint64(seed)
    a, c = np.uint64(6364136223846793005), np.uint64(1442695040888963407)
    for i in range(n):
        state = a * state + c
        x = state
        x ^= x >> np.uint64(12)
        x ^= x << np.uint64(25)
        x ^= x >> np.uint64(27)
        out[i] = x
    return out, (out >> np.uint64(11)).astype(np.float64) / 2.0 ** 53


_g = np.random.default_rng(590)


@program((_g.random((8, 8)).astype(f32), 4, 9), (np.tile(np.arange(6.0), (6, 1)), 3, 4))
def hog_cell_histograms(img, cell, nbins):
    gy, gx = np.gradient(img.astype(np.float64))
    mag = np.hypot(gx, gy)
    ang = np.rad2deg(np.arctan2(gy, gx)) % 180
    b = np.minimum((ang / (180 / nbins)).astype(np.int64), nbins - 1)
    H, W = img.shape
    ch, cw = H // cell, W // cell
    cy = np.arange(H)[:, None] // cell
    cx = np.arange(W)[None, :] // cell
    keep = (cy < ch) & (cx < cw)
    flat = ((cy * cw + cx) * nbins + b)[keep]
    hist = np.bincount(flat, weights=mag[keep], minlength=ch * cw * nbins).reshape(ch, cw, nbins)
    norm = hist / np.sqrt((hist ** 2).sum(-1, keepdims=True) + 1e-6)
    return norm


@program((np.array([1.0, 2.0, 4.0, 7.0, 8.0, 12.0]), np.array([0.5, 0.1, 0.9, 0.2, 0.2, 0.6]), 2.0),
         (np.arange(5.0, dtype=f32), np.ones(5, f32), 10.0))
def lomb_scargle_periodogram(t, y, fmax):
    y = y - y.mean()
    freqs = np.linspace(0.05, fmax, 12)
    power = np.empty(len(freqs))
    for k, f in enumerate(freqs):
        w = 2 * np.pi * f
        tau = np.arctan2(np.sum(np.sin(2 * w * t)), np.sum(np.cos(2 * w * t))) / (2 * w)
        c = np.cos(w * (t - tau))
        s = np.sin(w * (t - tau))
        cc, ss = np.sum(c * c), np.sum(s * s)
        power[k] = 0.5 * ((y @ c) ** 2 / cc + ((y @ s) ** 2 / ss if ss > 1e-12 else 0.0))
    return freqs, power, freqs[np.argmax(power)]


@program(("GATTACA", "GCATGCU", 1, -1, -1), ("AAA", "A", 2, -1, -2), ("", "AC", 1, -1, -1))
def needleman_wunsch_score(s, t, match, mismatch, gap):
    a = np.frombuffer(s.encode(), dtype=np.uint8)
    b = np.frombuffer(t.encode(), dtype=np.uint8)
    F = np.zeros((len(a) + 1, len(b) + 1), dtype=np.int64)
    F[:, 0] = gap * np.arange(len(a) + 1)
    F[0, :] = gap * np.arange(len(b) + 1)
    for i in range(1, len(a) + 1):
        sub = np.where(a[i - 1] == b, match, mismatch)
        diag = F[i - 1, :-1] + sub
        up = F[i - 1, 1:] + gap
        best = np.maximum(diag, up)
        for j in range(1, len(b) + 1):
            F[i, j] = max(best[j - 1], F[i, j - 1] + gap)
    return F[-1, -1], F


@program((np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2]]), np.float16(0.5)), (np.ones((2, 2), f16) * 1000, np.float16(70.0)))
def float16_scale_and_overflow(x, s):
    h = x.astype(np.float16) * s
    big = h * np.float16(2.0)
    acc = h.sum(axis=0)
    acc32 = h.sum(axis=0, dtype=np.float32)
    return h, big, acc, acc32, np.isinf(big).sum()


test_program = program_test(PROGRAMS, BACKENDS, share=8)
