"""Strided, broadcast, empty and 1-element inputs; views as index remaps (no copies)."""
import numpy as np
import pytest

from kiln.ir import trace
from kiln.ops import F, TensorMeta
from kiln.runtime import cpp_backend

from .helpers import assert_same, run_both


def chain(x, y):
    return F.multiply(F.add(F.sin(x), y), 2.0), F.greater(x, y)


def layouts():
    rng = np.random.default_rng(1)
    base = rng.standard_normal((6, 10)).astype(np.float32)
    yield "contiguous", base, base + 1
    yield "transposed", base.T, base.T * 2
    yield "sliced", base[::2, 1::3], base[1::2, 2::3]
    yield "negative_stride", base[::-1, ::-2], base[:, ::2]
    yield "broadcast_row", base, np.float32(3) * np.ones(10, np.float32)
    yield "broadcast_view", np.broadcast_to(base[:1], (6, 10)), base
    yield "column_vs_row", base[:, :1], base[:1, :]
    yield "empty", np.zeros((0, 10), np.float32), np.zeros((0, 10), np.float32)
    yield "empty_broadcast", np.zeros((4, 0), np.float32), np.zeros((1, 0), np.float32)
    yield "one_element", np.full((1, 1), 2.0, np.float32), np.full((1,), -1.0, np.float32)
    yield "zero_dim", np.array(2.0, np.float32), np.array(1.0, np.float32)


@pytest.mark.parametrize("name,x,y", list(layouts()), ids=[c[0] for c in layouts()])
def test_pointwise_layouts(name, x, y):
    g = trace(chain, [TensorMeta(x.shape, x.dtype), TensorMeta(y.shape, y.dtype)], ["x", "y"])
    expected, got, _ = run_both(g, [x, y])
    for i, (e, r) in enumerate(zip(expected, got)):
        assert_same(f"out{i}", e, r, rtol=4e-6, atol=1e-6)


def test_zero_dim_results_are_numpy_scalars():
    x = np.array(0.5, np.float64)
    g = trace(lambda x: (F.sin(x), F.sum(F.multiply(x, 2.0))), [TensorMeta((), np.float64)], ["x"])
    expected, got, _ = run_both(g, [x])
    for e, r in zip(expected, got):
        assert type(r) is type(e)
        assert r == pytest.approx(e)


def test_new_layout_compiles_a_variant_and_stays_correct():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    g = trace(lambda x: F.exp(x), [TensorMeta((3, 4), np.float64)], ["x"])
    fn = cpp_backend(g, [a])
    np.testing.assert_allclose(fn(a)[0], np.exp(a))
    b = np.arange(24, dtype=np.float64).reshape(3, 8)[:, ::2]   # same shape, other strides
    np.testing.assert_allclose(fn(b)[0], np.exp(b))


VIEW_CASES = {
    "transpose": lambda x: F.add(F.transpose(x, axes=(1, 0)), 1.0),
    "slice": lambda x: F.multiply(F.getitem(x, (slice(1, None, 2), slice(None, None, -1))), 3.0),
    "broadcast_to": lambda x: F.subtract(F.broadcast_to(F.getitem(x, (0,)), shape=(5, 4, 6)), 1.0),
    "reshape_split": lambda x: F.sin(F.reshape(F.exp(x), shape=(2, 2, 6))),
    "reshape_merge_of_closure": lambda x: F.sin(F.reshape(F.transpose(F.exp(x), axes=(1, 0)), shape=(24,))),
    "squeeze_expand": lambda x: F.cos(F.squeeze(F.expand_dims(x, axis=(0,)), axis=(0,))),
    "flip": lambda x: F.negative(F.flip(F.exp(x), axis=(0, 1))),
    "view_output": lambda x: F.transpose(x, axes=(1, 0)),
}


@pytest.mark.parametrize("name", list(VIEW_CASES))
def test_views(name):
    x = np.random.default_rng(2).standard_normal((4, 6))
    try:
        g = trace(VIEW_CASES[name], [TensorMeta(x.shape, x.dtype)], ["x"])
    except Exception as e:  # an op another engineer is still writing
        pytest.skip(f"op not available: {e}")
    expected, got, fn = run_both(g, [x])
    for e, r in zip(expected, got):
        assert_same(name, e, r, rtol=1e-13, atol=1e-14)
    if name == "view_output":
        assert np.shares_memory(got[0], x), "a view of an input must stay a view"
    else:
        # views of inputs are index remaps: no kernel copies the input first
        assert fn.kiln_artifact.wrapper.count("_empty(") <= 2


def test_view_of_input_is_not_copied():
    x = np.random.default_rng(3).standard_normal((8, 8)).astype(np.float32)
    g = trace(lambda x: F.add(F.transpose(x, axes=(1, 0)), x), [TensorMeta(x.shape, x.dtype)], ["x"])
    expected, got, fn = run_both(g, [x])
    assert_same("x.T + x", expected[0], got[0])
    assert len(fn.kiln_artifact.kernel_names) == 1
    assert "transpose" not in fn.kiln_artifact.wrapper  # the kernel reads x through swapped strides
