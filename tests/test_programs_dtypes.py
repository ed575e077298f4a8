"""Programs from the dtypes hunt, checked like tests/test_programs.py (values, dtypes,
shapes, exceptions, argument states, aliasing) on cpp and eager: float16 and complex
arithmetic, integer wraparound, division by zero and MIN // -1, shifts past the width,
NEP 50 scalars, NaN-aware statistics, 0-d arrays and NumPy scalars as inputs and results,
empty and 6-d arrays, read-only arrays, in-place casting rules, and ndarray subclasses
and exotic dtypes that run as Python. All passed when written (bool -> float
conversions and np.nanmax, which ran 1.5-9x slower than NumPy, are pinned as
vectorized loops in tests/lowering/test_fills.py).
"""
from __future__ import annotations

import numpy as np

from tests.test_programs import program_registry, program_test

_rng = np.random.default_rng(4711)
PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)
f16, f32, f64 = np.float16, np.float32, np.float64
I64MIN = np.iinfo(np.int64).min


def rn(*shape, dtype=np.float64):
    return _rng.standard_normal(shape).astype(dtype)


def cn(*shape, dtype=np.complex128):
    return (_rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)).astype(dtype)


# ------------ floating dtypes: float16, long float32 sums, complex


@program((rn(64, 3, dtype=f16),), (rn(64, 3, dtype=f32),))
def half_image_stats(img):
    m = img.mean(axis=0)
    s = img.std(axis=0)
    z = (img - m) / (s + 1e-3)
    return m, s, z, img.sum(), img.max(), z.dtype


@program((rn(8, dtype=f16), rn(8, dtype=f32)), (rn(8, dtype=f16), rn(8)))
def half_mixing(h, x):
    return h + x, h * 2.0, h * 2, h + np.float16(1), h.astype(np.float32).sum(), h.sum(), h.mean(), np.exp(h), h > 0, \
        h @ h, np.maximum(h, 0), h.max(), h.cumsum(), np.float16(65504) * 2, h + 70000.0


@program((rn(1000, dtype=f32) * 1e3 + 1e4,), (rn(100000, dtype=f32) + 1.0,))
def long_float32_sums(x):
    return x.sum(), x.mean(), np.sum(x * x), x.var(), np.add.reduce(x), x.sum(dtype=np.float64)


@program((cn(16),), (cn(16, dtype=np.complex64),))
def complex_dft_power(x):
    n = x.shape[0]
    k = np.arange(n)
    w = np.exp(-2j * np.pi * k[:, None] * k[None, :] / n)
    X = w @ x
    p = np.abs(X) ** 2
    return X, p, np.angle(X), X.real, X.imag, np.conj(X) * X, p.sum(), X.sum()


@program((cn(4, 4),), (cn(4, 4, dtype=np.complex64),))
def complex_linear(z):
    h = z @ z.conj().T
    nrm = np.sqrt((np.abs(z) ** 2).sum())
    return h, np.trace(h), nrm, z / nrm, np.vdot(z, z), z.mean(axis=0), z.var(), z.std(axis=1), \
        np.prod(z[0]), np.cumsum(z[:, 0])


@program((cn(6),), (np.array([0j, 1e300 + 1e300j, complex(np.inf, 0), complex(np.nan, 1)]),),
         warnings_differ={"cpp": "np.exp(nan + 1j)'s 'invalid' (cexp of a NaN part) beside the "
                                 "divides and square that may raise it too: the complex predicates "
                                 "(ops/fp_predicates.py complex_raises_where) are silent where an "
                                 "operand part is a NaN (docs/lowering.md 'What is missing')"})
def complex_edge_values(z):
    return np.abs(z), z / 0, 1 / z, np.sqrt(z), np.exp(z), np.log(z), z ** 2, z ** 0.5, np.sign(z), \
        np.isfinite(z), np.angle(z, deg=True)


@program((cn(8, dtype=np.complex64), 2.0), (cn(8, dtype=np.complex64), 3), (cn(8), 1.5))
def complex_python_scalars(z, s):
    return z * s, z + 1j, z / s, z ** 2, (z * 2.0).dtype, np.float32(2) * z, z - np.float64(1)


# ------------ integers: wraparound, division by zero, shifts, powers


@program((_rng.integers(0, 256, (6, 6), dtype=np.uint8), _rng.integers(0, 256, (6, 6), dtype=np.uint8)))
def uint8_blend(a, b):
    absdiff = np.where(a > b, a - b, b - a)
    avg = (a.astype(np.uint16) + b) // 2
    sat = np.clip(a.astype(np.int16) + b, 0, 255).astype(np.uint8)
    return a + b, a - b, absdiff, avg, avg.astype(np.uint8), sat, a.sum(), a.mean(), (a * 2).dtype, \
        a >> 2, a << 1, ~a, a ^ b


@program((np.array([I64MIN, 7, -7, 0]), np.array([-1, -1, 2, -1])),
         (np.array([np.iinfo(np.int32).min, 7], dtype=np.int32), np.array([-1, -1], dtype=np.int32)),
         (np.array([-128, 5], dtype=np.int8), np.array([-1, 0], dtype=np.int8)))
def int_min_div_minus_one(a, b):
    return a // b, a % b, np.fmod(a, b), np.divmod(a, b), a // -1, a % -1, a / b


@program((np.arange(10, dtype=np.uint32) * np.uint32(2654435761),), (np.arange(10, dtype=np.uint64) + np.uint64(2**63),))
def xorshift_hash(x):
    h = x.copy()
    h ^= h << np.uint32(13) if h.dtype == np.uint32 else h << np.uint64(13)
    h ^= h >> 7
    h ^= h << 17
    h = h * 0x9E3779B9
    return h, h % 1000, (h >> 16) & 0xFFFF, h.sum(), h.max()


@program((np.arange(5), np.array([0, 1, 63, 64, 65])),
         (np.arange(5, dtype=np.int32) - 2, np.array([0, 1, 31, 32, 100], dtype=np.int32)),
         (np.arange(5, dtype=np.uint8) + 250, np.array([0, 1, 7, 8, 9], dtype=np.uint8)))
def shifts_beyond_width(a, s):
    return a << s, a >> s, -a >> s, np.left_shift(a, s), np.right_shift(-a, s)


@program((np.array([2, 3, 4]), np.array([2, -1, 0])), (np.array([2, 3], dtype=np.int8), np.array([7, 8], dtype=np.int8)))
def int_array_powers(a, b):
    return a ** b


@program((np.array([-128, -1, 0, 127], dtype=np.int8), np.array([I64MIN, 5])),
         (np.array([-32768, 5], dtype=np.int16), np.array([np.iinfo(np.int32).min, 5], dtype=np.int32)))
def abs_of_the_most_negative(a, b):
    return np.abs(a), np.abs(b), -a, -b, np.negative(b), np.absolute(a).dtype, a.min(), np.abs(b).max()


@program((np.array([True, False, True]),), (np.array([], dtype=bool),))
def bool_arithmetic(m):
    return m.sum(), m.mean(), m + m, m * 3, m * 2.5, True + m, m.cumsum(), m.prod(), np.count_nonzero(m), \
        -m.astype(np.int8), m & True, ~m, m.any(), m.all(), m.astype(np.float32).sum()


@program((np.arange(4), 1.5), (np.arange(4), 2), (np.arange(4, dtype=np.uint8), 300), (np.arange(4, dtype=np.uint8), -1),
         (np.array([True, False]), 1), (np.arange(4, dtype=np.int16), np.float32(2.0)))
def inplace_casting_rules(a, s):
    a += s
    return a


# ------------ NaN-aware statistics, rounding, non-finite casts


@program((np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [-2.0, 5.0, np.nan]]),),
         (np.array([[1.0, np.nan], [np.nan, np.nan]], dtype=f32),))
def nan_aware_rows(x):
    return (np.nanmean(x, axis=1), np.nanmax(x, axis=1), np.nanmin(x, axis=0), np.nansum(x, axis=1),
            np.nanstd(x, axis=1), np.maximum(x, 0), np.fmax(x, 0), np.sign(x), np.isnan(x).sum(axis=1),
            np.nanprod(x, axis=0), np.nanmax(x), (x > 0).mean(axis=1))


@program((np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.45, 2.675]),), (np.array([0.5, 1.5, 2.5, -2.5], dtype=f32),))
def rounding_half_to_even(x):
    return np.round(x), np.round(x, 1), np.rint(x), np.around(x, 2), np.fix(x), np.floor_divide(x, 1.0), \
        np.floor_divide(-x, 2.0), x // -1, np.remainder(x, -1.0), np.fmod(x, -1.0)


@program((np.array([1.5, np.nan, np.inf, -np.inf, -3.7, 1e20]),), (np.array([1.5, np.nan, 300.0], dtype=f32),))
def cast_nonfinite_to_int(x):
    return x.astype(np.int64), x.astype(np.int32), x.astype(np.uint8), x.astype(np.int8), x.astype(bool)


# ------------ 0-d arrays, NumPy scalars, empty and 6-d arrays, read-only arrays


@program((np.array(2.5), rn(3)), (np.array(3, dtype=np.int32), rn(3, dtype=f32)), (np.array(True), rn(3)))
def zero_d_inputs(a, x):
    return (a + 1, np.sin(a), -a, a.copy(), a[...], a[()], np.where(a > 0, 1, 2), np.clip(a, 0, 1), a * x, a.sum(),
            a.reshape(1), np.maximum(a, 0), a.astype(np.float32), a.item(), np.stack([a, a]), a.max(keepdims=True))


@program((np.float64(2.5),), (np.float32(1.5),), (np.int8(3),), (np.bool_(True),), (np.complex64(1 + 2j),), (np.uint64(7),))
def numpy_scalar_arguments(s):
    a = np.zeros(3) + s
    return s + 1, s * s, a, np.full(2, s), np.array([s, s]), type(s * 2).__name__, np.sqrt(abs(s))


@program((np.zeros((0, 3)),), (np.zeros((0,), dtype=np.int32),), (np.zeros((2, 0)),))
def empty_reductions(x):
    out = [x.sum(), x.prod(), x.sum(axis=0), np.any(x), np.all(x)]
    try:
        out.append(x.max())
    except ValueError as e:
        out.append(str(e))
    return out


@program((rn(2, 1, 3, 1, 2, 2),), (rn(2, 3, 3, 1, 2, 2, dtype=f32),))
def six_d(x):
    y = x * x.sum(axis=(1, 3), keepdims=True) - x.mean(axis=(0, 5), keepdims=True)
    return y, y.transpose(5, 4, 3, 2, 1, 0).copy(), y.max(axis=2), np.moveaxis(y, 0, -1) + 1, \
        y.reshape(2, -1).sum(-1), y[:, 0, ..., ::-1]


_RO = rn(4)


def _read_only():
    x = _RO.copy()
    x.flags.writeable = False
    return (x,)


@program(_read_only)
def read_only_write_raises(x):
    y = x * 2
    x[0] = 1.0
    return y


@program(_read_only)
def read_only_out_raises(x):
    np.add(x, 1, out=x)
    return x


# ------------ subclasses and dtypes kiln runs as Python: the result's type is kept

_MA = np.ma.masked_array(rn(4, 3), mask=_rng.random((4, 3)) < 0.3)


@program(lambda: (np.matrix(_MA.data.copy()),))
def matrix_products(m):
    return m * m, m.T @ m, m.sum(axis=0), m.mean(), m[0], m ** 2, np.exp(m)


class _Tagged(np.ndarray):
    def __new__(cls, a, tag="t"):
        obj = np.asarray(a).view(cls)
        obj.tag = tag
        return obj

    def __array_finalize__(self, obj):
        self.tag = getattr(obj, "tag", None)


@program(lambda: (_Tagged(_MA.data.copy(), "hi"),))
def user_subclass(t):
    y = t * 2 + 1
    return y, y.sum(axis=0), np.sin(t), t[0], type(y).__name__, getattr(y, "tag", None)


@program((np.array(["2024-01-01", "2024-03-01", "2024-02-15"], dtype="datetime64[D]"),))
def dates(d):
    delta = d - d.min()
    return delta, delta.astype(np.int64) * 2.0, d + np.timedelta64(7, "D"), np.sort(d), \
        (d > np.datetime64("2024-02-01")).sum()


_S = np.zeros(4, dtype=[("x", "f8"), ("y", "f8"), ("id", "i4")])
_S["x"], _S["y"], _S["id"] = rn(4), rn(4), np.arange(4)


@program(lambda: (_S.copy(),))
def structured_fields(s):
    r = np.sqrt(s["x"] ** 2 + s["y"] ** 2)
    s["x"] *= 2
    return r, s["id"].sum(), s[r > 0.5]["id"], s


test_program = program_test(PROGRAMS, ["cpp", "eager"])
