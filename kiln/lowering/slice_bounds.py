"""Run-time int slice bounds (``x[:n]``, ``n`` an int argument): which calls slice with
one and which placeholders are those bounds. Apart from lower.py so that a cache hit
(runtime/artifacts.py keys on the bounds' values) need not import the lowering."""
from __future__ import annotations

from ..ir import Graph, Node, iter_nodes


def runtime_slice(node: Node) -> bool:
    """Does this call slice with a bound that is a graph value (``x[:n]``, ``n`` an int
    argument): sizes that are symbols of kind "int" (sizes.py)?"""
    k = node.op.runtime_slices
    if k is None or k >= len(node.args):
        return False
    index = node.args[k]
    return isinstance(index, tuple) and any(
        isinstance(item, slice) and any(isinstance(b, Node) for b in (item.start, item.stop, item.step))
        for item in index)


def slice_bound_positions(graph: Graph) -> set[int]:
    """Positions of the placeholders that are run-time slice bounds (``n`` of ``x[:n]``)."""
    used = {n for node in graph.nodes if node.kind == "call" and runtime_slice(node)
            for n in iter_nodes(node.args[node.op.runtime_slices])}
    return {i for i, p in enumerate(graph.placeholders) if p in used}
