"""Run-time-length slices inside loop bodies (kiln/capture/loop_vectors.py,
kiln/lowering/loop_vectors.py): row loops over growing slices against plain NumPy —
values, dtypes, the final state of mutated arguments, NumPy's own errors — on the
reference backend and on C++ (inner loops of the generated loop)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import kiln
from kiln.ops.loops import stats as loop_stats

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.idioms import weighted_column_distance  # noqa: E402  (v ** 2, .sum())
from benchmarks.loop_kernels import cholesky_rows, lu_rows, tri_solve  # noqa: E402
from benchmarks.npbench import durbin  # noqa: E402  (np.flip of views)
from benchmarks.npbench_more import symm  # noqa: E402  (a whole 1-D array in a body)

BACKENDS = ["eager", "cpp"]


def back_rows(U, y):                  # x[i + 1:], a negative step, .dot
    n = y.shape[0]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (y[i] - U[i, i + 1:].dot(x[i + 1:])) / U[i, i]
    return x


def column_update(A):                 # a column slice A[k + 1:, k], a scalar store
    n = A.shape[0]
    for k in range(n - 1):
        A[k + 1:, k] = A[k + 1:, k] / A[k, k]
        A[k, k + 1:] = 0.0
    return A


def row_sums(A, out):                 # A[i] of a 2-D A, np.sum, abs, np.sqrt, max/min
    for i in range(A.shape[0]):
        out[i] = np.sum(abs(A[i]) * 2.0) + np.sqrt(A[i, :i + 1]).sum() \
            + np.maximum(A[i], 0.5).sum() - np.minimum(A[i], 0.25).sum()
    return out


def shift_left(x, n):                 # overlapping views of one array: NumPy's copy rule
    for i in range(1, n):
        x[1:i + 1] = x[:i] * 0.5 + 1.0
    return x


def clamped(x):                       # bounds past the axis and negative bounds clamp
    s = 0.0
    for i in range(x.shape[0]):
        s += float(x[-i - 1:].sum()) + float(x[i:i + 100].sum()) - float(x[:-i].sum()) \
            + float(x[i - 3:i].sum())
    return s


def mixed_f32(x, w):                  # float32 views with float64 scalars and views
    t = np.float32(0)
    for i in range(x.shape[0]):
        x[:i] *= np.float32(0.5)
        t += x[:i] @ w[:i]
        x[i:] += 1.0
    return x, t


def temp_then_store(A):               # a temporary read after a store into its array
    for i in range(A.shape[0]):
        t = A[i] * 2.0
        A[i] = 0.0
        A[i, 0] = t.sum()
    return A


def temp_into_inner(A):               # a temporary consumed inside an inner loop
    for i in range(A.shape[0]):
        t = A[i] * 2.0
        for j in range(A.shape[1]):
            A[i, j] = t.sum() + j
    return A


def powers(x, out):                   # the powers NumPy spells as square, reciprocal, sqrt
    for i in range(1, x.shape[0]):
        out[i, :i] = x[:i] ** 2 + x[i:] @ x[i:] ** -1 - np.square(x[:i]) * 0.5
        out[i, i:] = x[i:] ** 0.5 + np.reciprocal(x[i:] + 1.0)
        x[:i] **= 2
    return x, out


def jacobi_until(u, tol):             # a while loop over slices, .max() in its test, overlap
    err, steps = tol + 1.0, 0
    while err > tol:
        new = 0.5 * u[1:-1] + 0.25 * (u[:-2] + u[2:])
        err = float(np.abs(new - u[1:-1]).max())
        u[1:-1] = new
        steps += 1
    return steps


def extrema(x, out):                  # max/min as methods and functions, float32 too
    for i in range(x.shape[0]):
        out[i] = x[:i + 1].max() - x[i:].min() + np.max(x[i:] * 2.0) - np.amin(-x[:i + 1]) \
            + np.amax(x[i:]) + np.min(x[:i + 1])
    return out


def flip_self_update(y):              # np.flip of the view it updates: NumPy's temporary
    for k in range(1, y.shape[0]):
        y[:k] += 0.5 * np.flip(y[:k])
        y[k] = np.dot(np.flip(y[:k]), y[1:k + 1]) * 0.01
    return y


def whole_rows(A, w, out):            # a whole 1-D array is its full view (symm's temp2)
    for i in range(A.shape[0]):
        out[i, :] = A[i, :] * w + np.dot(w, w) * 0.5 - w.sum()
        w[i] = out[i, i] * 0.25              # written in the body, read whole after
    return out, w


def durbin_reversed(r):               # durbin with y[k - 1::-1] for np.flip(y[:k])
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(r[k - 1::-1], y[:k])) / beta
        y[:k] += alpha * y[k - 1::-1]
        y[k] = alpha
    return y


def reversed_bounds(x, out):           # step -1: defaults, negative and past-the-end bounds
    n = x.shape[0]
    for i in range(n):
        out[i, 0] = x[i + 100:-100:-1].sum() + x[-1:i:-1].sum() * 2.0 + x[:i:-1].sum() * 3.0 \
            + x[i::-1].sum() * 5.0 + x[i - n - 3:i - 2:-1].sum() * 7.0
        out[i, i:0:-1] = x[:i] * 0.5 + x[i:0:-1]
    return out


def flip_column(A, out):               # a column's flip (a stride), a flip of a flip
    for j in range(A.shape[1]):
        out[j, :] = np.flip(A[:, j]) * 2.0 + np.flip(np.flip(A[:, j]))
        out[j, :j] = np.flip(out[j, :j])
    return out


CASES = {
    "tri_solve": lambda rng: (tri_solve, (np.tril(rng.random((9, 9))) + 9 * np.eye(9), rng.random(9))),
    "lu_rows": lambda rng: (lu_rows, (rng.random((8, 8)) + 8 * np.eye(8),)),
    "cholesky_rows": lambda rng: (cholesky_rows, (_spd(rng, 7),)),
    "back_rows": lambda rng: (back_rows, (np.triu(rng.random((7, 7))) + 7 * np.eye(7), rng.random(7))),
    "column_update": lambda rng: (column_update, (rng.random((6, 6)) + 6 * np.eye(6),)),
    "row_sums": lambda rng: (row_sums, (rng.random((5, 6)), np.zeros(5))),
    "shift_left": lambda rng: (shift_left, (rng.random(9), 8)),
    "clamped": lambda rng: (clamped, (rng.random(6),)),
    "mixed_f32": lambda rng: (mixed_f32, (rng.random(7).astype(np.float32), rng.random(7))),
    "temp_then_store": lambda rng: (temp_then_store, (rng.random((4, 5)),)),
    "temp_into_inner": lambda rng: (temp_into_inner, (rng.random((4, 5)),)),
    "column_distance": lambda rng: (weighted_column_distance, (rng.random((5, 4)), rng.random((5, 3)),
                                                      rng.random((5, 4)) + 0.5)),
    "jacobi_until": lambda rng: (jacobi_until, (rng.random(30), 1e-3)),
    "extrema": lambda rng: (extrema, (rng.random(9), np.zeros(9))),
    "extrema_f32": lambda rng: (extrema, (rng.random(9).astype(np.float32), np.zeros(9, np.float32))),
    "powers": lambda rng: (powers, (rng.random(6) + 0.5, np.zeros((6, 6)))),
    "durbin": lambda rng: (durbin, (rng.random(15) * 0.1,)),
    "flip_self_update": lambda rng: (flip_self_update, (rng.random(9),)),
    "flip_self_update_f32": lambda rng: (flip_self_update, (rng.random(9).astype(np.float32),)),
    "symm": lambda rng: (symm, (1.5, 1.2, rng.random((6, 7)), rng.random((6, 6)), rng.random((6, 7)))),
    "whole_rows": lambda rng: (whole_rows, (rng.random((5, 7)), rng.random(7), np.zeros((5, 7)))),
    "whole_rows_f32": lambda rng: (whole_rows, (rng.random((5, 7)).astype(np.float32),
                                                rng.random(7).astype(np.float32),
                                                np.zeros((5, 7), np.float32))),
    "durbin_reversed": lambda rng: (durbin_reversed, (rng.random(15) * 0.1,)),
    "reversed_bounds": lambda rng: (reversed_bounds, (rng.random(7), np.zeros((7, 7)))),
    "reversed_bounds_f32": lambda rng: (reversed_bounds, (rng.random(7).astype(np.float32),
                                                          np.zeros((7, 7), np.float32))),
    "flip_column": lambda rng: (flip_column, (rng.random((6, 5)), np.zeros((5, 6)))),
    "powers_f32": lambda rng: (powers, ((rng.random(6) + 0.5).astype(np.float32),
                                        np.zeros((6, 6), np.float32))),
}
# Bodies the C++ printer leaves to the reference (a temporary read after a store into its
# array, or in an inner loop after such stores, would see them if inlined).
INTERPRETED = {"temp_then_store", "temp_into_inner"}


def _spd(rng, n):
    a = rng.random((n, n))
    return a @ a.T + n * np.eye(n)


def _copy(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _close(got, want):
    """Elementwise work is exact; dots and sums add in another order (rounding)."""
    assert type(got) is type(want), (type(got), type(want))
    if want is None:    # (a kernel that only writes its arguments: symm)
        return
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            _close(g, w)
    elif isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype == np.float32 else 1e-12)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6 if isinstance(want, np.float32) else 1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_slice_loops_match_numpy(case, backend):
    fn, args = CASES[case](np.random.default_rng(0))
    mine, theirs = _copy(args), _copy(args)
    compiled = kiln.compile(fn, backend=backend)
    before = dict(loop_stats)
    _close(compiled(*mine), fn(*theirs))
    for a, b in zip(mine, theirs):   # the final state of mutated arguments
        if isinstance(a, np.ndarray):
            _close(a, b)
    (record,) = compiled.records
    assert record.graph_break is None and "loop" in record.ops, record.loops
    if backend == "cpp":
        assert (loop_stats["native"] > before["native"]) != (case in INTERPRETED), case


def test_elementwise_row_updates_are_exact():
    # no reduction: the generated loop computes what NumPy computes, bit for bit
    A = np.random.default_rng(3).random((12, 12)) + 12 * np.eye(12)
    got, want = kiln.compile(lu_rows)(A.copy()), lu_rows(A.copy())
    np.testing.assert_array_equal(got, want)


def short_rhs(x, y):                  # y[:i - 1] is one shorter than x[:i]
    s = 0.0
    for i in range(1, x.shape[0]):
        s += x[:i] @ y[:i - 1]
    return s


def broadcast_one(x, y, n):           # y[:1] broadcasts against x[:i] in NumPy
    for i in range(n):
        x[:i] += y[:1]
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_length_errors_and_broadcasts_are_numpys(backend):
    x, y = np.ones(6), np.ones(6)
    with pytest.raises(ValueError) as theirs:
        short_rhs(x, y)
    with pytest.raises(ValueError) as mine:
        kiln.compile(short_rhs, backend=backend)(x, y)
    assert str(mine.value) == str(theirs.value)
    for n in (0, 1, 5):   # length 1 broadcasts (the C++ length test fails: the reference runs)
        a, b = np.arange(6.0), np.arange(6.0)
        got = kiln.compile(broadcast_one, backend=backend)(a, np.full(3, 2.0), n)
        np.testing.assert_array_equal(got, broadcast_one(b, np.full(3, 2.0), n))
        np.testing.assert_array_equal(a, b)


def test_one_compile_for_every_size_and_the_printed_graph_runs():
    compiled = kiln.compile(tri_solve)
    rng = np.random.default_rng(4)
    for n in (9, 9, 9):
        L, b = np.tril(rng.random((n, n))) + n * np.eye(n), rng.random(n)
        np.testing.assert_allclose(compiled(L, b), tri_solve(L, b), rtol=1e-12)
    assert len(compiled.records) == 1
    report = kiln.explain(tri_solve)(L, b)
    assert any("loop node" in n for n in report.loops), report.loops
    graph = report.graphs[0]
    text = graph.python_code()
    assert "vec_view(" in text and "vec_reduce(" in text, text
    args = {"L": L, "b": b}
    np.testing.assert_allclose(graph(*[args[p.name] for p in graph.placeholders])[0],
                               tri_solve(L, b), rtol=1e-12)


def not_a_vector_use(A):              # a slice's shape needs its value: the loop unrolls
    s = 0
    for i in range(A.shape[0]):
        s += A[i, :i].shape[0]
    return s


def cube(x):                           # ** 3 is NumPy's SIMD pow: not in the generated loop
    for i in range(x.shape[0]):
        x[:i] = x[:i] ** 3
    return x


def flip_of_a_temporary(x):            # np.flip of an expression: not a view
    for i in range(1, x.shape[0]):
        x[:i] = np.flip(x[:i] * 2.0) + 1.0
    return x


def test_what_a_vector_cannot_do_keeps_the_loop_unrolled():
    A = np.ones((5, 5))
    assert kiln.compile(not_a_vector_use)(A) == not_a_vector_use(A)
    report = kiln.explain(not_a_vector_use)(A)
    assert any("loop unrolled" in n and "attribute 'shape'" in n for n in report.loops), report.loops
    x = np.linspace(0.5, 2.0, 5)
    np.testing.assert_array_equal(kiln.compile(cube)(x.copy()), cube(x.copy()))
    report = kiln.explain(cube)(x.copy())
    assert any("loop unrolled" in n and "** 3" in n for n in report.loops), report.loops
    np.testing.assert_array_equal(kiln.compile(flip_of_a_temporary)(x.copy()), flip_of_a_temporary(x.copy()))
    report = kiln.explain(flip_of_a_temporary)(x.copy())
    assert any("loop unrolled" in n and "numpy.flip of" in n for n in report.loops), report.loops


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_vector_powers_are_numpys_bits(dtype):
    # square, reciprocal and sqrt in C are what NumPy computes for ** 2, ** -1, ** 0.5
    # (-0.0, zero, tiny, huge and infinite values); no reduction here, so bit for bit
    def f(x, out):
        for i in range(out.shape[0]):
            out[i] = x[:] ** 2 * i + np.square(x[:]) + x[:] ** -1 + x[:] ** 0.5 + np.reciprocal(x[:])
        return out
    x = np.array([-0.0, 0.0, 1e-30, 3.0, 1e30, 0.1, np.inf, 7.5], dtype)
    before = dict(loop_stats)
    with np.errstate(all="ignore"):
        want = f(x, np.zeros((5, 8), dtype))
        got = kiln.compile(f)(x, np.zeros((5, 8), dtype))
    assert loop_stats["native"] > before["native"]
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


def empty_max(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[:i].max()
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_extrema_are_numpys_with_nan_and_empty(backend):
    # exact (no reduction order), NaN wins wherever it is, an empty max raises NumPy's error
    x = np.array([0.5, np.nan, -1.0, 3.0, 2.0, np.nan, 0.0])
    for y in (x, x[::-1].copy(), np.nan_to_num(x)):
        got, want = kiln.compile(extrema, backend=backend)(y, np.zeros(7)), extrema(y, np.zeros(7))
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError) as theirs:
        empty_max(np.ones(5))
    with pytest.raises(ValueError) as mine:
        kiln.compile(empty_max, backend=backend)(np.ones(5))
    assert str(mine.value) == str(theirs.value)


def growing_sums(A, out):              # rows of 1 .. 300 terms, a column (strided), reversed
    for i in range(A.shape[0]):
        out[i] = A[i, :i * 43 + 1].sum() + (A[:, i] * A[:, i]).sum() + np.sum(A[i, ::-1] - 1)
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_vector_sums_are_numpys_bits(dtype):
    """``a.sum()`` in a body adds in NumPy's pairwise order, in the sum's type: float64 rows
    had differed in the last bit (eight partial sums with the tail added into the first,
    no tree past 128 terms), and float32 ones were added in double."""
    rng = np.random.default_rng(5)
    A = (rng.standard_normal((8, 300)) * 10.0 ** rng.integers(-3, 4, (8, 300))).astype(dtype)
    before = dict(loop_stats)
    got = kiln.compile(growing_sums)(A, np.zeros(8, dtype))
    np.testing.assert_array_equal(got, growing_sums(A, np.zeros(8, dtype)))
    assert loop_stats["native"] > before["native"]
