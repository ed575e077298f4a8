"""Dynamic dims: one C++ build serves every size; sizes are kernel arguments."""
import numpy as np

import kiln
from kiln.ir import trace
from kiln.ops import F, TensorMeta
from kiln.runtime import cpp_backend
from kiln.runtime.build import stats


def softmax_plus(x, b):
    e = F.exp(F.subtract(x, F.max(x, axis=1, keepdims=True)))
    return F.add(F.true_divide(e, F.sum(e, axis=1, keepdims=True)), b), F.sum(x, axis=0)


def test_dynamic_batch_dim_builds_once():
    x = np.random.default_rng(0).standard_normal((6, 10)).astype(np.float32)
    b = np.linspace(0, 1, 10, dtype=np.float32)
    g = trace(softmax_plus, [TensorMeta(x.shape, x.dtype), TensorMeta(b.shape, b.dtype)], ["x", "b"])
    g.placeholders[0].meta["dynamic_dims"] = (0,)
    fn = cpp_backend(g, [x, b])
    assert "n0" in fn.kiln_artifact.cpp and "x.shape[0]" in fn.kiln_artifact.wrapper
    builds = stats["builds"]
    for n in (2, 7, 33, 1000, 1):
        xn = np.random.default_rng(n).standard_normal((n, 10)).astype(np.float32)
        expected = g(xn, b)
        exact = xn.astype(np.float64).sum(axis=0)  # NumPy's float32 column sum is a naive one
        got = fn(xn, b)
        for e, r in zip(expected, got):
            assert r.shape == e.shape and r.dtype == e.dtype
        np.testing.assert_allclose(got[0], expected[0], rtol=2e-6, atol=1e-6)
        np.testing.assert_allclose(got[1], exact, rtol=1e-6, atol=1e-5)
    assert stats["builds"] - builds <= 1   # only size 1 (specialized) may build


def test_two_dynamic_dims():
    x = np.random.default_rng(1).standard_normal((4, 5))
    g = trace(lambda x: F.multiply(F.sin(x), F.sum(x, axis=1, keepdims=True)),
              [TensorMeta(x.shape, x.dtype)], ["x"])
    g.placeholders[0].meta["dynamic_dims"] = (0, 1)
    fn = cpp_backend(g, [x])
    for shape in [(3, 9), (17, 2), (4, 5)]:
        xs = np.random.default_rng(2).standard_normal(shape)
        np.testing.assert_allclose(fn(xs)[0], g(xs)[0], rtol=1e-12)


def test_kiln_compile_dynamic_true():
    def f(x):
        return np.tanh(x) * 2 + x.mean(axis=1, keepdims=True)
    compiled = kiln.compile(f, backend=cpp_backend, dynamic=True)
    builds = stats["builds"]
    for n in (3, 8, 20):
        x = np.random.default_rng(n).standard_normal((n, 16)).astype(np.float32)
        np.testing.assert_allclose(compiled(x), f(x), rtol=2e-6, atol=1e-6)
    assert stats["builds"] - builds <= 1


def test_first_example_of_another_size_and_layout_than_the_graph():
    # A graph captured at 8 rows, first compiled for a 6-row strided view (another thread
    # got there first): sizes come from the example, never from the captured metadata.
    g = trace(lambda x: (F.sum(F.multiply(x, x), axis=1),), [TensorMeta((8, 5), np.float64)], ["x"])
    g.placeholders[0].meta["dynamic_dims"] = (0,)
    base = np.arange(120.0).reshape(12, 10)
    fn = cpp_backend(g, [base[:6, :5]])
    for x in (base[:6, :5], base[:8, :5].copy(), base[:3, :5], base[:6, :5].copy()):
        np.testing.assert_array_equal(fn(x)[0], (x * x).sum(axis=1))


def test_both_dims_dynamic_compile_once_and_serve_twenty_shapes():
    # Sizes are symbols from the first call (dynamic=True): one capture, one lowering,
    # one g++ build for every shape; the elementwise part is one flat loop over s0*s1.
    def f(x, y):
        z = np.tanh(x) * y + 1.0
        return z.sum(axis=1), z * 2.0 - x.mean(axis=0)

    compiles = []

    def backend(graph, example_inputs):
        compiles.append(cpp_backend(graph, example_inputs))
        return compiles[-1]

    compiled = kiln.compile(f, backend=backend, dynamic=True)
    rng = np.random.default_rng(0)
    builds = stats["builds"]
    shapes = [(2 + (7 * k) % 13, 2 + (5 * k) % 31) for k in range(20)]
    assert len(set(shapes)) == 20
    for shape in shapes:
        x, y = rng.standard_normal(shape), rng.standard_normal(shape)
        got, want = compiled(x, y), f(x, y)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert len(compiles) == 1
    assert stats["builds"] - builds <= 1   # 0 when the kernel library is already cached
    cpp = compiles[0].kiln_artifact.cpp
    assert "s0*s1" in cpp and "int64_t s0, int64_t s1" in cpp


def test_concrete_slice_bounds_on_a_dynamic_dim():
    # x[1:-1], x[:-2], x[2:] have s0 - 2 elements for every s0 >= 2: no guard. x[:10]
    # has 10 only while s0 >= 10: a guard in the wrapper, another variant below it.
    def f(x):
        inner = F.add(F.sin(F.getitem(x, slice(1, -1))),
                      F.multiply(F.getitem(x, slice(None, -2)), F.getitem(x, slice(2, None))))
        return inner, F.sum(F.getitem(x, slice(None, 10))), F.getitem(F.flip(x), slice(None, 5))
    x = np.random.default_rng(3).standard_normal(12)
    g = trace(f, [TensorMeta(x.shape, x.dtype)], ["x"])
    g.placeholders[0].meta["dynamic_dims"] = (0,)
    fn = cpp_backend(g, [x])
    art = fn.kiln_artifact
    assert "iterates s0 - 2 elementwise" in art.cpp and "p_x[x0 + 2]" in art.cpp
    assert "not (-s0 + 10 <= 0)" in art.wrapper and "s0 - 2" not in art.wrapper.split("buf0")[0]
    builds = stats["builds"]
    for n in (12, 30, 57, 10, 11, 10_000):
        xn = np.random.default_rng(n).standard_normal(n)
        for e, r in zip(g(xn), fn(xn)):
            assert r.shape == e.shape
            np.testing.assert_allclose(r, e, rtol=1e-12)
    assert stats["builds"] - builds == 0
    x6 = np.arange(6.0)   # below the guard: its own variant, NumPy's answer
    for e, r in zip(g(x6), fn(x6)):
        assert r.shape == e.shape
        np.testing.assert_allclose(r, e, rtol=1e-12)


def test_each_kernel_takes_only_the_sizes_its_code_names():
    import re

    def two(x, y):
        return F.sum(F.sin(x)), F.multiply(F.cos(y), 2.0), F.sum(F.exp(y), axis=0)
    x, y = np.ones(7), np.ones((9, 3))
    g = trace(two, [TensorMeta(x.shape, x.dtype), TensorMeta(y.shape, y.dtype)], ["x", "y"])
    g.placeholders[0].meta["dynamic_dims"] = (0,)
    g.placeholders[1].meta["dynamic_dims"] = (0, 1)
    fn = cpp_backend(g, [x, y])
    calls = re.findall(r"^ +(kiln_fused_\w+\(.*\))$", fn.kiln_artifact.wrapper, re.M)
    sizes = [set(re.findall(r"\bs\d+\b", c)) for c in calls]
    # (every kernel took s0, s1, s2; cos and exp of y may be one kernel or two: glibc's
    # scalar cos and NumPy's SVML exp run apart on large arrays)
    assert any(c.startswith("kiln_fused_sin") for c in calls) and len(calls) in (2, 3), calls
    for c, s in zip(calls, sizes):
        assert s == ({"s0"} if "(x," in c else {"s1", "s2"}), calls
    for n, m in ((4, 5), (11, 2)):
        xn, yn = np.arange(n, dtype=float), np.arange(m * 3, dtype=float).reshape(m, 3)
        for got, want in zip(fn(xn, yn), g(xn, yn)):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def _half_precision_scaled(x, s):
    h = x.astype(np.float16) * s
    return h, np.isinf(h * np.float16(300.0))


def test_a_numpy_scalar_argument_without_a_kernel_dtype_keeps_its_dtype():
    # np.float16(0.5) is no kernel scalar (float16 ops are NumPy's calls); with dynamic
    # sizes the lowering infers dtypes again and saw it as dtype object: np.isinf of the
    # product raised "ufunc 'isinf' not supported for the input types"
    fn = kiln.compile(_half_precision_scaled, backend="cpp", dynamic=True)
    for n in (3, 5):
        x = np.linspace(0, 400, n)
        for s in (np.float16(0.5), np.float16(2.0)):
            with np.errstate(over="ignore"):
                got, want = fn(x, s), _half_precision_scaled(x, s)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and np.array_equal(g, w)



def gram_and_cov(x):
    h = np.maximum(x, 0.5)
    return np.cov(x), h @ h.T


def transposed_reductions(x):
    return x.T.sum(), (1 + x.T * 1e-3).prod(), x.T.mean(axis=1), np.cov(x.T)


def test_dynamic_sizes_keep_numpys_order_and_operands():
    """Bit for bit NumPy's with every size a symbol. ``X @ X.T`` of one buffer is NumPy's
    syrk: kiln realized the transpose as a copy of its own, so NumPy's matmul took gemm
    (np.cov 1 ulp off). NumPy walks x.T in memory order: x.T.sum() as one pairwise run,
    x.T's product in memory order, np.cov(x.T)'s F-ordered rows added one by one; with
    symbolic strides kiln's loops kept C order (1 to 60 ulp off) until the size bound
    (every dynamic size at least 2) settled 1 < s1 (plan.loop_order, reduce_order)."""
    x = np.random.default_rng(3).standard_normal((3, 50))
    for fn in (gram_and_cov, transposed_reductions):   # (apart: together x is realized anyway)
        for got, want in zip(kiln.compile(fn, dynamic=True)(x), fn(x), strict=True):
            np.testing.assert_array_equal(got, want, err_msg=fn.__name__)


def test_arguments_named_like_the_wrappers_size_symbols():
    # The wrapper names sizes s<n>, u<n> (known after an op ran: a selection's length, a
    # loop's row count), o<n> and k<n>; an argument called u0 was overwritten by
    # ``u0 = 0  # buf4.shape[0], once it is computed`` and a kernel was handed that int
    def fn(u0, u1, steps):
        hist = [np.sum(u0 ** 2)]
        u = u0.copy()
        for _ in range(steps):
            u = u * 0.5 + u1
            hist.append(np.sum(u ** 2))
        return u, np.array(hist)

    rng = np.random.default_rng(7)
    f = kiln.compile(fn)
    for steps in (4, 6):
        args = rng.random(8), rng.random(8), steps
        for e, r in zip(fn(*args), f(*args)):
            np.testing.assert_array_equal(r, e)


def test_a_reshape_to_sizes_the_lowering_cannot_compare_copies_nothing_first():
    # x.ravel() over dynamic (s0, s1) reshaped to the example's (3, 4) as numbers (aot
    # puts a write through x.ravel() back so): NumPy's reshape decides. The lowering also
    # realized a C-order copy of x first that nothing read, a kernel of loads only
    # launched on every call (layout_dependent_views: two of them).
    import re
    x = np.random.default_rng(5).standard_normal((3, 4))
    g = trace(lambda x: (F.reshape(F.ravel(x), shape=(3, 4)), F.exp(x)), [TensorMeta(x.shape, x.dtype)], ["x"])
    g.placeholders[0].meta["dynamic_dims"] = (0, 1)
    fn = cpp_backend(g, [x])
    # (the wrapper's launches pass _NT; a kernel's second body, the C++ text of its "told"
    # rerun that a CPU without exact flags for exp needs, is in the wrapper too)
    calls = re.findall(r"^ +(kiln_fused_\w+)\(.*_NT\)$", fn.kiln_artifact.wrapper, re.M)
    assert len(calls) == 1, fn.kiln_artifact.wrapper   # exp's
    got = fn(x)
    np.testing.assert_array_equal(got[0], x)
    # (bit for bit where the build calls NumPy's own exp, SVML with AVX-512; an AVX2 build's
    # inline exp is within 1 ulp of glibc's: docs/lowering.md, "kiln's own exp")
    np.testing.assert_allclose(got[1], np.exp(x), rtol=1e-15, atol=0)


def _leapfrog(u0, steps):
    u = u0.copy()
    prev = u.copy()
    for _ in range(steps):
        nxt = 2 * u - prev + 0.1 * (np.roll(u, 1, 0) - u)
        prev, u = u, nxt
    return u, np.abs(u).max(), prev.sum(axis=0)


def test_kernels_over_a_loop_nodes_results_take_its_sizes():
    """A loop node's result is a tuple; the kernels computing from its items (the max, the
    column sums) had the example's sizes, so a 30x30 call's max read 100 elements of u and
    a 10x10 call after a build for 30x30 read past its end (NaN, wave_equation_two_buffers
    with the cost model on: small, large, small). The items' sizes are the carried
    inputs' (lowering/externs.py ``_symbolic_tuple``)."""
    compiled = kiln.compile(_leapfrog, dynamic=True)
    rng = np.random.default_rng(2)
    for n, steps in ((10, 3), (30, 4), (10, 5), (7, 2)):
        u0 = rng.standard_normal((n, n))
        got, want = compiled(u0, steps), _leapfrog(u0, steps)
        for g, w in zip(got, want):
            assert type(g) is type(w) and np.array_equal(g, w), (n, steps)
    assert len(compiled.cache_entries) == 1


def _inverse_square_sums(p):
    r2 = (p[None] - p[:, None]).sum(-1) ** 2 + 0.1
    np.fill_diagonal(r2, np.inf)
    return (1.0 / r2).sum(1)


def test_positions_a_normalizer_worked_out_from_the_shape_guard_it():
    """np.fill_diagonal's positions (``a.flat[::n + 1]``) are an index array made from the
    example's shape: compiled for 20 points, then reused for 7 under dynamic sizes, it
    wrote position 201 of 49 (IndexError; verlet_pairwise_gravity with the cost model on).
    Such a call's sizes are guarded: each size its own entry, NumPy's values."""
    compiled = kiln.compile(_inverse_square_sums, dynamic=True)
    for n in (20, 30, 7, 20):
        p = np.random.default_rng(n).random((n, 2))
        np.testing.assert_array_equal(compiled(p), _inverse_square_sums(p))
    assert len(compiled.cache_entries) == 3
