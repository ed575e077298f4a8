"""Lowering data for ops whose files were still being written when lowering was.

Pointwise ops carry their C++ templates in their own ``lowering`` field
(kiln/ops/pointwise.py); reductions carry the combine of their loop (kiln/ops/reduction.py,
``sum_to`` in broadcast.py). The rules below are keyed by op name until they move into the
``lowering`` fields of their ops in kiln/ops/{shape,creation}.py; the lookup already
prefers an op's own field, so moving a row needs no other change:

- ``SAFE_VIEWS``: how to run a VIEW op on a fake strided array without touching memory
  (reshape/ravel must never copy there: ``copy=False`` makes NumPy raise instead; an
  integer getitem must give a 0-d view, not a scalar);
- ``EXTRA_POINTWISE``: templates for pointwise ops declared outside pointwise.py (copy).
"""
from __future__ import annotations

from typing import Any

import numpy as np

def _getitem_view(x: Any, index: Any) -> Any:
    """``x[index]`` as an array view even where NumPy returns a scalar (``s[1]`` of a 1-d
    array: ``s[1, ...]`` is the 0-d view), so an element read stays a load in the kernel."""
    index = index if isinstance(index, tuple) else (index,)
    if any(ix is Ellipsis for ix in index):
        return x[index]
    return x[index + (Ellipsis,)]


SAFE_VIEWS = {
    "reshape": lambda x, shape: np.reshape(x, shape, copy=False),
    "ravel": lambda x: np.reshape(x, -1, copy=False),
    "getitem": _getitem_view,
}

EXTRA_POINTWISE = {
    "copy": {"cpp": {"*": "{x}"}},
}


def lowering_of(op: Any) -> Any:
    """The op's lowering data: its own field first, then the tables above."""
    if op.lowering is not None:
        return op.lowering
    if op.name in EXTRA_POINTWISE:
        return EXTRA_POINTWISE[op.name]
    return None
