"""``return`` inside a loop node's body: what the node carries, and how the graph ends.

kiln/capture/loop_branches.py (``_return``) records a return as an exit that ends the
loop; kiln/capture/loop_node.py asks :func:`_returns` what to carry (whether the body
returned, ``RETURNED``; its value, ``RET``, one name per item of ``return s, i``) and,
after emitting the node, :func:`_return_after` ends the graph at the loop's exit (the
partial entry returns the value where the loop returned). docs/capture.md "Return
inside a body".
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .breaks import BreakGraph, GraphBreak
from .loops import LoopFallback, LoopTrace, _type_of
from .variables.base import ConstantVariable

if TYPE_CHECKING:
    from .loop_node import Region

RETURNED = "<returned>"   # a body that returns (loop_branches._return): whether it did,
RET = "<return>"          # and the value (where the returns give different values)


def _only_returns(region: Region, trace: LoopTrace) -> bool:
    """A ``while True:`` loop whose body returns and never breaks ends only by returning:
    the function returns the node's value, with no test after it."""
    return region.endless and not any(e.kind == "break" for e in trace.exits)


def _returns(tx, region: Region, trace: LoopTrace, extra: dict) -> dict:
    """A body with ``return`` statements (loop_branches._return) carries whether it
    returned and, unless every return gives one constant, the value; the function then
    returns it right after the loop (:func:`_return_after`). Only a loop outside other
    loop bodies (the return leaves them all), and of the function being compiled unless
    the loop ends only by returning (an inlined call's then returns the value)."""
    rets = [e for e in trace.exits if e.kind == "return"]
    if not rets:
        return extra   # (one that only the body traced again takes: loop_node._build)
    if tx.output.loop_trace is not None or (tx.parent is not None and not _only_returns(region, trace)):
        raise LoopFallback("a return inside the body of a nested loop or of an inlined function")
    extra = dict(extra, **{RETURNED: ConstantVariable(False)})
    if _constant_return(trace) is not None or _local_return(trace) is not None:
        return extra
    for name in _return_names(rets):
        values = [e.locals[name] for e in rets]
        for v in values:
            if _type_of(v) is None:
                raise LoopFallback(f"a return inside the loop body of {v.describe()}, not a number")
        kinds = {type(_type_of(v)) for v in values}
        if len(kinds) != 1:
            raise LoopFallback("returns inside the loop body of values of different types ("
                               + ", ".join(sorted(k.__name__ for k in kinds)) + ")")
        extra[name] = ConstantVariable(kinds.pop()(0))
    return extra


def _return_names(rets: list) -> list[str]:
    """The carried names of the returned value: one, or one per item of ``return s, i``."""
    arities = {e.arity for e in rets}
    if len(arities) != 1:
        raise LoopFallback("returns inside the loop body of a tuple and of something else, "
                           "or of tuples of different lengths")
    arity = arities.pop()
    return [RET] if arity is None else [f"{RET}{k}" for k in range(arity)]


def _constant_return(trace: LoopTrace) -> ConstantVariable | None:
    """The one constant every ``return`` of the body gives (``return -1``), else None."""
    rets = [e for e in trace.exits if e.kind == "return"]
    if not all(e.literal for e in rets):
        return None
    values = [e.locals[RET] for e in rets]
    return values[0] if values and len({(type(v.value), v.value) for v in values}) == 1 else None


def _local_return(trace: LoopTrace) -> str | None:
    """The local every ``return`` of the body gives when the loop never rebinds it
    (``return img``; loop_branches._return), else None: nothing to carry, the function
    returns the local's value after the node."""
    names = {e.local for e in trace.exits if e.kind == "return"}
    return names.pop() if len(names) == 1 and None not in names else None


def _return_after(tx, node_line: tuple) -> None:
    """After a loop node whose body returns: where it returned, the function returns its
    value; where not, it goes on after the loop. Which one is known when the node has run,
    so the graph ends at the loop's exit (a break there, kiln/capture/partial.py, whose
    entry returns first where the loop returned): the capture that stops there keeps
    the two values (``tx.pending_return``); the first one breaks."""
    returned, value, exit = tx.__dict__.pop("loop_returned")
    if tx.stop_at == exit:
        tx.pending_return = (returned, value)
        return
    filename, lineno, line = node_line
    tx.inst = tx.decoded.instructions[exit]
    raise BreakGraph(GraphBreak(
        "data_dependent", "the loop returns from inside its body: whether it returned is known "
        "once it has run, so the graph ends after the loop (the function returns there, or "
        "goes on compiled)", filename, lineno, line), depth=tx.depth)
