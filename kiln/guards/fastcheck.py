"""kiln's cache-hit path in C (``fastcheck.c``): the array guard (one call instead of
three attribute reads and a tuple per array argument) and the dispatcher base class
(trying the cache entries without a Python frame). Built with the configured compiler on
first use and cached on disk; without a working compiler, or with
``KILN_FAST_GUARDS=0``, the generated check functions keep the plain Python form and the
dispatcher stays Python (same answers, a little slower).

    >>> import numpy as np
    >>> check = array_check()
    >>> check is None or (check(np.ones((4, 3)), np.ndarray, np.dtype("float64"), (4, -1)),
    ...                   check(np.ones((4, 1)), np.ndarray, np.dtype("float64"), (4, -1)))
    True
"""
from __future__ import annotations

import hashlib
import os
import sys
import threading
from types import ModuleType
from typing import Callable

from ..cext import build_extension
from ..config import config

_C_SOURCE = os.path.join(os.path.dirname(__file__), "fastcheck.c")
_lock = threading.Lock()
_loaded: dict[str, ModuleType | None] = {}   # compiler -> the module, or None if it failed


def _build(compiler: str) -> ModuleType:
    with open(_C_SOURCE) as f:
        source = f.read()
    name = "_kiln_fastcheck_" + hashlib.sha256(f"{source}\0{sys.version}".encode()).hexdigest()[:16]

    def write_c(c_path: str) -> None:
        with open(c_path, "w") as f:
            f.write(f"#define KILN_MODULE_NAME {name}\n#define KILN_MODULE_NAME_STR \"{name}\"\n")
            f.write(source)
    return build_extension(compiler, os.path.join(config.cache_dir, "fastcheck"), name, write_c)


def module() -> ModuleType | None:
    """The built extension, or None (disabled, or it cannot be built)."""
    if not config.fast_guards:
        return None
    compiler = config.cxx
    found = _loaded.get(compiler, False)
    if found is not False:
        return found
    with _lock:
        if compiler not in _loaded:
            try:
                _loaded[compiler] = _build(compiler)
            except (OSError, RuntimeError, ImportError):
                _loaded[compiler] = None
        return _loaded[compiler]


def array_check() -> Callable | None:
    """``array_matches(x, np.ndarray, dtype, shape)``, or None."""
    m = module()
    return None if m is None else m.array_matches


def dispatcher_base() -> type | None:
    """The C ``Dispatcher`` type a compiled function's class derives from, or None."""
    m = module()
    return None if m is None else m.Dispatcher
