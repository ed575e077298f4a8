"""While loops over whole arrays as one ``graph_while`` node (kiln/ops/graph_loops.py).

The convergence loop of numerical codes tests a value the body computes from its arrays:

    diff = rtol + 1; ite = 0
    while diff > rtol and ite < maxiter:       # one graph_while node
        pn = p.copy()
        p[1:-1, 1:-1] = 0.25 * (pn[1:-1, :-2] + pn[1:-1, 2:] + pn[:-2, 1:-1] + pn[2:, 1:-1])
        diff = np.sqrt(np.sum((p - pn) ** 2) / np.sum(pn ** 2))
        ite += 1

When the element loop node (kiln/capture/loop_node.py) declines such a loop, this module
runs one iteration inline in the function's graph, as the range form does
(kiln/capture/graph_loop.py, whose pieces it uses), from the loop's head through its
bottom test; the iteration's calls become the body graph. The test is the bytecode's
chain of conditional jumps (``a and b``, ``a or b``): a jump on a value the graph
computes (a 0-d array, a number computed in the graph) is recorded by :class:`TestChain`
instead of breaking the graph, and the trace falls through to the rest of the test, so
the body computes every value the chain tests; the node's driver tests them with Python's
``bool``, in the bytecode's order (kiln/ops/graph_loops.py ``WhileTests``). Code after
the first recorded jump must only compute (no stores, no writes, nothing that may raise):
Python may skip it, the node runs it.

Where the loop starts:

- at its head (:func:`try_head`), when capture decided its first test (a constant, or a
  guarded run-time number: ``while diff > rtol`` with ``diff = rtol + 1``): the node runs
  the body at least once;
- at a recorded jump outside the body (:func:`try_jump`): the loop's first test on a
  value the graph computed (``while np.sqrt(r @ r) > tol:``), recorded the same way into
  the node's *entry* test, so the node may run zero times; or the test at the bottom of a
  first iteration that ran inline, the node running the rest.

Carried values are the arrays of the range form plus numbers: locals the body stores that
are live at the head or after the loop and hold a Python number (``ite = 0``) become,
before the trace, numbers the graph computes (``scalar_fn`` nodes), so the body computes
with them instead of with their first values; NumPy scalars (``diff``, ``rs = r @ r``)
are graph values already. A number whose type the first trip changes (``l1norm = 1``,
then a float64) is carried with its final type when the body does not read its first
value, or, a Python float the body reads, where the trip traced again with it widened to
float64 is Python's first trip (kiln/capture/loop_types.py ``check_widened``). Lists the body appends to (``errs.append(err)``) are stacked as the range form's
(kiln/capture/loop_lists.py), into rows that grow with the trips the data lets run (a
count known once the loop ran), where the loop runs at least once. What stays as before
(the loop runs inline and breaks at its test, with the reason
in ``explain``): everything the range form refuses, a break, continue or return in the
body, a data-dependent ``if`` in it, names that change places (``u, v = v, u``: where they
end depends on the trip count), and where the loop may run zero times, an argument or an
array others hold that the body rebinds (it must stay the same object), or a number whose
type would then differ after the loop.
"""
from __future__ import annotations

import copy

import numpy as np
from typing import Any

from ..errors import KilnError
from ..ir.graph import iter_nodes
from ..ops import REGISTRY, TensorMeta
from ..ops.graph_loops import GraphLoopBody, WhileTests
from ..ops.loops import stand_in
from .breaks import BreakGraph
from .bytecode_facts import BACKWARD_JUMPS, local_accesses
from .graph_loop import (_State, _trackers, array_result, back_at_head, iteration_calls, lift_body,
                         note_node, reason_of)
from .loop_predicates import may_raise
from .loop_carry import _outer, _root, array_slots, tracked_dims
from .loop_heads import while_heads
from .loop_lists import bind_stacked, counted_rows, stacked_items, take_appends
from .loop_node import _enclosing_value, _loaded, _note, _Snapshot
from .loop_types import LateBound, WidenFirst, bind_late, check_late, check_widened, late_kinds, unbind_late
from .loops import LoopFallback, ScalarValueVariable, _type_of, apply_scalar
from .variables.arrays import ArrayVariable, PyValueVariable, SymScalarVariable
from .variables.base import ConstantVariable


class TestChain:
    """The data-dependent jumps of a while loop's test, recorded where the translator
    would break (``translator.jump_if`` hands them here while ``tx.while_tests`` is set):
    ``tests`` are ``(value, when, go)``; ``locals`` and ``nodes`` are the frame's locals and
    the graph's length at the first one (code after it must only compute)."""

    def __init__(self, head: int, exit: int, back: int) -> None:
        self.head, self.exit, self.back = head, exit, back
        self.tests: list[tuple] = []
        self.locals: dict | None = None
        self.nodes = 0

    def outcome(self, target: int) -> bool | None:
        """Where a jump to ``target`` takes the loop: on (True), out (False), else None."""
        if target in (self.head, self.back):
            return True
        return False if target == self.exit else None

    def take(self, tx, inst, value: Any, when: bool) -> bool:
        go, rest = self.outcome(inst.target), None
        following = tx.decoded.instructions[inst.index + 1] \
            if inst.index + 1 < len(tx.decoded.instructions) else None
        if go is None and following is not None and following.opname in BACKWARD_JUMPS \
                and self.outcome(following.target):
            # 3.12+ ``a or b`` at the bottom: a jump to the rest of the test when ``a``
            # fails, falling through to the jump back (3.11: POP_JUMP_BACKWARD_IF_TRUE to
            # the head, falling through to the rest): that test, the trace going on there
            when, go, rest = not when, True, inst.target
        if go is None or not tested_value(value):
            return False
        if self.locals is None:
            self.locals, self.nodes = dict(tx.locals), len(tx.output.graph.nodes)
        self.tests.append((value, when, go))
        if rest is not None:
            tx.ip = rest
        return True

    def check_pure(self, tx) -> None:
        """Python may skip what follows the first recorded jump: it must only compute."""
        if self.locals is None:
            return
        if any(tx.locals.get(n) is not v and not _loaded(v, tx.locals.get(n))
               for n, v in self.locals.items()) or set(tx.locals) != set(self.locals):
            raise LoopFallback("the while test stores a local after a data-dependent jump")
        for n in tx.output.graph.nodes[self.nodes:]:
            if n.kind == "call" and (n.op.mutates or n.op.state is not None or (
                may_raise(n.kwargs["fn"], n.args[0]) if n.op.name == "scalar_fn" else n.target.raises(n.args, n.kwargs))):
                raise LoopFallback(f"the while test computes {n.op.name} after a data-dependent "
                                   f"jump (it may raise or write; Python may skip it)")

    def decision(self) -> WhileTests:
        return WhileTests(tuple((k, when, go) for k, (_, when, go) in enumerate(self.tests)), True)


def tested_value(value: Any) -> bool:
    """A value whose truth the graph computes: a 0-d array or NumPy scalar, a number."""
    if isinstance(value, ScalarValueVariable):
        return True
    if isinstance(value, PyValueVariable):    # ``loss < tol`` of a float() in the body
        value = value.array
    return isinstance(value, ArrayVariable) and not value.tensor and value.meta.shape == ()


def _node_of(value: Any) -> Any:
    return value.array.node if isinstance(value, PyValueVariable) else value.node


def _run_test(tx, chain: TestChain, lo: int, hi: int, first: bool) -> bool:
    """Step until the loop goes on (head, or 3.12's jump back) or leaves (its exit);
    ``first``: the ip is at an instruction to run even if it is the head."""
    instructions = tx.decoded.instructions
    while True:
        ip = tx.ip
        if not first:
            if ip in (chain.head, chain.back):
                return True
            if ip == chain.exit:
                return False
        first = False
        if not lo <= ip <= hi or tx.result is not None:
            raise LoopFallback("the body leaves the loop (a break, continue or return)")
        tx.step(instructions[ip])


def _loop(tx, head: int) -> tuple:
    """``(bottom, exit, back)`` of the tested while loop at ``head``; back: 3.12's jump
    back after the bottom test (-1 on 3.11, whose bottom test jumps back itself)."""
    bottom, _, exit = while_heads(tx)[head]
    nxt = tx.decoded.instructions[bottom + 1] if bottom + 1 < len(tx.decoded.instructions) else None
    back = bottom + 1 if nxt is not None and nxt.opname in BACKWARD_JUMPS and nxt.target == head else -1
    return bottom, exit, back


def _usable(tx, head: int) -> bool:
    from ..config import config
    if not config.graph_loops or tx.output.loop_trace is not None:
        return False
    bottom, _, _ = while_heads(tx)[head]
    if tx.decoded.instructions[bottom].opname in BACKWARD_JUMPS \
            and tx.decoded.instructions[bottom].target == head:
        return False      # ``while True:`` (a jump back, no test): the element node's
    return True


def try_head(tx, head: int) -> bool:
    """At the head of a while loop whose first test capture decided (it runs at least
    once): every iteration as one node. False: as before (the frame as it was)."""
    if not _usable(tx, head):
        return False
    bottom, exit, back = _loop(tx, head)
    if tx.stop_at is not None and head <= tx.stop_at <= max(bottom, back) + 1:
        return False
    return _attempt(tx, head, bottom, exit, back, None)


def try_jump(tx, inst, value: Any, when: bool) -> bool:
    """At a conditional jump on a value the graph computed that tests a while loop: its
    first test (the node may run zero times) or the bottom test of a first iteration run
    inline (the node runs the rest). False: the jump breaks as before."""
    if not tested_value(value):
        return False
    k = inst.index
    found = None
    for head in sorted(while_heads(tx)):
        if not _usable(tx, head):
            continue
        bottom, exit, back = _loop(tx, head)
        if head <= k <= bottom and inst.target in (head, exit, back):
            found = head                     # innermost: the last one that holds k
        elif k < head and inst.target in (head, exit) and found is None:
            if all(i.opname not in BACKWARD_JUMPS for i in tx.decoded.instructions[k:head]):
                found = head                 # its first test: the nearest loop after k
                break
    if found is None:
        return False
    bottom, exit, back = _loop(tx, found)
    if tx.stop_at is not None and min(k, found) <= tx.stop_at <= max(bottom, back) + 1:
        return False
    return _attempt(tx, found, bottom, exit, back, (inst, value, when))


def _attempt(tx, head: int, bottom: int, exit: int, back: int, jump: tuple | None) -> bool:
    building = tx.__dict__.setdefault("while_building", set())
    if head in building:
        # a jump in the body of the loop being traced that looks like its test (``if c:
        # continue`` jumps to the head): not a second node of the same loop, which would
        # trace the body again inside itself until the recursion limit
        return False
    building.add(head)
    try:
        return _attempt_once(tx, head, bottom, exit, back, jump)
    finally:
        building.discard(head)


def _attempt_once(tx, head: int, bottom: int, exit: int, back: int, jump: tuple | None,
                  widen: tuple = (), late: dict | None = None) -> bool:
    stand_ins = bind_late(tx, late or {})   # (before the snapshot: the trip rebinds them)
    snap = _Snapshot(tx)
    saved = _trackers(tx, snap)
    state = _State(tx, snap, saved)
    outer = tx.__dict__.get("while_tests")
    try:
        _build(tx, head, bottom, exit, back, jump, snap, saved, state, widen)
    except (LoopFallback, BreakGraph, KilnError) as e:
        tx.while_tests = outer
        state.roll_back()
        unbind_late(tx, stand_ins)
        if isinstance(e, WidenFirst) and not widen:
            return _attempt_once(tx, head, bottom, exit, back, jump, e.names, late)
        if isinstance(e, LateBound) and not late:
            return _attempt_once(tx, head, bottom, exit, back, jump, widen, e.late)
        _note(tx, f"not a graph while loop either: {reason_of(e)}")
        return False
    finally:
        tx.while_tests = outer
    return True


def _entry(tx, head: int, bottom: int, exit: int, back: int, jump: tuple | None) -> tuple:
    """``(values, WhileTests)`` of the loop's entry: none and 'on' at its head; else the
    rest of the test the recorded jump starts, run in the function's graph."""
    if jump is None:
        return [], WhileTests((), True)
    inst, value, when = jump
    chain = TestChain(head, exit, back)
    tx.while_tests = chain
    chain.take(tx, inst, value, when)
    tx.ip = inst.index + 1
    fall = _run_test(tx, chain, min(inst.index, head), max(bottom, back), False)
    chain.check_pure(tx)
    tests = chain.decision()
    return [_node_of(v) for v, _, _ in chain.tests], WhileTests(tests.tests, fall)


def stored_live(tx, head: int, bottom: int, live: set) -> list:
    """The locals the body (``head``..``bottom``) stores that are live at the head or
    after the loop and bound now."""
    stored = {var for inst in tx.decoded.instructions[head:bottom + 1]
              for kind, var in local_accesses(inst.opname, inst.arg) if kind == "def"}
    return [n for n in sorted(stored & live) if n in tx.locals]


def _python_number(v: Any) -> bool:
    example = v.value if isinstance(v, ConstantVariable) else getattr(v, "example", None) \
        if isinstance(v, SymScalarVariable) else None
    return example is not None and stand_in(example) is not None and not isinstance(v, ArrayVariable)


def carries_python_numbers(tx, head: int, bottom: int, live: set) -> bool:
    """Does the body store a Python number that is live (``t = t + h``)?"""
    return any(_python_number(tx.locals[n]) for n in stored_live(tx, head, bottom, live))


def _numbers(tx, head: int, bottom: int, live: set, widen: tuple = ()) -> dict:
    """The locals the body stores, live at the head or after the loop, that hold Python
    numbers: each becomes a number the graph computes, so the body computes with it (an
    np.float64 for a float in ``widen``: loop_types.WidenFirst)."""
    made = {}
    held = [id(v) for v in tx.locals.values()]
    for n in stored_live(tx, head, bottom, live):
        v = tx.load_local(n)
        if _is_number(v) and held.count(id(v)) > 1:
            # ``e_prev = e = x.sum()``: one NumPy scalar bound to two names; after
            # ``e_prev, e = e, e / 2`` the traced trip leaves e_prev bound to its own start
            # object (e's) and it looked unchanged. A NumPy scalar cannot be written
            # through, so each name gets a tracker of its own (the same graph value).
            v = tx.locals[n] = copy.copy(v)
        if not _python_number(v):
            continue
        kind = stand_in(v.value if isinstance(v, ConstantVariable) else v.example)
        fn = f"np.{type(kind).__name__}" if type(kind).__module__ == "numpy" else type(kind).__name__
        if n in widen and fn == "float":
            fn = "np.float64"
        made[n] = tx.locals[n] = apply_scalar(tx, fn, [v])
    return made


def _counted(chain: TestChain, made: dict) -> bool:
    """Does the test compute only from numbers that started as constants (the trip count
    capture would know)?"""
    constant = {id(v.node) for v in made.values()
                if all(not hasattr(a, "kind") for a in iter_nodes(v.node.args))}
    seen: set[int] = set()

    def known(node: Any) -> bool:
        if id(node) in constant or id(node) in seen:
            return True
        seen.add(id(node))
        return node.kind == "call" and node.op.name == "scalar_fn" and all(
            known(a) for a in iter_nodes(node.args))
    return all(known(_node_of(v)) for v, _, _ in chain.tests)


def _held(snap: _Snapshot, v: Any) -> bool:
    """Does a container, an object's attribute or a cell hold tracker ``v``?"""
    held = [x for _, items in snap.containers if isinstance(items, (list, dict))
            for x in (items.values() if isinstance(items, dict) else items)]
    held += [x for _, stored in snap.objects for x in stored.values()] + snap.cell_values()
    return any(x is v for x in held)


def _is_number(v: Any) -> bool:
    return isinstance(v, ScalarValueVariable) or (isinstance(v, ArrayVariable) and v.scalar
                                                  and not v.tensor)


def _build(tx, head, bottom, exit, back, jump, snap, saved, state, widen: tuple = ()) -> None:
    from .resume import code_facts
    entry_values, entry = _entry(tx, head, bottom, exit, back, jump)
    facts = code_facts(tx.code)
    live = set(facts.live_in[head]) | set(facts.live_in[exit])
    made = _numbers(tx, head, bottom, live, widen)
    starts = dict(tx.locals)
    before = {id(n) for n in tx.output.graph.nodes}
    chain = TestChain(head, exit, back)
    tx.while_tests = chain
    tx.ip = head
    outer, tx.output.graph_loop_body = tx.output.graph_loop_body, True   # float(loss): loop_lists
    try:
        fall = _run_test(tx, chain, head, max(bottom, back), True)
    finally:
        tx.output.graph_loop_body = outer
    chain.check_pure(tx)
    tx.while_tests = None
    carry_and_emit(tx, head, exit, snap, saved, state, before, live, set(facts.live_in[exit]), starts,
                   made, chain, fall, entry_values, entry, widened=widen)


def carry_and_emit(tx, head, exit, snap, saved, state, before, live, live_after, starts, made,
                   chain, fall, entry_values, entry, what: str = "while loop", widened: tuple = (),
                   unrolls: Any = None, exits: dict | None = None) -> None:
    """The traced trip (``starts``: the locals before it; ``made``: the numbers the graph
    computes, by name; ``chain``/``fall``: its test) as one ``graph_while`` node, once what
    it carries is known (LoopFallback where the loop cannot carry it); ``tx.ip`` at ``exit``.
    The range form with a break (kiln/capture/graph_breaks.py) ends here too; its
    ``unrolls(calls)`` raises LoopFallback where a short body unrolls instead, once the
    appends are taken off (they are no side effect of the node)."""
    appends = take_appends(tx, snap)
    calls = iteration_calls(tx, snap, before, state.unbacked)
    if unrolls is not None:
        unrolls(calls)
    if all(n.op.name == "scalar_fn" for n in calls):
        raise LoopFallback("the body does no array work: it runs as Python")
    if what == "while loop" and not entry.tests and _counted(chain, made):
        # ``n = 0; while n < 10:``: a range loop in disguise, unrolled as before (a graph
        # loop of a known count gains nothing; an elementwise body fuses unrolled)
        raise LoopFallback("its test counts with constants: unrolled as before")
    zero = bool(entry.tests)     # the node may run no trip at all
    # numbers: names whose value is a number before or after the trip
    scalars = [n for n in sorted(live) if n in starts and tx.locals.get(n) is not starts[n]
               and (_is_number(starts[n]) or _is_number(tx.locals.get(n)))]
    for n in scalars:
        if not (_is_number(starts[n]) and _is_number(tx.locals.get(n))):
            raise LoopFallback(f"the loop rebinds '{n}' from {starts[n].describe()} to "
                               f"{tx.locals.get(n).describe() if n in tx.locals else 'nothing'}")
    unbound = [n for n in sorted(live) if n not in starts and n in tx.locals]
    if unbound:
        reason = f"'{unbound[0]}' is assigned in the loop and used after it, but not bound before it"
        late = None if zero else late_kinds(tx, unbound)
        if late is None:
            raise LoopFallback(reason)
        raise LateBound(late, reason)      # traced again with them bound (loop_types.bind_late)
    slots = array_slots(tx, snap, saved, before, calls, live, skip=set(scalars))
    stacks = stacked_items(tx, _Span(head, exit), snap, saved, appends, calls, before, slots.outs,
                           _root, _outer)
    if stacks and zero:
        # np.array of the list after no trip is NumPy's float64 ``(0,)``, whatever the rows
        raise LoopFallback("the body appends to a list and the loop may run no trip")
    for k in slots.keep:
        j = slots.perm[k]
        if j is not None and j != k:
            raise LoopFallback("names change places (u, v = v, u): where they end depends on "
                               "the trip count")
        v = slots.positions[k]
        if zero and j is None and (_held(snap, v) or not (saved[id(v)][1]["fresh"]
                                                          and saved[id(v)][1]["node"].kind == "call")):
            raise LoopFallback(f"the loop may run zero times and rebinds '{slots.names[id(v)][0]}', "
                               f"an array from outside the function (it must stay the same object)")
    read = {id(a) for c in calls for a in iter_nodes(c.args)}
    check_late(starts, tx.locals, read, [item for _, _, item, _ in stacks])
    types, widen = {}, []
    for n in scalars:
        first, last = _type_of(starts[n]), _type_of(tx.locals[n])
        if tx.locals[n].node.kind != "call" or id(tx.locals[n].node) not in {id(c) for c in calls}:
            raise LoopFallback(f"'{n}' is rebound to a value from before the loop")
        if n in widened:
            if zero and n in live_after:
                raise LoopFallback(f"'{n}' changes type in the first trip and the loop may run "
                                   f"zero times: its type after the loop depends on the data")
            check_widened(n, starts[n].node, before,
                          [_node_of(v) for v, _, _ in chain.tests] + [item.node for _, _, item, _ in stacks]
                          + [v.node for v in tx.locals.values() if getattr(v, "node", None) is not None])
        elif type(first) is not type(last):
            if id(starts[n].node) in read and type(first) is float and type(last) is np.float64:
                widen.append(n)     # ``y = 0.05; ...; y -= step``: traced again, widened
            elif id(starts[n].node) in read:
                raise LoopFallback(f"'{n}' changes type in the first trip ({type(first).__name__} -> "
                                   f"{type(last).__name__}); start it with its final type")
            elif zero and n in live_after:
                raise LoopFallback(f"'{n}' changes type in the first trip and the loop may run "
                                   f"zero times: its type after the loop depends on the data")
        types[n] = last
    if widen:
        raise WidenFirst(tuple(widen), f"'{widen[0]}' changes type in the first trip (float -> "
                         f"float64); start it with its final type")
    pairs = exit_pairs(snap, saved, slots, scalars, starts, types, live_after, exits or {})
    _emit(tx, exit, snap, saved, calls, before, slots, scalars, starts, types, chain,
          fall, entry_values, entry, what, stacks, pairs)
    for var in made.values():   # the numbers the trace computed with, where nothing used them
        if not var.node.users and var.node in tx.output.graph.nodes:
            var.node.args = ()
            tx.output.graph.nodes.remove(var.node)


def exit_pairs(snap, saved, slots, scalars: list, starts: dict, types: dict, live_after: set,
               exits: dict) -> tuple:
    """``GraphLoopBody.exits`` of the names rebound after a break (``exits``: name -> its
    tracker at the test): ``(p, q)``, carried value ``p`` ends as carried value ``q`` was
    at the breaking trip's start. Each must be such a start: a carried number's, or a
    carried array's that the trip rebinds (not written in place) and that only that name
    holds, made in the function (the node's copy of it is then as good as it); a
    number's of the type it ends with (the node carries the first value converted)."""
    slot_of, start_of = {}, {}
    for p, k in enumerate(slots.keep):
        v = slots.positions[k]
        start_of[id(v)] = p
        for n in slots.names[id(v)]:
            slot_of[n] = p
    for i, n in enumerate(scalars, start=len(slots.keep)):
        slot_of[n], start_of[id(starts[n])] = i, i
    pairs = []
    for n, held in sorted(exits.items()):
        if n not in live_after:
            continue
        p, q = slot_of.get(n), start_of.get(id(held))
        if p is None or q is None:
            raise LoopFallback(f"'{n}' is rebound after the break's test, and at the test it "
                               f"holds a value the trip computed (only the value it started with "
                               f"is kept)")
        for r in {p, q}:
            if r >= len(slots.keep):
                m = scalars[r - len(slots.keep)]
                if type(_type_of(starts[m])) is not type(types[m]):
                    raise LoopFallback(f"'{n}' is rebound after the break's test, and '{m}' "
                                       f"starts as another type than it ends with")
            else:
                v = slots.positions[slots.keep[r]]
                attrs = saved[id(v)][1]
                if slots.nxt[r][0] != "out" or len(slots.names[id(v)]) != 1 or _held(snap, v) \
                        or not (attrs["fresh"] and attrs["node"].kind == "call"):
                    raise LoopFallback(f"'{n}' is rebound after the break's test from an array "
                                       f"from outside the function, written in place or bound "
                                       f"to other names (the one object must stay where it was)")
        pairs.append((p, q))
    return tuple(pairs)


class _Span:
    """The loop's head and exit, as loop_lists reads a FOR_ITER's (``index``, ``target``)."""

    def __init__(self, head: int, exit: int) -> None:
        self.index, self.target = head, exit


# The example count of a while loop's rows (the trip count is the data's): at least 2, as
# every size known only once the graph ran (sizes 0 and 1 decide broadcasting).
ROWS_HINT = 16


def _emit(tx, exit, snap, saved, calls, before, slots, scalars, starts, types, chain,
          fall, entry_values, entry, what, stacks, exits: tuple = ()) -> None:
    graph = tx.output.graph
    array_starts = slots.starts(saved)
    number_starts = [starts[n].node for n in scalars]
    vals = [s.val for s in array_starts] + [
        TensorMeta((), types[n].dtype) if hasattr(types[n], "dtype") else types[n] for n in scalars]
    outs = list(slots.outs) + [tx.locals[n].node for n in scalars]
    tested = [_node_of(v) for v, _, _ in chain.tests]
    body_graph, operands = lift_body(tx, f"{tx.code.co_name}_graph_while_body",
                                     array_starts + number_starts, slots.carried_names() + scalars,
                                     calls, before, outs + tested + [item.node for _, _, item, _ in stacks],
                                     vals=vals, dims=tracked_dims(saved))
    nxt = tuple(slots.nxt) + tuple(("out", len(slots.outs) + m) for m in range(len(scalars)))
    where = f"{tx.location()[0]}:{tx.location()[1]}"
    tests = chain.decision()
    rows = tuple(TensorMeta((ROWS_HINT,) + item.node.val.shape, item.node.val.dtype)
                 for _, _, item, _ in stacks)
    # (a range loop with a break: the range's own test first, then the break's)
    breaks = WhileTests(tests.tests[1:], fall) if exits else None
    body = GraphLoopBody(body_graph, len(nxt), nxt, where=where,
                         tests=(entry, WhileTests(tests.tests, fall)), stacked=rows,
                         exits=exits, breaks=breaks)
    back_at_head(tx, snap, saved)
    # a number's first value, as the type the loop carries (unread by the body when the
    # types differ: the first trip replaces it)
    inits = list(array_starts)
    for n in scalars:
        inits.append(_enclosing_value(tx, tx.load_local(n), types[n]))
    node = graph.call(REGISTRY["graph_while"], (tuple(entry_values), tuple(inits), tuple(operands)),
                      {"body": body}, val=tuple(vals) + rows, source=tx.location())
    for p, k in enumerate(slots.keep):
        item = graph.call(REGISTRY["loop_item"], (node,), {"index": p}, val=vals[p])
        target = array_result(tx, slots, p, k, slots.perm[k], item)
        for n in slots.names[id(slots.positions[k])]:
            tx.locals[n] = target
    for m, n in enumerate(scalars, start=len(slots.keep)):
        item = graph.call(REGISTRY["loop_item"], (node,), {"index": m}, val=vals[m])
        if isinstance(vals[m], TensorMeta):
            # ``item[()]``: a NumPy scalar, as NumPy's own reductions give (the body's
            # compiled function may hand the loop a 0-d array)
            var = ArrayVariable(graph.call(REGISTRY["getitem"], (item, ()), {}, val=vals[m]))
            var.scalar = True
        else:
            var = ScalarValueVariable(item, vals[m])
        tx.locals[n] = var
    bind_stacked(tx, stacks, slots, [counted_rows(tx, node, len(vals) + j, rows[j], name)
                                     for j, (name, _, _, _) in enumerate(stacks)])
    tx.ip = exit
    carried = ", ".join(slots.carried_names() + scalars) or "nothing"
    note_node(tx, f"graph loop node ({node.name}, {what}: trip count run-time"
                  f"{', at least 1' if not entry.tests else ''}, {len(body_graph.calls)} body "
                  f"ops compiled once, carried: {carried}"
              + "".join(f", stacked: {name}" for name, _, _, _ in stacks) + ")",
              drop="while loop not captured" if what == "while loop" else "loop unrolled")
