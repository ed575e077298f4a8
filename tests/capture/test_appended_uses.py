"""Uses of a list an element loop node appended numbers to (kiln/capture/appended_uses.py):
np.array with a dtype, sum/min/max, out[k] and ``if out:`` stay in the graph, with Python's
values, types and errors whatever the data append (none, one, all, NaN)."""
import numpy as np
import pytest

import kiln

from .test_loop_appends import _same


def typed(x, t):
    idx, big = [], []
    for i in range(len(x)):
        if x[i] > t:
            idx.append(i)
            big.append(x[i] > 1.0)
    return np.array(idx, dtype=np.int64), np.fromiter(big, np.int32), np.asarray(idx, dtype=float)


def folds(x, t):
    ints, floats, scalars = [], [], []
    for i in range(len(x)):
        if x[i] > t:
            ints.append(i)
            floats.append(float(x[i]))
            scalars.append(x[i])
    return sum(ints), sum(floats), sum(scalars), min(ints), max(floats), max(scalars)


def last(x, t):
    out = []
    for i in range(len(x)):
        if x[i] > t:
            out.append(float(x[i]))
    if not out:
        return -1
    return out[-1], out[0], len(out)


def _inputs():
    x = np.random.default_rng(7).standard_normal(48)
    nan = x.copy()
    nan[[0, 9]] = np.nan            # (max of Python floats keeps a leading NaN, skips a later one)
    one = np.full(48, -3.0)
    one[11] = 2.0
    return [(x, 0.5), (one, 0.0), (x, -10.0), (nan, 0.0), (nan, -10.0), (x, 10.0)]


def _run(fn, compiled, x, t):
    try:
        want = fn(x, t)
    except ValueError as e:          # max() of no items: Python's error and message
        with pytest.raises(ValueError) as got:
            compiled(x, t)
        assert str(got.value) == str(e)
        return
    _same(compiled(x, t), want)


@pytest.mark.parametrize("fn", [typed, folds, last])
def test_uses_after_the_loop_are_in_its_graph(fn):
    x = np.random.default_rng(7).standard_normal(48)
    report = kiln.explain(fn)(x, 0.5)
    assert report.graph_count == 1 and report.graph_break_count == 0, str(report)
    assert "appends to" in "\n".join(report.loops)
    compiled = kiln.compile(fn, backend="eager")
    for x, t in _inputs():
        _run(fn, compiled, x, t)
    # the empty case is one more graph at most (it speculated on items), then a break
    assert len(compiled.records) <= 4


def test_compiled_folds_and_items():
    compiled = kiln.compile(folds)
    for x, t in _inputs()[:5]:
        _run(folds, compiled, x, t)
    compiled = kiln.compile(last)
    for x, t in _inputs():
        _run(last, compiled, x, t)


def pairs(x, t):
    out, vals = [], []
    for i in range(len(x)):
        if x[i] > t:
            out.append((i, i + 1))
            vals.append((x[i], x[i] * 2))
        if x[i] < -t:
            out.append((i, -i))
    return out, vals, len(out), len(vals) > 0


def test_appended_tuples_are_rows():
    # a tuple of numbers of one type a trip: a row of the buffer, the list rebuilt as
    # tuples of Python ints (np.float64 for NumPy scalars); np.array of it breaks (its
    # shape, (0,) or (n, 2), is the count's)
    x = np.random.default_rng(10).standard_normal(48)
    report = kiln.explain(pairs)(x, 0.5)
    assert report.graph_count == 1 and report.graph_break_count == 0, str(report)
    compiled = kiln.compile(pairs, backend="eager")
    for x, t in _inputs() + [(np.random.default_rng(11).standard_normal(64), 0.5)]:
        _same(compiled(x, t), pairs(x, t))
    assert len(compiled.records) == 2     # (the second length: a run-time trip count)


def bool_items(x, t):
    flags, bools = [], []
    for i in range(len(x)):
        if x[i] > t:
            flags.append(x[i] > 1.0)          # np.bool_
            bools.append(bool(x[i] > 1.0))    # Python's bool
    return max(flags), min(flags), sum(flags), flags[-1], max(bools), sum(bools), bools[0]


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_folds_and_items_of_numpy_bools_stay_numpy_bools(backend):
    # np.bool_'s dtype is named "bool", as Python's bool type: max(flags) and flags[-1] of
    # np.bool_ items came back as Python's True and False (the kind "bool" read as
    # Python's), and max/min first speculated on int64 (their example items were
    # zeros + 1: int64 for a bool buffer), so the first call ran as Python
    compiled = kiln.compile(bool_items, backend=backend)
    for x, t in _inputs()[:3] + _inputs()[:3]:
        _same(compiled(x, t), bool_items(x, t))
    assert len(compiled.records) == 1
