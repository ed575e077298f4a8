"""Reductions through the cpp backend vs NumPy: every reduction op, axes, keepdims,
dtypes, NaN, empty inputs, float32 accuracy against NumPy's pairwise sums."""
import numpy as np
import pytest

import kiln

from kiln.ir import Graph, trace
from kiln.ops import REGISTRY, F, TensorMeta
from kiln.lowering.cpp_stages import ROW_WRITE_CHUNK
from kiln.runtime import cpp_backend

from .helpers import assert_same, run_both

REDUCTIONS = ["sum", "prod", "mean", "var", "std", "max", "min", "any", "all"]


def all_reductions_graph(x: np.ndarray, axis, keepdims: bool) -> tuple[Graph, list[str]]:
    g = Graph("reductions")
    px = g.placeholder("x", TensorMeta(x.shape, x.dtype))
    outs, names = [], []
    for name in REDUCTIONS:
        op = REGISTRY[name]
        if x.dtype == bool and name in ("var", "std"):
            continue  # NumPy refuses
        params = {"axis": axis, "keepdims": keepdims}
        out = op(np.zeros(x.shape, x.dtype), **params)
        outs.append(g.call(op, (px,), params, val=TensorMeta(np.shape(out), np.asarray(out).dtype)))
        names.append(name)
    g.output(tuple(outs))
    return g, names


def data(dtype, shape, special=True):
    rng = np.random.default_rng(4)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) > 0.3
    if dt.kind in "iu":
        return rng.integers(-4 if dt.kind == "i" else 0, 5, size=shape).astype(dt)
    return (rng.standard_normal(shape) + 0.5).astype(dt)


CASES = [
    (np.float32, (6, 33), None, False), (np.float32, (6, 33), 1, True), (np.float32, (6, 33), 0, False),
    (np.float64, (4, 5, 7), (0, 2), False), (np.float64, (4, 5, 7), 2, True),
    (np.int32, (5, 9), 1, False), (np.uint8, (5, 9), None, False), (np.bool_, (5, 9), 0, False),
    (np.float32, (1, 1), None, True), (np.float32, (7, 1), 1, False),
]


@pytest.mark.parametrize("dtype,shape,axis,keepdims", CASES)
def test_reductions(dtype, shape, axis, keepdims):
    x = data(dtype, shape)
    g, names = all_reductions_graph(x, axis, keepdims)
    expected, got, fn = run_both(g, [x])
    for name, e, r in zip(names, expected, got):
        rtol = {np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-12}.get(np.asarray(e).dtype, 0.0)
        assert_same(f"{name}(axis={axis}, keepdims={keepdims})", e, r, rtol=rtol, atol=rtol)
    # every reduction over the same loops shares one kernel
    assert len(fn.kiln_artifact.kernel_names) == 1


def test_nan_and_inf_propagate():
    x = np.array([[1.0, np.nan, 3.0], [np.inf, 2.0, -np.inf], [-1.0, -2.0, -3.0]], np.float32)
    g, names = all_reductions_graph(x, 1, False)
    expected, got, _ = run_both(g, [x])
    for name, e, r in zip(names, expected, got):
        assert_same(name, e, r, rtol=1e-6)


def test_empty_reductions():
    x = np.zeros((0, 4), np.float32)
    g = trace(lambda x: (F.sum(x, axis=0), F.prod(x, axis=0), F.mean(x, axis=1), F.sum(x), F.max(x, axis=1)),
              [TensorMeta(x.shape, x.dtype)], ["x"])
    expected, got, _ = run_both(g, [x])
    for i, (e, r) in enumerate(zip(expected, got)):
        assert_same(f"out{i}", e, r)


def test_max_of_empty_axis_raises_like_numpy():
    x = np.zeros((0, 4), np.float32)
    g = Graph()
    px = g.placeholder("x", TensorMeta(x.shape, x.dtype))
    g.output((g.call(F.max, (px,), {"axis": 0}, val=TensorMeta((4,), x.dtype)),))
    fn = cpp_backend(g, [x])
    with pytest.raises(ValueError, match="zero-size array"):
        fn(x)


def test_float32_sum_accuracy_vs_pairwise():
    # A long float32 sum: a float32 running sum would be off by ~1e-3 relative here.
    x = (np.random.default_rng(5).random(1_000_003) + 1e4).astype(np.float32)
    g = trace(lambda x: (F.sum(x), F.mean(x), F.var(x)), [TensorMeta(x.shape, x.dtype)], ["x"])
    expected, got, _ = run_both(g, [x])
    exact = x.astype(np.float64)
    assert abs(float(got[0]) - exact.sum()) <= abs(float(expected[0]) - exact.sum()) + exact.sum() * 1e-7
    assert float(got[1]) == pytest.approx(exact.mean(), rel=1e-7)
    assert float(got[2]) == pytest.approx(exact.var(), rel=1e-5)


def test_sum_to_and_strided_reduction():
    x = np.random.default_rng(6).standard_normal((3, 8, 5))[:, ::2, :]
    g = trace(lambda x: (F.sum_to(x, shape=(4, 1)), F.sum(F.transpose(x, axes=(2, 1, 0)), axis=2)),
              [TensorMeta(x.shape, x.dtype)], ["x"])
    expected, got, _ = run_both(g, [x])
    for i, (e, r) in enumerate(zip(expected, got)):
        assert_same(f"out{i}", e, r, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cols", [3, 10, 12, 13, 40])
def test_short_rows_are_unrolled_long_rows_vectorized(cols):
    # Softmax over a few classes: rows of at most 12 elements run as unrolled straight-line
    # code, longer rows as SIMD loops; NaN rows and ties give NumPy's values either way.
    x = np.random.default_rng(cols).standard_normal((37, cols)).astype(np.float32)
    x[3, :] = np.nan
    x[5, :2] = 7.0

    def softmax(x):
        e = F.exp(F.subtract(x, F.max(x, axis=(1,), keepdims=True)))
        return (F.true_divide(e, F.sum(e, axis=(1,), keepdims=True)), F.argmax(x, axis=1))
    g = trace(softmax, [TensorMeta(x.shape, x.dtype)], ["x"])
    expected, got, fn = run_both(g, [x])
    for i, (e, r) in enumerate(zip(expected, got)):
        assert_same(f"out{i}", e, r, rtol=4e-6)
    cpp = fn.kiln_artifact.cpp
    assert ("#pragma GCC unroll" in cpp) == (cols <= 12), cpp


@pytest.mark.parametrize("shape,axis", [((256, 512), (0,)), ((300, 7), (0,)), ((4, 64, 33), (0, 1)),
                                        ((5, 128, 16), (1,))])
def test_leading_axis_float32_sums_are_bit_identical_to_numpy(shape, axis):
    # NumPy adds the rows of a leading-axis reduction one by one in float32; kiln's blocked
    # loop does the same, so sums and products agree exactly, not just within a tolerance
    # (mean, var and std keep a float64 total: closer to the truth than NumPy's).
    x = (np.random.default_rng(3).standard_normal(shape) * 100).astype(np.float32)
    g = trace(lambda x: (F.sum(x, axis=axis), F.prod(F.true_divide(x, 100.0), axis=axis),
                         F.mean(x, axis=axis)),
              [TensorMeta(x.shape, x.dtype)], ["x"])
    expected, got, fn = run_both(g, [x])
    assert_same("sum", expected[0], got[0], rtol=0.0)
    assert_same("prod", expected[1], got[1], rtol=0.0)
    assert_same("mean", expected[2], got[2], rtol=1e-5, atol=1e-5)


def _arg_graph(x: np.ndarray, axis, keepdims: bool, source) -> Graph:
    g = Graph("argreductions")
    px = g.placeholder("x", TensorMeta(x.shape, x.dtype))
    outs = []
    for name in ("argmax", "argmin"):
        src = source(px)
        params = {"axis": axis, "keepdims": keepdims}
        out = REGISTRY[name](np.zeros(x.shape, src.val.dtype), **params)
        outs.append(g.call(REGISTRY[name], (src,), params, val=TensorMeta(np.shape(out), np.asarray(out).dtype)))
    g.output(tuple(outs))
    return g


def _computed(px):
    # a computed source (so the C++ backend runs a kernel, not NumPy's argmax); the
    # reference runs the same graph, so int8 wrapping in x + x is compared too
    op = REGISTRY["logical_not"] if px.val.dtype == bool else REGISTRY["add"]
    args = (px,) if px.val.dtype == bool else (px, px)
    return px.graph.call(op, args, {}, val=TensorMeta(px.val.shape, px.val.dtype))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "uint16", "int64", "bool"])
@pytest.mark.parametrize("shape,axis,keepdims", [((37,), None, False), ((6, 50), 1, False),
                                                 ((6, 50), 0, True), ((300, 9), 0, False),
                                                 ((3, 40, 5), 1, False), ((3, 40, 5), -1, True),
                                                 ((4, 7), None, True)])
def test_argmax_argmin_of_computed_values_are_kernels(dtype, shape, axis, keepdims):
    x = data(dtype, shape)
    if np.dtype(dtype).kind == "f":  # ties, infinities and NaN: the first extreme / first NaN wins
        x.flat[::7] = x.flat[3]
        x.flat[5] = np.inf
        x.flat[-4] = -np.inf
        if shape[0] > 5:
            x[2] = np.nan
            x.flat[-2] = np.nan
    g = _arg_graph(x, axis, keepdims, _computed)
    expected, got, fn = run_both(g, [x])
    for name, e, r in zip(("argmax", "argmin"), expected, got):
        assert_same(name, e, r)
    assert "argmax" in fn.kiln_artifact.cpp and "argmin" in fn.kiln_artifact.cpp


def test_argmax_of_f_ordered_and_all_nan_rows():
    x = np.asfortranarray(data("float64", (40, 30)))
    x[3, :] = np.nan
    x[:, 4] = -np.inf
    for axis in (None, 0, 1):
        g = _arg_graph(x, axis, False, _computed)
        expected, got, _ = run_both(g, [x])
        for name, e, r in zip(("argmax", "argmin"), expected, got):
            assert_same(f"{name}(axis={axis})", e, r)


@pytest.mark.parametrize("axis,kernel", [(1, False), (None, False), (0, True)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_argmax_of_an_array_as_it_is(axis, kernel, order):
    # along its own contiguous rows NumPy's SIMD argmax beats a kernel's in-order loop;
    # across strided runs a kernel (points in SIMD lanes) beats NumPy's copy
    x = data("float32", (64, 33))
    x[5, :] = np.nan
    x = np.asarray(x, order=order)
    g = _arg_graph(x, axis, False, lambda px: px)
    expected, got, fn = run_both(g, [x])
    for name, e, r in zip(("argmax", "argmin"), expected, got):
        assert_same(name, e, r)
    if order == "F":   # the contiguous runs are the columns; the whole array is not C order
        kernel = axis != 0
    assert ("argmax" in fn.kiln_artifact.cpp) == kernel


@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "bool"])
def test_argmax_argmin_along_a_run_keep_independent_lanes(dtype):
    """argmax/argmin of a computed run of 2 * EXTREMA_LANES+ elements (whole or rows) keep
    EXTREMA_LANES independent (value, position) lanes, combined by value then smallest
    position (np.abs(Z - z).argmin() of 2e5 float64: one chain of selects, 164 us -> 43
    us): NumPy's first extreme where a later lane holds the earlier tie, -0.0 against 0.0,
    the first NaN (in a lane or in the remainder), all equal."""
    import re

    from kiln.lowering.cpp_loops import EXTREMA_LANES
    k = EXTREMA_LANES
    n = 3 * k + 5     # (a remainder after the rows' and the whole run's blocks)
    g = Graph("arg_lanes")
    px = g.placeholder("x", TensorMeta((2, n), np.dtype(dtype)))
    outs = []
    for axis in (None, 1):
        for name in ("argmax", "argmin"):
            val = TensorMeta(() if axis is None else (2,), np.dtype(np.intp))
            outs.append(g.call(REGISTRY[name], (_computed(px),), {"axis": axis, "keepdims": False}, val=val))
    g.output(tuple(outs))
    base = data(dtype, (2, n))
    cases = [base]
    for lo, hi in ((k + 8, 9), (2 * k + 6, k + 7)):   # the tie's earlier position in a later lane
        x = np.zeros_like(base) if dtype != "bool" else np.ones_like(base)
        x.flat[[lo, hi, n + lo, n + hi]] = 1 if dtype != "bool" else 0
        cases += [x, x if dtype == "bool" else -x]
    if dtype.startswith("float"):
        x = np.ones_like(base)
        x.flat[[37, 90, n + 90]] = -0.0
        x.flat[[40, 9, n + 91]] = 0.0
        cases.append(x)
        for places in ((70, 39, n + 70, n + 39), (n - 2, n + n - 1), (5, n + k)):
            x = base.copy()
            x.flat[list(places)] = np.nan
            cases.append(x)
        cases.append(np.full_like(base, np.inf))
    fn = cpp_backend(g, [base])
    for i, x in enumerate(cases):
        for j, (e, r) in enumerate(zip(g(x), fn(x))):
            assert_same(f"case {i} out {j}", e, r)
    lanes = re.findall(r"at\d+_l\[\w+_j\] = take", fn.kiln_artifact.cpp)
    assert len(lanes) == 4, fn.kiln_artifact.cpp


def test_argmax_over_an_empty_axis_raises_numpys_error():
    x = np.zeros((0, 3))
    g = Graph("empty_argmax")
    px = g.placeholder("x", TensorMeta(x.shape, x.dtype))
    g.output((g.call(REGISTRY["argmax"], (_computed(px),), {"axis": 0, "keepdims": False},
                     val=TensorMeta((3,), np.dtype(np.intp))),))
    with pytest.raises(ValueError) as numpy_error:
        g(x)
    fn = cpp_backend(g, [x])
    with pytest.raises(ValueError) as kiln_error:
        fn(x)
    assert str(kiln_error.value) == str(numpy_error.value)


def test_blocked_column_reduction_on_threads_in_wide_chunks():
    # 300 columns reduced over 4000 rows: threads take chunks of at least 64 columns;
    # every column is computed once and exactly as NumPy does
    x = np.random.default_rng(9).standard_normal((4000, 300))
    g = trace(lambda v: (F.max(F.absolute(v), axis=0),), [TensorMeta(x.shape, x.dtype)], ["x"])
    fn = cpp_backend(g, [x])
    expected, got, fn = run_both(g, [x], fn)
    np.testing.assert_array_equal(got[0], expected[0])
    assert "chunks of at least 64 points" in fn.kiln_artifact.cpp
    assert "if (nthreads > 1 && 300 >= 2 &&" in fn.kiln_artifact.cpp


_STORES_ROWS = {
    "scale_by_column_max": lambda v: (F.true_divide(v, F.max(F.absolute(v), axis=0, keepdims=True)),),
    "cumsum_down_columns": lambda v: (F.cumsum(F.multiply(v, 2.0), axis=0),),
}


@pytest.mark.parametrize("shape", [(4000, 300), (200, 6000)])
@pytest.mark.parametrize("fn", sorted(_STORES_ROWS))
def test_column_split_of_a_kernel_storing_whole_rows_needs_wide_chunks(fn, shape):
    # x / max(|x|, axis=0), a cumsum down columns: a column chunk stores part of every row,
    # so two threads share a cache line of the output per row at each chunk edge; such
    # kernels split only into chunks of ROW_WRITE_CHUNK columns (300 columns run on one
    # thread, 6000 in two chunks)
    x = np.random.default_rng(9).standard_normal(shape)
    g = trace(_STORES_ROWS[fn], [TensorMeta(x.shape, x.dtype)], ["x"])
    fn = cpp_backend(g, [x])
    expected, got, fn = run_both(g, [x], fn)
    np.testing.assert_array_equal(got[0], expected[0])
    cpp = fn.kiln_artifact.cpp
    assert f"chunks of at least {ROW_WRITE_CHUNK} points" in cpp
    assert f"if (nthreads > 1 && {shape[1]} >= {2 * ROW_WRITE_CHUNK} &&" in cpp


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_signed_overflow_wraps_as_in_numpy(dtype):
    # A signed overflow is undefined in C++ and GCC optimizes on it (max(-x) became
    # -min(x), (x + 1) > x became true); kernels build with -fwrapv, so they wrap as NumPy.
    import kiln
    info = np.iinfo(dtype)
    x = np.array([info.min, -1, 0, 5, info.max], dtype=dtype)

    def f(x):
        return np.negative(x).max(), np.abs(x).min(), ((x + 1) > x).all(), (x * 2).max(), \
            (x - 1 < x).sum()

    with np.errstate(over="ignore"):
        want = f(x)
    got = kiln.compile(f)(x)
    assert [type(g) for g in got] == [type(w) for w in want]
    assert [g.item() for g in got] == [w.item() for w in want]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int8])
@pytest.mark.parametrize("n", [20, 63, 64, 65, 1000, 4099])
def test_max_min_along_a_run_keep_independent_lanes(dtype, n):
    """x.max() and x.min() of at least 2 * EXTREMA_LANES elements, and row extrema along
    rows of at least EXTREMA_LANES_ROW, accumulate into EXTREMA_LANES independent lanes (one vector accumulator made each
    vmaxpd wait for the one before: x.max() of 1e5 float64 in cache 0.52x NumPy's speed,
    float32 0.46x, int64 0.40x; now ~0.86x, 0.77x, 1.0x). NaN in a lane, in the
    remainder, or nowhere gives NumPy's values; short runs keep the plain loop."""
    import re

    from kiln.lowering.cpp_loops import EXTREMA_LANES, EXTREMA_LANES_ROW

    def extrema(x):
        return F.max(x), F.min(x), F.max(x, axis=(1,)), F.min(F.absolute(x), axis=(1,))
    base = data(dtype, (3, n))
    places = [None, 5, n - 1, n - 1 - n % EXTREMA_LANES] if np.dtype(dtype).kind == "f" else [None]
    for place in places:
        x = base.copy()
        if place is not None:
            x[1, place] = np.nan
        g = trace(extrema, [TensorMeta(x.shape, x.dtype)], ["x"])
        expected, got, fn = run_both(g, [x])
        for i, (e, r) in enumerate(zip(expected, got)):
            assert_same(f"out{i} nan at {place}", e, r, rtol=0.0, atol=0.0)
    cpp = fn.kiln_artifact.cpp
    lanes = re.findall(r"acc\d+_l\[\w+_j\] = acc", cpp)   # (per reduction, in the block loop)
    # (the whole-array extrema run over 3 * n elements, the rows' over n)
    assert len(lanes) == (2 if 3 * n >= 2 * EXTREMA_LANES else 0) + (2 if n >= EXTREMA_LANES_ROW else 0), cpp


def test_any_all_stop_at_the_block_that_decides_them():
    """any/all that compute nothing that may raise a flag stop after the block that decides
    them (cpp_loops.py ``decided_loop``: NumPy's reduction of a bool array stops at the
    first False with memchr; a 1e7 bool ``a.all()`` with an early False ran ~1 ms against
    NumPy's 2 us), on the calling thread and on threads (a long enough run), also with
    both in one stage and along an axis; an op that may raise a flag (log) scans it all,
    its warnings NumPy's."""
    def both(a):
        return F.all(a), F.any(a), F.all(a, axis=(1,))

    def logs(x):
        return F.all(F.log(x))

    for n in (5000, 1 << 20):   # (the second on threads where there are several)
        for where in (None, 0, n // 2 + 1, n - 1):
            a = np.ones((n // 1000, 1000) if n == 5000 else (n // 1024, 1024), bool)
            if where is not None:
                a.reshape(-1)[where] = False
            g = trace(both, [TensorMeta(a.shape, a.dtype)], ["a"])
            expected, got, fn = run_both(g, [a])
            for i, (e, r) in enumerate(zip(expected, got)):
                assert_same(f"out{i}", e, r)
            assert "break;" in fn.kiln_artifact.cpp
        # (5000 points never take threads: their code names no parallel region)
        assert ("_stop, 1, __ATOMIC_RELAXED" in fn.kiln_artifact.cpp) == (n == 1 << 20)
    x = np.ones(5000)
    x[10] = 0.0
    g = trace(logs, [TensorMeta(x.shape, x.dtype)], ["x"])
    expected, got, fn = run_both(g, [x])
    assert_same("out", expected, got)
    assert "break;" not in fn.kiln_artifact.cpp


def test_several_reduced_axes_add_in_numpys_order():
    # NumPy's iterator walks dims by stride and adds each run of the innermost reduced
    # dims pairwise into the result: x.sum((0, 2)) of a C-ordered x is
    # out[j] += pairwise(x[i, j, :]) for each i (reduce_order.py numpy_run); a transposed x walks
    # its reduced dims in memory order; non-coalescing reduced dims (a strided x) are
    # one buffered run. Bit for bit, float32 and float64, sums, means, variances.
    import kiln

    @kiln.compile
    def stats(x):
        return x.sum((0, 2)), x.mean((0, 2)), x.var((0, 2)), (x * x + 1).sum((1, 2))

    rng = np.random.default_rng(7)
    base = rng.standard_normal((30, 4, 11)) * 10
    for x in (base.astype(np.float32), np.ascontiguousarray(base.transpose(2, 1, 0)).T,
              base[::2, :, ::2]):
        got, want = stats(x), stats.__wrapped__(x)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and np.array_equal(g, w), (x.strides, g - w)


def test_reversed_short_rows_sum_the_right_elements():
    # GCC 12.2 (seemingly GCC bug 110381) vectorized the in-order sum of a loop
    # around an unrolled reversed row and read the wrong elements: 15184 for 8128
    # (cpp_prelude.h KILN_OPAQUE)
    import kiln

    @kiln.compile
    def sums(x):
        return x[..., ::-1].sum(), x[:, ::-1].T.sum(), x[..., ::-1].sum(1)

    x = np.arange(128.0).reshape(16, 8)   # (exact sums: any order gives the same bits)
    for got, want in zip(sums(x), sums.__wrapped__(x)):
        assert np.array_equal(got, want), (got, want)


def test_reversed_and_buffered_runs_add_in_numpys_order():
    # A reduction's iterator never flips a negative stride (NumPy passes it
    # NPY_ITER_DONT_NEGATE_STRIDES): x[..., ::-1].sum(1) adds each row from its last
    # element, in memory's reverse order. A run of dims that do not coalesce is buffered
    # in chunks of whole rows up to 8192 terms (x[..., :180:2].sum((1, 2)) of 3 x 100 x 200:
    # 8190, then 810); a row over 4096 terms is its own run (reduce_order.buffered_run).
    import kiln

    @kiln.compile
    def stats(x):
        return x.sum(), x.sum(1), x.mean((0, 2)), x.sum((1, 2)), x[::-1].sum(0), x.var((0, 1))

    rng = np.random.default_rng(3)
    base = (rng.standard_normal((3, 100, 200)) * 10).astype(np.float32)
    rows = base.reshape(3, 1, -1)[..., ::3]   # (runs of 6667 terms, each its own)
    for x in (np.flip(base[:, :20, :30]), base[:, :20, ::-2], base[..., :180:2], rows):
        got, want = stats(x), stats.__wrapped__(x)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and np.array_equal(g, w), (x.shape, x.strides, g - w)

    @kiln.compile
    def mixed(x, y):   # (loads that disagree: NumPy's temporary keeps C order)
        return (x + y.T).sum(0), (x * y.T).mean(0)

    x, y = base[0, :30, :40], base[1, :40, :30]
    for g, w in zip(mixed(x, y), mixed.__wrapped__(x, y)):
        assert np.array_equal(g, w), g - w


def products(x, m):
    """Products along every kind of axis: NumPy multiplies one element at a time."""
    return (np.prod(x), np.prod(m, axis=1), np.prod(m.T), np.prod(m[:, ::-3], axis=1),
            np.prod(m, dtype=np.float64), np.nanprod(m * 1.001, axis=1), np.prod(m, axis=0))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_products_multiply_in_numpys_order_bit_for_bit(dtype):
    # NumPy's multiply.reduce multiplies in order in the result's dtype: kiln multiplied
    # in SIMD lanes with a double accumulator (1000 float64 near 1: 1.8e-15 off, float32
    # ones 3.6e-7); the reduced loop now runs in order in the result's dtype
    rng = np.random.default_rng(5)
    x, m = (1 + rng.standard_normal(1000) * 0.01).astype(dtype), \
        (1 + rng.standard_normal((12, 40)) * 0.01).astype(dtype)
    got, want = kiln.compile(products)(x, m), products(x, m)
    for i, (a, w) in enumerate(zip(got, want, strict=True)):
        assert np.asarray(a).dtype == np.asarray(w).dtype and np.array_equal(a, w), i
