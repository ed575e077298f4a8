"""Reverse mode over graph nodes: the backward of a stretch of a graph, written into it.

Each call node's derivative rule (``Op.backward``, the same rule the eager Tensor runs)
is called on :class:`~kiln.ir.Proxy` values, so the gradient computation becomes new
nodes of the same graph. Used by the joint graph (kiln/aot/joint.py: the whole forward
graph) and by capture (``kiln.grad``/``kiln.value_and_grad`` called inside a compiled
function: the nodes its function recorded).

    >>> import numpy as np
    >>> from kiln.ir import trace
    >>> from kiln.ops import F, TensorMeta
    >>> g = trace(lambda x: F.sum(F.sin(x)), [TensorMeta((3,), np.float64)], ["x"])
    >>> (x,), (total,) = g.placeholders, g.output_node.args[0]
    >>> seed = Proxy(g.constant(np.ones((), np.float64), "seed"))
    >>> [dx] = backprop(list(g.calls), [(total, seed)], [x])
    >>> dx.node.target.name
    'multiply'
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import NoDerivative
from ..ops import TensorMeta
from .graph import Node
from .tracer import Proxy


def is_float(node: Any) -> bool:
    val = getattr(node, "val", None)
    return isinstance(val, TensorMeta) and val.dtype.kind == "f"


def depends_on(calls: Sequence[Node], wrt: Sequence[Node]) -> set[Node]:
    """The float values among ``wrt`` and ``calls`` that depend on a float ``wrt`` node."""
    needs = {n for n in wrt if is_float(n)}
    for node in calls:
        if any(i in needs for i in node.inputs):
            if is_float(node):
                needs.add(node)
            elif isinstance(node.val, TensorMeta) and node.val.dtype.kind == "c":
                # A gradient would have to flow through complex values: never drop it.
                from ..errors import AutogradError
                raise AutogradError(
                    f"'{node.target.name}' gives a complex result from a value that requires "
                    f"grad; kiln does not differentiate complex values yet (a wrong or missing "
                    f"gradient is never returned): compute this part on detached values or "
                    f"inside kiln.no_grad()")
    return needs


def backprop(calls: Sequence[Node], seeds: Sequence[tuple[Node, Proxy]],
             wrt: Sequence[Node]) -> list[Proxy | None]:
    """Gradients of ``wrt`` given cotangents ``seeds`` for some of ``calls``' values.

    Only the derivatives of ``calls`` (in graph order) are taken: a value the function
    closed over is a constant here, even if it was computed from a ``wrt`` node earlier.
    ``None`` for a ``wrt`` node nothing flows to. Raises NoDerivative (the eager message)
    when a needed gradient goes through an op without a rule.
    """
    needs = depends_on(calls, wrt)
    graph = calls[0].graph if calls else None
    cot: dict[Node, Proxy] = {}

    def accumulate(node: Node, grad: Any) -> None:
        if grad is None or node not in needs:
            return
        if isinstance(grad, np.ndarray):
            grad = Proxy(graph.constant(grad, "grad_const"))
        elif not isinstance(grad, Proxy):
            return  # a Python zero: nothing flows
        prev = cot.get(node)
        cot[node] = grad if prev is None else _add(prev, grad)

    for node, grad in seeds:
        accumulate(node, grad)
    for node in reversed(list(calls)):
        if node not in cot or node not in needs:
            continue
        op = node.target
        if op.vjp is None:
            raise NoDerivative(f"Differentiation rule for '{op.name}' not implemented; "
                               f"detach the value (x.detach()) or compute it under kiln.no_grad()")
        inputs = tuple(_proxies(node.args))
        grads = op.backward(cot.pop(node), Proxy(node), inputs, node.kwargs)
        for arg, grad, name in zip(node.args, grads, op.inputs):
            if name.startswith("*"):
                for sub_arg, sub_grad in zip(arg, grad or ()):
                    if isinstance(sub_arg, Node):
                        accumulate(sub_arg, sub_grad)
            elif isinstance(arg, Node):
                accumulate(arg, grad)
    return [cot.get(n) for n in wrt]


def _proxies(args: Any) -> Any:
    from .graph import map_nodes
    return map_nodes(args, Proxy)


def _add(a: Proxy, b: Proxy) -> Proxy:
    from ..ops import F
    return F.add(a, b)
