"""``python -m benchmarks.loop_selects [--rounds N]``: whole-array loops with an ``if`` in
the body (kiln/capture/graph_selects.py in a graph loop's trace, stop 59).

``if t % 10 == 0: u = u - u.mean()`` on the counter of a diffusion loop, and a running
peak ``if y.sum() > peak: peak_t, peak = t, y.sum()`` on the data. Each round runs NumPy
and ``kiln.compile`` (C++ backend; cost model as configured: ``KILN_COST_MODEL``) in a
fresh random order, each ``--inner`` calls back to back keeping the fastest; the table
shows medians and kiln / NumPy from the same rounds, the first call's time (compile), and
whether results equal NumPy's bit for bit. The load average is printed: the machine is
shared.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import time

import numpy as np

import kiln


def _diffuse(u):
    return u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))


def recentred(u, steps):
    for t in range(steps):
        u = _diffuse(u)
        if t % 10 == 0:
            u = u - u.mean()
    return u


def running_peak(y, dt, steps):
    t = 0.0
    peak_t, peak = 0.0, y.sum()
    for _ in range(steps):
        y = _diffuse(y) * 1.001 - 0.0005
        t += dt
        if y.sum() > peak:
            peak_t, peak = t, y.sum()
    return y, peak_t, peak


def cases(rng) -> dict:
    out = {}
    for n in (16, 256, 4096):
        u = rng.random(n)
        for steps in (20, 200):
            out[f"recentred n={n} steps={steps}"] = (recentred, (u, steps))
            out[f"running_peak n={n} steps={steps}"] = (running_peak, (u, 0.01, steps))
    return out


def _best(fn, args, inner: int, clock=time.perf_counter) -> float:
    best = float("inf")
    for _ in range(inner):
        t0 = clock()
        fn(*args)
        best = min(best, clock() - t0)
    return best


def _flat(v):
    return list(v) if isinstance(v, tuple) else [v]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=11)
    p.add_argument("--inner", type=int, default=3)
    p.add_argument("--only", default="")
    a = p.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"load average {os.getloadavg()[0]:.1f}, cost model {kiln.config.cost_model}")
    print(f"{'case':34s} {'numpy us':>10s} {'kiln us':>10s} {'kiln/np':>8s} {'first s':>8s}  equal")
    for name, (fn, args) in cases(rng).items():
        if a.only and a.only not in name:
            continue
        compiled = kiln.compile(fn)
        t0 = time.perf_counter()
        got = compiled(*args)
        first = time.perf_counter() - t0
        want = fn(*args)
        equal = all(np.asarray(x).tobytes() == np.asarray(y).tobytes() and type(x) is type(y)
                    for x, y in zip(_flat(got), _flat(want)))
        times = {"numpy": [], "kiln": []}
        for _ in range(a.rounds):
            order = list(times)
            random.shuffle(order)
            for system in order:
                times[system].append(_best(fn if system == "numpy" else compiled, args, a.inner))
        np_t, k_t = (statistics.median(times[s]) * 1e6 for s in ("numpy", "kiln"))
        print(f"{name:34s} {np_t:10.1f} {k_t:10.1f} {k_t / np_t:8.2f} {first:8.2f}  {equal}")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
