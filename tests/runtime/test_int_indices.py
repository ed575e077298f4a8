"""Run-time int indices and steps: ``x[i]`` and ``x[a:b:k]`` with ``i``, ``k`` int
arguments compile once for every value (kiln/capture/dims.py ``runtime_slices``,
kiln/lowering/sizes.py ``int_index`` and ``int_slice``): an index is an offset symbol
the wrapper wraps (NumPy's IndexError when out of range), a step's magnitude a symbol
in the strides and lengths, its sign guarded."""
import numpy as np
import pytest

import kiln

from .test_int_sizes import Counting


def _copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _check(compiled, fn, args):
    """Same values (or the same exception) and the same final state of the arrays."""
    mine, theirs = _copies(args), _copies(args)
    try:
        want = fn(*theirs)
    except Exception as e:
        with pytest.raises(type(e)) as caught:
            compiled(*mine)
        assert str(caught.value) == str(e)
        want = None
    else:
        got = compiled(*mine)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert type(g) is type(w) and np.shape(g) == np.shape(w)
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    for a, b in zip(mine, theirs):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


def test_int_index_compiles_once_and_raises_numpys_index_error(monkeypatch):
    def rows(x, i, j):
        return np.sin(x[i]) + x[j - 1, i] * x[:, j].sum()
    be = Counting(monkeypatch)
    f = kiln.compile(rows, backend=be)
    x = np.random.default_rng(0).standard_normal((5, 5))
    # (the first call's values differ: equal small ints are one object, which capture
    # cannot tell apart, so it would specialize them)
    for i in (2, 0, 1, 4, -1, -5, 5, -6, 40):          # in range, negative, out of range
        for j in (4, 1, 3, -4, 5):
            _check(f, rows, (x, i, j))
    assert be.graphs == 1 and be.lowerings == 1
    guards = kiln.explain(rows)(x, 2, 4).guards
    assert not any(g.startswith(("i ==", "j ==")) for g in guards)
    with pytest.raises(IndexError) as caught:
        f(x, 7, 1)
    assert str(caught.value) == "index 7 is out of bounds for axis 0 with size 5"
    assert "x[j - 1, i]" in "".join(getattr(caught.value, "__notes__", []))   # the user's line


def test_unused_int_index_still_raises(monkeypatch):
    def f(x, i):
        x[i]
        return x * 2.0
    be = Counting(monkeypatch)
    compiled = kiln.compile(f, backend=be)
    x = np.arange(6.0)
    for i in (1, -6, 6):
        _check(compiled, f, (x, i))
    assert be.graphs == 1


def test_int_index_on_dynamic_dims(monkeypatch):
    def f(x, i):
        return (x[i] * 2.0).sum() + x[-i].max()
    be = Counting(monkeypatch)
    compiled = kiln.compile(f, backend=be, dynamic=True)
    rng = np.random.default_rng(1)
    for n in (4, 7, 9):
        for i in (0, 3, -4, 6, 9):
            _check(compiled, f, (rng.standard_normal((n, 3)), i))
    assert be.graphs == 1 and be.lowerings == 1


def test_int_index_on_a_length_known_once_an_op_ran():
    # losses[k] of np.sort(-pnl) with dynamic dims: the sort's length is a symbol bound
    # after it ran, and the wrapped index read it before that (UnboundLocalError 'u6'
    # in the wrapper; real18's Monte Carlo VaR); a mask selection's length the same
    def tail(x, k):
        losses = np.sort(-x)
        big = x[x > 0]
        return losses[k], losses[k:].mean(), big[k - 2]
    f = kiln.compile(tail, dynamic=True)
    rng = np.random.default_rng(4)
    for n, k in ((40, 30), (25, -3), (12, 40)):     # (the last: NumPy's IndexError)
        _check(f, tail, (np.abs(rng.standard_normal(n)) + 0.1, k))


@pytest.mark.parametrize("fn, values", [
    (lambda x, k: x[::k] * 2.0, (1, 2, 3, 5, 11, 12, -1, -2, -4, -11, 0)),
    (lambda x, k: np.cos(x[3::k]).sum(), (1, 2, 4, -1, -3, 9)),
    (lambda x, k: x[-2::-k] - x[-2::-k].mean(), (1, 2, 3, 20)),
])
def test_run_time_steps_match_numpy(monkeypatch, fn, values):
    be = Counting(monkeypatch)
    f = kiln.compile(fn, backend=be)
    x = np.random.default_rng(2).standard_normal(12)
    for k in values:
        _check(f, fn, (x, k))
    # a graph per sign of the step and per length 0, 1, >= 2 at most
    assert be.graphs <= 4 and be.lowerings == be.graphs


def test_slice_with_run_time_start_stop_and_step(monkeypatch):
    def window(m, a, b, k):
        return (m[a:b:k] ** 2).sum(axis=0), m[:, a:b:k] * 0.5
    be = Counting(monkeypatch)
    f = kiln.compile(window, backend=be)
    m = np.random.default_rng(3).standard_normal((9, 9))
    for a in (0, 2, -7):
        for b in (8, -1, 30):
            for k in (1, 2, 3):
                if len(range(9)[a:b:k]) >= 2:
                    _check(f, window, (m, a, b, k))
    assert be.graphs == 1 and be.lowerings == 1
    for a, b, k in ((7, 1, -1), (-1, 0, -3), (8, -10, -2)):   # negative steps
        _check(f, window, (m, a, b, k))
    assert be.graphs == 2


def test_writes_through_run_time_indices_and_steps(monkeypatch):
    def update(x, i, k, v):
        x[i] = v
        x[::k] += 1.0
        x[i, ::k] *= 2.0
        return x.sum()
    be = Counting(monkeypatch)
    f = kiln.compile(update, backend=be)
    x = np.random.default_rng(4).standard_normal((6, 6))
    for i in (0, 2, -1, -6, 6):
        for k in (2, 3, 4):
            _check(f, update, (x, i, k, 0.25))
    assert be.graphs == 1


def _finite_differences(f, x, *args, eps=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += eps
        down[idx] -= eps
        g[idx] = (f(up, *args) - f(down, *args)) / (2 * eps)
    return g


def _row_loss(x, i):
    y = x * 1.0
    y[i - 1] = 0.5
    return (np.sin(x[i]) * y[i - 1]).sum() + (y ** 2).sum()


def _step_loss(x, k):
    return (np.tanh(x[::k]) ** 2).sum()


@pytest.mark.parametrize("loss, values", [(_row_loss, (1, 3, -1, -4)), (_step_loss, (1, 2, -3))])
def test_gradients_through_run_time_indices(loss, values):
    x = np.random.default_rng(5).standard_normal((5, 3))

    def step(x, v):
        return kiln.value_and_grad(loss)(x, v)
    compiled = kiln.compile(step)
    tape = kiln.compile(loss)
    for v in values:
        want = _finite_differences(loss, x, v)
        np.testing.assert_allclose(compiled(x, v)[1], want, rtol=1e-6, atol=1e-8)
        t = kiln.tensor(x, requires_grad=True)
        tape(t, v).backward()
        np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-6, atol=1e-8)


def _window_loss(x, i):
    return (np.tanh(x[i:i + 2]) ** 2).sum()


@pytest.mark.parametrize("loss, values", [
    (_row_loss, (1, 2, 4, -2)),
    # x[i:i + 2] with i an np.int64: the joint graph names the window's length over the
    # bound (ir/symbolic.py took Python ints only: a forward and backward per value)
    (_window_loss, (np.int64(1), np.int64(3), np.int64(0), np.int64(-3)))])
def test_tensor_training_step_with_an_int_index_compiles_once(monkeypatch, loss, values):
    import kiln.runtime.backend as backend_mod
    names = []
    compile_graph = backend_mod.compile_graph
    monkeypatch.setattr(backend_mod, "compile_graph",
                        lambda g, ex: names.append(g.name) or compile_graph(g, ex))
    compiled = kiln.compile(loss)
    x = np.random.default_rng(6).standard_normal((5, 3))
    for i in values:
        t = kiln.tensor(x, requires_grad=True)
        compiled(t, i).backward()
        np.testing.assert_allclose(t.grad.numpy(), _finite_differences(loss, x, i),
                                   rtol=1e-6, atol=1e-8)
    assert names == ["forward", "backward"]


def test_numpy_integer_indices_compile_once_and_index_in_the_kernel(monkeypatch):
    """``x[np.int64(i)]`` (an argmax passed in, a NumPy loop counter) is a run-time index
    like a Python int: one graph for every value and integer type's entry (it was guarded
    by value: a graph per index up to recompile_limit), read inside the kernel (not an
    extern ``x[i]`` copied to C order first), NumPy's IndexError and OverflowError."""
    def rows(x, i):
        y = np.sin(x[i]) + x[i - 1, 1:i + 2].sum()
        x[i, 1:] = -1.0
        return y
    wrappers = []

    class Built(Counting):
        def __call__(self, graph, example_inputs):
            fn = super().__call__(graph, example_inputs)
            wrappers.append(fn.kiln_artifact.wrapper)
            return fn
    be = Built(monkeypatch)
    f = kiln.compile(rows, backend=be)
    x = np.random.default_rng(7).standard_normal((6, 6))
    # (first values whose i, i - 1, i + 2 are no literal of the index: equal small ints
    # are one object, as for Python ints, and capture would specialize them)
    for t in (np.int64, np.int32, np.uint8):
        for i in (4, 3, 5, 6, 40) + ((-3, -5) if t is not np.uint8 else ()):
            _check(f, rows, (x, t(i)))
    assert be.graphs == 3   # one per type
    for i in (np.uint64(4), np.uint64(2**63), np.uint64(3)):   # past int64: OverflowError
        _check(f, rows, (x, i))
    assert be.graphs == 4
    assert not any("_ext_getitem" in w for w in wrappers), wrappers[0]
    guards = kiln.explain(rows)(x, np.int64(4)).guards
    assert not any(g.startswith("i ==") for g in guards), guards

