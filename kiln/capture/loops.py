"""Range loops captured as one ``loop`` node (kiln/ops/loops.py) instead of unrolled.

At the first ``FOR_ITER`` of ``for i in range(start, stop, step)`` the translator runs the
body once with ``i`` a symbolic int (:class:`ScalarValueVariable` over a body placeholder).
Anything in the body that needs ``i``'s value, or a value computed from it — a branch, a
shape, a slice, an array operation — raises :class:`LoopFallback`: the frame's state is put
back and the loop unrolls (or breaks) as before. So a body whose graph would depend on the
value never becomes a loop node; the check is symbolic, not a comparison of two traces.

A body may read and write single elements of arrays (``A[i, j]``, ``A[i] += v``), do Python
and NumPy scalar arithmetic, call ``min``/``max``/``abs``/``int``/``float`` and the NumPy
scalar functions of ``SCALAR_FUNCTIONS``, and contain inner range loops (nested loop
nodes; their bounds may depend on the outer variable). Locals the body rebinds and that
are live at the loop head are carried; when the first iteration changes a carried value's
type (``s = 0.0; s += A[i]`` makes ``s`` an ``np.float64``) the body is traced again with
the new type and kept only if every operation computes the same types as with the first.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import KilnError
from ..ir import Graph
from ..ops import REGISTRY, TensorMeta, method_key
from ..ops.loops import (NUMPY_NEVER_RAISE, NUMPY_SCALAR_UFUNCS, OPERATOR_NAMES, SELECT_SAFE, LoopBody,
                         SCALAR_FUNCTIONS, stand_in)
from .breaks import BreakGraph
from .variables.arrays import ArrayVariable, SymScalarVariable
from .variables.base import CellVariable, ConstantVariable, VariableTracker
from .variables.containers import DictVariable, IteratorVariable, ListVariable, TupleVariable

# Constant trip counts below this unroll as before (a loop node costs a body trace).
MIN_TRIP = 4


class LoopFallback(Exception):
    """The body cannot be one loop node: the loop unrolls. ``str`` is the reason."""


def _refuse(tx, what: str) -> None:
    if tx.output.loop_trace is not None:
        raise LoopFallback(what)
    tx.unsupported("data_dependent", f"{what}: the value is computed in the compiled graph",
                   "keep it in arrays, or compute it as Python before the graph")


class ScalarValueVariable(VariableTracker):
    """A Python or NumPy scalar computed in a graph: a value in a loop body, or a loop's
    final carried value. ``example`` is a stand-in of its type (``1``, ``np.uint8(1)``)."""

    loop_value = True   # the translator's conditional jumps fork on it (see branch)

    def __init__(self, node: Any, example: Any) -> None:
        self.node = node
        self.example = example

    def describe(self) -> str:
        return f"{type(self.example).__name__} {self.node.name} (computed in a loop)"

    def python_type(self) -> type:
        return type(self.example)

    def as_constant(self, tx) -> Any:
        _refuse(tx, f"{self.describe()} used where its value must be known (a shape, a slice, "
                    f"a parameter)")

    def truth(self, tx) -> bool:
        _refuse(tx, f"a branch on {self.describe()} (data-dependent if/while)")

    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        name = OPERATOR_NAMES.get(op)
        if name is None:
            return NotImplemented
        args = [other, self] if reverse else [self, other]
        return apply_scalar(tx, name, args)

    def unary(self, tx, op: Any) -> VariableTracker:
        import operator
        if op is operator.not_:
            return ConstantVariable(not self.truth(tx))
        return apply_scalar(tx, OPERATOR_NAMES[op], [self])

    def getattr(self, tx, name: str) -> VariableTracker:
        _refuse(tx, f"attribute '{name}' of {self.describe()}")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        _refuse(tx, f"method '{name}' of {self.describe()}")


class ArrayState:
    """An array a body uses: its placeholder, its current node, whether the body writes it."""

    def __init__(self, tracker: ArrayVariable, outer: Any, placeholder: Any) -> None:
        self.tracker = tracker
        self.outer = outer
        self.placeholder = placeholder
        self.node = placeholder
        self.written = False


class LoopTrace:
    """The body being traced: its graph and what it lifted from enclosing graphs."""

    def __init__(self, parent: "LoopTrace | None", graph: Graph) -> None:
        self.parent = parent
        self.graph = graph
        self.lifted: dict[int, Any] = {}          # id(enclosing node) -> placeholder
        self.operands: list[tuple[Any, Any]] = []  # (enclosing node, placeholder)
        self.arrays: dict[int, ArrayState] = {}
        self.tx = None            # the translator running the loop, its head and exit
        self.head = self.exit = -1

    def lift(self, tx, node: Any) -> Any:
        """``node`` (of an enclosing graph) as a value of this body."""
        if node.graph is self.graph:
            return node
        found = self.lifted.get(id(node))
        if found is not None:
            return found
        outer = node if self.parent is None or node.graph is self.parent.graph \
            else self.parent.lift(tx, node)
        val = node.val
        example = stand_in(val)
        ph = self.graph.placeholder(node.name, example if example is not None else val)
        self.lifted[id(node)] = ph
        self.operands.append((outer, ph))
        return ph

    def array(self, tx, tracker: ArrayVariable) -> ArrayState:
        state = self.arrays.get(id(tracker))
        if state is not None:
            return state
        if tracker.tensor:
            raise LoopFallback(f"{tracker.describe()} is a kiln.Tensor (gradients need the "
                               f"loop unrolled)")
        if tracker.meta.shape == ():
            raise LoopFallback(f"{tracker.describe()} is 0-d")
        if any(d is not None for d in tracker.dims):
            tracker.specialize_dims(tx)   # the loop node's result sizes are static
        outer = self.parent.array(tx, tracker).node if self.parent is not None else tracker.node
        ph = self.graph.placeholder(tracker.source.display() if tracker.source is not None
                                    else tracker.node.name, tracker.meta)
        state = self.arrays[id(tracker)] = ArrayState(tracker, outer, ph)
        return state


def current_graph(tx) -> Graph:
    trace = tx.output.loop_trace
    return trace.graph if trace is not None else tx.output.graph


def graph_value(tx, var: VariableTracker) -> Any:
    """``var`` as an argument of a scalar op in the current graph: a literal or a node."""
    trace = tx.output.loop_trace
    if isinstance(var, ConstantVariable) and stand_in(var.value) is not None:
        return var.value
    if isinstance(var, ScalarValueVariable):
        return trace.lift(tx, var.node) if trace is not None else var.node
    if isinstance(var, SymScalarVariable) and stand_in(var.example) is not None:
        node = tx.output.scalar_node(var)
        return trace.lift(tx, node) if trace is not None else node
    if isinstance(var, ArrayVariable) and var.scalar and not var.tensor:
        return trace.lift(tx, var.node) if trace is not None else var.node
    _refuse(tx, f"{var.describe()} in scalar code")


def _val_of(value: Any) -> Any:
    return value.val if hasattr(value, "kind") else value


def _result(tx, node: Any) -> VariableTracker:
    example = node.val
    if tx.output.loop_trace is None and isinstance(example, np.generic):
        # In the function's own graph a NumPy scalar is a 0-d value, as everywhere else.
        node.meta["val"] = TensorMeta((), example.dtype)
        var = ArrayVariable(node)
        var.scalar = True
        return var
    return ScalarValueVariable(node, example)


def apply_scalar(tx, fn: str, args: list) -> VariableTracker:
    """``fn(*args)`` on scalars: a ``scalar_fn`` node in the current graph."""
    values = tuple(graph_value(tx, a) for a in args)
    if fn in ("min", "max") and len({type(stand_in(_val_of(v))) for v in values}) > 1:
        _refuse(tx, f"{fn}() of values of different types (its result's type depends on the values)")
    try:
        node = current_graph(tx).call(REGISTRY["scalar_fn"], (values,), {"fn": fn},
                                      source=tx.location())
    except BreakGraph:
        raise
    except Exception as e:
        if tx.output.loop_trace is not None:
            raise LoopFallback(f"{fn} on these types raises {type(e).__name__}: {e}") from e
        tx.user_error(e)
    return _result(tx, node)


def is_scalar_like(var: VariableTracker) -> bool:
    return isinstance(var, ScalarValueVariable)


# -- inside a body: what call_op does there ------------------------------------------------

def call_in_body(tx, key: Any, args: list, kwargs: dict, what: str) -> VariableTracker:
    trace = tx.output.loop_trace
    if key == method_key("__getitem__") and len(args) == 2 and not kwargs \
            and isinstance(args[0], ArrayVariable):
        state = trace.array(tx, args[0])
        index = _element_index(tx, state, args[1])
        node = trace.graph.call(REGISTRY["load_elem"], (state.node, index), source=tx.location())
        return ScalarValueVariable(node, node.val)
    if key == method_key("__setitem__") and len(args) == 3 and not kwargs \
            and isinstance(args[0], ArrayVariable):
        state = trace.array(tx, args[0])
        index = _element_index(tx, state, args[1])
        value = graph_value(tx, args[2])
        trace.graph.call(REGISTRY["store_elem"], (state.node, index, value), source=tx.location())
        state.written = True
        return ConstantVariable(None)
    if key in OPERATOR_NAMES and not kwargs and all(
            not isinstance(a, ArrayVariable) or a.scalar for a in args):
        return apply_scalar(tx, OPERATOR_NAMES[key], list(args))
    if isinstance(key, np.ufunc) and key.__name__ in NUMPY_SCALAR_UFUNCS and not kwargs \
            and all(not isinstance(a, ArrayVariable) or a.scalar for a in args):
        return apply_scalar(tx, f"np.{key.__name__}", list(args))
    if isinstance(key, type) and f"np.{getattr(key, '__name__', '')}" in SCALAR_FUNCTIONS \
            and len(args) == 1 and not kwargs:
        return apply_scalar(tx, f"np.{key.__name__}", list(args))
    raise LoopFallback(f"{what} inside the loop (array operations keep the loop unrolled)")


def _element_index(tx, state: ArrayState, index: VariableTracker) -> tuple:
    entries = index.item_list if isinstance(index, TupleVariable) else [index]
    if len(entries) != len(state.tracker.meta.shape):
        raise LoopFallback("an index that is not one integer per axis (a slice or a row)")
    out = []
    for e in entries:
        if isinstance(e, ConstantVariable) and isinstance(e.value, (int, np.integer)) \
                and not isinstance(e.value, (bool, np.bool_)):
            out.append(int(e.value))
            continue
        value = graph_value(tx, e)
        kind = stand_in(_val_of(value))
        if isinstance(kind, (bool, np.bool_)) or not isinstance(kind, (int, np.integer)):
            raise LoopFallback(f"an index of type {type(kind).__name__}")
        out.append(value)
    return tuple(out)


# -- range() with run-time bounds, and iterators over ranges ------------------------------

class SymRangeVariable(VariableTracker):
    """``range(...)`` with a run-time bound: a loop node keeps it symbolic; any other use
    specializes the bounds (guarded by value) and it is a constant range again."""

    def __init__(self, args: list) -> None:
        self.args = args

    def describe(self) -> str:
        return "range with run-time bounds"

    def python_type(self) -> type:
        return range

    def constant(self, tx) -> range:
        return tx.fold(range, *[a.as_constant(tx) for a in self.args])

    def as_constant(self, tx) -> Any:
        return self.constant(tx)

    def items(self, tx) -> list:
        return [ConstantVariable(v) for v in self.constant(tx)]

    def length(self, tx) -> VariableTracker:
        return ConstantVariable(len(self.constant(tx)))

    def getattr(self, tx, name: str) -> VariableTracker:
        return ConstantVariable(self.constant(tx)).getattr(tx, name)


def make_range(tx, args: list) -> VariableTracker | None:
    if any(isinstance(a, (SymScalarVariable, ScalarValueVariable)) for a in args) and 1 <= len(args) <= 3:
        return SymRangeVariable(list(args))
    return None


class RangeIteratorVariable(IteratorVariable):
    """An iterator over a range: its first FOR_ITER tries a loop node; unrolling (the
    fallback) reads ``pending``, which specializes run-time bounds."""

    def __init__(self, tx, bounds: tuple) -> None:
        self.tx = tx
        self.bounds = bounds          # start, stop, step trackers
        self._pending: list | None = None
        self.origin = None
        self.taken = 0
        self.tried = False

    @property
    def pending(self) -> list:
        if self._pending is None:
            values = [b.as_constant(self.tx) for b in self.bounds]
            self._pending = [ConstantVariable(v) for v in self.tx.fold(range, *values)]
        return self._pending

    @pending.setter
    def pending(self, items: list) -> None:
        self._pending = list(items)


def range_iterator(tx, obj: VariableTracker) -> RangeIteratorVariable | None:
    if isinstance(obj, ConstantVariable) and type(obj.value) is range:
        r = obj.value
        return RangeIteratorVariable(tx, tuple(ConstantVariable(v) for v in (r.start, r.stop, r.step)))
    if isinstance(obj, SymRangeVariable):
        args = list(obj.args)
        if len(args) == 1:
            args = [ConstantVariable(0)] + args
        if len(args) == 2:
            args = args + [ConstantVariable(1)]
        return RangeIteratorVariable(tx, tuple(args))
    return None


# -- the loop node ------------------------------------------------------------------------

class _Snapshot:
    """The frame state a failed loop trace puts back."""

    def __init__(self, tx) -> None:
        self.stack = list(tx.stack)
        self.locals = dict(tx.locals)
        self.ip, self.steps, self.kw_names = tx.ip, tx.steps, tx.kw_names
        self.effects = len(tx.output.side_effects)
        self.cells = {name: c.contents for name, c in tx.cells.items() if isinstance(c, CellVariable)}
        self.containers: list[tuple[Any, Any]] = []
        seen: set[int] = set()
        for v in list(self.stack) + list(self.locals.values()) + list(self.cells.values()):
            self._walk(v, seen)

    def _walk(self, v: Any, seen: set) -> None:
        if id(v) in seen:
            return
        seen.add(id(v))
        if isinstance(v, (ListVariable, TupleVariable)):
            self.containers.append((v, list(v.item_list)))
            for x in v.item_list:
                self._walk(x, seen)
        elif isinstance(v, DictVariable):
            self.containers.append((v, dict(v.entries)))
            for x in v.entries.values():
                self._walk(x, seen)

    def changed_outside(self, tx) -> bool:
        return len(tx.output.side_effects) != self.effects or any(
            (list(v.item_list) if not isinstance(v, DictVariable) else dict(v.entries)) != saved
            for v, saved in self.containers) or any(
            tx.cells[n].contents is not c for n, c in self.cells.items())

    def restore(self, tx) -> None:
        tx.stack = list(self.stack)
        tx.locals = dict(self.locals)
        tx.ip, tx.steps, tx.kw_names = self.ip, self.steps, self.kw_names
        tx.result = None
        del tx.output.side_effects[self.effects:]
        for name, contents in self.cells.items():
            tx.cells[name].contents = contents
        for v, saved in self.containers:
            if isinstance(v, DictVariable):
                v.entries = dict(saved)
            else:
                v.item_list = list(saved)


def _type_of(var: VariableTracker) -> Any:
    """The stand-in of a carried value's type, or None when it cannot be carried."""
    if isinstance(var, ScalarValueVariable):
        return var.example
    if isinstance(var, ConstantVariable):
        return stand_in(var.value)
    if isinstance(var, SymScalarVariable):
        return stand_in(var.example)
    if isinstance(var, ArrayVariable) and var.scalar and not var.tensor:
        return var.meta.dtype.type(1)
    return None


def _note(tx, text: str) -> None:
    filename, lineno, line = tx.location()
    tx.output.loop_notes.append(f"{filename.rsplit('/', 1)[-1]}:{lineno}: {text}  [{line.strip()}]")


def try_loop(tx, inst, it: RangeIteratorVariable) -> bool:
    """Capture the loop at FOR_ITER ``inst`` as one node; False: it unrolls as before."""
    start, stop, step = it.bounds
    if not (isinstance(step, ConstantVariable) and isinstance(step.value, int) and step.value != 0):
        return False
    if all(isinstance(b, ConstantVariable) for b in it.bounds):
        if not all(isinstance(b.value, int) for b in it.bounds):
            return False
        if len(range(start.value, stop.value, step.value)) < MIN_TRIP:
            return False
    if any(not isinstance(_type_of(b), int) or isinstance(_type_of(b), bool) for b in (start, stop)):
        return False
    if tx.stop_at is not None and inst.index <= tx.stop_at < inst.target:
        return False   # a partial graph ends inside the loop: the unrolled capture knows where
    snap = _Snapshot(tx)
    try:
        _build(tx, inst, it, snap)
    except (LoopFallback, BreakGraph, KilnError) as e:
        snap.restore(tx)
        reason = str(e) if isinstance(e, LoopFallback) else getattr(getattr(e, "record", None),
                                                                     "reason", str(e))
        _note(tx, f"loop unrolled: {reason}")
        return False
    return True


def _trace_once(tx, inst, snap: _Snapshot, carried: dict) -> tuple:
    """Run the body once; returns (trace, i placeholder, carried placeholders, end locals)."""
    graph = Graph(f"{tx.code.co_name}_loop_body")
    trace = LoopTrace(tx.output.loop_trace, graph)
    nxt = tx.decoded.instructions[inst.index + 1]
    i_name = nxt.arg if nxt.opname == "STORE_FAST" and isinstance(nxt.arg, str) else "i"
    i_node = graph.placeholder(i_name, 1)   # named after the loop variable
    phs = {name: graph.placeholder(name, example) for name, example in carried.items()}
    trace.tx, trace.head, trace.exit = tx, inst.index, inst.target
    tx.output.loop_trace = trace
    try:
        tx.stack = list(snap.stack) + [ScalarValueVariable(i_node, 1)]
        tx.locals = dict(snap.locals)
        for name, ph in phs.items():
            tx.locals[name] = ScalarValueVariable(ph, ph.val)
        tx.ip = inst.index + 1
        instructions = tx.decoded.instructions
        while tx.ip != inst.index:
            if not inst.index < tx.ip < inst.target or tx.result is not None:
                raise LoopFallback("the body leaves the loop (break or return)")
            tx.step(instructions[tx.ip])
        if len(tx.stack) != len(snap.stack) or any(a is not b for a, b in zip(tx.stack, snap.stack)):
            raise LoopFallback("the body changes the value stack")
        if snap.changed_outside(tx):
            raise LoopFallback("the body changes containers, cells or objects from outside")
    finally:
        tx.output.loop_trace = trace.parent
    return trace, i_node, phs, dict(tx.locals)


def _loaded(before: Any, after: VariableTracker) -> bool:
    """Did the body just load an argument that was not used before the loop?"""
    from .translator import LazyVariable
    return isinstance(before, LazyVariable) and after.source is before.source


def _signature(graph: Graph) -> list:
    return [(n.target.name, n.kwargs.get("fn"), type(n.val).__name__,
             getattr(n.val, "dtype", None)) for n in graph.nodes if n.kind == "call"]


def _build(tx, inst, it: RangeIteratorVariable, snap: _Snapshot) -> None:
    from .resume import code_facts
    live = code_facts(tx.code).live_in[inst.index]
    trace, _, _, end = _trace_once(tx, inst, snap, {})
    rebound = [n for n in end if end[n] is not snap.locals.get(n) and not _loaded(snap.locals.get(n), end[n])]
    names = [n for n in rebound if n in live]
    for n in names:
        if n not in snap.locals:
            raise LoopFallback(f"'{n}' is assigned in the loop and used after it, but not bound before it")
    types = {}
    for n in names:
        t = _type_of(snap.locals[n])
        if t is None:
            raise LoopFallback(f"the loop rebinds '{n}' ({snap.locals[n].describe()})")
        types[n] = t
    if names:
        snap.restore(tx)
        trace, _, phs, end = _trace_once(tx, inst, snap, types)
        out = {n: _type_of(end[n]) for n in names}
        if any(out[n] is None for n in names):
            raise LoopFallback("a carried value becomes something other than a scalar")
        if any(type(out[n]) is not type(types[n]) for n in names):
            first = _signature(trace.graph)
            snap.restore(tx)
            trace, _, phs, end = _trace_once(tx, inst, snap, out)
            again = {n: _type_of(end[n]) for n in names}
            if any(type(again[n]) is not type(out[n]) for n in names) or _signature(trace.graph) != first:
                changed = ", ".join(f"'{n}' {type(types[n]).__name__} -> {type(out[n]).__name__}"
                                    for n in names if type(out[n]) is not type(types[n]))
                raise LoopFallback(f"a carried value changes type in the first iteration ({changed}); "
                                   f"start it with its final type")
            types = out
    else:
        phs = {}
    _emit(tx, inst, it, snap, trace, names, types, phs, end)


def _enclosing_value(tx, var: VariableTracker, example: Any) -> Any:
    """A carried value's initial value in the enclosing graph, converted to its type."""
    target = type(example)
    fn = f"np.{target.__name__}" if isinstance(example, np.generic) else target.__name__
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
    return graph_value(tx, apply_scalar(tx, fn, [var]))


def _emit(tx, inst, it, snap: _Snapshot, trace: LoopTrace, names: list, types: dict,
          phs: dict, end: dict) -> None:
    graph = trace.graph
    tx.locals = dict(snap.locals)
    for n, v in end.items():
        if _loaded(snap.locals.get(n), v):
            tx.locals[n] = v
    tx.stack = list(snap.stack)
    tx.output.loop_trace = trace
    try:
        outs = [graph_value(tx, end[n]) for n in names]
    finally:
        tx.output.loop_trace = trace.parent
    written = [s for s in trace.arrays.values() if s.written]
    read = [s for s in trace.arrays.values() if not s.written]
    for s in written:
        if s.tracker.base is not None or s.tracker.has_views:
            raise LoopFallback(f"the loop writes {s.tracker.describe()}, a view or an array with views")
    graph.output(tuple(outs) + tuple(s.node for s in written))
    # placeholders in the body's calling order: i, carried scalars, carried arrays, operands
    order = [graph.placeholders[0]] + [phs[n] for n in names] + [s.placeholder for s in written] \
        + [ph for _, ph in trace.operands] + [s.placeholder for s in read]
    rest = [n for n in graph.nodes if n.kind != "placeholder"]
    graph.nodes[:] = order + rest
    n_scalars = len(names)
    body = LoopBody(graph, n_scalars + len(written),
                    tuple(range(n_scalars, n_scalars + len(written))),
                    where=f"{tx.location()[0]}:{tx.location()[1]}")
    _guard_no_aliasing(tx, written, read)

    enclosing = current_graph(tx)
    bounds = tuple(b.value if isinstance(b, ConstantVariable) else graph_value(tx, b) for b in it.bounds)
    inits = [_enclosing_value(tx, snap.locals[n], types[n]) for n in names]
    inits += [s.outer for s in written]
    operands = [outer for outer, _ in trace.operands] + [s.outer for s in read]
    outer_trace = tx.output.loop_trace
    vals = []
    for n in names:
        ex = types[n]
        vals.append(TensorMeta((), ex.dtype) if outer_trace is None and isinstance(ex, np.generic) else ex)
    vals += [s.tracker.meta for s in written]
    node = enclosing.call(REGISTRY["loop"], bounds + (tuple(inits), tuple(operands)), {"body": body},
                          val=tuple(vals), source=tx.location())
    node.meta["loop_body"] = body
    for k, n in enumerate(names):
        item = enclosing.call(REGISTRY["loop_item"], (node,), {"index": k}, val=vals[k])
        item.meta["val"] = types[n]
        tx.locals[n] = _result(tx, item)
    for k, s in enumerate(written, start=n_scalars):
        item = enclosing.call(REGISTRY["loop_item"], (node,), {"index": k}, val=vals[k])
        _write_back(tx, s, item)
    tx.stack.pop()          # FOR_ITER's target is past the loop, the iterator popped
    tx.ip = inst.target
    if all(isinstance(b, ConstantVariable) for b in it.bounds):
        trips = str(len(range(*(b.value for b in it.bounds))))
    else:
        trips = "run-time: range(" + ", ".join(
            repr(b.value) if isinstance(b, ConstantVariable) else getattr(b, "text", None) or b.describe()
            for b in it.bounds) + ")"
    _note(tx, f"loop node ({node.name}, trip count {trips}, {len(graph.calls)} body ops, carried: "
              f"{', '.join(names + [s.tracker.describe() for s in written]) or 'nothing'})")


def _write_back(tx, state: ArrayState, item: Any) -> None:
    trace = tx.output.loop_trace
    tracker = state.tracker
    if trace is not None:
        parent = trace.array(tx, tracker)
        parent.node = item
        parent.written = True
        return
    from .opcall import _check_writable
    if tracker.can_rewrite_in_place():
        tracker.node = item
        return
    _check_writable(tx, "the loop's writes", tracker)
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
