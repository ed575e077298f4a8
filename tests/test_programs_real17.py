"""A seventeenth set of real NumPy programs through kiln.compile, checked like
tests/test_programs.py, in domains the earlier rounds left out: audio DSP (an MFCC
pipeline with a mel filterbank and a DCT-II by matrix, pitch by autocorrelation with a
parabolic peak, polyphase resampling, DTMF decoding by the Goertzel recurrence, mu-law
companding of int16 PCM to uint8 codes), image processing (Harris corners with 3x3
non-maximum suppression, greedy box NMS, local binary patterns on uint8, a bilinear
affine warp, two-pass connected components over a union-find array, JPEG-like 8x8 DCT
quantisation by reshape/transpose), geometry (winding numbers, triangle mesh quality
with np.add.at, de Casteljau Bezier curves and arc length), linear algebra by hand
(inverse iteration with Rayleigh quotients and a caught LinAlgError, Gauss-Jordan with
row swaps raising on a singular matrix, one GMRES cycle by Arnoldi), statistics (GARCH(1,1)
on a dataclass of parameters, Yule-Walker AR fits and forecasts, two-sided CUSUM with an
early return, a delete-one jackknife), epidemiology and ecology (Leslie matrices, a
SEIRV model with a dict of daily doses, Lotka-Volterra by RK4), simulation with a
Generator passed in (M/M/1 by Lindley's recursion, random-walk Metropolis), hashing and
graphs (MinHash with LSH bands on uint64, a Bloom filter object carried across calls,
PageRank with dangling nodes, Floyd-Warshall with next hops) and datetime64 business days.
Every program ran against NumPy on cpp, cpp-dynamic, eager and aot_eager (values, dtypes,
warnings, mutated arguments, object and Generator state). What was fixed: the SEIR
model's ``doses.get(step // steps_per_day, 0.0)``, in a loop going on in a resume function,
failed capture (KeyError 'rest(___stack0).start', an internal error; now a break, since the
key changes at every step: tests/capture/test_resume_iterations.py), and its
``out[step] = S, E, I, R, V`` of np.float64 values was a constant guarded by value, each new
value recompiling (made in the graph now: tests/capture/test_python_numbers.py): 1.07x
NumPy's time before, 1.03x after. Later the same stop (idioms3): np.stack([S, dt]) and
np.full((), s) of run-time floats stay in the graph, np.apply_along_axis is captured per
slice, bin() folds on constants and sets of known values iterate as Python's. Left:
datetime64 arrays, a set built from data, np.errstate blocks with warn/raise modes break
the graph (at NumPy's speed).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tests.test_programs import program_registry, program_test

f32, f64, i16, i32, i64, u8 = np.float32, np.float64, np.int16, np.int32, np.int64, np.uint8

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)

_g = np.random.default_rng(1701)


# ----------------------------------------------------------------------------- audio DSP

def _hz_to_mel(f):
    return 2595.0 * np.log10(1.0 + f / 700.0)


def _mel_to_hz(m):
    return 700.0 * (10.0 ** (m / 2595.0) - 1.0)


def _mel_filterbank(n_mels, n_fft, sr):
    # librosa-like triangular filters on the rfft bins, Slaney-free (peak 1)
    edges = _mel_to_hz(np.linspace(_hz_to_mel(0.0), _hz_to_mel(sr / 2), n_mels + 2))
    bins = np.fft.rfftfreq(n_fft, 1.0 / sr)
    fb = np.zeros((n_mels, bins.size))
    for m in range(n_mels):
        lo, mid, hi = edges[m], edges[m + 1], edges[m + 2]
        up = (bins - lo) / (mid - lo)
        down = (hi - bins) / (hi - mid)
        fb[m] = np.maximum(0.0, np.minimum(up, down))
    return fb


def _dct_ii_matrix(n_out, n_in):
    k = np.arange(n_out)[:, None]
    n = np.arange(n_in)[None, :]
    basis = np.cos(np.pi / n_in * (n + 0.5) * k) * np.sqrt(2.0 / n_in)
    basis[0] /= np.sqrt(2.0)
    return basis


@program((_g.standard_normal(400), 8000, 64, 32, 10, 6),
         (np.sin(np.arange(300) * 0.3) + 0.1 * _g.standard_normal(300), 8000, 64, 16, 8, 5))
def mfcc_pipeline(signal, sr, n_fft, hop, n_mels, n_mfcc):
    # pre-emphasis, framing by stride indices, Hamming window, power spectrum, mel, log, DCT-II
    emph = np.append(signal[0], signal[1:] - 0.97 * signal[:-1])
    n_frames = 1 + (emph.size - n_fft) // hop
    idx = np.arange(n_fft)[None, :] + hop * np.arange(n_frames)[:, None]
    frames = emph[idx] * np.hamming(n_fft)
    power = np.abs(np.fft.rfft(frames, n_fft)) ** 2 / n_fft
    mel = power @ _mel_filterbank(n_mels, n_fft, sr).T
    log_mel = np.log(np.maximum(mel, 1e-10))
    mfcc = log_mel @ _dct_ii_matrix(n_mfcc, n_mels).T
    mfcc -= mfcc.mean(axis=0)      # cepstral mean normalisation
    return {"mfcc": mfcc, "energy": power.sum(1), "frames": n_frames}


def _parabolic_peak(y, i):
    # vertex of the parabola through (i-1, i, i+1)
    a, b, c = y[i - 1], y[i], y[i + 1]
    denom = a - 2 * b + c
    if denom == 0:
        return float(i), b
    shift = 0.5 * (a - c) / denom
    return i + shift, b - 0.25 * (a - c) * shift


@program((np.sin(2 * np.pi * 220 * np.arange(512) / 8000) + 0.05 * _g.standard_normal(512), 8000, 80, 400),
         ((np.sin(2 * np.pi * 150 * np.arange(384) / 8000)).astype(f32), 8000, 60, 300),
         (np.zeros(256), 8000, 80, 400))
def pitch_by_autocorrelation(x, sr, fmin, fmax):
    # the normalised autocorrelation's highest peak in the lag range, refined parabolically
    x = x - x.mean()
    r = np.correlate(x, x, mode="full")[x.size - 1:]
    if r[0] <= 0:
        return None, 0.0
    r = r / r[0]
    lo, hi = int(sr // fmax), min(int(sr // fmin), r.size - 2)
    lag = lo + int(np.argmax(r[lo:hi]))
    true_lag, peak = _parabolic_peak(r, lag)
    return sr / true_lag, float(peak)


@program((_g.standard_normal(60), 3, 2, 12), (np.arange(40, dtype=f32), 2, 3, 8))
def polyphase_resample(x, up, down, taps_per_phase):
    # upfirdn by polyphase branches: a windowed-sinc lowpass split into `up` phases,
    # each phase filtering the input, interleaved and decimated by `down`
    n_taps = up * taps_per_phase
    t = np.arange(n_taps) - (n_taps - 1) / 2
    cutoff = 1.0 / max(up, down)
    h = cutoff * np.sinc(cutoff * t) * np.kaiser(n_taps, 5.0) * up
    phases = h.reshape(taps_per_phase, up).T           # phases[p] = h[p::up]
    n_out = x.size * up
    y = np.zeros(n_out, dtype=np.result_type(x, h))
    for p in range(up):
        y[p::up] = np.convolve(x, phases[p])[:x.size]
    return y[::down], h.sum()


@program((np.array([1, 9, 0], i64), 8000, np.array([697.0, 770.0, 852.0, 941.0]),
          np.array([1209.0, 1336.0, 1477.0]), 120),)
def dtmf_goertzel_decode(keys, sr, rows, cols, n):
    # synthesize each key's tone pair, then the Goertzel recurrence per candidate frequency
    pad = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9], [-1, 0, -2]])
    t = np.arange(n) / sr
    freqs = np.concatenate((rows, cols))
    coeff = 2 * np.cos(2 * np.pi * np.round(n * freqs / sr) / n)
    decoded = []
    for key in keys:
        r, c = np.argwhere(pad == key)[0]
        tone = np.sin(2 * np.pi * rows[r] * t) + np.sin(2 * np.pi * cols[c] * t)
        s1 = np.zeros_like(freqs)
        s2 = np.zeros_like(freqs)
        for sample in tone:
            s0 = sample + coeff * s1 - s2
            s2 = s1
            s1 = s0
        power = s1 ** 2 + s2 ** 2 - coeff * s1 * s2
        decoded.append(int(pad[np.argmax(power[:4]), np.argmax(power[4:])]))
    return decoded


@program((((_g.standard_normal(64) * 8000).astype(i16)), 0.9, 255),
         (np.array([-32768, -1, 0, 1, 32767, 1200], i16), 0.5, 255))
def mu_law_companding_int16(pcm, gain, mu):
    # int16 PCM -> float, gain with clipping back to int16, mu-law 8-bit codes and decode
    x = pcm.astype(np.float32) / 32768.0
    y = np.clip(x * gain, -1.0, 32767 / 32768)
    scaled = np.round(y * 32768.0).astype(np.int16)
    comp = np.sign(y) * np.log1p(mu * np.abs(y)) / np.log1p(mu)
    codes = ((comp + 1) / 2 * mu + 0.5).astype(np.uint8)
    back = 2 * codes.astype(np.float32) / mu - 1
    expanded = np.sign(back) * ((1 + mu) ** np.abs(back) - 1) / mu
    err = np.abs(expanded - y).max()
    return scaled, codes, expanded.dtype, err


# ----------------------------------------------------------------------------- image processing

@program((_g.random((9, 10)), 0.05, 1.0), (np.pad(np.ones((4, 4), f32), 3), 0.04, 0.5))
def harris_corners_nms(img, k, sigma):
    # Sobel gradients, Gaussian-weighted structure tensor by separable convolution,
    # Harris response and 3x3 non-maximum suppression by shifted maxima
    p = np.pad(img, 1, mode="edge")
    gx = (p[1:-1, 2:] - p[1:-1, :-2]) * 2 + p[:-2, 2:] - p[:-2, :-2] + p[2:, 2:] - p[2:, :-2]
    gy = (p[2:, 1:-1] - p[:-2, 1:-1]) * 2 + p[2:, :-2] - p[:-2, :-2] + p[2:, 2:] - p[:-2, 2:]
    r = np.arange(-2, 3)
    w = np.exp(-r ** 2 / (2 * sigma ** 2))
    w /= w.sum()

    def blur(a):
        a = np.apply_along_axis(lambda v: np.convolve(v, w, mode="same"), 0, a)
        return np.apply_along_axis(lambda v: np.convolve(v, w, mode="same"), 1, a)

    sxx, syy, sxy = blur(gx * gx), blur(gy * gy), blur(gx * gy)
    resp = sxx * syy - sxy ** 2 - k * (sxx + syy) ** 2
    padded = np.pad(resp, 1, mode="constant", constant_values=-np.inf)
    neigh = np.max(np.stack([padded[1 + dy:padded.shape[0] - 1 + dy, 1 + dx:padded.shape[1] - 1 + dx]
                             for dy in (-1, 0, 1) for dx in (-1, 0, 1)]), axis=0)
    peaks = (resp == neigh) & (resp > 0.01 * resp.max())
    ys, xs = np.nonzero(peaks)
    order = np.argsort(-resp[ys, xs], kind="stable")
    return np.stack([ys[order], xs[order]], axis=1), resp


@program((np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [21, 19, 29, 31], [0, 5, 10, 15]], f64),
          np.array([0.9, 0.8, 0.7, 0.95, 0.3]), 0.5),
         (np.array([[0, 0, 4, 4], [2, 2, 6, 6]], f32), np.array([0.5, 0.6], f32), 0.1))
def greedy_box_nms(boxes, scores, iou_threshold):
    # torchvision.ops.nms by hand: sort by score, keep the best, drop overlaps, repeat
    x1, y1, x2, y2 = boxes.T
    areas = (x2 - x1) * (y2 - y1)
    order = np.argsort(scores)[::-1]
    keep = []
    while order.size > 0:
        i = order[0]
        keep.append(int(i))
        xx1 = np.maximum(x1[i], x1[order[1:]])
        yy1 = np.maximum(y1[i], y1[order[1:]])
        xx2 = np.minimum(x2[i], x2[order[1:]])
        yy2 = np.minimum(y2[i], y2[order[1:]])
        inter = np.clip(xx2 - xx1, 0, None) * np.clip(yy2 - yy1, 0, None)
        iou = inter / (areas[i] + areas[order[1:]] - inter)
        order = order[1:][iou <= iou_threshold]
    return np.array(keep, dtype=np.int64), boxes[keep]


_LBP_OFFSETS = ((-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1))


@program((_g.integers(0, 256, (8, 9)).astype(u8),), (np.tile(np.arange(0, 250, 25, dtype=u8), (6, 1)),))
def local_binary_pattern_hist(img):
    # skimage's 'default' LBP on a uint8 image: 8 neighbours compared with the centre,
    # bits weighted by 2**k, then a normalised 256-bin histogram over the interior
    c = img[1:-1, 1:-1]
    h, w = c.shape
    codes = np.zeros((h, w), dtype=np.uint8)
    for bit, (dy, dx) in enumerate(_LBP_OFFSETS):
        neighbour = img[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]
        codes |= ((neighbour >= c).astype(np.uint8) << bit)
    hist = np.bincount(codes.ravel(), minlength=256).astype(np.float64)
    hist /= hist.sum()
    uniform = np.array([bin(v).count("1") for v in range(256)])
    return codes, hist, (hist * uniform).sum()


@program((_g.random((8, 8)) * 255, np.array([[1.05, 0.1, -0.5], [-0.08, 0.95, 0.7]])),
         (np.arange(30, dtype=f32).reshape(5, 6), np.array([[1.0, 0.0, 0.5], [0.0, 1.0, -0.25]], f32)))
def bilinear_affine_warp(img, M):
    # inverse-map every output pixel through a 2x3 affine, bilinear sample, zero outside
    h, w = img.shape
    ys, xs = np.mgrid[0:h, 0:w]
    src = np.stack([xs.ravel(), ys.ravel(), np.ones(h * w)]) .T @ M.T
    sx, sy = src[:, 0], src[:, 1]
    x0 = np.floor(sx).astype(np.int64)
    y0 = np.floor(sy).astype(np.int64)
    fx, fy = sx - x0, sy - y0
    inside = (x0 >= 0) & (y0 >= 0) & (x0 < w - 1) & (y0 < h - 1)
    x0c, y0c = np.clip(x0, 0, w - 2), np.clip(y0, 0, h - 2)
    top = img[y0c, x0c] * (1 - fx) + img[y0c, x0c + 1] * fx
    bot = img[y0c + 1, x0c] * (1 - fx) + img[y0c + 1, x0c + 1] * fx
    out = np.where(inside, top * (1 - fy) + bot * fy, 0.0)
    return out.reshape(h, w).astype(img.dtype), inside.sum()


def _find(parent, x):
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:             # path compression
        parent[x], x = root, parent[x]
    return root


@program(((_g.random((7, 8)) > 0.55),), (np.eye(5, dtype=bool) | np.eye(5, k=1, dtype=bool),))
def two_pass_connected_components(mask):
    # classic two-pass labelling, 4-connectivity, equivalences in a union-find array,
    # then labels made consecutive with np.unique(return_inverse)
    h, w = mask.shape
    labels = np.zeros((h, w), dtype=np.int64)
    parent = np.arange(h * w + 1)
    nxt = 1
    for y in range(h):
        for x in range(w):
            if not mask[y, x]:
                continue
            up = labels[y - 1, x] if y > 0 else 0
            left = labels[y, x - 1] if x > 0 else 0
            if up == 0 and left == 0:
                labels[y, x] = nxt
                nxt += 1
            elif up and left:
                a, b = _find(parent, up), _find(parent, left)
                labels[y, x] = min(a, b)
                parent[max(a, b)] = min(a, b)
            else:
                labels[y, x] = max(up, left)
    roots = np.array([_find(parent, v) for v in range(nxt)])
    final = roots[labels]
    _, compact = np.unique(final, return_inverse=True)
    compact = compact.reshape(h, w)
    sizes = np.bincount(compact.ravel())[1:]
    return compact, sizes


@program((_g.random((16, 16)).astype(f32) * 200, 4), (np.add.outer(np.arange(8.0), np.arange(8.0)), 8))
def dct_8x8_quantize(img, q):
    # JPEG-like: level shift, blockwise 2-D DCT by reshape/transpose and the DCT matrix,
    # uniform quantisation, dequantise and inverse; PSNR of the round trip
    n = 8
    C = _dct_ii_matrix(n, n).astype(img.dtype)
    h, w = img.shape
    blocks = (img - 128).reshape(h // n, n, w // n, n).transpose(0, 2, 1, 3)
    coef = C @ blocks @ C.T
    quant = np.round(coef / q).astype(np.int32)
    recon_blocks = C.T @ (quant * q).astype(img.dtype) @ C
    recon = recon_blocks.transpose(0, 2, 1, 3).reshape(h, w) + 128
    mse = np.mean((recon - img) ** 2)
    psnr = np.inf if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)
    return quant, recon, psnr, np.count_nonzero(quant)


# ----------------------------------------------------------------------------- geometry

@program((np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 3.0], [2.0, 5.0], [0.0, 3.0]]),
          np.array([[1.0, 1.0], [5.0, 1.0], [2.0, 4.9], [-1.0, 2.0], [4.0, 1.5]])),
         (np.array([[0, 0], [3, 0], [0, 3]], f32), np.array([[1, 1], [2, 2], [0.5, 0.5]], f32)))
def winding_number_point_in_polygon(poly, pts):
    # Sunday's winding number, vectorised over points, looped over edges
    wn = np.zeros(len(pts), dtype=np.int64)
    px, py = pts[:, 0], pts[:, 1]
    n = len(poly)
    for i in range(n):
        (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % n]
        is_left = (x1 - x0) * (py - y0) - (px - x0) * (y1 - y0)
        up = (y0 <= py) & (y1 > py) & (is_left > 0)
        down = (y0 > py) & (y1 <= py) & (is_left < 0)
        wn += up.astype(np.int64) - down
    return wn != 0, wn


@program((_g.random((12, 2)), np.array([[0, 1, 2], [2, 3, 4], [5, 6, 7], [8, 9, 10], [9, 10, 11]])),
         (np.array([[0, 0], [1, 0], [0, 1], [1, 1]], f32), np.array([[0, 1, 2], [1, 3, 2]])))
def triangle_mesh_areas_and_quality(verts, tris):
    # signed areas by the 2-D cross product, edge lengths by fancy indexing, the
    # radius-ratio quality, and each vertex's share of area scattered by np.add.at
    a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    ab, ac = b - a, c - a
    signed = 0.5 * (ab[:, 0] * ac[:, 1] - ab[:, 1] * ac[:, 0])
    area = np.abs(signed)
    edges = np.stack([np.linalg.norm(b - c, axis=1), np.linalg.norm(c - a, axis=1),
                      np.linalg.norm(a - b, axis=1)], axis=1)
    s = edges.sum(1) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        inradius = area / s
        circumradius = edges.prod(1) / (4 * area)
        quality = 2 * inradius / circumradius
    vertex_area = np.zeros(len(verts), dtype=verts.dtype)
    np.add.at(vertex_area, tris.ravel(), np.repeat(area / 3, 3))
    return signed, quality, vertex_area, np.sign(signed).astype(np.int8)


@program((np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 3.0], [4.0, 0.0]]), 8),
         (np.array([[0, 0], [1, 1], [2, 0]], f32), 4))
def bezier_de_casteljau_arclength(ctrl, n):
    # evaluate a Bezier curve by de Casteljau at n+1 parameters (all at once), its
    # derivative by the hodograph, and the arc length by the trapezoid rule
    t = np.linspace(0, 1, n + 1, dtype=ctrl.dtype)[:, None, None]
    pts = np.broadcast_to(ctrl, (n + 1,) + ctrl.shape).copy()
    while pts.shape[1] > 1:
        pts = (1 - t) * pts[:, :-1] + t * pts[:, 1:]
    curve = pts[:, 0]
    deg = len(ctrl) - 1
    hodo = deg * np.diff(ctrl, axis=0)
    q = np.broadcast_to(hodo, (n + 1,) + hodo.shape).copy()
    while q.shape[1] > 1:
        q = (1 - t) * q[:, :-1] + t * q[:, 1:]
    speed = np.linalg.norm(q[:, 0], axis=1)
    length = np.trapezoid(speed, dx=1.0 / n) if hasattr(np, "trapezoid") else np.trapz(speed, dx=1.0 / n)
    return curve, speed, length


# ----------------------------------------------------------------------------- linear algebra by hand

@program((np.array([[4.0, 1, 0], [1, 3, 1], [0, 1, 2]]), 2.5, 50),
         (np.diag([1.0, 5.0, 9.0, 12.0]) + 0.1, 8.8, 30))
def inverse_iteration_rayleigh(A, shift, iters):
    # the eigenpair nearest the shift by inverse iteration, then Rayleigh-quotient refinement
    n = A.shape[0]
    v = np.ones(n) / np.sqrt(n)
    mu = shift
    history = []
    for it in range(iters):
        try:
            w = np.linalg.solve(A - mu * np.eye(n), v)
        except np.linalg.LinAlgError:
            break                             # the shift hit an eigenvalue exactly
        v_new = w / np.linalg.norm(w)
        if v_new @ v < 0:
            v_new = -v_new
        mu_new = v_new @ A @ v_new
        history.append(mu_new)
        done = abs(mu_new - mu) < 1e-13 * abs(mu_new)
        v, mu = v_new, (mu_new if it >= 2 else shift)
        if done and it >= 2:
            break
    residual = np.linalg.norm(A @ v - mu * v)
    return mu, v, residual < 1e-8, len(history)


@program((np.array([[2.0, 1, 1], [1, 3, 2], [1, 0, 0]]),), (np.array([[1.0, 2], [2, 4]]),),
         (np.array([[0.0, 2, 1], [1, 0, 0], [3, 1, 2]], f32),))
def gauss_jordan_inverse(A):
    # augmented [A | I], partial pivoting with row swaps by fancy indexing, raises on singular
    n = A.shape[0]
    M = np.hstack([A.astype(np.float64), np.eye(n)])
    for col in range(n):
        piv = col + np.argmax(np.abs(M[col:, col]))
        if abs(M[piv, col]) < 1e-12:
            raise np.linalg.LinAlgError(f"singular matrix at column {col}")
        if piv != col:
            M[[col, piv]] = M[[piv, col]]
        M[col] /= M[col, col]
        others = np.arange(n) != col
        M[others] -= np.outer(M[others, col], M[col])
    return M[:, n:], np.abs(A @ M[:, n:] - np.eye(n)).max() < 1e-10


@program((np.diag([4.0, 3, 2, 1, 0.5]) + np.triu(np.full((5, 5), 0.2), 1), np.ones(5), 4),
         (np.array([[2.0, -1, 0, 0], [-1, 2, -1, 0], [0, -1, 2, -1], [0, 0, -1, 2]]), np.arange(1.0, 5), 4))
def gmres_by_arnoldi(A, b, m):
    # one GMRES cycle: Arnoldi with modified Gram-Schmidt, then the small least squares
    n = b.size
    Q = np.zeros((n, m + 1))
    H = np.zeros((m + 1, m))
    beta = np.linalg.norm(b)
    Q[:, 0] = b / beta
    k_used = m
    for k in range(m):
        v = A @ Q[:, k]
        for j in range(k + 1):
            H[j, k] = Q[:, j] @ v
            v -= H[j, k] * Q[:, j]
        H[k + 1, k] = np.linalg.norm(v)
        if H[k + 1, k] < 1e-12:          # happy breakdown: the Krylov space is invariant
            k_used = k + 1
            break
        Q[:, k + 1] = v / H[k + 1, k]
    e1 = np.zeros(k_used + 1)
    e1[0] = beta
    y, *_ = np.linalg.lstsq(H[:k_used + 1, :k_used], e1, rcond=None)
    x = Q[:, :k_used] @ y
    return x, np.linalg.norm(b - A @ x), k_used


# ----------------------------------------------------------------------------- statistics and time series

@dataclass
class GarchParams:
    omega: float
    alpha: float
    beta: float


@program((_g.standard_normal(80) * 0.01, GarchParams(1e-6, 0.08, 0.9)),
         (np.array([0.01, -0.02, 0.015, 0.0, -0.03], f32), GarchParams(2e-6, 0.1, 0.85)))
def garch11_filter_loglik(returns, p):
    # GARCH(1,1) conditional variances by the recursion, Gaussian log-likelihood,
    # standardised residuals and the one-step forecast
    if p.alpha + p.beta >= 1:
        raise ValueError("the process is not covariance stationary")
    n = returns.size
    var = np.empty(n, dtype=np.float64)
    var[0] = returns.var()
    for t in range(1, n):
        var[t] = p.omega + p.alpha * returns[t - 1] ** 2 + p.beta * var[t - 1]
    ll = -0.5 * np.sum(np.log(2 * np.pi) + np.log(var) + returns ** 2 / var)
    z = returns / np.sqrt(var)
    forecast = p.omega + p.alpha * returns[-1] ** 2 + p.beta * var[-1]
    return var, ll, z, forecast


@program((np.cumsum(_g.standard_normal(100)) * 0.1 + _g.standard_normal(100), 3, 5),
         (np.sin(np.arange(60) / 3.0).astype(f32), 2, 4))
def yule_walker_ar_forecast(x, order, horizon):
    # statsmodels' yule_walker (biased autocovariances), Toeplitz by |i - j| indexing,
    # the innovation variance, then an iterated forecast
    xc = x - x.mean()
    n = xc.size
    acov = np.array([xc[:n - k] @ xc[k:] / n for k in range(order + 1)])
    R = acov[np.abs(np.subtract.outer(np.arange(order), np.arange(order)))]
    phi = np.linalg.solve(R, acov[1:])
    sigma2 = acov[0] - phi @ acov[1:]
    hist = list(xc[-order:][::-1])
    preds = []
    for _ in range(horizon):
        nxt = float(np.dot(phi, hist[:order]))
        preds.append(nxt)
        hist.insert(0, nxt)
    return phi, sigma2, np.array(preds) + x.mean()


@program((np.concatenate([_g.standard_normal(40), _g.standard_normal(30) + 2.0]), 0.5, 4.0),
         (np.zeros(10, f32), 0.5, 4.0))
def cusum_change_detection(x, drift, threshold):
    # two-sided Page CUSUM on standardised data; the first alarm index and the
    # change-point estimate (the last time the statistic was zero), else -1
    mu, sd = x[:20].mean(), x[:20].std()
    z = (x - mu) / sd if sd > 0 else x - mu
    gp = gn = 0.0
    start_p = start_n = 0
    pos = np.zeros_like(z)
    for i in range(z.size):
        gp = max(0.0, gp + z[i] - drift)
        gn = max(0.0, gn - z[i] - drift)
        if gp == 0:
            start_p = i + 1
        if gn == 0:
            start_n = i + 1
        pos[i] = gp
        if gp > threshold or gn > threshold:
            return i, (start_p if gp > threshold else start_n), pos[:i + 1]
    return -1, -1, pos


@program((_g.exponential(2.0, 25), _g.random(25) + 0.5),
         (np.array([1.0, 2.0, 3.0, 4.0], f32), np.array([1.0, 1.0, 2.0, 2.0], f32)))
def jackknife_ratio_estimator(y, x):
    # delete-one jackknife of a survey ratio estimator: bias correction and the standard error
    n = y.size
    ratio = y.sum() / x.sum()
    keep = ~np.eye(n, dtype=bool)
    loo = np.array([y[k].sum() / x[k].sum() for k in keep])
    mean_loo = loo.mean()
    bias = (n - 1) * (mean_loo - ratio)
    se = np.sqrt((n - 1) / n * np.sum((loo - mean_loo) ** 2))
    pseudo = n * ratio - (n - 1) * loo
    return {"ratio": ratio, "corrected": ratio - bias, "se": se, "pseudo": pseudo}


# ----------------------------------------------------------------------------- epidemiology and ecology

@program((np.array([0.0, 1.5, 0.8, 0.2]), np.array([0.5, 0.7, 0.8, 0.6]), np.array([1000.0, 800, 600, 400]), 25),
         (np.array([0.0, 2.0, 0.3], f32), np.array([0.6, 0.9, 0.5], f32), np.array([50.0, 40, 10], f32), 10))
def leslie_matrix_projection(fecundity, survival, n0, years):
    # a Leslie matrix from age-class rates, projected population, the dominant
    # eigenvalue (growth rate) and stable age distribution by power iteration
    k = fecundity.size
    L = np.zeros((k, k), dtype=fecundity.dtype)
    L[0] = fecundity
    L[np.arange(1, k), np.arange(k - 1)] = survival[:k - 1]
    L[-1, -1] = survival[-1]                     # the last class persists
    traj = np.empty((years + 1, k), dtype=n0.dtype)
    traj[0] = n0
    for t in range(years):
        traj[t + 1] = L @ traj[t]
    v = np.ones(k, dtype=L.dtype) / k
    lam = 0.0
    for _ in range(200):
        w = L @ v
        lam_new = w.sum() / v.sum()
        v = w / w.sum()
        if abs(lam_new - lam) < 1e-12:
            break
        lam = lam_new
    return traj, lam_new, v, traj.sum(1)


@program(({"beta": 0.4, "sigma": 0.2, "gamma": 0.1, "eff": 0.9}, np.array([990.0, 0, 10, 0, 0]),
          {10: 5.0, 20: 20.0, 30: 20.0}, 60, 0.5),
         ({"beta": 0.3, "sigma": 0.25, "gamma": 0.2, "eff": 0.6}, np.array([500.0, 5, 5, 0, 0]), {}, 20, 1.0))
def seir_vaccination_schedule(params, y0, doses_by_day, days, dt):
    # SEIRV by forward Euler with a daily dose schedule (a dict of day -> doses),
    # doses capped by the susceptibles left; the peak and its day
    S, E, I, R, V = y0.astype(np.float64)
    N = y0.sum()
    out = np.empty((int(days / dt) + 1, 5))
    out[0] = y0
    steps_per_day = int(round(1 / dt))
    for step in range(1, out.shape[0]):
        inf = params["beta"] * S * I / N
        dS, dE = -inf, inf - params["sigma"] * E
        dI, dR = params["sigma"] * E - params["gamma"] * I, params["gamma"] * I
        S, E, I, R = S + dt * dS, E + dt * dE, I + dt * dI, R + dt * dR
        if step % steps_per_day == 0:
            doses = min(doses_by_day.get(step // steps_per_day, 0.0), S)
            S -= params["eff"] * doses
            V += params["eff"] * doses
        out[step] = S, E, I, R, V
    peak = int(np.argmax(out[:, 2]))
    return out, peak * dt, out[-1].sum() - N


def _lv_rhs(y, a, b, c, d):
    prey, pred = y
    return np.array([a * prey - b * prey * pred, c * prey * pred - d * pred])


@program((np.array([10.0, 5.0]), (1.1, 0.4, 0.1, 0.4), 0.05, 30),
         (np.array([4.0, 2.0]), (0.5, 0.2, 0.2, 0.6), 0.1, 12))
def lotka_volterra_rk4_invariant(y0, coeffs, h, steps):
    # classical RK4 on the predator-prey system, tracking the conserved quantity
    a, b, c, d = coeffs
    y = y0.copy()
    traj = [y.copy()]
    V0 = c * y[0] - d * np.log(y[0]) + b * y[1] - a * np.log(y[1])
    for _ in range(steps):
        k1 = _lv_rhs(y, *coeffs)
        k2 = _lv_rhs(y + h / 2 * k1, *coeffs)
        k3 = _lv_rhs(y + h / 2 * k2, *coeffs)
        k4 = _lv_rhs(y + h * k3, *coeffs)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        traj.append(y)
    traj = np.array(traj)
    V = c * traj[:, 0] - d * np.log(traj[:, 0]) + b * traj[:, 1] - a * np.log(traj[:, 1])
    return traj, np.abs(V - V0).max()


# ----------------------------------------------------------------------------- simulation with a generator

@program((np.random.default_rng(5), 1.0, 1.25, 50), (np.random.default_rng(6), 0.5, 2.0, 20))
def mm1_queue_lindley(rng, lam, mu, n):
    # M/M/1 waiting times by Lindley's recursion over drawn inter-arrival and service times
    inter = rng.exponential(1 / lam, n)
    service = rng.exponential(1 / mu, n)
    wait = np.zeros(n)
    for k in range(1, n):
        wait[k] = max(0.0, wait[k - 1] + service[k - 1] - inter[k])
    arrivals = np.cumsum(inter)
    departures = arrivals + wait + service
    busy = service.sum() / departures[-1]
    return wait.mean(), busy, np.percentile(wait, [50, 90]), rng


@program((np.random.default_rng(11), np.array([0.0, 0.0]), 0.8, 200),
         (np.random.default_rng(12), np.array([3.0, -3.0]), 1.5, 60))
def metropolis_banana(rng, x0, step, n):
    # random-walk Metropolis on Rosenbrock's banana density; proposals and uniforms
    # drawn up front, acceptance in a Python loop
    def logp(x):
        return -((1 - x[0]) ** 2 + 5 * (x[1] - x[0] ** 2) ** 2) / 2

    props = rng.normal(0, step, (n, 2))
    us = np.log(rng.random(n))
    chain = np.empty((n + 1, 2))
    chain[0] = x0
    cur, lp = x0.copy(), logp(x0)
    accepted = 0
    for i in range(n):
        cand = cur + props[i]
        lc = logp(cand)
        if us[i] < lc - lp:
            cur, lp = cand, lc
            accepted += 1
        chain[i + 1] = cur
    return chain.mean(0), accepted / n, chain


# ----------------------------------------------------------------------------- information retrieval, hashing, graphs

_PRIME = np.uint64((1 << 31) - 1)


@program((np.array([[1, 5, 9, 12, 40], [1, 5, 9, 13, 40], [2, 3, 77, 80, 81]], i64), 12, 4, 3),
         (np.array([[7, 8, 9], [7, 8, 10]], i64), 6, 3, 2))
def minhash_lsh_buckets(shingles, n_hashes, bands, seed):
    # MinHash signatures from (a*x + b) mod p on uint64, Jaccard estimates between rows,
    # LSH band keys by hashing each band's rows
    rng = np.random.default_rng(seed)
    a = rng.integers(1, int(_PRIME), n_hashes).astype(np.uint64)
    b = rng.integers(0, int(_PRIME), n_hashes).astype(np.uint64)
    x = shingles.astype(np.uint64)
    hashed = (x[:, :, None] * a + b) % _PRIME
    sig = hashed.min(axis=1)
    est = (sig[:, None, :] == sig[None, :, :]).mean(-1)
    rows = n_hashes // bands
    band_keys = sig[:, :bands * rows].reshape(len(sig), bands, rows)
    keys = (band_keys * np.uint64(1000003)).sum(-1) % np.uint64(2 ** 32)
    candidates = {(i, j) for band in range(bands) for i in range(len(sig)) for j in range(i + 1, len(sig))
                  if keys[i, band] == keys[j, band]}
    return sig, est, sorted(candidates)


class BloomFilter:
    def __init__(self, m, k):
        self.bits = np.zeros(m, dtype=bool)
        self.k = k
        self.count = 0

    def _positions(self, items):
        h1 = (items.astype(np.uint32) * np.uint32(2654435761)) >> np.uint32(7)
        h2 = (items.astype(np.uint32) * np.uint32(40503)) | np.uint32(1)
        return (h1[:, None] + np.arange(self.k, dtype=np.uint32) * h2[:, None]) % np.uint32(self.bits.size)

    def add(self, items):
        self.bits[self._positions(items).ravel()] = True
        self.count += len(items)
        return self

    def query(self, items):
        return self.bits[self._positions(items)].all(axis=1)


def _bloom_calls():
    bf = BloomFilter(64, 3)
    return (bf, np.array([3, 17, 99, 1024], i64), np.array([3, 4, 17, 5000, 99], i64)), \
           (bf, np.array([5000], i64), np.array([5000, 6000], i64))


@program(*_bloom_calls())
def bloom_filter_add_query(bf, inserts, probes):
    # a Bloom filter object with double hashing on uint32; state carried across calls
    bf.add(inserts)
    hits = bf.query(probes)
    fill = bf.bits.mean()
    fp_rate = (1 - np.exp(-bf.k * bf.count / bf.bits.size)) ** bf.k
    return hits, fill, fp_rate


@program((np.array([[0, 1, 1, 0], [0, 0, 1, 0], [1, 0, 0, 1], [0, 0, 0, 0]], f64), 0.85, 1e-10),
         (np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], f32), 0.9, 1e-6))
def pagerank_dangling_nodes(adj, damping, tol):
    # PageRank by power iteration on a column-stochastic matrix with dangling nodes
    # redistributed uniformly; returns the ranks, the iterations and the ordering
    n = adj.shape[0]
    out_deg = adj.sum(axis=1)
    dangling = out_deg == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        P = np.where(dangling[:, None], 0.0, adj / out_deg[:, None]).T
    r = np.full(n, 1.0 / n)
    for it in range(1, 500):
        r_new = damping * (P @ r + r[dangling].sum() / n) + (1 - damping) / n
        if np.abs(r_new - r).sum() < tol:
            r = r_new
            break
        r = r_new
    return r, it, np.argsort(-r, kind="stable")


@program((np.array([[0, 3, np.inf, 7], [8, 0, 2, np.inf], [5, np.inf, 0, 1], [2, np.inf, np.inf, 0]]),),
         (np.array([[0, 1, 4], [np.inf, 0, 2], [1, np.inf, 0]], f32),))
def floyd_warshall_with_paths(dist):
    # all-pairs shortest paths by broadcasting np.minimum, the next-hop matrix updated
    # where the path through k is shorter, and one path reconstructed
    d = dist.copy()
    n = d.shape[0]
    nxt = np.where(np.isfinite(d), np.arange(n)[None, :], -1)
    for k in range(n):
        through = d[:, k:k + 1] + d[k:k + 1, :]
        better = through < d
        nxt = np.where(better, nxt[:, k:k + 1], nxt)
        d = np.minimum(d, through)
    path = [0]
    while path[-1] != n - 1 and len(path) <= n:
        path.append(int(nxt[path[-1], n - 1]))
    return d, nxt, path


@program((np.array(["2024-01-01", "2024-02-15", "2024-03-31", "2024-12-25"], dtype="datetime64[D]"),
          np.array(["2024-01-10", "2024-03-01", "2024-04-30", "2025-01-05"], dtype="datetime64[D]")),)
def business_days_by_datetime_arithmetic(start, end):
    # weekdays between two dates without np.busday_count: whole weeks times five plus
    # the remainder days counted by weekday arithmetic (1970-01-01 was a Thursday)
    days = (end - start).astype(np.int64)
    weeks, rem = np.divmod(days, 7)
    dow = (start.astype(np.int64) + 3) % 7          # Monday == 0
    extra = np.zeros_like(rem)
    for r in range(1, 7):
        wd = (dow + r - 1) % 7
        extra += (rem >= r) & (wd < 5)
    months = end.astype("datetime64[M]") - start.astype("datetime64[M]")
    return weeks * 5 + extra, months.astype(np.int64), (start + np.timedelta64(30, "D"))


# (every program ran on cpp, cpp-dynamic, eager and aot_eager when written; a few keep C++ in the budget)
_CPP = ("seir_vaccination_schedule", "bilinear_affine_warp")
test_program = program_test({k: PROGRAMS[k] for k in _CPP}, ["cpp"])
test_program_eager = program_test(PROGRAMS, ["eager", "aot_eager"], share=4)
