"""Load a built kernel library with cffi (ABI mode: ``ffi.dlopen``), once per process."""
from __future__ import annotations

import os
import threading

# libgomp's threads spin ~300k iterations after each parallel region before sleeping; on
# a 2-core machine that spinning starves the BLAS threads of the matmul that often comes
# next (measured: NumPy's matmul 30x slower right after a kernel). A short spin keeps
# back-to-back kernels cheap and yields quickly. Read by libgomp when it is first loaded,
# i.e. at our first dlopen; a value the user set wins.
os.environ.setdefault("GOMP_SPINCOUNT", "10000")

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
