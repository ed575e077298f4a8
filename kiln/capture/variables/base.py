"""The tracker interface, Python constants, NULL and closure cells.

Every value on the symbolic stack or in a symbolic local is a :class:`VariableTracker`.
What a kind of value can do (be called, have attributes read, take part in ``+``, be
iterated, decide a branch) is a method on its class; the default of each method is a
graph break naming the value.
"""
from __future__ import annotations

import enum
import operator
from typing import Any

from ..breaks import HINTS


_UNSTORED = object()


def stores_itself(value: "VariableTracker", target: Any, current: Any = _UNSTORED) -> bool:
    """Is storing ``value`` at source ``target`` a no-op? ``obj.w -= g`` and ``xs[i] += v``
    update the array in place and then store the same object back where it came from.
    ``current`` is what the slot holds now, where the function may have stored into it:
    ``v = l[0]; l[0] = x; l[0] = v`` puts the item back, no no-op."""
    def at_target(var: Any) -> bool:
        return getattr(var, "source", None) is not None and target is not None \
            and var.source.display() == target.display()
    return at_target(value) and (current is _UNSTORED or at_target(current))


class VariableTracker:
    source = None  # where the value came from (a Source), when it came from outside

    def describe(self) -> str:
        return type(self).__name__.replace("Variable", "").lower()

    def python_type(self) -> type:
        raise NotImplementedError(type(self).__name__)

    # -- constants ----------------------------------------------------------------------
    def is_constant(self) -> bool:
        return False

    def as_constant(self, tx) -> Any:
        """The Python value, when capture knows it (specializing runtime scalars)."""
        tx.unsupported("unsupported_value", f"{self.describe()} is not a Python constant here",
                       "pass plain Python values (ints, floats, tuples) for this argument")

    # -- behaviour ----------------------------------------------------------------------
    def call(self, tx, args: list, kwargs: dict) -> "VariableTracker":
        tx.unsupported("unsupported_call", f"calling {self.describe()} is not supported")

    def getattr(self, tx, name: str) -> "VariableTracker":
        tx.unsupported("unsupported_value", f"attribute '{name}' of {self.describe()} is not supported")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> "VariableTracker":
        return self.getattr(tx, name).call(tx, args, kwargs)

    def binary(self, tx, op: Any, other: "VariableTracker", reverse: bool) -> Any:
        return NotImplemented

    def unary(self, tx, op: Any) -> "VariableTracker":
        if op is operator.not_:
            return ConstantVariable(not self.truth(tx))
        tx.unsupported("unsupported_value", f"unary {op.__name__} on {self.describe()} is not supported")

    def truth(self, tx) -> bool:
        tx.unsupported("unsupported_value", f"truth value of {self.describe()} is not known to kiln")

    def items(self, tx) -> list["VariableTracker"]:
        """The elements, for unrolled iteration and unpacking."""
        tx.unsupported("unsupported_value", f"iterating over {self.describe()} is not supported")

    def getitem(self, tx, index: "VariableTracker") -> "VariableTracker":
        tx.unsupported("unsupported_value", f"indexing {self.describe()} is not supported")

    def setitem(self, tx, index: "VariableTracker", value: "VariableTracker") -> None:
        tx.unsupported("mutation", f"item assignment on {self.describe()} is not supported",
                       HINTS["mutation"])

    def delitem(self, tx, index: "VariableTracker") -> None:
        tx.unsupported("mutation", f"item deletion on {self.describe()} is not supported",
                       HINTS["mutation"])

    def length(self, tx) -> "VariableTracker":
        return ConstantVariable(len(self.items(tx)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"


def folded(tx, value: Any) -> "VariableTracker":
    """The tracker of a value a call computed during capture (``s.split(",")``,
    ``sorted("cab")``, ``str.maketrans``). A list or dict is the call's new object: a
    container made in the frame, rebuilt on every call, not a constant the entry holds,
    which every call would share (a ``parts.pop()`` after a break emptied it for the next
    call; a returned list was the same object every time)."""
    if type(value) in (list, dict):
        from .builder import wrap
        return wrap(tx, value, None)
    return ConstantVariable(value)


class ConstantVariable(VariableTracker):
    """A Python value capture knows exactly: ints, floats, strings, None, dtypes, classes..."""

    def __init__(self, value: Any, source: Any = None) -> None:
        self.value = value
        self.source = source

    def describe(self) -> str:
        return repr(self.value) if len(repr(self.value)) < 40 else type(self.value).__name__

    def python_type(self) -> type:
        return type(self.value)

    def is_constant(self) -> bool:
        return True

    def as_constant(self, tx) -> Any:
        return self.value

    def truth(self, tx) -> bool:
        return bool(self.value)

    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        if not other.is_constant():
            return NotImplemented
        a, b = (other.value, self.value) if reverse else (self.value, other.value)
        value = tx.fold(op, a, b)
        # (``s |= t`` of a set made in the frame: the same set, changed, under one tracker)
        return self if value is self.value and type(value) is set else folded(tx, value)

    def unary(self, tx, op: Any) -> VariableTracker:
        return folded(tx, tx.fold(op, self.value))

    def items(self, tx) -> list[VariableTracker]:
        if isinstance(self.value, (str, bytes, tuple, range, set, frozenset)):
            return [ConstantVariable(v) for v in self.value]
        if isinstance(self.value, enum.EnumMeta):   # an enum class: its members, fixed when made
            return [ConstantVariable(v) for v in self.value]
        return super().items(tx)

    def getattr(self, tx, name: str) -> VariableTracker:
        from .builder import wrap_constant_attr
        return wrap_constant_attr(tx, self, name)

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        from .constant_calls import call_constant
        return call_constant(tx, self, args, kwargs)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        if index.is_constant() and isinstance(self.value, (str, bytes, tuple)):
            return ConstantVariable(tx.fold(operator.getitem, self.value, index.value))
        return super().getitem(tx, index)


class NullVariable(VariableTracker):
    """The NULL a call sequence keeps beside its callable (below it on 3.11/3.12, above on 3.13)."""

    def describe(self) -> str:
        return "NULL"


NULL = NullVariable()


class CellVariable(VariableTracker):
    """A closure cell made in the frame (its contents are a tracker, or unset)."""

    def __init__(self, contents: VariableTracker | None = None, name: str = "") -> None:
        self.contents = contents
        self.name = name

    def describe(self) -> str:
        return f"cell {self.name}"


def const(value: Any) -> ConstantVariable:
    return ConstantVariable(value)


class LazyVariable(VariableTracker):
    """An argument not yet used: wrapped (and guarded) on first load."""

    def __init__(self, value: Any, source: Any) -> None:
        self.value = value
        self.source = source


class RealCellVariable(VariableTracker):
    """A closure cell of the compiled function itself: read through its source."""

    def __init__(self, name: str) -> None:
        self.name = name
