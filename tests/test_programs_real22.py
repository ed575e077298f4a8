"""A twenty-second set of real NumPy programs through kiln.compile, from fields and idioms
the earlier rounds left out: astronomy (sidereal time from Julian dates, a catalogue
cross-match by angular separation, proper motion to another epoch, magnitudes and fluxes),
bioinformatics (open reading frames in three frames, Tajima's D, Needleman-Wunsch with a
traceback, minimizer sketches), physics (single-spin Metropolis with a Generator, split-step
Schrodinger, the Boris pusher, Monte Carlo decay by binomial draws), audio (a feed-forward
compressor, YIN pitch, a peaking-EQ biquad cascade, a noise gate with hold), control (a
thermostat with hysteresis, an alpha-beta tracker, a first-order plant with dead time),
graphics (the midpoint circle, an even-odd scanline fill, Floyd-Steinberg dithering, a
clipped sprite blit), econometrics (OLS with HC0-HC3 errors, ARMA(1,1) CSS residuals, the
Dickey-Fuller statistic, two-stage least squares), queues (round robin by deque, shortest
job first by heapq, first-fit decreasing), graphs (Tarjan's SCC on CSR arrays, A* on a
grid, Edmonds-Karp), bytes and strings (Huffman code lengths, LZW, base-36, Luhn check
digits), and data (sessionising clicks, reservoir sampling, an amortisation schedule, the
logistic map's Lyapunov exponent, int32 Fibonacci wrapping, a stable counting sort).
Every program ran against NumPy on cpp, eager and aot_eager, and on cpp with the cost
model on. int32_fibonacci_wrap on 0-d int32 arguments (``np.array(1, np.int32)``) hung
compiling: its Python ints read from data (``exact.append(exact[-1] + exact[-2])``) were
rebuilt at the graph break as one expression over their operands, fib(50) terms; stop 60
builds a long one once under a name (capture/output.py once_if_long), and the call is
here. yin_pitch on float32 frames, whose 128 unrolled sums fuse into one stage, was 1 ulp
off NumPy past MAX_PAIRWISE_SUMS until stop 60: such sums now add side by side, kiln_sums.
"""
from __future__ import annotations

import heapq
import math
from collections import Counter, deque

import numpy as np

from tests.test_programs import program_registry, program_test

f32, f64, i32, i64, u8 = np.float32, np.float64, np.int32, np.int64, np.uint8

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)

_g = np.random.default_rng(2222)


# ----------------------------------------------------------------------------- astronomy

@program((2451545.0 + np.array([0.0, 0.25, 365.25, 7000.125, -1200.5]), np.array([0.0, -71.5, 139.7, 12.0, 360.0])),
         (np.array([2460000.5], f32), np.array([-0.0], f32)))
def gmst_local_sidereal_time(jd, lon_deg):
    # IAU 1982 GMST in degrees, local sidereal time, hour angle of Sirius, wrapped to [0, 360)
    t = (jd - 2451545.0) / 36525.0
    gmst = 280.46061837 + 360.98564736629 * (jd - 2451545.0) + 0.000387933 * t ** 2 - t ** 3 / 38710000.0
    gmst = np.mod(gmst, 360.0)
    lst = (gmst + lon_deg) % 360.0
    ha = (lst - 101.287) % 360.0
    ha = np.where(ha > 180.0, ha - 360.0, ha)
    hours = lst / 15.0
    hh = np.floor(hours).astype(int)
    mm = np.floor((hours - hh) * 60).astype(int)
    return gmst, lst, ha, hh, mm


def _sep(ra1, dec1, ra2, dec2):
    # Vincenty's formula: stable for tiny and antipodal separations
    dra = ra2 - ra1
    sd1, cd1, sd2, cd2 = np.sin(dec1), np.cos(dec1), np.sin(dec2), np.cos(dec2)
    num1 = cd2 * np.sin(dra)
    num2 = cd1 * sd2 - sd1 * cd2 * np.cos(dra)
    den = sd1 * sd2 + cd1 * cd2 * np.cos(dra)
    return np.arctan2(np.hypot(num1, num2), den)


@program((np.radians(_g.uniform(0, 360, 12)), np.radians(_g.uniform(-80, 80, 12)),
          np.radians(_g.uniform(0, 360, 30)), np.radians(_g.uniform(-80, 80, 30)), 40.0),
         (np.radians(np.array([10.0, 10.001], f32)), np.radians(np.array([-5.0, 89.9], f32)),
          np.radians(np.array([10.0, 190.0, 10.0005], f32)), np.radians(np.array([-5.0002, -89.9, 89.9], f32)), 3600.0))
def catalogue_crossmatch(ra1, dec1, ra2, dec2, radius_arcsec):
    d = _sep(ra1[:, None], dec1[:, None], ra2[None, :], dec2[None, :])
    best = d.argmin(axis=1)
    dbest = np.degrees(d[np.arange(len(ra1)), best]) * 3600.0
    ok = dbest < radius_arcsec
    matches = {int(i): int(best[i]) for i in np.flatnonzero(ok)}
    return np.degrees(d), dbest, matches, ok.sum()


@program((np.array([10.68, 83.82, 359.999, 0.001]), np.array([41.27, -5.39, 89.5, -30.0]),
          np.array([100.0, -2.5, 3000.0, -5000.0]), np.array([-30.0, 1.2, 0.0, 250.0]), 2000.0, 2025.5),
         (np.array([180.0], f32), np.array([0.0], f32), np.array([10.0], f32), np.array([-10.0], f32), 2016.0, 1990.0))
def proper_motion_to_epoch(ra, dec, pmra_cosdec, pmdec, epoch0, epoch1):
    dt = epoch1 - epoch0
    mas = 1.0 / 3.6e6
    dec1 = dec + pmdec * mas * dt
    cosd = np.cos(np.radians(dec))
    ra1 = ra + pmra_cosdec * mas * dt / cosd
    ra1 = np.mod(ra1, 360.0)
    over = dec1 > 90.0
    dec1[over] = 180.0 - dec1[over]
    ra1[over] = np.mod(ra1[over] + 180.0, 360.0)
    return ra1, dec1, np.abs(dec1 - dec).max() * 3600.0


@program((np.array([1200.0, 35.0, 0.0, -3.0, np.nan, 5e6]), np.array([800.0, 60.0, 1.0, 2.0, 3.0, 4e6]), 25.0),
         (np.array([], f32), np.array([], f32), 22.5),
         (np.array([[10.0, 20.0], [30.0, 0.5]], f32), np.array([[5.0, 25.0], [0.0, 0.5]], f32), 0.0))
def magnitudes_and_colours(flux_b, flux_v, zp):
    with np.errstate(divide="ignore", invalid="ignore"):
        mb = zp - 2.5 * np.log10(flux_b)
        mv = zp - 2.5 * np.log10(flux_v)
    mb = np.where(flux_b > 0, mb, np.nan)
    mv = np.where(flux_v > 0, mv, np.nan)
    colour = mb - mv
    good = np.isfinite(colour)
    mean_colour = colour[good].mean() if good.any() else np.nan
    snr_mag = 1.0857 / np.sqrt(np.abs(flux_v) + 1.0)
    return mb, mv, colour, mean_colour, snr_mag.astype(flux_v.dtype)


# ----------------------------------------------------------------------------- bioinformatics

_STOPS = {b"TAA", b"TAG", b"TGA"}


@program(("ATGAAATTTGGGTAACCATGCCCTGAATGATGTTTTAGGG", 3), ("CCCCATG", 1), ("", 2),
         ("ATGTAGATGCCCAAATAAATGGGGTGA", 2))
def open_reading_frames(seq, min_codons):
    raw = seq.encode()
    arr = np.frombuffer(raw, dtype=np.uint8)
    orfs = []
    for frame in range(3):
        n = (len(arr) - frame) // 3
        if n <= 0:
            continue
        codons = arr[frame:frame + 3 * n].reshape(n, 3)
        start = None
        for k in range(n):
            c = codons[k].tobytes()
            if start is None and c == b"ATG":
                start = k
            elif start is not None and c in _STOPS:
                if k - start >= min_codons:
                    orfs.append((frame, frame + 3 * start, frame + 3 * k + 3))
                start = None
    gc = np.isin(arr, np.frombuffer(b"GC", np.uint8)).mean() if len(arr) else 0.0
    return sorted(orfs, key=lambda o: (o[1] - o[2], o[1])), gc


@program((_g.integers(0, 2, (10, 40)).astype(np.int8),), (np.array([[0, 1, 1], [0, 0, 1], [1, 0, 1]], np.int8),),
         (np.zeros((4, 6), np.int8),))
def tajima_d(hap):
    n = hap.shape[0]
    counts = hap.sum(axis=0, dtype=np.int64)
    seg = (counts > 0) & (counts < n)
    S = int(seg.sum())
    p = counts / n
    pi = (2.0 * p * (1 - p) * n / (n - 1)).sum()
    i = np.arange(1, n)
    a1, a2 = (1.0 / i).sum(), (1.0 / i ** 2).sum()
    b1 = (n + 1) / (3.0 * (n - 1))
    b2 = 2.0 * (n * n + n + 3) / (9.0 * n * (n - 1))
    c1 = b1 - 1 / a1
    c2 = b2 - (n + 2) / (a1 * n) + a2 / a1 ** 2
    e1, e2 = c1 / a1, c2 / (a1 ** 2 + a2)
    if S == 0:
        return S, pi, None
    D = (pi - S / a1) / math.sqrt(e1 * S + e2 * S * (S - 1))
    return S, pi, D


@program(("GATTACA", "GCATGCU", 1, -1, -2), ("AAAA", "AA", 2, -1, -1), ("ACGT", "", 1, -1, -1))
def needleman_wunsch_traceback(s, t, match, mismatch, gap):
    a = np.frombuffer(s.encode(), np.uint8)
    b = np.frombuffer(t.encode(), np.uint8)
    n, m = len(a), len(b)
    F = np.zeros((n + 1, m + 1), dtype=np.int32)
    P = np.zeros((n + 1, m + 1), dtype=np.int8)   # 0 diag, 1 up, 2 left
    F[:, 0] = gap * np.arange(n + 1)
    F[0, :] = gap * np.arange(m + 1)
    P[1:, 0] = 1
    P[0, 1:] = 2
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d = F[i - 1, j - 1] + (match if a[i - 1] == b[j - 1] else mismatch)
            u = F[i - 1, j] + gap
            le = F[i, j - 1] + gap
            best = max(d, u, le)
            F[i, j] = best
            P[i, j] = 0 if best == d else (1 if best == u else 2)
    i, j, top, bot = n, m, [], []
    while i > 0 or j > 0:
        move = P[i, j]
        if move == 0:
            top.append(s[i - 1]); bot.append(t[j - 1]); i -= 1; j -= 1
        elif move == 1:
            top.append(s[i - 1]); bot.append("-"); i -= 1
        else:
            top.append("-"); bot.append(t[j - 1]); j -= 1
    return int(F[n, m]), "".join(reversed(top)), "".join(reversed(bot)), F


@program(("ACGTTGCAACGTAGCTAGCTAGGATCCA", 4, 5), ("AAAAAAAA", 2, 3), ("ACG", 4, 2))
def minimizer_sketch(seq, k, w):
    code = np.zeros(256, np.int64)
    code[np.frombuffer(b"ACGT", np.uint8)] = np.arange(4)
    x = code[np.frombuffer(seq.encode(), np.uint8)]
    if len(x) < k:
        return np.zeros(0, np.int64), set()
    powers = 4 ** np.arange(k - 1, -1, -1)
    kmers = np.lib.stride_tricks.sliding_window_view(x, k) @ powers
    h = (kmers * 2654435761) % (1 << 32)
    window, picked = deque(), []
    for pos in range(len(h)):
        while window and h[window[-1]] >= h[pos]:
            window.pop()
        window.append(pos)
        if window[0] <= pos - w:
            window.popleft()
        if pos >= w - 1 and (not picked or picked[-1] != window[0]):
            picked.append(window[0])
    return np.array(picked, dtype=np.int64), {int(kmers[p]) for p in picked}


# ----------------------------------------------------------------------------- physics

@program((np.random.default_rng(5), np.ones((6, 6), np.int8), 0.6, 400),
         (np.random.default_rng(6), np.array([[1, -1], [-1, 1]], np.int8), 2.0, 50))
def ising_metropolis_single_flip(rng, spins, beta, steps):
    L = spins.shape[0]
    accepted = 0
    boltz = {dE: math.exp(-beta * dE) for dE in (4, 8)}
    energy_trace = []
    for _ in range(steps):
        i, j = rng.integers(0, L, size=2)
        nb = spins[(i + 1) % L, j] + spins[i - 1, j] + spins[i, (j + 1) % L] + spins[i, j - 1]
        dE = 2 * int(spins[i, j]) * int(nb)
        if dE <= 0 or rng.random() < boltz[dE]:
            spins[i, j] = -spins[i, j]
            accepted += 1
        energy_trace.append(-(spins * (np.roll(spins, 1, 0) + np.roll(spins, 1, 1))).sum())
    return accepted, spins.mean(), np.array(energy_trace)


@program((np.linspace(-10, 10, 64, endpoint=False), 0.01, 40, 2.0),
         (np.linspace(-5, 5, 32, endpoint=False), 0.05, 5, 0.0))
def split_step_schrodinger(x, dt, steps, k0):
    dx = x[1] - x[0]
    psi = np.exp(-(x + 3) ** 2) * np.exp(1j * k0 * x)
    psi /= np.sqrt((np.abs(psi) ** 2).sum() * dx)
    V = 0.5 * x ** 2
    k = 2 * np.pi * np.fft.fftfreq(len(x), d=dx)
    half_v = np.exp(-0.5j * V * dt)
    kin = np.exp(-0.5j * k ** 2 * dt)
    norms = []
    for _ in range(steps):
        psi = half_v * psi
        psi = np.fft.ifft(kin * np.fft.fft(psi))
        psi = half_v * psi
        norms.append((np.abs(psi) ** 2).sum() * dx)
    prob = np.abs(psi) ** 2
    return psi, (x * prob).sum() * dx, np.array(norms)


@program((np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.5]), np.array([0.0, 0.0, 1.0]), np.array([0.1, 0.0, 0.0]), -1.0, 0.05, 100),
         (np.zeros(3, f32), np.array([1.0, 0.0, 0.0], f32), np.array([0.0, 0.0, 2.0], f32), np.zeros(3, f32), 2.0, 0.1, 3))
def boris_pusher(x, v, B, E, q_over_m, dt, steps):
    traj = np.empty((steps + 1, 3), dtype=x.dtype)
    traj[0] = x
    for n in range(steps):
        v_minus = v + q_over_m * E * (dt / 2)
        t = q_over_m * B * (dt / 2)
        s = 2 * t / (1 + t @ t)
        v_prime = v_minus + np.cross(v_minus, t)
        v_plus = v_minus + np.cross(v_prime, s)
        v = v_plus + q_over_m * E * (dt / 2)
        x = x + v * dt
        traj[n + 1] = x
    return traj, v, np.linalg.norm(v)


@program((np.random.default_rng(9), np.array([10000, 5000, 0], np.int64), np.array([0.05, 0.2]), 30),
         (np.random.default_rng(10), np.array([7, 0], np.int64), np.array([0.5]), 4))
def decay_chain_binomial(rng, n0, lam, steps):
    n = n0.copy()
    p = -np.expm1(-lam)
    hist = [n.copy()]
    for _ in range(steps):
        decays = rng.binomial(n[:-1], p)
        n[:-1] -= decays
        n[1:] += decays
        hist.append(n.copy())
    hist = np.array(hist)
    assert (hist.sum(axis=1) == n0.sum()).all()
    return hist, n


# ----------------------------------------------------------------------------- audio

@program((np.sin(2 * np.pi * 5 * np.arange(400) / 400) * np.r_[np.full(200, 0.1), np.full(200, 0.9)], 400.0, -12.0, 4.0, 0.005, 0.05),
         ((0.5 * np.sin(np.arange(50) * 0.3)).astype(f32), 1000.0, -6.0, 2.0, 0.001, 0.01),
         (np.zeros(0), 100.0, -10.0, 3.0, 0.01, 0.1))
def feedforward_compressor(x, fs, thresh_db, ratio, attack, release):
    eps = np.finfo(x.dtype).tiny
    level_db = 20 * np.log10(np.abs(x) + eps)
    over = np.maximum(level_db - thresh_db, 0.0)
    target = -over * (1 - 1 / ratio)
    a_att = math.exp(-1.0 / (attack * fs))
    a_rel = math.exp(-1.0 / (release * fs))
    g = np.zeros_like(target)
    state = 0.0
    for i in range(len(target)):
        coef = a_att if target[i] < state else a_rel
        state = coef * state + (1 - coef) * target[i]
        g[i] = state
    y = x * 10 ** (g / 20)
    return y, g, (g.min() if len(g) else 0.0)


@program((np.sin(2 * np.pi * 220 * np.arange(512) / 8000.0) + 0.3 * np.sin(2 * np.pi * 440 * np.arange(512) / 8000.0), 8000.0, 0.1),
         (_g.standard_normal(256), 8000.0, 0.05),
         ((np.sin(2 * np.pi * 310 * np.arange(256) / 8000.0) + np.cos(np.arange(256.0) ** 1.5)).astype(f32), 8000.0, 0.3))
def yin_pitch(frame, fs, threshold):
    W = len(frame) // 2
    d = np.array([((frame[:W] - frame[tau:tau + W]) ** 2).sum() for tau in range(W)])
    cmnd = np.ones(W)
    cum = np.cumsum(d[1:])
    with np.errstate(invalid="ignore", divide="ignore"):
        cmnd[1:] = d[1:] * np.arange(1, W) / cum
    below = np.flatnonzero(cmnd[2:] < threshold)
    if len(below) == 0:
        return None, cmnd.min()
    tau = below[0] + 2
    while tau + 1 < W and cmnd[tau + 1] < cmnd[tau]:
        tau += 1
    a, b, c = cmnd[tau - 1], cmnd[tau], cmnd[tau + 1] if tau + 1 < W else cmnd[tau]
    shift = 0.5 * (a - c) / (a - 2 * b + c) if (a - 2 * b + c) != 0 else 0.0
    return fs / (tau + shift), cmnd[tau]


def _peaking(f0, fs, gain_db, q):
    A = 10 ** (gain_db / 40)
    w0 = 2 * math.pi * f0 / fs
    alpha = math.sin(w0) / (2 * q)
    b = np.array([1 + alpha * A, -2 * math.cos(w0), 1 - alpha * A])
    a = np.array([1 + alpha / A, -2 * math.cos(w0), 1 - alpha / A])
    return b / a[0], a / a[0]


@program((_g.standard_normal(300), 8000.0, ((500.0, 6.0, 1.0), (2000.0, -9.0, 2.0))),
         (np.r_[1.0, np.zeros(63)].astype(f32), 44100.0, ((1000.0, 3.0, 0.7),)))
def peaking_eq_cascade(x, fs, bands):
    y = x.astype(np.float64)
    for f0, gain, q in bands:
        b, a = _peaking(f0, fs, gain, q)
        out = np.empty_like(y)
        x1 = x2 = y1 = y2 = 0.0
        for n in range(len(y)):
            xn = y[n]
            yn = b[0] * xn + b[1] * x1 + b[2] * x2 - a[1] * y1 - a[2] * y2
            x2, x1, y2, y1 = x1, xn, y1, yn
            out[n] = yn
        y = out
    return y.astype(x.dtype), np.sqrt(np.mean(y ** 2))


@program((np.r_[0.01 * _g.standard_normal(40), np.sin(np.arange(60)), 0.01 * _g.standard_normal(50)], 0.3, 10),
         (np.array([0.0, 0.5, 0.0, 0.0, 0.6, 0.0, 0.0, 0.0], f32), 0.4, 2))
def noise_gate_with_hold(x, thresh, hold):
    env = np.abs(x)
    open_ = np.zeros(len(x), dtype=bool)
    counter = 0
    openings = 0
    for i, e in enumerate(env):
        if e >= thresh:
            if counter == 0:
                openings += 1
            counter = hold
        elif counter > 0:
            counter -= 1
        open_[i] = counter > 0
    y = np.where(open_, x, np.zeros_like(x))
    return y, openings, open_.mean()


# ----------------------------------------------------------------------------- control

@program((15.0, 20.0, 1.0, 0.2, 0.05, 5.0, 500, 0.1), (25.0, 20.0, 0.5, 0.1, 0.02, 4.0, 80, 1.0))
def thermostat_hysteresis(T0, setpoint, band, k_loss, t_out_frac, heat, steps, dt):
    T = T0
    on = False
    temps = np.empty(steps)
    switches = []
    for n in range(steps):
        if on and T > setpoint + band:
            on = False
            switches.append((n, "off"))
        elif not on and T < setpoint - band:
            on = True
            switches.append((n, "on"))
        T += dt * (-k_loss * (T - setpoint * t_out_frac) + (heat if on else 0.0))
        temps[n] = T
    duty = sum(1 for _, s in switches if s == "on")
    return temps, switches, duty, temps[steps // 2:].std()


@program((np.cumsum(np.full(30, 0.5)) + 0.1 * _g.standard_normal(30), 1.0, 0.85, 0.005),
         (np.array([0.0, 1.2, 1.9, 3.2, np.nan, 5.1], f32), 1.0, 0.5, 0.1))
def alpha_beta_tracker(z, dt, alpha, beta):
    x, v = float(z[0]), 0.0
    xs = np.empty_like(z)
    vs = np.empty_like(z)
    resid = []
    for k, zk in enumerate(z):
        x_pred = x + v * dt
        if np.isnan(zk):
            x = x_pred
        else:
            r = zk - x_pred
            x = x_pred + alpha * r
            v = v + beta / dt * r
            resid.append(r)
        xs[k], vs[k] = x, v
    return xs, vs, np.array(resid, dtype=z.dtype)


@program((np.r_[np.zeros(5), np.ones(60)], 2.0, 5.0, 3, 0.5, 1.2, 0.4),
         (np.ones(10, f32), 1.0, 1.0, 0, 1.0, 0.5, 0.0))
def fopdt_pi_loop(setpoints, K, tau, dead, dt, kp, ki):
    buf = deque([0.0] * dead)
    y, integ = 0.0, 0.0
    ys, us = [], []
    for sp in setpoints:
        e = sp - y
        integ += e * dt
        u = min(max(kp * e + ki * integ, -2.0), 2.0)
        buf.append(u)
        u_del = buf.popleft()
        y += dt / tau * (-y + K * u_del)
        ys.append(y)
        us.append(u)
    ys = np.array(ys)
    err = setpoints - ys
    return ys, np.array(us), np.abs(err).sum() * dt, int(np.argmax(ys))


# ----------------------------------------------------------------------------- graphics

@program((np.zeros((21, 21), u8), 10, 10, 8, 255), (np.zeros((9, 12), np.int32), 2, 5, 6, 7), (np.zeros((5, 5), u8), 2, 2, 0, 1))
def midpoint_circle(img, cx, cy, r, value):
    x, y, d = r, 0, 1 - r
    pts = set()
    while x >= y:
        for px, py in ((x, y), (y, x), (-y, x), (-x, y), (-x, -y), (-y, -x), (y, -x), (x, -y)):
            pts.add((cy + py, cx + px))
        y += 1
        if d < 0:
            d += 2 * y + 1
        else:
            x -= 1
            d += 2 * (y - x) + 1
    rows = np.array(sorted(pts))
    keep = (rows[:, 0] >= 0) & (rows[:, 0] < img.shape[0]) & (rows[:, 1] >= 0) & (rows[:, 1] < img.shape[1])
    rr, cc = rows[keep].T
    img[rr, cc] = value
    return img.sum(dtype=np.int64), len(pts), int(keep.sum())


@program((np.array([[1.0, 1.0], [8.0, 2.0], [6.0, 9.0], [3.0, 5.0], [1.5, 8.0]]), (12, 10)),
         (np.array([[0.0, 0.0], [6.0, 0.0], [6.0, 6.0], [0.0, 6.0], [3.0, 3.0]], f32), (7, 7)))
def scanline_fill_even_odd(poly, shape):
    H, W = shape
    img = np.zeros(shape, dtype=bool)
    x0, y0 = poly[:, 0], poly[:, 1]
    x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
    for row in range(H):
        yc = row + 0.5
        cross = ((y0 <= yc) & (y1 > yc)) | ((y1 <= yc) & (y0 > yc))
        if not cross.any():
            continue
        xs = x0[cross] + (yc - y0[cross]) * (x1[cross] - x0[cross]) / (y1[cross] - y0[cross])
        xs = np.sort(xs)
        cols = np.arange(W) + 0.5
        inside = (np.searchsorted(xs, cols) % 2) == 1
        img[row] = inside
    area = 0.5 * abs(np.dot(x0, y1) - np.dot(x1, y0))
    return img, img.sum(), area


@program((np.linspace(0, 255, 48).reshape(6, 8),), (np.full((3, 4), 127.5, f32),), (np.zeros((0, 3)),))
def floyd_steinberg_dither(gray):
    img = gray.astype(np.float64).copy()
    H, W = img.shape
    out = np.zeros((H, W), dtype=u8)
    for y in range(H):
        for x in range(W):
            old = img[y, x]
            new = 255.0 if old >= 128.0 else 0.0
            out[y, x] = new
            err = old - new
            if x + 1 < W:
                img[y, x + 1] += err * 7 / 16
            if y + 1 < H:
                if x > 0:
                    img[y + 1, x - 1] += err * 3 / 16
                img[y + 1, x] += err * 5 / 16
                if x + 1 < W:
                    img[y + 1, x + 1] += err * 1 / 16
    return out, (out == 255).mean() if out.size else 0.0


@program((np.zeros((8, 10, 3), u8), np.full((4, 5, 3), 200, u8), np.linspace(0, 1, 20).reshape(4, 5), -2, 7),
         (np.full((6, 6, 3), 50, u8), np.full((3, 3, 3), 250, u8), np.ones((3, 3)), 2, 2),
         (np.zeros((4, 4, 3), u8), np.ones((2, 2, 3), u8), np.ones((2, 2)), 9, 9))
def clipped_sprite_blit(canvas, sprite, alpha, top, left):
    H, W = canvas.shape[:2]
    h, w = sprite.shape[:2]
    y0, x0 = max(top, 0), max(left, 0)
    y1, x1 = min(top + h, H), min(left + w, W)
    if y0 >= y1 or x0 >= x1:
        return canvas, 0
    sy, sx = y0 - top, x0 - left
    dst = canvas[y0:y1, x0:x1]
    src = sprite[sy:sy + (y1 - y0), sx:sx + (x1 - x0)].astype(np.float32)
    a = alpha[sy:sy + (y1 - y0), sx:sx + (x1 - x0), None].astype(np.float32)
    dst[...] = np.clip(np.rint(a * src + (1 - a) * dst), 0, 255).astype(u8)
    return canvas, (y1 - y0) * (x1 - x0)


# ----------------------------------------------------------------------------- econometrics

@program((np.c_[np.ones(40), _g.standard_normal((40, 2))], None),
         (np.c_[np.ones(12), np.arange(12.0)], np.arange(12.0) * 0.5 + _g.standard_normal(12) * np.arange(1, 13)))
def ols_hc_standard_errors(X, y):
    if y is None:
        y = X @ np.array([1.0, 2.0, -0.5]) + _g_fixed(len(X)) * (1 + np.abs(X[:, 1]))
    n, k = X.shape
    XtX_inv = np.linalg.inv(X.T @ X)
    beta = XtX_inv @ X.T @ y
    e = y - X @ beta
    h = np.einsum("ij,jk,ik->i", X, XtX_inv, X)
    out = {}
    for name, w in (("HC0", e ** 2), ("HC1", e ** 2 * n / (n - k)),
                    ("HC2", e ** 2 / (1 - h)), ("HC3", e ** 2 / (1 - h) ** 2)):
        meat = (X * w[:, None]).T @ X
        out[name] = np.sqrt(np.diag(XtX_inv @ meat @ XtX_inv))
    classic = np.sqrt(np.diag(XtX_inv) * (e @ e) / (n - k))
    return beta, classic, out


def _g_fixed(n):
    return np.sin(np.arange(n) * 1.7) * 0.8


@program((np.convolve(_g.standard_normal(80), [1.0, 0.4], mode="valid"), np.linspace(-0.9, 0.9, 19), 0.5),
         (np.array([0.5, -0.2, 0.1, 0.3], f32), np.array([0.0, 0.5]), 0.0))
def arma11_css_grid(y, thetas, phi):
    best = (np.inf, None)
    sse = np.empty(len(thetas))
    for j, th in enumerate(thetas):
        e = np.zeros(len(y))
        for t in range(1, len(y)):
            e[t] = y[t] - phi * y[t - 1] - th * e[t - 1]
        sse[j] = e @ e
        if sse[j] < best[0]:
            best = (sse[j], th)
    return sse, best[1], best[0] / (len(y) - 1)


@program((np.cumsum(_g.standard_normal(60)), 2), (0.5 * np.arange(30.0) + np.sin(np.arange(30.0)), 1), (np.ones(5), 3))
def dickey_fuller_stat(y, lags):
    dy = np.diff(y)
    n = len(dy) - lags
    if n <= lags + 3:
        raise ValueError(f"series too short for {lags} lags: {len(y)} points")
    cols = [np.ones(n), y[lags:-1]] + [dy[lags - i:-i] for i in range(1, lags + 1)]
    X = np.column_stack(cols)
    z = dy[lags:]
    beta, res, rank, sv = np.linalg.lstsq(X, z, rcond=None)
    e = z - X @ beta
    s2 = e @ e / (n - X.shape[1])
    cov = s2 * np.linalg.inv(X.T @ X)
    return beta[1] / np.sqrt(cov[1, 1]), rank, beta


@program((np.c_[np.ones(50), _g.standard_normal((50, 2))], np.c_[np.ones(50), _g.standard_normal(50)], None),
         (np.c_[np.ones(6), np.arange(6.0)[:, None], np.arange(6.0)[::-1, None] ** 2], np.c_[np.ones(6), np.arange(6.0)], np.arange(6.0)))
def two_stage_least_squares(Z, Xendog, y):
    if y is None:
        y = Xendog @ np.array([1.0, 0.7]) + _g_fixed(len(Z))
    Pz = Z @ np.linalg.pinv(Z.T @ Z) @ Z.T
    Xhat = Pz @ Xendog
    beta = np.linalg.solve(Xhat.T @ Xendog, Xhat.T @ y)
    e = y - Xendog @ beta
    first_r2 = 1 - ((Xendog[:, 1] - Xhat[:, 1]) ** 2).sum() / ((Xendog[:, 1] - Xendog[:, 1].mean()) ** 2).sum()
    return beta, e.std(), first_r2


# ----------------------------------------------------------------------------- queues and scheduling

@program(([("a", 0, 5), ("b", 1, 3), ("c", 2, 8), ("d", 3, 2)], 2), ([("x", 0, 1)], 4), ([("p", 5, 4), ("q", 0, 2)], 3))
def round_robin_scheduler(jobs, quantum):
    jobs = sorted(jobs, key=lambda j: j[1])
    remaining = {name: burst for name, _, burst in jobs}
    arrival = {name: t for name, t, _ in jobs}
    ready, t, k, finish, timeline = deque(), 0, 0, {}, []
    while len(finish) < len(jobs):
        while k < len(jobs) and jobs[k][1] <= t:
            ready.append(jobs[k][0]); k += 1
        if not ready:
            t = jobs[k][1]
            continue
        name = ready.popleft()
        run = min(quantum, remaining[name])
        timeline.append((name, t, t + run))
        t += run
        remaining[name] -= run
        while k < len(jobs) and jobs[k][1] <= t:
            ready.append(jobs[k][0]); k += 1
        if remaining[name]:
            ready.append(name)
        else:
            finish[name] = t
    names = sorted(finish)
    turnaround = np.array([finish[n] - arrival[n] for n in names])
    return timeline, dict(zip(names, turnaround.tolist())), turnaround.mean()


@program((np.array([0, 1, 2, 3, 10], np.int32), np.array([8, 4, 9, 5, 1], np.int32)), (np.array([], np.int32), np.array([], np.int32)),
         (np.array([2, 2, 2]), np.array([3, 1, 2])))
def shortest_job_first(arrivals, bursts):
    order = np.argsort(arrivals, kind="stable")
    heap, t, k, start = [], 0, 0, np.zeros_like(arrivals)
    n = len(arrivals)
    done = 0
    while done < n:
        while k < n and arrivals[order[k]] <= t:
            i = order[k]
            heapq.heappush(heap, (int(bursts[i]), int(arrivals[i]), int(i)))
            k += 1
        if not heap:
            t = int(arrivals[order[k]])
            continue
        b, _, i = heapq.heappop(heap)
        start[i] = t
        t += b
        done += 1
    wait = start - arrivals
    return start, wait, (wait.mean() if n else 0.0)


@program((np.array([0.5, 0.7, 0.5, 0.2, 0.4, 0.2, 0.5, 0.1, 0.6]), 1.0), (np.array([0.3, 0.3, 0.3], f32), 0.5),
         (np.array([1.2, 0.1]), 1.0))
def first_fit_decreasing(sizes, cap):
    if (sizes > cap).any():
        raise ValueError(f"item of size {sizes.max()} exceeds bin capacity {cap}")
    order = np.argsort(-sizes, kind="stable")
    free = []
    assign = np.full(len(sizes), -1)
    for i in order:
        s = sizes[i]
        for b, f in enumerate(free):
            if f >= s - 1e-12:
                free[b] = f - s
                assign[i] = b
                break
        else:
            free.append(cap - s)
            assign[i] = len(free) - 1
    fill = np.bincount(assign, weights=sizes, minlength=len(free)) / cap
    return assign, len(free), fill


# ----------------------------------------------------------------------------- graphs

def _csr(n, edges):
    e = np.array(edges, dtype=np.int64).reshape(-1, 2)
    order = np.argsort(e[:, 0], kind="stable")
    indices = e[order, 1]
    indptr = np.zeros(n + 1, np.int64)
    np.add.at(indptr, e[:, 0] + 1, 1)
    return np.cumsum(indptr), indices


@program((*_csr(8, [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5), (5, 3), (6, 5), (6, 7)]),),
         (*_csr(3, []),), (np.array([0, 1, 2], np.int32), np.array([1, 0], np.int32)))
def tarjan_scc_iterative(indptr, indices):
    n = len(indptr) - 1
    index = np.full(n, -1)
    low = np.zeros(n, dtype=np.int64)
    on_stack = np.zeros(n, dtype=bool)
    stack, comps, counter = [], [], 0
    for root in range(n):
        if index[root] >= 0:
            continue
        work = [(root, indptr[root])]
        index[root] = low[root] = counter; counter += 1
        stack.append(root); on_stack[root] = True
        while work:
            v, ptr = work[-1]
            if ptr < indptr[v + 1]:
                work[-1] = (v, ptr + 1)
                w = indices[ptr]
                if index[w] < 0:
                    index[w] = low[w] = counter; counter += 1
                    stack.append(w); on_stack[w] = True
                    work.append((w, indptr[w]))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop(); on_stack[w] = False; comp.append(int(w))
                        if w == v:
                            break
                    comps.append(sorted(comp))
    labels = np.empty(n, dtype=np.int64)
    for c, members in enumerate(comps):
        labels[members] = c
    return sorted(comps), labels, low


@program((np.array([[0, 0, 0, 0, 1], [1, 1, 0, 1, 0], [0, 0, 0, 1, 0], [0, 1, 1, 1, 0], [0, 0, 0, 0, 0]], bool), (0, 0), (4, 4)),
         (np.array([[0, 1], [1, 0]], bool), (0, 0), (1, 1)), (np.zeros((3, 3), bool), (2, 2), (2, 2)))
def astar_grid(walls, start, goal):
    H, W = walls.shape
    g = np.full((H, W), np.inf)
    g[start] = 0.0
    came = {}
    heap = [(abs(start[0] - goal[0]) + abs(start[1] - goal[1]), 0.0, start)]
    expanded = 0
    while heap:
        f, gc, cur = heapq.heappop(heap)
        if cur == goal:
            break
        if gc > g[cur]:
            continue
        expanded += 1
        r, c = cur
        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            nr, nc = r + dr, c + dc
            if 0 <= nr < H and 0 <= nc < W and not walls[nr, nc]:
                ng = gc + 1.0
                if ng < g[nr, nc]:
                    g[nr, nc] = ng
                    came[(nr, nc)] = cur
                    heapq.heappush(heap, (ng + abs(nr - goal[0]) + abs(nc - goal[1]), ng, (nr, nc)))
    if not np.isfinite(g[goal]):
        return None, expanded, g
    path = [goal]
    while path[-1] != start:
        path.append(came[path[-1]])
    return path[::-1], expanded, g


@program((np.array([[0, 16, 13, 0, 0, 0], [0, 0, 10, 12, 0, 0], [0, 4, 0, 0, 14, 0], [0, 0, 9, 0, 0, 20],
                    [0, 0, 0, 7, 0, 4], [0, 0, 0, 0, 0, 0]], np.int32), 0, 5),
         (np.array([[0, 3], [0, 0]], np.int32), 1, 0))
def edmonds_karp_max_flow(cap, s, t):
    n = len(cap)
    flow = np.zeros_like(cap)
    total = 0
    augment = 0
    while True:
        parent = np.full(n, -1)
        parent[s] = s
        q = deque([s])
        while q and parent[t] < 0:
            u = q.popleft()
            resid = cap[u] - flow[u]
            for v in np.flatnonzero((resid > 0) & (parent < 0)):
                parent[v] = u
                q.append(v)
        if parent[t] < 0:
            break
        path_cap, v = np.iinfo(cap.dtype).max, t
        while v != s:
            u = parent[v]
            path_cap = min(path_cap, cap[u, v] - flow[u, v])
            v = u
        v = t
        while v != s:
            u = parent[v]
            flow[u, v] += path_cap
            flow[v, u] -= path_cap
            v = u
        total += path_cap
        augment += 1
    return total, np.maximum(flow, 0), augment


# ----------------------------------------------------------------------------- bytes and strings

@program((b"abracadabra alakazam",), (b"aaaa",), (b"",))
def huffman_code_lengths(data):
    arr = np.frombuffer(data, dtype=np.uint8)
    if len(arr) == 0:
        return {}, 0, 0.0
    syms, counts = np.unique(arr, return_counts=True)
    if len(syms) == 1:
        return {int(syms[0]): 1}, int(counts[0]), 1.0
    heap = [(int(c), i, [int(s)]) for i, (s, c) in enumerate(zip(syms, counts))]
    heapq.heapify(heap)
    length = Counter()
    uid = len(heap)
    while len(heap) > 1:
        c1, _, s1 = heapq.heappop(heap)
        c2, _, s2 = heapq.heappop(heap)
        for s in s1 + s2:
            length[s] += 1
        heapq.heappush(heap, (c1 + c2, uid, s1 + s2))
        uid += 1
    lens = np.array([length[int(s)] for s in syms])
    bits = int((lens * counts).sum())
    p = counts / counts.sum()
    entropy = -(p * np.log2(p)).sum()
    return dict(zip(syms.tolist(), lens.tolist())), bits, bits / len(arr) - entropy


@program((b"TOBEORNOTTOBEORTOBEORNOT",), (b"",), (bytes(range(5)) * 3,))
def lzw_compress(data):
    table = {bytes([i]): i for i in range(256)}
    w = b""
    out = []
    for byte in data:
        wc = w + bytes([byte])
        if wc in table:
            w = wc
        else:
            out.append(table[w])
            table[wc] = len(table)
            w = bytes([byte])
    if w:
        out.append(table[w])
    codes = np.array(out, dtype=np.uint16)
    width = max(9, int(np.ceil(np.log2(len(table)))))
    return codes, len(codes) * width / max(len(data) * 8, 1), len(table)


_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"


@program((np.array([0, 35, 36, 1295, -46655, 2 ** 40, np.iinfo(np.int64).max]),), (np.array([7, -7], np.int32),),
         (np.array([], np.int64),))
def base36_roundtrip(values):
    strs = []
    for v in values.tolist():
        neg, v = v < 0, abs(v)
        digits = []
        while True:
            v, r = divmod(v, 36)
            digits.append(_B36[r])
            if v == 0:
                break
        strs.append(("-" if neg else "") + "".join(reversed(digits)))
    back = np.array([int(s, 36) for s in strs], dtype=values.dtype)
    lens = np.array([len(s) for s in strs], dtype=np.int64)
    return strs, back, lens, np.array_equal(back, values)


@program((np.array([[4, 5, 3, 9, 1, 4, 8, 8, 0, 3, 4, 3, 6, 4, 6], [7, 9, 9, 2, 7, 3, 9, 8, 7, 1, 0, 0, 0, 0, 0]], np.int32),),
         (np.zeros((0, 6), np.int32),), (np.array([[0]]),))
def luhn_check_digits(payload):
    n = payload.shape[1]
    rev = payload[:, ::-1]
    doubled = rev.copy()
    doubled[:, 0::2] *= 2
    doubled = np.where(doubled > 9, doubled - 9, doubled)
    check = (10 - doubled.sum(axis=1) % 10) % 10
    full = np.hstack([payload, check[:, None]])
    # verify: from the right, every second digit (the check digit itself not doubled)
    v = full[:, ::-1].copy()
    v[:, 1::2] *= 2
    v = np.where(v > 9, v - 9, v)
    return check, full, (v.sum(axis=1) % 10 == 0).all(), n


# ----------------------------------------------------------------------------- data and numerics

@program((np.array([0, 60, 200, 2100, 2150, 9000, 9001, 9002, 20000], np.int64), np.array([1, 1, 2, 1, 1, 2, 2, 1, 1]), 1800),
         (np.array([], np.int64), np.array([], np.int64), 1800),
         (np.array([5, 1, 3], np.int64), np.array([0, 0, 0]), 1))
def sessionize_clickstream(ts, user, gap):
    order = np.lexsort((ts, user))
    t, u = ts[order], user[order]
    new = np.ones(len(t), dtype=bool)
    new[1:] = (u[1:] != u[:-1]) | (np.diff(t) > gap)
    sid = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    if len(starts) == 0:
        return sid, np.zeros(0, np.int64), {}
    dur = np.maximum.reduceat(t, starts) - t[starts]
    per_user = {}
    for uu, d in zip(u[starts].tolist(), dur.tolist()):
        per_user.setdefault(uu, []).append(d)
    return sid, dur, per_user


@program((np.random.default_rng(31), np.arange(100.0) ** 2, 5), (np.random.default_rng(32), np.arange(3, dtype=f32), 5),
         (np.random.default_rng(33), np.arange(10, dtype=i32), 0))
def reservoir_sampling(rng, stream, k):
    res = list(stream[:k])
    for i in range(k, len(stream)):
        j = rng.integers(0, i + 1)
        if j < k:
            res[j] = stream[i]
    out = np.array(res, dtype=stream.dtype)
    return out, np.sort(out), rng.random()


@program((250000.0, 0.045, 30, 200.0), (1000.0, 0.0, 1, 0.0), (5000.0, 0.12, 2, 10000.0))
def amortisation_with_extra_payment(principal, annual_rate, years, extra):
    r = annual_rate / 12
    n = years * 12
    pay = principal / n if r == 0 else principal * r / (1 - (1 + r) ** -n)
    bal = principal
    rows = []
    month = 0
    while bal > 0.005 and month < n:
        interest = round(bal * r, 2)
        princ = min(pay - interest + extra, bal)
        bal = round(bal - princ, 2)
        rows.append((interest, princ, bal))
        month += 1
    sched = np.array(rows)
    return sched, month, sched[:, 0].sum(), n - month


@program((np.linspace(2.8, 4.0, 13), 0.3, 500, 100), (np.array([3.2, 3.9], f32), f32(0.5), 50, 10))
def logistic_map_lyapunov(rs, x0, n, burn):
    lyap = np.zeros_like(rs)
    finals = np.empty_like(rs)
    for k, r in enumerate(rs):
        x = x0
        acc = 0.0
        for i in range(n):
            x = r * x * (1 - x)
            if i >= burn:
                acc += math.log(abs(r * (1 - 2 * x)) + 1e-300)
        lyap[k] = acc / (n - burn)
        finals[k] = x
    return lyap, finals, rs[lyap > 0]


@program((np.int32(1), np.int32(1), 60), (np.int32(-5), np.int32(3), 5),
         (np.array(1, np.int32), np.array(1, np.int32), 50))
def int32_fibonacci_wrap(a0, b0, n):
    with np.errstate(over="ignore"):
        seq = np.empty(n, dtype=np.int32)
        a, b = a0, b0
        for i in range(n):
            seq[i] = a
            a, b = b, a + b
    exact = [int(a0), int(b0)]
    while len(exact) < n:
        exact.append(exact[-1] + exact[-2])
    exact = exact[:n]
    first_wrong = next((i for i in range(n) if int(seq[i]) != exact[i]), None)
    return seq, first_wrong, seq.astype(np.int64).sum(), type(a).__name__


@program((np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5], np.int32), np.arange(11.0)), (np.array([], np.int32), np.array([])),
         (np.array([-2, 7, -2, 0], np.int64), np.array([1.0, 2.0, 3.0, 4.0], f32)))
def stable_counting_sort(keys, payload):
    if len(keys) == 0:
        return keys.copy(), payload.copy(), np.zeros(0, np.int64)
    lo = keys.min()
    shifted = (keys - lo).astype(np.int64)
    counts = np.bincount(shifted)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    pos = np.empty(len(keys), np.int64)
    nxt = starts.copy()
    for i, kk in enumerate(shifted):
        pos[i] = nxt[kk]
        nxt[kk] += 1
    out_k = np.empty_like(keys)
    out_p = np.empty_like(payload)
    out_k[pos] = keys
    out_p[pos] = payload
    assert (out_k == np.sort(keys, kind="stable")).all()
    return out_k, out_p, pos


# (every program ran on cpp, cpp-dynamic, eager and aot_eager, with the cost model on and
# off, when written; the fused ones and those of the fixes keep C++ in the suite's budget)
_CPP = ("catalogue_crossmatch", "magnitudes_and_colours", "tajima_d", "split_step_schrodinger",
        "feedforward_compressor", "yin_pitch", "scanline_fill_even_odd", "clipped_sprite_blit",
        "ols_hc_standard_errors", "luhn_check_digits", "sessionize_clickstream", "int32_fibonacci_wrap")
test_program = program_test({k: PROGRAMS[k] for k in _CPP}, ["cpp"])
test_program_eager = program_test(PROGRAMS, ["eager", "aot_eager"], share=4)
