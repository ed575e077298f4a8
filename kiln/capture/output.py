"""The output of one capture: the graph being built, its inputs (each a Python
expression the prologue evaluates), the guards, and the code that rebuilds the
function's return value from the graph's outputs."""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..array_kinds import kind_of
from ..guards.guard import SIZE, GuardSet, literal
from ..ir import Graph
from ..ops import TensorMeta
from .sources import CodeNamespace, Source, local_name, shape_source
from .bytecode_facts import OPERATOR_SYMBOLS
from .loop_types import TypedByFlagVariable, python_scalar
from .python_numbers import PythonIntVariable
from .variables.arrays import ArrayVariable, PyValueVariable, SymScalarVariable
from .variables.base import ConstantVariable, VariableTracker


# The longest code a tuple or a Python int read from data is written out as, inline, where
# it is used; a longer one is built once, under a name (once_if_long).
MAX_INLINE_CODE = 200


def once_if_long(var: VariableTracker, make, named: dict, bind) -> str:
    """``make(var)``, or, where that is longer than MAX_INLINE_CODE, a name ``bind`` binds
    it to, once: the value is reused for every place that reaches it (``named``, by id).
    Tuples and Python ints made in the frame form a graph, not a tree (``t = (t, t)``;
    ``a, b = b, a + b``, each sum an operand of the next two): written out whole at each
    use, 40 steps were 2**40 (fib(40)) terms, and capture never returned. Short ones stay
    inline (``return a, b``: the entry's return is then its simple form)."""
    name = named.get(id(var))
    if name is not None:
        return name
    code = make(var)
    if len(code) <= MAX_INLINE_CODE:
        return code
    name = named[id(var)] = bind(code)
    return name


class DynamicSpec:
    """Which dimensions capture treats as dynamic: ``mode`` True (all), False (none), or
    None (those in ``marked``, learned from size-only recompiles); and what else earlier
    calls taught capture."""

    def __init__(self, mode: bool | None, marked: set | None = None,
                 scalars: set | None = None, kinds: dict | None = None) -> None:
        self.mode = mode
        self.marked = set(marked or ())
        # Python numbers read through an attribute or a global whose value changed between
        # calls (``self.t += 1`` in an optimizer): read at run time, not baked in; and int
        # arguments that did (``n_steps``: a loop's trip count is left to run time).
        self.scalars = set(scalars or ())
        # The result dtypes seen at the user lines of ops whose result dtype depends on
        # the values ({"file:line": dtype names}; kiln/ops/speculation.py).
        self.kinds = kinds if kinds is not None else {}

    def is_dynamic(self, source: Source, dim: int, size: int) -> bool:
        if size in (0, 1) or self.mode is False:  # 0/1 decide broadcasting: always static
            return False
        return self.mode is True or (source.display(), dim) in self.marked

    def is_dynamic_scalar(self, source: Source) -> bool:
        return self.mode is not False and source.display() in self.scalars

    def is_dynamic_count(self, leaves: tuple) -> bool:
        """Whether a run-time int computed from ``leaves`` took another value between
        calls (a loop's trip count: the loop is then not unrolled for one value)."""
        return any(self.is_dynamic_scalar(leaf) for leaf in leaves)


class OutputGraph:
    def __init__(self, name: str, fn_globals: dict, closure: dict, dynamic: DynamicSpec) -> None:
        self.graph = Graph(re.sub(r"\W", "_", name) or "forward")
        self.ns = CodeNamespace(fn_globals, closure)
        self.guards = GuardSet(self.ns)
        self.dynamic = dynamic
        self.wrapped: dict[tuple, VariableTracker] = {}
        self.leaf_values: dict[str, Any] = {}
        self.argument_values: dict[str, Any] = {}   # the call's, by parameter name
        self.container_items = 0   # items read from containers from outside (builder.read_items)
        self.inputs: list[tuple[Any, str]] = []      # (placeholder node, prologue expression)
        self._input_by_code: dict[str, Any] = {}
        self.outputs: list[Any] = []
        self.dynamic_dims: list[str] = []            # for explain/logs: "x.shape[0]"
        # a loop not unrolled because its trip count changed between calls (the cache
        # tries this entry after those unrolled for earlier counts: kiln/api.py)
        self.counts_at_run_time = False
        # Mutations of objects from outside (list appends, dict and attribute stores), in
        # program order; replayed as Python after the graph runs (array writes are graph ops).
        self.side_effects: list[tuple] = []
        self.replay: list[str] = []
        # The graph runs code of a try body (or of a with body inside one): an exception it
        # raises must reach the except clause, so the entry reruns the function as Python.
        self.catches = False
        # Runtime scalars read by replayed code and the return value, evaluated once before
        # the replay: ``cfg['n'] += 1`` twice must not read its own stores (code -> name).
        self.scalar_bindings: dict[str, str] | None = None
        self.container_names: dict[int, str] | None = None   # while building the return code
        self.container_lines: list[str] = []
        self.prebound: dict[str, str] | None = None   # entry paths read before the replay
        self.prebound_ints: dict[int, str] = {}   # id(PythonIntVariable) -> name, while prebound
        self.prebind_lines: list[str] = []
        self.mutable_objects: dict[int, tuple] = {}  # id -> (tracker, source): see builder.wrap
        # Sizes known only after an op ran, by what they count (opcall_dims.unbacked_dims); a
        # count of the array writes so far is part of the key (a written mask counts anew).
        self.unbacked_sizes: dict[tuple, tuple] = {}
        # Sizes derived from those are polynomials over stable symbols (unbacked_dims.py):
        # tracker key -> symbol name, and symbol name -> tracker.
        self.size_names: dict[tuple, str] = {}
        self.size_atoms: dict[str, Any] = {}
        self.pending_selections: list = []   # x[mask] not taken yet (selections.before_write)
        self.writes = 0
        self.loop_trace = None     # the loop body being traced (capture/loops.py), or None
        self.graph_loop_body = False   # a graph loop's body is being traced (graph_loop.py)
        self.loop_notes: list[str] = []   # loop nodes built, loops unrolled and why (explain)
        self.device_type: type | None = None   # cupy.ndarray once a device array is an input

    # -- inputs -------------------------------------------------------------------------
    def _placeholder(self, hint: str, code: str, val: Any) -> Any:
        node = self._input_by_code.get(code)
        if node is None:
            name = re.sub(r"\W+", "_", hint).strip("_") or "arg"
            node = self.graph.placeholder(name, val)
            self._input_by_code[code] = node
            self.inputs.append((node, code))
        return node

    def array_input(self, value: Any, source: Source) -> ArrayVariable:
        """An ndarray or kiln.Tensor argument (or global, attribute...): a placeholder."""
        code = source.code(self.ns)
        dynamic = frozenset(i for i, n in enumerate(value.shape)
                            if self.dynamic.is_dynamic(source, i, n))
        kind = kind_of(value)
        is_tensor = kind is None    # a kiln.Tensor (else an array kind's array)
        if kind is not None and kind.device != "cpu":
            self.device_type = type(value)
        self.guards.add_array(source, value, dynamic)
        if is_tensor:
            self.guards.add_grad_mode()
        node = self._placeholder(source.display(), code, TensorMeta(value.shape, value.dtype))
        dims = []
        for i, n in enumerate(value.shape):
            self.leaf_values[shape_source(source, i).display()] = n
            if i in dynamic:
                s = shape_source(source, i)
                dims.append(SymScalarVariable(s.code(self.ns), s.display(), n, (s,), source=s))
                self.dynamic_dims.append(s.display())
            else:
                dims.append(None)
        if dynamic:
            node.meta["dynamic_dims"] = tuple(sorted(dynamic))
        return ArrayVariable(node, tuple(dims), source=source, fresh=False, tensor=is_tensor,
                             array_type=np.ndarray if is_tensor else type(value))

    def constant_array(self, value: np.ndarray) -> ArrayVariable:
        return ArrayVariable(self.graph.constant(value), fresh=False)

    def scalar_node(self, sym: SymScalarVariable) -> Any:
        if getattr(sym, "node", None) is not None:   # an int the graph computes (loops.LoopIndexVariable)
            return sym.node
        return self._placeholder(sym.text, sym.code, sym.example)

    def leaf_value(self, source: Source) -> Any:
        return self.leaf_values[source.display()]

    def drop_values(self) -> None:
        """Forget the call's values once capture is over: the translator and this graph
        refer to each other, so what they hold lives until Python's cycle collector runs,
        and the first call's arrays (GBs, for some users) with it."""
        self.leaf_values.clear()
        self.argument_values.clear()

    def literal(self, value: Any) -> str:
        if type(value) is float and value != value:
            # the NaN object itself: np.nan in [np.nan] and x is np.nan hold by identity
            return self.ns.ref(value, "c")
        lit = literal(value)
        return lit if lit is not None else self.ns.ref(value, "c")

    # -- outputs ------------------------------------------------------------------------
    def _output_index(self, node: Any) -> int:
        for i, n in enumerate(self.outputs):
            if n is node:
                return i
        self.outputs.append(node)
        return len(self.outputs) - 1

    def reconstruct(self, tx, var: VariableTracker) -> str:
        """Python code (over the parameters and ``_kiln_out``) that rebuilds ``var``."""
        from .variables.containers import DictVariable, DictViewVariable, ListVariable
        from .variables.user_classes import NewObjectVariable
        if isinstance(var, PyValueVariable):
            return f"{self.ns.ref(var.kind, 'c')}({self.reconstruct(tx, var.array)})"
        if isinstance(var, PythonIntVariable):   # Python's int arithmetic, where it leaves
            return self._python_int(tx, var)
        if isinstance(var, TypedByFlagVariable):   # a loop node's value Python may hold as NumPy
            return (f"{self.ns.ref(python_scalar, 'c')}({self.reconstruct(tx, var.array)}, "
                    f"{self.reconstruct(tx, var.flag)}, {self.ns.ref(var.kind, 'c')})")
        if isinstance(var, ArrayVariable):
            if var.node.kind == "placeholder":   # as it was at entry (see object_code)
                return self._at_entry(self._input_code(var.node))
            return f"_kiln_out[{self._output_index(var.node)}]"
        if getattr(var, "node", None) is not None and var.node.graph is self.graph:
            return f"_kiln_out[{self._output_index(var.node)}]"  # a loop's final scalar
        if isinstance(var, SymScalarVariable):
            if self.scalar_bindings is None:
                return var.code
            return self.scalar_bindings.setdefault(var.code, local_name("s", len(self.scalar_bindings)))
        if isinstance(var, ConstantVariable):
            from .variables.builtins import OpaqueCallableVariable
            if isinstance(var, OpaqueCallableVariable) and var.source is not None:
                return self.object_code(var.source)  # guarded by type: this call's object
            if type(var.value) in (set, frozenset) and var.source is not None:
                return self.object_code(var.source)   # passed in: this call's own object
            if type(var.value) is set:  # built in the frame: a fresh set per call
                return f"set({self.ns.ref(var.value, 'c')})"
            return self.literal(var.value)
        if isinstance(var, DictViewVariable):
            return f"{self.reconstruct(tx, var.owner)}.{var.kind}()"
        if isinstance(var, (ListVariable, DictVariable)) and var.source is not None:
            return self.object_code(var.source)  # passed in: the same object
        from .loop_lists import StackedListVariable
        if isinstance(var, (ListVariable, DictVariable, NewObjectVariable, StackedListVariable)) \
                and self.container_names is not None:
            # Made in the frame: built once under a name (``return a, a`` is one list).
            name = self.container_names.get(id(var))
            if name == "pending":   # it holds itself (``a.append(a)``, ``self.me = self``)
                tx.unsupported("unsupported_value", f"returning {var.describe()}, which holds itself")
            if name is None:
                self.container_names[id(var)] = "pending"
                expr = self._container(tx, var)
                name = self.container_names[id(var)] = self._container_line(expr)
            return name
        from .variables.containers import TupleVariable
        if isinstance(var, TupleVariable) and self.container_names is not None:
            return once_if_long(var, lambda v: self._container(tx, v), self.container_names,
                                self._container_line)
        return self._container(tx, var)

    def _container_line(self, code: str) -> str:
        name = local_name("c", len(self.container_lines))
        self.container_lines.append(f"{name} = {code}")
        return name

    def _container(self, tx, var: VariableTracker) -> str:
        from .loop_lists import StackedListVariable
        from .variables.containers import DictVariable, ListVariable, NamedTupleVariable, TupleVariable, rebuild_dict
        if isinstance(var, StackedListVariable):
            return var.rebuild(lambda v: self.reconstruct(tx, v))
        if isinstance(var, ListVariable):
            return "[" + ", ".join(self.reconstruct(tx, v) for v in var.item_list) + "]"
        if isinstance(var, NamedTupleVariable):
            return f"{self.ns.ref(var.cls, 'cls')}(" + ", ".join(
                self.reconstruct(tx, v) for v in var.item_list) + ")"
        if isinstance(var, TupleVariable):
            if var.source is not None and all(
                    item.source is not None and item.source.display() == f"{var.source.display()}[{i}]"
                    for i, item in enumerate(var.item_list)):
                return self.object_code(var.source)  # the tuple passed in, unchanged
            inner = ", ".join(self.reconstruct(tx, v) for v in var.item_list)
            return f"({inner},)" if len(var.item_list) == 1 else f"({inner})"
        if isinstance(var, DictVariable):
            return rebuild_dict(var, "{" + ", ".join(f"{literal(k) or self.ns.ref(k)}: {self.reconstruct(tx, v)}"
                                                     for k, v in var.entries.items()) + "}", self.ns)
        from .variables.user_classes import NewObjectVariable
        if isinstance(var, NewObjectVariable):
            return var.rebuild(lambda v: self.reconstruct(tx, v), self.ns)
        return self._other(tx, var)

    def _other(self, tx, var: VariableTracker) -> str:
        from .variables.arrays import MaskedSelectionVariable
        from .variables.containers import SliceVariable
        from .variables.iterators import IteratorVariable
        if isinstance(var, MaskedSelectionVariable) and var.taken is not None:
            return self.reconstruct(tx, var.taken)
        if isinstance(var, MaskedSelectionVariable):  # taken for real, after the graph:
            # once, so that the selection returned twice (``v = x[m]; return v, v``) is one
            # array, as in the frame
            return self._bind_once(f"{self.reconstruct(tx, var.full)}[{self.reconstruct(tx, var.mask)}]")
        if isinstance(var, SliceVariable):
            return "slice(" + ", ".join(self.reconstruct(tx, p) for p in var.parts) + ")"
        if var.source is not None and not isinstance(var, IteratorVariable):
            return self.object_code(var.source)
        tx.unsupported("unsupported_value", f"returning {var.describe()} from a compiled function",
                       "return arrays, scalars and containers of them")

    def _input_code(self, node: Any) -> str:
        for n, code in self.inputs:
            if n is node:
                return code
        raise AssertionError(f"{node} is not an input")

    def record_side_effect(self, kind: str, target: VariableTracker, *payload: Any) -> None:
        """``("call", list_or_dict, method, args, kwargs)``, ``("setitem", obj, key, value)``,
        ``("delitem", obj, key)`` or ``("setattr", obj, name, value)`` on an object that
        came from outside."""
        self.side_effects.append((kind, target) + payload)

    def replay_code(self, rebuild) -> list[str]:
        """Python statements applying the recorded side effects, in program order.

        Capture assumed a mutated object is not also reachable under another name unless
        it saw that: guard it."""
        mutated = {id(t): t for _, t, *_ in self.side_effects}
        for target in mutated.values():
            for other, other_source in self.mutable_objects.values():
                if other is not target and target.source is not None:
                    a, b = target.source, other_source
                    self.guards.add_truth(f"{a.code(self.ns)} is {b.code(self.ns)}",
                                          f"{a.display()} is {b.display()}", False, (a,))
        if self.side_effects and self.scalar_bindings is None:
            self.scalar_bindings = {}
        lines = []
        for kind, target, *payload in self.side_effects:
            obj = self.object_code(target.source)
            if kind == "call":
                name, args, kwargs = payload
                parts = [rebuild(a) for a in args] + [f"{k}={rebuild(v)}" for k, v in kwargs.items()]
                lines.append(f"{obj}.{name}({', '.join(parts)})")
            elif kind == "setitem":
                key, value = payload
                lines.append(f"{obj}[{rebuild(key)}] = {rebuild(value)}")
            elif kind == "delitem":
                lines.append(f"del {obj}[{rebuild(payload[0])}]")
            else:
                name, value = payload
                lines.append(f"{obj}.{name} = {rebuild(value)}")
        return lines

    def object_code(self, source: Source) -> str:
        """Code for an object that was reached through ``source`` at entry. A path into
        another object (``l[0]``, ``o.a``) is read once, before any replayed store, into a
        name: ``l[0], l[1] = l[1], l[0]; l[0].append(9)`` must append to the list that was
        at l[1], not to whatever is at l[0] after the swap."""
        return self._at_entry(source.code(self.ns))

    def _at_entry(self, code: str) -> str:
        """``code``, read before the replayed stores where there are any (a name
        needs no binding: the replay never rebinds one)."""
        return code if code.isidentifier() or not self.side_effects else self._bind_once(code)

    def _bind_once(self, code: str) -> str:
        """A name ``code`` is evaluated into once, before any replayed store (while
        replay and reconstruction code is built; else ``code`` itself)."""
        if self.prebound is None:
            return code
        name = self.prebound.get(code)
        if name is None:
            name = self.prebound[code] = local_name("o", len(self.prebound))
            self.prebind_lines.append(f"{name} = {code}")
        return name

    def _python_int(self, tx, var: PythonIntVariable) -> str:
        """``var``'s Python int arithmetic; a long one computed once under a name (while
        replay and reconstruction code is built), see once_if_long."""
        def make(v):
            a, b = (self.reconstruct(tx, o) for o in v.operands)
            return f"({a} {OPERATOR_SYMBOLS[v.op]} {b})"
        if self.prebound is None:
            return make(var)
        return once_if_long(var, make, self.prebound_ints, self._bind_once)

    def begin_rebuild(self) -> None:
        """Start building replay and reconstruction code (see object_code)."""
        self.prebound, self.prebind_lines, self.prebound_ints = {}, [], {}

    def finish(self, tx, result: VariableTracker) -> str:
        """Close the graph; returns the return-value expression (side effects: ``replay``)."""
        self.container_names, self.container_lines = {}, []
        self.begin_rebuild()
        self.replay = self.replay_code(lambda v: self.reconstruct(tx, v))
        code = self.reconstruct(tx, result)
        self.replay = self.scalar_prelude() + self.prebind_lines + self.container_lines + self.replay
        self.container_names = None
        self.graph.output(tuple(self.outputs))
        self._drop_pinned_dims(tx.guards)
        return code

    def _drop_pinned_dims(self, guards: GuardSet) -> None:
        """Dynamic dims that got pinned while capturing (``x.shape[1] == 4``) are static
        for whoever lowers the graph: a size symbol for them would meet the numbers the
        graph holds for them (a backward's shapes)."""
        pinned: dict = {}
        for g in guards.guards:
            if g.kind == SIZE and "==" in g.code and g.source is not None:
                pinned.setdefault(g.source.code(self.ns), set()).add(g.dim)
        for code, dims in pinned.items():
            node = self._input_by_code.get(code)
            if node is not None and node.meta.get("dynamic_dims"):
                kept = tuple(d for d in node.meta["dynamic_dims"] if d not in dims)
                if kept:
                    node.meta["dynamic_dims"] = kept
                else:
                    del node.meta["dynamic_dims"]

    def scalar_prelude(self) -> list[str]:
        """Statements binding the runtime scalars that replay and return code read; they
        go before the replay (call after every expression has been built)."""
        return [f"{name} = {code}" for code, name in (self.scalar_bindings or {}).items()]
