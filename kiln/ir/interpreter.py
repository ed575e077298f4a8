"""The reference interpreter: run each node's op with its NumPy kernel.

It is the ``eager`` backend and the oracle every later stage is tested against.
Subclass :class:`Interpreter` and override :meth:`call` to observe or change how each
node runs (the way torch.fx's Interpreter is used).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..array_kinds import device_of
from ..ops.registry import _find_hook
from .graph import Graph, Node, extern_impl, map_nodes, out_write, resolve_sizes, write_before_raise


class Interpreter:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def run(self, *args: Any) -> Any:
        placeholders = self.graph.placeholders
        if len(args) != len(placeholders):
            raise TypeError(f"graph '{self.graph.name}' takes {len(placeholders)} inputs "
                            f"({', '.join(p.name for p in placeholders)}), got {len(args)}")
        env: dict[Node, Any] = dict(zip(placeholders, args))
        device = device_of(args)   # arrays on a GPU: the graph's constant arrays go there
        remaining = {n: len(n.users) for n in self.graph.nodes}
        for node in self.graph.nodes:
            if node.kind == "placeholder":
                continue
            if node.kind == "output":
                return map_nodes(node.args[0], env.__getitem__)
            if node.kind == "constant":
                env[node] = node.target if device is None else _placed(self.graph, node, device)
            else:
                env[node] = self._call_writing_out(node, env, placeholders, args)
            # Free values after their last use, as compiled code does.
            for inp in node.inputs:
                remaining[inp] -= 1
                if remaining[inp] == 0 and inp.kind != "placeholder":
                    env.pop(inp, None)
        raise ValueError(f"graph '{self.graph.name}' has no output node")

    def _call(self, node: Node, env: dict, placeholders: list, inputs: tuple) -> Any:
        kwargs = node.kwargs
        if "size_refs" in node.meta:   # sizes of the inputs in its params (SizeRef)
            named = {p.name: v for p, v in zip(placeholders, inputs)}
            kwargs = resolve_sizes(kwargs, lambda r: named[r.array].shape[r.dim], named.__getitem__)
        # under the error mode the node was recorded in, as the printed NumPy program
        # (printer.py): a derivative rule's node ignores all, one in a captured ``with
        # np.errstate(...='ignore')`` those kinds (aot_eager, which runs its graphs here,
        # warned "invalid value encountered in divide" inside such a block)
        kinds = ("all",) if node.meta.get("quiet") else node.meta.get("errstate")
        if kinds:
            with np.errstate(**dict.fromkeys(kinds, "ignore")):
                return self.call(node, map_nodes(node.args, env.__getitem__), kwargs)
        return self.call(node, map_nodes(node.args, env.__getitem__), kwargs)

    def _call_writing_out(self, node: Node, env: dict, placeholders: list, inputs: tuple) -> Any:
        """The node's value; where it raises and NumPy's call wrote it into ``out=`` first
        (graph.py ``out_write``), that write too, then the error."""
        try:
            return self._call(node, env, placeholders, inputs)
        except Exception as e:
            write = out_write(node)
            if write is not None:
                def again() -> None:
                    env[node] = self._call(node, env, placeholders, inputs)
                    self._call(write, env, placeholders, inputs)
                write_before_raise(e, again)
            raise

    def call(self, node: Node, args: tuple, kwargs: dict) -> Any:
        # Values that define ``__kiln_op__`` (kiln.Tensors, Proxies) take the call through
        # Op.__call__, so a graph run with Tensors records on the tape like eager code.
        if _find_hook(args) is not None:
            return node.target(*args, **kwargs)
        return extern_impl(node)(*args, **kwargs)


def _placed(graph: Graph, node: Node, device: tuple) -> Any:
    """A constant array's copy on the GPU of a call's device arrays, made once per graph
    and device (CuPy refuses a NumPy operand; kiln never copies user data silently)."""
    value = node.target
    if not isinstance(value, np.ndarray):
        return value
    cache = graph.__dict__.setdefault("_placed_constants", {})
    key = (node, device[0].name, device[1])
    hit = cache.get(key)
    if hit is None or hit[0] is not value:
        hit = cache[key] = (value, device[0].to_device(value, device[1]))
    return hit[1]
