"""What capture asks of a bound NumPy call's inputs before it records a node: the
normalizers' view of an array (:class:`ArrayArg`), positions in nested inputs, and
questions answered on stand-ins (does NumPy return a scalar here, does the output's
meta depend on an input's value)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import TensorMeta, infer_meta
from ..ops.meta import to_fake
from ..ops.registry import map_leaves
from .variables.arrays import ArrayVariable


class ArrayArg(TensorMeta):
    """What an op normalizer sees for an array: its shape and dtype (and its tracker)."""
    __slots__ = ("var",)

    def __init__(self, var: ArrayVariable) -> None:
        super().__init__(var.meta.shape, var.meta.dtype)
        self.var = var

    @property
    def T(self) -> "TensorMeta":
        return TensorMeta(self.shape[::-1], self.dtype)

    @property
    def numpy_scalar(self) -> bool:
        """Is it a NumPy scalar (np.float64), not a 0-d array, in the user's program?"""
        return bool(self.var.scalar)


def as_meta(v: Any) -> Any:
    return TensorMeta(v.shape, v.dtype) if isinstance(v, ArrayArg) else v


def input_at(inputs: tuple, where: Any) -> Any:
    """An op input by position, or by a path into a tuple input (``(1, 0)``: x[mask]'s mask)."""
    for i in (where if isinstance(where, tuple) else (where,)):
        inputs = inputs[i]
    return inputs


def replace_at(inputs: tuple, where: Any, value: Any) -> tuple:
    path = where if isinstance(where, tuple) else (where,)
    items = list(inputs)
    items[path[0]] = value if len(path) == 1 else replace_at(items[path[0]], path[1:], value)
    return tuple(items)


def numpy_returns_scalar(op, inputs: tuple, params: dict) -> bool:
    """Does NumPy give a scalar (``np.float64``), not a 0-d array, for this 0-d result?
    (A full reduction, an integer index, arithmetic on scalars: ``type()``, ``isinstance``
    and ``s += 1`` — a new value, not a write — depend on it.)"""
    if op.state is not None:   # (its kernel would draw: the spelling says what NumPy gives)
        return False

    def stand_in(v: Any) -> Any:
        if isinstance(v, ArrayArg):
            return np.dtype(v.dtype).type(1) if v.var.scalar else TensorMeta(v.shape, v.dtype)
        return v
    try:
        return isinstance(op.impl(*to_fake(map_leaves(inputs, stand_in)), **params), np.generic)
    except Exception:
        return False


def _perturbed(value: Any) -> Any:
    if isinstance(value, (bool, np.bool_)):
        return not value
    if isinstance(value, (int, np.integer)):
        return type(value)(value + 1 if value < 2 else value - 1)
    return type(value)(value * 0.5 + 0.25)


def value_free(op, inputs: tuple, params: dict, position: int) -> bool:
    """Does the output's shape/dtype stay put when input ``position`` takes another value?"""
    metas = tuple(v if not isinstance(v, ArrayArg) else TensorMeta(v.shape, v.dtype) for v in inputs)
    other = metas[:position] + (_perturbed(metas[position]),) + metas[position + 1:]
    try:
        return infer_meta(op, metas, params) == infer_meta(op, other, params)
    except Exception:
        return False


def flatten(values: Any):
    """The leaves of nested tuples and lists, in order."""
    for v in values:
        if isinstance(v, (tuple, list)):
            yield from flatten(v)
        else:
            yield v
