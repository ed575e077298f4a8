"""C++ renderer: a scheduled kernel -> one ``extern "C"`` function (and its cffi cdef).

Python decides everything here — loop nests, collapsed dimensions, index expressions,
reduction accumulators, when to use threads — and the jinja2 templates in
kiln/codegen_templates/ lay it out. Generated kernels:

- collapse adjacent loops whenever every access allows it (a contiguous 2-d array is one
  flat loop), so the innermost loop is long and unit-stride and GCC vectorizes it
  (``#pragma omp simd``; libm calls go to glibc's vector math through SIMD declarations);
- run serially unless the work is large enough to pay for an OpenMP region;
- add float sums over one contiguous run in NumPy's pairwise order in the sum's dtype
  (a reduction over everything walks memory in order, so ``x.T.sum()`` is one run), and
  reductions over leading axes row by row in the output dtype, as NumPy does
  (bit-identical sums); other float sums accumulate in double; max/min are NaN-aware.

The kernel plan (:class:`~kiln.lowering.cpp_plan.CppKernelPlan`, what is decided before
any text) is made in kiln/lowering/cpp_plan.py; this module prints it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .cpp_ops import CTYPES, CppEmitter, NameSource, call_width, calls_svml, ctype, template  # noqa: F401
from .cpp_plan import MAX_SEGMENT_COPIES, CppKernelPlan, plan_kernel
from .renderer import Renderer, offsets_blind, renamed_by_position, resolve_offsets
from .sizes import printed_symbols, product
from .cpp_fp import saved_arrays, told_body
from .cpp_text import helpers_named, prelude, templates
from .fp_flags import flagless, fp_table, nan_quiet, numpy_tells
from .plan import describe
from .scheduler import Kernel
from .cpp_loops import PARALLEL_GRAIN, below_grain, scalar_body
from .cpp_stages import ROW_WRITE_CHUNK, render_stages

# A kernel whose work (elements x statements, known when it is built) is at most this runs
# without releasing the GIL (runtime/launch.c's keep_gil): it takes less time than the
# release and the take-back would.
KEEP_GIL_WORK = 1 << 12
# So does a kernel of at most KEEP_GIL_ELEMENTS elements whose work is at most
# KEEP_GIL_SMALL_WORK (~1 us at cpp_ops' ~0.02 ns a statement, ~60 elements of glibc's
# scalar sin): NumPy's own loops release the GIL only above 500 elements
# (NPY_BEGIN_THREADS_THRESHOLDED), so np.sin of 8 elements holds it while it runs, and a
# kiln kernel doing that work holds it no longer. (np.sin(x) * 2.0 + 1.0 on float64[8]:
# sin's 1000 statements an element made it 8000, and the release and take-back cost
# ~60 ns of a ~600 ns call.)
KEEP_GIL_ELEMENTS = 500
KEEP_GIL_SMALL_WORK = 1 << 16


def keeps_gil(work: str, cost: int) -> bool:
    """Whether a kernel of ``work`` elements (a C expression: a digit string when known at
    build time) of ``cost`` statements each runs holding the GIL (KEEP_GIL_WORK)."""
    if not work.isdigit():
        return False
    total = int(work) * cost
    return total <= KEEP_GIL_WORK or (int(work) <= KEEP_GIL_ELEMENTS and total <= KEEP_GIL_SMALL_WORK)

# A kernel's parameter C types -> kiln/runtime/launch.c's argument codes (the letters of
# Python's struct module; 'p' an array's data pointer)
LAUNCH_CODES = {"void*": "p", "double": "d", "float": "f", "int8_t": "b", "uint8_t": "B",
                "int16_t": "h", "uint16_t": "H", "int32_t": "i", "int": "i", "uint32_t": "I",
                "int64_t": "q", "uint64_t": "Q"}


def launch_codes(cparams: list[str]) -> str:
    """One code per parameter ('?' for a type the launcher does not pass: no packed entry)."""
    return "".join(LAUNCH_CODES.get(t, "?") for t in cparams)


@dataclass
class RenderedKernel:
    name: str
    source: str
    cdef: str
    buffers: list = field(default_factory=list)   # Buffers passed, in parameter order
    scalars: list = field(default_factory=list)   # Scalar args passed, after the buffers
    written: set = field(default_factory=set)
    inplace: dict = field(default_factory=dict)   # output name -> input Buffer it writes over
    codes: str = ""   # runtime/launch.py's argument codes ('?': no packed entry)
    size_args: tuple = ()   # the size symbols passed, after the scalars
    params: tuple = ()      # the C parameter names, in order (CppRenderer.body_key)
    keep_gil: bool = False  # tiny work: launched without releasing the GIL (KEEP_GIL_WORK)
    fp: tuple = ()          # what its floating-point flags can mean (lowering/fp_flags.py)
    fp_reads: tuple = ()    # the arguments it reads and does not overwrite (NaN checks)
    fp_opaque: bool = False  # it reads a NaN no check sees (a literal, an input it overwrites)
    fp_slots: tuple = ()    # (bit of its owned word, entry index, kind): who raised what (fp_flags.py)
    fp_rerun: bool = False  # its slots' predicates run in ``<name>_told_run``, when wanted
    offsets: tuple = ()     # its memory indices' constant offsets, in order (renderer.resolve_offsets)
    offsets_key: str = ""   # its text blind to them (CppRenderer.offsets_key)
    offset_vary: tuple = ()  # the offsets (positions) its code takes as arguments, after the sizes
    offset_args: tuple = ()  # their values for this launch
    told_source: str = ""   # fp_rerun: the second body and ``<name>_told_run`` (told_module)
    told_cdef: str = ""     # its declarations
    fp_names: tuple = ()    # the graph node's name of each ``fp`` entry (CppRenderer.bind_kernels)
    fp_numpy: tuple = ()    # the entries whose warnings NumPy's op tells (fp_flags.numpy_tells)


def render_kernel(kernel: Kernel, local: dict, size_args: tuple = (),
                  inplace: dict | None = None) -> RenderedKernel:
    """C++ for one kernel: :func:`plan_kernel`, then :func:`print_kernel`."""
    return print_kernel(plan_kernel(kernel, local, size_args, inplace))


def print_kernel(plan: CppKernelPlan, vary: tuple = ()) -> RenderedKernel:
    """The C++ text of a planned kernel (printed once). It takes as ``int64_t`` arguments
    the size symbols its text names (of ``plan.size_args``, every symbol of the graph),
    then the memory offsets at positions ``vary`` (renderer.share_identical)."""
    with printed_symbols() as used:
        used |= getattr(product(plan.kernel.frame.shape), "symbols", set())   # (plan.work)
        return _print_kernel(plan, used, vary)


# A max/min reduction's result is NaN where an element it read was one (``nan0 ? NaN :
# acc0``, a column reduction's ``nan0[x1 - x1_b] ? ...``: lowering/cpp_stages.py): the
# check of the kernel's inputs sees that NaN, so only other NaN literals (np.nan in the
# user's code, an fmax accumulator's start) are NaNs the kernel reads that no check sees
# (a column max writes it nan0[x1 - x1_b]: np.log(X).max(axis=0) of an X with a -1 lost
# "invalid value encountered in log" when this read only nan0)
_PROPAGATED_NAN = re.compile(r'\bnan\d+(?:\[[^\[\]]*\])? \? -?\(*(?:\(\w+\))?-?__builtin_nanf?\(""\)\)*')


def reads_nan_literal(body: str) -> bool:
    """Does C++ kernel ``body`` hold a NaN literal besides a reduction's NaN propagation?"""
    return "__builtin_nan" in _PROPAGATED_NAN.sub("", body)


def _print_kernel(plan: CppKernelPlan, used: set, vary: tuple) -> RenderedKernel:
    kernel, inplace = plan.kernel, plan.inplace
    frame = kernel.frame
    local = plan.local
    names = NameSource(inplace)
    names.mark_offsets = True
    entries, slots, entry_names = fp_table(kernel)
    lines = render_stages(plan, names)

    # (a kernel without outer loops runs one point; its variable is no size symbol's name)
    loops = plan.outer_loops or [("x0", "1")]
    # Threads take chunks of the first loop: a flat loop's cut at multiples of 64; blocked
    # points (a column reduction) at least 64 wide where there are enough (a chunk of a
    # few columns would walk every row for a few cache lines each), and ROW_WRITE_CHUNK
    # wide, two at least, where the kernel also stores whole rows (cpp_stages.py).
    flat_pointwise = not plan.inner_loops and not frame.axes
    columns = plan.blocked is not None and plan.blocked == loops[0][0]
    stores_rows = columns and any(role in ("row", "scan") and local.get(n.buf.name) is None
                                  for n, role in kernel.members)
    min_chunk = ROW_WRITE_CHUNK if stores_rows else 64 if columns else 1
    # (complex locals are structs, which omp simd privatizes into arrays and then does not
    # vectorize; GCC's own loop vectorizer does: no pragma there)
    body = _outer_nest(plan, loops, lines, 0, 1, simd_ok=not names.complex)
    body = ["    " + line for line in names.prologue(plan.work)] + body

    written = {n.buf.name for n in kernel.nodes if local.get(n.buf.name) is None}
    written |= {inplace[n].name for n in written if n in inplace}
    # the body again with its ops' predicates, where several ops may raise a kind
    # (a second run would differ where the kernel reads memory it overwrites: an input or
    # an earlier kernel's buffer; a buffer this kernel computes, stored and read back by a
    # later stage, a second run computes again: p = np.exp(x); p /= p.sum() as one kernel;
    # or no flag would ask for one: fp_flags.flagless)
    rewrites = bool(inplace) or flagless(slots) or any(
        b.name in written and b.name in names.loaded and b.kind != "computed"
        for b in names.buffers.values())
    told = told_body(plan, slots, rewrites,
                     lambda lines, complex_: _outer_nest(plan, loops, lines, 0, 1, simd_ok=not complex_))
    saved, saved_points = saved_arrays(names, written, body + told.lines, loops, flat_pointwise and
                                        not flagless(slots)) if told.lines and not told.rerun else ((), 0)
    if told.lines and not told.rerun and not saved:   # (the body itself computes them)
        body = told.lines
    scalar = scalar_body(plan.work, plan.cost, body)   # (tiny: scalar code, no vectorizer: cpp_loops.py SCALAR_WORK)
    body = body if scalar is None else scalar
    buffers = list(names.buffers.values())
    params, args, cparams = [], [], []
    slots = []   # the packed entry's argument expressions (runtime/launch.c's slots)
    for b in buffers:
        const = "" if b.name in written else "const "
        params.append(f"{const}{ctype(b.dtype)}* __restrict {names.args[b.name]}")
        cparams.append("void*")
        args.append(names.args[b.name])
        slots.append(f"({const}{ctype(b.dtype)}*)a[{len(slots)}].p")
    scalars = list(names.scalars.values())
    for s in scalars:
        ct = "int" if s.dtype.kind == "b" else ctype(s.dtype)
        params.append(f"{ct} s_{s.name}")
        cparams.append(ct)
        args.append(f"s_{s.name}")
        member = {"double": "d", "float": "f"}.get(ct, "i")
        slots.append(f"({ct})a[{len(slots)}].{member}")
    size_args = tuple(name for name in plan.size_args if name in used)
    for name in size_args:
        params.append(f"int64_t {name}")
        cparams.append("int64_t")
        args.append(name)
        slots.append(f"a[{len(slots)}].i")
    for k in vary:
        params.append(f"int64_t k_off{k}")
        cparams.append("int64_t")
        args.append(f"k_off{k}")
        slots.append(f"a[{len(slots)}].i")
    slots.append(f"(int)a[{len(slots)}].i")
    d0 = f"({loops[0][1]})" if "*" in loops[0][1] else loops[0][1]
    arg_codes = launch_codes(cparams + ["int"])
    ops, sources = describe(kernel)
    k = dict(name=kernel.name, ops=", ".join(ops), inplace=sorted((o, b.name) for o, b in inplace.items()), frame=_describe_frame(frame), sources=sources,
             params="".join(p + ", " for p in params), args="".join(a + ", " for a in args), body="\n".join(body),
             outer_parallel=bool(plan.outer_loops) and not below_grain(plan.work, plan.cost),
             work=plan.work, cost=plan.cost, grain=PARALLEL_GRAIN, d0=d0,
             align=64 if flat_pointwise and len(loops) == 1 else 1,
             min_chunk=min_chunk, min_points=2 * min_chunk if stores_rows else 2,
             owned=bool(told.lines), rerun=told.rerun, told_body="\n".join(told.lines),
             saved=saved, saved_points=saved_points,
             told=told.flags, packed="?" not in arg_codes, scalar=scalar is not None)
    marked = templates().get_template("cpp_kernel.cpp.j2").render(k=k)
    source, offsets = resolve_offsets(marked, vary)
    source, told_source = split_told(source)
    cdef = f"void {kernel.name}({', '.join(cparams + ['int'])});"
    if "?" not in arg_codes:
        # the entry runtime/launch.c's Launcher calls: one 8-byte slot per argument
        source += packed_entry(kernel.name, slots, k["params"] + "int nthreads")
        cdef += f"\nvoid {kernel.name}_packed(void*);"
    told_cdef = ""
    if told.rerun:   # the body with its predicates: a library of its own, built when wanted
        told_cdef = f"void {kernel.name}_told_run({', '.join(cparams + ['int'])});"
        if "?" not in arg_codes:
            told_source += packed_entry(kernel.name + "_told_run", slots)
            told_cdef += f"\nvoid {kernel.name}_told_run_packed(void*);"
    keep_gil = keeps_gil(plan.work, plan.cost)
    # (the slots' predicates compare: GCC may spell fabs(x) == inf as a signalling compare)
    if nan_quiet(kernel) and not told.lines:   # NaNs it reads raise nothing: its flags are its ops' own
        reads, opaque = (), False
    else:
        reads = tuple(i for i, b in enumerate(buffers) if b.name not in written) + \
            tuple(range(len(buffers), len(buffers) + len(scalars)))
        opaque = bool(inplace) or reads_nan_literal(k["body"]) or \
            any(b.name in written and b.kind != "computed" for b in buffers)
    return RenderedKernel(kernel.name, source, cdef, buffers, scalars, written, inplace, arg_codes,
                          size_args, tuple(args), keep_gil, entries, reads, opaque, told.slots, told.rerun,
                          offsets, renamed_by_position(offsets_blind(marked), kernel.name, tuple(args)),
                          vary, tuple(offsets[i] for i in vary), told_source, told_cdef,
                          fp_names=entry_names, fp_numpy=numpy_tells(kernel, entry_names, buffers, written, inplace,
                                                                     tuple(scalars)))


def _computed_again(kernels: list) -> set:
    """The names of the graph nodes that may warn and that more than one of ``kernels``
    computes."""
    seen: set = set()
    again: set = set()
    for rk in kernels:
        for name in set(rk.fp_names):
            (again if name in seen else seen).add(name)
    return again


def packed_entry(name: str, slots: list, params: str | None = None) -> str:
    """The entry runtime/launch.c's Launcher calls for ``name``: one 8-byte slot per argument.
    ``params`` (the entry's parameter list): the kernel's code is ``<name>_entry``, inlined
    here only, and the plain entry ``name`` (cffi's: runtime/launch.py ``pointers``) packs
    its arguments into slots and calls this one. GCC compiled the entry twice before, once
    on its own and once inlined into its packed twin, with its parallel region outlined in
    each: ~8% of a module's g++ time (suite kernels at -O3)."""
    if params is None:
        return (f"\nextern \"C\" void {name}_packed(const kiln_slot* a) {{\n"
                f"    {name}({', '.join(slots)});\n}}\n")
    names = [p.split()[-1] for p in params.split(", ")]
    stores = [f"a[{i}].{slot.rsplit('.', 1)[1]} = {'(void*)' if slot.endswith('.p') else ''}{arg};"
              for i, (slot, arg) in enumerate(zip(slots, names, strict=True))]
    # (noinline: for a small kernel GCC would copy the packed entry into the plain one)
    return (f"\nextern \"C\" __attribute__((noinline)) void {name}_packed(const kiln_slot* a);"
            f"\nextern \"C\" void {name}_packed(const kiln_slot* a) {{\n"
            f"    {name}_entry({', '.join(slots)});\n}}\n"
            f"\nextern \"C\" void {name}({params})\n{{\n"
            f"    KILN_CLEAN_UPPER();   // (before the stores: cffi's callers may leave it dirty)\n"
            f"    kiln_slot a[{len(slots)}];\n    " + "\n    ".join(stores) +
            f"\n    {name}_packed(a);\n}}\n")


def split_told(source: str) -> tuple[str, str]:
    """A kernel's text without the part between ``//@told`` and ``//@end told``
    (cpp_kernel.cpp.j2: the body with its ops' predicates), and that part under the
    kernel's own header comment ("" when it has none)."""
    begin = source.find("//@told\n")
    if begin < 0:
        return source, ""
    end = source.index("//@end told\n", begin)
    header = source[:source.index("// noipa")]
    return source[:begin] + source[end + len("//@end told\n"):], header + source[begin + len("//@told\n"):end]


def told_module(name: str, told_source: str) -> str:
    """The library of kernel ``name``'s second body (``RenderedKernel.told_source``):
    runtime/fpwarn.py builds it when a launch first wants it."""
    return module_text(f"{name}'s second body, with its ops' predicates", [told_source])


def _outer_nest(plan: CppKernelPlan, loops: list, lines: list[str], depth: int, copies: int,
                simd_ok: bool = True) -> list[str]:
    """The outer loops from ``depth`` in, around the per-point ``lines``. A loop whose index
    a select tests against constants (``plan.cuts``: a region write, a fill's border, a
    join) runs as one loop per segment between them, each over a copy of the body: inside
    a segment every test has one answer the compiler sees from the bounds, so the select
    and the clamped index reading the other arm fold away (``y[:n] = x; y[n:] = ...``
    becomes two plain loops instead of a select with a gather per element)."""
    pad = "    " * (depth + 1)
    if depth == len(loops):
        return [pad + line for line in lines]
    v, n = loops[depth]
    lo, hi = ("begin", "end") if depth == 0 else ("0", str(n))
    if v == plan.blocked:
        return [pad + f"for (int64_t {v}_b = {lo}; {v}_b < {hi}; {v}_b += {plan.block}) {{",
                pad + f"    const int64_t {v}_e = {v}_b + {plan.block} < {hi} ? {v}_b + {plan.block} : {hi};"] + \
            _outer_nest(plan, loops, lines, depth + 1, copies, simd_ok) + [pad + "}"]
    simd = [pad + "#pragma omp simd"] if depth == len(loops) - 1 and not plan.inner_loops and simd_ok else []
    cuts = plan.cuts.get(v, [])
    if not cuts or copies * (len(cuts) + 1) > MAX_SEGMENT_COPIES:
        return simd + [pad + f"for (int64_t {v} = {lo}; {v} < {hi}; ++{v}) {{"] + \
            _outer_nest(plan, loops, lines, depth + 1, copies, simd_ok) + [pad + "}"]
    out: list[str] = []
    edges = [None] + list(cuts) + [None]
    for a, b in zip(edges, edges[1:]):
        # the thread's range [begin, end) clamped to the segment: bounds the compiler knows
        a_, b_ = 0 if a is None else a, n if b is None else b
        seg_lo = str(a_) if lo == "0" else f"({lo} > {a_} ? {lo} : {a_})"
        seg_hi = str(b_) if hi == str(n) else f"({hi} < {b_} ? {hi} : {b_})"
        out += [pad + f"{{  // {v} in [{a_}, {b_})",
                pad + f"const int64_t {v}_lo = {seg_lo}, {v}_hi = {seg_hi};"] + simd + \
            [pad + f"for (int64_t {v} = {v}_lo; {v} < {v}_hi; ++{v}) {{"] + \
            _outer_nest(plan, loops, lines, depth + 1, copies * (len(cuts) + 1), simd_ok) + [pad + "}", pad + "}"]
    return out


def _describe_frame(frame) -> str:
    dims = " x ".join(str(d) for d in frame.shape) or "scalar"
    if frame.axes:
        return f"iterates {dims}, reducing axes {list(frame.axes)}"
    return f"iterates {dims} elementwise"


def render_module(graph_name: str, kernels: list[RenderedKernel]) -> str:
    return module_text(graph_name, [k.source for k in kernels])


def module_text(graph_name: str, sources: list[str]) -> str:
    """A module: the prelude with the helper sections ``sources`` name, then them."""
    return templates().get_template("cpp_module.cpp.j2").render(
        graph_name=graph_name, prelude=prelude(helpers_named(sources), calls_svml()), kernels=sources)


# Kernel text (characters) worth a translation unit of its own: g++ -O3 spends ~5 us a
# character on kernel code (floyd_warshall's 200 unrolled steps: 450k characters, 2.2 s),
# and a unit costs ~15 ms more (its process, the prelude, the assembler), so units of
# fewer characters would not pay for themselves.
UNIT_CHARS = 8000


def module_units(graph_name: str, kernels: list[RenderedKernel], jobs: int) -> list[str]:
    """The module as up to ``jobs`` translation units, each a complete module of its own
    (the prelude and a run of consecutive kernels, balanced by text length), compiled in
    parallel and linked into one library (runtime/build.py): g++ takes one core per unit,
    and a graph of 200 kernels was 200 kernels' work on one core. Every prelude definition
    and every kernel body is ``static``, so units share no symbol but the kernels' own
    ``extern "C"`` entries. One unit (the module itself) when the kernels are too few or
    too short to pay for another process (:data:`UNIT_CHARS`)."""
    sizes = [len(k.source) for k in kernels]
    n = max(1, min(jobs, len(kernels), sum(sizes) // UNIT_CHARS))
    if n == 1:
        return [render_module(graph_name, kernels)]
    units, start, done = [], 0, 0
    for i, size in enumerate(sizes):
        done += size
        # close the unit once it holds its share of the text (the last takes the rest)
        if len(units) < n - 1 and done * n >= sum(sizes) * (len(units) + 1):
            units.append(kernels[start:i + 1])
            start = i + 1
    units = [part for part in units + [kernels[start:]] if part]
    return [render_module(f"{graph_name} (part {j + 1} of {len(units)})", part)
            for j, part in enumerate(units)]


class CppRenderer(Renderer):
    """C++/OpenMP kernels in one shared library, loaded with cffi (kiln/runtime/loader.py)."""

    name = "cpp"
    dtypes = frozenset(CTYPES)
    loader = "kiln.runtime.build:CppLoader"
    # argmax/argmin are kernels over computed values (one pass instead of a temporary)
    # and across strided runs (argmax(x, axis=0): points in SIMD lanes, 5x NumPy's, which
    # copies); along an array's own contiguous rows NumPy's SIMD loop is 2x a kernel's
    # in-order one, so those stay extern calls.
    reductions = Renderer.reductions | {"argmax", "argmin"}
    extern_when_contiguous = frozenset({"argmax", "argmin"})
    computed_indices = True
    scans = frozenset({"sum", "prod", "max", "min", "fmax", "fmin"})

    def __init__(self, num_threads: int = 1) -> None:
        self.num_threads = max(1, int(num_threads))

    def reruns_only_fresh(self, kernel: Kernel) -> bool:
        # A kernel whose ops' predicates tell which op raised a kind (fp_flags.fp_table)
        # computes them in a second body, run only after a launch raised that kind,
        # unless it overwrites memory it reads: then every launch computes them in its
        # hot loop (only a flat pointwise kernel reruns a block, cpp_fp.saved_arrays).
        # A dropout step's mask-and-mean kernel writing its gradient over the draws'
        # buffer ran 35x its plain body's time (128 us for 64x64, NumPy 34 us).
        _entries, slots, _names = fp_table(kernel)
        return bool(slots) and not flagless(slots) and bool(kernel.frame.axes or kernel.frame.inner_vars())

    def supports(self, fn: str, dtype: Any) -> bool:
        return np.dtype(dtype).name in CTYPES and (fn == "identity" or template(fn, dtype) is not None)

    def call_width(self, fn: str, dtype: Any) -> str | None:
        return call_width(fn, dtype)

    def plan_kernel(self, kernel: Kernel, local: dict, size_args: tuple = (),
                    inplace: dict | None = None) -> CppKernelPlan:
        return plan_kernel(kernel, local, size_args, inplace)

    def render_kernel(self, plan: CppKernelPlan) -> RenderedKernel:
        return print_kernel(plan)

    def render_module(self, graph_name: str, kernels: list) -> str:
        return render_module(graph_name, kernels)

    def body_key(self, rendered: RenderedKernel) -> str:
        return renamed_by_position(rendered.source, rendered.name, rendered.params)

    def offsets_key(self, rendered: RenderedKernel) -> str | None:
        return rendered.offsets_key or None

    def render_offsets(self, plan: CppKernelPlan, vary: tuple) -> RenderedKernel:
        return print_kernel(plan, vary)

    def module_signature(self, kernels: list) -> str:
        return "\n".join(rk.cdef for rk in kernels)

    def wrapper_prelude(self, module_path: str, signature: str, kernels: list) -> list[str]:
        return [
            "from kiln.runtime.loader import load_library",
            f"_lib, _ffi = load_library({module_path!r}, {signature!r})",
            "from kiln.runtime.launch import bind as _bind",
        ] + (["from kiln.runtime.fpwarn import kernel_warnings as _fp_warnings"]
             if any(rk.fp for rk in kernels) else []) + (
            ["from kiln.runtime.fpwarn import SecondBody as _SecondBody"]
            if any(rk.fp_rerun for rk in kernels) else [])

    fast_launch_tail = ("_NT",)

    def wrapper_globals(self) -> list[str]:
        return [f"_NT = {self.num_threads}"]

    def empty(self, shape: tuple, dtype: np.dtype) -> str:
        # np.empty and a dtype bound once: 60-100 ns less per allocation than looking
        # both up and converting the scalar type on each call (a 3-element result's call
        # is ~0.7 us)
        return f"_empty({shape!r}, _{dtype.name})"

    def allocation_globals(self, dtypes: list) -> list[str]:
        return ["_empty = np.empty"] + [f"_{name} = np.dtype({name!r})" for name in dtypes] if dtypes else []

    def bind_kernels(self, kernels: list) -> list[str]:
        # arrays go in as they are: the launcher reads their data pointers
        again = _computed_again(kernels)
        head = ["_fp_warned = set()  # (kind, node): warned for in this call (nodes two kernels compute)"]
        return (head if again else []) + [
            f"{rk.name} = _bind(_lib, _ffi, {rk.name!r}, {rk.codes!r}"
            + (", keep_gil=True" if rk.keep_gil else "") + self._on_fp(rk, again) + ")" for rk in kernels]

    def call_prelude(self, kernels: list) -> list[str]:
        # NumPy warns once per op it evaluates: a node two kernels compute (the scheduler
        # recomputes cheap producers) warns once a call, from whichever kernel raised first
        return ["_fp_warned.clear()"] if _computed_again(kernels) else []

    @staticmethod
    def _on_fp(rk: RenderedKernel, again: set = frozenset()) -> str:
        """The kernel's handler of floating-point flags (runtime/fpwarn.py), where some
        op of it may warn: the ops, then the arguments to check for NaN; the entries of
        nodes another kernel computes too (``again``) warn once per call."""
        if not rk.fp:
            return ""
        shared = {i: name for i, name in enumerate(rk.fp_names) if name in again}
        once = f", once={shared!r}, warned=_fp_warned" if shared else ""
        once += f", numpy={rk.fp_numpy!r}" if rk.fp_numpy else ""
        slots = rk.fp_slots
        # (a kernel that writes none of its inputs runs its predicates again, in a second
        # body, only when the handler wants them: not under np.errstate(...='ignore'))
        rerun = (f", rerun=_SecondBody({rk.name!r}, lambda: _SECOND_BODIES[{rk.name!r}], "
                 f"{rk.told_cdef!r}, {rk.codes!r})" if rk.fp_rerun else "")
        return (f", on_fp=_fp_warnings({rk.fp!r}, {rk.fp_reads!r}" + once
                + (", opaque=True" if rk.fp_opaque else "")
                + (f", slots={slots!r}{rerun})" if slots and rk.fp_rerun else
                   f", slots={slots!r}, owned=_lib.address('kiln_fp_owned'))" if slots else ")"))

    def wrapper_tail(self, kernels: list) -> str:
        """The kernels' second bodies (``told_source``), as C++ text."""
        told = [rk for rk in kernels if rk.fp_rerun]
        if not told:
            return ""
        text = ("\n# The kernels' second bodies, with their ops' predicates: each a library of its\n"
                "# own, built by kiln/runtime/fpwarn.py when a launch first wants it.\n"
                "_SECOND_BODIES = {\n")
        for rk in told:
            body = rk.told_source
            literal = f"r'''{body}'''" if "'''" not in body and not body.endswith("\\") else repr(body)
            text += f"{rk.name!r}: {literal},\n"
        return text + "}\n"

    def pointer(self, buf: Any) -> str:
        return buf.name

    def launch(self, rendered: RenderedKernel, args: list[str]) -> str:
        return f"{rendered.name}({', '.join(args + ['_NT'])})"
