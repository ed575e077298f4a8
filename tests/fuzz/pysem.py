"""A differential generator of Python semantics that outlive a call (stop 55).

lang.py draws the statements around arrays within one call; this one draws the state that
a call leaves and the next reads, and the scalars Python and NumPy mix: module arrays read,
mutated in place and rebound (``global``) by the program and *between calls*; a default
argument holding an array that is mutated in place between calls (the default sees it) or
whose module name is rebound (the default does not); an object with array attributes and a
property, passed as an argument or compiled as a bound method (``kiln.compile(types.MethodType(meth, OBJ))``),
its attributes rebound and written between calls; closures with ``nonlocal``; dicts, lists,
tuples and sets of arrays built and unpacked (star targets, ``zip``, ``enumerate``,
``sorted`` with a key, ``reversed``); f-strings, ``repr``, ``str`` and ``%`` of NumPy scalars
of every dtype (np.float32's repr); exceptions raised and caught around array ops
(IndexError, ValueError from shapes, ZeroDivisionError from Python ints, TypeError, a user
exception class); early returns inside loops; generators into ``sum``/``max``/``min``/
``any``/``all``; ``is``/``is not``/``in`` on arrays and None; ``isinstance`` and ``type`` of
scalars; arithmetic that mixes Python bool/int/float/complex with NumPy scalars of every
dtype (NEP 50: an int8 scalar times 100 wraps and warns, ``np.uint8(3) + 300`` raises);
walrus; chained comparisons; augmented assignment through a view against rebinding.

A program takes ``x, s, t`` (a 1-d array of a drawn dtype; two scalars, each a Python
bool/int/float/complex or a NumPy scalar of any dtype) and, as a function, ``obj`` (the
module's ``OBJ``); as a method, ``self`` is ``OBJ``. Both take ``d=DEF`` (a module array).
It is called four times with fresh data and scalars of other kinds (the third call may
change the array's size, the fourth its dtype); before calls 1 to 3 (the last always) a
drawn statement may change the module's state (``GA[0] += 1``, ``GA = GA * 2``,
``DEF[1] = 3``, ``DEF = ...``, ``OBJ.w = ...``, ``OBJ.k = 2``, new ``__defaults__``). The oracle is lang.py's (bit-exact values,
Python type against NumPy scalar type, dtypes, shapes, exception type and message, kiln's
warnings among plain Python's, the arguments after the call) and, after every call, the
module's state: ``GA``, ``DEF``, ``OBJ``'s attributes and the module's counters.

    KILN_FUZZ_PYSEM_SEED=1 KILN_FUZZ_PYSEM_PROGRAMS=200 python -m tests.fuzz.pysem
"""
from __future__ import annotations

import linecache
import os
import random
import re
import sys
import types
import warnings

import numpy as np

import kiln

from . import runner
from .lang import Box, _exact, _too_big, compare_call, statements
from .runner import TIME_LIMIT, Mismatch

WARN = os.environ.get("KILN_FUZZ_PYSEM_WARNINGS", "1")

class UserError(Exception):
    """The user's own exception class programs raise and catch."""


class Obj(Box):
    """The object programs read and write (array attribute ``w``, scalar ``k``, two
    properties; compared by its ``__dict__``, as lang.py's Box)."""

    def __init__(self, w, k):
        self.w = w
        self.k = k

    @property
    def total(self):
        return self.w.sum() * self.k

    @property
    def first(self):
        return self.w[0]

    def scaled(self, a):
        return a * self.k

    def __repr__(self) -> str:
        return f"Obj({self.w!r}, {self.k!r})"


PRELUDE = '''\
GA = {ga}
DEF = {df}
CALLS = 0


OBJ = Obj({ow}, {ok})
'''

SCALAR_KINDS = ["True", "False", "3", "-2", "0", "2.5", "-0.75", "0.0", "(1.5-2j)", "np.int8({i})", "np.int8(100)",
                "np.uint8({u})", "np.int16({i})", "np.int32({i})", "np.int64({i})", "np.uint64({u})",
                "np.float16({f})", "np.float32({f})", "np.float64({f})", "np.complex64({f}+1j)",
                "np.complex128({f}-0.5j)", "np.bool_(True)", "np.uint16({u})", "np.float32(0.1)", "200", "2**40"]
DTYPES = ["float64", "float32", "int64", "int32", "int8", "uint8", "bool", "complex128", "float16", "int16"]

# placeholders: X an array, S a scalar, SE a scalar expression, AE an array expression
AE = ["X * S", "X + S", "X[1:] - X[:-1]", "np.abs(X)", "X[::-1]", "X * 2", "S * X", "X - X.mean()", "X.astype(np.float32)",
      "X + GA[:1]", "obj.scaled(X)", "np.where(X > S, X, S)", "X ** 2", "X / S", "X // S", "X % S", "-X",
      "X.astype(np.int8) * S", "np.maximum(X, S)", "X[X > S]", "X * obj.k", "X + d[:1]", "X.copy()"]
SE = ["S", "S + S", "S * S", "S - S", "S / S", "S // S", "S % S", "S ** 2", "-S", "abs(S)", "X.sum()", "X[0]",
      "X.max(initial=0)", "float(S)", "int(S)", "bool(S)", "X.dtype.type(S)", "np.float32(S)", "np.int8(S)", "complex(S)",
      "X.mean()", "len(X)", "X.size", "sum(v_ for v_ in X)", "max(X, default=S)", "min(X.tolist(), default=0)",
      "S + 1", "S * 100", "S + 0.5", "S * 1j", "S - True", "1 / S", "7 // S", "S ** -1", "divmod(S, 3)[1]",
      "round(S)", "S.item() if hasattr(S, 'item') else S", "X.dtype.type(0) + S", "obj.total", "obj.first",
      "obj.k * S", "GA.sum()", "d.sum() + S", "CALLS", "X.prod()", "X.sum() / len(X)", "np.sum(X) * S",
      "X[-1] if X.size else S", "sum([X, X])[0] if X.size else S", "any(v_ > S for v_ in X)",
      "all(v_ != S for v_ in X)", "max(v_ * 2 for v_ in X.tolist()) if X.size else 0", "S < X.sum() <= S",
      "X.size > 0 and X[0]", "X.size and X[0] or S", "np.int8(S) + np.int8(S)"]
ISINST = ["int", "float", "complex", "bool", "np.integer", "np.floating", "np.generic", "np.ndarray", "np.float64",
          "np.signedinteger", "(int, np.integer)", "np.complexfloating", "np.number", "np.bool_"]
STMTS = [
    "t_ = SE", "out.append(SE)", "out.append(f'{SE}')", "out.append(repr(SE))", "out.append(f'{SE!r}')",
    "out.append('%s|%r' % (SE, SE))", "out.append(str(SE))", "out.append(f'{SE:.3f}')", "out.append(f'{SE:>8}')",
    "out.append(isinstance(SE, ISI))", "out.append(type(SE).__name__)", "out.append(X is None)",
    "out.append(X is x)", "out.append(X is not GA)", "out.append(X in [x, d])", "out.append(None in [X, None])",
    "out.append(S in X)", "out.append(SE == SE)", "out.append(S < SE <= S)", "acc = acc + SE", "acc += SE",
    "out.append(AE)", "a_ = AE", "a_ = AE; out.append(a_)", "out.append(str(X))", "out.append(repr(X))",
    "out.append(f'{X}')", "out.append(X.tolist())", "out.append(hash(S))",
    "v_ = X[1:]; v_ += 1", "v_ = X; v_ = v_ + 1", "v_ = X[::2]; v_ *= 2", "v_ = X[:]; v_[...] = S",
    "X[0] = S", "X[-1] += S", "GA[0] += 1", "obj.w += S", "obj.w = obj.w * 2", "obj.k += 1", "obj.k = S",
    "d[0] += 1", "d = d * 2", "global GA; GA = GA + 1", "global CALLS; CALLS += 1", "global GA; GA = AE",
    "out.append(obj.total)", "out.append(obj.first)", "out.append(obj.w is GA)",
    "if (w_ := SE) > S: out.append(w_)", "if S < SE <= S: acc += 1",
    "X[0] = SE", "acc = acc + X[0]; acc = acc * S", "out.append([y_ for v_ in X if (y_ := v_ * S) > 0])",
    "out.append({k_: v_ for k_, v_ in zip('abc', X)})", "a_, b_, *c_ = X; out.append((b_, len(c_)))",
    "out.append(np.float32(S) == S)", "out.append(round(SE, 2))", "out.append(int(SE))", "out.append(float(X[0]))",
    "out.append(X.item())", "out.append(divmod(X[0], S))", "out.append(S ** S)", "out.append(np.int8(100) * S)",
    "out.append(X[0] if X.size else None)", "out.append(bool(X.size) or SE)", "out.append(len({X[0], S}))",
    "out.append(complex(SE).imag)", "out.append(X.tolist() == [SE])", "acc = acc or SE", "out.append(SE if S else AE)",
]
COMPOUND = ["try", "closure", "containers", "loop_return", "sort", "gen", "user_exc", "zip"]
BETWEEN = ["GA[0] += 1", "GA = GA * 2", "GA = np.arange(4.0)", "DEF[1] = 3", "DEF = np.zeros(5)", "DEF *= -1",
           "OBJ.w = np.array([1.5, -2.0])", "OBJ.k = 2", "OBJ.w[0] = 7", "OBJ.k = np.float32(0.5)",
           "OBJ.w = OBJ.w.astype(np.int8)", "CALLS = 5", "GA = GA.astype(np.float32)", "OBJ.w = GA",
           "OBJ.w = OBJ.w[::-1]", "GA = GA[::2]", "DEF[:] = DEF[::-1]", "OBJ.w = np.ones(0)", "GA = GA.reshape(1, -1)[0]",
           "OBJ.k = 1 + 1j", "OBJ.w = np.array([3, 250], np.uint8)",
           "(globals().get('prog') or meth).__defaults__ = (np.arange(3.0),)"]

_NAME = re.compile(r"\b(ISI|X|S)\b")


class SemProgram:
    """A drawn program: the module's initial state, the body (4-space indented lines), its
    return, whether it is compiled as ``BOUND`` (a method of ``OBJ``), the calls and the statements run
    between them."""

    def __init__(self, state: dict, body: list[str], ret: str, method: bool, calls: list[str],
                 between: list[str]) -> None:
        self.state, self.body, self.ret, self.method = state, body, ret, method
        self.calls, self.between = calls, between

    def source(self) -> str:
        body = ["    out = []", "    acc = 0", *self.body, f"    return {self.ret}"]
        head, tail = (("meth(obj, x, s, t, d=DEF)", "\nBOUND = types.MethodType(meth, OBJ)\n") if self.method
                      else ("prog(x, s, t, obj, d=DEF)", ""))
        return PRELUDE.format(**self.state) + f"\n\ndef {head}:\n" + "\n".join(body) + "\n" + tail

    def build(self):
        """A fresh module namespace and its function (a bound method of ``OBJ``, or ``prog``)."""
        source = self.source()
        filename = f"<kiln-pysemfuzz-{id(source)}-{random.getrandbits(32)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        ns: dict = {"np": np, "kiln": kiln, "types": types, "Obj": Obj, "UserError": UserError,
                    "__name__": "kiln_pysemfuzz"}
        exec(compile(source, filename, "exec"), ns)
        return ns

    def fn(self, ns: dict):
        return ns["BOUND"] if self.method else ns["prog"]

    def args(self, k: int, ns: dict) -> tuple:
        loc: dict = {"np": np}
        exec(self.calls[k], loc)
        return loc["args"] if self.method else (*loc["args"], ns["OBJ"])

    def between_call(self, k: int, ns: dict) -> None:
        if self.between[k]:
            try:
                exec(self.between[k], ns)
            except (IndexError, ValueError, TypeError):   # (OBJ.w[0] = 7 of an empty OBJ.w: both sides alike)
                pass

    def reproducer(self) -> str:
        src = self.source()
        call = "BOUND" if self.method else "prog"
        lines = ["import types", "import numpy as np", "import kiln", "from tests.fuzz.pysem import Obj, UserError", "",
                 src, f"f = kiln.compile({call})"]
        for k, c in enumerate(self.calls):
            if self.between[k]:
                lines.append(self.between[k])
            lines += [f"# call {k}", c, f"print(f(*args{'' if self.method else ', OBJ'}))"]
        return "\n".join(lines) + "\n"


def state_of(ns: dict) -> list:
    """What the oracle compares after each call besides the result and arguments."""
    return [ns["GA"], ns["DEF"], ns["CALLS"], dict(vars(ns["OBJ"]))]


class SemGen:
    """Draws one program from ``seed``."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def fill(self, text: str) -> str:
        r = self.r
        for _ in range(3):
            text = re.sub(r"\bAE\b", lambda m: r.choice(AE), text)
            text = re.sub(r"\bSE\b", lambda m: r.choice(SE), text)
        names = {"X": lambda: r.choice(["x", "x", "x", "GA", "obj.w", "d", "x[::-1]", "x[1:]"]),
                 "S": lambda: r.choice(["s", "s", "t", "t", "x[0]", "acc", "obj.k", "2", "0.5", "True"]),
                 "ISI": lambda: r.choice(ISINST)}
        return _NAME.sub(lambda m: names[m.group(0)](), text)

    def lines(self, ind: str, text: str) -> list[str]:
        return [ind + ln for ln in self.fill(text).split("; ")]

    def compound(self) -> list[str]:
        r, f, i = self.r, self.fill, "    "
        kind = r.choice(COMPOUND)
        if kind == "try":
            risky = r.choice(["acc += X[len(X) + 1]", "acc += X[int(s) if not isinstance(s, complex) else 0]",
                              "a_ = X + X[:2]", "acc += 1 // (len(X) - len(X))", "acc += int(S) // 0",
                              "a_ = X.reshape(2, -1)", "acc += S % 0", "a_ = X @ X[:1]", "acc += np.int8(S) * 200",
                              "acc += [1, 2][len(X)]", "acc += float('x' + str(S))", "a_ = X.astype(np.uint8) + 300",
                              "acc += X[0]", "X[5] = S"])
            exc = r.choice(["IndexError", "ValueError", "(ZeroDivisionError, IndexError)", "Exception",
                            "(TypeError, ValueError, OverflowError)", "ArithmeticError"])
            handle = r.choice(["out.append(str(e))", "out.append(type(e).__name__)", "out.append(repr(e.args))"])
            lines = [i + "try:", *self.lines(i * 2, risky), i + f"except {exc} as e:", i * 2 + handle]
            if r.random() < 0.4:
                lines += [i + "else:", *self.lines(i * 2, r.choice(STMTS))]
            if r.random() < 0.4:
                lines += [i + "finally:", i * 2 + "out.append(len(out))"]
            return lines
        if kind == "user_exc":
            return [i + "try:", i * 2 + f(f"if {r.choice(SE)} > S:"), i * 3 + f("raise UserError(f'{SE}', X)"),
                    *self.lines(i * 2, r.choice(STMTS)), i + "except UserError as e:",
                    i * 2 + "out.append((str(e), e.args[0], type(e.args[1]).__name__))"]
        if kind == "closure":
            return [i + "def f_(a, k=S):".replace("S", r.choice(["2", "s", "t", "0.5"])), i * 2 + "nonlocal acc",
                    *self.lines(i * 2, "acc = acc + SE * k"), i * 2 + "return a * k",
                    i + f("out.append(f_(X))"), i + f("out.append(f_(X, S))"), i + "out.append(acc)"]
        if kind == "containers":
            return self.lines(i, r.choice([
                "dd_ = {'a': X, 'b': AE, 's': S}; p_, q_, r_ = dd_.values(); out.append((p_ + q_, r_))",
                "first_, *rest_ = [X, AE, S]; out.append(len(rest_)); acc = acc + first_.sum()",
                "*init_, last_ = (S, X, SE); out.append(last_); out.append(init_[0])",
                "tt_ = (X, (S, AE)); a_, (b_, c_) = tt_; out.append(c_ * b_)",
                "ss_ = {float(v_) for v_ in X}; out.append(sorted(ss_))",
                "ll_ = [X, GA, d]; out.append([a is x for a in ll_]); out.append(sum(len(a) for a in ll_))",
                "kk_ = dict(zip('abc', [X, S, SE])); out.append(kk_['c']); out.append(list(kk_))",
            ]))
        if kind == "zip":
            return [i + f("for j_, (p_, q_) in enumerate(zip(X, X[::-1])):"), *self.lines(i * 2, "acc = acc + p_ * q_"),
                    i * 2 + "out.append(type(p_).__name__)" if r.random() < 0.5 else i * 2 + "out.append(j_)"]
        if kind == "sort":
            return self.lines(i, r.choice([
                "srt_ = sorted([X, AE, -X], key=lambda a: float(a.sum())); out.append(srt_[0])",
                "srt_ = sorted(X.tolist(), key=abs, reverse=True); out.append(srt_)",
                "srt_ = sorted(X); out.append(srt_); out.append(type(srt_[0]).__name__ if srt_ else None)",
                "out.append(list(reversed([X, S])))", "out.append(list(reversed(X)))",
                "out.append(max([X[:1], GA[:1]], key=lambda a: float(a[0])))",
            ]))
        if kind == "gen":
            return self.lines(i, r.choice([
                "out.append(sum(v_ * S for v_ in X))", "out.append(max((v_ for v_ in X), default=None))",
                "out.append(any(v_ is None for v_ in X))", "out.append(all(v_ == v_ for v_ in X))",
                "out.append(sum(X))", "out.append(sum(X, S))", "out.append(min(X, key=abs, default=S))",
                "out.append(sum((X for _ in range(2)), start=GA[:1]))",
            ]))
        # loop_return
        return [i + f("for j_, v_ in enumerate(X):"), i * 2 + f(f"if v_ {r.choice(['>', '<', '==', '!='])} S:"),
                i * 3 + f("return v_, j_, out, SE"), *self.lines(i * 2, "acc = acc + v_")]

    def state(self) -> dict:
        r = self.r
        ga = r.choice(["np.array([0.5, -1.0, 2.0, 0.25])", "np.arange(4)", "np.array([1, 2, 3], np.int8)",
                       "np.ones(3, np.float32)"])
        df = r.choice(["np.array([1.0, 2.0, 3.0])", "np.arange(3)", "np.zeros(4, np.int32)"])
        ow = r.choice(["np.array([0.5, 1.5])", "np.arange(3.0)", "np.array([2, -3], np.int64)",
                       "np.array([1.25], np.float32)"])
        return {"ga": ga, "df": df, "ow": ow, "ok": r.choice(["2", "0.5", "np.float32(1.5)", "np.int8(3)", "True"])}

    def calls(self) -> list[str]:
        r = self.r
        dtype = r.choice(DTYPES)
        size = r.choice([3, 4, 2, 5, 1, 3])
        calls = []
        for k in range(4):
            if k == 2 and r.random() < 0.4:
                size = r.choice([0, 1, 2, 6])
            if k == 3 and r.random() < 0.3:
                dtype = r.choice(DTYPES)
            vals = [r.randint(-8, 8) / 4 for _ in range(size)]
            if dtype in ("float64", "float32", "float16"):
                arr = f"np.array({vals!r}, np.{dtype})"
            elif dtype == "complex128":
                arr = f"np.array({vals!r}) * (1 - 0.5j)"
            elif dtype == "bool":
                arr = f"np.array({vals!r}) > 0"
            else:
                arr = f"np.array({[int(abs(v) * 4 if dtype[0] == 'u' else v * 4) for v in vals]!r}, np.{dtype})"
            sc = []
            for _ in range(2):
                kind = r.choice(SCALAR_KINDS)
                sc.append(kind.format(i=r.randint(-5, 5), u=r.randint(0, 9), f=r.randint(-8, 8) / 4))
            calls.append(f"args = ({arr}, {sc[0]}, {sc[1]})")
        return calls

    def program(self, max_stmts: int = 8) -> SemProgram:
        r = self.r
        state, calls, method = self.state(), self.calls(), r.random() < 0.35
        between = [None] + [r.choice(BETWEEN) if r.random() < 0.6 else None for _ in range(len(calls) - 1)]
        between[-1] = between[-1] or r.choice(BETWEEN)
        body: list[str] = []
        for _ in range(max_stmts * 4):
            if len([ln for ln in body if not ln.startswith("     ")]) >= max_stmts:
                break
            cand = self.compound() if r.random() < 0.35 else self.lines("    ", r.choice(STMTS))
            ok = _runs(SemProgram(state, body + cand, "out, acc", method, calls, between))
            if ok is None or (not ok and r.random() >= 0.15):
                continue
            body += cand
            if not ok:               # kept last: kiln must raise as Python does
                break
        ret = r.choice(["out, acc", "out, acc", "out, acc, t_" if any("t_ =" in b for b in body) else "out", "acc", "out, x"])
        prog = SemProgram(state, body, ret, method, calls, between)
        return prog if _runs(prog) is not None else SemProgram(state, body, "out, acc", method, calls, between)


def _runs(prog: SemProgram) -> bool | None:
    """Whether ``prog`` runs plainly on every call; None when it is no program (a drawing
    error: a name some path leaves unbound, a syntax error)."""
    try:
        ns = prog.build()
    except SyntaxError:
        return None
    ok = True
    for k in range(len(prog.calls)):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                prog.between_call(k, ns)
                res = prog.fn(ns)(*prog.args(k, ns))
        except (NameError, UnboundLocalError, SyntaxError, RecursionError):
            return None
        except Exception:          # noqa: BLE001 - a candidate that raises
            ok = False
            continue
        if _too_big(res):
            return None
    return ok


def check(prog: SemProgram, backends=("eager", "cpp"), time_limit: float = TIME_LIMIT) -> None:
    runner.check(prog, backends, time_limit, _check_backend)


def _check_backend(prog: SemProgram, backend: str) -> None:
    ref_ns, kiln_ns = prog.build(), prog.build()
    compiled = kiln.compile(prog.fn(kiln_ns), backend=backend)
    ref = prog.fn(ref_ns)
    for k in range(len(prog.calls)):
        where = f"call {k}"
        for ns in (ref_ns, kiln_ns):
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                prog.between_call(k, ns)
        compare_call(ref, compiled, prog.args(k, ref_ns), prog.args(k, kiln_ns), where, WARN)
        _exact(state_of(kiln_ns), state_of(ref_ns), f"{where} module state after call")


def check_seed(seed: int, backends=("eager", "cpp")) -> SemProgram:
    prog = SemGen(seed).program()
    check(prog, backends)
    return prog


def minimize(prog: SemProgram, backends=("eager", "cpp")) -> SemProgram:
    """Drop top-level statements (with their blocks), between-call statements and calls
    while the program still fails."""

    def fails(p: SemProgram) -> bool:
        return _runs(p) is not None and runner.fails(check, p, backends)

    def variants(p: SemProgram):
        for a, b in statements(p.body):
            yield SemProgram(p.state, p.body[:a] + p.body[b:], p.ret, p.method, p.calls, p.between)
        for k, stmt in enumerate(p.between):
            if stmt:
                yield SemProgram(p.state, p.body, p.ret, p.method, p.calls, [*p.between[:k], None, *p.between[k + 1:]])
        for k in range(len(p.calls) - 1, 0, -1):
            yield SemProgram(p.state, p.body, p.ret, p.method, p.calls[:k], p.between[:k])
        if p.ret != "out":
            yield SemProgram(p.state, p.body, "out", p.method, p.calls, p.between)

    return runner.shrink(prog, variants, fails)


def main() -> int:
    """A long run (runner.long_run): KILN_FUZZ_PYSEM_SEED, KILN_FUZZ_PYSEM_PROGRAMS,
    KILN_FUZZ_PYSEM_BACKENDS (default eager,cpp)."""
    from .runner import long_run
    return long_run("pysem", check_seed, lambda seed, backends: minimize(SemGen(seed).program(), backends).reproducer(),
                    "eager,cpp", every=25)


if __name__ == "__main__":
    sys.exit(main())
