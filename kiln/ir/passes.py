"""Graph passes: lint, dead-code elimination, common-subexpression elimination.

Each pass takes a Graph, changes it in place and returns it, so a pipeline reads as a
list: ``cse(dce(graph))``. With ``kiln.config.debug_checks`` on, every pass lints its
result.
"""
from __future__ import annotations

from typing import Any, Hashable, Iterable

import numpy as np

from ..config import config
from ..ops import Category, Op, REGISTRY
from ..ops.fp_errors import may_warn, numpy_name
from .graph import Graph, Node, iter_nodes, topo_check


def last_uses(reads: Iterable[Iterable[Hashable]], live_out: Iterable[Hashable] = ()) -> dict:
    """``key -> index of the last step reading it``; keys in ``live_out`` (outputs) live
    past the end (``len(reads)``). One analysis for every code generator that frees
    values after their last use (the graph printer, the C++ wrapper, the in-place plan).

        >>> last_uses([["a"], ["a", "b"], ["c"]], live_out=["c"])
        {'a': 1, 'b': 1, 'c': 3}
    """
    last: dict = {}
    n = 0
    for n, keys in enumerate(reads, 1):
        for key in keys:
            last[key] = n - 1
    for key in live_out:
        last[key] = n
    return last


def extend_through_views(last: dict, views: Iterable[tuple]) -> dict:
    """``last`` (from ``last_uses``) with each value's memory alive as long as a value that
    may view it: ``views`` holds ``(result, sources)`` in program order, a result that may
    be a view of any of its sources (an extern reshape returns one). Chains of views
    extend back to the first source.

        >>> extend_through_views({"buf0": 0, "r": 2, "s": 5}, [("r", ["buf0"]), ("s", ["r"])])
        {'buf0': 5, 'r': 5, 's': 5}
    """
    for result, sources in reversed(list(views)):
        if result not in last:
            continue
        for source in sources:
            if source in last:
                last[source] = max(last[source], last[result])
    return last


class GraphLintError(AssertionError):
    pass


def lint(graph: Graph) -> Graph:
    """Check the graph's invariants; raise GraphLintError naming the broken one."""
    names = set()
    for node in graph.nodes:
        if node.graph is not graph:
            raise GraphLintError(f"{node.name} belongs to another graph")
        if node.name in names:
            raise GraphLintError(f"duplicate node name {node.name}")
        names.add(node.name)
        if node.kind == "call":
            if not isinstance(node.target, Op) or REGISTRY.get(node.target.name) is not node.target:
                raise GraphLintError(f"{node.name} calls {node.target!r}, not a registered op")
            if len(node.args) != len(node.target.inputs):
                raise GraphLintError(f"{node.name}: {node.target.name} takes "
                                     f"{len(node.target.inputs)} inputs, has {len(node.args)}")
        for inp in iter_nodes(node.args):
            if node not in inp.users:
                raise GraphLintError(f"{inp.name} does not list its user {node.name}")
        for user in node.users:
            if node not in list(iter_nodes(user.args)):
                raise GraphLintError(f"{node.name} lists {user.name} as a user, but it is not")
    try:
        topo_check(graph.nodes)
    except ValueError as e:
        raise GraphLintError(str(e)) from None
    outputs = [n for n in graph.nodes if n.kind == "output"]
    if len(outputs) != 1 or graph.nodes[-1] is not outputs[0]:
        raise GraphLintError("a graph has exactly one output node, and it comes last")
    return graph


def _checked(graph: Graph) -> Graph:
    return lint(graph) if config.debug_checks else graph


def has_side_effects(node: Node) -> bool:
    return node.kind == "call" and (node.target.category == Category.MUTATION or bool(node.target.mutates))


def must_stay(node: Node) -> bool:
    """Kept even when unused: it writes memory, it may raise (``sizes_meet``: its operands'
    run-time sizes may not broadcast, capture/dims.py), or it may warn of a floating-point
    error (as NumPy would)."""
    return has_side_effects(node) or (node.kind == "call" and (
        node.target.raises(node.args, node.kwargs) or node.target.state is not None or node.meta.get("sizes_meet")
        or may_warn_call(node)))


_ELEMENTWISE = (Category.POINTWISE, Category.REDUCTION, Category.SCAN)


def may_warn_call(node: Node) -> bool:
    """Is ``node`` a call the user's code made (not a derivative rule's, ``quiet``, nor a
    step of a composite spelling other than its result, ``inner``) whose
    NumPy call may warn "divide by zero encountered in log" and the like for some values
    (ops/fp_errors.py ``may_warn``)? Its value unused, NumPy still computes it and warns
    (``y = np.log(x); return x * 2``). The mode is not known here: under
    ``np.errstate(all="ignore")`` it is computed for nothing."""
    if node.meta.get("quiet") or node.meta.get("inner") or not node.meta.get("source"):
        return False
    op = node.target
    part = node.meta.get("ufunc")
    if part and _live_sibling(node, part[0]):
        return False   # the call's other result, computed, warns for NumPy's one call
    name = numpy_name(op.name, node.kwargs, part)

    def kind(value: Any) -> str | None:
        val = value.meta.get("val") if isinstance(value, Node) else None
        return getattr(getattr(val, "dtype", None), "kind", None)
    return may_warn(name, tuple(kind(a) for a in node.args if isinstance(a, Node)),
                    tuple(None if isinstance(a, Node) else a for a in node.args), kind(node),
                    op.category in _ELEMENTWISE)


def _live_sibling(node: Node, ufunc: str) -> bool:
    """Is another result of ``node``'s ufunc call (np.divmod's quotient of its remainder)
    used?"""
    first = next(iter_nodes(node.args), None)
    return first is not None and any(
        u is not node and u.users and (u.meta.get("ufunc") or ("",))[0] == ufunc
        and len(u.args) == len(node.args) and all(a is b for a, b in zip(u.args, node.args))
        for u in first.users)


def dce(graph: Graph) -> Graph:
    """Remove calls and constants whose values nobody uses (mutations and ops that may
    raise always stay)."""
    for node in reversed(list(graph.nodes)):
        if node.kind in ("call", "constant") and not node.users and not must_stay(node):
            graph.erase(node)
    return _checked(graph)


def _key(value: Any) -> Any:
    """A hashable key for args/params; arrays compare by identity."""
    if isinstance(value, Node):
        return ("node", id(value))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__,) + tuple(_key(v) for v in value)
    if isinstance(value, slice):
        return ("slice", _key(value.start), _key(value.stop), _key(value.step))
    if isinstance(value, dict):
        return ("dict",) + tuple((k, _key(v)) for k, v in sorted(value.items()))
    if isinstance(value, np.ndarray):
        return ("array", id(value))
    if isinstance(value, float) and value != value:
        return ("nan",)
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return (type(value).__name__, value)


def _repeat_key(node: Node) -> Any:
    """What makes two pure calls the same computation (op, inputs, params); None for a
    call that is never merged: ``empty*`` (uninitialized memory) and random draws (two
    draws are two different numbers)."""
    op = node.target
    if op.name.startswith("empty") or op.state is not None:
        return None
    return (op.name, _key(node.args), _key(node.kwargs))


def cse(graph: Graph) -> Graph:
    """Merge calls of the same op on the same inputs with the same params."""
    seen: dict[Any, Node] = {}
    for node in list(graph.nodes):
        if node.kind != "call":
            continue
        if has_side_effects(node):
            # A mutation invalidates everything computed so far from any value: be simple.
            seen.clear()
            continue
        key = _repeat_key(node)
        if key is None:
            continue
        previous = seen.get(key)
        if previous is None:
            seen[key] = node
        else:
            node.replace_all_uses_with(previous)
            graph.erase(node)
    return _checked(graph)


def may_share_input(op: Op) -> bool:
    """Can this op's result be (a view of) its input? (Not for elementwise work,
    reductions and scans, nor for ops whose result is always fresh.)"""
    return op.category not in (Category.POINTWISE, Category.REDUCTION, Category.SCAN) \
        and not op.fresh_result


def writes_an_input(graph: Graph) -> bool:
    """Does an op of ``graph`` write into one of its inputs, or a view of one? (Only then
    can inputs that overlap in memory change what it computes.) An op that writes without
    saying which argument counts as writing all of them."""
    for node in graph.calls:
        if not has_side_effects(node):
            continue
        op = node.target
        written = [node.args[i] for i in op.mutates if i < len(node.args)] if op.mutates \
            else list(node.args)
        todo = [n for a in written for n in iter_nodes(a)]
        seen: set = set()
        while todo:   # back through the ops whose result may be (a view of) an input
            n = todo.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if n.kind == "placeholder":
                return True
            if n.kind == "call" and may_share_input(n.target):
                todo.extend(n.inputs)
    return False


def _reach(node: Node, may_share: Any = may_share_input) -> tuple[bool, bool]:
    """``(escapes, written)``: does ``node``'s value, or an array that may share its memory
    (through the users ``may_share`` says of), reach the graph's output, or an op that
    writes?"""
    escapes = written = False
    todo, seen = [node], set()
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        for user in n.users:
            if user.kind == "output":
                escapes = True
            elif user.kind == "call":
                op = user.target
                if has_side_effects(user):
                    written = True
                elif may_share(op):
                    todo.append(user)    # its result may be (a view of) this value
    return escapes, written


def shared_calls(graph: Graph, category: Category = Category.EXTERN) -> dict[Node, Node]:
    """``call -> the earlier call it repeats``: calls of ``category`` ops on the same
    inputs with the same params, none of them writing, drawing random numbers or
    allocating, with no write in the graph between them. A backend computes the repeat's
    value once (CG's ``r @ r`` in its while test and in its body: one BLAS call, not two).
    Not merged: two calls whose values both reach the graph's output (the caller would
    get one object twice where NumPy gives two), or a value something writes.

        >>> from kiln.ir import trace
        >>> from kiln.ops import F, TensorMeta
        >>> g = trace(lambda r: F.add(F.matmul(r, r), F.matmul(r, r)),
        ...           [TensorMeta((3,), np.float64)], ["r"])
        >>> [(a.name, b.name) for a, b in shared_calls(g).items()]
        [('matmul_1', 'matmul')]
    """
    seen: dict[Any, Node] = {}
    shared: dict[Node, Node] = {}
    writes = 0
    reach: dict[int, tuple[bool, bool]] = {}

    def reached(n: Node) -> tuple[bool, bool]:
        if id(n) not in reach:
            reach[id(n)] = _reach(n)
        return reach[id(n)]

    for node in graph.nodes:
        if node.kind != "call":
            continue
        if has_side_effects(node):
            writes += 1
            continue
        key = _repeat_key(node) if node.target.category == category else None
        if key is None:
            continue
        key += (writes,)
        previous = seen.get(key)
        if previous is None:
            seen[key] = node
            continue
        (e1, w1), (e2, w2) = reached(previous), reached(node)
        if not (w1 or w2 or (e1 and e2)):
            shared[node] = previous
    return shared
