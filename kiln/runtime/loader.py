"""Load a built kernel library with cffi (ABI mode: ``ffi.dlopen``), once per process."""
from __future__ import annotations

import threading

_LOCK = threading.Lock()
_LOADED: dict[str, tuple] = {}


def load_library(path: str, cdefs: str) -> tuple:
    """``(lib, ffi)`` for the shared library at ``path`` declaring ``cdefs``.

        >>> # lib, ffi = load_library('/tmp/k.so', 'void k(void*, int);')
    """
    key = path
    with _LOCK:
        found = _LOADED.get(key)
        if found is None:
            import cffi
            ffi = cffi.FFI()
            ffi.cdef(cdefs)
            lib = ffi.dlopen(path)
            found = _LOADED[key] = (lib, ffi)
        return found
