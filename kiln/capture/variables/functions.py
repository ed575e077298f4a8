"""Callables and objects: user functions (inlined), nested functions and lambdas made in
the frame, bound methods, NumPy functions (mapped through ops/), ``math`` functions,
modules, array methods and user objects."""
from __future__ import annotations

import inspect
import math
import types
from typing import Any
import numpy

from ...ops import describe_callable, find_spelling, method_key
from ...ops.loops import SCALAR_FUNCTIONS, SCALAR_MATH
from ..breaks import HINTS
from ..sources import AttrSource, GetItemSource, ObjectSource, Source
from .base import ConstantVariable, VariableTracker, folded, stores_itself


def _special_kind(fn: Any) -> str | None:
    if getattr(fn, "__kiln_graph_break__", False):
        return "explicit"
    if getattr(fn, "__kiln_disabled__", False):
        return "disabled"
    return None


class UserFunctionVariable(VariableTracker):
    """A Python function that exists outside the frame: inlined when called. One reached
    through a ``kiln.compile`` wrapper (``source`` names the wrapper) reads its defaults,
    closure and ``__dict__`` through the wrapper's ``__kiln_compiled__``: the wrapper has
    none of its own, and guards on ``wrapper.__defaults__`` failed on every call."""

    def __init__(self, fn: types.FunctionType, source: Source | None = None,
                 compiled: bool = False) -> None:
        self.fn = fn
        self.source = source
        self.compiled = compiled

    def describe(self) -> str:
        return f"function {self.fn.__qualname__}"

    def python_type(self) -> type:
        return types.FunctionType

    def fn_source(self) -> Source:
        if self.source is None:
            return ObjectSource(self.fn, self.fn.__qualname__)
        return AttrSource(self.source, "__kiln_compiled__") if self.compiled else self.source

    def closure_cells(self, tx) -> list:
        from .base import CellVariable
        from .builder import wrap
        cells = []
        base = AttrSource(self.fn_source(), "__closure__")
        for i, (name, cell) in enumerate(zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ())):
            src = AttrSource(GetItemSource(base, i), "cell_contents")
            try:
                contents = cell.cell_contents
            except ValueError:
                tx.unsupported("unsupported_value", f"free variable '{name}' is not set yet")
            cell = CellVariable(wrap(tx, contents, src), name)
            cell.outside = True  # a real cell of a function that exists outside the frame
            cells.append(cell)
        return cells

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        special = _special_kind(self.fn)
        if special == "explicit":
            tx.unsupported("explicit", "kiln.graph_break() was called")
        if special == "disabled":
            tx.unsupported("disabled", f"{self.fn.__qualname__} is marked kiln.disable",
                           "remove kiln.disable to compile it into the graph")
        from .grad import grad_transform
        transform = grad_transform(tx, self.fn, args, kwargs)
        if transform is not None:
            return transform
        from .builder import wrap
        # Defaults are read state, like globals (a mutable default mutated by the helper
        # must break, not be copied): they get sources.
        fn_src = self.fn_source()
        defaults = [wrap(tx, v, GetItemSource(AttrSource(fn_src, "__defaults__"), i))
                    for i, v in enumerate(self.fn.__defaults__ or ())]
        kwdefaults = {k: wrap(tx, v, GetItemSource(AttrSource(fn_src, "__kwdefaults__"), k))
                      for k, v in (self.fn.__kwdefaults__ or {}).items()}
        return tx.inline_call(self.fn.__code__, self.fn.__globals__, self.closure_cells(tx),
                              defaults, kwdefaults, args, kwargs, self.fn.__qualname__)

    def getattr(self, tx, name: str) -> VariableTracker:
        if name in ("__name__", "__qualname__", "__module__", "__doc__"):
            return ConstantVariable(getattr(self.fn, name))
        if name in getattr(self.fn, "__dict__", {}):
            # An attribute set on the function (``reg.grad = lambda w: 0``): read state,
            # like an object's attribute (guarded where it decides something).
            from .builder import wrap
            return wrap(tx, self.fn.__dict__[name],
                        GetItemSource(AttrSource(self.fn_source(), "__dict__"), name))
        return super().getattr(tx, name)


class NestedFunctionVariable(VariableTracker):
    """A function or lambda made by MAKE_FUNCTION inside the frame (closure cells are trackers)."""

    def __init__(self, code: types.CodeType, fn_globals: dict, defaults: list, kwdefaults: dict,
                 closure: list) -> None:
        self.code = code
        self.fn_globals = fn_globals
        self.defaults = defaults
        self.kwdefaults = kwdefaults
        self.closure = closure

    def describe(self) -> str:
        return f"function {self.code.co_name} (made in the frame)"

    def python_type(self) -> type:
        return types.FunctionType

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        return tx.inline_call(self.code, self.fn_globals, self.closure, self.defaults,
                              self.kwdefaults, args, kwargs, self.code.co_qualname)


class PartialVariable(VariableTracker):
    """``functools.partial(f, *args, **kwargs)`` made in the frame: a call is ``f``'s with
    the stored arguments first, as CPython's partial does (a partial of a partial is
    flattened, as CPython's is)."""

    def __init__(self, func: VariableTracker, args: list, kwargs: dict,
                 source: Source | None = None) -> None:
        if isinstance(func, PartialVariable):
            func, args, kwargs = func.func, func.args + list(args), {**func.kwargs, **kwargs}
        self.func = func
        self.args = list(args)
        self.kwargs = dict(kwargs)
        self.source = source   # one passed in: the object itself, where Python needs it

    def describe(self) -> str:
        return f"functools.partial of {self.func.describe()}"

    def python_type(self) -> type:
        import functools
        return functools.partial

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        return tx.call_function(self.func, self.args + list(args), {**self.kwargs, **kwargs})

    def getattr(self, tx, name: str) -> VariableTracker:
        from .containers import DictVariable, TupleVariable
        if name == "func":
            return self.func
        if name == "args":
            return TupleVariable(list(self.args))
        if name == "keywords":
            return DictVariable(dict(self.kwargs))
        return super().getattr(tx, name)


class UserMethodVariable(VariableTracker):
    def __init__(self, fn: types.FunctionType, self_var: VariableTracker) -> None:
        self.fn = fn
        self.self_var = self_var

    def describe(self) -> str:
        return f"method {self.fn.__qualname__}"

    def python_type(self) -> type:
        return types.MethodType

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        return UserFunctionVariable(self.fn).call(tx, [self.self_var] + list(args), kwargs)


class NumpyFunctionVariable(VariableTracker):
    """``np.sum``, ``np.add``, ...: calls become graph nodes through the op inventory."""

    def __init__(self, fn: Any, source: Source | None = None) -> None:
        self.fn = fn
        self.source = source

    def describe(self) -> str:
        return describe_callable(self.fn)

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        from ...ops.polyfills import POLYFILLS
        from ..loop_lists import StackedListVariable
        if self.fn in POLYFILLS and not (args and isinstance(args[0], StackedListVariable)):
            # np.piecewise: NumPy code calling the user's functions (np.fromiter of a list a
            # loop appended to is the items cast, loop_lists.stacking_call)
            return UserFunctionVariable(POLYFILLS[self.fn]).call(tx, args, kwargs)
        values = list(args) + list(kwargs.values())
        if self.fn in DTYPE_FUNCTIONS and all(v.is_constant() or _dtype_of_value(v) is not None
                                              for v in values):
            # np.result_type(x, 1.0), np.can_cast(x, np.int32): an array or a NumPy scalar
            # counts by its dtype alone (NEP 50), so these fold on the dtypes
            args = [v if v.is_constant() else ConstantVariable(_dtype_of_value(v)) for v in args]
            kwargs = {k: v if v.is_constant() else ConstantVariable(_dtype_of_value(v))
                      for k, v in kwargs.items()}
            values = list(args) + list(kwargs.values())
        if self.fn in PURE_NUMPY_FUNCTIONS and all(v.is_constant() for v in values):
            # np.issubdtype(x.dtype, np.floating), np.prod(x.shape), ...: fold on constants.
            import numpy as np
            result = tx.fold(self.fn, *[a.value for a in args], **{k: v.value for k, v in kwargs.items()})
            if not isinstance(result, np.ndarray):
                return ConstantVariable(result)
        return tx.call_op(self.fn, args, kwargs, describe_callable(self.fn))

    def getattr(self, tx, name: str) -> VariableTracker:
        import numpy as np
        if isinstance(self.fn, np.ufunc) and name in ("reduce", "accumulate", "outer", "reduceat", "at"):
            return UfuncMethodVariable(self.fn, name)
        if name in ("__name__", "__qualname__"):
            return ConstantVariable(getattr(self.fn, name))
        return super().getattr(tx, name)


def _pure_numpy_functions() -> set:
    import numpy as np
    from numpy.lib import array_utils
    names = ("issubdtype", "result_type", "promote_types", "can_cast", "broadcast_shapes",
             "isscalar", "min_scalar_type", "iterable")
    # (library code validates axes with normalize_axis_index(axis, x.ndim))
    return {getattr(np, n) for n in names if hasattr(np, n)} | {
        array_utils.normalize_axis_index, array_utils.normalize_axis_tuple}


# NumPy functions without side effects or hidden state, folded on constant arguments.
PURE_NUMPY_FUNCTIONS = _pure_numpy_functions()
# Those of them that read only the dtype of an array argument.
DTYPE_FUNCTIONS = {f for f in PURE_NUMPY_FUNCTIONS if f.__name__ in ("result_type", "can_cast")}


def _dtype_of_value(v: VariableTracker) -> Any:
    """The dtype of a run-time array or NumPy scalar, or None."""
    from .arrays import ArrayVariable
    if isinstance(v, ArrayVariable):
        return v.meta.dtype
    try:
        kind = v.python_type()
    except Exception:   # noqa: BLE001 - a tracker that does not know its type
        return None
    return numpy.dtype(kind) if isinstance(kind, type) and issubclass(kind, numpy.generic) else None


class UfuncMethodVariable(VariableTracker):
    def __init__(self, ufunc: Any, method: str) -> None:
        self.ufunc = ufunc
        self.method = method

    def describe(self) -> str:
        return f"numpy.{self.ufunc.__name__}.{self.method}"

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        from ...ops import ufunc_method_key
        return tx.call_op(ufunc_method_key(self.ufunc, self.method), args, kwargs, self.describe())


class ArrayMethodVariable(VariableTracker):
    """``x.sum`` before it is called."""

    def __init__(self, array: VariableTracker, name: str) -> None:
        self.array = array
        self.name = name

    def describe(self) -> str:
        return f"ndarray.{self.name}"

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        if self.name == "item":
            from ..loop_lists import python_value
            read = None if args or kwargs else python_value(tx, self.array, None)
            if read is None:
                tx.unsupported("data_dependent", "ndarray.item() reads array data into Python",
                               HINTS["data_dependent"])
            return read
        return tx.call_op(method_key(self.name), [self.array] + list(args), kwargs, self.describe())


class MathFunctionVariable(VariableTracker):
    """``math.sqrt`` and friends: folded on constants, deferred on runtime scalars."""

    def __init__(self, fn: Any, source: Source | None = None) -> None:
        self.fn = fn
        self.source = source

    def describe(self) -> str:
        return f"math.{self.fn.__name__}"

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        from .arrays import ArrayVariable, PyValueVariable, SymScalarVariable
        if not kwargs and any(isinstance(a, (ArrayVariable, PyValueVariable)) for a in args):
            from ..python_numbers import python_math
            result = python_math(tx, self.fn, args)
            if result is not None:
                return result
        if tx.output.loop_trace is not None and any(getattr(a, "loop_value", False) for a in args):
            from ..loops import LoopFallback, apply_scalar   # a value computed in a loop body
            if kwargs or len(args) != 1 or self.describe() not in SCALAR_FUNCTIONS:
                raise LoopFallback(f"{self.describe()} of {len(args)} value(s) computed in the "
                                   f"loop (a body holds {', '.join(SCALAR_MATH)} of one number)")
            return apply_scalar(tx, self.describe(), list(args))
        if kwargs or any(isinstance(a, ArrayVariable) for a in args):
            tx.unsupported("unsupported_call", f"{self.describe()} on arrays is not supported",
                           f"use np.{self.fn.__name__} for arrays")
        syms = [a for a in args if isinstance(a, SymScalarVariable)]
        if not syms:
            return ConstantVariable(tx.fold(self.fn, *[a.as_constant(tx) for a in args]))
        first = args[0] if isinstance(args[0], SymScalarVariable) else None
        if first is None:
            return ConstantVariable(tx.fold(self.fn, *[a.as_constant(tx) for a in args]))
        ref = f"{tx.output.ns.ref(math, 'math')}.{self.fn.__name__}"
        return first.apply(tx, ref, f"math.{self.fn.__name__}", self.fn, list(args[1:]))


class ModuleVariable(VariableTracker):
    def __init__(self, module: types.ModuleType, source: Source | None = None) -> None:
        self.module = module
        self.source = source

    def describe(self) -> str:
        return f"module {self.module.__name__}"

    def python_type(self) -> type:
        return types.ModuleType

    def getattr(self, tx, name: str) -> VariableTracker:
        from .builder import wrap
        try:
            value = getattr(self.module, name)
        except AttributeError as e:
            tx.user_error(e)
        if self.module.__name__.startswith("numpy.random") and callable(value) \
                and not isinstance(value, type) and find_spelling(value) is None \
                and value is not numpy.random.default_rng:   # (a DefaultRngVariable)
            # (np.random.normal and the other draws are ops: kiln/ops/random.py)
            tx.unsupported("unsupported_call", f"numpy.random.{name} is not captured",
                           "make generators outside the compiled function and pass them in "
                           "(their methods are captured)")
        if getattr(value, "__kiln_graph_break__", False):
            return UserFunctionVariable(value)
        if self.source is not None:
            # Module attributes can change between calls (np.sin = np.cos in a test, a
            # user module's global): every one read is guarded, NumPy's included.
            return wrap(tx, value, AttrSource(self.source, name))
        return wrap(tx, value, None)


class ConstantMethodVariable(VariableTracker):
    """A bound method of a constant (``'a,b'.split``, ``(3).bit_length``): folded."""

    def __init__(self, method: Any) -> None:
        self.method = method

    def describe(self) -> str:
        return f"method {getattr(self.method, '__qualname__', self.method)}"

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        values = [iter([v.as_constant(tx) for v in a.items(tx)]) if self._drains(a) else a.as_constant(tx)
                  for a in args]
        kw = {k: v.as_constant(tx) for k, v in kwargs.items()}
        value = tx.fold(self.method, *values, **kw)
        if isinstance(value, numpy.ndarray):
            # A new array (``np.float64(2).reshape(1)``): every call makes its own, as
            # NumPy does; as a constant, each call would return (and write) the same one.
            return tx.call_op(numpy.array, [ConstantVariable(value)], {}, "numpy.array")
        return folded(tx, value)

    def _drains(self, arg: VariableTracker) -> bool:
        """``", ".join(str(v) for v in xs)``: str.join and bytes.join take every item
        of an iterator (a generator expression run where it was made) before they return,
        so its items, constants, are what they join."""
        from .iterators import IteratorVariable
        return isinstance(arg, IteratorVariable) and getattr(self.method, "__name__", None) == "join" \
            and isinstance(getattr(self.method, "__self__", None), (str, bytes))


class UserObjectVariable(VariableTracker):
    """An instance of a user class: attribute reads (guarded), method calls (inlined)."""

    def __init__(self, obj: Any, source: Source | None = None) -> None:
        self.obj = obj
        self.source = source

    def describe(self) -> str:
        where = f" {self.source.display()}" if self.source is not None else ""
        return f"{type(self.obj).__qualname__} object{where}"

    def python_type(self) -> type:
        return type(self.obj)

    def truth(self, tx) -> bool:
        cls = type(self.obj)
        if not hasattr(cls, "__bool__") and not hasattr(cls, "__len__"):
            return True
        if not hasattr(cls, "__bool__") and self.protocol(tx, "__len__") is not None:
            return self.length(tx).as_constant(tx) != 0   # ``if ds:`` is ``len(ds) != 0``
        return super().truth(tx)

    def protocol(self, tx, name: str) -> VariableTracker | None:
        """The class's Python method ``name`` (``__len__``, ``__getitem__``, ``__iter__``:
        Python looks these up on the type), pinned by a guard; None when it has none."""
        static = inspect.getattr_static(type(self.obj), name, None)
        if not isinstance(static, types.FunctionType):
            return None
        if self.source is not None:
            tx.guards.add_id(AttrSource(AttrSource(self.source, "__class__"), name), static)
        return UserMethodVariable(static, self)

    def length(self, tx) -> VariableTracker:
        """``len(ds)`` of a Dataset-like object: its ``__len__``, inlined."""
        method = self.protocol(tx, "__len__")
        if method is None:
            return super().length(tx)
        n = method.call(tx, [], {})
        if n.is_constant() and type(n.value) is int and n.value >= 0 or \
                not n.is_constant() and n.python_type() is int:
            return n
        tx.unsupported("unsupported_value", f"len() of {self.describe()}: its __len__ gave "
                       f"{n.describe()} (Python checks it is a non-negative int)")

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        method = self.protocol(tx, "__getitem__")
        return method.call(tx, [index], {}) if method is not None else super().getitem(tx, index)

    def items(self, tx) -> list[VariableTracker]:
        """``for b in ds``: its ``__iter__``, inlined (a generator's yields)."""
        method = self.protocol(tx, "__iter__")
        if method is None:
            return super().items(tx)
        from .iterators import IteratorVariable
        made = method.call(tx, [], {})
        if not isinstance(made, IteratorVariable):
            tx.unsupported("unsupported_value", f"iterating over {self.describe()}: its __iter__ "
                           f"gave {made.describe()}")
        return made.items(tx)

    def store_attr(self, tx, name: str, value: VariableTracker) -> None:
        """``obj.name = value`` on an object from outside: reads see ``value`` from now on;
        the real object gets the store replayed after the graph."""
        static = inspect.getattr_static(type(self.obj), name, None)
        if isinstance(static, property) and isinstance(static.fset, types.FunctionType) \
                and type(self.obj).__setattr__ is object.__setattr__:
            # ``c.radius = 2.0`` through a property's setter: inlined, like its getter
            if self.source is not None:
                tx.guards.add_id(AttrSource(AttrSource(self.source, "__class__"), name), static)
            UserFunctionVariable(static.fset).call(tx, [self, value], {})
            return
        if hasattr(type(self.obj), "__setattr__") and type(self.obj).__setattr__ is not object.__setattr__ \
                or isinstance(static, property) \
                or not hasattr(self.obj, "__dict__"):
            tx.unsupported("mutation", f"setting attribute '{name}' of {self.describe()} (custom "
                           f"__setattr__, a property or __slots__)")
        self.__dict__.setdefault("stored", {})[name] = value
        tx.output.record_side_effect("setattr", self, name, value)
        if "instance_dict" in self.__dict__:
            self.instance_dict.entries[name] = value

    def dict_of(self, tx) -> VariableTracker:
        """``obj.__dict__`` and ``vars(obj)``: the real dict, wrapped like a dict passed in
        (its keys guarded, stores replayed on it), and from then on the one record of the
        object's attributes: ``obj.a = v`` shows in it and ``d['a'] = v`` in ``obj.a``."""
        from .builder import wrap
        from .containers import DictVariable
        if "instance_dict" in self.__dict__:
            return self.instance_dict
        real = getattr(self.obj, "__dict__", None)
        if self.source is None or type(real) is not dict \
                or type(self.obj).__getattribute__ is not object.__getattribute__:
            tx.unsupported("unsupported_value", f"the __dict__ of {self.describe()} (an object made "
                           f"in the function, without one, or with a custom __getattribute__)")
        var = wrap(tx, real, AttrSource(self.source, "__dict__"))
        if not isinstance(var, DictVariable):
            tx.unsupported("unsupported_value", f"the __dict__ of {self.describe()}: {var.describe()}")
        var.entries.update(self.__dict__.get("stored", {}))
        self.instance_dict = var
        return var

    def stores_back(self, tx, name: str, value: VariableTracker) -> bool:
        """Is ``obj.name = value`` a no-op: ``value`` is what the attribute held at entry
        and nothing replaced it since (``obj.w -= g``; not ``v = obj.w; obj.w = x;
        obj.w = v``, nor with ``obj.__dict__['w'] = x`` between)?"""
        current = self.set_here(tx, name)
        through_dict = GetItemSource(AttrSource(self.source, "__dict__"), name)
        if current is not None and stores_itself(current, through_dict):
            current = None   # the entry's value, read through __dict__
        return stores_itself(value, AttrSource(self.source, name),
                             *([current] if current is not None else []))

    def set_here(self, tx, name: str) -> VariableTracker | None:
        """The value of attribute ``name`` when the function set it (``obj.a = v``, or
        through ``obj.__dict__``), else None."""
        if "instance_dict" in self.__dict__:
            entries = self.instance_dict.entries
            if name in entries:
                return entries[name]
            if name in getattr(self.obj, "__dict__", {}):
                tx.unsupported("mutation", f"attribute '{name}' of {self.describe()} was deleted "
                               f"through its __dict__")
        return (self.__dict__.get("stored") or {}).get(name)

    def getattr(self, tx, name: str) -> VariableTracker:
        from .builder import RUN_AS_PYTHON_MODULES, wrap
        if name == "__dict__":
            return self.dict_of(tx)
        known = self.set_here(tx, name)
        if known is not None:
            return known
        try:
            static = inspect.getattr_static(self.obj, name)
        except AttributeError:
            if hasattr(type(self.obj), "__getattr__"):
                tx.unsupported("unsupported_value", f"{self.describe()} defines __getattr__")
            if type(self.obj).__getattribute__ is not object.__getattribute__:
                # (np.recarray finds its fields there: r.x is no AttributeError)
                tx.unsupported("unsupported_value", f"{self.describe()} defines __getattribute__")
            tx.user_error(AttributeError(f"'{type(self.obj).__name__}' object has no attribute '{name}'"))
        src = AttrSource(self.source, name) if self.source is not None else None
        instance_dict = getattr(self.obj, "__dict__", {})
        if name in instance_dict:
            return wrap(tx, instance_dict[name], src)
        if self.source is not None and hasattr(self.obj, "__dict__"):
            # Found on the class: an instance attribute set later would shadow it.
            code, text = self.source.code(tx.guards.ns), self.source.display()
            tx.guards.add_truth(f"{name!r} not in {code}.__dict__", f"{name!r} not in {text}.__dict__",
                                True, (self.source,))
        on_class = AttrSource(AttrSource(self.source, "__class__"), name) \
            if self.source is not None else None
        if isinstance(static, types.FunctionType):
            if on_class is not None:  # the class could be patched: pin the method
                tx.guards.add_id(on_class, static)
            if static.__module__ in RUN_AS_PYTHON_MODULES:
                from .logging_calls import logging_method
                return logging_method(tx, static, self, name)
            return UserMethodVariable(static, self)
        from .builder import is_compiled
        if is_compiled(static):
            return UserMethodVariable(static.__kiln_compiled__, self)
        if isinstance(static, staticmethod):
            if on_class is not None:
                tx.guards.add_id(on_class, static.__func__)
            return wrap(tx, static.__func__, None)
        if isinstance(static, classmethod):
            if on_class is not None:
                tx.guards.add_id(AttrSource(on_class, "__func__"), static.__func__)
            from .user_classes import class_source   # (cls.scale is read guarded)
            return UserMethodVariable(static.__func__, ConstantVariable(type(self.obj),
                                                                        class_source(type(self.obj))))
        if isinstance(static, property) and isinstance(static.fget, types.FunctionType):
            if on_class is not None:
                tx.guards.add_id(on_class, static)
            return UserFunctionVariable(static.fget).call(tx, [self], {})
        if hasattr(static, "__get__") and not isinstance(static, (int, float, str, tuple)):
            if type(static).__name__ == "member_descriptor":  # __slots__ attribute
                return wrap(tx, getattr(self.obj, name), src)
            tx.unsupported("unsupported_value", f"attribute '{name}' of {self.describe()} is a descriptor")
        # A class attribute read through the instance.
        return wrap(tx, static, src)

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        if type(self.obj) is numpy.vectorize:   # a loop node, not NumPy's Python-level loop
            from ..vectorize import call_object
            return call_object(tx, self, args, kwargs)
        call = inspect.getattr_static(type(self.obj), "__call__", None)
        if isinstance(call, types.FunctionType):
            return UserMethodVariable(call, self).call(tx, args, kwargs)
        return super().call(tx, args, kwargs)
