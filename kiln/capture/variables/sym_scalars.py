"""Run-time scalars: :class:`SymScalarVariable`, a Python or NumPy scalar known only at run
time (an argument such as a learning rate, or Python arithmetic on one: ``lr * 0.5``). It
is an expression over sources that the generated prologue evaluates on each call, exactly
as Python would, so NEP 50 weak typing is kept; it becomes a graph input where it meets
arrays. Only where it decides control flow (a guard on the decision) or becomes a
parameter, shape or index (a guard on its value) is it specialized. :class:`UnbackedSize`
is a size only the data decides (``x[mask]``'s length).
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..breaks import HINTS
from ..bytecode_facts import OPERATOR_SYMBOLS
from ..sources import AttrSource, GetItemSource, Source, moves_every_step
from ..python_numbers import float_tree
from .base import ConstantVariable, VariableTracker

# Longest expression a run-time Python number may grow to before capture gives up on it.
MAX_SCALAR_CODE = 2000
# ... and its nesting: Python's parser takes at most 200 nested parentheses, and guards
# and entries wrap the code in a few more (``t = t + dt`` unrolled 200 times: 200 deep)
MAX_SCALAR_NESTING = 190


def _is_size(source: Source | None) -> bool:
    """``x.shape[i]``."""
    return (isinstance(source, GetItemSource) and isinstance(source.base, AttrSource)
            and source.base.attr == "shape")


def _nesting(code: str) -> int:
    """The deepest parenthesis nesting of ``code``."""
    depth = deepest = 0
    for ch in code:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    return deepest


class SymScalarVariable(VariableTracker):
    """A scalar known at run time: ``code`` evaluates it in the generated prologue."""

    def __init__(self, code: str, text: str, example: Any, leaves: tuple,
                 source: Source | None = None, tx: Any = None) -> None:
        if tx is not None and (len(code) > MAX_SCALAR_CODE or _nesting(code) > MAX_SCALAR_NESTING):
            # Python-number arithmetic in a loop (bisection): the expression, re-evaluated
            # on every call and spelled out in every guard, doubles with each step.
            tx.unsupported("scalar_loop", f"arithmetic on run-time Python numbers grew past "
                           f"{MAX_SCALAR_CODE} characters or {MAX_SCALAR_NESTING} nested "
                           f"parentheses (a loop over Python numbers): the function runs as Python")
        self.code = code
        self.text = text
        self.example = example
        self.leaves = leaves      # the sources it is computed from
        self.source = source      # set when the value is itself a source (an argument)
        self.pinned = False       # a dynamic size that got specialized
        # its value tells its leaf's (``n``, ``n + 1``, ``2 * n``, ``-n`` of one run-time
        # int): as_constant pins the leaf, which says the same; else it guards the value
        self.one_to_one = source is not None
        # ``(python op name, operands)`` when it is Python-float ``+ - *`` or unary ``-``
        # of other run-time numbers and constants: a graph may compute it instead of the
        # entry (capture/python_numbers.py)
        self.tree: tuple | None = None

    def describe(self) -> str:
        return f"runtime {type(self.example).__name__} {self.text}"

    def python_type(self) -> type:
        return type(self.example)

    def is_shape(self) -> bool:
        return _is_size(self.source)

    def as_constant(self, tx) -> Any:
        """Specialize: guard the value and use it as a constant from here on."""
        if any(moves_every_step(leaf) for leaf in self.leaves):
            # (``doses.get(step // per_day)`` in a loop that goes on in a resume function)
            tx.unsupported("unsupported_value", f"{self.describe()}, computed from the loop variable "
                           f"of a loop that goes on from an earlier graph, where its value must be "
                           f"known (it changes at every step)")
        if self.is_shape():
            tx.guards.specialize_dim(self.source.base.base, self.source.index, self.example)
            self.pinned = True
        elif self.source is not None:
            tx.guards.add_equals(self.source, self.example)
        elif self._decided_by_value(tx):
            # ``(sinh, cosh)[n % 2]`` (numdifftools' derivative_sinh): the value is guarded,
            # ``(n % 2) == 1``, not n (one entry per n before); n stays a run-time int.
            # (Its type too: ``3.0 % 2 == 1``, where a leaf's type went unguarded.)
            tx.guards.add_truth(f"_kiln_type({self.code}) is int and ({self.code}) == {self.example!r}",
                                f"{self.text} == {self.example!r}", True, self.leaves, seen=self.code)
            self._now_constant(tx, leaves_too=False)
            return self.example
        else:
            for leaf in self.leaves:
                if _is_size(leaf):
                    tx.guards.specialize_dim(leaf.base.base, leaf.index,
                                             tx.output.leaf_value(leaf))
                else:
                    tx.guards.add_equals(leaf, tx.output.leaf_value(leaf))
        self._now_constant(tx)
        return self.example

    def _decided_by_value(self, tx) -> bool:
        """An int computed from run-time ints (no size among them) that does not tell
        them apart (``n % 2``, ``a + b``, ``n // 4``): its value is what to guard."""
        return (type(self.example) is int and not self.one_to_one and bool(self.leaves)
                and not any(_is_size(leaf) or type(tx.output.leaf_value(leaf)) is not int
                            for leaf in self.leaves))

    def _now_constant(self, tx, leaves_too: bool = True) -> None:
        """Guarded: the frame's locals holding it, or an argument it was computed from
        (``leaves_too``: those were guarded), hold the constant from here on, so later
        slices and sizes are static (correlation's ``range(M - 1)`` unrolled, then
        ``data[:, i + 1:M]`` 63 times: each size and offset was computed in the entry,
        0.65x NumPy). Python ints only: a NumPy scalar argument stays the run-time value
        its methods and attributes need."""
        from .base import ConstantVariable
        leaves = {leaf.display(): leaf for leaf in self.leaves if self.source is None and leaves_too}
        for name, v in list(getattr(tx, "locals", {}).items()):
            if not isinstance(v, SymScalarVariable) or type(v.example) is not int:
                continue
            if v is self:
                tx.locals[name] = ConstantVariable(self.example)
            elif v.source is not None and not v.is_shape() and v.source.display() in leaves:
                tx.locals[name] = ConstantVariable(tx.output.leaf_value(leaves[v.source.display()]))

    def truth(self, tx) -> bool:
        value = bool(self.example)
        tx.guards.add_truth(self.code, self.text, value, self.leaves)
        return value

    def _combine(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        if isinstance(other, SymScalarVariable):
            ocode, otext, oval, oleaves = other.code, other.text, other.example, other.leaves
        elif other.is_constant() and isinstance(other.value, (int, float, bool, np.generic)):
            ocode = tx.output.literal(other.value)
            otext, oval, oleaves = repr(other.value), other.value, ()
        else:
            return NotImplemented
        sym = OPERATOR_SYMBOLS.get(op)
        if sym is None:
            return NotImplemented
        if op not in _NEVER_RAISE:
            _outside_try_bodies(tx, f"{sym} of run-time numbers")
        a, b = ((ocode, otext, oval), (self.code, self.text, self.example)) if reverse else \
            ((self.code, self.text, self.example), (ocode, otext, oval))
        value = tx.fold(op, a[2], b[2])
        result = SymScalarVariable(f"({a[0]} {sym} {b[0]})", f"({a[1]} {sym} {b[1]})", value,
                                   tuple(dict.fromkeys(self.leaves + oleaves)), tx=tx)
        result.one_to_one = self.one_to_one and not isinstance(other, SymScalarVariable) and (
            op in _SHIFTS or op in _SCALINGS and type(oval) is int and oval != 0)
        mine, theirs = self, other if isinstance(other, SymScalarVariable) else oval
        result.tree = float_tree(op, value, (theirs, mine) if reverse else (mine, theirs))
        return result

    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        return self._combine(tx, op, other, reverse)

    def unary(self, tx, op: Any) -> VariableTracker:
        if op is operator.not_:
            return ConstantVariable(not self.truth(tx))
        sym = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}[op]
        value = tx.fold(op, self.example)
        result = SymScalarVariable(f"({sym}{self.code})", f"({sym}{self.text})", value,
                                   self.leaves, tx=tx)
        result.one_to_one = self.one_to_one
        result.tree = float_tree(op, value, (self,))
        return result

    def apply(self, tx, fn_code: str, fn_text: str, fn: Any, others: list,
              at: int = 0) -> "SymScalarVariable":
        """``fn(self, *others)`` evaluated at run time (int(), float(), math.sqrt(), ...);
        ``at``: self's place among the arguments (``min(2.0, s)`` is not ``min(s, 2.0)``:
        Python keeps the first of a NaN or of equal values, 0.0 and -0.0)."""
        if fn not in (abs, min, max, bool):
            _outside_try_bodies(tx, f"{fn_text}() of a run-time number")
        codes, texts, values, leaves = [], [], [], list(self.leaves)
        for o in others[:at] + [self] + others[at:]:
            if isinstance(o, SymScalarVariable):
                codes.append(o.code)
                texts.append(o.text)
                values.append(o.example)
                leaves += o.leaves
            else:
                value = o.as_constant(tx)
                codes.append(tx.output.literal(value))
                texts.append(repr(value))
                values.append(value)
        value = tx.fold(fn, *values)
        return SymScalarVariable(f"{fn_code}({', '.join(codes)})", f"{fn_text}({', '.join(texts)})",
                                 value, tuple(dict.fromkeys(leaves)), tx=tx)

    def getattr(self, tx, name: str) -> VariableTracker:
        if isinstance(self.example, np.generic) and name in _TYPE_ATTRS:
            # ``np.finfo(s.dtype)`` in validation code: a NumPy scalar's type is guarded
            # (an argument's) or follows from its operands' types, so these need no value
            return ConstantVariable(getattr(self.example, name))
        if type(self.example) is int and name in _INT_METHODS or \
                isinstance(self.example, np.generic) and name in _NUMPY_SCALAR_METHODS:
            from .containers import ContainerMethodVariable   # (it calls call_method below)
            return ContainerMethodVariable(self, name)
        return ConstantVariable(self.as_constant(tx)).getattr(tx, name)

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if type(self.example) is int and name in _INT_METHODS and not args and not kwargs:
            # ``n.bit_length()`` of a run-time int (a bit width, a power-of-two size): an
            # int the entry computes, as ``n + 1``, not a guard on n's value (one entry
            # per n before)
            value = tx.fold(getattr(int, name), self.example)
            return SymScalarVariable(f"{self.code}.{name}()", f"{self.text}.{name}()", value,
                                     self.leaves, tx=tx)
        if isinstance(self.example, np.generic) and _numpy_method_at_run_time(tx, self, name, args, kwargs):
            # ``s.astype(float)``, ``s.item()`` of a run-time NumPy scalar (scikit-fuzzy's
            # centroid divides by ``np.fmax(area, eps).astype(float)``, handed to the
            # resume function of a break): computed by the entry as ``s * 2`` is, not a
            # guard on s's value (one entry per value before)
            method = getattr(np.generic, name)
            return self.apply(tx, tx.output.ns.ref(method, "fn"), name, method, list(args))
        return ConstantVariable(self.as_constant(tx)).call_method(tx, name, args, kwargs)


# A Python int's methods that take nothing, never raise and give an int
_INT_METHODS = frozenset(("bit_count", "bit_length"))
# A NumPy scalar's methods computed at run time where they cannot warn or raise (below)
_NUMPY_SCALAR_METHODS = frozenset(("astype", "item", "conjugate", "conj"))


def _numpy_method_at_run_time(tx, var: SymScalarVariable, name: str, args: list, kwargs: dict) -> bool:
    """Is ``var.name(*args)`` one the entry computes: ``item()``, ``conj()`` and
    ``astype(dtype)`` to a type its own casts to safely (no value overflows or warns)?"""
    if kwargs or name not in _NUMPY_SCALAR_METHODS:
        return False
    if name != "astype":
        return not args
    if len(args) != 1 or not args[0].is_constant():
        return False
    try:
        to = np.dtype(args[0].as_constant(tx))
    except TypeError:
        return False
    return to.kind in "biufc" and np.can_cast(var.example.dtype, to, "safe")

# Python-number operators that never raise (``/``, ``//``, ``%``, ``**``, shifts can)
# ``n + c``, ``c - n`` (``n * c``, ``c * n`` of an int c != 0) give each int n its own value
_SHIFTS = frozenset((operator.add, operator.sub, operator.iadd, operator.isub))
_SCALINGS = frozenset((operator.mul, operator.imul))
_NEVER_RAISE = frozenset((operator.add, operator.sub, operator.mul, operator.eq, operator.ne,
                          operator.lt, operator.le, operator.gt, operator.ge, operator.and_,
                          operator.or_, operator.xor, operator.iadd, operator.isub, operator.imul))


def _outside_try_bodies(tx, what: str) -> None:
    """Run-time scalars are computed by the entry, outside the graph, where an exception
    (``1.0 / d`` with d == 0) could not reach a try's except clause (the graph's own are
    rerun as Python: OutputGraph.catches). In a try body, such a value breaks the graph:
    the statement runs as Python."""
    t = tx
    while t is not None:
        inst = getattr(t, "inst", None)
        if inst is not None and inst.in_try:
            tx.unsupported("unsupported_value", f"{what} inside a try body can raise where "
                           f"the except clause would not see it: the statement runs as Python")
        if t.__dict__.get("select_sides"):   # a side of a select (graph_selects.py) runs
            tx.unsupported("unsupported_value", f"{what} on a side of a data-dependent "
                           f"branch would be computed on both sides")
        t = getattr(t, "parent", None)


# a NumPy scalar's attributes that its type alone decides
_TYPE_ATTRS = frozenset(("dtype", "itemsize", "nbytes", "ndim", "shape", "size", "strides"))


class UnbackedSize(SymScalarVariable):
    """A dim known only after an op ran (the length of ``x[mask]``, of ``np.unique(x)``).

    It lives only in :attr:`ArrayVariable.dims`, where ops propagate it as they do a
    dynamic input dim (kiln/capture/dims.py): elementwise ops with arrays of the same
    size, reductions, products, gathers. It has no Python value before the graph ran, so
    anything that would specialize it (read it into Python, meet a static or another
    size in broadcasting, a shape rule that cannot follow it) breaks the graph there
    instead of guarding; lowering gives it an "unbacked" size symbol
    (kiln/lowering/sizes.py). ``key`` names what it counts: ops counting the same thing
    of the same node share one."""

    def __init__(self, key: tuple, example: int, what: str) -> None:
        super().__init__(f"<unbacked {what} {id(self):x}>", what, example, ())
        self.key = key

    def describe(self) -> str:
        return f"the size of {self.text}"

    def as_constant(self, tx) -> Any:
        tx.unsupported("data_dependent", f"the size of {self.text} is known only when the "
                       f"graph runs, and is used here as a Python number (or meets another "
                       f"size), so this part runs as Python", HINTS["data_dependent"])

    def truth(self, tx) -> bool:
        self.as_constant(tx)

    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        self.as_constant(tx)

    def unary(self, tx, op: Any) -> VariableTracker:
        self.as_constant(tx)

    def apply(self, tx, fn_code: str, fn_text: str, fn: Any, others: list, at: int = 0) -> Any:
        self.as_constant(tx)


def same_value(a: Any, b: Any) -> bool:
    """Do graph nodes ``a`` and ``b`` compute the same value: the same node, or the same op on
    the same inputs (``x > 0`` written twice)?"""
    if a is b:
        return True
    return getattr(a, "kind", None) == "call" and getattr(b, "kind", None) == "call" \
        and a.target is b.target and a.kwargs == b.kwargs and len(a.args) == len(b.args) \
        and all(p is q or (not hasattr(p, "kind") and not hasattr(q, "kind")
                           and type(p) is type(q) and _plain_equal(p, q))
                for p, q in zip(a.args, b.args))


def _plain_equal(p: Any, q: Any) -> bool:
    try:
        return bool(p == q)
    except Exception:
        return False
