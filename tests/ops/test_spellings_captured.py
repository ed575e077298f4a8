"""Every NumPy function kiln captures beyond the core inventory, through kiln.explain: one
graph, no graph break, and the compiled function (eager backend: the captured graph run
by NumPy) gives NumPy's values, dtypes, shapes and result types. The op table
(tests/ops/rows_numeric.py) checks each op on every backend and its gradients; this file
checks the spellings as users write them, inside compiled functions."""

import warnings

import numpy as np
import pytest

import kiln

from .spelling_run import explain_and_run

rng = np.random.default_rng(0)
x = rng.standard_normal((4, 5))
y = np.sort(rng.standard_normal(5))
xn = x.copy()
xn[1, 2] = np.nan
xn[3, :] = np.nan
sq = rng.standard_normal((3, 3)) + 3 * np.eye(3)
v3 = rng.standard_normal((4, 3))
x6 = rng.standard_normal((4, 6))
a7 = rng.standard_normal(7)
v = rng.standard_normal(3)
xs = np.array([-np.inf, -1.0, 0.0, 0.5, np.inf, np.nan])
zs = np.array([1 + 0j, 2j])
vs = np.linspace(0, 1, 5)


def fftconv(a, v):
    n = a.shape[0] + v.shape[0] - 1
    return np.fft.irfft(np.fft.rfft(a, n) * np.fft.rfft(v, n), n)


CASES = {
 "asarray": (lambda a: np.asarray(a) , (x,)),
 "asarray_is": (lambda a: np.asarray(a) is a, (x,)),
 "array_list": (lambda a, b: np.array([a, b]) , (y, y)),
 "array_dtype": (lambda a: np.array(a, dtype=np.float32), (x,)),
 "ndarray": (lambda a: np.ndarray((3, 2)).shape, (x,)),
 "diff": (lambda a: np.diff(a, axis=0), (x,)),
 "diff2": (lambda a: np.diff(a, n=2, prepend=0.0), (x,)),
 "roll": (lambda a: np.roll(a, 2), (x,)),
 "roll_ax": (lambda a: np.roll(a, (1, -2), axis=(0, 1)), (x,)),
 "rot90": (lambda a: np.rot90(a, 3), (x,)),
 "round": (lambda a: np.round(a, 2), (x,)),
 "round_m": (lambda a: a.round(), (x,)),
 "fix": (lambda a: np.fix(a * 3), (xs,)),
 "choose": (lambda a: np.choose((a > 0).astype(int) + (a > 1), [a * 0, a, a * a]), (x,)),
 "choose_weak": (lambda a: np.choose(a > 0, [0, a.astype(np.float32)]), (x,)),
 "choose_clip": (lambda a, i: np.choose(i, [a[0], 2.5, np.float64(1)], mode="clip"), (x, np.array([-1, 1, 2, 5, 0]))),
 "r_": (lambda a, b: np.r_[a[0], 0.0, b, 1:3], (x, y)),
 "r_weak_int": (lambda a: np.r_[a.astype(np.int8), 7, np.arange(2)], (x[0],)),
 "r_scalar_item": (lambda a: np.r_[a[0, 0], a[1, :2]], (x,)),
 "c_": (lambda a, b: np.c_[a, b[:4] * 2, 0:4], (x[:, :2], y)),
 "c_square": (lambda a: np.c_[a, a], (sq,)),
 "ix_lists": (lambda a: a[np.ix_([0, 2], [4, 1, 1])], (x,)),
 "ix_arrays": (lambda a, r: a[np.ix_(r, r[::-1])].sum(axis=0), (x, np.array([3, 0, 1]))),
 "ix_mask_const": (lambda a: a[np.ix_([True, False, True, False], np.arange(2))], (x,)),
 "ix_tuple": (lambda r: np.ix_(r, [], r * 2), (np.array([1, 2], np.int32),)),
 "fix_int_out": (lambda a: np.fix(a, out=np.zeros(3, np.float32)), (np.array([-2, 0, 7]),)),
 "fix_0d": (lambda a: np.fix(a[0, 0] * 3), (x,)),
 "nan_to_num": (lambda a: np.nan_to_num(a), (xn,)),
 "isclose": (lambda a, b: np.isclose(a, b + 1e-9), (x, x)),
 "nansum": (lambda a: np.nansum(a, axis=1), (xn,)),
 "nanmean": (lambda a: np.nanmean(a, axis=0), (xn,)),
 "nanstd": (lambda a: np.nanstd(a, axis=1, ddof=1), (xn,)),
 "nanvar": (lambda a: np.nanvar(a), (xn,)),
 "nanmax": (lambda a: np.nanmax(a, axis=1), (xn,)),
 "nanmin": (lambda a: np.nanmin(a), (xn,)),
 "nancumsum": (lambda a: np.nancumsum(a, axis=1), (xn,)),
 "average": (lambda a, w: np.average(a, axis=1, weights=w), (x, np.abs(y))),
 "average_r": (lambda a: np.average(a, axis=0, returned=True), (x,)),
 "cov": (lambda a: np.cov(a), (x,)),
 "cov_y": (lambda a, b: np.cov(a, b, rowvar=False), (x, x)),
 "corrcoef": (lambda a: np.corrcoef(a), (x,)),
 "polyval": (lambda p, a: np.polyval(p, a), (y, x)),
 # constant coefficients: the composite's own NumPy array was taken for a traced one
 # (its .var, the variance method), an internal error and a break
 "polyval_list": (lambda a: np.polyval([1.0, 2.0, 3.0], a), (x,)),
 "append": (lambda a, b: np.append(a, b), (x, y)),
 "split": (lambda a: np.split(a, [1, 3], axis=1), (x,)),
 "array_split": (lambda a: np.array_split(a, 3), (x,)),
 "hsplit": (lambda a: np.hsplit(a, 5), (x,)),
 "meshgrid": (lambda a, b: np.meshgrid(a, b), (y, x[0, :3])),
 "meshgrid_ij": (lambda a, b: np.meshgrid(a, b, indexing="ij", sparse=True), (y, x[0, :3])),
 "indices": (lambda a: np.indices(a.shape) * 1.0 + a.sum(), (x,)),
 "triu_indices": (lambda a: a[np.triu_indices(4, 1)], (x[:, :4],)),
 "fftfreq": (lambda a: np.fft.fftfreq(a.shape[0]) * a[:, 0], (x,)),
 "frombuffer": (lambda a: np.frombuffer(b"\x01\x02\x03\x04\x05\x06\x07\x08", np.uint16, count=3, offset=2) * a[0],
                (x[:, :3],)),
 "select": (lambda a: np.select([a < -0.5, a > 0.5], [a * 2, a * 3], -1.0), (x,)),
 "count_nonzero": (lambda a: np.count_nonzero(a > 0, axis=1), (x,)),
 "sort": (lambda a: np.sort(a, axis=0), (x,)),
 "sort_none": (lambda a: np.sort(a, axis=None), (x,)),
 "argsort": (lambda a: np.argsort(a), (x,)),
 "argsort_m": (lambda a: a.argsort(axis=0), (x,)),
 "partition": (lambda a: np.partition(a, 2), (x,)),
 "searchsorted": (lambda a, v: np.searchsorted(a, v, side="right"), (y, x)),
 "searchsorted_sorter": (lambda a, v, s: a.searchsorted(v, "right", sorter=s), (x[0], x, np.argsort(x[0]))),
 "packbits": (lambda a: np.packbits(a > 0, axis=1, bitorder="little"), (x,)),
 "unpackbits": (lambda a: np.unpackbits(np.packbits(a > 0, axis=0), axis=0, count=-3), (x,)),
 "digitize": (lambda a, b: np.digitize(a, b), (x, y)),
 "median": (lambda a: np.median(a), (x,)),
 "median_ax": (lambda a: np.median(a, axis=1, keepdims=True), (x,)),
 "percentile": (lambda a: np.percentile(a, [10, 90], axis=0), (x,)),
 "quantile": (lambda a: np.quantile(a, 0.3, method="nearest"), (x,)),
 "nanmedian": (lambda a: np.nanmedian(a, axis=1), (xn,)),
 "histogram": (lambda a: np.histogram(a, bins=7), (x,)),
 "histogram_w": (lambda a, w: np.histogram(a, bins=[-1, 0, 0.5, 2], weights=w, density=True), (x, np.abs(x))),
 "histogram_range": (lambda a: np.histogram(a, 5, range=(-1, 1))[0].sum(), (x,)),
 "histogram2d": (lambda a, b: np.histogram2d(a, b, bins=4), (x[0], x[1])),
 "hist_masked": (lambda a: np.histogram(np.where(a > 0, a, np.nan), bins=5, range=(0, 3)), (x,)),
 "interp": (lambda a, xp, fp: np.interp(a, xp, fp), (x, y, y ** 2)),
 "diagonal": (lambda a: np.diagonal(a, 1), (x,)),
 "diagonal_m": (lambda a: a.diagonal(-1) * 2, (x,)),
 "trace": (lambda a: np.trace(a), (x,)),
 "trace_m": (lambda a: a.trace(1), (x,)),
 "diag1": (lambda a: np.diag(a[0], 1), (x,)),
 "diag2": (lambda a: np.diag(a), (x,)),
 # a list holding run-time values (Kabsch's np.diag([1.0, 1.0, d]), real21): its stack
 "diag_list": (lambda a: np.diag([1.0, a[0, 0], np.sign(a[1, 1])], -1), (x,)),
 "kron": (lambda a, b: np.kron(a, b), (sq, x)),
 "cross": (lambda a, b: np.cross(a, b), (v3, v3[::-1])),
 # 2-element vectors: deprecated in NumPy 2.0, an error from 2.5 (kiln raises as NumPy does)
 **({"cross2": (lambda a, b: np.cross(a[:, :2], b[:, :2]), (v3, v3[::-1]))}
    if np.lib.NumpyVersion(np.__version__) < "2.5.0" else {}),
 "vdot": (lambda a, b: np.vdot(a, b), (x, x)),
 "det": (lambda a: np.linalg.det(a), (sq,)),
 "mpow": (lambda a: np.linalg.matrix_power(a, 5), (sq,)),
 "mpow0": (lambda a: np.linalg.matrix_power(a, 0), (sq,)),
 "mpowneg": (lambda a: np.linalg.matrix_power(a, -2), (sq,)),
 "pinv": (lambda a: np.linalg.pinv(a), (x,)),
 "svdvals": (lambda a: np.linalg.svd(a, compute_uv=False), (x,)),
 "eigvalsh": (lambda a: np.linalg.eigvalsh(a + a.T), (sq,)),
 "rank": (lambda a: np.linalg.matrix_rank(a), (x,)),
 "fft": (lambda a: np.fft.fft(a), (x6,)),
 "ifft": (lambda a: np.fft.ifft(a, n=8, axis=0, norm="ortho"), (x6,)),
 "rfft": (lambda a: np.fft.rfft(a), (x6,)),
 "irfft": (lambda a: np.fft.irfft(np.fft.rfft(a)), (x6,)),
 "fft2": (lambda a: np.fft.fft2(a), (x6,)),
 "fftn": (lambda a: np.fft.fftn(a, axes=(0,)), (x6,)),
 "rfftn": (lambda a: np.fft.irfftn(np.fft.rfftn(a), s=a.shape), (x6,)),
 "fftshift": (lambda a: np.fft.fftshift(a), (x6,)),
 "ifftshift": (lambda a: np.fft.ifftshift(a, axes=1), (x6,)),
 "fftconv": (fftconv, (a7, v)),
 "convolve": (lambda a, v: np.convolve(a7, v), (a7, v)),
 "convolve_same": (lambda a, v: np.convolve(a, v, "same"), (a7, v)),
 "convolve_valid": (lambda a, v: np.convolve(v, a, "valid"), (a7, v)),
 "correlate": (lambda a, v: np.correlate(a7, v), (a7, v)),
 "correlate_full": (lambda a, v: np.correlate(v, a, "full"), (a7, v)),
 "pad": (lambda a: np.pad(a, 2), (x6,)),
 "pad_c": (lambda a: np.pad(a, ((1, 0), (2, 3)), constant_values=5.0), (x6,)),
 "pad_edge": (lambda a: np.pad(a, 2, mode="edge"), (x6,)),
 "pad_wrap": (lambda a: np.pad(a, (1, 2), mode="wrap"), (x6,)),
 "pad_reflect": (lambda a: np.pad(a, 2, mode="reflect"), (x6,)),
 "pad_sym": (lambda a: np.pad(a, 2, mode="symmetric"), (x6,)),
 "spectral": (lambda u: np.fft.ifft(np.fft.fft(u) * np.exp(-1j * np.fft.fftfreq(u.shape[-1]) * 0.1)).real, (x6,)),

 "isposinf": (lambda a: np.isposinf(a), (xs,)), "isneginf": (lambda a: np.isneginf(a), (xs,)),
 "iscomplex": (lambda a: np.iscomplex(a), (zs,)), "isreal": (lambda a: np.isreal(a), (zs,)),
 "isreal_r": (lambda a: np.isreal(a), (xs,)),
 "sinc": (lambda a: np.sinc(a), (vs - 0.5,)), "ediff1d": (lambda a: np.ediff1d(a, to_begin=[0.0]), (vs,)),
 "trapezoid": (lambda a: np.trapezoid(a ** 2, a), (vs,)), "trapezoid_dx": (lambda a: np.trapezoid(a, dx=0.25), (vs,)),
 "broadcast_arrays": (lambda a, b: np.broadcast_arrays(a, b[:, None]), (vs, vs[:3])),
 "tri": (lambda a: np.tri(3, 4, 1) * a[0], (vs,)), "logspace": (lambda a: np.logspace(0, 2, 5) + a, (vs,)),
 "vander": (lambda a: np.vander(a, 3), (vs,)), "vander_i": (lambda a: np.vander(a, increasing=True), (vs,)),
 "windows": (lambda a: (np.hanning(5) * a, np.hamming(5) + a, np.blackman(5), np.bartlett(5), np.kaiser(5, 3.0)), (vs,)),
}


def _same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, equal_nan=True)


def _deprecated(fn, args):
    """Does NumPy deprecate this call on the installed version (np.fix on 2.5)?"""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            fn(*args)
        except Exception:
            return False
    return any(issubclass(w.category, (DeprecationWarning, FutureWarning)) for w in seen)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name", list(CASES))
def test_spelling_captures_without_a_break(name):
    out, got, want, _, _ = explain_and_run(*CASES[name], backend="eager")
    if _deprecated(*CASES[name]):
        # (it runs as NumPy so its DeprecationWarning comes out: tests/test_numpy_deprecations.py)
        assert any("Warning" in str(b.reason) for b in out.break_reasons), out.break_reasons
    else:
        assert out.graph_break_count == 0, [str(b.reason) for b in out.break_reasons]
        assert out.graph_count <= 1
    _same(got, want)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_cross_of_two_element_vectors_follows_the_installed_numpy(backend):
    # NumPy 2.0-2.4 computes it (deprecated), 2.5 raises: kiln gives the same either way.
    def f(a, b):
        return np.cross(a[:, :2], b[:, :2])
    v = np.arange(12.0).reshape(4, 3)
    try:
        want, err = f(v, v[::-1]), None
    except ValueError as e:
        want, err = None, str(e)
    if err is None:
        np.testing.assert_array_equal(kiln.compile(f, backend=backend)(v, v[::-1]), want)
    else:
        with pytest.raises(ValueError) as got:
            kiln.compile(f, backend=backend)(v, v[::-1])
        assert str(got.value) == err


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_median_is_numpys_median_not_quantile_one_half():
    # np.median averages the middle two values; np.quantile(x, 0.5) interpolates, which
    # rounds differently (these rows were picked where the two differ in the last bit).
    # It also takes bool arrays, which np.quantile refuses.
    rows = np.random.default_rng(0).standard_normal((40, 6))
    differ = rows[[np.median(r) != np.quantile(r, 0.5) for r in rows]]
    assert len(differ) >= 3
    nan_rows = np.vstack([differ, np.full(6, np.nan)])
    nan_rows[0, 1] = np.nan

    def f(a, b, m):
        return np.median(a, axis=1), np.nanmedian(b, axis=1), np.median(m), np.median(a)

    args = (differ, nan_rows, np.array([True, False, True, True]))
    out, got, want, _, _ = explain_and_run(f, args, backend="eager")
    assert out.graph_break_count == 0, [str(b.reason) for b in out.break_reasons]
    for g, w in zip(got, want):
        assert type(g) is type(w) and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)   # bit for bit


def test_cov_scales_by_numpys_reciprocal_bit_for_bit():
    """NumPy's np.cov multiplies by np.true_divide(1, fact); kiln divided by fact, an ulp
    off in most entries (and in np.corrcoef's), float32 results too."""
    X = np.random.default_rng(3).standard_normal((3, 8)) * 3.7

    def f(a):
        return (np.cov(a), np.cov(a, rowvar=False, ddof=0), np.cov(a, dtype=np.float32),
                np.corrcoef(a, a[:1] ** 2))

    out, got, want, _, _ = explain_and_run(f, (X,), backend="eager")
    assert out.graph_break_count == 0
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)   # bit for bit


@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.bool_])
def test_vander_takes_numpys_dtype_x_promoted_with_int64(dtype):
    # int8 x gave int8 powers (5 ** 3 wrapped to 125, 6 ** 3 to -40), float32 x float32
    # ones; NumPy's are int64 and float64.
    x = np.array([5, 6, 0, 1]).astype(dtype)
    f = lambda a: (np.vander(a, 4), np.vander(a, 3, increasing=True))  # noqa: E731
    out, got, want, _, _ = explain_and_run(f, (x,), backend="cpp")
    assert out.graph_break_count == 0
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_vander_gives_numpys_products_bit_for_bit():
    # NumPy's columns are multiply.accumulate of x (x, x * x, (x * x) * x, ...); kiln's were
    # x ** k by pow, which rounds otherwise (2240 of 90x40 float64 values differed, and
    # took 2x NumPy's time). Its layout too: C-contiguous, whichever the column order.
    x = np.linspace(-1.3, 1.7, 20)
    f = lambda a: (np.vander(a, 12), np.vander(a, 9, increasing=True), np.vander(a, 1))  # noqa: E731
    out, got, want, _, _ = explain_and_run(f, (x,), backend="cpp")
    assert out.graph_break_count == 0
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.strides == w.strides
        np.testing.assert_array_equal(g, w)   # bit for bit


def test_gradient_of_a_bool_array_raises_numpys_error():
    # NumPy converts integer arrays to float64 but not bool ones, whose subtraction raises.
    f = lambda a: np.gradient(a)  # noqa: E731
    a = np.array([True, False, True, True])
    with pytest.raises(TypeError) as want:
        f(a)
    with pytest.raises(TypeError) as got:
        kiln.compile(f)(a)
    assert str(got.value) == str(want.value)
