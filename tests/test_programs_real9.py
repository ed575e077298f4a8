"""A ninth set of real NumPy programs through kiln.compile, checked like
tests/test_programs.py (values, dtypes, shapes, exceptions, arguments after the call,
aliasing), in domains the earlier sets leave out: bioinformatics (k-mer counts of encoded
sequences, GC skew windows, edit distance by rows, reverse complement and translation),
astronomy (light-curve folding by np.digitize, sigma clipping by median and MAD),
chemistry (Lennard-Jones forces over np.triu_indices pairs), control (state-space
simulation with an early return, a Kalman filter by np.linalg.solve), operations research
(simplex pivots, greedy assignment by argmax, Dijkstra over a masked array), graphics
(Moller-Trumbore barycentrics, quaternion slerp to matrices and Euler angles), text and
data (bag of words, TF-IDF and cosine similarity; groupby on two keys with ufunc.at), time
series (autocorrelation by np.correlate, seasonal profiles by reshape, float32 rolling
windows by cumsum), a recommender (ALS sweeps), uint16 ADC codes by np.select, tariffs by
np.piecewise, and a float32 velocity Verlet with out= buffers and np.fill_diagonal. Every
program ran against NumPy on every backend (3.11 and 3.13) with the inputs below; the
differences found were speed (np.fill_diagonal/np.place on a temporary copied it first:
tests/lowering/test_inplace.py). All run on the eager backend (a share through aot), the
Verlet step and the ray batch on C++.
"""
from __future__ import annotations

import numpy as np

import kiln  # noqa: F401  (the harness compiles through it)
from tests.test_programs import program_registry, program_test

f32, f64, i8, i32, i64, u8, u16 = np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8, np.uint16

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)

_BASES = np.frombuffer(b"ACGT", dtype=np.uint8)


def _dna(rng, n):
    return _BASES[rng.integers(0, 4, n)]


_g = np.random.default_rng(901)


@program((_dna(_g, 60), 3), (np.frombuffer(b"ACGTNACGTA", u8).copy(), 2), (np.frombuffer(b"AC", u8).copy(), 3),
         (np.frombuffer(b"AAAA", u8).copy(), 1))
def kmer_counts_encoded(seq, k):
    lut = np.full(256, -1, dtype=np.int8)
    lut[[ord("A"), ord("C"), ord("G"), ord("T")]] = [0, 1, 2, 3]
    codes = lut[seq]
    if len(codes) < k:
        return np.zeros(4 ** k, dtype=np.int64), np.array([], dtype=np.int64), np.array([], dtype=np.int64)
    valid = codes >= 0
    win = np.lib.stride_tricks.sliding_window_view(codes.astype(np.int64), k)
    ok = np.lib.stride_tricks.sliding_window_view(valid, k).all(axis=1)
    powers = 4 ** np.arange(k - 1, -1, -1)
    idx = (win * powers).sum(axis=1)[ok]
    counts = np.bincount(idx, minlength=4 ** k)
    uniq, cnt = np.unique(idx, return_counts=True)
    top = uniq[np.argsort(-cnt, kind="stable")][:5]
    return counts, top, cnt.max(initial=0, keepdims=True)


_g = np.random.default_rng(902)


@program((_dna(_g, 50), 10, 5), (np.frombuffer(b"GGGCCCATAT", u8).copy(), 4, 2),
         (np.frombuffer(b"ATAT", u8).copy(), 4, 4), (np.frombuffer(b"AAA", u8).copy(), 5, 1))
def gc_content_and_skew_windows(seq, window, step):
    g = (seq == ord("G")).astype(np.int32)
    c = (seq == ord("C")) * 1
    cg = np.concatenate(([0], np.cumsum(g)))
    cc = np.concatenate(([0], np.cumsum(c)))
    starts = np.arange(0, len(seq) - window + 1, step)
    ng = cg[starts + window] - cg[starts]
    nc = cc[starts + window] - cc[starts]
    gc = (ng + nc) / window
    with np.errstate(invalid="ignore", divide="ignore"):
        skew = (ng - nc) / (ng + nc)
    cum_skew = np.cumsum(np.nan_to_num(skew))
    ori = int(np.argmin(cum_skew)) if cum_skew.size else -1
    return gc, skew, ori, gc.mean() if gc.size else np.nan


_g = np.random.default_rng(903)


@program((_dna(_g, 9), _dna(_g, 7)), (np.frombuffer(b"KITTEN", u8).copy(), np.frombuffer(b"SITTING", u8).copy()),
         (np.frombuffer(b"A", u8).copy(), np.frombuffer(b"", u8).copy()),
         (np.frombuffer(b"", u8).copy(), np.frombuffer(b"AC", u8).copy()))
def levenshtein_rows_min_accumulate(a, b):
    n = len(b)
    prev = np.arange(n + 1, dtype=np.int32)
    for i in range(1, len(a) + 1):
        sub = prev[:-1] + (b != a[i - 1])
        cur = np.empty_like(prev)
        cur[0] = i
        cur[1:] = np.minimum(sub, prev[1:] + 1)
        # insertions along the row: cur[j] = min(cur[j], cur[j-1] + 1) by a running minimum
        cur = np.minimum.accumulate(cur - np.arange(n + 1)) + np.arange(n + 1)
        prev = cur.astype(np.int32)
    return int(prev[-1]), prev


_COMP = np.zeros(256, np.uint8)


_COMP[list(b"ACGTN")] = list(b"TGCAN")


_CODON_AA = np.frombuffer(b"KNKNTTTTRSRSIIMIQHQHPPPPRRRRLLLLEDEDAAAAGGGGVVVV*Y*YSSSS*CWCLFLF", u8)


_g = np.random.default_rng(904)


@program((_dna(_g, 31),), (np.frombuffer(b"ATGTAA", u8).copy(),), (np.frombuffer(b"AT", u8).copy(),),
         (np.frombuffer(b"ATGNNNTAA", u8).copy(),))
def reverse_complement_and_translate(seq):
    rc = _COMP[seq[::-1]]
    lut = np.full(256, 255, np.uint8)
    lut[list(b"ACGT")] = [0, 1, 2, 3]
    frames = {}
    for strand, s in (("+", seq), ("-", rc)):
        for f in range(3):
            n = (len(s) - f) // 3
            cod = lut[s[f:f + 3 * n]].reshape(n, 3).astype(np.uint16)
            bad = (cod == 255).any(axis=1)
            idx = cod[:, 0] * 16 + cod[:, 1] * 4 + cod[:, 2]
            aa = np.where(bad, ord("X"), _CODON_AA[np.where(bad, 0, idx)])
            frames[strand + str(f)] = aa.tobytes().decode()
    longest = max(frames, key=lambda k: max((len(p) for p in frames[k].split("*")), default=0))
    return rc, frames, longest


_g = np.random.default_rng(905)


_t = np.sort(_g.uniform(0, 30, 80))


@program((_t, 1 + 0.1 * np.sin(2 * np.pi * _t / 2.5) + 0.01 * _g.standard_normal(80), 2.5, 10),
         (np.array([0.0, 1.0]), np.array([1.0, np.nan]), 1.0, 4), (np.array([0.3]), np.array([2.0]), 0.5, 3),
         (np.zeros(0), np.zeros(0), 1.0, 5))
def fold_and_bin_light_curve(t, flux, period, nbins):
    phase = np.mod(t - t[0] if t.size else t, period) / period
    good = np.isfinite(flux)
    edges = np.linspace(0.0, 1.0, nbins + 1)
    which = np.digitize(phase[good], edges) - 1
    which = np.clip(which, 0, nbins - 1)
    n = np.bincount(which, minlength=nbins)
    s = np.bincount(which, weights=flux[good], minlength=nbins)
    s2 = np.bincount(which, weights=flux[good] ** 2, minlength=nbins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s / n
        std = np.sqrt(s2 / n - mean ** 2)
    centres = 0.5 * (edges[1:] + edges[:-1])
    depth = np.nanmax(mean) - np.nanmin(mean) if np.any(n) else 0.0
    return centres, mean, std, n, depth


_g = np.random.default_rng(907)


@program((np.r_[_g.normal(10, 1, 40), 30.0, -20.0], 3.0, 5), (np.array([1.0, 1.0, 1.0]), 2.0, 5),
         (np.array([1.0, np.nan, 100.0, 2.0, 1.5]), 1.0, 3), (np.array([5.0]), 3.0, 2))
def sigma_clip_median_mad_loop(x, nsigma, maxiter):
    mask = ~np.isfinite(x)
    history = []
    for it in range(maxiter):
        data = x[~mask]
        if data.size == 0:
            break
        med = np.median(data)
        mad = 1.4826 * np.median(np.abs(data - med))
        if mad == 0:
            break
        new = mask | (np.abs(x - med) > nsigma * mad)
        history.append((it, int(new.sum() - mask.sum())))
        if np.array_equal(new, mask):
            break
        mask = new
    clipped = np.ma.masked_array(x, mask=mask)
    return mask, history, float(clipped.mean()) if clipped.count() else None


_g = np.random.default_rng(908)


@program((_g.uniform(0, 4, (7, 3)), 1.0, 1.0, 2.5), (np.array([[0.0, 0, 0], [1.12, 0, 0]]), 1.0, 1.0, 2.5),
         (np.zeros((1, 3)), 1.0, 1.0, 2.5), (_g.uniform(0, 3, (5, 3)).astype(f32), 0.5, 1.0, 10.0))
def lennard_jones_triu_forces(pos, eps, sigma, rc):
    n = len(pos)
    i, j = np.triu_indices(n, k=1)
    d = pos[i] - pos[j]
    r2 = np.einsum("ij,ij->i", d, d)
    inside = r2 < rc * rc
    sr6 = (sigma * sigma / r2[inside]) ** 3
    e_pair = 4 * eps * (sr6 * sr6 - sr6)
    shift = 4 * eps * ((sigma / rc) ** 12 - (sigma / rc) ** 6)
    fmag = 24 * eps * (2 * sr6 * sr6 - sr6) / r2[inside]
    fvec = fmag[:, None] * d[inside]
    forces = np.zeros_like(pos)
    np.add.at(forces, i[inside], fvec)
    np.subtract.at(forces, j[inside], fvec)
    return (e_pair - shift).sum(), forces, np.sqrt(r2.min()) if r2.size else np.inf


_g = np.random.default_rng(910)


@program((np.array([[1.0, 0.1], [-0.2, 0.95]]), np.array([[0.0], [0.1]]), np.array([[1.0, 0.0]]),
          np.zeros(2), _g.standard_normal((20, 1))),
         (np.array([[1.5]]), np.array([[1.0]]), np.array([[2.0]]), np.ones(1), np.ones((40, 1))),
         (np.eye(2), np.ones((2, 1)), np.ones((1, 2)), np.zeros(2), np.zeros((0, 1))))
def discrete_state_space_simulate(A, B, C, x0, u):
    x = x0.astype(float)
    ys, xs = [], []
    for k in range(len(u)):
        xs.append(x.copy())
        ys.append(C @ x)
        x = A @ x + B @ u[k]
        if not np.all(np.isfinite(x)) or np.abs(x).max() > 1e6:
            return np.array(ys), k, "diverged"
    Y = np.array(ys).reshape(len(u), C.shape[0])
    eig = np.abs(np.linalg.eigvals(A))
    return Y, len(xs), "stable" if eig.max() < 1 else "marginal"


_g = np.random.default_rng(912)


@program((np.cumsum(_g.standard_normal((15, 2)), axis=0), 0.1, 0.5),
         (np.array([[1.0, 1.0], [np.nan, np.nan], [2.0, 2.5]]), 0.1, 0.5), (np.zeros((0, 2)), 1.0, 1.0))
def kalman_cv_2d_solve(z, dt, r):
    F = np.eye(4)
    F[0, 2] = F[1, 3] = dt
    H = np.zeros((2, 4))
    H[0, 0] = H[1, 1] = 1.0
    Q = 0.01 * np.eye(4)
    R = r * np.eye(2)
    x = np.zeros(4)
    P = np.eye(4) * 10.0
    xs = np.empty((len(z), 4))
    nis = []
    for k in range(len(z)):
        x = F @ x
        P = F @ P @ F.T + Q
        if np.isnan(z[k]).any():
            xs[k] = x
            continue
        y = z[k] - H @ x
        S = H @ P @ H.T + R
        K = np.linalg.solve(S, H @ P).T
        x = x + K @ y
        P = (np.eye(4) - K @ H) @ P
        nis.append(float(y @ np.linalg.solve(S, y)))
        xs[k] = x
    return xs, np.array(nis), np.trace(P)


@program((np.array([[1.0, 1, 1, 0, 4], [1, 3, 0, 1, 6], [-3, -2, 0, 0, 0]]), 20),
         (np.array([[1.0, -1, 1, 0, 1], [-1, 1, 0, 1, 1], [-1, -1, 0, 0, 0]]), 20),
         (np.array([[1.0, 1, 0, 2], [0, 0, 0, 0]]), 5))
def simplex_tableau_pivots(T, max_pivots):
    T = T.astype(float)
    m = T.shape[0] - 1
    basis = list(range(T.shape[1] - 1 - m, T.shape[1] - 1))
    for it in range(max_pivots):
        col = int(np.argmin(T[-1, :-1]))
        if T[-1, col] >= -1e-12:
            return "optimal", T[-1, -1], basis, it
        colv = T[:-1, col]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.where(colv > 1e-12, T[:-1, -1] / colv, np.inf)
        row = int(np.argmin(ratios))
        if not np.isfinite(ratios[row]):
            return "unbounded", np.inf, basis, it
        T[row] /= T[row, col]
        others = np.arange(m + 1) != row
        T[others] -= np.outer(T[others, col], T[row])
        basis[row] = col
    return "max_pivots", T[-1, -1], basis, max_pivots


_g = np.random.default_rng(913)


@program((_g.random((5, 4)),), (np.array([[1.0, 1.0], [1.0, 1.0]]),), (np.array([[np.nan, 2.0], [3.0, 1.0]]),),
         (np.zeros((0, 3)),))
def greedy_assignment_argmax(benefit):
    B = np.array(benefit, dtype=float, copy=True)
    B[np.isnan(B)] = -np.inf
    n_r, n_c = B.shape
    pairs = []
    total = 0.0
    for _ in range(min(n_r, n_c)):
        flat = np.argmax(B)
        r, c = np.unravel_index(flat, B.shape)
        if B[r, c] == -np.inf:
            break
        pairs.append((int(r), int(c)))
        total += B[r, c]
        B[r, :] = -np.inf
        B[:, c] = -np.inf
    assign = np.full(n_r, -1)
    for r, c in pairs:
        assign[r] = c
    return assign, total, len(pairs)


_g = np.random.default_rng(914)


def _wmat(n, p, seed):
    g = np.random.default_rng(seed)
    W = np.where(g.random((n, n)) < p, g.uniform(1, 10, (n, n)), np.inf)
    np.fill_diagonal(W, 0)
    return W


@program((_wmat(7, 0.4, 1), 0), (_wmat(5, 0.0, 2), 2), (np.zeros((1, 1)), 0))
def dijkstra_masked_argmin(W, src):
    n = len(W)
    dist = np.full(n, np.inf)
    prev = np.full(n, -1)
    dist[src] = 0.0
    done = np.zeros(n, dtype=bool)
    for _ in range(n):
        md = np.ma.masked_array(dist, mask=done)
        u = md.argmin()
        if done[u] or not np.isfinite(dist[u]):
            break
        done[u] = True
        alt = dist[u] + W[u]
        better = (alt < dist) & ~done
        dist[better] = alt[better]
        prev[better] = u
    return dist, prev, int(done.sum())


_g = np.random.default_rng(915)


@program((np.zeros(3), _g.standard_normal((8, 3)), np.array([[-1.0, -1, 3], [1, -1, 3], [0, 1, 3]])),
         (np.zeros(3, f32), np.array([[0, 0, 1.0]], f32), np.array([[-1.0, -1, 3], [1, -1, 3], [0, 1, 3]], f32)),
         (np.zeros(3), np.array([[1.0, 0, 0]]), np.array([[0.0, 0, 1], [1, 0, 1], [0, 1, 1]])))
def moller_trumbore_barycentric(origin, dirs, tri):
    v0, v1, v2 = tri
    e1, e2 = v1 - v0, v2 - v0
    p = np.cross(dirs, e2)
    det = p @ e1
    parallel = np.abs(det) < 1e-9
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / det
        s = origin - v0
        u = (p @ s) * inv
        q = np.cross(s, e1)
        v = (dirs @ q) * inv
        t = (q @ e2) * inv
    hit = ~parallel & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0)
    t = np.where(hit, t, np.inf)
    bary = np.stack([1 - u - v, u, v], axis=-1)
    bary[~hit] = np.nan
    pts = origin + dirs * np.where(hit, t, 0)[:, None]
    return hit, t, bary, pts


_g = np.random.default_rng(916)


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


@program((_unit(_g.standard_normal(4)), _unit(_g.standard_normal(4)), np.linspace(0, 1, 5)),
         (np.array([1.0, 0, 0, 0]), np.array([1.0, 0, 0, 0]), np.array([0.5])),
         (np.array([1.0, 0, 0, 0]), np.array([-1.0, 0, 0, 0]), np.array([0.0, 1.0])),
         (np.array([0.0, 1, 0, 0], f32), np.array([0.0, 0, 1, 0], f32), np.array([0.25], f32)))
def quaternion_slerp_to_matrix_euler(q0, q1, ts):
    dot = np.dot(q0, q1)
    if dot < 0:
        q1, dot = -q1, -dot
    dot = min(dot, 1.0)
    theta = np.arccos(dot)
    if theta < 1e-6:
        q = q0 + np.outer(ts, q1 - q0)
    else:
        s0 = np.sin((1 - ts) * theta) / np.sin(theta)
        s1 = np.sin(ts * theta) / np.sin(theta)
        q = s0[:, None] * q0 + s1[:, None] * q1
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    R = np.empty((len(ts), 3, 3), dtype=q.dtype)
    R[:, 0] = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], 1)
    R[:, 1] = np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], 1)
    R[:, 2] = np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], 1)
    yaw = np.arctan2(R[:, 1, 0], R[:, 0, 0])
    pitch = np.arcsin(np.clip(-R[:, 2, 0], -1, 1))
    roll = np.arctan2(R[:, 2, 1], R[:, 2, 2])
    orth = np.abs(np.einsum("nij,nkj->nik", R, R) - np.eye(3)).max()
    return q, R, np.degrees(np.stack([yaw, pitch, roll], 1)), orth < 1e-5


_g = np.random.default_rng(917)


@program((_g.integers(0, 12, 60), _g.integers(0, 5, 60)), (np.array([3, 3, 3]), np.array([0, 1, 2])),
         (np.array([7]), np.array([0])), (np.array([1, 2, 1, 2]), np.array([0, 0, 1, 1])))
def bow_tfidf_cosine_topk(token_ids, doc_ids):
    vocab, tok = np.unique(token_ids, return_inverse=True)
    docs, doc = np.unique(doc_ids, return_inverse=True)
    tf = np.zeros((len(docs), len(vocab)))
    np.add.at(tf, (doc, tok), 1)
    df = np.count_nonzero(tf, axis=0)
    idf = np.log((1 + len(docs)) / (1 + df)) + 1
    X = tf / tf.sum(axis=1, keepdims=True) * idf
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    X = np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)
    S = X @ X.T
    np.fill_diagonal(S, -1)
    best = S.argmax(axis=1)
    top_terms = vocab[np.argsort(-X, axis=1, kind="stable")[:, :3]]
    return np.round(S, 12), best, top_terms, idf.dtype


_g = np.random.default_rng(918)


@program((_g.integers(0, 4, 30).astype(np.int16), _g.integers(0, 3, 30).astype(u8),
          _g.gamma(2.0, 10.0, 30).astype(f32)),
         (np.array([5], np.int16), np.array([1], u8), np.array([np.nan], f32)),
         (np.zeros(0, np.int16), np.zeros(0, u8), np.zeros(0, f32)))
def groupby_two_keys_add_minimum_at(store, day, sales):
    keys = np.stack([store, day], axis=1)
    uk, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = inv.ravel()
    g = len(uk)
    total = np.zeros(g, dtype=np.float64)
    np.add.at(total, inv, sales)
    cnt = np.bincount(inv, minlength=g)
    lo = np.full(g, np.inf, dtype=np.float32)
    np.minimum.at(lo, inv, sales)
    hi = np.full(g, -np.inf, dtype=np.float32)
    np.fmax.at(hi, inv, sales)
    with np.errstate(invalid="ignore"):
        mean = total / cnt
    out = {"store": uk[:, 0], "day": uk[:, 1], "n": cnt, "sum": total, "mean": mean, "min": lo, "max": hi}
    return out, (cnt.argmax() if g else None)


_g = np.random.default_rng(919)


@program((np.sin(np.arange(40) * 0.6) + 0.1 * _g.standard_normal(40), 10), (np.ones(5, f32), 3),
         (np.array([1.0]), 0), (np.array([1.0, 2.0, np.nan, 4.0]), 2))
def autocorrelation_correlate_full(x, max_lag):
    x = np.asarray(x, dtype=float)
    xm = x - x.mean()
    full = np.correlate(xm, xm, mode="full")
    mid = len(x) - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        acf = full[mid:mid + max_lag + 1] / full[mid]
    crossing = np.flatnonzero(np.diff(np.sign(acf)) != 0)
    first_zero = int(crossing[0]) + 1 if crossing.size else None
    conf = 1.96 / np.sqrt(len(x))
    signif = np.abs(acf[1:]) > conf
    return acf, first_zero, signif


_g = np.random.default_rng(920)


@program((10 + np.arange(48) * 0.1 + np.tile(np.sin(np.arange(12)), 4) + 0.1 * _g.standard_normal(48), 12),
         (np.r_[np.arange(14.0), np.nan, 1.0, 2.0], 4), (np.arange(3.0), 4), (np.arange(6, dtype=f32), 3))
def seasonal_profile_by_reshape(y, period):
    n_full = len(y) // period
    if n_full < 2:
        raise ValueError(f"need at least two full periods, got {len(y)} samples for period {period}")
    Y = y[:n_full * period].reshape(n_full, period)
    season = np.nanmean(Y, axis=0)
    season -= season.mean()
    deseason = Y - season
    t = np.arange(n_full * period, dtype=float)
    ok = np.isfinite(deseason.ravel())
    slope, icept = np.polyfit(t[ok], deseason.ravel()[ok], 1)
    trend = icept + slope * t
    resid = deseason.ravel() - trend
    return season, slope, np.nanstd(resid), resid.reshape(Y.shape)


_g = np.random.default_rng(921)


@program((_g.standard_normal(30).astype(f32), 5), (np.array([1.0, 2.0, 3.0], f32), 3), (np.ones(2, f32), 3),
         (np.array([1e8, 1.0, -1e8, 1.0], f32), 2))
def rolling_window_cumsum_float32(x, w):
    if len(x) < w:
        return np.full(len(x), np.nan, dtype=x.dtype), None
    c = np.cumsum(x, dtype=np.float64)
    c = np.concatenate(([0.0], c))
    s = (c[w:] - c[:-w]).astype(np.float32)
    c2 = np.concatenate(([0.0], np.cumsum(np.square(x, dtype=np.float64))))
    var = (c2[w:] - c2[:-w]) / w - (s.astype(np.float64) / w) ** 2
    out = np.full(len(x), np.nan, dtype=np.float32)
    out[w - 1:] = s / np.float32(w)
    sd = np.sqrt(np.maximum(var, 0)).astype(x.dtype)
    z = np.zeros_like(x)
    np.divide(x[w - 1:] - out[w - 1:], sd, out=z[w - 1:], where=sd > 0)
    return out, z


_g = np.random.default_rng(923)


def _ratings(n_u, n_i, p, seed):
    g = np.random.default_rng(seed)
    R = g.integers(1, 6, (n_u, n_i)).astype(float)
    return R, g.random((n_u, n_i)) < p


@program((*_ratings(6, 5, 0.6, 1), 2, 0.1, 3), (*_ratings(3, 3, 0.0, 2), 2, 0.5, 1),
         (np.array([[5.0, 1.0]]), np.array([[True, True]]), 1, 0.0, 2))
def als_matrix_factorisation(R, mask, k, lam, sweeps):
    n_u, n_i = R.shape
    rng = np.random.default_rng(0)
    U = 0.1 * rng.standard_normal((n_u, k))
    V = 0.1 * rng.standard_normal((n_i, k))
    eye = lam * np.eye(k)
    losses = []
    for _ in range(sweeps):
        for u in range(n_u):
            m = mask[u]
            Vm = V[m]
            U[u] = np.linalg.solve(Vm.T @ Vm + eye + 1e-9 * np.eye(k), Vm.T @ R[u, m])
        for i in range(n_i):
            m = mask[:, i]
            Um = U[m]
            V[i] = np.linalg.solve(Um.T @ Um + eye + 1e-9 * np.eye(k), Um.T @ R[m, i])
        err = np.where(mask, R - U @ V.T, 0.0)
        losses.append(float((err ** 2).sum() / max(mask.sum(), 1)))
    return U @ V.T, losses


_g = np.random.default_rng(924)


@program((_g.integers(0, 4096, 20).astype(u16), 0.5, -12.0), (np.array([0, 4095, 4096, 65535], u16), 1.0, 0.0),
         (np.zeros(0, u16), 1.0, 0.0))
def adc_uint16_calibration_select(raw, gain, offset):
    valid = raw < 4096
    counts = raw & 0x0FFF
    msb = (raw >> 11) & 1
    volts = counts.astype(np.float32) * np.float32(gain) + np.float32(offset)
    level = np.select([counts < 100, counts < 3000, counts >= 4000], ["low", "ok", "sat"], default="high")
    code = np.select([~valid, counts >= 4000], [np.int8(-1), np.int8(2)], default=np.int8(0))
    clipped = np.clip(volts, -10, 1000, out=np.empty_like(volts))
    return volts, level, code, msb.dtype, clipped, np.count_nonzero(~valid)


_g = np.random.default_rng(925)


@program((np.array([0.0, 50, 100, 250, 600, 1200, 5000]), 0.12), (np.array([np.nan, -5.0]), 0.1),
         (_g.uniform(0, 1000, 9).astype(f32), 0.2), (np.array(300.0), 0.1))
def electricity_tariff_piecewise(kwh, base_rate):
    kwh = np.asarray(kwh)
    bill = np.piecewise(
        kwh,
        [kwh <= 100, (kwh > 100) & (kwh <= 500), kwh > 500],
        [lambda e: e * base_rate,
         lambda e: 100 * base_rate + (e - 100) * base_rate * 1.5,
         lambda e: 100 * base_rate + 400 * base_rate * 1.5 + (e - 500) * base_rate * 2.5,
         np.nan])
    band = np.where(kwh <= 100, 1, np.where(kwh <= 500, 2, 3))
    surcharge = np.where(np.isnan(bill), 0.0, np.maximum(bill * 0.05, 1.0))
    return bill, band, bill + surcharge


_g = np.random.default_rng(927)


@program((_g.uniform(0, 3, (6, 3)).astype(f32), np.zeros((6, 3), f32), 0.005, 4),
         (np.array([[0, 0, 0], [1.5, 0, 0]], f32), np.array([[0.1, 0, 0], [-0.1, 0, 0]], f32), 0.01, 3))
def velocity_verlet_out_buffers_float32(pos, vel, dt, steps):
    n = len(pos)
    acc = np.zeros_like(pos)
    tmp = np.empty_like(pos)
    diff = np.empty((n, n, 3), dtype=pos.dtype)
    energies = []

    def accel(p, out):
        np.subtract(p[:, None, :], p[None, :, :], out=diff)
        r2 = np.einsum("ijk,ijk->ij", diff, diff) + np.float32(0.01)
        inv3 = r2 ** np.float32(-1.5)
        np.fill_diagonal(inv3, 0)
        np.einsum("ij,ijk->ik", -inv3, diff, out=out)
        return r2

    accel(pos, acc)
    for _ in range(steps):
        np.multiply(acc, 0.5 * dt, out=tmp)
        vel += tmp
        pos += vel * np.float32(dt)
        accel(pos, acc)
        np.multiply(acc, 0.5 * dt, out=tmp)
        vel += tmp
        ke = 0.5 * np.sum(vel * vel)
        energies.append(ke)
    return np.array(energies), pos.dtype, acc


_g = np.random.default_rng(934)


@program((np.sort(_g.uniform(0, 24, 12)), _g.standard_normal(12)), (np.array([23.5, 0.5]), np.array([1.0, 3.0])),
         (np.array([6.0]), np.array([np.nan])))
def diurnal_profile_periodic_interp(hours, values):
    grid = np.arange(0, 24, 0.5)
    ok = ~np.isnan(values)
    if not ok.any():
        return grid, np.full(grid.shape, np.nan), 0
    prof = np.interp(grid, hours[ok], values[ok], period=24)
    hour_bin = np.floor(hours).astype(np.intp) % 24
    s = np.zeros(24)
    c = np.zeros(24, dtype=np.int64)
    np.add.at(s, hour_bin[ok], values[ok])
    np.add.at(c, hour_bin[ok], 1)
    hourly = np.divide(s, c, out=np.full(24, np.nan), where=c > 0)
    return grid, prof, hourly, int(np.nanargmax(hourly))


_g = np.random.default_rng(936)


@program((_g.integers(0, 2, (5, 12)).astype(np.int8),), (np.zeros((2, 3), np.int8),), (np.ones((1, 1), np.int8),))
def jaccard_binary_int8_matrix(M):
    M = M.astype(bool)
    inter = M.astype(np.int32) @ M.T.astype(np.int32)
    sizes = M.sum(axis=1)
    union = sizes[:, None] + sizes[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        J = inter / union
    J[np.isnan(J)] = 1.0
    iu = np.triu_indices_from(J, k=1)
    pairs = J[iu]
    best = np.argsort(pairs, kind="stable")[::-1][:3]
    return J, np.stack(iu, axis=1)[best], pairs.mean() if pairs.size else np.nan


_CPP = ("velocity_verlet_out_buffers_float32", "moller_trumbore_barycentric")
test_program = program_test({k: (PROGRAMS[k][0], PROGRAMS[k][1][:1]) for k in _CPP}, ["cpp"])
test_program_eager = program_test(PROGRAMS, ["eager", "aot_eager"], share=4)


def test_properties_of_a_mask_selection_are_its_values():
    """``Vm = V[m]; Vm.T @ Vm`` (an ALS step): ``.T`` of a boolean-mask selection was taken
    for a method, and passing it to matmul broke the graph; ``.real``/``.imag`` the same."""
    def normal_equations(V, m, z):
        Vm = V[m]
        zm = z[m]
        return Vm.T @ Vm, Vm.T.sum(axis=1), zm.real * 2, zm.imag.sum()
    compiled = kiln.compile(normal_equations, backend="eager")
    g = np.random.default_rng(940)
    for n in (7, 4):
        V = g.random((n, 3))
        m = V[:, 0] > 0.4
        z = V[:, 1] + 1j * V[:, 2]
        assert repr(compiled(V, m, z)) == repr(normal_equations(V, m, z))
    assert kiln.explain(compiled)(V, m, z).graph_break_count == 0
