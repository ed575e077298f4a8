"""Run-time-length slices in a loop body (kiln/ops/loop_vectors.py has the ops).

``L[i, :i]``, ``x[:i]``, ``A[k + 1:, j]``, ``y[k - 1::-1]`` or ``A[i]`` of a 2-D ``A`` in a
body — one slice (step 1 or -1) among integer indices, of a float array — is a :class:`VecVariable`: a
``vec_view`` node whose length is known only when the loop runs. Elementwise arithmetic
on vectors and scalars (``+ - * /``, unary minus, ``abs``, ``np.sqrt``, ``np.maximum``,
``np.minimum``, ``np.square``, ``np.reciprocal``, and ``v ** 2``, ``v ** -1``, ``v ** 0.5``
as NumPy spells them: square, reciprocal, sqrt) gives ``vec_fn`` nodes; ``a @ b``, ``np.dot(a, b)``, ``a.dot(b)``,
``a.sum()``, ``np.sum(a)``, ``a.max()``, ``a.min()``, ``np.max(a)`` and ``np.min(a)`` give
``vec_reduce`` (a NumPy scalar, element code again);
``x[i, a:b] = value`` and ``x[i, a:b] -= value`` give ``vec_store``; ``np.flip(v)`` of a
view gives ``vec_flip`` (a view backwards). A whole 1-D float array among their operands
is its full view ``x[:]`` (``as_vector``). Anything else a
vector meets (its shape, a method, being carried or returned) keeps the loop unrolled.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..ops import REGISTRY, method_key
from ..ops.loop_vectors import REDUCTIONS, VEC_DTYPES, VEC_FUNCTIONS, VEC_POWERS, VecMeta
from ..ops.loops import OPERATOR_NAMES, stand_in
from .bytecode_facts import INPLACE_TO_PLAIN
from .loops import ArrayState, LoopFallback, ScalarValueVariable, _val_of, graph_value, int_entries
from .variables.arrays import ArrayVariable
from .variables.base import ConstantVariable, VariableTracker
from .variables.containers import ContainerMethodVariable, SliceVariable, TupleVariable


class VecVariable(VariableTracker):
    """A 1-D float array of run-time length in a loop body: a view of an array the body
    uses (``state``/``index`` say which) or an elementwise expression (a temporary)."""

    vector = True   # the translator's binary_op hands it in-place operators as they are

    def __init__(self, node: Any, state: ArrayState | None = None, where: tuple | None = None,
                 flipped: bool = False) -> None:
        self.node = node
        self.state = state
        self.where = where        # a view's (index, start, stop, axis, step) as the graph has them
        self.flipped = flipped    # np.flip of a view: a view too, but not one to store through

    def describe(self) -> str:
        kind = "view" if self.state is not None or self.flipped else "expression"
        return f"a run-time-length {self.node.val.dtype} {kind} ({self.node.name}, in a loop)"

    def python_type(self) -> type:
        return np.ndarray

    def as_constant(self, tx) -> Any:
        raise LoopFallback(f"{self.describe()} used where its value must be known")

    def truth(self, tx) -> bool:
        raise LoopFallback(f"the truth value of {self.describe()}")

    def getattr(self, tx, name: str) -> VariableTracker:
        if name in ("sum", "dot", "max", "min"):
            return ContainerMethodVariable(self, name)
        raise LoopFallback(f"attribute '{name}' of {self.describe()}")

    def length(self, tx) -> VariableTracker:
        raise LoopFallback(f"len() of {self.describe()}")

    def items(self, tx) -> list:
        raise LoopFallback(f"iteration over {self.describe()}")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if name in REDUCTIONS and not args and not kwargs:
            return reduce(tx, name, self, None)
        if name == "dot" and len(args) == 1 and not kwargs:
            return reduce(tx, "dot", self, args[0])
        raise LoopFallback(f"method '{name}' of {self.describe()}")

    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        if op in INPLACE_TO_PLAIN:
            if reverse:   # ``acc += v``: the translator takes the result as it is
                raise LoopFallback(f"an in-place operator on {other.describe()} with "
                                   f"{self.describe()}")
            if self.state is None:
                raise LoopFallback(f"an in-place operator on {self.describe()} (a temporary)")
            if self.node.graph is not tx.output.loop_trace.graph:
                raise LoopFallback(f"an in-place operator on {self.describe()}, made outside "
                                   f"this loop")
            value = self.binary(tx, INPLACE_TO_PLAIN[op], other, False)
            store(tx, self.state, self.where, value)
            return self       # the view, whose memory now holds the result
        if op is operator.matmul:
            a, b = (other, self) if reverse else (self, other)
            return reduce(tx, "matmul", a, b)
        name = OPERATOR_NAMES.get(op)
        if name == "pow" and not reverse:
            return power(tx, self, other)
        if name not in VEC_FUNCTIONS:
            raise LoopFallback(f"operator {getattr(op, '__name__', op)} on {self.describe()}")
        return elementwise(tx, name, [other, self] if reverse else [self, other])

    def unary(self, tx, op: Any) -> VariableTracker:
        name = OPERATOR_NAMES.get(op)
        if name not in ("neg", "pos"):
            raise LoopFallback(f"operator {getattr(op, '__name__', op)} on {self.describe()}")
        return elementwise(tx, name, [self])


def is_vector(var: Any) -> bool:
    return isinstance(var, VecVariable)


def is_whole(var: Any) -> bool:
    """A whole 1-D float array (symm's ``alpha * temp2``): in a body, the view ``x[:]``."""
    return isinstance(var, ArrayVariable) and not var.scalar and not var.tensor \
        and len(var.meta.shape) == 1 and var.meta.dtype.name in VEC_DTYPES


def as_vector(tx, var: Any) -> Any:
    """``var``, a whole 1-D float array as its full view."""
    if not is_whole(var):
        return var
    return getitem(tx, tx.output.loop_trace.array(tx, var), ((), None, None, 0, 1))


def _here(tx, var: "VecVariable") -> Any:
    """A vector's node as a value of the body being traced (lifted from an outer body)."""
    trace = tx.output.loop_trace
    return var.node if var.node.graph is trace.graph else trace.lift(tx, var.node)


def _operand(tx, var: VariableTracker) -> Any:
    """A vector's node, or a scalar's graph value (literal or node)."""
    var = as_vector(tx, var)
    if isinstance(var, VecVariable):
        return _here(tx, var)
    if isinstance(var, ConstantVariable) and (isinstance(var.value, bool) or stand_in(var.value) is None):
        raise LoopFallback(f"{var.describe()} in vector arithmetic")
    value = graph_value(tx, var)
    kind = stand_in(_val_of(value))
    if isinstance(kind, (bool, np.bool_)) or not isinstance(kind, (int, float, np.integer, np.floating)):
        raise LoopFallback(f"a {type(kind).__name__} in vector arithmetic")
    return value


def _call(tx, op: str, args: tuple, kwargs: dict) -> Any:
    try:
        return tx.output.loop_trace.graph.call(REGISTRY[op], args, kwargs, source=tx.location())
    except TypeError as e:
        raise LoopFallback(str(e)) from e


def elementwise(tx, fn: str, args: list) -> VecVariable:
    values = tuple(_operand(tx, a) for a in args)
    return VecVariable(_call(tx, "vec_fn", (values,), {"fn": fn}))


def power(tx, base: "VecVariable", exponent: VariableTracker) -> VecVariable:
    """``v ** k`` (``v **= k``): the function NumPy's ``ndarray.__pow__`` takes for ``k``."""
    value = exponent.value if isinstance(exponent, ConstantVariable) else None
    fn = VEC_POWERS.get((type(value), value))
    if fn is None:
        raise LoopFallback(f"{base.describe()} ** {exponent.describe()} (only ** 2, ** -1 and "
                           f"** 0.5 of a vector: NumPy's pow and C's differ by an ulp)")
    return elementwise(tx, fn, [base])


def reduce(tx, fn: str, a: VariableTracker, b: VariableTracker | None) -> ScalarValueVariable:
    a, b = as_vector(tx, a), as_vector(tx, b)
    if not isinstance(a, VecVariable) or (fn not in REDUCTIONS and not isinstance(b, VecVariable)):
        raise LoopFallback(f"{fn} of a vector and {b.describe() if b is not None else 'nothing'}")
    node = _call(tx, "vec_reduce", (_here(tx, a), _here(tx, b) if b is not None else None), {"fn": fn})
    return ScalarValueVariable(node, node.val)


def flip(tx, var: VariableTracker) -> VecVariable:
    """``np.flip(v)`` of a view (of a view's flip): the same memory backwards. The flip of
    an expression would be a temporary read backwards: not a vector op, the loop unrolls."""
    if not (isinstance(var, VecVariable) and (var.state is not None or var.flipped)):
        raise LoopFallback(f"numpy.flip of {var.describe()} (only of a view)")
    return VecVariable(_call(tx, "vec_flip", (_here(tx, var),), {}), flipped=True)


def _params(axis: int, step: int) -> dict:
    return {"axis": axis} if step == 1 else {"axis": axis, "step": step}


def store(tx, state: ArrayState, where: tuple, value: VariableTracker) -> None:
    index, start, stop, axis, step = where
    if isinstance(value, VecVariable) and value.state is state and value.where == where:
        return            # x[a:b] = x[a:b] (the store of an augmented assignment): nothing
    _call(tx, "vec_store", (state.node, index, start, stop, _operand(tx, value)), _params(axis, step))
    state.written = True


def _bound(tx, var: VariableTracker) -> Any:
    if isinstance(var, ConstantVariable) and var.value is None:
        return None
    if isinstance(var, ConstantVariable) and type(var.value) is int:
        return var.value
    value = graph_value(tx, var)
    kind = stand_in(_val_of(value))
    if isinstance(kind, (bool, np.bool_)) or not isinstance(kind, (int, np.signedinteger)):
        raise LoopFallback(f"a slice bound of type {type(kind).__name__}")
    return value


def view_where(tx, state: ArrayState, index: VariableTracker) -> tuple | None:
    """``(index, start, stop, axis, step)`` when ``index`` takes one run-time-length slice
    (step 1 or -1: durbin's ``y[k - 1::-1]``) of a float array (integers on the other
    axes); None when it is not a slice at all."""
    entries = list(index.item_list) if isinstance(index, TupleVariable) else [index]
    ndim = len(state.tracker.meta.shape)
    slices = [k for k, e in enumerate(entries) if isinstance(e, SliceVariable)]
    if not slices and len(entries) == ndim - 1 and ndim > 1:
        entries.append(SliceVariable(*(ConstantVariable(None),) * 3))   # A[i] of a 2-D A
        slices = [ndim - 1]
    if not slices:
        return None
    if len(slices) != 1 or len(entries) != ndim:
        raise LoopFallback("an index with more than one slice, or not one entry per axis")
    if state.tracker.meta.dtype.name not in VEC_DTYPES:
        raise LoopFallback(f"a slice of a {state.tracker.meta.dtype} array (float arrays only)")
    axis = slices[0]
    start, stop, step = entries[axis].parts
    if not (isinstance(step, ConstantVariable) and step.value in (None, 1, -1)):
        raise LoopFallback("a slice with a step other than 1 or -1")
    fixed = int_entries(tx, [e for k, e in enumerate(entries) if k != axis])
    return fixed, _bound(tx, start), _bound(tx, stop), axis, -1 if step.value == -1 else 1


def getitem(tx, state: ArrayState, where: tuple) -> VecVariable:
    index, start, stop, axis, step = where
    node = _call(tx, "vec_view", (state.node, index, start, stop), _params(axis, step))
    return VecVariable(node, state, where)


_REDUCERS = {np.dot: "dot", np.inner: "inner", np.matmul: "matmul", operator.matmul: "matmul",
             np.sum: "sum", method_key("dot"): "dot", method_key("sum"): "sum",
             np.max: "max", np.min: "min", np.amax: "max", np.amin: "min",
             method_key("max"): "max", method_key("min"): "min"}
_UFUNCS = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.divide: "truediv",
           np.true_divide: "truediv", np.negative: "neg", np.positive: "pos",
           np.absolute: "np.absolute", np.sqrt: "np.sqrt", np.maximum: "np.maximum",
           np.minimum: "np.minimum", abs: "abs", np.square: "np.square",
           np.reciprocal: "np.reciprocal"}


def call(tx, key: Any, args: list, kwargs: dict, what: str) -> VariableTracker:
    """A call with a vector among its arguments (call_in_body sends it here)."""
    if kwargs:
        raise LoopFallback(f"{what} with keywords on a vector")
    if key is np.flip and len(args) == 1:
        return flip(tx, args[0])
    try:
        fn = _REDUCERS.get(key)
    except TypeError:
        fn = None
    if fn is not None and len(args) == (1 if fn in REDUCTIONS else 2):
        return reduce(tx, fn, args[0], args[1] if fn not in REDUCTIONS else None)
    try:
        name = _UFUNCS.get(key) or OPERATOR_NAMES.get(key)
    except TypeError:
        name = None
    if name in VEC_FUNCTIONS:
        return elementwise(tx, name, list(args))
    raise LoopFallback(f"{what} on a vector (inside a loop body)")


def is_vec_meta(value: Any) -> bool:
    return isinstance(_val_of(value), VecMeta)
