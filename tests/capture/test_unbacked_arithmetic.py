"""Arithmetic on sizes known only once the graph runs (kiln/capture/unbacked_dims.py).

A selection's length (``x[mask]``, ``np.flatnonzero``, ``np.bincount`` of data) is an
unbacked size; slicing it (constant, negative and stepped bounds, or a run-time int
``x[:n]``), joining it with other pieces (``np.r_``, ``np.hstack``, ``np.concatenate``,
``np.append``) and ``np.diff`` of the result stay in one graph. Each program runs on
inputs whose selections have different lengths (0 and 1 included) and must match NumPy
on every backend, with one C++ build for all of them and no graph break; uses that need
the size as a number still break the graph, and the results are still NumPy's."""
import numpy as np
import pytest

import kiln
from kiln.ir.sizes import Size
from kiln.lowering.sizes import SymbolTable
from tests.test_programs import BACKENDS, check_program

from .conftest import same_as_numpy
from .test_data_dependent import CppCounting

RNG = np.random.default_rng(43)


def bincount_tail(k):
    c = np.bincount(k, minlength=13)[2:]           # the length is max(13, k.max() + 1) - 2
    return c / c.sum()


def group_lengths(s):
    starts = np.flatnonzero(np.diff(s)) + 1
    bounds = np.r_[0, starts, len(s)]
    return np.diff(bounds)


def run_length_encode(x):
    n = len(x)
    starts = np.r_[0, np.flatnonzero(x[1:] != x[:-1]) + 1]
    lengths = np.diff(np.r_[starts, n])
    return x[starts], lengths, starts[::-1] * 2


def group_sums(keys, vals):
    order = np.argsort(keys, kind="stable")
    k, v = keys[order], vals[order]
    starts = np.concatenate(([0], np.flatnonzero(k[1:] != k[:-1]) + 1))
    return k[starts], np.add.reduceat(v, starts), np.diff(np.append(starts, len(k)))


def csr_row_pointers(rows, cols, vals):
    counts = np.bincount(rows)                      # one per row up to the largest index
    indptr = np.concatenate(([0], np.cumsum(counts)))
    order = np.argsort(rows, kind="stable")
    return indptr, indptr[1:] - indptr[:-1], cols[order] * 1, vals[order] * 2.0


def top_after_filter(x, k):
    kept = np.sort(x[x > 0])
    return kept[-k:][::-1], kept[:k] + kept[:k], kept[-3:] * 2


def views_from_a_run_time_point(x, n):
    # a view returned whole, its first element past either end when the slice is empty
    y = np.sort(x[x > 0])
    return y[n::-1], y[n::2] * 1, y[:n:-1], y[-2::-1] + 0, y[n:]


def slices_of_a_selection(x):
    y = x[x > 0]
    return (y[1:] - y[:-1], y[::2] * 2, y[1::3] + 1, y[-3:-1], y[::-1], y[0] + y[-1],
            np.hstack([y, x, y]) * 2)


def pairs_of_a_selection(x):
    y = x[x > 0]
    p = y.reshape(-1, 2)                            # NumPy's ValueError for an odd count
    return p.sum(axis=1), p[:, 0] * p[:, 1], p + np.array([1.0, 2.0]), y.reshape(2, -1) + 1


def split_a_selection(x):
    a, b, c = np.split(x[x > 0], [2, 5])             # the last piece: y[5:] of any length
    return a * 2, b + 1, c - 1, np.split(x, [3, -2])[1] * 1, np.r_[0.5, x[x > 0.5], 2.0]


def write_into_a_selection(x, n):
    y = x[x > 0]
    y[:n] = 0                                       # a copy: x stays as it was
    z = np.sort(x[x > 0])
    head = z[:n]
    head += 1                                       # a view: z changes too
    return y * 1, z, head


def shift_in_place(x):
    y = x[x > 0]
    y[1:] = y[:-1] * 2                              # both sides: one length
    z = np.sort(x[x > 0])
    z[2:] = 0
    z[::2] += 1
    w = np.sort(x[x > 0])
    w[1:] += w[:-1]                                 # overlapping: NumPy's buffered read
    return y, z, w


PROGRAMS = {
    "bincount_tail": (bincount_tail, [
        (RNG.integers(0, 20, 9),), (RNG.integers(0, 3, 9),), (np.array([14, 1, 1, 2, 0, 3, 0, 1, 1]),)]),
    "group_lengths": (group_lengths, [
        (np.array([1, 1, 2, 2, 2, 3, 1, 1]),), (np.ones(8, int),), (np.arange(8),),
        (np.array([1, 2, 2, 2, 2, 2, 2, 2]),)]),
    "run_length_encode": (run_length_encode, [
        (np.array([1, 1, 2, 2, 2, 3, 1, 1]),), (np.ones(8, int),), (np.arange(8),),
        (np.array([5, 5, 5, 5, 5, 5, 5, 4]),)]),
    "group_sums": (group_sums, [
        (RNG.integers(0, 5, 12), RNG.standard_normal(12)), (np.zeros(12, int), RNG.standard_normal(12)),
        (np.arange(12), RNG.standard_normal(12)), (np.r_[np.zeros(11, int), 1], RNG.standard_normal(12))]),
    "csr_row_pointers": (csr_row_pointers, [
        (RNG.integers(0, 4, 10), RNG.integers(0, 5, 10), RNG.standard_normal(10)),
        (RNG.integers(0, 9, 10), RNG.integers(0, 5, 10), RNG.standard_normal(10)),
        (np.zeros(10, int), RNG.integers(0, 5, 10), RNG.standard_normal(10)),
        (np.r_[np.zeros(9, int), 1], RNG.integers(0, 5, 10), RNG.standard_normal(10))]),
    "top_after_filter": (top_after_filter, [
        (RNG.standard_normal(13), 3), (-np.ones(13), 2), (np.where(np.arange(13) == 3, 1.0, -1.0), 4),
        (RNG.standard_normal(13), -2), (RNG.standard_normal(13), 30), (RNG.standard_normal(13), 0)]),
    "views_from_a_run_time_point": (views_from_a_run_time_point, [
        (np.linspace(-1, 1, 12), 3), (np.linspace(-1, 0.5, 12), 10), (-np.ones(12), 1), (-np.ones(12), -1),
        (np.linspace(-1, 0.1, 12), 5), (np.linspace(-1, 1, 12), 30), (np.linspace(-1, 1, 12), -30)]),
    "slices_of_a_selection": (slices_of_a_selection, [
        (RNG.standard_normal(13),), (np.where(np.arange(13) == 3, 1.0, -1.0),),
        (np.where(np.arange(13) < 2, 1.0, -1.0),), (np.ones(13),), (RNG.standard_normal(13),)]),
    "split_a_selection": (split_a_selection, [
        (np.linspace(-1, 1, 20),), (np.linspace(-1, 3, 20),), (np.linspace(-3, 1, 20),),
        (-np.ones(20),), (np.linspace(-1, 0.2, 20),)]),
    "write_into_a_selection": (write_into_a_selection, [
        (np.linspace(-1, 1, 12), 3), (np.linspace(-1, 3, 12), -2), (-np.ones(12), 1),
        (np.linspace(-1, 0.1, 12), 5), (np.linspace(-1, 1, 12), 30)]),
    "shift_in_place": (shift_in_place, [
        (np.linspace(-1, 1, 12),), (np.linspace(-1, 3, 12),), (-np.ones(12),), (np.linspace(-1, 0.1, 12),),
        (np.linspace(-1, 1.2, 12),)]),
    "pairs_of_a_selection": (pairs_of_a_selection, [
        (np.array([1.0, -1, 2, 3, 4, -2, 5, 6, 7, 8]),), (np.array([1.0, -1, 2, 3, 4, -2, 5, 6, 7, -8]),),
        (-np.ones(10),), (np.array([1.0, -1, 2, 3, -4, -2, -5, -6, -7, -8]),), (np.ones(10),)]),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_size_arithmetic_matches_numpy_on_every_backend(name, backend):
    fn, calls = PROGRAMS[name]
    check_program(fn, calls, backend)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_one_graph_and_one_build_for_every_length(name):
    fn, calls = PROGRAMS[name]
    explained = kiln.explain(fn)(*calls[0])
    assert explained.graph_break_count == 0, explained.break_reasons
    backend = CppCounting()
    compiled = kiln.compile(fn, backend=backend)
    for args in calls:   # (an empty selection's y[0] raises NumPy's IndexError)
        same_as_numpy(compiled, fn, *args)
    assert len(backend.graphs) == 1


def r_of_run_time_numbers(x, n, t):
    return np.r_[x, n, t, 2 * n] * 1, np.r_[n, x]


@pytest.mark.parametrize("backend", BACKENDS)
def test_r_of_run_time_numbers_matches_numpy(backend):
    """np.r_ of a run-time int or float (``len(s)`` of a dynamic s): a one-element array
    in the result dtype, NumPy's OverflowError for an int the dtype cannot hold."""
    calls = [(np.arange(3, dtype=np.int8), 4, 2.5), (np.arange(4, dtype=np.int8), 100, 1.0),
             (np.arange(5, dtype=np.int8), 300, 1.0), (np.arange(5.0, dtype=np.float32), 7, -1.0),
             (np.arange(6), 2**40, 3.0)]
    check_program(r_of_run_time_numbers, calls, backend)
    report = kiln.explain(kiln.compile(r_of_run_time_numbers, dynamic=True))(*calls[0])
    assert report.graph_break_count == 0, report.break_reasons


def test_group_boundaries_of_inputs_of_every_length_stay_one_graph():
    calls = [(np.array([1, 1, 2, 2, 2, 3, 1, 1]),), (np.ones(9, int),), (np.arange(10),),
             (np.array([1, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3]),), (np.r_[np.zeros(12, int), 1],)]
    for backend in BACKENDS:
        check_program(group_lengths, calls, backend)
    # np.r_'s len(s) is a run-time int where s.shape[0] is dynamic
    report = kiln.explain(kiln.compile(group_lengths, dynamic=True))(*calls[0])
    assert report.graph_break_count == 0, report.break_reasons


@pytest.mark.parametrize("fn", [
    lambda x: x[x > 0].reshape(-1, 2).sum(axis=1),     # at most 9 elements: no pairs
    lambda x: x[x > 0] * 2 if len(x[x > 0]) > 3 else x,  # a comparison of the length
    lambda x: np.squeeze(x[x > 0][:, None][:1]),       # a slice of at most one element
    lambda x: np.arange(len(x[x > 0])) * x[x > 0],     # the length read by Python
    lambda x: x[x > 0][1:] + x[:-1][x[:-1] > 0],       # two lengths that may differ
    lambda x: x[x > 0][1:] + np.ones(4),               # a length meets a static size
], ids=["odd-reshape", "if", "at-most-one", "len", "two-lengths", "static"])
def test_sizes_that_cannot_be_carried_break_and_match_numpy(fn):
    for x in (np.linspace(-2.0, 2.0, 9), np.linspace(-2.0, 4.0, 9), np.linspace(-2.0, 0.1, 9)):
        same_as_numpy(kiln.compile(fn), fn, x, errors=ValueError)


def test_lowering_counts_a_slice_of_an_unbacked_length_once_it_is_bound():
    """x[2:] of a length u0 that may be 0: Python's count, computed by the wrapper after
    u0 is bound; x[1:] and x[:-1] share theirs (np.diff stays one kernel)."""
    table = SymbolTable()
    u = table.unbacked("buf0.shape[0]", 9)
    first, count, step = table.int_slice(u, 2, None, None)
    assert (str(first), str(count), step) == ("o2", "u1", 1)
    assert table.symbols["u1"].source == "len(range(u0 - 2))"
    assert table.symbols["u1"].after == ("u0",) and table.symbols["u1"].hint == 7
    assert table.int_slice(u, 1, None, None)[1] == table.int_slice(u, None, -1, None)[1]
    # a polynomial length that cannot be short: the layout rule's own count
    from kiln.ops.layout import _slice
    assert _slice(1, None, None, u + 2) == (1, u + 1, 1)
    assert isinstance(count, Size)
