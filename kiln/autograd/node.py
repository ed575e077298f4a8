"""Backward nodes: one per recorded op, plus one AccumulateGrad per leaf.

A :class:`BackwardNode` keeps what its op's derivative rule needs — the inputs as they
were passed to the kernel, the output, the params — and the *edges* to the nodes that
produced its differentiable inputs.

Saved values are copied on write: a node registers with the version counter of every
saved value its rule reads (kiln/ops/rule_reads.py), and every in-place write calls
:meth:`VersionCounter.before_write` first, which has those nodes keep a private copy of
the value as it was. So ``a = np.exp(s); a /= a.sum()`` differentiates as NumPy code
means it, the way the compiled path's functionalized graph does, and
``h = x @ w; h += b`` copies nothing (matmul's rule does not read its output). A write
that bypassed ``before_write`` is still caught: saved values are checked against their
versions at backward time, lazily (a stale value is replaced by a poison value that
raises only if the rule reads it).
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..errors import AutogradError, NoDerivative


class VersionCounter:
    """Shared by a Tensor and every view of its data; bumped by every in-place write.

    ``savers`` holds weak references to the nodes that saved a value of this data for a
    rule that reads it; :meth:`before_write` (called before every in-place write) has each
    keep its own copy, then forgets them.
    """

    __slots__ = ("value", "savers", "_prune_at")

    def __init__(self) -> None:
        self.value = 0
        self.savers: list | None = None
        self._prune_at = 16

    def bump(self) -> None:
        self.value += 1

    def watch(self, node: Any) -> None:
        """``node`` saved a value of this data that its rule reads."""
        savers = self.savers
        if savers is None:
            self.savers = [weakref.ref(node)]
            return
        savers.append(weakref.ref(node))
        if len(savers) > self._prune_at:   # a parameter read by every step's graph
            savers[:] = [r for r in savers if (n := r()) is not None and n.holds(self)]
            self._prune_at = 2 * len(savers) + 16

    def before_write(self) -> None:
        """The data is about to be written in place: nodes that saved it keep a copy."""
        savers = self.savers
        if savers:
            self.savers = None
            for ref in savers:
                node = ref()
                if node is not None:
                    node.keep_saved(self)


class Edge:
    """Where the gradient of one input goes.

    ``index``/``sub``: which input of this node (and which element of a sequence input);
    ``node``/``input_nr``: the node that produced that input, and which of its outputs it was.
    """

    __slots__ = ("index", "sub", "node", "input_nr")

    def __init__(self, index: int, sub: int | None, node: Any, input_nr: int = 0) -> None:
        self.index = index
        self.sub = sub
        self.node = node
        self.input_nr = input_nr


class GraphNode:
    """A node of the backward graph. Subclasses implement :meth:`run`.

    ``num_outputs`` is the number of forward outputs (gradients coming in); ``edges`` say
    where each outgoing gradient goes. ``pre_hooks`` holds ``(output_nr, hook)`` pairs run
    on an incoming gradient before the node uses it (Tensor.register_hook on non-leaves).
    """

    num_outputs = 1

    def __init__(self) -> None:
        self.edges: list[Edge] = []
        self.pre_hooks: list = []

    def run(self, grads: list) -> list:
        """Gradients in (one per forward output, None if absent) -> one per edge."""
        raise NotImplementedError

    def release(self) -> None:
        """Free saved values (called after backward unless retain_graph)."""

    def holds(self, counter: VersionCounter) -> bool:
        """Does this node still share a saved value with ``counter``'s data?"""
        return False

    def keep_saved(self, counter: VersionCounter) -> None:
        """``counter``'s data is about to be written in place: copy what was saved of it."""

    @property
    def next_functions(self) -> tuple:
        return tuple((e.node, e.input_nr) for e in self.edges)


class BackwardNode(GraphNode):
    where: str | None = None   # the user's file:line, noted for ops that may lack a rule

    def __init__(self, op: Any, inputs: tuple, params: dict, out: Any,
                 saved: list[tuple[int, int | None, Any, VersionCounter, int]]) -> None:
        super().__init__()
        self.op = op
        self.inputs = inputs
        self.params = params
        self.out = out
        # (index, sub, meta-source, counter, version) for every saved Tensor value
        self.saved = saved
        self.out_counter: VersionCounter | None = None
        self.out_version = 0
        self.released = False

    def name(self) -> str:
        return "".join(part.capitalize() for part in self.op.name.split("_")) + "Backward"

    def __repr__(self) -> str:
        return f"<{self.name()}>"

    def release(self) -> None:
        self.inputs = None
        self.out = None
        self.released = True

    def holds(self, counter: VersionCounter) -> bool:
        return not self.released and (self.out_counter is counter
                                      or any(s[3] is counter for s in self.saved))

    def keep_saved(self, counter: VersionCounter) -> None:
        if self.released:
            return
        now = counter.value
        if self.out_counter is counter and self.out_version == now:
            self.out = _private_copy(self.out)
            self.out_counter = None
        kept = []
        for entry in self.saved:
            index, sub, _, saved_counter, version = entry
            if saved_counter is counter and version == now:
                self.inputs = _replace(self.inputs, index, sub, _private_copy)
            else:
                kept.append(entry)
        self.saved = kept

    def run(self, grads: list) -> list:
        if grads[0] is None:
            return [None] * len(self.edges)
        per_input = self.apply(grads[0])
        out = []
        for edge in self.edges:
            g = per_input[edge.index]
            if edge.sub is not None and g is not None:
                g = g[edge.sub]
            out.append(g)
        return out

    def apply(self, grad: Any) -> tuple:
        if self.released:
            raise AutogradError(
                f"Trying to backward through the graph a second time (through {self.name()}), "
                f"but its saved values were freed by the first backward(). Pass "
                f"retain_graph=True to the first backward() if you need to call it twice")
        inputs, out, stale = self._checked_values()
        try:
            return self.op.backward(grad, out, inputs, self.params)
        except _PoisonUsed as e:
            raise AutogradError(stale[e.key]) from None
        except NoDerivative as e:
            raise e.located(self.where) from None

    def _checked_values(self) -> tuple[tuple, Any, dict]:
        """Inputs and output, with values modified in place since saving poisoned."""
        inputs = self.inputs
        out = self.out
        stale: dict[int, str] = {}
        if self.out_counter is not None and self.out_counter.value != self.out_version:
            key = len(stale)
            stale[key] = self._message("the output", self.out_counter.value, self.out_version)
            out = _Poison(out, key)
        for index, sub, _, counter, version in self.saved:
            if counter.value != version:
                key = len(stale)
                stale[key] = self._message(f"input {index} ('{self.op.inputs[index].lstrip('*')}')",
                                           counter.value, version)
                inputs = _replace(inputs, index, sub, lambda v: _Poison(v, key))
        return inputs, out, stale

    def _message(self, what: str, now: int, then: int) -> str:
        return (f"one of the values needed for gradient computation has been modified by an "
                f"in-place operation: {what} of {self.name()} is at version {now}; expected "
                f"version {then}. Compute the in-place update out of place (y = y + 1 instead "
                f"of y += 1), or .copy() the value before modifying it")


class AccumulateGrad(GraphNode):
    def __init__(self, tensor: Any) -> None:
        super().__init__()
        self.variable = tensor

    def name(self) -> str:
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


def _private_copy(value: Any) -> Any:
    return value.copy(order="K") if isinstance(value, np.ndarray) else value


def _replace(inputs: tuple, index: int, sub: int | None, fn: Any) -> tuple:
    items = list(inputs)
    if sub is None:
        items[index] = fn(items[index])
    else:
        seq = list(items[index])
        seq[sub] = fn(seq[sub])
        items[index] = type(items[index])(seq)
    return tuple(items)


class _PoisonUsed(Exception):
    def __init__(self, key: int) -> None:
        self.key = key


class _Poison:
    """Stands for a saved value that was overwritten: metadata is fine, data is not."""

    def __init__(self, value: Any, key: int) -> None:
        self.shape = np.shape(value)
        self.dtype = np.asarray(value).dtype if not hasattr(value, "dtype") else value.dtype
        self.ndim = len(self.shape)
        self.size = int(np.prod(self.shape))
        self._key = key

    @staticmethod
    def __kiln_op__(op: Any, inputs: tuple, params: dict) -> Any:
        for v in inputs:
            if isinstance(v, _Poison):
                raise _PoisonUsed(v._key)
        for v in inputs:
            if isinstance(v, (tuple, list)):
                for w in v:
                    if isinstance(w, _Poison):
                        raise _PoisonUsed(w._key)
        raise _PoisonUsed(0)

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise _PoisonUsed(self._key)
