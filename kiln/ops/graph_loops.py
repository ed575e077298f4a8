"""Time-stepping loops over whole arrays: a range loop whose body is an ordinary graph.

``graph_loop`` is the second kind of loop node (kiln/ops/loops.py has the element/vector
one). Its body is a graph of whole-array work of static shape that does not read the loop
variable (``jacobi_2d``'s ``B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + ...)``, a heat step
``u = u + dt * lap(u)``, ``u, v = v, u``): capture traces it once
(kiln/capture/graph_loop.py), and it runs ``len(range(start, stop, step))`` times.

The body graph takes ``(*carried, *operands)``. It may write its carried arrays in place
(mutation ops on its placeholders: the body's compiled function writes them, as a compiled
function writes its caller's arrays); it returns the carried values it *computes* anew.
``GraphLoopBody.next`` says where each carried value of the next iteration comes from:
``("out", m)`` the body's output ``m``, ``("in", j)`` carried value ``j`` (the arrays of
``u, v = v, u`` change places). Like ``loop``, ``graph_loop`` is functional: the arrays it
carries are copied first, and its result is the tuple of final carried values
(``loop_item`` reads them).

The body runs through the backend that compiled the enclosing graph: the C++ backend
gives it its own compiled function (aot functionalization + fused kernels, compiled once
whatever the trip count, see ``compiler``); otherwise it is the body's NumPy program.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..array_kinds import is_device_array
from .meta import fresh_copy
from .registry import Category, declare


class GraphLoopBody:
    """A time-stepping loop's body graph and how its values line up (see the module doc)."""

    _count = 0

    def __init__(self, graph: Any, n_carried: int, nxt: tuple, where: str = "") -> None:
        self.graph = graph
        self.n_carried = n_carried
        self.next = nxt
        self.where = where
        GraphLoopBody._count += 1
        self.name = f"graph_loop_body_{GraphLoopBody._count}"
        graph.name = self.name
        # ``compiler(graph, example_inputs) -> (callable, written)``: set by a backend that
        # compiles the body (kiln/runtime/backend.py); None runs the body's NumPy program.
        # ``written`` (carried position -> output) says which written arrays the compiled
        # body returns as new arrays instead of writing them in place.
        self.compiler: Callable | None = None
        self.runner: Callable | None = None
        self.runner_next: tuple = nxt
        self.compiles = 0      # how many times the body was compiled (tests read it)

    def __repr__(self) -> str:
        return f"<kiln {self.name}>"

    def callable_for(self, args: tuple) -> Callable:
        if self.runner is None:
            if self.compiler is not None:
                self.runner, written = self.compiler(self.graph, list(args))
                self.runner_next = tuple(("out", written[k]) if kind == "in" and k in written
                                         else (kind, k) for kind, k in self.next)
            else:
                from ..ir.printer import numpy_program
                self.runner = numpy_program(self.graph, label=self.name)
            self.compiles += 1
        return self.runner

    def run(self, trips: int, state: list, operands: tuple) -> tuple:
        """``trips`` iterations on ``state`` (arrays it owns: written in place)."""
        if trips <= 0:
            return tuple(state)
        fn = self.callable_for(tuple(state) + operands)
        nxt = self.runner_next
        outs = fn(*state, *operands)
        state = [outs[k] if kind == "out" else state[k] for kind, k in nxt]
        # Later iterations: the compiled function's short path (the arrays are the loop's
        # own, none overlaps another, their layouts are those of the first call).
        fast = getattr(fn, "plain_path", None)
        fast = fast() if fast is not None else None
        if fast is None:
            fast = lambda args: fn(*args)   # noqa: E731
        for _ in range(trips - 1):
            outs = fast((*state, *operands))
            state = [outs[k] if kind == "out" else state[k] for kind, k in nxt]
        return tuple(state)


stats = {"runs": 0, "trips": 0}   # tests and benchmarks read it


def _trips(start: Any, stop: Any, step: Any) -> int:
    return len(range(int(start), int(stop), int(step)))


def _graph_loop_impl(start: Any, stop: Any, step: Any, carried: tuple, operands: tuple,
                     body: GraphLoopBody) -> tuple:
    trips = _trips(start, stop, step)
    arrays = [v for v in carried if isinstance(v, np.ndarray)]
    others = arrays + [v for v in operands if isinstance(v, np.ndarray)]
    if any(np.may_share_memory(a, o) for k, a in enumerate(arrays)
           for m, o in enumerate(others) if m != k):
        # The caller's arrays overlap (``A`` and ``A.T``): NumPy's order of writes holds
        # only when each iteration works on the caller's own memory, op by op.
        from ..ir.printer import numpy_program
        fn = numpy_program(body.graph, label=body.name)
        state = list(carried)
        for _ in range(trips):
            outs = fn(*state, *operands)
            state = [outs[k] if kind == "out" else state[k] for kind, k in body.next]
        return tuple(state)
    # (carried arrays are copied on their device: a CuPy array by CuPy)
    state = [fresh_copy(v) if isinstance(v, np.ndarray) or is_device_array(v) else v for v in carried]
    stats["runs"] += 1
    stats["trips"] += trips
    return body.run(trips, state, tuple(operands))


def _graph_loop_meta(start: Any, stop: Any, step: Any, carried: tuple, operands: tuple,
                     body: GraphLoopBody) -> tuple:
    return tuple(carried)


def _print_graph_loop(node: Any, consts: dict, format_value: Callable, python_code: Callable) -> list:
    """The loop as runnable Python: the body as a function, then the for statement.

        graph_loop = (np.copy(A), np.copy(B),)
        for graph_loop_i in range(1, 50, 1):
            _out = graph_loop_body_1(*graph_loop, c)
            graph_loop = (graph_loop[0], _out[0],)
    """
    body: GraphLoopBody = node.kwargs["body"]
    start, stop, step, carried, operands = node.args
    lines = python_code(body.graph, consts).rstrip("\n").split("\n")
    init = ", ".join(f"np.copy({format_value(v, consts)})" for v in carried)
    rest = "".join(f", {format_value(v, consts)}" for v in operands)
    i = f"{node.name}_i"
    bounds = ", ".join(f"int({format_value(v, consts)})" if hasattr(v, "kind")
                       else format_value(v, consts) for v in (start, stop, step))
    nxt = ", ".join(f"{node.name}_out[{k}]" if kind == "out" else f"{node.name}[{k}]"
                    for kind, k in body.next)
    return lines + [f"{node.name} = ({init},)  # graph loop node: carried arrays",
                    f"for {i} in range({bounds}):",
                    f"    {node.name}_out = {body.name}(*{node.name}{rest})",
                    f"    {node.name} = ({nxt},)"]


def _graph_loop_python_us(node: Any, per_op_us: Callable) -> float | None:
    """The loop run as Python: its trips times its body's ops; None for a run-time count."""
    start, stop, step = node.args[:3]
    if not all(type(v) is int for v in (start, stop, step)):
        return None
    body: GraphLoopBody = node.kwargs["body"]
    per_trip = sum(per_op_us(n) for n in body.graph.calls)
    return len(range(start, stop, step)) * per_trip


graph_loop = declare("graph_loop", Category.EXTERN, _graph_loop_impl,
                     inputs=("start", "stop", "step", "carried", "operands"),
                     params={"body": None}, meta=_graph_loop_meta, may_raise=True,
                     print_python=_print_graph_loop,
                     doc="for _ in range(start, stop, step): carried = body(*carried, *operands) "
                         "(a body of whole-array work, compiled once)")
graph_loop.python_us = _graph_loop_python_us


# One trip of the compiled loop besides its body's own calls: the Python driver calling
# the body's compiled graph (its entry, carried arrays handed on). Measured loaded on a
# 100-step np.tanh(A @ x) over 8 elements: 2.2 us a trip, 0.9 of them the body's matmul
# and kernel.
GRAPH_LOOP_TRIP_US = 1.3


def _graph_loop_compiled_us(node: Any, body_us: Callable) -> float | None:
    """The compiled loop: trips times (the driver's step + its body's compiled calls)."""
    start, stop, step = node.args[:3]
    if not all(type(v) is int for v in (start, stop, step)):
        return None
    per_trip = body_us(node.kwargs["body"].graph)
    return None if per_trip is None else len(range(start, stop, step)) * (GRAPH_LOOP_TRIP_US + per_trip)


graph_loop.compiled_us = _graph_loop_compiled_us
