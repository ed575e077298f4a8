"""Long inputs and long loops stay close to Python's cost on the first call. Containers
from outside the frame (arguments, globals) are data, not constants: past a bound capture
stops wrapping and guarding them item by item (a list of 12,640 tuples took 16 s to
capture and its guards made every call slower than NumPy) and the use breaks the graph
(``long_container``). Loops of Python work on constants stop unrolling past a budget
(``long_loop``). Results are NumPy's."""
import numpy as np

import kiln
from .conftest import assert_same
from kiln.capture.variables.builder import MAX_CAPTURED_ITEMS, MAX_CONTAINER_ITEMS

N = MAX_CONTAINER_ITEMS + 1
PAIRS = [divmod(a, 7) for a in range(-N // 2, N - N // 2)]   # N tuples of two ints
TABLE = [float(i) / 3 for i in range(N)]


def _breaks(compiled):
    return [r.graph_break.kind for r in compiled.records if r.graph_break is not None]


def test_a_long_list_argument_breaks_and_a_new_one_is_not_captured_again(probe):
    def f(x, items):
        return x * 2 + np.array(items, dtype=float).sum(axis=0)
    x = np.ones(2)
    compiled, backend, _ = probe(f, x, PAIRS, graphs=2)   # x * 2, then the + after np.array
    assert _breaks(compiled) == ["long_container"]
    records = len(compiled.records)
    other = [(b, a) for a, b in PAIRS[::-1]]
    np.testing.assert_array_equal(compiled(x, other), f(x, other))
    assert len(compiled.records) == records   # the entry's guard: a list of more than N - 1
    short = PAIRS[:3]   # a short list is followed item by item: an entry of its own
    np.testing.assert_array_equal(compiled(x, short), f(x, short))
    assert len(compiled.records) > records
    assert _breaks(compiled) == ["long_container"]


def test_a_loop_over_a_long_list_gives_pythons_result(probe):
    def f(x, items):
        total = 0
        for a, b in items:
            total += a * b
        return x * total
    compiled, _, _ = probe(f, np.ones(3), PAIRS, graphs=1)
    assert "long_container" in _breaks(compiled)


def test_long_tuples_dicts_and_globals_break_too(probe):
    def from_tuple(x, t):
        return x + np.array(t).sum()

    def from_dict(x, d):
        return x + sum(d.values())

    def from_global(x):
        return x + np.array(TABLE).mean()
    x = np.ones(2)
    # (a tuple or dict argument is read where it is loaded: Python runs up to the
    # instruction that takes it off the stack, np.array(t) or d.values(), and the code
    # after resumes compiled; the resume function held it on its stack and broke again.
    # The dict's values view is a break of its own: sum() of it)
    for fn, args, graphs, breaks in (
            (from_tuple, (x, tuple(TABLE)), 1, ["long_container"]),
            (from_dict, (x, dict(enumerate(TABLE))), 1, ["long_container", "unsupported_value"]),
            (from_global, (x,), 1, ["long_container"])):
        compiled, _, _ = probe(fn, *args, graphs=graphs)
        assert _breaks(compiled) == breaks, fn.__name__


def test_a_long_tuple_item_breaks_once(probe):
    def f(x, t):
        s = x * 2.0
        return s + t[0]
    x, t = np.ones(2), tuple(TABLE)
    # x * 2.0, Python's t[0], then the tail: the resume function used to start with t on
    # its stack, and broke a second time there
    compiled, _, _ = probe(f, x, t, graphs=1)
    assert _breaks(compiled) == ["long_container"]
    report = str(kiln.explain(f)(x, t))
    assert "Graph break count: 1" in report and f"t holds {N} items" in report


def test_many_short_containers_add_up(probe):
    rows = [list(range(i, i + 100)) for i in range(MAX_CAPTURED_ITEMS // 100 + 1)]

    def f(x, rows):
        return x + np.array(rows).sum()
    compiled, _, _ = probe(f, np.ones(2), rows, graphs=1)
    assert _breaks(compiled) == ["long_container"]


def test_a_list_under_the_bound_is_still_captured(probe):
    def f(x, items):
        return x + np.array(items, dtype=float).sum(axis=0)
    compiled, _, _ = probe(f, np.ones(2), PAIRS[:20], graphs=1)
    assert _breaks(compiled) == []


def test_appending_to_a_long_list_argument_reads_no_item(probe):
    def f(x, hist):
        hist.append(1.5)
        return x * 2
    compiled, _, _ = probe(f, np.ones(2), list(TABLE), graphs=1)
    assert _breaks(compiled) == []


def test_a_long_range_loop_is_judged_without_a_tracker_per_step(monkeypatch):
    # for i in range(100_000) of Python scalar work runs as Python (long_loop); capture
    # used to make all 100,000 step trackers first (~0.3 s of the first call)
    from kiln.capture.variables import base
    made = []
    init = base.ConstantVariable.__init__

    def counting(self, *args, **kwargs):
        made.append(1)
        init(self, *args, **kwargs)
    monkeypatch.setattr(base.ConstantVariable, "__init__", counting)

    def f(x):
        out = []
        for i in range(100_000):
            out.append([float(i) * 0.5])   # (a list: no loop node's buffer, loop_appends)
        return np.array(out)[:, 0] + x[0]
    compiled = kiln.compile(f, backend="eager")
    x = np.ones(2)
    np.testing.assert_array_equal(compiled(x), f(x))
    assert _breaks(compiled) == ["long_loop"]
    assert len(made) < 5_000


def test_a_long_loop_of_python_work_on_constants_runs_as_python():
    # 5,000 steps of appending a tuple: ~60,000 instructions folded at capture (~1 s, the
    # loop itself 0.5 ms); past MAX_FOLDED_LOOP_STEPS the function runs as Python
    def f(x):
        out = []
        for i in range(5000):
            out.append([i, i * 2])   # (a list: no loop node's buffer, loop_appends)
        return x.sum() + len(out)
    compiled = kiln.compile(f, backend="eager")
    x = np.ones(3)
    for _ in range(2):
        assert_same(compiled(x), f(x))
    assert _breaks(compiled) == ["long_loop"]
