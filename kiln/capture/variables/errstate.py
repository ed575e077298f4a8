"""``with np.errstate(...):`` captured: a with block whose arguments are constant
``'ignore'`` keywords (``all``/divide/over/under/invalid) is no graph break; the calls
recorded in its body carry ``meta["errstate"]``, the kinds NumPy ignores there, which the
lowering's floating-point tables (lowering/fp_flags.py) and the graph's NumPy program
(ir/printer.py) honour. NumPy's own error mode is never set, so the caller's is in
effect outside the block whatever the body does (docs/capture.md, user context managers).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...ops.fp_errors import reads_error_mode
from .base import ConstantVariable, VariableTracker
from .user_classes import NewObjectVariable

ERRSTATE_KINDS = ("divide", "over", "under", "invalid")


def errstate(tx, args: list, kwargs: dict) -> VariableTracker | None:
    """``np.errstate(...)`` whose with body capture can record: keyword arguments among
    ``all``/divide/over/under/invalid, constants, every one ``'ignore'`` (None: the call
    breaks and the statement is entered as Python, its body compiled under the real mode).
    The body's ops are then marked as NumPy would run them (:class:`ErrstateExitVariable`);
    NumPy's error mode itself is never changed, so the mode outside is the caller's
    whatever the body does, exceptions included."""
    if args or not kwargs or not all(k in ("all", *ERRSTATE_KINDS) and v.is_constant()
                                     and v.value == "ignore" for k, v in kwargs.items()):
        return None
    made = ErrstateVariable({k: v.value for k, v in kwargs.items()})
    made.made_at = tx.inst.index if tx.parent is None and tx.inst is not None else None
    return made


class ErrstateVariable(NewObjectVariable):
    """A ``np.errstate`` made in the frame: entered by BEFORE_WITH (:meth:`enter`); at a
    graph break in the with body the statement runs as Python, with a new errstate of the
    same arguments (:meth:`rebuild`)."""

    def __init__(self, kwargs: dict) -> None:
        super().__init__(np.errstate)
        self.kwargs = kwargs
        self.ignored = frozenset(ERRSTATE_KINDS if "all" in kwargs else kwargs)
        self.made_at: int | None = None   # the root frame's call making it

    def describe(self) -> str:
        return f"np.errstate({', '.join(f'{k}={v!r}' for k, v in self.kwargs.items())})"

    def getattr(self, tx, name: str) -> VariableTracker:
        tx.unsupported("unsupported_value", f"attribute '{name}' of {self.describe()}")

    def store_attr(self, tx, name: str, value: VariableTracker) -> None:
        tx.unsupported("mutation", f"setting attribute '{name}' of {self.describe()}")

    def rebuild(self, rebuild_value: Any, ns: Any) -> str:
        return f"{ns.ref(np.errstate, 'f')}(**{self.kwargs!r})"

    def enter(self, tx) -> None:
        """BEFORE_WITH: the stack gets the bound ``__exit__`` and ``__enter__()``'s None.
        (Not while an element loop's body is traced: its ops go to the trace's graph.)"""
        if tx.output.loop_trace is not None:
            tx.unsupported("unsupported_call", f"{self.describe()} inside a loop traced element "
                           "by element: the with statement runs as Python")
        tx.pop()
        tx.push(ErrstateExitVariable(self, tx.output.graph, set(map(id, tx.output.graph.nodes))))
        tx.push(ConstantVariable(None))
        tx.open_errstates.append(self.made_at if tx.can_enter_with(tx.inst) else None)


def break_in_body(b: Any, open_errstates: list) -> int | None:
    """A graph break inside the body of a captured errstate of the root frame (``b``, a
    BreakGraph): the instruction to break at instead, the outermost such errstate's call,
    entered as Python with its body compiled (a data-dependent ``if`` in the body had run
    the whole with statement as Python); None where the break stays (a user error, a
    frame reader, an errstate not made in the root frame, or in a try body)."""
    at = open_errstates[0]
    if at is None or b.record.kind == "user_error" or b.reads_frame:
        return None
    b.depth, b.open_with, b.guards = 0, True, ()
    return at


class ErrstateExitVariable(VariableTracker):
    """The bound ``__exit__`` of an entered :class:`ErrstateVariable`. Its normal exit's
    call marks the calls recorded since the with was entered ``meta["errstate"]`` (the
    kinds NumPy ignores there; nested: inner and outer): kernels do not warn of those
    kinds for them (lowering/fp_flags.py) and the graph's NumPy program runs them under
    that errstate (ir/printer.py), where NumPy's mode raises or a filter makes warnings
    errors. Ops that read NumPy's mode themselves at run time (NumPy scalar math, Python
    numbers' checks) break."""

    def __init__(self, cm: ErrstateVariable, graph: Any, before: set) -> None:
        self.cm, self.graph, self.before = cm, graph, before   # (ids of the nodes made before)

    def describe(self) -> str:
        return f"the __exit__ of {self.cm.describe()}"

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        if tx.output.graph is not self.graph or kwargs or len(args) != 3 \
                or not all(a.is_constant() and a.value is None for a in args):
            tx.unsupported("unsupported_call", f"leaving {self.cm.describe()} here")
        mark_errstate(tx, [n for n in self.graph.nodes if id(n) not in self.before], self.cm.ignored)
        tx.open_errstates.pop()
        return ConstantVariable(None)


def mark_errstate(tx, nodes: list, ignored: frozenset) -> None:
    for node in nodes:
        if node.kind != "call":
            continue
        if reads_error_mode(node.op):
            tx.unsupported("unsupported_call", f"{node.op.name} inside np.errstate(...): it "
                           "reads NumPy's error mode as it runs; the with statement runs as Python")
        node.meta["errstate"] = tuple(sorted(ignored | set(node.meta.get("errstate", ()))))
        body = node.kwargs.get("body")
        if body is not None and hasattr(body, "graph"):   # a loop node: its body's ops too
            mark_errstate(tx, body.graph.nodes, ignored)
