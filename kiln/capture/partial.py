"""Partial graphs: compile what comes before a graph break, run the break as Python,
resume compiled after it.

A capture that hits a break is redone with ``stop_at`` = the first instruction of the
break's *region* (kiln/capture/resume.py: the instruction itself, or the whole try /
with statement around it). The translator's state there — value stack, live
locals — is rebuilt as Python expressions over the entry's parameters and the graph's
outputs, exactly as a return value is. The cache entry then runs::

    _kiln_out = _kiln_graph_call(x, w)          # the graph up to the break (mutations included)
    return _kiln_run(_kiln_seg, _kiln_out[0], x)  # the eager segment: the region as Python;
                                                # its exit returns a Continuation (the resume
                                                # function and its arguments), run() calls it

Array writes recorded before the break (``x[0] = 1``, ``obj.w -= g``) are mutation ops
inside the graph, so they have happened, in program order, before the segment starts;
list appends, attribute and dict stores break, so they run in the segment itself.

    >>> import numpy as np, kiln
    >>> @kiln.compile
    ... def f(x):
    ...     y = np.sin(x) * 2
    ...     kiln.graph_break()
    ...     return y + 1
    >>> f(np.zeros(100_000))[:2]           # (small arrays: the cost model runs it as Python)
    array([1., 1.])
    >>> [len(r.ops) for r in f.records]      # the graph before the break, the resume graph
    [2, 1]
"""
from __future__ import annotations

import functools
import sys
import threading
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import is_kiln_frame
from ..ir import Graph
from ..ops.registry import CALLER_FRAME_READERS
from . import bytecode_facts as bf
from . import exit_stacks
from . import frame_hook
from . import resume as R
from .breaks import BreakGraph
from .flow import statement_lines
from .rebuild import Rebuilder, _frozen_cells
from .variables.base import NULL, CellVariable, ConstantVariable, VariableTracker
from .variables.functions import NestedFunctionVariable, UserFunctionVariable


@dataclass
class BreakPlan:
    """Where the partial graph ends: ``stop_at`` in the compiled code's own indices, the
    region ``[a, b]`` in the original code's."""
    stop_at: int
    a: int
    b: int
    code: types.CodeType          # the original code object (resume functions map back)
    opened: frozenset = frozenset()   # handlers of with statements open where it starts
    priced_out: str = ""    # from_start's: the cost model's note on the graph before it


@dataclass
class Partial:
    graph: Graph | None
    input_codes: list[str]
    body: list[str]
    extra: dict[str, Any]
    resumes_at: list[int] = field(default_factory=list)   # source lines control resumes at
    helpers: list[Any] = field(default_factory=list)
    note: str = ""             # for the break record: what runs as Python beyond the break


# Builtins that read the calling frame's locals, the frame getters (sys._getframe,
# inspect.currentframe) and NumPy functions reading their caller's frame (np.bmat of a
# string). A segment or a resume function runs in a frame of its own (the live locals,
# stack values as ``___stackN``), so in a function that names one of them any break runs
# the whole function as Python; one reached inside a function it calls breaks with
# ``reads_frame`` (kiln/api.py), which does the same.
FRAME_READERS = frozenset({"locals", "vars", "dir", "eval", "exec", "_getframe", "currentframe",
                           *(f.__name__ for f in CALLER_FRAME_READERS)})
# ... which read it only when called with no argument (``vars(obj)`` reads obj).
READ_FRAME_BARE = frozenset({"vars", "dir"})


def plan(fn: types.FunctionType, break_index: int | None, depth: int,
         open_with: bool = False) -> BreakPlan | None:
    """Can this break become a partial graph? Where must capture stop? ``open_with``: the
    break enters a user context manager's with statement; only entering it runs as Python,
    its body resumes compiled with the bound ``__exit__`` on the stack."""
    code = fn.__code__
    if break_index is None or bf.is_generator_code(code) or bf.is_async_code(code):
        return None
    o = R.origin(code)
    orig, entry = o.code, o.entry
    facts = R.code_facts(orig)
    readers = FRAME_READERS.intersection(orig.co_names)
    if readers - READ_FRAME_BARE or readers & bf.called_bare(facts.names, facts.args):
        return None   # a segment's frame holds other locals than the user's (see FRAME_READERS)
    i = o.to_original(break_index)
    if not 0 <= i < len(facts.names) or facts.depth[i] is None:
        return None
    opened = R.open_withs(facts, entry) if orig is not code else frozenset()
    a, b = R.region(facts, i, open_with and depth == 0, opened)
    entering = open_with and depth == 0 and facts.names[b] == bf.WITH_ENTER
    if open_with and not entering:
        a, b = R.region(facts, i, False, opened)
    if opened and not entering and any(
            facts.names[k] == bf.WITH_ENTER and facts.handler_of[k + 1] is not None
            and facts.entries[facts.handler_of[k + 1]][2] in opened for k in range(a, b + 1)):
        return None   # an open with entered again (a loop inside it): run it all as Python
    if a < facts.prologue_len:
        return None
    # Capture stops the first time it reaches ``a`` (in a loop: maybe an earlier iteration
    # than the break's); the state there is exact, so stopping early is always correct.
    if R.is_straight(facts, a, b, opened) and facts.names[i] not in R.SINGLE_OK:
        return None
    if any(facts.depth[t] is None for t in R.exits(facts, a, b, opened)):
        return None
    return BreakPlan(o.from_original(a), a, b, orig, opened)


def runs_later_iterations(fn: types.FunctionType, bp: BreakPlan) -> bool:
    """Is the break a loop's head (its ``FOR_ITER`` over an iterator kiln did not make, or
    its back edge) in a function the loop body is not the start of? Then the graph before
    it is the tail of one iteration, run once per call, and the body resumes in another
    resume function, compiled per iteration. Running this entry as Python instead runs
    every later iteration as Python (the loop goes on in the uncompiled frame), so the
    cost model's verdict on this one graph does not decide for it: npbench's
    contour_integral priced a 5-op tail on 6x6 arrays out, and the 22-op body of every
    later iteration, inverse included, ran as Python."""
    if bp.a != bp.b:
        return False
    facts = R.code_facts(bp.code)
    o = R.origin(fn.__code__)
    entry = o.entry if o.code is not fn.__code__ else None
    return any(bp.a in (head, back) and any(head <= t <= back and t != entry
                                            for t in R.exits(facts, bp.a, bp.b, bp.opened))
               for head, back in facts.loops)


def from_start(fn: types.FunctionType, bp: BreakPlan, note: str) -> BreakPlan | None:
    """``bp`` widened to start where ``fn`` starts, for when the cost model priced the
    graph before the break out: that code then runs as Python with the break's region,
    and the code after it still resumes compiled, priced on its own (a Sinkhorn loop
    after ``f = np.zeros_like(a)`` and a with np.errstate block: the 2-op graph priced
    out ran the 50 iterations after it as Python, 740 us against 60). None where
    ``[start, b]`` is no region: a loop starting in it goes on past ``b``."""
    facts = R.code_facts(bp.code)
    o = R.origin(fn.__code__)
    a, b = max(o.entry, facts.prologue_len), bp.b
    # A break inside an expression (``np.zeros(len(rows))``, ``np.uint16(int(s) << 8)``)
    # leaves what the region pushed before it on the exit's stack: a pending call's
    # callable and its NULL-or-self slot, which only run time decides (a NULL stored to
    # ``___tmp0`` raised UnboundLocalError on 3.11 and crashed 3.12). The region runs to
    # the statement's end (_statement_end).
    b = _statement_end(facts, a, b)
    if bp.a <= a or any(a <= h <= b < back or h < a <= back <= b for h, back in facts.loops) \
            or any(facts.depth[t] is None for t in R.exits(facts, a, b, bp.opened)):
        return None
    return BreakPlan(o.from_original(a), a, b, bp.code, bp.opened, note)


def _statement_end(facts, a: int, b: int) -> int:
    """The end of the statement ``b`` is in, for a region from ``a``: the last instruction
    before the stack is back at the lowest depth it has in ``[a, b]`` (not its depth at
    ``a``: a resume function entered mid-statement starts above it, and real21's FIFO
    lots, ``np.array([l[1] for l in lots])`` after ``np.array([l[0] ...], dtype=...)``,
    left the second call's NULL on the exit's stack). Unreachable instructions do not end
    it (3.12's END_FOR after an inlined comprehension's loop: the loop's exit skips it;
    stopping there ended the region inside the statement), a return or raise does."""
    base = min((d for d in facts.depth[a:b + 1] if d is not None), default=None)
    k = b + 1
    while base is not None and k < len(facts.names) and facts.names[b] not in bf.LEAVES_FRAME:
        if facts.depth[k] is not None:
            if facts.depth[k] <= base:
                break
            b = k
        k += 1
    return b


class Continuation:
    """What a segment's exit returns: "call ``fn(*args)`` next". The outermost compiled
    function runs them in a loop (:func:`run`), so a loop that resumes compiled once per
    iteration never deepens the Python stack."""
    __slots__ = ("fn", "args")

    def __init__(self, fn: Callable, *args: Any) -> None:
        self.fn = fn
        self.args = args


# Continuations the outermost compiled functions ran, in this process (one list item: an
# increment is ~30 ns of a hop's ~5 us). kiln/family.py ``resume_hops`` reads it while a
# family's first call runs: a graph that family compiles late keeps every hop alive.
HOPS = [0]
# While a root's call that compiled runs (api.py ``_run_new``), how many times its
# continuations entered each resume function (as_python.hops_outweigh prices each one's
# graph by it), and under SEGMENTS how many outermost segments ran (3.12 runs the rest of
# a function in the segment, with no continuation); None otherwise (a hop pays one more
# test).
TRACE: dict | None = None
SEGMENTS = "segments"


def run(segment: Callable, *args: Any) -> Any:
    """Run an eager segment and every continuation after it; the function's result."""
    if TRACE is not None:
        TRACE[SEGMENTS] = TRACE.get(SEGMENTS, 0) + 1
    result = segment(*args)
    while type(result) is Continuation:
        HOPS[0] += 1
        if TRACE is not None:
            TRACE[result.fn] = TRACE.get(result.fn, 0) + 1
        result = result.fn(*result.args)
    return result


class Hooked:
    """One entry's way of running its segment with the frame hook active, the calls it
    intercepts compiled by ``factory`` (the compiled function's own helpers), then, when
    ``outermost``, its continuations (as :func:`run`). After QUIET_RUNS runs in a row in
    which the hook replaced no call (every helper the segment met ran as Python: on a
    verdict, or flagged by another compiled function), the segment runs without the hook:
    under any eval-frame function CPython stops inlining Python calls, which cost
    scikit-learn's rbf_kernel, called from a compiled function, ~7% of its time on its own
    argument checks. The entry's guards held for each of those runs (same shapes, dtypes,
    branches), so a later call through it meets the same helpers."""
    QUIET_RUNS = 8
    __slots__ = ("factory", "outermost", "quiet")

    def __init__(self, factory: Callable, outermost: bool) -> None:
        self.factory, self.outermost, self.quiet = factory, outermost, 0

    def __call__(self, segment: Callable, *args: Any) -> Any:
        if self.quiet >= self.QUIET_RUNS:
            return run(segment, *args) if self.outermost else segment(*args)
        if self.outermost and TRACE is not None:
            TRACE[SEGMENTS] = TRACE.get(SEGMENTS, 0) + 1
        before = frame_hook.intercepted()
        result = frame_hook.run_with(self.factory, segment, *args)
        self.quiet = self.quiet + 1 if frame_hook.intercepted() == before else 0
        if self.outermost:
            while type(result) is Continuation:
                HOPS[0] += 1
                if TRACE is not None:
                    TRACE[result.fn] = TRACE.get(result.fn, 0) + 1
                result = result.fn(*result.args)
        return result


class ResumeDispatch:
    """The exit of a multi-instruction region: which locals are bound is only known at run
    time, so the segment passes ``locals()`` and this picks the resume function."""

    def __init__(self, factory: Callable, code: types.CodeType, target: int, depth: int,
                 nulls: tuple) -> None:
        self.factory, self.code, self.target, self.depth, self.nulls = factory, code, target, depth, nulls
        self.live = R.live_locals(R.code_facts(code), target)
        self._by_names: dict[tuple, Callable] = {}
        self._lock = threading.Lock()

    def __call__(self, stack: tuple, frame_locals: dict) -> Any:
        names = tuple(n for n in self.live if n in frame_locals)
        fn = self._by_names.get(names)
        if fn is None:
            with self._lock:
                fn = self._by_names.get(names)
                if fn is None:
                    fn = self.factory(self.code, self.target, self.depth, self.nulls, names)
                    self._by_names[names] = fn
        return Continuation(fn, *stack, *[frame_locals[n] for n in names])


def build(fn: types.FunctionType, result, bp: BreakPlan, resume_factory: Callable,
          helper_factory: Callable | None, break_depth: int, outermost: bool) -> Partial | None:
    """The entry body for a capture stopped at ``bp.stop_at``; None when the state there
    cannot be rebuilt (the caller then runs the whole function as Python). ``outermost``:
    the function users call (not a resume function) runs the continuations."""
    tx = result.stopped
    output = result.output
    facts = R.code_facts(bp.code)
    a, b = bp.a, bp.b
    stack = list(tx.stack)
    if len(stack) != facts.depth[a] or tx.shadowed_cells:
        return None     # (a break inside a comprehension that shadows a cell: not rebuilt)
    nulls = tuple(p for p, v in enumerate(stack) if v is NULL)
    cellvars = set(bp.code.co_cellvars)
    bound: dict[str, VariableTracker] = {}
    for name in R.live_locals(facts, a):
        if name in cellvars:
            cell = tx.cells.get(name)
            if isinstance(cell, CellVariable) and cell.contents is not None:
                bound[name] = cell.contents
        elif name in tx.locals:
            bound[name] = tx.locals[name]
    rebuild = Rebuilder(tx, output, _frozen_cells(facts, a, bp.code.co_cellvars))
    helpers = []
    output.begin_rebuild()
    try:
        replay = output.replay_code(rebuild)   # side effects before the break, in order
        exprs = []
        for p, var in enumerate(stack):
            if p in nulls:
                continue
            exprs.append(rebuild(var))
        use_hook = helper_factory is not None and frame_hook.available()
        if break_depth > 0 and facts.names[b] in bf.CALL_OPS \
                and helper_factory is not None and R.is_straight(facts, a, b, bp.opened):
            helpers = _wrap_helper(stack, nulls, facts, b, exprs, rebuild, helper_factory, use_hook)
        if facts.names[b] in bf.CALL_OPS and R.is_straight(facts, a, b, bp.opened):
            _warn_counting_user_frames(stack, nulls, facts, b, exprs, rebuild)
        exprs += [rebuild(var) for var in bound.values()]
        # a loop whose body returns ends the graph (loop_returns._return_after): the entry
        # returns its value where it returned
        returning = getattr(tx, "pending_return", None)
        if returning is not None:
            returned, value = returning
            returning = (rebuild(returned), rebuild(value))
    except BreakGraph:
        return None
    # Containers made in the frame first (one object each, however often reached), then
    # the side effects in program order.
    lines = output.scalar_prelude() + output.prebind_lines + rebuild.lines + list(replay)
    if returning is not None:
        lines += [f"if {returning[0]}:", f"    return {returning[1]}"]
    graph, input_codes = result.finish_partial()
    local_names = tuple(bound)
    if not all(n.isidentifier() for n in R.code_facts(bp.code).code.co_varnames):
        return None   # pytest's rewritten asserts use locals like ``@py_assert1``
    if R.is_straight(facts, a, b, bp.opened):
        exit_specs = []
        for t, (depth, t_nulls) in R.after_straight(facts, a, b, nulls).items():
            names = tuple(n for n in R.live_locals(facts, t) if n in bound)
            resume_fn = resume_factory(bp.code, t, depth, t_nulls, names)
            exit_specs.append(R.Exit(t, depth, t_nulls, functools.partial(Continuation, resume_fn), names))
    else:
        exit_specs = []
        kept = R.kept_nulls(facts, a, b, nulls)
        for t, depth in R.exit_depths(facts, a, b, bp.opened).items():
            t_nulls = tuple(p for p in kept if p < depth)
            exit_specs.append(R.Exit(t, depth, t_nulls,
                                     ResumeDispatch(resume_factory, bp.code, t, depth, t_nulls)))
    if not exit_stacks.proven(facts, a, b, bp.opened, nulls,
                              {e.target: (e.depth, e.nulls) for e in exit_specs}):
        return None   # an exit could store a NULL as a value, or a value as NULL: a crash
    seg_code = R.segment_code(bp.code, a, b, len(stack), nulls, local_names, exit_specs, bp.opened)
    seg = types.FunctionType(seg_code, fn.__globals__, fn.__name__, None, fn.__closure__)
    extra = {"_kiln_seg": seg}
    if use_hook:
        if not R.is_straight(facts, a, b, bp.opened):
            helpers += _region_functions(facts, a, b, fn.__globals__)
        for helper in helpers:
            if spellable(helper.__code__):
                frame_hook.flag(helper.__code__, helper_factory)
    # Calls of flagged functions made while the segment runs are compiled by kiln.
    hooked = use_hook and bool(helpers)
    runner = Hooked(helper_factory, outermost) if hooked else run if outermost else None
    if runner is None:
        body = lines + [f"return _kiln_seg({', '.join(exprs)})"]
    else:
        extra["_kiln_run"] = runner
        body = lines + [f"return _kiln_run(_kiln_seg, {', '.join(exprs)})"]
    note = ""
    if bp.priced_out or not R.is_straight(facts, a, b, bp.opened):
        lines_in = statement_lines(facts, a, b, bp.opened)
        note = (f"lines {min(lines_in)}-{max(lines_in)} run as Python (the graph before the break "
                f"{bp.priced_out.removeprefix('runs as Python: ')}); the code after them stays compiled" if bp.priced_out else
                f"the whole statement (lines {min(lines_in)}-{max(lines_in)}) runs as "
                "Python; the code before and after it stays compiled")
    return Partial(graph, input_codes, body, extra,
                   [_statement_line(facts, e.target) for e in exit_specs], helpers, note)


def spellable(code: types.CodeType) -> bool:
    """Can a cache entry spell this code's signature? A comprehension's code (parameter
    ``.0``, reached through a graph break) cannot: it always runs as Python, so it is
    never flagged for the frame hook (a dispatch per call that compiles nothing)."""
    return all(n.isidentifier() for n in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])


def _statement_line(facts, k: int) -> int | None:
    """The line a user would say control resumes at (past the POP_TOP of a call statement)."""
    while k + 1 < len(facts.names) and facts.names[k] in ("POP_TOP", "NOP"):
        k += 1
    return facts.linenos[k]


def _is_kiln_or_numpy(fn: Any) -> bool:
    """kiln's and NumPy's own Python functions are never compiled as user helpers."""
    module = getattr(fn, "__module__", None) or ""
    return module.split(".")[0] in ("kiln", "numpy")


def _region_functions(facts, a: int, b: int, fn_globals: dict) -> list:
    """User functions a region that runs as Python calls by global name."""
    found = []
    for k in R.members(facts, a, b):
        if facts.names[k] != "LOAD_GLOBAL":
            continue
        value = fn_globals.get(facts.args[k][1])
        module = getattr(value, "__module__", None) or ""
        if isinstance(value, types.FunctionType) and not _is_kiln_or_numpy(value) \
                and module not in sys.stdlib_module_names \
                and not getattr(value, "__kiln_disabled__", False) \
                and not getattr(value, "__kiln_graph_break__", False) and value not in found:
            found.append(value)
    return found


def _warn_counting_user_frames(stack, nulls, facts, a, exprs, rebuild) -> None:
    """The break is the call of ``warnings.warn`` (which capture runs as Python): the
    segment calls :func:`warn_from_segment` instead, whose ``stacklevel`` counts the
    user's frames only (pykalman's ``warnings.warn(..., stacklevel=2)`` named kiln's
    entry, not the caller of the compiled function)."""
    # (the stack is the segment's at its start, which may be before the call: the slot is
    # the callable's at the call, and the callable was on the stack already)
    depth = facts.depth[a]
    slot = bf.callable_slot(facts.names[a], facts.args[a], depth, nulls) if depth is not None else None
    if slot is None or not 0 <= slot < len(stack):
        return
    var = stack[slot]
    if isinstance(var, ConstantVariable) and var.value is warnings.warn:
        exprs[sum(1 for p in range(slot) if p not in nulls)] = rebuild.ns.ref(warn_from_segment, "c")


def warn_from_segment(message, category=None, stacklevel=1, *args, **kwargs):
    """``warnings.warn`` for a segment (the user's code run as Python at a break): the
    frames between the segment and the compiled function's caller are kiln's (entries,
    :func:`run`, the dispatcher), so ``stacklevel`` skips them, and the warning names the
    line, module and registry it names without kiln."""
    frame, level = sys._getframe(1), 1   # the segment: stacklevel 1
    if type(stacklevel) is int:
        for _ in range(stacklevel - 1):
            frame, level = frame.f_back if frame is not None else None, level + 1
            while frame is not None and is_kiln_frame(frame):
                frame, level = frame.f_back, level + 1
        stacklevel = level + 1           # (counted from here)
    return warnings.warn(message, category, stacklevel, *args, **kwargs)


def _wrap_helper(stack, nulls, facts, a, exprs, rebuild, helper_factory, use_hook: bool) -> list:
    """The break happened inside the function called here: call it through kiln, so its
    own supported parts compile. With the frame hook the call is intercepted (the function
    is returned, to be flagged); without it the callable itself is replaced (call-site
    wrapping). A function made in the frame is wrapped when it has no closure and no
    defaults (then one compiled helper per code object serves every call)."""
    slot = bf.callable_slot(facts.names[a], facts.args[a], len(stack), nulls)
    var = stack[slot]
    position = sum(1 for p in range(slot) if p not in nulls)
    if isinstance(var, NestedFunctionVariable):
        if var.closure or var.defaults or var.kwdefaults:
            return []
        wrapped = helper_factory(types.FunctionType(var.code, var.fn_globals, var.code.co_name), var.code)
        if wrapped is not None:
            exprs[position] = rebuild.ns.ref(wrapped, "helper")
        return []
    if not isinstance(var, UserFunctionVariable) or _is_kiln_or_numpy(var.fn):
        return []
    if use_hook:
        return [var.fn]
    wrapped = helper_factory(var.fn)
    if wrapped is None:
        return []
    exprs[position] = rebuild.ns.ref(wrapped, "helper")
    return [var.fn]
