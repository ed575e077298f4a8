"""Scalar semantics of loop bodies in C++: types and one C expression per scalar function
(kiln/ops/loops.py ``SCALAR_FUNCTIONS``); the helpers they call are in loop_prelude.py.

NumPy scalars compute in their own type (integers wrap, float32 rounds as float32);
Python ints are int64 with overflow checks, Python floats doubles. Where Python or NumPy
would raise, or a value leaves those ranges, the printer emits a check (``pr.check``):
the compiled loop returns non-zero and the reference reruns it (kiln/lowering/loops.py).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops.fp_errors import DIVIDE, KINDS, OVER, fp_kinds
from ..ops.loops import LIBM_MATH, SCALAR_MATH, stand_in
from .loop_bounds import chain_last

CTYPES = {"bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
          "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
          "uint64": "uint64_t", "float32": "float", "float64": "double"}
# Python scalars in C: ints are checked int64, floats double.
PY_KINDS = {int: "pyint", float: "pyfloat", bool: "pybool"}


# Return codes (any non-zero one reruns the loop in the reference interpreter, but FP_RAISED
# | kinds where NumPy would warn of none of them: loop_runner.py).
FAIL = 1
FP_RAISED = 16
# A loop function's word of what its integer scalar math raised (kiln_over_*)
INT_FLAGS = "kiln_iflags"


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

    @property
    def is_signed(self) -> bool:
        return self.name == "pyint" or (not self.py and np.dtype(self.name).kind == "i")


def _kind_of(value: Any) -> _Kind:
    val = value.val if hasattr(value, "kind") else value
    return _Kind(stand_in(val) if not isinstance(val, (int, float)) or isinstance(val, bool)
                 else val)


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


def _exact_literal(x: Any) -> bool:
    """A Python int literal that a double holds exactly (``v > 0``: no run-time check, so
    a loop comparing Python floats with small constants keeps a check-free fast variant,
    which may write its result in place)."""
    return not hasattr(x, "kind") and type(x) is int and -2 ** 53 <= x <= 2 ** 53


def _scalar_expr(pr: Any, fn: str, args: tuple, kinds: list, out: _Kind) -> str:
    """C expression for ``fn(*args)`` with the result kind ``out`` (NumPy/Python exact)."""
    py = all(k.py for k in kinds)
    if fn in _CMP:
        a, b = args
        if py:
            if any(k.name == "pyfloat" for k in kinds) and any(k.name == "pyint" for k in kinds):
                for x, k in zip(args, kinds):   # Python compares int and float exactly
                    if k.name == "pyint" and not _exact_literal(x):
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
        cond, ea, eb = f"(({pr.ref(c)}) != 0)", pr.ref(a, out), pr.ref(b, out)
        if out.is_bool and (a is True or a is False) and b is (not a):
            return cond if a else f"(!{cond})"
        if out.is_bool and not pr.breaks and (a is True or b is False):
            # bit operations: GCC branches on `c ? true : x` (Smith-Waterman's test which
            # max() argument won, a data-dependent branch); a body that breaks keeps the
            # `?:`, which GCC threads through its break test (first_above)
            return f"((bool)({cond} | ({eb})))" if a is True else f"((bool)({cond} & ({ea})))"
        if pr.breaks:   # (a test of neutral odds: GCC's phiopt turns `j >= 0 ? j : 0` into a
            # max, past which it no longer threads the select through the break test that
            # reads the same condition: insertion sort's clamped index, 64 -> 37 us)
            cond = f"__builtin_expect_with_probability({cond}, 1, 0.5)"
        return f"({cond} ? {ea} : {eb})"
    if fn in ("min", "max"):   # Python keeps the first of equal (or unordered) values
        op = "<" if fn == "min" else ">"
        settled = 0
        if out.is_int and len(args) > 2:   # (integers: any order gives the same value)
            args, settled = chain_last(pr, args)
        best = pr.fresh("m")
        pr.emit(f"{out.ctype} {best} = {pr.ref(args[0], out)};", pr.depth)
        for k, x in enumerate(args[1:], 1):
            if k == settled and settled > 1:
                pr.emit(f"KILN_SETTLED({best});", pr.depth)
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
        if out.name == "float32" and src.name in ("float64", "pyfloat"):
            pr.warns("overflow", "cast")
            pr.fp_flags |= OVER
        if out.is_bool:
            return f"(({e}) != 0)"
        return f"(({out.ctype})({e}))"
    if py or fn in SCALAR_MATH:   # (math's functions take any real number as a float)
        return _python_expr(pr, fn, args, kinds, out)
    return _numpy_expr(pr, fn, args, kinds, out)


def _python_expr(pr: Any, fn: str, args: tuple, kinds: list, out: _Kind) -> str:
    """Python semantics on Python scalars: ints never wrap, errors rerun as Python."""
    if out.name == "pyint":
        e = [pr.ref(a, out) for a in args]
        if fn in ("add", "sub", "mul"):
            if pr.unchecked_int():   # affine: the entry test bounds it (loop_bounds.py)
                return f"({e[0]} {_ARITH[fn]} {e[1]})"
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
                raw = [pr.ref(a) for a in args if not _exact_literal(a)]
                if raw:
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
            return f"kiln_fabs({e[0]})"
        if fn == "pow":
            name = pr.fresh("p")
            pr.emit(f"double {name} = kiln_pow({e[0]}, {e[1]});", pr.depth)
            # Python raises (or goes complex) where C gives inf/nan or divides by zero
            pr.check(f"({e[0]} == 0.0 && {e[1]} < 0) || ({e[0]} < 0 && {e[1]} != kiln_floor({e[1]})) || "
                     f"(__builtin_isinf({name}) && __builtin_isfinite({e[0]}) && __builtin_isfinite({e[1]}))")
            return name
        if fn == "math.sqrt":
            pr.check(f"{e[0]} < 0")
            return f"kiln_sqrt({e[0]})"
        if fn == "math.fabs":
            return f"kiln_fabs({e[0]})"
        if fn in LIBM_MATH:   # Python's math_1: libm's value, an error where it is NaN or inf
            name = pr.fresh("p")
            pr.emit(f"double {name} = kiln_libm_{fn[5:]}({e[0]});", pr.depth)
            pr.check(f"(__builtin_isnan({name}) && !__builtin_isnan({e[0]})) || "
                     f"(__builtin_isinf({name}) && __builtin_isfinite({e[0]}))")
            return name
    if out.name == "pybool":
        e = [pr.ref(a, out) for a in args]
        if fn in _BITS:
            return f"({e[0]} {_BITS[fn]} {e[1]})"
    raise Unnative(f"Python {fn} giving {out.name}")


def _low_bit_mask(value: Any, out: _Kind) -> Any:
    """``b & 1`` when ``value`` is the all-ones-or-zero mask ``0 - (b & 1)`` (or
    ``-(b & 1)``) computed in ``out``'s integer type, else None. ``x & mask`` is then a
    select on b's low bit: C compilers keep the select off the carried chain (a bit loop
    of a CRC: 3 dependent instructions a step instead of 4, crcB in benchmarks/loops.py's
    notes), where ``and; neg; and`` must run in order."""
    if not (hasattr(value, "kind") and value.kind == "call" and value.target.name == "scalar_fn"
            and _kind_of(value).name == out.name):
        return None
    fn, args = value.kwargs["fn"], value.args[0]
    if fn == "sub" and not hasattr(args[0], "kind") and args[0] == 0:
        bit = args[1]
    elif fn == "neg":
        bit = args[0]
    else:
        return None
    if not (hasattr(bit, "kind") and bit.kind == "call" and bit.target.name == "scalar_fn" and bit.kwargs["fn"] == "and_"
            and _kind_of(bit).is_int and not _kind_of(bit).py):
        return None
    a, b = bit.args[0]
    if not hasattr(b, "kind") and b == 1:
        return bit
    if not hasattr(a, "kind") and a == 1:
        return bit
    return None


# NumPy's ufuncs of the scalar operations that may warn: its name in the message ("...
# encountered in scalar <name>"); ops/fp_errors.py says which kinds a float one raises
_UFUNC_NAMES = {"add": "add", "sub": "subtract", "mul": "multiply", "neg": "negative",
                "truediv": "true_divide", "floordiv": "floor_divide", "mod": "remainder",
                "pow": "power", "np.sqrt": "sqrt"}


def _float_warns(pr: Any, fn: str, args: tuple, kinds: list, f32: bool) -> None:
    """Note where NumPy's float scalar math may warn ("overflow encountered in scalar
    multiply"; "... in cast" where a Python float enters a float32 operation). A native
    run reads the floating-point flags its body raised and runs the loop again as the
    reference where they may be such a warning (loop_runner.py)."""
    if f32 and any(k.name == "pyfloat" for k in kinds):
        pr.warns("overflow", "cast")
        pr.fp_flags |= OVER
    if fn not in _UFUNC_NAMES or fn == "neg":   # (a float negation never warns)
        return
    consts = tuple(None if hasattr(a, "kind") else a for a in args)
    said, name = fp_kinds(_UFUNC_NAMES[fn], "f", consts, scalar=fn != "np.sqrt")
    for bit, _key, text in KINDS:
        if said & bit:
            pr.note(f"{text} encountered in {name}")
            pr.fp_flags |= bit


def _numpy_expr(pr: Any, fn: str, args: tuple, kinds: list, out: _Kind) -> str:
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
        # NumPy's scalar math warns (raises, calls, logs: np.errstate) where an integer
        # wraps or divides by zero, the ufuncs do not: the body notes the places
        # (loops.py ``warns``) and runs as Python where NumPy would raise, call or log
        # (``LoopBody.trapped``). A native run ORs what happened into a flag word raised
        # as floating-point flags at the end (``kiln_over_*``), so where NumPy warns the
        # entry hands back FP_RAISED | kinds and the reference runs for the warnings
        # (loop_runner.py), as for float bodies. (A branch per op cost edit distance
        # 2-3x, its loop bound by instruction throughput, and crc32 1.2x.)
        if fn in ("add", "sub", "mul", "neg") or fn == "abs" and out.is_signed:
            pr.warns("overflow", _UFUNC_NAMES.get(fn, "absolute"))
            pr.int_flags |= OVER
        if fn in ("floordiv", "mod"):
            pr.warns("divide by zero", _UFUNC_NAMES[fn])
            pr.int_flags |= DIVIDE
            if fn == "floordiv" and out.is_signed:
                pr.warns("overflow", "floor_divide")
                pr.int_flags |= OVER
        if fn in ("add", "sub", "mul", "floordiv", "mod"):
            return f"kiln_over_{fn}<{t}>({e[0]}, {e[1]}, {INT_FLAGS})"
        if fn == "and_":
            for x, m in (args, args[::-1]):
                bit = _low_bit_mask(m, out)
                if bit is not None:   # ``x & -(b & 1)``: b's low bit selects x or 0
                    return f"(({pr.ref(bit)} & 1) ? {pr.ref(x, out)} : ({t})0)"
        if fn in _BITS:
            return f"(({t})({e[0]} {_BITS[fn]} {e[1]}))"
        if fn == "lshift":
            return f"kiln_lshift<{t}>({e[0]}, {e[1]})"
        if fn == "rshift":
            return f"kiln_rshift<{t}>({e[0]}, {e[1]})"
        if fn == "neg":
            return f"kiln_over_neg<{t}>({e[0]}, {INT_FLAGS})"
        if fn == "pos":
            return e[0]
        if fn == "invert":
            return f"(({t})~{e[0]})"
        if fn == "abs" and out.is_signed:
            return f"kiln_over_abs<{t}>({e[0]}, {INT_FLAGS})"
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
        _float_warns(pr, fn, args, kinds, f32)
        if fn in _ARITH:
            return f"(({t})({e[0]} {_ARITH[fn]} {e[1]}))"
        if fn == "truediv":
            return f"(({t})({e[0]} / {e[1]}))"
        if fn in ("floordiv", "mod"):   # (npy_divmod's fmod: loop_prelude.py)
            return f"kiln_{fn}_{'f32' if f32 else 'npf64'}({e[0]}, {e[1]})"
        if fn == "neg":
            return f"(-{e[0]})"
        if fn == "pos":
            return e[0]
        if fn in ("abs", "np.absolute"):
            return f"kiln_fabs({e[0]})"
        if fn == "pow":
            return f"(({t})kiln_pow({e[0]}, {e[1]}))"
        if fn == "np.sqrt":
            return f"kiln_sqrt({e[0]})"
        if fn == "np.floor":
            return f"kiln_floor({e[0]})"
        if fn == "np.ceil":
            return f"kiln_ceil({e[0]})"
        if fn == "np.maximum":   # ties give the second operand, as NumPy's x86 loops
            return f"(({e[0]} > {e[1]} || {e[0]} != {e[0]}) ? {e[0]} : {e[1]})"
        if fn == "np.minimum":
            return f"(({e[0]} < {e[1]} || {e[0]} != {e[0]}) ? {e[0]} : {e[1]})"
        if fn == "np.fmax":
            return f"kiln_fmax({e[0]}, {e[1]})"
        if fn == "np.fmin":
            return f"kiln_fmin({e[0]}, {e[1]})"
    raise Unnative(f"NumPy {fn} giving {out.name}")
