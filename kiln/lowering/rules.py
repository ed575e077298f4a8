"""Lowering data for ops whose families live in files other engineers own.

Pointwise ops carry their C++ templates in their own ``lowering`` field
(kiln/ops/pointwise.py). The rules here are keyed by op name until the owners of
kiln/ops/{reduction,shape,creation}.py move them into their ops' ``lowering`` fields
(the lookup below already prefers an op's own field):

- ``REDUCTIONS``: how a reduction op lowers — the combine kind of its loop, and whether
  it is a composite (mean, var, std, sum_to) built from sum reductions and pointwise math;
- ``SAFE_VIEWS``: how to run a VIEW op on a fake strided array without touching memory
  (reshape/ravel must never copy there: ``copy=False`` makes NumPy raise instead);
- ``EXTRA_POINTWISE``: templates for pointwise ops declared outside pointwise.py.
"""
from __future__ import annotations

from typing import Any

import numpy as np

# reduction op name -> the combine of its accumulation loop ('composite' ones are built
# by kiln/lowering/reductions.py from 'sum' loops).
REDUCTIONS = {
    "sum": "sum", "prod": "prod", "max": "max", "min": "min", "any": "any", "all": "all",
    "mean": "composite", "var": "composite", "std": "composite", "sum_to": "composite",
}

SAFE_VIEWS = {
    "reshape": lambda x, shape: np.reshape(x, shape, copy=False),
    "ravel": lambda x: np.reshape(x, -1, copy=False),
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
