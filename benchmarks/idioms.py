"""Short functions in the shapes NumPy users write, each timed compiled against NumPy.

    python -m benchmarks.idioms [--rounds N] [--only NAME,NAME] [--json] [--clock cpu]

Every idiom is a plain function plus an input maker (``make(rng, small)``: benchmark
sizes, or tiny ones for the correctness test in tests/test_idioms.py). Per idiom the
table shows the first compiled call (its compile), NumPy's and kiln's time per call
(medians over ``rounds`` rounds that alternate the two; each round is the mean of a batch
of calls, ``harness.per_call_us``), and NumPy / kiln (above 1: kiln is faster).
``--clock cpu`` times CPU time of the process (all its threads: a kernel on two threads
counts twice) instead of wall time; on a machine loaded by other processes it is the
steadier of the two.
"""
from __future__ import annotations

import argparse
import io
import json
import math
import statistics
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

import kiln

from .harness import _loadavg, per_call_us

SINK = io.StringIO()   # where the idioms that print write (kiln never writes to stdout)


@dataclass
class Idiom:
    name: str
    fn: Callable
    make: Callable   # (rng, small) -> tuple of arguments
    kind: str


IDIOMS: list[Idiom] = []


def idiom(kind: str, make: Callable):
    def register(fn):
        IDIOMS.append(Idiom(fn.__name__, fn, make, kind))
        return fn
    return register


def vec(n_big, n_small=7):
    return lambda rng, small: (rng.standard_normal(n_small if small else n_big),)


def mat(shape_big, shape_small=(5, 6)):
    return lambda rng, small: (rng.standard_normal(shape_small if small else shape_big),)


def two_mats(shape_big, shape_small=(5, 6)):
    return lambda rng, small: (rng.standard_normal(shape_small if small else shape_big),
                               rng.standard_normal(shape_small if small else shape_big))


# -- creation and filling ------------------------------------------------------------------
@idiom("creation", vec(800, 6))
def fill_grid(x):
    n = x.shape[0]
    z = np.zeros((n, n, 3))
    z[:, :, 0] = x.reshape(-1, 1)
    z[:, :, 1] = x
    return z.reshape(n * n, 3)


@idiom("creation", vec(200_000))
def empty_then_repeat(x):
    n, k = x.shape[0], 3
    y = np.empty(n * (k + 1))
    y[:n] = x
    y[n:] = np.repeat(x, k)
    return y


@idiom("creation", vec(500_000))
def full_then_scale(x):
    a = np.full(x.shape, 2.0)
    a *= x
    return a


@idiom("creation", mat((600, 600)))
def ones_with_border(x):
    a = np.ones(x.shape)
    a[0, :] = 0.0
    a[-1, :] = 0.0
    a[:, 0] = 0.0
    a[:, -1] = 0.0
    return a * x


@idiom("creation", vec(500_000))
def arange_polynomial(x):
    t = np.arange(x.shape[0]) * 0.001
    return 3.0 * t ** 2 + 2.0 * t + x


@idiom("creation", vec(500_000))
def linspace_wave(x):
    t = np.linspace(0.0, 1.0, x.shape[0])
    return np.sin(2 * np.pi * t) + x


# -- stencils -------------------------------------------------------------------------------
@idiom("stencil", vec(1_000_000))
def laplace_1d(u):
    return u[2:] - 2.0 * u[1:-1] + u[:-2]


@idiom("stencil", mat((800, 800)))
def laplace_2d(u):
    return u[1:-1, 2:] + u[1:-1, :-2] + u[2:, 1:-1] + u[:-2, 1:-1] - 4.0 * u[1:-1, 1:-1]


@idiom("stencil", vec(1_000_000))
def gradient_diff(x):
    return np.diff(x) / 0.01


@idiom("stencil", vec(1_000_000))
def box_smooth(x):
    return (x[:-2] + x[1:-1] + x[2:]) / 3.0


@idiom("stencil", mat((800, 800)))
def jacobi_step(u):
    v = u.copy()
    v[1:-1, 1:-1] = 0.25 * (u[1:-1, 2:] + u[1:-1, :-2] + u[2:, 1:-1] + u[:-2, 1:-1])
    return v


# -- normalization --------------------------------------------------------------------------
@idiom("normalize", mat((2000, 200)))
def zscore_columns(x):
    return (x - x.mean(axis=0)) / x.std(axis=0)


@idiom("normalize", vec(1_000_000))
def minmax_scale(x):
    lo = x.min()
    return (x - lo) / (x.max() - lo)


@idiom("normalize", mat((2000, 200)))
def unit_rows(x):
    return x / np.sqrt((x * x).sum(axis=1, keepdims=True))


@idiom("normalize", mat((2000, 200)))
def softmax_rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@idiom("normalize", mat((2000, 200)))
def layernorm_rows(x):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5)


# -- distance matrices ----------------------------------------------------------------------
@idiom("distance", two_mats((300, 3), (5, 3)))
def pairwise_broadcast(a, b):
    return np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=-1))


@idiom("distance", two_mats((500, 64), (5, 4)))
def pairwise_via_dot(a, b):
    aa = (a * a).sum(axis=1)[:, None]
    bb = (b * b).sum(axis=1)[None, :]
    return np.sqrt(np.maximum(aa + bb - 2.0 * a @ b.T, 0.0))


def _three_mats(rng, small):
    n = 4 if small else 70
    return rng.random((n, n)), rng.random((n, n)), rng.random((n, n)) + 0.5


@idiom("distance", _three_mats)
def weighted_column_distance(A, B, W):
    m, n = A.shape[1], B.shape[1]
    D = np.zeros((m, n))
    for ii in range(m):
        for jj in range(n):
            wdiff = (A[:, ii] - B[:, jj]) / W[:, ii]
            D[ii, jj] = np.sqrt((wdiff ** 2).sum())
    return D


# -- masked updates -------------------------------------------------------------------------
@idiom("masked", vec(1_000_000))
def clamp_negative_copy(x):
    y = x.copy()
    y[y < 0] = 0.0
    return y


@idiom("masked", vec(1_000_000))
def where_threshold(x):
    return np.where(x > 0.5, x - 0.5, 0.0)


@idiom("masked", vec(1_000_000))
def masked_mean(x):
    m = x > 0
    return (x * m).sum() / m.sum()


def _selection_mean(n, dtype, share):
    """``x[m].mean()`` of n values of dtype, a random mask selecting ``share`` of them."""
    def make(rng, small):
        size = 7 if small else n
        m = rng.random(size) < share
        m[0] = True   # (never an empty selection: the tiny test's NumPy would warn)
        return rng.standard_normal(size).astype(dtype), m

    def fn(x, m):
        return x[m].mean()
    fn.__name__ = f"selection_mean_{np.dtype(dtype).name}_{'sparse' if share < 0.5 else 'random'}_{n:.0e}".replace("e+0", "e")
    return idiom("masked", make)(fn)


for _n in (100_000, 10_000_000):
    for _dtype in (np.float32, np.float64):
        for _share in (0.5, 0.01):
            _selection_mean(_n, _dtype, _share)


@idiom("masked", vec(1_000_000))
def relu_out(x):
    y = np.empty_like(x)
    np.maximum(x, 0.0, out=y)
    return y


def _points_and_centers(rng, small):
    n, k, d = (12, 3, 2) if small else (20_000, 16, 4)
    centers = rng.standard_normal((k, d)) * 4
    centers[-1] = 1e3   # far from every point: an empty cluster
    return rng.standard_normal((n, d)) * 4, centers


@idiom("masked", _points_and_centers)
def kmeans_step_empty_rows(X, C):
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    lab = d.argmin(1)
    newC = np.zeros_like(C)
    np.add.at(newC, lab, X)
    cnt = np.bincount(lab, minlength=len(C))
    empty = cnt == 0
    newC[~empty] /= cnt[~empty, None]
    newC[empty] = C[empty]
    return newC


# -- small ODE right-hand sides ------------------------------------------------------------
def _ode_args(rng, small):
    return (0.0, 1.0, 2.0, 3.0, 10.0, 28.0, 8.0 / 3.0)


@idiom("ode", _ode_args)
def lorenz_rhs_empty(t, x, y, z, sigma, rho, beta):
    yprime = np.empty(3)
    yprime[0] = sigma * (y - x)
    yprime[1] = x * (rho - z) - y
    yprime[2] = x * y - beta * z
    return yprime


def _state(rng, small):
    return (0.0, rng.standard_normal(3), 10.0, 28.0, 8.0 / 3.0)


@idiom("ode", _state)
def lorenz_rhs_array(t, s, sigma, rho, beta):
    x, y, z = s
    return np.array([sigma * (y - x), x * (rho - z) - y, x * y - beta * z])


def _pendulum(rng, small):
    return (0.0, rng.standard_normal(2), 9.81, 1.0, 0.1)


@idiom("ode", _pendulum)
def damped_pendulum(t, s, g, length, damping):
    out = np.zeros(2)
    out[0] = s[1]
    out[1] = -g / length * np.sin(s[0]) - damping * s[1]
    return out


# -- reductions with keepdims --------------------------------------------------------------
@idiom("reduce", mat((2000, 300)))
def center_rows(x):
    return x - x.mean(axis=1, keepdims=True)


@idiom("reduce", mat((2000, 300)))
def scale_by_column_max(x):
    return x / np.abs(x).max(axis=0, keepdims=True)


@idiom("reduce", mat((2000, 300)))
def column_variance(x):
    return x.var(axis=0)


@idiom("reduce", mat((1000, 1000)))
def frobenius(x):
    return np.sqrt((x * x).sum())


# -- cumulative sums ----------------------------------------------------------------------
@idiom("cumsum", vec(1_000_000))
def cdf_normalize(x):
    c = np.cumsum(np.abs(x))
    return c / c[-1]


@idiom("cumsum", vec(1_000_000, 40))
def running_mean(x):
    c = np.cumsum(x)
    return (c[16:] - c[:-16]) / 16.0


@idiom("cumsum", mat((1000, 500)))
def cumsum_rows(x):
    return np.cumsum(x * 0.5, axis=1)


# -- outer products ------------------------------------------------------------------------
@idiom("outer", two_mats((1000,), (5,)))
def outer_add(a, b):
    return a[:, None] + b[None, :]


@idiom("outer", two_mats((1000,), (5,)))
def outer_scaled(a, b):
    return np.outer(a, b) * 2.0


@idiom("outer", two_mats((1000,), (5,)))
def gaussian_kernel(a, b):
    return np.exp(-(a[:, None] - b[None, :]) ** 2 / (2 * 0.3 ** 2))


def _decays(rng, small):
    n, t = (4, 6) if small else (1000, 1000)
    return rng.random(n) + 0.5, np.linspace(0.0, 5.0, t)


@idiom("outer", _decays)
def decay_curves(amplitude, t):
    # a costly row (exp of the time axis) broadcast down every curve
    return amplitude[:, None] * np.exp(-t / 1.5)


def _signal(rng, small):
    return rng.standard_normal(40 if small else 16000).astype(np.float32), 16 if small else 512, 5 if small else 160


@idiom("outer", _signal)
def signal_frames(x, n_fft, hop):
    # audio framing: windows of a pre-emphasized signal every hop samples, tapered
    e = np.append(x[0], x[1:] - 0.97 * x[:-1])
    return np.lib.stride_tricks.sliding_window_view(e, n_fft)[::hop] * np.hanning(n_fft)


# -- integer arithmetic ---------------------------------------------------------------------
def _ints(rng, small):
    return (rng.integers(0, 1 << 20, 7 if small else 1_000_000),)


@idiom("integer", _ints)
def int_hash(x):
    return (x * 2654435761) % 4294967296


@idiom("integer", _ints)
def int_bits(x):
    return ((x >> 3) & 7) | (x << 2)


@idiom("integer", _ints)
def int_mod_sum(x):
    return (x % 7).sum()


@idiom("integer", _ints)
def int_to_float_scale(x):
    return x.astype(np.float64) / 1048576.0 - 0.5


# -- mixed array and scalar code -------------------------------------------------------------
def _vec_and_scalars(rng, small):
    return (rng.standard_normal(7 if small else 1_000_000), 0.5, -1.25, 2.0)


@idiom("mixed", _vec_and_scalars)
def cubic_with_scalars(x, a, b, c):
    return a * x ** 3 + b * x ** 2 + c * x + 1.0


@idiom("mixed", _vec_and_scalars)
def relaxation_loop(x, alpha, beta, gamma):
    for _ in range(5):
        x = x * alpha + beta
    return x * gamma


@idiom("mixed", vec(100_000))
def exp_normalize_log(x):
    p = np.exp(x)
    p /= p.sum()
    return np.log(p).sum()


@idiom("mixed", vec(1_000_000))
def logsumexp(x):
    m = x.max()
    return m + np.log(np.exp(x - m).sum())


@idiom("mixed", vec(3, 3))
def tiny_vector_normalize(x):
    return x / np.sqrt((x * x).sum())


# -- graph breaks between array steps ------------------------------------------------------
@idiom("breaks", vec(1_000_000))
def print_between_steps(x):
    y = np.sin(x) * 2.0
    print("step", y.shape, file=SINK)
    return np.cos(y) + 1.0


@idiom("breaks", vec(1_000_000))
def dict_between_steps(x):
    stats = {"mean": x.mean(), "scale": 2.0}
    y = (x - stats["mean"]) * stats["scale"]
    stats["max"] = y.max()
    return y / stats["max"]


@idiom("breaks", vec(300_000))
def list_of_steps(x):
    parts = []
    for k in range(3):
        parts.append(np.tanh(x * (k + 1)))
    return np.stack(parts).sum(axis=0)


# -- measurement ----------------------------------------------------------------------------
def _median_us(fn: Callable, args: tuple, calls: int, rounds: int) -> float:
    return statistics.median(per_call_us(fn, args, calls, 1) for _ in range(rounds))


def measure(it: Idiom, rounds: int, clock: Callable[[], float] = time.perf_counter) -> dict:
    args = it.make(np.random.default_rng(0), False)
    compiled = kiln.compile(it.fn)
    start = time.perf_counter()
    compiled(*args)
    first_s = time.perf_counter() - start
    compiled(*args)
    one = max(per_call_us(it.fn, args, 1, 3), 1.0)
    calls = max(1, min(20000, int(20_000 / one)))   # a batch of about 20 ms
    numpy_t, kiln_t = [], []
    for _ in range(rounds):
        numpy_t.append(per_call_us(it.fn, args, calls, 1, clock))
        kiln_t.append(per_call_us(compiled, args, calls, 1, clock))
    numpy_us, kiln_us = statistics.median(numpy_t), statistics.median(kiln_t)
    return {"name": it.name, "kind": it.kind, "compile_s": first_s, "numpy_us": numpy_us,
            "kiln_us": kiln_us, "speedup": numpy_us / kiln_us}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", default="")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    opts = ap.parse_args(argv)
    clock = time.process_time if opts.clock == "cpu" else time.perf_counter
    chosen = [i for i in IDIOMS if not opts.only or i.name in opts.only.split(",")]
    warnings.simplefilter("ignore")
    rows = []
    for it in chosen:
        rows.append(measure(it, opts.rounds, clock))
        if not opts.json:
            r = rows[-1]
            print(f"{r['name']:28s} {r['kind']:10s} {r['compile_s'] * 1e3:9.0f} ms "
                  f"{r['numpy_us']:11.1f} {r['kiln_us']:11.1f} {r['speedup']:8.2f}x", flush=True)
    geo = math.exp(statistics.fmean(math.log(r["speedup"]) for r in rows))
    if opts.json:
        print(json.dumps({"rows": rows, "geomean": geo, "loadavg": _loadavg(), "clock": opts.clock}, indent=1))
    else:
        slow = [r["name"] for r in rows if r["speedup"] < 1.0]
        print(f"{'':28s} {'':10s} {'compile':>12s} {'NumPy us':>11s} {'kiln us':>11s} {'NumPy/kiln':>9s}")
        print(f"geomean speedup {geo:.2f}x over {len(rows)} idioms ({opts.clock} time); below 1.0x: "
              f"{', '.join(slow) or 'none'}; load average {_loadavg():.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
