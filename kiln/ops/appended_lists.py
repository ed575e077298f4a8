"""A list an element loop node appended numbers to (kiln/capture/loop_appends.py), used
after the loop: its buffer ``values`` holds a row per append the body could make and the
node's carried count says how many it made, so ``loop_head`` gives the items, a size known
once the loop ran. What Python does with the list then may depend on that count, which
no graph knows before it runs:

- ``np.array(idx)`` of Python ints is int64, but ``np.array([])`` is float64;
- ``sum(out)`` of Python floats is a float, of no items the int 0;
- ``if out:`` takes one path or the other.

So capture *speculates* (kiln/ops/speculation.py): the op is told the kind of result
expected at its line (``expect``, a name: a dtype's, a Python type's, or "empty" and
"items" for a truth) and raises :class:`ResultKindChanged` when the data give another
one; the call then runs as Python and the next capture expects what it saw; a line
that saw two kinds breaks the graph there (as it did before). ``sum``, ``min`` and ``max``
are Python's own builtins on the items (``tolist()``: Python's numbers, or NumPy's
scalars), so their values, NaN handling, types and ``max() arg is an empty sequence``
are Python's; ``out[k]`` raises Python's ``list index out of range``.
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .meta import TensorMeta
from .registry import Category, declare
from .speculation import ResultKindChanged

# An element loop node's appends: a buffer of a row per append the body could make, and
# how many it made (a carried count): the first ``count`` rows, a size known once the
# loop ran.
# (A buffer of k columns, a run-time trip count's rows: its items in C order; tuples of
# ``width`` numbers: ``count`` rows of them.)
def _head(values, count, width=None):
    flat = values.reshape(-1)
    return flat[:count].copy() if width is None else flat[:count * width].reshape(-1, width).copy()


def _head_meta(values, count, width=None):
    items = int(np.prod(values.shape))
    return TensorMeta((items,) if width is None else (items // width, width), values.dtype)


loop_head = declare("loop_head", Category.EXTERN, _head, inputs=("values", "count"),
                    params={"width": None}, meta=_head_meta, data_dependent=True,
                    unbacked=lambda values, count, width=None: (("loop_head", 0), ("u",) + (None,) * (width is not None)),
                    doc="values[:count]: the items an element loop node appended to a list")
loop_head.fresh_result = True

_PYTHON = (int, float, bool, complex)


def items_of(values: np.ndarray, python: bool) -> list:
    """The list's items: Python numbers (``tolist``) or NumPy scalars of the buffer's dtype."""
    return values.tolist() if python else list(values)


def kind_name(value: Any) -> str:
    """``"int"``, ``"float"``: a Python number's type; ``"float64"``: a NumPy scalar's
    (``"bool_"`` for np.bool_, whose dtype's name is Python's ``"bool"``)."""
    if type(value) in _PYTHON:
        return type(value).__name__
    dtype = np.dtype(type(value))
    return "bool_" if dtype.kind == "b" else dtype.name


def as_0d(value: Any, kind: str, site: str) -> np.ndarray:
    """``value`` as the graph holds it, for the kind expected (raises
    ResultKindChanged for another kind, or a Python int past int64)."""
    got = kind_name(value)
    if got != kind:
        raise ResultKindChanged(site, got)
    if isinstance(value, np.generic):
        return value      # (a NumPy scalar, as NumPy's own reductions give)
    out = np.asarray(value)
    if out.dtype == object:
        raise ResultKindChanged(site, "int beyond int64")
    return out


def dtype_of_kind(kind: str) -> np.dtype:
    """The 0-d array's dtype for a result of kind ``kind``."""
    python = {"int": np.int64, "float": np.float64, "bool": np.bool_, "complex": np.complex128}
    return np.dtype(python.get(kind, kind))


def _array(values, expect=None, site=""):
    # (of items of one dtype NumPy makes an array of that dtype: the buffer's)
    out = values.copy() if len(values) else np.array([])
    if expect is not None and out.dtype.name != expect:
        raise ResultKindChanged(site, out.dtype.name)
    return out


appended_array = declare(
    "appended_array", Category.EXTERN, _array, inputs=("values",),
    params={"expect": None, "site": ""},
    meta=lambda values, expect=None, site="": TensorMeta(values.shape, np.dtype(expect or values.dtype)),
    data_dependent=True, unbacked=lambda values, expect, site: (("loop_head", 0), ((0, 0),)),
    fresh_result=True, may_raise=True,
    doc="np.array of a list an element loop appended numbers to: the items' dtype, or "
        "float64 when there are none (checked against the dtype expected)")


def _fold(values, fn="sum", python=True, expect=None, site=""):
    value = getattr(builtins, fn)(items_of(values, python))
    return as_0d(value, expect if expect is not None else kind_name(value), site)


list_fold = declare(
    "list_fold", Category.EXTERN, _fold, inputs=("values",),
    params={"fn": "sum", "python": True, "expect": None, "site": ""},
    meta=lambda values, fn="sum", python=True, expect=None, site="":
        TensorMeta((), dtype_of_kind(expect) if expect else values.dtype),
    may_raise=True, fresh_result=True,
    doc="Python's sum, min or max of a list an element loop appended numbers to (its "
        "result's kind checked against the one expected: sum of no floats is the int 0)")


def _item(values, index=-1, python=True):
    if not -len(values) <= index < len(values):
        raise IndexError("list index out of range")
    return values[index]


list_item = declare(
    "list_item", Category.EXTERN, _item, inputs=("values",), params={"index": -1, "python": True},
    meta=lambda values, index=-1, python=True: TensorMeta((), values.dtype), may_raise=True,
    fresh_result=True,
    doc="lst[index] of a list an element loop appended numbers to (Python's IndexError)")


def _truth(values, expect=None, site=""):
    got = "items" if len(values) else "empty"
    if expect is not None and got != expect:
        raise ResultKindChanged(site, got)
    return np.asarray(len(values) > 0)


list_truth = declare(
    "list_truth", Category.EXTERN, _truth, inputs=("values",), params={"expect": None, "site": ""},
    meta=lambda values, expect=None, site="": TensorMeta((), np.dtype(np.bool_)), may_raise=True,
    fresh_result=True,
    doc="bool(lst) of a list an element loop appended numbers to, checked against the "
        "truth expected (a branch on it is taken as speculated)")
