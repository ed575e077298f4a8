"""The joint graph: a functional forward plus its backward, in one graph.

Placeholders are the forward's inputs (*primals*) followed by one *tangent* per forward
output that carries a gradient; outputs are the forward's outputs followed by the
gradient of every primal that requires grad. The backward part is written by the same
derivative rules the eager Tensor uses (``Op.backward``): each rule is called on
:class:`~kiln.ir.Proxy` values, so its ops become graph nodes. Only what a requested
gradient needs is kept (values no gradient depends on are pruned by DCE); integer and
bool outputs get no tangent.

    >>> import numpy as np
    >>> from kiln.ir import trace
    >>> from kiln.ops import F, TensorMeta
    >>> fw = trace(lambda x: F.sum(F.sin(x)), [TensorMeta((3,), np.float64)], ["x"])
    >>> j = build_joint(fw, [True])
    >>> j.graph.op_names()
    ['sin', 'sum', 'broadcast_to', 'cos', 'multiply']
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import NoDerivative
from ..ir import Graph, Node, Proxy, map_nodes
from ..ir.passes import dce
from ..ops import TensorMeta


@dataclass
class Joint:
    graph: Graph
    num_primals: int
    num_fw_outputs: int
    tangent_outputs: list[int]     # which forward outputs have a tangent, in tangent order
    grad_inputs: list[int]         # which primals get a gradient output, in output order


def _is_float(node: Any) -> bool:
    val = getattr(node, "val", None)
    return isinstance(val, TensorMeta) and val.dtype.kind == "f"


def copy_nodes(src: Graph, dst: Graph, env: dict[Node, Any]) -> Any:
    """Copy src's constants and calls into dst (placeholders must be in env); return the
    output tuple mapped into dst."""
    for node in src.nodes:
        if node.kind == "placeholder":
            continue
        if node.kind == "constant":
            env[node] = dst.constant(node.target, node.name)
        elif node.kind == "call":
            new = dst.call(node.target, map_nodes(node.args, env.__getitem__), node.kwargs,
                           name=node.name, val=node.val, source=node.meta.get("source"))
            env[node] = new
        else:
            return map_nodes(node.args[0], env.__getitem__)
    raise ValueError(f"graph '{src.name}' has no output node")


def build_joint(fw: Graph, requires_grad: Sequence[bool]) -> Joint:
    """Joint forward+backward graph of the functional graph ``fw``.

    ``requires_grad[i]``: does primal ``i`` need a gradient. Raises NoDerivative (the
    eager message) when a needed gradient goes through an op without a rule.
    """
    g = Graph("joint")
    env: dict[Node, Any] = {}
    primals = fw.placeholders
    for p in primals:
        env[p] = g.placeholder(p.target, p.val, **{k: v for k, v in p.meta.items() if k != "val"})
    outs = copy_nodes(fw, g, env)
    joint_primals = [env[p] for p in primals]

    # Which values depend on a primal that requires grad (through float values).
    needs: set[Node] = {jp for jp, rg in zip(joint_primals, requires_grad) if rg and _is_float(jp)}
    for node in g.calls:
        if _is_float(node) and any(i in needs for i in node.inputs):
            needs.add(node)

    tangent_outputs = [i for i, o in enumerate(outs) if isinstance(o, Node) and o in needs]
    tangents = [g.placeholder(f"tangents_{k}", outs[i].val)
                for k, i in enumerate(tangent_outputs)]

    cot: dict[Node, Proxy] = {}

    def accumulate(node: Node, grad: Any) -> None:
        if grad is None or node not in needs:
            return
        if isinstance(grad, np.ndarray):
            grad = Proxy(g.constant(grad, "grad_const"))
        elif not isinstance(grad, Proxy):
            return  # a Python zero: nothing flows
        prev = cot.get(node)
        cot[node] = grad if prev is None else _add(prev, grad)

    for k, i in enumerate(tangent_outputs):
        accumulate(outs[i], Proxy(tangents[k]))

    for node in reversed(g.calls):
        if node not in cot or node not in needs:
            continue
        op = node.target
        inputs = map_nodes(node.args, Proxy)
        if op.vjp is None:
            raise NoDerivative(f"Differentiation rule for '{op.name}' not implemented; "
                               f"detach the value (x.detach()) or compute it under kiln.no_grad()")
        grads = op.backward(cot.pop(node), Proxy(node), tuple(inputs), node.kwargs)
        for arg, grad, name in zip(node.args, grads, op.inputs):
            if name.startswith("*"):
                for sub_arg, sub_grad in zip(arg, grad or ()):
                    if isinstance(sub_arg, Node):
                        accumulate(sub_arg, sub_grad)
            elif isinstance(arg, Node):
                accumulate(arg, grad)

    grad_inputs = [i for i, (jp, rg) in enumerate(zip(joint_primals, requires_grad))
                   if rg and _is_float(jp)]
    grad_outs = []
    for i in grad_inputs:
        value = cot.get(joint_primals[i])
        grad_outs.append(value.node if value is not None else None)
    g.output(tuple(outs) + tuple(grad_outs))
    dce(g)
    return Joint(g, len(primals), len(outs), tangent_outputs, grad_inputs)


def _add(a: Proxy, b: Proxy) -> Proxy:
    from ..ops import F
    return F.add(a, b)
