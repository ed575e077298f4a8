"""Calls into the ``logging`` module: a disabled one is nothing, any other runs as Python.

``logger.debug(msg, *args)`` is ``if self.isEnabledFor(DEBUG): self._log(...)``, so on a
logger not enabled for the level it does nothing at all (its arguments, evaluated before
the call, are the function's own work). Captured, such a call is None, guarded by the
same question asked on every call (``isEnabledFor`` reads the logger's ``disabled`` flag
and its level cache, as the call would). The module functions (``logging.info(...)``)
configure the root logger with ``basicConfig()`` first when it has no handlers: they are
nothing only while it has some and is not enabled for the level. An enabled call, and
every other function of the module (locks, handlers, I/O), is a graph break that names
it: the call runs as Python.
"""
from __future__ import annotations

import logging
from typing import Any

from ..sources import AttrSource
from .base import ConstantVariable, VariableTracker
from .builtins import OpaqueCallableVariable

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR, "critical": logging.CRITICAL}
LOGGER_METHODS = {getattr(logging.Logger, name): level for name, level in _LEVELS.items()}
ROOT_FUNCTIONS = {getattr(logging, name): level for name, level in _LEVELS.items()}


def silent(logger: logging.Logger | None, level: int) -> bool:
    """Does ``logger.<level>(...)`` (None: ``logging.<level>(...)``) do nothing now?"""
    if logger is None:
        return len(logging.root.handlers) > 0 and not logging.root.isEnabledFor(level)
    return not logger.isEnabledFor(level)


class LogCallVariable(OpaqueCallableVariable):
    """``logger.info`` (``logger``: the tracker of the Logger) or ``logging.info`` (None);
    ``logger.log`` (level None) takes its level from its first argument."""

    def __init__(self, fn: Any, source: Any, logger: VariableTracker | None, level: int | None) -> None:
        super().__init__(fn, source)
        self.logger, self.level = logger, level

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        obj = None if self.logger is None else self.logger.obj
        level = self.level
        if level is None:   # logger.log(level, msg, ...): an int level, else Python's error
            level = args[0].as_constant(tx) if args else None
            if type(level) is not int:
                tx.unsupported("unsupported_call", f"{self.describe()}() with the level {level!r}: "
                               f"the call runs as Python")
        name = logging.getLevelName(level)
        if not silent(obj, level):
            whose = "the root logger" if obj is None else f"logger {obj.name!r}"
            tx.unsupported("unsupported_call", f"{self.describe()}(): {whose} is enabled for {name} "
                           f"(or has no handler yet): the call runs as Python")
        ns = tx.guards.ns
        code = "None" if obj is None else self.logger.source.code(ns)
        text = "logging.root" if obj is None else self.logger.source.display()
        sources = () if obj is None else (self.logger.source,)
        tx.guards.add_truth(f"{ns.ref(silent, 'silent')}({code}, {level})",
                            f"{text} is not enabled for {name}", True, sources)
        return ConstantVariable(None)


def logging_method(tx, fn: Any, obj: VariableTracker, name: str) -> VariableTracker:
    """``obj.name`` where the class's function ``fn`` comes from the logging module."""
    if obj.source is None:
        tx.unsupported("unsupported_call", f"{obj.describe()}.{name}: a method of the logging "
                       f"module on an object made in the function runs as Python")
    if (fn in LOGGER_METHODS or fn is logging.Logger.log) and isinstance(obj.obj, logging.Logger):
        return LogCallVariable(fn, AttrSource(obj.source, name), obj, LOGGER_METHODS.get(fn))
    return OpaqueCallableVariable(getattr(obj.obj, name), AttrSource(obj.source, name))
