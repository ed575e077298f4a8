"""A differential generator of element loops over typed scalars (stop 58).

The other generators draw whole-array NumPy code, or Python statements around float64 and
int64 arrays; this one draws the element loops kiln turns into loop nodes compiled to C++
(kiln/capture/loops.py, loop_branches.py, loop_appends.py; kiln/lowering/loop_scalars.py,
cpp_loops.py), where NumPy's and Python's scalar semantics are rewritten by hand:
``for i in range(n)``, ``for v in x``, ``enumerate``, ``while`` with a counter and nested
``for j in range(i)`` over 1-d arrays of each of 13 dtypes (int8 ... uint64, float16,
float32, float64, bool, complex128; sizes 0 to 7, values at the dtype's ends, NaN, inf and
-0.0), with accumulators that are Python ints, floats and bools or NumPy scalars
(``np.int8(0)``, ``x.dtype.type(0)``, ``x[0]``), the operators ``+ - * / // % ** << >> &
| ^ ~ abs``, builtins ``min``/``max``, ``math.*`` and ``np.*`` scalar functions,
comparisons and chained comparisons, casts (``int``, ``float``, ``bool``, ``np.int32(v)``,
``x[i].astype``), element reads at ``i``, ``i - 1``, ``n - 1 - i``, ``i % n``, element
writes (300 into int8 raises OverflowError in NumPy 2, NaN into an int array ValueError,
values that wrap), data-dependent ``if``/``elif``/``else``, ``break``/``continue``, appends
under an ``if`` and early returns.

A program is ``prog(x, y, k, s)``: ``x`` and ``y`` 1-d arrays (``y`` of x's length, its own
dtype), ``k`` a Python int, ``s`` a Python or NumPy scalar; it returns ``acc, cnt, out``
(and what else it made). Three calls: fresh values, the same dtypes; the third may change
the length. The oracle is lang.py's ``compare_call`` on the same function run plainly:
bit-exact values, a Python number's type against a NumPy scalar's, dtypes, exceptions
(type and message), the arrays after the call, and RuntimeWarnings as a set of messages
(KILN_FUZZ_SLOOPS_WARNINGS: 2, the default, the same set as NumPy's; 1 kiln's among
NumPy's; 0 not compared).

    KILN_FUZZ_SLOOPS_SEED=1 KILN_FUZZ_SLOOPS_PROGRAMS=200 python -m tests.fuzz.scalar_loops
"""
from __future__ import annotations

import contextlib
import linecache
import math
import os
import random
import re
import signal
import sys
import warnings

import numpy as np

import kiln

from . import runner
from .lang import _too_big, compare_call
from .runner import TIME_LIMIT, Mismatch, ProgramTimeout

DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
          "float32", "float64", "bool", "complex128"]
SIZES = [0, 1, 2, 3, 4, 5, 7]
WARNINGS = os.environ.get("KILN_FUZZ_SLOOPS_WARNINGS", "2")

# Element reads: ``X`` is x or y, ``I`` the loop's index (i, or j in a nested loop)
READS = ["X[I]", "X[I]", "X[I]", "X[I - 1]", "X[n - 1 - I]", "X[I % n]", "v", "v"]
# Scalars outside the arrays (Python and NumPy numbers, the loop's counters)
LEAVES = ["acc", "acc", "cnt", "s", "k", "I", "1", "2", "0.5", "-1", "True", "np.int8(3)", "np.uint8(200)",
          "np.float32(0.25)", "np.int64(-2)", "x.dtype.type(1)", "y.dtype.type(2)", "np.uint64(7)", "2**40", "-0.0"]
BINOPS = ["+", "-", "*", "/", "//", "%", "&", "|", "^", "+", "-", "*"]
# (right operands of ** and << >> stay small: a Python int to a Python power, or shifted by
# a large Python count, would not end)
POW_RHS = ["2", "3", "0.5", "-1", "0", "X[I]", "np.int8(2)", "2.0"]
SHIFT_RHS = ["1", "3", "X[I]", "I", "np.uint8(2)", "np.int64(63)", "65"]
UNARY = ["abs(E)", "-E", "~E", "int(E)", "float(E)", "bool(E)", "np.int32(E)", "np.float32(E)", "np.uint8(E)",
         "np.int64(E)", "np.float64(E)", "np.int16(E)", "np.bool_(E)", "x.dtype.type(E)", "y.dtype.type(E)",
         "math.sqrt(E)", "math.fabs(E)", "math.floor(E)", "math.exp(E)", "math.log(E)", "math.sin(E)",
         "math.atan(E)", "np.sqrt(E)", "np.floor(E)", "np.ceil(E)", "np.absolute(E)", "np.exp(E)",
         "min(E, E)", "max(E, E)", "np.maximum(E, E)", "np.minimum(E, E)", "np.fmax(E, E)", "np.fmin(E, E)",
         "(E if C else E)", "+E"]
CASTS = ["X[I].astype(np.int16)", "X[I].astype(np.float32)", "X[I].astype(np.uint8)", "X[I].astype(bool)",
         "X[I].item()", "int(X[I])", "float(X[I])", "bool(X[I])"]
CMPS = ["<", "<=", ">", ">=", "==", "!="]
# Values written into elements (beside drawn expressions): out of a narrow int's range, NaN, inf
CONSTS = ["300", "-1", "float('nan')", "float('inf')", "1e20", "2**63", "-129", "0.5", "True", "np.float64(-0.0)",
          "np.int64(70000)", "256"]
INITS = ["0", "0", "0.0", "False", "1", "np.int8(0)", "x.dtype.type(0)", "y.dtype.type(1)", "(x[0] if n else 0)",
         "np.float32(0)", "np.uint8(1)", "np.int64(0)", "np.uint64(0)", "np.float16(1)", "-1.5", "np.int32(-1)",
         "np.bool_(False)", "2**62"]


class LoopProgram:
    """A drawn program: the lines of its body (4-space indented), its return and calls."""

    def __init__(self, init: str, body: list[str], ret: str, calls: list[str]) -> None:
        self.init, self.body, self.ret, self.calls = init, body, ret, calls

    def source(self) -> str:
        lines = ["def prog(x, y, k, s):", "    n = len(x)", f"    acc = {self.init}", "    cnt = 0", "    out = []",
                 *self.body, f"    return {self.ret}"]
        return "\n".join(lines) + "\n"

    def build(self, backend: str | None):
        source = self.source()
        filename = f"<kiln-sloopfuzz-{id(source)}-{random.getrandbits(32)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        ns: dict = {"np": np, "math": math, "kiln": kiln, "__name__": "kiln_sloopfuzz"}
        exec(compile(source, filename, "exec"), ns)
        return ns["prog"]

    def args(self, k: int) -> tuple:
        ns: dict = {"np": np}
        exec(self.calls[k], ns)
        return ns["args"]

    def reproducer(self) -> str:
        calls = "\n".join(f"# call {k}\n{c}print(prog(*args))" for k, c in enumerate(self.calls))
        return f"import math\nimport numpy as np\nimport kiln\n\n\n@kiln.compile\n{self.source()}\n{calls}\n"


def _value(r: random.Random, dtype: str) -> str:
    """One element's value, as source text: small values mostly, the dtype's ends sometimes."""
    if dtype == "bool":
        return r.choice(["True", "False"])
    if dtype == "complex128":
        a, b = r.randint(-8, 8) / 4, r.randint(-8, 8) / 4
        return r.choice([f"complex({a}, {b})", f"complex({a}, {b})", "complex(float('nan'), 0.0)", "complex(0.0, -0.0)"])
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        if r.random() < 0.2:
            return str(r.choice([info.min, info.max, info.max - 1, info.min + 1, 0, 1]))
        lo = 0 if dtype.startswith("u") else -4
        return str(r.randint(lo, 5))
    if r.random() < 0.15:
        return r.choice(["float('nan')", "float('inf')", "-float('inf')", "-0.0", repr(float(np.finfo(dtype).max)),
                         "1e-8", "65504.0"])
    return repr(r.randint(-12, 12) / 4)


SCALAR_ARGS = ["2", "-3", "0", "0.5", "-0.0", "1e300", "True", "2**63", "np.int8(-3)", "np.uint8(200)",
               "np.float32(0.375)", "np.float16(2.5)", "np.int64(-7)", "np.uint64(5)", "np.bool_(True)",
               "float('nan')", "np.float64(1.5)", "np.int16(300)", "7"]


class LoopGen:
    """Draws one program from ``seed``."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.loopvars: list[str] = ["i"]

    # -- expressions
    def leaf(self) -> str:
        r = self.r
        if r.random() < 0.55:
            return self.read()
        return self.subst(r.choice(LEAVES))

    def read(self) -> str:
        return self.subst(self.r.choice(READS + CASTS[:2] + ["X[I]"] * 2))

    def subst(self, text: str) -> str:
        r = self.r
        text = re.sub(r"\bX\b", lambda m: r.choice(["x", "x", "y"]), text)
        return re.sub(r"\bI\b", lambda m: r.choice(self.loopvars), text)

    def expr(self, depth: int = 2) -> str:
        r = self.r
        if depth <= 0 or r.random() < 0.3:
            return self.leaf()
        kind = r.random()
        if kind < 0.45:
            return f"({self.expr(depth - 1)} {r.choice(BINOPS)} {self.expr(depth - 1)})"
        if kind < 0.52:
            return f"({self.expr(depth - 1)} ** {self.subst(r.choice(POW_RHS))})"
        if kind < 0.58:
            return f"({self.expr(depth - 1)} {r.choice(['<<', '>>'])} {self.subst(r.choice(SHIFT_RHS))})"
        if kind < 0.66:
            return self.subst(r.choice(CASTS))
        text = r.choice(UNARY)
        text = re.sub(r"\bC\b", lambda m: self.cond(0), text)
        return re.sub(r"\bE\b", lambda m: self.expr(depth - 1), text)

    def cond(self, depth: int = 1) -> str:
        r = self.r
        kind = r.random()
        if kind < 0.5:
            return f"{self.expr(depth)} {r.choice(CMPS)} {self.expr(depth)}"
        if kind < 0.65:
            return f"{self.expr(0)} {r.choice(['<', '<='])} {self.expr(depth)} {r.choice(['<', '<='])} {self.expr(0)}"
        if kind < 0.75:
            return f"not {self.expr(depth)}"
        if kind < 0.85:
            return f"{self.cond(0)} and {self.cond(0)}" if depth else self.expr(0)
        return f"{self.expr(depth)}"

    # -- statements
    def simple(self, ind: str) -> list[str]:
        r = self.r
        kind = r.choices(["acc", "aug", "cnt", "write", "const", "append", "tmp"], [5, 4, 1, 3, 1, 2, 2])[0]
        if kind == "acc":
            return [ind + f"acc = {self.expr()}"]
        if kind == "aug":
            op = r.choice(BINOPS + ["**", "<<", ">>"])
            rhs = (self.subst(r.choice(POW_RHS)) if op == "**" else self.subst(r.choice(SHIFT_RHS))
                   if op in ("<<", ">>") else self.expr(1))
            return [ind + f"acc {op}= {rhs}"]
        if kind == "cnt":
            return [ind + r.choice(["cnt += 1", f"cnt += {self.cond(0)}", f"cnt = cnt + int({self.expr(0)})"])]
        if kind == "write":
            tgt = self.subst(r.choice(["y[I]", "y[I]", "x[I]", "y[n - 1 - I]", "y[I - 1]"]))
            op = r.choice(["", "", "+", "-", "*"])
            return [ind + f"{tgt} {op}= {self.expr(1)}"]
        if kind == "const":
            return [ind + self.subst(f"{r.choice(['y[I]', 'x[I]'])} = {r.choice(CONSTS)}")]
        if kind == "append":
            return [ind + f"if {self.cond()}:", ind + f"    out.append({self.expr(1)})"]
        t = f"t{len(self.loopvars)}"
        return [ind + f"{t} = {self.expr()}", ind + f"acc = acc + {t}" if r.random() < 0.5 else ind + f"out.append({t})"]

    def block(self, ind: str, depth: int) -> list[str]:
        r = self.r
        lines: list[str] = []
        for _ in range(r.choice([1, 1, 2, 2, 3])):
            kind = r.random()
            if depth > 0 and kind < 0.3:
                lines += self.branch(ind, depth - 1)
            elif depth > 0 and kind < 0.38 and len(self.loopvars) < 2:
                j = "j"
                self.loopvars.append(j)
                lines += [ind + f"for j in range({r.choice(['i', 'i + 1', 'n', '2'])}):", *self.block(ind + "    ", 0)]
                self.loopvars.pop()
            elif kind < 0.48:
                lines += [ind + f"if {self.cond()}:", ind + "    " + r.choice(["break", "continue", "break"])]
            elif kind < 0.52:
                lines += [ind + f"if {self.cond()}:", ind + "    return acc, cnt, out"]
            else:
                lines += self.simple(ind)
        return lines

    def branch(self, ind: str, depth: int) -> list[str]:
        r = self.r
        lines = [ind + f"if {self.cond()}:", *self.block(ind + "    ", depth)]
        for _ in range(r.choice([0, 0, 1, 2])):
            lines += [ind + f"elif {self.cond()}:", *self.block(ind + "    ", depth)]
        if r.random() < 0.5:
            lines += [ind + "else:", *self.block(ind + "    ", depth)]
        return lines

    def loop(self) -> list[str]:
        r = self.r
        kind = r.choices(["range", "iter", "enum", "while", "rev"], [6, 2, 2, 2, 1])[0]
        self.loopvars = ["i"]
        if kind == "while":
            head = ["    i = 0", f"    while i < n and {r.choice(['cnt < 5', 'acc != 7', 'True', 'x[i] == x[i]'])}:",
                    "        v = x[i]"]
            return head + self.block("        ", 2) + ["        i += 1"]
        head = {"range": ["    for i in range(n):", "        v = x[i]"],
                "iter": ["    for v in x:", "        i = cnt"],
                "enum": ["    for i, v in enumerate(x):"],
                "rev": ["    for i in range(n - 1, -1, -1):", "        v = y[i]"]}[kind]
        return head + self.block("        ", 2)

    def calls(self) -> list[str]:
        r = self.r
        xd, yd = r.choice(DTYPES), r.choice(DTYPES) if r.random() < 0.6 else None
        yd = yd or xd
        size = r.choice(SIZES)
        calls = []
        for c in range(3):
            if c == 2 and r.random() < 0.4:
                size = r.choice(SIZES)

            def arr(dtype: str) -> str:
                return f"np.array([{', '.join(_value(r, dtype) for _ in range(size))}], dtype=np.{dtype})"
            k = r.choice([0, 1, 2, 3, -1, 5, 2**40])
            calls.append(f"args = ({arr(xd)}, {arr(yd)}, {k}, {r.choice(SCALAR_ARGS)})\n")
        return calls

    def program(self) -> LoopProgram:
        r = self.r
        calls = self.calls()
        init = r.choice(INITS)
        for _ in range(40):
            body = self.loop()
            if r.random() < 0.2:
                body += self.loop()
            prog = LoopProgram(init, body, r.choice(["acc, cnt, out", "acc, cnt, out, y", "acc", "out, x"]), calls)
            ok = _runs(prog)
            if ok or (ok is False and r.random() < 0.3):
                return prog
        return prog


class _Slow(Exception):
    pass


def _runs(prog: LoopProgram) -> bool | None:
    """Whether ``prog`` runs plainly on every call (False: it raises, as a program may);
    None when it is no program to check (a drawing error: a name, an attribute of a Python
    number, a call that takes over a second, a result too big)."""
    try:
        fn = prog.build(None)
    except SyntaxError:
        return None

    def slow(signum, frame):
        raise _Slow

    old = signal.signal(signal.SIGALRM, slow)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    ok = True
    try:
        for c in range(len(prog.calls)):
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    res = fn(*prog.args(c))
            except (NameError, UnboundLocalError, AttributeError, RecursionError, MemoryError):
                return None
            except _Slow:
                return None
            except Exception:      # noqa: BLE001 - a program that raises is kept, sometimes
                ok = False
                continue
            if _too_big(res) or _huge(res):
                return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return ok


def _huge(obj) -> bool:
    if isinstance(obj, (list, tuple)):
        return any(_huge(o) for o in obj)
    return isinstance(obj, int) and obj.bit_length() > 4096


def check(prog: LoopProgram, backends=("eager", "cpp"), time_limit: float = TIME_LIMIT) -> None:
    """Raise Mismatch naming the backend, call and difference, with the reproducer."""
    runner.check(prog, backends, time_limit, _check_backend)


def _check_backend(prog: LoopProgram, backend: str) -> None:
    ref = prog.build(None)
    compiled = kiln.compile(prog.build(backend), backend=backend)
    for c in range(len(prog.calls)):
        compare_call(ref, compiled, prog.args(c), prog.args(c), f"call {c}", WARNINGS)


def check_seed(seed: int, backends=("eager", "cpp")) -> LoopProgram:
    prog = LoopGen(seed).program()
    try:
        check(prog, backends)
    except ProgramTimeout as err:   # (a finding: the long run reports it and goes on)
        raise Mismatch(f"{err}") from None
    return prog


def minimize(prog: LoopProgram, backends=("eager", "cpp")) -> LoopProgram:
    """Drop lines of the body (a line with the block under it) and calls while the program
    still fails."""

    def fails(p: LoopProgram) -> bool:
        return _runs(p) is not None and runner.fails(check, p, backends)

    def indent(line: str) -> int:
        return len(line) - len(line.lstrip())

    changed = True
    while changed:
        changed = False
        for a in range(len(prog.body)):
            b = a + 1
            while b < len(prog.body) and indent(prog.body[b]) > indent(prog.body[a]):
                b += 1
            cand = LoopProgram(prog.init, prog.body[:a] + prog.body[b:], prog.ret, prog.calls)
            with contextlib.suppress(SyntaxError):
                compile(cand.source(), "<m>", "exec")
                if fails(cand):
                    prog, changed = cand, True
                    break
        if not changed:
            for c in range(len(prog.calls)):
                if len(prog.calls) > 1:
                    cand = LoopProgram(prog.init, prog.body, prog.ret, prog.calls[:c] + prog.calls[c + 1:])
                    if fails(cand):
                        prog, changed = cand, True
                        break
    return prog


def main() -> int:
    """A long run (runner.long_run): KILN_FUZZ_SLOOPS_SEED, KILN_FUZZ_SLOOPS_PROGRAMS,
    KILN_FUZZ_SLOOPS_BACKENDS (default eager,cpp)."""
    def minimized(seed: int, backends: tuple) -> str:
        prog = LoopGen(seed).program()
        try:
            return minimize(prog, backends).reproducer()
        except ProgramTimeout:     # (a program past the time limit: as drawn)
            return prog.reproducer()

    return runner.long_run("sloops", check_seed, minimized, "eager,cpp", every=20)


if __name__ == "__main__":
    sys.exit(main())
