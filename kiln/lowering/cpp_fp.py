"""The C++ renderer's half of telling which op raised a floating-point flag.

Where several ops of a kernel may raise one kind (lowering/fp_flags.py ``fp_table``), the
kernel computes each op's predicate for it (ops/fp_errors.py ``raises_where``, through
:meth:`CppEmitter.raised <kiln.lowering.cpp_ops.CppEmitter.raised>`): ``own<k> |= ...``
per slot k, OR-reduced by the loops, returned as one word (bit k: slot k held somewhere),
which the kernel's entry keeps for runtime/fpwarn.py (cpp_prelude.h ``kiln_fp_own``).

The predicates cost: a 4-op chain on 1M float64 whose ops may all overflow and be invalid
(9 slots) takes ~2.5x the time of its plain body. So a kernel that writes none of its
inputs has two bodies: the plain one runs, and only when it raised a kind its ops'
predicates tell (a rare launch), and NumPy's error mode warns of it, does the body with
them run again on the same arguments (``rerun``: ``<kernel>_told_run``, launched by
runtime/fpwarn.py). A kernel that overwrites an input it reads cannot run again: where it
reads and writes such arrays at one index whose blocks of points span disjoint elements,
it keeps the old elements each block spans and reruns with the predicates only a block
that raised a told kind (``saved_arrays``); other such kernels compute them on
every launch.
(A flag the plain body's code misses asks for no second run: np.power(0.0, -inf)'s
division by zero, which glibc's pow does not raise, warns only beside another.)
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from .cpp_ops import NameSource, ctype
from .cpp_stages import render_stages


@dataclass
class ToldBody:
    lines: list = field(default_factory=list)   # the body with its ops' predicates ([]: none)
    rerun: bool = False    # it runs only after the plain body raised a told kind
    flags: dict = field(default_factory=lambda: {"mask": 0, "fired": "0u"})   # (the template's)
    slots: tuple = ()      # (bit of the word, entry index, kind) per slot of a told kind
                           # (bit -1: the op of its kind without a predicate, fp_flags.fp_table)


def told_body(plan: Any, slots: list, rewrites: bool, nest: Callable) -> ToldBody:
    """The kernel body of ``plan`` that computes ``slots`` (fp_flags.fp_table), its loops
    made by ``nest(lines, complex)``; ``rewrites``: the kernel writes an input it reads."""
    if rewrites:   # (an op told by the others' predicates needs the plain run's flags)
        slots = [s for s in slots if s[3] is not None]
    if not slots:
        return ToldBody()
    names = NameSource(plan.inplace)
    names.mark_offsets = True
    for position, (_i, _bit, node, where) in enumerate(slots):
        if where is not None:
            names.fp_slots.setdefault(node, []).append((position, where))
    lines = render_stages(plan, names)
    # the kinds whose every slot the body computes (an op lowered without its predicate,
    # an extern's, leaves its kind to the flag as before); the op without one of its kind
    # (fp_flags.fp_table), bit -1: it raised the flag of the plain run where none held
    # (a reduction lowered without its predicate, in a blocked stage: its slot is what
    # fp_table gave it before it had one, ``fallback``: the residual slot, or none)
    told = [(p if w is not None else -1, i, bit) for p, (i, bit, _n, w) in enumerate(slots)
            if w is None or p in names.fp_emitted or getattr(w, "fallback", None) is None] + \
        [(-1, i, bit) for p, (i, bit, _n, w) in enumerate(slots)
         if w is not None and p not in names.fp_emitted and getattr(w, "fallback", None) == "residual"
         and not rewrites]
    told = tuple(t for t in sorted(told, key=lambda t: (t[1], t[2]))   # (NumPy's order: fp_table)
                 if all(p in names.fp_emitted for p, _i, b in told if b == t[2] and p >= 0))
    if not any(p >= 0 for p, _i, _b in told):
        return ToldBody()
    body = ["    " + line for line in names.prologue(plan.work)] + nest(lines, names.complex)
    return ToldBody(owned_words(body, names.fp_emitted), not rewrites, told_flags(told), told)


def owned_words(body: list[str], emitted: dict[int, str]) -> list[str]:
    """``body`` keeping the slots' words (``own<k> |= ...``, cpp_ops.py; ``emitted``: slot
    -> its word's C type): declared before the loops, OR-reduced by every OpenMP loop, and
    returned as one word, bit k slot k."""
    words = ", ".join(f"own{k}" for k in sorted(emitted))
    clause = f" reduction(|:{words})"
    body = [line + clause if line.lstrip().startswith(("#pragma omp simd", "#pragma omp for"))
            else line for line in body]
    types = sorted(set(emitted.values()), reverse=True)
    return ([f"    {t} " + ", ".join(f"own{k} = 0" for k in sorted(emitted) if emitted[k] == t) + ";"
             for t in types] + body
            + ["    return " + " | ".join(f"(unsigned)own{k} << {k}" for k in sorted(emitted)) + ";"])


def told_flags(told: tuple) -> dict:
    """What the kernel's entry does with its word (cpp_kernel.cpp.j2): the kinds whose
    flag the word replaces (``mask``), and the C expression of the kinds it raised."""
    kinds: dict[int, int] = {}
    for position, _i, bit in told:
        if position >= 0:
            kinds[bit] = kinds.get(bit, 0) | 1 << position
    return {"mask": sum(kinds), "fired": " | ".join(
        f"(owned & {bits:#x}u ? {bit}u : 0u)" for bit, bits in sorted(kinds.items()))}


# Elements a block of a kernel that keeps the old elements of the arrays it overwrites
# keeps of each (``saved_arrays``): on the stack, 8 KiB an array of float64.
SAVED_BLOCK = 1024
_MARKED_END = re.compile(" \\+ \x01-?\\d+\x02$")   # (a marked offset: renderer.py)


def saved_arrays(names: NameSource, written: set, lines: list[str], loops: list,
                  flat: bool) -> tuple[tuple, int]:
    """The arrays a kernel overwrites and reads, each ``(its elements' start, C type, c0,
    extent)`` where every access to it in the kernel's bodies (``lines``) is at one
    index ``c0 * x0 + ... + offset`` of its loops (constant sizes, positive strides),
    whose points of one x0 span ``extent`` elements, at most c0 (so blocks of x0 touch
    disjoint spans: the threads' chunks too): then a block of x0 run again, after the
    old elements of its span were put back, computes what its first run did, and the
    predicates telling which op raised a kind run only for a block whose plain run
    raised it (cpp_kernel.cpp.j2 ``_blocks``); and the points of x0 per block. ((), 0)
    where any is not so (or no point's span fits a block)."""
    none: tuple[tuple, int] = ((), 0)
    if not flat or not all(str(n).isdigit() for _v, n in loops):
        return none
    text = "\n".join(lines)
    sizes = {v: int(n) for v, n in loops}
    saved, points = [], SAVED_BLOCK
    for b in names.buffers.values():
        if b.name not in written or b.name not in names.loaded:
            continue
        arg = names.args[b.name]
        at = re.findall(rf"\b{arg}\)?\[([^\[\]]*)\]", text)
        if not at or len(at) != len(re.findall(rf"\b{arg}\b", text)) or len(set(at)) != 1:
            return none
        index = at[0].strip()
        marked = _MARKED_END.search(index)
        terms = {}
        for part in (index[:marked.start()] if marked else index).split(" + "):
            coef, _, var = part.rpartition("*")
            if var not in sizes or var in terms or not (coef.isdigit() or not coef):
                return none
            terms[var] = int(coef or 1)
        c0 = terms.get(loops[0][0], 0)
        extent = 1 + sum(c * (sizes[v] - 1) for v, c in terms.items() if v != loops[0][0])
        if c0 < 1 or extent > c0 or extent > SAVED_BLOCK:
            return none
        # (its marked offset again: one that varies between kernels sharing this code is
        # their argument there too)
        saved.append((arg + (marked.group(0) if marked else ""), ctype(b.dtype), c0, extent))
        points = min(points, (SAVED_BLOCK - extent) // c0 + 1)
    return tuple(saved), points
