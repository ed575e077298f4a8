"""Which Python type a loop node's carried scalar comes out with.

``t = 0.0; for v in x: if v > 0.5: t += v`` leaves ``t`` a Python float when no element
passes and an ``np.float64`` once one did: Python's type depends on the data. The body is
traced with the NumPy type (the exact widening, kiln/capture/loop_branches.py), and such a
carried value gets a companion: a carried Python bool, "the value Python holds is NumPy
typed", computed in the body from the types each operation gives (``numpy_typed``).

After a loop node of the function's own graph the value is a :class:`TypedByFlagVariable`:
it leaves the graph (returned, handed to Python at a break) with the type the flag says,
and any other use breaks the graph there, so Python goes on with the value it would hold.
Inside an enclosing body the value goes on as the NumPy type, its loop item keeping the
flag (``meta["numpy_flag"]``) for the enclosing body's own flag.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import REGISTRY
from ..ops.loops import _OPERATORS, SCALAR_MATH
from .loops import LoopFallback
from .variables.base import VariableTracker

FLAG = "<numpy typed>:"    # the carried name of a value's flag: FLAG + the local's name
_WIDENS = {float: np.float64, int: np.int64, bool: np.bool_}
_PYTHON_RESULT = ("int", "float", "bool") + SCALAR_MATH


def needs_flag(start_type: Any, final_type: Any) -> bool:
    """Does a value carried from ``start_type`` that the body makes ``final_type`` have a
    type only the run decides (a Python scalar the loop may or may not make NumPy)?"""
    return _WIDENS.get(type(start_type)) is type(final_type)


def is_flag(name: str) -> bool:
    return name.startswith(FLAG)


def _node_like(value: Any) -> bool:
    return hasattr(value, "kind") and hasattr(value, "meta")


def numpy_typed(graph: Any, value: Any, memo: dict) -> Any:
    """Is ``value`` (a node of ``graph`` or a literal) NumPy typed in Python: True, False,
    or a node of ``graph`` computing it (new nodes go at the graph's end)."""
    if not _node_like(value):
        return isinstance(value, np.generic)
    if id(value) in memo:
        return memo[id(value)]
    out = _typed(graph, value, memo)
    memo[id(value)] = out
    return out


def _typed(graph: Any, node: Any, memo: dict) -> Any:
    flag = node.meta.get("numpy_flag")
    if flag is not None:
        return flag
    static = isinstance(node.val, np.generic) or getattr(node.val, "shape", None) == ()
    if node.kind != "call" or node.target.name != "scalar_fn":
        return static
    fn, args = node.kwargs.get("fn"), node.args[0]
    if node.meta.get("widened"):    # kiln's own widening of a Python scalar: its operand's
        return numpy_typed(graph, args[0], memo)
    if node.meta.get("guarded_operand"):   # an operand, a harmless 1 off the path (loop_predicates)
        return numpy_typed(graph, args[1], memo)
    if fn == "select":
        return _select(graph, args[0], numpy_typed(graph, args[1], memo), numpy_typed(graph, args[2], memo))
    if fn in _PYTHON_RESULT or fn.startswith("np."):
        return static
    if fn in _OPERATORS or fn == "abs":
        # a NumPy scalar operand makes the result NumPy (``0.0 + np.float64(1)``, ``1 < np.int64(2)``)
        flags = [numpy_typed(graph, a, memo) for a in args]
        if any(f is True for f in flags):
            return True
        dynamic = list({id(f): f for f in flags if f is not False}.values())
        if not dynamic:
            return static
        out = dynamic[0]
        for f in dynamic[1:]:
            out = _call(graph, "or_", (out, f))
        return out
    if fn in ("min", "max") and len(args) == 2:
        # the object itself: min(a, b) is b where b < a, max(a, b) b where b > a
        fa, fb = numpy_typed(graph, args[0], memo), numpy_typed(graph, args[1], memo)
        if fa is fb:
            return fa
        return _select(graph, _call(graph, "lt" if fn == "min" else "gt", (args[1], args[0])), fb, fa)
    flags = [numpy_typed(graph, a, memo) for a in args]
    if all(f is False or f is True for f in flags):
        return static
    raise LoopFallback(f"a carried value's Python type depends on the data through {fn}")


def _select(graph: Any, cond: Any, a: Any, b: Any) -> Any:
    if a is b:
        return a
    return _call(graph, "select", (cond, a, b))


def _call(graph: Any, fn: str, args: tuple) -> Any:
    return graph.call(REGISTRY["scalar_fn"], (args,), {"fn": fn})


def range_guarded(tx, var: Any, target: type) -> None:
    """``var``, a run-time Python int (a SymScalarVariable) carried into a loop that makes
    it ``target`` (``n += v`` of an np.int64 ``v``): the node starts from ``target(n)``,
    which raised OverflowError out of its range (``n = 2 ** 70`` and no element adding to
    it: Python returns 2 ** 70). Its range is guarded: a call out of it recompiles, and
    that trace's example, out of range too, leaves the loop to Python (``n += v`` then
    Python's int arithmetic, whatever the value)."""
    info = np.iinfo(target)
    low, high = int(info.min), int(info.max) + 1
    if not low <= var.example < high:
        raise LoopFallback(f"the start value of a carried int, {var.text}, does not fit "
                           f"{target.__name__}")
    tx.guards.add_truth(f"({low} <= {var.code} < {high})", f"({low} <= {var.text} < {high})",
                        True, var.leaves)


def python_scalar(value: Any, numpy_flag: Any, kind: type) -> Any:
    """The value a loop node's flagged scalar has in Python (see the module docstring)."""
    if isinstance(value, np.ndarray):
        value = value[()]
    return value if numpy_flag else kind(value)


class TypedByFlagVariable(VariableTracker):
    """A loop node's carried value whose Python type the run decides: ``array`` (its 0-d
    value, of the NumPy type) when ``flag`` (a Python bool the graph computes) holds, else
    ``kind(array)``. Leaving the graph it becomes that value; any other use breaks the
    graph there (the base class's default), so Python sees the value it would hold."""

    def __init__(self, tx, array: VariableTracker, flag: VariableTracker, kind: type,
                 what: str = "") -> None:
        self.tx, self.array, self.flag, self.kind = tx, array, flag, kind
        self.what = what or (f"a {kind.__name__} a loop carried, or the NumPy scalar the loop "
                             f"made it (which, the data decides)")

    def describe(self) -> str:
        return self.what

    def type_free_with(self, other: VariableTracker) -> bool:
        """Does an operator on this value and ``other`` give the same result whichever type
        the value has? ``v / max(s, 1e-12)`` with ``v`` float64: NumPy computes it either
        way, and a Python float (weak, NEP 50) and a float64 give the same loop with an
        operand of the dtypes SAME_AS_WEAK names (not float32: the weak float keeps it)."""
        from .python_numbers import SAME_AS_WEAK
        from .variables.arrays import ArrayVariable
        if not (isinstance(other, ArrayVariable) and not other.tensor
                and str(other.meta.dtype) in SAME_AS_WEAK.get(self.kind, ())):
            return False
        numpy = getattr(self, "numpy", None)    # (an int whose NumPy type is np.float64)
        return numpy is None or np.result_type(other.meta.dtype, self.kind(0)) == \
            np.result_type(other.meta.dtype, numpy)

    def python_type(self) -> type:   # (type(t), isinstance(t, float)): Python tells
        self.tx.unsupported("data_dependent", f"the type of {self.describe()} is known only at run time")

    def truth(self, tx) -> bool:
        tx.unsupported("data_dependent", f"the value of {self.describe()} is known only at run time")


def type_free_operands(a: VariableTracker, b: VariableTracker) -> tuple:
    """The operands of a binary operator, a typed-by-flag one replaced by its NumPy value
    where its type cannot change the result (:meth:`TypedByFlagVariable.type_free_with`)."""
    if isinstance(a, TypedByFlagVariable) and a.type_free_with(b):
        a = a.array
    if isinstance(b, TypedByFlagVariable) and b.type_free_with(a):
        b = b.array
    return a, b


class WidenFirst(LoopFallback):
    """A graph loop's carried Python float that its first trip makes an np.float64 (``y =
    0.05`` then ``y -= f / fprime``), read by the body: the loop is traced again with the
    float widened to float64 from the start (``names``), which :func:`check_widened`
    accepts where the first trip gives what Python's gives."""

    def __init__(self, names: tuple, reason: str) -> None:
        super().__init__(reason)
        self.names = names


def check_widened(name: str, start: Any, before: set, ends: list) -> None:
    """The trip traced with ``name``'s first value ``start`` (a Python float, widened to
    float64) is the first trip Python runs where what it computes from the float with
    Python numbers only (``abs(y)``, ``y * 2.0``: still a weak Python float in that trip)
    meets only elementwise ops, whose other operands are arrays or NumPy scalars of dtypes
    SAME_AS_WEAK names: NumPy gives the weak Python float's result (NEP 50), an np.float64
    whichever the type (``float - np.float64`` runs np.float64's reflected method). Such a
    weak value that is something else's operand, or leaves the trip (``ends``: a local,
    a test, a list's row) might show its type: LoopFallback."""
    from ..ops import Category
    from .python_numbers import SAME_AS_WEAK
    why = f"'{name}' changes type in the first trip (float -> float64) and its first value "
    weak, todo = {id(start)}, [start]
    while todo:
        node = todo.pop()
        if any(e is node for e in ends):
            raise LoopFallback(why + "leaves the trip as a value whose type it decides; start "
                               "it with its final type")
        for user in list(node.users):
            if id(user) in before or id(user) in weak:
                continue
            what = user.op.name if user.kind == "call" else user.kind
            if user.kind != "call" or user.op.category != Category.POINTWISE:
                raise LoopFallback(why + f"is read by {what}, which might see its type; start "
                                   f"it with its final type")
            others = [a for a in _flat(user.args) if not (_node_like(a) and id(a) in weak)]
            if not others:              # Python arithmetic on it in the first trip: weak too
                weak.add(id(user))
                todo.append(user)
            elif not all(_node_like(a) and str(getattr(a.val, "dtype", "")) in SAME_AS_WEAK[float]
                         for a in others):
                raise LoopFallback(why + f"meets {others[0]!r} in {what}, whose result might "
                                   f"depend on its type; start it with its final type")


def _flat(args: Any) -> list:
    out = []
    for a in args:
        out.extend(_flat(a) if isinstance(a, (tuple, list)) else [a])
    return out


_NUMPY_WIDE = tuple(_WIDENS.values())
_NARROWS = {v: k for k, v in _WIDENS.items()}


def with_flags(names: list, types: dict) -> dict:
    """``types`` (carried name -> stand-in) and a flag for each local traced with a type
    Python might not give it (``np.float64`` where the start was ``0.0``)."""
    out = dict(types)
    for n in names:
        if n in types and not n.startswith("<") and type(types[n]) in _NUMPY_WIDE:
            out[FLAG + n] = False
    return out


def link_flags(phs: dict) -> None:
    """A carried value's placeholder names its flag's, for ``numpy_typed``."""
    for name, ph in phs.items():
        if is_flag(name):
            phs[name[len(FLAG):]].meta["numpy_flag"] = ph


def _used(graph: Any, node: Any) -> bool:
    def refs(a: Any) -> bool:
        if a is node:
            return True
        return isinstance(a, (tuple, list)) and any(refs(b) for b in a)
    return any(refs(n.args) for n in graph.nodes if n is not node)


def carried_flags(tx, graph: Any, names: list, phs: dict, outs: list, start: dict,
                  at_least_once: bool) -> dict:
    """The flags a loop node carries: local name -> (flag's name, its final value in the
    body, its start value tracker); flags whose value the types already tell are dropped."""
    from .loops import ScalarValueVariable, current_graph, graph_value
    from .variables.base import ConstantVariable
    memo: dict = {}
    made = len(graph.nodes)
    finals = {n: numpy_typed(graph, outs[k], memo) for k, n in enumerate(list(names))
              if FLAG + n in phs}
    # drop the flag nodes no final needs (``level + trend`` inside ``a * y[t] + (level +
    # trend)``, NumPy typed by y[t]): else they would count as uses of the flags they read
    ends = {id(f) for f in finals.values()}
    for node in reversed(graph.nodes[made:]):
        if not node.users and id(node) not in ends:
            graph.erase(node)
    # ``s2, s1 = s1, s0``: s2's flag ends as s1's flag placeholder, which stays carried
    # (a flag that ends as its own placeholder, ``t = c * t``, follows only itself)
    followed = {id(f) for n, f in finals.items() if f is not phs[FLAG + n]}
    kept = {}
    for n, final in finals.items():
        ph = phs[FLAG + n]
        var = start[n]
        if isinstance(var, ConstantVariable):
            init = isinstance(var.value, np.generic)
        else:
            init = numpy_typed(current_graph(tx), graph_value(tx, var), {})
        if not _used(graph, ph) and id(ph) not in followed and (
                final is True and (init is True or at_least_once) or final is ph and init is True):
            continue   # NumPy typed whatever the data
        start_var = ConstantVariable(init) if isinstance(init, bool) else ScalarValueVariable(init, False)
        kept[n] = (FLAG + n, final, start_var)
    return kept


def flagged_result(tx, n: str, value: VariableTracker, item: Any, flag: VariableTracker,
                   example: Any, kind: type | None = None) -> VariableTracker:
    """A flagged local after its loop node: in the function's graph, the value that breaks
    on use; in an enclosing body, the NumPy-typed value whose item names its flag.
    ``kind``: the Python type where the flag is False, when not the NumPy type's own
    (``s = 0`` a while loop makes np.float64: an int after zero trips)."""
    if tx.output.loop_trace is not None:
        item.meta["numpy_flag"] = flag.node
        return value
    out = TypedByFlagVariable(tx, value, flag, kind or _NARROWS[type(example)])
    out.numpy = type(example)
    return out


class LateBound(LoopFallback):
    """Locals a graph loop's trip binds that were unbound before the loop and are read
    after it (``for it in range(maxit): ...; err = np.abs(u - old).max(); if err < tol:
    break`` then ``return u, err``): where the node runs at least once, Python leaves them
    bound to the last trip's values. The loop is traced again with each bound before it
    to a stand-in of its final kind (:func:`bind_late`), which the body must not read
    (Python would raise UnboundLocalError in the first trip) and must rebind: the
    carried value's first value is never used. ``late``: name -> ``("number", example)``
    or ``("array", shape, dtype)``."""

    def __init__(self, late: dict, reason: str) -> None:
        super().__init__(reason)
        self.late = late


def late_kinds(tx, names: list) -> dict | None:
    """:class:`LateBound`'s ``late`` for the locals ``names`` the traced trip bound, or
    None where one is not a number or an array of static shape."""
    from .loops import _type_of
    from .variables.arrays import ArrayVariable
    late = {}
    for n in names:
        v = tx.locals[n]
        example = _type_of(v)
        if example is not None and stand_in_type(example):
            late[n] = ("number", example)
        elif isinstance(v, ArrayVariable) and not v.tensor and not v.scalar \
                and v.array_type is np.ndarray and all(type(d) is int for d in v.meta.shape):
            late[n] = ("array", tuple(v.meta.shape), np.dtype(v.meta.dtype))
        else:
            return None
    return late


def stand_in_type(example: Any) -> bool:
    return type(example) in (int, float, bool) or isinstance(example, np.generic) \
        and np.dtype(type(example)).kind in "biuf"


def bind_late(tx, late: dict) -> list:
    """Bind each name of ``late`` to its stand-in (before the loop's snapshot); the
    trackers made, marked ``late_stand_in``."""
    from .loops import apply_scalar
    from .variables.base import ConstantVariable
    made = []
    for n, kind in late.items():
        if kind[0] == "number":
            ex = kind[1]
            fn = f"np.{type(ex).__name__}" if isinstance(ex, np.generic) else type(ex).__name__
            v = apply_scalar(tx, fn, [ConstantVariable(0)])
        else:
            v = tx.call_op(np.empty, [ConstantVariable(kind[1])], {"dtype": ConstantVariable(kind[2])},
                           "a stand-in for a local the loop binds")
        v.late_stand_in = True
        tx.locals[n] = v
        made.append((n, v))
    return made


def unbind_late(tx, made: list) -> None:
    """Undo :func:`bind_late` (a failed attempt)."""
    graph = tx.output.graph
    for n, v in made:
        if tx.locals.get(n) is v:
            del tx.locals[n]
        node = getattr(v, "node", None)
        if node is not None and node in graph.nodes and not node.users:
            node.args = ()
            graph.nodes.remove(node)
    graph._compiled = None


def check_late(starts: dict, locals_now: dict, read: set, stacked: list) -> None:
    """The stand-ins :func:`bind_late` made: rebound by the trip, never read by it."""
    for n, v in starts.items():
        if not getattr(v, "late_stand_in", False):
            continue
        if locals_now.get(n) is v or id(getattr(v, "node", None)) in read \
                or any(item is v for item in stacked):
            raise LoopFallback(f"'{n}' is read in the loop before the loop binds it")
