"""The order a reduction adds in, as NumPy's iterator takes it (kiln/lowering/cpp_plan.py).

NumPy walks an operation's dims by stride, largest outermost, and hands its inner loop the
innermost run: a reduction's result is bit for bit NumPy's when kiln's loops add in that
order. ``kept_axis_inner`` decides whether a kept dim runs innermost (blocks of points:
rows added one by one), ``numpy_run`` how many reduced loops make one pairwise run.
"""
from __future__ import annotations

from typing import Any

from .cpp_sums import constant_trip
from .loop_ir import BufferValue
from .scheduler import record
from .sizes import magnitude, settled


def kept_axis_inner(plan: Any, loads: list, accesses: list, vo: str, vi: str) -> bool:
    """Whether the kept loop ``vo`` should run innermost (blocks of points) rather than the
    reduced loop ``vi``: NumPy's order. Its iterator puts innermost the axis along which the
    operands step least, an operand that steps along only one of the two having no say (the
    reduction's output, a broadcast row). So the loads that step along both decide: a
    column sum reads rows (``vo`` unit-stride), a row sum of ``x[:, ::2]`` reads each row
    with stride 2, pairwise along the row as NumPy adds it, not column by column across
    rows 8 KB apart. Loads that disagree (``(x + y.T).sum(0)``): NumPy's temporary keeps
    C order, its iterator swapping two dims only where every operand steps less along the
    inner one, so a kept dim after the reduced one in C order runs inside it. Without such
    loads (or with symbolic strides): blocks when some access is unit-stride along ``vo``
    and none along ``vi``."""
    both = [(c[vo], c[vi]) for c in (dict(plan.rename(a.terms)) for a in loads)
            if c.get(vo) and c.get(vi)]
    smaller = [smaller_stride(o, i) for o, i in both]   # (symbolic strides: where the bound settles it)
    if both and None not in smaller:
        if loop_axis(vo) > loop_axis(vi) >= 0:   # (Frame.var: the dim's position in C order)
            return not all(smaller_stride(i, o) for o, i in both)
        return all(smaller)
    coefs = [dict(plan.rename(a.terms)) for a in accesses]
    return any(c.get(vo) == 1 for c in coefs) and not any(c.get(vi) == 1 for c in coefs)


def smaller_stride(a: Any, b: Any) -> bool | None:
    """Is stride ``a`` smaller in magnitude than ``b`` (ints, or sizes whose symbols are
    at least 2: ``1`` and ``s1``)? None where the size bound cannot say."""
    mags = [magnitude(a), magnitude(b)]
    if None in mags:
        return None
    if settled(mags[1] - mags[0], "gt"):
        return True
    return False if settled(mags[0] - mags[1], "ge") else None


def loop_axis(v: str) -> int:
    """The dim a loop variable (``x1``, ``r0``: Frame.var, a collapsed group's first) runs;
    -1 for another name."""
    return int(v[1:]) if v[1:].isdigit() else -1


# The most terms NumPy's reduction buffers at a time (its iterator's default buffersize)
NUMPY_BUFFER = 8192


def numpy_run(plan: Any, node: Any, local: dict) -> tuple[int, int | None] | None:
    """How many of the innermost inner (reduced) loops NumPy adds as one pairwise run, the
    others around it in order (``out += pairwise(run)`` for each), and the chunk it adds
    that run in (None: all of it); None where kiln does not know NumPy's order. NumPy's
    iterator walks dims by stride, largest first, a negative stride as it is (a reduction's
    iterator never flips one: ``x[..., ::-1].sum(1)`` adds each row last element first);
    its run is the innermost dims that are all reduced (``x.sum((0, 2))`` of a C-ordered
    x: the last dim, once per i and j), one flat run: dims that do not coalesce are copied
    into a buffer first, in chunks past NUMPY_BUFFER terms (:func:`buffered_run`). A
    computed term (``((x - m) ** 2).sum(...)``) is a temporary NumPy lays out contiguously
    in its operands' order, so there the run is never buffered. Kiln's loops must be in
    that order (each steps further than the next in every load that steps along both),
    forward, with constant strides."""
    loads = [idx for buf, idx in record(node, "reduce", plan.kernel.frame).loads
             if local.get(buf.name) is None]
    names = [v for v, _ in plan.inner_loops]
    kept = [v for v, _ in plan.outer_loops]
    full = [c for c in (dict(plan.rename(a.terms)) for a in loads) if all(c.get(v) for v in names)]
    if not full or not all(isinstance(s, int) for c in full for s in c.values()):
        return None
    for c in full:
        steps = [abs(c[v]) for v in names]
        if any(s <= t for s, t in zip(steps, steps[1:])):
            return None
        # (every full load must agree where the kept dims fall among the reduced ones)
        if any(c.get(k) and (abs(c[k]) > steps[-1]) != (abs(full[0].get(k, 0)) > abs(full[0][names[-1]]))
               for k in kept):
            return None
    c = full[0]
    if isinstance(node.src, BufferValue):   # NumPy reduces this array itself: buffered
        return buffered_run(plan, c, names)
    least_kept = min((abs(c[k]) for k in kept if c.get(k)), default=None)
    k = 0
    while k < len(names) and (least_kept is None or abs(c[names[-1 - k]]) < least_kept):
        k += 1
    return (k, None) if k else None


def buffered_run(plan: Any, c: dict, names: list[str]) -> tuple[int, int | None] | None:
    """:func:`numpy_run` of a reduction NumPy's iterator reads from the array itself (``c``
    its load's strides): the iterator's own choice (numpy/_core/src/multiarray/
    nditer_constr.c, NumPy 2.3 on): dims sorted by |stride|, adjacent ones coalesced
    where the array and the result both allow, then ``npyiter_find_buffering_setup`` picks
    the outer dim whose core is the run (:func:`numpy_buffering`)."""
    loops = [(v, constant_trip(n)) for v, n in plan.outer_loops + plan.inner_loops]
    if any(n is None for _, n in loops):
        return None
    dims = sorted(((n, c.get(v, 0), v in names, v) for v, n in loops if n != 1),
                  key=lambda d: abs(d[1]))
    if not dims or any(d[1] == 0 for d in dims) or \
            len({abs(d[1]) for d in dims}) < len(dims):   # (broadcast or overlapping views)
        return None
    result, acc = [], 1   # the result's strides: NumPy allocates it in this order
    for n, _, reduced, _ in dims:
        result.append(0 if reduced else acc)
        acc *= 1 if reduced else n
    groups = [[dims[0][0], dims[0][1], result[0], dims[0][2], [dims[0][3]]]]
    for (n, s, reduced, v), r in zip(dims[1:], result[1:]):
        g = groups[-1]
        if g[1] * g[0] == s and g[2] * g[0] == r:
            g[0] *= n
            g[4].insert(0, v)
        else:
            groups.append([n, s, r, reduced, [v]])
    run, chunk = numpy_buffering([(g[0], g[1], g[2]) for g in groups])
    if not all(g[3] for g in groups[:run]):
        return None
    members = [v for g in reversed(groups[:run]) for v in g[4]]
    if members != names[len(names) - len(members):]:
        return None
    return (len(members), chunk) if members else None


def numpy_buffering(dims: list[tuple[int, int, int]]) -> tuple[int, int | None]:
    """NumPy's ``npyiter_find_buffering_setup`` for a reduction of one array: ``dims``
    (size, the array's stride, the result's stride) innermost first, coalesced. Returns how
    many innermost dims make the run its inner loop adds pairwise, and the chunk (a
    buffer) that run is added in, None where it is added whole. The buffer grows dim by dim
    while the cost (1 + operands buffered) per element falls, not past NUMPY_BUFFER terms
    once something is buffered, nor past the first dim where the result steps (the
    "reduce outer dim": then the run is its core, one inner call per point)."""
    cost, single_x, single_out, outer_reduce = 1, 1, 1, 0
    size = dims[0][0]
    best_dim, best_cost, best_size, best_core = 0, 1, size, 1
    for idim in range(1, len(dims)):
        if outer_reduce or size >= NUMPY_BUFFER and cost > 1:
            break
        (pn, px, po), (n, x, o) = dims[idim - 1], dims[idim]
        if single_x == idim:
            if px * pn == x:
                single_x += 1
            else:
                cost += 1
        if single_out == idim and po * pn == o:
            single_out += 1
        else:
            cost += single_out == idim
            if o == 0 or po == 0:   # the result starts (or stops) stepping here
                outer_reduce = idim
        core, size = size, size * n
        if cost * best_size <= best_cost * (min(size, NUMPY_BUFFER) if cost > 1 else size):
            best_dim, best_cost, best_size, best_core = idim, cost, size, core
    if outer_reduce and best_dim == outer_reduce:
        return best_dim, None
    if single_x <= best_dim and best_size > NUMPY_BUFFER:   # the array buffered, capped
        return best_dim + 1, best_core * (NUMPY_BUFFER // best_core)
    return best_dim + 1, None
