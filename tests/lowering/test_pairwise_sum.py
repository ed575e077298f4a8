"""Float64 and float32 sums add in NumPy's pairwise order (kiln_pairwise in the C++ prelude), so
``x.sum()``, ``np.mean`` and row sums of fused expressions are NumPy's to the last bit, on
any thread count (a doctest printing ``np.mean(...)`` reads the same digits)."""
import numpy as np
import pytest

import kiln
from benchmarks.npbench import azimint_naive as binned_means   # the bins' masked means

from .helpers import each


def total(x):
    return x.sum()


def fused_mean(x):
    return np.mean(np.abs((x - 0.25) / x))


def row_sums(x):
    return (x * x).sum(axis=1), x.mean(axis=-1)


def strided(x):
    return x[::3].sum()


def variance(x):
    return x.var(), x.std(ddof=1)


SIZES = list(range(0, 40)) + [127, 128, 129, 255, 256, 257, 1000, 4099, 65536 + 13, 300_001]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_whole_array_sums_are_numpys_bit_for_bit(monkeypatch, threads, dtype):
    monkeypatch.setattr(kiln.config, "num_threads", threads)
    kiln.reset()
    rng = np.random.default_rng(threads)
    f, g = kiln.compile(total), kiln.compile(fused_mean)
    for n in SIZES:
        x = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dtype)
        assert f(x) == total(x), n            # exact: not allclose
        if n:
            assert g(x) == fused_mean(x), n



def every_kind(x, m):
    """A sum of each of kiln_pairwise's block forms: plain loads, strided loads (W 1), float32
    vector math (W 16), terms that read a bool array (W 0); and a selection's (its terms
    taken a block at a time, kiln_pairwise_taken)."""
    return (x.sum(), x[::2].sum(), np.exp(x.astype(np.float32) / 1000).sum(), np.where(m, x, 0).sum(),
            x[m].sum())


def test_every_length_is_numpys_bit_for_bit():
    """The prelude walks NumPy's tree of blocks with a stack, not by recursion: every
    length from 4 to 2200 (trees up to 5 levels deep, each block length and split), each
    block form, against NumPy's bits. One build (dynamic sizes; 0 to 3 are sizes of their
    own, the test above has them)."""
    rng = np.random.default_rng(17)
    f = kiln.compile(every_kind, dynamic=True)
    for n in range(4, 2200):
        x, m = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n), rng.random(n) < 0.5
        for got, want in zip(f(x, m), every_kind(x, m), strict=True):
            assert got.dtype == want.dtype and got == want, n   # exact: not allclose


def test_a_modules_pairwise_sums_compile_their_code_once():
    """g++ time (compile time is what a first call waits for): GCC inlined the recursive
    kiln_pairwise into itself, the term function's block loop copied at each level (half
    the g++ time of a module with a sum; a noinline recursion cost 15-25% at run time);
    each threaded sum compiled its own splits, parallel region and adding of the parts (as
    much g++ time as the sum: np.var's module 0.42 -> 0.27 s). The tree is walked by a
    loop, and a module's threaded sums of one dtype share one parallel region."""
    import re

    from .helpers import compiled_with_disassembly

    def two_sums(x):   # (threaded: 200,000 terms, each sum a term function of its own)
        return np.exp(x).sum(), (x * x).sum()
    f, disassembly = compiled_with_disassembly(two_sums)
    x = np.linspace(-1, 1, 200_000, dtype=np.float32)
    assert f(x) == two_sums(x)
    functions = {m.group(1): code for code in disassembly().split("\n\n")
                 if (m := re.match(r"[0-9a-f]+ <(.*)>:", code))}
    sums = [name for name in functions if re.match(r"\w+ kiln_pairwise<", name)]
    assert len(sums) == 2, list(functions)
    for name in sums:
        assert f"<{name}>" not in functions[name].split("\n", 1)[1], "kiln_pairwise calls itself"
    assert len([name for name in functions if "_omp_fn" in name]) == 1, list(functions)


def cast_sums(x):
    """Sums whose terms NumPy casts through its iterator's buffers on the way."""
    return (x.sum(dtype=np.float32), x.mean(dtype=np.float64), np.mean((x * 1e6).astype(np.int64)),
            x.astype(np.float32).sum(dtype=np.float64))


def cast_row_sums(x):
    return x.sum(axis=1, dtype=np.float32), np.mean((x * 1e6).astype(np.int64), axis=-1)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_sums_cast_on_the_way_are_numpys_bit_for_bit(monkeypatch, threads):
    """x.sum(dtype=np.float32) of float64, the mean of int64 or of float32 into float64:
    NumPy casts a buffer of 8192 terms at a time and adds each buffer pairwise; kiln added
    the terms in double SIMD lanes (different last bits: the int mean of 1000 values ~1e15)."""
    monkeypatch.setattr(kiln.config, "num_threads", threads)
    kiln.reset()
    rng = np.random.default_rng(threads + 10)
    f, g = kiln.compile(cast_sums), kiln.compile(cast_row_sums)
    for n in (5, 100, 1000, 8192, 8193, 20_000, 65536 + 13, 600_001):
        x = rng.standard_normal(n) * 10.0 ** rng.integers(0, 10, n)
        for got, want in zip(f(x), cast_sums(x)):
            assert got.dtype == want.dtype and got == want, n   # exact: not allclose
    for shape in ((3, 20_000), (7, 9000), (100, 100), (1000, 37)):
        x = rng.standard_normal(shape) * 10.0 ** rng.integers(0, 10, shape)
        for got, want in zip(g(x), cast_row_sums(x)):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_rows_strides_and_variance_are_numpys_bit_for_bit():
    rng = np.random.default_rng(1)
    f, s, v = kiln.compile(row_sums), kiln.compile(strided), kiln.compile(variance)
    for shape in ((50, 9), (20, 300), (7, 1000), (3, 129), (9, 5), (4, 23), (6, 48)):
        for x in (rng.standard_normal(shape), rng.standard_normal(shape).astype(np.float32)):
            for got, want in zip(f(x), row_sums(x)):
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)
    for n in (10, 500, 10_000):
        x = rng.standard_normal(n)
        assert s(x) == strided(x)
        assert v(x) == variance(x)


def test_row_sums_of_strided_rows_are_numpys_bit_for_bit():
    # x[:, ::2].sum(axis=1): NumPy adds each row pairwise (its iterator puts the axis with
    # the smaller stride innermost); kiln ran the kept axis innermost because the output is
    # unit-stride along it, adding column by column across rows, neither NumPy's bits nor
    # fast (0.6x NumPy at 200x500). The transposed array's row sums still run blocked.
    rng = np.random.default_rng(11)
    f = kiln.compile(row_sums)
    for dtype in (np.float64, np.float32):
        base = rng.standard_normal((60, 1000)).astype(dtype)
        for x in (base[:, ::2], base[:, 1::3], base[::2, ::-2], base[:, ::2].T):
            for got, want in zip(f(x), row_sums(x)):
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)


def test_float32_sums_take_16_lanes_only_for_vector_math_terms(capsys):
    # Terms 16 at a time pay for one vector exp per 16 lanes; a plain load through that
    # buffer stalled on the store-to-load forward (x[:, ::2].sum() in float32: 6x slower)
    def plain(x):
        return x.sum()

    def of_exp(x):
        return np.exp(x).sum()

    def widened(x):   # (terms cast to float64 on the way: NumPy's buffers of 8192)
        return x.sum(dtype=np.float64)

    x = np.random.default_rng(12).standard_normal((40, 600)).astype(np.float32)[:, ::2]
    code = {}
    for fn in (plain, of_exp, widened):
        kiln.set_logs(output_code=True)
        try:
            got = kiln.compile(fn)(x)
        finally:
            kiln.set_logs()
        assert got == fn(x)
        code[fn.__name__] = capsys.readouterr().err
    # (a strided plain load: the partial sums as scalars, W 1; as SIMD lanes GCC gathered
    # the loads, x[:, ::-2].sum(1) of 1000x2000 float32 1.6x slower)
    # (12,000 terms: below the parallel grain, kiln_pairwise itself, not its threaded form)
    assert "kiln_pairwise<float, 1>(term" in code["plain"]
    assert "kiln_pairwise<float, 16>(term" in code["of_exp"]
    assert "kiln_pairwise_chunks<double, 1>(term" in code["widened"]


def test_mean_absolute_percentage_error_prints_numpys_digits():
    """TheAlgorithms' loss_functions doctest: ``float(...)`` printed 0.06467107643607099
    compiled, 0.064671076436071 with NumPy (a SIMD reduction's order)."""
    def mape(y_true, y_pred, epsilon=1e-15):
        y_true = np.where(y_true == 0, epsilon, y_true)
        return np.mean(np.abs((y_true - y_pred) / y_true))
    y_true = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.5])
    y_pred = np.array([1.1, 2.1, 2.9, 4.1, 5.2, 5.9, 7.2, 7.7, 9.3, 10.1, 11.0])
    assert repr(float(kiln.compile(mape)(y_true, y_pred))) == repr(float(mape(y_true, y_pred)))


def summary(x):
    return x.max(), x.mean(), x.min(axis=-1), np.sum(x * 2, axis=-1), x.argmax(), float(x.mean())


@pytest.mark.parametrize("threads", [1, 2])
def test_sums_beside_other_reductions_are_numpys_bit_for_bit(monkeypatch, threads):
    """A sum in one loop with a max, a min or an argmax (``x.max(), x.mean()``) accumulated
    in double with SIMD lanes: a float32 mean one ulp off NumPy's. Such a sum is now its own
    pairwise pass, as NumPy's is."""
    monkeypatch.setattr(kiln.config, "num_threads", threads)
    kiln.reset()
    rng = np.random.default_rng(5)
    f = kiln.compile(summary, dynamic=True)
    g = kiln.compile(summary)
    for shape in ((3, 4), (5, 7), (2, 33), (17,), (4, 300), (1, 5000)):
        for dtype in (np.float32, np.float64):
            x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dtype)
            want = summary(x)
            for got in (f(x), g(x)):
                for a, b in zip(got, want):
                    assert type(a) is type(b) and np.asarray(a).dtype == np.asarray(b).dtype
                    np.testing.assert_array_equal(a, b)


def _cpp_of(fn, *args):
    from kiln.runtime import cpp_backend
    seen = []

    def backend(graph, example_inputs):
        seen.append(cpp_backend(graph, example_inputs))
        return seen[-1]
    got = kiln.compile(fn, backend=backend)(*args)
    np.testing.assert_allclose(got, fn(*args), rtol=1e-13)
    return "\n".join(c.kiln_artifact.cpp for c in seen)


def test_each_pairwise_term_computes_its_own_term_only():
    """Fused into one stage, the bins' masked means are as many pairwise sums; each sum's
    term function holds the statements of its own term, not every bin's (which made text,
    g++ time and work grow as the square of the bins)."""
    rng = np.random.default_rng(7)
    data, radius = rng.random(3000), rng.random(3000)
    lengths = {}
    for nbins in (4, 8):
        terms = _cpp_of(binned_means, data, radius, nbins).split("auto term")[1:]
        assert len(terms) == nbins
        lengths[nbins] = max(t.index("};") for t in terms)
    assert lengths[8] < 1.3 * lengths[4], lengths   # a term's text does not grow with the bins


def test_a_stage_of_many_sums_keeps_them_in_its_loop():
    """Past MAX_PAIRWISE_SUMS a stage's sums are not passes of their own (each pass is also
    a template instance, ~0.1 s of g++: 100 bins took 84 s to build)."""
    from kiln.lowering.cpp_sums import MAX_PAIRWISE_SUMS
    rng = np.random.default_rng(8)
    data, radius = rng.random(3000), rng.random(3000)
    assert "auto term" not in _cpp_of(binned_means, data, radius, MAX_PAIRWISE_SUMS + 1)


def repeated_sums(x, w):
    a = x.reshape(40, -1)
    return (x.sum(), np.sum(x), x.mean(), (x * w).sum(), np.sum(x * w),
            a.sum(1), a.mean(1), np.add.reduce(a, axis=1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_sum_repeated_in_a_stage_is_added_once(dtype):
    """x.sum(), np.sum(x) and x.mean() fused into one stage are one pairwise sum of the
    same terms: it is added once and the other accumulators copy it (cpp_sums.add_once),
    rather than a term function, a template instance (~0.1 s of g++) and a pass over x
    each. The results keep NumPy's bits."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(4000) * 10.0 ** rng.integers(-3, 4, 4000)).astype(dtype)
    w = rng.random(4000).astype(dtype)
    from kiln.runtime import cpp_backend
    seen = []

    def backend(graph, example_inputs):
        seen.append(cpp_backend(graph, example_inputs))
        return seen[-1]
    got, want = kiln.compile(repeated_sums, backend=backend)(x, w), repeated_sums(x, w)
    src = "\n".join(c.kiln_artifact.cpp for c in seen)
    for a, b in zip(got, want, strict=True):
        assert type(a) is type(b) and np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a, b)
    body = src.split("kiln_fused_")[1:]
    assert sum(part.count("auto term") for part in body) == 3, src   # x, x * w, a's rows
    assert src.count("(the same sum)") == 5


def masked_sums(x, m):
    return np.where(m, x, 0).sum(), np.sum(np.where(m[::-1], x, x.dtype.type(0))), np.mean(m)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("threads", [1, 2])
def test_sums_of_terms_that_read_a_bool_array_are_numpys_bit_for_bit(monkeypatch, threads, dtype):
    """Such terms go through a buffer a block at a time (the prelude's W 0): the same sums
    in the same order as any term's. Every size in one call (one build; each size its own
    kernel): a call per size compiled ten sizes, then met the recompile limit (np.mean(m)
    pins the sizes) and ran the rest, the pairwise blocks' edges, in NumPy."""
    monkeypatch.setattr(kiln.config, "num_threads", threads)
    kiln.reset()
    rng = np.random.default_rng(threads)
    groups = []
    for n in [1, 7, 8, 9, 16, 17, 127, 128, 129, 136, 255, 256, 1000, 8191, 8192, 8193, 300_001]:
        x = (rng.standard_normal(2 * n) * 10.0 ** rng.integers(-3, 4, 2 * n)).astype(dtype)[::2]
        groups.append((x, rng.random(n) < 0.5))
    for (x, m), result in zip(groups, kiln.compile(each(masked_sums))(groups), strict=True):
        for got, want in zip(result, masked_sums(x, m), strict=True):
            assert type(got) is type(want) and got.dtype == want.dtype
            assert got == want, len(x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_masked_sum_terms_vectorize(dtype):
    """GCC 12 left the 8-lane loops of where(m, x, 0) scalar on AVX-512 Intel CPUs (it
    prefers 256-bit vectors there and finds no vector type for the bytes beside float64):
    np.where(m, x, 0.0).sum() took 4-16x a plain sum's time. The terms' own SIMD loop
    into a buffer vectorizes."""
    import re

    from .helpers import compiled_with_disassembly
    f, disassembly = compiled_with_disassembly(lambda x, m: np.where(m, x, 0).sum())
    x, m = np.arange(1000.0, dtype=dtype), np.arange(1000) % 3 == 0
    assert f(x, m) == np.where(m, x, 0).sum()
    code = disassembly()
    sums = [f for f in code.split("\n\n") if re.match(r"[0-9a-f]+ <\w+ kiln_pairwise<", f)]
    assert sums and all(re.search(r"[yz]mm", f) for f in sums), "the masked terms did not vectorize"


def test_runs_of_several_loops_walk_their_loops_without_dividing():
    """A run of several loops (x[..., :180:2].sum((1, 2)): NumPy buffers 8190 terms at a
    time) is written into a buffer by its own loop nest, then added pairwise: its term
    function split a flat index with a division and remainder per term (4.3x NumPy's
    time)."""
    def strided_sums(x):
        return x[..., :180:2].sum((1, 2))

    x = (np.random.default_rng(13).standard_normal((3, 100, 200)) * 10).astype(np.float32)
    code = _cpp_of(strided_sums, x)
    assert np.array_equal(kiln.compile(strided_sums)(x), strided_sums(x))
    terms = [t[:t.index("}")] for t in code.split("auto term")[1:]]
    assert terms and not any("/" in t or "%" in t for t in terms), terms
    assert "for (int64_t r2 = 0; r2 < 90; ++r2) {" in code
    assert "kiln_pairwise<float>(term0, 0, 8190)" in code


def shared_term(x, y):
    w = np.abs(y)
    return (x * w).sum(), w.sum(), np.average(x, weights=w)


def test_sums_sharing_a_computed_value_are_numpys_bit_for_bit():
    """Two sums of one stage that read a value computed for them (``w = np.abs(y)``, a
    register no one stores) kept their one sequential loop: np.average(x, weights=w) one
    ulp off NumPy's at 9 elements. Each is now its own pairwise pass, computing w itself."""
    rng = np.random.default_rng(9)
    f = kiln.compile(shared_term, dynamic=True)
    for n in (9, 100, 1000):
        x, y = rng.standard_normal(n), rng.standard_normal(n)
        for a, b in zip(f(x, y), shared_term(x, y), strict=True):
            assert type(a) is type(b)
            np.testing.assert_array_equal(a, b)


def _smooth(x):
    return x * x.dtype.type(0.99) + x.dtype.type(0.01) * np.sqrt(np.abs(x))


def sums_beside_stores(x):
    y = _smooth(x)   # (stored: returned, its sums in the same kernel)
    return y, np.sum(y * y), y.mean(), y.max()


def rows_beside_stores(x, b):
    z = _smooth(x + b)   # (b broadcast along the rows)
    return z, z.sum(1), z.mean(axis=-1)


def sum_beside_in_place(x):
    w = x * 1.01
    w += 0.01 * np.sqrt(np.abs(w))   # (in place: a term must not read w after it is written)
    return w, np.sum(w * w)


def steps(x):
    s = 0.0
    for _ in range(3):   # (a graph loop: its body stores x and sums it)
        x = _smooth(x)
        s = s + np.sum(x * x)
    return x, s


def loss(w, X, y):
    # (the forward pass keeps exp(-(X @ w)) for the backward pass, written over X @ w's
    # buffer in place: 12 rows, so kiln_pairwise's tail repeats its last term)
    p = 1 / (1 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)) + 0.01 * np.sum(w ** 2)


def test_sums_fused_with_stored_outputs_are_numpys_bit_for_bit():
    """``x = f(x); return x, np.sum(x*x)``: a kernel that also stored x added the sum with
    ``omp simd reduction(+:acc)`` lanes, not NumPy's pairwise order (948.8884329622045 vs
    NumPy's ...047 for 1000 values). The first sum's term now stores the values too, one
    pass, and the stage's other sums read them back."""
    rng = np.random.default_rng(21)
    x, x32, X = rng.standard_normal(1000), rng.standard_normal(900).astype(np.float32), \
        rng.standard_normal((30, 70))
    for fn, args in ((sums_beside_stores, (x,)), (sums_beside_stores, (x32,)),
                     (rows_beside_stores, (X, rng.standard_normal(70))),
                     (sum_beside_in_place, (X,)), (steps, (x,))):
        got, want = kiln.compile(fn)(*args), fn(*args)
        for i, (a, w) in enumerate(zip(got, want, strict=True)):
            assert np.asarray(a).dtype == np.asarray(w).dtype and np.array_equal(a, w), (fn, i, args[0].dtype)
    w, X, y = rng.standard_normal(5) * 0.3, X[:12, :5], (x[:12] > 0).astype(np.float64)
    value, grad = kiln.compile(lambda w: kiln.value_and_grad(loss)(w, X, y))(w)
    assert value == loss(w, X, y)
    # (a term that stored in place and then ran again for the tail read its own store)
    fd = [(loss(w + 1e-6 * e, X, y) - loss(w - 1e-6 * e, X, y)) / 2e-6 for e in np.eye(5)]
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


def many_sums(x):
    """More sums of one run in one stage than MAX_PAIRWISE_SUMS (and a mean of ints, cast)."""
    return [(x * k).sum(axis=-1) for k in range(1, 11)] + [np.abs(x - 0.5).mean(axis=-1), (x * x).sum(axis=-1)]


def many_int_means(i):
    return [(i * k).mean() for k in range(1, 11)]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_stage_of_many_sums_is_numpys_bit_for_bit(monkeypatch, threads):
    """Past MAX_PAIRWISE_SUMS a stage's float sums of one run are added side by side, one
    pass (kiln_sums): in the stage's loop, in double lanes, float32 sums were 1 ulp off
    NumPy's in about half the cases (yin_pitch's 128 sums of float32 frames)."""
    monkeypatch.setattr(kiln.config, "num_threads", threads)
    kiln.reset()
    rng = np.random.default_rng(11)
    f, g = kiln.compile(many_sums), kiln.compile(many_int_means)
    for shape in ((100,), (1000,), (10_007,), (300_001,), (5, 333), (3, 4)):
        for dtype in (np.float32, np.float64):
            x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dtype)
            for got, want in zip(f(x), many_sums(x), strict=True):
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)
    for n in (100, 20_000):
        i = rng.integers(-1000, 1000, n)
        assert g(i) == many_int_means(i)
