"""Functionalization: a graph with mutations and views becomes a pure graph plus a plan.

A captured graph may write: ``copyto(x, t)`` (``x += 1``, ``out=``), ``setitem(x, i, v)``
(``x[i] = v``), ``add_at``..., possibly through views of views. Fusion and reordering
need a graph where every value is computed once and never changes, so each mutation op
is replaced by its functional op (``op.functional``: the new value of the written array)
and every later read of anything sharing that memory reads the new value instead.

Aliasing is tracked per value, as torch's FunctionalTensorWrapper does: every array value
has a *base* (a graph input or the result of a non-view op) and a *view path* from the
base (the view nodes applied in order). A write through a view scatters the new view
value back into the base, undoing the path step by step; the base's version goes up, and
a value of that base whose version is stale is regenerated from the new base by replaying
its path. What NumPy would leave behind is described by a :class:`Plan`:

- ``mutated``: inputs the graph wrote, and which extra output holds each one's final
  value — the runtime copies it into the caller's array (the epilogue);
- ``outputs``: for each user output, how to rebuild it — a fresh graph output, the input
  object itself, a view replayed on an input, or a view replayed on an intermediate that
  the graph returns as an extra output (so outputs that share memory in NumPy still do).

Whether a view op really aliases (``reshape`` of a non-contiguous array copies) is decided
by running view ops on the example inputs (free: views cost nothing) or, for
intermediates, on C-contiguous ``np.empty`` stand-ins, which is what NumPy's kernels
produce for fresh results.

    >>> import numpy as np
    >>> from kiln.ir import Graph
    >>> from kiln.ops import get_op, TensorMeta
    >>> g = Graph()
    >>> x = g.placeholder("x", TensorMeta((3,), np.float64))
    >>> t = g.call(get_op("add"), (x, 1.0))
    >>> _ = g.call(get_op("copyto"), (x, t, True))
    >>> _ = g.output((x,))
    >>> fg, plan = functionalize_with_plan(g)
    >>> plan.mutated, plan.outputs[0].kind
    ([(0, 0)], 'input')
"""
from __future__ import annotations

from dataclasses import dataclass, field
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from .. import array_kinds
from ..errors import KilnError
from ..ir import Graph, Node, map_nodes
from ..ir.graph import kept_meta, resolve_sizes
from ..ir.passes import dce
from ..ops import Category, get_op
from ..ops.mutation import write_through_view
from ..ops.registry import iter_leaves, map_leaves
from ..ops.result_layout import Strided, axis_order, empty_in_order, layout_of

@dataclass
class OutputSpec:
    """How the runtime rebuilds one user output.

    ``kind``: 'fresh' (graph output ``index``), 'input' (input ``index`` itself),
    'input_view' (``path`` replayed on input ``index``), 'base_view' (``path`` replayed on
    graph output ``index``, an intermediate base shared by several outputs), 'const'
    (``value`` as is).
    """
    kind: str
    index: int = -1
    path: tuple = ()  # ((op, rest_args, params), ...); rest_args may hold placeholder refs
    value: Any = None
    views: tuple = ()  # the view nodes ``path`` replays, one per step (outputs sharing one share its object)


@dataclass
class Plan:
    num_user_outputs: int
    outputs: list[OutputSpec] = field(default_factory=list)
    mutated: list[tuple[int, int]] = field(default_factory=list)  # (input index, graph output)
    num_graph_outputs: int = 0
    # Inputs whose memory layout decided whether a view op aliases them (reshape of a
    # transposed array copies): the plan holds for inputs laid out the same way only.
    layout_inputs: tuple[int, ...] = ()
    # A write through a view put back by the view's derivative rule (reshape, flip, ...),
    # which writes the base's shape as numbers: a graph with dynamic dims is then
    # functionalized per shape (kiln/aot/runtime.py pins such variants).
    sized_put_back: bool = False

    @property
    def trivial(self) -> bool:
        return not self.mutated and all(o.kind in ("fresh", "const") for o in self.outputs)


def _fresh_vector(node: Node) -> bool:
    """A 1-D result of an op that always makes a new array (``Op.fresh_result``: the packed
    results of np.linalg.lstsq, ...): contiguous whatever its inputs' layouts, so a view of
    it keys no variant by them (a compiled 9x3 lstsq checked both inputs' layouts on every
    call, behind a Python layer of ~9 us)."""
    val = node.val if node.kind == "call" else None
    return getattr(node.target, "fresh_result", False) and len(getattr(val, "shape", (0, 0))) == 1


def layout_class(value: Any) -> Any:
    """What a view-or-copy decision can depend on: contiguity, else the exact strides."""
    arr = getattr(value, "_data", value)
    if not isinstance(arr, array_kinds.ARRAY_TYPES):   # (a CuPy array has the same flags)
        return None
    flags = arr.flags
    if flags.c_contiguous or flags.f_contiguous:
        return (flags.c_contiguous, flags.f_contiguous)
    return arr.strides


class InputRef:
    """A placeholder referenced by a replayed view's arguments (a traced slice bound)."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"InputRef({self.index})"


def has_mutation(graph: Graph) -> bool:
    return any(n.kind == "call" and (n.target.mutates or n.target.category == Category.MUTATION)
               for n in graph.nodes)


def functionalize(graph: Graph, example_inputs: Sequence[Any] | None = None) -> Graph:
    """The functional version of ``graph``; see :func:`functionalize_with_plan` for the plan.

    Its outputs are ``(*user outputs, *final values of mutated inputs, *shared bases)``.
    """
    return functionalize_with_plan(graph, example_inputs)[0]


def functionalize_with_plan(graph: Graph, example_inputs: Sequence[Any] | None = None
                            ) -> tuple[Graph, Plan]:
    return _Functionalizer(graph, example_inputs).run()


class _Functionalizer:
    def __init__(self, graph: Graph, example_inputs: Sequence[Any] | None) -> None:
        self.src = graph
        self.examples = list(example_inputs) if example_inputs is not None else None
        self.out = Graph(graph.name)
        self.sized_put_back = False
        self.env: dict[Node, Any] = {}          # source node -> new node (value at creation)
        self.base: dict[Node, Node] = {}        # source array node -> its base (source node)
        self.path: dict[Node, tuple] = {}       # source array node -> view nodes from the base
        self.born: dict[Node, int] = {}         # version of the base when the node was made
        self.version: dict[Node, int] = {}      # base -> number of writes so far
        self.current: dict[Node, Any] = {}      # base -> new node holding its latest value
        self.regen: dict[Node, tuple[int, Any]] = {}
        self.sample: dict[Node, Any] = {}       # source node -> stand-in array (alias analysis)
        self.readonly: set[Node] = set()
        self.layout_inputs: set[int] = set()    # inputs whose layout decided a view-or-copy

    # -- alias analysis on stand-ins ---------------------------------------------------------
    def _stand_in(self, node: Node) -> Any:
        if node in self.sample:
            return self.sample[node]
        val = node.val
        arr = None
        if node.kind == "placeholder" and self.examples is not None:
            ex = self.examples[self.src.placeholders.index(node)]
            ex = getattr(ex, "_data", ex)  # a kiln.Tensor
            if isinstance(ex, np.ndarray):
                arr = ex
        if arr is None and node.kind == "constant" and isinstance(node.target, np.ndarray):
            arr = node.target
        if arr is None and val is not None and hasattr(val, "shape"):
            arr = self._laid_out_like_numpy(node)
            if arr is None:
                arr = np.empty(val.shape, val.dtype)
        self.sample[node] = arr
        return arr

    def _laid_out_like_numpy(self, node: Node) -> Any:
        """An empty stand-in for a call's result in the memory order NumPy gives it
        (order='K', kiln/ops/result_layout.py: a Fortran-ordered operand makes a
        Fortran-ordered ``vstack``, whose ``.T`` then ravels as a view; fuzzer seed 9011),
        the rule lowering follows for the arrays it returns; None for C order, or where it
        cannot tell."""
        if node.kind != "call" or node.target.state is not None or "size_refs" in node.meta \
                or node.target.category in (Category.VIEW, Category.MUTATION) \
                or node.target.category == Category.CREATION and not node.inputs:
            return None   # (np.full_like(x) is laid out like x: Fortran-ordered from a broadcast x)
        try:   # (operands first: their own layouts follow theirs)
            samples = {n: self._stand_in(n) for n in node.inputs}
        except RecursionError:   # a very deep chain of computed values: C order
            return None

        def operand(n: Node) -> Any:
            a = samples[n]
            if isinstance(a, np.ndarray):
                return Strided(a.shape, tuple(s // a.itemsize for s in a.strides), a.dtype)
            if n.kind == "placeholder" and self.examples is not None:
                ex = self.examples[self.src.placeholders.index(n)]
                if not isinstance(getattr(ex, "_data", ex), np.ndarray):
                    return ex
            if isinstance(n.val, (bool, int, float, complex)):
                return n.val
            if isinstance(getattr(n.val, "dtype", None), np.dtype):
                return np.zeros((), n.val.dtype)[()]   # a number of its type: any value
            raise LookupError(n.name)
        try:
            operands = map_nodes(node.args, operand)
        except LookupError:
            return None
        shape = tuple(node.val.shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            strides = layout_of(node.target.impl, operands, dict(node.kwargs), shape)
        if strides is None:
            return None
        # The answer holds for these inputs' layouts: the runtime keys variants by them.
        self._keyed_by_input_layouts(node)
        return empty_in_order(shape, axis_order(shape, strides), node.val.dtype)

    def _keyed_by_input_layouts(self, node: Node) -> None:
        if self.examples is None:
            return
        seen, todo = set(), [node]
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            if n.kind == "placeholder":
                self.layout_inputs.add(self.src.placeholders.index(n))
            elif not _fresh_vector(n):   # (its layout is C order whatever its inputs')
                todo.extend(n.inputs)

    def _concrete_arg(self, value: Any) -> Any:
        """A view op's non-array argument with placeholder scalars filled from the examples."""
        def fill(n: Node) -> Any:
            if n.kind == "placeholder" and self.examples is not None:
                ex = self.examples[self.src.placeholders.index(n)]
                return getattr(ex, "_data", ex)
            if n.kind == "constant":
                return n.target
            raise LookupError(n.name)
        return map_nodes(value, fill)

    def _is_alias(self, node: Node) -> bool:
        """Does this view node share memory with its input (in NumPy, for these layouts)?"""
        src = node.args[0]
        if not isinstance(src, Node):
            return False
        if node.target.layout_dependent:
            # The answer holds for this input's memory layout only, and a computed input's
            # layout is NumPy's for the arguments it is made from (``x.astype(t).ravel()`` is
            # a view for a C-ordered x, a copy for a Fortran-ordered one): the runtime keys
            # compiled variants by those arguments' layouts (Plan.layout_inputs).
            self._keyed_by_input_layouts(src)
        base_arr = self._stand_in(src)
        if base_arr is None:
            return True
        try:
            rest = self._concrete_arg(node.args[1:])
            # Stand-ins hold whatever np.empty returned: casting them may "overflow".
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                params = node.kwargs if "size_refs" not in node.meta else \
                    resolve_sizes(node.kwargs, lambda r: r.example)   # stand-ins have the example's sizes
                result = node.target.impl(base_arr, *rest, **params)
                # (inside: reading the flag of np.broadcast_arrays's view warns)
                readonly = isinstance(result, np.ndarray) and not result.flags.writeable
        except LookupError:
            return True  # an argument computed in the graph: trust the category
        if not isinstance(result, np.ndarray):
            return False
        self.sample[node] = result
        if readonly:
            self.readonly.add(node)
        # An empty result shares no memory to test: a view unless it has another dtype
        # (np.asarray(x, dtype=...) of an empty x is a new array; fuzzer seed 9307)
        return result.size == 0 and result.dtype == base_arr.dtype or \
            np.may_share_memory(result, base_arr)

    # -- reading values ----------------------------------------------------------------------
    def read(self, node: Node) -> Any:
        if node not in self.base:
            return self.env[node]
        base = self.base[node]
        if self.born[node] == self.version[base]:
            return self.env[node]
        cached = self.regen.get(node)
        if cached is not None and cached[0] == self.version[base]:
            return cached[1]
        value = self.current[base]
        for view in self.path[node]:
            value = self._emit(view.target, (value,) + self._map(view.args[1:]), view.kwargs, view)
        self.regen[node] = (self.version[base], value)
        return value

    def _map(self, args: Any) -> Any:
        return map_nodes(args, self.read)

    def _emit(self, op: Any, args: tuple, kwargs: dict, like: Node | None = None) -> Node:
        return self.out.call(op, args, kwargs, **(kept_meta(like) if like is not None else {}),
                             name=like.name if like is not None else None)

    def _new_base(self, node: Node, value: Any) -> None:
        self.env[node] = value
        self.base[node] = node
        self.path[node] = ()
        self.born[node] = 0
        self.version[node] = 0
        self.current[node] = value

    # -- the walk ------------------------------------------------------------------------------
    def run(self) -> tuple[Graph, Plan]:
        for node in self.src.nodes:
            if node.kind == "placeholder":
                new = self.out.placeholder(node.target, node.val, **{k: v for k, v in node.meta.items()
                                                                     if k != "val"})
                if _is_array(node):
                    self._new_base(node, new)
                else:
                    self.env[node] = new
            elif node.kind == "constant":
                new = self.out.constant(node.target, node.name)
                if _is_array(node):
                    self._new_base(node, new)
                else:
                    self.env[node] = new
            elif node.kind == "call":
                self._call(node)
            else:
                return self._finish(node)
        raise ValueError(f"graph '{self.src.name}' has no output node")

    def _call(self, node: Node) -> None:
        op = node.target
        if op.mutates or op.category == Category.MUTATION:
            self._mutation(node)
            return
        kwargs = op.functional_params(node.kwargs) if op.functional_params else node.kwargs
        new = self._emit(op, self._map(node.args), kwargs, node)
        self.env[node] = new
        if not _is_array(node):
            return
        src = node.args[0] if node.args else None
        if op.may_alias and isinstance(src, Node) and src in self.base \
                and self._is_alias(node):
            base = self.base[src]
            self.base[node] = base
            self.path[node] = self.path[src] + (node,)
            self.born[node] = self.version[base]
            if src in self.readonly:
                self.readonly.add(node)
        else:
            self._new_base(node, new)

    def _mutation(self, node: Node) -> None:
        op = node.target
        if tuple(op.mutates) not in ((0,), ()) or op.functional is None:
            raise KilnError(f"functionalization: op '{op.name}' mutates inputs {op.mutates}; kiln "
                            f"handles ops that write their first input and name a functional op")
        target = node.args[0]
        if not isinstance(target, Node) or target not in self.base:
            raise KilnError(f"functionalization: '{op.name}' writes to {target!r}, which is not an "
                            f"array of the graph")
        if target in self.readonly:
            raise ValueError("assignment destination is read-only")
        value = node.args[-1]
        if op.stores_own_view is not None and op.stores_own_view(*node.args) \
                and self.path.get(value) == self.path[target] + (value,):
            self.env[node] = None   # the view's own memory written onto itself: nothing changes
            return
        if self.base[target].kind == "constant":
            raise KilnError(f"functionalization: '{op.name}' writes into a constant array baked into "
                            f"graph '{self.src.name}'; the write would not persist between calls. "
                            f"Capture must pass an array the function mutates as a graph input")
        functional = get_op(op.functional)
        new_value = self.out.call(functional, self._map(node.args), node.kwargs,
                                  **kept_meta(node))
        base = self.base[target]
        chain = self.path[target]
        # Values of the base along the path, from the current base down to the target's parent.
        parents = [self.current[base]]
        for view in chain[:-1]:
            parents.append(self._emit(view.target, (parents[-1],) + self._map(view.args[1:]),
                                      view.kwargs, view))
        for view, parent in zip(reversed(chain), reversed(parents)):
            new_value = self._put_back(view, parent, new_value)
        if chain and base.kind != "placeholder":
            # NumPy wrote into the base's own memory, so the base keeps its layout; the
            # put-back's expression has its own (through np.flip: negative strides; seed
            # 22002). A caller's array gets its new values copied in anyway.
            new_value = self.out.call(get_op("relayout"), (new_value, parents[0]), {"rule": "K"},
                                      **kept_meta(node))
        self.version[base] += 1
        self.current[base] = new_value
        self.env[node] = None

    def _put_back(self, view: Node, parent: Node, new: Node) -> Node:
        """The parent's value after writing ``new`` into ``view`` of it."""
        op = view.target
        if op.put_back is None:
            self.sized_put_back = True
        rest = _proxies(self._map(view.args[1:]))
        return _node(write_through_view(op, _proxy(parent), _proxy(new), rest, view.kwargs,
                                        parent.val.size == new.val.size))

    def _finish(self, out_node: Node) -> tuple[Graph, Plan]:
        values = out_node.args[0]
        plan = Plan(num_user_outputs=len(values), layout_inputs=tuple(sorted(self.layout_inputs)),
                    sized_put_back=self.sized_put_back)
        placeholders = self.src.placeholders
        graph_outputs: list[Any] = []
        groups: dict[Node, list[int]] = {}
        for i, v in enumerate(values):
            if isinstance(v, Node) and v in self.base and self.base[v].kind != "placeholder":
                groups.setdefault(self.base[v], []).append(i)
        specs: list[OutputSpec | None] = [None] * len(values)
        for i, v in enumerate(values):
            if not isinstance(v, Node):
                specs[i] = OutputSpec("const", value=v)
                continue
            if v not in self.base:
                specs[i] = OutputSpec("fresh", len(graph_outputs))
                graph_outputs.append(self.env[v])
                continue
            base = self.base[v]
            if base.kind == "placeholder":
                index = placeholders.index(base)
                path = self._replayable(self.path[v])
                if path is None:
                    specs[i] = OutputSpec("fresh", len(graph_outputs))
                    graph_outputs.append(self.read(v))
                elif not path:
                    specs[i] = OutputSpec("input", index)
                else:
                    specs[i] = OutputSpec("input_view", index, path, views=self.path[v])
            elif len(groups.get(base, ())) > 1 or self._keeps_base(v):
                # filled below, once the base has an output slot: outputs sharing a base,
                # and a view whose copy would not be what NumPy returns (see _keeps_base)
                specs[i] = None
            else:
                specs[i] = OutputSpec("fresh", len(graph_outputs))
                graph_outputs.append(self.read(v))
        for index, p in enumerate(placeholders):
            if p in self.version and self.version[p] > 0:
                plan.mutated.append((index, len(graph_outputs)))
                graph_outputs.append(self.current[p])
        for base, members in groups.items():
            if len(members) < 2 and not self._keeps_base(values[members[0]]):
                continue
            slot = len(graph_outputs)
            graph_outputs.append(self.current[base])
            for i in members:
                path = self._replayable(self.path[values[i]])
                if path is None:  # cannot replay: give up aliasing for this one
                    specs[i] = OutputSpec("fresh", len(graph_outputs))
                    graph_outputs.append(self.read(values[i]))
                else:
                    specs[i] = OutputSpec("base_view", slot, path, views=self.path[values[i]])
        plan.layout_inputs = tuple(sorted(self.layout_inputs))   # _keeps_base adds some
        plan.outputs = specs  # type: ignore[assignment]
        plan.num_graph_outputs = len(graph_outputs)
        self.out.output(tuple(graph_outputs))
        dce(self.out)
        return self.out, plan

    def _keeps_base(self, v: Node) -> bool:
        """A view of an intermediate returned alone leaves the graph as that view of its
        base, as in NumPy, when a compact copy would differ from it: a view NumPy makes
        read-only (np.broadcast_to), or one that is not C-contiguous (a column slice, a
        step: ``.strides`` and ``.flags`` would differ). A C-contiguous view (a row
        slice) is computed alone: same layout, less work."""
        if v in self.readonly:
            return True
        if self.base[v] is v:   # not a view
            return False
        sample = self.sample.get(v)
        if not isinstance(sample, np.ndarray) or sample.size <= 1:
            return False
        if not sample.flags.c_contiguous:
            return True
        base = self.base[v]
        stack, seen = [base], {base}
        while stack:   # the inputs whose layout decides it key the compiled variants
            n = stack.pop()
            if n.kind == "placeholder":
                self.layout_inputs.add(self.src.placeholders.index(n))
            for i in () if _fresh_vector(n) else n.inputs:
                if i not in seen:
                    seen.add(i)
                    stack.append(i)
        return not self._c_ordered(base)

    def _c_ordered(self, node: Node) -> bool:
        """Whether NumPy's array for ``node`` is surely C-ordered, so a C-contiguous view
        of it is C-contiguous in NumPy too. Stand-ins of intermediates are C-ordered
        whatever NumPy makes, so: inputs by their examples, views by their stand-ins,
        other ops when every array they read is (a Fortran-ordered or transposed operand
        makes a result NumPy lays out in its order, lowering/layout.py)."""
        if not hasattr(self, "_c_memo"):
            memo: dict[Node, bool] = {}
            for n in self.src.nodes:
                sample = self.sample.get(n)
                own = not isinstance(sample, np.ndarray) or sample.size <= 1 \
                    or sample.flags.c_contiguous
                if n.kind == "placeholder":
                    memo[n] = own if n in self.sample else self.examples is None or \
                        _c_example(self.examples[self.src.placeholders.index(n)])
                else:
                    memo[n] = own and all(memo.get(i, True) for i in n.inputs)
            self._c_memo = memo
        return self._c_memo.get(node, True)

    def _replayable(self, chain: tuple) -> tuple | None:
        """The view path as (op, rest_args, params) with placeholder args as InputRefs."""
        placeholders = self.src.placeholders
        steps = []
        for view in chain:
            if "size_refs" in view.meta:
                return None   # its params name input sizes (ir SizeRef): not replayed
            ok = True

            def ref(n: Node) -> Any:
                nonlocal ok
                if n.kind == "placeholder":
                    return InputRef(placeholders.index(n))
                if n.kind == "constant":
                    return n.target
                ok = False
                return None
            rest = map_nodes(view.args[1:], ref)
            if not ok:
                return None
            steps.append((view.target, rest, dict(view.kwargs)))
        return tuple(steps)


def compiled_path(path: tuple) -> Callable[[Any, Sequence[Any]], Any]:
    """``replay`` of ``path`` on plain arrays, its steps decided once: ``run(value, inputs)``
    calls each view's NumPy kernel, filling input refs only in steps that have them."""
    steps = tuple((op.impl, rest, params, any(isinstance(v, InputRef) for v in iter_leaves(rest)))
                  for op, rest, params in path)

    def run(value: Any, inputs: Sequence[Any]) -> Any:
        for impl, rest, params, refs in steps:
            value = impl(value, *(_fill_refs(rest, inputs) if refs else rest), **params)
        return value
    return run


def replay(path: tuple, value: Any, inputs: Sequence[Any], apply_op: Any = None) -> Any:
    """Apply a replayable view path to ``value`` (an array, or a Tensor via ``apply_op``)."""
    for op, rest, params in path:
        args = _fill_refs(rest, inputs)
        value = apply_op(op, (value,) + args, params) if apply_op else op.impl(value, *args, **params)
    return value


def _fill_refs(value: Any, inputs: Sequence[Any]) -> Any:
    return map_leaves(value, lambda v: inputs[v.index] if isinstance(v, InputRef) else v)


def _c_example(value: Any) -> bool:
    value = getattr(value, "_data", value)   # a kiln.Tensor
    return not isinstance(value, np.ndarray) or value.size <= 1 or value.flags.c_contiguous


def _is_array(node: Node) -> bool:
    val = node.val
    return val is not None and hasattr(val, "shape") and hasattr(val, "dtype")


# Derivative rules are written with ops; Proxies record them into the graph being built.
def _proxy(node: Node) -> Any:
    from ..ir import Proxy
    return Proxy(node)


def _proxies(args: tuple) -> tuple:
    from ..ir import Proxy
    return map_nodes(args, Proxy)


def _node(value: Any) -> Node:
    return value.node
