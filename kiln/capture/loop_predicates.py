"""Predicates of the paths a loop body traces, and the safe operands and element indexes a
path not taken computes on (kiln/capture/loop_branches.py traces the paths).

A path under a predicate must not raise, warn or read out of bounds where its predicate
is false: the operands of an operation that may raise or warn become ``select(pred, a, 1)``
(``safe_operands``) and an element index ``select(pred, i, 0)`` (``safe_index``).
"""
from __future__ import annotations

import numpy as np

from ..ops import TensorMeta
from ..ops.loops import NUMPY_NEVER_RAISE, NUMPY_QUIET, SELECT_SAFE, numpy_may_warn
from .loops import LoopFallback, ScalarValueVariable, _type_of, apply_scalar
from .variables.base import ConstantVariable, VariableTracker


def as_bool(tx, cond: VariableTracker) -> VariableTracker:
    return cond if type(_type_of(cond)) is bool else apply_scalar(tx, "bool", [cond])


def negate(tx, pred: VariableTracker) -> VariableTracker:
    return apply_scalar(tx, "select", [pred, ConstantVariable(False), ConstantVariable(True)])


def conj(tx, a: VariableTracker | None, b: VariableTracker) -> VariableTracker:
    return b if a is None else apply_scalar(tx, "and_", [a, b])


def active_true(trace) -> VariableTracker:
    return trace.active if trace.active is not None else ConstantVariable(True)


def may_raise(fn: str, values: tuple) -> bool:
    """Can ``scalar_fn(fn)`` raise on these operands (then a predicated path guards it)?"""
    if fn in SELECT_SAFE:
        return False
    # NumPy scalars never raise on shifts and divisions (they warn): when every operand
    # is one, so is the op.
    return not (fn in NUMPY_NEVER_RAISE and all(
        isinstance(a.val if hasattr(a, "kind") else a, (np.generic, TensorMeta)) for a in values))


def may_warn(fn: str, values: tuple) -> bool:
    """Can ``scalar_fn(fn)`` warn on these operands (NumPy's scalar math: a path not taken
    must not warn either, so it too is guarded)? Python numbers alone never warn; a
    comparison warns only where a Python number meets a float32 (its cast overflows:
    ops/loops.py ``numpy_may_warn``)."""
    vals = tuple(a.val if hasattr(a, "kind") else a for a in values)
    return (fn not in NUMPY_QUIET and any(isinstance(a, (np.generic, TensorMeta)) for a in vals)) \
        or numpy_may_warn(fn, vals)


def _one(var: VariableTracker) -> VariableTracker:
    """A value of ``var``'s type on which no scalar function raises."""
    example = _type_of(var)
    return ConstantVariable(type(example)(1))


def safe_operands(tx, trace, args: list, warn_only: bool = False) -> list:
    """``args`` where the active predicate holds, a harmless 1 of the same type elsewhere.
    ``warn_only``: the operation cannot raise, only warn; a compiled body, which reads its
    floating-point flags and runs the reference where they say NumPy may have warned
    (lowering/loop_runner.py), computes it on the operands themselves."""
    pred = trace.active
    out = [apply_scalar(tx, "select", [pred, a, _one(a)]) for a in args]
    for v in out:
        if isinstance(v, ScalarValueVariable):
            # ``guarded_operand``, what the 1 off the path guards against ("raises" or
            # "warns"), marks the select as kiln's, not the user's: it is of its operand's
            # type (a carried value's, which the first trace may widen), so it is no op of
            # the body's signature (loop_node._signature) and NumPy-typed where its operand
            # is (loop_types); where only warnings are guarded, the kernel computes the
            # operand itself (lowering/loops.py: the flags say the warnings)
            v.node.meta["guarded_operand"] = "warns" if warn_only else "raises"
    return out


def safe_index(tx, trace, shape: tuple, entries: list) -> list:
    """An element index that reads in bounds where the active predicate is false (0 in
    every axis; an array with an empty axis cannot be read at all)."""
    if any(type(d) is not int or d == 0 for d in shape):
        raise LoopFallback("an element read of an array with an empty axis under a "
                           "data-dependent branch")
    out = []
    for e, d in zip(entries, shape):
        if isinstance(e, ConstantVariable) and type(e.value) is int and -d <= e.value < d:
            out.append(e)
        else:
            zero = ConstantVariable(type(_type_of(e))(0))
            out.append(apply_scalar(tx, "select", [trace.active, e, zero]))
    return out
