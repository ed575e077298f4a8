"""Which sums of a kernel stage the C++ renderer adds in NumPy's order, and the pieces of
their text (kiln/lowering/cpp_stages.py renders them): the sums added pairwise in their own
dtype (:func:`pairwise_sums`), the statements one term needs (:func:`needed_statements`),
and the count a selected sum hands to a mean of the same mask (:func:`counted_selection`).
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from .scheduler import record


def constant_trip(n: Any) -> int | None:
    """A loop's trip count when the code names a number, else None."""
    return int(n) if isinstance(n, (int, str)) and str(n).isdigit() else None


_DEFINITION = re.compile(r"(?:const )?[A-Za-z_][\w:<>]*\s+(t\d+)\s*=\s*(.+);")
TEMP = re.compile(r"\bt\d+\b")


def needed_statements(body: list[str], value: str) -> list[str]:
    """The statements of ``body`` that ``value`` depends on, in order: a pairwise sum's term
    function computes its own term only. (Each of np.mean(x[mask_i]) for 100 masks became
    a term function holding all 100 masks: text, g++ time and work grew as the square.)
    Statements other than one temporary's definition are all kept, with what they read."""
    need = set(TEMP.findall(value))
    kept = []
    for line in reversed(body):
        m = _DEFINITION.fullmatch(line.strip())
        if m is not None and m.group(1) not in need:
            continue
        need |= set(TEMP.findall(line if m is None else m.group(2)))
        kept.append(line)
    return kept[::-1]


def term_statements(body: list[str], value: str, stores: dict, store_lines: set,
                    run: set) -> tuple[list[str], bool]:
    """The statements a pairwise sum's term ``value`` needs in a stage that also stores
    values (``store_lines``; ``stores``: a temporary stored -> (the element it is stored
    to, the loop variables of its index, the element's C type)), and whether they read
    back what the stage's loop stored, so run after that loop. A stored temporary whose
    index runs with every loop of the sum's run (``run``: one element per term) is loaded
    from where it was stored (``x = f(x); return x, np.sum(x*x)``: x*x of the stored x, f
    not computed twice); the stores themselves are no part of a term. Where the term
    would still read an array the stage writes (an in-place update), it recomputes its
    terms before the loop runs, as the fused loop read them."""
    kept = [b for b in body if b not in store_lines]
    read = []
    for i, b in enumerate(kept):
        m = _DEFINITION.fullmatch(b.strip())
        if m is None or m.group(1) not in stores:
            continue
        target, index_vars, c_type = stores[m.group(1)]
        if run <= index_vars and b.strip().removeprefix("const ").startswith(f"{c_type} "):
            kept[i] = b[:b.index("=") + 1] + f" {target};"
            read.append(kept[i])
    needed = needed_statements(kept, value)
    if any(b in read for b in needed) and not reads_written([b for b in needed if b not in read], store_lines):
        return needed, True
    return needed_statements([b for b in body if b not in store_lines], value), False


def reads_written(statements: list[str], store_lines: set) -> bool:
    """Whether ``statements`` load from an array that ``store_lines`` write (in place)."""
    written = {line.split("[")[0].strip() for line in store_lines}
    return any(re.search(rf"\b{re.escape(a)}\[", b) for a in written for b in statements
               if b not in store_lines)


# The most sums of one stage added in NumPy's pairwise order each in its own pass; past it
# the sums of one run (one loop) are added side by side, one pass (kiln_sums, grouped_sums)
MAX_PAIRWISE_SUMS = 8
# The most sums of selections x[mask] of one stage compacted each by kiln_selected_sum (a
# pass of its own and ~0.1 s of g++: azimint's 100 bins' masked means took 24 s to compile);
# past it each is written compacted into a buffer by a plain loop, then added pairwise by
# kiln_pairwise_run (one instance per dtype; cpp_stages._compacted_sum). (Kept in the
# stage's one loop as where(mask, x, 0), as before, 9 float32 or float64 sums came out in
# the loop's order, not NumPy's: 37 of 54 sums and means of 5000 elements differed.)
MAX_SELECTED_SUMS = 8


def pairwise_sums(plan: Any, kind: str, members: list, inner: list) -> tuple[set, bool]:
    """The sums of this stage added in NumPy's pairwise order, in their own dtype
    (kiln_pairwise), and whether they are the whole stage. A float sum into a result of its
    own dtype (float64 or float32 terms) over one run (a contiguous row, or a whole array
    whose loops collapsed) is bit for bit np.add.reduce's result that way; NumPy's own sums
    of float values are that order exactly (a run of any length, from 0, no buffering).
    A float sum of terms of another dtype (``x.sum(dtype=np.float32)`` of float64, the mean
    of ints or of float32 into float64) is NumPy's buffered reduction: each run cast a
    buffer of 8192 at a time, each buffer added pairwise in the sum's dtype, the buffers'
    sums in order (kiln_pairwise_buffered). Beside other reductions (``x.max()`` and
    ``x.mean()`` in one loop) such a sum is its own pass over the run, as NumPy's is. Other
    sums keep SIMD lanes: integers are exact, and float64 sums of under 8 terms, which NumPy
    adds in order from 0, are the loop's own (in double)."""
    # values computed per element for the sums alone (``w = np.abs(y)`` in
    # ``(x * w).sum(), w.sum()``: a register, never stored) are each term's own statements
    shared = [node for node, role in members if role == "row" and plan.local.get(node.buf.name) == "register"
              and node.buf.name not in plan.row_arrays]
    if plan.blocked or kind == "scalar" or not inner or not members \
            or any(role not in ("reduce", "row") for _, role in members):
        # (a stage that scans: its running value goes from one element to the next. One
        # that also stores values runs its loop for them, the sums after it, reading back
        # what it stored: term_statements; values it only keeps in registers for the sums
        # are each term's own statements, and need no loop of the stage's own)
        return set(), False
    f64 = np.dtype(np.float64)
    n = constant_trip(inner[0][1])
    picked, selected = set(), set()
    for node, role in members:
        if role != "reduce":
            continue
        src, out = np.dtype(node.src.dtype), np.dtype(node.buf.dtype)
        if node.combine == "sum" and out.name in ("float32", "float64") \
                and (src == out or src.kind in "biuf") \
                and np.dtype(plan.accumulators[node.buf.name]) in (f64, out):
            if node.select is not None:
                # x[mask].sum(): compacted in C order (cpp.py keeps the loops so), any
                # number of loops, short ones too (NumPy adds the selection pairwise)
                selected.add(node)
            elif len(inner) == 1 and not (n is not None and n < 8 and out == f64):
                picked.add(node)
            elif len(inner) > 1 and node.buf.name in plan.runs and src == out:
                # several loops in NumPy's order: each run of the last one added pairwise
                # into the sum (short runs too: NumPy adds each from 0, then into the sum)
                picked.add(node)
    if len(picked) > MAX_PAIRWISE_SUMS:
        # each would be a pass of its own and a template instance (~0.1 s of g++): a stage
        # of many sums (a histogram's bins' means) adds those of one run side by side, one
        # pass (grouped_sums); those of several loops (a buffer each) keep the stage's loop
        picked = {node for node in picked if plan.runs.get(node.buf.name, (1, None))[0] == 1}
    picked |= selected
    return picked, len(picked) == len(members) - len(shared)


def grouped_sums(terms: list, carrier: str | None) -> dict:
    """The pairwise sums of a stage added side by side (kiln_sums in the prelude): where
    more than MAX_PAIRWISE_SUMS sums of one run (``terms``' k 1, no selection, not the
    ``carrier`` that stores the stage's values) would each be a pass and a template
    instance, those of one C type, cast and chunk form a group: its first accumulator ->
    the group's terms. (Kept in the stage's loop instead, in double lanes, float32 sums
    came out 1 ulp off NumPy's in about half the cases.)"""
    alone = [t for t in terms if t[4] is None and t[5] == 1 and t[0] != carrier]
    if len(alone) <= MAX_PAIRWISE_SUMS:
        return {}
    groups: dict = {}
    for t in alone:
        groups.setdefault((t[2], t[3], t[6]), []).append(t)
    return {g[0][0]: g for g in groups.values() if len(g) > 1}


def counted_selection(node: Any, v: str, acc_dt: np.dtype, terms: list, inner: list,
                       counts: dict) -> str | None:
    """The accumulator of a selected sum (one run) of this stage whose mask ``node``, an
    int64 sum of bools, counts (the same loaded value ``v``: the emitter loads an expression
    once) and that hands no count over yet (``counts``), or None."""
    if node.combine != "sum" or len(inner) != 1 or np.dtype(acc_dt) != np.dtype(np.int64) \
            or np.dtype(node.src.dtype) != np.dtype(bool):
        return None
    return next((t[0] for t in terms if t[4] is not None and t[4] == v and t[0] not in counts), None)


def strided_terms(plan: Any, node: Any, var: str) -> bool:
    """Whether each term of the sum ``node`` over its run along ``var`` reads the arrays it
    loads only with a constant stride of 2 or more along ``var`` (x[:, ::-2].sum(1)): the
    prelude's kiln_pairwise then keeps its partial sums as scalars (W 1), as SIMD lanes GCC
    would gather the terms (slower than scalar loads on this AMD EPYC)."""
    local = plan.local
    steps = [dict(plan.rename(idx.terms)).get(var, 0)
             for buf, idx in record(node, "reduce", plan.kernel.frame).loads
             if local.get(buf.name) is None]
    return bool(steps) and all(isinstance(s, int) and abs(s) >= 2 for s in steps)


def add_once(done: dict, out: list, acc: str, code: list[str], count: str | None,
             declared: dict) -> None:
    """Append to ``out`` the statements ``code`` that add a pairwise or selected sum into
    ``acc`` (and its selection's count into ``count``), unless the stage already added the
    same sum: the same text but for the sum's own names (``acc<N>``, ``term<N>``,
    ``sel<N>``, ``cbuf<N>``, ``ck<N>``), into an accumulator of the same type and start, in
    the same list. Then ``acc`` (and ``count``) copy that sum's accumulators: both started
    at the same value and took the same additions, so the copy has their bits.
    ``x[m].sum(), x[m].mean(), np.sum(x[m])`` computed (and g++ compiled) one selected sum,
    not three. ``done``: the stage's sums so far, keyed by that text."""
    num = acc[len("acc"):]
    text = "\n".join(code)
    if count is not None:
        text = text.replace(f", &{count})", ")")   # (a count is copied beside: see below)
    key = (re.sub(rf"\b(acc|term|sel|cbuf|ck){num}\b", r"\1#", text), declared.get(acc), id(out))
    first = done.get(key)
    if first is None or (count is not None and first[1] is None) or \
            (count is not None and declared.get(count) != declared.get(first[1])):
        done.setdefault(key, (acc, count))
        out += code
        return
    out.append(f"{acc} = {first[0]};   // (the same sum)")
    if count is not None:
        out.append(f"{count} = {first[1]};")
