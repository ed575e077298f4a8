"""break, continue and data-dependent if/else with side effects inside loop nodes
(kiln/capture/loop_branches.py): every form against plain Python — values, types, the
final state of mutated arguments, exceptions —, on the reference backend and on C++."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import kiln
from kiln.ops.loops import stats as loop_stats

from .test_loops import _copy, _same

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.loop_kernels import csr_matvec, sieve  # noqa: E402

BACKENDS = ["eager", "cpp"]


def first_above(a, t):                # a data-dependent break; k set on the break's path
    k = -1
    for i in range(a.shape[0]):
        if a[i] > t:
            k = i
            break
    return k


def last_above(a, t):                 # the same walking backwards (a negative step)
    k = -1
    for i in range(a.shape[0] - 1, -1, -1):
        if a[i] > t:
            k = i
            break
    return k


def skip_negatives(a):                # continue under a data-dependent if
    s = np.float64(0)
    n = 0
    for i in range(a.shape[0]):
        if a[i] < 0:
            continue
        s += a[i]
        n += 1
    return s, n


def clip_in_place(a, lo):             # stores on one path only: the argument is mutated
    for i in range(a.shape[0]):
        if a[i] < lo:
            a[i] = lo
        elif a[i] > 1.0:
            a[i] = 1.0
            continue
        a[i] *= 2.0


def next_diff(a):                     # a read that is out of bounds on the path not taken
    s = 0.0
    n = a.shape[0]
    for i in range(n):
        if i + 1 < n:
            s += a[i + 1] - a[i]
    return s


def int_quotients(d):                 # a Python-int division by zero on the path not taken
    q = 0
    for i in range(d.shape[0]):
        if d[i] != 0:
            q += 1000 // int(d[i])
    return q


def row_firsts(A, t):                 # break leaves the inner loop only
    n, m = A.shape
    out = np.zeros(n, dtype=np.int64)
    for i in range(n):
        k = m
        for j in range(m):
            if A[i, j] > t:
                k = j
                break
        out[i] = k
    return out


def rows_without(A, t):               # for-else inside a loop: the else runs where no break
    c = 0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if A[i, j] > t:
                break
        else:
            c += 1
    return c


def find_pair(A, t):                  # for-else + continue + break: leave both loops
    hit = -1
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if A[i, j] > t:
                hit = i * 100 + j
                break
        else:
            continue
        break
    return hit


def next_rows(A, t):                  # an inner loop on one path only (zero trips off it)
    n, m = A.shape
    s = 0.0
    for i in range(n):
        if i + 1 < n and A[i, 0] > t:
            for j in range(m):
                s += A[i + 1, j]
    return s


def sum_until_negative(a, t):         # a break inside a while loop
    s = 0.0
    i = 0
    while s < t:
        if a[i] < 0:
            break
        s += a[i]
        i += 1
    return s, i


def skip_small(a):                    # continue in a while loop: its test runs again
    i, s = 0, 0.0
    while i < a.shape[0]:
        i += 1
        if a[i - 1] < 0.5:
            continue
        s += a[i - 1]
    return s, i


def skip_until(a, t):                  # continue and break in one while loop
    i, s, n = 0, 0.0, 0
    while i < a.shape[0]:
        x = a[i]
        i += 1
        if x < 0.3:
            continue
        if s > t:
            break
        s += float(x)
        n += 1
    return s, i, n


def count_until(a, t):                # the break's test reads s: a constant (0.0) the first
    s, k = 0.0, 0                      # time the body is traced (its flag was dropped: k ran on)
    for i in range(a.shape[0]):
        k += 1
        if s > t:
            break
        s += float(a[i])
    return s, k


def bits_until(data, stop):           # uint8 element code, a break on wrapped values
    c = np.uint8(0)
    for k in range(data.shape[0]):
        c = c * np.uint8(3) + data[k]
        if c == stop:
            break
    return c


def first_above_in(a, n, t):          # the trip count is an argument
    k = -1
    for i in range(n):
        if a[i] > t:
            k = i
            break
    return k


def strided(x, k):                    # a run-time step (negative), read from an argument
    s = 0.0
    for i in range(x.shape[0] - 1, -1, -k):
        s += x[i] * i
    return s


def _csr(r, rows, cols, dtype):
    dense = r.random((rows, cols)) * (r.random((rows, cols)) < 0.2)
    dense[3] = 0.0                    # an empty row: a zero-trip inner loop
    indptr = np.r_[0, np.cumsum((dense != 0).sum(axis=1))].astype(dtype)
    indices = np.nonzero(dense)[1].astype(dtype)
    return indptr, indices, dense[dense != 0], r.random(cols)


def overrun(a, t):                    # IndexError raised on the path taken, writes kept
    for i in range(a.shape[0]):
        if a[i] > t:
            a[i] = a[i + 100]
        a[i] += 1.0


def found_or_last(A, t):              # for-else: idx set before the break is live past
    found = idx = -1                  # the else block (the head's liveness missed it,
    for i in range(A.shape[0]):       # idx kept an older row's value)
        for j in range(A.shape[1]):
            if A[i, j] > t:
                found = idx = i * 10 + j
                break
        else:
            idx = found
    return found, idx


def reset_to_int(x, cap):             # np.int64 sums a path sets to a Python int: the int
    v = w = 0                         # widened under the predicate of the side traced last
    for i in range(x.shape[0]):       # gave the harmless 1 where it was taken (real20's
        v = v + x[i]                  # (s, S) inventory policy: every level 1)
        if v > cap:
            v = 7
        w = w + x[i]
        if w > cap:
            w = 3
            continue
        w = w * 2
    return v, w


CASES = {
    "first_above": lambda r: (first_above, (r.random(40), 0.9)),
    "first_above_none": lambda r: (first_above, (r.random(40), 2.0)),
    "first_above_empty": lambda r: (first_above, (np.zeros(0), 0.5)),
    "last_above": lambda r: (last_above, (r.random(40), 0.9)),
    "skip_negatives": lambda r: (skip_negatives, (r.standard_normal(30),)),
    "clip_in_place": lambda r: (clip_in_place, (2 * r.standard_normal(30), -0.5)),
    "next_diff": lambda r: (next_diff, (r.random(20),)),
    "int_quotients": lambda r: (int_quotients, (r.integers(-3, 4, 30),)),
    "row_firsts": lambda r: (row_firsts, (r.random((8, 9)), 0.8)),
    "rows_without": lambda r: (rows_without, (r.random((12, 6)), 0.85)),
    "find_pair": lambda r: (find_pair, (r.random((9, 8)), 0.97)),
    "find_pair_none": lambda r: (find_pair, (r.random((9, 8)), 2.0)),
    "next_rows": lambda r: (next_rows, (r.random((9, 5)), 0.4)),
    "sum_until_negative": lambda r: (sum_until_negative, (np.r_[r.random(10), -1.0, r.random(30)], 50.0)),
    "sum_until_t": lambda r: (sum_until_negative, (r.random(40), 3.0)),
    "csr_matvec": lambda r: (csr_matvec, _csr(r, 12, 9, np.int32)),
    "csr_matvec_int64": lambda r: (csr_matvec, _csr(r, 7, 15, np.int64)),
    "sieve": lambda r: (sieve, (200,)),
    "strided": lambda r: (strided, (r.random(30), 4)),
    "skip_small": lambda r: (skip_small, (r.random(40),)),
    "skip_small_empty": lambda r: (skip_small, (np.zeros(0),)),
    "skip_until": lambda r: (skip_until, (r.random(40), 5.0)),
    "skip_until_all": lambda r: (skip_until, (r.random(40), 100.0)),
    "count_until": lambda r: (count_until, (r.random(40), 5.0)),
    "count_until_none": lambda r: (count_until, (r.random(40), 50.0)),
    "found_or_last": lambda r: (found_or_last, (np.array([[0.2, 0.3], [0.95, 0.1], [0.4, 0.2], [0.1, 0.99]]), 0.9)),
    "found_or_last_rand": lambda r: (found_or_last, (r.random((6, 5)), 0.9)),
    "reset_to_int": lambda r: (reset_to_int, (r.integers(0, 6, 20), 9)),
    "bits_until": lambda r: (bits_until, (r.integers(0, 256, 60).astype(np.uint8), np.uint8(7))),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_break_continue_forms_match_python(case, backend):
    fn, args = CASES[case](np.random.default_rng(3))
    mine, theirs = _copy(args), _copy(args)
    compiled = kiln.compile(fn, backend=backend)
    before = dict(loop_stats)
    _same(compiled(*mine), fn(*theirs))
    for a, b in zip(mine, theirs):      # the final state of mutated arguments
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    (record,) = compiled.records
    assert record.graph_break is None, record.graph_break
    if case in ("first_above_empty", "skip_small_empty"):   # zero trips, decided by guards
        return
    assert "loop" in record.ops, record.loops
    if backend == "cpp":
        assert loop_stats["native"] > before["native"], record.loops


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_exception_in_the_loop_is_pythons(backend):
    a = np.random.default_rng(4).random(30)
    mine, theirs = a.copy(), a.copy()
    compiled = kiln.compile(overrun, backend=backend)
    with pytest.raises(IndexError) as got:
        compiled(mine, 0.95)
    with pytest.raises(IndexError) as want:
        overrun(theirs, 0.95)
    assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(mine, theirs)   # the iterations before it wrote
    overrun(theirs, 2.0)                          # the path with the error not taken
    compiled(mine, 2.0)
    np.testing.assert_array_equal(mine, theirs)


def test_one_compile_for_every_break_position_and_trip_count(monkeypatch):
    """The unrolled loop broke the graph at the branch and specialized its resume function
    on the iteration it broke in: with the cost model off, recompile_limit after 8 calls."""
    from kiln.config import config
    monkeypatch.setattr(config, "cost_model", False)
    graphs = []
    compiled = kiln.compile(first_above, backend=lambda g, ex: graphs.append(g) or g)
    rng = np.random.default_rng(5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for k in range(12):
            a = rng.random(50)
            t = 0.9 + 0.009 * k
            assert compiled(a, t) == first_above(a, t)
    assert len(graphs) == 1 and len(compiled.records) == 1
    graphs.clear()
    compiled = kiln.compile(first_above_in, backend=lambda g, ex: graphs.append(g) or g)
    a = rng.random(50)
    for n in (50, 10, 3, 0, 33):
        for t in (0.5, 0.99):
            assert compiled(a, n, t) == first_above_in(a, n, t)
    assert len(graphs) == 1 and len(compiled.records) == 1


def test_explain_names_the_break():
    report = kiln.explain(first_above)(np.random.default_rng(6).random(20), 0.5)
    assert any("it breaks" in note for note in report.loops), report.loops
    assert report.graph_break_count == 0


def test_top_level_for_else_keeps_the_old_behaviour():
    def found(a, t):
        for i in range(a.shape[0]):
            if a[i] > t:
                break
        else:
            return -1
        return 1
    a = np.random.default_rng(7).random(20)
    compiled = kiln.compile(found)
    for t in (0.5, 2.0):
        assert compiled(a, t) == found(a, t)
    report = kiln.explain(found)(a, 0.5)
    # 3.12+ copy ``return 1`` into the break: a loop that returns (test_loop_returns.py)
    assert any("for-else" in note or "it breaks or returns" in note for note in report.loops), report.loops


def test_a_zero_run_time_step_raises_as_python():
    x = np.arange(9.0)
    for backend in BACKENDS:
        compiled = kiln.compile(strided, backend=backend)
        assert compiled(x, 2) == strided(x, 2)
        with pytest.raises(ValueError, match="must not be zero"):
            compiled(x, 0)


def test_one_compile_serves_every_sparsity_pattern():
    graphs = []
    compiled = kiln.compile(csr_matvec, backend=lambda g, ex: graphs.append(g) or g)
    rng = np.random.default_rng(8)
    for _ in range(4):   # other row pointers, same sizes: the bounds are run-time values
        dense = np.zeros((12, 9))
        dense.flat[rng.choice(dense.size, 20, replace=False)] = rng.random(20) + 0.5
        indptr = np.r_[0, np.cumsum((dense != 0).sum(axis=1))].astype(np.int32)
        args = (indptr, np.nonzero(dense)[1].astype(np.int32), dense[dense != 0], rng.random(9))
        _same(compiled(*args), csr_matvec(*args))
    assert len(graphs) == 1


def test_a_while_loop_whose_first_test_a_guard_decided_is_one_node():
    """``err = tol + 1.0; while err > tol:``: every sweep in one top-level loop call (the
    first sweep used to run inline as a node of its own, then the rest as another)."""
    from benchmarks.loop_kernels import relax_until_converged
    rod = np.r_[0.0, np.random.default_rng(9).random(20), 0.0]
    report = kiln.explain(relax_until_converged)(rod.copy(), 1e-3)
    assert [ops.count("loop") for ops in report.ops_per_graph] == [1], report.ops_per_graph
    compiled = kiln.compile(relax_until_converged)
    mine, theirs = rod.copy(), rod.copy()
    for tol in (1e-3, 10.0):
        _same(compiled(mine, tol), relax_until_converged(theirs, tol))
        np.testing.assert_array_equal(mine, theirs)
