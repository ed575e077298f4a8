"""complex128 gradients against finite differences, for every op whose derivative rule
holds for complex values (``Op.complex_grad``), in the conjugate (Wirtinger) convention
PyTorch uses: for a real loss L, the gradient of z = x + iy is dL/dx + i dL/dy. The loss
is Re(sum(conj(c) * f(z))) for a random complex cotangent c (what backward(c) computes);
real inputs get dL/dx. Eagerly on the tape and through a compiled function (its backward
graph compiled with complex values); complex64 gradients and dynamic sizes too."""
import numpy as np
import pytest

import kiln
from kiln.ops import REGISTRY, F

rng = np.random.default_rng(128)


def _z(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


Z23, W23, W3, X23 = _z(2, 3), _z(2, 3), _z(3), rng.standard_normal((2, 3))

# op -> (function of the arrays, arrays); each exercises the op on complex values that
# require grad (a real array among them checks the real part of a complex gradient)
CASES = {
    "add": (lambda a, b: a + b, (Z23, W3)),
    "subtract": (lambda a, b: np.subtract(a, b), (Z23, X23)),
    "multiply": (lambda a, b: a * b * (2 - 1j), (Z23, W3)),
    "true_divide": (lambda a, b: a / (b + 3), (Z23, W23)),
    "negative": (lambda a: -a, (Z23,)),
    # angle had no complex rule: AutogradError for np.angle(np.sum(r * np.exp(1j * t)))
    "angle": (lambda a: np.angle(a * (1 + 0.5j)) + np.angle(a, deg=True) * 0.01, (Z23,)),
    "positive": (lambda a: np.positive(a), (Z23,)),
    "absolute": (lambda a: np.abs(a), (Z23,)),
    "exp": (lambda a: np.exp(a), (Z23,)),
    "conjugate": (lambda a: np.conj(a) * a * (1 + 2j), (Z23,)),
    "real": (lambda a: np.real(a) * 3, (Z23,)),
    "imag": (lambda a: np.imag(a) ** 2, (Z23,)),
    # (z.real[...] = v captured: a's real part replaced, part by part)
    "complex_parts": (lambda a, x: F.complex_parts(x, np.imag(a)) * a, (Z23, X23)),
    "sum": (lambda a: np.sum(a * a, axis=0), (Z23,)),
    "mean": (lambda a: np.mean(a * a, axis=1, keepdims=True), (Z23,)),
    "sin": (lambda a: np.sin(a), (Z23,)),
    "cos": (lambda a: np.cos(a) * a, (Z23,)),
    "log": (lambda a: np.log(a), (Z23,)),
    "sqrt": (lambda a: np.sqrt(a), (Z23,)),
    "square": (lambda a: np.square(a), (Z23,)),
    # (a complex base and exponent, a real base with a complex exponent: x's gradient real)
    "power": (lambda a, b, x: a ** 2 * (1 - 1j) + a ** (b * 0.3) + (x + 3) ** (a * 0.2), (Z23, W3, X23)),
    "reciprocal": (lambda a: np.reciprocal(a + 3), (Z23,)),
    "tan": (lambda a: np.tan(a * 0.3), (Z23,)),
    "sinh": (lambda a: np.sinh(a) * a, (Z23,)),
    "cosh": (lambda a: np.cosh(a), (Z23,)),
    "tanh": (lambda a: np.tanh(a * 0.5), (Z23,)),
    "matmul": (lambda a, b: a @ b.T + a[0] @ b[1], (Z23, W23)),
    "reshape": (lambda a: a.reshape(3, 2) * a.reshape(3, 2), (Z23,)),
    "transpose": (lambda a: a.T @ a, (Z23,)),
    "getitem": (lambda a: a[1, ::-1] * a[0], (Z23,)),
    "index": (lambda a: a[:, np.array([2, 0, 2])] * a[np.array([1, 0])], (Z23,)),
    "getitem_mask": (lambda a: a[X23 > 0] * 2j + a[np.abs(a) > 1].sum(), (Z23,)),
    "broadcast_to": (lambda a: np.broadcast_to(a[0], (4, 3)) * a[1], (Z23,)),
    "broadcast_arrays_view": (lambda a: np.broadcast_arrays(a[0], np.zeros((4, 3)))[0] * a[1], (Z23,)),
    "sum_to": (lambda a, b: a * b, (Z23, W3)),     # b's gradient is summed over the broadcast
    # NumPy scalar math on complex values (a Tensor's 0-d result is a scalar to NumPy)
    "scalar_binary": (lambda a: (a.sum() * (1 - 2j) - a[0, 1]) / (a[1, 2] + 3.0) * a[0, 0], (Z23,)),
    "selected_sum": (lambda a: a[np.abs(a) > 1].sum() * (1 - 2j) + a[X23 > 0].mean(), (Z23,)),
    # (np.sum(where=) of floats and complex values: NumPy's own masked loop, an extern)
    "where_sum": (lambda a: np.sum(a * a, where=np.abs(Z23) > 1, axis=1).sum()
                  + np.sum(a, where=X23 > 0, initial=1j) * (2 + 1j), (Z23,)),
    "astype": (lambda a, x: a * x.astype(np.complex128) + np.real(a).astype(np.complex128), (Z23, X23)),
    "fft": (lambda a, x: np.fft.fft(a, n=4) * np.fft.fft(x, axis=0, norm="ortho")[:, :1], (Z23, X23)),
    "ifft": (lambda a: np.fft.ifft(a, norm="forward") * a, (Z23,)),
    "rfft": (lambda x: np.fft.rfft(x, n=5) * (1 - 2j), (X23,)),
    "fft2": (lambda a: np.fft.fft2(a, s=(3, 2)), (Z23,)),
    "ifft2": (lambda a: np.fft.ifft2(a) * np.conj(a), (Z23,)),
    "rfft2": (lambda x: np.fft.rfft2(x, norm="ortho"), (X23,)),
    "fftn": (lambda a: np.fft.fftn(a, axes=(1,)), (Z23,)),
    "ifftn": (lambda a: np.fft.ifftn(a, s=(2, 4), axes=(0, 1)), (Z23,)),   # (s without axes: deprecated)
    "rfftn": (lambda x: np.fft.rfftn(x, s=(2, 6), axes=(0, 1)), (X23,)),
    "irfft": (lambda a: np.fft.irfft(a) * 2 + np.fft.irfft(a, n=5, axis=0, norm="ortho")[:2, :1], (Z23,)),
    "irfft2": (lambda a: np.fft.irfft2(a) * 2 + np.fft.irfft2(a, s=(3, 5), norm="ortho")[:2, :4], (Z23,)),
    "irfftn": (lambda a: np.fft.irfftn(a, s=(4, 3), axes=(1, 0), norm="forward")[:2]
               + np.fft.irfftn(a, axes=(0,))[:, :2].sum(), (Z23,)),
    "hfft": (lambda a: np.fft.hfft(a, n=3, norm="forward") + np.fft.hfft(a)[:, :3], (Z23,)),
    "ihfft": (lambda x: np.fft.ihfft(x, n=4) * (1 - 2j) + np.fft.ihfft(x, axis=0)[0], (X23,)),
    # (z = zeros_like(x, complex); z.real = x captured: no gradient through the fill)
    "zeros_like": (lambda a: np.zeros_like(a) + a * a, (Z23,)),
    "ones_like": (lambda a: np.ones_like(a, dtype=np.complex128) * a, (X23 + 0j,)),
    "empty_like": (lambda a: np.empty_like(a)[:0].sum(axis=0) + a, (Z23,)),
    # the functional writes (z[0] = v, z[mask] += v): a real value into a complex array too
    "index_put": (lambda a, x: F.index_put(a, (0, slice(None, None, -1)), x[1]) * a
                  + F.index_put(a * 2, (slice(None), 1), a[:, 0]), (Z23, X23)),
    "index_add": (lambda a, w: F.index_add(a, (np.array([1, 1, 0]),), w) * a, (Z23, W3)),
    "relayout": (lambda a: F.relayout(a.T * a.T, a.T, rule="K") * 3, (Z23,)),
    "copy_into": (lambda a, x: F.copy_into(a, x[0], X23 > 0) * a + F.copy_into(a * a, a[1], True),
                  (Z23, X23)),
}


def _loss(fn, arrays, cot):
    return np.real(np.sum(np.conj(cot) * fn(*arrays)))


def _finite_differences(fn, arrays, cot, i, eps=1e-6):
    a = arrays[i]
    out = np.zeros(a.shape, a.dtype)
    for k in np.ndindex(a.shape):
        parts = []
        for step in ((1.0, 1j) if a.dtype.kind == "c" else (1.0,)):
            d = np.zeros(a.shape, a.dtype)
            d[k] = eps * step
            hi = [x + d if j == i else x for j, x in enumerate(arrays)]
            lo = [x - d if j == i else x for j, x in enumerate(arrays)]
            parts.append((_loss(fn, hi, cot) - _loss(fn, lo, cot)) / (2 * eps))
        out[k] = parts[0] + (1j * parts[1] if len(parts) > 1 else 0)
    return out


def test_every_op_with_a_complex_rule_is_checked():
    assert sorted(CASES) == sorted(n for n, op in REGISTRY.items() if op.complex_grad)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("name", list(CASES))
def test_complex128_gradient_matches_finite_differences(name, compiled):
    fn, arrays = CASES[name]
    cot_shape = np.shape(fn(*arrays))
    cot = rng.standard_normal(cot_shape) + 1j * rng.standard_normal(cot_shape)
    leaves = [kiln.tensor(a, requires_grad=True) for a in arrays]
    out = (kiln.compile(fn) if compiled else fn)(*leaves)
    if compiled:   # the compiled backward graph, not the graph run op by op on the tape
        assert type(out.grad_fn).__name__ == "CompiledFunctionBackward", out.grad_fn
    out.backward(cot.astype(out.dtype) if out.dtype.kind == "c" else np.real(cot))
    for i, (leaf, a) in enumerate(zip(leaves, arrays)):
        want = _finite_differences(fn, arrays, cot if out.dtype.kind == "c" else np.real(cot), i)
        got = leaf.grad.numpy()
        assert got.dtype == a.dtype and got.shape == a.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7, err_msg=f"{name}: input {i}")


def test_kiln_grad_of_a_complex_argument_is_dL_dx_plus_i_dL_dy():
    z = Z23.copy()
    np.testing.assert_allclose(kiln.grad(lambda z: np.abs(z).sum())(z), z / np.abs(z), rtol=1e-12)
    np.testing.assert_allclose(kiln.grad(kiln.compile(lambda z: np.real(z * z).sum()))(z),
                               2 * np.conj(z), rtol=1e-12)


def test_compiled_complex64_gradient_matches_the_tape_under_dynamic_sizes():
    def f(z, w):
        return (np.abs(np.exp(z * 0.5) * w) ** 2).sum() + np.real(z * np.conj(w)).mean()

    cf = kiln.compile(f, dynamic=True)
    for n in (3, 5):
        z = _z(n, 4).astype(np.complex64)
        w = _z(n, 4)
        got = [kiln.tensor(a, requires_grad=True) for a in (z, w)]
        want = [kiln.tensor(a, requires_grad=True) for a in (z, w)]
        cf(*got).backward()
        f(*want).backward()
        for g, t in zip(got, want):
            assert g.grad.dtype == t.grad.dtype
            np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=2e-5, atol=1e-6)
    assert len(cf.cache_entries) == 1


def test_compiled_gradient_through_an_op_without_a_complex_rule_raises():
    f = kiln.compile(lambda z: np.arcsinh(z).real.sum())
    with pytest.raises(kiln.AutogradError, match="'arcsinh' has no derivative rule for complex") as e:
        f(kiln.tensor(Z23, requires_grad=True))
    assert "test_complex_grads.py:" in str(e.value)   # the user's line
