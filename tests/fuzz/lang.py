"""A differential generator of the Python language around arrays (stop 48).

The other generators draw NumPy expressions in straight-line code; this one draws the
statements real functions wrap them in, so capture's bytecode handlers (3.11, 3.12 and
3.13 differ) meet them: nested ``if``/``elif``/``else`` on scalars read from arrays,
``for``/``while`` with ``break``/``continue``/``else``, comprehensions (list, dict, set,
generators into ``sum``/``any``/``all``/``np.array``, a walrus inside), closures with
``nonlocal``, lambdas with defaults, keyword-only arguments, ``*args``/``**kwargs``,
unpacking (star targets, nested tuples), walrus, chained comparisons, conditional
expressions, augmented assignment on subscripts and on attributes of a small object,
f-strings, module globals, ``try``/``except``/``finally``, ``with np.errstate(...)``,
``match`` (literals, or-patterns, guards, sequence and class patterns), early returns in
loops, ``del``, ``assert``, ``isinstance``, calls to plain helpers, to helpers compiled on
their own (``@INNER``: ``kiln.compile`` with the caller's backend, nothing for the
reference) and recursion two or three deep.

A program takes ``x, y, n, s, box``: two 1-d arrays (float64 or int64; float values are
multiples of 1/4 in [-2, 2], so sums and products are exact in any order), a Python int, a
Python float and a :class:`Box` (attributes ``v``, a float, and ``w``, an array), and
returns ``acc, out, cnt`` (a float, a list, an int) with some of the names it made. It is
called three times with fresh data (so a branch on data goes either way; the third call
may change the length and the dtype).

The oracle is the same function run plainly on copies of the inputs: return values
bit-exact (NaN where NumPy has NaN, zeros' signs), types, dtypes and shapes, exceptions
(type and message), the final state of every argument (the box's attributes too), and
RuntimeWarnings (kiln's among NumPy's; KILN_FUZZ_LANG_WARNINGS=2: the same,
=0: not compared). Draws are ``random.Random(seed)``: a seed names a program, and
``minimize`` drops statements and calls while the mismatch stays.

In the suite ``test_lang.py`` checks a fixed seed set; a long run (docs/fuzzing.md)::

    KILN_FUZZ_LANG_SEED=1 KILN_FUZZ_LANG_PROGRAMS=500 python -m tests.fuzz.lang
"""
from __future__ import annotations

import contextlib
import io
import linecache
import math
import os
import random
import re
import sys
import traceback
import warnings

import numpy as np

import kiln

from . import runner
from .runner import TIME_LIMIT, Mismatch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_programs import _check_no_fallback, _run  # noqa: E402


class Box:
    """The small object programs take and write attributes of (compared by its __dict__)."""

    __match_args__ = ("v", "w")

    def __init__(self, v, w):
        self.v = v
        self.w = w

    def __repr__(self) -> str:
        return f"Box({self.v!r}, {self.w!r})"


# Module-level names every program may read: globals and helpers. ``INNER`` is
# kiln.compile (with the caller's backend) or, for the reference, nothing.
PRELUDE = '''\
G = 3
GA = np.array([0.5, -1.0, 2.0])


def h_plain(a, k=2):
    return a * k + 1


def h_kw(a, *, scale=1.5, shift=0):
    return a * scale - shift


def h_star(*args, **kw):
    t = 0
    for a in args:
        t = t + a
    return t * kw.get("k", 1)


def h_rec(a, d):
    if d <= 0:
        return a
    return h_rec(a * 0.5 + 1, d - 1)


def h_raise(a):
    if a.size == 0:
        raise ValueError("empty array")
    return a[-1]


def h_setg(k):
    global G
    G = k % 4 + 1
    return G


def h_memo(v, seen=[]):
    seen.append(v)
    return len(seen)


def h_pair(a):
    return a.min(initial=0), (a.max(initial=0), len(a))


@INNER
def h_comp(a, b):
    return a - b * 2


@INNER
def h_comp_loop(a, k):
    t = 0.0
    for i in range(k):
        t += float(a.sum()) * i
    return t
'''


class LangProgram:
    """A drawn program: its body (lines, 4-space indented), return expression and calls."""

    def __init__(self, body: list[str], ret: str, calls: list[str]) -> None:
        self.body, self.ret, self.calls = body, ret, calls

    def source(self) -> str:
        lines = ["def prog(x, y, n, s, box):", "    acc = 0.0", "    out = []", "    cnt = 0", *self.body,
                 f"    return {self.ret}"]
        return PRELUDE + "\n\n" + "\n".join(lines) + "\n"

    def build(self, backend: str | None):
        """A fresh ``prog`` (its own module globals); ``backend`` None: plain Python."""
        source = self.source()
        filename = f"<kiln-langfuzz-{id(source)}-{random.getrandbits(32)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        inner = (lambda f: f) if backend is None else (lambda f: kiln.compile(f, backend=backend))
        ns: dict = {"np": np, "kiln": kiln, "Box": Box, "math": math, "contextlib": contextlib, "INNER": inner, "SINK": io.StringIO(), "__name__": "kiln_langfuzz"}
        exec(compile(source, filename, "exec"), ns)
        return ns["prog"]

    def args(self, k: int) -> tuple:
        ns: dict = {"np": np, "Box": Box}
        exec(self.calls[k], ns)
        return ns["args"]

    def reproducer(self) -> str:
        source = self.source().replace("@INNER", "@kiln.compile").replace("def prog(", "@kiln.compile\ndef prog(")
        calls = "\n".join(f"# call {k}\n{c}print(prog(*args))" for k, c in enumerate(self.calls))
        return ("import numpy as np\nimport kiln\nfrom tests.fuzz.lang import Box\n\n"
                f"{source}\n{calls}\n")


# ----------------------------------------------------------------------------- drawing

ARR_EXPRS = ["X * 2", "X + Y", "np.abs(X)", "X[::-1]", "X - S", "np.cumsum(X)", "X * G", "np.sort(X)",
             "h_plain(X)", "h_kw(X, scale=S)", "h_kw(X, shift=N)", "h_comp(X, Y)", "h_rec(X, N % 3 + 1)",
             "np.array([V * 2 for V in X])", "np.array([V for V in X if V > S])", "X if N % 2 else Y",
             "(lambda a, k=S: a * k + G)(X)", "h_star(X, Y, k=N)", "np.where(X > S, X, Y)", "X[X > 0]"]
SCA_EXPRS = ["float(X.sum())", "X.sum()", "len(X)", "int(np.count_nonzero(X > 0))", "X.max(initial=-1)",
             "float(np.dot(X, X))", "sum(V * V for V in X)", "S * N", "N // 2 + G", "-S",
             "float(X.sum()) if X.size else S", "h_comp_loop(X, N)", "h_star(S, N, k=2)",
             "h_star(*[S, N], **{'k': 3})", "X.size and float(X[0])", "float(h_rec(S, 2))", "max(N, len(X))",
             "sum(X.tolist()) + S", "float(GA[:len(X)].sum())", "h_pair(X)[1][0]", "round(float(X.sum()), 2)",
             "round(X.sum())", "abs(X.sum() - S)", "divmod(S, 0.75)[0]", "min(X, default=S)",
             "max(X.tolist(), key=abs, default=0)", "sum(X)", "X.item(0) if X.size else 0", "N ** 2 // 3", "-N // 2",
             "N % -3", "2 ** -N", "int(X[0]) if X.size else -1", "float(np.prod(X))", "X.sum() / len(X)",
             "float(X.sum()) / N", "bool(X.size and X[0])", "X.shape[0] * G", "np.float32(S) * N", "S / N",
             "X.mean() if X.size else S", "float(X @ X)", "sum(1 for V in X if V > S)", "next(iter(X), S)"]
CONDS = ["X.sum() > S", "X.size > N", "S < X.sum() <= N", "np.any(X > 1)", "isinstance(S, float)",
         "N in (1, 2)", "not X.size", "acc > S", "cnt % 2 == 0", "len(out) > N", "X.size > 1 and X[1] > X[0]",
         "any(V < S for V in X)", "all(V >= 0 for V in X)", "0 <= N < X.size", "isinstance(acc, np.floating)",
         "X.dtype == np.int64", "box.v > S", "G > N > 0"]
UPDATES = ["acc += SE", "acc = acc * 0.5 + SE", "out.append(SE)", "out.append(AE)", "cnt += 1", "box.v += SE",
           "box.w = box.w * 2", "box.w[0] += 1", "acc += SE if C else -1.0", "out.append(f'{acc:.3f}|{cnt}|{S!r}')",
           "out.append(f'{float(X.sum()):+.2f}/{N:>3}')", "X[N % 2] += S", "out.append(C)", "cnt += int(C)",
           "out[-1] = AE", "acc -= h_comp_loop(X, 2)", "acc += h_star(S, N)", "kiln.graph_break()",
           "out.append(str(X))", "del out[:1]", "box.v = box.v * 2 if C else -box.v",
           "out.append(list(map(float, X)))", "out.append(list(filter(lambda q: q > S, X.tolist())))",
           "out.append([f() for f in [lambda v=V: v * 2 for V in X]])", "out.append([f() for f in [lambda: V for V in X]])",
           "out.append(list(reversed(X)))", "out.append(list(enumerate(X, start=N)))",
           "out.append(dict(zip(X.tolist(), range(N))))", "out.append('%.3f|%d' % (X.sum(), N))",
           "out.append(X.tolist())", "out.append((*X.shape, N))", "out.append(sorted(X, reverse=True))",
           "out.append(X.dtype.kind == 'f')", "h_setg(N)", "GA[N % 3] += S", "cnt += h_memo(S)",
           "out.append(G * X)", "out.append(X.size and X[0])", "out.append(N and S or X.sum())",
           "out.append(math.floor(X.sum()))", "out.append(math.sqrt(abs(S)))", "out.append(float(-X.size - 1) ** 0.5)",
           "out.append(', '.join(f'{V:.1f}' for V in X))", "out.append((X.sum(), N) < (Y.sum(), 2))", "X[...] = X * 2", "out.append(X.astype(np.int64).tolist())"]


class LangGen:
    """Draws one program from ``seed``."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.rng = np.random.default_rng(seed)
        self.k = 0              # fresh-name counter
        self.made: list[str] = []

    def fresh(self, prefix: str) -> str:
        self.k += 1
        return f"{prefix}{self.k}"

    def arr(self) -> str:
        return self.r.choice(["x", "y", "x", "y"] + [m for m in self.made if m.startswith("a")])

    def fill(self, text: str, loopvar: str | None = None) -> str:
        """Replace the placeholders (expressions first, then names) with drawn ones."""
        r = self.r
        for _ in range(4):
            text = _AE.sub(lambda m: r.choice(ARR_EXPRS), text, 1)
            text = _SE.sub(lambda m: r.choice(SCA_EXPRS), text, 1)
            text = _C.sub(lambda m: r.choice(CONDS), text, 1)
        names = {"X": self.arr, "Y": self.arr, "V": lambda: "v_",
                 "S": lambda: r.choice(["s", "s", "acc"] + ([loopvar] if loopvar else [])),
                 "N": lambda: r.choice(["n", "n", "cnt", "G"])}
        return _NAME.sub(lambda m: names[m.group(0)](), text)

    def update(self, ind: str, loopvar: str | None = None) -> list[str]:
        return [ind + self.fill(self.r.choice(UPDATES), loopvar)]

    def block(self, ind: str, depth: int, loopvar: str | None = None, in_loop: bool = False) -> list[str]:
        r = self.r
        lines = []
        for _ in range(r.choice([1, 1, 2])):
            if depth > 0 and r.random() < 0.35:
                lines += self.compound(ind, depth - 1, loopvar, in_loop)
            else:
                lines += self.update(ind, loopvar)
        if in_loop and r.random() < 0.3:
            lines += [ind + f"if {self.fill(r.choice(CONDS), loopvar)}:", ind + "    " + r.choice(["break", "continue"])]
        return lines

    def compound(self, ind: str, depth: int, loopvar: str | None = None, in_loop: bool = False) -> list[str]:
        r, f = self.r, self.fill
        i4 = ind + "    "
        kind = r.choice(["if", "if", "for", "for", "while", "try", "errstate", "match", "closure", "early", "late", "suppress",
                         "gen", "mutloop"])
        if kind == "if":
            lines = [ind + f"if {f(r.choice(CONDS), loopvar)}:", *self.block(i4, depth, loopvar, in_loop)]
            for _ in range(r.choice([0, 1, 1, 2])):
                lines += [ind + f"elif {f(r.choice(CONDS), loopvar)}:", *self.block(i4, depth, loopvar, in_loop)]
            if r.random() < 0.6:
                lines += [ind + "else:", *self.block(i4, depth, loopvar, in_loop)]
            return lines
        if kind == "for":
            i, v = self.fresh("i"), self.fresh("v")
            head = r.choice([f"for {i} in range(N):", f"for {v} in X:", f"for {i}, {v} in enumerate(X):",
                             f"for {i}, {v} in zip(range(N + 1), X):", f"for {v} in X.tolist():",
                             f"for {i} in range(len(X) - 1, -1, -1):", f"for {i} in (1, 2, G):"])
            var = v if v in head else i
            lines = [ind + f(head), *self.block(i4, depth, var, True)]
            if r.random() < 0.4:
                lines += [ind + "else:", *self.block(i4, 0, loopvar, in_loop)]
            return lines
        if kind == "while":
            k = self.fresh("k")
            lines = [ind + f"{k} = 0", ind + f(f"while {k} < N + 1 and {r.choice(CONDS)}:", loopvar),
                     i4 + f"{k} += 1", *self.block(i4, depth, k, True)]
            if r.random() < 0.4:
                lines += [ind + "else:", *self.block(i4, 0, loopvar, in_loop)]
            return lines
        if kind == "try":
            risky = r.choice(["acc += float(X[N])", "acc += float(h_raise(X))", "assert X.size > 1, f'short {X.size}'",
                              "acc += 1 / len(X)", "out.append(X.reshape(2, -1))", "del out[N]",
                              "acc += {0: 1.5}[cnt]", "out.append(X + np.ones(2))", "a_, *b_ = X.tolist()"])
            exc = r.choice(["(IndexError, ValueError) as e", "Exception as e", "(AssertionError, ZeroDivisionError, "
                            "KeyError, ValueError, IndexError) as e"])
            handle = r.choice(["out.append(str(e))", "out.append(type(e).__name__)", "cnt -= 1", "out.append(repr(e))"])
            lines = [ind + "try:", i4 + f(risky), *self.block(i4, 0, loopvar, in_loop), ind + f"except {exc}:",
                     i4 + handle]
            if r.random() < 0.4:
                lines += [ind + "else:", *self.block(i4, 0, loopvar, in_loop)]
            if r.random() < 0.6:
                lines += [ind + "finally:", i4 + "cnt += 1"]
            return lines
        if kind == "suppress":
            return [ind + "with contextlib.suppress(IndexError, ZeroDivisionError):", i4 + f("acc += float(X[N])"),
                    *self.block(i4, 0, loopvar, in_loop)]
        if kind == "errstate":
            t = self.fresh("t")
            if r.random() < 0.5:
                return [ind + "with np.errstate(divide='ignore', invalid='ignore'):",
                        i4 + f(f"{t} = X / (X - Y)"), i4 + f"out.append({t})"]
            return [ind + "with np.errstate(all='raise'):", i4 + "try:", i4 + "    " + f(f"{t} = np.log(X - S)"),
                    i4 + f"    out.append({t})", i4 + "except FloatingPointError as e:", i4 + "    out.append(str(e))"]
        if kind == "match":
            subj = r.choice(["n", "X.shape", "box", "(N, S)", "len(out)", "X.tolist()", "{'k': N, 'v': S}"])
            subj = f(subj) if subj != "box" else subj
            if subj.endswith(".shape"):
                cases = ["case (0,):", "case (k_,) if k_ > N:", "case _:"]
            elif subj == "box":
                cases = ["case Box(v=float() as bv_) if bv_ > 0:", "case Box(bv_, np.ndarray()) if bv_ < S:",
                         "case Box(w=np.ndarray()):", "case _:"]
            elif subj.startswith("{"):
                cases = ["case {'k': 0}:", "case {'v': float() as vv_} if vv_ > 0:", "case {'k': int(), **rest_}:", "case _:"]
            elif subj.endswith("tolist()"):
                cases = ["case []:", "case [a_]:", "case [a_, *rest_] if a_ > S:", "case [_, _, *_]:", "case _:"]
            elif subj.startswith("("):
                cases = ["case (0, _):", "case (1 | 2 as q_, float()):", "case (int(), sv_) if sv_ < 0:", "case _:"]
            else:
                cases = ["case 0:", "case 1 | 2:", "case int(q_) if q_ > 3:", "case _:"]
            lines = [ind + f"match {subj}:"]
            for c in cases:
                lines += [i4 + f(c, loopvar), *self.block(i4 + "    ", 0, loopvar, in_loop)]
            return lines
        if kind == "closure" and not in_loop:
            fn = self.fresh("fn")
            return [ind + f"def {fn}(a, k=1):", i4 + "nonlocal acc, cnt", i4 + "acc += float(a.sum()) * k",
                    *self.block(i4, 0), i4 + "cnt += 1", i4 + "return acc", ind + f"out.append({fn}({f('X')}))",
                    ind + f"out.append({fn}({f('Y')}, k={f('N')}))"]
        if kind == "late":          # closures made in a loop read the loop variable late
            fs, v = self.fresh("fs"), self.fresh("v")
            return [ind + f"{fs} = []", ind + f(f"for {v} in X:"),
                    i4 + f"{fs}.append(lambda k=1: {v} * k)" if r.random() < 0.5 else i4 + f"{fs}.append(lambda {v}={v}: {v} + 1)",
                    *self.block(i4, 0, v, True), ind + f"out.append([g() for g in {fs}])"]
        if kind == "gen" and not in_loop:
            g, v = self.fresh("gen"), self.fresh("v")
            return [ind + f"def {g}(a):", i4 + "for q in a:", i4 + f("    if q > S:"), i4 + "        yield q * 2",
                    i4 + f("    elif q < -S:"), i4 + "        return", i4 + "    kiln.graph_break()" if r.random() < 0.3
                    else i4 + "    cnt_ = 1", ind + f(f"for {v} in {g}(X):"), *self.block(i4, depth, v, True)]
        if kind == "mutloop":       # writing the array a loop iterates over
            i, v = self.fresh("i"), self.fresh("v")
            return [ind + f"for {i}, {v} in enumerate(x):", i4 + f(f"x[{i}] = {v} * 2 + S"),
                    i4 + f(f"x[-1] += {v}"), *self.block(i4, depth, v, True)]
        if kind == "early" and not in_loop:
            v = self.fresh("v")
            return [ind + f(f"for {v} in X:"), i4 + f"if {v} > {f('S')}:", i4 + f"    return {v}, acc, out",
                    i4 + "cnt += 1"]
        return self.update(ind, loopvar)

    def top(self) -> list[str]:
        """One top-level statement: binds a new name, or a compound statement."""
        r, f = self.r, self.fill
        kind = r.random()
        if kind < 0.45:
            return self.compound("    ", r.choice([1, 1, 2]))
        if kind < 0.55:
            return self.update("    ")
        a = self.fresh("a")
        t = self.fresh("t")
        choices = [
            ([f"{a} = AE"], a), ([f"{t} = SE"], t),
            ([f"{t} = [V * 2 for V in X if V > S]"], t), ([f"{t} = {{i_: float(V) for i_, V in enumerate(X)}}"], t),
            ([f"{t} = {{int(V) % 3 for V in X}}"], t), ([f"{t} = any(V > S for V in X)", f"out.append(all(V < N for V in X))"], t),
            ([f"{t} = [w_ for V in X if (w_ := V * 2) > S]", "out.append(w_ if X.size else None)"], t),
            ([f"lo_, hi_ = X.min(initial=0), X.max(initial=0)", f"{t} = hi_ - lo_"], t),
            ([f"first_, *rest_ = X.tolist() + [S]", f"{t} = (first_, len(rest_))"], t),
            ([f"(p_, q_), {t} = (N, S), X.sum()", "acc += p_ * q_"], t),
            ([f"mn_, (mx_, ln_) = h_pair(X)", f"{t} = mn_ + mx_ * ln_"], t),
            ([f"{a}, *{t} = X", f"out.append({a})"], t),
            ([f"if ({t} := float(X.sum())) > S:", f"    acc += {t}"], t),
            ([f"{t} = AE", f"del {t}", f"{t} = SE"], t),
            ([f"{a} = X.copy()", f"{a}[N % max({a}.size, 1):] *= 2" if r.random() < 0.5 else f"{a}[...] += S"], a),
            ([f"{t} = box.w.copy()", "box.w += S", f"box.v = float({t}.sum())"], t),
            ([f"{t} = {{'a': 0.0, 'b': S}}", f"{t}['a'] += SE", f"{t}['b'] *= 2"], t),
            ([f"assert C, f'failed at {{cnt}}'", f"{t} = cnt"], t),
            ([f"{t} = SE", f"{t} = {t} if isinstance({t}, (int, float)) else float({t})"], t),
            ([f"{t} = f'{{SE}}:{{N!r}}:{{S:.2e}}'"], t),
            ([f"{t} = h_rec(S, N % 3 + 1)"], t),
            ([f"{t} = GA * G if X.size % 2 else GA[::-1]"], t),
        ]
        lines, name = r.choice(choices)
        lines = ["    " + f(ln) for ln in lines]
        self.made.append(name)
        return lines

    def calls(self) -> list[str]:
        r, rng = self.r, self.rng
        dtype = r.choice(["float64", "float64", "int64"])
        size = r.choice([3, 4, 2, 5, 1, 0, 3])
        calls = []
        for k in range(r.choice([3, 3, 2])):
            if k == 2 and r.random() < 0.5:
                size = r.choice([0, 1, 2, 4, 6])
                dtype = r.choice(["float64", "int64"]) if r.random() < 0.3 else dtype
            ysize = size if r.random() < 0.85 else 1

            def arr(m):
                vals = rng.integers(-8, 9, m)
                return (f"np.array({(vals / 4).tolist()!r})" if dtype == "float64"
                        else f"np.array({vals.tolist()!r}, np.int64)") if m else f"np.zeros(0, np.{dtype})"
            n = int(rng.integers(0, 5))
            s = float(rng.integers(-8, 9) / 4)
            bv = float(rng.integers(-8, 9) / 4)
            calls.append(f"args = ({arr(size)}, {arr(ysize)}, {n}, {s!r}, Box({bv!r}, np.array([1.0, -0.5])))\n")
        return calls

    def program(self, max_stmts: int = 8) -> LangProgram:
        r = self.r
        calls = self.calls()
        body: list[str] = []
        n_stmts = r.randint(3, max_stmts)
        for _ in range(n_stmts * 4):
            if len(body) >= n_stmts * 3 or len([ln for ln in body if not ln.startswith("     ")]) >= n_stmts:
                break
            made = list(self.made)
            cand = self.top()
            ok = _runs(LangProgram(body + cand, "acc", calls))
            if ok is None or (not ok and r.random() >= 0.15):
                self.made = made
                continue
            body += cand
            if not ok:               # kept as the last statement: kiln must raise as Python does
                break
        rets = ["acc", "out", "cnt"] + r.sample(self.made, min(len(self.made), r.choice([1, 2, 3])))
        ret = ", ".join(rets) if r.random() < 0.8 else "{" + ", ".join(f"{k!r}: {k}" for k in rets) + "}"
        prog = LangProgram(body, ret, calls)
        if _runs(prog) is None:       # a returned name some path does not bind
            prog = LangProgram(body, "acc, out, cnt", calls)
        return prog


_AE, _SE, _C = re.compile(r"\bAE\b"), re.compile(r"\bSE\b"), re.compile(r"\bC\b")
_NAME = re.compile(r"\b[XYSNV]\b")


def _runs(prog: LangProgram) -> bool | None:
    """Whether ``prog`` runs plainly on every call; None when it is no program to check
    (a syntax or name error of the drawing, a loop that does not end)."""
    try:
        fn = prog.build(None)
    except SyntaxError:
        return None
    for k in range(len(prog.calls)):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                res = fn(*prog.args(k))
        except (NameError, UnboundLocalError, SyntaxError, TypeError, RecursionError) as e:
            # (a drawing error, not a program: names a path leaves unbound, a list plus an
            # array; TypeErrors NumPy raises are kept below)
            if isinstance(e, TypeError) and "numpy" not in str(e) and "ufunc" not in str(e):
                return None
            if not isinstance(e, TypeError):
                return None
            return False
        except Exception:          # noqa: BLE001 - a candidate that raises
            return False
        if _too_big(res):
            return None
    return True


def _too_big(obj) -> bool:
    if isinstance(obj, (list, tuple)):
        return len(obj) > 64 or any(_too_big(o) for o in obj)
    if isinstance(obj, dict):
        return any(_too_big(o) for o in obj.values())
    return isinstance(obj, np.ndarray) and (obj.size > 256 or obj.dtype == object)


# ----------------------------------------------------------------------------- checking

def _exact(got, exp, where: str) -> None:
    """Bit-exact: type, dtype, shape, values (NaN where NaN, zeros' signs), recursively."""
    if type(got) is not type(exp):
        raise Mismatch(f"{where}: type {type(got).__name__} != {type(exp).__name__} ({got!r} vs {exp!r})")
    if isinstance(exp, (list, tuple)):
        if len(got) != len(exp):
            raise Mismatch(f"{where}: len {len(got)} != {len(exp)}: {got!r} vs {exp!r}")
        for i, (g, e) in enumerate(zip(got, exp)):
            _exact(g, e, f"{where}[{i}]")
    elif isinstance(exp, (dict, set, frozenset)) and not isinstance(exp, (set, frozenset)):
        if list(got) != list(exp):
            raise Mismatch(f"{where}: keys {list(got)} != {list(exp)}")
        for k in exp:
            _exact(got[k], exp[k], f"{where}[{k!r}]")
    elif isinstance(exp, (np.ndarray, np.generic)):
        if got.dtype != exp.dtype or got.shape != exp.shape:
            raise Mismatch(f"{where}: {got.dtype}{got.shape} != {exp.dtype}{exp.shape}")
        g, e = np.asarray(got), np.asarray(exp)
        same = (g == e) | ((g != g) & (e != e)) if e.dtype.kind in "fc" else (g == e)
        if e.dtype.kind == "f":
            same &= np.signbit(g) == np.signbit(e)
        if not np.all(same):
            raise Mismatch(f"{where}: {got!r} != {exp!r}")
    elif isinstance(exp, Box):
        _exact(vars(got), vars(exp), f"{where}.__dict__")
    elif isinstance(exp, complex):   # (part by part: NaN where NaN, zeros' signs)
        _exact(got.real, exp.real, f"{where}.real")
        _exact(got.imag, exp.imag, f"{where}.imag")
    elif isinstance(exp, float):
        if not (got == exp and np.signbit(got) == np.signbit(exp) or (got != got and exp != exp)):
            raise Mismatch(f"{where}: {got!r} != {exp!r}")
    elif got != exp:
        raise Mismatch(f"{where}: {got!r} != {exp!r}")


WARNINGS = os.environ.get("KILN_FUZZ_LANG_WARNINGS", "1")


def _warning_set(caught) -> set:
    return {(w.category.__name__, str(w.message)) for w in caught
            if issubclass(w.category, (RuntimeWarning, UserWarning, DeprecationWarning)) and "kiln" not in str(w.message).lower()}


def check(prog: LangProgram, backends=("eager", "cpp"), time_limit: float = TIME_LIMIT) -> None:
    """Raise Mismatch naming the backend, call and difference, with the reproducer. kiln's
    own errors raise (``config.debug_checks``, KILN_FUZZ_DEBUG_CHECKS), where a user's run
    would break the graph at them and run the function as Python."""
    runner.check(prog, backends, time_limit, _check_backend)


def _check_backend(prog: LangProgram, backend: str) -> None:
    ref = prog.build(None)
    compiled = kiln.compile(prog.build(backend), backend=backend)
    for k in range(len(prog.calls)):
        compare_call(ref, compiled, prog.args(k), prog.args(k), f"call {k}")


def compare_call(ref, compiled, ref_args: tuple, kiln_args: tuple, where: str, warn: str = WARNINGS) -> tuple:
    """Call ``ref`` and ``compiled`` on their copies of the arguments and compare (this
    module's oracle, trips.py's too); Python's and kiln's ``("ok" | "raise", value)``."""
    with warnings.catch_warnings(record=True) as expected:
        warnings.simplefilter("always")
        exp = _run(ref, ref_args)
    stdout = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(stdout):
        warnings.simplefilter("always")
        got = _run(compiled, kiln_args)
    _check_no_fallback(caught, where)
    if stdout.getvalue():
        raise Mismatch(f"{where}: kiln wrote to stdout: {stdout.getvalue()!r}")
    if exp[0] == "raise":
        if got[0] != "raise" or type(got[1]) is not type(exp[1]) or str(got[1]) != str(exp[1]):
            raise Mismatch(f"{where}: Python raised {exp[1]!r}, kiln {got[0]} {got[1]!r}")
    elif got[0] == "raise":
        tb = "".join(traceback.format_exception(got[1])[-6:])
        raise Mismatch(f"{where}: kiln raised {got[1]!r} where Python returned {exp[1]!r}\n{tb}")
    else:
        _exact(got[1], exp[1], f"{where} result")
    _exact(list(kiln_args), list(ref_args), f"{where} args after call")
    if warn != "0":
        g, e = _warning_set(caught), _warning_set(expected)
        if not (g <= e if warn == "1" else g == e):
            raise Mismatch(f"{where}: warnings {sorted(g)} where Python warned {sorted(e)}")
    return exp, got


def check_seed(seed: int, backends=("eager", "cpp")) -> LangProgram:
    prog = LangGen(seed).program()
    check(prog, backends)
    return prog


def statements(body: list[str]) -> list[tuple[int, int]]:
    """[start, end) of each top-level statement of ``body`` (4-space indented lines), its
    block and its ``elif``/``else``/``except``/``finally``/``case`` parts with it."""
    starts = [i for i, ln in enumerate(body) if not ln.startswith("     ") and not
              ln.strip().startswith(("elif", "else", "except", "finally", "case"))]
    return list(zip(starts, starts[1:] + [len(body)]))


def minimize(prog: LangProgram, backends=("eager", "cpp")) -> LangProgram:
    """Drop top-level statements (with their blocks) and calls while the program still fails."""

    def fails(p: LangProgram) -> bool:
        return _runs(p) is not None and runner.fails(check, p, backends)

    changed = True
    while changed:
        changed = False
        for a, b in statements(prog.body):
            cand = LangProgram(prog.body[:a] + prog.body[b:], prog.ret, prog.calls)
            if fails(cand):
                prog, changed = cand, True
                break
        if not changed and prog.ret != "acc, out, cnt":
            for ret in ("acc, out, cnt", "out", "acc", "cnt"):
                cand = LangProgram(prog.body, ret, prog.calls)
                if fails(cand):
                    prog, changed = cand, True
                    break
        if not changed:
            for i in range(len(prog.calls)):
                if len(prog.calls) > 1:
                    cand = LangProgram(prog.body, prog.ret, prog.calls[:i] + prog.calls[i + 1:])
                    if fails(cand):
                        prog, changed = cand, True
                        break
    return prog


def main() -> int:
    """A long run (runner.long_run): KILN_FUZZ_LANG_SEED, KILN_FUZZ_LANG_PROGRAMS,
    KILN_FUZZ_LANG_BACKENDS (default eager,cpp)."""
    from .runner import long_run
    return long_run("lang", check_seed, lambda seed, backends: minimize(LangGen(seed).program(), backends).reproducer(),
                    "eager,cpp", every=50)


if __name__ == "__main__":
    sys.exit(main())
