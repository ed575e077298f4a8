"""Gradients of realistic NumPy losses and models, checked against central finite
differences in float64 (rtol 1e-5 on eps 1e-6) and values against NumPy, three ways:
eager ``kiln.grad``, ``kiln.grad`` of a compiled function (Tensors through the joint
graph) and ``kiln.value_and_grad`` called inside a compiled function (forward and
backward in one graph). Plus the regressions this hunt found: gradients silently lost or
wrong (np.add.at into a NumPy array, a Python loop or .item() inside kiln.grad, a
reused buffer in np.cross's compiled gradient, x ** 0 at x == 0) and valid programs that
raised (data-dependent sizes inside kiln.grad in compiled code).
"""
from __future__ import annotations

import numpy as np
import pytest

import kiln
from kiln.autograd import numerical_grad

_rng = np.random.default_rng(4242)
PROGRAMS: dict = {}


def rn(*shape):
    return _rng.standard_normal(shape)


def program(args, argnums=0):
    def register(fn):
        PROGRAMS[fn.__name__] = (fn, args, argnums)
        return fn
    return register


def _fd(fn, args, n):
    return numerical_grad(fn, [np.copy(a) if isinstance(a, np.ndarray) else a for a in args],
                          n, np.ones(()))


def _ways(fn, argnums):
    return {"eager": kiln.value_and_grad(fn, argnums),
            "compiled_fn": kiln.value_and_grad(kiln.compile(fn), argnums),
            "in_compiled": kiln.compile(lambda *a: kiln.value_and_grad(fn, argnums)(*a))}


def check_gradient(fn, args, argnums=0, ways=None):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    want_value = fn(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
    want = [_fd(fn, args, n) for n in nums]
    for way, vg in _ways(fn, argnums).items():
        if ways is not None and way not in ways:
            continue
        for call in range(2):   # the second call runs the cached entry
            value, grads = vg(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
            grads = grads if isinstance(argnums, tuple) else (grads,)
            where = f"{fn.__name__} {way} call {call}"
            assert type(value) is type(want_value), where
            np.testing.assert_allclose(value, want_value, rtol=1e-10, atol=1e-14, err_msg=where)
            for n, g, w in zip(nums, grads, want):
                assert g.dtype == np.asarray(args[n]).dtype and g.shape == np.shape(args[n]), where
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"{where} d/d arg {n}")


# ----------------------------------------------------------------------------- models

_X, _yb, _yi = rn(12, 5), (_rng.random(12) > 0.5).astype(np.float64), _rng.integers(0, 4, 12)


@program((rn(5) * 0.3, _X, _yb, 0.01))
def logistic_l2(w, X, y, lam):
    p = 1 / (1 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)) + lam * np.sum(w ** 2)


@program((rn(5, 6) * 0.4, rn(6) * 0.1, rn(6, 4) * 0.4, np.zeros(4), _X, _yi), argnums=(0, 1, 2, 3))
def mlp_softmax_cross_entropy(W1, b1, W2, b2, X, y):
    h = np.tanh(X @ W1 + b1)
    o = h @ W2 + b2
    o = o - o.max(axis=1, keepdims=True)
    logp = o - np.log(np.sum(np.exp(o), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(X.shape[0]), y])


@program((rn(5, 6) * 0.4, rn(6) * 0.1, rn(6, 4) * 0.4, _X), argnums=(0, 1, 2))
def mlp_gelu(W1, b1, W2, X):
    h = X @ W1 + b1
    h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
    return np.sum((h @ W2) ** 2)


@program((_X, rn(5) + 1, rn(5)), argnums=(0, 1, 2))
def layernorm_then_batchnorm(X, g, b):
    y = (X - X.mean(-1, keepdims=True)) / np.sqrt(X.var(-1, keepdims=True) + 1e-5) * g + b
    z = (y - y.mean(0)) / y.std(axis=0, ddof=1)
    return np.sum(np.sin(z) * np.arange(z.size).reshape(z.shape) * 0.01)


@program((rn(6, 4), rn(6, 4), rn(6, 4)), argnums=(0, 1, 2))
def causal_attention(Q, K, V):
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    s = np.where(np.triu(np.ones((6, 6), dtype=bool), k=1), -np.inf, s)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    return np.sum((p @ V) ** 2)


@program((np.array([-1.0, 0.5, 2.0]), np.array([0.1, -0.2, 0.3]), np.array([0.2, 0.1, -0.3]), rn(20)),
         argnums=(0, 1, 2))
def gaussian_mixture_nll(mus, log_sigmas, logits, x):
    logw = logits - np.log(np.sum(np.exp(logits)))
    z = (x[:, None] - mus) / np.exp(log_sigmas)
    lp = -0.5 * z ** 2 - log_sigmas - 0.5 * np.log(2 * np.pi) + logw
    m = lp.max(axis=1, keepdims=True)
    return -np.sum(m[:, 0] + np.log(np.exp(lp - m).sum(axis=1)))


@program((rn(3) * 0.3, np.array(0.3), rn(15, 3), _rng.poisson(2.0, 15).astype(np.float64)),
         argnums=(0, 1))
def negative_binomial_nll(beta, log_r, X, y):
    mu, r = np.exp(X @ beta), np.exp(log_r)
    return -np.sum(r * np.log(r / (r + mu)) + y * np.log(mu / (r + mu)))


@program((rn(3) * 0.3, rn(15, 3), rn(15) * 2, 1.0))
def huber_regression(w, X, y, delta):
    r = X @ w - y
    a = np.abs(r)
    return np.mean(np.where(a <= delta, 0.5 * r ** 2, delta * (a - 0.5 * delta)))


@program((rn(7, 3) * 1.5,))
def lennard_jones(P):
    diff = P[:, None, :] - P[None, :, :]
    r2 = np.sum(diff ** 2, axis=-1)[np.triu_indices(P.shape[0], 1)]
    inv6 = 1.0 / r2 ** 3
    return np.sum(4 * (inv6 ** 2 - inv6))


_EDGES = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [0, 2], [4, 5], [5, 6], [6, 4], [1, 4]])


@program((rn(7, 3), _rng.random(9) + 1), argnums=(0, 1))
def spring_forces_add_at(P, k):
    i, j = _EDGES[:, 0], _EDGES[:, 1]
    d = P[i] - P[j]
    L = np.linalg.norm(d, axis=1)
    f = (k * (L - 1.0) / L)[:, None] * d
    F = np.zeros_like(P)
    np.add.at(F, i, -f)
    np.add.at(F, j, f)
    return np.sum(F ** 2)


@program((np.array([0.7, 0.3, 0.5]), np.array([1.0, 0.2])), argnums=(0, 1))
def rk4_two_compartments(theta, y0):
    def rhs(y):
        return np.stack([-theta[0] * y[0] + theta[1] * y[1], theta[0] * y[0] - theta[2] * y[1]])
    y, h = y0, 0.2
    for _ in range(10):
        k1 = rhs(y)
        k2 = rhs(y + h / 2 * k1)
        k3 = rhs(y + h / 2 * k2)
        k4 = rhs(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.sum((y - np.array([0.3, 0.5])) ** 2)


_XG = np.sort(_rng.uniform(-3, 3, 10))


@program((np.array([0.0, 0.1, -1.0]), _XG, np.sin(_XG) + 0.1 * rn(10)))
def gp_log_marginal_likelihood(params, X, y):
    ell, sf, sn = np.exp(params)
    K = sf ** 2 * np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2 / ell ** 2) + (sn ** 2 + 1e-8) * np.eye(len(X))
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * len(X) * np.log(2 * np.pi)


@program((np.array(0.5), rn(12, 4), rn(12)), argnums=(0, 1, 2))
def ridge_validation_loss(lam, X, y):
    w = np.linalg.solve(X.T @ X + lam * np.eye(X.shape[1]), X.T @ y)
    return np.mean((X[:5] @ w + 0.1 - y[:5]) ** 2) + np.linalg.slogdet(np.linalg.inv(X.T @ X + lam))[1]


@program((np.array([0.1, -0.5, 0.2, 1.0]), np.linspace(-1, 1, 9)), argnums=(0, 1))
def polynomial_fit_vander(c, x):
    # x holds 0.0: d/dx x**0 is 0 there, not 0 * 0**-1 = nan
    return np.sum((np.vander(x, len(c)) @ c - np.cos(2 * x)) ** 2) + np.sum(np.polyval(c, x) ** 2)


@program((rn(10), rn(4, 6)), argnums=(0, 1))
def scans_sorts_and_joins(x, M):
    a = np.sum(np.cumsum(x) ** 2) + np.sum(np.diff(x, n=2) ** 2) + np.mean(np.sort(x)[2:-2])
    b = np.sum(np.clip(x, -0.5, 0.7) ** 2) + np.linalg.norm(M) + np.sum(np.linalg.norm(M, ord=1, axis=1))
    c = np.einsum("i,ij,j->", x[:4], M, x[4:]) + np.sum(np.tensordot(M, M.T, axes=1) ** 2) * 0.01
    d = np.sum(np.concatenate([x[::3], M[:, 0], M.reshape(3, 8).T[1]]) ** 2)
    return a + b + c + d + np.sum(np.stack([x[1:9:2], M[0, :4]]) ** 3)


@program((rn(5, 3), rn(5, 3)), argnums=(0, 1))
def cross_product_torque(r, f):
    # the compiled gradient reused a buffer an identity sum_to still returned
    return np.sum(np.cross(r, f) ** 2)


_KX, _KY = np.meshgrid(np.fft.fftfreq(8) * 8, np.fft.rfftfreq(8) * 8, indexing="ij")
_K2 = _KX ** 2 + _KY ** 2
_K2[0, 0] = 1.0


@program((rn(8, 8), rn(8, 8)))
def spectral_poisson_fit(rho, target):
    # -lap(phi) = rho on a periodic grid, solved in Fourier space: irfft2 had no rule
    phi_hat = np.fft.rfft2(rho - rho.mean()) / _K2
    phi = np.fft.irfft2(phi_hat, s=rho.shape)
    smooth = np.fft.irfftn(np.fft.rfftn(phi) * np.exp(-0.1 * _K2), s=phi.shape, axes=(0, 1))
    return np.sum((smooth - target) ** 2)


@program((rn(4, 7),))
def soft_drawdown_penalty(w):
    # running peaks of a 2-D book, the gradient flows to where each peak was set
    equity = np.cumsum(w * 0.1, axis=1)
    dd = np.maximum.accumulate(equity, axis=1) - equity
    floor = np.minimum.accumulate(w, axis=0) + np.fmax.accumulate(w[::-1], axis=0) \
        - np.fmin.accumulate(w.T, axis=1).T
    return np.sum(dd ** 2) + np.sum(floor * np.arange(7.0))


@program((rn(5, 4), rn(4)), argnums=(0, 1))
def tiered_loss(x, b):
    # np.choose picks a regime per element: the gradient goes to the chosen branch
    regime = (x > -0.5).astype(np.int64) + (x > 0.5)
    y = np.choose(regime, [-x * b, x * x, np.sin(x) + b])
    return np.sum(y * np.arange(4.0)) + np.sum(np.choose(regime[0] + 4, [b, x[1], b * b], mode="wrap"))


@program((rn(6), rn(6)), argnums=(0, 1))
def complex_field_written_in_place(x, w):
    # writes into a complex array (whole, masked, fancy, out=, augmented): the eager tape
    # refused any write into a complex Tensor, compiled code any through copy_into/index_put
    z = np.zeros_like(x, dtype=np.complex128)
    z[...] = x * w
    z += 1j * np.sin(x)
    z[np.array([0, 2])] = w[:2] * (1 - 2j)
    z[x > 0] *= 0.5
    np.multiply(z, w, out=z)
    z *= z
    return np.sum(np.abs(np.fft.fft(z)) ** 2)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradient_program(name):
    fn, args, argnums = PROGRAMS[name]
    check_gradient(fn, args, argnums)


# ----------------------------------------------------------------------------- regressions

def test_add_at_into_a_numpy_array_raises_instead_of_a_zero_gradient():
    """np.add.at(acc, i, t) with acc = np.zeros(n): NumPy hands the call to the Tensor but
    the sum lands in a plain array; eager kiln.grad returned zeros."""
    idx = np.array([0, 1, 1])

    def per_node(v):
        acc = np.zeros(3)
        np.add.at(acc, idx, v)
        return np.sum(acc ** 2)

    v = np.array([1.0, 2.0, 3.0])
    with pytest.raises(kiln.KilnError, match=r"add_at into a NumPy array .*test_programs_grads.py:\d+"):
        kiln.grad(per_node)(v)
    # traced in a compiled function, the write is followed
    np.testing.assert_allclose(kiln.compile(lambda v: kiln.grad(per_node)(v))(v), [2.0, 10.0, 10.0])


def test_power_gradient_is_zero_for_a_zero_exponent():
    x = np.array([0.0, 1.0, 2.0])
    for vg in (kiln.grad(lambda x: np.sum(np.vander(x, 3))),
               kiln.compile(lambda x: kiln.grad(lambda x: np.sum(np.vander(x, 3)))(x))):
        np.testing.assert_array_equal(vg(x), [1.0, 3.0, 5.0])
    # a run-time exponent, zero on one call and not on the next: one graph
    f = kiln.compile(lambda x, q: kiln.grad(lambda x, q: np.sum(x ** q))(x, q))
    np.testing.assert_array_equal(f(x, 0.0), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(f(x, 2.0), [0.0, 2.0, 4.0])


def _running_product(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[i - 1]
    return s


def _halve_until_small(w, X):
    z = X @ w
    n = 0
    while np.max(np.abs(z)) > 0.5 and n < 10:
        z = z * 0.5
        n += 1
    return np.sum((z - 1.0) ** 2)


@pytest.mark.parametrize("fn, args", [(_running_product, (rn(6),)),
                                      (_halve_until_small, (rn(4) * 0.3, rn(16, 4)))],
                         ids=["for_loop_node", "while_loop_node"])
def test_a_loop_inside_kiln_grad_in_compiled_code_is_differentiated(fn, args):
    """Capture made these loops one loop node, which has no derivative rule; the backward
    saw no path through it and the compiled kiln.grad returned zeros."""
    check_gradient(fn, args, ways=("in_compiled",))


def test_data_dependent_sizes_inside_kiln_grad_in_compiled_code():
    """The backward of np.bincount(i, weights=x) / x[np.nonzero(m)] was written with the
    first call's sizes: the next call raised a broadcasting ValueError."""
    labels = [np.array([2, 0, 2, 1, 0, 2, 1, 1]), np.array([0, 1, 0, 1, 1, 3, 0, 0])]

    def by_label(x, lab):
        return np.sum(np.bincount(lab, weights=x) ** 2) + np.sum(x[np.nonzero(x > 0)] ** 2)

    f = kiln.compile(lambda x, lab: kiln.grad(by_label)(x, lab))
    for lab in labels:
        x = rn(8)
        np.testing.assert_allclose(f(x, lab), _fd(by_label, (x, lab), 0), rtol=1e-6, atol=1e-8)


def test_item_of_a_value_being_differentiated_raises_and_format_works():
    """``s = np.std(r).item()`` made a constant of a value the loss depends on: the
    gradient missed its path, silently. f"{loss:.3f}" raised TypeError."""
    X, y = rn(6, 3), rn(6)

    def scaled(w):
        r = X @ w - y
        return np.mean(r ** 2) / np.std(r).item()

    w = np.ones(3)
    for fn in (kiln.grad(scaled), kiln.compile(lambda w: kiln.grad(scaled)(w))):
        with pytest.raises(kiln.KilnError, match=r"t\.item\(\) of a Tensor .*test_programs_grads.py:\d+"):
            fn(w)

    def scaled_by_float(w):     # (compiled, float() of it gave the gradient without its path)
        r = X @ w - y
        return np.mean(r ** 2) / float(np.std(r))

    with pytest.raises(kiln.KilnError, match=r"float\(t\) of a Tensor"):
        kiln.compile(lambda w: kiln.grad(scaled_by_float)(w))(w)

    def logged(w):
        loss = np.mean((X @ w - y) ** 2)
        text = f"{loss:.3f}"
        assert text == f"{float(loss.detach()) if hasattr(loss, 'detach') else loss:.3f}"
        return loss

    np.testing.assert_allclose(kiln.grad(logged)(w), _fd(logged, (w,), 0), rtol=1e-6)


def test_compiled_sgd_step_matches_a_hand_written_gradient():
    X, y = rn(64, 8), _rng.integers(0, 3, 64)

    def loss_fn(W1, W2):
        h = np.tanh(X @ W1)
        o = h @ W2
        o = o - o.max(axis=1, keepdims=True)
        return -np.mean((o - np.log(np.exp(o).sum(axis=1, keepdims=True)))[np.arange(64), y])

    @kiln.compile
    def step(W1, W2, lr):
        loss, (g1, g2) = kiln.value_and_grad(loss_fn, argnums=(0, 1))(W1, W2)
        W1 -= lr * g1
        W2 -= lr * g2
        return loss

    def hand_step(W1, W2, lr):
        h = np.tanh(X @ W1)
        o = h @ W2
        p = np.exp(o - o.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        loss = -np.mean(np.log(p[np.arange(64), y]))
        d = p.copy()
        d[np.arange(64), y] -= 1
        d /= 64
        g2, g1 = h.T @ d, X.T @ (d @ W2.T * (1 - h ** 2))
        W1 -= lr * g1
        W2 -= lr * g2
        return loss

    A = [rn(8, 16) * 0.3, rn(16, 3) * 0.3]
    B = [a.copy() for a in A]
    for lr in (0.5, 0.5, 0.2, 0.2):   # a new learning rate is a run-time value
        got, want = step(*A, lr), hand_step(*B, lr)
        assert type(got) is type(want)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for a, b in zip(A, B):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_float32_gradients_keep_float32():
    W, x = rn(4, 3).astype(np.float32), rn(4).astype(np.float32)

    def f(W, x):
        return np.sum(np.tanh(x @ W) ** 2) * 0.5

    want = kiln.grad(f, argnums=(0, 1))(W.astype(np.float64), x.astype(np.float64))
    for way, vg in _ways(f, (0, 1)).items():
        value, grads = vg(W, x)
        assert type(value) is np.float32, way
        for g, w in zip(grads, want):
            assert g.dtype == np.float32, way
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=way)


_ZEROS = np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 0.5], [1.5, 2.0, 3.0], [0.0, 0.0, 2.0]])


def _prod_rows(m):
    return np.sum(np.prod(m, axis=1) * np.arange(1.0, 5.0))


def _prod_columns_keepdims(m):
    return np.sum(np.prod(m, axis=0, keepdims=True) ** 2)


def _prod_all(m):
    return np.prod(m[1:3])


def _cumprod_rows(m):
    return np.sum(np.cumprod(m, axis=1) * np.arange(1.0, 4.0))


def _cumprod_flat(m):
    return np.sum(np.cumprod(m) * np.arange(12.0))


@pytest.mark.parametrize("fn", [_prod_rows, _prod_columns_keepdims, _prod_all, _cumprod_rows, _cumprod_flat])
def test_products_with_exact_zeros_differentiate_to_the_product_of_the_others(fn):
    """prod and cumprod divided by the input: an exact zero gave nan (one zero in a row)
    or a wrong 0 (two); the derivative is the product of the other factors, as in JAX."""
    check_gradient(fn, (_ZEROS,))
    check_gradient(fn, (_ZEROS + 0.25,))


def _complex_from_parts(x, w):
    # a complex field built by attribute stores into its parts, then transformed
    z = np.zeros_like(x, dtype=np.complex128)
    z.real = x * w
    z.imag = np.sin(x)
    z[1:].imag += x[:-1]
    z[::2].real -= w[::2] ** 2
    spec = np.fft.fft(z)
    return np.sum(np.abs(spec) ** 2) + np.sum(z.real * z.imag)


def test_writes_into_complex_parts_differentiate_in_compiled_code():
    """`z.real = x` in a compiled function raised AutogradError: zeros_like, the
    functional write (index_put) and the layout copy after it had no complex rule,
    though each is linear. Eagerly the writes go back into the base through the view
    ops (tensor_apply._write_through_view); before, the Tensor's .real had no setter at
    all (AttributeError), then every write into a view of a recording Tensor raised."""
    check_gradient(_complex_from_parts, (rn(6), rn(6)), (0, 1))


def test_tensor_part_setters_write_as_numpy_does():
    for dtype in (np.float64, np.complex128):
        want = np.zeros(3, dtype)
        t = kiln.tensor(np.zeros(3, dtype))
        want.real = np.arange(3.0)
        t.real = np.arange(3.0)
        if dtype == np.complex128:
            want.imag = 2.0
            t.imag = 2.0
        else:
            with pytest.raises(TypeError) as plain:
                want.imag = 2.0
            with pytest.raises(TypeError) as kiln_err:
                t.imag = 2.0
            assert str(kiln_err.value) == str(plain.value)
        np.testing.assert_array_equal(np.asarray(t.detach()), want)
