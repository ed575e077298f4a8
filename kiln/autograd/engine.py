"""The backward engine: walk the recorded graph in dependency order, without recursion.

First count, for every node reachable from the roots, how many edges point at it; then
process nodes whose count reached zero, summing incoming gradients in a buffer per node.
A 10,000-op chain is a loop, not a 10,000-deep recursion.
"""
from __future__ import annotations

import sys
from typing import Any, Iterable

import numpy as np

from ..errors import AutogradError
from .grad_mode import no_grad
from .node import AccumulateGrad, GraphNode


def _count_dependencies(roots: Iterable[GraphNode]) -> dict[GraphNode, int]:
    deps: dict[GraphNode, int] = {}
    seen: set[int] = set()
    stack = list(roots)
    for r in stack:
        seen.add(id(r))
    while stack:
        node = stack.pop()
        for edge in node.edges:
            nxt = edge.node
            deps[nxt] = deps.get(nxt, 0) + 1
            if id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append(nxt)
    return deps


def _add(a: Any, b: Any) -> Any:
    return b if a is None else np.add(a, b)


def _run_hooks(hooks: list, grad: Any, wrap: Any) -> Any:
    for hook in hooks:
        result = hook(wrap(grad))
        if result is not None:
            grad = np.asarray(result.numpy() if hasattr(result, "numpy") else result)
    return grad


def run_backward(roots: list[tuple[GraphNode, Any]], retain_graph: bool, wrap: Any,
                 root_output_nrs: list[int] | None = None) -> None:
    """Propagate ``(node, gradient)`` pairs to every reachable leaf's ``.grad``.

    ``wrap`` turns an array into a Tensor (for hooks and ``.grad``); the engine itself only
    handles NumPy arrays. ``root_output_nrs`` says which output of each root node the
    gradient belongs to (0 by default).
    """
    if len(roots) == 1 and _only_leaves_below(roots[0][0]):
        # One node whose gradients all go straight to distinct leaves (a compiled
        # function's backward): no graph walk, no buffers.
        node, grad = roots[0]
        grads = [None] * node.num_outputs
        grads[nrs_first(root_output_nrs)] = grad
        outgoing = list(node.run(grads))
        if not retain_graph:
            node.release()
        for i, edge in enumerate(node.edges):
            if i < len(outgoing) and outgoing[i] is not None:
                _accumulate(edge.node.variable, _take(outgoing, i), wrap)
        return
    deps = _count_dependencies(node for node, _ in roots)
    buffers: dict[GraphNode, list] = {}
    nrs = root_output_nrs or [0] * len(roots)
    for (node, grad), nr in zip(roots, nrs):
        _send(buffers, node, nr, grad)
    ready = list(dict.fromkeys(node for node, _ in roots if deps.get(node, 0) == 0))
    # No local here may keep a gradient array alive past its use: a leaf takes a fresh
    # gradient as its .grad without copying only when nobody else holds it.
    with no_grad():
        while ready:
            node = ready.pop()
            grads = buffers.pop(node, None) or [None] * node.num_outputs
            for nr, hook in node.pre_hooks:
                if grads[nr] is not None:
                    grads[nr] = _run_hooks([hook], grads[nr], wrap)
            if isinstance(node, AccumulateGrad):
                if grads[0] is not None:
                    _accumulate(node.variable, grads.pop(), wrap)
                continue
            _propagate(node, node.run(grads), buffers, deps, ready)
            if not retain_graph:
                node.release()


def _take(items: list, i: int) -> Any:
    """items[i], cleared from the list (so a leaf can take a fresh gradient as it is)."""
    value, items[i] = items[i], None
    return value


def nrs_first(root_output_nrs: list[int] | None) -> int:
    return root_output_nrs[0] if root_output_nrs else 0


def _only_leaves_below(node: GraphNode) -> bool:
    if node.pre_hooks or isinstance(node, AccumulateGrad) or not node.edges:
        return False
    seen = set()
    for edge in node.edges:
        target = edge.node
        if type(target) is not AccumulateGrad or target.pre_hooks or id(target) in seen:
            return False
        seen.add(id(target))
    return True


def _send(buffers: dict, node: GraphNode, nr: int, grad: Any) -> None:
    buf = buffers.setdefault(node, [None] * node.num_outputs)
    buf[nr] = _add(buf[nr], grad)


def _propagate(node: GraphNode, outgoing: list, buffers: dict, deps: dict, ready: list) -> None:
    for edge, g in zip(node.edges, outgoing):
        if g is not None:
            _send(buffers, edge.node, edge.input_nr, g)
        deps[edge.node] -= 1
        if deps[edge.node] == 0:
            ready.append(edge.node)


def _probe_refs(value: Any) -> int:
    return sys.getrefcount(value)


def _calibrate() -> int:
    return _probe_refs(np.empty(1))


# References to an array only the engine held, seen from inside _accumulate: the argument
# (calibrated the way run_backward passes it, since the count is an interpreter detail).
_OWNED_REFS = _calibrate()


def _accumulate(tensor: Any, grad: Any, wrap: Any) -> None:
    """Add ``grad`` into ``tensor.grad``. The first gradient is taken as it is, without a
    copy, when it is an array nobody else can see (a fresh result of the backward: no base,
    no other reference; the AccumulateGrad "steal" of PyTorch); otherwise it is copied, so
    a ``.grad`` never shares memory with anything."""
    if tensor._grad is None and type(grad) is np.ndarray and grad.base is None \
            and sys.getrefcount(grad) <= _OWNED_REFS and grad.shape == tensor.shape \
            and grad.dtype == tensor.dtype and grad.flags.writeable:
        tensor._grad = wrap(grad)
        return
    grad = np.asarray(grad)
    if grad.shape != tensor.shape:
        grad = np.broadcast_to(grad, tensor.shape)
    if tensor._grad is None:
        tensor._grad = wrap(np.array(grad, dtype=tensor.dtype, copy=True))
    else:
        tensor._grad = wrap((tensor._grad.numpy() + grad).astype(tensor.dtype, copy=False))


def check_root_gradient(tensor: Any, gradient: Any) -> Any:
    if gradient is None:
        if tensor.size != 1:
            raise AutogradError(
                f"backward() on a non-scalar Tensor of shape {tensor.shape} needs a gradient; "
                f"pass gradient= with the same shape (for example t.backward(np.ones_like(t))) "
                f"or reduce it first (t.sum().backward())")
        if np.dtype(tensor.dtype).kind == "c":
            raise AutogradError("backward() on a complex Tensor needs a gradient (a loss is "
                                "real): pass gradient=, or take np.real / np.abs of it first")
        return np.ones(tensor.shape, tensor.dtype)
    g = np.asarray(gradient.numpy() if hasattr(gradient, "numpy") else gradient)
    if g.shape != tensor.shape:
        raise AutogradError(f"backward(): gradient has shape {g.shape} but the Tensor has "
                            f"shape {tensor.shape}; pass a gradient of the same shape")
    return g.astype(tensor.dtype, copy=False)
