"""Factorizations that return several arrays: svd (with U and Vh), eigh, qr, slogdet.

Each is one EXTERN op computing every result in one LAPACK call, packed into a single
array (the results side by side along the last axis, or stacked rows), and a composite
spelling that hands back NumPy's result tuple (``SVDResult``, ``EighResult``, ...) as
views of it. So the stages see ops with one output each: they capture, run through
every backend and differentiate like any extern; the results share no memory with each
other (the views are disjoint).

Packing needs one dtype for all results: a complex input's real results (svd's S,
eigh's eigenvalues, slogdet's logabsdet) are packed as complex numbers with a zero
imaginary part and come back as contiguous real arrays (exact: a real value survives the
round trip). Derivatives, for real inputs: ``slogdet`` (d log|det A| = tr(A^-1 dA)) and
``eigh`` (eigenvalues and eigenvectors; the cotangent is folded onto the triangle LAPACK
reads, ``symmetric_cotangent``), ``svd`` (U, S and Vh: Townsend's rule; with
full_matrices=True only of a square matrix), ``qr`` (reduced, tall or wide; 'complete' of a
tall matrix has no unique derivative) and ``lstsq`` (x, residuals and singular values, for
a full-rank system: NaN where the rank is lower). A derivative that does not exist raises
kiln.NoDerivative.
``lstsq`` packs x, the singular values, the rank and the residuals (their size known only
after the call). ``np.linalg.eig`` and ``eigvals`` of a real input are real or complex as
the values say (all eigenvalues real or not): the ops speculate the kind and check it
(kiln/ops/speculation.py).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import NoDerivative
from .linalg import mT, symmetric_cotangent
from .meta import TensorMeta, namespace, ndim_of, reject, shape_of
from .reduction import dtype_of
from .registry import Bound, Category, Composite, F, N, declare, spell, spell_composite
from .speculation import checked, complex_of, speculate

_EYE = np.eye(2)
SlogdetResult = type(np.linalg.slogdet(_EYE))
EighResult = type(np.linalg.eigh(_EYE))
QRResult = type(np.linalg.qr(_EYE))
SVDResult = type(np.linalg.svd(_EYE))


def _result_dtype(fn, dtype: Any) -> np.dtype:
    out = fn(np.eye(2, dtype=dtype))
    return np.asarray(out[0] if isinstance(out, tuple) else out).dtype


def _matrices(name: str, a: Any) -> tuple:
    s = shape_of(a)
    if len(s) < 2:
        raise np.linalg.LinAlgError(f"{len(s)}-dimensional array given. Array must be at "
                                    f"least two-dimensional")
    return tuple(s[:-2]), s[-2], s[-1]


def _square(name: str, a: Any) -> tuple:
    batch, m, n = _matrices(name, a)
    if m != n:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    return batch, n


def _own(x: Any) -> Any:
    """A result as NumPy lays it out: a C-contiguous array of its own. Of an unbatched
    factorization the packed view already is (a view stays a view); of a batched one it
    is a copy (a 0-d result stays 0-d)."""
    return x if ndim_of(x) == 0 else N.ascontiguousarray(x)


def _real_part(x: Any, complex_input: bool) -> Any:
    """A real result packed in a complex array: its real part, contiguous, as NumPy's."""
    return _own(N.real(x) if complex_input else x)


def _is_complex(a: Any) -> bool:
    return np.dtype(dtype_of(a)).kind == "c"


def _lead(batch: tuple) -> tuple:
    return (slice(None),) * len(batch)


def _unpack(p: Any, batch: tuple, start: int, stop: int, shape: tuple) -> Any:
    """The result packed at ``[start, stop)`` of p's last axis, in its own shape."""
    return _own(N.reshape(N.getitem(p, _lead(batch) + (slice(start, stop),)), batch + shape))


# ---- slogdet --------------------------------------------------------------------------------

def _slogdet_impl(a):
    sign, logabsdet = np.linalg.slogdet(a)
    if isinstance(sign, np.generic):   # one matrix: np.stack of two scalars costs 3.4 us
        return np.array((sign, logabsdet))   # of a 4x4 slogdet's 6.8 (NumPy's call: 3.4)
    return namespace(a).stack([sign, logabsdet], axis=-1)


def _slogdet_meta(a):
    batch, _ = _square("slogdet", a)
    return TensorMeta(batch + (2,), _result_dtype(np.linalg.slogdet, dtype_of(a)))


def _slogdet_vjp(g, out, a):
    # d sign = 0; d log|det A| = tr(A^-1 dA): the cotangent is g A^-T (A invertible)
    batch = tuple(shape_of(g)[:-1])
    gl = F.getitem(g, _lead(batch) + (1,))
    return (F.multiply(F.reshape(gl, shape=batch + (1, 1)), mT(F.inv(a))),)


slogdet_packed = declare(
    "slogdet_packed", Category.EXTERN, _slogdet_impl, inputs=("a",), meta=_slogdet_meta,
    vjp=_slogdet_vjp, fresh_result=True,
    doc="numpy.linalg.slogdet's (sign, logabsdet), stacked on a last axis of 2")


def _slogdet(a):
    p = F.slogdet_packed(a)
    lead = _lead(tuple(shape_of(p)[:-1]))
    return SlogdetResult(_own(N.getitem(p, lead + (0,))),
                         _real_part(N.getitem(p, lead + (1,)), _is_complex(a)))


def _slogdet_normalize(a):
    return Composite(_slogdet, (a,), one_call=True)


spell_composite(np.linalg.slogdet, ("slogdet_packed", "getitem"), _slogdet_normalize,
                "numpy.linalg.slogdet")


# ---- eigh ------------------------------------------------------------------------------------

def _eigh_impl(a, UPLO="L"):
    w, v = np.linalg.eigh(a, UPLO)
    return np.concatenate([w[..., None, :].astype(v.dtype), v], axis=-2)


def _eigh_meta(a, UPLO="L"):
    batch, n = _square("eigh", a)
    return TensorMeta(batch + (n + 1, n), np.linalg.eigh(np.eye(2, dtype=dtype_of(a)))[1].dtype)


def _eigh_vjp(g, out, a, UPLO="L"):
    # A = V diag(w) V^T: dw = diag(V^T dA V), dV = V (E o (V^T dA V)) with
    # E[i, j] = 1 / (w[j] - w[i]) off the diagonal (0 where eigenvalues are equal: there
    # the eigenvectors are not unique and no derivative exists). So the cotangent of
    # the symmetric matrix is V (diag(gw) + E o (V^T gV)) V^T.
    lead = _lead(tuple(shape_of(out)[:-2]))
    n = shape_of(out)[-1]
    w = F.getitem(out, lead + (slice(0, 1),))            # (..., 1, n)
    v = F.getitem(out, lead + (slice(1, None),))
    gw = F.getitem(g, lead + (slice(0, 1),))
    gv = F.getitem(g, lead + (slice(1, None),))
    gap = F.subtract(w, mT(w))                            # gap[i, j] = w[j] - w[i]
    inverse = F.where(F.equal(gap, 0.0), 0.0, F.true_divide(1.0, gap))
    eye = np.eye(n, dtype=dtype_of(out))
    inner = F.add(F.multiply(inverse, F.matmul(mT(v), gv)), F.multiply(gw, eye))
    return (symmetric_cotangent(F.matmul(F.matmul(v, inner), mT(v)), UPLO),)


eigh_packed = declare(
    "eigh_packed", Category.EXTERN, _eigh_impl, inputs=("a",), params={"UPLO": "L"},
    meta=_eigh_meta, fresh_result=True, vjp=_eigh_vjp,
    doc="numpy.linalg.eigh's eigenvalues (row 0) above its eigenvectors (rows 1..n)")


def _eigh(a, UPLO):
    p = F.eigh_packed(a, UPLO=UPLO)
    lead = _lead(tuple(shape_of(p)[:-2]))
    return EighResult(_real_part(N.getitem(p, lead + (0,)), _is_complex(a)),
                      _own(N.getitem(p, lead + (slice(1, None),))))


def _eigh_normalize(a, UPLO="L"):
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return Composite(_eigh, (a,), {"UPLO": UPLO}, one_call=True)


spell_composite(np.linalg.eigh, ("eigh_packed", "getitem"), _eigh_normalize, "numpy.linalg.eigh")


# ---- svd ---------------------------------------------------------------------------------------

def _svd_shapes(a, full_matrices):
    batch, m, n = _matrices("svd", a)
    k = min(m, n)
    ku, kv = (m, n) if full_matrices else (k, k)
    return batch, m, n, k, ku, kv


def _svd_impl(a, full_matrices=True):
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    batch = s.shape[:-1]
    return np.concatenate([u.reshape(batch + (-1,)), s.astype(u.dtype), vh.reshape(batch + (-1,))],
                          axis=-1)


def _svd_meta(a, full_matrices=True):
    batch, m, n, k, ku, kv = _svd_shapes(a, full_matrices)
    dtype = _result_dtype(np.linalg.svd, dtype_of(a))   # U's: complex for a complex input
    return TensorMeta(batch + (m * ku + k + kv * n,), dtype)


def _unpacked(p: Any, batch: tuple, start: int, stop: int, shape: tuple) -> Any:
    """``_unpack`` with ops only (for derivative rules)."""
    return F.reshape(F.getitem(p, _lead(batch) + (slice(start, stop),)), shape=batch + shape)


def _no_unique_derivative(name: str, what: str) -> NoDerivative:
    return NoDerivative(f"Differentiation rule for '{name}' not implemented for {what}: the "
                        f"extra columns are not unique; use the reduced factorization, or "
                        f"detach the value (x.detach())")


def _svd_vjp(g, out, a, full_matrices=True):
    # Townsend, "Differentiating the singular value decomposition" (2016), for the reduced
    # A = U S V^T: with F[i, j] = 1 / (s_j^2 - s_i^2) off the diagonal,
    #   gA = U [(F o (U^T gU - gU^T U)) S + diag(gS) + S (F o (V^T gV - gV^T V))] V^T
    #        + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)
    # (the last terms only when U or V is not square). Equal singular values have no
    # derivative (F is 0 there, as for eigh).
    batch, m, n, k, ku, kv = _svd_shapes(a, full_matrices)
    if full_matrices and m != n:
        raise _no_unique_derivative("svd_packed", "full_matrices=True of a non-square matrix")
    part = lambda p, i: (_unpacked(p, batch, 0, m * k, (m, k)),           # noqa: E731
                         _unpacked(p, batch, m * k, m * k + k, (1, k)),
                         mT(_unpacked(p, batch, m * k + k, m * k + k + k * n, (k, n))))[i]
    u, s, v = (part(out, i) for i in range(3))
    gu, gs, gv = (part(g, i) for i in range(3))
    gap = F.subtract(F.square(s), mT(F.square(s)))        # gap[i, j] = s_j^2 - s_i^2
    f = F.where(F.equal(gap, 0.0), 0.0, F.true_divide(1.0, gap))
    utgu, vtgv = F.matmul(mT(u), gu), F.matmul(mT(v), gv)
    inner = F.add(F.add(F.multiply(F.multiply(f, F.subtract(utgu, mT(utgu))), s),
                        F.multiply(gs, np.eye(k, dtype=dtype_of(out)))),
                  F.multiply(mT(s), F.multiply(f, F.subtract(vtgv, mT(vtgv)))))
    ga = F.matmul(F.matmul(u, inner), mT(v))
    if m > k:
        ga = F.add(ga, F.matmul(F.true_divide(F.subtract(gu, F.matmul(u, utgu)), s), mT(v)))
    if n > k:
        ga = F.add(ga, F.matmul(u, F.true_divide(mT(F.subtract(gv, F.matmul(v, vtgv))), mT(s))))
    return (ga,)


svd_packed = declare(
    "svd_packed", Category.EXTERN, _svd_impl, inputs=("a",), params={"full_matrices": True},
    meta=_svd_meta, fresh_result=True, vjp=_svd_vjp, vjp_refuses=True,
    doc="numpy.linalg.svd's U, S and Vh, each flattened, side by side on the last axis")


def _svd(a, full_matrices):
    batch, m, n, k, ku, kv = _svd_shapes(a, full_matrices)
    p = F.svd_packed(a, full_matrices=full_matrices)
    u = _unpack(p, batch, 0, m * ku, (m, ku))
    s = _real_part(N.getitem(p, _lead(batch) + (slice(m * ku, m * ku + k),)), _is_complex(a))
    vh = _unpack(p, batch, m * ku + k, m * ku + k + kv * n, (kv, n))
    return SVDResult(u, s, vh)


# ---- qr ------------------------------------------------------------------------------------------

def _qr_shapes(a, mode):
    batch, m, n = _matrices("qr", a)
    k = min(m, n)
    return batch, m, n, (m if mode == "complete" else k)


def _qr_impl(a, mode="reduced"):
    q, r = np.linalg.qr(a, mode=mode)
    batch = q.shape[:-2]
    return np.concatenate([q.reshape(batch + (-1,)), r.reshape(batch + (-1,))], axis=-1)


def _qr_meta(a, mode="reduced"):
    batch, m, n, kq = _qr_shapes(a, mode)
    return TensorMeta(batch + (m * kq + kq * n,), _result_dtype(np.linalg.qr, dtype_of(a)))


def _times_inverse_transpose(x: Any, r: Any) -> Any:
    """x R^-T, as solve(R, x^T)^T."""
    return mT(F.solve(r, mT(x)))


def _qr_deep_cotangent(q, r, gq, gr):
    # A = QR with m >= n (TensorFlow's QrGrad): with M = tril(Q^T gQ - gQ^T Q + R gR^T - gR R^T),
    # gA = Q (gR + M R^-T) + (gQ - Q Q^T gQ) R^-T
    qtgq, rgrt = F.matmul(mT(q), gq), F.matmul(r, mT(gr))
    m = F.tril(F.add(F.subtract(qtgq, mT(qtgq)), F.subtract(rgrt, mT(rgrt))))
    return F.add(F.matmul(q, F.add(gr, _times_inverse_transpose(m, r))),
                 _times_inverse_transpose(F.subtract(gq, F.matmul(q, qtgq)), r))


def _qr_vjp(g, out, a, mode="reduced"):
    batch, m, n, kq = _qr_shapes(a, mode)
    if mode == "complete" and m > n:
        raise _no_unique_derivative("qr_packed", "mode='complete' of a tall matrix")
    q, r = _unpacked(out, batch, 0, m * kq, (m, kq)), _unpacked(out, batch, m * kq, m * kq + kq * n, (kq, n))
    gq, gr = _unpacked(g, batch, 0, m * kq, (m, kq)), _unpacked(g, batch, m * kq, m * kq + kq * n, (kq, n))
    if m >= n:
        return (_qr_deep_cotangent(q, r, gq, gr),)
    # wide: A = [X | Y] = Q [U | V]; X = QU is square, and Y = QV feeds Q through gV
    lead = _lead(batch)
    first, rest = lead + (slice(None), slice(0, m)), lead + (slice(None), slice(m, None))
    y, gv = F.getitem(a, rest), F.getitem(gr, rest)
    gx = _qr_deep_cotangent(q, F.getitem(r, first), F.add(gq, F.matmul(y, mT(gv))),
                            F.getitem(gr, first))
    return (F.concatenate((gx, F.matmul(q, gv)), axis=len(batch) + 1),)


qr_packed = declare(
    "qr_packed", Category.EXTERN, _qr_impl, inputs=("a",), params={"mode": "reduced"},
    meta=_qr_meta, fresh_result=True, vjp=_qr_vjp, vjp_refuses=True,
    doc="numpy.linalg.qr's Q and R ('reduced' or 'complete'), flattened side by side")


def _qr_raw_impl(a):
    h, tau = np.linalg.qr(a, mode="raw")
    batch = h.shape[:-2]
    # h is LAPACK's Fortran-ordered array: packed as its C-ordered transpose
    return np.concatenate([np.swapaxes(h, -1, -2).reshape(batch + (-1,)), tau], axis=-1)


def _qr_raw_meta(a):
    batch, m, n = _matrices("qr", a)
    return TensorMeta(batch + (m * n + min(m, n),), np.linalg.qr(np.eye(2, dtype=dtype_of(a)), "raw")[0].dtype)


qr_raw_packed = declare(
    "qr_raw_packed", Category.EXTERN, _qr_raw_impl, inputs=("a",), meta=_qr_raw_meta,
    fresh_result=True,
    doc="numpy.linalg.qr(mode='raw')'s h (LAPACK's Fortran-ordered factors) and tau, "
        "flattened side by side")


def _qr_raw(a):
    batch, m, n = _matrices("qr", a)
    p = F.qr_raw_packed(a)
    # NumPy's h is (..., n, m), Fortran-ordered in its last two axes: the transpose of
    # the packed (m, n) block, as a view
    h = N.swapaxes(_unpack(p, batch, 0, m * n, (m, n)), -1, -2)
    return h, N.getitem(p, _lead(batch) + (slice(m * n, m * n + min(m, n)),))


def _qr(a, mode):
    if mode == "raw":
        return _qr_raw(a)
    batch, m, n, kq = _qr_shapes(a, "complete" if mode == "complete" else "reduced")
    p = F.qr_packed(a, mode="complete" if mode == "complete" else "reduced")
    r = _unpack(p, batch, m * kq, m * kq + kq * n, (kq, n))
    if mode == "r":
        return r
    return QRResult(_unpack(p, batch, 0, m * kq, (m, kq)), r)


def _qr_normalize(a, mode="reduced"):
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    _matrices("qr", a)
    return Composite(_qr, (a,), {"mode": mode}, one_call=True)


spell_composite(np.linalg.qr, ("qr_packed", "getitem", "reshape"), _qr_normalize,
                "numpy.linalg.qr")


# ---- lstsq -----------------------------------------------------------------------------------
# One packed row: x (flattened), the singular values, rank, then the residuals padded to
# their full length K (at least 2) and a flag saying whether NumPy returns them (it does
# only for a full-rank, over-determined system: otherwise residuals is empty). The
# residuals come back as a slice of it (lstsq_residuals), whose size is known after the op
# runs.

def _lstsq_shapes(a, b):
    s_a, s_b = shape_of(a), shape_of(b)
    if len(s_a) != 2 or len(s_b) not in (1, 2):
        return None
    m, n = s_a
    if s_b[0] != m:
        return None
    k = 1 if len(s_b) == 1 else s_b[1]
    return m, n, k, (n,) if len(s_b) == 1 else (n, k)


def _lstsq_impl(a, b, rcond=None):
    x, res, rank, s = np.linalg.lstsq(a, b, rcond=rcond)
    k = 1 if np.ndim(b) == 1 else np.shape(b)[1]
    nk, q = x.size, s.size
    if isinstance(x, np.ndarray) and nk <= 64:
        # (a small system's pieces through Python lists, ~1.5 us against the five stores'
        # ~4: a 12x3 OLS fit was 1.05x NumPy's time; the values round-trip exactly)
        return np.array(x.ravel().tolist() + s.tolist() + [rank, res.size > 0] + res.tolist()
                        + [0] * (max(k, 2) - res.size), x.dtype)
    # (filled in place: a concatenate of four pieces cost as much as a 9x3 solve's packing
    # should, ~5 us against ~1)
    out = namespace(x).zeros(nk + q + 2 + max(k, 2), x.dtype)   # on a GPU, CuPy's
    out[:nk] = x.reshape(-1)
    out[nk:nk + q] = s
    out[nk + q] = rank
    out[nk + q + 1] = res.size > 0
    out[nk + q + 2:nk + q + 2 + res.size] = res
    return out


def _lstsq_meta(a, b, rcond=None):
    m, n, k, x_shape = _lstsq_shapes(a, b)
    dtype = np.linalg.lstsq(np.eye(2, dtype=dtype_of(a)), np.ones(2, dtype=dtype_of(b)))[0].dtype
    return TensorMeta((n * k + min(m, n) + 2 + max(k, 2),), dtype)


def _lstsq_vjp(g, out, a, b, rcond=None):
    # Full rank only (the minimum-norm solution jumps where the rank changes: NaN there).
    # m >= n: x = (A^T A)^-1 A^T b; with z = (A^T A)^-1 gx and r = b - A x,
    #   gb = A z, gA = r z^T - A z x^T; residuals |r_j|^2 add 2 r gres to gb, -2 r gres x^T to gA.
    # m < n: x = A^T w, w = (A A^T)^-1 b; with y = (A A^T)^-1 A gx,
    #   gb = y, gA = w (gx - A^T y)^T - y x^T.
    # The singular values: U diag(gs) V^T.
    m, n, k, x_shape = _lstsq_shapes(a, b)
    nk, q = n * k, min(m, n)
    x, gx = (F.reshape(F.getitem(v, (slice(0, nk),)), shape=(n, k)) for v in (out, g))
    gs = F.reshape(F.getitem(g, (slice(nk, nk + q),)), shape=(1, q))
    gres = F.reshape(F.getitem(g, (slice(nk + q + 2, nk + q + 2 + k),)), shape=(1, k))
    b2 = F.reshape(b, shape=(m, k))
    at = mT(a)
    full = F.equal(F.getitem(out, (nk + q,)), q)
    eye = np.eye(q, dtype=dtype_of(out))   # (solved instead of a singular Gram matrix)
    if m >= n:
        z = F.solve(F.where(full, F.matmul(at, a), eye), gx)
        az = F.matmul(a, z)
        r2 = F.multiply(F.subtract(b2, F.matmul(a, x)), F.multiply(gres, 2.0))
        gb = F.add(az, r2)
        ga = F.subtract(F.matmul(F.subtract(b2, F.matmul(a, x)), mT(z)),
                        F.matmul(F.add(az, r2), mT(x)))
    else:
        aat = F.where(full, F.matmul(a, at), eye)
        y, w = F.solve(aat, F.matmul(a, gx)), F.solve(aat, b2)
        gb = y
        ga = F.subtract(F.matmul(w, mT(F.subtract(gx, F.matmul(at, y)))), F.matmul(y, mT(x)))
    svd = F.svd_packed(a, full_matrices=False)
    u = F.reshape(F.getitem(svd, (slice(0, m * q),)), shape=(m, q))
    vh = F.reshape(F.getitem(svd, (slice(m * q + q, m * q + q + q * n),)), shape=(q, n))
    ga = F.add(ga, F.matmul(F.multiply(u, gs), vh))
    return F.where(full, ga, np.nan), F.reshape(F.where(full, gb, np.nan), shape=tuple(shape_of(b)))


lstsq_packed = declare(
    "lstsq_packed", Category.EXTERN, _lstsq_impl, inputs=("a", "b"), params={"rcond": None},
    meta=_lstsq_meta, fresh_result=True, vjp=_lstsq_vjp,
    doc="numpy.linalg.lstsq's x, singular values, rank, a residuals flag and the "
        "residuals (padded), side by side")


def _residuals_impl(p, start=0, k=1):
    # the k residuals, or none where the flag before them says NumPy returns none
    return p[start:start + (k if p[start - 1] else 0)].copy()


def _residuals_vjp(g, out, p, start=0, k=1):
    # (the mask the residuals are of p: its k places, where the flag is set)
    places = (np.arange(shape_of(p)[0]) >= start) & (np.arange(shape_of(p)[0]) < start + k)
    kept = F.logical_and(places, F.not_equal(F.getitem(p, (start - 1,)), 0))
    return (F.index_add(F.zeros_like(p), (kept,), g),)


lstsq_residuals = declare(
    "lstsq_residuals", Category.EXTERN, _residuals_impl, inputs=("p",),
    params={"start": 0, "k": 1}, vjp=_residuals_vjp, data_dependent=True, fresh_result=True,
    # (an example of at least 2: capture takes no data-dependent size of 1)
    meta=lambda p, start=0, k=1: TensorMeta((max(k, 2),), dtype_of(p)),
    unbacked=lambda p, start=0, k=1: (("lstsq_residuals", 0, start), ("u",)),
    doc="lstsq_packed's residuals: its k values from start, or none where the flag at "
        "start - 1 is 0 (one slice, not a mask's kernel and selection)")


def _lstsq(a, b, rcond):
    m, n, k, x_shape = _lstsq_shapes(a, b)
    p = F.lstsq_packed(a, b, rcond=rcond)
    nk, q = n * k, min(m, n)
    x = N.reshape(N.getitem(p, (slice(0, nk),)), x_shape)
    s = N.getitem(p, (slice(nk, nk + q),))
    rank = N.method("astype", N.getitem(p, (nk + q,)), np.int32)
    return x, F.lstsq_residuals(p, start=nk + q + 2, k=k), rank, s


def _lstsq_normalize(a, b, rcond=None):
    if _lstsq_shapes(a, b) is None or np.dtype(dtype_of(a)).kind == "c" or \
            np.dtype(dtype_of(b)).kind == "c":
        reject("numpy.linalg.lstsq", "a", "a complex, batched or mismatched system",
               "NumPy's own call raises or mixes dtypes there; it runs as Python")
    if rcond is not None and not isinstance(rcond, (int, float)):
        reject("numpy.linalg.lstsq", "rcond", rcond, "pass rcond as a Python number")
    return Composite(_lstsq, (a, b), {"rcond": rcond}, one_call=True)


spell_composite(np.linalg.lstsq, ("lstsq_packed", "lstsq_residuals", "getitem", "reshape"),
                _lstsq_normalize, "numpy.linalg.lstsq")


# ---- eig, eigvals ------------------------------------------------------------------------------
# Of a complex matrix the result is complex. Of a real one NumPy before 2.5 returns real
# arrays when every eigenvalue is real and complex ones otherwise (2.5 always complex):
# the op speculates which (kiln/ops/speculation.py), expecting what NumPy gives for the
# call's argument, or complex.

def _eig_impl(a, expect=None, site=""):
    w, v = np.linalg.eig(a)
    checked(w, expect, site)
    # packed as complex numbers: NumPy's real results are the real parts of complex arrays
    # (their strides show it), and the composite hands back those views
    return np.concatenate([w[..., None, :], v], axis=-2).astype(complex_of(w.dtype), copy=False)


def _eig_dtype(fn, a, expect):
    return np.dtype(expect) if expect else \
        complex_of(np.asarray(fn(np.eye(2, dtype=dtype_of(a)))[-1]).dtype)


def _eig_meta(a, expect=None, site=""):
    batch, n = _square("eig", a)
    return TensorMeta(batch + (n + 1, n), complex_of(_eig_dtype(np.linalg.eig, a, expect)))


eig_packed = declare(
    "eig_packed", Category.EXTERN, _eig_impl, inputs=("a",), params={"expect": None, "site": ""},
    meta=_eig_meta, may_raise=True, fresh_result=True,
    doc="numpy.linalg.eig's eigenvalues (row 0) above its eigenvectors (rows 1..n), complex; "
        "of a real matrix real or complex as the values say (checked against the kind expected)")
EigResult = type(np.linalg.eig(_EYE))


def _speculated(name: str, a: Any, fn: Any) -> dict:
    if _is_complex(a):
        return {"expect": None, "site": ""}
    return speculate(name, complex_of(np.asarray(fn(np.eye(2, dtype=dtype_of(a)))).dtype), a, fn)


def _eig(a, expect, site):
    p = F.eig_packed(a, expect=expect, site=site)
    lead = _lead(tuple(shape_of(p)[:-2]))
    w, v = _own(N.getitem(p, lead + (0,))), _own(N.getitem(p, lead + (slice(1, None),)))
    if expect is not None and np.dtype(expect).kind != "c":
        w, v = N.real(w), N.real(v)   # views, as NumPy's
    return EigResult(w, v)


def _eig_normalize(a):
    _square("eig", a)
    return Composite(_eig, (a,), _speculated("numpy.linalg.eig", a, lambda v: np.linalg.eig(v)[0]),
                     one_call=True)


spell_composite(np.linalg.eig, ("eig_packed", "getitem"), _eig_normalize, "numpy.linalg.eig")


def _eigvals_meta(a, expect=None, site=""):
    batch, n = _square("eigvals", a)
    return TensorMeta(batch + (n,), _eig_dtype(np.linalg.eigvals, a, expect))


eigvals = declare("eigvals", Category.EXTERN,
                  lambda a, expect=None, site="": checked(np.linalg.eigvals(a), expect, site),
                  inputs=("a",), params={"expect": None, "site": ""}, meta=_eigvals_meta,
                  may_raise=True, fresh_result=True,
                  doc="numpy.linalg.eigvals; of a real matrix real or complex as the values say "
                      "(checked against the kind expected)")


def _eigvals_normalize(a):
    _square("eigvals", a)
    return Bound(eigvals, (a,), _speculated("numpy.linalg.eigvals", a, np.linalg.eigvals))


spell(np.linalg.eigvals, eigvals, _eigvals_normalize, "numpy.linalg.eigvals")


# A compiled call of a packed op costs NumPy's call and the packing besides (one copy of
# each result; NumPy's own call hands them back as they are): 4x4 eigh 7.9 us against
# NumPy's 6.2, qr 14.7 against 12.9, a 9x3 lstsq 12.7 against 10.1 (kiln/runtime/cost.py
# prices an extern NumPy call at 0.6 us; this is that and ~1.5 us of packing).
PACKED_CALL_US = 2.0
for _op in (slogdet_packed, eigh_packed, svd_packed, qr_packed, qr_raw_packed, lstsq_packed, eig_packed):
    _op.compiled_us = lambda node, body_us: PACKED_CALL_US
