"""The Triton backend: ``triton_backend(graph, example_inputs) -> callable``.

The pipeline is the C++ backend's (``generate``: lowering, scheduling, kernel-local
buffers, the wrapper) with :class:`~kiln.lowering.triton.TritonRenderer`::

    device    = require_triton_device(example_inputs)        # CuPy arrays, or the interpreter
    gen       = generate(graph, host_layouts, TritonRenderer())  # kernels + wrapper text
    artifact  = finish(graph, gen, ...)                      # TritonLoader: import the module
                                                             # from the cache dir, install kernels

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
from ..ir.printer import numpy_program
from ..array_kinds import CUPY, is_device_array, kind_of
from .devices import require_triton_device

MAX_VARIANTS = 8


def triton_backend(graph: Any, example_inputs: list) -> Callable:
    """Compile ``graph`` to Triton kernels plus a Python wrapper; see the module doc."""
    interpret = bool(config.triton_interpret)
    require_triton_device(example_inputs, interpret)
    from .backend import _compile_graph_loops
    _compile_graph_loops(graph, compile_loop_body)
    variants: dict[tuple, Callable] = {}
    numpy = _NumpyFallback(graph, interpret)
    # Placeholders that are slice bounds (``text[s:s + m]``): a variant that took their
    # values (lower.specialize_ints) is found by value, as the C++ backend's
    from ..lowering.slice_bounds import slice_bound_positions
    bounds = slice_bound_positions(graph)

    def respecialize(*args: Any) -> Any:
        if any(type(a) is int and not -2**63 <= a < 2**63 for a in args):
            return numpy(*args)   # a Python int beyond int64: NumPy's kernels, exactly
        key = _layout_key(args, bounds)
        fn = variants.get(key)
        if fn is None:
            require_triton_device(args, interpret)
            if len(variants) >= MAX_VARIANTS:
                return numpy(*args)
            try:
                fn = compile_variant(graph, list(args), respecialize, interpret)
            except Unsupported:   # these sizes need what only NumPy does (np.var's warning)
                fn = numpy
            variants[key] = fn
        return fn(*args)

    try:
        call = None
        if any(p.meta.get("dynamic_dims") for p in graph.placeholders):
            # one build over size symbols (kiln/lowering/sizes.py), as for C++
            try:
                call = compile_variant(graph, list(example_inputs), respecialize, interpret,
                                       dynamic=True)
            except Unsupported as e:
                if logs.enabled("perf"):
                    logs.log("perf", f"triton backend, graph '{graph.name}': dynamic shapes",
                             f"specialized: {e}")
        if call is None:
            try:
                call = compile_variant(graph, list(example_inputs), respecialize, interpret)
            except Unsupported:
                if not any(p.meta.get("dynamic_dims") for p in graph.placeholders):
                    raise
                return respecialize   # not at the example's sizes: each size its own variant
    except (Unsupported, NotImplementedError) as e:
        if logs.enabled("perf"):
            logs.log("perf", f"triton backend: graph '{graph.name}' runs in the NumPy interpreter", str(e))
        # NumPy's functions on the arrays (CuPy's, through NumPy's protocols)
        return numpy.program(require_triton_device(example_inputs, interpret))
    variants[_layout_key(example_inputs, bounds)] = call
    return call


def _layout_key(args: Any, bounds: Any) -> tuple:
    """The variant ``args`` run: each array's layout, type and device; a slice bound's
    value (a variant took it: its wrapper checks it), another argument's type."""
    return tuple((type(a), a.shape, a.strides, a.dtype.str, kind.device_id(a))
                 if (kind := kind_of(a)) is not None else
                 (type(a), a.shape, a.strides, a.dtype.str, None) if hasattr(a, "strides") else
                 (type(a), a) if i in bounds and type(a) is int else type(a)
                 for i, a in enumerate(args))


def compile_variant(graph: Any, example_inputs: list, respecialize: Callable,
                    interpret: bool, dynamic: bool = False) -> Callable:
    from ..lowering.triton import TritonRenderer
    from .backend import finish, generate

    start = time.perf_counter()
    device = require_triton_device(example_inputs, interpret)
    renderer = TritonRenderer(device, interpret)
    # Lowering reads only layouts (shape, strides, dtype), never memory: CuPy arrays are
    # handed over as host arrays of the same layout that own one element.
    gen = generate(graph, [_host_layout(a) for a in example_inputs], renderer, reinfer=True,
                   pool=False, dynamic=dynamic)
    artifact = finish(graph, gen, respecialize, start)
    call = artifact.call
    call.kiln_artifact = artifact
    return call


def compile_loop_body(graph: Any, example: list, reusable: frozenset = frozenset()) -> tuple:
    """A graph loop node's body (kiln/ops/graph_loops.py) as Triton kernels, compiled
    once through aot and :func:`triton_backend` and launched once per trip: the carried
    arrays its functional form writes come back as new device arrays, which the loop
    carries (no copy back, nothing through the host; CuPy's pool reuses the blocks); none
    is written in place (``reusable`` is not used)."""
    from .backend import _compile_loop_body
    return _compile_loop_body(graph, example, triton_backend, fresh_bytes=float("inf"))


class TritonLoader:
    """The Triton renderer's runtime half (``TritonRenderer.loader``): imports the kernel
    module from the cache dir (kiln/runtime/triton_build.py) and installs in the wrapper
    a launcher per kernel (its grid, block sizes and warps from the rendered kernel's
    ``config``), the array type and module it allocates with (CuPy on a GPU), and the
    graph's constant arrays on the device."""

    language = "Triton"
    kernels_file = "kernels.py"

    def __init__(self, renderer: Any) -> None:
        self.renderer = renderer
        self.module = None
        self.builds = 0

    def build(self, gen: Any, graph_name: str) -> str:
        from .triton_build import load_module
        self.module = load_module(gen.cpp, f"graph_{graph_name}", self.renderer.interpret)
        self.builds = len(gen.kernel_names)   # Triton compiles lazily, at the first launch
        return self.module.__file__

    def install(self, wmod: Any, gen: Any) -> None:
        from .triton_build import TritonKernel
        device, interpret = self.renderer.device, self.renderer.interpret
        # constant arrays (the program's, extern calls' parameters) go to its device once,
        # and so do those of the NumPy program the wrapper falls back to
        for name, value in {**gen.low.constants, **gen.consts}.items():
            setattr(wmod, name, _to_device(value, device))
        if device[0] == "cuda":
            wmod._numpy = _NumpyFallback(wmod._numpy.graph, interpret)
        for name, rk in self.renderer.rendered.items():
            grid, constexprs, warps = rk.config(interpret)
            kernel = TritonKernel(self.module, name, rk.signature, constexprs, warps,
                                  interpret=interpret)
            setattr(wmod, name, _Launch(kernel, grid) if not rk.size_args
                    else _SizedLaunch(kernel, rk, constexprs))
        wmod._ARRAY = np.ndarray
        if device[0] == "cuda":
            import cupy
            wmod.np = cupy            # allocation and extern results on the device
            wmod._ARRAY = cupy.ndarray


class _NumpyFallback:
    """The graph's NumPy program for the calls no Triton variant takes, one per device:
    on a GPU its constant arrays are copied there once (CuPy raises on a NumPy operand)."""

    def __init__(self, graph: Any, interpret: bool) -> None:
        self.graph = graph
        self.interpret = interpret
        self.programs: dict[tuple, Callable] = {}

    def program(self, device: tuple) -> Callable:
        fn = self.programs.get(device)
        if fn is None:
            place = None if device[0] == "cpu" else (lambda v: _to_device(v, device))
            fn = self.programs[device] = numpy_program(self.graph, place=place)
        return fn

    def __call__(self, *args: Any) -> Any:
        return self.program(require_triton_device(args, self.interpret))(*args)


def _host_layout(value: Any) -> Any:
    """A NumPy array with ``value``'s layout and no data of its own (for CuPy arrays)."""
    if not is_device_array(value):
        return value
    return np.lib.stride_tricks.as_strided(np.zeros(1, value.dtype), value.shape, value.strides)


def _to_device(value: Any, device: tuple) -> Any:
    if device[0] != "cuda" or not isinstance(value, np.ndarray):
        return value
    return CUPY.to_device(value, device[1])


class _Launch:
    """A kernel as the wrapper calls it: ``kernel(*arrays, *scalars)``."""

    def __init__(self, kernel: Any, grid: tuple) -> None:
        self.kernel = kernel
        self.grid = grid

    def __call__(self, *args: Any) -> None:
        self.kernel(self.grid, *args)


class _SizedLaunch:
    """A kernel over size symbols: its last arguments are the sizes (int64), which set
    each call's grid (kiln.lowering.triton.RenderedTritonKernel.grid)."""

    def __init__(self, kernel: Any, rendered: Any, constexprs: dict) -> None:
        self.kernel = kernel
        self.rendered = rendered
        self.constexprs = constexprs
        self.names = rendered.size_args

    def __call__(self, *args: Any) -> None:
        sizes = dict(zip(self.names, args[len(args) - len(self.names):]))
        self.kernel(self.rendered.grid(self.constexprs, sizes), *args)

