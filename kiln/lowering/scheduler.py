"""Scheduler: fuse realized nodes into kernels, find kernel-local buffers.

A kernel has a :class:`Frame`: the shape it iterates and the axes it reduces (none for a
pointwise kernel). Outer dims are parallel; per outer point the kernel runs *stages*:
inner loops over the reduced dims (reductions accumulate, row nodes store) and scalar
statements (pointwise math on a reduction's result). So softmax — max, exp/sum, divide —
is one kernel with three inner loops per row, and layernorm is one kernel. A scan
(cumsum, cumprod) is a kernel of its own: one sequential inner loop per outer point that
stores every prefix (role 'scan'); its producers are already inside it as its source.

Nodes are taken in graph order and join the open kernel when (Inductor's vertical rule)
every element they read from the kernel's buffers is read at exactly the index where the
kernel wrote it, in the same loop frame; an extern call that does not read the open
kernel is moved before it. That order never creates a dependency cycle. Every refusal
between nodes that share a buffer is written to the ``fusion`` log with its reason.
"""
from __future__ import annotations

import math
from typing import Any

from .. import logs
from ..ir.graph import numpy_call_at
from ..ir.passes import may_warn_call
from .handler import RecordingHandler
from .loop_ir import Affine, BufferValue, linear
from .lower import ComputeNode, ExternNode, GraphLowering, Opaque, iter_values
from .pointwise import splits_widths

# A chain longer than this splits, and every value crossing the split goes through memory
# (an unrolled 50-step Mandelbrot loop keeps its 50 iterates in registers in one kernel).
MAX_NODES_PER_KERNEL = 128


class Frame:
    """The iteration space of a kernel: ``shape``, with ``axes`` reduced per outer point."""

    def __init__(self, shape: tuple, axes: tuple = ()) -> None:
        self.shape = tuple(shape)
        self.axes = tuple(axes)

    def var(self, d: int) -> str:
        return ("r" if d in self.axes else "x") + str(d)

    def dim_index(self) -> list[Affine]:
        return [Affine(0) if n == 1 else Affine.var(self.var(d)) for d, n in enumerate(self.shape)]

    @property
    def kept(self) -> list[int]:
        return [d for d in range(len(self.shape)) if d not in self.axes]

    def out_index(self, shape: tuple) -> list[Affine] | None:
        """Index of an array over the kept dims (any unit dims anywhere), or None."""
        kept = [d for d in self.kept if self.shape[d] != 1]
        if [n for n in shape if n != 1] != [self.shape[d] for d in kept]:
            return None
        it = iter(kept)
        return [Affine(0) if n == 1 else Affine.var(self.var(next(it))) for n in shape]

    def outer_vars(self) -> list[tuple[str, int]]:
        return [(self.var(d), self.shape[d]) for d in self.kept if self.shape[d] != 1]

    def inner_vars(self) -> list[tuple[str, int]]:
        return [(self.var(d), self.shape[d]) for d in self.axes if self.shape[d] != 1]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Frame) and (self.shape, self.axes) == (other.shape, other.axes)

    def __repr__(self) -> str:
        return f"Frame({self.shape}, reduce={self.axes})"


def role_in(node: ComputeNode, frame: Frame) -> str | None:
    """'row' (iterates the frame's whole shape), 'reduce', 'scan' (a sequential loop along
    the frame's one reduced axis, storing every prefix), 'scalar' (one per outer point)."""
    if node.kind in ("reduction", "scan"):
        same = frame.shape == node.in_shape and frame.axes == node.axes
        return None if not same else "reduce" if node.kind == "reduction" else "scan"
    if node.buf.shape == frame.shape:
        return "row"
    if frame.axes and frame.out_index(node.buf.shape) is not None:
        return "scalar"
    return None


def node_index(node: ComputeNode, role: str, frame: Frame) -> list[Affine]:
    """The index a node's code runs at (for 'reduce', the source's index)."""
    if role in ("row", "reduce", "scan"):
        return frame.dim_index()
    return frame.out_index(node.buf.shape)


def write_index(node: ComputeNode, role: str, frame: Frame) -> Affine:
    # (offset: 0, but for a window of the caller's array, lowering/window_writes.py)
    if role in ("row", "scan"):
        return linear(node.buf.offset, node.buf.strides, frame.dim_index())
    return linear(node.buf.offset, node.buf.strides, frame.out_index(node.buf.shape))


def node_loads(node: ComputeNode, role: str, frame: Frame) -> list:
    """(buffer, index) pairs the node's code loads when run in ``frame``."""
    return record(node, role, frame).loads


def call_widths(node: ComputeNode) -> frozenset:
    """How the node's calls run (Renderer.call_width: "scalar", "vector"), as its closure
    records them (lowering/pointwise.py)."""
    value = node.src if node.kind in ("reduction", "scan") else node.value
    return frozenset(getattr(value, "call_widths", ()))


def record(node: ComputeNode, role: str, frame: Frame) -> RecordingHandler:
    """What the node's code does when run in ``frame``, recorded by an ops handler."""
    rec = RecordingHandler()
    value = node.src if node.kind in ("reduction", "scan") else node.value
    value.load(rec, node_index(node, role, frame))
    return rec


class Kernel:
    def __init__(self, frame: Frame, first: ComputeNode) -> None:
        self.frame = frame
        self.members: list[tuple[ComputeNode, str]] = [(first, role_in(first, frame))]
        self.name = ""
        self.stages: list[tuple[str, list[tuple[ComputeNode, str]]]] = []
        self.widths = call_widths(first)

    @property
    def nodes(self) -> list[ComputeNode]:
        return [n for n, _ in self.members]

    def written(self) -> set[str]:
        return {n.buf.name for n in self.nodes}

    def try_add(self, node: ComputeNode) -> str | None:
        """Add ``node`` if it fuses; otherwise return why not."""
        frame = self.frame
        if len(self.members) >= MAX_NODES_PER_KERNEL:
            return f"the kernel already has {MAX_NODES_PER_KERNEL} nodes"
        if node.kind == "scan" or any(m.kind == "scan" for m in self.nodes):
            return "a scan (cumsum, cumprod) runs as a kernel of its own"
        widths = call_widths(node)
        if len(self.widths) == 1 and len(widths) == 1 and widths != self.widths and splits_widths(frame.shape):
            # (Renderer.call_width; lowering/pointwise.py realized the operand for it)
            return f"its calls run {set(widths).pop()}, the kernel's {set(self.widths).pop()}"
        if node.kind == "reduction" and not frame.axes:
            if node.in_shape != frame.shape:
                return (f"the reduction iterates {node.in_shape}, the pointwise kernel "
                        f"{frame.shape}")
            frame = Frame(node.in_shape, node.axes)
        role = role_in(node, frame)
        if role is None:
            what = f"reduces {node.in_shape} over {node.axes}" if node.kind == "reduction" \
                else f"has shape {node.buf.shape}"
            return f"it {what}; the kernel iterates {frame.shape} reducing {frame.axes}"
        roles = {m.buf.name: (m, role_in(m, frame)) for m, _ in self.members}
        if any(r is None for _, r in roles.values()):
            return "the kernel's nodes do not fit the reduction's loops"
        for buf, index in node_loads(node, role, frame):
            if buf.name in roles:
                producer, prole = roles[buf.name]
                if write_index(producer, prole, frame) != index:
                    return (f"it reads {buf.name} at [{index.render()}] but the kernel writes "
                            f"it at [{write_index(producer, prole, frame).render()}]")
        self.frame = frame
        self.members = [(m, r) for m, (_, r) in zip(self.nodes, roles.values())]
        self.members.append((node, role))
        self.widths |= widths
        return None

    def form_stages(self) -> None:
        """Group members into inner loops and scalar statements, in order. A loop member
        that reads nothing of the scalar stages after the last loop joins that loop (one
        pass over the input: ``x - x.mean(0)`` realizes the mean as a scalar stage before
        ``x.std(0)``'s sum, which then still shares the mean's loop)."""
        stages: list[list] = []
        for node, role in self.members:
            reads = {b.name for b, _ in node_loads(node, role, self.frame)}
            kind = "scalar" if role == "scalar" else "loop"
            last = len(stages) - 1
            if kind == "loop":
                while last > 0 and stages[last][0] == "scalar" and not self._touches(stages[last][1], node, reads):
                    last -= 1
            if last >= 0 and stages[last][0] == kind == "loop":
                in_loop = {m.buf.name for m, r in stages[last][1] if r == "reduce"}
                if not reads & in_loop:
                    stages[last][1].append((node, role))
                    continue
            elif stages and stages[-1][0] == kind == "scalar":
                stages[-1][1].append((node, role))
                continue
            stages.append([kind, [(node, role)]])
        self.stages = [(k, members) for k, members in stages]

    def _touches(self, members: list, node: ComputeNode, reads: set) -> bool:
        """Does ``node`` (reading ``reads``) read what ``members`` write, or write what they read?"""
        return bool(reads & {m.buf.name for m, _ in members}) or any(
            node.buf.name == b.name for m, r in members for b, _ in node_loads(m, r, self.frame))

    def __repr__(self) -> str:
        return f"Kernel({self.name}, {self.frame}, {[n.name for n in self.nodes]})"


def _extern_reads(node: ExternNode) -> set[str]:
    return {v.buf.name for v in iter_values(node.args) if isinstance(v, BufferValue)}


def _extern_inputs(node: ExternNode) -> set[str]:
    """Buffers and opaque values (a tuple an earlier extern returned) the call reads."""
    return _extern_reads(node) | {v.name for v in iter_values(node.args) if isinstance(v, Opaque)}


def _keeps_order(node: ExternNode, deferred: list, kernel: Kernel) -> bool:
    """Draws from a random generator (``Op.state``) run in program order, and never swap
    with an extern that may raise (NumPy draws before the error, or not at all): such a
    call waits behind deferred externs instead of moving before the open kernel. Nor do
    two externs that may raise or warn swap (NumPy raises the first one's error: ``v =
    x.sum() * 2 ** 70; w = x[0] ** np.int64(-1)`` of a uint32 ``x`` is an OverflowError;
    and gives its warnings in program order), nor
    an extern that may raise or warn and an open ``kernel`` computing a call that may warn
    (``y = np.log(x); m = np.linalg.inv(a)``: NumPy warns of the log, then raises; or
    warns of both, the log's first: ir/passes.py ``may_warn_call``)."""
    if _warns_or_raises(node) and any(may_warn_call(origin) for n in kernel.nodes
                                      for origin in n.origins if getattr(origin, "kind", None) == "call"):
        return True
    if not deferred:
        return False
    if node.op.state is not None:
        return True
    if any(d.op.state is not None for d in deferred):
        return True
    return _warns_or_raises(node) and any(_warns_or_raises(d) for d in deferred)


def _warns_or_raises(node: ExternNode) -> bool:
    """May extern ``node`` raise, or warn: a floating-point warning (ir/passes.py
    ``may_warn_call``), or any NumPy warning of a call it makes from the user's line
    (ir/graph.py ``numpy_call_at``: astype's ComplexWarning)?"""
    return node.may_raise() or any(getattr(origin, "kind", None) == "call" and (
        may_warn_call(origin) or numpy_call_at(origin) is not None) for origin in node.origins)


def schedule(low: GraphLowering, graph_name: str = "forward") -> list:
    """Kernels and extern calls in execution order (kernel names assigned)."""
    items: list[Any] = []
    open_kernel: Kernel | None = None
    producer_of: dict[str, Any] = {}
    # Externs that read the open kernel's results wait until it closes, so that later
    # nodes which do not need them can still join it (relu for a matmul and the relu
    # mask of the backward stay one kernel, one pass over their input).
    deferred: list[ExternNode] = []
    deferred_out: set[str] = set()

    def close() -> None:
        items.extend(deferred)
        deferred.clear()
        deferred_out.clear()

    for node in low.nodes:
        if isinstance(node, ExternNode):
            # An extern may run before the open kernel unless it reads the kernel's output
            # (or a deferred extern's), and never moves when it writes memory (a mutation
            # op: the kernel may read what it overwrites).
            if node.op.mutates or str(node.op.category) == "mutation":
                close()
                open_kernel = None
                items.append(node)
            elif open_kernel is not None and (_extern_inputs(node) & (open_kernel.written() | deferred_out)
                                              or _keeps_order(node, deferred, open_kernel)):
                deferred.append(node)
                deferred_out.add(node.name)
            elif open_kernel is not None:
                items.insert(len(items) - 1, node)
            else:
                items.append(node)
            producer_of[node.name] = node
            continue
        if open_kernel is not None and _node_reads(node) & deferred_out:
            reason = "it reads the result of an extern call that needs the kernel's output"
        else:
            reason = open_kernel.try_add(node) if open_kernel is not None else "no open kernel"
        if reason is not None:
            close()
            shared = [b for b in _node_reads(node) if b in producer_of]
            for b in shared:
                prod = producer_of[b]
                _log_refusal(prod, node, reason if open_kernel is not None and isinstance(prod, ComputeNode)
                             and prod in open_kernel.nodes else _why_separate(prod))
            open_kernel = Kernel(Frame(node.shape, node.loop_axes), node)
            items.append(open_kernel)
        producer_of[node.buf.name] = node
    close()
    count = 0
    for item in items:
        if isinstance(item, Kernel):
            item.form_stages()
            ops = []
            for n in item.nodes:
                for origin in n.origins:
                    if getattr(origin, "kind", None) == "call" and origin.op.name not in ops:
                        ops.append(origin.op.name)
            # relayout only says where the values go (an in-place rewrite's, a join's)
            ops = [o for o in ops if o != "relayout"] or ops
            item.name = "kiln_fused_" + "_".join(ops[:4] or ["copy"]) + f"_{count}"
            count += 1
    return items


def _node_reads(node: ComputeNode) -> set[str]:
    frame = Frame(node.shape, node.loop_axes)
    return {b.name for b, _ in node_loads(node, role_in(node, frame), frame)}


def _why_separate(producer: Any) -> str:
    if isinstance(producer, ExternNode):
        return f"{producer.name} is an extern call ({producer.op.name}), which never fuses"
    return "a node in between started a new kernel"


def _log_refusal(producer: Any, consumer: ComputeNode, reason: str) -> None:
    if logs.enabled("fusion"):
        logs.log("fusion", f"not fused: {producer.name} -> {consumer.name}", reason)


def kernel_locals(items: list, low: GraphLowering) -> dict[str, str]:
    """Buffers that never leave their kernel: name -> 'scalar' | 'register' | 'row'.

    A reduction's (or scalar stage's) result read only in its kernel lives in a per-row
    variable; a row value read only in its own loop lives in a register; one read by later
    loops of the same outer point lives in a small per-row array (Inductor's local buffer:
    softmax's exp values). None of them is allocated.
    """
    needed_outside: set[str] = set(getattr(low, "sinks", ()))
    for out in low.outputs:
        for v in iter_values((out,)):
            if isinstance(v, BufferValue):
                needed_outside.add(v.buf.name)
    readers: dict[str, set] = {}
    loop_of: dict[str, int] = {}
    for item in items:
        if isinstance(item, ExternNode):
            needed_outside |= _extern_reads(item)
            continue
        for s, (kind, members) in enumerate(item.stages):
            for node, role in members:
                loop_of[node.buf.name] = (id(item), s)
                for b, _ in node_loads(node, role, item.frame):
                    readers.setdefault(b.name, set()).add((id(item), s))
    local: dict[str, str] = {}
    for item in items:
        if not isinstance(item, Kernel):
            continue
        for node, role in item.members:
            name = node.buf.name
            if name in needed_outside:
                continue
            where = readers.get(name, set())
            if any(k != id(item) for k, _ in where):
                continue
            if role == "scan":
                continue   # every prefix is stored
            if role in ("reduce", "scalar"):
                local[name] = "scalar"
            elif all(w == loop_of[name] for w in where):
                local[name] = "register"
            elif item.frame.axes:
                local[name] = "row"  # read by later loops of the same outer point
    return local
