"""Does float ``x % y`` (and np.fmod) pay off on threads? Interleaved A/B in one process.

    python -m benchmarks.remainder_threads [--sizes 4096,16384,65536,262144,1048576] [--rounds 9]

The C++ lowering takes threads for a kernel when elements x statements-per-element reach
PARALLEL_GRAIN (kiln/lowering/cpp_loops.py); a scalar libm call counts what
``cpp_ops.call_cost`` says. Here each size runs three ways in the same rounds (order
alternating, medians of per-call means, wall time: threads' CPU time would count twice):
NumPy, the kernel built with the remainder priced as one statement (A: one thread below
~4M elements) and priced as the scalar libm call it is (B: threads from its grain).
Both kernels are built with ``num_threads`` 2; the load average is printed.
"""
from __future__ import annotations

import argparse
import statistics
import time
import types

import numpy as np

import kiln
from kiln.config import config
from kiln.lowering import cpp_ops, cpp_plan

from .harness import _loadavg


def remainder(x, y):
    return x % y


def fmod(x, y):
    return np.fmod(x, y)


def _clone(fn):
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_b")


def _per_call_us(fn, args, budget_s=0.01):
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < budget_s or calls < 3:
        fn(*args)
        calls += 1
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4096,16384,65536,262144,1048576")
    ap.add_argument("--rounds", type=int, default=9)
    a = ap.parse_args()
    config.cost_model = False
    config.num_threads = 2
    rng = np.random.default_rng(0)
    print(f"x % y and np.fmod of float64, us a call (medians of {a.rounds} rounds, wall time; "
          f"load {_loadavg():.1f}; num_threads 2)")
    original = cpp_plan.call_cost
    for fn in (remainder, fmod):
        for n in (int(s) for s in a.sizes.split(",")):
            x, y = rng.standard_normal(n) * 100, rng.uniform(0.5, 3.0, n)
            one = kiln.compile(_clone(fn))
            cpp_plan.call_cost = lambda f, dt: 1 if f == "remainder" else original(f, dt)
            try:
                one(x, y)
            finally:
                cpp_plan.call_cost = original
            two = kiln.compile(_clone(fn))
            cpp_plan.call_cost = lambda f, dt: cpp_ops.SCALAR_CALL_COST if f in ("remainder", "fmod") \
                and np.dtype(dt).kind == "f" else original(f, dt)
            try:
                two(x, y)
            finally:
                cpp_plan.call_cost = original
            times: dict = {"numpy": [], "A": [], "B": []}
            for r in range(a.rounds):
                order = [("numpy", fn), ("A", one), ("B", two)]
                for name, f in (order if r % 2 == 0 else order[::-1]):
                    times[name].append(_per_call_us(f, (x, y)))
            m = {k: statistics.median(v) for k, v in times.items()}
            print(f"  {fn.__name__:9s} {n:8d}  numpy {m['numpy']:9.1f}  A (1 stmt) {m['A']:9.1f}  "
                  f"B (libm) {m['B']:9.1f}  B/A {m['B'] / m['A']:5.2f}")


if __name__ == "__main__":
    main()
