"""Attributes set on a function object (``self.regularization.grad = lambda w: 0``, in
ML-From-Scratch's regressions): read like an object's attributes, and guarded."""
import numpy as np

import kiln


class _Model:
    def __init__(self):
        self.reg = lambda w: 0
        self.reg.grad = lambda w: 0.5 * w
        self.reg.alpha = 0.1
        self.w = np.ones(3)

    def step(self, g):
        self.w = self.w - 0.1 * (g + self.reg.grad(self.w)) * self.reg.alpha
        return self.w


def _run(m, g):
    return m.step(g)


def test_function_attributes_are_read_in_the_graph(probe):
    compiled, _, _ = probe(_run, _Model(), np.arange(3.0), graphs=1)
    assert not [r for r in compiled.records if r.graph_break is not None]


def test_changing_a_function_attribute_is_seen():
    compiled = kiln.compile(_run)
    g = np.arange(3.0)
    want, got = _Model(), _Model()
    for change in (None, ("alpha", 0.5), ("grad", lambda w: w * 0)):
        if change is not None:
            setattr(want.reg, *change)
            setattr(got.reg, *change)
        np.testing.assert_array_equal(compiled(got, g), _run(want, g))
