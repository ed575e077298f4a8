"""The benchmark workloads W1-W7 (issue 5), written as plain NumPy functions.

kiln compiles the very same functions; other systems (torch.compile, numba, JAX) get
equivalent versions when they are installed. Every workload is float32 and has a float64
reference (the NumPy function on float64 copies of the inputs).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

F32 = np.float32
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def w1(x):
    return np.maximum(np.sin(x) + np.cos(x), 0) * 2


def w2(x, a, b, c):
    return np.tanh(a * x + b) * (1 / (1 + np.exp(-(x - c)))) + x ** 2


def w3(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def w4(x, w, b):
    mu = x.mean(axis=1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + b


def w5(x):
    return 0.5 * x * (1 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)))


def w6(x, w1_, b1, w2_, b2, onehot):
    h = np.maximum(x @ w1_ + b1, 0)
    z = h @ w2_ + b2
    m = z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z - m).sum(axis=1, keepdims=True)) + m
    return ((lse - z) * onehot).sum(axis=1).mean()


@dataclass
class Workload:
    name: str
    what: str
    fn: Callable
    make: Callable[[np.random.Generator], list]
    others: dict[str, Callable] = field(default_factory=dict)  # system -> builder(fn inputs)
    per_call: bool = False  # W7: time many calls, report microseconds


def _mlp_inputs(rng):
    x = rng.standard_normal((256, 784)).astype(F32)
    w1_ = (rng.standard_normal((784, 512)) * 0.05).astype(F32)
    w2_ = (rng.standard_normal((512, 10)) * 0.05).astype(F32)
    onehot = np.eye(10, dtype=F32)[rng.integers(0, 10, 256)]
    return [x, w1_, np.zeros(512, F32), w2_, np.zeros(10, F32), onehot]


WORKLOADS = [
    Workload("W1", "max(sin(x)+cos(x),0)*2, 10M", w1,
             lambda rng: [rng.standard_normal(10_000_000).astype(F32)]),
    Workload("W2", "tanh(a*x+b)*sigmoid(x-c)+x**2, (4096,2048)", w2,
             lambda rng: [rng.standard_normal((4096, 2048)).astype(F32)]
             + [rng.standard_normal(2048).astype(F32) for _ in range(3)]),
    Workload("W3", "row softmax (8192,1024)", w3,
             lambda rng: [rng.standard_normal((8192, 1024)).astype(F32)]),
    Workload("W4", "layernorm (8192,1024) + w, b", w4,
             lambda rng: [rng.standard_normal((8192, 1024)).astype(F32),
                          rng.standard_normal(1024).astype(F32), rng.standard_normal(1024).astype(F32)]),
    Workload("W5", "GELU tanh approx (8192,2048)", w5,
             lambda rng: [rng.standard_normal((8192, 2048)).astype(F32)]),
    Workload("W6", "MLP forward + CE loss (784-512-10, b=256)", w6, _mlp_inputs),
    Workload("W7", "W1 on 16 elements (per call)", w1,
             lambda rng: [rng.standard_normal(16).astype(F32)], per_call=True),
]


# -- other systems, only when installed ------------------------------------------------------

def other_systems() -> dict[str, Callable[[Callable], Callable]]:
    """name -> wrap(numpy_fn) for the optional peers that import in this environment."""
    systems: dict[str, Callable] = {}
    try:
        import torch  # noqa: F401

        def torch_compile(fn):
            import torch
            compiled = torch.compile(lambda *a: _torch_version(fn)(*a))

            def run(*args):
                return compiled(*[torch.from_numpy(a) for a in args]).numpy()
            return run
        systems["torch.compile"] = torch_compile
    except ImportError:
        pass
    try:
        import jax  # noqa: F401

        def jax_jit(fn):
            import jax
            import jax.numpy as jnp
            jitted = jax.jit(_with_namespace(fn, jnp))
            return lambda *args: np.asarray(jitted(*args).block_until_ready())
        systems["jax.jit"] = jax_jit
    except ImportError:
        pass
    try:
        import numba  # noqa: F401

        def numba_njit(fn):
            import numba
            return numba.njit(parallel=True, fastmath=False)(fn)
        systems["numba"] = numba_njit
    except ImportError:
        pass
    return systems


def _with_namespace(fn: Callable, ns: Any) -> Callable:
    """The same function body with ``np`` bound to another array namespace (jax.numpy)."""
    import types
    g = dict(fn.__globals__)
    g["np"] = ns
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


def _torch_version(fn: Callable) -> Callable:
    import torch

    class _NS:
        def __getattr__(self, name):
            return {"maximum": lambda a, b: torch.clamp_min(a, b) if not torch.is_tensor(b) else torch.maximum(a, b)}.get(
                name, getattr(torch, name))
    return _with_namespace(fn, _NS())
