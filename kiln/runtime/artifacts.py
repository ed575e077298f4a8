"""Whole-graph artifact cache: a warm process skips lowering and codegen too.

Key: the graph's printed code, its placeholders' metas, the example inputs' layouts, the
bytes of its constant arrays, the settings that shape code (threads, compiler, flags)
and a hash of kiln's own lowering/runtime/ops sources (a kiln upgrade never loads stale
code). Value: ``<cache_dir>/graphs/<k[:2]>/<k>.json`` with the wrapper source, the C++
and the library path; the library is checked (checksum) before the entry is used.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from typing import Any

import numpy as np

from ..config import config
from .build import _atomic_write, _valid, file_stamp, remembered

_SOURCE_DIRS = ("lowering", "runtime", "codegen_templates", "ops")


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = []
    for sub in _SOURCE_DIRS:
        folder = os.path.join(root, sub)
        for name in sorted(os.listdir(folder)):
            if name.endswith((".py", ".j2", ".h")):
                files.append(os.path.join(folder, name))
    return stamped_hash(files)


def stamped_hash(files: list[str]) -> str:
    """A hash of the files' names and bytes. Reading kiln's sources takes ~2 ms of a warm
    process's first call, so the hash is kept in the cache under the files' paths, sizes,
    mtimes and inodes (an edit, a checkout or an upgrade changes one) and read back while
    they are the same."""
    try:
        stamp = [file_stamp(path) for path in files]
    except OSError:
        return _hash_sources(files)
    return remembered("code_versions", "\0".join(stamp), lambda: _hash_sources(files))


def _hash_sources(files: list[str]) -> str:
    h = hashlib.sha256()
    for path in files:
        with open(path, "rb") as f:
            h.update(os.path.basename(path).encode() + f.read())
    return h.hexdigest()


def _layout(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array{value.shape}{value.strides}{value.dtype.str}{value.flags.c_contiguous}"
    return type(value).__name__


def artifact_key(graph: Any, example_inputs: list, reinfer: bool) -> str | None:
    from ..ir.printer import python_code
    consts: dict[str, Any] = {}
    from .build import CompilerUnavailable, compiler_id, cpu_features
    try:
        toolchain = compiler_id(config.cxx)
    except CompilerUnavailable:
        toolchain = "no compiler"
    # The machine and the compiler too: a cache shared between hosts (an NFS home) must
    # not hand one CPU's -march=native library to another.
    parts = [python_code(graph, consts), code_version(), str(reinfer),
             str(config.num_threads), config.cxx, config.cxx_flags, toolchain, cpu_features(),
             repr(sorted(getattr(graph, "donated", {}).items()))]
    for node in graph.placeholders:
        parts.append(repr((node.name, node.val, node.meta.get("dynamic_dims"))))
    parts += [_layout(v) for v in example_inputs]
    # A build may take a run-time slice bound's value (lowering specialize_ints).
    from ..lowering.slice_bounds import slice_bound_positions
    parts += [repr(example_inputs[i]) for i in sorted(slice_bound_positions(graph))
              if i < len(example_inputs)]
    for node in graph.nodes:
        if node.kind == "constant":
            consts[node.name] = node.target
    for name, value in sorted(consts.items()):
        if isinstance(value, np.ndarray):
            parts.append(f"{name}{value.shape}{value.dtype.str}")
            parts.append(hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest())
        elif isinstance(value, (int, float, complex, bool, str, type(None), np.generic, np.dtype)):
            parts.append(f"{name}={value!r}")
        else:
            return None  # an object without a stable text: do not cache
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _path(key: str) -> str:
    return os.path.join(config.cache_dir, "graphs", key[:2], key + ".json")


_FIELDS = {"wrapper": str, "cpp": str, "so": str, "kernels": list, "constants": list}
# Optional: the wrapper's other globals (a loop node's body, runner of its C++ loop or its
# compiled graph), each found in the graph where the build found it (:func:`locate`).
_OBJECTS = "objects"


def load(key: str) -> dict | None:
    """The cached entry, or None (then the graph is built again) when it is missing, not
    an entry of this shape, fails its checksum, or names a library that is gone."""
    try:
        with open(_path(key)) as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or any(not isinstance(entry.get(k), t) for k, t in _FIELDS.items()):
        return None
    if entry.get("sha256") != _digest(entry):
        return None
    if entry["so"] and not _valid(entry["so"]):
        return None
    return entry


def _digest(entry: dict) -> str:
    text = "\0".join([entry["wrapper"], entry["cpp"], entry["so"], *entry["kernels"], *entry["constants"],
                      json.dumps(entry.get(_OBJECTS, {}), sort_keys=True)])
    return hashlib.sha256(text.encode()).hexdigest()


def store(key: str, entry: dict) -> None:
    path = _path(key)
    entry = dict(entry, sha256=_digest(entry))
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _atomic_write(path, json.dumps(entry).encode())
    except OSError:
        pass


def _count_path(key: str) -> str:
    return os.path.join(config.cache_dir, "graphs", key[:2], key + ".kernels")


def load_kernel_count(key: str) -> int | None:
    """The kernel count :func:`store_kernel_count` kept for ``key``, or None."""
    try:
        with open(_count_path(key)) as f:
            count = int(f.read())
    except (OSError, ValueError):
        return None
    return count if count >= 0 else None


def store_kernel_count(key: str, count: int) -> None:
    """Keep how many kernels the graph of ``key`` builds (the cost model's question about
    small unrolled loops, runtime/backend.py ``built_kernel_count``): a warm process then
    answers it without lowering the graph (0.3 s for filterpy's Kalman steps)."""
    path = _count_path(key)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _atomic_write(path, str(count).encode())
    except OSError:
        pass


def graph_constants(graph: Any, names: list) -> dict[str, Any] | None:
    """The values of the wrapper globals ``names`` (``_c_<node>``: GraphLowering's names
    for the graph's constant arrays, as the build that stored them set them), or None
    when the graph has no such constant."""
    values = {f"_c_{n.name}": n.target for n in graph.nodes if n.kind == "constant"}
    if any(name not in values for name in names):
        return None
    return {name: values[name] for name in names}


def _places(value: Any, path: list):
    """``(path, leaf)`` for every leaf of a node's argument (tuples and lists opened)."""
    if isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            yield from _places(v, path + [i])
    else:
        yield path, value


def locate(graph: Any, objects: dict[str, Any]) -> dict[str, list] | None:
    """Where in ``graph`` each of the wrapper's globals ``objects`` is (the same object):
    ``[node index, "args" | "kwargs", key, ...]``, so that a warm process takes its own
    graph's object (a loop body it prepared itself); None when one is not in the graph
    (then the entry is not stored)."""
    where: dict[int, list] = {}
    for k, node in enumerate(graph.nodes):
        for part, value in (("args", node.args), ("kwargs", getattr(node, "kwargs", {}))):
            items = value.items() if isinstance(value, dict) else enumerate(value or ())
            for key, v in items:
                for path, leaf in _places(v, [k, part, key]):
                    where.setdefault(id(leaf), path)
    found = {name: where.get(id(obj)) for name, obj in objects.items()}
    return None if any(p is None for p in found.values()) else found


def resolve(graph: Any, places: dict[str, list]) -> dict[str, Any] | None:
    """The objects :func:`locate` placed, taken from this process's ``graph`` (None when
    a place is not there)."""
    out = {}
    try:
        for name, (k, part, *keys) in places.items():
            value = getattr(graph.nodes[k], part)
            for key in keys:
                value = value[key]
            out[name] = value
    except (IndexError, KeyError, TypeError, ValueError, AttributeError):
        return None
    return out
