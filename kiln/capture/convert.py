"""Capture one call of a function: run the translator over its bytecode and return the
graph, its guards and how to rebuild the result — or the graph break that stopped it."""
from __future__ import annotations

import inspect
import time
import types
from dataclasses import dataclass, field

import numpy as np

from ..config import config
from ..guards.guard import GuardSet
from ..ir import Graph, dce
from .breaks import BreakGraph, GraphBreak
from .output import DynamicSpec, OutputGraph
from .sources import LocalSource
from .translator import InstructionTranslator, LazyVariable, RealCellVariable


@dataclass
class CaptureResult:
    guards: GuardSet
    graph: Graph | None = None         # None: nothing to compute (or a break)
    input_codes: list[str] = field(default_factory=list)
    return_code: str = "None"
    graph_break: GraphBreak | None = None
    user_exception: BaseException | None = None
    dynamic_dims: list[str] = field(default_factory=list)
    capture_time_s: float = 0.0
    cacheable: bool = True             # False: the call itself was wrong (bad arguments)


def capture(fn: types.FunctionType, args: tuple, kwargs: dict, dynamic: DynamicSpec) -> CaptureResult:
    """Symbolically run ``fn(*args, **kwargs)``; never runs the function itself."""
    start = time.perf_counter()
    closure = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    output = OutputGraph(fn.__name__, fn.__globals__, closure, dynamic)
    result = CaptureResult(output.guards)
    try:
        with np.errstate(all="ignore"):
            _run(fn, args, kwargs, output, result)
    except BreakGraph as b:
        result.graph = None
        result.graph_break = b.record
        result.user_exception = b.cause
    except Exception as e:  # a kiln bug must never cost the user a result
        if config.debug_checks:
            raise
        code = fn.__code__
        result.graph = None
        result.graph_break = GraphBreak(
            "internal_error", f"kiln capture failed: {type(e).__name__}: {e}", code.co_filename,
            code.co_firstlineno, "", "this is a kiln bug; the function runs as plain Python "
            "(set kiln.config.debug_checks = True to see the traceback)")
    result.dynamic_dims = list(dict.fromkeys(output.dynamic_dims))
    result.capture_time_s = time.perf_counter() - start
    return result


def _run(fn, args, kwargs, output: OutputGraph, result: CaptureResult) -> None:
    code = fn.__code__
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        result.cacheable = False
        raise BreakGraph(GraphBreak("user_error", f"TypeError: {e}", code.co_filename,
                                    code.co_firstlineno, "", "the call does not match the "
                                    "function's signature"), e)
    bound.apply_defaults()
    symbolic = {name: LazyVariable(value, LocalSource(name)) for name, value in bound.arguments.items()}
    cells = {name: RealCellVariable(name) for name in code.co_freevars}
    tx = InstructionTranslator(output, code, fn.__globals__, symbolic, cells, name=fn.__qualname__)
    ret = tx.run()
    result.return_code = output.finish(tx, ret)
    graph = dce(output.graph)  # values computed but never returned
    for node, code_expr in list(output.inputs):
        if not node.users:
            graph.erase(node)
            output.inputs.remove((node, code_expr))
    result.input_codes = [c for _, c in output.inputs]
    result.graph = graph if graph.calls or graph.output_node.args[0] else None
