"""Kernel plans: what is decided about a scheduled kernel before any text is printed.

A renderer turns each scheduled kernel into a plan once (``Renderer.plan_kernel``) and
prints that plan once (``Renderer.render_kernel``); the wrapper's memory plan
(kiln/lowering/memory.py) is the same idea for allocation. Plans are plain data: the C++
one (``CppKernelPlan``) holds the collapsed loop nests, blocking, per-row arrays,
accumulator dtypes, thread decision and cost; the Triton one (``TritonKernelPlan``) the
tile shape, persistent or looped rows, index width and launch configuration.

The pieces any renderer can use live here. They read kernels through a recording ops
handler (kiln/lowering/handler.py), never through generated text:

- :func:`kernel_accesses` — every memory index a kernel touches (stores and loads of
  buffers that live in memory, and loop indices used as values);
- :func:`loop_order` — the nesting order of an elementwise kernel's loops (memory order,
  as NumPy's iterator walks it, where operands are transposed or Fortran-ordered);
- :class:`Collapse` — groups of adjacent loop variables that every access lets run as
  one flat loop (a contiguous 2-d array is one loop of ``s0*s1``);
- :func:`kernel_cost` — statements per element, each scalar function priced by the
  renderer's table;
- :func:`index_cuts` — where a kernel's selects test a loop index against constants
  (the C++ printer splits those loops into segments).

    >>> import numpy as np
    >>> from kiln.lowering.loop_ir import Affine
    >>> c = Collapse([("x0", 4), ("x1", 8)], [Affine(0, {"x0": 8, "x1": 1})])
    >>> c.loops()
    [('x0', '32')]
    >>> Collapse([("x0", 4), ("x1", 8)], [Affine(0, {"x0": 1, "x1": 4})]).loops()
    [('x0', '4'), ('x1', '8')]
"""
from __future__ import annotations

import functools
import os
from typing import Any, Callable

from .loop_ir import Affine
from .scheduler import Kernel, record, write_index
from .sizes import magnitude, product, render as render_size, settled


def kernel_accesses(kernel: Kernel, local: dict, loads_only: bool = False) -> list[Affine]:
    """Every index at which ``kernel`` touches memory: the stores of its nodes that are
    not kernel-local (``local``: kiln/lowering/scheduler.kernel_locals, as the renderer
    keeps them), the loads of buffers that are not kernel-local, and the loop indices
    its bodies use as values (a renderer keeps those loops its own); with ``loads_only``,
    the loads alone."""
    frame = kernel.frame
    out: list[Affine] = []
    for node, role in kernel.members:
        rec = record(node, role, frame)
        out += [index for buf, index in rec.loads if local.get(buf.name) is None]
        if loads_only:
            continue
        out += list(getattr(rec, "indices", ()))
        if local.get(node.buf.name) is None:
            out.append(write_index(node, role, frame))
    return out


class Collapse:
    """Groups of adjacent loop variables that every access lets run as one flat loop."""

    def __init__(self, vars_: list[tuple[str, Any]], accesses: list[Affine]) -> None:
        self.groups: list[list[tuple[str, Any]]] = []
        for v, n in vars_:
            if self.groups and all(a.terms.get(self.groups[-1][-1][0], 0) == a.terms.get(v, 0) * n
                                   for a in accesses):
                self.groups[-1].append((v, n))
            else:
                self.groups.append([(v, n)])
        self.of = {v: g for g in self.groups for v, _ in g}

    def loops(self) -> list[tuple[str, str]]:
        """(variable, trip count) per collapsed loop: the product of its dims' sizes,
        folded (a number, or a polynomial in the size symbols)."""
        return [(g[0][0], render_size(product(n for _, n in g))) for g in self.groups]

    def rename(self, terms: dict[str, int]) -> list[tuple[str, int]]:
        """An index's terms over the collapsed variables (each group's first one)."""
        out, done = [], set()
        for v, c in sorted(terms.items()):
            g = self.of.get(v)
            if g is None:
                out.append((v, c))
            elif g[0][0] not in done:
                done.add(g[0][0])
                coef = terms.get(g[-1][0], 0)
                if coef:
                    out.append((g[0][0], coef))
        return out


def loop_order(vars_: list[tuple[str, Any]], accesses: list[Affine],
               memory: bool = False) -> list[tuple[str, Any]]:
    """The loop variables of an elementwise kernel in the order its loops should nest.

    NumPy's iterator walks memory in order (``order='K'``): ``np.exp(a.T)`` reads ``a``
    and writes its (transposed) result contiguously. Nested in the frame's C order the
    same kernel walks both with the stride of a row (4x NumPy's time on 1000 x 1000).
    Variables are sorted by the sum of their strides over the accesses, largest
    outermost, but only when that gives the innermost loop more unit-stride accesses
    than C order does (so C-ordered code never changes); with symbolic strides, C order.
    ``memory``: sorted whatever the innermost loop gets (a reduction's reduced loops, whose
    order is the order NumPy adds in: cpp_plan.py).

    >>> loop_order([("x0", 4), ("x1", 8)], [Affine(0, {"x0": 1, "x1": 4})])
    [('x1', 8), ('x0', 4)]
    >>> loop_order([("x0", 4), ("x1", 8)], [Affine(0, {"x0": 8, "x1": 1})])
    [('x0', 4), ('x1', 8)]
    """
    if len(vars_) < 2:
        return vars_
    coefs = [[a.terms.get(v, 0) for v, _ in vars_] for a in accesses]
    if coefs and memory and not all(isinstance(c, int) for row in coefs for c in row):
        return _settled_order(vars_, coefs)
    if not coefs or not all(isinstance(c, int) for row in coefs for c in row):
        return vars_
    weight = [sum(abs(row[k]) for row in coefs) for k in range(len(vars_))]
    order = sorted(range(len(vars_)), key=lambda k: -weight[k])   # stable: ties keep C order

    def unit(k: int) -> int:
        return sum(1 for row in coefs if abs(row[k]) == 1)

    if not memory and unit(order[-1]) <= unit(len(vars_) - 1):
        return vars_
    return [vars_[k] for k in order]


def _settled_order(vars_: list, coefs: list) -> list:
    """:func:`loop_order`'s ``memory`` order over symbolic strides (dynamic sizes, each at
    least 2: ``x.T.prod()``'s loads step 1 along one loop, ``s1`` along the other, and
    NumPy multiplies in memory order): sorted where the size bound settles every
    comparison without a guard, else C order."""
    class Unsettled(Exception):
        pass

    def size(c: Any) -> Any:
        m = magnitude(c)
        if m is None:
            raise Unsettled
        return m

    def heavier(a: int, b: int) -> int:
        diff = weight[a] - weight[b]
        if isinstance(diff, int) and diff == 0:
            return 0
        answer = settled(diff, "gt")
        if answer is None or not answer and settled(-diff, "gt") is not True:
            raise Unsettled
        return -1 if answer else 1
    try:
        weight = [sum((size(row[k]) for row in coefs), 0) for k in range(len(vars_))]
        order = sorted(range(len(vars_)), key=functools.cmp_to_key(heavier))
    except Unsettled:
        return vars_
    return [vars_[k] for k in order]


def kernel_cost(kernel: Kernel, call_cost: Callable[[str, Any], int]) -> int:
    """Statements per element: what decides when threads (or bigger blocks) pay off.
    ``call_cost(fn, dtype)`` is the renderer's price of one scalar function (a libm call
    counts cpp_ops.LIBM_CALL_COST in C++). Counted on what the kernel's nodes do (a
    recording ops handler)."""
    total = 0
    for node, role in kernel.members:
        rec = record(node, role, kernel.frame)
        total += rec.statements + sum(call_cost(fn, dt) - 1 for fn, dt in rec.calls)
        if node.kind == "reduction":
            total += 4 if node.combine in ("max", "min") and node.acc_dtype.kind == "f" else 3
        elif node.kind == "scan":
            total += 5   # the store, and a chain: each element waits for the previous sum
        else:
            total += 1  # the store
    return max(1, total)


def index_cuts(kernel: Kernel, outer: Collapse, short: int, most: int) -> dict[str, list[int]]:
    """Per outer loop variable of a pointwise kernel, the constants its index is compared
    with (where a select changes arms: region writes, borders, joins), as segment edges
    inside the loop's range (fewer than ``most``). Loops of at most ``short`` iterations
    (unrolled anyway) and variables merged into a collapsed loop are not split."""
    frame = kernel.frame
    found: dict[str, set] = {}
    for node, role in kernel.members:
        for v, fn, c in record(node, role, frame).index_tests:
            edges = (c, c + 1) if fn in ("equal", "not_equal") else \
                (c + 1,) if fn in ("less_equal", "greater") else (c,)
            found.setdefault(v, set()).update(edges)
    sizes = dict(frame.outer_vars())
    cuts = {}
    for v, edges in found.items():
        n = sizes.get(v)
        if not isinstance(n, int) or n <= short or len(outer.of.get(v, ())) != 1:
            continue
        inside = sorted(e for e in edges if 0 < e < n)
        if inside and len(inside) < most:
            cuts[v] = inside
    return cuts


def describe(kernel: Kernel) -> tuple[list[str], list[str]]:
    """The ops a kernel computes and the user's source lines they came from (for the
    comments heading every kernel)."""
    sources, ops = [], []
    for n in kernel.nodes:
        for origin in n.origins:
            src = getattr(origin, "meta", {}).get("source")
            if src:
                # A trailing backslash would splice the next line into a C++ comment.
                text = f"{os.path.basename(src[0])}:{src[1]}  {src[2].strip().rstrip(chr(92)).rstrip()}"
                if text not in sources:
                    sources.append(text)
            if getattr(origin, "kind", None) == "call":
                label = origin.op.name if origin.name.startswith(origin.op.name) else \
                    f"{origin.name} ({origin.op.name})"
                if label not in ops:
                    ops.append(label)
    return ops, sources
