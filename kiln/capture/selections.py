"""NumPy calls on boolean-mask selections ``x[mask]`` that capture has not taken yet.

``x[mask]`` with a mask of x's own shape is deferred (a MaskedSelectionVariable: the whole
array and its mask), because its length is known only once the graph runs. What is done
to it is done to the whole array where possible — an elementwise ufunc as the masked
ufunc ``ufunc(x, where=mask)`` (NumPy computes only the selected elements, so its program
warns where NumPy does), ``y[m] = f(x[m])`` as ``np.copyto(y, f(x), where=m)``, reductions
through ``MASKED_FORMS`` — and the selection is taken (a node with an unbacked length)
only where a call needs it, or before an array it reads is written. A mask over x's
leading dims (a row mask) works the same way with ``where=`` broadcast by rows
(``m[:, None]``), for selections whose whole arrays line up (``_fits``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import REGISTRY, Bound, Category, Composite, TensorMeta, infer_meta
from ..ops.fp_errors import may_warn
from ..ops.masked import masked_call
from ..ops.registry import masked_form, method_key
from ..ops.speculation import speculating
from . import bytecode_facts as bf
from .call_inputs import ArrayArg, flatten
from .call_inputs import example_of, to_bind
from .opcall import _composite
from .opcall_emit import _emit
from .variables.arrays import ArrayVariable, MaskedSelectionVariable, same_value
from .variables.base import ConstantVariable, VariableTracker


def masked_call_of(tx, key, spelling, args: list, kwargs: dict, masked: list,
                   what: str) -> VariableTracker:
    """A call with ``x[mask]`` selections (MaskedSelectionVariable) among its arguments."""
    first = masked[0]
    if key == method_key("__setitem__") and len(args) == 3 and not kwargs:
        target, index, value = args
        if isinstance(value, MaskedSelectionVariable) and isinstance(target, ArrayVariable) \
                and isinstance(index, ArrayVariable) and same_value(index.node, value.mask.node) \
                and _fits(value, target.meta.shape):
            # y[m] = f(x[m]): NumPy casts the values unsafely into y, as copyto does here
            return tx.call_op(np.copyto, [target, value.full],
                              {"casting": ConstantVariable("unsafe"), "where": value.where},
                              "masked assignment")
    form = masked_form(key)
    if form is not None and args and args[0] is first and not first.rows \
            and all(first.same_mask(m) for m in masked):
        # run-time numbers among the arguments (``x[m] -= s`` with an int argument s): the
        # composite's calls take them as graph values, not as the example's number
        scalars: dict = {}

        def bind_full(v):  # other selections by the same mask: their whole arrays
            return ArrayArg(v.full) if isinstance(v, MaskedSelectionVariable) else to_bind(tx, v, scalars)
        filename, lineno, _ = tx.location()
        # (the user's line, as for any call: where the composite's warnings point)
        with speculating(f"{filename}:{lineno}", tx.output.dynamic.kinds, lambda a: example_of(tx, a)):
            bound = form(ArrayArg(first.full), ArrayArg(first.mask),
                         *[bind_full(a) for a in args[1:]],
                         **{k: bind_full(v) for k, v in kwargs.items()})
            if bound is not None:
                return _composite(tx, spelling.text, bound, scalars, set())
    op = _normalized_op(tx, spelling, args, kwargs)
    # ``t += x[m]`` writes into t (NumPy's broadcasting rules for an output operand):
    # only a selection's own in-place update (``s += 1``, s = x[m]) is a new selection
    # (a NumPy scalar's selection is an array: on the scalar itself, ``**`` and friends
    # would be NumPy's scalar math, with its own dtypes)
    elementwise = op is not None and op.category == Category.POINTWISE and not op.mutates \
        and "out" not in kwargs and (key not in bf.INPLACE_TO_PLAIN or args[0] is first) \
        and not any(m.full.scalar for m in masked) \
        and (key not in bf.INPLACE_TO_PLAIN or _keeps_dtype(tx, op, args, first))
    # arrays besides the selections: only a row selection's trailing dims meet them (NumPy
    # broadcasts ``x[m] * w`` of a row w by rows, as ``x * w``)
    trailing = len(first.full.meta.shape) - len(first.mask.meta.shape)
    arrays = [a for a in flatten(list(args) + list(kwargs.values())) if isinstance(a, ArrayVariable)]
    fill = _fill(first, masked, arrays, key in bf.INPLACE_TO_PLAIN)
    if elementwise and fill is not None and all(len(a.meta.shape) <= trailing for a in arrays):
        def full(v):
            return v.full if isinstance(v, MaskedSelectionVariable) else v
        selected = _masked_ufunc(tx, op, spelling.text, [full(a) for a in args], kwargs, fill)
        if selected is not None:
            return _deferred(tx, MaskedSelectionVariable(selected, fill.mask, fill.where))
        # ``s += 1`` on a selection (a copy nobody else sees): the selection of x + 1 — never
        # an in-place update of x itself; computed everywhere only where the call cannot
        # warn for the elements the mask leaves out (``x[m].astype(int)`` of a NaN x warns
        # "invalid value encountered in cast" only if the NaN is selected)
        result = None if _may_warn(tx, op, args, kwargs) else \
            tx.call_op(bf.INPLACE_TO_PLAIN.get(key, key), [full(a) for a in args],
                       {k: full(v) for k, v in kwargs.items()}, spelling.text)
        if isinstance(result, ArrayVariable) and result.meta.shape == fill.full.meta.shape:
            return _deferred(tx, MaskedSelectionVariable(result, fill.mask, fill.where))

    def taken(v):  # this call needs the selections themselves
        return v.take(tx, spelling.text) if isinstance(v, MaskedSelectionVariable) else v
    return tx.call_op(key, [taken(a) for a in args], {k: taken(v) for k, v in kwargs.items()}, what)


def _fill(first: MaskedSelectionVariable, masked: list, arrays: list,
          inplace: bool) -> MaskedSelectionVariable | None:
    """The selection whose whole array has the shape of an elementwise call's whole result
    (``x[m] / c[m, None]``: x's), where every selection is by the same mask and they line up
    (_fits); None where they do not (NumPy's own call on the selections then decides). An
    in-place update keeps its target's shape (NumPy raises on a larger result)."""
    try:
        shape = np.broadcast_shapes(*[tuple(v.full.meta.shape) for v in masked],
                                    *[tuple(a.meta.shape) for a in arrays])
    except ValueError:
        return None
    if not all(first.same_mask(m) and _fits(m, shape) for m in masked):
        return None
    return next((m for m in ([first] if inplace else masked) if tuple(m.full.meta.shape) == shape), None)


def _fits(sel: MaskedSelectionVariable, shape: tuple) -> bool:
    """Whether the selection's whole array lines up with, and broadcasts into, a whole array
    of ``shape`` selected by the same mask: the same number of dims (the mask's leading ones
    meet each other; a selection (n, 3) beside one of a 1-D array is no such pair) and the
    trailing dims broadcast as the selections' own do."""
    have = tuple(sel.full.meta.shape)
    if len(have) != len(shape) or tuple(shape[:len(sel.mask.meta.shape)]) != tuple(sel.mask.meta.shape):
        return False
    try:
        return np.broadcast_shapes(have, tuple(shape)) == tuple(shape)
    except ValueError:
        return False


def _normalized_op(tx, spelling, args: list, kwargs: dict) -> Any:
    """The op the spelling binds for these arguments (``m ** 2`` on a bool selection is
    np.square, as for any bool array), with each selection standing in as its whole
    array (same dtype); the spelling's own op where it binds a composite."""
    op = spelling.op
    if op is None or op.category != Category.POINTWISE:
        return op
    try:
        bound = spelling.bind(*[_stand_in(tx, a) for a in args],
                              **{k: _stand_in(tx, v) for k, v in kwargs.items()})
    except Exception:   # noqa: BLE001 - the call itself raises it below, as NumPy does
        return op
    return bound.op if isinstance(bound, Bound) else op


def _stand_in(tx, v: Any) -> Any:
    """A call argument as the op's rules see it, a selection as its whole array's meta
    (an array even when x is a NumPy scalar)."""
    if isinstance(v, MaskedSelectionVariable):
        return TensorMeta(v.full.meta.shape, v.full.meta.dtype)
    return ArrayArg(v) if isinstance(v, ArrayVariable) else to_bind(tx, v, {})


def _may_warn(tx, op, args: list, kwargs: dict) -> bool:
    """May ``op``'s call, computed over the selections' whole arrays, warn of a
    floating-point error (ops/fp_errors.py ``may_warn``) for some values? Unknown: yes."""
    try:
        inner = infer_meta(op, tuple(_stand_in(tx, a) for a in args),
                           {k: _stand_in(tx, v) for k, v in kwargs.items()})
    except Exception:   # noqa: BLE001 - the call itself raises it, as NumPy does
        return True
    if not isinstance(inner, TensorMeta):
        return True
    operands = [a.full if isinstance(a, MaskedSelectionVariable) else a for a in flatten(list(args))]
    kinds = tuple(a.meta.dtype.kind for a in operands if isinstance(a, ArrayVariable))
    consts = tuple(a.value if isinstance(a, ConstantVariable) else None for a in operands)
    return may_warn(op.name, kinds, consts, inner.dtype.kind, True)


def _keeps_dtype(tx, op, args: list, sel: MaskedSelectionVariable) -> bool:
    """``s op= y`` on a selection s: its plain op's result has s's dtype. Otherwise the
    in-place call casts the result into s (``s ^= np.int64(3)`` on int32 stays int32, a
    float into an int raises): that call runs on the taken selection, as NumPy's does."""
    try:
        inner = infer_meta(op, tuple(_stand_in(tx, a) for a in args), {})
    except Exception:   # noqa: BLE001 - the call itself raises it, as NumPy does
        return False
    return isinstance(inner, TensorMeta) and inner.dtype == sel.full.meta.dtype


def _masked_ufunc(tx, op, text: str, args: list, kwargs: dict,
                  sel: MaskedSelectionVariable) -> VariableTracker | None:
    """``ufunc(x[m], ...)`` computed as ``ufunc(x, ..., where=m)`` over the whole array (the
    selection taken later): NumPy's own program then computes only the selected elements,
    so it warns and raises where NumPy does (np.errstate, -W error) and nowhere else.
    None where the masked-off elements would change the result's dtype (they keep x's
    values, cast) or the call is not a plain ufunc call: the caller computes it everywhere."""
    if kwargs or getattr(op, "ufunc", None) is None or len(args) != op.ufunc.nin:
        return None
    scalars: dict = {}   # run-time numbers (an int argument): graph values in the composite
    bound = [ArrayArg(a) if isinstance(a, ArrayVariable) else to_bind(tx, a, scalars) for a in args]
    try:
        inner = infer_meta(op, tuple(bound), {})
    except Exception:   # noqa: BLE001 - the plain call raises it, as NumPy does
        return None
    fill = sel.full.meta.dtype
    if not isinstance(inner, TensorMeta) or np.result_type(inner.dtype, fill) != inner.dtype:
        return None
    composite = Composite(masked_call(op.name, op.ufunc.nin),
                          tuple(bound) + (ArrayArg(sel.where), ArrayArg(sel.full)), {})
    result = _composite(tx, text, composite, scalars, set())
    return result if isinstance(result, ArrayVariable) and \
        result.meta.shape == sel.full.meta.shape else None


def take_selection(tx, sel: MaskedSelectionVariable, text: str) -> VariableTracker:
    """``full[mask]`` of a deferred selection, as a graph node (an unbacked length)."""
    bound = Bound(REGISTRY["getitem_mask"], (ArrayArg(sel.full), (ArrayArg(sel.mask),)), {})
    return _emit(tx, text, bound, {}, set(), defer=False)


def masked_selection(tx, op, bound: Bound, used: set) -> VariableTracker | None:
    """``x[mask]`` with a boolean mask of x's own shape or of its leading dims (a row mask,
    ``x[m]``, ``x[m, None]``, ``x[m, :]``), deferred (MaskedSelectionVariable): its whole
    array is ``x[:, None]`` for ``x[m, None]``, its ``where=`` the mask with a 1 for each
    trailing dim."""
    if not op.masked_selection:
        return None
    x, index = bound.inputs[0], bound.inputs[1]
    if not (op.masked_selection and isinstance(x, ArrayArg) and isinstance(index, tuple)
            and index and isinstance(index[0], ArrayArg)):
        return None
    mask, rest = index[0], index[1:]
    k = len(mask.shape)
    # (a 0-d mask of an n-d x adds an axis: NumPy's x[True] is x[None])
    if mask.dtype != np.bool_ or tuple(mask.shape) != tuple(x.shape[:k]) or x.var.tensor \
            or (k == 0 and len(x.shape) > 0) \
            or not all(r is None or r == slice(None) for r in rest) \
            or k + sum(r is not None for r in rest) > len(x.shape):
        return None
    used.update((id(x), id(mask)))
    full = _view(tx, x.var, (slice(None),) * k + rest) if rest else x.var
    trailing = len(full.meta.shape) - k
    where = _view(tx, mask.var, (slice(None),) * k + (None,) * trailing) if trailing else None
    return _deferred(tx, MaskedSelectionVariable(full, mask.var, where))


def _view(tx, x: ArrayVariable, index: tuple) -> ArrayVariable:
    """``x[index]`` for a basic index (slices and Nones), as a graph node."""
    return _emit(tx, "x[mask]", Bound(REGISTRY["getitem"], (ArrayArg(x), index), {}), {}, set())


def _deferred(tx, sel: MaskedSelectionVariable) -> MaskedSelectionVariable:
    tx.output.pending_selections.append(sel)
    return sel


def before_write(tx) -> None:
    """An array is about to be written: deferred selections read their arrays later, so
    each is taken now, while it still sees the values it was made from."""
    pending, tx.output.pending_selections = tx.output.pending_selections, []
    for sel in pending:
        sel.take(tx, "x[mask] before a write")
