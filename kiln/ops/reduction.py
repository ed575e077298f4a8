"""Reductions (sum, mean, max, argmax, any, ...) and scans (cumsum, cumprod).

Every reduction takes its parameters in one canonical form, produced by the spelling's
normalizer and never by the kernel:

- ``axis``     None (all axes) or a sorted tuple of non-negative ints (argmax, argmin and
               the scans: None or one non-negative int);
- ``keepdims`` a bool;
- ``dtype``    None or an ``np.dtype`` (sum, prod, mean, var, std, cumsum, cumprod);
- ``ddof``     var and std only.

So ``np.sum(x, -1)``, ``x.sum(axis=(1,))`` and ``np.add.reduce(x, 1)`` on a 2-D ``x`` are
the same op call, which is what lets capture and the caches treat them as equal.

Shape rules are explicit; dtype rules run the NumPy kernel on a *sample*: a real array
whose every dimension is clipped to 0 or 1. That is cheap, gives NumPy's own dtype
(``int8`` sum -> ``int64``, ``bool`` mean -> ``float64``), and, because emptiness is
kept, NumPy's own errors for empty reductions (``max`` of nothing).
"""
from __future__ import annotations

import math
import operator
import warnings
from typing import Any, Callable

import numpy as np

from .meta import (TensorMeta, check_dtype, ndim_of, normalize_axis, normalize_one_axis, reject,
                   reject_where, shape_of, count_operand)
from .reduction_where import WHERE_FILL, where_initial
from .registry import (Bound, Category, Composite, F, N, Op, declare, is_complex_like, is_float_like, method_key,
                       spell, ufunc_method_key)

_NV = np._NoValue


# ---- shared helpers -----------------------------------------------------------------------

def dtype_of(x: Any) -> np.dtype:
    dt = getattr(x, "dtype", None)
    if dt is None and isinstance(x, (list, tuple)):
        # NumPy's array of the list: ``np.dot(phi, [h[0], h[1]])`` of float32 items is
        # float32 (of the items' metas themselves, float64: a float32 result read as float64)
        return np.asarray([sample(v) for v in x]).dtype
    return np.dtype(dt) if dt is not None else np.asarray(x).dtype


def sample(x: Any) -> Any:
    """A real stand-in for ``x`` in dtype rules: each dimension clipped to 0 or 1.

    Python scalars stay as they are, so NumPy applies its own scalar rules to them. A
    size symbol (the lowering's, over dynamic sizes) counts as 1: whether a selection's
    count is 0 decides no dtype, and asking raised Undecidable, so ``X[train].mean(0)``
    after np.setdiff1d got a size of its own and met the 4 of X's rows (real20's k-fold
    ridge ran in the NumPy interpreter, 1.2x NumPy).
    """
    if isinstance(x, (bool, int, float)) or x is None:
        return x
    return np.zeros(tuple(min(d, 1) if isinstance(d, (int, np.integer)) else 1 for d in shape_of(x)),
                    dtype_of(x))


def quiet(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """Run a kernel on a sample without its warnings (mean of nothing, ddof >= n, ...)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def reduced_shape(shape: tuple, axis: Any, keepdims: bool) -> tuple:
    axes = range(len(shape)) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def reduced_count(shape: tuple, axis: Any) -> int:
    axes = range(len(shape)) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    return math.prod(shape[i] for i in axes)


def keep(v: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    """A reduction's result (or cotangent) with its reduced axes back as size-1 dims, so
    it broadcasts against the input. Axis None without keepdims is 0-d: it broadcasts."""
    if keepdims or axis is None or axis == ():
        return v
    return F.reshape(v, shape=reduced_shape(shape_of(x), axis, True))


def unreduce(g: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    """The cotangent of a sum, spread back over the input's shape."""
    return F.broadcast_to(keep(g, x, axis, keepdims), shape=shape_of(x))


def _is_legacy_scalar_axis(axis: Any) -> bool:
    try:
        return not isinstance(axis, (tuple, list)) and operator.index(axis) in (0, -1)
    except TypeError:
        return False


def axes_param(axis: Any, x: Any, legacy: bool = True) -> tuple[int, ...] | None:
    nd = ndim_of(x)
    if isinstance(axis, list):  # NumPy's reductions take ints and tuples, not lists
        raise TypeError("'list' object cannot be interpreted as an integer")
    if any(isinstance(a, (bool, np.bool_)) for a in (axis if isinstance(axis, tuple) else (axis,))):
        raise TypeError("an integer is required")   # (NumPy's C reductions refuse bools)
    # The ufunc-based reductions still let a 0-d array be reduced over an *int* axis 0
    # or -1 (mean, var and std do not).
    if legacy and nd == 0 and axis is not None and _is_legacy_scalar_axis(axis):
        return None
    return normalize_axis(axis, nd)


def one_axis_param(axis: Any, x: Any) -> int | None:
    # argmax and the scans see a 0-d input as 1-D (NumPy ravels it): axis 0/-1 is valid
    # there, and errors speak of "dimension 1".
    nd = ndim_of(x)
    if axis is None:
        return None
    axis = normalize_one_axis(axis, max(nd, 1))
    return axis if nd else None


def loop_dtype(a: Any, dtype: Any, out: Any) -> Any:
    """No dtype= but an out=: NumPy's loop promotes the input's dtype with out's (prod of
    ints into a float out does not overflow; a float32 cumsum into float64 is exact)."""
    out = out_param(out)
    if dtype is None and out is not None:
        return np.promote_types(dtype_of(a), dtype_of(out))
    return dtype


def dtype_param(dtype: Any, name: str) -> np.dtype | None:
    return None if dtype is None else check_dtype(dtype, name)


def out_param(out: Any) -> Any:
    if isinstance(out, tuple):  # ufunc methods accept out=(array,)
        if len(out) != 1:
            raise ValueError("The 'out' tuple must have exactly one entry")
        return out[0]
    return out


# the reductions whose ndarray method warns from NumPy's Python (numpy/_core/_methods.py)
_WARNING_METHODS = ("sum", "prod", "mean", "var", "std")


def bind(op: Op, name: str, a: Any, axis: Any, out: Any = None, keepdims: Any = _NV,
         where: Any = _NV, initial: Any = _NV, dtype: Any = None, **extra: Any) -> Bound:
    """The shared tail of every reduction normalizer."""
    masked = where is not _NV and where is not True
    if (masked or initial is not _NV) and op.name in WHERE_FILL:
        return where_initial(op, name, a, axis, out, keepdims, where if masked else None,
                              None if initial is _NV else initial, dtype, extra)
    reject_where(where, name)
    if initial is not _NV:
        reject(name, "initial", initial, "drop initial= and combine the result with it "
               "yourself (e.g. np.maximum(np.max(x), initial))")
    if op.name in ("argmax", "argmin"):  # these take one axis, not a tuple
        axes = one_axis_param(axis, a)
    else:
        axes = axes_param(axis, a, legacy=op.name not in ("mean", "var", "std"))
    params: dict[str, Any] = {"axis": axes,
                              "keepdims": bool(keepdims) if keepdims is not _NV else False}
    out = out_param(out)
    # mean/var/std of ints work in float64 whatever out is; var keeps its own dtype (NumPy
    # computes it in the input's, only the last sum in out's); std's square root is taken
    # in out's dtype (NumPy's _std writes var into out, then takes sqrt there).
    if "dtype" in op.params and op.name != "var" and not (
            op.name in ("mean", "std") and np.dtype(dtype_of(a)).kind in "biu"):
        dtype = loop_dtype(a, dtype, out)
    if "dtype" in op.params:
        params["dtype"] = dtype_param(dtype, name)
    elif dtype is not None and np.dtype(dtype) != (np.dtype(bool) if op.name in ("any", "all")
                                                   else dtype_of(a)):
        # np.maximum.reduce(x, dtype=...) and friends: only the no-op dtype is accepted.
        reject(name, "dtype", dtype, "cast the input or the result with .astype(...) instead")
    params.update(extra)
    # x.sum(), x.mean(), x.var() and friends warn from numpy/_core/_methods.py ("overflow
    # encountered in reduce" at its line), np.sum() and friends at theirs in fromnumeric.py:
    # a NumPy run of the method calls the method (ir/graph.py extern_impl)
    method = op.name if name == f"ndarray.{op.name}" and op.name in _WARNING_METHODS else None
    return Bound(op, (a,), params, out_param(out), method)


# ---- kernels and their rules --------------------------------------------------------------

def _reduction_meta(op_impl: Callable) -> Callable:
    def rule(x: Any, axis: Any = None, keepdims: bool = False, **params: Any) -> TensorMeta:
        result = quiet(op_impl, sample(x), axis=axis, keepdims=keepdims, **params)
        return TensorMeta(reduced_shape(shape_of(x), axis, keepdims), np.asarray(result).dtype)
    return rule


def _sum_vjp(g, out, x, axis, keepdims, dtype):
    return (unreduce(g, x, axis, keepdims) if is_float_like(x) or is_complex_like(x) else None,)


def _mean_vjp(g, out, x, axis, keepdims, dtype):
    if not (is_float_like(x) or is_complex_like(x)):
        return (None,)
    n = reduced_count(shape_of(x), axis)  # 0 only for an empty x, whose gradient is empty
    return (F.true_divide(unreduce(g, x, axis, keepdims), count_operand(n)),)


def _prod_vjp(g, out, x, axis, keepdims, dtype):
    # d prod / d x_i is the product of the others: prod / x_i where x_i != 0; at a zero,
    # the product of the nonzero others when it is the only zero, else 0.
    if not is_float_like(x):
        return (None,)
    gk, outk = keep(g, x, axis, keepdims), keep(out, x, axis, keepdims)
    zero = F.equal(x, 0)
    nonzero_x = F.where(zero, 1.0, x)
    others = F.prod(nonzero_x, axis=axis, keepdims=True, dtype=dtype)
    zeros = F.sum(zero, axis=axis, keepdims=True)
    at_zero = F.where(F.equal(zeros, 1), others, F.multiply(others, 0))
    return (F.multiply(gk, F.where(zero, at_zero, F.true_divide(outk, nonzero_x))),)


def _centered(x, axis, dtype):
    return F.subtract(x, F.mean(x, axis=axis, keepdims=True, dtype=dtype))


def _dof(x, axis, ddof) -> Any:
    """``N - ddof`` as a float (NaN where not positive: NumPy returns nan/inf there; so
    does the gradient), or a dynamic size's operand (count_operand)."""
    return count_operand(reduced_count(shape_of(x), axis), ddof)


def _var_vjp(g, out, x, axis, keepdims, dtype, ddof):
    if not is_float_like(x):
        return (None,)
    dof = _dof(x, axis, ddof)
    if isinstance(dof, float):
        scaled = F.multiply(_centered(x, axis, dtype), 2.0 / dof)
    else:   # a dynamic count: a graph input
        scaled = F.multiply(F.true_divide(_centered(x, axis, dtype), dof), 2.0)
    return (F.multiply(scaled, keep(g, x, axis, keepdims)),)


def _std_vjp(g, out, x, axis, keepdims, dtype, ddof):
    if not is_float_like(x):
        return (None,)
    outk = keep(out, x, axis, keepdims)
    # std == 0 means every x equals the mean: the centered values are 0, so the gradient is.
    safe = F.where(F.equal(outk, 0), 1.0, outk)
    dof = _dof(x, axis, ddof)
    if isinstance(dof, float):
        coef = F.true_divide(keep(g, x, axis, keepdims), F.multiply(safe, dof))
    else:   # a dynamic count: a graph input
        coef = F.true_divide(F.true_divide(keep(g, x, axis, keepdims), safe), dof)
    return (F.multiply(_centered(x, axis, dtype), coef),)


def _extreme_grad(g, out, x, axis, keepdims):
    """Gradient of max/min: to the positions equal to the result, split evenly among ties
    (as JAX and PyTorch's amax do). A NaN result came from the NaN inputs; they share it."""
    hit = F.logical_or(F.equal(x, keep(out, x, axis, keepdims)), F.isnan(x))
    hit = F.astype(hit, dtype=dtype_of(x))
    count = F.sum(hit, axis=axis, keepdims=True)
    return F.multiply(hit, F.true_divide(keep(g, x, axis, keepdims), count))


def _extreme_vjp(g, out, x, axis, keepdims, initial=None):
    if not is_float_like(x):
        return (None,)
    if initial is None:
        return (_extreme_grad(g, out, x, axis, keepdims),)
    # initial is one more candidate: a tie shares g with it, and where it won alone no
    # element gets any (the count is then 1, not 0)
    kept = keep(out, x, axis, keepdims)
    hit = F.astype(F.logical_or(F.equal(x, kept), F.isnan(x)), dtype=dtype_of(x))
    count = F.add(F.sum(hit, axis=axis, keepdims=True), F.astype(F.equal(kept, initial), dtype=dtype_of(x)))
    return (F.multiply(hit, F.true_divide(keep(g, x, axis, keepdims), count)),)


def _ptp_vjp(g, out, x, axis, keepdims):
    if not is_float_like(x):
        return (None,)
    hi = _extreme_grad(g, F.max(x, axis=axis, keepdims=keepdims), x, axis, keepdims)
    lo = _extreme_grad(g, F.min(x, axis=axis, keepdims=keepdims), x, axis, keepdims)
    return (F.subtract(hi, lo),)


_RED = {"axis": None, "keepdims": False}
_RED_DT = {"axis": None, "keepdims": False, "dtype": None}
_VAR = {"axis": None, "keepdims": False, "dtype": None, "ddof": 0}
_EXTREME = {"axis": None, "keepdims": False, "initial": None}


def _initial(initial: Any) -> dict:
    return {} if initial is None else {"initial": initial}

# name -> (kernel, params, vjp, doc)
REDUCTIONS: dict[str, tuple[Callable, dict, Callable | None, str]] = {
    "sum": (lambda x, axis=None, keepdims=False, dtype=None:
            np.sum(x, axis=axis, dtype=dtype, keepdims=keepdims),
            _RED_DT, _sum_vjp, "numpy.sum"),
    "prod": (lambda x, axis=None, keepdims=False, dtype=None:
             np.prod(x, axis=axis, dtype=dtype, keepdims=keepdims),
             _RED_DT, _prod_vjp, "numpy.prod"),
    "mean": (lambda x, axis=None, keepdims=False, dtype=None:
             np.mean(x, axis=axis, dtype=dtype, keepdims=keepdims),
             _RED_DT, _mean_vjp, "numpy.mean"),
    "var": (lambda x, axis=None, keepdims=False, dtype=None, ddof=0:
            np.var(x, axis=axis, dtype=dtype, keepdims=keepdims, ddof=ddof),
            _VAR, _var_vjp, "numpy.var"),
    "std": (lambda x, axis=None, keepdims=False, dtype=None, ddof=0:
            np.std(x, axis=axis, dtype=dtype, keepdims=keepdims, ddof=ddof),
            _VAR, _std_vjp, "numpy.std"),
    # initial: NumPy's identity for an empty reduction (None: none, empty raises)
    "max": (lambda x, axis=None, keepdims=False, initial=None:
            np.max(x, axis=axis, keepdims=keepdims, **_initial(initial)),
            _EXTREME, _extreme_vjp, "numpy.max (amax)"),
    "min": (lambda x, axis=None, keepdims=False, initial=None:
            np.min(x, axis=axis, keepdims=keepdims, **_initial(initial)),
            _EXTREME, _extreme_vjp, "numpy.min (amin)"),
    "ptp": (lambda x, axis=None, keepdims=False: np.ptp(x, axis=axis, keepdims=keepdims),
            _RED, _ptp_vjp, "numpy.ptp: max - min"),
    "any": (lambda x, axis=None, keepdims=False: np.any(x, axis=axis, keepdims=keepdims),
            _RED, None, "numpy.any"),
    "all": (lambda x, axis=None, keepdims=False: np.all(x, axis=axis, keepdims=keepdims),
            _RED, None, "numpy.all"),
    # axis: None or a single int. Integer outputs: no derivative.
    "argmax": (lambda x, axis=None, keepdims=False: np.argmax(x, axis=axis, keepdims=keepdims),
               _RED, None, "numpy.argmax (axis: None or one int)"),
    "argmin": (lambda x, axis=None, keepdims=False: np.argmin(x, axis=axis, keepdims=keepdims),
               _RED, None, "numpy.argmin (axis: None or one int)"),
}

OPS: dict[str, Op] = {}
for _name, (_impl, _params, _vjp, _doc) in REDUCTIONS.items():
    OPS[_name] = declare(_name, Category.REDUCTION, _impl, inputs=("x",), params=dict(_params),
                         meta=_reduction_meta(_impl), vjp=_vjp, doc=_doc)

# What a call costs NumPy, for the cost model (kiln/runtime/cost.py), as a multiple of a
# plain reduction's (x.sum()): NumPy's mean, var and std are Python functions
# (numpy/_core/_methods.py) over several ufunc calls. On 50 elements x.sum() took 1.0 us,
# x.mean() 3.6, x.var() 13.8, x.std() 15.5, and priced as one x.sum() the model ran
# ((a - b) ** 2).mean() as Python at 7.4 us where compiled it takes 2.0.
for _name, _times in (("mean", 3.5), ("var", 13.0), ("std", 14.0)):
    OPS[_name].python_us = lambda node, per_op_us, _times=_times: _times * per_op_us(node)


# ---- scans --------------------------------------------------------------------------------

def _scan_meta(op_impl: Callable) -> Callable:
    def rule(x: Any, axis: int | None = None, dtype: Any = None) -> TensorMeta:
        shape = shape_of(x)
        result = quiet(op_impl, sample(x), axis=axis, dtype=dtype)
        return TensorMeta((math.prod(shape),) if axis is None else shape, np.asarray(result).dtype)
    return rule


def _reverse_cumsum(v, axis: int):
    # sum_{j >= i} v_j along axis: flipping twice keeps the running sums exact (a
    # total-minus-prefix formula would cancel catastrophically in float32).
    return F.flip(F.cumsum(F.flip(v, axis=(axis,)), axis=axis), axis=(axis,))


def _cumsum_vjp(g, out, x, axis, dtype):
    if not is_float_like(x):
        return (None,)
    grad = _reverse_cumsum(g, 0 if axis is None else axis)
    return (F.reshape(grad, shape=shape_of(x)) if axis is None else grad,)


def _cumprod_vjp(g, out, x, axis, dtype):
    # d out_j / d x_i (j >= i) is the product of x_0..x_j but x_i. Before the first zero
    # (f) that is out_j / x_i, and 0 from f on; at f, the running product with that zero
    # taken as 1 (out2); after f, 0 (x_f is among the factors).
    if not is_float_like(x):
        return (None,)
    shape = shape_of(x)
    if axis is None:
        x = F.reshape(x, shape=(math.prod(shape),))
    a = 0 if axis is None else axis
    zero = F.equal(x, 0)
    seen = F.cumsum(zero, axis=a)
    before, first = F.equal(seen, 0), F.logical_and(zero, F.equal(seen, 1))
    out2 = F.cumprod(F.where(first, 1.0, x), axis=a, dtype=dtype)
    grad = F.where(before, F.true_divide(_reverse_cumsum(F.multiply(g, out), a), F.where(before, x, 1.0)),
                   F.where(first, _reverse_cumsum(F.multiply(g, out2), a), F.multiply(g, 0)))
    return (F.reshape(grad, shape=shape) if axis is None else grad,)


def _cumsum_impl(x, axis=None, dtype=None):
    return np.cumsum(x, axis=axis, dtype=dtype)


def _cumprod_impl(x, axis=None, dtype=None):
    return np.cumprod(x, axis=axis, dtype=dtype)


OPS["cumsum"] = declare("cumsum", Category.SCAN, _cumsum_impl, inputs=("x",),
                        params={"axis": None, "dtype": None}, meta=_scan_meta(_cumsum_impl),
                        vjp=_cumsum_vjp, lowering={"scan": "sum"}, doc="numpy.cumsum (axis None: over the flattened input)")
OPS["cumprod"] = declare("cumprod", Category.SCAN, _cumprod_impl, inputs=("x",),
                         params={"axis": None, "dtype": None}, meta=_scan_meta(_cumprod_impl),
                         vjp=_cumprod_vjp, lowering={"scan": "prod"},
                         doc="numpy.cumprod (axis None: over the flattened input)")


# ---- spellings ----------------------------------------------------------------------------
# One normalizer per NumPy signature family; they differ in positional order and defaults.

def _sum_family(op: Op, name: str, default_axis: Any = None) -> Callable[..., Bound]:
    # np.sum / np.prod / ndarray.sum and every ufunc.reduce, whose axis defaults to 0.
    def normalize(a, axis=default_axis, dtype=None, out=None, keepdims=_NV, initial=_NV, where=_NV):
        return bind(op, name, a, axis, out, keepdims, where, initial, dtype)
    return normalize


def _mean_family(op: Op, name: str) -> Callable[..., Bound]:
    def normalize(a, axis=None, dtype=None, out=None, keepdims=_NV, *, where=_NV):
        return bind(op, name, a, axis, out, keepdims, where, dtype=dtype)
    return normalize


def _var_family(op: Op, name: str) -> Callable[..., Bound]:
    def normalize(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NV, *, where=_NV,
                  mean=_NV, correction=_NV):
        if mean is not _NV:
            reject(name, "mean", "<array>", "drop mean= (kiln recomputes the mean)")
        if correction is not _NV:
            if ddof != 0:
                raise ValueError("ddof and correction can't be provided simultaneously.")
            ddof = correction
        return bind(op, name, a, axis, out, keepdims, where, dtype=dtype,
                    ddof=ddof.item() if isinstance(ddof, np.generic) else ddof)
    return normalize


def _max_family(op: Op, name: str) -> Callable[..., Bound]:
    def normalize(a, axis=None, out=None, keepdims=_NV, initial=_NV, where=_NV):
        return bind(op, name, a, axis, out, keepdims, where, initial)
    return normalize


def _any_family(op: Op, name: str) -> Callable[..., Bound]:
    def normalize(a, axis=None, out=None, keepdims=_NV, *, where=_NV):
        return bind(op, name, a, axis, out, keepdims, where)
    return normalize


def check_index_out(out: Any) -> None:
    """np.argmax's (and nanargmax's) out=: NumPy takes a dtype that casts safely to intp
    (an int8 one wraps) and raises TypeError for the rest (a float one)."""
    into = out_param(out)
    if into is not None and hasattr(into, "dtype") and not np.can_cast(dtype_of(into), np.intp, "safe"):
        raise TypeError(f"Cannot cast array data from {dtype_of(into)!r} to {np.dtype(np.intp)!r} "
                        f"according to the rule 'safe'")


def _arg_family(op: Op, name: str) -> Callable[..., Bound]:
    def normalize(a, axis=None, out=None, *, keepdims=_NV):
        check_index_out(out)
        return bind(op, name, a, axis, out, keepdims)
    return normalize


def _ptp_normalize(a, axis=None, out=None, keepdims=_NV):
    return bind(OPS["ptp"], "numpy.ptp", a, axis, out, keepdims)


def scan_axis(axis: Any, x: Any) -> int | None:
    # On a 1-D input flattening is the identity: axis None and 0 are one canonical call.
    axis = one_axis_param(axis, x)
    return 0 if axis is None and ndim_of(x) == 1 else axis


def _scan_family(op: Op, name: str) -> Callable[..., Bound]:
    # (x.cumprod() warns "overflow encountered in accumulate" at the user's line, from
    # NumPy's C method; np.cumprod(x) at its own line in fromnumeric.py)
    method = op.name if name == f"ndarray.{op.name}" else None

    def normalize(a, axis=None, dtype=None, out=None):
        return Bound(op, (a,), {"axis": scan_axis(axis, a),
                                "dtype": dtype_param(loop_dtype(a, dtype, out), name)},
                     out_param(out), method)
    return normalize


def _accumulate_family(op: Op, name: str) -> Callable[..., Bound]:
    # ufunc.accumulate: axis defaults to 0, takes no None and no scalar (NumPy's messages).
    def normalize(array, axis=0, dtype=None, out=None):
        nd = ndim_of(array)
        if isinstance(axis, tuple):
            if len(axis) != 1:
                raise ValueError("accumulate does not allow multiple axes")
            axis = normalize_one_axis(axis[0], nd)
        elif nd == 0:
            raise TypeError("cannot accumulate on a scalar")
        elif axis is None:
            if nd != 1:
                raise ValueError("accumulate does not allow multiple axes")
            axis = 0
        return Bound(op, (array,), {"axis": normalize_one_axis(axis, nd),
                                    "dtype": dtype_param(loop_dtype(array, dtype, out), name)},
                     out_param(out))
    return normalize


def _with_initial(x, op, axis, dtype, initial):
    """np.cumulative_sum(..., include_initial=True): the scan with the identity (0 for a
    sum, 1 for a product) in front along ``axis``."""
    scan = getattr(F, op)(x, axis=axis, dtype=dtype)
    shape = list(shape_of(scan))
    shape[axis] = 1
    return N.concatenate([N.full(tuple(shape), initial, dtype=scan.dtype), scan], axis=axis)


def _cumulative_family(op: Op, name: str, kernel: Callable) -> Callable[..., Bound]:
    # np.cumulative_sum (array API): axis required beyond 1-D; include_initial=True (the
    # identity in front) is a composite of the scan and a concatenate.
    def normalize(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        if include_initial and out is not None:
            reject(name, "include_initial", include_initial, "assign the result instead of out=")
        nd = ndim_of(x)
        kernel(np.zeros((1,) * nd), axis=axis)  # NumPy's own errors for a missing/bad axis
        if isinstance(axis, tuple):
            axis = axis[0]
        params = {"axis": scan_axis(axis, x), "dtype": dtype_param(loop_dtype(x, dtype, out), name)}
        if include_initial:
            return Composite(_with_initial, (x,), {"op": op.name, **params,
                                                   "initial": 0 if op.name == "cumsum" else 1})
        return Bound(op, (x,), params, out_param(out))
    return normalize


def _spell_all(op_name: str, family: Callable, functions: tuple, method: str | None,
               ufunc: np.ufunc | None = None, ufunc_family: Callable = _sum_family) -> None:
    op = OPS[op_name]
    seen = set()
    for fn in functions:
        if id(fn) not in seen:  # np.amax may be np.max in some NumPy versions
            seen.add(id(fn))
            spell(fn, op, family(op, f"numpy.{fn.__name__}"), f"numpy.{fn.__name__}")
    if method is not None:
        spell(method_key(method), op, family(op, f"ndarray.{method}"), f"ndarray.{method}")
    if ufunc is not None:
        kind = "accumulate" if op.category == Category.SCAN else "reduce"
        text = f"numpy.{ufunc.__name__}.{kind}"
        norm = ufunc_family(op, text, 0) if kind == "reduce" else ufunc_family(op, text)
        spell(ufunc_method_key(ufunc, kind), op, norm, text)


_spell_all("sum", _sum_family, (np.sum,), "sum", np.add)
_spell_all("prod", _sum_family, (np.prod,), "prod", np.multiply)
_spell_all("mean", _mean_family, (np.mean,), "mean")
_spell_all("var", _var_family, (np.var,), "var")
_spell_all("std", _var_family, (np.std,), "std")
_spell_all("max", _max_family, (np.max, np.amax), "max", np.maximum)
_spell_all("min", _max_family, (np.min, np.amin), "min", np.minimum)
_spell_all("any", _any_family, (np.any,), "any", np.logical_or)
_spell_all("all", _any_family, (np.all,), "all", np.logical_and)
_spell_all("argmax", _arg_family, (np.argmax,), "argmax")
_spell_all("argmin", _arg_family, (np.argmin,), "argmin")
_spell_all("cumsum", _scan_family, (np.cumsum,), "cumsum", np.add, _accumulate_family)
_spell_all("cumprod", _scan_family, (np.cumprod,), "cumprod", np.multiply, _accumulate_family)
spell(np.ptp, OPS["ptp"], _ptp_normalize, "numpy.ptp")
if hasattr(np, "cumulative_sum"):
    spell(np.cumulative_sum, OPS["cumsum"],
          _cumulative_family(OPS["cumsum"], "numpy.cumulative_sum", np.cumulative_sum),
          "numpy.cumulative_sum")
    spell(np.cumulative_prod, OPS["cumprod"],
          _cumulative_family(OPS["cumprod"], "numpy.cumulative_prod", np.cumulative_prod),
          "numpy.cumulative_prod")


# ---- lowering (kiln/lowering/reductions.py renders these) ---------------------------------
# The combine of each op's accumulation loop. ``finish`` builds the result from float64 sum
# loops and pointwise math: 'mean' (sum / count), 'var' (sum of squared deviations from
# the mean / max(count - ddof, 0)), 'std' (its square root). argmax/argmin combine
# (value, index) pairs: the first NaN wins, then the first of equal values, as in NumPy;
# a renderer that does not list them in ``Renderer.reductions`` leaves them extern calls
# (C++: NumPy's own SIMD argmax). ptp has none: an extern call.
for _name in ("sum", "prod", "max", "min", "any", "all", "argmax", "argmin"):
    OPS[_name].lowering = {"reduce": _name}
for _name in ("mean", "var", "std"):
    OPS[_name].lowering = {"reduce": "sum", "finish": _name}


def _indices_below(x, axis=None, keepdims=False) -> int:
    """argmax/argmin's indices are below the length they run over (all of x when flat)."""
    shape = tuple(x.shape)
    return int(np.prod(shape)) if axis is None else shape[axis]


OPS["argmax"].values_below = OPS["argmin"].values_below = _indices_below

# Linear maps: their rules hold for complex values as written (Op.complex_grad).
F.sum.complex_grad = F.mean.complex_grad = True
