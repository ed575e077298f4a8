"""A compiled NumPy function and its explain report.

Run: ``python examples/compiled_example.py`` (add ``KILN_LOGS=graph,guards`` to see the
captured graph and its guards on stderr), or ``kiln explain examples/compiled_example.py``.
"""
import math
import sys

import numpy as np

import kiln


def layer_norm(h, eps=1e-5):
    mu = h.mean(axis=-1, keepdims=True)
    var = ((h - mu) ** 2).mean(axis=-1, keepdims=True)
    return (h - mu) / np.sqrt(var + eps)


def gelu(h):
    return 0.5 * h * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h ** 3)))


@kiln.compile
def mlp(x, weights, biases, scale):
    h = x
    for w, b in zip(weights, biases):
        h = gelu(layer_norm(h) @ w + b)
    return h * scale, h.mean()


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16))
    weights = [rng.standard_normal((16, 16)) * 0.25 for _ in range(2)]
    biases = [np.zeros(16) for _ in range(2)]
    for scale in (1.0, 0.5, 0.25):           # a new float: no recompile
        out, mean = mlp(x, weights, biases, scale)
    assert len(mlp.cache_entries) == 1
    report = kiln.explain(mlp)(x, weights, biases, 0.5)
    sys.stderr.write(str(report) + "\n")
    sys.stderr.write(f"result {out.shape} {out.dtype}, mean {mean:.4f}\n")


if __name__ == "__main__":
    main()
