"""Graph breaks: a structured record of what capture could not handle, and where.

The same record feeds logs, ``kiln.explain`` and the CLI, and becomes the message of
:class:`kiln.Unsupported` under ``fullgraph=True``.

Kinds:

- ``unsupported_call``   a callable kiln cannot capture (``print``, an unknown NumPy function)
- ``data_dependent``     control flow or a Python value that depends on array data
- ``mutation``           assigning a global or nonlocal (other stores are captured and replayed)
- ``unsupported_opcode`` bytecode capture does not handle (``try``, ``with``, ``yield``)
- ``user_error``         the function raises (capture stops; the real code raises it)
- ``explicit``           ``kiln.graph_break()``
- ``disabled``           a call to a ``kiln.disable``d function
- ``unsupported_value``  an argument or attribute of a type kiln cannot model
- ``internal_error``     a bug in kiln's capture (never a wrong result: the function runs as Python)
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ..errors import Unsupported


@dataclass(frozen=True)
class GraphBreak:
    kind: str
    reason: str       # what was unsupported, in words
    filename: str
    lineno: int | None
    source: str       # the stripped user source line
    hint: str = ""

    def location(self) -> str:
        return f"{self.filename}:{self.lineno}"

    def __str__(self) -> str:
        text = f"graph break ({self.kind}) at {self.location()}\n    {self.source}\n  {self.reason}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def to_json(self) -> dict:
        return asdict(self)


class BreakGraph(Exception):
    """Raised inside capture to stop it; carries the record (internal, never escapes)."""

    def __init__(self, record: GraphBreak, cause: BaseException | None = None, depth: int = 0,
                 guards: tuple = (), reads_frame: bool = False) -> None:
        super().__init__(str(record))
        self.record = record
        self.cause = cause
        self.depth = depth  # 0: in the compiled frame itself; more: inside an inlined call
        self.open_with = False  # it enters a user context manager: only that runs as Python
        # A call that reads its caller's frame (sys._getframe, np.bmat of a string): no
        # partial graph, the whole function runs as Python in its own frame.
        self.reads_frame = reads_frame
        # Functions adding to a GuardSet the guards that decided the break (the partial
        # graph's second capture stops before the breaking instruction): kiln/api.py.
        self.guards = guards


class StopCapture(Exception):
    """The root translator reached the instruction a partial graph ends at (internal)."""

    def __init__(self, tx) -> None:
        super().__init__("stop")
        self.tx = tx


def unsupported_error(record: GraphBreak, fn_name: str) -> Unsupported:
    return Unsupported(f"kiln.compile(fullgraph=True) cannot compile '{fn_name}' in one graph:\n"
                       f"{record}\n  (remove fullgraph=True to run this part as plain Python)")


HINTS = {
    "print": "move print/logging out of the compiled function, or accept a graph break here",
    "data_dependent": "branch with np.where(...) instead of Python if/while on array values, "
                      "or move the decision out of the compiled function",
    "mutation": "return the new value instead of assigning a global or nonlocal (in-place "
                "array updates and stores into lists, dicts and attributes of objects passed "
                "in are captured)",
    "numpy": "if NumPy users need this function, declare it in kiln/ops (docs/adding_an_op.md)",
    "opcode": "move this construct (try/with/yield/...) into a helper outside the compiled function",
}
