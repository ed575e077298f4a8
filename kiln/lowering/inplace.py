"""In-place buffer reuse: a kernel writes its output into an input that dies with it.

Inductor's ``in_out_ptr``: when a kernel reads an intermediate buffer for the last time,
element by element at exactly the index where it writes one of its own outputs of the
same shape and dtype, the output can take that buffer's memory. Each element is read
before it is overwritten, in the same iteration, so the result is the same; the step
touches one buffer less (W6's forward writes ``x @ w1 + b1`` over the matmul's result,
its backward writes the relu mask's product over ``dlogits @ w2.T``).

The kernel then has one pointer for both (the output's stores go to the input's
parameter), and the wrapper binds the output's name to the input's array.

An input qualifies when it is

- memory the wrapper owns: a buffer an earlier kernel computed, or the result of an
  extern op that always returns a new array (``Op.fresh_result``; einsum, for one, may
  return a view of its operand);
- dead after this kernel: no later kernel, extern call or graph output reads it, nor
  the result of an extern that may be a view of it (``Op.may_alias``);
- or the caller's array the output is the new value of (``Graph.donated``: aot's
  epilogue would copy it there), when no later step reads it and no later extern call can
  raise; then the wrapper returns the caller's array and the epilogue has nothing to do;
- read by this kernel only at the output's write index (the same element), in the
  output's own loop (stage) or an earlier loop of the same outer point, never a later
  one; within the output's loop, first read by the output's own node or one before it,
  so the load is emitted before the store (later reads reuse the loaded register).

Where the output is the caller's array's new value and the input it would take is the
result of an extern with an ``Op.out_impl`` (``np.matmul(a, b, out=c)``, then
``np.clip(c, -1, 1, out=c)``), the extern writes its result straight into the caller's
array, as NumPy's ``out=`` does, and the kernel then works in place there: no temporary
the size of the result (``low.extern_into``: extern name -> the caller's buffer; the
wrapper calls ``out_impl``). Only when that array is C-contiguous like the result, of its
shape and dtype, nothing from the extern's step through the kernel's reads it (nor a
view of it: the extern's operands do not overlap it) and nothing from the extern on can
raise (aot replays a graph that raised on the caller's untouched arrays).
"""
from __future__ import annotations

from typing import Any

from ..ir.passes import extend_through_views, last_uses
from .loop_ir import Buffer, BufferValue, contiguous_strides
from .lower import ExternNode, GraphLowering, iter_values
from .scheduler import Kernel, node_loads, write_index

def reads(item: Any) -> list[str]:
    """Names of the buffers a schedule step loads (before rendering: an extern's array
    arguments, a kernel's recorded loads)."""
    if isinstance(item, ExternNode):
        return [v.buf.name for v in iter_values(item.args) if isinstance(v, BufferValue)]
    return [buf.name for node, role in item.members for buf, _ in node_loads(node, role, item.frame)]


def plan_inplace(items: list, low: GraphLowering, local: dict) -> dict[str, Buffer]:
    """output buffer name -> the input Buffer whose memory it takes (see the module doc)."""
    last = last_uses((reads(item) for item in items),
                     [v.buf.name for v in iter_values(tuple(low.outputs)) if isinstance(v, BufferValue)])
    # (memory an extern's result may view lives as long as that result)
    last = extend_through_views(last, [(item.name, reads(item)) for item in items
                                       if isinstance(item, ExternNode) and item.op.may_alias])
    fresh = {item.name for item in items
             if isinstance(item, ExternNode) and item.op.fresh_result}
    donated = _donated(low)
    raising = [step for step, item in enumerate(items)
               if isinstance(item, ExternNode) and item.may_raise()]
    steps_reads = [set(reads(item)) for item in items]
    # (only for a renderer that stores at computed indices, as window_writes.py asks: on
    # Triton a borrowed strided layout gave wrong values, test_triton_programs.py
    # dynamic_mutation; not investigated further)
    renderer = getattr(low, "renderer", None)
    borrow = renderer is None or getattr(renderer, "computed_indices", False)
    low.extern_into = {}
    into = writes_into(items, low, steps_reads, raising)
    plan: dict[str, Buffer] = {}
    for step, item in enumerate(items):
        if isinstance(item, Kernel):
            # A caller's array is written only when nothing after can still raise.
            give = donated if not any(r > step for r in raising) else {}
            moved = _take_callers_layout(item, give, steps_reads[step:], low) if give and borrow else []
            alone = bool(getattr(renderer, "reruns_only_fresh", lambda _k: False)(item))
            got = _kernel_plan(item, step, last, fresh, local, give, into, alone)
            undone = [undo() for out, undo in moved if got.get(out.name) is not give[out.name]]
            if undone:   # not written over the caller's array after all: a temporary,
                got = _kernel_plan(item, step, last, fresh, local, give, into, alone)   # planned as one
            for out, src in got.items():
                if give.get(out) is not None and src is not give[out]:
                    low.extern_into.pop(src.name, None)
                    if into(src.name, give[out], step):
                        low.extern_into[src.name] = give[out]
            plan.update(got)
    return plan


def _take_callers_layout(kernel: Kernel, donated: dict, reads_on: list, low: GraphLowering) -> list:
    """Lay out a donated output as the caller's array it is the new value of, where that
    array is not contiguous (``a += b`` on ``a = base[:, ::2]``, or on a transpose): the
    kernel then stores straight into it (one pass, as NumPy's in-place add) instead of
    into a temporary that aot's epilogue copies back (0.49x NumPy at 200x500, strided).
    Only an output that nothing else reads through its old layout: no load of it in
    this kernel or a later step, stored by one node, and whole among the graph's outputs
    (which are re-pointed at the new layout). _kernel_plan then checks the reads; the
    (buffer, undo) pairs returned put back the layouts it did not write in place."""
    moved = []
    for node, role in kernel.members:
        out, target = node.buf, donated.get(node.buf.name)
        if target is None or role != "row" or (out.strides, out.offset) == (target.strides, target.offset) \
                or (out.shape, out.dtype) != (target.shape, target.dtype) \
                or not all(isinstance(v, int) for v in (*target.strides, target.offset)) \
                or sum(n.buf is out for n in kernel.nodes) != 1 \
                or any(out.name in r for r in reads_on):
            continue
        outputs = [k for k, v in enumerate(low.outputs) if isinstance(v, BufferValue) and v.buf is out]
        if not all(low.outputs[k].is_whole() and low.outputs[k].py is None for k in outputs):
            continue   # (a view op's result, ``x += 1; return x.ravel()``: a view of the C
            # layout, which NumPy copies from a reversed x; tests/fuzz/views.py seed 5040)
        def undo(out=out, old=(out.strides, out.offset), values=[low.outputs[k] for k in outputs],
                 outputs=outputs):
            out.strides, out.offset = old
            for k, v in zip(outputs, values):
                low.outputs[k] = v
        out.strides, out.offset = target.strides, target.offset
        for k in outputs:
            low.outputs[k] = BufferValue.whole(out)
        moved.append((out, undo))
    return moved


def writes_into(items: list, low: GraphLowering, steps_reads: list, raising: list):
    """``ok(name, target, step, through=True)``: may the extern whose result is ``name``
    write it straight into the caller's buffer ``target``, for the kernel at ``step`` to
    take over in place (see the module doc)? ``through=False``: for the step at ``step``
    to be the write of the whole result into ``target`` (``c[...] = a @ b``,
    lowering/memory.py), which reads ``target`` itself as its destination only."""
    externs = {item.name: (k, item) for k, item in enumerate(items)
               if isinstance(item, ExternNode) and (item.op.out_impl is not None or writes_operand(item))}
    views = [(k, item.name, set(steps_reads[k])) for k, item in enumerate(items)
             if isinstance(item, ExternNode) and item.op.may_alias]

    def ok(name: str, target: Buffer, step: int, through: bool = True) -> bool:
        if name not in externs or low.size_checks:   # (checks raise between the steps)
            return False
        first, item = externs[name]
        out = item.out
        # a scatter into the caller's array itself (``x[0] = 7; x *= 2``) runs in place
        # there (its atomic form raises before writing): the reads after it matter
        own = item.op.out_impl is None
        if own and not (through and item.args[0].buf is target):
            return False
        if not (isinstance(out, BufferValue) and out.is_whole() and out.buf.order is None
                and getattr(out, "layout", None) is None and len(target.shape) > 0
                and (out.buf.shape, out.buf.dtype) == (target.shape, target.dtype)
                and (own or all(isinstance(v, int) for v in (*target.shape, *target.strides, target.offset)))
                and (target.strides, target.offset) == (contiguous_strides(target.shape), 0)
                and out.buf.strides == target.strides and first < step
                and not any(r >= first + own for r in raising)):
            return False
        first += own
        aliases = {target.name}
        for k, view, read in views:   # views of the caller's array, in schedule order
            if k < step and read & aliases:
                aliases.add(view)
        return not any(steps_reads[k] & aliases for k in range(first, step + through))
    return ok


def writes_operand(item: ExternNode) -> bool:
    """A scatter whose in-place form writes its whole first operand, which no other
    operand reads, and raises only before writing (``Op.inplace_atomic``: ``x[0] = 7.0``)."""
    op, args = item.op, item.args
    if op.inplace_impl is None or op.inplace_inputs is not None or op.inplace_atomic is None \
            or not args or not isinstance(args[0], BufferValue) or not args[0].is_whole():
        return False
    name = args[0].buf.name
    return sum(1 for v in iter_values(args) if isinstance(v, BufferValue) and v.buf.name == name) == 1 \
        and bool(op.inplace_atomic(args))


def _donated(low: GraphLowering) -> dict[str, Buffer]:
    """output buffer name -> the input buffer it is the new value of (Graph.donated)."""
    out: dict[str, Buffer] = {}
    for k, i in low.donated().items():
        value = low.outputs[k] if k < len(low.outputs) else None
        target = low.inputs[i][1] if i < len(low.inputs) else None
        if isinstance(value, BufferValue) and value.is_whole() and isinstance(target, Buffer) \
                and target.kind == "input" and value.buf.kind == "computed":
            out[value.buf.name] = target
    return out


def _kernel_plan(kernel: Kernel, step: int, last: dict, fresh: set, local: dict,
                 donated: dict, into: Any, callers_only: bool = False) -> dict:
    """``callers_only``: an output takes only the caller's array it is the new value of
    (Renderer.reruns_only_fresh), never an intermediate buffer."""
    written = kernel.written()
    # Every load of every buffer: (stage, position in the stage, node name, index).
    loads: dict[str, list] = {}
    for s, (_, members) in enumerate(kernel.stages):
        for pos, (node, role) in enumerate(members):
            for buf, index in node_loads(node, role, kernel.frame):
                loads.setdefault(buf.name, []).append((s, pos, buf, index))
    plan: dict[str, Buffer] = {}
    taken: set[str] = set()
    for s, (_, members) in enumerate(kernel.stages):
        for pos, (node, role) in enumerate(members):
            out = node.buf
            if role != "row" or out.kind != "computed" or local.get(out.name) is not None:
                continue
            w = write_index(node, role, kernel.frame)
            candidates = [(name, uses[0][2], uses) for name, uses in loads.items()]
            target = donated.get(out.name)
            if target is not None:
                # The caller's array this output is the new value of: first choice, and it
                # qualifies even if this kernel does not read it.
                candidates.insert(0, (target.name, target, loads.get(target.name, [])))
                # better still: an extern's result it reads, written there by the extern
                candidates[:0] = [c for c in candidates[1:] if into(c[0], target, step)]
            for name, buf, uses in candidates:
                owned = buf.kind == "computed" or name in fresh
                if (name in taken or name in written or local.get(name) is not None
                        or (buf is not target and (not owned or callers_only))
                        or (last.get(name, -1) > step if buf is target else last.get(name) != step)
                        or (buf.shape, buf.dtype, buf.strides, buf.offset)
                        != (out.shape, out.dtype, out.strides, out.offset)):
                    continue
                here = [upos for us, upos, _, _ in uses if us == s]
                if all(us <= s and index == w for us, _, _, index in uses) \
                        and (not here or min(here) <= pos):
                    plan[out.name] = buf
                    taken.add(name)
                    break
    return plan
