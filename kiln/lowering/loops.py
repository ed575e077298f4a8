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

The function's ABI: ``int64_t f(int64_t start, int64_t stop, int64_t step, char** bufs,
const int64_t* layout, int64_t* slots)``; arrays in placeholder order (data pointer; dims
then element strides in ``layout``), scalars in 8-byte ``slots`` (carried ones are
written back).
"""
from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ..ops.loops import LoopBody, stand_in

CTYPES = {"bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
          "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
          "uint64": "uint64_t", "float32": "float", "float64": "double"}
# Python scalars in C: ints are checked int64, floats double.
PY_KINDS = {int: "pyint", float: "pyfloat", bool: "pybool"}

PRELUDE = r"""
#include <cstdint>
#include <cstring>
#include <cmath>
#include <climits>
#include <limits>
#include <type_traits>
#define KILN_FAIL(code) do { return (code); } while (0)
static inline double kiln_floordiv_f64(double a, double b) {
  double mod = std::fmod(a, b);
  if (!b) return a / b;
  double div = (a - mod) / b;
  if (mod) { if ((b < 0) != (mod < 0)) { mod += b; div -= 1.0; } }
  double fl;
  if (div) { fl = std::floor(div); if (div - fl > 0.5) fl += 1.0; }
  else { fl = std::copysign(0.0, a / b); }
  return fl;
}
static inline double kiln_mod_f64(double a, double b) {
  double mod = std::fmod(a, b);
  if (!b) return mod;
  if (mod) { if ((b < 0) != (mod < 0)) mod += b; }
  else { mod = std::copysign(0.0, b); }
  return mod;
}
static inline float kiln_floordiv_f32(float a, float b) {
  float mod = std::fmod(a, b);
  if (!b) return a / b;
  float div = (a - mod) / b;
  if (mod) { if ((b < 0) != (mod < 0)) { mod += b; div -= 1.0f; } }
  float fl;
  if (div) { fl = std::floor(div); if (div - fl > 0.5f) fl += 1.0f; }
  else { fl = std::copysign(0.0f, a / b); }
  return fl;
}
static inline float kiln_mod_f32(float a, float b) {
  float mod = std::fmod(a, b);
  if (!b) return mod;
  if (mod) { if ((b < 0) != (mod < 0)) mod += b; }
  else { mod = std::copysign(0.0f, b); }
  return mod;
}
template <typename T> static inline T kiln_ifloordiv(T a, T b) {
  if (b == 0) return 0;
  if ((T)-1 < 0 && b == (T)-1) return (T)(0 - (typename std::make_unsigned<T>::type)a);
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
  return q;
}
template <typename T> static inline T kiln_imod(T a, T b) {
  if (b == 0) return 0;
  if ((T)-1 < 0 && b == (T)-1) return 0;
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
template <typename T> static inline T kiln_wrap_add(T a, T b) {
  typedef typename std::make_unsigned<T>::type U; return (T)((U)a + (U)b); }
template <typename T> static inline T kiln_wrap_sub(T a, T b) {
  typedef typename std::make_unsigned<T>::type U; return (T)((U)a - (U)b); }
template <typename T> static inline T kiln_wrap_mul(T a, T b) {
  typedef typename std::make_unsigned<T>::type U; return (T)((U)a * (U)b); }
template <typename T> static inline T kiln_wrap_neg(T a) {
  typedef typename std::make_unsigned<T>::type U; return (T)(0 - (U)a); }
template <typename T> static inline T kiln_ipow(T a, T b) {
  typedef typename std::make_unsigned<T>::type U; U r = 1, x = (U)a;
  while (b > 0) { if (b & 1) r *= x; x *= x; b >>= 1; } return (T)r; }
template <typename T> static inline T kiln_lshift(T a, T b) {
  typedef typename std::make_unsigned<T>::type U;
  return ((uint64_t)(int64_t)b < sizeof(T) * 8) ? (T)((U)a << b) : (T)0; }
template <typename T> static inline T kiln_rshift(T a, T b) {
  return ((uint64_t)(int64_t)b < sizeof(T) * 8) ? (T)(a >> b) : (T)(a < 0 ? -1 : 0); }
template <typename T> static inline bool kiln_fits(double v) {
  return v == v && v >= -9.3e18 && v <= 1.8e19 &&
         (double)std::numeric_limits<T>::lowest() <= std::trunc(v) &&
         std::trunc(v) <= (double)std::numeric_limits<T>::max(); }
template <typename T> static inline bool kiln_int_fits(int64_t v) {
  return (std::numeric_limits<T>::is_signed || v >= 0) &&
         (__int128)v >= (__int128)std::numeric_limits<T>::lowest() &&
         (__int128)v <= (__int128)std::numeric_limits<T>::max(); }
"""

# Return codes (any non-zero one reruns the loop in the reference interpreter).
FAIL = 1


class Unnative(Exception):
    """The body has something the C++ printer does not handle: it stays interpreted."""


class _Kind:
    """A value's type in C: a NumPy dtype name, or pyint/pyfloat/pybool."""

    def __init__(self, example: Any) -> None:
        if isinstance(example, np.generic):
            self.name = example.dtype.name
            self.py = False
        elif type(example) in PY_KINDS:
            self.name = PY_KINDS[type(example)]
            self.py = True
        else:
            raise Unnative(f"a value of type {type(example).__name__}")
        self.example = example

    @property
    def ctype(self) -> str:
        return {"pyint": "int64_t", "pyfloat": "double", "pybool": "bool"}.get(self.name) \
            or CTYPES[self.name]

    @property
    def is_float(self) -> bool:
        return self.name in ("pyfloat", "float32", "float64")

    @property
    def is_int(self) -> bool:
        return self.name == "pyint" or (not self.py and np.dtype(self.name).kind in "iu")

    @property
    def is_bool(self) -> bool:
        return self.name in ("pybool", "bool")


def _kind_of(value: Any) -> _Kind:
    val = value.val if hasattr(value, "kind") else value
    return _Kind(stand_in(val) if not isinstance(val, (int, float)) or isinstance(val, bool)
                 else val)


class _Printer:
    """Prints one top-level body (with its inner loops) as a C++ function."""

    def __init__(self, body: LoopBody, fname: str) -> None:
        self.body = body
        self.fname = fname
        self.lines: list[str] = []
        self.names: dict[Any, str] = {}
        self.count = 0
        self.arrays: dict[Any, tuple] = {}   # node -> (data ptr name, ndim, dims, strides, dtype)

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
        if src.name == "pyint" and dst.is_int and not dst.py:
            self.check(f"!kiln_int_fits<{dst.ctype}>({expr})")
        if src.is_float and dst.is_int:
            self.check(f"!kiln_fits<{dst.ctype}>((double)({expr}))")
        if dst.is_bool:
            return f"(({expr}) != 0)"
        return f"(({dst.ctype})({expr}))"

    def check(self, cond: str) -> None:
        self.emit(f"if ({cond}) KILN_FAIL({FAIL});", self.depth)

    # -- the function ----------------------------------------------------------------------
    def function(self) -> str:
        graph = self.body.graph
        phs = graph.placeholders
        self.depth = 1
        arrays = [p for p in phs[1:] if _is_array(p)]
        scalars = [p for p in phs[1:] if not _is_array(p)]
        pos = 0
        for k, p in enumerate(arrays):
            self._bind_array(p, f"bufs[{k}]", f"layout + {pos}")
            pos += 2 * len(p.val.shape)
        for k, p in enumerate(scalars):
            kind = _kind_of(p)
            name = self.fresh("s")
            self.emit(f"{kind.ctype} {name}; std::memcpy(&{name}, &slots[{k}], sizeof({name}));", 1)
            self.names[p] = name
        i = self.fresh("i")
        self.emit(f"for (int64_t {i} = start; step > 0 ? {i} < stop : {i} > stop; {i} += step) {{", 1)
        self.names[phs[0]] = i
        carried = phs[1:1 + self.body.n_carried]
        self._body(graph, carried, 2)
        self.emit("}", 1)
        for k, p in enumerate(scalars[:sum(1 for c in carried if not _is_array(c))]):
            self.emit(f"std::memcpy(&slots[{k}], &{self.names[p]}, sizeof({self.names[p]}));", 1)
        self.emit("return 0;", 1)
        sig = (f'extern "C" int64_t {self.fname}(int64_t start, int64_t stop, int64_t step, '
               f'char** bufs, const int64_t* layout, int64_t* slots)')
        where = self.body.where
        return f"// loop at {where}\n{sig} {{\n" + "\n".join(self.lines) + "\n}\n"

    def _bind_array(self, p: Any, data: str, layout: str) -> None:
        ndim = len(p.val.shape)
        dtype = np.dtype(p.val.dtype)
        if dtype.name not in CTYPES:
            raise Unnative(f"an array of {dtype}")
        name = self.fresh("a")
        self.emit(f"{CTYPES[dtype.name]}* {name} = ({CTYPES[dtype.name]}*){data};", 1)
        self.emit(f"const int64_t* {name}_l = {layout};", 1)
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
            idx = self.fresh("x")
            kind = _kind_of(entry)
            if kind.is_bool or not kind.is_int:
                raise Unnative("a non-integer index")
            if kind.name == "uint64":
                self.check(f"{self.ref(entry)} > (uint64_t)INT64_MAX")
            self.emit(f"int64_t {idx} = (int64_t){self.ref(entry)};", self.depth)
            self.emit(f"if ({idx} < 0) {idx} += {name}_l[{axis}];", self.depth)
            self.check(f"{idx} < 0 || {idx} >= {name}_l[{axis}]")
            parts.append(f"{idx} * {name}_l[{ndim + axis}]")
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
        if src.py and src.name == "pyint" and target.is_int:
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
        if not hasattr(self, "_inner"):
            self._inner = {}
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
        b = [self.ref(v, _Kind(1)) for v in (start, stop, step)]
        self.emit(f"for (int64_t {i} = {b[0]}; {b[2]} > 0 ? {i} < {b[1]} : {i} > {b[1]}; {i} += {b[2]}) {{",
                  depth)
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
        expr = _scalar_expr(self, fn, args, kinds, out)
        name = self.fresh("v")
        self.emit(f"{out.ctype} {name} = {expr};", depth)
        self.names[node] = name


def _is_array(p: Any) -> bool:
    from ..ops import TensorMeta
    return isinstance(p.val, TensorMeta)


_ARITH = {"add": "+", "sub": "-", "mul": "*"}
_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_BITS = {"and_": "&", "or_": "|", "xor": "^"}


def _common(kinds: list, args: tuple) -> _Kind:
    """The type NumPy computes a comparison in (weak Python scalars included)."""
    values = [k.example if not k.py else (args[i] if not hasattr(args[i], "kind") else k.example)
              for i, k in enumerate(kinds)]
    return _Kind(np.result_type(*values).type(1))


def _scalar_expr(pr: _Printer, fn: str, args: tuple, kinds: list, out: _Kind) -> str:
    """C expression for ``fn(*args)`` with the result kind ``out`` (NumPy/Python exact)."""
    py = all(k.py for k in kinds)
    if fn in _CMP:
        a, b = args
        if py:
            if any(k.name == "pyfloat" for k in kinds) and any(k.name == "pyint" for k in kinds):
                for x, k in zip(args, kinds):   # Python compares int and float exactly
                    if k.name == "pyint":
                        pr.check(f"{pr.ref(x)} > 9007199254740992LL || {pr.ref(x)} < -9007199254740992LL")
                want = _Kind(1.0)
            elif all(k.is_bool for k in kinds):
                want = _Kind(True)
            elif any(k.name == "pyfloat" for k in kinds):
                want = _Kind(1.0)
            else:
                want = _Kind(1)
        else:
            want = _common(kinds, args)
            if want.is_int and any(k.name == "pyint" for k in kinds):
                # NumPy compares an integer with any Python int by value (no cast)
                ea, eb = (f"((__int128){pr.ref(x)})" for x in args)
                return f"({ea} {_CMP[fn]} {eb})"
        return f"({pr.ref(a, want)} {_CMP[fn]} {pr.ref(b, want)})"
    if fn == "select":
        c, a, b = args
        return f"(({pr.ref(c)}) != 0 ? {pr.ref(a, out)} : {pr.ref(b, out)})"
    if fn in ("min", "max"):   # Python keeps the first of equal (or unordered) values
        op = "<" if fn == "min" else ">"
        best = pr.fresh("m")
        pr.emit(f"{out.ctype} {best} = {pr.ref(args[0], out)};", pr.depth)
        for x in args[1:]:
            e = pr.ref(x, out)
            pr.emit(f"if (({e}) {op} {best}) {best} = {e};", pr.depth)
        return best
    if fn in ("int", "float", "bool") or fn.startswith("np.") and fn[3:] in CTYPES:
        (a,) = args
        src = kinds[0]
        e = pr.ref(a)
        if fn == "int" and src.name == "uint64":
            pr.check(f"{e} > (uint64_t)INT64_MAX")
        if fn.startswith("np.") and src.name == "pyint" and out.is_int:
            pr.check(f"!kiln_int_fits<{out.ctype}>({e})")
        if src.is_float and out.is_int:
            pr.check(f"!kiln_fits<{out.ctype}>((double)({e}))")
        if out.is_bool:
            return f"(({e}) != 0)"
        return f"(({out.ctype})({e}))"
    if py:
        return _python_expr(pr, fn, args, kinds, out)
    return _numpy_expr(pr, fn, args, kinds, out)


def _python_expr(pr: _Printer, fn: str, args: tuple, kinds: list, out: _Kind) -> str:
    """Python semantics on Python scalars: ints never wrap, errors rerun as Python."""
    if out.name == "pyint":
        e = [pr.ref(a, out) for a in args]
        if fn in ("add", "sub", "mul"):
            name = pr.fresh("p")
            pr.emit(f"int64_t {name};", pr.depth)
            pr.check(f"__builtin_{fn}_overflow({e[0]}, {e[1]}, &{name})")
            return name
        if fn in ("floordiv", "mod"):
            pr.check(f"{e[1]} == 0 || ({e[0]} == INT64_MIN && {e[1]} == -1)")
            return f"kiln_i{'floordiv' if fn == 'floordiv' else 'mod'}<int64_t>({e[0]}, {e[1]})"
        if fn in _BITS:
            return f"({e[0]} {_BITS[fn]} {e[1]})"
        if fn == "lshift":
            pr.check(f"{e[1]} < 0 || {e[1]} >= 63 || ((({e[0]}) << {e[1]}) >> {e[1]}) != ({e[0]})")
            return f"(({e[0]}) << {e[1]})"
        if fn == "rshift":
            pr.check(f"{e[1]} < 0")
            return f"({e[1]} >= 63 ? (({e[0]}) < 0 ? -1 : 0) : (({e[0]}) >> {e[1]}))"
        if fn in ("neg", "abs"):
            pr.check(f"{e[0]} == INT64_MIN")
            return f"(-{e[0]})" if fn == "neg" else f"({e[0]} < 0 ? -{e[0]} : {e[0]})"
        if fn == "pos":
            return e[0]
        if fn == "invert":
            return f"(~{e[0]})"
        if fn == "pow":
            pr.check(f"{e[1]} < 0")
            name = pr.fresh("p")
            pr.emit(f"int64_t {name} = 1;", pr.depth)
            pr.emit(f"for (int64_t k = 0; k < {e[1]}; ++k) if (__builtin_mul_overflow({name}, {e[0]}, &{name})) "
                    f"KILN_FAIL({FAIL});", pr.depth)
            return name
    if out.name == "pyfloat":
        e = [pr.ref(a, out) for a in args]
        for a, k in zip(args, kinds):   # int -> float is exact below 2**53 (Python rounds too)
            pass
        if fn in _ARITH:
            return f"({e[0]} {_ARITH[fn]} {e[1]})"
        if fn == "truediv":
            if all(k.name == "pyint" for k in kinds):
                raw = [pr.ref(a) for a in args]
                pr.check(" || ".join(f"{r} > 9007199254740992LL || {r} < -9007199254740992LL" for r in raw))
            pr.check(f"{e[1]} == 0.0")
            return f"({e[0]} / {e[1]})"
        if fn in ("floordiv", "mod"):
            pr.check(f"{e[1]} == 0.0")
            return f"kiln_{fn}_f64({e[0]}, {e[1]})"
        if fn == "neg":
            return f"(-{e[0]})"
        if fn == "pos":
            return e[0]
        if fn == "abs":
            return f"std::fabs({e[0]})"
        if fn == "pow":
            name = pr.fresh("p")
            pr.emit(f"double {name} = std::pow({e[0]}, {e[1]});", pr.depth)
            # Python raises (or goes complex) where C gives inf/nan or divides by zero
            pr.check(f"({e[0]} == 0.0 && {e[1]} < 0) || ({e[0]} < 0 && {e[1]} != std::floor({e[1]})) || "
                     f"(std::isinf({name}) && std::isfinite({e[0]}) && std::isfinite({e[1]}))")
            return name
        if fn == "math.sqrt":
            pr.check(f"{e[0]} < 0")
            return f"std::sqrt({e[0]})"
    if out.name == "pybool":
        e = [pr.ref(a, out) for a in args]
        if fn in _BITS:
            return f"({e[0]} {_BITS[fn]} {e[1]})"
    raise Unnative(f"Python {fn} giving {out.name}")


def _numpy_expr(pr: _Printer, fn: str, args: tuple, kinds: list, out: _Kind) -> str:
    """NumPy scalar semantics: computed in the result type ``out``."""
    e = [pr.ref(a, out) for a in args]
    t = out.ctype
    if out.is_bool:
        table = {"add": "||", "mul": "&&", "and_": "&&", "or_": "||", "xor": "!=",
                 "maximum": "||", "minimum": "&&", "fmax": "||", "fmin": "&&"}
        if fn in table:
            return f"({e[0]} {table[fn]} {e[1]})"
        if fn in ("abs", "absolute", "pos"):
            return e[0]
        if fn == "invert":
            return f"(!{e[0]})"
        raise Unnative(f"NumPy {fn} on bools")
    if out.is_int:
        if fn in ("add", "sub", "mul"):
            return f"kiln_wrap_{fn}<{t}>({e[0]}, {e[1]})"
        if fn == "floordiv":
            return f"kiln_ifloordiv<{t}>({e[0]}, {e[1]})"
        if fn == "mod":
            return f"kiln_imod<{t}>({e[0]}, {e[1]})"
        if fn in _BITS:
            return f"(({t})({e[0]} {_BITS[fn]} {e[1]}))"
        if fn == "lshift":
            return f"kiln_lshift<{t}>({e[0]}, {e[1]})"
        if fn == "rshift":
            return f"kiln_rshift<{t}>({e[0]}, {e[1]})"
        if fn == "neg":
            return f"kiln_wrap_neg<{t}>({e[0]})"
        if fn == "pos":
            return e[0]
        if fn == "invert":
            return f"(({t})~{e[0]})"
        if fn in ("abs", "np.absolute"):
            return f"({e[0]} < 0 ? kiln_wrap_neg<{t}>({e[0]}) : {e[0]})"
        if fn == "pow":
            pr.check(f"{e[1]} < 0")
            return f"kiln_ipow<{t}>({e[0]}, {e[1]})"
        if fn in ("np.maximum", "np.fmax"):
            return f"({e[0]} >= {e[1]} ? {e[0]} : {e[1]})"
        if fn in ("np.minimum", "np.fmin"):
            return f"({e[0]} <= {e[1]} ? {e[0]} : {e[1]})"
        if fn in ("np.floor", "np.ceil"):
            return e[0]
        raise Unnative(f"NumPy {fn} on {out.name}")
    if out.is_float:
        f32 = out.name == "float32"
        suffix = "f32" if f32 else "f64"
        if fn in _ARITH:
            return f"(({t})({e[0]} {_ARITH[fn]} {e[1]}))"
        if fn == "truediv":
            return f"(({t})({e[0]} / {e[1]}))"
        if fn in ("floordiv", "mod"):
            return f"kiln_{fn}_{suffix}({e[0]}, {e[1]})"
        if fn == "neg":
            return f"(-{e[0]})"
        if fn == "pos":
            return e[0]
        if fn in ("abs", "np.absolute"):
            return f"std::fabs({e[0]})"
        if fn == "pow":
            return f"(({t})std::pow({e[0]}, {e[1]}))"
        if fn == "np.sqrt":
            return f"std::sqrt({e[0]})"
        if fn == "np.floor":
            return f"std::floor({e[0]})"
        if fn == "np.ceil":
            return f"std::ceil({e[0]})"
        if fn == "np.maximum":
            return f"(({e[0]} >= {e[1]} || {e[0]} != {e[0]}) ? {e[0]} : {e[1]})"
        if fn == "np.minimum":
            return f"(({e[0]} <= {e[1]} || {e[0]} != {e[0]}) ? {e[0]} : {e[1]})"
        if fn == "np.fmax":
            return f"std::fmax({e[0]}, {e[1]})"
        if fn == "np.fmin":
            return f"std::fmin({e[0]}, {e[1]})"
    raise Unnative(f"NumPy {fn} giving {out.name}")


def render_body(body: LoopBody) -> tuple[str, str]:
    """``(C++ source, function name)`` of a top-level loop body."""
    probe = _Printer(body, "kiln_loop")
    text = probe.function()
    fname = "kiln_loop_" + hashlib.sha256(text.encode()).hexdigest()[:12]
    return PRELUDE + "\n" + text.replace("kiln_loop(", f"{fname}(", 1), fname


CDEF = ("int64_t {name}(int64_t start, int64_t stop, int64_t step, char** bufs, "
        "const int64_t* layout, int64_t* slots);")


def native_runner(body: LoopBody) -> Any:
    """Build the body; returns ``native(start, stop, step, carried, operands)`` (None when
    the reference must run: an error, or arrays the build cannot address)."""
    from ..runtime.build import build
    from ..runtime.loader import load_library
    source, fname = render_body(body)
    so = build(source, "loop")
    lib, ffi = load_library(so, CDEF.format(name=fname))
    fn = getattr(lib, fname)
    phs = body.graph.placeholders[1:]
    is_array = [_is_array(p) for p in phs]
    kinds = [None if a else _kind_of(p) for p, a in zip(phs, is_array)]
    dtypes = [np.dtype(p.val.dtype) if a else None for p, a in zip(phs, is_array)]
    slot_dtypes = [None if k is None else (np.dtype(k.name) if not k.py else
                   np.dtype({"pyint": "int64", "pyfloat": "float64", "pybool": "bool"}[k.name]))
                   for k in kinds]
    n_carried = body.n_carried

    def native(start: int, stop: int, step: int, carried: tuple, operands: tuple) -> Any:
        values = tuple(carried) + tuple(operands)
        arrays, layout, slots_in = [], [], []
        for v, a, dt, k in zip(values, is_array, dtypes, kinds):
            if a:
                if not isinstance(v, np.ndarray) or v.dtype != dt or any(s % v.itemsize for s in v.strides):
                    return None
                arrays.append(v)
                layout.extend(v.shape)
                layout.extend(s // v.itemsize for s in v.strides)
            else:
                slots_in.append(v)
        slots = np.zeros(max(len(slots_in), 1), np.int64)
        sdt = [d for d in slot_dtypes if d is not None]
        try:
            for j, (v, d) in enumerate(zip(slots_in, sdt)):
                if d.kind in "iu" and not isinstance(v, (int, np.integer)) or \
                        d.kind == "f" and not isinstance(v, (float, np.floating)) or \
                        d.kind == "b" and not isinstance(v, (bool, np.bool_)):
                    return None
                slots[j:j + 1].view(d)[0] = v
            bufs = ffi.new("char*[]", [ffi.cast("char*", x.ctypes.data) for x in arrays] or [ffi.NULL])
            lay = ffi.new("int64_t[]", [int(x) for x in layout] or [0])
            rc = fn(start, stop, step, bufs, lay, ffi.cast("int64_t*", slots.ctypes.data))
        except (OverflowError, TypeError):
            return None
        if rc != 0:
            return None
        out = []
        j = 0
        ai = 0
        for idx in range(n_carried):
            if is_array[idx]:
                out.append(values[idx])
            else:
                raw = slots[j:j + 1].view(sdt[j])[0]
                k = kinds[idx]
                out.append(raw.item() if k.py else raw)
                j += 1
        return tuple(out)

    return native


def prepare_loops(graph: Any) -> None:
    """Give every loop node of ``graph`` its C++ runner (bodies the printer cannot print,
    or a failed build, keep the reference interpreter)."""
    from ..runtime.build import BuildError, CompilerUnavailable
    for node in graph.nodes:
        body = node.kwargs.get("body") if node.kind == "call" else None
        if not isinstance(body, LoopBody) or body.native is not None:
            continue
        try:
            body.native = native_runner(body)
        except (Unnative, BuildError, CompilerUnavailable):
            body.native = None
        except Exception:   # a printer bug must not cost the user a result
            from ..config import config
            if config.debug_checks:
                raise
            body.native = None
