"""Decompositions of NumPy's ufunc loops into other scalar functions where NumPy's own
loop takes a path of its own for some operands (a zero-stride exponent, 0-d clip bounds).
kiln/ops/pointwise.py names them in its ops' ``lowering["when"]``; the renderers spell the
scalar functions they call (kiln/lowering/cpp_ops.py, triton_ops.py)."""
from __future__ import annotations

import numpy as np


def power_runtime_scalar(ops, dt, x, y):
    # NumPy's float power loop, given a scalar exponent (a zero stride), takes fast paths
    # (NumPy >= 2.1, loops_umath_fp.dispatch.c.src): 1 / x for -1, 1 for 0, sqrt for 0.5,
    # x for 1, x * x for 2; pow for the others. They are other values than pow's (x * x
    # and 1 / x round otherwise than NumPy's SIMD pow; (-inf) ** 0.5 is nan and
    # (-0.0) ** 0.5 is -0.0 by sqrt, inf and 0.0 by pow); array exponents take pow. One
    # scalar function whose backends branch on the exponent (C++: out of the loop, so only
    # the path taken is computed and raises flags). Every path computed at every element,
    # selects picking one, a run-time 2.0 cost a pow per element: x ** p on 1e5 float64
    # took 320 us compiled against NumPy's 34.
    return ops.call("power_scalar_exponent", [x, y], dt)


def power_scalar_exponent_selects(ops, dt, x, y):
    # The same paths for a result of a few elements (lowering/pointwise.py): GCC fully
    # unrolls such a loop, and in straight-line code it computes the branches of
    # power_scalar_exponent beside each other (-fno-trapping-math), its guards folded away
    # inside each branch: x.max() ** x.min() of float32 [3e38, 1e-38] warned "overflow"
    # (x * x), NumPy's pow gives 1.0 silently. Here every path is computed at every element
    # and selects pick one, so each path reads x only where its exponent is the one taken,
    # 1.0 elsewhere (raising no flag): sqrt(-10.0) beside (-10.0) ** 2.0 raised "invalid".
    b = np.dtype(bool)
    one = ops.constant(1.0, dt)
    at = {e: ops.call("equal", [y, ops.constant(e, dt)], dt, b) for e in (-1.0, 0.0, 0.5, 1.0, 2.0)}
    fast = at[-1.0]
    for e in (0.0, 0.5, 1.0, 2.0):
        fast = ops.call("logical_or", [fast, at[e]], b, b)

    def only(cond):   # x where ``cond``, else 1.0
        return ops.call("where", [cond, x, one], dt)
    result = ops.call("power", [ops.call("where", [fast, one, x], dt), y], dt)
    paths = ((0.0, lambda: one), (1.0, lambda: x),
             (-1.0, lambda: ops.call("true_divide", [one, only(at[-1.0])], dt)),
             (0.5, lambda: ops.call("sqrt", [only(at[0.5])], dt)),
             (2.0, lambda: ops.call("multiply", [only(at[2.0]), only(at[2.0])], dt)))
    for e, path in paths:
        result = ops.call("where", [at[e], path(), result], dt)
    return result


def clip_keeping_ties(ops, dt, x, lo, hi):
    # NumPy's clip loop with zero-stride (0-d) bounds keeps x on a tie: clip(-0.0, 0, 1) is
    # -0.0; array bounds and a missing bound (maximum/minimum) take the bound: +0.0.
    # The NaN test is on the bound (folded or hoisted), not each element: 1.5x faster at 1e5.
    b = np.dtype(bool)

    def keep(a, bound, past):
        nan_bound = ops.call("logical_and", [ops.call("isnan", [bound], dt, b),
                                             ops.call("logical_not", [ops.call("isnan", [a], dt, b)], b, b)], b, b)
        take = ops.call("logical_or", [ops.call(past, [a, bound], dt, b), nan_bound], b, b)
        return ops.call("where", [take, bound, a], dt)
    return keep(keep(x, lo, "less"), hi, "greater")
