"""A differential generator of loops whose trip counts and sizes change between calls (stop 54).

Stop 54 left loops to run time: ``for _ in range(n)`` over an int argument whose value
changed becomes a graph loop node with a run-time trip count (capture/graph_loop.py), graph
loops carry arrays whose dims are size symbols (``dynamic=True``, or dims learned dynamic),
creation ops sized by a dynamic dim keep it symbolic, and ``np.roll`` by a 0-d shift read
from an array stays in the graph. Those paths are met only on the second and later calls,
which the other generators rarely make with other counts and sizes.

A program takes ``x, n, k, s, lst``: a 1-d array (float32, float64, int32, int64, bool or
complex128; values multiples of 1/4 in [-2, 2] as lang.py's), an int trip count, an int
shift, a 1-element int64 array (a run-time shift) and a list (its length a count). It
carries an array through a loop (``x.copy()``, ``np.zeros(len(x))``, ``np.arange(n)``, the
argument itself, so writes reach the caller) whose count is ``range(n)``, ``range(len(lst))``,
``range(n - 3)``, ``range(2, n)``, ``range(n, 0, -1)``, a huge count ended by a ``break``, or
a ``while`` with a counter; the body rolls (by ``k``, ``s[0]``, a literal), writes slices
(``acc[1:] = ...``), appends to lists, breaks and continues under data conditions. Each
program is called five to seven times with changing counts (0, 1, 2, 7, 3, negative) and
sizes (0, 1 and more), under ``dynamic=None`` and ``dynamic=True``.

The oracle is lang.py's: results bit-exact (dtypes, shapes, NaNs, zeros' signs), exceptions
(type and message), the arguments' final state, kiln's warnings among plain Python's. Builds
are counted per call (``kiln.runtime.build.stats``); ``BUILDS`` collects, per program, the
calls that built, for the long run's report (a count or size that builds every time).

    KILN_FUZZ_TRIPS_SEED=1 KILN_FUZZ_TRIPS_PROGRAMS=200 python -m tests.fuzz.trips
"""
from __future__ import annotations

import linecache
import random
import sys

import numpy as np

import kiln
from kiln.runtime import build

from . import runner
from .lang import compare_call
from .runner import TIME_LIMIT, Mismatch, _alias_pattern

DTYPES = ["float64", "float32", "int64", "int32", "bool", "complex128"]

INITS = ["acc = x.copy()", "acc = np.zeros(len(x), dtype=x.dtype)", "acc = np.zeros(len(x))", "acc = x",
         "acc = np.ones_like(x)", "acc = x * 2", "acc = np.arange(len(x)).astype(x.dtype)",
         "acc = np.full(len(x), 0.5)", "acc = np.empty(len(x)); acc[:] = 1"]
COUNTS = ["range(n)", "range(len(lst))", "range(n - 3)", "range(2, n)", "range(n, 0, -1)", "range(n * 2)",
          "WHILE", "HUGE", "range(k)"]
BODY = ["acc = acc + x", "acc = acc * 0.5 + x", "acc = np.roll(acc, k)", "acc = np.roll(acc, 1) + x",
        "acc = np.roll(acc, s[0])", "acc = acc + np.roll(acc, s[0]) * 0.25", "acc[1:] = acc[:-1] + x[1:]",
        "acc[1:] += acc[:-1]", "acc[:1] = 0", "out.append(acc.sum())", "out.append(acc.copy())",
        "out.append(i)", "acc = acc + i", "acc = acc + np.arange(len(acc))", "acc = np.maximum(acc, x)",
        "cnt += 1", "tot = tot + acc.sum()", "z = np.zeros(len(x)); z[:] = acc; acc = z", "acc = acc - x.mean()",
        "acc = np.where(acc > 1, acc - 1, acc)", "acc = -acc", "acc = acc[::-1] + x", "acc = acc ** 2",
        "acc = acc / 2", "acc = acc // 1", "lst.append(i)", "acc = acc + np.arange(n)[:len(acc)].sum()"]
CONTROL = ["if acc.sum() > 3: break", "if cnt > 4: break", "if i % 2: continue", "if acc.max(initial=0) > 2: continue",
           "if np.any(acc < -1): break", "if len(out) > 3: break"]


class TripProgram:
    """A drawn program: its loop (lines, 4-space indented), return and calls; ``dynamic``
    the ``kiln.compile`` option."""

    def __init__(self, body: list[str], ret: str, calls: list[str], dynamic=None) -> None:
        self.body, self.ret, self.calls, self.dynamic = body, ret, calls, dynamic

    def source(self) -> str:
        lines = ["def prog(x, n, k, s, lst):", "    out = []", "    cnt = 0", "    tot = 0.0", "    i = -1",
                 *self.body, f"    return {self.ret}"]
        return "\n".join(lines) + "\n"

    def build(self):
        source = self.source()
        filename = f"<kiln-tripfuzz-{id(source)}-{random.getrandbits(32)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        ns: dict = {"np": np, "__name__": "kiln_tripfuzz"}
        exec(compile(source, filename, "exec"), ns)
        return ns["prog"]

    def args(self, j: int) -> tuple:
        ns: dict = {"np": np}
        exec(self.calls[j], ns)
        return ns["args"]

    def reproducer(self) -> str:
        source = self.source().replace("def prog(", f"@kiln.compile(dynamic={self.dynamic})\ndef prog(")
        calls = "\n".join(f"# call {j}\n{c}\nprint(prog(*args))" for j, c in enumerate(self.calls))
        return f"import numpy as np\nimport kiln\n\n{source}\n{calls}\n"


class TripGen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def loop(self) -> list[str]:
        r = self.r
        count = r.choice(COUNTS)
        body = [r.choice(BODY) for _ in range(r.randint(1, 3))]
        if r.random() < 0.4:
            body.insert(r.randint(0, len(body)), r.choice(CONTROL))
        if count == "HUGE":
            body[:0] = ["cnt += 1", "if cnt > 5: break"]
            count = "range(10 ** 9)"
        if count == "WHILE":
            bound = r.choice(["n", "len(lst)", "n + 1"])
            head = ["    i = 0", f"    while i < {bound}:"]
            body = [b for b in body if "lst" not in b]      # (a list the bound grows)
            body = [*body, "i += 1"]
            if any("continue" in b for b in body):     # a counter after a continue never moves
                body = ["i += 1", *body[:-1]]
        else:
            head = [f"    for i in {count}:"]
        return head + [f"        {b}".replace("; ", "\n        ") for b in body]

    def calls(self) -> list[str]:
        r = self.r
        dtype = r.choice(DTYPES)
        sizes = r.choice([[5, 5, 0, 1, 7, 5], [4, 6, 9, 1, 0], [3, 3, 3, 3, 3, 8], [6, 1, 6, 0, 2, 6, 11]])
        counts = r.choice([[0, 1, 2, 7, 3], [3, 4, 0, -3, 5, 1], [2, 2, 7, 1, 0, 9], [1, 5, 2, 2, 0, 3, 6]])
        calls = []
        for j in range(max(len(sizes), len(counts))):
            m, n = sizes[j % len(sizes)], counts[j % len(counts)]
            vals = [(r.randint(-8, 8) / 4) for _ in range(m)]
            k, sh = r.randint(-3, 3), r.randint(-4, 4)
            lst = list(range(r.randint(0, 4)))
            if dtype == "complex128":
                arr = f"np.array({vals!r}, dtype=np.float64) * (1 + 0.5j)"
            elif dtype == "bool":
                arr = f"np.array({vals!r}) > 0"
            else:
                arr = f"np.array({vals!r}).astype(np.{dtype})"
            calls.append(f"args = ({arr}, {n}, {k}, np.array([{sh}]), {lst!r})")
        return calls

    def program(self) -> TripProgram:
        r = self.r
        body = r.choice(INITS).split("; ")
        body = [f"    {b}" for b in body] + self.loop()
        if r.random() < 0.3:
            body += self.loop()
        ret = r.choice(["acc, out, cnt", "acc", "acc, tot, i", "acc, lst, out"])
        return TripProgram(body, ret, self.calls(), r.choice([None, True]))


BUILDS: list = []      # (program's source, [builds per call]) of the last checks


def check(prog: TripProgram, backends=("eager", "cpp"), time_limit: float = TIME_LIMIT) -> None:
    runner.check(prog, backends, time_limit, _check_backend)


def _check_backend(prog: TripProgram, backend: str) -> None:
    ref = prog.build()
    compiled = kiln.compile(prog.build(), backend=backend, dynamic=prog.dynamic)
    built = []
    for j in range(len(prog.calls)):
        ref_args, kiln_args = prog.args(j), prog.args(j)
        where = f"call {j} (dynamic={prog.dynamic})"
        before = build.stats["builds"]
        exp, got = compare_call(ref, compiled, ref_args, kiln_args, where, "1")
        built.append(build.stats["builds"] - before)
        if got[0] == "ok" and _alias_pattern(got[1], kiln_args) != _alias_pattern(exp[1], ref_args):
            raise Mismatch(f"{where}: outputs alias arguments differently")
    if backend == "cpp":
        BUILDS.append((prog.source(), prog.dynamic, built, len(compiled.cache_entries)))


def check_seed(seed: int, backends=("eager", "cpp")) -> TripProgram:
    prog = TripGen(seed).program()
    check(prog, backends)
    return prog


def minimize(prog: TripProgram, backends=("eager", "cpp")) -> TripProgram:
    """Drop body lines (not loop heads) and calls while the program still fails."""

    def fails(p: TripProgram) -> bool:
        return runner.fails(lambda q, b: check(q, b) if compile(q.source(), "<m>", "exec") else None, p, backends)

    changed = True
    while changed:
        changed = False
        for a in range(len(prog.body)):
            if prog.body[a].rstrip().endswith(":"):
                continue
            cand = TripProgram(prog.body[:a] + prog.body[a + 1:], prog.ret, prog.calls, prog.dynamic)
            if fails(cand):
                prog, changed = cand, True
                break
        if not changed and len(prog.calls) > 1:
            for a in range(len(prog.calls)):
                cand = TripProgram(prog.body, prog.ret, prog.calls[:a] + prog.calls[a + 1:], prog.dynamic)
                if fails(cand):
                    prog, changed = cand, True
                    break
    return prog


def main() -> int:
    """A long run (runner.long_run): KILN_FUZZ_TRIPS_SEED, KILN_FUZZ_TRIPS_PROGRAMS,
    KILN_FUZZ_TRIPS_BACKENDS (default eager,cpp). Prints the programs whose every call after
    the second built on cpp."""
    from .runner import long_run
    rc = long_run("trips", check_seed, lambda seed, backends: minimize(TripGen(seed).program(), backends).reproducer(),
                  "eager,cpp", every=20)
    for source, dynamic, built, entries in BUILDS:
        if len(built) > 3 and all(b > 0 for b in built[2:]):
            print(f"--- builds every call (dynamic={dynamic}): {built}, {entries} entries\n{source}", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
