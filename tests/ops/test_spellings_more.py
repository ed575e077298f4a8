"""NumPy spellings that used to break the graph (issue #14's list), through kiln.explain:
one graph, no break, and the compiled function (C++ backend) gives NumPy's values, dtypes,
shapes, strides (Fortran-ordered results stay Fortran-ordered) and aliasing."""
import warnings

import numpy as np
import pytest
from numpy.lib.array_utils import normalize_axis_index

import kiln

from .spelling_run import explain_and_run

rng = np.random.default_rng(3)
m46 = rng.standard_normal((4, 6))
t234 = rng.standard_normal((2, 3, 4))

a63 = rng.standard_normal((6, 3))
deficient = a63.copy()
deficient[:, 2] = deficient[:, 1]
b6 = rng.standard_normal(6)


def _add_where(a, b):
    o = np.ones_like(a)
    np.add(a, b, out=o, where=a > 0)
    return o


def _sqrt_where_in_place(a):
    c = a.copy()
    np.sqrt(c, out=c, where=c > 0)
    return c


def _ndenumerate_write(a):
    b = np.zeros_like(a)
    for (i, j), v in np.ndenumerate(a):
        b[i, j] = v * i + j
    return b


CASES = {
    # order='F'
    # meshgrid copies in C order (ndarray.copy()): the 'xy' x grid was Fortran-ordered
    "meshgrid_layout": (lambda a, b: np.meshgrid(a, b) + np.meshgrid(b, a, a, indexing="ij"),
                        (m46[0], b6)),
    "reshape_F": (lambda a: a.reshape(3, 8, order="F") + 1, (m46,)),
    "np_reshape_F_view": (lambda a: np.reshape(a.T, (-1, 2), order="F"), (m46,)),
    "reshape_F_3d": (lambda a: a.reshape((6, -1), order="F"), (t234,)),
    "ravel_F": (lambda a: np.ravel(a, order="F") * 2, (m46,)),
    "ravel_F_view": (lambda a: a.T.ravel(order="F"), (m46,)),
    "flatten_F": (lambda a: a.flatten(order="F"), (t234,)),
    "zeros_F": (lambda a: np.zeros((3, 4), order="F"), (m46,)),
    "ones_F": (lambda a: np.ones((4, 6), dtype=np.float32, order="F") + a, (m46,)),
    "empty_F": (lambda a: np.empty(a.shape, order="F").shape, (m46,)),
    "copy_F": (lambda a: np.copy(a, order="F"), (m46,)),
    "method_copy_F": (lambda a: a.copy(order="F"), (t234,)),
    "array_F": (lambda a: np.array(a, order="F"), (m46,)),
    # index grids (constant arrays of the graph) and index iteration (unrolled)
    "mgrid": (lambda a: np.mgrid[0:4, 0:6] * a, (m46,)),
    "mgrid_float_step": (lambda a: np.mgrid[0.5:2:0.5, -1:1:0.25][1] + a[:3, :1], (m46,)),
    "mgrid_complex_step": (lambda a: np.mgrid[0:1:4j, 0:2:6j][0] * a, (m46,)),
    "mgrid_1d": (lambda a: np.mgrid[-1:1:5j] + a[0, 0], (m46,)),
    "mgrid_shape": (lambda a: np.mgrid[:a.shape[0], :a.shape[1]].sum(axis=0) + a, (m46,)),
    "ogrid": (lambda a: np.ogrid[0:4, 0:6][0] * np.ogrid[0:4, 0:6][1] + a, (m46,)),
    "ogrid_type": (lambda a: type(np.ogrid[0:2, 0:3]).__name__, (m46,)),
    "ndindex": (lambda a: sum(a[i] * (i[0] + 2 * i[1]) for i in np.ndindex(a.shape)), (m46[:3, :3],)),
    "ndindex_star": (lambda a: [a[i, j] for i, j in np.ndindex(2, 3)], (m46,)),
    "ndenumerate": (lambda a: sum(v * (k[0] - k[1]) for k, v in np.ndenumerate(a)), (m46[:2],)),
    "ndenumerate_write": (_ndenumerate_write, (m46[:2, :3],)),
    # ufunc(..., out=, where=): out keeps its values where the mask is False
    "divide_where": (lambda a, b: np.divide(a, b, out=np.zeros_like(a), where=b != 0),
                     (m46[0], np.where(m46[1] > 0, m46[1], 0.0))),
    "add_where_out": (_add_where, (m46, m46[::-1])),
    "sqrt_where_in_place": (_sqrt_where_in_place, (m46,)),
    # ufunc.outer and np.gradient (composites)
    "add_outer": (lambda a: np.add.outer(a[0], a[:2]), (m46,)),
    "greater_outer": (lambda a: np.greater.outer(a[0], a[1]), (m46,)),
    "subtract_outer_int": (lambda a: np.subtract.outer(np.arange(3), np.arange(4)) * a[:3, :4], (m46,)),
    "gradient": (lambda a: np.gradient(a[0]), (m46,)),
    "gradient_2d_spacings": (lambda a: np.gradient(a, 0.5, 2.0), (m46,)),
    "gradient_axis": (lambda a: np.gradient(a, 0.1, axis=-1), (t234,)),
    # coordinates: non-uniform, per axis, and evenly spaced ones (NumPy's uniform shortcut)
    "gradient_coordinates": (lambda a, x, u: (np.gradient(a, x, axis=1), np.gradient(a, u[:4], x),
                                              np.gradient(a[0].astype(np.float32), u)),
                             (m46, np.sort(b6), np.arange(6.0) * 0.25)),
    "gradient_int": (lambda a: np.gradient(a.astype(np.int64)), (m46 * 10,)),
    # NaN-aware argmin/argmax, extract, diagflat
    "nanargmin": (lambda a: np.nanargmin(np.where(a > 1, np.nan, a)), (m46,)),
    "nanargmax_axis": (lambda a: np.nanargmax(np.where(a > 1, np.nan, a), axis=1), (m46,)),
    "nanargmin_int": (lambda a: np.nanargmin(a.astype(np.int64), axis=0, keepdims=True), (m46 * 5,)),
    "extract": (lambda a: np.extract(a > 0, a) * 2, (m46,)),
    "diagflat": (lambda a: np.diagflat(a[:2, :2], k=1), (m46,)),
    # predicates of the dtype, np.shape, np.isin, NumPy 2's vecdot/matvec
    "iscomplexobj": (lambda a: (np.iscomplexobj(a), np.iscomplexobj(a * 1j), np.isrealobj(a)), (m46,)),
    "np_shape": (lambda a: np.shape(a), (t234,)),
    "diag_indices_from": (lambda a: (a[np.diag_indices_from(a[:, :4])] * 2, np.diag_indices(2, 3)), (m46,)),
    # what scipy's and scikit-learn's argument checks call
    "np_ndim_size": (lambda a: (np.ndim(a), np.size(a), np.size(a, -1), np.ndim([[1.0]]),
                                normalize_axis_index(-1, np.ndim(a))), (t234,)),
    "isin": (lambda a: np.isin(np.round(a), [0.0, 1.0]), (m46,)),
    "isin_invert": (lambda a: np.isin(np.round(a), np.round(a[0]), invert=True), (m46,)),
    "vecdot": (lambda a: np.vecdot(a, a[::-1]), (m46,)),
    "vecdot_complex_axis": (lambda a: np.vecdot(a * 1j + a[::-1], a, axis=0), (m46,)),
    # NumPy 2's np.linalg array-API names (they had no op)
    "linalg_array_api": (lambda a: (np.linalg.vector_norm(a), np.linalg.vector_norm(a, axis=(2, 0), keepdims=True, ord=1),
                                    np.linalg.matrix_norm(a, ord=np.inf), np.linalg.diagonal(a, offset=1),
                                    np.linalg.trace(a), np.linalg.matrix_transpose(a), np.linalg.vecdot(a, a[0]),
                                    np.unstack(a, axis=1), np.linalg.cross(a[..., :3], a[..., 1:])), (t234,)),
    **({"matvec": (lambda a: np.matvec(a, a[0, :6] if a.shape[1] == 6 else a[0]), (m46,))}
       if hasattr(np, "matvec") else {}),
    "resize": (lambda a: (np.resize(a, (5, 7)), np.resize(a[0], 3), np.resize(a[:0], (2, 2))), (m46,)),
    # np.piecewise: the user's functions inlined (kiln/ops/polyfills.py), masked writes
    "piecewise": (lambda a: np.piecewise(a, [a < 0, a >= 0], [lambda v: -v, lambda v: v ** 2]), (m46,)),
    "piecewise_constants": (lambda a: np.piecewise(a, [a < 0, a > 1], [0.0, 1.0, 0.5]), (m46,)),
    "piecewise_otherwise": (lambda a: np.piecewise(a, [a < -1, a > 1], [np.sin, lambda v: v * 3, np.exp]),
                            (m46,)),
    "piecewise_one_condition": (lambda a: np.piecewise(a, a > 0, [lambda v: v + 1, 0]), (m46[0],)),
    "piecewise_extra_args": (lambda a: np.piecewise(a, [a < 0], [lambda v, k: v * k, lambda v, k: v - k], 2.0),
                             (m46,)),
    "piecewise_int": (lambda a: np.piecewise(a.astype(np.int64), [a < 0], [-1, 1]), (m46,)),
    # np.linalg.lstsq: (x, residuals, rank, s); residuals' size depends on the rank
    "lstsq": (lambda a, b: np.linalg.lstsq(a, b, rcond=None), (a63, b6)),
    "lstsq_columns": (lambda a, b: np.linalg.lstsq(a, np.stack([b, 2 * b], 1)), (a63, b6)),
    "lstsq_rank_deficient": (lambda a, b: np.linalg.lstsq(a, b), (deficient, b6)),
    "lstsq_underdetermined": (lambda a, b: np.linalg.lstsq(a.T, b[:3]), (a63, b6)),
    "lstsq_float32": (lambda a, b: np.linalg.lstsq(a, b), (a63.astype(np.float32), b6.astype(np.float32))),
    "lstsq_solution_only": (lambda a, b: a @ np.linalg.lstsq(a, b, rcond=None)[0] - b, (a63, b6)),
    # a list of values the graph computed (a loop's energies) where NumPy takes an array:
    # composites took it as it was (np.diff: "list indices must be integers", a user error)
    "diff_of_a_list": (lambda b: np.diff([b.sum(), (b * b).sum(), b.max()]), (b6,)),
    "gradient_of_a_list": (lambda b: np.gradient([b.sum(), b.min(), b.max()]), (b6,)),
    "trapezoid_of_lists": (lambda b: np.trapezoid([b[0], b[1], b[2]], [0.0, b[3], 2.0]), (b6,)),
    "unique_of_a_list": (lambda b: np.unique([b.max(), b.min(), b.max()]), (b6,)),
    "pad_of_a_list": (lambda b: np.pad([b.sum(), b.max()], 1), (b6,)),
    "allclose_of_lists": (lambda b: np.allclose([b.sum(), b.max()], [b.sum(), b.max() + 1e-12]), (b6,)),
}


def _same(got, want, mine, plain):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, mine, plain)
        return
    if not isinstance(want, np.ndarray):
        assert got == want
        return
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    assert got.strides == want.strides, (got.strides, want.strides)
    assert np.shares_memory(got, mine) == np.shares_memory(want, plain)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", list(CASES))
def test_spelling_is_one_graph_matching_numpy(name):
    out, got, want, mine, plain = explain_and_run(*CASES[name])
    assert out.graph_break_count == 0, [str(b.reason) for b in out.break_reasons]
    assert out.graph_count <= 1
    _same(got, want, mine[0], plain[0])


def test_order_a_and_k_still_explain_themselves():
    out = kiln.explain(lambda a: a.reshape(8, 3, order="A") * 2)(m46)
    assert out.graph_break_count == 1 and "order='A'" in out.break_reasons[0].reason


def test_ndindex_over_many_indices_breaks_with_a_reason():
    def f(a):
        t = 0.0
        for i in np.ndindex(a.shape):
            t += a[i]
        return t
    big = np.ones((80, 80))
    out = kiln.explain(f)(big)
    assert out.graph_break_count >= 1 and "6400 indices" in out.break_reasons[0].reason
    assert kiln.compile(f)(big) == f(big)


def test_lstsq_residuals_follow_each_calls_rank():
    def f(a, b):
        x, res, rank, s = np.linalg.lstsq(a, b)
        return x, res, rank
    compiled = kiln.compile(f)
    for a in (a63, deficient, a63 * 2):
        got, want = compiled(a, b6), f(a, b6)
        _same(got, want, a, a)


def test_piecewise_with_a_wrong_number_of_functions_raises_numpys_error():
    def f(a):
        return np.piecewise(a, [a < 0, a > 1], [0.0])
    with pytest.raises(ValueError) as want:
        f(m46)
    with pytest.raises(ValueError) as got:
        kiln.compile(f)(m46)
    assert str(got.value) == str(want.value)


def test_ufunc_where_without_out_still_breaks_with_a_reason():
    # NumPy leaves the masked-off elements of a fresh result uninitialized (and warns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = kiln.explain(lambda a: np.multiply(a, 2, where=a > 0))(m46)
    assert out.graph_break_count == 1 and "where=" in out.break_reasons[0].reason


zc = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
FACTORIZATIONS = {
    # complex inputs: real results (S, eigenvalues) packed as complex, returned real
    "svd_complex": (lambda z: np.linalg.svd(z), (zc,)),
    "svd_complex_batched": (lambda z: np.linalg.svd(z[None, :, :3], full_matrices=False), (zc,)),
    "eigh_complex": (lambda z: np.linalg.eigh(z @ z.conj().T), (zc,)),
    "eigh_complex_upper": (lambda z: np.linalg.eigh(z @ z.conj().T, "U"), (zc,)),
    # qr(mode='raw'): LAPACK's h (Fortran-ordered, as NumPy returns it) and tau
    "qr_raw": (lambda a: np.linalg.qr(a, mode="raw"), (m46.T.copy(),)),
    "qr_raw_transposed_input": (lambda a: np.linalg.qr(a, mode="raw"), (m46.T,)),
    "qr_raw_batched": (lambda a: np.linalg.qr(a, mode="raw"), (t234,)),
    "qr_raw_complex": (lambda z: np.linalg.qr(z[:, :3], mode="raw"), (zc,)),
}


@pytest.mark.parametrize("name", list(FACTORIZATIONS))
def test_factorization_is_one_graph_matching_numpy(name):
    fn, args = FACTORIZATIONS[name]
    want = fn(*args)
    out = kiln.explain(fn)(*args)
    got = kiln.compile(fn)(*args)
    assert out.graph_break_count == 0, [str(b.reason) for b in out.break_reasons]
    assert type(got) is type(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if "batched" not in name and args[0].flags.c_contiguous:
            # (batched results are views of one packed array: other strides; NumPy's raw h
            # follows the input's layout)
            assert g.strides == w.strides
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def _fd_grad(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[i] = eps
        g[i] = (f(a + d) - f(a - d)) / (2 * eps)
    return g


GRADIENTS = {
    "reshape_F": lambda a: (np.sin(a.reshape(3, 8, order="F")) * np.arange(8.0)).sum(),
    "ravel_F": lambda a: (np.ravel(a, order="F") ** 2 * np.arange(24.0)).sum(),
    "copy_F": lambda a: (np.copy(a, order="F") * a).sum(),
    "piecewise": lambda a: np.piecewise(a, [a < 0, a >= 0], [lambda v: v ** 3, np.sin]).sum(),
    "divide_where": lambda a: np.divide(1.0, a, out=np.zeros_like(a), where=a > 0).sum(),
    "multiply_outer": lambda a: np.sin(np.multiply.outer(a[0], a[1])).sum(),
    "gradient": lambda a: (np.gradient(a, 0.5, 2.0)[1] ** 2).sum(),
}


@pytest.mark.parametrize("name", list(GRADIENTS))
def test_gradient_matches_finite_differences(name):
    f = GRADIENTS[name]
    a = m46.copy()
    a[np.abs(a) < 1e-3] = 0.5   # no kink within eps
    np.testing.assert_allclose(kiln.grad(kiln.compile(f))(a), _fd_grad(f, a), rtol=1e-6, atol=1e-8)


def test_lstsq_differentiates_through_a_compiled_function():
    # (tests/ops/test_more_grads.py checks every result and shape; this one goes through kiln.grad)
    f = lambda a: (np.linalg.lstsq(a, b6)[0] ** 2).sum()  # noqa: E731
    np.testing.assert_allclose(kiln.grad(kiln.compile(f))(a63), _fd_grad(f, a63), rtol=1e-6, atol=1e-8)


def test_nanargmin_of_an_all_nan_slice_raises_numpys_error():
    f = lambda a: np.nanargmin(np.where(a > -10, np.nan, a), axis=0)  # noqa: E731
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        f(m46)
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        kiln.compile(f)(m46)


def test_isin_of_a_large_test_set_is_numpys_not_every_pair():
    # Comparing every element with every test element was 25x slower than NumPy's sort or
    # table for 1,000 in 1,000 (O(n * m)); past a small test set it is NumPy's isin.
    keys, ids = rng.integers(0, 300, 500), rng.integers(0, 300, 200)
    f = lambda a, b: (np.isin(a, b), np.isin(a, b, invert=True), np.isin(a, b[:4]))  # noqa: E731
    out, got, want, _, _ = explain_and_run(f, (keys, ids))
    assert out.graph_break_count == 0
    ops = out.ops_per_graph[0]
    assert ops.count("isin") == 2 and ops.count("equal") == 1, ops   # the 4-element set fuses
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_isin_checks_kind_as_numpy_does():
    f = lambda a, b: np.isin(a, b, kind="table")  # noqa: E731
    with pytest.raises(ValueError) as want:
        f(b6, b6[:2])
    with pytest.raises(ValueError) as got:
        kiln.compile(f)(b6, b6[:2])
    assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(kiln.compile(f)(keys := np.arange(6), keys[::2]), f(keys, keys[::2]))
