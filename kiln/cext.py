"""Import the small CPython extensions kiln ships as C source (the frame hook, the
cache-hit path, the kernel launcher, the wrapper run as data): the modules built when
kiln was installed (kiln/_native, setup.py) when they are there and current, else built
at first use, once per source and Python version, and cached on disk under
``kiln.config.cache_dir``. Kernels are built elsewhere (``runtime/build.py``).

The cache-hit path (guards/fastcheck.c), the launcher (runtime/launch.c) and the
wrapper run as data (runtime/fast_call.c) share ``cext.h`` (array fields, argument
checks, type and module boilerplate): each is loaded by :func:`shipped_extension`; its
cache build has this folder on the include path and is named by a hash of its sources
(every part of one split into several files: ``_native.PARTS``), the header and the Python
(and NumPy) version."""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import sysconfig
import threading
from types import ModuleType
from typing import Callable

from ._native import HEADER, PARTS, read, source_hash

EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"


def build_extension(compiler: str, folder: str, name: str, write_c: Callable[[str], None],
                    flags: tuple[str, ...] = (), parts: dict[str, str] | None = None) -> ModuleType:
    """Import extension ``name`` from ``folder``, first compiling it from the C file that
    ``write_c(path)`` writes when it is not there yet. ``parts``: more files of it (file
    name -> text), written beside that file, the ``.c`` ones compiled and linked with it
    (its other translation units; a header its files include by that name). Concurrent
    builders (threads, processes) agree: the finished file is moved into place atomically."""
    os.makedirs(folder, exist_ok=True)
    so_path = os.path.join(folder, name + EXT_SUFFIX)
    if not os.path.exists(so_path):
        import subprocess   # (here: a process that finds the extension built never needs it)
        import tempfile
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            c_path = os.path.join(tmp, name + ".c")
            write_c(c_path)
            sources = [c_path]
            for file_name, text in (parts or {}).items():
                with open(os.path.join(tmp, file_name), "w", encoding="utf-8") as f:
                    f.write(text)
                if file_name.endswith(".c"):
                    sources.append(os.path.join(tmp, file_name))
            out = os.path.join(tmp, name + EXT_SUFFIX)
            include = sysconfig.get_paths()["include"]
            # (-DNDEBUG as setup.py's builds: CPython's inline functions assert otherwise,
            # ~50 ns of a SimpleEntry cache hit on 3.13)
            # ("-x c" before each file: g++ given one "-x c" and several files compiles the
            # second one on as C++)
            cmd = [compiler, "-O2", "-DNDEBUG", "-shared", "-fPIC",
                   "-Werror=implicit-function-declaration", *flags, f"-I{include}",
                   *(arg for path in sources for arg in ("-x", "c", path)), "-o", out]
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


def installed_extension(name: str, digest: str) -> ModuleType | None:
    """``kiln._native.<name>`` as built when kiln was installed (kiln/_native), if it
    imports here (this Python's and NumPy's ABI) and was built from the sources whose
    hash is ``digest``; else None, and the caller builds it into the cache."""
    try:
        module = importlib.import_module(f"kiln._native.{name}")
    except (ImportError, OSError, RuntimeError):
        return None
    lib = getattr(module, "lib", None)      # a cffi module: the hash is a C function
    built = (module.__dict__.get("__kiln_source__") if lib is None else
             module.ffi.string(lib.kiln_hook_source()).decode())
    if built == digest:
        return module
    from .logs import log
    log("perf", f"kiln/_native/{name} was built from other sources than kiln holds now (edited "
                f"since the install): building it into the cache; `pip install -e .` rebuilds it")
    return None


def shipped_extension(c_source: str, prefix: str, folder: str,
                      numpy_api: bool = False) -> ModuleType | None:
    """The extension kiln ships as ``c_source`` (a file that includes ``cext.h`` and
    defines its module through KILN_MODULE_NAME / KILN_MODULE_NAME_STR; with its other
    files, ``_native.PARTS[folder]``, when it is split into several): the one built at
    install time (``kiln._native.<folder>``, :func:`installed_extension`) when it is
    there and current, else built with the configured compiler into
    ``<cache_dir>/<folder>`` once per source and Python version; None when it cannot be
    built. Loaded once per process and compiler. ``numpy_api``: it includes NumPy's C
    headers (``<numpy/arrayobject.h>``, ``import_array()`` in its init), so the cache
    build is per NumPy version too (an installed one that NumPy's ABI check refuses
    fails to import)."""
    from .config import config
    compiler = config.cxx
    key = (c_source, compiler)
    found = _shipped.get(key, False)
    if found is not False:
        return found
    with _lock:
        if key not in _shipped:
            source, header = read(c_source), read(HEADER)
            parts = {os.path.basename(p): read(p) for p in PARTS.get(folder, ())}
            module = installed_extension(folder, source_hash(source, *parts.values(), header))
            if module is None:
                module = _build_shipped(compiler, source, parts, header, prefix, folder, numpy_api)
            _shipped[key] = module
        return _shipped[key]


def _build_shipped(compiler: str, source: str, parts: dict[str, str], header: str, prefix: str,
                   folder: str, numpy_api: bool) -> ModuleType | None:
    from .config import config
    flags = [f"-I{os.path.dirname(HEADER)}"]
    version = sys.version
    if numpy_api:
        import numpy
        flags.append(f"-I{numpy.get_include()}")
        version += f"\0numpy {numpy.__version__}"
    # (NDEBUG in the name: modules cached before it was a flag carry asserts)
    texts = "\0".join((source, *(f"{n}\0{t}" for n, t in parts.items()), header))
    name = prefix + hashlib.sha256(f"{texts}\0{version}\0NDEBUG".encode()).hexdigest()[:16]

    def write_c(c_path: str) -> None:
        with open(c_path, "w") as f:
            f.write(f"#define KILN_MODULE_NAME {name}\n#define KILN_MODULE_NAME_STR \"{name}\"\n")
            f.write(source)
    try:
        return build_extension(compiler, os.path.join(config.cache_dir, folder), name, write_c,
                               tuple(flags), parts)
    except (OSError, RuntimeError, ImportError):
        return None
