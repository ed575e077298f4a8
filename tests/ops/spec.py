"""What an op-table row is, and the helpers rows share to build cases and calls.

A row names the op, how NumPy users spell it (``numpy``, the oracle, run on plain arrays
and, unless ``tensor`` says otherwise, on kiln Tensors), how to call the op itself
(``via_op``, with ``F`` and canonical parameters, used for tracing), how to draw its
inputs (``case``), which dtypes to try and whether it has a derivative rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

import kiln
from kiln.ops import REGISTRY, F
from kiln.ops.registry import Bound, call_spelling
from kiln.tensor import apply

from .gen import F64, FLOATS, REAL, Arg, Case, Ctx, Domain


# ==========================================================================================
# Rows

@dataclass(frozen=True)
class Row:
    op: str                               # the op's name in kiln.ops.REGISTRY
    numpy: Callable                       # NumPy spelling (the oracle): numpy(*args, **params)
    via_op: Callable                      # the op itself: via_op(*args, **params), with F
    case: Callable[[Ctx], Case]           # draws the arguments
    dtypes: tuple = FLOATS
    grad: bool = False                    # has a derivative rule (checked against the registry)
    tensor: Callable | None = None        # how to call it on Tensors, when not `numpy`
    alts: tuple = ()                      # more spellings: each on Tensors vs on arrays
    mutates: bool = False                 # writes into its first argument
    bad: tuple = ()                       # Cases NumPy rejects: kiln must raise the same
    name: str | None = None               # test id, when an op has several rows
    composite: bool = False               # a composite spelling (op: one of the ops it uses)

    def __repr__(self) -> str:
        return f"Row({self.id})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # hypothesis' reports
        printer.text(repr(self))

    @property
    def id(self) -> str:
        return self.name or self.op

    @property
    def on_tensors(self) -> Callable:
        return self.tensor or self.numpy


def A(*shape: int, dtype: Any = F64) -> Arg:
    """A fixed contiguous array argument for the error cases."""
    base = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) if shape else np.zeros((), dtype)
    return Arg(base, lambda b: b, "C")


# ==========================================================================================
# Case helpers

def unary_case(domain: Domain = REAL, grad_domain: Domain | None = None):
    def case(ctx: Ctx) -> Case:
        dom = grad_domain if (ctx.grad and grad_domain is not None) else domain
        return Case([ctx.arg(ctx.shape(), dom)])
    return case


def scalar_of(ctx: Ctx, domain: Domain) -> Any:
    """A Python scalar of the kind matching the dtype under test (NEP 50 weak scalars)."""
    value = domain.sample(ctx.rng, (), ctx.dtype, specials=False)[()]
    return value.item()


def suffix_shape(ctx: Ctx, shape: tuple) -> tuple:
    """A shape that broadcasts to ``shape``: a suffix of it with some dims set to 1."""
    kept = shape[len(shape) - ctx.integer(0, len(shape), "dims"):]
    return tuple(1 if ctx.boolean("unit") else d for d in kept)


# ==========================================================================================
# Calling ops

def getattr_op(name: str) -> Callable:
    """``F.<name>`` looked up when called, so a row can exist before its op is declared."""
    return lambda *args, **params: getattr(F, name)(*args, **params)


def spelled(key: Any) -> Callable:
    """Call a NumPy spelling the way kiln does for Tensors: its normalizer, then ``apply``.

    For spellings NumPy never dispatches to Tensors (np.zeros has no array argument;
    np.full does not dispatch on its fill value)."""
    return lambda *args, **kwargs: apply(kiln.ops.lookup(key).bind(*args, **kwargs))


def applied(op_name: str, **fixed: Any) -> Callable:
    """Run an op with no NumPy spelling on Tensors: ``apply(Bound(op, inputs, params))``."""
    def call(*inputs: Any, **params: Any) -> Any:
        return apply(Bound(REGISTRY[op_name], inputs, {**fixed, **params}))
    return call


def via_spelling(key: Any) -> Callable:
    """Call the op kiln's normalizer for this NumPy spelling chooses (on traced values, the
    normalizer's own reshapes record too)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return call_spelling(key, *args, **kwargs)   # a composite: each of its ops
    return call


def axes(axis: Any, nd: int, legacy: bool = False) -> tuple | None:
    """A reduction's canonical axis: None or a sorted tuple of non-negative ints.

    ``legacy``: ufunc reductions let a 0-d array be reduced over axis 0 or -1."""
    if axis is None:
        return None
    if legacy and nd == 0 and not isinstance(axis, tuple) and axis in (0, -1):
        return None
    return tuple(sorted(normalize_axis_tuple(axis, nd)))


def one_axis(axis: Any, nd: int) -> int | None:
    """argmax's and the scans' axis: None or one non-negative int (a 0-d input is 1-d)."""
    if axis is None:
        return None
    axis = normalize_axis_index(axis, max(nd, 1))
    return axis if nd else None
