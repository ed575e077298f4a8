"""``KILN_NUM_THREADS=1 python -m benchmarks.vectorize [--rounds N]``: np.vectorize of a
scalar Python function (NumPy calls it once per element) against the same call under
``kiln.compile`` (one loop node, kiln/capture/vectorize.py) and against the loop written
by hand under ``kiln.compile``, on 1e3..1e6 float64 elements. ``count_above`` has a short
inner loop ending in an if (a nested node since 3.12's bytecode is joined), ``halvings``
a while loop on the element (a nested while node). Rounds run the systems in a
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


def count_above(v):
    n = 0
    for k in range(3):
        if v > k * 0.5:
            n += 1
    return n


def halvings(v):
    n = 0
    t = abs(v) * 8.0
    while t > 0.5:
        t = t * 0.5
        n += 1
    return n


v_relu_sq, v_hinge = np.vectorize(relu_sq), np.vectorize(hinge)
v_count_above, v_halvings = np.vectorize(count_above), np.vectorize(halvings)


def vec_one(x, y):
    return v_relu_sq(x)


def vec_two(x, y):
    return v_hinge(x, y)


def vec_count(x, y):
    return v_count_above(x)


def vec_halvings(x, y):
    return v_halvings(x)


def hand_count(x, y):
    out = np.empty(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        out[i] = count_above(x[i])
    return out


def hand_halvings(x, y):
    out = np.empty(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        out[i] = halvings(x[i])
    return out


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
    ap.add_argument("--only", default="", help="comma list of case names (relu_sq,hinge,...)")
    args = ap.parse_args()
    rounds, only = args.rounds, [s for s in args.only.split(",") if s]
    rng = np.random.default_rng(0)
    for name, vec, hand in (("relu_sq(x)", vec_one, hand_one), ("hinge(x, m)", vec_two, hand_two),
                            ("count_above(x)", vec_count, hand_count),
                            ("halvings(x)", vec_halvings, hand_halvings)):
        if only and not any(name.startswith(o) for o in only):
            continue
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
