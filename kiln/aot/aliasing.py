"""Arguments that share memory, for aot's runtime (runtime.py): a graph that writes its
arguments, called with the same array twice, runs a variant with the two inputs merged
(:func:`dedupe`); arrays that overlap otherwise, or a writeable one whose own elements
overlap, make the call run as Python (:class:`InputsOverlap`), which is exactly NumPy."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import array_kinds
from ..ir import Graph, Node
from ..ops.layout import writes_over_itself
from .joint import copy_nodes


class InputsOverlap(Exception):
    """A call of a graph that writes its arguments, with arrays among them that overlap in
    memory (``f(U, U[1:-1, 1:-1])``), where the caller runs the function as Python instead
    (``AOTFunction.overlap_runs_python``); raised before the graph ran anything."""


def input_aliasing(args: tuple, arrays: list) -> Any:
    """None when no two array inputs share memory; 'overlap' when distinct ones do (a Tensor
    and its detach() too: they differ in requires_grad) or a writeable one's elements do
    (``writes_over_itself``: copied back whole, aliased elements would get the last
    copy's value); else (the same object passed more than once) a tuple giving, for each input, the
    index of its first occurrence."""
    idx = [i for i, a in enumerate(arrays) if isinstance(a, array_kinds.ARRAY_TYPES)]
    if not idx:
        return None
    rep = list(range(len(arrays)))
    for pos, i in enumerate(idx):
        for j in idx[:pos]:
            if args[i] is args[j]:
                rep[i] = rep[j]
                break
    distinct = tuple(arrays[i] for i in idx if rep[i] == i)
    if not _OVERLAP:
        _OVERLAP.append(overlap_helper())
    over = _OVERLAP[0](distinct) if _OVERLAP[0] is not None else None
    if over is None:   # not all np.ndarrays, or no C helper: NumPy's own check per pair
        over = any(map(writes_over_itself, distinct)) or \
            any(np.may_share_memory(a, b) for k, a in enumerate(distinct) for b in distinct[:k])
    if over:
        return "overlap"
    return None if rep == list(range(len(arrays))) else tuple(rep)


# ``() -> any_overlap | None``: the C bounds check over a tuple of arrays
# (guards/fastcheck.c; ~50 ns where np.may_share_memory costs ~1 us a pair). kiln/api.py,
# which knows the stages, sets it; it is asked once, on the first call that needs it.
overlap_helper: Callable[[], Any] = lambda: None
_OVERLAP: list = []

def dedupe(graph: Graph, rep: tuple) -> Graph:
    """The graph with inputs that are the same array merged into one placeholder."""
    out = Graph(graph.name)
    env: dict[Node, Any] = {}
    placeholders = graph.placeholders
    for i, p in enumerate(placeholders):
        if rep[i] == i:
            env[p] = out.placeholder(p.target, p.val, **{k: v for k, v in p.meta.items() if k != "val"})
    for i, p in enumerate(placeholders):
        env[p] = env[placeholders[rep[i]]]
    out.output(tuple(copy_nodes(graph, out, env)))
    return out
