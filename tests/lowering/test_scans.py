"""Scans (cumsum, cumprod) as generated C++ kernels vs NumPy: every axis, layouts, dtypes
(integer wrap-around, a ``dtype=``), NaN, empty axes, a fused producer. NumPy's
``add.accumulate`` keeps its running value in the result dtype, in order; so does the
kernel, so results are compared bit for bit."""
import numpy as np
import pytest

from kiln.ir import trace
from kiln.ops import F, TensorMeta
from kiln.runtime import cpp_backend

from .helpers import run_both


def _scans(x, axis, dtype=None):
    return (F.cumsum(x, axis=axis, dtype=dtype), F.cumprod(x, axis=axis, dtype=dtype),
            F.cumsum(F.multiply(x, x), axis=axis, dtype=dtype))


def _check(x, axis, dtype=None):
    g = trace(lambda v: _scans(v, axis, dtype), [TensorMeta(x.shape, x.dtype)], ["x"])
    fn = cpp_backend(g, [x])
    expected, got, fn = run_both(g, [x], fn)
    for name, e, r in zip(("cumsum", "cumprod", "cumsum(x*x)"), expected, got):
        assert r.dtype == e.dtype and r.shape == e.shape, name
        np.testing.assert_array_equal(r, e, err_msg=f"{name} axis={axis} {x.dtype}->{dtype}")
    # one kernel each (the square fused into its scan), no NumPy call
    names = fn.kiln_artifact.kernel_names
    assert len(names) == 3 and all("cum" in n for n in names), names


RNG = np.random.default_rng(7)
MAT = RNG.standard_normal((37, 300))


@pytest.mark.parametrize("x", [MAT, MAT.astype(np.float32), np.asfortranarray(MAT), MAT[::-2, 1::3],
                               MAT[:5].T], ids=["c64", "c32", "fortran", "strided", "transposed"])
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_float_scans_are_numpys_bit_for_bit(x, axis):
    _check(x, axis)


@pytest.mark.parametrize("dtype,src", [(None, np.int32), (None, np.uint8), (np.int8, np.int64),
                                       (np.uint16, np.int32), (None, np.bool_), (np.float32, np.float64)])
def test_integer_scans_wrap_like_numpy(dtype, src):
    # products and sums that overflow int8/uint16/int64 wrap as NumPy's loops do
    x = RNG.integers(-100 if np.dtype(src).kind == "i" else 0, 200, (6, 40)).astype(src)
    _check(x, 1, dtype)
    _check(x, 0, dtype)


def test_nan_inf_and_empty_axes():
    x = np.array([[1.0, np.nan, 2.0], [np.inf, -np.inf, 3.0], [-0.0, -0.0, -1.0], [-0.0, 0.0, 1.0]])
    _check(x, 1)
    _check(x, 0)
    _check(x[:, ::-1], 0)   # a column of -0.0s stays -0.0
    _check(np.zeros((0, 4)), 0)
    _check(np.zeros((3, 0), np.float32), 1)


def test_long_row_uses_threads_and_stays_exact():
    x = RNG.standard_normal((4000, 600))
    g = trace(lambda v: (F.cumsum(F.multiply(v, 0.5), axis=1),), [TensorMeta(x.shape, x.dtype)], ["x"])
    expected, got, fn = run_both(g, [x])
    np.testing.assert_array_equal(got[0], expected[0])
    assert "omp parallel num_threads" in fn.kiln_artifact.cpp
