"""The methods of binary ufuncs that have no fused op of their own: ``reduceat`` and ``at``
of any of them (``np.maximum.at(peak, cell, value)`` scatters a maximum per bin), ``reduceat`` (a CSR matrix-vector product's row sums ``np.add.reduceat(data * x[indices],
indptr[:-1])``, per-group maxima of sorted keys), and ``reduce`` and ``accumulate`` of
those without a reduction or scan op (``np.logaddexp.reduce(z, axis=1)`` in a
log-likelihood, ``np.subtract.accumulate``, ``np.bitwise_or.reduce`` of flags).
(``np.add.reduce``, ``np.maximum.accumulate`` and the other common ones are the fused
reductions and scans of kiln/ops/reduction.py and kiln/ops/running.py; ``np.add.at`` is
kiln/ops/mutation.py's ``add_at``.)

Each is one op for every ufunc, named in its params, whose kernel is NumPy's own method
(an extern call): the odd cases keep NumPy's meaning without kiln restating them. A
reduceat segment whose next index is not larger is the single element at its start and
the last runs to the end; an index out of range raises NumPy's IndexError, a reduction
over no elements of a ufunc without identity NumPy's ValueError (``may_raise`` ops, never
removed as dead code); ``ufunc.at`` applies repeated indices once each, in order, and
is a mutation like ``np.add.at``, with a functional op (the new value of the written
array) that writes in place when nothing else reads the array; several axes of a ufunc that is not reorderable are NumPy's error.
Result shapes depend only on shapes and the number of indices, so the calls stay in the
graph; dtypes are the ones NumPy's loops give (the shape rules run the kernels on
stand-ins). Of these only ``np.logaddexp.reduce`` and ``np.logaddexp2.reduce`` have a
derivative rule (``Differentiation rule for 'reduceat' not implemented``).

    >>> import numpy as np
    >>> from kiln.ops import F
    >>> F.reduceat(np.arange(6.0), np.array([0, 4, 1]), ufunc="add", axis=0, dtype=None)
    array([ 6.,  4., 15.])
    >>> F.ufunc_reduce(np.array([0.0, 0.0]), ufunc="logaddexp", axis=(0,), dtype=None,
    ...                keepdims=False, initial=())
    np.float64(0.6931471805599453)
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..errors import NoDerivative
from .indexing import is_array_entry, normalize_index
from .meta import TensorMeta, fake_run_meta, fresh_copy, ndim_of, normalize_axis, normalize_one_axis, reject
from .mutation import _as_value, _mutation_meta
from .reduction import dtype_param, keep, loop_dtype, out_param
from .registry import Bound, Category, F, declare, find_spelling, is_float_like, spell, ufunc_method_key
from .scatter import _scatter_meta, add_at_broadcast
from .value_warnings import at_line, ufunc_at as ufunc_at_line

# The binary ufuncs whose methods users write (a fixed list, so the spellings are the same
# on every NumPy version); other ufuncs' methods run as Python.
_UFUNCS = ("add", "subtract", "multiply", "divide", "floor_divide", "power", "maximum",
           "minimum", "fmax", "fmin", "logical_and", "logical_or", "logical_xor", "bitwise_and",
           "bitwise_or", "bitwise_xor", "logaddexp", "logaddexp2", "hypot", "gcd", "lcm")


def _reduceat_impl(a: Any, indices: Any, ufunc: str = "add", axis: int = 0, dtype: Any = None) -> Any:
    return getattr(np, ufunc).reduceat(a, indices, axis=axis, dtype=dtype)


def _reduce_impl(a: Any, ufunc: str = "add", axis: Any = 0, dtype: Any = None,
                 keepdims: bool = False, initial: tuple = ()) -> Any:
    # initial: () for none, (value,) for one (None is a value: object arrays' "no identity")
    if initial:
        return getattr(np, ufunc).reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial[0])
    # (positional: ufunc.reduce(array, axis, dtype, out, keepdims); keywords and an empty
    # **extra took ~0.35 us more a call, of NumPy's ~1)
    return getattr(np, ufunc).reduce(a, axis, dtype, None, keepdims)


def _accumulate_impl(a: Any, ufunc: str = "add", axis: int = 0, dtype: Any = None) -> Any:
    return getattr(np, ufunc).accumulate(a, axis, dtype)   # (array, axis, dtype): as reduce


def _reduceat_meta(a: Any, indices: Any, ufunc: str = "add", axis: int = 0, dtype: Any = None) -> Any:
    """a's shape with ``axis`` as long as ``indices``: a rule over size symbols too (run on
    fake arrays it needed numbers, and the lowering gave the result a size of its own,
    which met ``first``'s in ``deaths / (t.size - first)`` after np.unique(t,
    return_index=True): the whole graph ran in the NumPy interpreter, 1.25x NumPy)."""
    if not (isinstance(a, TensorMeta) and isinstance(indices, TensorMeta)
            and len(indices.shape) == 1 and len(a.shape) > 0):
        return fake_run_meta(reduceat, (a, indices), {"ufunc": ufunc, "axis": axis, "dtype": dtype})
    one = fake_run_meta(reduceat, (TensorMeta((1,) * len(a.shape), a.dtype), TensorMeta((1,), indices.dtype)),
                        {"ufunc": ufunc, "axis": axis, "dtype": dtype})
    shape = list(a.shape)
    shape[axis] = indices.shape[0]
    return TensorMeta(tuple(shape), one.dtype)


reduceat = declare("reduceat", Category.EXTERN, _reduceat_impl, inputs=("a", "indices"),
                   params={"ufunc": "add", "axis": 0, "dtype": None}, may_raise=True,
                   meta=_reduceat_meta,
                   fresh_result=True,
                   doc="numpy.<ufunc>.reduceat(a, indices, axis, dtype): reductions over "
                       "the segments that start at indices")
def _reduce_vjp(g, out, a, ufunc, axis, dtype, keepdims, initial):
    """np.logaddexp.reduce is log(sum(exp(a))) (an initial value one more term): its
    derivative is softmax, exp(a - out); logaddexp2's is 2 ** (a - out). The other ufuncs
    without a reduction op have none here."""
    if ufunc not in ("logaddexp", "logaddexp2"):
        raise NoDerivative(f"Differentiation rule for 'numpy.{ufunc}.reduce' not implemented; "
                           f"detach the value (x.detach()) or compute it under kiln.no_grad()")
    if not is_float_like(a):
        return (None,)
    if ndim_of(a) == 0:
        axis, keepdims = None, True
    diff = F.subtract(a, keep(out, a, axis, keepdims))
    share = F.exp(diff) if ufunc == "logaddexp" else F.exp2(diff)
    return (F.multiply(keep(g, a, axis, keepdims), share),)


ufunc_reduce = declare("ufunc_reduce", Category.EXTERN, _reduce_impl, inputs=("a",),
                       params={"ufunc": "add", "axis": 0, "dtype": None, "keepdims": False,
                               "initial": ()}, vjp=_reduce_vjp, vjp_refuses=True,
                       may_raise=True, doc="numpy.<ufunc>.reduce of a ufunc without a reduction op")
ufunc_accumulate = declare("ufunc_accumulate", Category.EXTERN, _accumulate_impl, inputs=("a",),
                           params={"ufunc": "add", "axis": 0, "dtype": None}, fresh_result=True,
                           doc="numpy.<ufunc>.accumulate of a ufunc without a scan op")


def _at_impl(x: Any, index: tuple, value: Any, ufunc: str = "maximum", *,
             at: _Site | None = None) -> None:
    _index_at_inplace(x, index, value, ufunc, at=at)


def _index_at_impl(x: Any, index: tuple, value: Any, ufunc: str = "maximum", *,
                   at: _Site | None = None) -> Any:
    return _index_at_inplace(fresh_copy(x), index, value, ufunc, at=at)


class _Site(dict):
    """One call site's ``numpy.<ufunc>.at`` stores, by ufunc name: each called from the
    user's line (file, line), where NumPy's warnings point, made on its first use (the
    site's op names its ufunc in a param, which the wrapper passes per call). A lookup is
    dict's own: resolving the store per call (a helper and ufunc_at's cache, two frames)
    took ~0.3 us of a compiled np.maximum.at's ~3 (slow11)."""

    def __init__(self, filename: str, lineno: int) -> None:
        super().__init__()
        self.filename, self.lineno = filename, lineno

    def __missing__(self, ufunc: str) -> Any:
        store = self[ufunc] = ufunc_at_line(getattr(np, ufunc).at, self.filename, self.lineno)
        return store


# One frame at the user's line (where NumPy's warnings point: one line of source) calling
# ``ufunc.at`` itself for the common scatter by label, ``x[i]`` of a vector with integers
# of value's shape (nothing to broadcast: add_at_broadcast's own shortcut); anything else
# takes the impl. Through the impl, its site, add_at_broadcast and the store a compiled
# np.maximum.at of 300 values took 2.42 us against NumPy's 1.37 (slow15).
_AT_SOURCE = (
    "def at(x, index, value, ufunc, *, _kiln_impl, _kiln_nd, _kiln_np, _kiln_copy): "
    "i = index[0] if type(index) is tuple and len(index) == 1 else None; "
    "y = (x if _kiln_copy is None else _kiln_copy(x)) if type(value) is _kiln_nd and type(x) is _kiln_nd "
    "and x.ndim == 1 and type(i) is _kiln_nd and i.shape == value.shape and i.dtype.kind in 'iu' else None; "
    "return _kiln_impl(x, index, value, ufunc) if y is None else (getattr(_kiln_np, ufunc).at(y, index, value), y)[1]")


def _impl_at(impl: Any) -> Any:
    """Op.impl_at of the ufunc.at ops: their ``ufunc`` param names the call."""
    def made(filename: str, lineno: int, fn: Any = impl) -> Any:
        slow = functools.partial(fn, at=_Site(filename, lineno))
        copy = fresh_copy if fn is _index_at_impl else None
        return at_line(("ufunc.at", fn.__name__, filename, lineno), "at", _AT_SOURCE, filename, lineno,
                       {"_kiln_impl": slow, "_kiln_nd": np.ndarray, "_kiln_np": np, "_kiln_copy": copy})
    return made


_at_shapes = _scatter_meta(False)


def _index_at_meta(x: Any, index: tuple, value: Any, ufunc: str) -> Any:
    return _at_shapes(x, index, value)   # (a cast NumPy refuses raises in the kernel)


def _index_at_inplace(x: Any, index: tuple, value: Any, ufunc: str = "maximum", *,
                      at: _Site | None = None) -> Any:
    add_at_broadcast(x, index, value, getattr(np, ufunc), None if at is None else at[ufunc])
    return x


index_ufunc_at = declare("index_ufunc_at", Category.EXTERN, _index_at_impl,
                         inputs=("x", "index", "value"), params={"ufunc": "maximum"},
                         meta=_index_at_meta, may_raise=True, fresh_result=True,
                         doc="a copy of x after numpy.<ufunc>.at(x, index, value)")
index_ufunc_at.inplace_impl = _index_at_inplace
# A compiled call of it (kiln/runtime/cost.py): NumPy's ufunc.at plus the broadcast
# workaround's checks and its wrapper's frames: np.maximum.at of 30 values into 5, 1.35 us
# against NumPy's 0.68 (scatter_extremes_per_cell, three of them on 30 values: 8.9 us
# compiled against NumPy's 5.1, priced at NumPy's call each it compiled).
AT_COMPILED_US = 1.3
index_ufunc_at.compiled_us = lambda node, body_us: AT_COMPILED_US
index_ufunc_at.impl_at = _impl_at(_index_at_impl)
ufunc_at = declare("ufunc_at", Category.MUTATION, _at_impl, inputs=("x", "index", "value"),
                   params={"ufunc": "maximum"}, meta=_mutation_meta("index_ufunc_at"),
                   mutates=(0,), functional="index_ufunc_at", impl_at=_impl_at(_at_impl),
                   doc="numpy.<ufunc>.at(x, index, value): unbuffered, repeated indices apply "
                       "once each")


def _at_normalizer(ufunc: np.ufunc):
    def normalize(a, indices, b=None):
        if b is None:
            raise ValueError("second operand needed for ufunc")
        return Bound(ufunc_at, (a, normalize_index(indices), _as_value(b)), {"ufunc": ufunc.__name__})
    return normalize


def _reduceat_normalizer(ufunc: np.ufunc):
    name = f"numpy.{ufunc.__name__}.reduceat"

    def normalize(array, indices, axis=0, dtype=None, out=None):
        axis = normalize_one_axis(axis, ndim_of(array))
        return Bound(reduceat, (array, indices),
                     {"ufunc": ufunc.__name__, "axis": axis,
                      "dtype": dtype_param(loop_dtype(array, dtype, out), name)},
                     out_param(out))
    return normalize


def _axis_param(axis: Any, ndim: int) -> Any:
    if ndim == 0:   # NumPy's own rules for a 0-d input (the kernel applies them)
        return tuple(axis) if isinstance(axis, list) else axis
    return normalize_axis(axis, ndim)


def _reduce_normalizer(ufunc: np.ufunc):
    name = f"numpy.{ufunc.__name__}.reduce"

    def normalize(array, axis=0, dtype=None, out=None, keepdims=False,
                  initial=np._NoValue, where=True):
        if where is not True:
            reject(name, "where", "<array>", "select with np.where before reducing")
        if is_array_entry(initial):
            reject(name, "initial", "<array>", "pass initial as a number")
        return Bound(ufunc_reduce, (array,),
                     {"ufunc": ufunc.__name__, "axis": _axis_param(axis, ndim_of(array)),
                      "dtype": dtype_param(loop_dtype(array, dtype, out), name),
                      "keepdims": bool(keepdims),
                      "initial": () if initial is np._NoValue else (initial,)},
                     out_param(out))
    return normalize


def _accumulate_normalizer(ufunc: np.ufunc):
    name = f"numpy.{ufunc.__name__}.accumulate"

    def normalize(array, axis=0, dtype=None, out=None):
        nd = ndim_of(array)
        return Bound(ufunc_accumulate, (array,),
                     {"ufunc": ufunc.__name__,
                      "axis": normalize_one_axis(axis, nd) if nd and type(axis) is int else axis,
                      "dtype": dtype_param(loop_dtype(array, dtype, out), name)},
                     out_param(out))
    return normalize


for _name in _UFUNCS:
    _ufunc = getattr(np, _name)
    for _method, _op, _normalizer in (("reduceat", reduceat, _reduceat_normalizer),
                                      ("reduce", ufunc_reduce, _reduce_normalizer),
                                      ("accumulate", ufunc_accumulate, _accumulate_normalizer),
                                      ("at", ufunc_at, _at_normalizer)):
        if find_spelling(ufunc_method_key(_ufunc, _method)) is None:   # (not a fused op's)
            spell(ufunc_method_key(_ufunc, _method), _op, _normalizer(_ufunc), f"numpy.{_name}.{_method}")
