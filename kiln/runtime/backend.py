"""The C++/OpenMP backend: ``cpp_backend(graph, example_inputs) -> callable``.

The pipeline, one named pass per line::

    renderer  = CppRenderer(num_threads)                         # lowering/cpp.py (renderer.py)
    lowering  = GraphLowering(graph, example_inputs, dynamic, renderer).run()  # graph -> loop IR
    items     = schedule(lowering)                          # fuse into kernels
    local     = kernel_locals(items, lowering)              # buffers that never leave a kernel
    items, windows = write_windows(items, lowering, local)  # u[1:] += x stored into u's window
    inplace   = plan_inplace(items, lowering, local) | windows   # outputs written over dead inputs
    plans     = [renderer.plan_kernel(k, local, sizes, inplace) ...]     # lowering/plan.py
    kernels   = [renderer.render_kernel(plan) ...]          # C++ per kernel, printed once
    built     = share_identical(kernels, renderer)     # the same code twice: built once
    memory    = plan_memory(lowering, items, kernels)       # lowering/memory.py
    so        = loader_for(renderer).build(...)             # g++, on-disk cache (build.CppLoader)
    wrapper   = WrapperCode(..., renderer).generate(so, ...)   # the Python module: call(*inputs)

The callable is the wrapper's ``call``: it returns a tuple of outputs, like calling the
graph. Input layouts (strides) are specialized; a call with other layouts compiles a
variant (up to ``MAX_VARIANTS``, then the NumPy interpreter runs them).

When no C++ compiler works, the backend warns once and returns the graph itself (the
NumPy reference interpreter). Graphs the lowering cannot handle run the same way, with
the reason in the ``perf`` log.

    >>> import numpy as np
    >>> from kiln.ir import trace
    >>> from kiln.ops import F, TensorMeta
    >>> g = trace(lambda x: F.multiply(F.sin(x), 2.0), [TensorMeta((4,), np.float32)], ["x"])
    >>> fn = cpp_backend(g, [np.zeros(4, np.float32)])
    >>> fn(np.ones(4, np.float32))[0].round(3)
    array([1.683, 1.683, 1.683, 1.683], dtype=float32)
"""
from __future__ import annotations

import hashlib
import itertools
import logging
import os
import sys
import time
import types
from typing import Any, Callable

import numpy as np

from .. import logs
from ..config import config
from ..errors import KilnError, RunsOpByOp, Unsupported, is_kiln_frame, warn_fallback
from ..ir.printer import LazyNumpyProgram, exec_source, numpy_program
from .build import BuildError, CompilerUnavailable, stats
from .launch import fast_call

MAX_VARIANTS = 8
output_code_log = logging.getLogger("kiln.output_code")
_warned: set[str] = set()
_counter = itertools.count()


class ErrorModeFallback(LazyNumpyProgram):
    """The wrapper's ``_numpy``: the graph run by NumPy where NumPy's error mode raises
    (or calls a handler, or its warnings are errors). A graph whose outputs are new values
    of the caller's arrays (aot's ``donated``) raises RunsOpByOp instead: NumPy writes
    those op by op, and before the op that raises, and the functional program would give
    the warnings before the error once more when aot then runs the graph so. A graph
    loop body's donated inputs are the loop's own copies (``donated_scratch``): its NumPy
    program returns their new values, as the compiled body may."""

    def __call__(self, *args: Any) -> Any:
        if self.graph.donated and not getattr(self.graph, "donated_scratch", False):
            raise RunsOpByOp(f"{self.graph.name}: NumPy's error mode may raise; it runs op by op")
        return super().__call__(*args)


def cpp_backend(graph: Any, example_inputs: list) -> Callable:
    """Compile ``graph`` to fused C++ kernels plus a Python wrapper; see the module doc."""
    try:
        return compile_graph(graph, example_inputs)
    except CompilerUnavailable as e:
        _warn_once("compiler", f"kiln: no working C++ compiler ({e}); graphs run with the NumPy "
                               f"interpreter instead. Install g++ or set kiln.config.cxx / KILN_CXX.")
        return numpy_program(graph)
    except (Unsupported, BuildError, NotImplementedError) as e:
        if logs.enabled("perf"):
            logs.log("perf", f"cpp backend: graph '{graph.name}' runs in the NumPy interpreter", str(e))
        if isinstance(e, BuildError):
            _warn_once(str(e)[:200], f"kiln: C++ build failed, running the NumPy interpreter: {e}")
        return numpy_program(graph)
    except RecursionError as e:   # a kiln bug (a chain of values too deep to lower)
        _warn_once(f"recursion:{graph.name}", f"kiln: internal error lowering graph "
                   f"'{graph.name}' ({e}); it runs as its NumPy program. Please report it.")
        return numpy_program(graph)
    except OSError as e:  # the cache directory is read-only, full, or not a directory
        _warn_once(f"cache:{e.filename}", f"kiln: cannot write the kernel cache ({e}); graphs run "
                   f"with the NumPy interpreter. Point KILN_CACHE_DIR (kiln.config.cache_dir) at "
                   f"a writable directory.")
        return numpy_program(graph)


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warn_fallback(message, stacklevel=_user_stacklevel())


def _user_stacklevel() -> int:
    """warnings' stacklevel of the innermost frame outside kiln (the user's call)."""
    frame, level = sys._getframe(2), 2   # 1 is _warn_once, 2 its caller
    while frame is not None and is_kiln_frame(frame):
        frame, level = frame.f_back, level + 1
    return level


class Artifact:
    """One compiled variant: C++ source, library path, wrapper source, and ``call``."""

    def __init__(self, name: str, cpp: str, so: str, wrapper: str, call: Callable,
                 kernel_names: list[str], compile_seconds: float) -> None:
        self.name = name
        self.cpp = cpp
        self.so = so
        self.wrapper = wrapper
        self.call = call
        self.kernel_names = kernel_names
        self.compile_seconds = compile_seconds


_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1


def _compile_graph_loops(graph: Any, compiler: Callable | None = None) -> None:
    """Graph loop nodes (kiln/ops/graph_loops.py) compile their body as a graph of its
    own, through aot and this backend (``compiler``: another backend's
    :func:`_compile_loop_body`), once, when the loop first runs."""
    from ..ops.graph_loops import GraphLoopBody
    for node in graph.calls:
        body = node.kwargs.get("body")
        if isinstance(body, GraphLoopBody) and body.compiler is None:
            body.compiler = compiler or _compile_loop_body


# Written arrays up to this size are carried as the body's new arrays; larger ones are
# written in place (a new array of 1 MB per iteration costs fresh pages: jacobi_2d at
# N=350 took 49 ms instead of 17, loaded).
_FRESH_BODY_BYTES = 1 << 18


def _compile_loop_body(graph: Any, example: list, backend: Callable | None = None,
                       fresh_bytes: float = _FRESH_BODY_BYTES, reusable: frozenset = frozenset()) -> tuple:
    """A graph loop's body through aot and ``backend`` (this one when None): ``(callable,
    written, in_place)``. Where its functional form returns every value as a fresh array
    (no views, layouts that do not matter), that form is compiled, and ``written`` maps
    each carried array the body writes to the output holding its new value: the loop
    carries the new arrays instead of copying them back into the old ones each iteration
    (aot's epilogue), where they are smaller than ``fresh_bytes`` (on the host a new array
    costs fresh pages; CuPy's pool hands a GPU one back at no cost: the Triton backend
    passes inf). Of those, the carried positions in ``reusable`` (arrays the loop owns and
    reads no more once the trip has their new values, GraphLoopBody.reusable) are donated
    to the backend (``Graph.donated``): it may compute the new value in the old array's
    memory (``xs[k] = x`` an extern writing in place, not a copy of ``xs`` a trip);
    ``in_place`` names them."""
    from ..aot import aot_autograd, functionalize_with_plan
    backend = backend or cpp_backend
    fgraph, plan = functionalize_with_plan(graph, example)
    if not plan.layout_inputs and len(plan.outputs) == plan.num_user_outputs \
            and all(o.kind == "fresh" for o in plan.outputs) \
            and all(getattr(example[i], "nbytes", 0) < fresh_bytes for i, _ in plan.mutated):
        from ..lowering.loop_donate import scattered_from
        outs, phs = fgraph.output_node.args[0], fgraph.placeholders
        # The new value of a reusable carried array: aot's of one the body writes, or a
        # chain of element writes of it that capture made functional (``xs[k] = x``:
        # ``index_put(xs, ...)`` returned as the next trip's ``xs``). (An output that is
        # also another output's value would share the old array's memory.)
        donated = {k: i for i, k in plan.mutated if i in reusable}
        donated.update((k, i) for k, out in enumerate(outs) for i in sorted(reusable)
                       if i < len(phs) and out is not phs[i] and scattered_from(out) is phs[i])
        donated = {k: i for k, i in donated.items() if sum(o is outs[k] for o in outs) == 1}
        compiler = backend if not donated else _donating(backend, donated, len(outs),
                                                         len(fgraph.placeholders))
        return aot_autograd(fgraph, example, compiler), dict(plan.mutated), \
            frozenset(donated.values())
    return aot_autograd(graph, example, backend), {}, frozenset()


def _donating(backend: Callable, donated: dict, n_outs: int, n_inputs: int) -> Callable:
    """``backend`` for aot's forward of a loop body's functional graph, told that output
    ``k`` may be computed in input ``donated[k]``'s memory (the forward of a graph that
    writes nothing has the functional graph's inputs and outputs, in order)."""
    def compile_forward(g: Any, example: list) -> Callable:
        if len(g.output_node.args[0]) == n_outs and len(g.placeholders) == n_inputs:
            g.donated, g.donated_scratch = dict(donated), True
        return backend(g, example)
    return compile_forward


def compile_graph(graph: Any, example_inputs: list) -> Callable:
    """Lower, schedule, render, build and load; returns the wrapper's ``call``."""
    from ..ops.graph_loops import GraphLoopBody
    from ..ops.loops import LoopBody
    if any(isinstance(n.kwargs.get("body"), (LoopBody, GraphLoopBody)) for n in graph.calls):
        # (imported only here: a process that compiles no loop never reads these modules)
        from ..lowering.loop_donate import donate_to_loops
        from ..lowering.loop_runner import prepare_loops
        donate_to_loops(graph)   # loops write donated caller arrays in place where they can
        prepare_loops(graph)     # loop nodes run as C++ loops (called from the wrapper)
    _compile_graph_loops(graph)
    variants: dict[tuple, Callable] = {}
    numpy = LazyNumpyProgram(graph)   # the graph's NumPy kernels, for what C++ cannot run
    # Placeholders that are slice bounds (``x[:n]``): a variant that took their values
    # (lower.specialize_ints) is found by value.
    from ..lowering.slice_bounds import slice_bound_positions
    bounds = slice_bound_positions(graph)

    def respecialize(*args: Any) -> Any:
        if any(type(a) is int and not _INT64_MIN <= a <= _INT64_MAX for a in args):
            return numpy(*args)  # a Python int beyond int64: NumPy's kernels, exactly
        key = tuple((a.shape, a.strides, a.dtype.str) if isinstance(a, np.ndarray)
                    else (type(a), a) if i in bounds and type(a) is int else type(a)
                    for i, a in enumerate(args))
        fn = variants.get(key)
        if fn is None:
            if len(variants) >= MAX_VARIANTS:
                return numpy(*args)
            try:
                fn = _compile_variant(graph, list(args), respecialize, reinfer=True).call
            except Unsupported:  # these sizes need what only NumPy does (a warning)
                fn = numpy
            variants[key] = fn
        return fn(*args)

    artifact = None
    if any(n.meta.get("dynamic_dims") for n in graph.placeholders):
        artifact = _compile_dynamic(graph, list(example_inputs), respecialize)
    if artifact is None:
        # Sizes come from the example inputs whenever they differ from the graph's (a
        # dynamic dim met first at another size, possibly by another thread).
        stale = any(isinstance(a, np.ndarray) and getattr(p.val, "shape", a.shape) != a.shape
                    for p, a in zip(graph.placeholders, example_inputs))
        try:
            artifact = _compile_variant(graph, list(example_inputs), respecialize, reinfer=stale)
        except Unsupported:
            if not any(n.meta.get("dynamic_dims") for n in graph.placeholders):
                raise
            # not at the example's sizes (np.var with ddof >= n warns): each size its own
            # variant, NumPy's where none builds
            return respecialize
    call = artifact.call
    call.kiln_artifact = artifact
    return call


class Generated:
    """The text of one variant before it is built: the renderer's module (``cpp``: C++
    or Triton source), its signature (cffi cdefs), the wrapper source, the plans."""

    def __init__(self, cpp: str, cdefs: str, wrapper: str, low: Any, kernel_names: list[str],
                 consts: dict, plans: dict | None = None, memory: Any = None,
                 renderer: Any = None, kernels: list | None = None, steps: list | None = None) -> None:
        self.cpp = cpp
        self.cdefs = cdefs
        self.wrapper = wrapper
        self.low = low
        self.kernel_names = kernel_names
        self.consts = consts
        self.plans = plans or {}   # kernel name -> its plan (lowering/plan.py)
        self.memory = memory       # the wrapper's memory plan (lowering/memory.py)
        self.renderer = renderer   # whose loader builds and installs the module
        self.kernels = kernels or []   # the rendered kernels the module holds
        self.steps = steps or []       # the wrapper's steps in order: Kernels and ExternNodes


SO_PLACEHOLDER = "<kiln-shared-library>"


def generate(graph: Any, example_inputs: list, renderer: Any = None, reinfer: bool = False,
             pool: bool = True, dynamic: bool = False) -> Generated:
    """Everything but the build: the backend-neutral pipeline, then ``renderer``'s text
    (kiln/lowering/renderer.py; default: C++). ``dynamic``: the placeholders' dynamic dims
    are size symbols (kernel arguments)."""
    from ..lowering.cpp import CppRenderer
    from ..lowering.inplace import plan_inplace
    from ..lowering.lower import GraphLowering
    from ..lowering.memory import plan_memory
    from ..lowering.renderer import share_identical
    from ..lowering.scheduler import Kernel, kernel_locals, schedule
    from ..lowering.window_writes import write_windows
    from ..lowering.wrapper import WrapperCode

    from ..lowering.slice_bounds import runtime_slice
    from ..lowering.sizes import Undecidable

    if renderer is None:
        renderer = CppRenderer(num_threads=config.num_threads)
    try:
        low = GraphLowering(graph, example_inputs, reinfer=reinfer, dynamic=dynamic, renderer=renderer).run()
    except Undecidable:
        if not any(runtime_slice(n) for n in graph.nodes if n.kind == "call"):
            raise
        # Run-time int slice bounds whose sizes symbols cannot say (``x[:n] + y[:m]``):
        # this build takes their values, which its wrapper checks.
        low = GraphLowering(graph, example_inputs, reinfer=reinfer, dynamic=dynamic, renderer=renderer,
                            specialize_ints=True).run()
    items = schedule(low, graph.name)
    local = kernel_locals(items, low)
    items, windows = write_windows(items, low, local)
    kernels = [item for item in items if isinstance(item, Kernel)]
    inplace = {**plan_inplace(items, low, local), **windows}
    size_args = tuple(s.name for s in low.sizes)
    plans = {k.name: renderer.plan_kernel(k, local, size_args, inplace) for k in kernels}
    rendered = {name: renderer.render_kernel(plan) for name, plan in plans.items()}
    built = share_identical(rendered, renderer, plans)   # an unrolled loop's steps: one build
    module = renderer.render_module(graph.name, built)
    signature = renderer.module_signature(built)
    memory = plan_memory(low, items, rendered, pool)
    wrapper = WrapperCode(low, items, rendered, memory, renderer)
    source = wrapper.generate(SO_PLACEHOLDER, signature, graph.name)
    return Generated(module, signature, source, low, [rk.name for rk in built], wrapper.consts,
                     plans, memory, renderer, built, items)


def built_kernel_count(graph: Any, example_inputs: list) -> int | None:
    """How many C++ kernels compiling ``graph`` (a captured graph) would build, kernels of
    the same code counted once: its functional graph lowered and rendered, g++ not run (the
    cost model's question about an unrolled loop of small steps). None when it cannot
    tell: loop nodes (their bodies build apart), a graph that needs gradients or that the
    lowering does not take."""
    from ..aot.functionalize import functionalize_with_plan
    from . import artifacts
    arrays = _lowerable(graph, example_inputs)
    if arrays is None:
        return None
    try:
        fgraph, _ = functionalize_with_plan(graph, arrays)
        key = artifacts.artifact_key(fgraph, arrays, False)
        count = artifacts.load_kernel_count(key) if key else None
        if count is None:
            count = len(generate(fgraph, arrays).kernel_names)
            if key:
                artifacts.store_kernel_count(key, count)
        return count
    except Exception:   # whatever the lowering does not take, compiling finds out itself
        return None


def lowered_calls(graph: Any, example_inputs: list) -> tuple[int, list, int] | None:
    """The calls one compiled run of ``graph`` (a captured graph that writes into arrays)
    makes, as the lowering plans them (g++ not run): (kernel launches, NumPy calls that
    compute, each as the functional graph's node it makes (a functional write ``index_put``
    copies its array, then writes: None for the copy), NumPy writes in place and views).
    (aot's epilogue copy of a new value into the caller's array is
    not counted: whether it is the caller's array already is known only per call.) The cost
    model's question about a graph of writes: its tally prices each write as a kernel, but
    a write through a strided view of a view (``x[1:][::2] = 0``) is NumPy's copy and write.
    None: as :func:`built_kernel_count`."""
    from ..aot.functionalize import functionalize_with_plan
    from ..lowering.lower import ExternNode
    from ..lowering.scheduler import Kernel
    from ..ops import Category
    arrays = _lowerable(graph, example_inputs)
    if arrays is None:
        return None
    try:
        fgraph, plan = functionalize_with_plan(graph, arrays)
        fgraph.donated = {k: i for i, k in plan.mutated}   # as aot/runtime.py's inference
        gen = generate(fgraph, arrays)
    except Exception:   # whatever the lowering does not take, compiling finds out itself
        return None
    launches = cheap = 0
    computing: list = []
    in_place = gen.memory.inplace_externs if gen.memory is not None else set()
    for step, item in enumerate(gen.steps):
        if isinstance(item, Kernel):
            launches += 1
        elif isinstance(item, ExternNode):
            if step in in_place or item.op.category == Category.VIEW:
                cheap += 1
            else:
                # a functional write not done in place (``index_put`` of a view): a copy
                # of its array, then NumPy's write (chained_views_writes on 4x4, two such
                # calls: 9.9 us compiled against NumPy's 5.0, priced as one call each)
                node = item.origins[0] if item.origins and getattr(item.origins[0], "target", None) is item.op \
                    else None
                computing += [node, None] if item.op.inplace_impl is not None else [node]
    return launches, computing, cheap


def _lowerable(graph: Any, example_inputs: list) -> list | None:
    """``example_inputs`` as arrays where the cost model may ask the lowering about
    ``graph``; None for loop nodes (their bodies build apart) and Tensors (a joint graph)."""
    from ..ops.graph_loops import GraphLoopBody
    from ..ops.loops import LoopBody
    if any(isinstance(n.kwargs.get("body"), (LoopBody, GraphLoopBody)) for n in graph.calls):
        return None
    arrays = [getattr(a, "_data", a) for a in example_inputs]
    if len(arrays) != len(example_inputs) or any(a is not b for a, b in zip(arrays, example_inputs)):
        return None   # Tensors: a joint graph, another count
    return arrays


def _compile_dynamic(graph: Any, example_inputs: list, respecialize: Callable) -> Artifact | None:
    """One build whose kernels take the dynamic sizes as arguments (kiln/lowering/sizes.py),
    or None when the graph's code depends on the sizes in a way symbols cannot say."""
    start = time.perf_counter()
    try:
        gen = generate(graph, example_inputs, dynamic=True)
    except Unsupported as e:
        _log_dynamic(graph, f"specialized: {e}")
        return None
    if not gen.low.sizes:
        return None
    _log_dynamic(graph, "one build for dynamic sizes " + ", ".join(
        f"{s.name} = {s.source}" for s in gen.low.sizes))
    return finish(graph, gen, respecialize, start)


def _log_dynamic(graph: Any, message: str) -> None:
    if logs.enabled("perf"):
        logs.log("perf", f"cpp backend, graph '{graph.name}': dynamic shapes", message)


def _compile_variant(graph: Any, example_inputs: list, respecialize: Callable,
                     reinfer: bool = False) -> Artifact:
    from . import artifacts
    start = time.perf_counter()
    key = artifacts.artifact_key(graph, example_inputs, reinfer)
    entry = artifacts.load(key) if key else None
    # the constant arrays the stored wrapper names (a complex one too: every dtype the
    # renderer holds, not only the loop IR's)
    constants = artifacts.graph_constants(graph, entry["constants"]) if entry is not None else None
    if constants is not None and entry.get("objects"):
        objects = artifacts.resolve(graph, entry["objects"])
        constants = None if objects is None else {**constants, **objects}
    if constants is not None:
        stats["artifact_hits"] += 1
        module = _load_wrapper(entry["wrapper"], graph.name)
        for name, value in constants.items():
            setattr(module, name, value)
        module._respecialize = respecialize
        module._numpy = ErrorModeFallback(graph)
        artifact = Artifact(graph.name, entry["cpp"], entry["so"], entry["wrapper"], fast_call(module),
                            entry["kernels"], time.perf_counter() - start)
        _report(artifact, 0)
        return artifact
    gen = generate(graph, example_inputs, reinfer=reinfer)
    artifact = finish(graph, gen, respecialize, start)
    # the wrapper's other globals (a loop node's body) must be objects of the graph
    objects = artifacts.locate(graph, gen.consts) if key and gen.consts else {}
    if key and objects is not None:
        artifacts.store(key, {"wrapper": artifact.wrapper, "cpp": artifact.cpp, "so": artifact.so,
                              "kernels": artifact.kernel_names, "constants": sorted(gen.low.constants),
                              "objects": objects})
    return artifact


def loader_for(renderer: Any) -> Any:
    """The runtime half a renderer names (``Renderer.loader``: "module:Class")."""
    import importlib
    module, _, cls = renderer.loader.partition(":")
    return getattr(importlib.import_module(module), cls)(renderer)


def finish(graph: Any, gen: Generated, respecialize: Callable, start: float) -> Artifact:
    """Build the module with the renderer's loader (or find it in the cache), load the
    wrapper, let the loader install the kernels, report."""
    loader = loader_for(gen.renderer)
    path = loader.build(gen, graph.name) if gen.kernel_names else ""
    source = gen.wrapper.replace(repr(SO_PLACEHOLDER), repr(path))
    module = _load_wrapper(source, graph.name)
    for name, value in gen.low.constants.items():
        setattr(module, name, value)
    for name, value in gen.consts.items():
        setattr(module, name, value)
    module._respecialize = respecialize
    module._numpy = ErrorModeFallback(graph)
    loader.install(module, gen)
    elapsed = time.perf_counter() - start
    artifact = Artifact(graph.name, gen.cpp, path, source, fast_call(module), gen.kernel_names, elapsed)
    _report(artifact, loader.builds, loader.language, loader.kernels_file)
    return artifact


def _load_wrapper(source: str, graph_name: str) -> types.ModuleType:
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    name = f"kiln_wrapper_{graph_name}_{key}"
    filename = os.path.join(config.cache_dir, "wrappers", key[:2], f"{name}.py")
    try:
        if not os.path.exists(filename):
            os.makedirs(os.path.dirname(filename), exist_ok=True)
            tmp = f"{filename}.{os.getpid()}.tmp"
            with open(tmp, "w") as f:
                f.write(source)
            os.replace(tmp, filename)
    except OSError:
        filename = f"<{name}>"
    module = types.ModuleType(name)
    module.__file__ = filename
    exec_source(source, filename, module.__dict__)
    return module


def report_loops(graph_name: str, source: str, so: str, launchers: list[str], built: bool,
                 seconds: float) -> None:
    """The C++ module of a graph's loop nodes (kiln/lowering/loops.py) to ``output_code``
    and ``KILN_DEBUG_DIR`` (``NNN_<graph>_loops/loops.cpp`` and the Python launchers that
    call it), as :func:`_report` does for kernels."""
    header = (f"graph '{graph_name}': {len(launchers)} loop node(s) as C++ loops, "
              f"{'built' if built else 'loaded from cache'} in {seconds * 1e3:.0f} ms")
    py = "\n".join(launchers)
    _emit(header, f"# loop launchers\n{py}\n# C++ ({so})\n{source}", f"{graph_name}_loops",
          {"loops.cpp": source, "launchers.py": py})


def _report(artifact: Artifact, builds: int, language: str = "C++", kernels_file: str = "kernels.cpp") -> None:
    header = (f"graph '{artifact.name}': {len(artifact.kernel_names)} kernel(s), "
              f"{'built' if builds else 'loaded from cache'} in {artifact.compile_seconds * 1e3:.0f} ms")
    text = f"# wrapper\n{artifact.wrapper}\n# {language} ({artifact.so})\n{artifact.cpp}"
    _emit(header, text, artifact.name, {"wrapper.py": artifact.wrapper, kernels_file: artifact.cpp})


def _emit(header: str, text: str, folder: str, files: dict[str, str]) -> None:
    """One compiled artifact to the ``output_code`` log and logger, and its ``files`` to
    ``KILN_DEBUG_DIR/NNN_<folder>/``."""
    if logs.enabled("output_code"):
        logs.log("output_code", header, text)
    if output_code_log.isEnabledFor(logging.DEBUG):
        output_code_log.debug("%s\n%s", header, text)
    if config.debug_dir:
        path = os.path.join(config.debug_dir, f"{next(_counter):03d}_{folder}")
        os.makedirs(path, exist_ok=True)
        for name, content in files.items():
            with open(os.path.join(path, name), "w") as f:
                f.write(content)
