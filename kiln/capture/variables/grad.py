"""``kiln.grad(f)`` / ``kiln.value_and_grad(f)`` called inside a compiled function.

Instead of running the eager tape at run time, capture inlines ``f`` into the graph as
usual and then writes its backward into the same graph (kiln/ir/autodiff.py: the same
derivative rules the eager Tensor runs). The compiled function then holds forward,
backward and whatever the caller does with the gradients (an SGD update) in one graph,
which the backends fuse and run without any autograd at run time, JAX's
``jit(value_and_grad)``::

    @kiln.compile
    def step(w, x, y):
        loss, g = kiln.value_and_grad(loss_fn)(w, x, y)
        return loss, w - 0.1 * g

Anything the eager ``kiln.grad`` would treat differently — an argument that is not a
float array, a result that is not a scalar, ``f`` writing into its arguments or breaking
the graph — falls back: the call runs as Python (eager autograd), so behaviour and
errors are the eager ones.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import NoDerivative
from ...ir import Proxy
from ...ir.autodiff import backprop
from ...ops import REGISTRY, F, method_key
from .arrays import ArrayVariable
from .base import ConstantVariable, VariableTracker


class GradTransformVariable(VariableTracker):
    """The function ``kiln.value_and_grad(fn, argnums)`` (or ``kiln.grad``) returned."""

    def __init__(self, fn: VariableTracker, argnums: Any, with_value: bool) -> None:
        self.fn = fn
        self.argnums = argnums
        self.with_value = with_value

    def describe(self) -> str:
        return f"kiln.{'value_and_grad' if self.with_value else 'grad'}({self.fn.describe()})"

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        from .containers import TupleVariable
        what = self.describe()
        nums = self.argnums if isinstance(self.argnums, tuple) else (self.argnums,)
        if not all(isinstance(n, int) and 0 <= n < len(args) for n in nums):
            tx.unsupported("unsupported_call", f"{what}: argnums={self.argnums!r} does not name "
                           f"positional arguments of this call")
        if any(isinstance(a, ArrayVariable) and a.tensor for a in list(args) + list(kwargs.values())):
            tx.unsupported("unsupported_call", f"{what}: kiln.Tensor arguments (the eager "
                           f"kiln.grad detaches them)")
        wrt = []
        for n in nums:
            a = args[n]
            if not isinstance(a, ArrayVariable) or a.meta.dtype.kind != "f" or a.tensor:
                tx.unsupported("unsupported_call", f"{what}: argument {n} is {a.describe()}, "
                               f"not a float array")
            wrt.append(a)
        if getattr(tx.output, "grad_depth", 0):
            tx.unsupported("unsupported_call", f"{what} inside a function being "
                           f"differentiated (higher-order gradients run as Python)")
        # Derivative rules write sizes into the graph (broadcast_to(g, shape=x.shape)):
        # dynamic dims are pinned, so each size gets its own graph.
        for var in list(tx.output.wrapped.values()) + list(args) + list(kwargs.values()):
            if isinstance(var, ArrayVariable):
                var.specialize_dims(tx)
        graph = tx.output.graph
        # Each differentiated argument enters as a view node of its own (free: a reshape
        # to its own shape), like eager's fresh leaf: the same array reached another way
        # (a closure, another argument) stays a constant of the derivative.
        args = list(args)
        for i, (n, a) in enumerate(zip(nums, wrt)):
            node = graph.call(REGISTRY["reshape"], (a.node,), {"shape": tuple(a.meta.shape)},
                              source=tx.location())
            wrt[i] = args[n] = ArrayVariable(node, a.dims, fresh=False, base=a.base or a)
        # New inputs reached inside fn are inserted before existing nodes: what fn
        # recorded is found by identity, not by position.
        before = set(graph.nodes)
        wrt_nodes = [a.node for a in wrt]
        tx.output.grad_depth = getattr(tx.output, "grad_depth", 0) + 1
        try:
            result = self.fn.call(tx, args, dict(kwargs))
        finally:
            tx.output.grad_depth -= 1
        calls = [n for n in graph.nodes if n.kind == "call" and n not in before]
        before.update(graph.nodes)
        # A write into an argument (eager: an error on a leaf) shows as a mutation op or as
        # the argument's tracker moved to a new node (capture's in-place rewrite).
        if any(n.target.mutates for n in calls) or \
                any(a.node is not n for a, n in zip(wrt, wrt_nodes)):
            tx.unsupported("unsupported_call", f"{what}: the function writes into an array")
        if isinstance(result, ArrayVariable) and not result.tensor:
            meta = result.meta
            if meta.dtype.kind != "f" or meta.size != 1:
                tx.unsupported("unsupported_call", f"{what}: the function returns "
                               f"{result.describe()}, not a float scalar")
            seed = Proxy(graph.constant(np.ones(meta.shape, meta.dtype), "grad_seed"))
            try:
                grads = backprop(calls, [(result.node, seed)], wrt_nodes)
            except NoDerivative as e:
                tx.unsupported("unsupported_call", f"{what}: {e}")
        elif isinstance(result, ConstantVariable) and _float_scalar(result.value):
            grads = [None] * len(wrt)
        else:
            tx.unsupported("unsupported_call", f"{what}: the function returns "
                           f"{result.describe()}, not a float scalar")
        out = []
        for a, g in zip(wrt, grads):
            node = g.node if g is not None else F.zeros_like(Proxy(a.node)).node
            if a.meta.shape == ():  # eager hands back leaf.grad.numpy(): a 0-d array
                node = F.copy(Proxy(node)).node
            out.append(ArrayVariable(node, a.dims))
        where = tx.location()  # the backward's nodes show the line that asked for it
        for node in graph.nodes:
            if node not in before and node.kind == "call" and "source" not in node.meta:
                node.meta["source"] = where
        grad_var = TupleVariable(out) if isinstance(self.argnums, tuple) else out[0]
        if not self.with_value:
            return grad_var
        if isinstance(result, ArrayVariable) and result.meta.shape == () and not result.scalar:
            # eager returns out.numpy()[()] for a 0-d value: a NumPy scalar
            result = tx.call_op(method_key("__getitem__"), [result, ConstantVariable(())], {},
                                "indexing")
        return TupleVariable([result, grad_var])


def _float_scalar(value: Any) -> bool:
    arr = np.asarray(value)
    return arr.dtype.kind == "f" and arr.size == 1


def grad_transform(tx, fn_value: Any, args: list, kwargs: dict) -> VariableTracker | None:
    """``kiln.value_and_grad(f, argnums)`` / ``kiln.grad(...)`` called in the frame."""
    from ...autograd import functional
    if fn_value not in (functional.value_and_grad, functional.grad):
        return None
    params = dict(zip(("fn", "argnums"), args))
    params.update(kwargs)
    if "fn" not in params or set(params) - {"fn", "argnums"}:
        return None
    argnums = params.get("argnums", ConstantVariable(0))
    if not argnums.is_constant():
        return None
    return GradTransformVariable(params["fn"], argnums.as_constant(tx),
                                 fn_value is functional.value_and_grad)
