"""Load generated Triton kernel modules and compile their kernels ahead of time.

A generated module is Python source holding ``@triton.jit`` functions. Triton reads a
kernel's source with ``inspect`` (to compile it, and the interpreter to rewrite it), so
the module is written to ``<cache_dir>/triton/src/<k[:2]>/<name>_<k>.py`` and imported
from there rather than exec'd from a string. Whether ``@triton.jit`` builds compiled or
interpreted functions is decided when it decorates, so a module is loaded once per mode.

``compile_kernel`` runs ``triton.compile`` for a target (``GPUTarget("cuda", 90, 32)``
works without a GPU: TTIR, PTX and a cubin come out of the bundled toolchain), with
``enable_fp_fusion=False`` (no fused multiply-adds: ``a*x + b*y`` rounds twice, as in
NumPy). Triton's own cache lives under ``<cache_dir>/triton/cache``, so a warm process
loads every cubin from disk instead of compiling it::

    >>> import kiln.runtime.triton_build as tb
    >>> mod = tb.load_module(tb.EXAMPLE, "example", interpret=False)   # doctest: +SKIP
    >>> tb.compile_kernel(mod.kiln_example, {"x": "*fp32", "n": "i32"},
    ...                   {"XBLOCK": 128}, target=tb.SM90).asm["ttir"][:9]  # doctest: +SKIP
    'module {\\n'
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading
import types
from typing import Any

from ..config import config
from ..errors import KilnError

# A CPU-only machine can compile for this target (tests and `kiln explain` do).
SM90 = ("cuda", 90, 32)

_modules: dict[tuple[str, bool], types.ModuleType] = {}
_compiled: dict[tuple, Any] = {}
_lock = threading.RLock()
stats = {"compiles": 0, "compile_seconds": 0.0}


class TritonUnavailable(KilnError):
    """Triton is not installed (``pip install 'kiln[triton]'``)."""


def import_triton() -> types.ModuleType:
    """The ``triton`` package, or a KilnError saying how to install it."""
    try:
        import triton
    except ImportError as e:
        raise TritonUnavailable(
            f"the triton backend needs the 'triton' package ({e}); install it with "
            f"pip install 'kiln[triton]' (plus cupy-cuda12x or cupy-cuda13x for GPU arrays)"
        ) from None
    return triton


def triton_dir(*parts: str) -> str:
    return os.path.join(config.cache_dir, "triton", *parts)


def load_module(source: str, name: str, interpret: bool) -> types.ModuleType:
    """Import generated kernel source (written under kiln's cache dir) in one mode.

    ``interpret=True`` makes every ``@triton.jit`` in it a Triton interpreter function
    (NumPy arrays through adapters, kiln/runtime/triton_interp.py) and replaces the
    module's ``libdevice`` with NumPy stand-ins, which the interpreter lacks.
    """
    triton = import_triton()
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    with _lock:
        module = _modules.get((key, interpret))
        if module is not None:
            return module
        path = _write_source(source, f"{name}_{key}.py", key)
        modname = f"kiln_triton_{name}_{key}{'_interp' if interpret else ''}"
        spec = importlib.util.spec_from_file_location(modname, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module   # inspect.getsource finds the module's file through it
        knobs = triton.knobs.runtime
        previous = knobs.interpret
        knobs.interpret = interpret
        try:
            spec.loader.exec_module(module)
        finally:
            knobs.interpret = previous
        if interpret:
            from .triton_interp import libdevice_standin
            module.libdevice = libdevice_standin
            # The interpreter sums with np.sum when the combine is Triton's own (otherwise
            # one Python call per element); kiln_add is only ever a tl.reduce combine.
            sum_combine = getattr(triton.language.standard, "_sum_combine", None)
            if sum_combine is not None and hasattr(module, "kiln_add"):
                module.kiln_add = sum_combine
        _modules[(key, interpret)] = module
        return module


def _write_source(source: str, filename: str, key: str) -> str:
    path = triton_dir("src", key[:2], filename)
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "w") as f:
            f.write(source)
        os.replace(tmp, path)
    return path


def compile_kernel(fn: Any, signature: dict[str, str], constexprs: dict[str, Any],
                   target: tuple = SM90, num_warps: int = 4, num_stages: int = 1,
                   aligned: tuple[str, ...] = ()) -> Any:
    """``triton.compile`` one ``@triton.jit`` function; cached in the process and on disk.

    ``signature`` maps each runtime argument, in order, to its Triton type (``*fp32``,
    ``i64``, ``fp64`` ...); ``constexprs`` maps the block-size parameters to values;
    ``aligned`` names pointer arguments known to be 16-byte aligned (Triton then
    vectorizes their loads and stores).
    """
    triton = import_triton()
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    key = (fn.cache_key, tuple(signature.items()), tuple(sorted(constexprs.items())), target,
           num_warps, num_stages, aligned)
    with _lock:
        compiled = _compiled.get(key)
        if compiled is not None:
            return compiled
        names = list(signature) + [c for c in constexprs if c not in signature]
        full = dict(signature, **{c: "constexpr" for c in constexprs})
        full = {n: full[n] for n in fn.arg_names if n in full}
        missing = [n for n in fn.arg_names if n not in full]
        if missing or set(names) - set(fn.arg_names):
            raise KilnError(f"kiln bug: kernel {fn.__name__} takes {fn.arg_names}; the signature "
                            f"gives {names}")
        attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in aligned}
        src = ASTSource(fn, full, constexprs=constexprs, attrs=attrs)
        import time
        start = time.perf_counter()
        with triton.knobs.cache.scope():
            triton.knobs.cache.dir = triton_dir("cache")
            compiled = triton.compile(src, target=GPUTarget(*target), options={
                "num_warps": num_warps, "num_stages": num_stages, "enable_fp_fusion": False})
        stats["compiles"] += 1
        stats["compile_seconds"] += time.perf_counter() - start
        _compiled[key] = compiled
        return compiled


class TritonKernel:
    """One generated kernel as a wrapper calls it: ``kernel(grid, *args)``.

    Interpreted (the module was loaded with ``interpret=True``): runs on NumPy arrays.
    Compiled: runs on the CuPy arrays' device and the current CuPy stream, compiled once
    per (compute capability, which pointers are 16-byte aligned).
    """

    def __init__(self, module: types.ModuleType, name: str, signature: dict[str, str],
                 constexprs: dict[str, Any], num_warps: int = 4, num_stages: int = 1,
                 interpret: bool = False) -> None:
        self.fn = getattr(module, name)
        self.name = name
        self.signature = signature
        self.constexprs = constexprs
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.interpret = interpret
        self._launchers: dict[tuple, Any] = {}
        self._cupy: Any = None

    def compile(self, target: tuple = SM90, aligned: tuple[str, ...] = ()) -> Any:
        return compile_kernel(self.fn, self.signature, self.constexprs, target, self.num_warps,
                              self.num_stages, aligned)

    def __call__(self, grid: tuple, *args: Any) -> None:
        if self.interpret:
            from .triton_interp import run_interpreted
            run_interpreted(self.fn, grid, list(args), self.signature, self.constexprs)
            return
        if self._cupy is None:
            from .triton_launch import import_cupy
            self._cupy = import_cupy()
        cupy = self._cupy
        ndarray = cupy.ndarray
        # one launcher per (device, which pointers are 16-byte aligned): few in practice
        device = next((a.device.id for a in args if type(a) is ndarray), None)
        if device is None:
            device = cupy.cuda.runtime.getDevice()
        aligned = tuple(type(a) is ndarray and a.data.ptr % 16 == 0 for a in args)
        launcher = self._launchers.get((device, aligned))
        if launcher is None:
            launcher = self._launcher(device, aligned)
        if cupy.cuda.runtime.getDevice() != device:
            with cupy.cuda.Device(device):
                launcher(grid, args, device, cupy.cuda.get_current_stream())
        else:
            launcher(grid, args, device, cupy.cuda.get_current_stream())

    def _launcher(self, device: int, aligned: tuple) -> Any:
        from .triton_launch import CupyLauncher, current_target
        names = tuple(n for n, ok in zip(self.signature, aligned) if ok)
        with self._cupy.cuda.Device(device):
            compiled = self.compile(current_target(), names)
            launcher = self._launchers[(device, aligned)] = CupyLauncher(compiled, self.signature)
        return launcher


def clear() -> None:
    """Forget loaded modules and compiled kernels (``kiln.reset``); the disk cache stays."""
    with _lock:
        _modules.clear()
        _compiled.clear()


EXAMPLE = '''
import triton
import triton.language as tl


@triton.jit
def kiln_example(x, n, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < n
    tl.store(x + xindex, tl.load(x + xindex, xmask) * 2.0, xmask)
'''
