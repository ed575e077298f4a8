"""What a graph loop carries (kiln/capture/graph_loop.py, graph_while.py): the array
objects bound to live locals at the loop head, where each one's names end after one traced
iteration (itself, another carried array, or a new array), and the checks that refuse a
loop whose names do not end as one node can carry them (LoopFallback, with the reason
``explain`` shows). Also the small tests both loop forms use on the trace: a node's root
array through the body's views, a value from before the iteration, two trackers' sizes.
"""
from __future__ import annotations

from typing import Any

from .loop_node import _loaded, _Snapshot
from .loops import LoopFallback
from .variables.arrays import ArrayVariable, SymScalarVariable, UnbackedSize
from .variables.base import ConstantVariable

_ATTRS = ("node", "dims", "fresh", "base", "has_views", "read_only", "scalar")


def same_dims(tx, a: tuple, b: tuple) -> bool:
    """Do two trackers' dims say the same sizes: static alike, or run-time sizes (dynamic
    dims, not ones known only from the data) of one value here? Two expressions of them
    (``x.shape[0]``, and ``np.roll``'s slice length plus one) are guarded equal: then a
    trip ends with the sizes it started with, every trip."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is None and y is None:
            continue
        if not (isinstance(x, SymScalarVariable) and isinstance(y, SymScalarVariable)) \
                or isinstance(x, UnbackedSize) or isinstance(y, UnbackedSize) or x.example != y.example:
            return False
        if x.code != y.code:
            tx.guards.add_truth(f"{x.code} == {y.code}", f"{x.text} == {y.text}", True,
                                tuple(x.leaves) + tuple(y.leaves))
    return True


def tracked_dims(saved: dict) -> dict:
    """``{id(node): dims}`` of the arrays at the loop head that have run-time sizes."""
    return {id(attrs["node"]): attrs["dims"] for _, attrs in saved.values()
            if any(d is not None for d in attrs["dims"])}


def _same_constant(tx, start: Any, end: Any) -> bool:
    """A constant the body leaves as it was, or an int or float argument it loaded first
    as a constant (``grid[r, c] += 1``: specialized, guarded by value, so every trip
    sees the same value; not one it stored a constant in, ``c = 4``, unguarded)."""
    from .variables.base import LazyVariable
    if isinstance(start, LazyVariable) and start.source is not None:
        key = (type(start.source).__name__, start.source.display())
        if type(start.value) not in (int, float, bool) or tx.output.wrapped.get(key) is None:
            return False
        start = ConstantVariable(start.value)
    return isinstance(start, ConstantVariable) and isinstance(end, ConstantVariable) \
        and type(start.value) is type(end.value) and start.value == end.value


def _realized(tx, var: Any) -> tuple:
    """(tracker, placeholder) of an argument array still unloaded before the loop that
    the body loaded (and rebound); (None, None) for anything else."""
    from .variables.base import LazyVariable
    if not isinstance(var, LazyVariable) or var.source is None:
        return None, None
    found = tx.output.wrapped.get((type(var.source).__name__, var.source.display()))
    if isinstance(found, ArrayVariable) and not found.fresh and found.base is None:
        placeholder = tx.output._input_by_code.get(var.source.code(tx.output.ns))
        if placeholder is not None:
            return found, placeholder
    return None, None


def _root(node: Any, before: set) -> Any:
    """The array a (possibly view) node writes into: through views made in the body."""
    while getattr(node, "kind", None) == "call" and id(node) not in before and node.op.may_alias \
            and node.args:
        node = node.args[0]
    return node


def _outer(node: Any, before: set) -> bool:
    """A value from before the iteration: a node made before it, or an input or constant
    (an argument the body loaded first is one too)."""
    return getattr(node, "kind", None) != "call" or id(node) in before


class ArraySlots:
    """The arrays a graph loop carries (see the module doc): ``positions`` (trackers of
    the array objects bound to live locals), their ``names``, the positions ``keep``
    carries, ``perm`` (position -> the position its names end on, None: a new array),
    ``outs`` (the nodes of the new arrays) and ``nxt`` (GraphLoopBody.next)."""

    def __init__(self, positions: list, names: dict, keep: list, perm: dict, outs: list,
                 nxt: list) -> None:
        self.positions, self.names, self.keep = positions, names, keep
        self.perm, self.outs, self.nxt = perm, outs, nxt

    def starts(self, saved: dict) -> list:
        """The nodes of the carried arrays before the loop."""
        return [saved[id(self.positions[k])][1]["node"] for k in self.keep]

    def carried_names(self) -> list:
        return [self.names[id(self.positions[k])][0] for k in self.keep]


def array_slots(tx, snap: _Snapshot, saved: dict, before: set, calls: list, live: set,
                skip: set = frozenset()) -> ArraySlots:
    """The arrays the iteration just traced carries, from the locals ``live`` at the loop
    head or after it (``skip``: names carried otherwise); LoopFallback where the names do
    not end as a graph loop can carry them."""
    # positions: the array objects bound to live locals
    positions: list[ArrayVariable] = []
    names: dict[int, list] = {}
    for n in sorted(live - set(skip)):
        start, end = snap.locals.get(n), tx.locals.get(n)
        if _loaded(start, end) and isinstance(end, ArrayVariable) and end.node.kind == "placeholder":
            # an argument the body loaded first: before the loop it was its input, no views
            saved[id(end)] = (end, dict({a: getattr(end, a) for a in _ATTRS}, has_views=False))
            start = end
        elif _loaded(start, end) or _same_constant(tx, start, end):
            continue         # an argument (not an array) the body loaded first; a constant
        if end is start:
            if isinstance(start, ArrayVariable) and id(start) in saved:
                names.setdefault(id(start), []).append(n)
                if start not in positions:
                    positions.append(start)
            continue
        if n not in snap.locals:
            raise LoopFallback(f"'{n}' is assigned in the loop and used after it, but not bound before it")
        realized, placeholder = _realized(tx, start)
        if realized is not None:   # an argument the body loaded first, then rebound
            saved[id(realized)] = (realized, dict({a: getattr(realized, a) for a in _ATTRS},
                                                  node=placeholder, has_views=False))
            start = realized
        if not (isinstance(start, ArrayVariable) and isinstance(end, ArrayVariable)):
            raise LoopFallback(f"the loop rebinds '{n}' ({start.describe()}): a graph loop carries arrays only")
        names.setdefault(id(start), []).append(n)
        if start not in positions:
            positions.append(start)
    index = {id(v): k for k, v in enumerate(positions)}
    start_node = {id(saved[id(v)][1]["node"]): k for k, v in enumerate(positions)}
    written: set[int] = set()
    for n in calls:
        for m in n.op.mutates or ():
            root = _root(n.args[m], before)
            if _outer(root, before):
                if id(root) not in start_node:
                    raise LoopFallback(f"the body writes into an array the loop does not carry ({root.name})")
                written.add(start_node[id(root)])
    # where each position's names end up
    ends: list[Any] = []
    for k, v in enumerate(positions):
        targets = {id(tx.locals[n]): tx.locals[n] for n in names[id(v)]}
        if len(targets) != 1:
            raise LoopFallback("names bound to one array before the body end bound to different ones")
        ends.append(next(iter(targets.values())))
    carried = [k for k, v in enumerate(positions)
               if k in written or ends[k] is not v or v.node is not saved[id(v)][1]["node"]]
    # (and the arrays carried names end on: ``u, v = v, u``; an array the body only reads is not)
    keep = sorted(set(carried) | {index[id(ends[k])] for k in carried if id(ends[k]) in index})
    if not keep and not skip:
        raise LoopFallback("the body neither writes nor rebinds an array")
    for k in list(keep):
        v = positions[k]
        attrs = saved[id(v)][1]
        if v.tensor or any(getattr(e, "tensor", False) for e in ends):
            raise LoopFallback(f"{v.describe()} is a kiln.Tensor (gradients need the loop unrolled)")
        if attrs["base"] is not None or attrs["has_views"]:
            raise LoopFallback(f"the loop carries {v.describe()}, a view or an array with views")
        if not same_dims(tx, attrs["dims"], ends[k].dims if id(ends[k]) not in saved
                         else saved[id(ends[k])][1]["dims"]):
            raise LoopFallback(f"{v.describe()} has a run-time size the body changes")
    ends_k = {}
    perm: dict[int, int | None] = {}
    outs: list[Any] = []
    nxt: list[tuple] = []
    for k in keep:
        e, v = ends[k], positions[k]
        if id(e) in index:
            j = index[id(e)]
            if j not in keep:
                raise LoopFallback(f"'{names[id(v)][0]}' is rebound to an array the loop does not write")
            perm[k] = j
            node_now, node_start = e.node, saved[id(e)][1]["node"]
        elif id(e) in saved:
            raise LoopFallback(f"'{names[id(v)][0]}' is rebound to an array from before the loop")
        else:
            perm[k] = None
            node_now, node_start = e.node, None
        if node_now is node_start:
            nxt.append(("in", keep.index(perm[k])))
        else:
            if _outer(node_now, before):
                raise LoopFallback(f"'{names[id(v)][0]}' is rebound to a value from before the loop")
            if _outer(_root(node_now, before), before):
                raise LoopFallback(f"'{names[id(v)][0]}' is rebound to a view of an array from "
                                   f"before the iteration (carried arrays must not overlap)")
            if node_now.val != saved[id(v)][1]["node"].val:
                raise LoopFallback(f"'{names[id(v)][0]}' changes from {saved[id(v)][1]['node'].val} "
                                   f"to {node_now.val} in the body")
            nxt.append(("out", len(outs)))
            outs.append(node_now)
        ends_k[k] = e
    roots = [id(_root(o, before)) for o in outs]
    if len(set(roots)) != len(roots):
        raise LoopFallback("two carried arrays end as views of one array")
    image = [j for j in perm.values() if j is not None]
    if len(set(image)) != len(image) or len({id(e) for e in ends_k.values()}) != len(ends_k):
        raise LoopFallback("two carried names end bound to one array")
    for k in keep:
        if (k in written or positions[k].node is not saved[id(positions[k])][1]["node"]) \
                and k not in image:
            raise LoopFallback(f"the body writes {positions[k].describe()} and then rebinds its names")
    return ArraySlots(positions, names, keep, perm, outs, nxt)
