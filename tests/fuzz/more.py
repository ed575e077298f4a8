"""More of NumPy for the program fuzzer (stop 45): integer-array gathers and scatters
(repeated and data-dependent indices), ``np.take``/``np.put``/``take_along_axis``,
``np.nonzero``/one-argument ``np.where``, reshapes and moves of axes, reductions with
``initial=``/``where=``/``out=``, sorts and partitions, NEP 50 promotion with Python
scalars and narrow integers, complex and half floats; statements that scatter, return
early, or index by a loop's variable.

Like exprs.py, every candidate is run with NumPy on every run (programs.Gen.eval) and
kept only when valid on all of them; what NumPy leaves unspecified is not drawn
(``mixed_zeros`` before a max/min, partitions read at their ``kth`` only, no argsort of
ties that a non-stable sort may order either way).
"""
from __future__ import annotations

import numpy as np

from .exprs import has_nan, mixed_zeros, paren, shares_memory


def _has_ties(vals: list, axis) -> bool:
    """Whether some run's values repeat along ``axis`` (anywhere, for None), NaNs and
    signed zeros included: NumPy's non-stable ``np.argsort`` orders equal keys its own way."""
    for v in vals:
        v = np.asarray(v)
        if v.ndim == 0 or v.size == 0:
            continue
        if v.dtype.kind in "fc" and np.isnan(v).any():
            return True
        rows = v.reshape(1, -1) if axis is None else np.moveaxis(v, axis, -1).reshape(-1, v.shape[axis])
        if any(len(np.unique(r)) != len(r) for r in rows):
            return True
    return False


def _int_index_names(gen, runs):
    """Integer arrays among the names (their values, taken modulo a length, index)."""
    return gen.names(runs, lambda e: isinstance(e.v, np.ndarray) and e.kind in "iu" and e.ndim >= 1)


class MoreMixin:
    """Expression and statement draws added in stop 45 (mixed into stmts.ProgramGen)."""

    # -- gathers ---------------------------------------------------------------------------
    def index_text(self, runs, n: int) -> str | None:
        """An integer index array for an axis of length ``n`` (every run): literals with
        repeats and negatives, 2-d ones, empty ones, or a data-dependent one."""
        how = self.pick(["repeat", "neg", "two_d", "data", "empty", "arange", "argsort"], "index array")
        if n == 0:
            return "np.array([], np.intp)" if how == "empty" else None
        if how == "repeat":
            return self.pick(["[0, 0, 1]", "np.array([1, 1, 1])", "[0, -1, 0, -1]"])
        if how == "neg":
            return self.pick(["[-1, -2]", "np.array([-1, 0])"])
        if how == "two_d":
            return self.pick(["np.array([[0, 1], [1, 0]])", "[[0], [-1]]", "np.zeros((2, 2), np.int32)"])
        if how == "empty":
            return "np.array([], np.intp)"
        if how == "arange":
            return f"np.arange({n})[::-1]" if self.chance(0.5) else f"np.arange({-n}, 0)"
        if how == "argsort":
            return None
        ints = _int_index_names(self, runs)
        if not ints:
            return None
        i = self.pick(ints)
        # (a length the same on every run: ``% n`` needs it)
        return f"np.abs({i.src}).ravel() % {n}" if self.chance(0.5) else f"{paren(i.src)}.ravel() % {n}"

    def _e_gather(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None or a.ndim == 0:
            return None
        s = paren(a.src)
        lens = {sh[0] for sh in a.shapes}
        how = self.pick(["rows", "cols", "take", "take_along", "nonzero", "where1", "pair", "argsort",
                         "compress"], "gather")
        if how == "argsort":          # an argsort used as an index: a permutation
            axis = self.pick([-1, 0])
            if _has_ties(a.vals, axis):
                return None
            if self.chance(0.5) or a.ndim != 1:
                return self.eval(f"np.take_along_axis({a.src}, np.argsort({a.src}, axis={axis}), axis={axis})", runs)
            return self.eval(f"{s}[np.argsort({a.src})[::-1][:3]]", runs)
        if how == "take_along":
            axis = self.pick(list(range(-a.ndim, a.ndim)))
            fn = self.pick(["argmax", "argmin"])
            if a.kind in "fc" and has_nan(a.vals):
                return None
            return self.eval(f"np.take_along_axis({a.src}, np.{fn}({a.src}, axis={axis}, keepdims=True), "
                             f"axis={axis})", runs)
        if how == "nonzero":
            return self.eval(self.pick([f"{s}[np.nonzero({s})]", f"np.nonzero({a.src})[0]", f"np.flatnonzero({a.src})",
                                        f"np.argwhere({a.src})", f"{s}[np.nonzero({s} > 0)]"]), runs)
        if how == "where1":
            return self.eval(self.pick([f"np.where({s} > 0)[0]", f"{s}[np.where({s} < 1)]",
                                        f"np.where({a.src})[-1]", f"np.where({s} != 0, {s}, -{s})"]), runs)
        if how == "compress":
            return self.eval(self.pick([f"np.compress({s}.ravel() > 0, {s}.ravel())",
                                        f"np.extract({s} > 0, {a.src})",
                                        f"np.compress([True, False], {a.src}, axis=0)"]), runs)
        if len(lens) != 1:
            return None
        n = lens.pop()
        idx = self.index_text(runs, n)
        if idx is None:
            return None
        if how == "rows":
            return self.eval(f"{s}[{idx}]" if self.chance(0.7) else f"{s}[{idx}, ...]", runs)
        if how == "cols" and a.ndim >= 2:
            m = {sh[-1] for sh in a.shapes}
            idx2 = self.index_text(runs, m.pop()) if len(m) == 1 else None
            return None if idx2 is None else self.eval(f"{s}[..., {idx2}]", runs)
        if how == "pair" and a.ndim >= 2:
            return self.eval(f"{s}[{idx}, {self.pick(['0', '-1', idx, '1:'])}]", runs)
        mode = self.pick(["", ", mode='wrap'", ", mode='clip'"])
        return self.eval(f"np.take({a.src}, {idx}, axis=0{mode})" if self.chance(0.6)
                         else f"np.take({a.src}, {idx}{mode})", runs)

    # -- shapes ----------------------------------------------------------------------------
    def _e_shape(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None:
            return None
        s, nd = paren(a.src), a.ndim
        opts = [f"{s}.ravel(order='F')", f"{s}.flatten('F')", f"{s}.reshape(-1, order='F')",
                f"np.expand_dims({a.src}, ({0}, {nd + 1}))", f"np.atleast_3d({a.src})",
                f"np.concatenate([{a.src}, {a.src}], axis=None)", f"np.repeat({a.src}, 2, axis=0)"
                if nd else f"np.repeat({a.src}, 3)", f"{s}[None, ..., None]"]
        if nd >= 1:
            opts += [f"{s}[::-1]", f"{s}[-1::-2]", f"np.tile({a.src}, (2, 1))", f"np.roll({a.src}, -1, axis=-1)",
                     f"np.repeat({a.src}, {list(range(min(sh[0] for sh in a.shapes)))}, axis=0)",
                     f"np.stack([{a.src}, {s} * 2], axis=-1)", f"np.flip({a.src}, axis=-1)"]
        if nd >= 2:
            opts += [f"np.moveaxis({a.src}, 0, -1)", f"np.swapaxes({a.src}, -1, -2)", f"{s}[::-1, ::-2]",
                     f"{s}.transpose()[..., ::-1]", f"np.rot90({a.src})", f"np.flip({a.src}, axis=(0, 1))",
                     f"{s}.T.reshape(-1)", f"np.concatenate([{a.src}, {s}[:1]], axis=0)",
                     f"{s}[:, None, :]", f"{s}.reshape({s}.shape[0], -1)"]
        if any(d == 1 for d in a.shapes[0]):
            k = a.shapes[0].index(1)
            if all(sh[k] == 1 for sh in a.shapes):
                opts += [f"np.squeeze({a.src}, axis={k})", f"{s}.squeeze({k - nd})"]
        return self.eval(self.pick(opts, "shape op"), runs)

    # -- reductions, scans, sorts ------------------------------------------------------------
    def _e_reduce_more(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None:
            return None
        s, nd = paren(a.src), a.ndim
        axis = self.pick([None] + list(range(-nd, nd)) + ([(0, -1)] if nd >= 2 else []), "axis")
        ax = "" if axis is None else f", axis={axis}"
        how = self.pick(["initial", "where", "ufunc_reduce", "scan", "diff", "sort", "partition", "stats",
                         "count"], "reduction+")
        if how in ("initial", "where", "ufunc_reduce", "stats", "sort", "partition") and mixed_zeros(a.vals):
            return None       # (a max or min, or a sort: where -0.0 and +0.0 land is NumPy's path's choice)
        if how == "initial":
            fn = self.pick(["sum", "prod", "max", "min"])
            init = self.pick(["1", "-2.5", "0", "10"])
            keep = ", keepdims=True" if self.chance(0.3) else ""
            return self.eval(f"{s}.{fn}({ax[2:]}{', ' if ax else ''}initial={init}{keep})", runs)
        if how == "where":
            fn = self.pick(["sum", "prod", "max", "min", "mean", "any", "all"])
            init = ", initial=-1" if fn in ("max", "min") else ""
            mask = self.pick([f"{s} > 0", f"{s} != 1", "True"])
            return self.eval(f"np.{fn}({a.src}{ax}, where={mask}{init})", runs)
        if how == "ufunc_reduce":
            fn = self.pick(["np.add", "np.multiply", "np.maximum", "np.logical_or", "np.minimum"])
            if fn in ("np.maximum", "np.minimum") and a.kind in "fc" and has_nan(a.vals):
                return None
            return self.eval(f"{fn}.reduce({a.src}{ax if axis is not None else ', axis=0'})", runs) \
                if self.chance(0.7) else self.eval(f"{fn}.accumulate({a.src}, axis={self.pick([0, -1])})", runs)
        if how == "scan":
            if not isinstance(axis, (int, type(None))):
                return None
            fn = self.pick(["cumsum", "cumprod", "nancumsum"])
            dt = self.pick(["", ", dtype=np.float32", ", dtype=np.int64", ", dtype=np.int8"])
            return self.eval(f"np.{fn}({a.src}{ax}{dt})", runs)
        if how == "diff":
            if not nd:
                return None
            k = self.pick([1, 2, 0])
            return self.eval(f"np.diff({a.src}, n={k}, axis={self.pick(list(range(-nd, nd)))})" if self.chance(0.6)
                             else f"np.diff({a.src}, prepend=0)", runs)
        if how == "sort":
            if not isinstance(axis, (int, type(None))) or not nd:
                return None
            if self.chance(0.5):
                return self.eval(f"np.sort({a.src}{ax})", runs)
            if _has_ties(a.vals, axis):
                return None
            return self.eval(f"np.argsort({a.src}{ax})", runs)
        if how == "partition":
            if not nd:
                return None
            n = min(sh[-1] for sh in a.shapes)
            if n == 0:
                return None
            k = self.pick([0, n - 1, n // 2])
            # only the kth element's place is specified
            return self.eval(f"np.partition({a.src}, {k})[..., {k}]", runs)
        if how == "stats":
            fn = self.pick(["np.ptp", "np.median", "np.nanmax", "np.nansum", "np.average", "np.nanmean"])
            if fn == "np.nanmax" and a.kind in "fc" and has_nan(a.vals):
                return None       # (an all-NaN slice warns and may meet NaN signs)
            return self.eval(f"{fn}({a.src}{ax})", runs)
        return self.eval(f"np.count_nonzero({a.src}{ax}{', keepdims=True' if ax and self.chance(0.4) else ''})",
                         runs)

    # -- promotion -------------------------------------------------------------------------
    def _e_promote(self, runs, depth):
        """NEP 50: Python scalars are weak (``int8_array * 100`` wraps in int8,
        ``uint8_array + 300`` raises OverflowError), NumPy scalars strong; narrow integers,
        ``//`` and ``%`` with negative operands; complex and half floats."""
        a = self.expr(runs, depth)
        if a is None:
            return None
        s = paren(a.src)
        how = self.pick(["weak", "narrow", "divmod", "strong", "complex", "half"], "promotion")
        if how == "weak":
            k = self.pick(["100", "-3", "200", "1.5", "True", "2 ** 31", "-129", "1j", "300"])
            op = self.pick(["+", "*", "-", "//", "%"])
            if op in ("//", "%") and k in ("1j",):
                return None
            return self.eval(f"{s} {op} {k}" if self.chance(0.6) else f"{k} {op} {s}", runs)
        if how == "narrow":
            dt = self.pick(["int8", "uint8", "int16", "uint16"])
            if a.kind in "fc" and not all(np.isfinite(np.asarray(v)).all() and np.abs(np.asarray(v)).max(initial=0) < 120
                                         for v in a.vals):
                return None   # (float -> int casts of nan, inf or out-of-range values are undefined)
            return self.eval(f"{s}.astype(np.{dt}) * {self.pick(['100', '3', '-7', 'np.int8(50)'])}", runs)
        if how == "divmod":
            k = self.pick(["-3", "4", "-1", "np.int64(-2)"])
            return self.eval(self.pick([f"{s} // {k}", f"{s} % {k}", f"{k} // {s}", f"{k} % {s}",
                                        f"np.divmod({a.src}, {k})[1]", f"np.fmod({a.src}, {k})",
                                        f"np.remainder({a.src}, {k})"]), runs)
        if how == "strong":
            k = self.pick(["np.float32(1.5)", "np.int8(3)", "np.float64(0.5)", "np.uint8(200)", "np.float16(2)",
                           "np.int16(-300)", "np.complex64(1j)"])
            return self.eval(f"{s} * {k}" if self.chance(0.5) else f"{k} + {s}", runs)
        if how == "complex":
            if a.kind == "c":
                return self.eval(self.pick([f"{s}.real", f"{s}.imag", f"np.conj({a.src})", f"np.abs({a.src})",
                                            f"np.angle({a.src})", f"{s} * {s}", f"np.exp({a.src})",
                                            f"{s}.conj() * 1j", f"np.sqrt({a.src})"]), runs)
            return self.eval(self.pick([f"{s} + 1j", f"{s} * (0.5 - 2j)", f"{s}.astype(np.complex64)",
                                        f"{s} * np.complex64(1 + 1j)"]), runs)
        return self.eval(self.pick([f"{s}.astype(np.float16)", f"{s} * np.float16(1.5)",
                                    f"np.float16(0.1) + {s}"]), runs)

    # -- statements ------------------------------------------------------------------------
    def _s_scatter(self, runs, top):
        """Integer-array writes (repeated indices: ``x[[0, 0]] += 1`` adds once, ``np.add.at``
        every time), np.put, put_along_axis, copyto/putmask with a mask."""
        t = self.target(runs)
        if t is None or t.ndim == 0:
            return None
        lens = {sh[0] for sh in t.shapes}
        n = lens.pop() if len(lens) == 1 else None
        how = self.pick(["set", "aug", "add_at", "put", "put_along", "copyto", "putmask", "col"], "scatter")
        value = self.pick(["1", "-2", "0.5", "True"]) if self.chance(0.5) else None
        if value is None:
            v = self.expr(runs, 1)
            if v is None or v.kind == "c" and t.kind != "c" or shares_memory(t.vals, v.vals):
                return None
            if v.kind in "fc" and t.kind in "iu" and not self._cast_ok(v, t):
                return None
            value = v.src
        if how == "copyto":
            return [f"np.copyto({t.src}, {value}, where={paren(t.src)} > 0)"]
        if how == "putmask":
            return [f"np.putmask({t.src}, {paren(t.src)} < 1, {value})"]
        if how == "put_along":
            if t.kind in "fc" and has_nan(t.vals):
                return None
            axis = self.pick(list(range(-t.ndim, t.ndim)))
            return [f"np.put_along_axis({t.src}, np.argmin({t.src}, axis={axis}, keepdims=True), {value}, "
                    f"axis={axis})"]
        if n is None:
            return None
        idx = self.index_text(runs, n)
        if idx is None:
            return None
        if how == "put":
            mode = self.pick(["", ", mode='wrap'", ", mode='clip'"])
            return [f"np.put({t.src}, {idx}, {value}{mode})"]
        if how == "add_at":
            fn = self.pick(["np.add", "np.multiply", "np.subtract"])
            return [f"{fn}.at({t.src}, {idx}, {value})"]
        key = f"{idx}" if how != "col" or t.ndim < 2 else f":, {self.index_text(runs, min(sh[-1] for sh in t.shapes)) or 0}"
        if how == "aug":
            return [f"{t.src}[{key}] {self.pick(['+=', '-=', '*=', '//='])} {value}"]
        return [f"{t.src}[{key}] = {value}"]

    def _s_early_return(self, runs, top):
        """``if <cond>: return <value>`` in the body (the probe takes it for ``return locals()``)."""
        if not top:
            return None
        e = self.expr(runs, 1)
        if e is None:
            return None
        arrays = self.names(runs, lambda e: isinstance(e.v, np.ndarray) and e.v.size > 0)
        if arrays and self.chance(0.6) and self.data_ifs < 2:
            a = paren(self.pick(arrays).src)
            cond = self.data_cond(self.pick([f"{a}.sum() > 1", f"{a}.max() > 0", f"({a} < 0).all()"]))
        else:
            names = self.names(runs, lambda e: isinstance(e.v, np.ndarray) and e.ndim > 0)
            if not names:
                return None
            cond = f"{self.pick(names).src}.shape[0] > 2"
        return [f"if {cond}:", f"    return {e.src}"]

    def _s_loop_index(self, runs, top):
        """A write indexed by a loop's variable (``t[i] = t[i - 1] * 2``: a recurrence)."""
        loop_vars = [e for e in self.names(runs, lambda e: type(e.v) is int) if e.src.startswith("i")]
        t = self.target(runs)
        if not loop_vars or t is None or t.ndim == 0 or any(sh[0] == 0 for sh in t.shapes):
            return None
        i = self.pick(loop_vars).src
        n = f"{t.src}.shape[0]"
        s = paren(t.src)
        return [self.pick([f"{t.src}[{i} % {n}] = {s}[({i} - 1) % {n}] * 2",
                           f"{t.src}[{i} % {n}] += {s}[{i} % {n}:].sum(axis=0)",
                           f"{t.src}[:{i} + 1] -= 1",
                           f"{t.src}[..., -1] = {s}[..., 0] + {i}"])]

    def _s_reduce_out(self, runs, top):
        """A reduction or scan into ``out=``: an existing array of the result's shape (cast
        as NumPy's ``same_kind`` rule allows, or raising as NumPy does) or a fresh one, by
        function or method, with ``keepdims``, ``initial`` and ``where``."""
        a = self.leaf(runs, array=True)
        if a is None or a.ndim == 0:
            return None
        s = paren(a.src)
        axis = self.pick(list(range(-a.ndim, a.ndim)))
        fn = self.pick(["sum", "prod", "max", "min", "mean", "cumsum", "any", "add.reduce", "maximum.reduce"],
                       "reduction into out")
        if fn in ("max", "min", "maximum.reduce") and mixed_zeros(a.vals):
            return None
        extra = ""
        if fn in ("sum", "prod", "max", "min", "mean", "any") and self.chance(0.3):
            extra = ", keepdims=True"
        if fn in ("sum", "prod", "max", "min") and self.chance(0.3):
            extra += ", where=" + f"{s} > 0" + (", initial=0" if fn in ("max", "min") else "")
        call = f"np.{fn}({a.src}, axis={axis}{extra}" if "." in fn or self.chance(0.5) \
            else f"{s}.{fn}(axis={axis}{extra}"
        shaped = self.eval(call + ")", runs)
        if shaped is None or not shaped.is_array:
            return None
        fits = self.names(runs, lambda e: isinstance(e.v, np.ndarray) and e.shapes == shaped.shapes)
        if fits and self.chance(0.7):
            return [f"{call}, out={self.pick(fits).src})"]
        o = self.fresh("o")
        return [f"{o} = np.zeros_like({call}))", f"{self.fresh('r')} = {call}, out={o})"]
