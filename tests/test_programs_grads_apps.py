"""Gradients of NumPy models as users write them, each with its own generator, checked
like tests/test_programs_grads.py (values against NumPy, gradients against central
finite differences in float64, three ways: eager ``kiln.value_and_grad``, of a compiled
function, and called inside a compiled function) and, here, that no argument is
mutated: convolutions by windows and by loops of slices, an RNN unrolled over a Python
loop, leapfrog n-body and explicit-Euler springs, Gaussian log-likelihoods with
np.linalg, batched attention, layer norm, losses with kinks, gathers and scatters,
reductions, joins, einsum, sort-based statistics and interpolation. The regressions this
hunt found follow the programs: in-place updates through a view of a value being
differentiated (``f[1:] += ...``) raised on the eager tape, and cholesky's gradient was
the symmetric one where NumPy reads one triangle, and einsum with a repeated index in
one operand (``'bii->b'``) and matrix norms other than 'fro' had no derivative rule.
"""
from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import kiln
from tests.test_programs_grads import _fd, _ways, check_gradient

PROGRAMS: dict = {}


def program(seed, make_args, argnums=0):
    """Register ``fn`` with the arguments ``make_args(rng)`` draws from its own generator."""
    def register(fn):
        PROGRAMS[fn.__name__] = (fn, make_args(np.random.default_rng(seed)), argnums)
        return fn
    return register


def check_app(fn, args, argnums=0, ways=None):
    check_gradient(fn, args, argnums, ways)
    kept = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    for way, vg in _ways(fn, argnums).items():
        if ways is None or way in ways:
            vg(*args)
            for a, k in zip(args, kept):
                if isinstance(a, np.ndarray):
                    np.testing.assert_array_equal(a, k, err_msg=f"{fn.__name__} {way} mutated an argument")


# ----------------------------------------------------------------------------- models

@program(1, lambda r: (r.standard_normal((5, 4)) * 0.4, r.standard_normal(4) * 0.1,
                       r.standard_normal((4, 3)) * 0.4, r.standard_normal((10, 5)),
                       r.integers(0, 3, 10)), argnums=(0, 1, 2))
def mlp_log_sum_exp_cross_entropy(W1, b1, W2, X, y):
    h = np.maximum(X @ W1 + b1, 0.0)
    z = h @ W2
    m = np.max(z, axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.sum(np.exp(z - m), axis=1))
    return np.mean(lse - z[np.arange(len(y)), y])


@program(2, lambda r: (r.standard_normal(3) * 0.3, r.standard_normal((12, 3)),
                       (r.random(12) > 0.5).astype(np.float64), 0.1))
def logistic_regression_logaddexp_ridge(w, X, y, lam):
    z = X @ w
    return np.mean(np.logaddexp(0, z) - y * z) + lam * np.linalg.norm(w) ** 2


@program(3, lambda r: (r.standard_normal((3, 3)) * 0.5, r.standard_normal((6, 6))), argnums=(0, 1))
def conv_sliding_window_relu(k, img):
    out = np.einsum("ijkl,kl->ij", sliding_window_view(img, (3, 3)), k)
    return np.sum(np.maximum(out, 0) ** 2) + np.sum(np.tanh(out))


@program(4, lambda r: (r.standard_normal((2, 3, 3)) * 0.5, r.standard_normal((7, 7))), argnums=(0, 1))
def conv_loop_of_slices_then_max_pool(k, img):
    H = img.shape[0] - 2
    out = np.zeros((2, H, H))
    for i in range(3):
        for j in range(3):
            out = out + k[:, i, j][:, None, None] * img[i:i + H, j:j + H]
    return np.sum(out.max(axis=(1, 2)) ** 2) + np.sum(out ** 2) * 0.1


@program(5, lambda r: (r.standard_normal((4, 4)) * 0.3, r.standard_normal((3, 4)) * 0.3,
                       r.standard_normal((6, 3))), argnums=(0, 1, 2))
def rnn_unrolled_over_time(Wh, Wx, xs):
    h = np.zeros(4)
    hs = []
    for t in range(xs.shape[0]):
        h = np.tanh(h @ Wh + xs[t] @ Wx)
        hs.append(h)
    H = np.stack(hs)
    return np.sum(H[-1] ** 2) + np.mean(H)


@program(6, lambda r: (r.standard_normal((4, 2)), r.standard_normal((4, 2)) * 0.1,
                       r.random(4) + 0.5), argnums=(0, 1, 2))
def nbody_leapfrog(x, v, m):
    dt = 0.01

    def acc(x):
        d = x[None, :, :] - x[:, None, :]
        r2 = np.sum(d ** 2, axis=-1) + 0.1
        return np.sum(d * (m[None, :] / r2 ** 1.5)[:, :, None], axis=1)

    a = acc(x)
    for _ in range(5):
        v = v + 0.5 * dt * a
        x = x + dt * v
        a = acc(x)
        v = v + 0.5 * dt * a
    return np.sum(x ** 2) + np.sum(m[:, None] * v ** 2)


@program(7, lambda r: (r.random(5) + 0.5, r.standard_normal(5) * 0.1), argnums=(0, 1))
def spring_chain_euler_in_place(k, x0):
    # in-place updates through views of arrays being differentiated (f[1:] += ...)
    x = x0.copy()
    v = np.zeros_like(x0)
    for _ in range(10):
        f = -k * x
        f[1:] += k[1:] * x[:-1] * 0.5
        f[:-1] -= 0.1 * x[1:]
        v += 0.05 * f
        x += 0.05 * v
    return np.sum(x ** 2)


def _spd(r, n):
    a = r.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


@program(8, lambda r: (_spd(r, 4), r.standard_normal(4), r.standard_normal(4)), argnums=(0, 1, 2))
def gaussian_log_likelihood_slogdet_solve(S, mu, x):
    _, logdet = np.linalg.slogdet(S)
    d = x - mu
    return -0.5 * (logdet + d @ np.linalg.solve(S, d) + len(x) * np.log(2 * np.pi))


@program(9, lambda r: (_spd(r, 4), r.standard_normal(4), r.standard_normal((7, 4))), argnums=(0, 1))
def gaussian_log_likelihood_cholesky(S, mu, X):
    # cholesky reads S's lower triangle, inv all of it: the gradient is not symmetric
    L = np.linalg.cholesky(S)
    Z = np.linalg.solve(L, (X - mu).T)
    return -0.5 * np.sum(Z ** 2) - X.shape[0] * np.sum(np.log(np.diag(L))) + np.trace(np.linalg.inv(S))


@program(10, lambda r: tuple(r.standard_normal((2, 5, 4)) for _ in range(3)) + (r.standard_normal((4, 4)),),
         argnums=(0, 1, 2, 3))
def batched_attention(Q, K, V, Wo):
    s = Q @ np.swapaxes(K, -1, -2) / 2.0
    p = np.exp(s - np.max(s, axis=-1, keepdims=True))
    p /= np.sum(p, axis=-1, keepdims=True)
    return np.sum((np.matmul(p, V) @ Wo) ** 2)


@program(11, lambda r: (r.standard_normal((5, 6)), r.standard_normal(6) + 1, r.standard_normal(6)),
         argnums=(0, 1, 2))
def layer_norm(x, g, b):
    y = (x - np.mean(x, axis=-1, keepdims=True)) / np.sqrt(np.var(x, axis=-1, keepdims=True) + 1e-5)
    return np.sum((y * g + b) * np.arange(30.0).reshape(5, 6))


@program(12, lambda r: (r.standard_normal(8), r.standard_normal(8)), argnums=(0, 1))
def losses_with_kinks(p, t):
    return (np.sum(np.abs(p - t)) + np.sum(np.maximum(0, 1 - p * t)) + np.sum(np.where(p > 0, p ** 2, -p))
            + np.sum(np.clip(p, -0.3, 0.3) * t) + np.sum(np.minimum(p, t) ** 2))


@program(13, lambda r: (np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.5]]),))
def max_min_with_ties(x):
    return np.sum(np.max(x, axis=1) * np.array([1.0, 2.0])) + np.min(x) * 3 + np.amax(x)


@program(14, lambda r: (r.standard_normal((6, 3)), np.array([0, 2, 2, 5, 1])))
def gathers(x, idx):
    return (np.sum(x[idx] ** 2) + np.sum(np.take(x, idx, axis=0)[:, 1]) + np.sum(x[x > 0] ** 3)
            + np.sum(np.take(x.ravel(), [1, 1, 7])) + np.sum(x[idx, [0, 1, 2, 0, 1]]))


@program(15, lambda r: (r.standard_normal(5), r.standard_normal(3)), argnums=(0, 1))
def scatters(x, v):
    y = x.copy()
    y[np.array([0, 2, 4])] += v
    y[1:3] *= 2.0
    z = np.zeros_like(x)
    z[[1, 3]] = v[:2]
    w = x.copy()
    w[np.array([0, 2, 2])] += v   # a repeated index: the last write wins, as in NumPy
    return np.sum(y ** 2) + np.sum(z * x) + np.sum(w ** 2)


@program(16, lambda r: (r.standard_normal((3, 4)),))
def reductions(x):
    a = np.linalg.norm(x, axis=0).sum() + np.linalg.norm(x.ravel(), np.inf)
    b = np.sum(np.cumsum(x, axis=1) ** 2) + np.sum(np.cumprod(x, axis=0))
    c = np.sum(np.var(x, axis=0)) + np.sum(np.std(x, axis=1, keepdims=True)) + np.sum(np.mean(x, axis=(0, 1), keepdims=True))
    return a + b + c + np.prod(x[0]) + np.ptp(x) + np.median(x) + np.average(x, axis=0, weights=np.arange(1.0, 4.0)).sum()


@program(17, lambda r: (r.standard_normal((3, 4)), r.standard_normal((2, 4))), argnums=(0, 1))
def joins_and_layouts(x, y):
    a, b, c = np.split(np.concatenate([x, y], axis=0), [1, 3], axis=0)
    s = np.stack([x[0], y[1]], axis=1)
    p = np.pad(x, ((1, 0), (2, 1)), mode="constant", constant_values=1.0)
    q = np.pad(y, 1, mode="reflect")
    h = np.hstack([x.T.reshape(-1), y.ravel()])
    t = np.vstack([x, y]).transpose(1, 0)
    return (np.sum(a ** 2) + np.sum(b * c[:2]) + np.sum(s ** 3) + np.sum(p ** 2 * np.arange(7.0))
            + np.sum(q ** 2) + h @ np.arange(20.0) + np.sum(t[::2] ** 2) + np.sum(np.array_split(x, 3, axis=1)[2] ** 2)
            + np.sum(np.roll(x, 1, axis=1) * np.arange(4.0)) + np.sum(np.rot90(x) ** 3) + np.sum(np.tile(x, (2, 1)) ** 2)
            + np.sum(np.repeat(x, [1, 2, 3], axis=0) ** 2) + np.sum(np.moveaxis(x[None], 0, -1)[..., 0] * np.arange(4.0)))


@program(18, lambda r: (r.standard_normal((2, 3, 4)), r.standard_normal((4, 5)), r.standard_normal((3, 5))),
         argnums=(0, 1, 2))
def einsum_and_batched_matmul(a, b, c):
    x = a @ b
    z = np.einsum("bij,ik->bjk", x, c)
    return np.sum(x * np.einsum("bij,jk->bik", a, b)) + np.sum(z ** 2) + np.einsum("ij,ij->", c, c)


@program(21, lambda r: (r.standard_normal((2, 3, 3)), r.standard_normal((3, 2, 3, 2)), r.standard_normal((3, 4))),
         argnums=(0, 1, 2))
def einsum_traces_and_diagonals(a, c, w):
    # a repeated index in one operand reads a diagonal: it had no derivative rule
    return (np.sum(np.einsum("bii->b", a) ** 2) + np.sum(np.einsum("bii,ij->bj", a, w) ** 2)
            + np.sum(np.einsum("ijij->ij", c) * np.arange(6.0).reshape(3, 2)) + np.einsum("ii", a[0] @ a[1]))


@program(22, lambda r: (r.standard_normal((4, 3)), r.standard_normal((2, 3, 4)), r.standard_normal((4, 3))),
         argnums=(0, 1))
def matrix_norm_regularizers(W, B, target):
    # low-rank fit with nuclear/spectral penalties and induced 1/inf norms: matrix ords
    # other than 'fro' had no derivative rule
    fit = np.sum((W - target) ** 2)
    return (fit + 0.1 * np.linalg.norm(W, "nuc") + 0.2 * np.linalg.norm(W, 2) - 0.05 * np.linalg.norm(W, -2)
            + np.linalg.norm(W, 1) + np.linalg.norm(W.T, np.inf) + np.linalg.norm(W, -1) + np.linalg.norm(W, -np.inf)
            + np.sum(np.linalg.norm(B, 2, axis=(2, 0)) * np.arange(1.0, 4.0))
            + np.sum(np.linalg.norm(B, "nuc", axis=(1, 2), keepdims=True) ** 2)
            + np.sum(np.linalg.norm(B, 1, axis=(0, 2))))


def test_matrix_one_norm_splits_a_tie_between_two_columns():
    # finite differences see a two-way tie as half the gradient to each column (as max)
    check_app(lambda W: np.linalg.norm(W, 1) + np.linalg.norm(W.T, -np.inf),
              (np.array([[1.0, -2.0, 0.5], [2.0, 1.0, -1.5]]),))


@program(19, lambda r: (r.standard_normal(7),))
def sort_based_statistics(x):
    ranked = x[np.argsort(x)] * np.arange(7.0)
    return (np.sort(x)[1:-1].mean() + ranked.sum() + np.quantile(x, 0.3) + np.percentile(x, 75)
            + np.partition(x, 3)[3])


@program(20, lambda r: (r.standard_normal(6), r.standard_normal(6) * 0.5))
def interp_and_polyval(y, x):
    xp = np.linspace(-2, 2, 6)
    grid = np.linspace(-1.5, 1.5, 11)
    return np.sum(np.interp(grid, xp, y) ** 2) + np.sum(np.polyval(y[:3], grid) ** 2) + np.sum(np.interp(x, xp, y))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradient_app(name):
    fn, args, argnums = PROGRAMS[name]
    check_app(fn, args, argnums)


def _unique_energy(x):
    return np.sum(np.unique(x) ** 2)


def _weibull_quantile(x):
    return np.quantile(x, 0.3, method="weibull") + np.sum(x)


def _bessel_window(x):
    return np.sum(np.i0(x) * x)


@pytest.mark.parametrize("fn, what", [(_unique_energy, "Differentiation rule for 'unique'"),
                                      (_weibull_quantile, "quantile with method='weibull'"),
                                      (_bessel_window, "no kiln op for numpy.i0")])
def test_a_missing_derivative_names_the_users_line(fn, what):
    """NoDerivative said which op but not where: raised when the backward ran, it named
    no line of the user's code. Now the eager tape notes the line of calls to ops that
    may lack a rule, and compiled graphs take it from the node's source."""
    x = np.random.default_rng(23).standard_normal(6)
    line = fn.__code__.co_firstlineno + 1
    for way, vg in _ways(fn, 0).items():
        with pytest.raises(kiln.KilnError, match=rf"at \S*test_programs_grads_apps.py:{line}: .*{what}"):
            vg(x)


def _mlp_params_loss(params, X, y):
    h = X
    for layer in params["layers"]:
        h = np.tanh(h @ layer["W"] + layer["b"])
    return np.mean((h @ params["head"][0] + params["head"][1] - y) ** 2)


def test_gradients_of_a_dict_of_parameters_have_its_structure():
    """kiln.grad of a dict/list of arrays (JAX's pytrees) raised 'argument 0 has dtype
    object'; now the gradient has the argument's structure, each leaf checked against
    finite differences, and a list of numbers stays one array-like argument."""
    r = np.random.default_rng(31)
    params = {"layers": [{"W": r.standard_normal((4, 5)) * 0.5, "b": r.standard_normal(5) * 0.1},
                         {"W": r.standard_normal((5, 3)) * 0.5, "b": np.zeros(3)}],
              "head": (r.standard_normal((3, 2)), r.standard_normal(2))}
    X, y = r.standard_normal((6, 4)), r.standard_normal((6, 2))
    flat = [params["layers"][0]["W"], params["layers"][0]["b"], params["layers"][1]["W"],
            params["layers"][1]["b"], params["head"][0], params["head"][1]]

    def with_leaves(*leaves):
        return {"layers": [{"W": leaves[0], "b": leaves[1]}, {"W": leaves[2], "b": leaves[3]}],
                "head": (leaves[4], leaves[5])}

    want = kiln.grad(lambda *leaves: _mlp_params_loss(with_leaves(*leaves), X, y),
                     argnums=tuple(range(6)))(*flat)
    for n, w in enumerate(want):
        fd = _fd(lambda *leaves: _mlp_params_loss(with_leaves(*leaves), X, y), flat, n)
        np.testing.assert_allclose(w, fd, rtol=1e-5, atol=1e-7)
    for way, vg in _ways(_mlp_params_loss, 0).items():
        value, g = vg(params, X, y)
        np.testing.assert_allclose(value, _mlp_params_loss(params, X, y), rtol=1e-12, err_msg=way)
        assert type(g) is dict and type(g["layers"]) is list and type(g["head"]) is tuple, way
        got = [g["layers"][0]["W"], g["layers"][0]["b"], g["layers"][1]["W"], g["layers"][1]["b"],
               g["head"][0], g["head"][1]]
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14, err_msg=way)
    np.testing.assert_array_equal(kiln.grad(lambda w: np.sum(np.multiply(w, w)))([1.0, 2.0]), [2.0, 4.0])


def _conv_as_strided(k, img):
    s = img.strides
    w = np.lib.stride_tricks.as_strided(img, shape=(4, 4, 3, 3), strides=(s[0], s[1], s[0], s[1]))
    return np.sum(np.einsum("ijkl,kl->ij", w, k) ** 2)


def test_as_strided_of_a_value_being_differentiated_points_to_sliding_window_view():
    """as_strided reads raw memory (np.asarray of the Tensor): the error said to build
    arrays with np.stack; it now names as_strided, the line, and sliding_window_view."""
    r = np.random.default_rng(37)
    k, img = r.standard_normal((3, 3)), r.standard_normal((6, 6))
    line = _conv_as_strided.__code__.co_firstlineno + 2
    for way, vg in _ways(_conv_as_strided, (0, 1)).items():
        with pytest.raises(kiln.KilnError, match=rf"as_strided at \S*test_programs_grads_apps.py:{line} "
                                                 rf".*sliding_window_view"):
            vg(k, img)
    # the same convolution by windows is differentiated
    check_app(lambda k, img: np.sum(np.einsum("ijkl,kl->ij", sliding_window_view(img, (3, 3)), k) ** 2),
              (k, img), (0, 1))


def _add_into_broadcast(x):
    b = np.broadcast_to(x, (3, 3))
    b += 1.0
    return np.sum(b)


def _scale_a_diagonal(x):
    d = np.diagonal(x[:, None] * np.ones(3))
    d *= 2.0
    return np.sum(d)


def _set_a_diagonal(x):
    d = np.diagonal(x[:, None] * np.ones(3))
    d[0] = 5.0
    return np.sum(d)


@pytest.mark.parametrize("fn", [_add_into_broadcast, _scale_a_diagonal, _set_a_diagonal])
def test_a_write_into_a_read_only_view_raises_numpys_error(fn):
    """NumPy refuses these writes; on the eager tape the write into np.diagonal's view went
    through to its base (a value where NumPy raises) and broadcast_to's raised kiln's
    leaf error."""
    x = np.arange(1.0, 4.0)
    with pytest.raises(ValueError) as plain:
        fn(x.copy())
    for way, vg in _ways(fn, 0).items():
        with pytest.raises(ValueError) as got:
            vg(x.copy())
        assert str(got.value) == str(plain.value), way
