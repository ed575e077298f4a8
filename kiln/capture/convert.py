"""Capture one call of a function: run the translator over its bytecode and return the
graph, its guards and how to rebuild the result — or the graph break that stopped it."""
from __future__ import annotations

import inspect
import linecache
import time
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..config import config
from ..guards.guard import GuardSet
from ..ir import Graph, dce
from ..ir.fold import fold_constants
from ..ir.graph import size_ref_names
from . import bytecode_facts as bc
from .breaks import BreakGraph, GraphBreak, StopCapture
from .output import DynamicSpec, OutputGraph
from .sources import LocalSource
from .translator import InstructionTranslator
from .variables.base import LazyVariable, RealCellVariable
from .variables.errstate import break_in_body


@dataclass
class CaptureResult:
    guards: GuardSet
    graph: Graph | None = None         # None: nothing to compute (or a break)
    input_codes: list[str] = field(default_factory=list)
    return_code: str = "None"
    replay: list[str] = field(default_factory=list)   # side effects to apply after the graph
    graph_break: GraphBreak | None = None
    user_exception: BaseException | None = None
    dynamic_dims: list[str] = field(default_factory=list)
    capture_time_s: float = 0.0
    cacheable: bool = True             # False: the call itself was wrong (bad arguments)
    break_index: int | None = None     # the compiled frame's instruction the break happened at
    break_depth: int = 0               # > 0: inside a call being inlined at that instruction
    break_open_with: bool = False      # the break enters a with whose body can compile
    break_reads_frame: bool = False    # the break reads its caller's frame: all runs as Python
    break_guards: tuple = ()           # adders of the guards that decided the break
    stopped: Any = None                # stop_at capture: the root translator, stopped there
    output: Any = None
    steps: int = 0                     # instructions followed, inlined calls' too (a whole capture)

    def finish_partial(self) -> tuple[Graph | None, list[str]]:
        """Close a stopped capture's graph; its outputs are what was rebuilt so far."""
        self.output.graph.output(tuple(self.output.outputs))
        self.graph, self.input_codes = close_graph(self.output)
        return self.graph, self.input_codes


def capture(fn: types.FunctionType, args: tuple, kwargs: dict, dynamic: DynamicSpec,
            stop_at: int | None = None) -> CaptureResult:
    """Symbolically run ``fn(*args, **kwargs)``; never runs the function itself.

    With ``stop_at`` (an instruction index of ``fn``'s code), capture stops before that
    instruction and hands back the translator's state (``result.stopped``): the start of
    a partial graph (kiln/capture/partial.py)."""
    start = time.perf_counter()
    closure = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    output = OutputGraph(fn.__name__, fn.__globals__, closure, dynamic)
    result = CaptureResult(output.guards)
    result.output = output
    try:
        with np.errstate(all="ignore"):
            _run(fn, args, kwargs, output, result, stop_at)
    except StopCapture as s:
        result.stopped = s.tx
    except BreakGraph as b:
        result.graph = None
        result.graph_break = b.record
        result.user_exception = b.cause
        result.break_depth = b.depth
        result.break_open_with = b.open_with
        result.break_reads_frame = b.reads_frame
        result.break_guards = b.guards
    except Exception as e:  # a kiln bug must never cost the user a result
        if config.debug_checks:
            raise
        code = fn.__code__
        result.graph = None
        result.graph_break = GraphBreak(
            "internal_error", f"kiln capture failed: {type(e).__name__}: {e}", code.co_filename,
            code.co_firstlineno, "", "this is a kiln bug; the function runs as plain Python "
            "(set kiln.config.debug_checks = True to see the traceback)")
    if result.stopped is None:   # a stopped capture's translator goes on (partial.py)
        output.drop_values()
    result.dynamic_dims = list(dict.fromkeys(output.dynamic_dims))
    result.capture_time_s = time.perf_counter() - start
    return result


def _run(fn, args, kwargs, output: OutputGraph, result: CaptureResult, stop_at: int | None) -> None:
    code = fn.__code__
    try:
        bound = _code_signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        result.cacheable = False
        raise BreakGraph(GraphBreak("user_error", f"TypeError: {e}", code.co_filename,
                                    code.co_firstlineno, "", "the call does not match the "
                                    "function's signature"), e)
    bound.apply_defaults()
    if code.co_flags & (bc.CO_GENERATOR | bc.CO_COROUTINE | bc.CO_ASYNC_GENERATOR):
        # Calling it must return a generator (or coroutine), not run its body.
        raise BreakGraph(GraphBreak("unsupported_opcode", "generator and coroutine functions are "
                                    "not compiled (calling one must return a generator)",
                                    code.co_filename, code.co_firstlineno,
                                    linecache.getline(code.co_filename, code.co_firstlineno).strip(),
                                    "compile the function that consumes the generator instead"))
    symbolic = {name: LazyVariable(value, LocalSource(name)) for name, value in bound.arguments.items()}
    output.argument_values = dict(bound.arguments)
    cells = {name: RealCellVariable(name) for name in code.co_freevars}
    tx = InstructionTranslator(output, code, fn.__globals__, symbolic, cells, name=fn.__qualname__)
    tx.stop_at = stop_at
    try:
        ret = tx.run()
    except BreakGraph as b:
        result.break_index = tx.inst.index if tx.inst is not None else None
        at = break_in_body(b, tx.open_errstates) if tx.open_errstates else None
        if at is not None:
            result.break_index = at
        raise
    result.return_code = output.finish(tx, ret)
    result.steps = tx.steps
    result.replay = list(output.replay)
    result.graph, result.input_codes = close_graph(output)


def _code_signature(fn: types.FunctionType) -> inspect.Signature:
    """The parameters ``fn``'s code declares, which its frame binds. ``inspect.signature``
    would report a ``__signature__`` attribute instead: array-api-compat's wrappers (what
    scipy calls as ``xp.zeros``) take ``*args, **kwargs`` and advertise the wrapped
    function's parameters."""
    plain = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                               fn.__closure__)
    plain.__kwdefaults__ = fn.__kwdefaults__
    return inspect.signature(plain)


def close_graph(output: OutputGraph) -> tuple[Graph | None, list[str]]:
    """Drop values nobody uses and unused inputs; None when nothing is left to compute."""
    # values computed but never returned; calls of constants computed now (ir/fold.py)
    graph = dce(fold_constants(dce(output.graph)))
    named = set(size_ref_names(graph.calls))   # (np.zeros(x.shape) reads x's sizes)
    for node, code_expr in list(output.inputs):
        if not node.users and node.name not in named:
            graph.erase(node)
            output.inputs.remove((node, code_expr))
    return (graph if graph.calls or graph.output_node.args[0] else None), [c for _, c in output.inputs]
