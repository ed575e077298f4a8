"""numba's "Supported NumPy features" that used to break the graph: each spelling through
kiln.explain (one graph, no break) and compiled against NumPy itself (values, dtypes,
types, shapes, and the final state of the arguments a function writes into); NumPy's
errors come out unchanged; gradients against finite differences."""

import numpy as np
import pytest

import kiln

from .spelling_run import explain_and_run

rng = np.random.default_rng(14)
m45 = rng.standard_normal((4, 5))
r45 = np.round(m45 * 2)                 # repeated values: set ops and lexsort have ties
sq = rng.standard_normal((4, 4))


def _put(a):
    np.put(a, [0, 7, -1], [9.0, 8.0])
    return a * 2


def _put_method_clip(a):
    a.put(np.array([1, 3, 50]), 5.0, mode="clip")


def _put_on_a_transpose(a):
    np.put(a.T, [1, 2], [7.0, 6.0])


def _put_int_casts(a):
    b = np.zeros(5, np.int64)
    np.put(b, [1, 2], [2.7, -1.5])
    return b


def _place(a):
    np.place(a, a > 0, [10.0, 20.0, 30.0])
    return a.sum()


def _place_scalar_on_a_copy(a):
    b = a.copy()
    np.place(b, b < 0, -1.0)
    return b


def _fill_diagonal(a):
    np.fill_diagonal(a, 0.0)
    return a


def _fill_diagonal_wrap(a):
    b = np.zeros((9, 3))
    np.fill_diagonal(b, a[0, :2], wrap=True)
    return b


def _fill_diagonal_cube(a):
    b = np.zeros((3, 3, 3))
    np.fill_diagonal(b, a[0, :2])
    return b


def _fill_diagonal_view(a):
    np.fill_diagonal(a.T, [1.0, 2.0])


def _sort_method(a):
    a.sort()                      # sorts the argument in place
    b = a.T.copy()
    b.sort(axis=0, kind="stable")
    return b


def _nditer_sum(a):
    s = 0.0
    for x in np.nditer(a):
        s = s * 0.5 + x
    return s


def _nditer_readwrite(a):
    for x in np.nditer(a, op_flags=["readwrite"]):
        x[...] = 2 * x + 1
    for x in np.nditer(a[:2], order="C", op_flags=["writeonly"]):   # a view: in the order given
        x[...] = x * 3


def _flat_write(a):
    a.flat[7] = a.flat[-1] * 3      # writes the argument
    return sum(a[1:3].flat)


def _chkfinite_write(a):
    b = np.asarray_chkfinite(a)   # a itself: the write reaches the argument
    b[0, 0] = 7.0
    return b.sum()


def _trim_write(a):
    t = np.trim_zeros(a)
    t[0] = 9.0                    # a view of the argument: the write reaches it (as Python)
    return t


def _view_write(a):
    b = a.view(np.int64)
    b[0, 1] = 7                   # writes the argument's bytes
    a.view(np.int32)[1, :2] = [1, 2]
    return b.sum()


CASES = {
    # Python bools read from data
    "allclose": (lambda a: np.allclose(a, a + 1e-9), (m45,)),
    "allclose_false": (lambda a: np.allclose(a, a + 1, atol=0.5), (m45,)),
    "allclose_nan": (lambda a: np.allclose(np.sqrt(a), np.sqrt(a), equal_nan=True), (m45,)),
    "array_equal": (lambda a: (np.array_equal(a, a.copy()), np.array_equal(a, a[0])), (m45,)),
    "array_equal_nan": (lambda a: (np.array_equal(np.sqrt(a), np.sqrt(a)),
                                   np.array_equal(np.sqrt(a), np.sqrt(a), equal_nan=True)), (m45,)),
    "array_equal_int": (lambda a: np.array_equal(a.astype(np.int64), a.astype(np.int32), equal_nan=True),
                        (r45,)),
    "array_equiv": (lambda a: (np.array_equiv(a, a[0]), np.array_equiv(a[:1], a),
                               np.array_equiv(a, a[:2])), (r45,)),
    "contains": (lambda a: (1.0 in a, a[1, 2] in a, a[0, 0] not in a, 0.5 not in a, a[0] in a,
                            3 in np.round(a).astype(np.int64)), (r45,)),
    # ndarray.view(dtype): the same bytes; another itemsize regroups the last axis
    "view_same_itemsize": (lambda a: (a.view(np.int64) >> 3, a.T.view(np.uint64), a.view(), a[::2].view(np.int64)),
                           (m45,)),
    "view_other_itemsize": (lambda a: (a.view(np.int32), a.view(np.uint8).sum(), a.view(np.complex64)),
                            (m45,)),
    "view_write_through": (_view_write, (m45,)),
    "view_of_a_fortran_argument": (lambda a: a.view(np.float32), (np.asfortranarray(m45[:, :4]).T,)),
    "count_nonzero": (lambda a: np.count_nonzero(a > 0), (m45,)),
    "bool_with_an_array": (lambda a: (np.allclose(a, 0), a + 1), (m45,)),
    # set operations (sizes known only after they ran; later ops in the same graph)
    "union1d": (lambda a: np.union1d(a[0], a[1:]) * 2, (r45,)),
    "intersect1d": (lambda a: np.intersect1d(a[0], a[1]), (r45,)),
    "intersect1d_int_float": (lambda a: np.intersect1d(a[0].astype(np.int64), a[1]), (r45,)),
    "setdiff1d": (lambda a: np.setdiff1d(a[0], a[1]).sum(), (r45,)),
    "setxor1d": (lambda a: np.setxor1d(a[:2], a[2:]), (r45,)),
    "set_ops_assume_unique": (lambda a: np.setxor1d(a[0], a[0] + 0.5, assume_unique=True), (m45,)),
    "two_unions": (lambda a: (np.union1d(a[0], a[1]), np.union1d(a[0], a[2])), (r45,)),
    # flat writes: the arguments end up as NumPy leaves them
    "put": (_put, (m45,)),
    "put_method_clip": (_put_method_clip, (m45,)),
    "put_wrap": (lambda a: np.put(a, [22, -3], [1.5, 2.0], mode="wrap"), (m45,)),
    "put_on_a_transpose": (_put_on_a_transpose, (m45,)),
    "put_int_casts": (_put_int_casts, (m45,)),
    "place": (_place, (m45,)),
    "place_scalar_on_a_copy": (_place_scalar_on_a_copy, (m45,)),
    "fill_diagonal": (_fill_diagonal, (m45,)),
    "fill_diagonal_wrap": (_fill_diagonal_wrap, (m45,)),
    "fill_diagonal_cube": (_fill_diagonal_cube, (m45,)),
    "fill_diagonal_view": (_fill_diagonal_view, (m45,)),
    # flat indices
    "unravel_index": (lambda a: np.unravel_index(np.argmax(a), a.shape), (m45,)),
    "unravel_index_array_F": (lambda a: np.unravel_index(np.argsort(a.ravel())[:3], (5, 4), order="F"), (m45,)),
    "unravel_index_to_index": (lambda a: a[np.unravel_index(np.argmin(a), a.shape)], (m45,)),
    "ravel_multi_index": (lambda a: np.ravel_multi_index((np.argmax(a, axis=0), np.arange(5)), a.shape), (m45,)),
    "ravel_multi_index_clip_F": (lambda a: np.ravel_multi_index((np.array([1, 9]), np.array([0, -4])), (4, 5),
                                                                mode="clip", order="F"), (m45,)),
    "ravel_multi_index_scalars": (lambda a: np.ravel_multi_index((1, 2), a.shape), (m45,)),
    # sorts
    "lexsort": (lambda a: np.lexsort((a[0], a[1])), (r45,)),
    "lexsort_2d_keys": (lambda a: np.lexsort(a), (r45,)),
    "lexsort_axis0": (lambda a: np.lexsort((a, -a), axis=0), (r45,)),
    "sort_complex": (lambda a: np.sort_complex(a[0] + 1j * a[1]), (r45,)),
    "sort_complex_real": (lambda a: np.sort_complex(a[0]), (m45,)),
    "sort_complex_int16": (lambda a: np.sort_complex(a[0].astype(np.int16)), (r45,)),
    # polynomials
    "polyadd": (lambda a: (np.polyadd(a[0], a[1, :2]), np.polyadd([1.0, 2.0], a[0])), (m45,)),
    "polysub_int": (lambda a: np.polysub(a[0, :3].astype(np.int64), a[1]), (r45,)),
    "polymul": (lambda a: np.polymul(a[0], a[1, :3]), (m45,)),
    "polymul_leading_zeros": (lambda a: np.polymul(np.where(a[0] > 10, a[0], 0.0) + [0, 0, 0, 1, 2], a[1]), (m45,)),
    "polyder": (lambda a: (np.polyder(a[0]), np.polyder(a[0], 3), np.polyder(np.array([3, 2, 1]))), (m45,)),
    "polyint": (lambda a: (np.polyint(a[0]), np.polyint(a[0], 2, k=[1.0, 2.0]), np.polyint(a[0], 0)), (m45,)),
    "poly": (lambda a: (np.poly(a[0]), np.poly(a[0].astype(np.float32)), np.poly(np.arange(3))), (m45,)),
    "poly_then_polyval": (lambda a: np.polyval(np.poly(a[0, :3]), a[1]), (m45,)),
    "polyfit": (lambda a: np.polyfit(np.linspace(0, 1, 5), a[0], 2), (m45,)),
    "polyfit_weighted_columns": (lambda a: np.polyfit(np.linspace(0, 1, 4), a[:, :2], 1, w=np.abs(a[:, 0])), (m45,)),
    "polydiv": (lambda a: np.polydiv(a[0], a[1, :2]), (m45,)),
    "polydiv_exact": (lambda a: np.polydiv(np.convolve(a[0, :3], [1.0, 2.0]), np.array([1.0, 2.0])), (m45,)),
    # linalg
    "eig_complex": (lambda a: np.linalg.eig(a + 1j * a.T), (sq,)),
    "eig_complex_batched": (lambda a: np.linalg.eig(np.stack([a, a.T]) * (1 + 1j)), (sq,)),
    "eigvals_complex": (lambda a: np.abs(np.linalg.eigvals((a + 1j * a.T).astype(np.complex64))), (sq,)),
    "cond": (lambda a: (np.linalg.cond(a), np.linalg.cond(a, "fro"), np.linalg.cond(a, 1),
                        np.linalg.cond(a[:3], -2)), (sq,)),
    "cond_singular_and_complex": (lambda a: (np.linalg.cond(np.ones((3, 3)), 1), np.linalg.cond(a * 1j)), (sq,)),
    "slogdet_complex": (lambda a: np.linalg.slogdet(a + 1j * a.T), (sq,)),
    "slogdet_complex_batched": (lambda a: np.linalg.slogdet(np.stack([a, a.T]) * 1j), (sq,)),
    # phase unwrapping, layouts, finiteness checks
    "unwrap": (lambda a: np.unwrap(np.angle(np.exp(3j * np.cumsum(a, axis=1)))), (m45,)),
    "unwrap_axis_period_f32": (lambda a: np.unwrap(a.astype(np.float32) * 3, axis=0, period=4.0), (m45,)),
    "unwrap_boundary": (lambda a: np.unwrap(np.array([0.0, np.pi, 2 * np.pi, -np.pi, 0.5])) + a[0, 0], (m45,)),
    "asfortranarray": (lambda a: (np.asfortranarray(a) + 1, np.asfortranarray(a.T), np.asfortranarray(a, np.float32),
                                  np.asfortranarray(a.sum())), (m45,)),
    "asarray_chkfinite": (lambda a: (np.asarray_chkfinite(a) * 2, np.asarray_chkfinite(a.astype(np.int64))), (m45,)),
    "asarray_chkfinite_writes_through": (_chkfinite_write, (m45,)),
    # np.delete / np.insert at constant positions, the in-place sort method, isscalar
    "delete": (lambda a: (np.delete(a, 1), np.delete(a, [0, -1], axis=1), np.delete(a, slice(None, None, 2), 0)), (m45,)),
    "delete_int_mask": (lambda a: np.delete(a.astype(np.int64), [True, False, True, False, False], axis=1), (r45,)),
    "delete_computed_positions": (lambda a: (np.delete(a, np.argsort(a[0])[:2]) * 2,
                                             np.delete(a[1], np.argsort(a[2])[:3] - 4),
                                             np.delete(a[0], np.array([1, 1, 3]) + np.argmax(a[1]) * 0)), (m45,)),
    "trim_zeros": (lambda a: (np.trim_zeros(a[0] * (a[0] > 0)), np.trim_zeros(np.where(a[1] > 0, a[1], 0.0), "b") * 2,
                              np.trim_zeros(a[2] - a[2]), np.trim_zeros(a[3], "f").sum()), (m45,)),
    "trim_zeros_large": (lambda a: (np.trim_zeros(a) + 1).sum(), (np.pad(np.arange(1.0, 60001.0), (1234, 777)),)),
    "insert": (lambda a: (np.insert(a, 1, 5.7), np.insert(a, [1, 3], a[0, :2]), np.insert(a, 2, a[:, 0] * 3, axis=1)),
               (m45,)),
    "insert_cast_block": (lambda a: (np.insert(a.astype(np.int32), 1, 2.9, axis=0),
                                     np.insert(a, slice(0, 2), [[1.0], [2.0], [3.0], [4.0]], axis=1)), (m45,)),
    "sort_method": (_sort_method, (m45,)),
    "isscalar": (lambda a: (np.isscalar(a), np.isscalar(a.sum()), np.isscalar(a[0, 0]), np.isscalar(2.0),
                            a * 2), (m45,)),
    # np.nditer over arguments (memory order, guarded) and in a given order
    "nditer": (_nditer_sum, (m45,)),
    "nditer_fortran_argument": (_nditer_sum, (np.asfortranarray(m45),)),
    "nditer_readwrite": (_nditer_readwrite, (m45,)),
    "nditer_order_F": (lambda a: np.stack([x * 1 for x in np.nditer(a[1:3], order="F")]), (m45,)),
    "nditer_computed_1d": (lambda a: [x + 1 for x in np.nditer(a[0] * 2)], (m45,)),
    # ndarray.flat: C order whatever the layout; one element by a constant int
    "flat_iteration": (lambda a: [x * 2 for x in a.T.flat], (m45,)),
    "flat_index_and_write": (_flat_write, (m45,)),
    # histograms with an estimator's number of bins
    "histogram_auto": (lambda a: np.histogram(a, bins="auto"), (m45,)),
    "histogram_fd_density_range": (lambda a: np.histogram(a * 2, bins="fd", range=(-1, 2), density=True), (m45,)),
    "histogram_sturges_f32_counts": (lambda a: np.histogram(a.astype(np.float32), "sturges")[0] * 2, (m45,)),
    "histogram_auto_of_a_selection": (lambda a: np.histogram(a[a > 0], bins="auto"), (m45,)),
    # np.insert at positions computed in the graph (its length is known while capturing)
    "insert_computed_scalar": (lambda a: np.insert(a[0], np.argmax(a[0]), 9.0), (m45,)),
    "insert_computed_array": (lambda a: np.insert(a[1], np.argsort(a[1])[:2], a[0, :2] * 2), (m45,)),
    "insert_computed_axis": (lambda a: np.insert(a, np.argmin(a[:, 0]), a[0] - 1, axis=0), (m45,)),
    "insert_computed_columns": (lambda a: np.insert(a, np.argsort(a[0])[:2] - 5, -1, axis=1), (m45,)),
    "delete_one_computed": (lambda a: (np.delete(a, np.argmax(a)), np.delete(a, np.argmin(a[:, 1]), axis=0),
                                       np.delete(a, np.argmax(a[0]) - 5, axis=1) * 2), (m45,)),
    "insert_computed_int_cast": (lambda a: np.insert(np.arange(5), np.argsort(a[0])[:2], 2.7), (m45,)),
    # sliding windows (a read-only view), default_rng made in the function, more ufuncs
    "sliding_window_view": (lambda a: (np.lib.stride_tricks.sliding_window_view(a, (2, 3)),
                                       np.lib.stride_tricks.sliding_window_view(a[0], 3).mean(-1)), (m45,)),
    "default_rng_inside": (lambda a: a + np.random.default_rng(7).normal(size=a.shape), (m45,)),
    "ufuncs_numba_lists": (lambda a: (np.degrees(a), np.deg2rad(a), np.fabs(a), np.heaviside(a, 0.5),
                                      np.float_power(np.abs(a), 0.5), np.logaddexp2(a, 1.0),
                                      np.nextafter(a, 0), np.spacing(a), np.ldexp(a, 3),
                                      np.gcd(r45.astype(np.int64), 6), np.lcm(r45.astype(np.int64), 4),
                                      np.divmod(a, 0.3), np.modf(a), np.frexp(a)), (m45,)),
    "nbytes": (lambda a: np.zeros(a.nbytes // 8) + a[0, 0], (m45,)),
    # n-d trim_zeros: each trimmed axis an unbacked size of its own
    "trim_zeros_2d": (lambda a: np.trim_zeros(np.where(np.abs(a) > 1.0, a, 0.0)), (m45,)),
    "trim_zeros_2d_axis": (lambda a: np.trim_zeros(np.where(a > 0.5, a, 0.0), "f", axis=1) * 2, (m45,)),
    "trim_zeros_2d_sum": (lambda a: np.trim_zeros(np.pad(a, 1)).sum(axis=0), (m45,)),
}


def _same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want), (got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)
    else:
        assert got == want


@pytest.mark.parametrize("name", list(CASES))
def test_spelling_is_one_graph_matching_numpy(name):
    out, got, want, mine, plain = explain_and_run(*CASES[name])
    assert out.graph_break_count == 0, [str(b.reason) for b in out.break_reasons]
    assert out.graph_count == 1
    _same(got, want)
    for m, p in zip(mine, plain):      # the arguments written into
        np.testing.assert_array_equal(m, p)


ERRORS = {
    "put_out_of_range": lambda a: np.put(a, [50], 1.0),
    "put_complex_into_float": lambda a: np.put(a, [0], 1j),
    "place_empty_values": lambda a: np.place(a, a > 0, []),
    "place_mask_size": lambda a: np.place(a, np.ones(3, bool), [1.0]),
    "fill_diagonal_1d": lambda a: np.fill_diagonal(a[0], 1.0),
    "fill_diagonal_unequal": lambda a: np.fill_diagonal(np.zeros((2, 2, 3)), 1.0),
    "unravel_out_of_range": lambda a: np.unravel_index(np.array([25]), a.shape),
    "unravel_float": lambda a: np.unravel_index(1.0, a.shape),
    "ravel_multi_out_of_range": lambda a: np.ravel_multi_index((np.array([5]), np.array([0])), a.shape),
    "ravel_multi_length": lambda a: np.ravel_multi_index((np.array([1]),), a.shape),
    "lexsort_axis": lambda a: np.lexsort((a[0], a[1]), axis=3),
    "polyder_negative": lambda a: np.polyder(a[0], -1),
    "polyint_k": lambda a: np.polyint(a[0], 3, k=[1.0, 2.0]),
    "polyfit_lengths": lambda a: np.polyfit(a[0], a[1, :3], 1),
    "polyfit_deg": lambda a: np.polyfit(a[0], a[1], -1),
    "eig_not_square": lambda a: np.linalg.eig(a * 1j),
    "cond_not_square": lambda a: np.linalg.cond(a, 1),
    "cond_empty": lambda a: np.linalg.cond(a[:0, :0]),
    "chkfinite_nan": lambda a: np.asarray_chkfinite(np.sqrt(a)) + 1,
    "histogram_bad_estimator": lambda a: np.histogram(a, bins="best"),
    "histogram_auto_weights": lambda a: np.histogram(a, bins="auto", weights=a),
    "chkfinite_inf_returned": lambda a: np.asarray_chkfinite(a / 0.0),
    "trim_zeros_bad_trim": lambda a: np.trim_zeros(a[0], "x"),
    "delete_computed_out_of_range": lambda a: np.delete(a[0], np.argsort(a[1])[:2] + 9),
    "view_last_axis_not_contiguous": lambda a: a.T.view(np.int32),
    "view_divisor": lambda a: a.view(np.complex128),
    "view_0d": lambda a: a[0, 0, ...].view(np.int32),
    "delete_one_computed_out_of_range": lambda a: np.delete(a[0], np.argmax(a[0]) + 9),
    "insert_computed_out_of_range": lambda a: np.insert(a[0], np.argsort(a[1])[:2] + 9, 1.0),
    "sliding_window_too_big": lambda a: np.lib.stride_tricks.sliding_window_view(a, 6, axis=1),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_numpys_error_comes_out_unchanged(name):
    fn = ERRORS[name]
    with pytest.raises(Exception) as want:
        fn(m45.copy())
    mine = m45.copy()
    with pytest.raises(type(want.value)) as got:
        kiln.compile(fn)(mine)
    assert str(got.value) == str(want.value)


def test_place_values_gradient_matches_finite_differences():
    """np.place's vals (not differentiated by the op table: arrays of another float dtype
    do not cast safely) through the compiled function's backward graph."""
    x = m45.copy()
    cot = rng.standard_normal(x.shape)

    def f(vals):
        b = np.array(x, copy=True)
        np.place(b, x > 0, vals)
        return (np.sin(b) * cot).sum()

    vals = rng.standard_normal(3)
    got = kiln.grad(kiln.compile(f))(vals)
    eps, want = 1e-6, np.zeros(3)
    for i in range(3):
        d = np.zeros(3)
        d[i] = eps
        want[i] = (f(vals + d) - f(vals - d)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_python_bool_in_a_branch_breaks_there_and_matches():
    def f(a):
        return a + 1 if np.allclose(a, a.T) else a - 1
    out = kiln.explain(f)(sq)
    assert out.graph_break_count == 1 and "truth value" in out.break_reasons[0].reason
    for a in (sq, sq + sq.T):
        np.testing.assert_array_equal(kiln.compile(f)(a), f(a))


REASONS = {
    "polyfit_full": (lambda a: np.polyfit(a[0], a[1], 1, full=True), "diagnostics"),
    "intersect1d_indices": (lambda a: np.intersect1d(a[0], a[1], return_indices=True), "return_indices"),
    "view_of_a_computed_array": (lambda a: (a * 2).view(np.int32), "lays out an array computed"),
    "delete_computed_positions_2d": (lambda a: np.delete(a, np.argsort(a[0])[:2], axis=1), "computed in the graph"),
}


@pytest.mark.parametrize("name", list(REASONS))
def test_what_stays_python_says_why_and_matches(name):
    fn, reason = REASONS[name]
    out = kiln.explain(fn)(sq)
    assert out.graph_break_count == 1 and reason in out.break_reasons[0].reason
    _same(kiln.compile(fn)(sq), fn(sq))


def test_set_op_of_a_unique_result_breaks_and_matches():
    # the first array's length is a Python number in the joined form: known only at run time
    f = lambda a: np.intersect1d(np.unique(a[0]), a[1], assume_unique=True)  # noqa: E731
    assert kiln.explain(f)(r45).graph_break_count == 1
    _same(kiln.compile(f)(r45), f(r45))


@pytest.mark.parametrize("fn", [lambda a: [x * 1 for x in np.nditer(a * 2)],
                                lambda a: [x * 1 for x in np.nditer(a[:2])]],
                         ids=["computed", "view_of_an_argument"])
def test_nditer_in_a_layout_kiln_does_not_follow_runs_as_python(fn):
    # NumPy visits a computed array (or a view) in the memory order it gave it: the loop
    # runs as Python (its resume function iterates NumPy's own nditer object)
    out = kiln.explain(fn)(m45)
    assert "memory order" in out.break_reasons[0].reason
    a = np.asfortranarray(m45)
    _same(kiln.compile(fn)(a), fn(a))


def test_a_write_through_trim_zeros_reaches_the_argument():
    # NumPy's result is a view between data-dependent bounds: the write runs as Python
    a = np.array([0.0, 0.0, 1.0, 2.0, 0.0, 3.0, 0.0])
    out = kiln.explain(_trim_write)(a.copy())
    assert out.graph_break_count == 1 and "trim_zeros" in out.break_reasons[0].reason
    mine, plain = a.copy(), a.copy()
    got, want = kiln.compile(_trim_write)(mine), _trim_write(plain)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(mine, plain)
    assert np.shares_memory(got, mine)
