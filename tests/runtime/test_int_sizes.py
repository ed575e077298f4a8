"""Run-time int sizes: ``x[:n]`` with ``n`` an int argument compiles once for every ``n``
(kiln/capture/dims.py ``runtime_slices``, kiln/lowering/sizes.py kind "int")."""
import numpy as np
import pytest

import kiln
import kiln.runtime.backend as backend_mod
from kiln.runtime import cpp_backend


class Counting:
    """The C++ backend, counting graphs handed to it and lowerings run (variants)."""

    def __init__(self, monkeypatch):
        self.graphs, self.lowerings = 0, 0
        generate = backend_mod.generate

        def counted(*args, **kwargs):
            self.lowerings += 1
            return generate(*args, **kwargs)
        monkeypatch.setattr(backend_mod, "generate", counted)

    def __call__(self, graph, example_inputs):
        self.graphs += 1
        return cpp_backend(graph, example_inputs)


def _same(got, want):
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert type(g) is type(w) and np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_slice_bound_argument_compiles_once_for_every_n(monkeypatch):
    def head(x, n):
        return np.sin(x[:n]).sum(), x[:n] * 2.0
    be = Counting(monkeypatch)
    f = kiln.compile(head, backend=be)
    x = np.random.default_rng(0).standard_normal(12)
    for n in list(range(-15, 17)) + [10**6, -10**6]:   # negative, 0, 1, past the end: clamped
        _same(f(x, n), head(x, n))
    # one graph for every length >= 2, one for the empty slice, one for length 1
    assert be.graphs == 3 and be.lowerings == 3
    guards = kiln.explain(head)(x, 5).guards
    assert "type(n) is int" in guards and "bool((len(range(x.shape[0])[:n]) >= 2))" in guards
    assert not any(g.startswith("n ==") for g in guards)


@pytest.mark.parametrize("fn, ns", [
    (lambda x, n: x[n:] * 3.0, range(-14, 15)),
    (lambda x, n: np.cos(x[-n:]), range(-14, 15)),
    (lambda x, n: x[:n:2] + x[:n:2], range(-14, 15)),
    (lambda x, n: x[n::-1] - 1.0, range(-14, 15)),
    (lambda x, n: x[2:n].max() + x[: len(x) - n].shape[0], range(4, 10)),
])
def test_run_time_slices_match_numpy(monkeypatch, fn, ns):
    be = Counting(monkeypatch)
    f = kiln.compile(fn, backend=be)
    x = np.random.default_rng(1).standard_normal(12)
    for n in ns:
        _same(f(x, n), fn(x, n))
    assert be.graphs <= 3 and be.lowerings <= 3


def test_two_bounds_and_a_2d_array(monkeypatch):
    def window(m, a, b):
        return (m[a:b] ** 2).sum(axis=0), m[:, a:b].mean(axis=1)
    be = Counting(monkeypatch)
    f = kiln.compile(window, backend=be)
    m = np.random.default_rng(2).standard_normal((9, 9))
    for a in (-7, 0, 1, 3):
        for b in (-2, 5, 8, 20):
            if len(range(9)[a:b]) == 0:
                continue   # NumPy's mean of an empty row warns; not what this test checks
            _same(f(m, a, b), window(m, a, b))
    # lengths >= 2 share one graph; each length-1 window its own (its start is guarded)
    assert be.lowerings == be.graphs <= 3


def test_int_sizes_with_dynamic_dims(monkeypatch):
    def f(x, n):
        return np.tanh(x[:n]).sum(), x[n:] * 2.0
    be = Counting(monkeypatch)
    compiled = kiln.compile(f, backend=be, dynamic=True)
    rng = np.random.default_rng(3)
    for size in (10, 13, 31):
        x = rng.standard_normal(size)
        for n in (2, 5, -3, 7):
            _same(compiled(x, n), f(x, n))
    assert be.graphs == 1 and be.lowerings == 1
    art_guards = kiln.explain(f)(x, 3).guards
    assert "bool((len(range(x.shape[0])[n:]) >= 2))" in art_guards


def test_bounds_whose_sizes_symbols_cannot_relate_take_values(monkeypatch):
    # len(range(12)[:n]) and len(range(12)[1:n + 1]) are two symbols that meet in an
    # elementwise op: the build takes n's value (and its wrapper checks it).
    def f(x, n):
        return x[:n] - x[1:n + 1]
    be = Counting(monkeypatch)
    compiled = kiln.compile(f, backend=be)
    x = np.random.default_rng(4).standard_normal(12)
    for n in (3, 4, 3, 5):
        _same(compiled(x, n), f(x, n))
    assert be.graphs == 1 and be.lowerings == 3
    with pytest.raises(ValueError) as caught:
        compiled(x, 12)
    with pytest.raises(ValueError) as eager:
        f(x, 12)
    assert str(caught.value) == str(eager.value)


@pytest.mark.parametrize("fn", [lambda x: (x[1::2] - x[:-1:2]) * 2.0,
                                lambda x: x[2::3] * x[1:-1:3] + x[:-2:3],
                                lambda x: x[1:] - x[:-1]],
                         ids=["x[1::2] - x[:-1:2]", "three strided", "x[1:] - x[:-1]"])
def test_constant_slices_of_one_length_share_a_symbol(monkeypatch, fn):
    # len(range(L)[1::2]) == len(range(L)[:-1:2]) == len(range(L - 1)[::2]) for every L:
    # one symbol (kiln/lowering/sizes.py int_slice), one build for every length.
    be = Counting(monkeypatch)
    compiled = kiln.compile(fn, backend=be, dynamic=True)
    rng = np.random.default_rng(5)
    for size in (6000, 8001, 10002, 14003):
        x = rng.standard_normal(size)
        _same(compiled(x), fn(x))
    assert be.graphs == 1 and be.lowerings == 1
