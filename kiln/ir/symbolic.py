"""Shapes with dynamic sizes for a backward written into a graph (derivative rules).

Derivative rules read shapes (``broadcast_to(g, shape=shape_of(x))``, a mean's ``1/N``).
While a backward is written for a graph whose inputs have dynamic dims,
``Proxy.shape`` (kiln/ir/tracer.py ``SHAPES``) asks a :class:`SymbolicShapes`: each dim
that follows a dynamic input dim is that input's ``SizeRef`` (``x.shape[0]``,
kiln/ir/graph.py), so what the rule records holds for every size. Which dims follow one
is found the way capture finds them for shape rules (kiln/capture/dims.py): every
node's shape rule runs again with each dynamic size moved (:meth:`_shadow`), and a dim
follows a dynamic size when it moves with it. A rule that needs a number (arithmetic
on a SizeRef, a shape that moves another way) raises ``TypeError``; the one writing the
backward then takes back what it wrote and builds it for the example's sizes instead.

Dynamic dims of one example size share a SizeRef (duck sizing: ``x`` and ``y`` of one
batch meet in broadcasting); whoever runs the graph must check they are still equal.
Two users: ``kiln.value_and_grad`` inside a compiled function
(kiln/capture/variables/grad.py) and the joint graph of the kiln.Tensor path
(kiln/aot/symbolic.py). Each says how a size that is an *operand* of an op (a
:class:`SizeProduct`, the count a mean's derivative divides by) becomes a graph value
(:meth:`value`).

    >>> import numpy as np
    >>> from kiln.ir import trace
    >>> from kiln.ops import F, TensorMeta
    >>> g = trace(lambda x: F.sin(x), [TensorMeta((8, 3), np.float64)], ["x"])
    >>> x = g.placeholders[0]
    >>> SymbolicShapes(g, {x: {0}}).shape(g.calls[0])
    (x.shape[0], 3)
"""
from __future__ import annotations

from typing import Any

from ..ops import TensorMeta, infer_meta
from .graph import Node, SizeRef, map_nodes, resolve_sizes


class SymbolicShapes:
    """Shapes of a graph's nodes with SizeRefs for the dims that follow dynamic sizes.

    ``dynamic``: placeholder -> its dynamic dims; ``sized``: scalar placeholder that holds
    a dynamic size (capture passes an int computed from a dim as an input) -> that size.
    """

    def __init__(self, graph: Any, dynamic: dict, sized: dict | None = None,
                 refs: dict | None = None) -> None:
        self.graph = graph
        self.dynamic = dynamic
        self.sized = sized or {}
        self.named = {p.name: p for p in graph.placeholders}
        if refs is None:   # example size -> its SizeRef: the first dynamic dim of that size
            refs = {}
            for p, dims in dynamic.items():
                for d in sorted(dims):
                    refs.setdefault(p.val.shape[d], SizeRef(p.name, d, p.val.shape[d]))
        self.refs: dict[int, SizeRef] = refs
        self.metas: dict = {}

    @staticmethod
    def moved(n: int) -> int:
        return 2 * n + 3

    def shape(self, node: Node) -> tuple:
        """``node``'s shape with SizeRefs for dims that follow a dynamic size."""
        base, moved = node.val.shape, self._shadow(node).shape
        out = []
        for b, m in zip(base, moved):
            if b == m:
                out.append(b)
            elif m == self.moved(b) and b in self.refs:
                out.append(self.refs[b])
            else:
                raise TypeError(f"a size of {node.name} is no input's size")
        return tuple(out)

    def value(self, size: Any) -> Node:
        """A graph value holding ``size`` (a SizeRef or SizeProduct) on each run."""
        raise TypeError(f"the size {size!r} is needed as a number here")

    def check(self, new_nodes: Any, grads: list, wrt: list) -> None:
        """Raise TypeError unless every new node's shape follows the sizes and each
        gradient has its input's shape."""
        for node in new_nodes:
            if node.kind == "call":
                self.shape(node)
        if any(g is not None and self.shape(g.node) != self.shape(w) for g, w in zip(grads, wrt)):
            raise TypeError("a gradient's shape does not follow its input's")

    def _shadow(self, node: Node) -> Any:
        """``node``'s meta with every dynamic size moved (computed in dependency order)."""
        stack = [node]
        while stack:
            n = stack[-1]
            if n in self.metas:
                stack.pop()
                continue
            missing = [i for i in n.inputs if i not in self.metas]
            if missing:
                stack.extend(missing)
                continue
            self.metas[n] = self._compute(n)
            stack.pop()
        return self.metas[node]

    def _compute(self, n: Node) -> Any:
        if n.kind == "placeholder":
            dims = self.dynamic.get(n, ())
            if isinstance(n.val, TensorMeta):
                return TensorMeta(tuple(self.moved(s) if i in dims else s for i, s in enumerate(n.val.shape)),
                                  n.val.dtype)
            return self.moved(n.val) if n in self.sized else n.val
        if n.kind == "constant":
            return n.val if n.val is not None else n.target
        params = resolve_sizes(n.kwargs, lambda r: self._shadow(self.named[r.array]).shape[r.dim])
        return infer_meta(n.op, map_nodes(n.args, self.metas.__getitem__), params)
