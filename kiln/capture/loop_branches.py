"""A data-dependent ``if``/``else`` inside a loop body: both sides traced, then a
``select`` per value they leave different (kiln/capture/loop_node.py traces the body)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import TensorMeta
from ..ops.loops import NUMPY_NEVER_RAISE, SELECT_SAFE
from .loops import LoopFallback, ScalarValueVariable, _type_of, apply_scalar
from .variables.base import VariableTracker


# -- data-dependent if/else in a body: both sides, then a select --------------------------

def _run_path(tx, stop: int | None, lo: int, hi: int) -> int:
    """Step until ``stop`` (or, with None, until leaving [lo, hi)); returns where."""
    instructions = tx.decoded.instructions
    while True:
        if tx.result is not None:
            raise LoopFallback("a return inside a branch of the loop body")
        if tx.ip == stop or (stop is None and not lo <= tx.ip < hi):
            return tx.ip
        if not lo <= tx.ip < hi:
            raise LoopFallback("a branch of the loop body jumps elsewhere (break, continue)")
        tx.step(instructions[tx.ip])


def branch(tx, inst, cond: ScalarValueVariable, when: bool) -> None:
    """``if cond:`` on a value computed in the body (a conditional jump at ``inst``): both
    sides are traced and every value they leave different becomes ``select(cond, a, b)``.
    Sides that write, load or may raise keep the loop unrolled (each side would run on
    every iteration)."""
    trace = tx.output.loop_trace
    k, t = inst.index, inst.target
    if t <= k:
        raise LoopFallback("a data-dependent backward jump (a while loop in the body)")
    head = trace.head if trace.tx is tx else None
    graph = trace.graph
    before = set(map(id, graph.nodes))
    stack0, locals0 = list(tx.stack), dict(tx.locals)
    join = _run_path(tx, None, k + 1, t)            # the side that falls through
    if join != t and join != head and join < t:
        raise LoopFallback("an if/else whose sides do not meet")
    fall = (list(tx.stack), dict(tx.locals))
    tx.stack, tx.locals = list(stack0), dict(locals0)
    tx.ip = t
    if join != t:
        _run_path(tx, join, t, trace.exit if trace.tx is tx else len(tx.decoded.instructions))
    jumped = (list(tx.stack), dict(tx.locals))
    for node in graph.nodes:
        if id(node) in before or node.kind != "call":
            continue
        if node.target.name != "scalar_fn" or not _never_raises(node):
            raise LoopFallback(f"a data-dependent if/else whose sides do more than arithmetic "
                               f"({node.target.name} {node.kwargs.get('fn', '')})".rstrip())
    true_side, false_side = (fall, jumped) if not when else (jumped, fall)
    if len(true_side[0]) != len(false_side[0]):
        raise LoopFallback("an if/else whose sides leave different stacks")
    from .resume import code_facts
    live = code_facts(tx.code).live_in[join] if join < len(code_facts(tx.code).live_in) else set()
    stack = [_merge(tx, cond, a, b) for a, b in zip(true_side[0], false_side[0])]
    merged = {}
    for name in set(true_side[1]) | set(false_side[1]):
        a, b = true_side[1].get(name), false_side[1].get(name)
        if a is None or b is None:
            if name in live:
                raise LoopFallback(f"'{name}' is assigned on one side of an if/else only")
            continue
        merged[name] = _merge(tx, cond, a, b)
    tx.stack, tx.locals, tx.ip = stack, merged, join


def _never_raises(node: Any) -> bool:
    """Can both sides of an if/else run this scalar op on every iteration?"""
    fn = node.kwargs["fn"]
    if fn in SELECT_SAFE:
        return True
    # NumPy scalars never raise on shifts and divisions (they warn): when every operand
    # is one, so is the op.
    return fn in NUMPY_NEVER_RAISE and all(
        isinstance(a.val if hasattr(a, "kind") else a, (np.generic, TensorMeta)) for a in node.args[0])


def _merge(tx, cond: ScalarValueVariable, a: VariableTracker, b: VariableTracker) -> VariableTracker:
    if a is b:
        return a
    ta, tb = _type_of(a), _type_of(b)
    if ta is None or tb is None or type(ta) is not type(tb):
        raise LoopFallback("the sides of an if/else leave values of different types "
                           f"({a.describe()}, {b.describe()})")
    return apply_scalar(tx, "select", [cond, a, b])
