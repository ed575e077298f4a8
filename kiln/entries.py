"""What a compiled function's cache entries are made of, beyond guards: the record each
compilation leaves (explain, the CLI and logs read it), the entry body checked in C,
the AOT short path handed to C, the example inputs a graph is built for, and the note
added to an error a graph raises (where in the user's code it can come from).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .capture import GraphBreak
from .guards import MISS, fastcheck, make_body, make_entry


@dataclass
class CaptureRecord:
    """What one compilation produced (for explain, the CLI and logs)."""
    graph: Any
    graph_break: GraphBreak | None
    guards: list[str]
    ops: list[str]
    compile_time_s: float
    recompile_reasons: list[str] = field(default_factory=list)
    dynamic_dims: list[str] = field(default_factory=list)
    function: str = ""                  # the function or resume function compiled
    resumes_at: list = field(default_factory=list)   # a break's partial graph: lines resumed at
    runs_as_python: str = ""            # the cost model's reason for not compiling the graph
    loops: list[str] = field(default_factory=list)   # loop nodes built, loops unrolled and why


def guarded_in_c(fn: Any, guards: Any, body: list[str], extra: dict, check: Any,
                  name: str) -> Any:
    """The entry with its guards checked in C before ``body`` (any entry body: scalar
    arguments computed in Python, replayed stores, a partial graph's segment) when C
    can check every guard; None otherwise (``check`` serves alone)."""
    if not fastcheck.checked_in_c(fn, guards):
        return None
    return fastcheck.guarded_body(fn, guards, make_body(fn, guards, body, extra, tag=f"{name} entry body"),
                                  check, MISS)


def direct_path(compiled: Any) -> tuple:
    """(direct_owner, tensor_type) for fastcheck.simple_entry: an AOTFunction's cache-hit
    short path (``_direct``) is called from C for plain inputs."""
    from .aot.runtime import AOTFunction
    from .tensor import Tensor
    return (compiled, Tensor) if isinstance(compiled, AOTFunction) else (None, None)


def example_inputs(fn, guards, codes: list[str], args: tuple, kwargs: dict) -> list:
    if not codes:
        return []
    getter = make_entry(fn, guards.__class__(guards.ns), [f"return [{', '.join(codes)}]"],
                        tag="example inputs")
    return getter(*args, **kwargs)


def raise_note(graph: Any, name: str) -> str | None:
    """Where in the user's code an error raised by ``graph`` comes from: the source lines
    of its ops that raise on values (inverting a singular matrix, an index out of range)."""
    sites = []
    for node in graph.calls:
        src = node.meta.get("source")
        if node.target.raises(node.args) and src:
            text = f"{src[0]}:{src[1]}  {src[2].strip()}"
            if text not in sites:
                sites.append(text)
    if not sites:
        return None
    return (f"(raised in the compiled graph of {name}; its operations that raise on values: "
            + "; ".join(sites) + ")")
