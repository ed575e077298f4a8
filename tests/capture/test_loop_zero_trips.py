"""A loop node whose run-time trip count may be 0 and whose body changes a carried value's
type across kinds (kiln/capture/loop_zero_trips.py): after zero trips Python holds the
value as it started (``s = 0; for i in range(n): s += x[i]`` with ``n = 0`` is the int 0),
which the node's result (np.float64) and the float/np.float64 flag did not give (0.0)."""
import warnings

import numpy as np
import pytest

import kiln


def same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    assert type(got) is type(want), (got, want)
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def range_int_sum(x, n):
    s = 0
    for i in range(n):
        s += x[i]
    return s


def range_int_scaled(x, n):
    s = 0
    for i in range(n):
        s = s + x[i] * 2.0
    return s


def range_float32_start(x, n):
    s = np.float32(1)
    for i in range(n):
        s = s + x[i]
    return s


def range_bool_start(x, n):
    s = True
    for i in range(n):
        s = s + x[i]
    return s


def range_int32_start(x, n):
    s = np.int32(2)
    for i in range(n):
        s = s * x[i]
    return s


def while_int_sum(x, n):
    s = 0
    i = 0
    while i < n:
        s += x[i]
        i += 1
    return s


def break_int_sum(x, n):
    s = 0
    for i in range(n):
        s += x[i]
        if s > 100:
            break
    return s


def nested_carried(x, m):
    s = 0
    for k in range(m):
        s = 0
        for i in range(k):
            s += x[i]
    return s


def nested_sum_of_sums(x, n):
    tot = 0
    for k in range(30):
        s = 0
        for i in range(n):
            s += x[i]
        tot = tot + s
    return tot


CASES = [
    (range_int_sum, "f", [3, 0, 4, 0]),
    (range_int_scaled, "f", [3, 0]),
    (range_float32_start, "f", [3, 0, 5]),
    (range_bool_start, "f", [3, 0]),
    (range_int32_start, "i", [3, 0]),
    (while_int_sum, "f", [3, 0]),
    (break_int_sum, "f", [3, 0]),
    (nested_carried, "f", [1, 5, 1, 30]),
    (nested_sum_of_sums, "f", [3, 0]),
]


@pytest.mark.parametrize("fn,kind,counts", CASES, ids=[c[0].__name__ for c in CASES])
def test_zero_trips_keep_the_start_type(fn, kind, counts):
    x = np.arange(1.0, 41.0) if kind == "f" else np.arange(1, 41)
    compiled = kiln.compile(fn)
    for n in counts:
        same(compiled(x, n), fn(x, n))


def forward_substitution(L, b):
    n = len(b)
    y = np.zeros(n)
    for i in range(n):
        s = 0
        for j in range(i):
            s += L[i, j] * y[j]
        y[i] = (b[i] - s) / L[i, i]
    return y


def prefix_sums(x, m):
    out = np.zeros(m)
    for k in range(m):
        s = 0
        for i in range(k):
            s += x[i]
        out[k] = s
    return out


def test_inner_loops_that_may_run_no_trip_stay_one_node():
    # the enclosing body uses the inner result only where its type cannot show (a float64
    # operand, a write into a float64 array): both loops stay nodes, as before
    rng = np.random.default_rng(0)
    L = np.tril(rng.random((40, 40))) + 40 * np.eye(40)
    b = rng.random(40)
    same(kiln.compile(forward_substitution)(L, b), forward_substitution(L, b))
    out = kiln.explain(forward_substitution)(L, b)
    assert out.graph_count == 1 and out.graph_break_count == 0
    assert out.ops_per_graph[0].count("loop") == 1
    x = np.arange(1.0, 41.0)
    for m in (30, 1):
        same(kiln.compile(prefix_sums)(x, m), prefix_sums(x, m))
    assert kiln.explain(prefix_sums)(x, 30).ops_per_graph[0].count("loop") == 1


def test_a_range_count_is_guarded_above_zero_once():
    x = np.arange(1.0, 41.0)
    compiled = kiln.compile(range_int_sum)
    for n in (3, 7, 12):
        same(compiled(x, n), range_int_sum(x, n))
    out = kiln.explain(range_int_sum)(x, 5)
    assert any("> 0" in g for g in out.guards), out.guards
    assert out.ops_per_graph[0].count("loop") == 1


def add_positives(x, n):
    for v in x:
        if v > 0:
            n += v
    return n


def _outcome(fn, *args):
    try:
        return "value", fn(*args)
    except Exception as e:   # (an element added to 2 ** 70 raises in NumPy: the same here)
        return "raised", (type(e), str(e))


@pytest.mark.parametrize("dt", [np.int64, np.int32])
@pytest.mark.parametrize("first", [5, 2 ** 70])
def test_a_python_int_start_beyond_the_loops_int_type_runs_as_python(dt, first):
    # add_positives(x, 2 ** 70) with no positive element: Python returns 2 ** 70; the loop
    # node's entry converted n to np.int64 and raised OverflowError. The start's range is
    # guarded (loop_types.range_guarded); a start out of it runs the loop as Python.
    compiled = kiln.compile(add_positives)
    none = -np.arange(1, 300).astype(dt)
    some = none.copy()
    some[7] = 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (first, 7, 2 ** 70, -2 ** 70, 2 ** 63, -2 ** 63 - 1, 2 ** 31, 2 ** 63 - 1, 5):
            for x in (none, some):
                got, want = _outcome(compiled, x, n), _outcome(add_positives, x, n)
                assert got[0] == want[0], (n, got, want)
                if got[0] == "value":
                    same(got[1], want[1])
                else:
                    assert got[1] == want[1]
