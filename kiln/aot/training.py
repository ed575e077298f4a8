"""The training half of an aot-compiled call: tape node and outputs that record.

:class:`TrainingRun` is the part of ``_Variant`` (kiln/aot/variant.py) that runs the
compiled forward when some input needs a gradient: eager's in-place checks, one
:class:`CompiledFunctionBackward` whose edges lead to the inputs' nodes, values saved
for the backward (copied when the epilogue overwrites them), output Tensors that record,
and the version counters through which a later in-place write of a saved value first
copies it (copy on write, as on the eager tape: kiln/autograd/node.py). ``CompiledFunctionBackward.run`` runs the compiled backward graph (compiled on
the first ``backward()``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.node import Edge, GraphNode
from ..errors import AutogradError, KilnError


_TENSOR: list = []


def _tensor_cls() -> Any:
    if not _TENSOR:
        from ..tensor import Tensor
        _TENSOR.append(Tensor)
    return _TENSOR[0]


class TrainingRun:
    """Mixin of ``_Variant``: ``_run_training`` and its short path."""

    def _run_training(self, args: tuple, arrays: list) -> tuple:
        Tensor = _tensor_cls()
        from ..tensor import _accumulator_of, _check_inplace_target
        for i, k in self.plan.mutated:   # eager's checks, before anything is written
            target = args[i]
            if isinstance(target, Tensor):
                _check_inplace_target(target, "in-place update inside a compiled function")
                if target._base is not None and k in self.nr_of_output:
                    raise KilnError("in-place modification of a view of a Tensor while recording "
                                    "gradients is not supported by kiln; index-assign into the "
                                    "base Tensor instead, or compute the new value out of place")
                target._version.before_write()   # nodes that saved it keep a copy
        node = CompiledFunctionBackward(self)
        for pos, i in enumerate(self.joint.grad_inputs if self.joint else []):
            t = args[i]
            target = t.grad_fn if t.grad_fn is not None else _accumulator_of(t)
            node.edges.append(Edge(pos, None, target, t._output_nr))
        if self.error is not None:
            outs = self.forward(*arrays)
            saved: list = []
        else:
            result = self.forward(*arrays)
            n = self.joint.num_fw_outputs
            outs, saved = result[:n], list(result[n:])
        # The epilogue overwrites mutated inputs: keep their old values if the backward reads them.
        written = {id(args[i]._data if isinstance(args[i], Tensor) else args[i])
                   for i, _ in self.plan.mutated}
        node.saved = [s.copy() if id(s) in written else s for s in saved]
        if self.error is None and self.sized:
            node.extra, node.tangent_shapes = self.backward_inputs(arrays, outs)
        node.num_outputs = max(len(self.nr_of_output), 1)
        wrapped: dict[int, Any] = {}
        for k, nr in self.nr_of_output.items():
            t = Tensor._of_result(outs[k])
            t.grad_fn = node
            t._output_nr = nr
            t._requires_grad = True
            wrapped[k] = t
        for i, k in self.plan.mutated:
            target = args[i]
            data = target._data if isinstance(target, Tensor) else target
            np.copyto(data, outs[k], casting="unsafe")
            if isinstance(target, Tensor):
                target._version.bump()
                if k in wrapped:
                    target.grad_fn = node
                    target._output_nr = wrapped[k]._output_nr
                    target._requires_grad = True
        # Saved values the user can reach: copied before an in-place write changes them.
        visible = {id(a._data): a for a in args if isinstance(a, Tensor)}
        visible.update({id(t._data): t for t in wrapped.values()})
        node.watch([(pos, visible.get(id(s))) for pos, s in enumerate(node.saved)])
        return self._user_outputs(args, arrays, outs, True, wrapped)


    def _run_training_simple(self, args: tuple, arrays: list) -> tuple:
        """_run_training when nothing is written back and every output is fresh."""
        Tensor = _TENSOR[0]
        node = CompiledFunctionBackward(self)
        edges = node.edges
        for pos, i in self.grad_positions:
            t = args[i]
            target = t.grad_fn
            if target is None:
                target = t._accumulator or _accumulator_of(t)
            edges.append(Edge(pos, None, target, t._output_nr))
        result = self.forward(*arrays)
        n = self.joint.num_fw_outputs
        saved = node.saved = list(result[n:])
        if self.sized:
            node.extra, node.tangent_shapes = self.backward_inputs(arrays, result)
        node.num_outputs = max(len(self.nr_of_output), 1)
        nr_of_output = self.nr_of_output
        outs = []
        for k in range(n):
            value = result[k]
            if isinstance(value, (np.ndarray, np.generic)):
                value = Tensor._of_result(value)
                nr = nr_of_output.get(k)
                if nr is not None:
                    value.grad_fn = node
                    value._output_nr = nr
                    value._requires_grad = True
            outs.append(value)
        # Saved values the user can reach: copied before an in-place write changes them.
        visible = {id(a._data): a for a in args if isinstance(a, Tensor)}
        for t in outs:
            if isinstance(t, Tensor):
                visible[id(t._data)] = t
        node.watch([(pos, visible.get(id(s))) for pos, s in enumerate(saved)])
        return tuple(outs)


def _accumulator_of(t: Any) -> Any:
    from ..tensor import _accumulator_of as get
    return get(t)


class CompiledFunctionBackward(GraphNode):
    """The tape node of one call of a compiled forward; runs the compiled backward graph."""

    def __init__(self, variant: Any) -> None:   # a variant._Variant
        super().__init__()
        self.variant = variant
        self.saved: list | None = None
        self.versions: list = []
        self.num_outputs = 1
        # A backward over dynamic sizes (kiln/aot/symbolic.py): its size and shape inputs,
        # and the tangents' shapes, for this call.
        self.extra: list = []
        self.tangent_shapes: list | None = None

    def name(self) -> str:
        return "CompiledFunctionBackward"

    def __repr__(self) -> str:
        return "<CompiledFunctionBackward>"

    def release(self) -> None:
        self.saved = None
        self.extra = []

    def watch(self, reachable: list) -> None:
        """``reachable``: (position in saved, the Tensor whose data it is, or None)."""
        versions = self.versions
        for pos, t in reachable:
            if t is not None:
                versions.append((t._version, t._version.value, pos))
                t._version.watch(self)

    def holds(self, counter: Any) -> bool:
        return self.saved is not None and any(c is counter for c, _, _ in self.versions)

    def keep_saved(self, counter: Any) -> None:
        if self.saved is None:
            return
        kept = []
        for entry in self.versions:
            saved_counter, version, pos = entry
            if saved_counter is counter and version == counter.value:
                self.saved[pos] = self.saved[pos].copy(order="K")
            else:
                kept.append(entry)
        self.versions = kept

    def run(self, grads: list) -> list:
        variant = self.variant
        if variant.error is not None:
            raise variant.error
        if self.saved is None:
            raise AutogradError(
                "Trying to backward through the graph a second time (through "
                "CompiledFunctionBackward), but its saved values were freed by the first "
                "backward(). Pass retain_graph=True to the first backward() if you need to call "
                "it twice")
        for counter, version, _ in self.versions:
            if counter.value != version:
                raise AutogradError(
                    f"one of the values needed for gradient computation has been modified by an "
                    f"in-place operation: a value saved by CompiledFunctionBackward is at version "
                    f"{counter.value}; expected version {version}. Compute the in-place update out "
                    f"of place (y = y + 1 instead of y += 1), or .copy() the value before "
                    f"modifying it")
        if all(g is None for g in grads):
            return [None] * len(self.edges)
        example = list(self.saved)
        shapes = self.tangent_shapes or [meta.shape for meta in variant.tangent_metas]
        for g, meta, shape in zip(grads, variant.tangent_metas, shapes):
            if g is None:
                g = np.zeros(shape, meta.dtype)
            elif type(g) is not np.ndarray or g.dtype != meta.dtype or g.shape != shape:
                g = np.asarray(g, dtype=meta.dtype).reshape(shape)
            example.append(g)
        example += self.extra
        backward = variant.backward_fn or variant.compiled_backward(example)
        # As on the eager tape (Op.backward): derivative rules compute masked-off branches
        # (log's 1 / x where a where= skipped x = 0), so no floating-point warning or error
        # comes out of a backward, also where it runs as NumPy (errstate raise, -W error).
        with np.errstate(all="ignore"):
            return [None if r is None else np.asarray(r) for r in backward(*example)]
