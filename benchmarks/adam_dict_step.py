"""A small model's Adam step over a dict of parameters (tanh MLP, batch 64, 8 -> 16 -> 1,
float64): ``kiln.value_and_grad`` and the in-place Adam update inside ``kiln.compile``
(one graph: the gradients of a dict are differentiated in the graph), against the same
step with a hand-written NumPy backward and on kiln's eager tape.

    python -m benchmarks.adam_dict_step [--steps 50] [--repeats 7]

Prints the median microseconds per step of each and the ratio to NumPy by hand measured in
the same run; the three end at the same parameters.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import kiln


def mlp_loss(params, X, y):
    h = np.tanh(X @ params["W1"] + params["b1"])
    return np.mean((h @ params["W2"] - y) ** 2)


def _adam_update(params, g, m, v, t, lr):
    for k in params:
        m[k] *= 0.9
        m[k] += 0.1 * g[k]
        v[k] *= 0.999
        v[k] += 0.001 * g[k] ** 2
        params[k] -= lr * (m[k] / (1 - 0.9 ** t)) / (np.sqrt(v[k] / (1 - 0.999 ** t)) + 1e-8)


def kiln_step(params, m, v, t, X, y, lr=0.01):
    loss, g = kiln.value_and_grad(mlp_loss)(params, X, y)
    _adam_update(params, g, m, v, t, lr)
    return loss


def numpy_step(params, m, v, t, X, y, lr=0.01):
    a = X @ params["W1"] + params["b1"]
    h = np.tanh(a)
    o = h @ params["W2"]
    d = 2 * (o - y) / o.size
    da = (d @ params["W2"].T) * (1 - h ** 2)
    g = {"W1": X.T @ da, "b1": da.sum(0), "W2": h.T @ d}
    _adam_update(params, g, m, v, t, lr)
    return np.mean((o - y) ** 2)


def init(n=64, d=8, hidden=16, seed=0):
    r = np.random.default_rng(seed)
    p = {"W1": r.standard_normal((d, hidden)) * 0.3, "b1": np.zeros(hidden),
         "W2": r.standard_normal((hidden, 1)) * 0.3}
    zeros = lambda: {k: np.zeros_like(a) for k, a in p.items()}  # noqa: E731
    return p, zeros(), zeros(), r.standard_normal((n, d)), r.standard_normal((n, 1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=7)
    opts = ap.parse_args()
    systems = {"numpy by hand": numpy_step, "kiln eager tape": kiln_step,
               "kiln.compile (cpp)": kiln.compile(kiln_step)}
    times: dict = {name: [] for name in systems}
    ends = {}
    for name, step in systems.items():
        step(*init()[:3], 1, *init()[3:])   # the compile
    for _ in range(opts.repeats):
        for name, step in systems.items():
            p, m, v, X, y = init()
            start = time.perf_counter()
            for t in range(1, opts.steps + 1):
                step(p, m, v, t, X, y)
            times[name].append((time.perf_counter() - start) / opts.steps * 1e6)
            ends[name] = p
    base = statistics.median(times["numpy by hand"])
    for name, ts in times.items():
        med = statistics.median(ts)
        same = all(np.allclose(ends[name][k], ends["numpy by hand"][k], rtol=1e-9) for k in ends[name])
        print(f"{name:20s} {med:9.1f} us/step  {med / base:6.2f}x numpy  same params: {same}")


if __name__ == "__main__":
    main()
