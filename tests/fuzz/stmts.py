"""Statements for the program fuzzer, and the hypothesis strategy ``programs()``.

Top-level statements are appended one at a time and the whole program is re-run with
NumPy (programs.Gen.probe); statements inside a loop or an ``if`` are drawn against the
namespaces before the compound statement (with the loop variable bound), and the whole
compound statement is then checked the same way.
"""
from __future__ import annotations

import numpy as np
from hypothesis import assume, strategies as st

from .exprs import (MIN_MAX, ExprMixin, ill_conditioned, ill_conditioned_power, mixed_zeros, paren, shares_memory,
                    strided_both, zero_tie)
from .extra import ExtraMixin, rebinds
from .more import MoreMixin
from .wide import WideMixin
from .programs import Expr, Gen, Program, candidate_time_limit

AUG_OPS = ["+=", "*=", "-=", "/=", "//=", "%=", "**=", "&=", "|=", "^="]
OUT_FUNCS = ["np.add", "np.multiply", "np.subtract", "np.maximum", "np.negative", "np.exp", "np.abs",
             "np.sqrt", "np.true_divide", "np.floor_divide"]


class ProgramGen(WideMixin, ExtraMixin, MoreMixin, ExprMixin, Gen):

    def run(self) -> Program:
        self.make_args()
        runs = self.probe()
        # arguments drawn past the size limits (a later call's sizes, say): an invalid
        # example, not a failure (the long run stopped on this one)
        assume(runs is not None)
        n = self.draw(st.integers(0, self.max_stmts), label="statements")
        for _ in range(n):
            if self.ended:
                break
            new = self.statement(runs, top=True)
            if new is not None:
                runs = new
        return self.program("" if self.ended else self.ret(runs))

    # -- one statement -------------------------------------------------------------------
    def statement(self, runs: list[dict], top: bool) -> list[dict] | None:
        kinds = ["assign", "augassign", "setitem", "assign", "view_write", "out", "break", "loop",
                 "if_shape", "if_data", "helper", "container", "scalar", "scatter", "early_return", "reduce_out", "raising", "trip", "out_view", "mixset"]
        if not top:     # inside a block: simple statements, and compound ones one level down
            kinds = kinds[:7] + ["scalar", "scatter", "loop_index", "reduce_out", "out_view", "mixset"] + \
                (["loop", "if_shape", "trip"] if self.depth < 2 else [])
        kind = self.pick_kind(kinds, "statement")
        marks = len(self.data_conds), len(self.helpers)
        lines = getattr(self, "_s_" + kind)(runs, top)
        new = None
        if lines:
            new = self.try_stmt(["    " + ln for ln in lines], runs) if top else self.apply(lines, runs)
        self.expect_error = False
        if new is None and not self.ended:      # forget the ifs and helpers of a rejected statement
            del self.data_conds[marks[0]:], self.helpers[marks[1]:]
        return new

    def apply(self, lines: list[str], runs: list[dict]) -> list[dict] | None:
        """Run ``lines`` on copies of the namespaces (inside a compound statement)."""
        from .programs import _ok_value
        import copy
        import warnings
        out = []
        try:
            code = compile("\n".join(lines), "<candidate>", "exec")
        except SyntaxError:
            return None
        for ns in runs:
            env = {**self.globals, **copy.deepcopy(ns)}
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"), candidate_time_limit():
                    warnings.simplefilter("ignore")
                    exec(code, env)
            except Exception:      # noqa: BLE001 - an invalid candidate
                return None
            new = {k: v for k, v in env.items() if k in ns or k not in self.globals}
            if not all(_ok_value(v) for v in new.values()):
                return None
            out.append(new)
        self.pending.extend(lines)
        return out

    def block(self, runs: list[dict], n_max: int = 3) -> tuple[list[str], list[dict]]:
        """Statements of a loop body or an if arm (indented by 4), and the namespaces after them."""
        saved, self.pending = self.pending, []
        self.depth += 1
        for _ in range(self.draw(st.integers(1, n_max))):
            new = self.statement(runs, top=False)
            if new is not None:
                runs = new
        lines, self.pending = self.pending, saved
        self.depth -= 1
        return ["    " + ln for ln in lines] or ["    pass"], runs

    def target(self, runs: list[dict]) -> Expr | None:
        """An array to write into: an argument, a local or a view of one."""
        names = self.names(runs, lambda e: isinstance(e.v, np.ndarray))
        return self.pick(names, "target") if names else None

    # -- simple statements ---------------------------------------------------------------
    def _s_assign(self, runs, top):
        e = self.expr(runs, self.pick([2, 1, 3]))
        if e is None:
            return None
        names = [n.src for n in self.names(runs) if not n.src.startswith(("x", "s", "L", "state"))]
        name = self.pick(names) if names and self.chance(0.3) else self.fresh()
        return [f"{name} = {e.src}"]

    def _s_augassign(self, runs, top):
        t = self.target(runs)
        if t is None:
            return None
        op = self.pick(AUG_OPS, "augop")
        e = self.partner(t, runs, 1) if self.chance(0.6) else self.expr(runs, 1)
        if e is None:
            return None
        if op == "**=" and (t.kind in "iub" or e.kind in "iub"):
            return [f"{t.src} **= 2"]
        if op == "**=" and ill_conditioned_power(t.vals, e.vals):
            return None
        return [f"{t.src} {op} {e.src}"]

    def _s_setitem(self, runs, top):
        t = self.target(runs)
        if t is None or t.ndim == 0:
            return [f"{t.src}[...] = {self.pick(['1', '0.5', 'True'])}"] if t is not None else None
        n = min(sh[0] for sh in t.shapes)
        idx = self.pick(["int", "slice", "mask", "ellipsis", "fancy", "col", "slice2", "overlap", "fill"],
                        "index")
        if idx == "overlap":     # a write from an overlapping part of the same array
            src, dst = self.pick([("1:", ":-1"), (":-1", "1:"), ("::-1", "..."), ("...", "::-1")])
            op = self.pick(["=", "+=", "*="])
            return [f"{t.src}[{dst}] {op} {paren(t.src)}[{src}]"]
        if idx == "fill":
            value = self.pick(["0", "1.5", "-2", "True"])
            return [self.pick([f"{t.src}.fill({value})", f"np.copyto({t.src}, {value})",
                               f"np.copyto({t.src}, {paren(t.src)}[::-1])"])]
        if idx == "int":
            key = str(self.pick([0, -1, 1]))
        elif idx == "slice":
            key = self.slice_text(n)
        elif idx == "mask":
            key = f"{paren(t.src)} > 0" if t.kind != "b" else t.src
        elif idx == "ellipsis":
            key = "..."
        elif idx == "fancy":
            key = self.pick(["[0, -1]", "[1, 0]"])
        elif idx == "col" and t.ndim >= 2:
            key = f":, {self.pick([0, -1, '::2', '1:'])}"
        else:
            key = f"{self.slice_text(n)}, {self.slice_text(min(sh[-1] for sh in t.shapes))}" if t.ndim >= 2 \
                else self.slice_text(n)
        region = self.eval(f"{paren(t.src)}[{key}]", runs)
        if region is None:
            return None
        how = self.pick(["expr", "scalar", "aug"])
        if how == "scalar":
            value = self.pick(["0", "1.5", "-1", "True", "np.nan", "7", "-0.0"])
        else:
            value_e = self.partner(region, runs, 1) if self.chance(0.7) else self.expr(runs, 1)
            if value_e is None:
                return None
            if not self._cast_ok(value_e, t):
                return None
            if idx == "mask" and how == "expr" and shares_memory(t.vals, value_e.vals):
                return None   # NumPy's own bug: a mask assignment does not buffer an overlapping value
            value = value_e.src
        if how == "aug":
            return [f"{t.src}[{key}] {self.pick(['+=', '*=', '-='])} {value}"]
        return [f"{t.src}[{key}] = {value}"]

    def _cast_ok(self, value: Expr, target: Expr) -> bool:
        """Float values written into integer arrays must be finite and in range (else the
        conversion is undefined behaviour in C and NumPy's result is the platform's)."""
        if value.kind not in "fc" or target.kind not in "iu":
            return True
        info = np.iinfo(target.dtype)
        return all(np.isfinite(v).all() and (np.size(v) == 0 or (np.min(v) > info.min and np.max(v) < info.max))
                   for v in map(np.real, value.vals))

    def _s_view_write(self, runs, top):
        t = self.target(runs)
        if t is None:
            return None
        v = self.view_of(t, runs)
        if v is None or not isinstance(v.v, np.ndarray):
            return None
        name = self.fresh("w")
        op = self.pick(["*=", "+=", "[...] =", "-="])
        value = self.pick(["2", "1", "0.5", "-1"]) if self.chance(0.6) else None
        if value is None:
            e = self.partner(v, runs, 1)
            if e is None or not self._cast_ok(e, v):
                return None
            value = e.src
        if op == "[...] =":
            return [f"{name} = {v.src}", f"{name}[...] = {value}"]
        return [f"{name} = {v.src}", f"{name} {op} {value}"]

    def _s_out(self, runs, top):
        t = self.target(runs)
        if t is None:
            return None
        fn = self.pick(OUT_FUNCS, "out func")
        dest = t.src if self.chance(0.6) else f"{paren(t.src)}[{self.pick(['::-1', '...', '1:', '::2'])}]"
        region = self.eval(dest, runs) if t.ndim else t
        if region is None:
            return None
        a = self.partner(region, runs, 1)
        if a is None:
            return None
        if fn in ("np.negative", "np.exp", "np.abs", "np.sqrt"):
            if fn == "np.negative" and strided_both(a.vals, region.vals):
                return None   # NumPy 2.4's own bug (docs/fuzzing.md, "NumPy's own bugs")
            if ill_conditioned(fn, a.vals, repeats=5 if self.depth else 1):
                return None   # (a loop body may apply it to its own output again)
            call = f"{fn}({a.src}, out={dest})"
        else:
            b = self.partner(region, runs, 1)
            if b is None:
                return None
            if fn in MIN_MAX and zero_tie(a.vals, b.vals):
                return None
            call = f"{fn}({a.src}, {b.src}, out={dest})"
        if self.chance(0.3):
            return [f"{self.fresh('r')} = {call}"]
        if self.chance(0.2):
            # (np.cumsum of a 0-d array into a 0-d out= crashes NumPy 2.4 itself)
            red = self.pick(["np.sum", "np.max", "np.cumsum"] if a.ndim and region.ndim else ["np.sum", "np.max"])
            if red == "np.max" and mixed_zeros(a.vals):
                return None
            return [f"{red}({a.src}, axis=0, out={dest})"]
        return [call]

    def _s_break(self, runs, top):
        e = self.expr(runs, 1)
        how = self.pick(["print", "graph_break", "print_shape", "print_str"])
        if how == "graph_break" or e is None:
            return ["kiln.graph_break()"]
        if how == "print_shape" and e.is_array:
            return [f"print({paren(e.src)}.shape, {paren(e.src)}.dtype, file=SINK)"]
        if how == "print_str":
            return [f"print('value', repr({e.src}), file=SINK)"]
        return [f"print({e.src}, file=SINK)"]

    def _s_scalar(self, runs, top):
        e = self._e_pyscalar(runs, 1)
        if e is None:
            return None
        return [f"{self.fresh('n')} = {e.src}"]

    def _s_container(self, runs, top):
        e = self.expr(runs, 1)
        if e is None:
            return None
        if "state" in self.params:
            key = self.pick(["'n'", "'y'", "'scale'"])
            if self.chance(0.4):
                return [f"state['n'] += 1", f"{self.fresh()} = {paren(e.src)} * state['scale']"]
            return [f"state[{key}] = {e.src}"]
        if "L" in self.params:
            how = self.pick(["append", "loop", "index"])
            if how == "append":
                return [f"L.append({e.src})"]
            if how == "index":
                return [f"{self.fresh()} = L[0] + L[-1]"]
            acc = self.fresh("acc")
            return [f"{acc} = 0", "for item in L:", f"    {acc} = {acc} + item * 2"]
        name = self.fresh("d")
        return [f"{name} = {{'a': {e.src}}}", f"{name}['b'] = {name}['a'] * 2"]

    # -- compound statements -------------------------------------------------------------
    def _s_loop(self, runs, top):
        arrays = self.names(runs, lambda e: isinstance(e.v, np.ndarray) and e.ndim >= 1)
        how = self.pick(["range", "range_shape", "list", "rows", "enumerate", "while"], "loop")
        var = self.fresh("i")
        if how == "range" or (how == "range_shape" and not arrays):
            n = self.pick([2, 3, 1, 0])
            header, values = f"for {var} in range({n}):", [0] * len(runs) if n else None
        elif how == "range_shape":
            a = self.pick(arrays)
            header, values = f"for {var} in range({a.src}.shape[0]):", [0] * len(runs)
            if any(sh[0] == 0 for sh in a.shapes):
                values = None
        elif how == "list" and arrays:
            a = self.pick(arrays)
            header = f"for {var} in [{a.src}, {paren(a.src)} * 2]:"
            values = a.vals
        elif how == "rows" and arrays:
            a = self.pick(arrays)
            header, values = f"for {var} in {a.src}:", [v[0] if len(v) else None for v in a.vals]
            if any(v is None for v in values):
                values = None
        elif how == "enumerate" and arrays:
            a = self.pick(arrays)
            header, values = f"for {var}, row{var} in enumerate({a.src}):", [0] * len(runs)
            if any(len(v) == 0 for v in a.vals):
                return None
            inner = [{**ns, var: 0, f"row{var}": v[0]} for ns, v in zip(runs, a.vals)]
            return [header, *self.block(inner)[0]]
        elif how == "while":
            c = self.fresh("k")
            inner = [{**ns, c: 0} for ns in runs]
            body = self.block(inner, 2)[0]
            if rebinds(c, body):
                return None   # a body rebinding the counter need not end
            return [f"{c} = 0", f"while {c} < {self.pick([2, 3, 1])}:", *body, f"    {c} += 1"]
        else:
            return None
        if values is None:       # an empty loop: its body is never checked, keep it trivial
            return [header, "    pass"]
        inner = [{**ns, var: v} for ns, v in zip(runs, values)]
        return [header, *self.block(inner)[0]]

    def _s_if_shape(self, runs, top):
        arrays = self.names(runs, lambda e: isinstance(e.v, np.ndarray))
        scalars = self.names(runs, lambda e: isinstance(e.v, (int, float, bool, np.generic)))
        opts = []
        if arrays:
            a = self.pick(arrays)
            opts += [f"{a.src}.shape[0] > 2" if a.ndim else f"{a.src}.ndim == 0",
                     f"{a.src}.ndim == 2", f"{a.src}.size > 6", f"{a.src}.dtype == np.float32",
                     f"{a.src}.dtype.kind == 'f'"]
        if scalars:
            s = self.pick(scalars)
            opts += [f"{s.src} > 0", f"{s.src}"]
        if not opts:
            return None
        cond = self.pick(opts)
        then = self.block(runs)[0]
        if self.chance(0.5):
            return [f"if {cond}:", *then, "else:", *self.block(runs)[0]]
        return [f"if {cond}:", *then]

    def _s_if_data(self, runs, top):
        if self.data_ifs >= 2:
            return None
        arrays = self.names(runs, lambda e: isinstance(e.v, np.ndarray) and e.v.size > 0)
        if not arrays:
            return None
        a = self.pick(arrays)
        s = paren(a.src)
        cond = self.pick([f"{s}.sum() > 0", f"({s} > 0).any()", f"{s}.max() > 1", f"{s}.flat[0] > 0",
                          f"float({s}.mean()) < 0.5", f"{s}.all()"])
        then, _ = self.block(runs)
        other = self.block(runs)[0] if self.chance(0.6) else None
        # probes run each arm in turn: the condition is a placeholder until the program is printed
        lines = [f"if {self.data_cond(cond)}:", *then]
        return lines + ["else:", *other] if other else lines

    def _s_helper(self, runs, top):
        args = [e for e in self.names(runs) if isinstance(e.v, (np.ndarray, np.generic, int, float))]
        if not args:
            return None
        chosen = [self.pick(args)]
        if len(args) > 1 and self.chance(0.5):
            second = self.pick(args)
            if second.src != chosen[0].src:
                chosen.append(second)
        params = [f"p{k}" for k in range(len(chosen))]
        inner = [{p: e.vals[n] for p, e in zip(params, chosen)} for n in range(len(runs))]
        body, after = self.block(inner, 2)
        ret = self.expr(after, 2)
        self.n_helpers += 1
        name = f"helper{self.n_helpers}"
        self.helpers.extend([f"def {name}({', '.join(params)}):", *body,
                             f"    return {ret.src if ret else params[0]}", ""])
        return [f"{self.fresh()} = {name}({', '.join(e.src for e in chosen)})"]

    # -- the return ----------------------------------------------------------------------
    def ret(self, runs: list[dict]) -> str:
        """Usually every local the program made (so that no computed value goes unchecked),
        sometimes one value or a container of them."""
        names = self.names(runs)
        made = [e.src for e in names if e.src not in self.params]
        how = self.pick(["all", "all", "all", "one", "expr", "dict", "none", "args"], "return")
        if how == "one" and names:
            return self.pick(names).src
        if how == "expr":
            e = self.expr(runs, 1)
            if e is not None:
                return e.src
        if how == "dict" and made:
            return "{" + ", ".join(f"{n!r}: {n}" for n in made) + "}"
        if how == "none":
            return ""
        if how == "args":
            made = [e.src for e in names if e.src in self.params] + made
        if not made:
            return ""
        return ", ".join(made) + ("," if len(made) == 1 else "")


@st.composite
def programs(draw, max_stmts: int = 8) -> Program:
    return ProgramGen(draw, max_stmts).run()
