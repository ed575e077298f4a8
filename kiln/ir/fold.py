"""Constant folding: calls whose inputs are all constants are computed while compiling.

Index arrays built from sizes the guards fix (``np.repeat(np.arange(1, rows), d)`` as the
positions of an ``np.insert``, im2col's gather indices, a DFT matrix from
``np.arange(N)``) are the same on every call of an entry; NumPy recomputes them each
call, and so did kiln (an ``np.insert`` at such positions placed its element numbers at
run time, 25 us). Folded, they are constant arrays of the graph: a gather from a
constant index fuses into the kernel that reads it.

A call is computable when its op is pure (no write, no random draw, no uninitialized
memory, no value-dependent size, no loop body), its params name no input size, every
input is a constant or computable, its result is an array of at most ``FOLD_MAX_BYTES``,
and NumPy computes it without an error or a warning (those stay in the graph, so every
call raises or warns as NumPy does). A value that reaches the graph's output or a write
(itself or through a view) is not: the caller would get, or the graph would change, one
array shared by every call. The value is the op's own implementation, what the graph run
by NumPy computes, with the memory layout NumPy gives it.

A computable value that a run-time call reads becomes a constant when it is worth
keeping: computing it took an extern, a reduction or a scan, or an extern call reads
it. An elementwise chain of creations, views, fills and arithmetic that only kernels
read stays in the graph: a kernel recomputes it per element as cheaply as it would read
it (``a = np.ones(x.shape); a[0, :] = 0; a * x`` is one kernel, no constant).
``graph.folded`` keeps a record of each call folded away: the function run as Python
still computes it (the cost model counts it, and a large one means compiling pays).
"""
from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..ops import Category, TensorMeta
from .graph import Graph, Node, map_nodes
from .passes import _checked, _reach, has_side_effects

# A folded array is kept by every build of its graph (and in the on-disk cache): larger
# values are computed at run time, as before.
FOLD_MAX_BYTES = 4 << 20


def _foldable(node: Node) -> bool:
    op = node.target
    val = node.meta.get("val")
    if has_side_effects(node) or op.state is not None or op.name.startswith("empty") \
            or op.data_dependent or op.unbacked is not None or op.call_param is not None \
            or "size_refs" in node.meta:
        return False
    if not isinstance(val, TensorMeta) or not all(isinstance(d, int) for d in val.shape):
        return False
    if int(np.prod(val.shape, dtype=np.int64)) * val.dtype.itemsize > FOLD_MAX_BYTES:
        return False
    return _private(node)


def _private(node: Node) -> bool:
    """No array that may share ``node``'s memory (itself, a view, an alias, an extern's
    result that is not always fresh) reaches the graph's output or an op that writes."""
    return not any(_reach(node, _may_alias))


def _may_alias(op: Any) -> bool:
    """NumPy may return (a view of) the input: views and aliasing ops (``Op.may_alias``),
    externs not always fresh. (Joins, gathers and creations copy.)"""
    return op.may_alias or op.category == Category.EXTERN and not op.fresh_result


def _value(node: Node, values: dict) -> Any:
    """The call's result on its constant inputs, or None (it raised or warned)."""
    args = map_nodes(node.args, lambda n: values[n] if n in values else n.target)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            with np.errstate(all="raise"):
                value = node.target.impl(*args, **node.kwargs)
        except Exception:
            return None
    val = node.meta["val"]
    if type(value) is not np.ndarray or value.shape != tuple(val.shape) or value.dtype != val.dtype:
        return None
    return value


# Ops a kernel cannot recompute element by element as it reads them: a value computed by
# one of these (or read by an extern) is worth keeping; an elementwise chain of creations,
# views and arithmetic feeding kernels is recomputed in them (as cheap as reading it).
_WORK = (Category.EXTERN, Category.REDUCTION, Category.SCAN)


def _computable(graph: Graph) -> dict:
    """node -> value of every call computable now (module doc), in graph order."""
    values: dict = {}
    for node in graph.nodes:
        if node.kind != "call" or not all(n.kind == "constant" or n in values for n in node.inputs) \
                or not _foldable(node):
            continue
        value = _value(node, values)
        if value is not None:
            values[node] = value
    return values


def _worth_keeping(node: Node, values: dict) -> bool:
    """Does computing ``node`` (a value some run-time call reads) take work a kernel
    cannot redo as it reads it, or does an extern call read it?"""
    todo, seen = [node], set()
    while todo:       # what computes it
        n = todo.pop()
        if id(n) in seen or n not in values:
            continue
        seen.add(id(n))
        if n.target.category in _WORK:
            return True
        todo.extend(n.inputs)
    todo, seen = [node], set()
    while todo:       # what reads it (through views)
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        for user in n.users:
            if user.kind != "call" or user in values:
                continue
            if user.target.category == Category.EXTERN and user.target.inplace_impl is None:
                return True   # (one that may write over its input would copy a constant)
            if user.target.category == Category.VIEW:
                todo.append(user)
    return False


def fold_constants(graph: Graph) -> Graph:
    """Replace by constants the computable calls (module doc) whose value a run-time call
    reads and is worth keeping; the calls only they needed go."""
    values = _computable(graph)
    keep = [n for n in values if any(u not in values for u in n.users) and _worth_keeping(n, values)]
    for node in keep:
        const = graph.constant(values[node], node.name, before=node)
        node.replace_all_uses_with(const)
    for node in reversed(list(graph.nodes)):
        if node in values and not node.users:
            graph.folded.append(SimpleNamespace(
                kind="call", name=node.name, target=node.target, op=node.target, args=node.args,
                kwargs=node.kwargs, val=node.val, inputs=node.inputs, users=(), meta=dict(node.meta)))
            graph.erase(node)
    return _checked(graph)
