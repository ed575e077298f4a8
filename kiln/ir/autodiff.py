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
    """Can the value carry a gradient (a float or complex array)?"""
    val = getattr(node, "val", None)
    return isinstance(val, TensorMeta) and val.dtype.kind in "fc"


def _carries_float(node: Any) -> bool:
    """A float or complex array, or a tuple holding one: a loop node's carried values,
    which ``loop_item`` reads (a gradient reaching them must meet its missing rule, not
    stop there and leave a silent zero)."""
    val = getattr(node, "val", None)
    if isinstance(val, tuple):
        return any(isinstance(v, TensorMeta) and v.dtype.kind in "fc" for v in val)
    return is_float(node)


def _is_complex(node: Any) -> bool:
    val = getattr(node, "val", None)
    return isinstance(val, TensorMeta) and val.dtype.kind == "c"


def depends_on(calls: Sequence[Node], wrt: Sequence[Node]) -> set[Node]:
    """The float and complex values among ``wrt`` and ``calls`` that depend on such a
    ``wrt`` node. A gradient flows through complex values only through ops whose rule
    holds for them (``Op.complex_grad``); elsewhere this raises AutogradError, as the
    eager Tensor does when it records such an op."""
    needs = {n for n in wrt if is_float(n)}
    for node in calls:
        needed = [i for i in node.inputs if i in needs]
        if not needed or not _carries_float(node):
            continue
        if (_is_complex(node) or any(_is_complex(i) for i in needed)) \
                and not node.target.complex_rule(node.kwargs):
            from ..errors import AutogradError
            src = node.meta.get("source")
            at = f" at {src[0]}:{src[1]}: {src[2].strip()}" if src else ""
            raise AutogradError(
                f"'{node.target.name}' has no derivative rule for complex values{at} (a "
                f"gradient would flow through complex values here; a wrong or missing gradient "
                f"is never returned): compute this part on t.detach() or inside kiln.no_grad()")
        needs.add(node)
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
    before = set(graph.nodes) if graph is not None else set()
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
        try:
            grads = op.backward(cot.pop(node), Proxy(node), tuple(_proxies(node.args)), node.kwargs)
        except NoDerivative as e:
            src = node.meta.get("source")
            raise e.located(f"{src[0]}:{src[1]}" if src else None) from None
        for arg, grad, name in zip(node.args, grads, op.inputs):
            if name.startswith("*"):
                for sub_arg, sub_grad in zip(arg, grad or ()):
                    if isinstance(sub_arg, Node):
                        accumulate(sub_arg, sub_grad)
            elif isinstance(arg, Node):
                accumulate(arg, grad)
    if graph is not None:
        # As on the eager tape (Op.backward): derivative rules compute masked-off branches
        # (log's 1 / x where a where= skipped x = 0); where the graph runs as NumPy (errstate
        # raise, -W error) these nodes run under np.errstate(all="ignore") (ir/printer.py)
        for node in graph.nodes:
            if node.kind == "call" and node not in before:
                node.meta["quiet"] = True   # Graph.call(quiet=True)
    return [cot.get(n) for n in wrt]


def _proxies(args: Any) -> Any:
    from .graph import map_nodes
    return map_nodes(args, Proxy)


def _add(a: Proxy, b: Proxy) -> Proxy:
    from ..ops import F
    return F.add(a, b)
