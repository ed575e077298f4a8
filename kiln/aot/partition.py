"""Split a joint graph into a forward and a backward graph: the min-cut partitioner.

What crosses from the forward to the backward (the *saved* values) is chosen to minimize
bytes kept alive between them, recomputing cheap work in the backward instead — the
formulation of torch's ``min_cut_rematerialization_partition``:

- every forward value ``X`` is an edge ``X_in -> X_out`` whose capacity is the bytes it
  would cost to save it (views: infinite — save their base, replay the view for free);
- data dependencies are infinite edges ``X_out -> Y_in``;
- ``source -> X_in`` is infinite for the inputs (they exist before the forward) and for
  ops that must not be recomputed (extern ops such as matmul, data-dependent ops, scans):
  they run in the forward only. Reductions may be recomputed: recomputing one needs its
  big input in the backward, which the cut prices, so a small reduction output is saved
  unless its input is kept anyway;
- ``X_out -> sink`` is infinite for every forward value the backward reads directly.

A minimum cut separates what the forward computes from what the backward needs; the cut
edges ``X_in -> X_out`` are the values to save, and every forward value on the sink side
that the backward needs is recomputed there. Capacities carry a tiny tie-breaker that
prefers saving values close to the backward (less recomputation for the same bytes).

    >>> import numpy as np
    >>> from kiln.ir import trace
    >>> from kiln.ops import F, TensorMeta
    >>> from kiln.aot.joint import build_joint
    >>> fw = trace(lambda x: F.sum(F.sin(F.exp(x))), [TensorMeta((100,), np.float64)], ["x"])
    >>> parts = min_cut_partition(build_joint(fw, [True]))
    >>> [n.name for n in parts.saved], parts.saved_bytes
    (['exp'], 800)
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..ir import Graph, Node, map_nodes
from ..ir.graph import SliceLength, kept_meta, size_ref_names
from ..ir.passes import dce, must_stay
from ..ops import Category, TensorMeta
from .joint import Joint
from .symbolic import PinnedSizes

INF = math.inf


@dataclass
class Partition:
    forward: Graph        # primals -> (*forward outputs, *saved)
    backward: Graph       # (*saved, *tangents) -> (*gradients)
    saved: list[Node]     # joint-graph nodes saved, in forward-output order
    saved_bytes: int
    save_all_bytes: int   # what saving every forward value the backward reads would cost
    recomputed: list[str] = field(default_factory=list)
    # primals the backward takes after (*saved, *tangents, *sizes) for their shapes only
    # (a joint graph over dynamic sizes, kiln/aot/symbolic.py)
    shape_inputs: list[int] = field(default_factory=list)

    def report(self) -> str:
        names = ", ".join(f"{n.name}{_describe(n)}" for n in self.saved) or "nothing"
        ratio = (f" ({self.saved_bytes / self.save_all_bytes:.0%} of saving every intermediate: "
                 f"{self.save_all_bytes} bytes)" if self.save_all_bytes else "")
        rec = ", ".join(self.recomputed) or "nothing"
        return (f"saved for backward: {names}\nsaved bytes: {self.saved_bytes}{ratio}\n"
                f"recomputed in backward: {rec}")


def _describe(node: Node) -> str:
    val = node.val
    if isinstance(val, TensorMeta):
        return f" {val.dtype.name}[{', '.join(map(str, val.shape))}]"
    return ""


def nbytes(node: Node) -> int:
    val = node.val
    if isinstance(val, TensorMeta):
        return val.size * val.dtype.itemsize
    return 0


def is_view(node: Node) -> bool:
    return node.kind == "call" and node.target.may_alias


def ban_recompute(node: Node) -> bool:
    """Ops that run in the forward only: compute-intensive (extern) or data-dependent ones."""
    if node.kind != "call":
        return False
    op = node.target
    if op.category in (Category.EXTERN, Category.SCAN, Category.MUTATION) or op.data_dependent:
        return True
    return False


def min_cut_partition(joint: Joint) -> Partition:
    g = joint.graph
    nodes = g.nodes
    out_node = g.output_node
    outputs = out_node.args[0]
    fw_outs = outputs[:joint.num_fw_outputs]
    grad_outs = outputs[joint.num_fw_outputs:]
    placeholders = g.placeholders
    primals = placeholders[:joint.num_primals]
    tangents = placeholders[joint.num_primals:joint.num_primals + len(joint.tangent_outputs)]
    sizes = [node for node, _ in joint.size_inputs]   # backward inputs from the runtime

    # Backward nodes: everything that depends on a tangent.
    bw: set[Node] = set(tangents) | set(sizes)
    for node in nodes:
        if node.kind == "call" and any(i in bw for i in node.inputs):
            bw.add(node)
    # Forward values the backward reads directly (or returns as a gradient).
    boundary: dict[Node, None] = {}
    for node in nodes:
        if node in bw and node.kind == "call":
            for i in node.inputs:
                if i not in bw:
                    boundary[i] = None
    for v in grad_outs:
        if isinstance(v, Node) and v not in bw:
            boundary[v] = None
    save_all = [n for n in boundary if n.kind != "constant"]

    # Only forward values some boundary value depends on take part in the cut.
    relevant: set[Node] = set()
    stack = list(boundary)
    while stack:
        n = stack.pop()
        if n in relevant:
            continue
        relevant.add(n)
        stack.extend(n.inputs)

    dist = _dist_from_boundary(boundary, relevant)
    flow = _FlowGraph()
    for n in relevant:
        if n.kind == "constant":
            cap = INF  # constants are baked into whichever graph uses them
        elif is_view(n) or n.kind == "call" and not _saveable(joint, n):
            cap = INF
        else:
            cap = nbytes(n) * (1.0 + 1e-4 * min(dist.get(n, 0), 100)) + 1e-3
        flow.add(("in", n), ("out", n), cap)
        if n.kind == "placeholder" or ban_recompute(n):
            flow.add("source", ("in", n), INF)
        for i in n.inputs:
            flow.add(("out", i), ("in", n), INF)
        if n in boundary:
            flow.add(("out", n), "sink", INF)
    try:
        reachable = flow.min_cut_source_side("source", "sink")
    except AssertionError as e:
        if joint.sizes is None:
            raise
        # a value of a slice's length that only the forward can compute (a matmul's)
        raise PinnedSizes(str(e)) from e
    saved = [n for n in nodes if n in relevant and ("in", n) in reachable
             and ("out", n) not in reachable]

    # Backward computes: recomputed forward values (sink side, needed) + backward nodes.
    saved_set = set(saved)
    need_bw: set[Node] = set()
    stack = [v for v in grad_outs if isinstance(v, Node)]
    while stack:
        n = stack.pop()
        if n in need_bw or n in saved_set:
            continue
        need_bw.add(n)
        stack.extend(n.inputs)
    recomputed = [n.name for n in nodes if n in need_bw and n not in bw and n.kind == "call"]

    # Forward computes what its outputs and the saved values need, and every check of
    # the forward's values that must run though nothing reads it (may raise or warn:
    # np.nanmean's "Mean of empty slice", an index NumPy would refuse).
    need_fw: set[Node] = set()
    stack = [v for v in fw_outs if isinstance(v, Node)] + list(saved) + \
        [n for n in nodes if n.kind == "call" and n not in bw and must_stay(n)]
    while stack:
        n = stack.pop()
        if n in need_fw:
            continue
        need_fw.add(n)
        stack.extend(n.inputs)

    forward = Graph("forward")
    env: dict[Node, Any] = {}
    for p in primals:
        env[p] = forward.placeholder(p.target, p.val, **_meta(p))
    for n in nodes:
        if n in need_fw and n.kind != "placeholder":
            env[n] = _copy(forward, n, env)
    forward.output(tuple(map_nodes(tuple(fw_outs), env.__getitem__)) +
                   tuple(env[n] for n in saved))

    backward = Graph("backward")
    benv: dict[Node, Any] = {}
    for n in saved:
        benv[n] = backward.placeholder(n.name, n.val)
    for t in tangents:
        benv[t] = backward.placeholder(t.target, t.val)
    for s in sizes:
        benv[s] = backward.placeholder(s.target, s.val)
    for n in nodes:
        if n in need_bw and n not in benv and n.kind in ("call", "constant"):
            benv[n] = _copy(backward, n, benv)
        elif n in need_bw and n.kind == "placeholder" and n not in benv:
            raise AssertionError(f"partition: backward needs input {n.name} but it was not saved")
    backward.output(tuple(map_nodes(tuple(grad_outs), benv.__getitem__)))
    dce(forward)
    dce(backward)
    carriers = _dynamic_backward_inputs(joint, backward, benv, primals) if joint.sizes else []
    return Partition(forward, backward, saved, sum(nbytes(n) for n in saved),
                     sum(nbytes(n) for n in save_all), recomputed, carriers)


def _saveable(joint: Joint, node: Node) -> bool:
    """Can the forward hand ``node`` to the backward? Over dynamic sizes
    (kiln/aot/symbolic.py), not when a dim of it is a slice's length (``x[1:] - x[:-1]``
    of a changing length, a ``SliceLength``): a backward input's dim becomes a size
    symbol of its own, which lowering cannot relate to the slice counts the backward's
    params name over the primals' dims. The backward recomputes such a value from
    saveable ones instead (the slice is a view: its base is saved)."""
    if joint.sizes is None or not isinstance(node.val, TensorMeta):
        return True
    try:
        shape = joint.sizes.shape(node)
    except Exception:   # a shape the sizes cannot follow: no input's either
        return False
    return not any(isinstance(s, SliceLength) for s in shape)


def _dynamic_backward_inputs(joint: Joint, backward: Graph, benv: dict, primals: list) -> list[int]:
    """Mark the backward's inputs' dynamic dims; add, after its other inputs, the primals
    whose sizes its params name (``shape=(x.shape[0], 3)``) but that it does not take
    already. Returns those primals' positions (the runtime passes them: only their shape
    is read)."""
    inputs = {p.name for p in backward.placeholders}
    for n, b in benv.items():
        if b.kind == "placeholder" and isinstance(n.val, TensorMeta):
            dims = joint.sizes.dynamic_dims(n)
            if dims:
                b.meta["dynamic_dims"] = dims
    # a slice length reads its root dim's primal and the int primals of its bounds
    named = size_ref_names(backward.calls)
    carriers = []
    for i, p in enumerate(primals):
        if p.name in named and p.name not in inputs:
            backward.placeholder(p.name, p.val, **_meta(p))
            carriers.append(i)
    return carriers


def _meta(node: Node) -> dict:
    return {k: v for k, v in node.meta.items() if k != "val"}


def _copy(graph: Graph, node: Node, env: dict[Node, Any]) -> Node:
    if node.kind == "constant":
        return graph.constant(node.target, node.name)
    return graph.call(node.target, map_nodes(node.args, env.__getitem__), node.kwargs,
                      name=node.name, val=node.val, **kept_meta(node))


def _dist_from_boundary(boundary: dict[Node, None], relevant: set[Node]) -> dict[Node, int]:
    dist = {n: 0 for n in boundary}
    queue = deque(boundary)
    while queue:
        n = queue.popleft()
        for i in n.inputs:
            if i in relevant and i not in dist:
                dist[i] = dist[n] + 1
                queue.append(i)
    return dist


class _FlowGraph:
    """A small max-flow (Edmonds–Karp on float capacities) for the partitioner's cut."""

    def __init__(self) -> None:
        self.cap: dict[Any, dict[Any, float]] = {}

    def add(self, u: Any, v: Any, c: float) -> None:
        self.cap.setdefault(u, {})
        self.cap.setdefault(v, {})
        self.cap[u][v] = self.cap[u].get(v, 0.0) + c
        self.cap[v].setdefault(u, 0.0)

    def min_cut_source_side(self, s: Any, t: Any) -> set:
        if s not in self.cap or t not in self.cap:
            return {s}
        while True:
            parent = {s: None}
            queue = deque([s])
            while queue and t not in parent:
                u = queue.popleft()
                for v, c in self.cap[u].items():
                    if c > 1e-12 and v not in parent:
                        parent[v] = u
                        queue.append(v)
            if t not in parent:
                return set(parent)
            # Bottleneck along the path, then push.
            push = INF
            v = t
            while parent[v] is not None:
                u = parent[v]
                push = min(push, self.cap[u][v])
                v = u
            if push == INF:
                raise AssertionError("partition: a backward value depends on nothing that can "
                                     "be saved (an infinite cut)")
            v = t
            while parent[v] is not None:
                u = parent[v]
                self.cap[u][v] -= push
                self.cap[v][u] += push
                v = u
