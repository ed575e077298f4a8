"""kiln's own exceptions.

Every kiln error derives from :class:`KilnError` (a ``RuntimeError``) and says what went
wrong, where (the user's file:line when known) and how to fix it. Errors raised by the
user's own code, or by NumPy for bad shapes and axes, are never wrapped: they surface
with their own type and message.
"""
from __future__ import annotations

import os
import warnings

_KILN_DIR = os.path.dirname(os.path.abspath(__file__))


def is_kiln_frame(frame) -> bool:
    """Is ``frame`` kiln's own (its modules, or the entries and wrappers it generates,
    whose file names start with ``<kiln``)? The user's code run as Python at a graph
    break (a segment) has the user's file name."""
    name = frame.f_code.co_filename
    return name.startswith(_KILN_DIR) or name.startswith("<kiln")


class KilnError(RuntimeError):
    """Base class of every error kiln raises itself."""


class Unsupported(KilnError):
    """Something kiln cannot compile (raised with ``fullgraph=True``, or internally to break)."""


class RunsOpByOp(KilnError):
    """A compiled graph whose outputs aot writes back into the caller's arrays declines a
    call that NumPy's error mode may make raise (runtime/backend.py): its caller runs the
    original graph op by op (aot/runtime.py) or the function as Python, which leave the
    arrays written as NumPy does before its error and give each warning once."""


class UnsupportedDtype(KilnError, TypeError):
    """An array dtype kiln does not handle (object, strings, ...)."""


class UnsupportedArgument(KilnError):
    """A NumPy argument kiln does not handle, such as ``where=`` or ``order='F'``."""


class NoOpError(Unsupported):
    """A NumPy callable that has no operator in kiln's inventory."""


class AutogradError(KilnError):
    """Misuse of the autograd engine (backward twice, modified saved values, ...)."""


class NoDerivative(AutogradError):
    """An op without a derivative rule was asked for a gradient."""

    where: str | None = None   # the user's file:line of the op's call, once known

    def located(self, where: str | None) -> "NoDerivative":
        """This error naming the user's line of the call (kept if it names one already)."""
        if where is None or self.where is not None:
            return self
        error = NoDerivative(f"at {where}: {self}")
        error.where = where
        return error


def warn_fallback(message: str, stacklevel: int) -> None:
    """Warn that kiln fell back (recompile_limit reached, a kernel that did not build): the
    call goes on, uncompiled or op by op. Under an "error" filter for RuntimeWarning
    (``pytest -W error::RuntimeWarning``, a library's warnings-as-errors test setup)
    ``warnings.warn`` raises, and the decorated call would fail where the function works;
    it runs, as promised, and the message stays in kiln's logs. ``stacklevel`` counts from
    the caller of this function, as ``warnings.warn``'s does."""
    try:
        warnings.warn(message, RuntimeWarning, stacklevel=stacklevel + 1)
    except RuntimeWarning:
        pass
