"""Tiny kernels (cpp_loops.py SCALAR_WORK) compile their bodies as scalar code (-O2
without the loop vectorizer, no SIMD pragma) where vectors could not change a bit of the
result; the others keep their SIMD loops. Values are checked bit for bit against NumPy."""
import re

import numpy as np

from kiln.ir import trace
from kiln.lowering.cpp_loops import SCALAR_WORK, scalar_body
from kiln.ops import F, TensorMeta

from .helpers import run_both

SCALAR = 'noipa, optimize("O2", "no-tree-vectorize")'


def bodies(fn, *inputs):
    g = trace(fn, [TensorMeta(a.shape, a.dtype) for a in inputs], [f"a{i}" for i in range(len(inputs))])
    expected, got, compiled = run_both(g, list(inputs))
    for e, r in zip(expected, got):
        assert e.dtype == r.dtype and e.shape == r.shape
        np.testing.assert_array_equal(np.atleast_1d(r).view(np.uint8), np.atleast_1d(e).view(np.uint8))   # (bits: -0.0, NaNs)
    cpp = compiled.kiln_artifact.cpp
    return re.findall(r"__attribute__\(\((noipa[^)]*\)?)\)\) static \w+ \w+_body\(.*?\n\}\n", cpp, re.S), cpp


def remainder_equal(x):
    return F.equal(F.remainder(x, 3), 1)


def test_a_tiny_elementwise_kernel_is_scalar():
    # real6's x % 3 == 1 over 12 elements: 1,227 instructions and 0.3 s of g++ at -O3
    (body,), cpp = bodies(remainder_equal, np.arange(-6, 6, dtype=np.int64))
    assert SCALAR in cpp and "#pragma omp simd" not in body


def test_a_large_kernel_keeps_its_simd_loop():
    x = np.arange(-5000, 5000, dtype=np.int64)
    (body,), cpp = bodies(remainder_equal, x)
    assert SCALAR not in cpp and "#pragma omp simd" in cpp


def test_vector_math_keeps_its_simd_loop():
    # libmvec's exp differs from the scalar one in the last bits: the lanes stay
    x = np.linspace(-3, 3, 12)
    _, cpp = bodies(lambda a: F.add(F.exp(a), 1.0), x)
    assert SCALAR not in cpp and "#pragma omp simd" in cpp


def test_a_float_max_keeps_its_simd_reduction():
    # which of -0.0 and 0.0 a max keeps depends on the lanes: the reduction stays as it was
    # (42 elements: a row of 12 or fewer is unrolled, in order, with no clause)
    x = np.cos(np.arange(42.0))
    _, cpp = bodies(lambda a: F.max(F.multiply(a, 2.0)), x)
    assert SCALAR not in cpp and "reduction(max:" in cpp


def test_or_and_reductions_do_not_stop_it():
    body = ["#pragma omp simd reduction(|:owned)", "for (int64_t x0 = begin; x0 < end; ++x0) {", "}"]
    assert scalar_body("12", 4, body) == body[1:]
    assert scalar_body("12", 4, ["#pragma omp simd reduction(+:acc0)"] + body[1:]) is None
    assert scalar_body(str(SCALAR_WORK), 2, body) is None   # (over the budget)
    assert scalar_body("n0", 1, body) is None   # (a size known only at run time)
    assert scalar_body("12", 4, body[:1] + ["float t0 = expf(p_x[x0]);"] + body[1:]) is None
