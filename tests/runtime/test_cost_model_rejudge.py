"""The root's first call judged again once its hops are known (kiln/as_python.py
``hops_outweigh``, kiln/api.py ``_run_new``).

A graph is priced when it is built, before the breaks it keeps: the loop before a
``return`` inside it by the before-break rule (element loops as NumPy calls), the tail of
a loop's iteration not at all. At the end of the call that compiled the root, every graph
of the family is priced as it runs and set against the continuations the call made; when
they save less, calls like it (arrays no bigger) run as Python. first_above on 4 elements
took 2.3 us compiled against NumPy's 1.1; a sliding-window minimum over a deque (real22's
minimizer_sketch) 9.9x NumPy's time."""
import heapq
from collections import deque

import numpy as np
import pytest

import kiln
from kiln.capture import partial
from kiln.config import config


@pytest.fixture(autouse=True)
def _cost_model_on(monkeypatch):
    kiln.reset()
    monkeypatch.setattr(config, "cost_model", True)


def first_above(x, t):
    for i in range(x.shape[0]):
        if x[i] > t:
            return i
    return -1


def window_minima(h, w):
    window, picked = deque(), []
    for pos in range(len(h)):
        while window and h[window[-1]] >= h[pos]:
            window.pop()
        window.append(pos)
        if window[0] <= pos - w:
            window.popleft()
        if pos >= w - 1 and (not picked or picked[-1] != window[0]):
            picked.append(window[0])
    return np.array(picked, dtype=np.int64)


def circle_mask(img, r):
    x, y, d = r, 0, 1 - r
    pts = set()
    while x >= y:   # (set.add breaks: hops every point)
        for px, py in ((x, y), (y, x), (-y, x), (-x, y), (-x, -y), (-y, -x), (y, -x), (x, -y)):
            pts.add((r + py, r + px))
        y += 1
        if d < 0:
            d += 2 * y + 1
        else:
            x -= 1
            d += 2 * (y - x) + 1
    rows = np.array(sorted(pts))   # one graph after the loop, a few us saved once
    keep = (rows[:, 0] >= 0) & (rows[:, 0] < img.shape[0]) & (rows[:, 1] >= 0) & (rows[:, 1] < img.shape[1])
    # (a sum over a larger array: "compiling pays" when the graph was built)
    return rows[keep], int(keep.sum()), img.sum()


def nearest_steps(walls, start, goal):
    g = np.full(walls.shape, np.inf)   # larger than the break's pass pricing goes
    g[start] = 0.0
    heap = [(0.0, start)]
    while heap:
        d, cur = heapq.heappop(heap)   # (breaks: a hop or more a step)
        if cur == goal:
            break
        if d > g[cur]:
            continue
        r, c = cur
        for nr, nc in ((r + 1, c), (r, c + 1)):
            if nr < walls.shape[0] and nc < walls.shape[1] and not walls[nr, nc] and d + 1.0 < g[nr, nc]:
                g[nr, nc] = d + 1.0
                heapq.heappush(heap, (d + 1.0, (nr, nc)))
    return g[goal]


def _check(compiled, fn, args):
    for _ in range(3):
        got, want = compiled(*args), fn(*args)
        if isinstance(want, tuple):
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
                assert type(g) is type(w)
        else:
            np.testing.assert_array_equal(got, want)
            assert type(got) is type(want)
    assert partial.TRACE is None   # (counted only while a compiling call runs)


def test_a_short_loop_before_its_one_hop_runs_as_python():
    x = np.zeros(4)   # the loop runs to its end, then hops to ``return -1``
    compiled = kiln.compile(first_above)
    _check(compiled, first_above, (x, 0.5))
    assert compiled._as_python is not None and compiled._as_python[2] == 4   # its own size
    note = kiln.explain(first_above)(x, 0.5).runs_as_python
    assert any("judged again after its first call" in n and "1 graph break " in n for n in note), note
    # a larger array is not covered by the verdict: it compiles (and is judged) on its own
    big = np.zeros(200)
    assert compiled(big, 0.5) == -1 and compiled(np.arange(200.0), 0.5) == 1
    assert any(e.graph is not None and e.guards is not None for e in compiled.cache_entries)


def test_a_long_loop_before_its_one_hop_stays_compiled():
    x = np.zeros(200)
    compiled = kiln.compile(first_above)
    _check(compiled, first_above, (x, 0.5))
    assert compiled._as_python is None
    assert not kiln.explain(first_above)(x, 0.5).runs_as_python


def test_a_loop_returning_before_any_hop_is_not_judged_again():
    x = np.ones(4)   # returns from the loop's first trip: no continuation
    compiled = kiln.compile(first_above)
    _check(compiled, first_above, (x, 0.5))
    assert compiled._as_python is None


# (its picked.append entries pass the recompile limit on len(picked) while the first call runs)
@pytest.mark.filterwarnings("ignore:.*recompile_limit")
@pytest.mark.parametrize("n", [25, 120])
def test_a_loop_tail_graph_that_keeps_many_hops_runs_as_python(n):
    h = (np.arange(n) * 2654435761) % 97
    compiled = kiln.compile(window_minima)
    _check(compiled, window_minima, (h, 5))
    assert compiled._as_python is not None
    out = kiln.explain(window_minima)(h, 5)
    note = [m for m in out.runs_as_python if "judged again" in m]
    if out.graph_count:   # (3.11 compiles the tail's graph; 3.12 none of it: the verdict as before)
        assert len(note) == 1
        hops = int(note[0].split(" graph breaks")[0].rsplit(" ", 1)[1])
        assert hops >= n, note


@pytest.mark.filterwarnings("ignore:.*recompile_limit")
def test_a_graph_run_once_after_many_hops_is_priced_by_its_runs():
    # The graph after the loop saves a few us once; the loop hops ~100 times. Priced
    # as if it ran once a hop (an upper bound), it kept every hop.
    compiled = kiln.compile(circle_mask)
    _check(compiled, circle_mask, (np.ones((100, 100)), 12))
    assert compiled._as_python is not None and compiled._as_python[2] == 10000
    note = [m for m in kiln.explain(circle_mask)(np.ones((100, 100)), 12).runs_as_python
            if "judged again" in m]
    assert len(note) == 1, note


def test_a_fill_of_a_larger_array_before_many_hops_is_priced_by_its_pass():
    # np.full of 2500 then one element written: priced "compiling pays" (sizes past
    # cost.PASSES_ELEMENTS) when built; judged again, by its pass over the elements.
    walls = np.zeros((50, 50), bool)
    compiled = kiln.compile(nearest_steps)
    _check(compiled, nearest_steps, (walls, (0, 0), (3, 3)))
    assert compiled._as_python is not None
    note = [m for m in kiln.explain(nearest_steps)(walls, (0, 0), (3, 3)).runs_as_python
            if "judged again" in m]
    assert len(note) == 1, note


def test_a_graph_saving_more_than_its_hop_stays_compiled():
    def smooth_then_count(x):
        y = x
        for _ in range(12):   # unrolled: 36 ops on 8 elements, NumPy calls as Python
            y = np.tanh(y * 0.5 + 0.1) - y * 0.01
        n = len(x.tolist())   # one break
        return y * n

    x = np.linspace(0, 1, 8)
    compiled = kiln.compile(smooth_then_count)
    np.testing.assert_allclose(compiled(x), smooth_then_count(x), rtol=1e-12)
    assert compiled._as_python is None
    out = kiln.explain(smooth_then_count)(x)
    assert out.graph_count >= 1 and not any("judged again" in n for n in out.runs_as_python)


def test_the_cost_model_off_compiles_it_anyway(monkeypatch):
    monkeypatch.setattr(config, "cost_model", False)
    compiled = kiln.compile(first_above)
    _check(compiled, first_above, (np.zeros(4), 0.5))
    assert compiled._as_python is None
