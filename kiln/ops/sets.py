"""Set operations on 1-D arrays (union1d, intersect1d, setdiff1d, setxor1d) and sorts
NumPy keeps apart (lexsort, sort_complex).

A set op's result length depends on the values. Each is one EXTERN op, ``set_op``, over
both arrays flattened and joined (``union1d`` is NumPy's own ``unique`` of that), with
``split`` saying where the first ends: its one "u" size counts the joined value, so two
set ops of the same arrays share a size and ops of other arrays do not
(kiln/ops/selection.py explains the unbacked sizes). The shape rule's example size is
the largest the result can be. None is differentiable (their values are inputs' values,
but which ones depends on comparisons).
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .meta import TensorMeta, ndim_of, normalize_one_axis, reject, shape_of
from .numeric import _dtype
from .registry import Bound, Category, Composite, F, N, declare, spell, spell_composite

_SET_FUNCTIONS = {"union1d": np.union1d, "intersect1d": np.intersect1d,
                  "setdiff1d": np.setdiff1d, "setxor1d": np.setxor1d}


def _size(shape: tuple) -> int:
    out = 1
    for n in shape:
        out *= n
    return out


def _set_op_impl(ab, kind, split, assume_unique):
    a, b = ab[:split], ab[split:]
    if kind == "union1d":
        return np.union1d(a, b)
    return _SET_FUNCTIONS[kind](a, b, assume_unique=assume_unique)


def _largest(kind: str, n: int, split: int) -> int:
    return {"intersect1d": min(split, n - split), "setdiff1d": split}.get(kind, n)


def _set_op_meta(ab, kind, split, assume_unique):
    return TensorMeta((_largest(kind, shape_of(ab)[0], split),), _dtype(ab))


set_op = declare(
    "set_op", Category.EXTERN, _set_op_impl, inputs=("ab",),
    params={"kind": "union1d", "split": 0, "assume_unique": False}, meta=_set_op_meta,
    data_dependent=True, fresh_result=True,
    unbacked=lambda ab, kind, split, assume_unique: (
        ("set_op", 0, kind, split, assume_unique), ("u",)),
    doc="numpy.union1d / intersect1d / setdiff1d / setxor1d of ab[:split] and ab[split:]; "
        "the result's length is known only after it ran")


def _set_op(a, b, kind, assume_unique):
    ab = N.concatenate((N.ravel(a), N.ravel(b)))
    return F.set_op(ab, kind=kind, split=_size(shape_of(a)), assume_unique=assume_unique)


def _set_normalizer(kind: str):
    name = f"numpy.{kind}"

    def normalize(ar1, ar2, assume_unique=False, **kwargs):
        if kwargs.pop("return_indices", False):
            reject(name, "return_indices", True, "call it without kiln for the indices")
        if kwargs:
            raise TypeError(f"{kind}() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if kind == "setdiff1d" and _dtype(ar1) != _dtype(ar2):
            # NumPy keeps ar1's dtype there: joined, the values would be promoted first
            reject(name, "ar2", f"<{_dtype(ar2)} array>", f"pass ar2 as {_dtype(ar1)}")
        for x in (ar1, ar2):
            if _dtype(x).kind not in "biuf":
                reject(name, "ar1", f"<{_dtype(x)} array>", "kiln compiles set operations on "
                       "bool, integer and float arrays")
        return Composite(_set_op, (ar1, ar2), {"kind": kind, "assume_unique": bool(assume_unique)})
    return normalize


for _kind, _fn in _SET_FUNCTIONS.items():
    spell_composite(_fn, ("concatenate", "ravel", "set_op"), _set_normalizer(_kind),
                    f"numpy.{_kind}")


# ---- lexsort ---------------------------------------------------------------------------------

def _lexsort_impl(keys, axis=-1):
    return np.lexsort(keys, axis=axis)


def _lexsort_meta(keys, axis=-1):
    shapes = [tuple(shape_of(k)) for k in keys]
    if not shapes:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = np.broadcast_shapes(*shapes)
    if shape:
        normalize_one_axis(axis, len(shape))
    return TensorMeta(shape if shape else (1,), np.dtype(np.intp))


lexsort = declare("lexsort", Category.EXTERN, _lexsort_impl, inputs=("*keys",),
                  params={"axis": -1}, meta=_lexsort_meta, fresh_result=True,
                  doc="numpy.lexsort: the indices sorting by the last key, then the one "
                      "before it, ...")


def _lexsort_normalize(keys, axis=-1):
    axis = operator.index(axis)
    if hasattr(keys, "shape"):          # a 2-D array: its rows are the keys
        if ndim_of(keys) < 2:
            reject("numpy.lexsort", "keys", "<a 0-d or 1-d array>", "pass a tuple of keys")
        return Composite(lambda k, axis: F.lexsort(tuple(N.getitem(k, i) for i in range(shape_of(k)[0])),
                                                   axis=axis), (keys,), {"axis": axis})
    keys = tuple(keys)
    return Bound(lexsort, (keys,), {"axis": axis})


spell_composite(np.lexsort, ("lexsort", "getitem"), _lexsort_normalize, "numpy.lexsort")


# ---- sort_complex ---------------------------------------------------------------------------

def _sort_complex_meta(a):
    return TensorMeta(tuple(shape_of(a)), np.sort_complex(np.zeros(1, _dtype(a))).dtype)


sort_complex = declare("sort_complex", Category.EXTERN, lambda a: np.sort_complex(a),
                       inputs=("a",), meta=_sort_complex_meta, fresh_result=True,
                       doc="numpy.sort_complex: sorted by real part, then imaginary part, "
                           "as a complex array")
spell(np.sort_complex, sort_complex, lambda a: Bound(sort_complex, (a,), {}),
      "numpy.sort_complex")
