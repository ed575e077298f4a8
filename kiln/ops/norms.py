"""numpy.linalg.norm: vector norms of every order, matrix norms ('fro', 'nuc', 1, -1,
2, -2, inf, -inf) over an axis pair, and ``vector_norm``, the common case (ord None or 2
over one axis of a real array) that the compilers fuse as ``sqrt(sum(x * x))``.

Derivatives: x / |x| (0 at x == 0, as PyTorch), sign(x) (|x| / |x|_p)^(p-1) for other
orders, the extreme entries (inf, -inf) or the extreme column/row sums of |x| (matrix 1,
inf) like max, ties split evenly, and for the spectral norms (2, -2, 'nuc') u v^T of the
extreme singular pair (U V^T for the sum) from the reduced SVD. numpy.linalg.cond, a ratio
of singular values or a product of two norms, differentiates through the same rules.
"""
from __future__ import annotations

import numpy as np

from ..errors import NoDerivative
from .factorizations import _matrices, _svd
from .linalg import mT
from .meta import TensorMeta, ndim_of, normalize_one_axis, shape_of
from .reduction import dtype_of, keep, quiet, reduced_shape, sample
from .registry import Bound, Category, F, N, declare, is_float_like, spell


def _norm_impl(x, ord=None, axis=None, keepdims=False):
    return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


def _norm_meta(x, ord=None, axis=None, keepdims=False) -> TensorMeta:
    result = quiet(_norm_impl, sample(x), ord=ord, axis=axis, keepdims=keepdims)
    return TensorMeta(reduced_shape(shape_of(x), axis, keepdims), np.asarray(result).dtype)


def _safe(v):
    return F.where(F.equal(v, 0), 1.0, v)


def _norm_vjp(g, out, x, ord, axis, keepdims):
    if not is_float_like(x):
        return (None,)
    vector = axis is None or len(axis) == 1
    gk, nk = keep(g, x, axis, keepdims), keep(out, x, axis, keepdims)
    if ord is None or ord == "fro" or (vector and ord == 2):
        # x / |x|; at x == 0 the (sub)gradient 0 is used, as PyTorch does.
        return (F.multiply(gk, F.true_divide(x, _safe(nk))),)
    if vector and ord in (np.inf, -np.inf):
        # Like max: to the entries of largest (smallest) magnitude, ties split evenly.
        hit = F.astype(F.equal(F.absolute(x), nk), dtype=dtype_of(x))
        share = F.true_divide(gk, F.sum(hit, axis=axis, keepdims=True))
        return (F.multiply(F.multiply(hit, F.sign(x)), share),)
    if vector and ord == 0:
        return (F.zeros_like(x),)  # a count of nonzeros: piecewise constant
    if vector and not isinstance(ord, str):
        # d/dx (sum |x|^p)^(1/p) = sign(x) (|x| / norm)^(p-1); the ratio avoids overflow.
        ratio = F.power(F.true_divide(F.absolute(x), _safe(nk)), float(ord) - 1.0)
        return (F.multiply(gk, F.multiply(F.sign(x), ratio)),)
    if vector:
        raise NoDerivative(f"no derivative rule for numpy.linalg.norm with ord={ord!r}; "
                           f"detach it or compute it under kiln.no_grad()")
    if ord in (1, -1, np.inf, -np.inf):
        # A largest (smallest) column sum (ord 1) or row sum (ord inf) of |x|: like max,
        # to the columns (rows) that attain it, ties split evenly.
        summed, extreme = axis if ord in (1, -1) else axis[::-1]
        sums = F.sum(F.absolute(x), axis=(summed,), keepdims=True)
        hit = F.astype(F.equal(sums, nk), dtype=dtype_of(x))
        share = F.true_divide(gk, F.sum(hit, axis=(extreme,), keepdims=True))
        return (F.multiply(F.sign(x), F.multiply(hit, share)),)
    return (_spectral_norm_vjp(g, x, ord, axis),)


def _spectral_norm_vjp(g, x, ord, axis):
    """ord 2, -2, 'nuc' over ``axis`` = (rows, columns): the largest or smallest singular
    value, or their sum, whose derivative is u v^T of that singular pair (U V^T for the
    sum), from the reduced SVD of x with those axes moved last (_multi_svd_norm's layout)."""
    nd = ndim_of(x)
    perm = tuple(a for a in range(nd) if a not in axis) + tuple(axis)
    u, _, vh = _svd(F.transpose(x, axes=perm), False)
    if ord != "nuc":
        k = 0 if ord == 2 else min(shape_of(x)[a] for a in axis) - 1
        u = F.getitem(u, (Ellipsis, slice(None), slice(k, k + 1)))
        vh = F.getitem(vh, (Ellipsis, slice(k, k + 1), slice(None)))
    batch = tuple(shape_of(x)[a] for a in perm[:-2])
    gy = F.multiply(F.matmul(u, vh), F.reshape(g, shape=batch + (1, 1)))
    return F.transpose(gy, axes=tuple(int(a) for a in np.argsort(perm)))


norm = declare("norm", Category.EXTERN, _norm_impl, inputs=("x",),
               params={"ord": None, "axis": None, "keepdims": False}, meta=_norm_meta,
               vjp=_norm_vjp,
               doc="numpy.linalg.norm; axis: None (all elements, ord None only) or a tuple "
                   "of 1 (vector) or 2 (matrix, in the given order) non-negative ints")


def _vector_norm_decomposition(x, axis, keepdims):
    """For the compilers: NumPy's own sum for ord None/2 over one axis,
    ``sqrt(add.reduce(x * x, axis))``, so it fuses with what makes x and what uses it."""
    return F.sqrt(F.sum(F.multiply(x, x), axis=axis, keepdims=keepdims))


vector_norm = declare(
    "vector_norm", Category.EXTERN,
    lambda x, axis, keepdims: np.linalg.norm(x, axis=axis, keepdims=keepdims),
    inputs=("x",), params={"axis": (0,), "keepdims": False},
    meta=lambda x, axis, keepdims: _norm_meta(x, None, axis, keepdims),
    vjp=lambda g, out, x, axis, keepdims: _norm_vjp(g, out, x, None, axis, keepdims),
    lowering={"decompose": _vector_norm_decomposition},
    doc="numpy.linalg.norm(x, axis=k) of a real float array (ord None or 2, one axis): "
        "the Euclidean length along axis k")


def _norm_normalize(x, ord=None, axis=None, keepdims=False):
    nd = ndim_of(x)
    # NumPy's errors for ord/axis; ones, not zeros: a negative ord of zeros warns "divide by zero"
    np.linalg.norm(np.ones((1,) * nd), ord=ord, axis=axis)
    if isinstance(ord, np.generic):
        ord = ord.item()
    if axis is None:
        axes = None if ord is None else tuple(range(nd))
    else:
        axes = tuple(normalize_one_axis(a, nd)
                     for a in (axis if isinstance(axis, tuple) else (axis,)))
        if len(axes) == 2 and ord in (None, "fro"):
            axes = tuple(sorted(axes))  # the Frobenius norm ignores the axis order
        if len(axes) == 1 and ord in (None, 2) and dtype_of(x).kind == "f":
            return Bound(vector_norm, (x,), {"axis": axes, "keepdims": bool(keepdims)})
    return Bound(norm, (x,), {"ord": ord, "axis": axes, "keepdims": bool(keepdims)})


spell(np.linalg.norm, norm, _norm_normalize, "numpy.linalg.norm")


# ---- cond --------------------------------------------------------------------------------------

def _cond_meta(x, p=None):
    batch, m, n = _matrices("cond", x)
    if m == 0 or n == 0:
        raise np.linalg.LinAlgError("cond is not defined on empty arrays")
    if p not in (None, 2, -2) and m != n:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    dtype = np.asarray(np.linalg.cond(np.eye(2, dtype=dtype_of(x)), p)).dtype
    return TensorMeta(batch, dtype)


def _cond_vjp(g, out, x, p=None):
    """p None, 2, -2: a ratio of the extreme singular values, s_i / s_j, whose cotangent
    is U diag(gs) V^T with gs = g / s_j at i and -g * cond / s_j at j (svdvals' rule);
    other orders: norm(x) * norm(inv(x)), through norm's rule and inv's (-inv^T G inv^T)."""
    if not is_float_like(x):
        return (None,)
    nd = ndim_of(x)
    batch = tuple(shape_of(out))
    if p in (None, 2, -2):
        u, s, vh = _svd(x, False)
        k = shape_of(s)[-1]
        i, j = (0, k - 1) if p != -2 else (k - 1, 0)
        eye = np.eye(k, dtype=dtype_of(s))
        per = F.true_divide(g, N.getitem(s, (Ellipsis, j)))
        gs = F.subtract(F.multiply(F.reshape(per, shape=batch + (1,)), eye[i]),
                        F.multiply(F.reshape(F.multiply(per, out), shape=batch + (1,)), eye[j]))
        return (F.matmul(F.multiply(u, F.reshape(gs, shape=batch + (1, k))), vh),)
    axis = (nd - 2, nd - 1)
    inv_x = F.inv(x)
    na, ni = (F.norm(v, ord=p, axis=axis, keepdims=False) for v in (x, inv_x))
    (gx,) = _norm_vjp(F.multiply(g, ni), na, x, p, axis, False)
    (gi,) = _norm_vjp(F.multiply(g, na), ni, inv_x, p, axis, False)
    inv_t = mT(inv_x)
    return (F.subtract(gx, F.matmul(inv_t, F.matmul(gi, inv_t))),)


cond = declare("cond", Category.EXTERN, lambda x, p=None: np.linalg.cond(x, p), inputs=("x",),
               params={"p": None}, meta=_cond_meta, vjp=_cond_vjp, fresh_result=True,
               doc="numpy.linalg.cond: the condition number (inf for a singular matrix)")


def _cond_normalize(x, p=None):
    if p not in (None, 1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc"):
        raise ValueError("Invalid norm order for matrices.")
    return Bound(cond, (x,), {"p": p})


spell(np.linalg.cond, cond, _cond_normalize, "numpy.linalg.cond")
