"""A data-dependent ``if`` whose sides are cheap and pure, as a select: outside loop
bodies, and in the body of a graph loop being traced (``if t % 10 == 0: u = u - u.mean()``
on its counter, ``if s > best: best = s``; the translator's ``jump_if`` asks before the
loop's test chain, and the sides may meet at the jump back to the loop's ``FOR_ITER``).

``step = fx / d if d != 0 else np.inf`` or ``if mad == 0: mad = 1e-12`` on a NumPy
scalar the graph computed broke the graph at the test (the truth value of an array is
known only when the graph runs), so the rest of the function ran in a resume function.
Here both sides are traced, one after the other, from the conditional jump to where they
meet, and every value they leave different becomes ``np.where(cond, a, b)[()]`` (the
translator's ``jump_if`` asks, after the while-loop forms declined).

The untaken side runs too, so a side is taken only when running it cannot be seen
(docs/capture.md, "Data-dependent branches as selects"):

- every op it records is pure (no write, no random draw, no op that may raise, no
  run-time size) and reads or makes at most ``CHEAP`` elements of static size (an untaken
  side over a large array would cost a pass the break did not);
- an op that may warn of a floating-point error ("divide by zero encountered in log10")
  gets its operands replaced by 1 where its side is not taken (``where(cond, a, 1)``), so
  only the taken side warns (or raises under ``np.errstate``), as NumPy does; a ufunc
  that warns even at 1, and any other op that may warn but the sums of ``_SUMS``, declines;
- it changes nothing Python sees (no side effect replayed, no container, cell, object
  attribute or array tracker from before it changed, no yield), computes no run-time
  Python number that may raise (the entry computes those before the graph, whichever side
  is taken: ``_outside_try_bodies``), and neither breaks nor raises at capture;
- the values the sides leave different are NumPy scalars of one dtype (a select), Python
  numbers of one type (a Python number read from the select), a NumPy scalar and a Python
  number its dtype holds exactly (the value a select, its type a flag:
  ``TypedByFlagVariable``, as builtin ``max`` of np.float64 and Python floats), tuples of
  those, or arrays of at most one dim each side made and holds in one place (a new array
  in their place is the same to Python). An argument, which Python would hand over as the
  same object, and anything else decline.

Where it declines (or the sides do not meet: a loop, a ``break``, a return on one side
only), the attempt is rolled back and the test breaks the graph as before.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .graph_loop import _items, _State, _trackers
from .loop_snapshot import _Snapshot
from .select_joins import _Decline, back_edge, join as statement_join, meeting
from .variables.arrays import ArrayVariable, PyValueVariable
from .variables.base import ConstantVariable, VariableTracker

CHEAP = 4096          # elements an op of a side may read or make (static sizes)
MAX_SIDE_STEPS = 400  # instructions a side may run

# Instructions a side may not run: they leave the statement, loop, or change what Python
# sees in ways the snapshot does not compare.
_REFUSED = frozenset({
    "STORE_ATTR", "STORE_SUBSCR", "STORE_GLOBAL", "STORE_DEREF", "STORE_NAME", "STORE_SLICE",
    "DELETE_FAST", "DELETE_ATTR", "DELETE_SUBSCR", "DELETE_GLOBAL", "DELETE_DEREF", "DELETE_NAME",
    "IMPORT_NAME", "IMPORT_FROM", "IMPORT_STAR", "RAISE_VARARGS", "RERAISE", "YIELD_VALUE",
    "GET_ITER", "FOR_ITER", "BEFORE_WITH", "SETUP_WITH", "PUSH_EXC_INFO", "SETUP_FINALLY",
    "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "LOAD_BUILD_CLASS", "PRINT_EXPR",
    "SEND", "GET_AWAITABLE", "RETURN_GENERATOR", "MAKE_FUNCTION",
})


# reductions that may overflow but not over ones (their ops' NumPy names)
_SUMS = frozenset({"sum", "mean", "prod", "cumsum", "cumprod"})


class _ToReturn(Exception):
    """One side returned where the other reached the join: both run on to the return."""


def try_select(tx, inst, value: VariableTracker, when: bool, keep: bool = False,
               to_return: bool = False) -> bool:
    """The conditional jump ``inst`` (taken when ``value``'s truth is ``when``) as a select
    of its two sides; False: nothing changed, the test breaks as before. ``keep``: 3.11's
    ``JUMP_IF_TRUE_OR_POP`` or ``JUMP_IF_FALSE_OR_POP`` (``a or b``, ``a and b``), whose
    ``value`` is on the stack and stays there where the jump is taken. ``to_return``: each
    side runs on past the join to its return (a side returns inside the statement: ``if c:
    s = s + 1 else: if d: return s`` ...)."""
    if tx.output.loop_trace is not None:
        return False
    if not (isinstance(value, ArrayVariable) and value.scalar and not value.tensor
            and value.meta.shape == () and value.meta.dtype.kind in "biuf") \
            and not _number_test(value):
        return False
    if inst.target <= inst.index:
        return False
    if keep:
        tx.pop()
    snap = _Snapshot(tx)
    saved = _trackers(tx, snap)
    state = _State(tx, snap, saved)
    objects = [(v, dict(stored)) for v, stored in snap.objects]
    tx.__dict__["select_sides"] = tx.__dict__.get("select_sides", 0) + 1
    try:
        _select(tx, inst, value, when, snap, state, objects, saved, keep, to_return)
    except _ToReturn:
        state.roll_back()
        if keep:
            tx.push(value)
        tx.select_sides -= 1     # (the finally below runs after the retry's own)
        try:
            return try_select(tx, inst, value, when, keep, to_return=True)
        finally:
            tx.select_sides += 1
    except Exception:   # noqa: BLE001 - a decline, a break, a user error or kiln's own
        # (whatever stops the attempt: the test breaks the graph as before it, never worse)
        state.roll_back()
        if keep:
            tx.push(value)
        return False
    finally:
        tx.select_sides -= 1
    return True


def _number_test(value: VariableTracker) -> bool:
    """A bool or int a graph loop's body computes (``t % 10 == 0`` of its counter: a
    ``ScalarValueVariable``, kiln/capture/loops.py), whose truth is Python's."""
    return _loop_number(value) and type(value.example) in (bool, int, np.bool_)


def _select(tx, inst, value, when, snap, state, objects, saved, keep, to_return) -> None:
    k, t = inst.index, inst.target
    n = len(tx.decoded.instructions)
    before = state.before
    # trackers held where the sides' stacks and locals are not (containers, cells, objects)
    elsewhere = {id(v) for v in snap.cell_values() + list(tx.output.wrapped.values())
                 + [v for c, _ in snap.containers for v in _items(c)]
                 + [v for _, stored in snap.objects for v in stored.values()]} | _inside(snap)
    if not isinstance(value, ArrayVariable):
        # a Python bool or int: its np.bool_ for np.where (made before either side, which
        # may quiet an op by it; a decline's roll-back takes it out again)
        from .loops import apply_scalar
        value = apply_scalar(tx, "np.bool", [value])
        before = before | {id(value.node)}
    unbacked = len(tx.output.unbacked_sizes)
    instructions = tx.decoded.instructions
    stops = None
    try:
        back = back_edge(instructions, k, t)
        join = None if back is not None else statement_join(instructions, k, t)
    except _Decline:
        # short-circuit jumps (``or``, ``and``, chained comparisons): an inner test jumps
        # past ``t`` (or to a jump back of its own); the sides meet where every path does
        # (the jumps back to the loop's head), or each runs on to its return
        back, join = None, meeting(instructions, k, t)
        if join is None and not to_return:
            raise _ToReturn() from None
        if join is not None and not to_return:
            stops = join if isinstance(join, frozenset) else frozenset({join})
    if back is not None:
        # both sides end in the jump back to the head of the loop they are in (3.12+'s
        # ``if c: u = ...`` as a for body's last statement): they meet at that jump
        fall_end, join = back
        end = _run(tx, k + 1, fall_end, k + 1, fall_end + 1)
        join_fall = fall_end
    elif stops is not None:
        end = _run(tx, k + 1, stops, k + 1, max(stops) + 1)
    else:
        # the side that falls through (to its return, where the other side returns)
        end = _run(tx, k + 1, None, k + 1, n if to_return else t)
        join_fall = join
    fall = (list(tx.stack), dict(tx.locals), tx.result)
    fall_nodes = _new_nodes(tx, before)
    _unchanged(tx, snap, objects, saved)
    snap.restore(tx)
    if keep:
        tx.push(value)
    if end == "return":
        # (returned before the join, or past it through an inner select whose sides both
        # return: 3.12+ copy a short tail such as ``return s`` into the side of an inner
        # if that jumped to it, where 3.11 jumps to one past the join)
        join = None
    if join is None:                                       # it returns: so must the other
        if fall[2] is None or _run(tx, t, None, t, n) != "return":
            raise _Decline()
    elif stops is not None:
        join = _run(tx, t, stops, t, max(stops) + 1)       # (where the jump side got)
        if end not in stops or join not in stops or fall[2] is not None:
            raise _Decline()
    elif end != join_fall or fall[2] is not None:
        raise _Decline()
    elif join != t:                                        # an else side
        if _run(tx, t, join, t, join + (back is not None)) != join:
            if tx.result is not None and back is None and not to_return:
                raise _ToReturn()
            raise _Decline()
    jumped = (list(tx.stack), dict(tx.locals), tx.result)
    _unchanged(tx, snap, objects, saved)
    if len(tx.output.unbacked_sizes) != unbacked:
        raise _Decline()
    jump_nodes = [nd for nd in _new_nodes(tx, before) if nd not in fall_nodes]
    cond = value
    # the condition's truth where each side runs: the fall side runs where it is not ``when``
    fall_true = not when
    _check_and_quiet(tx, fall_nodes, cond, fall_true)
    _check_and_quiet(tx, jump_nodes, cond, not fall_true)
    true_side, false_side = (fall, jumped) if fall_true else (jumped, fall)
    made = ({id(nd) for nd in fall_nodes}, {id(nd) for nd in jump_nodes})
    made = {True: made[0], False: made[1]} if fall_true else {True: made[1], False: made[0]}
    # (where both sides return, their stacks and locals die with the frame: only the
    # returned value holds what it holds; 3.12 gives each side of ``z = a if c else b;
    # return z`` its own return, where 3.11 shares one past the join)
    live = (lambda side: ([], {}, side[2])) if join is None else (lambda side: side)
    held = {True: _holders(live(true_side)), False: _holders(live(false_side))}

    def merge(a, b):
        return _merge(tx, cond, a, b, lambda v, side: _own_array(
            v, made[side], held[side], held[not side], elsewhere))
    if join is None:
        result = merge(true_side[2], false_side[2])
        tx.stack, tx.locals = list(snap.stack), dict(snap.locals)
        tx.result = result
        return
    if len(true_side[0]) != len(false_side[0]):
        raise _Decline()
    stack = [merge(a, b) for a, b in zip(true_side[0], false_side[0])]
    from .resume import code_facts
    facts = code_facts(tx.code)
    live = facts.live_in[join] if join < len(facts.live_in) else set()
    merged = {}
    for name in dict.fromkeys([*true_side[1], *false_side[1]]):   # a fixed order
        a, b = true_side[1].get(name), false_side[1].get(name)
        if name not in live and a is not b:
            continue        # (nothing reads it again)
        if a is None or b is None:
            raise _Decline()
        merged[name] = merge(a, b)
    tx.stack, tx.locals, tx.result, tx.ip = stack, merged, None, join


def _run(tx, start: int, stop: int | frozenset | None, lo: int, hi: int) -> Any:
    """Step from ``start`` until ``stop`` (any of them: a frozenset; with None, until
    leaving [lo, hi)):
    where it got, or "return"."""
    instructions = tx.decoded.instructions
    stops = stop if isinstance(stop, frozenset) else (stop,)
    tx.ip = start
    for _ in range(MAX_SIDE_STEPS):
        if tx.result is not None:
            return "return"
        if tx.ip in stops or (stop is None and not lo <= tx.ip < hi):
            return tx.ip
        if not lo <= tx.ip < hi:
            raise _Decline()
        inst = instructions[tx.ip]
        if inst.opname in _REFUSED or inst.target is not None and inst.target <= inst.index:
            raise _Decline()
        tx.step(inst)
    raise _Decline()


def _new_nodes(tx, before: set) -> list:
    return [nd for nd in tx.output.graph.nodes if id(nd) not in before and nd.kind == "call"]


def _unchanged(tx, snap: _Snapshot, objects: list, saved: dict) -> None:
    """Nothing Python sees changed on the side just run: no side effect, container, cell,
    yield or object attribute, and no array tracker from before it (``out += b`` on an
    array made in the function gives its tracker a new node)."""
    if snap.changed_outside(tx) or len(tx.yielded) != snap.yielded:
        raise _Decline()
    for v, attrs in saved.values():
        if any(not _same_attr(getattr(v, a), value) for a, value in attrs.items()):
            raise _Decline()
    for v, stored in objects:
        now = v.__dict__.get("stored", {})
        if now.keys() != stored.keys() or any(now[key] is not stored[key] for key in now):
            raise _Decline()


def _same_attr(now: Any, was: Any) -> bool:
    """A tracker attribute unchanged: the same object (a node), or a tuple of the same
    objects (``dims``, made again by a read of ``x.size``)."""
    if isinstance(now, tuple) and isinstance(was, tuple):
        return len(now) == len(was) and all(a is b for a, b in zip(now, was))
    return now is was


def _elements(meta: Any) -> int | None:
    shape = getattr(meta, "shape", None)
    if shape is None:
        return 0
    count = 1
    for d in shape:
        if type(d) is not int:
            return None
        count *= d
    return count


def _nodes(args: tuple) -> list:
    from ..ir.graph import iter_nodes
    return list(iter_nodes(args))


def _cheap(node: Any) -> bool:
    for v in [node, *_nodes(node.args)]:
        size = _elements(v.meta.get("val"))
        if size is None or size > CHEAP:
            return False
    return True


def _check_and_quiet(tx, nodes: list, cond: ArrayVariable, side_true: bool) -> None:
    """Every op of a side is pure and cheap; one that may warn gets the operand 1 where
    the side is not taken (``where(cond, a, 1)``, or ``where(cond, 1, a)`` for the side
    taken where ``cond`` is false)."""
    from ..ir.passes import has_side_effects, may_warn_call
    from ..ops.fp_errors import BY_UFUNC_PARAM, numpy_name, reads_error_mode
    from ..ops.pointwise import where
    graph = tx.output.graph
    for node in nodes:
        op = node.target
        if op.name == "scalar_fn":
            # Python's (or NumPy scalar) math in a graph loop's body: none that may raise or warn
            from .loop_predicates import may_raise, may_warn
            if may_raise(node.kwargs["fn"], node.args[0]) or may_warn(node.kwargs["fn"], node.args[0]):
                raise _Decline()
            continue
        if has_side_effects(node) or _may_raise(node) or op.state is not None \
                or node.meta.get("sizes_meet") or not _cheap(node) \
                or reads_error_mode(op) and op.name not in BY_UFUNC_PARAM:
            # (NumPy scalar math reads the error mode as it runs: its warnings and raises
            # are its operands', which the where below makes harmless off the side)
            raise _Decline()
        if not may_warn_call(node):
            continue
        name = numpy_name(op.name, node.kwargs, node.meta.get("ufunc"))
        ufunc = getattr(np, name, None) if name else None
        if name in _SUMS and all(_elements(a.meta.get("val")) for a in _nodes(node.args)):
            ufunc = None    # (sums of at most CHEAP ones, none empty: nothing to warn of)
        elif not isinstance(ufunc, np.ufunc) or set(node.kwargs) - {"ufunc"}:
            raise _Decline()
        ones, args = [], []
        for a in node.args:
            if hasattr(a, "kind") and a.kind in ("call", "placeholder", "constant"):
                dtype = _dtype(a)
                one = dtype.type(1)
                ones.append(one)
                pick = (cond.node, a, _python_one(dtype)) if side_true else \
                    (cond.node, _python_one(dtype), a)
                args.append(graph.call(where, pick, before=node))
            else:
                ones.append(a)
                args.append(a)
        try:
            with np.errstate(all="raise"):
                if ufunc is not None:
                    ufunc(*ones)
        except (FloatingPointError, TypeError, ValueError):
            raise _Decline() from None
        node.args = tuple(args)


def _may_raise(node: Any) -> bool:
    """``op.raises``, but NumPy scalar math of a float and a small Python int constant
    (``20 * np.log10(r)``) cannot raise: the int converts to the float exactly (the op's
    own rule, ``ufunc_may_raise``, counts any Python int as a possible OverflowError)."""
    op = node.target
    if op.name == "scalar_binary" and len(node.args) == 2:
        kinds = [_dtype(a).kind if hasattr(a, "meta") and "val" in a.meta else None
                 for a in node.args]
        ints = [a for a in node.args if type(a) is int]
        if ints and all(abs(v) < 2 ** 53 for v in ints) and any(k in ("f", "c") for k in kinds) \
                and all(type(a) in (int, float, bool) or hasattr(a, "meta") for a in node.args):
            return False
    return op.raises(node.args, node.kwargs)


def _dtype(node: Any) -> np.dtype:
    from ..ops.meta import dtype_token
    return np.dtype(dtype_token(node.meta["val"]))


def _python_one(dtype: np.dtype) -> Any:
    """1 as the Python number NumPy keeps ``dtype`` for (NEP 50: a weak scalar)."""
    return {"b": True, "c": 1.0 + 0j, "f": 1.0}.get(dtype.kind, 1)


def _holders(side: tuple) -> dict:
    """How many places (stack slots, locals, the returned value) hold each tracker."""
    from .variables.containers import TupleVariable
    count: dict = {}
    todo = [*side[0], *side[1].values(), side[2]]
    while todo:
        v = todo.pop()
        count[id(v)] = count.get(id(v), 0) + 1
        if isinstance(v, TupleVariable) and count[id(v)] == 1:
            todo.extend(v.item_list)
    return count


def _inside(snap: _Snapshot) -> set:
    """The ids of what the stack's and the locals' other trackers hold in their attributes
    (an iterator over an array, a bound method ``m = y.sum``, an array's base): a select
    standing for such an array would part it from them."""
    found: set = set()
    for v in list(snap.stack) + list(snap.locals.values()):
        if isinstance(v, (ArrayVariable, ConstantVariable)):
            if isinstance(v, ArrayVariable) and v.base is not None:
                found.add(id(v.base))
            continue
        for item in getattr(v, "__dict__", {}).values():
            for x in (item if isinstance(item, (list, tuple)) else (item,)):
                found.add(id(x))
    return found


def _own_array(v: Any, made: set, held: dict, other: dict, elsewhere: set) -> bool:
    """Is ``v`` an array of at most one dim its side made, which nothing else can reach (not
    a view, no views, held in one place), so that a new array in its place is the same to
    Python? One the graph made before the branch counts too where only this side's one
    place holds it (not the other side, no container, cell or object: ``u = step(u); if t
    % 10 == 0: u = u - u.mean()``, whose untaken side keeps ``step(u)``)."""
    return isinstance(v, ArrayVariable) and not v.tensor and not v.scalar and v.fresh \
        and v.base is None and not v.has_views and not v.read_only and held.get(id(v)) == 1 \
        and (id(v.node) in made or v.node.kind == "call" and not other.get(id(v))
             and id(v) not in elsewhere) \
        and len(v.meta.shape) <= 1 and all(d is None for d in v.dims)


def _merge(tx, cond: ArrayVariable, a: VariableTracker, b: VariableTracker,
           own: Any = None) -> VariableTracker:
    """The value of ``a if cond else b``; ``own(v, side)``: is ``v`` an array its side
    made that a select may stand for (:func:`_own_array`)."""
    from .loop_branches import _argument   # an argument one side read: the same tracker
    from .variables.containers import TupleVariable
    a, b = _argument(tx, a), _argument(tx, b)
    if a is b:
        return a
    if type(a) is TupleVariable and type(b) is TupleVariable and len(a.item_list) == len(b.item_list):
        return TupleVariable([_merge(tx, cond, x, y, own) for x, y in zip(a.item_list, b.item_list)])
    if own is not None and own(a, True) and own(b, False) and a.meta.dtype == b.meta.dtype \
            and a.meta.shape == b.meta.shape:
        return tx.call_op(np.where, [cond, a, b], {}, "if")
    if isinstance(a, ConstantVariable) and isinstance(b, ConstantVariable) \
            and type(a.value) is type(b.value) and _same(a.value, b.value):
        return a
    if _numpy_scalar(a, b) and _numpy_scalar(b, a):    # NumPy scalars of one dtype
        return _where(tx, cond, a, b)
    if isinstance(a, PyValueVariable) or isinstance(b, PyValueVariable):
        return _python_number(tx, cond, a, b)
    if _loop_number(a) or _loop_number(b):
        return _loop_numbers(tx, cond, a, b)
    if isinstance(a, ConstantVariable) and isinstance(b, ConstantVariable):
        va, vb = a.value, b.value
        if type(va) is type(vb) and type(va) in (bool, int, float) and _fits(va, vb):
            return PyValueVariable(_where(tx, cond, a, b), type(va))
        raise _Decline()
    from .loop_types import TypedByFlagVariable
    for x, y, x_true in ((a, b, True), (b, a, False)):
        if isinstance(x, ArrayVariable) and _numpy_scalar(x) and isinstance(y, ConstantVariable) \
                and _holds(x.meta.dtype, y.value):
            value = _where(tx, cond, x, y) if x_true else _where(tx, cond, y, x)
            flag = cond if x_true else tx.call_op(np.logical_not, [cond], {}, "not")
            kind = type(y.value)
            return TypedByFlagVariable(tx, value, flag, kind,
                                       f"a {kind.__name__} or the NumPy scalar a data-dependent "
                                       f"branch chose (which, the data decides)")
    raise _Decline()


def _python_number(tx, cond, a, b) -> VariableTracker:
    """A Python number read from the graph (``PyValueVariable``) on one side at least, and
    on the other one of the same type and dtype, or a Python constant of its type that its
    dtype holds exactly (``idx = i`` in an unrolled loop after ``idx = int(...)``)."""
    kinds = {type(v.value) if isinstance(v, ConstantVariable) else getattr(v, "kind", None)
             for v in (a, b)}
    dtypes = {v.array.meta.dtype for v in (a, b) if isinstance(v, PyValueVariable)}
    if len(kinds) != 1 or len(dtypes) != 1 or not all(
            isinstance(v, PyValueVariable) or isinstance(v, ConstantVariable)
            and _holds(next(iter(dtypes)), v.value) for v in (a, b)):
        raise _Decline()
    pick = [v.array if isinstance(v, PyValueVariable) else v for v in (a, b)]
    return PyValueVariable(_where(tx, cond, *pick), kinds.pop())


def _loop_number(v: Any) -> bool:
    from .loops import ScalarValueVariable
    return isinstance(v, ScalarValueVariable)


def _loop_numbers(tx, cond, a, b) -> VariableTracker:
    """Numbers a graph loop's body computes (``ScalarValueVariable``: a carried ``t +=
    dt``, its counter) on one side at least, and on the other one of the same type or a
    constant of it (not NaN: see ``_fits``): Python's ``a if cond else b`` in the graph
    (``scalar_fn`` select), which keeps the Python (or NumPy) type."""
    from .loops import apply_scalar, stand_in

    def kind(v: Any) -> Any:
        if _loop_number(v):
            return type(v.example)
        if isinstance(v, ConstantVariable) and stand_in(v.value) is not None and v.value == v.value:
            return type(v.value)
        return None
    if kind(a) is None or kind(a) is not kind(b):
        raise _Decline()
    return apply_scalar(tx, "select", [cond, a, b])


def _where(tx, cond, a, b) -> VariableTracker:
    picked = tx.call_op(np.where, [cond, a, b], {}, "if")
    return picked.getitem(tx, ConstantVariable(()))


def _numpy_scalar(v: Any, other: Any = None) -> bool:
    """Is ``v`` a NumPy scalar (with ``other``: of ``other``'s dtype), a computed one or a
    constant?"""
    if isinstance(v, ArrayVariable):
        dtype = v.meta.dtype if v.scalar and not v.tensor and v.meta.shape == () else None
    else:
        value = getattr(v, "value", None) if isinstance(v, ConstantVariable) else None
        dtype = value.dtype if isinstance(value, np.generic) else None
    if dtype is None or other is None:
        return dtype is not None
    return _numpy_scalar(other) and dtype == (
        other.meta.dtype if isinstance(other, ArrayVariable) else other.value.dtype)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float):
        return a == b and np.signbit(a) == np.signbit(b) or a != a and b != b
    try:
        return bool(a == b)
    except Exception:   # noqa: BLE001 - an object whose == raises: not the same
        return False


def _fits(a: Any, b: Any) -> bool:
    """Do Python numbers ``a`` and ``b`` of one type both hold exactly in the dtype
    np.where makes of them (int64 for ints, float64 for floats, bool)?"""
    if type(a) is int:
        return all(-2 ** 63 <= v < 2 ** 63 for v in (a, b))
    # (a NaN object keeps its identity, which ``v in [np.nan]`` tries first: a NaN
    # read from the select would be another object)
    return a == a and b == b


def _holds(dtype: np.dtype, value: Any) -> bool:
    """Is the Python number ``value`` exactly a value of ``dtype`` (so np.where of it and a
    scalar of that dtype keeps both, and the Python number comes back by ``type(value)``)?"""
    kinds = {bool: "b", int: "iu", float: "f"}
    if type(value) not in kinds or dtype.kind not in kinds[type(value)]:
        return False
    if type(value) is int and not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
        return False
    if type(value) is float:
        if value != value:
            return False
        with np.errstate(all="ignore"):
            cast = dtype.type(value)
        return float(cast) == value and np.signbit(cast) == np.signbit(value)
    return True
