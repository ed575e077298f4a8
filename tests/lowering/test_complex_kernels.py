"""Complex arithmetic in generated C++ (kiln/lowering/cpp_ops.py, the kiln_c* helpers of
cpp_prelude.h): every complex op that lowers gives NumPy's bits exactly — NumPy's fused
product, its modulus algorithm, Smith's division, libm's cexp — on random values and on
inf/nan/signed-zero components, and runs as a kernel rather than a NumPy call. Also the
fused equal-bin histogram (kiln/ops/histograms.py) against np.histogram."""
import re
import warnings

import numpy as np
import pytest

from kiln.ir import trace
from kiln.ops import F, TensorMeta
from kiln.runtime import cpp_backend

SPECIAL = [complex(np.inf, 0), complex(np.nan, 1), complex(np.inf, np.nan), complex(1, np.inf),
           complex(-np.inf, -np.inf), 0j, complex(-0.0, 0.0), complex(0.0, -0.0), 1e300 + 1j,
           1e-300 + 1e-300j, complex(5e-324, 1), 3 - 4j]


def operands(dtype, n=400):
    rng = np.random.default_rng(7)
    z = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) * np.exp(rng.uniform(-6, 6, n))
    z[:len(SPECIAL)] = SPECIAL
    w = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    w[len(SPECIAL):2 * len(SPECIAL)] = SPECIAL     # special divisors and factors too
    return z.astype(dtype), np.concatenate([w[len(SPECIAL):], w[:len(SPECIAL)]]).astype(dtype)


OPS = {
    "multiply": lambda z, w: F.multiply(z, w),
    # np.square's complex loop is multiply's product of z with itself (``z**2`` too)
    "square": lambda z, w: F.square(z),
    "add_subtract": lambda z, w: F.subtract(F.add(z, w), F.multiply(w, 0.5)),
    "true_divide": lambda z, w: F.true_divide(z, w),
    "absolute": lambda z, w: F.absolute(z),
    "exp": lambda z, w: F.exp(w),
    "negative_conjugate": lambda z, w: F.add(F.negative(z), F.conjugate(w)),
    "equal": lambda z, w: F.logical_or(F.equal(z, w), F.not_equal(z, F.multiply(z, 1.0))),
    "where": lambda z, w: F.where(F.less(F.absolute(z), 1.0), z, 2.0),
    "from_real": lambda z, w: F.multiply(F.absolute(z), w),
    "python_complex": lambda z, w: F.add(F.multiply(z, 2 - 1j), 1j),
    "astype": lambda z, w: F.astype(F.multiply(z, w), dtype=np.complex64 if z.dtype == np.complex128
                                    else np.complex128),
}


def _bits_equal(got, want, name=""):
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "c":
        got, want = got.view(got.real.dtype), want.view(want.real.dtype)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert same.all(), f"{name} {np.flatnonzero(~same)[:5]}: {got[~same][:3]} != {want[~same][:3]}"
    sign = (np.signbit(got) == np.signbit(want)) | np.isnan(want)
    assert sign.all(), f"{name}: signs at {np.flatnonzero(~sign)[:5]}: {got[~sign][:4]} {want[~sign][:4]}"


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_ops_in_one_kernel_give_numpys_bits(dtype):
    z, w = operands(dtype)
    outs = {}

    def program(z, w):
        return tuple(fn(z, w) for fn in OPS.values())
    g = trace(program, [TensorMeta(z.shape, z.dtype)] * 2, ["z", "w"])
    fn = cpp_backend(g, [z, w])
    wrapper = fn.kiln_artifact.wrapper
    assert "_ext_" not in wrapper, wrapper       # every op is in a kernel
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = g(z, w)
        got = fn(z, w)
    for name, g_, w_ in zip(OPS, got, want):
        outs[name] = (g_, w_)
        _bits_equal(np.asarray(g_), np.asarray(w_), name)


def test_complex_sums_and_astype_to_real_stay_numpy_calls():
    # pairwise complex sums are NumPy's; z.astype(float) warns (ComplexWarning) in NumPy
    z, _ = operands(np.complex128, 50)
    g = trace(lambda z: (F.sum(F.multiply(z, z)), F.astype(z, dtype=np.float64)),
              [TensorMeta(z.shape, z.dtype)], ["z"])
    wrapper = cpp_backend(g, [z]).kiln_artifact.wrapper
    assert "_ext_sum" in wrapper and "_ext_astype" in wrapper


def test_mandelbrot_is_one_kernel_keeping_its_iterates_in_registers():
    import kiln
    from benchmarks.coverage import _grid, mandelbrot
    c, n = _grid(None, True)
    built = []

    def backend(graph, example_inputs):
        built.append(cpp_backend(graph, example_inputs))
        return built[-1]
    np.testing.assert_array_equal(kiln.compile(mandelbrot, backend=backend)(c, n), mandelbrot(c, n))
    wrapper = built[0].kiln_artifact.wrapper
    assert "_ext_" not in wrapper and len(re.findall(r"^\s+kiln_fused_\w+\(", wrapper, re.M)) == 1
    assert len(re.findall(r"_empty\(", wrapper)) == 1, wrapper   # the counts only


@pytest.mark.parametrize("bins, lo, hi", [(8, 0.0, 3.0), (7, -1.0, 2.0), (5, 0.1, 0.7), (1, -2.5, 2.5),
                                          (33, -1e-3, 7e-4)])
def test_fused_histogram_counts_match_numpy(bins, lo, hi):
    import kiln
    rng = np.random.default_rng(bins)
    x = np.concatenate([rng.uniform(lo - 1, hi + 1, 3000), np.linspace(lo, hi, 1001),
                        np.linspace(lo, hi, bins + 1), [np.nan, np.inf, -np.inf, lo, hi]])

    def hist(x, t):
        return np.histogram(x[x > t], bins=bins, range=(lo, hi))
    got = kiln.compile(hist)(x, lo - 0.5)
    want = hist(x, lo - 0.5)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    ops = kiln.explain(hist)(x, lo - 0.5).ops_per_graph
    assert ops and "histogram_bin_counts" in ops[0] and "histogram_counts" not in ops[0]
