"""More programs from stop 36's hunt, checked like tests/test_programs.py (values, dtypes,
shapes, exceptions, argument states, aliasing) on cpp and eager: views and in-place
updates, library-style code, numpy-ml and "From Python to NumPy" programs, keyword
semantics of ufuncs and reductions, and writes into arguments before a step that may
raise. All passed when written; they guard against regressions.
"""
from __future__ import annotations

import numpy as np

from tests.test_programs import program_registry, program_test

_rng = np.random.default_rng(3637)
PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)


def rn(*shape, dtype=np.float64):
    return _rng.standard_normal(shape).astype(dtype)


# ------------ views, in-place updates, overlapping writes, fancy and boolean assignment


@program((rn(4, 3),), (rn(4, 3, dtype=np.float32).T,))
def rows_as_views_inplace(m):
    for row in m:
        row -= row.mean()
    return m


@program((rn(4),))
def scalar_loop_var_copy(x):
    for v in x:
        v += 1
    return x


@program((rn(3, 4),))
def enumerate_rows_write_next(m):
    for i, row in enumerate(m[:-1]):
        m[i + 1] += row * 0.5
    return m


@program((rn(3, 2, 2),))
def iterate_3d_and_matmul(t):
    acc = np.eye(2)
    for mat in t:
        acc = acc @ mat
    return acc


@program((rn(5, 2),))
def unpack_rows(pts):
    total = 0.0
    for x, y in pts:
        total += x * y
    return total


@program((rn(4, 4),))
def diag_walk_with_views(m):
    d = np.diagonal(m)          # read-only view
    r = m[::2, ::2]
    r *= 10
    return d.copy(), m


@program((rn(6),))
def view_chain_write(x):
    v = x[1:][::2]
    v[:] = 0
    w = x.reshape(2, 3)
    w[:, -1] = 7
    return x, v, w


@program((rn(3, 3),))
def transpose_inplace_add(m):
    m += m.T       # overlapping: NumPy buffers (result is symmetric)
    return m


@program((np.arange(10.0),))
def overlapping_slice_assign(x):
    x[1:] = x[:-1]
    return x


@program((np.arange(10.0),))
def overlapping_slice_iadd(x):
    x[1:] += x[:-1]
    return x


@program((np.arange(12.0).reshape(3, 4),))
def swap_columns_fancy(m):
    m[:, [0, 1]] = m[:, [1, 0]]
    return m


@program((np.arange(6.0),))
def fancy_iadd_repeated(x):
    idx = np.array([0, 0, 1, 5, 5, 5])
    x[idx] += 1       # buffered: each index once
    y = np.zeros(6)
    np.add.at(y, idx, 1)
    return x, y


@program((rn(5),))
def out_param_aliasing(x):
    np.multiply(x, 2, out=x)
    np.add(x[:-1], x[1:], out=x[1:])
    return x


@program((rn(4, 4),))
def fill_diag_and_triu(m):
    np.fill_diagonal(m, 0)
    m[np.triu_indices(4, 1)] = -1
    return m


@program((np.zeros((3, 3)),))
def ix_assign(m):
    m[np.ix_([0, 2], [1, 2])] = np.array([[1.0, 2.0], [3.0, 4.0]])
    return m


@program((rn(5),))
def boolean_assign_scalar_and_array(x):
    x[x < 0] = 0
    x[x > 1] = x[x > 1] ** 0.5
    return x


@program((rn(2, 3),))
def flat_assign(m):
    m.flat[::2] = -1
    return m, m.flat[3]


@program((rn(4),))
def put_take(x):
    np.put(x, [0, 2], [10, 20])
    return np.take(x, [3, 0, 0]), x


# --- library-style code: dtype introspection, broadcasting helpers, apply_along_axis, piecewise, unique, linalg, sets, pads


@program((rn(5),), (rn(5).astype(np.float32),), (np.arange(5),))
def dtype_introspection(x):
    if np.issubdtype(x.dtype, np.floating):
        eps = np.finfo(x.dtype).eps
        return x + eps, x.dtype.kind, x.dtype.itemsize
    info = np.iinfo(x.dtype)
    return np.clip(x, info.min, info.max), x.dtype.kind, np.result_type(x, 1.5)


@program((rn(3),), (rn(2, 3),), (5.0,))
def atleast_and_ndim(x):
    a = np.atleast_2d(x)
    if a.ndim != 2:
        raise ValueError(f"expected 2-d, got {a.ndim}")
    return a.T @ a


@program((rn(3, 1), rn(1, 4)))
def broadcast_arrays_moveaxis(a, b):
    A, B = np.broadcast_arrays(a, b)
    s = np.stack([A, B])
    return np.moveaxis(s, 0, -1).shape, np.moveaxis(s, 0, -1).sum(-1)


@program((rn(4, 3),))
def apply_along_axis(m):
    return np.apply_along_axis(lambda r: r.max() - r.min(), 1, m)


@program((rn(6),))
def vectorize_fn(x):
    f = np.vectorize(lambda v: v if v > 0 else 0.0)
    return f(x)


@program((np.linspace(-2, 2, 9),))
def piecewise_select(x):
    p = np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2])
    s = np.select([x < -1, x > 1], [x * 10, x * 100], default=0.0)
    return p, s


@program((np.array([3, 1, 2, 3, 1, 3]),))
def unique_all_returns(a):
    u, idx, inv, cnt = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    return u, idx, inv, cnt, u[inv]


@program((rn(10), rn(10)))
def histogram2d_polyfit(x, y):
    H, xe, ye = np.histogram2d(x, y, bins=3)
    c = np.polyfit(x, 2 * x + 1 + 0.01 * y, 1)
    return H, xe, c


@program((rn(8),))
def as_strided_windows(x):
    from numpy.lib.stride_tricks import as_strided
    w = as_strided(x, shape=(6, 3), strides=(x.strides[0], x.strides[0]), writeable=False)
    return w.mean(axis=1)


@program((rn(4, 4),))
def linalg_suite(m):
    a = m @ m.T + 4 * np.eye(4)
    L = np.linalg.cholesky(a)
    q, r = np.linalg.qr(m)
    w, v = np.linalg.eigh(a)
    s = np.linalg.svd(m, compute_uv=False)
    return L, np.abs(r.diagonal()), w, s, np.linalg.slogdet(a), np.linalg.matrix_rank(m)


@program((rn(3), rn(3)))
def choose_searchsorted(a, b):
    idx = np.array([0, 1, 0])
    c = np.choose(idx, [a, b])
    srt = np.sort(a)
    return c, np.searchsorted(srt, b, side="right")


@program((np.array([1.0, np.nan, 3.0, np.inf, -np.inf]),))
def nan_inf_handling(x):
    fin = np.isfinite(x)
    return x[fin].sum(), np.nanmax(np.where(np.isinf(x), np.nan, x)), np.nan_to_num(x), np.isnan(x).sum()


@program((rn(2, 3, 4),))
def einsum_variants(t):
    return (np.einsum("ijk->kji", t), np.einsum("ijk,ijk->i", t, t),
            np.einsum("ij...->i", t), np.tensordot(t, t, axes=([1, 2], [1, 2])))


@program((rn(3, 4),))
def sort_variants(m):
    return (np.sort(m, axis=0), np.argsort(m, axis=None, kind="stable"), np.partition(m, 1, axis=1)[:, :2],
            np.lexsort((m[0], m[1])), np.sort(m, axis=-1)[:, ::-1])


@program((rn(3, 3),))
def set_ops(m):
    a = np.round(m.ravel(), 0)
    b = np.array([0.0, 1.0, -1.0])
    return np.intersect1d(a, b), np.setdiff1d(a, b), np.union1d(a, b), np.isin(a, b)


@program((rn(4, 5),))
def diff_gradient_cumulative(m):
    return np.diff(m, n=2, axis=1), np.gradient(m, axis=0), np.cumprod(1 + 0.1 * m, axis=1), np.trapezoid(m, dx=0.5, axis=1)


@program((rn(6),))
def pad_modes(x):
    return (np.pad(x, 2, mode="reflect"), np.pad(x, (1, 3), mode="edge"), np.pad(x, 2, mode="constant", constant_values=-1),
            np.pad(x, 2, mode="wrap"))


@program((np.arange(24).reshape(2, 3, 4),))
def reshape_family(t):
    return (t.reshape(6, -1), t.swapaxes(0, 2).copy(), np.rollaxis(t, 2).shape, t.ravel(order="F"),
            np.squeeze(t[:, :1, :]), np.expand_dims(t, (0, -1)).shape, t.flatten()[::5])


# --- numpy-ml and From Python to NumPy: im2col, batchnorm, LSTM, Adam, splits, EM, Gray-Scott, boids, HMM


def _pad2d(X, p):
    return np.pad(X, ((0, 0), (p, p), (p, p), (0, 0)), mode="constant")


@program((rn(2, 5, 5, 3), rn(3, 3, 3, 4), 1, 1))
def conv2d_im2col(X, W, stride, pad):
    n, h, w, c = X.shape
    fr, fc, _, oc = W.shape
    Xp = _pad2d(X, pad)
    oh = (h + 2 * pad - fr) // stride + 1
    ow = (w + 2 * pad - fc) // stride + 1
    cols = np.empty((n, oh, ow, fr, fc, c))
    for i in range(fr):
        for j in range(fc):
            cols[:, :, :, i, j, :] = Xp[:, i:i + stride * oh:stride, j:j + stride * ow:stride, :]
    out = cols.reshape(n * oh * ow, -1) @ W.reshape(-1, oc)
    return out.reshape(n, oh, ow, oc)


@program((rn(6, 4), np.ones(4), np.zeros(4), {"mean": np.zeros(4), "var": np.ones(4)}, True),
         (rn(6, 4), np.ones(4), np.zeros(4), {"mean": np.zeros(4), "var": np.ones(4)}, False))
def batchnorm_forward(X, gamma, beta, running, train, momentum=0.9, eps=1e-5):
    if train:
        mu = X.mean(axis=0)
        var = X.var(axis=0)
        running["mean"] = momentum * running["mean"] + (1 - momentum) * mu
        running["var"] = momentum * running["var"] + (1 - momentum) * var
    else:
        mu, var = running["mean"], running["var"]
    Xhat = (X - mu) / np.sqrt(var + eps)
    return gamma * Xhat + beta


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


@program((rn(4, 3), rn(4, 5), rn(4, 5), rn(8, 20), np.zeros(20)))
def lstm_cell(x, h, c, W, b):
    z = np.hstack([x, h]) @ W + b
    H = h.shape[1]
    i, f, o = _sigmoid(z[:, :H]), _sigmoid(z[:, H:2 * H]), _sigmoid(z[:, 2 * H:3 * H])
    g = np.tanh(z[:, 3 * H:])
    c_new = f * c + i * g
    return o * np.tanh(c_new), c_new


@program(({"w": rn(3, 2), "b": rn(2)}, {"w": rn(3, 2), "b": rn(2)}, {"t": 0, "m": {}, "v": {}}))
def adam_step(params, grads, state, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    state["t"] += 1
    t = state["t"]
    for k in params:
        m = state["m"].get(k, np.zeros_like(params[k]))
        v = state["v"].get(k, np.zeros_like(params[k]))
        m = b1 * m + (1 - b1) * grads[k]
        v = b2 * v + (1 - b2) * grads[k] ** 2
        mhat = m / (1 - b1 ** t)
        vhat = v / (1 - b2 ** t)
        params[k] -= lr * mhat / (np.sqrt(vhat) + eps)
        state["m"][k], state["v"][k] = m, v
    return params


@program((rn(20), _rng.integers(0, 2, 20)))
def best_split_gain(x, y):
    order = np.argsort(x)
    xs, ys = x[order], y[order]
    n = len(y)
    def gini(p):
        return 1 - p ** 2 - (1 - p) ** 2
    best, thr = -1.0, None
    left_pos = np.cumsum(ys)[:-1]
    counts = np.arange(1, n)
    p_left = left_pos / counts
    p_right = (ys.sum() - left_pos) / (n - counts)
    gain = gini(ys.mean()) - (counts * gini(p_left) + (n - counts) * gini(p_right)) / n
    valid = xs[1:] != xs[:-1]
    if valid.any():
        k = np.argmax(np.where(valid, gain, -np.inf))
        best, thr = gain[k], (xs[k] + xs[k + 1]) / 2
    return best, thr


@program((rn(30, 2), rn(3, 2), np.ones(3) / 3, np.stack([np.eye(2)] * 3)))
def gmm_em_step(X, mu, pi, cov):
    n, d = X.shape
    k = len(pi)
    logp = np.empty((n, k))
    for j in range(k):
        diff = X - mu[j]
        inv = np.linalg.inv(cov[j])
        _, logdet = np.linalg.slogdet(cov[j])
        logp[:, j] = np.log(pi[j]) - 0.5 * (np.einsum("ni,ij,nj->n", diff, inv, diff) + logdet + d * np.log(2 * np.pi))
    m = logp.max(axis=1, keepdims=True)
    resp = np.exp(logp - m)
    resp /= resp.sum(axis=1, keepdims=True)
    nk = resp.sum(axis=0)
    mu_new = resp.T @ X / nk[:, None]
    return resp, mu_new, nk / n


@program((np.zeros((6, 6)), np.zeros((6, 6)), 2))
def gray_scott(U0, V0, steps, Du=0.16, Dv=0.08, F=0.035, k=0.065):
    U = U0 + 1.0
    V = V0.copy()
    n = U.shape[0]
    r = n // 4
    U[r:-r, r:-r] = 0.5
    V[r:-r, r:-r] = 0.25
    for _ in range(steps):
        Lu = U[:-2, 1:-1] + U[2:, 1:-1] + U[1:-1, :-2] + U[1:-1, 2:] - 4 * U[1:-1, 1:-1]
        Lv = V[:-2, 1:-1] + V[2:, 1:-1] + V[1:-1, :-2] + V[1:-1, 2:] - 4 * V[1:-1, 1:-1]
        uvv = U[1:-1, 1:-1] * V[1:-1, 1:-1] ** 2
        U[1:-1, 1:-1] += Du * Lu - uvv + F * (1 - U[1:-1, 1:-1])
        V[1:-1, 1:-1] += Dv * Lv + uvv - (F + k) * V[1:-1, 1:-1]
    return U, V


@program((rn(10, 2), rn(10, 2)))
def boids_step(pos, vel):
    d = pos[:, None, :] - pos[None, :, :]
    dist = np.sqrt((d ** 2).sum(-1))
    near = (dist < 1.0) & (dist > 0)
    cnt = np.maximum(near.sum(1), 1)[:, None]
    align = (near[:, :, None] * vel[None, :, :]).sum(1) / cnt - vel
    cohes = (near[:, :, None] * pos[None, :, :]).sum(1) / cnt - pos
    close = (dist < 0.3) & (dist > 0)
    separ = -(close[:, :, None] * d).sum(1)
    vel = vel + 0.05 * align + 0.01 * cohes + 0.1 * separ
    speed = np.linalg.norm(vel, axis=1, keepdims=True)
    vel = np.where(speed > 2, vel / speed * 2, vel)
    return pos + vel * 0.1, vel


@program((rn(5, 3), rn(3, 3), rn(3)))
def hmm_forward_log(logB, logA, logpi):
    alpha = logpi + logB[0]
    for t in range(1, logB.shape[0]):
        m = alpha.max()
        alpha = np.log(np.exp(alpha - m) @ np.exp(logA)) + m + logB[t]
    m = alpha.max()
    return m + np.log(np.exp(alpha - m).sum())


@program((200, 0.5))
def random_walk_stats(n, p):
    g = np.random.default_rng(0)
    steps = np.where(g.random(n) < p, 1, -1)
    walk = np.cumsum(steps)
    first = np.argmax(np.abs(walk) >= 10) if (np.abs(walk) >= 10).any() else -1
    return walk.max(), walk.min(), first, (walk == 0).sum()


# --- keyword semantics: where=/initial=/dtype=/out=/casting=, ufunc methods, integer and float rules, NEP 50

X = rn(4, 5)

M = rn(4, 5) > 0


@program((X, M))
def reduce_where_initial(x, m):
    return (np.sum(x, where=m), np.max(x, axis=1, initial=-10.0, where=m), np.mean(x, where=m, axis=0),
            np.add.reduce(x, axis=(0, 1)), np.min(x, initial=0.5), np.prod(x, where=m, axis=1, keepdims=True))


@program((X,), (X.astype(np.float32),), (_rng.integers(0, 100, (4, 5)).astype(np.int16),))
def reduce_dtype_out(x):
    o = np.empty(5)
    np.sum(x, axis=0, out=o)
    return (x.sum(dtype=np.float32), np.cumsum(x, axis=1, dtype=np.float64), o, x.mean(dtype=np.float64),
            np.std(x, ddof=1, axis=1), x.var(axis=None), np.cumprod(x, axis=0)[-1])


@program((X, M))
def ufunc_kwargs(x, m):
    out = np.zeros_like(x)
    np.exp(x, out=out, where=m)
    r = np.add(x, 1, dtype=np.float32)
    s = np.multiply(x, 2, casting="unsafe", dtype=np.int64)
    t = np.sqrt(np.abs(x), order="C")
    return out, r, s, t


@program((X,))
def ufunc_methods(x):
    return (np.add.accumulate(x, axis=1), np.multiply.outer(x[0], x[1]), np.maximum.reduce(x, axis=0),
            np.subtract.reduce(x[0]), np.logical_or.reduce(x > 0, axis=1), np.add.reduceat(x[0], [0, 2, 4]))


@program((np.arange(10),))
def ufunc_at(a):
    b = a.astype(float)
    np.add.at(b, [0, 0, 3], 5)
    np.multiply.at(b, [1, 1], 2)
    np.maximum.at(b, np.array([2, 9]), 100)
    np.negative.at(b, [4])
    return b


@program((_rng.integers(-7, 7, 6), np.array([3, -2, 1, -1, 2, 5])))
def int_semantics(a, b):
    return a // b, a % b, np.fmod(a, b), np.divmod(a, b), a ** 2, np.right_shift(np.abs(a), 1), -a // 2, np.remainder(a, -3)


@program((np.array([1.5, -1.5, 2.5, -0.5, np.nan, np.inf]),))
def float_semantics(x):
    return (np.round(x), np.rint(x), np.floor(x), np.trunc(x), np.fix(x), x // 1, x % 1, np.sign(x),
            np.copysign(1.0, x), np.nextafter(x, 0), np.spacing(x), np.heaviside(x, 0.5), np.fmax(x, 0), np.maximum(x, 0))


@program((np.array([1, 2, 3], dtype=np.uint8), np.int8(-3), 300))
def nep50_promotion(a, s, big):
    r1 = a + 1
    r2 = a * 2.5
    r3 = a + s
    r4 = a + np.float32(1.5)
    try:
        r5 = a + big
    except OverflowError as e:
        r5 = str(e)
    return r1, r2, r3, r4, r5, (a - 5), np.uint8(200) + a


@program((np.array([[1, 2], [3, 4]], dtype=np.int32),))
def int_matmul_and_mean(m):
    return m @ m, m.mean(), m.mean(axis=0).dtype, np.true_divide(m, 2).dtype, (m / m).dtype, np.sqrt(m).dtype


@program((np.array([True, False, True]),))
def bool_arith(b):
    return b + b, b * 3, b.sum(), ~b, -b.astype(int), np.cumsum(b), b.mean(), b & ~b, b ^ True


# ------------------------------ writes into arguments followed by a step that may raise


@program((rn(3, 3),), (np.eye(3) * 2,))
def writes_then_cholesky_may_raise(m):
    m[0] += 1.0
    m[1:, 0] *= 2
    L = np.linalg.cholesky(m)
    m[2] = L[2]
    return L


@program((rn(6), np.array([0, 1, 7])), (rn(6), np.array([0, 1, 2])))
def writes_then_fancy_index_may_raise(x, idx):
    x[:3] += 1
    x[3:] -= 1
    y = x[idx]
    x[0] = y.sum()
    return y


@program((rn(4, 4),), (rn(4, 4),))
def chained_column_updates_then_error_on_shape(p):
    p[:, 0] += p[:, 1] * 0.1
    p[:, 1] += p[:, 2] * 0.1
    if p[0, 0] > 0:
        return p.reshape(5, 3)
    return p


@program((rn(5), 3), (rn(5), 10**30))
def write_python_int_overflow(x, k):
    x[1:] += 1.0
    x[0] = k
    x[2:] *= 2
    return x


@program((rn(6, 5), _rng.integers(0, 6, 3), np.array([True, False, True, True, False])),
         (rn(4, 4), _rng.integers(0, 4, 2), np.array([False, False, False, False])))
def ix_blocks(M, rows, keep):
    # np.ix_ of integer arrays is a view per axis: gathers, writes and errors as NumPy's
    cols = np.flatnonzero(keep)
    blk = M[np.ix_(rows, [0, 2])]
    M[np.ix_(rows[:1], [1, -1])] += 10.0
    sub = M[np.ix_(keep[:M.shape[0]], keep)]     # a mask computed by the caller: Python
    a, b = np.ix_(rows, cols)
    return blk, sub, a + b, M[np.ix_(np.argsort(M[:, 0]), cols)]


@program((rn(8), rn(8)), (rn(3).astype(np.float32), rn(3).astype(np.float32)),
         (rn(4), rn(3)))
def design_matrix_r_c(t, y):
    # np.c_ stands 1-D columns up and joins them; np.r_ pads with numbers and ranges
    X = np.c_[np.ones_like(t), t, t ** 2]
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    padded = np.r_[0.0, y, y[-1], 1:3]
    bad = np.r_[t, np.int8(4)] * 2            # a strong NumPy scalar promotes float32
    return X, beta, padded, bad, np.c_[X[:, :2], y]


test_program = program_test(PROGRAMS, ["cpp", "eager"])
