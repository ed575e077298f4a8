"""Time-stepping loops over whole arrays (graph loop nodes, issue #13): kiln with graph
loops (``after``) and with them off (``before``: the loop unrolls, or the cost model runs
it as Python) against NumPy in the same run. Steady state: CPU-time medians of
interleaved runs (the machine is shared). First call: wall time (g++ runs in a child
process) of a fresh function with an empty kernel cache.

    .venv/bin/python benchmarks/time_loops.py [--reps 5]
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import numpy as np

import kiln


def jacobi_2d(TSTEPS, A, B):
    for t in range(1, TSTEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def heat_ping_pong(u, v, steps, r):
    for _ in range(steps):
        v[1:-1, 1:-1] = u[1:-1, 1:-1] + r * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:]
                                             + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
        u, v = v, u
    return u


def heat_rebind(u, steps, dt):
    for _ in range(steps):
        u = u + dt * (np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4 * u)
    return u


def _compiled(fn, graph_loops: bool, make):
    """A fresh compiled function, its first call timed (wall) with an empty kernel cache."""
    kiln.config.graph_loops = graph_loops
    kiln.config.cache_dir = tempfile.mkdtemp(prefix="kiln_time_loops_")
    f = kiln.compile(fn)
    t0 = time.perf_counter()
    f(*make())
    return f, time.perf_counter() - t0


def _case(name, fn, make):
    after, first_after = _compiled(fn, True, make)
    before, first_before = _compiled(fn, False, make)
    times = {"numpy": [], "before": [], "after": []}
    for _ in range(ARGS.reps):
        for key, g in (("numpy", fn), ("before", before), ("after", after)):
            args = make()
            t0 = time.process_time()
            g(*args)
            times[key].append(time.process_time() - t0)
    a, b = make(), make()
    fn(*a)
    after(*b)
    same = all(np.allclose(x, y) for x, y in zip(a, b) if isinstance(x, np.ndarray))
    n, k0, k1 = (statistics.median(times[k]) for k in ("numpy", "before", "after"))
    print(f"| {name} | {n * 1e3:.2f} | {k0 * 1e3:.2f} ({n / k0:.2f}x) | {k1 * 1e3:.2f} ({n / k1:.2f}x) "
          f"| {first_before:.2f} | {first_after:.2f} | {same} |", flush=True)


def main():
    rng = np.random.default_rng(0)

    def jac(n, t):
        A0, B0 = rng.random((n, n)), rng.random((n, n))
        return lambda: (t, A0.copy(), B0.copy())

    def pong(n, t):
        u0 = rng.random((n, n))
        return lambda: (u0.copy(), u0.copy(), t, 0.1)

    def rebind(n, t):
        u0 = rng.random((n, n))
        return lambda: (u0.copy(), t, 0.1)
    print("| case | NumPy ms | before ms (speedup) | after ms (speedup) | first call before s "
          "| first call after s | same |")
    print("|---|---|---|---|---|---|---|")
    _case("jacobi_2d N=150 T=50", jacobi_2d, jac(150, 50))
    _case("jacobi_2d N=350 T=80", jacobi_2d, jac(350, 80))
    _case("jacobi_2d N=150 T=200", jacobi_2d, jac(150, 200))
    _case("jacobi_2d N=8 T=2000 (overhead)", jacobi_2d, jac(8, 2000))
    _case("heat ping-pong N=200 T=100", heat_ping_pong, pong(200, 100))
    _case("heat u = u + dt*lap(u) N=200 T=100", heat_rebind, rebind(200, 100))


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=5)
    ARGS = p.parse_args()
    main()
