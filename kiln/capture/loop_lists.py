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
- a run-time trip count (a range of a run-time int, a while loop's) stays run-time: the
  rows' count is a size known once the loop ran (:func:`counted_rows`), and only whether
  the range is empty is guarded (``np.array([])`` is float64 ``(0,)``, not the rows').

A Python number read in the body, ``losses.append(float(np.mean(r ** 2)))`` (also
``v.item()``, ``int(v)`` of an integer ``v``: :func:`python_value`), is a
``PyValueVariable`` over a 0-d array: the buffer's rows are those arrays, and the list is
``[*prefix, *rows.tolist()]`` (``tolist`` gives each row as ``item()`` does, so float()'s
values and Python's types). No one can tell such a list (or one of NumPy scalars,
``losses.append(np.mean(...))``: ``[*rows]`` gives them) from Python's, so after the loop
it may be used any way: returned as it is, ``np.array(losses)`` (float64 as NumPy makes it
of Python floats), ``losses[-1]``, ``len(losses)``; anything else breaks the graph there
with the list rebuilt. A number compared in the loop's own test (``if loss < tol: break``,
``while err > tol``: kiln/capture/graph_breaks.py, graph_while.py) is the test's value; one
used otherwise in the body (``print``, a carried ``total += loss``) ends the attempt and
the loop unrolls as before.

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
from .variables.arrays import ArrayVariable, PyValueVariable, UnbackedSize
from .variables.base import ConstantVariable, VariableTracker
from .variables.containers import ListVariable

STACKERS = (np.array, np.asarray, np.stack)
_STACKER_NAMES = frozenset(f.__name__ for f in STACKERS)


# the Python type ``item()`` gives for a dtype kind, and the dtype np.array makes of those
_ITEM_TYPES = {"f": float, "i": int, "u": int, "b": bool, "c": complex}
_LIST_DTYPES = {float: np.dtype(np.float64), int: np.dtype(np.int64), bool: np.dtype(np.bool_),
                complex: np.dtype(np.complex128)}


def python_value(tx, array: Any, cls: type | None) -> PyValueVariable | None:
    """``float(array)``, ``int(array)`` or (``cls`` None) ``array.item()`` of a 0-d array in a
    graph loop's body, as the Python number the graph computes (the module doc), and
    ``int()`` of an integer array anywhere (which never raises; python_numbers'
    PythonIntVariable computes Python's int arithmetic on it), ``float()`` of a real one and
    ``item()`` of a real or bool one; None where capture breaks
    the graph as before (a float's int(), a complex's float(), a kiln.Tensor, float()
    outside such a body)."""
    if tx.output.loop_trace is not None \
            or not isinstance(array, ArrayVariable) or array.tensor \
            or array.meta.shape != () or array.array_type is not np.ndarray:
        return None
    kind = np.dtype(array.meta.dtype).kind
    if cls is not int and getattr(tx.output, "grad_depth", 0):
        # inside a function kiln.grad differentiates the number would be a constant of the
        # derivative (its path lost, silently): Python's kiln.grad raises, so it breaks
        return None
    if not tx.output.graph_loop_body:
        if cls is None and kind in "iufb":
            cls = _ITEM_TYPES[kind]   # ``v.item()``: the int, float or bool of it (stop 57)
        if not (cls is int and kind in "iu" or cls is float and kind in "fiub" or cls is bool and kind == "b"):
            # (elsewhere only ``n += int(mask.sum())``: python_numbers.PythonIntVariable)
            return None
    if np.dtype(array.meta.dtype).itemsize > (16 if kind == "c" else 8):
        return None      # (a long double's item() is itself)
    if cls is None:
        return PyValueVariable(array, _ITEM_TYPES[kind]) if kind in _ITEM_TYPES else None
    if cls is bool:
        return PyValueVariable(array, bool)
    if cls is float and kind == "f" and (array.meta.dtype == np.float64 or tx.output.graph_loop_body) \
            or cls is int and kind in "iu":   # (a body's rows are stacked in their own dtype)
        return PyValueVariable(array, cls)
    if cls is float and kind in "iubf" or cls is int and kind == "b":
        # (float(np.float32(v)) elsewhere is the double of that value: arithmetic on it is
        # a double's, and NumPy's array of a list holding it float64)
        # float(np.int64(v)) is the C cast astype makes; int(np.True_) is 1
        to = np.dtype(np.float64 if cls is float else np.int64)
        return PyValueVariable(tx.call_op(("method", "astype"), [array, ConstantVariable(to)],
                                          {}, f"{cls.__name__}(array)"), cls)
    return None


class StackedListVariable(VariableTracker):
    """A list a graph loop appended to: ``prefix`` (its items before the loop), then the
    rows of ``rows`` (the node's buffer), the last of them the array ``last`` where the
    last trip appended a carried array (None otherwise); ``kind``: the Python type of
    rows read as Python numbers (``float``; None: arrays or NumPy scalars); ``counted``:
    the rows' count is the data's (an element loop's appends under a test,
    kiln/capture/loop_appends.py), so it may be 0 whatever the trip count."""

    def __init__(self, prefix: list, rows: ArrayVariable, last: ArrayVariable | None,
                 last_node: Any, kind: type | None = None, counted: bool = False,
                 tuples: bool = False) -> None:
        self.prefix, self.rows, self.last, self.last_node = prefix, rows, last, last_node
        self.kind = kind
        self.counted = counted
        self.tuples = tuples   # each row a tuple of numbers (``found.append((start, i))``)

    def _free(self) -> bool:
        """Rows no one can tell from Python's items: Python numbers or NumPy scalars (or
        tuples of them, which only ``len``, a truth and the rebuilt list take)."""
        return self.kind is not None or self.rows.meta.shape[1:] == () and self.last is None \
            or self.tuples

    def length(self, tx) -> VariableTracker:
        if not self._free():
            return super().length(tx)
        if self.rows.dims[0] is not None:    # a run-time trip count: known once the loop ran
            from ..ops import REGISTRY
            from .loops import ScalarValueVariable, apply_scalar
            count = ScalarValueVariable(tx.output.graph.call(REGISTRY["loop_count"], (self.rows.node,), {},
                                                             val=1), 1)
            return apply_scalar(tx, "add", [count, ConstantVariable(len(self.prefix))]) \
                if self.prefix else count
        return ConstantVariable(len(self.prefix) + self.rows.meta.shape[0])

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        """``losses[-1]``: a row, read as the list holds it."""
        at = index.value if isinstance(index, ConstantVariable) else None
        if self.counted and not self.prefix and self._free() and type(at) is int and not self.tuples:
            from . import appended_uses   # (as many items as the data gave: may raise)
            return appended_uses.item(tx, self.rows, self.kind is not None, at)
        # (a run-time count is at least 1: the loop ran, capture guards it)
        count = self.rows.meta.shape[0] if self.rows.dims[0] is None else 1
        if not self._free() or self.prefix or self.counted or type(at) is not int \
                or not -count <= at < count:
            return super().getitem(tx, index)
        row = self.rows.getitem(tx, ConstantVariable(at))
        return row if self.kind is None else PyValueVariable(row, self.kind)

    def truth(self, tx) -> bool:
        if not self.counted or self.prefix:
            return super().truth(tx)
        from . import appended_uses   # ``if out:`` speculated (appended_uses.truth)
        return appended_uses.truth(tx, self.rows)

    def builtin_fold(self, tx, fn: Any) -> VariableTracker | None:
        """``sum(out)``, ``min(out)``, ``max(out)`` of Python numbers or NumPy scalars (no
        items before the loop); None: the builtin goes on as for any iterable."""
        if self.prefix or not self._free() or self.tuples:
            return None
        from . import appended_uses
        return appended_uses.fold(tx, self.rows, self.kind is not None, fn)

    def describe(self) -> str:
        return "a list a graph loop appended to"

    def python_type(self) -> type:
        return list

    def stacked(self, tx) -> ArrayVariable:
        """The array ``np.array`` makes of the list (a graph break where ``last`` was
        written after the loop: its row in the buffer is the value before the write)."""
        from .opcall import call_op
        if self.tuples:   # (np.array([]) is (0,): its shape too is the count's)
            tx.unsupported("unsupported_value", "np.array of a list of tuples a loop appended to")
        if self.counted and self.rows.meta.dtype != np.float64:
            # (np.array of an empty list is float64 (0,): of how many, only the data knows)
            from . import appended_uses
            return appended_uses.array_of(tx, self.rows)
        if self.kind is not None:
            to = _LIST_DTYPES[self.kind]
            if self.prefix or not np.can_cast(self.rows.meta.dtype, to, "safe"):
                tx.unsupported("unsupported_value", f"np.array of a list of Python {self.kind.__name__}s "
                               f"a graph loop appended to, not all of them rows of {to}")
            if self.rows.meta.dtype == to:
                return self.rows
            return call_op(tx, ("method", "astype"), [self.rows, ConstantVariable(to)], {},
                           "ndarray.astype")
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
        if self.tuples:
            return f"[*map(tuple, {rows}{'.tolist()' if self.kind is not None else ''})]"
        if self.kind is not None:
            return "[" + ", ".join(items + [f"*{rows}.tolist()"]) + "]"
        if self.last is None:
            return "[" + ", ".join(items + [f"*{rows}"]) + "]"
        return "[" + ", ".join(items + [f"*{rows}[:-1]", rebuild_value(self.last)]) + "]"


def bind_stacked(tx, stacks: list, slots: Any, buffers: list) -> None:
    """Bind each list of ``stacks`` (:func:`stacked_items`) to a :class:`StackedListVariable`
    over its buffer (``buffers``), once the carried names (``slots``, graph_loop's
    ArraySlots) are bound to the loop's results: the last row is the carried array the
    last trip appended, where it appended one."""
    for (name, _, item, kind), buffer in zip(stacks, buffers):
        p = next((p for p, o in enumerate(slots.outs) if o is item.node), None)
        last = None if p is None or kind is not None else tx.locals[slots.carried_names()[
            next(q for q, (k, m) in enumerate(slots.nxt) if k == "out" and m == p)]]
        tx.locals[name] = StackedListVariable(list(tx.locals[name].item_list), buffer, last,
                                              None if last is None else last.node, kind)


def counted_rows(tx, node: Any, index: int, meta: TensorMeta, name: str) -> ArrayVariable:
    """The rows loop ``node`` (its result ``index``, of example ``meta``) appended to list
    ``name`` where the trip count is a run-time one (a range of a run-time int, a while
    loop's): their count is a size known once the loop ran (``loop_rows``, an unbacked
    size), so one compile serves every count."""
    from ..ops import REGISTRY
    # one size for every list of the loop (a row a trip each: ``np.array(ys) - np.array(ts)``
    # meet as equal sizes; ops/graph_loops.py ``loop_rows`` shares it in lowering too)
    key = ("loop_rows", node)
    if key not in tx.output.unbacked_sizes:
        tx.output.unbacked_sizes[key] = (UnbackedSize(key, meta.shape[0], "the trips of a loop"), None)
    size = tx.output.unbacked_sizes[key][0]
    rows = tx.output.graph.call(REGISTRY["loop_rows"], (node,), {"index": index}, val=meta)
    return ArrayVariable(rows, (size,) + (None,) * (len(meta.shape) - 1))


def stacking_call(tx, key: Any, args: list, kwargs: dict) -> tuple:
    """``np.array(ys)`` of a :class:`StackedListVariable`: ``(key, args, kwargs)`` of the call
    on its stacked array (NumPy reads a list of same-shaped arrays as that array; ``np.stack``
    of it alone is ``np.array`` of it); any other call breaks."""
    if any(key is f for f in STACKERS) and len(args) == 1 and not kwargs \
            and not (key is np.stack and args[0].counted):   # (np.stack([]) raises)
        return (np.array if key is np.stack else key), [args[0].stacked(tx)], {}
    typed = _typed_call(tx, key, args, kwargs)
    if typed is not None:
        return ("method", "astype"), [args[0].rows, typed], {}
    tx.unsupported("unsupported_value", f"{args[0].describe()} passed to a call other than "
                   f"np.array/np.asarray/np.stack of it alone")


def _typed_call(tx, key: Any, args: list, kwargs: dict) -> ConstantVariable | None:
    """``np.array(idx, dtype=d)``, ``np.asarray(idx, dtype=d)``, ``np.fromiter(idx, d)`` of a
    list of numbers (or NumPy scalars) with no items before the loop: the items cast to
    ``d`` (whatever their count: none give ``(0,)`` of ``d``), where the cast is safe (an
    int NumPy converts from a Python int checks its range; astype would wrap it)."""
    lst = args[0]
    if lst.prefix or not lst._free() or lst.rows.meta.shape[1:] != () or lst.tuples:
        return None
    if key is np.fromiter:
        extra = dict(zip(("dtype", "count"), args[1:]), **kwargs)
        if len(args) > 3 or "count" in extra and not (extra["count"].is_constant()
                                                      and extra["count"].value == -1):
            return None
        extra.pop("count", None)
    elif key is np.array or key is np.asarray:
        extra = dict(kwargs) if len(args) == 1 else {}
    else:
        return None
    dtype = extra.get("dtype")
    if set(extra) != {"dtype"} or not dtype.is_constant() or dtype.value is None:
        return None
    try:
        to = np.dtype(dtype.value)
    except TypeError:
        return None
    if not np.can_cast(lst.rows.meta.dtype, to, "safe") or to.kind not in "biufc":
        return None
    return ConstantVariable(to)


def take_appends(tx, snap: Any) -> list:
    """``(list, item)`` of each list made in the frame to which the traced trip appended one
    item; the item is taken off again, so the attempt sees the list as at the head (a
    failed attempt puts the snapshot back anyway). A Python int or float the graph
    computed (``sizes.append(topples)``, ``topples`` a nested while node's count) is the
    Python number read from its int64 or float64 (exact for counts; an int past int64
    raises OverflowError in the conversion, where Python would make a uint64 or object
    array)."""
    from .loops import ScalarValueVariable, apply_scalar
    found = []
    for c, saved in snap.containers:
        if type(c) is ListVariable and c.source is None and isinstance(saved, list) \
                and len(c.item_list) == len(saved) + 1 \
                and all(a is b for a, b in zip(c.item_list, saved)):
            item = c.item_list[-1]
            if isinstance(item, ScalarValueVariable) and type(item.example) in (int, float):
                kind = type(item.example)
                item = PyValueVariable(apply_scalar(tx, f"np.{kind.__name__}64", [item]), kind)
            found.append((c, item))
            c.item_list = list(saved)
    return found


def only_stacked_after(tx, inst: Any, name: str, free: bool = False) -> bool:
    """Does the code after the loop at FOR_ITER ``inst`` load ``name`` once, as the only
    argument of ``<obj>.array/asarray/stack(name)`` (``free``: any way), with the loop in
    no other loop?"""
    if name in cellvars(tx.code):
        return False
    instructions = tx.decoded.instructions
    for i in instructions[inst.target:]:
        if i.target is not None and i.target <= inst.index:
            return False       # a jump back over the loop: the loop runs again
    if free:
        return True
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
    """The lists whose appends the node stacks: ``(name, list, item, kind)`` for each of
    ``appends`` (``kind``: the Python type of an appended Python number, its array the
    item), or LoopFallback where one is not taken (see the module doc)."""
    if appends and tx.output.device_type is not None:
        raise LoopFallback("the body appends to a list, and the arrays are on a device (the "
                           "node's buffers are NumPy's)")
    taken = []
    held = [v for v in snap.stack] + [x for c, saved in snap.containers if isinstance(saved, list)
                                      for x in saved] + snap.cell_values()
    for c, item in appends:
        names = [n for n, v in tx.locals.items() if v is c]
        if len(names) != 1 or [n for n, v in snap.locals.items() if v is c] != names \
                or any(v is c for v in held) or any(v is c for v in tx.stack):
            raise LoopFallback("the body appends to a list bound to several names or held elsewhere")
        kind = item.kind if isinstance(item, PyValueVariable) else None
        item = item.array if kind is not None else item
        if kind is not None and c.item_list:
            raise LoopFallback(f"the body appends Python numbers to '{names[0]}', which holds "
                               f"items before the loop")
        if not only_stacked_after(tx, inst, names[0], kind is not None or getattr(item, "scalar", False)):
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
                or (val.shape == () and not item.scalar and kind is None) \
                or any(d is not None for d in item.dims):   # (the buffers' rows are static)
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
        taken.append((names[0], c, item, kind))
    return taken
