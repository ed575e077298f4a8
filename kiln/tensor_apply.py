"""Running one op on kiln.Tensors (kiln/tensor.py): compute with NumPy, record if needed.

:func:`apply` takes a normalized op call (``Bound`` or ``Composite``) whose inputs may be
Tensors: it checks input dtypes, runs the op's NumPy kernel on the arrays, and when a
gradient is needed records a ``BackwardNode`` with its edges and the version of each
saved input. In-place ops and ``out=`` writes go through :func:`_rebase`: the value is
written into the target Tensor, whose history becomes the functional op's node; views
share their base's version counter and are re-derived from the base when it was
written since.
"""
from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from .autograd.grad_mode import is_grad_enabled
from .autograd.node import BackwardNode, Edge
from .errors import AutogradError, KilnError
from .ops import Bound, Composite, get_op, lookup
from .ops.meta import check_dtype
from .ops.mutation import write_through_view
from .ops.rule_reads import rule_reads
from .tensor import (_UNSUPPORTED_KINDS, Tensor, _accumulator_of, _tensors_in, _user_location,
                     _wrap_result, unwrap)


def _needs_grad(inputs: tuple) -> bool:
    return is_grad_enabled() and any(t._requires_grad for t in _tensors_in(inputs))


def apply(bound: Bound | Composite) -> Any:
    """Run a normalized op call on Tensors: compute with NumPy, record if needed."""
    if isinstance(bound, Composite):
        return _apply_composite(bound)
    op, inputs, params, out = bound.op, bound.inputs, bound.params, bound.out
    _check_input_dtypes(op, inputs)
    if is_grad_enabled():
        _refresh_stale_views(inputs)
    if op.mutates:
        return _apply_mutation(op, inputs, params)
    raw = unwrap(inputs)
    ufunc = getattr(op, "ufunc", None)
    if out is not None and ufunc is not None and not params and not _needs_grad(inputs):
        # An in-place ufunc with nothing to record (an SGD update under no_grad): let NumPy
        # write straight into the target, with its own casting rules and errors.
        if isinstance(out, Tensor):
            _check_inplace_target(out, f"{op.name}(..., out=...)")
            out._version.before_write()
            ufunc(*raw, out=out._data)
            out._version.bump()
        else:
            ufunc(*raw, out=out)
        return out
    result = op.impl(*raw, **params)
    if out is not None:
        _check_out_shape(bound, result, out)
        return _write_out(op, inputs, raw, params, result, out)
    tensor = Tensor._of_result(result)
    if op.may_alias:
        _share_version(tensor, inputs[0], result, op, inputs, params)
    if _needs_grad(inputs) and tensor._data.dtype.kind in "fc":
        if _complex_flow(tensor, inputs) and not op.complex_rule(params):
            _no_complex_grad(op)
        _record(tensor, op, inputs, raw, params)
    return tensor


def _complex_flow(result: Tensor, inputs: tuple) -> bool:
    """Would a gradient pass through complex values here (a complex result, or a complex
    input that requires grad)?"""
    return result._data.dtype.kind == "c" or any(
        t._requires_grad and t._data.dtype.kind == "c" for t in _tensors_in(inputs))


def _no_complex_grad(op: Any) -> None:
    raise AutogradError(f"'{op.name}' has no derivative rule for complex values at "
                        f"{_user_location()} (a gradient "
                        f"would flow through complex values here; a wrong or missing "
                        f"gradient is never returned): compute this part on t.detach() or "
                        f"inside kiln.no_grad()")


def _apply_composite(c: Composite) -> Any:
    """A composite spelling on Tensors: each ``F`` call in it records like eager code."""
    with np.errstate(all="ignore") if c.quiet else contextlib.nullcontext():
        result = _wrap_result(c.fn(*c.inputs, **c.params))
    if c.python is not None:
        return c.python(result)     # np.allclose's bool: a Python value, no gradient
    if c.out is None:
        return result
    _check_out_shape(c, result, c.out)
    apply(lookup(np.copyto).bind(c.out, result))
    return c.out


class OutShape(ValueError):
    """``out=`` of another shape than a result NumPy does not broadcast into it (a
    reduction's: ``np.sum(t, axis=0, out=np.zeros((2, 3)))``). NumPy raises; kiln/tensor.py
    has NumPy's own call raise its error."""


def _check_out_shape(call: Bound | Composite, result: Any, out: Any) -> None:
    if call.out_broadcasts or not isinstance(result, (np.ndarray, np.generic, Tensor)):
        return
    shape, into = np.shape(unwrap(result)), np.shape(unwrap(out))
    if shape != into:
        raise OutShape(f"out= of shape {into} for a result of shape {shape}")


def _check_input_dtypes(op: Any, inputs: tuple) -> None:
    """Object, string, datetime and complex arrays never reach kiln's kernels."""
    for value in _arrays_in(inputs):
        if value.dtype.kind in _UNSUPPORTED_KINDS:
            check_dtype(value.dtype, f"{op.name}")


def _arrays_in(value: Any):
    if isinstance(value, Tensor):
        yield value._data
    elif isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _arrays_in(v)


def _share_version(view: Tensor, base: Any, result: Any, op: Any, inputs: tuple,
                  params: dict) -> None:
    if isinstance(base, Tensor) and np.shares_memory(np.asarray(result), base._data):
        view._version = base._version
        view._base = base._base if base._base is not None else base
        view._view_version = base._version.value
        view._view_path = base._view_path + ((op, tuple(inputs[1:]), params),)


def _replay_view(view: Tensor, base: Any) -> list:
    """``view``'s path of view ops replayed on ``base``'s current value, recording:
    the value after each step, from the base's child down to the view."""
    values = [base]
    for op, rest, params in view._view_path:
        values.append(apply(Bound(op, (values[-1],) + rest, params)))
    return values[1:]


def _refresh_stale_views(inputs: tuple) -> None:
    """Views among ``inputs`` whose base was written since they were taken get their
    history from the base's current one, even a view that carried no gradient before
    (``old = b[:2]; b[1:] = x``: old now depends on x)."""
    for t in _tensors_in(inputs):
        if t._base is not None and t._version.value != t._view_version and t._base._requires_grad:
            _refresh_view(t)


def _refresh_view(view: Tensor) -> None:
    """The base of ``view`` was written in place since the view was taken: the view's
    values changed, so its history must be its view ops on the base's *current* history
    (PyTorch regenerates it the same way)."""
    fresh = _replay_view(view, view._base)[-1]
    view.grad_fn = fresh.grad_fn
    view._output_nr = fresh._output_nr
    view._requires_grad = fresh._requires_grad
    view._view_version = view._version.value


def _write_through_view(view: Tensor, op: Any, inputs: tuple, params: dict) -> None:
    """``view op= ...`` while recording (``f[1:] += k * x``): the new value is computed out
    of place, written back into the base through the view ops (the base's history becomes
    that write, as PyTorch's CopySlices), and the view is re-derived from the new base."""
    base = view._base
    _check_inplace_target(base, f"{op.name} into a view")
    new = apply(Bound(op, inputs, params))
    parents = [base] + _replay_view(view, base)[:-1]
    for (view_op, rest, view_params), parent in zip(reversed(view._view_path), reversed(parents)):
        new = write_through_view(view_op, parent, new, rest, view_params,
                                 parent.size == new.size)
    base._version.before_write()
    np.copyto(base._data, np.asarray(new._data), casting="same_kind")
    base._version.bump()
    base.grad_fn = new.grad_fn
    base._output_nr = new._output_nr
    base._requires_grad = True
    _refresh_view(view)


def _record(tensor: Tensor, op: Any, inputs: tuple, raw: tuple, params: dict) -> None:
    saved = []
    edges = []
    reads_out, reads = rule_reads(op)
    watched = []     # the counters of saved values the rule reads: copied before a write
    for i, (name, value) in enumerate(zip(op.inputs, inputs)):
        subs = list(enumerate(value)) if name.startswith("*") else [(None, value)]
        for sub, item in subs:
            for t in _tensors_in((item,)):
                saved.append((i, sub, None, t._version, t._version.value))
                if reads[i]:
                    watched.append(t._version)
            if isinstance(item, Tensor) and item._requires_grad:
                target = item.grad_fn if item.grad_fn is not None else _accumulator_of(item)
                edges.append(Edge(i, sub, target, item._output_nr))
    node = BackwardNode(op, raw, params, tensor._data, saved)
    if op.vjp is None or op.vjp_refuses:
        node.where = _user_location()
    node.out_counter = tensor._version
    node.out_version = tensor._version.value
    node.edges = edges
    for counter in watched:
        counter.watch(node)
    if reads_out:
        tensor._version.watch(node)
    tensor.grad_fn = node
    tensor._output_nr = 0
    tensor._requires_grad = True


def _check_inplace_target(target: Tensor, what: str) -> None:
    if target._requires_grad and target.is_leaf and is_grad_enabled():
        raise KilnError(f"{what}: a leaf Tensor that requires grad cannot be modified in place "
                        f"(its gradient would be lost); do it inside `with kiln.no_grad():` "
                        f"(as in an SGD update) or work on a copy")


def _rebase(target: Tensor, op: Any, inputs: tuple, params: dict, new_value: Any) -> None:
    """Write ``new_value`` into ``target`` in place; if recording, its history becomes op's node."""
    record = _needs_grad(inputs) and target._data.dtype.kind in "fc"
    if record and (target._data.dtype.kind == "c" or _complex_flow(target, inputs)) \
            and not op.complex_rule(params):
        _no_complex_grad(op)
    if not target._data.flags.writeable:   # (np.broadcast_to, np.diagonal): NumPy's error
        raise ValueError("output array is read-only" if getattr(op, "ufunc", None) is not None
                         else "assignment destination is read-only")
    if record and target._base is not None:
        _write_through_view(target, op, inputs, params)
        return
    if record:
        # The node must see the old value of target, which is about to be overwritten.
        raw = tuple(_copy_if_aliases(v, target) for v in unwrap(inputs))
    target._version.before_write()
    np.copyto(target._data, new_value, casting="same_kind")
    target._version.bump()
    if record:
        shell = Tensor(target._data)
        _record(shell, op, inputs, raw, params)
        # Inputs that are `target` itself were saved as copies: their versions are moot.
        shell.grad_fn.saved = [s for s in shell.grad_fn.saved if s[3] is not target._version]
        shell.grad_fn.out_counter = target._version
        shell.grad_fn.out_version = target._version.value
        if rule_reads(op)[0]:
            target._version.watch(shell.grad_fn)
        target.grad_fn = shell.grad_fn
        target._output_nr = 0
        target._requires_grad = True


def _copy_if_aliases(value: Any, target: Tensor) -> Any:
    if isinstance(value, np.ndarray) and np.shares_memory(value, target._data):
        return value.copy()
    if isinstance(value, tuple):
        return tuple(_copy_if_aliases(v, target) for v in value)
    if isinstance(value, list):
        return [_copy_if_aliases(v, target) for v in value]
    return value


def _write_out(op: Any, inputs: tuple, raw: tuple, params: dict, result: Any, out: Any) -> Any:
    if isinstance(out, Tensor):
        _check_inplace_target(out, f"{op.name}(..., out=...)")
        _rebase(out, op, inputs, params, result)
        return out
    if _needs_grad(inputs):
        raise KilnError(f"{op.name}(..., out=ndarray) with Tensors that require grad: the "
                        f"gradient cannot flow into a plain ndarray; drop out= or use no_grad()")
    np.copyto(out, result, casting="same_kind")
    return out


def _apply_mutation(op: Any, inputs: tuple, params: dict) -> None:
    target = inputs[0]
    if not isinstance(target, Tensor):
        if _needs_grad(inputs) and np.asarray(target).dtype.kind in "fc":
            # np.add.at(acc, i, t) into acc = np.zeros(n): NumPy hands the call to the Tensor,
            # but the result lands in a plain array, so the gradient through it would be lost.
            raise KilnError(f"{op.name} into a NumPy array of a Tensor that requires grad, at "
                            f"{_user_location()}: the gradient cannot flow into a plain ndarray; "
                            f"make the target follow the input (acc = np.zeros_like(x), or "
                            f"kiln.tensor(acc)), or use no_grad()")
        op.impl(*unwrap(inputs), **params)
        return None
    _check_inplace_target(target, f"{op.name}")
    if _needs_grad(inputs):
        functional = get_op(op.functional)
        new_value = functional.impl(*unwrap(inputs), **params)
        _rebase(target, functional, inputs, params, new_value)
    else:
        target._version.before_write()
        op.impl(*unwrap(inputs), **params)
        target._version.bump()
    return None
