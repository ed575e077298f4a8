"""Compile time of loops over large arrays that kiln unrolls into one graph.

    python -m benchmarks.unrolled_compile [--steps N] [--only NAME,NAME]

Each function's first call (capture, lowering, g++) runs in a fresh cache directory; the
table shows its wall time, this process's CPU time, the CPU time of the compiler
processes it started (g++: what a loaded machine stretches the wall time with), the
kernels the graph lowered to, the kernels built (identical steps build once:
kiln/lowering/renderer.py ``share_identical``) and the call after it against NumPy.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time

import numpy as np


def jacobi_2d(a, steps):
    for _ in range(steps):
        b = a.copy()
        b[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
        a = b
    return a


def heat_3d(a, b, steps):   # npbench's heat_3d: two half-steps per step, written in place
    for _ in range(1, steps):
        b[1:-1, 1:-1, 1:-1] = (
            0.125 * (a[2:, 1:-1, 1:-1] - 2.0 * a[1:-1, 1:-1, 1:-1] + a[:-2, 1:-1, 1:-1])
            + 0.125 * (a[1:-1, 2:, 1:-1] - 2.0 * a[1:-1, 1:-1, 1:-1] + a[1:-1, :-2, 1:-1])
            + 0.125 * (a[1:-1, 1:-1, 2:] - 2.0 * a[1:-1, 1:-1, 1:-1] + a[1:-1, 1:-1, :-2])
            + a[1:-1, 1:-1, 1:-1])
        a[1:-1, 1:-1, 1:-1] = (
            0.125 * (b[2:, 1:-1, 1:-1] - 2.0 * b[1:-1, 1:-1, 1:-1] + b[:-2, 1:-1, 1:-1])
            + 0.125 * (b[1:-1, 2:, 1:-1] - 2.0 * b[1:-1, 1:-1, 1:-1] + b[1:-1, :-2, 1:-1])
            + 0.125 * (b[1:-1, 1:-1, 2:] - 2.0 * b[1:-1, 1:-1, 1:-1] + b[1:-1, 1:-1, :-2])
            + b[1:-1, 1:-1, 1:-1])


# name: (function, inputs maker, default steps). heat_3d's 20 steps unroll into ~1,000
# operations; at 50 (2,600) kiln runs it as Python (capture's unrolling cap).
CASES = {
    "jacobi_2d": (jacobi_2d, lambda rng, steps: (rng.standard_normal((500, 500)), steps), 50),
    "heat_3d": (heat_3d, lambda rng, steps: (rng.standard_normal((60, 60, 60)),
                                              rng.standard_normal((60, 60, 60)), steps), 20),
}


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def measure(name: str, steps: int | None = None) -> dict:
    import kiln
    from kiln.config import config
    fn, make, default = CASES[name]
    steps = default if steps is None else steps
    kiln.compile(lambda x: x + 1)(np.ones(300))   # kiln's own C helpers, built or loaded once
    saved = config.cache_dir
    config.cache_dir = tempfile.mkdtemp(prefix="kiln-compile-")
    try:
        compiled = kiln.compile(fn)
        args = make(np.random.default_rng(0), steps)
        mine = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        wall, cpu, child = time.perf_counter(), time.process_time(), _children_cpu()
        got = compiled(*mine)
        row = {"name": name, "steps": steps, "first_s": time.perf_counter() - wall,
               "cpu_s": time.process_time() - cpu, "gxx_s": _children_cpu() - child}
        ref_args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        want = fn(*ref_args)
        for g, w in zip(mine + (got,), ref_args + (want,)):
            if isinstance(w, np.ndarray):
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        row.update(_kernels(config.cache_dir))
        row["numpy_ms"] = _time(fn, args) * 1e3
        row["kiln_ms"] = _time(compiled, args) * 1e3
        return row
    finally:
        shutil.rmtree(config.cache_dir, ignore_errors=True)
        config.cache_dir = saved


def _kernels(cache_dir: str) -> dict:
    """Kernels launched and kernels built, read from the wrappers the call wrote."""
    launched = built = 0
    for root, _, files in os.walk(os.path.join(cache_dir, "wrappers")):
        for f in files:
            text = open(os.path.join(root, f)).read()
            call = text.split("\ndef call", 1)[-1].split("\ndef _example", 1)[0]
            launched += sum(1 for line in call.splitlines() if line.strip().startswith("kiln_fused_"))
            built += sum(1 for line in text.splitlines() if " = _bind(_lib" in line)
    return {"kernels": launched, "built": built}


def _time(fn, args, rounds: int = 5) -> float:
    best = []
    for _ in range(rounds):
        mine = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        start = time.process_time()
        fn(*mine)
        best.append(time.process_time() - start)
    return sorted(best)[len(best) // 2]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=None, help="every function's steps")
    parser.add_argument("--only", default="")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(CASES)
    print(f"{'function':12s} {'steps':>5s} {'first call s':>12s} {'cpu s':>6s} {'g++ cpu s':>9s} "
          f"{'kernels':>7s} {'built':>5s} {'NumPy ms':>9s} {'kiln ms':>8s}")
    for name in names:
        r = measure(name, args.steps)
        print(f"{r['name']:12s} {r['steps']:5d} {r['first_s']:12.2f} {r['cpu_s']:6.2f} {r['gxx_s']:9.2f} "
              f"{r['kernels']:7d} {r['built']:5d} {r['numpy_ms']:9.2f} {r['kiln_ms']:8.2f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
