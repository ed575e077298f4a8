"""ExplainOutput: what compiling one call produced, for humans (``str``) and machines."""
from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any, Callable

from .capture.breaks import GraphBreak


@dataclass
class ExplainOutput:
    graphs: list = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list[GraphBreak] = field(default_factory=list)
    guards: list[str] = field(default_factory=list)
    ops_per_graph: list[list[str]] = field(default_factory=list)
    compile_time_s: float = 0.0
    recompile_reasons: list[str] = field(default_factory=list)
    dynamic_dims: list[str] = field(default_factory=list)
    # Per break (parallel to break_reasons): the graph compiled before it (an index into
    # ``graphs``, None when empty) and the source lines where compiled code resumes.
    break_graph_before: list = field(default_factory=list)
    break_resumes_at: list = field(default_factory=list)
    # Range loops: "file:line: loop node (...)" or "file:line: loop unrolled: <why>".
    loops: list[str] = field(default_factory=list)
    # Graphs the cost model runs as Python (kiln/runtime/cost.py): "function: reason".
    runs_as_python: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"Graph count: {self.graph_count}",
                 f"Graph break count: {self.graph_break_count}",
                 f"Op count: {sum(len(ops) for ops in self.ops_per_graph)}",
                 f"Compile time: {self.compile_time_s * 1000:.1f} ms"]
        if self.break_reasons:
            lines.append("Break reasons:")
            for i, b in enumerate(self.break_reasons, 1):
                lines.append(f"  {i}. [{b.kind}] {b.reason}")
                lines.append(f"     at {b.filename}:{b.lineno}: {b.source}")
                if b.hint:
                    lines.append(f"     hint: {b.hint}")
                if i <= len(self.break_graph_before):
                    before = self.break_graph_before[i - 1]
                    resumes = self.break_resumes_at[i - 1]
                    lines.append(f"     before it: {'Graph ' + str(before) if before is not None else 'no graph'}"
                                 f"; after it: " + (", ".join(f"compiled again from line {n}" for n in resumes)
                                                    if resumes else "runs as Python to the end"))
        for note in self.runs_as_python:
            lines.append(f"Not compiled: {note}")
        for i, (graph, ops) in enumerate(zip(self.graphs, self.ops_per_graph)):
            lines.append(f"Graph {i} ({len(ops)} ops: {op_summary(ops)}):")
            lines += ["  " + line for line in str(graph).rstrip("\n").split("\n")]
        if self.loops:
            lines.append("Loops:")
            lines += [f"  {note}" for note in self.loops]
        if self.dynamic_dims:
            lines.append("Dynamic dims: " + ", ".join(self.dynamic_dims))
        lines.append(f"Guards ({len(self.guards)}):")
        lines += [f"  {g}" for g in self.guards]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"graph_count": self.graph_count, "graph_break_count": self.graph_break_count,
                "break_reasons": [b.to_json() for b in self.break_reasons],
                "graphs": [str(g) for g in self.graphs], "guards": list(self.guards),
                "ops_per_graph": self.ops_per_graph, "compile_time_s": self.compile_time_s,
                "recompile_reasons": self.recompile_reasons, "dynamic_dims": self.dynamic_dims,
                "break_graph_before": self.break_graph_before, "break_resumes_at": self.break_resumes_at,
                "loops": self.loops, "runs_as_python": self.runs_as_python}


def build_explain_output(records: list) -> ExplainOutput:
    out = ExplainOutput()
    for rec in records:
        graph_index = None
        if rec.graph is not None and rec.ops:
            graph_index = len(out.graphs)
            out.graphs.append(rec.graph)
            out.ops_per_graph.append(list(rec.ops))
        b = rec.graph_break
        if b is not None and not any((o.kind, o.filename, o.lineno) == (b.kind, b.filename, b.lineno)
                                     for o in out.break_reasons):
            # A break inside a helper is met twice (inlining it, then compiling the helper
            # on its own): one break.
            out.break_reasons.append(b)
            out.break_graph_before.append(graph_index)
            out.break_resumes_at.append(list(getattr(rec, "resumes_at", [])))
        if getattr(rec, "runs_as_python", ""):
            out.runs_as_python.append(f"{rec.function}: {rec.runs_as_python}")
        out.guards += [g for g in rec.guards if g not in out.guards]
        out.compile_time_s += rec.compile_time_s
        out.recompile_reasons += rec.recompile_reasons
        out.loops += [n for n in getattr(rec, "loops", []) if n not in out.loops]
        out.dynamic_dims += [d for d in rec.dynamic_dims if d not in out.dynamic_dims]
    out.graph_count = len(out.graphs)
    out.graph_break_count = len(out.break_reasons)
    return out


def op_summary(ops: list[str], spelled_out: int = 16) -> str:
    """The ops of a graph for a header line: each name when there are few, otherwise each
    distinct name with its count, in order of first use (``450 matmul, 200 add``)."""
    if len(ops) <= spelled_out:
        return ", ".join(ops)
    counts: dict[str, int] = {}
    for op in ops:
        counts[op] = counts.get(op, 0) + 1
    return ", ".join(f"{n} {op}" for op, n in counts.items())


def explain(fn: Callable) -> Callable:
    """``kiln.explain(fn)(*args, **kwargs)``: run once with a fresh cache and report.

        >>> import numpy as np, kiln
        >>> out = kiln.explain(lambda x: np.exp(x) + 1)(np.ones(2))
        >>> out.graph_count, out.graph_break_count
        (1, 0)
    """
    from .api import CompiledFunction

    def run(*args: Any, **kwargs: Any):
        target = fn.fn if isinstance(fn, CompiledFunction) else fn
        bound = fn.bound_self if isinstance(fn, CompiledFunction) else None
        if bound is not None:
            target = types.MethodType(target, bound)
        dynamic = fn.dynamic if isinstance(fn, CompiledFunction) else None
        cf = CompiledFunction(target, "eager", False, dynamic, register=False)
        # The cost model judges graphs as the function's own backend would (cpp by default).
        cf.judged_as = fn.backend_name if isinstance(fn, CompiledFunction) else "cpp"
        cf(*args, **kwargs)
        return build_explain_output(cf.records)

    return run
