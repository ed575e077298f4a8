"""Gradients of programs a NumPy user differentiates, not in the other gradient sets:
losses (cross-entropy by log-sum-exp with integer labels, multiclass hinge, focal, smooth
L1 by np.where, contrastive and triplet losses on pairwise distances, KL between
Gaussians, a diagonal Gaussian mixture's NLL, pairwise ranking), models (an MLP with
softplus, a GRU cell unrolled over a Python loop, multi-channel 1-d convolutions by
np.convolve and sliding_window_view, multi-head causal attention, group norm, an ARD
Gaussian process by slogdet and solve, Poisson regression, a mixture density network),
physics (a hanging spring-mass chain by np.diff and norms, Lennard-Jones with a masked
diagonal, a damped pendulum by RK4, the heat equation, curve fitting, portfolio variance
by np.cov, a phased array's beam) and Python around them (nested lists and tuples of parameters, has_aux,
argnums=(0, 2), closures, float32). Each is checked against central finite differences in
float64 and its value against NumPy: on the eager tape, and through kiln.compile on the
cpp backend (kiln.grad of the compiled function or kiln.grad inside one, chosen per
program) and the other way on the eager backend (one program in ``_SHARE`` runs both on cpp).
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import kiln
from benchmarks.adam_dict_step import kiln_step, numpy_step
from kiln.autograd.functional import _map_tree, _tree_leaves

PROGRAMS: dict = {}


def registrar(programs: dict):
    """The ``@program(...)`` decorator of a gradient set that registers into ``programs``."""
    def program(seed, make_args, argnums=0, has_aux=False, rtol=1e-5, tape=True):
        """Register ``fn`` with the arguments ``make_args(rng)`` draws from its own generator.
        ``tape=False``: the eager tape cannot follow it (np.array([...]) of values being
        differentiated) and must say so; compiled code captures it."""
        def register(fn):
            programs[fn.__name__] = (fn, make_args(np.random.default_rng(seed)), argnums, has_aux, rtol, tape)
            return fn
        return register
    return program


program = registrar(PROGRAMS)


def _copy(a):
    return _map_tree(lambda v, _: np.copy(v) if isinstance(v, np.ndarray) else v, a, "")


def _loss(fn, args, has_aux):
    out = fn(*_copy(args))
    return out[0] if has_aux else out


def fd_tree(fn, args, n, has_aux=False, eps=1e-6):
    """Central differences of ``fn`` in float64 with respect to every leaf of ``args[n]``."""
    args = [_map_tree(lambda v, _: np.array(v, dtype=np.float64) if isinstance(v, np.ndarray)
                      and v.dtype.kind == "f" else v, a, "") for a in args]
    leaves = _tree_leaves(args[n])
    grads = []
    for leaf in leaves:
        g = np.zeros(leaf.shape)
        for i in np.ndindex(leaf.shape):
            old = leaf[i]
            leaf[i] = old + eps
            hi = _loss(fn, args, has_aux)
            leaf[i] = old - eps
            lo = _loss(fn, args, has_aux)
            leaf[i] = old
            g[i] = np.squeeze(hi - lo) / (2 * eps)   # (a loss of shape (1,) too)
        grads.append(g)
    it = iter(grads)
    return _map_tree(lambda v, _: next(it), args[n], "")


def ways(fn, argnums, has_aux, backends, tape=True):
    out = {"tape": kiln.value_and_grad(fn, argnums, has_aux)} if tape else {}
    for backend, kinds in backends.items():
        if "compiled_fn" in kinds:
            out[f"compiled_fn-{backend}"] = kiln.value_and_grad(kiln.compile(fn, backend=backend),
                                                                argnums, has_aux)
        if "in_compiled" in kinds:
            out[f"in_compiled-{backend}"] = kiln.compile(
                lambda *a: kiln.value_and_grad(fn, argnums, has_aux)(*a), backend=backend)
    return out


def _same_value(got, want, where):
    assert type(got) is type(want), f"{where}: {type(got)} != {type(want)}"
    if isinstance(want, dict):
        assert got.keys() == want.keys(), where
        for k in want:
            _same_value(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _same_value(g, w, f"{where}[{i}]")
    else:
        assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype, where
        tol = 1e-5 if np.asarray(want).dtype == np.float32 else 1e-10
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 1e-4, err_msg=where)


def check_program(fn, args, argnums=0, has_aux=False, rtol=1e-5, tape=True, backends=None):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    want_value = fn(*_copy(args))
    want = [fd_tree(fn, args, n, has_aux) for n in nums]
    kept = _copy(args)
    backends = backends or {"cpp": ("compiled_fn", "in_compiled"), "eager": ("compiled_fn", "in_compiled")}
    if not tape:
        with pytest.raises(kiln.KilnError, match=rf"became a plain NumPy array at {fn.__code__.co_filename}:\d+ "
                                                 r"\(np.array\(\[...\]\) of Tensors.*np.stack"):
            kiln.value_and_grad(fn, argnums, has_aux)(*_copy(args))
    for way, vg in ways(fn, argnums, has_aux, backends, tape).items():
        for call in range(2):   # the second call runs the cached entry
            where = f"{fn.__name__} {way} call {call}"
            value, grads = vg(*_copy(args))
            _same_value(value, want_value, where)
            grads = grads if isinstance(argnums, tuple) else (grads,)
            for n, g, w in zip(nums, grads, want):
                arg_leaves, g_leaves, w_leaves = _tree_leaves(args[n]), _tree_leaves(g), _tree_leaves(w)
                assert type(g) is type(args[n]) and len(g_leaves) == len(arg_leaves), where
                for a, gl, wl in zip(arg_leaves, g_leaves, w_leaves):
                    assert isinstance(gl, np.ndarray), f"{where}: {type(gl)}"
                    assert gl.dtype == a.dtype and gl.shape == a.shape, \
                        f"{where} d/d arg {n}: {gl.dtype}{gl.shape} != {a.dtype}{a.shape}"
                    np.testing.assert_allclose(gl, wl, rtol=rtol, atol=rtol * 0.1,
                                               err_msg=f"{where} d/d arg {n}")
        _same_value(list(_copy(args)), list(kept), f"{fn.__name__} arguments")


# ----------------------------------------------------------------------------- losses

@program(101, lambda r: (r.standard_normal((6, 4)), r.integers(0, 4, 6)))
def cross_entropy_integer_labels(logits, y):
    m = logits.max(axis=1, keepdims=True)
    lse = np.log(np.exp(logits - m).sum(axis=1)) + m.ravel()
    return np.mean(lse - logits[np.arange(len(y)), y])


@program(102, lambda r: (r.standard_normal((4, 3)) * 0.5, r.standard_normal((7, 4)), r.integers(0, 3, 7), 0.1))
def multiclass_hinge(W, X, y, lam):
    s = X @ W
    correct = s[np.arange(len(y)), y]
    margins = np.maximum(0, s - correct[:, None] + 1.0)
    margins[np.arange(len(y)), y] = 0
    return margins.sum() / len(y) + lam * np.sum(W * W)


@program(103, lambda r: (r.standard_normal(9) * 2, (r.random(9) > 0.4).astype(np.float64)))
def focal_loss(z, t):
    p = 1 / (1 + np.exp(-z))
    pt = np.where(t == 1, p, 1 - p)
    alpha = np.where(t == 1, 0.25, 0.75)
    return -np.sum(alpha * (1 - pt) ** 2 * np.log(pt))


@program(104, lambda r: (r.standard_normal((5, 2)) * 2, r.standard_normal((5, 2)) * 2), argnums=(0, 1))
def smooth_l1_box_regression(pred, target):
    d = np.abs(pred - target)
    per = np.where(d < 1.0, 0.5 * d ** 2, d - 0.5)
    return per.sum(axis=1).mean()


@program(105, lambda r: (r.standard_normal((6, 3)), r.standard_normal((6, 3)),
                         np.array([1.0, 0.0, 1.0, 0.0, 0.0, 1.0])), argnums=(0, 1))
def contrastive_pairs(a, b, same):
    d = np.sqrt(np.sum((a - b) ** 2, axis=1) + 1e-12)
    return np.mean(same * d ** 2 + (1 - same) * np.maximum(0.0, 2.0 - d) ** 2)


@program(106, lambda r: (r.standard_normal((5, 3)),))
def triplet_on_pairwise_distances(E):
    sq = np.sum(E ** 2, axis=1)
    D = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2 * E @ E.T, 0) + 1e-9)
    anchors, pos, neg = np.array([0, 1, 2]), np.array([3, 4, 0]), np.array([4, 2, 1])
    return np.sum(np.maximum(0.0, D[anchors, pos] - D[anchors, neg] + 3.0))


@program(107, lambda r: tuple(r.standard_normal(4) * 0.5 for _ in range(4)), argnums=(0, 1, 2, 3))
def kl_between_diagonal_gaussians(mu1, logvar1, mu2, logvar2):
    return 0.5 * np.sum(logvar2 - logvar1 + (np.exp(logvar1) + (mu1 - mu2) ** 2) / np.exp(logvar2) - 1)


@program(108, lambda r: (r.standard_normal((3, 2)), r.standard_normal((3, 2)) * 0.2,
                         r.standard_normal(3) * 0.3, r.standard_normal((10, 2))), argnums=(0, 1, 2))
def diagonal_mixture_nll(mu, log_s, logit_w, X):
    log_w = logit_w - np.log(np.sum(np.exp(logit_w)))
    z = (X[:, None, :] - mu[None]) / np.exp(log_s)[None]
    comp = -0.5 * np.sum(z ** 2, axis=2) - np.sum(log_s, axis=1) - np.log(2 * np.pi) + log_w
    m = np.max(comp, axis=1, keepdims=True)
    return -np.sum(np.log(np.sum(np.exp(comp - m), axis=1, keepdims=True)) + m)


@program(109, lambda r: (r.standard_normal(3), r.standard_normal((8, 3)), np.array([0, 2, 5]),
                         np.array([1, 3, 4, 6, 7])))
def pairwise_ranking_hinge(w, X, pos, neg):
    s = X @ w
    return np.mean(np.maximum(0, 1.0 - (s[pos][:, None] - s[neg][None, :])))


# ----------------------------------------------------------------------------- models

@program(201, lambda r: ([(r.standard_normal((3, 5)) * 0.5, r.standard_normal(5) * 0.1),
                          (r.standard_normal((5, 4)) * 0.5, r.standard_normal(4) * 0.1),
                          (r.standard_normal((4, 1)) * 0.5, np.zeros(1))],
                         r.standard_normal((6, 3)), r.standard_normal(6)))
def mlp_layers_as_list_of_tuples(layers, X, y):
    h = X
    for i, (W, b) in enumerate(layers):
        h = h @ W + b
        if i == 0:
            h = np.tanh(h)
        elif i == 1:
            h = np.logaddexp(0.0, h)      # softplus
    return np.mean((h[:, 0] - y) ** 2)


@program(202, lambda r: ({"Wz": r.standard_normal((5, 3)) * 0.4, "Wr": r.standard_normal((5, 3)) * 0.4,
                          "Wh": r.standard_normal((5, 3)) * 0.4}, r.standard_normal((4, 2))))
def gru_unrolled(p, xs):
    sig = lambda a: 1 / (1 + np.exp(-a))   # noqa: E731
    h = np.zeros(3)
    total = 0.0
    for t in range(xs.shape[0]):
        hx = np.concatenate([h, xs[t]])
        z = sig(hx @ p["Wz"])
        r = sig(hx @ p["Wr"])
        cand = np.tanh(np.concatenate([r * h, xs[t]]) @ p["Wh"])
        h = (1 - z) * h + z * cand
        total = total + np.sum(h ** 2) * (t + 1)
    return total


@program(203, lambda r: (r.standard_normal((2, 3)), r.standard_normal(12)), argnums=(0, 1))
def conv1d_np_convolve_channels(k, x):
    feats = [np.tanh(np.convolve(x, k[c], mode="valid")) for c in range(k.shape[0])]
    return np.sum(np.stack(feats) ** 2) + np.sum(np.convolve(x, k[0], mode="same") * x)


@program(204, lambda r: (r.standard_normal((4, 2, 3)) * 0.5, r.standard_normal((2, 10)), r.standard_normal(4)),
         argnums=(0, 1, 2))
def conv1d_sliding_window_multichannel(W, x, b):
    win = sliding_window_view(x, 3, axis=1)            # (cin, L, k)
    out = np.einsum("cLk,ock->oL", win, W) + b[:, None]
    pooled = out.reshape(4, 4, 2).max(axis=2)
    return np.sum(np.maximum(pooled, 0.0)) + 0.1 * np.sum(out ** 2)


@program(205, lambda r: (r.standard_normal((5, 8)), r.standard_normal((8, 24)) * 0.3), argnums=(0, 1))
def multi_head_causal_attention(x, Wqkv):
    T, H, dh = 5, 2, 4
    q, k, v = np.split(x @ Wqkv, 3, axis=1)
    q, k, v = (a.reshape(T, H, dh).transpose(1, 0, 2) for a in (q, k, v))
    s = q @ k.transpose(0, 2, 1) / np.sqrt(dh)
    mask = np.tril(np.ones((T, T))) == 0
    s = np.where(mask, -1e9, s)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    y = (p @ v).transpose(1, 0, 2).reshape(T, H * dh)
    return np.sum(y * np.cos(np.arange(T * H * dh)).reshape(T, H * dh))


@program(211, lambda r: (r.standard_normal((4, 5)), r.standard_normal((5, 3))), argnums=(0, 1))
def top_k_sparse_attention_put_along_axis(scores, V):
    # keep the 2 largest scores per row (np.put_along_axis had no op: NoOpError)
    idx = np.argsort(scores, axis=1)[:, -2:]
    masked = np.full_like(scores, -np.inf)
    np.put_along_axis(masked, idx, np.take_along_axis(scores, idx, axis=1), axis=1)
    p = np.exp(masked - masked.max(axis=1, keepdims=True))
    p = p / p.sum(axis=1, keepdims=True)
    return np.sum((p @ V) ** 2)


@program(213, lambda r: (r.standard_normal((6, 2)) * 0.5, r.standard_normal((2, 2)) * 0.5,
                         r.standard_normal((2, 5)) * 0.5, r.standard_normal((6, 5))), argnums=(0, 1, 2))
def low_rank_factorization_multi_dot(U, S, V, target):
    # np.linalg.multi_dot had no op (NoOpError on the tape, a graph break compiled)
    return np.sum((np.linalg.multi_dot([U, S, V]) - target) ** 2) + 0.1 * np.sum(S ** 2)


@program(206, lambda r: (r.standard_normal((3, 4, 5)), r.standard_normal(4) + 1, r.standard_normal(4)),
         argnums=(0, 1, 2))
def group_norm(x, gamma, beta):
    g = x.reshape(3, 2, 2, 5)
    g = (g - g.mean(axis=(2, 3), keepdims=True)) / np.sqrt(g.var(axis=(2, 3), keepdims=True) + 1e-5)
    y = g.reshape(3, 4, 5) * gamma[:, None] + beta[:, None]
    return np.sum(np.sin(y))


_XGP = np.random.default_rng(207).uniform(-2, 2, (8, 2))


@program(207, lambda r: (np.array([0.2, -0.3, 0.1, -1.5]), _XGP, np.sin(_XGP[:, 0]) * np.cos(_XGP[:, 1])),
         argnums=(0, 1))
def gp_ard_slogdet_solve(log_params, X, y):
    ells, sf, sn = np.exp(log_params[:2]), np.exp(log_params[2]), np.exp(log_params[3])
    d = (X[:, None, :] - X[None, :, :]) / ells
    K = sf ** 2 * np.exp(-0.5 * np.sum(d ** 2, axis=-1)) + sn ** 2 * np.eye(len(y))
    sign, logdet = np.linalg.slogdet(K)
    return 0.5 * y @ np.linalg.solve(K, y) + 0.5 * logdet + 0.5 * len(y) * np.log(2 * np.pi)


@program(208, lambda r: (r.standard_normal(3) * 0.2, r.standard_normal((12, 3)),
                         r.poisson(1.5, 12).astype(np.float64), 0.05))
def poisson_regression_l2(w, X, y, lam):
    eta = X @ w
    return np.sum(np.exp(eta) - y * eta) / len(y) + lam * w @ w


@program(209, lambda r: (np.array([0.5, -1.0, 0.25]), r.standard_normal((10, 3)),
                         np.sign(r.standard_normal(10)), 0.1))
def logistic_regression_pm1_labels(w, X, y, lam):
    return np.mean(np.log1p(np.exp(-y * (X @ w)))) + 0.5 * lam * np.linalg.norm(w) ** 2


@program(210, lambda r: ({"W1": r.standard_normal((1, 6)) * 0.8, "b1": r.standard_normal(6) * 0.1,
                          "W2": r.standard_normal((6, 9)) * 0.3}, np.linspace(-1, 1, 7)[:, None],
                         np.sin(3 * np.linspace(-1, 1, 7))))
def mixture_density_network(p, x, y):
    h = np.tanh(x @ p["W1"] + p["b1"])
    out = h @ p["W2"]
    logits, mu, log_s = out[:, :3], out[:, 3:6], out[:, 6:]
    log_pi = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    comp = log_pi - 0.5 * ((y[:, None] - mu) / np.exp(log_s)) ** 2 - log_s - 0.5 * np.log(2 * np.pi)
    m = comp.max(axis=1)
    return -np.mean(m + np.log(np.exp(comp - m[:, None]).sum(axis=1)))


@program(212, lambda r: (r.standard_normal((3, 3)) * 0.5, r.standard_normal((3, 4)) * 0.5,
                         np.array([0, 3, 1, 1, 2, 0, 3])), argnums=(0, 1))
def hmm_forward_log_space(A_logits, B_logits, obs):
    # the forward algorithm by np.logaddexp.reduce (it had no derivative rule)
    log_A = A_logits - np.logaddexp.reduce(A_logits, axis=1, keepdims=True)
    log_B = B_logits - np.logaddexp.reduce(B_logits, axis=1)[:, None]
    alpha = np.log(np.full(3, 1 / 3)) + log_B[:, obs[0]]
    for o in obs[1:]:
        alpha = np.logaddexp.reduce(alpha[:, None] + log_A, axis=0) + log_B[:, o]
    return -np.logaddexp.reduce(alpha)


# ----------------------------------------------------------------------------- physics

@program(301, lambda r: (np.cumsum(np.abs(r.standard_normal((6, 2))), axis=0), r.random(5) + 0.5),
         argnums=(0, 1))
def hanging_spring_chain_energy(P, k):
    seg = np.diff(P, axis=0)
    L = np.linalg.norm(seg, axis=1)
    return 0.5 * np.sum(k * (L - 1.0) ** 2) + 9.81 * np.sum(P[:, 1]) + np.linalg.norm(P[0] - P[-1])


@program(302, lambda r: (np.array([[0.0, 0.0, 0.0], [1.1, 0.1, 0.0], [0.0, 1.2, 0.1],
                                   [1.0, 1.0, 0.9], [-0.9, 0.4, 0.5]]),))
def lennard_jones_masked_diagonal(P):
    n = P.shape[0]
    r2 = np.sum((P[:, None, :] - P[None, :, :]) ** 2, axis=-1) + np.eye(n)
    inv6 = r2 ** -3
    e = np.where(np.eye(n, dtype=bool), 0.0, 4 * (inv6 ** 2 - inv6))
    return 0.5 * e.sum()


@program(303, lambda r: (np.array([1.0, 0.0]), np.array([9.81, 0.3])), argnums=(0, 1), tape=False)
def damped_pendulum_rk4(y0, params):
    g_l, c = params[0], params[1]

    def f(y):
        return np.array([y[1], -g_l * np.sin(y[0]) - c * y[1]])

    y, h = y0, 0.05
    traj = [y]
    for _ in range(10):
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        traj.append(y)
    return np.sum(np.stack(traj)[:, 0] ** 2) + y[1] ** 2


@program(304, lambda r: (np.sin(np.linspace(0, np.pi, 10)) + 0.1 * r.standard_normal(10), np.array(0.3)),
         argnums=(0, 1))
def heat_equation_explicit(u0, alpha):
    u = u0.copy()
    for _ in range(15):
        lap = np.zeros_like(u)
        lap[1:-1] = u[2:] - 2 * u[1:-1] + u[:-2]
        u = u + alpha * lap
        u[0] = u[-1] = 0.0
    return np.sum(u ** 2) + u[4]


@program(307, lambda r: (np.array([-0.5, 0.4]), np.linspace(0, 2, 9), r.standard_normal(9)), argnums=(0, 1))
def log_spaced_frequency_fit(log_f, t, y):
    # np.logspace of values being differentiated recursed until RecursionError
    freqs = np.logspace(log_f[0], log_f[1], 4)
    model = np.sum(np.sin(np.outer(t, freqs)) / freqs, axis=1)
    return np.sum((model - y) ** 2) + np.sum(np.linspace(log_f[0], 2 * log_f[1], 3) ** 2)


@program(308, lambda r: (r.standard_normal(6) * 0.3, r.random(6) + 0.5), argnums=(0, 1))
def phased_array_beam(phases, amps):
    # the array factor of 6 antennas steered by their phases; np.angle of a complex
    # value being differentiated had no rule (AutogradError)
    k = np.pi * np.sin(np.linspace(-0.5, 0.5, 7))
    af = np.sum(amps[:, None] * np.exp(1j * (phases[:, None] + np.arange(6.0)[:, None] * k[None, :])), axis=0)
    gain = np.abs(af) ** 2
    return -np.log(gain[3] / np.sum(gain)) + 0.1 * np.angle(af[3]) ** 2 + 0.01 * np.sum(np.angle(af, deg=True) ** 2) / 360


_T = np.linspace(0, 3, 15)


@program(305, lambda r: (np.array([1.2, 0.6, 2.1, 0.2]), _T,
                         1.0 * np.exp(-0.5 * _T) * np.cos(2.0 * _T) + 0.05 * r.standard_normal(15)))
def damped_cosine_curve_fit(theta, t, y):
    a, b, w, phi = theta
    resid = a * np.exp(-b * t) * np.cos(w * t + phi) - y
    return 0.5 * resid @ resid


@program(306, lambda r: (np.array([0.3, 0.2, 0.4, 0.1]), r.standard_normal((20, 4)) * 0.02 + 0.001, 3.0),
         argnums=(0, 1))
def portfolio_mean_variance(w, R, risk_aversion):
    w = w / np.sum(w)
    C = np.cov(R, rowvar=False)
    return risk_aversion * w @ C @ w - np.mean(R, axis=0) @ w


# ----------------------------------------------------------------------------- Python styles

@program(401, lambda r: (r.standard_normal((4, 3)), r.standard_normal(3), r.standard_normal((6, 4)),
                         r.standard_normal(6)), argnums=(0, 3))
def argnums_zero_and_three(W, v, X, y):
    return np.sum((np.tanh(X @ W) @ v - y) ** 2)


@program(402, lambda r: (r.standard_normal((5, 3)), r.standard_normal(5)), has_aux=True)
def has_aux_metrics(X, w):
    pred = X @ np.array([0.5, -0.2, 0.1])
    err = pred - w
    loss = np.mean(err ** 2) + 0.01 * np.sum(X ** 2)
    return loss, {"mae": np.mean(np.abs(err)), "max": err.max(), "pred": pred}


def _make_regularized_loss(X, y, lam):
    def loss(w):
        return np.mean((X @ w - y) ** 2) + lam * np.sum(np.abs(w))
    return loss


_closure = _make_regularized_loss(np.random.default_rng(403).standard_normal((8, 3)),
                                  np.random.default_rng(404).standard_normal(8), 0.05)


@program(403, lambda r: (np.array([0.4, -0.7, 1.1]),))
def closure_over_data(w):
    return _closure(w) * 2.0


@program(404, lambda r: (np.array([-1.5, -0.2, 0.3, 0.8, 2.5, -0.7]),))
def kinks_away_from_their_points(x):
    return (np.sum(np.clip(x, -1.0, 1.0) ** 2) + np.sum(np.maximum(x, 0.1) * x) + np.sum(np.abs(x) ** 1.5)
            + np.sum(np.minimum(np.abs(x), 0.5)) + np.sum(np.fmax(x, -0.5) * 2))


@program(405, lambda r: (r.standard_normal((3, 4, 2)),))
def reductions_axes_keepdims(x):
    a = x / np.linalg.norm(x, axis=-1, keepdims=True)
    b = x - x.max(axis=(0, 2), keepdims=True)
    c = np.mean(x, axis=(0, 2)) @ np.arange(4.0)
    d = np.sum(np.amin(x, axis=1) ** 2) + np.prod(x[0, 0] + 3)
    return np.sum(a * np.arange(2.0)) + np.sum(b ** 2) + c + d + np.std(x, axis=1, keepdims=True).sum()


@program(406, lambda r: (r.standard_normal((3, 6)),))
def trimmed_sort_cumsum(x):
    s = np.sort(x, axis=1)[:, 1:-1]
    c = np.cumsum(x[:, ::-1], axis=1)
    return np.sum(s.mean(axis=1) ** 2) + np.sum(c[:, -1] * c[:, 2]) + np.sum(np.sort(x.ravel())[-3:])


@program(407, lambda r: (r.standard_normal((2, 1, 3, 4)), r.standard_normal((1, 3, 4, 2)), r.standard_normal((3, 2))),
         argnums=(0, 1, 2))
def broadcast_batched_matmul_and_einsum(a, b, c):
    m = a @ b                                  # (2, 3, 3, 2)
    return np.sum(m ** 2) + np.einsum("bhij,hj->", m, c) + np.sum(np.einsum("bhik,hkj->bhij", a, b[0])[:, 1])


@program(408, lambda r: (r.standard_normal((4, 5)).astype(np.float32) * 0.5,
                         r.standard_normal(5).astype(np.float32) * 0.1,
                         r.standard_normal((6, 4)).astype(np.float32)),
         argnums=(0, 1), rtol=2e-2)
def float32_mlp(W, b, X):
    h = np.maximum(X @ W + b, 0.0)
    return np.mean(h ** 2) + np.float32(0.5) * np.sum(np.tanh(h))


@program(409, lambda r: ((r.standard_normal(3), r.standard_normal(3)), r.standard_normal((4, 3))))
def tuple_of_params_in_a_loop(params, X):
    mu, log_s = params
    z = (X - mu) / np.exp(log_s)
    total = 0.0
    for row in z:
        total = total + np.sum(row ** 2)
    return 0.5 * total + X.shape[0] * np.sum(log_s)


_SHARE = 4


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradient_program(name):
    """Each program on the tape, one compiled way on cpp and the other on the eager
    backend (chosen by name); one program in ``_SHARE`` both ways on cpp too."""
    fn, args, argnums, has_aux, rtol, tape = PROGRAMS[name]
    crc = zlib.crc32(name.encode())
    one, other = ("compiled_fn", "in_compiled")[::1 if crc % 2 else -1]
    cpp = (one, other) if crc % _SHARE == 1 else (one,)
    check_program(fn, args, argnums, has_aux, rtol, tape, backends={"cpp": cpp, "eager": (other,)})


# ----------------------------------------------------------------------------- training

@pytest.mark.parametrize("backend", ["cpp", "eager"])
def test_compiled_adam_step_over_a_dict_matches_numpy_by_hand(backend):
    """The step as one graph (the dict's gradients were a graph break: the eager tape ran
    it); benchmarks/adam_dict_step.py times it."""
    r = np.random.default_rng(500)
    start = {"W1": r.standard_normal((3, 5)) * 0.5, "b1": np.zeros(5), "W2": r.standard_normal((5, 1)) * 0.5}
    X, y = r.standard_normal((8, 3)), r.standard_normal((8, 1))
    runs = {}
    for name, step in (("hand", numpy_step), ("kiln", kiln.compile(kiln_step, backend=backend))):
        p = {k: a.copy() for k, a in start.items()}
        m, v = ({k: np.zeros_like(a) for k, a in start.items()} for _ in range(2))
        runs[name] = [step(p, m, v, t, X, y) for t in range(1, 4)], p, m, v
    (losses, p, m, v), (want_losses, wp, wm, wv) = runs["kiln"], runs["hand"]
    assert [type(a) for a in losses] == [type(a) for a in want_losses]
    np.testing.assert_allclose(losses, want_losses, rtol=1e-12)
    for got, want in ((p, wp), (m, wm), (v, wv)):
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-10, atol=1e-14, err_msg=k)
    assert losses[-1] < losses[0]
