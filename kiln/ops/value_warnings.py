"""Warnings NumPy gives for some input *values*: "All-NaN slice encountered" (np.nanmax of a
slice of NaNs), "Mean of empty slice" (np.nanmean of one), "Degrees of freedom <= 0 for
slice." (np.nanvar where ddof leaves no degree of freedom).

A composite writes NumPy's test as a boolean array (``all_nan``, ``count == 0``) it
computes anyway, and hands it to ``warn_if_any``: after the kernel that made it, one look
at that small array (a reduction's result), and a warning only where a value is True.
The op is never removed as dead code (``may_raise``: under ``warnings.simplefilter
("error")`` it raises, as NumPy's call would), and warns once per call like NumPy.

The warning points where NumPy's does: NumPy's nan functions warn with ``stacklevel=2``,
the user's line that called them (``site``, from capture: :func:`call_site`), unless one
NumPy function calls another (np.nanstd's warning is np.nanvar's, at nanstd's line in
NumPy's file): :func:`numpy_site` finds that by asking NumPy once. The default filter then
shows it once per location, through that module's ``__warningregistry__``, as NumPy's.
"""
from __future__ import annotations

import functools
import sys
import types
import warnings
from typing import Any, Callable

import numpy as np

from .meta import TensorMeta, as_array, reject
from .registry import Category, declare, defined_in_numpy
from .speculation import _SITES

_modules: dict[str, tuple[str | None, dict | None]] = {}


def _module_of(filename: str) -> tuple[str | None, dict | None]:
    """The module name and globals of the user's file (for filters by module and the
    once-per-line registry), found once per file (a kernel that raised a flag on every
    call asks on every call); code of no module file (a notebook cell, ``python -c``) is
    ``__main__``'s, as NumPy's warning would say."""
    known = _modules.get(filename)
    if known is None:
        found = sys.modules.get("__main__")
        for mod in list(sys.modules.values()):
            if getattr(mod, "__file__", None) == filename:
                found = mod
                break
        known = _modules[filename] = (found.__name__, vars(found)) if found is not None else (None, None)
    return known


def warn_at(message: str, filename: str, lineno: int, category: type = RuntimeWarning) -> None:
    """``warnings.warn(message, category)`` as if raised at ``filename:lineno`` (the user's
    line, found by capture; the frames that would say it are gone when a kernel runs)."""
    module, globals_ = _module_of(filename) if filename else (None, None)
    registry = globals_.setdefault("__warningregistry__", {}) if globals_ is not None else None
    if not filename:
        filename, lineno = "<kiln>", 0
    # (no module_globals: linecache would ask the module's loader for its source, which
    # raises for __main__ read from stdin)
    warnings.warn_explicit(message, category, filename, lineno, module=module, registry=registry)


def ignored_at(message: str, filename: str, lineno: int, category: type = RuntimeWarning) -> bool:
    """Would :func:`warn_at` with these arguments be dropped by the warnings filters (the
    first that matches says "ignore", as ``warnings.simplefilter("ignore")``'s)? What
    warn_explicit decides, without its registry (:func:`shown_at` asks that)."""
    return _action_at(message, filename, lineno, category) == "ignore"


# _action_at's answers while the filters stay the same (list, entries and default action):
# a kernel raising a flag on every call asks on every call (crc32's ``0 - x`` on uint32),
# and matching the filters in Python cost more than the kernel. The list is compared with
# a copy of it, not made a tuple first (~25 ns, not ~150: the entries compare by identity)
_ACTIONS: dict = {}
_ACTIONS_FOR: list = [None, None]
_FILTERS_EPOCH = [0]   # one more each time _action_at finds the filters changed


def _action_at(message: str, filename: str, lineno: int, category: type, module: str | None = None) -> str:
    """The action of the first warnings filter matching this warning (else the default)."""
    if warnings.filters != _ACTIONS_FOR[0] or warnings.defaultaction != _ACTIONS_FOR[1]:
        _ACTIONS.clear()
        _ACTIONS_FOR[0], _ACTIONS_FOR[1] = list(warnings.filters), warnings.defaultaction
        _FILTERS_EPOCH[0] += 1
    key = (message, filename, lineno, category, module)
    action = _ACTIONS.get(key)
    if action is None:
        action = _ACTIONS[key] = _first_action(message, filename, lineno, category, module)
    return action


def _first_action(message: str, filename: str, lineno: int, category: type, module: str | None) -> str:
    if module is None:
        module = _module_of(filename)[0] if filename else None
    if not filename:
        filename, lineno = "<kiln>", 0
    if module is None:
        module = filename[:-3] if filename[-3:].lower() == ".py" else filename
    for action, text, cat, mod, line in warnings.filters:
        if (text is None or text.match(message)) and issubclass(category, cat) and \
                (mod is None or mod.match(module)) and (not line or line == lineno):
            return action
    return warnings.defaultaction


def shown_at(message: str, filename: str, lineno: int, category: type = RuntimeWarning) -> bool:
    """Would :func:`warn_at` with these arguments show nothing because this warning was
    shown at this line already? warn_explicit first looks the warning up in the module's
    ``__warningregistry__`` (set when the default filter showed it, once per location) and
    returns at once if it is there, unless the filters changed since (the registry's
    ``version`` is then not theirs: warn_explicit clears it, and the warning shows again).
    A NumPy ufunc's warning from the same line goes through the same registry."""
    globals_ = _module_of(filename)[1] if filename else None
    registry = globals_.get("__warningregistry__") if globals_ is not None else None
    if not registry or not registry.get((message, category, lineno)):
        return False
    version = registry.get("version")
    return version is not None and version == _filters_version()


class _VersionProbe(ImportWarning):
    """The warning :func:`_filters_version` passes to warn_explicit: an ImportWarning, which
    Python's default filters ignore."""


_PROBE = "kiln: the warnings filters' version"


def _filters_version() -> int | None:
    """The version of the warnings filters that warn_explicit compares a registry's with
    (CPython keeps it in C, where Python cannot read it): warn_explicit given a registry of
    another version clears it and writes the current one into it before it consults the
    filters. So a warning the filters ignore (or turn into an error, caught here) passed
    with such a registry reads it, and shows nothing. None where the filters would show
    that warning (``simplefilter("always")``, ``-W default``)."""
    if _action_at(_PROBE, _PROBE, 0, _VersionProbe, module=_PROBE) not in ("ignore", "error"):
        return None
    registry = _PROBE_REGISTRY
    try:   # (a made warning, positional: ~0.35 us; the message's text made one each call, ~1.2)
        warnings.warn_explicit(_PROBE_WARNING, _VersionProbe, _PROBE, 0, _PROBE, registry)
    except _VersionProbe:
        pass
    version = registry.get("version")
    # marked as shown: while the version holds, warn_explicit returns at the mark without
    # matching the filters (NumPy's message patterns, a regex call each); a new version
    # clears the registry first, as it clears any module's
    registry[(_PROBE, _VersionProbe, 0)] = True
    return version if isinstance(version, int) else None


_PROBE_REGISTRY: dict = {}


def filters_token() -> tuple | None:
    """A value that stays equal while :func:`ignored_at` and :func:`shown_at` keep their
    answers: the filters (list, default action) and CPython's version of them are the same
    (a warning shown at its line stays in its module's registry until a new version
    clears it). None where the version cannot be read (filters that would show the
    probe). Not told: a ``__warningregistry__`` the user empties by hand."""
    version = _filters_version()
    return None if version is None else (_FILTERS_EPOCH[0], version)
_PROBE_WARNING = _VersionProbe(_PROBE)


_AT: dict[tuple, Callable] = {}


def at_line(key: tuple, name: str, source: str, filename: str, lineno: int,
             kwdefaults: dict | None = None) -> Callable:
    """Function ``name`` defined by ``source``, its code placed at ``filename:lineno`` and
    run in that module's globals (once per ``key``)."""
    if key not in _AT:
        ns: dict = {}
        exec(compile(source, filename or "<kiln>", "exec"), ns)
        code = ns[name].__code__.replace(co_firstlineno=max(lineno, 1))
        globals_ = _module_of(filename)[1] if filename else None
        fn = types.FunctionType(code, globals_ if globals_ is not None else ns, name)
        fn.__kwdefaults__ = kwdefaults
        _AT[key] = fn
    return _AT[key]


def method_at(method: str, filename: str, lineno: int) -> Callable:
    """``lambda x, **params: x.<method>(**params)`` whose frame is the user's line: its code
    placed at ``filename:lineno``, run in that module's globals. NumPy's ``x.var()`` warns
    from Python (numpy/_core/_methods.py) with ``stacklevel=2``, at the frame calling the
    method, where ``np.var(x)`` warns at its own line in fromnumeric.py: an extern captured
    from a method spelling (``Bound.method``) calls this, so its warnings point where
    NumPy's method's do, once per location as NumPy's. It costs what the impl does.

    >>> method_at("var", "demo.py", 7)(np.zeros(3)).item()
    0.0
    """
    return at_line((method, filename, lineno), method,
                    f"def {method}(x, /, **params): return x.{method}(**params)", filename, lineno)


def ufunc_at(ufunc: Callable, filename: str, lineno: int, keywords: bool = True) -> Callable:
    """``ufunc`` called from a frame at the user's line: a ufunc warns ("divide by zero
    encountered in log") at the Python frame that calls it, so an extern call of a ufunc
    op (np.log of a complex array, which no kernel computes) warns where NumPy's would.
    So does any callable of C that runs NumPy's code (``operator.truediv`` on NumPy
    scalars, ``operator.setitem`` on an array, ``np.add.at``): an op's ``impl_at``.

    ``keywords=False``: a site called with positional arguments only (a matmul), whose
    frame takes no ``**params`` (a dict made and unpacked every call: ~60 ns of a 2x2
    matmul's ~850, paid 75 times a step by an unrolled state-space loop).

    >>> ufunc_at(np.log, "demo.py", 7)(np.ones(2)).tolist()
    [0.0, 0.0]
    """
    made = _AT.get((ufunc, filename, lineno, keywords))
    if made is not None:   # (scalar math asks per call: its source made again cost ~0.8 us)
        return made
    name = ufunc.__name__ if ufunc.__name__.isidentifier() else "ufunc"
    source = f"def {name}(*args, _kiln_ufunc, **params): return _kiln_ufunc(*args, **params)" \
        if keywords else f"def {name}(*args, _kiln_ufunc): return _kiln_ufunc(*args)"
    return at_line((ufunc, filename, lineno, keywords), name, source,
                    filename, lineno, {"_kiln_ufunc": ufunc})


def ufunc_part_at(ufunc: np.ufunc, part: int, filename: str, lineno: int,
                  quiet: bool = False) -> Callable:
    """Result ``part`` of ``ufunc``'s call from the user's line (np.divmod's quotient or
    remainder, each a node of its own, warns as NumPy's one call); ``quiet``: under
    ``np.errstate(all='ignore')`` (another node computing the same call warns for it).

    >>> ufunc_part_at(np.divmod, 1, "demo.py", 7)(np.array([7]), 3).tolist()
    [1]
    """
    name = ufunc.__name__
    return at_line((ufunc, part, quiet, filename, lineno), name,
                    f"def {name}(*args, _kiln_ufunc, _kiln_part, _kiln_quiet, **params): "
                    f"return _kiln_ufunc(*args, **params)[_kiln_part] if not _kiln_quiet else "
                    f"_kiln_quiet(_kiln_ufunc, args, params)[_kiln_part]",
                    filename, lineno, {"_kiln_ufunc": ufunc, "_kiln_part": part,
                                       "_kiln_quiet": _quietly if quiet else None})


def _quietly(ufunc: np.ufunc, args: tuple, params: dict) -> Any:
    with np.errstate(all="ignore"):
        return ufunc(*args, **params)


def call_site() -> tuple[str, int] | None:
    """The user's ``(file, line)`` of the NumPy call capture is binding; None outside
    capture (NumPy arrays, the eager Tensor: the warning then comes from the call)."""
    if not _SITES:
        return None
    filename, _, lineno = _SITES[-1][0].rpartition(":")
    return filename, int(lineno)


def runs_as_numpy(name: str, message: str) -> None:
    """For a normalizer or composite whose NumPy call warns for these shapes and params
    alone ("Degrees of freedom <= 0 for slice" of np.var with ddof >= n, of np.cov of one
    observation): under capture the call runs as NumPy (a graph break), so NumPy's warnings
    come out, its floating-point ones after it too; outside capture (the eager Tensor) it
    computes as it always does."""
    if _SITES:
        reject(name, "<arrays of these shapes>", message,
               "NumPy warns for them; the call runs as NumPy so the warning comes out")


def _numpy_warning(probe: Callable[[], Any], matches: Callable[[str], bool],
                   **errstate: str) -> Any:
    """The first warning ``probe()`` gives whose text ``matches``, under ``errstate``."""
    with warnings.catch_warnings(record=True) as seen, np.errstate(**errstate):
        warnings.simplefilter("always")
        probe()
    return next((w for w in seen if matches(str(w.message))), None)


def numpy_site(probe: Callable[[], Any], message: str) -> tuple[str, int] | None:
    """Where NumPy's ``message`` from ``probe()`` points: None when at ``probe``'s caller
    (``stacklevel=2`` from the function called: the user's line), else NumPy's own
    ``(file, line)`` (a nan function calling another)."""
    w = _numpy_warning(probe, message.__eq__, all="ignore")
    if w is None:
        return None
    code = getattr(probe, "__code__", None)
    return None if code is not None and w.filename == code.co_filename else (w.filename, w.lineno)


@functools.lru_cache(maxsize=None)
def empty_mean_divide(src: np.dtype, dtype: Any, whole: bool) -> tuple[str, tuple] | None:
    """NumPy's warning for the 0 / 0 of a mean of nothing, and where it points: its text
    depends on the dtypes ("invalid value encountered in scalar divide" for a float64 mean
    over everything, "... in divide" for float32 or along an axis), so NumPy is asked."""
    shape = (1,) if whole else (1, 1)
    w = _numpy_warning(lambda: np.mean(np.zeros(shape, src), axis=None if whole else 0,
                                       dtype=dtype, where=False),
                       lambda text: text.startswith("invalid value"), all="ignore", invalid="warn")
    return None if w is None else (str(w.message), (w.filename, w.lineno))


def _warn_if_any(x, message="", site=None, fp=None):
    if np.any(as_array(x)):
        if fp is not None:   # a floating-point warning: as np.errstate says for its kind
            mode = np.geterr()[fp]
            if mode == "ignore":
                return np.zeros(1, bool)
            if mode == "raise":
                raise FloatingPointError(message)
        if site is None:
            warnings.warn(message, RuntimeWarning, stacklevel=2)
        else:
            warn_at(message, site[0], site[1])
    return np.zeros(1, bool)   # (not 0-d: capture would run it on fake arrays for its type)


def _warn_check(message="", site=None, fp=None):
    """The check a generated wrapper calls (``Op.check_impl``): no keywords, no result."""
    def check(x):
        # (a reduction's small boolean result: its bytes searched for a 1 cost a tenth of
        # x.any(), which a large one is left to)
        if (b"\x01" in x.tobytes()) if x.size <= 65536 else x.any():
            _warn_if_any(x, message, site, fp)
    return check


def _warning_op(name: str, impl: Callable, check: Callable, when: str) -> Any:
    return declare(
        name, Category.EXTERN, impl, inputs=("x",),
        params={"message": "", "site": None, "fp": None}, may_raise=True, check_impl=check,
        meta=lambda x, message="", site=None, fp=None: TensorMeta((1,), np.dtype(bool)),
        doc=f"warns NumPy's RuntimeWarning ``message`` at ``site`` (file, line) when {when} "
            f"(``fp``: a floating-point kind, as np.errstate says); never removed as dead code")


warn_if_any = _warning_op("warn_if_any", _warn_if_any, _warn_check,
                          "a value of x is true (np.nanmax's all-NaN slices)")


def _warn_if_zero(x, message="", site=None, fp=None):
    return _warn_if_any(np.logical_not(as_array(x)), message, site, fp)


def _zero_check(message="", site=None, fp=None):
    def check(x):
        if not x.all():
            _warn_if_any(True, message, site, fp)
    return check


# A count's own zeros, not ``count == 0`` computed after it: a reduction's result read by
# no pointwise op keeps a stage of many masked means one loop (kiln/lowering/cpp_stages.py)
warn_if_zero = _warning_op("warn_if_zero", _warn_if_zero, _zero_check,
                           "a value of x is zero (a mean's count: 'Mean of empty slice')")


def warn_where(x: Any, message: str, numpy_at: tuple[str, int] | None = None) -> None:
    """For a composite: NumPy's RuntimeWarning ``message`` when a value of the boolean
    array ``x`` is true, at the user's line, or at ``numpy_at`` (:func:`numpy_site`)."""
    from .registry import F
    F.warn_if_any(x, message=message, site=numpy_at or call_site())


# The warnings NumPy gives for a spelling about to change or go (np.fix on NumPy 2.5)
DEPRECATIONS = (DeprecationWarning, FutureWarning, np.exceptions.VisibleDeprecationWarning)
_DEPRECATION_NAMES = frozenset(c.__name__ for c in DEPRECATIONS)


def _names(code: types.CodeType) -> set[str]:
    found = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            found |= _names(c)
    return found


@functools.lru_cache(maxsize=None)
def _python_may_deprecate(fn: Any) -> bool:
    # the function, its wrappers (``__wrapped__``, NumPy's ``_implementation``) and the
    # private helpers of NumPy's they call (np.fft.irfftn's ``_cook_nd_args`` warns for
    # ``s`` without ``axes``), two calls deep
    layers, seen = [(fn, 0), (getattr(fn, "_implementation", None), 0)], set()
    while layers:
        f, depth = layers.pop()
        if f is None or id(f) in seen:
            continue
        seen.add(id(f))
        code = getattr(f, "__code__", None)
        if code is not None:
            names = _names(code)
            if names & _DEPRECATION_NAMES:
                return True
            if depth < 2:
                scope = getattr(f, "__globals__", {})
                layers += [(scope.get(n), depth + 1) for n in names if n.startswith("_")
                           and isinstance(scope.get(n), types.FunctionType)
                           and defined_in_numpy(scope.get(n))]
        layers.append((getattr(f, "__wrapped__", None), depth))
    return False


def may_deprecate(fn: Any) -> bool:
    """Can NumPy's Python function ``fn`` warn that it (or a way of calling it) is
    deprecated: does its code, or a wrapper's, name DeprecationWarning, FutureWarning or
    VisibleDeprecationWarning? Read off the installed NumPy once per function, so no list
    of names per NumPy version is kept; only such a function's call is tried
    (kiln/capture/call_inputs.py numpy_deprecation). NumPy's C functions and ufuncs: no.

    >>> may_deprecate(np.sin), may_deprecate(lambda: warnings.warn("", DeprecationWarning))
    (False, True)
    """
    try:
        return _python_may_deprecate(fn)
    except TypeError:   # (unhashable: no NumPy function)
        return False


@functools.lru_cache(maxsize=None)
def setting_warns(name: str) -> bool:
    """Does setting ndarray attribute ``name`` give a DeprecationWarning on the installed
    NumPy (``a.shape = (2, 3)`` on NumPy 2.5, ``a.strides = ...`` on 2.4)? Asked of NumPy
    once per process, by setting it on a small array to the value it has."""
    x = np.zeros(1)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            setattr(x, name, getattr(x, name))
        except Exception:
            return False
    return any(issubclass(w.category, DEPRECATIONS) for w in seen)
