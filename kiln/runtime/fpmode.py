"""NumPy's floating-point error mode (np.errstate / np.seterr) as the C++ kernels see it.

Generated kernels compute IEEE results and warn as NumPy's default mode does (fpwarn.py).
When the caller asked NumPy to *raise*
(or call a handler, or log) on divide/overflow/invalid/underflow, or to warn of underflow
(no kernel reports it), a compiled call runs the graph with NumPy instead, so the same
FloatingPointError (or warning) comes out. The check reads the
mode's context variable and keeps the answer for the last mode object seen: a call of
launch_fp.c's ``ErrorMode`` where the launcher builds (tens of nanoseconds; every compiled
call makes it), else the same logic in Python.

    >>> import numpy as np
    >>> numpy_errors_trapped()
    False
    >>> with np.errstate(divide="raise"):
    ...     numpy_errors_trapped()
    True
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

try:  # NumPy 2 keeps the mode in a context variable
    from numpy._core._ufunc_config import _extobj_contextvar as _MODE
except ImportError:  # pragma: no cover - other NumPy layouts: always ask geterr
    _MODE = None

_QUIET = ("ignore", "warn")
_last: list = [object(), False]


def _trapped(mode: object = None) -> bool:
    """Does the current mode (``mode`` is its object, unread: geterr reads it) trap, or
    warn of underflow (kernels report no underflow: ``np.errstate(under="warn")`` runs as
    NumPy too)?"""
    err = np.geterr()
    return any(v not in _QUIET for v in err.values()) or err["under"] != "ignore"


def _per_mode(memo: list, compute: Any) -> Any:
    """``compute()``, kept in ``memo`` for the last mode object seen (a new errstate or
    seterr installs a new one; without the context variable, asked every time)."""
    mode = _MODE.get() if _MODE is not None else None
    if mode is not None and mode is memo[0]:
        return memo[1]
    value = compute()
    if mode is not None:
        memo[0], memo[1] = mode, value
    return value


def _numpy_errors_trapped() -> bool:
    """Does the current NumPy error mode do more than warn on some floating-point error?"""
    return _per_mode(_last, _trapped)


def _checker(python: Any, *warning_checks: Any) -> Any:
    """launch_fp.c's ErrorMode (with ``warning_checks``: also the warning filters) where the
    launcher builds, else ``python``, the same logic in Python."""
    from .launch import module
    m = module() if _MODE is not None else None
    return python if m is None else m.ErrorMode(_MODE, _trapped, *warning_checks)


numpy_errors_trapped = _checker(_numpy_errors_trapped)   # () -> bool


# The warning filters the last answer was computed for: the list object, its length and
# first entry (catch_warnings installs a new list; filterwarnings/simplefilter insert at
# the front or append), then the answer.
_filters_seen: list = [None, -1, None, False]


def runtime_warnings_raise(filters: list | None = None) -> bool:
    """Would a RuntimeWarning NumPy emits be raised as an exception? Conservative: an
    "error" filter for RuntimeWarning or a base class of it, whatever its message and module
    patterns, unless a filter for every RuntimeWarning with another action comes first
    (then compiled code runs as NumPy where it did not need to: slower, never wrong)."""
    for action, message, category, module, lineno in (warnings.filters if filters is None else filters):
        if not issubclass(RuntimeWarning, category):
            continue
        if action == "error":
            return True
        if message is None and module is None and not lineno:
            return False
    return False


def _filters_changed(filters: list) -> bool:
    _filters_seen[:] = [filters, len(filters), filters[0] if filters else None,
                        runtime_warnings_raise(filters)]
    return _filters_seen[3] and not _all_ignored()


def _all_ignored() -> bool:
    """NumPy's mode ignores every floating-point error (``np.errstate(all='ignore')``): it
    emits no RuntimeWarning for the filters to raise, so kernels may run."""
    return all(v == "ignore" for v in np.geterr().values())


def _errors_trapped(_mode=numpy_errors_trapped, _warnings=warnings, _seen=_filters_seen) -> bool:
    """Must a compiled call run as NumPy to raise what NumPy raises? (NumPy's error mode
    traps, or its RuntimeWarnings are errors.) The filter list is re-read only when the
    list, its length or its first entry change."""
    if _mode():
        return True
    filters = _warnings.filters
    if filters is _seen[0] and len(filters) == _seen[1] and filters and filters[0] is _seen[2]:
        return _seen[3] and not _all_ignored()
    return _filters_changed(filters)


# () -> bool: the compiled wrapper's check, every call (tens of nanoseconds in C while
# neither the error mode nor the filters change)
errors_trapped = _checker(_errors_trapped, warnings, runtime_warnings_raise,
                          lambda: not _all_ignored())


_warned: list = [object(), 0]


def warned_kinds() -> int:
    """The floating-point errors NumPy's mode warns about, as the bits kernels report (1
    divide, 2 overflow, 4 invalid: ops/fp_errors.py), kept for the last mode object seen
    (fpwarn.py asks on every kernel launch that raised a flag)."""
    return _per_mode(_warned, _warned_bits)


def _warned_bits() -> int:
    from ..ops.fp_errors import KINDS
    err = np.geterr()
    return sum(bit for bit, key, _ in KINDS if err[key] == "warn")
