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
from .guards.guard import DEVICE
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
# A continuation the root's call made (a break's segment, the stack handed on, the resume
# function's entry), for hops_outweigh: first_above (benchmarks/loop_kernels.py) returning
# -1 after its loop ran to the end took 0.6-1.2 us more compiled than returning from the
# loop's last trip (load 10, CPU time); FIFO's hops ~1.3 us (stop 59). (The model's
# SEGMENT_US, 3.0, also prices the segment's own work, which runs as Python either way.)
HOP_US = 1.0


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


def remember(cf: Any, args: tuple, kwargs: dict, limit: int | None, own: bool = False) -> None:
    """Run later calls of ``cf`` with arguments of these kinds as Python, without checking
    guards, while their arrays are no bigger than this call's (or ``SMALL`` elements);
    at most ``limit`` elements each: otherwise nothing is remembered; ``own``: no bigger
    than this call's, even below ``SMALL`` (a loop's trips grow with them). Resume functions
    (called by their segments, never by users) keep no verdict. (A compiled bound
    method's arguments start with its object: both dispatchers prepend it first.)"""
    if cf._is_resume:
        return
    if cf.root is cf:
        slots = (*args, *kwargs.values())   # the order a vectorcall passes them in
        largest = _largest(slots, exact=False, floor=0 if own else SMALL)
        if limit is None or largest <= limit:
            arrays = tuple(i for i, a in enumerate(slots) if isinstance(a, np.ndarray))
            cf._as_python = (tuple(map(type, slots)), arrays, largest, tuple(kwargs))
        return
    slots = frame_slots(cf.fn, args, kwargs)
    largest = None if slots is None else _largest(slots, exact=True)
    if largest is not None and (limit is None or largest <= limit):
        frame_hook.run_as_python(cf.fn.__code__, cf.hook_family, slots, largest)


def _largest(values: tuple, exact: bool, floor: int = SMALL) -> int | None:
    """The size limit a verdict on ``values`` keeps: their largest array's, at least
    ``floor`` elements; None, with ``exact``, when an array is an ndarray subclass (the
    hook reads the sizes of exact ndarrays only)."""
    arrays = [v for v in values if isinstance(v, np.ndarray)]
    if exact and any(type(v) is not np.ndarray for v in arrays):
        return None
    return max([floor] + [v.size for v in arrays])


def hops_outweigh(root: Any, graph: Any, hops: int, entered: dict) -> str:
    """Why the root's calls like the one that just compiled ``graph`` (its own graph, or
    None) should run as Python, or '': judged again at the end of that call, once its
    ``hops`` (continuations into resume functions, capture/partial.py HOPS, or the
    outermost segments run where more: 3.12 ends a function in its segment) are known.
    Each graph was priced when it was built, often before the hops it keeps: the graph
    before a break by the before-break rule (element loops as NumPy calls, runtime/cost.py
    ``_numpy_us_before_break``), the tail of a loop's iteration not at all
    (partial.runs_later_iterations). Here every graph of the family is priced as it runs
    (``cost.estimate_as_run``: loops as the interpreter runs them, elementwise work by its
    passes over arrays of known sizes, no break), and what they save
    together is set against the hops at HOP_US each, which running the call as Python
    does not make. The root's graph runs once a call, a resume function's at most as many
    times as the call entered it (``entered``: each resume function's count, capture/
    partial.py TRACE). A family with a helper (a call the frame hook compiles) is not
    judged: its graphs may run any number of times without a hop, and one that compiled
    nothing for these arguments may for others of the same types (another dtype) that the
    root's verdict would send to Python (tests/capture/test_hook_verdicts.py). first_above
    (return inside the loop) on 4 elements: the loop node, then a hop to ``return -1``,
    2.3 us against NumPy's 1.1; real22's midpoint_circle on 210x210: 98 hops through a
    ``set.add`` loop, then a graph of 6 us once, 1.8x; its minimizer_sketch: a 3-op graph of scalars in
    the deque loop's tail, 209 hops a call, 9.9x NumPy's time; its astar_grid on 50x50:
    ``np.full`` of 2500 and one element written, then 42 hops, 6.0x."""
    members = unit(root)
    if any(not c._is_resume and c is not root for c in members) \
            or any(g.kind == DEVICE for c in members for e in c._entries
                   if e.graph is not None for g in e.guards):
        return ""   # (a device's graphs: priced for the host, cost.py does not judge them)
    saved = 0.0
    priced = [graph] if graph is not None else []
    resumed = [(e.graph, entered.get(c, 0)) for c in members if c._is_resume
               for e in c._entries if e.graph is not None]
    for g, n in [(g, 1) for g in priced] + resumed:
        found = cost.estimate_as_run(g)
        if found is None:
            return ""   # work on larger arrays: compiling pays
        saved += n * max(0.0, found[0] - found[1])
    if not (priced or resumed) or saved >= hops * HOP_US:
        return ""
    graphs = len(priced) + len(resumed)
    what = f"its {graphs} graphs save" if graphs > 1 else "its graph saves"
    return (f"runs as Python (judged again after its first call): {what} at most {saved:.1f} us a call, its {hops} "
            f"graph break{'s' if hops > 1 else ''} cost about {hops * HOP_US:.1f} us; calls with "
            f"arrays no bigger than this one's run as Python (KILN_COST_MODEL=0 compiles it anyway)")


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
