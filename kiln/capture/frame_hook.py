"""The PEP 523 frame-evaluation hook: intercept calls to code objects kiln flagged.

A small C extension (``frame_hook.c``) through cffi: the module built when kiln was
installed (``kiln._native.frame_hook``, setup.py), else built with the configured compiler
(``kiln.config.cxx``) on first use and cached under ``kiln.config.cache_dir``. While a
thread runs compiled code that may call flagged functions (an eager segment of a partial
graph), the hook is active on that thread: a call to a flagged function is handed to
:func:`_dispatch` before its frame starts, which returns a replacement (kiln's compiled
version of the function) or None to run it normally. When no thread is inside such code
the hook is uninstalled, so the rest of the program keeps CPython's fast calls.

Without the installed module and a working compiler kiln falls back to wrapping at the
call sites it controls (the call that broke inlining) and says so once.

    >>> from kiln.capture import frame_hook
    >>> def g(x):
    ...     return x + 1
    >>> if frame_hook.available():
    ...     _ = frame_hook.flag(g.__code__, lambda fn: (lambda *a, **k: "replaced"))
    ...     with frame_hook.active():
    ...         inside = g(1)
    ...     frame_hook.unflag(g.__code__)
    ... else:
    ...     inside = "replaced"
    >>> inside, g(1)
    ('replaced', 2)
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import os
import sys
import sysconfig
import threading
import types
import warnings
import weakref
from typing import Any, Callable

import numpy as np

from .._native import (EXTENSIONS, FRAME_HOOK_CDEF, HEADER, extension_hash, frame_hook_ffi,
                       read)
from ..cext import build_extension, installed_extension
from ..config import config

_C_SOURCE = EXTENSIONS["frame_hook"][0]

_lock = threading.Lock()
_lib: Any = None
_failed: dict[str, str] = {}          # compiler command -> why it failed (warned once each)
# The C hook flags and keeps verdicts per code *object* (its extra slots); so do these
# tables, keyed by _ident(code). Code objects compare equal without their file name or
# identity (one helper exec'd twice, a reloaded module): keyed by equality, the second
# one's verdicts freed the tuple the first one's slot still pointed at.
_factories: dict[tuple, Callable] = {}   # flagged code -> fn -> replacement or None
# function -> {owner: adapter}: the replacement each compiled function made of it. Two
# functions compiled with different options (backend, dynamic) that both call a helper
# each get their own compiled helper (a cpp replacement must never run under eager).
_adapters: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
# Per thread: the factories of the segments running now, innermost last (run_with).
_running = threading.local()
# code -> the tuple of verdicts the C hook reads through the code's second extra slot
# (kept alive here): (family, argument types, ((position, dtype), ...), size limit), the
# argument kinds for which that family's compiled version of the code compiles nothing.
_verdicts: dict[tuple, tuple] = {}
_MAX_VERDICTS = 8   # per code (the newest kept): families die, their verdicts stay
_flaggers: dict[tuple, set] = {}   # code -> the families that flagged it


def _ident(code: types.CodeType) -> tuple:
    """The key of a code object in this module's tables: itself, by identity."""
    return id(code), code


def _module_name(source: str) -> str:
    key = f"{source}\0{sys.version}\0{FRAME_HOOK_CDEF}\0{read(HEADER)}".encode()
    return "_kiln_frame_hook_" + hashlib.sha256(key).hexdigest()[:16]


def _build(compiler: str) -> Any:
    """The module built when kiln was installed (kiln._native.frame_hook) when it is
    there and current, else the extension compiled (cached on disk per source and Python
    version) and imported; initialized."""
    source = read(_C_SOURCE)
    digest = extension_hash("frame_hook")
    module = installed_extension("frame_hook", digest)
    if module is None:
        name = _module_name(source)

        def write_c(c_path: str) -> None:
            with contextlib.redirect_stdout(io.StringIO()):   # cffi says "generating ..."
                frame_hook_ffi(name, source, digest).emit_c_code(c_path)
        module = build_extension(compiler, os.path.join(config.cache_dir, "frame_hook"), name,
                                 write_c, flags=("-D_CFFI_NO_LIMITED_API",
                                                 f"-I{os.path.dirname(HEADER)}"))
    if module.lib.kiln_hook_init() != 0:
        raise RuntimeError("kiln_hook_init failed")
    return module.lib


def free_threaded() -> bool:
    """A free-threaded CPython build (3.13t): its object model differs; no hook there."""
    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def load() -> Any:
    """The hook library, building it on first use; None when it cannot be built."""
    global _lib
    if _lib is not None:
        return _lib
    compiler = config.cxx
    if compiler in _failed:
        return None
    with _lock:
        if _lib is not None:
            return _lib
        try:
            if free_threaded():
                raise RuntimeError("this is a free-threaded CPython build, which the hook "
                                   "does not support")
            _lib = _build(compiler)
        except (OSError, RuntimeError, ImportError) as e:
            _failed[compiler] = str(e)
            warnings.warn(f"kiln: cannot build the frame-evaluation hook with {compiler!r} "
                          f"({type(e).__name__}: {str(e).splitlines()[0]}); falling back to "
                          f"wrapping helpers at the call sites kiln controls. Calls made inside "
                          f"code that runs as Python (a loop around a graph break) are not "
                          f"compiled. Set kiln.config.cxx / KILN_CXX to a working compiler.",
                          RuntimeWarning, stacklevel=3)
            return None
    return _lib


def available() -> bool:
    return load() is not None


def flag(code: types.CodeType, factory: Callable) -> bool:
    """Intercept calls to ``code`` while the hook is active: ``factory(fn)`` returns the
    replacement for function ``fn`` (called with the same arguments) or None."""
    lib = load()
    if lib is None:
        return False
    family = _family(factory)
    with _lock:
        _factories[_ident(code)] = factory
        _flaggers.setdefault(_ident(code), set()).add(family)
        lib.kiln_hook_flag(id(code), 1)
    _set_verdicts(code, lambda v: v[0] != family or v[1] is not None)   # its own now
    return True


def _family(factory: Callable) -> int:
    """The family of the compiled function whose factory this is (0: none)."""
    return getattr(getattr(factory, "__self__", factory), "hook_family", 0)


def unflag(code: types.CodeType) -> None:
    lib = load()
    with _lock:
        _flaggers.pop(_ident(code), None)
        if _factories.pop(_ident(code), None) is not None and lib is not None:
            lib.kiln_hook_flag(id(code), 0)


def is_flagged(code: types.CodeType) -> bool:
    return _ident(code) in _factories


@contextlib.contextmanager
def active():
    """Intercept flagged calls made by this thread inside the block."""
    lib = load()
    if lib is None:
        yield
        return
    lib.kiln_hook_enter()
    try:
        yield
    finally:
        lib.kiln_hook_exit()


@contextlib.contextmanager
def paused():
    """kiln's own work inside the block (a capture while a segment runs, when a helper is
    called for the first time): the code it calls runs as it is, flagged or not. kiln
    calls library code too (``dataclasses.replace``): intercepted there, a helper that
    flagged it compiled again, and that compile called it again (RecursionError)."""
    stack = getattr(_running, "factories", None)
    if stack is None:
        stack = _running.factories = []
    stack.append(None)
    try:
        yield
    finally:
        stack.pop()


def run_with(factory: Callable, fn: Callable, *args: Any) -> Any:
    """``fn(*args)`` with the hook active, flagged calls replaced by ``factory``'s
    (what an eager segment of a compiled function runs under: its own helpers). The
    verdicts of the factory's family (its compiled function's ``hook_family``) apply."""
    stack = getattr(_running, "factories", None)
    if stack is None:
        stack = _running.factories = []
    stack.append(factory)
    lib = _lib
    before = lib.kiln_hook_family(_family(factory))
    lib.kiln_hook_enter()
    try:
        return fn(*args)
    finally:
        lib.kiln_hook_exit()
        lib.kiln_hook_family(before)
        stack.pop()


def run_as_python(code: types.CodeType, family: int, slots: tuple | None, limit: int) -> None:
    """From now on, calls of ``code`` made while a segment of ``family`` runs, whose
    argument slots (positional, keyword-only, ``*args``, ``**kwargs``: the frame's order)
    hold values of the types ``slots`` holds, and arrays of the same dtypes with at most
    ``limit`` elements each, run as Python without asking the dispatcher: the family's
    compiled version of ``code`` compiles nothing for them (api.py's _remember_python).
    Only exact ndarrays are keyed by dtype; arguments of other types by type alone.
    ``slots`` None: every call of that family (it never flagged the code)."""
    if not family:
        return
    kinds = None if slots is None else tuple(map(type, slots))
    arrays = () if slots is None else tuple((i, v.dtype) for i, v in enumerate(slots)
                                           if type(v) is np.ndarray)
    verdict = (family, kinds, arrays, limit)
    _set_verdicts(code, lambda v: v != verdict, verdict)


def _set_verdicts(code: types.CodeType, keep: Callable, verdict: tuple | None = None) -> None:
    """The code's verdicts that ``keep`` keeps, after ``verdict`` (the newest first)."""
    lib = _lib
    if lib is None:
        return
    with _lock:
        old = _verdicts.get(_ident(code), ())
        kept = tuple(v for v in old if keep(v))
        new = ((verdict,) if verdict is not None else ()) + kept[:_MAX_VERDICTS - 1]
        if new == old:
            return
        _verdicts[_ident(code)] = new
        lib.kiln_hook_verdicts(id(code), id(new) if new else 0)
        del old   # freed only now that C points at the new tuple


def skipped() -> int:
    """How many flagged calls ran as Python on a verdict, without the dispatcher (tests)."""
    return int(_lib.kiln_hook_skipped()) if _lib is not None else 0


def intercepted() -> int:
    """How many calls the hook replaced so far (tests, benchmarks)."""
    return int(_lib.kiln_hook_intercepted()) if _lib is not None else 0


def installed() -> bool:
    """Is the hook installed in the interpreter right now (some thread inside active())?"""
    return bool(_lib.kiln_hook_installed()) if _lib is not None else False


def _adapter(fn: types.FunctionType, replacement: Callable) -> Callable:
    """Turn the frame's raw argument slots back into a call of ``replacement``."""
    code = fn.__code__
    npos, nkw = code.co_argcount, code.co_kwonlyargcount
    kwnames = code.co_varnames[npos:npos + nkw]
    has_varargs = bool(code.co_flags & 0x04)
    has_varkw = bool(code.co_flags & 0x08)
    # told of each call's argument slots after it returns or raises (a compiled helper
    # that learns which kinds of arguments it compiles nothing for: kiln/as_python.py)
    returned = getattr(replacement, "after_hooked_call", None)

    def call(raw: tuple) -> Any:
        args = raw[:npos]
        i = npos + nkw
        if has_varargs:
            args = args + raw[i]
            i += 1
        kwargs = dict(zip(kwnames, raw[npos:npos + nkw]))
        if has_varkw:
            kwargs.update(raw[i])
        try:
            return replacement(*args, **kwargs)
        finally:   # a call that raised (inspect's _static_getmro on a non-class) too
            if returned is not None:
                returned(raw)

    return call


def _dispatch(fn: types.FunctionType, raw: tuple) -> Callable | None:
    """Called by the C hook (no interception while it runs): the replacement or None,
    made by the innermost running segment's factory (run_with), else by the one that
    flagged the code."""
    flagged = _factories.get(_ident(fn.__code__))
    if flagged is None:
        return None
    stack = getattr(_running, "factories", None)
    if stack and stack[-1] is None:   # (paused: kiln's own calls)
        return None
    factory = stack[-1] if stack else flagged
    family = _family(factory) if stack else 0
    if family and family not in _flaggers.get(_ident(fn.__code__), ()):
        # Flagged by another compiled function only: this one compiles it no more than
        # it would have had it run first (scikit-learn's normalize ran 1.9x slower after
        # another estimator had flagged its validation helpers). C answers from now on.
        run_as_python(fn.__code__, family, None, 0)
        return None
    owner = getattr(factory, "__self__", factory)   # (a bound method: its compiled function)
    made = _adapters.get(fn)
    if made is not None and owner in made:
        return made[owner]
    replacement = factory(fn)
    if replacement is None:
        return None
    adapter = _adapter(fn, replacement)
    try:
        _adapters.setdefault(fn, {})[owner] = adapter
    except TypeError:
        pass
    return adapter


def forget() -> None:
    """Drop every replacement and factory (kiln.reset). Codes stay flagged in C; with no
    factory the dispatcher answers None and they run normally until flagged again."""
    with _lock:
        _adapters.clear()
        _factories.clear()
        if _lib is not None:
            for ident, _code in _verdicts:
                _lib.kiln_hook_verdicts(ident, 0)
        _verdicts.clear()
        _flaggers.clear()
