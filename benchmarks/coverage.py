"""The NumPy programs of the coverage issue (#14), each timed compiled against NumPy.

    python -m benchmarks.coverage [--rounds N] [--only NAME,NAME] [--json]

A Mandelbrot set (complex arithmetic in a loop), an FFT-based convolution, a histogram
of a boolean-mask selection and a complex spectral step. tests/test_numpy_targets.py runs
the same functions at small sizes and checks that each is one graph matching NumPy; here
they run at benchmark sizes, with medians of interleaved NumPy and kiln rounds
(``idioms.measure``), so a ratio below 1.0 means kiln is slower than NumPy.
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings

import numpy as np

from .harness import _loadavg
from .idioms import Idiom, measure


def mandelbrot(c, iterations):
    z = np.zeros_like(c)
    count = np.zeros(c.shape, np.int64)
    for _ in range(iterations):
        z = z * z + c
        inside = np.abs(z) <= 2.0
        count += inside
        z = np.where(inside, z, 2.0)
    return count


def fft_convolve(a, v):
    n = a.shape[0] + v.shape[0] - 1
    return np.fft.irfft(np.fft.rfft(a, n) * np.fft.rfft(v, n), n)


def masked_histogram(x, threshold):
    return np.histogram(x[x > threshold], bins=8, range=(0.0, 3.0))


def spectral_step(u, dt, nu):
    """One step of the heat equation u_t = nu u_xx, exactly in Fourier space."""
    k = 2 * np.pi * np.fft.fftfreq(u.shape[-1])
    uh = np.fft.fft(u) * np.exp(-nu * k ** 2 * dt + 1j * k * dt)
    return np.fft.ifft(uh).real, np.abs(uh).sum(), np.angle(uh[1])


def _grid(rng, small):
    nx, ny = (40, 30) if small else (600, 400)
    xs, ys = np.meshgrid(np.linspace(-2.0, 1.0, nx), np.linspace(-1.5, 1.5, ny))
    return (xs + 1j * ys, 25 if small else 50)


def _signals(rng, small):
    return (rng.standard_normal(50 if small else 100_000), rng.standard_normal(7 if small else 301))


def _samples(rng, small):
    return (rng.standard_normal(200 if small else 1_000_000) * 2, 0.5)


def _field(rng, small):
    return (rng.standard_normal(64 if small else 1 << 16), 0.01, 0.5)


TARGETS = [
    Idiom("mandelbrot", mandelbrot, _grid, "complex"),
    Idiom("fft_convolve", fft_convolve, _signals, "fft"),
    Idiom("masked_histogram", masked_histogram, _samples, "selection"),
    Idiom("spectral_step", spectral_step, _field, "fft"),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", default="")
    ap.add_argument("--json", action="store_true")
    opts = ap.parse_args(argv)
    chosen = [t for t in TARGETS if not opts.only or t.name in opts.only.split(",")]
    warnings.simplefilter("ignore")
    rows = [measure(t, opts.rounds) for t in chosen]
    if opts.json:
        print(json.dumps({"rows": rows, "loadavg": _loadavg()}, indent=1))
        return 0
    print(f"{'target':20s} {'compile':>10s} {'NumPy us':>11s} {'kiln us':>11s} {'NumPy/kiln':>10s}")
    for r in rows:
        print(f"{r['name']:20s} {r['compile_s'] * 1e3:8.0f}ms {r['numpy_us']:11.1f} "
              f"{r['kiln_us']:11.1f} {r['speedup']:9.2f}x")
    print(f"load average {_loadavg():.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
