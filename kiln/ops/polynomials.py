"""Polynomials as coefficient arrays (highest power first): poly, polyadd, polysub,
polyder, polyint (composites: padding, arithmetic and ``convolve``, so they fuse and
differentiate), polymul, polydiv and polyfit (EXTERN ops calling NumPy's own algorithm).
``np.polyval`` is in kiln/ops/numeric.py.

``polymul`` trims its operands' leading zeros and ``polydiv``'s remainder drops leading
(near-)zero coefficients, so their lengths are known only after they ran: like the set
operations (kiln/ops/sets.py) each op reads both polynomials joined, ``split`` saying
where the first ends. ``np.roots`` (EXTERN: NumPy's companion-matrix eigenvalues) and
``np.poly`` of a square matrix or of complex roots (EXTERN: NumPy's own) give a real or a
complex result as the values say (all roots real; roots in conjugate pairs): they
speculate the dtype and check it (kiln/ops/speculation.py). ``roots``' length is known
only after it ran too (leading zero coefficients drop out).
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .meta import TensorMeta, ndim_of, reject, shape_of
from .numeric import _dtype, _is_array
from .registry import Bound, Category, Composite, F, N, declare, spell, spell_composite
from .speculation import checked, complex_of, speculate


def _1d(x: Any) -> Any:
    """np.atleast_1d, for coefficient sequences."""
    if not _is_array(x):
        x = np.atleast_1d(np.asarray(x))
    return N.reshape(x, (1,)) if ndim_of(x) == 0 else x


def _poly1d(name: str, *values: Any) -> None:
    for v in values:
        if isinstance(v, np.poly1d):
            reject(name, "a1", "a numpy.poly1d", "pass its coefficients (p.coeffs)")


# ---- polyadd, polysub, polymul --------------------------------------------------------------

def _padded(a, b):
    """a and b with the shorter one padded in front with zeros of its own dtype."""
    diff = shape_of(b)[0] - shape_of(a)[0]
    if diff > 0:
        a = N.concatenate((N.zeros(diff, _dtype(a)), a))
    elif diff < 0:
        b = N.concatenate((N.zeros(-diff, _dtype(b)), b))
    return a, b


def _polyadd(a1, a2, subtract):
    a, b = _padded(_1d(a1), _1d(a2))
    return N.subtract(a, b) if subtract else N.add(a, b)


def _binary_normalizer(name: str, subtract: bool):
    def normalize(a1, a2):
        _poly1d(name, a1, a2)
        return Composite(_polyadd, (a1, a2), {"subtract": subtract})
    return normalize


spell_composite(np.polyadd, ("concatenate", "zeros", "add"),
                _binary_normalizer("numpy.polyadd", False), "numpy.polyadd")
spell_composite(np.polysub, ("concatenate", "zeros", "subtract"),
                _binary_normalizer("numpy.polysub", True), "numpy.polysub")


# np.polymul trims leading zeros of both operands first (np.poly1d): its length is known
# only after it ran, like polydiv's remainder.

def _polymul_impl(ab, split):
    return np.polymul(ab[:split], ab[split:])


def _polymul_meta(ab, split):
    n = shape_of(ab)[0]
    return TensorMeta((max(n - 1, 1),), _dtype(ab))


polymul = declare(
    "polymul", Category.EXTERN, _polymul_impl, inputs=("ab",), params={"split": 1},
    meta=_polymul_meta, data_dependent=True, fresh_result=True,
    unbacked=lambda ab, split: (("polymul", 0, split), ("u",)),
    doc="numpy.polymul of ab[:split] and ab[split:] (leading zeros trimmed first, so the "
        "length is known only after it ran)")


def _polymul(a1, a2):
    a, b = _1d(a1), _1d(a2)
    return F.polymul(N.concatenate((a, b)), split=shape_of(a)[0])


def _coefficient_pair(name: str, param: str, a: Any, b: Any, kinds: str) -> tuple:
    """Two coefficient sequences as arrays of a dtype kind in ``kinds`` (others: rejected)."""
    _poly1d(name, a, b)
    a, b = (x if _is_array(x) else np.atleast_1d(np.asarray(x)) for x in (a, b))
    for x in (a, b):
        if _dtype(x).kind not in kinds:
            reject(name, param, f"<{_dtype(x)} array>", "it runs as Python")
    return a, b


def _polymul_normalize(a1, a2):
    return Composite(_polymul, _coefficient_pair("numpy.polymul", "a1", a1, a2, "biufc"))


spell_composite(np.polymul, ("concatenate", "polymul"), _polymul_normalize, "numpy.polymul")


# ---- polyder, polyint -----------------------------------------------------------------------

def _polyder(p, m):
    for _ in range(m):
        n = shape_of(p)[0] - 1
        p = N.multiply(N.getitem(p, (slice(None, -1),)), np.arange(n, 0, -1))
    return p


def _polyder_normalize(p, m=1):
    _poly1d("numpy.polyder", p)
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    if not _is_array(p):
        p = np.asarray(p)
    return Composite(_polyder, (p,), {"m": m})


spell_composite(np.polyder, ("getitem", "multiply"), _polyder_normalize, "numpy.polyder")


def _polyint(p, m, k):
    for i in range(m):
        n = shape_of(p)[0]
        p = N.concatenate((N.true_divide(p, np.arange(n, 0, -1)), k[i:i + 1]))
    return p


def _polyint_normalize(p, m=1, k=None):
    _poly1d("numpy.polyint", p)
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = np.zeros(m, float) if k is None else np.atleast_1d(np.asarray(k))
    if len(k) == 1 and m > 1:
        k = k[0] * np.ones(m, float)
    if len(k) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    if not _is_array(p):
        p = np.asarray(p)
    return Composite(_polyint, (p,), {"m": m, "k": k}) if m else Composite(lambda p: p, (p,))


spell_composite(np.polyint, ("true_divide", "concatenate"), _polyint_normalize, "numpy.polyint")


# ---- poly: the coefficients from the roots ------------------------------------------------------

def _poly(z, dt):
    z = _1d(z)
    if _dtype(z) != dt:
        z = N.method("astype", z, dt)
    a = N.ones((1,), dtype=dt)
    for i in range(shape_of(z)[0]):
        pair = N.concatenate((N.ones((1,), dtype=dt), N.negative(N.getitem(z, (slice(i, i + 1),)))))
        a = N.convolve(a, pair)
    return a


def _poly_of_meta(z, expect=None, site=""):
    # (without an expected dtype: NumPy's for real roots, of the input's precision)
    like = np.eye(2, dtype=_dtype(z)) if len(shape_of(z)) == 2 else np.zeros(1, _dtype(z))
    return TensorMeta((shape_of(z)[0] + 1,), np.dtype(expect) if expect else np.poly(like).dtype)


poly_of = declare(
    "poly_of", Category.EXTERN, lambda z, expect=None, site="": checked(np.poly(z), expect, site),
    inputs=("z",), params={"expect": None, "site": ""}, meta=_poly_of_meta, fresh_result=True,
    doc="numpy.poly of a square matrix (its characteristic polynomial) or of complex roots: "
        "real when the roots come in conjugate pairs (checked against the dtype expected)")


def _poly_normalize(seq_of_zeros):
    z = seq_of_zeros if _is_array(seq_of_zeros) else np.atleast_1d(np.asarray(seq_of_zeros))
    shape = tuple(shape_of(z)) or (1,)
    if _dtype(z).kind not in "biufc":
        reject("numpy.poly", "seq_of_zeros", f"<{_dtype(z)} array>", "pass numbers")
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0 or \
            len(shape) == 1 and _dtype(z).kind == "c":
        # real or complex as the values say (eigenvalues, roots in conjugate pairs)
        return Bound(poly_of, (z,), speculate("numpy.poly", _poly_of_meta(z).dtype, z, np.poly))
    if len(shape) != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if shape[0] == 0:
        return Composite(lambda z: 1.0, (z,))
    return Composite(_poly, (z,), {"dt": np.dtype(np.mintypecode(_dtype(z).char))})


spell_composite(np.poly, ("concatenate", "negative", "convolve", "poly_of"), _poly_normalize,
                "numpy.poly")


# ---- roots: the eigenvalues of the companion matrix ------------------------------------------

def _roots_meta(p, expect=None, site=""):
    n = shape_of(p)[0]
    return TensorMeta((max(n - 1, 0),), np.dtype(expect) if expect else
                      complex_of(np.roots(np.ones(2, _dtype(p))).dtype))


roots = declare(
    "roots", Category.EXTERN, lambda p, expect=None, site="": checked(np.roots(p), expect, site),
    inputs=("p",), params={"expect": None, "site": ""}, meta=_roots_meta, may_raise=True,
    fresh_result=True, data_dependent=True,
    unbacked=lambda p, expect, site: (("roots", 0), ("u",)),
    doc="numpy.roots: the roots of a polynomial (highest power first); real or complex as "
        "the values say (checked against the dtype expected), as many as its degree once "
        "leading zeros drop out")


def _roots_normalize(p):
    p = p if _is_array(p) else np.atleast_1d(np.asarray(p))
    if len(shape_of(p)) != 1:
        raise ValueError("Input must be a rank-1 array.")
    if _dtype(p).kind not in "biufc":
        reject("numpy.roots", "p", f"<{_dtype(p)} array>", "pass numbers")
    return Bound(roots, (p,), speculate("numpy.roots", _roots_meta(p).dtype, p, np.roots))


spell(np.roots, roots, _roots_normalize, "numpy.roots")


# ---- polyfit ---------------------------------------------------------------------------------

def _polyfit_impl(x, y, w=None, deg=1, rcond=None):
    return np.polyfit(x, y, deg, rcond=rcond, w=w)


def _polyfit_meta(x, y, w=None, deg=1, rcond=None):
    sx, sy = tuple(shape_of(x)), tuple(shape_of(y))
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if len(sx) != 1:
        raise TypeError("expected 1D vector for x")
    if sx[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if len(sy) < 1 or len(sy) > 2:
        raise TypeError("expected 1D or 2D array for y")
    if sx[0] != sy[0]:
        raise TypeError("expected x and y to have same length")
    if w is not None:
        if len(shape_of(w)) != 1:
            raise TypeError("expected a 1-d array for weights")
        if shape_of(w)[0] != sy[0]:
            raise TypeError("expected w and y to have the same length")
    # NumPy solves with np.vander(x), whose dtype is x's promoted with int64: float64 for
    # every real x (float32 and float16 included), whatever y's dtype
    dtype = np.result_type(np.promote_types(np.result_type(_dtype(x), 1.0), np.int64), _dtype(y), 1.0)
    return TensorMeta((deg + 1,) + sy[1:], dtype)


polyfit = declare("polyfit", Category.EXTERN, _polyfit_impl, inputs=("x", "y", "w"),
                  params={"deg": 1, "rcond": None}, meta=_polyfit_meta, fresh_result=True,
                  doc="numpy.polyfit's coefficients (full=False, cov=False)")


def _polyfit_normalize(x, y, deg, rcond=None, full=False, w=None, cov=False):
    if full or cov:
        reject("numpy.polyfit", "full" if full else "cov", True,
               "kiln compiles the coefficients only; call it without kiln for the diagnostics")
    if rcond is not None and not isinstance(rcond, (int, float)):
        reject("numpy.polyfit", "rcond", rcond, "pass rcond as a Python number")
    for v in (x, y, w):
        if v is not None and _dtype(v).kind == "c":
            reject("numpy.polyfit", "x", "<a complex array>", "it runs as Python")
    deg = operator.index(deg)
    return Composite(lambda x, y, w: F.polyfit(x, y, w, deg=deg, rcond=rcond), (x, y, w))


spell_composite(np.polyfit, ("polyfit",), _polyfit_normalize, "numpy.polyfit")


# ---- polydiv ---------------------------------------------------------------------------------

def _polydiv_q_impl(u, v):
    return np.polydiv(u, v)[0]


def _quotient_dtype(u, v):
    return np.result_type(_dtype(u), _dtype(v), 0.0)


polydiv_q = declare(
    "polydiv_q", Category.EXTERN, _polydiv_q_impl, inputs=("u", "v"), fresh_result=True,
    meta=lambda u, v: TensorMeta((max(shape_of(u)[0] - shape_of(v)[0] + 1, 1),), _quotient_dtype(u, v)),
    doc="numpy.polydiv's quotient")


def _polydiv_r_impl(uv, split):
    return np.polydiv(uv[:split], uv[split:])[1]


polydiv_r = declare(
    "polydiv_r", Category.EXTERN, _polydiv_r_impl, inputs=("uv",), params={"split": 1},
    meta=lambda uv, split: TensorMeta((split,), _quotient_dtype(uv, uv)),
    data_dependent=True, fresh_result=True,
    unbacked=lambda uv, split: (("polydiv_r", 0, split), ("u",)),
    doc="numpy.polydiv's remainder of uv[:split] by uv[split:]: its leading zeros dropped, "
        "so its length is known only after it ran")


def _polydiv(u, v):
    u, v = _1d(u), _1d(v)
    q = F.polydiv_q(u, v)
    r = F.polydiv_r(N.concatenate((u, v)), split=shape_of(u)[0])
    return q, r


def _polydiv_normalize(u, v):
    return Composite(_polydiv, _coefficient_pair("numpy.polydiv", "u", u, v, "biuf"))


spell_composite(np.polydiv, ("polydiv_q", "polydiv_r", "concatenate"), _polydiv_normalize,
                "numpy.polydiv")
