"""Whole NumPy programs the coverage work targets, each one graph on the C++ backend with
no graph break, matching NumPy: a Mandelbrot set (complex arithmetic in a loop), an
FFT-based convolution, a histogram of a boolean-mask selection, a complex spectral step,
and a masked update x[m] = f(x[m]). The four targets are benchmarks/coverage.py's (timed
there against NumPy at benchmark sizes)."""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import kiln

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.coverage import (fft_convolve, mandelbrot, masked_histogram,  # noqa: E402
                                 spectral_step)


def masked_update(x):
    y = x * 2.0
    m = y > 1.0
    y[m] = np.sqrt(y[m]) - 1.0
    return y


rng = np.random.default_rng(0)
xs, ys = np.meshgrid(np.linspace(-2.0, 1.0, 40), np.linspace(-1.5, 1.5, 30))
CASES = {
    "mandelbrot": (mandelbrot, (xs + 1j * ys, 25)),
    "fft_convolve": (fft_convolve, (rng.standard_normal(50), rng.standard_normal(7))),
    "masked_histogram": (masked_histogram, (rng.standard_normal(200) * 2, 0.5)),
    "spectral_step": (spectral_step, (rng.standard_normal(64), 0.01, 0.5)),
    "masked_update": (masked_update, (rng.standard_normal(100),)),
}


def _same(got, want):
    assert type(got) is type(want)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            _same(g, w)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape
    np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", list(CASES))
def test_target_is_one_graph_matching_numpy(name):
    fn, args = CASES[name]
    # compiled kernels emit no RuntimeWarning ("always", recorded: an "error" filter would
    # send the compiled calls to the graph's NumPy program instead of the kernels)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        want = fn(*args)
        compiled = kiln.compile(fn)
        got = compiled(*args)
        again = compiled(*args)
    assert not caught, [str(w.message) for w in caught]
    _same(got, want)
    _same(again, want)
    out = kiln.explain(fn)(*args)
    assert out.graph_count == 1 and out.graph_break_count == 0, str(out)
    assert len(compiled.records) == 1   # one capture, the second call hit the cache


@pytest.mark.parametrize("dynamic", [None, True])
def test_complex_inputs_of_changing_sizes(dynamic):
    """Complex inputs of changing sizes: every call matches NumPy (a complex sum is an
    extern, the rest kernels, sizes symbolic where dynamic)."""
    fn = lambda z: (np.abs(z * 2).sum(axis=0) + 1, z.real * 3)  # noqa: E731
    compiled = kiln.compile(fn, dynamic=dynamic)
    for n in (3, 5, 7, 9):
        z = np.arange(n * 2.0).reshape(n, 2) * (1 + 1j)
        _same(compiled(z), fn(z))
