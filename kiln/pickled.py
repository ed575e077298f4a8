"""How a compiled function pickles: a module-level ``@kiln.compile`` by name, any other as
its original function and options (and bound object). Unpickled, there is one compiled
function per (function, options) and process: a worker that receives the same compiled
function with every task compiles it once, not per task.
"""
from __future__ import annotations

import sys
import types
import weakref
from typing import Any

_restored: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def reachable_as(obj: Any, module: str, qualname: str) -> bool:
    """Is ``obj`` what ``module.qualname`` names (so pickle can find it by name)?"""
    target: Any = sys.modules.get(module)
    for part in qualname.split("."):
        target = getattr(target, part, None)
    return target is obj


def restore(fn, backend, fullgraph, dynamic, bound_self):
    """The compiled function a pickle held, made again (or found) in this process."""
    from .api import CompiledFunction
    if bound_self is not None:
        return CompiledFunction(types.MethodType(fn, bound_self), backend, fullgraph, dynamic)
    key = (backend if isinstance(backend, str) else id(backend), fullgraph, dynamic)
    try:
        per_fn = _restored.setdefault(fn, {})
    except TypeError:
        return CompiledFunction(fn, backend, fullgraph, dynamic)
    found = per_fn.get(key)
    if found is None:
        found = per_fn[key] = CompiledFunction(fn, backend, fullgraph, dynamic)
    return found
