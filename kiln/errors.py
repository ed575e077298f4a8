"""kiln's own exceptions.

Every kiln error derives from :class:`KilnError` (a ``RuntimeError``) and says what went
wrong, where (the user's file:line when known) and how to fix it. Errors raised by the
user's own code, or by NumPy for bad shapes and axes, are never wrapped: they surface
with their own type and message.
"""
from __future__ import annotations


class KilnError(RuntimeError):
    """Base class of every error kiln raises itself."""


class Unsupported(KilnError):
    """Something kiln cannot compile (raised with ``fullgraph=True``, or internally to break)."""


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
