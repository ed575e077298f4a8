"""Range loops over whole arrays that end in a data-dependent break, as one ``graph_while``.

The time-stepping loop of numerical codes often stops early on a test of its own data:

    for it in range(maxiter):                      # one graph_while node
        Tn = T.copy()
        T[1:-1, 1:-1] = 0.25 * (Tn[2:, 1:-1] + Tn[:-2, 1:-1] + Tn[1:-1, 2:] + Tn[1:-1, :-2])
        if np.abs(T - Tn).max() < tol:
            break

The range form (kiln/capture/graph_loop.py) has no way to stop early; the while form
(kiln/capture/graph_while.py) does: its node runs the body while the values the body
computes say so (``WhileTests``). So the loop becomes the while loop Python runs: a
counter is carried as a number the graph computes (the loop variable's *next* value,
starting at ``start``, ``+ step`` a trip), tested first (``next < stop``: the range is
done), then the break's test, recorded by :class:`BreakChain` where the translator would
break the graph at it (the jump to the break's iterator pop is "out", the jump back to
``FOR_ITER`` "on"). The body is traced from ``FOR_ITER`` once, with the loop variable a
value nothing may use (as in the range form); its carried values are the while form's
(arrays written or rebound, Python numbers the body stores). After the loop the variable
is ``next - step``: the trip that broke, or the last one. Lists the body appends to (a
loss history: ``losses.append(float(loss))`` before ``if loss < tol: break``) are stacked
as the while form stacks them, one row a trip that ran.

A range loop without a break whose body stores a live Python number (``t = t + h``
beside an RK4 step) takes the same form, its only test the range's: the range form
carries arrays only. A short elementwise one unrolls, as the range form's does.

The node runs at least once: a constant trip count is at least ``MIN_TRIP``, a run-time
one is guarded ``> 0`` (a zero-trip call compiles again and runs as before, so the loop
variable stays unbound or unchanged, as in Python). What stays as before (the loop
unrolls or breaks, noted "not a graph loop with a break either: ..."): everything the
while form refuses; a break that is not the body's last statement, or whose ``if`` is
decided by capture; a for-else (its else block runs only when the loop did not break:
which one is the data's); a run-time step.
"""
from __future__ import annotations

from typing import Any

from ..errors import KilnError
from ..ops.graph_loops import WhileTests
from .breaks import BreakGraph
from .bytecode_facts import BACKWARD_JUMPS
from .graph_loop import LoopVariable, _guard_trips, _State, _trackers, reason_of
from .graph_while import TestChain, _numbers, carries_python_numbers, carry_and_emit, tested_value
from .loop_branches import _same_code
from .loop_node import _note, _Snapshot
from .loop_types import LateBound, WidenFirst, bind_late, unbind_late
from .loops import MIN_TRIP, LoopFallback, LoopIndexVariable, apply_scalar
from .unroll_policy import refuse_unrolled
from .variables.arrays import SymScalarVariable
from .variables.base import ConstantVariable
from .variables.containers import ListVariable

# The carried counter's local (no Python name: the code cannot read or store it).
COUNTER = "<next loop value>"


def break_sites(tx, inst) -> set:
    """The ``POP_TOP`` instructions of the range loop at FOR_ITER ``inst`` that may be a
    ``break`` going on with the code right after the loop (no for-else): 3.11 pops the
    iterator and jumps to the loop's exit; 3.12+ pop it and run a copy of the code after
    the loop, or jump there (``inst.target`` is past 3.12+'s ``END_FOR``: bytecode_facts
    ``decode``); both are followed through unconditional jumps (an inner loop's exit is
    often an outer loop's jump back). Whether the pop is the iterator's is checked when
    the trace gets there."""
    instructions = tx.decoded.instructions

    def landing(k: int) -> int:     # through unconditional jumps (an outer loop's jump back)
        for _ in range(8):
            if instructions[k].opname != "JUMP_FORWARD" and instructions[k].opname not in BACKWARD_JUMPS:
                break
            k = instructions[k].target
        return k
    exit = landing(inst.target)
    found = set()
    for q in range(inst.index + 1, inst.target - 1):
        if instructions[q].opname != "POP_TOP":
            continue
        nxt = landing(q + 1)
        if nxt == exit or _same_code(tx, nxt, exit, loose=True):
            found.add(q)
    return found


class BreakChain(TestChain):
    """The break's test: a jump to a break site leaves the loop, a jump back to
    ``FOR_ITER`` (or to the jump back) goes on; any other jump is not this loop's test."""

    def __init__(self, tx, inst, sites: set, depth: int, iterator: Any) -> None:
        super().__init__(inst.index, -1, -1)
        self.tx, self.sites, self.depth, self.iterator = tx, sites, depth, iterator
        self.lengths: list = []
        self.end = inst.target

    def at_break(self, ip: int) -> bool:
        """Is ``ip`` a break of this loop, the iterator on top of the stack?"""
        tx = self.tx
        return ip in self.sites and len(tx.stack) == self.depth and \
            tx.stack[-1] is self.iterator

    def take(self, tx, inst, value: Any, when: bool) -> bool:
        if self.locals is None:
            # the lists the locals hold, and their lengths, at the first test: an append
            # after it is one Python skips on the trip that breaks (check_appends)
            self.lengths = [(v, len(v.item_list)) for v in tx.locals.values() if isinstance(v, ListVariable)]
        if super().take(tx, inst, value, when):
            return True
        # 3.12+'s ``if a and b: break``: the first jump goes on to the second test, and
        # falling through it decides (a jump back): recorded as the jump not taken
        go = self.outcome(inst.index + 1)
        if go is None or not tested_value(value) or not self.head < inst.target < self.end:
            return False
        if self.locals is None:
            self.locals, self.nodes = dict(tx.locals), len(tx.output.graph.nodes)
        self.tests.append((value, not when, go))
        tx.ip = inst.target
        return True

    def check_appends(self) -> None:
        """``if acc.sum() > 3: break`` then ``out.append(...)``: the node would append on the
        trip that breaks too (fuzz seed 724: ``[8]`` where Python gives ``[]``)."""
        if any(len(v.item_list) != n for v, n in self.lengths):
            raise LoopFallback("the body appends to a list after the break's test (the break "
                               "is not its last statement)")

    def outcome(self, target: int) -> bool | None:
        instructions = self.tx.decoded.instructions
        if target == self.head or (instructions[target].opname in BACKWARD_JUMPS
                                   and instructions[target].target == self.head):
            return True
        return False if self.at_break(target) else None


def try_break_loop(tx, inst, it) -> bool:
    """The range loop at FOR_ITER ``inst``, ending in ``if <data>: break``, as one
    graph_while node; False: as before (the frame as it was)."""
    from ..config import config
    if tx.output.loop_trace is not None or not config.graph_loops:
        return False
    if tx.stop_at is not None and inst.index <= tx.stop_at < inst.target:
        return False
    sites = break_sites(tx, inst)
    if not sites:
        # no break: the range form carries no Python number (``t = t + h`` beside the
        # array work) and does not read the loop variable; the while form does both, its
        # only test the range's
        from .resume import code_facts
        facts = code_facts(tx.code)
        live = set(facts.live_in[inst.index]) | set(facts.live_in[inst.target])
        if not carries_python_numbers(tx, inst.index, inst.target - 1, live) \
                and not reads_loop_variable(tx, inst):
            return False
    bounds = it.bounds
    for b in bounds:
        if not ((isinstance(b, ConstantVariable) and type(b.value) is int) or
                (isinstance(b, SymScalarVariable) and type(b.example) is int)):
            return False
    if not isinstance(bounds[2], ConstantVariable) or bounds[2].value == 0:
        return False
    values = [b.value if isinstance(b, ConstantVariable) else b.example for b in bounds]
    trips = len(range(*values))
    constant = all(isinstance(b, ConstantVariable) for b in bounds)
    if trips == 0 or (constant and trips < MIN_TRIP):
        return False
    if not _attempt(tx, inst, bounds, sites, ()):
        return False
    if not constant:
        _guard_trips(tx, bounds, {0: None})     # guards len(range(...)) > 0
    # the range form's refusal at this line goes: this node replaces it
    filename, lineno, _ = tx.location()
    here = f"{filename.rsplit('/', 1)[-1]}:{lineno}: not a graph loop either"
    tx.output.loop_notes[:] = [n for n in tx.output.loop_notes if not n.startswith(here)]
    return True


def _attempt(tx, inst, bounds: tuple, sites: set, widen: tuple) -> bool:
    """One try at the node (again with ``widen``'s floats widened: loop_types.WidenFirst);
    False: the frame as it was."""
    # (a loop in the body of another being traced: the enclosing loop's counter, put back
    # when this one is done; its body reads that loop's variable as a value from before it)
    enclosing = tx.locals.pop(COUNTER, None)
    try:
        return _attempt_here(tx, inst, bounds, sites, widen, enclosing is not None)
    finally:
        if enclosing is not None:
            tx.locals[COUNTER] = enclosing


def _attempt_here(tx, inst, bounds: tuple, sites: set, widen: tuple, nested: bool,
                  late: dict | None = None) -> bool:
    tx.locals[COUNTER] = bounds[0]     # before the snapshot: the node's first value
    stand_ins = bind_late(tx, late or {})   # (loop_types.LateBound: err = ... in the body)
    snap = _Snapshot(tx)
    saved = _trackers(tx, snap)
    state = _State(tx, snap, saved)
    outer = tx.__dict__.get("while_tests")
    try:
        _build(tx, inst, bounds, sites, snap, saved, state, widen, nested)
    except (LoopFallback, BreakGraph, KilnError) as e:
        tx.while_tests = outer
        state.roll_back()
        tx.locals.pop(COUNTER, None)
        unbind_late(tx, stand_ins)
        if isinstance(e, WidenFirst) and not widen:
            return _attempt_here(tx, inst, bounds, sites, e.names, nested, late)
        if isinstance(e, LateBound) and not late:
            return _attempt_here(tx, inst, bounds, sites, widen, nested, e.late)
        _note(tx, f"not a graph loop with a break either: {reason_of(e)}")
        return False
    finally:
        tx.while_tests = outer
    return True


def rebound_after(tx, chain: BreakChain) -> dict:
    """The locals the trip rebinds after the break's test, name -> the tracker it held at
    the test, where that is all it does there (no operation, no new local, no append);
    else LoopFallback."""
    chain.check_appends()
    if len(tx.output.graph.nodes) != chain.nodes or set(tx.locals) != set(chain.locals):
        raise LoopFallback("the body computes after the break's test (the break is not its "
                           "last statement; with the test at the end of the body, or only "
                           "rebindings after it, the loop is one node)")
    return {n: v for n, v in chain.locals.items() if tx.locals[n] is not v}


def reads_loop_variable(tx, inst) -> bool:
    """Does the body of the range loop at FOR_ITER ``inst`` read its variable (``acc + i``,
    ``t = i * dt``)? (It is live right after FOR_ITER's store of it.)"""
    from .resume import code_facts
    name = loop_variable_name(tx, inst)
    return name is not None and name in code_facts(tx.code).live_in[inst.index + 2]


def loop_variable_name(tx, inst) -> str | None:
    """The local FOR_ITER ``inst`` stores its item in (None: not a plain local)."""
    nxt = tx.decoded.instructions[inst.index + 1]
    return nxt.arg if nxt.opname == "STORE_FAST" and isinstance(nxt.arg, str) else None


def _run_trip(tx, inst, chain: BreakChain, item: Any) -> bool:
    """Trace one trip from FOR_ITER: True where it goes back to the loop's head, False
    where it gets to the break. ``item``: what FOR_ITER pushes, the loop variable."""
    tx.stack.append(item)
    tx.ip = inst.index + 1
    instructions = tx.decoded.instructions
    while True:
        ip = tx.ip
        if ip == inst.index:
            return True
        if chain.at_break(ip):
            return False
        if not inst.index < ip < inst.target or tx.result is not None:
            raise LoopFallback("the body leaves the loop other than by its last statement's break")
        tx.step(instructions[ip])


def _build(tx, inst, bounds: tuple, sites: set, snap, saved, state, widen: tuple,
           nested: bool = False) -> None:
    from .resume import code_facts
    facts = code_facts(tx.code)
    i_name = loop_variable_name(tx, inst)
    if i_name is None:
        raise LoopFallback("the loop variable is not a plain local")
    live_after = set(facts.live_in[inst.target])
    live = (set(facts.live_in[inst.index]) | live_after) - {i_name}
    made = _numbers(tx, inst.index, inst.target - 1, live, widen)
    made[COUNTER] = tx.locals[COUNTER] = apply_scalar(tx, "int", [bounds[0]])
    starts = dict(tx.locals)
    before = {id(n) for n in tx.output.graph.nodes}
    chain = BreakChain(tx, inst, sites, len(snap.stack), snap.stack[-1])
    tx.while_tests = chain
    outer, tx.output.graph_loop_body = tx.output.graph_loop_body, True   # float(loss): loop_lists
    try:
        # the loop variable: the counter's value at the trip's start where the body reads
        # it (one node for every trip count; as a subscript a run-time index,
        # loops.LoopIndexVariable), else a value nothing may use
        item = LoopIndexVariable(tx.locals[COUNTER]) if reads_loop_variable(tx, inst) else LoopVariable()
        fall = _run_trip(tx, inst, chain, item)
    finally:
        tx.output.graph_loop_body = outer
    if not chain.tests and sites:
        raise LoopFallback("no break on a value the graph computes")
    if chain.tests and not sites:
        raise LoopFallback("an if on a value the graph computes ('if i % 10 == 0:' on the loop "
                           "variable, or on the data) that is no select (a side that writes, "
                           "may raise or is not cheap): the while form has no branches")
    if tx.locals.get(i_name) is not item:
        raise LoopFallback("the body rebinds the loop variable")
    exits = {}
    try:
        chain.check_pure(tx)
        chain.check_appends()
    except LoopFallback as e:
        if not str(e).startswith("the while test stores a local"):
            raise
        # ``if np.abs(newC - C).max() < tol: break`` then ``C = newC``: rebindings only
        # (the break's trip skips them: the node gives those names their values at the
        # trip's start, GraphLoopBody.exits); ``g = grad(w); if norm(g) < tol: break; w =
        # w - lr * g`` computes after the test, which the node can only test at the end
        exits = rebound_after(tx, chain)
    tx.while_tests = None
    # (in another counted loop's body it stays a node: unrolled there, the outer body
    # compiles every trip of it, 70 trips of a column pair's distance 16 s to build)
    # (a short body reading the variable unrolls too while its count stays one value: its
    # trips fuse, 80 steps of 1,000 elements 24 us unrolled, 260 as a node whose scalar ops
    # run in its Python wrapper; a call with another count makes it the node)
    unrolls = None if sites or nested else (
        lambda calls: refuse_unrolled(tx, calls, bounds, any_ops=not isinstance(item, LoopVariable)))
    step = bounds[2].value
    nxt = apply_scalar(tx, "add", [tx.locals[COUNTER], ConstantVariable(step)])
    more = apply_scalar(tx, "lt" if step > 0 else "gt", [nxt, bounds[1]])
    tx.locals[COUNTER] = nxt
    # the range first (done: out), then the break's own chain
    chain.tests.insert(0, (more, False, False))
    carry_and_emit(tx, inst.index, inst.target, snap, saved, state, before, live | {COUNTER}, live_after,
                   starts, made, chain, fall, [], WhileTests((), True),
                   what="range loop with a break" if sites else "range loop carrying numbers",
                   widened=widen, unrolls=unrolls, exits=exits)
    last = tx.locals.pop(COUNTER)
    if i_name in live_after:
        tx.locals[i_name] = apply_scalar(tx, "sub", [last, ConstantVariable(step)])
    tx.stack.pop()        # the iterator: FOR_ITER's target is past the loop
    tx.ip = inst.target
