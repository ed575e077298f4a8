"""Boolean-mask selections that never take their data-dependent size, shape assignment,
and the np.ndarray constructor: captured in one graph, matching NumPy."""
import warnings

import numpy as np
import pytest

import kiln

from .conftest import assert_same, run_probe

X = np.linspace(-2.0, 2.0, 9)
Y = np.linspace(2.0, -1.0, 9)


def masked_update(x):
    y = x * 2
    m = y > 1
    y[m] = np.sqrt(y[m]) - 1.0
    return y


def masked_two_inputs(x, y):
    m = (x > 0) & (y < 1)
    x = x.copy()
    x[m] = x[m] * y[m] - 1
    return x


def masked_cast(x):
    y = x.astype(np.int64)
    y[x > 0] = x[x > 0] * 2.5        # the mask written twice: the same values
    return y


def masked_reductions(x):
    s = x[x > 0]
    return s.sum(), np.mean(s), np.sum(x[x < 0] ** 2)


def masked_histogram(x):
    return np.histogram(x[x > -1], bins=4, range=(-1.0, 2.0))


def row_mask_means(p, c):
    # k-means' update of its centers: rows with no points keep the old ones
    total = p * 1.0
    cnt = (c > 0).sum(1)
    empty = cnt == 0
    total[~empty] /= cnt[~empty, None]
    total[empty] = p[empty] - 1
    return total


def row_mask_updates(x, w):
    m = x[:, 0] > 0
    y = x.astype(np.float32)
    y[m] = np.sqrt(np.abs(x[m])) * w - x[m, :]   # float64 values cast into float32 rows
    y[~m] *= 2
    y[~m] = w
    return y


_rng = np.random.default_rng(77)
P = _rng.standard_normal((5, 3))
CNT = np.where(np.arange(5)[:, None] % 2 == 0, _rng.random((5, 4)), -1.0)  # rows 1, 3: no counts
XR = _rng.standard_normal((6, 3))
W = _rng.standard_normal(3)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("fn, args", [
    (masked_update, (X,)), (masked_two_inputs, (X, Y)), (masked_cast, (X,)),
    (masked_reductions, (X,)), (masked_histogram, (X,)),
    (row_mask_means, (P, CNT)), (row_mask_updates, (XR, W)),
])
def test_mask_selection_in_one_graph(fn, args):
    run_probe(fn, *args, graphs=1)
    assert kiln.explain(fn)(*args).graph_break_count == 0


def test_row_mask_division_warns_only_in_selected_rows():
    # the rows with no counts divide by zero only under the mask: no warning at all
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_probe(row_mask_means, P, CNT, graphs=1)


def finite_to_int(x):
    ok = np.isfinite(x)
    return np.rint(x[ok]).astype(np.int64), x[x > 0].astype(np.int32)


def narrowed(x):
    small = np.abs(x) < 1e4
    return x[small].astype(np.float16), x[small].astype(np.int8), (x[small] > 0).astype(np.float32)


@pytest.mark.parametrize("fn, x", [
    (finite_to_int, np.array([55.0, -np.inf, np.nan, 3.6])),
    (finite_to_int, np.array([55.0, -np.inf, np.nan, 3.6], np.float32)),
    (narrowed, np.array([1e6, 2.5, -3e9, np.nan, -70.0])),
])
@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_cast_of_a_selection_warns_only_for_selected_values(fn, x, backend):
    # a cast computed over the whole array warned "invalid value encountered in cast" for
    # the NaN and inf x[ok] leaves out (midi numbers of a zero frequency), and "overflow
    # encountered in cast" for 1e6 into float16; NumPy casts only the selection
    expected = fn(x.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = kiln.compile(fn, backend=backend)(x.copy())
    assert_same(got, expected)


def test_cast_of_a_selection_still_warns_for_a_selected_value():
    def f(x):
        return x[x != 0].astype(np.int64)
    x = np.array([0.0, np.nan, 2.0])
    with pytest.warns(RuntimeWarning, match="invalid value encountered in cast"):
        expected = f(x)
    with pytest.warns(RuntimeWarning, match="invalid value encountered in cast"):
        got = kiln.compile(f)(x)
    assert_same(got[~np.isnan(x[x != 0])], expected[~np.isnan(x[x != 0])])


@pytest.mark.parametrize("value", [np.arange(2.0), np.ones((7, 3))])
def test_row_mask_assignment_of_a_wrong_length_raises_numpys_error(value):
    def f(x, v):
        x[x[:, 0] > 0] = v
        return x
    with pytest.raises(ValueError) as expected:
        f(XR.copy(), value)
    with pytest.raises(ValueError) as got:
        kiln.compile(f)(XR.copy(), value)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (4, 4)])
def test_masked_assignment_into_an_array_the_mask_does_not_fit(shape):
    # y[m] = x[m] with m of x's shape (4,): NumPy raises IndexError for a y of 3 rows, and
    # broadcasts the selection (c,) against y[m]'s (c, n) rows where c allows (it did
    # copyto(y, x * 2, where=m), broadcasting m over y's rows: silently wrong)
    def f(y, x):
        m = x > 0
        y[m] = x[m] * 2
        return y
    x = np.array([1.0, -1.0, 2.0, -2.0])
    try:
        want = f(np.zeros(shape), x)
    except Exception as e:   # noqa: BLE001 - NumPy's own error, compared below
        with pytest.raises(type(e)) as got:
            kiln.compile(f)(np.zeros(shape), x)
        assert str(got.value) == str(e)
    else:
        np.testing.assert_array_equal(kiln.compile(f)(np.zeros(shape), x), want)


def test_row_mask_in_place_update_keeps_numpys_casting_rules():
    def f(x, c):
        m = c > 0
        x[m] /= c[m, None]      # int rows /= : NumPy's casting error
        return x
    xi, c = np.arange(18).reshape(6, 3), np.arange(6) % 3
    with pytest.raises(TypeError) as expected:
        f(xi.copy(), c)
    got_x = xi.copy()
    with pytest.raises(TypeError) as got:
        kiln.compile(f)(got_x, c)
    assert type(got.value) is type(expected.value) and str(got.value) == str(expected.value)
    np.testing.assert_array_equal(got_x, xi)


def test_row_selections_that_do_not_line_up_take_the_selection():
    def f(x, y):
        m = x[:, 0] > 0
        return x[m] + y[m]      # (n, 3) + (n, 4): NumPy's broadcasting error
    y = np.ones((6, 4))
    with pytest.raises(ValueError) as expected:
        f(XR, y)
    with pytest.raises(ValueError) as got:
        kiln.compile(f)(XR, y)
    assert str(got.value) == str(expected.value)


def test_other_uses_of_a_selection_take_it_as_python():
    def f(x):
        s = x[x > 0]
        return s.shape, s * 2, s
    compiled, _, _ = run_probe(f, X, graphs=2)   # the graph before, and s * 2 after
    record = compiled.records[0]
    assert record.graph_break.kind == "data_dependent"


def test_shape_assignment_of_a_fresh_array():
    from kiln.ops.value_warnings import setting_warns

    def f(x):
        a = x * 2
        a.shape = (3, 3)
        return a.sum(axis=0), a
    # (NumPy 2.5 deprecates setting .shape: then it runs as Python, for its warning)
    run_probe(f, X, graphs=2 if setting_warns("shape") else 1)


def test_shape_assignment_of_an_argument_runs_as_python():
    def f(x):
        x.shape = (3, 3)
        return x
    compiled, _, _ = run_probe(f, X, graphs=0)


def test_ndarray_constructor():
    def f(x):
        out = np.ndarray((2, x.shape[0]))
        out[0] = x
        out[1] = -x
        return out
    run_probe(f, X, graphs=1)


def masked_histogram_auto_range(x, w):
    return np.histogram(x[x > 0], bins=5, weights=w[x > 0])


def test_histogram_of_a_selection_with_edges_from_the_data():
    run_probe(masked_histogram_auto_range, X, np.abs(Y), graphs=1)


def test_probing_dynamic_sizes_stays_small():
    """Capture asks each op's shape rule at other sizes of a dynamic dim, up to 4099 n + 7,
    on NumPy stand-ins. np.outer(x, x) at that size was a 1.7 GB array and np.dot of two
    of them ran for hours (a fuzzer program timed out); a probe whose result would grow
    past a few million elements is skipped once the smaller ones said which dims follow."""
    import tracemalloc

    def f(x):
        v = np.outer(x, x)
        return np.sort(np.dot(v, v))

    compiled = kiln.compile(f, backend="eager")
    tracemalloc.start()
    try:
        for n in (3, 4, 5, 6):
            x = np.arange(n, dtype=np.int32) - 2
            np.testing.assert_array_equal(compiled(x), f(x))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20, f"capture's probes took {peak / 2**20:.0f} MB"


def test_probing_a_small_result_of_a_large_input_stays_small(monkeypatch):
    """The same bound on the probes' inputs: np.linalg.eigvalsh of a dynamic (n, n) matrix
    has an (n,) result, and its probe at 4099 n + 7 ran LAPACK on a 20502 x 20502 stand-in
    (3 GB, hours: a QR-iteration program hung at its second size)."""
    from kiln.capture import dims
    from kiln.ops import TensorMeta
    asked = []
    real = dims.infer_meta

    def recording(op, inputs, params):
        n = sum(int(np.prod(m.shape)) for m in inputs if isinstance(m, TensorMeta))
        asked.append(n)
        if n > dims.PROBE_ELEMENTS:
            raise MemoryError("a probe this large would run NumPy on it")
        return real(op, inputs, params)
    monkeypatch.setattr(dims, "infer_meta", recording)

    def f(a):
        return np.linalg.eigvalsh(a + a.T)

    compiled = kiln.compile(f, backend="eager", dynamic=True)
    for n in (3, 4, 5):
        a = np.arange(n * n, dtype=np.float64).reshape(n, n) / 7
        np.testing.assert_allclose(compiled(a), f(a), rtol=1e-12, atol=1e-12)
    assert asked and max(asked) <= dims.PROBE_ELEMENTS, f"a probe of {max(asked)} elements"
