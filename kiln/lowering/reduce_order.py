"""The order a reduction adds in, as NumPy's iterator takes it (kiln/lowering/cpp.py's plan).

NumPy walks an operation's dims by stride, largest outermost, and hands its inner loop the
innermost run: a reduction's result is bit for bit NumPy's when kiln's loops add in that
order. ``kept_axis_inner`` decides whether a kept dim runs innermost (blocks of points:
rows added one by one), ``numpy_run`` how many reduced loops make one pairwise run.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .cpp_stages import constant_trip
from .loop_ir import BufferValue
from .scheduler import record


def kept_axis_inner(plan: Any, loads: list, accesses: list, vo: str, vi: str) -> bool:
    """Whether the kept loop ``vo`` should run innermost (blocks of points) rather than the
    reduced loop ``vi``: NumPy's order. Its iterator puts innermost the axis along which the
    operands step least, an operand that steps along only one of the two having no say (the
    reduction's output, a broadcast row). So the loads that step along both decide: a
    column sum reads rows (``vo`` unit-stride), a row sum of ``x[:, ::2]`` reads each row
    with stride 2, pairwise along the row as NumPy adds it, not column by column across
    rows 8 KB apart. Without such loads (or with symbolic strides): blocks when some
    access is unit-stride along ``vo`` and none along ``vi``."""
    both = [(c[vo], c[vi]) for c in (dict(plan.rename(a.terms)) for a in loads)
            if c.get(vo) and c.get(vi)]
    if both and all(isinstance(s, int) for pair in both for s in pair):   # (symbolic: no say)
        return all(abs(o) < abs(i) for o, i in both)
    coefs = [dict(plan.rename(a.terms)) for a in accesses]
    return any(c.get(vo) == 1 for c in coefs) and not any(c.get(vi) == 1 for c in coefs)


# The most terms NumPy's reduction buffers at a time (its iterator's default buffersize)
NUMPY_BUFFER = 8192


def numpy_run(plan: Any, node: Any, local: dict) -> int | None:
    """How many of the innermost inner (reduced) loops NumPy adds as one pairwise run, the
    others around it in order (``out += pairwise(run)`` for each), or None where kiln does
    not know NumPy's order. NumPy's iterator walks dims by stride, largest first; its run
    is the innermost dims that are all reduced (``x.sum((0, 2))`` of a C-ordered x: the
    last dim, once per i and j), one flat run: dims that do not coalesce are copied into
    a buffer first (up to NUMPY_BUFFER terms; past it kiln does not follow). A computed
    term (``((x - m) ** 2).sum(...)``) is a temporary NumPy lays out contiguously in its
    operands' order, so there the run is never buffered. Kiln's loops must be in that
    order (each steps further than the next in every load that steps along both),
    forward, with constant strides."""
    loads = [idx for buf, idx in record(node, "reduce", plan.kernel.frame).loads
             if local.get(buf.name) is None]
    names = [v for v, _ in plan.inner_loops]
    kept = [v for v, _ in plan.outer_loops]
    full = [c for c in (dict(plan.rename(a.terms)) for a in loads) if all(c.get(v) for v in names)]
    if not full or not all(isinstance(s, int) and s > 0 for c in full for s in c.values() if s):
        return None
    for c in full:
        steps = [c[v] for v in names]
        if any(s <= t for s, t in zip(steps, steps[1:])):
            return None
        # (every full load must agree where the kept dims fall among the reduced ones)
        if any(c.get(k) and (c[k] > c[names[-1]]) != (full[0].get(k, 0) > full[0][names[-1]])
               for k in kept):
            return None
    c = full[0]
    least_kept = min((abs(c[k]) for k in kept if c.get(k)), default=None)
    k = 0
    while k < len(names) and (least_kept is None or c[names[-1 - k]] < least_kept):
        k += 1
    if k <= 1:
        return k or None
    if isinstance(node.src, BufferValue):   # NumPy reduces this array itself: buffered
        sizes = [constant_trip(n) for _, n in plan.inner_loops[-k:]]
        if None in sizes or np.prod(sizes) > NUMPY_BUFFER:
            return None
    return k
