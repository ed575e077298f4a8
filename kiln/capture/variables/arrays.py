"""Arrays (a graph node plus fake metadata) and runtime scalars (a Python expression).

:class:`ArrayVariable` never holds data: it has the graph node that computes the array,
its shape and dtype, and for each dimension either ``None`` (static, guarded) or the
:class:`SymScalarVariable` giving its runtime size (a dynamic dimension).

:class:`SymScalarVariable` is a Python or NumPy scalar known only at run time: an argument
such as a learning rate, or Python arithmetic on one (``lr * 0.5``). It is an expression
over sources that the generated prologue evaluates on each call, exactly as Python would,
so NEP 50 weak typing is kept; it becomes a graph input where it meets arrays. Only where
it decides control flow (a guard on the decision) or becomes a parameter, shape or index
(a guard on its value) is it specialized.
"""
from __future__ import annotations

import operator
import weakref
from typing import Any

import numpy as np

from ...ops import find_spelling, method_key
from ...ops.meta import TensorMeta
from ...ops.value_warnings import setting_warns
from ..breaks import HINTS
from ..bytecode_facts import OPERATOR_SYMBOLS
from ..sources import AttrSource, GetItemSource, Source, moves_every_step
from ..python_numbers import complex_with_float, float_tree, is_python_complex
from .base import ConstantVariable, VariableTracker


class ArrayVariable(VariableTracker):
    def __init__(self, node: Any, dims: tuple | None = None, source: Source | None = None,
                 fresh: bool = True, base: "ArrayVariable | None" = None,
                 tensor: bool = False, array_type: type = np.ndarray) -> None:
        self.node = node
        self.dims = dims if dims is not None else (None,) * len(node.val.shape)
        self.source = source
        self.fresh = fresh          # made by the graph (not an argument, not a view of one)
        self.base = base            # the array this one is a view of
        self.has_views = False
        self.view_refs: list = []   # weak references to the trackers of those views
        self.read_only = False      # maybe a read-only view at run time (of broadcast_to...)
        self.tensor = tensor        # a kiln.Tensor at run time (an op on one returns one)
        self.scalar = False         # a NumPy scalar at run time (np.float64), not a 0-d array
        # its type at run time: np.ndarray, or a device array's (cupy.ndarray: an op on
        # one returns one; kiln/array_kinds.py)
        self.array_type = array_type

    @property
    def meta(self) -> TensorMeta:
        return self.node.val

    def describe(self) -> str:
        where = self.source.display() if self.source is not None else self.node.name
        return f"array {where} ({self.meta.dtype}{list(self.meta.shape)})"

    def python_type(self) -> type:
        if self.tensor:
            from ...tensor import Tensor
            return Tensor
        if self.scalar:
            return self.meta.dtype.type
        return self.array_type

    # -- properties, statically known and guarded --------------------------------------
    def dim(self, tx, i: int) -> VariableTracker:
        sym = self.dims[i]
        if isinstance(sym, UnbackedSize):
            sym.as_constant(tx)   # a size Python code reads: the graph breaks here
        return sym if sym is not None else ConstantVariable(self.meta.shape[i])

    def getattr(self, tx, name: str) -> VariableTracker:
        from .containers import TupleVariable
        if name == "shape":
            return TupleVariable([self.dim(tx, i) for i in range(len(self.meta.shape))])
        if name == "ndim":
            return ConstantVariable(len(self.meta.shape))
        if name == "dtype":
            return ConstantVariable(self.meta.dtype)
        if name == "size":
            return self.size(tx)
        if name == "itemsize":
            return ConstantVariable(self.meta.dtype.itemsize)
        if name == "nbytes":
            return self.size(tx).binary(tx, operator.mul, ConstantVariable(self.meta.dtype.itemsize), False)
        if name == "base":
            from ..array_base import array_base
            return array_base(tx, self)
        if name == "flat" and not self.tensor and self.array_type is np.ndarray:
            from .numpy_objects import FlatIterVariable
            return FlatIterVariable(tx, self)
        if name in PROPERTY_OPS:
            return tx.call_op(method_key(name), [self], {}, f"ndarray.{name}")
        if name == "item" and self.meta.shape == () and not self.tensor:
            from .functions import ArrayMethodVariable
            return ArrayMethodVariable(self, name)    # a Python number read (loop_lists.python_value)
        if name in ("item", "tolist", "tobytes", "__array__", "__float__", "__int__"):
            tx.unsupported("data_dependent", f"ndarray.{name}() reads array data into Python",
                           HINTS["data_dependent"])
        if find_spelling(method_key(name)) is None:
            if self.tensor and not hasattr(np.ndarray, name):   # t.detach(), t.backward()
                tx.unsupported("unsupported_call", f"kiln.Tensor.{name} is a method of the eager "
                               f"tape's Tensor, not a NumPy op", "it runs as Python: the graph "
                               "breaks here and resumes after it")
            tx.unsupported("unsupported_call", f"ndarray.{name} has no kiln op", HINTS["numpy"])
        from .functions import ArrayMethodVariable
        return ArrayMethodVariable(self, name)

    def size(self, tx) -> VariableTracker:
        """``x.size``: the product of the dims, a run-time int where a dynamic one is among
        them (``x.sum() / x.size`` builds once for every size, as ``/ len(x)`` does)."""
        live = [d for d in self.dims if d is not None and not d.pinned]
        if self.meta.size == 0 or not live or any(isinstance(d, UnbackedSize) for d in live):
            self.specialize_dims(tx)
            return ConstantVariable(int(self.meta.size))
        total, static = None, 1
        for d, n in zip(self.dims, self.meta.shape):
            if d is None or d.pinned:
                static *= n
            else:
                total = d if total is None else total.binary(tx, operator.mul, d, False)
        return total if static == 1 else total.binary(tx, operator.mul, ConstantVariable(static), False)

    def specialize_dims(self, tx) -> None:
        for i, sym in enumerate(self.dims):
            if sym is not None:
                sym.as_constant(tx)
        self.dims = (None,) * len(self.dims)

    # -- behaviour --------------------------------------------------------------------
    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        if reverse and self.scalar and self.meta.dtype == np.float64 and is_python_complex(other):
            result = complex_with_float(tx, op, other, self)   # (np.float64 is a Python float)
            if result is not None:
                return result
        args = [other, self] if reverse else [self, other]
        return tx.call_op(op, args, {}, f"operator {OPERATOR_SYMBOLS.get(op, op.__name__)}")

    def unary(self, tx, op: Any) -> VariableTracker:
        if op is operator.not_:
            self.truth(tx)
        return tx.call_op(op, [self], {}, f"operator.{op.__name__}")

    def truth(self, tx) -> bool:
        tx.unsupported("data_dependent", f"the truth value of {self.describe()} depends on its data",
                       HINTS["data_dependent"])

    def items(self, tx) -> list[VariableTracker]:
        if not self.meta.shape:
            tx.user_error(TypeError("iteration over a 0-d array"))
        if self.dims[0] is not None:
            self.dims[0].as_constant(tx)
        return [self.getitem(tx, ConstantVariable(i)) for i in range(self.meta.shape[0])]

    def length(self, tx) -> VariableTracker:
        if not self.meta.shape:
            tx.user_error(TypeError("len() of unsized object"))
        return self.dim(tx, 0)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        from ..opcall import index_lists_stacked
        from ..python_numbers import data_int_index
        index = data_int_index(self, index)
        return tx.call_op(method_key("__getitem__"), [self, index_lists_stacked(tx, index)], {},
                          "indexing")

    def setitem(self, tx, index: VariableTracker, value: VariableTracker) -> None:
        from ..opcall import index_lists_stacked, numbers_stacked
        if self.scalar:
            tx.user_error(TypeError(f"'{self.meta.dtype.type.__name__}' object does not support "
                                    f"item assignment"))
        tx.call_op(method_key("__setitem__"), [self, index_lists_stacked(tx, index),
                                               numbers_stacked(tx, self, value)], {}, "index assignment")

    def note_view(self, view: "ArrayVariable") -> None:
        """``view`` shares this array's memory (this is its base)."""
        self.has_views = True
        self.view_refs.append(weakref.ref(view))

    def can_rewrite_in_place(self, dead_views: bool = False) -> bool:
        """An in-place update can become a new node when no one else can see the old value
        (and NumPy lets it be written: np.broadcast_to of a NumPy scalar is fresh but read-only).
        ``dead_views``: views whose trackers are gone (a temporary ``v[i - 1]`` read in an
        expression) cannot see it either (used inside kiln.grad, whose backward cannot
        follow a write into an array: ``v[i] = x[i] * y + v[i - 1]``)."""
        views = self.has_views and not (dead_views and self.view_refs and
                                         all(ref() is None for ref in self.view_refs))
        return self.fresh and self.base is None and not views and not self.read_only

    def store_attr(self, tx, name: str, value: VariableTracker) -> bool:
        """``a.name = value`` where ndarray's setter is captured; False: not here."""
        if self.scalar or setting_warns(name):   # (a.shape = ... on NumPy 2.5: deprecated)
            return False
        if name == "shape" and self.can_rewrite_in_place():
            # a = np.zeros(6); a.shape = (2, 3): an array only this frame sees takes the
            # reshaped node (NumPy reshapes it in place, without copying). NumPy refuses
            # where its memory is not in C order (``(x.T * 2).shape = (-1,)``, a copy of a
            # broadcast array): kiln knows that of a 1-d array, or where only unit axes come
            # or go; otherwise Python decides.
            reshaped = tx.call_op(np.reshape, [self, value], {}, "ndarray.shape =")
            if len(self.meta.shape) > 1 and [d for d in self.meta.shape if d != 1] != \
                    [d for d in reshaped.meta.shape if d != 1]:
                return False
            self.node, self.dims = reshaped.node, reshaped.dims
            return True
        if name == "real" or name == "imag" and self.meta.dtype.kind == "c":
            # z.real = v: ndarray's setter copies v into the view, as z.real[...] = v does
            # (a real array's .imag is a read-only copy NumPy refuses to set: left to Python)
            self.getattr(tx, name).setitem(tx, ConstantVariable(Ellipsis), value)
            return True
        return False


class PyValueVariable(VariableTracker):
    """A Python bool or int NumPy reads from array data (``np.allclose(a, b)``,
    ``np.count_nonzero(x)``): the graph computes it as the 0-d array ``array``, converted
    with ``kind`` where it leaves the graph (returned, stored, handed to Python at a
    break). Any other use (a branch on it, arithmetic) breaks the graph there, so Python
    sees the value NumPy gives."""

    def __init__(self, array: ArrayVariable, kind: type) -> None:
        self.array = array
        self.kind = kind

    def describe(self) -> str:
        return f"Python {self.kind.__name__} read from {self.array.describe()}"

    def python_type(self) -> type:
        return self.kind

    def truth(self, tx) -> bool:
        tx.unsupported("data_dependent", f"the truth value of {self.describe()} depends on "
                       f"the data", HINTS["data_dependent"])

    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        """``s + np.random.random()`` on Python floats: +, - and * of doubles are the same
        IEEE operations in Python and in a float64 kernel, so the sum is computed in the
        graph (as Python computes it: capture/python_numbers.py) and stays a Python float
        read from it."""
        from ..python_numbers import python_value_binary
        return python_value_binary(tx, self, op, other, reverse)


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
        if type(self.example) is int and name in _INT_METHODS:
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
        return ConstantVariable(self.as_constant(tx)).call_method(tx, name, args, kwargs)


# A Python int's methods that take nothing, never raise and give an int
_INT_METHODS = frozenset(("bit_count", "bit_length"))

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


# ndarray properties that are ops: read, they are the op's result (not a method to call)
PROPERTY_OPS = ("T", "mT", "real", "imag")


class MaskedSelectionVariable(VariableTracker):
    """``x[mask]`` (a mask of x's shape, or of its leading dims) not taken yet: its length
    depends on the data.

    While only elementwise ops use it, they run on the whole of ``full`` and stay masked
    (``np.sqrt(x[m]) * 2`` is ``(np.sqrt(x) * 2)[m]``); writing it back through the same
    mask (``y[m] = f(x[m])``) is ``np.copyto(y, f(x), where=m)``: no data-dependent size
    at all. Any other use takes the selection for real (:meth:`take`)."""

    def __init__(self, full: ArrayVariable, mask: ArrayVariable,
                 where: ArrayVariable | None = None) -> None:
        self.full = full
        self.mask = mask   # over full's leading dims (all of them, or the rows of a row mask)
        # the mask as a ``where=`` over the whole of full: a row mask with a 1 for each
        # trailing dim (``m[:, None]`` for a 2-D full), so that it broadcasts by rows
        self.where = mask if where is None else where
        self.taken: VariableTracker | None = None

    @property
    def rows(self) -> bool:
        """A mask over the leading dims only: the selection keeps the trailing ones."""
        return len(self.mask.meta.shape) < len(self.full.meta.shape)

    def describe(self) -> str:
        return "a boolean-mask selection"

    def python_type(self) -> type:
        return np.ndarray

    def same_mask(self, other: "MaskedSelectionVariable") -> bool:
        return same_value(other.mask.node, self.mask.node)

    # operators go through call_op, as an array's do (which keeps the selection masked)
    scalar = False   # (never a NumPy scalar: ArrayVariable.binary asks)
    binary = ArrayVariable.binary
    unary = ArrayVariable.unary

    def getattr(self, tx, name: str) -> VariableTracker:
        if self.taken is not None:
            return self.taken.getattr(tx, name)
        if name == "dtype":
            return ConstantVariable(self.full.meta.dtype)
        if name == "ndim":
            return ConstantVariable(1 + len(self.full.meta.shape) - len(self.mask.meta.shape))
        if name in PROPERTY_OPS:   # (not a method: ``Vm.T @ Vm`` of ``Vm = V[m]`` broke the graph)
            return tx.call_op(method_key(name), [self], {}, f"ndarray.{name}")
        if find_spelling(method_key(name)) is not None:
            from .functions import ArrayMethodVariable
            return ArrayMethodVariable(self, name)   # x[m].sum(): decided when called
        return self.take(tx, f"ndarray.{name}").getattr(tx, name)

    def truth(self, tx) -> bool:
        return self.take(tx, "its truth value").truth(tx)

    def length(self, tx) -> VariableTracker:
        return self.take(tx, "len()").length(tx)

    def items(self, tx) -> list[VariableTracker]:
        return self.take(tx, "iteration").items(tx)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        return self.take(tx, "indexing").getitem(tx, index)

    def setitem(self, tx, index: VariableTracker, value: VariableTracker) -> None:
        # (the selection is a copy: writing it leaves the array it came from alone)
        self.take(tx, "item assignment").setitem(tx, index, value)

    def take(self, tx, use: str) -> VariableTracker:
        """The selection itself, for a use that needs it (``use``): ``getitem_mask`` in the
        graph, with its length an unbacked size (or a graph break, if that cannot be)."""
        if self.taken is None:
            from ..selections import take_selection
            self.taken = take_selection(tx, self, f"{use} of x[mask]")
        return self.taken
