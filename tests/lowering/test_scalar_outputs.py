"""0-d outputs NumPy gives as scalars (lowering/lower.py ``_numpy_returns_scalar``): asked
once per node, so a long chain of 0-d ops reusing each step lowers in linear time."""
import numpy as np

import kiln
import kiln.lowering.lower as lower
from kiln.ir import trace
from kiln.ops import F, TensorMeta
from kiln.runtime.backend import generate


def test_a_chain_of_zero_d_ops_is_asked_once_per_node(monkeypatch):
    # s = s * 3 + s unrolled 40 times: each node read twice per step, 2**40 questions
    # without a memo (i13h met it as a hang on an unrolled loop of changing type)
    def fn(x):
        s = F.sum(x)
        for _ in range(40):
            s = F.add(F.multiply(s, 3.0), s)
        return s
    g = trace(fn, [TensorMeta((4,), np.float64)], ["x"])
    calls = []
    real = lower._numpy_returns_scalar
    monkeypatch.setattr(lower, "_numpy_returns_scalar",
                        lambda node, *a: calls.append(node) or real(node, *a))
    generate(g, [np.ones(4)])
    assert len(calls) <= 4 * 81


def test_the_chain_compiles_to_numpys_scalar():
    def f(x):
        s = x.sum()
        for _ in range(40):
            s = s * 0.5 + s
        return s
    x = np.linspace(0, 1, 5)
    got, want = kiln.compile(f)(x), f(x)
    assert type(got) is type(want) and got == want
