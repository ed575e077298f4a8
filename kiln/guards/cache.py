"""Cache entries, recompile reasons and automatic dynamic dimensions."""
from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .codegen import make_explainer
from .guard import SIZE, VALUE, Guard, GuardSet


@dataclass
class CacheEntry:
    check: Callable               # the generated entry function (guards + run)
    guards: GuardSet
    fn: types.FunctionType
    graph: Any = None
    graph_break: Any = None
    index: int = 0
    fast: Callable | None = None  # the same entry run in C (fastcheck.simple_entry), if any
    # the code before its break runs as Python, the cost model having priced its graph out
    # (capture/partial.py from_start): it keeps compiling only for array work after it
    python_before: bool = False
    _explainer: Callable | None = field(default=None, repr=False)

    def failures(self, args: tuple, kwargs: dict) -> list[tuple[Guard, Any]]:
        """The guards this call fails, with the value seen for each."""
        if self._explainer is None:
            self._explainer = make_explainer(self.fn, self.guards)
        try:
            # Every guard is tried, not only those before the first failure as the entry
            # does: one past it may compute on values it never sees (brentq's ``fb / fa``
            # after the sign test failed), and NumPy's warning for that is not the user's.
            with np.errstate(all="ignore"):
                return self._explainer(*args, **kwargs)
        except TypeError as e:  # the call does not even bind
            # (without its traceback, which holds this frame and so the call's arguments)
            return [(Guard("signature", None, "False", "call matches the signature"),
                     e.with_traceback(None))]

    def guard_texts(self) -> list[str]:
        return self.guards.texts()


def describe_failure(guard: Guard, seen: Any) -> str:
    if guard.kind == "type" and isinstance(seen, str):
        return f"{guard.text}  (saw {seen})"
    return f"{guard.text}  (saw {_shown(seen)})"


def _shown(seen: Any) -> str:
    """``repr(seen)``, or what it is when its ``__repr__`` raises (filterpy's sigma-point
    objects while copy.deepcopy rebuilds them: their attributes are not set yet): the
    call goes on, as it does without kiln, which never asks for the repr."""
    try:
        return repr(seen)
    except Exception as e:
        return f"<{type(seen).__qualname__} object; its repr raised {type(e).__name__}>"


def scalar_only(failures: list[tuple[Guard, Any]]) -> list[str]:
    """If every failure is a value guard on a Python int or float that now holds another
    number: the sources to read at run time from now on (``self.step += 1``); else []. An
    int argument is read at run time already; one a loop's trip count specialized (an
    elementwise body unrolled for ``range(n_steps)``) is then left to run time there."""
    sources = []
    for guard, seen in failures:
        if guard.kind != VALUE or guard.source is None or type(seen) not in (int, float) \
                or (guard.source.is_argument() and type(seen) is not int):
            return []
        sources.append(guard.source.display())
    return sources


def size_only(failures: list[tuple[Guard, Any]]) -> list[tuple[Any, int]]:
    """If every failure is a static size guard seeing another size >= 2, the dims to make
    dynamic as ``(source display, dim)``; else ``[]``."""
    dims = []
    for guard, seen in failures:
        if guard.kind != SIZE or not isinstance(seen, int) or seen in (0, 1) or "==" not in guard.code:
            return []
        dims.append((guard.source.display(), guard.dim))
    return dims
