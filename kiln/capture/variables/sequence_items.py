"""What Python does with the items of sequences of trackers, beside the containers that
hold them (containers.py): keys compared by identity first, item-wise equality that keeps
run-time sizes symbolic, and the count of a repetition (``[0.0] * n``)."""
from __future__ import annotations

import operator
from typing import Any

from .base import ConstantVariable, VariableTracker
from .sym_scalars import SymScalarVariable


def key_value(tx, var: VariableTracker) -> Any:
    """``var``'s value where Python compares it by identity first: a dict or set key, an
    item looked for with ``in`` or compared in a sequence, an ``is`` operand. A NaN key is
    found only for that NaN object (``d.get(s)`` of ``d = {np.nan: 1}`` finds np.nan, not
    another NaN): a NaN read from an argument, a global or an attribute is guarded by
    identity there (elsewhere, as any NaN: arithmetic does not see which one)."""
    key = var.as_constant(tx)
    source = getattr(var, "source", None)
    if type(key) is float and key != key and source is not None:
        tx.guards.add_id(source, key)
    return key


def identities(tx, items: list) -> None:
    """key_value of each of ``items``, compared as Python compares a sequence's items
    (``x is y or x == y``)."""
    for item in items:
        key_value(tx, item)


def sequence_equal(tx, op: Any, a: list, b: list) -> VariableTracker:
    """``x.shape == y.shape`` with run-time sizes: item by item, combined with ``&`` (``|``
    for ``!=``), so dynamic dims stay symbolic (guarded only where the result decides)."""
    if not all(v.is_constant() or isinstance(v, SymScalarVariable) for v in a + b):
        return NotImplemented   # arrays, objects: Python's own comparison rules apply
    if len(a) != len(b):
        return ConstantVariable(op is operator.ne)
    result: VariableTracker = ConstantVariable(op is operator.eq)
    combine = operator.and_ if op is operator.eq else operator.or_
    for x, y in zip(a, b):
        if x is y:   # Python's items compare ``x is y or x == y``: one value (a NaN too) is equal
            continue
        if not _not_nan(tx, x) or not _not_nan(tx, y):
            return NotImplemented   # ``[s] == [t]`` of NaNs: equal where they are one object
        item = tx.binary_op(op, x, y)
        if item.is_constant():
            if bool(item.value) != (op is operator.eq):
                return ConstantVariable(bool(item.value))
            continue
        result = item if result.is_constant() else tx.binary_op(combine, result, item)
    if isinstance(result, SymScalarVariable) and type(result.example) is not bool:
        # (a sequence compares to a Python bool; its items may be NumPy scalars)
        result = result.apply(tx, tx.output.ns.ref(bool, "builtin"), "bool", bool, [])
    return result


def _not_nan(tx, v: VariableTracker) -> bool:
    """Is ``v`` no NaN, on this call and (guarded) on later ones? Then whether it is the
    same object as another item does not change how they compare."""
    if v.is_constant():
        return not (isinstance(v.value, (float, complex)) and v.value != v.value)
    if not isinstance(v.example, (float, complex)):
        return True
    if v.example != v.example:
        return False
    tx.guards.add_truth(f"({v.code}) == ({v.code})", f"{v.text} is not nan", True, v.leaves)
    return True


def repeat_count(tx, op: Any, other: VariableTracker) -> int | None:
    """The count of ``seq * n``: a constant int, or a run-time int specialized (guarded),
    as a shape is, since it decides the length (``free = [0.0] * tellers``)."""
    if op is not operator.mul:
        return None
    if other.is_constant():
        return other.value if isinstance(other.value, int) else None
    if isinstance(other, SymScalarVariable) and other.python_type() is int:
        return other.as_constant(tx)
    return None
