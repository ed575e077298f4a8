"""Training through aot_autograd: a 2-layer MLP trained 30 steps compiled and eagerly must
end with identical parameters; gradients flow across eager segments between compiled
graphs; kiln.grad of a compiled function; the backward is compiled lazily, once."""
from __future__ import annotations

import numpy as np
import pytest

import kiln
from kiln.aot import aot_autograd, aot_eager
from kiln.ir import trace
from kiln.ops import F, TensorMeta


def mlp_loss_ops(x, y1h, w1, b1, w2, b2):
    """The loss written with ops (traceable); mlp_loss_numpy is the same in NumPy."""
    h = F.maximum(F.add(F.matmul(x, w1), b1), 0.0)
    logits = F.add(F.matmul(h, w2), b2)
    z = F.subtract(logits, F.max(logits, axis=(1,), keepdims=True))
    lse = F.log(F.sum(F.exp(z), axis=(1,), keepdims=True))
    return F.true_divide(F.negative(F.sum(F.multiply(y1h, F.subtract(z, lse)))), x.shape[0])


def mlp_loss_numpy(x, y1h, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, 0.0)
    logits = h @ w2 + b2
    z = logits - logits.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -(y1h * (z - lse)).sum() / x.shape[0]


def _data(batch=32, d_in=20, hidden=16, classes=5, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, d_in))
    y1h = np.eye(classes)[rng.integers(0, classes, batch)]
    params = [rng.standard_normal((d_in, hidden)) * 0.3, np.zeros(hidden),
              rng.standard_normal((hidden, classes)) * 0.3, np.zeros(classes)]
    return x, y1h, params


def _meta(a):
    return TensorMeta(a.shape, a.dtype)


def _train(loss_fn, x, y1h, params, steps=30, lr=0.5):
    ps = [kiln.tensor(p, requires_grad=True) for p in params]
    losses = []
    for _ in range(steps):
        loss = loss_fn(x, y1h, *ps)
        loss.backward()
        losses.append(float(loss))
        with kiln.no_grad():
            for p in ps:
                p -= lr * p.grad
                p.grad = None
    return [p.numpy() for p in ps], losses


def test_mlp_trained_30_steps_compiled_equals_eager():
    x, y1h, params = _data()
    graph = trace(mlp_loss_ops, [_meta(a) for a in [x, y1h, *params]],
                  ["x", "y1h", "w1", "b1", "w2", "b2"])
    compiled = aot_eager(graph, [x, y1h, *params])
    got, got_losses = _train(lambda *a: compiled(*a)[0], x, y1h, params)
    want, want_losses = _train(mlp_loss_numpy, x, y1h, params)
    assert got_losses[-1] < 0.5 * got_losses[0]  # it did train
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-12)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-13)
    assert len(compiled.variants) == 1


def test_backward_compiled_lazily_and_once():
    x, y1h, params = _data(batch=4)
    graph = trace(mlp_loss_ops, [_meta(a) for a in [x, y1h, *params]])
    seen = []

    def counting(g, example):
        seen.append(g.name)
        return g

    compiled = aot_autograd(graph, [x, y1h, *params], counting, counting)
    ps = [kiln.tensor(p, requires_grad=True) for p in params]
    (loss,) = compiled(x, y1h, *ps)
    assert seen == ["forward"]
    loss.backward()
    assert seen == ["forward", "backward"]
    (loss,) = compiled(x, y1h, *ps)
    loss.backward()
    assert seen == ["forward", "backward"]
    with kiln.no_grad():  # inference: the functional graph, no joint
        (value,) = compiled(x, y1h, *ps)
    assert seen == ["forward", "backward", "forward"] and value.grad_fn is None


def test_gradients_flow_across_eager_segments_between_compiled_graphs():
    # compiled -> eager (a "graph break") -> compiled, all on one tape
    m = TensorMeta((6,), np.float64)
    first = aot_eager(trace(lambda w: F.tanh(F.multiply(w, 2.0)), [m]), [np.zeros(6)])
    second = aot_eager(trace(lambda a, w: F.sum(F.multiply(a, F.sin(w))), [m, m]),
                       [np.zeros(6), np.zeros(6)])
    w0 = np.linspace(-1, 1, 6)
    w = kiln.tensor(w0, requires_grad=True)
    (a,) = first(w)
    a2 = np.exp(a) * 0.5           # eager Tensor ops in between
    (loss,) = second(a2, w)
    loss.backward()
    we = kiln.tensor(w0, requires_grad=True)
    (np.exp(np.tanh(we * 2.0)) * 0.5 * np.sin(we)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), we.grad.numpy(), rtol=1e-13)


def test_kiln_grad_of_a_compiled_function():
    m = TensorMeta((4,), np.float64)
    f = aot_eager(trace(lambda x: F.sum(F.multiply(F.exp(x), x)), [m]), [np.zeros(4)])
    x0 = np.array([0.1, -0.2, 0.3, 0.5])
    value, g = kiln.value_and_grad(lambda x: f(x)[0])(x0)
    np.testing.assert_allclose(g, np.exp(x0) * (1 + x0), rtol=1e-13)
    np.testing.assert_allclose(value, np.sum(np.exp(x0) * x0), rtol=1e-13)


def test_python_scalars_stay_runtime_inputs_in_both_graphs():
    g = trace(lambda x, s: F.sum(F.multiply(F.square(x), s)), [TensorMeta((3,), np.float64), 2.0],
              ["x", "s"])
    f = aot_eager(g, [np.zeros(3), 2.0])
    x = kiln.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for s in (2.0, 5.0):
        x.grad = None
        (loss,) = f(x, s)
        loss.backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * s * np.array([1.0, 2.0, 3.0]))
    assert len(f.variants) == 1


def test_second_backward_raises_and_retain_graph_allows_it():
    m = TensorMeta((3,), np.float64)
    f = aot_eager(trace(lambda x: F.sum(F.sin(x)), [m]), [np.zeros(3)])
    x = kiln.tensor([0.1, 0.2, 0.3], requires_grad=True)
    (loss,) = f(x)
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos([0.1, 0.2, 0.3]))
    with pytest.raises(kiln.AutogradError, match="second time"):
        loss.backward()


def test_modifying_a_saved_input_before_backward_uses_the_value_it_had():
    m = TensorMeta((3,), np.float64)
    f = aot_eager(trace(lambda x, w: F.sum(F.multiply(x, w)), [m, m]),
                  [np.zeros(3), np.zeros(3)])
    x = kiln.tensor([0.1, 0.2, 0.3])
    w = kiln.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (loss,) = f(x, w)
    x += 1.0                          # x is saved for dw: the backward keeps its old value
    loss.backward()
    np.testing.assert_allclose(w.grad.numpy(), [0.1, 0.2, 0.3], rtol=1e-15)
    # the same in eager code
    (x2, w2) = kiln.tensor([0.1, 0.2, 0.3]), kiln.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss2 = (x2 * w2).sum()
    x2 += 1.0
    loss2.backward()
    np.testing.assert_allclose(w2.grad.numpy(), [0.1, 0.2, 0.3], rtol=1e-15)


def test_integer_outputs_get_no_gradient():
    m = TensorMeta((4,), np.float64)
    f = aot_eager(trace(lambda x: (F.sum(F.square(x)), F.argmax(x)), [m]), [np.zeros(4)])
    x = kiln.tensor([0.5, 2.0, -1.0, 0.0], requires_grad=True)
    loss, idx = f(x)
    assert idx.grad_fn is None and int(idx) == 1
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())


def test_op_without_derivative_fails_at_backward_like_eager():
    from kiln.ops import REGISTRY, declare
    op = declare("aot_test_sin_no_rule", "pointwise", np.sin)
    try:
        m = TensorMeta((3,), np.float64)
        f = aot_eager(trace(lambda x: F.sum(op(x)), [m]), [np.zeros(3)])
        x = kiln.tensor([0.1, 0.2, 0.3], requires_grad=True)
        (loss,) = f(x)                       # the forward runs
        np.testing.assert_allclose(loss.numpy(), np.sum(np.sin([0.1, 0.2, 0.3])))
        with pytest.raises(kiln.NoDerivative,
                           match="Differentiation rule for 'aot_test_sin_no_rule' not implemented"):
            loss.backward()
    finally:
        del REGISTRY["aot_test_sin_no_rule"]


def test_outputs_sharing_an_intermediate_alias_and_differentiate():
    m = TensorMeta((5,), np.float64)
    g = trace(lambda w: _shared(w), [m])
    f = aot_eager(g, [np.zeros(5)])
    w0 = np.linspace(0.1, 0.5, 5)
    w = kiln.tensor(w0, requires_grad=True)
    t, tail = f(w)
    assert np.shares_memory(t.numpy(), tail.numpy())       # as in NumPy
    (t.sum() + 2.0 * (tail * tail).sum()).backward()
    we = kiln.tensor(w0, requires_grad=True)
    te = np.sin(we)
    (te.sum() + 2.0 * (te[1:] * te[1:]).sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), we.grad.numpy(), rtol=1e-14)


def _shared(w):
    t = F.sin(w)
    return t, F.getitem(t, (slice(1, None),))
