"""Loop nodes as C++ loops: a ``loop`` body (kiln/ops/loops.py) printed as one function.

``prepare_loops(graph)`` (loop_runner.py) gives every loop node of a graph a native
runner: its body — element loads and stores, scalar operations, inner loops — becomes
C++ statements inside ``for (i = start; i < stop; i += step)``, built once (on-disk
cache) and called through runtime/launch.c's Launcher, so an iteration costs
nanoseconds. Semantics are the reference's exactly:

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

kiln/lowering/loop_runner.py renders both variants and the exported function, builds
them and calls them (its doc has the ABI).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops.fp_errors import OVER
from ..ops.loops import LoopBody
from ..ops.scatter import element_store_may_raise
from .loop_bounds import COUNTER_START, Bounds, Intervals
from .loop_scalars import CTYPES, FAIL, INT_FLAGS, Unnative, _Kind, _is_array, _kind_of, _scalar_expr
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
        self.breaks = False   # the body being printed breaks or is a while loop (selects)
        self.step = step if type(step) is int and step else None
        self.fast = fast
        self.bounds = bounds if bounds is not None or not fast else Bounds(body, self.step)
        self.lines: list[str] = []
        self.names: dict[Any, str] = {}
        self.count = 0
        self.arrays: dict[Any, tuple] = {}   # node -> (data ptr name, ndim, dtype)
        self.swapped: list = []   # (data ptr, its pair, placeholder): carried arrays swapped
        self.conds: list[str] = []           # fast: the entry test, one clause each
        self.residual = 0
        self.current: Any = None             # the scalar_fn node being printed
        self._inner: dict[Any, list] = {}
        self.iv: Intervals | None = None
        self.depth = 1
        self.warnings: list[tuple] = []      # (message, filename, lineno): ``warns``
        self.fp_flags = 0                    # the float kinds of those (ops/fp_errors.py bits)
        self.int_flags = 0                   # the integer kinds of those (kiln_over_*)
        self.spans: dict[str, tuple] = {}    # run-time step loop variable -> (lowest, highest)
        self.carried_of: dict[Any, set] = {}  # body graph -> its carried placeholders
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

    def warns(self, kind: str, ufunc: str, node: Any = None) -> None:
        """Note that NumPy's scalar math may warn "<kind> encountered in scalar <ufunc>"
        (``ufunc`` "cast" or "sqrt": "... in cast", as NumPy names those) at the line of
        ``node``, else of the node being printed (``LoopBody.warnings``)."""
        self.note(f"{kind} encountered in " + (ufunc if ufunc in ("cast", "sqrt") else f"scalar {ufunc}"),
                  node)

    def note(self, message: str, node: Any = None) -> None:
        """:meth:`warns` of a whole message."""
        node = node if node is not None else self.current
        source = (node.meta.get("source") if node is not None else None) or ("", 0)
        key = (message, source[0], source[1])
        if key not in self.warnings:
            self.warnings.append(key)

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
        # (the minimum as ``m + 1 - 1``: g++ warns that -9223372036854775808LL's literal is
        # "so large that it is unsigned", in every build with a Python-int sum)
        self.conds.append(f"{iv[0]} >= (__int128)({info.min + 1}LL - 1) && {iv[1]} <= "
                          f"(__int128){info.max}ULL")
        return True

    def unchecked_int(self) -> bool:
        """May the Python-int operation being printed skip its overflow check?"""
        if self.current is None:
            return False
        ph = self.bounds.counters.get(self.current) if self.fast else None
        if ph is not None:   # a counter's step (loop_bounds.py): its entry value is tested
            s = self.names[ph]
            self.conds.append(f"{s} >= -{COUNTER_START}LL && {s} <= {COUNTER_START}LL")
            return True
        return self.proven_fits(self.current, _Kind(1))

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
            # A search loop (a short body that breaks or returns) unrolled: GCC 12 keeps
            # one taken branch per element otherwise (first_above: 0.7 -> 0.45 ns/element).
            short_search = self.body.brk is not None and \
                sum(1 for n in graph.nodes if n.kind == "call") <= 16 and \
                not any(n.kind == "call" and n.target.name == "loop" for n in graph.nodes)
            self._for(i, "start", "stop", self.step, 1, unroll=short_search)
        self.names[phs[0]] = i
        self.breaks = self.body.brk is not None or self.body.cont is not None
        self._body(graph, carried, 2)
        self._break(self.body, carried, 2)
        self.emit("}", 1)
        for a, b, p in self.swapped:   # (see _swaps)
            n, q = " * ".join(f"{a}_d{k}" for k in range(len(p.val.shape))) or "1", self.fresh("q")
            self.emit(f"if ({a} != ({CTYPES[np.dtype(p.val.dtype).name]}*)bufs[{arrays.index(p)}]) "
                      f"for (int64_t {q} = 0; {q} < {n}; ++{q}) {{ const auto t = {a}[{q}]; "
                      f"{a}[{q}] = {b}[{q}]; {b}[{q}] = t; }}", 1)
        for k, p in enumerate(scalars[:sum(1 for c in carried if not _is_array(c))]):
            self.emit(f"__builtin_memcpy(&slots[{k}], &{self.names[p]}, sizeof({self.names[p]}));", 1)
        if self.int_flags:   # FP_RAISED | what its integer math raised (see kiln_over_add)
            self.emit(f"return {INT_FLAGS} ? (KILN_FP_RAISED | {INT_FLAGS}) : 0;", 1)
            self.lines[mark:mark] = [f"  unsigned {INT_FLAGS} = 0;"]
        else:
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

    def _for(self, i: str, a: str, b: str, step: Any, depth: int, name: str = "step",
             unroll: bool = False) -> None:
        """``for i in range(a, b, step)`` (``step`` an int, or None: the run-time value
        ``name``, not zero). Its trip count, computed first, keeps ``i`` inside int64.
        ``unroll``: ask GCC to unroll it 4 times (a short body that may break)."""
        pragma = ["#pragma GCC unroll 4"] if unroll else []   # right before its ``for``
        if step is None:
            n, k, lo = self.fresh("n"), self.fresh("k"), self.fresh("b")
            self.emit(f"const int64_t {lo} = {a};", depth)
            self.emit(f"const int64_t {n} = {name} > 0 ? ({lo} < {b} ? (int64_t)(((__int128){b} - {lo} - 1) / "
                      f"{name} + 1) : 0) : ({lo} > {b} ? (int64_t)(((__int128){lo} - {b} - 1) / "
                      f"(-(__int128){name}) + 1) : 0);", depth)
            # the smallest and largest value ``i`` takes (empty: 0 and -1), so that an
            # index ``i`` is tested against its axis once, not on every trip (_offset)
            last = f"(int64_t)((__int128){lo} + (__int128)({n} - 1) * {name})"
            low, high = self.fresh("lo"), self.fresh("hi")
            self.emit(f"const int64_t {low} = {n} <= 0 ? 0 : {name} > 0 ? {lo} : {last};", depth)
            self.emit(f"const int64_t {high} = {n} <= 0 ? -1 : {name} > 0 ? {last} : {lo};", depth)
            self.spans[i] = (low, high)
            self.lines += pragma
            self.emit(f"for (int64_t {k} = 0; {k} < {n}; ++{k}) {{", depth)
            self.emit(f"const int64_t {i} = {lo} + {k} * {name};", depth + 1)
        elif step == 1:
            self.lines += pragma
            self.emit(f"for (int64_t {i} = {a}; {i} < {b}; ++{i}) {{", depth)
        elif step == -1:
            self.lines += pragma
            self.emit(f"for (int64_t {i} = {a}; {i} > {b}; --{i}) {{", depth)
        else:   # a trip count: i never steps past int64
            n, k = self.fresh("n"), self.fresh("k")
            lo, hi = (a, b) if step > 0 else (b, a)
            self.emit(f"const int64_t {n} = {lo} < {hi} ? (int64_t)(((__int128){hi} - {lo} - 1) / "
                      f"{abs(step)} + 1) : 0;", depth)
            self.lines += pragma
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
        self.carried_of[graph] = set(carried)
        for node in graph.nodes:
            if node.kind == "placeholder":
                continue
            if node.kind == "output":
                outs = node.args[0]
                temps = []
                self._swaps(graph, carried, outs, depth)
                for c, out in zip(carried, outs):
                    if _is_array(c):
                        continue
                    t = self.fresh("t")
                    self.emit(f"{_kind_of(c).ctype} {t} = {self.ref(out, _kind_of(c))};", depth)
                    temps.append((c, t))
                chains = _may_chain_adds(graph)
                for c, t in temps:
                    self.emit(f"{self.names[c]} = {t};", depth)
                    if chains and _kind_of(c).is_float:
                        # (a float carried from step to step that may take several adds
                        # a step: no fold-left vectorizing, GCC bug 110381; cpp_prelude.h
                        # KILN_OPAQUE)
                        self.emit(f"KILN_OPAQUE({self.names[c]});", depth)
                continue
            if node.kind == "constant":
                raise Unnative("a constant node in a body")
            getattr(self, f"op_{node.target.name}", self._unknown)(node, depth)

    def _swaps(self, graph: Any, carried: list, outs: tuple, depth: int) -> None:
        """Carried arrays the next trip finds where the body leaves them, or swapped in
        pairs (``prev, cur = cur, prev``, kiln/capture/loop_node.py): the top-level body
        swaps the two data pointers (the fast variant's layouts are the same static
        C-contiguous ones; the checked variant leaves such a loop to the reference), and
        :meth:`function` swaps the contents back after the loop where it swapped an odd
        number of times, so that each buffer ends with its own slot's value."""
        pairs = {}
        for c, out in zip(carried, outs):
            if _is_array(c) and self.arrays.get(out, (None,))[0] != self.arrays[c][0]:
                pairs[self.arrays[c][0]] = (c, self.arrays.get(out, (None,))[0])
        if not pairs:
            return
        if graph is not self.body.graph:
            raise Unnative("a carried array that is not the one passed in")
        for a, (c, b) in pairs.items():
            other = pairs.get(b)
            if other is None or other[1] != a or c.val.dtype != other[0].val.dtype \
                    or tuple(c.val.shape) != tuple(other[0].val.shape):
                raise Unnative("carried arrays that are not swapped in pairs")
        if not self.fast:
            self.emit(f"KILN_FAIL({FAIL});", depth)
            return
        for a, (c, b) in pairs.items():
            if a < b:
                t = self.fresh("t")
                self.emit(f"{{ {CTYPES[np.dtype(c.val.dtype).name]}* {t} = {a}; {a} = {b}; {b} = {t}; }}",
                          depth)
                self.swapped.append((a, b, c))

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
            known = self.iv.known_interval(self.bounds.form(entry)) if iv is not None else None
            if known is not None and known[0] < 0:     # `a[i - 1]` from i = 0: NumPy's wrap
                # (tested once to lie in [-d, d), then wrapped per element: the entry test
                # that wanted it inside the axis failed, and the checked variant ran)
                self.conds.append(f"{iv[0]} >= -{dim} && {iv[1]} < {dim}")
                idx = self.fresh("x")
                self.emit(f"int64_t {idx} = {self.ref(entry)}; if ({idx} < 0) {idx} += {dim};",
                          self.depth)
                parts.append(f"{idx} * {stride}")
                continue
            if iv is not None:                         # inside the axis on every iteration
                self.conds.append(f"{iv[0]} >= 0 && {iv[1]} < {dim}")
                parts.append(f"{self.ref(entry)} * {stride}")
                continue
            idx = self.fresh("x")
            if kind.name == "uint64":
                self.check(f"{self.ref(entry)} > (uint64_t)INT64_MAX")
            self.emit(f"int64_t {idx} = (int64_t){self.ref(entry)};", self.depth)
            span = self.spans.get(self.ref(entry))
            if span is not None:   # a run-time step's loop variable: tested where it may leave
                self.emit(f"if (!({span[0]} >= 0 && {span[1]} < {dim})) {{", self.depth)
                self.depth += 1
            self.emit(f"if ({idx} < 0) {idx} += {dim};", self.depth)
            self.check(f"{idx} < 0 || {idx} >= {dim}")
            if span is not None:   # (its test is the loop's invariant: GCC unswitches the loop)
                self.depth -= 1
                self.emit("}", self.depth)
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
        if not src.py and src.is_int and target.is_int and element_store_may_raise(src.name, target.name):
            fits = "kiln_int_fits" if src.is_signed else "kiln_uint_fits"
            self.check(f"!{fits}<{target.ctype}>({expr})")
        if src.is_float and target.is_int:
            self.check(f"!kiln_fits<{target.ctype}>((double)({expr}))")
        if target.name == "float32" and src.name in ("float64", "pyfloat"):
            self.warns("overflow", "cast", node)   # (NumPy's write casts the value)
            self.fp_flags |= OVER
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
        if body.cont is not None:     # a while loop in the body: carried value 0 is its condition
            self.emit(f"for (int64_t {i} = 0; (({self.names[carried[0]]}) != 0) == "
                      f"{str(body.cont).lower()}; ++{i}) {{", depth)
            self._inner_body(node, body, phs, carried, i, depth)
            return
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
        self._inner_body(node, body, phs, carried, i, depth)

    def _inner_body(self, node: Any, body: LoopBody, phs: list, carried: list, i: str,
                    depth: int) -> None:
        """A nested loop's body, break test and closing brace, after its ``for`` line."""
        self.names[phs[0]] = i
        outer, breaks = self.block, self.breaks
        self.breaks = body.brk is not None or body.cont is not None
        self._body(body.graph, carried, depth + 1)
        self._break(body, carried, depth + 1)
        self.breaks = breaks
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
        if node.meta.get("guarded_operand") == "warns":
            # (an operand guarded off the path for its warnings alone: the flags say them)
            expr = self.ref(args[1], out)
        else:
            expr = _scalar_expr(self, fn, args, kinds, out)
        self.current = None
        name = self.fresh("v")
        self.emit(f"{out.ctype} {name} = {expr};", depth)
        self.names[node] = name


def _may_chain_adds(graph: Any) -> bool:
    """Could GCC see several in-order float adds a step in this loop body (two or more
    float additions or subtractions, or a loop inside it that GCC may unroll)? Those are
    the loops its fold-left vectorizer miscompiles (cpp_prelude.h KILN_OPAQUE); one add
    a step (``s -= L[i, k] * L[j, k]``) it vectorizes correctly, ~20% faster (cholesky)."""
    adds = 0
    for node in graph.nodes:
        name = getattr(node.target, "name", None)
        if name == "loop":
            return True
        if name == "scalar_fn" and node.kwargs.get("fn") in ("add", "sub") and _kind_of(node).is_float:
            adds += 1
    return adds >= 2


class _StoreView:
    """``store_elem_if``'s store as a ``store_elem`` node (its args without the predicate)."""

    def __init__(self, node: Any) -> None:
        self.args = node.args[1:]
        self.kwargs = node.kwargs
        self.meta = node.meta
        self.name = node.name
