"""Sums and means of a boolean-mask selection ``x[m]`` are NumPy's to the last bit: NumPy
compacts the selection into a new array and adds it pairwise, so the kernel writes the
selected terms in C order into a scratch buffer and adds them in that order over their count
(selected_sum: kiln/ops/reduction_where.py, kiln/lowering/cpp_stages.py _compacted_sum).
Adding where(m, x, 0) over the whole array groups the terms otherwise: float32 means
differed in the last bits (relative ~1e-7)."""
import warnings

import numpy as np
import pytest

import kiln

from .helpers import each


@pytest.fixture(autouse=True)
def always_compiled(monkeypatch):
    """Every size compiled (the cost model runs tiny inputs as NumPy), each its own kernel."""
    monkeypatch.setattr(kiln.config, "cost_model", False)
    monkeypatch.setattr(kiln.config, "recompile_limit", 1000)


def sums(x, m):
    return x[m].sum(), x[m].mean(), np.sum(x[m]), np.mean(x[m])


def spread(rng, n, dtype):
    return (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dtype)


def check(f, fn, *args, case=""):
    got, want = f(*args), fn(*args)
    for g, w in zip(got, want, strict=True):
        assert type(g) is type(w) and np.asarray(g).dtype == np.asarray(w).dtype, case
        np.testing.assert_array_equal(g, w, err_msg=case)   # exact: the same bits, not allclose


def check_each(f, fn, groups):
    got = f(groups)
    assert len(got) == len(groups)
    for result, args in zip(got, groups, strict=True):
        check(lambda *_: result, fn, *args,
              case=f"{fn.__name__} of {[(np.shape(a), np.asarray(a).strides) for a in args]}")


SIZES = [1, 8, 9, 128, 129, 8192, 8193, 300_001]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads, dynamic", [(1, False), (2, True)])
def test_selection_sums_are_numpys_bit_for_bit(monkeypatch, threads, dynamic, dtype):
    """On one thread a kernel per size (static sizes: the sizes on each side of a pairwise
    block's edges, 8 and 128, and a long one); on two, one kernel for every size (symbolic
    sizes: the suite's time)."""
    monkeypatch.setattr(kiln.config, "num_threads", threads)
    kiln.reset()
    rng = np.random.default_rng(threads)
    f = kiln.compile(sums, dynamic=dynamic)
    for n in SIZES if dynamic else [1, 9, 129, 8193, 300_001]:
        for share in (0.5, 0.01, 0.97):
            m = rng.random(n) < share
            m[0] = True
            check(f, sums, spread(rng, n, dtype), m)
        check(f, sums, spread(rng, 2 * n, dtype)[::2], np.ones(n, bool))     # strided, all selected
    if dynamic:   # n == 1 (static by design) and one entry for every other size: the
        # selection's sum and count (its mean's divisor) pinned the length, a build per size
        assert len(f.cache_entries) == 2, [r.guards for r in f.records]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_selections_of_2d_arrays_are_numpys_bit_for_bit(dtype):
    """x[m] of a 2-D x and mask is the selection in C order, whatever x's memory order."""
    rng = np.random.default_rng(3)
    f, groups = kiln.compile(each(sums)), []
    for shape in [(3, 5), (40, 33), (129, 70), (300, 301)]:
        x, m = spread(rng, shape[0] * shape[1], dtype).reshape(shape), rng.random(shape) < 0.5
        m[0, 0] = True
        groups.append((x, m))
    check_each(f, sums, groups)
    check_each(f, sums, [(np.asfortranarray(x), np.asfortranarray(m)) for x, m in groups])
    check_each(f, sums, [(spread(rng, 2 * x.size, dtype).reshape(x.shape[0], -1)[:, ::2], m)
                         for x, m in groups])   # strided


def fused(a, b, m):
    return (a * b - 1)[m].mean(), np.abs(a)[m].sum()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_selections_of_fused_expressions_are_numpys_bit_for_bit(dtype):
    rng = np.random.default_rng(4)
    f = kiln.compile(each(fused))
    check_each(f, fused, [(spread(rng, n, dtype), spread(rng, n, dtype), rng.random(n) < 0.3)
                          for n in (9, 129, 10_001)])


def moments(x, m):
    return x[m].var(), x[m].std(ddof=1), x[m].mean(dtype=np.float64), x[m].sum(dtype=np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int16, np.bool_])
def test_moments_and_sums_in_another_dtype_are_numpys_bit_for_bit(dtype):
    rng = np.random.default_rng(5)
    groups = [((rng.standard_normal(n) * 1000).astype(dtype), rng.random(n) < 0.5)
              for n in (17, 1000, 20_000)]
    check_each(kiln.compile(each(moments)), moments, groups)
    check_each(kiln.compile(each(sums)), sums, groups)


def test_all_and_no_elements_selected():
    """All selected: the plain sum's bits; none: 0.0, and the mean NumPy's NaN and warnings."""
    rng = np.random.default_rng(6)
    f = kiln.compile(sums)
    for dtype in (np.float32, np.float64):
        x = spread(rng, 5000, dtype)
        check(f, sums, x, np.ones(5000, bool))
        assert f(x, np.ones(5000, bool))[0] == x.sum()
        with warnings.catch_warnings(record=True) as want:
            warnings.simplefilter("always")
            expected = sums(x, np.zeros(5000, bool))
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            result = f(x, np.zeros(5000, bool))
        assert [(w.category, str(w.message)) for w in got] == \
            [(w.category, str(w.message)) for w in want]
        for g, w in zip(result, expected, strict=True):
            assert type(g) is type(w)
            np.testing.assert_array_equal(g, w)


def test_gradients_of_selection_sums():
    def loss(x, m):
        return x[m].sum() * 2.0 + x[m].mean()
    rng = np.random.default_rng(7)
    x, m = rng.standard_normal(300), rng.random(300) < 0.4
    got = kiln.grad(loss)(x, m)
    np.testing.assert_allclose(got, np.where(m, 2.0 + 1.0 / m.sum(), 0.0), rtol=1e-12)
    compiled = kiln.compile(kiln.grad(loss))(x, m)
    np.testing.assert_allclose(compiled, got, rtol=1e-12)
    eps = 1e-6
    i = int(np.flatnonzero(m)[0])
    e = np.zeros_like(x)
    e[i] = eps
    assert abs((loss(x + e, m) - loss(x - e, m)) / (2 * eps) - got[i]) < 1e-6


def _bin_sums(x, b):
    return tuple(x[b == i].sum() for i in range(10)) + (x[b == 0].mean(), x[b == 3].mean())


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_many_selection_sums_in_one_stage_are_numpys_bit_for_bit(dtype):
    """Past MAX_SELECTED_SUMS the sums of one stage each write their selection compacted
    into a buffer and add it pairwise (kiln_pairwise_run, one template instance, not a
    kiln_selected_sum each at ~0.1 s of g++). They added where(m, x, 0) in the stage's
    loop before, in its order: 37 of 54 float32 sums and means of 5000 elements differed
    from NumPy's in the last bits, float64 ones too (azimint's bins' means)."""
    from benchmarks.npbench import azimint_naive as binned_means
    from kiln.lowering.cpp_sums import MAX_SELECTED_SUMS
    from kiln.runtime import cpp_backend
    rng = np.random.default_rng(8)
    data, radius = rng.random(3000).astype(dtype), rng.random(3000).astype(dtype)
    seen = []

    def backend(graph, example_inputs):
        seen.append(cpp_backend(graph, example_inputs))
        return seen[-1]
    for nbins, one_each in ((MAX_SELECTED_SUMS, True), (MAX_SELECTED_SUMS + 1, False)):
        seen.clear()
        got = kiln.compile(binned_means, backend=backend)(data, radius, nbins)
        assert got.dtype == binned_means(data, radius, nbins).dtype
        np.testing.assert_array_equal(got, binned_means(data, radius, nbins))
        cpp = "\n".join(c.kiln_artifact.cpp for c in seen)
        assert ("kiln_selected_sum<" in cpp) == one_each and ("kiln_pairwise_run<" in cpp) != one_each
    x = (rng.standard_normal(5000) * 10 ** rng.uniform(-3, 3, 5000)).astype(dtype)
    b = rng.integers(0, 10, 5000)
    got, want = kiln.compile(_bin_sums)(x, b), _bin_sums(x, b)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g == w


def test_selection_sums_warn_as_numpys_reduce():
    """The selection's sum overflows or meets inf - inf where NumPy's np.add.reduce does,
    and warns as it does (ops/fp_errors.py: selected_sum is a reduce)."""
    def total(x, m):
        return x[m].sum()
    f = kiln.compile(total)
    for x in (np.full(20, 3e38, np.float32), np.array([np.inf, 1.0, -np.inf, 2.0] * 5)):
        m = np.arange(20) % 4 != 3
        with warnings.catch_warnings(record=True) as want:
            warnings.simplefilter("always")
            expected = total(x, m)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            result = f(x, m)
        np.testing.assert_array_equal(result, expected)
        assert [str(w.message) for w in got] == [str(w.message) for w in want] != []


def test_a_selections_mean_reads_its_mask_once_for_sum_and_count():
    """x[m].mean() is the selection's sum over its count: kiln_selected_sum counts the
    selection before adding it, and hands that count to the mean (``&acc``) instead of a
    loop of its own reading m again; two means of one mask are one selected sum and count
    (the second copies them: cpp_sums.add_once), another mask's its own."""
    from kiln.runtime import cpp_backend
    seen = []

    def backend(graph, example_inputs):
        seen.append(cpp_backend(graph, example_inputs))
        return seen[-1]

    def means(x, m):
        return x[m].mean(), np.mean(x[m]), x[~m].mean()
    rng = np.random.default_rng(5)
    x, m = rng.standard_normal(1000), rng.random(1000) < 0.3
    check(kiln.compile(means, backend=backend), means, x, m)
    [kernel] = [line for c in seen for line in c.kiln_artifact.cpp.splitlines()
                if "_body(" in line and "static void" in line]
    body = "\n".join(c.kiln_artifact.cpp for c in seen).split(kernel)[1].split("\n}\n")[0]
    assert body.count("kiln_selected_sum<") == 2 and body.count(", &acc") == 2
    assert body.count("(the same sum)") == 1
    assert "reduction(+:" not in body   # no loop of the counts' own
