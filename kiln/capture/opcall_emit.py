"""Recording one normalized NumPy call as a graph node (``_emit``), for a spelling's op or
each ``F`` call inside a composite spelling (kiln/capture/opcall.py, which binds the call and
runs composites): its inputs become graph values (a run-time scalar stays an input where its
value cannot move the output's shape or dtype, else it is specialized), its parameters
constants, its sizes symbolic where they can be; a view remembers its base, a mutation op is
handed to kiln/capture/array_writes.py, a data-dependent result is deferred as a selection
(kiln/capture/selections.py) or given unbacked sizes (kiln/capture/opcall_dims.py).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import REGISTRY, Bound, Category, TensorMeta, infer_meta
from ..ops.meta import plain_dtype, supported_dtype
from ..ops.registry import map_leaves
from .breaks import HINTS
from .call_inputs import ArrayArg, as_meta, flatten, numpy_returns_scalar, value_free
from .device_arrays import result_array_type
from .dims import propagate_dims, runtime_slices, sizes_meet
from .opcall_dims import creation_sizes, numpy_layout_known, unbacked_dims
from .python_numbers import graph_value
from .variables.arrays import ArrayVariable, SymScalarVariable, UnbackedSize


# (tx, text, scalars, used, relative_sizes) of the composite spelling being captured
_COMPOSING: list = []


class InOrder(list):
    """The run-time numbers one object stands for (``[a, b]`` of bools a and b, both
    True), in the order a spelling that takes them in order (``Composite.in_order``)
    hands them to its ops: each op taking the object takes the next."""

    def __init__(self, syms: list) -> None:
        super().__init__(syms)
        self.given = len(syms)


def _emit(tx, text: str, bound: Bound, scalars: dict, used: set, defer: bool = True) -> Any:
    """Record one normalized op call; an ArrayVariable (``out=`` not yet applied), or the
    tracker a mutation returns."""
    spelling_text = text
    op = bound.op
    unbacked = None
    if op.data_dependent:
        deferred = selections.masked_selection(tx, op, bound, used) if defer else None
        if deferred is not None:
            return deferred
        unbacked = op.unbacked(*bound.inputs, **bound.params) if op.unbacked is not None else None
        if unbacked is None:
            tx.unsupported("data_dependent", f"{spelling_text} has a data-dependent output shape",
                           HINTS["data_dependent"])
    if any(isinstance(v, slice) and any(isinstance(p, ArrayArg) for p in (v.start, v.stop, v.step))
           for v in flatten(bound.inputs)):
        # x[a[i]:a[i + 1]]: a bound read from an array makes a length known only from the
        # data (the graph's shape rule has no value to take); Python slices with the ints
        tx.unsupported("data_dependent", f"{spelling_text}: a slice bound taken from an array "
                       f"gives a length that depends on the data", HINTS["data_dependent"])
    if op.numpy_layout is not None and op.numpy_layout(*bound.inputs, **bound.params):
        numpy_layout_known(tx, spelling_text, bound.inputs[0])
    if op.opaque_view is not None and op.opaque_view(*bound.inputs, **bound.params):
        tx.unsupported("unsupported_call", f"{spelling_text} returns a view of its operand "
                       f"here; it runs as Python so writes through it behave as in NumPy")

    def to_graph(value: Any, position: int | None = None) -> Any:
        if isinstance(value, ArrayArg):
            used.add(id(value))
            return value.var.node
        if isinstance(value, TensorMeta):
            tx.unsupported("unsupported_value", f"{spelling_text}: unexpected array argument")
        if isinstance(value, tuple):
            return tuple(to_graph(v) for v in value)
        if isinstance(value, list):
            return [to_graph(v) for v in value]
        if isinstance(value, (slice, int)) and id(value) in slices:   # x[:n], x[i]: dims.runtime_slices
            return slices[id(value)]
        if isinstance(value, slice):
            return slice(to_graph(value.start), to_graph(value.stop), to_graph(value.step))
        if isinstance(value, np.ndarray):
            if not supported_dtype(value.dtype):
                tx.unsupported("unsupported_value", f"{spelling_text}: an argument kiln cannot model")
            return tx.output.graph.constant(value)
        syms = scalars.get(id(value))
        if isinstance(syms, InOrder):   # the next of the run-time numbers this object stands for
            if not syms:
                tx.unsupported("unsupported_call", f"{spelling_text}: kiln cannot tell its run-time "
                               f"numbers apart (one object, taken more often than given)")
            syms = [syms.pop(0)]
        if syms:
            used.add(id(value))
            # A runtime scalar stays a graph input only where its value cannot change the
            # output's shape or dtype: any elementwise operand, or a direct input of
            # another op whose metadata does not move when the value does (a fill value,
            # an integer index). Inside index tuples and slices it is specialized.
            if op.category == Category.POINTWISE or (
                    position is not None and value_free(op, bound.inputs, params, position)):
                node = graph_value(tx, syms[0], op, bound.inputs, params, position)
                return node if node is not None else tx.output.scalar_node(syms[0])
            for sym in syms:
                sym.as_constant(tx)
        return value

    def to_param(value: Any) -> Any:
        if isinstance(value, TensorMeta):
            tx.unsupported("unsupported_value", f"{spelling_text}: an array as a static parameter")
        if isinstance(value, tuple):
            return tuple(to_param(v) for v in value)
        if isinstance(value, list):
            return [to_param(v) for v in value]
        syms = scalars.pop(id(value), None)
        if syms:
            for sym in syms:
                sym.as_constant(tx)
        return value

    sized = creation_sizes(tx, op, bound, scalars, used) if op.category == Category.CREATION else None
    params = {k: to_param(v) for k, v in (sized[0] if sized else bound.params).items()}
    for v in params.values():
        if isinstance(v, np.dtype) and not plain_dtype(v):
            tx.unsupported("unsupported_value", f"{spelling_text}: dtype {v} (structured, void or "
                           f"a sub-array) is not modelled by kiln; it runs as NumPy")
    if unbacked is not None:
        used.update(id(v) for v in flatten(bound.inputs) if isinstance(v, ArrayArg))
        bound, dims = unbacked_dims(tx, spelling_text, bound, unbacked)
    array_inputs = [v.var for v in flatten(bound.inputs) if isinstance(v, ArrayArg)]
    array_type = result_array_type(tx, spelling_text, array_inputs, bound.inputs,
                                   composing=bool(_COMPOSING))
    # sizes as expressions, except inside a composite that may hold the example's sizes
    exact = not _COMPOSING or _COMPOSING[-1][4]
    sliced = runtime_slices(tx, op, bound, scalars, used, exact) if unbacked is None else None
    slices = sliced[0] if sliced is not None else {}
    if sliced is not None:
        dims = sliced[1]
    elif sized:
        dims = sized[1]
    elif unbacked is None:
        dims = propagate_dims(tx, op, array_inputs, bound.inputs, params, exact)
    inputs = tuple(to_graph(v, i) for i, v in enumerate(bound.inputs))
    # to_graph calls itself: a reference cycle that kept this call's trackers alive until
    # the next garbage collection (a temporary view ``v[i - 1]`` still counted as one)
    to_graph = None

    if op.mutates:
        return mutate(tx, op, spelling_text, bound, inputs, params)
    if any(isinstance(d, UnbackedSize) for a in array_inputs for d in a.dims):
        # A shape rule sees an unbacked size at its example value: a mismatch there need
        # not be one at run time, so NumPy decides (as Python), not the example.
        try:
            infer_meta(op, tuple(map_leaves(bound.inputs, as_meta)), params)
        except Exception:
            tx.unsupported("data_dependent", f"{spelling_text}: its shapes depend on the size "
                           f"of a data-dependent selection", HINTS["data_dependent"])
    node = record_node(tx, op, inputs, params, bound.method)
    if op.category == Category.POINTWISE and sizes_meet(array_inputs):
        node.meta["sizes_meet"] = True
    if isinstance(node.val, tuple):
        tx.unsupported("unsupported_call", f"{spelling_text} returns several arrays (not captured yet)")
    # A view, or an op told not to copy, may hand back its input's memory. Not a NumPy
    # scalar's: s[...], s.reshape(-1) are new arrays (``s[...] += 1`` never writes s)
    view = op.may_alias
    base = array_inputs[0] if view and array_inputs else None
    # (a read-only view, np.broadcast_to(s, ...), stays one: nothing writes through it, and
    # NumPy refuses a write into it after a graph break too)
    if base is not None and base.scalar and not op.read_only and (
            node.val.shape != () or not numpy_returns_scalar(op, bound.inputs, params)):
        node, base = record_node(tx, REGISTRY["copy"], (node,), {}), None
    result = ArrayVariable(node, dims(node.val), fresh=not view or base is None or base.fresh,
                           base=(base.base or base) if base is not None else None,
                           tensor=any(a.tensor for a in array_inputs), array_type=array_type)
    if sliced is not None and getattr(tx.output, "grad_depth", 0):
        # run-time lengths inside kiln.grad: pinned if the backward cannot follow them
        # (kiln/capture/variables/grad.py)
        tx.output.grad_lengths = getattr(tx.output, "grad_lengths", []) + [
            d for d in result.dims if isinstance(d, SymScalarVariable) and not d.is_shape()
            and not isinstance(d, UnbackedSize)]
    differentiated = result.tensor or (getattr(tx.output, "grad_depth", 0)
                                       and node.val.dtype.kind in "fc")
    if differentiated and any(isinstance(d, UnbackedSize) for d in result.dims):
        # Derivative rules read sizes while the backward is built: a size known only when
        # the forward ran cannot be one (inside kiln.grad np.bincount(i, weights=x)'s
        # backward got the first call's size), so this runs on the eager tape instead.
        tx.unsupported("data_dependent", f"{spelling_text} on a value being differentiated gives "
                       f"a result whose size depends on the data; it runs eagerly (gradients "
                       f"are exact there)", HINTS["data_dependent"])
    if op.values_below is not None and all(d is None for a in array_inputs for d in a.dims):
        # (sizes the graph is specialized to: a dynamic length bounds nothing at run time)
        node.meta["values_below"] = op.values_below(*bound.inputs, **params)
    if node.val.shape == ():
        # (CuPy gives a 0-d array where NumPy gives a scalar; a Tensor remembers it: Tensor._of_result)
        result.scalar = array_type is np.ndarray and numpy_returns_scalar(op, bound.inputs, params)
    if base is not None:
        if not result.scalar:
            # (an element read, ``A[0, 0]``, is a NumPy scalar: no view of A stays behind, so
            # a later loop writing A is still a loop node: npbench's cholesky)
            (base.base or base).note_view(result)
        # A view of a read-only view is read-only (an op that may copy instead: maybe).
        result.read_only = op.read_only or base.read_only
    elif op.read_only:   # of no array: np.broadcast_to(s, (2,)) of a NumPy scalar argument
        result.read_only = True
    return result



# The writes (their module imports selections too) and the layer above this one (x[mask]
# not taken yet): both import opcall, which imports this module last
from .array_writes import mutate, record_node  # noqa: E402
from . import selections  # noqa: E402
