"""Sizes that are expressions of dynamic sizes (``n - 1``, ``n + m``, ``n*m``): one compile
serves every shape (kiln/capture/dims.py, kiln/ir/sizes.py), with NumPy's values, shapes,
clamping (``x[5:]`` of 3 elements is empty) and errors."""
import numpy as np
import pytest

import kiln

from .test_int_sizes import Counting


def _same(got, want):
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert type(g) is type(w) and np.shape(g) == np.shape(w)
        if isinstance(w, np.ndarray):
            assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def _run(f, calls, backend):
    compiled = kiln.compile(f, backend=backend, dynamic=True)
    for args in calls:
        _same(compiled(*args), f(*args))
    return compiled


rng = np.random.default_rng(7)


def finite_difference(x):
    return (x[1:] - x[:-1]) / 0.1


def moving_average(x):
    return (x[2:] + x[1:-1] + x[:-2]) / 3.0


def cumsum_moving_average(x):
    c = np.cumsum(x)
    return (c[4:] - c[:-4]) / 4.0


def laplacian(u):
    p = np.pad(u, 1, mode="edge")
    return p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4.0 * u


def pad_stencil(x):
    p = np.pad(x, 2)
    return p[4:] - 2.0 * p[2:-2] + p[:-4]


def joined(x, y):
    z = np.concatenate([np.sin(x), y * 2.0])
    return z.sum(), z - z.mean()


def flattened(x):
    return np.tanh(x).reshape(-1) * 2.0 + x.sum()


def strided(x):
    # constant steps on a dynamic dim: counts no polynomial says (Python's, per call)
    return x[::2] * 3.0, np.sin(x[::-3]).sum()


def rolled(x):
    # shifts shorter than the axis cut from the ends: the same slices for every such size
    return np.roll(x, 1) + np.roll(x, -2, axis=0) * 2.0


def second_difference(x):
    return np.diff(x, n=2, axis=0).sum(axis=1)


@pytest.mark.parametrize("f, shapes", [
    (finite_difference, [(n,) for n in (3, 4, 9, 40, 101, 1000)]),
    (moving_average, [(n,) for n in (4, 5, 17, 300)]),
    (cumsum_moving_average, [(n,) for n in (6, 7, 50, 300)]),
    (pad_stencil, [(n,) for n in (2, 3, 11, 64)]),
    (laplacian, [(n, m) for n, m in ((3, 4), (9, 9), (20, 7), (64, 33))]),
    (flattened, [(n, m) for n, m in ((2, 3), (9, 9), (20, 7), (64, 33))]),
    (second_difference, [(n, 3) for n in (4, 5, 30, 77)]),
    (strided, [(n,) for n in (6, 7, 20, 21, 101)]),
    (rolled, [(n,) for n in (5, 6, 9, 40)]),
])
def test_one_compile_serves_every_shape(monkeypatch, f, shapes):
    be = Counting(monkeypatch)
    _run(f, [(rng.standard_normal(s),) for s in shapes], be)
    assert be.graphs == 1 and be.lowerings == 1


def test_two_dynamic_arrays_concatenated_compile_once(monkeypatch):
    be = Counting(monkeypatch)
    _run(joined, [(rng.standard_normal(n), rng.standard_normal(m))
                  for n, m in ((5, 7), (8, 8), (30, 2), (2, 300))], be)
    assert be.graphs == 1 and be.lowerings == 1


def test_rows_stacked_under_one_dynamic_width(monkeypatch):
    # vstack needs the widths equal: one symbol for both, the entry guards it
    be = Counting(monkeypatch)
    f = _run(lambda x, y: np.vstack([x, y]) * 2.0,
             [(rng.standard_normal((n, w)), rng.standard_normal((m, w)))
              for n, m, w in ((5, 7, 4), (8, 9, 4), (20, 3, 6))], be)
    assert be.graphs == 1
    with pytest.raises(ValueError):
        f(rng.standard_normal((5, 4)), rng.standard_normal((6, 5)))


def test_constant_slices_clamp_like_numpy(monkeypatch):
    # Entries are keyed by which lengths are 0, 1 or more (0 and 1 decide broadcasting),
    # never by the length: x[5:] is empty for 2..5 and one element at 6, x[:-8] empty
    # up to 8. Entries: 9 and more; 7..8; 2..5; 6.
    def tail(x):
        return np.sin(x[5:]) * 2.0, x[-3:].sum(), x[:-8].shape[0]
    be = Counting(monkeypatch)
    _run(tail, [(rng.standard_normal(n),) for n in (20, 7, 33, 3, 2, 5, 6, 1000, 8, 4)], be)
    assert be.graphs == 4
    before = be.graphs
    _run(tail, [(rng.standard_normal(n),) for n in (40, 12)], be)
    assert be.graphs == before + 1   # a fresh compiled function: one entry for both


def test_expression_sizes_read_by_python(monkeypatch):
    # len() of a sliced array is that size at run time, not the example's; so is .size
    # (the product of the dims) and .nbytes
    def mean_step(x):
        d = x[1:] - x[:-1]
        return d.sum() / len(d), d.shape[0] + x[3:].shape[0], x.sum() / x.size, \
            np.outer(d, x).size - x.nbytes
    be = Counting(monkeypatch)
    _run(mean_step, [(rng.standard_normal(n),) for n in (10, 30, 7, 500)], be)
    assert be.graphs == 1


def test_masked_and_weighted_means_compile_once(monkeypatch):
    # x[m].mean(), np.mean(x, where=m) and np.average(x, weights=w) divide at run time: a
    # mask or weights of x's shape pinned the length (a build per size)
    def masked(x, m):
        return x[m].mean(), x[m].sum(), np.mean(x, where=m), np.sum(x * 2.0, where=m), \
            np.average(x, weights=m + 0.5)
    be = Counting(monkeypatch)
    calls = [(rng.standard_normal(n), rng.random(n) < 0.5) for n in (5, 6, 9, 40)]
    f = _run(masked, calls, be)
    assert be.graphs == 1
    with pytest.raises(IndexError):
        f(np.ones(6), np.ones(7, bool))


def test_expression_size_meeting_another_size_raises_like_numpy(monkeypatch):
    be = Counting(monkeypatch)
    f = _run(lambda x, y: x[1:] * y, [(rng.standard_normal(n), rng.standard_normal(n - 1))
                                      for n in (20, 30)], be)
    with pytest.raises(ValueError):
        f(rng.standard_normal(20), rng.standard_normal(20))
    x, y = rng.standard_normal(9), rng.standard_normal(1)   # y broadcasts
    _same(f(x, y), x[1:] * y)


def test_default_mode_compiles_twice_for_many_shapes(monkeypatch):
    # without dynamic=True the second shape makes the dim dynamic; no more compiles after
    be = Counting(monkeypatch)
    f = kiln.compile(finite_difference, backend=be)
    for n in (10, 20, 30, 45, 99):
        x = rng.standard_normal(n)
        _same(f(x), finite_difference(x))
    assert be.graphs == 2


def test_pad_modes_that_read_sizes_stay_correct(monkeypatch):
    # 'wrap' and 'reflect' take slices at the example's sizes: specialized, never wrong
    be = Counting(monkeypatch)
    _run(lambda x: np.pad(x, 2, mode="reflect") + 1.0,
         [(rng.standard_normal(n),) for n in (5, 9, 5, 14)], be)
    _run(lambda x: np.pad(x, (1, 3), mode="wrap") * 2.0,
         [(rng.standard_normal((n, 4)),) for n in (5, 9, 14)], be)


@pytest.mark.parametrize("f", [lambda z: np.delete(z, 0), lambda z: np.insert(z, -1, [5.0, 6.0]),
                               lambda z: np.array_split(z, 3)[1], lambda z: np.polyval(z, 0.5),
                               lambda z: np.roll(z, -2, axis=0)])
def test_composites_made_at_an_example_of_two_stay_specialized(f):
    # Made dynamic at an example of 2 elements, np.delete(z, 0) slices [1:2]: one element
    # for every larger size probed, so nothing followed the size and nothing pinned it;
    # the next call of 4 elements got one (scipy.signal.zpk2sos under kiln: a wrong filter).
    # np.roll(z, -2) of 2 elements is a whole turn: a copy that read no size, served to 4.
    compiled = kiln.compile(f, backend="eager")
    for n in (4, 2, 4, 2):
        x = rng.standard_normal(n)
        _same(compiled(x), f(x))


@pytest.mark.parametrize("mode, kw", [("constant", {}), ("constant", {"constant_values": (1.5, -2)}),
                                      ("edge", {})])
@pytest.mark.parametrize("x", [np.arange(5.0), np.arange(24, dtype=np.float32).reshape(4, 6),
                               np.arange(12).reshape(3, 4) % 5, np.arange(6).reshape(2, 3) % 2 == 0,
                               np.zeros((0, 3)), np.arange(4, dtype=np.uint8) * 60])
def test_pad_as_a_repeated_edge_matches_numpy(mode, kw, x):
    # np.pad's constant/edge blocks are an edge slice repeated (Composite.relative_sizes):
    # dtypes, casts of the fill value, an empty axis (NumPy's ValueError for 'edge')
    for width in (1, (2, 0), ((0, 1),) * x.ndim):
        def f(a):
            return np.pad(a, width, mode=mode, **kw)
        try:
            want = f(x)
        except ValueError:
            with pytest.raises(ValueError):
                kiln.compile(f, dynamic=True)(x)
            continue
        got = kiln.compile(f, dynamic=True)(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def _lu_diagonal(table):
    rows, columns = np.shape(table)         # TheAlgorithms' lu_decomposition opens this way
    if rows != columns:
        raise ValueError(f"not square: {rows}x{columns}")
    out = np.zeros((rows, columns))
    for i in range(columns):                # unrolled: its trip count pins the size
        out[i, i] = table[i, i] * 2.0
    return out


def _shape_sized(x):
    n, m = np.shape(x)
    return np.sin(x[1:]) * n + m


def test_np_shape_reads_sizes_as_the_shape_attribute_does(monkeypatch):
    """``np.shape(x)`` once gave the example's numbers with no guard: after two shapes made
    the dims dynamic, a 4x4 input ran the 2x2 entry's unrolled loop (half its diagonal
    zero) and a 2x3 one skipped the ``rows != columns`` check, both silently. It reads
    ``x.shape`` now (symbolic sizes, guarded where a number decides), and a Python int
    any other spelling returns from its inputs pins their sizes."""
    f = kiln.compile(_lu_diagonal)
    for shape in ((3, 3), (2, 2), (4, 4), (5, 5), (2, 3)):
        t = rng.random(shape)
        try:
            want = _lu_diagonal(t)
        except ValueError as e:
            with pytest.raises(ValueError, match=str(e)):
                f(t)
            continue
        _same(f(t), want)
    backend = Counting(monkeypatch)
    _run(_shape_sized, [(rng.random((3, 4)),), (rng.random((5, 2)),), (rng.random((6, 7)),)], backend)
    assert backend.graphs == 1


def _made_to_size(x, w):
    n = len(x)
    return (np.zeros(n) + x, np.ones(w.shape) * w, np.empty((n, 3)).shape, np.full(n, n),
            np.full((x.shape[0], 2), 2.5), x * np.arange(n), np.arange(len(x), dtype=np.float32),
            np.linspace(-1.0, 1 / 3, n), np.linspace(0, 7, n, endpoint=False, dtype=np.int32),
            np.eye(n, k=1) @ x, np.identity(w.shape[1], dtype=np.int64), np.eye(n, n),
            np.zeros((w.shape[1], n)).T + np.eye(n, w.shape[1], -1))


def test_creation_sizes_from_dynamic_dims_compile_once(monkeypatch):
    """np.zeros(len(x)), np.ones(w.shape), np.arange(n), np.linspace(a, b, n), np.eye(n)
    with n a dynamic dim: the size was a static param, pinned (a build per size); it is
    the input's dim in the graph now (ir.SizeRef), NumPy's values bit for bit."""
    calls = [(rng.standard_normal(n), rng.standard_normal((m, k)))
             for n, m, k in ((5, 3, 4), (6, 4, 8), (7, 2, 3), (9, 5, 2))]
    for dynamic, graphs in ((True, 1), (None, 2)):
        be = Counting(monkeypatch)
        f = kiln.compile(_made_to_size, backend=be, dynamic=dynamic)
        for args in calls:
            for got, want in zip(f(*args), _made_to_size(*args)):
                assert type(got) is type(want) and np.shape(got) == np.shape(want)
                assert np.asarray(got).dtype == np.asarray(want).dtype
                np.testing.assert_array_equal(got, want, strict=True)
        assert be.graphs == graphs
