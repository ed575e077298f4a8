"""Float fmod, %, np.remainder, // and np.divmod: NumPy's loops against kiln's kernels.

    python -m benchmarks.fmod_speed [--rounds N] [--sizes 1000,65536,1048576] [--threads 1]
                                    [--clock cpu]

Every one of these takes a float remainder per element (np.fmod: C's fmod; the others
NumPy's npy_divmod, which starts from fmod). NumPy's wheels are built by GCC 14, which
expands fmod inline to the x87 fprem loop; kiln's kernels called glibc's fmod (2.36 here),
4-6x slower an element, until the prelude took NumPy's inline loop (cpp_fmod.h). Columns:
NumPy; kiln with the cost model off (the tests' setting) and on (it only judges graphs of
at most 256 elements, so at 1K and up the two build the same kernel); and kiln built with
``-DKILN_BENCH_LIBM_FMOD``, which makes cpp_fmod.h call glibc's fmod as kernels did before
(the flag is part of the artifact key, so that build is a module of its own). Rounds run
the systems in a fresh random order; each sample is the mean of a batch of calls of about
10 ms (``harness.per_call_us``); the table shows the median in ns per element and each
kiln column's ratio to NumPy's median from the same rounds. Divisors: an array of
uniform(0.5, 7) with random signs, or the Python float 2.5. Dividends: uniform(-100, 100).
Kernels run on ``--threads`` threads (default 1: NumPy's loops run on one).
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

import numpy as np

import kiln

from .harness import per_call_us

OPS = {"fmod": "np.fmod(x, y)", "%": "x % y", "remainder": "np.remainder(x, y)",
       "//": "x // y", "divmod": "np.divmod(x, y)"}


def function(expr: str, scalar: float | None):
    """``lambda x, y: expr`` with a code object of its own (kiln keeps compiled code per
    code object, so each build below needs its own); ``scalar``: y is that constant."""
    scope = {"np": np}
    if scalar is None:
        exec(f"def f(x, y):\n    return {expr}\n", scope)
    else:
        exec(f"def f(x):\n    y = {scalar!r}\n    return {expr}\n", scope)
    return scope["f"]


def compiled(expr: str, scalar: float | None, args: tuple, cost_model: bool, libm: bool):
    """The kiln build of ``expr`` (compiled on its first call, here) under those settings."""
    saved = kiln.config.cost_model, kiln.config.cxx_flags
    kiln.config.cost_model = cost_model
    if libm:
        kiln.config.cxx_flags += " -DKILN_BENCH_LIBM_FMOD"
    try:
        fn = kiln.compile(function(expr, scalar))
        fn(*args)
        return fn
    finally:
        kiln.config.cost_model, kiln.config.cxx_flags = saved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--sizes", default="1000,65536,1048576")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    opts = ap.parse_args(argv)
    clock = time.process_time if opts.clock == "cpu" else time.perf_counter
    kiln.config.num_threads = opts.threads
    rng = np.random.default_rng(0)
    names = ("NumPy", "kiln", "kiln cost on", "kiln libm fmod")
    print(f"load {os.getloadavg()[0]:.1f}, {opts.threads} kernel thread(s), ns/element median "
          "(kiln columns: x NumPy's median)")
    print(f"{'op':9s} {'dtype':7s} {'n':>8s} {'divisor':7s}" + "".join(f" {k:>18s}" for k in names))
    for n in (int(s) for s in opts.sizes.split(",")):
        for dtype in (np.float32, np.float64):
            x = rng.uniform(-100, 100, n).astype(dtype)
            y = (rng.uniform(0.5, 7, n) * rng.choice([-1, 1], n)).astype(dtype)
            for op in opts.ops.split(","):
                for scalar in (None, 2.5):
                    args = (x, y) if scalar is None else (x,)
                    expr = OPS[op]
                    systems = {"NumPy": function(expr, scalar),
                               "kiln": compiled(expr, scalar, args, False, False),
                               "kiln cost on": compiled(expr, scalar, args, True, False),
                               "kiln libm fmod": compiled(expr, scalar, args, False, True)}
                    calls = max(1, int(0.01 / (n * 20e-9)))
                    samples = {k: [] for k in systems}
                    order = list(systems)
                    for _ in range(opts.rounds):
                        random.shuffle(order)
                        for k in order:
                            samples[k].append(per_call_us(systems[k], args, calls, 1, clock) * 1e3 / n)
                    base = statistics.median(samples["NumPy"])
                    cells = f" {base:18.2f}" + "".join(
                        f" {statistics.median(samples[k]):9.2f} ({statistics.median(samples[k]) / base:4.2f}x)"
                        for k in names[1:])
                    print(f"{op:9s} {np.dtype(dtype).name:7s} {n:8d} {'array' if scalar is None else 'scalar':7s}"
                          f"{cells}", flush=True)
    print(f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
