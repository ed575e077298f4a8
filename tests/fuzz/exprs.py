"""Expressions for the program fuzzer: NumPy expressions over the names a program has so
far, each candidate evaluated with NumPy on every run (see programs.Gen.eval) and kept
only when it is valid on all of them.

An expression's source is *atomic* when it can take an attribute or a subscript as is
(a name, a call, a subscript, a parenthesized expression); other sources are
parenthesized where they become operands.
"""
from __future__ import annotations

import numpy as np

from .programs import Expr
from .repeats import POWER_CONDITION

UNARY_FLOAT = ["np.exp", "np.sqrt", "np.sin", "np.cos", "np.tanh", "np.log", "np.floor", "np.ceil",
               "np.rint", "np.arctan", "np.log1p", "np.expm1", "np.reciprocal"]
UNARY_ANY = ["np.abs", "np.negative", "np.square", "np.sign", "np.positive", "np.isnan",
             "np.isfinite", "np.logical_not"]
BINARY_OPS = ["+", "-", "*", "/", "//", "%", "**", "<", "<=", ">", ">=", "==", "!=", "&", "|", "^"]
BINARY_FUNCS = ["np.maximum", "np.minimum", "np.add", "np.subtract", "np.multiply", "np.true_divide",
                "np.fmax", "np.fmin", "np.arctan2", "np.hypot", "np.logical_and", "np.logical_or",
                "np.copysign", "np.greater", "np.equal"]
REDUCTIONS = ["sum", "max", "min", "mean", "prod", "any", "all", "argmax", "argmin", "std", "var",
              "cumsum", "cumprod"]


# Two things NumPy leaves unspecified and itself answers by path, so the fuzzer draws
# neither (docs/fuzzing.md, "Unspecified by NumPy"):
# - which of two equal zeros of different sign a min/max-style op returns:
#   np.fmax(0.0, -0.0) is 0.0, np.fmax(np.zeros(20), -np.zeros(20)) is -0.0 (SIMD);
# - the sign of a NaN a min/max reduction returns: a contiguous x.max() over a -NaN gives
#   +NaN, x.max(axis=0) the input -NaN; np.copysign is what shows it.
MIN_MAX = ("np.maximum", "np.minimum", "np.fmax", "np.fmin")


def ill_conditioned(fn: str, xs: list, repeats: int = 1) -> bool:
    """Whether ``fn`` of some run's float32 (or float16) values, applied ``repeats``
    times (``np.exp(v, out=v)`` in a loop body), amplifies a last-bit difference beyond
    the fuzzer's tolerances: exp's condition number is |x|, so a 1-ulp difference in
    ``x = 81`` (``np.exp`` applied three times) is 81 ulps in ``exp(x)``, and NumPy's and
    the C library's float32 exp may differ in the last bit."""
    if fn not in ("np.exp", "np.expm1"):
        return False
    for x in xs:
        x = np.asarray(x)
        if x.dtype.kind != "f" or x.dtype.itemsize >= 8:
            continue
        for _ in range(repeats):
            finite = np.abs(x[np.isfinite(x)])
            if finite.size and finite.max() > 16:
                return True
            with np.errstate(all="ignore"):
                x = np.exp(x)
    return False


def power_condition(x, y) -> float:
    """The largest factor by which ``x ** y`` (float32 or float16 operands) amplifies a
    last-bit difference in either operand; 0 for float64 and exact cases (a base of 0)."""
    x, y = np.asarray(x), np.asarray(y)
    if not (x.dtype.kind == "f" and x.dtype.itemsize < 8 or y.dtype.kind == "f" and y.dtype.itemsize < 8):
        return 0.0
    with np.errstate(all="ignore"):
        try:
            base, exp = np.broadcast_arrays(np.abs(x.astype(np.float64)), y.astype(np.float64))
        except ValueError:
            return 0.0
        cond = np.abs(exp) * np.maximum(1.0, np.abs(np.log(base)))
        keep = np.isfinite(cond) & (base != 0) & np.isfinite(base ** exp)
    return float(cond[keep].max()) if keep.any() else 0.0


def ill_conditioned_power(xs: list, ys: list) -> bool:
    """Whether ``x ** y`` on some run amplifies a last-bit difference beyond
    :data:`POWER_CONDITION` (the line exp's check draws, :func:`ill_conditioned`)."""
    return any(power_condition(x, y) > POWER_CONDITION for x, y in zip(xs, ys))


def shares_memory(xs: list, ys: list) -> bool:
    """Whether on some run ``x`` and ``y`` share memory. NumPy 2.4's boolean-mask assignment
    does not buffer an overlapping value: ``x[x > 0] = np.flip(x, 0)`` of ``[15, 62]`` gives
    ``[62, 62]`` (element by element, reading what it already wrote), where a slice or an
    integer-array assignment gives ``[62, 15]`` (seed 35111; numpy/numpy#26844 is the
    integer-index case, fixed)."""
    return any(isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and np.shares_memory(x, y)
               for x, y in zip(xs, ys))


def strided_both(xs: list, outs: list) -> bool:
    """Whether on some run both the input and the ``out=`` of a unary ufunc are strided.
    NumPy 2.4's SIMD ``np.negative`` writes such an output wrongly on x86 (an element
    stride of 4 for 4-byte items, 8 for 8-byte ones: ``x = np.arange(1., 33)[::8];
    np.negative(x, out=x)`` gives [-1, -2, -3, -4]), so the fuzzer does not draw it."""
    return any(isinstance(x, np.ndarray) and isinstance(o, np.ndarray) and x.ndim and o.ndim
               and not x.flags.c_contiguous and not o.flags.c_contiguous
               for x, o in zip(xs, outs))


def _floats(v) -> np.ndarray:
    """``v`` as floats; a complex value's parts along a last axis of 2."""
    v = np.asarray(v)
    if v.dtype.kind == "c":
        return np.stack([v.real, v.imag], -1)
    return v if v.dtype.kind == "f" else v.astype(np.float64)


def zero_tie(xs: list, ys: list) -> bool:
    """Whether a min/max of ``x`` and ``y`` meets +0.0 against -0.0 on some run."""
    for x, y in zip(xs, ys):
        if np.iscomplexobj(x) or np.iscomplexobj(y):     # parts against parts
            x, y = (_floats(v) if np.iscomplexobj(v) else np.stack([_floats(v)] * 2, -1) for v in (x, y))
        else:
            x, y = _floats(x), _floats(y)
        try:
            x, y = np.broadcast_arrays(x, y)
        except ValueError:
            continue
        if ((x == 0) & (y == 0) & (np.signbit(x) != np.signbit(y))).any():
            return True
    return False


def mixed_zeros(xs: list) -> bool:
    """Whether some run's values hold both +0.0 and -0.0 (a min/max over them ties)."""
    for x in xs:
        x = _floats(x)
        zero = x == 0
        if (zero & np.signbit(x)).any() and (zero & ~np.signbit(x)).any():
            return True
    return False


def has_nan(xs: list) -> bool:
    return any(np.isnan(_floats(x)).any() for x in xs)


def atomic(src: str) -> bool:
    if src.isidentifier():
        return True
    if src[0] == "(" and src[-1] == ")":
        depth = 0
        for i, c in enumerate(src):
            depth += c == "("
            depth -= c == ")"
            if depth == 0 and i < len(src) - 1:
                break
        else:
            return True
    # a call or subscript chain: ends in ) or ] with balanced brackets and no top-level operator
    depth = 0
    for c in src:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and c in " +-*/%<>=&|^~@":
            return False
    return True


def paren(src: str) -> str:
    return src if atomic(src) else f"({src})"


def _scalar_literal(gen, kind: str) -> str:
    if kind == "b":
        return gen.pick(["True", "False"])
    if kind in "iu":
        return gen.pick(["2", "1", "3", "0", "-1", "np.int64(2)", "np.int32(3)", "np.uint8(2)"])
    return gen.pick(["2.0", "0.5", "1.5", "-1.0", "0.0", "-0.0", "np.float32(0.5)", "np.float64(2.5)",
                     "np.inf", "3"])


class ExprMixin:
    """Expression drawing for programs.Gen."""

    def expr(self, runs: list[dict], depth: int = 2, array: bool = False) -> Expr | None:
        for _ in range(3):
            e = self._expr_once(runs, depth)
            if e is not None and (not array or e.is_array):
                return e
        return None

    def leaf(self, runs: list[dict], array: bool = False) -> Expr | None:
        arrays = self.names(runs, lambda e: isinstance(e.v, np.ndarray) and e.ndim > 0)
        names = self.names(runs, lambda e: isinstance(e.v, np.ndarray) or
                           (not array and isinstance(e.v, (np.generic, int, float, bool))))
        if arrays and self.chance(0.75):
            return self.pick(arrays, "array name")
        if names and (array or self.chance(0.8)):
            return self.pick(names, "name")
        if array:
            return None
        return self.eval(_scalar_literal(self, self.pick(["f", "i", "b"])), runs)

    def _expr_once(self, runs: list[dict], depth: int) -> Expr | None:
        if depth <= 0 or self.chance(0.25):
            return self.leaf(runs)
        kind = self.pick_kind(["binary", "view", "reduce", "unary", "scalar_op", "cast", "where", "creator",
                          "join", "matmul", "index", "method", "pyscalar", "pyarith", "gather", "shape",
                          "reduce_more", "promote", "linalg", "numeric", "edge", "mixidx", "library", "ufunc_more"],
                               "expr kind")
        return getattr(self, "_e_" + kind)(runs, depth - 1)

    # -- pointwise -----------------------------------------------------------------------
    def _e_binary(self, runs, depth):
        a = self.expr(runs, depth)
        if a is None:
            return None
        b = self.partner(a, runs, depth)
        if b is None:
            return None
        if self.chance(0.7):
            op = self.pick(BINARY_OPS, "binop")
            if op == "**" and (a.kind in "iub" or b.kind in "iub"):
                b = self.eval(self.pick(["2", "3", "0"]), runs)
            if op == "**" and (b is None or ill_conditioned_power(a.vals, b.vals)):
                return None
            src = f"{paren(a.src)} {op} {paren(b.src)}"
        else:
            fn = self.pick(BINARY_FUNCS, "binfunc")
            if (fn in MIN_MAX and zero_tie(a.vals, b.vals)) or (fn == "np.copysign" and has_nan(b.vals)):
                return None
            src = f"{fn}({a.src}, {b.src})"
        return self.eval(src, runs)

    def _e_scalar_op(self, runs, depth):
        a = self.expr(runs, depth)
        if a is None:
            return None
        k = _scalar_literal(self, self.pick(["f", "i", "b"]) if self.chance(0.5) else a.kind)
        op = self.pick(["*", "+", "-", "/", ">", "**", "//", "%", "=="])
        if op == "**" and (a.kind in "iub" or "." not in k):
            k = "2"
        first = self.chance(0.7)
        if op == "**":
            kv = [np.asarray(eval(k, {"np": np}))] * len(a.vals)
            if ill_conditioned_power(*((a.vals, kv) if first else (kv, a.vals))):
                return None
        src = f"{paren(a.src)} {op} {k}" if first else f"{k} {op} {paren(a.src)}"
        return self.eval(src, runs)

    def _e_unary(self, runs, depth):
        a = self.expr(runs, depth)
        if a is None:
            return None
        if a.kind == "f" and self.chance(0.6):
            fn = self.pick(UNARY_FLOAT, "ufunc")
        else:
            fn = self.pick(UNARY_ANY + ["-", "~"], "ufunc")
        if ill_conditioned(fn, a.vals, repeats=5 if self.depth else 1):
            return None   # (in a loop body, ``v = np.exp(v)`` applies it again)
        if fn == "-":
            return self.eval(f"-{paren(a.src)}", runs)
        if fn == "~":
            return self.eval(f"~{paren(a.src)}", runs) if a.kind in "iub" else None
        return self.eval(f"{fn}({a.src})", runs)

    def partner(self, a: Expr, runs, depth) -> Expr | None:
        """A second operand for ``a``: usually one that broadcasts with it."""
        how = self.pick(["name", "scalar", "reduce_keep", "self", "expr"])
        if how == "scalar" or not a.is_array:
            if self.chance(0.5):
                return self.leaf(runs)
            return self.eval(_scalar_literal(self, self.pick(["f", "i", "b"])), runs)
        if how == "name":
            def fits(e):
                try:
                    for s1, s2 in zip(a.shapes, e.shapes):
                        np.broadcast_shapes(s1, s2)
                    return True
                except ValueError:
                    return False
            names = self.names(runs, lambda e: isinstance(e.v, np.ndarray) and fits(e))
            if names:
                return self.pick(names)
        if how == "reduce_keep" and a.ndim > 0:
            axis = self.pick(list(range(-a.ndim, a.ndim)))
            fn = self.pick(["sum", "max", "mean", "min"])
            if fn in ("max", "min") and mixed_zeros(a.vals):
                return None
            return self.eval(f"{paren(a.src)}.{fn}(axis={axis}, keepdims=True)", runs)
        if how == "self":
            return a
        return self.expr(runs, depth)

    # -- views ---------------------------------------------------------------------------
    def _e_view(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None:
            return None
        return self.view_of(a, runs)

    def view_of(self, a: Expr, runs) -> Expr | None:
        nd = a.ndim
        how = self.pick(["slice", "T", "reshape", "int", "newaxis", "transpose", "ravel", "swapaxes",
                         "squeeze", "expand", "broadcast", "ellipsis", "flip", "diagonal"], "view")
        s = paren(a.src)
        if how == "slice" and nd:
            parts = [self.slice_text(min(sh[i] for sh in a.shapes)) for i in range(self.pick(list(range(1, nd + 1))))]
            return self.eval(f"{s}[{', '.join(parts)}]", runs)
        if how == "T":
            return self.eval(f"{s}.T", runs)
        if how == "reshape":
            size = a.v.size
            shapes = [(-1,), (size,)]
            for d in range(1, size + 1):
                if size % d == 0:
                    shapes += [(d, -1), (-1, d), (d, size // d, 1), (1, d, size // d)]
            shp = self.pick(shapes, "reshape")
            arg = ", ".join(map(str, shp))
            return self.eval(f"{s}.reshape({arg})" if self.chance(0.6) else f"np.reshape({a.src}, ({arg},))", runs)
        if how == "int" and nd:
            i = self.pick([0, -1, 1, 2])
            return self.eval(f"{s}[{i}]" if self.chance(0.7) else f"{s}[:, {i}]", runs)
        if how == "newaxis":
            return self.eval(self.pick([f"{s}[None]", f"{s}[..., None]", f"{s}[:, np.newaxis]"]), runs)
        if how == "transpose" and nd >= 2:
            perm = list(range(nd))
            self.rng.shuffle(perm)
            return self.eval(f"{s}.transpose({', '.join(map(str, perm))})" if self.chance(0.5)
                             else f"np.transpose({a.src}, {tuple(perm)})", runs)
        if how == "ravel":
            return self.eval(self.pick([f"{s}.ravel()", f"{s}.flatten()", f"np.ravel({a.src})"]), runs)
        if how == "swapaxes" and nd >= 2:
            return self.eval(f"np.swapaxes({a.src}, 0, -1)", runs)
        if how == "squeeze":
            return self.eval(f"{s}.squeeze()" if self.chance(0.5) else f"np.squeeze({a.src})", runs)
        if how == "expand":
            return self.eval(f"np.expand_dims({a.src}, {self.pick([0, -1, 1])})", runs)
        if how == "broadcast" and all(sh == a.shapes[0] for sh in a.shapes):
            shp = (self.pick([2, 3]),) + a.shapes[0]
            return self.eval(f"np.broadcast_to({a.src}, {shp})", runs)
        if how == "ellipsis" and nd:
            return self.eval(f"{s}[..., {self.slice_text(min(sh[-1] for sh in a.shapes))}]", runs)
        if how == "flip" and nd:
            return self.eval(self.pick([f"np.flip({a.src}, 0)", f"np.flipud({a.src})", f"np.flip({a.src})"]), runs)
        if how == "diagonal" and nd >= 2:
            return self.eval(f"{s}.diagonal()", runs)
        return None

    def slice_text(self, n: int) -> str:
        step = self.pick([None, 2, -1, -2, 3, 1])
        start = self.pick([None, 1, 0, -1, n - 1, 2, -2]) if self.chance(0.6) else None
        stop = self.pick([None, -1, 1, n, 2, -2, 0]) if self.chance(0.5) else None
        text = f"{'' if start is None else start}:{'' if stop is None else stop}"
        if step is not None:
            text += f":{step}"
        return text

    # -- reductions ----------------------------------------------------------------------
    def _e_reduce(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None:
            return None
        fn = self.pick(REDUCTIONS, "reduction")
        if fn in ("max", "min") and mixed_zeros(a.vals):
            return None
        nd = a.ndim
        axis_opts = [None] + list(range(-nd, nd))
        if nd >= 2 and fn not in ("argmax", "argmin", "cumsum", "cumprod"):
            axis_opts += [(0, 1), (-1, 0)]
        axis = self.pick(axis_opts, "axis")
        args = [] if axis is None else [f"axis={axis}"]
        if fn not in ("cumsum", "cumprod") and self.chance(0.3):
            args.append("keepdims=True")
        if fn in ("std", "var") and self.chance(0.3):
            args.append("ddof=1")
        if fn in ("sum", "prod", "mean", "cumsum") and self.chance(0.15):
            args.append(f"dtype=np.{self.pick(['float64', 'int64', 'float32'])}")
        if self.chance(0.6):
            return self.eval(f"{paren(a.src)}.{fn}({', '.join(args)})", runs)
        return self.eval(f"np.{fn}({', '.join([a.src] + args)})", runs)

    # -- dtypes, selection, creation -----------------------------------------------------
    def _e_cast(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None:
            return None
        dt = self.pick_dtype(0.25)
        if a.kind in "fc" and np.dtype(dt).kind in "iu":
            info = np.iinfo(dt)
            for v in a.vals:       # float -> int casts of nan, inf or out-of-range values are undefined
                v = np.real(v)
                if not (np.isfinite(v).all() and (v.size == 0 or (v.min() > info.min and v.max() < info.max))):
                    return None
        how = self.pick(["astype", "np.asarray", "array"])
        if how == "astype":
            return self.eval(f"{paren(a.src)}.astype(np.{dt})", runs)
        if how == "np.asarray":
            return self.eval(f"np.asarray({a.src}, dtype=np.{dt})", runs)
        return self.eval(f"np.array({a.src}, dtype=np.{dt})", runs)

    def _e_where(self, runs, depth):
        a = self.expr(runs, depth)
        if a is None:
            return None
        b = self.partner(a, runs, depth)
        if b is None:
            return None
        how = self.pick(["where", "clip", "where_mask"])
        if how == "clip":
            lo, hi = self.pick([("0", "1"), ("-1.5", "2"), ("None", "0.5"), ("0", "None"), ("1", "3")])
            if lo == "0" and zero_tie(a.vals, [0.0] * len(a.vals)):
                return None
            return self.eval(f"np.clip({a.src}, {lo}, {hi})" if self.chance(0.5)
                             else f"{paren(a.src)}.clip({lo}, {hi})", runs)
        if how == "where_mask":
            return self.eval(f"np.where({paren(a.src)} > 0, {a.src}, {b.src})", runs)
        return self.eval(f"np.where({paren(b.src)} > {paren(a.src)}, {a.src}, {b.src})", runs)

    def _e_creator(self, runs, depth):
        a = self.leaf(runs, array=True)
        dt = self.pick_dtype()
        if a is not None and self.chance(0.6):
            src = self.pick([f"np.zeros_like({a.src})", f"np.ones_like({a.src})",
                             f"np.full_like({a.src}, 2)",
                             f"np.zeros({a.src}.shape, np.{dt})", f"np.ones({a.src}.shape[-1:])",
                             f"np.arange({a.src}.size)", f"np.full({a.src}.shape, 1.5)",
                             f"np.zeros_like({a.src}, dtype=np.{dt})"])
            return self.eval(src, runs)
        n = self.pick([3, 4, 1, 2, 0, 5])
        src = self.pick([f"np.arange({n})", f"np.ones({n})", f"np.zeros(({n}, 2), np.{dt})",
                         f"np.linspace(0, 1, {n})", f"np.eye({n})", f"np.full({n}, 7, np.{dt})",
                         f"np.arange({n}, dtype=np.{dt})", f"np.arange(1, {n} + 1).reshape(-1, 1)"])
        return self.eval(src, runs)

    def _e_join(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None:
            return None
        b = self.partner(a, runs, depth)
        if b is None:
            return None
        axis = self.pick([0, -1, 1])
        fn = self.pick(["np.concatenate", "np.stack", "np.hstack", "np.vstack"])
        if fn in ("np.concatenate", "np.stack"):
            return self.eval(f"{fn}([{a.src}, {b.src}], axis={axis})", runs)
        return self.eval(f"{fn}(({a.src}, {b.src}))", runs)

    def _e_matmul(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None:
            return None
        how = self.pick(["aT", "name", "dot", "outer"])
        s = paren(a.src)
        if how == "aT":
            return self.eval(f"{s} @ {s}.T" if self.chance(0.5) else f"{s}.T @ {s}", runs)
        if how == "dot":
            b = self.leaf(runs, array=True)
            return None if b is None else self.eval(f"np.dot({a.src}, {b.src})", runs)
        if how == "outer":
            b = self.leaf(runs, array=True)
            return None if b is None else self.eval(f"np.outer({a.src}, {b.src})", runs)
        b = self.leaf(runs, array=True)
        return None if b is None else self.eval(f"{s} @ {paren(b.src)}", runs)

    def _e_index(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None or a.ndim == 0:
            return None
        s = paren(a.src)
        how = self.pick(["mask", "fancy", "take", "nonzero_count"])
        if how == "mask":
            return self.eval(f"{s}[{s} > 0]" if self.chance(0.5) else f"{s}[{s} != {s}.max()]", runs)
        if how == "fancy":
            idx = self.pick(["[0, -1]", "[1, 1, 0]", "np.array([0, 2])", "[-1]"])
            return self.eval(f"{s}[{idx}]", runs)
        if how == "take":
            return self.eval(f"np.take({a.src}, [0, -1], axis={self.pick([0, -1])})", runs)
        return self.eval(f"np.count_nonzero({a.src})", runs)

    def _e_method(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None:
            return None
        s = paren(a.src)
        src = self.pick([f"{s}.copy()", f"np.cumsum({a.src}, axis=0)", f"np.sort({a.src})",
                         f"np.diff({a.src})", f"np.round({a.src}, 1)", f"np.tile({a.src}, 2)",
                         f"np.repeat({a.src}, 2)", f"np.roll({a.src}, 1)", f"np.argsort({a.src})",
                         f"np.atleast_2d({a.src})", f"np.ascontiguousarray({a.src})",
                         f"np.triu({a.src})", f"{s}.T.copy()", f"np.linalg.norm({a.src})"])
        return self.eval(src, runs)

    def _e_pyscalar(self, runs, depth):
        a = self.leaf(runs)
        if a is None:
            return None
        if a.is_array:
            src = self.pick([f"{a.src}.shape[0]", f"len({a.src})", f"{a.src}.ndim", f"{a.src}.size",
                             f"float({paren(a.src)}.sum())", f"int({paren(a.src)}.max())",
                             f"{paren(a.src)}.sum().item()", f"bool({paren(a.src)}.any())",
                             f"{a.src}.shape[-1] * 2"])
        else:
            src = self.pick([f"{paren(a.src)} * 2", f"float({a.src})", f"int({a.src})", f"{paren(a.src)} + 1",
                             f"abs({a.src})", f"max({a.src}, 1)", f"-{paren(a.src)}"])
        return self.eval(src, runs)

    def _e_pyarith(self, runs, depth):
        """Python-number arithmetic on the program's scalars (``s0 * (s1 - 0.5)``: run-time
        floats, ints and bools; capture computes ``+ - *`` of floats in the graph), often
        meeting an array right away (an elementwise operand)."""
        scalars = self.names(runs, lambda e: all(type(v) in (int, float, bool) for v in e.vals))
        if not scalars:
            return None
        src = self.pick(scalars, "py number").src
        for _ in range(self.pick([1, 2, 3])):
            other = self.pick(scalars, "py number").src if self.chance(0.7) else \
                self.pick(["0.5", "2.0", "-1.5", "3", "1e200", "-0.0", "True"], "py literal")
            op = self.pick(["+", "-", "*", "*", "-", "/"], "py op")
            src = f"{src} {op} {paren(other)}" if self.chance(0.6) else f"{paren(other)} {op} ({src})"
            if self.chance(0.2):
                src = f"-({src})"
        e = self.eval(src, runs)
        if e is None or not self.chance(0.6):
            return e
        arrays = self.names(runs, lambda e: isinstance(e.v, np.ndarray))
        if not arrays:
            return e
        a = self.pick(arrays, "array name")
        op = self.pick(["*", "+", "-", ">"], "py op with an array")
        return self.eval(f"{a.src} {op} {paren(e.src)}" if self.chance(0.5) else f"{paren(e.src)} {op} {a.src}", runs)
