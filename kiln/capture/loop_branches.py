"""Control flow inside a loop body: data-dependent ``if``/``else``, ``break`` and ``continue``
(kiln/capture/loop_node.py traces the body).

A body is one graph, traced along every path at once. The trace has an *active*
predicate (``LoopTrace.active``: None while every path runs): a branch on a value the body
computes traces both sides, each under its own predicate, and every value they leave
different becomes ``select(cond, a, b)``. What a side does that a path not taken must not
do is predicated: a store is ``store_elem_if``, an element read's index and the operands
of an operation that may raise (a division, ``int()`` of a float) are replaced by a safe
value where the predicate is false, an inner loop runs zero times there.

A side that ends in ``break`` or ``continue`` (a path that leaves the iteration early) is
an *exit*: its predicate and its locals are recorded (``LoopTrace.exits``) and the rest
of the body is traced under the predicate that the path went on. At the end of the
iteration the carried values are the select of every exit's values and the path that
got there; the predicates of the ``break`` exits become a carried flag, and the loop
ends after the iteration that set it (``LoopBody.brk``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .bytecode_facts import BACKWARD_JUMPS, COND_JUMPS, plain_parts
from .loop_predicates import active_true, as_bool, conj, negate
from .loop_types import FLAG, is_flag
from .loops import LoopFallback, ScalarValueVariable, _type_of, apply_scalar
from .variables.base import ConstantVariable, VariableTracker
from .variables.containers import TupleVariable

# Ops a path under a predicate may hold: each is predicated or cannot fail (see above).
_PREDICATED = frozenset({"scalar_fn", "load_elem", "store_elem_if", "loop", "loop_item"})
_TERMINAL = ("RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE")


class PathEnd(Exception):
    """The path being traced left the iteration (``break``/``continue``); its exit is recorded."""


class Exit:
    def __init__(self, kind: str, pred: Any, locals_: dict, target: int | None) -> None:
        self.kind = kind            # "break", "return" or "next" (continue: on to the next iteration)
        self.pred = pred            # the predicate it was taken under (a tracker)
        self.locals = locals_
        self.target = target        # break: where the code after the loop goes on


# -- stepping a path ---------------------------------------------------------------------

def _steps(instructions: list, k: int, loose: bool):
    """``(opname, arg, target)`` of the instructions from ``k`` on, NOPs left out;
    ``loose``: as their plain steps (bytecode_facts ``plain_parts``)."""
    while k < len(instructions):
        inst = instructions[k]
        k += 1
        if inst.opname == "NOP":
            continue
        if loose and inst.target is None:
            for name, arg in plain_parts(inst.opname, inst.arg):
                yield name, arg, None
        else:
            yield inst.opname, inst.arg, inst.target


def _same_code(tx, a: int, b: int, loose: bool = False) -> bool:
    """Do the instructions from ``a`` and from ``b`` do the same until they return or jump
    (3.12+ copies a short tail after the loop into each ``break``)? ``loose``: spelled
    alike but for 3.13's fused and checked loads (a break's copy of the code after a
    loop that reads its variable)."""
    instructions = tx.decoded.instructions
    for x, y, _ in zip(_steps(instructions, a, loose), _steps(instructions, b, loose), range(64)):
        if x[0] != y[0]:
            return False
        if x[2] is not None or y[2] is not None:
            return x[2] == y[2]
        if x[1] != y[1]:
            return False
        if x[0] in _TERMINAL:
            return True
    return False


def _after_break(tx, trace, q: int) -> int:
    """Where the code after the loop goes on from the ``break`` whose iterator pop is at
    ``q``: the loop's exit, or (a for-else) past the else block."""
    instructions = tx.decoded.instructions
    nxt = q + 1
    if instructions[nxt].opname in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"):
        nxt = instructions[nxt].target
    return _normal_target(tx, trace, nxt)


def _normal_target(tx, trace, where: int) -> int:
    """Where a break goes on (``where``): the loop's exit when the code there is the same;
    past a for-else's else block where that is a copy of the code after the else block.
    Any other place is where Python goes on too (an enclosing loop's head or its own
    break): a for-else block then runs until it gets there."""
    exit = trace.exit
    if where == exit or _same_code(tx, where, exit):
        return exit
    if where > exit:
        return where
    for k in range(exit + 1, len(tx.decoded.instructions)):
        if _same_code(tx, where, k):
            return k
    return where


def step_path(tx, trace) -> None:
    """Run the instruction at ``tx.ip`` of the path being traced; a ``break`` or
    ``continue`` of the loop being traced records its exit and raises :class:`PathEnd`."""
    inst = tx.decoded.instructions[tx.ip]
    own = trace.tx is tx
    if own and inst.opname in ("RETURN_VALUE", "RETURN_CONST"):
        _return(tx, trace, inst)
    if own and trace.iterator is not None and inst.opname == "POP_TOP" \
            and len(tx.stack) == trace.depth and tx.stack[-1] is trace.iterator \
            and not _returns_constant(tx, inst.index + 1):
        end(tx, trace, "break", _after_break(tx, trace, inst.index))
    if own and trace.iterator is None and trace.cont is not None and inst.opname != "NOP" \
            and tx.ip != trace.start and _same_code(tx, tx.ip, trace.exit):
        # 3.12+ copies the code after a while loop into a break (and into nothing else
        # that runs the same until it returns)
        end(tx, trace, "break", trace.exit)
    tx.step(inst)
    if own and trace.iterator is None and trace.cont is not None and not trace.lo <= tx.ip < trace.hi:
        if tx.ip < trace.lo:
            _continue_while(tx, trace)
        end(tx, trace, "break", _normal_target(tx, trace, tx.ip))


def _returns_constant(tx, k: int) -> bool:
    """Does the code at ``k`` return a constant (``return -1`` pops a for loop's iterator
    first, as a break does: 3.11 ``LOAD_CONST; RETURN_VALUE``, 3.12+ ``RETURN_CONST``)?"""
    instructions = tx.decoded.instructions
    if instructions[k].opname == "RETURN_CONST":
        return True
    return instructions[k].opname == "LOAD_CONST" and k + 1 < len(instructions) \
        and instructions[k + 1].opname == "RETURN_VALUE"


def _return(tx, trace, inst) -> None:
    """A ``return`` in the body of the loop being traced: an exit that ends the loop (as a
    break does) with the value it returns (``RET`` in its locals); after the loop node the
    function returns that value where the loop returned (kiln/capture/loop_node.py)."""
    from .loop_returns import RET, RETURNED
    # a for loop's iterator is gone by now (``SWAP 2; POP_TOP`` before the return)
    depth = trace.depth - (trace.iterator is not None) + (inst.opname == "RETURN_VALUE")
    if len(tx.stack) < depth:
        raise LoopFallback("a return inside the body of a nested loop (it leaves both)")
    if len(tx.stack) != depth:
        raise LoopFallback("a return inside the loop body with values left on the stack")
    value = ConstantVariable(inst.arg) if inst.opname == "RETURN_CONST" else tx.stack[-1]
    # a constant of the code (``return -1``), not a local that holds one on this trace
    literal = inst.opname == "RETURN_CONST" or tx.decoded.instructions[inst.index - 1].opname == "LOAD_CONST"
    if trace.iterator is not None and any(v is trace.iterator for v in tx.stack):
        raise LoopFallback("a return inside the loop body that keeps the iterator")
    gives = {RET: value}
    exit_arity = None
    if isinstance(value, TupleVariable) and not literal:   # ``return s, i``: each item
        exit_arity = len(value.item_list)
        gives = {f"{RET}{k}": item for k, item in enumerate(value.item_list)}
    exit = Exit("return", active_true(trace), dict(tx.locals, **gives, **{RETURNED: ConstantVariable(True)}), None)
    exit.literal, exit.arity = literal, exit_arity
    # ``return img`` of a local the loop never rebinds (3.12+ copies the code after a loop
    # into its break): after the node, the local's value (written back) is returned
    prev = tx.decoded.instructions[inst.index - 1]
    exit.local = prev.arg if inst.opname == "RETURN_VALUE" and prev.opname == "LOAD_FAST" \
        and trace.tx is tx and prev.arg not in _stored(tx, trace) else None
    trace.exits.append(exit)
    raise PathEnd()


def _stored(tx, trace) -> set:
    """The locals the loop being traced stores (anywhere in its code)."""
    from .bytecode_facts import local_accesses
    return {var for inst in tx.decoded.instructions[trace.lo:trace.hi]
            for kind, var in local_accesses(inst.opname, inst.arg) if kind == "def"}


def _continue_while(tx, trace) -> None:
    """A ``continue`` in a while loop jumped back to the loop's first test: run the test
    (straight-line code up to its conditional jump, which leaves the loop) and end the
    path there, with the condition it computed as the loop's (``COND`` in its locals)."""
    from .loop_node import COND
    instructions = tx.decoded.instructions
    test = trace.lo - 1
    jump = instructions[test] if test >= 0 else None
    if jump is None or jump.opname not in COND_JUMPS or not jump.opname.endswith(("_TRUE", "_FALSE")) \
            or jump.target <= test or not tx.ip <= test:
        raise LoopFallback("a continue in a while loop that does not go back to its test")
    while tx.ip < test:
        inst = instructions[tx.ip]
        if inst.target is not None or inst.opname in _TERMINAL:
            raise LoopFallback("a continue in a while loop whose test branches")
        tx.step(inst)
        if tx.result is not None or tx.ip > test:
            raise LoopFallback("a continue in a while loop whose test branches")
    if len(tx.stack) != trace.depth + 1:
        raise LoopFallback("a continue in a while loop whose test changes the value stack")
    cond = tx.stack.pop()
    # the first test leaves the loop where its jump is taken: it goes on where not
    if jump.opname.endswith("_FALSE") is not bool(trace.cont):
        raise LoopFallback("a continue in a while loop whose two tests read differently")
    trace.exits.append(Exit("next", active_true(trace), dict(tx.locals, **{COND: cond}), None))
    raise PathEnd()


def end(tx, trace, kind: str, target: int | None) -> None:
    if kind == "next" and trace.cont is not None:
        raise LoopFallback("a continue in a while loop")
    trace.exits.append(Exit(kind, active_true(trace), dict(tx.locals), target))
    raise PathEnd()


def _run_side(tx, trace, stop: int | None, lo: int, hi: int) -> int:
    """Step until ``stop`` (or, with None, until leaving [lo, hi)); returns where. Reaching
    the loop's head is a ``continue`` (an exit); PathEnd: the side left the iteration."""
    own = trace.tx is tx
    while True:
        if tx.result is not None:
            if own:
                raise LoopFallback("a return inside a branch of the loop body")
            # a return in a branch of a function called in the body (``if v > t: return
            # v - t``): its value and path, merged where the function ends (merge_returns)
            tx.__dict__.setdefault("loop_returns", []).append((active_true(trace), tx.result))
            tx.result = None
            raise PathEnd()
        if own and tx.ip == trace.head and trace.iterator is not None:
            end(tx, trace, "next", None)
        if tx.ip == stop or (stop is None and not lo <= tx.ip < hi):
            return tx.ip
        if not lo <= tx.ip < hi:
            raise LoopFallback("a branch of the loop body jumps elsewhere")
        step_path(tx, trace)


# -- data-dependent if/else ----------------------------------------------------------------

def _or_at_bottom(tx, trace, inst) -> int | None:
    """Where the rest of the test goes on when the conditional jump ``inst`` is 3.12+'s
    ``a`` of ``while a or b:`` at the bottom of the while loop being traced: a forward
    jump to ``b`` when ``a`` fails, falling through to a jump back to the body's start."""
    instructions = tx.decoded.instructions
    k = inst.index
    if trace.tx is not tx or trace.iterator is not None or trace.cont is None \
            or not k < inst.target < trace.hi or k + 1 >= len(instructions):
        return None
    following = instructions[k + 1]
    return inst.target if following.opname in BACKWARD_JUMPS and following.target == trace.lo \
        else None


def branch(tx, inst, cond: ScalarValueVariable, when: bool) -> None:
    """``if cond:`` on a value computed in the body (a conditional jump at ``inst``): both
    sides are traced, each under its predicate; every value they leave different becomes
    ``select(cond, a, b)``. A side that breaks or continues is an exit, and the other
    side goes on alone."""
    trace = tx.output.loop_trace
    k, t = inst.index, inst.target
    # a part of the bottom test of the while loop being traced that jumps back to its
    # body's start (3.11 ``while a or b:``: ``a`` holding goes on without testing ``b``)
    again = trace.tx is tx and trace.iterator is None and trace.cont is not None and t == trace.lo
    rest = _or_at_bottom(tx, trace, inst)
    if rest is not None:   # 3.12+'s spelling of it: the 3.11 jump with the other sense
        again, t, when = True, trace.lo, not when
    if t <= k and not (trace.tx is tx and trace.iterator is not None and t == trace.head) and not again:
        raise LoopFallback("a data-dependent backward jump (a while loop in the body)")
    graph = trace.graph
    before = set(map(id, graph.nodes))
    outer = trace.active
    c = as_bool(tx, cond)
    jump_pred = conj(tx, outer, c if when else negate(tx, c))
    fall_pred = conj(tx, outer, negate(tx, c) if when else c)
    stack0, locals0 = list(tx.stack), dict(tx.locals)
    if t <= k:          # a jump back to the head: that side goes on to the next iteration
        from .loop_node import COND
        goes_on = {COND: ConstantVariable(bool(trace.cont))} if again else {}
        trace.exits.append(Exit("next", jump_pred, dict(tx.locals, **goes_on), None))
        trace.active = fall_pred
        if rest is not None:
            tx.ip = rest   # the rest of the test
        return
    if trace.tx is tx and trace.iterator is None and trace.cont is not None and t >= trace.hi:
        # a jump out of the while loop being traced (a part of ``while a and b:``'s test,
        # kiln/capture/loop_heads.py ``_first_of_chain``): that side breaks
        trace.exits.append(Exit("break", jump_pred, dict(tx.locals), _normal_target(tx, trace, t)))
        trace.active = fall_pred
        return
    trace.active = fall_pred
    try:
        join = _run_side(tx, trace, None, k + 1, t)            # the side that falls through
    except PathEnd:
        join = None
    if join is not None and join < t and not (
            join < k and tx.decoded.instructions[join].opname == "FOR_ITER"):
        # (both sides of an if at the end of an unrolled for loop's body jump back to its
        # head, 3.12+ always, 3.11 with an else: they meet there; a jump back anywhere
        # else is a while loop's on a computed test, which would unroll without end)
        raise LoopFallback("an if/else whose sides do not meet")
    fall = (list(tx.stack), dict(tx.locals), trace.active)
    tx.stack, tx.locals = list(stack0), dict(locals0)
    tx.ip = t
    trace.active = jump_pred
    if join is None:                 # the fall side left: the jump side goes on alone
        _check_ops(graph, before)
        return
    if join != t:
        try:
            _run_side(tx, trace, join, t, trace.exit if trace.tx is tx else len(tx.decoded.instructions))
        except PathEnd:              # the jump side left: the fall side goes on alone
            _check_ops(graph, before)
            tx.stack, tx.locals, trace.active = fall
            tx.ip = join
            return
    _check_ops(graph, before)
    jumped = (list(tx.stack), dict(tx.locals), trace.active)
    true_side, false_side = (fall, jumped) if not when else (jumped, fall)
    if len(true_side[0]) != len(false_side[0]):
        raise LoopFallback("an if/else whose sides leave different stacks")
    from .resume import code_facts
    facts = code_facts(tx.code)
    live = facts.live_in[join] if join < len(facts.live_in) else set()
    stack = [_merge(tx, c, a, b) for a, b in zip(true_side[0], false_side[0])]
    merged = {}
    # in the locals' own order, not a set's: the merged values' nodes, and so the body's
    # code and its library's cache key, must be the same in every process (hash seeds)
    for name in dict.fromkeys([*true_side[1], *false_side[1]]):
        a, b = true_side[1].get(name), false_side[1].get(name)
        if a is None or b is None:
            if name in live:
                raise LoopFallback(f"'{name}' is assigned on one side of an if/else only")
            continue
        merged[name] = _merge(tx, c, a, b)
    if true_side[2] is (jump_pred if when else fall_pred) and \
            false_side[2] is (fall_pred if when else jump_pred):
        trace.active = outer            # neither side left early: as before the if
    else:
        trace.active = apply_scalar(tx, "select", [c, true_side[2], false_side[2]])
    tx.stack, tx.locals, tx.ip = stack, merged, join


def run_else(tx, trace, flag: VariableTracker, start: int, target: int) -> None:
    """A for-else (or while-else) inside a body: the else block ``[start, target)`` runs
    where the inner loop did not break (``flag`` false); the code goes on at ``target``."""
    graph = trace.graph
    before = set(map(id, graph.nodes))
    outer = trace.active
    b = as_bool(tx, flag)
    else_pred, skip_pred = conj(tx, outer, negate(tx, b)), conj(tx, outer, b)
    stack0, locals0 = list(tx.stack), dict(tx.locals)
    trace.active = else_pred
    tx.ip = start
    try:
        _run_side(tx, trace, target, start, trace.hi if trace.tx is tx else len(tx.decoded.instructions))
    except PathEnd:                  # the else block leaves the iteration (continue, break)
        _check_ops(graph, before)
        tx.stack, tx.locals, trace.active, tx.ip = stack0, locals0, skip_pred, target
        return
    _check_ops(graph, before)
    if len(tx.stack) != len(stack0):
        raise LoopFallback("an else block that changes the value stack")
    from .resume import code_facts
    facts = code_facts(tx.code)
    live = facts.live_in[target] if target < len(facts.live_in) else set()
    merged = {}
    for name in dict.fromkeys([*locals0, *tx.locals]):   # a fixed order (see branch)
        a, e = locals0.get(name), tx.locals.get(name)
        if a is None or e is None:
            if name in live:
                raise LoopFallback(f"'{name}' is assigned in the else block only")
            continue
        merged[name] = _merge(tx, b, a, e)
    stack = [_merge(tx, b, a, e) for a, e in zip(stack0, tx.stack)]
    if trace.active is not else_pred:
        trace.active = apply_scalar(tx, "select", [b, ConstantVariable(True) if outer is None
                                                   else outer, trace.active])
    else:
        trace.active = outer
    tx.stack, tx.locals, tx.ip = stack, merged, target


def merge_returns(tx, result: VariableTracker, called_under: VariableTracker | None) -> VariableTracker:
    """The value a function called in a loop body returns: ``result`` (the path that ran
    to its end) merged with its returns inside branches, each taken where its path's
    predicate holds; the caller goes on under the predicate it made the call under
    (``called_under``): every path into the function comes out of it. (Rebuilding that
    predicate from the paths' own would add a select: 3.12+ copy a ternary's ``return``
    into both sides, where 3.11's sides meet at one.)"""
    early = tx.__dict__.pop("loop_returns", None)
    if not early:
        return result
    for pred, value in reversed(early):
        result = _merge(tx, pred, value, result)
    tx.output.loop_trace.active = called_under
    return result


def _check_ops(graph: Any, before: set) -> None:
    for node in graph.nodes:
        if id(node) in before or node.kind != "call":
            continue
        if node.target.name not in _PREDICATED:
            raise LoopFallback(f"a data-dependent if/else whose sides do "
                               f"{node.target.name} (only element code is predicated)")


def _merge(tx, cond: VariableTracker, a: VariableTracker, b: VariableTracker) -> VariableTracker:
    if a is b:
        return a
    from .loop_node import _loaded
    if _loaded(a, b) or _loaded(b, a):   # an argument one path read first
        return b if _loaded(a, b) else a
    # an argument that one path rebinds (``n += 1`` on a parameter ``n``) and the other
    # never read: the argument's value is that path's
    a, b = _argument(tx, a), _argument(tx, b)
    ta, tb = _type_of(a), _type_of(b)
    if ta is not None and tb is not None and type(ta) is not type(tb):
        # ``s = 0.0`` before the loop, ``s += x[i]`` on one path only: the carried value
        # takes the NumPy type (traced again with it, kiln/capture/loop_node.py), as a
        # loop that changes a carried value's type on every path does
        a = _widen_where(tx, lambda: cond, a, ta, tb)
        b = _widen_where(tx, lambda: negate(tx, cond), b, tb, ta)
        ta, tb = _type_of(a), _type_of(b)
    if ta is None or tb is None or type(ta) is not type(tb):
        raise LoopFallback("the sides of an if/else leave values of different types "
                           f"({a.describe()}, {b.describe()})")
    return apply_scalar(tx, "select", [cond, a, b])


def _argument(tx, var: VariableTracker) -> VariableTracker:
    """``var`` loaded when it is an argument nothing has read yet (a ``LazyVariable``)."""
    from .variables.base import LazyVariable
    from .variables.builder import wrap
    return wrap(tx, var.value, var.source) if isinstance(var, LazyVariable) else var


_WIDENS = {float: np.float64, int: np.int64, bool: np.bool_}


def _widen(tx, var: VariableTracker, mine: Any, other: Any) -> VariableTracker:
    """A Python float, int or bool met by the NumPy scalar type it becomes on another path."""
    if type(mine) in _WIDENS and type(other) is _WIDENS[type(mine)]:
        out = apply_scalar(tx, f"np.{type(other).__name__}", [var])
        out.node.meta["widened"] = True   # not an op of the body's own (see _signature)
        return out
    return var


def _widen_where(tx, selected: Any, var: VariableTracker, mine: Any, other: Any) -> VariableTracker:
    """:func:`_widen` of a path's value at a merge, predicated on where the select takes it
    (``selected()``), not on the side traced last: ``if v > 2: v = 7`` with ``v`` an
    np.int64 widens the 7 as ``np.int64(select(v > 2, 7, 1))``, not under ``v <= 2``
    (which gave the harmless 1 where the 7 was taken)."""
    trace = tx.output.loop_trace
    if trace is None or trace.active is None or not (type(mine) in _WIDENS and type(other) is _WIDENS[type(mine)]):
        return _widen(tx, var, mine, other)
    active = trace.active
    # a float or bool widens exactly and never raises: no predicate; an int may overflow
    # int64. The predicate's nodes are the widening's, not the body's own (see _signature):
    # a later trace, the value NumPy's already, has none (3.11's ``if v > 0: n += v`` of
    # ``n = 0`` merges the paths inside the body, 3.12's at the loop's back edge: the
    # body's signature differed between its traces on 3.11 alone, and the loop unrolled)
    before = len(trace.graph.nodes)
    trace.active = selected() if type(mine) is int else None
    for node in list(trace.graph.nodes)[before:]:
        node.meta["widening_predicate"] = True
    try:
        return _widen(tx, var, mine, other)
    finally:
        trace.active = active


def _dead(name: str, live: set) -> bool:
    """A user's local (or its NumPy-type flag) that is not live where the iteration ends
    (pseudo names such as the while condition start with ``<``)."""
    base = name[len(FLAG):] if is_flag(name) else name
    return not base.startswith("<") and base not in live


def merge_exits(tx, trace, end: dict | None, live: set) -> tuple[dict, VariableTracker | None]:
    """The iteration's final locals from the path that reached its end (``end``; None when
    every path left early) and the recorded exits; and the break flag (None: no break)."""
    exits = list(trace.exits)
    if end is None:
        if not exits:
            raise LoopFallback("no path of the body reaches its end")
        last = exits.pop()
        end, base_pred = last.locals, last
    else:
        base_pred = None
    out = {}
    for name, value in end.items():
        if _dead(name, live):
            # Nothing reads it again, so its paths need not agree: 3.12+ compile a while
            # loop's first test as a jump straight back to the enclosing loop's head (a
            # continue holding the value before the while), where 3.11 leaves the while
            # and merges the paths first, past the last read.
            continue
        for e in reversed(exits):
            other = e.locals.get(name)
            if other is None:
                if name in live:
                    raise LoopFallback(f"'{name}' is assigned on some paths of the body only")
                value = None
                break
            value = _merge(tx, e.pred, other, value)
        if value is not None:
            out[name] = value
    for e in exits:
        for name in e.locals:
            if name not in end and name in live:
                raise LoopFallback(f"'{name}' is assigned on some paths of the body only")
    # a return ends the loop as a break does (loop_returns tells the two apart by RETURNED)
    ends = ("break", "return")
    base_ends = base_pred is not None and base_pred.kind in ends
    breaks = [e for e in exits if e.kind in ends] + ([base_pred] if base_ends else [])
    flag = None
    if base_ends and not exits:
        flag = ConstantVariable(True)
    elif breaks:
        if base_ends:
            # every other exit is a continue: the loop breaks unless one of those was taken
            flag = ConstantVariable(True)
            for e in exits:
                if e.kind == "next":
                    flag = apply_scalar(tx, "select", [e.pred, ConstantVariable(False), flag])
        else:
            flag = ConstantVariable(False)
            for e in breaks:
                flag = apply_scalar(tx, "select", [e.pred, ConstantVariable(True), flag])
    return out, flag
