"""``np.vectorize(pyfunc)(arrays...)`` captured as one loop node.

A vectorize object made outside the compiled function (``@np.vectorize`` on a helper,
``f = np.vectorize(...)`` at module level) is a :class:`UserObjectVariable` whose call
comes here; one made inside is a :class:`VectorizeVariable`. Both inline the polyfill
``kiln.ops.polyfills.vectorize``: a range loop ``out[i] = pyfunc(x[i], y[i])`` over the
broadcast arguments, which the loop machinery (kiln/capture/loop_node.py) makes one node
when ``pyfunc`` is element code. Everything else is a graph break at the user's call,
so NumPy runs it: ``signature=``, ``cache=True``, ``excluded=``, keyword arguments,
element types the loop cannot take (complex, uint64, float16, objects), a result type
that depends on the data, side effects, and any body the loop machinery refuses.

NumPy's output dtypes without ``otypes`` are those of ``pyfunc`` called once more on the
first elements (NumPy scalars): :class:`FirstTypesVariable` traces ``pyfunc`` on stand-ins
of those types, keeps the result types and throws the trace away. A trace succeeds only
when every path gives one type (loop_branches ``_merge``), so the dtype cannot depend on
the data; it fails on any write, so leaving NumPy's extra call out changes nothing.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import Graph
from ..ops.polyfills import PYTHON_SCALAR, vectorize as vectorize_polyfill
from .breaks import BreakGraph
from .loop_zero_trips import check_zero_trip_items
from .loops import LoopFallback, LoopTrace, ScalarValueVariable, _type_of
from .variables.base import ConstantVariable, VariableTracker
from .variables.containers import TupleVariable

HINT = "np.vectorize runs as NumPy here (a Python call per element)"
# The polyfill's range loop must be a loop node: unrolled it would be one body per element.
NODE_ONLY_CODES = {vectorize_polyfill.__code__}


def _stop(tx, reason: str) -> None:
    tx.unsupported("unsupported_call", f"np.vectorize: {reason}", HINT)


class VectorizeVariable(VariableTracker):
    """``np.vectorize(pyfunc, otypes=...)`` made inside the compiled function."""

    def __init__(self, pyfunc: VariableTracker, options: dict) -> None:
        self.pyfunc = pyfunc
        self.options = options

    def describe(self) -> str:
        return f"np.vectorize({self.pyfunc.describe()})"

    def python_type(self) -> type:
        return np.vectorize

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        return call_vectorize(tx, self.pyfunc, self.options, args, kwargs)


def make_vectorize(tx, args: list, kwargs: dict) -> VariableTracker:
    """``np.vectorize(...)`` in the compiled function: options must be constants."""
    names = ("pyfunc", "otypes", "doc", "excluded", "cache", "signature")
    if len(args) > len(names) or any(k not in names for k in kwargs):
        _stop(tx, "unexpected arguments")
    bound = dict(zip(names, args), **kwargs)
    if "pyfunc" not in bound:
        _stop(tx, "used as a decorator factory inside the compiled function")
    options = {}
    for name in names[1:]:
        var = bound.get(name)
        options[name] = None if var is None else _constant(tx, var, name)
    try:   # NumPy's own checks of otypes and signature, with its errors
        probe = np.vectorize(abs, otypes=options["otypes"], signature=options["signature"])
    except (TypeError, ValueError) as e:
        tx.user_error(e)
    options["otypes"] = probe.otypes
    options["excluded"] = set(options["excluded"] or ())
    options["cache"] = bool(options["cache"])
    return VectorizeVariable(bound["pyfunc"], options)


def _constant(tx, var: VariableTracker, name: str) -> Any:
    if var.is_constant():
        return var.value
    items = getattr(var, "item_list", None)   # otypes=[float], excluded={1}
    if items is not None and all(v.is_constant() for v in items):
        return [v.value for v in items]
    _stop(tx, f"'{name}' is not a constant")


def call_object(tx, obj: VariableTracker, args: list, kwargs: dict) -> VariableTracker:
    """A call of an ``np.vectorize`` object from outside (``obj``, a UserObjectVariable):
    its function is read as a guarded attribute, its options are guarded by value."""
    from .sources import AttrSource
    vec = obj.obj
    if vec.pyfunc is np._NoValue:
        _stop(tx, "a vectorize decorator factory is applied")
    options = {}
    for name in ("otypes", "signature", "cache", "excluded"):
        value = getattr(vec, name)
        value = set(value) if isinstance(value, set) else list(value) if isinstance(value, list) else value
        if obj.source is not None:
            tx.guards.add_equals(AttrSource(obj.source, name), value)
        options[name] = value
    return call_vectorize(tx, obj.getattr(tx, "pyfunc"), options, args, kwargs)


def call_vectorize(tx, pyfunc: VariableTracker, options: dict, args: list,
                   kwargs: dict) -> VariableTracker:
    from .variables.functions import UserFunctionVariable
    if options.get("signature") is not None:
        _stop(tx, "signature= (generalized ufunc loops)")
    if options.get("cache"):
        _stop(tx, "cache=True")
    if options.get("excluded") or kwargs:
        _stop(tx, "keyword or excluded arguments")
    if not 1 <= len(args) <= 4:
        _stop(tx, f"{len(args)} arguments (kiln compiles 1 to 4)")
    otypes = options.get("otypes")
    if otypes is not None:
        otypes = tuple(np.dtype(t) for t in otypes)
        if any(t.kind not in "biuf" or t.itemsize < 4 and t.kind == "f" for t in otypes):
            _stop(tx, f"otypes {[t.name for t in otypes]} (kiln compiles bool, int and float)")
    for a in args:
        dtype = _dtype_of(a)
        if dtype is None or dtype.kind not in PYTHON_SCALAR or dtype == np.uint64 \
                or dtype == np.float16:
            _stop(tx, f"an argument {a.describe()} (kiln compiles arrays and scalars of bool, "
                      f"int and float)")
    try:
        return UserFunctionVariable(vectorize_polyfill).call(
            tx, [pyfunc, ConstantVariable(otypes), FirstTypesVariable(otypes is None)] + list(args), {})
    except BreakGraph as e:
        if e.record.kind == "user_error" or e.depth <= tx.depth:
            raise
        reason = e.record.reason.removeprefix("np.vectorize: ")
        if e.record.filename != vectorize_polyfill.__code__.co_filename:
            reason += f" (at {e.record.location()})"   # in the user's function
        _stop(tx, reason)


def _dtype_of(var: VariableTracker) -> np.dtype | None:
    meta = getattr(var, "meta", None)
    if meta is not None and hasattr(meta, "dtype") and not getattr(var, "tensor", False):
        return np.dtype(meta.dtype)
    example = _type_of(var)
    return None if example is None else np.asarray(example).dtype


class FirstTypesVariable(VariableTracker):
    """``first_types(func, *arrays)`` of the polyfill: the dtypes of ``func``'s results on
    the arrays' first elements, found by tracing ``func`` on stand-ins of their NumPy scalar
    types in a loop body that is then thrown away (see the module docstring)."""

    def __init__(self, needed: bool) -> None:
        self.needed = needed

    def describe(self) -> str:
        return "np.vectorize's first call"

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        from .loop_node import _Snapshot
        func, arrays = args[0], args[1:]
        snap = _Snapshot(tx)
        graph = Graph("vectorize_first_call")
        trace = LoopTrace(tx.output.loop_trace, graph)
        tx.output.loop_trace = trace
        try:
            elems = []
            for k, a in enumerate(arrays):
                example = np.dtype(a.meta.dtype).type(1)
                elems.append(ScalarValueVariable(graph.placeholder(f"x{k}", example), example))
            result = func.call(tx, elems, {})
            if any(s.written for s in trace.arrays.values()) or snap.changed_outside(tx):
                raise LoopFallback("the function writes arrays, containers or objects")
            if trace.exits:
                raise LoopFallback("the function leaves early")
            items = result.item_list if isinstance(result, TupleVariable) else [result]
            check_zero_trip_items(graph, items)   # (an inner loop's int 0 after no trip)
            types = []
            for item in items:
                example = _type_of(item)
                if example is None:
                    raise LoopFallback(f"it returns {item.describe()}, not a number")
                types.append(np.asarray(example).dtype)
        except (LoopFallback, BreakGraph) as e:
            if isinstance(e, BreakGraph) and e.record.kind == "user_error":
                reason = e.record.reason
            else:
                reason = str(e) if isinstance(e, LoopFallback) else e.record.reason
            tx.output.loop_trace = trace.parent
            snap.restore(tx)
            what = f"the result type of {func.describe()} depends on the data" \
                if "different types" in reason else \
                f"{func.describe()} is not element code a loop node holds"
            tx.unsupported("unsupported_call", f"np.vectorize: {what} ({reason})", HINT)
        tx.output.loop_trace = trace.parent
        snap.restore(tx)
        return ConstantVariable(tuple(types))
