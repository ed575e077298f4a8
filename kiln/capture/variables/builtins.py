"""Python builtins: one handler per builtin, over trackers.

Builtins fold on constants, build containers for ``zip``/``enumerate``/``range`` (so the
loops over them unroll), defer ``int``/``float``/``abs``/``min``/``max`` on runtime scalars,
and map ``abs`` on arrays to its op. ``print`` and anything not listed break the graph.
"""
from __future__ import annotations

import builtins
import inspect
import operator
import sys
from typing import Any

import numpy as np

from ..breaks import HINTS
from ..sources import Source
from .base import ConstantVariable, VariableTracker, folded


# Calls that hand out the running frames: a partial graph's eager segment runs in a frame
# of its own (kiln/capture/partial.py FRAME_READERS), so a function calling one, itself or
# in a function it calls, runs as Python.
FRAME_GETTERS = (sys._getframe, inspect.currentframe, inspect.stack)


class OpaqueCallableVariable(ConstantVariable):
    """A callable kiln cannot look into (``time.perf_counter``, a C extension's function):
    loading it is free, calling it is a graph break at the call, whose result the resumed
    graph receives as a run-time value."""

    def describe(self) -> str:
        name = getattr(self.value, "__qualname__", None) or type(self.value).__name__
        module = getattr(self.value, "__module__", None)
        return f"{module}.{name}" if module else name

    def __init__(self, value: Any, source: Source | None = None, why: str = "", hint: str = "") -> None:
        super().__init__(value, source)
        self.why, self.hint = why, hint

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        if self.why:
            tx.unsupported("unsupported_call", f"calling {self.describe()}(): {self.why}", self.hint)
        if self.value in FRAME_GETTERS:
            tx.unsupported("unsupported_call", f"{self.describe()}() reads the frames of the "
                           f"calling functions; the function runs as Python", reads_frame=True)
        tx.unsupported("unsupported_call", f"calling {self.describe()}() is not supported "
                       f"(it runs as Python; its result is a run-time value after the break)")


_FIXED_ATTRIBUTES = (int, float, complex, bool, str, bytes, tuple, frozenset, type(None))


def _guarded_hasattr(tx, value: Any, source: Any, attr: str) -> VariableTracker:
    """``hasattr(value, attr)``, guarded where the answer can change between calls: an
    object, a class or a module from outside gains or loses attributes (``getattr(K, "n",
    0)`` on a class the function sets ``K.n`` on read 0 on every call)."""
    found = hasattr(value, attr)
    if source is not None and type(value) not in _FIXED_ATTRIBUTES:
        tx.guards.add_truth(f"_kiln_hasattr({source.code(tx.guards.ns)}, {attr!r})",
                            f"hasattr({source.display()}, {attr!r})", found, (source,))
    return ConstantVariable(found)


class BuiltinVariable(ConstantVariable):
    """A builtin function or type: a constant (``isinstance(v, int)``) that can be called."""

    def __init__(self, fn: Any, source: Source | None = None) -> None:
        super().__init__(fn, source)
        self.fn = fn

    def describe(self) -> str:
        return f"builtin {self.fn.__name__}"

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        handler = getattr(self, f"call_{self.fn.__name__}", None)
        if handler is None:
            hint = HINTS["print"] if self.fn is builtins.print else ""
            tx.unsupported("unsupported_call", f"builtin {self.fn.__name__}() is not supported", hint)
        return handler(tx, *args, **kwargs)

    # -- helpers --------------------------------------------------------------------------
    @staticmethod
    def _all_constant(args) -> bool:
        return all(a.is_constant() for a in args)

    def _fold(self, tx, args, kwargs=None) -> VariableTracker:
        kwargs = kwargs or {}
        return folded(tx, tx.fold(self.fn, *[a.as_constant(tx) for a in args],
                                  **{k: v.as_constant(tx) for k, v in kwargs.items()}))

    def _scalar(self, tx, args) -> VariableTracker | None:
        """Deferred to run time when the first argument is a runtime scalar."""
        from .arrays import SymScalarVariable
        from ..loops import ScalarValueVariable, apply_scalar
        if any(isinstance(a, ScalarValueVariable) for a in args) and \
                self.fn in (min, max, abs, int, float, bool):
            return apply_scalar(tx, self.fn.__name__, list(args))
        if args and isinstance(args[0], SymScalarVariable):
            ref = tx.output.ns.ref(self.fn, "builtin")
            return args[0].apply(tx, ref, self.fn.__name__, self.fn, list(args[1:]))
        if any(isinstance(a, SymScalarVariable) for a in args) and self.fn in (min, max):
            i = next(i for i, a in enumerate(args) if isinstance(a, SymScalarVariable))
            return args[i].apply(tx, tx.output.ns.ref(self.fn, "builtin"), self.fn.__name__, self.fn,
                                 list(args[:i]) + list(args[i + 1:]), at=i)
        return None

    # -- one handler per builtin ------------------------------------------------------------
    def call_len(self, tx, obj) -> VariableTracker:
        return obj.length(tx)

    def call_vars(self, tx, obj=None) -> VariableTracker:
        if obj is None:
            tx.unsupported("unsupported_call", "vars() without an argument reads the frame's "
                           "locals; the function runs as Python", reads_frame=True)
        return obj.getattr(tx, "__dict__")

    def call_range(self, tx, *args) -> VariableTracker:
        from ..loops import make_range
        symbolic = make_range(tx, list(args))   # a loop node may keep run-time bounds
        if symbolic is not None:
            return symbolic
        return ConstantVariable(tx.fold(range, *[a.as_constant(tx) for a in args]))

    def call_enumerate(self, tx, iterable, start=None) -> VariableTracker:
        from .arrays import ArrayVariable
        from .iterators import ArrayIteratorVariable, IteratorVariable, ZipIteratorVariable, make_iterator
        first = start.as_constant(tx) if start is not None else 0
        if isinstance(iterable, ArrayVariable):
            return ArrayIteratorVariable(tx, iterable, first)
        part = iterable if isinstance(iterable, IteratorVariable) else make_iterator(tx, iterable)
        return ZipIteratorVariable([part], first)

    def call_zip(self, tx, *iterables, strict=None) -> VariableTracker:
        from .iterators import IteratorVariable, ZipIteratorVariable, make_iterator
        parts = [it if isinstance(it, IteratorVariable) else make_iterator(tx, it) for it in iterables]
        if strict is not None and strict.as_constant(tx) and len({len(p.pending) for p in parts}) > 1:
            # Python raises when the shortest ends, after the steps before it ran
            tx.unsupported("unsupported_call", "zip(strict=True) of iterables of different "
                           "lengths: the function runs as Python")
        return ZipIteratorVariable(parts)

    def call_map(self, tx, fn, *iterables) -> VariableTracker:
        from .iterators import IteratorVariable, MapIteratorVariable, make_iterator
        if not iterables:
            return self._fold(tx, [fn])   # Python's TypeError
        return MapIteratorVariable(map, fn, [it if isinstance(it, IteratorVariable) else make_iterator(tx, it)
                                             for it in iterables])

    def call_filter(self, tx, fn, iterable) -> VariableTracker:
        from .iterators import IteratorVariable, MapIteratorVariable, make_iterator
        part = iterable if isinstance(iterable, IteratorVariable) else make_iterator(tx, iterable)
        return MapIteratorVariable(filter, fn, [part])

    def call_reduce(self, tx, fn, iterable, *initial) -> VariableTracker:
        """``functools.reduce(np.add, xs)``: ``fn`` called on each next item, as Python does."""
        from .iterators import IteratorVariable, make_iterator
        it = iterable if isinstance(iterable, IteratorVariable) else make_iterator(tx, iterable)
        acc = initial[0] if initial else it.next(tx)
        if acc is None:
            return self._fold(tx, [fn, ConstantVariable(())])   # Python's TypeError: empty, no initial
        while (item := it.next(tx)) is not None:
            acc = fn.call(tx, [acc, item], {})
        return acc

    def call_reversed(self, tx, seq) -> VariableTracker:
        """A one-shot iterator, as in Python; over an array it reads each row when the
        loop takes it (a loop breaking on its first step reads one)."""
        from .arrays import ArrayVariable
        from .iterators import ArrayIteratorVariable, IteratorVariable
        if isinstance(seq, ArrayVariable):
            return ArrayIteratorVariable(tx, seq, reverse=True)
        from .containers import ListVariable
        return IteratorVariable(list(reversed(seq.items(tx))),
                                seq if isinstance(seq, ListVariable) else None, reverse=True)

    def call_iter(self, tx, obj) -> VariableTracker:
        from .iterators import IteratorVariable, make_iterator
        if isinstance(obj, IteratorVariable):
            return obj
        return make_iterator(tx, obj)

    def call_next(self, tx, it, default=None) -> VariableTracker:
        if not hasattr(it, "next"):   # a generator handed in, an object's __next__: Python's
            tx.unsupported("unsupported_value", f"next() of {it.describe()}: it runs as Python")
        item = it.next(tx)
        if item is None:
            if default is not None:
                return default
            tx.unsupported("unsupported_value", "next() on an exhausted or unknown iterator")
        return item

    def call_isinstance(self, tx, obj, classinfo) -> VariableTracker:
        cls = classinfo.as_constant(tx)
        return ConstantVariable(tx.fold(issubclass, obj.python_type(), cls))

    def call_issubclass(self, tx, cls, classinfo) -> VariableTracker:
        return self._fold(tx, [cls, classinfo])

    def call_type(self, tx, obj) -> VariableTracker:
        from .functions import UserObjectVariable
        if isinstance(obj, UserObjectVariable):
            # a user's class with a source (its identity known: the object's type is), so
            # that what is read from it is guarded (``type(o).scale`` changes with the class)
            from .user_classes import class_source
            return ConstantVariable(type(obj.obj), class_source(type(obj.obj)))
        return ConstantVariable(obj.python_type())

    def call_callable(self, tx, obj) -> VariableTracker:
        from .functions import (MathFunctionVariable, NestedFunctionVariable,
                                NumpyFunctionVariable, UserFunctionVariable, UserMethodVariable)
        kinds = (BuiltinVariable, MathFunctionVariable, NestedFunctionVariable, NumpyFunctionVariable,
                 UserFunctionVariable, UserMethodVariable)
        return ConstantVariable(isinstance(obj, kinds) or (obj.is_constant() and callable(obj.value)))

    def call_getattr(self, tx, obj, name, default=None) -> VariableTracker:
        attr = name.as_constant(tx)
        if default is None:
            return obj.getattr(tx, attr)
        if self.call_hasattr(tx, obj, name).value:
            return obj.getattr(tx, attr)
        return default

    def call_setattr(self, tx, obj, name, value) -> VariableTracker:
        attr = name.as_constant(tx)
        if type(attr) is not str:   # Python's TypeError comes from Python
            tx.unsupported("unsupported_call", f"setattr() with the name {attr!r}")
        tx.store_attr(obj, attr, value)
        return ConstantVariable(None)

    def call_hasattr(self, tx, obj, name) -> VariableTracker:
        from .arrays import ArrayVariable, SymScalarVariable
        from .functions import UserObjectVariable
        attr = name.as_constant(tx)
        if isinstance(obj, UserObjectVariable):
            if obj.set_here(tx, attr) is not None:   # set by the function itself
                return ConstantVariable(True)
            if obj.source is None and hasattr(type(obj.obj), "__getattr__"):
                tx.unsupported("unsupported_value", f"hasattr on {obj.describe()}, which defines __getattr__")
            return _guarded_hasattr(tx, obj.obj, obj.source, attr)
        if isinstance(obj, ArrayVariable):   # (its type: a kiln.Tensor has .detach, a NumPy scalar...)
            return ConstantVariable(hasattr(obj.python_type(), attr))
        if isinstance(obj, SymScalarVariable):
            # duck typing on numbers (``hasattr(x, "dtype")``): a number's attributes are its
            # type's, and its type is guarded
            return ConstantVariable(hasattr(type(obj.example), attr))
        if obj.is_constant():
            return _guarded_hasattr(tx, obj.value, obj.source, attr)
        module = getattr(obj, "module", None)
        if module is not None:
            return _guarded_hasattr(tx, module, obj.source, attr)
        tx.unsupported("unsupported_value", f"hasattr on {obj.describe()}")

    def call_abs(self, tx, x) -> VariableTracker:
        from .arrays import ArrayVariable
        if isinstance(x, ArrayVariable) or getattr(x, "vector", False):   # (a slice in a loop body)
            return tx.call_op(builtins.abs, [x], {}, "abs")
        return self._scalar(tx, [x]) or self._fold(tx, [x])

    def _min_max(self, tx, args, kwargs) -> VariableTracker:
        from .arrays import ArrayVariable
        folded = _builtin_fold(tx, self.fn, args if not kwargs else [])
        if folded is not None:
            return folded
        if len(args) == 1:
            args = args[0].items(tx)
        key = kwargs.get("key")
        if key is not None and not (key.is_constant() and key.value is None) \
                and not (folds(key) and all(a.is_constant() for a in args)):
            # max(d, key=lambda k: d[k].shape[0]): the first item of the largest key
            if not args and "default" in kwargs:
                return kwargs["default"]
            keys = call_keys(tx, args, key)
            return args[tx.fold(self.fn, range(len(args)), key=keys.__getitem__)]
        if not kwargs and len(args) > 1 and all(
                isinstance(a, ArrayVariable) and a.scalar and not a.tensor for a in args) \
                and len({a.meta.dtype for a in args}) == 1:
            return self._select_scalars(tx, args)
        if not kwargs and len(args) > 1 and all(_float64_scalar(a) or _python_float(a) for a in args) \
                and any(_float64_scalar(a) for a in args):
            return self._select_typed(tx, args)
        if not kwargs and len(args) > 1 and all(_python_float(a) or _graph_float(a) for a in args) \
                and any(_graph_float(a) for a in args):
            return self._select_python_floats(tx, args)
        if any(isinstance(a, ArrayVariable) for a in args):
            tx.unsupported("data_dependent", f"builtin {self.fn.__name__}() compares array values",
                           f"use np.{'maximum' if self.fn is max else 'minimum'} or np.{self.fn.__name__}")
        if kwargs:
            return self._fold(tx, [ConstantVariable(tuple(a.as_constant(tx) for a in args))], kwargs)
        return self._scalar(tx, args) or self._fold(tx, args)

    def _select_scalars(self, tx, args: list) -> VariableTracker:
        """``min(a.std(), iqr / 1.34)`` of NumPy scalars of one dtype: Python keeps the
        first and takes each later one that compares less (greater for max), which is a
        select in the graph (NaN handling included); the result is that dtype's scalar.
        Of other dtypes, the result's type would depend on the values: those break."""
        import numpy as np
        better = np.less if self.fn is min else np.greater
        best = args[0]
        for a in args[1:]:
            best = tx.call_op(np.where, [tx.call_op(better, [a, best], {}, self.fn.__name__),
                                         a, best], {}, self.fn.__name__)
        # (np.where gives a 0-d array; [()] of it is the scalar, as NumPy spells it)
        return best.getitem(tx, ConstantVariable(()))

    def _select_typed(self, tx, args: list) -> VariableTracker:
        """``max(np.abs(u).max(), 1e-12)``: NumPy float64 scalars and Python floats (constants
        or run-time numbers). The value is the select of :meth:`_select_scalars` (a Python
        float converts to float64 exactly); its type is the winner's, which only the data tells: the result carries a
        flag, "the winner is NumPy typed", computed beside it (kiln/capture/loop_types.py's
        TypedByFlagVariable: exact where it leaves the graph, or meets arrays whose result
        does not depend on it, else the graph breaks there)."""
        import numpy as np
        from ..loop_types import TypedByFlagVariable
        better = np.less if self.fn is min else np.greater
        best, typed = args[0], ConstantVariable(_float64_scalar(args[0]))
        for a in args[1:]:
            took = tx.call_op(better, [a, best], {}, self.fn.__name__)
            best = tx.call_op(np.where, [took, a, best], {}, self.fn.__name__)
            typed = tx.call_op(np.where, [took, ConstantVariable(_float64_scalar(a)), typed], {},
                               self.fn.__name__)
        return TypedByFlagVariable(tx, best.getitem(tx, ConstantVariable(())), typed, float,
                                   f"the result of builtin {self.fn.__name__}() of NumPy and Python "
                                   f"floats (a Python float or an np.float64: the data decides)")

    def _select_python_floats(self, tx, args: list) -> VariableTracker:
        """``min(p, 1.0)`` of a Python float the graph computes (``p = math.erfc(z)`` of
        data: a PyValueVariable) and other Python floats: every item is a float, so the
        winner's type is known; its value is the select of :meth:`_select_scalars`, read
        from the graph as a Python float (a break there ran the rest of a Mann-Whitney
        test as Python: 1.6x NumPy)."""
        import numpy as np
        from .arrays import PyValueVariable
        better = np.less if self.fn is min else np.greater
        values = [a.array if isinstance(a, PyValueVariable) else a for a in args]
        best = values[0]
        for a in values[1:]:
            best = tx.call_op(np.where, [tx.call_op(better, [a, best], {}, self.fn.__name__),
                                         a, best], {}, self.fn.__name__)
        return PyValueVariable(best, float)

    def call_min(self, tx, *args, **kwargs) -> VariableTracker:
        return self._min_max(tx, args, kwargs)

    def call_max(self, tx, *args, **kwargs) -> VariableTracker:
        return self._min_max(tx, args, kwargs)

    def call_sum(self, tx, iterable, start=None) -> VariableTracker:
        folded = _builtin_fold(tx, self.fn, [iterable] if start is None else [])
        if folded is not None:
            return folded
        total = start if start is not None else ConstantVariable(0)
        items = iterable.items(tx)
        if _compensation_may_differ(total, items):
            if all(v.is_constant() for v in (total, *items)):
                return self._fold(tx, [ConstantVariable(tuple(v.value for v in items)), total])
            tx.unsupported("unsupported_call", "sum() of Python floats known only at run time: "
                           "Python 3.12+ adds them with compensation (sum([1e16, 1.0, -1e16]) "
                           "is 1.0), which the graph does not compute; Python's sum runs",
                           "use np.sum of an array (pairwise, NumPy's bits) or math.fsum")
        for item in items:
            total = tx.binary_op(operator.add, total, item)
        return total

    def _convert(self, tx, args, kwargs) -> VariableTracker:
        scalar = self._scalar(tx, args) if not kwargs else None
        if scalar is not None:
            return scalar
        if self.fn is bool and len(args) == 1:
            return ConstantVariable(args[0].truth(tx))
        if args and not args[0].is_constant():
            return ConstantVariable(self.fn).call(tx, list(args), kwargs)
        return self._fold(tx, args, kwargs)

    def call_int(self, tx, *args, **kwargs) -> VariableTracker:
        return self._convert(tx, args, kwargs)

    def call_index(self, tx, value) -> VariableTracker:
        """``operator.index(n)``: the int itself, a run-time int at run time, else Python's
        TypeError (a float) or a data-dependent break (a NumPy integer from the graph)."""
        return self._scalar(tx, [value]) or self._fold(tx, [value])

    def call_float(self, tx, *args, **kwargs) -> VariableTracker:
        return self._convert(tx, args, kwargs)

    def call_bool(self, tx, *args, **kwargs) -> VariableTracker:
        return self._convert(tx, args, kwargs)

    def call_round(self, tx, *args) -> VariableTracker:
        from .arrays import ArrayVariable
        x = args[0] if args else None
        if isinstance(x, ArrayVariable) and x.scalar and not x.tensor and len(args) == 2 \
                and not (args[1].is_constant() and args[1].value is None) and x.meta.dtype.kind in "iuf":
            # round(np.float32(v), 2) is NumPy's np.round, of the scalar's type (not a Python number)
            return tx.call_op(np.round, list(args), {}, "round")
        return self._scalar(tx, args) or self._fold(tx, args)

    def call_pow(self, tx, a, b) -> VariableTracker:
        return tx.binary_op(operator.pow, a, b)

    def call_divmod(self, tx, a, b) -> VariableTracker:
        """Of Python ints, one a run-time value: ``(a // b, a % b)``, which is Python's
        divmod of ints (and its ZeroDivisionError), read at run time; folding guarded
        the value, an entry per value (sgp4's _day_of_year_to_month_day: 731 entries).
        Of Python floats by a constant other than 0 (``divmod(second, 60.0)``) too: the
        same values (CPython computes all three alike); only the message of a division
        by zero differs ("float divmod()")."""
        ints = (int, bool)
        numbers = _python_type(a) in ints + (float,) and _python_type(b) in ints + (float,)
        if not (a.is_constant() and b.is_constant()) and numbers and (
                _python_type(a) in ints and _python_type(b) in ints
                or b.is_constant() and b.value != 0):
            from .containers import TupleVariable
            return TupleVariable([tx.binary_op(operator.floordiv, a, b),
                                  tx.binary_op(operator.mod, a, b)])
        return self._fold(tx, [a, b])

    def call_all(self, tx, iterable) -> VariableTracker:
        return ConstantVariable(all(i.truth(tx) for i in iterable.items(tx)))

    def call_any(self, tx, iterable) -> VariableTracker:
        return ConstantVariable(any(i.truth(tx) for i in iterable.items(tx)))

    def call_sorted(self, tx, iterable, **kwargs) -> VariableTracker:
        from .containers import ListVariable
        return ListVariable(sorted_items(tx, iterable.items(tx), kwargs))

    def call_tuple(self, tx, *args) -> VariableTracker:
        return ConstantVariable(tuple).call(tx, list(args), {})

    def call_list(self, tx, *args) -> VariableTracker:
        return ConstantVariable(list).call(tx, list(args), {})

    def call_dict(self, tx, *args, **kwargs) -> VariableTracker:
        return ConstantVariable(dict).call(tx, list(args), kwargs)

    def call_str(self, tx, *args) -> VariableTracker:
        return self._fold(tx, args)

    def call_repr(self, tx, *args) -> VariableTracker:
        return self._fold(tx, args)

    def _fold_known(self, tx, args: tuple, types: tuple = (int, bool)) -> VariableTracker:
        """Python's own call on constants of ``types`` (``bin(v).count("1")`` over ``range(256)``):
        a run-time value would be guarded by value, an entry per value: it breaks instead."""
        if not (args and self._all_constant(args) and type(args[0].value) in types):
            tx.unsupported("unsupported_call", f"builtin {self.fn.__name__}() of a value known only "
                           f"at run time (its text is Python's)")
        return self._fold(tx, args)

    def call_bin(self, tx, x) -> VariableTracker:
        return self._fold_known(tx, (x,))

    def call_hex(self, tx, x) -> VariableTracker:
        return self._fold_known(tx, (x,))

    def call_oct(self, tx, x) -> VariableTracker:
        return self._fold_known(tx, (x,))

    def call_ord(self, tx, c) -> VariableTracker:   # ``plain - ord("A")`` on byte arrays
        return self._fold_known(tx, (c,), (str, bytes, bytearray))

    def call_chr(self, tx, i) -> VariableTracker:
        return self._fold_known(tx, (i,))

    def call_format(self, tx, *args) -> VariableTracker:
        return self._fold_known(tx, args, (int, bool, float, str))

    def call_slice(self, tx, *args) -> VariableTracker:
        return ConstantVariable(slice).call(tx, list(args), {})


def _python_float(var: VariableTracker) -> bool:
    """A Python float: a constant, or a run-time number (``min(r, max_range)`` with
    ``max_range=15.0`` a keyword's default or an argument)."""
    from .arrays import SymScalarVariable
    return var.is_constant() and type(var.value) is float or \
        isinstance(var, SymScalarVariable) and type(var.example) is float


def _graph_float(var: VariableTracker) -> bool:
    """A Python float the graph computes (``math.erfc`` of a value read from data)."""
    from .arrays import PyValueVariable
    return isinstance(var, PyValueVariable) and var.kind is float


def _float64_scalar(var: VariableTracker) -> bool:
    from .arrays import ArrayVariable
    return isinstance(var, ArrayVariable) and var.scalar and not var.tensor \
        and var.meta.dtype == np.float64


def folds(key: VariableTracker) -> bool:
    """Can capture call ``key`` itself (``key=len``, ``key=str.lower``)? Not a callable
    whose call breaks the graph: ``max(d, key=d.get)`` of a dict the graph makes, or whose
    values a resume function is handed, is bound to this call's dict (folded, the keys of
    the values seen while compiling would be baked in)."""
    return key.is_constant() and not isinstance(key, OpaqueCallableVariable)


def call_keys(tx, items: list, key: VariableTracker) -> list:
    """``key(item)`` for each item, in order, as Python calls it (each call captured); the
    keys order the items, so each must be known while compiling (a shape, a name)."""
    return [key.call(tx, [item], {}).as_constant(tx) for item in items]


def sorted_items(tx, items: list, kwargs: dict) -> list:
    """The trackers ``items`` in the order ``sorted(items, key=..., reverse=...)`` gives
    (stable; ``list.sort`` too). Without a key, the items are compared: constants only."""
    key, reverse = kwargs.get("key"), kwargs.get("reverse", ConstantVariable(False))
    if set(kwargs) - {"key", "reverse"}:
        tx.fold(sorted, [], **{k: v.as_constant(tx) for k, v in kwargs.items()})   # Python's TypeError
    if key is None or key.is_constant() and key.value is None:
        keys = [i.as_constant(tx) for i in items]
    elif folds(key) and all(i.is_constant() for i in items):
        keys = [tx.fold(key.value, i.value) for i in items]
    else:
        keys = call_keys(tx, items, key)
    order = tx.fold(sorted, range(len(items)), key=keys.__getitem__, reverse=reverse.as_constant(tx))
    return [items[i] if not items[i].is_constant() else ConstantVariable(items[i].value) for i in order]


def _python_type(v: VariableTracker) -> Any:
    try:
        return v.python_type()
    except Exception:   # noqa: BLE001 - a tracker that does not know its type
        return None


def _compensation_may_differ(total: VariableTracker, items: list) -> bool:
    """Could Python's ``sum`` of ``items`` from ``total`` differ from adding them in order?
    3.12+ (bytecode_facts.COMPENSATED_FLOAT_SUM): once the running total is an exact Python
    float (a float start, or an int start meeting a float item), each exact float item is
    added with Neumaier's compensation, ints (and bools) plainly, and the compensation joins
    the total at the end or at the first other item, after which adding is plain again. One
    compensated add gives the plain sum (the error of ``t = f + x`` rounds away in
    ``t + err``), so only an item after a compensated one can change the result."""
    from ..bytecode_facts import COMPENSATED_FLOAT_SUM
    if not COMPENSATED_FLOAT_SUM:
        return False

    def kind(v):
        try:
            return v.python_type()
        except NotImplementedError:
            return None

    mode, compensated = {int: "int", float: "float"}.get(kind(total), "plain"), False
    for item in items:
        k = kind(item)
        if mode == "int":
            mode = "int" if k in (int, bool) else "float" if k is float else "plain"
        elif mode == "float":
            if compensated:
                return True    # (any item now: another add, or the compensation joining)
            if k is float:
                compensated = True
            elif k not in (int, bool) or item.is_constant() and not -2 ** 63 <= item.value < 2 ** 63:
                mode = "plain"
        else:
            return False
    return False


def _builtin_fold(tx, fn, args: list) -> VariableTracker | None:
    """``sum(out)``/``min(out)``/``max(out)`` of one list that computes it as a whole (a list
    an element loop appended numbers to: ``builtin_fold``), else None."""
    fold = getattr(args[0], "builtin_fold", None) if len(args) == 1 else None
    return fold(tx, fn) if fold is not None else None
