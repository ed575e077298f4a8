"""``a.base`` read in a compiled function, answered while capturing where it is known.

NumPy's ``base`` is the array a view was made from, collapsed to the array owning the
memory (a view of a view of ``x`` has base ``x`` where ``x`` owns its memory), and None
for an array owning its memory. kiln knows it for:

- a NumPy scalar (``x.sum()``, ``x[0]`` of a vector): None;
- an argument: its ``.base`` is read from the argument and guarded like any value read
  through it (None, or another array: a graph input of its own, so ``x.base is y``
  guards that identity);
- a chain of views of an argument whose ``.base`` is None, each made by an op whose
  NumPy result is always a new view of its input (``Op.view_of_input``: ``x[1:]``,
  ``x.T``, ``np.broadcast_to``...): the base is that argument itself.

Anything else (an array computed in the function: NumPy's functions may hand back a view
of an array they made; an op that may copy or return its input; a view of a view passed
in) runs as Python: the graph breaks at the read.
"""
from __future__ import annotations

import numpy as np

from .sources import AttrSource
from .variables.arrays import ArrayVariable
from .variables.base import ConstantVariable, VariableTracker
from .variables.builder import wrap


def _argument_base(tx, var: ArrayVariable) -> VariableTracker:
    value = tx.output.leaf_value(var.source)
    return wrap(tx, value.base, AttrSource(var.source, "base"))


def _is_argument(var: ArrayVariable) -> bool:
    return var.base is None and var.source is not None and var.node.kind == "placeholder"


def array_base(tx, var: ArrayVariable) -> VariableTracker:
    """The tracker of ``var.base``, or a graph break where NumPy's answer is not known."""
    if var.tensor or var.array_type is not np.ndarray:
        tx.unsupported("unsupported_value", f"the .base of {var.describe()}: not an ndarray "
                       f"kiln models", "it runs as Python")
    if var.scalar:
        return ConstantVariable(None)   # a NumPy scalar (np.float64) owns its value
    if _is_argument(var):
        return _argument_base(tx, var)
    root = var.base
    node = var.node
    while node.kind == "call" and getattr(node.target, "view_of_input", False):
        node = node.args[0]
    if root is not None and _is_argument(root) and node is root.node:
        owner = _argument_base(tx, root)
        if owner.is_constant() and owner.value is None:
            return root      # NumPy's base of a view of an array owning its memory
    tx.unsupported("unsupported_value", f"the .base of {var.describe()} depends on how NumPy "
                   f"made it", "it runs as Python: read .base outside the compiled function to "
                   "keep the graph whole")
