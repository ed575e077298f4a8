"""Writes into arrays during capture: ``out=``, in-place operators and mutation ops.

A write into an array the graph made, that nothing else can see, becomes a new node (the
functional op); any other write is recorded as a mutation op (``copyto``, ``setitem``,
``add_at``, ``fill``) into the target's node, in program order: the eager interpreter runs
it in place, aot functionalizes it and writes final values back into the caller's arrays
(docs/aot.md §5). A write into an array NumPy would refuse (read-only, a broadcast view)
raises NumPy's error at the user's line. Called by kiln/capture/opcall.py (and the loop
node's writes, loop_node.py).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..array_kinds import kind_of
from ..errors import KilnError
from ..ops import REGISTRY
from .breaks import HINTS
from .call_inputs import ArrayArg
from .variables.arrays import ArrayVariable, UnbackedSize
from .variables.base import ConstantVariable, VariableTracker


def record_node(tx, op, inputs, params, method=None, out_write=False):
    """Add ``op(*inputs, **params)`` to the graph at the current instruction (a mutation
    op counts as a write; ``out_write``: it is the write into a call's ``out=``,
    ir/graph.py ``out_write``); kiln's refusal breaks the graph, the user's error is theirs."""
    if op.mutates:
        selections.before_write(tx)
        tx.output.writes += 1
    try:
        return tx.output.graph.call(op, inputs, params, source=tx.location(), method=method,
                                    out_write=out_write)
    except KilnError as e:
        tx.unsupported("unsupported_call", f"{op.name}: {e}")
    except Exception as e:
        tx.user_error(e)


def _in_grad(tx) -> bool:
    """Inside a function kiln.grad differentiates (kiln/capture/variables/grad.py)?"""
    return bool(getattr(tx.output, "grad_depth", 0))


def write_out(tx, what: str, out: Any, result: ArrayVariable, broadcasts: bool = True) -> VariableTracker:
    """``out=`` / in-place operator: the expression's value is the target array itself.

    A target nobody else can see (made in the graph, no views) just takes a new node; any
    other target (an argument, a view, an array with views) gets ``copyto(target, result)``,
    which the backends run in place (eager) or functionalize (aot). Only a ufunc
    (``broadcasts``) spreads its result over a larger ``out``; elsewhere NumPy wants the
    result's exact shape.
    """
    if not isinstance(out, ArrayArg):
        tx.unsupported("unsupported_value", f"{what}: out= must be an array")
    target = out.var
    if target.scalar:
        tx.user_error(TypeError("return arrays must be of ArrayType"))
    rdims, tdims = result.dims[::-1], target.dims[::-1]
    if any(isinstance(d, UnbackedSize) and (k >= len(tdims) or tdims[k] is not d)
           for k, d in enumerate(rdims)) or \
            any(isinstance(d, UnbackedSize) and (k >= len(rdims) or rdims[k] is not d)
                for k, d in enumerate(tdims)):
        tx.unsupported("data_dependent", f"{what}: out= and the result sizes depend on the "
                       f"data in different ways", HINTS["data_dependent"])
    shape, into = result.meta.shape, target.meta.shape
    if shape != into and (not broadcasts or not _broadcasts_into(shape, into)):
        tx.unsupported("user_error", f"{what}: out= of shape {into} for a result of shape {shape} "
                       f"(NumPy raises here, or writes only part of it)")
    _guard_sizes_meet(tx, rdims, tdims, shape[::-1])
    if target.can_rewrite_in_place(_in_grad(tx)) and result.meta.shape == target.meta.shape:
        value = result
        if result.meta.dtype != target.meta.dtype:
            if not np.can_cast(result.meta.dtype, target.meta.dtype, "same_kind"):
                tx.unsupported("user_error", f"{what}: cannot cast {result.meta.dtype} to "
                               f"{target.meta.dtype} in place (NumPy raises here)")
            node = record_node(tx, REGISTRY["astype"], (result.node,), {"dtype": target.meta.dtype,
                                                                    "copy": True})
            value = ArrayVariable(node, result.dims, array_type=result.array_type)
        if result.scalar and not target.scalar:
            # A 0-d array stays one (a ufunc on it alone gives a NumPy scalar).
            value = ArrayVariable(record_node(tx, REGISTRY["copy"], (value.node,), {}), result.dims,
                                  array_type=result.array_type)
        elif len(result.meta.shape) >= 2:
            # The target keeps its memory, so its layout: `y = f * 2; y += c` of a
            # Fortran-ordered f and a C-ordered c is Fortran-ordered, where `f * 2 + c`
            # alone would be C. Free when compiled (lowering lays the value out so).
            value = ArrayVariable(record_node(tx, REGISTRY["relayout"], (value.node, target.node),
                                          {"rule": "K"}), value.dims, array_type=value.array_type)
        selections.before_write(tx)
        target.node = value.node
        target.dims = value.dims
        return target
    check_writable(tx, what, target)
    record_node(tx, REGISTRY["copyto"], (target.node, result.node, True), {"casting": "same_kind"},
                out_write=True)
    return target


def check_c_order_out(tx, what: str, out: Any, result: ArrayVariable) -> None:
    """Op.out_c_order (np.dot): NumPy takes as ``out`` only a C-contiguous array of the
    result's dtype and shape, and raises ValueError for any other. An argument's layout is
    guarded; a view or an array made in the function (whose layout NumPy decides) runs as
    NumPy."""
    target = out.var if isinstance(out, ArrayArg) else None
    if target is None or target.scalar:
        return   # (write_out refuses it)
    if target.meta.dtype != result.meta.dtype or tuple(target.meta.shape) != tuple(result.meta.shape):
        tx.unsupported("user_error", f"{what}: out= must have the result's dtype {result.meta.dtype} "
                       f"and shape (NumPy raises here)")
    value = tx.output.leaf_value(target.source) \
        if target.node.kind == "placeholder" and target.source is not None else None
    if value is None:
        tx.unsupported("unsupported_call", f"{what}: out= must be C-contiguous in NumPy, and "
                       f"kiln does not know this array's layout; it runs as NumPy")
    code, shown = target.source.code(tx.guards.ns), target.source.display()
    contiguous = bool(value.flags.c_contiguous)
    tx.guards.add_truth(f"{code}.flags.c_contiguous", f"{shown}.flags.c_contiguous", contiguous,
                        (target.source,))
    if not contiguous:
        tx.unsupported("user_error", f"{what}: out= must be C-contiguous (NumPy raises here)")


def _guard_sizes_meet(tx, rdims: tuple, tdims: tuple, rshape: tuple) -> None:
    """The result's run-time sizes (``dynamic``) are the ``out=``'s where the example's
    were: each pair of trailing dims (``rdims``, ``tdims`` and the result's sizes
    ``rshape``, last axis first) is guarded equal where they are different symbols, or
    pinned where one of them is static (a static 1 of the result broadcasts). Otherwise
    ``np.negative(y, out=x)`` of a ``y = x.T`` would meet the entry compiled for ``f(x, x)``
    and raise copyto's error, not NumPy's ("operands could not be broadcast together")."""
    from .dims import _live
    for r, t, n in zip(rdims, tdims, rshape):
        live_r, live_t = _live(r), _live(t)
        if live_r and live_t and r is not t and r.code != t.code:
            tx.guards.add_truth(f"({t.code} == {r.code})", f"({t.text} == {r.text})", True,
                                tuple(dict.fromkeys(t.leaves + r.leaves)))
        elif live_r and not live_t:
            r.as_constant(tx)
        elif live_t and not live_r and n != 1:
            t.as_constant(tx)


def _broadcasts_into(shape: tuple, into: tuple) -> bool:
    """A result of ``shape`` broadcasts into an ``out=`` of shape ``into`` (NumPy raises
    its own error where not: "operands could not be broadcast together ...")."""
    try:
        return np.broadcast_shapes(shape, into) == into
    except ValueError:
        return False


def check_writable(tx, what: str, target: ArrayVariable) -> None:
    """Writes must reach an array the caller can see again: never a baked-in constant, and
    never a read-only one (NumPy raises there, with a message that depends on the write)."""
    if target.read_only:
        tx.unsupported("user_error", f"{what} writes into {target.describe()}, a read-only view "
                       f"in NumPy", "it runs as plain Python, so NumPy raises its own error")
    root = target.base or target
    if target.base is not None and any(isinstance(d, UnbackedSize) for d in root.dims) \
            and _maps_back_by_shape(target.node, root.node):
        # aot writes a view's new value back into its base through the view's derivative
        # rule, which reshapes to the base's example shape: wrong when the base's size is
        # known only at run time (a mask selection).
        tx.unsupported("data_dependent", f"{what} writes through a reshaping view of "
                       f"{root.describe()}, whose size depends on the data", HINTS["data_dependent"])
    if root.node.kind == "constant":
        tx.unsupported("mutation", f"{what} writes into {target.describe()}, an array kiln "
                       f"baked into the graph as a constant", HINTS["mutation"])
    if root.source is not None and not root.tensor:
        # NumPy raises on a read-only array before writing anything: guard the flag, and let
        # such a call run as Python so the error (and what was written before) is NumPy's.
        code, text = root.source.code(tx.output.ns), root.source.display()
        leaf = tx.output.leaf_value(root.source)
        kind = kind_of(leaf)
        if kind is None or kind.writeable_flag:
            writeable = bool(leaf.flags.writeable)
            if isinstance(leaf, np.ndarray):   # (checked from NumPy's struct in C)
                tx.guards.add_writeable(root.source, writeable)
            else:
                tx.guards.add_truth(f"{code}.flags.writeable", f"{text}.flags.writeable", writeable,
                                    (root.source,))
        else:
            writeable = True   # (a CuPy array has no such flag: always writeable)
        if not writeable:
            tx.unsupported("user_error", f"{what} writes into the read-only array {text}",
                           "it runs as plain Python, so NumPy raises its own error")


def _maps_back_by_shape(view: Any, root: Any) -> bool:
    """Whether a view op between ``view`` and its base ``root`` has no put-back rule (aot
    maps a write back through its derivative rule, written with the base's shape)."""
    node = view
    while node is not root and getattr(node, "kind", None) == "call":
        if node.op.put_back is None and node.op.may_alias:
            return True
        node = node.args[0] if node.args else None
    return False


def mutate(tx, op, what, bound, inputs, params) -> VariableTracker:
    """``x[i] = v``, ``np.add.at``, ``x.fill``, ``np.copyto``: the mutation op itself, or its
    functional op as a new node when nobody else can see the target (see write_out)."""
    target = bound.inputs[op.mutates[0]]
    if not isinstance(target, ArrayArg):
        tx.unsupported("mutation", f"{what} updates a value that is not an array", HINTS["mutation"])
    if target.var.scalar:
        # a NumPy scalar (a reduction's result): NumPy's fill and put leave it as it is (they
        # write a temporary array), np.copyto and np.putmask raise: Python decides
        tx.unsupported("mutation", f"{what} of a NumPy scalar", HINTS["mutation"])
    functional = REGISTRY.get(op.functional) if op.functional else None
    if target.var.can_rewrite_in_place(_in_grad(tx)) and functional is not None:
        node = record_node(tx, functional, inputs, params)
        if node.val == target.var.meta:
            selections.before_write(tx)
            target.var.node = node
            return ConstantVariable(None)
    check_writable(tx, what, target.var)
    record_node(tx, op, inputs, params)
    return ConstantVariable(None)


# The layer above this one (x[mask] not taken yet): it imports this module's core
from . import selections  # noqa: E402
