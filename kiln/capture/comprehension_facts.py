"""PEP 709 (CPython 3.12+): the facts of inlined comprehensions and of the exception
handlers the compiler adds around code that has no try, split from ``bytecode_facts``
(which every other opcode fact is in). 3.11 has neither: its comprehensions are functions
of their own, and none of these functions finds anything in its code."""
from __future__ import annotations

from typing import Any

from .bytecode_facts import local_accesses


# The handlers the compiler adds around code that has no try (3.12+): an inlined
# comprehension's restores the iteration variables it saved and re-raises; a generator's
# turns a StopIteration escaping the body into a RuntimeError.
_RESTORE_OPS = frozenset({"SWAP", "POP_TOP", "STORE_FAST", "STORE_FAST_STORE_FAST",
                          "STORE_FAST_MAYBE_NULL"})


def is_synthetic_handler(names: list[str], args: list, h: int) -> bool:
    """Is the handler at ``h`` one the compiler made (no try/with in the source)?"""
    if names[h] == "CALL_INTRINSIC_1" and getattr(args[h], "name", "") == \
            "INTRINSIC_STOPITERATION_ERROR":
        return True
    k = h
    while k < len(names) and names[k] in _RESTORE_OPS:
        k += 1
    return k > h and k < len(names) and names[k] == "RERAISE" and args[k] == 0


def cell_save_start(names: list[str], a: int) -> int:
    """3.12+: where an inlined comprehension that shadows a cell variable (one a closure in
    it captures) starts saving, when its protected range starts at ``a``: its prologue
    ``LOAD_FAST_AND_CLEAR r; MAKE_CELL r; SWAP`` runs before the range, leaving the cell
    out of the frame's slot, a state a partial graph cannot rebuild. ``a`` itself when
    no cell is saved there."""
    k = a
    while k > 0 and names[k - 1] in ("SWAP", "MAKE_CELL", "LOAD_FAST_AND_CLEAR"):
        k -= 1
    while k < a and names[k] != "LOAD_FAST_AND_CLEAR":
        k += 1      # a SWAP or MAKE_CELL of the code before the comprehension stays out
    return k if "MAKE_CELL" in names[k:a] else a


def comprehension_restores(names: list[str], args: list, targets: list,
                           handler_at: Any) -> tuple[frozenset, frozenset]:
    """PEP 709 (3.12+): an inlined comprehension saves each local it shadows
    (LOAD_FAST_AND_CLEAR) and stores it back after its loop and in its handler; nothing
    else reads the saved value. Returns the saves whose every restore was found and those
    restores as ``(index, name)``: liveness looks through both, so a local the
    comprehension shadows is live before it only where it is live after it (3.11's
    comprehension was a function of its own). ``handler_at(k)``: the handler covering
    instruction ``k``, or None."""
    saves, restores = set(), set()
    k = 0
    while k < len(names):
        if names[k] != "LOAD_FAST_AND_CLEAR":
            k += 1
            continue
        group = k
        while k < len(names) and names[k] == "LOAD_FAST_AND_CLEAR":
            k += 1
        shadowed = [args[j] for j in range(group, k) if isinstance(args[j], str)]
        loop = next((j for j in range(k, len(names)) if names[j] == "FOR_ITER"), None)
        h = handler_at(loop) if loop is not None else None
        if h is None or not is_synthetic_handler(names, args, h) or len(shadowed) != k - group:
            continue
        found = [_restores_from(names, args, targets[loop], shadowed),
                 _restores_from(names, args, h, shadowed)]
        if all(len(f) == len(shadowed) for f in found):
            saves.update(range(group, k))
            restores.update(*found)
    return frozenset(saves), frozenset(restores)


def _restores_from(names: list[str], args: list, k: int, shadowed: list[str]) -> set:
    """The first store of each ``shadowed`` local in the run of swaps and stores at ``k``."""
    out, pending = set(), list(shadowed)
    while pending and k < len(names) and names[k] in _RESTORE_OPS:
        for kind, var in local_accesses(names[k], args[k]):
            if kind == "def" and var in pending:
                pending.remove(var)
                out.add((k, var))
        k += 1
    return out
