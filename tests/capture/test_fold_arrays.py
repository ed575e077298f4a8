"""Calls of constants computed while compiling (kiln/ir/fold.py): index arrays and
matrices built from sizes the guards fix become constant arrays of the graph, unless
they are written, returned, warn, raise, draw random numbers, or are elementwise work
only kernels read."""
import copy

import numpy as np
import pytest

import kiln

from .conftest import assert_same


def _ops(compiled_or_backend) -> list[str]:
    graph = compiled_or_backend.graphs[-1]
    return [n.target.name for n in graph.calls]


def dilate(X, d):        # numpy-ml's dilate: np.insert at positions built from the shape
    n_ex, in_rows, in_cols, n_in = X.shape
    r_ix = np.repeat(np.arange(1, in_rows), d)
    c_ix = np.repeat(np.arange(1, in_cols), d)
    Xd = np.insert(X, r_ix, 0, axis=1)
    return np.insert(Xd, c_ix, 0, axis=2)


def dft(frame):          # numpy-ml's DFT: a matrix from np.arange(N), one vdot per row
    N = len(frame)
    F = np.arange(N).reshape(1, -1) * np.arange(N).reshape(-1, 1)
    F = np.exp(F * (-1j * 2 * np.pi / N))
    return np.array([np.vdot(f, frame) for f in F])[: N // 2 + 1]


def test_insert_positions_from_the_shape_fold(probe):
    x = np.random.default_rng(0).standard_normal((2, 6, 5, 3))
    _, backend, _ = probe(dilate, x, 2)
    ops = _ops(backend)
    assert not {"arange", "repeat", "insert_index"} & set(ops), ops
    # the folded calls are recorded for the cost model
    assert {n.target.name for n in backend.graphs[-1].folded} >= {"arange", "repeat", "insert_index"}


@pytest.mark.parametrize("backend", ["cpp", "eager"])
def test_folded_graphs_match_numpy_on_each_shape(backend):
    compiled = kiln.compile(dilate, backend=backend)
    rng = np.random.default_rng(1)
    for shape in [(2, 6, 5, 3), (1, 4, 7, 2), (2, 6, 5, 3)]:
        x = rng.standard_normal(shape)
        for d in (1, 2):
            assert_same(compiled(x.copy(), d), dilate(x, d))
    compiled = kiln.compile(dft, backend=backend)
    for n in (16, 33, 16):
        frame = rng.standard_normal(n)
        got, want = compiled(frame), dft(frame)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_a_matrix_read_by_extern_calls_folds_and_still_compiles():
    # the exp of the 64x64 matrix is the work: folded, and the cost model counts it on the
    # Python side, so the function compiles instead of running as Python
    frame = np.random.default_rng(2).standard_normal(64)
    report = kiln.explain(dft)(frame)
    text = str(report)
    assert report.graph_count == 1 and "Not compiled" not in text, text
    assert "ops.exp(" not in text and "ops.arange(" not in text, text


def test_elementwise_constants_read_by_kernels_stay_in_the_graph(probe):
    def border(x):
        a = np.ones(x.shape)
        a[0, :] = 0.0
        a[:, -1] = 0.0
        return a * x
    _, backend, _ = probe(border, np.arange(12.0).reshape(3, 4))
    assert _ops(backend) == ["ones", "index_put", "index_put", "multiply"]


def test_values_returned_or_written_are_not_folded():
    def returned(x):
        m = np.linalg.inv(np.eye(3) * 2.0)
        return m.T, x @ m            # m reaches the output through a view

    def written(x):
        idx = np.argsort(np.arange(5.0)[::-1])
        idx[0] = x.shape[0] - 1      # a write into the computed index array
        return x[idx]

    for fn, x in ((returned, np.ones(3)), (written, np.arange(5.0))):
        compiled = kiln.compile(fn)
        first = compiled(x)
        want = fn(x)
        assert_same(first, want)
        if isinstance(first, tuple):
            first[0][...] = -1.0     # the caller's array is its own
        again = compiled(x)
        assert_same(again, want)


def test_calls_that_raise_warn_or_draw_stay_and_run_each_call():
    def singular(x):
        return x @ np.linalg.inv(np.zeros((2, 2)))

    compiled = kiln.compile(singular)
    for _ in range(2):
        with pytest.raises(np.linalg.LinAlgError) as err:
            compiled(np.ones(2))
        with pytest.raises(np.linalg.LinAlgError) as want:
            singular(np.ones(2))
        assert str(err.value) == str(want.value)

    def draws(x):
        return x + np.sort(np.random.random(4))

    compiled = kiln.compile(draws)
    np.random.seed(3)
    want = [draws(np.zeros(4)) for _ in range(2)]
    np.random.seed(3)
    got = [compiled(np.zeros(4)) for _ in range(2)]
    assert_same(got, want)
    assert not np.array_equal(got[0], got[1])

    def warns(x):
        return x @ np.log(np.arange(3.0) - 1.0).reshape(3, 1)

    compiled = kiln.compile(warns)
    with np.errstate(invalid="raise", divide="raise"):
        with pytest.raises(FloatingPointError):
            warns(np.ones(3))
        with pytest.raises(FloatingPointError):
            compiled(np.ones(3))


def test_large_values_are_computed_at_run_time(probe):
    from kiln.ir.fold import FOLD_MAX_BYTES

    def big(x):
        n = x.shape[0]
        m = np.linalg.inv(np.eye(n) * 2.0)
        return x @ m

    n = int((FOLD_MAX_BYTES // 8) ** 0.5) + 1    # n x n float64 just over the limit
    _, backend, _ = probe(big, np.ones(n), calls=1)
    assert "inv" in _ops(backend)
    _, backend, _ = probe(big, np.ones(8), calls=1)
    assert "inv" not in _ops(backend)


def _written_then_gathered(x):
    pos = np.repeat(np.arange(1, x.shape[0]), 2)   # positions placed by an extern: folded
    x += 1.0                                       # the argument is written
    return np.insert(x, pos, 0.0)


def test_a_folded_graph_keeps_the_arguments_untouched(probe):
    _, backend, _ = probe(_written_then_gathered, np.arange(4.0))
    assert not {"arange", "repeat", "insert_index"} & set(_ops(backend)), _ops(backend)
    for be in ("cpp", "aot_eager"):
        x = np.arange(4.0)
        a, b = copy.deepcopy(x), copy.deepcopy(x)
        compiled = kiln.compile(_written_then_gathered, backend=be)
        assert_same(compiled(a), _written_then_gathered(b))
        assert_same(a, b)
