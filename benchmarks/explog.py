"""Float64 exp and log per element: NumPy's own SIMD loops against kiln's kernels.

    python -m benchmarks.explog [--rounds N] [--n N] [--clock cpu]

Compares, on one thread, ``np.exp(x, out=y)`` / ``np.log(x, out=y)`` run by NumPy, by kiln
(its own inline exp where AVX-512 and FMA are on: the prelude's 'exp' section), and by
kiln spelling them as glibc's vector math (libmvec) as it did before, over a few input
ranges. Rounds run the three in a fresh random order; each sample is the mean of a batch
of calls (``harness.per_call_us``); the table shows medians and the fastest sample, in ns
per element. ``--clock cpu`` counts this process's CPU time (steadier on a loaded machine).
log is glibc's vector log in both kiln columns (kiln's own, fdlibm's algorithm, measured
slower); docs/lowering.md ("kiln's own exp") has the figures and what they mean.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

import numpy as np

import kiln
from kiln.lowering import cpp_ops

from .harness import per_call_us


def into(func):
    """``func(x, out=y)`` as a function with a code object of its own (kiln keeps compiled
    code per code object, so the two kiln builds below must not share one)."""
    scope = {"func": func}
    exec("def f(x, y):\n    func(x, out=y)\n    return y\n", scope)
    return scope["f"]


def compiled_with_libmvec(fn, args):
    """``fn`` compiled (on its first call, with ``args``) while the op table spells exp/log
    as libmvec's, as kiln did before the prelude's 'explog' section."""
    saved = {k: cpp_ops.SYNTAX[k] for k in ("exp", "log")}, kiln.config.cxx_flags
    cpp_ops.SYNTAX.update(exp={"f": "exp{f}({x})"}, log={"f": "log{f}({x})"})
    # a flag of its own: the artifact cache is keyed by the graph and kiln's source files,
    # not by the op table, and would hand back kiln's own build
    kiln.config.cxx_flags += " -DKILN_BENCH_LIBMVEC"
    try:
        compiled = kiln.compile(fn)
        compiled(*args)
        return compiled
    finally:
        cpp_ops.SYNTAX.update(saved[0])
        kiln.config.cxx_flags = saved[1]


def inputs(rng, n):
    e = np.exp(rng.standard_normal(n))
    return [("exp", "standard normal", rng.standard_normal(n)),
            ("exp", "uniform(-700, 700)", rng.uniform(-700, 700, n)),
            ("log", "exp(x) / sum (idiom)", e / e.sum()),
            ("log", "uniform(1e-6, 1e3)", rng.uniform(1e-6, 1e3, n)),
            ("log", "near 1", rng.uniform(0.9, 1.1, n))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    opts = ap.parse_args(argv)
    clock = time.process_time if opts.clock == "cpu" else time.perf_counter
    kiln.config.num_threads = 1
    rng = np.random.default_rng(0)
    y = np.empty(opts.n)
    print(f"{'':4s} {'input':22s} {'NumPy':>13s} {'kiln':>13s} {'kiln+libmvec':>13s}"
          "   ns/element: median (min)")
    for name, label, x in inputs(rng, opts.n):
        fn = into(getattr(np, name))
        own = kiln.compile(into(getattr(np, name)))
        mvec = compiled_with_libmvec(into(getattr(np, name)), (x, y))
        systems = {"NumPy": fn, "kiln": own, "kiln+libmvec": mvec}
        for f in systems.values():
            f(x, y)
            f(x, y)
        calls = max(1, int(0.01 / max(opts.n * 1e-9, 1e-7)))   # batches of about 10 ms
        samples = {k: [] for k in systems}
        order = list(systems)
        for _ in range(opts.rounds):
            random.shuffle(order)
            for k in order:
                samples[k].append(per_call_us(systems[k], (x, y), calls, 1, clock) * 1e3 / opts.n)
        cells = "".join(f" {statistics.median(v):6.3f} ({min(v):.3f})" for v in samples.values())
        print(f"{name:4s} {label:22s}{cells}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
