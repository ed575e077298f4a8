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

from ..ir import Graph, Node, Proxy, map_nodes
from ..ir.graph import kept_meta
from ..ops import TensorMeta
from ..ir.autodiff import backprop, depends_on, is_float as _is_float
from ..ir.passes import dce
from ..ir.tracer import SHAPES
from ..errors import NoDerivative
from .symbolic import JointSizes, PinnedSizes


@dataclass
class Joint:
    graph: Graph
    num_primals: int
    num_fw_outputs: int
    tangent_outputs: list[int]     # which forward outputs have a tangent, in tangent order
    grad_inputs: list[int]         # which primals get a gradient output, in output order
    # With dynamic sizes (kiln/aot/symbolic.py): the shapes, and after the tangents one
    # placeholder per size the backward divides by, computed by the runtime per call.
    sizes: Any = None

    @property
    def size_inputs(self) -> list:
        return self.sizes.size_inputs if self.sizes is not None else []


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
                           name=node.name, val=node.val, **kept_meta(node))
            env[node] = new
        else:
            return map_nodes(node.args[0], env.__getitem__)
    raise ValueError(f"graph '{src.name}' has no output node")


def retraced(graph: Graph, example_inputs: Sequence[Any]) -> Graph:
    """``graph`` with every value's shape inferred again from ``example_inputs`` (a graph
    with dynamic dims or int slice bounds, captured at other sizes: derivative rules read
    sizes from it)."""
    out = Graph(graph.name)
    env: dict[Node, Any] = {}
    for p, ex in zip(graph.placeholders, example_inputs):
        arr = getattr(ex, "_data", ex)
        val = TensorMeta(arr.shape, arr.dtype) if isinstance(arr, np.ndarray) \
            else arr if type(arr) is int and type(p.val) is int else p.val   # (x[:n]'s n)
        env[p] = out.placeholder(p.target, val, **{k: v for k, v in p.meta.items() if k != "val"})
    for node in graph.nodes:
        if node.kind == "constant":
            env[node] = out.constant(node.target, node.name)
        elif node.kind == "call":
            env[node] = out.call(node.target, map_nodes(node.args, env.__getitem__), node.kwargs,
                                 name=node.name, **kept_meta(node))
        elif node.kind == "output":
            out.output(map_nodes(node.args[0], env.__getitem__))
    return out


def build_joint(fw: Graph, requires_grad: Sequence[bool], symbolic: bool = False) -> Joint:
    """Joint forward+backward graph of the functional graph ``fw``.

    ``requires_grad[i]``: does primal ``i`` need a gradient. Raises NoDerivative (the
    eager message) when a needed gradient goes through an op without a rule.
    ``symbolic``: the derivative rules see the primals' dynamic dims as sizes
    (kiln/aot/symbolic.py); raises PinnedSizes when a rule needs them as numbers.
    """
    g = Graph("joint")
    env: dict[Node, Any] = {}
    primals = fw.placeholders
    for p in primals:
        env[p] = g.placeholder(p.target, p.val, **{k: v for k, v in p.meta.items() if k != "val"})
    outs = copy_nodes(fw, g, env)
    joint_primals = [env[p] for p in primals]

    wrt = [jp for jp, rg in zip(joint_primals, requires_grad) if rg and _is_float(jp)]
    needs = depends_on(g.calls, wrt)
    tangent_outputs = [i for i, o in enumerate(outs) if isinstance(o, Node) and o in needs]
    tangents = [g.placeholder(f"tangents_{k}", outs[i].val)
                for k, i in enumerate(tangent_outputs)]
    seeds = [(outs[i], Proxy(t)) for i, t in zip(tangent_outputs, tangents)]
    sizes = None
    if symbolic:
        sizes = JointSizes(g, joint_primals, [p.meta.get("dynamic_dims", ()) for p in primals])
        before = set(g.nodes)
        for i, t in zip(tangent_outputs, tangents):   # a tangent has its output's sizes
            try:
                sizes.dynamic[t] = set(sizes.dynamic_dims(outs[i]))
            except Exception as e:
                raise PinnedSizes(f"{type(e).__name__}: {e}") from e
        token = SHAPES.set(sizes)
        try:
            grads = backprop(list(g.calls), seeds, wrt)
            sizes.check([n for n in g.nodes if n not in before], grads, wrt)
        except NoDerivative:
            raise
        except Exception as e:
            raise PinnedSizes(f"{type(e).__name__}: {e}") from e
        finally:
            SHAPES.reset(token)
    else:
        grads = backprop(list(g.calls), seeds, wrt)
    grad_inputs = [i for i, (jp, rg) in enumerate(zip(joint_primals, requires_grad))
                   if rg and _is_float(jp)]
    grad_outs = [value.node if value is not None else None for value in grads]
    g.output(tuple(outs) + tuple(grad_outs))
    dce(g)
    return Joint(g, len(primals), len(outs), tangent_outputs, grad_inputs, sizes)
