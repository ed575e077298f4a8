"""The runtime of an aot-compiled graph: input checks, the epilogue, and the autograd node.

:func:`aot_autograd` turns a captured graph into a callable taking the runtime inputs
(arrays, Python scalars, kiln.Tensors). Per call it:

1. checks input aliasing when the graph writes: the same array passed twice gets a
   deduplicated variant (one input); inputs that overlap otherwise run the original graph
   op by op, which is exactly NumPy (never silently wrong);
2. picks the variant for "which inputs need a gradient" (none when grad mode is off),
   compiling it on first use: functionalize, then either compile the functional graph
   (inference) or build the joint graph, partition it and compile the forward — the
   backward is compiled on the first ``backward()``;
3. runs the compiled forward; copies final values of mutated inputs into the caller's
   arrays (the epilogue); rebuilds outputs that alias inputs or each other as views;
4. when training, returns Tensors whose ``grad_fn`` is one ``CompiledFunctionBackward``.

    >>> import numpy as np, kiln
    >>> from kiln.ir import trace
    >>> from kiln.ops import F, TensorMeta
    >>> g = trace(lambda x: F.sum(F.square(x)), [TensorMeta((3,), np.float64)], ["x"])
    >>> f = aot_eager(g, [np.zeros(3)])
    >>> x = kiln.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (loss,) = f(x)
    >>> loss.grad_fn
    <CompiledFunctionBackward>
    >>> loss.backward(); x.grad
    tensor([2., 4., 6.])
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

from .. import array_kinds
from ..autograd.grad_mode import is_grad_enabled
from ..errors import KilnError, warn_fallback
from ..ir import Graph
from ..ir.passes import writes_an_input
from ..ops.random import generators_in
from .functionalize import has_mutation, layout_class
from .aliasing import InputsOverlap, input_aliasing  # noqa: F401 (InputsOverlap re-exported)
from . import view_outputs
from .symbolic import size_pattern
from .training import CompiledFunctionBackward, _tensor_cls  # noqa: F401 (re-exported)
from .variant import _Variant, _log, run_op_by_op

Compiler = Callable[[Graph, Sequence[Any]], Callable]


def aot_autograd(graph: Graph, example_inputs: Sequence[Any], fw_compiler: Compiler,
                 bw_compiler: Compiler | None = None) -> "AOTFunction":
    """Wrap ``graph`` so it runs functionalized, with compiled forward and backward.

    ``fw_compiler``/``bw_compiler`` are backends ``(graph, example_inputs) -> callable``;
    ``lambda g, ex: g`` runs graphs with the NumPy interpreter. The result takes the
    runtime inputs and returns what ``graph(*inputs)`` returns (a tuple), with NumPy's
    side effects on the arguments.
    """
    return AOTFunction(graph, example_inputs, fw_compiler, bw_compiler or fw_compiler)


def interpret(graph: Graph, example_inputs: Sequence[Any]) -> Callable:
    """The NumPy reference backend: the graph runs itself. On arrays on a GPU (CuPy's) it
    runs as its NumPy program with its constant arrays copied to that GPU once (NumPy's
    protocols hand each op's kernel to CuPy, which refuses a host operand)."""
    place = array_kinds.placement(example_inputs)
    if place is None:
        return graph
    from ..ir.printer import numpy_program
    return numpy_program(graph, label="aot_eager graph", place=place)


def aot_eager(graph: Graph, example_inputs: Sequence[Any]) -> "AOTFunction":
    """``backend="aot_eager"``: functionalization and autograd, both graphs run by NumPy."""
    return aot_autograd(graph, example_inputs, interpret, interpret)


def _unwrap(value: Any, Tensor: Any) -> Any:
    return value._data if isinstance(value, Tensor) else value


def _short_path(i: int) -> property:
    """An AOTFunction's short path ``i``, kept in its ``_short`` list (see __init__)."""
    return property(lambda self: self._short[i], lambda self, run: self._short.__setitem__(i, run))


class AOTFunction:
    _direct = _short_path(0)
    _plain = _short_path(1)
    _merged = _short_path(2)

    def __init__(self, graph: Graph, example_inputs: Sequence[Any], fw_compiler: Compiler,
                 bw_compiler: Compiler) -> None:
        self.graph = graph
        self.fw_compiler = fw_compiler
        self.bw_compiler = bw_compiler
        self.mutates = has_mutation(graph)
        self.variants: dict[Any, _Variant] = {}
        self.__name__ = f"aot_{graph.name}"
        # The short paths below, ``[_direct, _plain, _merged]``: fastcheck.c's entries read the
        # list itself (an attribute lookup per call cost ~20 ns of a ~200 ns cache hit).
        self._short: list = [None, None, {}]
        # Set once a plain-array call showed that the compiled forward's outputs are the
        # user's outputs as they are (nothing written back, no views to rebuild): later
        # plain-array calls go straight to it (the cache-hit path of small inputs).
        self._direct = None
        # The same for graphs that write their array arguments: inference on plain
        # arrays, outputs that are fresh values or arguments (no views to rebuild); it
        # still checks the arguments for overlap on every call (see _Variant.plain_runner).
        self._plain = None
        # ``_merged`` (``_short[2]``, read by fastcheck.c too): the same for calls passing
        # one array as several arguments (``f(x, x)``), per pattern of repeats
        # (input_aliasing's): ``run(args)`` of the variant merging them.
        # Inputs whose memory layout decides a plan's view-or-copy answers (see Plan).
        self.layout_inputs: tuple[int, ...] = ()
        # Int inputs that are slice bounds (``x[:n]``): their slices' lengths are sizes
        # the joint graph names (SliceLength), or a pinned variant is keyed by them too.
        from ..lowering.slice_bounds import slice_bound_positions
        self.bound_inputs = tuple(sorted(slice_bound_positions(graph)))
        self.dynamic = any(p.meta.get("dynamic_dims") for p in graph.placeholders) \
            or bool(self.bound_inputs)
        # (input, dim) of every dynamic dim: training variants are keyed by which of them
        # are equal (kiln/aot/symbolic.py), or by shape for the (dedup, mask) keys in
        # ``pinned``, whose derivative rules needed the sizes as numbers.
        self.dynamic_dims = tuple((i, d) for i, p in enumerate(graph.placeholders)
                                  for d in p.meta.get("dynamic_dims", ()))
        self.pinned: set = set()
        # On an error, redo the writes NumPy would have done before it (run op by op);
        # off where the caller reruns the whole function as Python instead.
        self.replay_on_error = True
        # Arguments overlapping in memory run the graph op by op (exactly NumPy), or, for
        # a graph writing into its inputs whose caller can run the function as Python
        # instead (a cache entry, entries.graph_call sets it: faster, NumPy's own
        # in-place calls), raise InputsOverlap before anything ran.
        self.writes_inputs = self.mutates and writes_an_input(graph)
        self.overlap_runs_python = False
        # Generators the graph draws from (kiln/ops/random.py): before that replay their
        # states are put back, so the replay draws the numbers the failed run drew. Only
        # a graph with an op that raises on values needs it (a snapshot of NumPy's global
        # MT19937 costs ~230 us: ten times a small graph's call).
        self.generators = tuple(generators_in(graph.nodes)) \
            if any(n.target.raises(n.args, n.kwargs) for n in graph.calls) else ()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<kiln aot-compiled graph '{self.graph.name}' ({len(self.variants)} variants)>"

    def __call__(self, *args: Any) -> tuple:
        Tensor = _tensor_cls()
        direct, plain, _ = self._short
        if direct is not None or plain is not None or self._merged:
            for a in args:  # the short paths take plain arrays only
                if isinstance(a, Tensor):
                    break
            else:
                if direct is not None:
                    return direct(*args)
                rep = input_aliasing(args, args)
                if rep is None:
                    if plain is not None:
                        return plain(args)
                elif (run := self._merged.get(rep)) is not None:
                    return run(args)
        return self._general(args)

    def spread_path(self) -> Callable | None:
        """:meth:`plain_path` called with the arguments spread (``run(*args)``), where the
        short path is the compiled forward itself (no tuple built per call); else None."""
        return self._direct

    def plain_path(self) -> Callable | None:
        """``run(args)`` for a caller that knows its arguments are plain arrays (no
        kiln.Tensors) of the layouts of the call before and that no two overlap: the
        short path :meth:`__call__` takes after its checks (a graph loop's body, called
        once per iteration, kiln/ops/graph_loops.py); None until a call has built it."""
        if self._direct is not None:
            direct = self._direct
            return lambda args: direct(*args)
        return self._plain

    def _general(self, args: tuple) -> tuple:
        Tensor = _tensor_cls()
        arrays = given = [_unwrap(a, Tensor) for a in args]
        called = args    # (a replay after an error takes every argument, merged or not)
        dedup = None
        if self.mutates:
            dedup = input_aliasing(args, arrays)
            if dedup == "overlap":
                how = "the function runs as Python" if self.overlap_runs_python else \
                    "running it op by op, as NumPy would"
                _log(f"{self.graph.name}: inputs overlap in memory and the graph writes to "
                     f"them; {how}")
                if self.overlap_runs_python:
                    raise InputsOverlap(self.graph.name)
                return run_op_by_op(self.graph, args)
            if dedup is not None:
                kept = [i for i, r in enumerate(dedup) if r == i]
                args = tuple(args[i] for i in kept)
                arrays = [arrays[i] for i in kept]
        mask = None  # which inputs need a gradient; None when none does (or grad mode is off)
        if is_grad_enabled():
            needs = tuple(isinstance(a, Tensor) and a._requires_grad and a._data.dtype.kind in "fc"
                          for a in args)
            if True in needs:
                mask = needs
        key = (dedup, mask)
        if self.dynamic and (mask is not None or (dedup, mask) in self.pinned):
            # Derivative rules write sizes into the joint graph (1/N of a mean, a
            # broadcast back to x.shape): symbolic ones serve every size with the same
            # equal dims; those that needed numbers are per shape.
            if key in self.pinned:
                key += self._sizes_of(arrays, dedup)
            else:
                key += (size_pattern(given, self.dynamic_dims),)
        if self.layout_inputs:
            key += tuple(layout_class(arrays[i]) for i in self.layout_inputs if i < len(arrays))
        variant = self.variants.get(key)
        failed = None
        if variant is None:
            with self._lock:  # threads meeting a new variant together compile it once
                variant = self.variants.get(key)
                if variant is None:
                    try:
                        variant = self._new_variant(key, dedup, mask, args, arrays)
                    except Exception as e:
                        if isinstance(e, KilnError) or (mask is not None and isinstance(e, _BUILD_BUGS)):
                            raise
                        # NumPy's own error, found while building (a write into a
                        # read-only view: x += 1; x.imag[...] = 0.5 of an int x), or
                        # kiln's failure to build it: this variant runs op by op, as NumPy
                        # would, which makes the writes (and draws) NumPy makes before its
                        # error, then raises it
                        variant = self.variants[key] = _op_by_op(self.graph)
                        failed = e
        if failed is not None:
            result = variant(args, arrays, called)
            # NumPy ran it: kiln's own failure to build it. Say so once (it runs op by
            # op, not the whole function as Python on every call)
            warn_fallback(f"kiln: graph '{self.graph.name}' could not be compiled "
                          f"for these inputs ({type(failed).__name__}: {failed}); it runs "
                          f"op by op with NumPy", stacklevel=2)
            return result
        return variant(args, arrays, called)

    def _new_variant(self, key: tuple, dedup: Any, mask: Any, args: tuple, arrays: list) -> "_Variant":
        variant = _Variant(self, dedup, mask, arrays)
        if variant.pinned and (dedup, mask) not in self.pinned:
            self.pinned.add((dedup, mask))   # built for these shapes: keyed by them
            key = (dedup, mask) + self._sizes_of(arrays, dedup)
            if self.layout_inputs:
                key += tuple(layout_class(arrays[i]) for i in self.layout_inputs if i < len(arrays))
        if variant.plan.layout_inputs and not self.layout_inputs:
            # Which inputs' layouts matter is known now: key this call's variant by them
            # too, so later calls with other layouts get a plan of their own.
            self.layout_inputs = variant.plan.layout_inputs
            self._plain = None   # its variant was keyed without layouts
            self._merged = {}
            key += tuple(layout_class(arrays[i]) for i in self.layout_inputs)
        self.variants[key] = variant
        sizes = self._sizes_of(arrays, dedup) if variant.pinned and not variant.training else None
        layouts = key[2 + len(sizes or ()):] if self.layout_inputs else ()
        if key == (None, None) + (sizes or ()) + layouts and (sizes is not None or not variant.pinned) \
                and not any(isinstance(a, _tensor_cls()) for a in args):
            # (outputs that are views to rebuild, with nothing written back: one generated
            # function, view_outputs.py, rebuilds them with no per-call setup)
            direct = variant.forward if variant.outputs_are_direct() else \
                view_outputs.for_variant(variant) if not self.mutates else None
            run = variant.plain_runner() if direct is None else None
            if layouts or sizes is not None:
                direct, run = self._for_layouts(layouts, direct, run, sizes)
            if direct is not None:
                self._direct = direct
            elif self.mutates:
                self._plain = run   # (the entry takes it from C: fastcheck.h run_graph)
        elif key == (dedup, None) and dedup is not None and not variant.pinned and not self.layout_inputs \
                and not any(isinstance(a, _tensor_cls()) for a in args):
            # f(x, x) of a graph that writes (only such graphs merge inputs): the variant's
            # plain run, not the general path per call (iadd(x, x) on 100 values: 8.2 us
            # against NumPy's 0.3)
            run = variant.plain_runner(tuple(i for i, r in enumerate(dedup) if r == i))
            if run is not None:
                self._merged[dedup] = run
        return variant

    def _sizes_of(self, arrays: list, dedup: Any) -> tuple:
        """What a pinned variant (a backward built for the call's sizes) is keyed by: the
        inputs' shapes, and the values of the int inputs that are slice bounds (``arrays``
        as deduplicated by ``dedup``: an int keeps its place among the inputs kept)."""
        bounds = self.bound_inputs
        if dedup is not None:
            kept = [i for i, r in enumerate(dedup) if r == i]
            bounds = tuple(kept.index(i) for i in bounds if i in kept)
        return tuple(getattr(a, "shape", None) for a in arrays) + tuple(arrays[i] for i in bounds)

    def _for_layouts(self, layouts: tuple, direct: Any, run: Any, sizes: tuple | None = None) -> tuple:
        """The short paths of a variant keyed by its inputs' layouts (a reshape of an input
        is a view or a copy as its layout says), or by their sizes (``sizes``, a pinned
        variant: a write put back through a reshape to the call's shape): they check those
        first, and take the general path for others (which finds or builds their variant)."""
        index, general, sizes_of = self.layout_inputs, self._general, self._sizes_of

        def same(args: tuple) -> bool:
            if sizes is not None and sizes_of(args, None) != sizes:
                return False
            for i, want in zip(index, layouts):
                if i < len(args) and layout_class(args[i]) != want:
                    return False
            return True

        if direct is not None:
            forward = direct
            return (lambda *args: forward(*args) if same(args) else general(args)), None
        if run is not None:
            return None, (lambda args: run(args) if same(args) else general(args))
        return None, None


# the errors a bug in kiln raises while building a variant (a training one raises them)
_BUILD_BUGS = (KeyError, AttributeError, AssertionError, NotImplementedError)


def _op_by_op(graph: Graph) -> Callable:
    """A variant that runs ``graph`` op by op on the caller's values (its build failed)."""
    return lambda args, arrays, called: run_op_by_op(graph, called)
