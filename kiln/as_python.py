"""When a compiled function runs as plain Python without checking any guard.

Once a call compiled nothing (no array work, a break before any with nothing compiled
after it, the cost model's verdict for small arrays), later calls whose arguments are of
the same kinds run as Python at once: their guards, and the entry, segment and resume
functions a break leaves, cost more than such a call (numpy-ml's calc_pad_dims_2D: 3 us
of guards on a 4 us call). Running the function as Python is right whatever the guards
say; what a verdict can cost is a graph a later call of the same kinds would have
compiled (a branch on a value), which is why it is kept per argument types (and sizes).

Two places keep verdicts:

- the root compiled function itself (``_as_python``: the types of the positional, then
  the keyword arguments, positions of arrays among them, size limit, keyword names),
  read by its dispatcher in C (guards/fastcheck.c) or Python (api.py);
- for a helper reached through the frame hook (a library's helpers: scikit-learn's
  euclidean_distances calls 44 per call, ~9 us each to dispatch), the hook itself, per
  code object and family, keyed by the frame's argument slots' types and arrays' dtypes
  (capture/frame_hook.py run_as_python): such calls never leave C.

A helper's verdict looks at the helper and its resume functions only: its own helpers
stay hooked while it runs as Python. The root's looks at the whole family: running the
root as Python turns the hook off for everything it calls.
"""
from __future__ import annotations

import types
import weakref
from typing import Any

import numpy as np

from .capture import frame_hook
from .guards import MISS, CacheEntry, fastcheck, make_entry
from .ops.loops import GIVE_UP, loop_bodies
from .runtime import cost

SMALL = cost.SMALL_ELEMENTS
# A call that compiled nothing and ran this many continuations (resume functions after
# breaks: capture/partial.py HOPS) keeps its verdict up to its own sizes even where sizes
# decided something (``sized``: a list too long to capture that a smaller call's would
# not be): at ~1-5 us a hop, its entries cost more than a smaller call's graph could
# save, and that graph would keep the hops (family.resume_hops). Real21's FIFO cost basis
# on 600 trades (2200 hops, its np.array of 300 floats too long to capture) kept
# hopping with every resume function run as Python: 9.6x NumPy's time.
MANY_HOPS = 8


def frame_slots(fn: types.FunctionType, args: tuple, kwargs: dict) -> tuple | None:
    """The values of ``fn``'s argument slots for this call, in the frame's order
    (positional, keyword-only, ``*args`` tuple, ``**kwargs`` dict); None when the call
    does not bind (it raises in the function)."""
    code = fn.__code__
    npos, nkw, posonly = code.co_argcount, code.co_kwonlyargcount, code.co_posonlyargcount
    names = code.co_varnames
    defaults = fn.__defaults__ or ()
    kwdefaults = fn.__kwdefaults__ or {}
    rest = dict(kwargs)
    slots = list(args[:npos])
    for i in range(len(slots), npos):
        if i >= posonly and names[i] in rest:
            slots.append(rest.pop(names[i]))
        elif i >= npos - len(defaults):
            slots.append(defaults[i - (npos - len(defaults))])
        else:
            return None
    for name in names[npos:npos + nkw]:
        if name in rest:
            slots.append(rest.pop(name))
        elif name in kwdefaults:
            slots.append(kwdefaults[name])
        else:
            return None
    if code.co_flags & 0x04:
        slots.append(tuple(args[npos:]))
    elif len(args) > npos:
        return None
    if code.co_flags & 0x08:
        slots.append(rest)
    elif rest:
        return None
    return tuple(slots)


def unit(cf: Any) -> list:
    """The compiled functions whose graphs decide whether ``cf`` compiles anything: the
    whole family for the root; a helper and its resume functions (and theirs) for a
    helper."""
    root = cf.root
    with root._lock:
        resumes = list(root._resumes.items())
        helpers = [h for h in root._helpers.values() if h is not None]
    if cf is root:
        return [root, *(r for _, r in resumes), *helpers]
    members, codes = [cf], {cf.fn.__code__}
    grown = True
    while grown:
        grown = False
        for key, r in resumes:
            if key[0] in codes and r.fn.__code__ not in codes:
                codes.add(r.fn.__code__)
                members.append(r)
                grown = True
    return members


def compiled_anything(cf: Any) -> bool:
    """Has any function of ``cf``'s unit compiled a graph?"""
    return any(e.graph is not None for c in unit(cf) for e in c._entries)


def compiled_arrays(cf: Any) -> bool:
    """Has any function of ``cf``'s unit compiled a graph that works on arrays (not only on
    Python numbers: a loop of ints after a break, priced at RUNTIME_TRIPS trips and as
    NumPy calls, compiled, and the break's segment made a 1.7 us call 3.4 us)?"""
    return any(e.graph is not None and any(getattr(n.val, "shape", ()) for n in e.graph.nodes)
               for c in unit(cf) for e in c._entries)


def sized(cf: Any) -> bool:
    """Did sizes decide that some function of ``cf``'s unit runs as Python (the cost model
    priced out kernel work that larger arrays would compile; a loop too long to capture
    that smaller arrays may shorten)? Then only small arrays keep a verdict."""
    return any(c.sized for c in unit(cf))


def remember(cf: Any, args: tuple, kwargs: dict, limit: int | None) -> None:
    """Run later calls of ``cf`` with arguments of these kinds as Python, without checking
    guards, while their arrays are no bigger than this call's (or ``SMALL`` elements);
    at most ``limit`` elements each: otherwise nothing is remembered. Resume functions
    (called by their segments, never by users) keep no verdict. (A compiled bound
    method's arguments start with its object: both dispatchers prepend it first.)"""
    if cf._is_resume:
        return
    if cf.root is cf:
        slots = (*args, *kwargs.values())   # the order a vectorcall passes them in
        largest = _largest(slots, exact=False)
        if limit is None or largest <= limit:
            arrays = tuple(i for i, a in enumerate(slots) if isinstance(a, np.ndarray))
            cf._as_python = (tuple(map(type, slots)), arrays, largest, tuple(kwargs))
        return
    slots = frame_slots(cf.fn, args, kwargs)
    largest = None if slots is None else _largest(slots, exact=True)
    if largest is not None and (limit is None or largest <= limit):
        frame_hook.run_as_python(cf.fn.__code__, cf.hook_family, slots, largest)


def _largest(values: tuple, exact: bool) -> int | None:
    """The size limit a verdict on ``values`` keeps: their largest array's, at least
    SMALL elements; None, with ``exact``, when an array is an ndarray subclass (the hook
    reads the sizes of exact ndarrays only)."""
    arrays = [v for v in values if isinstance(v, np.ndarray)]
    if exact and any(type(v) is not np.ndarray for v in arrays):
        return None
    return max([SMALL] + [v.size for v in arrays])


def after_hooked_call(cf: Any, slots: tuple) -> None:
    """A helper's call through the frame hook returned: remember these argument kinds
    when the helper's unit has compiled nothing (judged again only after the family
    compiled something new: its records grew)."""
    if cf.root is cf or cf._is_resume or cf.bound_self is not None:
        return
    seen = len(cf.root.records)
    if cf._quiet[0] != seen:
        cf._quiet = (seen, not compiled_anything(cf))
    if not cf._quiet[1]:
        return
    largest = _largest(slots, exact=True)
    if largest is not None and (largest <= SMALL or not sized(cf)):
        frame_hook.run_as_python(cf.fn.__code__, cf.hook_family, slots, largest)


def watch_loops(cf: Any, graph: Any) -> None:
    """When a loop of ``graph`` (one of ``cf``'s) gives up its native runner for good (a
    check failed GIVE_UP calls in a row: ``s * 31`` past int64 on every call), the
    entries holding the graph run the function as Python: the loop would, and its graph,
    entry and the loop's fallback cost more than the plain call (int_py_acc: 1.35x). Set
    before the graph is lowered, so the copies lowering makes of a body keep it."""
    ref = weakref.ref(cf)

    def gave_up(where: str) -> None:
        owner = ref()
        if owner is not None:
            run_entries_as_python(owner, graph, where)
    for body in loop_bodies(graph):
        body.gave_up = lambda where=body.where: gave_up(where)


def run_entries_as_python(cf: Any, graph: Any, where: str) -> None:
    """``cf``'s entries holding ``graph`` become entries whose same guards run the
    function as Python; explain says why."""
    note = (f"runs as Python: the loop at {where} failed its compiled checks "
            f"{GIVE_UP} calls in a row (a Python int past int64, an index out of range)")
    name = cf.fn.__qualname__
    with cf.root._lock:
        entries = []
        for e in cf._entries:
            if e.graph is graph:
                check = make_entry(cf.fn, e.guards, ["return _kiln_RUN_EAGER"], tag=f"{name} entry")
                e = CacheEntry(check, e.guards, cf.fn, None, e.graph_break, index=e.index,
                               fast=fastcheck.eager_entry(cf.fn, e.guards, check, MISS))
            entries.append(e)
        cf._entries = tuple(entries)
        for record in cf.records:
            if record.graph is graph:   # (explain: no graph, as for the cost model's verdicts)
                record.graph, record.runs_as_python = None, note
