"""Values inside op arguments, and the hook a traced value hands op calls to (opdef.py's
``Op.__call__``): nested tuples/lists/slices walked leaf by leaf, whether a value carries
a gradient, and the ambient hook a composite spelling is captured under."""
from __future__ import annotations

from typing import Any, Callable, Iterator

import numpy as np


def _find_hook(values: Any) -> Callable | None:
    for value in iter_leaves(values):
        hook = getattr(type(value), "__kiln_op__", None)
        if hook is not None:
            return hook
    return _AMBIENT[-1].hook if _AMBIENT else None


# A hook for op calls with no traced input (np.empty inside a composite spelling being
# captured): set only while capture runs a composite (ambient_hook), so such calls are
# graph nodes too, computed on every call, never constants of the graph.
_AMBIENT: list = []


class ambient_hook:
    """``runtime``: which Python numbers the composite was handed stand for values known
    only when the graph runs (a float argument, ``x + dx``'s dx), asked by
    :func:`is_runtime_number`."""

    def __init__(self, hook: Callable, runtime: Callable[[Any], bool] = lambda value: False) -> None:
        self.hook = hook
        self.runtime = runtime

    def __enter__(self) -> None:
        _AMBIENT.append(self)

    def __exit__(self, *exc: Any) -> None:
        _AMBIENT.pop()


def is_runtime_number(value: Any) -> bool:
    """Inside a composite being captured: does this Python number change from call to call
    (so a spelling that bakes it into a constant makes every call recompile)?"""
    return bool(_AMBIENT) and _AMBIENT[-1].runtime(value)


def iter_leaves(value: Any) -> Iterator[Any]:
    """Every value inside nested tuples/lists/slices (slices yield start, stop, step)."""
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from iter_leaves(v)
    elif isinstance(value, slice):
        yield from iter_leaves((value.start, value.stop, value.step))
    else:
        yield value


def map_leaves(value: Any, fn: Callable[[Any], Any]) -> Any:
    """Rebuild nested tuples/lists/slices with ``fn`` applied to every other value."""
    if isinstance(value, tuple):
        return tuple(map_leaves(v, fn) for v in value)
    if isinstance(value, list):
        return [map_leaves(v, fn) for v in value]
    if isinstance(value, slice):
        return slice(map_leaves(value.start, fn), map_leaves(value.stop, fn),
                     map_leaves(value.step, fn))
    return fn(value)


def is_float_like(value: Any) -> bool:
    """Can this value carry a gradient? (a float array or array-like, not a Python scalar)"""
    if value is None or isinstance(value, (bool, int, float, complex, tuple, list, slice)):
        return False
    dtype = getattr(value, "dtype", None)
    return dtype is not None and np.dtype(dtype).kind == "f"


def is_complex_like(value: Any) -> bool:
    """A complex array or array-like (its gradient is complex: ``Op.complex_grad``)."""
    dtype = getattr(value, "dtype", None)
    return dtype is not None and not isinstance(value, (tuple, list, slice)) and \
        np.dtype(dtype).kind == "c"
