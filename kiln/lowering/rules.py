"""Lowering data for ops whose files were still being written when lowering was.

Pointwise ops carry their C++ templates in their own ``lowering`` field
(kiln/ops/pointwise.py); reductions carry the combine of their loop (kiln/ops/reduction.py,
``sum_to`` in broadcast.py). The rules below are keyed by op name until they move into the
``lowering`` fields of their ops in kiln/ops/{shape,creation}.py; the lookup already
prefers an op's own field, so moving a row needs no other change:

- ``EXTRA_POINTWISE``: templates for pointwise ops declared outside pointwise.py (copy).
"""
from __future__ import annotations

from typing import Any

import numpy as np

EXTRA_POINTWISE = {
    "copy": {"scalar": "identity", "kinds": "fiub"},
}


def lowering_of(op: Any) -> Any:
    """The op's lowering data: its own field first, then the tables above."""
    if op.lowering is not None:
        return op.lowering
    if op.name in EXTRA_POINTWISE:
        return EXTRA_POINTWISE[op.name]
    return None
