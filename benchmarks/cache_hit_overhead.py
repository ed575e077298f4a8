"""Per-call overhead of a kiln cache hit on a tiny input (guards + reference run).

Times many calls of a small NumPy function, plain and compiled (default backend), and
reports the median per-call time of each and their difference (what a cache
hit costs on top of NumPy itself). Run: ``python -m benchmarks.cache_hit_overhead``.
"""
from __future__ import annotations

import sys

import numpy as np

import kiln

from .harness import per_call_us


def step(w, g, lr):
    return w - lr * g


def main(calls: int = 2000, repeats: int = 51) -> dict:
    args = (np.ones(4), np.full(4, 0.5), 0.1)
    compiled = kiln.compile(step)
    compiled(*args)                         # compile once
    assert len(compiled.cache_entries) == 1
    plain = per_call_us(step, args, calls, repeats)
    hit = per_call_us(compiled, args, calls, repeats)
    noop = kiln.compile(lambda x: x)       # guards + return only, no graph at all
    noop(args[0])
    guards_only = per_call_us(noop, args[:1], calls, repeats)
    baseline = per_call_us(lambda x: x, args[:1], calls, repeats)
    result = {"plain_us": plain, "compiled_us": hit, "overhead_us": hit - plain,
              "guards_and_dispatch_us": guards_only - baseline}
    sys.stderr.write(
        f"tiny input (float64[4], 2 ops), median of {repeats} x {calls} calls:\n"
        f"  plain NumPy         {plain:7.2f} us/call\n"
        f"  kiln cache hit      {hit:7.2f} us/call\n"
        f"  overhead            {hit - plain:7.2f} us/call\n"
        f"  guards + dispatch   {guards_only - baseline:7.2f} us/call (function with no graph)\n")
    return result


if __name__ == "__main__":
    main()
