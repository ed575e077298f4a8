"""Programs shaped like real open-source NumPy code (numpy-financial, filterpy, scipy.signal,
array-api-compat's wrappers, pvlib's SPA, scikit-image's colour conversions, numpy-ml's
convolutions and DSP, Philip Mocz's n-body and SPH codes), written for these tests and
checked like tests/test_programs.py (values, dtypes, shapes, exceptions, argument states,
aliasing) on cpp and eager. The first four are the patterns that found bugs in this hunt:
a ``__signature__``-advertising ``*args`` wrapper, one decorator code wrapping two
functions, np.delete in a loop whose array shrinks to two elements, and composites made
dynamic at an example of two.
"""
from __future__ import annotations

import functools
import inspect
import sys

import numpy as np

from tests.test_programs import program_registry, program_test

_rng = np.random.default_rng(4242)
PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)
f32 = np.float32


def rn(*shape, dtype=np.float64):
    return _rng.standard_normal(shape).astype(dtype)


# ------------ wrappers as array-api-compat and scipy.linalg write them

def _get_xp(xp):
    def inner(f):
        @functools.wraps(f)
        def wrapped_f(*args, **kwargs):
            if xp is not sys.modules.get("numpy"):   # array-api-compat's check (a break)
                raise TypeError("not NumPy")
            return f(*args, xp=xp, **kwargs)
        sig = inspect.signature(f)
        wrapped_f.__signature__ = sig.replace(parameters=[p for n, p in sig.parameters.items() if n != "xp"])
        return wrapped_f
    return inner


@_get_xp(np)
def _xp_zeros(shape, xp, *, dtype=None):
    return xp.zeros(shape, dtype=dtype)


@program((rn(2, 2), rn(3, 3)), (rn(2, 2, dtype=f32), rn(1, 1, dtype=f32)))
def block_diag_through_a_namespace(a, b):
    shapes = np.array([a.shape, b.shape])
    out = _xp_zeros(tuple(int(s) for s in shapes.sum(axis=0)), dtype=np.result_type(a, b))
    r = c = 0
    for m in (a, b):
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


def _over_batch(fn):
    def wrapper(*args, **kwargs):
        if np is not sys.modules.get("numpy"):   # (a break)
            raise TypeError("not NumPy")
        args = [np.asarray(a) for a in args]
        if any(a.ndim > 2 for a in args):
            return np.stack([fn(*[a[i] for a in args], **kwargs) for i in range(len(args[0]))])
        return fn(*args, **kwargs)
    return wrapper


@_over_batch
def _cho_factor(a, lower=False):
    c = np.linalg.cholesky(a)
    return c if lower else c.T


@_over_batch
def _cho_solve(c, b, lower=False):
    L = c if lower else c.T
    return np.linalg.solve(L.T, np.linalg.solve(L, b))


@program((rn(4, 4), rn(4)), (rn(3, 3, 3), rn(3, 3)))
def cholesky_solve_through_one_decorator(a, b):
    s = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(a.shape[-1])
    c = _cho_factor(s, lower=True)
    return _cho_solve(c, b, lower=True)


# ------------ scipy.signal.zpk2sos's pairing loop, cut down

def _nearest(fro, to):
    return np.argsort(np.abs(fro - to))[0]


@program((np.array([-1., -1., -1., -1.]), np.array([0.66 + 0.44j, 0.52 + 0.15j, 0.52 - 0.15j, 0.66 - 0.44j]), 0.0048),
         (np.array([-1., -1.]), np.array([0.5 + 0.3j, 0.5 - 0.3j]), 0.1))
def second_order_sections(z, p, k):
    p = p[np.imag(p) >= 0]
    n = len(p)
    sos = np.zeros((n, 6))
    for si in range(n - 1, -1, -1):
        worst = np.argmin(np.abs(1 - np.abs(p)))
        p1 = p[worst]
        p = np.delete(p, worst)
        z1_idx = _nearest(z, p1)
        z1 = z[z1_idx]
        z = np.delete(z, z1_idx)
        z2_idx = _nearest(z, p1)
        z2 = z[z2_idx]
        z = np.delete(z, z2_idx)
        sos[si, :3] = np.real(np.poly([z1, z2]))
        sos[si, 3:] = np.real(np.poly([p1, np.conj(p1)]))
    sos[0][:3] *= k
    return sos


@program((rn(4), 0.5), (rn(2), 0.5), (rn(4), 0.5), (rn(2), 2.0))
def composites_at_two_then_four(c, x):
    return np.delete(c, 0), np.insert(c, -1, x), np.polyval(c, x), np.array_split(c, 2)[-1]


# ------------ colour-science's as_float: a NumPy scalar type called on arrays

@program((np.array(0.3127), np.array(0.329)), (np.array([0.3127, 0.4476]), np.array([0.329, 0.4074])),
         (np.array([[0.31]]), np.array([[0.33]])))
def correlated_colour_temperature(x, y):
    n = (x - 0.3366) / (y - 0.1735)
    cct = -949.86315 + 6253.80338 * np.exp(-n / 0.92159) + 28.70599 * np.exp(-n / 0.20039)
    cct = np.where(cct > 50000, 36284.48953 + 0.00228 * np.exp(-n / 0.07861), cct)
    if isinstance(cct, np.ndarray) and cct.size == 1 and cct.ndim != 0:
        return cct.astype(np.float64)
    return np.float64(cct), np.float32(x), np.int64(np.round(y * 10))


# ------------ numpy-financial

def _when(when):
    return {"end": 0, "begin": 1}[when] if isinstance(when, str) else when


def _annuity(rate, nper, pv, fv=0.0, when="end"):
    when = _when(when)
    rate, nper, pv, fv, when = map(np.asarray, (rate, nper, pv, fv, when))
    temp = (1 + rate) ** nper
    masked = np.where(rate == 0, 1, rate)
    fact = np.where(rate == 0, nper, (1 + masked * when) * (temp - 1) / masked)
    return -(fv + pv * temp) / fact


@program((0.075 / 12, 180, 200000.0), (np.array([0.06, 0.0, 0.09]) / 12, 360, 150000.0, 0.0, "begin"),
         (np.float32(0.05), 10, np.float32(1000)), (0.05, 10, 1000.0, 0.0, "middle"))
def loan_payment(rate, nper, pv, fv=0.0, when="end"):
    return _annuity(rate, nper, pv, fv, when)


@program((np.array([-100, 39, 59, 55, 20.]),), (np.array([-5, 10.5, 1, -8, 1]),), (np.array([1., 2, 3]),),
         (np.ones((2, 2)),))
def internal_rate_of_return(values, tol=1e-12, maxiter=100):
    values = np.atleast_1d(values)
    if values.ndim != 1:
        raise ValueError("Cashflows must be a rank-1 array")
    same_sign = np.all(values > 0) if values[0] > 0 else np.all(values < 0)
    if same_sign:
        return np.nan
    npv = np.polynomial.Polynomial(values[::-1])
    d_npv = npv.deriv()
    inflow = values.sum(where=values > 0)
    g = 1 + inflow / -values.sum(where=values <= 0) - 1
    for _ in range(maxiter):
        delta = npv(g) / d_npv(g)
        if abs(delta) < tol:
            return g - 1
        g -= delta
    return np.nan


@program((0.08, np.array([-40_000, 5_000, 8_000, 12_000, 30_000.])), (np.array([0.0, 0.05, 0.1]), np.array([[-4_000, 500, 800], [-5_000, 600, 900.]])),
         (np.float32(0.05), np.array([-100, 60, 60], np.float32)))
def net_present_value(rate, values):
    values = np.atleast_2d(values)
    steps = np.arange(0, values.shape[1])
    npv = (values / (1 + np.atleast_1d(rate)[:, None, None]) ** steps).sum(axis=-1)
    try:
        return npv.item()
    except ValueError:
        return npv


# ------------ filterpy

def _kf_predict(x, P, F, Q):
    return F @ x, F @ P @ F.T + Q


def _kf_update(x, P, z, R, H):
    y = z - H @ x
    S = H @ P @ H.T + R
    K = P @ H.T @ np.linalg.inv(S)
    x = x + K @ y
    I_KH = np.eye(len(x)) - K @ H
    P = I_KH @ P @ I_KH.T + K @ R @ K.T
    return x, P, y @ np.linalg.solve(S, y)


@program((np.cumsum(rn(12, 2), axis=0), 1.0), (np.cumsum(rn(5, 2, dtype=f32), axis=0), 0.5))
def constant_velocity_kalman(zs, dt):
    F = np.array([[1, dt, 0, 0], [0, 1, 0, 0], [0, 0, 1, dt], [0, 0, 0, 1.]])
    H = np.array([[1, 0, 0, 0], [0, 0, 1, 0.]])
    q = np.array([[.25 * dt ** 4, .5 * dt ** 3], [.5 * dt ** 3, dt ** 2]]) * 0.01
    Q = np.kron(np.eye(2), q)
    x, P, R = np.zeros(4), np.eye(4) * 500., np.eye(2) * 0.3
    xs, nis = [], 0.0
    for z in zs:
        x, P = _kf_predict(x, P, F, Q)
        x, P, e = _kf_update(x, P, z, R, H)
        xs.append(x)
        nis += e
    return np.array(xs), P, nis


@program((np.array([1., 2.]), np.array([[2., .3], [.3, 1.]]), 0.1, 2.0, 1.0),
         (np.array([1., 2., 3.]), np.diag([1., 2., 3.]), 1.0, 0.0, 0.0),
         (np.array([1., 2.]), np.array([[1., 2.], [2., 1.]]), 0.1, 2.0, 1.0))
def unscented_transform(x, P, alpha, beta, kappa):
    n = len(x)
    lam = alpha ** 2 * (n + kappa) - n
    U = np.linalg.cholesky((lam + n) * P).T
    sigmas = np.zeros((2 * n + 1, n))
    sigmas[0] = x
    for k in range(n):
        sigmas[k + 1] = x + U[k]
        sigmas[n + k + 1] = x - U[k]
    Wc = np.full(2 * n + 1, .5 / (n + lam))
    Wm = Wc.copy()
    Wc[0] = lam / (n + lam) + (1 - alpha ** 2 + beta)
    Wm[0] = lam / (n + lam)
    ys = np.sin(sigmas) + sigmas ** 2
    mean = Wm @ ys
    d = ys - mean[np.newaxis, :]
    return mean, d.T @ np.diag(Wc) @ d


# ------------ pvlib's SPA: big trigonometric formulas over a time axis

_TERMS = np.array([[175347046.0, 0.0, 0.0], [3341656.0, 4.6692568, 6283.07585], [34894.0, 4.6261, 12566.1517],
                   [3497.0, 2.7441, 5753.3849], [3418.0, 2.8289, 3.5231], [3136.0, 3.6277, 77713.7715]])


def _series(arr, x):
    s = 0.
    for row in range(arr.shape[0]):
        s += arr[row, 0] * np.cos(arr[row, 1] + arr[row, 2] * x)
    return s


@program((1.6e9 + np.arange(0, 86400, 3600.), 32.2, 67.0), (1.6e9 + np.arange(0, 86400, 1800.), -33.9, 69.0))
def solar_elevation(unixtime, lat, delta_t):
    jd = unixtime / 86400.0 + 2440587.5
    jme = (jd + delta_t / 86400.0 - 2451545) / 36525 / 10
    L = np.rad2deg(_series(_TERMS, jme) / 10 ** 8) % 360
    eps = np.radians(23.439 - 0.0000004 * (jd - 2451545))
    lam = np.radians(L)
    decl = np.degrees(np.arcsin(np.sin(eps) * np.sin(lam)))
    ra = np.degrees(np.arctan2(np.cos(eps) * np.sin(lam), np.cos(lam))) % 360
    H = (280.46061837 + 360.98564736629 * (jd - 2451545) - ra) % 360
    lat_r, decl_r, H_r = np.radians(lat), np.radians(decl), np.radians(H)
    e0 = np.degrees(np.arcsin(np.sin(lat_r) * np.sin(decl_r) + np.cos(lat_r) * np.cos(decl_r) * np.cos(H_r)))
    switch = e0 >= -1.0 * (0.26667 + 0.5667)
    refr = (1010 / 1010.0) * (283.0 / 283.0) * 1.02 / (60 * np.tan(np.radians(e0 + 10.3 / (e0 + 5.11)))) * switch
    return e0 + refr, 90 - e0 - refr


# ------------ scikit-image colour conversions

@program((_rng.random((6, 7, 3)),), (_rng.random((4, 4, 3)).astype(f32),), (np.zeros((2, 2, 3)),))
def rgb_to_hsv(rgb):
    out = np.empty_like(rgb)
    v = rgb.max(-1)
    delta = np.ptp(rgb, -1)
    with np.errstate(invalid="ignore"):
        s = delta / v
    s[delta == 0.] = 0.
    with np.errstate(invalid="ignore", divide="ignore"):
        idx = rgb[..., 0] == v
        out[idx, 0] = (rgb[idx, 1] - rgb[idx, 2]) / delta[idx]
        idx = rgb[..., 1] == v
        out[idx, 0] = 2. + (rgb[idx, 2] - rgb[idx, 0]) / delta[idx]
        idx = rgb[..., 2] == v
        out[idx, 0] = 4. + (rgb[idx, 0] - rgb[idx, 1]) / delta[idx]
    h = (out[..., 0] / 6.) % 1.
    h[delta == 0.] = 0.
    out[..., 0], out[..., 1], out[..., 2] = h, s, v
    out[np.isnan(out)] = 0
    return out


@program((_rng.random((6, 7, 3)),), (_rng.random((4, 4, 3)).astype(f32),))
def hsv_to_rgb(hsv):
    hi = np.floor(hsv[..., 0] * 6)
    f = hsv[..., 0] * 6 - hi
    p = hsv[..., 2] * (1 - hsv[..., 1])
    q = hsv[..., 2] * (1 - f * hsv[..., 1])
    t = hsv[..., 2] * (1 - (1 - f) * hsv[..., 1])
    v = hsv[..., 2]
    hi, f, p, q, t, v = (a[..., np.newaxis] for a in (hi, f, p, q, t, v))
    hi = np.stack([hi, hi, hi], axis=-1).reshape(p.shape[:-1] + (3,)).astype(np.uint8) % 6
    return np.choose(hi, [np.concatenate(c, axis=-1) for c in
                          ((v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q))])


# ------------ numpy-ml: im2col convolution, mel filterbank

def _im2col_indices(X_shape, fr, fc, s):
    _, in_rows, in_cols, n_in = X_shape
    out_rows, out_cols = (in_rows - fr) // s + 1, (in_cols - fc) // s + 1
    i0 = np.tile(np.repeat(np.arange(fr), fc), n_in)
    i1 = s * np.repeat(np.arange(out_rows), out_cols)
    j0 = np.tile(np.arange(fc), fr * n_in)
    j1 = s * np.tile(np.arange(out_cols), out_rows)
    i = i0.reshape(-1, 1) + i1.reshape(1, -1)
    j = j0.reshape(-1, 1) + j1.reshape(1, -1)
    k = np.repeat(np.arange(n_in), fr * fc).reshape(-1, 1)
    return k, i, j, out_rows, out_cols


@program((rn(2, 6, 6, 3), rn(3, 3, 3, 4), 1), (rn(2, 7, 7, 3, dtype=f32), rn(2, 2, 3, 2, dtype=f32), 2))
def conv2d_by_im2col(X, W, s):
    fr, fc, in_ch, out_ch = W.shape
    k, i, j, out_rows, out_cols = _im2col_indices(X.shape, fr, fc, s)
    cols = X.transpose(0, 3, 1, 2)[:, k, i, j]
    cols = cols.transpose(1, 2, 0).reshape(fr * fc * in_ch, -1)
    W_col = W.transpose(3, 2, 0, 1).reshape(out_ch, -1)
    Z = (W_col @ cols).reshape(out_ch, out_rows, out_cols, X.shape[0]).transpose(3, 1, 2, 0)
    return Z


@program((64, 8, 16000), (32, 5, 8000.0))
def mel_filterbank(N, n_filters, fs):
    mel = lambda hz: 2595 * np.log10(1 + hz / 700)  # noqa: E731
    hz = lambda m: 700 * (10 ** (m / 2595) - 1)  # noqa: E731
    mel_bins = hz(np.linspace(mel(0), mel(fs // 2), n_filters + 2))
    hz_bins = np.fft.rfftfreq(N, 1 / fs)
    mel_spacing = np.diff(mel_bins)
    ramps = mel_bins.reshape(-1, 1) - hz_bins.reshape(1, -1)
    fbank = np.zeros((n_filters, N // 2 + 1))
    for i in range(n_filters):
        left = -ramps[i] / mel_spacing[i]
        right = ramps[i + 2] / mel_spacing[i + 1]
        fbank[i] = np.maximum(0, np.minimum(left, right))
    energy_norm = 2 / (mel_bins[2: n_filters + 2] - mel_bins[:n_filters])
    return fbank * energy_norm[:, np.newaxis]


# ------------ Philip Mocz's n-body and SPH codes

def _pairwise(pos):
    x, y, z = pos[:, 0:1], pos[:, 1:2], pos[:, 2:3]
    return x.T - x, y.T - y, z.T - z


@program((rn(20, 3), rn(20, 3), 20.0 * np.ones((20, 1)) / 20, 3, 0.01), (rn(12, 3, dtype=f32), rn(12, 3, dtype=f32), np.ones((12, 1), f32), 2, 0.01))
def nbody_leapfrog(pos, vel, mass, steps, dt):
    def acc(pos):
        dx, dy, dz = _pairwise(pos)
        inv_r3 = dx ** 2 + dy ** 2 + dz ** 2 + 0.1 ** 2
        inv_r3[inv_r3 > 0] = inv_r3[inv_r3 > 0] ** (-1.5)
        return np.hstack(((dx * inv_r3) @ mass, (dy * inv_r3) @ mass, (dz * inv_r3) @ mass))
    vel -= np.mean(mass * vel, 0) / np.mean(mass)
    a = acc(pos)
    for _ in range(steps):
        vel += a * dt / 2.0
        pos += vel * dt
        a = acc(pos)
        vel += a * dt / 2.0
    dx, dy, dz = _pairwise(pos)
    inv_r = np.sqrt(dx ** 2 + dy ** 2 + dz ** 2)
    inv_r[inv_r > 0] = 1.0 / inv_r[inv_r > 0]
    return pos, vel, np.triu(-(mass * mass.T) * inv_r, 1).sum()


@program((rn(30, 3), 0.1, 1), (rn(16, 3), 0.2, 1.5))
def sph_density_and_pressure_force(pos, h, n):
    m = 2.0 / pos.shape[0]
    dx, dy, dz = (-d for d in _pairwise(pos))
    r = np.sqrt(dx ** 2 + dy ** 2 + dz ** 2)
    rho = np.sum(m * (1.0 / (h * np.sqrt(np.pi))) ** 3 * np.exp(-r ** 2 / h ** 2), 1).reshape(-1, 1)
    P = 0.1 * rho ** (1 + 1 / n)
    g = -2 * np.exp(-r ** 2 / h ** 2) / h ** 5 / np.pi ** (3 / 2)
    coef = m * (P / rho ** 2 + P.T / rho.T ** 2)
    a = np.hstack([-np.sum(coef * g * d, 1).reshape(-1, 1) for d in (dx, dy, dz)])
    return rho, a - 2.01 * pos


# ------------ npbench's floyd_warshall: a loop whose steps use the loop variable unrolls
# into one kernel per step; the steps differ only in the offsets of column k and row k, so
# one kernel is built, taking them as arguments (lowering/renderer.py share_identical)

@program((_rng.integers(1, 100, (24, 24)).astype(np.int32),), (np.abs(rn(20, 20)),))
def floyd_warshall(path):
    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))


test_program = program_test(PROGRAMS, ["cpp", "eager"])
