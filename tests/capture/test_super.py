"""super() in methods (kiln/capture/variables/super_object.py): a base class's method
inlined into the graph, on 3.11 (a call of super) and 3.12+ (LOAD_SUPER_ATTR)."""
import numpy as np
import pytest

import kiln


class Regression:
    def __init__(self, lr):
        self.lr = lr
        self.w = np.zeros(3)

    def fit(self, X, y):
        for _ in range(3):
            grad = -(y - X @ self.w) @ X
            self.w = self.w - self.lr * grad
        return self.w

    def scale(self):
        return 2.0


class Ridge(Regression):
    def fit(self, X, y):                       # zero-argument form
        return super().fit(X, y) * super().scale()


class OldStyle(Regression):
    def fit(self, X, y):                       # two-argument form
        return super(OldStyle, self).fit(X, y) + 1.0


class Deeper(Ridge):
    def fit(self, X, y):                       # skips a class in the MRO
        return super().fit(X, y) - super(Ridge, self).fit(X, y)


X = np.arange(12.0).reshape(4, 3) / 10
y = np.array([1.0, 2.0, 0.5, -1.0])


def fit(model, X, y):
    return model.fit(X, y)


@pytest.mark.parametrize("cls", [Ridge, OldStyle, Deeper])
def test_super_calls_are_inlined_in_one_graph(probe, cls):
    compiled, _, _ = probe(fit, cls(0.01), X, y, graphs=1)
    assert not [r for r in compiled.records if r.graph_break is not None]


def test_a_patched_base_method_recompiles(monkeypatch):
    compiled = kiln.compile(fit)
    compiled(Ridge(0.01), X, y)
    monkeypatch.setattr(Regression, "scale", lambda self: 5.0)
    np.testing.assert_allclose(compiled(Ridge(0.01), X, y), fit(Ridge(0.01), X, y), rtol=1e-12)
    monkeypatch.setattr(Ridge, "scale", lambda self: 7.0, raising=False)  # before it in the MRO
    np.testing.assert_allclose(compiled(Deeper(0.01), X, y), fit(Deeper(0.01), X, y), rtol=1e-12)


def test_super_errors_are_pythons():
    class Lonely:
        def f(self):
            return super().missing

    def call(o):
        return o.f()
    with pytest.raises(AttributeError) as want:
        call(Lonely())
    with pytest.raises(AttributeError) as got:
        kiln.compile(call)(Lonely())
    assert str(got.value) == str(want.value)
