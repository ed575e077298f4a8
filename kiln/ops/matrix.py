"""Matrix functions beyond products and solves: diagonals, traces, Kronecker and cross
products, determinants, powers, pseudo-inverses, singular and symmetric eigenvalues.

``diagonal`` is a VIEW op (NumPy returns a read-only view); its derivative puts the
cotangent back on the diagonal. ``trace``, ``diag``, ``kron``, ``cross``, ``vdot`` and
``matrix_power`` are composites (kiln/ops/numeric.py explains those): they differentiate
and fuse through the ops they use. ``det``, ``pinv``, ``svdvals``, ``eigvalsh`` and
``matrix_rank`` call LAPACK through NumPy (EXTERN ops).

Functions returning several arrays (``svd`` with ``compute_uv``, ``eigh``, ``qr``,
``slogdet``) are in kiln/ops/factorizations.py; ``lstsq`` (a residual array whose length
depends on the rank) and ``eig``/``eigvals`` (whose dtype depends on the data) are not
ops yet: kiln runs them as Python (a graph break).
"""
from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from . import factorizations, layout
from .linalg import LETTERS, mT, symmetric_cotangent
from .meta import TensorMeta, ndim_of, normalize_one_axis, reject, shape_of
from .numeric import array_like
from .reduction import dtype_of
from .registry import Bound, Category, Composite, F, N, declare, method_key, spell, spell_composite


# ---- diagonal, trace, diag --------------------------------------------------------------------

def _diagonal_impl(x, offset=0, axis1=0, axis2=1):
    return np.diagonal(x, offset, axis1, axis2)


def _placement(n: int, m: int, offset: int, length: int, dtype: Any) -> tuple:
    """0/1 matrices P (n, L), Q (m, L): diagonal element i sits at row/column i + shift."""
    rows = np.zeros((n, length), dtype)
    cols = np.zeros((m, length), dtype)
    i = np.arange(length)
    rows[i + max(-offset, 0), i] = 1
    cols[i + max(offset, 0), i] = 1
    return rows, cols


def _diagonal_vjp(g, out, x, offset, axis1, axis2):
    nd = ndim_of(x)
    n, m = shape_of(x)[axis1], shape_of(x)[axis2]
    length = shape_of(g)[-1]
    rows, cols = _placement(n, m, offset, length, dtype_of(g))
    batch = LETTERS[:nd - 2]
    r, c, i = LETTERS[nd - 2], LETTERS[nd - 1], LETTERS[nd]
    full = F.einsum((g, rows, cols), subscripts=f"{batch}{i},{r}{i},{c}{i}->{batch}{r}{c}")
    rest = [k for k in range(nd) if k not in (axis1, axis2)]
    order = rest + [axis1, axis2]   # full's axes, in terms of x's
    back = tuple(order.index(k) for k in range(nd))
    return (F.transpose(full, axes=back),)


diagonal = declare("diagonal", Category.VIEW, _diagonal_impl, inputs=("x",),
                   params={"offset": 0, "axis1": 0, "axis2": 1}, vjp=_diagonal_vjp,
                   layout=layout.diagonal, read_only=True, view_of_input=True,
                   doc="numpy.diagonal / ndarray.diagonal: a read-only view of a diagonal")


def _diagonal_normalize(a, offset=0, axis1=0, axis2=1):
    nd = ndim_of(a)
    if nd < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    a1, a2 = normalize_one_axis(axis1, nd), normalize_one_axis(axis2, nd)
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    return Bound(diagonal, (a,), {"offset": operator.index(offset), "axis1": a1, "axis2": a2})


spell(np.diagonal, diagonal, _diagonal_normalize, "numpy.diagonal")
spell(method_key("diagonal"), diagonal, _diagonal_normalize, "ndarray.diagonal")


def _trace(a, offset, axis1, axis2, dtype):
    return N.sum(N.diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def _trace_normalize(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return Composite(_trace, (a,), {"offset": offset, "axis1": axis1, "axis2": axis2,
                                    "dtype": dtype}, out)


spell_composite(np.trace, ("diagonal", "sum"), _trace_normalize, "numpy.trace")
spell_composite(method_key("trace"), ("diagonal", "sum"), _trace_normalize, "ndarray.trace")


def _diag(v, k):
    v = array_like(v)   # a list of run-time values (Kabsch's ``np.diag([1.0, 1.0, d])``): its stack
    nd = ndim_of(v)
    if nd == 2:
        return N.diagonal(v, k)
    if nd != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = shape_of(v)[0]
    size = n + abs(k)
    # row r holds v[r] (k >= 0) or v[r + k] (k < 0), on the diagonal k: a where, so that
    # inf and nan stay where NumPy puts them (a product with 0/1 matrices would spread them)
    pad = N.zeros(abs(k), dtype=dtype_of(v))
    column = N.concatenate([v, pad] if k >= 0 else [pad, v])
    return N.where(np.eye(size, size, k, dtype=bool), N.reshape(column, (size, 1)),
                   dtype_of(v).type(0))


spell_composite(np.diag, ("diagonal", "where", "concatenate"),
                lambda v, k=0: Composite(_diag, (v,), {"k": operator.index(k)}), "numpy.diag")


# ---- kron, cross, vdot ------------------------------------------------------------------------

def _kron(a, b):
    a = a if hasattr(a, "shape") else np.asarray(a)
    b = b if hasattr(b, "shape") else np.asarray(b)
    nd = max(ndim_of(a), ndim_of(b))
    sa = (1,) * (nd - ndim_of(a)) + tuple(shape_of(a))
    sb = (1,) * (nd - ndim_of(b)) + tuple(shape_of(b))
    # out[i*B + j] = a[i] * b[j] on every axis: interleave the axes, multiply, merge pairs.
    ea = tuple(v for d in sa for v in (d, 1))
    eb = tuple(v for d in sb for v in (1, d))
    prod = N.multiply(N.reshape(a, ea), N.reshape(b, eb))
    return N.reshape(prod, tuple(x * y for x, y in zip(sa, sb)))


spell_composite(np.kron, ("reshape", "multiply"), lambda a, b: Composite(_kron, (a, b)), "numpy.kron")


def _cross(a, b, axisa, axisb, axisc):
    # NumPy's own verdict on the shapes (2-element vectors: deprecated in 2.0, an error
    # from 2.5), on zero-stride stand-ins: the same error, or none
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        np.cross(np.broadcast_to(0.0, shape_of(a)), np.broadcast_to(0.0, shape_of(b)),
                 axisa, axisb, axisc)
    a = N.moveaxis(a, axisa, -1)
    b = N.moveaxis(b, axisb, -1)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    ax = [N.getitem(a, (Ellipsis, i)) for i in range(na)]
    bx = [N.getitem(b, (Ellipsis, i)) for i in range(nb)]
    if na == 2 and nb == 2:
        return N.subtract(N.multiply(ax[0], bx[1]), N.multiply(ax[1], bx[0]))
    a0, a1 = ax[0], ax[1]
    a2 = ax[2] if na == 3 else 0
    b0, b1 = bx[0], bx[1]
    b2 = bx[2] if nb == 3 else 0
    comps = [N.subtract(N.multiply(a1, b2), N.multiply(a2, b1)),
             N.subtract(N.multiply(a2, b0), N.multiply(a0, b2)),
             N.subtract(N.multiply(a0, b1), N.multiply(a1, b0))]
    shape = np.broadcast_shapes(*[shape_of(c) for c in comps])
    comps = [N.broadcast_to(c, shape) for c in comps]
    return N.moveaxis(N.stack(comps, axis=-1), -1, axisc)


def _cross_normalize(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    return Composite(_cross, (a, b), {"axisa": axisa, "axisb": axisb, "axisc": axisc})


spell_composite(np.cross, ("multiply", "subtract", "stack", "moveaxis"), _cross_normalize,
                "numpy.cross")


def _vdot(a, b):
    a = N.ravel(a)
    if dtype_of(a).kind == "c":
        a = N.conjugate(a)
    return N.dot(a, N.ravel(b))


spell_composite(np.vdot, ("ravel", "conjugate", "dot"), lambda a, b, /: Composite(_vdot, (a, b), quiet=True),
                "numpy.vdot")


# ---- det, matrix_power, pinv, svdvals, eigvalsh, matrix_rank -----------------------------------

def _square(name: str, a: Any) -> None:
    s = shape_of(a)
    if len(s) < 2:
        raise np.linalg.LinAlgError(f"{len(s)}-dimensional array given. Array must be at least "
                                    f"two-dimensional")
    if s[-1] != s[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")


def _det_meta(a):
    _square("det", a)
    return TensorMeta(shape_of(a)[:-2], np.linalg.det(np.eye(1, dtype=dtype_of(a))).dtype)


def _det_vjp(g, out, a):
    # d det(A) = det(A) tr(A^-1 dA): the cotangent is g det(A) A^-T (A must be invertible).
    scale = F.reshape(F.multiply(g, out), shape=tuple(shape_of(out)) + (1, 1))
    return (F.multiply(scale, mT(F.inv(a))),)


det = declare("det", Category.EXTERN, lambda a: np.linalg.det(a), inputs=("a",), meta=_det_meta,
              vjp=_det_vjp, doc="numpy.linalg.det (stacks of square matrices)")
spell(np.linalg.det, det, lambda a: Bound(det, (a,), {}), "numpy.linalg.det")


def _matrix_power(a, n):
    """Repeated squaring, as NumPy does (n < 0: of the inverse); n == 0: identities in
    an empty_like(a); n == 1: a itself (NumPy returns the argument, not a copy)."""
    _square("matrix_power", a)
    if n == 0:
        out = N.empty_like(a)
        N.method("__setitem__", out, (Ellipsis,), np.eye(shape_of(a)[-1], dtype=dtype_of(a)))
        return out
    if n < 0:
        a, n = F.inv(a), -n
    if n == 1:
        return a
    if n <= 3:  # NumPy's own association, so NaN/inf land where NumPy puts them
        square = N.matmul(a, a)
        return square if n == 2 else N.matmul(square, a)
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else N.matmul(result, base)
        n >>= 1
        if n:
            base = N.matmul(base, base)
    return result


spell_composite(np.linalg.matrix_power, ("matmul", "inv", "empty_like", "setitem"),
                lambda a, n: Composite(_matrix_power, (a,), {"n": operator.index(n)}),
                "numpy.linalg.matrix_power")


def _pinv_impl(a, rcond=None, hermitian=False):
    return np.linalg.pinv(a, rcond=rcond, hermitian=hermitian) if rcond is not None \
        else np.linalg.pinv(a, hermitian=hermitian)


def _pinv_vjp(g, out, a, rcond=None, hermitian=False):
    # Golub & Pereyra: dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P for
    # P = pinv(A) of constant rank; its transpose applied to g, written without I:
    p, pt, gt = out, mT(out), mT(g)
    first = F.negative(F.matmul(F.matmul(pt, g), pt))
    second = F.matmul(F.subtract(gt, F.matmul(a, F.matmul(p, gt))), F.matmul(p, pt))
    third = F.matmul(F.matmul(pt, p), F.subtract(gt, F.matmul(F.matmul(gt, p), a)))
    grad = F.add(F.add(first, second), third)
    # hermitian=True reads the lower triangle only (through eigh)
    return (symmetric_cotangent(grad, "L") if hermitian else grad,)


pinv = declare("pinv", Category.EXTERN, _pinv_impl, inputs=("a",),
               params={"rcond": None, "hermitian": False}, vjp=_pinv_vjp,
               doc="numpy.linalg.pinv: the Moore-Penrose pseudo-inverse (via the SVD)")


def _pinv_normalize(a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    # NumPy's rules: rtol=None is max(M, N) * eps of a's dtype (rcond=None is 1e-15)
    if rcond is None and rtol is None:
        sizes = tuple(shape_of(a))[-2:]
        if not all(type(n) is int for n in sizes):
            reject("numpy.linalg.pinv", "rtol", rtol, "pass a number")
        rcond = max(sizes) * np.finfo(dtype_of(a)).eps
    elif rcond is None:
        rcond = None if rtol is np._NoValue else rtol
    elif rtol is not np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    return Bound(pinv, (a,), {"rcond": rcond, "hermitian": bool(hermitian)})


spell(np.linalg.pinv, pinv, _pinv_normalize, "numpy.linalg.pinv")


def _svdvals_vjp(g, out, a):
    # ds_k = u_k^T dA v_k: the cotangent is U diag(g) Vh (the reduced SVD)
    u, _, vh = factorizations._svd(a, False)
    k = shape_of(g)[-1]
    return (F.matmul(F.multiply(u, F.reshape(g, shape=tuple(shape_of(g)[:-1]) + (1, k))), vh),)


def _eigvalsh_vjp(g, out, a, UPLO="L"):
    # dw_k = v_k^T dA v_k: the cotangent of the symmetric matrix is V diag(g) V^T
    _, v = factorizations._eigh(a, UPLO)
    n = shape_of(g)[-1]
    scaled = F.multiply(v, F.reshape(g, shape=tuple(shape_of(g)[:-1]) + (1, n)))
    return (symmetric_cotangent(F.matmul(scaled, mT(v)), UPLO),)


svdvals = declare("svdvals", Category.EXTERN, lambda a: np.linalg.svd(a, compute_uv=False),
                  inputs=("a",), vjp=_svdvals_vjp, doc="numpy.linalg.svd(a, compute_uv=False) / svdvals: "
                                     "singular values, descending")


def _svd_normalize(a, full_matrices=True, compute_uv=True, hermitian=False):
    if hermitian:
        reject("numpy.linalg.svd", "hermitian", True, "drop hermitian=True")
    if compute_uv:  # U, S and Vh from one packed op (kiln/ops/factorizations.py)
        return Composite(factorizations._svd, (a,), {"full_matrices": bool(full_matrices)},
                         one_call=True)
    return Bound(svdvals, (a,), {})


spell(np.linalg.svd, svdvals, _svd_normalize, "numpy.linalg.svd")
spell(np.linalg.svdvals, svdvals, lambda x, /: Bound(svdvals, (x,), {}), "numpy.linalg.svdvals")

eigvalsh = declare("eigvalsh", Category.EXTERN, lambda a, UPLO="L": np.linalg.eigvalsh(a, UPLO),
                   inputs=("a",), params={"UPLO": "L"}, vjp=_eigvalsh_vjp,
                   doc="numpy.linalg.eigvalsh: eigenvalues of a symmetric/Hermitian matrix")
spell(np.linalg.eigvalsh, eigvalsh,
      lambda a, UPLO="L": Bound(eigvalsh, (a,), {"UPLO": UPLO}), "numpy.linalg.eigvalsh")

matrix_rank = declare("matrix_rank", Category.EXTERN,
                      lambda a, tol=None, hermitian=False: np.linalg.matrix_rank(a, tol, hermitian),
                      inputs=("a",), params={"tol": None, "hermitian": False},
                      doc="numpy.linalg.matrix_rank (SVD-based)")
spell(np.linalg.matrix_rank, matrix_rank,
      lambda A, tol=None, hermitian=False, *, rtol=None: Bound(
          matrix_rank, (A,), {"tol": tol, "hermitian": bool(hermitian)}) if rtol is None else
      reject("numpy.linalg.matrix_rank", "rtol", rtol, "pass tol="),
      "numpy.linalg.matrix_rank")
spell_composite(np.diagflat, ("ravel", "diagonal", "where", "concatenate"),
                lambda v, k=0: Composite(lambda v, k: _diag(N.ravel(v), k), (v,), {"k": operator.index(k)}),
                "numpy.diagflat")


def _vecdot(x1, x2, axis):
    if dtype_of(x1).kind == "c":
        x1 = N.conjugate(x1)
    product = N.multiply(x1, x2)
    # the gufunc's loop keeps its type: an int8 vecdot adds (and wraps) in int8, a bool one
    # is bool (np.sum's default would give int64)
    return N.sum(product, axis=axis, dtype=dtype_of(product))


def vecdot_normalize(x1, x2, /, *, axis=-1):
    # NumPy's own verdict on the core dimensions (a gufunc: no broadcasting into them),
    # on zero-stride stand-ins
    np.vecdot(np.broadcast_to(0.0, shape_of(x1)), np.broadcast_to(0.0, shape_of(x2)), axis=axis)
    return Composite(_vecdot, (x1, x2), {"axis": axis})


if hasattr(np, "vecdot"):   # NumPy 2.0+
    spell_composite(np.vecdot, ("conjugate", "multiply", "sum"), vecdot_normalize, "numpy.vecdot")
if hasattr(np, "matvec"):   # NumPy 2.2+: A @ v over the last axes
    spell_composite(np.matvec, ("matmul", "reshape"), lambda x1, x2, /: Composite(
        lambda a, v: N.getitem(N.matmul(a, N.expand_dims(v, -1)), (Ellipsis, 0)), (x1, x2)),
        "numpy.matvec")


def _vecmat_normalize(x1, x2, /):
    np.vecmat(np.broadcast_to(0.0, shape_of(x1)), np.broadcast_to(0.0, shape_of(x2)))   # NumPy's errors
    return Composite(_vecmat, (x1, x2))


def _vecmat(v, a):
    """conj(v) @ A over the last axes: the row vector times each matrix."""
    return N.getitem(N.matmul(N.expand_dims(N.conjugate(v), -2), a), (Ellipsis, 0, slice(None)))


if hasattr(np, "vecmat"):   # NumPy 2.2+ (it had no op: NoOpError under kiln.grad, a break compiled)
    spell_composite(np.vecmat, ("conjugate", "matmul", "getitem"), _vecmat_normalize, "numpy.vecmat")


def _chain_split(p: list) -> dict:
    """numpy.linalg's matrix-chain order (Cormen 15.2): split[i, j] is where the product
    of arrays i..j splits, on dims ``p`` (array k is p[k] x p[k + 1]); the same ties."""
    n = len(p) - 1
    cost, split = {(i, i): 0.0 for i in range(n)}, {}
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            cost[i, j] = np.inf
            for k in range(i, j):
                q = cost[i, k] + cost[k + 1, j] + float(p[i] * p[k + 1] * p[j + 1])
                if q < cost[i, j]:
                    cost[i, j], split[i, j] = q, k
    return split


def _multi_dot(*arrays):
    n = len(arrays)
    if n == 2:
        return N.dot(arrays[0], arrays[1])
    first, last = ndim_of(arrays[0]), ndim_of(arrays[-1])
    arrays = list(arrays)
    if first == 1:
        arrays[0] = N.reshape(arrays[0], (1, -1))
    if last == 1:
        arrays[-1] = N.reshape(arrays[-1], (-1, 1))
    for a in arrays:
        if ndim_of(a) != 2:
            raise np.linalg.LinAlgError(f"{ndim_of(a)}-dimensional array given. Array must be two-dimensional")
    shapes = [tuple(shape_of(a)) for a in arrays]
    if not all(type(d) is int for s in shapes for d in s):
        reject("numpy.linalg.multi_dot", "arrays", "<arrays of dynamic sizes>",
               "multiply them with @ in the order you want")
    if n == 3:   # NumPy's _multi_dot_three: the cheaper of (AB)C and A(BC)
        (a0, a1b0), (b1c0, c1) = shapes[0], shapes[2]
        split = {(0, 2): 1 if a0 * b1c0 * (a1b0 + c1) < a1b0 * c1 * (a0 + b1c0) else 0, (1, 2): 1, (0, 1): 0}
    else:
        split = _chain_split([s[0] for s in shapes] + [shapes[-1][1]])

    def product(i, j):
        if i == j:
            return arrays[i]
        k = split[i, j]
        return N.dot(product(i, k), product(k + 1, j))
    result = product(0, n - 1)
    if first == 1 and last == 1:
        return F.getitem(result, (0, 0))
    return N.ravel(result) if first == 1 or last == 1 else result


def _multi_dot_normalize(arrays, *, out=None):
    if out is not None:
        reject("numpy.linalg.multi_dot", "out", "<array>", "assign the result instead")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    return Composite(_multi_dot, tuple(a if hasattr(a, "shape") else np.asarray(a) for a in arrays))


spell_composite(np.linalg.multi_dot, ("dot", "reshape", "ravel", "getitem"), _multi_dot_normalize,
                "numpy.linalg.multi_dot")
