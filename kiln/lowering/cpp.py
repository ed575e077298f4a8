"""C++ renderer: a scheduled kernel -> one ``extern "C"`` function (and its cffi cdef).

Python decides everything here — loop nests, collapsed dimensions, index expressions,
reduction accumulators, when to use threads — and the jinja2 templates in
kiln/codegen_templates/ lay it out. Generated kernels:

- collapse adjacent loops whenever every access allows it (a contiguous 2-d array is one
  flat loop), so the innermost loop is long and unit-stride and GCC vectorizes it
  (``#pragma omp simd``; libm calls go to glibc's vector math through SIMD declarations);
- run serially unless the work is large enough to pay for an OpenMP region;
- accumulate float reductions along the contiguous axis in double (NumPy sums those
  pairwise), and reductions over leading axes row by row in the output dtype, as NumPy
  does (bit-identical sums); max/min are NaN-aware.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Any

import jinja2
import numpy as np

from .cpp_ops import (CTYPES, SCALAR_MATH2, VECTOR_MATH, VECTOR_MATH2, CppEmitter, NameSource,
                      call_cost, ctype, literal, template)
from .loop_ir import Affine
from .renderer import Renderer, renamed_by_position
from .sizes import printed_symbols, product, render as render_size
from .plan import Collapse, describe, index_cuts, kernel_accesses, kernel_cost, loop_order
from .scheduler import Kernel, node_index, write_index

# A kernel runs on several threads when elements x statements-per-element reaches this
# (a libm call counts 8 statements). A parallel region costs ~10-30 us on a quiet 2-core
# machine, but next to BLAS calls (whose threads still spin) or under load from other
# processes it often waits ~0.5 ms for its second thread: W6's backward relu-mask kernel
# (131k elements x 17 statements, 30-60 us on one thread) cost 0.6 ms more per step on two.
PARALLEL_GRAIN = 1 << 22
# A kernel whose work (elements x statements, known when it is built) is at most this runs
# without releasing the GIL (runtime/launch.c's keep_gil): it takes less time than the
# release and the take-back would.
KEEP_GIL_WORK = 1 << 12
# Outer points per block when reducing leading axes (per-point accumulators in arrays).
BLOCK = 256

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "codegen_templates")


@functools.lru_cache(maxsize=None)
def templates() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR), keep_trailing_newline=True,
                              undefined=jinja2.StrictUndefined)


@functools.lru_cache(maxsize=None)
def prelude() -> str:
    return templates().get_template("cpp_prelude.h").render(
        vector_math=VECTOR_MATH, vector_math2=VECTOR_MATH2, scalar_math2=SCALAR_MATH2)


def no_builtin_flags() -> list[str]:
    """-fno-builtin-<fn> for every declared math function (so our declarations win)."""
    names = VECTOR_MATH + VECTOR_MATH2 + SCALAR_MATH2
    return [f"-fno-builtin-{n}{suffix}" for n in names for suffix in ("", "f")]


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


_INIT = {"sum": "0", "prod": "1", "any": "0", "all": "1"}
# Reductions whose accumulator no OpenMP clause combines: their reduced loop runs in
# order, on one thread, without SIMD lanes (points of a blocked kernel still fill them).
IN_ORDER_COMBINES = frozenset({"argmax", "argmin"})
_CLAUSE = {"sum": "+", "prod": "*", "max": "max", "min": "min", "any": "|", "all": "&"}


def _acc_ctype(dtype: np.dtype) -> str:
    return "int" if dtype.kind == "b" else ctype(dtype)


def _init(combine: str, dtype: np.dtype) -> str:
    if combine in _INIT:
        return _INIT[combine]
    big = combine in ("min", "argmin")
    if dtype.kind == "f":
        return literal(np.inf if big else -np.inf, dtype)
    if dtype.kind == "b":
        return "1" if big else "0"
    info = np.iinfo(dtype)
    return literal(info.max if big else info.min, dtype)


def _render_stages(plan: "CppKernelPlan", names: NameSource) -> list[str]:
    """The statements run per outer point."""
    kernel, local = plan.kernel, plan.local
    frame = kernel.frame
    lines: list[str] = []
    locals_: dict[str, str] = {}
    inner = plan.inner_loops
    ren = plan.rename
    # Blocked mode (a reduction over leading axes, kept dims contiguous): BLOCK outer points
    # advance together, their per-point values in arrays, the unit-stride loop innermost.
    blk = plan.blocked
    if blk:
        bv = blk
        bidx = f"{bv} - {bv}_b"
        point_loop = f"for (int64_t {bv} = {bv}_b; {bv} < {bv}_e; ++{bv}) {{"

    def per_point(name: str) -> str:
        return f"{name}[{bidx}]" if blk else name

    def declare_accumulator(pre: list, clauses: list, c_type: str, name: str, init,
                            op: str | None) -> str:
        """Declare ``name`` (one per point when blocked, else an OpenMP reduction variable
        combined with ``op``; None: a plain variable of a loop that runs in order) set to
        ``init``; return how the loop body refers to it."""
        ref = per_point(name)
        if blk:
            pre.append(f"{c_type} {name}[{BLOCK}];")
            pre.append(f"{point_loop} {ref} = {init}; }}")
        else:
            pre.append(f"{c_type} {ref} = {init};")
            if op is not None:
                clauses.append(f"reduction({op}:{ref})")
        return ref

    # Row-local buffers: declared once per outer point, sized by the inner index range.
    inner_names = {v for v, _ in frame.inner_vars()}
    rowlocal: dict[str, tuple[str, set]] = {}
    for name, (dtype, span) in plan.row_arrays.items():
        rowlocal[name] = (f"row_{name}", inner_names)
        lines.append(f"{ctype(dtype)} row_{name}[{span}];")

    for kind, members in kernel.stages:
        em = CppEmitter(names, forwarded={}, locals_=locals_)
        em.rename = ren
        em.rowlocal = rowlocal
        pre: list[str] = []
        post: list[str] = []
        updates: list[str] = []
        clauses: list[str] = []
        in_order = False   # an accumulator no OpenMP clause combines: no SIMD lanes
        for node, role in members:
            buf = node.buf
            if role in ("row", "scalar"):
                v = node.value.load(em, node_index(node, role, frame))
                w = write_index(node, role, frame)
                em.forwarded[(buf.name, w)] = v
                if role == "scalar":
                    if blk:
                        arr = names.temp().replace("t", "s")
                        pre.append(f"{ctype(buf.dtype)} {arr}[{BLOCK}];")
                        em.lines.append(f"{arr}[{bidx}] = {v};")
                        locals_[buf.name] = f"{arr}[{bidx}]"
                    else:
                        locals_[buf.name] = v
                if buf.name in rowlocal:
                    within = Affine(0, {k: c for k, c in w.terms.items() if k in inner_names})
                    em.lines.append(f"{rowlocal[buf.name][0]}[{within.render(ren)}] = {v};")
                elif local.get(buf.name) not in ("register", "scalar"):
                    em.lines.append(f"{names.arg(buf)}[{w.render(ren)}] = {v};")
                continue
            if role == "scan":
                in_order = True   # the running value goes from one element to the next
                updates += _scan_update(node, em, frame, pre, names, plan.accumulators[buf.name],
                                        per_point, point_loop if blk else None, ren)
                continue
            # a reduction: accumulate per lane, finish after the loop
            acc_dt = plan.accumulators[buf.name]
            acc_name = names.temp().replace("t", "acc")
            arg = node.combine in IN_ORDER_COMBINES
            acc = declare_accumulator(pre, clauses, _acc_ctype(acc_dt), acc_name,
                                      _init(node.combine, acc_dt), _CLAUSE.get(node.combine))
            nan = None
            v = node.src.load(em, node_index(node, "reduce", frame))
            if arg:
                # NumPy's rule: the first extreme wins ties, the first NaN wins outright
                # (once the accumulator is NaN nothing replaces it). The position counts
                # the reduced elements in C order; one pass in order, so no SIMD lanes.
                in_order = True
                pos = _reduced_position(frame).render(ren)
                at = declare_accumulator(pre, clauses, "int64_t", acc_name.replace("acc", "at"), "0", None)
                cur = names.temp()
                updates.append(f"const {_acc_ctype(acc_dt)} {cur} = {em.cast(v, node.src.dtype, acc_dt)};")
                better = f"{cur} {'>' if node.combine == 'argmax' else '<'} {acc}"
                if acc_dt.kind == "f":
                    # & and |, not && and ||: no control flow, so the loop vectorizes
                    better = f"({acc} == {acc}) & (({better}) | ({cur} != {cur}))"
                take = names.temp().replace("t", "take")
                updates.append(f"const bool {take} = {better};")   # selects, not a branch: SIMD
                updates.append(f"{acc} = {take} ? {cur} : {acc};")  # lanes when they are points
                updates.append(f"{at} = {take} ? (int64_t)({pos}) : {at};")
                acc = at
            elif node.combine in ("sum", "prod"):
                v = em.cast(v, node.src.dtype, acc_dt)
                updates.append(f"{acc} {'+' if node.combine == 'sum' else '*'}= {v};")
            elif node.combine in ("max", "min"):
                v = em.cast(v, node.src.dtype, acc_dt)
                cmp = ">" if node.combine == "max" else "<"
                updates.append(f"{acc} = {v} {cmp} {acc} ? {v} : {acc};")
                if acc_dt.kind == "f":
                    nan = declare_accumulator(pre, clauses, "int",
                                              acc_name.replace("acc", "nan"), 0, "|")
                    updates.append(f"{nan} |= ({v} != {v});")
            else:
                updates.append(f"{acc} {'|' if node.combine == 'any' else '&'}= ({v} != 0);")
            out_dt = buf.dtype
            red_name = acc_name.replace("acc", "red")
            red = per_point(red_name)
            value = f"({ctype(out_dt)})({acc})" if out_dt.kind != "b" else f"({acc} != 0)"
            if nan:
                value = f"{nan} ? {literal(np.nan, out_dt)} : {value}"
            finish = [f"{red} = {value};"] if blk else [f"const {ctype(out_dt)} {red} = {value};"]
            if blk:
                pre.append(f"{ctype(out_dt)} {red_name}[{BLOCK}];")
            locals_[buf.name] = red
            if local.get(buf.name) != "scalar":
                w = write_index(node, "reduce", frame)
                finish.append(f"{names.arg(buf)}[{w.render(ren)}] = {red};")
            post += [point_loop] + ["  " + f for f in finish] + ["}"] if blk else finish
        body = em.lines + updates
        if blk:  # the innermost loop runs the points: each has its own accumulators
            if kind == "scalar" or not inner:
                lines += pre + [point_loop] + ["  " + b for b in body] + ["}"] + post
            else:
                lines += pre + _loop_nest(inner + [(bv, None)], body, [], parallel=False, block=bv) + post
            continue
        if kind == "scalar" or not inner:
            lines += pre + body + post
            continue
        lines += pre
        if plan.split_inner:
            # No outer loop to share (a reduction over everything): big enough loops are
            # split across threads themselves, OpenMP combining the accumulators.
            lines.append(f"if (nthreads > 1 && (int64_t){plan.work} * {plan.cost} >= {PARALLEL_GRAIN}) {{")
            lines += _loop_nest(inner, body, clauses, parallel=True)
            lines.append("} else {")
            lines += _loop_nest(inner, body, clauses, parallel=False)
            lines.append("}")
        else:
            lines += _loop_nest(inner, body, clauses, parallel=False, simd=not in_order)
        lines += post
    return lines


def _scan_update(node: Any, em: CppEmitter, frame: Any, pre: list, names: NameSource,
                 acc_dt: np.dtype, per_point: Any, point_loop: str | None, ren: Any) -> list[str]:
    """A scan's statements in its loop: combine the next element into the running value
    (declared in ``pre``: one per point when blocked) and store it. Integers combine in
    uint64_t and wrap to the result's width, as NumPy's loops do (no signed overflow)."""
    acc_name = names.temp().replace("t", "acc")
    ref = per_point(acc_name)
    c_type, init = ctype(acc_dt), _INIT[node.combine]
    if node.combine == "sum" and acc_dt.kind == "f":
        init = "-0.0"   # -0.0 + x is x for every x: a leading -0.0 stays -0.0, as in NumPy
    if point_loop is not None:
        pre += [f"{c_type} {acc_name}[{BLOCK}];", f"{point_loop} {ref} = {init}; }}"]
    else:
        pre.append(f"{c_type} {ref} = {init};")
    v = em.cast(node.src.load(em, node_index(node, "scan", frame)), node.src.dtype, acc_dt)
    sign = "+" if node.combine == "sum" else "*"
    if acc_dt.kind in "iu":
        step = f"{ref} = ({c_type})((uint64_t){ref} {sign} (uint64_t)({v}));"
    else:
        step = f"{ref} = {ref} {sign} {v};"
    return [step, f"{names.arg(node.buf)}[{write_index(node, 'scan', frame).render(ren)}] = {ref};"]


def _reduced_position(frame: Any) -> Affine:
    """A reduction point's position among the reduced elements, in C order (the index
    argmax/argmin return: along one axis, or flat over all of them)."""
    pos, step = Affine(0), 1
    index = frame.dim_index()
    for d in reversed(frame.axes):
        pos = pos + index[d] * step
        step = step * frame.shape[d]
    return pos


def _loop_nest(loops: list, body: list[str], clauses: list[str], parallel: bool,
               block: str | None = None, simd: bool = True) -> list[str]:
    out = []
    for depth, (v, n) in enumerate(loops):
        if parallel and depth == 0:
            out.append("#pragma omp parallel for" + (" simd" if len(loops) == 1 else "")
                       + "".join(" " + c for c in clauses) + " num_threads(nthreads)")
        elif depth == len(loops) - 1 and _short(n):
            # A short fixed trip count (softmax over 10 classes): SIMD lanes would mostly
            # be prologue and remainder; unrolled, the row is straight-line code.
            out.append(f"#pragma GCC unroll {SHORT_LOOP}")
        elif depth == len(loops) - 1 and simd:
            out.append("#pragma omp simd" + "".join(" " + c for c in clauses))
        if v == block:  # the blocked outer points, innermost
            out.append("  " * depth + f"for (int64_t {v} = {v}_b; {v} < {v}_e; ++{v}) {{")
            continue
        out.append("  " * depth + f"for (int64_t {v} = 0; {v} < {n}; ++{v}) {{")
    out += ["  " * len(loops) + line for line in body]
    out += ["  " * d + "}" for d in reversed(range(len(loops)))]
    return out


# Inner loops of at most this many iterations (known at compile time) are unrolled
# (fewer than one AVX-512 vector of floats, where SIMD is mostly remainder handling).
SHORT_LOOP = 12


def _short(n: Any) -> bool:
    return isinstance(n, (int, str)) and str(n).isdigit() and int(n) <= SHORT_LOOP


@dataclass
class CppKernelPlan:
    """Everything decided about one kernel before it is printed (kiln/lowering/plan.py)."""

    kernel: Kernel
    local: dict                  # kernel-local buffers as this kernel keeps them
    inplace: dict                # output name -> input Buffer whose memory it takes
    size_args: tuple             # int64_t parameters: the dynamic sizes
    outer: Collapse              # the outer (parallel) loops, collapsed
    inner: Collapse              # the inner (reduced) loops, collapsed
    blocked: str | None          # the outer variable run in blocks of BLOCK points
    split_inner: bool            # no outer loop: big inner loops are split across threads
    work: str                    # elements the kernel iterates (a C expression)
    cost: int                    # statements per element
    row_arrays: dict = field(default_factory=dict)    # buffer -> (dtype, elements per row)
    accumulators: dict = field(default_factory=dict)  # reduction buffer -> accumulator dtype
    cuts: dict = field(default_factory=dict)   # outer variable -> segment edges (_outer_nest)

    @property
    def outer_loops(self) -> list[tuple[str, str]]:
        return self.outer.loops()

    @property
    def inner_loops(self) -> list[tuple[str, str]]:
        return self.inner.loops()

    def rename(self, terms: dict[str, int]) -> list[tuple[str, int]]:
        """An index's terms over the collapsed loop variables."""
        return self.inner.rename(dict(self.outer.rename(terms)))


def plan_kernel(kernel: Kernel, local: dict, size_args: tuple = (),
                inplace: dict | None = None) -> CppKernelPlan:
    """Loops, blocking, per-row arrays, accumulators, threads and cost of one kernel;
    ``local`` as kiln/lowering/scheduler.kernel_locals gives it, ``inplace`` as
    kiln/lowering/inplace.plan_inplace does."""
    frame = kernel.frame
    local = _fit_row_locals(kernel, local)
    mine = {n.buf.name for n in kernel.nodes}
    inplace = {k: v for k, v in (inplace or {}).items() if k in mine and local.get(k) is None}
    accesses = kernel_accesses(kernel, local)
    outer_vars = frame.outer_vars()
    outer = Collapse(outer_vars if frame.axes else loop_order(outer_vars, accesses), accesses)
    inner = Collapse(frame.inner_vars(), accesses)
    plan = CppKernelPlan(kernel, local, inplace, tuple(size_args), outer, inner, None, False,
                         render_size(product(frame.shape)), kernel_cost(kernel, call_cost))
    if not outer.loops() and plan.inner_loops:
        # (argmax/argmin and scans keep one in-order pass: OpenMP has no combine for them)
        plan.split_inner = not any(n.kind == "scan" or n.kind == "reduction" and
                                   n.combine in IN_ORDER_COMBINES for n in kernel.nodes)
    elif outer.loops() and plan.inner_loops:
        # Reducing leading axes: if memory is contiguous along the kept dims, not along
        # the reduced ones, run blocks of outer points in the innermost loop instead.
        vo, vi = outer.loops()[-1][0], plan.inner_loops[-1][0]
        coefs = [dict(plan.rename(a.terms)) for a in accesses]
        if any(c.get(vo) == 1 for c in coefs) and not any(c.get(vi) == 1 for c in coefs):
            plan.blocked = vo
            plan.local = {k: v for k, v in local.items() if not (v == "row" and k in mine)}
    if not frame.axes:
        plan.cuts = index_cuts(kernel, outer, SHORT_LOOP, MAX_SEGMENT_COPIES)
    inner_sizes = dict(frame.inner_vars())
    for node, role in kernel.members:
        name = node.buf.name
        if plan.local.get(name) == "row" and role == "row":
            w = write_index(node, role, frame)
            plan.row_arrays[name] = (node.buf.dtype, 1 + sum(
                c * (inner_sizes[v] - 1) for v, c in w.terms.items() if v in inner_sizes))
        if node.kind == "scan":
            plan.accumulators[name] = node.acc_dtype   # NumPy's running value: the result dtype
        if node.kind == "reduction":
            acc = node.acc_dtype
            if plan.blocked and node.combine in ("sum", "prod") and node.buf.dtype.kind == "f":
                # NumPy reduces a leading axis row by row in the output dtype; so does the
                # blocked loop, so accumulating in that dtype gives NumPy's result bit for
                # bit (and float32 lanes are twice as many as double ones).
                acc = node.buf.dtype
            plan.accumulators[name] = acc
    return plan


def render_kernel(kernel: Kernel, local: dict, size_args: tuple = (),
                  inplace: dict | None = None) -> RenderedKernel:
    """C++ for one kernel: :func:`plan_kernel`, then :func:`print_kernel`."""
    return print_kernel(plan_kernel(kernel, local, size_args, inplace))


def print_kernel(plan: CppKernelPlan) -> RenderedKernel:
    """The C++ text of a planned kernel (printed once). It takes as ``int64_t`` arguments
    the size symbols its text names (of ``plan.size_args``, every symbol of the graph)."""
    with printed_symbols() as used:
        used |= getattr(product(plan.kernel.frame.shape), "symbols", set())   # (plan.work)
        return _print_kernel(plan, used)


def _print_kernel(plan: CppKernelPlan, used: set) -> RenderedKernel:
    kernel, inplace = plan.kernel, plan.inplace
    frame = kernel.frame
    local = plan.local
    names = NameSource(inplace)
    lines = _render_stages(plan, names)

    # (a kernel without outer loops runs one point; its variable is no size symbol's name)
    loops = plan.outer_loops or [("x0", "1")]
    # Threads take chunks of the first loop: a flat loop's cut at multiples of 64; blocked
    # points (a column reduction) at least 64 wide where there are enough (a chunk of a
    # few columns would walk every row for a few cache lines each).
    flat_pointwise = not plan.inner_loops and not frame.axes
    # (complex locals are structs, which omp simd privatizes into arrays and then does not
    # vectorize; GCC's own loop vectorizer does: no pragma there)
    body = _outer_nest(plan, loops, lines, 0, 1, simd_ok=not names.complex)
    body = ["    " + line for line in names.prologue()] + body

    written = {n.buf.name for n in kernel.nodes if local.get(n.buf.name) is None}
    written |= {inplace[n].name for n in written if n in inplace}
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
    slots.append(f"(int)a[{len(slots)}].i")
    d0 = f"({loops[0][1]})" if "*" in loops[0][1] else loops[0][1]
    ops, sources = describe(kernel)
    k = dict(name=kernel.name, ops=", ".join(ops), inplace=sorted((o, b.name) for o, b in inplace.items()), frame=_describe_frame(frame), sources=sources,
             params=", ".join(params) or "void", args=", ".join(args), body="\n".join(body),
             outer_parallel=bool(plan.outer_loops), work=plan.work, cost=plan.cost, grain=PARALLEL_GRAIN, d0=d0,
             align=64 if flat_pointwise and len(loops) == 1 else 1,
             min_chunk=64 if plan.blocked == loops[0][0] else 1)
    source = templates().get_template("cpp_kernel.cpp.j2").render(k=k)
    cdef = f"void {kernel.name}({', '.join(cparams + ['int'])});"
    arg_codes = launch_codes(cparams + ["int"])
    if "?" not in arg_codes:
        # the entry runtime/launch.c's Launcher calls: one 8-byte slot per argument
        source += (f"\nextern \"C\" void {kernel.name}_packed(const kiln_slot* a) {{\n"
                   f"    {kernel.name}({', '.join(slots)});\n}}\n")
        cdef += f"\nvoid {kernel.name}_packed(void*);"
    keep_gil = plan.work.isdigit() and int(plan.work) * plan.cost <= KEEP_GIL_WORK
    return RenderedKernel(kernel.name, source, cdef, buffers, scalars, written, inplace, arg_codes,
                          size_args, tuple(args), keep_gil)


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
        return [pad + f"for (int64_t {v}_b = {lo}; {v}_b < {hi}; {v}_b += {BLOCK}) {{",
                pad + f"    const int64_t {v}_e = {v}_b + {BLOCK} < {hi} ? {v}_b + {BLOCK} : {hi};"] + \
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


# At most this many copies of a kernel's body across the segments of split loops.
MAX_SEGMENT_COPIES = 9


# Per-row arrays (row-local buffers) live on the stack: at most this many bytes each.
ROW_LOCAL_BYTES = 64 * 1024


def _fit_row_locals(kernel: Kernel, local: dict) -> dict:
    """Row-local buffers too big for the stack become ordinary buffers."""
    frame = kernel.frame
    sizes = dict(frame.inner_vars())
    out = dict(local)
    for node, role in kernel.members:
        if out.get(node.buf.name) == "row":
            w = write_index(node, role, frame)
            span = 1 + sum(c * (sizes[v] - 1) for v, c in w.terms.items() if v in sizes)
            if role != "row" or not isinstance(span, int) \
                    or span * node.buf.dtype.itemsize > ROW_LOCAL_BYTES:
                del out[node.buf.name]
    return out


def _describe_frame(frame) -> str:
    dims = " x ".join(str(d) for d in frame.shape) or "scalar"
    if frame.axes:
        return f"iterates {dims}, reducing axes {list(frame.axes)}"
    return f"iterates {dims} elementwise"


def render_module(graph_name: str, kernels: list[RenderedKernel]) -> str:
    return templates().get_template("cpp_module.cpp.j2").render(
        graph_name=graph_name, prelude=prelude(), kernels=[k.source for k in kernels])


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
    scans = frozenset({"sum", "prod"})

    def __init__(self, num_threads: int = 1) -> None:
        self.num_threads = max(1, int(num_threads))

    def supports(self, fn: str, dtype: Any) -> bool:
        return np.dtype(dtype).name in CTYPES and (fn == "identity" or template(fn, dtype) is not None)

    def plan_kernel(self, kernel: Kernel, local: dict, size_args: tuple = (),
                    inplace: dict | None = None) -> CppKernelPlan:
        return plan_kernel(kernel, local, size_args, inplace)

    def render_kernel(self, plan: CppKernelPlan) -> RenderedKernel:
        return print_kernel(plan)

    def render_module(self, graph_name: str, kernels: list) -> str:
        return render_module(graph_name, kernels)

    def body_key(self, rendered: RenderedKernel) -> str:
        return renamed_by_position(rendered.source, rendered.name, rendered.params)

    def module_signature(self, kernels: list) -> str:
        return "\n".join(rk.cdef for rk in kernels)

    def wrapper_prelude(self, module_path: str, signature: str, kernels: list) -> list[str]:
        return [
            "from kiln.runtime.loader import load_library",
            f"_lib, _ffi = load_library({module_path!r}, {signature!r})",
            "from kiln.runtime.launch import bind as _bind",
        ]

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
        return [f"{rk.name} = _bind(_lib, _ffi, {rk.name!r}, {rk.codes!r}"
                + (", keep_gil=True)" if rk.keep_gil else ")") for rk in kernels]

    def pointer(self, buf: Any) -> str:
        return buf.name

    def launch(self, rendered: RenderedKernel, args: list[str]) -> str:
        return f"{rendered.name}({', '.join(args + ['_NT'])})"
