"""Shape ops: reshape, ravel, transpose and friends, flip, squeeze, expand_dims.

Every op here except ``flatten`` is a VIEW: its kernel returns what NumPy returns, a view
of the input wherever NumPy gives one. Their shape rules are the default fake run (a view
of a zero-stride fake costs nothing), so a bad shape or axis raises NumPy's own error with
NumPy's own message. Normalizers turn every spelling into one canonical call: axes are
non-negative tuples, shapes are tuples of ints, so equal calls look equal to the graph.

Each derivative rule undoes the view on the cotangent: a reshape back to the input's
shape, the inverse permutation, the same flip.
"""
from __future__ import annotations

import inspect
import operator
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import layout
from .meta import TensorMeta, as_array, below_of_inputs, ndim_of, normalize_axis, reject, shape_of, to_fake
from .registry import Bound, Category, Composite, F, declare, method_key, spell


# -- argument helpers shared by the normalizers ------------------------------------------

def shape_arg(shape: Any, bools: bool = False) -> tuple:
    """A shape argument (an int or a sequence of ints) as a tuple of Python ints.

    ``operator.index`` raises the TypeError NumPy raises for a float dimension. NumPy's
    C functions (np.zeros, reshape) refuse a bool where a size goes, as here; a function
    written in Python (np.tile: ``bools=True``) takes True as 1.
    """
    def dim(d: Any) -> int:
        if not bools and isinstance(d, (bool, np.bool_)):
            raise TypeError("an integer is required")
        return operator.index(d)
    if hasattr(shape, "__index__") and getattr(shape, "ndim", 0) == 0 \
            and (bools or not isinstance(shape, (bool, np.bool_))):
        return (operator.index(shape),)
    if hasattr(shape, "__iter__"):
        return tuple(dim(d) for d in shape)
    raise TypeError(f"expected a sequence of integers or a single integer, got '{shape!r}'")


def axes_arg(axis: Any, ndim: int, argname: str | None = None, sort: bool = True) -> tuple | None:
    """``None``, an int or a sequence of ints as a (sorted) tuple of non-negative axes.

    NumPy's own ``normalize_axis_tuple`` raises, so errors read exactly like NumPy's.
    """
    if axis is None:
        return None
    axes = normalize_axis_tuple(axis, ndim, argname)
    return tuple(sorted(axes)) if sort else tuple(axes)


def _check_order(name: str, order: Any, allowed: tuple = ("C", "F")) -> None:
    if order not in allowed:
        reject(name, "order", order, "kiln arrays are C-ordered ('F' is taken too); pass "
               "order='C' or 'F', or call it outside the compiled function")


# order='F' is the C-order op on the reversed axes: x.reshape(s, order='F') is
# x.T.reshape(s[::-1]).T (a view exactly where NumPy's is), ravel/flatten read x.T.
def _reshape_fortran(x, shape):
    return F.transpose(F.reshape(F.transpose(x), shape=tuple(reversed(shape))))


def _reshape_bound(x: Any, shape: tuple, order: str) -> Any:
    if order == "F":
        return Composite(_reshape_fortran, (x,), {"shape": shape})
    return Bound(reshape, (x,), {"shape": shape})


# -- reshape, ravel, flatten --------------------------------------------------------------

def _reshape_impl(x: Any, shape: tuple) -> Any:
    # -1 is resolved here (and so in the fake-run rule): NumPy raises its own errors.
    # An ndarray's own method is what np.reshape calls, without its Python wrappers (a
    # quarter of the time: views a compiled call returns replay this, aot/view_outputs.py).
    return x.reshape(shape) if type(x) is np.ndarray else np.reshape(x, shape)


reshape = declare("reshape", Category.VIEW, _reshape_impl, inputs=("x",), layout=layout.reshape,
                  params={"shape": ()},
                  vjp=lambda g, out, x, shape: (F.reshape(g, shape=shape_of(x)),),
                  doc="numpy.reshape: a view where the layout allows, else a copy")


def _np_reshape_normalize(a, shape=None, order="C", *, newshape=None, copy=None):
    if newshape is not None and "newshape" not in inspect.signature(np.reshape).parameters:
        raise TypeError("reshape() got an unexpected keyword argument 'newshape'")   # NumPy >= 2.4
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError("reshape() missing 1 required positional argument: 'shape'")
    _check_order("numpy.reshape", order)
    if copy is not None:
        reject("numpy.reshape", "copy", copy, "drop copy= and call .copy() on the result "
               "if a copy is needed")
    return _reshape_bound(a, shape_arg(shape), order)


def _method_reshape_normalize(x, *shape, order="C", copy=None, **kwargs):
    # x.reshape(2, 3), x.reshape((2, 3)) and x.reshape(shape=(2, 3)) are all accepted.
    if "shape" in kwargs:
        if shape:
            raise TypeError("reshape() got multiple values for argument 'shape'")
        shape = (kwargs.pop("shape"),)
    if kwargs:
        raise TypeError(f"reshape() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if not shape:
        raise TypeError("reshape() takes exactly 1 argument (0 given)")
    _check_order("ndarray.reshape", order)
    if copy is not None:
        reject("ndarray.reshape", "copy", copy, "drop copy= and call .copy() on the result")
    shape = shape[0] if len(shape) == 1 else shape
    return _reshape_bound(x, shape_arg(shape), order)


spell(np.reshape, reshape, _np_reshape_normalize, "numpy.reshape")
spell(method_key("reshape"), reshape, _method_reshape_normalize, "ndarray.reshape")


def _atleast_normalizer(n: int):
    """np.atleast_nd(x) inserts unit axes (a view); several arrays at once would return a tuple."""

    def normalize(*arys):
        if len(arys) != 1:
            reject(f"numpy.atleast_{n}d", "arys", f"<{len(arys)} arrays>",
                   f"call np.atleast_{n}d once per array")
        x = arys[0]
        # (a list of arrays, ``np.atleast_2d([h(s) for s in sigmas])``: the shape of
        # NumPy's array of it, not of a list of opaque items)
        shape = shape_of(to_fake(x) if isinstance(x, (list, tuple)) else x)
        if len(shape) >= n:
            # NumPy hands back the array itself; so does a squeeze of no axes (a reshape would
            # be a new view object)
            return Bound(squeeze, (x,), {"axis": ()})
        # unit axes inserted, not a reshape to the new shape: a reshape's target names every
        # length, so a dynamic one (skfuzzy's `np.atleast_2d(um.sum(axis=1))` over c clusters)
        # was pinned, one cache entry per length
        if n == 3 and len(shape) == 2:
            axes = (2,)
        elif n == 3 and len(shape) == 1:
            axes = (0, 2)
        else:
            axes = tuple(range(n - len(shape)))
        return Bound(expand_dims, (x,), {"axis": axes})

    return normalize


spell(np.atleast_1d, reshape, _atleast_normalizer(1), "numpy.atleast_1d")
spell(np.atleast_2d, reshape, _atleast_normalizer(2), "numpy.atleast_2d")
spell(np.atleast_3d, reshape, _atleast_normalizer(3), "numpy.atleast_3d")


ravel = declare("ravel", Category.VIEW, lambda x: np.ravel(x), inputs=("x",), layout=layout.ravel,
                vjp=lambda g, out, x: (F.reshape(g, shape=shape_of(x)),),
                doc="numpy.ravel: the flattened array, a view when x is contiguous")


def _ravel_normalize(a, order="C"):
    _check_order("numpy.ravel", order)
    if order == "F":
        return Composite(lambda x: F.ravel(F.transpose(x)), (a,))
    return Bound(ravel, (a,), {})


spell(np.ravel, ravel, _ravel_normalize, "numpy.ravel")
spell(method_key("ravel"), ravel, _ravel_normalize, "ndarray.ravel")


def _flat_meta(x: Any) -> TensorMeta:
    size = 1
    for d in shape_of(x):
        size *= d
    return TensorMeta((size,), x.dtype)


# flatten always returns a fresh array, so it must not be a VIEW: a later write into the
# result must never reach x. It is declared POINTWISE (an elementwise copy), like copy.
flatten = declare("flatten", Category.POINTWISE, lambda x: as_array(x).flatten(),
                  inputs=("x",), meta=_flat_meta,
                  vjp=lambda g, out, x: (F.reshape(g, shape=shape_of(x)),),
                  doc="ndarray.flatten: a flattened copy (never a view)")


def _flatten_normalize(x, order="C"):
    _check_order("ndarray.flatten", order)
    if order == "F":
        return Composite(lambda x: F.flatten(F.transpose(x)), (x,))
    return Bound(flatten, (x,), {})


spell(method_key("flatten"), flatten, _flatten_normalize, "ndarray.flatten")


# -- permutations -------------------------------------------------------------------------

def _transpose_vjp(g, out, x, axes):
    if axes is None:
        return (F.transpose(g, axes=None),)
    inverse = [0] * len(axes)
    for i, a in enumerate(axes):
        inverse[a] = i
    return (F.transpose(g, axes=tuple(inverse)),)


def _transpose_impl(x: Any, axes: tuple | None) -> Any:
    # (the method np.transpose calls, as in _reshape_impl)
    return x.transpose(axes) if type(x) is np.ndarray else np.transpose(x, axes)


transpose = declare("transpose", Category.VIEW, _transpose_impl,
                    inputs=("x",), params={"axes": None}, vjp=_transpose_vjp,
                    layout=layout.transpose, view_of_input=True,
                    doc="numpy.transpose: permute the axes (None reverses them)")


def _axes_perm(x: Any, axes: Any) -> tuple | None:
    """Canonical permutation: non-negative ints. Invalid ones stay as given so that the
    rule raises NumPy's own error ("axes don't match array", "repeated axis ...")."""
    if axes is None:
        return None
    axes = tuple(operator.index(a) for a in axes)
    nd = ndim_of(x)
    if len(axes) == nd and all(-nd <= a < nd for a in axes):
        fixed = tuple(a % nd for a in axes)
        if len(set(fixed)) == nd:
            return fixed
    return axes


def _np_transpose_normalize(a, axes=None):
    return Bound(transpose, (a,), {"axes": _axes_perm(a, axes)})


def _method_transpose_normalize(x, *axes):
    # x.transpose(), x.transpose(None), x.transpose((1, 0)) and x.transpose(1, 0).
    if len(axes) == 0 or (len(axes) == 1 and axes[0] is None):
        return Bound(transpose, (x,), {"axes": None})
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = axes[0]
    return Bound(transpose, (x,), {"axes": _axes_perm(x, axes)})


def _matrix_transpose_normalize(x):
    nd = ndim_of(x)
    if nd < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {nd}")
    return Bound(transpose, (x,), {"axes": tuple(range(nd - 2)) + (nd - 1, nd - 2)})


def _mT_normalize(x):
    if ndim_of(x) < 2:
        raise ValueError("matrix transpose with ndim < 2 is undefined")
    return _matrix_transpose_normalize(x)


spell(np.transpose, transpose, _np_transpose_normalize, "numpy.transpose")
spell(method_key("transpose"), transpose, _method_transpose_normalize, "ndarray.transpose")
spell(method_key("T"), transpose, lambda x: Bound(transpose, (x,), {"axes": None}), "ndarray.T")
spell(np.matrix_transpose, transpose, _matrix_transpose_normalize, "numpy.matrix_transpose")
spell(method_key("mT"), transpose, _mT_normalize, "ndarray.mT")


swapaxes = declare("swapaxes", Category.VIEW,
                   lambda x, axis1, axis2: x.swapaxes(axis1, axis2) if type(x) is np.ndarray
                   else np.swapaxes(x, axis1, axis2), inputs=("x",),   # (as in _reshape_impl)
                   layout=layout.swapaxes, view_of_input=True,
                   params={"axis1": 0, "axis2": 1},
                   vjp=lambda g, out, x, axis1, axis2: (F.swapaxes(g, axis1=axis1, axis2=axis2),),
                   doc="numpy.swapaxes: exchange two axes")


def _swapaxes_normalize(a, axis1, axis2):
    nd = ndim_of(a)
    return Bound(swapaxes, (a,), {"axis1": normalize_axis_index(axis1, nd, "axis1"),
                                  "axis2": normalize_axis_index(axis2, nd, "axis2")})


spell(np.swapaxes, swapaxes, _swapaxes_normalize, "numpy.swapaxes")
spell(method_key("swapaxes"), swapaxes, _swapaxes_normalize, "ndarray.swapaxes")


moveaxis = declare("moveaxis", Category.VIEW,
                   lambda x, source, destination: np.moveaxis(x, source, destination),
                   inputs=("x",), params={"source": (), "destination": ()}, layout=layout.moveaxis,
                   view_of_input=True,
                   # Moving the axes back from where they went is the inverse permutation.
                   vjp=lambda g, out, x, source, destination: (
                       F.moveaxis(g, source=destination, destination=source),),
                   doc="numpy.moveaxis: move axes to new positions, the others keep order")


def _moveaxis_normalize(a, source, destination):
    nd = ndim_of(a)
    source = axes_arg(source, nd, "source", sort=False)
    destination = axes_arg(destination, nd, "destination", sort=False)
    if len(source) != len(destination):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    return Bound(moveaxis, (a,), {"source": source, "destination": destination})


spell(np.moveaxis, moveaxis, _moveaxis_normalize, "numpy.moveaxis")


# -- adding and removing unit axes --------------------------------------------------------

expand_dims = declare("expand_dims", Category.VIEW,
                      lambda x, axis: np.expand_dims(x, axis), inputs=("x",),
                      params={"axis": ()}, layout=layout.expand_dims, view_of_input=True,
                      # Written with unit axes only (never x's sizes): also right where a
                      # size is dynamic, and functionalization replays it to write back.
                      vjp=lambda g, out, x, axis: (F.squeeze(g, axis=tuple(axis)),),
                      doc="numpy.expand_dims: insert unit axes; `axis` counts in the output")


def _expand_dims_normalize(a, axis):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out_ndim = ndim_of(a) + len(axes)
    return Bound(expand_dims, (a,), {"axis": axes_arg(axes, out_ndim)})


spell(np.expand_dims, expand_dims, _expand_dims_normalize, "numpy.expand_dims")


def _squeeze_vjp(g, out, x, axis):
    dropped = axis if axis is not None else tuple(i for i, n in enumerate(shape_of(x)) if n == 1)
    return (F.expand_dims(g, axis=tuple(dropped)),)


squeeze = declare("squeeze", Category.VIEW, lambda x, axis: np.squeeze(x, axis),
                  inputs=("x",), params={"axis": None}, vjp=_squeeze_vjp, layout=layout.squeeze,
                  doc="numpy.squeeze: drop unit axes (all of them when axis is None)")


def _squeeze_normalize(a, axis=None):
    # An axis whose length is not 1 is left for the rule: NumPy raises its own error.
    # (kiln's normalize_axis raises np.squeeze's message for a repeated axis.)
    if any(isinstance(ax, (bool, np.bool_)) for ax in (axis if isinstance(axis, tuple) else (axis,))):
        raise TypeError("an integer is required for the axis")
    return Bound(squeeze, (a,), {"axis": normalize_axis(axis, ndim_of(a))})


spell(np.squeeze, squeeze, _squeeze_normalize, "numpy.squeeze")
spell(method_key("squeeze"), squeeze, _squeeze_normalize, "ndarray.squeeze")


# -- flips ---------------------------------------------------------------------------------

flip = declare("flip", Category.VIEW, lambda x, axis: np.flip(x, axis), inputs=("x",),
               params={"axis": None}, layout=layout.flip, view_of_input=True,
               vjp=lambda g, out, x, axis: (F.flip(g, axis=axis),),
               doc="numpy.flip: reverse the order along axes (all of them when None)")


def _flip_normalize(m, axis=None):
    return Bound(flip, (m,), {"axis": axes_arg(axis, ndim_of(m))})


def _fliplr_normalize(m):
    if ndim_of(m) < 2:
        raise ValueError("Input must be >= 2-d.")
    return Bound(flip, (m,), {"axis": (1,)})


def _flipud_normalize(m):
    if ndim_of(m) < 1:
        raise ValueError("Input must be >= 1-d.")
    return Bound(flip, (m,), {"axis": (0,)})


spell(np.flip, flip, _flip_normalize, "numpy.flip")
spell(np.fliplr, flip, _fliplr_normalize, "numpy.fliplr")
spell(np.flipud, flip, _flipud_normalize, "numpy.flipud")


# A view for some memory layouts, a copy for others.
reshape.layout_dependent = ravel.layout_dependent = True

# Linear maps with real coefficients: their rules hold for complex values as written.
for _name in ('reshape', 'transpose'):
    F.__getattr__(_name).complex_grad = True


# (their values are x's: np.bincount of them is as long as x's bound says, Op.values_below)
for _op in (reshape, ravel, transpose, expand_dims, squeeze):
    _op.values_below = below_of_inputs
