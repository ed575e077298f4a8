"""Still more of NumPy for the program fuzzer (stop 46): ``np.linalg`` (norms with ``ord``
and ``axis``, ``det``/``inv``/``solve`` of well-conditioned matrices), ``np.einsum``,
sorts with ``kind=``, ``np.unique``'s extra results, ``np.clip`` with array bounds,
``np.round`` with decimals, ``nan*`` reductions, weighted ``np.average``,
``np.histogram``/``np.bincount``, ``np.searchsorted``, ``np.pad``, ``tril``/``triu``/
``diag``, ``outer``/``kron``; the edges of integer and float arithmetic (integer powers
with negative exponents, shifts past the width, bit ops on bools, float16 chains,
complex division, uint64 against int64); loops whose trip count is data, and ``out=``
into negative-stride views.

Like exprs.py and more.py, every candidate runs with NumPy on every run and is kept only
when valid on all of them; what NumPy leaves open is not drawn (signed zeros against a
sort, unique, clip or nan-min/max, non-stable argsorts of ties, a partition read other
than at its kth).
"""
from __future__ import annotations

import re

import numpy as np

from .exprs import MIN_MAX, has_nan, mixed_zeros, paren, strided_both, zero_tie


def _square(shapes: list[tuple]) -> bool:
    return all(len(sh) == 2 and sh[0] == sh[1] and sh[0] > 0 for sh in shapes)


def _well_conditioned(vals: list) -> bool:
    """Every run's matrix finite with a condition number under 1e3 (float32 keeps 4 digits)."""
    for v in vals:
        v = np.asarray(v)
        if not np.isfinite(v).all():
            return False
        with np.errstate(all="ignore"):
            if not np.linalg.cond(v.astype(np.complex128 if v.dtype.kind == "c" else np.float64)) < 1e3:
                return False
    return True


def rebinds(counter: str, body: list[str]) -> bool:
    """Whether a while loop's body assigns its counter: such a loop need not end (seeds
    5002, 3011, 46129)."""
    return any(re.match(rf"\s*{counter}\b[^=]*[-+*/%&|^]?=(?!=)", line) for line in body)


def _finite(vals: list) -> bool:
    return all(np.isfinite(np.asarray(v)).all() for v in vals)


class ExtraMixin:
    """Expression and statement draws added in stop 46 (mixed into stmts.ProgramGen)."""

    # -- linear algebra ----------------------------------------------------------------------
    def _e_linalg(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None or a.kind == "b" and self.chance(0.5):
            return None
        s, nd = paren(a.src), a.ndim
        how = self.pick(["norm", "norm_axis", "det", "inv", "solve", "einsum", "outer", "kron", "tri", "diag",
                         "products"], "linalg")
        if how == "products":          # (products, signal and polynomial helpers)
            opts = [f"np.inner({a.src}, {a.src})", f"np.tensordot({a.src}, {a.src}, axes=0)" if nd <= 2 else None,
                    f"np.vdot({a.src}, {a.src})"]
            if nd == 1:
                opts += [f"np.convolve({a.src}, {s}[::-1])", f"np.correlate({a.src}, {a.src}, 'full')",
                         f"np.polyval({a.src}, 0.5)", f"np.gradient({a.src})" if a.kind in "fiu" else None,
                         f"np.ediff1d({a.src})", f"np.cross({s}[:3], {s}[::-1][:3])" if a.kind in "fiu" else None]
            if nd == 2:
                opts += [f"np.tensordot({a.src}, {a.src}, axes=([0], [0]))", f"np.cov({a.src})" if a.kind in "fiu" else None,
                         f"np.linalg.matrix_power({a.src}, 2)", f"np.linalg.multi_dot([{a.src}, {s}.T, {a.src}])"]
                if _square(a.shapes) and _well_conditioned(a.vals):
                    opts += [f"np.linalg.slogdet({a.src})[1]", f"np.linalg.pinv({a.src})",
                             f"np.linalg.svd({a.src}, compute_uv=False)", f"np.linalg.matrix_power({a.src}, -1)"]
            opts = [o for o in opts if o is not None]
            return self.eval(self.pick(opts), runs)
        if how == "norm":
            ords = ["None", "1", "2", "np.inf", "-np.inf", "0", "3"] if nd == 1 else \
                ["None", "'fro'", "1", "-1", "np.inf", "'nuc'", "2"] if nd == 2 else ["None"]
            if nd > 2 or nd == 0:
                return self.eval(f"np.linalg.norm({a.src})", runs)
            return self.eval(f"np.linalg.norm({a.src}, ord={self.pick(ords)})", runs)
        if how == "norm_axis":
            if nd == 0:
                return None
            axis = self.pick(list(range(-nd, nd)))
            o = self.pick(["None", "1", "2", "np.inf", "0", "-1"])
            keep = ", keepdims=True" if self.chance(0.3) else ""
            return self.eval(f"np.linalg.norm({a.src}, ord={o}, axis={axis}{keep})", runs)
        if how in ("det", "inv", "solve"):
            if not _square(a.shapes):
                return None
            m = self.pick([a.src, f"{s} + {s}.shape[0] * 4 * np.eye({s}.shape[0], dtype={s}.dtype)"
                           if a.kind in "fc" else a.src])
            mv = self.eval(m, runs)
            if mv is None or not _well_conditioned(mv.vals):
                return None
            if how == "det":
                return self.eval(f"np.linalg.det({mv.src})", runs)
            if how == "inv":
                return self.eval(f"np.linalg.inv({mv.src})", runs)
            b = self.pick([f"{s}[:, 0]", f"np.ones({s}.shape[0])", f"{s}.T"])
            return self.eval(f"np.linalg.solve({mv.src}, {b})", runs)
        if how == "einsum":
            return self._einsum(a, runs, depth)
        if how == "outer":
            b = self.partner(a, runs, depth)
            return None if b is None else self.eval(f"np.outer({a.src}, {b.src})", runs)
        if how == "kron":
            b = self.leaf(runs, array=True)
            return None if b is None else self.eval(f"np.kron({a.src}, {b.src})", runs)
        if how == "tri":
            if nd < 2:
                return None
            fn = self.pick(["np.tril", "np.triu"])
            return self.eval(f"{fn}({a.src}, k={self.pick([0, 1, -1, 2])})", runs)
        if nd not in (1, 2):
            return None
        return self.eval(self.pick([f"np.diag({a.src})", f"np.diag({a.src}, k={self.pick([1, -1, 2])})",
                                    f"np.diagflat({a.src})" if nd == 1 else f"np.trace({a.src})"]), runs)

    def _einsum(self, a, runs, depth):
        nd = a.ndim
        if nd == 1:
            b = self.names(runs, lambda e: isinstance(e.v, np.ndarray) and e.ndim == 1 and e.shapes == a.shapes)
            spec = self.pick(["'i->'", "'i,i->'", "'i,j->ij'", "'i->i'", "'...,...->...'"])
            ops = [a.src] if spec.count(",") == 0 else [a.src, self.pick(b).src if b else a.src]
        elif nd == 2:
            b = self.names(runs, lambda e: isinstance(e.v, np.ndarray) and e.ndim == 1 and
                           all(sb[0] == sa[1] for sa, sb in zip(a.shapes, e.shapes)))
            spec = self.pick(["'ij->ji'", "'ii->i'", "'ii'", "'ij,ij->i'", "'ij->'", "'...j->...'", "'ij,j->i'",
                              "'ij,kj->ik'", "'...i,...i->...'", "'ij->j'"])
            if spec in ("'ii->i'", "'ii'") and not all(sh[0] == sh[1] for sh in a.shapes):
                return None
            if spec == "'ij,j->i'":
                if not b:
                    return None
                ops = [a.src, self.pick(b).src]
            else:
                ops = [a.src] if spec.count(",") == 0 else [a.src, a.src]
        elif nd == 3:
            spec = self.pick(["'ijk->kji'", "'ijk->j'", "'...jk,...kj->...'", "'ijk,ijk->'", "'iij->ij'"])
            if spec == "'...jk,...kj->...'" and not all(sh[1] == sh[2] for sh in a.shapes):
                return None
            if spec == "'iij->ij'" and not all(sh[0] == sh[1] for sh in a.shapes):
                return None
            ops = [a.src] if spec.count(",") == 0 else [a.src, a.src]
        else:
            return None
        return self.eval(f"np.einsum({spec}, {', '.join(ops)})", runs)

    # -- sorts, sets, statistics, rounding ---------------------------------------------------
    def _e_numeric(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None:
            return None
        s, nd = paren(a.src), a.ndim
        how = self.pick(["sort", "argsort", "partition", "unique", "clip", "round", "nanred", "average",
                         "histogram", "bincount", "searchsorted", "pad", "roll", "ptp"], "numeric")
        axis = self.pick(list(range(-nd, nd))) if nd else None
        zeros = mixed_zeros(a.vals)
        if how == "sort" and nd and not zeros:
            kind = self.pick(["'quicksort'", "'mergesort'", "'heapsort'", "'stable'"])
            return self.eval(f"np.sort({a.src}, axis={axis}, kind={kind})" if self.chance(0.6)
                             else f"np.sort({a.src}, axis=None)", runs)
        if how == "argsort" and nd:       # a stable sort orders ties (signed zeros too) by position
            return self.eval(f"np.argsort({a.src}, axis={axis}, kind={self.pick(['stable', 'mergesort'])!r})",
                             runs)
        if how == "partition" and nd and not zeros:
            n = min(sh[-1] for sh in a.shapes)
            if n == 0:
                return None
            k = self.pick([0, n - 1, n // 2, -1])
            if self.chance(0.5):
                return self.eval(f"np.take_along_axis({a.src}, np.argpartition({a.src}, {k}), axis=-1)[..., {k}]",
                                 runs)
            return self.eval(f"np.partition({a.src}, {k}, axis=-1)[..., {k}]", runs)
        if how == "unique" and not zeros:
            extra = self.pick(["return_index", "return_inverse", "return_counts"])
            if self.chance(0.3):
                return self.eval(f"np.unique({a.src})", runs)
            return self.eval(f"np.unique({a.src}, {extra}=True)[1]", runs)
        if how == "clip":
            return self._clip(a, runs, depth)
        if how == "round":
            d = self.pick([0, 1, 2, -1, 3, -2])
            fn = self.pick(["np.round", "np.around", "method"])
            return self.eval(f"{s}.round({d})" if fn == "method" else f"{fn}({a.src}, {d})", runs)
        if how == "nanred":
            fn = self.pick(["nansum", "nanprod", "nanmin", "nanmax", "nanmean", "nanstd", "nanvar", "nanargmin",
                            "nanargmax", "nanmedian", "nancumprod"])
            if fn in ("nanmin", "nanmax", "nanargmin", "nanargmax", "nanmedian") and zeros:
                return None
            ax = "" if axis is None or self.chance(0.3) else f", axis={axis}"
            extra = ", ddof=1" if fn in ("nanstd", "nanvar") and self.chance(0.4) else ""
            return self.eval(f"np.{fn}({a.src}{ax}{extra})", runs)
        if how == "average" and nd:
            n = {sh[axis] for sh in a.shapes}
            w = self.pick([f"np.abs({a.src}) + 1", f"np.arange(1, {s}.shape[{axis}] + 1)" if len(n) == 1 else
                           f"{s} * 0 + 2"])
            ret = ", returned=True)[1" if self.chance(0.3) else ""
            return self.eval(f"np.average({a.src}, axis={axis}, weights={w}{ret})", runs)
        if how == "histogram":
            if a.kind == "c":
                return None
            bins = self.pick(["3", "5", "[0, 1, 2]", "1"])
            rng = ", range=(-1, 2)" if self.chance(0.3) else ""
            w = f", weights={s} * 0.5" if self.chance(0.3) and a.kind != "b" else ""
            return self.eval(f"np.histogram({a.src}, bins={bins}{rng}{w})[{self.pick([0, 1])}]", runs)
        if how == "bincount":
            ints = self.names(runs, lambda e: isinstance(e.v, np.ndarray) and e.kind in "iub")
            if not ints:
                return None
            i = self.pick(ints)
            idx = f"np.abs({i.src}.astype(np.int64)).ravel() % 5"
            w = f", weights={paren(a.src)}.ravel()" if self.chance(0.4) and a.kind in "iubf" \
                and all(np.size(x) == np.size(y) for x, y in zip(a.vals, i.vals)) else ""
            return self.eval(f"np.bincount({idx}{w}, minlength={self.pick([0, 3, 7])})", runs)
        if how == "searchsorted":
            if a.kind == "c" or has_nan(a.vals) or zeros:
                return None
            b = self.leaf(runs)
            if b is None or b.kind == "c":
                return None
            return self.eval(f"np.searchsorted(np.sort({paren(a.src)}.ravel()), {b.src}, "
                             f"side={self.pick(['left', 'right'])!r})", runs)
        if how == "pad":
            if not nd:
                return None
            mode = self.pick(["", ", mode='edge'", ", mode='reflect'", ", mode='wrap'", ", mode='symmetric'",
                              ", constant_values=7", ", mode='maximum'" if not zeros else ""])
            width = self.pick(["1", "(1, 2)", f"{[(0, 1)] * nd}", "((2, 0),)"])
            return self.eval(f"np.pad({a.src}, {width}{mode})", runs)
        if how == "roll" and nd:
            if nd >= 2 and self.chance(0.5):
                return self.eval(self.pick([f"np.roll({a.src}, (1, -2), axis=(0, 1))",
                                            f"np.rot90({a.src}, k={self.pick([2, 3, -1])}, axes=(1, 0))"]), runs)
            return self.eval(self.pick([f"np.roll({a.src}, {self.pick([7, -3])})",
                                        f"np.roll({a.src}, 1, axis={axis})", f"np.flip({a.src}, axis={axis})"]), runs)
        if how == "ptp" and not zeros:
            return self.eval(f"np.ptp({a.src}{'' if axis is None else f', axis={axis}'})", runs)
        return None

    def _clip(self, a, runs, depth):
        """``np.clip`` with array bounds (broadcasting), one of them ``None``, or bounds crossed."""
        lo = self.partner(a, runs, depth)
        hi = self.partner(a, runs, depth) if self.chance(0.6) else None
        if lo is None or lo.kind == "c" or a.kind == "c" or hi is not None and hi.kind == "c":
            return None
        bounds = [b for b in (lo, hi) if b is not None]
        if any(zero_tie(a.vals, b.vals) for b in bounds) or hi is not None and zero_tie(lo.vals, hi.vals):
            return None
        if any(has_nan(b.vals) for b in bounds):
            return None       # (NaN bounds: NumPy's clip propagates them through maximum/minimum)
        if hi is None:
            src = self.pick([f"np.clip({a.src}, {lo.src}, None)", f"np.clip({a.src}, None, {lo.src})",
                             f"{paren(a.src)}.clip(max={lo.src})"])
        else:
            src = f"np.clip({a.src}, {lo.src}, {hi.src})"
        return self.eval(src, runs)

    # -- arithmetic edges --------------------------------------------------------------------
    def _e_edge(self, runs, depth):
        a = self.expr(runs, depth)
        if a is None:
            return None
        s = paren(a.src)
        how = self.pick(["ipow", "shift", "bool_bits", "half", "cdiv", "u64"], "arith edge")
        if how == "ipow" and a.kind in "iu":
            k = self.pick(["-1", "-2", "np.int64(-1)", "0", "np.array([2, -1])[:1]"])
            return self.eval(self.pick([f"{s} ** {k}", f"np.power({a.src}, {k})"]), runs)
        if how == "shift" and a.kind in "iub":
            k = self.pick(["1", "7", "8", "31", "32", "63", "64", "65", "100", "np.int64(70)", "np.uint8(9)",
                           f"{s}", f"np.abs({a.src}) % 70", f"-{s}"])
            op = self.pick(["<<", ">>", "np.left_shift", "np.right_shift"])
            return self.eval(f"{s} {op} {k}" if op in ("<<", ">>") else f"{op}({a.src}, {k})", runs)
        if how == "bool_bits" and a.kind == "b":
            b = self.partner(a, runs, depth)
            if b is None or b.kind != "b":
                b = self.eval("True", runs)
            return self.eval(self.pick([f"{s} & {paren(b.src)}", f"{s} | {paren(b.src)}", f"{s} ^ {paren(b.src)}",
                                        f"~{s}", f"np.invert({a.src})", f"np.bitwise_xor({a.src}, 1)",
                                        f"{s} << 1", f"({s} ^ True) & ~{paren(b.src)}"]), runs)
        if how == "half" and a.kind in "fiub":
            h = f"{s}.astype(np.float16)" if a.dtype != np.float16 else s
            if a.kind in "f" and not all(np.isfinite(np.asarray(v)).all() for v in a.vals):
                h = f"np.nan_to_num({h})"
            return self.eval(self.pick([f"{h} * {h} + {h}", f"({h} - np.float16(0.1)) / np.float16(3)",
                                        f"np.sqrt(np.abs({h})) * 7", f"{h} * 1000 * 1000",
                                        f"np.exp({h} * np.float16(0.25))", f"({h} + 0.3) * 3 - 0.9",
                                        f"{h}.sum()", f"{h}.mean()", f"np.cumsum({h})"]), runs)
        if how == "cdiv" and a.kind in "fiuc":
            if not _finite(a.vals):
                return None
            b = self.partner(a, runs, depth)
            if b is None or b.kind not in "fiuc" or not _finite(b.vals):
                return None
            den = f"({b.src} + 2.5j)" if b.kind != "c" else f"({b.src} + (3 + 1j))"
            den_v = self.eval(den, runs)
            if den_v is None or any((np.asarray(v) == 0).any() for v in den_v.vals):
                return None
            return self.eval(self.pick([f"({a.src} - 1j) / {den}", f"{s} / {den}", f"1 / {den}",
                                        f"np.true_divide({a.src} * 1j, {den})",
                                        f"({a.src} + 0j).astype(np.complex64) / np.complex64(2 - 1j)"]), runs)
        if how == "u64" and a.kind in "iub":
            u = f"{s}.astype(np.uint64)"
            return self.eval(self.pick([f"{u} + {s}.astype(np.int64)", f"{u} * np.int64(-2)", f"{u} - 5",
                                        f"{u} // np.int64(3)", f"{u} + np.uint64(2 ** 63)", f"{u} + (-1)",
                                        f"np.maximum({u}, {s}.astype(np.int64))", f"{u} > -1",
                                        f"{u} % 7", f"{u} >> 60", f"{u} == {s}.astype(np.int64)"]), runs)
        return None

    # -- statements ------------------------------------------------------------------------
    def _s_raising(self, runs, top):
        """A statement that may raise as NumPy raises (``int_array ** -1``, ``uint64 + (-1)``,
        ``np.linalg.inv`` of a singular matrix), kept last when it does."""
        if not top:
            return None
        ints = self.names(runs, lambda e: isinstance(e.v, np.ndarray) and e.kind in "iub" and e.v.size > 0)
        arrays = self.names(runs, lambda e: isinstance(e.v, np.ndarray))
        if not arrays:
            return None
        a = self.pick(ints) if ints and self.chance(0.7) else self.pick(arrays)
        s = paren(a.src)
        src = self.pick([f"{s} ** -1", f"np.power({a.src}, -2)", f"{s}.astype(np.uint64) + (-1)",
                         f"{s} ** np.array(-3)", f"-{s}", f"{s} - {s}", f"np.linalg.inv({s} * 0)",
                         f"np.unique({a.src}, axis=5)", f"np.nanargmax({s} * np.nan)", f"np.pad({a.src}, -1)"])
        self.expect_error = True
        return [f"{self.fresh()} = {src}"]

    def _s_trip(self, runs, top):
        """A loop whose trip count is data: ``for i in range(int(np.count_nonzero(x > 0)) % 4)``,
        ``while k < 3 and x.sum() > k``."""
        arrays = self.names(runs, lambda e: isinstance(e.v, np.ndarray) and e.kind in "iubf")
        if not arrays:
            return None
        a = self.pick(arrays)
        s = paren(a.src)
        var = self.fresh("i")
        if self.chance(0.6):
            n = self.pick([f"int(np.count_nonzero({s} > 0)) % 4", f"{s}.size % 3",
                           f"min(int(np.count_nonzero({a.src})), 3)"])
            counts = [self.eval(n, [ns]) for ns in runs]
            if any(c is None for c in counts):
                return None
            header = f"for {var} in range({n}):"
            inner = [{**ns, var: 0} for ns in runs]
            return [header, *self.block(inner)[0]]
        c = self.fresh("k")
        inner = [{**ns, c: 0} for ns in runs]
        body = self.block(inner, 2)[0]
        if rebinds(c, body):
            return None   # (seed 46129: k3 = np.sign(x1) in the body never ends)
        cond = self.pick([f"{s}.sum() > {c}", f"({s} > {c}).any()", f"{c} < {s}.size"])
        return [f"{c} = 0", f"while {c} < 3 and {cond}:", *body, f"    {c} += 1"]

    def _s_out_view(self, runs, top):
        """``out=`` into a negative-stride (or otherwise strided) view of an array."""
        t = self.target(runs)
        if t is None or t.ndim == 0:
            return None
        key = self.pick(["::-1", "::-2", "..., ::-1", "::-1, ::2", "1::-1"] if t.ndim >= 2 else ["::-1", "::-2", "-2::-1"])
        dest = f"{paren(t.src)}[{key}]"
        region = self.eval(dest, runs)
        if region is None:
            return None
        a = self.partner(region, runs, 1)
        if a is None:
            return None
        fn = self.pick(["np.add", "np.multiply", "np.negative", "np.sqrt", "np.square", "np.floor_divide",
                        "np.minimum", "np.rint", "np.cumsum", "np.matmul", "np.clip"], "out view")
        if fn in ("np.negative", "np.sqrt", "np.square", "np.rint"):
            if fn == "np.negative" and strided_both(a.vals, region.vals):
                return None
            return [f"{fn}({a.src}, out={dest})"]
        if fn == "np.cumsum":
            return [f"np.cumsum({a.src}, axis=0, out={dest})"]
        if fn == "np.clip":
            if zero_tie(a.vals, [0.0] * len(a.vals)):
                return None
            return [f"np.clip({a.src}, 0, 1, out={dest})"]
        b = self.partner(region, runs, 1)
        if b is None or fn in MIN_MAX and zero_tie(a.vals, b.vals):
            return None
        return [f"{fn}({a.src}, {b.src}, out={dest})"]
