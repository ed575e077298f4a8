"""What an element loop costs run as Python, per trip and per body op, and what its loop
node costs compiled: the figures kiln/ops/loops.py prices element loops by.

    python -m benchmarks.element_loop_cost [--python] [--compiled] [--trips 4,16,64,256,1024,4096]
        [--rounds 7]

``--python``: per-trip times of small loop bodies over a float64 array of 1,000 elements
run as Python (``for i in range(n): <body>``), less the empty loop's trip, so each row is
its body's cost: an element read ``x[i]`` (a NumPy scalar), a comparison or arithmetic of
NumPy scalars and of Python numbers, an element write, an append.
``--compiled``: programs whose loops capture as loop nodes (a count under a test, appends,
a running sum written out, a max scan, and benchmarks/loops.py's house_robber, crc32,
first_above, histogram_loop and fsub), plain and compiled (C++, cost model off: the loop
node always; ``--model``: on, the user's default, and each row says which side ran) at
each trip count, interleaved in the same rounds (medians of per-call
means, CPU time); the compiled call's fixed cost is read off the smallest counts.
Both print the load average (the machine is shared).
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import kiln
from kiln.config import config

from .harness import _loadavg
from .loop_kernels import crc32, first_above, fsub, histogram_loop, house_robber

CLOCK = time.process_time


def count_above(x, t):
    n = 0
    for i in range(len(x)):
        if x[i] > t:
            n += 1
    return n


def picks(x, t):
    idx = []
    for i in range(len(x)):
        if x[i] > t:
            idx.append(i)
    return idx


def running_sum(x):
    out = np.empty_like(x)
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
        out[i] = s
    return out


def max_scan(x):
    best = x[0]
    at = 0
    for i in range(1, x.shape[0]):
        if x[i] > best:
            best = x[i]
            at = i
    return best, at


def doubled_above(x, t):
    out = []
    for i in range(len(x)):
        v = x[i]
        if v > t:
            out.append(v * 2.0)
    return np.array(out)


PROGRAMS = {"count_above": (count_above, lambda x: (x, 0.5)),
            "picks": (picks, lambda x: (x, 0.5)),
            "running_sum": (running_sum, lambda x: (x,)),
            "max_scan": (max_scan, lambda x: (x,)),
            "doubled_above": (doubled_above, lambda x: (x, 0.5)),
            # benchmarks/loops.py's loop kernels at n elements
            "house_robber": (house_robber, lambda x: (x,)),
            "crc32 (8-trip inner loop)": (crc32, lambda x: ((x * 256).astype(np.uint8),)),
            "first_above (return in the loop)": (first_above, lambda x: (np.sort(x), 0.9)),
            "histogram_loop": (histogram_loop, lambda x: (x, 16)),
            "fsub (n = sqrt(trips))": (fsub, lambda x: _triangular(x))}


def _triangular(x):
    n = max(2, int(round(len(x) ** 0.5)))
    L = np.tril(np.resize(x, (n, n))) + n * np.eye(n)
    return L, x[:n].copy()

# name -> (setup, body): the body runs once a trip, ``i`` the trip
BODIES = {
    "empty": ("", "pass"),
    "x[i] (float64 read)": ("", "v = x[i]"),
    "x[i] > t (read, compare)": ("", "c = x[i] > t"),
    "np scalar a * b": ("a = x[3]; b = x[4]", "c = a * b"),
    "np scalar a + b": ("a = x[3]; b = x[4]", "c = a + b"),
    "np scalar a > b": ("a = x[3]; b = x[4]", "c = a > b"),
    "np scalar a > float": ("a = x[3]", "c = a > t"),
    "float a * b": ("a = 1.5; b = 2.5", "c = a * b"),
    "float a > b": ("a = 1.5; b = 2.5", "c = a > b"),
    "int n += 1": ("n = 0", "n += 1"),
    "int i * 2 + 1": ("", "c = i * 2 + 1"),
    "out[i] = float": ("v = 1.5", "out[i] = v"),
    "out[i] = np scalar": ("v = x[3]", "out[i] = v"),
    "L.append(i)": ("L = []", "L.append(i)"),
    "if a > b: (branch taken)": ("a = 2.5; b = 1.5", "if a > b: pass"),
    "float a % b": ("a = 7.5; b = 2.5", "c = a % b"),
    "np scalar a % b": ("a = x[3] + 7; b = x[4] + 1", "c = a % b"),
    "np scalar a / b": ("a = x[3]; b = x[4]", "c = a / b"),
    "A[i, j] (2-d read)": ("A = x.reshape(1, -1)", "v = A[0, i]"),
    "max(a, b) np scalars": ("a = x[3]; b = x[4]", "c = max(a, b)"),
    "max(a, b) floats": ("a = 1.5; b = 2.5", "c = max(a, b)"),
    "abs(a) np scalar": ("a = x[3]", "c = abs(a)"),
    "np.sqrt(a) np scalar": ("a = x[3]", "c = np.sqrt(a)"),
    "math.sqrt(a) float": ("import math; a = 2.5", "c = math.sqrt(a)"),
    "float(a) np scalar": ("a = x[3]", "c = float(a)"),
    "int(a) np scalar": ("a = x[3]", "c = int(a)"),
    "np.float64(a) float": ("a = 2.5", "c = np.float64(a)"),
    "int8 a + b": ("a = np.int8(3); b = np.int8(4)", "c = a + b"),
    "int i // 3, i % 3": ("", "c = i // 3; d = i % 3"),
}


def _body_fn(setup: str, body: str):
    src = (f"def run(x, out, t, n_trips):\n    {setup or 'pass'}\n"
           f"    for i in range(n_trips):\n        {body}\n")
    space: dict = {"np": np}
    exec(src, space)
    return space["run"]


def python_bodies(rounds: int, trips: int = 1000) -> None:
    x = np.random.default_rng(0).random(trips)
    out = np.empty_like(x)
    fns = {name: _body_fn(*sb) for name, sb in BODIES.items()}
    samples: dict = {name: [] for name in fns}
    for r in range(rounds):
        names = list(fns) if r % 2 == 0 else list(reversed(fns))
        for name in names:
            fn = fns[name]
            start = CLOCK()
            for _ in range(20):
                fn(x, out, 0.5, trips)
            samples[name].append((CLOCK() - start) / 20 / trips * 1e9)
    empty = statistics.median(samples["empty"])
    print(f"Python loop bodies, ns a trip (median of {rounds} rounds, {trips} trips; "
          f"load {_loadavg():.1f}); 'less empty' subtracts the empty loop's {empty:.0f} ns")
    for name, s in samples.items():
        m = statistics.median(s)
        print(f"  {name:28s} {m:7.1f}   less empty {m - empty:6.1f}")


def _per_call_us(fn, args, budget_s: float = 0.003) -> float:
    start = CLOCK()
    calls = 0
    while CLOCK() - start < budget_s or calls < 3:
        fn(*args)
        calls += 1
    return (CLOCK() - start) / calls * 1e6


def compiled_loops(rounds: int, trips: list[int], names: list[str] | None = None,
                   model: bool = False) -> None:
    config.cost_model = model      # off: the loop node at every count, what it costs
    rng = np.random.default_rng(1)
    print(f"\nloop programs: plain / compiled us a call (medians of {rounds} rounds, CPU time; "
          f"load {_loadavg():.1f}; C++ backend, cost model {'on' if model else 'off'})")
    for name, (fn, make) in PROGRAMS.items():
        if names and name not in names:
            continue
        rows = []
        for n in trips:
            args = make(rng.random(n))
            compiled = kiln.compile(fn)
            compiled(*args)
            compiled(*args)
            plain, comp = [], []
            for r in range(rounds):
                pair = [(plain, fn), (comp, compiled)]
                for dst, f in (pair if r % 2 == 0 else pair[::-1]):
                    dst.append(_per_call_us(f, args))
            ops = [n.op.name for rec in compiled.records if rec.graph is not None
                   for n in rec.graph.calls]
            python = any(rec.runs_as_python for rec in compiled.records)
            side = "as Python" if python else "loop node" if "loop" in ops else "no loop node"
            rows.append((n, statistics.median(plain), statistics.median(comp), side))
        print(f"  {name}")
        for n, p, c, side in rows:
            print(f"    {n:6d} trips  plain {p:9.2f}  compiled {c:8.2f}  ratio {c / p:5.2f}  {side}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", action="store_true")
    ap.add_argument("--compiled", action="store_true")
    ap.add_argument("--trips", default="4,8,16,32,64,128,1024,4096")
    ap.add_argument("--only", default="")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--model", action="store_true", help="the cost model on (the user's default)")
    a = ap.parse_args()
    both = not (a.python or a.compiled)
    if a.python or both:
        python_bodies(a.rounds)
    if a.compiled or both:
        compiled_loops(a.rounds, [int(t) for t in a.trips.split(",")],
                       [s for s in a.only.split(",") if s] or None, a.model)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
