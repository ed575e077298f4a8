"""kiln.value_and_grad inside a compiled function with a dynamic batch size: the backward
is written with the inputs' sizes (``broadcast_to(g, shape=(x.shape[0], 5))``), so a new
batch size reuses the compiled variant (kiln/capture/variables/grad.py SymbolicSizes)."""
import warnings

import numpy as np
import pytest

import kiln
import kiln.runtime.backend as backend_mod
from kiln.runtime import cpp_backend


def loss(x, y1h, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, 0.0)
    logits = np.tanh(h @ w2 + b2)
    z = logits - logits.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -(y1h * (z - lse)).sum() / x.shape[0]


def step(x, y1h, w1, b1, w2, b2):
    value, grads = kiln.value_and_grad(loss, argnums=(2, 3, 4, 5))(x, y1h, w1, b1, w2, b2)
    return value, [p - 0.1 * g for p, g in zip((w1, b1, w2, b2), grads)], grads


def _mse(w, x, y):
    return ((np.tanh(x @ w) - y) ** 2).mean()


def _params(rng):
    return [rng.standard_normal((6, 8)) * 0.5, rng.standard_normal(8) * 0.1,
            rng.standard_normal((8, 5)) * 0.5, rng.standard_normal(5) * 0.1]


def _batch(rng, n):
    return rng.standard_normal((n, 6)), np.eye(5)[rng.integers(0, 5, n)]


@pytest.mark.parametrize("dynamic", [None, True])
def test_training_step_at_five_batch_sizes_reuses_its_build(monkeypatch, dynamic):
    lowerings, graphs = [], []
    generate = backend_mod.generate
    monkeypatch.setattr(backend_mod, "generate", lambda *a, **k: lowerings.append(1) or generate(*a, **k))
    compiled = kiln.compile(step, dynamic=dynamic,
                            backend=lambda g, ex: graphs.append(g) or cpp_backend(g, ex))
    rng = np.random.default_rng(0)
    params = _params(rng)
    for n in (7, 16, 24, 40, 57):
        x, y = _batch(rng, n)
        got, want = compiled(x, y, *params), step(x, y, *params)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        for g, w in zip(list(got[1]) + list(got[2]), list(want[1]) + list(want[2])):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-13)
    # dynamic=None: the first size, then one graph for every other size
    assert len(graphs) == (1 if dynamic else 2) and len(lowerings) <= len(graphs)
    from kiln.ir import python_code
    assert "shape=(x.shape[0], " in python_code(graphs[-1], {})   # broadcast_to(g, shape=x.shape)


def test_symbolic_backward_matches_finite_differences():
    compiled = kiln.compile(step, dynamic=True)
    rng = np.random.default_rng(1)
    params = _params(rng)
    x, y = _batch(rng, 4)
    compiled(x, y, *params)            # the build for the first size
    x, y = _batch(rng, 11)             # another size: the same build
    _, _, grads = compiled(x, y, *params)
    eps = 1e-6
    for k, (p, g) in enumerate(zip(params, grads)):
        for idx in [(0,) * p.ndim, tuple(s - 1 for s in p.shape)]:
            up = [q.copy() for q in params]
            down = [q.copy() for q in params]
            up[k][idx] += eps
            down[k][idx] -= eps
            fd = (loss(x, y, *up) - loss(x, y, *down)) / (2 * eps)
            np.testing.assert_allclose(g[idx], fd, rtol=1e-6, atol=1e-8)


def _var_loss(w, x, y):
    return (np.tanh(x @ w) - y).var()


def _std_loss(w, x, y):
    return (np.tanh(x @ w) - y).std(axis=0, ddof=1).sum()


def _big_ddof_loss(w, x, y):
    # N - ddof is negative at the first size (NaN gradient, as eager) and positive later
    return (np.tanh(x @ w) - y).var(axis=0, ddof=7).sum()


@pytest.mark.parametrize("fn, graphs_for_three_sizes", [
    (_mse, 1),       # mean's derivative divides by x.shape[0] * 2: a run-time input
    (_var_loss, 1),  # var's by (x.shape[0] * 2 - 0), std's by (x.shape[0] - 1): inputs too
    (_std_loss, 1),
    (_big_ddof_loss, 1),
])
def test_counts_in_derivatives(fn, graphs_for_three_sizes):
    graphs = []
    def mse_step(x, y, w):
        return kiln.value_and_grad(fn)(w, x, y)
    compiled = kiln.compile(mse_step, dynamic=True,
                            backend=lambda g, ex: graphs.append(g) or cpp_backend(g, ex))
    rng = np.random.default_rng(2)
    w = rng.standard_normal((3, 2))
    for n in (5, 9, 14):
        x, y = rng.standard_normal((n, 3)), rng.standard_normal((n, 2))
        with warnings.catch_warnings():   # eager var's "Degrees of freedom <= 0"
            warnings.simplefilter("ignore", RuntimeWarning)
            got, want = compiled(x, y, w), mse_step(x, y, w)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-10)
    assert len(graphs) == graphs_for_three_sizes


@pytest.mark.parametrize("dynamic", [None, True])
def test_a_lambda_closing_over_the_arguments(dynamic):
    # x and y become graph inputs only when the lambda reads them: their dims are
    # dynamic too, so the backward is written with their sizes (it wrote the first
    # call's numbers and failed at the second size)
    graphs = []

    def lam_step(w, x, y):
        loss, g = kiln.value_and_grad(lambda w: ((np.tanh(x @ w) - y) ** 2).mean())(w)
        return loss, w - 0.1 * g
    compiled = kiln.compile(lam_step, dynamic=dynamic,
                            backend=lambda g, ex: graphs.append(g) or cpp_backend(g, ex))
    rng = np.random.default_rng(6)
    w = rng.standard_normal((3, 2))
    for n in (4, 7, 12, 19):
        x, y = rng.standard_normal((n, 3)), rng.standard_normal((n, 2))
        got, want = compiled(w, x, y), lam_step(w, x, y)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    assert len(graphs) == (1 if dynamic else 2)


def _flip_loss(w, x, y):
    # w's second dim meets the number 3 (it is pinned while the loss runs): the backward
    # is written with it as a number and the batch dim as a size
    return ((np.flip(np.tanh(x @ w), 0) - y) * np.arange(3.0)).sum()


def _outer_loss(w, x, y):
    # outer's derivative reshapes by the operands' sizes (one dim each: not a product)
    return np.outer(x[:, 0], w[0]).sum() + ((x @ w - y) ** 2).var(ddof=1)


def _join_loss(w, x, y):
    # two arrays of the batch joined on their second dims: their batch sizes move
    # together (the entry guards they are equal)
    return (np.concatenate([x @ w, y], axis=1) ** 2).mean()


@pytest.mark.parametrize("fn, dynamic", [(_flip_loss, True), (_outer_loss, None), (_join_loss, None)])
def test_size_reading_rules_build_once_for_every_batch(fn, dynamic):
    graphs = []

    def train(w, x, y):
        value, g = kiln.value_and_grad(fn)(w, x, y)
        return value, w - 0.1 * g
    compiled = kiln.compile(train, dynamic=dynamic,
                            backend=lambda g, ex: graphs.append(g) or cpp_backend(g, ex))
    rng = np.random.default_rng(7)
    w = rng.standard_normal((3, 3))
    for n in (5, 8, 13, 21):
        x, y = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
        got, want = compiled(w, x, y), train(w, x, y)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-10)
    assert len(graphs) == (1 if dynamic else 2)   # (None: the first size, then all others)


@pytest.mark.parametrize("fn", [_mse, _outer_loss, _join_loss])
@pytest.mark.parametrize("width", [3, 4])
def test_square_and_other_weights_under_dynamic_true_lower_once(monkeypatch, fn, width):
    # A square weight's two dims share a SizeRef: the entry guards them equal and
    # lowering gives them one symbol (equal_dims). Dims pinned while capturing are static
    # for lowering. Each lowered once for every batch size (they lowered per size).
    lowerings, graphs = [], []
    generate = backend_mod.generate
    monkeypatch.setattr(backend_mod, "generate", lambda *a, **k: lowerings.append(1) or generate(*a, **k))

    def train(w, x, y):
        value, g = kiln.value_and_grad(fn)(w, x, y)
        return value, w - 0.1 * g
    compiled = kiln.compile(train, dynamic=True,
                            backend=lambda g, ex: graphs.append(g) or cpp_backend(g, ex))
    rng = np.random.default_rng(3)
    w = rng.standard_normal((3, width))
    for n in (5, 8, 13, 21):
        x, y = rng.standard_normal((n, 3)), rng.standard_normal((n, width))
        got, want = compiled(w, x, y), train(w, x, y)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-10)
    assert len(graphs) == 1
    if not (fn is _join_loss and width == 3):
        # (join at width 3: the concatenation pins w's second dim, and the square leaf
        # keeps w's first equal to it: sizes then vary only through the batch, per size)
        assert len(lowerings) == 1


def test_a_square_weight_that_stops_being_square():
    # The differentiated argument's leaf was written (w.shape[0], w.shape[0]) for a square
    # example; the entry must guard that, or a 4x3 weight met a reshape to (4, 4)
    def train(w, x, y):
        value, g = kiln.value_and_grad(_join_loss)(w, x, y)
        return value, w - 0.1 * g
    compiled = kiln.compile(train, dynamic=True, backend=cpp_backend)
    rng = np.random.default_rng(4)
    for k, d, n in [(3, 3, 5), (3, 3, 8), (4, 3, 6), (2, 3, 7), (4, 4, 5)]:
        w, x, y = rng.standard_normal((k, d)), rng.standard_normal((n, k)), rng.standard_normal((n, d))
        got, want = compiled(w, x, y), train(w, x, y)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-10)
