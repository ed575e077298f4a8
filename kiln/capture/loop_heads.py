"""Where a while loop becomes a loop node: its test, its head, ``while True:``.

The translator calls these at a while loop's conditional jump on a computed value
(:func:`try_while`, :func:`try_while_head`) and at each while loop's head
(:func:`note_head`); :func:`while_heads` finds every while loop of a code object (a
``while True:`` loop's bottom is its jump back, :func:`_endless`). The node itself is
built by kiln/capture/loop_node.py (``_attempt``).
"""
from __future__ import annotations

from .bytecode_facts import BACKWARD_JUMPS, COND_JUMPS, ENDLESS_LOOP_JUMP
from .flow import loop_jumps
from .loop_node import COND, Region, _attempt, _Snapshot
from .loops import _type_of
from .variables.base import ConstantVariable, VariableTracker


def try_while(tx, inst, cond: VariableTracker, when: bool) -> bool:
    """At the conditional jump ``inst`` that ends an iteration of a while loop (3.11's
    backward jump, or a forward exit followed by ``JUMP_BACKWARD``) on a condition the
    graph computes: the remaining iterations as one node (the first one ran inline). The
    body is the code from the loop head to ``inst``; False: the jump breaks as before."""
    k = inst.index
    found = _bottom_test(tx, inst, when)
    if found is not None and tx.decoded.instructions[found[0]].opname == "FOR_ITER":
        found = None   # an if at the end of a for loop's body jumps back to its head
    if found is None and inst.target > k:   # the first test (``while a[k] > 0:``)
        found = _first_test(tx, inst, when)
        if found is not None:
            k = found[3]
    if found is None:
        return False
    head, cont, exit = found[:3]
    if _type_of(cond) is None or isinstance(cond, ConstantVariable):
        return False
    if _encloses_a_trace(tx, head):
        return False   # a jump back to the loop being traced (a continue), not a loop inside it
    if tx.stop_at is not None and head <= tx.stop_at <= k:
        return False
    snap = _Snapshot(tx)
    region = Region(head, k, head, k + 1, exit, cont=cont)
    return _attempt(tx, region, (ConstantVariable(0), ConstantVariable(0), ConstantVariable(1)),
                    snap, {COND: cond}, "while loop not captured")


def try_first_test(tx, inst, cond: VariableTracker, when: bool) -> bool:
    """At a while loop's first test on a run-time value outside any loop body (``err = tol
    + 1.0; while err > tol:``, ``tol`` an argument): every iteration as one node that
    starts from the test's value, so it runs zero times where the test fails and no guard
    decides the test (a guard in Python per call). False: the test is decided by a guard,
    as before (and the loop tried at its head, :func:`note_head`)."""
    if inst.target <= inst.index or isinstance(cond, ConstantVariable) or _type_of(cond) is None \
            or tx.output.loop_trace is not None:
        return False
    found = _first_test(tx, inst, when)
    if found is None:
        return False
    head, cont, exit, bottom = found
    if tx.stop_at is not None and inst.index <= tx.stop_at <= bottom:
        return False
    snap = _Snapshot(tx)
    region = Region(head, bottom, head, bottom + 1, exit, cont=cont)
    return _attempt(tx, region, (ConstantVariable(0), ConstantVariable(0), ConstantVariable(1)),
                    snap, {COND: cond}, "while loop not captured from its first test", arrays_only=True)


def _encloses_a_trace(tx, head: int) -> bool:
    """Would a while loop at ``head`` hold a loop of ``tx`` being traced (inside a body, a
    while loop is a node only when it lies inside every loop of its frame traced)?"""
    trace = tx.output.loop_trace
    while trace is not None:
        if trace.tx is tx and head <= trace.lo:
            return True
        trace = trace.parent
    return False


_HEADS: dict = {}


def while_heads(tx) -> dict:
    """``head -> (bottom test, cont, exit)`` of every while loop in ``tx``'s code; a
    ``while True:`` loop's bottom is its jump back (see :func:`_endless`)."""
    found = _HEADS.get(tx.code)
    if found is None:
        found = {}
        instructions = tx.decoded.instructions
        for inst in instructions:
            if inst.opname in COND_JUMPS and inst.opname.endswith(("_TRUE", "_FALSE")):
                test = _bottom_test(tx, inst, inst.opname.endswith("_TRUE"))
                if test is not None and instructions[test[0]].opname != "FOR_ITER":
                    found[test[0]] = (inst.index, test[1], test[2])
        found.update(_endless(instructions, found))
        _HEADS[tx.code] = found
    return found


def _endless(instructions: list, tested: dict) -> dict:
    """``head -> (jump back, True, exit)`` of the ``while True:`` loops: a plain jump back
    to a head that is no for loop's and no tested while loop's, the last jump there, its
    loop nested properly with every tested one (a 3.11 ``continue`` jumps back to its
    loop's first test, before the head); the loop goes on after its jump back. Only a jump
    the head reaches without an exception: 3.12's handler blocks of a try or with
    statement, placed at the end, jump back to the code after it, which is no loop."""
    last: dict = {}
    loops = set(loop_jumps([i.opname for i in instructions], [i.target for i in instructions]))
    for inst in instructions:
        if inst.opname == ENDLESS_LOOP_JUMP and inst.target is not None and inst.target < inst.index \
                and (inst.target, inst.index) in loops:
            last[inst.target] = inst.index
    found = {}
    for head, bottom in last.items():
        if head in tested or instructions[head].opname == "FOR_ITER":
            continue   # (a loop with nothing after it ends by returning, or raises)
        if any(h != head and (head < h <= bottom < b or h < head <= b < bottom)
               for h, (b, _, _) in tested.items()):
            continue
        if any(i.target is not None and i.opname in BACKWARD_JUMPS and i.target < head < i.index
               and i.index < bottom for i in instructions):
            continue   # the jump back of a loop around the head that ends inside this one
        found[head] = (bottom, True, bottom + 1)
    return found


def note_head(tx, came_from: int) -> bool:
    """The translator is at a while loop's head. Coming from its first test on a run-time
    value (``while err > tol:``, decided by a guard), capture every iteration as one node
    right away (True: done, the translator is past the loop); else coming from above,
    remember the frame state for :func:`try_while_head`; coming back from the loop's own
    test, forget it (the first iteration ran inline). A ``while True:`` loop, reached
    from above, is tried as one node at once."""
    snaps = tx.__dict__.setdefault("head_snaps", {})
    if came_from >= tx.ip:
        snaps[tx.ip] = None
        return False
    snap = snaps[tx.ip] = _Snapshot(tx)
    snap.nodes = len(tx.output.graph.nodes)
    bottom, cont, exit = while_heads(tx)[tx.ip]
    head = tx.ip
    if tx.decoded.instructions[bottom].opname == ENDLESS_LOOP_JUMP and tx.stop_at is None:
        # ``while True:``: only a break ends it, so its body decides the trip count (a
        # first iteration run inline may write before its break's test and could not go
        # back here)
        snaps[head] = None
        region = Region(head, bottom, head, bottom + 1, exit, cont=cont, endless=True)
        return _attempt(tx, region, (ConstantVariable(0), ConstantVariable(0), ConstantVariable(1)),
                        snap, {COND: ConstantVariable(True)}, "while True loop not captured at its head",
                        arrays_only=True)
    if tx.stop_at is not None or came_from != head - 1:
        return False      # not from the loop's own first test
    from .graph_while import try_head
    if came_from != tx.__dict__.get("runtime_test") or tx.decoded.instructions[came_from].target != exit:
        # a first test capture decided on constants: a graph while loop, at least once
        # (element code runs its first iteration inline, see try_while_head)
        if try_head(tx, head):
            snaps[head] = None
            return True
        # element code whose test reads only Python numbers the body rebinds (``while j <
        # n: s += a[j]; j += 1``): its first iteration would run inline and every test
        # after it be a constant too, unrolling the loop to its end
        region = Region(head, bottom, head, bottom + 1, exit, cont=cont)
        if tx.decoded.instructions[came_from].opname in COND_JUMPS and _attempt(
                tx, region, (ConstantVariable(0), ConstantVariable(0), ConstantVariable(1)), snap,
                {COND: ConstantVariable(cont)}, "while loop not captured at its head", arrays_only=True):
            snaps[head] = None
            return True
        return False
    snaps[head] = None
    region = Region(head, bottom, head, bottom + 1, exit, cont=cont)
    return _attempt(tx, region, (ConstantVariable(0), ConstantVariable(0), ConstantVariable(1)),
                    snap, {COND: ConstantVariable(cont)}, "while loop not captured at its head",
                    arrays_only=True) or try_head(tx, head)


def _undoable(tx, snap: _Snapshot) -> bool:
    """Can capture go back to ``snap``: did the first iteration, run inline since, only
    add nodes that compute (left unused, they are dropped), no writes, no loop?"""
    for node in tx.output.graph.nodes[snap.nodes:]:
        if node.kind == "call" and (node.op.mutates or node.op.name in ("loop", "loop_item", "graph_loop",
                                                                        "graph_while")
                                    or str(node.op.category) == "mutation"):
            return False
    return True


def _head_attempt(tx, head: int, bottom: int, cont: bool, exit: int) -> bool:
    """Go back to the head of a while loop whose first iteration ran inline, and capture
    every iteration as one node. False: there is no state to go back to; True: the
    translator goes on from the node, or (the node failed) from the head, inline."""
    snaps = tx.__dict__.get("head_snaps", {})
    snap = snaps.get(head)
    if snap is None or (tx.stop_at is not None and head <= tx.stop_at <= bottom) \
            or not _undoable(tx, snap):
        return False
    snaps[head] = None    # tried once: a failure runs the loop inline again, as before
    snap.restore(tx)
    region = Region(head, bottom, head, bottom + 1, exit, cont=cont,
                    endless=tx.decoded.instructions[bottom].opname == ENDLESS_LOOP_JUMP)
    if not _attempt(tx, region, (ConstantVariable(0), ConstantVariable(0), ConstantVariable(1)),
                    snap, {COND: ConstantVariable(cont)}, "while loop not captured"):
        from .graph_while import try_head
        try_head(tx, head)    # whole-array work: a graph while loop
    return True


def try_while_head(tx, inst, cond: VariableTracker) -> bool:
    """A data-dependent branch at ``inst`` inside the first iteration of a while loop that
    runs inline (``while s < t:`` decided by a guard, then ``if a[i] < 0: break``): go
    back to the loop's head and capture every iteration as one node. False: as before."""
    snaps = tx.__dict__.get("head_snaps", {})
    k = inst.index
    for head in sorted(snaps, reverse=True):
        bottom, cont, exit = while_heads(tx)[head]
        if head <= k < bottom and snaps[head] is not None:
            return _head_attempt(tx, head, bottom, cont, exit)
    return False


def _bottom_test(tx, inst, when: bool) -> tuple | None:
    """``(head, cont, exit)`` when the conditional jump ``inst`` ends a while loop's
    iteration: a backward jump to the head (3.11), or a forward exit followed by a jump
    back (3.12+)."""
    k = inst.index
    instructions = tx.decoded.instructions
    if inst.target <= k:
        return inst.target, when, k + 1
    if k + 1 < len(instructions) and instructions[k + 1].opname in BACKWARD_JUMPS \
            and instructions[k + 1].target <= k:
        return instructions[k + 1].target, not when, inst.target
    return None


def _first_test(tx, inst, when: bool) -> tuple | None:
    """``(head, cont, exit, bottom)`` when the forward conditional jump ``inst`` is a while
    loop's first test: the body starts right after it and one later test (``bottom``)
    jumps back there, going on and leaving the same way."""
    k = inst.index
    instructions = tx.decoded.instructions
    entered = while_heads(tx).get(inst.target)
    if entered is not None and entered[1] is when:
        # 3.12+, a while loop that ends a for loop's body: its first test jumps into the
        # body when it holds and otherwise falls through to a jump back to the for loop's
        # head, where the while loop's exit goes too (3.11 jumps to that exit itself).
        from .resume import code_facts, through_jumps
        bottom, cont, exit = entered
        facts = code_facts(tx.code)
        if through_jumps(facts, k + 1) == through_jumps(facts, exit) and \
                instructions[k + 1].opname in BACKWARD_JUMPS:
            return inst.target, cont, exit, bottom
    for j in range(k + 1, inst.target):
        jump = instructions[j]
        if jump.opname not in COND_JUMPS or not jump.opname.endswith(("_TRUE", "_FALSE")):
            continue
        found = _bottom_test(tx, jump, jump.opname.endswith("_TRUE"))
        if found is not None and found[0] == k + 1:
            head, cont, exit = found
            return (head, cont, exit, j) if cont is (not when) and exit == inst.target else None
    return _first_of_chain(tx, inst, when)


def _first_of_chain(tx, inst, when: bool) -> tuple | None:
    """``while a and b:`` tests each part with its own jump to the exit, before the body
    and again at its bottom. At the first part's jump ``inst``: ``(k + 1, cont, exit,
    bottom)``, an iteration that starts with the first test's other parts (a false one
    breaks) and ends at the bottom test, so the node enters on ``inst``'s condition; a
    later iteration tests those parts again (the values the bottom test just read)."""
    instructions = tx.decoded.instructions
    heads = while_heads(tx)
    for m in range(inst.index + 1, inst.target):
        jump = instructions[m]
        if jump.target is None:
            continue
        if jump.opname != inst.opname or jump.target != inst.target:
            return None   # other control flow before the body (``while a and (b or c):``)
        entered = heads.get(m + 1)
        if entered is not None:
            bottom, cont, exit = entered
            return (inst.index + 1, cont, exit, bottom) \
                if cont is (not when) and exit == inst.target else None
    return None
