"""Numbers an element loop node's body appends to a list (kiln/capture/loop_node.py).

The loop that collects what a test picks::

    idx = []
    for i in range(len(x)):              # one loop node, its body compiled once
        if x[i] > t:
            idx.append(i)                # (or x[i] * 2, or to two lists a trip)
    return idx                           # or np.array(idx), len(idx), ...

changed a list made in the function (a side effect), so the loop unrolled and broke the
graph at the data-dependent ``if``. Here each such list is a buffer of as many items as
the body could append (trips times the body's appends to it: every path is traced at
once, kiln/capture/loop_branches.py) and a carried count: ``L.append(v)`` is
``buf[count] = v; count += 1``, predicated like any store on a path. After the loop the
list is a :class:`~kiln.capture.loop_lists.StackedListVariable` over ``buf[:count]``
(``loop_head``, a size known once the loop ran): rebuilt as Python holds it
(``rows.tolist()`` gives Python ints, floats and bools; ``[*rows]`` NumPy scalars of
the items' own type), its ``len`` the count. ``np.array`` of it is the rows where
NumPy's array of the items has their dtype whatever their count (float64 items); of
ints, bools or other NumPy scalars an empty list makes float64, so there the call breaks
the graph with the list rebuilt (the loop stays compiled).

Taken only where no one can tell: a range loop of constant bounds, or ``range(n)`` of a
dynamic size ``n`` (``range(len(x))`` at a second length; not of an int argument;
whether a short loop runs faster as Python is the cost model's: kiln/ops/loop_cost.py); a
run-time count sizes the buffer (``n`` rows, or ``(n, k)`` for k appends a trip: the
trips' dim stays run-time, loop_node._emit), so one compile serves every count; at the
function's top level (not inside another loop body); the list made in the frame before the loop,
empty there, bound to one local and nothing else; the body loads that local only to call
``append`` on it, and the code after the loop does not jump back over it; every item
appended to one list a number of one type, or a tuple of as many numbers of one type
(``out.append((i, j))``: a row of the buffer, ``StackedListVariable.tuples``). Anything
else keeps the loop as before.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from ..ops import REGISTRY, TensorMeta
from .bytecode_facts import cellvars, load_attr_arg, local_accesses
from .loop_lists import StackedListVariable, only_stacked_after
from .loops import LoopFallback, _type_of, apply_scalar
from .variables.arrays import ArrayVariable, SymScalarVariable, UnbackedSize
from .variables.base import ConstantVariable, VariableTracker
from .variables.containers import ListVariable, TupleVariable

APPEND = "<append>"        # the carried count of list ``name``: APPEND + name
_BUFFER = "<append buffer>"  # and the local bound to its buffer while the loop is traced

# the Python types whose items ``tolist`` gives back (each the buffer's dtype)
_PYTHON = {int: np.dtype(np.int64), float: np.dtype(np.float64), bool: np.dtype(np.bool_),
           complex: np.dtype(np.complex128)}


class Appends:
    """A loop attempt's lists: ``found`` (first trace: id(list) -> (list, item types));
    ``taken`` (later traces: id(list) -> (list, name, item type))."""

    def __init__(self, snap: Any) -> None:
        self.before = {id(c) for c, _ in snap.containers}   # the lists made before the loop
        self.found: dict[int, tuple[ListVariable, list]] = {}
        self.taken: dict[int, tuple[ListVariable, str, Any]] = {}
        # take() ran: a list first appended to on a later trace (an append on a path the
        # first trace folded away, ``elif triggered:`` while ``triggered`` was still the
        # constant False) has no buffer, and its append must not vanish
        self.closed = False


def append_in_body(tx, lst: ListVariable, item: VariableTracker) -> VariableTracker | None:
    """``lst.append(item)`` in an element loop's body (kiln/capture/variables/containers.py):
    the buffer store, or (first trace) its record; None: the list's own append."""
    trace = tx.output.loop_trace
    appends: Appends | None = getattr(trace, "appends", None)
    if appends is None or type(lst) is not ListVariable or lst.source is not None:
        return None
    taken = appends.taken.get(id(lst))
    if taken is None:
        if id(lst) not in appends.before:
            return None     # a list the body made
        if appends.closed:
            raise LoopFallback("the body appends to a list on a path its first trace did not take")
        appends.found.setdefault(id(lst), (lst, []))[1].append(_item_type(item))
        return ConstantVariable(None)
    _, name, example = taken
    if _kind(_item_type(item)) != _kind(example):
        raise LoopFallback(f"the body appends to '{name}' items of changing types")
    count = tx.locals[APPEND + name]
    nodes = tx.output.graph.nodes
    before = len(nodes)
    buffer = tx.locals[_BUFFER + name]
    width = example[0] or 1
    values = item.item_list if example[0] else [item]
    for j, v in enumerate(values):   # (a tuple's j-th number at count * width + j)
        at = count if width == 1 else apply_scalar(tx, "add", [apply_scalar(
            tx, "mul", [count, ConstantVariable(width)]), ConstantVariable(j)])
        if len(buffer.meta.shape) == 2:   # (k columns: the append count // k, count % k)
            k = ConstantVariable(buffer.meta.shape[1])
            at = TupleVariable([apply_scalar(tx, "floordiv", [at, k]), apply_scalar(tx, "mod", [at, k])])
        buffer.setitem(tx, at, v)
    tx.locals[APPEND + name] = apply_scalar(tx, "add", [count, ConstantVariable(1)])
    for node in nodes[before:]:   # priced as Python's append (kiln/ops/loop_cost.py)
        if node.kind == "call" and node.op.name in ("store_elem", "store_elem_if", "scalar_fn"):
            node.meta["append"] = True
    return ConstantVariable(None)


def _item_type(item: VariableTracker) -> tuple:
    """``(width, stand-in)``: ``(None, t)`` for a number, ``(m, t)`` for a tuple of m numbers
    of one type (``(start, i)``), the stand-in None for anything else."""
    if type(item) is TupleVariable and item.item_list:
        kinds = [_type_of(v) for v in item.item_list]
        if any(k is None or type(k) is not type(kinds[0]) for k in kinds):
            return len(kinds), None
        return len(kinds), kinds[0]
    return None, _type_of(item)


def _kind(t: tuple) -> tuple:
    return t[0], type(t[1])


def _only_appended(tx, name: str, lo: int, hi: int) -> bool:
    """Does the body at ``[lo, hi)`` load ``name`` only to call its ``append``?"""
    instructions = tx.decoded.instructions
    for k in range(lo, hi):
        for kind, n in local_accesses(instructions[k].opname, instructions[k].arg):
            if n != name:
                continue
            nxt = instructions[k + 1]
            if kind != "use" or nxt.opname not in ("LOAD_ATTR", "LOAD_METHOD") \
                    or load_attr_arg(nxt.opname, nxt.arg)[1] != "append":
                return False
    return True


def take(tx, region: Any, snap: Any, trace: Any, bounds: tuple) -> dict:
    """The lists the first trace appended to, each given a buffer (bound in ``snap``'s
    locals) and a carried count: the counts' start values by name (``extra`` of
    loop_node._build), or LoopFallback where a list is not taken (the module doc)."""
    appends: Appends | None = getattr(snap, "appends", None)   # (a while loop's: None)
    if appends is None:
        return {}
    appends.closed = True
    if not appends.found:
        return {}
    if tx.output.device_type is not None:
        raise LoopFallback("the body appends to a list, and the arrays are on a device")
    trips, _ = _trips(tx, bounds)
    held = list(snap.stack) + list(snap.cells.values()) + [
        x for c, saved in snap.containers if isinstance(saved, list) for x in saved]
    extra = {}
    snap.restore(tx)
    for lst, types in appends.found.values():
        names = [n for n, v in snap.locals.items() if v is lst]
        saved = next(s for c, s in snap.containers if c is lst)
        if len(names) != 1 or any(v is lst for v in held) or saved != [] \
                or names[0] in cellvars(tx.code):
            raise LoopFallback("the body appends to a list that holds items, is bound to several "
                               "names or is held elsewhere")
        name = names[0]
        if not _only_appended(tx, name, region.lo, region.hi) or not only_stacked_after(
                tx, SimpleNamespace(index=region.stop, target=region.exit), name, free=True):
            raise LoopFallback(f"the body appends to '{name}' and uses it otherwise, or the loop "
                               f"runs again")
        item = types[0]
        width, example = item[0] or 1, item[1]
        if example is None or any(_kind(t) != _kind(item) for t in types):
            raise LoopFallback(f"the body appends to '{name}' items of several types or no numbers")
        dtype = _PYTHON.get(type(example))
        if dtype is None:
            dtype = np.dtype(type(example)) if isinstance(example, (np.number, np.bool_)) else None
        if dtype is None or dtype.itemsize > (16 if dtype.kind == "c" else 8):
            raise LoopFallback(f"the body appends to '{name}' items other than numbers")
        # (a run-time count times k: a buffer of k columns, the trips' dim left run-time)
        # (a tuple of m numbers: m items a row, loop_head's width)
        per_trip = len(types) * width
        size = ConstantVariable(trips * per_trip) if type(trips) is int else trips if per_trip == 1 \
            else TupleVariable([trips, ConstantVariable(per_trip)])
        buffer = tx.call_op(np.zeros, [size], {"dtype": ConstantVariable(dtype)}, "numpy.zeros")
        buffer.append_buffer = True   # (its dims stay run-time: loop_node._emit)
        snap.locals[_BUFFER + name] = tx.locals[_BUFFER + name] = buffer
        snap.locals[APPEND + name] = tx.locals[APPEND + name] = ConstantVariable(0)
        extra[APPEND + name] = ConstantVariable(0)
        appends.taken[id(lst)] = (lst, name, item)
    appends.found.clear()
    return extra


def _trips(tx, bounds: tuple) -> tuple:
    """``(trips, example)``: the trip count (an int, or ``range(len(x))`` of a dynamic
    size: one compile serves every count) and its value on this call; LoopFallback for
    other run-time bounds."""
    if all(isinstance(b, ConstantVariable) for b in bounds):
        trips = len(range(*(b.value for b in bounds)))
        return trips, trips
    start, stop, step = bounds
    if not (isinstance(start, ConstantVariable) and start.value == 0 and isinstance(step, ConstantVariable)
            and step.value == 1 and isinstance(stop, SymScalarVariable) and type(stop.example) is int):
        raise LoopFallback("the body appends to a list, and the trip count is a run-time one "
                           "other than range(n)")
    # (an int argument n may be negative, where np.zeros(n) raises: a guard on its sign
    # specialized n itself, a compile per count (a graph loop tried next, too): kept as before)
    if not stop.is_shape():
        raise LoopFallback("the body appends to a list, and the trip count is a run-time int")
    return stop, stop.example


def forget(tx, snap: Any) -> None:
    """A failed attempt: the buffers' locals go (their nodes, unused, are dropped)."""
    appends = getattr(snap, "appends", None)
    for _, name, _ in appends.taken.values() if appends is not None else ():
        for d in (tx.locals, snap.locals):
            d.pop(_BUFFER + name, None)
            d.pop(APPEND + name, None)
    if appends is not None:
        appends.found.clear()
        appends.taken.clear()
        appends.closed = False


def bind(tx, snap: Any) -> None:
    """After the loop node: each list is its buffer's first ``count`` items."""
    for _, name, (width, example) in snap.appends.taken.values():
        count = tx.locals.pop(APPEND + name)
        buffer: ArrayVariable = tx.locals.pop(_BUFFER + name)
        snap.locals.pop(_BUFFER + name, None)
        snap.locals.pop(APPEND + name, None)
        items = int(np.prod(buffer.node.val.shape))
        meta = TensorMeta((items,) if width is None else (items // width, width), buffer.node.val.dtype)
        node = tx.output.graph.call(REGISTRY["loop_head"], (buffer.node, count.node), {"width": width},
                                    val=meta, source=tx.location())
        key = ("loop_head", node)
        size = UnbackedSize(key, meta.shape[0], f"the items appended to '{name}'")
        tx.output.unbacked_sizes[key] = (size, None)
        kind = type(example) if type(example) in _PYTHON else None
        tx.locals[name] = StackedListVariable([], ArrayVariable(node, (size,) + (None,) * (width is not None)),
                                              None, None, kind, counted=True, tuples=width is not None)
