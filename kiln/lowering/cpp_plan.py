"""The C++ renderer's kernel plans: what is decided about one kernel before it is printed.

:func:`plan_kernel` turns a scheduled kernel into a :class:`CppKernelPlan` (plain data,
kiln/lowering/plan.py): the outer (parallel) and inner (reduced) loops, collapsed and in
memory order; blocks of outer points for reductions over leading axes; the segments of
split loops (``cuts``); NumPy's pairwise runs of float sums; per-row arrays (those too big
for the stack become ordinary buffers); accumulator dtypes; work and cost. kiln/lowering/cpp.py
prints the plan (``print_kernel``); nothing here prints text.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .cpp_loops import SHORT_LOOP
from .cpp_ops import call_cost
from .cpp_stages import BLOCK, IN_ORDER_COMBINES, block_points, multiplies_in_order
from .plan import Collapse, index_cuts, kernel_accesses, kernel_cost, loop_order
from .reduce_order import kept_axis_inner, numpy_run
from .scheduler import Kernel, write_index
from .sizes import product, render as render_size

# At most this many copies of a kernel's body across the segments of split loops.
MAX_SEGMENT_COPIES = 9


# Per-row arrays (row-local buffers) live on the stack: at most this many bytes each.
ROW_LOCAL_BYTES = 64 * 1024


def _fit_row_locals(kernel: Kernel, local: dict) -> dict:
    """Row-local buffers too big for the stack become ordinary buffers."""
    frame = kernel.frame
    sizes = dict(frame.inner_vars())
    out = dict(local)
    for node, role in kernel.members:
        if out.get(node.buf.name) == "row":
            w = write_index(node, role, frame)
            span = 1 + sum(c * (sizes[v] - 1) for v, c in w.terms.items() if v in sizes)
            if role != "row" or not isinstance(span, int) \
                    or span * node.buf.dtype.itemsize > ROW_LOCAL_BYTES:
                del out[node.buf.name]
    return out


@dataclass
class CppKernelPlan:
    """Everything decided about one kernel before it is printed (kiln/lowering/plan.py)."""

    kernel: Kernel
    local: dict                  # kernel-local buffers as this kernel keeps them
    inplace: dict                # output name -> input Buffer whose memory it takes
    size_args: tuple             # int64_t parameters: the dynamic sizes
    outer: Collapse              # the outer (parallel) loops, collapsed
    inner: Collapse              # the inner (reduced) loops, collapsed
    blocked: str | None          # the outer variable run in blocks of ``block`` points
    split_inner: bool            # no outer loop: big inner loops are split across threads
    work: str                    # elements the kernel iterates (a C expression)
    cost: int                    # statements per element
    row_arrays: dict = field(default_factory=dict)    # buffer -> (dtype, elements per row)
    accumulators: dict = field(default_factory=dict)  # reduction buffer -> accumulator dtype
    cuts: dict = field(default_factory=dict)   # outer variable -> segment edges (_outer_nest)
    block: int = BLOCK           # points per block of the blocked variable (cpp_stages.block_points)
    runs: dict = field(default_factory=dict)   # sum buffer -> (loops of NumPy's run, chunk): reduce_order.numpy_run

    @property
    def outer_loops(self) -> list[tuple[str, str]]:
        return self.outer.loops()

    @property
    def inner_loops(self) -> list[tuple[str, str]]:
        return self.inner.loops()

    def rename(self, terms: dict[str, int]) -> list[tuple[str, int]]:
        """An index's terms over the collapsed loop variables."""
        return self.inner.rename(dict(self.outer.rename(terms)))


def plan_kernel(kernel: Kernel, local: dict, size_args: tuple = (),
                inplace: dict | None = None) -> CppKernelPlan:
    """Loops, blocking, per-row arrays, accumulators, threads and cost of one kernel;
    ``local`` as kiln/lowering/scheduler.kernel_locals gives it, ``inplace`` as
    kiln/lowering/inplace.plan_inplace does."""
    frame = kernel.frame
    local = _fit_row_locals(kernel, local)
    mine = {n.buf.name for n in kernel.nodes}
    inplace = {k: v for k, v in (inplace or {}).items() if k in mine and local.get(k) is None}
    accesses = kernel_accesses(kernel, local)
    outer_vars = frame.outer_vars()
    in_order = any(n.kind == "scan" or n.kind == "reduction" and n.combine in IN_ORDER_COMBINES
                   for n in kernel.nodes)
    inner_vars = frame.inner_vars()
    # x[mask].sum() compacts its selection in C order, as NumPy's x[mask] takes it
    selects = any(n.kind == "reduction" and n.select is not None for n in kernel.nodes)
    if not in_order and not selects:
        # a reduction walks memory in order, as NumPy's iterator does (x.T.sum() is one
        # run, added pairwise: NumPy's bits, and unit-stride loads; x.T.sum((1, 2)) adds
        # its runs in memory order: reduce_order.numpy_run)
        inner_vars = loop_order(inner_vars, accesses, memory=True)
    # the kept dims in memory order too: a reduction of x.T over a middle axis then runs
    # blocks of unit-stride points (below), adding row by row as NumPy does
    outer = Collapse(loop_order(outer_vars, accesses), accesses)
    inner = Collapse(inner_vars, accesses)
    plan = CppKernelPlan(kernel, local, inplace, tuple(size_args), outer, inner, None, False,
                         render_size(product(frame.shape)), kernel_cost(kernel, call_cost))
    if not outer.loops() and plan.inner_loops:
        # (argmax/argmin and scans keep one in-order pass: OpenMP has no combine for them)
        plan.split_inner = not in_order and not any(multiplies_in_order(n) for n in kernel.nodes)
    elif outer.loops() and plan.inner_loops:
        # Reducing leading axes: if memory is contiguous along the kept dims, not along
        # the reduced ones, run blocks of outer points in the innermost loop instead.
        vo, vi = outer.loops()[-1][0], plan.inner_loops[-1][0]
        if kept_axis_inner(plan, kernel_accesses(kernel, local, loads_only=True), accesses, vo, vi) \
                or _products_only(kernel) and not in_order:
            plan.blocked = vo
            plan.block = block_points(outer.loops()[-1][1])
            plan.local = {k: v for k, v in local.items() if not (v == "row" and k in mine)}
    if not plan.blocked and len(plan.inner_loops) > 1:
        for node in kernel.nodes:
            if node.kind == "reduction" and node.combine == "sum":
                run = numpy_run(plan, node, local)
                if run:
                    plan.runs[node.buf.name] = run
    if not frame.axes:
        plan.cuts = index_cuts(kernel, outer, SHORT_LOOP, MAX_SEGMENT_COPIES)
    inner_sizes = dict(frame.inner_vars())
    for node, role in kernel.members:
        name = node.buf.name
        if plan.local.get(name) == "row" and role == "row":
            w = write_index(node, role, frame)
            plan.row_arrays[name] = (node.buf.dtype, 1 + sum(
                c * (inner_sizes[v] - 1) for v, c in w.terms.items() if v in inner_sizes))
        if node.kind == "scan":
            plan.accumulators[name] = node.acc_dtype   # NumPy's running value: the result dtype
        if node.kind == "reduction":
            acc = node.acc_dtype
            if plan.blocked and node.combine == "sum" and node.buf.dtype.kind == "f" \
                    or multiplies_in_order(node):
                # NumPy reduces a leading axis row by row in the output dtype (and multiplies
                # in order along any axis); so does the blocked (or in-order) loop, so
                # accumulating in that dtype gives NumPy's result bit for bit (and float32
                # lanes are twice as many as double ones).
                acc = node.buf.dtype
            plan.accumulators[name] = acc
    return plan


def _products_only(kernel: Kernel) -> bool:
    """Are the kernel's reductions all float products (cpp_stages.multiplies_in_order)?
    Each multiplies in order, one dependent multiply after another, so a point's product
    is bound by the multiply's latency; blocks of points, one lane each, multiply many
    at a time (np.prod(x, axis=1) of 1000x1000 float64: 1.7 ms row by row as NumPy,
    0.8 ms in blocks, the same bits)."""
    reductions = [n for n in kernel.nodes if n.kind == "reduction"]
    return bool(reductions) and all(multiplies_in_order(n) for n in reductions)
