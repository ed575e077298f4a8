"""The loop node: a range loop's body traced once and emitted as one ``loop`` call.

``try_loop`` runs at the first ``FOR_ITER`` of a range loop (kiln/capture/loops.py has
the values a body computes with). The body is traced with the loop variable symbolic;
locals it rebinds that are live at the loop head are carried (traced again when the
first iteration changes their type); arrays it writes are carried and written back.
Anything the body cannot do as one node puts the frame state back (``_Snapshot``) and
the loop unrolls as before, with the reason in ``explain``.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..errors import KilnError
from ..ir import Graph
from ..ops import REGISTRY, TensorMeta
from ..ops.loops import SCALAR_FUNCTIONS, LoopBody, stand_in
from .breaks import BreakGraph
from .bytecode_facts import BACKWARD_JUMPS, COND_JUMPS
from .loop_appends import APPEND, Appends
from .loop_appends import bind as bind_appends
from .loop_appends import forget as forget_appends
from .loop_appends import take as take_appends
from .loop_branches import _WIDENS, _stored
from .loop_types import (FLAG, carried_flags, flagged_result, is_flag, link_flags, range_guarded,
                         with_flags)
from .loop_zero_trips import after_node, check_zero_trip_items, runs_at_least_once, start_kinds
from .loop_returns import (RET, RETURNED, _constant_return, _local_return, _only_returns,
                           _return_after, _return_names, _returns)
from .loop_snapshot import _Snapshot
from .loop_swaps import swap_results, swapped_arrays
from .loops import (MIN_TRIP, ArrayState, LoopFallback, LoopTrace, RangeIteratorVariable,
                    ScalarValueVariable, _result, _type_of, _val_of, apply_scalar, current_graph,
                    graph_value, refuse_inside_grad)
from .variables.arrays import SymScalarVariable
from .variables.base import ConstantVariable, LazyVariable, VariableTracker
from .variables.builder import wrap
from .variables.containers import TupleVariable


# -- the loop node ------------------------------------------------------------------------

def user_location(tx) -> tuple:
    """``tx.location()``, or where kiln's own polyfill (np.vectorize's element loop) was
    called from: explain's notes and a kernel's comment name the user's line."""
    from ..ops import polyfills
    while tx.parent is not None and tx.code.co_filename == polyfills.__file__:
        tx = tx.parent
    return tx.location()


def _note(tx, text: str) -> None:
    filename, lineno, line = user_location(tx)
    tx.output.loop_notes.append(f"{filename.rsplit('/', 1)[-1]}:{lineno}: {text}  [{line.strip()}]")


def try_loop(tx, inst, it: RangeIteratorVariable) -> bool:
    """Capture the loop at FOR_ITER ``inst`` as one node; False: it unrolls as before."""
    it.bounds = tuple(_python_int(tx, b) for b in it.bounds)
    start, stop, step = it.bounds
    if isinstance(step, ConstantVariable) and not (isinstance(step.value, int) and step.value != 0):
        return False
    if not isinstance(step, ConstantVariable) and type(_type_of(step)) is not int:
        return False   # a run-time step is a Python int (the sieve's ``range(i * i, n, i)``)
    if all(isinstance(b, ConstantVariable) for b in it.bounds):
        if not all(isinstance(b.value, int) for b in it.bounds):
            return False
        trips = len(range(start.value, stop.value, step.value))
        if trips < MIN_TRIP and not _branches_in_a_body(tx, inst) \
                and not (trips and _holds_a_loop(tx, inst)):
            return False
    if any(not isinstance(_type_of(b), int) or isinstance(_type_of(b), bool) for b in (start, stop)):
        return False
    if tx.stop_at is not None and inst.index <= tx.stop_at < inst.target:
        return False   # a partial graph ends inside the loop: the unrolled capture knows where
    snap = _Snapshot(tx)
    if tx.output.loop_trace is None:
        snap.appends = Appends(snap)   # lists its body appends numbers to (loop_appends)
    nxt = tx.decoded.instructions[inst.index + 1]
    region = Region(inst.index + 1, inst.index, inst.index + 1, inst.target, inst.target,
                    nxt.arg if nxt.opname == "STORE_FAST" and isinstance(nxt.arg, str) else "i")
    return _attempt(tx, region, it.bounds, snap, {}, "loop unrolled")


def _branches_in_a_body(tx, inst) -> bool:
    """Is there a conditional jump in the body of the loop at FOR_ITER ``inst``? Inside a
    loop body being traced, unrolled, a ``break`` on a computed value would leave the
    copies of the loop on one path only, which no branch merge joins; at the top, each
    copy's ``if`` on array data broke the graph (Viterbi's last argmax over 3 states, the
    function's rest as Python). A short loop like that is tried as a node too (it unrolls
    as before where the node fails: a branch on the loop variable, or on constants)."""
    return any(i.opname in COND_JUMPS for i in tx.decoded.instructions[inst.index + 1:inst.target])


def _holds_a_loop(tx, inst) -> bool:
    """Does the body of the loop at FOR_ITER ``inst`` hold a loop of its own? Unrolled, a
    short loop around one is a launch of the inner loop per step with kernels between them
    (crc32 over one byte: three launches); as one node it is one launch."""
    body = tx.decoded.instructions[inst.index + 1:inst.target]
    return any(i.opname == "FOR_ITER" or (i.opname in BACKWARD_JUMPS and i.target is not None
                                          and inst.index < i.target <= i.index) for i in body)


def _python_int(tx, bound: VariableTracker) -> VariableTracker:
    """A range bound as a Python int: a NumPy integer read in the body (``range(indptr[i],
    indptr[i + 1])``) or passed in (``range(k)`` of an ``np.int64`` argument: it unrolled,
    guarded by value) is converted, as ``range()`` does through ``__index__``."""
    if isinstance(bound, ConstantVariable) and isinstance(bound.value, np.integer):
        return ConstantVariable(int(bound.value))
    if isinstance(bound, SymScalarVariable) and isinstance(bound.example, np.integer):
        return bound.apply(tx, tx.output.ns.ref(operator.index, "fn"), "operator.index",
                           operator.index, [])
    if isinstance(bound, ScalarValueVariable) and isinstance(bound.example, np.integer) \
            and tx.output.loop_trace is not None:
        return apply_scalar(tx, "int", [bound])
    return bound


class Region:
    """Where one iteration runs: from ``start`` until the ip is back at ``stop``, inside
    ``[lo, hi)`` (else the body leaves the loop); ``exit``: where the loop goes on. A range
    loop's iteration starts with the loop variable pushed (``i_name``); a while loop's
    ends with its condition on the stack, and it goes on while the condition's truth is
    ``cont``."""

    def __init__(self, start: int, stop: int, lo: int, hi: int, exit: int, i_name: str = "i",
                 cont: bool | None = None, endless: bool = False) -> None:
        self.start, self.stop, self.lo, self.hi, self.exit = start, stop, lo, hi, exit
        self.i_name = i_name
        self.cont = cont
        self.endless = endless   # ``while True:``: no condition at ``stop`` (a jump back)


COND = "<while>"   # the carried name of a while loop's condition
BRK = "<break>"    # and of the flag of a body that breaks
_PSEUDO = {COND: "cond", BRK: "brk", RETURNED: "returned", RET: "ret"}


def _pseudo_name(name: str) -> str | None:
    """The body's placeholder name of a carried value that is no local (``ret1``: the
    second item of ``return s, i``; ``idx_count``: how many items were appended to
    ``idx``, loop_appends); None for a local."""
    if name in _PSEUDO:
        return _PSEUDO[name]
    if name.startswith(APPEND):
        return name[len(APPEND):] + "_count"
    if is_flag(name):
        return name[len(FLAG):] + "_is_numpy"
    return "ret" + name[len(RET):] if name.startswith(RET) else None


def _live(tx, region: Region, trace: Any = None) -> set:
    """Names live where the iteration ends (a range loop's head; a while loop's head and
    exit) and where a break of ``trace`` goes on: past a for-else's ``else`` block, a
    name the body sets before its break is live though the head's ``else`` sets it again
    (``found = idx = k; break ... else: idx = found``)."""
    from .resume import code_facts
    facts = code_facts(tx.code)
    ends = [e.target for e in trace.exits if e.kind == "break"] if trace is not None else []
    live = set().union(*(facts.live_in[t] for t in ends if t < len(facts.live_in)))
    if region.cont is None:
        return live | set(facts.live_in[region.stop])
    after = facts.live_in[region.exit] if region.exit < len(facts.live_in) else ()   # nothing after it
    return live | set(facts.live_in[region.start]) | set(after)


def _trace_once(tx, region: Region, snap: _Snapshot, carried: dict) -> tuple:
    """Run the body once; returns (trace, i placeholder, carried placeholders, end locals);
    a while loop's condition is ``end[COND]``, the break flag (a body that breaks) ``end[BRK]``."""
    from .loop_branches import PathEnd, merge_exits, step_path
    graph = Graph(f"{tx.code.co_name}_loop_body")
    trace = LoopTrace(tx.output.loop_trace, graph)
    trace.appends = getattr(snap, "appends", None)
    i_node = graph.placeholder(region.i_name, 1)   # named after the loop variable
    phs = {name: graph.placeholder(_pseudo_name(name) or name, example)
           for name, example in carried.items()}
    link_flags(phs)
    trace.tx, trace.head, trace.exit = tx, region.stop, region.exit
    trace.lo, trace.hi, trace.cont, trace.start = region.lo, region.hi, region.cont, region.start
    trace.depth = len(snap.stack)
    trace.iterator = snap.stack[-1] if region.cont is None else None
    tx.output.loop_trace = trace
    try:
        tx.stack = list(snap.stack)
        if region.cont is None:   # the loop variable: the position, or an array's item there
            i = ScalarValueVariable(i_node, 1)
            tx.stack.append(i if not hasattr(snap.stack[-1], "item_at") else snap.stack[-1].item_at(tx, i))
        tx.locals = dict(snap.locals)
        for name, ph in phs.items():
            if name not in (COND, BRK) and not is_flag(name):
                tx.locals[name] = ScalarValueVariable(ph, ph.val)
        tx.ip = region.start
        alive = True
        try:
            while tx.ip != region.stop:
                if not region.lo <= tx.ip < region.hi or tx.result is not None:
                    raise LoopFallback("the body leaves the loop (a return)")
                step_path(tx, trace)
        except PathEnd:
            alive = False
        if len(tx.yielded) != snap.yielded:
            # a generator's loop (sum(x[i] * i for i in ...)): each yield is a value of the
            # caller's, one per iteration, not a value inside the body
            raise LoopFallback("the body yields (a generator expression): unrolled")
        cond = None
        if region.endless and alive:
            cond = ConstantVariable(True)
        elif region.cont is not None and alive:
            if len(tx.stack) != len(snap.stack) + 1:
                raise LoopFallback("the body changes the value stack")
            cond = tx.stack.pop()
        if alive and (len(tx.stack) != len(snap.stack) or
                      any(a is not b for a, b in zip(tx.stack, snap.stack))):
            raise LoopFallback("the body changes the value stack")
        if snap.changed_outside(tx):
            raise LoopFallback("the body changes containers, cells or objects from outside")
        main = dict(tx.locals) if alive else None
        if region.cont is not None and any(COND in e.locals for e in trace.exits):
            # continues ran the loop's test (loop_branches._continue_while): the condition
            # is merged like a local; a break's is never read (its flag ends the loop)
            if main is not None:
                main[COND] = cond
            fill = cond if cond is not None else next(e.locals[COND] for e in trace.exits
                                                       if COND in e.locals)
            for e in trace.exits:
                e.locals.setdefault(COND, fill)
        end, flag = merge_exits(tx, trace, main, _live(tx, region, trace))
        if region.cont is not None and COND not in end:
            end[COND] = cond if cond is not None else (
                ScalarValueVariable(phs[COND], phs[COND].val) if COND in phs else ConstantVariable(True))
        if flag is not None:
            end[BRK] = flag
            targets = {e.target for e in trace.exits if e.kind == "break"} or {region.exit}
            if len(targets) != 1:
                raise LoopFallback("breaks that go on at different places")
            trace.break_target = targets.pop()
            if trace.break_target != region.exit and trace.parent is None:
                raise LoopFallback("a for-else (or while-else) whose break is data-dependent, "
                                   "at the function's top level")
        tx.stack = list(snap.stack)
    finally:
        tx.output.loop_trace = trace.parent
    return trace, i_node, phs, end


def _rebound(end: dict, snap: _Snapshot) -> list:
    """The locals an iteration ends with other values than it started with."""
    return [n for n in end if _pseudo_name(n) is None and end[n] is not snap.locals.get(n)
            and not _loaded(snap.locals.get(n), end[n])]


def _load_arguments(tx, snap: _Snapshot, names: list) -> None:
    """Load the arguments among ``names`` nothing loaded before the loop (``y = ny`` in
    its body): carried, they need a value to start from."""
    for n in names:
        if isinstance(snap.locals.get(n), LazyVariable):
            snap.locals[n] = wrap(tx, snap.locals[n].value, snap.locals[n].source)


def _loaded(before: Any, after: VariableTracker) -> bool:
    """Did the body just load an argument that was not used before the loop?"""
    return isinstance(before, LazyVariable) and after.source is before.source


def _signature(graph: Graph) -> list:
    return [(n.target.name, n.kwargs.get("fn"), type(n.val).__name__,
             getattr(n.val, "dtype", None)) for n in graph.nodes
            if n.kind == "call" and not n.meta.get("widened") and not n.meta.get("guarded_operand")
            and not n.meta.get("widening_predicate")]


def _attempt(tx, region: Region, bounds: tuple, snap: _Snapshot, extra: dict, failed: str,
             arrays_only: bool = False) -> bool:
    """Build the loop node; on failure restore the translator, note why (``failed``:
    what happens instead) and return False. ``arrays_only``: a body that touches no array
    is not one (a loop of Python numbers runs faster as Python than as a compiled call)."""
    line = tx.location()
    try:
        _build(tx, region, bounds, snap, extra, arrays_only)
    except (LoopFallback, BreakGraph, KilnError) as e:
        tx.__dict__.pop("loop_returned", None)
        snap.restore(tx)
        snap.unpin(tx)
        forget_appends(tx, snap)
        reason = str(e) if isinstance(e, LoopFallback) else getattr(getattr(e, "record", None),
                                                                     "reason", str(e))
        _note(tx, f"{failed}: {reason}")
        return False
    if "loop_returned" in tx.__dict__:
        _return_after(tx, line)
    return True


def _build(tx, region: Region, bounds: tuple, snap: _Snapshot, extra: dict,
           arrays_only: bool = False) -> None:
    """``extra``: carried values that are not locals (a while loop's condition), by name,
    with their values before the loop."""
    refuse_inside_grad(tx)
    trace, _, _, end = _trace_once(tx, region, snap, {})
    buffered = take_appends(tx, region, snap, trace, bounds)
    if buffered:   # traced again, appending to the lists' buffers
        extra = dict(extra, **buffered)
        snap.restore(tx)
        trace, _, _, end = _trace_once(tx, region, snap, {})
    live = _live(tx, region, trace)
    if arrays_only and not trace.arrays:
        raise LoopFallback("the body does no array work: it runs as Python")
    rebound = _rebound(end, snap)
    if BRK in end:
        extra = dict(extra, **{BRK: ConstantVariable(False)})
    extra = _returns(tx, region, trace, extra)
    names = list(extra) + [n for n in rebound if n in live]
    swaps = swapped_arrays(tx, snap, end, [n for n in names if n not in extra])
    names = [n for n in names if n not in swaps]
    # ``s1 = s2 = 0.0`` binds one value to two names: after ``s2, s1 = s1, s0`` the body's
    # first trace leaves s2 bound to the object it started with (s1's start), which looks
    # unchanged; a live name sharing its start value with a carried one is carried too
    # (a name the body never stores, ``d = other`` before the loop, stays what it is)
    shared = {id(snap.locals[n]) for n in names if n in snap.locals}
    stored = _stored(tx, trace)
    names += [n for n in end if n not in names and n in live and _pseudo_name(n) is None
              and n in snap.locals and id(snap.locals[n]) in shared and n in stored]
    _load_arguments(tx, snap, names)
    start = dict(snap.locals, **extra)
    for n in names:
        if n not in start:
            raise LoopFallback(f"'{n}' is assigned in the loop and used after it, but not bound before it")
    types = {}
    for n in names:
        t = _type_of(start[n])
        if t is None:
            raise LoopFallback(f"the loop rebinds '{n}' ({start[n].describe()})")
        types[n] = t
    if names:
        snap.restore(tx)
        trace, _, phs, end = _trace_once(tx, region, snap, with_flags(names, types))
        if any(n not in end for n in names):
            raise LoopFallback("a carried value the body does not always give")
        out = {n: _type_of(end[n]) for n in names}
        if any(out[n] is None for n in names):
            raise LoopFallback("a carried value becomes something other than a scalar")
        first, given = _signature(trace.graph), types
        # traced again with the types the body gave until they stay: one more round for
        # each link of a chain of names that follow each other (``s2, s1 = s1, s0``)
        for _ in range(len(names)):
            if all(type(out[n]) is type(types[n]) for n in names):
                break
            snap.restore(tx)
            trace, _, phs, end = _trace_once(tx, region, snap, with_flags(names, out))
            if any(n not in end for n in names):
                raise LoopFallback("a carried value the body does not always give")
            types, out = out, {n: _type_of(end[n]) for n in names}
            if any(out[n] is None for n in names) or _signature(trace.graph) != first:
                break
        if any(type(out[n]) is not type(types[n]) for n in names) or _signature(trace.graph) != first:
            changed = ", ".join(f"'{n}' {type(given[n]).__name__} -> {type(out[n]).__name__}"
                                for n in names if type(out[n]) is not type(given[n]))
            raise LoopFallback(f"a carried value changes type in the first iteration ({changed}); "
                               f"start it with its final type")
        late = {BRK: ConstantVariable(False)} if BRK in end and BRK not in names else {}
        if RETURNED not in names and any(e.kind == "return" for e in trace.exits):
            late = _returns(tx, region, trace, late)
        missed = [n for n in _rebound(end, snap) if n in live and n not in names and n not in swaps]
        if late or missed:
            # a break, return or assignment only the body traced again takes (its test
            # read a start value as a constant the first time: ``s = 0.0 ... if s > t:
            # break``, ``if m * m > 2.0: b = m else: a = m``): carry its flag (and value)
            # or the local too, and trace once more (a local left out kept its start value)
            _load_arguments(tx, snap, missed)
            extra = dict(extra, **late)
            names = list(extra) + [n for n in names if n not in extra] + missed
            start = dict(snap.locals, **extra)
            if any(n not in start or _type_of(start[n]) is None for n in missed):
                raise LoopFallback(f"the loop rebinds {missed}, unbound or not numbers before it")
            types = dict(types, **{n: _type_of(start[n]) for n in list(late) + missed})
            snap.restore(tx)
            trace, _, phs, end = _trace_once(tx, region, snap, with_flags(names, types))
            if any(n not in end or type(_type_of(end[n])) is not type(types[n]) for n in names) \
                    or any(n in live and n not in names and n not in swaps for n in _rebound(end, snap)):
                raise LoopFallback("a carried value the body does not always give")
    else:
        phs = {}
    if region.exit >= len(tx.decoded.instructions) and not any(e.kind == "return" for e in trace.exits):
        raise LoopFallback("a while True loop that neither breaks nor returns")
    if swaps and any(end.get(n) is not snap.locals[swaps[n]] for n in swaps):
        raise LoopFallback("the body swaps arrays on some paths only")
    check_zero_trip_items(trace.graph, [end[n] for n in names])   # (inner loops': loop_zero_trips.py)
    nonzero = runs_at_least_once(tx, region.cont, bounds, names, types, start, _pseudo_name)
    _emit(tx, region, bounds, snap, trace, names, types, phs, end, start, swaps, nonzero)
    after_node(tx, nonzero, bounds, start)
    if buffered:
        bind_appends(tx, snap)


def _enclosing_value(tx, var: VariableTracker, example: Any) -> Any:
    """A carried value's initial value in the enclosing graph, converted to its type."""
    target = type(example)
    fn = f"np.{target.__name__}" if isinstance(example, np.generic) else target.__name__
    if fn not in SCALAR_FUNCTIONS and type(_type_of(var)) is not target:
        # (-1.5 carried where the body makes np.complex128: no scalar function converts it)
        raise LoopFallback(f"a carried value starts {type(_type_of(var)).__name__} and becomes {target.__name__}")
    if isinstance(var, ConstantVariable):
        value = var.value
        if type(value) is not target:
            converted = SCALAR_FUNCTIONS[fn](value)
            if converted != value:
                raise LoopFallback(f"the start value {value!r} is not exact as {target.__name__}")
            value = converted
        return value
    value = graph_value(tx, var)
    current = stand_in(_val_of(value))
    if type(current) is target:
        return value
    if isinstance(var, SymScalarVariable) and type(var.example) is int and issubclass(target, np.integer):
        range_guarded(tx, var, target)
    out = apply_scalar(tx, fn, [var])
    if _WIDENS.get(type(current)) is target:
        # an exact widening of an enclosing body's Python scalar (``s = 0.0`` carried into
        # an inner loop that makes it np.float64): the enclosing body traced again starts
        # ``s`` with the wider type, and this is not one of its ops (see _signature)
        out.node.meta["widened"] = True
    return graph_value(tx, out)


def _emit(tx, region: Region, bounds: tuple, snap: _Snapshot, trace: LoopTrace, names: list,
          types: dict, phs: dict, end: dict, start: dict, swaps: dict, nonzero: Any = False) -> None:
    graph = trace.graph
    swapped = swap_results(tx, trace, start, end, swaps)
    tx.locals = dict(snap.locals)
    tx.inst = snap.inst   # the loop's own line (not the body's last) for its node and note
    for n, v in end.items():
        if _loaded(snap.locals.get(n), v):
            tx.locals[n] = v
    tx.stack = list(snap.stack)
    tx.output.loop_trace = trace
    try:
        outs = [graph_value(tx, end[n]) for n in names]
    finally:
        tx.output.loop_trace = trace.parent
    once = nonzero is True or region.cont is None and all(isinstance(b, ConstantVariable) for b in bounds) \
        and len(range(*(b.value for b in bounds))) > 0 \
        and (tx.output.loop_trace is None or tx.output.loop_trace.active is None)
    flags = carried_flags(tx, graph, names, phs, outs, start, once)
    kinds = start_kinds(tx, nonzero, flags, start) if isinstance(nonzero, list) else {}
    if flags:
        names, types, start = list(names), dict(types), dict(start)
        for fname, final, init in flags.values():
            names.append(fname)
            outs.append(final)
            types[fname] = False
            start[fname] = init
    written = [s for s in trace.arrays.values() if s.written]
    read = [s for s in trace.arrays.values() if not s.written]
    for s in written:
        if s.tracker.base is not None or s.tracker.has_views:
            raise LoopFallback(f"the loop writes {s.tracker.describe()}, a view or an array with views")
        if any(d is not None for d in s.tracker.dims) and not getattr(s.tracker, "append_buffer", False):
            # the node's result sizes are static (an array it only reads keeps run-time
            # dims; a list's buffer a run-time trip count, loop_appends.take)
            s.tracker.specialize_dims(tx)
            s.placeholder.meta["val"] = s.tracker.meta   # (its static sizes)
    graph.output(tuple(outs) + tuple(swapped.get(id(s.tracker), s.node) for s in written))
    # placeholders in the body's calling order: i, carried scalars, carried arrays, operands
    order = [graph.placeholders[0]] + [phs[n] for n in names] + [s.placeholder for s in written] \
        + [ph for _, ph in trace.operands] + [s.placeholder for s in read]
    rest = [n for n in graph.nodes if n.kind != "placeholder"]
    graph.nodes[:] = order + rest
    n_scalars = len(names)
    body = LoopBody(graph, n_scalars + len(written),
                    tuple(range(n_scalars, n_scalars + len(written))),
                    where="{}:{}".format(*user_location(tx)), cont=region.cont,
                    brk=names.index(BRK) if BRK in names else None)
    _guard_no_aliasing(tx, written, read)

    enclosing = current_graph(tx)
    it_bounds = bounds
    outer_trace = tx.output.loop_trace
    if outer_trace is not None and outer_trace.active is not None:
        # on one path of a data-dependent branch of the enclosing body: off the path the
        # loop runs zero times
        active = outer_trace.active
        if region.cont is None:
            bounds = (bounds[0], apply_scalar(tx, "select", [active, bounds[1], bounds[0]]), bounds[2])
        elif type(types[COND]) in (bool, np.bool_):
            stop_now = type(types[COND])(not region.cont)
            start = dict(start, **{COND: apply_scalar(tx, "select", [
                active, start[COND], ConstantVariable(stop_now)])})
        else:
            raise LoopFallback("a while loop whose test is not a bool, under a data-dependent branch")
    bounds = tuple(b.value if isinstance(b, ConstantVariable) else graph_value(tx, b) for b in bounds)
    inits = [_enclosing_value(tx, start[n], types[n]) for n in names]
    inits += [s.outer for s in written]
    operands = [outer for outer, _ in trace.operands] + [s.outer for s in read]
    vals = []
    for n in names:
        ex = types[n]
        vals.append(TensorMeta((), ex.dtype) if outer_trace is None and isinstance(ex, np.generic) else ex)
    vals += [s.tracker.meta for s in written]
    node = enclosing.call(REGISTRY["loop"], bounds + (tuple(inits), tuple(operands)), {"body": body},
                          val=tuple(vals), source=user_location(tx))
    node.meta["loop_body"] = body
    flag = None
    results = {}
    pending: dict = {}
    for k, n in enumerate(names):
        item = enclosing.call(REGISTRY["loop_item"], (node,), {"index": k}, val=vals[k])
        item.meta["val"] = types[n]
        if n == BRK:
            flag = _result(tx, item)
        elif n.startswith((RET, RETURNED)):
            results[n] = _result(tx, item)
        elif n in flags:
            pending[n] = (_result(tx, item), item)
        elif is_flag(n):
            v, at = pending.pop(n[len(FLAG):])
            local = n[len(FLAG):]
            tx.locals[local] = flagged_result(tx, n, v, at, _result(tx, item), types[local], kinds.get(local))
        elif n != COND:
            tx.locals[n] = _result(tx, item)
    for k, s in enumerate(written, start=n_scalars):
        item = enclosing.call(REGISTRY["loop_item"], (node,), {"index": k}, val=vals[k])
        _write_back(tx, s, item)
    if region.cont is None:
        tx.stack.pop()          # FOR_ITER's target is past the loop, the iterator popped
    tx.ip = region.exit
    if RETURNED in results:
        value = _constant_return(trace)
        if value is None and _local_return(trace) is not None:
            value = tx.locals[_local_return(trace)]
        if value is None:
            items = [results[n] for n in _return_names([e for e in trace.exits if e.kind == "return"])]
            value = items[0] if RET in results else TupleVariable(items)
        if _only_returns(region, trace):
            tx.result = value     # the loop ended: it returned
        else:
            tx.loop_returned = (results[RETURNED], value, region.exit)
    if flag is not None and trace.break_target != region.exit:
        from .loop_branches import run_else   # for-else: the else block where it did not break
        run_else(tx, outer_trace, flag, region.exit, trace.break_target)
    if region.endless:
        trips = "run-time: a while True loop"
    elif region.cont is not None:
        trips = "run-time: a while loop's condition"
    elif all(isinstance(b, ConstantVariable) for b in it_bounds):
        trips = str(len(range(*(b.value for b in it_bounds))))
    else:
        trips = "run-time: range(" + ", ".join(
            repr(b.value) if isinstance(b, ConstantVariable) else getattr(b, "text", None) or b.describe()
            for b in it_bounds) + ")"
    if body.brk is not None:
        trips += ", or fewer: it breaks" + (" or returns" if RETURNED in results else "")
    _note(tx, f"loop node ({node.name}, trip count {trips}, {len(graph.calls)} body ops, carried: "
              f"{', '.join([_shown(n) for n in names if n != COND and not is_flag(n)] + [s.tracker.describe() for s in written]) or 'nothing'})")


def _shown(name: str) -> str:
    return f"appends to {name[len(APPEND):]}" if name.startswith(APPEND) else name


def _write_back(tx, state: ArrayState, item: Any) -> None:
    trace = tx.output.loop_trace
    tracker = state.tracker
    if trace is not None:
        parent = trace.array(tx, tracker)
        parent.node = item
        parent.written = True
        return
    write_array_back(tx, tracker, item)


def write_array_back(tx, tracker: Any, item: Any) -> None:
    """A loop's final value ``item`` of the array ``tracker`` tracks, as the frame's: the
    tracker's node when nothing else can see the old one, else a copy into it."""
    from .array_writes import check_writable
    if tracker.can_rewrite_in_place():
        tracker.node = item
        return
    check_writable(tx, "the loop's writes", tracker)
    tx.output.graph.call(REGISTRY["copyto"], (tracker.node, item, True), {"casting": "same_kind"},
                         source=tx.location())


def _guard_no_aliasing(tx, written: list, read: list) -> None:
    """The loop copies what it writes: another argument must not be the same array."""
    for w in written:
        for other in written + read:
            a, b = w.tracker.source, other.tracker.source
            if other is w or a is None or b is None:
                continue
            same = tx.output.leaf_value(a) is tx.output.leaf_value(b) if a.display() in \
                tx.output.leaf_values and b.display() in tx.output.leaf_values else None
            if same is None:
                continue
            tx.guards.add_truth(f"{a.code(tx.output.ns)} is {b.code(tx.output.ns)}",
                                f"{a.display()} is {b.display()}", same, (a,))
            if same:
                raise LoopFallback(f"{a.display()} and {b.display()} are the same array")
