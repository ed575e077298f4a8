"""``np.take``, ``np.take_along_axis`` and the scatter-add that differentiates them
(``put_along_axis_add``); their indices become basic/advanced indexes of
kiln/ops/indexing.py where a rule needs one. ``np.put_along_axis`` is the write
``arr[fancy] = values`` NumPy itself makes of it (setitem, differentiated as index_put).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .indexing import _fmt_shape, getitem, zeros_for
from .meta import TensorMeta, fake, fresh_copy, namespace, normalize_one_axis, reject, shape_of
from .registry import Bound, Category, F, declare, is_float_like, method_key, spell
from .mutation import _setitem_normalize, setitem
from .scatter import index_add, index_put


# -- take ---------------------------------------------------------------------------------

def _take_impl(x: Any, indices: Any, axis: int | None) -> Any:
    return np.take(x, indices, axis=axis)


def _take_meta(x: Any, indices: Any, axis: int | None) -> TensorMeta:
    xshape = tuple(shape_of(x))
    ishape = tuple(shape_of(indices))
    idt = np.dtype(indices.dtype if hasattr(indices, "dtype") else np.asarray(indices).dtype)
    if idt.kind not in "biu":
        np.take(fake(x), np.zeros(0, idt), axis=axis)  # NumPy's casting TypeError
        raise TypeError(f"Cannot cast array data from {idt!r} to dtype('int64') "
                        f"according to the rule 'safe'")
    if axis is None:
        size = 1
        for d in xshape:
            size *= d
        base, ax = (size,), 0
    else:
        base, ax = xshape, axis
    n = base[ax]
    if n == 0 and int(np.prod(ishape)) > 0:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    if isinstance(indices, int) and not -n <= indices < n:
        raise IndexError(f"index {indices} is out of bounds for axis {ax} with size {n}")
    return TensorMeta(base[:ax] + ishape + base[ax + 1:], x.dtype)


def _take_vjp(g, out, x, indices, axis):
    if hasattr(indices, "dtype") and np.dtype(indices.dtype).kind == "b":
        # take reads booleans as 0/1; as an index they would be a mask.
        indices = F.astype(indices, dtype=np.dtype(np.intp))
    if axis is None:
        flat = F.index_add(F.ravel(zeros_for(g, x)), (indices,), g)
        return F.reshape(flat, shape=shape_of(x)), None
    return F.index_add(zeros_for(g, x), (slice(None),) * axis + (indices,), g), None


take = declare("take", Category.GATHER, _take_impl, inputs=("x", "indices"),
               params={"axis": None}, meta=_take_meta, vjp=_take_vjp,
               doc="numpy.take: elements at indices along an axis (of the flat array if None)",
               may_raise=True)


def _take_normalize(a, indices, axis=None, out=None, mode="raise"):
    if mode != "raise":
        reject("numpy.take", "mode", mode, "wrap or clip the indices first "
               "(np.mod(i, n) or np.clip(i, 0, n - 1)) and use mode='raise'")
    if isinstance(indices, (list, tuple)):
        # NumPy force-casts a sequence to intp (floats truncate, bools become 0/1).
        indices = np.array(indices, dtype=np.intp)
    elif isinstance(indices, np.integer):
        indices = int(indices)
    if axis is not None:
        if isinstance(axis, (bool, np.bool_)):
            raise TypeError("an integer is required for the axis")
        ndim = np.ndim(a) if not hasattr(a, "ndim") else a.ndim
        # NumPy takes from a 0-d array as from a 1-d one: axis 0 or -1 is all of it
        # (np.array(5).take(-1, axis=-1) is 5; axis 1: "... for array of dimension 1")
        axis = normalize_one_axis(axis, max(ndim, 1))
        axis = axis if ndim else None
    return Bound(take, (a, indices), {"axis": axis}, out)


spell(np.take, take, _take_normalize, "numpy.take")
spell(method_key("take"), take, _take_normalize, "ndarray.take")


# -- take_along_axis and its adjoint ------------------------------------------------------

def _along_axis_index(shape: tuple, indices: Any, axis: int) -> tuple:
    """NumPy's fancy index for take_along_axis: aranges on the other axes."""
    nd = len(shape)
    fancy = []
    for dim, n in enumerate(shape):
        if dim == axis:
            fancy.append(indices)
        else:
            fancy.append(namespace(indices).arange(n).reshape((1,) * dim + (-1,) + (1,) * (nd - dim - 1)))
    return tuple(fancy)


def _along_axis_shape(xshape: tuple, indices: Any, axis: int | None) -> tuple:
    ishape = tuple(shape_of(indices))
    if axis is None:
        if len(ishape) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
    if np.dtype(indices.dtype).kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        return ishape
    if len(ishape) != len(xshape):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    other = xshape[:axis] + (1,) + xshape[axis + 1:]
    try:
        return np.broadcast_shapes(ishape, other)
    except ValueError:
        # NumPy's message lists the fancy index it builds: an arange per other axis.
        parts = [ishape if d == axis else tuple(n if j == d else 1 for j in range(len(xshape)))
                 for d, n in enumerate(xshape)]
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                         "shapes " + "".join(_fmt_shape(p) + " " for p in parts)) from None


take_along_axis = declare(
    "take_along_axis", Category.GATHER,
    lambda x, indices, axis: np.take_along_axis(x, indices, axis=axis),
    inputs=("x", "indices"), params={"axis": -1},
    meta=lambda x, indices, axis: TensorMeta(
        _along_axis_shape(tuple(shape_of(x)), indices, axis), x.dtype),
    vjp=lambda g, out, x, indices, axis: (
        F.put_along_axis_add(zeros_for(g, x), indices, g, axis=axis), None),
    doc="numpy.take_along_axis: pick along one axis with an index array of the same rank",
    may_raise=True)


def _take_along_axis_normalize(arr, indices, axis=-1):
    if isinstance(indices, (list, tuple)):
        indices = np.asarray(indices)
    if axis is not None:
        axis = normalize_one_axis(axis, np.ndim(arr) if not hasattr(arr, "ndim") else arr.ndim)
    return Bound(take_along_axis, (arr, indices), {"axis": axis})


spell(np.take_along_axis, take_along_axis, _take_along_axis_normalize, "numpy.take_along_axis")


def _put_along_axis_normalize(arr, indices, values, axis):
    """NumPy's own implementation: ``arr[_make_along_axis_idx(arr.shape, indices, axis)] =
    values``, the aranges on the other axes constants of arr's (static) shape."""
    if axis is None:
        reject("numpy.put_along_axis", "axis", None, "write np.put(arr, indices, values) or "
               "reshape arr and pass axis=0")
    shape = tuple(shape_of(arr))
    if not all(isinstance(n, int) for n in shape):
        reject("numpy.put_along_axis", "arr", "<an array of dynamic size>", "use it with "
               "kiln.compile(dynamic=False)")
    axis = normalize_one_axis(axis, len(shape))
    if isinstance(indices, (list, tuple)):
        indices = np.asarray(indices)
    _along_axis_shape(shape, indices, axis)   # NumPy's IndexError/ValueError for the indices
    return _setitem_normalize(arr, _along_axis_index(shape, indices, axis), values)


spell(np.put_along_axis, setitem, _put_along_axis_normalize, "numpy.put_along_axis")


def _put_along_axis_add_impl(x: Any, indices: Any, values: Any, axis: int | None) -> Any:
    out = fresh_copy(x)
    if axis is None:
        np.add.at(out.reshape(-1), indices, values)  # a view: out is a fresh C array
    else:
        np.add.at(out, _along_axis_index(out.shape, indices, axis), values)
    return out


def _put_along_axis_add_meta(x, indices, values, axis):
    xshape = tuple(shape_of(x))
    target = _along_axis_shape(xshape, indices, axis)
    try:
        ok = np.broadcast_shapes(tuple(shape_of(values)), target) == target
    except ValueError:
        ok = False
    if not ok:
        raise ValueError("array is not broadcastable to correct shape")
    return TensorMeta(xshape, x.dtype)


put_along_axis_add = declare(
    "put_along_axis_add", Category.GATHER, _put_along_axis_add_impl,
    inputs=("x", "indices", "values"), params={"axis": -1}, meta=_put_along_axis_add_meta,
    vjp=lambda g, out, x, indices, values, axis: (
        g, None, F.take_along_axis(g, indices, axis=axis) if is_float_like(values) else None),
    doc="a copy of x with values added where take_along_axis would read (the adjoint)",
    may_raise=True)


# The functional scatters return new arrays; writes through a basic index go back with
# index_put (functionalization).
index_put.fresh_result = index_add.fresh_result = True
getitem.put_back = lambda base, new, index: F.index_put(base, index, new)

# Linear maps with real coefficients: their rules hold for complex values as written.
for _name in ('getitem',):
    F.__getattr__(_name).complex_grad = True


# -- np.choose ----------------------------------------------------------------------------
# NumPy's kernel (an extern call: an entry out of range raises its ValueError under
# mode="raise"); the derivative sends g to the choice each element was taken from.

def _choose_impl(a: Any, choices: tuple, mode: str = "raise") -> Any:
    return np.choose(a, choices, mode=mode)


def _choose_meta(a: Any, choices: tuple, mode: str = "raise") -> TensorMeta:
    # NumPy's own errors (float indices, no choices, a bad mode, shapes that do not
    # broadcast) and its result dtype, from one-element stand-ins
    example = np.choose(np.zeros(1, a.dtype), [np.zeros(1, c.dtype) for c in choices], mode=mode)
    shapes = [tuple(shape_of(a))] + [tuple(shape_of(c)) for c in choices]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        np.choose(np.zeros(shapes[0], a.dtype), [np.zeros(s, c.dtype) for s, c in zip(shapes[1:], choices)])
        raise
    return TensorMeta(shape, example.dtype)


def _choose_vjp(g, out, a, choices, mode):
    n = len(choices)
    index = a if mode == "raise" else F.remainder(a, n) if mode == "wrap" else F.clip(a, 0, n - 1)
    return None, tuple(F.where(F.equal(index, k), g, 0.0) if is_float_like(c) else None
                       for k, c in enumerate(choices))


choose = declare("choose", Category.EXTERN, _choose_impl, inputs=("a", "*choices"),
                 params={"mode": "raise"}, meta=_choose_meta, vjp=_choose_vjp, may_raise=True,
                 fresh_result=True, doc="numpy.choose: each element from the choice its index names")


def _choose_normalize(a, choices, out=None, mode="raise"):
    if out is not None:
        reject("numpy.choose", "out", "<array>", "assign the result instead")
    if isinstance(choices, TensorMeta) or not isinstance(choices, (list, tuple)):
        reject("numpy.choose", "choices", "<one array>", "pass a list of arrays")
    if not hasattr(a, "dtype"):
        a = np.asarray(a)
    # Python numbers take the dtype NumPy's weak promotion gives them with the arrays
    weak = [c for c in choices if isinstance(c, (bool, int, float, complex))]
    dtype = np.result_type(*[c if isinstance(c, (bool, int, float, complex)) else c.dtype
                             if hasattr(c, "dtype") else np.asarray(c).dtype for c in choices]) \
        if weak else None
    choices = tuple(np.asarray(c, dtype=dtype) if isinstance(c, (bool, int, float, complex)) else
                    c if hasattr(c, "dtype") and hasattr(c, "shape") else np.asarray(c)
                    for c in choices)
    return Bound(choose, (a, choices), {"mode": mode})


spell(np.choose, choose, _choose_normalize, "numpy.choose")
