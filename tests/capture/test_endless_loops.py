"""``while True:`` loops that end by a data-dependent ``break`` become one loop node
(kiln/capture/loop_heads.py ``_endless``): every form against plain Python — values, types,
the final state of mutated arguments, exceptions raised inside the loop, a break on the
first and on the last trip, a walk with a negative step —, on the reference backend and
on C++. Forms a node cannot hold (continue, such a loop inside another loop) keep the old
behaviour and still match Python; a return inside the loop is test_loop_returns.py's.

From 3.12 on, CPython places the code after a ``while True:`` loop with one break inside
the loop, where the break's test falls through (its only way in): the bytecode is then the
same as a ``return`` inside the loop. There the loops are nodes that return (in the same
graph: the loop ends only by returning) where that code returns numbers, and run as
before otherwise."""
from __future__ import annotations

import numpy as np
import pytest

import kiln
from kiln.ops.loops import stats as loop_stats

from .test_loops import _copy, _same

BACKENDS = ["eager", "cpp"]


def sum_past(a, t):                   # the break's test reads a value the loop carries
    i = 0
    s = 0.0
    while True:
        s += a[i]
        if s > t:
            break
        i += 1
    return i, s


def first_above(a, t):                # the test also ends the walk at the array's end
    i = 0
    while True:
        if i >= a.shape[0] or a[i] > t:
            break
        i += 1
    return i


def last_below(a, t):                 # a walk backwards (i -= 1), two breaks
    i = a.shape[0] - 1
    while True:
        if a[i] < t:
            break
        i -= 1
        if i < 0:
            break
    return i


def double_until(a, t):               # writes before the break: the argument is mutated
    i = 0
    while True:
        a[i] *= 2.0
        if a[i] > t:
            break
        i += 1
    return i


def wrap_until(data, stop):           # uint8 element code: wrapping values, a typed result
    c = np.uint8(1)
    i = 0
    while True:
        c = c * np.uint8(3) + data[i]
        i += 1
        if c == stop or i == data.shape[0]:
            break
    return c, i


def skip_then_stop(a, t):             # continue: not a loop node (a backward jump)
    i = -1
    n = 0
    while True:
        i += 1
        if i >= a.shape[0]:
            break
        if a[i] < 0.5:
            continue
        n += 1
        if a[i] > t:
            break
    return n


def search_return(a, t):              # a return inside the loop: not a node
    i = 0
    while True:
        if a[i] > t:
            return i
        i += 1


def rows_first(A, t):                 # inside a for loop: not a node of its own
    out = np.zeros(A.shape[0], dtype=np.int64)
    for r in range(A.shape[0]):
        j = 0
        while True:
            if j >= A.shape[1] or A[r, j] > t:
                break
            j += 1
        out[r] = j
    return out


NODES = {
    "sum_past": lambda r: (sum_past, (r.random(40), 5.0)),
    "sum_past_first_trip": lambda r: (sum_past, (r.random(40) + 2.0, 1.0)),
    "first_above": lambda r: (first_above, (r.random(40), 0.9)),
    "first_above_first_trip": lambda r: (first_above, (np.r_[1.0, r.random(10)], 0.9)),
    "first_above_none": lambda r: (first_above, (r.random(40), 2.0)),
    "last_below": lambda r: (last_below, (r.random(40) + 0.5, 0.55)),
    "last_below_none": lambda r: (last_below, (r.random(40) + 0.5, 0.0)),
    "double_until": lambda r: (double_until, (r.random(30), 1.5)),
    "wrap_until": lambda r: (wrap_until, (r.integers(0, 256, 60).astype(np.uint8), np.uint8(7))),
    "wrap_until_end": lambda r: (wrap_until, (np.zeros(5, np.uint8), np.uint8(2))),
}
OTHERS = {
    "skip_then_stop": lambda r: (skip_then_stop, (r.random(40), 0.95)),
    "search_return": lambda r: (search_return, (r.random(40), 0.9)),
    "rows_first": lambda r: (rows_first, (r.random((6, 7)), 0.8)),
}


def _check(fn, args, backend):
    mine, theirs = _copy(args), _copy(args)
    compiled = kiln.compile(fn, backend=backend)
    for _ in range(2):
        _same(compiled(*_copy(mine)), fn(*_copy(theirs)))
    _same(compiled(*mine), fn(*theirs))
    for a, b in zip(mine, theirs):      # the final state of mutated arguments
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    return compiled


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(NODES))
def test_while_true_with_a_break_is_one_loop_node(case, backend):
    fn, args = NODES[case](np.random.default_rng(11))
    before = dict(loop_stats)
    compiled = _check(fn, args, backend)
    # (3.12+: the code after the loop is inside it, ending in a return: a node that returns)
    (record,) = compiled.records
    assert record.graph_break is None, record.graph_break
    assert record.ops.count("loop") == 1, record.loops
    assert any("while True" in note for note in record.loops), record.loops
    if backend == "cpp":
        assert loop_stats["native"] > before["native"], record.loops


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(OTHERS))
def test_while_true_forms_a_node_cannot_hold_match_python(case, backend):
    fn, args = OTHERS[case](np.random.default_rng(12))
    _check(fn, args, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_exception_inside_a_while_true_loop_is_pythons(backend):
    """double_until runs off the array's end (no element above t): IndexError, with the
    elements before it doubled, as Python leaves them."""
    a = np.random.default_rng(13).random(20)
    compiled = kiln.compile(double_until, backend=backend)
    assert compiled(a.copy(), 0.5) == double_until(a.copy(), 0.5)
    mine, theirs = a.copy(), a.copy()
    with pytest.raises(IndexError) as want:
        double_until(theirs, 1e9)
    with pytest.raises(IndexError) as got:
        compiled(mine, 1e9)
    assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(mine, theirs)


def test_one_compile_for_every_break_position():
    graphs = []
    compiled = kiln.compile(sum_past, backend=lambda g, ex: graphs.append(g) or g)
    rng = np.random.default_rng(14)
    for t in (0.0, 1.0, 4.0, 12.0, 19.0):
        a = rng.random(40)
        _same(compiled(a, t), sum_past(a, t))
    assert len(graphs) == 1 and len(compiled.records) == 1
