"""``or``, ``and`` and chained comparisons on values the graph computes, outside loop
bodies, as selects (kiln/capture/select_joins.py ``meeting``; graph_selects.try_select):
their inner tests jump past the outer test's target (``if m > 0 or s < 1:`` jumps to the
body where ``m > 0``; ``if 0 < m < 1:`` to a ``POP_TOP`` of the copied ``m``), which the
if-statement shapes declined, so the test broke the graph. The right side runs where the
left decided too, so it is taken only where that cannot be seen (cheap, pure, quieted
where it may warn); one that raises, or a multi-element array's truth, still breaks and
Python raises as before. Each case is checked against the function run without kiln
(values, types, warnings, exceptions) on every backend, with the data taking every path,
on every version's bytecode (3.11 shares one return past the join, 3.12+ copy it). In a
graph loop's body (a for loop over whole arrays) such an ``if`` kept the loop from being
one node (unrolled, or past the budget run as Python)."""
import numpy as np
import pytest

import kiln
from tests.capture.test_graph_selects import BACKENDS, _outcome, _same


def or_if(x):
    m, s = x.mean(), x.std()
    if m > 0 or s < 1:
        r = m * 2
    else:
        r = m
    return r, x + 1


def chained_if(x):
    m = x.mean()
    if 0.0 < m < 1.0:
        r = m * 2
    else:
        r = m
    return r, x + 1


def chained_expression(x):
    m = x.mean()
    return m * 2 if 0.0 < m < 1.0 else m


def chained_elif_without_else(x, lo, hi):
    m = x.mean()
    r = 0.0
    if lo <= m < hi:
        r = 1.0
    elif m >= hi or m != m:
        r = 2.0
    return r


def or_returns(x):
    m, s = x.mean(), x.std()
    if m > 1 or s > 1:
        return m
    return s


def and_or(x):
    m, s = x.mean(), x.std()
    if (m > 0 and s > 0.5) or m < -1:
        m = m - s
    return m


def not_chained(x):
    m = x.max()
    if not (-1.0 <= m <= 1.0):
        m = np.float64(0.0)
    return m


def or_value(x):
    m, s = x.mean(), x.std()
    return (m > 0) or (s > 1)


def chained_value(x):
    m = x.mean()
    return 0.0 < m < 1.0


def guarded_division(x):
    # the right side divides by s where s == 0 decides: NumPy never runs it there (no
    # "divide by zero" warning), and the select's quieted division does not warn either
    s = x.std()
    if s == 0 or 1.0 / s > 2.0:
        s = s + 1.0
    return s


def guarded_log(x):
    s = x.std()
    if s > 0 and np.log(s) < 0:
        s = -s
    return s


def _diffuse(u):
    return u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))


def clamped_mean(u, steps):
    # a graph loop's body: 3.12+ end the ``or``'s second test in a jump back of its own
    # (3.11: a jump to the shared one), the sides meet at the jumps back to FOR_ITER
    for t in range(steps):
        u = _diffuse(u) * 1.01
        m = u.mean()
        if m > 1.0 or m < -1.0:
            u = u - m
    return u


def banded_hits(y, steps):
    # a chained comparison in a graph loop's body: every version gives its first test's
    # POP_TOP of the copied mean a jump back of its own
    hits = 0
    for t in range(steps):
        y = _diffuse(y) * 1.001
        if 0.5 < y.mean() < 0.6:
            hits = hits + 1
    return y, hits


MIXED = [(np.arange(4.0),), (np.array([0.25, 0.5, 0.75]),), (-np.arange(4.0),),
         (np.full(3, -1.5),), (np.zeros(3),), (np.full(2, 1.0),), (np.array([0.1, 0.1]),),
         (np.array([np.nan, 1.0]),)]

CASES = [
    (or_if, MIXED),
    (chained_if, MIXED),
    (chained_expression, MIXED),
    (chained_elif_without_else, [a + (0.0, 1.0) for a in MIXED]),
    (or_returns, MIXED),
    (and_or, MIXED),
    (not_chained, MIXED),
    (or_value, MIXED),
    (chained_value, MIXED),
    (guarded_division, MIXED),
    (guarded_log, MIXED),
    (clamped_mean, [(np.linspace(0.0, 3.0, 16), 60), (np.linspace(-1.0, 0.5, 16), 60)]),
    (banded_hits, [(np.linspace(0.0, 1.1, 16), 60), (np.linspace(0.0, 0.1, 16), 60)]),
]


@pytest.mark.parametrize("fn,calls", CASES, ids=[c[0].__name__ for c in CASES])
def test_no_break(fn, calls):
    for args in calls:
        out = kiln.explain(fn)(*args)
        assert (out.graph_count, out.graph_break_count) == (1, 0), (fn.__name__, out.break_reasons)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,calls", CASES, ids=[c[0].__name__ for c in CASES])
def test_same_as_numpy(fn, calls, backend):
    compiled = kiln.compile(fn, backend=backend)
    for args in calls + calls[::-1]:
        _same(_outcome(compiled, *args), _outcome(fn, *args))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [guarded_division, guarded_log])
def test_right_side_neither_warns_nor_raises_under_errstate(fn, backend):
    compiled = kiln.compile(fn, backend=backend)
    with np.errstate(all="raise"):
        for args in MIXED:
            _same(_outcome(compiled, *args), _outcome(fn, *args))


def right_side_array_truth(x, y):
    m = x.mean()
    if m > 0 or y > 0:         # y of more than one element: ValueError where m <= 0
        m = m * 2
    return m


def right_side_raises(x):
    m = x.mean()
    if m > 0 or x[5] > 0:      # IndexError where m <= 0 (x has 3 elements)
        m = m * 2
    return m


def right_side_writes(x, out):
    m = x.mean()
    if m > 0 or np.copyto(out, x) is None:
        m = m * 2
    return m


@pytest.mark.parametrize("backend", BACKENDS)
def test_sides_that_must_not_run_still_break(backend):
    for fn, calls in [
            (right_side_array_truth, [(np.ones(3), np.ones(2)), (-np.ones(3), np.ones(2))]),
            (right_side_raises, [(np.ones(3),), (-np.ones(3),)]),
            (right_side_writes, [(np.ones(3), np.zeros(3)), (-np.ones(3), np.zeros(3))])]:
        # (the first call's left side decides, so Python never runs the right one)
        assert kiln.explain(fn)(*[np.copy(a) for a in calls[0]]).graph_break_count >= 1, fn.__name__
        compiled = kiln.compile(fn, backend=backend)
        for args in calls + calls[::-1]:
            mine, theirs = [np.copy(a) for a in args], [np.copy(a) for a in args]
            _same(_outcome(compiled, *mine), _outcome(fn, *theirs))
            for a, b in zip(mine, theirs):
                assert a.tobytes() == b.tobytes(), fn.__name__
