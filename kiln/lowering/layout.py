"""NumPy's memory layout of results (``order='K'``), for the buffers kiln returns: the
rule itself (which layout NumPy gives an op's result) is op knowledge, in
kiln/ops/result_layout.py; here is what the generated code does with it.

Lowering records the layout on a value it computes (``note_layout``), allocates a returned
buffer that way, and checks an extern's result against the layout its kernels were built
for (``in_order``).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..ops.result_layout import (Strided, axis_order, contiguous_order, empty_in_order, is_c,  # noqa: F401
                                 layout_of, strides_in_order)


def in_order(a: np.ndarray, strides: tuple, order: tuple) -> np.ndarray:
    """``a`` when its strides (bytes) are ``strides`` on every axis longer than 1 (the
    layout NumPy gave it and a kernel was built for), else a copy in that layout (the
    wrapper's check of an extern result: kiln/lowering/externs.py ``_numpy_order``)."""
    if a.strides == strides or a.ndim == len(strides) and all(
            s == t or n <= 1 for s, t, n in zip(a.strides, strides, a.shape)):
        return a
    out = empty_in_order(a.shape, order, a.dtype)
    out[...] = a
    return out


def contiguous_like(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, ...] | None:
    """A window's layout made contiguous (a view of a bigger array keeps its axis order,
    a reversed axis stays reversed: np.flip's negative strides); None for C order."""
    if math.prod(shape) <= 1:
        return None
    out = strides_in_order(shape, axis_order(shape, strides))
    out = tuple(-s if strides[a] < 0 and shape[a] > 1 else s for a, s in enumerate(out))
    return None if is_c(shape, out) else out
