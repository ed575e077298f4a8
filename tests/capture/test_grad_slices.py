"""Slices with run-time bounds inside differentiated code: ``x[:n]`` with ``n`` an
argument, ``x[1:]`` on inputs of changing length, in ``kiln.grad`` /
``kiln.value_and_grad`` called by a compiled function and on kiln.Tensors that require
grad. Gradients are checked against central finite differences in float64 at every
size. All paths compile these once: the non-differentiated one with run-time lengths
(kiln/ir/sizes.py), kiln.grad's backward naming each slice's length as an
``ir.SliceLength`` (kiln/ir/symbolic.py), and the kiln.Tensor path's joint graph the
same way, its partition saving no value of a slice's length (the backward recomputes it
from the primal: kiln/aot/partition.py), so forward and backward lower once each. Where
the backward would need such a value saved (a matmul's rows ``x[:n] @ w``), a slice's
length is a forward output's dim, or a rule needs a number, the backward is built per
call's sizes and int bounds instead."""
import numpy as np
import pytest

import kiln
from kiln.runtime import cpp_backend


def _fd(loss, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (loss(up) - loss(down)) / (2 * eps)
    return g


def _head(x, n):
    return (np.sin(x[:n]) ** 2).sum()


def _tail(x, n):
    return (x[n:] * np.cos(x[n:])).sum()


def _diffs(x):
    return ((x[1:] - x[:-1]) ** 2).sum()


def grad_head(x, n):
    return kiln.grad(_head)(x, n)


def value_and_grad_tail(x, n):
    return kiln.value_and_grad(_tail)(x, n)


def grad_diffs(x):
    return kiln.grad(_diffs)(x)


def _counting():
    graphs = []
    return graphs, lambda g, ex: graphs.append(g) or cpp_backend(g, ex)


def _bound_calls():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(16)
    return [(x, n) for n in (3, 5, 9, 12, 14)]


def _length_calls():
    rng = np.random.default_rng(1)
    return [(rng.standard_normal(m),) for m in (6, 9, 13, 20, 31)]


def _check(fn, loss, calls, graphs_for):
    graphs, backend = _counting()
    compiled = kiln.compile(fn, backend=backend)
    for args in calls:
        got = compiled(*args)
        grad = got[1] if isinstance(got, tuple) else got
        if isinstance(got, tuple):
            np.testing.assert_allclose(got[0], loss(*args), rtol=1e-12)
        x, rest = args[0], args[1:]
        np.testing.assert_allclose(grad, _fd(lambda v: loss(v, *rest), x), rtol=1e-6, atol=1e-8)
    return len(graphs)


def test_grad_of_head_slice_matches_finite_differences_at_every_bound():
    _check(grad_head, _head, _bound_calls(), None)


def test_value_and_grad_of_tail_slice_matches_finite_differences_at_every_bound():
    _check(value_and_grad_tail, _tail, _bound_calls(), None)


def test_grad_of_differences_matches_finite_differences_at_every_length():
    _check(grad_diffs, _diffs, _length_calls(), None)


def test_tensor_slices_of_changing_length_match_finite_differences():
    compiled = kiln.compile(_diffs)
    for (x,) in _length_calls():
        t = kiln.tensor(x, requires_grad=True)
        compiled(t).backward()
        np.testing.assert_allclose(t.grad.numpy(), _fd(_diffs, x), rtol=1e-6, atol=1e-8)


def test_undifferentiated_slices_compile_once():
    graphs, backend = _counting()
    compiled = kiln.compile(_head, backend=backend)
    for x, n in _bound_calls():
        np.testing.assert_allclose(compiled(x, n), _head(x, n), rtol=1e-12)
    assert len(graphs) == 1


@pytest.mark.parametrize("fn, loss, calls", [(grad_head, _head, _bound_calls),
                                             (value_and_grad_tail, _tail, _bound_calls),
                                             (grad_diffs, _diffs, _length_calls)],
                         ids=["grad x[:n]", "value_and_grad x[n:]", "grad x[1:] - x[:-1]"])
def test_differentiated_slices_compile_once(fn, loss, calls):
    assert _check(fn, loss, calls(), None) <= 2   # the first call, then one for every other


def test_tensor_slices_of_changing_length_lower_once_each_way(monkeypatch):
    import kiln.runtime.backend as backend_mod
    lowerings = []
    generate = backend_mod.generate
    monkeypatch.setattr(backend_mod, "generate", lambda *a, **k: lowerings.append(1) or generate(*a, **k))

    def diffs(x):   # a code object of its own: no entries from the other tests
        return ((x[1:] - x[:-1]) ** 2).sum()

    compiled = kiln.compile(diffs)
    for (x,) in _length_calls():
        t = kiln.tensor(x, requires_grad=True)
        compiled(t).backward()
        np.testing.assert_allclose(t.grad.numpy(), _fd(_diffs, x), rtol=1e-6, atol=1e-8)
    assert len(lowerings) <= 4   # forward and backward at the first length, then once more each


def _tensor_check(fn, calls, most=None, monkeypatch=None, **kw):
    """``fn(x, *rest)`` compiled and called on ``kiln.tensor(x, requires_grad=True)``:
    value and gradient against NumPy and finite differences at every call; with ``most``,
    the number of lowerings (forward and backward graphs built) is at most that."""
    lowerings = []
    if most is not None:
        import kiln.runtime.backend as backend_mod
        generate = backend_mod.generate
        monkeypatch.setattr(backend_mod, "generate",
                            lambda *a, **k: lowerings.append(1) or generate(*a, **k))
    compiled = kiln.compile(fn, **kw)
    rng = np.random.default_rng(7)
    for shape, *rest in calls:
        x = rng.standard_normal(shape)
        t = kiln.tensor(x, requires_grad=True)
        out = compiled(t, *rest)
        np.testing.assert_allclose(float(out), fn(x, *rest), rtol=1e-12)
        out.backward()
        np.testing.assert_allclose(t.grad.numpy(), _fd_nd(lambda v: fn(v, *rest), x), rtol=1e-6, atol=1e-8)
    if most is not None:
        assert len(lowerings) <= most


def test_tensor_head_slice_with_a_runtime_bound_lowers_once_each_way(monkeypatch):
    def head(x, n):
        return (np.sin(x[:n]) ** 2).sum()
    _tensor_check(head, [(16, n) for n in (3, 5, 9, 12, 14)], 2, monkeypatch)


def test_tensor_two_slices_with_a_runtime_bound_and_a_mean_lower_once_each_way(monkeypatch):
    # the mean's 1/N is a backward size input: len(range(16)[n:]) of the call's n
    def two(x, n):
        return (x[:n] ** 2).sum() + np.mean(x[n:] ** 3)
    _tensor_check(two, [(16, n) for n in (3, 5, 9, 12, 14)], 2, monkeypatch)


def test_tensor_slices_of_changing_length_and_bound():
    def tail(x, n):
        return np.tanh(x[n:-1]).sum() + ((x[1:] - x[:-1]) ** 2).sum()
    _tensor_check(tail, [(m, n) for m, n in ((10, 2), (13, 4), (31, 7), (31, 3), (8, 6))])


def test_tensor_slices_with_the_numpy_interpreter():
    # aot_eager: the backward's SliceLength params and size inputs read the call's n
    def two(x, n):
        return (x[:n] ** 2).sum() + np.mean(np.sin(x[n:-1]))
    _tensor_check(two, [(m, n) for m, n in ((16, 3), (16, 9), (20, 5), (11, 2))], backend="aot_eager")


def test_tensor_slices_the_backward_cannot_follow_are_built_per_bound():
    # x[:n] @ w: the matmul runs in the forward only and its rows are the slice's length,
    # so the backward is built for each n (keyed by it); var's N - ddof over a slice
    w = np.random.default_rng(8).standard_normal(3)

    def rows(x, n):
        return ((x[:n] @ w) ** 2).sum()

    def spread(x, n):
        return np.var(x[:n]) + np.std(x[n:], ddof=1)
    _tensor_check(rows, [((12, 3), n) for n in (3, 6, 3, 9, 11)])
    _tensor_check(spread, [(16, n) for n in (3, 5, 9, 3, 12)])


def test_tensor_slice_returned_by_the_compiled_function():
    # the output's length is a slice's: its tangent pins the backward to the call's sizes
    compiled = kiln.compile(lambda x: x[1:] * 2.0)
    rng = np.random.default_rng(9)
    for m in (5, 7, 9, 5):
        x = rng.standard_normal(m)
        t = kiln.tensor(x, requires_grad=True)
        (compiled(t) ** 2).sum().backward()
        np.testing.assert_allclose(t.grad.numpy(), _fd(lambda v: ((v[1:] * 2.0) ** 2).sum(), x),
                                   rtol=1e-6, atol=1e-8)


# -- more slices: each gradient against finite differences at every call; ``graphs`` is
# how many graphs the calls may build (the first call, then one that follows the sizes;
# an empty slice is a constant slice with an entry of its own, as undifferentiated).

def _fd_nd(loss, x, eps=1e-6):
    flat = x.reshape(-1)
    g = np.zeros(x.size)
    for i in range(x.size):
        up, down = flat.copy(), flat.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (loss(up.reshape(x.shape)) - loss(down.reshape(x.shape))) / (2 * eps)
    return g.reshape(x.shape)


SLICES = {
    "x[:-n]": (lambda x, n: (np.sin(x[:-n]) ** 2).sum(), [(16, n) for n in (1, 3, 5, 9, 14)], 1),
    "x[-n:] (n past the length)": (lambda x, n: (x[-n:] ** 3).sum(),
                                   [(16, n) for n in (3, 5, 9, 14, 30)], 1),
    "x[n:] (n past the end: empty)": (lambda x, n: (x[n:] * np.cos(x[n:])).sum() + (x ** 2).sum(),
                                      [(16, n) for n in (3, 9, 16, 20, 40, 5)], 2),
    "x[n:m] (empty when m <= n)": (lambda x, n, m: np.exp(x[n:m]).sum() + x.sum(),
                                   [(16, 3, 9), (16, 9, 3), (16, 2, 12), (16, 5, 5), (16, 1, 15)], 2),
    "x[a:b:k]": (lambda x, a, b, k: (x[a:b:k] ** 2).sum(),
                 [(16, 1, 14, 2), (16, 0, 16, 3), (16, 2, 15, 2), (16, 3, 12, 4)], 1),
    "x[::k], k < 0": (lambda x, k: (np.sin(x[::k]) * x[::k]).sum(), [(16, k) for k in (-1, -2, -3, -5)], 1),
    "x[:n, 1:] (2-D)": (lambda x, n: (np.tanh(x[:n, 1:]) ** 2).sum(), [((6, 5), n) for n in (2, 3, 4, 5, 6)], 1),
    "x[:, n:] (2-D, a max after)": (lambda x, n: (x[:, n:] * x[:, n:]).sum(axis=1).max(),
                                    [((4, 9), n) for n in (1, 3, 5, 7)], 1),
    "x[:n][1:]": (lambda x, n: (x[:n][1:] ** 2).sum(), [(16, n) for n in (4, 6, 9, 12)], 1),
    "mean(x[:n])": (lambda x, n: np.mean(x[:n] ** 2), [(16, n) for n in (3, 5, 9, 12)], 1),
    "x[2:-1] - x[1:-2], changing length": (lambda x: ((x[2:-1] - x[1:-2]) ** 2).sum(),
                                           [(m,) for m in (6, 9, 13, 20)], 2),
    "x[1:] - x[:-1] of rows, changing length": (lambda x: ((x[1:] - x[:-1]) ** 2).sum(),
                                                [((m, 3),) for m in (5, 7, 9, 12)], 2),
    "x[1::2] - x[:-1:2], changing length": (lambda x: ((x[1::2] - x[:-1:2]) ** 2).sum(),
                                            [(m,) for m in (6, 8, 10, 14)], 2),
}


@pytest.mark.parametrize("name", list(SLICES))
def test_differentiated_slices_match_finite_differences_and_compile_once(name):
    loss, calls, most = SLICES[name]

    def fn(x, *rest):
        return kiln.value_and_grad(loss)(x, *rest)
    graphs, backend = _counting()
    compiled = kiln.compile(fn, backend=backend)
    rng = np.random.default_rng(2)
    for shape, *rest in calls:
        x = rng.standard_normal(shape)
        value, grad = compiled(x, *rest)
        np.testing.assert_allclose(value, loss(x, *rest), rtol=1e-12)
        np.testing.assert_allclose(grad, _fd_nd(lambda v: loss(v, *rest), x), rtol=1e-6, atol=1e-8)
    assert len(graphs) <= most


def test_a_backward_that_needs_a_slice_length_as_a_number_pins_it():
    # var's derivative divides by N - ddof: a float the entry computes; std of a slice
    # of run-time length is checked at every bound, whatever the graph count.
    def loss(x, n):
        return np.std(x[:n]) + np.var(x[n:], ddof=1)

    compiled = kiln.compile(lambda x, n: kiln.value_and_grad(loss)(x, n))
    x = np.random.default_rng(3).standard_normal(12)
    for n in (3, 5, 8, 10):
        value, grad = compiled(x, n)
        np.testing.assert_allclose(value, loss(x, n), rtol=1e-12)
        np.testing.assert_allclose(grad, _fd(lambda v: loss(v, n), x), rtol=1e-6, atol=1e-8)


def test_a_slice_length_that_meets_a_number_is_pinned():
    # x[n:] * np.arange(1.0, 4.0): the backward cannot follow the length (it meets 3), so
    # each n gets a graph of its own, guarded; a length NumPy rejects raises as NumPy.
    def loss(x, n):
        return (x[n:] * np.arange(1.0, 4.0)).sum() + (x[:n] ** 2).sum()

    graphs, backend = _counting()
    compiled = kiln.compile(lambda x, n: kiln.value_and_grad(loss)(x, n), backend=backend)
    rng = np.random.default_rng(4)
    for m in (8, 8, 9, 12, 12):
        x = rng.standard_normal(m)
        value, grad = compiled(x, m - 3)
        np.testing.assert_allclose(value, loss(x, m - 3), rtol=1e-12)
        np.testing.assert_allclose(grad, _fd(lambda v: loss(v, m - 3), x), rtol=1e-6, atol=1e-8)
    assert len(graphs) == 3
    with pytest.raises(ValueError, match="could not be broadcast"):
        compiled(rng.standard_normal(8), 4)


def _sgd(w, x, n):
    loss, g = kiln.value_and_grad(lambda w, x, n: ((x[:n] @ w) ** 2).mean())(w, x, n)
    return w - 0.1 * g


@pytest.mark.parametrize("case", ["rows of a matmul", "x[:n] @ x[:n].T", "dynamic=True",
                                  "half of the length"])
def test_slices_in_larger_backwards(case):
    rng = np.random.default_rng(6)
    if case == "rows of a matmul":   # an SGD step on the first n rows, compiled once
        loss = lambda w, x, n: ((x[:n] @ w) ** 2).mean()   # noqa: E731
        fn, calls, most, kw = _sgd, [(rng.standard_normal(4), rng.standard_normal((12, 4)), n)
                                     for n in (3, 6, 9, 11)], 1, {}
        want = lambda w, x, n: w - 0.1 * _fd(lambda u: loss(u, x, n), w)   # noqa: E731
    else:
        loss = {"x[:n] @ x[:n].T": lambda x, n: (x[:n] @ x[:n].T).sum(),
                "dynamic=True": lambda x, n: np.tanh(x[n:-1]).sum(),
                "half of the length": lambda x: (x[x.shape[0] // 2:] ** 2).sum()}[case]
        calls = {"x[:n] @ x[:n].T": [(rng.standard_normal((8, 3)), n) for n in (2, 4, 6, 8)],
                 "dynamic=True": [(rng.standard_normal(m), n) for m, n in ((10, 2), (13, 4), (31, 7))],
                 "half of the length": [(rng.standard_normal(m),) for m in (6, 9, 13, 20)]}[case]
        most = 2 if case == "half of the length" else 1
        kw = {"dynamic": True} if case == "dynamic=True" else {}

        def fn(x, *rest):
            return kiln.grad(loss)(x, *rest)

        def want(x, *rest):
            return _fd_nd(lambda u: loss(u, *rest), x)
    graphs, backend = _counting()
    compiled = kiln.compile(fn, backend=backend, **kw)
    for args in calls:
        np.testing.assert_allclose(compiled(*args), want(*args), rtol=1e-6, atol=1e-8)
    assert len(graphs) <= most
