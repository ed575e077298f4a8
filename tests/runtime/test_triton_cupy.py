"""kiln on real CuPy arrays: capture, guards, Triton kernels on the GPU (skipped without
CuPy and a CUDA device, i.e. on every CI machine; the CPU side of the same path runs in
tests/capture/test_array_kinds.py, and benchmarks/gpu_check.py checks it all on a GPU)."""
import numpy as np
import pytest

import kiln

cupy = pytest.importorskip("cupy")
try:
    _GPUS = cupy.cuda.runtime.getDeviceCount()
except Exception:   # CuPy installed, no driver or device
    _GPUS = 0
pytestmark = pytest.mark.skipif(_GPUS == 0, reason="no CUDA device")


def _close(got, want, rtol=1e-6):
    assert type(got) is cupy.ndarray and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(cupy.asnumpy(got), want, rtol=rtol, atol=1e-12)


def test_device_follows_data_with_guards_on_type_and_device():
    def f(x, y):
        return np.maximum(np.sin(x) * y, 0.0).sum(axis=1)
    xh = np.random.default_rng(0).standard_normal((64, 100))
    x = cupy.asarray(xh)
    cf = kiln.compile(f)
    for scale in (2.0, 3.0):
        _close(cf(x, scale), f(xh, scale))
    assert len(cf.cache_entries) == 1
    guards = kiln.explain(f)(x, 2.0).guards
    assert "type(x) is cupy.ndarray" in guards and "x.device.id == 0" in guards
    _close(cf(x.astype(np.float32), 2.0), f(xh.astype(np.float32), 2.0), rtol=1e-5)
    assert len(cf.cache_entries) == 2
    np.testing.assert_allclose(cf(xh, 2.0), f(xh, 2.0))     # NumPy arrays: the C++ backend


def test_a_graph_break_runs_eagerly_on_cupy():
    def f(x):
        s = float(x.max())          # an explicit copy of one value, as in the user's code
        return np.tanh(x / s) * 2
    xh = np.linspace(0.5, 2.0, 1000)
    assert kiln.explain(f)(cupy.asarray(xh)).graph_break_count == 1
    _close(kiln.compile(f)(cupy.asarray(xh)), f(xh))


def test_mixing_and_implicit_copies_raise_as_cupy_does():
    x = cupy.arange(4.0)
    for fn in (lambda x: x + np.ones(4), lambda x: np.asarray(x) * 2):
        with pytest.raises(TypeError):
            fn(x)
        with pytest.raises(TypeError):
            kiln.compile(fn)(x)


def test_a_training_step_with_value_and_grad():
    def step(w, x, y, lr):
        def loss(w):
            p = np.tanh(x @ w)
            return ((p - y) ** 2).mean()
        value, grad = kiln.value_and_grad(loss)(w)
        return w - lr * grad, value
    rng = np.random.default_rng(1)
    w, x, y = rng.standard_normal(8), rng.standard_normal((32, 8)), rng.standard_normal(32)
    p = np.tanh(x @ w)
    grad = x.T @ (2 * (p - y) * (1 - p ** 2)) / len(y)
    new_w, value = kiln.compile(step)(*map(cupy.asarray, (w, x, y)), 0.1)
    _close(new_w, w - 0.1 * grad, rtol=1e-10)
    np.testing.assert_allclose(float(value), ((p - y) ** 2).mean(), rtol=1e-12)
