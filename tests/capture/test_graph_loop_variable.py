"""Range loops over whole arrays whose body reads the loop variable (``t = i * dt``,
``w = decay ** i``, ``x + i``): the variable is the graph_while node's counter, a run-time
int the body reads (kiln/capture/graph_breaks.py), so one compile serves every trip count
where the loop was unrolled and compiled again for each (a short body unrolls for its
first count, as an elementwise one does: kiln/capture/unroll_policy.py). Checked against the uncompiled
functions with tests/test_programs.py's oracle: values, dtypes (NEP 50 with the Python int:
``x + i`` keeps a float32 or int32 ``x``'s dtype, python_numbers.narrowed_int), NumPy's
OverflowError for an int that does not fit the array's dtype, the arguments' state."""
import numpy as np

import kiln
from kiln.runtime import build
from tests.test_programs import check_program

NODE = "graph loop node (graph_while, range loop carrying numbers"


def stepped(u, v, k, n, dt):
    """The variable as a time (a float), a power's exponent, and an int operand of a
    float32 and an int32 array."""
    for i in range(n):
        t = i * dt
        w = 0.5 ** i
        u = np.roll(u, 1) * w + t
        v = np.roll(v, 1) + i
        k[1:] = k[:-1] * 2 - i
    return u, v, k, i


def test_one_compile_for_every_count_with_numpy_dtypes():
    rng = np.random.default_rng(0)
    u, v, k = rng.random(6), rng.random(5).astype(np.float32), np.arange(4, dtype=np.int32)
    calls = [(u, v, k, n, 0.25) for n in (5, 9, 6)]
    check_program(stepped, calls, "cpp")
    # (the reference interpreter's node, and no trip: 'i' unbound, as in Python)
    check_program(stepped, [(u, v, k, n, 0.25) for n in (5, 9, 0, 1, 6)], "eager")
    f = kiln.compile(stepped)
    f(u, v, k.copy(), 5, 0.25)     # unrolled for its first count (its trips fuse) ...
    f(u, v, k.copy(), 9, 0.25)     # ... and a node once another count comes
    builds = build.stats["builds"]
    for n in (7, 12, 3):
        got, want = f(u, v, k.copy(), n, 0.1), stepped(u, v, k.copy(), n, 0.1)
        for g, w in zip(got, want):
            assert type(g) is type(w) and np.array_equal(g, w) and getattr(g, "dtype", 0) == getattr(w, "dtype", 0)
    assert build.stats["builds"] == builds and len(f.cache_entries) == 2
    assert NODE in "\n".join(kiln.explain(stepped)(u, v, k.copy(), 80, 0.25).loops)   # past the budget


def narrow(x, a, n):
    """``x + i`` of an int8 ``x`` raises NumPy's OverflowError once ``i`` passes 127, after
    the trips before it wrote ``x``."""
    for i in range(a, n):
        x[1:] = x[:-1] + i
    return x


def test_int_out_of_the_arrays_dtype_raises_as_numpy():
    x = np.zeros(3, dtype=np.int8)
    check_program(narrow, [(x, 0, 6), (x, 120, 140), (x, -130, -120)], "cpp")


def test_sandpile_count_and_its_history_are_one_node():
    """``topples += int(n.sum())`` in a while node inside a time loop that appends the
    count: the while node carries the int (int() of the int64 sum), the range loop is a
    graph loop stacking the Python ints (it unrolled and ran as Python, 5x slower than
    NumPy, before), and one compile serves every grain count."""
    from tests.test_programs_real15 import abelian_sandpile_topple as sandpile
    grid = np.full((5, 5), 3, dtype=np.int32)
    check_program(sandpile, [(grid, 2, 2, 6), (grid, 2, 2, 9)], "cpp")
    notes = "\n".join(kiln.explain(sandpile)(grid.copy(), 2, 2, 6).loops)
    assert "graph loop node (graph_loop" in notes and "stacked: sizes" in notes
    assert "carried: grid, unstable, topples" in notes
    f = kiln.compile(sandpile)
    f(grid.copy(), 2, 2, 6)
    builds = build.stats["builds"]
    for grains in (9, 4):
        got, want = f(grid.copy(), 2, 2, grains), sandpile(grid.copy(), 2, 2, grains)
        assert np.array_equal(got[0], want[0]) and got[0].dtype == want[0].dtype and got[1] == want[1]
    assert build.stats["builds"] == builds


def timed32(x, dt, n):
    """``t = i * dt`` (a Python float the node computes) with a float32 array: NumPy
    rounds the weak float into float32 (``np.float32(t)``), with its "overflow encountered
    in cast" where ``t`` passes float32's range (``dt=1e300``)."""
    acc = np.zeros_like(x)
    for i in range(n):
        t = i * dt
        acc += x * t
    return acc


def _counts_share_one_entry(fn, args_of) -> str:
    """``fn`` compiled: unrolled for its first count, a node once another comes, which
    then serves later counts with no build and NumPy's values and dtypes; explain's loop
    notes past the unrolling budget."""
    f = kiln.compile(fn)
    f(*args_of(5))
    f(*args_of(9))
    builds = build.stats["builds"]
    for n in (7, 12):
        got, want = f(*args_of(n)), fn(*args_of(n))
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        assert all(type(g) is type(w) and np.asarray(g).dtype == np.asarray(w).dtype
                   and np.array_equal(g, w) for g, w in zip(got, want))
    assert build.stats["builds"] == builds and len(f.cache_entries) == 2
    return "\n".join(kiln.explain(fn)(*args_of(600)).loops)


def test_float_from_the_variable_with_float32_is_one_node():
    x = np.linspace(0.5, 2.0, 5, dtype=np.float32)
    check_program(timed32, [(x, 0.1, 5), (x, 0.1, 9), (x, 1e300, 3), (x, 0.3, 1)], "cpp")
    assert NODE in _counts_share_one_entry(timed32, lambda n: (x, 0.7, n))


def history(x, n, dt):
    """Two histories appended a trip (an array and the variable's time, a Python float)
    beside a carried float: stacked by the counter form's node (its short-body check ran
    before the appends were taken off and read them as a side effect: unrolled, a build
    per trip count)."""
    xs, ts = [], []
    s = 0.0
    for i in range(n):
        t = i * dt
        x = x * 0.5 + t
        s = s + 1.0
        xs.append(x)
        ts.append(t)
    return np.array(xs), np.array(ts), s


def test_two_histories_with_the_variable_are_one_node():
    x = np.linspace(0.0, 1.0, 4)
    check_program(history, [(x, 5, 0.1), (x, 9, 0.1), (x, 1, 0.2), (x, 0, 0.1)], "cpp")
    notes = _counts_share_one_entry(history, lambda n: (x, n, 0.3))
    assert NODE in notes and "stacked: ts, stacked: xs" in notes


def rows_by_index(a, out, n):
    """The variable as a subscript (kiln/capture/loops.py ``LoopIndexVariable``): a row of
    ``a`` read (a view), a row of ``out`` written, and np.apply_along_axis over a 2-d array
    (a range loop of its rows, kiln/ops/polyfills.py). Each unrolled, ``func1d`` captured
    per row, and past the long-loop limit the whole function ran as Python. ``n`` past
    ``a``'s rows: NumPy's IndexError once the rows before it were written."""
    spread = np.apply_along_axis(lambda v: v.max() - np.sort(v)[1], 1, a)
    for i in range(n):
        r = a[i]
        out[i, 1:] = (r[1:] - r.mean()) / r.std()
    return out, spread


def test_the_variable_as_an_index_is_one_node():
    a = np.random.default_rng(3).random((200, 6))
    report = kiln.explain(rows_by_index)(a, np.zeros((200, 6)), 200)
    notes = "\n".join(report.loops)
    assert notes.count("range loop carrying numbers") == 2 and report.graph_break_count == 0, notes
    assert max(len(ops) for ops in report.ops_per_graph) < 20, report.ops_per_graph
    # (a short body unrolls for its first count; the second count is the node, the third
    # one past the rows: NumPy's IndexError after the rows before it were written)
    a, out = a[:12], np.zeros((12, 6))
    check_program(rows_by_index, [(a, out, 12), (a, out, 9), (a, out, 13)], "cpp")


def roots_by_find(p, in_helper):
    """A helper that writes an array of the enclosing frame through its closure, called
    by a comprehension's range loop (its variable an index: the loop is tried as a node,
    its body's inner while loop writes ``parent``, and the attempt fails). On 3.11 the
    comprehension is a function of its own whose frame reaches ``parent`` only through
    ``find``'s cell: the failed attempt left the array's tracker at the removed node, and
    the graph after it named it (UnboundLocalError: loop_item_3). ``in_helper``: the
    comprehension in a nested helper, the same on every Python version (3.12+ inline a
    comprehension into its own function's frame, here ``labels``, not ``parent``'s)."""
    parent = p.copy()

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def labels(n):
        return [find(i) for i in range(n)]
    if in_helper:
        return np.array(labels(parent.shape[0])), parent
    return np.array([find(i) for i in range(parent.shape[0])]), parent


def test_a_failed_attempt_puts_back_arrays_behind_closure_cells():
    p = np.array([0, 0, 1, 2, 3, 4, 6, 6, 7, 8])
    check_program(roots_by_find, [(p, False), (p, True), (p[::-1].copy(), True)], "eager")


def prefix_sums(a):
    s = np.zeros(a.shape[1])
    for i in range(1, a.shape[0]):
        s = s + a[:i].sum(axis=0) * a[i]   # a bound each trip changes: unrolled, as before
    return s


def test_the_variable_as_a_slice_bound_still_unrolls():
    # (an AttributeError out of the run-time slice's length, which has no source, once the
    # variable became an index)
    check_program(prefix_sums, [(np.arange(24.0).reshape(8, 3),)], "eager")
