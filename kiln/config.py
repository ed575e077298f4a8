"""kiln's settings: one typed object, read in one place.

Every knob has a ``KILN_*`` environment variable (see docs/env_vars.md) that sets its
default when kiln is imported. Changes apply to compilations after the change::

    import kiln
    kiln.config.recompile_limit = 16
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not an integer; set it to a whole number such as {default}")


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name}={raw!r} is not a switch; set it to 1 (on) or 0 (off)")


def _default_threads() -> int:
    """OMP_NUM_THREADS when set (its first number, as OpenMP reads it: the usual way to keep
    each process of a pool on one thread), else the CPUs this process may run on (its
    affinity: ``taskset``, a container's cpuset), not every CPU of the machine: two
    threads on one allowed CPU make each parallel region wait for a descheduled thread."""
    omp = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if omp.isdigit() and int(omp) > 0:
        return int(omp)
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):   # not on Linux
        return os.cpu_count() or 1


@dataclass
class Config:
    # Cache entries per compiled function before new inputs run uncompiled.
    recompile_limit: int = field(default_factory=lambda: _env_int("KILN_RECOMPILE_LIMIT", 8))
    # Where compiled kernels are cached on disk.
    cache_dir: str = field(default_factory=lambda: os.environ.get(
        "KILN_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "kiln")))
    # C++ compiler command and flags (used by the cpp backend).
    cxx: str = field(default_factory=lambda: os.environ.get("KILN_CXX", "g++"))
    cxx_flags: str = field(default_factory=lambda: os.environ.get(
        "KILN_CXX_FLAGS", "-O3 -march=native -fopenmp -fno-trapping-math"))
    # Threads for generated kernels (the wrapper passes them to each parallel region).
    num_threads: int = field(default_factory=lambda: _env_int("KILN_NUM_THREADS", _default_threads()))
    # Check every graph after every pass (tests turn this on).
    debug_checks: bool = field(default_factory=lambda: _env_bool("KILN_DEBUG_CHECKS", False))
    # Run small graphs as Python when compiling them would be slower (kiln/runtime/cost.py).
    cost_model: bool = field(default_factory=lambda: _env_bool("KILN_COST_MODEL", True))
    # Run backend="triton" through Triton's interpreter on NumPy arrays (tests, CI without a GPU).
    triton_interpret: bool = field(default_factory=lambda: _env_bool("KILN_TRITON_INTERPRET", False))
    # Check array arguments on a cache hit with a small C helper (guards/fastcheck.c).
    fast_guards: bool = field(default_factory=lambda: _env_bool("KILN_FAST_GUARDS", True))
    # Time-stepping range loops over whole arrays become one graph loop node whose body is
    # compiled once (kiln/capture/graph_loop.py); off: they unroll as before.
    graph_loops: bool = field(default_factory=lambda: _env_bool("KILN_GRAPH_LOOPS", True))
    # Directory that receives every artifact of every compiled graph.
    debug_dir: str | None = field(default_factory=lambda: os.environ.get("KILN_DEBUG_DIR") or None)


config = Config()
