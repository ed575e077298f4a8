"""Grad mode: whether operations on Tensors are recorded for backward (per thread)."""
from __future__ import annotations

import contextlib
import threading

_state = threading.local()


def is_grad_enabled() -> bool:
    return getattr(_state, "enabled", True)


def set_grad_enabled(mode: bool) -> None:
    _state.enabled = bool(mode)


class no_grad(contextlib.ContextDecorator):
    """Context manager and decorator: nothing inside is recorded for backward.

        >>> import kiln
        >>> w = kiln.tensor([1.0, 2.0], requires_grad=True)
        >>> with kiln.no_grad():
        ...     y = w * 2
        >>> y.requires_grad
        False
    """

    def __enter__(self) -> "no_grad":
        _push(False)
        return self

    def __exit__(self, *exc: object) -> bool:
        _pop()
        return False


class enable_grad(contextlib.ContextDecorator):
    """Context manager and decorator: recording on, even inside no_grad."""

    def __enter__(self) -> "enable_grad":
        _push(True)
        return self

    def __exit__(self, *exc: object) -> bool:
        _pop()
        return False


def _push(mode: bool) -> None:
    """Enter a mode; the mode to restore is kept per thread, not on the context object
    (a decorator's object is shared by recursive calls and by threads)."""
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    stack.append(is_grad_enabled())
    set_grad_enabled(mode)


def _pop() -> None:
    set_grad_enabled(_state.stack.pop())
