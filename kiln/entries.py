"""What a compiled function's cache entries are made of, beyond guards: the record each
compilation leaves (explain, the CLI and logs read it), the entry body checked in C,
the AOT short path handed to C, the example inputs a graph is built for, the note
added to an error a graph raises (where in the user's code it can come from), and the
entry's lines that call a graph (with the names they read).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from .capture import GraphBreak, resume
from .guards import MISS, RUN_EAGER, fastcheck, make_body, make_entry
from .ir.passes import has_side_effects
from .ops import random as random_ops
from .ops.speculation import ResultKindChanged
from .aot.runtime import InputsOverlap


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


# A no-graph entry run in C past this many guards (an attribute read each, a few ns) is
# left to the "run as Python" verdict, which checks argument types only.
FRAMELESS_GUARDS = 16


def frameless(fn: Any, result: Any) -> bool:
    """Does a capture of ``fn`` that made no graph give an entry that runs no Python
    (fastcheck.frameless_entry_possible: ``return x``, a size capture computed)? It costs
    less than the function it stands for, so it is kept rather than run as Python, which
    costs the function plus the frame a C caller gives it (``return x``: 0.49x the plain
    call's speed as Python, 0.8x so)."""
    return result.graph is None and not result.replay and not result.output.side_effects \
        and len(result.guards) <= FRAMELESS_GUARDS \
        and fastcheck.frameless_entry_possible(fn, result.guards, result.return_code)


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
    sites: list = []
    _raise_sites(graph, sites)
    if not sites:
        return None
    return (f"(raised in the compiled graph of {name}; its operations that raise on values: "
            + "; ".join(sites) + ")")


def _raise_sites(graph: Any, sites: list) -> None:
    """The source lines of ``graph``'s ops that raise on values; a loop node's are its
    body's (``s += a[i]`` out of range, not the ``for`` line), its own where none is."""
    for node in graph.calls:
        if not node.target.raises(node.args, node.kwargs):
            continue
        body = getattr((node.kwargs or {}).get("body"), "graph", None)
        before = len(sites)
        if body is not None:
            _raise_sites(body, sites)
        src = node.meta.get("source")
        if len(sites) == before and src:
            text = f"{src[0]}:{src[1]}  {src[2].strip()}"
            if text not in sites:
                sites.append(text)


def graph_names(graph: Any, compiled: Any, respeculate: Any) -> dict:
    """The names an entry calling ``compiled`` (the backend's callable for ``graph``)
    reads: the graph, what calls it (graph_call), what a speculated op needs, and the
    generators a graph drawing random numbers puts back before a rerun."""
    return {"_kiln_graph": compiled,
            "_kiln_graph_call": fastcheck.graph_caller(compiled, *direct_path(compiled)),
            "_kiln_graph_ir": graph, "_kiln_respeculate": respeculate,
            "_kiln_ResultKindChanged": ResultKindChanged,
            "_kiln_snapshot": random_ops.snapshot,
            "_kiln_generators": tuple(random_ops.generators_in(graph.nodes)),
            "_kiln_InputsOverlap": InputsOverlap,
            "_kiln_backoff": [0, 0],   # (calls left to run as Python, the last such run's length)
            **{name: slot.bind for name, slot in generator_binders(graph)}}


def generator_binders(graph: Any) -> list[tuple[str, Any]]:
    """The entry's name for each generator slot ``graph`` draws from that a call's
    argument fills (kiln/ops/random.py PassedGenerator), in one order for graph_names,
    which binds the names, and graph_call, which calls them."""
    return [(f"_kiln_bind_generator{i}", slot)
            for i, slot in enumerate(random_ops.passed_generators(graph.nodes))]


# Arguments that overlap in memory, to a graph that writes into them (aot/runtime.py):
# the function runs as Python, NumPy's own in-place calls, rather than the graph op by
# op. (fastcheck_entry.c's SimpleEntry does the same for an entry whose body is the graph's
# call and this handler: simple_call.)
OVERLAP_HANDLER = ["except _kiln_InputsOverlap:", "    return _kiln_RUN_EAGER"]


def note_handler(note: str) -> list[str]:
    """The entry's lines adding ``note`` (raise_note) to an exception the graph raises."""
    return ["except Exception as _kiln_e:", f"    _kiln_e.add_note({note!r})", "    raise"]


def simple_call(body: list[str]) -> tuple | None:
    """The arguments fastcheck.simple_entry takes after the direct path's for an entry
    whose ``body`` (graph_call's lines) is just the graph's call: ``()``, or, with the
    overlap handler, ``(InputsOverlap, RUN_EAGER)`` (the SimpleEntry answers RUN_EAGER on
    it, as the handler does), and with the note handler the note after those (the
    SimpleEntry adds it, as the handler does); None for any other body (``return
    _kiln_RUN_EAGER`` too: a one-line body is not always the call)."""
    def is_call(line: str) -> bool:
        return line.strip().startswith("_kiln_out = _kiln_graph_call(")
    if not body or (len(body) == 1 and is_call(body[0])):
        return ()
    if len(body) < 2 or body[0] != "try:" or not is_call(body[1]):
        return None
    rest = body[2:]
    overlap = rest[:len(OVERLAP_HANDLER)] == OVERLAP_HANDLER
    rest = rest[len(OVERLAP_HANDLER):] if overlap else rest
    note = None
    if len(rest) == 3 and rest[1].startswith("    _kiln_e.add_note("):
        note = ast.literal_eval(rest[1][len("    _kiln_e.add_note("):-1])
        if rest != note_handler(note):
            return None
        rest = []
    if rest or not (overlap or note):
        return None
    return (InputsOverlap if overlap else None, RUN_EAGER if overlap else None) + \
        ((note,) if note is not None else ())


def binds_generators(graph: Any) -> bool:
    """Does the entry put generators passed in into the graph's slots before calling it
    (graph_call)? Then it is no direct call from C (fastcheck.simple_entry): the cost
    model prices the entry's Python lines."""
    return bool(random_ops.passed_generators(graph.nodes))


def graph_call(fn: Any, backend_name: str, graph: Any, input_codes: list, compiled: Any = None,
               reruns: bool = False) -> list[str]:
    """The entry's lines calling the graph (of ``fn``, on backend ``backend_name``).
    The function runs as Python from its start on an exception the graph (or an
    argument it is given) raises, and on arguments that overlap in memory (InputsOverlap):
    - in a resume function that starts inside a with statement (its body compiles):
      the exception must reach the context manager's ``__exit__``, which is in the
      function's code;
    - ``reruns``: the entry replays side effects after the graph (dict, list and
      attribute stores: capture/output.py), and those made before the failing op must
      have happened when the exception comes out, as in Python. Rerun as Python, the
      function makes them in program order and raises the user's own exception. Or the
      graph runs code of a try body (OutputGraph.catches): rerun as Python, the exception
      reaches its except clause (``try: L = np.linalg.cholesky(A) except LinAlgError:``).
    That is safe when the graph wrote nothing yet: no writes into arrays, or a backend
    that writes them back after the graph ran (functionalizing ones); otherwise the
    entry runs the function as Python."""
    call = f"_kiln_out = _kiln_graph_call({', '.join(input_codes)})"
    code = fn.__code__
    # Generators passed in as arguments: the graph's draws read this call's objects
    # (kiln/ops/random.py PassedGenerator), put in their slots first.
    bind = [f"{name}({slot.code})" for name, slot in generator_binders(graph)]
    # An op speculating its result's dtype (kiln/ops/speculation.py): when the data say
    # otherwise this call runs as Python, safe once nothing was written (backends that
    # functionalize write after the graph ran; ResultKindChanged is no Exception, so
    # their replay of writes on errors lets it by), and the next call recompiles.
    # A graph drawing random numbers (kiln/ops/random.py) that the entry may rerun as
    # Python puts its generators' states back first: the rerun draws them once.
    # (Only if the graph may raise: a snapshot of NumPy's global MT19937 costs ~230 us,
    # ten times a small graph's call.)
    draws = bool(random_ops.generators_in(graph.nodes)) and (
        any(n.kwargs.get("expect") for n in graph.calls)
        or any(n.target.raises(n.args, n.kwargs) for n in graph.calls))
    put_back = ["    _kiln_put_back()"] if draws else []
    respeculate = ["except _kiln_ResultKindChanged as _kiln_e:", *put_back,
                   "    return _kiln_respeculate(_kiln_graph_ir, _kiln_e)"] \
        if any(n.kwargs.get("expect") for n in graph.calls) else []
    snap = ["_kiln_put_back = _kiln_snapshot(_kiln_generators)"] if draws else []
    functionalizes = backend_name in ("aot_eager", "cpp", "triton")
    if respeculate and not functionalizes and any(has_side_effects(n) for n in graph):
        return ["return _kiln_RUN_EAGER"]
    in_with = resume.open_withs_at_entry(code)
    overlap = []
    if getattr(compiled, "writes_inputs", False):   # an AOTFunction writing its inputs
        compiled.overlap_runs_python = True
        overlap = OVERLAP_HANDLER
    if not in_with and not reruns:
        note = raise_note(graph, fn.__qualname__)
        if note is None:
            if not respeculate and not overlap:
                return bind + [call]
            return bind + (snap if respeculate else []) + ["try:", "    " + call] + respeculate + overlap
        # The traceback of an error raised inside the graph ends in kiln's code: a note
        # names the user's lines that can raise there.
        return bind + (snap if respeculate else []) + ["try:", "    " + call] + respeculate + overlap + \
            note_handler(note)
    if not functionalizes and any(has_side_effects(n) for n in graph):
        return ["return _kiln_RUN_EAGER"]
    if hasattr(compiled, "replay_on_error"):
        compiled.replay_on_error = False  # the function reruns as Python: no writes yet
    # A with's __exit__ sees KeyboardInterrupt too; stores need no rerun for it.
    caught = "BaseException" if in_with else "Exception"
    # A graph that raised ran for nothing before the Python run (a try body's cholesky of
    # a matrix that is never positive definite: 1.23x NumPy's time). After a raise the
    # next 1, 3, 7 ... 63 calls run as Python without it; a call it serves starts over.
    skip = ["if _kiln_backoff[0]:", "    _kiln_backoff[0] -= 1", "    return _kiln_RUN_EAGER"]
    back_off = ["    _kiln_backoff[1] = _kiln_backoff[0] = min(2 * _kiln_backoff[1] + 1, 63)"]
    return skip + bind + snap + ["try:", "    " + call] + respeculate + [
        f"except {caught}:", *put_back, *back_off, "    return _kiln_RUN_EAGER",
        "_kiln_backoff[1] = 0"]
