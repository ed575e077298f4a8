"""Python-float arithmetic on run-time numbers, computed by the graph where it feeds array work.

``yprime[0] = sigma * (y - x)`` with float arguments: capture keeps ``sigma * (y - x)`` as
a run-time scalar (``SymScalarVariable``) whose code the entry evaluates before calling
the graph, one Python operation at a time. When such a float reaches an op, this module
may instead record its ``+ - *`` and unary ``-`` as graph ops (kiln/ops/python_numbers.py)
over the numbers it is computed from, which then reach the kernel unboxed (the entry
passes the arguments themselves: fastcheck_entry.c's SimpleEntry calls the graph from C).

That is exact only where a float64 0-d value gives the op NumPy's result for the weak
Python float (NEP 50): elementwise ops whose array operands are all of dtypes with which
a Python float and a float64 give the same loop (``_SAME_AS_WEAK``: float64 arrays, not
float32 ones, whose loop would turn float32), and other ops taking the value where it
cannot move the result's shape or dtype (a fill value, an element write) whose result is
float64 or complex128 (the double converts exactly; into float32 or an int array it
stays the entry's Python float, whose conversion NumPy does its own way). Everything
else keeps the entry's code: a value the program also returns, prints or branches on
stays the Python float the entry computes (the graph's copy is only for array work).
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ..ops import Category, TensorMeta, infer_meta
from ..ops.python_numbers import BY_OPERATOR, MATH_FUNCTIONS, PYTHON_MATH, SCALAR_TYPES
from .bytecode_facts import INPLACE_TO_PLAIN
from .variables.base import VariableTracker

# Dtypes of the other operands with which a Python float (int) and a float64 (int64) 0-d
# array give the same result dtype (NEP 50: a Python scalar is weak, a 0-d array is not).
SAME_AS_WEAK = {float: ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                        "bool", "float64", "complex128"),
                int: ("int64", "bool", "float64", "complex128")}
# (a Python complex and a complex128 0-d value: the same result dtype with what a Python
# float's is, since a float64 or int array meeting either turns complex128)
SAME_AS_WEAK[complex] = SAME_AS_WEAK[float]
_EXACT_RESULTS = ("float64", "complex128")
# The dtypes into which NumPy converts a weak Python int operand of an elementwise op whose
# result has that dtype (NEP 50: ``x + 300`` of int8 ``x`` raises "Python integer 300 out
# of bounds for int8", as ``np.int8(300)`` does; float32 takes the int through a double,
# as ``np.float32(np.float64(i))`` does)
NARROWED_INTS = ("int8", "int16", "int32", "uint8", "uint16", "uint32", "uint64", "float32")


def float_tree(op: Any, value: Any, operands: tuple) -> tuple | None:
    """The ``tree`` of a run-time scalar ``op(*operands)`` of value ``value``: ``(op name,
    operands)`` when it is Python-float ``+ - *`` or negation, else None. Operands are
    run-time scalars (trackers) or constants."""
    name = BY_OPERATOR.get(INPLACE_TO_PLAIN.get(op, op))
    if name is None or type(value) is not float:
        return None
    if not all(type(_example(o)) in (float, int, bool) for o in operands):
        return None
    return name, operands


def _example(operand: Any) -> Any:
    return getattr(operand, "example", operand)


def _exact_here(op: Any, inputs: tuple, params: dict, position: int | None) -> bool:
    """Does a float64 0-d value in place of the weak Python float at ``position`` give
    NumPy's result?"""
    if op.category == Category.POINTWISE:
        return all(str(m.dtype) in SAME_AS_WEAK[float] for m in _flat_metas(inputs)
                   if isinstance(m, TensorMeta))
    if position is None or op.state is not None:   # (a draw's parameter: NumPy's own rules)
        return False
    values = tuple(TensorMeta(v.shape, v.dtype) if isinstance(v, TensorMeta) else v for v in inputs)
    strong = values[:position] + (TensorMeta((), np.float64),) + values[position + 1:]
    try:
        weak_meta, strong_meta = infer_meta(op, values, params), infer_meta(op, strong, params)
    except Exception:
        return False
    if weak_meta != strong_meta:
        return False
    written = values[op.mutates[0]] if op.mutates else weak_meta   # an element write: its array
    return isinstance(written, TensorMeta) and str(written.dtype) in _EXACT_RESULTS


def narrowed_int(op: Any, args: list, kwargs: dict, computed: list, others: list) -> str | None:
    """``np.<dtype>``, the conversion that gives elementwise ``op`` NumPy's result for the
    Python ints the graph computed among ``args`` (a graph loop's variable: ``x + i``,
    ``x * i`` of an int32 or float32 ``x``), where the other operands are all of one dtype
    of NARROWED_INTS and the op's result is of that dtype with the int weak and with it
    that dtype's 0-d value; else None (``x > 300`` of int8 ``x``, a bool, is NumPy's
    exact comparison; ``x / i`` of ints is float64; ``np.ldexp`` takes an int). Python
    floats the graph computed (``t = i * dt``, then ``x * t`` of a float32 ``x``) convert
    the same way into float32, which NumPy rounds them into (``np.float32(t)``, its
    "overflow encountered in cast" too)."""
    dtypes = set(others)
    if kwargs or len(dtypes) != 1 or not computed:
        return None
    (dtype,) = dtypes
    kinds = {type(c.example) for c in computed}
    if not kinds <= ({int, float} if dtype == "float32" else {int}):
        return None
    if dtype not in NARROWED_INTS or len(args) != len(op.inputs):
        return None

    def metas(strong: bool) -> tuple:
        return tuple(next((TensorMeta((), np.dtype(dtype)) if strong else type(c.example)(1)
                           for c in computed if a is c), None)
                     or (TensorMeta(a.meta.shape, a.meta.dtype) if hasattr(a, "meta") else a.value)
                     for a in args)
    try:
        weak, strong = infer_meta(op, metas(False), {}), infer_meta(op, metas(True), {})
    except Exception:
        return None
    if not (isinstance(weak, TensorMeta) and weak == strong and str(weak.dtype) == dtype):
        return None
    return f"np.{dtype}"


def graph_value(tx, sym: Any, op: Any, inputs: tuple, params: dict,
                position: int | None) -> Any:
    """The graph node computing run-time float ``sym`` (a SymScalarVariable with a
    ``tree``) as an input of ``op``, or None: the caller passes the entry's value."""
    if sym.tree is None or type(sym.example) is not float:
        return None
    if not _exact_here(op, inputs, params, position):
        return None
    return _build(tx, sym)


def _flat_metas(values: Any):
    for v in values:
        if isinstance(v, (tuple, list)):
            yield from _flat_metas(v)
        else:
            # (a NumPy scalar or array constant, ``np.float32(0.5)``, is strong like an array)
            yield TensorMeta(np.shape(v), v.dtype) if isinstance(v, (TensorMeta, np.generic, np.ndarray)) \
                else v


def _build(tx, sym: Any) -> Any:
    """Nodes for ``sym``'s tree; a float operand without one (an argument, or arithmetic
    this module does not take: ``a / b``) is a graph input the entry computes."""
    if sym.tree is None:
        return tx.output.scalar_node(sym)
    name, operands = sym.tree
    args = []
    for o in operands:
        if hasattr(o, "example"):
            if type(o.example) is not float:   # an int argument meeting a float: the entry's
                return tx.output.scalar_node(sym)
            args.append(_build(tx, o))
        else:
            try:
                args.append(float(o))   # Python's own conversion of an int or bool operand
            except OverflowError:
                return tx.output.scalar_node(sym)
    from ..ops import REGISTRY
    return tx.output.graph.call(REGISTRY[name], tuple(args), {}, source=tx.location())


def python_value_binary(tx, var: Any, op: Any, other: Any, reverse: bool) -> Any:
    """``var op other`` for a Python float the graph read from data (a PyValueVariable:
    ``np.random.random()``) and another Python float (read from data, a run-time number,
    a constant): the ops here, so no backend warns or raises where Python does not
    (``np.random.random() * 1e308 * 10`` is ``inf`` under ``np.errstate(all='raise')``);
    NotImplemented for anything else (the graph breaks and Python computes it)."""
    from .variables.arrays import ArrayVariable, PyValueVariable, SymScalarVariable
    from .variables.base import ConstantVariable
    from ..ops import REGISTRY
    name = BY_OPERATOR.get(INPLACE_TO_PLAIN.get(op, op))
    if INPLACE_TO_PLAIN.get(op, op) is operator.truediv:
        name = "python_true_divide"     # (Python's ZeroDivisionError: its own division)
    kind = float
    if name is None and tx.output.graph_loop_body:
        # ``if loss < tol: break`` in a graph loop's body: a comparison of doubles is the
        # same IEEE one in Python and in NumPy (NaN compares False), a Python bool the
        # node's test reads (kiln/capture/graph_breaks.py); elsewhere it breaks as before
        name, kind = _COMPARISONS.get(op), bool
    if var.kind is int and not tx.output.graph_loop_body:
        return PythonIntVariable.combine(tx, var, op, other, reverse)
    if var.kind is not float or name is None \
            or tx.output.loop_trace is not None:   # (a loop body's element code: Python's)
        return NotImplemented
    if isinstance(other, PyValueVariable) and other.kind is float:
        operand = other.array.node
    elif isinstance(other, ConstantVariable) and type(other.value) is float:
        operand = other.value
    elif isinstance(other, ConstantVariable) and type(other.value) in (int, bool) \
            and abs(other.value) <= 2 ** 53:   # (Python converts it to this float exactly)
        operand = float(other.value)
    elif isinstance(other, SymScalarVariable) and type(other.example) is float:
        operand = _build(tx, other)
    elif kind is bool and (isinstance(other, SymScalarVariable) and type(other.example) is np.float64
                           or isinstance(other, ArrayVariable) and other.scalar and not other.tensor
                           and other.meta.dtype == np.float64):
        # ``loss < tol`` with an np.float64 ``tol``: a float subclass, so its reflected
        # comparison runs, and gives an np.bool_ (a NumPy scalar the graph computes)
        operand = other.node if isinstance(other, ArrayVariable) else tx.output.scalar_node(other)
        args = (operand, var.array.node) if reverse else (var.array.node, operand)
        result = ArrayVariable(tx.output.graph.call(REGISTRY[name], args, {}, source=tx.location()), ())
        result.scalar = True
        return result
    else:
        return NotImplemented
    args = (operand, var.array.node) if reverse else (var.array.node, operand)
    node = tx.output.graph.call(REGISTRY[name], args, {}, source=tx.location())
    return PyValueVariable(ArrayVariable(node, ()), kind)


# The deepest ``PythonIntVariable`` (its code's parentheses: Python's parser takes 200)
MAX_INT_NESTING = 100


class PythonIntVariable(VariableTracker):
    """``n += int(mask.sum())`` outside a graph loop's body: Python's ``+ - * & | ^`` of
    Python ints read from data (PyValueVariables of kind int), int constants and such
    results, ``op(*operands)``, which Python computes where the value leaves the graph
    (returned, stored, handed to Python at a break): a Python int does not overflow where
    the graph's int64 would. A checksum's ``(s2 << 8) | s1`` and ``s % 255``: shifts by a
    constant count and ``//``, ``%`` by a non-zero constant too (operators that never
    raise, so computing them later moves no exception). Any other use breaks the graph
    there (the base class's default), so Python goes on with the value it would hold."""

    OPS = (operator.add, operator.sub, operator.mul, operator.and_, operator.or_, operator.xor)
    # operators exact and quiet with a constant right operand these accept
    BY_CONSTANT = {operator.lshift: lambda c: 0 <= c <= 64, operator.rshift: lambda c: c >= 0,
                   operator.floordiv: lambda c: c != 0, operator.mod: lambda c: c != 0}

    def __init__(self, op: Any, operands: tuple) -> None:
        self.op, self.operands = op, operands
        self.depth = 1 + max(getattr(o, "depth", 0) for o in operands)

    def describe(self) -> str:
        return "a Python int computed from ints read from array data"

    def python_type(self) -> type:
        return int

    def binary(self, tx, op: Any, other: VariableTracker, reverse: bool) -> Any:
        return PythonIntVariable.combine(tx, self, op, other, reverse)

    @staticmethod
    def combine(tx, var: Any, op: Any, other: Any, reverse: bool) -> Any:
        from .variables.arrays import PyValueVariable, SymScalarVariable
        from .variables.base import ConstantVariable
        op = INPLACE_TO_PLAIN.get(op, op)
        by_constant = PythonIntVariable.BY_CONSTANT.get(op)
        if by_constant is not None and not (not reverse and isinstance(other, ConstantVariable)
                                            and type(other.value) is int and by_constant(other.value)):
            return NotImplemented
        if (op not in PythonIntVariable.OPS and by_constant is None) or tx.output.loop_trace is not None \
                or tx.output.graph_loop_body:
            return NotImplemented
        if not (isinstance(other, (PyValueVariable, PythonIntVariable)) and other.python_type() is int
                or isinstance(other, SymScalarVariable) and type(other.example) in (int, bool)
                or isinstance(other, ConstantVariable) and type(other.value) in (int, bool)):
            return NotImplemented
        if max(getattr(o, "depth", 0) for o in (var, other)) >= MAX_INT_NESTING:
            return NotImplemented
        return PythonIntVariable(op, (other, var) if reverse else (var, other))


_COMPARISONS = {operator.lt: "less", operator.le: "less_equal", operator.gt: "greater",
                operator.ge: "greater_equal", operator.eq: "equal", operator.ne: "not_equal"}


# Python's complex operators whose result on a complex and a float is, bit for bit,
# NumPy's complex128 one (a float is the complex ``(f, 0.0)`` to both), and what they give
_COMPLEX_WITH_FLOAT = {operator.add: complex, operator.sub: complex, operator.mul: complex,
                       operator.eq: bool, operator.ne: bool}


def is_python_complex(var: Any) -> bool:
    """Is ``var`` a Python complex (a constant, a run-time number, read from data)?"""
    from .variables.arrays import PyValueVariable, SymScalarVariable
    from .variables.base import ConstantVariable
    return isinstance(var, ConstantVariable) and type(var.value) is complex or \
        isinstance(var, SymScalarVariable) and type(var.example) is complex or \
        isinstance(var, PyValueVariable) and var.kind is complex


def complex_with_float(tx, op: Any, left: Any, right: Any) -> Any:
    """``left op right`` for a Python complex ``left`` and an np.float64 ``right``: np.float64
    is a Python float, so Python's complex operator runs, not NumPy's (``(1+2j) + x.sum()``
    is a Python complex, ``(1+2j) == x.sum()`` a Python bool). ``+ - * == !=`` are computed
    in the graph (quietly: Python's complex math never warns) and read back as Python's
    type; ``/`` and ``**`` round their own way, so Python computes them (a graph break).
    None for the operators complex lacks (``//``, ``%``, ``<``: NumPy's, as Python hands
    them to np.float64)."""
    from .variables.arrays import PyValueVariable
    plain = INPLACE_TO_PLAIN.get(op, op)
    kind = _COMPLEX_WITH_FLOAT.get(plain)
    if kind is None:
        if plain in (operator.truediv, operator.pow):
            tx.unsupported("unsupported_value", f"{plain.__name__} of a Python complex and an "
                           f"np.float64 is Python's complex arithmetic (its own rounding): "
                           f"it runs as Python")
        return None
    result = tx.call_op(plain, [left, right], {}, f"Python complex {plain.__name__}")
    result.node.meta["quiet"] = True
    return PyValueVariable(result, kind)


def python_math(tx, fn: Any, args: list) -> Any:
    """``math.<fn>(*args)`` of numbers read from array data (a NumPy scalar or 0-d array,
    a Python float the graph computed) and constants: Python's own call as a graph node
    (kiln/ops/python_numbers.py, ``PYTHON_MATH``), whose result is a Python float read
    from the graph. None where that does not hold (the caller breaks the graph as before):
    a function not in ``MATH_FUNCTIONS``, an array with dimensions, complex values, a
    run-time Python int, element code in a loop body."""
    from .variables.arrays import ArrayVariable, PyValueVariable, SymScalarVariable
    from .variables.base import ConstantVariable
    name = getattr(fn, "__name__", "")
    if name not in MATH_FUNCTIONS.get(len(args), ()) or tx.output.loop_trace is not None \
            or getattr(math, name, None) is not fn:
        return None
    operands = []
    for a in args:
        if isinstance(a, ArrayVariable) and a.meta.shape == () \
                and np.dtype(a.meta.dtype).kind in "biuf" and not a.tensor:
            operands.append(a.node)
        elif isinstance(a, PyValueVariable) and a.kind in (float, int, bool):
            operands.append(a.array.node)
        elif isinstance(a, ConstantVariable) and type(a.value) in (float, int, bool):
            operands.append(a.value)
        elif isinstance(a, SymScalarVariable) and type(a.example) is float:
            operands.append(_build(tx, a))
        else:
            return None
    node = tx.output.graph.call(PYTHON_MATH[len(args)], tuple(operands), {"fn": name},
                                source=tx.location())
    return PyValueVariable(ArrayVariable(node, ()), float)


def python_scalar_type(tx, cls: type, var: Any) -> Any:
    """``np.uint16(n)`` of a Python number ``var`` read from array data (a PyValueVariable:
    ``n = int(hdr[0])``): NumPy's constructor on that number as a graph node
    (kiln/ops/python_numbers.py ``python_scalar_type``), a NumPy scalar the graph computes,
    with NumPy's OverflowError for an int out of the type's range. None for other types
    (the caller breaks the graph as before)."""
    from .variables.arrays import ArrayVariable
    from ..ops import REGISTRY
    try:
        name = np.dtype(cls).name
    except TypeError:       # (an abstract type: np.integer)
        return None
    if name not in SCALAR_TYPES or np.dtype(name).type is not cls or var.kind not in (int, float, bool):
        return None
    node = tx.output.graph.call(REGISTRY["python_scalar_type"], (var.array.node,),
                                {"type": name, "kind": var.kind.__name__},
                                source=tx.location())
    result = ArrayVariable(node, ())
    result.scalar = True
    return result


def data_int_index(array: Any, index: Any) -> Any:
    """``v[j]`` of ``j = int(np.argmax(v))``, a Python int read from data (stop 57: "Python
    int read from array ... passed to a NumPy function" broke the graph): where the index
    reads one element (an int for every dim), each such int is the 0-d integer array it was
    read from, which NumPy indexes the same (the element, its NumPy scalar type, the same
    IndexError). A partial index (a row: a view with an int, a copy with an array) stays."""
    from .variables.arrays import PyValueVariable, SymScalarVariable
    from .variables.base import ConstantVariable
    from .variables.containers import TupleVariable
    entries = list(index.item_list) if isinstance(index, TupleVariable) else [index]

    def data_int(v):   # (read from a signed integer, or an unsigned one below 2**63)
        dt = np.dtype(v.array.meta.dtype) if isinstance(v, PyValueVariable) else None
        return dt is not None and v.kind is int and not v.array.tensor and \
            (dt.kind == "i" or dt.kind == "u" and dt.itemsize < 8)
    if array.tensor or not any(data_int(v) for v in entries) or len(entries) != len(array.meta.shape):
        return index
    if not all(data_int(v) or isinstance(v, ConstantVariable) and type(v.value) is int
               or isinstance(v, SymScalarVariable) and type(v.example) is int for v in entries):
        return index
    entries = [v.array if isinstance(v, PyValueVariable) else v for v in entries]
    return TupleVariable(entries) if isinstance(index, TupleVariable) else entries[0]
