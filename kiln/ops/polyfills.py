"""NumPy functions that call the user's functions (``np.piecewise``'s funclist,
``np.fromiter``'s generator): written
here in NumPy, and inlined by capture like a user helper, so the user's callables are
captured (and guarded) as the user wrote them and the array work becomes ops.

Capture looks them up in :data:`POLYFILLS` (kiln/capture/variables/functions.py). Each
follows NumPy's own implementation step by step; where it must differ, the docstring says.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np


def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> Any:
    """numpy.piecewise: y[cond] = func(x[cond]) (or the constant) per condition, in order;
    with one function more than conditions, the last one takes where no condition holds.

    Unlike NumPy, a function is called on an empty selection too (NumPy skips it: the
    test is a data-dependent branch); a masked write of an empty selection changes
    nothing, so results agree unless the function raises on an empty array.
    """
    if isinstance(x, (list, tuple, bool, int, float)):   # (np.asanyarray would detach a Tensor)
        x = np.asarray(x)
    n2 = len(funclist)
    # NumPy asks isinstance(condlist[0], (list, ndarray)); .ndim also sees a kiln.Tensor
    # (it differs only for a 0-d array among the conditions of a non-0-d x)
    first = None if isinstance(condlist, (bool, int, float, np.generic)) else condlist[0]
    first_is_array = isinstance(first, list) or (
        first is not None and not isinstance(first, (bool, int, float)) and first.ndim > 0)
    if isinstance(condlist, (bool, int, float, np.generic)) or (not first_is_array and x.ndim != 0):
        condlist = [condlist]
    condlist = np.asarray(condlist, dtype=bool)
    n = len(condlist)
    if n == n2 - 1:   # the otherwise function
        condelse = ~np.any(condlist, axis=0, keepdims=True)
        condlist = np.concatenate([condlist, condelse], axis=0)
        n += 1
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = np.zeros_like(x)
    for i in range(n):
        cond, func = condlist[i], funclist[i]
        if not callable(func):
            y[cond] = func
        else:
            y[cond] = func(x[cond], *args, **kw)
    return y


def fromiter(iter: Any, dtype: Any, count: int = -1, *, like: Any = None) -> Any:
    """numpy.fromiter: the first ``count`` items (all for a negative count) as a 1-d array
    of ``dtype``, each converted as ``np.array`` converts a list item (the same casts and
    errors). A generator made in the function is unrolled by capture like any loop, so the
    values are computed in the graph (or folded, where they are constants).

    Like NumPy, it takes no item past ``count`` from the iterator.
    """
    items = []
    if count != 0:
        for v in iter:
            items.append(v)
            if len(items) == count:
                break
    if count > 0 and len(items) < count:
        raise ValueError(f"iterator too short: Expected {count} but iterator had only {len(items)} items.")
    out = np.array(items, dtype=dtype) if like is None else np.array(items, dtype=dtype, like=like)
    if out.ndim != 1:   # an item that is a sequence: NumPy's fromiter refuses it
        raise ValueError("setting an array element with a sequence.")
    return out


def apply_along_axis(func1d: Any, axis: Any, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """numpy.apply_along_axis: ``func1d`` called on each 1-d slice along ``axis``, in
    NumPy's order (the other axes' C order), each result written into a buffer of the
    first result's shape and dtype (later ones cast into it as NumPy's setitem casts),
    whose axes are then moved into place. Over a 2-d array the slices are a range loop,
    which capture makes one loop node (``func1d`` captured once, one compile for every
    row count); over more dims capture unrolls them, ``func1d`` captured per slice."""
    arr = np.asarray(arr) if isinstance(arr, (list, tuple, bool, int, float)) else arr
    nd = arr.ndim
    axis = operator.index(axis)   # (NumPy's normalize_axis_index: a float is a TypeError)
    if not -nd <= axis < nd:
        raise np.exceptions.AxisError(axis, nd)
    axis = axis % nd
    in_dims = list(range(nd))
    inarr_view = np.transpose(arr, in_dims[:axis] + in_dims[axis + 1:] + [axis])
    if nd == 2:
        # one dim to iterate: a range loop whose body indexes with its variable, which
        # capture makes one loop node, ``func1d`` captured once (kiln/capture/graph_breaks.py)
        count, first, rest = inarr_view.shape[0], 0, range(1, inarr_view.shape[0])
    else:
        inds = [ind + (Ellipsis,) for ind in np.ndindex(inarr_view.shape[:-1])]
        count, first, rest = len(inds), inds[0] if inds else None, inds[1:]
    if not count:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    res = np.asanyarray(func1d(inarr_view[first], *args, **kwargs))
    buff = np.zeros(inarr_view.shape[:-1] + res.shape, dtype=res.dtype)
    buff_dims = list(range(buff.ndim))
    buff_permute = buff_dims[0:axis] + buff_dims[buff.ndim - res.ndim:buff.ndim] + \
        buff_dims[axis:buff.ndim - res.ndim]
    buff[first] = res
    for ind in rest:
        buff[ind] = np.asanyarray(func1d(inarr_view[ind], *args, **kwargs))
    return np.transpose(buff, buff_permute)


POLYFILLS = {np.piecewise: piecewise, np.fromiter: fromiter, np.apply_along_axis: apply_along_axis}


# np.vectorize hands each element to its function as a Python scalar (it calls the
# function through an object-dtype ufunc, whose inputs are ``asanyarray(a, dtype=object)``).
PYTHON_SCALAR = {"b": bool, "i": int, "u": int, "f": float}


def vectorize(func: Any, otypes: Any, first_types: Any, *args: Any) -> Any:
    """numpy.vectorize(func, otypes)(*args) without ``signature``, ``excluded``, ``cache``
    or keyword arguments: ``out[idx] = func(*elements at idx)`` over the broadcast
    arguments, as one range loop (a loop node once captured, kiln/capture/vectorize.py).

    Without ``otypes`` the output dtypes are ``asarray(r).dtype`` of ``r = func(first
    elements)``, the first elements being NumPy scalars (``arg.flat[0]``): ``first_types
    (func, *arrays)`` answers that (in capture, from a trace of ``func``'s types alone: its
    value is never used, as NumPy's first call's is not, and the trace admits no side
    effects, so leaving the call out changes nothing). Each element is then passed as a
    Python scalar (``float(x[i])``, ``int(x[i])``, ``bool(x[i])``) and each result stored
    into the output, cast as NumPy's final ``asanyarray(results, dtype=otype)`` does.
    """
    arrays = [np.asarray(a) for a in args]
    if otypes is None:
        for a in arrays:
            if a.size == 0:
                raise ValueError("cannot call `vectorize` on size 0 inputs unless `otypes` is set")
        otypes = first_types(func, *arrays)
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    n = 1
    for d in shape:
        n *= d
    flat = [_flat(a, shape, n) for a in arrays]
    conv = [PYTHON_SCALAR[a.dtype.kind] for a in arrays]
    outs = [np.empty(n, dtype=t) for t in otypes]
    nout = len(outs)
    if len(flat) == 1:
        a0, c0 = flat[0], conv[0]
        for i in range(n):
            _store(outs, nout, i, func(c0(a0[i])))
    elif len(flat) == 2:
        a0, c0, a1, c1 = flat[0], conv[0], flat[1], conv[1]
        for i in range(n):
            _store(outs, nout, i, func(c0(a0[i]), c1(a1[i])))
    elif len(flat) == 3:
        a0, c0, a1, c1, a2, c2 = flat[0], conv[0], flat[1], conv[1], flat[2], conv[2]
        for i in range(n):
            _store(outs, nout, i, func(c0(a0[i]), c1(a1[i]), c2(a2[i])))
    else:
        a0, c0, a1, c1, a2, c2, a3, c3 = flat[0], conv[0], flat[1], conv[1], flat[2], conv[2], \
            flat[3], conv[3]
        for i in range(n):
            _store(outs, nout, i, func(c0(a0[i]), c1(a1[i]), c2(a2[i]), c3(a3[i])))
    results = [_laid_out(o if len(shape) == 1 else o.reshape(shape), arrays) for o in outs]
    return results[0] if nout == 1 else tuple(results)


def _laid_out(out: Any, arrays: list) -> Any:
    """``out`` in the memory layout of NumPy's ufunc result over ``arrays`` (order='K':
    Fortran in, Fortran out): an array laid out like their sum, written whole."""
    if out.ndim < 2:
        return out
    like = arrays[0]
    for a in arrays[1:]:
        like = like + a
    res = np.empty_like(like, dtype=out.dtype, shape=out.shape)
    res[...] = out
    return res


def _flat(a: Any, shape: tuple, n: Any) -> Any:
    """``a``'s elements at the broadcast ``shape``, one-dimensional, in C order (no
    broadcast_to, no reshape where ``a`` has the shape already: a view of the argument
    keeps the loop writing its output in place)."""
    if a.shape != shape:
        a = np.broadcast_to(a, shape)
    return a if a.ndim == 1 else a.reshape(n)


def _store(outs: list, nout: int, i: int, result: Any) -> None:
    if nout == 1:
        outs[0][i] = result
    elif len(result) != nout:
        raise ValueError(f"vectorize: the function returned {len(result)} values, expected {nout}")
    else:
        for k in range(nout):
            outs[k][i] = result[k]


def vectorize_first_types(func: Any, *arrays: Any) -> tuple:
    """NumPy's own rule for ``first_types`` (what capture's trace answers): the dtypes of
    ``func`` called on the first elements, as NumPy scalars."""
    result = func(*[a.flat[0] for a in arrays])
    results = result if isinstance(result, tuple) else (result,)
    return tuple(np.asarray(r).dtype for r in results)
