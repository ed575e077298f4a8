"""``python -m benchmarks.loops [--rounds N] [--only fsub,crc]``: loop kernels (issue #13).

Element-at-a-time loop code that NumPy runs as a Python loop: forward substitution,
Gauss–Seidel, dynamic programming, a CRC over bytes, LU and Cholesky written as loops, and
what numba users write (Floyd–Warshall, a 1-D cellular automaton, a histogram by
``int(x * nbins)``, Viterbi decoding, a particle-in-cell deposit).
Each system runs the *same* function: plain Python/NumPy, ``kiln.compile`` (C++ backend:
the loops are loop nodes, printed as C++ loops) and ``numba.njit`` when numba is installed
(``pip install -e '.[bench]'``). The first call is timed separately (compile time); then
rounds run the systems in a fresh random order and the table shows medians, the ratio to
NumPy from the same rounds, and whether each result equals NumPy's exactly (else the
largest relative difference).

In a round each system runs ``--inner`` calls back to back (fresh arguments each) and the
round keeps the fastest: on a shared VM the first call after another system's run is
slow for reasons that are not the code's (a plain Python loop of 300 additions takes ~4x
as long right after a 50 ms sleep), and a kernel called in a loop is the case that matters.
``--inner 1`` measures the cold call alone.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import time

import numpy as np

import kiln

from .loop_kernels import (cholesky, cholesky_rows, crc32, csr_matvec, edit_distance, first_above,
                           floyd_warshall, fsub, gauss_seidel, histogram_loop, house_robber,
                           insertion_sort, jacobi_sweeps, levenshtein_rows, lu_inplace, lu_rows,
                           pic_deposit, relax_until_converged, rule30, sieve, smith_waterman,
                           tri_solve, viterbi)
from .idioms import weighted_column_distance


def cases(rng) -> dict:
    """name -> (function, make_args): fresh arguments per call (some are written in place)."""
    n = 300
    L = np.tril(rng.random((n, n))) + n * np.eye(n)
    b = rng.random(n)
    u0, f0 = rng.random((100, 100)), rng.random((100, 100)) * 0.01
    s1, s2 = rng.integers(0, 4, 160), rng.integers(0, 4, 160)
    v0 = rng.random(30000)
    data = rng.integers(0, 256, 4096).astype(np.uint8)
    lu0 = rng.random((60, 60)) + 60 * np.eye(60)
    spd = rng.random((70, 70))
    spd = spd @ spd.T + 70 * np.eye(70)
    rod = np.r_[0.0, rng.random(48), 0.0]
    rod1 = np.r_[1.0, rng.random(48), 2.0]
    big = 2000
    Lbig = np.tril(rng.random((big, big))) + big * np.eye(big)
    bbig = rng.random(big)
    lu1 = rng.random((150, 150)) + 150 * np.eye(150)
    spd2 = rng.random((200, 200))
    spd2 = spd2 @ spd2.T + 200 * np.eye(200)
    rows, cols = 3000, 3000
    dense_nnz = rng.integers(0, 16, rows)          # nonzeros per row, some rows empty
    indptr = np.r_[0, np.cumsum(dense_nnz)].astype(np.int32)
    indices = rng.integers(0, cols, int(indptr[-1])).astype(np.int32)
    values, xs = rng.random(int(indptr[-1])), rng.random(cols)
    rod2 = np.r_[0.0, rng.random(198), 0.0]
    A, B, W = rng.random((70, 70)), rng.random((70, 70)), rng.random((70, 70)) + 0.5
    ramp = np.linspace(0.0, 1.0, 20000)
    g1, g2 = rng.integers(0, 4, 200), rng.integers(0, 4, 200)
    shuffled = rng.random(500)
    dist = rng.random((80, 80)) * 10
    np.fill_diagonal(dist, 0.0)
    cells = (rng.random(400) < 0.5).astype(np.uint8)
    samples = rng.random(20000)
    S = 16
    log_a, log_b = np.log(rng.dirichlet(np.ones(S), S)), np.log(rng.dirichlet(np.ones(8), S))
    log_pi, obs = np.full(S, -np.log(S)), rng.integers(0, 8, 300)
    pos, charge = rng.random(10000) * 128, rng.random(10000)
    return {
        "fsub (n=300)": (fsub, lambda: (L, b)),
        "gauss_seidel (100x100, 2 sweeps)": (gauss_seidel, lambda: (u0.copy(), f0, 2)),
        "edit_distance (160x160)": (edit_distance, lambda: (s1, s2)),
        "levenshtein over two swapped rows (200x200)": (levenshtein_rows, lambda: (g1, g2)),
        "house_robber DP (n=30000)": (house_robber, lambda: (v0,)),
        "crc32 (4096 bytes)": (crc32, lambda: (data,)),
        "lu_inplace (n=60)": (lu_inplace, lambda: (lu0.copy(),)),
        "cholesky (n=70)": (cholesky, lambda: (spd,)),
        "relax until converged (n=50, while loop)": (relax_until_converged,
                                                     lambda: (rod.copy(), 1e-3)),
        "tri_solve rows (n=2000)": (tri_solve, lambda: (Lbig, bbig)),
        "lu_rows (n=150)": (lu_rows, lambda: (lu1.copy(),)),
        "cholesky_rows (n=200)": (cholesky_rows, lambda: (spd2,)),
        "csr_matvec (3000 rows, 22k nonzeros)": (csr_matvec, lambda: (indptr, indices, values, xs)),
        "sieve (n=60000)": (sieve, lambda: (60000,)),
        "jacobi sweeps over slices (n=200, while loop)": (jacobi_sweeps, lambda: (rod2.copy(), 1e-4)),
        "weighted column distance (70x70)": (weighted_column_distance, lambda: (A, B, W)),
        "first_above (n=20000, return in the loop)": (first_above, lambda: (ramp, 0.9)),
        "smith_waterman (200x200)": (smith_waterman, lambda: (g1, g2, 2.0, -1.0, 1.5)),
        "insertion_sort (n=500, while loops)": (insertion_sort, lambda: (shuffled.copy(),)),
        "crc32 (1 byte: call overhead)": (crc32, lambda: (data[:1],)),
        "relax (n=50, one sweep: call overhead)": (relax_until_converged,
                                                   lambda: (rod1.copy(), 1e9)),
        "floyd_warshall (n=80)": (floyd_warshall, lambda: (dist.copy(),)),
        "rule30 automaton (400 cells, 100 steps)": (rule30, lambda: (cells, 100)),
        "histogram int(x * nbins) (n=20000)": (histogram_loop, lambda: (samples, 64)),
        "viterbi (16 states, 300 steps)": (viterbi, lambda: (log_a, log_b, log_pi, obs)),
        "particle-in-cell deposit (10000 particles)": (pic_deposit, lambda: (pos, charge, 128)),
    }


def _agreement(got, want) -> str:
    """'exact' when the result equals NumPy's bit for bit, else the largest relative
    difference (reductions summed in another order differ by rounding)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape == want.shape and np.array_equal(got, want):
        return "exact"
    if got.shape != want.shape or got.dtype.kind not in "fc":
        return "DIFFERENT"
    scale = np.maximum(np.abs(want), np.finfo(want.dtype).tiny)
    return f"{float(np.max(np.abs(got - want) / scale)):.0e}"


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.loops", description=__doc__)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--only", default="")
    p.add_argument("--inner", type=int, default=3)
    args = p.parse_args()
    table = cases(np.random.default_rng(0))
    try:
        import numba
        jit = numba.njit
    except ImportError:
        jit = None
    rows = []
    for name, (fn, make) in table.items():
        if args.only and not any(k in name for k in args.only.split(",")):
            continue
        systems = {"numpy": fn}
        first = {}
        compiled = kiln.compile(fn)
        want = fn(*make())
        systems["kiln"] = compiled
        if jit is not None:
            systems["numba"] = jit(cache=False)(fn)
        ok = {}
        for sys_name, f in systems.items():
            t = time.perf_counter()
            got = f(*make())
            first[sys_name] = time.perf_counter() - t
            ok[sys_name] = _agreement(got, want)
        samples = {k: [] for k in systems}
        for _ in range(args.rounds):
            order = list(systems)
            random.shuffle(order)
            for sys_name in order:
                best = float("inf")
                for _ in range(args.inner):
                    a = make()
                    t = time.perf_counter()
                    systems[sys_name](*a)
                    best = min(best, time.perf_counter() - t)
                samples[sys_name].append(best)
        med = {k: statistics.median(v) for k, v in samples.items()}
        loops = kiln.explain(fn)(*make()).loops
        rows.append((name, med, first, ok, sum("loop node" in n for n in loops)))
    print(f"load average: {os.getloadavg()[0]:.1f}")
    head = "| kernel | NumPy ms | kiln ms (x NumPy) | numba ms (x NumPy) | kiln / numba | kiln first call s | numba first call s | agrees with NumPy (kiln, numba) | loop nodes |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for name, med, first, ok, nloops in rows:
        npy = med["numpy"]
        k = med["kiln"]
        nb = med.get("numba")
        print(f"| {name} | {npy * 1e3:.3g} | {k * 1e3:.3g} ({npy / k:.0f}x) | "
              + (f"{nb * 1e3:.3g} ({npy / nb:.0f}x) | {k / nb:.2f} | " if nb else "- | - | ")
              + f"{first['kiln']:.2f} | " + (f"{first['numba']:.2f} | " if nb else "- | ")
              + f"{ok['kiln']}, {ok.get('numba', '-')} | {nloops} |")
    ratios = [(m["numpy"] / m["kiln"], m["numpy"] / m["numba"] if "numba" in m else None)
              for _, m, _, _, _ in rows]
    if ratios:
        gk = statistics.geometric_mean([r for r, _ in ratios])
        line = f"geomean speedup over NumPy: kiln {gk:.0f}x"
        if all(n is not None for _, n in ratios):
            gn = statistics.geometric_mean([n for _, n in ratios])
            line += f", numba {gn:.0f}x (kiln / numba time {gn / gk:.2f})"
        print(line)


if __name__ == "__main__":
    main()
