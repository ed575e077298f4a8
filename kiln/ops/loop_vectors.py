"""Array work on run-time-length slices inside loop bodies (kiln/ops/loops.py).

A triangular solve written as a row loop, ``x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]``,
works on slices whose length is the loop variable. Inside a body such a value is a
*vector*: a 1-D float array of run-time length, a view of one axis of an array the body
uses (``L[i, :i]``, ``A[k + 1:, j]``) or an elementwise expression of views and scalars.
The body graph spells them with four ops whose eager kernels *are* the NumPy operations
(so the reference interpreter has NumPy's semantics exactly: slice clamping, broadcasting,
shape errors, casting):

- ``vec_view(x, index, start, stop, axis=k, step=s)``   ``x[index with start:stop:s at axis
  k]`` (``s`` 1 or -1);
- ``vec_fn(args, fn=...)``   one elementwise function of :data:`VEC_FUNCTIONS` on vectors
  and scalars (a temporary array);
- ``vec_reduce(a, b, fn=...)``   ``np.dot(a, b)`` (``"dot"``), ``a @ b`` (``"matmul"``),
  ``np.inner``, or ``a.sum()``, ``a.max()``, ``a.min()`` (``b`` None): a NumPy scalar;
- ``vec_flip(a)``   ``np.flip(a)`` of a view: the same memory backwards (durbin's
  ``np.dot(np.flip(r[:k]), y[:k])``);
- ``vec_store(x, index, start, stop, value, axis=k)``   ``x[...] = value`` (it writes).

A node's ``val`` is a :class:`VecMeta` (the dtype; the length is the run's). Backends may
print them as inner loops (kiln/lowering/loop_vectors.py does).
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .loops import stand_in
from .registry import Category, declare

# Elementwise functions on vectors, by the name loop bodies use for them (SCALAR_FUNCTIONS).
VEC_FUNCTIONS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
                 "truediv": operator.truediv, "neg": operator.neg, "pos": operator.pos,
                 "abs": abs, "np.absolute": np.absolute, "np.sqrt": np.sqrt,
                 "np.maximum": np.maximum, "np.minimum": np.minimum,
                 "np.square": np.square, "np.reciprocal": np.reciprocal}
# ``v ** k`` of a float array: NumPy's fast_scalar_power takes square for the Python int 2,
# reciprocal for -1 and sqrt for the float 0.5, all exact in C. Other powers go through
# NumPy's SIMD pow, which libm's pow can differ from by an ulp: a body with one unrolls.
VEC_POWERS = {(int, 2): "np.square", (int, -1): "np.reciprocal", (float, 0.5): "np.sqrt"}
VEC_DTYPES = ("float32", "float64")


class VecMeta:
    """A 1-D array of run-time length inside a loop body: its dtype."""

    __slots__ = ("dtype",)

    def __init__(self, dtype: Any) -> None:
        self.dtype = np.dtype(dtype)

    def __repr__(self) -> str:
        return f"VecMeta({self.dtype})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VecMeta) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(self.dtype)


def _sample(v: Any) -> Any:
    """A one-element stand-in array for a vector's meta, the stand-in for a scalar's."""
    if isinstance(v, VecMeta):
        return np.ones(1, v.dtype)
    s = v if type(v) in (int, float, bool) else stand_in(v)
    if s is None:
        raise TypeError(f"a vector operation on {type(v).__name__}")
    return s


def _index(index: tuple, start: Any, stop: Any, axis: int, step: int = 1) -> tuple:
    return tuple(index[:axis]) + (slice(start, stop, None if step == 1 else step),) + tuple(index[axis:])


def _view_impl(x: Any, index: tuple, start: Any, stop: Any, axis: int, step: int = 1) -> Any:
    return x[_index(index, start, stop, axis, step)]


def _view_meta(x: Any, index: tuple, start: Any, stop: Any, axis: int, step: int = 1) -> VecMeta:
    if x.dtype.name not in VEC_DTYPES or len(index) + 1 != len(x.shape):
        raise TypeError("vec_view: a float array and one slice among integer indices")
    return VecMeta(x.dtype)


vec_view = declare("vec_view", Category.EXTERN, _view_impl,
                   inputs=("x", "index", "start", "stop"), params={"axis": 0, "step": 1},
                   meta=_view_meta, may_raise=True,
                   doc="x[i, start:stop] or x[i, start:stop:-1] (one slice of run-time length; loop bodies)")


def _flip_meta(a: Any) -> VecMeta:
    if not isinstance(a, VecMeta):
        raise TypeError("vec_flip: a vector")
    return a


vec_flip = declare("vec_flip", Category.EXTERN, np.flip, inputs=("a",), meta=_flip_meta,
                   doc="np.flip(v) of a run-time-length view: a view, backwards (loop bodies)")


def _fn_impl(args: tuple, fn: str) -> Any:
    return VEC_FUNCTIONS[fn](*args)


def _fn_meta(args: tuple, fn: str) -> VecMeta:
    with np.errstate(all="ignore"):
        out = VEC_FUNCTIONS[fn](*[_sample(a) for a in args])
    if not isinstance(out, np.ndarray) or out.dtype.name not in VEC_DTYPES:
        raise TypeError(f"vec_fn {fn}: its result is not a float array")
    return VecMeta(out.dtype)


vec_fn = declare("vec_fn", Category.EXTERN, _fn_impl, inputs=("args",), params={"fn": "add"},
                 meta=_fn_meta, may_raise=True,
                 doc="an elementwise function of run-time-length vectors and scalars (loop bodies)")


# Products of two vectors, by name: the NumPy function itself (each raises its own error
# on a length mismatch).
PRODUCTS = {"dot": np.dot, "matmul": np.matmul, "inner": np.inner}


# Reductions of one vector, by name: the ndarray method itself (``max``/``min`` raise
# NumPy's error on an empty vector and propagate NaN).
REDUCTIONS = {"sum": np.ndarray.sum, "max": np.ndarray.max, "min": np.ndarray.min}


def _reduce_impl(a: Any, b: Any, fn: str) -> Any:
    return PRODUCTS[fn](a, b) if fn in PRODUCTS else REDUCTIONS[fn](a)


def _reduce_meta(a: Any, b: Any, fn: str) -> Any:
    out = PRODUCTS[fn](_sample(a), _sample(b)) if fn in PRODUCTS else REDUCTIONS[fn](_sample(a))
    if not isinstance(out, np.floating) or out.dtype.name not in VEC_DTYPES:
        raise TypeError(f"vec_reduce {fn}: its result is not a float scalar")
    return type(out)(1)


vec_reduce = declare("vec_reduce", Category.EXTERN, _reduce_impl, inputs=("a", "b"),
                     params={"fn": "dot"}, meta=_reduce_meta, may_raise=True,
                     doc="a @ b, np.dot, np.inner, a.sum(), a.max() or a.min() of run-time-length vectors: a NumPy scalar (loop bodies)")


def _store_impl(x: Any, index: tuple, start: Any, stop: Any, value: Any, axis: int, step: int = 1) -> None:
    x[_index(index, start, stop, axis, step)] = value


vec_store = declare("vec_store", Category.MUTATION, _store_impl,
                    inputs=("x", "index", "start", "stop", "value"), params={"axis": 0, "step": 1},
                    meta=lambda x, index, start, stop, value, axis, step=1: None, mutates=(0,),
                    may_raise=True,
                    doc="x[i, start:stop] = value (one slice of run-time length; loop bodies)")
