"""Lists a graph loop appends to, stacked after it (kiln/capture/graph_loop.py).

The time-stepping loop that keeps its history::

    ys = [y0]
    for i in range(n):                   # one graph_loop node, its body compiled once
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    return np.array(ys)                  # or np.asarray(ys), np.stack(ys)

appended one array a trip to a list made in the function: a side effect, so the loop
unrolled (past the unrolling budget the function ran as Python). Where that list is
consumed only by one stacking call after the loop, the loop is a graph loop whose body
also returns the appended value, and the node keeps one row of a ``(trips, *shape)``
buffer per trip (``GraphLoopBody.stacked``); the list becomes a
:class:`StackedListVariable` — its items before the loop, then the buffer's rows — and
``np.array(ys)`` is their concatenation.

Taken only where no one can tell the list's items are rows of one buffer:

- the list was made in the frame (no source), is bound to one local ``L`` and nothing
  else (no other name, container or cell), and the traced trip appended exactly one item;
- after the loop, the code loads ``L`` exactly once, as the only argument of a call of an
  attribute named ``array``, ``asarray`` or ``stack`` (``np.array(ys)``: NumPy copies the
  items' values into a new array), and the loop is in no other loop (the bytecode is
  read once, ``only_stacked_after``);
- the appended value is an array the body computed (no view, nothing the body writes in
  place, of static shape; a NumPy scalar such as ``np.linalg.norm(r)`` is a row too), the
  items before the loop arrays of its shape and dtype;
- a run-time trip count is guarded by value (the buffer's shape holds it: one entry per
  count, as the unrolled loop had).

The item the last trip appended may be a carried array (``ys.append(y)``: after the loop
``ys[-1] is y``): where the code writes ``y`` in place before the stacking call, the call
breaks the graph and the list is rebuilt as Python holds it (``[*prefix, *rows[:-1], y]``,
``output.reconstruct``). Anything else (a graph break with the list alive, a call of
another function at run time) rebuilds it the same way: a list of arrays with NumPy's
values.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import TensorMeta
from .bytecode_facts import AFTER_CALLABLE, CALL_PREFIX, cellvars, load_attr_arg, local_accesses, oparg_of
from .loops import LoopFallback
from .variables.arrays import ArrayVariable
from .variables.base import VariableTracker
from .variables.containers import ListVariable

STACKERS = (np.array, np.asarray, np.stack)
_STACKER_NAMES = frozenset(f.__name__ for f in STACKERS)


class StackedListVariable(VariableTracker):
    """A list a graph loop appended to: ``prefix`` (its items before the loop), then the
    rows of ``rows`` (the node's buffer), the last of them the array ``last`` where the
    last trip appended a carried array (None otherwise)."""

    def __init__(self, prefix: list, rows: ArrayVariable, last: ArrayVariable | None,
                 last_node: Any) -> None:
        self.prefix, self.rows, self.last, self.last_node = prefix, rows, last, last_node

    def describe(self) -> str:
        return "a list a graph loop appended to"

    def python_type(self) -> type:
        return list

    def stacked(self, tx) -> ArrayVariable:
        """The array ``np.array`` makes of the list (a graph break where ``last`` was
        written after the loop: its row in the buffer is the value before the write)."""
        from .opcall import call_op
        if self.last is not None and self.last.node is not self.last_node:
            tx.unsupported("unsupported_value", "the last array appended in a graph loop is "
                           "written after the loop: the list is rebuilt as Python holds it")
        if not self.prefix:
            return self.rows
        head = call_op(tx, np.stack, [ListVariable(list(self.prefix))], {}, "numpy.stack")
        from .variables.containers import TupleVariable
        return call_op(tx, np.concatenate, [TupleVariable([head, self.rows])], {}, "numpy.concatenate")

    def rebuild(self, rebuild_value: Any) -> str:
        """Python code for the list as Python holds it (``output.reconstruct``)."""
        items = [rebuild_value(v) for v in self.prefix]
        rows = rebuild_value(self.rows)
        if self.last is None:
            return "[" + ", ".join(items + [f"*{rows}"]) + "]"
        return "[" + ", ".join(items + [f"*{rows}[:-1]", rebuild_value(self.last)]) + "]"


def stacking_call(tx, key: Any, args: list, kwargs: dict) -> tuple:
    """``np.array(ys)`` of a :class:`StackedListVariable`: ``(key, args)`` of the call on its
    stacked array (NumPy reads a list of same-shaped arrays as that array; ``np.stack`` of
    it alone is ``np.array`` of it); any other call breaks."""
    if any(key is f for f in STACKERS) and len(args) == 1 and not kwargs:
        return (np.array if key is np.stack else key), [args[0].stacked(tx)]
    tx.unsupported("unsupported_value", f"{args[0].describe()} passed to a call other than "
                   f"np.array/np.asarray/np.stack of it alone")


def take_appends(snap: Any) -> list:
    """``(list, item)`` of each list made in the frame to which the traced trip appended one
    item; the item is taken off again, so the attempt sees the list as at the head (a
    failed attempt puts the snapshot back anyway)."""
    found = []
    for c, saved in snap.containers:
        if type(c) is ListVariable and c.source is None and isinstance(saved, list) \
                and len(c.item_list) == len(saved) + 1 \
                and all(a is b for a, b in zip(c.item_list, saved)):
            found.append((c, c.item_list[-1]))
            c.item_list = list(saved)
    return found


def only_stacked_after(tx, inst: Any, name: str) -> bool:
    """Does the code after the loop at FOR_ITER ``inst`` load ``name`` once, as the only
    argument of ``<obj>.array/asarray/stack(name)``, with the loop in no other loop?"""
    if name in cellvars(tx.code):
        return False
    instructions = tx.decoded.instructions
    for i in instructions[inst.target:]:
        if i.target is not None and i.target <= inst.index:
            return False       # a jump back over the loop: the loop runs again
    uses = [k for k in range(inst.target, len(instructions)) for kind, n in
            local_accesses(instructions[k].opname, instructions[k].arg) if n == name and kind == "use"]
    if len(uses) != 1 or instructions[uses[0]].opname != "LOAD_FAST":
        return False
    k = uses[0]
    j = k - 1
    while j > 0 and instructions[j].opname in AFTER_CALLABLE:
        j -= 1
    before = instructions[j]
    if before.opname not in ("LOAD_ATTR", "LOAD_METHOD") \
            or load_attr_arg(before.opname, before.arg)[1] not in _STACKER_NAMES:
        return False
    k += 1
    while k < len(instructions) and instructions[k].opname in CALL_PREFIX:
        k += 1
    return k < len(instructions) and instructions[k].opname == "CALL" \
        and oparg_of(instructions[k].arg) == 1


def stacked_items(tx, inst: Any, snap: Any, saved: dict, appends: list, calls: list,
                  before: set, outs: list, root: Any, outer: Any) -> list:
    """The lists whose appends the node stacks: ``(name, list, item)`` for each of
    ``appends``, or LoopFallback where one is not taken (see the module doc)."""
    if appends and tx.output.device_type is not None:
        raise LoopFallback("the body appends to a list, and the arrays are on a device (the "
                           "node's buffers are NumPy's)")
    taken = []
    held = [v for v in snap.stack] + [x for c, saved in snap.containers if isinstance(saved, list)
                                      for x in saved] + list(snap.cells.values())
    for c, item in appends:
        names = [n for n, v in tx.locals.items() if v is c]
        if len(names) != 1 or [n for n, v in snap.locals.items() if v is c] != names \
                or any(v is c for v in held) or any(v is c for v in tx.stack):
            raise LoopFallback("the body appends to a list bound to several names or held elsewhere")
        if not only_stacked_after(tx, inst, names[0]):
            raise LoopFallback(f"the body appends to '{names[0]}', which the code after the loop "
                               f"uses otherwise than in one np.array/np.asarray/np.stack call")
        if id(item) in saved:   # an array from before the trip (written in place): one object
            raise LoopFallback(f"the body appends to '{names[0]}' the same array each trip")
        if not isinstance(item, ArrayVariable) or item.tensor or outer(item.node, before) \
                or root(item.node, before) is not item.node:
            raise LoopFallback(f"the body appends to '{names[0]}' something other than an "
                               f"array it computes")
        val = item.node.val
        if not isinstance(val, TensorMeta) or not all(type(d) is int for d in val.shape) \
                or (val.shape == () and not item.scalar):
            raise LoopFallback(f"the body appends to '{names[0]}' a value of no static shape")
        for n in calls:
            for m in n.op.mutates or ():
                if root(n.args[m], before) is item.node or (
                        any(o is item.node for o in outs) and outer(root(n.args[m], before), before)):
                    raise LoopFallback(f"the body appends to '{names[0]}' an array written in place")
        for p in c.item_list:
            if not isinstance(p, ArrayVariable) or p.tensor or p.node.val != val or p.scalar != item.scalar:
                raise LoopFallback(f"'{names[0]}' holds before the loop what its appends are not "
                                   f"(arrays of {val})")
        taken.append((names[0], c, item))
    return taken
