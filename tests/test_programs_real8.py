"""An eighth set of real NumPy programs through kiln.compile, checked like
tests/test_programs.py (values, dtypes, shapes, exceptions, arguments after the call,
aliasing): scripts and notebook functions as scientists and engineers write them, in
domains the earlier sets leave out or write differently: image processing by hand
(np.pad convolutions, Sobel directions, histogram equalisation, sliding-window
morphology, connected components by iterated neighbour minima), audio (framing,
windowing, rfft, mel filterbanks, resampling by np.interp), geospatial (destination
points and back bearings, polygon centroids, nearest stations), finance (portfolio risk by
einsum, OHLC bars by reduceat), statistics (bootstrap with a Generator, ranks with ties),
softmax cross-entropy and a heat stencil with out= buffers, with float32 and uint8
pipelines, int index arrays, bool masks and views. A cheap selection of the programs
written this round (the others ran against NumPy once and found nothing); all on the
eager backend (and a share through aot), the labelling sweep on C++.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import kiln  # noqa: F401  (the harness compiles through it)
from tests.test_programs import program_registry, program_test

f32, f64, i32, i64, u8, u16 = np.float32, np.float64, np.int32, np.int64, np.uint8, np.uint16

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)


# ----------------------------------------------------------------------------- images

_g = np.random.default_rng(801)


@program((_g.random((7, 9)).astype(f32),), (np.zeros((1, 1), f32),), (_g.random((4, 3)),),
         (np.array([[0, 10, 10], [0, 10, 10], [0, 10, 10]], u8),))
def sobel_directions_reflect_pad(img):
    img = img.astype(np.float32, copy=False)
    p = np.pad(img, 1, mode="reflect") if min(img.shape) > 1 else np.pad(img, 1, mode="edge")
    kx = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], dtype=np.float32)
    gx = np.zeros_like(img)
    gy = np.zeros_like(img)
    H, W = img.shape
    for i in range(3):
        for j in range(3):
            win = p[i:i + H, j:j + W]
            gx += kx[i, j] * win
            gy += kx.T[i, j] * win
    mag = np.hypot(gx, gy)
    ang = np.rad2deg(np.arctan2(gy, gx)) % 180
    direction = np.zeros(img.shape, dtype=np.uint8)
    direction[(ang >= 22.5) & (ang < 67.5)] = 45
    direction[(ang >= 67.5) & (ang < 112.5)] = 90
    direction[(ang >= 112.5) & (ang < 157.5)] = 135
    if mag.max() > 0:
        mag /= mag.max()
    return mag, direction, gx.dtype


_g = np.random.default_rng(802)


@program((_g.integers(40, 120, (6, 8)).astype(u8),), (np.full((3, 3), 7, u8),),
         (np.array([[0, 255]], u8),), (np.zeros((0, 4), u8),))
def histogram_equalize_u8_lut(img):
    if img.size == 0:
        return img.copy(), np.zeros(256, dtype=np.int64)
    hist = np.bincount(img.ravel(), minlength=256)
    cdf = hist.cumsum()
    cdf_m = np.ma.masked_equal(cdf, 0)
    nz = cdf[cdf > 0]
    cmin = nz[0]
    if cdf[-1] == cmin:        # a flat image: nothing to stretch
        return img.copy(), hist
    lut = np.round((cdf - cmin) * 255.0 / (cdf[-1] - cmin))
    lut = np.clip(lut, 0, 255).astype(np.uint8)
    out = lut[img]
    assert cdf_m.count() == np.count_nonzero(cdf)
    return out, np.bincount(out.ravel(), minlength=256)


_g = np.random.default_rng(803)


@program((_g.random((8, 9)) > 0.4, 3), (np.ones((1, 1), bool), 3), (_g.random((5, 5)) > 0.7, 1),
         (np.eye(5, dtype=bool), 5))
def morphology_open_close_windows(mask, k):
    r = k // 2
    padded_f = np.pad(mask, r, mode="constant", constant_values=False)
    padded_t = np.pad(mask, r, mode="constant", constant_values=True)
    eroded = sliding_window_view(padded_t, (k, k)).all(axis=(-2, -1))
    dilated = sliding_window_view(padded_f, (k, k)).any(axis=(-2, -1))
    opened = sliding_window_view(np.pad(eroded, r), (k, k)).any(axis=(-2, -1))
    closed = sliding_window_view(np.pad(dilated, r, constant_values=True), (k, k)).all(axis=(-2, -1))
    boundary = mask & ~eroded
    return eroded, dilated, opened, closed, int(boundary.sum())


_g = np.random.default_rng(804)


@program((_g.random((6, 7)) > 0.5,), (np.zeros((3, 3), bool),), (np.ones((1, 4), bool),),
         (np.array([[1, 0, 1], [0, 0, 0], [1, 1, 1]], bool),))
def connected_components_min_propagation(mask):
    H, W = mask.shape
    big = H * W + 1
    labels = np.where(mask, np.arange(1, H * W + 1).reshape(H, W), big)
    n_iter = 0
    while True:
        p = np.pad(labels, 1, constant_values=big)
        nb = np.minimum.reduce([p[1:-1, 1:-1], p[:-2, 1:-1], p[2:, 1:-1], p[1:-1, :-2], p[1:-1, 2:]])
        new = np.where(mask, nb, big)
        n_iter += 1
        if np.array_equal(new, labels):
            break
        labels = new
    labels[~mask] = 0
    uniq, relabeled = np.unique(labels, return_inverse=True)
    if uniq.size and uniq[0] == 0:
        n = uniq.size - 1
    else:
        relabeled = relabeled + 1
        n = uniq.size
    sizes = np.bincount(relabeled.ravel(), minlength=n + 1)[1:]
    return relabeled.reshape(H, W), n, sizes, n_iter


# ----------------------------------------------------------------------------- audio

def _hz_to_mel(f):
    return 2595.0 * np.log10(1.0 + f / 700.0)


def _mel_to_hz(m):
    return 700.0 * (10 ** (m / 2595.0) - 1.0)


_g = np.random.default_rng(805)


@program((_g.standard_normal(400).astype(f32), 8000, 64, 32, 10),
         (np.zeros(64, f32), 8000, 64, 32, 6),
         (_g.standard_normal(70), 16000, 64, 16, 8),
         (np.ones(10, f32), 8000, 64, 32, 4))
def log_mel_spectrogram(signal, sr, n_fft, hop, n_mels):
    if signal.size < n_fft:
        raise ValueError(f"signal of {signal.size} samples is shorter than n_fft={n_fft}")
    emphasized = np.append(signal[0], signal[1:] - 0.97 * signal[:-1])
    frames = sliding_window_view(emphasized, n_fft)[::hop]
    frames = frames * np.hanning(n_fft)
    power = (np.abs(np.fft.rfft(frames, n=n_fft)) ** 2) / n_fft
    mel_pts = np.linspace(_hz_to_mel(0.0), _hz_to_mel(sr / 2), n_mels + 2)
    bins = np.floor((n_fft + 1) * _mel_to_hz(mel_pts) / sr).astype(int)
    fbank = np.zeros((n_mels, n_fft // 2 + 1))
    for m in range(1, n_mels + 1):
        lo, c, hi = bins[m - 1], bins[m], bins[m + 1]
        for k in range(lo, c):
            fbank[m - 1, k] = (k - lo) / (c - lo)
        for k in range(c, hi):
            fbank[m - 1, k] = (hi - k) / (hi - c)
    feats = power @ fbank.T
    feats = np.where(feats == 0, np.finfo(float).eps, feats)
    logmel = 20 * np.log10(feats)
    logmel -= logmel.mean(axis=0, keepdims=True)
    return logmel.astype(np.float32), frames.shape


_g = np.random.default_rng(806)


@program((_g.uniform(-1, 1, 50).astype(f32), 44100, 16000),
         (np.array([0.5, -2.0, 1.0], f32), 8000, 22050),
         (np.zeros(0, f32), 8000, 16000),
         (np.array([1.5]), 8000, 16000))
def resample_by_interp_to_int16(x, sr_in, sr_out):
    n_out = int(round(len(x) * sr_out / sr_in))
    t_in = np.arange(len(x)) / sr_in
    t_out = np.arange(n_out) / sr_out
    if len(x) == 0:
        return np.zeros(0, dtype=np.int16), 0.0
    y = np.interp(t_out, t_in, x, left=0.0, right=x[-1])
    peak = np.max(np.abs(y)) if y.size else 0.0
    clipped = np.clip(y, -1.0, 1.0)
    pcm = np.rint(clipped * 32767).astype(np.int16)
    return pcm, float(peak)


# ----------------------------------------------------------------------------- geospatial

_g = np.random.default_rng(807)


@program((_g.uniform(-60, 60, 6), _g.uniform(-170, 170, 6), _g.uniform(0, 360, 6), _g.uniform(0, 2e6, 6)),
         (np.array([0.0]), np.array([179.5]), np.array([90.0]), np.array([200000.0])),
         (np.array([90.0, -90.0]), np.array([0.0, 0.0]), np.array([180.0, 0.0]), np.array([1000.0, 1000.0])),
         (np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0)))
def destination_point_and_back_bearing(lat, lon, bearing_deg, dist_m):
    R = 6371008.8
    phi1, lam1 = np.radians(lat), np.radians(lon)
    theta = np.deg2rad(bearing_deg)
    delta = dist_m / R
    phi2 = np.arcsin(np.sin(phi1) * np.cos(delta) + np.cos(phi1) * np.sin(delta) * np.cos(theta))
    lam2 = lam1 + np.arctan2(np.sin(theta) * np.sin(delta) * np.cos(phi1),
                             np.cos(delta) - np.sin(phi1) * np.sin(phi2))
    lon2 = (np.degrees(lam2) + 540) % 360 - 180
    y = np.sin(lam1 - lam2) * np.cos(phi1)
    x = np.cos(phi2) * np.sin(phi1) - np.sin(phi2) * np.cos(phi1) * np.cos(lam1 - lam2)
    back = (np.degrees(np.arctan2(y, x)) + 360.0) % 360.0
    return np.degrees(phi2), lon2, back


_g = np.random.default_rng(808)
_square = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0]])


@program(([_square * 3, np.array([[10.0, 10.0], [12.0, 10.0], [11.0, 13.0]])],),
         ([_square[::-1] + 5.0],),
         ([np.array([[0.0, 0.0], [1.0, 1.0]])],),
         ([],))
def polygon_areas_centroids_and_winding(polys):
    areas, cents, ccw = [], [], []
    for P in polys:
        x, y = P[:, 0], P[:, 1]
        xs, ys = np.roll(x, -1), np.roll(y, -1)
        cross = x * ys - xs * y
        a = 0.5 * cross.sum()
        if a == 0:
            raise ValueError(f"degenerate polygon with {len(P)} vertices")
        cx = ((x + xs) * cross).sum() / (6 * a)
        cy = ((y + ys) * cross).sum() / (6 * a)
        areas.append(abs(a))
        cents.append((cx, cy))
        ccw.append(bool(a > 0))
    return np.array(areas), np.array(cents).reshape(-1, 2), ccw


# ----------------------------------------------------------------------------- finance

_g = np.random.default_rng(811)


@program((_g.standard_normal((60, 4)) * 0.01, _g.dirichlet(np.ones(4), 5)),
         (_g.standard_normal((10, 3)) * 0.01, np.array([[1.0, 0.0, 0.0]])),
         (_g.standard_normal((10, 3)) * 0.01, np.array([[0.5, 0.6, 0.0]])))
def portfolio_risk_einsum(returns, weights):
    if not np.allclose(weights.sum(axis=1), 1.0):
        bad = np.flatnonzero(~np.isclose(weights.sum(axis=1), 1.0))
        raise ValueError(f"weights of portfolios {bad.tolist()} do not sum to 1")
    mu = returns.mean(axis=0)
    cov = np.cov(returns, rowvar=False)
    var = np.einsum("pi,ij,pj->p", weights, cov, weights)
    vol = np.sqrt(var * 252)
    marginal = weights @ cov
    contrib = weights * marginal / var[:, np.newaxis]
    sharpe = (weights @ mu) * 252 / vol
    best = int(np.argmax(sharpe))
    return vol, contrib, sharpe, best


# ----------------------------------------------------------------------------- statistics

_g = np.random.default_rng(812)


@program((_g.standard_normal(30), np.random.default_rng(5), 200),
         (np.array([1.0, 2.0]), np.random.default_rng(6), 10),
         (np.array([3.0]), np.random.default_rng(7), 5))
def bootstrap_mean_median_ci(x, rng, n_boot):
    n = x.size
    idx = rng.integers(0, n, size=(n_boot, n))
    samples = x[idx]
    means = samples.mean(axis=1)
    medians = np.median(samples, axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    se = means.std(ddof=1)
    bias = means.mean() - x.mean()
    return (lo, hi), se, bias, np.quantile(medians, [0.05, 0.95]), rng


_g = np.random.default_rng(814)


@program((_g.integers(0, 5, 12),), (np.array([2.5, np.nan, 1.0, 2.5]),), (np.array([7]),),
         (np.array([3.0, 3.0, 3.0]),))
def ranks_with_ties_argsort_twice(x):
    ordinal = np.argsort(np.argsort(x, kind="mergesort"), kind="mergesort") + 1
    uniq, inv, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    starts = ends - counts + 1
    average = ((starts + ends) / 2.0)[inv]
    dense = inv + 1
    minimum = starts[inv]
    pct = average / len(x)
    return ordinal, average, dense, minimum, pct


# ----------------------------------------------------------------------------- machine learning

_g = np.random.default_rng(821)


@program((_g.standard_normal((6, 4)).astype(f32), np.array([0, 3, 1, 1, 2, 0])),
         (np.array([[1000.0, 0.0], [-1000.0, 1000.0]]), np.array([1, 0])),
         (np.zeros((0, 3)), np.zeros(0, dtype=int)),
         (np.array([[0.0, 1.0]]), np.array([2])))
def softmax_cross_entropy_one_hot(logits, labels):
    n, k = logits.shape
    if labels.size and (labels.min() < 0 or labels.max() >= k):
        raise IndexError(f"labels must be in [0, {k}), got max {labels.max()}")
    onehot = np.zeros((n, k), dtype=logits.dtype)
    onehot[np.arange(n), labels] = 1
    m = logits.max(axis=1, keepdims=True) if n else np.zeros((0, 1), logits.dtype)
    lse = m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    logp = logits - lse
    nll = -(onehot * logp).sum(axis=1)
    picked = -np.take_along_axis(logp, labels[:, None], axis=1)[:, 0]
    probs = np.exp(logp)
    grad = (probs - onehot) / max(n, 1)
    return nll.mean() if n else 0.0, np.allclose(nll, picked), grad, probs.argmax(axis=1) == labels


# ----------------------------------------------------------------------------- physics

_g = np.random.default_rng(823)


@program((_g.random((6, 7)), 0.2, 5), (np.zeros((3, 3)), 0.25, 2), (_g.random((4, 4)).astype(f32), 0.1, 4),
         (np.ones((5, 5)), 0.3, 1))
def heat_equation_out_buffers(u0, alpha, n_steps):
    if alpha > 0.25:
        raise ValueError(f"unstable: alpha={alpha} > 0.25")
    u = u0.copy()
    nxt = np.empty_like(u)
    lap = np.empty_like(u[1:-1, 1:-1])
    for _ in range(n_steps):
        np.add(u[:-2, 1:-1], u[2:, 1:-1], out=lap)
        lap += u[1:-1, :-2]
        lap += u[1:-1, 2:]
        np.subtract(lap, 4 * u[1:-1, 1:-1], out=lap)
        np.copyto(nxt, u)
        np.multiply(lap, alpha, out=nxt[1:-1, 1:-1])
        nxt[1:-1, 1:-1] += u[1:-1, 1:-1]
        u, nxt = nxt, u
    return u, u.sum(), np.abs(u - u0).max()


# ----------------------------------------------------------------------------- more mixed dtypes

_g = np.random.default_rng(825)


@program((_g.uniform(40, 50, 7), _g.uniform(0, 10, 7), _g.uniform(40, 50, (4, 2))),
         (np.array([45.0]), np.array([5.0]), np.array([[45.0, 5.0], [46.0, 5.0]])),
         (np.zeros(0), np.zeros(0), np.array([[0.0, 0.0]])))
def nearest_station_haversine_out(lat, lon, stations):
    R = 6371.0
    lat_r = np.empty_like(lat)
    np.radians(lat, out=lat_r)
    lon_r = np.deg2rad(lon)
    st = np.radians(stations)
    dlat = st[np.newaxis, :, 0] - lat_r[:, np.newaxis]
    dlon = st[np.newaxis, :, 1] - lon_r[:, np.newaxis]
    a = np.sin(dlat / 2) ** 2 + np.cos(lat_r)[:, None] * np.cos(st[:, 0])[None, :] * np.sin(dlon / 2) ** 2
    d = 2 * R * np.arcsin(np.sqrt(np.clip(a, 0.0, 1.0, out=a)))
    idx = np.argmin(d, axis=1) if d.shape[0] else np.zeros(0, dtype=np.intp)
    dist = np.take_along_axis(d, idx[:, None], axis=1).ravel()
    counts = np.bincount(idx, minlength=len(stations))
    within = np.count_nonzero(dist < 50.0)
    return idx.astype(np.int32), np.round(dist, decimals=6), counts, within


_g = np.random.default_rng(826)


@program((np.sort(_g.integers(0, 600, 40)), 100 + np.cumsum(_g.standard_normal(40)), _g.integers(1, 50, 40), 60),
         (np.array([5, 5, 70]), np.array([1.0, 2.0, 3.0]), np.array([1, 1, 1]), 60),
         (np.array([10]), np.array([4.0]), np.array([7]), 60))
def ohlc_bars_reduceat(ts, price, volume, bar_seconds):
    bar = ts // bar_seconds
    starts = np.flatnonzero(np.r_[True, bar[1:] != bar[:-1]])
    o = price[starts]
    h = np.maximum.reduceat(price, starts)
    l = np.minimum.reduceat(price, starts)
    c = price[np.r_[starts[1:] - 1, len(price) - 1]]
    v = np.add.reduceat(volume, starts)
    vwap = np.add.reduceat(price * volume, starts) / v
    ret = np.diff(np.log(c), prepend=np.log(o[0]))
    return np.column_stack([o, h, l, c]), v, vwap, ret, bar[starts]


_CPP = ("connected_components_min_propagation",)
test_program = program_test({k: (PROGRAMS[k][0], PROGRAMS[k][1][:1]) for k in _CPP}, ["cpp"])
test_program_eager = program_test(PROGRAMS, ["eager", "aot_eager"], share=4)


def test_lists_of_arrays_are_their_stack():
    """NumPy makes an array of a list of arrays passed to a ufunc, a reduction, a scan or
    a function of ``a`` (``np.minimum.reduce([up, down, left, right])`` of a labelling
    sweep): capture gave the op the list, whose shape rule saw a sequence (a 0-d int64
    result on C++, axis=-1 counted on the list, NaN-reductions of the wrong values)."""
    def stats(x, y):
        pair = [x, y]
        return (np.sum((x, y), axis=-1), np.nanmax(pair, axis=0), np.var(a=pair, axis=-1),
                np.maximum.reduce(pair, axis=-1), np.exp(pair).shape, np.median(pair, axis=0),
                np.count_nonzero([x > 1, y > 1], axis=0), np.min([x[0], y[-1]]),
                np.cumsum(pair, axis=1), np.where([x > 0, y > 0], pair, 0.0))
    compiled = kiln.compile(stats, backend="eager")
    for x, y in ((np.array([1.0, np.nan, 3.0]), np.array([2.0, 5.0, -1.0])),
                 (np.array([0.5], f32), np.array([4.0], f32))):
        assert repr(compiled(x, y)) == repr(stats(x, y))
