"""where= and initial= of a reduction (``np.sum(x, where=m, initial=1)``): the reduction of a
filled copy, a composite of ops so that it fuses and differentiates, combined with initial
as NumPy does. The mean of a mask also counts the selected elements and gives NumPy's two
warnings where a slice selects nothing. kiln/ops/reduction.py's ``bind`` sends such calls
here."""
from __future__ import annotations

import numpy as np

from . import reduction
from .creation import fits
from .fp_errors import ZERO_BY_ZERO
from .meta import TensorMeta, infer_meta, ndim_of, reject, shape_of
from .numeric import scalar_if_0d
from .registry import Category, Composite, F, declare, is_complex_like, is_float_like
from .value_warnings import call_site, empty_mean_divide, numpy_site

# what a masked-out element holds (max and min: initial, which they require)
WHERE_FILL = {"sum": 0, "prod": 1, "max": None, "min": None, "any": False, "all": True,
              "mean": 0}


# np.mean's "Mean of empty slice" points at its line in NumPy's fromnumeric.py; x.mean()'s
# at the user's (kiln/ops/value_warnings.py numpy_site)
_MEAN_SITE = numpy_site(lambda: np.mean(np.zeros(1), where=False), "Mean of empty slice")


# ---- x[mask].sum(): the selection's own sum ---------------------------------------------------
# NumPy compacts x[mask] (C order) into a new array and adds that pairwise, so the grouping
# of the terms depends on which are selected: np.sum(np.where(m, x, 0)) is another order
# (float32 differs in the last bits). ``selected_sum`` is that sum, whole: its kernel
# writes the selected terms into a scratch buffer in order and adds them in NumPy's pairwise
# order (kiln/lowering/reductions.py lower_selected, cpp_stages.py); elsewhere it is
# NumPy's own x[mask].sum(). Integer sums are exact in any order and stay where-sums.

def _selected_sum_impl(x, mask, dtype=None):
    # (the array's own indexing and sum: NumPy's np.add.reduce, CuPy's on a device)
    if not hasattr(x, "__getitem__"):
        x = np.asarray(x)
    return x[mask].sum(dtype=dtype)


def _selected_sum_meta(x, mask, dtype=None):
    if tuple(shape_of(x)) != tuple(shape_of(mask)):
        raise ValueError("selected_sum: the mask has the shape of x")
    return TensorMeta((), np.add.reduce(np.zeros(1, reduction.dtype_of(x)), dtype=dtype).dtype)


def _selected_sum_vjp(g, out, x, mask, dtype):
    if not (is_float_like(x) or is_complex_like(x)):
        return None, None
    return F.where(mask, reduction.unreduce(g, x, None, False), 0.0), None


selected_sum = declare("selected_sum", Category.REDUCTION, _selected_sum_impl, inputs=("x", "mask"),
                       params={"dtype": None}, meta=_selected_sum_meta, vjp=_selected_sum_vjp,
                       lowering={"reduce": "sum", "select": True},
                       doc="x[mask].sum(dtype=dtype), mask of x's shape: NumPy's order")
selected_sum.complex_grad = True


# ---- np.sum(x, where=m): NumPy's masked loop ---------------------------------------------------
# NumPy's reduction calls the add loop once per run of selected elements (its masked
# strided loop): each run's pairwise sum goes into a running total that starts at the
# identity or initial=, so the grouping depends on where the runs start and end, and is
# neither the compacted selection's (selected_sum) nor the filled copy's. A float or
# complex where-sum is NumPy's own call (an extern of the compiled graph); integer sums
# are exact in any order and stay sums of the filled copy.

def _where_sum_impl(x, where, axis=None, keepdims=False, dtype=None, initial=None):
    extra = {} if initial is None else {"initial": initial}
    return np.sum(x, axis=axis, dtype=dtype, keepdims=keepdims, where=where, **extra)


def _where_sum_meta(x, where, axis=None, keepdims=False, dtype=None, initial=None):
    np.broadcast_shapes(tuple(shape_of(where)), tuple(shape_of(x)))
    return infer_meta(reduction.OPS["sum"], (x,), {"axis": axis, "keepdims": keepdims, "dtype": dtype})


def _where_sum_vjp(g, out, x, where, axis, keepdims, dtype, initial):
    if not (is_float_like(x) or is_complex_like(x)):
        return None, None
    return F.where(where, reduction.unreduce(g, x, axis, keepdims), 0.0), None


where_sum = declare("where_sum", Category.EXTERN, _where_sum_impl, inputs=("x", "where"),
                    params={"axis": None, "keepdims": False, "dtype": None, "initial": None},
                    meta=_where_sum_meta, vjp=_where_sum_vjp,
                    doc="numpy.sum(x, axis, dtype, keepdims=keepdims, where=where, initial=initial)")
where_sum.complex_grad = True


def compacts(x, dtype, mean: bool = False) -> bool:
    """Whether x[mask]'s sum (of its mean) in ``dtype`` is inexact, so that only NumPy's own
    order (selected_sum) gives its bits: a float or complex sum."""
    try:
        sum_dt = np.dtype(dtype) if dtype is not None else \
            np.dtype(np.float64) if mean and reduction.dtype_of(x).kind in "biu" else reduction.dtype_of(x)
    except TypeError:
        return False   # (NumPy's error, from the plain form)
    return sum_dt.kind in "fc"


def where_initial(op, name, a, axis, out, keepdims, where, initial, dtype, extra, compact=False):
    if initial is not None and not isinstance(initial, (bool, int, float, complex, np.generic, np.ndarray)):
        # a value computed at run time (``initial=x.argmax()``): its conversion (cast, range
        # check) is NumPy's, on its value; cast while capturing it took a stand-in's
        # (methods.py seed 3111: a bool min's initial 0 became True)
        reject(name, "initial", "<a value computed at run time>", "it runs as NumPy")
    if op.name in ("max", "min") and where is not None and initial is None:
        raise ValueError(f"reduction operation '{'maximum' if op.name == 'max' else 'minimum'}'"
                         f" does not have an identity, so to use a where mask one has to "
                         f"specify 'initial'")
    if op.name in ("any", "all", "mean") and initial is not None:
        reject(name, "initial", initial, "combine the result with it yourself")
    if where is not None and not hasattr(where, "shape"):
        where = np.asarray(where, dtype=bool)
    if where is not None and not fits(tuple(shape_of(where)), tuple(shape_of(a)), drop_units=False):
        # NumPy broadcasts the mask to the input's shape, never the input to the mask's: a
        # mask of more axes, or longer where the input has length 1, raises NumPy's error
        # (its message names out= too), which the call gives when it runs as Python.
        reject(name, "where", f"<mask of shape {tuple(shape_of(where))}>",
               f"NumPy raises: the mask does not broadcast to the input's shape {tuple(shape_of(a))}")

    def fn(x, w):
        # NumPy converts initial into the reduction's dtype as a single item's write does:
        # 2.5 -> 2 for ints, a 0-d array unsafely, and a number out of its range (a NumPy
        # scalar as its Python value: np.uint8(200) into int8) raises OverflowError
        def cast(dt):
            item = np.empty((), dtype=dt)
            item[()] = initial
            return item[()]
        init = None if initial is None or op.name not in ("max", "min") else cast(reduction.dtype_of(x))
        fill = WHERE_FILL[op.name] if op.name not in ("max", "min") else init
        bound = reduction.bind(op, name, x, axis, None, keepdims, dtype=dtype, **extra)
        # a float sum of a mask: NumPy's own masked loop (its order: where_sum)
        masked_sum = w is not None and op.name in ("sum", "mean") and \
            compacts(x, bound.params["dtype"], op.name == "mean")
        if masked_sum and op.name == "sum":
            return where_sum(x, w, initial=initial, **bound.params)
        filled = x if w is None else F.where(w, x, fill)
        bound = reduction.bind(op, name, filled, axis, None, keepdims, dtype=dtype, **extra)
        if op.name in ("max", "min"):
            # the op's own identity: an empty reduction (a selection of nothing, known only
            # at run time) gives it, as NumPy's
            return bound.op(*bound.inputs, **{**bound.params, "initial": init})
        result = bound.op(*bound.inputs, **bound.params)
        if op.name == "mean" and w is not None:
            shape = tuple(shape_of(x))
            # (a mask of x's own shape, x[m].mean()'s, is counted as it is: broadcast_to
            # would spell x's sizes as numbers, pinning them; relative_sizes below)
            counted = w if tuple(shape_of(w)) == shape else F.broadcast_to(w, shape=shape)
            count = reduction.bind(reduction.OPS["sum"], name, counted, axis, None, keepdims,
                                   dtype=np.intp)
            total = reduction.bind(reduction.OPS["sum"], name, filled, axis, None, keepdims, dtype=bound.params["dtype"])
            # x[m].mean(): the selection's sum (compact), in NumPy's order; np.mean(x,
            # where=m): NumPy's masked sum
            total = selected_sum(x, w, dtype=bound.params["dtype"]) if compact else \
                where_sum(x, w, **total.params) if masked_sum else total.op(*total.inputs, **total.params)
            count = count.op(*count.inputs, **count.params)
            # NumPy's _mean warns once where a slice selects nothing (then 0 / 0: NaN)
            F.warn_if_zero(count, message="Mean of empty slice",
                           site=_MEAN_SITE if name == "numpy.mean" else call_site())
            dt = reduction.dtype_of(result)
            divisor = count
            said = empty_mean_divide(reduction.dtype_of(x), dtype, ndim_of(result) == 0) if dt.kind == "f" else None
            if said is not None:
                # NumPy's 0 / 0 there warns "invalid value" from its own line, as errstate
                # says: the same warning here, and a NaN divisor where the count is zero, so
                # no kernel raises a flag for it (0 / NaN is NaN, quietly)
                F.warn_if_zero(count, message=said[0], site=said[1], fp="invalid")
                divisor = F.where(F.equal(count, 0), ZERO_BY_ZERO, count)
            mean = F.true_divide(total, divisor)
            # NumPy's _mean divides in place (unsafe) into the sum's dtype, float16 back to
            # float16: the dtype the plain mean has (a float32 sum / an intp count is float64)
            return mean if reduction.dtype_of(mean) == dt else F.astype(mean, dtype=dt, copy=True)
        if initial is None:
            return result
        init = cast(reduction.dtype_of(result))
        total = (F.add if op.name == "sum" else F.multiply)(result, init)
        return _negative_zero_start(total, x, init, name, axis, keepdims) if op.name == "sum" else total
    # A mask of x's shape (x[m].mean()'s, np.mean(x, where=m)'s): fn spells no size of x,
    # so one build serves every length (the count divides at run time); a mask that
    # broadcasts is counted at the example's shape
    relative = where is None or tuple(shape_of(where)) == tuple(shape_of(a))
    return Composite(fn, (a, where), {}, reduction.out_param(out), relative_sizes=relative)


# ---- np.sum(x, initial=-0.0): the sign of a zero sum -------------------------------------------
# NumPy adds the terms to initial=; kiln's sum starts at +0.0 as NumPy's does without
# initial, and result + initial is NumPy's value except in one case: the terms' sum is -0.0
# (every term is -0.0, or there is none: IEEE gives -0.0 only for -0.0 + -0.0), which kiln's
# +0.0 start turned into +0.0, and initial is -0.0 too. A part of initial (real, imag) that
# is -0.0 is therefore put back where every term's part is -0.0.

def _negative_zero(v) -> bool:
    return v == 0 and bool(np.signbit(v))


def _negative_zero_start(total, x, init, name, axis, keepdims):
    complex_sum = np.iscomplexobj(init)
    parts = (init.real, init.imag) if complex_sum else (init,)
    if not any(_negative_zero(p) for p in parts):
        return total
    # the terms as NumPy's loop adds them: cast to the sum's dtype (ints give +0.0)
    terms = x if reduction.dtype_of(x) == init.dtype else F.astype(x, dtype=init.dtype)
    pick = (F.real, F.imag) if complex_sum else (None,)
    fixed = []
    for p, part in zip(parts, pick):
        got = total if part is None else part(total)
        if _negative_zero(p):
            t = terms if part is None else part(terms)
            every = reduction.bind(reduction.OPS["all"], name, F.logical_and(F.equal(t, 0), F.signbit(t)),
                                   axis, None, keepdims)
            got = F.where(every.op(*every.inputs, **every.params), p, got)
        fixed.append(got)
    # (np.where's 0-d array: a sum over every axis is a NumPy scalar)
    return scalar_if_0d(F.complex_parts(*fixed) if complex_sum else fixed[0])
