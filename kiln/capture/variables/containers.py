"""Tuples, lists, dicts and slices whose items are trackers (their iterators: iterators.py).

Containers made inside the frame may be mutated freely (their trackers change); a
mutation of one passed in (it has a source) changes its trackers too and is recorded, to
be replayed on the real object after the graph (kiln/capture/output.py); what cannot be
replayed is a graph break, so the update happens for real when the function runs as Python.
"""
from __future__ import annotations

import collections
import operator
from typing import Any

from ..breaks import HINTS
from ..sources import GetItemSource, LenSource
from .base import ConstantVariable, VariableTracker, stores_itself
from .sequence_items import identities, repeat_count, sequence_equal, key_value


def _index(tx, index: VariableTracker) -> Any:
    return index.as_constant(tx)


class TupleVariable(VariableTracker):
    def __init__(self, items: list[VariableTracker], source: Any = None) -> None:
        self.item_list = list(items)
        self.source = source

    def describe(self) -> str:
        return f"tuple of {len(self.item_list)}"

    def python_type(self) -> type:
        return tuple

    def is_constant(self) -> bool:
        return all(i.is_constant() for i in self.item_list)

    @property
    def value(self) -> tuple:
        return tuple(i.value for i in self.item_list)

    def as_constant(self, tx) -> Any:
        return tuple(i.as_constant(tx) for i in self.item_list)

    def items(self, tx) -> list[VariableTracker]:
        return list(self.item_list)

    def length(self, tx) -> VariableTracker:
        return ConstantVariable(len(self.item_list))

    def truth(self, tx) -> bool:
        return bool(self.item_list)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        key = _index(tx, index)
        if isinstance(key, slice):   # a new list or tuple (of an argument list, a named tuple)
            kind = ListVariable if isinstance(self, ListVariable) else TupleVariable
            return kind(tx.fold(operator.getitem, self.item_list, key))
        return tx.fold(operator.getitem, self.item_list, key)

    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        if op is operator.add and isinstance(other, TupleVariable) \
                and type(other) is type(self):
            items = other.item_list + self.item_list if reverse else self.item_list + other.item_list
            return type(self)(items)
        n = repeat_count(tx, op, other)
        if n is not None:
            return type(self)(self.item_list * n)
        if op in (operator.eq, operator.ne) and self.is_constant() and other.is_constant():
            identities(tx, self.item_list + getattr(other, "item_list", []))
            return ConstantVariable(tx.fold(op, self.value, other.value))
        if op in (operator.eq, operator.ne) and isinstance(other, TupleVariable) \
                and isinstance(other, ListVariable) == isinstance(self, ListVariable):
            # (a list argument and a list made here; a namedtuple and a tuple compare as tuples)
            return sequence_equal(tx, op, self.item_list, other.item_list)
        other_list = isinstance(other, ListVariable) or other.is_constant() and isinstance(other.value, list)
        other_tuple = isinstance(other, TupleVariable) and not other_list \
            or other.is_constant() and isinstance(other.value, tuple)
        if op in (operator.eq, operator.ne) and (other_list, other_tuple) == (
                not isinstance(self, ListVariable), isinstance(self, ListVariable)):
            return ConstantVariable(op is operator.ne)   # a list never equals a tuple
        return NotImplemented

    def contains(self, tx, value: VariableTracker) -> bool:
        if value.is_constant() and self.is_constant():
            identities(tx, [value] + self.item_list)
            return value.value in self.value
        for item in self.item_list:   # Python's order: ``item is value or item == value``
            if item is value:
                return True
            if not (item.is_constant() and value.is_constant()):
                break      # (``x in [y, x]`` compares ``y == x`` first: it reads data, or raises)
            identities(tx, [item, value])
            if tx.fold(operator.contains, [item.value], value.value):
                return True
        tx.unsupported("unsupported_value", f"'in' on a {self.describe()} of non-constant values")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if name in ("index", "count") and self.is_constant() and all(a.is_constant() for a in args):
            identities(tx, self.item_list + args[:1])
            return ConstantVariable(tx.fold(getattr(self.value, name), *[a.value for a in args]))
        return super().call_method(tx, name, args, kwargs)


class NamedTupleVariable(TupleVariable):
    """A namedtuple made in the graph (``np.linalg.svd``'s ``SVDResult``) or handed in: a
    tuple whose fields are also attributes, rebuilt as the same class."""

    def __init__(self, cls: type, items: list[VariableTracker], source: Any = None) -> None:
        super().__init__(items, source)
        self.cls = cls

    def describe(self) -> str:
        return f"{self.cls.__name__} of {len(self.item_list)}"

    def python_type(self) -> type:
        return self.cls

    @property
    def value(self) -> tuple:
        return self.cls(*(i.value for i in self.item_list))

    def as_constant(self, tx) -> Any:
        return self.cls(*(i.as_constant(tx) for i in self.item_list))

    def getattr(self, tx, name: str) -> VariableTracker:
        if name in self.cls._fields:
            return self.item_list[self.cls._fields.index(name)]
        from .user_classes import method_of
        method = method_of(tx, self.cls, self, name)   # a method of a user's NamedTuple
        return method if method is not None else super().getattr(tx, name)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        out = super().getitem(tx, index)
        return TupleVariable(out.item_list) if isinstance(out, NamedTupleVariable) else out

    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        return TupleVariable(self.item_list).binary(tx, op, other, reverse)


class ListVariable(TupleVariable):
    def describe(self) -> str:
        return f"list of {len(self.item_list)}"

    def python_type(self) -> type:
        return list

    def is_constant(self) -> bool:
        return False  # lists are mutable: never folded into a constant

    def as_constant(self, tx) -> Any:
        # a list, not the tuple a TupleVariable gives: str([1]) is '[1]', and np.zeros's
        # shape or an index may be either
        return [i.as_constant(tx) for i in self.item_list]

    def record(self, tx, kind: str, *payload) -> None:
        """A list from outside is mutated: the graph sees the new items now, the real list
        gets the same update replayed after the graph (kiln/capture/output.py)."""
        if self.source is not None:
            tx.output.record_side_effect(kind, self, *payload)

    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        """``+`` and ``*`` make a new list (of any two lists: an argument's too); ``l += it``
        extends ``l`` itself by any iterable and ``l *= n`` repeats it in place, so every
        name bound to the list sees the change."""
        if op is operator.iadd and not reverse:
            self.call_method(tx, "extend", [other], {})
            return self
        n = repeat_count(tx, operator.mul if op is operator.imul else op, other)
        if op is operator.imul and not reverse and n is not None:
            self.record(tx, "call", "__imul__", [ConstantVariable(n)], {})
            self.item_list[:] = self.item_list * n
            return self
        if op is operator.add and isinstance(other, ListVariable):
            a, b = (other, self) if reverse else (self, other)
            return ListVariable(a.item_list + b.item_list)
        if op is operator.mul and n is not None:
            return ListVariable(self.item_list * n)
        return super().binary(tx, op, other, reverse)

    def setitem(self, tx, index: VariableTracker, value: VariableTracker) -> None:
        if self.source is not None and index.is_constant() and type(index.value) is int \
                and -len(self.item_list) <= index.value < len(self.item_list) \
                and stores_itself(value, GetItemSource(self.source, index.value % len(self.item_list)),
                                  self.item_list[index.value]):
            return
        key = _index(tx, index)
        if isinstance(key, slice):   # ``l[a:b] = iterable``: its items, Python's checks
            value = ListVariable(value.items(tx))
            tx.fold(operator.setitem, self.item_list, key, value.item_list)
        else:
            tx.fold(operator.setitem, self.item_list, key, value)
        self.record(tx, "setitem", index, value)

    def delitem(self, tx, index: VariableTracker) -> None:
        tx.fold(operator.delitem, self.item_list, _index(tx, index))
        self.record(tx, "delitem", index)

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        mutators = {"append", "extend", "insert", "pop", "reverse", "clear", "remove"}
        if name == "append" and tx.output.loop_trace is not None and len(args) == 1 and not kwargs:
            from ..loop_appends import append_in_body   # (an element loop node's buffer)
            done = append_in_body(tx, self, args[0])
            if done is not None:
                return done
        if name in mutators:
            if name == "remove":
                tx.unsupported("unsupported_call", "list.remove is not supported")
            if name == "extend":
                args = [ListVariable(args[0].items(tx))]
            self.record(tx, "call", name, list(args), dict(kwargs))
            if name in ("append", "extend") and self.append_unread(tx, name, args):
                pass
            elif name == "append":
                self.item_list.append(args[0])
            elif name == "extend":
                self.item_list.extend(args[0].items(tx))
            elif name == "insert":
                self.item_list.insert(args[0].as_constant(tx), args[1])
            elif name == "pop":
                where = args[0].as_constant(tx) if args else -1
                return tx.fold(self.item_list.pop, where)
            elif name == "reverse":
                self.item_list.reverse()
            elif name == "clear":
                self.item_list.clear()
            else:
                tx.unsupported("unsupported_call", "list.remove is not supported")
            return ConstantVariable(None)
        if name == "sort" and not args:
            from .builtins import sorted_items
            if self.source is not None and not all(v.is_constant() for v in kwargs.values()):
                tx.unsupported("mutation", f"sort() with a key made in the function on the list "
                               f"{self.source.display()} that was passed in", HINTS["mutation"])
            self.item_list = sorted_items(tx, self.item_list, kwargs)
            self.record(tx, "call", name, [], dict(kwargs))
            return ConstantVariable(None)
        if name == "copy":
            return ListVariable(self.item_list)
        return super().call_method(tx, name, args, kwargs)

    def append_unread(self, tx, name: str, args: list) -> bool:
        """Adds to a list whose items capture has not read (see ArgumentListVariable)."""
        return False


class ArgumentListVariable(ListVariable):
    """A list passed in as an argument (a resume function's argument too: a list a graph
    break's Python code built). Its items are wrapped, and its length guarded, on first
    use; ``len()`` alone is a run-time int, so a list whose length changes between calls
    does not recompile the code that only counts it."""

    def __init__(self, tx, value: list, source: Any) -> None:
        self._tx = tx
        self._value = value
        self._items: list | None = None
        self.appended: list = []   # items appended before any item was read
        self.source = source

    @property
    def unread(self) -> bool:
        """No item read yet: the length is not guarded and appends are only recorded."""
        return self._items is None

    def describe(self) -> str:
        return "list" if self._items is None else super().describe()

    @property
    def item_list(self) -> list:
        if self._items is None:
            from .builder import read_items, wrap
            tx = self._tx
            read_items(tx, self._value, self.source)
            tx.guards.add_length(self.source, len(self._value))
            self._items = [wrap(tx, v, GetItemSource(self.source, i))
                           for i, v in enumerate(self._value)] + self.appended
        return self._items

    def forget_reads(self, appended: list) -> None:
        """Back to unread with these appends (a failed loop trace's rollback; the length
        guard a read added stays, which is only stricter)."""
        self._items = None
        self.appended = list(appended)

    def append_unread(self, tx, name: str, args: list) -> bool:
        """``conv.append(x)`` on a list whose items nothing has read needs neither its
        length nor its items: the append is replayed on the real list after the graph, and
        the list's length stays unguarded, so a history list growing by one each call (or
        each resume of a loop) does not recompile."""
        if self._items is not None:
            return False
        self.appended.extend([args[0]] if name == "append" else args[0].items(tx))
        return True

    @item_list.setter
    def item_list(self, items: list) -> None:
        self._items = list(items)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        """``hist[-1]`` or ``hist[0]`` of a list nothing else has read: that one item, with
        ``len(hist) > k`` guarded rather than its length, so a history list growing each
        call (or each resume of a loop, as ``fs.append(f)`` then ``fs[-1]`` in a line
        search) does not recompile. An item appended here is its own tracker."""
        key = index.as_constant(tx) if index.is_constant() else None
        if self._items is not None or type(key) is not int:
            return super().getitem(tx, index)
        if key < 0 and -key <= len(self.appended):
            return self.appended[key]
        at = key + len(self.appended) if key < 0 else key   # an index into the list passed in
        if not -len(self._value) <= at < len(self._value):
            return super().getitem(tx, index)   # (one of the appends, or Python's IndexError)
        from .builder import wrap
        need = -at if at < 0 else at + 1
        tx.guards.add_type(self.source, list)
        tx.guards.add_truth(f"_kiln_len({self.source.code(tx.guards.ns)}) >= {need}",
                            f"len({self.source.display()}) >= {need}", True, (self.source,))
        return wrap(tx, self._value[at], GetItemSource(self.source, at))

    def truth(self, tx) -> bool:
        """``if hist:``, ``not picked`` of a list nothing else has read: whether it is empty
        is guarded, not its length. real22's minimizer_sketch tests ``not picked or
        picked[-1] != window[0]`` in a loop whose deque breaks the graph every step; the
        resume function after ``picked.append`` guarded ``len(picked) == k``, recompiled at
        each new pick and passed recompile_limit (8) within the first call, warning."""
        if self._items is not None:
            return super().truth(tx)
        if self.appended:
            return True
        tx.guards.add_type(self.source, list)
        tx.guards.add_truth(f"_kiln_len({self.source.code(tx.guards.ns)}) > 0",
                            f"len({self.source.display()}) > 0", bool(self._value), (self.source,))
        return bool(self._value)

    def length(self, tx) -> VariableTracker:
        if self._items is not None or self.appended:
            return super().length(tx)
        from .arrays import SymScalarVariable
        source = LenSource(self.source)
        tx.guards.add_type(self.source, list)
        return SymScalarVariable(source.code(tx.guards.ns), source.display(), len(self._value),
                                 (source,), source=source)


class DictVariable(VariableTracker):
    """A dict with constant keys (str, int, ...) and tracker values."""

    def __init__(self, entries: dict[Any, VariableTracker], source: Any = None) -> None:
        self.entries = dict(entries)
        self.source = source

    def describe(self) -> str:
        return f"dict of {len(self.entries)}"

    def python_type(self) -> type:
        return dict

    def items(self, tx) -> list[VariableTracker]:
        return [ConstantVariable(k) for k in self.entries]

    def truth(self, tx) -> bool:
        return bool(self.entries)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        return tx.fold(operator.getitem, self.entries, key_value(tx, index))

    def setitem(self, tx, index: VariableTracker, value: VariableTracker) -> None:
        if self.source is not None and index.is_constant() and type(index.value) in (str, int) \
                and stores_itself(value, GetItemSource(self.source, index.value),
                                  self.entries.get(index.value)):
            return
        key = key_value(tx, index)
        if self.source is not None:  # replayed on the real dict after the graph
            if type(key) not in (str, int):
                tx.unsupported("mutation", f"storing a {type(key).__name__} key into the dict "
                               f"{self.source.display()} that was passed in", HINTS["mutation"])
            tx.output.record_side_effect("setitem", self, ConstantVariable(key), value)
        self.entries[key] = value

    def delitem(self, tx, index: VariableTracker) -> None:
        key = index.as_constant(tx)
        if self.source is not None and type(key) not in (str, int):
            tx.unsupported("mutation", f"deleting a {type(key).__name__} key of the dict "
                           f"{self.source.display()} that was passed in", HINTS["mutation"])
        tx.fold(operator.delitem, self.entries, key)   # a KeyError is the user's
        if self.source is not None:   # replayed on the real dict after the graph
            tx.output.record_side_effect("delitem", self, ConstantVariable(key))

    def contains(self, tx, value: VariableTracker) -> bool:
        return key_value(tx, value) in self.entries

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if name == "get":
            key = key_value(tx, args[0])
            default = args[1] if len(args) > 1 else ConstantVariable(None)
            return self.entries.get(key, default)
        if name in ("keys", "values", "items"):
            # A snapshot, good for the usual loop over it; anything else a view does (set
            # operations, type checks) is not followed: see DictViewVariable.
            if name == "keys":
                items = [ConstantVariable(k) for k in self.entries]
            elif name == "values":
                items = list(self.entries.values())
            else:
                items = [TupleVariable([ConstantVariable(k), v]) for k, v in self.entries.items()]
            return DictViewVariable(items, kind=name, owner=self)
        if name in ("update", "pop", "setdefault", "clear", "popitem"):
            if self.source is not None:
                if name not in ("update", "pop", "setdefault") or \
                        (name == "update" and not (len(args) == 1 and isinstance(args[0], DictVariable))):
                    tx.unsupported("mutation", f"{name}() on the dict {self.source.display()} that "
                                   f"was passed in", HINTS["mutation"])
                tx.output.record_side_effect("call", self, name, list(args), dict(kwargs))
            if name == "update" and len(args) == 1 and isinstance(args[0], DictVariable):
                self.entries.update(args[0].entries)
                self.entries.update(kwargs)
                return ConstantVariable(None)
            if name == "pop":
                key = key_value(tx, args[0])
                if len(args) > 1:
                    return self.entries.pop(key, args[1])
                return tx.fold(self.entries.pop, key)
            if name == "setdefault":
                return self.entries.setdefault(key_value(tx, args[0]),
                                               args[1] if len(args) > 1 else ConstantVariable(None))
        if name == "copy":
            return DictVariable(self.entries)
        return super().call_method(tx, name, args, kwargs)


class DefaultDictVariable(DictVariable):
    """``collections.defaultdict(list)``: reading a missing key stores and returns a new
    ``factory()`` (a list, a dict, or the number 0 / 0.0 / False). One passed in (a
    resume function's, after a break) has its factory guarded and its stores replayed."""

    FACTORIES = (None, list, dict, int, float, bool)

    def __init__(self, factory: Any, entries: dict[Any, VariableTracker], source: Any = None) -> None:
        super().__init__(entries, source)
        self.factory = factory

    def describe(self) -> str:
        return f"defaultdict of {len(self.entries)}"

    def python_type(self) -> type:
        return collections.defaultdict

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        key = key_value(tx, index)
        if self.factory is not None and key not in self.entries:
            made = ListVariable([]) if self.factory is list else DictVariable({}) \
                if self.factory is dict else ConstantVariable(self.factory())
            self.setitem(tx, ConstantVariable(key), made)
        return super().getitem(tx, index)

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if name == "copy":
            return DefaultDictVariable(self.factory, self.entries)
        return super().call_method(tx, name, args, kwargs)


def rebuild_dict(var: DictVariable, literal: str, ns: Any) -> str:
    """Python code making the dict ``var`` from its ``{...}`` literal (a defaultdict stays one)."""
    if isinstance(var, DefaultDictVariable):
        return f"{ns.ref(collections.defaultdict, 'cls')}({ns.ref(var.factory, 'f')}, {literal})"
    return literal


class SliceVariable(VariableTracker):
    def __init__(self, start: VariableTracker, stop: VariableTracker, step: VariableTracker) -> None:
        self.parts = (start, stop, step)

    def describe(self) -> str:
        return "slice"

    def python_type(self) -> type:
        return slice

    def as_constant(self, tx) -> slice:
        return slice(*(p.as_constant(tx) for p in self.parts))

    def is_constant(self) -> bool:
        return all(p.is_constant() for p in self.parts)

    @property
    def value(self) -> slice:
        return slice(*(p.value for p in self.parts))


class DictViewVariable(ListVariable):
    """``d.keys()`` / ``d.values()`` / ``d.items()``: iterated, indexed by len() or unpacked
    like the list of its items at that point; set operations and other view behaviour break
    the graph, so Python's real view answers."""

    def __init__(self, items: list[VariableTracker], kind: str, owner: "DictVariable") -> None:
        super().__init__(items)
        self.kind = kind
        self.owner = owner   # rebuilt as owner.<kind>() at a graph break or return
        self.snapshot = list(owner.entries.items())

    def changed(self) -> bool:
        """Has the dict changed since the view was taken? (Python's view is live.)"""
        now = list(self.owner.entries.items())
        return len(now) != len(self.snapshot) or any(
            a[0] != b[0] or a[1] is not b[1] for a, b in zip(now, self.snapshot))

    def changed_after(self, taken: int) -> bool:
        """Has the dict changed where an iterator over the view that has taken ``taken``
        items would see it: its keys, or a value not reached yet (one already taken may
        change: ``for k, v in d.items(): d[k] = v * 2``)?"""
        now = list(self.owner.entries.items())
        if [k for k, _ in now] != [k for k, _ in self.snapshot]:
            return True
        return any(a[1] is not b[1] for a, b in zip(now[taken:], self.snapshot[taken:]))

    def _live(self, tx) -> None:
        if self.changed():
            tx.unsupported("unsupported_value", f"a dict {self.kind} view of a dict that "
                           f"changed since: it is read as Python")

    def items(self, tx) -> list[VariableTracker]:
        self._live(tx)
        return super().items(tx)

    def length(self, tx) -> VariableTracker:
        self._live(tx)   # (len(d.items()) after d['b'] = x counts b)
        return super().length(tx)

    def truth(self, tx) -> bool:
        self._live(tx)
        return super().truth(tx)

    def describe(self) -> str:
        return f"dict {self.kind} view"

    def python_type(self) -> type:
        return type(getattr({}, self.kind)())

    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        tx.unsupported("unsupported_value", f"operator on a dict {self.kind} view")

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        tx.unsupported("unsupported_value", f"a dict {self.kind} view indexed (Python raises)")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        tx.unsupported("unsupported_value", f"dict {self.kind} view .{name}()")


class ContainerMethodVariable(VariableTracker):
    """``lst.append`` / ``d.get`` loaded by LOAD_METHOD: dispatches to the container."""

    def __init__(self, obj: VariableTracker, name: str) -> None:
        self.obj = obj
        self.name = name

    def describe(self) -> str:
        return f"{self.obj.describe()}.{self.name}"

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        return self.obj.call_method(tx, self.name, args, kwargs)
