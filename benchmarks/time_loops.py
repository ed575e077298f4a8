"""Time-stepping loops over whole arrays (graph loop nodes, issue #13): kiln with graph
loops (``after``) and with them off (``before``: the loop unrolls, or the cost model runs
it as Python; a while loop breaks the graph at its test on every trip) against NumPy, and
numba when it is installed, in the same run. Steady state: CPU-time medians of
interleaved runs (the machine is shared). First call: wall time (g++ runs in a child
process) of a fresh function with an empty kernel cache.

    .venv/bin/python benchmarks/time_loops.py [--reps 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
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


def laplace(p, y, dx, dy, l1norm_target):
    """CFD Python step 9 (Barba): Laplace's equation until the L1 change is small."""
    l1norm = 1
    pn = np.empty_like(p)
    while l1norm > l1norm_target:
        pn = p.copy()
        p[1:-1, 1:-1] = ((dy**2 * (pn[1:-1, 2:] + pn[1:-1, 0:-2]) +
                          dx**2 * (pn[2:, 1:-1] + pn[0:-2, 1:-1])) /
                         (2 * (dx**2 + dy**2)))
        p[:, 0] = 0
        p[:, -1] = y
        p[0, :] = p[1, :]
        p[-1, :] = p[-2, :]
        l1norm = (np.sum(np.abs(p[:]) - np.abs(pn[:])) / np.sum(np.abs(pn[:])))
    return p


def jacobi_poisson(p, b, dx, rtol=1e-6, maxiter=20000):
    """numerical-mooc's Jacobi solver for Poisson's equation: an ``and`` test, ``ite``."""
    diff = rtol + 1
    ite = 0
    while diff > rtol and ite < maxiter:
        pn = p.copy()
        p[1:-1, 1:-1] = 0.25 * (pn[1:-1, :-2] + pn[1:-1, 2:] + pn[:-2, 1:-1] + pn[2:, 1:-1]
                                - b[1:-1, 1:-1] * dx**2)
        p[-1, :] = p[-2, :]
        diff = np.sqrt(np.sum((p - pn)**2) / np.sum(pn**2))
        ite += 1
    return p, ite


def conjugate_gradient(A, b, tol, maxiter=1000):
    """CG: the first test on data (``while np.sqrt(r @ r) > tol``), may run zero times."""
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    k = 0
    while np.sqrt(r @ r) > tol and k < maxiter:
        Ap = A @ p
        rr = r @ r
        alpha = rr / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        p = r + ((r @ r) / rr) * p
        k += 1
    return x, k


def heat_break(T, maxiter, tol):
    """A range loop that stops on a test of its data (``if ...: break``, its last
    statement); the iteration that broke is read after the loop."""
    for it in range(maxiter):
        Tn = T.copy()
        T[1:-1, 1:-1] = 0.25 * (Tn[2:, 1:-1] + Tn[:-2, 1:-1] + Tn[1:-1, 2:] + Tn[1:-1, :-2])
        if np.abs(T - Tn).max() < tol:
            break
    return T, it


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
    systems = [("numpy", fn), ("before", before), ("after", after)]
    try:
        import numba
        jitted = numba.njit(cache=False)(fn)
        t0 = time.perf_counter()
        jitted(*make())
        first_numba = time.perf_counter() - t0
        systems.append(("numba", jitted))
    except ImportError:
        pass
    except Exception as e:       # numba cannot compile it (np.roll with an axis): no column
        print(f"  ({name}: numba cannot compile it: {type(e).__name__})", file=sys.stderr)
    times = {k: [] for k, _ in systems}
    for _ in range(ARGS.reps):
        for key, g in systems:
            args = make()
            t0 = time.process_time()
            g(*args)
            times[key].append(time.process_time() - t0)
    a, b = make(), make()
    ra, rb = fn(*a), after(*b)
    same = all(np.allclose(x, y) for x, y in zip(a, b) if isinstance(x, np.ndarray)) and all(
        x is y if x is None else np.allclose(x, y)    # (jacobi_2d returns None)
        for x, y in zip(ra if isinstance(ra, tuple) else (ra,), rb if isinstance(rb, tuple) else (rb,)))
    med = {k: statistics.median(v) for k, v in times.items()}
    n, k0, k1 = med["numpy"], med["before"], med["after"]
    nb = (f" | {med['numba'] * 1e3:.2f} ({n / med['numba']:.2f}x) | {first_numba:.2f}"
          if "numba" in med else " | - | -")
    print(f"| {name} | {n * 1e3:.2f} | {k0 * 1e3:.2f} ({n / k0:.2f}x) | {k1 * 1e3:.2f} ({n / k1:.2f}x) "
          f"| {first_before:.2f} | {first_after:.2f}{nb} | {same} |", flush=True)


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
    def grid(n, target):
        y = np.linspace(0.0, 1.0, n)
        p0 = np.zeros((n, n))
        p0[:, -1] = y       # (numba raises ZeroDivisionError on an all-zero first l1norm)
        return lambda: (p0.copy(), y, 2.0 / (n - 1), 1.0 / (n - 1), target)

    def poisson(n, rtol):
        b0, p0 = rng.random((n, n)), rng.random((n, n))   # (p = 0: numba divides by zero)
        return lambda: (p0.copy(), b0, 0.1, rtol)

    def spd(n, tol, shift):
        m = rng.random((n, n)) - 0.5
        A0, b0 = m @ m.T + shift * np.eye(n), rng.random(n)
        return lambda: (A0, b0, tol)
    def plate(n, maxiter, tol):
        T0 = np.zeros((n, n))
        T0[0] = 100.0
        return lambda: (T0.copy(), maxiter, tol)
    print("| case | NumPy ms | before ms (speedup) | after ms (speedup) | first call before s "
          "| first call after s | numba ms (speedup) | numba first call s | same |")
    print("|---|---|---|---|---|---|---|---|---|")
    if ARGS.only == "break":
        _case("heat range loop with a break N=100 (breaks on trip 242)", heat_break,
              plate(100, 5000, 0.1))
        _case("heat range loop with a break N=200 (breaks on trip 48)", heat_break,
              plate(200, 5000, 0.5))
        _case("heat range loop with a break N=100, maxiter 100 (no break)", heat_break,
              plate(100, 100, 1e-9))
        _case("heat range loop with a break N=30 (overhead: breaks on trip 274)", heat_break,
              plate(30, 5000, 0.05))
        return
    if ARGS.only == "while":
        if ARGS.skip != "laplace":
            _case("laplace (while l1norm > target) N=31 1e-4", laplace, grid(31, 1e-4))
            _case("laplace N=61 1e-4", laplace, grid(61, 1e-4))
            _case("jacobi Poisson (while diff > rtol and ite < maxiter) N=41", jacobi_poisson,
                  poisson(41, 1e-5))
        _case("conjugate gradient N=300 (while np.sqrt(r @ r) > tol and k < maxiter)",
              conjugate_gradient, spd(300, 1e-10, 0.05))
        _case("conjugate gradient N=300, well conditioned (~15 trips)", conjugate_gradient,
              spd(300, 1e-10, 300.0))
        return
    _case("jacobi_2d N=150 T=50", jacobi_2d, jac(150, 50))
    _case("jacobi_2d N=350 T=80", jacobi_2d, jac(350, 80))
    _case("jacobi_2d N=150 T=200", jacobi_2d, jac(150, 200))
    _case("jacobi_2d N=8 T=2000 (overhead)", jacobi_2d, jac(8, 2000))
    _case("heat ping-pong N=200 T=100", heat_ping_pong, pong(200, 100))
    _case("heat u = u + dt*lap(u) N=200 T=100", heat_rebind, rebind(200, 100))


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--only", default="", help="'while': the while loops only; 'break': "
                   "the range loop with a break only")
    p.add_argument("--skip", default="", help="'laplace': with --only while, CG only")
    ARGS = p.parse_args()
    main()
