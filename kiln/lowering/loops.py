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


class _Printer:
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
                text = "NAN"
            elif v in (float("inf"), float("-inf")):
                text = "INFINITY" if v > 0 else "-INFINITY"
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
            self.emit(f"{kind.ctype} {name}; std::memcpy(&{name}, &slots[{k}], sizeof({name}));", 1)
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
            self._for(i, "start", "stop", self.step, 1)
        self.names[phs[0]] = i
        self._body(graph, carried, 2)
        self.emit("}", 1)
        for k, p in enumerate(scalars[:sum(1 for c in carried if not _is_array(c))]):
            self.emit(f"std::memcpy(&slots[{k}], &{self.names[p]}, sizeof({self.names[p]}));", 1)
        self.emit("return 0;", 1)
        if self.fast:
            test = ["  " + line for line in self.iv.lines]
            conds = list(dict.fromkeys(self.conds))
            if conds:
                test.append("  if (!(" + " &&\n        ".join(f"({c})" for c in conds) + ")) return 2;")
            self.lines[mark:mark] = test
        sig = (f'static int64_t {self.fname}(int64_t start, int64_t stop, int64_t step, '
               f'char** bufs, const int64_t* layout, int64_t* slots)')
        return sig + " {\n" + "\n".join(self.lines) + "\n}\n"

    def _for(self, i: str, a: str, b: str, step: Any, depth: int) -> None:
        """``for i in range(a, b, step)`` (``step`` an int, or None: the parameter)."""
        if step is None:
            self.emit(f"for (int64_t {i} = {a}; step > 0 ? {i} < {b} : {i} > {b}; {i} += step) {{", depth)
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
        the checked variant's the layout's."""
        shape = tuple(p.val.shape)
        ndim = len(shape)
        dtype = np.dtype(p.val.dtype)
        if dtype.name not in CTYPES:
            raise Unnative(f"an array of {dtype}")
        name = self.fresh("a")
        ct = CTYPES[dtype.name]
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
                self.emit(f"if (layout[{pos + ndim + k}] != {name}_s{k} && {name}_d{k} > 1) return 2;", 1)
            else:
                self.emit(f"const int64_t {name}_s{k} = layout[{pos + ndim + k}];", 1)
        self.arrays[p] = (name, ndim, dtype)

    def _body(self, graph: Any, carried: list, depth: int) -> None:
        """Statements for one iteration; then the carried placeholders take the outputs."""
        self.depth = depth
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

    def _unknown(self, node: Any, depth: int) -> None:
        raise Unnative(f"op {node.target.name}")

    # -- ops -------------------------------------------------------------------------------
    def _offset(self, node: Any, array: Any, index: tuple) -> str:
        name, ndim, _ = self.arrays[array]
        parts = []
        for axis, entry in enumerate(index):
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
            elif p in carried:
                name = self.fresh("c")
                self.emit(f"{_kind_of(p).ctype} {name} = {self.ref(v, _kind_of(p))};", depth)
                self.names[p] = name
            else:
                self.names[p] = self.ref(v, _kind_of(p))
        i = self.fresh("i")
        if type(step) is not int or step == 0:
            raise Unnative("a loop step that is not a constant")
        self._for(i, self.ref(start, _Kind(1)), self.ref(stop, _Kind(1)), step, depth)
        self.names[phs[0]] = i
        self._body(body.graph, carried, depth + 1)
        self.depth = depth
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
    """The exported function: arrays as pointers, scalars by value, the carried scalars'
    final values into ``out``; the fast variant first, the checked one where its entry
    test fails (2), unless ``inplace`` (then 2 comes back: nothing was written)."""
    phs = body.graph.placeholders[1:]
    arrays = [p for p in phs if _is_array(p)]
    scalars = [p for p in phs if not _is_array(p)]
    n_out = sum(1 for p in phs[:body.n_carried] if not _is_array(p))
    params = ["int64_t start", "int64_t stop", "int64_t step", "int64_t inplace",
              "const int64_t* layout"]
    params += [f"char* b{k}" for k in range(len(arrays))]
    params += [f"{_kind_of(p).ctype} p{k}" for k, p in enumerate(scalars)]
    params.append("int64_t* out")
    lines = [f"  char* bufs[{max(len(arrays), 1)}] = {{{', '.join(f'b{k}' for k in range(len(arrays))) or '0'}}};",
             f"  int64_t slots[{max(len(scalars), 1)}] = {{0}};"]
    lines += [f"  std::memcpy(&slots[{k}], &p{k}, sizeof(p{k}));" for k in range(len(scalars))]
    lines += ["  int64_t rc = kiln_loop_fast(start, stop, step, bufs, layout, slots);",
              "  if (rc == 2 && !inplace) rc = kiln_loop_checked(start, stop, step, bufs, layout, slots);"]
    if n_out:
        lines.append(f"  if (rc == 0) std::memcpy(out, slots, {8 * n_out});")
    lines.append("  return rc;")
    sig = f"int64_t KILN_ENTRY({', '.join(params)})"
    return f'extern "C" {sig} {{\n' + "\n".join(lines) + "\n}\n", sig + ";"


def native_runners(items: list) -> list:
    """Build ``(body, step)`` items in one module (one g++ run); returns their runners in
    order (see :func:`_runner`)."""
    from ..runtime.build import build
    from ..runtime.loader import load_library
    rendered = [render_body(body, step) for body, step in items]
    unique = {fname: (text, cdef) for text, fname, cdef, _ in rendered}
    so = build(PRELUDE + "\n" + "\n".join(text for text, _ in unique.values()), "loop")
    lib, ffi = load_library(so, "\n".join(cdef for _, cdef in unique.values()))
    return [_runner(body, getattr(lib, fname), ffi, ok)
            for (body, _), (_, fname, _, ok) in zip(items, rendered)]


def _runner(body: LoopBody, fn: Any, ffi: Any, inplace_ok: bool) -> Any:
    """``native(start, stop, step, carried, operands, inplace)`` over the built ``fn``,
    giving the final carried values, or None when the reference must run (a check failed,
    arrays the build cannot address; with ``inplace``, also: the fast variant's entry test
    failed, nothing written). ``native.inplace``: ``inplace`` calls are allowed."""
    phs = body.graph.placeholders[1:]
    is_array = [_is_array(p) for p in phs]
    kinds = [None if a else _kind_of(p) for p, a in zip(phs, is_array)]
    dtypes = [np.dtype(p.val.dtype) if a else None for p, a in zip(phs, is_array)]
    accepts = [None if k is None else (int, np.integer) if k.is_int else
               (float, np.floating) if k.is_float else (bool, np.bool_) for k in kinds]
    out_dtypes = [np.dtype({"pyint": "int64", "pyfloat": "float64", "pybool": "bool"}.get(k.name, k.name))
                  for k, a in zip(kinds[:body.n_carried], is_array) if not a]
    n_carried = body.n_carried
    cast, new, from_buffer = ffi.cast, ffi.new, ffi.from_buffer
    specs = list(zip(is_array, dtypes, accepts))

    def native(start: int, stop: int, step: int, carried: tuple, operands: tuple,
               inplace: bool = False) -> Any:
        values = tuple(carried) + tuple(operands)
        args, scalars, layout = [], [], []
        for v, (a, dt, ok) in zip(values, specs):
            if a:
                if type(v) is not np.ndarray or v.dtype != dt:
                    return None
                size = v.itemsize
                strides = v.strides
                if any(s % size for s in strides):
                    return None
                layout += v.shape
                layout += [s // size for s in strides]
                args.append(from_buffer(v) if v.flags.c_contiguous else cast("char*", v.ctypes.data))
            else:
                if not isinstance(v, ok):
                    return None
                scalars.append(v)
        out = np.empty(max(len(out_dtypes), 1), np.int64)
        try:
            rc = fn(start, stop, step, 1 if inplace else 0, new("int64_t[]", layout or [0]),
                    *args, *scalars, from_buffer("int64_t[]", out))
        except (OverflowError, TypeError):
            return None
        if rc != 0:
            return None
        result = []
        j = 0
        for idx in range(n_carried):
            if is_array[idx]:
                result.append(values[idx])
            else:
                raw = out[j:j + 1].view(out_dtypes[j])[0]
                result.append(raw.item() if kinds[idx].py else raw)
                j += 1
        return tuple(result)

    native.inplace = inplace_ok
    return native


def prepare_loops(graph: Any) -> None:
    """Give every loop node of ``graph`` its C++ runner, all built in one module (bodies
    the printer cannot print, or a failed build, keep the reference interpreter)."""
    from ..runtime.build import BuildError, CompilerUnavailable
    items = []
    for node in graph.nodes:
        body = node.kwargs.get("body") if node.kind == "call" else None
        if not isinstance(body, LoopBody) or body.native is not None:
            continue
        try:
            render_body(body, node.args[2])
        except Unnative:
            continue
        except Exception:   # a printer bug must not cost the user a result
            from ..config import config
            if config.debug_checks:
                raise
            continue
        items.append((body, node.args[2]))
    groups = [items] if items else []
    while groups:
        group = groups.pop()
        try:
            for (body, _), native in zip(group, native_runners(group)):
                body.native = native
        except (BuildError, CompilerUnavailable):
            if len(group) > 1:   # one body's build error must not cost the others
                groups += [[item] for item in group]
        except Exception:   # nor may a loader bug cost the user a result
            from ..config import config
            if config.debug_checks:
                raise
