"""A large dict from outside the frame read key by key (``sys.modules``): its keys are
guarded one read at a time, not as one tuple (containers.py holds the plain dicts)."""
from __future__ import annotations

from typing import Any

from ..sources import GetItemSource
from .base import ConstantVariable, VariableTracker
from .containers import ContainerMethodVariable, DictVariable


class KeyedDictVariable(VariableTracker):
    """A large dict from outside the frame, read by key (``sys.modules.get("numpy")`` in
    array-api-compat, under every scipy function): each key read guards its presence and
    value, not the whole key tuple, which cost every call a thousand-key comparison and
    failed on any import. Anything that needs every key (iteration, len, a store) turns it
    into a plain DictVariable first, with the key tuple guarded as before."""

    def __init__(self, value: dict, source: Any) -> None:
        self.value = value
        self.source = source
        self.full: DictVariable | None = None

    def describe(self) -> str:
        return f"dict {self.source.display()}"

    def python_type(self) -> type:
        return dict

    def _all(self, tx) -> DictVariable:
        if self.full is None:
            from .builder import wrap_dict
            self.full = wrap_dict(tx, self.value, self.source)
        return self.full

    def _read(self, tx, key: Any) -> VariableTracker | None:
        if self.full is not None or type(key) not in (str, int):
            return self._all(tx).entries.get(key)
        from .builder import wrap
        present = key in self.value
        tx.guards.add_truth(f"({key!r} in {self.source.code(tx.guards.ns)})",
                            f"({key!r} in {self.source.display()})", present, (self.source,))
        return wrap(tx, self.value[key], GetItemSource(self.source, key)) if present else None

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        key = index.as_constant(tx)
        found = self._read(tx, key)
        if found is None:
            tx.user_error(KeyError(key))
        return found

    def contains(self, tx, value: VariableTracker) -> bool:
        return self._read(tx, value.as_constant(tx)) is not None

    def getattr(self, tx, name: str) -> VariableTracker:
        return ContainerMethodVariable(self, name)

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if name == "get" and not kwargs and 1 <= len(args) <= 2 and self.full is None:
            found = self._read(tx, args[0].as_constant(tx))
            if found is not None:
                return found
            return args[1] if len(args) > 1 else ConstantVariable(None)
        return self._all(tx).call_method(tx, name, args, kwargs)

    def items(self, tx) -> list[VariableTracker]:
        return self._all(tx).items(tx)

    def truth(self, tx) -> bool:
        return self._all(tx).truth(tx)

    def setitem(self, tx, index: VariableTracker, value: VariableTracker) -> None:
        self._all(tx).setitem(tx, index, value)
