"""Launch compiled Triton kernels on CuPy arrays, without torch.

Triton's own CUDA launcher imports torch in older versions (<= 3.7) and uses the default
stream when torch is absent; kiln launches through CuPy instead: the cubin is loaded
with ``cupy.cuda.function.Module`` once per device, and each launch passes the
arguments in the kernel's explicit signature (arrays as pointers, scalars as NumPy
scalars of the signature's type, so a float64 stays float64) on the caller's current
CuPy stream. Triton appends scratch-pointer parameters to every kernel (global scratch,
and from 3.5 a profiler scratch); their number is read from the PTX entry, and they get
NULL, or a CuPy buffer when the kernel declares scratch memory.

Everything importing CuPy does so lazily: this module imports on machines without it.
"""
from __future__ import annotations

import re
import threading
from typing import Any

import numpy as np

from ..errors import KilnError

_SCALARS = {"fp32": np.float32, "fp64": np.float64, "i1": np.bool_, "i8": np.int8,
            "i16": np.int16, "i32": np.int32, "i64": np.int64, "u32": np.uint32,
            "u64": np.uint64}
_ENTRY = re.compile(r"\.entry\s+\w+\s*\(([^)]*)\)")


def import_cupy() -> Any:
    try:
        import cupy
    except ImportError as e:
        raise KilnError(f"Triton kernels run on CuPy arrays on a GPU, and CuPy does not import "
                        f"here ({e}); install cupy-cuda12x or cupy-cuda13x") from None
    return cupy


def param_count(ptx: str) -> int:
    """How many parameters the PTX entry of a compiled kernel takes."""
    match = _ENTRY.search(ptx)
    if match is None:
        raise KilnError("kiln bug: no .entry in a compiled Triton kernel's PTX")
    return match.group(1).count(".param")


class CupyLauncher:
    """One compiled kernel, callable as ``launcher(grid, args)`` on CuPy arrays."""

    def __init__(self, compiled: Any, signature: dict[str, str]) -> None:
        md = compiled.metadata
        self.name = md.name
        self.cubin = compiled.asm["cubin"]
        self.shared = md.shared
        self.block = (md.num_warps * md.warp_size if hasattr(md, "warp_size") else md.num_warps * 32, 1, 1)
        self.types = [_SCALARS.get(ty) for ty in signature.values()]
        self.extra = param_count(compiled.asm["ptx"]) - len(signature)
        self.scratch = [getattr(md, "global_scratch_size", 0), getattr(md, "profile_scratch_size", 0)]
        self._functions: dict[int, tuple] = {}
        self._lock = threading.Lock()

    def function(self, device: int) -> Any:
        entry = self._functions.get(device)
        if entry is None:
            cupy = import_cupy()
            with self._lock, cupy.cuda.Device(device):
                module = cupy.cuda.function.Module()
                module.load(self.cubin)
                fn = module.get_function(self.name)
                if self.shared > 48 * 1024:
                    fn.max_dynamic_shared_size_bytes = self.shared
                entry = self._functions[device] = (module, fn)   # the module must stay alive
        return entry[1]

    def __call__(self, grid: tuple, args: list, device: int, stream: Any) -> None:
        params = [a if ty is None else ty(a) for a, ty in zip(args, self.types)]
        keep = []
        for i in range(self.extra):
            size = self.scratch[i] if i < len(self.scratch) else 0
            if size:
                import cupy
                buf = cupy.empty(size * grid[0] * grid[1] * grid[2], dtype=np.uint8)
                keep.append(buf)
                params.append(buf)
            else:
                params.append(None)
        self.function(device)(tuple(grid), self.block, tuple(params), shared_mem=self.shared,
                              stream=stream)
        del keep   # freed in stream order by CuPy's pool


def current_target() -> tuple:
    """The ``GPUTarget`` tuple of the current CuPy device (``("cuda", 90, 32)`` on an H100/H200)."""
    cupy = import_cupy()
    cc = int(cupy.cuda.Device().compute_capability)
    return ("cuda", cc, 32)
