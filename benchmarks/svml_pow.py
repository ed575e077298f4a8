"""float32/float64 power (and a few other SVML functions) per 1M elements: NumPy against kiln.

    python -m benchmarks.svml_pow [--rounds N] [--n N] [--threads T]

Each sample is ``harness.per_call_us`` (3 batches of 5 calls) of ``func(x, y, out=z)`` on random inputs; the
table shows medians over rounds (NumPy and kiln alternate within a round). kiln calls
NumPy's own SVML functions where NumPy does (kiln/lowering/svml.py).
"""
from __future__ import annotations

import argparse
import statistics

import numpy as np

import kiln

from .harness import per_call_us


def compiled(func):
    scope = {"func": func}
    args = "x" if func.nin == 1 else "x, y"
    exec(f"def f({args}, out):\n    func({args}, out=out)\n    return out\n", scope)
    return kiln.compile(scope["f"])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--fn", nargs="*", default=["power", "arctan2", "cbrt", "tan"])
    a = ap.parse_args(argv)
    kiln.config.num_threads = a.threads
    rng = np.random.default_rng(0)
    print(f"{'':16} {'NumPy us':>10} {'kiln us':>10} {'ratio':>7}   (n={a.n}, {a.threads} thread)")
    for name in a.fn:
        func = getattr(np, name)
        for dtype in (np.float32, np.float64):
            ops = [rng.uniform(0.1, 4, a.n).astype(dtype) for _ in range(func.nin)]
            out = np.empty(a.n, dtype)
            k = compiled(func)
            k(*ops, out)
            np_s, k_s = [], []
            for _ in range(a.rounds):
                np_s.append(per_call_us(lambda: func(*ops, out=out), (), 5, 3))
                k_s.append(per_call_us(lambda: k(*ops, out), (), 5, 3))
            m_np, m_k = statistics.median(np_s), statistics.median(k_s)
            print(f"{name + ' ' + np.dtype(dtype).name:16} {m_np:10.0f} {m_k:10.0f} {m_k / m_np:7.2f}", flush=True)


if __name__ == "__main__":
    main()
