"""Partial graphs in the dispatcher: a compiled function's family, and a break's entry.

When capture hits a graph break, the cache entry runs the graph up to the break, then an
eager segment that runs the break as Python and calls the resume function after it
(kiln/capture/partial.py builds both). The resume functions, and the helpers whose
inlining broke, are compiled functions of the same family: they share the root's lock,
records and frame-hook key, and are cached on the root (``_resumes``, ``_helpers``) so
every call of the family finds the same ones.

api.py's ``CompiledFunction`` calls in here through three methods that pass itself as
``cf``: ``_resume_function``, ``_helper`` and ``_partial_entry``; this module calls back
only through the compiled function's own methods and attributes (``_child`` makes a
family member, ``_python_is_faster`` prices a graph), never importing api.py.
"""
from __future__ import annotations

import dataclasses
import types
from typing import TYPE_CHECKING, Any

from . import as_python, logs
from .capture import capture, partial, resume
from .entries import example_inputs, graph_call, graph_names, guarded_in_c
from .guards import make_entry

if TYPE_CHECKING:   # (annotations only: api.py imports this module, not the reverse)
    from .api import CompiledFunction


def resume_function(cf: Any, code: types.CodeType, k: int, depth: int, nulls: tuple,
                     names: tuple) -> "CompiledFunction":
    """The compiled resume function at instruction ``k`` of ``code``, one per layout and
    per closure: helpers of one code with other cells (a decorator's wrapper around
    two functions) resume into their own. The resume function holds the cells, so
    their ids stay theirs while it is cached."""
    root = cf.root
    cells = tuple(map(id, cf.fn.__closure__ or ()))
    key = (code, k, depth, nulls, names, cells, id(cf.fn.__globals__))
    with root._lock:
        found = root._resumes.get(key)
        if found is None:
            fn = types.FunctionType(resume.resume_code(code, k, depth, nulls, names),
                                    cf.fn.__globals__, cf.fn.__name__, None, cf.fn.__closure__)
            found = root._resumes[key] = cf._child(fn)
            found._is_resume = True   # returns continuations; never called by users
        return found


def resume_hops(cf: Any) -> int:
    """The graph breaks a graph of ``cf`` keeps alive each call: compiling it when nothing
    else of the family compiled keeps the whole family off its as-Python verdict (api.py
    ``_run_new``), so every continuation the root's call runs stays (a resume entry's
    guards, the segment, the stack passed on: ~5 us a hop where the region is a
    statement). While the root's first call runs (``_hops_from``), the hops it made so far
    (at least the one into ``cf``); 1 on a later call, 0 for a root or once something
    compiled. Real21's FIFO cost basis on 60 trades hops through resume functions about
    ten times a trade (a deque and zip the loop breaks on), and compiled the one graph
    after the loop (``np.array(realized)``, ``left @ basis``), priced with one break: 7.4x
    NumPy's time, where running it all as Python is NumPy's."""
    root = cf.root
    if not cf._is_resume or as_python.compiled_anything(root):
        return 0
    base = root._hops_from
    return 1 if base is None else max(1, partial.HOPS[0] - base)


def helper(cf: Any, fn: types.FunctionType, key: Any = None) -> "CompiledFunction | None":
    """A helper whose inlining broke, compiled on its own when the segment calls it
    (one per function, or per ``key``: the code of a closure-free function made in the
    frame, which is a new object on every call)."""
    if getattr(fn, "__kiln_disabled__", False) or getattr(fn, "__kiln_graph_break__", False):
        return None
    root = cf.root
    if key is None and fn.__closure__ is None and not fn.__defaults__ \
            and not fn.__kwdefaults__ and not getattr(fn, "__dict__", None):
        # A function made anew on every call (a nested helper the frame hook meets):
        # its code is all it is, so one helper serves every such object (the key
        # capture/partial.py gives a closure-free function made in the frame, too).
        key = fn.__code__
    key = fn if key is None else key
    with root._lock:
        found = root._helpers.get(key)
        if found is None:
            found = root._helpers[key] = cf._child(fn)
        return found


def partial_entry(cf: Any, args: tuple, kwargs: dict, first: Any, bp: Any = None) -> Any:
    """The cache entry for a break: the graph up to it, then the eager segment that
    resumes compiled after it (kiln/capture/partial.py). None: run it all as Python.
    Recaptures up to the break's region (``bp``: the plan from the function's start,
    partial.from_start); updates ``first.graph_break`` with a note when a whole
    loop/try/with statement runs as Python."""
    if first.break_reads_frame:
        return None   # a call reading the frame must see the user's own (partial.FRAME_READERS)
    bp = bp or partial.plan(cf.fn, first.break_index, first.break_depth, first.break_open_with)
    if bp is None:
        return None
    second = capture(cf.fn, args, kwargs, cf._dynamic_spec(),
                     stop_at=bp.stop_at)
    if second.stopped is None:
        return None
    for add in first.break_guards:   # the second capture stops before the break
        add(second.guards)
    built = partial.build(cf.fn, second, bp, cf._resume_function, cf._helper,
                          first.break_depth, outermost=not cf._is_resume)
    second.output.drop_values()
    if built is None:
        return None
    name = cf.fn.__qualname__
    guards, graph = second.guards, built.graph
    extra = dict(built.extra)
    body = []
    if graph is not None:
        from .runtime.backend import lowered_calls   # (lazily, as api.py's _lowered_calls)
        # priced alone unless declining it would run later iterations' graphs as Python
        note = "" if partial.runs_later_iterations(cf.fn, bp) else \
            cf._python_is_faster(graph, breaks=1 + resume_hops(cf), guards=guards, lowered=lambda: lowered_calls(
                graph, example_inputs(cf.fn, guards, built.input_codes, args, kwargs)))
        if note:
            # the code before the break runs as Python with it; what follows is priced
            # on its own (and _run_new runs it all as Python if nothing compiled)
            cf._cost_note = note
            wide = partial.from_start(cf.fn, bp, note)
            return wide and cf._partial_entry(args, kwargs, first, wide)
        example = example_inputs(cf.fn, guards, built.input_codes, args, kwargs)
        as_python.watch_loops(cf, graph)   # (before lowering copies the loop bodies)
        compiled = cf.backend(graph, example)
        extra.update(graph_names(graph, compiled, cf._respeculate))
        body += graph_call(cf.fn, cf.backend_name, graph, built.input_codes, compiled,
                           bool(second.output.side_effects) or second.output.catches)
    if built.note:
        first.graph_break = dataclasses.replace(first.graph_break,
                                                reason=f"{first.graph_break.reason} — {built.note}")
    check = make_entry(cf.fn, guards, body + built.body, extra, tag=f"{name} entry")
    fast = guarded_in_c(cf.fn, guards, body + built.body, extra, check, name)
    where = ", ".join(f"line {n}" for n in built.resumes_at) or "nowhere (it returns or raises)"
    logs.log("graph_breaks", f"{name}: partial graph ({len(graph.calls) if graph else 0} "
             f"ops before the break); resumes compiled at {where}")
    return check, guards, graph, built.resumes_at, fast, bool(bp.priced_out)
