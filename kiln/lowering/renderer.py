"""The backend seam below the scheduler: what a renderer provides.

``generate(graph, example_inputs, renderer)`` (kiln/runtime/backend.py) runs the
backend-neutral pipeline — lowering, scheduling, kernel-local buffers, the in-place
plan, the memory plan (lowering/memory.py) — and asks the renderer for everything
target-specific: which dtypes kernels can hold, which scalar functions and reduction
combines it spells, each kernel's plan (data, lowering/plan.py) and its text (printed
once), the module, and, for the Python wrapper, input checks, how to load the module,
pass an array, allocate one and launch a kernel. Building and loading the module is the
runtime's half, named by ``loader`` (``kiln.runtime.build:CppLoader``: g++ and cffi).
A new backend is a subclass here plus its templates plus a runtime loader; the scheduler
never changes (docs/adding_a_backend.md lists every member).

    >>> from kiln.lowering.cpp import CppRenderer
    >>> r = CppRenderer(num_threads=2)
    >>> "float64" in r.dtypes, r.supports("sin", "float32"), r.supports("sin", "int64")
    (True, True, False)
"""
from __future__ import annotations

import collections
import dataclasses
import re
from typing import Any

import numpy as np

# The combines every renderer's reduction loops provide (lowering/reductions.py).
BASE_REDUCTIONS = frozenset({"sum", "prod", "max", "min", "any", "all"})


class Renderer:
    """Target-specific code generation (see the module doc); subclasses fill it in."""

    name = "abstract"
    # Where the runtime half lives: "module:Class", a loader that builds the module text
    # and installs the kernels in the wrapper (kiln/runtime/build.py ``CppLoader``,
    # kiln/runtime/triton_backend.py ``TritonLoader``). A name, not an import: lowering
    # never depends on the runtime.
    loader = ""
    # numpy dtype names kernels can hold; others make their nodes extern calls
    dtypes: frozenset = frozenset()
    # reduction combines its kernels accumulate; other reductions are extern calls
    reductions: frozenset = BASE_REDUCTIONS
    # of those, the ones left to the extern (NumPy's SIMD loop) when they reduce contiguous
    # runs of an array as it is; a computed source or strided runs still get a kernel
    extern_when_contiguous: frozenset = frozenset()
    # scan combines its kernels run (cumsum: "sum", cumprod: "prod"; lowering/reductions.py
    # lower_scan); other scans are extern calls (NumPy's accumulate)
    scans: frozenset = frozenset()
    # Its ops handler implements index and bind_index (loads at computed indices):
    # fresh-array fills and region writes (kiln/lowering/fills.py) lower as selects.
    computed_indices = False

    def reruns_only_fresh(self, kernel: Any) -> bool:
        """Would ``kernel``, writing an output over an intermediate buffer it reads (the
        in-place reuse of kiln/lowering/inplace.py), do more work on every launch than
        the buffer it saves costs? Then it takes only a caller's array it is the new value
        of (C++: CppRenderer's fp predicates)."""
        return False

    def supports(self, fn: str, dtype: Any) -> bool:
        """Does this target spell scalar function ``fn`` for a loop of ``dtype``?"""
        raise NotImplementedError

    def call_width(self, fn: str, dtype: Any) -> str | None:
        """How a call of scalar function ``fn`` in a loop of ``dtype`` runs: "scalar" (it
        keeps the loop from running in vectors), "vector" (it computes a whole vector
        whatever the lanes in use: called from a scalar loop it costs a vector per
        element), or None (either way). Lowering keeps the two out of one loop."""
        return None

    # -- kernels ---------------------------------------------------------------------------
    def plan_kernel(self, kernel: Any, local: dict, size_args: tuple, inplace: dict) -> Any:
        """A scheduled kernel's plan (kiln/lowering/plan.py): loops, blocking, accumulators,
        threads, cost — data, decided once, before any text. ``local``: the kernel-local
        buffers (scheduler.kernel_locals); ``size_args``: the size symbols passed as kernel
        arguments; ``inplace``: outputs written over dead inputs (inplace.plan_inplace)."""
        raise NotImplementedError

    def render_kernel(self, plan: Any) -> Any:
        """A planned kernel's text, printed once: a rendered kernel with ``name``,
        ``source``, ``buffers`` and ``scalars`` in parameter order, ``written`` (buffer
        names it stores) and ``inplace`` (output name -> the input Buffer it writes over)."""
        raise NotImplementedError

    def render_module(self, graph_name: str, kernels: list) -> str:
        raise NotImplementedError

    def body_key(self, rendered: Any) -> str | None:
        """A text that two rendered kernels share exactly when either's code, called
        with the other's arguments, does what the other's would (the same body up to its
        name and parameter names): the module then holds the first and every launch of
        the others calls it (:func:`share_identical`). None: never shared."""
        return None

    def offsets_key(self, rendered: Any) -> str | None:
        """Like :meth:`body_key`, but blind to the constant offsets of the kernel's memory
        indices (``rendered.offsets``): kernels with one such key differ only in those
        offsets, and :func:`share_identical` builds one of them with the differing offsets
        as arguments (:meth:`render_offsets`). None: never shared so."""
        return None

    def render_offsets(self, plan: Any, vary: tuple) -> Any:
        """The kernel of ``plan`` with the offsets at positions ``vary`` (of
        ``rendered.offsets``) taken as arguments after its size arguments."""
        raise NotImplementedError

    def module_signature(self, kernels: list) -> str:
        """What the loader needs besides the module (C declarations for cffi)."""
        return ""

    # -- the wrapper asks ----------------------------------------------------------------
    def wrapper_prelude(self, module_path: str, signature: str, kernels: list) -> list[str]:
        """Wrapper lines that load the module and bind each kernel's name."""
        raise NotImplementedError

    def input_checks(self, inputs: list) -> list[str]:
        """Python conditions on the wrapper's inputs (``(name, Buffer | Scalar)`` pairs)
        under which a call must compile another variant: what the kernels assumed that
        the shared checks (shapes, strides, sizes) do not cover, such as the array type
        and device. Checked first in ``call``."""
        return []

    # The globals a launch passes after the kernel's arguments, when the renderer's
    # launch is ``kernel(*args, *globals)`` through a launch.c Launcher: the wrapper then
    # also states its steps as data (wrapper.py ``_fast_plan``), run in C. None: never.
    fast_launch_tail: tuple | None = None

    def wrapper_globals(self) -> list[str]:
        """Constants the launches use (a thread count)."""
        return []

    def pointer(self, buf: Any) -> str:
        """How the wrapper passes array ``buf.name`` to a kernel."""
        raise NotImplementedError

    def allocate(self, buf: Any) -> str:
        """An expression for a new array for ``buf`` (shape may name size symbols): C
        order, or the axis order NumPy gives that result (``buf.order``, static shapes; axes
        in ``buf.flips`` reversed, as np.flip's view of a fresh array is)."""
        if getattr(buf, "order", None) is None:
            return self.empty(buf.shape, np.dtype(buf.dtype))
        shape = tuple(buf.shape[a] for a in buf.order)
        back = tuple(int(i) for i in np.argsort(buf.order))
        flips = getattr(buf, "flips", ())
        view = "" if not flips else "[" + ", ".join(
            "::-1" if a in flips else ":" for a in range(len(buf.shape))) + "]"
        transpose = "" if back == tuple(range(len(back))) else f".transpose({back!r})"
        return f"{self.empty(shape, np.dtype(buf.dtype))}{transpose}{view}"

    def empty(self, shape: tuple, dtype: np.dtype) -> str:
        """An expression for a new C-ordered array (:meth:`allocate`)."""
        return f"np.empty({shape!r}, np.{dtype.name})"

    def allocation_globals(self, dtypes: list) -> list[str]:
        """Wrapper lines defining what :meth:`empty` names, for arrays of these dtypes."""
        return []

    def bind_kernels(self, kernels: list) -> list[str]:
        """Wrapper lines giving each kernel its name (after the prelude)."""
        return []

    def call_prelude(self, kernels: list) -> list[str]:
        """Lines that start each call of the wrapper (state the kernels keep per call)."""
        return []

    def launch(self, rendered: Any, args: list[str]) -> str:
        """The statement running a kernel on ``args`` (pointers, scalars, sizes)."""
        raise NotImplementedError

    def wrapper_tail(self, kernels: list) -> str:
        """Wrapper text after ``call``: data its bindings read only when first used."""
        return ""


def renamed_by_position(source: str, name: str, params: Any) -> str:
    """``source`` of kernel ``name`` with that name and its parameter names replaced by
    position, and full-line ``//`` comments dropped (they name source lines): a
    :meth:`Renderer.body_key` for kernels whose text is code and such comments."""
    text = "\n".join(line for line in source.replace(name, "\0K").splitlines()
                     if not line.lstrip().startswith("//"))
    if not params:
        return text
    index = {p: i for i, p in enumerate(params)}
    pattern = r"\b(?:" + "|".join(re.escape(p) for p in sorted(index, key=len, reverse=True)) + r")\b"
    return re.sub(pattern, lambda m: f"\0{index[m.group(0)]}", text)


_MARKED = re.compile("( \\+ )?\x01(-?\\d+)\x02")


def resolve_offsets(text: str, vary: tuple = ()) -> tuple[str, tuple]:
    """``text`` with its marked offsets (loop_ir.Affine.render(mark=True)) written out,
    and the offsets in order. The ones at positions ``vary`` become the arguments
    ``k_off<position>``; the others are literals, written as an unmarked index would be."""
    values: list[int] = []

    def put(m: re.Match) -> str:
        k, c, plus = len(values), int(m.group(2)), m.group(1)
        values.append(c)
        if k in vary:
            return f" + k_off{k}" if plus else f"k_off{k}"
        if not plus:
            return str(c)
        return "" if c == 0 else f" - {-c}" if c < 0 else f" + {c}"
    return _MARKED.sub(put, text), tuple(values)


def offsets_blind(text: str) -> str:
    """``text`` with every marked offset the same (a key blind to the offsets)."""
    return _MARKED.sub(" + \x01", text)


def share_identical(rendered: dict, renderer: Renderer, plans: dict | None = None) -> list:
    """The kernels to build, one per distinct body (:meth:`Renderer.body_key`). An unrolled
    loop's steps lower to kernels that differ only in the buffers they are handed; each
    later one becomes an alias of the first (``rendered`` is updated: the same
    parameters, the first's name, so its launches call the first's function), and the
    first's text says how many launches it serves.

    With the kernels' ``plans``, kernels that differ only in their memory offsets
    (:meth:`Renderer.offsets_key`: step k of ``for k in range(n): p[:] = np.minimum(p,
    p[:, k, None] + p[k])`` reads column and row k) share one build too, which takes the
    offsets that differ as arguments (``offset_args`` of each launch): 200 unrolled steps
    build one kernel instead of 200 (g++ time is per kernel)."""
    first: dict[str, Any] = {}
    built = []
    for name, rk in list(rendered.items()):
        key = renderer.body_key(rk)
        if key is not None and key in first:
            rendered[name] = dataclasses.replace(rk, name=first[key].name, source="", cdef="")
            continue
        if key is not None:
            first[key] = rk
        built.append(rk)
    if plans is not None:
        built = _share_offsets(rendered, renderer, plans, built)
    served = collections.Counter(rk.name for rk in rendered.values())
    for rk in built:
        if served[rk.name] > 1:
            rk.source = (f"// (one build: this code runs as {served[rk.name]} kernels of the graph, "
                         f"each launch with its own buffers{' and offsets' if getattr(rk, 'offset_vary', ()) else ''})\n"
                         + rk.source)
    return built


def _share_offsets(rendered: dict, renderer: Renderer, plans: dict, built: list) -> list:
    """``built`` with each group of kernels that differ only in memory offsets built once
    (see :func:`share_identical`); ``rendered`` updated."""
    groups: dict[str, list] = {}
    for rk in built:
        key = renderer.offsets_key(rk)
        if key is not None:
            groups.setdefault(key, []).append(rk)
    shared: dict[str, Any] = {}   # a group member's name -> the group's build
    for members in groups.values():
        if len(members) < 2:
            continue
        vary = tuple(k for k in range(len(members[0].offsets))
                     if len({rk.offsets[k] for rk in members}) > 1)
        one = renderer.render_offsets(plans[members[0].name], vary)
        for rk in members:
            shared[rk.name] = one
    if not shared:
        return built
    for name, rk in list(rendered.items()):
        one = shared.get(rk.name)
        if one is None:
            continue
        args = tuple(rk.offsets[k] for k in one.offset_vary)
        rendered[name] = one if name == one.name else dataclasses.replace(
            rk, name=one.name, source="", cdef="", codes=one.codes, params=one.params,
            offset_args=args)
    out = []
    for rk in built:
        one = shared.get(rk.name)
        if one is None:
            out.append(rk)
        elif rk.name == one.name:
            out.append(one)
    return out
