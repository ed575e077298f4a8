"""Training on kiln.Tensor inputs with dynamic sizes: the joint graph is written over the
inputs' sizes (kiln/aot/symbolic.py), so after the first size (and the recompile that
makes the batch dim dynamic) every batch size runs the same compiled forward and
backward. Checked against the eager Tensor (kiln without compile) and, in float64,
against finite differences."""
import warnings

import numpy as np
import pytest

import kiln
import kiln.runtime.backend as backend_mod


@pytest.fixture
def builds(monkeypatch):
    """Names of the graphs compiled by the C++ backend (forward, backward, ...)."""
    names = []
    compile_graph = backend_mod.compile_graph
    monkeypatch.setattr(backend_mod, "compile_graph",
                        lambda g, ex: names.append(g.name) or compile_graph(g, ex))
    return names


def mlp_loss(x, y, w1, b1, w2):
    h = np.tanh(x @ w1 + b1)
    return ((h @ w2 - y) ** 2).mean()


def sum_loss(x, w):
    # nothing the backward saves has x's batch dim: it reads x's shape itself
    return (x * 2.0).sum() + (w ** 2).sum()


def _params(rng, dtype=np.float64):
    return [kiln.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
            for s in ((4, 6), (6,), (6, 2))]


def _grads_of(fn, args):
    for a in args:
        if isinstance(a, kiln.Tensor) and a.requires_grad:
            a.grad = None
    out = fn(*args)
    out.backward()
    return float(out.numpy()), [a.grad.numpy().copy() for a in args
                                if isinstance(a, kiln.Tensor) and a.requires_grad]


@pytest.mark.parametrize("dynamic", [None, True])
def test_new_batch_sizes_compile_nothing(builds, dynamic):
    compiled = kiln.compile(mlp_loss, dynamic=dynamic)
    rng = np.random.default_rng(0)
    params = _params(rng)
    counts = []
    for n in (3, 8, 13, 21, 34):
        x, y = rng.standard_normal((n, 4)), rng.standard_normal((n, 2))
        got, want = _grads_of(compiled, [x, y] + params), _grads_of(mlp_loss, [x, y] + params)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        for g, w in zip(got[1], want[1]):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-14)
        counts.append(len(builds))
    # dynamic=None: the first size, then one forward and one backward for every other
    assert counts == ([2] * 5 if dynamic else [2, 4, 4, 4, 4])
    assert builds[-2:] == ["forward", "backward"]


def test_gradients_match_finite_differences():
    compiled = kiln.compile(mlp_loss, dynamic=True)
    rng = np.random.default_rng(1)
    params = _params(rng)
    x, y = rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
    _grads_of(compiled, [x, y] + params)
    x, y = rng.standard_normal((11, 4)), rng.standard_normal((11, 2))   # the same build
    _, grads = _grads_of(compiled, [x, y] + params)
    eps = 1e-6
    arrays = [p.numpy() for p in params]
    for k, g in enumerate(grads):
        for idx in [(0,) * g.ndim, tuple(s - 1 for s in g.shape)]:
            up = [a.copy() for a in arrays]
            down = [a.copy() for a in arrays]
            up[k][idx] += eps
            down[k][idx] -= eps
            fd = (mlp_loss(x, y, *up) - mlp_loss(x, y, *down)) / (2 * eps)
            np.testing.assert_allclose(g[idx], fd, rtol=1e-6, atol=1e-9)


def test_backward_that_reads_only_an_input_shape(builds):
    compiled = kiln.compile(sum_loss, dynamic=True)
    rng = np.random.default_rng(2)
    w = kiln.tensor(rng.standard_normal(3), requires_grad=True)
    for n in (4, 9, 17):
        x = kiln.tensor(rng.standard_normal((n, 3)), requires_grad=True)
        got, want = _grads_of(compiled, [x, w]), _grads_of(sum_loss, [x, w])
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        for g, e in zip(got[1], want[1]):
            assert g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=1e-12)
    assert builds == ["forward", "backward"]


def test_dims_equal_only_in_the_first_call_get_their_own_variant(builds):
    # x's batch and w's first dim are both dynamic and equal at first (duck sizing):
    # the variant built then assumes they are one size, so a call where they differ
    # must not reuse it
    def f(x, w):
        return (np.tanh(x) * 3.0).sum() + (w * w).sum()
    compiled = kiln.compile(f, dynamic=True)
    rng = np.random.default_rng(3)
    for n, m in ((5, 5), (6, 9), (7, 7), (12, 4)):
        x = kiln.tensor(rng.standard_normal((n, 2)), requires_grad=True)
        w = kiln.tensor(rng.standard_normal((m, 2)), requires_grad=True)
        got, want = _grads_of(compiled, [x, w]), _grads_of(f, [x, w])
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        for g, e in zip(got[1], want[1]):
            assert g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=1e-12)
    assert builds.count("backward") == 2   # equal sizes, and different ones


def test_float32_and_a_non_scalar_output_with_a_gradient():
    def f(x, w):
        return np.tanh(x @ w) * 2.0
    compiled = kiln.compile(f, dynamic=True)
    rng = np.random.default_rng(4)
    w = kiln.tensor(rng.standard_normal((3, 2)).astype(np.float32), requires_grad=True)
    for n in (4, 10):
        x = rng.standard_normal((n, 3)).astype(np.float32)
        seed = rng.standard_normal((n, 2)).astype(np.float32)
        results = []
        for fn in (compiled, f):
            w.grad = None
            out = fn(x, w)
            out.backward(seed)
            results.append((out.numpy(), w.grad.numpy().copy()))
        assert results[0][0].dtype == results[1][0].dtype == np.float32
        np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("reduce", [
    lambda h: h.var(),
    lambda h: h.std(axis=0, ddof=1).sum(),
    lambda h: h.var(axis=0, ddof=6).sum(),   # N - ddof < 0 at the first size: NaN, as eager
])
def test_var_and_std_keep_the_sizes_symbolic(builds, reduce):
    def f(x, w):
        return reduce(np.tanh(x @ w))
    compiled = kiln.compile(f, dynamic=True)
    rng = np.random.default_rng(5)
    w = kiln.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    for n in (4, 9, 15):
        x = rng.standard_normal((n, 3))
        with warnings.catch_warnings():   # eager var's "Degrees of freedom <= 0"
            warnings.simplefilter("ignore", RuntimeWarning)
            got, want = _grads_of(compiled, [x, w]), _grads_of(f, [x, w])
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1][0], want[1][0], rtol=1e-10)
    assert builds == ["forward", "backward"]
