"""``kiln.compile``: the dispatcher that checks the cache, captures, installs entries.

A call of a compiled function walks its cache entries (newest first); each entry is one
generated function with the user's signature that checks the entry's guards and, when they
hold, runs the compiled graph and rebuilds the return value. On a miss, under a lock:
explain the miss (recompile log, automatic dynamic dims), capture, hand the graph to the
backend, install the entry, run it. An entry whose capture hit a graph break runs the
graph up to the break, then an eager segment that runs the break as Python and calls the
resume function after it — itself a compiled function of the same family (partial graphs:
kiln/capture/partial.py); when that is not possible, the original function as Python.
Cache hits take no lock.

    >>> import numpy as np, kiln
    >>> @kiln.compile
    ... def f(x, lr):
    ...     return x - lr * x
    >>> f(np.ones(3), 0.5)
    array([0.5, 0.5, 0.5])
"""
from __future__ import annotations

import functools
import itertools
import threading
import time
import types
import weakref
from typing import Any, Callable

from . import as_python, family, fast_dispatch, logs, pickled
from .capture import DynamicSpec, capture
from .capture import frame_hook, partial
from .capture.breaks import unsupported_error
from .config import config
from .runtime import cost
from .backends import BACKENDS, available_backends, resolve_backend  # noqa: F401

_SMALL = cost.SMALL_ELEMENTS
from .errors import KilnError, warn_fallback
from .ops.speculation import ResultKindChanged
# Imported eagerly: importing the submodule kiln.explain later would rebind the package
# attribute ``kiln.explain`` (the function) to the module.
from .explain import ExplainOutput, build_explain_output  # noqa: F401
from .guards import fastcheck
from .aot import aliasing as _aot_aliasing, variant as _aot_variant
from .guards.guard import DEVICE
from .entries import (CaptureRecord, direct_path, example_inputs, frameless, graph_call,  # noqa: F401
                      binds_generators, simple_call, graph_names, guarded_in_c)
from .guards import (MISS, RUN_EAGER, CacheEntry, describe_failure, make_entry,
                     scalar_only, size_only)

_aot_aliasing.overlap_helper = fastcheck.overlap_check   # aot's per-call input overlap check
_aot_variant.plain_run_helper = fastcheck.plain_run     # a writing graph's short path in C

_all_compiled: list = []  # weakrefs to every CompiledFunction, for reset() and the CLI
_FAMILIES = itertools.count(1)


def _built_kernels(graph: Any, example: list) -> int | None:
    """The kernels compiling ``graph`` builds (the cost model's question; runtime/backend.py)."""
    from .runtime.backend import built_kernel_count
    return built_kernel_count(graph, example)


def _lowered_calls(graph: Any, example: list) -> tuple | None:
    """The calls a compiled run of ``graph`` makes (the cost model's question about a graph
    of writes; runtime/backend.py)."""
    from .runtime.backend import lowered_calls
    return lowered_calls(graph, example)


class CompiledFunction:
    """A function compiled by kiln; call it like the original.

    Where kiln's C helper builds (guards/fastcheck.c), instances are of a subclass whose
    base is the C ``Dispatcher``: a cache hit then tries the entries without running
    :meth:`__call__` as Python (same logic, written in C); misses, bound methods and
    keyword calls on 3.11 still come here."""

    def __new__(cls, *args: Any, **kwargs: Any) -> "CompiledFunction":
        if cls is CompiledFunction:
            fast = fast_dispatch.fast_class(CompiledFunction)
            if fast is not None:
                return fast.__new__(fast)
        return super().__new__(cls)

    def __init__(self, fn: Callable, backend: Any = "cpp", fullgraph: bool = False,
                 dynamic: bool | None = None, register: bool = True) -> None:
        self.bound_self = None
        self._is_resume = False
        if isinstance(fn, types.MethodType):
            self.bound_self, fn = fn.__self__, fn.__func__
        if isinstance(fn, CompiledFunction):
            fn = fn.fn
        if not isinstance(fn, types.FunctionType):
            raise KilnError(f"kiln.compile expects a Python function or method (or a "
                            f"functools.partial of one, or an object whose class defines "
                            f"__call__), got {type(fn).__name__}; wrap the call in a def")
        self.fn = fn
        self.backend_name = backend
        self.backend = resolve_backend(backend)
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.__kiln_compiled__ = fn
        functools.update_wrapper(self, fn)
        self._lock = threading.RLock()
        self.reset()
        if register:
            _all_compiled.append(weakref.ref(self))

    @property
    def _entries(self) -> tuple:
        return self._entry_tuple

    @_entries.setter
    def _entries(self, entries: tuple) -> None:
        self._entry_tuple = entries
        self._publish(entries)

    def _publish(self, entries: tuple) -> None:
        """The entries changed (the C dispatcher keeps a tuple of their check functions)."""

    def reset(self) -> None:
        self._entries = ()
        self._dynamic_marked: set = set()
        self._dynamic_scalars: set = set()
        self._result_kinds: dict = {}   # the root's: see _respeculate
        self._limit_warned = False
        self.records: list[CaptureRecord] = []
        self.calls_uncompiled = 0
        self._as_python: tuple | None = None   # (types, array positions, size limit, keywords): see __call__
        self.root = self                   # resume functions and wrapped helpers point here
        self.hook_family = next(_FAMILIES)   # the frame hook's key for this family's verdicts
        self.sized = False   # it ran as Python on a verdict other sizes may reverse
        self._quiet: tuple = (-1, False)   # (records seen, its unit compiled nothing then)
        self._hops_from: int | None = None   # partial.HOPS when its first call began (_run_new)
        self._resumes: dict[tuple, CompiledFunction] = {}
        self._helpers: dict[Any, CompiledFunction] = {}

    # -- partial graphs: the family of a compiled function ---------------------------------
    def _child(self, fn: types.FunctionType) -> "CompiledFunction":
        """A resume function or helper compiled like this one; its records go to the root's
        list (explain counts every graph of one call)."""
        root = self.root
        child = CompiledFunction(fn, root.backend_name, False, root.dynamic, register=False)
        child.root = root
        child.hook_family = root.hook_family
        child.records = root.records
        return child

    def _resume_function(self, code: types.CodeType, k: int, depth: int, nulls: tuple,
                         names: tuple) -> "CompiledFunction":
        """The compiled resume function at instruction ``k`` of ``code`` (kiln/family.py)."""
        return family.resume_function(self, code, k, depth, nulls, names)

    def _helper(self, fn: types.FunctionType, key: Any = None) -> "CompiledFunction | None":
        """A helper whose inlining broke, compiled on its own (kiln/family.py)."""
        return family.helper(self, fn, key)

    def _dynamic_spec(self) -> DynamicSpec:
        return DynamicSpec(self.dynamic, self._dynamic_marked, self._dynamic_scalars,
                           self.root._result_kinds)

    def _respeculate(self, graph: Any, e: ResultKindChanged) -> Any:
        """A speculated op of ``graph`` gave the other kind of result (real for complex, or
        the reverse; kiln/ops/speculation.py): this call runs as Python, and the entries
        holding the graph go, so the next call compiles for the kind seen."""
        root = self.root
        with root._lock:
            root._result_kinds.setdefault(e.site, set()).add(e.dtype)
            self._entries = tuple(x for x in self._entries if x.graph is not graph)
        logs.log("recompiles", f"{self.fn.__qualname__}: {e}")
        return RUN_EAGER

    def _partial_entry(self, args: tuple, kwargs: dict, first: Any, bp: Any = None) -> Any:
        """The cache entry for a break, or None: run it all as Python (kiln/family.py)."""
        return family.partial_entry(self, args, kwargs, first, bp)

    def _remember_python(self, args: tuple, kwargs: dict, limit: int | None) -> None:
        """Run later calls with arguments of these kinds as Python without checking guards
        (kiln/as_python.py)."""
        as_python.remember(self, args, kwargs, limit)

    # -- calling ----------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.bound_self is not None:
            args = (self.bound_self,) + args
        fast = self._as_python
        if fast is not None and fast[3] == tuple(kwargs) \
                and fast[0] == (*map(type, args), *map(type, kwargs.values())):
            # The cost model ran these argument types as Python, and the arrays are still
            # small: skip the guards too (they cost as much as such a call; Python is
            # right whatever they say). fastcheck_dispatch.c's dispatcher does the same.
            values = (*args, *kwargs.values())
            for i in fast[1]:
                if values[i].size > fast[2]:
                    break
            else:
                return self.fn(*args, **kwargs)
        for entry in self._entries:
            result = entry.check(*args, **kwargs)
            if result is MISS:
                continue
            if result is RUN_EAGER:
                return self.fn(*args, **kwargs)
            return result
        return self._miss(args, kwargs)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __reduce__(self):
        if self.bound_self is None and pickled.reachable_as(self, self.fn.__module__, self.fn.__qualname__):
            return self.fn.__qualname__  # @kiln.compile on a module-level def: by name
        return (pickled.restore, (self.fn, self.backend_name, self.fullgraph, self.dynamic, self.bound_self))

    def __repr__(self) -> str:
        return f"<kiln compiled {self.fn.__qualname__}: {len(self._entries)} cache entries>"

    @property
    def cache_entries(self) -> tuple:
        return self._entries

    # -- compiling ----------------------------------------------------------------------
    def _miss(self, args: tuple, kwargs: dict) -> Any:
        if self._limit_warned and len(self._entries) >= config.recompile_limit:
            # Past recompile_limit no entry is added (none for another thread to have
            # added either): the call runs uncompiled, without re-checking the entries
            # (20 string values of a mode argument: 4x NumPy's time on 1000 elements).
            self.calls_uncompiled += 1
            return self.fn(*args, **kwargs)
        # Another thread may have compiled it meanwhile: its entries are tried, outside the
        # lock (a check runs the call: a partial graph's segment calls resume functions,
        # whose own compiles take the root's lock, so holding it here deadlocked two
        # threads), and this thread compiles only if no entry came in since it looked.
        entries, tried, seen = self._entries, [], set()   # (tried keeps the seen ids' entries alive)
        while True:
            for entry in entries:       # a tuple, replaced whole under the lock
                if id(entry) in seen:
                    continue
                result = entry.check(*args, **kwargs)
                if result is RUN_EAGER:   # an entry that runs this call as Python
                    return self.fn(*args, **kwargs)
                if result is not MISS:
                    return result
            tried.append(entries)
            seen.update(map(id, entries))
            with self._lock:
                now = self._entries
                if now is entries or all(id(e) in seen for e in now):
                    marks = (set(self._dynamic_marked), set(self._dynamic_scalars))
                    with frame_hook.paused():
                        entry = self._compile(args, kwargs)
                    break
            entries = now
        try:
            return self._run_new(entry, args, kwargs)
        except BaseException:
            self._demote(entry, marks)
            raise

    def _demote(self, entry: CacheEntry | None, marks: tuple) -> None:
        """The call that compiled ``entry`` raised (a user's ValueError, NumPy's
        broadcasting error): later valid calls must compile and hit what they would have
        without it. The dims it marked dynamic are unmarked, and the entry goes last, so
        the entries of valid calls are tried first (and are the ones a recompile compares
        with); the same failing call again still finds it, without recompiling."""
        with self._lock:
            self._dynamic_marked.intersection_update(marks[0])
            self._dynamic_scalars.intersection_update(marks[1])
            if any(e is entry for e in self._entries):
                self._entries = tuple(e for e in self._entries if e is not entry) + (entry,)

    def _run_new(self, entry: CacheEntry | None, args: tuple, kwargs: dict) -> Any:
        if entry is None:
            self.calls_uncompiled += 1
            return self.fn(*args, **kwargs)
        hops, breaks, entered = 0, 0, None
        if self.root is self and self._hops_from is None:
            self._hops_from = start = partial.HOPS[0]   # (family.resume_hops reads it)
            # Each resume function's entries this call (partial.TRACE); inside another such
            # call, its counts go on (copies: dict() is one C call, another thread's hops
            # cannot change it midway).
            counts = partial.TRACE
            outer = counts is None
            if outer:
                counts = partial.TRACE = {}
            before = dict(counts)
            try:
                result = entry.check(*args, **kwargs)
            finally:
                self._hops_from = None
                after = dict(counts)
                if partial.TRACE is counts:
                    entered = {f: n - before.get(f, 0) for f, n in after.items()}
                    if outer:   # (counting stops)
                        partial.TRACE = None
            hops = partial.HOPS[0] - start
            # (as_python.hops_outweigh prices the breaks: a segment that ends the function
            # without a continuation, as 3.12's often do, costs about what a hop does)
            breaks = max(hops, entered.pop(partial.SEGMENTS, 0)) if entered is not None else 0
        else:
            result = entry.check(*args, **kwargs)
        if result is MISS and config.debug_checks:
            failed = "; ".join(describe_failure(g, s) for g, s in entry.failures(args, kwargs))
            raise AssertionError(f"kiln bug: the entry just compiled for {self.fn.__qualname__} "
                                 f"rejects the call it was made for: {failed}")
        if result is RUN_EAGER or result is MISS:
            return self.fn(*args, **kwargs)
        if entry.graph is None and entry.graph_break is not None and not (
                as_python.compiled_arrays(self) if entry.python_before else self._compiled_anything()):
            # A break before any array work (``x.tolist()``, a try statement) and nothing
            # compiled after it either: on small arrays the entry, the segment and the
            # resume functions' dispatch only cost (1.2 us of a 0.6 us call); run such
            # calls as Python, as when nothing compiles at all. Where no size decided it
            # (as_python.sized), arrays up to this call's size keep the verdict
            # (scikit-learn's euclidean_distances: 14 breaks in argument validation), and
            # so they do where the call hopped through resume functions many times
            # (as_python.MANY_HOPS).
            sized = as_python.sized(self) and hops < as_python.MANY_HOPS
            self._remember_python(args, kwargs, _SMALL if sized else None)
        elif breaks and self._priced_by_cost() \
                and (note := as_python.hops_outweigh(self, entry.graph, breaks, entered)):
            # Something compiled, but less than the breaks it keeps cost (priced before
            # them: as_python.hops_outweigh): this call's arrays and smaller run as Python.
            self.records.append(CaptureRecord(None, None, [], [], 0.0, function=self.fn.__qualname__,
                                              runs_as_python=note))
            logs.log("perf", f"{self.fn.__qualname__}: {note}")
            as_python.remember(self, args, kwargs, None, own=True)
        return result

    def after_hooked_call(self, slots: tuple) -> None:
        """The frame hook ran a call of this helper (argument ``slots`` in the frame's
        order): when its unit still compiled nothing, later calls of these kinds run as
        Python in C (an entry whose guards ignore an argument's type serves calls the
        verdict made at compile time does not cover: inspect's _static_getmro(klass)
        with ``type`` and ``ABCMeta``)."""
        as_python.after_hooked_call(self, slots)

    def _compiled_anything(self) -> bool:
        """Has any function of this one's unit compiled a graph (as_python.unit: the whole
        family for the root, a helper and its resume functions for a helper)?"""
        return as_python.compiled_anything(self)

    def _compile(self, args: tuple, kwargs: dict) -> CacheEntry | None:
        name = self.fn.__qualname__
        code = self.fn.__code__
        if not partial.spellable(code):
            # A comprehension's code (parameter ``.0``) reached through a graph break: an
            # entry cannot spell that signature, so it runs as plain Python.
            return None
        reasons: list[str] = []
        if self._entries:
            limit = config.recompile_limit
            if len(self._entries) >= limit:
                if not self._limit_warned:
                    self._warn_limit([(e, e.failures(args, kwargs)) for e in self._entries], limit)
                return None
            failures = [(e, e.failures(args, kwargs)) for e in self._entries]
            for e, failed in failures:
                reasons += [f"entry {e.index}: {describe_failure(g, seen)}" for g, seen in failed[:3]]
            newest_failed = failures[0][1]
            if self.dynamic is None:
                # an entry that fails only on sizes (the newest that does: a run-time slice
                # length's entry for 0 may fail on more than sizes)
                dims = next((d for _, failed in failures for d in [size_only(failed)] if d), [])
                if dims:
                    self._dynamic_marked.update(dims)
                    reasons.append("marking dynamic: " + ", ".join(f"{s}.shape[{d}]" for s, d in dims))
            if self.dynamic is not False:
                scalars = scalar_only(newest_failed)
                if scalars:
                    self._dynamic_scalars.update(scalars)
                    reasons.append("reading at run time: " + ", ".join(scalars))
            logs.log("recompiles", f"{name}: recompiling (cache entry {len(self._entries)}), "
                     f"because no entry's guards hold:", "\n".join(reasons))
        start = time.perf_counter()
        fast, python_before = None, False
        self._cost_note = ""
        result = capture(self.fn, args, kwargs, self._dynamic_spec())
        guards = result.guards
        graph = result.graph
        if result.graph_break is not None:
            record = result.graph_break
            logs.log("graph_breaks", f"{name}: graph break ({record.kind}) at {record.location()}",
                     f"{record.source}\n{record.reason}" + (f"\nhint: {record.hint}" if record.hint else ""))
            if self.fullgraph and record.kind != "user_error":
                raise unsupported_error(record, name) from None
            if not result.cacheable:
                return None
            if record.kind == "long_container":
                self.sized = True   # a shorter one (a smaller array's .tolist()) is captured
            resumes_at: list = []
            # A long or one-element loop runs the whole function as Python, unless it is
            # inside a call capture inlined (a helper, np.fromiter's polyfill over a
            # generator): only that call runs as Python, the rest compiles.
            made = self._partial_entry(args, kwargs, result) \
                if record.kind != "internal_error" and (
                    record.kind not in ("scalar_loop", "long_loop") or result.break_depth > 0) else None
            if made is None:
                if record.kind in ("scalar_loop", "long_loop"):
                    # The whole function runs as Python, which takes every branch itself:
                    # which way the loop's tests went (guards whose expressions grow with
                    # each step of a Newton iteration) decides nothing, and re-checking
                    # them cost 10x the call.
                    guards = guards.without_branches()
                    self.sized = True   # a smaller array's loop may be short enough
                check = make_entry(self.fn, guards, ["return _kiln_RUN_EAGER"], tag=f"{name} entry")
                fast = fastcheck.eager_entry(self.fn, guards, check, MISS)
                graph = None
                # Nothing of it compiles: on small arrays its guards (numpy-ml's
                # calc_pad_dims_2D: 34, on tuples of ints, 3 us of a 4 us call) are skipped;
                # at any size up to this call's when no size decided it (the partial
                # graph the cost model ran as Python was extern calls: scipy's _cholesky).
                sized = record.kind == "internal_error" or as_python.sized(self)
                self._remember_python(args, kwargs, _SMALL if sized else None)
            else:
                check, guards, graph, resumes_at, fast, python_before = made
        # (a resume function's graph in a family that compiled nothing yet keeps the breaks'
        # segments on every call, which running as Python would not: family.resume_hops)
        elif not frameless(self.fn, result) and (note := self._python_is_faster(
                graph, breaks=family.resume_hops(self),
                guards=guards, built=lambda: _built_kernels(
                graph, example_inputs(self.fn, guards, result.input_codes, args, kwargs)),
                lowered=lambda: _lowered_calls(
                graph, example_inputs(self.fn, guards, result.input_codes, args, kwargs)),
                steps=result.steps,
                direct=graph is not None and not result.replay and not result.output.side_effects
                and not any(n.kwargs.get("expect") for n in graph.calls) and not binds_generators(graph)
                and fastcheck.direct_entry_possible(self.fn, guards, result.input_codes,
                                                    result.return_code))):
            self._cost_note = note
            if graph is None and len(guards) > _BRANCH_GUARDS:
                guards = guards.without_branches()
            check = make_entry(self.fn, guards, ["return _kiln_RUN_EAGER"], tag=f"{name} entry")
            fast = fastcheck.eager_entry(self.fn, guards, check, MISS)
            graph = None
            # Arrays no bigger than this call's keep the verdict (a layer's reshape of a
            # (32, 3, 8, 8) batch costs the same at any size; the guards cost 2-5 us).
            self._remember_python(args, kwargs, None)
        else:
            extra = {}
            body = []
            compiled = None
            if graph is not None:
                example = example_inputs(self.fn, guards, result.input_codes, args, kwargs)
                as_python.watch_loops(self, graph)
                compiled = self.backend(graph, example)
                extra.update(graph_names(graph, compiled, self._respeculate))
                body += graph_call(self.fn, self.backend_name, graph, result.input_codes,
                                   compiled, bool(result.output.side_effects) or result.output.catches)
            # just `_kiln_out = graph(...)` (with the overlap handler of a writing graph)
            plain = None if result.replay else simple_call(body)
            body += result.replay
            body.append(f"return {result.return_code}")
            check = make_entry(self.fn, guards, body, extra, tag=f"{name} entry")
            if plain is not None:
                fast = fastcheck.simple_entry(self.fn, guards, compiled, result.input_codes,
                                              result.return_code, check, MISS,
                                              *direct_path(compiled), *plain)
            if fast is None:
                fast = guarded_in_c(self.fn, guards, body, extra, check, name)
        entry = CacheEntry(check, guards, self.fn, graph, result.graph_break, index=len(self._entries),
                           fast=fast, python_before=python_before)
        elapsed = time.perf_counter() - start
        self.records.append(CaptureRecord(graph, result.graph_break, guards.texts(),
                                          graph.op_names() if graph is not None else [],
                                          elapsed, reasons, result.dynamic_dims, name,
                                          resumes_at if result.graph_break is not None else [],
                                          self._cost_note,
                                          list(getattr(result.output, "loop_notes", []))))
        if self._cost_note:
            logs.log("perf", f"{name}: {self._cost_note}")
        if graph is not None:
            logs.log("graph", f"{name}: graph {len(self.records) - 1}"
                     + (f" (dynamic: {', '.join(result.dynamic_dims)})" if result.dynamic_dims else ""),
                     graph.python_code())
        logs.log("guards", f"{name}: cache entry {entry.index} guards", "\n".join(guards.texts()))
        # A loop left to run time because its count changed (``n_steps``): the entries
        # unrolled for earlier counts (fused) stay first for those; this one serves the rest.
        behind = getattr(result.output, "counts_at_run_time", False)
        self._entries = self._entries + (entry,) if behind else (entry,) + self._entries
        return entry

    def _python_is_faster(self, graph: Any, breaks: int = 0, guards: Any = None,
                          built: Callable | None = None, direct: bool = False,
                          lowered: Callable | None = None, steps: int = 0) -> str:
        """The cost model's verdict for the default backend (custom and reference backends
        always get their graphs): why the graph should run as Python, or ''. No graph at
        all (a loop over Python ints, code reading only shapes): nothing compiled could
        beat the function itself, whose guards would cost more than it (a ``while n != 1``
        over an int traces into a guard per iteration). An entry whose ``guards`` C checks
        costs less (_guarded_in_c); ``direct``: the entry would call the graph from C
        with its parameters (fastcheck.simple_entry), less again."""
        if not self._priced_by_cost():
            return ""
        if graph is None:
            return "runs as Python: no array operations to compile (KILN_COST_MODEL=0 compiles it anyway)"
        if guards is not None and any(g.kind == DEVICE for g in guards):
            return ""   # priced for the host: on a GPU, Python would launch a kernel per op
        c_guards = guards is not None and fastcheck.checked_in_c(self.fn, guards)
        note = cost.python_is_faster(graph, breaks, c_guards, built, direct=c_guards and direct,
                                     lowered=lowered, steps=steps) or ""
        self.sized |= bool(note) and cost.grows_with_size(graph)
        return note

    def _priced_by_cost(self) -> bool:
        """Does the cost model judge this family's graphs (the default backend's, on)?"""
        return bool(config.cost_model) and getattr(self.root, "judged_as", self.root.backend_name) == "cpp"

    def _warn_limit(self, failures: list, limit: int) -> None:
        if self._limit_warned:
            return
        self._limit_warned = True
        churn = next((describe_failure(g, seen) for _, failed in failures for g, seen in failed[:1]),
                     "unknown")
        message = (f"kiln: {self.fn.__qualname__} hit recompile_limit ({limit} cache entries); the "
                   f"guard that keeps failing is `{churn}`. Existing entries keep serving; other "
                   f"inputs now run uncompiled. Raise kiln.config.recompile_limit or make the "
                   f"changing value an argument (or use dynamic=True for sizes).")
        logs.log("recompiles", f"{self.fn.__qualname__}: recompile_limit ({limit}) reached", churn)
        warn_fallback(message, stacklevel=4)


# A function with no array work that branched this often on run-time scalars runs as
# Python under its other guards only: checking each branch again costs more than the call.
_BRANCH_GUARDS = 16

_restore = pickled.restore   # (the name pickles made before hold)


def compile(fn: Callable | None = None, *, backend: Any = "cpp", fullgraph: bool = False,
            dynamic: bool | None = None) -> Any:
    """Compile a NumPy function; usable bare (``@kiln.compile``) or with arguments.

        >>> import numpy as np, kiln
        >>> @kiln.compile(backend="eager", fullgraph=True)
        ... def f(x):
        ...     return np.sin(x) ** 2 + np.cos(x) ** 2
        >>> f(np.zeros(2))
        array([1., 1.])
    """
    for name, value, allowed in (("dynamic", dynamic, (None, True, False)), ("fullgraph", fullgraph, (True, False))):
        if all(value is not a for a in allowed):   # (1 == True: identity, not equality)
            raise KilnError(f"kiln.compile({name}={value!r}): {name} takes {' or '.join(map(repr, allowed))}")
    if fn is None:
        return lambda f: compile(f, backend=backend, fullgraph=fullgraph, dynamic=dynamic)
    if isinstance(fn, functools.partial):   # its function compiled, its arguments bound as they were
        inner = compile(fn.func, backend=backend, fullgraph=fullgraph, dynamic=dynamic)
        return functools.partial(inner, *fn.args, **fn.keywords)
    call = getattr(type(fn), "__call__", None)
    if not isinstance(fn, (types.FunctionType, types.MethodType, CompiledFunction, type)) \
            and isinstance(call, types.FunctionType):
        # an object whose class defines __call__ in Python (a model, a loss): its method
        return CompiledFunction(types.MethodType(call, fn), backend, fullgraph, dynamic)
    return CompiledFunction(fn, backend, fullgraph, dynamic)


def reset() -> None:
    """Forget every compiled graph and cache entry (kiln.config and disable marks stay)."""
    for ref in list(_all_compiled):
        cf = ref()
        if cf is None:
            _all_compiled.remove(ref)
        else:
            with cf._lock:
                cf.reset()
    frame_hook.forget()


def live_compiled_functions() -> list[CompiledFunction]:
    return [cf for cf in (r() for r in _all_compiled) if cf is not None]
