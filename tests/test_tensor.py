"""kiln.Tensor as a NumPy citizen: protocols, methods, views, errors."""
import numpy as np
import pytest

import kiln


def test_numpy_functions_ufuncs_and_operators_return_tensors_with_numpy_values():
    data = np.arange(6.0).reshape(2, 3)
    t = kiln.tensor(data)
    cases = [
        (lambda a: np.tanh(a) * 2 - a / 3, None),
        (lambda a: np.where(a > 2, a, 0.0), None),
        (lambda a: np.mean(a, axis=0), None),
        (lambda a: np.concatenate([a, a], axis=1), None),
        (lambda a: a @ a.T, None),
        (lambda a: np.float32(2) * a, None),
        (lambda a: np.ones(3) + a, None),
    ]
    for fn, _ in cases:
        got = fn(t)
        want = fn(data)
        assert isinstance(got, kiln.Tensor)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)


def test_methods_match_ndarray():
    data = np.arange(12.0).reshape(3, 4) - 5
    t = kiln.tensor(data)
    for name in ["sum", "mean", "max", "min", "prod", "var", "std", "argmax", "argmin", "any",
                 "all", "cumsum", "ravel", "flatten", "copy", "transpose"]:
        got, want = getattr(t, name)(), getattr(data, name)()
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)
        assert np.asarray(got).dtype == np.asarray(want).dtype, name
    np.testing.assert_array_equal(t.reshape(4, 3).numpy(), data.reshape(4, 3))
    np.testing.assert_array_equal(t.swapaxes(0, 1).numpy(), data.swapaxes(0, 1))
    np.testing.assert_array_equal(t.T.numpy(), data.T)
    np.testing.assert_array_equal(t.clip(-1, 2).numpy(), data.clip(-1, 2))
    np.testing.assert_array_equal(t.astype(np.float32).numpy(), data.astype(np.float32))
    np.testing.assert_array_equal(t.dot(np.ones(4)).numpy(), data.dot(np.ones(4)))
    np.testing.assert_array_equal(t[None].squeeze(0).numpy(), data)
    assert t.sum(axis=1, keepdims=True).shape == (3, 1)
    assert t[1, 2].item() == data[1, 2] and t.tolist() == data.tolist()
    assert len(t) == 3 and [r.shape for r in t] == [(4,)] * 3
    assert t.ndim == 2 and t.size == 12 and t.shape == (3, 4)


def test_views_share_memory_and_version_counter():
    a = kiln.tensor(np.ones((2, 3)))
    v = a[0]
    assert np.shares_memory(v.numpy(), a.numpy())
    v += 1
    np.testing.assert_array_equal(a.numpy(), [[2, 2, 2], [1, 1, 1]])
    assert a._version.value == 1 and v._version is a._version


def test_index_assignment_matches_numpy():
    data = np.zeros((3, 4))
    t = kiln.tensor(data)
    t[1] = 5.0
    t[:, ::2] = np.arange(3.0)[:, None]
    data[1] = 5.0
    data[:, ::2] = np.arange(3.0)[:, None]
    np.testing.assert_array_equal(t.numpy(), data)


def test_in_place_operators_keep_identity():
    t = kiln.tensor(np.ones(3))
    before = t
    t += 2.0
    t *= np.array([1.0, 2.0, 3.0])
    assert t is before
    np.testing.assert_array_equal(t.numpy(), [3.0, 6.0, 9.0])


@pytest.mark.parametrize("bad", [np.array(["a"]), np.array([object()], dtype=object)])
def test_unsupported_dtypes_are_a_clear_error(bad):
    with pytest.raises(kiln.UnsupportedDtype, match="not supported by kiln"):
        kiln.tensor(bad)


def test_unsupported_arguments_name_the_op_and_argument():
    t = kiln.tensor(np.ones(3))
    with pytest.raises(kiln.UnsupportedArgument, match=r"numpy\.add.*where="):
        np.add(t, 1, where=np.array([True, False, True]))
    with pytest.raises(kiln.UnsupportedArgument, match=r"numpy\.std.*where="):
        np.std(t, where=np.array([True, False, True]))
    with pytest.raises(kiln.UnsupportedArgument, match="order='A'"):
        t.reshape(3, order="A")
    m = kiln.tensor(np.arange(6.0).reshape(2, 3))   # order='F' is a transposed reshape
    np.testing.assert_array_equal(m.reshape(3, 2, order="F").numpy(),
                                  np.arange(6.0).reshape(2, 3).reshape(3, 2, order="F"))


def test_numpy_errors_come_out_unchanged():
    t = kiln.tensor(np.ones(3))
    with pytest.raises(np.exceptions.AxisError) as got:
        np.sum(t, axis=3)
    with pytest.raises(np.exceptions.AxisError) as want:
        np.sum(np.ones(3), axis=3)
    assert str(got.value) == str(want.value)


_OUT_CALLS = [lambda a, o: np.sum(a, axis=0, out=o), lambda a, o: a.max(axis=0, out=o),
              lambda a, o: np.nansum(a, axis=0, out=o), lambda a, o: np.cumsum(a, axis=0, out=o[0]),
              lambda a, o: np.round(a[0], 1, out=o), lambda a, o: np.add.reduce(a, out=o),
              lambda a, o: np.add(a[0], 1, out=o), lambda a, o: np.sum(a, out=o[0, :0])]


@pytest.mark.parametrize("call", range(len(_OUT_CALLS)))
def test_out_of_another_shape_than_the_result_raises_as_numpy(call):
    """``np.sum(t, axis=0, out=np.zeros((2, 3)))`` of a (2, 3) Tensor: NumPy raises ("output
    parameter for reduction operation add has the wrong number of dimensions"); the Tensor
    broadcast the sum into out. Only a ufunc's out= broadcasts (np.add)."""
    fn, data = _OUT_CALLS[call], np.arange(6.0).reshape(2, 3)
    outcomes = []
    for a, o in [(data, np.zeros((2, 3))), (kiln.tensor(data), np.zeros((2, 3))),
                 (kiln.tensor(data), kiln.tensor(np.zeros((2, 3))))]:
        try:
            fn(a, o)
            outcomes.append(("ok", np.asarray(o).tolist()))
        except ValueError as e:
            outcomes.append((type(e).__name__, str(e), np.asarray(o).tolist()))
    assert outcomes[1] == outcomes[0] and outcomes[2] == outcomes[0]


def test_repr_shows_grad_state():
    x = kiln.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert "grad_fn=<MultiplyBackward>" in repr(x * 2.0)


def test_ufuncs_with_nothing_to_record_match_numpy():
    # The no-recording fast path (SGD updates under no_grad, Tensors without grad) gives
    # what NumPy gives: dtypes (weak Python scalars), values, in-place identity, versions.
    data = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    t = kiln.tensor(data)
    w = kiln.tensor(data.copy(), requires_grad=True)
    for fn in (lambda a: 0.1 * a, lambda a: a - np.float64(1), lambda a: np.exp(a),
               lambda a: np.maximum(a, 0.0), lambda a: a > 0, lambda a: np.ones(3, np.int8) + a,
               lambda a: a // 2, lambda a: -a):
        want = fn(data)
        for got in (fn(t), _no_grad(fn, w)):
            assert isinstance(got, kiln.Tensor) and not got.requires_grad
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(), want)
    before, version = w, w._version.value
    with kiln.no_grad():
        w -= 0.5 * w
    assert w is before and w._version.value == version + 1 and w.is_leaf and w.requires_grad
    np.testing.assert_array_equal(w.numpy(), data - 0.5 * data)
    with pytest.raises(kiln.KilnError, match="leaf Tensor that requires grad"):
        w -= 1.0
    out = np.empty((2, 3), np.float32)
    assert np.add(t, 1, out=out) is out and np.array_equal(out, data + 1)
    with pytest.raises(kiln.UnsupportedArgument, match="where="):
        np.add(t, 1, where=np.array([True, False, True]))


def _no_grad(fn, *args):
    with kiln.no_grad():
        return fn(*args)


def test_numpy_predicates_on_tensors_that_require_grad_return_their_answer():
    t = kiln.tensor([1.0, 2.0], requires_grad=True)
    assert np.allclose(t, t) is True and np.array_equal(t, t * 1.0) is True
    np.testing.assert_array_equal(np.argsort(t).numpy(), [0, 1])
