"""Wrap real Python values into trackers, installing the guards their kind needs.

:func:`wrap` is the only place that turns a *sourced* value (an argument, a global, a
closure variable, an attribute) into a tracker, so it is where guards are decided:

=================  =================================================================
value              tracker and guards
=================  =================================================================
ndarray            graph input; type, dtype, ndim, sizes (dynamic dims: ``>= 2``)
cupy.ndarray       the same (kiln/array_kinds.py), plus its GPU (``x.device.id == 0``)
kiln.Tensor        graph input like an ndarray, plus ``requires_grad`` and grad mode
int/float/bool/complex argument: runtime scalar (type guard only); otherwise a constant
                   guarded by value
None, str, dtype   constant guarded by value
tuple/list/dict    container of wrapped items; type, length / keys
function, module   identity
class, builtin     identity
other objects      user object; type
=================  =================================================================
"""
from __future__ import annotations

import builtins
import collections
import enum
import functools
import math
import operator
import types
from typing import Any

import numpy as np

from ...array_kinds import kind_of_type
from ...ops import defined_in_numpy, find_spelling
from ...ops.meta import supported_dtype
from ..sources import AttrSource, GetItemSource, Source
from .base import ConstantVariable, VariableTracker
from . import containers
from .constant_calls import _HEAP_TYPE
from .containers import DefaultDictVariable
from .user_classes import is_namedtuple

SCALAR_TYPES = (bool, int, float, complex)
# A dict from outside the frame with more keys than this is read key by key (sys.modules):
# guarding its whole key tuple would cost every call more than the lookups it serves.
_KEYED_DICT = 64
# Items capture reads from containers it did not make (arguments, globals, closures): each
# is wrapped and guarded (type, and the value of a number or string), ~0.1-0.3 ms of
# capture and ~0.5 us of every call's guards an item, against ~0.1 us NumPy takes to
# convert one. Past these many (in one container, or in all of a capture) the data is
# data, not constants: the use breaks the graph and runs as Python on the real objects.
MAX_CONTAINER_ITEMS = 256
MAX_CAPTURED_ITEMS = 1024


def _tensor_class() -> type:
    from ...tensor import Tensor
    return Tensor


# The wrapper ``@np.errstate(...)`` puts around a function (numpy/_core/_ufunc_config.py).
_ERRSTATE_WRAPPER = frozenset(c for c in np.errstate.__call__.__code__.co_consts if isinstance(c, types.CodeType))
_RANGE_ITERATOR = type(iter(range(0)))


def is_numpy_callable(value: Any) -> bool:
    if isinstance(value, np.ufunc):
        return True
    if isinstance(value, types.MethodType) and not isinstance(value.__self__, (type, types.ModuleType)):
        return False  # a method of one NumPy object (an errstate's __exit__): see _wrap
    if type(value).__flags__ & _HEAP_TYPE or not hasattr(value, "__name__"):
        # an instance of a NumPy class written in Python (an errstate, a poly1d, an
        # np.vectorize, which copies its function's __name__), not a NumPy function
        return False
    return callable(value) and not isinstance(value, type) and defined_in_numpy(value)


def read_items(tx, value: Any, source: Source) -> None:
    """Count the items of a container from outside the frame that capture is about to
    wrap; past ``MAX_CONTAINER_ITEMS`` in it (guarded: a short one gets an entry of its
    own) or ``MAX_CAPTURED_ITEMS`` in all, break the graph here."""
    n = len(value)
    output = tx.output
    output.container_items += n
    guards = ()
    if n > MAX_CONTAINER_ITEMS:
        kind = type(value)

        def long(gs) -> None:
            gs.add_type(source, kind)
            gs.add_truth(f"_kiln_len({source.code(gs.ns)}) > {MAX_CONTAINER_ITEMS}",
                         f"len({source.display()}) > {MAX_CONTAINER_ITEMS}", True, (source,))
        long(tx.guards)
        guards = (long,)
        what = f"{source.display()} holds {n} items"
    elif output.container_items > MAX_CAPTURED_ITEMS:
        what = f"the containers read hold {output.container_items} items ({source.display()}: {n})"
    else:
        return
    tx.unsupported("long_container", f"{what}: more than capture follows item by item, each "
                   "a guarded constant", "pass the data as a NumPy array (np.asarray(...) "
                   "before the compiled function) to have it compiled", guards=guards)


def wrap_dict(tx, value: dict, source: Source | None) -> VariableTracker:
    """A dict's tracker with every key known (guarded as the key tuple)."""
    from .containers import DictVariable
    if not all(_plain_key(k) for k in value):
        tx.unsupported("unsupported_value", "dicts with keys other than numbers, strings, "
                       "classes (np.float32), dtypes and tuples of them are not supported")
    if source is not None:
        read_items(tx, value, source)
        tx.guards.add_keys(source, tuple(value))
    return DictVariable({k: wrap(tx, v, GetItemSource(source, k) if source is not None else None)
                         for k, v in value.items()}, source)


# Modules whose Python functions change the interpreter's state: called, they run as Python
# (a disabled logging call is nothing: kiln/capture/variables/logging_calls.py).
RUN_AS_PYTHON_MODULES = frozenset({"warnings", "logging"})


def _plain_key(key: Any) -> bool:
    """A key that hashes and compares the same on every call: a number, string, None, a
    class without a metaclass (np.float32, int: by identity), a dtype, tuples of them."""
    if type(key) is tuple:
        return all(_plain_key(k) for k in key)
    if type(key) in (float, complex) and key != key:   # NaN: never equal to itself
        return False
    return key is None or type(key) in (str, int, float, bool, bytes, complex, type) \
        or isinstance(key, np.dtype)


def is_compiled(value: Any) -> bool:
    """A compiled function, or a function wrapping one (``functools.wraps`` copies its
    ``__dict__``)? Read from the instance's ``__dict__``: a user ``__getattr__`` is not
    asked (``self._d[k]`` raising KeyError for the name made capture fail)."""
    try:
        attrs = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return False
    return isinstance(attrs, dict) and attrs.get("__kiln_compiled__") is not None


def wrap(tx, value: Any, source: Source | None) -> VariableTracker:
    """A tracker for ``value``; with a source, guards it (cached per source)."""
    output = tx.output
    if source is not None:
        key = (type(source).__name__, source.display())
        found = output.wrapped.get(key)
        if found is not None:
            return found
        var = _wrap(tx, value, source)
        var = _one_tracker_per_object(tx, value, source, var)
        output.wrapped[key] = var
        output.leaf_values[source.display()] = value
        return var
    return _wrap(tx, value, None)


def _one_tracker_per_object(tx, value: Any, source: Source, var: VariableTracker) -> VariableTracker:
    """Mutable objects from outside (lists, dicts, user objects) reached through two
    sources are one tracker, so a mutation through one is seen through the other; the
    aliasing is guarded (and, for mutated ones, so is its absence: OutputGraph.replay_code)."""
    from .containers import DictVariable, ListVariable
    from .functions import UserObjectVariable
    if not isinstance(var, (ListVariable, DictVariable, UserObjectVariable)):
        return var
    known = tx.output.mutable_objects.get(id(value))
    if known is None:
        tx.output.mutable_objects[id(value)] = (var, source)
        return var
    first, first_source = known
    ns = tx.guards.ns
    tx.guards.add_truth(f"{source.code(ns)} is {first_source.code(ns)}",
                        f"{source.display()} is {first_source.display()}", True, (source,))
    return first


def _partial_part(tx, value: Any, source: Source) -> VariableTracker:
    """An argument stored in a functools.partial passed in: a number is a run-time value
    (its type guarded), as the function's own arguments are."""
    from .arrays import SymScalarVariable
    if type(value) in SCALAR_TYPES or (isinstance(value, np.generic) and value.dtype.kind in "biufc"):
        _guard_type(tx, source, value)
        return SymScalarVariable(source.code(tx.guards.ns), source.display(), value, (source,), source=source)
    return wrap(tx, value, source)


def _guard_type(tx, source, value) -> None:
    if source is not None:
        tx.guards.add_type(source, type(value))


def _guard_id(tx, source, value) -> None:
    if source is not None:
        tx.guards.add_id(source, value)


def _wrap(tx, value: Any, source: Source | None) -> VariableTracker:
    from .arrays import SymScalarVariable
    from .containers import DictVariable, ListVariable, TupleVariable
    from .builtins import BuiltinVariable
    from .functions import (MathFunctionVariable, ModuleVariable,
                            NumpyFunctionVariable, UserFunctionVariable, UserMethodVariable,
                            UserObjectVariable)
    kind = type(value)
    array_kind = kind_of_type(kind)
    if array_kind is not None or kind is _tensor_class():
        if not supported_dtype(value.dtype):
            if source is not None:   # so that arrays of other dtypes get an entry of their own
                tx.guards.add_type(source, kind)
                tx.guards.add_equals(AttrSource(source, "dtype"), value.dtype)
            tx.unsupported("unsupported_value", f"array of dtype {value.dtype} is not supported",
                           "pass its int64 view (d.view(np.int64): NaT is its minimum) and do "
                           "the arithmetic on ints" if value.dtype.kind in "mM" else
                           "convert it with .astype(np.float64) before the compiled function")
        if source is None:
            if array_kind is None:
                tx.unsupported("unsupported_value", "a kiln.Tensor reached without a source",
                               "pass the Tensor as an argument")
            if not array_kind.host_memory:
                # graph constants are host arrays (the backend moves them to the device once)
                tx.unsupported("unsupported_value", f"a {array_kind.type_name} reached without a "
                               f"source (made by a call kiln did not capture)",
                               "pass it as an argument")
            return tx.output.constant_array(value)
        # A kiln.Tensor is an array to capture (its data's metadata); the Tensor object
        # itself is the runtime input, so the backend decides about autograd per call.
        return tx.output.array_input(value, source)
    if kind in SCALAR_TYPES or (isinstance(value, np.generic) and value.dtype.kind in "biufc"):
        if source is not None and (source.is_argument() or (
                kind in (int, float) and tx.output.dynamic.is_dynamic_scalar(source))):
            _guard_type(tx, source, value)
            code = source.code(tx.guards.ns)
            return SymScalarVariable(code, source.display(), value, (source,), source=source)
        if source is not None:
            tx.guards.add_equals(source, value)
        return ConstantVariable(value, source)
    if value is None or kind in (str, bytes, range, slice) or value is Ellipsis \
            or isinstance(value, np.dtype):
        if source is not None:
            tx.guards.add_equals(source, value)
        return ConstantVariable(value, source)
    if kind is set or kind is frozenset:
        from .argument_sets import wrap_argument_set
        var = wrap_argument_set(tx, value, source)
        if var is not None:
            return var
    if kind is list and source is not None and (source.is_argument() or _self_of_argument(source)):
        from .containers import ArgumentListVariable
        tx.guards.add_type(source, list)
        return ArgumentListVariable(tx, value, source)
    if kind is tuple or kind is list:
        if source is not None:
            tx.guards.add_type(source, kind)
            read_items(tx, value, source)
            tx.guards.add_length(source, len(value))
        items = [wrap(tx, v, GetItemSource(source, i) if source is not None else None)
                 for i, v in enumerate(value)]
        return (TupleVariable if kind is tuple else ListVariable)(items, source)
    if source is not None and isinstance(value, tuple) and is_namedtuple(kind):
        # a NamedTuple handed in (``jobs.release``, ``fit.coef``): its fields by position,
        # as one made in the function is (its class guarded, so its length too)
        tx.guards.add_type(source, kind)
        read_items(tx, value, source)
        return containers.NamedTupleVariable(kind, [wrap(tx, v, GetItemSource(source, i))
                                                    for i, v in enumerate(value)], source)
    if kind is dict and source is not None and not source.is_argument() and len(value) > _KEYED_DICT:
        from .keyed_dicts import KeyedDictVariable
        tx.guards.add_type(source, dict)
        return KeyedDictVariable(value, source)
    if kind is dict:
        if source is not None:
            tx.guards.add_type(source, dict)
        return wrap_dict(tx, value, source)
    if kind is collections.defaultdict and source is not None and any(
            value.default_factory is f for f in DefaultDictVariable.FACTORIES):
        tx.guards.add_type(source, kind)
        tx.guards.add_id(AttrSource(source, "default_factory"), value.default_factory)
        return DefaultDictVariable(value.default_factory, wrap_dict(tx, value, source).entries, source)
    if is_compiled(value):
        _guard_id(tx, source, value)
        return UserFunctionVariable(value.__kiln_compiled__, source, compiled=True)
    if value is np.random.default_rng or value is np.random.RandomState:
        from .numpy_objects import DefaultRngVariable
        _guard_id(tx, source, value)   # (made in the function: a generator of the graph)
        return DefaultRngVariable(value, source)
    if kind is functools.partial and source is not None:
        # made outside (or before a graph break): its parts are read through sources
        from .functions import PartialVariable
        tx.guards.add_type(source, kind)
        tx.guards.add_length(AttrSource(source, "args"), len(value.args))
        if not all(type(k) is str for k in value.keywords):
            tx.unsupported("unsupported_value", "a functools.partial with keys other than str")
        tx.guards.add_keys(AttrSource(source, "keywords"), tuple(value.keywords))
        # its numbers are run-time values, as arguments are (a partial with a new rate
        # each call hits the cache)
        args = [_partial_part(tx, v, GetItemSource(AttrSource(source, "args"), i))
                for i, v in enumerate(value.args)]
        keywords = {k: _partial_part(tx, v, GetItemSource(AttrSource(source, "keywords"), k))
                    for k, v in value.keywords.items()}
        return PartialVariable(wrap(tx, value.func, AttrSource(source, "func")), args, keywords, source)
    if isinstance(value, (type, enum.Enum)):   # a class, an enum's member (``Perm.READ``)
        _guard_id(tx, source, value)
        return ConstantVariable(value, source)
    if isinstance(value, types.ModuleType):
        _guard_id(tx, source, value)
        return ModuleVariable(value, source)
    from .numpy_objects import GENERATOR_TYPES, GeneratorVariable
    if callable(value) and (getattr(value, "__module__", None) or "").startswith("numpy.random") \
            and not isinstance(value, type) and find_spelling(value) is not None:
        _guard_id(tx, source, value)   # np.random.seed, np.random.ranf (Cython functions)
        return NumpyFunctionVariable(value, source)
    if isinstance(value, GENERATOR_TYPES) and source is not None and source.is_argument():
        # one passed in is often new on every call (default_rng(seed)): the graph draws
        # from a slot the entry fills with this call's argument (guarded by its type and
        # its bit generator's type, not identity or state)
        from ...ops.random import PassedGenerator, bit_generator_attr
        tx.guards.add_type(source, type(value))
        attr = bit_generator_attr(value)
        tx.guards.add_type(AttrSource(source, attr), type(getattr(value, attr)))
        return GeneratorVariable(PassedGenerator(type(value), source.code(tx.guards.ns), source.display()),
                                 source)
    if isinstance(value, GENERATOR_TYPES):
        # a module's or a closure's generator: the graph draws from this object (guarded
        # by identity). One passed in is often new on every call (default_rng(seed)):
        # its method calls run as Python on this call's object, as for any C method.
        _guard_id(tx, source, value)
        return GeneratorVariable(value, source)
    if _bound_to_object(value) and isinstance(value.__self__, GENERATOR_TYPES) \
            and not (source is not None and source.is_argument()):
        # np.random.normal is the global RandomState's method: an op (kiln/ops/random.py)
        _guard_id(tx, source, value)
        if find_spelling(value) is not None:
            return NumpyFunctionVariable(value, source)
        return GeneratorVariable(value.__self__, None).getattr(tx, value.__name__)
    if source is not None and source.is_argument() and kind is types.BuiltinMethodType \
            and type(value.__self__) is list and value.__name__ in ("append", "extend"):
        # ``losses.append(float(loss))``: the method was loaded before float() broke the
        # graph, so the resume function gets it on its stack. Its list is an argument's
        # (unread: appends are replayed, its length is not guarded); a call broke here
        # once per iteration of a training loop.
        from .containers import ContainerMethodVariable
        tx.guards.add_type(source, kind)
        tx.guards.add_equals(AttrSource(source, "__name__"), value.__name__)
        return ContainerMethodVariable(wrap(tx, value.__self__, AttrSource(source, "__self__")),
                                       value.__name__)
    if source is not None and _bound_to_object(value):
        # hist.append, rng.random: a C method bound to an object made per call. Its call
        # breaks the graph (runs as Python on the frame's own object), so what is guarded
        # is which method of which type, not the object: a new list each call hits the cache.
        from .builtins import OpaqueCallableVariable
        tx.guards.add_type(source, kind)
        tx.guards.add_type(AttrSource(source, "__self__"), type(value.__self__))
        if kind is types.MethodType:
            tx.guards.add_id(AttrSource(source, "__func__"), value.__func__)
        else:
            tx.guards.add_equals(AttrSource(source, "__name__"), value.__name__)
        return OpaqueCallableVariable(value, source)
    if is_numpy_callable(value):  # before plain functions: np.ones is Python code
        _guard_id(tx, source, value)
        return NumpyFunctionVariable(value, source)
    if kind is types.FunctionType and getattr(value, "__kiln_grad__", None) is not None:
        # made by kiln.grad / kiln.value_and_grad outside: differentiated in the graph
        from .grad import GradTransformVariable
        _guard_id(tx, source, value)
        fn, argnums, with_value, has_aux = value.__kiln_grad__
        return GradTransformVariable(wrap(tx, fn, AttrSource(source, "__wrapped__")
                                          if source is not None else None), argnums, with_value,
                                     has_aux)
    if kind is types.FunctionType and value.__code__ in _ERRSTATE_WRAPPER:
        from .builtins import OpaqueCallableVariable
        _guard_id(tx, source, value)
        return OpaqueCallableVariable(value, source, "it is decorated with np.errstate(...), whose wrapper sets "
                                      "NumPy's error mode: the call runs as Python",
                                      "call it inside `with np.errstate(...):` to have its body compiled")
    if kind is types.FunctionType and getattr(value, "__module__", None) in RUN_AS_PYTHON_MODULES:
        # warnings.simplefilter in a ``with warnings.catch_warnings():`` body: its call runs
        # as Python (one break) instead of inlining the interpreter's filter list (six)
        from .builtins import OpaqueCallableVariable
        from .logging_calls import ROOT_FUNCTIONS, LogCallVariable
        _guard_id(tx, source, value)
        if value in ROOT_FUNCTIONS:
            return LogCallVariable(value, source, None, ROOT_FUNCTIONS[value])
        return OpaqueCallableVariable(value, source)
    if kind is types.FunctionType:
        if source is not None and (source.is_argument() or not any(
                k.startswith("__") for k in getattr(value, "__dict__", ()))):
            # A function passed in (a closure rebuilt for a resume function, a lambda made
            # per call) or read from an object or a global (``self.activation = lambda x:
            # ...`` made per instance): what inlining assumed is its code; closure cells,
            # defaults and attributes are read through sources, so they are guarded where
            # they are used. (kiln's markers, ``__kiln_disabled__``, keep the identity.)
            _guard_type(tx, source, value)
            _guard_id(tx, AttrSource(source, "__code__"), value.__code__)
        else:
            _guard_id(tx, source, value)
        return UserFunctionVariable(value, source)
    if kind is types.MethodType:
        if source is not None:
            tx.guards.add_id(AttrSource(source, "__func__"), value.__func__)
        if value.__func__ is np.errstate.__exit__ and source is not None:
            # leaving np.errstate (entered as Python) restores NumPy's error mode: Python
            # too, a break at the user's with line (not inside NumPy's __exit__)
            from .builtins import OpaqueCallableVariable
            return OpaqueCallableVariable(value, source)
        self_var = wrap(tx, value.__self__, AttrSource(source, "__self__") if source else None)
        return UserMethodVariable(value.__func__, self_var)
    if kind is types.BuiltinFunctionType and getattr(value, "__module__", None) == "math":
        _guard_id(tx, source, value)
        return MathFunctionVariable(value, source)
    if kind is types.BuiltinFunctionType and (getattr(builtins, value.__name__, None) is value
                                              or value is operator.index or value is functools.reduce):
        _guard_id(tx, source, value)
        return BuiltinVariable(value, source)
    if callable(value) and not hasattr(value, "__dict__") and not hasattr(type(value), "__slots__"):
        # time.perf_counter, random.random, a C extension's function: a constant (guarded
        # by identity) whose *call* breaks the graph, so only the call runs as Python and
        # its result enters the resumed graph as a run-time value.
        from .builtins import OpaqueCallableVariable
        from .logging_calls import ROOT_FUNCTIONS, LogCallVariable
        _guard_id(tx, source, value)
        if value in ROOT_FUNCTIONS:
            return LogCallVariable(value, source, None, ROOT_FUNCTIONS[value])
        return OpaqueCallableVariable(value, source)
    from .numpy_objects import CONCATENATOR_TYPES, GRID_TYPES, AxisConcatenatorVariable, IndexGridVariable
    if isinstance(value, GRID_TYPES):
        _guard_type(tx, source, value)
        return IndexGridVariable(value, source)
    if type(value) in CONCATENATOR_TYPES:   # np.r_, np.c_ (their settings fixed by their class)
        _guard_type(tx, source, value)
        return AxisConcatenatorVariable(value, source)
    if kind is _RANGE_ITERATOR and source is not None:
        from ..loops import live_range_iterator   # a loop going on from an earlier graph
        var = live_range_iterator(tx, value, source)
        if var is not None:
            return var
    _guard_type(tx, source, value)
    return UserObjectVariable(value, source)


_SET_WRITES = frozenset({"add", "update", "discard", "remove", "pop", "clear", "difference_update",
                         "intersection_update", "symmetric_difference_update"})


def wrap_constant_attr(tx, var: ConstantVariable, name: str) -> VariableTracker:
    """Attributes of constants: dtype fields, ``np.float32.__name__``, ``(1.5).real``..."""
    value = var.value
    if type(value) is set and name in _SET_WRITES:
        # (here, not at the call: a bound method on the stack at the break would be the
        # capture's own set's, not the one the segment rebuilds)
        tx.unsupported("mutation", f"set.{name}() on a set made in the function runs as Python")
    attr = tx.fold(getattr, value, name)
    if hasattr(type(attr), "__next__"):
        # an iterator (``s.flat`` of a NumPy scalar) is consumed as it runs: one made while
        # capturing, held as a constant, was empty on every later call (methods.py seed 1435)
        tx.unsupported("unsupported_value", f"attribute '{name}' of {var.describe()} is an iterator: "
                       f"Python makes it on each call")
    if callable(attr) and not isinstance(attr, type):
        if isinstance(value, (str, int, float, tuple, np.dtype, bytes)):
            from .functions import ConstantMethodVariable
            return ConstantMethodVariable(attr)
    if isinstance(value, type) and var.source is not None and not _immutable_type(value):
        # A user class's attribute can change between calls (Opt.momentum = 0.5): read
        # through a source, so it is guarded like an object's attribute.
        return wrap(tx, attr, AttrSource(var.source, name))
    return wrap(tx, attr, None)


# The wrapper ``@np.errstate(...)`` puts around a function (numpy/_core/_ufunc_config.py).
_ERRSTATE_WRAPPER = frozenset(c for c in np.errstate.__call__.__code__.co_consts if isinstance(c, types.CodeType))
def _immutable_type(cls: type) -> bool:
    """Builtin and extension types (float, np.float32, np.dtype) and NumPy's classes:
    attributes never change. A class statement's class can change, whatever its
    ``__module__`` says (one made by ``exec(source, {})`` says "builtins")."""
    return not cls.__flags__ & _HEAP_TYPE or cls.__module__ == "numpy" or cls.__module__.startswith("numpy.")


def math_module_ref(tx) -> str:
    return tx.output.ns.ref(math, "math")


def _self_of_argument(source: Source) -> bool:
    """``___stack2.__self__``: the object of a method a resume function was handed."""
    return isinstance(source, AttrSource) and source.attr == "__self__" and source.base.is_argument()


def _bound_to_object(method: Any) -> bool:
    """A C method bound to an instance (``[].append``, a Generator's ``random``), not a
    module's function (``math.sin``: its ``__self__`` is the module), a builtin (``len``),
    a class method, or a Python method (inlined: ``UserMethodVariable``)."""
    kind = type(method)
    if kind is types.MethodType:
        if isinstance(method.__func__, types.FunctionType):
            return False
    elif kind is not types.BuiltinMethodType:
        return False
    owner = method.__self__
    return owner is not None and not isinstance(owner, (types.ModuleType, type, np.ufunc))
