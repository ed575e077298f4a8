"""The C-dispatched kind of ``CompiledFunction``: a subclass whose base is guards/fastcheck.c's
``Dispatcher``, so that a cache hit tries the entries in C without running
``CompiledFunction.__call__`` as Python (the same logic, written in C). Built once, when
the C helper is there; kiln/api.py's ``CompiledFunction.__new__`` asks for it."""
from __future__ import annotations

import types
from typing import Any

from .guards import MISS, RUN_EAGER, fastcheck

_FAST: list = []   # [the C-dispatched subclass of CompiledFunction, or None]


def fast_class(python_class: type) -> type | None:
    """``python_class`` (api.CompiledFunction) on the C ``Dispatcher`` base, or None without it."""
    if not _FAST:
        base = fastcheck.dispatcher_base()
        cls = None
        if base is not None:
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                self._kiln_miss, self._kiln_run_eager = MISS, RUN_EAGER
                python_class.__init__(self, *args, **kwargs)
                self._kiln_fn = self.fn
                self._kiln_slow = types.MethodType(after_c_checks, self)

            def after_c_checks(self: Any, *args: Any, **kwargs: Any) -> Any:
                """The C dispatcher's ``_kiln_slow``: where it tried the verdict and every
                entry (``_kiln_checks`` a tuple, positional arguments: a call with a keywords
                dict may come from its tp_call, which tries none), a miss, else the whole
                Python dispatcher."""
                if self._kiln_checks is None or kwargs:
                    return python_class.__call__(self, *args, **kwargs)
                if self.bound_self is not None:   # (the C dispatcher passes the call's own arguments)
                    args = (self.bound_self,) + args
                return self._miss(args, kwargs)

            def _publish(self, entries: tuple) -> None:
                # A bound method's object comes first (the C dispatcher prepends it)
                self._kiln_bound = self.bound_self
                self._kiln_checks = tuple(e.fast or e.check for e in entries)
            cls = type("CompiledFunction", (base, python_class),
                       {"__init__": __init__, "_publish": _publish,
                        "__module__": python_class.__module__, "__qualname__": "CompiledFunction",
                        "__doc__": python_class.__doc__})
            fastcheck.module().enable_vectorcall(cls)
        _FAST.append(cls)
    return _FAST[0]

