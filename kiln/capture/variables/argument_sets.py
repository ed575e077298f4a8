"""A set or frozenset handed to the compiled function (``labels_of(x, keep={1, 3})``,
``for k in s``, ``v in s``): a constant of the graph, as a tuple of ints handed in is, its
items guarded in the set's iteration order with their types (``tuple(s) == (1, 3)``; a
set of equal items built in another order may iterate otherwise, and ``{True}`` is not
``{1}`` to an index). One cache entry per set; past ``MAX_ITEMS`` items, or with items
of other types (floats: NaN and -0.0; objects), it stays an opaque value and breaks where
it is used, as before. The function may read it in any way; it may not change it (a
write, ``s.add(v)`` or ``s |= t``, runs as Python: folding it would change the caller's
set once, at capture)."""
from __future__ import annotations

import operator
from typing import Any

from .base import ConstantVariable, VariableTracker
from .builder import _SET_WRITES

MAX_ITEMS = 64
_ITEM_TYPES = (int, str, bytes, bool, type(None))
_IN_PLACE = frozenset((operator.ior, operator.iand, operator.isub, operator.ixor))


class ArgumentSetVariable(ConstantVariable):
    """The set at ``source``, its items guarded (see the module doc)."""

    def getattr(self, tx, name: str) -> VariableTracker:
        if name in _SET_WRITES:
            tx.unsupported("mutation", f"set.{name}() on a set passed in runs as Python")
        return super().getattr(tx, name)

    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        if op in _IN_PLACE and not reverse and type(self.value) is set:
            tx.unsupported("mutation", "an in-place operator on a set passed in runs as Python")
        return super().binary(tx, op, other, reverse)


def wrap_argument_set(tx, value: Any, source: Any) -> VariableTracker | None:
    """The tracker of a set or frozenset at ``source``, or None where it stays opaque."""
    if source is None or len(value) > MAX_ITEMS or not all(type(v) in _ITEM_TYPES for v in value):
        return None
    tx.guards.add_type(source, type(value))
    tx.guards.add_keys(source, tuple(value), typed=True)
    return ArgumentSetVariable(value, source)
