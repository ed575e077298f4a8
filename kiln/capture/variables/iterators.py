"""Iterators whose items are trackers: over a container's known items (loops over them
are unrolled), over an array's rows, over zip()'s arguments; ``make_iterator`` is
``iter()`` of a tracker. (The containers they walk: containers.py.)"""
from __future__ import annotations

import itertools
from typing import Any

from .base import ConstantVariable, VariableTracker
from .containers import DictVariable, ListVariable, TupleVariable


class IteratorVariable(VariableTracker):
    """An iterator over known items (loops over it are unrolled)."""

    def __init__(self, items: list[VariableTracker], origin: Any = None, reverse: bool = False) -> None:
        self.pending = list(items)
        # The list or dict walked (Python walks it live): an iterator read after it
        # changed is not followed (see changed()); ``reversed(l)`` walks it from its end.
        self.origin = origin
        self.reverse = reverse
        self.taken = 0

    def describe(self) -> str:
        return "iterator"

    def next(self, tx=None) -> VariableTracker | None:
        if tx is not None:
            self._unchanged(tx)
        if not self.pending:
            return None
        self.taken += 1
        return self.pending.pop(0)

    def changed(self) -> bool:
        """Has the walked list or dict changed since the iterator was made?"""
        from .containers import DictViewVariable
        if isinstance(self.origin, DictViewVariable):
            return self.origin.changed_after(self.taken)
        if isinstance(self.origin, ListVariable):
            items = self.origin.item_list
            rest = items[:len(items) - self.taken][::-1] if self.reverse else items[self.taken:]
            return len(rest) != len(self.pending) or any(a is not b for a, b in zip(rest, self.pending))
        if isinstance(self.origin, DictVariable):
            return len(self.origin.entries) != self.taken + len(self.pending)
        return False

    def _unchanged(self, tx) -> None:
        """``next(it)`` or ``list(it)`` after the list it walks changed (``it = iter(l);
        l.append(x); list(it)`` sees x in Python): read as Python."""
        if self.changed():
            tx.unsupported("unsupported_value", "an iterator over a list or dict that changed "
                           "since it was made: it is read as Python")

    def items(self, tx) -> list[VariableTracker]:
        self._unchanged(tx)
        out, self.pending = list(self.pending), []
        return out


class LazyIteratorVariable(IteratorVariable):
    """An iterator whose steps read their items when taken (``next``): taking them all
    is taking them one by one."""

    def items(self, tx) -> list[VariableTracker]:
        out = []
        while (item := self.next(tx)) is not None:
            out.append(item)
        return out


class ArrayIteratorVariable(LazyIteratorVariable):
    """``iter(x)`` or ``enumerate(x)`` over an array. Python reads each element or row
    when the loop takes it, so a loop that writes into ``x`` sees its own writes in later
    steps: each step indexes ``x`` then, not when the iterator was made."""

    def __init__(self, tx, array: VariableTracker, start: int | None = None,
                 reverse: bool = False) -> None:
        n = array.length(tx).as_constant(tx)      # the loop unrolls: its length is guarded
        super().__init__(list(range(n - 1, -1, -1)) if reverse else list(range(n)))
        self.array = array
        self.start = start          # enumerate's first count, or None for iter(x)
        self.reverse = reverse      # reversed(x): from the last row, read as lazily
        self.tried = False          # a loop node over its positions was tried (FOR_ITER)
        self.anonymous = start is not None   # made by GET_ITER or enumerate(): see FOR_ITER

    def item_at(self, tx, i: VariableTracker) -> VariableTracker:
        """The step's value at position ``i`` (a loop node's index): x[i], or (start + i, x[i])."""
        item = self.array.getitem(tx, i)
        if self.start is None:
            return item
        from ..loops import apply_scalar
        return TupleVariable([apply_scalar(tx, "add", [ConstantVariable(self.start), i]), item])

    def next(self, tx=None) -> VariableTracker | None:
        if not self.pending:
            return None
        self.taken += 1
        i = self.pending.pop(0)
        item = self.array.getitem(tx, ConstantVariable(i))
        if self.start is None:
            return item
        return TupleVariable([ConstantVariable(self.start + i), item])



class ZipIteratorVariable(LazyIteratorVariable):
    """``zip(...)``, and ``enumerate(...)`` of anything but an array: lazy, as in Python.
    Each step takes one item from each part when the loop asks, so a loop that writes
    into an array it zips reads its own writes, a zip walked twice is empty the second
    time, ``zip(it, it)`` pairs one iterator's items, and a loop that breaks on its
    first step has read one element, not all of them. A graph break rebuilds ``zip`` (or
    ``enumerate``) over the parts where they are (kiln/capture/rebuild.py)."""

    def __init__(self, parts: list[IteratorVariable], count: int | None = None) -> None:
        self.parts = parts
        self.count = count      # enumerate's next count; None for zip
        self.origin = None
        self.taken = 0

    @property
    def pending(self) -> range:
        """As many steps as the shortest part has left (loop checks count on it)."""
        return range(min((len(p.pending) for p in self.parts), default=0))

    def describe(self) -> str:
        return "zip iterator" if self.count is None else "enumerate iterator"

    def python_type(self) -> type:
        return zip if self.count is None else enumerate

    def next(self, tx=None) -> VariableTracker | None:
        row = []
        for part in self.parts:      # Python's order: an item taken before a part ends is lost
            item = part.next(tx)
            if item is None:
                return None
            row.append(item)
        self.taken += 1
        if self.count is None:
            return TupleVariable(row)
        self.count += 1
        return TupleVariable([ConstantVariable(self.count - 1), row[0]])

    def changed(self) -> bool:
        return any(p.changed() for p in self.parts)


class MapIteratorVariable(ZipIteratorVariable):
    """``map(fn, *its)`` and ``filter(fn, it)``: lazy, as in Python. Each step takes an item
    from each part and calls ``fn`` then (captured like any call), so its calls interleave
    with the loop body's work as they do in Python; filter keeps an item whose test is
    known while compiling (``None``: the item's own truth). A graph break rebuilds
    ``map``/``filter`` over the parts where they are (kiln/capture/rebuild.py)."""

    def __init__(self, kind: type, fn: VariableTracker, parts: list[IteratorVariable]) -> None:
        super().__init__(parts)
        self.kind, self.fn = kind, fn

    def describe(self) -> str:
        return f"{self.kind.__name__} iterator"

    def python_type(self) -> type:
        return self.kind

    @property
    def pending(self) -> list:
        if self.kind is filter:   # how many items pass is known only by taking them
            return list(range(len(self.parts[0].pending)))
        return super().pending

    def next(self, tx=None) -> VariableTracker | None:
        while True:
            row = []
            for part in self.parts:
                item = part.next(tx)
                if item is None:
                    return None
                row.append(item)
            if self.kind is map:
                self.taken += 1
                return self.fn.call(tx, row, {})
            keep = row[0] if self.fn.is_constant() and self.fn.value is None else self.fn.call(tx, row, {})
            if keep.truth(tx):
                self.taken += 1
                return row[0]



class AccumulateIteratorVariable(ZipIteratorVariable):
    """``itertools.accumulate(mats, np.matmul)`` (``initial=``, ``func`` None: ``+``): lazy,
    as in Python. Each step takes the next item and calls ``func`` on the running value and
    it then (captured like any call), yielding ``initial`` first where one is given. A graph
    break rebuilds it over the rest of its iterable, from the running value
    (kiln/capture/rebuild.py)."""

    def __init__(self, part: IteratorVariable, fn: VariableTracker | None,
                 initial: VariableTracker | None) -> None:
        super().__init__([part])
        self.fn = fn                    # None: Python's +
        self.acc = initial              # the running value (None: no item taken yet)
        self.first = initial is not None   # ``initial`` is the first item

    def describe(self) -> str:
        return "itertools.accumulate iterator"

    def python_type(self) -> type:
        return itertools.accumulate

    @property
    def pending(self) -> range:
        return range(len(self.parts[0].pending) + self.first)

    def next(self, tx=None) -> VariableTracker | None:
        if self.first:
            self.first = False
        else:
            item = self.parts[0].next(tx)
            if item is None:
                return None
            import operator
            self.acc = item if self.acc is None else tx.binary_op(operator.add, self.acc, item) \
                if self.fn is None else self.fn.call(tx, [self.acc, item], {})
        self.taken += 1
        return self.acc


def accumulate(tx, args: list, kwargs: dict) -> VariableTracker:
    """``itertools.accumulate(iterable, func=None, *, initial=None)`` as an
    :class:`AccumulateIteratorVariable`; other argument lists are Python's TypeError
    (folded)."""
    kwargs = dict(kwargs)
    fn = args[1] if len(args) > 1 else kwargs.pop("func", None)
    initial = kwargs.pop("initial", None)
    if not args or len(args) > 2 or kwargs:
        tx.fold(itertools.accumulate, *[a.as_constant(tx) for a in args], **kwargs)
    if fn is not None and fn.is_constant() and fn.value is None:
        fn = None
    if initial is not None and initial.is_constant() and initial.value is None:
        initial = None
    part = args[0] if isinstance(args[0], IteratorVariable) else make_iterator(tx, args[0])
    return AccumulateIteratorVariable(part, fn, initial)


def make_iterator(tx, obj: VariableTracker) -> IteratorVariable:
    """``iter(obj)``: arrays are read step by step, lists and dicts walked live."""
    from .arrays import ArrayVariable
    if isinstance(obj, ArrayVariable):
        return ArrayIteratorVariable(tx, obj)
    return IteratorVariable(obj.items(tx), obj if isinstance(obj, (ListVariable, DictVariable)) else None)


# itertools functions that take their iterables' items when made (``tuple(pool)``) and only
# rearrange them: each positional argument before ``r`` is an iterable.
POOLED = {itertools.product: None, itertools.combinations: 1, itertools.permutations: 1,
          itertools.combinations_with_replacement: 1}


def pooled(tx, fn: Any, args: list, kwargs: dict) -> IteratorVariable:
    """``itertools.product(xs, range(3))`` and friends: the function run on the items'
    positions (so it decides order and count, and raises its own errors), then an
    iterator over tuples of the items at those positions."""
    n = len(args) if POOLED[fn] is None else POOLED[fn]
    pools = [a.items(tx) for a in args[:n]]
    rest = [a.as_constant(tx) for a in args[n:]]
    params = {k: v.as_constant(tx) for k, v in kwargs.items()}
    places = tx.fold(lambda *a, **k: list(fn(*a, **k)),
                     *[[(i, j) for j in range(len(p))] for i, p in enumerate(pools)], *rest, **params)
    return IteratorVariable([TupleVariable([pools[i][j] for i, j in t]) for t in places])


def changed_dict_iter(d: dict, taken: int) -> Any:
    """An iterator over ``d`` made before ``d`` changed size (rebuilt at a break,
    kiln/capture/rebuild.py): its next step raises as Python's does."""
    raise RuntimeError("dictionary changed size during iteration")
    yield
