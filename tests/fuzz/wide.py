"""Where NumPy users go and the other draws did not (stop 49): indexing that mixes integer
arrays or boolean masks with slices, integers, ``np.newaxis`` and ``...`` (advanced
indices apart, so NumPy moves their axes first), ``np.ix_``; the library around the
ufuncs (``np.select``, ``np.piecewise``, ``np.percentile``/``np.quantile``,
``np.digitize``, ``np.interp``, ``np.isclose``/``allclose``/``array_equal``,
``np.split``/``array_split``, ``np.append``/``insert``/``delete``, ``np.meshgrid``,
``np.choose``, ``np.nan_to_num``, ``np.resize``, stacking helpers); ufuncs the lists in
exprs.py leave out (``logaddexp``, ``heaviside``, ``nextafter``, ``ldexp``, ``frexp``,
``cbrt``, ``trunc``, ``float_power``, ``gcd``/``lcm``, ``fmod``, ``ufunc.accumulate`` of
maximum and ``reduceat``), with ``dtype=`` and ``where=``; and NumPy scalars of every
kind against arrays of every kind (``np.uint16(3) - x``, ``np.float16(1.5) * x``).

As in the other draws, every candidate runs with NumPy on every run and is kept only
when valid on all of them, and what NumPy leaves open is not drawn (a sort or a max of
mixed signed zeros).
"""
from __future__ import annotations

import numpy as np

from .exprs import has_nan, mixed_zeros, paren, shares_memory

# NumPy scalars of each kind (NEP 50: strong, so they promote as arrays do)
NUMPY_SCALARS = ["np.uint16(3)", "np.float16(1.5)", "np.complex64(0.5 - 1j)", "np.int8(-3)", "np.bool_(True)",
                 "np.uint8(200)", "np.int16(-300)", "np.float32(-2.25)", "np.uint32(7)", "np.int64(-2)",
                 "np.uint64(5)", "np.float64(0.125)", "np.complex128(2j)"]
SCALAR_OPS = ["+", "-", "*", "/", "//", "%", "**", "<", "==", "&", "|", "^"]


def _common_len(shapes: list[tuple], axis: int) -> int | None:
    """The length of ``axis`` when every run's array has the same one."""
    lens = {sh[axis] for sh in shapes}
    return lens.pop() if len(lens) == 1 else None


class WideMixin:
    """Expression draws added in stop 49 (mixed into stmts.ProgramGen)."""

    # -- indexing that mixes kinds of index ----------------------------------------------------
    def _int_index(self, runs, n: int | None) -> str | None:
        if n is None or n == 0:
            return None
        if self.chance(0.6):
            return self.index_text(runs, n)
        return self.pick(["[0, -1]", "[-1]", f"np.arange({n})[::-1]", "np.array([0, 0])", f"[{n - 1}, 0]"])

    def _mixed_keys(self, a, runs) -> list[str]:
        """Subscripts of ``a`` that mix integer arrays or masks with slices, integers,
        ``np.newaxis`` and ``...`` (valid on every run or not: the caller's eval decides)."""
        s, nd, sh = paren(a.src), a.ndim, a.shapes
        n0 = _common_len(sh, 0)
        i0 = self._int_index(runs, n0)
        keys = ["None, ...", "..., np.newaxis", "np.newaxis, ::-1"]
        if i0 is not None:
            keys += [f"{i0}, ...", f"None, {i0}", f"{i0}, None"]
        mask0 = f"{s}[:, 0] > 0" if nd >= 2 else f"{s} > 0"
        if nd >= 2:
            i1 = self._int_index(runs, _common_len(sh, 1))
            keys += [f"{mask0}, ::-1", f"{mask0}, 1:", f"::-1, {s}[0] > 0" if n0 else None,
                     "np.newaxis, :, ::2", "..., None, -1"]
            if i0 is not None:
                keys += [f"{i0}, 1:", f"{i0}, ::-1", f"{i0}, -1", f"{i0}, :, None"]
            if i1 is not None:
                keys += [f"1:, {i1}", f"::-1, {i1}", f"-1, {i1}"]
            if i0 is not None and i1 is not None:
                keys += [f"np.ix_({i0}, {i1})"]
        if nd >= 3:
            i2 = self._int_index(runs, _common_len(sh, 2))
            if i0 is not None and i2 is not None:
                # advanced indices apart: NumPy puts their broadcast axes first
                keys += [f"{i0}, :, {i2}", f"{i0}, ::-1, {i2}"]
            if i2 is not None:
                keys += [f"0, :, {i2}", f"..., {i2}", f"-1, 1:, {i2}"]
            keys += [f"{mask0}, :, ::-1", ":, None, ..., 0"]
        return [k for k in keys if k is not None]

    def _e_mixidx(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None or a.ndim == 0:
            return None
        s = paren(a.src)
        keys = [f"{s}[{k}]" for k in self._mixed_keys(a, runs)]
        if a.ndim >= 2:          # (an index of an index)
            keys += [f"{s}[::-1][{s}[:, 0] > 0]", f"{s}[:, [0, -1]][{s}[:, 0] > 0]"]
        return self.eval(self.pick(keys, "mixed index"), runs)

    def _s_mixset(self, runs, top):
        """Writes through mixed subscripts (``x[idx, 1:] += v``, ``x[mask, ::-1] = v``,
        ``x[np.ix_(i, j)] *= 2``), and ``ufunc.at`` with a tuple of an array and a slice."""
        t = self.target(runs)
        if t is None or t.ndim == 0:
            return None
        key = self.pick(self._mixed_keys(t, runs), "mixed key")
        region = self.eval(f"{paren(t.src)}[{key}]", runs)
        if region is None:
            return None
        if self.chance(0.4):
            value = self.pick(["0", "1.5", "-1", "True", "np.nan", "7", "-0.0"])
        else:
            v = self.partner(region, runs, 1) if self.chance(0.7) else self.expr(runs, 1)
            if v is None or not self._cast_ok(v, t) or shares_memory(t.vals, v.vals):
                return None   # (NumPy's mask assignment does not buffer an overlapping value)
            value = v.src
        if t.ndim >= 2 and self.chance(0.2):
            i0 = self._int_index(runs, _common_len(t.shapes, 0))
            if i0 is not None:
                return [f"{self.pick(['np.add', 'np.multiply'])}.at({t.src}, ({i0}, slice(1, None)), {value})"]
        return [f"{t.src}[{key}] {self.pick(['=', '+=', '*=', '-=', '='], 'mixed op')} {value}"]

    # -- the library around the ufuncs ---------------------------------------------------------
    def _e_library(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None:
            return None
        s, nd, k = paren(a.src), a.ndim, a.kind
        sortish = not mixed_zeros(a.vals)      # (where +0.0 and -0.0 land in a sort is open)
        real = k in "biuf"
        opts = [f"np.select([{s} > 0, {s} < -1], [{a.src}, {s} * 2], default=-1)" if real else None,
                f"np.select([{s} != 0], [{a.src}])",
                f"np.isclose({a.src}, {s} * 1.000001)", f"np.allclose({a.src}, {s} + 1e-9)",
                f"np.array_equal({a.src}, {s}.copy())", f"np.array_equal({a.src}, {a.src}, equal_nan=True)",
                f"np.nan_to_num({a.src}, nan=-1.0, posinf=9.0, neginf=-9.0)" if k in "fc" else None,
                f"np.append({a.src}, 1)", f"np.resize({a.src}, 5)" if a.vals[0].size else None,
                f"np.digitize({a.src}, [-1, 0, 1.5])" if real and nd else None,
                f"np.interp({a.src}, [0.0, 1.0, 2.0], [1.0, -1.0, 3.0])" if k in "iuf" else None,
                f"np.choose(np.abs({s}).astype(np.intp) % 2, [{a.src}, {s} * 3])" if real and k != "b" else None]
        if real and sortish and nd:
            opts += [f"np.percentile({a.src}, 50)", f"np.quantile({a.src}, [0.25, 0.75], axis=-1)",
                     f"np.percentile({a.src}, 90, method='nearest')", f"np.median({a.src}, axis=0)"]
        if nd >= 1:
            n0 = _common_len(a.shapes, 0)
            opts += [f"np.insert({a.src}, 1, 0, axis=0)" if n0 else None, f"np.delete({a.src}, 0, axis=0)" if n0 else None,
                     f"np.delete({a.src}, [0, -1])" if a.vals[0].size >= 2 else None,
                     f"np.split({a.src}, 2)[1]" if n0 is not None and n0 % 2 == 0 else None,
                     f"np.array_split({a.src}, 3)[-1]", f"np.column_stack([{a.src}, {a.src}])" if nd <= 2 else None,
                     f"np.dstack([{a.src}, {s} + 1])", f"np.append({a.src}, {a.src}, axis=0)"]
        if nd == 1:
            opts += [f"np.meshgrid({a.src}, {s}[::-1])[0]", f"np.meshgrid({a.src}, {s}[:2], indexing='ij')[1]",
                     f"np.piecewise({a.src}, [{s} < 0, {s} >= 0], [lambda v: -v, lambda v: v * 2])" if real else None,
                     f"np.trim_zeros({a.src})"]
        return self.eval(self.pick([o for o in opts if o is not None], "library"), runs)

    # -- more ufuncs, NumPy scalars of every kind ----------------------------------------------
    def _e_ufunc_more(self, runs, depth):
        a = self.expr(runs, depth, array=True)
        if a is None:
            return None
        s, nd, k = paren(a.src), a.ndim, a.kind
        how = self.pick(["unary", "binary", "scalar", "accumulate", "kwargs"], "ufunc+")
        if how == "scalar":
            sc, op = self.pick(NUMPY_SCALARS, "numpy scalar"), self.pick(SCALAR_OPS, "scalar op")
            if op == "**" and (k in "iub" or "int" in sc) or op in "&|^" and ("float" in sc or "complex" in sc):
                return None
            return self.eval(f"{sc} {op} {s}" if self.chance(0.5) else f"{s} {op} {sc}", runs)
        if how == "unary":
            fns = ["np.cbrt", "np.trunc", "np.sinc", "np.deg2rad", "np.signbit", "np.spacing",
                   "np.frexp({})[0]", "np.frexp({})[1]", "np.modf({})[0]", "np.fabs"] if k in "f" else \
                ["np.trunc", "np.signbit", "np.fabs", "np.cbrt", "np.invert" if k in "iub" else "np.conj",
                 "np.bitwise_count" if k in "iu" and hasattr(np, "bitwise_count") else "np.square"]
            fn = self.pick(fns, "unary+")
            return self.eval(fn.format(a.src) if "{}" in fn else f"{fn}({a.src})", runs)
        if how == "binary":
            b = self.partner(a, runs, depth)
            if b is None:
                return None
            fn = self.pick(["np.logaddexp", "np.logaddexp2", "np.heaviside", "np.nextafter", "np.ldexp",
                            "np.float_power", "np.gcd", "np.lcm", "np.fmod", "np.remainder", "np.bitwise_and",
                            "np.left_shift", "np.logical_xor"], "binary+")
            if fn == "np.ldexp":          # (integer exponents, small)
                return self.eval(f"np.ldexp({a.src}, np.clip({paren(b.src)}, -8, 8).astype(np.int32))", runs) \
                    if b.kind in "iu" else self.eval(f"np.ldexp({a.src}, 3)", runs)
            if fn == "np.left_shift":
                return self.eval(f"np.left_shift({a.src}, 2)", runs)
            if fn == "np.float_power" and (has_nan(a.vals) or not self.chance(0.5)):
                return self.eval(f"np.float_power(np.abs({a.src}), 0.5)", runs)
            return self.eval(f"{fn}({a.src}, {b.src})", runs)
        if how == "accumulate":
            if not nd:
                return None
            fn = self.pick(["np.maximum.accumulate", "np.minimum.accumulate", "np.add.reduceat",
                            "np.multiply.accumulate", "np.subtract.accumulate"], "accumulate")
            if "imum" in fn and (mixed_zeros(a.vals) or has_nan(a.vals)):
                return None
            if fn.endswith("reduceat"):
                n0 = _common_len(a.shapes, 0)
                return None if not n0 else self.eval(f"np.add.reduceat({a.src}, {[0, n0 - 1] if n0 > 1 else [0]})", runs)
            return self.eval(f"{fn}({a.src}, axis={self.pick([0, -1])})", runs)
        fn = self.pick(["np.add", "np.multiply", "np.subtract", "np.true_divide", "np.sqrt", "np.negative"], "ufunc kw")
        kw = self.pick([", dtype=np.float64", ", dtype=np.float32", ", dtype=np.complex128",
                        f", where={s} > 0", ", casting='unsafe', dtype=np.int32", ", dtype=np.int64"], "ufunc kwarg")
        if "where" in kw:      # (where= without out=: the unselected elements are whatever np.empty held)
            kw += f", out=np.zeros(np.broadcast_shapes({s}.shape, {s}.shape), np.result_type({a.src}, 2.0))"
        args = a.src if fn in ("np.sqrt", "np.negative") else f"{a.src}, {s}[::-1]" if nd else f"{a.src}, 2"
        return self.eval(f"{fn}({args}{kw})", runs)
