"""where= and initial= of a reduction (``np.sum(x, where=m, initial=1)``): the reduction of a
filled copy, a composite of ops so that it fuses and differentiates, combined with initial
as NumPy does. The mean of a mask also counts the selected elements and gives NumPy's two
warnings where a slice selects nothing. kiln/ops/reduction.py's ``bind`` sends such calls
here."""
from __future__ import annotations

import numpy as np

from . import reduction
from .meta import ndim_of, reject, shape_of
from .registry import Composite, F
from .value_warnings import call_site, empty_mean_divide, numpy_site

# what a masked-out element holds (max and min: initial, which they require)
WHERE_FILL = {"sum": 0, "prod": 1, "max": None, "min": None, "any": False, "all": True,
              "mean": 0}


# np.mean's "Mean of empty slice" points at its line in NumPy's fromnumeric.py; x.mean()'s
# at the user's (kiln/ops/value_warnings.py numpy_site)
_MEAN_SITE = numpy_site(lambda: np.mean(np.zeros(1), where=False), "Mean of empty slice")


def where_initial(op, name, a, axis, out, keepdims, where, initial, dtype, extra):
    if op.name in ("max", "min") and where is not None and initial is None:
        raise ValueError(f"reduction operation '{'maximum' if op.name == 'max' else 'minimum'}'"
                         f" does not have an identity, so to use a where mask one has to "
                         f"specify 'initial'")
    if op.name in ("any", "all", "mean") and initial is not None:
        reject(name, "initial", initial, "combine the result with it yourself")
    if where is not None and not hasattr(where, "shape"):
        where = np.asarray(where, dtype=bool)

    def fn(x, w):
        # NumPy casts initial into the reduction's dtype, unsafely (2.5 -> 2 for ints; a Python
        # int out of its range raises OverflowError, as np.array(300, np.int8) does)
        def cast(dt):
            return np.array(initial, dtype=dt)[()]
        init = None if initial is None or op.name not in ("max", "min") else cast(reduction.dtype_of(x))
        fill = WHERE_FILL[op.name] if op.name not in ("max", "min") else init
        filled = x if w is None else F.where(w, x, fill)
        bound = reduction.bind(op, name, filled, axis, None, keepdims, dtype=dtype, **extra)
        if op.name in ("max", "min"):
            # the op's own identity: an empty reduction (a selection of nothing, known only
            # at run time) gives it, as NumPy's
            return bound.op(*bound.inputs, **{**bound.params, "initial": init})
        result = bound.op(*bound.inputs, **bound.params)
        if op.name == "mean" and w is not None:
            shape = tuple(shape_of(x))
            count = reduction.bind(reduction.OPS["sum"], name, F.broadcast_to(w, shape=shape), axis, None, keepdims,
                         dtype=np.intp)
            total = reduction.bind(reduction.OPS["sum"], name, filled, axis, None, keepdims, dtype=bound.params["dtype"])
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
                divisor = F.where(F.equal(count, 0), np.nan, count)
            mean = F.true_divide(total.op(*total.inputs, **total.params), divisor)
            # NumPy's _mean divides in place (unsafe) into the sum's dtype, float16 back to
            # float16: the dtype the plain mean has (a float32 sum / an intp count is float64)
            return mean if reduction.dtype_of(mean) == dt else F.astype(mean, dtype=dt, copy=True)
        if initial is None:
            return result
        return (F.add if op.name == "sum" else F.multiply)(result, cast(reduction.dtype_of(result)))
    return Composite(fn, (a, where), {}, reduction.out_param(out))
