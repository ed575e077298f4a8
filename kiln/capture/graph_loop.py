"""Time-stepping loops as one ``graph_loop`` node (kiln/ops/graph_loops.py).

``for t in range(1, TSTEPS):`` over whole-array work of static shape (jacobi_2d, heat
equations, ``u, v = v, u`` ping-pong) is not element code, so the element loop node
(kiln/capture/loop_node.py) declines it. :func:`try_graph_loop` then runs the body once,
inline, in the function's own graph, with the loop variable a value nothing may use; the
ops that iteration added become the body graph (lifted out of the function's graph), and
the loop becomes one node that runs it ``len(range(...))`` times. The trace is one
iteration whatever the trip count, and a run-time trip count is a run-time int.

Carried values are the arrays live at the loop head that the body writes in place or
rebinds: one *position* per array object bound to live locals. After the iteration each
position's names are bound to the same object again — itself (written in place or not),
another position's array (``u, v = v, u``: with a constant trip count the names end where
the permutation's ``trip``-th power says), or a new array the body computed
(``u = u + dt * lap(u)``). Anything else puts the frame back and the loop unrolls as
before, with the reason in ``explain``: a use of the loop variable's value, a graph
break, a side effect, a random draw, a data-dependent size, a
carried Python scalar (kiln/capture/graph_breaks.py's while form carries it), a carried array whose shape or dtype changes, a write into an
array the loop does not carry, views of carried arrays made before the loop, arrays
that are kiln.Tensors (gradients keep the loop unrolled), a ``break`` or ``return``.
A carried array sized by a dynamic dim (``acc = x.copy()`` under dynamic shapes) keeps
it: the body graph's placeholders get it as a dynamic dim (:func:`lift_body`), so the
body compiles once for every size.

A list made in the function that the body appends one array to, stacked after the loop
(``ys.append(y)`` then ``np.array(ys)``), or one Python number read from a 0-d value
(``losses.append(float(loss))``: ``graph_loop_body`` is set while the body is traced), is
a buffer the node fills a row a trip (kiln/capture/loop_lists.py).

The pieces (``iteration_calls``, ``lift_body``, ``back_at_head``, ``array_result``, and
kiln/capture/loop_carry.py's ``array_slots``: what the loop carries) serve the while form
too (kiln/capture/graph_while.py).
"""
from __future__ import annotations

import math
from typing import Any

from ..errors import KilnError
from ..ir import Graph
from ..ir.graph import iter_nodes, kept_meta, map_nodes
from ..ops import REGISTRY, TensorMeta
from ..ops.graph_loops import GraphLoopBody
from ..ops.loops import stand_in
from .breaks import BreakGraph
from .loop_carry import _ATTRS, ArraySlots, _outer, _root, array_slots, tracked_dims
from .loop_lists import bind_stacked, counted_rows, stacked_items, take_appends
from .loop_node import _loaded, _note, _Snapshot, write_array_back
from .loop_types import LateBound, bind_late, check_late, late_kinds, unbind_late
from .loops import MIN_TRIP, LoopFallback
from .unroll_policy import refuse_unrolled
from .variables.arrays import ArrayVariable, SymScalarVariable
from .variables.base import ConstantVariable, VariableTracker

class LoopVariable(VariableTracker):
    """The loop variable of a graph loop: any use of its value ends the attempt."""

    def describe(self) -> str:
        return "the loop variable (a graph loop's body may not use its value)"

    def python_type(self) -> type:
        return int

    def as_constant(self, tx) -> Any:
        raise LoopFallback("the body uses the loop variable's value")


def _trackers(tx, snap: _Snapshot) -> dict:
    """Every array tracker capture can reach, with its state (put back on failure)."""
    found: dict[int, tuple] = {}
    values = list(snap.stack) + list(snap.locals.values()) + snap.cell_values() \
        + list(tx.output.wrapped.values()) + [v for c, _ in snap.containers for v in _items(c)] \
        + [v for _, stored in snap.objects for v in stored.values()]
    for v in values:
        if isinstance(v, ArrayVariable) and id(v) not in found:
            found[id(v)] = (v, {a: getattr(v, a) for a in _ATTRS})
    return found


def _items(container: Any) -> Any:
    """A container's trackers without reading more of it: an argument list no item of
    which was read gives only its appends (reading its items would guard its length, and
    a history list growing by one each resume of a loop would recompile every time)."""
    if hasattr(container, "entries"):
        return container.entries.values()
    return container.appended if getattr(container, "unread", False) else container.item_list


def _restore_trackers(saved: dict) -> None:
    for v, attrs in saved.values():
        for a, value in attrs.items():
            setattr(v, a, value)


def try_graph_loop(tx, inst, it) -> bool:
    """The range loop at FOR_ITER ``inst`` as one graph loop node; False: as before."""
    from ..config import config
    if tx.output.loop_trace is not None or not config.graph_loops:
        return False
    bounds = it.bounds
    for b in bounds:
        if isinstance(b, ConstantVariable):
            if type(b.value) is not int:
                return False
        elif not (isinstance(b, SymScalarVariable) and type(b.example) is int):
            return False
    if isinstance(bounds[2], ConstantVariable) and bounds[2].value == 0:
        return False
    constant = all(isinstance(b, ConstantVariable) for b in bounds)
    trips = len(range(*(b.value for b in bounds))) if constant else None
    if constant and trips < MIN_TRIP:
        return False
    if tx.stop_at is not None and inst.index <= tx.stop_at < inst.target:
        return False
    return _attempt(tx, inst, bounds, trips, None)


def _attempt(tx, inst, bounds: tuple, trips: int | None, late: dict | None) -> bool:
    """One try at the node (again with ``late``'s stand-ins bound: loop_types.LateBound)."""
    stand_ins = bind_late(tx, late or {})   # (before the snapshot: the trip rebinds them)
    snap = _Snapshot(tx)
    saved = _trackers(tx, snap)
    state = _State(tx, snap, saved)
    try:
        _build(tx, inst, bounds, trips, snap, saved, state.before, state.unbacked)
    except (LoopFallback, BreakGraph, KilnError) as e:
        state.roll_back()
        unbind_late(tx, stand_ins)
        if isinstance(e, LateBound) and not late:
            return _attempt(tx, inst, bounds, trips, e.late)
        _note(tx, f"not a graph loop either: {reason_of(e)}")
        return False
    return True


class _State:
    """What a failed graph loop attempt puts back besides the frame (``_Snapshot``): the
    graph's nodes, the array trackers, the wrapped values and the loop notes."""

    def __init__(self, tx, snap: _Snapshot, saved: dict) -> None:
        self.tx, self.snap, self.saved = tx, snap, saved
        self.before = {id(n) for n in tx.output.graph.nodes}
        self.wrapped, self.mutable = dict(tx.output.wrapped), dict(tx.output.mutable_objects)
        self.unbacked, self.writes = len(tx.output.unbacked_sizes), tx.output.writes
        self.notes = len(tx.output.loop_notes)
        self.counts = tx.output.counts_at_run_time

    def roll_back(self) -> None:
        tx, graph = self.tx, self.tx.output.graph
        for n in [n for n in graph.nodes if id(n) not in self.before and n.kind == "call"][::-1]:
            n.args = ()
            graph.nodes.remove(n)
        graph._compiled = None
        self.snap.restore(tx)
        self.snap.unpin(tx)
        _restore_trackers(self.saved)
        tx.output.wrapped.clear()
        tx.output.wrapped.update(self.wrapped)
        tx.output.mutable_objects.clear()
        tx.output.mutable_objects.update(self.mutable)
        tx.output.writes = self.writes
        del tx.output.loop_notes[self.notes:]
        tx.output.counts_at_run_time = self.counts


def reason_of(e: Exception) -> str:
    return str(e) if isinstance(e, LoopFallback) else getattr(getattr(e, "record", None),
                                                               "reason", str(e))


def _order(perm: dict) -> int:
    """The order of the permutation part of ``perm`` (None: a new array)."""
    order = 1
    for k in perm:
        j, n = perm[k], 1
        while j is not None and j != k and n <= len(perm):
            j, n = perm[j], n + 1
        if j == k:
            order = order * n // math.gcd(order, n)
    return order


def _guard_trips(tx, bounds: tuple, perm: dict, nonzero: bool = False) -> int:
    """A run-time trip count: where names end depends on it only through whether it is 0
    (a name rebound to a new array) and its remainder by the permutation's order (``u, v
    = v, u``); guard those, and return this call's count (the names end as for it).
    ``nonzero``: whether it is 0 is guarded anyway (np.array of a list no trip appended
    to is NumPy's float64 ``(0,)``, not the rows')."""
    values = [b.value if isinstance(b, ConstantVariable) else b.example for b in bounds]
    trips = len(range(*values))
    code = "len(range(" + ", ".join(str(b.value) if isinstance(b, ConstantVariable) else b.code
                                    for b in bounds) + "))"
    text = "len(range(" + ", ".join(str(b.value) if isinstance(b, ConstantVariable) else b.text
                                    for b in bounds) + "))"
    leaves = tuple(leaf for b in bounds if not isinstance(b, ConstantVariable) for leaf in b.leaves)
    if nonzero or any(j is None for j in perm.values()):
        tx.guards.add_truth(f"{code} > 0", f"{text} > 0", trips > 0, leaves)
    order = _order(perm)
    if order > 1:
        tx.guards.add_truth(f"{code} % {order} == {trips % order}",
                            f"{text} % {order} == {trips % order}", True, leaves)
    return trips


def _run_body(tx, inst) -> None:
    tx.stack.append(LoopVariable())      # what FOR_ITER pushes
    tx.ip = inst.index + 1
    instructions = tx.decoded.instructions
    outer, tx.output.graph_loop_body = tx.output.graph_loop_body, True
    try:
        while tx.ip != inst.index:
            if not inst.index < tx.ip < inst.target or tx.result is not None:
                raise LoopFallback("the body leaves the loop (a break or a return)")
            tx.step(instructions[tx.ip])
    finally:
        tx.output.graph_loop_body = outer


def iteration_calls(tx, snap: _Snapshot, before: set, unbacked: int) -> list:
    """The calls the traced iteration added to the function's graph, once the frame is
    as it was at the loop head (stack, containers, no yields) and every value has a static
    shape, with no random draw and no kiln.Tensor (else LoopFallback)."""
    if len(tx.stack) != len(snap.stack) or any(a is not b for a, b in zip(tx.stack, snap.stack)):
        raise LoopFallback("the body changes the value stack")
    if snap.changed_outside(tx) or len(tx.yielded) != snap.yielded:
        raise LoopFallback("the body has side effects (containers, attributes, cells, yields)")
    if any(getattr(v, "tensor", False) for v in tx.output.wrapped.values()):
        raise LoopFallback("the function takes kiln.Tensors (gradients keep the loop unrolled)")
    if len(tx.output.unbacked_sizes) != unbacked:
        raise LoopFallback("a size that depends on the data")
    graph = tx.output.graph
    calls = [n for n in graph.nodes if id(n) not in before and n.kind == "call"]
    for n in calls:
        if n.op.state is not None:
            raise LoopFallback(f"a random draw ({n.op.name})")
        if n.meta.get("size_refs") or not all(
                (v is None and n.op.mutates) or
                (isinstance(v, TensorMeta) and all(type(d) is int for d in v.shape))
                or stand_in(v) is not None   # a Python number (a while loop's ``ite += 1``)
                for v in ([n.val] if not isinstance(n.val, tuple) else n.val)):
            raise LoopFallback(f"{n.op.name} gives a value of no static shape")
    if not calls:
        raise LoopFallback("the body does no array work")
    return calls


def _build(tx, inst, bounds: tuple, trips: int | None, snap: _Snapshot, saved: dict,
           before: set, unbacked: int) -> None:
    _run_body(tx, inst)
    appends = take_appends(tx, snap)
    calls = iteration_calls(tx, snap, before, unbacked)
    count = trips if trips is not None else len(range(*(
        b.value if isinstance(b, ConstantVariable) else b.example for b in bounds)))
    refuse_unrolled(tx, calls, bounds)
    from .resume import code_facts
    facts = code_facts(tx.code)
    live = set(facts.live_in[inst.index]) | set(facts.live_in[inst.target])
    nxt_inst = tx.decoded.instructions[inst.index + 1]
    i_name = nxt_inst.arg if nxt_inst.opname == "STORE_FAST" and isinstance(nxt_inst.arg, str) else None
    if i_name is None or not isinstance(tx.locals.get(i_name), LoopVariable):
        raise LoopFallback("the loop variable is not a plain local")
    unbound = [n for n in sorted(live - {i_name}) if n not in snap.locals and n in tx.locals]
    if unbound:
        # arrays the trip binds, read after the loop: the last trip's, where one runs
        reason = f"'{unbound[0]}' is assigned in the loop and used after it, but not bound before it"
        late = late_kinds(tx, unbound) if count >= 1 else None
        if late is None or any(kind[0] != "array" for kind in late.values()):
            raise LoopFallback(reason)
        raise LateBound(late, reason)
    slots = array_slots(tx, snap, saved, before, calls, live - {i_name})
    stacks = stacked_items(tx, inst, snap, saved, appends, calls, before, slots.outs, _root, _outer)
    check_late(snap.locals, tx.locals, {id(a) for c in calls for a in iter_nodes(c.args)},
               [item for _, _, item, _ in stacks])
    if stacks and count < 1:
        raise LoopFallback("a stacked list's loop that runs no trip")
    if trips is None:
        if i_name in facts.live_in[inst.target]:
            raise LoopFallback("the loop variable is read after the loop and the trip count is "
                               "known only at run time")
        trips = _guard_trips(tx, bounds, slots.perm, nonzero=bool(stacks))
    _emit(tx, inst, bounds, trips, snap, saved, before, calls, slots, i_name,
          i_name in facts.live_in[inst.target], stacks)


def lift_body(tx, name: str, starts: list, carried_names: list, calls: list, before: set,
              outs: list, vals: list | None = None, dims: dict | None = None) -> tuple:
    """``(body graph, operands)``: the iteration's ``calls`` lifted into a graph of their
    own, taking the carried values' ``starts`` (of values ``vals``: theirs by default) then
    the values from before the iteration it reads (``operands``), returning ``outs``; the
    calls leave the function's graph. ``dims`` (:func:`tracked_dims`): the run-time sizes
    of values from before the loop, dynamic dims of the body's placeholders (compiled
    once for every size, as the function's own graph is)."""
    graph = tx.output.graph
    body_graph = Graph(name)
    mapping: dict[int, Any] = {}
    dims = dims or {}

    def placeholder(node: Any, label: str, val: Any) -> Any:
        p = body_graph.placeholder(label, val)
        # (an argument the body loaded first has no tracker at the head: its input's)
        dynamic = tuple(i for i, d in enumerate(dims.get(id(node), ())) if d is not None) or (
            node.meta.get("dynamic_dims") if getattr(node, "kind", None) == "placeholder" else ())
        if dynamic:
            p.meta["dynamic_dims"] = tuple(dynamic)
        return p
    for k, (start, n) in enumerate(zip(starts, carried_names)):
        mapping[id(start)] = placeholder(start, n, start.val if vals is None else vals[k])
    operands: list[Any] = []

    def lift(node: Any) -> Any:
        found = mapping.get(id(node))
        if found is None:
            found = mapping[id(node)] = placeholder(node, node.name, node.val)
            operands.append(node)
        return found
    carried_starts = {id(s) for s in starts}
    for n in calls:
        for a in iter_nodes(n.args):
            if _outer(a, before) and id(a) not in carried_starts and id(_root(a, set())) in carried_starts:
                raise LoopFallback(f"the body reads {a.name}, a view made before the loop of an array it carries")
        args = map_nodes(n.args, lift)
        new = body_graph.call(n.op, args, n.kwargs, val=n.val, **kept_meta(n))
        mapping[id(n)] = new
    body_graph.output(tuple(mapping[id(o)] if id(o) in mapping else lift(o) for o in outs))
    # the iteration's ops leave the function's graph
    for n in calls[::-1]:
        n.args = ()
        graph.nodes.remove(n)
    graph._compiled = None
    return body_graph, operands


def back_at_head(tx, snap: _Snapshot, saved: dict) -> None:
    """The frame as it was at the loop head, but for arguments the body loaded."""
    loaded = {n: v for n, v in tx.locals.items() if _loaded(snap.locals.get(n), v)}
    snap.restore(tx)
    _restore_trackers(saved)
    tx.locals.update(loaded)


def array_result(tx, slots: ArraySlots, p: int, k: int, j: int | None, item: Any) -> VariableTracker:
    """Position ``k``'s final value ``item`` (the node's carried value ``p``) as the
    tracker its names end bound to: position ``j``'s array, written back, or (None) a new
    array (a NumPy scalar where the loop carries one: ``rs = r @ r``), of the position's
    sizes (run-time ones too)."""
    if j is None:
        target = ArrayVariable(item, slots.positions[k].dims)
        target.scalar = slots.positions[k].scalar
        return target
    write_array_back(tx, slots.positions[j], item)
    return slots.positions[j]


def note_node(tx, text: str, drop: str = "loop unrolled") -> None:
    """The loop's note; the element loop node's refusals at this line (``drop``: how they
    start) go, this node replaces them."""
    filename, lineno, _ = tx.location()
    here = f"{filename.rsplit('/', 1)[-1]}:{lineno}: {drop}"
    tx.output.loop_notes[:] = [n for n in tx.output.loop_notes if not n.startswith(here)]
    _note(tx, text)


def _emit(tx, inst, bounds, trips, snap, saved, before, calls, slots: ArraySlots, i_name: str,
          i_after: bool, stacks: list) -> None:
    graph = tx.output.graph
    starts = slots.starts(saved)
    body_graph, operands = lift_body(tx, f"{tx.code.co_name}_graph_loop_body", starts,
                                     slots.carried_names(), calls, before,
                                     slots.outs + [item.node for _, _, item, _ in stacks],
                                     dims=tracked_dims(saved))
    where = f"{tx.location()[0]}:{tx.location()[1]}"
    runtime = not all(isinstance(b, ConstantVariable) for b in bounds)
    # (a run-time count's rows: a size known once the loop ran, this count its example)
    rows = tuple(TensorMeta((max(trips, 2) if runtime else trips,) + item.node.val.shape,
                            item.node.val.dtype) for _, _, item, _ in stacks)
    body = GraphLoopBody(body_graph, len(slots.keep), tuple(slots.nxt), where=where, stacked=rows)
    back_at_head(tx, snap, saved)
    vals = tuple(s.val for s in starts)
    bvals = tuple(b.value if isinstance(b, ConstantVariable) else tx.output.scalar_node(b) for b in bounds)
    node = graph.call(REGISTRY["graph_loop"], bvals + (tuple(starts), tuple(operands)), {"body": body},
                      val=vals + rows, source=tx.location())
    items = [graph.call(REGISTRY["loop_item"], (node,), {"index": p}, val=vals[p])
             for p in range(len(slots.keep))]
    # where each position's names end: the permutation's trips-th power, or a new array
    perm = slots.perm
    for p, k in enumerate(slots.keep):
        j: int | None = k
        cap = 2 * len(slots.keep)
        steps = trips if trips <= cap else cap + (trips - cap) % _order(perm)
        for _ in range(steps):
            j = perm[j] if j is not None else None
            if j is None:
                break
        target = array_result(tx, slots, p, k, j, items[p])
        for n in slots.names[id(slots.positions[k])]:
            tx.locals[n] = target
    bind_stacked(tx, stacks, slots, [
        counted_rows(tx, node, len(vals) + j, rows[j], name) if runtime else ArrayVariable(graph.call(
            REGISTRY["loop_item"], (node,), {"index": len(vals) + j}, val=rows[j]))
        for j, (name, _, _, _) in enumerate(stacks)])
    if i_after:
        last = bounds[0].value + (trips - 1) * bounds[2].value
        tx.locals[i_name] = ConstantVariable(last)
    tx.stack.pop()        # FOR_ITER's target is past the loop, the iterator popped
    tx.ip = inst.target
    if all(isinstance(b, ConstantVariable) for b in bounds):
        count = str(trips)
    else:
        count = "run-time: range(" + ", ".join(
            repr(b.value) if isinstance(b, ConstantVariable) else b.describe() for b in bounds) + ")"
    note_node(tx, f"graph loop node ({node.name}, trip count {count}, {len(body_graph.calls)} body "
                  f"ops compiled once, carried: {', '.join(slots.carried_names())}"
                  + "".join(f", stacked: {name}" for name, _, _, _ in stacks) + ")")
