"""Cost of telling which op raised a floating-point flag (lowering/fp_flags.py): kernels
in which several ops may raise one kind compute each op's predicate (ops/fp_errors.py
``raises_where``) beside its value. Chains of 5-10 ops on 1M float64 (values that raise
nothing), kiln against NumPy in the same run; medians of ``--rounds`` rounds, each the
best of 3 calls.

Run: ``python -m benchmarks.fp_owners [--rounds 15] [--n 1000000]``; for a before/after
figure run it on both trees (PYTHONPATH) and compare the kiln/NumPy ratios.

Measured 2026-12-05 on the shared 2-core machine (load 7-10), Python 3.11, 1M float64,
11 rounds, two runs each, ms per call (kiln / NumPy in the same run). "before": main's
tree without predicates (those kernels' kinds were silent); "after": the plain body runs,
the predicates only after a launch that raised a told kind:

    case     before: kiln ms (ratio)         after: kiln ms (ratio)
    arith    1.57 (0.080)  1.35 (0.088)      1.34 (0.071)  1.44 (0.081)
    libm     13.98 (0.261) 13.48 (0.285)     14.56 (0.247) 12.55 (0.238)
    roots    8.41 (0.191)  9.13 (0.220)      9.52 (0.193)  8.67 (0.163)
    single   0.91 (0.568)  0.87 (0.572)      0.90 (0.568)  0.84 (0.569)

Computing them on every launch (what a kernel that overwrites an input it reads does):
arith 2.6-2.7 ms against 1.1 (2.5x; 5.8 ms with 32-bit words, lowering/cpp_ops.py).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import kiln


def arith(x, y):   # multiply, add, divide, subtract: overflow and invalid, 4 raisers each
    return ((x * 1.5 + y) / (y - 0.5)) * x - y


def libm(x, y):    # exp, log, sin beside arithmetic
    return np.log(np.exp(x) + 1.0) * y - np.sin(x) / (y + 2.0)


def roots(x, y):   # sqrt, log, arcsin, divide: invalid of four ops
    return np.sqrt(x) + np.log(y) * np.arcsin(x * 0.5) / (y + 1.0)


def single(x, y):  # one raiser per kind: no predicates (the flags say it all)
    return np.sqrt(x) * 0.5 + 1.0


CASES = [arith, libm, roots, single]


def _best(fn, args, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--n", type=int, default=1_000_000)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    x = rng.random(a.n) + 0.5
    y = rng.random(a.n) + 0.5
    print(f"{'case':8} {'NumPy ms':>9} {'kiln ms':>9} {'kiln/NumPy':>10}")
    for fn in CASES:
        compiled = kiln.compile(fn)
        compiled(x, y)
        compiled(x, y)
        ts_np, ts_k = [], []
        for _ in range(a.rounds):
            ts_np.append(_best(fn, (x, y)))
            ts_k.append(_best(compiled, (x, y)))
        m_np, m_k = statistics.median(ts_np) * 1e3, statistics.median(ts_k) * 1e3
        print(f"{fn.__name__:8} {m_np:9.3f} {m_k:9.3f} {m_k / m_np:10.3f}")


if __name__ == "__main__":
    main()
