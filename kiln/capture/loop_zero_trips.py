"""A loop node that may run no trip, and a carried value whose type its body changes.

``s = 0; for i in range(n): s += x[i]`` makes ``s`` an np.float64 in every trip, but with
``n = 0`` Python returns the int 0: the node's result (0.0) has the wrong type. A flag
(kiln/capture/loop_types.py) undoes the exact widening of a Python scalar (a float or an
np.float64, an int or an np.int64); across kinds (int -> np.float64, bool -> np.float64,
np.float32 -> np.float64) the value after zero trips has a type neither gives. So:

- a range loop whose bounds the guards read (an int argument, a dim) is guarded to run at
  least once (``len(range(n)) > 0``); a zero-trip call compiles again and the loop runs as
  Python there;
- in the function's graph, a while loop (or a range the guards cannot read) keeps the flag
  where every trip makes the value NumPy: False is then zero trips, and the value the
  start's type (``start_kinds``);
- inside an enclosing body (the forward substitution's ``s = 0; for j in range(i): s +=
  L[i, j] * y[j]``), the result is marked and the enclosing body may use it only where
  its type cannot show (``b[i] - s`` of a float64 ``b[i]``; ``check_zero_trip_items``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops.loops import RESULT_BY_DTYPE
from .loop_branches import _WIDENS
from .loop_types import _flat, _node_like, needs_flag, numpy_typed
from .loops import LoopFallback, _type_of
from .variables.arrays import SymScalarVariable
from .variables.base import ConstantVariable


def zero_trips_differ(start_type: Any, final_type: Any) -> bool:
    """Does a value carried from ``start_type`` that the body makes ``final_type`` have,
    after zero trips, a type neither the node's result nor its flag gives (``0`` -> an
    np.float64, an np.float32 -> np.float64: not the exact widening a flag undoes)?"""
    return type(start_type) is not type(final_type) and not needs_flag(start_type, final_type)


ZERO_TRIPS = "zero_trips_start"    # a loop item's meta: its value after zero trips' type


def mark_zero_trip_items(tx, names: list, starts: dict) -> None:
    """An inner loop node's results (``names``) that zero trips of a run-time count leave
    in their start's type (``starts``: examples), which the enclosing body holds as the
    node's type: :func:`check_zero_trip_items` checks their uses once it is traced."""
    for n in names:
        node = getattr(tx.locals.get(n), "node", None)
        if node is None:
            raise LoopFallback(f"'{n}' changes type in an inner loop that may run no trip")
        node.meta[ZERO_TRIPS] = starts[n]


def _stored_exactly(user: Any, node: Any, final: np.dtype) -> bool:
    """Is ``user`` an element write of ``node`` (``out[k] = s``) into an array of its
    NumPy dtype (or complex128), where the int 0 and np.float64 0.0 store the same?"""
    if user.kind != "call" or user.op.name not in ("store_elem", "store_elem_if"):
        return False
    *rest, value = user.args
    array = rest[-2]
    return value is node and not any(a is node for a in _flat(rest)) \
        and np.dtype(getattr(getattr(array, "val", None), "dtype", object)) in (final, np.dtype(complex))


def check_zero_trip_items(graph: Any, ends: list) -> None:
    """The marked items of a body (:func:`mark_zero_trip_items`) meet only element writes
    into arrays of their dtype (:func:`_stored_exactly`), and arithmetic and comparisons
    whose other operand is a graph value of a dtype that gives the same
    result dtype with either type (``b[i] - s`` of a float64 ``b[i]``, ``s`` an int 0 or
    an np.float64: the same np.float64): the forward substitution's ``s = 0; for j in
    range(i): s += L[i, j] * y[j]``. Anything else (the enclosing body carries it, returns
    it, meets a literal) might show Python's type: LoopFallback. ``ends``: the values the
    body leaves (its carried values, a vectorized function's results)."""
    memo: dict = {}
    made = len(graph.nodes)
    for node in [n for n in graph.nodes if ZERO_TRIPS in n.meta]:
        if any(getattr(e, "node", e) is node for e in ends):
            raise LoopFallback(f"an inner loop's result whose type zero trips keep "
                               f"({type(node.meta[ZERO_TRIPS]).__name__}) leaves the body")
        start, final = node.meta[ZERO_TRIPS], np.dtype(getattr(node.val, "dtype", type(node.val)))
        for user in node.users:
            if _stored_exactly(user, node, final):
                continue
            ok = user.kind == "call" and user.op.name == "scalar_fn" and user.kwargs.get("fn") in RESULT_BY_DTYPE
            others = [a for a in _flat(user.args) if a is not node] if ok else []
            # the other operand: a NumPy value whatever the data (a flagged one may be a
            # Python number, whose result would take the item's type)
            ok = ok and len(others) == 1 and _node_like(others[0]) and hasattr(others[0].val, "dtype") \
                and numpy_typed(graph, others[0], memo) is True
            if not ok or np.result_type(others[0].val.dtype, start) != np.result_type(others[0].val.dtype, final):
                what = user.kwargs.get("fn", user.kind) if user.kind == "call" else user.kind
                raise LoopFallback(f"an inner loop's result whose type zero trips keep "
                                   f"({type(start).__name__}) meets {what}, which might show it")
    for node in reversed(graph.nodes[made:]):    # (flags numpy_typed computed on the way)
        if not node.users:
            graph.erase(node)


def runs_at_least_once(tx, cont: Any, bounds: tuple, names: list, types: dict,
                       start: dict, pseudo: Any) -> bool | list:
    """Must a run-time trip count be guarded above 0? Where the body changes a carried
    value's type across kinds (``s = 0; s += x[i]``: int -> np.float64; np.float32 ->
    np.float64), zero trips leave it as it started, in its own type, which neither the
    node's result nor a flag (loop_types: a float or np.float64, an int or np.int64)
    gives: the node runs for counts above 0 and a zero-trip call compiles again (the
    constant count 0 above: as Python). A while loop's test or bounds the guards cannot
    read (``range(i)`` of an enclosing loop's variable): the names, whose results an
    enclosing body may use only where their type cannot show (:func:`check_zero_trip_items`)
    and whose flag, in the function's graph, tells the start's type (:func:`start_kinds`).
    ``pseudo``: loop_node._pseudo_name (None for a user's local)."""
    if cont is None and all(isinstance(b, ConstantVariable) for b in bounds):
        if not len(range(*(b.value for b in bounds))) and any(
                type(types[n]) is not type(_type_of(start[n])) for n in names if n in start):
            # zero trips leave a carried value as it started, in its own type (np.int8(0)
            # where the body makes np.int16): nothing to compile
            raise LoopFallback("zero trips, and the body changes a carried value's type")
        return False
    changed = [n for n in names if pseudo(n) is None and n in start
               and zero_trips_differ(_type_of(start[n]), types[n])]
    if not changed:
        return False
    why = (f"'{changed[0]}' changes type in the loop ({type(_type_of(start[changed[0]])).__name__}"
           f" -> {type(types[changed[0]]).__name__}) and a run-time trip count may be 0")
    trace = tx.output.loop_trace
    if cont is None and all(isinstance(b, (ConstantVariable, SymScalarVariable)) for b in bounds) \
            and (trace is None or trace.active is None):   # (off a path the loop runs no trip)
        if not len(range(*(b.value if isinstance(b, ConstantVariable) else b.example for b in bounds))):
            raise LoopFallback(why + ": it is 0 in this call")
        return True
    return changed


def start_kinds(tx, changed: list, flags: dict, start: dict) -> dict:
    """In the function's graph, the Python types of the ``changed`` names (see
    :func:`runs_at_least_once`) where their flag is False: every trip makes such a
    value NumPy (its final flag True), so False is zero trips, which leave the start,
    a Python constant converted exactly (``s = 0; while i < n: s += x[i]``: 0, not 0.0)."""
    if tx.output.loop_trace is not None:
        return {}
    kinds = {}
    for n in changed:
        var = start[n]
        if n not in flags or flags[n][1] is not True or not isinstance(var, ConstantVariable) \
                or type(var.value) not in _WIDENS:
            raise LoopFallback(f"'{n}' changes type in the loop ({type(_type_of(var)).__name__} -> "
                               f"another kind) and the loop may run no trip")
        kinds[n] = type(var.value)
    return kinds


def after_node(tx, nonzero: bool | list, bounds: tuple, start: dict) -> None:
    """What :func:`runs_at_least_once` asked for, once the node is made: its guard, or the
    marks on its results in an enclosing body."""
    if isinstance(nonzero, list) and tx.output.loop_trace is not None:
        mark_zero_trip_items(tx, nonzero, {n: _type_of(start[n]) for n in nonzero})
    elif nonzero is True:
        from .graph_loop import _guard_trips
        _guard_trips(tx, bounds, {}, nonzero=True)     # len(range(...)) > 0
