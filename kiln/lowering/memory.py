"""The memory plan of a compiled graph: where every buffer the wrapper owns comes from and
when it dies, decided once, as data, before the wrapper is printed
(kiln/lowering/wrapper.py prints it; the renderer says how an allocation is spelled).

Per schedule step, each buffer a kernel writes is

- ``inplace``: the kernel writes it over an input it reads for the last time
  (kiln/lowering/inplace.py): the wrapper binds the name, nothing is allocated;
- ``reuse``: a dead buffer of the same shape, dtype and layout takes the new name (a
  result NumPy lays out in another axis order never takes a C-ordered one);
- ``pool``: a buffer of ``POOL_BYTES`` or more comes from a per-site pool that survives
  the call when nobody else references it (fresh pages cost more than the kernel that
  fills them); static shapes only;
- ``new``: a fresh allocation.

A buffer dies after its last use: it joins the free list of its shape and dtype when a
later kernel writes a buffer of that shape, dtype and layout (or when it belongs to a
pool), and is deleted there otherwise, as are an extern's result and an in-place
output's old name: memory held to the end for nothing made every call of a graph whose
steps change shape (a Stockham FFT's) fault in fresh pages once the heap was trimmed. An
extern scatter whose first operand is an array only this call holds and nothing reads
again runs its op's ``inplace_impl`` on it (``inplace_externs``); from a pool, the array
goes back to that pool as the scatter's result. At the end, buffers on
free lists go back to their pools (or are deleted), and pooled outputs return to their
pool for the next call once the caller drops them.

    >>> import numpy as np
    >>> from kiln.ir import trace
    >>> from kiln.ops import F, TensorMeta
    >>> from kiln.runtime.backend import generate
    >>> g = trace(lambda x: F.exp(F.matmul(x, x)), [TensorMeta((4, 4), np.float64)], ["x"])
    >>> plan = generate(g, [np.zeros((4, 4))]).memory
    >>> [(a.name, a.how, a.source) for allocs in plan.allocations.values() for a in allocs]
    [('buf1', 'inplace', 'buf0')]
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ir.passes import extend_through_views, last_uses
from .loop_ir import Buffer, BufferValue
from .inplace import writes_into
from .lower import ExternNode, Opaque, iter_values
from .scheduler import Kernel

# Buffers at least this big are recycled across calls (see the module doc).
POOL_BYTES = 1 << 16


@dataclass
class Allocation:
    name: str
    buf: Buffer
    how: str                   # "new" | "reuse" | "pool" | "inplace"
    source: str | None = None  # reuse: the dead buffer; inplace: the input; pool: the pool


@dataclass
class MemoryPlan:
    allocations: dict = field(default_factory=dict)   # step -> [Allocation] before it runs
    deaths: dict = field(default_factory=dict)        # step -> names deleted after it
    inplace_externs: set = field(default_factory=set)  # steps whose extern runs in place
    # steps writing a whole result the extern that made it wrote there already
    # (``c[...] = a @ b``: low.extern_into, kiln/lowering/inplace.py)
    written_before: set = field(default_factory=set)
    at_exit: list = field(default_factory=list)       # (name, pool or None) still held
    pools: list = field(default_factory=list)         # pool names (module globals)
    pooled_outputs: list = field(default_factory=list)  # (output name, pool)


def kernel_reads(rk: Any) -> list[str]:
    return [b.name for b in rk.buffers]


def item_reads(item: Any, rendered: dict) -> list[str]:
    """Names of the buffers and opaque values a schedule step reads."""
    if isinstance(item, Kernel):
        return kernel_reads(rendered[item.name])
    return [v.buf.name if isinstance(v, BufferValue) else v.name  # Opaque: a result
            for v in iter_values(item.args) if isinstance(v, (BufferValue, Opaque))]


def step_last_uses(low: Any, items: list, rendered: dict) -> dict[str, int]:
    """The step after which each name is dead (outputs never are). An extern's result
    that may be a view of its operand (``Op.may_alias``: a reshape with run-time sizes is
    an extern) keeps the operand's memory alive as long as it lives
    (fuzzer seed 10004: the buffer under such a reshape was reused while the view was
    still read)."""
    outputs = [v.buf.name if isinstance(v, BufferValue) else v.name
               for v in iter_values(tuple(low.outputs)) if isinstance(v, (BufferValue, Opaque))]
    last = last_uses((item_reads(item, rendered) for item in items), outputs)
    # A value nothing reads dies where it is made (an in-place output's name, an unused
    # extern result).
    for step, item in enumerate(items):
        made = list(rendered[item.name].inplace) if isinstance(item, Kernel) else [item.name]
        for name in made:
            last.setdefault(name, step)
    return extend_through_views(last, [(item.name, item_reads(item, rendered)) for item in items
                                       if not isinstance(item, Kernel) and item.op.may_alias])


def plan_memory(low: Any, items: list, rendered: dict, pool: bool = True) -> MemoryPlan:
    """Allocation, reuse, pooling, in-place writes and frees for ``items`` (the
    schedule); ``rendered``: each kernel's buffers, written names and in-place outputs."""
    plan = MemoryPlan()
    last_use = step_last_uses(low, items, rendered)
    allocated: dict[str, Buffer | None] = {}
    free: dict[tuple, list[str]] = {}
    pooled: dict[str, str] = {}
    moved: set[str] = set()            # inputs whose array an in-place output took over
    fresh: dict[str, bool] = {}        # extern result name -> always a new array
    give_caller = _caller_arrays(low, items, rendered)
    whole_write = _whole_writes(low, items, rendered, last_use)
    caller_of: dict[str, str] = {}     # extern result -> the caller's array it wrote in place
    back: list[str] = []               # pooled extern results that die: to their pool at the end
    wanted = _last_write_of_key(items, rendered)
    for step, item in enumerate(items):
        if isinstance(item, Kernel):
            rk = rendered[item.name]
            allocs = plan.allocations.setdefault(step, [])
            for node in item.nodes:
                buf = node.buf
                if buf.name not in rk.written or buf.name in allocated:
                    continue
                key = (buf.shape, buf.dtype.str, buf.strides)
                src = rk.inplace.get(buf.name)
                if src is not None:
                    allocs.append(Allocation(buf.name, buf, "inplace", src.name))
                    moved.add(src.name)
                    if src.name in pooled:
                        pooled[buf.name] = pooled.pop(src.name)
                    if getattr(buf, "window_of", None) is not None:
                        # a window of the caller's array (lowering/window_writes.py) is no
                        # memory for a later kernel to reuse
                        allocated[buf.name] = None
                        continue
                elif free.get(key):
                    old = free[key].pop()
                    allocs.append(Allocation(buf.name, buf, "reuse", old))
                    if old in pooled:  # the array goes back to its pool at the end
                        pooled[buf.name] = pooled.pop(old)
                elif pool and not low.sizes \
                        and buf.dtype.itemsize * int(np.prod(buf.shape)) >= POOL_BYTES:
                    name = f"_pool_{buf.name}"
                    plan.pools.append(name)
                    allocs.append(Allocation(buf.name, buf, "pool", name))
                    pooled[buf.name] = name
                else:
                    allocs.append(Allocation(buf.name, buf, "new"))
                allocated[buf.name] = buf
        elif getattr(item, "window_of", None) is not None:
            # a write a kernel already made into the caller's array (window_writes.py):
            # its result is that array, no memory of this call's
            allocated[item.name] = None
            fresh[item.name] = False
        else:
            pick = getattr(item.op, "inplace_inputs", None)
            given = list(pick(item.args, item.params)) if pick is not None else list(item.args[:1])
            # (a pooled array, one given: the pool takes the extern's result, the same array)
            owned = all(isinstance(v, BufferValue) and v.is_whole()
                        and _owned(v.buf.name, allocated, fresh)
                        and last_use.get(v.buf.name) == step
                        and (v.buf.name not in pooled or len(given) == 1) and v.buf.name not in moved
                        for v in given)
            # the caller's array itself, which a kernel then takes over in place
            # (lowering/inplace.py writes_into: ``x[0] = 7; x *= 2``)
            own = item.op.out_impl is None and given and isinstance(given[0], BufferValue) \
                and getattr(low, "extern_into", {}).get(item.name) is given[0].buf
            caller = not owned and pick is None and len(given) == 1 and (own or (
                give_caller(step, item, given[0], last_use, moved, caller_of)
                and (_only_there(item.args, given) or _overlap_copied(item, given))))
            if getattr(item.op, "inplace_impl", None) is not None and given and (owned or caller) \
                    and (pick is None or _only_there(item.args, given)):
                # x[i] = v on an array nothing reads again (a loop's running result, or
                # the caller's array the graph writes): written in place, not copied per
                # call (a recurrence was quadratic; a scatter into a big argument copied
                # it twice).
                plan.inplace_externs.add(step)
                moved.update(v.buf.name for v in given)
                if owned and given[0].buf.name in pooled and isinstance(item.out, BufferValue):
                    # (a loop's result is a tuple holding the array: not the pool's array)
                    pooled[item.name] = pooled.pop(given[0].buf.name)
                if caller:
                    caller_of[item.name] = caller_of.get(given[0].buf.name, given[0].buf.name)
                    source = whole_write(step, item, given[0])
                    if source is not None:
                        low.extern_into[source] = given[0].buf
                        plan.written_before.add(step)
            allocated[item.name] = None
            # The caller's array written in place is not memory a later scatter may take.
            fresh[item.name] = item.op.fresh_result and not caller
        for name, last in last_use.items():
            if last == step and name in allocated:
                buf = allocated[name]
                key = None if buf is None else (buf.shape, buf.dtype.str, buf.strides)
                if buf is not None and name not in moved and (wanted.get(key, -1) > step or name in pooled):
                    free.setdefault((buf.shape, buf.dtype.str, buf.strides), []).append(name)
                elif buf is None and name in pooled and name not in moved:
                    back.append(name)   # an in-place extern's result: its pool's array
                else:
                    plan.deaths.setdefault(step, []).append(name)
    plan.at_exit = [(n, pooled.get(n)) for names in [*free.values(), back] for n in names]
    output_names = {v.buf.name if isinstance(v, BufferValue) else v.name
                    for v in low.outputs if isinstance(v, (BufferValue, Opaque))}
    plan.pooled_outputs = [(name, p) for name, p in pooled.items() if name in output_names]
    return plan


def _last_write_of_key(items: list, rendered: dict) -> dict[tuple, int]:
    """(shape, dtype, strides) -> the last step whose kernel writes a buffer of that key:
    a dead buffer is worth keeping for reuse only until then."""
    last: dict[tuple, int] = {}
    for step, item in enumerate(items):
        if isinstance(item, Kernel):
            written = rendered[item.name].written
            for node in item.nodes:
                if node.buf.name in written:
                    last[(node.buf.shape, node.buf.dtype.str, node.buf.strides)] = step
    return last


def _caller_arrays(low: Any, items: list, rendered: dict):
    """``ok(step, item, value, last_use, moved)``: may the extern at ``step`` write the
    caller's array ``value`` in place (Graph.donated: aot's epilogue would copy the graph's
    new value of it there)? Only when nothing reads its old value later, no kernel takes it
    over (kiln/lowering/inplace.py) and the op's in-place form is atomic for these arguments
    (``Op.inplace_atomic``). aot replays the whole graph op by op when a step raises, on
    the caller's arrays: so either nothing after may raise, or the replay finds what it
    needs: nothing before read the array (the write's value does not depend on it) and
    nothing writes over the result in place, so writing the same value again leaves the
    array as one write would, as NumPy's error leaves it."""
    targets = {low.inputs[i][1].name for _, i in low.donated().items()
               if i < len(low.inputs) and isinstance(low.inputs[i][1], Buffer)}
    if not targets:
        return lambda *a: False
    taken_by = {src.name: out for item in items if isinstance(item, Kernel)
                for out, src in rendered[item.name].inplace.items()}
    taken = set(taken_by)
    # output buffer -> the caller's array it is the new value of
    new_value_of = {low.outputs[k].buf.name: low.inputs[i][1].name
                    for k, i in low.donated().items()
                    if k < len(low.outputs) and isinstance(low.outputs[k], BufferValue)
                    and i < len(low.inputs) and isinstance(low.inputs[i][1], Buffer)}

    def ends_as(name: str) -> str:
        """What the memory of ``name`` holds at the end: the last kernel output written
        over it in place (kiln/lowering/inplace.py), else ``name`` itself."""
        seen = set()
        while name in taken_by and name not in seen:
            seen.add(name)
            name = taken_by[name]
        return name
    raising = [step for step, item in enumerate(items)
               if not isinstance(item, Kernel) and item.may_raise()]
    first_read: dict[str, int] = {}
    for step, item in enumerate(items):
        for name in item_reads(item, rendered):
            first_read.setdefault(name, step)

    def ok(step: int, item: Any, v: Any, last_use: dict, moved: set, caller_of: dict) -> bool:
        atomic = getattr(item.op, "inplace_atomic", None)
        if not isinstance(v, BufferValue):
            return False
        # the caller's array itself, or an earlier extern's result written into it in place
        # (``u[1:] += x; u[::2] *= 2``: each write in place, not a copy per write)
        chained = v.buf.name in caller_of
        target = caller_of[v.buf.name] if chained else v.buf.name if v.buf.kind == "input" else None
        if not (v.is_whole() and target in targets and v.buf.name not in taken
                and v.buf.name not in moved and last_use.get(v.buf.name) == step
                and atomic is not None and atomic(item.args)):
            return False
        if item.name in taken and new_value_of.get(ends_as(item.name)) != target:
            # a kernel writes another value over the result (so over the caller's array):
            # only the array's own new value may end there (fuzzer seed 7004: ``v3 = x0 +
            # x1`` written over x0 after ``np.add(x0, x0, out=x0[::-1])``, and x0.fill
            # then copied over v3)
            return False
        return not any(r > step for r in raising) \
            or (not chained and first_read.get(v.buf.name) == step and item.name not in taken)
    return ok


def _whole_writes(low: Any, items: list, rendered: dict, last_use: dict):
    """``source(step, item, target)``: the extern result that the scatter ``item``
    (``c[...] = a @ b``, ``c[:, :] = ...``, into the caller's array ``target``) writes
    whole and that its extern may write straight there instead (``Op.out_impl``, on the
    conditions of kiln/lowering/inplace.py ``writes_into``), or None."""
    ok = writes_into(items, low, [set(item_reads(item, rendered)) for item in items],
                     [k for k, item in enumerate(items) if isinstance(item, ExternNode) and item.may_raise()])

    def source(step: int, item: Any, target: Any) -> str | None:
        if item.op.name != "index_put" or len(item.args) != 3 or item.params \
                or target.buf.kind != "input" or not isinstance(item.args[2], BufferValue):
            return None
        index, value = item.args[1], item.args[2]
        index = index if isinstance(index, tuple) else (index,)
        whole = all(e is Ellipsis or isinstance(e, slice) and e == slice(None) for e in index) and \
            sum(e is Ellipsis for e in index) <= 1 and len(index) - (Ellipsis in index) <= len(target.shape)
        name = value.buf.name
        if whole and value.is_whole() and last_use.get(name) == step \
                and ok(name, target.buf, step, through=False):
            return name
        return None
    return source


def _only_there(args: Any, given: list) -> bool:
    """Each buffer given up appears once among the arguments (no other operand reads it)."""
    names = [v.buf.name for v in given]
    seen = [v.buf.name for v in iter_values(args) if isinstance(v, BufferValue)]
    return len(set(names)) == len(names) and all(seen.count(n) == 1 for n in names)


def _overlap_copied(item: Any, given: list) -> bool:
    """The array given up appears once among the operands before the value, and the op
    writing in place reads a value overlapping it first (``Op.inplace_overlap``: ``x[1:] =
    x[:-1]`` into the caller's x, which copied all of x, then copied it back)."""
    overlap = getattr(item.op, "inplace_overlap", None)
    return overlap is not None and overlap(item.args) and _only_there(item.args[:-1], given)


def _owned(name: str, allocated: dict, fresh: dict) -> bool:
    """Memory only this call holds: a kernel's buffer, or a new array from an extern."""
    if name not in allocated:
        return False
    return allocated[name] is not None or fresh.get(name, False)
