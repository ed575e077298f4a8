"""``KILN_NUM_THREADS=1 python -m benchmarks.vectorize [--rounds N]``: np.vectorize of a
scalar Python function (NumPy calls it once per element) against the same call under
``kiln.compile`` (one loop node, kiln/capture/vectorize.py) and against the loop written
by hand under ``kiln.compile``, on 1e3..1e6 float64 elements. Rounds run the systems in a
fresh random order; the table shows medians and ratios from the same rounds, and checks
that each result equals NumPy's exactly.
"""
from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np

import kiln


def relu_sq(v):
    return v * v if v > 0 else 0.0


def hinge(v, m):
    if v < m:
        return m - v
    return 0.0


v_relu_sq, v_hinge = np.vectorize(relu_sq), np.vectorize(hinge)


def vec_one(x, y):
    return v_relu_sq(x)


def vec_two(x, y):
    return v_hinge(x, y)


def hand_one(x, y):
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = v * v if v > 0 else 0.0
    return out


def hand_two(x, y):
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        v, m = x[i], y[i]
        out[i] = m - v if v < m else 0.0
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    rounds = ap.parse_args().rounds
    rng = np.random.default_rng(0)
    for name, vec, hand in (("relu_sq(x)", vec_one, hand_one), ("hinge(x, m)", vec_two, hand_two)):
        systems = {"numpy": vec, "kiln": kiln.compile(vec), "kiln hand loop": kiln.compile(hand)}
        for n in (10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6):
            x, y = rng.standard_normal(n), rng.standard_normal(n)
            ref = vec(x, y)
            for label, fn in systems.items():
                assert np.array_equal(fn(x, y), ref) and fn(x, y).dtype == ref.dtype, label
            times: dict = {k: [] for k in systems}
            for _ in range(rounds if n < 10 ** 6 else max(3, rounds // 2)):
                for label in random.sample(list(systems), len(systems)):
                    t = time.perf_counter()
                    systems[label](x, y)
                    times[label].append(time.perf_counter() - t)
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"{name:12} n={n:>8}  " + "  ".join(
                f"{k} {med[k] * 1e3:9.4f} ms ({med['numpy'] / med[k]:5.0f}x)" for k in systems))


if __name__ == "__main__":
    main()
