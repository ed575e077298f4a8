"""The frame state a loop capture attempt puts back when it fails (``_Snapshot``): the
stack, locals, cells, side effects, and the containers, objects and selections the
attempt may have changed (kiln/capture/loop_node.py, graph_loop.py, graph_breaks.py)."""
from __future__ import annotations

from typing import Any

from .variables.arrays import ArrayVariable, MaskedSelectionVariable
from .variables.base import CellVariable
from .variables.containers import DictVariable, ListVariable, TupleVariable
from .variables.functions import NestedFunctionVariable, PartialVariable, UserObjectVariable


class _Snapshot:
    """The frame state a failed loop trace puts back."""

    def __init__(self, tx) -> None:
        self.stack = list(tx.stack)
        self.locals = dict(tx.locals)
        self.ip, self.steps, self.kw_names, self.inst = tx.ip, tx.steps, tx.kw_names, tx.inst
        self.effects = len(tx.output.side_effects)
        self.yielded = len(tx.yielded)
        self.cells = {name: c.contents for name, c in tx.cells.items() if isinstance(c, CellVariable)}
        # Cells of the frame's nested functions that are not the frame's own (an inlined
        # helper's or a 3.11 comprehension's frame holds ``find``, whose cell ``parent``
        # is the enclosing frame's): the attempt may write through them too.
        own = {id(c) for c in tx.cells.values()}
        self.closures: list[tuple[CellVariable, Any]] = []
        self.containers: list[tuple[Any, Any]] = []
        # Objects' attribute stores (``self.w -= ...`` in the body): a failed attempt's
        # values name graph nodes the rollback removes.
        self.objects: list[tuple[Any, dict]] = []
        # Selections ``x[mask]`` a failed attempt took: their node is one the rollback removes.
        self.pending = list(tx.output.pending_selections)
        self.selections: list[tuple[Any, Any]] = []
        # Lists, dicts and objects from outside the attempt met first (an argument first
        # loaded in the body): their trackers, changed by the attempt, are forgotten, so the
        # next load wraps the value afresh (langfuzz seed 10013: ``for v in y: box.v *= 3``
        # multiplied once more than Python, the attempt's first pass kept)
        self.mutables = set(tx.output.mutable_objects)
        # Arrays' dynamic dims an element loop's attempt pins (loops.py ``array``): a failed
        # attempt gives them back, guard and all (``unpin``) (fuzz7: ``acc = x.copy(); for _ in
        # range(n): acc = acc * 0.5`` under dynamic=True kept ``x.shape[0] == 5``, so the
        # unrolled loop, and the graph loop of a later count, compiled for every size)
        self.guards = tx.guards.mark()
        self.arrays: list[tuple[Any, tuple]] = []
        seen: set[int] = set()
        for v in list(self.stack) + list(self.locals.values()) + list(self.cells.values()) \
                + list(tx.output.wrapped.values()) + self.pending:
            self._walk(v, seen)
        self.pins = {id(d): (d, d.pinned) for _, dims in self.arrays for d in dims if d is not None}
        self.closures = [(c, contents) for c, contents in self.closures if id(c) not in own]

    def cell_values(self) -> list:
        """What the frame's cells and its nested functions' cells held."""
        return list(self.cells.values()) + [contents for _, contents in self.closures]

    def _walk(self, v: Any, seen: set) -> None:
        if id(v) in seen:
            return
        seen.add(id(v))
        if isinstance(v, ArrayVariable):
            self.arrays.append((v, v.dims))
        if isinstance(v, MaskedSelectionVariable):
            self.selections.append((v, v.taken))
        elif isinstance(v, NestedFunctionVariable):
            for c in v.closure:
                if isinstance(c, CellVariable) and id(c) not in seen:
                    seen.add(id(c))
                    self.closures.append((c, c.contents))
                    self._walk(c.contents, seen)
            for x in [*v.defaults, *v.kwdefaults.values()]:
                self._walk(x, seen)
        elif isinstance(v, PartialVariable):
            for x in [v.func, *v.args, *v.kwargs.values()]:
                self._walk(x, seen)
        elif getattr(v, "unread", False):   # an argument list nothing read: only its appends
            self.containers.append((v, _Unread(v.appended)))
        elif isinstance(v, (ListVariable, TupleVariable)):
            self.containers.append((v, list(v.item_list)))
            for x in v.item_list:
                self._walk(x, seen)
        elif isinstance(v, DictVariable):
            self.containers.append((v, dict(v.entries)))
            for x in v.entries.values():
                self._walk(x, seen)
        elif isinstance(v, UserObjectVariable):
            stored = v.__dict__.get("stored", {})
            self.objects.append((v, dict(stored)))
            for x in stored.values():
                self._walk(x, seen)

    def changed_outside(self, tx) -> bool:
        return len(tx.output.side_effects) != self.effects or any(
            _contents(v) != saved for v, saved in self.containers) or any(
            tx.cells[n].contents is not c for n, c in self.cells.items()) or any(
            cell.contents is not c for cell, c in self.closures)

    def restore(self, tx) -> None:
        tx.stack = list(self.stack)
        tx.locals = dict(self.locals)
        tx.ip, tx.steps, tx.kw_names, tx.inst = self.ip, self.steps, self.kw_names, self.inst
        tx.result = None
        del tx.output.side_effects[self.effects:]
        del tx.yielded[self.yielded:]
        for name, contents in self.cells.items():
            tx.cells[name].contents = contents
        for cell, contents in self.closures:
            cell.contents = contents
        for v, saved in self.containers:
            if isinstance(v, DictVariable):
                v.entries = dict(saved)
            elif isinstance(saved, _Unread):
                v.forget_reads(saved)
            else:
                v.item_list = list(saved)
        for v, saved in self.objects:
            v.__dict__["stored"] = dict(saved)
        tx.output.pending_selections = list(self.pending)
        output = tx.output
        for key in [k for k in output.mutable_objects if k not in self.mutables]:
            var, _ = output.mutable_objects.pop(key)
            for name in [n for n, v in output.wrapped.items() if v is var]:
                del output.wrapped[name]
        for v, taken in self.selections:
            v.taken = taken

    def unpin(self, tx) -> None:
        """Give back the dynamic dims a failed attempt pinned (not on :meth:`restore`: a
        body traced again, or a node built from the trace, keeps what its trace pinned)."""
        for v, dims in self.arrays:
            v.dims = dims
        unpinned = set()
        for d, pinned in self.pins.values():
            if d.pinned and not pinned:
                d.pinned = False
                if d.is_shape():
                    unpinned.add((d.source.base.base, d.source.index))
        tx.guards.unpin_since(self.guards, unpinned)


class _Unread(list):
    """The appends recorded on an argument list no item of which was read."""


def _contents(v: Any) -> Any:
    if isinstance(v, DictVariable):
        return dict(v.entries)
    return _Unread(v.appended) if getattr(v, "unread", False) else list(v.item_list)
