"""Data-dependent sizes: argwhere, unique, bincount, and the spellings built on them.

Each op's output has a dim whose size is known only once the op ran (the number of
nonzero values, of distinct values, the largest count index). Such an op is still a
graph op: it runs as an extern call (NumPy's kernel) and its ``unbacked`` rule tells
capture and lowering which dims are such sizes and what they count, so the code after
it (elementwise ops, reductions, gathers over the result) stays in the same graph and
fuses, with the size a symbol the wrapper reads from the op's result
(kiln/lowering/sizes.py, "unbacked"). The shape rule gives an example ("hint") size:
the largest the result can be.

``np.nonzero``, one-argument ``np.where``, ``np.flatnonzero`` and ``np.compress`` are
composites of ``argwhere`` and ``x[mask]`` (``getitem_mask``, kiln/ops/indexing.py).
``np.nonzero``'s arrays are columns of one ``(n, ndim)`` result, as in NumPy.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .meta import (TensorMeta, columns_array, namespace, ndim_of, normalize_one_axis, reject, shape_of,
                   to_fake)
from .numeric import _is_array, array_like
from .registry import Category, Composite, F, N, declare, method_key, spell, spell_composite, Bound
from .speculation import checked, speculate

INTP = np.dtype(np.intp)


def _size(shape: tuple) -> int:
    out = 1
    for n in shape:
        out *= n
    return out


# ---- argwhere: the positions of the nonzero values --------------------------------------------

def _argwhere_meta(x: Any, order: str = "F") -> TensorMeta:
    shape = shape_of(x)
    return TensorMeta((_size(shape), len(shape)), INTP)


def _argwhere_unbacked(x: Any, order: str = "F") -> Any:
    if len(shape_of(x)) == 0:
        return None  # NumPy's 0-d rules (a (1, 0) or (0, 0) result): left to Python
    return ("nonzero", 0), ("u", None)


def _argwhere_impl(x: Any, order: str = "F") -> Any:
    # np.argwhere's result is Fortran-ordered (the transpose of np.nonzero's arrays);
    # order="C": np.nonzero's own (n, ndim) array, whose columns it returns
    xp = namespace(x)
    if order == "C" and xp is np and np.ndim(x):
        # np.nonzero's arrays are the columns of one C-ordered (n, ndim) array: that array,
        # not np.argwhere's copy of them copied again into C order (~1.5 us on 15 values)
        base = columns_array(np.nonzero(x))
        if base is not None:
            return base
    found = xp.argwhere(x)
    return found if order == "F" else xp.ascontiguousarray(found)


_argwhere_impl.layout_of_c_inputs = True   # Fortran-ordered from C-ordered x (result_layout)


argwhere = declare("argwhere", Category.EXTERN, _argwhere_impl, inputs=("x",), params={"order": "F"},
                   meta=_argwhere_meta, data_dependent=True, unbacked=_argwhere_unbacked,
                   fresh_result=True,
                   doc="numpy.argwhere: (n, ndim) positions of the nonzero values; n is "
                       "known only after it ran")
spell(np.argwhere, argwhere, lambda a: Bound(argwhere, (a,), {}), "numpy.argwhere")


def _nonzero(a):
    nd = ndim_of(a)
    if nd == 0:     # NumPy's own error, in its own words (NumPy 2.4 dropped a sentence)
        np.zeros(()).nonzero()
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d("
                         "scalar).nonzero() instead.")
    at = F.argwhere(a, order="C")   # NumPy's arrays: the columns of one C-ordered (n, ndim) array
    return tuple(N.getitem(at, (slice(None), i)) for i in range(nd))


def _nonzero_normalize(a):
    return Composite(_nonzero, (a,))


spell_composite(np.nonzero, ("argwhere", "getitem"), _nonzero_normalize, "numpy.nonzero")
spell_composite(method_key("nonzero"), ("argwhere", "getitem"), _nonzero_normalize,
                "ndarray.nonzero")


def _flatnonzero(a):
    flat = a if ndim_of(a) == 1 else N.ravel(a)   # 1-D: the count np.nonzero(a) shares
    return N.getitem(F.argwhere(flat), (slice(None), 0))


spell_composite(np.flatnonzero, ("argwhere", "ravel", "getitem"),
                lambda a: Composite(_flatnonzero, (a,)), "numpy.flatnonzero")


def _compress_normalize(condition, a, axis=None, out=None):
    if out is not None:
        reject("numpy.compress", "out", out, "assign the result instead")
    if ndim_of(condition) != 1:
        raise ValueError("condition must be a 1-d array")
    n = _size(shape_of(a)) if axis is None else shape_of(a)[operator.index(axis)]
    if shape_of(condition)[0] != n:
        # NumPy takes a prefix of a shorter condition and checks a longer one's extra
        # values: both read the data
        reject("numpy.compress", "condition", f"of length {shape_of(condition)[0]}",
               f"kiln compiles a condition of the selected axis' length ({n}) only")
    return Composite(_compress_cond, (condition, a), {"axis": axis})


def _compress_cond(condition, a, axis):
    mask = N.not_equal(condition, 0) if np.dtype(condition.dtype) != np.bool_ else condition
    if axis is None:
        return N.getitem(N.ravel(a), mask)
    nd = ndim_of(a)
    axis = operator.index(axis) % nd
    if axis == 0:
        return N.getitem(a, mask)
    return N.moveaxis(N.getitem(N.moveaxis(a, axis, 0), mask), 0, axis)


spell_composite(np.compress, ("not_equal", "ravel", "getitem_mask", "moveaxis"),
                _compress_normalize, "numpy.compress")


# ---- unique ---------------------------------------------------------------------------------

def _unique_meta(x: Any, values: bool = False, like: str = "") -> TensorMeta:
    return TensorMeta((_size(shape_of(x)),), np.dtype(x.dtype))


def _unique_unbacked(x: Any, values: bool = False, like: str = "") -> Any:
    return ("unique_values" if values else "unique", 0), ("u",)


def _unique_impl(x, values=False, like=""):
    # np.unique_values is unique(equal_nan=False, sorted=False): every NaN kept, and in
    # NumPy >= 2.3 the order of its hash table, which NumPy leaves unspecified
    if values:
        return np.unique_values(x)
    out = np.unique(x)
    if like and out.dtype.kind == "f" and _both_zeros(x):
        # np.unique's zero is the first of its run of zeros (-0.0 == 0.0), and which comes
        # first depends on how the call sorts: its hash table alone, an in-place sort with
        # return_counts, an argsort with return_inverse; only that call says which
        out = np.unique(x, return_inverse=like == "inverse", return_counts=like == "counts")[0]
    return out


def _both_zeros(x) -> bool:
    zeros = np.signbit(x[x == 0])
    return bool(zeros.any()) and not zeros.all()


unique = declare("unique", Category.EXTERN, _unique_impl, inputs=("x",),
                 params={"values": False, "like": ""},
                 meta=_unique_meta, data_dependent=True, unbacked=_unique_unbacked,
                 fresh_result=True,
                 doc="numpy.unique(x): the sorted distinct values of x, flattened; their "
                     "number is known only after it ran (values=True: np.unique_values; "
                     "like='inverse' or 'counts': the values of np.unique(x, "
                     "return_inverse=True) or (x, return_counts=True), whose zero, -0.0 "
                     "or 0.0 where x holds both, is that call's sort's)")


def _unique_counts_impl(x):
    return np.unique(x, return_counts=True)[1]


def _unique_index_impl(x):
    return np.unique(x, return_index=True)[1]


unique_counts = declare("unique_counts", Category.EXTERN, _unique_counts_impl, inputs=("x",),
                        meta=lambda x: TensorMeta((_size(shape_of(x)),), INTP),
                        data_dependent=True, unbacked=_unique_unbacked, fresh_result=True,
                        doc="np.unique(x, return_counts=True)[1]")
unique_index = declare("unique_index", Category.EXTERN, _unique_index_impl, inputs=("x",),
                       meta=lambda x: TensorMeta((_size(shape_of(x)),), INTP),
                       data_dependent=True, unbacked=_unique_unbacked, fresh_result=True,
                       doc="np.unique(x, return_index=True)[1]")


def _unique_inverse_impl(x):
    return np.unique(x, return_inverse=True)[1]


unique_inverse = declare("unique_inverse", Category.EXTERN, _unique_inverse_impl, inputs=("x",),
                         meta=lambda x: TensorMeta(shape_of(x), INTP), fresh_result=True,
                         doc="np.unique(x, return_inverse=True)[1]: where each value of x "
                             "sits among the distinct values (x's shape, as NumPy 2 gives)")


def _unique_counts_of_impl(x, inverse):
    # every distinct value occurs, so the largest position is the number of them less 1
    return np.bincount(inverse.ravel())


unique_counts_of = declare("unique_counts_of", Category.EXTERN, _unique_counts_of_impl,
                           inputs=("x", "inverse"),
                           meta=lambda x, inverse: TensorMeta((_size(shape_of(x)),), INTP),
                           data_dependent=True, unbacked=lambda x, inverse: (("unique", 0), ("u",)),
                           fresh_result=True,
                           doc="np.unique(x, return_counts=True)[1] from the inverse "
                               "(np.bincount of it), as long as np.unique(x)")


def _unique(ar, return_index, return_inverse, return_counts):
    ar = array_like(ar)
    if return_index:
        # NumPy's values there are the stable sort's first of each run, ar[index]: one sort
        # and a gather, not np.unique's sort again (nelson_aalen's unique(t,
        # return_index=True, return_counts=True) of 8 floats: 24 us against NumPy's 20)
        index = F.unique_index(ar)
        values = N.getitem(N.ravel(ar), index)
        out = [values, index]
    else:
        values = F.unique(ar, like="inverse" if return_inverse else "counts" if return_counts else "")
        out = [values]
    if np.dtype(ar.dtype).kind not in "biuf":
        inverse = F.unique_inverse(ar) if return_inverse else None
        counts = F.unique_counts(ar) if return_counts else None
    elif return_inverse or return_counts:
        # Where each value sits among the sorted distinct values is its insertion point
        # (NaN: the one NaN kept, last; -0.0 finds 0.0), and the counts that position's
        # bincount: two cheap NumPy calls, not np.unique's argsort and scatter again
        # (np.unique(x, return_inverse=True, return_counts=True) of 70 ints ~55 us,
        # np.unique(x) ~9, searchsorted ~1, bincount ~0.4)
        inverse = F.searchsorted(values, ar)
        counts = F.unique_counts_of(ar, inverse) if return_counts else None
    if return_inverse:
        out.append(inverse)
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def _unique_normalize(ar, return_index=False, return_inverse=False, return_counts=False,
                      axis=None, *, equal_nan=True, sorted=True):
    if axis is not None:
        reject("numpy.unique", "axis", axis, "call np.unique on the flattened array, or "
               "without kiln")
    if not equal_nan:
        reject("numpy.unique", "equal_nan", equal_nan, "kiln uses NumPy's default (True)")
    if _is_array(ar) and np.dtype(ar.dtype).kind == "c":
        reject("numpy.unique", "ar", "a complex array", "sort it by hand")
    # (one NumPy call computes them all; compiled, the values are np.unique(x)'s, the
    # inverse and counts computed from them: _unique)
    return Composite(_unique, (ar,), {"return_index": bool(return_index),
                                      "return_inverse": bool(return_inverse),
                                      "return_counts": bool(return_counts)}, one_call=True,
                     relative_sizes=True)


spell_composite(np.unique, ("unique", "unique_index", "unique_inverse", "unique_counts",
                            "searchsorted", "unique_counts_of", "ravel", "index"),
                _unique_normalize, "numpy.unique")
spell_composite(np.unique_values, ("unique",),
                lambda x: Composite(lambda a: F.unique(a, values=True), (x,)), "numpy.unique_values")


# ---- bincount ---------------------------------------------------------------------------------

def _bincount_impl(x, weights=None, minlength=0, capped=False, expect=None, site=""):
    return checked(np.bincount(x, weights, minlength), expect, site)


def _bincount_capped(x, minlength: int) -> int | None:
    """The result's length when x's dtype or origin decides it: the counts of a bool or
    small-int array with ``minlength`` past its largest value (``np.bincount(img8.ravel(),
    minlength=256)``, or of argmin's indices over k values with ``minlength=k``) have
    exactly ``minlength`` entries, known before the op runs (negative values raise in
    NumPy's kernel). None: known only after it ran."""
    dtype = np.dtype(getattr(x, "dtype", INTP))
    top = 1 if dtype.kind == "b" else np.iinfo(dtype).max if dtype.kind in "iu" else None
    return minlength if top is not None and minlength > top else None


def _bincount_meta(x, weights=None, minlength=0, capped=False, expect=None, site=""):
    # NumPy's own errors (depth, dtype, lengths) on zero fakes, which cost no compute
    np.bincount(*to_fake((x, weights)), minlength=minlength)
    dtype = _bincount_dtype(x, weights, expect)
    if capped:
        return TensorMeta((minlength,), dtype)
    return TensorMeta((_bincount_capped(x, minlength) or max(minlength, 2),), dtype)


def _bincount_dtype(x, weights, expect) -> np.dtype:
    """Weight sums are float64, but NumPy answers an empty x before it reads the weights:
    zeros of intp (``np.bincount(keys[mask], weights=w[mask])`` with no key selected).
    So: intp without weights or where x's length is a static 0, the dtype speculated
    where that length is known only after an op ran (``expect``), else float64."""
    if weights is None:
        return INTP
    n = shape_of(x)[0] if len(shape_of(x)) == 1 else None
    if isinstance(n, int) and n == 0:
        return INTP
    return np.dtype(expect) if expect else np.dtype(np.float64)


def _bincount_vjp(g, out, x, weights, minlength, capped=False, expect=None, site=""):
    # d out[j] / d weights[i] = [x[i] == j]: the cotangent read back at each x
    return None, (F.index(g, (x,)) if weights is not None else None)


bincount = declare("bincount", Category.EXTERN, _bincount_impl, inputs=("x", "weights"),
                   # capped: x's values are known below minlength (argmin's indices over
                   # minlength values, Op.values_below), so its length is minlength
                   params={"minlength": 0, "capped": False, "expect": None, "site": ""},
                   meta=_bincount_meta,
                   vjp=_bincount_vjp, data_dependent=True, may_raise=True, fresh_result=True,
                   unbacked=lambda x, weights, minlength, capped=False, expect=None, site="": (
                       ("bincount", 0, minlength),
                       (None,) if capped or _bincount_capped(x, minlength) else ("u",)),
                   doc="numpy.bincount: counts (or weight sums) of each value of a 1-D "
                       "non-negative int array; its length max(x) + 1 is known only after "
                       "it ran (unless x's dtype caps it below minlength)")


def _bincount_normalize(x, /, weights=None, minlength=0):
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if weights is not None and not hasattr(weights, "dtype"):
        weights = np.asarray(weights, np.float64)
    below = getattr(x, "below", None)   # (an ArrayArg's, where capture knows it)
    # weight sums of an x whose length only the data give (a selection's, possibly 0):
    # the dtype is speculated (_bincount_dtype); an argument's length is static or >= 2
    spec = (speculate("numpy.bincount", np.float64)
            if weights is not None and any(getattr(x, "data_sized", ())) else {})
    return Bound(bincount, (x, weights), {"minlength": minlength,
                                          "capped": below is not None and below <= minlength, **spec})


spell(np.bincount, bincount, _bincount_normalize, "numpy.bincount")


def _extract_normalize(condition, arr):
    if tuple(shape_of(condition)) != tuple(shape_of(arr)):
        reject("numpy.extract", "condition", "<a condition of another shape>",
               "kiln compiles a condition of the array's shape only")
    return Composite(lambda c, a: _compress_cond(N.ravel(c), a, None), (condition, arr))


# np.extract(c, a) is np.compress(np.ravel(c), np.ravel(a))
spell_composite(np.extract, ("not_equal", "ravel", "getitem_mask"), _extract_normalize,
                "numpy.extract")


# ---- trim_zeros -----------------------------------------------------------------------------

def _trim_zeros_unbacked(filt: Any, trim: str, axis: tuple) -> Any:
    nd = len(shape_of(filt))
    if nd == 1:
        return ("trim_zeros", 0, trim), ("u",)
    # each trimmed axis its own size (the bounding box of the nonzero values)
    return ("trim_zeros", 0, trim, axis), tuple(("u", d) if d in axis else (0, d) for d in range(nd))


# NumPy's result is a view of filt between data-dependent bounds: the kernel is NumPy's
# own (a view), the lengths of the trimmed axes unbacked sizes; a write through the result
# runs as Python (read_only), where it reaches filt as in NumPy.
trim_zeros = declare("trim_zeros", Category.EXTERN,
                     lambda filt, trim, axis: np.trim_zeros(filt, trim, axis=axis),
                     inputs=("filt",), params={"trim": "fb", "axis": (0,)},
                     meta=lambda filt, trim, axis: TensorMeta(tuple(shape_of(filt)), np.dtype(filt.dtype)),
                     data_dependent=True, unbacked=_trim_zeros_unbacked, aliases=True, read_only=True,
                     doc="np.trim_zeros(filt, trim, axis): a view, the lengths of the trimmed axes "
                         "known once it ran")


def _trim_zeros_normalize(filt, trim="fb", axis=None):
    if not isinstance(trim, str) or not set(trim.lower()) <= set("fb"):
        np.trim_zeros(np.zeros(1), trim)   # NumPy's own error for a bad trim
    nd = len(shape_of(filt))
    if nd == 0:
        reject("numpy.trim_zeros", "filt", "<a 0-d array>", "it runs as Python")
    axes = tuple(range(nd)) if axis is None else \
        tuple(sorted({normalize_one_axis(a, nd) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}))
    if not axes:
        reject("numpy.trim_zeros", "axis", axis, "it runs as Python")
    return Bound(trim_zeros, (filt,), {"trim": trim, "axis": axes})


spell(np.trim_zeros, trim_zeros, _trim_zeros_normalize, "numpy.trim_zeros")
