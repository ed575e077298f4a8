"""Signal- and image-processing programs through kiln.compile, checked like
tests/test_programs.py (values, dtypes, shapes, exceptions, arguments after the call,
aliasing, layouts) on every backend: FIR filters as shifted sums, uint8 images
(contrast, wrap-around, thresholds, histogram equalization, blending), Sobel, morphology
with shifted slices, downsampling, sliding windows, resampling by fancy indexing, and
NumPy's edge cases (integer division by zero, ufunc keywords, NEP 50 scalars, broadcast
errors). One call shape per program where possible: each distinct graph is a g++ build.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import kiln

from tests.test_programs import BACKENDS, program_registry, program_test

f32, f64, u8 = np.float32, np.float64, np.uint8
_rng = np.random.default_rng(2026)


def rn(*shape, dtype=f64):
    return _rng.standard_normal(shape).astype(dtype)


def img8(*shape):
    return _rng.integers(0, 256, shape).astype(u8)


PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)


@program((rn(24, dtype=f32), np.array([0.1, 0.2, 0.3, 0.4], dtype=f32)))
def fir_shifted_sum(x, h):
    y = np.zeros_like(x)
    n = x.shape[0]
    for i in range(h.shape[0]):
        y[i:] += h[i] * x[:n - i]
    return y


@program((img8(6, 5, 3), 1.3, 20), (img8(2, 2, 3), 2, 300))
def brightness_contrast(img, alpha, beta):
    out = img.astype(np.float32) * alpha + beta
    np.clip(out, 0, 255, out=out)
    return out.astype(np.uint8), img.mean()


@program((img8(6, 5),))
def uint_wraparound(img):
    a = img + 100
    b = img - np.uint8(10)
    d = img.astype(np.int16) - 128
    e = (img // 3) % 7
    return a, b, img * 2, d, e


@program((img8(8, 8), 128))
def threshold_inplace(img, t):
    mask = img > t
    binary = np.where(mask, 255, 0).astype(img.dtype)
    img[~mask] = 0
    return binary, mask.sum(), img


@program((img8(9, 7),))
def hist_equalize(img):
    hist = np.bincount(img.ravel(), minlength=256)
    cdf = hist.cumsum()
    cdf_min = cdf[cdf > 0].min()
    lut = np.round((cdf - cdf_min) / (img.size - cdf_min) * 255)
    return np.clip(lut, 0, 255).astype(np.uint8)[img], hist


@program((img8(4, 5, 3), img8(4, 5, 3), img8(4, 5)))
def alpha_blend_u8(fg, bg, alpha):
    a = alpha[..., None].astype(np.uint16)
    out = (fg.astype(np.uint16) * a + bg.astype(np.uint16) * (255 - a) + 127) // 255
    return out.astype(np.uint8), fg // 2 + bg // 2, fg + bg


@program((img8(9, 8),))
def sobel(img):
    f = img.astype(np.float64)
    gx = (f[:-2, 2:] + 2 * f[1:-1, 2:] + f[2:, 2:]) - (f[:-2, :-2] + 2 * f[1:-1, :-2] + f[2:, :-2])
    gy = (f[2:, :-2] + 2 * f[2:, 1:-1] + f[2:, 2:]) - (f[:-2, :-2] + 2 * f[:-2, 1:-1] + f[:-2, 2:])
    mag = np.hypot(gx, gy)
    return mag, np.degrees(np.arctan2(gy, gx)), mag > mag.mean() + mag.std()


@program((rn(7, 9) > 0.5,))
def morphology(mask):
    p = np.pad(mask, 1)
    dil = p[1:-1, 1:-1] | p[:-2, 1:-1] | p[2:, 1:-1] | p[1:-1, :-2] | p[1:-1, 2:]
    ero = p[1:-1, 1:-1] & p[:-2, 1:-1] & p[2:, 1:-1] & p[1:-1, :-2] & p[1:-1, 2:]
    return dil, ero, dil & ~ero, np.count_nonzero(dil ^ mask)


@program((rn(6, 8),))
def downsample(x):
    h, w = x.shape
    return x[::2, ::2], x.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3)), x[1::2, ::3].copy()


@program((rn(30), 5))
def sliding_stats(x, w):
    v = sliding_window_view(x, w)
    return v.mean(axis=-1), v.max(axis=1), v.std(axis=-1), v[::2]


@program((rn(6, 7), 11, 13))
def resize_bilinear(img, nh, nw):
    # img[y0][:, x0] is laid out with axis 0 fastest; what is computed from it follows
    # (dynamic sizes returned it C-ordered)
    h, w = img.shape
    y, x = np.linspace(0, h - 1, nh), np.linspace(0, w - 1, nw)
    y0, x0 = np.floor(y).astype(int), np.floor(x).astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    wy, wx = (y - y0)[:, None], (x - x0)[None, :]
    a, b, c, d = img[y0][:, x0], img[y0][:, x1], img[y1][:, x0], img[y1][:, x1]
    return (a * (1 - wx) + b * wx) * (1 - wy) + (c * (1 - wx) + d * wx) * wy


@program((np.asfortranarray(rn(6, 8)),), (img8(6, 8)[:, ::-1],))
def gradient_into_zeros_like(img):
    # g[:, 1:-1] = ... into a Fortran-ordered zeros_like stays Fortran-ordered
    f = img.astype(np.float64)
    norm = (f - f.min()) / (np.ptp(f) + 1e-12)
    gx = np.zeros_like(f)
    gx[:, 1:-1] = f[:, 2:] - f[:, :-2]
    return norm, gx, f.ravel(order="K")


@program((np.arange(-6, 6), np.array([0, -1, 2, -2, 1, 0] * 2)),
         (np.arange(-6, 6, dtype=np.int8), np.array([0, -1, 2, -2, 1, 3] * 2, dtype=np.int8)))
def intdiv_mod_zero(a, b):
    q, r = np.divmod(a, b)
    return a // b, a % b, q, r, np.fmod(a, b), np.remainder(a, -3), np.floor_divide(a, 0)


@program((rn(6), rn(6), rn(6) > 0))
def ufunc_where_out(a, b, m):
    out = np.full_like(a, -1.0)
    np.add(a, b, out=out, where=m)
    s = np.sqrt(np.abs(a), out=np.zeros_like(a), where=a > 0)
    return out, s, np.multiply(a, 3, dtype=np.float32)


@program((img8(5), np.int64(3)), (img8(5), 3), (rn(4, dtype=f32), np.float64(2)), (rn(4, dtype=f32), 2.0))
def nep50_scalars(a, s):
    r = a + s
    return r, a * s - s, a > s, np.maximum(a, s)


@program((img8(5),))
def nep50_overflow(a):
    return a + 300


@program((np.zeros(6), np.array([0, 1, 1, 5, 0]), rn(5)))
def ufunc_at_and_methods(acc, idx, v):
    np.add.at(acc, idx, v)
    np.maximum.at(acc, idx[:2], 0.5)
    return acc, np.add.accumulate(v), np.subtract.outer(v, v[:2]), np.multiply.reduce(v)


@program((rn(20, 2), 5))
def histogram2d_counts(p, bins):
    # NumPy's counts are a window of a bigger array (strides of a 7x7 one): returned as
    # they are, though a kernel reads them (H.sum()) in C order
    H, xe, ye = np.histogram2d(p[:, 0], p[:, 1], bins=bins)
    return H, xe, ye, H.sum(), H / H.max()


def cn(*shape, dtype=np.complex128):
    return (rn(*shape) + 1j * rn(*shape)).astype(dtype)


@program((cn(12),), (cn(6, dtype=np.complex64),))
def complex_power_fast_paths(z):
    # z ** 2 is np.square(z), z ** -1 np.reciprocal, z ** 0.5 np.sqrt (ndarray.__pow__'s
    # fast paths); np.power(z, 2) is power's complex loop: the bits differ
    w = z.copy()
    w **= 2
    return z ** 2, np.power(z, 2), z ** -1, z ** 0.5, w, np.abs(z ** 2) ** 2


@program((rn(3, 4), rn(5)), (rn(3, 4), rn(3, 1)))
def broadcast_errors(a, b):
    a *= b
    return a


@program((rn(16), 3.0), (rn(7, dtype=f32), 0.5))
def analytic_from_parts(phase, gain):
    # a complex signal built part by part through the attribute setters
    z = np.empty(phase.shape, np.complex128 if phase.dtype == f64 else np.complex64)
    z.real = gain * np.cos(phase)
    z.imag = gain * np.sin(phase)
    return z, np.abs(z.sum()), np.angle(z)


@program((cn(4, 5), rn(4, 5)), (cn(3), 2.0), (cn(2, 3), rn(4)))
def overwrite_parts_of_an_argument(z, re):
    z.real = re                 # the caller's array, written through its real view
    z.imag = z.imag * -1.0
    w = z[:, ::2] if z.ndim == 2 else z[::2]
    w.real = 0                  # a view's parts write through to z
    return z.sum()


test_program = program_test(PROGRAMS, BACKENDS, share=8)


def test_setting_real_and_imag_is_captured():
    """``z.real = v`` / ``z.imag = v`` are ``z.real[...] = v``: a write into the part's view,
    not a graph break (a break split analytic_from_parts into three graphs)."""
    for fn, args in ((analytic_from_parts, (rn(16), 3.0)),
                     (overwrite_parts_of_an_argument, (cn(4, 5), rn(4, 5)))):
        out = kiln.explain(fn)(*args)
        assert out.graph_break_count == 0 and out.graph_count == 1, str(out)
    # a real array's .imag is a copy NumPy refuses to set: still NumPy's TypeError (its
    # text differs between NumPy versions: compared with the plain call's)
    def set_imag(x):
        x.imag = 1.0
    with pytest.raises(TypeError) as want:
        set_imag(rn(3))
    with pytest.raises(TypeError, match=re.escape(str(want.value))):
        kiln.compile(set_imag)(rn(3))
