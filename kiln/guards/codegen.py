"""Generate one Python function per cache entry: check guards, call the graph, rebuild
the return value.

The generated function has the user function's own signature (defaults included), so
Python binds arguments for us at C speed; it returns :data:`MISS` when a guard fails,
:data:`RUN_EAGER` for entries that stand for "this input path breaks the graph, run the
original function". Its text is registered with ``linecache`` so tracebacks show it.

    def _kiln_entry(x, lr):
        try:
            if not (type(x) is _kiln_ndarray1 and x.dtype == _kiln_dtype2 and x.shape == (3,)
                    and type(lr) is _kiln_type3):
                return _kiln_MISS
        except Exception:
            return _kiln_MISS
        _kiln_out = _kiln_graph_call(x, lr)
        return _kiln_out[0]
"""
from __future__ import annotations

import types
from typing import Any, Callable

from ..capture.bytecode_facts import parameter_layout
from ..capture.sources import GetItemSource, Source
from ..ir.printer import exec_source
from .guard import KEYS, GuardSet


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


MISS = _Marker("MISS")
RUN_EAGER = _Marker("RUN_EAGER")

_counter = [0]


def signature_text(code: types.CodeType) -> str:
    positional, kwonly, varargs, varkw = parameter_layout(code)
    parts = list(positional)
    if code.co_posonlyargcount:
        parts.insert(code.co_posonlyargcount, "/")
    if varargs:
        parts.append("*" + varargs)
    elif kwonly:
        parts.append("*")
    parts += kwonly
    if varkw:
        parts.append("**" + varkw)
    return ", ".join(parts)


def guard_condition(guards: GuardSet) -> str:
    parts = [f for f in guards.fast if f != "True"]
    return " and ".join(f"({p})" for p in parts) if parts else "True"


def _finish(src: str, fn: types.FunctionType, namespace: dict, tag: str) -> Callable:
    _counter[0] += 1
    filename = f"<kiln {tag} #{_counter[0]}>"
    exec_source(src, filename, namespace)
    entry = namespace["_kiln_entry"]
    # Binding errors (wrong arguments) then read exactly as calling ``fn`` would.
    entry.__code__ = entry.__code__.replace(co_name=fn.__name__, co_qualname=fn.__qualname__)
    entry.__name__, entry.__qualname__ = fn.__name__, fn.__qualname__
    entry.__defaults__ = fn.__defaults__
    entry.__kwdefaults__ = fn.__kwdefaults__
    entry.__kiln_source__ = src
    return entry


def make_entry(fn: types.FunctionType, guards: GuardSet, body: list[str],
               extra: dict[str, Any] | None = None, tag: str = "entry") -> Callable:
    """The check-and-run function of one cache entry; ``body`` runs when guards pass."""
    namespace = dict(guards.ns.values)
    namespace.update(extra or {})
    namespace["_kiln_MISS"] = MISS
    namespace["_kiln_RUN_EAGER"] = RUN_EAGER
    condition = guard_condition(guards)
    if fn.__defaults__ or fn.__kwdefaults__:
        # The entry binds omitted arguments to the defaults it copied (_finish): a
        # function given new ones (``f.__defaults__ = (...)``) misses, and recompiles.
        namespace.update(_kiln_fn=fn, _kiln_defaults=fn.__defaults__, _kiln_kwdefaults=fn.__kwdefaults__)
        condition = ("(_kiln_fn.__defaults__ is _kiln_defaults) and "
                     f"(_kiln_fn.__kwdefaults__ is _kiln_kwdefaults) and {condition}")
    lines = [f"def _kiln_entry({signature_text(fn.__code__)}):",
             "    try:",
             f"        if not ({condition}):",
             "            return _kiln_MISS",
             "    except Exception:",
             "        return _kiln_MISS"]
    lines += ["    " + line for line in body]
    return _finish("\n".join(lines) + "\n", fn, namespace, tag)


def make_body(fn: types.FunctionType, guards: GuardSet, body: list[str],
              extra: dict[str, Any] | None = None, tag: str = "entry body") -> Callable:
    """The part of an entry after its guards, as a function of the same signature: what
    a cache entry whose guards are checked in C (fastcheck.guarded_body) runs."""
    namespace = dict(guards.ns.values)
    namespace.update(extra or {})
    namespace["_kiln_MISS"] = MISS
    namespace["_kiln_RUN_EAGER"] = RUN_EAGER
    lines = [f"def _kiln_entry({signature_text(fn.__code__)}):"] + ["    " + line for line in body]
    return _finish("\n".join(lines) + "\n", fn, namespace, tag)


def make_explainer(fn: types.FunctionType, guards: GuardSet) -> Callable:
    """A function returning ``[(guard, value seen)]`` for every guard that fails. A value
    that could not be read is the exception, without its traceback: that holds this
    frame, whose list holds the exception (a cycle keeping the call's arguments alive
    until the cycle collector ran)."""
    namespace = dict(guards.ns.values)
    namespace["_kiln_guards"] = guards.guards
    lines = [f"def _kiln_entry({signature_text(fn.__code__)}):", "    failed = []"]
    keys = {g.source.display(): i for i, g in enumerate(guards.guards) if g.kind == KEYS and g.source is not None}
    for i in keys.values():   # a dict's keys first: its items are read only where they hold
        lines += ["    try:",
                  f"        keys{i} = bool({guards.guards[i].code})",
                  "    except Exception:",
                  f"        keys{i} = False"]
    for i, guard in enumerate(guards.guards):
        # An item of a dict whose keys differ is not read: a defaultdict's missing key
        # would be inserted (a bank queue's ``busy[k % tellers]`` gained ``1: 0.0``).
        held = [f"keys{j}" for j in _keyed_by(guard.source, keys)]
        pad = "    " if held else ""
        if held:
            lines.append(f"    if {' and '.join(held)}:")
        lines += [pad + line for line in
                  ["    try:",
                   f"        ok = bool({guard.code})",
                   "    except Exception:",
                   "        ok = False",
                   "    if not ok:",
                   "        try:",
                   f"            seen = {guard.seen or 'None'}",
                   "        except Exception as e:",
                   "            seen = e.with_traceback(None)",
                   f"        failed.append((_kiln_guards[{i}], seen))"]]
    lines.append("    return failed")
    return _finish("\n".join(lines) + "\n", fn, namespace, "guard-explainer")


def _keyed_by(source: Source | None, keys: dict[str, int]) -> list[int]:
    """The KEYS guards (their indices in ``keys``: source text -> index) of the dicts that
    ``source`` reads an item of, on its way from the frame."""
    held = []
    while source is not None:
        if isinstance(source, GetItemSource) and source.base.display() in keys:
            held.append(keys[source.base.display()])
        source = getattr(source, "base", None)
    return held
