"""Gradients of maximum/minimum: ties split evenly, NaN inputs take the whole gradient.

Checked against a NumPy oracle in eager mode and through compile (aot_eager and cpp), for
array-array and array-scalar operands (relu), with ties, NaN, inf, and a NaN scalar.
"""
import numpy as np
import pytest

import kiln
from kiln.aot import build_joint
from kiln.ir import trace
from kiln.ops import F, TensorMeta


def oracle(g, a, b, wins):
    """The gradient of ``a``: whole where a is NaN or wins, half on ties, else 0."""
    a, b = np.asarray(a), np.asarray(b)
    return np.where(np.isnan(a), g, np.where(wins(a, b), g, np.where(a == b, g * 0.5, 0.0)))


def _data(dtype):
    x = np.array([[-1.0, 0.0, 2.0, np.nan], [0.5, -0.0, np.inf, -np.inf], [3.0, 1.0, 0.5, -2.0]], dtype)
    y = np.array([[0.0, 0.0, np.nan, np.nan], [0.5, 0.0, np.inf, 1.0], [-3.0, 1.0, 0.25, -2.0]], dtype)
    w = np.arange(1, 13, dtype=dtype).reshape(3, 4) / 8
    return x, y, w


SCALARS = [0.0, 1, -np.inf, np.nan, 0.5]
FNS = {"maximum": (np.maximum, np.greater), "minimum": (np.minimum, np.less)}


def _grads(fn, backend, x, y, w):
    tx = kiln.tensor(x, requires_grad=True)
    ty = kiln.tensor(y, requires_grad=True) if isinstance(y, np.ndarray) else y
    body = lambda a, b, w: (fn(a, b) * w).sum()
    run = body if backend is None else kiln.compile(body, backend=backend)
    with np.errstate(invalid="ignore"):  # the loss of +inf and -inf terms is NaN
        run(tx, ty, w).backward()
    return tx.grad.numpy(), (ty.grad.numpy() if isinstance(y, np.ndarray) else None)


@pytest.mark.parametrize("backend", [None, "aot_eager", "cpp"])
@pytest.mark.parametrize("name", list(FNS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_array_array(name, dtype, backend):
    fn, wins = FNS[name]
    x, y, w = _data(dtype)
    gx, gy = _grads(fn, backend, x, y, w)
    np.testing.assert_array_equal(gx, oracle(w, x, y, wins).astype(dtype))
    np.testing.assert_array_equal(gy, oracle(w, y, x, wins).astype(dtype))
    assert gx.dtype == gy.dtype == dtype


@pytest.mark.parametrize("backend", [None, "aot_eager", "cpp"])
@pytest.mark.parametrize("name", list(FNS))
@pytest.mark.parametrize("scalar", SCALARS, ids=[repr(s) for s in SCALARS])
def test_array_scalar(name, scalar, backend):
    fn, wins = FNS[name]
    x, _, w = _data(np.float32)
    x = x.copy()
    x[2, 3] = scalar if not np.isnan(scalar) else x[2, 3]  # a tie with the scalar
    gx, _ = _grads(fn, backend, x, scalar, w)
    np.testing.assert_array_equal(gx, oracle(w, x, np.float32(scalar), wins).astype(np.float32))
    assert gx.dtype == np.float32
    # scalar first
    tx = kiln.tensor(x, requires_grad=True)
    with np.errstate(invalid="ignore"):
        (fn(scalar, tx) * w).sum().backward()
    np.testing.assert_array_equal(tx.grad.numpy(), oracle(w, x, np.float32(scalar), wins).astype(np.float32))


def test_relu_backward_does_no_work_for_the_scalar():
    # relu's derivative: two compares and two selects, no isnan, nothing for the 0.
    g = trace(lambda x: F.sum(F.maximum(x, 0.0)), [TensorMeta((4, 3), np.float32)], ["x"])
    joint = build_joint(g, [True])
    ops = [n.op.name for n in joint.graph.calls]
    assert "isnan" not in ops, ops
    assert ops.count("where") == 2, ops
