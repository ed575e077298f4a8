"""Operands of extern calls (matmul): closures seen through views, kernel order, buffers.

A closure consumed by a matmul through a transpose is computed in its own C-contiguous
layout and the matmul gets the view (as NumPy code passes ``a.T``); views that drop,
repeat or reverse elements still get a buffer of their own. The checks are on values
(against NumPy) and on the generated wrapper's structure.
"""
import re

import numpy as np
import pytest

from kiln.aot import build_joint, min_cut_partition
from kiln.ir import trace
from kiln.ops import F, TensorMeta
from kiln.runtime import cpp_backend

from .helpers import assert_same, run_both

RNG = np.random.default_rng(7)


def _arr(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _allocations(wrapper: str) -> list[tuple]:
    return [eval(m) for m in re.findall(r"_empty\((\([^)]*\))", wrapper)]


def _kernel_calls(wrapper: str) -> list[str]:
    return re.findall(r"^\s+(kiln_fused_\w+)\(.*_NT\)$", wrapper, re.M)


def _compile(fn, inputs, names):
    g = trace(fn, [TensorMeta(a.shape, a.dtype) for a in inputs], names)
    expected, got, compiled = run_both(g, inputs)
    for i, (e, r) in enumerate(zip(expected, got)):
        assert_same(f"out{i}", e, r, rtol=2e-5, atol=1e-5)
    return compiled.kiln_artifact.wrapper


def test_transposed_relu_feeds_matmul_as_a_view():
    h, d = _arr(64, 48), _arr(64, 5)
    h[::7, ::5] = 0.0  # ties
    wrapper = _compile(lambda h, d: (F.matmul(F.transpose(F.maximum(h, 0.0), axes=(1, 0)), d),),
                       [h, d], ["h", "d"])
    assert (64, 48) in _allocations(wrapper) and (48, 64) not in _allocations(wrapper), wrapper
    assert re.search(r"_view_transpose\(buf\d+, axes=\(1, 0\)\)", wrapper), wrapper


@pytest.mark.parametrize("case", ["swapaxes_batched", "split_reshape", "transpose_of_transpose",
                                  "dtype_float64"])
def test_bijective_views_of_closures_into_matmul(case):
    if case == "swapaxes_batched":
        x, y = _arr(3, 16, 8), _arr(3, 16, 4)
        fn = lambda x, y: (F.matmul(F.swapaxes(F.exp(x), axis1=1, axis2=2), y),)
        natural, copied = (3, 16, 8), (3, 8, 16)
    elif case == "split_reshape":
        x, y = _arr(12, 32), _arr(8, 5)
        fn = lambda x, y: (F.matmul(F.reshape(F.tanh(x), shape=(48, 8)), y),)
        natural, copied = (12, 32), (48, 8)
    elif case == "transpose_of_transpose":
        x, y = _arr(10, 6), _arr(6, 3)
        fn = lambda x, y: (F.matmul(F.transpose(F.transpose(F.sin(x), axes=(1, 0)), axes=(1, 0)), y),)
        natural, copied = (10, 6), (6, 10)
    else:
        x, y = _arr(20, 9, dtype=np.float64), _arr(20, 4, dtype=np.float64)
        fn = lambda x, y: (F.matmul(F.transpose(F.multiply(x, 3.0), axes=(1, 0)), y),)
        natural, copied = (20, 9), (9, 20)
    wrapper = _compile(fn, [x, y], ["x", "y"])
    allocs = _allocations(wrapper)
    assert natural in allocs, wrapper
    if copied != natural:
        assert copied not in allocs, wrapper


@pytest.mark.parametrize("case", ["slice", "flip", "broadcast", "step_slice_transpose"])
def test_non_bijective_views_still_get_their_own_buffer(case):
    x, y = _arr(16, 12), _arr(16, 3)
    fns = {
        "slice": lambda x, y: (F.matmul(F.transpose(F.getitem(F.exp(x), (slice(0, 8),)), axes=(1, 0)),
                                        F.getitem(y, (slice(0, 8),))),),
        "flip": lambda x, y: (F.matmul(F.transpose(F.flip(F.exp(x), axis=0), axes=(1, 0)), y),),
        "broadcast": lambda x, y: (F.matmul(F.broadcast_to(F.exp(F.getitem(x, (slice(0, 1),))), shape=(16, 12)),
                                            F.getitem(y, (slice(0, 12),))),),
        "step_slice_transpose": lambda x, y: (F.matmul(F.transpose(F.getitem(F.exp(x), (slice(None, None, 2),)),
                                                                   axes=(1, 0)),
                                                       F.getitem(y, (slice(None, None, 2),))),),
    }
    _compile(fns[case], [x, y], ["x", "y"])


def test_view_operand_and_kernel_reader_share_one_buffer():
    # The same transposed closure goes to a matmul and to a kernel: values stay right.
    h, d = _arr(32, 24), _arr(32, 4)
    fn = lambda h, d: (F.matmul(F.transpose(F.maximum(h, 0.0), axes=(1, 0)), d),
                       F.add(F.transpose(F.maximum(h, 0.0), axes=(1, 0)), 1.0))
    _compile(fn, [h, d], ["h", "d"])


def _mlp(x, y1h, w1, b1, w2, b2):
    h = F.maximum(F.add(F.matmul(x, w1), b1), 0.0)
    logits = F.add(F.matmul(h, w2), b2)
    z = F.subtract(logits, F.max(logits, axis=(1,), keepdims=True))
    lse = F.log(F.sum(F.exp(z), axis=(1,), keepdims=True))
    return F.true_divide(F.negative(F.sum(F.multiply(y1h, F.subtract(z, lse)))), x.shape[0])


def _mlp_graphs(b=32, d_in=40, hidden=24, classes=5):
    x = _arr(b, d_in)
    y1h = np.eye(classes, dtype=np.float32)[RNG.integers(0, classes, b)]
    params = [_arr(d_in, hidden), _arr(hidden), _arr(hidden, classes), _arr(classes)]
    ins = [x, y1h, *params]
    g = trace(_mlp, [TensorMeta(a.shape, a.dtype) for a in ins], ["x", "y1h", "w1", "b1", "w2", "b2"])
    part = min_cut_partition(build_joint(g, [False, False, True, True, True, True]))
    return part, ins, (b, d_in, hidden, classes)


def test_mlp_backward_passes_the_relu_transposed_and_fuses_the_mask():
    part, ins, (b, d_in, hidden, classes) = _mlp_graphs()
    fw_inputs = ins
    fw_out = part.forward(*fw_inputs)
    saved = list(fw_out[1:])
    tangent = np.float32(1.0)
    bw = cpp_backend(part.backward, saved + [tangent])
    assert bw is not part.backward
    expected = part.backward(*saved, tangent)
    got = bw(*saved, tangent)
    for i, (e, r) in enumerate(zip(expected, got)):
        assert_same(f"grad{i}", e, r, rtol=2e-5, atol=1e-6)
    wrapper = bw.kiln_artifact.wrapper
    allocs = _allocations(wrapper)
    assert (hidden, b) not in allocs, wrapper  # no transposed copy of the relu output
    # relu (for dw2), the relu mask (dh) and its column sum (db1) are one kernel.
    calls = _kernel_calls(wrapper)
    assert len([k for k in calls if "maximum" in k]) == 1, wrapper
    # softmax gradient, its column sum (db2), relu + mask + db1: the matmul that reads the
    # relu waits for the kernel instead of splitting it in two.
    assert len(calls) == 3, wrapper


def test_mlp_forward_writes_the_saved_relu_input_in_the_relu_kernel():
    part, ins, _ = _mlp_graphs()
    fw = cpp_backend(part.forward, ins)
    expected, got = part.forward(*ins), fw(*ins)
    for i, (e, r) in enumerate(zip(expected, got)):
        assert_same(f"out{i}", e, r, rtol=2e-5, atol=1e-6)
    calls = _kernel_calls(fw.kiln_artifact.wrapper)
    # bias+relu (writing the saved pre-activation too), softmax statistics, loss: no second
    # pass over the matmul result to store the saved values.
    assert len(calls) == 3, calls
    assert not any(re.fullmatch(r"kiln_fused_add_\d+", c) for c in calls), calls


def test_pooled_buffer_reused_under_another_name_returns_to_its_pool():
    # buf A (pooled, >= 64 KiB) dies; buf B of the same shape reuses it: the array must go
    # back to A's pool at the end so the next call does not fault in fresh pages.
    x, w = _arr(128, 256), _arr(256, 256) * 0.05
    fn = lambda x, w: (F.matmul(F.exp(F.matmul(F.sin(x), w)), w),)
    wrapper = _compile(fn, [x, w], ["x", "w"])
    for pool in re.findall(r"^(_pool_buf\d+) = \[\]$", wrapper, re.M):
        assert f"{pool}.append(" in wrapper, wrapper


def _hazard(t, e):
    uniq, first = np.unique(t, return_index=True)
    deaths = np.add.reduceat(e, first)
    return uniq, deaths / (t.size - first)


def test_reduceat_over_an_unbacked_size_keeps_its_indices_size():
    # reduceat had no shape rule over size symbols: its result got a size of its own, which
    # met first's in ``deaths / (t.size - first)`` and the whole graph ran in the NumPy
    # interpreter (real20's nelson_aalen: 1.25x NumPy; compiled 0.53x)
    import kiln
    made = []
    compiled = kiln.compile(_hazard, backend=lambda g, ex: made.append(cpp_backend(g, ex)) or made[-1])
    t, e = np.array([5.0, 3.0, 8.0, 3.0, 9.0, -0.0, 5.0, 0.0]), np.array([1, 1, 0, 1, 1, 0, 1, 0])
    for got, want in zip(compiled(t, e), _hazard(t, e), strict=True):
        assert got.dtype == want.dtype and np.array_equal(got, want) and \
            np.array_equal(np.signbit(got), np.signbit(want))
    assert [hasattr(m, "kiln_artifact") for m in made] == [True]


def test_parts_of_a_closure_into_externs_share_one_realized_buffer():
    # real20's PACF: x = x - x.mean(), then np.dot(x[:n - k], x[k:]) a lag at a time; each
    # part was realized on its own (2 buffers per lag, the closure written again each
    # time): 21 lags of 20000 ran 12x NumPy's 117 us. The closure is realized once and the
    # dots get views of it, as NumPy passes views of x; a small part stays its own buffer
    x = _arr(64, dtype=np.float64)
    def fn(x):
        y, head = F.subtract(x, F.mean(x)), (slice(0, 8),)
        return tuple(F.dot(F.getitem(y, (slice(None, 64 - k),)), F.getitem(y, (slice(k, None),)))
                     for k in (1, 2)) + (F.dot(F.getitem(F.sin(x), head), F.getitem(x, head)),)
    allocs = _allocations(_compile(fn, [x], ["x"]))
    assert (64,) in allocs and not {(63,), (62,)} & set(allocs) and (8,) in allocs, allocs


def _standardized_gram(X, test):
    Xt = X[np.setdiff1d(np.arange(len(X)), test)]
    Z = (Xt - Xt.mean(0)) / Xt.std(0)
    return Z.T @ Z


def test_statistics_and_views_of_a_selection_s_rows_compile():
    # X[train] has a row count known only at run time: the mean's dtype rule asked whether
    # it is more than 1 (its sample array), and so did Z.T's remap of the closure; either
    # Undecidable sent the whole graph to the NumPy interpreter (real20's k-fold ridge)
    import kiln
    made = []
    compiled = kiln.compile(_standardized_gram, backend=lambda g, ex: made.append(cpp_backend(g, ex)) or made[-1])
    X, test = RNG.standard_normal((12, 3)), np.array([1, 5, 7])
    got, want = compiled(X, test), _standardized_gram(X, test)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert [hasattr(m, "kiln_artifact") for m in made] == [True]


def _tie_correction(a):
    _, inv, ties = np.unique(a, return_inverse=True, return_counts=True)
    return (ties ** 3 - ties).sum(), ties[inv]


def test_a_ufunc_run_as_numpy_s_call_on_an_unbacked_size_keeps_that_size():
    # ``ties ** 3`` of np.unique's int counts lowers to NumPy's call; its shape rule
    # broadcast with np.broadcast_shapes, which needs numbers: the result got a size of its
    # own, which met ties' in ``- ties``, and the whole graph ran in the NumPy interpreter
    # (real21's Kruskal-Wallis: 1.3x NumPy; compiled 0.5-0.8x)
    import kiln
    made = []
    compiled = kiln.compile(_tie_correction, backend=lambda g, ex: made.append(cpp_backend(g, ex)) or made[-1])
    for a in (np.array([3.0, 1.0, 3.0, 2.0, 2.0, 2.0]), np.array([1.0, 2.0, 3.0])):
        for got, want in zip(compiled(a), _tie_correction(a), strict=True):
            assert got.dtype == want.dtype and np.array_equal(got, want)
    assert made and all(hasattr(m, "kiln_artifact") for m in made)
