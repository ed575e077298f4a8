"""Returned views rebuilt by one generated function (kiln/aot/view_outputs.py): compiled
calls on arrays large enough to compile return what NumPy returns — values, strides,
views of the same arguments (writes through them land in the argument), views of one
result sharing its memory — call after call, layout after layout."""
import numpy as np
import pytest

import kiln
from kiln.aot import view_outputs


@pytest.fixture(autouse=True)
def _fresh():
    kiln.reset()


def product_and_transpose(a):
    return a * 2.0, a.T


def result_and_its_views(a):
    b = np.sin(a) + 1.0
    return b, b.T, b[::2]


def every_kind(a, b):
    c = a * b
    return c, a, 3, a[1:, ::-1].T, c.T, c[::3]


def flattened(a):
    return np.exp(a), a.reshape(-1)


def leading(x, n):
    return x * 2.0, x[:n]


def _same(got, want, args):
    assert type(got) is type(want) and len(got) == len(want)
    for g, w in zip(got, want):
        if not isinstance(w, np.ndarray):
            assert g == w and type(g) is type(w)
            continue
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)
        assert g.dtype == w.dtype and g.shape == w.shape and g.strides == w.strides
        assert g.flags.writeable == w.flags.writeable
        for arg in args:
            if isinstance(arg, np.ndarray):
                assert (g is arg) == (w is arg)
                assert np.shares_memory(g, arg) == np.shares_memory(w, arg)
    for i in range(len(want)):
        for j in range(i):
            if isinstance(want[i], np.ndarray) and isinstance(want[j], np.ndarray):
                assert np.shares_memory(got[i], got[j]) == np.shares_memory(want[i], want[j])


def _args(fn, rng, shape):
    a = rng.standard_normal(shape)
    if fn is every_kind:
        return a, rng.standard_normal(shape)
    if fn is leading:
        return a.reshape(-1), 7
    return (a,)


@pytest.mark.parametrize("fn", [product_and_transpose, result_and_its_views, every_kind, flattened, leading])
def test_compiled_views_are_numpys(fn):
    rng = np.random.default_rng(31)
    compiled = kiln.compile(fn)
    for shape in ((30, 24), (30, 24), (24, 40)):
        args = _args(fn, rng, shape)
        _same(compiled(*args), fn(*args), args)
    assert compiled.records[0].graph is not None
    if fn is flattened:   # a non-contiguous argument: reshape copies, in NumPy and here
        a = rng.standard_normal((40, 30)).T
        got, want = compiled(a), fn(a)
        _same(got, want, (a,))
        assert not np.shares_memory(got[1], a)
    if fn is leading:     # another run-time bound
        x = rng.standard_normal(600)
        _same(compiled(x, 250), fn(x, 250), (x, 250))


def test_writes_through_a_returned_view_reach_the_argument():
    a = np.random.default_rng(32).standard_normal((30, 24))
    compiled = kiln.compile(product_and_transpose)
    compiled(a)
    _, view = compiled(a)
    view[0, 1] = 123.0
    assert a[1, 0] == 123.0


def test_the_short_path_is_one_generated_function():
    """After a call, the graph's short path (what the cache entry calls from C) is the
    generated runner: the forward and the views' kernels in one Python frame."""
    a = np.random.default_rng(33).standard_normal((30, 24))
    compiled = kiln.compile(every_kind)
    compiled(a, a + 1.0)
    compiled(a, a + 1.0)
    aot_function = compiled.cache_entries[0].check.__globals__["_kiln_graph"]   # (entries.graph_names)
    assert aot_function._direct.__code__.co_filename == "<kiln returned views>"


def test_runner_replays_paths_with_argument_bounds():
    from kiln.aot.functionalize import InputRef
    from kiln.ops import REGISTRY
    path = ((REGISTRY["getitem"], ((slice(None, InputRef(1), None),),), {}),)
    run = view_outputs.runner(lambda x, n: (x + 1.0,), (("fresh", 0, ()), ("input_view", 0, path), ("input", 1, ()),
                                                        ("const", None, ())))
    x = np.arange(10.0)
    fresh, view, n, none = run(x, 4)
    assert view.base is x and view.tolist() == [0.0, 1.0, 2.0, 3.0] and n == 4 and none is None
    np.testing.assert_array_equal(fresh, x + 1.0)


def test_views_of_a_fresh_vector_key_no_variant_by_the_inputs_layouts():
    """np.linalg.lstsq's x and singular values are views of one packed 1-D result, which is
    C-ordered whatever X's layout: its reshape keyed the compiled variants by both inputs'
    layouts, so every call checked them behind a Python layer (~9 us on a 9x3 system)."""
    def fit(X, y):
        beta, res, rank, sv = np.linalg.lstsq(X, y)
        return beta, res, rank, sv * 2.0

    cf = kiln.compile(fit, backend="aot_eager")
    rng = np.random.default_rng(12)
    X, y = rng.standard_normal((9, 3)), rng.standard_normal(9)
    cf(X, y)
    assert cf.cache_entries[0].check.__globals__["_kiln_graph"].layout_inputs == ()
    for XX in (X, np.asfortranarray(X), np.repeat(X, 2, axis=1)[:, ::2]):
        for g, w in zip(cf(XX, y), fit(XX, y)):
            assert type(g) is type(w) and g.dtype == w.dtype and g.shape == w.shape
            assert np.shape(g) == () or g.strides == w.strides
            np.testing.assert_array_equal(g, w)
