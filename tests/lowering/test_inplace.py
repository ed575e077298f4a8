"""In-place buffer reuse (kiln/lowering/inplace.py): a kernel output written over an input
that dies with the kernel. Every case compares values against the NumPy interpreter, and
checks the wrapper and kernel text for whether the reuse happened."""
import re

import numpy as np
import pytest

from kiln.ir import trace
from kiln.ops import F, TensorMeta

from .helpers import assert_same, run_both

RNG = np.random.default_rng(11)


def _arr(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _compile(fn, inputs):
    names = [f"a{i}" for i in range(len(inputs))]
    g = trace(fn, [TensorMeta(a.shape, a.dtype) for a in inputs], names)
    keep = [a.copy() for a in inputs]
    expected, got, compiled = run_both(g, inputs)
    for i, (e, r) in enumerate(zip(expected, got)):
        assert_same(f"out{i}", e, r, rtol=2e-5, atol=1e-5)
    for a, k in zip(inputs, keep):  # inputs are never written over
        np.testing.assert_array_equal(a, k)
    art = compiled.kiln_artifact
    return art.wrapper, art.cpp


def _in_place(wrapper: str) -> list[tuple[str, str]]:
    return re.findall(r"^\s+(\w+) = (\w+)  # in place$", wrapper, re.M)


def test_bias_and_relu_write_over_the_matmul_result():
    x, w, b, w2 = _arr(32, 24), _arr(24, 16), _arr(16), _arr(16, 4)
    wrapper, cpp = _compile(
        lambda x, w, b, w2: (F.matmul(F.maximum(F.add(F.matmul(x, w), b), 0.0), w2),),
        [x, w, b, w2])
    [(out, src)] = _in_place(wrapper)
    assert re.search(rf"^\s+{src} = np\.asarray\(_ext_matmul\(", wrapper, re.M), wrapper
    assert f"in place: {out} is written over {src}" in cpp
    # the kernel has one pointer for both: the output is not a parameter of its own
    assert f"p_{out}" not in cpp and f"float* __restrict p_{src}" in cpp


def test_two_outputs_over_one_dead_input_take_it_once():
    x, w = _arr(16, 8), _arr(8, 8)
    wrapper, _ = _compile(lambda x, w: (F.exp(F.matmul(x, w)), F.negative(F.matmul(x, w))),
                          [x, w])
    sources = [src for _, src in _in_place(wrapper)]
    assert len(sources) == len(set(sources)), wrapper


def test_input_read_later_is_not_overwritten():
    # m is read again by the second matmul after the kernel: it must survive.
    x, w = _arr(8, 8), _arr(8, 8)

    def fn(x, w):
        m = F.matmul(x, w)
        return (F.matmul(F.tanh(m), m),)
    wrapper, _ = _compile(fn, [x, w])
    assert _in_place(wrapper) == [], wrapper


def test_graph_output_is_not_overwritten():
    x, w = _arr(16, 8), _arr(8, 8)

    def fn(x, w):
        m = F.matmul(x, w)
        return (m, F.sin(m))
    wrapper, _ = _compile(fn, [x, w])
    assert _in_place(wrapper) == [], wrapper


def test_graph_inputs_and_transposed_reads_are_not_overwritten():
    x = _arr(16, 16)
    wrapper, _ = _compile(lambda x: (F.add(F.exp(x), 1.0),), [x])
    assert _in_place(wrapper) == [], wrapper
    w = _arr(16, 16)
    # the kernel reads m transposed: element (i, j) is needed after (j, i) was written

    def fn(x, w):
        m = F.matmul(x, w)
        return (F.add(F.transpose(m, axes=(1, 0)), m),)
    wrapper, _ = _compile(fn, [x, w])
    assert _in_place(wrapper) == [], wrapper


def test_a_later_loop_of_the_same_kernel_reading_the_input_blocks_it():
    # softmax over a matmul result: m is read by the max loop and again by the exp loop,
    # so nothing written in the first loop may go over it.
    x, w = _arr(8, 12), _arr(12, 10)

    def softmax(x, w):
        m = F.matmul(x, w)
        e = F.exp(F.subtract(m, F.max(m, axis=(1,), keepdims=True)))
        return (F.true_divide(e, F.sum(e, axis=(1,), keepdims=True)),)
    wrapper, cpp = _compile(softmax, [x, w])
    for out, src in _in_place(wrapper):
        assert f"in place: {out} is written over {src}" in cpp


def test_a_later_loop_reading_the_input_blocks_reuse_by_an_earlier_one():
    # a = -m is stored in the max loop; |m - max| reads m again in the next loop. (One op
    # that may raise: a kernel telling several apart takes no intermediate's memory,
    # CppRenderer.reruns_only_fresh.)
    x, w = _arr(8, 12), _arr(12, 10)

    def fn(x, w):
        m = F.matmul(x, w)
        a = F.negative(m)
        return (a, F.absolute(F.subtract(m, F.max(a, axis=(1,), keepdims=True))))
    wrapper, _ = _compile(fn, [x, w])
    a_buf, e_buf = re.search(r"return \((\w+), (\w+)\)", wrapper).groups()
    # the exp loop may write over m (it reads each element before writing it); a may not
    assert [out for out, _ in _in_place(wrapper)] == [e_buf], wrapper


def test_einsum_results_may_be_views_and_are_not_reused():
    x = _arr(12, 12)
    wrapper, _ = _compile(lambda x: (F.multiply(F.einsum((x,), subscripts="ij->ji"), 2.0),), [x])
    assert _in_place(wrapper) == [], wrapper


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_dtype_change_blocks_reuse_and_same_dtype_allows_it(dtype):
    x = (_arr(8, 8, dtype=np.float64) * 4).astype(dtype)
    w = (_arr(8, 8, dtype=np.float64) * 4).astype(dtype)
    wrapper, _ = _compile(lambda x, w: (F.matmul(F.greater(F.matmul(x, w), 0), w),), [x, w])
    assert _in_place(wrapper) == [], wrapper  # bool output, int/float input
    wrapper, _ = _compile(lambda x, w: (F.matmul(F.multiply(F.matmul(x, w), 3), w),), [x, w])
    assert len(_in_place(wrapper)) == 1, wrapper


def test_chain_of_kernels_and_repeated_calls_stay_correct():
    x, w1, w2 = _arr(64, 32), _arr(32, 48), _arr(48, 8)

    def mlp(x, w1, w2):
        h = F.maximum(F.add(F.matmul(x, w1), 0.5), 0.0)
        o = F.tanh(F.matmul(h, w2))
        return (F.multiply(o, o), F.sum(h, axis=(0,)))
    g = trace(mlp, [TensorMeta(a.shape, a.dtype) for a in (x, w1, w2)], ["x", "w1", "w2"])
    expected, got, fn = run_both(g, [x, w1, w2])
    assert _in_place(fn.kiln_artifact.wrapper)
    for _ in range(3):  # pools and reused buffers across calls
        again = fn(x, w1, w2)
        for i, (e, r) in enumerate(zip(expected, again)):
            assert_same(f"out{i}", e, r, rtol=2e-5, atol=1e-5)


# -- the caller's arrays: a mutated argument's new value computed in its own memory ------

def _compiled_wrapper(fn, *args):
    import kiln
    compiled = kiln.compile(fn, backend="cpp")
    got = compiled(*args)
    aot = compiled.cache_entries[0].check.__globals__["_kiln_graph"]
    (variant,) = aot.variants.values()
    return got, variant.forward.kiln_artifact.wrapper


def _check_against_numpy(fn, *args):
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*want_args)
    got, wrapper = _compiled_wrapper(fn, *args)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    for a, w in zip(args, want_args):
        np.testing.assert_array_equal(a, w)
    return wrapper


def test_argument_updated_in_place_is_written_in_place():
    def fn(x, y):
        x += 2.0 * y
        return x.sum()
    x = np.arange(6.0)
    before = x.__array_interface__["data"][0]
    wrapper = _check_against_numpy(fn, x, np.ones(6))
    assert ("buf0", "x") in _in_place(wrapper), wrapper
    assert x.__array_interface__["data"][0] == before


def test_strided_and_transposed_arguments_are_written_in_place():
    # ``a += b`` on a = base[:, ::2] (or a transpose, or reversed rows): the kernel stores
    # with a's strides into a itself, not into a contiguous temporary that aot's epilogue
    # copied back (two passes: 0.49x NumPy at 200x500)
    def iadd(a, b):
        a += b
        return a

    rng = np.random.default_rng(21)
    for view in (lambda x: x[:, ::2], lambda x: x.T, lambda x: x[::-1, 1::2]):
        base = rng.standard_normal((12, 16))
        a, b = view(base), rng.standard_normal(view(base).shape)
        want_base = base.copy()
        iadd(view(want_base), b)
        got, wrapper = _compiled_wrapper(iadd, a, b)
        assert got is a
        np.testing.assert_array_equal(base, want_base)
        assert ("buf0", "a") in _in_place(wrapper), wrapper


def test_strided_argument_read_from_other_elements_keeps_its_temporary():
    # the layout taken from the caller's array is put back when the write cannot go there
    def fn(a, b):
        a += a[::-1] * b
        return a

    base = np.random.default_rng(22).standard_normal((10, 24))
    wrapper = _check_against_numpy(fn, base[:, ::2], np.ones((10, 12)))
    assert not any(src == "a" for _, src in _in_place(wrapper)), wrapper


def test_new_value_read_from_other_elements_is_not_written_in_place():
    def reverse(x, y):
        np.copyto(x, x[::-1] + y)
        return x
    wrapper = _check_against_numpy(reverse, np.arange(1001.0), np.ones(1001))
    assert not any(src == "x" for _, src in _in_place(wrapper)), wrapper

    def stencil(x, y):  # the stencil is computed first; only the last kernel writes x
        x[1:-1] = 0.5 * (x[:-2] + x[2:]) + y[1:-1]
        x *= 2.0
        return x
    _check_against_numpy(stencil, np.arange(8.0), np.ones(8))


def test_argument_read_after_its_update_is_not_written_in_place():
    def fn(x):
        old = x * 1.0
        x *= 3.0
        return x - old.sum(), np.sin(x)
    x = np.linspace(0, 1, 5)
    want = fn(x.copy())
    got, wrapper = _compiled_wrapper(fn, x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    np.testing.assert_allclose(x, np.linspace(0, 1, 5) * 3.0, rtol=1e-15)


def test_training_calls_never_write_arguments_early():
    import kiln

    def fn(w, x):
        x += 1.0
        return (w * x).sum()
    w = kiln.tensor(np.ones(3), requires_grad=True)
    x = np.arange(3.0)
    compiled = kiln.compile(fn, backend="cpp")
    compiled(w, x).backward()
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 2.0, 3.0])


def _writes_into(wrapper: str, name: str = r"\w+") -> list[str]:
    """The wrapper's in-place scatters into ``name``: ``A[i] = v`` lines (the generated
    wrapper writes an in-place index_put as a subscript, lowering/wrapper.py)."""
    return re.findall(rf"^\s+{name}\[.*\] = .*$", wrapper, re.M)


def test_element_writes_in_a_recurrence_are_done_in_place():
    # e[i] = f(e[i-1]) unrolled: each index_put writes into the array nothing reads
    # again, instead of copying it (the loop was quadratic in the array's length).
    # (The weight is a tuple item picked by i's value, so the loop is unrolled, not a
    # loop node.)
    def ema(x):
        e = np.empty_like(x)
        e[0] = x[0]
        weights = (0.3, 0.4)
        for i in range(1, len(x)):
            e[i] = weights[i % 2] * x[i] + 0.7 * e[i - 1]
        return e

    def keeps_the_old_value(x):
        e = x * 1.0
        old = e
        e = e.copy()
        e[0] = 5.0
        return e, old    # old is read after the write: never written in place

    x = np.random.default_rng(2).standard_normal(12)
    got, wrapper = _compiled_wrapper(ema, x)
    np.testing.assert_allclose(got, ema(x), rtol=1e-15)
    assert len(_writes_into(wrapper)) >= 10, wrapper
    got, _ = _compiled_wrapper(keeps_the_old_value, x)
    for g, w in zip(got, keeps_the_old_value(x)):
        np.testing.assert_array_equal(g, w)


def test_put_and_place_write_a_pooled_temporary_in_place():
    # np.fill_diagonal (np.put) and np.place on a kernel's result nothing else reads: the
    # extern ran on a copy of it, as the result was a pooled buffer (2000x2000 float32
    # ``d = r2 * 2; np.fill_diagonal(d, 0)`` took 8x NumPy's time). Now the pool takes the
    # written array: returned, the caller's array is never handed to the next call.
    def zero_diag_and_place(x, m):
        d = x * 2.0
        np.fill_diagonal(d, 0)
        p = x + 1.0
        np.place(p, m, [7.0, 8.0])
        return d, p.sum(axis=0)
    rng = np.random.default_rng(6)
    x, m = rng.standard_normal((96, 96)), rng.random((96, 96)) > 0.5   # pooled: over 64 KiB
    got, wrapper = _compiled_wrapper(zero_diag_and_place, x, m)
    assert "_inplace_put_values(" in wrapper and "_inplace_placed(" in wrapper, wrapper
    import kiln
    compiled = kiln.compile(zero_diag_and_place, backend="cpp")
    first = compiled(x, m)
    held = first[0].copy()
    for k in range(3):   # the pools across calls
        y = x + k
        want, again = zero_diag_and_place(y, m), compiled(y, m)
        for w, g in zip(want, again):
            np.testing.assert_array_equal(g, w)
        assert again[0] is not first[0]
    np.testing.assert_array_equal(first[0], held)


def test_scatter_into_an_argument_writes_the_argument_itself():
    # A[idx] = v on a big argument: NumPy writes 100 elements; the functional graph copied
    # A, scattered into the copy and copied it back (3x slower than NumPy on 1e6 floats).
    def scatter_then_sum(A, idx, v):
        A[idx] = v
        return A.sum()
    rng = np.random.default_rng(5)
    A = rng.standard_normal(10_000)
    idx = rng.integers(0, 10_000, 50)
    wrapper = _check_against_numpy(scatter_then_sum, A, idx, rng.standard_normal(50))
    assert _writes_into(wrapper, "A"), wrapper

    def two_scatters(N, M, i, j, v):   # the second may raise after the first wrote N
        N[i] = 7
        M[j] = v
        return N.sum() + M.sum()
    N, M = np.zeros(300, np.int64), np.zeros(300)
    wrapper = _check_against_numpy(two_scatters, N, M, np.arange(0, 300, 7),
                                   np.arange(5, 300, 11), 2.5)
    assert _writes_into(wrapper, "N") and _writes_into(wrapper, "M"), wrapper


def test_slice_updates_of_an_argument_are_all_written_in_place():
    # A basic-slice write into a float array cannot raise, so it does not keep earlier
    # writes off the caller's array, and each write after the first goes into the array
    # the one before wrote (the second and later ones copied u: u[1:] += x; u[::2] *= 2
    # at 1e6 elements ran at 0.2x NumPy).
    def updates(u, x):
        u[1:] += x
        u[::2] *= 2.0
        u[-1] = 0.0
        return u.sum()
    wrapper = _check_against_numpy(updates, np.arange(1000.0), np.ones(999))
    assert "_ext_index_put(" not in wrapper and len(_writes_into(wrapper)) == 3, wrapper


def test_writes_into_an_argument_read_before_and_after_are_in_place():
    # The old x read before the write (y = x * 2.0) and the new x after it: the fused
    # kernel read both, so the write copied all of x (and the epilogue copied it back);
    # now y is computed before the write, as NumPy does. x[1:] = x[:-1] (a value that is
    # a view of x) copied x too: NumPy's own assignment copies an overlapping value first.
    def around(x, i):
        y = x * 2.0
        x[i] = 5.0
        return y + x

    def shift(x):
        y = x * 2.0
        x[1:] = x[:-1]
        return y - x

    def two(x):   # a chain of writes: y is computed before the first
        y = x * 2.0
        x[0] = 1.0
        x[1] = 2.0
        return y + x
    for fn, args in ((around, (3,)), (around, (-1,)), (shift, ()), (two, ())):
        wrapper = _check_against_numpy(fn, np.arange(1000.0), *args)
        assert not re.search(r"_ext_index_put\w*\(x", wrapper), wrapper
        assert len(_writes_into(wrapper, "x")) == 1, wrapper


def test_scatter_into_an_argument_keeps_numpy_state_when_a_later_scatter_raises():
    import kiln

    def two_scatters(N, M, i, j):
        N[i] = 7
        M[j] = 1.5    # j out of bounds: NumPy has written N, not M
        return N.sum()
    compiled = kiln.compile(two_scatters, backend="cpp")
    for j in ([1, 2], [1, 400]):
        got_n, got_m = np.zeros(300, np.int64), np.zeros(300)
        want_n, want_m = np.zeros(300, np.int64), np.zeros(300)
        args = (np.arange(0, 300, 7), np.array(j))
        try:
            want = two_scatters(want_n, want_m, *args)
        except IndexError as e:
            with pytest.raises(IndexError, match=str(e)):
                compiled(got_n, got_m, *args)
        else:
            assert compiled(got_n, got_m, *args) == want
        np.testing.assert_array_equal(got_n, want_n)
        np.testing.assert_array_equal(got_m, want_m)


def test_scatter_reading_the_argument_first_is_not_given_it_when_later_steps_raise():
    # x[i] += v reads x before it writes: a replay after a later error would add twice.
    def add_then_scatter(x, y, i, j):
        x[i] += 1.0
        y[j] = x[1]     # after x's write (it reads it), and may raise
        return x.sum()
    x, y = np.zeros(50), np.zeros(50)
    wrapper = _check_against_numpy(add_then_scatter, x, y, np.array([1, 3]), np.array([4]))
    assert not _writes_into(wrapper, "x"), wrapper
    assert _writes_into(wrapper, "y"), wrapper


def test_scatter_of_a_value_that_may_warn_in_its_cast_is_not_given_the_argument():
    def put_floats(N, i, v):
        N[i] = v        # float -> int: NaN would warn after writing
        return N.sum()
    wrapper = _check_against_numpy(put_floats, np.zeros(40, np.int64), np.array([2, 5]),
                                   np.array([1.0, 2.0]))
    assert not _writes_into(wrapper, "N"), wrapper


def test_a_gathers_result_is_written_over_and_a_small_int_write_keeps_the_argument_in_place():
    """``y = x[idx]; y[0] = 99``: a gather's result is always a new array (Op.fresh_result),
    so the kernel writes over it instead of into a copy; ``z[0] = -1`` after ``x[idx[:2]]
    += 1`` cannot raise (a Python int no float overflows on), so that scatter writes into
    the caller's x instead of copying it (slow13)."""
    from tests.test_programs_apps_code import fancy_copies_and_view_writes
    # (40 rows and a 40-long idx: both writes are scatters, and y, z and x one shape)
    wrapper = _check_against_numpy(fancy_copies_and_view_writes, RNG.standard_normal((40, 60)),
                                   np.array([2, 0, 1, 1, 39] * 8))
    call = wrapper.split("def call")[1]
    (g,) = re.findall(r"^\s+(\w+) = (?:np\.asarray\()?_ext_index\(x, \(idx,\)\)", call, re.M)
    assert g in [src for _, src in _in_place(call)] or _writes_into(call, g), wrapper
    assert _writes_into(call, "x"), wrapper


def _two_steps(A, B):
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
    A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def _two_steps_then_gather(A, B, idx):
    _two_steps(A, B)
    return B[idx]


def _wrappers(path) -> str:
    import os
    return "".join(open(os.path.join(path, d, "wrapper.py")).read() for d in sorted(os.listdir(path)))


def _scale(x, i):
    x[0] = 7.0
    x *= 2.0
    return x[i]


def _reversed_sum(x, i):
    x[0] = 7.0
    x += x[::-1]
    return x[i]


def _old_too(x, i):
    y = x * 1.0
    x[0] = 7.0
    x *= y
    return x[i]


def test_a_scatter_then_an_update_of_the_argument_write_it_in_place(tmp_path, monkeypatch):
    # x[0] = 7; x *= 2 over dynamic sizes (the scatter an extern): it copied x, and the
    # kernel wrote the product over x (mutate_then_raise at 30x40: 5.4 us against NumPy's
    # 2.2). Now the scatter writes x and the kernel takes its result in place. Not where
    # the kernel reads the scattered value at other elements (x += x[::-1]), nor where a
    # kernel reads x's old value after the scatter.
    import kiln
    from kiln.config import config
    for k, fn in enumerate((_scale, _reversed_sum, _old_too)):
        monkeypatch.setattr(config, "debug_dir", str(tmp_path / str(k)))
        compiled = kiln.compile(fn)
        for n, i in ((16, 1), (24, -2), (20, 3)):   # the second call: dynamic sizes
            x, want_x = np.arange(n * 3.0).reshape(n, 3), np.arange(n * 3.0).reshape(n, 3)
            np.testing.assert_array_equal(compiled(x, i), fn(want_x, i))
            np.testing.assert_array_equal(x, want_x)
        call = _wrappers(tmp_path / str(k)).split("def call")[-1]
        assert "s0" in call and bool(_writes_into(call, "x")) == (fn is _scale), call


def test_a_scatter_into_a_donated_input_writes_it_in_place(tmp_path, monkeypatch):
    """``A[1:-1, 1:-1] = f(B)`` after a kernel read ``A``: an extern scatter whose result
    is ``A``'s new value writes into ``A`` (kiln/lowering/memory.py), not into a copy that
    aot's epilogue copies back; with a call that may raise, an error leaves both arrays
    as NumPy leaves them."""
    import kiln
    from kiln.config import config
    monkeypatch.setattr(config, "debug_dir", str(tmp_path / "a"))
    rng = np.random.default_rng(0)
    A0, B0 = rng.random((12, 12)), rng.random((12, 12))
    a, b = A0.copy(), B0.copy()
    kiln.compile(_two_steps)(a, b)
    a2, b2 = A0.copy(), B0.copy()
    _two_steps(a2, b2)
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(b, b2)
    # the kernel computing A's inside stores it there (lowering/window_writes.py): no
    # scatter copies it, into A or into a copy of A
    w = _wrappers(tmp_path / "a")
    call = w.split("def call")[1]
    assert "= A  # in place" in w and "index_put(" not in call and not _writes_into(call), w

    compiled = kiln.compile(_two_steps_then_gather)
    for idx in (np.array([0, 3]), np.array([0, 40])):
        a, b, a2, b2 = A0.copy(), B0.copy(), A0.copy(), B0.copy()
        try:
            want = _two_steps_then_gather(a2, b2, idx)
        except IndexError:
            with pytest.raises(IndexError):
                compiled(a, b, idx)
        else:
            np.testing.assert_array_equal(compiled(a, b, idx), want)
        np.testing.assert_array_equal(a, a2)
        np.testing.assert_array_equal(b, b2)


@pytest.mark.parametrize("strides", [(8, 8), (0, 8)])
def test_a_donated_input_whose_elements_overlap_is_not_written_in_place(strides):
    """A caller's array whose elements overlap one another (``as_strided`` windows, a zero
    stride) is not written by the kernel in place, though donated: the kernel would read
    back its own stores. aot runs such calls as Python (InputsOverlap), so this guards a
    graph handed to the backend directly; its epilogue's copy gives NumPy's values."""
    from numpy.lib.stride_tricks import as_strided
    from kiln.runtime import cpp_backend

    def windows():
        return as_strided(np.arange(10.0), (8, 3), strides)

    g = trace(lambda w: (F.add(F.multiply(w, 2.0), 1.0),), [TensorMeta((8, 3), np.float64)], ["w"])
    g.donated = {0: 0}
    w, want = windows(), windows()
    want[...] = want * 2 + 1
    (new,) = cpp_backend(g, [w])(w)
    np.copyto(w, new)   # (aot's epilogue)
    np.testing.assert_array_equal(w.base, want.base)
    assert "in place" not in cpp_backend(g, [w]).kiln_artifact.wrapper


def _products_into(a, b, out, out2, out3):
    r = np.matmul(a, b, out=out)
    np.clip(out, -1, 1, out=out)
    out3[...] = b.T @ a.T
    return r, np.dot(a, b, out=out2), out3


def test_matmul_and_dot_with_out_write_into_the_callers_array(tmp_path, monkeypatch):
    """``np.matmul(a, b, out=c)`` (then ``np.clip(c, -1, 1, out=c)``), ``np.dot(a, b,
    out=d)`` and ``e[...] = a @ b``: the extern writes into the caller's C-contiguous
    array, as NumPy does for out=, and the kernel after clips it there; no temporary the
    size of the result (it cost a 500x64 cosine similarity 1.1-1.2x NumPy's time). A
    Fortran-ordered ``out`` or one the product reads keeps the temporary. Values, the returned objects and the arrays written
    match NumPy's."""
    import kiln
    from kiln.config import config
    monkeypatch.setattr(config, "debug_dir", str(tmp_path / "d"))
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((6, 5)) * 0.5, rng.standard_normal((5, 6)) * 0.5
    sq = rng.standard_normal((6, 6)) * 0.5
    compiled = kiln.compile(_products_into)
    def reads_out():   # the product reads the array it writes
        c = sq.copy()
        return sq, c, c, np.zeros((6, 6)), np.zeros((6, 6))
    cases = [lambda: (a, b, np.zeros((6, 6)), np.zeros((6, 6)), np.zeros((6, 6))),
             lambda: (a, b, np.zeros((6, 6), order="F"), np.zeros((6, 6)), np.zeros((6, 6), order="F")),
             reads_out]
    for k, make in enumerate(cases):
        mine, theirs = make(), make()
        got, want = compiled(*mine), _products_into(*theirs)
        for g, w, m, t in zip(got, want, mine[2:], theirs[2:]):
            assert (g is m) and (w is t), k
            assert g.flags.f_contiguous == w.flags.f_contiguous
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(mine[2], theirs[2])
    # per compiled variant: the externs given an array to write into, and which
    calls = [w.split("def call")[1] for w in _wrappers(tmp_path / "d").split("_respecialize(*args)")[1:]]
    into = [sorted(re.findall(r"= _out_(\w+)\(.*, out=(\w+)\)$", c, re.M)) for c in calls]
    assert into[0] == [("dot", "out2"), ("matmul", "out"), ("matmul", "out3")], into
    assert not _writes_into(calls[0]), calls[0]   # no out3[...] = copy
    # (the Fortran-ordered out is written by the kernel; matmul's result may borrow out2
    # as scratch, which the kernel reads before it stores dot's result there)
    # (the product reading its out: matmul keeps a temporary; dot's out2, which nothing
    # reads, is still written in place)
    assert all(target not in ("out", "out3") for _, target in into[1]) and \
        all(op != "matmul" for op, _ in into[2]), into
