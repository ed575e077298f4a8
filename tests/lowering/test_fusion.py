"""Fusion: how many kernels a graph becomes, which buffers are never allocated, and the
fusion log's reasons."""
import re

import numpy as np
import pytest

import kiln
from kiln.ir import trace
from kiln.ops import F, TensorMeta

from .helpers import assert_same, run_both


def compile_and_check(fn, *inputs, rtol=2e-6):
    g = trace(fn, [TensorMeta(a.shape, a.dtype) for a in inputs], [f"a{i}" for i in range(len(inputs))])
    expected, got, compiled = run_both(g, list(inputs))
    for i, (e, r) in enumerate(zip(expected, got)):
        assert_same(f"out{i}", e, r, rtol=rtol, atol=1e-6)
    return compiled.kiln_artifact


def softmax(x):
    m = F.max(x, axis=1, keepdims=True)
    e = F.exp(F.subtract(x, m))
    return F.true_divide(e, F.sum(e, axis=1, keepdims=True))


def layernorm(x, w, b):
    mu = F.mean(x, axis=1, keepdims=True)
    d = F.subtract(x, mu)
    var = F.mean(F.multiply(d, d), axis=1, keepdims=True)
    return F.add(F.multiply(F.true_divide(d, F.sqrt(F.add(var, 1e-5))), w), b)


X = np.random.default_rng(7).standard_normal((64, 48)).astype(np.float32)
W = np.random.default_rng(8).standard_normal(48).astype(np.float32)


def test_pointwise_chain_is_one_kernel_without_temporaries():
    art = compile_and_check(lambda x: F.multiply(F.maximum(F.add(F.sin(x), F.cos(x)), 0.0), 2.0), X)
    assert len(art.kernel_names) == 1
    assert art.wrapper.count("_empty(") == 1  # only the output


def test_softmax_is_one_kernel():
    art = compile_and_check(softmax, X)
    assert art.kernel_names == ["kiln_fused_max_subtract_exp_sum_0"]
    assert art.wrapper.count("_empty(") == 1  # max and sum live in registers
    # (the max a SIMD reduction; the sum, whose exp terms the same loop stores for the
    # division, pairwise in NumPy's order: the term function stores them too)
    assert art.cpp.count("#pragma omp simd reduction") == 1
    assert "+= kiln_pairwise<float, 16>(term" in art.cpp


def test_layernorm_is_one_kernel():
    art = compile_and_check(layernorm, X, W, W + 1)
    assert len(art.kernel_names) == 1
    assert art.wrapper.count("_empty(") == 1


def test_row_normalization_by_linalg_norm_is_one_kernel():
    # np.linalg.norm(x, axis=-1) of real floats is vector_norm, which the compilers
    # decompose into NumPy's own sqrt(add.reduce(x * x)): an extern call of NumPy's norm
    # (three passes and two temporaries) was 20x slower on (100000, 3)
    art = compile_and_check(
        lambda x: F.true_divide(x, F.vector_norm(x, axis=(1,), keepdims=True)), X.astype(np.float64),
        rtol=1e-12)
    assert len(art.kernel_names) == 1 and "_ext_" not in art.wrapper   # no NumPy call


def test_var_std_are_one_kernel():
    art = compile_and_check(lambda x: (F.var(x, axis=1), F.std(x, axis=1, ddof=1)), X.astype(np.float64), rtol=1e-12)
    assert len(art.kernel_names) == 1


def test_two_outputs_of_one_chain_share_a_kernel():
    def fn(x):
        y = F.exp(F.sin(x))
        return y, F.multiply(y, 3.0)
    art = compile_and_check(fn, X)
    assert len(art.kernel_names) == 1


def test_reduction_epilogue_fuses():
    art = compile_and_check(lambda x: F.sqrt(F.sum(F.multiply(x, x), axis=1)), X)
    assert len(art.kernel_names) == 1
    assert art.wrapper.count("_empty(") == 1


def test_extern_matmul_then_bias_relu():
    def fn(x, w, b):
        return F.maximum(F.add(F.matmul(x, w), b), 0.0)
    w = np.random.default_rng(9).standard_normal((48, 16)).astype(np.float32)
    b = np.ones(16, np.float32)
    art = compile_and_check(fn, X, w, b, rtol=1e-5)
    assert len(art.kernel_names) == 1
    assert "_ext_matmul(a0, a1)" in art.wrapper


def test_different_shapes_do_not_fuse_and_the_log_says_why(capsys):
    kiln.set_logs(fusion=True)
    try:
        def fn(x):
            s = F.sum(x, axis=0)                 # reduces axis 0
            return F.sum(F.multiply(x, s), axis=1)  # reads s broadcast over rows: another frame
        art = compile_and_check(fn, X)
    finally:
        kiln.set_logs()
    assert len(art.kernel_names) == 2
    err = capsys.readouterr().err
    assert "[kiln:fusion]" in err and "not fused" in err


def test_expensive_shared_value_is_computed_once():
    def fn(x):
        t = F.tanh(F.exp(F.sin(F.cos(x))))
        return F.add(t, 1.0), F.multiply(t, 2.0), F.sum(t, axis=1)
    art = compile_and_check(fn, X)
    assert art.cpp.count("= tanhf(") == 1


def test_leading_axis_reductions_run_blocked_and_fused():
    # Reducing axis 0 of a C-ordered array: blocks of columns advance together with the
    # unit-stride loop innermost (not a strided walk down each column); 300 columns are
    # one block (test_plans.py: whole rows up to WHOLE_ROW_POINTS).
    def col_softmax(x):
        m = F.max(x, axis=0, keepdims=True)
        e = F.exp(F.subtract(x, m))
        return F.true_divide(e, F.sum(e, axis=0, keepdims=True)), F.std(x, axis=0)
    art = compile_and_check(col_softmax, np.random.default_rng(9).standard_normal((37, 300)).astype(np.float32))
    assert len(art.kernel_names) == 1
    assert "x1_b += 300" in art.cpp


# -- a costly value read through a broadcast ---------------------------------------------

COLS = np.random.default_rng(9).standard_normal(48)
ROWS = np.random.default_rng(10).standard_normal((64, 1))


def _calls_per_kernel(cpp: str, name: str) -> dict:
    """How often ``name(`` is called in each kernel body of a module (not in a body's copy
    that tells which op raised a flag, ``_told``: lowering/cpp_fp.py)."""
    bodies = re.split(r"static (?:void|unsigned) (\w+)_body", cpp)[1:]
    return {k: body.split("_told(")[0].count(f"{name}(") for k, body in zip(bodies[::2], bodies[1::2])}


def test_a_costly_value_broadcast_over_rows_is_computed_once():
    # exp(cols) read by every row of a 64 x 48 product: recomputed per row, 64 exps per
    # element of cols (3x NumPy's time at 1000 x 1000); computed once, 48 exps in all.
    art = compile_and_check(lambda c, x: F.multiply(F.sin(F.exp(c)), x), COLS, X.astype(np.float64))
    assert art.kernel_names == ["kiln_fused_exp_sin_0", "kiln_fused_multiply_1"]
    assert _calls_per_kernel(art.cpp, "exp") == {"kiln_fused_exp_sin_0": 1, "kiln_fused_multiply_1": 0}


def test_float_remainder_floor_division_logaddexp_broadcast_over_rows_are_computed_once():
    # The first two call fmod (NumPy's npy_divmod), logaddexp exp and log1p, yet each was
    # priced as one statement: ``pos %= box`` read as ``pos[:, None] - pos[None]``
    # (Lennard-Jones pair vectors) took two fmods per pair element, 40 per particle
    # coordinate (1.3x NumPy's CPU time on 40 particles).
    def fn(c, x):
        divmods = F.add(F.remainder(c, 5.0), F.floor_divide(c, 3.0))
        return F.multiply(divmods, x), F.multiply(F.logaddexp(c, 1.0), x)
    art = compile_and_check(fn, COLS, X.astype(np.float64))
    per_row = [k for k in art.kernel_names if "multiply" in k]   # (the 64 x 48 products)
    for name in ("kiln_remainder", "kiln_floor_divide", "kiln_logaddexp"):
        calls = _calls_per_kernel(art.cpp, name)
        assert sum(calls.values()) == 1 and all(calls[k] == 0 for k in per_row), (name, calls)


def test_column_statistics_read_back_per_element_are_computed_once_per_column():
    # (x - x.mean(0)) / x.std(0): the mean's division and the std's root were computed
    # again for every element of the last pass (and the mean once more in the variance's
    # pass): 31 us on 1000 x 10 against 13 us with a graph break between them. Now each is
    # a statement per column of the one kernel, and the passes over x read them.
    def zscore(x):
        return F.true_divide(F.subtract(x, F.mean(x, axis=0)), F.std(x, axis=0))
    art = compile_and_check(zscore, X.astype(np.float64))
    assert len(art.kernel_names) == 1
    assert art.wrapper.count("_empty(") == 1   # the column values live in the kernel
    body = re.split(r"static void \w+_body", art.cpp)[1].split("extern")[0]
    passes = re.findall(r"#pragma omp simd\n\s*for \([^)]*\) \{\n(.*?)\n\s*\}", body, re.S)
    assert len(passes) == 3, body   # the two sums, the squared deviations, the result
    assert not any("__builtin_sqrt" in p or "(double)64" in p for p in passes), passes


def test_broadcast_to_of_a_costly_value_is_computed_once():
    art = compile_and_check(lambda c, x: F.multiply(F.broadcast_to(F.tanh(c), shape=(64, 48)), x),
                            COLS, X.astype(np.float64))
    assert _calls_per_kernel(art.cpp, "tanh") == {"kiln_fused_tanh_0": 1, "kiln_fused_multiply_1": 0}


def test_sliding_windows_of_a_computed_value_are_a_view_of_it():
    # Frames of a pre-emphasized signal (audio): the windows of the closure recomputed it
    # at every element of a window (32 times here), and where a later view could not be
    # remapped (``[::hop]`` with a run-time hop) they were materialized whole (a 512-wide
    # window of 16000 samples wrote 31 MB: 40x NumPy's time). The signal is computed once
    # at its own size and windowed in memory.
    def frames(x):
        e = F.subtract(F.getitem(x, (slice(1, None),)), F.multiply(F.getitem(x, (slice(None, -1),)), 0.97))
        w = F.sliding_window_view(e, window_shape=(32,), axis=(0,))
        return F.multiply(F.getitem(w, (slice(None, None, 8),)), 2.0)
    art = compile_and_check(frames, np.random.default_rng(11).standard_normal(300).astype(np.float32))
    allocated = re.findall(r"_empty\(\(([^)]*)\)", art.wrapper)
    assert allocated == ["299,", "34, 32"], art.wrapper


def test_a_value_broadcast_along_inner_dims_stays_fused():
    # exp of a row's value against that row: constant in the inner loop, which the C
    # compiler hoists; realizing it would only add a kernel.
    art = compile_and_check(lambda r, x: F.multiply(F.exp(r), x), ROWS, X.astype(np.float64))
    assert len(art.kernel_names) == 1


def test_a_cheap_value_broadcast_over_rows_stays_fused():
    art = compile_and_check(lambda c, x: F.multiply(F.add(c, 1.0), x), COLS, X.astype(np.float64))
    assert len(art.kernel_names) == 1


def test_a_chain_too_deep_to_build_at_once_is_cut_into_kernels():
    # an unrolled elementwise recurrence (``for i in range(300): y = y * 0.999 + h``): its
    # 600 nested closures passed Python's recursion limit while the kernel was built, and
    # the graph ran as its NumPy program with a "please report" warning. Every
    # MAX_FUSED_CHAIN levels are realized, in a register of the same kernel.
    from kiln.runtime.backend import generate

    def chain(x):
        for _ in range(300):
            x = F.add(F.multiply(x, 0.999), 0.01)
        return (x,)
    a = np.linspace(0.0, 1.0, 8)
    g = trace(chain, [TensorMeta(a.shape, a.dtype)], ["x"])
    gen = generate(g, [a])
    assert len(gen.kernel_names) == 1 and gen.cpp.count(" * 0.999;") == 300


@pytest.mark.skipif(not __import__("kiln.lowering.cpp_ops", fromlist=["x"]).calls_svml(),
                    reason="kernels call NumPy's SVML functions only where NumPy does (AVX-512)")
def test_scalar_and_svml_calls_run_in_loops_of_their_own():
    # glibc's float64 sin keeps a loop scalar, and NumPy's SVML atan2 and pow then ran a
    # 512-bit vector per element (real20's ECEF to geodetic, np.sin(beta) ** 3 with
    # negative bases: 14x NumPy; np.sin(np.arctan2(z, p)): 4x). Each its own kernel now
    z, p = np.random.default_rng(9).standard_normal((2, 4096))
    art = compile_and_check(lambda z, p: (F.power(F.sin(F.arctan2(z, F.multiply(p, 0.99))), 3.0),
                                          F.cos(F.add(z, 1.0))), z, p, rtol=0)
    calls = [set(re.findall(r"\b(kiln_np_atan2|kiln_np_pow|sin|cos)\(", b)) for b in
             re.findall(r"_body\(.*?\n    \}\n\}", art.cpp, re.S)]
    assert set().union(*calls) == {"kiln_np_atan2", "kiln_np_pow", "sin", "cos"}, calls
    assert all(c <= {"sin", "cos"} or c <= {"kiln_np_atan2", "kiln_np_pow"} for c in calls), calls
