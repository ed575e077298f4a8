"""Loops that write the caller's arrays in place (donation, as aot's epilogue allows).

A functional graph gives a loop copies of the arrays it writes and copies the final value
back into the caller's array: ``copy_into(u, loop_item(loop(..., carried=(u,)), 0))``,
which costs two passes over the array per call (Gauss–Seidel on 100x100: half the call).
Where the graph donates that output to ``u`` (``Graph.donated``: the caller copies it
into ``u`` unless it is ``u`` already), :func:`donate_to_loops` hands ``u`` itself to the
loop (``LoopBody.donate``) and returns the loop's value as the output. At run time the
loop writes into ``u`` only when its compiled fast variant cannot fail once started
(kiln/ops/loops.py; otherwise it copies as before), so ``u`` holds either its old value
or the loop's final one, never a partial one. The rewrite requires that

- nothing but the loop and the final ``copy_into`` reads ``u`` (later reads of the old
  value would see the new one), and the loop carries it once and not as an operand;
- ``copy_into`` copies the whole value unchanged (same shape and dtype, ``where=True``),
  and besides the output only ops reading its value use it (they read the loop's);
- nothing after the loop may raise: aot replays the whole graph op by op on an error,
  which must find the caller's arrays as they were.

A graph loop node (kiln/ops/graph_loops.py, ``GraphLoopBody.donate``) is given ``u`` the
same way; it skips only its copy of ``u`` in, and only where its compiled body is the
functional form, which reads its inputs and writes none (small arrays: each trip returns
new ones), so ``u`` keeps its old value until the caller copies the result in.
"""
from __future__ import annotations

from typing import Any

from ..ops import Category
from ..ops.graph_loops import GraphLoopBody
from ..ops.loops import LoopBody


def donate_to_loops(graph: Any) -> int:
    """Rewrite ``graph`` in place as the module doc says; returns the loops given an array."""
    donated = getattr(graph, "donated", {})
    if not donated:
        return 0
    phs = graph.placeholders
    out_node = graph.output_node
    outs = list(out_node.args[0])
    order = {n: k for k, n in enumerate(graph.nodes)}
    count = 0
    for k, i in sorted(donated.items()):
        if k >= len(outs) or i >= len(phs):
            continue
        match = _match(outs[k], phs[i], outs, order, graph)
        if match is None:
            continue
        copy, item, loop, j = match
        body: LoopBody | GraphLoopBody = loop.kwargs["body"]
        loop.kwargs = {**loop.kwargs, "body": body.donating(j)}
        copy.replace_all_uses_with(item)   # the output, and reads of u's new value
        outs = list(out_node.args[0])
        graph.erase(copy)
        count += 1
    return count


def _reads_value(node: Any) -> bool:
    """Does ``node`` read only the value of its inputs (``w.sum()`` after the loop), so it
    may read the loop's result instead of ``u`` once written: no view of it (nor ``u``
    itself, ``np.ascontiguousarray``), no write."""
    op = node.target if node.kind == "call" else None
    return op is not None and op.category != Category.VIEW and not op.aliases and not op.mutates \
        and op.itself_when is None


def _match(copy: Any, u: Any, outs: list, order: dict, graph: Any) -> tuple | None:
    """``(copy_into node, loop_item node, loop node, carried position)`` or None."""
    if getattr(copy, "kind", None) != "call" or copy.target.name != "copy_into":
        return None
    dst, item, where = copy.args
    if where is not True or graph.output_node not in copy.users \
            or sum(1 for v in outs if v is copy) != 1 or not all(
                _reads_value(n) for n in copy.users if n is not graph.output_node):
        return None
    if getattr(item, "kind", None) != "call" or item.target.name != "loop_item":
        return None
    loop = item.args[0]
    body = loop.kwargs.get("body") if getattr(loop, "kind", None) == "call" else None
    if not (isinstance(body, LoopBody) and loop.target.name == "loop"
            or isinstance(body, GraphLoopBody) and loop.target.name in ("graph_loop", "graph_while")):
        return None
    j = item.kwargs["index"]
    carried, operands = loop.args[-2:]
    written = _writes_of(dst, u)
    if j >= len(carried) or carried[j] is not dst or isinstance(body, LoopBody) and j not in body.arrays \
            or written is None or written and not isinstance(body, LoopBody) \
            or sum(1 for v in carried if v is dst) != 1 or any(v is dst or v is u for v in operands):
        # (a graph loop skips only its copy in, and reads what it is given: not written)
        return None
    if set(dst.users) != {loop, copy}:
        return None
    uv, iv = u.val, item.val
    if uv is None or iv is None or tuple(uv.shape) != tuple(iv.shape) or uv.dtype != iv.dtype:
        return None
    after = graph.nodes[order[loop] + 1:]
    if any(n.kind == "call" and n is not copy and n.target.raises(n.args, n.kwargs) for n in after):
        return None
    return copy, item, loop, j


def _writes_of(value: Any, u: Any) -> list | None:
    """The writes into ``u`` that make ``value``, the array a loop carries and the copy
    back writes into (``grid[4, 5] = -1`` before ``while True: grid[y, x] += 1 ...``:
    the functional ``index_put(u, (4, 5), -1)``), last first: [] when ``value`` is ``u``
    itself, None when it is anything else. Each write is a functional scatter of ``u``'s
    shape and dtype whose result only the next write reads (the last: the loop and the
    copy back), of indices and a value that do not read ``u``. The donated loop takes the
    last one's array: the caller's own where the memory plan writes the scatters into it
    in place (kiln/lowering/memory.py: ``u`` is read by them alone once the copy back is
    gone), a fresh one where not; either way the copy back goes with the loop's."""
    chain = []
    while value is not u:
        base = _scatter_base(value)
        if base is None or set(base.users) != {value} \
                or any(_reads(a, u) for a in (*value.args[1:], *value.kwargs.values())):
            return None
        chain.append(value)
        value = base
    return chain


def scattered_from(value: Any) -> Any:
    """The array a chain of functional element writes (``_SCATTERS``, each of its
    operand's shape and dtype) starts from, ``value`` itself where it is no such write:
    ``total[k] += s`` gives ``index_put(total, (k,), ...)``, the new value of ``total``."""
    while (base := _scatter_base(value)) is not None:
        value = base
    return value


def _scatter_base(value: Any) -> Any:
    """``value``'s first operand where ``value`` is a functional write into it
    (``_SCATTERS``) of that operand's shape and dtype, else None."""
    if getattr(value, "kind", None) != "call" or value.target.name not in _SCATTERS or not value.args:
        return None
    base = value.args[0]
    if getattr(base, "val", None) is None or value.val is None \
            or tuple(base.val.shape) != tuple(value.val.shape) or base.val.dtype != value.val.dtype:
        return None
    return base


# Functional writes of an element or a region of their first operand (``x[i] = v``,
# ``x[i] += v``), whose result is that operand's new value.
_SCATTERS = frozenset({"index_put", "index_add"})


def _reads(arg: Any, u: Any) -> bool:
    """Does the argument ``arg`` (a node, a constant, an index tuple) read ``u``?"""
    if arg is u:
        return True
    if isinstance(arg, (tuple, list)):
        return any(_reads(a, u) for a in arg)
    if isinstance(arg, slice):
        return any(_reads(a, u) for a in (arg.start, arg.stop, arg.step))
    return False
