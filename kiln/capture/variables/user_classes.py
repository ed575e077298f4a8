"""Instances of user classes made inside the compiled function.

``Point(x, y)``, a dataclass, ``Result(mean=m, std=s)`` of a NamedTuple: capture makes the
object itself, as Dynamo does. A plain class's ``__init__`` is inlined on a
``NewObjectVariable`` whose attribute stores stay in the tracker; where the object
leaves the graph (returned, alive at a break, stored into an outside object) it is
rebuilt as ``object.__new__(cls)`` with those attributes, which is all a plain
``__init__`` leaves behind. A namedtuple class is a ``NamedTupleVariable`` of its bound
fields. Classes whose making runs other code (their own ``__new__``, a metaclass,
``__setattr__``, ``__slots__``, a finalizer, a C base) are not made here: calling them
breaks the graph and runs as Python.

    >>> import numpy as np, kiln
    >>> class P:
    ...     def __init__(self, x):
    ...         self.x = x * 2
    >>> kiln.compile(lambda a: P(a).x + 1, backend="eager")(np.ones(2))
    array([3., 3.])
"""
from __future__ import annotations

import enum
import inspect
import types
from typing import Any

from ..sources import AttrSource, GetItemSource, ObjectSource
from .base import ConstantVariable, VariableTracker
from .functions import UserFunctionVariable, UserObjectVariable


def class_source(cls: type) -> ObjectSource:
    return ObjectSource(cls, cls.__qualname__)


def construct(tx, cls: type, args: list, kwargs: dict) -> VariableTracker | None:
    """The instance ``cls(*args, **kwargs)`` makes, or None when capture cannot make it."""
    if is_namedtuple(cls):
        return _namedtuple(tx, cls, args, kwargs)
    if isinstance(cls, enum.EnumMeta) and not kwargs and all(a.is_constant() for a in args):
        return ConstantVariable(tx.fold(cls, *[a.value for a in args]))   # Act("tanh"): a lookup
    if not _plain_class(cls):
        return None
    obj = NewObjectVariable(cls)
    init = inspect.getattr_static(cls, "__init__")
    if init is object.__init__:
        if args or kwargs:
            tx.user_error(TypeError(f"{cls.__name__}() takes no arguments"))
        return obj
    tx.guards.add_id(AttrSource(class_source(cls), "__init__"), init)
    result = UserFunctionVariable(init).call(tx, [obj] + list(args), kwargs)
    if not (result.is_constant() and result.value is None):
        tx.user_error(TypeError(f"__init__() should return None, not '{result.python_type().__name__}'"))
    return obj


def _plain_class(cls: type) -> bool:
    """A class statement's class whose instances are made by object.__new__, hold their
    attributes in a __dict__, and run no Python code beyond __init__ when made or dropped."""
    if type(cls) is not type or getattr(cls, "__abstractmethods__", None):
        return False
    for base in cls.__mro__[:-1]:   # every class but object written in Python
        if not base.__flags__ & (1 << 9) or "__slots__" in vars(base):   # a heap type
            return False
    init = inspect.getattr_static(cls, "__init__")
    return cls.__new__ is object.__new__ and cls.__setattr__ is object.__setattr__ \
        and cls.__getattribute__ is object.__getattribute__ and not hasattr(cls, "__del__") \
        and (init is object.__init__ or isinstance(init, types.FunctionType))


def is_namedtuple(cls: type) -> bool:
    """A collections.namedtuple or typing.NamedTuple class (or a subclass adding methods):
    made by the namedtuple's own ``__new__``, no ``__init__``."""
    if not issubclass(cls, tuple) or type(cls) is not type:
        return False
    for base in cls.__mro__:
        own = vars(base)
        if "_fields" in own and "_make" in own:
            return isinstance(own.get("__new__"), staticmethod) \
                and isinstance(own["__new__"].__func__, types.FunctionType) \
                and cls.__init__ is object.__init__
        if "__new__" in own or "__init__" in own:
            return False
    return False


def _namedtuple(tx, cls: type, args: list, kwargs: dict) -> VariableTracker:
    from ..binding import bind_arguments
    from .builder import wrap
    from .containers import NamedTupleVariable
    new = cls.__new__
    src = AttrSource(class_source(cls), "__new__")
    tx.guards.add_id(src, new)
    defaults = [wrap(tx, v, GetItemSource(AttrSource(src, "__defaults__"), i))
                for i, v in enumerate(new.__defaults__ or ())]
    bound = bind_arguments(tx, new.__code__, defaults, {}, [ConstantVariable(cls)] + list(args),
                           kwargs, cls.__name__ + ".__new__")
    return NamedTupleVariable(cls, [bound[name] for name in cls._fields])


def method_of(tx, cls: type, self_var: VariableTracker, name: str) -> VariableTracker | None:
    """``obj.name`` for a Python function found on ``cls`` (a bound method, inlined when
    called), guarded on the function in its class; else None."""
    from .functions import UserMethodVariable
    static = inspect.getattr_static(cls, name, None)
    if not isinstance(static, types.FunctionType):
        return None
    tx.guards.add_id(AttrSource(class_source(cls), name), static)
    return UserMethodVariable(static, self_var)


class NewObjectVariable(UserObjectVariable):
    """An instance made in the frame: its attributes are the trackers stored into it."""

    def __init__(self, cls: type) -> None:
        super().__init__(object.__new__(cls))   # a stand-in for class lookups only
        self.stored: dict[str, VariableTracker] = {}

    def describe(self) -> str:
        return f"{type(self.obj).__qualname__} object (made in the frame)"

    def store_attr(self, tx, name: str, value: VariableTracker) -> None:
        static = inspect.getattr_static(type(self.obj), name, None)
        if hasattr(static, "__set__"):   # a property or another data descriptor
            tx.unsupported("mutation", f"setting attribute '{name}' of {self.describe()} "
                           f"(a data descriptor)")
        self.stored[name] = value

    def getattr(self, tx, name: str) -> VariableTracker:
        if name == "__dict__":
            tx.unsupported("unsupported_value", f"the __dict__ of {self.describe()}")
        if name == "__class__":
            return ConstantVariable(type(self.obj))
        static = inspect.getattr_static(type(self.obj), name, None)
        if name in self.stored and not hasattr(static, "__set__"):
            return self.stored[name]
        method = method_of(tx, type(self.obj), self, name)
        if method is not None:
            return method
        if static is not None and not isinstance(static, (types.FunctionType, property)) \
                and not hasattr(static, "__get__"):
            from .builder import wrap   # a class attribute: read through the class, guarded
            return wrap(tx, static, AttrSource(class_source(type(self.obj)), name))
        return super().getattr(tx, name)

    def rebuild(self, rebuild_value: Any, ns: Any) -> str:
        """Python code making the object, its attributes rebuilt by ``rebuild_value``."""
        items = ", ".join(f"{k!r}: {rebuild_value(v)}" for k, v in self.stored.items())
        return f"{ns.ref(make_object, 'f')}({ns.ref(type(self.obj), 'cls')}, {{{items}}})"


def make_object(cls: type, attributes: dict) -> Any:
    """The instance ``cls(...)`` would have left: a new object with these attributes."""
    obj = object.__new__(cls)
    if attributes:   # (``object()``, a sentinel, has no __dict__: nothing to set)
        obj.__dict__.update(attributes)
    return obj
