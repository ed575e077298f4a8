"""A fourteenth set of real NumPy programs through kiln.compile, checked like
tests/test_programs.py, written the way scripts and small libraries are: audio front ends
(pre-emphasis, framing by sliding_window_view, zero-crossing rate, spectral centroid and
roll-off from np.fft.rfft), image code (Sobel-free unsharp by shifted slices, bilinear
resize by np.floor/np.clip gathers, morphological gradient by shifted max/min), geodesy
(inverse distance weighting over a haversine matrix), queues and inventory with a seeded
Generator passed in, graphs on adjacency matrices (PageRank with dangling nodes, transitive
closure by boolean products, triangles and clustering), interpolation (Catmull-Rom cubic
Hermite, searchsorted bins), statistics (rolling beta by cumsum, Gini and Lorenz, Holt's
linear smoothing, stratified splits), optimisation (Euclidean projection onto the simplex,
Armijo backtracking with while/break), integer code (CRC-8 from a module-level table,
nibble popcount, mode per row by np.unique), float32 models, int16 audio, complex64 QPSK.
Every program ran against NumPy on cpp, cpp-dynamic, eager and aot_eager with two calls;
all values matched. What was fixed: armijo_backtracking_descent's ``fs[-1]`` of a history
list appended to between graph breaks guarded ``len(fs) == n`` (a recompile per length,
then every call uncompiled: 1.45x NumPy's time; tests/capture/test_break_values.py);
holt_linear_smoothing_forecast's level and trend, np.float64 throughout a range loop,
were flagged "a float or the NumPy scalar the loop made it" and broke the graph after the
loop (tests/test_programs_loop_types.py); catmull_rom_cubic_hermite's
``np.gradient(yk, xk)`` with coordinates broke the graph (now a composite). Beside them:
an array item of a list or dict argument returned after the list changed
(``v = l[0]; l[0] = x; return v``) came back as the new item
(tests/capture/test_list_mutation.py), and a try body whose graph keeps raising into the
except clause cost 1.23x (tests/capture/test_common_constructs.py). Left as graph breaks
(at NumPy's speed): draws from a Generator passed in, np.packbits/unpackbits, np.unique
with axis=, searchsorted's sorter=, ``while True: ... break`` on array data.
"""
from __future__ import annotations

import numpy as np

from tests.test_programs import program_registry, program_test

f32, f64, i16, i32, i64, u8 = np.float32, np.float64, np.int16, np.int32, np.int64, np.uint8

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)

_g = np.random.default_rng(1401)


# ----------------------------------------------------------------------------- audio / DSP

def _frames(x, frame_len, hop):
    from numpy.lib.stride_tricks import sliding_window_view
    return sliding_window_view(x, frame_len)[::hop]


@program((_g.standard_normal(40), 0.97, 8, 4), (_g.standard_normal(29).astype(f32), 0.95, 6, 3))
def preemphasis_frames_zero_crossing_rate(signal, coeff, frame_len, hop):
    # speech front end: y[n] = x[n] - a x[n-1], frames by a strided view, ZCR and energy per frame
    emph = np.append(signal[0], signal[1:] - coeff * signal[:-1])
    frames = _frames(emph, frame_len, hop)
    signs = np.sign(frames)
    signs[signs == 0] = 1
    zcr = np.mean(np.abs(np.diff(signs, axis=1)) / 2, axis=1)
    energy = np.sum(frames ** 2, axis=1)
    voiced = (zcr < 0.5) & (energy > np.median(energy))
    return emph, zcr, energy, voiced, frames.shape


@program((_g.standard_normal(64), 16, 8, 1000.0), (np.sin(np.arange(48) * 0.7), 12, 6, 800.0))
def spectral_centroid_rolloff_flux(x, n_fft, hop, sr):
    # librosa-style spectral features: Hann-windowed frames, |rfft|, centroid, 85% roll-off, flux
    win = np.hanning(n_fft)
    frames = _frames(x, n_fft, hop) * win
    mag = np.abs(np.fft.rfft(frames, axis=1))
    freqs = np.fft.rfftfreq(n_fft, d=1.0 / sr)
    total = mag.sum(axis=1, keepdims=True)
    centroid = (mag * freqs).sum(axis=1) / np.maximum(total[:, 0], 1e-12)
    cum = np.cumsum(mag, axis=1)
    rolloff_bin = np.argmax(cum >= 0.85 * total, axis=1)
    flux = np.sqrt(np.sum(np.diff(mag, axis=0) ** 2, axis=1))
    return centroid, freqs[rolloff_bin], np.concatenate([[0.0], flux]), mag.dtype


@program(((_g.standard_normal(30) * 9000).astype(i16), (_g.standard_normal(30) * 9000).astype(i16), 0.7),
         ((_g.standard_normal(17) * 20000).astype(i16), (_g.standard_normal(17) * 3000).astype(i16), 1.3))
def int16_pcm_mix_rms_dbfs(a, b, gain):
    # mixing two int16 tracks: widen, mix with a gain, count clipped samples, saturate, RMS in dBFS
    mix = a.astype(np.int32) + np.round(b * gain).astype(np.int32)
    clipped = np.count_nonzero((mix > 32767) | (mix < -32768))
    out = np.clip(mix, -32768, 32767).astype(np.int16)
    full = out.astype(np.float64) / 32768.0
    rms = np.sqrt(np.mean(full ** 2))
    dbfs = 20 * np.log10(rms) if rms > 0 else -np.inf
    peak = np.max(np.abs(out.astype(np.int32)))
    return out, clipped, dbfs, peak


_QPSK = np.array([1 + 1j, -1 + 1j, -1 - 1j, 1 - 1j], dtype=np.complex64) / np.sqrt(np.float32(2))


@program((_g.integers(0, 4, 24), 0.1, _g), (_g.integers(0, 4, 10), 0.4, _g))
def qpsk_complex64_awgn_demod(symbols, noise_std, rng):
    # a module-level constellation, complex64 noise from the passed-in Generator, nearest-point decisions
    tx = _QPSK[symbols]
    noise = (rng.standard_normal(tx.shape) + 1j * rng.standard_normal(tx.shape)).astype(np.complex64)
    rx = tx + np.float32(noise_std) * noise
    d = np.abs(rx[:, None] - _QPSK[None, :]) ** 2
    decided = np.argmin(d, axis=1)
    evm = np.sqrt(np.mean(np.abs(rx - tx) ** 2) / np.mean(np.abs(tx) ** 2))
    phase = np.angle(rx * np.conj(tx))
    return rx, decided, np.sum(decided != symbols), evm, phase


# ----------------------------------------------------------------------------- images

@program((_g.integers(0, 256, (9, 11)).astype(u8), 1.5), (_g.integers(0, 256, (6, 5)).astype(u8), 0.5))
def unsharp_by_shifted_slices_u8(img, amount):
    # a 3x3 box blur from nine shifted slices of an edge-padded float image; sharpen, round, saturate
    f = img.astype(np.float32)
    p = np.pad(f, 1, mode="edge")
    h, w = f.shape
    blur = np.zeros_like(f)
    for dy in range(3):
        for dx in range(3):
            blur += p[dy:dy + h, dx:dx + w]
    blur /= 9
    sharp = f + amount * (f - blur)
    return np.clip(np.rint(sharp), 0, 255).astype(np.uint8), blur


@program((_g.random((5, 6)), 8, 9), (_g.random((4, 4)).astype(f32), 3, 7))
def resize_bilinear_floor_clip(img, out_h, out_w):
    # align_corners=False bilinear resize: source coordinates, floor, clipped neighbours, lerp weights
    in_h, in_w = img.shape
    ys = (np.arange(out_h) + 0.5) * in_h / out_h - 0.5
    xs = (np.arange(out_w) + 0.5) * in_w / out_w - 0.5
    y0 = np.clip(np.floor(ys).astype(int), 0, in_h - 1)
    x0 = np.clip(np.floor(xs).astype(int), 0, in_w - 1)
    y1 = np.clip(y0 + 1, 0, in_h - 1)
    x1 = np.clip(x0 + 1, 0, in_w - 1)
    wy = np.clip(ys - y0, 0, 1)[:, None]
    wx = np.clip(xs - x0, 0, 1)[None, :]
    top = img[y0][:, x0] * (1 - wx) + img[y0][:, x1] * wx
    bot = img[y1][:, x0] * (1 - wx) + img[y1][:, x1] * wx
    return (top * (1 - wy) + bot * wy).astype(img.dtype)


def _shift_stack(a, fill):
    p = np.pad(a, 1, constant_values=fill)
    h, w = a.shape
    return np.stack([p[i:i + h, j:j + w] for i in range(3) for j in range(3)])


@program(((_g.random((7, 8)) > 0.55).astype(u8),), ((_g.random((5, 5)) > 0.3).astype(u8),))
def morphological_gradient_and_tophat(mask):
    # dilation/erosion as max/min over a stack of shifted copies, gradient, white top-hat, border pixels
    dil = _shift_stack(mask, 0).max(axis=0)
    ero = _shift_stack(mask, 1).min(axis=0)
    opened = _shift_stack(_shift_stack(mask, 1).min(axis=0), 0).max(axis=0)
    gradient = dil - ero
    tophat = mask - opened
    border = np.argwhere(gradient & mask)
    return gradient, tophat, border, int(gradient.sum())


# ----------------------------------------------------------------------------- geodesy

_EARTH_KM = 6371.0088


def _haversine(lat1, lon1, lat2, lon2):
    p1, p2 = np.radians(lat1)[:, None], np.radians(lat2)[None, :]
    dphi = p2 - p1
    dlmb = np.radians(lon2)[None, :] - np.radians(lon1)[:, None]
    a = np.sin(dphi / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dlmb / 2) ** 2
    return 2 * _EARTH_KM * np.arcsin(np.sqrt(np.clip(a, 0, 1)))


@program((_g.uniform(40, 50, 6), _g.uniform(-5, 5, 6), _g.random(6) * 20, _g.uniform(40, 50, 4), _g.uniform(-5, 5, 4), 2.0),
         (np.array([45.0, 46.0]), np.array([1.0, 2.0]), np.array([3.0, 5.0]), np.array([45.0, 47.0, 46.0]),
          np.array([1.0, 0.0, 2.0]), 1.0))
def idw_interpolation_haversine(lat, lon, val, qlat, qlon, power):
    # inverse distance weighting: exact hits take the station's value, others a normalised weighted mean
    d = _haversine(qlat, qlon, lat, lon)
    exact = d < 1e-9
    with np.errstate(divide="ignore"):
        w = 1.0 / d ** power
    w[exact] = 0.0
    est = (w @ val) / w.sum(axis=1)
    hit = exact.any(axis=1)
    est[hit] = val[np.argmax(exact[hit], axis=1)]
    nearest = np.argmin(d, axis=1)
    return est, nearest, d.min(axis=1)


# ----------------------------------------------------------------------------- simulation with a Generator

@program((_g, 30, 1.0, 1.25), (_g, 12, 0.5, 2.0))
def mm1_queue_lindley(rng, n, lam, mu):
    # M/M/1 waiting times by Lindley's recursion W[k+1] = max(0, W[k] + S[k] - A[k+1])
    inter = rng.exponential(1.0 / lam, n)
    service = rng.exponential(1.0 / mu, n)
    wait = np.zeros(n)
    for k in range(n - 1):
        wait[k + 1] = max(0.0, wait[k] + service[k] - inter[k + 1])
    arrivals = np.cumsum(inter)
    departures = arrivals + wait + service
    busy = service.sum() / departures[-1]
    return wait, departures, busy, np.percentile(wait, 90)


class _Inventory:
    def __init__(self, s, S, on_hand):
        self.s, self.S = s, S
        self.on_hand = on_hand
        self.orders = np.zeros(0, dtype=np.int64)

    def review(self):
        if self.on_hand < self.s:
            q = self.S - self.on_hand
            self.on_hand += q
            self.orders = np.append(self.orders, q)
            return q
        return 0


@program((_g, 10, 5, 20), (_g, 6, 3, 8))
def inventory_review_object_with_poisson_demand(rng, days, s, S):
    # an (s, S) policy object updated day by day; lost sales counted; demand from rng.poisson
    inv = _Inventory(s, S, S)
    demand = rng.poisson(4, days)
    lost = np.zeros(days, dtype=np.int64)
    level = np.empty(days, dtype=np.int64)
    for t, d in enumerate(demand):
        sold = min(inv.on_hand, int(d))
        lost[t] = d - sold
        inv.on_hand -= sold
        inv.review()
        level[t] = inv.on_hand
    return level, lost.sum(), inv.orders, vars(inv)


# ----------------------------------------------------------------------------- graphs on adjacency matrices

@program(((_g.random((6, 6)) > 0.6).astype(f64), 1e-10), (np.array([[0, 1, 1], [0, 0, 1], [1, 0, 0]], dtype=f64), 1e-12))
def hits_hubs_and_authorities(A, tol):
    # Kleinberg's HITS: a = A^T h, h = A a, each L2-normalised, until both move less than tol
    n = A.shape[0]
    hub, auth = np.ones(n), np.ones(n)
    for it in range(100):
        new_auth = A.T @ hub
        new_auth /= np.linalg.norm(new_auth) or 1.0
        new_hub = A @ new_auth
        new_hub /= np.linalg.norm(new_hub) or 1.0
        moved = max(np.abs(new_auth - auth).max(), np.abs(new_hub - hub).max())
        hub, auth = new_hub, new_auth
        if moved < tol:
            break
    return hub, auth, it, np.argsort(-auth, kind="stable")[:3]


@program(((_g.random((6, 6)) > 0.7),), (np.eye(4, k=1, dtype=bool),))
def transitive_closure_and_bfs_levels(adj):
    # reachability by repeated boolean products until nothing changes; BFS levels from node 0
    n = len(adj)
    reach = adj | np.eye(n, dtype=bool)
    while True:
        nxt = (reach.astype(np.int64) @ reach.astype(np.int64)) > 0
        if (nxt == reach).all():
            break
        reach = nxt
    level = np.full(n, -1)
    level[0] = 0
    frontier = np.zeros(n, dtype=bool)
    frontier[0] = True
    d = 0
    while frontier.any():
        d += 1
        frontier = (adj[frontier].any(axis=0)) & (level < 0)
        level[frontier] = d
    return reach, level


@program((np.triu((_g.random((7, 7)) > 0.5).astype(i64), 1),), (np.triu(np.ones((4, 4), dtype=i64), 1),))
def triangles_and_clustering(upper):
    # undirected graph from its upper triangle; triangles = trace(A^3)/6; local clustering coefficients
    A = upper + upper.T
    A3 = A @ A @ A
    tri_node = np.diag(A3) // 2
    deg = A.sum(axis=1)
    pairs = deg * (deg - 1) // 2
    clust = np.divide(tri_node, pairs, out=np.zeros(len(A)), where=pairs > 0)
    return np.trace(A3) // 6, tri_node, clust, clust.mean()


# ----------------------------------------------------------------------------- interpolation

@program((np.array([0.0, 1.0, 2.5, 3.0, 4.5]), np.array([1.0, 2.0, 0.5, 1.5, 3.0]), np.linspace(-0.5, 5, 13)),
         (np.arange(4.0), np.array([0.0, 1.0, 4.0, 9.0]), np.array([0.5, 2.0, 2.9])))
def catmull_rom_cubic_hermite(xk, yk, x):
    # cubic Hermite with finite-difference (Catmull-Rom) tangents; searchsorted intervals; clamped ends
    m = np.gradient(yk, xk)
    i = np.clip(np.searchsorted(xk, x, side="right") - 1, 0, len(xk) - 2)
    h = xk[i + 1] - xk[i]
    t = np.clip((x - xk[i]) / h, 0.0, 1.0)
    t2, t3 = t * t, t * t * t
    h00 = 2 * t3 - 3 * t2 + 1
    h10 = t3 - 2 * t2 + t
    h01 = -2 * t3 + 3 * t2
    h11 = t3 - t2
    y = h00 * yk[i] + h10 * h * m[i] + h01 * yk[i + 1] + h11 * h * m[i + 1]
    return y, i, np.interp(x, xk, yk)


# ----------------------------------------------------------------------------- statistics

@program((_g.standard_normal(20) * 0.01, _g.standard_normal(20) * 0.01, 5), (np.linspace(-1, 1, 9), np.linspace(1, -1, 9) ** 2, 3))
def rolling_beta_by_cumsum(asset, market, window):
    # rolling covariance / variance from running sums of x, y, xy, x^2 (pandas' rolling().cov idea)
    def roll(v):
        c = np.cumsum(np.insert(v, 0, 0.0))
        return c[window:] - c[:-window]
    sx, sy = roll(market), roll(asset)
    sxy, sxx = roll(market * asset), roll(market * market)
    cov = (sxy - sx * sy / window) / (window - 1)
    var = (sxx - sx * sx / window) / (window - 1)
    beta = np.where(var > 0, cov / np.where(var > 0, var, 1.0), np.nan)
    pad = np.full(window - 1, np.nan)
    return np.concatenate([pad, beta]), np.nanmax(np.abs(beta))


@program((_g.pareto(2.0, 25) + 1,), (np.array([1, 1, 1, 1], dtype=i64),), (np.array([0.0, 0.0, 5.0]),))
def gini_and_lorenz_curve(income):
    # sorted cumulative shares; Gini from the trapezoid area under the Lorenz curve
    x = np.sort(np.asarray(income, dtype=float))
    n = x.size
    cum = np.cumsum(x)
    lorenz = np.concatenate(([0.0], cum / cum[-1]))
    area = np.trapz(lorenz, dx=1.0 / n) if hasattr(np, "trapz") else np.trapezoid(lorenz, dx=1.0 / n)
    gini = 1 - 2 * area
    top10 = x[int(np.floor(0.9 * n)):].sum() / cum[-1]
    return lorenz, gini, top10


@program((np.cumsum(_g.standard_normal(24)) + 10, 0.5, 0.3, 4), (np.array([1.0, 2.0, 3.0, 5.0, 8.0]), 0.8, 0.1, 2))
def holt_linear_smoothing_forecast(y, alpha, beta, horizon):
    # Holt's level + trend recursion in a Python loop over a preallocated array, then a forecast
    level, trend = y[0], y[1] - y[0]
    fitted = np.empty_like(y)
    fitted[0] = y[0]
    for t in range(1, len(y)):
        prev = level
        fitted[t] = level + trend
        level = alpha * y[t] + (1 - alpha) * (level + trend)
        trend = beta * (level - prev) + (1 - beta) * trend
    forecast = level + trend * np.arange(1, horizon + 1)
    sse = float(np.sum((y - fitted) ** 2))
    return fitted, forecast, sse


@program((_g.standard_normal((12, 3)), np.array([0, 1] * 6), 0.25, _g),
         (_g.standard_normal((9, 2)).astype(f32), np.array([0, 0, 0, 1, 1, 1, 2, 2, 2]), 0.34, _g))
def stratified_split_and_scaler(X, y, test_size, rng):
    # train/test split per class by permutation; a scaler fitted on train only; class priors by bincount
    test_idx = []
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        idx = rng.permutation(idx)
        k = max(1, int(round(test_size * len(idx))))
        test_idx.extend(idx[:k].tolist())
    test = np.zeros(len(y), dtype=bool)
    test[test_idx] = True
    mu = X[~test].mean(axis=0)
    sd = X[~test].std(axis=0, ddof=1)
    sd[sd == 0] = 1
    Xtr, Xte = (X[~test] - mu) / sd, (X[test] - mu) / sd
    priors = np.bincount(y[~test]) / (~test).sum()
    return Xtr, Xte, y[test], priors


# ----------------------------------------------------------------------------- optimisation

def _project_simplex(v, z=1.0):
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - z
    ind = np.arange(1, len(v) + 1)
    rho = np.nonzero(u - css / ind > 0)[0][-1]
    theta = css[rho] / (rho + 1.0)
    return np.maximum(v - theta, 0.0)


@program((_g.standard_normal((5, 4)), _g.standard_normal(5), 30, 0.1), (np.eye(3), np.array([1.0, 0.2, -0.5]), 10, 0.5))
def projected_gradient_on_simplex(A, b, iters, lr):
    # min ||Ax - b||^2 with x in the probability simplex (Duchi et al.'s sort/cumsum projection)
    x = np.full(A.shape[1], 1.0 / A.shape[1])
    hist = []
    for _ in range(iters):
        g = 2 * A.T @ (A @ x - b)
        x = _project_simplex(x - lr * g)
        hist.append(float(np.sum((A @ x - b) ** 2)))
    return x, x.sum(), hist[-1], len(hist)


def _rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _rosen_grad(x):
    g = np.zeros_like(x)
    g[:-1] = -400 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
    g[1:] += 200 * (x[1:] - x[:-1] ** 2)
    return g


@program((np.array([-1.2, 1.0]), 25), (np.array([0.5, 0.5, 0.5]), 15))
def armijo_backtracking_descent(x0, iters):
    # steepest descent with an Armijo line search: while not sufficient decrease, halve; break on tiny g
    x = x0.copy()
    fs = [_rosen(x)]
    steps = 0
    for _ in range(iters):
        g = _rosen_grad(x)
        if np.linalg.norm(g) < 1e-8:
            break
        t = 1.0
        while _rosen(x - t * g) > fs[-1] - 1e-4 * t * (g @ g):
            t *= 0.5
            steps += 1
            if t < 1e-12:
                break
        x = x - t * g
        fs.append(_rosen(x))
    return x, np.array(fs), steps


# ----------------------------------------------------------------------------- integers and bits

def _crc8_table(poly=0x07):
    table = np.zeros(256, dtype=np.uint8)
    for i in range(256):
        c = i
        for _ in range(8):
            c = ((c << 1) ^ poly) & 0xFF if c & 0x80 else (c << 1) & 0xFF
        table[i] = c
    return table


_CRC8 = _crc8_table()
_NIBBLE_POP = np.array([bin(i).count("1") for i in range(16)], dtype=np.uint8)


@program((np.frombuffer(b"123456789", dtype=u8).copy(),), (_g.integers(0, 256, 20).astype(u8),))
def crc8_table_driven_and_popcount(data):
    # a module-level CRC-8 table in a byte loop; popcount by nibble lookup; bit-reversal by packbits
    crc = np.uint8(0)
    for byte in data:
        crc = _CRC8[crc ^ byte]
    pop = _NIBBLE_POP[data & 0x0F] + _NIBBLE_POP[data >> 4]
    bits = np.unpackbits(data)
    rev = np.packbits(bits.reshape(-1, 8)[:, ::-1])
    parity = np.bitwise_xor.reduce(np.unpackbits(data).reshape(-1, 8), axis=1)
    return crc, pop, rev, parity, int(pop.sum())


@program((_g.integers(0, 4, (5, 7)),), (np.array([[3, 3, 1], [2, 1, 1]], dtype=i32),))
def mode_per_row_by_unique(labels):
    # majority vote over rows of neighbour labels: np.unique with inverse/counts per row; ties to smallest
    modes, counts = [], []
    for row in labels:
        vals, inv, cnt = np.unique(row, return_inverse=True, return_counts=True)
        k = np.argmax(cnt)
        modes.append(vals[k])
        counts.append(cnt[inv])
    allv, allc = np.unique(labels, return_counts=True)
    return np.array(modes), np.stack(counts), dict(zip(allv.tolist(), allc.tolist()))


@program((_g.integers(0, 2**32, 8, dtype=np.uint64).astype(np.uint32), 5), (np.array([0, 1, 0xFFFFFFFF], dtype=np.uint32), 31))
def uint32_rotations_and_xorshift(x, r):
    # rotate-left in uint32, a xorshift32 step, bit tests by shifting into bool masks
    rot = (x << np.uint32(r)) | (x >> np.uint32(32 - r))
    y = x.copy()
    y ^= y << np.uint32(13)
    y ^= y >> np.uint32(17)
    y ^= y << np.uint32(5)
    low_bits = ((x[:, None] >> np.arange(4, dtype=np.uint32)) & 1).astype(bool)
    return rot, y, low_bits, rot.dtype, np.bitwise_or.reduce(x)


# ----------------------------------------------------------------------------- models in float32 and classes

class _LinearSVM:
    def __init__(self, n_features, lam=np.float32(0.01)):
        self.w = np.zeros(n_features, dtype=np.float32)
        self.b = np.float32(0.0)
        self.lam = lam
        self.t = 0

    def partial_fit(self, X, y):
        for xi, yi in zip(X, y):
            self.t += 1
            eta = np.float32(1.0) / (self.lam * self.t)
            margin = yi * (xi @ self.w + self.b)
            self.w *= (1 - eta * self.lam)
            if margin < 1:
                self.w += eta * yi * xi
                self.b += eta * yi * np.float32(0.1)
        return self

    def decision(self, X):
        return X @ self.w + self.b


@program((_g.standard_normal((10, 3)).astype(f32), np.sign(_g.standard_normal(10)).astype(f32)),
         (_g.standard_normal((5, 2)).astype(f32), np.array([1, -1, 1, -1, 1], dtype=f32)))
def float32_pegasos_svm_class(X, y):
    # a float32 model object: per-sample updates in place, decision values, accuracy; float32 kept
    svm = _LinearSVM(X.shape[1]).partial_fit(X, y)
    score = svm.decision(X)
    acc = np.mean(np.sign(score) == y)
    return score, acc, svm.w.dtype, vars(svm)


@program((np.array([0.9, 0.5, 0.3, 0.8]), np.array([[0.9, 0.075, 0.025], [0.15, 0.8, 0.05], [0.25, 0.25, 0.5]]), 6),
         (np.array([1.0, 0.0]), np.array([[0.5, 0.5], [0.2, 0.8]]), 3))
def markov_chain_stationary_and_hitting(p0, P, steps):
    # distribution after k steps by matrix_power, the stationary vector from eig, mean first passage to 0
    dist = p0[: len(P)] / p0[: len(P)].sum() @ np.linalg.matrix_power(P, steps)
    w, v = np.linalg.eig(P.T)
    k = np.argmin(np.abs(w - 1))
    pi = np.real(v[:, k])
    pi = pi / pi.sum()
    Q = P[1:, 1:]
    N = np.linalg.solve(np.eye(len(Q)) - Q, np.ones(len(Q)))
    return dist, pi, N, np.allclose(pi @ P, pi)


_PARAMS = {"sigma": 10.0, "rho": 28.0, "beta": 8.0 / 3.0}


def _lorenz(s, p):
    x, y, z = s
    return np.array([p["sigma"] * (y - x), x * (p["rho"] - z) - y, x * y - p["beta"] * z])


@program((np.array([1.0, 1.0, 1.0]), 0.01, 40), (np.array([-2.0, 0.5, 20.0]), 0.005, 25))
def lorenz_heun_dict_params(s0, dt, n):
    # Heun's method over a module-level dict of parameters; trajectory rows written into a buffer
    traj = np.empty((n + 1, 3))
    traj[0] = s0
    s = s0
    for k in range(n):
        k1 = _lorenz(s, _PARAMS)
        k2 = _lorenz(s + dt * k1, _PARAMS)
        s = s + dt / 2 * (k1 + k2)
        traj[k + 1] = s
    return traj, np.ptp(traj, axis=0)


@program((_g.standard_normal(12), np.array([0.0, 1.0, 2.0, 1.5, 0.5, 2.5, 0.2, 1.1]), 3),
         (np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0, 4.0, 1.0]), 1))
def dtw_distance_with_window(a, b, window):
    # dynamic time warping with a Sakoe-Chiba band: a cost matrix of inf filled cell by cell
    n, m = len(a), len(b)
    w = max(window, abs(n - m))
    D = np.full((n + 1, m + 1), np.inf)
    D[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(max(1, i - w), min(m, i + w) + 1):
            cost = abs(a[i - 1] - b[j - 1])
            D[i, j] = cost + min(D[i - 1, j], D[i, j - 1], D[i - 1, j - 1])
    return D[n, m], np.isfinite(D).sum()


@program((np.array([0.1, 2.0, -1.0, 0.5]), 1.5, _g, 200), (np.array([3.0, 3.0]), 0.5, _g, 50))
def temperature_sampling_inverse_cdf(logits, temperature, rng, n):
    # softmax with a temperature, inverse-CDF sampling by searchsorted, empirical vs exact frequencies
    z = logits / temperature
    p = np.exp(z - z.max())
    p /= p.sum()
    cdf = np.cumsum(p)
    cdf[-1] = 1.0
    u = rng.random(n)
    draws = np.searchsorted(cdf, u, side="right")
    freq = np.bincount(draws, minlength=len(p)) / n
    try:
        entropy = -np.sum(p * np.log2(p))
    except FloatingPointError:
        entropy = np.nan
    return p, draws[:10], freq, entropy, np.abs(freq - p).max()


# (every program ran on cpp, cpp-dynamic, eager and aot_eager when written; a few keep C++ in the budget)
_CPP = ("preemphasis_frames_zero_crossing_rate", "catmull_rom_cubic_hermite")
test_program = program_test({k: PROGRAMS[k] for k in _CPP}, ["cpp"])
test_program_eager = program_test(PROGRAMS, ["eager", "aot_eager"], share=4)
