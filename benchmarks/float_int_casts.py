"""Float -> integer casts in fused kernels: kiln's defined conversion (cpp_prelude.h
``kiln_ftoi``) against the plain C cast it replaced, and NumPy.

    python -m benchmarks.float_int_casts [--rounds N] [--n 1000000] [--clock cpu]

A plain ``(int64_t)x`` is undefined for NaN, the infinities and values out of range, and
GCC read a range off it (``(int64_t)fabs(x) % 5`` lost the remainder's sign fix: NaN gave
3, NumPy 2); ``kiln_ftoi`` ors x86's (and NumPy's) minimum in there, a compare and a
blend more per element (and the remainder's sign fix, which the plain cast lost: compare
``int64 % 5``, whose plain cast keeps it). Columns: NumPy; kiln; kiln built with ``-DKILN_BENCH_PLAIN_FTOI``
(the plain cast, as before; the flag is part of the artifact key, so a module of its own).
Rounds run the systems in a fresh random order; each sample is the mean of a batch of
calls of about 10 ms; the table shows medians in ns per element and each kiln column's
ratio to NumPy's median from the same rounds. The cost model is off (kernels always).
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

CHAINS = {"astype(int32)": "(x * 3.0).astype(np.int32)",
          "int32 chain": "((x * 3.0).astype(np.int32) + 7).astype(np.float64) * 0.5",
          "abs int64 % 5": "np.abs(x).astype(np.int64) % 5",
          "int64 % 5": "x.astype(np.int64) % 5",
          "astype(int16)": "(x * 3.0).astype(np.int16)",
          "astype(uint32)": "np.abs(x * 3.0).astype(np.uint32)"}


def function(expr: str):
    """``lambda x: expr`` with a code object of its own (kiln keeps compiled code per code
    object, so each build below needs its own)."""
    scope = {"np": np}
    exec(f"def f(x):\n    return {expr}\n", scope)
    return scope["f"]


def compiled(expr: str, args: tuple, plain: bool):
    saved = kiln.config.cost_model, kiln.config.cxx_flags
    kiln.config.cost_model = False
    if plain:
        kiln.config.cxx_flags += " -DKILN_BENCH_PLAIN_FTOI"
    try:
        fn = kiln.compile(function(expr))
        fn(*args)
        return fn
    finally:
        kiln.config.cost_model, kiln.config.cxx_flags = saved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--chains", default=",".join(CHAINS), help="comma list of the chains' labels")
    opts = ap.parse_args(argv)
    clock = time.process_time if opts.clock == "cpu" else time.perf_counter
    kiln.config.num_threads = 1
    names = ("NumPy", "kiln", "kiln plain cast")
    print(f"load {os.getloadavg()[0]:.1f}, n={opts.n}, 1 kernel thread, ns/element median "
          "(kiln columns: x NumPy's median)")
    print(f"{'chain':15s} {'dtype':7s}" + "".join(f" {k:>16s}" for k in names))
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        x = rng.uniform(-1000, 1000, opts.n).astype(dtype)
        for label in opts.chains.split(","):
            expr = CHAINS[label]
            args = (x,)
            systems = {"NumPy": function(expr), "kiln": compiled(expr, args, False),
                       "kiln plain cast": compiled(expr, args, True)}
            calls = max(1, int(0.01 / (opts.n * 2e-9)))
            samples = {k: [] for k in systems}
            order = list(systems)
            for _ in range(opts.rounds):
                random.shuffle(order)
                for k in order:
                    samples[k].append(per_call_us(systems[k], args, calls, 1, clock) * 1e3 / opts.n)
            base = statistics.median(samples["NumPy"])
            cells = f" {base:16.3f}" + "".join(
                f" {statistics.median(samples[k]):8.3f} ({statistics.median(samples[k]) / base:4.2f}x)"
                for k in names[1:])
            print(f"{label:15s} {np.dtype(dtype).name:7s}{cells}", flush=True)
    print(f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
