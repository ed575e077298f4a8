"""Values produced by Python code at a graph break, and calls that raise.

A float from ``time.perf_counter()`` or an int from ``len()`` of a list built in Python
enters the resumed graph as a run-time value: the code after the break compiles once,
whatever the value. A call that raises (the user's ValueError, NumPy's broadcasting
error) leaves the cache as it found it: the next valid call compiles exactly what it
would have compiled without it, and a call with the first shapes hits the cache."""
import contextlib
import math
import random
import time
import warnings

import numpy as np
import pytest

import kiln

from .conftest import CountingBackend
# (real22's minimizer_sketch: the deque breaks the graph at every step; the resume
# function after the append tests the growing list's emptiness and reads its last item)
from tests.runtime.test_cost_model_rejudge import window_minima


@contextlib.contextmanager
def no_kiln_fallback():
    """Fails the test on a warning of kiln's falling back (recompile_limit reached, a
    graph that did not compile): kiln.errors.warn_fallback lets the call run even under an
    "error" filter, so such a filter no longer shows them."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        yield
    assert not [str(w.message) for w in seen if str(w.message).startswith("kiln")]


def compiled_with_counter(fn, **options):
    backend = CountingBackend()
    return kiln.compile(fn, backend=backend, **options), backend


def _timed(x):
    t0 = time.perf_counter()
    y = np.sin(x) * 2.0
    elapsed = time.perf_counter() - t0
    return y + 0.0 * elapsed, elapsed >= 0.0


def test_perf_counter_result_is_a_runtime_value():
    f, backend = compiled_with_counter(_timed)
    x = np.linspace(0.0, 1.0, 5)
    for _ in range(3):
        got, nonneg = f(x)
        np.testing.assert_allclose(got, np.sin(x) * 2.0)
        assert nonneg is True
    # one graph between the two calls, one after the second: each compiled once
    assert len(backend.graphs) == 2
    out = kiln.explain(_timed)(x)
    assert out.graph_break_count == 2
    assert all("time.perf_counter" in b.reason for b in out.break_reasons)
    assert ["sin", "multiply"] in [ops[:2] for ops in out.ops_per_graph]


def test_random_call_breaks_only_at_the_call():
    def f(x):
        s = random.random()
        return x * s + 1.0

    g, backend = compiled_with_counter(f)
    x = np.ones(3)
    random.seed(3)
    want = [f(x) for _ in range(3)]
    random.seed(3)
    got = [g(x) for _ in range(3)]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b)
    assert len(backend.graphs) == 1


def _counted(x, text):
    words = [w for w in text.split() if w]
    kiln.graph_break()
    n = len(words)
    return x * n + 1.0


def test_len_of_a_list_built_at_a_break_is_a_runtime_int():
    f, backend = compiled_with_counter(_counted)
    x = np.arange(3.0)
    for text in ("a b", "a b c", "a b c d e", ""):
        np.testing.assert_allclose(f(x, text), _counted(x, text))
    assert len(backend.graphs) == 1
    graph = backend.graphs[0]
    assert "len_words" in str(graph)


def test_list_argument_counted_and_indexed():
    def f(x, items):
        return x * len(items) + items[0]

    g, backend = compiled_with_counter(f)
    x = np.ones(2)
    for items in ([1.0, 2.0], [1.0, 2.0, 3.0], [5.0, 2.0, 3.0]):
        np.testing.assert_allclose(g(x, items), f(x, items))
    # indexing one item guards len(items) >= 1, not the length; the item stays a run-time value
    assert len(backend.graphs) == 1
    with pytest.raises(IndexError, match="list index out of range"):
        g(x, [])


def _armijo_step(x, fs):
    # one steepest-descent step on sum((x-1)^4) with a history list read at its end and
    # appended to between graph breaks (the while test reads array data)
    g = 4 * (x - 1.0) ** 3
    t = 1.0
    while (((x - t * g) - 1.0) ** 4).sum() > fs[-1] - 1e-4 * t * (g @ g):
        t *= 0.5
    x = x - t * g
    fs.append(((x - 1.0) ** 4).sum())
    return x, fs[-1] + fs[0], fs[-2]


def test_items_read_by_constant_index_of_a_growing_list_do_not_recompile():
    """``fs[-1]`` of a list that grows each call (or each resume of a loop) used to guard
    ``len(fs) == n``: one recompile per length, then past recompile_limit every call ran
    uncompiled (a line search 1.45x slower than NumPy). Only ``len(fs) >= k`` is guarded."""
    f, backend = compiled_with_counter(_armijo_step)
    x0 = np.array([3.0, -1.0, 0.5])
    got_x, want_x = x0, x0
    got_fs, want_fs = [((x0 - 1) ** 4).sum()], [((x0 - 1) ** 4).sum()]
    for _ in range(10):
        got, want = f(got_x, got_fs), _armijo_step(want_x, want_fs)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1:] == want[1:] and got_fs == want_fs
        got_x, want_x = got[0], want[0]
    assert len(got_fs) == 11 and len(backend.graphs) <= 6


@pytest.mark.parametrize("cost_model", [False, True])
def test_the_truth_of_a_growing_list_does_not_recompile(cost_model, monkeypatch):
    """``not picked`` of a list argument (a resume function's) guarded ``len(picked) == k``:
    the entry after ``picked.append`` recompiled at each new pick and passed
    recompile_limit within the first call, a kiln warning for a program that then ran as
    Python. Its emptiness is guarded instead (ArgumentListVariable.truth)."""
    monkeypatch.setattr(kiln.config, "cost_model", cost_model)
    h = (np.arange(120) * 2654435761) % 97
    compiled = kiln.compile(window_minima)
    with no_kiln_fallback():
        for n in (120, 60, 120):
            np.testing.assert_array_equal(compiled(h[:n], 5), window_minima(h[:n], 5))
    with no_kiln_fallback():
        np.testing.assert_array_equal(compiled(h[:3], 5), window_minima(h[:3], 5))   # never picks


def _history(x, steps):
    hist = []
    for _ in range(steps):
        x = x - 0.1 * np.cos(x)
        hist.append(float((x ** 2).mean()))  # float() breaks; append is a bound method
    return x, hist


def _random_from(x, rng):
    draw = rng.random  # a C method bound to an object made per call
    y = np.sin(x)
    return y + draw(x.shape[0]), y.sum()


def test_methods_bound_to_objects_made_per_call_hit_the_cache():
    """``hist.append`` and ``rng.random`` sit on the stack at a break with a new object
    behind them every call: guarded by method and type (not identity), and called on this
    call's object, so calls neither recompile nor append to an earlier call's list."""
    f, backend = compiled_with_counter(_history)
    g, backend_g = compiled_with_counter(_random_from)
    for i in range(12):  # past recompile_limit (8) if each call's list needed its own entry
        x = np.linspace(0.0, 1.0, 7) + i
        got, want = f(x, 3), _history(x, 3)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
        assert len(got[1]) == 3
        a, b = g(x, np.random.default_rng(i)), _random_from(x, np.random.default_rng(i))
        np.testing.assert_array_equal(a[0], b[0])
    assert len(backend.graphs) <= 4 and len(backend_g.graphs) <= 2


def _vectorized(x):
    f = np.vectorize(lambda t: t * 2.0 if t > 0.5 else -t)  # a new callable object per call
    return np.cos(f(x)) + 1.0


def test_a_numpy_callable_object_made_per_call_is_not_guarded_by_identity():
    """``np.vectorize`` copies its function's ``__name__``, so it looked like a NumPy
    function and was guarded by identity: every call missed the cache until
    recompile_limit warned. It is an object of a Python class, called as Python."""
    f, backend = compiled_with_counter(_vectorized)
    with no_kiln_fallback():
        for i in range(12):
            x = np.linspace(0.0, 1.0, 9) + 0.1 * i
            np.testing.assert_array_equal(f(x), _vectorized(x))
    assert len(backend.graphs) <= 2


def _checked_add(x, y):
    if x.shape != y.shape:
        raise ValueError(f"shapes differ: {x.shape} vs {y.shape}")
    return np.sin(x) + y


def _broadcasting(x, y):
    return np.sin(x) + y


@pytest.mark.parametrize("fn, error", [(_checked_add, ValueError), (_broadcasting, ValueError)])
def test_a_call_that_raises_leaves_the_cache_alone(fn, error):
    f, backend = compiled_with_counter(fn)
    a3, b3 = np.ones(3), np.full(3, 2.0)
    np.testing.assert_allclose(f(a3, b3), fn(a3, b3))
    assert len(backend.graphs) == 1
    with pytest.raises(error) as got:
        f(a3, np.ones(4))
    with pytest.raises(error) as want:
        fn(a3, np.ones(4))
    assert str(got.value) == str(want.value)
    n_after_error = len(backend.graphs)
    np.testing.assert_allclose(f(a3, b3), fn(a3, b3))
    assert len(backend.graphs) == n_after_error, "the first shapes must hit the cache"
    assert f.cache_entries[0].index == 0, "the valid call's entry is tried first"
    # and the failed call marked nothing dynamic: a new size compiles as it would have
    # without it (a static entry, then the dynamic one once a size changes again)
    reference, ref_backend = compiled_with_counter(fn)
    for n in (3, 5, 6):
        x, y = np.ones(n), np.ones(n)
        np.testing.assert_allclose(f(x, y), reference(x, y))
    assert len(backend.graphs) - n_after_error == len(ref_backend.graphs) - 1
    assert [r.dynamic_dims for r in f.records if r.graph_break is None][-1] == \
        [r.dynamic_dims for r in reference.records if r.graph_break is None][-1]


def test_shape_equality_with_dynamic_sizes_stays_in_the_graph():
    f, backend = compiled_with_counter(_checked_add)
    for n in (3, 5, 6, 7):
        x, y = np.ones(n), np.arange(float(n))
        np.testing.assert_allclose(f(x, y), _checked_add(x, y))
    assert len(backend.graphs) == 2     # static, then dynamic: no break at the comparison
    assert all(r.graph_break is None for r in f.records)


def _relative(p, ref):
    d = np.abs(p - ref).sum()
    scale = np.abs(ref).sum()
    if scale > 1e-12:                       # data-dependent: a break on every trip
        return d / scale
    return d


def _relax(p, tol, conv):
    diff = tol + 1.0
    while diff > tol:
        pn = p.copy()
        p[1:-1] = 0.5 * (pn[:-2] + pn[2:])
        diff = _relative(p, pn)
        conv.append(diff)                   # the history: appended to, never read
    return p, conv


def test_appending_to_a_list_argument_does_not_guard_its_length():
    """A history list passed in (or carried into a resume function at a break) that is
    only appended to keeps its length unguarded: before, every trip of the loop above
    resumed with a longer list, missed the cache and recompiled until recompile_limit
    (a real relaxation solver ran at 0.8x NumPy)."""
    f = kiln.compile(_relax)                 # the C++ backend: the cost model compiles it
    with no_kiln_fallback():
        for n in (5000, 4000):
            p = np.zeros(n)
            p[-1] = 1.0
            mine, theirs = [0.5], [0.5]
            got, got_conv = f(p.copy(), 1e-3, mine)
            want, _ = _relax(p.copy(), 1e-3, theirs)
            np.testing.assert_allclose(got, want, rtol=1e-12)
            assert got_conv is mine and len(mine) == len(theirs) > 12
            np.testing.assert_allclose(mine, theirs, rtol=1e-12)   # sums: ulps may differ


def _steps_with_history(x, t_end):
    t, ts = 0.0, [0.0]
    while t < t_end:
        k = np.zeros((4, len(x)))
        for i in range(4):                  # tried as a graph loop (k[:i] keeps it unrolled)
            k[i] = x * t + k[:i].sum(0)
        if k.max() <= 1e9:                  # a break every step, as an adaptive step's test
            t = t + 1.0
            ts.append(t)                    # the history: appended to, never read
    return np.array(ts)


def test_a_graph_loop_attempt_does_not_read_an_appended_history_list():
    """The graph loop attempt collected the array trackers of every list in the frame by
    reading its items, which guarded an append-only history list's length: each step of an
    adaptive RK45 loop resumed with a longer list and recompiled until recompile_limit."""
    f = kiln.compile(_steps_with_history, backend="aot_eager")
    with no_kiln_fallback():
        np.testing.assert_array_equal(f(np.ones(3), 12.0), _steps_with_history(np.ones(3), 12.0))


def _append_then_read(x, hist):
    hist.append(x.sum())
    return x * len(hist), hist[0]


def test_a_list_read_after_an_append_sees_the_append():
    f, _ = compiled_with_counter(_append_then_read)
    for k in range(3):
        mine, theirs = [1.0] * k, [1.0] * k
        got = f(np.arange(3.0), mine)
        want = _append_then_read(np.arange(3.0), theirs)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1] and mine == theirs


def _nan_identity(x):
    v = np.nan if x.sum() > 0 else 1.0
    found = np.nan in set([np.nan])     # set() breaks the graph: [np.nan] is rebuilt
    y = x * 2
    print(end="")                       # a break with v live across it
    return v is np.nan, found, math.nan in [math.nan], y


def test_nan_constants_keep_their_identity_across_a_break():
    # numpy-100, exercise 17: `np.nan in set([np.nan])` is True in Python (containment
    # tries identity first); the values rebuilt at a break were new NaN objects
    for x in (np.ones(3), -np.ones(2)):
        want = _nan_identity(x)
        got = kiln.compile(_nan_identity)(x)
        assert got[:3] == want[:3]
        np.testing.assert_array_equal(got[3], want[3])
