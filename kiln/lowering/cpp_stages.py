"""The C++ renderer's statements per outer point of a kernel (kiln/lowering/cpp.py).

A kernel plan's stages become C statements here: the loads and arithmetic of each stage
(through the ops handler, :class:`~kiln.lowering.cpp_ops.CppEmitter`), reduction
accumulators (double for float sums along the contiguous axis, NaN-aware max/min,
in-order argmax/argmin, per-point arrays in blocked mode), scans, and the loop nests
around them with their OpenMP/SIMD pragmas. cpp_plan.py plans kernels; cpp.py prints
the function around these statements.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .cpp_loops import PARALLEL_GRAIN, below_grain, decided_loop, extrema_lanes, loop_nest, short_loop
from .cpp_ops import BOOL_LOAD, CppEmitter, NameSource, calls_math, ctype, literal
from .cpp_sums import (MAX_SELECTED_SUMS, TEMP, add_once, constant_trip, counted_selection, grouped_sums,
                       needed_statements, pairwise_sums, reads_written, strided_terms, term_statements)
from ..ops.fp_errors import REDUCES
from .fp_flags import fp_table
from .loop_ir import Affine
from .scheduler import node_index, write_index

# Threads splitting the columns of a kernel that stores whole rows (``x / x.max(axis=0)``,
# a column reduction and its broadcast) each write part of every row, so at every chunk
# edge both threads write one cache line of every row. On this 2-vCPU VM, in about one
# process in five, every such shared line costs ~0.2 us (2000x300: 250 us on two threads
# became 700-1000 us, NumPy ~620, one thread ~300, a row split never): such kernels go
# parallel only in chunks of at least this many columns, where a chunk's row costs ~1 us.
ROW_WRITE_CHUNK = 2048
# Outer points per block when reducing leading axes (per-point accumulators in arrays);
# up to WHOLE_ROW_POINTS kept points make one block (``block_points``).
BLOCK = 256
WHOLE_ROW_POINTS = 8192


def block_points(extent: str) -> int:
    """Points per block of a blocked (column) reduction over ``extent`` kept points: all of
    them up to WHOLE_ROW_POINTS, so each row is read in one run from start to end, as
    NumPy's row-by-row loop reads it (a.sum(axis=0) of 2000x5000 float64 on one thread:
    27 ms in blocks of 256 points, whose rows' 2 KB pieces each start a new prefetch
    stream, 16 ms whole, NumPy 19); else BLOCK. (An array of that many points per
    accumulator or value lives on the stack: 64 KB at most, 128 KB complex.)"""
    n = int(extent) if extent.isdigit() else 0
    return n if BLOCK < n <= WHOLE_ROW_POINTS else BLOCK


_INIT = {"sum": "0", "prod": "1", "any": "0", "all": "1"}
# Reductions whose accumulator no OpenMP clause combines: their reduced loop runs in
# order, on one thread, without SIMD lanes (points of a blocked kernel still fill them).
IN_ORDER_COMBINES = frozenset({"argmax", "argmin"})


def multiplies_in_order(node: Any) -> bool:
    """A float product: NumPy's multiply.reduce multiplies one element at a time, in its
    iterator's (memory) order, in the result's dtype (no pairwise or SIMD split, unlike
    add: np.prod of 1000 float64 near 1 in 4 SIMD lanes with a double accumulator was
    4.4e-15 off, float32 ones ~4 ulp). So its reduced loop runs in order, on one thread,
    without lanes, accumulating in the result's dtype (points of a blocked kernel, rows of
    a kept axis, still fill lanes and threads)."""
    return node.kind == "reduction" and node.combine == "prod" and np.dtype(node.buf.dtype).kind == "f"
# Running extrema (kiln/ops/running.py): the comparison under which the accumulator stays.
_RUNNING = {"max": ">", "min": "<", "fmax": ">", "fmin": "<"}
_CLAUSE = {"sum": "+", "prod": "*", "max": "max", "min": "min", "any": "|", "all": "&"}


def _acc_ctype(dtype: np.dtype, arg: bool = False) -> str:
    """A bool accumulator (max/min/any/all of bools) in bytes, as wide as the bool lanes:
    in an int GCC widened every byte (a.max(axis=1) of 200x500 bools: 8.3 us, NumPy 5.7;
    now 3.8); an argmax/argmin's (``arg``) in an int, as before (in bytes beside its int64
    position a column argmin of 200x500 bools took 67 us, in an int64 34, in an int 16)."""
    return ("int" if arg else "uint8_t") if dtype.kind == "b" else ctype(dtype)


def _init(combine: str, dtype: np.dtype) -> str:
    if combine in _INIT:
        return _INIT[combine]
    big = combine in ("min", "argmin")
    if dtype.kind == "f":
        return literal(np.inf if big else -np.inf, dtype)
    if dtype.kind == "b":
        return "1" if big else "0"
    info = np.iinfo(dtype)
    return literal(info.max if big else info.min, dtype)


def render_stages(plan: Any, names: NameSource) -> list[str]:
    """The statements run per outer point."""
    kernel, local = plan.kernel, plan.local
    frame = kernel.frame
    lines: list[str] = []
    locals_: dict[str, str] = {}
    inner = plan.inner_loops
    ren = plan.rename
    # Blocked mode (a reduction over leading axes, kept dims contiguous): plan.block outer points
    # advance together, their per-point values in arrays, the unit-stride loop innermost.
    blk = plan.blocked
    if blk:
        bv = blk
        bidx = f"{bv} - {bv}_b"
        point_loop = f"for (int64_t {bv} = {bv}_b; {bv} < {bv}_e; ++{bv}) {{"

    def per_point(name: str) -> str:
        return f"{name}[{bidx}]" if blk else name

    def declare_accumulator(pre: list, clauses: list, c_type: str, name: str, init,
                            op: str | None) -> str:
        """Declare ``name`` (one per point when blocked, else an OpenMP reduction variable
        combined with ``op``; None: a plain variable of a loop that runs in order) set to
        ``init``; return how the loop body refers to it."""
        ref = per_point(name)
        if blk:
            pre.append(f"{c_type} {name}[{plan.block}];")
            pre.append(f"{point_loop} {ref} = {init}; }}")
        else:
            pre.append(f"{c_type} {ref} = {init};")
            if op is not None:
                clauses.append(f"reduction({op}:{ref})")
        return ref

    # Row-local buffers: declared once per outer point, sized by the inner index range.
    inner_names = {v for v, _ in frame.inner_vars()}
    rowlocal: dict[str, tuple[str, set]] = {}
    for name, (dtype, span) in plan.row_arrays.items():
        rowlocal[name] = (f"row_{name}", inner_names)
        lines.append(f"{ctype(dtype)} row_{name}[{span}];")

    for kind, members in kernel.stages:
        em = CppEmitter(names, forwarded={}, locals_=locals_)
        em.rename = ren
        em.rowlocal = rowlocal
        pre: list[str] = []
        post: list[str] = []
        updates: list[str] = []
        clauses: list[str] = []
        in_order = False   # an accumulator no OpenMP clause combines: no SIMD lanes
        arg_order = False  # argmax/argmin's: in order, but extrema_lanes' lanes combine them
        float_sums = []    # float sums' accumulators added to one by one
        pairwise_nodes, pairwise = pairwise_sums(plan, kind, members, inner)
        terms = []         # (accumulator, term) of sums added in NumPy's pairwise order
        extrema = []       # (accumulator, C type, start, combine) of max/min and their NaN flags,
                           # argmax/argmin's with their position's accumulator and is-float
        logical = []       # (accumulator, combine) of any/all
        counts = {}        # a selected sum's accumulator -> that of its mask's count
        counted = set()    # the count reductions a selected sum computes (no loop of their own)
        declared = {}      # an accumulator -> its C type and start
        stores = {}        # a temporary stored -> (element, its index's loops, C type)
        store_lines = set()
        for node, role in members:
            buf = node.buf
            if role in ("row", "scalar"):
                v = node.value.load(em, node_index(node, role, frame))
                w = write_index(node, role, frame)
                em.forwarded[(buf.name, w)] = v
                if role == "scalar":
                    if blk:
                        arr = names.temp().replace("t", "s")
                        pre.append(f"{ctype(buf.dtype)} {arr}[{plan.block}];")
                        em.lines.append(f"{arr}[{bidx}] = {v};")
                        locals_[buf.name] = f"{arr}[{bidx}]"
                    else:
                        locals_[buf.name] = v
                if buf.name in rowlocal:
                    w = Affine(0, {k: c for k, c in w.terms.items() if k in inner_names})
                    target = f"{rowlocal[buf.name][0]}[{w.render(ren)}]"
                elif local.get(buf.name) not in ("register", "scalar"):
                    target = f"{names.arg(buf)}[{names.at(w, ren)}]"
                else:
                    continue
                em.lines.append(f"{target} = {v};")
                store_lines.add(em.lines[-1])
                if TEMP.fullmatch(v):   # (a sum's term may read it back: term_statements)
                    index_vars = {k for k, _ in (ren(w.terms) if ren else w.terms.items())}
                    stores[v] = (target, index_vars, ctype(buf.dtype))
                continue
            if role == "scan":
                in_order = True   # the running value goes from one element to the next
                updates += _scan_update(node, em, frame, pre, names, plan.accumulators[buf.name],
                                        per_point, point_loop if blk else None, ren, plan.block)
                continue
            # a reduction: accumulate per lane, finish after the loop
            acc_dt = plan.accumulators[buf.name]
            if node in pairwise_nodes and len(inner) > 1:
                acc_dt = np.dtype(buf.dtype)   # NumPy adds each run into the result, in its dtype
            acc_name = names.temp().replace("t", "acc")
            arg = node.combine in IN_ORDER_COMBINES
            in_order |= multiplies_in_order(node) and not blk
            acc = declare_accumulator(pre, [] if node in pairwise_nodes else clauses,   # (its own pass)
                                      _acc_ctype(acc_dt, arg), acc_name, _init(node.combine, acc_dt),
                                      None if multiplies_in_order(node) else _CLAUSE.get(node.combine))
            declared[acc] = (_acc_ctype(acc_dt, arg), _init(node.combine, acc_dt))
            if node.combine in ("max", "min") and node not in pairwise_nodes:
                extrema.append((acc, _acc_ctype(acc_dt), _init(node.combine, acc_dt), node.combine))
            nan = None
            v = node.src.load(em, node_index(node, "reduce", frame))
            spoils = _term_accumulators(node, acc_dt, names, pre, blk or arg)
            if arg:
                # NumPy's rule: the first extreme wins ties, the first NaN wins outright
                # (once the accumulator is NaN nothing replaces it). The position counts
                # the reduced elements in C order; one pass in order, or independent lanes
                # of one in order each that extrema_lanes combines by value, then position.
                arg_order = True
                pos = _reduced_position(frame).render(ren)
                at = declare_accumulator(pre, clauses, "int64_t", acc_name.replace("acc", "at"), "0", None)
                extrema.append((acc, _acc_ctype(acc_dt, arg), _init(node.combine, acc_dt), node.combine,
                                at, acc_dt.kind == "f"))
                cur = names.temp()
                updates.append(f"const {_acc_ctype(acc_dt, arg)} {cur} = {em.cast(v, node.src.dtype, acc_dt)};")
                better = f"{cur} {'>' if node.combine == 'argmax' else '<'} {acc}"
                if acc_dt.kind == "f":
                    # & and |, not && and ||: no control flow, so the loop vectorizes
                    better = f"({acc} == {acc}) & (({better}) | ({cur} != {cur}))"
                take = names.temp().replace("t", "take")
                updates.append(f"const bool {take} = {better};")   # selects, not a branch: SIMD
                updates.append(f"{acc} = {take} ? {cur} : {acc};")  # lanes when they are points
                updates.append(f"{at} = {take} ? (int64_t)({pos}) : {at};")
                acc = at
            elif node in pairwise_nodes:
                # pairwise in the sum's dtype; terms of another dtype are cast as NumPy's
                # buffers cast them, and added a buffer (PAIRWISE_BUFFER terms) at a time
                cast = np.dtype(node.src.dtype) != np.dtype(buf.dtype)
                sel = None
                if node.select is not None:   # x[mask]'s terms: the selected x alone
                    mask, v = (s.load(em, node_index(node, "reduce", frame)) for s in node.select)
                    sel = mask
                k, chunk = plan.runs.get(buf.name, (1, None))
                strided = k == 1 and strided_terms(plan, node, inner[-1][0])
                terms.append((acc, _noted(em.cast(v, node.src.dtype, buf.dtype), buf.dtype, spoils),
                              ctype(buf.dtype), cast, sel,
                              k, chunk, strided))
            elif (sel_acc := counted_selection(node, v, acc_dt, terms, inner, counts)) is not None:
                # x[m].mean()'s count of m: kiln_selected_sum counts the selection first,
                # so it hands that count over instead of this loop reading m again
                counts[sel_acc] = acc
                counted.add(node)
            elif node.combine in ("sum", "prod"):
                v = _noted(em.cast(v, node.src.dtype, acc_dt), acc_dt, spoils)
                updates.append(f"{acc} {'+' if node.combine == 'sum' else '*'}= {v};")
                if node.combine == "sum" and acc_dt.kind == "f" and not blk:
                    float_sums.append(acc)
            elif node.combine in ("max", "min"):
                v = em.cast(v, node.src.dtype, acc_dt)
                # NumPy's maximum(acc, v) keeps its second operand on ties, so in a
                # reduction that runs in order the last of equal values wins (-0.0 then
                # 0.0 gives 0.0). This is x86's maxps(acc, v): a NaN v becomes the
                # accumulator (a later v replaces it), so the nan flag reads the
                # accumulator, and v is loaded once. __builtin_isnan, not acc != acc:
                # GCC 12 leaves the loop scalar (8x slower) when the update's select
                # also feeds another reduction, as np.nanmax's isnan does.
                cmp = ">" if node.combine == "max" else "<"
                updates.append(f"{acc} = {acc} {cmp} {v} ? {acc} : {v};")
                if acc_dt.kind == "f":
                    nan = declare_accumulator(pre, clauses, "int",
                                              acc_name.replace("acc", "nan"), 0, "|")
                    updates.append(f"{nan} |= __builtin_isnan({acc});")
                    extrema.append((nan, "int", "0", "|"))
            else:
                updates.append(f"{acc} {'|' if node.combine == 'any' else '&'}= ({v} != 0);")
                logical.append((acc, node.combine))
            out_dt = buf.dtype
            red_name = acc_name.replace("acc", "red")
            red = per_point(red_name)
            value = f"({ctype(out_dt)})({acc})" if out_dt.kind != "b" else f"({acc} != 0)"
            if nan:
                value = f"{nan} ? {literal(np.nan, out_dt)} : {value}"
            finish = [f"{red} = {value};"] if blk else [f"const {ctype(out_dt)} {red} = {value};"]
            if spoils:   # the predicates of NumPy's reduce loop, of the result (ops/fp_errors.py)
                told = CppEmitter(names, forwarded={}, locals_={})
                for origin in _reductions(node):
                    told.raised(origin, (red, out_dt), [(s, np.bool_) for s in spoils])
                finish += told.lines
            if blk:
                pre.append(f"{ctype(out_dt)} {red_name}[{plan.block}];")
            locals_[buf.name] = red
            if local.get(buf.name) != "scalar":
                w = write_index(node, "reduce", frame)
                finish.append(f"{names.arg(buf)}[{names.at(w, ren)}] = {red};")
            post += [point_loop] + ["  " + f for f in finish] + ["}"] if blk else finish
        if float_sums and len(inner) > 1 and short_loop(inner[-1][1]):
            # a short row unrolled (no SIMD clause) inside a loop that carries the sum:
            # several in-order adds a step, which GCC would vectorize across the outer
            # loop, bug 110381 (the prelude's KILN_OPAQUE: x[..., ::-1].sum() of 16 x 8
            # read the wrong elements). (One reduced loop: each point's sum is its own,
            # and vectors across points stay.)
            updates += [f"KILN_OPAQUE({a});" for a in float_sums]
        body = em.lines + updates
        if blk:  # the innermost loop runs the points: each has its own accumulators
            if kind == "scalar" or not inner:
                lines += pre + [point_loop] + ["  " + b for b in body] + ["}"] + post
            else:
                # (complex locals are structs, which omp simd privatizes into arrays and
                # then does not vectorize; the points' lanes need no clause: GCC's own
                # vectorizer takes the loop, cpp.py's outer nest does the same)
                lines += pre + loop_nest(inner + [(bv, None)], body, [], parallel=False, block=bv,
                                          simd=not names.complex) + post
            continue
        if kind == "scalar" or not inner:
            lines += pre + body + post
            continue
        lines += pre
        sums = []          # the sums' statements, after the stage's loop where they read it back
        # A stage that only stores values beside its sums: the first sum's term stores them
        # too, one pass (kiln_pairwise computes each term once; a tail's spare lanes repeat
        # the last term, the same store), the stage's loop dropped. Not where the term reads
        # an array it writes (in place: the repeated last term would read its own store)
        carrier = next((t[0] for t in terms if t[4] is None), None) \
            if store_lines and len(terms) == sum(role == "reduce" for _, role in members) else None
        storing = []
        groups = grouped_sums(terms, carrier)
        grouped = {t[0] for g in groups.values() for t in g[1:]}   # (added by their group's first)
        done = {}   # the sums written so far, by their text (add_once)
        if terms:
            # NumPy's order (kiln_pairwise in the prelude): the loop body becomes each sum's
            # term, with the statements that term needs only (needed_statements)
            many = sum(t[4] is not None for t in terms) > MAX_SELECTED_SUMS
            for acc, v, c_type, cast, sel, k, chunk, strided in terms:
                if sel is not None:   # (before the stage's loop, storing nothing)
                    computed = [b for b in em.lines if b not in store_lines]
                    add_once(done, lines, acc, _compacted_sum(acc, v, sel, c_type, cast, computed, inner,
                                                              counts.get(acc), many), counts.get(acc), declared)
                    continue
                if acc in grouped:
                    continue
                # several loops (reduce_order.numpy_run): the last k are NumPy's run, each
                # run added into the sum in the order of the loops around it (a run NumPy
                # buffers in chunks: each chunk added into the sum in turn)
                around, block = inner[:-k], inner[-k:]
                threads = _sum_threads(plan) if not around else "1"
                fn = acc.replace("acc", "term")
                if acc == carrier and not reads_written(needed := needed_statements(em.lines, v), store_lines):
                    out = storing
                else:
                    needed, back = term_statements(em.lines, v, stores, store_lines, {b for b, _ in block})
                    out = sums if back else lines
                if k > 1:
                    run = _run_through_buffer(acc, v, c_type, needed, block, chunk, threads)
                    add_once(done, out, acc, loop_nest(around, run, [], parallel=False, simd=False)
                             if around else run, None, declared)
                    continue
                var, n = block[0]
                group = groups.get(acc, [])
                if group:   # many sums of this run side by side (grouped_sums): one pass
                    c_type = f"kiln_sums<{c_type}, {len(group)}>"
                    needed, back = term_statements(em.lines, " ".join(t[1] for t in group), stores,
                                                   store_lines, {var})
                    out = sums if back else lines
                    total = acc.replace("acc", "sums")
                    out.append(f"{c_type} {total} = 0;")
                    v = "terms_"
                    needed = needed + [f"{c_type} terms_;"] + [f"terms_.v[{i}] = {t[1]};"
                                                                 for i, t in enumerate(group)]
                run = [f"auto {fn} = [&](int64_t {var}) -> {c_type} {{"]
                run += ["  " + b for b in needed] + [f"  return {v};", "};"]
                # float32 terms that call vector math: 16 lanes per call (the prelude's W)
                # (terms that read a bool array: a buffer of them, the prelude's W 0)
                # (terms that are strided loads: scalar partial sums, the prelude's W 1)
                # (a group's: each sum's partial sums as lanes, the prelude's W 2)
                tp = f"{c_type}, 2" if group else \
                    f"{c_type}, 16" if c_type == "float" and calls_math(needed) else \
                    f"{c_type}, 0" if any(BOOL_LOAD in b for b in needed) else \
                    f"{c_type}, 1" if strided and not calls_math(needed) else c_type
                run += _pairwise_call(total if group else acc, tp, fn, n, cast, chunk, threads,
                                      plan.split_inner and not around)
                code = loop_nest(around, run, [], parallel=False, simd=False) if around else run
                if group:
                    out += code
                    out += [f"{t[0]} += {total}.v[{i}];" for i, t in enumerate(group)]
                else:
                    add_once(done, out, acc, code, None, declared)
        post = storing + sums + post
        if pairwise or storing or counted and all(n in pairwise_nodes or n in counted for n, _ in members):
            lines += post
            continue
        lanes = bool(extrema) and len(extrema) == len(clauses) + sum(len(e) > 4 for e in extrema) \
            and not in_order and not names.complex
        in_order |= arg_order
        if len(logical) == len(members) and len(inner) == 1 and not short_loop(inner[0][1]) \
                and not in_order and not fp_table(kernel)[0]:
            # any/all alone, computing nothing that may raise a flag: stop where decided
            # (a short row stays straight-line code)
            lines += decided_loop(inner[0], body, clauses, logical, plan.work, plan.cost,
                                   plan.split_inner and not below_grain(plan.work, plan.cost)) + post
            continue
        if plan.split_inner and not below_grain(plan.work, plan.cost):
            # No outer loop to share (a reduction over everything): big enough loops are
            # split across threads themselves, OpenMP combining the accumulators.
            lines.append(f"if (nthreads > 1 && (int64_t){plan.work} * {plan.cost} >= {PARALLEL_GRAIN}) {{")
            lines += loop_nest(inner, body, clauses, parallel=True)
            lines.append("} else {")
            lines += extrema_lanes(inner, body, clauses, extrema, not plan.outer_loops) if lanes \
                else loop_nest(inner, body, clauses, parallel=False, simd=not in_order)
            lines.append("}")
        elif lanes:
            lines += extrema_lanes(inner, body, clauses, extrema, not plan.outer_loops)
        else:
            lines += loop_nest(inner, body, clauses, parallel=False, simd=not in_order)
        lines += post
    return lines


def _term_accumulators(node: Any, acc_dt: np.dtype, names: NameSource, pre: list, skip: bool) -> tuple:
    """For a float sum or product with a told slot (its graph node's predicate in the body
    that tells which op raised a kind, cpp_fp.py): ``(over, invalid)``, ints set where a
    term was not finite or a NaN (cpp_prelude.h ``kiln_fp_spoils``), declared in ``pre``;
    else (). Only that body runs them (a rare launch), so the plain loops stay as they are.
    ``skip``: a blocked stage or an arg-reduction (no such predicate there)."""
    if skip or node.combine not in ("sum", "prod") or acc_dt.kind != "f" or \
            not any(names.fp_slots.get(o) for o in _reductions(node)):
        return ()
    over, invalid = (names.temp().replace("t", k) for k in ("spoilo", "spoili"))
    pre.append(f"int {over} = 0, {invalid} = 0;")
    return over, invalid


def _reductions(node: Any) -> list:
    """The graph calls of reduction ``node`` whose predicate is its result's (ops/fp_errors.py
    ``REDUCES``), not those of the ops fused into its terms (``(x * y).sum()``'s multiply)."""
    return [o for o in node.origins if getattr(o, "kind", None) == "call" and o.op.name in REDUCES]


def _noted(term: str, dtype: Any, spoils: tuple) -> str:
    """``term``, noting where it spoils its reduction (:func:`_term_accumulators`)."""
    return f"kiln_fp_spoils<{ctype(dtype)}>({term}, {spoils[0]}, {spoils[1]})" if spoils else term


# kiln_pairwise_threads sums a run of up to this many terms on the calling thread
PARALLEL_RUN = 128


def _sum_threads(plan: Any) -> str:
    """The thread count of a sum over the kernel's whole range (a C expression): "1" where
    the work is a number below the grain. kiln_pairwise_threads given 1 thread (or a run of
    up to PARALLEL_RUN terms) is kiln_pairwise, kiln_pairwise_buffered kiln_pairwise_chunks,
    and such a sum calls those directly: the templates' parallel regions, outlined by GCC
    before it can see they never run, cost ~15% of a small sum's build (~20 ms of g++ CPU)."""
    if not plan.split_inner or below_grain(plan.work, plan.cost):
        return "1"
    return f"(int64_t){plan.work} * {plan.cost} >= {PARALLEL_GRAIN} ? nthreads : 1"


def _pairwise_call(target: str, tp: str, fn: str, n: Any, cast: bool, chunk: int | None,
                   threads: str, whole: bool) -> list[str]:
    """``target += `` the pairwise sum of the term function ``fn`` over a run of ``n``
    (``tp``: the prelude template's T and W): NumPy's buffered order where its terms are
    ``cast`` or NumPy adds the run in chunks (``whole``: the sum starts at 0, no loops
    around it), on ``threads`` where the run is long enough."""
    if cast and threads == "1":
        return [f"{target} += kiln_pairwise_chunks<{tp}>({fn}, {n});"]
    if cast:
        return [f"{target} += kiln_pairwise_buffered<{tp}>({fn}, {n}, {threads});"]
    if chunk and threads == "1" and whole:
        return [f"{target} += kiln_pairwise_chunks<{tp}>({fn}, {n}, {chunk});"]
    if chunk and whole:
        return [f"{target} += kiln_pairwise_buffered<{tp}>({fn}, {n}, {threads}, {chunk});"]
    if chunk:
        left = f"{n} - lo"
        return [f"for (int64_t lo = 0; lo < {n}; lo += {chunk})",
                f"  {target} += kiln_pairwise<{tp}>({fn}, lo, {left} < {chunk} ? {left} : {chunk});"]
    if threads != "1" and not _short_run(n):
        return [f"{target} += kiln_pairwise_threads<{tp}>({fn}, {n}, {threads});"]
    return [f"{target} += kiln_pairwise<{tp}>({fn}, 0, {n});"]


def _short_run(n: Any) -> bool:
    """Whether the run is a number of terms kiln_pairwise_threads sums on one thread."""
    trip = constant_trip(n)
    return trip is not None and trip <= PARALLEL_RUN


def _run_through_buffer(acc: str, v: str, c_type: str, needed: list[str], block: list,
                        chunk: int | None, threads: str) -> list[str]:
    """A run of several loops (``block``, reduce_order.numpy_run) added in NumPy's order, as
    NumPy adds it: its terms written by the loop nest into a buffer in C order (the
    innermost loop a SIMD loop), the buffer added pairwise (kiln_pairwise) each time it
    holds ``chunk`` terms (NumPy's buffered chunk: a whole number of innermost rows, on the
    stack), else once the run is in it. (A term function of one flat index split it over
    the loops with a division and remainder per term, no SIMD: x3[..., :180:2].sum((1, 2))
    of 3x100x200 float32 took 4.3x NumPy's time.)"""
    b, q, fn = acc.replace("acc", "kb"), acc.replace("acc", "kq"), acc.replace("acc", "term")
    (last, m), trips = block[-1], [constant_trip(n) for _, n in block]
    size = " * ".join(f"(int64_t)({n})" for _, n in block)
    whole = None if None in trips else int(np.prod(trips))
    # (a chunk that ends inside a row: the whole run into the buffer, then its chunks)
    stream = bool(chunk) and trips[-1] is not None and chunk % trips[-1] == 0
    if stream or whole is not None and whole <= NUMPY_CHUNK:
        out = [f"{c_type} {b}[{chunk if stream else max(whole, 1)}];"]
    else:
        out = [f"{c_type}* {b} = ({c_type}*)kiln_scratch(sizeof({c_type}) * ({size}));"]
    out += [f"int64_t {q} = 0;", f"auto {fn} = [&](int64_t j) -> {c_type} {{ return {b}[j]; }};"]
    add = f"{acc} += kiln_pairwise<{c_type}>({fn}, 0, {chunk if stream else q});"
    row = loop_nest([block[-1]], needed + [f"{b}[{q} + {last}] = {v};"], [], parallel=False)
    row += [f"{q} += {m};"] + ([f"if ({q} == {chunk}) {{ {add} {q} = 0; }}"] if stream else [])
    out += loop_nest(block[:-1], row, [], parallel=False, simd=False) if len(block) > 1 else row
    if stream:
        out.append(f"if ({q} > 0) {acc} += kiln_pairwise<{c_type}>({fn}, 0, {q});")
    elif chunk:
        left = f"{q} - lo"
        out += [f"for (int64_t lo = 0; lo < {q}; lo += {chunk})",
                f"  {acc} += kiln_pairwise<{c_type}>({fn}, lo, {left} < {chunk} ? {left} : {chunk});"]
    elif threads != "1":
        out.append(f"{acc} += kiln_pairwise_threads<{c_type}>({fn}, {q}, {threads});")
    else:
        out.append(add)
    return ["{"] + out + ([] if out[0].endswith("];") else [f"free({b});"]) + ["}"]


# The most terms of a run a buffer on the stack holds (NumPy's own chunk: NUMPY_BUFFER)
NUMPY_CHUNK = 8192


def _compacted_sum(acc: str, v: str, sel: str, c_type: str, cast: bool, body: list[str],
                   inner: list, count: str | None = None, many: bool = False) -> list[str]:
    """x[mask].sum() in NumPy's order: NumPy adds the selection it compacts (C order)
    pairwise over its count. One run: its selected terms taken leaf by leaf of that tree
    (kiln_selected_sum, which adds the count into ``count`` where one is given: x[m].mean()
    reads m once less); several loops (a strided 2-d x), or one of ``many`` (more than
    cpp_sums.MAX_SELECTED_SUMS) selected sums of the stage: written into a scratch buffer
    by the loop nest, then added (kiln_pairwise_run, one instance per dtype: a
    kiln_selected_sum each cost ~0.1 s of g++, and azimint's 100 bins' means took 24 s).
    On one thread."""
    buffered = str(cast).lower()
    if len(inner) == 1 and not many:
        var, n = inner[0]
        lines = []
        for name, value, tp in (("sel", sel, "bool"), ("term", v, c_type)):
            lines += [f"auto {acc.replace('acc', name)} = [&](int64_t {var}) -> {tp} {{"]
            lines += ["  " + s for s in needed_statements(body, value)] + [f"  return {value};", "};"]
        sel_fn, term_fn = acc.replace("acc", "sel"), acc.replace("acc", "term")
        counted = f", &{count}" if count is not None else ""
        return lines + [f"{acc} += kiln_selected_sum<{c_type}, {buffered}>({sel_fn}, {term_fn}, {n}{counted});"]
    b, k = acc.replace("acc", "cbuf"), acc.replace("acc", "ck")
    size = " * ".join(f"(int64_t)({n})" for _, n in inner)
    loop = needed_statements(body, f"{v} {sel}") + [f"{b}[{k}] = {v};", f"{k} += ({sel}) ? 1 : 0;"]
    return [f"{c_type}* {b} = ({c_type}*)kiln_scratch(sizeof({c_type}) * ({size}));",
            f"int64_t {k} = 0;"] + loop_nest(inner, loop, [], parallel=False, simd=False) + \
        [f"{acc} += kiln_pairwise_run<{c_type}, {buffered}>({b}, {k});", f"free({b});"] + \
        ([f"{count} += {k};"] if count is not None else [])


def _scan_update(node: Any, em: CppEmitter, frame: Any, pre: list, names: NameSource,
                 acc_dt: np.dtype, per_point: Any, point_loop: str | None, ren: Any,
                 block: int) -> list[str]:
    """A scan's statements in its loop: combine the next element into the running value
    (declared in ``pre``: one per point when blocked, ``block`` points) and store it. Integers combine in
    uint64_t and wrap to the result's width, as NumPy's loops do (no signed overflow)."""
    acc_name = names.temp().replace("t", "acc")
    ref = per_point(acc_name)
    c_type = ctype(acc_dt)
    init = _INIT[node.combine] if node.combine in _INIT else _init(node.combine[-3:], acc_dt)
    if node.combine == "sum" and acc_dt.kind == "f":
        init = "-0.0"   # -0.0 + x is x for every x: a leading -0.0 stays -0.0, as in NumPy
    elif node.combine in ("fmax", "fmin") and acc_dt.kind == "f":
        init = "__builtin_nan(\"\")"   # fmax(NaN, x) is x for every x (from -inf a leading NaN would be lost)
    if point_loop is not None:
        pre += [f"{c_type} {acc_name}[{block}];", f"{point_loop} {ref} = {init}; }}"]
    else:
        pre.append(f"{c_type} {ref} = {init};")
    v = em.cast(node.src.load(em, node_index(node, "scan", frame)), node.src.dtype, acc_dt)
    if node.combine in _RUNNING:
        # NumPy's maximum(acc, v): the new element wins ties (-0.0 then 0.0 is 0.0);
        # maximum/minimum keep a NaN accumulator, fmax/fmin a NaN element's accumulator.
        elem = names.temp()
        keep = f"{ref} {_RUNNING[node.combine]} {elem}"
        if acc_dt.kind == "f":
            nan = ref if node.combine in ("max", "min") else elem
            keep = f"{keep} || __builtin_isnan({nan})"
        return [f"const {c_type} {elem} = {v};", f"{ref} = ({keep}) ? {ref} : {elem};", f"{names.arg(node.buf)}[{names.at(write_index(node, 'scan', frame), ren)}] = {ref};"]
    sign = "+" if node.combine == "sum" else "*"
    if acc_dt.kind in "iu":
        step = f"{ref} = ({c_type})((uint64_t){ref} {sign} (uint64_t)({v}));"
    else:
        step = f"{ref} = {ref} {sign} {v};"
    return [step, f"{names.arg(node.buf)}[{names.at(write_index(node, 'scan', frame), ren)}] = {ref};"]


def _reduced_position(frame: Any) -> Affine:
    """A reduction point's position among the reduced elements, in C order (the index
    argmax/argmin return: along one axis, or flat over all of them)."""
    pos, step = Affine(0), 1
    index = frame.dim_index()
    for d in reversed(frame.axes):
        pos = pos + index[d] * step
        step = step * frame.shape[d]
    return pos
