"""NumPy helper objects that are not functions: the index grids ``np.mgrid``/``np.ogrid``
and the iterators ``np.ndindex``/``np.ndenumerate``. Their arguments are shapes and slice
bounds, so capture evaluates them: a grid is a constant array of the graph (NumPy's own
values), an iteration is unrolled over the index tuples (each ``a[idx]`` read when the loop
takes it, as Python does)."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .base import ConstantVariable, VariableTracker
from .containers import IteratorVariable, TupleVariable

# An unrolled iteration past this many index tuples would be a huge graph: it breaks.
MAX_UNROLLED_INDICES = 4096

GRID_TYPES = (type(np.mgrid), type(np.ogrid))


class IndexGridVariable(VariableTracker):
    """``np.mgrid`` / ``np.ogrid``: indexing with constant slices gives NumPy's arrays."""

    def __init__(self, grid: Any, source: Any = None) -> None:
        self.grid = grid
        self.source = source

    def describe(self) -> str:
        return "np.mgrid" if isinstance(self.grid, type(np.mgrid)) else "np.ogrid"

    def python_type(self) -> type:
        return type(self.grid)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        key = index.as_constant(tx)   # slice bounds: constants (shapes), runtime ones specialized
        value = tx.fold(operator.getitem, self.grid, key)
        if isinstance(value, tuple):   # ogrid: one array per axis
            return TupleVariable([tx.output.constant_array(v) for v in value])
        return tx.output.constant_array(value)


def _count(tx, shape: tuple, what: str) -> None:
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if n > MAX_UNROLLED_INDICES:
        tx.unsupported("unsupported_call", f"{what} over {n} indices would unroll into a "
                       f"graph of {n} steps (at most {MAX_UNROLLED_INDICES})",
                       "write the loop as array operations (or over a range, which compiles "
                       "to a loop), or move it out of the compiled function")


class NdIndexVariable(IteratorVariable):
    """``np.ndindex(*shape)``: the index tuples in C order (the loop unrolls)."""

    def __init__(self, tx, shape: tuple) -> None:
        _count(tx, shape, "np.ndindex")
        super().__init__([ConstantVariable(i) for i in np.ndindex(*shape)])

    def describe(self) -> str:
        return "np.ndindex iterator"


class NdEnumerateVariable(IteratorVariable):
    """``np.ndenumerate(a)``: (index, a[index]) pairs, each element read when taken."""

    def __init__(self, tx, array: VariableTracker) -> None:
        shape = tuple(array.getattr(tx, "shape").as_constant(tx))
        _count(tx, shape, "np.ndenumerate")
        super().__init__(list(np.ndindex(*shape)))
        self.array = array

    def describe(self) -> str:
        return "np.ndenumerate iterator"

    def next(self, tx=None) -> VariableTracker | None:
        if not self.pending:
            return None
        self.taken += 1
        idx = self.pending.pop(0)
        return TupleVariable([ConstantVariable(idx), self.array.getitem(tx, ConstantVariable(idx))])

    def items(self, tx) -> list[VariableTracker]:
        out = []
        while (item := self.next(tx)) is not None:
            out.append(item)
        return out


def construct(tx, cls: type, args: list, kwargs: dict) -> VariableTracker | None:
    """``np.ndindex(...)`` / ``np.ndenumerate(a)`` as capture's iterators; None: not these."""
    if cls is np.ndindex:
        if kwargs:
            return None
        shape = tuple(a.as_constant(tx) for a in args)
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        tx.fold(np.ndindex, *shape)    # NumPy's errors for a bad shape
        return NdIndexVariable(tx, tuple(shape))
    if cls is np.ndenumerate and len(args) == 1 and not kwargs:
        from .arrays import ArrayVariable
        if isinstance(args[0], ArrayVariable):
            return NdEnumerateVariable(tx, args[0])
    return None
