"""``np.matmul(a, b, out=c)`` (and ``np.dot``, and ``c[...] = a @ b``) compiled against
NumPy: the product written straight into the caller's array (kiln/lowering/inplace.py,
``Op.out_impl``), then a pointwise op on it in place, as in a cosine similarity. Run with
``KILN_COST_MODEL=0`` to compile the one-call cases too (else they run as NumPy).

    python -m benchmarks.matmul_out [--rounds N]

Per case and size: NumPy's and kiln's time per call (medians of ``rounds`` rounds that
alternate the two, each the median of batches) and NumPy / kiln (above 1: kiln faster).
"""
from __future__ import annotations

import argparse
import statistics

import numpy as np

from .harness import kiln_compile, per_call_us


def cosine_out(Xn, out):
    np.matmul(Xn, Xn.T, out=out)
    np.clip(out, -1, 1, out=out)
    return out


def matmul_out(a, b, out):
    return np.matmul(a, b, out=out)


def dot_out(a, b, out):
    return np.dot(a, b, out=out)


def set_whole(a, b, out):
    out[...] = a @ b
    return out


def _inputs(name: str, n: int, k: int) -> tuple:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, k))
    if name == "cosine_out":
        a /= np.linalg.norm(a, axis=1, keepdims=True)
        return a, np.empty((n, n))
    return a, rng.standard_normal((k, n)), np.empty((n, n))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    opts = p.parse_args(argv)
    print(f"{'case':<12} {'size':>8} {'numpy us':>10} {'kiln us':>10} {'numpy/kiln':>10}")
    for fn in (cosine_out, matmul_out, dot_out, set_whole):
        for n, k in ((8, 8), (100, 100), (500, 64)):
            args = _inputs(fn.__name__, n, k)
            compiled = kiln_compile(fn)
            compiled(*args)
            calls = max(3, int(2e4 / (n * n * k / 1e3 + 5)))
            ours, theirs = [], []
            for _ in range(opts.rounds):
                theirs.append(per_call_us(fn, args, calls, 5))
                ours.append(per_call_us(compiled, args, calls, 5))
            t_np, t_k = statistics.median(theirs), statistics.median(ours)
            print(f"{fn.__name__:<12} {f'{n}x{k}':>8} {t_np:>10.2f} {t_k:>10.2f} {t_np / t_k:>10.2f}")


if __name__ == "__main__":
    main()
