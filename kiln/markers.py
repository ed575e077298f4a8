"""Markers capture reads on functions: ``kiln.graph_break()`` ends the graph where it is
called; ``kiln.disable(fn)`` is never compiled (a call of it from compiled code is a graph
break at the call)."""
from __future__ import annotations

import functools
from typing import Any, Callable


def graph_break() -> None:
    """Inside a compiled function: end the graph here; what follows is compiled again."""


graph_break.__kiln_graph_break__ = True


def disable(fn: Callable | None = None) -> Callable:
    """Never compile ``fn``; calling it from compiled code is a graph break at the call."""
    if fn is None:
        return disable
    from .api import CompiledFunction
    if isinstance(fn, CompiledFunction):
        fn = fn.fn

    @functools.wraps(fn)
    def disabled(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    disabled.__kiln_disabled__ = True
    return disabled
