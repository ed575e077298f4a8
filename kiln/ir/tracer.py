"""Trace a Python function written with ops (``F.sin(x)``) into a Graph.

A :class:`Proxy` stands for a node while tracing: calling any op on it records a call
node (via the ``__kiln_op__`` hook the ops package looks for) and returns a new Proxy.
Derivative rules are written with ops, so tracing a rule gives its backward graph.

    >>> import numpy as np
    >>> from kiln.ir import trace
    >>> from kiln.ops import F, TensorMeta
    >>> g = trace(lambda x: F.multiply(F.sin(x), 2.0), [TensorMeta((4,), np.float32)], ["x"])
    >>> g.op_names()
    ['sin', 'multiply']
"""
from __future__ import annotations

import contextvars
import operator
from typing import Any, Callable, Sequence

import numpy as np

from ..ops import TensorMeta
from ..ops.registry import iter_leaves, map_leaves
from .graph import Graph, Node, SizeProduct, SizeRef


# While a backward is written with sizes that stay dynamic (capture/variables/grad.py):
# an object with ``shape(node)`` (the shape, its dynamic dims SizeRefs: kiln/ir/graph.py)
# and ``value(size)`` (a graph input holding a SizeRef or SizeProduct). Per thread.
SHAPES: contextvars.ContextVar = contextvars.ContextVar("kiln_symbolic_shapes", default=None)


class Proxy:
    __slots__ = ("node",)

    def __init__(self, node: Node) -> None:
        self.node = node

    @property
    def shape(self) -> tuple:
        shapes = SHAPES.get()
        return self.node.val.shape if shapes is None else shapes.shape(self.node)

    @property
    def dtype(self) -> np.dtype:
        return self.node.val.dtype

    @property
    def ndim(self) -> int:
        return len(self.node.val.shape)

    @property
    def size(self) -> int:
        if SHAPES.get() is not None:
            shape = self.shape   # a dynamic size refuses to be multiplied into a number
            return int(np.prod([operator.index(n) for n in shape]))
        return self.node.val.size

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __bool__(self) -> bool:
        raise TypeError(f"the truth value of traced value {self.node.name} depends on data; "
                        f"kiln cannot branch on it while tracing")

    @staticmethod
    def __kiln_op__(op: Any, inputs: tuple, params: dict) -> "Proxy":
        graph = _graph_of(inputs)

        def to_arg(value: Any) -> Any:
            if isinstance(value, Proxy):
                return value.node
            if isinstance(value, np.ndarray):
                return graph.constant(value)
            if isinstance(value, (SizeRef, SizeProduct)) and SHAPES.get() is not None:
                return SHAPES.get().value(value)   # a dynamic size as an operand: an input
            return value

        return Proxy(graph.call(op, map_leaves(inputs, to_arg), params))


def _graph_of(values: Any) -> Graph | None:
    return next((v.node.graph for v in iter_leaves(values) if isinstance(v, Proxy)), None)


def trace(fn: Callable, metas: Sequence[TensorMeta], names: Sequence[str] | None = None,
          name: str = "forward") -> Graph:
    """Record ``fn(*proxies)`` into a new Graph whose inputs have the given metas."""
    graph = Graph(name)
    names = list(names) if names is not None else [f"arg{i}" for i in range(len(metas))]
    proxies = [Proxy(graph.placeholder(n, m)) for n, m in zip(names, metas)]
    result = fn(*proxies)
    results = result if isinstance(result, tuple) else (result,)

    def to_out(value: Any) -> Any:
        if isinstance(value, Proxy):
            return value.node
        return value

    graph.output(tuple(to_out(r) for r in results))
    return graph
