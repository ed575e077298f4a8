"""The ops whose result length is known only after they ran (kiln/ops/selection.py and
``getitem_mask``): each against NumPy on plain arrays, on kiln Tensors, traced into a
graph (the interpreter) and through the cpp backend, where the graph is built from one
example and run on others whose results have other lengths (0 included). Gradients (the
weights of np.bincount, a selection) against finite differences in float64."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import kiln
from kiln.ir import trace
from kiln.ops import F, TensorMeta
from kiln.ops.registry import call_spelling
from kiln.runtime import cpp_backend

from .gen import assert_same_result

RNG = np.random.default_rng(3)


def floats(n=9):
    return [RNG.standard_normal(n), np.zeros(n), np.where(np.arange(n) == 4, 1.5, 0.0),
            RNG.standard_normal((3, 4))]


def ints(n=9):
    return [RNG.integers(0, 4, n), RNG.integers(0, 11, n), np.zeros(n, np.int64),
            np.arange(n)[::-1].copy()]


# (name, NumPy function of one or two arrays, via ops, example arrays, other arrays)
CASES: list[tuple[str, Callable, Callable, list]] = [
    ("argwhere", np.argwhere, F.argwhere, floats()),
    ("nonzero", lambda x: np.nonzero(x), lambda x: call_spelling(np.nonzero, x), floats()),
    ("where", lambda x: np.where(x > 0), lambda x: call_spelling(np.where, F.greater(x, 0)), floats()),
    ("flatnonzero", np.flatnonzero, lambda x: call_spelling(np.flatnonzero, x), floats()),
    ("mask", lambda x: x[x > 0], lambda x: F.getitem_mask(x, (F.greater(x, 0),)), floats()),
    ("mask_rows", lambda x: x[x[:, 0] > 0], lambda x: F.getitem_mask(
        x, (F.greater(F.getitem(x, (slice(None), 0)), 0),)),
     [RNG.standard_normal((5, 3)), -np.ones((5, 3)), RNG.standard_normal((5, 3))]),
    ("compress", lambda x: np.compress(x > 0, x), lambda x: call_spelling(np.compress, F.greater(x, 0), x),
     floats()[:3]),
    ("unique", np.unique, F.unique, ints() + floats()),
    ("unique_all", lambda x: np.unique(x, True, True, True),
     lambda x: call_spelling(np.unique, x, True, True, True), ints()),
    ("bincount", np.bincount, lambda x: F.bincount(x, None), ints()),
    ("bincount_min", lambda x: np.bincount(x, minlength=6),
     lambda x: F.bincount(x, None, minlength=6), ints()),
    ("bincount_w", lambda x, w: np.bincount(x, w), F.bincount,
     [(x, RNG.standard_normal(x.shape)) for x in ints()]),
]


def _args(a: Any) -> tuple:
    return a if isinstance(a, tuple) else (a,)


def _same(got: Any, want: Any, what: str) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), what
        for g, w in zip(got, want):
            assert_same_result(np.asarray(g), w, what)
    else:
        assert_same_result(np.asarray(got), want, what)


@pytest.mark.parametrize("name, np_fn, via, arrays", CASES, ids=[c[0] for c in CASES])
def test_eager_tensor_graph_and_cpp_match_numpy(name, np_fn, via, arrays):
    for a in arrays:
        args = _args(a)
        want = np_fn(*args)
        _same(via(*args), want, f"{name}: the ops")
        t = np_fn(*[kiln.tensor(v) for v in args])
        _same(tuple(v.numpy() for v in t) if isinstance(t, tuple) else t.numpy(), want,
              f"{name}: on Tensors")
    # one graph per input layout, built from the first such example, run on every other
    by_shape: dict = {}
    for a in arrays:
        by_shape.setdefault(tuple((v.shape, v.dtype.str) for v in _args(a)), []).append(_args(a))
    for group in by_shape.values():
        example = group[0]
        graph = trace(via, [TensorMeta(v.shape, v.dtype) for v in example],
                      [f"x{i}" for i in range(len(example))])
        compiled = cpp_backend(graph, [v.copy() for v in example])
        assert not hasattr(compiled, "__kiln_numpy_program__"), f"{name}: the cpp backend fell back to the interpreter"
        for args in group:
            want = np_fn(*args)
            want = want if isinstance(want, tuple) else (want,)
            _same(tuple(graph(*args)), want, f"{name}: graph interpreter")
            before = [v.copy() for v in args]
            _same(tuple(compiled(*args)), want, f"{name}: cpp backend")
            for v, b in zip(args, before):
                np.testing.assert_array_equal(v, b, err_msg=f"{name}: an input was modified")


@pytest.mark.parametrize("bad, message", [
    (lambda: np.bincount(np.array([1, -1, 2])), "negative"),
    (lambda: np.bincount(np.zeros((2, 2), np.int64)), "too deep"),
    (lambda: np.bincount(np.zeros(3)), "Cannot cast"),
    (lambda: np.bincount(np.arange(3), np.ones(4)), "same length"),
])
def test_bincount_raises_numpys_errors_compiled(bad, message):
    with pytest.raises((ValueError, TypeError), match=message):
        bad()
    with pytest.raises((ValueError, TypeError), match=message):
        kiln.compile(bad)()


def test_bincount_weights_gradient_matches_finite_differences():
    x = np.array([0, 3, 3, 1, 0, 5])
    w = RNG.standard_normal(6)
    cot = RNG.standard_normal(6)

    def f(weights):
        return np.sum(np.bincount(x, weights) * cot)
    t = kiln.tensor(w, requires_grad=True)
    f(t).backward()
    eps, fd = 1e-6, np.zeros(6)
    for i in range(6):
        d = np.zeros(6)
        d[i] = eps
        fd[i] = (f(w + d) - f(w - d)) / (2 * eps)
    np.testing.assert_allclose(t.grad.numpy(), fd, rtol=1e-7, atol=1e-9)


def test_ops_without_a_derivative_say_so():
    t = kiln.tensor(np.array([1.0, 3.0, 1.0]), requires_grad=True)
    with pytest.raises(kiln.KilnError, match="unique"):
        np.unique(t).sum().backward()
