"""Array creation: zeros, ones, full, empty and their *_like forms, arange, linspace, eye,
plus triu/tril and copy, which build a new array from an existing one.

Creation rules never allocate: shapes and dtypes come straight from the parameters, with
NumPy's defaults (np.zeros(3) is float64, np.arange(3) int64, np.full(3, 1) int64). The
normalizers resolve every default into explicit parameters (a dtype is always an
``np.dtype``, a shape always a tuple), and reject what kiln does not model (``like=``,
``order='F'``, a device other than the CPU) with a message saying what to do instead.

``empty`` and ``empty_like`` are their own ops so a backend may skip initializing memory;
their eager kernels fill zeros, so eager runs stay deterministic (None in an object array,
as NumPy's np.empty does).
"""
from __future__ import annotations

import math
import numbers
import operator
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .from_data import _as_array, _numpy_scalar
from .indexing import _fmt_shape, is_array_entry
from .meta import TensorMeta, fake, fill_may_raise, namespace, fresh_copy, normalize_one_axis, reject, shape_of
from .registry import Bound, Category, Composite, F, declare, method_key, spell, spell_composite
from .result_layout import Strided, axis_order, layout_of
from .shape import shape_arg


def _dtype_of(value: Any) -> np.dtype:
    return np.dtype(value.dtype) if hasattr(value, "dtype") else np.asarray(value).dtype


def _dtype_arg(dtype: Any, default: Any) -> np.dtype:
    """A dtype given as a type (np.float32, float), a string or a dtype, as an np.dtype."""
    return np.dtype(default if dtype is None else dtype)


def _check_common(name: str, order: Any = "C", like: Any = None, device: Any = None,
                  orders: tuple = ("C",)) -> None:
    if like is not None:
        reject(name, "like", like, "drop like= (kiln creates NumPy arrays)")
    if order not in orders:
        reject(name, "order", order, "kiln arrays are C-ordered; drop order=")
    if device not in (None, "cpu"):
        reject(name, "device", device, "drop device= (kiln arrays live on the CPU)")


def _check_shape(shape: tuple) -> tuple:
    if any(d < 0 for d in shape):
        raise ValueError("negative dimensions are not allowed")
    return shape


def fits(src: tuple, dst: tuple, drop_units: bool = True) -> bool:
    """Can an array of shape ``src`` be copied into ``dst`` (np.copyto's broadcasting,
    which drops leading unit axes of the source first; not of a ``where`` mask:
    ``drop_units=False``)?"""
    while drop_units and len(src) > len(dst) and src[0] == 1:
        src = src[1:]
    try:
        return np.broadcast_shapes(src, dst) == dst
    except ValueError:
        return False


def _fill_grad(g: Any, fill_value: Any) -> Any:
    """The cotangent of a fill value: fit_grad sums it back over the broadcast axes; unit
    axes the fill had beyond the output's rank (copyto drops them) are put back first."""
    extra = len(shape_of(fill_value)) - len(shape_of(g))
    return F.reshape(g, shape=(1,) * extra + tuple(shape_of(g))) if extra > 0 else g


def _no_grad(*inputs_with_grads):
    """A rule for outputs that do not depend on an input's values: zero cotangent (None)."""
    return lambda g, out, *args, **params: inputs_with_grads


# -- zeros, ones, empty, full ---------------------------------------------------------------

def _fortran(op: Any):
    """``op``'s array laid out in Fortran order: ``op`` on the reversed shape, transposed
    (the same values, NumPy's F-contiguous strides)."""
    return lambda *inputs, **params: F.transpose(op(*inputs, **params))


def _filled(name: str, kernel):
    op = declare(name, Category.CREATION, lambda shape, dtype: kernel(shape, dtype), inputs=(),
                 params={"shape": (), "dtype": np.dtype(float)},
                 meta=lambda shape, dtype: TensorMeta(_check_shape(shape), dtype),
                 doc=f"numpy.{name}(shape, dtype)")

    def normalize(shape, dtype=None, order="C", *, device=None, like=None):
        _check_common(f"numpy.{name}", order, like, device, orders=("C", "F"))
        params = {"shape": shape_arg(shape), "dtype": _dtype_arg(dtype, float)}
        if order == "F":  # Fortran order: the transpose of the C array of reversed shape
            return Composite(_fortran(op), (), {**params, "shape": tuple(reversed(params["shape"]))})
        return Bound(op, (), params)

    spell(getattr(np, name), op, normalize, f"numpy.{name}")
    return op


def _empty(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """np.empty's eager kernel: zeros, so runs are deterministic (backends may not fill),
    but an object array holds None, as NumPy's does (np.zeros(3, dtype=object) holds 0)."""
    out = np.zeros(shape, dtype)   # (np.dtype(dtype) first cost ~0.1 us a call)
    return np.empty(shape, dtype) if out.dtype.hasobject else out


def _empty_like(x: Any, dtype: Any = None, order: str = "K", shape: Any = None) -> np.ndarray:
    """np.empty_like's eager kernel: see `_empty`. (np.zeros_like is empty_like and a
    copyto of 0, through Python: ~0.45 us more a call than filling a number array
    itself, a wrapper's buffer for a loop to write, stats_tuple's ``np.empty_like(a)``.)"""
    out = np.empty_like(x, dtype=dtype, order=order, shape=shape)
    if out.dtype.kind in "biufc":
        out.fill(0)
        return out
    out = np.zeros_like(x, dtype=dtype, order=order, shape=shape)
    if out.dtype.hasobject:
        out[...] = None
    return out


def _shape_sizes(shape: Any, **_) -> dict:
    """Op.runtime_sizes of an op taking its result's shape: each entry is that dim."""
    return {"shape": tuple(range(len(shape)))} if type(shape) is tuple else {}


zeros = _filled("zeros", np.zeros)
ones = _filled("ones", np.ones)
empty = _filled("empty", _empty)
# Compiled, a fresh array is a closure returning its fill value, so writes into it fuse
# with it (kiln/lowering/fills.py); empty's elements are zeros there too.
zeros.lowering = empty.lowering = {"fill": 0}
ones.lowering = {"fill": 1}


def _full_meta(fill_value: Any, shape: tuple, dtype: np.dtype) -> TensorMeta:
    _check_shape(shape)
    fshape = tuple(shape_of(fill_value))
    if not fits(fshape, shape):
        raise ValueError(f"could not broadcast input array from shape {_fmt_shape(fshape)} "
                         f"into shape {_fmt_shape(shape)}")
    return TensorMeta(shape, dtype)


full = declare("full", Category.CREATION,
               lambda fill_value, shape, dtype: namespace(fill_value).full(shape, fill_value, dtype=dtype),
               inputs=("fill_value",), params={"shape": (), "dtype": np.dtype(float)},
               meta=_full_meta,
               # The fill value is broadcast: fit_grad sums the cotangent back to its shape.
               vjp=lambda g, out, fill_value, shape, dtype: (_fill_grad(g, fill_value),),
               doc="numpy.full(shape, fill_value, dtype): fill_value may be an array")
full.lowering = {"fill": "fill_value"}


def _full_normalize(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    _check_common("numpy.full", order, like, device)
    # (a NumPy number stays itself: one that changes from call to call is the graph's
    # input, where its constant array would recompile at every new value)
    if not is_array_entry(fill_value) and not isinstance(fill_value, (bool, int, float, np.bool_, np.number)):
        fill_value = np.asarray(fill_value)
    # NumPy: dtype defaults to np.array(fill_value).dtype (Python int -> int64, float -> float64).
    dtype = _dtype_of(fill_value) if dtype is None else np.dtype(dtype)
    return Bound(full, (fill_value,), {"shape": shape_arg(shape), "dtype": dtype})


spell(np.full, full, _full_normalize, "numpy.full")


# -- the *_like forms ----------------------------------------------------------------------

def _like_meta(x: Any, shape: tuple | None, dtype: np.dtype | None, order: str = "K") -> TensorMeta:
    return TensorMeta(_check_shape(tuple(shape_of(x)) if shape is None else shape),
                      _dtype_of(x) if dtype is None else dtype)


def _like_params(name: str, dtype: Any, order: Any, shape: Any, device: Any) -> dict:
    # subok is accepted and ignored: kiln's arrays are plain ndarrays. The order is the
    # kernel's own: the result's memory layout (kiln/ops/result_layout.py) follows it.
    _check_common(name, order, None, device, orders=("K", "A", "C", "F"))
    return {"shape": None if shape is None else shape_arg(shape),
            "dtype": None if dtype is None else np.dtype(dtype), "order": order}


def _filled_like(name: str, kernel):
    op = declare(name, Category.CREATION,
                 lambda x, shape, dtype, order="K": kernel(x, dtype=dtype, order=order, shape=shape),
                 inputs=("x",), params={"shape": None, "dtype": None, "order": "K"},
                 meta=_like_meta, vjp=_no_grad(None), complex_grad=True,
                 doc=f"numpy.{name}(x, dtype, order, shape): None means x's dtype / shape")

    def normalize(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
        return Bound(op, (a,), _like_params(f"numpy.{name}", dtype, order, shape, device))

    spell(getattr(np, name), op, normalize, f"numpy.{name}")
    return op


zeros_like = _filled_like("zeros_like", np.zeros_like)
ones_like = _filled_like("ones_like", np.ones_like)
empty_like = _filled_like("empty_like", _empty_like)
zeros_like.lowering = empty_like.lowering = {"fill": 0}
ones_like.lowering = {"fill": 1}


def _full_like_meta(x, fill_value, shape, dtype, order="K"):
    meta = _like_meta(x, shape, dtype)
    return _full_meta(fill_value, meta.shape, meta.dtype)


full_like = declare("full_like", Category.CREATION,
                    lambda x, fill_value, shape, dtype, order="K": np.full_like(
                        x, fill_value, dtype=dtype, order=order, shape=shape),
                    inputs=("x", "fill_value"), params={"shape": None, "dtype": None, "order": "K"},
                    raises_for=fill_may_raise(floats=False),
                    meta=_full_like_meta,
                    vjp=lambda g, out, x, fill_value, shape, dtype, order="K": (
                        None, _fill_grad(g, fill_value)),
                    doc="numpy.full_like(x, fill_value, dtype, order, shape)")
full_like.lowering = {"fill": "fill_value"}
# Their results are always new arrays: the first write into one (index_put) may take its
# memory in place.
for _op in (zeros, ones, empty, full, zeros_like, ones_like, empty_like, full_like):
    _op.fresh_result = True
    _op.runtime_sizes = _shape_sizes


def _full_like_normalize(a, fill_value, dtype=None, order="K", subok=True, shape=None, *,
                         device=None):
    # (a NumPy number stays itself: one that changes from call to call is the graph's
    # input, where its constant array would recompile at every new value)
    if not is_array_entry(fill_value) and not isinstance(fill_value, (bool, int, float, np.bool_, np.number)):
        fill_value = np.asarray(fill_value)
    return Bound(full_like, (a, fill_value),
                 _like_params("numpy.full_like", dtype, order, shape, device))


spell(np.full_like, full_like, _full_like_normalize, "numpy.full_like")


# -- ranges --------------------------------------------------------------------------------

def _arange_length(start: Any, stop: Any, step: Any) -> int:
    """NumPy's length rule (_calc_length): ceil((stop - start) / step), at least 0, with
    NumPy's care for a quotient that underflowed to zero."""
    delta = stop - start
    with np.errstate(all="raise"):
        val = delta / step
    value = float(val)
    if value == 0 and delta != 0:
        n = 0 if math.copysign(1.0, value) < 0 else 1
    else:
        n = math.ceil(value)
    return max(n, 0)


def _arange_meta(start, stop, step, dtype):
    if not isinstance(stop, (numbers.Number, np.generic)):
        # a size symbol (lowering), given only where it is the length (_arange_sizes)
        return TensorMeta((stop,), dtype)
    try:
        n = _arange_length(start, stop, step)
    except (ArithmeticError, ValueError, FloatingPointError):
        np.arange(start, stop, step, dtype=dtype)  # NumPy's own error, before allocating
        raise
    return TensorMeta((n,), dtype)


arange = declare("arange", Category.CREATION,
                 lambda start, stop, step, dtype: np.arange(start, stop, step, dtype=dtype),
                 inputs=(), params={"start": 0, "stop": None, "step": 1, "dtype": None},
                 meta=_arange_meta, doc="numpy.arange(start, stop, step, dtype)")


def _arange_below(start, stop, step, dtype) -> int | None:
    """Integer steps up from a non-negative start stay below ``stop``."""
    ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
               for v in (start, stop, step))
    if not ints or step <= 0 or start < 0 or (dtype is not None and np.dtype(dtype).kind not in "iu"):
        return None
    return max(int(stop), 0)


arange.values_below = _arange_below


def _arange_sizes(start, stop, step, dtype) -> dict:
    """``np.arange(n)`` of an int ``n``: ``n`` is its length (where at least 2)."""
    ints = type(start) is int and type(step) is int and type(stop) is int
    return {"stop": 0} if ints and start == 0 and step == 1 else {}


arange.runtime_sizes = _arange_sizes


def _scalar_param(v: Any) -> Any:
    # A 0-d array becomes a NumPy scalar: hashable, same value and dtype.
    return v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v


def _arange_normalize(*args, start=None, stop=None, step=None, dtype=None, device=None, like=None):
    if len(args) > 4:
        raise TypeError(f"arange() takes from 1 to 4 positional arguments but {len(args)} "
                        f"were given")
    given = dict(zip(("start", "stop", "step", "dtype"), args))
    for key, value in (("start", start), ("stop", stop), ("step", step), ("dtype", dtype)):
        if key in given and value is not None:
            raise TypeError(f"arange() got multiple values for argument '{key}'")
        given.setdefault(key, value)
    start, stop, step, dtype = (given[k] for k in ("start", "stop", "step", "dtype"))
    _check_common("numpy.arange", "C", like, device)
    if stop is None:
        if len(args) == 0:
            raise TypeError("arange() requires stop to be specified.")
        start, stop = 0, start
    if start is None:
        start = 0
    if step is None:
        step = 1
    start, stop, step = _scalar_param(start), _scalar_param(stop), _scalar_param(step)
    if dtype is None:
        # NumPy starts from the default integer and promotes by each bound's own dtype.
        dtype = np.result_type(np.intp, *(np.asarray(v).dtype for v in (start, stop, step)))
    return Bound(arange, (), {"start": start, "stop": stop, "step": step,
                              "dtype": np.dtype(dtype)})


spell(np.arange, arange, _arange_normalize, "numpy.arange")


def _linspace_dtype(start: Any, stop: Any) -> np.dtype:
    """np.linspace's computation dtype: the promoted dtype of start and stop (Python
    scalars weak, NEP 50), made inexact."""
    tokens = [v if isinstance(v, (bool, int, float)) else _dtype_of(v) for v in (start, stop)]
    dt = np.result_type(*tokens)
    return dt if dt.kind in "fc" else np.result_type(dt, 1.0)


def _linspace_meta(start, stop, num, endpoint, dtype, axis):
    b = tuple(np.broadcast_shapes(tuple(shape_of(start)), tuple(shape_of(stop))))
    ax = normalize_one_axis(axis, len(b) + 1)
    return TensorMeta(b[:ax] + (num,) + b[ax:],
                      _linspace_dtype(start, stop) if dtype is None else dtype)


def _linspace_vjp(g, out, start, stop, num, endpoint, dtype, axis):
    # out = start + t * (stop - start) with t = linspace(0, 1, num) along `axis`.
    oshape = tuple(shape_of(g))
    t = F.linspace(0.0, 1.0, num=num, endpoint=endpoint, dtype=np.dtype(g.dtype), axis=0)
    t = F.reshape(t, shape=(num,) + (1,) * (len(oshape) - axis - 1))
    gstop = F.multiply(g, t)
    gstart = F.subtract(g, gstop)
    folded = oshape[:axis] + (1,) + oshape[axis + 1:]
    rest = oshape[:axis] + oshape[axis + 1:]
    return (F.reshape(F.sum_to(gstart, shape=folded), shape=rest),
            F.reshape(F.sum_to(gstop, shape=folded), shape=rest))


linspace = declare("linspace", Category.CREATION,
                   lambda start, stop, num, endpoint, dtype, axis: np.linspace(
                       start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis),
                   inputs=("start", "stop"),
                   params={"num": 50, "endpoint": True, "dtype": None, "axis": 0},
                   meta=_linspace_meta, vjp=_linspace_vjp,
                   doc="numpy.linspace: num evenly spaced samples; start/stop may be arrays")


def _linspace_normalize(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
                        *, device=None):
    _check_common("numpy.linspace", "C", None, device)
    if retstep:
        reject("numpy.linspace", "retstep", retstep, "compute the step as "
               "(stop - start) / (num - 1) (or / num with endpoint=False)")
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start, stop = (v if is_array_entry(v) or isinstance(v, (bool, int, float))
                   else np.asarray(v) for v in (start, stop))
    nd = len(np.broadcast_shapes(tuple(shape_of(start)), tuple(shape_of(stop))))
    # NumPy places the new axis with moveaxis, hence the "destination" in its message.
    axis = normalize_axis_index(axis, nd + 1, "destination")
    return Bound(linspace, (start, stop), {"num": num, "endpoint": bool(endpoint),
                                           "dtype": None if dtype is None else np.dtype(dtype),
                                           "axis": axis})


linspace.runtime_sizes = lambda num, endpoint, dtype, axis: {"num": axis}
spell(np.linspace, linspace, _linspace_normalize, "numpy.linspace")


# -- eye, identity, triu, tril ----------------------------------------------------------

eye = declare("eye", Category.CREATION,
              lambda N, M, k, dtype: np.eye(N, M, k, dtype=dtype), inputs=(),
              params={"N": 1, "M": None, "k": 0, "dtype": np.dtype(float)},
              meta=lambda N, M, k, dtype: TensorMeta(_check_shape((N, N if M is None else M)), dtype),
              doc="numpy.eye(N, M, k, dtype): ones on the k-th diagonal (M None: square)")


def _eye_normalize(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    _check_common("numpy.eye", order, like, device)
    N, = shape_arg((N,))   # (np.zeros((N, M)): a bool is NumPy's TypeError)
    # (M None, not N: one run-time size given once, which may stay a size: runtime_sizes)
    return Bound(eye, (), {"N": N, "M": None if M is None else shape_arg((M,))[0],
                           "k": operator.index(k), "dtype": _dtype_arg(dtype, float)})


def _identity_normalize(n, dtype=None, *, like=None):
    _check_common("numpy.identity", "C", like)
    n, = shape_arg((n,))
    return Bound(eye, (), {"N": n, "M": None, "k": 0, "dtype": _dtype_arg(dtype, float)})


eye.runtime_sizes = lambda N, M, k, dtype: {"N": (0, 1) if M is None else 0, "M": 1}
spell(np.eye, eye, _eye_normalize, "numpy.eye")
spell(np.identity, eye, _identity_normalize, "numpy.identity")


def _tri_meta(kernel):
    def rule(x, k):
        shape = tuple(shape_of(x))
        if len(shape) == 0:
            kernel(fake(x), k)  # NumPy's own error for a 0-d input
            raise ValueError("input must be at least 1-d")
        # A 1-d input is broadcast to a square matrix, as in NumPy.
        return TensorMeta(shape * 2 if len(shape) == 1 else shape, x.dtype)

    return rule


# triu/tril zero a region chosen by index (an iota comparison, like eye): CREATION.
# The 1-d case broadcasts x over rows; fit_grad sums the cotangent back over them.
triu = declare("triu", Category.CREATION, lambda x, k: np.triu(x, k), inputs=("x",),
               params={"k": 0}, meta=_tri_meta(np.triu),
               vjp=lambda g, out, x, k: (F.triu(g, k=k),),
               doc="numpy.triu: zero the elements below the k-th diagonal")
tril = declare("tril", Category.CREATION, lambda x, k: np.tril(x, k), inputs=("x",),
               params={"k": 0}, meta=_tri_meta(np.tril),
               vjp=lambda g, out, x, k: (F.tril(g, k=k),),
               doc="numpy.tril: zero the elements above the k-th diagonal")


def _tri_normalizer(op):
    def normalize(m, k=0):
        if not is_array_entry(m):
            m = np.asarray(m)
        return Bound(op, (m,), {"k": operator.index(k)})

    return normalize


# Compiled: a select on the position against the diagonal (lowering/fills.py lower_tri).
triu.lowering = {"tri": "triu"}
tril.lowering = {"tri": "tril"}

spell(np.triu, triu, _tri_normalizer(triu), "numpy.triu")
spell(np.tril, tril, _tri_normalizer(tril), "numpy.tril")


# -- copy ----------------------------------------------------------------------------------
# A copy is an elementwise identity into a fresh buffer: POINTWISE, never a VIEW (writes
# into the copy must not reach the original). Its layout is NumPy's: ``order`` "C"
# (ndarray.copy's default), "K" (np.copy's: the input's axis order), "A" or "F".

copy = declare("copy", Category.POINTWISE, lambda x, order="C": fresh_copy(x, order),
               inputs=("x",), params={"order": "C"},
               meta=lambda x, order="C": TensorMeta(tuple(shape_of(x)), _dtype_of(x)),
               vjp=lambda g, out, x, order="C": (g,),
               doc="numpy.copy / ndarray.copy: a fresh array with the same values")


def _copy_result_order(xshape: tuple, xstrides: tuple, order: str = "C") -> tuple | None:
    """The copy's memory order (Op.result_order): Fortran for order='F' whatever x's
    layout (C-ordered inputs too, which layout_of's stand-ins skip), x's for 'K' and 'A'."""
    if order == "F":
        return tuple(reversed(range(len(xshape))))
    strides = layout_of(fresh_copy, [Strided(tuple(xshape), tuple(xstrides))], {"order": order}, tuple(xshape))
    return None if strides is None else axis_order(xshape, strides)


copy.result_order = _copy_result_order


# NumPy returns its input itself when it is already C-contiguous, a C-ordered copy
# otherwise: like astype(copy=False), whether it aliases is decided at run time.
def _ascontiguousarray_impl(x: Any) -> Any:
    return namespace(x).ascontiguousarray(x)   # (not dispatched to CuPy by NumPy's protocols)


ascontiguousarray = declare("ascontiguousarray", Category.POINTWISE, _ascontiguousarray_impl, inputs=("x",),
                            meta=lambda x: TensorMeta(tuple(shape_of(x)), _dtype_of(x)), aliases=True,
                            vjp=lambda g, out, x: (g,),
                            doc="numpy.ascontiguousarray: `x` itself when C-contiguous, else a C-ordered copy")
ascontiguousarray.itself_when = "c_contiguous"
ascontiguousarray.lowering = copy.lowering = {"scalar": "identity", "kinds": "fiubc"}  # a copy is a loop


def _np_copy_normalize(a, order="K", subok=False):
    _check_common("numpy.copy", order, orders=("K", "A", "C", "F"))
    return Bound(copy, (a,), {} if order == "C" else {"order": order})


def _method_copy_normalize(x, order="C"):
    _check_common("ndarray.copy", order, orders=("K", "A", "C", "F"))
    if _numpy_scalar(x):   # a NumPy scalar's copy is one (np.copy(s) is a 0-d array)
        return Composite(lambda x: F.getitem(copy(x), ()), (x,))
    return Bound(copy, (x,), {} if order == "C" else {"order": order})


def _ascontiguousarray_normalize(a, dtype=None, *, like=None):
    _check_common("numpy.ascontiguousarray", "C", like)
    if dtype is not None and isinstance(a, (list, tuple)):
        # Python numbers converted to dtype one by one, range-checked, as np.array does
        return Composite(_as_array, (a,), {"dtype": dtype, "ndmin": 1, "order": "C"}, passes_scalars=True)
    if len(shape_of(a)) == 0:
        # NumPy returns at least 1-d here.
        if dtype is not None:
            reject("numpy.ascontiguousarray", "dtype", dtype, "convert with .astype() first")
        return Bound(F.reshape, (a,), {"shape": (1,)})
    if dtype is not None and np.dtype(dtype) != _dtype_of(a):
        return Bound(F.astype, (a,), {"dtype": np.dtype(dtype), "copy": True})
    return Bound(ascontiguousarray, (a,), {})


spell(np.copy, copy, _np_copy_normalize, "numpy.copy")
spell(method_key("copy"), copy, _method_copy_normalize, "ndarray.copy")
spell(np.ascontiguousarray, ascontiguousarray, _ascontiguousarray_normalize, "numpy.ascontiguousarray")


def _asfortranarray_impl(x: Any) -> Any:
    return namespace(x).asfortranarray(x)


asfortranarray = declare("asfortranarray", Category.POINTWISE, _asfortranarray_impl, inputs=("x",),
                         meta=lambda x: TensorMeta(tuple(shape_of(x)), _dtype_of(x)), aliases=True,
                         vjp=lambda g, out, x: (g,),
                         doc="numpy.asfortranarray: `x` itself when F-contiguous, else an F-ordered copy")
asfortranarray.itself_when = "f_contiguous"
# Compiled as the C-ordered copy of the transpose, transposed back: a Fortran-ordered result.
asfortranarray.lowering = {"decompose": lambda x: F.transpose(F.ascontiguousarray(F.transpose(x)))}


def _asfortranarray(a, dtype):
    if dtype is not None and isinstance(a, (list, tuple)):
        a = _as_array(a, dtype=dtype)   # (numbers converted as np.array converts them)
    if len(shape_of(a)) == 0:
        a = F.reshape(a, shape=(1,))     # NumPy returns at least 1-d
    if dtype is not None and np.dtype(dtype) != _dtype_of(a):
        return F.transpose(F.ascontiguousarray(F.astype(F.transpose(a), dtype=np.dtype(dtype), copy=True)))
    # (not transpose(ascontiguousarray(transpose(a))): of an F-contiguous a NumPy returns a
    # itself, which a caller's `is` and writes through the result see)
    return F.asfortranarray(a)


def _asfortranarray_normalize(a, dtype=None, *, like=None):
    _check_common("numpy.asfortranarray", "C", like)
    return Composite(_asfortranarray, (a,), {"dtype": dtype})


spell_composite(np.asfortranarray, ("transpose", "ascontiguousarray", "astype", "asfortranarray"),
                _asfortranarray_normalize, "numpy.asfortranarray", builds_array=True)

ascontiguousarray.layout_dependent = True  # a view of a C-contiguous input, else a copy
asfortranarray.layout_dependent = True  # (of an F-contiguous one)
