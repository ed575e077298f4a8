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

This module has the values a body computes with (scalars, element reads and writes,
ranges with run-time bounds); kiln/capture/loop_node.py traces the body and emits the
node, kiln/capture/loop_branches.py turns a data-dependent if/else into selects.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import Graph
from ..ops import REGISTRY, TensorMeta, method_key
from ..ops.loops import NUMPY_SCALAR_UFUNCS, OPERATOR_NAMES, SCALAR_FUNCTIONS, stand_in
from .breaks import BreakGraph
from .variables.arrays import ArrayVariable, PyValueVariable, SymScalarVariable
from .sources import AttrSource, LocalSource, RangeRestSource, range_rest
from .variables.base import ConstantVariable, VariableTracker
from .variables.containers import TupleVariable
from .variables.iterators import IteratorVariable

# Constant trip counts below this unroll as before (a loop node costs a body trace).
MIN_TRIP = 4


class LoopFallback(Exception):
    """The body cannot be one loop node: the loop unrolls. ``str`` is the reason."""


def refuse_inside_grad(tx) -> None:
    """Loops inside a function ``kiln.grad`` differentiates in compiled code stay unrolled,
    as loops over kiln.Tensors do: a loop node has no derivative rule, and the eager tape
    the call would go to instead cannot follow a value written into a NumPy array
    (``out = np.empty(n); out[t] = ...``)."""
    if getattr(tx.output, "grad_depth", 0):
        raise LoopFallback("inside kiln.grad (gradients need the loop unrolled)")


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
        if name in ("real", "imag"):   # of a real number: itself (a bool's as an int), a zero
            ex = self.example
            if name == "imag":
                return ConstantVariable(type(ex)(0) if isinstance(ex, np.generic) else
                                        0.0 if type(ex) is float else 0)
            return apply_scalar(tx, "int", [self]) if type(ex) is bool else self
        if name == "astype" and isinstance(self.example, np.generic):
            from .variables.containers import ContainerMethodVariable
            return ContainerMethodVariable(self, name)   # see call_method
        _refuse(tx, f"attribute '{name}' of {self.describe()}")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if name == "astype" and isinstance(self.example, np.generic) and len(args) == 1 \
                and not kwargs and args[0].is_constant():
            # ``x[i].astype(np.int64)`` of a NumPy scalar is ``np.int64(x[i])``: same value,
            # type and warnings (a cast)
            try:
                cls = np.dtype(args[0].value).type
            except TypeError:
                cls = None
            if cls is not None and issubclass(cls, (np.number, np.bool_)):
                return apply_scalar(tx, f"np.{cls.__name__}", [self])
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
        self.lo = self.hi = self.start = -1    # the body's instructions, where it starts
        self.cont: bool | None = None   # a while loop's (see Region)
        self.iterator = None      # a for loop's iterator (a break pops it) and stack depth
        self.depth = 0
        # Control flow in the body (kiln/capture/loop_branches.py): the predicate of the
        # path being traced (None: every path) and the paths that left the iteration.
        self.active: VariableTracker | None = None
        self.exits: list = []

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
        # (the dims of an array the loop writes are specialized when the node is built:
        # its result sizes are static; one it only reads keeps them run-time)
        outer = self.parent.array(tx, tracker).node if self.parent is not None else tracker.node
        meta = tracker.meta
        if any(d is not None for d in tracker.dims):
            # a run-time dim is a size symbol in the body: its compiled variants read it
            # from the array's layout (kiln/lowering/loops.py), not the example's number
            from .unbacked_dims import atom_symbol
            meta = TensorMeta(tuple(n if d is None else atom_symbol(tx, d)
                                    for n, d in zip(meta.shape, tracker.dims)), meta.dtype)
        ph = self.graph.placeholder(tracker.source.display() if tracker.source is not None
                                    else tracker.node.name, meta)
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
    if isinstance(var, PyValueVariable) and trace is None and (
            var.kind is int and np.can_cast(var.array.meta.dtype, np.int64)
            or var.kind is float and var.array.meta.dtype == np.float64):
        # ``topples += int(n.sum())`` in a graph loop's body: int() of the 0-d integer
        # array, exact in an int64; ``total += float(loss)``: float() of a float64, the
        # same double; the addition is Python's (a compiled graph runs its scalar_fns in
        # its wrapper)
        return current_graph(tx).call(REGISTRY["scalar_fn"], ((var.array.node,),),
                                      {"fn": var.kind.__name__}, source=tx.location())
    _refuse(tx, f"{var.describe()} in scalar code")


def _val_of(value: Any) -> Any:
    return value.val if hasattr(value, "kind") else value


def _result(tx, node: Any) -> VariableTracker:
    example = node.val
    if tx.output.loop_trace is None and isinstance(example, np.generic):
        if tx.output.device_type is not None:   # (CuPy's is a 0-d array, not a scalar)
            tx.unsupported("unsupported_call", "scalar code on values of an array on a GPU "
                           "(CuPy gives 0-d arrays there, not NumPy scalars)",
                           "it runs as Python; keep GPU work in whole-array operations")
        # In the function's own graph a NumPy scalar is a 0-d value, as everywhere else.
        node.meta["val"] = TensorMeta((), example.dtype)
        var = ArrayVariable(node)
        var.scalar = True
        return var
    return ScalarValueVariable(node, example)


class LoopIndexVariable(ScalarValueVariable):
    """A range loop's variable in the body of its graph loop node (kiln/capture/
    graph_breaks.py): the int the graph computes at the trip's start, which a subscript
    takes as a run-time index (``out[i] = f(a[i])``, ``a[i, 1:]``) as it takes an int
    argument (kiln/capture/dims.py ``runtime_slices``): the body graph's input, which the
    wrapper wraps when negative and checks against the dim (NumPy's IndexError). ``code``
    and ``text`` name it where run-time scalars are told apart."""

    def __init__(self, var: ScalarValueVariable) -> None:
        super().__init__(var.node, var.example)
        self.code = self.text = var.node.name

    def index_example(self) -> int:
        """What the op's normalizer and shape rule see: an int object of its own, so that
        no literal of the call is taken for it (run-time scalars are found by identity,
        and CPython shares the ints -5..256: ``out[i, 1:]``). It must be inside the dim
        (the shape rule checks it): -6, on a dim of 6 or more; on a shorter one the
        subscript specializes and the loop unrolls, as before."""
        return int("-6")


def apply_scalar(tx, fn: str, args: list) -> VariableTracker:
    """``fn(*args)`` on scalars: a ``scalar_fn`` node in the current graph (on a path of a
    data-dependent branch, one that may raise or warn gets harmless operands off the path)."""
    values = tuple(graph_value(tx, a) for a in args)
    trace = tx.output.loop_trace
    if trace is not None and trace.active is not None:
        from .loop_predicates import may_raise, may_warn, safe_operands
        raises = may_raise(fn, values)
        if raises or may_warn(fn, values):
            args = safe_operands(tx, trace, list(args), warn_only=not raises)
            values = tuple(graph_value(tx, a) for a in args)
    if fn in ("min", "max") and len({type(stand_in(_val_of(v))) for v in values}) > 1:
        if trace is not None and len(args) > 1:
            return _mixed_extreme(tx, fn, args)
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


def _mixed_extreme(tx, fn: str, args: list) -> VariableTracker:
    """``max(0.0, h - g, ...)`` in a body, a Python float among np.float64 values (or an
    int among np.int64, a bool among np.bool_): one pair at a time, as Python compares
    them (the later value where it is strictly larger), each Python number widened to the
    NumPy type; the result's type in Python is the chosen one's (kiln/capture/loop_types.py
    follows it through the widening)."""
    from .loop_branches import _WIDENS, _widen
    kinds = {type(stand_in(_val_of(graph_value(tx, a)))) for a in args}
    wide = [k for k in kinds if k not in _WIDENS]
    if len(wide) != 1 or any(_WIDENS[k] is not wide[0] for k in kinds if k in _WIDENS):
        _refuse(tx, f"{fn}() of values of different types (its result's type depends on the values)")
    out = args[0]
    for a in args[1:]:
        pair = [_widen(tx, v, stand_in(_val_of(graph_value(tx, v))), wide[0](0)) for v in (out, a)]
        out = apply_scalar(tx, fn, pair)
    return out


def is_scalar_like(var: VariableTracker) -> bool:
    return isinstance(var, ScalarValueVariable)


# -- inside a body: what call_op does there ------------------------------------------------

def call_in_body(tx, key: Any, args: list, kwargs: dict, what: str) -> VariableTracker:
    from . import loop_vectors as vectors
    trace = tx.output.loop_trace
    if key == method_key("__getitem__") and len(args) == 2 and not kwargs \
            and isinstance(args[0], ArrayVariable):
        state = trace.array(tx, args[0])
        where = vectors.view_where(tx, state, args[1])
        if where is not None:
            if trace.active is not None:
                raise LoopFallback("array slices under a data-dependent branch")
            return vectors.getitem(tx, state, where)
        index = _element_index(tx, state, args[1])
        node = trace.graph.call(REGISTRY["load_elem"], (state.node, index), source=tx.location())
        return ScalarValueVariable(node, node.val)
    if key == method_key("__setitem__") and len(args) == 3 and not kwargs \
            and isinstance(args[0], ArrayVariable):
        state = trace.array(tx, args[0])
        where = vectors.view_where(tx, state, args[1])
        if where is not None:
            if trace.active is not None:
                raise LoopFallback("array slices under a data-dependent branch")
            vectors.store(tx, state, where, args[2])
            return ConstantVariable(None)
        index = _element_index(tx, state, args[1], guarded=False)
        value = graph_value(tx, args[2])
        if trace.active is not None:   # on one path of a data-dependent branch
            trace.graph.call(REGISTRY["store_elem_if"], (graph_value(tx, trace.active), state.node,
                                                         index, value), source=tx.location())
        else:
            trace.graph.call(REGISTRY["store_elem"], (state.node, index, value), source=tx.location())
        state.written = True
        return ConstantVariable(None)
    if any(vectors.is_vector(a) or vectors.is_whole(a) for a in args):
        if trace.active is not None:
            raise LoopFallback("array slices under a data-dependent branch")
        return vectors.call(tx, key, list(args), kwargs, what)
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


def _element_index(tx, state: ArrayState, index: VariableTracker, guarded: bool = True) -> tuple:
    """``guarded``: on a path of a data-dependent branch, a read's index stays in bounds
    off the path (kiln/capture/loop_branches.py)."""
    entries = index.item_list if isinstance(index, TupleVariable) else [index]
    if len(entries) != len(state.tracker.meta.shape):
        raise LoopFallback("an index that is not one integer per axis (a slice or a row)")
    out = int_entries(tx, entries)
    trace = tx.output.loop_trace
    if guarded and trace.active is not None:
        from .loop_predicates import safe_index
        entries = [ConstantVariable(v) if type(v) is int else e for e, v in zip(entries, out)]
        out = int_entries(tx, safe_index(tx, trace, tuple(state.tracker.meta.shape), entries))
    return out


def int_entries(tx, entries: list) -> tuple:
    """Integer index entries as graph values (literals or int nodes)."""
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

    def short(self) -> bool:
        """Constant bounds of fewer than MIN_TRIP steps (a loop that unrolls anyway)."""
        if not all(isinstance(b, ConstantVariable) and type(b.value) is int for b in self.bounds):
            return False
        start, stop, step = (b.value for b in self.bounds)
        return step != 0 and len(range(start, stop, step)) < MIN_TRIP

    @property
    def pending(self) -> "list | RangeItems":
        if self._pending is None:
            values = [b.as_constant(self.tx) for b in self.bounds]
            self._pending = RangeItems(self.tx.fold(range, *values))
        return self._pending

    @pending.setter
    def pending(self, items: list) -> None:
        self._pending = list(items)


class RangeItems:
    """A range's steps not yet taken, as the ConstantVariables a list of them would hold,
    made one at a time: ``for i in range(100_000)`` is judged by its length (too long to
    unroll) without 100,000 trackers first (~0.3 s of a first call)."""

    def __init__(self, steps: range) -> None:
        self.steps = steps

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self):
        return (ConstantVariable(v) for v in self.steps)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [ConstantVariable(v) for v in self.steps[i]]
        return ConstantVariable(self.steps[i])

    def pop(self, i: int = -1) -> VariableTracker:
        if i not in (0, -1, len(self.steps) - 1):
            raise IndexError("RangeItems pops from either end")
        value = self.steps[i]
        self.steps = self.steps[1:] if i == 0 else self.steps[:-1]
        return ConstantVariable(value)


class LiveRangeIteratorVariable(RangeIteratorVariable):
    """A range loop's iterator handed to a resume function: the loop's body broke the
    graph and the loop goes on here. Its rest is read when the entry is called (bounds
    run-time ints, the step and whether any is left guarded), so one entry serves every
    iteration. Its first FOR_ITER tries a loop node over a rest of MIN_TRIP steps or
    more; unrolled, it takes one step (the next value, a run-time int) and a second step
    breaks the graph at the loop head, where the next resume function takes it over
    again, rather than specialize the bounds and compile once per iteration. Rebuilt, it
    is a new iterator over the rest (as the unrolled ones are); no other argument holds
    the object (guarded), so nothing reads the one handed in again."""

    def __init__(self, tx, value: Any, source: Any) -> None:
        rest, self.rest_source = range_rest(value), RangeRestSource(source)
        ns = tx.guards.ns
        # Whether any step is left, guarded first (the exit's entry and the step's differ
        # there: the one not taken fails on its second test). A range iterator's length
        # hint is its exact length left.
        tx.guards.add_truth(f"{source.code(ns)}.__length_hint__()", f"len({self.rest_source.display()})",
                            len(rest) > 0, (source,))
        # the step, an int, read from the range __reduce__ names (the rest's is the same)
        tx.guards.add_truth(f"{source.code(ns)}.__reduce__()[1][0].step == {rest.step}",
                            f"rest({source.display()}).step == {rest.step}", True, (source,))
        bounds = [AttrSource(self.rest_source, name) for name in ("start", "stop")]
        start, stop = (SymScalarVariable(s.code(ns), s.display(), getattr(rest, s.attr), (s,), source=s)
                       for s in bounds)
        for s in bounds:   # leaves of what is computed from them (guarded when specialized)
            tx.output.leaf_values[s.display()] = getattr(rest, s.attr)
        super().__init__(tx, (start, stop, ConstantVariable(rest.step)))
        self.source, self.rest = source, rest
        # A rest too short for a loop node (the last steps, the exit) is not tried as one:
        # the tries snapshot the containers the frame holds, reading a list handed in item
        # by item (guarded by value: an entry per call of a descent loop's last step).
        # Not trying is always exact, so this needs no guard.
        self.tried = len(rest) < MIN_TRIP

    def describe(self) -> str:
        return f"range iterator {self.source.display()}"

    def next(self, tx=None) -> VariableTracker | None:
        tx = tx or self.tx
        if self.taken:
            tx.unsupported("unsupported_value", f"a second step of {self.describe()} (a loop "
                           "that goes on from an earlier graph): the next resume function "
                           "takes it")
        if not self.rest:
            return None
        self.taken = 1
        return self.bounds[0]

    def python_iterable(self, rebuild, ns) -> str:
        # A new iterator over the rest, advanced by the steps taken: the object handed in
        # is not advanced, so that the run-time ints read from it (the loop variable, as
        # an argument of the next segment) are the ones the graph saw.
        return self.rest_source.code(ns)


def live_range_iterator(tx, value: Any, source: Any) -> LiveRangeIteratorVariable | None:
    """A loop's iterator on a resume function's stack, taken over (see the class); None
    for another iterator, or one an argument also holds (``it = iter(range(n))``: a loop
    node would not advance the object the name reads after the loop). That it is no
    other argument is guarded."""
    from .resume import STACK_PREFIX
    if type(value) is not type(iter(range(0))) or not isinstance(source, LocalSource) \
            or not source.name.startswith(STACK_PREFIX):
        return None
    arguments = tx.output.argument_values
    others = [name for name in arguments if name != source.name]
    shared = " or ".join(f"{source.name} is {name}" for name in others)
    aliased = any(arguments[name] is value for name in others)
    tx.guards.add_type(source, type(value))
    if aliased:
        tx.guards.add_truth(shared, shared, True, (source,))
        return None
    var = LiveRangeIteratorVariable(tx, value, source)
    if others:
        tx.guards.add_truth(shared, shared, False, (source,))
    return var


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
