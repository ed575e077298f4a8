"""Arrays a loop node's body swaps in pairs (kiln/capture/loop_node.py).

Dynamic programming over two rows keeps the previous row and the one it fills, and swaps
the names at the end of each trip::

    prev, cur = np.arange(m + 1), np.zeros(m + 1, dtype=np.int64)
    for i in range(1, n + 1):            # one loop node (its inner loop a nested one)
        cur[0] = i
        for j in range(1, m + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
        prev, cur = cur, prev

A loop node carries the arrays its body writes in place, each name bound to the same
array after the trip as before; a rebound array name unrolled the loop (Levenshtein on
200x200: 200 inner loops, past the kernel budget, so the function ran as Python). Where
the names of two arrays trade their arrays, both are carried, and the body's result for
each is the other's value (the C++ printer swaps two pointers, kiln/lowering/loops.py).
After the loop each name holds its slot's final value in the array it started with: no
one can tell which object it is where the arrays were made in the function, are bound to
that one name each and are held nowhere else (no views, containers, cells or stack).
"""
from __future__ import annotations

from typing import Any

from .loops import LoopFallback
from .variables.arrays import ArrayVariable


def swapped_arrays(tx, snap: Any, end: dict, names: list) -> dict:
    """``{name: the name whose array it ends the trip with}`` for the array names among
    ``names`` (rebound and live), or LoopFallback where they are not swapped in pairs as
    the module doc says."""
    arrays = [n for n in names if isinstance(snap.locals.get(n), ArrayVariable)
              and snap.locals[n].meta.shape != ()]      # (0-d: a carried scalar)
    if not arrays:
        return {}
    starts = {id(snap.locals[n]): n for n in arrays}
    pairs = {}
    for n in arrays:
        a, b = snap.locals[n], end.get(n)
        m = starts.get(id(b))
        if m is None or m == n or end.get(m) is not a:
            raise LoopFallback(f"the loop rebinds '{n}' ({a.describe()}) other than by swapping "
                               f"it with another array ('a, b = b, a')")
        if tx.output.loop_trace is not None:
            raise LoopFallback(f"the loop swaps '{n}' and '{m}' inside another loop")
        if a.source is not None or a.base is not None or a.has_views or a.tensor \
                or a.meta != b.meta or _held(snap, a) != [n]:
            raise LoopFallback(f"the loop swaps '{n}' and '{m}', arrays not both made in the "
                               f"function, of one shape and dtype, each bound to one name alone")
        pairs[n] = m
    return pairs


def _held(snap: Any, a: ArrayVariable) -> list:
    """The names bound to ``a``; a ``None`` entry for each other place that holds it."""
    names = [k for k, v in snap.locals.items() if v is a]
    elsewhere = [v for v in snap.stack] + snap.cell_values()
    for _, saved in snap.containers:
        elsewhere += list(saved.values()) if isinstance(saved, dict) else \
            list(saved) if isinstance(saved, list) else []
    return names + [None for v in elsewhere if v is a]


def swap_results(tx, trace: Any, start: dict, end: dict, swaps: dict) -> dict:
    """``{id(array): its slot's value at the end of the trip}`` for the swapped arrays,
    each carried (written) whether or not the body writes it."""
    for n in swaps:
        trace.array(tx, start[n]).written = True
    return {id(start[n]): trace.array(tx, end[n]).node for n in swaps}
