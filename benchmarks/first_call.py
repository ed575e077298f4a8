"""What a new process pays before its first compiled call returns, the kernels already in
the on-disk cache: ``import kiln``, then each small function's first call (capture,
guards, the artifact cache's lookup, loading the wrapper and the library) and its second.

    python -m benchmarks.first_call [--runs 9] [--cache DIR]

A first process fills a fresh cache (or ``--cache``'s); then ``--runs`` new processes
each import kiln and call every function twice. Milliseconds, medians over the processes
(min-max in brackets), wall time and the process's CPU time. Run with
``PYTHONDONTWRITEBYTECODE`` unset where the import time matters: without .pyc files every
module is compiled from source at each import (~2.5x the time).

2026-12-05, Python 3.11, the shared 2-core machine under load (wall time 3-6x the CPU
time, so the CPU column is the one to read), ``--runs 9`` twice each, medians of the two
runs' medians. before: main at 9a1d112; after: the compiler's ``--version`` and the
sources' hash kept in the cache (no g++ process, no reading of ~110 files), a cache hit
imports no lowering module, ``subprocess``/``tempfile``/``shutil`` imported where a build
runs.

    ms (CPU)          before    after
    import kiln       99.0      89.7
    chain first       15.8      9.4      (wall: 122 -> 64)
    total first        9.3     10.0      (one run of 11 processes each; within noise)
    update first       3.5      3.5      (the same run)

``--cold``: what a function's first call pays when nothing is cached (every kernel built),
split into phases, for eight representative functions (a pointwise chain, a reduction,
softmax, a graph break, a graph loop, a value_and_grad step, a program of
tests/test_programs_real9.py, an op-table row). Each process gets a fresh cache and
compiles one throwaway function first (imports, the support object, the compiler's
identity), then calls every function once. CPU milliseconds, medians over the processes:
``python`` the process's own CPU time (capture, lowering, codegen, loading, guards),
``g++`` its child processes' (compiler, assembler, linker); ``capture``,
``lower+codegen``, ``build`` (kiln's side of it: writing files, waiting is not CPU) and
``load`` are parts of ``python``.

    python -m benchmarks.first_call --cold [--runs 5] [NAME ...]

2026-12-06, Python 3.11, the shared 2-core machine loaded (load average 7-13), ``--cold
--runs 3`` twice each side, interleaved; g++ CPU is counted in 10 ms ticks. before:
707b7e7; after: a sum below the parallel grain calls kiln_pairwise (or
kiln_pairwise_chunks) rather than the threaded templates, whose parallel regions GCC
compiled for nothing. Python CPU within noise everywhere.

    g++ ms (CPU)   before      after
    total          160, 170    140, 150
    broken         210, 200    180, 190   (its first graph sums 1000 values)
    others         unchanged (chain 50-60, softmax 70-80, relax 60, train_step 90-100,
                   lennard_jones 360-380 / 370, op_row 110 / 100-110)

2026-12-07, Python 3.11, loaded (load average 13-15), ``--cold --runs 2``/``3``: before
e4683d9; after: NumPy's vector math functions are support objects of their own, one per
function (runtime/build.py ``support_object``), where they were one object of ~40 that a
softmax's first call built (its float64 exp: SVML's). g++ CPU ms: softmax 1190 -> 130-140;
chain, total, op_row unchanged (40-50, 70-85, 90-100). A first softmax with nothing
warmed up (no throwaway function first, fresh cache): g++ CPU 1270-1570 -> 170-220 ms,
wall 5.2-7.1 -> 1.4-1.8 s; float32's 1310-1720 -> 610-940 ms (NumPy's own float32 exp
object: <immintrin.h> is most of its ~0.3-0.5 s); np.exp(np.sin(x)) 1320-1440 -> 150-170.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, sys, time
w0, c0 = time.perf_counter(), time.process_time()
import numpy as np
w1, c1 = time.perf_counter(), time.process_time()
import kiln
w2, c2 = time.perf_counter(), time.process_time()
row = {"import numpy": (w1 - w0, c1 - c0), "import kiln": (w2 - w1, c2 - c1)}

def chain(a, b):
    return np.sin(a) * b + 1.0

def total(a):
    return float((a * a).sum())

def update(a, b):
    a += 2.0 * b
    return a

a, b = np.ones(1000), np.full(1000, 0.5)
for fn, args in ((chain, (a, b)), (total, (a,)), (update, (a.copy(), b))):
    compiled = kiln.compile(fn)
    w, c = time.perf_counter(), time.process_time()
    compiled(*args)
    row[fn.__name__ + " first"] = (time.perf_counter() - w, time.process_time() - c)
    w, c = time.perf_counter(), time.process_time()
    compiled(*args)
    row[fn.__name__ + " second"] = (time.perf_counter() - w, time.process_time() - c)
print(json.dumps(row))
"""

# The --cold functions and their arguments (benchmarks/compile_latency.py runs them too);
# ``lennard_jones`` is imported before them.
COLD_CASES = r"""def chain(a, b):
    return np.sin(a) * b + 1.0

def total(a):
    return float((a * a).sum())

def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)

def broken(x):
    s = x.sum()
    if s > 0:              # data-dependent branch: a graph break
        return np.sqrt(x) * 2.0
    return -x

def relax(u, v):
    for _ in range(20):    # a graph loop node
        u = 0.5 * u + 0.25 * v
    return u

def train_step(w, x, y):
    loss, g = kiln.value_and_grad(lambda w: np.mean((x @ w - y) ** 2))(w)
    w -= 0.1 * g
    return loss

def op_row(x, y):          # an op-table row: clip, where, hypot, cumsum
    return np.cumsum(np.where(x > y, np.clip(x, -0.5, 0.5), np.hypot(x, y)), axis=0)

rng = np.random.default_rng(0)
a, b = np.ones(1000), np.full(1000, 0.5)
cases = [(chain, (a, b)), (total, (a,)), (softmax, (rng.random((64, 128)),)), (broken, (a,)),
         (relax, (a.copy(), b)),
         (train_step, (np.ones((8, 1)), rng.random((32, 8)), rng.random((32, 1)))),
         (lennard_jones, (rng.uniform(0, 3, (6, 3)), 1.0, 1.0, 2.5)),
         (op_row, (rng.standard_normal((16, 8)), rng.standard_normal((16, 8))))]
"""

COLD = r"""
import json, os, sys, time
import numpy as np
import kiln
sys.path.insert(0, sys.argv[1])   # the repository: a program of the suite
from tests.test_programs_real9 import lennard_jones_triu_forces as lennard_jones
from kiln.capture import convert
from kiln.runtime import backend, build

spent = {}
stack = []

def timed(phase, fn):
    def run(*args, **kwargs):
        stack.append(0.0)
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            total = time.process_time() - start
            inner = stack.pop()
            spent[phase] = spent.get(phase, 0.0) + total - inner
            if stack:
                stack[-1] += total
    return run

kiln.api.capture = kiln.family.capture = timed("capture", convert.capture)   # (family: a break's recapture)
backend.generate = timed("lower+codegen", backend.generate)
backend._load_wrapper = timed("load", backend._load_wrapper)
build.CppLoader.build = timed("build", build.CppLoader.build)

""" + COLD_CASES + r"""kiln.compile(lambda x: x * 2.0 + 1.0)(a)   # warm-up: lowering, cffi and the support object
only = sys.argv[2:]
row = {}
for fn, args in cases:
    if only and fn.__name__ not in only:
        continue
    compiled = kiln.compile(fn)
    args = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in args)
    spent.clear()
    b0, c0, t0, w0 = build.stats["builds"], time.process_time(), os.times(), time.perf_counter()
    compiled(*args)
    w1, c1, t1 = time.perf_counter(), time.process_time(), os.times()
    row[fn.__name__] = {"wall": w1 - w0, "python": c1 - c0,
                        "g++": t1.children_user + t1.children_system - t0.children_user - t0.children_system,
                        "builds": build.stats["builds"] - b0, **spent}
print(json.dumps(row))
"""


def run_child(cache: str) -> dict:
    return _child(CHILD, cache)


def _child(script: str, cache: str, *argv: str) -> dict:
    env = dict(os.environ, KILN_CACHE_DIR=cache, KILN_COST_MODEL="0")
    out = subprocess.run([sys.executable, "-c", script, *argv], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--cache", default="", help="a cache directory to use (kept)")
    parser.add_argument("--cold", action="store_true", help="first calls that build every kernel")
    parser.add_argument("names", nargs="*", help="with --cold: only these functions")
    args = parser.parse_args(argv)
    if args.cold:
        return cold(args.runs, args.names)
    cache = args.cache or tempfile.mkdtemp(prefix="kiln-first-call-")
    try:
        run_child(cache)   # fills the cache: every later process finds its kernels there
        rows = [run_child(cache) for _ in range(args.runs)]
    finally:
        if not args.cache:
            shutil.rmtree(cache, ignore_errors=True)
    print(f"{'ms, median [min-max]':24s} {'wall':>22s} {'cpu':>22s}   ({args.runs} processes)")
    for name in rows[0]:
        cells = []
        for k in (0, 1):
            xs = [r[name][k] * 1e3 for r in rows]
            cells.append(f"{statistics.median(xs):7.2f} [{min(xs):.2f}-{max(xs):.2f}]")
        print(f"{name:24s} {cells[0]:>22s} {cells[1]:>22s}")


def cold(runs: int, names: list[str]) -> None:
    rows = []
    for _ in range(runs):
        cache = tempfile.mkdtemp(prefix="kiln-cold-call-")
        try:
            rows.append(_child(COLD, cache, ROOT, *names))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    columns = ["python", "g++", "capture", "lower+codegen", "build", "load", "builds"]
    print(f"CPU ms, median of {runs} processes  " + " ".join(f"{c:>13s}" for c in columns))
    for name in rows[0]:
        cells = [statistics.median(r[name].get(c, 0.0) for r in rows) for c in columns]
        print(f"{name:33s}" + " ".join(f"{x * 1e3:13.1f}" for x in cells[:-1]) + f"{cells[-1]:14.0f}")


if __name__ == "__main__":
    main()
