"""The Triton renderer: scheduled kernels (kiln/lowering/scheduler.py) as Triton source.

A kernel's frame becomes Inductor's block shape. The kept (outer) dims are flattened into
``xindex`` (``XBLOCK`` per program); a reduction's axes are flattened into ``rindex``
(``RBLOCK``), so a program works on an ``[XBLOCK, RBLOCK]`` tile. Dims are recovered by
``%`` and ``//`` (``x1 = xindex % 7``), every access is the buffer's affine index over
them, and broadcast (stride 0) dims drop out of the address.

- Pointwise kernels: one flat ``xindex``; each member computes its value once, stores it
  unless it is kernel-local, and later members read the register.
- Reductions with ``rnumel <= PERSISTENT_RNUMEL`` are *persistent*: the whole row is one
  tile, every stage (softmax's max, exp/sum, divide) works on it in registers, row-local
  buffers are tile variables. Longer rows are *looped*: each stage is a
  ``for roffset in range(0, rnumel, RBLOCK)`` loop over an ``[XBLOCK, RBLOCK]``
  accumulator, reduced once after the loop.
- Reductions combine with the prelude's ``kiln_add``/``kiln_max``/``kiln_argmax`` ...
  through ``tl.reduce``: NaN propagates through max/min and argmax picks the first NaN,
  as in NumPy (Triton's ``tl.max`` drops NaN).
- Indices are int32 unless some offset can reach 2**31; then ``program_id`` and the
  ranges are widened to int64 before any multiplication.

Block sizes and warps come from Inductor-like heuristics at launch (``config``), never
from the source text, so the interpreter (for tests) runs the same source with larger
blocks.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Any

import jinja2
import numpy as np

from .loop_ir import Affine
from .plan import describe, kernel_accesses
from .renderer import Renderer
from .scheduler import Kernel, node_index, write_index
from .sizes import Size, printed_symbols, product, render as render_size
from .triton_sums import numpy_order, render_sum
from .triton_ops import TL_TYPES, KernelArgs, TritonEmitter, literal, template, tltype

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "codegen_templates")
# Rows up to this many elements are reduced as one tile (Inductor's persistent reduction).
PERSISTENT_RNUMEL = 1024
# Looped reductions walk rows in chunks of this many elements.
LOOPED_RBLOCK = 2048
# The most elements of a persistent reduction's tile under Triton's interpreter (config):
# argmax_nan's (3, 4) rows with a dynamic row count took 16384 x 4 tiles, ~24 s of CPU
# for three calls; its tl.reduce costs a Python call per element, masked ones too, and
# every program ~1 ms of fixed cost (float sums in NumPy's order: ~25 vector ops a row
# tile), so tiles of 64 made softmax over 1100 rows 275 programs.
INTERPRETED_TILE = 512
# Rows a program of a kernel whose reductions are all float sums in NumPy's order takes
# under the interpreter (its tl.reduce calls see at most 16 values a row)
INTERPRETED_ORDERED_ROWS = 64
INT32_LIMIT = 2 ** 31

_COMBINE = {"sum": "kiln_add", "prod": "kiln_mul", "max": "kiln_max", "min": "kiln_min",
            "any": "kiln_or", "all": "kiln_and", "argmax": "kiln_argmax", "argmin": "kiln_argmin"}


# Accumulation steps written as operators (the combines are for tl.reduce).
_INFIX = {"sum": "+", "prod": "*", "any": "|", "all": "&"}


@functools.lru_cache(maxsize=None)
def templates() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR), keep_trailing_newline=True,
                              undefined=jinja2.StrictUndefined)


@functools.lru_cache(maxsize=None)
def prelude() -> str:
    with open(os.path.join(TEMPLATE_DIR, "triton_prelude.py")) as f:
        return f.read()


def _init(combine: str, dtype: np.dtype) -> str:
    """The identity of a combine in ``dtype``, as Python source."""
    dt = np.dtype(dtype)
    low = combine in ("max", "argmax")
    if dt.kind == "b" and combine != "sum":   # (an int would make a bool tile int32: tl.where
        # of it as a condition is deprecated on a GPU, an error in later Tritons; a bool sum
        # stays int32, where + is NumPy's logical or rather than int1's wrapping add)
        return "False" if combine == "any" or low else "True"
    if combine in ("sum", "any"):
        return "0"
    if combine in ("prod", "all"):
        return "1"
    if dt.kind == "f":
        return "float('-inf')" if low else "float('inf')"
    info = np.iinfo(dt)
    return str(info.min if low else info.max)


@dataclass
class RenderedTritonKernel:
    name: str
    source: str
    signature: dict                                  # argument name -> Triton type, in order
    buffers: list = field(default_factory=list)      # Buffers passed, in parameter order
    scalars: list = field(default_factory=list)      # Scalar args passed, after the buffers
    written: set = field(default_factory=set)
    xnumel: int = 1
    rnumel: int = 1
    reduction: bool = False
    persistent: bool = True
    int64: bool = False
    inplace: dict = field(default_factory=dict)      # never used: Triton kernels write fresh buffers
    size_args: tuple = ()                            # int64 parameters after the scalars
    ordered: bool = False      # every reduction a float sum in NumPy's order (triton_sums.py)

    def grid(self, constexprs: dict, sizes: dict) -> tuple:
        """The launch grid at run-time ``sizes`` (symbol -> value) of a kernel over size
        symbols; :meth:`config`'s block sizes were chosen for any size."""
        x = self.xnumel.subs(sizes) if isinstance(self.xnumel, Size) else self.xnumel
        if self.reduction and not self.persistent:
            return (max(1, x), 1, 1)
        return (_cdiv(x, constexprs["XBLOCK"]), 1, 1)

    def config(self, interpret: bool = False) -> tuple[tuple, dict, int]:
        """(grid, constexprs, num_warps): Inductor-like heuristics, no autotuning.

        Pointwise: ``XBLOCK = max(256, min(xnumel // 128, 1024))`` (a power of two, never
        past the next power of two of xnumel), ``num_warps = XBLOCK / 256``. Persistent
        reductions: ``RBLOCK = next_pow2(rnumel)``, XBLOCK so a tile is at most 4096
        elements. Looped: XBLOCK 1, RBLOCK 2048, 8 warps. The interpreter (about 1 ms per
        program) gets pointwise blocks as large as 2**16 elements instead, and reduction
        tiles of at most ``INTERPRETED_TILE`` elements: it reduces a tile through
        ``tl.reduce`` one element at a time in Python (the combine function called per
        element, masked ones too), so a tile's cost is its size, not its program's.
        """
        # dynamic sizes: blocks for large ones (the grid follows each call's, see grid())
        x = self.xnumel if isinstance(self.xnumel, int) else 2 ** 20
        r = self.rnumel if isinstance(self.rnumel, int) else LOOPED_RBLOCK
        if not self.reduction:
            if interpret:
                xblock = min(_pow2(x), 2 ** 12 if isinstance(self.xnumel, Size) else 2 ** 16)
            else:
                xblock = min(_pow2(max(256, min(x // 128, 1024))), max(_pow2(x), 16))
            return (_cdiv(x, xblock), 1, 1), {"XBLOCK": xblock}, max(1, min(8, xblock // 256))
        if self.persistent:
            rblock = _pow2(r)
            limit = INTERPRETED_TILE if interpret else 4096
            xblock = max(1, min(_pow2(x), limit // rblock))
            if interpret and self.ordered:   # (no tl.reduce of a whole row)
                xblock = min(_pow2(x), INTERPRETED_ORDERED_ROWS)
            warps = max(1, min(8, xblock * rblock // 256))
            return (_cdiv(x, xblock), 1, 1), {"XBLOCK": xblock, "RBLOCK": rblock}, warps
        # (The interpreter reduces a tile with a custom combine one element at a time in
        # Python: short chunks, many vectorized iterations.)
        rblock = min(_pow2(r), 256 if interpret else LOOPED_RBLOCK)
        return (x, 1, 1), {"XBLOCK": 1, "RBLOCK": rblock}, 8 if rblock >= 1024 else 4


def _pow2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


def _cdiv(a: int, b: int) -> int:
    return max(1, -(-int(a) // int(b)))


def _split(flat: str, vars_: list[tuple[str, int]]) -> list[str]:
    """Row-major coordinates of a flat index: ``x1 = xindex % 7``, ``x0 = xindex // 7``
    (``xindex // (s1*s2)`` over size symbols)."""
    lines, inner = [], 1
    for i in reversed(range(len(vars_))):
        v, n = vars_[i]
        if len(vars_) == 1:
            lines.append(f"{v} = {flat}")
        elif i == len(vars_) - 1:
            lines.append(f"{v} = {flat} % {_operand(n)}")
        elif i == 0:
            lines.append(f"{v} = {flat} // {_operand(inner)}")
        else:
            lines.append(f"{v} = ({flat} // {_operand(inner)}) % {_operand(n)}")
        inner = inner * n
    return list(reversed(lines))


def _operand(n: Any) -> str:
    """A size as the right operand of ``//`` or ``%``: render_size leaves a product bare,
    and ``xindex // s1*s2`` is ``(xindex // s1) * s2`` in Python."""
    text = render_size(n)
    return text if isinstance(n, int) or text.isidentifier() or text.startswith("(") else f"({text})"


def _render_affine(index: Affine, rename: dict | None = None) -> str:
    rename = rename or {}
    parts = [rename.get(v, v) if isinstance(c, int) and c == 1 else f"{render_size(c)}*{rename.get(v, v)}"
             for v, c in sorted(index.terms.items())]
    if not (isinstance(index.const, int) and index.const == 0) or not parts:
        parts.append(render_size(index.const))
    return " + ".join(parts).replace("+ -", "- ")


class _Body:
    """Lines of the kernel body with indentation, and the scope of values in loops."""

    def __init__(self, em: TritonEmitter) -> None:
        self.em = em
        self.out: list[str] = []
        self.depth = 1

    def flush(self) -> None:
        pad = "    " * self.depth
        self.out.extend(pad + line for line in self.em.lines)
        self.em.lines.clear()

    def line(self, text: str) -> None:
        self.flush()
        self.out.append("    " * self.depth + text)


@dataclass
class TritonKernelPlan:
    """Everything decided about one kernel before it is printed (kiln/lowering/plan.py):
    the tile (kept dims flattened into ``xnumel``, reduced ones into ``rnumel``),
    persistent or looped rows, the index width and the kernel-local buffers kept."""

    kernel: Kernel
    local: dict
    xnumel: Any                  # an int, or a Size over the size symbols
    rnumel: Any
    reduction: bool
    persistent: bool             # one tile per row (rows of a static length up to 1024)
    int64: bool
    size_args: tuple = ()        # the size symbols, int64 kernel parameters


def plan_kernel(kernel: Kernel, local: dict, size_args: tuple = ()) -> TritonKernelPlan:
    """The tile, row strategy and index width of one scheduled kernel; ``size_args``: the
    size symbols its sizes may name (kernel parameters)."""
    local = fit_locals([kernel], local)
    frame = kernel.frame
    outer, inner = frame.outer_vars(), frame.inner_vars()
    xnumel = product(n for _, n in outer)
    rnumel = product(n for _, n in inner)
    reduction = bool(frame.axes)
    persistent = not reduction or isinstance(rnumel, int) and rnumel <= PERSISTENT_RNUMEL
    sizes = dict(outer + inner)
    # int64 indices when any offset the kernel computes can reach 2**31 (always, when
    # the sizes are symbols: they are not bounded)
    accesses = kernel_accesses(kernel, local)
    if isinstance(xnumel * rnumel, Size) or any(
            isinstance(n, Size) for a in accesses for n in [a.const, *a.terms.values()]):
        int64 = True
    else:
        int64 = max([xnumel * rnumel] + [
            abs(index.const) + sum(abs(c) * (sizes.get(v, 1) - 1) for v, c in index.terms.items())
            for index in accesses]) >= INT32_LIMIT
    return TritonKernelPlan(kernel, local, xnumel, rnumel, reduction, persistent, int64,
                            tuple(size_args))


def render_kernel(kernel: Kernel, local: dict) -> RenderedTritonKernel:
    """Triton source of one scheduled kernel: :func:`plan_kernel`, then :func:`print_kernel`."""
    return print_kernel(plan_kernel(kernel, local))


def print_kernel(plan: TritonKernelPlan) -> RenderedTritonKernel:
    """The Triton text of a planned kernel (see the module doc). It takes as ``i64``
    arguments the size symbols its text names (of ``plan.size_args``, the graph's)."""
    with printed_symbols() as used:
        return _print_kernel(plan, used)


def _print_kernel(plan: TritonKernelPlan, used: set) -> RenderedTritonKernel:
    kernel, local = plan.kernel, plan.local
    frame = kernel.frame
    outer, inner = frame.outer_vars(), frame.inner_vars()
    xnumel, rnumel = plan.xnumel, plan.rnumel
    reduction, persistent = plan.reduction, plan.persistent
    rvars = {v for v, _ in inner}
    xvars = {v for v, _ in outer}
    args = KernelArgs()
    # the reduced dims' variables and mask while a sum is added in NumPy's order
    # (triton_sums.py: the term at other positions of the row)
    scope = {"vars": {}, "mask": "rmask"}

    def index_of(index: Affine) -> tuple[str, str | None]:
        if not index.terms:
            return _render_affine(index), None
        if reduction and rvars & set(index.terms):
            return _render_affine(index, scope["vars"]), f"xmask & {scope['mask']}"
        return _render_affine(index), "xmask"

    em = TritonEmitter(index_of, args)
    body = _Body(em)
    written: set[str] = set()
    dims = frame.dim_index()
    rows = {node.buf.name: node for node, role in kernel.members if role == "row"}
    reduced = {node.buf.name for node, role in kernel.members if role == "reduce"}
    ordered: set[str] = set()      # those added in NumPy's order (triton_sums.py)

    def store(node: Any, role: str, value: str) -> None:
        widx = write_index(node, role, frame)
        em.forwarded[(node.buf.name, widx)] = value
        if local.get(node.buf.name) in ("register", "row", "scalar"):
            return
        offset, mask = index_of(widx)
        if not xvars & set(widx.terms):
            # the same element in every row of the tile (a 1-row kernel's; rows only when
            # XBLOCK > 1): tl.store takes the value's and the mask's shape from the pointer
            offset = "xindex * 0" if offset == "0" else f"{offset} + xindex * 0"
            mask = mask or "xmask"
        ptr = args.pointer(node.buf)
        written.add(node.buf.name)
        body.line(f"tl.store({ptr} + {offset}, {value}, {mask})")

    def reduce_value(node: Any) -> str:
        src = node.src.load(em, dims)
        acc = np.dtype(node.acc_dtype or node.buf.dtype)
        return em.cast(src, node.src.dtype, acc)

    def term_at(node: Any, out: np.dtype, tag: str, at: str, mask: str) -> str:
        """The sum ``node``'s term at row positions ``at`` (masked by ``mask``) inside a
        loop of triton_sums.render_sum: the reduced dims renamed, nothing of the row's
        tile reused (the kernel's row values recomputed there, triton_sums.py)."""
        body.line(f"{tag}_r = {at}")
        body.line(f"{tag}_m = {mask}")
        renamed = [(f"{tag}_{v}", n) for v, n in inner]
        for text in _split(f"{tag}_r", renamed):
            body.line(text)
        saved = em.cse, em.forwarded, dict(scope)
        scope.update(vars={v: f"{tag}_{v}" for v in rvars}, mask=f"{tag}_m")
        em.cse = {}
        em.forwarded = _Recomputed({k: v for k, v in em.forwarded.items() if not rvars & set(k[1].terms)},
                                   rows, em, frame)
        try:
            return em.cast(node.src.load(em, dims), node.src.dtype, out)
        finally:
            em.cse, em.forwarded = saved[0], saved[1]
            scope.update(saved[2])

    def ordered_sum(node: Any, role: str, order: str) -> None:
        """A float sum added in NumPy's ``order`` (triton_sums.py), in its result's dtype."""
        out = np.dtype(node.buf.dtype)
        body.flush()
        red = render_sum(body, em, f"_pw{len(body.out)}", order, rnumel, out,
                         ".to(tl.int64)" if plan.int64 else "",
                         functools.partial(term_at, node, out), _COMBINE["sum"], tltype(out))
        finish_reduction(node, role, red, out)
        ordered.add(node.buf.name)

    def finish_reduction(node: Any, role: str, red: str, acc: np.dtype) -> None:
        out = em.cast(red, np.int64 if node.combine in ("argmax", "argmin") else acc, node.buf.dtype)
        if local.get(node.buf.name) == "scalar":
            em.locals[node.buf.name] = out
        store(node, role, out)

    for kind, members in kernel.stages:
        if kind == "scalar" or not reduction:
            for node, role in members:
                if node.kind == "reduction":      # over no axes (a 0-d input): one element
                    acc = np.dtype(node.acc_dtype or node.buf.dtype)
                    one = em.constant(0, np.int64) if node.combine in ("argmax", "argmin") \
                        else reduce_value(node)
                    finish_reduction(node, role, one, acc)
                    continue
                value = node.value.load(em, node_index(node, role, frame))
                store(node, role, em.cast(value, node.value.dtype, node.buf.dtype))
            continue
        reds = [(n, r) for n, r in members if r == "reduce"]
        if persistent:
            for node, role in members:
                if role == "row":
                    value = node.value.load(em, dims)
                    store(node, role, em.cast(value, node.value.dtype, node.buf.dtype))
                    continue
                order = numpy_order(kernel, node, inner, outer, rnumel)
                if order is not None:
                    ordered_sum(node, role, order)
                    continue
                acc = np.dtype(node.acc_dtype or node.buf.dtype)
                v = reduce_value(node)
                tile = em.assign(f"tl.broadcast_to(tl.where(rmask, {v}, {_init(node.combine, acc)}), "
                                 f"[XBLOCK, RBLOCK])")
                if node.combine in ("argmax", "argmin"):
                    where = em.assign("tl.broadcast_to(rindex, [XBLOCK, RBLOCK]).to(tl.int64)")
                    pair = em.temp()
                    body.line(f"_, {pair} = tl.reduce(({tile}, {where}), 1, {_COMBINE[node.combine]})")
                    red = em.assign(f"{pair}[:, None]")
                else:
                    red = em.assign(f"tl.reduce({tile}, 1, {_COMBINE[node.combine]})[:, None]")
                finish_reduction(node, role, red, acc)
            continue
        # looped: accumulators before the loop, the row's chunks in it, the final reduce
        # after; float sums in NumPy's pairwise order after it, each its own loops
        pairwise = {node.buf.name for node, _ in reds
                    if numpy_order(kernel, node, inner, outer, rnumel) == "pairwise"}
        later = [(n, r) for n, r in reds if n.buf.name in pairwise]
        members = [(n, r) for n, r in members if n.buf.name not in pairwise]
        reds = [(n, r) for n, r in reds if n.buf.name not in pairwise]
        if not members:
            for node, role in later:
                ordered_sum(node, role, "pairwise")
            continue
        accs = {}
        for node, _ in reds:
            acc = np.dtype(node.acc_dtype or node.buf.dtype)
            name = f"_acc_{node.buf.name}"
            accs[node.buf.name] = name
            body.line(f"{name} = tl.full([XBLOCK, RBLOCK], {_init(node.combine, acc)}, {tltype(acc)})")
            if node.combine in ("argmax", "argmin"):
                body.line(f"{name}_index = tl.full([XBLOCK, RBLOCK], 0, tl.int64)")
        saved_cse, saved_fwd = dict(em.cse), dict(em.forwarded)
        body.line(f"for roffset in range(0, {render_size(rnumel)}, RBLOCK):")
        body.depth += 1
        body.line("rindex = roffset + rbase")
        body.line("rmask = rindex < rnumel")
        for text in _split("rindex", inner):
            body.line(text)
        for node, role in members:
            if role == "row":
                value = node.value.load(em, dims)
                store(node, role, em.cast(value, node.value.dtype, node.buf.dtype))
                continue
            name = accs[node.buf.name]
            v = reduce_value(node)
            fn = _COMBINE[node.combine]
            if node.combine in ("argmax", "argmin"):
                nv, ni = em.temp(), em.temp()
                body.line(f"{nv}, {ni} = {fn}({name}, {name}_index, {v}, rindex.to(tl.int64))")
                body.line(f"{name} = tl.where(xmask & rmask, {nv}, {name})")
                body.line(f"{name}_index = tl.where(xmask & rmask, {ni}, {name}_index)")
            else:
                op = _INFIX.get(node.combine)
                step = f"{name} {op} {v}" if op else f"{fn}({name}, {v})"
                body.line(f"{name} = tl.where(xmask & rmask, {step}, {name})")
        body.flush()
        body.depth -= 1
        em.cse, em.forwarded = saved_cse, saved_fwd
        for node, role in reds:
            acc = np.dtype(node.acc_dtype or node.buf.dtype)
            name = accs[node.buf.name]
            if node.combine in ("argmax", "argmin"):
                pair = em.temp()
                body.line(f"_, {pair} = tl.reduce(({name}, {name}_index), 1, {_COMBINE[node.combine]})")
                red = em.assign(f"{pair}[:, None]")
            else:
                red = em.assign(f"tl.reduce({name}, 1, {_COMBINE[node.combine]})[:, None]")
            finish_reduction(node, role, red, acc)
        for node, role in later:
            ordered_sum(node, role, "pairwise")
    body.flush()

    int64 = plan.int64
    widen = ".to(tl.int64)" if int64 else ""
    head = [f"xnumel = {xnumel}"]
    if reduction:
        head += [f"rnumel = {rnumel}",
                 f"xoffset = tl.program_id(0){widen} * XBLOCK",
                 f"xindex = xoffset + tl.arange(0, XBLOCK)[:, None]{widen}",
                 "xmask = xindex < xnumel",
                 f"rbase = tl.arange(0, RBLOCK)[None, :]{widen}"]
        head += _split("xindex", outer)
        if persistent:
            head += ["rindex = rbase", "rmask = rindex < rnumel"] + _split("rindex", inner)
    else:
        head += [f"xoffset = tl.program_id(0){widen} * XBLOCK",
                 f"xindex = xoffset + tl.arange(0, XBLOCK){widen}",
                 "xmask = xindex < xnumel"] + _split("xindex", outer)
    buffers = list(args.buffers.values())
    scalars = list(args.scalars.values())
    signature = args.signature()
    size_args = tuple(name for name in plan.size_args if name in used)
    for name in size_args:
        signature[name] = "i64"
    params = list(signature) + ["XBLOCK: tl.constexpr"] + (["RBLOCK: tl.constexpr"] if reduction else [])
    ops, sources = describe(kernel)
    source = templates().get_template("triton_kernel.py.j2").render(
        name=kernel.name, params=", ".join(params), ops=", ".join(ops), sources=sources,
        frame=_describe_frame(frame, persistent), index="int64" if int64 else "int32",
        body="\n".join(["    " + h for h in head] + body.out))
    return RenderedTritonKernel(kernel.name, source, signature, buffers, scalars, written,
                                xnumel, rnumel, reduction, persistent, int64,
                                size_args=size_args, ordered=bool(ordered) and ordered == reduced)


class _Recomputed(dict):
    """``TritonEmitter.forwarded`` inside a loop of a sum in NumPy's order: a row value of
    the kernel (``rows``) read there is computed again at the loop's positions (its tile
    holds the row in another layout, and memory it was stored to is another thread's)."""

    def __init__(self, base: dict, rows: dict, em: TritonEmitter, frame: Any) -> None:
        super().__init__(base)
        self.rows, self.em, self.frame = rows, em, frame
        self.dims = frame.dim_index()

    def get(self, key: Any, default: Any = None) -> Any:
        if key in self:
            return self[key]
        node = self.rows.get(key[0])
        if node is None or key[1] != write_index(node, "row", self.frame):
            return default
        value = self.em.cast(node.value.load(self.em, self.dims), node.value.dtype, node.buf.dtype)
        self[key] = value
        return value


def _describe_frame(frame: Any, persistent: bool) -> str:
    dims = " x ".join(str(d) for d in frame.shape) or "scalar"
    if frame.axes:
        how = "persistent (one tile per row)" if persistent else "looped over RBLOCK chunks"
        return f"iterates {dims}, reducing axes {list(frame.axes)}, {how}"
    return f"iterates {dims} elementwise"


def fit_locals(kernels: list[Kernel], local: dict) -> dict:
    """Kernel-local buffers the Triton kernels can keep: a row value read by a later loop
    of a looped reduction must live in memory (a persistent tile keeps it in registers)."""
    out = dict(local)
    for k in kernels:
        inner = k.frame.inner_vars()
        rnumel = product(n for _, n in inner)
        if k.frame.axes and (not isinstance(rnumel, int) or rnumel > PERSISTENT_RNUMEL):
            for node, _ in k.members:
                if out.get(node.buf.name) == "row":
                    del out[node.buf.name]
    return out


def render_module(graph_name: str, kernels: list[RenderedTritonKernel]) -> str:
    return templates().get_template("triton_module.py.j2").render(
        graph_name=graph_name, prelude=prelude(), kernels=[k.source for k in kernels])


class TritonRenderer(Renderer):
    """``@triton.jit`` kernels in one Python module, which kiln.runtime.triton_backend
    imports and installs in the wrapper (a kernel is called with arrays; the runtime
    launches it on the arrays' device, or through Triton's interpreter)."""

    name = "triton"
    dtypes = frozenset(TL_TYPES)
    loader = "kiln.runtime.triton_backend:TritonLoader"
    # (value, index) pairs through tl.reduce: the first NaN, then the lowest index
    reductions = Renderer.reductions | {"argmax", "argmin"}

    def __init__(self, device: tuple = ("cpu", None), interpret: bool = False) -> None:
        self.rendered: dict[str, RenderedTritonKernel] = {}
        self.device = device        # ("cuda", id) for CuPy arrays; ("cpu", None) interpreted
        self.interpret = interpret

    def input_checks(self, inputs: list) -> list[str]:
        """The array type (and GPU) the kernels were built for: anything else compiles
        another variant (a NumPy array where CuPy's was, another device)."""
        from .loop_ir import Buffer
        names = [name for name, kind in inputs if isinstance(kind, Buffer)]
        checks = [f"type({n}) is not _ARRAY" for n in names]
        if self.device[0] == "cuda":
            checks += [f"{n}.device.id != {self.device[1]}" for n in names]
        return checks

    def supports(self, fn: str, dtype: Any) -> bool:
        return np.dtype(dtype).name in TL_TYPES and (fn == "identity" or template(fn, dtype) is not None)

    def plan_kernel(self, kernel: Kernel, local: dict, size_args: tuple = (),
                    inplace: dict | None = None) -> TritonKernelPlan:
        return plan_kernel(kernel, local, size_args)

    def render_kernel(self, plan: TritonKernelPlan) -> RenderedTritonKernel:
        rk = self.rendered[plan.kernel.name] = print_kernel(plan)
        return rk

    def render_module(self, graph_name: str, kernels: list) -> str:
        return render_module(graph_name, kernels)

    def wrapper_prelude(self, module_path: str, signature: str, kernels: list) -> list[str]:
        return ["# Triton kernels: kiln.runtime.triton_backend installs each one under its name"]

    def pointer(self, buf: Any) -> str:
        return buf.name

    def launch(self, rendered: Any, args: list[str]) -> str:
        return f"{rendered.name}({', '.join(args)})"


__all__ = ["render_kernel", "render_module", "fit_locals", "RenderedTritonKernel", "literal",
           "TritonRenderer"]
