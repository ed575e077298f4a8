"""A fifteenth set of real NumPy programs through kiln.compile, checked like
tests/test_programs.py, in domains the other sets leave out: finance (implied volatility by
Newton on an erf-free Black-Scholes, Merton jump-diffusion paths from a Generator passed in,
yield to maturity with duration and convexity, risk parity by fixed-point iteration),
physics (split-step Fourier for the Schrodinger equation in complex128, a D2Q9 lattice
Boltzmann step from module-level tables and np.roll, Burgers' equation by a minmod-limited
MUSCL flux, the Abelian sandpile toppled with a while loop), bioinformatics (Smith-Waterman
with a traceback, position weight matrix scores over sliding windows, Jukes-Cantor
distances of uint8-encoded alignments), geometry (closest pair by sorting and a strip,
Sutherland-Hodgman clipping, vertex normals by np.add.at, non-maximum suppression of
boxes), recommenders (item-based collaborative filtering with np.argpartition, BM25 from a
count matrix), time series (Holt-Winters additive seasonality, partial autocorrelation by
Durbin-Levinson), text (FNV-1a hashing of n-grams in np.uint64), control (a PID loop with
anti-windup on an object), optimisation (particle swarm, 2-opt tours), cellular automata
(Langton's ant, a forest-fire model on a Generator). A second part differentiates small
models with kiln.value_and_grad and checks them against central differences in float64: a
factorisation machine, Cox's partial likelihood, an ordinal (cumulative logit) model,
entropic optimal transport by Sinkhorn iterations and a dilated causal convolution.
"""
from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from tests.test_programs import program_registry, program_test
from tests.test_programs_grads_real import check_program as check_gradient_program

f32, f64, i64, u8, u64 = np.float32, np.float64, np.int64, np.uint8, np.uint64

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)

_g = np.random.default_rng(1501)


# ----------------------------------------------------------------------------- finance

def _norm_cdf(x):
    # Abramowitz-Stegun 7.1.26 erf, good to 1.5e-7: the code libraries ship without scipy
    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = 1.0 - poly * np.exp(-z * z)
    return 0.5 * (1.0 + np.sign(x) * erf)


def _bs_call(s, k, t, r, vol):
    sq = vol * np.sqrt(t)
    d1 = (np.log(s / k) + (r + 0.5 * vol * vol) * t) / sq
    d2 = d1 - sq
    vega = s * np.exp(-0.5 * d1 * d1) / math.sqrt(2 * math.pi) * np.sqrt(t)
    return s * _norm_cdf(d1) - k * math.exp(-r * t) * _norm_cdf(d2), vega


@program((100.0, np.linspace(80, 120, 9), 0.5, 0.02, _g.uniform(0.15, 0.4, 9), 1e-10, 50),
         (50.0, np.array([40.0, 50.0, 65.0]), 1.0, 0.0, np.array([0.3, 0.2, 0.5]), 1e-8, 3))
def implied_vol_newton_vega(spot, strikes, t, r, true_vol, tol, max_iter):
    # prices from known vols, then Newton on the vol with the vega, clipped, until every strike converged
    prices, _ = _bs_call(spot, strikes, t, r, true_vol)
    vol = np.full_like(strikes, 0.25)
    it = 0
    for it in range(max_iter):
        model, vega = _bs_call(spot, strikes, t, r, vol)
        step = (model - prices) / np.maximum(vega, 1e-8)
        vol = np.clip(vol - step, 1e-4, 5.0)
        if np.max(np.abs(step)) < tol:
            break
    return vol, it, np.abs(vol - true_vol).max() < 1e-6


@program((100.0, 0.05, 0.2, 1.0, 0.8, -0.1, 0.15, 6, 20, np.random.default_rng(7)),
         (40.0, 0.01, 0.3, 0.5, 2.0, 0.05, 0.1, 4, 8, np.random.default_rng(8)))
def merton_jump_diffusion_paths(s0, mu, sigma, horizon, lam, jump_mu, jump_sigma, n_paths, n_steps, rng):
    # log-price increments: drift, Brownian part and a compound-Poisson jump sum per step
    dt = horizon / n_steps
    z = rng.standard_normal((n_paths, n_steps))
    n_jumps = rng.poisson(lam * dt, (n_paths, n_steps))
    jumps = jump_mu * n_jumps + jump_sigma * np.sqrt(n_jumps) * rng.standard_normal((n_paths, n_steps))
    kappa = math.exp(jump_mu + 0.5 * jump_sigma ** 2) - 1
    inc = (mu - lam * kappa - 0.5 * sigma ** 2) * dt + sigma * math.sqrt(dt) * z + jumps
    paths = s0 * np.exp(np.cumsum(inc, axis=1))
    paths = np.hstack([np.full((n_paths, 1), s0), paths])
    return paths, n_jumps.sum(axis=1), paths[:, -1].mean()


def _bond_flows(coupon, face, years, freq):
    n = int(round(years * freq))
    times = np.arange(1, n + 1) / freq
    flows = np.full(n, coupon * face / freq)
    flows[-1] += face
    return times, flows


@program((0.05, 100.0, 5.0, 2, 96.0), (0.0, 1000.0, 3.0, 1, 900.0), (0.08, 100.0, 10.0, 4, 120.0))
def bond_ytm_duration_convexity(coupon, face, years, freq, price):
    # Newton on yield to maturity, then Macaulay/modified duration and convexity from the same flows
    times, flows = _bond_flows(coupon, face, years, freq)
    y = coupon if coupon > 0 else 0.05
    for _ in range(100):
        disc = (1 + y / freq) ** (-times * freq)
        pv = np.sum(flows * disc)
        dpv = np.sum(-times * flows * disc / (1 + y / freq))
        step = (pv - price) / dpv
        y -= step
        if abs(step) < 1e-12:
            break
    disc = (1 + y / freq) ** (-times * freq)
    w = flows * disc / price
    macaulay = np.sum(w * times)
    convexity = np.sum(w * times * (times + 1 / freq)) / (1 + y / freq) ** 2
    return y, macaulay, macaulay / (1 + y / freq), convexity


@program((np.cov(_g.standard_normal((5, 40))), 200, 1e-12), (np.diag([0.04, 0.09, 0.01]), 50, 1e-10))
def risk_parity_fixed_point(cov, max_iter, tol):
    # equal risk contributions: w_i <- (1/n) / (Sigma w)_i, normalised, until the weights stop moving
    n = cov.shape[0]
    w = np.ones(n) / n
    for k in range(max_iter):
        marginal = cov @ w
        new = 1.0 / (n * marginal)
        new /= new.sum()
        new = 0.5 * w + 0.5 * new
        done = np.linalg.norm(new - w, 1) < tol
        w = new
        if done:
            break
    rc = w * (cov @ w)
    return w, rc / rc.sum(), np.sqrt(w @ cov @ w), k


# ----------------------------------------------------------------------------- physics

@program((64, 20.0, 0.005, 10, 1.0), (32, 10.0, 0.01, 4, 0.0))
def split_step_schrodinger_complex(n, length, dt, steps, barrier):
    # a Gaussian packet through a barrier: half potential steps and kinetic steps in Fourier space
    x = np.linspace(-length / 2, length / 2, n, endpoint=False)
    k = 2 * np.pi * np.fft.fftfreq(n, d=length / n)
    psi = np.exp(-(x + 3) ** 2) * np.exp(2j * x)
    psi /= np.sqrt(np.sum(np.abs(psi) ** 2) * (length / n))
    v = np.where(np.abs(x) < 0.5, barrier, 0.0)
    half_v = np.exp(-0.5j * v * dt)
    kin = np.exp(-0.5j * k ** 2 * dt)
    for _ in range(steps):
        psi = half_v * np.fft.ifft(kin * np.fft.fft(half_v * psi))
    prob = np.abs(psi) ** 2
    norm = prob.sum() * (length / n)
    return psi, norm, np.sum(prob[x > 0.5]) * (length / n), psi.dtype


_D2Q9_C = np.array([[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1], [1, 1], [-1, 1], [-1, -1], [1, -1]])
_D2Q9_W = np.array([4 / 9] + [1 / 9] * 4 + [1 / 36] * 4)


def _equilibrium(rho, ux, uy):
    cu = 3 * (_D2Q9_C[:, 0, None, None] * ux + _D2Q9_C[:, 1, None, None] * uy)
    usq = 1.5 * (ux ** 2 + uy ** 2)
    return rho * _D2Q9_W[:, None, None] * (1 + cu + 0.5 * cu ** 2 - usq)


@program((1.0 + 0.01 * _g.standard_normal((6, 8)), 0.6, 3), (np.ones((4, 4)), 1.0, 2))
def lattice_boltzmann_d2q9_bgk(rho0, tau, steps):
    # BGK collision toward the equilibrium, streaming by np.roll along each lattice velocity
    f = _equilibrium(rho0, np.zeros_like(rho0), np.zeros_like(rho0))
    f[1] *= 1.01
    for _ in range(steps):
        rho = f.sum(axis=0)
        ux = (f * _D2Q9_C[:, 0, None, None]).sum(axis=0) / rho
        uy = (f * _D2Q9_C[:, 1, None, None]).sum(axis=0) / rho
        f += (_equilibrium(rho, ux, uy) - f) / tau
        for i in range(9):
            f[i] = np.roll(f[i], (_D2Q9_C[i, 1], _D2Q9_C[i, 0]), axis=(0, 1))
    return f.sum(axis=0), ux, uy, f.sum()


def _minmod(a, b):
    return np.where(a * b > 0, np.sign(a) * np.minimum(np.abs(a), np.abs(b)), 0.0)


@program((np.sin(np.linspace(0, 2 * np.pi, 24, endpoint=False)) + 0.5, 0.4, 12),
         (np.where(np.arange(10) < 5, 1.0, 0.0), 0.3, 5))
def burgers_muscl_minmod_rusanov(u, cfl, steps):
    # periodic inviscid Burgers: limited slopes, left/right states, a Rusanov flux, adaptive dt
    u = u.copy()
    dx = 1.0 / len(u)
    t = 0.0
    for _ in range(steps):
        slope = _minmod(u - np.roll(u, 1), np.roll(u, -1) - u)
        ul = u + 0.5 * slope
        ur = np.roll(u - 0.5 * slope, -1)
        a = np.maximum(np.abs(ul), np.abs(ur))
        flux = 0.25 * (ul ** 2 + ur ** 2) - 0.5 * a * (ur - ul)
        dt = cfl * dx / max(np.abs(u).max(), 1e-12)
        u -= dt / dx * (flux - np.roll(flux, 1))
        t += dt
    return u, t, u.sum() * dx


@program((np.full((5, 5), 3, dtype=i64), 2, 2, 6), (np.zeros((4, 6), dtype=np.int32), 1, 3, 9))
def abelian_sandpile_topple(grid, r, c, grains):
    # drop grains at one cell of the argument (in place); topple every site >= 4 until stable
    sizes = []
    for _ in range(grains):
        grid[r, c] += 1
        topples = 0
        unstable = grid >= 4
        while unstable.any():
            n = unstable.astype(grid.dtype)
            topples += int(n.sum())
            grid -= 4 * n
            grid[1:, :] += n[:-1, :]
            grid[:-1, :] += n[1:, :]
            grid[:, 1:] += n[:, :-1]
            grid[:, :-1] += n[:, 1:]
            unstable = grid >= 4
        sizes.append(topples)
    return np.array(sizes), grid.sum()


# ----------------------------------------------------------------------------- bioinformatics

_BASES = {"A": 0, "C": 1, "G": 2, "T": 3}


def _encode(s):
    return np.array([_BASES[ch] for ch in s], dtype=np.uint8)


@program((_encode("TGTTACGGACTA"), _encode("GGTTGACTA"), 3, -3, -2), (_encode("ACAC"), _encode("TTTT"), 2, -1, -1))
def smith_waterman_traceback(a, b, match, mismatch, gap):
    # local alignment: a score matrix filled by loops, its argmax, a traceback until a zero cell
    n, m = len(a), len(b)
    H = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            s = match if a[i - 1] == b[j - 1] else mismatch
            H[i, j] = max(0, H[i - 1, j - 1] + s, H[i - 1, j] + gap, H[i, j - 1] + gap)
    i, j = np.unravel_index(np.argmax(H), H.shape)
    best = H[i, j]
    path = []
    while i > 0 and j > 0 and H[i, j] > 0:
        path.append((int(i), int(j)))
        s = match if a[i - 1] == b[j - 1] else mismatch
        if H[i, j] == H[i - 1, j - 1] + s:
            i, j = i - 1, j - 1
        elif H[i, j] == H[i - 1, j] + gap:
            i -= 1
        else:
            j -= 1
    return best, path[::-1], H


@program((_g.integers(0, 4, (3, 20)).astype(u8), _g.dirichlet(np.ones(4), 6).T, 0.25),
         (_encode("ACGTACGTTT").reshape(1, -1), np.full((4, 3), 0.25), 0.25))
def pwm_log_odds_sliding_scan(seqs, pwm, background):
    # log-odds of a position weight matrix, every window of every sequence scored by a gather and a sum
    from numpy.lib.stride_tricks import sliding_window_view
    L = pwm.shape[1]
    lo = np.log2((pwm + 1e-3) / background)
    win = sliding_window_view(seqs, L, axis=1)
    scores = lo[win, np.arange(L)].sum(axis=-1)
    best = scores.argmax(axis=1)
    rel = (scores - lo.min(axis=0).sum()) / (lo.max(axis=0).sum() - lo.min(axis=0).sum())
    return scores, best, rel.max(axis=1), win.shape


@program((_g.integers(0, 4, (4, 30)).astype(u8),), (np.array([[0, 1, 2, 3], [0, 1, 2, 3], [3, 2, 1, 0]], dtype=u8),))
def jukes_cantor_distance_matrix(aln):
    # pairwise p-distances of an alignment, JC69 correction (inf where p >= 3/4), nearest neighbours
    diff = (aln[:, None, :] != aln[None, :, :]).mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = -0.75 * np.log(1 - 4.0 / 3.0 * diff)
    d[diff >= 0.75] = np.inf
    np.fill_diagonal(d, 0.0)
    masked = d + np.diag(np.full(len(d), np.inf))
    return d, masked.argmin(axis=1), np.isinf(d).sum()


# ----------------------------------------------------------------------------- geometry

def _closest_brute(p):
    d = np.sqrt(((p[:, None, :] - p[None, :, :]) ** 2).sum(-1))
    d[np.diag_indices(len(p))] = np.inf
    i, j = np.unravel_index(np.argmin(d), d.shape)
    return d[i, j], min(i, j), max(i, j)


@program((_g.random((24, 2)),), (np.array([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0], [5.0, 5.0]]),))
def closest_pair_sort_and_strip(pts):
    # sort by x, sweep with a strip of width best (a plain double loop with a break), check by brute force
    order = np.argsort(pts[:, 0], kind="stable")
    p = pts[order]
    best, bi, bj = np.inf, -1, -1
    for i in range(len(p)):
        for j in range(i + 1, len(p)):
            if p[j, 0] - p[i, 0] >= best:
                break
            d = math.hypot(p[j, 0] - p[i, 0], p[j, 1] - p[i, 1])
            if d < best:
                best, bi, bj = d, order[i], order[j]
    brute = _closest_brute(pts)
    return best, (min(bi, bj), max(bi, bj)), np.isclose(best, brute[0])


def _clip_edge(poly, a, b):
    out = []
    n = len(poly)
    for k in range(n):
        cur, prev = poly[k], poly[k - 1]
        side_cur = (b[0] - a[0]) * (cur[1] - a[1]) - (b[1] - a[1]) * (cur[0] - a[0])
        side_prev = (b[0] - a[0]) * (prev[1] - a[1]) - (b[1] - a[1]) * (prev[0] - a[0])
        if side_cur >= 0:
            if side_prev < 0:
                out.append(prev + (cur - prev) * side_prev / (side_prev - side_cur))
            out.append(cur)
        elif side_prev >= 0:
            out.append(prev + (cur - prev) * side_prev / (side_prev - side_cur))
    return np.array(out).reshape(-1, 2)


def _shoelace(p):
    x, y = p[:, 0], p[:, 1]
    return 0.5 * (x @ np.roll(y, -1) - y @ np.roll(x, -1))


@program((np.array([[0.5, -0.5], [2.0, 0.5], [0.5, 1.5], [-0.5, 0.5]]), np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])),
         (np.array([[5.0, 5.0], [6.0, 5.0], [6.0, 6.0]]), np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0]])))
def sutherland_hodgman_clip_area(subject, clipper):
    # clip a polygon by each edge of a convex counter-clockwise one; area of what is left (0 when empty)
    poly = subject
    for k in range(len(clipper)):
        if len(poly) == 0:
            return poly, 0.0
        poly = _clip_edge(poly, clipper[k - 1], clipper[k])
    return poly, _shoelace(poly) if len(poly) >= 3 else 0.0


@program((_g.standard_normal((6, 3)), np.array([[0, 1, 2], [0, 2, 3], [3, 2, 4], [4, 5, 3], [1, 5, 4]])),
         (np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]), np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])))
def mesh_vertex_normals_add_at(verts, faces):
    # face normals by a cross product (area weighted), scattered to vertices with np.add.at, normalised
    v0, v1, v2 = verts[faces[:, 0]], verts[faces[:, 1]], verts[faces[:, 2]]
    fn = np.cross(v1 - v0, v2 - v0)
    area = 0.5 * np.linalg.norm(fn, axis=1)
    vn = np.zeros_like(verts)
    for k in range(3):
        np.add.at(vn, faces[:, k], fn)
    norms = np.linalg.norm(vn, axis=1, keepdims=True)
    vn = np.divide(vn, norms, out=np.zeros_like(vn), where=norms > 0)
    return vn, area.sum(), np.bincount(faces.ravel(), minlength=len(verts))


def _iou(box, boxes):
    x1 = np.maximum(box[0], boxes[:, 0])
    y1 = np.maximum(box[1], boxes[:, 1])
    x2 = np.minimum(box[2], boxes[:, 2])
    y2 = np.minimum(box[3], boxes[:, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area = lambda b: (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])   # noqa: E731
    return inter / (area(box) + area(boxes) - inter)


def _boxes(r, n):
    xy = r.random((n, 2)) * 10
    wh = r.random((n, 2)) * 4 + 1
    return np.hstack([xy, xy + wh])


@program((_boxes(_g, 12), _g.random(12), 0.3, 0.2), (_boxes(_g, 5).astype(f32), np.linspace(1, 0, 5).astype(f32), 0.5, 0.0))
def non_maximum_suppression(boxes, scores, iou_thr, score_thr):
    # greedy NMS: keep the best box, drop those overlapping it, repeat on what is left
    keep_mask = scores > score_thr
    idx = np.nonzero(keep_mask)[0]
    idx = idx[np.argsort(-scores[idx], kind="stable")]
    keep = []
    while idx.size > 0:
        i = idx[0]
        keep.append(i)
        if idx.size == 1:
            break
        ious = _iou(boxes[i], boxes[idx[1:]])
        idx = idx[1:][ious <= iou_thr]
    keep = np.array(keep, dtype=np.intp)
    return keep, boxes[keep], scores[keep].sum()


# ----------------------------------------------------------------------------- recommenders and text

@program((np.where(_g.random((8, 6)) < 0.5, _g.integers(1, 6, (8, 6)), 0).astype(f64), 2),
         (np.array([[5.0, 0, 3], [4.0, 2, 0], [0.0, 1, 1]]), 1),
         (np.array([[5.0, 0, 3], [4.0, 2, 0]]), 4))   # (more neighbours than items: argpartition's ValueError)
def item_based_cf_argpartition(R, k):
    # mean-centred item vectors, cosine similarities, top-k neighbours by argpartition, predictions
    rated = R > 0
    counts = np.maximum(rated.sum(axis=0), 1)
    means = R.sum(axis=0) / counts
    C = np.where(rated, R - means, 0.0)
    norms = np.linalg.norm(C, axis=0)
    S = (C.T @ C) / np.maximum(np.outer(norms, norms), 1e-12)
    np.fill_diagonal(S, -np.inf)
    nbrs = np.argpartition(-S, k - 1, axis=1)[:, :k]
    nbrs = np.sort(nbrs, axis=1)
    W = np.zeros_like(S)
    rows = np.arange(S.shape[0])[:, None]
    W[rows, nbrs] = np.maximum(S[rows, nbrs], 0)
    num = C @ W.T
    den = rated.astype(f64) @ np.abs(W).T
    pred = means + np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    return nbrs, pred, pred[~rated]


@program((_g.integers(0, 4, (5, 7)), np.array([1, 3]), 1.2, 0.75), (np.array([[1, 0], [0, 2], [3, 1]]), np.array([0]), 1.5, 0.5))
def bm25_from_count_matrix(counts, query, k1, b):
    # Okapi BM25 of each document (rows) for query terms (columns) from a document-term count matrix
    n_docs = counts.shape[0]
    df = np.count_nonzero(counts, axis=0)
    idf = np.log((n_docs - df + 0.5) / (df + 0.5) + 1.0)
    dl = counts.sum(axis=1)
    avgdl = dl.mean()
    tf = counts[:, query]
    denom = tf + k1 * (1 - b + b * dl / avgdl)[:, None]
    scores = (idf[query] * tf * (k1 + 1) / denom).sum(axis=1)
    ranking = np.argsort(-scores, kind="stable")
    return scores, ranking, idf


_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


@program((np.frombuffer(b"the quick brown fox jumps over the lazy dog", dtype=u8), 3, 16),
         (np.frombuffer(b"abcabcabc", dtype=u8), 2, 8))
def fnv1a_ngram_hashing_trick(text, n, n_bins):
    # FNV-1a of every byte n-gram in np.uint64 (wrapping multiplies), bucketed into a count vector
    m = len(text) - n + 1
    h = np.full(m, _FNV_OFFSET, dtype=np.uint64)
    for k in range(n):
        h ^= text[k:k + m].astype(np.uint64)
        h *= _FNV_PRIME
    buckets = (h % np.uint64(n_bins)).astype(np.intp)
    sign = np.where((h >> np.uint64(63)) & np.uint64(1), -1, 1)
    vec = np.bincount(buckets, weights=sign, minlength=n_bins)
    return h, vec, len(np.unique(h))


# ----------------------------------------------------------------------------- time series

@program((10 + np.tile([1.0, -2.0, 0.5, 0.5], 6) + 0.1 * np.arange(24) + 0.2 * _g.standard_normal(24), 4, 0.3, 0.1, 0.2, 5),
         (np.arange(12, dtype=f64) % 3 + np.arange(12), 3, 0.5, 0.5, 0.5, 3))
def holt_winters_additive(y, m, alpha, beta, gamma, horizon):
    # additive Holt-Winters: initial level/trend/seasonals from the first two seasons, a loop, forecasts
    level = y[:m].mean()
    trend = (y[m:2 * m].mean() - y[:m].mean()) / m
    season = y[:m] - level
    fitted = np.empty_like(y)
    for t in range(len(y)):
        s = season[t % m]
        fitted[t] = level + trend + s
        new_level = alpha * (y[t] - s) + (1 - alpha) * (level + trend)
        trend = beta * (new_level - level) + (1 - beta) * trend
        season[t % m] = gamma * (y[t] - new_level) + (1 - gamma) * s
        level = new_level
    h = np.arange(1, horizon + 1)
    forecast = level + h * trend + season[(len(y) + h - 1) % m]
    sse = np.sum((y - fitted) ** 2)
    return fitted, forecast, sse


@program((np.cumsum(_g.standard_normal(40)), 6), (np.sin(np.arange(16) * 0.9), 3))
def pacf_durbin_levinson(x, nlags):
    # sample autocorrelation via np.fft (zero padded), partial autocorrelations by Durbin-Levinson
    n = len(x)
    xc = x - x.mean()
    f = np.fft.rfft(xc, 2 * n)
    acov = np.fft.irfft(f * np.conj(f), 2 * n)[:nlags + 1] / n
    rho = acov / acov[0]
    pacf = np.zeros(nlags + 1)
    pacf[0] = 1.0
    phi = np.zeros(nlags + 1)
    sigma = 1.0
    for k in range(1, nlags + 1):
        a = (rho[k] - phi[1:k] @ rho[1:k][::-1]) / sigma
        prev = phi[1:k].copy()
        phi[1:k] = prev - a * prev[::-1]
        phi[k] = a
        sigma *= 1 - a * a
        pacf[k] = a
    band = 1.96 / math.sqrt(n)
    return rho, pacf, np.nonzero(np.abs(pacf[1:]) > band)[0] + 1


# ----------------------------------------------------------------------------- control and optimisation

class PID:
    def __init__(self, kp, ki, kd, limit):
        self.gains = np.array([kp, ki, kd])
        self.limit = limit
        self.integral = 0.0
        self.prev_err = 0.0
        self.history = np.zeros((0, 3))

    def run(self, setpoints, tau, dt):
        # a first-order plant y' = (u - y)/tau; clamp the output, stop integrating while saturated
        y = 0.0
        rows = []
        for sp in setpoints:
            err = sp - y
            deriv = (err - self.prev_err) / dt
            u = self.gains @ np.array([err, self.integral + err * dt, deriv])
            sat = np.clip(u, -self.limit, self.limit)
            if sat == u:
                self.integral += err * dt
            self.prev_err = err
            y += dt * (sat - y) / tau
            rows.append((y, sat, err))
        self.history = np.vstack([self.history, np.array(rows)])
        return self.history[-len(setpoints):, 0], np.abs(self.history[:, 2]).sum()


_PID = PID(2.0, 1.5, 0.05, 2.0)


@program((_PID, np.repeat([1.0, 3.0, -1.0], 6), 0.5, 0.1), (_PID, np.ones(5), 0.2, 0.05))
def pid_anti_windup_object(pid, setpoints, tau, dt):
    # the controller object passed in keeps its integral and history between calls
    ys, total = pid.run(setpoints, tau, dt)
    ys2, total2 = pid.run(setpoints[::-1], tau, dt)
    return ys, ys2, total2 - total, pid.integral, pid.history.shape


def _rastrigin(x):
    return 10 * x.shape[-1] + np.sum(x * x - 10 * np.cos(2 * np.pi * x), axis=-1)


@program((_rastrigin, 10, 2, 15, np.random.default_rng(3), {"w": 0.7, "c1": 1.5, "c2": 1.5}),
         (lambda x: np.sum((x - 1) ** 2, axis=-1), 5, 3, 6, np.random.default_rng(4), {"w": 0.5, "c1": 1.0, "c2": 2.0}))
def particle_swarm_minimise(objective, n_particles, dim, iters, rng, params):
    # global-best PSO with a params dict: velocities, personal bests by masks, the swarm's best
    pos = rng.uniform(-5, 5, (n_particles, dim))
    vel = np.zeros_like(pos)
    best_pos = pos.copy()
    best_val = objective(pos)
    g = best_pos[np.argmin(best_val)].copy()
    for _ in range(iters):
        r1, r2 = rng.random((2, n_particles, dim))
        vel = params["w"] * vel + params["c1"] * r1 * (best_pos - pos) + params["c2"] * r2 * (g - pos)
        pos += vel
        val = objective(pos)
        better = val < best_val
        best_pos[better] = pos[better]
        best_val[better] = val[better]
        g = best_pos[np.argmin(best_val)].copy()
    return g, best_val.min(), best_val


@program((_g.random((9, 2)),), (np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]]),))
def two_opt_tour_improvement(cities):
    # nearest-neighbour tour, then 2-opt reversals of segments (written back through a slice) until none helps
    n = len(cities)
    D = np.linalg.norm(cities[:, None] - cities[None], axis=-1)
    tour = [0]
    seen = np.zeros(n, dtype=bool)
    seen[0] = True
    for _ in range(n - 1):
        d = np.where(seen, np.inf, D[tour[-1]])
        nxt = int(np.argmin(d))
        tour.append(nxt)
        seen[nxt] = True
    tour = np.array(tour)
    improved = True
    passes = 0
    while improved:
        improved = False
        passes += 1
        for i in range(1, n - 1):
            for j in range(i + 1, n):
                a, b, c, d = tour[i - 1], tour[i], tour[j], tour[(j + 1) % n]
                if D[a, c] + D[b, d] < D[a, b] + D[c, d] - 1e-12:
                    tour[i:j + 1] = tour[i:j + 1][::-1]
                    improved = True
    return tour, D[tour, np.roll(tour, -1)].sum(), passes


# ----------------------------------------------------------------------------- cellular automata

_TURN = np.array([[0, -1], [1, 0]])   # 90 degrees counter-clockwise


@program((np.zeros((7, 7), dtype=u8), 60), (np.eye(5, dtype=u8), 25))
def langtons_ant_in_place(board, steps):
    # the ant turns right on white, left on black, flips the cell (the argument, in place) and moves
    h, w = board.shape
    pos = np.array([h // 2, w // 2])
    heading = np.array([-1, 0])
    for _ in range(steps):
        r, c = pos
        if board[r, c] == 0:
            heading = -(_TURN @ heading)
        else:
            heading = _TURN @ heading
        board[r, c] ^= 1
        pos = (pos + heading) % (h, w)
    return pos, heading, int(board.sum())


@program(((_g.random((8, 8)) < 0.5).astype(np.int8), 0.05, 0.001, 4, np.random.default_rng(11)),
         (np.ones((4, 5), dtype=np.int8), 0.0, 0.5, 2, np.random.default_rng(12)))
def forest_fire_model(state, p_grow, p_lightning, steps, rng):
    # 0 empty, 1 tree, 2 burning: fire spreads to 4-neighbours (padded slices), lightning, regrowth
    s = state.copy()
    burnt = []
    for _ in range(steps):
        fire = np.pad(s == 2, 1)
        neigh = fire[:-2, 1:-1] | fire[2:, 1:-1] | fire[1:-1, :-2] | fire[1:-1, 2:]
        u = rng.random(s.shape)
        new = s.copy()
        new[s == 2] = 0
        ignite = (s == 1) & (neigh | (u < p_lightning))
        new[ignite] = 2
        new[(s == 0) & (u < p_grow)] = 1
        burnt.append(int(ignite.sum()))
        s = new
    return s, burnt, np.bincount(s.ravel(), minlength=3)


# (every program ran on cpp, cpp-dynamic, eager and aot_eager when written; a few keep C++ in the budget)
_CPP = ("lattice_boltzmann_d2q9_bgk", "fnv1a_ngram_hashing_trick")
test_program = program_test({k: PROGRAMS[k] for k in _CPP}, ["cpp"])
test_program_eager = program_test(PROGRAMS, ["eager", "aot_eager"], share=4)


# ----------------------------------------------------------------------------- gradients

GRADS: dict = {}


def grad_program(seed, make_args, argnums=0, has_aux=False, rtol=1e-5):
    def register(fn):
        GRADS[fn.__name__] = (fn, make_args(np.random.default_rng(seed)), argnums, has_aux, rtol)
        return fn
    return register


@grad_program(1511, lambda r: ({"w0": np.array(0.1), "w": r.standard_normal(5) * 0.3, "V": r.standard_normal((5, 3)) * 0.3},
                               r.standard_normal((8, 5)), r.standard_normal(8), 0.01))
def factorisation_machine_mse(params, X, y, lam):
    # Rendle's O(kn) pairwise term: 0.5 * sum((XV)^2 - X^2 V^2), squared error plus L2 on a dict of params
    XV = X @ params["V"]
    pair = 0.5 * np.sum(XV ** 2 - (X ** 2) @ (params["V"] ** 2), axis=1)
    pred = params["w0"] + X @ params["w"] + pair
    reg = lam * (np.sum(params["w"] ** 2) + np.sum(params["V"] ** 2))
    return np.mean((pred - y) ** 2) + reg


@grad_program(1512, lambda r: (r.standard_normal(3) * 0.5, r.standard_normal((10, 3)), r.exponential(1, 10),
                               (r.random(10) < 0.7).astype(f64)))
def cox_partial_likelihood(beta, X, times, events):
    # Breslow partial likelihood: risk sets by sorting on time descending and a running log-sum-exp
    order = np.argsort(-times, kind="stable")
    eta = X[order] @ beta
    m = eta.max()
    log_risk = np.log(np.cumsum(np.exp(eta - m))) + m
    return -np.sum(events[order] * (eta - log_risk)) / events.sum()


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


@grad_program(1513, lambda r: ((r.standard_normal(3) * 0.5, np.array([-1.0, 0.2, 1.1])), r.standard_normal((9, 3)),
                               r.integers(0, 4, 9)))
def ordinal_cumulative_logit(params, X, y):
    # proportional-odds model: P(y <= k) = sigmoid(theta_k - x.w), class probabilities by differences
    w, theta = params
    eta = X @ w
    cum = _sigmoid(theta[None, :] - eta[:, None])
    cum = np.hstack([np.zeros((len(y), 1)), cum, np.ones((len(y), 1))])
    probs = np.diff(cum, axis=1)
    return -np.mean(np.log(probs[np.arange(len(y)), y] + 1e-12))


@grad_program(1514, lambda r: (r.standard_normal((5, 2)), r.standard_normal((4, 2)) + 0.5, 0.5, 30), argnums=(0, 1))
def sinkhorn_entropic_ot(x, y, eps, iters):
    # squared-Euclidean cost, uniform marginals, log-domain Sinkhorn updates, transport cost of the plan
    C = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    log_a = np.full(len(x), -np.log(len(x)))
    log_b = np.full(len(y), -np.log(len(y)))
    f = np.zeros(len(x))
    g = np.zeros(len(y))
    for _ in range(iters):
        z = (g[None, :] - C) / eps + log_b[None, :]
        zm = z.max(axis=1, keepdims=True)
        f = -eps * (np.log(np.exp(z - zm).sum(axis=1)) + zm[:, 0])
        z = (f[:, None] - C) / eps + log_a[:, None]
        zm = z.max(axis=0, keepdims=True)
        g = -eps * (np.log(np.exp(z - zm).sum(axis=0)) + zm[0])
    P = np.exp((f[:, None] + g[None, :] - C) / eps + log_a[:, None] + log_b[None, :])
    return np.sum(P * C)


@grad_program(1515, lambda r: ([r.standard_normal((3, 2, 4)) * 0.4, r.standard_normal((3, 4, 4)) * 0.3],
                               r.standard_normal((2, 12)), r.standard_normal(12)))
def dilated_causal_conv_stack(kernels, x, target):
    # a WaveNet-style stack: left-padded causal convolutions with dilation 1 and 2 by shifted slices, tanh
    h = x
    for layer, (W, dil) in enumerate(zip(kernels, (1, 2))):
        k = W.shape[0]
        T = h.shape[1]
        padded = np.pad(h, ((0, 0), ((k - 1) * dil, 0)))
        out = sum(W[j].T @ padded[:, j * dil:j * dil + T] for j in range(k))
        h = np.tanh(out) + (h if h.shape[0] == out.shape[0] else 0.0)
    pred = h.mean(axis=0)
    return np.mean((pred - target) ** 2)


_SHARE = 3


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradient_program(name):
    """Each model on the tape and on the eager backend both ways; one in ``_SHARE`` one way on
    cpp too (chosen by name, the same every run)."""
    fn, args, argnums, has_aux, rtol = GRADS[name]
    crc = zlib.crc32(name.encode())
    backends = {"eager": ("compiled_fn", "in_compiled")}
    if crc % _SHARE == 1:
        backends["cpp"] = (("compiled_fn", "in_compiled")[crc // _SHARE % 2],)
    check_gradient_program(fn, args, argnums, has_aux, rtol, backends=backends)
