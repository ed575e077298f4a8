"""Linear algebra: matmul, dot, inner, outer, tensordot, einsum, inv, solve, cholesky
(norms: kiln/ops/norms.py).

These are EXTERN ops: every backend calls the NumPy/BLAS/LAPACK kernel rather than
generating a loop nest. Their shape rules are explicit, since running a BLAS kernel on
fake arrays would do all the arithmetic; their dtype rules run the kernel on a tiny
sample. When a rule finds the shapes incompatible it calls the kernel on zero-stride
fakes of the real shapes, which fails before computing anything, so the user sees
NumPy's own error message.

Every contraction (dot, inner, tensordot, einsum) is differentiated the same way: it is
an einsum with one letter per axis, and the cotangent of one operand is the einsum of
the output cotangent with the other operands. einsum spellings are normalized to that
explicit form (no ellipsis, no implicit output, letters relabeled in order of first use)
by the normalizer, so equal calls are equal op calls whatever way the user wrote them.
"""
from __future__ import annotations

import operator
import string
from typing import Any, Callable

import numpy as np

from .meta import TensorMeta, ndim_of, normalize_one_axis, reject, shape_of, to_fake
from .reduction import dtype_of, out_param, quiet, sample
from .pointwise import conj
from .registry import (_NO_DEFAULT, Bound, Category, F, declare, is_complex_like, is_float_like,
                       method_key, spell)

LETTERS = string.ascii_letters  # NumPy's einsum accepts exactly these 52 labels


def _numpy_error(kernel: Callable, *inputs: Any, message: str) -> None:
    """Raise NumPy's own error for inputs a rule found incompatible (fakes: no compute)."""
    kernel(*to_fake(inputs))
    raise ValueError(message)


def _dtype(kernel: Callable, *inputs: Any, **kwargs: Any) -> np.dtype:
    return np.asarray(quiet(kernel, *(sample(v) for v in inputs), **kwargs)).dtype


def _reshape(v: Any, shape: tuple) -> Any:
    return v if shape_of(v) == tuple(shape) else F.reshape(v, shape=tuple(shape))


def mT(v: Any) -> Any:
    """Swap the last two axes, written as shape.py's canonical 'transpose' (which is also
    what np.matrix_transpose and ndarray.mT normalize to)."""
    nd = len(shape_of(v))
    return F.transpose(v, axes=tuple(range(nd - 2)) + (nd - 1, nd - 2))


def symmetric_cotangent(g: Any, uplo: str) -> Any:
    """The cotangent of a matrix read as symmetric from one triangle (cholesky, eigh,
    eigvalsh, pinv(hermitian=True)), given ``g``, the one of the symmetric matrix S it
    implies: an entry of the read triangle off the diagonal sits in S twice (g[i, j] +
    g[j, i]), one on the diagonal once, and the other triangle is never read (zero)."""
    n = shape_of(g)[-1]
    dtype = dtype_of(g)
    below = np.tril(np.ones((n, n), dtype), -1) if uplo == "L" else np.triu(np.ones((n, n), dtype), 1)
    return F.add(F.multiply(F.add(g, mT(g)), below), F.multiply(g, np.eye(n, dtype=dtype)))


# ---- matmul ---------------------------------------------------------------------------------

def _matmul_meta(x: Any, y: Any) -> TensorMeta:
    xs, ys = shape_of(x), shape_of(y)
    try:
        if not xs or not ys or xs[-1] != (ys[-2] if len(ys) > 1 else ys[0]):
            raise ValueError
        batch = np.broadcast_shapes(xs[:-2], ys[:-2])
    except ValueError:
        _numpy_error(np.matmul, x, y, message=f"matmul: shapes {xs} and {ys} do not match")
    shape = batch + xs[-2:-1] * (len(xs) > 1) + ys[-1:] * (len(ys) > 1)
    return TensorMeta(shape, _dtype(np.matmul, x, y))


def _matmul_vjp(g, out, x, y):
    xs, ys = shape_of(x), shape_of(y)
    # Promote 1-D operands to matrices as matmul does, so one formula covers every case,
    # then drop the promoted axis again. Broadcast batch axes are summed by fit_grad.
    x2 = x if len(xs) > 1 else _reshape(x, (1,) + xs)
    y2 = y if len(ys) > 1 else _reshape(y, ys + (1,))
    gs = shape_of(g)
    batch = gs[:len(gs) - (len(xs) > 1) - (len(ys) > 1)]
    g2 = _reshape(g, batch + (xs[-2] if len(xs) > 1 else 1, ys[-1] if len(ys) > 1 else 1))
    gx = gy = None
    if is_float_like(x) or is_complex_like(x):   # (conj: the complex rule, Op.complex_grad)
        gx = F.matmul(g2, conj(mT(y2)))
        gx = _reshape(gx, shape_of(gx)[:-2] + xs[-1:]) if len(xs) == 1 else gx
    if is_float_like(y) or is_complex_like(y):
        gy = F.matmul(conj(mT(x2)), g2)
        gy = _reshape(gy, shape_of(gy)[:-1]) if len(ys) == 1 else gy
    return gx, gy


# (impls that are NumPy's own callables: a NumPy run calls them from the user's line, where
# they warn: "overflow encountered in matmul", ir/graph.py numpy_call_at)
matmul = declare("matmul", Category.EXTERN, np.matmul, inputs=("x", "y"),
                 meta=_matmul_meta, vjp=_matmul_vjp, complex_grad=True,
                 doc="numpy.matmul / @: matrix product with 1-D promotion and batch broadcasting")

_GUFUNC_DEFAULTS = {"casting": "same_kind", "order": "K", "dtype": None, "subok": True,
                    "signature": None, "axes": None, "axis": None}


def _matmul_normalizer(name: str, in_place: bool = False) -> Callable[..., Bound]:
    def normalize(x1, x2, /, out=None, **kwargs):
        for key, value in kwargs.items():
            if key not in _GUFUNC_DEFAULTS:
                raise TypeError(f"matmul() got an unexpected keyword argument '{key}'")
            if value is not _GUFUNC_DEFAULTS[key] and value != _GUFUNC_DEFAULTS[key] \
                    and not (key == "order" and value == "A"):
                reject(name, key, value,
                       "cast or transpose the operands first, or call it without kiln")
        return Bound(matmul, (x1, x2), {}, x1 if in_place else out_param(out))
    return normalize


spell(np.matmul, matmul, _matmul_normalizer("numpy.matmul"), "numpy.matmul")
spell(operator.matmul, matmul, _matmul_normalizer("operator.matmul"), "operator.matmul")
spell(operator.imatmul, matmul, _matmul_normalizer("operator.imatmul", in_place=True),
      "operator.imatmul")
spell(np.linalg.matmul, matmul, lambda x1, x2, /: Bound(matmul, (x1, x2), {}),
      "numpy.linalg.matmul")


# ---- contractions as einsum: letters, the shared vjp ---------------------------------------

def contraction_vjp(g: Any, operands: tuple, terms: list[str], out_term: str) -> tuple:
    """Cotangents of ``einsum(','.join(terms) + '->' + out_term, *operands)``."""
    grads = []
    for i, (x, term) in enumerate(zip(operands, terms)):
        if not is_float_like(x):
            grads.append(None)
            continue
        # A repeated index ('ii', a trace or diagonal) reads a diagonal of x: the gradient
        # of that diagonal, ``diag``'s, is put back onto it below.
        diag = "".join(dict.fromkeys(term))
        sizes = dict(zip(reversed(term), reversed(shape_of(x))))
        others = [(out_term, g)] + [(t, o) for j, (t, o) in enumerate(zip(terms, operands))
                                    if j != i]
        seen = set("".join(t for t, _ in others))
        kept = "".join(c for c in diag if c in seen)
        # Backward contractions may use BLAS (optimize=True): speed matters more there
        # than NumPy's unoptimized handling of inf * 0 in a forward einsum.
        grad = F.einsum(tuple(o for _, o in others),
                        subscripts=",".join(t for t, _ in others) + "->" + kept, optimize=True)
        # The gradient is constant along indices summed inside this operand alone, and
        # along size-1 axes of the others that this operand's axis was broadcast against:
        # spread it back there (fit_grad sums the opposite case, where x's axis is 1).
        dims = iter(shape_of(grad))
        ones = tuple(next(dims) if c in seen else 1 for c in diag)
        full = np.broadcast_shapes(ones, tuple(sizes[c] for c in diag))
        grad = _reshape(grad, ones)
        grad = grad if full == ones else F.broadcast_to(grad, shape=full)
        grads.append(grad if diag == term else
                     _onto_diagonal(grad, term, diag, "".join(terms) + out_term, dtype_of(x)))
    return tuple(grads)


def _onto_diagonal(grad: Any, term: str, diag: str, used: str, dtype: Any) -> Any:
    """``grad`` (labelled ``diag``, each label once) placed on the diagonal that ``term``
    (the same labels, some repeated) reads, zero elsewhere: each repeat of a label gets a
    fresh one tied to the first by an identity matrix (``ii`` <- ``i,ij->ij``)."""
    fresh = iter(c for c in LETTERS if c not in used)
    size = dict(zip(diag, shape_of(grad)))
    labels, eyes, met = [], [], set()
    for c in term:
        if c in met:
            labels.append(next(fresh))
            eyes.append((c + labels[-1], np.eye(size[c], dtype=dtype)))
        else:
            labels.append(c)
            met.add(c)
    subscripts = ",".join([diag] + [t for t, _ in eyes]) + "->" + "".join(labels)
    return F.einsum((grad,) + tuple(e for _, e in eyes), subscripts=subscripts, optimize=True)


def _dot_terms(na: int, nb: int) -> tuple[list[str], str]:
    a = LETTERS[:na]
    if nb == 1:
        return [a, a[-1]], a[:-1]
    rest = LETTERS[na:na + nb - 1]
    b = rest[:-1] + a[-1] + rest[-1]
    return [a, b], a[:-1] + rest


def _inner_terms(na: int, nb: int) -> tuple[list[str], str]:
    a, rest = LETTERS[:na], LETTERS[na:na + nb - 1]
    return [a, rest + a[-1]], a[:-1] + rest


def _scalar_product_vjp(g, a, b):
    # dot/inner with a 0-d operand is a plain product; fit_grad sums it to each shape.
    return F.multiply(g, b), F.multiply(g, a)


# ---- dot, inner, outer, tensordot ---------------------------------------------------------

def _dot_meta(a: Any, b: Any) -> TensorMeta:
    xs, ys = shape_of(a), shape_of(b)
    if not xs or not ys:
        shape = xs or ys
    elif xs[-1] != ys[-2 if len(ys) > 1 else 0]:
        _numpy_error(np.dot, a, b, message=f"shapes {xs} and {ys} not aligned")
    else:
        shape = xs[:-1] + ys[:-2] + ys[-1:] * (len(ys) > 1)
    return TensorMeta(shape, _dtype(np.dot, a, b))


def _product_vjp(terms_of):
    """dot and inner differ only in which axes they contract (``terms_of(ndim_a, ndim_b)``)."""
    def vjp(g, out, a, b):
        na, nb = ndim_of(a), ndim_of(b)
        if na == 0 or nb == 0:
            return _scalar_product_vjp(g, a, b)
        terms, out_term = terms_of(na, nb)
        return contraction_vjp(g, (a, b), terms, out_term)
    return vjp


_dot_vjp = _product_vjp(_dot_terms)


dot = declare("dot", Category.EXTERN, np.dot, inputs=("a", "b"),
              meta=_dot_meta, vjp=_dot_vjp, out_c_order=True,
              doc="numpy.dot: product with a scalar, or a sum over a's last and b's "
                  "second-to-last axis (b's only axis if 1-D)")


def _dot_normalize(a, b, out=None):
    return Bound(dot, (a, b), {}, out)


spell(np.dot, dot, _dot_normalize, "numpy.dot")
spell(method_key("dot"), dot, _dot_normalize, "ndarray.dot")


def _inner_meta(a: Any, b: Any) -> TensorMeta:
    xs, ys = shape_of(a), shape_of(b)
    if not xs or not ys:
        shape = xs or ys
    elif xs[-1] != ys[-1]:
        _numpy_error(np.inner, a, b, message=f"shapes {xs} and {ys} not aligned")
    else:
        shape = xs[:-1] + ys[:-1]
    return TensorMeta(shape, _dtype(np.inner, a, b))


_inner_vjp = _product_vjp(_inner_terms)


inner = declare("inner", Category.EXTERN, np.inner, inputs=("a", "b"),
                meta=_inner_meta, vjp=_inner_vjp,
                doc="numpy.inner: sum over the last axis of both operands")
spell(np.inner, inner, lambda a, b, /: Bound(inner, (a, b), {}), "numpy.inner")


def _size(v: Any) -> int:
    n = 1
    for d in shape_of(v):
        n *= d
    return n


def _outer_meta(a: Any, b: Any) -> TensorMeta:
    return TensorMeta((_size(a), _size(b)), _dtype(np.outer, a, b))


def _outer_vjp(g, out, a, b):
    # outer flattens both operands: out[i, j] = a.flat[i] * b.flat[j].
    ga = gb = None
    if is_float_like(a):
        ga = _reshape(F.matmul(g, _reshape(b, (_size(b),))), shape_of(a))
    if is_float_like(b):
        gb = _reshape(F.matmul(_reshape(a, (_size(a),)), g), shape_of(b))
    return ga, gb


def _outer_decomposition(a, b):
    """For the compilers: np.outer is ``multiply(a.ravel()[:, None], b.ravel()[None, :])``
    (its own definition), so it fuses with what consumes it instead of a BLAS-free extern."""
    return F.multiply(_reshape(a, (_size(a), 1)), _reshape(b, (1, _size(b))))


outer = declare("outer", Category.EXTERN, lambda a, b: np.outer(a, b), inputs=("a", "b"),
                meta=_outer_meta, vjp=_outer_vjp, lowering={"decompose": _outer_decomposition},
                doc="numpy.outer: every product of a.flat[i] and b.flat[j]")


def _linalg_outer_normalize(x1, x2, /):
    np.linalg.outer(sample(x1), sample(x2))  # NumPy's own error for non-1-D operands
    return Bound(outer, (x1, x2), {})


spell(np.outer, outer, lambda a, b, out=None: Bound(outer, (a, b), {}, out), "numpy.outer")
spell(np.linalg.outer, outer, _linalg_outer_normalize, "numpy.linalg.outer")


def _tensordot_terms(na: int, nb: int, axes: tuple) -> tuple[list[str], str]:
    a = LETTERS[:na]
    fresh = iter(LETTERS[na:])
    b = "".join(a[axes[0][axes[1].index(k)]] if k in axes[1] else next(fresh) for k in range(nb))
    out = "".join(c for k, c in enumerate(a) if k not in axes[0])
    return [a, b], out + "".join(c for k, c in enumerate(b) if k not in axes[1])


def _tensordot_meta(a: Any, b: Any, axes: tuple) -> TensorMeta:
    xs, ys = shape_of(a), shape_of(b)
    if any(xs[i] != ys[j] for i, j in zip(*axes)):
        _numpy_error(lambda p, q: np.tensordot(p, q, axes), a, b, message="shape-mismatch for sum")
    shape = tuple(d for i, d in enumerate(xs) if i not in axes[0]) + \
        tuple(d for j, d in enumerate(ys) if j not in axes[1])
    return TensorMeta(shape, _dtype(np.tensordot, a, b, axes=axes))


def _tensordot_vjp(g, out, a, b, axes):
    terms, out_term = _tensordot_terms(ndim_of(a), ndim_of(b), axes)
    return contraction_vjp(g, (a, b), terms, out_term)


tensordot = declare("tensordot", Category.EXTERN, lambda a, b, axes: np.tensordot(a, b, axes),
                    inputs=("a", "b"), params={"axes": _NO_DEFAULT}, meta=_tensordot_meta,
                    vjp=_tensordot_vjp,
                    doc="numpy.tensordot; axes: a pair of tuples of non-negative ints")


def _tensordot_normalize(a, b, axes=2):
    na, nb = ndim_of(a), ndim_of(b)
    np.tensordot(np.zeros((1,) * na), np.zeros((1,) * nb), axes)  # NumPy's errors for bad axes
    if isinstance(axes, (int, np.integer)):
        pair = (tuple(range(na - axes, na)), tuple(range(axes)))
    else:
        pair = tuple(tuple(ax) if isinstance(ax, (tuple, list)) else (ax,) for ax in axes)
    pair = (tuple(normalize_one_axis(i, na) for i in pair[0]),
            tuple(normalize_one_axis(j, nb) for j in pair[1]))
    return Bound(tensordot, (a, b), {"axes": pair})


spell(np.tensordot, tensordot, _tensordot_normalize, "numpy.tensordot")
spell(np.linalg.tensordot, tensordot,
      lambda x1, x2, /, *, axes=2: _tensordot_normalize(x1, x2, axes), "numpy.linalg.tensordot")


# ---- einsum -------------------------------------------------------------------------------

def explicit_subscripts(subscripts: str, ndims: list[int]) -> str:
    """``subscripts`` (implicit output, ellipses, spaces) as 'ab,bc->ac' with one letter
    per axis. Call only once NumPy has accepted the subscripts for these ranks."""
    s = subscripts.replace(" ", "")
    lhs, arrow, rhs = s.partition("->")
    terms = lhs.split(",")
    free = [c for c in LETTERS if c not in s]
    width = max((nd - len(t) + 3 for t, nd in zip(terms, ndims) if "..." in t), default=0)
    if width > len(free):
        raise ValueError("einsum: too many axes to label (kiln uses one letter per axis)")
    ell = "".join(free[:width])
    # Ellipsis axes broadcast right-aligned, like NumPy's.
    terms_out = [t.replace("...", ell[width - (nd - len(t) + 3):]) if "..." in t else t
                 for t, nd in zip(terms, ndims)]
    if arrow:
        out = rhs.replace("...", ell)
    else:
        # Implicit output: the ellipsis axes, then the labels used once, in ASCII order.
        joined = "".join(terms).replace(".", "")
        out = ell + "".join(sorted(c for c in set(joined) if joined.count(c) == 1))
    explicit = ",".join(terms_out) + "->" + out
    # Relabel in order of first use, so 'ij,jk' and 'ab,bc->ac' are the same parameter.
    relabel: dict[str, str] = {}
    for c in explicit:
        if c in LETTERS and c not in relabel:
            relabel[c] = LETTERS[len(relabel)]
    return "".join(relabel.get(c, c) for c in explicit)


def _einsum_impl(operands: tuple, subscripts: str, optimize: bool = False) -> Any:
    # optimize=True lets NumPy hand contractions to BLAS (tensordot); like NumPy, the
    # default is the plain loop, whose NaN/inf results and errors users see in NumPy.
    return np.einsum(subscripts, *operands, optimize=optimize if len(operands) > 1 else False)


def _einsum_meta(operands: tuple, subscripts: str, optimize: bool = False) -> TensorMeta:
    lhs, _, out = subscripts.partition("->")
    terms = lhs.split(",")
    sizes: dict[str, int] = {}
    ok = len(terms) == len(operands)
    for term, value in zip(terms, operands):
        shape = shape_of(value)
        ok = ok and len(shape) == len(term)
        for c, d in zip(term, shape):
            have = sizes.get(c, 1)
            ok = ok and (have == d or have == 1 or d == 1)
            sizes[c] = d if have == 1 else have
    if not ok:
        _numpy_error(lambda *ops: np.einsum(subscripts, *ops), *operands,
                     message=f"einsum: operands do not match '{subscripts}'")
    return TensorMeta(tuple(sizes[c] for c in out),
                      _dtype(lambda *ops: np.einsum(subscripts, *ops), *operands))


def _einsum_vjp(g, out, operands, subscripts, optimize=False):
    lhs, _, out_term = subscripts.partition("->")
    return (contraction_vjp(g, tuple(operands), lhs.split(","), out_term),)


def _einsum_view(operands: tuple, subscripts: str, optimize: bool = False) -> bool:
    """NumPy's einsum returns a view of a single operand when it sums no axis
    ('ij->ji', 'ii->i')."""
    lhs, _, out = subscripts.partition("->")
    return len(operands) == 1 and set(lhs.replace(",", "")) <= set(out)


einsum = declare("einsum", Category.EXTERN, _einsum_impl, inputs=("*operands",),
                 params={"subscripts": _NO_DEFAULT, "optimize": False}, meta=_einsum_meta,
                 vjp=_einsum_vjp, opaque_view=_einsum_view,
                 doc="numpy.einsum; subscripts always explicit ('ij,jk->ik'), one letter per axis")


def _einsum_normalize(*operands, out=None, optimize=False, dtype=None, order="K", casting="safe"):
    if not operands or not isinstance(operands[0], str):
        reject("numpy.einsum", "operands", "(array, sublist, ...)",
               "write the subscripts as a string: np.einsum('ij,jk->ik', a, b)")
    subscripts, arrays = operands[0], operands[1:]
    if dtype is not None:
        reject("numpy.einsum", "dtype", dtype, "cast the operands with .astype(...) first")
    if casting != "safe":
        reject("numpy.einsum", "casting", casting, "cast the operands with .astype(...) first")
    if order not in ("K", "A", "C"):
        reject("numpy.einsum", "order", order, "drop order= (kiln arrays are C-ordered)")
    ndims = [ndim_of(a) for a in arrays]
    np.einsum(subscripts, *(np.zeros((1,) * nd) for nd in ndims))  # NumPy's errors, if any
    return Bound(einsum, (tuple(arrays),), {"subscripts": explicit_subscripts(subscripts, ndims),
                                           "optimize": _einsum_optimize(subscripts, arrays, optimize)}, out)


def _einsum_optimize(subscripts: str, arrays: tuple, optimize: Any) -> Any:
    """optimize= as NumPy takes it (a contraction order changes the rounding): False, or
    what einsum_path accepts, its errors (an invalid explicit path: RuntimeError) raised
    here on stand-ins of the operands' shapes; an explicit path becomes a tuple."""
    if optimize is False:
        return False
    np.einsum_path(subscripts, *(np.broadcast_to(np.zeros((), dtype_of(a)), tuple(shape_of(a)))
                                 for a in arrays), optimize=optimize)
    if isinstance(optimize, (list, tuple)):
        return tuple(tuple(p) if isinstance(p, (list, tuple)) else p for p in optimize)
    return optimize


spell(np.einsum, einsum, _einsum_normalize, "numpy.einsum")


# ---- inv, solve, cholesky -------------------------------------------------------------------

def _square_meta(kernel: Callable, a: Any) -> tuple:
    s = shape_of(a)
    if len(s) < 2 or s[-1] != s[-2]:
        _numpy_error(kernel, a, message=f"expected a square matrix (stack), got shape {s}")
    return s


def _inv_meta(a: Any) -> TensorMeta:
    s = _square_meta(np.linalg.inv, a)
    return TensorMeta(s, np.linalg.inv(np.ones((1, 1), dtype_of(a))).dtype)


inv = declare("inv", Category.EXTERN, lambda a: np.linalg.inv(a), inputs=("a",),
              meta=_inv_meta,
              # d(A^-1) = -A^-1 dA A^-1, so the cotangent is -A^-T g A^-T.
              vjp=lambda g, out, a: (F.negative(F.matmul(F.matmul(mT(out), g), mT(out))),),
              doc="numpy.linalg.inv (stacks of square matrices)", may_raise=True)
spell(np.linalg.inv, inv, lambda a: Bound(inv, (a,), {}), "numpy.linalg.inv")


def _solve_meta(a: Any, b: Any) -> TensorMeta:
    s, bs = shape_of(a), shape_of(b)
    try:
        if len(s) < 2 or s[-1] != s[-2] or not bs:
            raise ValueError
        if len(bs) == 1:  # NumPy 2: b is a vector only when it is 1-D
            if bs[0] != s[-1]:
                raise ValueError
            shape = s[:-1]
        else:
            if bs[-2] != s[-1]:
                raise ValueError
            shape = np.broadcast_shapes(s[:-2], bs[:-2]) + bs[-2:]
    except ValueError:
        _numpy_error(np.linalg.solve, a, b, message=f"solve: shapes {s} and {bs} do not match")
    return TensorMeta(shape, np.linalg.solve(np.ones((1, 1), dtype_of(a)),
                                             np.ones((1,), dtype_of(b))).dtype)


def _solve_vjp(g, out, a, b):
    # x = A^-1 b: gb = A^-T g, gA = -gb x^T. A 1-D b is a column here, so that batched A
    # with a vector b stays a stack of matrix solves.
    vec = ndim_of(b) == 1
    gs = shape_of(g)
    g2 = _reshape(g, gs + (1,)) if vec else g
    x2 = _reshape(out, shape_of(out) + (1,)) if vec else out
    gb2 = F.solve(mT(a), g2)
    ga = F.negative(F.matmul(gb2, mT(x2))) if is_float_like(a) else None
    return ga, (_reshape(gb2, gs) if vec else gb2)


solve = declare("solve", Category.EXTERN, lambda a, b: np.linalg.solve(a, b), inputs=("a", "b"),
                meta=_solve_meta, vjp=_solve_vjp,
                doc="numpy.linalg.solve(a, b): b is a vector when 1-D, else a stack of matrices",
                may_raise=True)
spell(np.linalg.solve, solve, lambda a, b: Bound(solve, (a, b), {}), "numpy.linalg.solve")


def _cholesky_meta(a: Any, upper: bool = False) -> TensorMeta:
    s = _square_meta(np.linalg.cholesky, a)
    return TensorMeta(s, np.linalg.cholesky(np.ones((1, 1), dtype_of(a))).dtype)


def _cholesky_vjp(g, out, a, upper):
    """Murray 2016 (PyTorch's formula): with L the lower factor,
    gA = L^-T Phi(L^T gL) L^-1 where Phi keeps the lower triangle and halves the diagonal,
    symmetrized: the gradient for symmetric perturbations (PyTorch's and JAX's result).
    NumPy reads one triangle of A (the lower; the upper for upper=True), so that is
    folded onto the triangle read, as for eigh: the derivative of NumPy's function,
    which agrees with finite differences of single entries."""
    L, gL = (mT(out), mT(g)) if upper else (out, g)  # A = U^T U: U^T is the lower factor
    P = F.tril(F.matmul(mT(L), gL), k=0)
    P = F.multiply(F.add(P, mT(F.tril(P, k=-1))), 0.5)
    X = F.solve(mT(L), P)  # L^-T P
    sym = mT(F.solve(mT(L), mT(X)))  # X L^-1 = (L^-T X^T)^T
    return (symmetric_cotangent(sym, "U" if upper else "L"),)


cholesky = declare(
    "cholesky", Category.EXTERN, lambda a, upper=False: np.linalg.cholesky(a, upper=upper),
    inputs=("a",), params={"upper": False}, meta=_cholesky_meta, vjp=_cholesky_vjp,
    doc="numpy.linalg.cholesky (lower factor; upper=True for the upper one)", may_raise=True)
spell(np.linalg.cholesky, cholesky,
      lambda a, /, *, upper=False: Bound(cholesky, (a,), {"upper": bool(upper)}),
      "numpy.linalg.cholesky")


# Their results are new arrays, never views of an operand (einsum's may be one).
for _op in (matmul, dot, inner, outer, tensordot, inv, solve, cholesky):
    _op.fresh_result = True
# NumPy's kernels writing straight into a C-contiguous result array of the right dtype
# (dot's out= takes no other; matmul's writes through the same BLAS call).
matmul.out_impl = lambda x, y, out: np.matmul(x, y, out=out)
dot.out_impl = lambda a, b, out: np.dot(a, b, out=out)
