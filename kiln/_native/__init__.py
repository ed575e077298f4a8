"""kiln's C extensions as built when kiln is installed.

kiln ships four small CPython extensions as C source: the cache-hit path
(``guards/fastcheck.c``), the kernel launcher (``runtime/launch.c``), the wrapper run as
data (``runtime/fast_call.c``, against NumPy's headers) and the frame-evaluation hook
(``capture/frame_hook.c``, through cffi); the first two are split by responsibility into
several C files and an internal header each (:data:`PARTS`). ``setup.py`` builds each into this package
(``kiln._native.fastcheck`` …) when kiln is installed (``pip install -e .`` builds them in
place, next to this file), as optional extensions: an install without a working C
compiler still succeeds. At run time kiln imports the installed module and uses it when
it was built from the C source kiln holds now (its embedded :func:`source_hash`); when it
is absent, fails to import (another Python or NumPy ABI) or is stale (the C source was
edited after the install), kiln builds the extension into ``<cache_dir>`` on first use
instead (``kiln/cext.py``, ``capture/frame_hook.py``): the fallback, ~0.35-0.7 s of g++
per extension once per cache directory.

This module is plain Python with no kiln imports: ``setup.py`` loads it by path.

    >>> source_hash("int x;", "/* header */") == source_hash("int x;", "/* header */")
    True
    >>> sorted(EXTENSIONS)
    ['fast_call', 'fastcheck', 'frame_hook', 'launch']
"""
from __future__ import annotations

import hashlib
import os
from typing import Any

_KILN = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The header the plain extensions share (hashed with each of them).
HEADER = os.path.join(_KILN, "cext.h")

# name in this package -> (its C source, built against NumPy's headers, built through cffi)
EXTENSIONS: dict[str, tuple[str, bool, bool]] = {
    "fastcheck": (os.path.join(_KILN, "guards", "fastcheck.c"), False, False),
    "launch": (os.path.join(_KILN, "runtime", "launch.c"), False, False),
    "fast_call": (os.path.join(_KILN, "runtime", "fast_call.c"), True, False),
    "frame_hook": (os.path.join(_KILN, "capture", "frame_hook.c"), False, True),
}

# An extension split by responsibility into several files (one module): its other C files,
# compiled with the main one (the source above, which defines the module), and its internal
# header. Every part is hashed with the main source, so a change in any part rebuilds it.
PARTS: dict[str, tuple[str, ...]] = {
    "fastcheck": tuple(os.path.join(_KILN, "guards", f) for f in (
        "fastcheck_arrays.c", "fastcheck_dispatch.c", "fastcheck_entry.c", "fastcheck_graph.c",
        "fastcheck.h")),
    "launch": tuple(os.path.join(_KILN, "runtime", f) for f in (
        "launch_results.c", "launch_fp.c", "launch_layouts.c", "launch.h")),
}

# The frame hook's C functions as cffi declares them (kiln_hook_source: see frame_hook_ffi).
FRAME_HOOK_CDEF = """
int kiln_hook_init(void);
int kiln_hook_flag(intptr_t code, int on);
void kiln_hook_enter(void);
void kiln_hook_exit(void);
long long kiln_hook_intercepted(void);
int kiln_hook_installed(void);
int kiln_hook_depth(void);
int kiln_hook_verdicts(intptr_t code, intptr_t verdicts);
intptr_t kiln_hook_family(intptr_t now);
long long kiln_hook_skipped(void);
void kiln_hook_baseline(int on);
const char *kiln_hook_source(void);
"""


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def source_hash(*texts: str) -> str:
    """What an installed module embeds (``__kiln_source__``, or the frame hook's
    ``kiln_hook_source()``) and kiln compares with the sources it holds now."""
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]


def extension_hash(name: str) -> str:
    """The source hash of extension ``name`` as its files read now."""
    source, _, cffi_module = EXTENSIONS[name]
    if cffi_module:
        return source_hash(read(source), FRAME_HOOK_CDEF, read(HEADER))
    return source_hash(read(source), *(read(p) for p in PARTS.get(name, ())), read(HEADER))


def frame_hook_ffi(module_name: str, source: str, digest: str) -> Any:
    """A cffi builder of the frame hook as module ``module_name``; ``digest`` is what its
    ``kiln_hook_source()`` returns. cffi defaults to the limited API, which hides the PEP
    523 functions: compile its C with ``-D_CFFI_NO_LIMITED_API``."""
    import cffi
    ffi = cffi.FFI()
    ffi.cdef(FRAME_HOOK_CDEF)
    ffi.set_source(module_name, source + "\nstatic const char *kiln_hook_source(void) "
                   f"{{ return \"{digest}\"; }}\n")
    return ffi
