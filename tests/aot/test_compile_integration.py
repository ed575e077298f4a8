"""aot through kiln.compile: the captured graph goes to aot_autograd as a backend.

Mutation probes compare final argument states and outputs with plain NumPy; they hold
whether capture functionalizes (emits setitem/copyto nodes) or still breaks the graph on
mutation, so they keep holding as capture grows.
"""
from __future__ import annotations

import numpy as np
import pytest

import kiln
from kiln.aot import aot_eager

BACKENDS = [aot_eager]
try:
    from kiln import api
    if "aot_eager" in getattr(api, "BACKENDS", ()):
        BACKENDS.append("aot_eager")
except ImportError:  # pragma: no cover
    pass


def _compare(fn, make, backend):
    want_args = make()
    want = fn(*want_args)
    got_args = make()
    got = kiln.compile(fn, backend=backend)(*got_args)
    np.testing.assert_array_equal(np.asarray(got, dtype=object).shape, np.asarray(want, dtype=object).shape)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g, w)
    for g, w in zip(got_args, want_args):
        np.testing.assert_array_equal(g, w)
    return got, got_args


@pytest.mark.parametrize("backend", BACKENDS)
def test_functional_function(backend):
    def f(x, w, s):
        h = np.tanh(x @ w) * s
        return h.sum(axis=1), h.T
    _compare(f, lambda: (np.random.default_rng(0).standard_normal((4, 3)), np.ones((3, 2)), 2.0),
             backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_augmented_assignment_and_out(backend):
    def f(a, b):
        a += 1
        np.multiply(a, b, out=b)
        return a, b.sum()
    got, args = _compare(f, lambda: (np.arange(3.0), np.ones(3)), backend)
    assert got[0] is args[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_slice_assignment_through_a_view(backend):
    def f(x):
        v = x[1:]
        v[0] = -1.0
        x[:, 0] = x[:, 1] * 2
        return x.sum(), v
    got, args = _compare(f, lambda: (np.arange(12.0).reshape(4, 3),), backend)
    assert np.shares_memory(got[1], args[0])


def test_backend_receives_the_graph_once():
    calls = []

    def backend(graph, example):
        calls.append(graph)
        return aot_eager(graph, example)

    f = kiln.compile(lambda x: np.sin(x) * 2, backend=backend)
    for _ in range(3):
        f(np.ones(3))
    assert len(calls) == 1


def _loss(w, x):
    h = np.tanh(x @ w)
    kiln.graph_break()            # eager in the middle: the tape must connect both sides
    return (h * h).sum()


def test_graph_break_in_the_middle_of_a_differentiated_function():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3))
    w0 = rng.standard_normal((3, 2))
    f = kiln.compile(_loss, backend=aot_eager)
    w = kiln.tensor(w0, requires_grad=True)
    f(w, x).backward()
    we = kiln.tensor(w0, requires_grad=True)
    _loss(we, x).backward()
    np.testing.assert_allclose(w.grad.numpy(), we.grad.numpy(), rtol=1e-13)
    g = kiln.grad(f)(w0, x)
    np.testing.assert_allclose(g, we.grad.numpy(), rtol=1e-13)
