"""More gradients of programs NumPy users differentiate, not in the other gradient sets:
a Gaussian process (Matern kernel, a linear mean) by cholesky and a triangular solve, a planar flow's batched slogdet, a
variational Cholesky factor written through tril_indices, RMSNorm with SwiGLU, a strided
2-d convolution by im2col with fancy indexing, pairwise distances with the double-where
guard for sqrt at 0 (and by triu_indices), top-k by argsort and take_along_axis, survival
curves by cumprod/cumsum, norms of many ords and axes, inv/solve/eigh, batched solve and
cholesky, det/slogdet/kron/trace, svd/pinv/matrix_power, lstsq, np.interp and np.polyval,
np.diff/np.pad (four modes)/np.roll, boolean masks, repeated fancy indices (the gradient
accumulates; a repeated index written twice takes the last value, as NumPy), in-place
updates of a copy (augmented assignment, masks, np.add.at, fill_diagonal, copyto where=),
ODE loops with a run-time trip count and a while loop on data, a Student-t likelihood,
total variation, running maxima, rfft power spectra, np.select/heaviside/floor,
float32 mixed with float64 and Python scalars, pytrees with 0-d leaves and has_aux, and
argnums in reverse order. Each is checked against central differences in float64 and its
value against NumPy (tests/test_programs_grads_real.py ``check_program``): on the tape and
through kiln.compile on the eager backend both ways (kiln.grad of the compiled function,
kiln.grad inside one), and on cpp one way for every eighth program.

Then what kiln promises where finite differences cannot say: the derivative at a kink
(docs/aot.md), the type of a gradient of a Python float or NumPy scalar, a speculated op
(np.linalg.eigvals) on a value being differentiated, and the backward's silence about
floating-point errors (sqrt at 0).
"""
from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

import kiln
from tests.test_programs_grads_real import check_program

PROGRAMS: dict = {}


def program(seed, make_args, argnums=0, has_aux=False, rtol=1e-5, tape=True):
    def register(fn):
        PROGRAMS[fn.__name__] = (fn, make_args(np.random.default_rng(seed)), argnums, has_aux, rtol, tape)
        return fn
    return register


def _spd(r, n):
    a = r.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


# ----------------------------------------------------------------------------- statistics

@program(1, lambda r: (np.array([0.1, -0.4, -1.0, 0.3, -0.2]), r.uniform(-2, 2, 7), np.sin(r.uniform(-2, 2, 7))),
         argnums=(0, 1))
def gp_matern_with_a_linear_mean(p, x, y):
    # Matern 3/2 on |x_i - x_j| (abs at 0 on the diagonal: the kernel is flat there)
    ell, sf, sn = np.exp(p[:3])
    d = np.sqrt(3.0) * np.abs(x[:, None] - x[None, :]) / ell
    K = sf ** 2 * (1 + d) * np.exp(-d) + (sn ** 2 + 1e-6) * np.eye(len(x))
    r = y - (p[3] * x + p[4])
    L = np.linalg.cholesky(K)
    z = np.linalg.solve(L, r)
    return 0.5 * z @ z + np.sum(np.log(np.diagonal(L))) + 0.5 * len(x) * np.log(2 * np.pi)


@program(2, lambda r: (r.standard_normal(3) * 0.5, r.standard_normal(3) * 0.5, np.array(0.3),
                       r.standard_normal((6, 3))), argnums=(0, 1, 2))
def planar_flow_batched_slogdet(u, w, b, z):
    h = np.tanh(z @ w + b)
    f = z + h[:, None] * u[None, :]
    psi = (1 - h ** 2)[:, None] * w[None, :]
    J = np.eye(3)[None] + u[None, :, None] * psi[:, None, :]
    sign, logdet = np.linalg.slogdet(J)
    return -np.mean(-0.5 * np.sum(f ** 2, axis=1) + logdet)


@program(3, lambda r: (r.standard_normal(6) * 0.3,), tape=False)
def variational_cholesky_through_tril_indices(theta):
    L = np.zeros((3, 3))                      # a NumPy array: the tape cannot follow the write
    L[np.tril_indices(3)] = theta
    L[np.diag_indices(3)] = np.exp(theta[[0, 2, 5]])   # (np.diag_indices had no op: the tape ran it)
    S = L @ L.T
    return 2 * np.sum(np.log(np.diag(L))) - np.trace(S) + np.linalg.slogdet(S)[1]


@program(4, lambda r: (np.array([0.5, 1.0, 3.0]), np.array([0.2, -0.4, 1.5, 3.1, 0.9, -2.0])))
def student_t_negative_log_likelihood(theta, x):
    mu, log_s, log_nu = theta[0], theta[1], theta[2]
    s, nu = np.exp(log_s), np.exp(log_nu)
    z = (x - mu) / s
    return -np.sum(-0.5 * (nu + 1) * np.log1p(z ** 2 / nu) - log_s - 0.5 * np.log(nu))


@program(5, lambda r: (r.uniform(0.05, 0.3, 8),))
def survival_curve_cumprod_cumsum(hazard):
    S = np.cumprod(1 - hazard)
    H = np.cumsum(-np.log1p(-hazard))
    return np.sum(S * np.arange(1.0, 9.0)) + np.sum(np.exp(-H)) + S[-1] ** 2


@program(6, lambda r: (r.standard_normal(9),))
def median_quantile_std_var(x):
    return np.median(x) + np.quantile(x, 0.25) + np.std(x, ddof=1) + np.var(x) + np.percentile(x, 90)


@program(7, lambda r: (r.standard_normal(3), r.standard_normal((8, 3)), r.standard_normal(8)), argnums=(0, 1))
def lstsq_on_scaled_features(w, X, y):
    beta, *_ = np.linalg.lstsq(X * w, y, rcond=None)
    return np.sum((X @ beta - y) ** 2) + np.sum(beta ** 2)


# ----------------------------------------------------------------------------- models

@program(11, lambda r: (r.standard_normal((4, 6)), r.standard_normal(6) + 1, r.standard_normal((6, 8)) * 0.3,
                        r.standard_normal((8, 6)) * 0.3), argnums=(0, 1, 2, 3))
def rmsnorm_swiglu(x, g, W1, W2):
    h = x / np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True) + 1e-6) * g
    a, b = np.split(h @ W1, 2, axis=-1)
    y = (a / (1 + np.exp(-a))) * b
    return np.sum((y @ W2[:4]) ** 2)


@program(12, lambda r: (r.standard_normal((2, 1, 3, 3)) * 0.5, r.standard_normal((1, 6, 6))), argnums=(0, 1))
def conv2d_stride2_im2col_fancy_indexing(k, img):
    C, H, W = img.shape
    oh, ow = (H - 3) // 2 + 1, (W - 3) // 2 + 1
    i0 = np.repeat(np.arange(3), 3)[:, None] + 2 * np.repeat(np.arange(oh), ow)[None, :]
    j0 = np.tile(np.arange(3), 3)[:, None] + 2 * np.tile(np.arange(ow), oh)[None, :]
    cols = img[:, i0, j0]                     # (C, 9, oh * ow)
    out = k.reshape(2, -1) @ cols.reshape(C * 9, -1)
    return np.sum(np.maximum(out, 0) ** 2)


@program(13, lambda r: (r.standard_normal((3, 7)),))
def top_k_by_argsort_take_along_axis(x):
    idx = np.argsort(-x, axis=1)[:, :3]
    top = np.take_along_axis(x, idx, axis=1)
    return np.sum(top * np.array([3.0, 2.0, 1.0])) + np.sum(np.sort(x, axis=0)[-1] ** 2)


@program(14, lambda r: (r.standard_normal((5, 3)), np.array([0, 0, 2, 4, 4, 4, 1])))
def embedding_lookup_with_repeated_tokens(E, tok):
    h = E[tok]
    return np.sum(np.tanh(h.sum(axis=0))) + np.sum(E[[1, 1, 3]] ** 2)


@program(15, lambda r: (r.standard_normal(16),))
def rfft_power_spectrum_and_phase_shift(x):
    X = np.fft.rfft(x)
    return (np.sum(np.abs(X) ** 2 * np.linspace(0, 1, 9))
            + np.sum(np.fft.irfft(X * np.exp(-1j * np.arange(9.0)), 16) ** 2))


@program(16, lambda r: (r.standard_normal(7), r.standard_normal(3)), argnums=(0, 1))
def convolve_full_and_correlate(x, k):
    return np.sum(np.convolve(x, k) ** 2) + np.sum(np.correlate(x, k, mode="valid") * np.arange(5.0))


@program(17, lambda r: (r.standard_normal((3, 4)), r.standard_normal(4)), argnums=(0, 1))
def einsum_spellings(A, v):
    return (np.einsum("ij,ij->", A, A) + np.einsum("ij,j->i", A, v) @ np.ones(3) + np.einsum("i,i", v, v)
            + np.sum(np.einsum("ij,kj->ik", A, A)) + np.einsum("ij->", A * v))


@program(18, lambda r: (r.standard_normal((2, 3, 4)), r.standard_normal((4, 3, 5))), argnums=(0, 1))
def tensordot_matmul_vector_dot(a, b):
    t = np.tensordot(a, b, axes=([1, 2], [1, 0]))
    return np.sum(t ** 2) + np.sum(np.matmul(a, b[:, 0, 0])) + np.sum(np.dot(a[0], b[:, :, 1]))


# ----------------------------------------------------------------------------- linear algebra

@program(21, lambda r: (_spd(r, 4), r.standard_normal((4, 2))), argnums=(0, 1))
def inv_solve_eigh_projector(A, B):
    S = 0.5 * (A + A.T)
    w, V = np.linalg.eigh(S)
    P = V[:, -2:] @ V[:, -2:].T               # invariant to the eigenvectors' signs
    BB = B @ B.T
    return np.sum(np.linalg.inv(S) * BB) + np.sum(np.linalg.solve(S, B) ** 2) + np.sum(w ** 2) + np.sum(P * BB)


@program(22, lambda r: (np.stack([_spd(r, 3) for _ in range(2)]), r.standard_normal((2, 3))), argnums=(0, 1))
def batched_solve_and_cholesky(A, b):
    L = np.linalg.cholesky(A)
    x = np.linalg.solve(A, b[..., None])[..., 0]
    return np.sum(x ** 2) + np.sum(np.log(np.diagonal(L, axis1=1, axis2=2)))


@program(23, lambda r: (r.standard_normal((3, 3)),))
def det_slogdet_of_a_nonsymmetric_matrix(A):
    s, ld = np.linalg.slogdet(A)
    return s * np.exp(ld) + np.linalg.det(A) ** 2 + ld + np.trace(A @ A) + np.sum(np.kron(A, np.eye(2)) ** 2)


@program(24, lambda r: (r.standard_normal((4, 3)),))
def svd_pinv_matrix_power(A):
    s = np.linalg.svd(A, compute_uv=False)
    return np.sum(s ** 2) + np.sum(np.linalg.pinv(A) ** 2) + 1e-2 * np.sum(np.linalg.matrix_power(A.T @ A, 2))


@program(25, lambda r: (r.standard_normal(5), r.standard_normal((3, 4)), r.standard_normal((2, 3, 4))),
         argnums=(0, 1, 2))
def norms_of_many_ords_and_axes(v, M, x):
    return (np.linalg.norm(v, 1) + np.linalg.norm(v, np.inf) + np.linalg.norm(v, 3) + np.linalg.norm(v, -np.inf)
            + np.linalg.norm(v, 0.5) + np.linalg.norm(M, "fro") + np.linalg.norm(M, "nuc") + np.linalg.norm(M, 2)
            + np.linalg.norm(M, np.inf) + np.linalg.norm(M, 1) + np.linalg.norm(M, -1) + np.linalg.norm(M, -2)
            + np.sum(np.linalg.norm(x, axis=(1, 2))) + np.sum(np.linalg.norm(x, ord=1, axis=2)))


@program(26, lambda r: (r.standard_normal((3, 3)) + 2 * np.eye(3), r.standard_normal((2, 4, 3))), argnums=(0, 1))
def condition_number_penalties(W, B):
    # np.linalg.cond had no derivative rule (NoDerivative)
    return (np.linalg.cond(W) + np.linalg.cond(W, -2) + np.linalg.cond(W, "fro") + np.linalg.cond(W, "nuc")
            + np.linalg.cond(W, 1) + np.linalg.cond(W, -np.inf) + np.sum(np.linalg.cond(B) ** 2))


# ----------------------------------------------------------------------------- geometry, physics

@program(31, lambda r: (r.standard_normal((5, 2)),))
def pairwise_distances_double_where(X):
    D2 = np.sum((X[:, None] - X[None]) ** 2, axis=-1)
    pos = D2 > 0                              # the diagonal: sqrt at 0 kept out of both passes
    D = np.where(pos, np.sqrt(np.where(pos, D2, 1.0)), 0.0)
    iu = np.triu_indices(5, k=1)
    return np.sum(np.exp(-D)) + np.sum(1 / D[iu])


@program(32, lambda r: (r.standard_normal((4, 2)) + 0.1, r.standard_normal((4, 3)), r.standard_normal((4, 3))),
         argnums=(0, 1, 2))
def polar_coordinates_and_cross_products(P, a, b):
    r = np.hypot(P[:, 0], P[:, 1])
    th = np.arctan2(P[:, 1], P[:, 0])
    return (np.sum((r - 1) ** 2) + np.sum(np.sin(2 * th)) + np.sum(np.expm1(P) * np.log2(r)[:, None])
            + np.sum(np.sinc(P)) + np.sum(np.cross(a, b) ** 2) + np.vdot(a, b) + np.sum(np.trapezoid(a * b, axis=0)))


@program(33, lambda r: (np.array([1.0, 0.5]), np.array([1.0, 0.1, 0.5, 0.2]), 12), argnums=(0, 1))
def lotka_volterra_euler_run_time_steps(y0, p, n):
    y, dt = y0, 0.05
    for _ in range(n):
        y = y + dt * np.stack([p[0] * y[0] - p[1] * y[0] * y[1], p[3] * y[0] * y[1] - p[2] * y[1]])
    return np.sum(y ** 2)


@program(34, lambda r: (np.array([2.0, 1.0]),))
def halving_while_loop_on_data(x):
    t, k = x.copy(), 0
    while np.max(np.abs(t)) > 0.1 and k < 50:
        t = t * 0.5
        k += 1
    return np.sum(t ** 2) * k


@program(35, lambda r: (r.standard_normal((3, 3)) * 0.3,))
def matrix_exponential_by_a_series_loop(A):
    E, term = np.eye(3), np.eye(3)
    for k in range(1, 10):
        term = term @ A / k
        E = E + term
    return np.sum(E ** 2)


@program(36, lambda r: (r.standard_normal(12) * 0.5 + np.linspace(0, 1, 12), np.linspace(0, 1, 12), 0.3))
def total_variation_denoising(u, f, lam):
    return 0.5 * np.sum((u - f) ** 2) + lam * np.sum(np.sqrt(np.diff(u) ** 2 + 1e-4)) + 0.1 * np.linalg.norm(u, 1)


@program(37, lambda r: (r.standard_normal(10) * 0.1,))
def drawdown_by_running_maximum(ret):
    wealth = np.cumprod(1 + ret)
    peak = np.maximum.accumulate(wealth)
    return np.max(1 - wealth / peak) + np.sum(wealth) + np.sum(np.minimum.accumulate(ret[::-1]))


# ----------------------------------------------------------------------------- array idioms

@program(41, lambda r: (r.standard_normal(6), np.array([0.3, 1.7, 2.2, 4.9])), argnums=(0, 1))
def interp_and_polyval_of_values_and_points(fp, xq):
    xp = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    return np.sum(np.interp(xq, xp, fp) ** 2) + np.sum(np.polyval(fp[:3], xq))


@program(42, lambda r: (r.standard_normal(8),))
def diff_pad_modes_roll(x):
    p = np.pad(x, 2, mode="reflect") + np.pad(x, 2, mode="edge") + np.pad(x, (1, 3), mode="wrap") + np.pad(x, 2)
    return (np.sum(np.diff(x, n=2) ** 2) + np.sum(p * np.arange(12.0)) + np.sum(x * np.roll(x, 3))
            + np.sum(np.roll(x, -1)[:2]))


@program(43, lambda r: (r.standard_normal(10),))
def boolean_mask_selections(x):
    return np.sum(x[x > 0] ** 2) - np.sum(np.exp(x[~(x > 0)])) + np.mean(x[np.abs(x) < 1] * 3)


@program(44, lambda r: (r.standard_normal(5),))
def repeated_indices_written_and_augmented(x):
    z = x.copy()
    z[[1, 1, 3]] += x[0] * 2                  # z[1] gets one increment, as in NumPy
    z[[0, 0]] = np.stack([x[2] * x[4], x[3]])  # the last write wins
    return np.sum(z ** 2 * np.arange(1.0, 6.0))


@program(45, lambda r: (r.standard_normal(5), np.array(1.5)), argnums=(0, 1))
def in_place_updates_of_a_copy(x, y):
    z = x.copy()
    z[0] += y
    z[1:3] *= y
    z[z < 0] = 0.0
    z[-1] = z[-2] * 2
    np.add.at(z, [1, 1, 2], y)
    return np.sum(z ** 2)


@program(46, lambda r: (r.standard_normal(6),))
def mask_scaling_fill_diagonal_copyto_where(x):
    z = x.copy()
    z[z > 0] *= 3
    M = np.outer(z, x)
    np.fill_diagonal(M, x ** 2)
    np.copyto(M, 0.5 * M.T, where=np.triu(np.ones((6, 6), bool), 1))
    return np.sum(M * np.arange(36.0).reshape(6, 6))


@program(47, lambda r: (r.standard_normal((3, 4)),))
def repeat_tile_flip_rot90_take(x):
    return (np.sum(np.repeat(x, [1, 2, 3], axis=0) ** 2) + np.sum(np.tile(x, (2, 1)) * np.arange(4.0))
            + np.sum(np.flip(x, 1)[:, 0]) + np.sum(np.rot90(x)[0] ** 3) + np.sum(np.take(x, [3, 0, 3], axis=1) ** 2))


@program(48, lambda r: (r.standard_normal(8) * 2,))
def select_heaviside_floor_piecewise(x):
    y = np.select([x < -1, x < 1], [-x - 0.5, 0.5 * x ** 2], default=x - 0.5)
    return np.sum(y) + np.sum(np.heaviside(x, 0.5) * x) + np.sum(np.floor(x) * x) + np.sum(np.round(x, 1))


@program(49, lambda r: (r.standard_normal((4, 4)),))
def where_guarding_log_and_sign(x):
    safe = np.where(x > 0, x, 1.0)
    return np.sum(np.where(x > 0, np.log(safe), x ** 2)) + np.sum(np.where(np.abs(x) < 1, x, np.sign(x)))


@program(50, lambda r: (np.array([1.0, np.nan, 2.0, 3.0, np.nan, -1.0]),))
def nan_aware_reductions(x):
    return np.nansum(x) * 2 + np.nanmean(x) + np.nanmax(x) + np.mean(x, where=~np.isnan(x)) + np.nanstd(x)


# ----------------------------------------------------------------------------- Python around it

@program(61, lambda r: (r.standard_normal(4).astype(np.float32), 2.0), rtol=2e-2)
def float32_with_python_scalars(x, s):
    return np.sum(np.exp(x * s) / (1 + x ** 2)) + s * np.sum(np.abs(x))


@program(62, lambda r: (r.standard_normal(5).astype(np.float32), r.standard_normal(5)), argnums=(0, 1), rtol=2e-2)
def float32_mixed_with_float64(x, w):
    return np.sum(x * w) + np.sum(x.astype(np.float64) ** 2) + np.sum(np.float32(0.5) * x ** 3 + 1.5)


@program(63, lambda r: ({"W": r.standard_normal((3, 2)), "b": [r.standard_normal(2), np.array(0.5)]},
                        r.standard_normal((4, 3))), has_aux=True)
def pytree_with_a_0d_leaf_and_aux(p, X):
    h = X @ p["W"] + p["b"][0]
    return np.sum(np.tanh(h) ** 2) * p["b"][1] ** 2, (h.mean(), {"n": X.shape[0]})


@program(64, lambda r: (r.standard_normal(5), r.standard_normal(5)), argnums=(1, 0))
def argnums_in_reverse_order(a, b):
    return np.sum(a * np.exp(b)) + np.sum(a ** 3)


@program(65, lambda r: (np.array([0.5, 1.5]), 4))
def loop_over_an_int_argument(x, n):
    for i in range(n):
        x = np.sin(x) + 0.1 * i
    return np.sum(x ** 2)


@program(66, lambda r: (r.standard_normal((2, 3, 3)), r.standard_normal((4, 3))), argnums=(0, 1))
def numpy2_linalg_array_api_names(S, V):
    # np.linalg.vector_norm, matrix_norm, diagonal, trace, vecdot, cross, matrix_transpose
    # and np.unstack had no op (NoOpError on the tape, a graph break compiled)
    return (np.sum(np.linalg.vector_norm(S, axis=(0, 2))) + np.linalg.vector_norm(V, ord=3)
            + np.sum(np.linalg.matrix_norm(S, ord="nuc")) + np.sum(np.linalg.diagonal(S, offset=1) ** 2)
            + np.sum(np.linalg.trace(S) ** 2) + np.sum(np.linalg.vecdot(V, V[0]) ** 2)
            + np.sum(np.linalg.cross(V[:2], V[2:]) ** 2) + np.sum(np.linalg.matrix_transpose(S)[:, 0] * V[0])
            + sum(np.sum(u ** 3) * (i + 1) for i, u in enumerate(np.unstack(V, axis=1))))


_SHARE = 8


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradient_program(name):
    """Each program on the tape and on the eager backend both ways; one program in
    ``_SHARE`` one way on cpp too (chosen by name: g++ is what the suite's time goes to)."""
    fn, args, argnums, has_aux, rtol, tape = PROGRAMS[name]
    crc = zlib.crc32(name.encode())
    backends = {"eager": ("compiled_fn", "in_compiled")}
    if crc % _SHARE == 1:
        backends["cpp"] = (("compiled_fn", "in_compiled")[crc // _SHARE % 2],)
    check_program(fn, args, argnums, has_aux, rtol, tape, backends=backends)


# ----------------------------------------------------------------------------- promises

def _eigvals_sum(A):
    return np.sum(np.real(np.linalg.eigvals(A)))


def test_a_speculated_op_on_a_value_being_differentiated_names_its_missing_rule():
    """kiln.grad of a compiled function hands it Tensors: capture speculated eigvals'
    dtype by running NumPy on the Tensor, which recorded on the tape and let the
    speculation's own ResultKindChanged (a BaseException) out to the user."""
    A = np.array([[2.0, 1.0], [0.5, 3.0]])
    for vg in (kiln.grad(_eigvals_sum), kiln.grad(kiln.compile(_eigvals_sum, backend="eager"))):
        # (NumPy 2.5's eigvals is complex for a real matrix too: no rule for complex values)
        with pytest.raises(kiln.AutogradError, match=rf"(?s)'eigvals'.*{__file__}:\d+|{__file__}:\d+: "
                                                     r"Differentiation rule for 'eigvals'"):
            vg(A.copy())


def _kinks(x, m):
    return (np.sum(np.abs(x)) + np.sum(np.maximum(x, 0.0)) + np.sum(np.clip(x, -1.0, 1.0))
            + np.sum(np.max(m, axis=1)) + np.sum(np.amax(m, axis=0)))


def test_derivatives_at_kinks_are_the_documented_ones():
    """docs/aot.md: abs has derivative 0 at 0, maximum and max split a tie equally, clip
    passes the gradient at its bounds (finite differences see half of it there)."""
    x = np.array([-2.0, -0.7, 0.0, 0.3, 1.0, 1.7])
    m = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]])
    want_x = np.array([-1.0, -1.0, 0.0, 1.0, 1.0, 1.0]) + np.array([0, 0, 0.5, 1, 1, 1]) + np.array([0, 1, 1, 1, 1, 0])
    want_m = np.array([[0.0, 0.5, 0.5], [0.5, 0.5, 0.0]]) + np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    for vg in (kiln.grad(_kinks, (0, 1)), kiln.compile(lambda x, m: kiln.grad(_kinks, (0, 1))(x, m), backend="eager")):
        gx, gm = vg(x.copy(), m.copy())
        np.testing.assert_array_equal(gx, want_x)
        np.testing.assert_array_equal(gm, want_m)


def _scalars(a, b, c):
    return np.sin(a) * b ** 2 + a * 3.0 + np.exp(c)


def test_gradients_of_python_floats_and_numpy_scalars_are_0d_arrays_of_their_dtype():
    """A Python float differentiates as float64, a NumPy scalar or 0-d array as its dtype:
    the gradient is a 0-d ndarray (as the leaf kiln.grad makes of it), on every path."""
    args = (0.7, np.float32(1.3), np.array(0.2))
    want = (np.cos(0.7) * 1.3 ** 2 + 3.0, 2 * np.sin(0.7) * 1.3, np.exp(0.2))
    for vg in (kiln.grad(_scalars, (0, 1, 2)), kiln.grad(kiln.compile(_scalars, backend="eager"), (0, 1, 2)),
               kiln.compile(lambda a, b, c: kiln.grad(_scalars, (0, 1, 2))(a, b, c), backend="eager")):
        got = vg(*args)
        assert [(type(g), g.dtype, g.shape) for g in got] == \
            [(np.ndarray, np.dtype(t), ()) for t in ("float64", "float32", "float64")]
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _sqrt_sum(x):
    return np.sum(np.sqrt(x))


def _sqrt_of_square(x):
    return np.sum(np.sqrt(x ** 2))


def _log_sum(x):
    return np.sum(np.log(x))


@pytest.mark.parametrize("backend", ["cpp", "eager"])
def test_the_backward_pass_is_silent_about_floating_point_errors(backend):
    """NumPy has no backward to copy: kiln's derivative rules (and the backward's kernels)
    compute IEEE results without warning or raising, whatever np.errstate says, as JAX
    and PyTorch do: sqrt at 0 gives inf, sqrt(x ** 2) at 0 nan. The forward warns as
    NumPy does (log at 0)."""
    x = np.array([0.0, 4.0])
    ways = {"tape": kiln.grad(_sqrt_sum), "compiled": kiln.grad(kiln.compile(_sqrt_sum, backend=backend))}
    for name, vg in ways.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            np.testing.assert_array_equal(vg(x.copy()), [np.inf, 0.25], err_msg=name)
            with np.errstate(all="raise"):
                np.testing.assert_array_equal(vg(x.copy()), [np.inf, 0.25], err_msg=name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(kiln.grad(_sqrt_of_square)(x.copy()), [np.nan, 1.0])
    vg = kiln.compile(lambda x: kiln.value_and_grad(_log_sum)(x), backend=backend)
    with pytest.warns(RuntimeWarning, match="divide by zero encountered in log"):
        value, g = vg(x.copy())
    assert value == -np.inf
    np.testing.assert_array_equal(g, [np.inf, 0.25])


def _interp_right_of_a_value(fp):
    return np.sum(np.interp(np.array([-1.0, 9.0]), np.arange(3.0), fp, right=fp[0]))


def test_an_unsupported_argument_on_the_tape_names_the_users_line():
    """NumPy's call on Tensors has no line of its own in the traceback: the message says
    which argument of which function, where, and what to pass instead."""
    for vg in (kiln.grad(_interp_right_of_a_value),
               kiln.compile(lambda fp: kiln.grad(_interp_right_of_a_value)(fp), backend="eager")):
        with pytest.raises(kiln.UnsupportedArgument, match=rf"^at {__file__}:\d+: numpy.interp: argument "
                                                           r"right='<array>' is not supported by kiln; pass"):
            vg(np.array([1.0, 2.0, 3.0]))


_LOGGED: list = []


def _loss_logging_a_detached_value(x, w):
    h = np.tanh(x @ w)
    _LOGGED.append(float(np.sum(h.detach() if hasattr(h, "detach") else h)))
    return np.sum(h ** 2)


def _has_attributes(x):
    return hasattr(x, "detach"), hasattr(x, "flags"), hasattr(x.sum(), "detach"), hasattr(x[0], "flags"), x * 2


def test_hasattr_of_a_tensor_in_compiled_code_answers_for_its_type():
    """capture answered hasattr(a, name) for np.ndarray whatever the array was: False for
    a Tensor's .detach, so a loss that logs ``h.detach() if hasattr(h, "detach") else h``
    took float() of the value being differentiated (KilnError) under kiln.grad."""
    x, w = np.full((3, 4), 0.1), np.full((4, 2), 0.2)
    want = kiln.grad(_loss_logging_a_detached_value, (0, 1))(x, w)
    got = kiln.grad(kiln.compile(_loss_logging_a_detached_value, backend="eager"), (0, 1))(x, w)
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-12)
    assert _LOGGED[-1] == _LOGGED[-2] == np.sum(np.tanh(x @ w))
    compiled = kiln.compile(_has_attributes, backend="eager")
    for a in (np.ones(2), kiln.tensor(np.ones(2), requires_grad=True)):
        assert compiled(a)[:-1] == _has_attributes(a)[:-1]


def _detached_cube(x):
    d = x.detach()
    return np.sum(x ** 2) + np.sum(d ** 3)


def test_a_tensor_method_in_compiled_code_breaks_the_graph_saying_what_it_is():
    """t.detach() was reported as "ndarray.detach has no kiln op" with the hint to declare
    a NumPy op; the gradient itself is right (the call runs as Python)."""
    t = kiln.tensor(np.array([0.5, 1.0]), requires_grad=True)
    out = kiln.explain(kiln.compile(_detached_cube, backend="eager"))(t)
    assert "kiln.Tensor.detach is a method of the eager tape's Tensor" in str(out)
    np.testing.assert_array_equal(kiln.grad(kiln.compile(_detached_cube, backend="eager"))(np.array([0.5, 1.0])),
                                  [1.0, 2.0])


def _weighted(a, b):
    return np.sum(a * b ** 2)


@pytest.mark.parametrize("argnums", [(1, -1), (0, 0), (-2, 1, 0), -1])
def test_an_argument_named_twice_in_argnums_gets_its_gradient_each_time(argnums):
    """argnums=(1, -1) named argument 1 twice: each name made a new leaf of the one
    before, so the first name's gradient was a silent zero (and (0, 0) inside compiled
    code); a negative argnum broke the graph."""
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    by_position = {0: b ** 2, 1: 2 * a * b}
    want = [by_position[n % 2] for n in (argnums if isinstance(argnums, tuple) else (argnums,))]
    for vg in (kiln.grad(_weighted, argnums), kiln.grad(kiln.compile(_weighted, backend="eager"), argnums),
               kiln.compile(lambda a, b: kiln.grad(_weighted, argnums)(a, b), backend="eager")):
        got = vg(a.copy(), b.copy())
        got = got if isinstance(argnums, tuple) else (got,)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
