"""The Triton backend: ``triton_backend(graph, example_inputs) -> callable``.

The pipeline, one named pass per line (the C++ backend's, with the Triton renderer)::

    device    = require_triton_device(example_inputs)          # CuPy arrays, or the interpreter
    lowering  = GraphLowering(graph, example_inputs).run()      # graph -> loop IR
    items     = schedule(lowering)                              # fuse into kernels (shared)
    local     = fit_locals(kernels, kernel_locals(items, ...))  # what stays in registers
    kernels   = [render_kernel(k, local) ...]                   # Triton per kernel
    module    = load_module(render_module(...))                 # imported from the cache dir
    wrapper   = TritonWrapper(...).generate(...)                # allocate, launch, externs

Device follows data: on CuPy arrays the wrapper allocates with CuPy and launches on the
arrays' device and the current CuPy stream; extern ops (matmul, einsum, gathers) run their
NumPy kernel, which NumPy's dispatch protocols hand to CuPy. With
``KILN_TRITON_INTERPRET=1`` NumPy arrays run through Triton's interpreter (tests); without
it they are a KilnError. Every new input layout, dtype or array type compiles a variant
(up to ``MAX_VARIANTS``, then the graph's NumPy interpreter runs them).
"""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from .. import logs
from ..config import config
from ..errors import Unsupported
from .devices import is_cupy_array, require_triton_device

MAX_VARIANTS = 8


def triton_backend(graph: Any, example_inputs: list) -> Callable:
    """Compile ``graph`` to Triton kernels plus a Python wrapper; see the module doc."""
    interpret = bool(config.triton_interpret)
    require_triton_device(example_inputs, interpret)
    variants: dict[tuple, Callable] = {}

    def respecialize(*args: Any) -> Any:
        if any(type(a) is int and not -2**63 <= a < 2**63 for a in args):
            return graph(*args)   # a Python int beyond int64: the NumPy interpreter, exactly
        key = _layout_key(args)
        fn = variants.get(key)
        if fn is None:
            require_triton_device(args, interpret)
            if len(variants) >= MAX_VARIANTS:
                return graph(*args)
            fn = variants[key] = compile_variant(graph, list(args), respecialize, interpret)
        return fn(*args)

    try:
        call = compile_variant(graph, list(example_inputs), respecialize, interpret)
    except (Unsupported, NotImplementedError) as e:
        if logs.enabled("perf"):
            logs.log("perf", f"triton backend: graph '{graph.name}' runs in the NumPy interpreter", str(e))
        return graph      # NumPy's functions on the arrays (CuPy's, through NumPy's protocols)
    variants[_layout_key(example_inputs)] = call
    return call


def _layout_key(args: Any) -> tuple:
    return tuple((type(a), a.shape, a.strides, a.dtype.str, a.device.id if is_cupy_array(a) else None)
                 if hasattr(a, "strides") else type(a) for a in args)


def compile_variant(graph: Any, example_inputs: list, respecialize: Callable,
                    interpret: bool) -> Callable:
    from ..lowering.lower import GraphLowering
    from ..lowering.scheduler import Kernel, kernel_locals, schedule
    from ..lowering.triton import fit_locals, render_kernel, render_module
    from ..lowering.wrapper import WrapperCode
    from .backend import _load_wrapper, _report, Artifact
    from .triton_build import TritonKernel, load_module

    start = time.perf_counter()
    device = require_triton_device(example_inputs, interpret)
    # Lowering reads only layouts (shape, strides, dtype), never memory: CuPy arrays are
    # handed over as host arrays of the same layout that own one element.
    low = GraphLowering(graph, [_host_layout(a) for a in example_inputs], reinfer=True).run()
    items = schedule(low, graph.name)
    kernels = [item for item in items if isinstance(item, Kernel)]
    local = fit_locals(kernels, kernel_locals(items, low))
    rendered = {k.name: render_kernel(k, local) for k in kernels}
    source = render_module(graph.name, list(rendered.values()))
    module = load_module(source, f"graph_{graph.name}", interpret) if kernels else None
    wrapper = _TritonWrapper(low, items, rendered, local, 1, pool=False)
    wrapper.device = device
    text = wrapper.generate("", "", graph.name)
    wmod = _load_wrapper(text, graph.name)
    for name, value in low.constants.items():   # constants of the program go to its device
        setattr(wmod, name, _to_device(value, device))
    for name, value in wrapper.consts.items():
        setattr(wmod, name, value)
    for rk in rendered.values():
        grid, constexprs, warps = rk.config(interpret)
        setattr(wmod, rk.name, _Launch(TritonKernel(module, rk.name, rk.signature, constexprs,
                                                     warps, interpret=interpret), grid))
    wmod._ARRAY = np.ndarray
    if device[0] == "cuda":
        import cupy
        wmod.np = cupy            # allocation and extern results on the device
        wmod._ARRAY = cupy.ndarray
    wmod._respecialize = respecialize
    wmod._numpy = graph
    artifact = Artifact(graph.name, source, module.__file__ if module else "", text, wmod.call,
                        list(rendered), time.perf_counter() - start)
    _report(artifact, len(rendered), "Triton", "kernels.py")
    call = wmod.call
    call.kiln_artifact = artifact
    return call


def _host_layout(value: Any) -> Any:
    """A NumPy array with ``value``'s layout and no data of its own (for CuPy arrays)."""
    if not is_cupy_array(value):
        return value
    return np.lib.stride_tricks.as_strided(np.zeros(1, value.dtype), value.shape, value.strides)


def _to_device(value: Any, device: tuple) -> Any:
    if device[0] != "cuda" or not isinstance(value, np.ndarray):
        return value
    import cupy
    with cupy.cuda.Device(device[1]):
        return cupy.asarray(value)


class _Launch:
    """A kernel as the wrapper calls it: ``kernel(*arrays, *scalars, nthreads)``."""

    def __init__(self, kernel: Any, grid: tuple) -> None:
        self.kernel = kernel
        self.grid = grid

    def __call__(self, *args: Any) -> None:
        self.kernel(self.grid, *args[:-1])   # the last is the C++ thread count


def _wrapper_base() -> type:
    from ..lowering.wrapper import WrapperCode
    return WrapperCode


class _TritonWrapper(_wrapper_base()):
    """The C++ backend's wrapper with Triton's calling convention: arrays (not pointers)
    go to the kernels, which the runtime installs in the module (no shared library)."""

    device: tuple = ("cpu", None)

    def pointer(self, buf: Any) -> str:
        return buf.name

    def _guards(self) -> list[str]:
        """The array type (and GPU) the kernels were built for: anything else recompiles."""
        from ..lowering.loop_ir import Buffer
        names = [name for name, kind in self.low.inputs if isinstance(kind, Buffer)]
        checks = [f"type({n}) is not _ARRAY" for n in names]
        if self.device[0] == "cuda":
            checks += [f"{n}.device.id != {self.device[1]}" for n in names]
        if not checks:
            return []
        params = ", ".join(name for name, _ in self.low.inputs)
        return [f"    if {' or '.join(checks)}:", f"        return _respecialize({params})"]

    def generate(self, so_path: str, cdefs: str, graph_name: str) -> str:
        text = super().generate(so_path, cdefs, graph_name)
        lines = text.split("\n")
        drop = {f"{name} = _lib.{name}" for name in self.rendered}
        out, skip = [], False
        for line in lines:
            if line.startswith("from kiln.runtime.loader import load_library"):
                skip = True
                out.append(f"# Triton kernels of graph '{graph_name}': installed by kiln.runtime.triton_backend")
                continue
            if skip:
                if line.startswith("    return _ffi.cast"):
                    skip = False
                continue
            if line in drop:
                continue
            out.append(line)
            if line.startswith("def call("):
                out += self._guards()
        if skip:
            raise AssertionError("kiln bug: the wrapper's library block changed; update triton_backend")
        return "\n".join(out)
