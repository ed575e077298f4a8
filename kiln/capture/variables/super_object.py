"""``super()``: a base class's method called on the same object (class-based NumPy code:
``super().fit(X, y)``, ``super(LinearRegression, self).fit(X, y)``).

The attribute is looked up as CPython does, in ``type(obj).__mro__`` after the start
class; a plain function found there is inlined as a method of ``obj``, like ``obj.f``.
Guards pin what decided the lookup: the function in the class that defines it, and its
absence from the classes before it (the object's type is guarded already). Anything
else through ``super`` (descriptors, properties, ``super().__init__`` of a builtin) is a
graph break, and runs as Python.
"""
from __future__ import annotations

import types
from typing import Any

from ..sources import AttrSource, GetItemSource, ObjectSource
from .base import ConstantVariable, VariableTracker


class SuperVariable(VariableTracker):
    def __init__(self, start: type, obj: VariableTracker) -> None:
        self.start = start
        self.obj = obj

    def describe(self) -> str:
        return f"super({self.start.__qualname__}, {self.obj.describe()})"

    def python_type(self) -> type:
        return super

    def getattr(self, tx, name: str) -> VariableTracker:
        from .functions import UserFunctionVariable, UserMethodVariable
        from .builder import wrap
        mro = type(self.obj.obj).__mro__
        if self.start not in mro:
            tx.user_error(TypeError("super(type, obj): obj must be an instance or subtype of type"))
        for klass in mro[mro.index(self.start) + 1:]:
            where = AttrSource(ObjectSource(klass, klass.__qualname__), "__dict__")
            if name not in vars(klass):
                tx.guards.add_truth(f"{name!r} not in {where.code(tx.guards.ns)}",
                                    f"{name!r} not in {where.display()}", True, ())
                continue
            static = vars(klass)[name]
            if isinstance(static, types.FunctionType):
                tx.guards.add_id(GetItemSource(where, name), static)
                return UserMethodVariable(static, self.obj)
            if isinstance(static, staticmethod) and isinstance(static.__func__, types.FunctionType):
                tx.guards.add_id(GetItemSource(where, name), static)
                return UserFunctionVariable(static.__func__)
            if isinstance(static, (int, float, str, bool, tuple, type(None))):
                return ConstantVariable(static)
            tx.unsupported("unsupported_value", f"super().{name} is a {type(static).__name__} "
                           f"of {klass.__qualname__}")
        tx.user_error(AttributeError(f"'super' object has no attribute '{name}'"))


def make_super(tx, args: list) -> SuperVariable:
    """``super(start, obj)``, or ``super()`` in a method: the frame's ``__class__`` cell and
    its first argument, as CPython takes them."""
    from .functions import UserObjectVariable
    if not args:
        code = tx.code
        if "__class__" not in code.co_freevars or code.co_argcount < 1:
            tx.user_error(RuntimeError("super(): no arguments"))
        args = [tx.load_cell("__class__"), tx.locals.get(code.co_varnames[0])]
    if len(args) != 2 or not isinstance(args[0], ConstantVariable) \
            or not isinstance(args[0].value, type):
        tx.unsupported("unsupported_call", "super() with other arguments than a class and an object")
    obj = args[1]
    if not isinstance(obj, UserObjectVariable):
        tx.unsupported("unsupported_call", f"super() of {obj.describe() if obj is not None else 'a value'}")
    return SuperVariable(args[0].value, obj)
