"""Load a built kernel library once per process: symbol addresses through ctypes, and
cffi's ``lib`` and ``ffi`` (ABI mode: ``ffi.dlopen``) only when something calls through
cffi. A compiled call reaches its kernels by address (the C launcher, runtime/launch.py),
so the first compile in a process no longer pays for cffi parsing the declarations
(pycparser's import and parse: ~20 ms of a cold W1's first call)."""
from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

# libgomp's threads spin ~300k iterations after each parallel region before sleeping; on
# a 2-core machine that spinning starves the BLAS threads of the matmul that often comes
# next (measured: NumPy's matmul 30x slower right after a kernel). A short spin keeps
# back-to-back kernels cheap and yields quickly. Read by libgomp when it is first loaded,
# i.e. at our first dlopen; a value the user set wins.
os.environ.setdefault("GOMP_SPINCOUNT", "10000")

_LOCK = threading.RLock()
_LOADED: dict[str, tuple] = {}

# In a forked child kernels run on one thread: GNU OpenMP's thread pool does not survive
# fork() (cpp_prelude.h says why). Libraries loaded before the fork learn it from their own
# fork handler; one loaded in the child is told here.
_FORKED_CHILD = False


def _after_fork_in_child() -> None:
    global _FORKED_CHILD
    _FORKED_CHILD = True


os.register_at_fork(after_in_child=_after_fork_in_child)


class Library:
    """A loaded kernel library. ``address(name)`` is a symbol's address; any other
    attribute is that function of the cffi ``lib``, built on first use."""

    def __init__(self, path: str, cdefs: str) -> None:
        self._path, self._cdefs = path, cdefs
        self._handle = ctypes.CDLL(path)
        self._cffi: tuple | None = None
        if _FORKED_CHILD and hasattr(self._handle, "kiln_forked_child"):
            self._handle.kiln_forked_child()

    def address(self, name: str) -> int:
        return ctypes.cast(getattr(self._handle, name), ctypes.c_void_p).value

    def cffi(self) -> tuple:
        """``(lib, ffi)`` of cffi for this library (its declarations parsed once)."""
        with _LOCK:
            if self._cffi is None:
                import cffi
                ffi = cffi.FFI()
                ffi.cdef(self._cdefs)
                self._cffi = (ffi.dlopen(self._path), ffi)
            return self._cffi

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.cffi()[0], name)


class _LazyFFI:
    """The library's cffi ``ffi``, built when first used."""

    def __init__(self, library: Library) -> None:
        self._library = library

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._library.cffi()[1], name)


def load_library(path: str, cdefs: str) -> tuple:
    """``(lib, ffi)`` for the shared library at ``path`` declaring ``cdefs``: a
    :class:`Library` and its cffi ``ffi``, both parsed only when first used.

        >>> # lib, ffi = load_library('/tmp/k.so', 'void k(void*, int);')
    """
    with _LOCK:
        found = _LOADED.get(path)
        if found is None:
            lib = Library(path, cdefs)
            found = _LOADED[path] = (lib, _LazyFFI(lib))
        return found
