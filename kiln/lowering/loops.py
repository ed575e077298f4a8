"""Loop nodes as C++ loops: a ``loop`` body (kiln/ops/loops.py) printed as one function.

``prepare_loops(graph)`` gives every loop node of a graph a native runner: its body —
element loads and stores, scalar operations, inner loops — becomes C++ statements inside
``for (i = start; i < stop; i += step)``, built once (on-disk cache) and called through
cffi, so an iteration costs nanoseconds. Semantics are the reference's exactly:

- NumPy scalars compute in their own type (integers wrap, float32 rounds as float32);
- Python ints are int64 with overflow checks, Python floats are doubles;
- anything where Python or NumPy would raise or leave those ranges — an index out of
  bounds, a Python int past int64, a division by zero on Python numbers, a float that
  does not fit the integer it is converted to — makes the function return non-zero, and
  the loop runs again from its start in the reference interpreter, which raises (or
  computes) exactly as NumPy and Python do.

Each body prints twice. The *fast* variant assumes C-contiguous arrays of the body's
static sizes (constant dims and strides for g++) and replaces the checks of affine
indices and Python-int sums by one test at entry (kiln/lowering/loop_bounds.py); the
*checked* variant reads sizes and strides from the layout and checks every access.
The exported function runs the fast one, and the checked one where the entry test
fails (return code 2: nothing was written yet). A fast variant with no checks left
cannot fail once started, so a caller that gives its arrays up (the memory plan's
in-place externs) lets it write into them without a copy (``native.inplace``).

The exported ABI: ``int64_t f(int64_t start, int64_t stop, int64_t step, int64_t
inplace, const int64_t* layout, char* b0, ..., <scalar> p0, ..., int64_t* out)``: arrays
in placeholder order (dims then element strides in ``layout``), scalars by value in
their C types, the carried scalars' final values in 8-byte ``out`` slots.
"""
from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ..ops.loops import LoopBody
from .loop_bounds import Bounds, Intervals
from .loop_scalars import (CTYPES, FAIL, PRELUDE, Unnative, _Kind, _is_array, _kind_of,
                           _scalar_expr)
from .loop_vectors import VectorOps


class _Printer(VectorOps):
    """Prints one top-level body (with its inner loops) as a C++ function.

    ``fast``: the variant whose affine checks one entry test replaces (kiln/lowering/
    loop_bounds.py), for C-contiguous arrays of the body's static sizes; it returns 2,
    having written nothing, where the test fails. ``residual`` counts the checks it still
    has: with none it cannot fail once started, so it may write into arrays in place."""

    def __init__(self, body: LoopBody, fname: str, step: int | None = None,
                 fast: bool = False, bounds: Bounds | None = None) -> None:
        self.body = body
        self.fname = fname
        self.step = step if type(step) is int and step else None
        self.fast = fast
        self.bounds = bounds if bounds is not None or not fast else Bounds(body, self.step)
        self.lines: list[str] = []
        self.names: dict[Any, str] = {}
        self.count = 0
        self.arrays: dict[Any, tuple] = {}   # node -> (data ptr name, ndim, dtype)
        self.conds: list[str] = []           # fast: the entry test, one clause each
        self.residual = 0
        self.current: Any = None             # the scalar_fn node being printed
        self._inner: dict[Any, list] = {}
        self.iv: Intervals | None = None
        self.depth = 1
        self._vec_init()

    def fresh(self, hint: str = "v") -> str:
        self.count += 1
        return f"{hint}{self.count}"

    def emit(self, line: str, depth: int) -> None:
        self.lines.append("  " * depth + line)

    # -- values ----------------------------------------------------------------------------
    def ref(self, value: Any, want: _Kind | None = None) -> str:
        """C expression of ``value`` (a node or a literal), converted to ``want``."""
        if hasattr(value, "kind"):
            expr, kind = self.names[value], _kind_of(value)
        else:
            kind = _kind_of(value)
            expr = self.literal(value, kind)
        if want is None or want.name == kind.name:
            return expr
        if kind.name == "pyint" and want.is_int and not want.py and self.proven_fits(value, want):
            return f"(({want.ctype})({expr}))"
        return self.convert(expr, kind, want)

    @staticmethod
    def literal(value: Any, kind: _Kind) -> str:
        if kind.is_bool:
            return "true" if bool(value) else "false"
        if kind.is_float:
            v = float(value)
            if v != v:
                text = "__builtin_nan(\"\")"
            elif v in (float("inf"), float("-inf")):
                text = "__builtin_inf()" if v > 0 else "-__builtin_inf()"
            else:
                text = repr(v)
            return f"(({kind.ctype}){text})" if kind.name == "float32" else f"((double){text})"
        v = int(value)
        if not -2**63 <= v < 2**64:
            raise Unnative("an integer literal past 64 bits")
        if kind.name == "pyint" and not -2**63 <= v < 2**63:
            raise Unnative("a Python int literal past int64")
        return f"(({kind.ctype}){v}LL)" if v < 2**63 else f"(({kind.ctype}){v}ULL)"

    def convert(self, expr: str, src: _Kind, dst: _Kind, depth: int | None = None) -> str:
        """``expr`` of kind ``src`` as ``dst``, as the operation consuming it would cast it.
        Python ints entering a NumPy integer type must fit it (NumPy raises otherwise)."""
        if src.name == "pyint" and dst.is_int and not dst.py and dst.name != "int64":
            self.check(f"!kiln_int_fits<{dst.ctype}>({expr})")
        if src.is_float and dst.is_int:
            self.check(f"!kiln_fits<{dst.ctype}>((double)({expr}))")
        if dst.is_bool:
            return f"(({expr}) != 0)"
        return f"(({dst.ctype})({expr}))"

    def check(self, cond: str) -> None:
        if self.fast:
            self.residual += 1
        self.emit(f"if ({cond}) KILN_FAIL({FAIL});", self.depth)

    # -- what the entry test proves (fast variant) ---------------------------------------
    def interval(self, value: Any) -> tuple[str, str] | None:
        if not self.fast or self.iv is None:
            return None
        return self.iv.interval(self.bounds.form(value))

    def proven_fits(self, value: Any, kind: _Kind) -> bool:
        """Is a Python int ``value`` inside ``kind``'s range on every iteration (then the
        entry test says so)?"""
        iv = self.interval(value)
        if iv is None:
            return False
        info = np.iinfo(kind.name) if kind.name != "pyint" else np.iinfo(np.int64)
        self.conds.append(f"{iv[0]} >= (__int128){info.min}LL && {iv[1]} <= "
                          f"(__int128){info.max}ULL")
        return True

    def unchecked_int(self) -> bool:
        """May the Python-int operation being printed skip its overflow check?"""
        return self.current is not None and self.proven_fits(self.current, _Kind(1))

    # -- the function ----------------------------------------------------------------------
    def function(self) -> str:
        graph = self.body.graph
        phs = graph.placeholders
        self.depth = 1
        arrays = [p for p in phs[1:] if _is_array(p)]
        scalars = [p for p in phs[1:] if not _is_array(p)]
        pos = 0
        for k, p in enumerate(arrays):
            self._bind_array(p, f"bufs[{k}]", pos)
            pos += 2 * len(p.val.shape)
        for k, p in enumerate(scalars):
            kind = _kind_of(p)
            name = self.fresh("s")
            self.emit(f"{kind.ctype} {name}; __builtin_memcpy(&{name}, &slots[{k}], sizeof({name}));", 1)
            self.names[p] = name
        if self.fast:
            self.iv = Intervals(self.bounds, self.names)
            self.iv.declare("start", "stop")
            if self.step is not None and self.body.cont is None:   # zero trips: nothing to do
                self.emit(f"if (!(start {'<' if self.step > 0 else '>'} stop)) return 0;", 1)
        mark = len(self.lines)
        i = self.fresh("i")
        carried = phs[1:1 + self.body.n_carried]
        if self.body.cont is not None:   # a while loop: carried value 0 is its condition
            cond = self.names[carried[0]]
            self.emit(f"for (int64_t {i} = 0; (({cond}) != 0) == {str(self.body.cont).lower()}; "
                      f"++{i}) {{", 1)
        else:
            if self.step is None:   # range() raises ValueError on a zero step: the reference
                self.emit(f"if (step == 0) KILN_FAIL({FAIL});", 1)
            self._for(i, "start", "stop", self.step, 1)
        self.names[phs[0]] = i
        self._body(graph, carried, 2)
        self._break(self.body, carried, 2)
        self.emit("}", 1)
        for k, p in enumerate(scalars[:sum(1 for c in carried if not _is_array(c))]):
            self.emit(f"__builtin_memcpy(&slots[{k}], &{self.names[p]}, sizeof({self.names[p]}));", 1)
        self.emit("return 0;", 1)
        self.lines[mark:mark] = self.scratch_lines()
        if self.fast:
            test = ["  " + line for line in self.iv.lines]
            conds = list(dict.fromkeys(self.conds))
            if conds:
                test.append("  if (!(" + " &&\n        ".join(f"({c})" for c in conds) + ")) return 2;")
            self.lines[mark:mark] = test
        sig = (f'static int64_t {self.fname}(int64_t start, int64_t stop, int64_t step, '
               f'char** bufs, const int64_t* layout, int64_t* slots)')
        return sig + " {\n" + "\n".join(self.lines) + "\n}\n"

    def _for(self, i: str, a: str, b: str, step: Any, depth: int, name: str = "step") -> None:
        """``for i in range(a, b, step)`` (``step`` an int, or None: the run-time value
        ``name``, not zero). Its trip count, computed first, keeps ``i`` inside int64."""
        if step is None:
            n, k, lo = self.fresh("n"), self.fresh("k"), self.fresh("b")
            self.emit(f"const int64_t {lo} = {a};", depth)
            self.emit(f"const int64_t {n} = {name} > 0 ? ({lo} < {b} ? (int64_t)(((__int128){b} - {lo} - 1) / "
                      f"{name} + 1) : 0) : ({lo} > {b} ? (int64_t)(((__int128){lo} - {b} - 1) / "
                      f"(-(__int128){name}) + 1) : 0);", depth)
            self.emit(f"for (int64_t {k} = 0; {k} < {n}; ++{k}) {{", depth)
            self.emit(f"const int64_t {i} = {lo} + {k} * {name};", depth + 1)
        elif step == 1:
            self.emit(f"for (int64_t {i} = {a}; {i} < {b}; ++{i}) {{", depth)
        elif step == -1:
            self.emit(f"for (int64_t {i} = {a}; {i} > {b}; --{i}) {{", depth)
        else:   # a trip count: i never steps past int64
            n, k = self.fresh("n"), self.fresh("k")
            lo, hi = (a, b) if step > 0 else (b, a)
            self.emit(f"const int64_t {n} = {lo} < {hi} ? (int64_t)(((__int128){hi} - {lo} - 1) / "
                      f"{abs(step)} + 1) : 0;", depth)
            self.emit(f"for (int64_t {k} = 0; {k} < {n}; ++{k}) {{", depth)
            self.emit(f"const int64_t {i} = {a} + {k} * (int64_t){step}LL;", depth + 1)

    def _bind_array(self, p: Any, data: str, pos: int) -> None:
        """The data pointer, and dims and element strides as constants (``name_d0``...):
        the fast variant's are the static sizes and C-contiguous strides (checked at entry),
        the checked variant's the layout's (strides come in bytes: one that is not a whole
        number of elements returns 3, and the reference runs)."""
        shape = tuple(p.val.shape)
        ndim = len(shape)
        dtype = np.dtype(p.val.dtype)
        if dtype.name not in CTYPES:
            raise Unnative(f"an array of {dtype}")
        name = self.fresh("a")
        ct = CTYPES[dtype.name]
        size = dtype.itemsize
        self.emit(f"{ct}* {name} = ({ct}*){data};", 1)
        for k in range(ndim):
            static = type(shape[k]) is int and self.fast
            self.emit(f"const int64_t {name}_d{k} = {shape[k] if static else f'layout[{pos + k}]'};", 1)
            if static:
                self.emit(f"if (layout[{pos + k}] != {shape[k]}) return 2;", 1)
        for k in range(ndim):
            if self.fast:
                expr = " * ".join(f"{name}_d{j}" for j in range(k + 1, ndim)) or "1"
                self.emit(f"const int64_t {name}_s{k} = {expr};", 1)
                self.emit(f"if (layout[{pos + ndim + k}] != {name}_s{k} * {size} && {name}_d{k} > 1) return 2;", 1)
            else:
                self.emit(f"if (layout[{pos + ndim + k}] % {size}) return 3;", 1)
                self.emit(f"const int64_t {name}_s{k} = layout[{pos + ndim + k}] / {size};", 1)
        self.arrays[p] = (name, ndim, dtype)

    def _body(self, graph: Any, carried: list, depth: int) -> None:
        """Statements for one iteration; then the carried placeholders take the outputs."""
        self.depth = depth
        self.block = graph
        for node in graph.nodes:
            if node.kind == "placeholder":
                continue
            if node.kind == "output":
                outs = node.args[0]
                temps = []
                for c, out in zip(carried, outs):
                    if _is_array(c):
                        if self.arrays.get(out, (None,))[0] != self.arrays[c][0]:
                            raise Unnative("a carried array that is not the one passed in")
                        continue
                    t = self.fresh("t")
                    self.emit(f"{_kind_of(c).ctype} {t} = {self.ref(out, _kind_of(c))};", depth)
                    temps.append((c, t))
                for c, t in temps:
                    self.emit(f"{self.names[c]} = {t};", depth)
                continue
            if node.kind == "constant":
                raise Unnative("a constant node in a body")
            getattr(self, f"op_{node.target.name}", self._unknown)(node, depth)

    def _break(self, body: LoopBody, carried: list, depth: int) -> None:
        """The iteration that met a ``break`` ends the loop (its flag is carried)."""
        if body.brk is not None:
            self.emit(f"if ({self.names[carried[body.brk]]}) break;", depth)

    def _unknown(self, node: Any, depth: int) -> None:
        raise Unnative(f"op {node.target.name}")

    # -- ops -------------------------------------------------------------------------------
    def _offset(self, node: Any, array: Any, index: tuple, axes: list | None = None) -> str:
        """The element offset of ``index`` (one int per axis, or per axis of ``axes``)."""
        name, ndim, _ = self.arrays[array]
        parts = []
        for axis, entry in zip(axes if axes is not None else range(ndim), index):
            kind = _kind_of(entry)
            if kind.is_bool or not kind.is_int:
                raise Unnative("a non-integer index")
            dim, stride = f"{name}_d{axis}", f"{name}_s{axis}"
            if self.fast and type(entry) is int:       # a literal: NumPy's wrap, tested once
                self.conds.append(f"{entry} < {dim}" if entry >= 0 else f"{entry} + {dim} >= 0")
                parts.append(f"({entry}LL{f' + {dim}' if entry < 0 else ''}) * {stride}")
                continue
            iv = self.interval(entry) if kind.name == "pyint" else None
            if iv is not None:                         # inside the axis on every iteration
                self.conds.append(f"{iv[0]} >= 0 && {iv[1]} < {dim}")
                parts.append(f"{self.ref(entry)} * {stride}")
                continue
            idx = self.fresh("x")
            if kind.name == "uint64":
                self.check(f"{self.ref(entry)} > (uint64_t)INT64_MAX")
            self.emit(f"int64_t {idx} = (int64_t){self.ref(entry)};", self.depth)
            self.emit(f"if ({idx} < 0) {idx} += {dim};", self.depth)
            self.check(f"{idx} < 0 || {idx} >= {dim}")
            parts.append(f"{idx} * {stride}")
        return " + ".join(parts) or "0"

    def op_load_elem(self, node: Any, depth: int) -> None:
        array, index = node.args
        off = self._offset(node, array, index)
        name = self.fresh("e")
        ctype = CTYPES[self.arrays[array][2].name]
        self.emit(f"{ctype} {name} = {self.arrays[array][0]}[{off}];", depth)
        self.names[node] = name

    def op_store_elem(self, node: Any, depth: int) -> None:
        array, index, value = node.args
        dtype = self.arrays[array][2]
        target = _Kind(dtype.type(1))
        src = _kind_of(value)
        expr = self.ref(value)
        if src.name == "pyint" and target.is_int and target.name != "int64" \
                and not self.proven_fits(value, target):
            self.check(f"!kiln_int_fits<{target.ctype}>({expr})")
        if src.is_float and target.is_int:
            self.check(f"!kiln_fits<{target.ctype}>((double)({expr}))")
        cast = f"(({expr}) != 0)" if target.is_bool else f"({target.ctype})({expr})"
        off = self._offset(node, array, index)
        self.emit(f"{self.arrays[array][0]}[{off}] = {cast};", depth)
        self.stored(self.arrays[array][0])

    def op_store_elem_if(self, node: Any, depth: int) -> None:
        """A store on one path of a data-dependent branch: its checks run only there."""
        when = node.args[0]
        self.emit(f"if ({self.ref(when, _Kind(True))}) {{", depth)
        saved, self.depth = self.depth, depth + 1
        stand = _StoreView(node)
        self.op_store_elem(stand, depth + 1)
        self.depth = saved
        self.emit("}", depth)

    def op_loop_item(self, node: Any, depth: int) -> None:
        loop_node = node.args[0]
        k = node.kwargs["index"]
        inner_carried = self._inner[loop_node]
        target = inner_carried[k]
        if _is_array(target):
            self.arrays[node] = self.arrays[target]
        else:
            self.names[node] = self.names[target]

    def op_loop(self, node: Any, depth: int) -> None:
        start, stop, step, inits, operands = node.args
        body: LoopBody = node.kwargs["body"]
        phs = body.graph.placeholders
        carried = phs[1:1 + body.n_carried]
        for p, v in zip(phs[1:], tuple(inits) + tuple(operands)):
            if _is_array(p):
                self.arrays[p] = self.arrays[v]
            elif v in self.vecs:          # a slice of the body around it
                self.vecs[p] = self.vecs[v]
            elif p in carried:
                name = self.fresh("c")
                self.emit(f"{_kind_of(p).ctype} {name} = {self.ref(v, _kind_of(p))};", depth)
                self.names[p] = name
            else:
                self.names[p] = self.ref(v, _kind_of(p))
        i = self.fresh("i")
        if type(step) is int and step == 0:
            raise Unnative("a zero loop step")
        name = "step"
        if type(step) is not int:     # a run-time step (the sieve's ``range(i * i, n, i)``)
            if _kind_of(step).name != "pyint":
                raise Unnative("a loop step that is not a Python int")
            name = self.fresh("st")
            self.emit(f"const int64_t {name} = {self.ref(step, _Kind(1))};", depth)
            self.check(f"{name} == 0")
            step = None
        self._for(i, self.ref(start, _Kind(1)), self.ref(stop, _Kind(1)), step, depth, name)
        self.names[phs[0]] = i
        outer = self.block
        self._body(body.graph, carried, depth + 1)
        self._break(body, carried, depth + 1)
        self.depth = depth
        self.block = outer
        self.emit("}", depth)
        self._inner[node] = carried

    def op_scalar_fn(self, node: Any, depth: int) -> None:
        fn = node.kwargs["fn"]
        args = node.args[0]
        out = _kind_of(node)
        kinds = [_kind_of(a) for a in args]
        self.current = node
        expr = _scalar_expr(self, fn, args, kinds, out)
        self.current = None
        name = self.fresh("v")
        self.emit(f"{out.ctype} {name} = {expr};", depth)
        self.names[node] = name


class _StoreView:
    """``store_elem_if``'s store as a ``store_elem`` node (its args without the predicate)."""

    def __init__(self, node: Any) -> None:
        self.args = node.args[1:]
        self.kwargs = node.kwargs
        self.meta = node.meta
        self.name = node.name


def render_body(body: LoopBody, step: int | None = None) -> tuple[str, str, str, bool]:
    """``(C++ source after PRELUDE, function name, its cdef, in place)`` of a top-level loop body: a
    fast and a checked variant and the entry that picks one. ``in place``: the fast
    variant cannot fail once its entry test passed (an ``inplace`` call runs it or
    nothing)."""
    bounds = Bounds(body, step if type(step) is int and body.cont is None else None)
    fast = _Printer(body, "kiln_loop_fast", step, fast=True, bounds=bounds)
    checked = _Printer(body, "kiln_loop_checked", step)
    entry, cdef = _entry(body)
    text = fast.function() + "\n" + checked.function() + "\n" + entry
    fname = "kiln_loop_" + hashlib.sha256(text.encode()).hexdigest()[:12]
    text = text.replace("kiln_loop_", f"{fname}_").replace("KILN_ENTRY", fname)
    return (f"// loop at {body.where}\n" + text, fname, cdef.replace("KILN_ENTRY", fname),
            fast.residual == 0)


def _entry(body: LoopBody) -> tuple[str, str]:
    """The exported function: each array's dims and byte strides as ints, then the arrays
    as pointers, scalars by value, and the carried scalars' final values into ``*out``
    (a struct, one field per carried scalar, each in its C type). The fast variant runs
    first, the checked one where its entry test fails (2), unless ``inplace`` (then 2
    comes back: nothing was written)."""
    phs = body.graph.placeholders[1:]
    arrays = [p for p in phs if _is_array(p)]
    scalars = [p for p in phs if not _is_array(p)]
    outs = [_kind_of(p).ctype for p in phs[:body.n_carried] if not _is_array(p)]
    n_layout = sum(2 * len(p.val.shape) for p in arrays)
    params = ["int64_t start", "int64_t stop", "int64_t step", "int64_t inplace"]
    params += [f"int64_t l{k}" for k in range(n_layout)]
    params += [f"char* b{k}" for k in range(len(arrays))]
    params += [f"{_kind_of(p).ctype} p{k}" for k, p in enumerate(scalars)]
    typedef = ""
    if outs:
        typedef = "typedef struct { " + " ".join(f"{t} c{k};" for k, t in enumerate(outs)) \
            + " } KILN_ENTRY_out;\n"
        params.append("KILN_ENTRY_out* out")
    lines = [f"  const int64_t layout[{max(n_layout, 1)}] = "
             f"{{{', '.join(f'l{k}' for k in range(n_layout)) or '0'}}};",
             f"  char* bufs[{max(len(arrays), 1)}] = {{{', '.join(f'b{k}' for k in range(len(arrays))) or '0'}}};",
             f"  int64_t slots[{max(len(scalars), 1)}] = {{0}};"]
    lines += [f"  __builtin_memcpy(&slots[{k}], &p{k}, sizeof(p{k}));" for k in range(len(scalars))]
    lines += ["  int64_t rc = kiln_loop_fast(start, stop, step, bufs, layout, slots);",
              "  if (rc == 2 && !inplace) rc = kiln_loop_checked(start, stop, step, bufs, layout, slots);"]
    if outs:
        lines.append("  if (rc == 0) {")
        lines += [f"    __builtin_memcpy(&out->c{k}, &slots[{k}], sizeof(out->c{k}));" for k in range(len(outs))]
        lines.append("  }")
    lines.append("  return rc;")
    sig = f"int64_t KILN_ENTRY({', '.join(params)})"
    return typedef + f'extern "C" {sig} {{\n' + "\n".join(lines) + "\n}\n", typedef + sig + ";"


def native_runners(items: list, rendered: list | None = None, graph_name: str = "loops") -> list:
    """Build ``(body, step)`` items in one module (one g++ run); returns their runners in
    order (see :func:`_runner`). ``rendered``: the items' :func:`render_body` results, when
    the caller has them already. The module and its launchers go to ``output_code`` and
    ``KILN_DEBUG_DIR`` (kiln/runtime/backend.py ``report_loops``)."""
    import time
    from ..runtime.backend import report_loops
    from ..runtime.build import build
    from ..runtime.build import stats as build_stats
    from ..runtime.loader import load_library
    if rendered is None:
        rendered = [render_body(body, step) for body, step in items]
    unique = {fname: (text, cdef) for text, fname, cdef, _ in rendered}
    source = PRELUDE + "\n" + "\n".join(text for text, _ in unique.values())
    started, builds = time.perf_counter(), build_stats["builds"]
    so = build(source, "loop")
    lib, ffi = load_library(so, "\n".join(cdef for _, cdef in unique.values()))
    runners = [_runner(body, getattr(lib, fname), ffi, ok, fname)
               for (body, _), (_, fname, _, ok) in zip(items, rendered)]
    report_loops(graph_name, source, so, [r.source for r in runners],
                 build_stats["builds"] > builds, time.perf_counter() - started)
    return runners


def _runner(body: LoopBody, fn: Any, ffi: Any, inplace_ok: bool, fname: str = "loop") -> Any:
    """``native(start, stop, step, carried, operands, inplace)`` over the built ``fn``,
    giving the final carried values, or None when the reference must run (a check failed,
    arrays the build cannot address; with ``inplace``, also: the fast variant's entry test
    failed, nothing written). ``native.inplace``: ``inplace`` calls are allowed.

    ``native`` is generated straight-line Python for this body's signature (its source
    is ``native.source``): a type test per value, the arrays' dims and strides and the
    scalars passed to C as they are, one struct for the carried scalars' results — no
    per-call work that loops over the values."""
    phs = body.graph.placeholders[1:]
    n_carried = body.n_carried
    env: dict[str, Any] = {"fn": fn, "ndarray": np.ndarray, "fb": ffi.from_buffer,
                           "cast": ffi.cast, "new": ffi.new, "as_scalar": _as_scalar}
    lines = [f"def native(start, stop, step, carried, operands, inplace=False):"]
    names = [f"v{k}" for k in range(len(phs))]
    carried_names, operand_names = names[:n_carried], names[n_carried:]
    if carried_names:
        lines.append(f"    {', '.join(carried_names)}, = carried")
    if operand_names:
        lines.append(f"    {', '.join(operand_names)}, = operands")
    layout, pointers, scalars, results = [], [], [], []
    for k, (p, v) in enumerate(zip(phs, names)):
        if _is_array(p):
            env[f"dt{k}"] = np.dtype(p.val.dtype)
            lines.append(f"    if type({v}) is not ndarray or {v}.dtype != dt{k}: return None")
            ndim = len(p.val.shape)
            if ndim:
                lines.append(f"    {v}_sh = {v}.shape; {v}_st = {v}.strides")
                layout += [f"{v}_sh[{j}]" for j in range(ndim)] + [f"{v}_st[{j}]" for j in range(ndim)]
            pointers.append(f"(fb({v}) if {v}.flags.c_contiguous else cast('char*', {v}.ctypes.data))")
            if k < n_carried:
                results.append(v)
            continue
        kind = _kind_of(p)
        env[f"ok{k}"] = ((int, np.integer) if kind.is_int else (float, np.floating)
                         if kind.is_float else (bool, np.bool_))
        lines.append(f"    if not isinstance({v}, ok{k}):")
        lines.append(f"        {v} = as_scalar({v}, ok{k})")
        lines.append(f"        if {v} is None: return None")
        scalars.append(v)
        if k < n_carried:
            field = f"out.c{sum(1 for q in phs[:k] if not _is_array(q))}"
            if kind.py:
                results.append(field)
            else:
                env[f"np{k}"] = np.dtype(kind.name).type
                results.append(f"np{k}({field})")
    call = ["start", "stop", "step", "inplace"] + layout + pointers + scalars
    if len(results) > sum(1 for p in phs[:n_carried] if _is_array(p)):
        lines.append(f"    out = new('{fname}_out *')")
        call.append("out")
    lines += ["    try:",
              f"        rc = fn({', '.join(call)})",
              "    except (OverflowError, TypeError):",
              "        return None",
              "    if rc: return None",
              f"    return ({''.join(r + ', ' for r in results)})"]
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<kiln {fname} launcher>", "exec"), env)
    native = env["native"]
    native.inplace = inplace_ok
    native.source = source
    return native


def _as_scalar(value: Any, ok: tuple) -> Any:
    """A value for a scalar slot: a 0-d array becomes the NumPy scalar it holds; None
    for anything else of the wrong kind (the reference runs)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    return value if isinstance(value, ok) else None


def prepare_loops(graph: Any) -> None:
    """Give every loop node of ``graph`` its C++ runner, all built in one module (bodies
    the printer cannot print, or a failed build, keep the reference interpreter)."""
    from ..runtime.build import BuildError, CompilerUnavailable
    items, rendered = [], {}
    for node in graph.nodes:
        body = node.kwargs.get("body") if node.kind == "call" else None
        if not isinstance(body, LoopBody) or body.native is not None:
            continue
        try:
            rendered[len(items)] = render_body(body, node.args[2])
        except Unnative:
            continue
        except Exception:   # a printer bug must not cost the user a result
            from ..config import config
            if config.debug_checks:
                raise
            continue
        items.append((body, node.args[2], len(items)))
    groups = [items] if items else []
    while groups:
        group = groups.pop()
        try:
            texts = [rendered[k] for _, _, k in group]
            pairs = [(body, step) for body, step, _ in group]
            for (body, _), native in zip(pairs, native_runners(pairs, texts, graph.name)):
                body.native = native
        except (BuildError, CompilerUnavailable):
            if len(group) > 1:   # one body's build error must not cost the others
                groups += [[item] for item in group]
        except Exception:   # nor may a loader bug cost the user a result
            from ..config import config
            if config.debug_checks:
                raise
