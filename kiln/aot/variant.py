"""One compiled specialization of an aot graph (:class:`_Variant`, kiln/aot/runtime.py
picks it per call): functionalized for a dedup pattern, inference or a joint graph
partitioned for "which inputs need a gradient", its forward compiled; it runs the
forward, the epilogue (final values of mutated inputs copied into the caller's arrays)
and rebuilds outputs that are views. :func:`run_op_by_op` is the exact-NumPy fallback:
the original graph op by op, on the caller's values.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import NoDerivative
from ..ir import Graph, Interpreter, Node
from ..ir.graph import extern_impl
from ..ops import Bound, TensorMeta
from ..ops.random import snapshot
from .functionalize import compiled_path, functionalize_with_plan, replay
from .aliasing import dedupe
from .joint import build_joint, retraced
from .partition import Partition, min_cut_partition
from . import view_outputs
from .symbolic import PinnedSizes, size_values
from .training import TrainingRun, _tensor_cls



def _log(header: str, body: Any = "") -> None:
    from .. import logs
    if logs.enabled("aot"):
        logs.log("aot", header, str(body))



plain_run_helper: Callable[[], Any] = lambda: None
_PICKS = {"fresh": 0, "input": 1, "const": 2}   # PlainRun's: output, argument, constant


class _Variant(TrainingRun):
    """One compiled specialization: dedup pattern x which inputs need gradients."""

    def __init__(self, owner: Any, dedup: Any, mask: tuple | None,
                 arrays: list) -> None:
        graph = owner.graph
        if dedup is not None:
            graph = dedupe(graph, dedup)
        self.owner = owner
        self.fgraph, self.plan = functionalize_with_plan(graph, arrays)
        if owner.dynamic and self.plan.sized_put_back:
            # A write put back through a view's derivative rule wrote the capture's sizes
            # (a reshape back to x.shape): functionalized at this call's sizes, for them only.
            self.fgraph, self.plan = functionalize_with_plan(retraced(graph, arrays), arrays)
        name = owner.graph.name
        _log(f"{name}: functional graph ({len(self.plan.mutated)} mutated inputs written back; "
             f"outputs: {', '.join(o.kind for o in self.plan.outputs)})", self.fgraph)
        self.training = False
        # a joint graph, or a functional graph with sized put-backs, for these sizes only
        self.pinned = owner.dynamic and self.plan.sized_put_back
        self.error: Exception | None = None
        self.partition: Partition | None = None
        if mask is not None and any(mask):
            if owner.dynamic:  # sizes for the derivative rules: this call's, not the capture's
                self.fgraph = retraced(self.fgraph, arrays)
            try:
                self.joint = self._joint(mask, owner.dynamic)
                self.training = bool(self.joint.tangent_outputs)
            except NoDerivative as e:
                self.error = e
                self.training = True
                self.joint = None
        if self.training and self.error is None:
            if self.partition is None:
                self.partition = min_cut_partition(self.joint)
            _log(f"{name}: joint graph", self.joint.graph)
            _log(f"{name}: forward graph", self.partition.forward)
            _log(f"{name}: backward graph (compiled on the first backward())",
                 self.partition.backward)
            _log(f"{name}: partition", self.partition.report())
            self.forward = owner.fw_compiler(self.partition.forward, arrays)
            self.backward_fn: Callable | None = None
            self.tangent_metas = [self.fgraph.output_node.args[0][k].val
                                  for k in self.joint.tangent_outputs]
            self.nr_of_output = {k: nr for nr, k in enumerate(self.joint.tangent_outputs)}
            # The common case (no input written, every output a fresh array) has a
            # short path: a training step's Python runs between cache-cold BLAS calls.
            self.simple = not self.plan.mutated and self._fresh_outputs()
            self.grad_positions = tuple(enumerate(self.joint.grad_inputs))
            # The backward's inputs after the saved values and tangents (a joint graph
            # over dynamic sizes): sizes it divides by, primals whose shapes it reads.
            self.size_specs = [spec for _, spec in self.joint.size_inputs]
            self.shape_inputs = self.partition.shape_inputs
            self.sized = bool(self.joint.sizes)
        else:
            if not self.training:
                # Inference: the forward may write a mutated input's final value in place.
                self.fgraph.donated = {k: i for i, k in self.plan.mutated}
            self.forward = owner.fw_compiler(self.fgraph, arrays)
            if self.error is not None:
                self.nr_of_output = {k: 0 for k in range(self.plan.num_graph_outputs)
                                     if _is_float_val(self.fgraph.output_node.args[0][k])}

    def _joint(self, mask: tuple, dynamic: bool) -> Any:
        if dynamic:
            try:
                joint = build_joint(self.fgraph, mask, symbolic=True)
                if joint.tangent_outputs:   # (a backward input of a slice's length pins)
                    self.partition = min_cut_partition(joint)
                return joint
            except PinnedSizes as e:
                self.pinned = True
                _log(f"{self.owner.graph.name}: the backward is built for these sizes "
                     f"(a derivative rule needs them as numbers: {e})")
        return build_joint(self.fgraph, mask)

    def backward_inputs(self, arrays: list, outs: Any) -> tuple:
        """(inputs after the saved values and tangents, tangent shapes) for a backward
        over dynamic sizes: this call's."""
        extra = size_values(arrays, self.size_specs) + [arrays[i] for i in self.shape_inputs]
        return extra, [np.shape(outs[k]) for k in self.joint.tangent_outputs]

    def outputs_are_direct(self) -> bool:
        """Are the compiled forward's outputs exactly what the user gets back?"""
        return not self.training and not self.plan.mutated and self._fresh_outputs()

    def plain_runner(self, kept: tuple | None = None) -> Callable | None:
        """``run(args)`` for plain arrays that overlap nowhere: the forward, the epilogue
        and the outputs of :meth:`__call__` with nothing that scales with the number of
        values decided per call (None where outputs are views to rebuild, or training).
        ``kept``: the variant merges inputs that are one array (``f(x, x)``), ``run`` takes
        the caller's arguments and passes the forward those at ``kept``."""
        picks = None if self.training else view_outputs.output_picks(self.plan)
        if picks is None:
            return None
        forward, mutated = self.forward, tuple(self.plan.mutated)
        picks = tuple((kind, v, compiled_path(path) if kind.endswith("view") else None)
                      for kind, v, path in picks)
        copyto, graph = np.copyto, self.owner.graph
        redo_on_error = bool(mutated) and self.owner.replay_on_error
        generators = self.owner.generators
        in_c = plain_run_helper()   # the same steps, called from C with no frame (run_graph)
        if in_c is not None and not (generators and redo_on_error) \
                and all(p[0] in _PICKS for p in picks):
            return in_c(forward, mutated, tuple((_PICKS[k], v) for k, v, _ in picks), copyto,
                        (lambda args: run_op_by_op(graph, args)) if redo_on_error else None, kept)

        def run(args: tuple) -> tuple:
            called = args
            if kept is not None:
                args = tuple(called[i] for i in kept)
            put_back = snapshot(generators) if generators and redo_on_error else None
            try:
                outs = forward(*args)
                for i, k in mutated:
                    if outs[k] is not args[i]:
                        copyto(args[i], outs[k], casting="unsafe")
                result = []
                for kind, v, path in picks:
                    if kind == "fresh":
                        result.append(outs[v])
                    elif kind == "input":
                        result.append(args[v])
                    elif kind == "const":
                        result.append(v)
                    else:   # a view of an input (input_view) or of an output (base_view)
                        result.append(path(args[v] if kind == "input_view" else outs[v], args))
                return tuple(result)
            except Exception:
                if not redo_on_error:
                    raise
                if put_back is not None:
                    put_back()
                return run_op_by_op(graph, called)
        return run

    def _fresh_outputs(self) -> bool:
        specs = self.plan.outputs
        return (len(specs) == self.plan.num_graph_outputs
                and all(s.kind == "fresh" and s.index == i for i, s in enumerate(specs)))

    def compiled_backward(self, example: list) -> Callable:
        if self.backward_fn is None:
            self.backward_fn = self.owner.bw_compiler(self.partition.backward, example)
        return self.backward_fn

    # -- running -------------------------------------------------------------------------------
    def __call__(self, args: tuple, arrays: list, called: tuple | None = None) -> tuple:
        """``args`` with inputs that are one array merged (``_dedupe``); ``called``: as
        the caller passed them, for the replay."""
        if self.plan.mutated and self.owner.replay_on_error:
            put_back = snapshot(self.owner.generators) if self.owner.generators else None
            try:
                return self._run(args, arrays)
            except Exception:
                # The graph raised before its writes reached the caller's arrays; NumPy
                # would have done the writes before the error: run it op by op, which
                # leaves the arguments as NumPy does and raises the same error.
                if put_back is not None:
                    put_back()
                return run_op_by_op(self.owner.graph, called if called is not None else args)
        return self._run(args, arrays)

    def _run(self, args: tuple, arrays: list) -> tuple:
        if self.training:
            if self.error is None and self.simple:
                return self._run_training_simple(args, arrays)
            return self._run_training(args, arrays)
        Tensor = _tensor_cls()
        for i, _ in self.plan.mutated:   # before a donated buffer is written by the forward
            if isinstance(args[i], Tensor):
                args[i]._version.before_write()
        outs = self.forward(*arrays)
        self._epilogue(args, outs)
        wrap = any(isinstance(a, Tensor) for a in args)
        return self._user_outputs(args, arrays, outs, wrap, None)

    def _epilogue(self, args: tuple, outs: tuple) -> None:
        Tensor = _tensor_cls()
        for i, k in self.plan.mutated:
            target = args[i]
            data = target._data if isinstance(target, Tensor) else target
            if outs[k] is not data:  # a backend may have written it in place (donation)
                np.copyto(data, outs[k], casting="unsafe")
            if isinstance(target, Tensor):
                target._version.bump()

    def _user_outputs(self, args: tuple, arrays: list, outs: tuple, wrap: bool,
                      wrapped: dict | None) -> tuple:
        Tensor = _tensor_cls()
        from ..tensor import apply

        def tensor_of(k: int) -> Any:
            if wrapped is not None and k in wrapped:
                return wrapped[k]
            value = outs[k]
            if wrap and isinstance(value, (np.ndarray, np.generic)):
                value = Tensor._of_result(value)
                if wrapped is not None:
                    wrapped[k] = value
            return value

        def apply_op(op: Any, op_args: tuple, params: dict) -> Any:
            if isinstance(op_args[0], Tensor):
                return apply(Bound(op, op_args, params))
            return op.impl(*op_args, **params)

        shared: dict[int, Any] = {}
        made: dict[int, Any] = {}   # id(view node) -> its rebuilt object, for outputs that share it

        def rebuild(spec: Any, root: Any) -> Any:
            # One view of the program is one object: ``w = x.T; return w, np.squeeze(w)``
            # gives w twice (squeeze hands back w), so replay from the longest view made.
            start, value = 0, root
            for k in range(len(spec.views), 0, -1):
                if id(spec.views[k - 1]) in made:
                    start, value = k, made[id(spec.views[k - 1])]
                    break
            for k in range(start, len(spec.path)):
                value = replay(spec.path[k:k + 1], value, arrays, apply_op)
                if k < len(spec.views):
                    made[id(spec.views[k])] = value
            return value

        result = []
        for spec in self.plan.outputs:
            if spec.kind == "fresh":
                result.append(tensor_of(spec.index))
            elif spec.kind == "const":
                result.append(spec.value)
            elif spec.kind == "input":
                result.append(args[spec.index])
            elif spec.kind == "input_view":
                result.append(rebuild(spec, args[spec.index]))
            else:  # base_view: a view of an intermediate other outputs also view
                if spec.index not in shared:
                    shared[spec.index] = tensor_of(spec.index) if wrap else outs[spec.index]
                result.append(rebuild(spec, shared[spec.index]))
        return tuple(result)


def _is_float_val(value: Any) -> bool:
    return isinstance(value, Node) and isinstance(value.val, TensorMeta) and value.val.dtype.kind in "fc"



def run_op_by_op(graph: Graph, args: tuple) -> tuple:
    """Run the original (mutating) graph op by op on the caller's values: NumPy exactly.

    Tensors go through the eager Tensor ops, so they record on the tape as eager code does.
    """
    return _EagerInterpreter(graph).run(*args)


class _EagerInterpreter(Interpreter):
    def call(self, node: Node, args: tuple, kwargs: dict) -> Any:
        from ..tensor import _tensors_in, apply
        if any(True for _ in _tensors_in(args)):
            return apply(Bound(node.target, args, kwargs))
        return extern_impl(node)(*args, **kwargs)
