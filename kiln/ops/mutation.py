"""In-place ops: ``x[index] = value``, ``np.copyto``, ``np.add.at``, ``ndarray.fill``.

A mutation op writes into its input 0 and returns None, as NumPy does. Each names its
*functional* counterpart, an op with the same inputs and parameters that returns the new
value of input 0 instead of writing it; capture and autograd work with that one, which is
why mutation ops carry no derivative rule of their own:

    ==========  ==============================  ===============
    mutation    spelling                        functional
    ==========  ==============================  ===============
    setitem     x[index] = value                index_put
    add_at      np.add.at(x, index, value)      index_add
    copyto      np.copyto(dst, src, ...)        copy_into
    fill        x.fill(value)                   filled
    ==========  ==============================  ===============

``copy_into`` (declared here) broadcasts src to dst's shape and casts it to dst's dtype
under np.copyto's casting rule ('same_kind' by default: float into int raises TypeError).
Shape rules of the mutation ops check their arguments through the functional op's rule
and return None.
"""
from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from .creation import _fill_grad, _full_like_meta, fits
from .from_data import _as_array
from .indexing import _fmt_shape, is_array_entry, normalize_index
from .scatter import add_at_broadcast, element_store_may_raise, stores_at
from .meta import TensorMeta, check_casting, fill_may_raise, fresh_copy, infer_meta, reject, shape_of
from .registry import (Bound, Category, Composite, F, REGISTRY, declare, is_complex_like, is_float_like,
                       method_key, spell, ufunc_method_key)
from .value_warnings import runs_as_numpy


def _as_value(value: Any, target: Any = None) -> Any:
    """Python and NumPy scalars stay scalars (NumPy converts them with a range check when
    it writes them: 300 into int8 raises, a Python complex into a real array raises
    TypeError where a 0-d complex array casts with a ComplexWarning); sequences become arrays of the target's dtype
    the same way (np.array([300], dtype=np.int8) raises NumPy's own OverflowError)."""
    if is_array_entry(value) or isinstance(value, (bool, int, float, complex, np.generic)):
        return value
    dtype = getattr(target, "dtype", None)
    if dtype is not None and isinstance(value, (list, tuple)) and np.dtype(dtype).kind in "biu":
        return np.array(value, dtype=dtype)
    return np.asarray(value)


def _mutation_meta(functional: str):
    """Check a mutation's arguments with its functional op's rule; the mutation returns None."""

    def rule(*inputs: Any, **params: Any) -> None:
        infer_meta(REGISTRY[functional], inputs, params)
        return None

    return rule


# -- copy_into: the functional np.copyto ----------------------------------------------------

def _copy_into_impl(dst: Any, src: Any, where: Any, casting: str, *, store: Any = np.copyto) -> Any:
    out = fresh_copy(dst)
    store(out, src, casting=casting, where=where)
    return out


def _copy_into_meta(dst: Any, src: Any, where: Any, casting: str) -> TensorMeta:
    dshape, sshape = tuple(shape_of(dst)), tuple(shape_of(src))
    # The casting check first, as NumPy does, on empty stand-ins: NumPy's own TypeError (or
    # OverflowError for a Python int out of range), with its message, and no allocation.
    if isinstance(src, (bool, int, float)):
        sample = src
    else:
        sample = np.zeros(() if sshape == () else (0,), np.dtype(src.dtype))
    with warnings.catch_warnings():   # (the call's own ComplexWarning comes when it runs)
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        np.copyto(np.zeros((0,), dst.dtype), sample, casting=casting)
    if not fits(sshape, dshape):
        raise ValueError(f"could not broadcast input array from shape {_fmt_shape(sshape)} "
                         f"into shape {_fmt_shape(dshape)}")
    wshape = tuple(shape_of(where))
    if not fits(wshape, dshape, drop_units=False):   # (np.copyto keeps a mask's leading unit axes)
        raise ValueError(f"could not broadcast where mask from shape {_fmt_shape(wshape)} "
                         f"into shape {_fmt_shape(dshape)}")
    return TensorMeta(dshape, dst.dtype)


def _copy_into_vjp(g, out, dst, src, where, casting):
    if where is True:
        gdst, gsrc = None, g
    else:
        gdst = F.where(where, 0.0, g) if is_float_like(dst) or is_complex_like(dst) else None
        gsrc = F.where(where, g, 0.0)
    if not (is_float_like(src) or is_complex_like(src)):
        return gdst, None, None
    sshape, gshape = tuple(shape_of(src)), tuple(shape_of(g))
    if len(sshape) > len(gshape):
        # src had leading unit axes that np.copyto dropped: put them back.
        gsrc = F.reshape(gsrc, shape=(1,) * (len(sshape) - len(gshape)) + gshape)
    return gdst, gsrc, None


def _copy_into_decomposition(dst, src, where, casting):
    """For the compilers: src cast to dst's dtype and broadcast to its shape (where dst is
    not kept), so the new value of a written argument is computed by the kernel that
    makes src instead of copied twice (the casting check already ran in the shape rule)."""
    dshape, sshape = tuple(shape_of(dst)), tuple(shape_of(src))
    if len(sshape) > len(dshape):       # leading unit axes, which np.copyto drops
        src = F.reshape(src, shape=sshape[len(sshape) - len(dshape):])
    value = F.broadcast_to(F.astype(src, dtype=dst.dtype), shape=dshape)
    if where is True:
        return value
    if getattr(where, "shape", None) == () and getattr(where, "value", None) is True:
        # where=True as the lowering's constant scalar: a select on it would still load
        # dst, which an extern writing into dst's memory (lowering/inplace.py) needs not;
        # the values land in dst's memory, so in its layout (not a broadcast src's)
        return F.relayout(value, dst, rule="K")
    return F.where(where, value, dst)


copy_into = declare("copy_into", Category.POINTWISE, _copy_into_impl,
                    inputs=("dst", "src", "where"), params={"casting": "same_kind"},
                    meta=_copy_into_meta, vjp=_copy_into_vjp,
                    impl_at=stores_at(_copy_into_impl, np.copyto),
                    lowering={"decompose": _copy_into_decomposition},
                    doc="the new value of dst after np.copyto(dst, src, casting, where)")
# Linear in dst and src (a select): the rule holds for complex values as written.
copy_into.complex_grad = True


# -- the mutations ------------------------------------------------------------------------

def _setitem_impl(x: Any, index: tuple, value: Any, *, store: Any = operator.setitem) -> None:
    store(x, index, value)


def _stores_own_view(x: Any, index: Any, value: Any) -> bool:
    """``x[index] = x[index]`` (Op.stores_own_view): Python's ``x[index] += v`` stores the
    view it wrote through back into the same place."""
    if getattr(value, "target", None) is not F.getitem or value.args[0] is not x:
        return False
    index, other = (i if isinstance(i, tuple) else (i,) for i in (index, value.args[1]))
    plain = (int, slice, type(None), type(Ellipsis))
    return len(index) == len(other) and all(
        a is b or type(a) is type(b) and isinstance(a, plain) and a == b for a, b in zip(index, other))


setitem = declare("setitem", Category.MUTATION, _setitem_impl, inputs=("x", "index", "value"),
                  meta=_mutation_meta("index_put"), mutates=(0,), functional="index_put",
                  stores_own_view=_stores_own_view, runtime_slices=1, doc="x[index] = value",
                  impl_at=stores_at(_setitem_impl, operator.setitem))


def _holds_arrays(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and any(
        is_array_entry(v) or _holds_arrays(v) for v in value)


def _setitem_sequence(x: Any, index: tuple, value: Any) -> None:
    # NumPy converts the sequence as np.array(value, dtype=x.dtype) does, then writes it
    F.setitem(x, index, _as_array(value, dtype=np.dtype(x.dtype), copy=False))


def _setitem_normalize(x, index, value):
    if _holds_arrays(value) and np.dtype(getattr(x, "dtype", object)).kind == "f":
        # A[i, i - 1:i + 2] = [h[i - 1], 2 * (h[i - 1] + h[i]), h[i]]: the row made in the
        # graph (np.asarray of the list made an object array: a break). Into a float array
        # alone: NumPy converts NumPy numbers in a list to integers as int() does (1e40:
        # OverflowError), and a complex cast as a composite's step tells no warning
        # (lowering/fp_flags.py), where NumPy's says "overflow encountered in cast"
        return Composite(_setitem_sequence, (x, normalize_index(index), value))
    index = normalize_index(index)
    if getattr(value, "numpy_scalar", False) and _one_element(x, index) \
            and element_store_may_raise(value.dtype, x.dtype):
        # np.int64(70000) or NaN into an int16 element: NumPy's element store raises
        return Composite(_setitem_element, (x, index, value))
    return Bound(setitem, (x, index, _as_value(value, x)), {})


def _one_element(x: Any, index: tuple) -> bool:
    """Does ``index`` name one element of ``x`` (an int per axis)?"""
    ndim = len(getattr(x, "shape", ()))
    return ndim > 0 and len(index) == ndim and all(
        isinstance(i, int) or getattr(i, "shape", None) == () and np.dtype(getattr(i, "dtype", object)).kind in "iu"
        for i in index)


def _setitem_element(x: Any, index: tuple, value: Any) -> None:
    F.setitem(x, index, F.element_value(value, dtype=np.dtype(x.dtype)))


spell(method_key("__setitem__"), setitem, _setitem_normalize, "ndarray.__setitem__")


def _add_at_impl(x: Any, index: tuple, value: Any, *, store: Any = np.add.at) -> None:
    add_at_broadcast(x, index, value, store=store)


add_at = declare("add_at", Category.MUTATION, _add_at_impl, inputs=("x", "index", "value"),
                 meta=_mutation_meta("index_add"), mutates=(0,), functional="index_add",
                 impl_at=stores_at(_add_at_impl, np.add.at),
                 doc="np.add.at(x, index, value): unbuffered, repeated indices accumulate")


def _add_at_normalize(a, indices, b=None):
    if b is None:
        raise ValueError("second operand needed for ufunc")
    return Bound(add_at, (a, normalize_index(indices), _as_value(b)), {})


spell(ufunc_method_key(np.add, "at"), add_at, _add_at_normalize, "numpy.add.at")


def _copyto_impl(dst: Any, src: Any, where: Any, casting: str, *, store: Any = np.copyto) -> None:
    store(dst, src, casting=casting, where=where)


copyto = declare("copyto", Category.MUTATION, _copyto_impl, inputs=("dst", "src", "where"),
                 params={"casting": "same_kind"}, meta=_mutation_meta("copy_into"),
                 mutates=(0,), functional="copy_into", impl_at=stores_at(_copyto_impl, np.copyto),
                 doc="np.copyto(dst, src, casting, where)")


def _copyto_normalize(dst, src, casting="same_kind", where=True):
    check_casting(casting)
    if where is not True:
        where = where if is_array_entry(where) else np.asarray(where, dtype=bool)
    src = _as_value(src)
    if _cast_may_warn(src, dst, casting):
        return Composite(_cast_then_copy, (dst, src, where), {"casting": casting}, out_write=True)
    return Bound(copyto, (dst, src, where), {"casting": casting})


def _cast_may_warn(src: Any, dst: Any, casting: str) -> bool:
    """Can np.copyto's cast of src into dst's dtype give NumPy's floating-point warnings
    ("invalid value encountered in cast": a NaN into an int array; "overflow": 1e300 into
    float32) or its ComplexWarning? copy_into's kernel code casts, but a copy says nothing of flags
    (ops/fp_errors.py), so such a cast is an astype of its own, whose warnings kernels give."""
    if not (is_array_entry(src) or isinstance(src, np.generic)) or not is_array_entry(dst):
        return False
    s, d = np.dtype(src.dtype), np.dtype(dst.dtype)
    if s.kind not in "fc" or d.kind not in "iufc" or s == d or not np.can_cast(s, d, casting):
        return False
    # (complex into real: NumPy's ComplexWarning, which the astype gives at the user's line)
    return d.kind in "iu" or s.kind == "c" and d.kind == "f" or np.finfo(d).max < np.finfo(s).max


def _cast_then_copy(dst: Any, src: Any, where: Any, casting: str) -> None:
    infer_meta(copy_into, (dst, src, where), {"casting": casting})   # (NumPy's errors first)
    if where is not True:
        # NumPy's masked cast reads only the selected elements (a NaN masked off is silent)
        src = F.where(where, src, 0)
    F.copyto(dst, F.astype(src, dtype=np.dtype(dst.dtype)), where, casting=casting)


spell(np.copyto, copyto, _copyto_normalize, "numpy.copyto")


def _fill_impl(x: Any, fill_value: Any, shape: None, dtype: None, *,
               store: Any = np.ndarray.fill) -> None:
    # (np.ndarray.fill takes NumPy's arrays alone: a device array fills itself)
    store(x, fill_value) if isinstance(x, np.ndarray) else x.fill(fill_value)


def _filled_impl(x: Any, fill_value: Any, shape: None, dtype: None, *,
                 store: Any = np.ndarray.fill) -> Any:
    out = np.empty_like(x)
    # fill's own conversion: NaN into an int array raises, as in NumPy
    store(out, fill_value) if isinstance(out, np.ndarray) else out.fill(fill_value)
    return out


# The functional fill: full_like would cast unsafely (NaN -> INT_MIN) where fill raises.
filled = declare("filled", Category.CREATION, _filled_impl, inputs=("x", "fill_value"),
                 params={"shape": None, "dtype": None}, meta=_full_like_meta,
                 raises_for=fill_may_raise(floats=True), impl_at=stores_at(_filled_impl, np.ndarray.fill),
                 vjp=lambda g, out, x, fill_value, shape, dtype: (None, _fill_grad(g, fill_value)),
                 doc="the new value of x after x.fill(value)")

# fill's parameters mirror filled's (always None here) so that the functional op takes
# exactly the mutation's inputs and parameters.
fill = declare("fill", Category.MUTATION, _fill_impl, inputs=("x", "fill_value"),
               params={"shape": None, "dtype": None}, meta=_mutation_meta("filled"),
               mutates=(0,), functional="filled", doc="ndarray.fill(value)",
               impl_at=stores_at(_fill_impl, np.ndarray.fill))


def _fill_normalize(x, value):
    # NumPy scalars stay scalars: fill converts them with a range check (np.uint8(255)
    # into int8 raises), which a 0-d array would skip; a Python complex into a real array
    # raises TypeError, where a 0-d complex array would cast with a ComplexWarning.
    if not (is_array_entry(value) or isinstance(value, (bool, int, float, complex, np.generic))):
        value = np.asarray(value)
    if len(shape_of(value)) != 0:
        reject("ndarray.fill", "value", f"<array of shape {shape_of(value)}>",
               "fill takes a scalar; use x[...] = value to broadcast an array")
    return Bound(fill, (x, value), {"shape": None, "dtype": None})


spell(method_key("fill"), fill, _fill_normalize, "ndarray.fill")


# -- np.put, np.place, np.fill_diagonal: writes at flat positions -----------------------------
# The functional ops compute the new value of ``a`` with NumPy's own kernel on a copy (an
# index out of range, an empty ``vals``, raise as NumPy does); the values repeat cyclically.

def _put_values_impl(a: Any, ind: Any, v: Any, mode: str) -> Any:
    out = fresh_copy(a)
    np.put(out, ind, v, mode=mode)
    return out


def _cast_check(a: Any, v: Any, write: Any = np.put) -> None:
    """NumPy's casting errors (complex into float, 300 into int8; np.place casts only
    safely) on a one-element copy."""
    sample = v if isinstance(v, (bool, int, float, complex)) else np.zeros(1, np.dtype(v.dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # NumPy warns (ComplexWarning) when the write runs
        write(np.zeros(1, np.dtype(a.dtype)), np.ones(1, bool) if write is np.place else [0], sample)


def _put_values_meta(a: Any, ind: Any, v: Any, mode: str) -> TensorMeta:
    if np.dtype(getattr(ind, "dtype", np.intp)).kind not in "iub":
        raise TypeError(f"Cannot cast array data from dtype('{ind.dtype}') to dtype('int64') "
                        f"according to the rule 'safe'")
    _cast_check(a, v)
    return TensorMeta(tuple(shape_of(a)), np.dtype(a.dtype))


def _written_positions(n: int, ind: Any, mode: str) -> np.ndarray:
    """np.put's flat positions, in write order, as NumPy resolves them (in range here:
    the forward call raised for the others)."""
    pos = np.ravel(np.asarray(ind)).astype(np.intp)
    if mode == "wrap":
        return pos % n if n else pos
    if mode == "clip":
        return np.clip(pos, 0, n - 1)
    return np.where(pos < 0, pos + n, pos)


def _put_values_grad_impl(g: Any, ind: Any, v: Any, mode: str) -> Any:
    """d<g, put(a, ind, v)>/dv: each write that no later write overwrote reads g back, into
    the element of v it came from (v repeats cyclically)."""
    out = np.zeros(np.shape(v), np.result_type(g.dtype, np.float32))
    nv, pos = out.size, _written_positions(g.size, ind, mode)
    if nv == 0 or pos.size == 0:
        return out
    rev = pos[::-1]
    _, first_in_rev = np.unique(rev, return_index=True)
    last = pos.size - 1 - first_in_rev            # the write that stays, per position
    flat = out.reshape(-1)
    np.add.at(flat, last % nv, np.ravel(g)[pos[last]])
    return flat.reshape(np.shape(v))


put_values_grad = declare(
    "put_values_grad", Category.EXTERN, _put_values_grad_impl, inputs=("g", "ind", "v"),
    params={"mode": "raise"}, fresh_result=True,
    meta=lambda g, ind, v, mode: TensorMeta(tuple(shape_of(v)), np.dtype(g.dtype)),
    doc="the cotangent of np.put's values v, from the result's cotangent g")


def _put_values_vjp(g, out, a, ind, v, mode):
    ga = F.put_values(g, ind, 0.0, mode=mode) if is_float_like(a) else None
    gv = F.put_values_grad(g, ind, v, mode=mode) if is_float_like(v) else None
    return ga, None, gv


put_values = declare("put_values", Category.EXTERN, _put_values_impl, inputs=("a", "ind", "v"),
                     params={"mode": "raise"}, meta=_put_values_meta, may_raise=True,
                     vjp=_put_values_vjp, fresh_result=True,
                     doc="the new value of a after np.put(a, ind, v, mode)")


def _put_values_inplace(a: Any, ind: Any, v: Any, mode: str) -> Any:
    np.put(a, ind, v, mode=mode)
    return a


# On a buffer nothing reads again (``d = x * 2; np.fill_diagonal(d, 0)``): written in place,
# not copied first (the copy made such a function 6x slower than NumPy at 2000x2000).
put_values.inplace_impl = _put_values_inplace


def _put_impl(a: Any, ind: Any, v: Any, mode: str) -> None:
    np.put(a, ind, v, mode=mode)


put = declare("put", Category.MUTATION, _put_impl, inputs=("a", "ind", "v"),
              params={"mode": "raise"}, meta=_mutation_meta("put_values"), mutates=(0,),
              functional="put_values", may_raise=True,
              doc="np.put(a, ind, v, mode) / a.put(...): a.flat[ind] = v, v repeated")


def _put_normalize(a, ind, v, mode="raise"):
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got '{mode}')")
    ind = ind if is_array_entry(ind) or isinstance(ind, (int, np.integer)) else np.asarray(ind)
    # (a Python complex stays one: NumPy refuses it for a real array, with a TypeError)
    return Bound(put, (a, ind, v if isinstance(v, complex) else _as_value(v, a)), {"mode": mode})


spell(np.put, put, _put_normalize, "numpy.put")
spell(method_key("put"), put, _put_normalize, "ndarray.put")


def _placed_impl(arr: Any, mask: Any, vals: Any) -> Any:
    out = fresh_copy(arr)
    np.place(out, mask, vals)
    return out


def _placed_meta(arr: Any, mask: Any, vals: Any) -> TensorMeta:
    size = int(np.prod(shape_of(arr)))
    if int(np.prod(shape_of(mask))) != size:
        raise ValueError("place: mask and data must be the same size")
    _cast_check(arr, vals, np.place)
    return TensorMeta(tuple(shape_of(arr)), np.dtype(arr.dtype))


def _placed_grad_impl(g: Any, mask: Any, vals: Any) -> Any:
    """d<g, place(arr, mask, vals)>/dvals: the k-th True position read vals[k % len]."""
    out = np.zeros(np.shape(vals), np.result_type(g.dtype, np.float32))
    picked = np.ravel(g)[np.ravel(np.asarray(mask)) != 0]
    if out.size and picked.size:
        flat = out.reshape(-1)
        np.add.at(flat, np.arange(picked.size) % out.size, picked)
        return flat.reshape(np.shape(vals))
    return out


placed_grad = declare(
    "placed_grad", Category.EXTERN, _placed_grad_impl, inputs=("g", "mask", "vals"),
    fresh_result=True,
    meta=lambda g, mask, vals: TensorMeta(tuple(shape_of(vals)), np.dtype(g.dtype)),
    doc="the cotangent of np.place's vals, from the result's cotangent g")


def _placed_vjp(g, out, arr, mask, vals):
    keep = F.reshape(F.not_equal(mask, 0), shape=tuple(shape_of(g)))
    ga = F.where(keep, 0.0, g) if is_float_like(arr) else None
    return ga, None, (F.placed_grad(g, mask, vals) if is_float_like(vals) else None)


placed = declare("placed", Category.EXTERN, _placed_impl, inputs=("arr", "mask", "vals"),
                 meta=_placed_meta, may_raise=True, fresh_result=True, vjp=_placed_vjp,
                 doc="the new value of arr after np.place(arr, mask, vals)")


def _placed_inplace(arr: Any, mask: Any, vals: Any) -> Any:
    np.place(arr, mask, vals)
    return arr


placed.inplace_impl = _placed_inplace
place = declare("place", Category.MUTATION, lambda arr, mask, vals: np.place(arr, mask, vals),
                inputs=("arr", "mask", "vals"), meta=_mutation_meta("placed"), mutates=(0,),
                functional="placed", may_raise=True,
                doc="np.place(arr, mask, vals): the True positions of mask get vals in turn")


def _place_normalize(arr, mask, vals):
    mask = mask if is_array_entry(mask) else np.asarray(mask)
    if isinstance(vals, (list, tuple)):
        # NumPy converts a sequence to arr's dtype (only arrays must cast safely), on every
        # call: where that warns ([1e300] into float32), the call runs as NumPy
        with warnings.catch_warnings(record=True) as seen, np.errstate(all="warn"):
            warnings.simplefilter("always")
            vals = np.array(vals, dtype=arr.dtype)
        if seen:
            runs_as_numpy("numpy.place", str(seen[0].message))
    return Bound(place, (arr, mask, _as_value(vals, arr)), {})


spell(np.place, place, _place_normalize, "numpy.place")


def _fill_diagonal_normalize(a, val, wrap=False):
    shape = tuple(shape_of(a))
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    end = None
    if len(shape) == 2:
        step = shape[1] + 1
        if not wrap:
            end = shape[1] * shape[1]
    else:
        if any(n != shape[0] for n in shape):
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(shape[:-1]).sum())
    # a.flat[:end:step] = val: positions known from the shape alone
    ind = np.arange(int(np.prod(shape)))[:end:step]
    return Bound(put, (a, ind, _as_value(val, a)), {"mode": "raise"}, sizes_read=True)


spell(np.fill_diagonal, put, _fill_diagonal_normalize, "numpy.fill_diagonal")


def one_element_work(node: Any) -> bool:
    """A graph call computing at most one element, or writing one value (a scalar, any
    index) into an array: what a loop of element code does each step."""
    val = node.val
    if getattr(val, "size", None) is not None and val.size <= 1:
        return True
    if node.target.name in ("index_put", "index_add", "setitem", "add_at") and len(node.args) > 2:
        value = getattr(node.args[2], "val", None)
        return value is None or getattr(value, "size", 2) <= 1
    return False


def touches_one_element(node: Any) -> bool:
    """Does this graph call read or write exactly one element of an array, whatever its
    size (``x[i]``, ``out[i, j] = v``)? NumPy does such a call in about 0.1 us, so the cost
    model prices it as that even when the array is large."""
    name = node.target.name
    if name == "getitem":
        return getattr(node.val, "shape", None) == () and _int_index(node.args[1], node.args[0])
    if name in ("setitem", "index_put") and len(node.args) > 2:
        value = getattr(node.args[2], "val", node.args[2])
        return getattr(value, "shape", ()) == () and _int_index(node.args[1], node.args[0])
    return False


def _int_index(index: Any, x: Any) -> bool:
    """An index of one int per axis of ``x`` (constants or run-time ints)."""
    items = index if isinstance(index, tuple) else (index,)
    shape = getattr(getattr(x, "val", None), "shape", None)
    if shape is None or len(items) != len(shape):
        return False
    for item in items:
        value = getattr(item, "val", item)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            return False
    return True


def write_through_view(view_op: Any, base: Any, new: Any, rest: tuple, params: dict,
                       bijective: bool) -> Any:
    """The value of ``base`` after ``view_op(base, *rest, **params)[...] = new``, written
    with ops, so it records on whatever ``base`` and ``new`` are (graph Proxies during
    functionalization, Tensors on the eager tape). A view with a ``put_back`` rule uses
    it; a bijective view (transpose, reshape, flip, a full slice) maps ``new`` back
    through its derivative rule, which *is* its inverse; any other injective view
    scatters through that rule where a mask of ones lands. ``bijective``: the view has
    as many elements as its base (the caller knows the sizes; a Proxy's may be symbols)."""
    if view_op.put_back is not None:
        return view_op.put_back(base, new, *rest)
    spread = _map_back(view_op, new, base, rest, params)
    if bijective:
        return spread
    mask = _map_back(view_op, F.ones_like(new), base, rest, params)
    return F.where(F.not_equal(mask, 0), spread, base)


def _map_back(view_op: Any, values: Any, base: Any, rest: tuple, params: dict) -> Any:
    """A view op's derivative rule applied to ``values``: the view's elements carried back
    to where they sit in the base. The raw rule, not ``Op.backward``: an int or bool base
    gets no *gradient*, but its written values must still go back."""
    with np.errstate(all="ignore"):
        return view_op.vjp(values, values, base, *rest, **params)[0]
