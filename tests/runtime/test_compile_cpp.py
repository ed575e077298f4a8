"""End to end: NumPy functions through kiln.compile with the C++ backend (the benchmark
workloads at small sizes), compared with NumPy itself."""
import numpy as np
import pytest

import kiln
from kiln.runtime import cpp_backend


def w1(x):
    return np.maximum(np.sin(x) + np.cos(x), 0) * 2


def w2(x, a, b, c):
    return np.tanh(a * x + b) * (1 / (1 + np.exp(-(x - c)))) + x ** 2


def w3(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def w4(x, w, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + b


def w5(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def w6(x, w1_, b1, w2_, b2, onehot):
    h = np.maximum(x @ w1_ + b1, 0)
    z = h @ w2_ + b2
    m = z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z - m).sum(axis=1, keepdims=True)) + m
    return ((lse - z) * onehot).sum(axis=1).mean()


def sgd(w, g, lr):
    return w - lr * g


rng = np.random.default_rng(11)
f32 = np.float32
CASES = {
    "w1": (w1, [rng.standard_normal(1000).astype(f32)]),
    "w2": (w2, [rng.standard_normal((16, 32)).astype(f32)] + [rng.standard_normal(32).astype(f32)] * 3),
    "w3": (w3, [rng.standard_normal((16, 32)).astype(f32)]),
    "w4": (w4, [rng.standard_normal((16, 32)).astype(f32), rng.standard_normal(32).astype(f32),
                rng.standard_normal(32).astype(f32)]),
    "w5": (w5, [rng.standard_normal((16, 32)).astype(f32)]),
    "w6": (w6, [rng.standard_normal((8, 20)).astype(f32), rng.standard_normal((20, 12)).astype(f32),
                np.zeros(12, f32), rng.standard_normal((12, 10)).astype(f32), np.zeros(10, f32),
                np.eye(10, dtype=f32)[rng.integers(0, 10, 8)]]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_workloads_through_kiln_compile(name):
    fn, inputs = CASES[name]
    compiled = kiln.compile(fn, backend=cpp_backend)
    expected = fn(*inputs)
    got = compiled(*inputs)
    got2 = compiled(*inputs)   # the cache hit
    assert type(got) is type(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(got2, expected, rtol=2e-5, atol=1e-6)


def test_runtime_scalar_changes_do_not_recompile():
    graphs = []

    def counting_backend(graph, example_inputs):
        graphs.append(graph)
        return cpp_backend(graph, example_inputs)

    step = kiln.compile(sgd, backend=counting_backend)
    w = np.ones(5, np.float32)
    g = np.full(5, 2.0, np.float32)
    for lr in (0.1, 0.5, 0.25):
        out = step(w, g, lr)
        np.testing.assert_allclose(out, sgd(w, g, lr))
        assert out.dtype == np.float32
    assert len(graphs) == 1


def test_outputs_are_fresh_each_call():
    compiled = kiln.compile(w1, backend=cpp_backend)
    x = rng.standard_normal(100_000).astype(f32)   # big enough for the buffer pool
    a = compiled(x)
    b = compiled(x)
    assert not np.shares_memory(a, b)
    a_copy = a.copy()
    del b
    c = compiled(x * 2)
    np.testing.assert_array_equal(a, a_copy)   # a kept alive is never overwritten
    np.testing.assert_allclose(c, w1(x * 2), rtol=1e-5, atol=1e-6)


def test_numpy_error_mode_raise_is_honoured():
    # np.errstate(divide="raise") around a compiled call: NumPy's FloatingPointError, not
    # the kernels' silent inf.
    import kiln
    f = kiln.compile(lambda x, y: x / y, backend="cpp")
    x, y = np.ones(3), np.zeros(3)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(f(x, y), np.full(3, np.inf))
        with np.errstate(divide="raise"):
            with pytest.raises(FloatingPointError, match="divide by zero"):
                f(x, y)
