"""Range loops as loop nodes (kiln/capture/loops.py, kiln/ops/loops.py, kiln/lowering/loops.py):
every form against plain Python/NumPy — values, types, mutated arguments, exceptions —
on the reference backend and on C++ (where the body is a generated C++ loop)."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import kiln
from kiln.ops.loops import stats as loop_stats

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.loop_kernels import (crc32, edit_distance, fsub, gauss_seidel,  # noqa: E402
                                     histogram_loop, house_robber, relax_until_converged,
                                     viterbi)

BACKENDS = ["eager", "cpp"]


def backsub(U, y):                    # negative steps
    n = y.shape[0]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        s = y[i]
        for j in range(n - 1, i, -1):
            s -= U[i, j] * x[j]
        x[i] = s / U[i, i]
    return x


def prefix_inplace(a):                # writes an argument in place; returns nothing
    for i in range(1, a.shape[0]):
        a[i] += a[i - 1]


def wrap_u8(a):                       # uint8 wrapping, written back into a uint8 array
    for i in range(1, a.shape[0]):
        a[i] = a[i] + a[i - 1] * np.uint8(3)
    return a


def f32_sum(x, n):                    # float32 rounding, run-time trip count
    s = np.float32(0)
    for i in range(n):
        s += x[i]
    return s


def py_float_sum(x, n):               # s starts a Python float and becomes np.float64
    s = 0.0
    for i in range(n):
        s += x[i] * i
    return s


def py_int_growth(n):                 # a Python int that passes int64 must not wrap
    s = 1
    for i in range(n):
        s = s * 3 + i
    return s


def int_mix(a, n):                    # Python ints meeting int32 elements; // and % and shifts
    t = 0
    for i in range(n):
        t = t + (a[i] // 3) % 7 + (i << 2) - abs(a[i] - 5)
    return t


def goertzel(x, coeff):               # s1 = s2 = 0.0: one start value bound to two names,
    s1 = s2 = 0.0                     # then s2 follows s1 (it looked unchanged: not carried)
    for v in x:
        s0 = v + coeff * s1 - s2
        s2, s1 = s1, s0
    return s1, s2


def int_lag(x):                       # the same with Python ints and a plain store
    p = q = 0
    for v in x:
        q = p
        p = p + 1 + int(v > 0.5)
    return p, q


def two_rows(a, b):                   # prev, cur = cur, prev: two carried arrays swapped
    prev = np.arange(b.shape[0] + 1)
    cur = np.zeros(b.shape[0] + 1, dtype=np.int64)
    for i in range(1, a.shape[0] + 1):
        cur[0] = i
        for j in range(1, b.shape[0] + 1):
            c = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + c)
        prev, cur = cur, prev
    return prev[b.shape[0]], prev, cur


CASES = {
    "fsub": lambda rng: (fsub, (np.tril(rng.random((9, 9))) + 9 * np.eye(9), rng.random(9))),
    "backsub": lambda rng: (backsub, (np.triu(rng.random((7, 7))) + 7 * np.eye(7), rng.random(7))),
    "prefix_inplace": lambda rng: (prefix_inplace, (rng.random(10),)),
    "house_robber": lambda rng: (house_robber, (rng.random(12),)),
    "crc32": lambda rng: (crc32, (rng.integers(0, 256, 40).astype(np.uint8),)),
    "gauss_seidel": lambda rng: (gauss_seidel, (rng.random((6, 7)), rng.random((6, 7)), 3)),
    "wrap_u8": lambda rng: (wrap_u8, (rng.integers(0, 256, 30).astype(np.uint8),)),
    "f32_sum": lambda rng: (f32_sum, (rng.random(30).astype(np.float32), 25)),
    "py_float_sum": lambda rng: (py_float_sum, (rng.random(30), 20)),
    "py_int_growth": lambda rng: (py_int_growth, (60,)),
    "goertzel": lambda rng: (goertzel, (rng.random(12), np.float64(1.5))),
    "int_lag": lambda rng: (int_lag, (rng.random(9),)),
    # Levenshtein over two rows, an odd trip count: each buffer ends with its own row
    "two_rows": lambda rng: (two_rows, (rng.integers(0, 3, 7), rng.integers(0, 3, 6))),
    "int_mix": lambda rng: (int_mix, (rng.integers(-50, 50, 20).astype(np.int32), 20)),
    # while loops: a time loop with a convergence test; a test on array data
    "relax": lambda rng: (relax_until_converged, (np.r_[0.0, rng.random(14), 0.0], 1e-3)),
    "relax_one_sweep": lambda rng: (relax_until_converged, (np.r_[0.0, rng.random(14), 0.0], 10.0)),
    "countdown": lambda rng: (countdown, (np.r_[rng.random(20) + 0.5, 0.1], 0.5)),
    # while tests on 0-d arrays: an element, a reduction's result (and zero trips)
    "halvings_0d": lambda rng: (halvings, (np.r_[300.0 * rng.random() + 2.0, 1.0],)),
    "converge_0d": lambda rng: (converge, (rng.random(8).astype(np.float32), 1e-3)),
    "converge_0d_no_trip": lambda rng: (converge, (rng.random(8), 100.0)),
    # what numba users write (benchmarks/loops.py): bins as int(x * nbins), some outside;
    # Viterbi's max and argmax per state and step, then a backtrack through psi
    "histogram": lambda rng: (histogram_loop, (rng.random(30) * 1.4 - 0.2, 6)),
    "viterbi": lambda rng: (viterbi, (np.log(rng.random((3, 3))), np.log(rng.random((3, 4))),
                                      np.log(rng.random(3)), rng.integers(0, 4, 7))),
}


RERUN = {"py_int_growth"}
# NumPy warns in these ("overflow encountered in scalar subtract": crc32's np.uint32(0) - 1):
# the native result stands, and the reference runs again for the warnings
WARNS = {"crc32"}


def countdown(a, t):                  # a while loop whose first test reads array data
    k = 0
    while a[k] > t:
        k += 1
    return k


def halvings(x):                      # s is x[0]: a NumPy scalar (a 0-d value in the graph)
    s = x[0]
    k = 0
    while s > 1:
        s = s / 2
        k += 1
    return k, s


def converge(x, tol):                 # err is a reduction's 0-d result, float32 kept
    err = np.abs(x).sum()
    k = 0
    while err > tol:
        err = err * np.float32(0.5)
        k += 1
    return k, err


def test_one_compile_serves_every_while_test_on_a_0d_array():
    compiled = kiln.compile(converge)
    x = np.random.default_rng(2).random(8)
    for tol in (1e-3, 0.5, 100.0, 1e-9):
        got, want = compiled(x, tol), converge(x, tol)
        assert type(got[1]) is type(want[1]) and got == want, (tol, got, want)
    assert len(compiled.records) == 1


def test_one_compile_serves_every_first_while_test_on_a_python_float():
    # ``err = tol + 1.0; while err > tol:``: the node starts from the first test's value
    # (no guard on ``tol + 1.0 > tol``, which 1e300 and nan fail: zero sweeps)
    compiled = kiln.compile(relax_until_converged, backend="eager")
    u = np.r_[0.0, np.random.default_rng(3).random(14), 0.0]
    for tol in (10.0, 1e300, 1e-3, float("nan")):
        mine, theirs = u.copy(), u.copy()
        _same(compiled(mine, tol), relax_until_converged(theirs, tol))
        np.testing.assert_array_equal(mine, theirs)
    assert len(compiled.records) == 1


def test_a_short_loop_around_a_loop_is_one_node():
    # crc32 over 2 bytes (a static trip count under MIN_TRIP): unrolled, each byte was a
    # launch of the inner bit loop with kernels between them; one node now
    compiled = kiln.compile(crc32, backend="eager")
    data = np.array([7, 200], dtype=np.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # NumPy's uint32 0 - 1
        _same(compiled(data), crc32(data))
    (record,) = compiled.records
    assert record.ops.count("loop") == 1 and "getitem" not in record.ops, record.ops


def _copy(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    else:
        assert got == want or (got != got and want != want), (got, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_loop_forms_match_python(case, backend):
    fn, args = CASES[case](np.random.default_rng(0))
    mine, theirs = _copy(args), _copy(args)
    compiled = kiln.compile(fn, backend=backend)
    before = dict(loop_stats)
    _same(compiled(*mine), fn(*theirs))
    if backend == "cpp":   # C++ loops ran (a Python int past int64 reruns by design)
        assert (loop_stats["native"] > before["native"]) != (case in RERUN), case
        assert (loop_stats["reference"] > before["reference"]) == (case in RERUN | WARNS), case
    for a, b in zip(mine, theirs):   # the final state of mutated arguments
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    (record,) = compiled.records
    assert record.graph_break is None and "loop" in record.ops, record.loops


def test_arrays_swapped_in_pairs_are_carried():
    """``prev, cur = cur, prev`` keeps the outer loop one node (kiln/capture/loop_swaps.py;
    it unrolled, and on 200x200 the function ran as Python), run natively."""
    fn, args = CASES["two_rows"](np.random.default_rng(1))
    compiled = kiln.compile(fn)
    before = dict(loop_stats)
    _same(compiled(*args), fn(*args))
    (record,) = compiled.records
    assert record.ops.count("loop") == 1, record.loops   # (the inner one in its body)
    assert loop_stats["native"] > before["native"] and loop_stats["reference"] == before["reference"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_compile_serves_every_trip_count(backend):
    x = np.random.default_rng(1).random(40).astype(np.float32)
    compiled = kiln.compile(f32_sum, backend=backend)
    for n in (25, 3, 40, 0, 17):
        _same(compiled(x, n), f32_sum(x, n))
    assert len(compiled.records) == 1
    # zero trips: the carried value is its start value, with its type
    _same(compiled(x, 0), f32_sum(x, 0))
    # a NumPy integer trip count (an np.argmax passed in) is read as range() reads it
    # (__index__): one loop node for every value, as for a Python int (it unrolled,
    # guarded by value: a graph per count)
    for n in (np.int64(25), np.int64(3), np.int64(0), np.int64(31)):
        _same(compiled(x, n), f32_sum(x, n))
    assert len(compiled.records) == 2 and "loop" in compiled.records[1].ops


def column_from_row(u, v):            # v may be a view of u: reads see earlier writes
    for i in range(1, u.shape[0]):
        u[i, 0] = v[0, i - 1] + 1.0
    return u


def shift_from(u, w):                 # w may be u reversed; raises past the end
    for i in range(1, u.shape[0] + 1):
        u[i] = w[i - 1] + 1.0
    return u


@pytest.mark.parametrize("backend", BACKENDS)
def test_overlapping_arguments_see_each_others_writes(backend):
    # the caller passes two views of one array: the loop reads through one what it wrote
    # through the other on earlier iterations, as Python does (no stale copies)
    compiled = kiln.compile(column_from_row, backend=backend)
    for n in (5, 7):
        mine, theirs = np.zeros((n, n)), np.zeros((n, n))
        compiled(mine, mine.T)
        column_from_row(theirs, theirs.T)
        np.testing.assert_array_equal(mine, theirs)
        a, b = np.zeros((n, n)), np.ones((n, n))     # separate arrays: the same function
        a2, b2 = a.copy(), b.copy()
        _same(compiled(a, b), column_from_row(a2, b2))
    shifted = kiln.compile(shift_from, backend=backend)
    mine, theirs = np.zeros(6), np.zeros(6)
    with pytest.raises(IndexError) as got:
        shifted(mine, mine[::-1])
    with pytest.raises(IndexError) as want:
        shift_from(theirs, theirs[::-1])
    assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(mine, theirs)   # the writes before the error, in place


@pytest.mark.parametrize("backend", BACKENDS)
def test_exceptions_inside_the_loop_are_pythons(backend):
    def shift(a, n):
        for i in range(n):
            a[i] = a[i + 1] * 2.0       # reads past the end on the last step
        return a

    def too_big(a):
        for i in range(a.shape[0]):
            a[i] = 250 + i              # a Python int that does not fit uint8
        return a

    compiled = kiln.compile(shift, backend=backend)
    mine, theirs = np.arange(5.0), np.arange(5.0)
    with pytest.raises(IndexError) as got:
        compiled(mine, 5)
    with pytest.raises(IndexError) as want:
        shift(theirs, 5)
    assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(mine, theirs)   # the writes before the error happened
    u8 = kiln.compile(too_big, backend=backend)
    mine, theirs = np.zeros(8, np.uint8), np.zeros(8, np.uint8)
    with pytest.raises(OverflowError) as got:
        u8(mine)
    with pytest.raises(OverflowError) as want:
        too_big(theirs)
    assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(mine, theirs)


def test_bodies_that_depend_on_the_value_unroll_or_break():
    def branchy(x):                      # a slice under a branch: the loop stays unrolled
        y = np.zeros(8)
        for i in range(8):
            if x[i] > 3:
                y[i:] = x[i]
        return y

    def leaves(x):                       # a break on i: a loop node that breaks
        s = 0.0
        for i in range(10):
            if i == 6:
                break
            s += x[i]
        return s

    def rows(x):                         # a row of a 2-D array: a loop node (loop_vectors)
        for i in range(1, 5):
            x[i] += x[i - 1] * 0.5
        return x

    x = np.arange(10.0)
    for fn in (branchy, leaves, rows):
        compiled = kiln.compile(fn)
        _same(compiled(np.arange(10.0).reshape(5, 2) if fn is rows else x),
              fn(np.arange(10.0).reshape(5, 2) if fn is rows else x))
        assert all(("loop" in r.ops) == (fn is not branchy) for r in compiled.records)
    report = kiln.explain(branchy)(x)
    assert any("loop unrolled" in note and "branch" in note for note in report.loops)
    assert "Loops:" in str(report)


def element_casts(x, c):
    s, t = np.float32(0), 0
    for i in range(x.shape[0]):
        c[x[i].astype(np.int64)] += 1
        s = s + x[i].astype("float32")
        t = t + x[i].astype(bool)
    return c, s, t


def test_astype_of_an_element_is_its_scalar_cast_in_a_loop_node():
    """``x[i].astype(T)`` of a NumPy scalar is ``T(x[i])``: the loop was unrolled (an
    attribute of a body value was refused)."""
    compiled = kiln.compile(element_casts, backend="eager")
    x = np.arange(12.0) % 5 + 0.5
    _same(compiled(x, np.zeros(6)), element_casts(x, np.zeros(6)))
    assert all("loop" in r.ops for r in compiled.records), [r.ops for r in compiled.records]


def weighted_sum_of_a_generator(x):
    return sum(x[i] * i for i in range(len(x)))


def test_a_generators_loop_unrolls_and_its_yields_stay_the_callers():
    """The genexpr's range loop was taken as a loop node; the value it yields is one of
    the body's, so after the failed attempt it stayed in the generator's list and the graph
    read a body value outside its loop (KeyError: scalar_fn from the compiled call)."""
    x = np.arange(7.0)
    compiled = kiln.compile(weighted_sum_of_a_generator)
    assert compiled(x) == weighted_sum_of_a_generator(x) == 91.0
    report = kiln.explain(weighted_sum_of_a_generator)(x)
    assert any("the body yields" in note for note in report.loops), report.loops


class _Box:
    def __init__(self, v):
        self.v = v


def _first_loaded_in_a_loop(y, box, items, table):
    for v in y:
        box.v = box.v * 3                 # (each argument first loaded in the body)
        items.append(v * 2)
        table["k"] = table["k"] - 1
    return box.v, len(items), table["k"]


def test_a_failed_loop_attempt_leaves_no_pass_in_arguments_first_met_in_its_body():
    """langfuzz seed 10013: the attempt to make the loop a node wrapped ``box`` (a list, a
    dict) on its first load and wrote its first pass into that tracker; the rollback put the
    frame's locals back but the cached tracker kept the pass, so the unrolled loop ran it
    once more (``box.v`` 3 ** 6 for 5 passes, ``len(items)`` 6)."""
    def args():
        return np.arange(5.0), _Box(1.0), [], {"k": 0}
    want_args, got_args = args(), args()
    want = _first_loaded_in_a_loop(*want_args)
    got = kiln.compile(_first_loaded_in_a_loop, backend="eager")(*got_args)
    assert got == want == (243.0, 5, -5)
    assert got_args[1].v == 243.0 and len(got_args[2]) == 5 and got_args[3] == {"k": -5}


def test_explain_and_the_printed_graph():
    L = np.tril(np.ones((6, 6))) + 6 * np.eye(6)
    report = kiln.explain(fsub)(L, np.ones(6))
    assert report.graph_count == 1 and "loop" in report.ops_per_graph[0]
    assert sum("loop node" in n for n in report.loops) == 2
    assert any("trip count 6" in n for n in report.loops)
    graph = report.graphs[0]
    np.testing.assert_array_equal(graph(np.ones(6), L)[0] if graph.placeholders[0].name == "b"
                                  else graph(L, np.ones(6))[0], fsub(L, np.ones(6)))


def test_gradients_keep_the_loop_unrolled():
    def dot_loop(w, x):
        s = w[0] * 0.0
        for i in range(6):
            s = s + w[i] * x[i]
        return s

    x = np.random.default_rng(2).random(6)
    w = kiln.tensor(np.random.default_rng(3).random(6), requires_grad=True)
    compiled = kiln.compile(dot_loop, backend="aot_eager")
    out = compiled(w, x)
    out.backward()
    np.testing.assert_allclose(w.grad.numpy(), x)
    assert all("loop" not in r.ops for r in compiled.records)


def bit_crc(data):                    # `if c & 1:` on uint32 values
    c = np.uint32(0xFFFFFFFF)
    for k in range(data.shape[0]):
        c ^= np.uint32(data[k])
        for _ in range(8):
            if c & np.uint32(1):
                c = (c >> np.uint32(1)) ^ np.uint32(0xEDB88320)
            else:
                c = c >> np.uint32(1)
    return c ^ np.uint32(0xFFFFFFFF)


@pytest.mark.parametrize("backend", BACKENDS)
def test_data_dependent_if_else_becomes_a_select(backend):
    rng = np.random.default_rng(4)
    a, b = rng.integers(0, 3, 12), rng.integers(0, 3, 9)
    data = rng.integers(0, 256, 30).astype(np.uint8)
    for fn, args in ((edit_distance, (a, b)), (bit_crc, (data,))):
        compiled = kiln.compile(fn, backend=backend)
        _same(compiled(*args), fn(*args))
        (record,) = compiled.records
        assert "loop" in record.ops and record.graph_break is None, record.loops
    import zlib
    assert int(kiln.compile(bit_crc, backend=backend)(data)) == zlib.crc32(data.tobytes())


def lagged_chain(x, n):               # c follows b follows a: each name one iteration behind
    a = b = c = 0.0
    for i in range(n):
        c, b, a = b, a, a + x[i]
    return a, b, c


@pytest.mark.parametrize("backend", BACKENDS)
def test_names_that_follow_a_carried_value_keep_pythons_types(backend):
    """``a = b = c = 0.0`` then ``c, b, a = b, a, a + x[i]``: b and c are carried too (they
    started as a's own object and looked unchanged after one traced iteration), and after
    0, 1 or 2 trips they are still the Python floats Python holds there."""
    x = np.arange(1.0, 9)
    compiled = kiln.compile(lagged_chain, backend=backend)
    for n in (0, 1, 2, 3, 8):
        _same(compiled(x, n), lagged_chain(x, n))
    (record,) = compiled.records
    assert "loop" in record.ops and "carried: a, b, c" in record.loops[0], record.loops
