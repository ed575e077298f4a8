"""Writes into a window of the caller's array, stored there by the kernel that computes them.

``u[1:] += x`` on an argument is, functionally, ``index_put(u, (slice(1, None),), v)``
with ``v = u[1:] + x`` computed by a kernel, and the graph's new ``u`` donated to the
caller's array (``Graph.donated``). Lowered as it stands, the kernel writes ``v`` to a
temporary and the wrapper copies it into ``u[1:]``: two passes and a buffer as big as the
window, where NumPy's in-place add makes one (0.46x NumPy on a million elements).

When the kernel reads ``u`` only at the very elements of the window it writes, each
element is read before it is overwritten, in the same iteration; so ``v``'s stores can
go straight to ``u``'s memory and the copy disappears. ``v``'s buffer takes the window's
layout in ``u`` (strides and offset, in elements) and is written over ``u`` in place
(kiln/lowering/inplace.py: one pointer for both); the ``index_put`` step is dropped (or,
when later steps read the result, printed as ``u`` itself) and the graph's output is
``u``, which aot's epilogue then leaves alone.

A window write qualifies when

- the step is ``index_put(u, index, v)`` whose result is the graph's output donated to
  ``u``, an argument array (kind ``input``): the final value of ``u``, so nothing writes
  ``u``'s memory after it. Later steps may read that result (``u[1:-1] += dt * v[1:-1]``
  then a stencil of ``u``): the step then stays, printed as the caller's array itself
  (``buf1 = u``), which needs the result laid out as ``u`` is;
- ``index`` is integers and slices of positive step with constant bounds inside ``u``,
  and ``v`` is the whole of a buffer of the window's shape and ``u``'s dtype, written
  (``row`` role, not kernel-local) by a kernel at an earlier step and read nowhere else;
- nothing between that kernel and the write, nor after it, reads ``u`` (nor does a graph
  output the wrapper reads from ``u`` at the end: ``a = u[0]; u[0] += 1; return a``
  returns ``u``'s old element, fuzz8's pysem seed 8123), and nothing
  after the kernel may raise (the caller's array is written only when the rest of the
  graph cannot fail; the write itself cannot, on these operands);
- that kernel reads ``u`` only at the window's element it stores, before the store
  (in the same loop, by the storing node or one before it, or in an earlier loop).
"""
from __future__ import annotations

from typing import Any

from ..ir.passes import last_uses
from .inplace import reads
from .loop_ir import Buffer, BufferValue, linear
from .nodes import ExternNode, iter_values
from .scheduler import Kernel, node_loads


def write_windows(items: list, low: Any, local: dict) -> tuple[list, dict[str, Buffer]]:
    """The schedule without the window writes a kernel now makes, and ``{v: u}``: the
    kernel outputs stored in place into a window of the caller's array ``u``."""
    donated = low.donated()
    renderer = getattr(low, "renderer", None)
    if not donated or low.sizes or (renderer is not None and not getattr(renderer, "computed_indices", False)):
        return items, {}
    steps_reads = [reads(item) for item in items]
    last = last_uses(steps_reads, [v.buf.name for v in iter_values(tuple(low.outputs)) if isinstance(v, BufferValue)])
    raising = [step for step, item in enumerate(items) if isinstance(item, ExternNode) and item.may_raise()]
    made: dict[str, int] = {}
    for step, item in enumerate(items):
        if isinstance(item, Kernel):
            for node in item.nodes:
                made.setdefault(node.buf.name, step)
    windows: dict[str, Buffer] = {}
    dropped: set[int] = set()
    for t, item in enumerate(items):
        if not (isinstance(item, ExternNode) and item.op.name == "index_put"):
            continue
        found = _window_write(items, t, item, low, donated, local, steps_reads, last, raising, made)
        if found is None:
            continue
        out_k, u, v, strides, offset, read_on = found
        v.strides, v.offset, v.window_of = strides, offset, u.name
        windows[v.name] = u
        if read_on:
            item.window_of = BufferValue.whole(u)   # read on: the wrapper names u so
        else:
            low.outputs[out_k] = BufferValue.whole(u)
            dropped.add(t)
    return [item for t, item in enumerate(items) if t not in dropped], windows


def _window_write(items: list, t: int, item: ExternNode, low: Any, donated: dict, local: dict,
                  steps_reads: list, last: dict, raising: list, made: dict) -> tuple | None:
    base, index, value = (tuple(item.args) + (None, None, None))[:3]
    if not (isinstance(base, BufferValue) and base.is_whole() and base.buf.kind == "input"
            and isinstance(value, BufferValue) and value.is_whole() and value.buf.kind == "computed"):
        return None
    u, v = base.buf, value.buf
    result = getattr(item.out, "buf", None)
    outs = [k for k, o in enumerate(low.outputs) if isinstance(o, BufferValue) and o.buf is result]
    if len(outs) != 1 or not low.outputs[outs[0]].is_whole() or donated.get(outs[0]) is None:
        return None
    k = outs[0]
    i = donated[k]
    if i >= len(low.inputs) or low.inputs[i][1] is not u:
        return None
    read_on = any(result.name in r for r in steps_reads[t + 1:])
    if read_on and (result.strides != u.strides or result.offset != 0):
        return None   # read on as the caller's array: laid out as it
    window = _window(u, index)
    if window is None or v.dtype != u.dtype or v.shape != window[0] or local.get(v.name) is not None:
        return None
    s = made.get(v.name)
    kernel = items[s] if s is not None else None
    if not isinstance(kernel, Kernel) or s >= t or last.get(v.name) != t:
        return None
    if any(u.name in r for r in steps_reads[s + 1:t] + steps_reads[t + 1:]) or any(r > s and r != t for r in raising):
        return None
    if any(isinstance(o, BufferValue) and o.buf is u for o in low.outputs):
        return None   # an output the wrapper reads from u after the kernels: u's old value (a = u[0]; u[0] += 1)
    _, strides, offset = window
    return (k, u, v, strides, offset, read_on) if _reads_only_where_written(kernel, u, v, strides, offset) \
        else None


def _window(u: Buffer, index: Any) -> tuple | None:
    """(shape, strides, offset) of ``u[index]`` in ``u``'s elements, or None when the index
    is not constant integers and slices of positive step (or an integer is out of range:
    NumPy's own write raises)."""
    entries = index if isinstance(index, tuple) else (index,)
    if len(entries) > len(u.shape) or not all(isinstance(d, int) for d in u.shape) \
            or not all(isinstance(s, int) for s in u.strides) or u.offset != 0:
        return None
    shape, strides, offset = [], [], 0
    for d, n in enumerate(u.shape):
        e = entries[d] if d < len(entries) else slice(None)
        if type(e) is int:
            if not -n <= e < n:
                return None
            offset += (e % n) * u.strides[d]
        elif isinstance(e, slice) and all(b is None or type(b) is int for b in (e.start, e.stop, e.step)):
            start, stop, step = e.indices(n)
            if step <= 0:
                return None
            shape.append(len(range(start, stop, step)))
            strides.append(step * u.strides[d])
            offset += start * u.strides[d]
        else:
            return None
    return tuple(shape), tuple(strides), offset


def _reads_only_where_written(kernel: Kernel, u: Buffer, v: Buffer, strides: tuple, offset: int) -> bool:
    """Does ``kernel`` read ``u`` only at the element of the window its node for ``v``
    stores, never after that store, and ``v`` not at all?"""
    where = None
    for s, (_, members) in enumerate(kernel.stages):
        for pos, (node, role) in enumerate(members):
            if node.buf is v:
                if role != "row" or where is not None:
                    return False
                where = (s, pos, linear(offset, strides, kernel.frame.dim_index()))
    if where is None:
        return False
    ws, wpos, w = where
    for s, (_, members) in enumerate(kernel.stages):
        for pos, (node, role) in enumerate(members):
            for buf, index in node_loads(node, role, kernel.frame):
                if buf is v:
                    return False
                if buf is u and (index != w or s > ws or (s == ws and pos > wpos)):
                    return False
    return True
