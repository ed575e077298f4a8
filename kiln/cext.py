"""Build and import the small CPython extensions kiln ships as C source (the frame hook,
the cache-hit path, the kernel launcher), once per source and Python version, cached on
disk under ``kiln.config.cache_dir``. Kernels are built elsewhere (``runtime/build.py``).

The cache-hit path (guards/fastcheck.c), the launcher (runtime/launch.c) and the
wrapper run as data (runtime/fast_call.c) share ``cext.h`` (array fields, argument
checks, type and module boilerplate): each is built by :func:`shipped_extension`, with this folder on the include path, named by a hash of
their source and the header."""
from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import sysconfig
import tempfile
import threading
from types import ModuleType
from typing import Callable

EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"


HEADER = os.path.join(os.path.dirname(__file__), "cext.h")


def build_extension(compiler: str, folder: str, name: str, write_c: Callable[[str], None],
                    flags: tuple[str, ...] = ()) -> ModuleType:
    """Import extension ``name`` from ``folder``, first compiling it from the C file that
    ``write_c(path)`` writes when it is not there yet. Concurrent builders (threads,
    processes) agree: the finished file is moved into place atomically."""
    os.makedirs(folder, exist_ok=True)
    so_path = os.path.join(folder, name + EXT_SUFFIX)
    if not os.path.exists(so_path):
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            c_path = os.path.join(tmp, name + ".c")
            write_c(c_path)
            out = os.path.join(tmp, name + EXT_SUFFIX)
            include = sysconfig.get_paths()["include"]
            cmd = [compiler, "-x", "c", "-O2", "-shared", "-fPIC",
                   "-Werror=implicit-function-declaration", *flags, f"-I{include}", c_path,
                   "-o", out]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError(f"`{' '.join(cmd)}` failed:\n{proc.stderr[-2000:]}")
            os.replace(out, so_path)
    spec = importlib.util.spec_from_file_location(name, so_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_lock = threading.Lock()
_shipped: dict[tuple[str, str], ModuleType | None] = {}


def shipped_extension(c_source: str, prefix: str, folder: str,
                      numpy_api: bool = False) -> ModuleType | None:
    """The extension kiln ships as ``c_source`` (a file that includes ``cext.h`` and
    defines its module through KILN_MODULE_NAME / KILN_MODULE_NAME_STR), built with the configured compiler into
    ``<cache_dir>/<folder>`` once per source and Python version; None when it cannot be
    built. Loaded once per process and compiler. ``numpy_api``: it includes NumPy's C
    headers (``<numpy/arrayobject.h>``, ``import_array()`` in its init), so it is built
    per NumPy version too."""
    from .config import config
    compiler = config.cxx
    key = (c_source, compiler)
    found = _shipped.get(key, False)
    if found is not False:
        return found
    with _lock:
        if key not in _shipped:
            with open(c_source) as f:
                source = f.read()
            with open(HEADER) as f:
                header = f.read()
            flags = [f"-I{os.path.dirname(HEADER)}"]
            version = sys.version
            if numpy_api:
                import numpy
                flags.append(f"-I{numpy.get_include()}")
                version += f"\0numpy {numpy.__version__}"
            name = prefix + hashlib.sha256(f"{source}\0{header}\0{version}".encode()).hexdigest()[:16]

            def write_c(c_path: str) -> None:
                with open(c_path, "w") as f:
                    f.write(f"#define KILN_MODULE_NAME {name}\n#define KILN_MODULE_NAME_STR \"{name}\"\n")
                    f.write(source)
            try:
                _shipped[key] = build_extension(compiler, os.path.join(config.cache_dir, folder), name, write_c,
                                                tuple(flags))
            except (OSError, RuntimeError, ImportError):
                _shipped[key] = None
        return _shipped[key]
