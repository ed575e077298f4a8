"""Uses after the loop of a list an element loop node appended numbers to
(kiln/capture/loop_appends.py; ops in kiln/ops/appended_lists.py): ``np.array(idx)``,
``sum(out)``, ``max(out)``, ``out[-1]``, ``if out:``.

Each is a graph op on the list's items (``StackedListVariable.rows``). Where the kind of
Python's result depends on how many items the loop appended (``np.array([])`` is float64,
``sum([])`` the int 0, a branch on ``out``), the op speculates on the kind its line gave
before (at first: that there are items) and raises ResultKindChanged when the data give
another: the call runs as Python and the next one compiles for what it saw; a line that
gave two kinds breaks the graph there, with the list rebuilt (kiln/ops/speculation.py).
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..ops import REGISTRY, TensorMeta
from ..ops.appended_lists import dtype_of_kind, items_of, kind_name
from .variables.arrays import ArrayVariable, PyValueVariable
from .variables.base import VariableTracker

_PYTHON = {"int": int, "float": float, "bool": bool, "complex": complex}


def _speculated(tx, tag: str, default: str, what: str) -> tuple:
    """``(expect, site)`` at this line for ``tag``: the kind it gave before, else
    ``default``; a line that gave two kinds breaks the graph."""
    filename, lineno, _ = tx.location()
    site = f"{filename}:{lineno}:{tag}"
    seen = tx.output.dynamic.kinds.get(site, set())
    if len(seen) > 1:
        tx.unsupported("unsupported_value", f"{what} of a list a loop appended to: the result "
                       f"was {' and '.join(sorted(seen))} here, as many items as the data gave")
    return (next(iter(seen)) if seen else default), site


def _call(tx, op: str, rows: ArrayVariable, params: dict, val: Any) -> Any:
    return tx.output.graph.call(REGISTRY[op], (rows.node,), params, val=val, source=tx.location())


def _number(node: Any, kind: str) -> VariableTracker:
    """A 0-d result as the Python number (``kind`` "int", "float"...) or NumPy scalar."""
    array = ArrayVariable(node)
    if kind in _PYTHON:
        return PyValueVariable(array, _PYTHON[kind])
    array.scalar = True
    return array


def array_of(tx, rows: ArrayVariable) -> ArrayVariable:
    """``np.array(idx)``: the items' dtype, float64 ``(0,)`` when there are none."""
    expect, site = _speculated(tx, "np.array", rows.meta.dtype.name, "np.array")
    if expect not in (rows.meta.dtype.name, "float64"):
        tx.unsupported("unsupported_value", f"np.array of a list a loop appended to gave {expect}")
    node = _call(tx, "appended_array", rows, {"expect": expect, "site": site},
                 TensorMeta(rows.meta.shape, np.dtype(expect)))
    return ArrayVariable(node, rows.dims)


def fold(tx, rows: ArrayVariable, python: bool, fn: Any) -> VariableTracker:
    """``sum(out)``, ``min(out)``, ``max(out)``: Python's builtin on the items."""
    example = np.ones(2, rows.meta.dtype)
    default = kind_name(fn(items_of(example, python)))   # (with items: the usual case)
    expect, site = _speculated(tx, fn.__name__, default, f"{fn.__name__}()")
    try:
        dtype = dtype_of_kind(expect)
    except TypeError:   # ("int beyond int64")
        tx.unsupported("unsupported_value", f"{fn.__name__}() of a list a loop appended to "
                       f"gave {expect}")
    node = _call(tx, "list_fold", rows, {"fn": fn.__name__, "python": python, "expect": expect,
                                         "site": site}, TensorMeta((), dtype))
    return _number(node, expect)


def item(tx, rows: ArrayVariable, python: bool, index: int) -> VariableTracker:
    """``out[index]`` (a constant int): Python's IndexError when there are too few."""
    node = _call(tx, "list_item", rows, {"index": index, "python": python},
                 TensorMeta((), rows.meta.dtype))
    kind = kind_name(items_of(np.zeros(1, rows.meta.dtype), python)[0])
    return _number(node, kind)


def truth(tx, rows: ArrayVariable) -> bool:
    """``if out:``: the truth its line gave before (at first: items), checked at run time."""
    expect, site = _speculated(tx, "truth", "items", "the truth value")
    _call(tx, "list_truth", rows, {"expect": expect, "site": site}, TensorMeta((), np.dtype(np.bool_)))
    return expect == "items"


BUILTIN_FOLDS = (builtins.sum, builtins.min, builtins.max)
