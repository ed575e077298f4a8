"""The predicates (``raises_where``, kiln/ops/fp_errors.py) of ops whose flags come from
several values at once: a reduction's (of its result and of whether a term spoiled it)
and a complex loop's (of the real and imaginary parts). fp_errors.raises_where hands
these kinds of op here; the kinds, bits and tables stay there."""
from __future__ import annotations

from typing import Any

import numpy as np

from .fp_errors import _COMPLEX, DIVIDE, INVALID, OVER, raises_where


def reduce_raises_where(bit: int) -> Any:
    """:func:`fp_errors.raises_where` of a reduction (fp_errors.py ``REDUCES``): its operands are the bools
    "some term was not finite" and "some term was a NaN", its result the reduction's: overflow
    where it is not finite though every term was (finite terms make a NaN only past an
    infinity: ``[1e308] * 2 + [-1e308] * 2`` overflows, then is invalid), invalid where
    it is a NaN of terms that are no NaN. Sound, never spurious; silent for a reduction
    that overflowed beside an infinite term."""
    if bit not in (OVER, INVALID):
        return None

    def where(ops: Any, result: tuple, operands: list) -> Any:
        r, rdt = result
        spoiled = operands[0 if bit == OVER else 1][0]
        made = ops.call("not_equal", [r, r], rdt, np.bool_) if bit == INVALID else \
            ops.call("logical_not", [ops.call("isfinite", [r], rdt, np.bool_)], np.bool_)
        return ops.call("logical_and", [made, ops.call("logical_not", [spoiled], np.bool_)], np.bool_)
    return where


def _parts(ops: Any, v: Any, dt: Any) -> list:
    """``v``'s parts, each ``(value, float dtype)``: a complex value's real and imaginary
    parts, a real value's itself and 0 (a float operand of a complex loop: ``x + 0j``)."""
    dt = np.dtype(dt)
    if dt.kind != "c":
        return [(v, dt), (ops.constant(0, dt), dt)]
    part = np.dtype(dt.char.lower())
    return [(ops.call(p, [v], dt, part), part) for p in ("real", "imag")]


def complex_raises_where(op: str, bit: int) -> Any:
    """:func:`fp_errors.raises_where` of NumPy's complex loops (fp_errors.py ``_COMPLEX``: the kernels' code is
    their formulas), by IEEE's rules on the parts: overflow, an infinite part of finite
    operand parts (a nonzero divisor); invalid, a NaN part of operand parts that are no NaN;
    divide by zero, a zero divisor of a numerator with a finite nonzero part (NumPy's loop
    then divides each part by 0). Sound, never a kind NumPy's loop does not raise; silent
    where NumPy's raises it beside a NaN or infinite part (Smith's ordered compare of a NaN
    divisor part, cexp(1 + NaN j)), checked over edge parts beside NumPy
    (tests/runtime/test_fp_owner_predicates.py)."""
    if not _COMPLEX.get(op, 0) & bit:
        return None

    def where(ops: Any, result: tuple, operands: list) -> Any:
        def fold(fn: str, conds: list) -> Any:
            cond = conds[0]
            for c in conds[1:]:
                cond = ops.call(fn, [cond, c], np.bool_)
            return cond
        r, rdt = result
        if op in ("add", "subtract"):   # part by part: each part's own float predicate
            real = raises_where(op, bit)
            return fold("logical_or", [real(ops, rp, [_parts(ops, v, dt)[k] for v, dt in operands])
                                       for k, rp in enumerate(_parts(ops, r, rdt))])
        ins = [p for v, dt in operands for p in _parts(ops, v, dt)]
        if bit == INVALID:
            made = fold("logical_or", [ops.call("not_equal", [v, v], dt, np.bool_) for v, dt in _parts(ops, r, rdt)])
            return fold("logical_and", [made] + [ops.call("equal", [v, v], dt, np.bool_) for v, dt in ins])
        divisor = _parts(ops, *operands[1]) if op == "true_divide" else []
        zero = fold("logical_and", [ops.call("equal", [v, ops.constant(0, dt)], dt, np.bool_)
                                    for v, dt in divisor]) if divisor else None
        if bit == DIVIDE:
            top = [fold("logical_and", [ops.call("isfinite", [v], dt, np.bool_),
                                        ops.call("not_equal", [v, ops.constant(0, dt)], dt, np.bool_)])
                   for v, dt in _parts(ops, *operands[0])]
            return ops.call("logical_and", [zero, fold("logical_or", top)], np.bool_)
        made = fold("logical_or", [ops.call("isinf", [v], dt, np.bool_) for v, dt in _parts(ops, r, rdt)])
        conds = [made] + [ops.call("isfinite", [v], dt, np.bool_) for v, dt in ins]
        return fold("logical_and", conds + ([ops.call("logical_not", [zero], np.bool_)] if divisor else []))
    return where
