"""Float sums of a Triton kernel added in NumPy's order (kiln/lowering/triton.py renders
them): ``tl.reduce`` adds a tile as a tree, so a float32 row sum differed from NumPy's in
the last bits (``x.sum()`` of ``[1e8, 1, -1e8, 1e-3] * 50``: 50.05, NumPy 0.0).

NumPy's ``np.add.reduce`` starts from 0.0 and adds what its iterator hands the inner loop:

- a run along the reduced axis (the axis its operands step along least): pairwise
  (``pairwise_sum`` in numpy/_core/src/umath/loops_utils.h.src, as kiln_pairwise in the
  C++ prelude): a run of over 128 terms splits at n/2 rounded down to a multiple of 8, the
  left half's sum plus the right half's; a leaf of 8..128 terms is added into 8 partial
  sums ``r[j] += a[i + j]`` combined ``((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))``, then its
  last ``n % 8`` terms in order; under 8 terms, in order;
- otherwise (a kept axis steps less: ``x.sum(0)`` of a C-ordered x) one term at a time
  into each output element: in order along the reduced axis.

The leaves depend on the row length only, so for a row of a static length the renderer
lays them out at render time: one loop over a tile of every leaf's 8 partial sums (the
term recomputed at each position, as a looped reduction loads it), the 8 combined with
``tl.split`` in NumPy's order, a loop over the leaves' last ``n % 8`` terms, then the
leaves' tree. Rows of a symbolic length or longer than a persistent tile keep the tree
order (docs/triton.md).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .reduce_order import loop_axis, smaller_stride
from .scheduler import record

# NumPy's pairwise leaves: at most this many terms (PW_BLOCKSIZE), 8 partial sums each
LEAF = 128
LANES = 8


def pairwise_leaves(n: int) -> tuple[list[tuple[int, int]], Any]:
    """NumPy's pairwise leaves of a run of ``n`` terms, (start, length) in order, and the
    tree adding them: a leaf's position, or a (left, right) pair."""
    leaves: list[tuple[int, int]] = []

    def walk(lo: int, m: int) -> Any:
        if m <= LEAF:
            leaves.append((lo, m))
            return len(leaves) - 1
        half = m // 2
        half -= half % 8
        return walk(lo, half), walk(lo + half, m - half)

    return leaves, walk(0, n)


def tree_text(tree: Any, names: list[str]) -> str:
    if isinstance(tree, int):
        return names[tree]
    return f"({tree_text(tree[0], names)} + {tree_text(tree[1], names)})"


def numpy_order(kernel: Any, node: Any, inner: list, outer: list, rnumel: Any) -> str | None:
    """"pairwise" or "sequential": the order NumPy adds this float sum's terms in, where the
    renderer can reproduce it (a row of a static length up to a persistent tile, terms
    of one float dtype or cast from int/bool to it, no selection), else None (tree)."""
    out, src = np.dtype(node.buf.dtype), np.dtype(node.src.dtype)
    if node.combine != "sum" or out.name not in ("float32", "float64") or src.kind not in "biuf" \
            or src.kind == "f" and src != out or getattr(node, "select", None) is not None \
            or not isinstance(rnumel, int) or not inner or not feasible(rnumel):
        return None
    acc = np.dtype(node.acc_dtype or out)
    if acc not in (out, np.dtype(np.float64)):
        return None
    rows = {n.buf.name: n for n, role in kernel.members if role == "row"}
    loads, seen, todo = [], set(), [(node, "reduce")]
    while todo:       # memory loads, through the kernel's own row values
        n, role = todo.pop()
        for buf, idx in record(n, role, kernel.frame).loads:
            if buf.name in rows and buf.name not in seen:
                seen.add(buf.name)
                todo.append((rows[buf.name], "row"))
            elif buf.name not in rows:
                loads.append(idx)
    rvars = [v for v, _ in inner]
    kept = {v for v, _ in outer}
    orders = set()
    for idx in loads:
        coef = dict(idx.terms)
        steps = [coef.get(v, 0) for v in rvars]
        if not all(isinstance(c, int) for c in steps):
            return None
        if not any(steps):
            continue
        # several reduced dims: one run only where they coalesce in C order
        inner_stride = steps[-1]
        want = inner_stride
        for (v, n), s in zip(reversed(inner), reversed(steps)):
            if s != want:
                return None
            want = s * n
        # NumPy's iterator puts a kept dim inside the run where it steps less (a symbolic
        # stride: where its bound settles it), or as little and after the run in C order
        # (a sliding window's rows, strides (4, 4): pairwise, as reduce_order's C++ loops)
        inside = []
        for v in kept:
            if coef.get(v):
                if loop_axis(v) > loop_axis(rvars[-1]):
                    run_less = smaller_stride(inner_stride, coef[v])
                    less = None if run_less is None else not run_less
                else:
                    less = smaller_stride(coef[v], inner_stride)
                if less is None:
                    return None
                inside.append(less)
        if not inside:
            continue
        # (several reduced dims coalesced: one run in C order, as NumPy's iterator walks it)
        orders.add("sequential" if any(inside) else "pairwise")
    if len(orders) > 1:
        return None
    return orders.pop() if orders else "pairwise"


def _table(var: str, values: list[int]) -> str:
    """A per-leaf constant as a Triton expression of the leaf number ``var`` (a tensor of
    its shape: the load at it is a block)."""
    if len(set(values)) == 1:
        return f"{var} * 0 + {values[0]}"
    text = "0"
    for i in reversed(range(len(values))):
        text = f"tl.where({var} == {i}, {values[i]}, {text})"
    return text


def _pow2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


# Rows of more leaves than this lay their leaves out in the kernel (descending the split
# rule per leaf slot), and up to 2**MAX_DEPTH leaf slots (rows of about 100K terms): a
# looped kernel's tile of 8 lanes per slot
TABLED_LEAVES = 16
MAX_DEPTH = 10


def depth(tree: Any) -> int:
    return 0 if isinstance(tree, int) else 1 + max(depth(tree[0]), depth(tree[1]))


def feasible(n: int) -> bool:
    """Whether a row of ``n`` terms fits render_sum's tiles (else the tree order)."""
    return n <= LEAF or depth(pairwise_leaves(n)[1]) <= MAX_DEPTH


def _spread(var: str, slots: int, width: int) -> str:
    """A per-slot ``[1, slots]`` tensor repeated for each of a slot's ``width`` lanes."""
    return f"tl.reshape(tl.broadcast_to(tl.reshape({var}, [1, {slots}, 1]), [1, {slots}, {width}]), [1, {slots * width}])"


def _descend(body: Any, tag: str, n: int, levels: int, widen: str) -> None:
    """Leaf slot ``s`` of ``2**levels`` follows the bits of ``s`` down NumPy's split rule:
    ``{tag}_lo``/``{tag}_n`` its leaf, ``{tag}_real`` 0 where an earlier leaf already
    stands for it (a 1 bit below a node that no longer splits)."""
    body.line(f"{tag}_slot = tl.arange(0, {1 << levels})[None, :]{widen}")
    body.line(f"{tag}_lo = {tag}_slot * 0")
    body.line(f"{tag}_n = {tag}_slot * 0 + {n}")
    body.line(f"{tag}_real = {tag}_slot * 0 + 1")
    for d in range(levels):
        body.line(f"{tag}_bit = (({tag}_slot >> {levels - 1 - d}) & 1) == 1")
        body.line(f"{tag}_half = {tag}_n // 2 - ({tag}_n // 2) % 8")
        body.line(f"{tag}_cut = {tag}_n > {LEAF}")
        body.line(f"{tag}_real = tl.where({tag}_bit & ({tag}_n <= {LEAF}), 0, {tag}_real)")
        body.line(f"{tag}_lo = tl.where({tag}_cut & {tag}_bit, {tag}_lo + {tag}_half, {tag}_lo)")
        body.line(f"{tag}_n = tl.where({tag}_cut, tl.where({tag}_bit, {tag}_n - {tag}_half, {tag}_half), {tag}_n)")


def _per_leaf(body: Any, leaf: Any, values: dict) -> None:
    """Per-leaf values: ``name: (constants, expression)``, the constants looked up by the
    leaf number ``leaf`` (its name and definition) where it is given (a tabled row), else
    the expression (of the slots' descent)."""
    if leaf:
        body.line(f"{leaf[0]} = {leaf[1]}")
    for name, (table, expr) in values.items():
        body.line(f"{name} = {_table(leaf[0], table) if leaf else expr}")


def _add_in_order(body: Any, term_at: Any, tag: str, var: str, trips: int, acc: str,
                  lines: list[str], at: str, mask: str) -> None:
    """``for var in range(trips): acc += term(at)`` where ``mask`` holds (term_at: the
    term at positions ``at``, its own names under ``tag``)."""
    body.line(f"for {var} in range(0, {trips}):")
    body.depth += 1
    for line in lines:
        body.line(line)
    v = term_at(tag, at, mask)
    body.line(f"{acc} = tl.where(xmask & {tag}_m, {acc} + {v}, {acc})")
    body.depth -= 1


def render_sum(body: Any, em: Any, tag: str, order: str, n: int, out: np.dtype, widen: str,
               term_at: Any, combine: str, tltype: str) -> str:
    """Emit NumPy's ``order`` of a float sum over a row of ``n`` into ``body``; returns the
    variable holding each row's sum (``[XBLOCK, 1]``). ``term_at(tag, index, mask)`` emits
    the term at the run positions ``index`` (masked) and returns its variable."""
    if order == "sequential":
        leaves, tree, width = [(0, n)], 0, 1
        len8, tails = [n], [0]
    else:
        leaves, tree = pairwise_leaves(n)
        width = LANES
        len8 = [m - m % 8 if m >= 8 else 0 for _, m in leaves]
        tails = [m - k for (_, m), k in zip(leaves, len8)]
    tabled = len(leaves) <= TABLED_LEAVES
    levels = depth(tree)
    count = _pow2(len(leaves)) if tabled else 1 << levels
    lanes = count * width if max(len8) > 0 else count
    starts = [s for s, _ in leaves]
    acc = f"{tag}_acc"
    if tabled:
        body.line(f"# NumPy's {order} order of {n} terms: leaves {leaves}"
                  + (f", {width} partial sums each" if width > 1 else ""))
    else:
        body.line(f"# NumPy's pairwise order of {n} terms: {len(leaves)} leaves of {min(m for _, m in leaves)}.."
                  f"{max(m for _, m in leaves)}, 8 partial sums each, {levels} levels of halving")
        _descend(body, tag, n, levels, widen)
        body.line(f"{tag}_len8 = tl.where({tag}_real == 1, {tag}_n - {tag}_n % 8, 0)")
        body.line(f"{tag}_tail = tl.where({tag}_real == 1, {tag}_n % 8, 0)")
    body.line(f"{acc} = tl.full([XBLOCK, {lanes}], -0.0, {tltype})")
    if max(len8) > 0:
        body.line(f"{tag}_lane = tl.arange(0, {lanes})[None, :]{widen}")
        _per_leaf(body, tabled and (f"{tag}_leaf", f"{tag}_lane // {width}"),
                  {f"{tag}_start": (starts, _spread(f"{tag}_lo", count, width)),
                   f"{tag}_len": (len8, _spread(f"{tag}_len8", count, width))})
        step = f"{tag}_k * {width} + {tag}_lane % {width}" if width > 1 else f"{tag}_k + 0 * {tag}_lane"
        _add_in_order(body, term_at, tag, f"{tag}_k", max(len8) // width, acc,
                      [f"{tag}_at = {step}"], f"{tag}_start + {tag}_at", f"{tag}_at < {tag}_len")
    sums = acc
    while lanes > count:     # each leaf's partial sums: ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))
        lanes //= 2
        a, b = f"{tag}_a{lanes}", f"{tag}_b{lanes}"
        body.line(f"{a}, {b} = tl.split(tl.reshape({sums}, [XBLOCK, {lanes}, 2]))")
        sums = f"{tag}_s{lanes}"
        body.line(f"{sums} = {a} + {b}")
    if max(tails) > 0:       # the last n % 8 terms of each leaf, in order
        _per_leaf(body, tabled and (f"{tag}_tleaf", f"tl.arange(0, {count})[None, :]{widen}"),
                  {f"{tag}_tstart": ([s + k for s, k in zip(starts, len8)], f"{tag}_lo + {tag}_len8"),
                   f"{tag}_tlen": (tails, f"{tag}_tail")})
        if sums == acc:
            body.line(f"{tag}_s{count} = {acc}")
            sums = f"{tag}_s{count}"
        _add_in_order(body, term_at, f"{tag}t", f"{tag}_t", max(tails), sums, [],
                      f"{tag}_tstart + {tag}_t", f"{tag}_t < {tag}_tlen")
    if len(leaves) == 1:
        total = f"tl.reduce({sums}, 1, {combine})[:, None]"
    elif tabled:
        names = []
        body.line(f"{tag}_which = tl.arange(0, {count})[None, :]")
        for i in range(len(leaves)):   # (the one leaf's sum plus -0.0s: exact in any order)
            names.append(f"{tag}_l{i}")
            body.line(f"{names[-1]} = tl.reduce(tl.where({tag}_which == {i}, {sums}, -0.0), 1, "
                      f"{combine})[:, None]")
        total = tree_text(tree, names)
    else:
        # the tree bottom up, a pair of slots at a time: a slot another leaf stands for
        # holds -0.0, so where a node is a leaf its left slot's sum passes up unchanged
        while count > 1:
            count //= 2
            body.line(f"{tag}_va{count}, {tag}_vb{count} = tl.split(tl.reshape({sums}, [XBLOCK, {count}, 2]))")
            sums = f"{tag}_v{count}"
            body.line(f"{sums} = {tag}_va{count} + {tag}_vb{count}")
        total = sums
    # (np.add.reduce starts from its identity, 0.0: a sum of -0.0s is 0.0)
    return em.assign(f"tl.full([], 0.0, {tltype}) + {total}")
