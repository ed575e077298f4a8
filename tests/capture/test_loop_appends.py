"""Element loops that append numbers to a list under a data-dependent test
(kiln/capture/loop_appends.py): one loop node, the lists' items and their types Python's."""
import numpy as np

import kiln


def picks(x, t):
    idx, big = [], []
    for i in range(len(x)):
        if x[i] > t:
            idx.append(i)
            big.append(x[i] * 2)
        elif x[i] < -t:
            big.append(-x[i])
    return idx, big, np.array(big), len(idx)


def indices(x, t):
    idx = []
    for i in range(len(x)):
        if x[i] > t:
            idx.append(i)
    return np.array(idx)


def capped(x, t):
    idx = []
    for i in range(len(x)):
        if x[i] > t and len(idx) < 2:   # the body reads the list: kept as before
            idx.append(i)
    return idx


def _same(a, b):
    """Same types all the way down (a Python int is not an np.int64), same values."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b), (a, b)
        for u, v in zip(a, b):
            _same(u, v)
    elif isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b, (a, b)


def _notes(report):
    return "\n".join(l for l in str(report).splitlines() if "loop" in l)


def test_appends_under_a_test_are_one_loop_node():
    x = np.random.default_rng(4).standard_normal(48)
    report = kiln.explain(picks)(x, 0.5)
    notes = _notes(report)
    assert report.graph_count == 1 and report.graph_break_count == 0, str(report)
    assert "loop node" in notes and "appends to idx" in notes and "appends to big" in notes, notes
    assert "unrolled" not in notes, notes
    compiled = kiln.compile(picks)
    for t in (0.5, 100.0, -100.0, 0.0):        # some items, none, every one (two a trip)
        _same(compiled(x, t), picks(x, t))
    assert len(compiled.records) == 1           # one build whatever the data picks
    # few trips are a loop node too (the cost model prices them: kiln/ops/loop_cost.py;
    # below 40 they were kept as Python's loop, which capture unrolled and broke per trip)
    eager = kiln.compile(picks, backend="eager", dynamic=False)
    for n in (40, 39, 1, 0):
        _same(eager(x[:n], 0.0), picks(x[:n], 0.0))
    notes = ["\n".join(r.loops) for r in eager.records]
    assert all("appends to idx" in n for n in notes[:3]), notes


def test_np_array_of_appended_ints_speculates_that_there_are_items():
    # np.array([]) is float64, of ints int64: the graph expects the dtype its line gave
    # before (at first: items) and a call that gives the other runs as Python; a line
    # that gave both breaks there (the loop stays a node), as it did before
    x = np.random.default_rng(5).standard_normal(48)
    report = kiln.explain(indices)(x, 0.0)
    assert report.graph_break_count == 0 and "loop node" in _notes(report), str(report)
    compiled = kiln.compile(indices, backend="eager")
    for t in (0.0, 1.0, 0.0):
        _same(compiled(x, t), indices(x, t))
    assert len(compiled.records) == 1
    for t in (100.0, 100.0, 0.0, 100.0, 1.0):   # none (float64), again, then items: a break
        _same(compiled(x, t), indices(x, t))
    assert compiled.records[1].graph_break is None and compiled.records[2].graph_break is not None
    assert "float64 and int64" in compiled.records[2].graph_break.reason


def test_a_body_that_reads_the_list_keeps_it_a_list():
    x = np.random.default_rng(6).standard_normal(48)
    compiled = kiln.compile(capped, backend="eager")
    for t in (0.0, 100.0):
        _same(compiled(x, t), capped(x, t))
    assert "uses it otherwise" in _notes(kiln.explain(capped)(x, 0.0))


def onsets(cft, on, off):
    # (real20's STA/LTA trigger: the append sits on a path the first trace folds away,
    # ``elif triggered`` while ``triggered`` is still the constant False)
    found = []
    triggered, start = False, 0
    for i in range(len(cft)):
        if not triggered and cft[i] > on:
            triggered, start = True, i
        elif triggered and cft[i] < off:
            found.append((start, i))
            triggered = False
    return np.array(found, dtype=np.int64).reshape(-1, 2), found


def test_an_append_first_reached_on_a_later_trace_is_not_dropped():
    cft = np.zeros(48)
    cft[[6, 7, 8, 30]] = 5.0
    compiled = kiln.compile(onsets, backend="eager")
    for c in (cft, np.zeros(48), np.full(48, 5.0)):
        _same(compiled(c, 3.0, 1.5), onsets(c, 3.0, 1.5))


def test_a_run_time_trip_count_sizes_the_buffer():
    # a second length (automatic dynamic sizes) or dynamic=True: the buffer has a row per
    # trip of the run-time count, and the loop reads x at its run-time length: one compile
    # serves every length (it ran the whole loop as Python, every length, before)
    rng = np.random.default_rng(8)
    for dynamic in (None, True):
        compiled = kiln.compile(picks, backend="eager", dynamic=dynamic)
        for n in (48, 64, 100, 300, 41, 64):
            x = rng.standard_normal(n)
            for t in (0.5, 100.0, -100.0):
                _same(compiled(x, t), picks(x, t))
        assert len(compiled.records) == (2 if dynamic is None else 1), len(compiled.records)
        notes = _notes("\n".join(compiled.records[-1].loops))
        assert "run-time: range(0, x.shape[0], 1)" in notes and "appends to idx" in notes, notes
        # x's length is a size symbol in the body: its fast variant reads it from the
        # layout (the example's number would send every other length to the checked one)
        loop = next(n for n in compiled.records[-1].graph.nodes if "body" in n.kwargs)
        x_in = next(p for p in loop.kwargs["body"].graph.placeholders if p.name == "x")
        assert type(x_in.val.shape[0]) is not int, x_in.val


def upto(x, n, t):
    out = []
    for i in range(n):             # a run-time int argument: range(n) of every n
        if x[i % 8] * i > t:
            out.append(i)
    return out, sum(out)


def test_range_of_a_run_time_int_appends():
    # (range(n) of an int argument keeps the loop as before: a guard on n's sign would
    # specialize n, a compile per count)
    x = np.random.default_rng(9).standard_normal(8)
    compiled = kiln.compile(upto, backend="eager")
    for n in (48, 60, 200, 48, 0, -3, 1):
        for t in (0.0, 1e9):
            _same(compiled(x, n, t), upto(x, n, t))
