"""Graph breaks whose resume point sits inside nested loops: the segment and resume code
must agree with the interpreter on the stack (the loops' iterators stay on it), whatever
instruction the break lands on. Every case is compared against the plain function:
values, dtypes, shapes and the final state of the arguments.

The step-limit sweep stops capture at every instruction of an inner loop body in turn
(the limit a long unrolled loop hits in real code), which is how the 3.11 break between a
call's ``PRECALL`` and ``CALL`` was found: a 70x70 double loop over columns raised
"Failed to compute stacksize, got negative size"."""
import copy

import numpy as np
import pytest

import kiln
from kiln.capture import translator

from .conftest import assert_same


class Box:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def for_for(A, B, W):
    D = np.zeros((A.shape[1], B.shape[1]))
    for ii in range(A.shape[1]):
        for jj in range(B.shape[1]):
            wdiff = (A[:, ii] - B[:, jj]) / W[:, ii]
            D[ii, jj] = np.sqrt((wdiff ** 2).sum())
    return D


def for_while(A, B, W):
    out = np.zeros(A.shape[1])
    for ii in range(A.shape[1]):
        k = 0
        while k < B.shape[1]:
            out[ii] += np.abs(A[:, ii] - B[:, k]).max(keepdims=False) * W[0, ii]
            k += 1
    return out


def while_for(A, B, W):
    acc = A.copy()
    i = 0
    while i < 2:
        for row in B:
            acc[0] += row * W[i]
        i += 1
    return acc


def for_for_print(A, B, W):
    t = A.sum(axis=0)
    for ii in range(2):
        for jj in range(3):
            t = t * 0.5 + B[jj]
            print(ii, jj)            # breaks in the inner loop
        t = t - W[ii]
    return t


def for_print_for(A, B, W):
    t = A[0].copy()
    for ii in range(3):
        print(ii)                    # breaks in the outer loop, before the inner one
        for jj in range(2):
            t += B[jj] * ii
    return t * 2


def break_at_depths(A, B, W):
    t = np.zeros(A.shape[1])
    for ii in range(4):
        for jj in range(4):
            if jj > ii:
                break                # leaves the inner loop only
            t = t + A[jj] * W[ii]
            print(jj)
        if ii == 2:
            break                    # leaves the outer loop
        t = np.sqrt(t + 1.0)
    return t


def continue_inner(A, B, W):
    t = A[0].copy()
    for ii in range(3):
        for jj in range(3):
            if jj == 1:
                continue
            kiln.graph_break()
            t = t + B[jj] - W[ii]
    return t


def loops_in_with(A, B, W):
    t = A[0].copy()
    with Box():
        for ii in range(2):
            for jj in range(3):
                t = t + B[jj] * W[ii]
                print(jj)
    return t.sum()


def loops_in_try(A, B, W):
    t = A[0].copy()
    try:
        for ii in range(2):
            for jj in range(3):
                t = t / W[ii] + B[jj]
                print(ii)
    except ZeroDivisionError:
        t = None
    return t


def loops_around_try(A, B, W):
    t = A[0].copy()
    for ii in range(2):
        for jj in range(3):
            try:
                t = t + B[jj][ii] * W[ii]
            except IndexError:
                t = t - 1
    return t


CASES = [for_for, for_while, while_for, for_for_print, for_print_for, break_at_depths,
         continue_inner, loops_in_with, loops_in_try, loops_around_try]


def _inputs(n=4):
    rng = np.random.default_rng(0)
    return rng.random((n, n)), rng.random((n, n)), rng.random((n, n)) + 0.5


def _check(fn, args, backend, calls=2):
    compiled = kiln.compile(fn, backend=backend)
    for _ in range(calls):
        eager_args, kiln_args = copy.deepcopy(args), copy.deepcopy(args)
        expected = fn(*eager_args)
        got = compiled(*kiln_args)
        assert_same(got, expected)
        assert_same(list(kiln_args), list(eager_args), "arguments after the call")


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_breaks_inside_nested_loops(fn, capsys):
    _check(fn, _inputs(), "eager")


@pytest.mark.parametrize("fn", [for_for, for_while], ids=lambda f: f.__name__)
def test_step_limit_at_every_instruction_of_the_inner_body(fn, monkeypatch):
    # One iteration of the inner body is under 60 instructions: these limits stop capture
    # once at each of them (in the first, second and later inner iterations).
    monkeypatch.setattr(kiln.config, "recompile_limit", 2)
    args = _inputs(3)
    for limit in range(40, 100):
        monkeypatch.setattr(translator, "MAX_STEPS", limit)
        kiln.reset()
        _check(fn, args, "eager", calls=1)


def test_wide_double_loop_over_columns_is_two_loop_nodes():
    # The reported program: 70x70, through the default backend. Its body (column views, a
    # square, a sum, an element store) is vector code: one graph of two nested loop nodes.
    compiled = kiln.compile(for_for)
    args = _inputs(70)
    assert_same(compiled(*args), for_for(*args))
    [record] = compiled.records
    assert record.graph is not None and record.graph_break is None
    assert any("loop node" in note for note in record.loops) and not record.runs_as_python


def for_for_cubed(A, B, W):
    D = np.zeros((A.shape[1], B.shape[1]))
    for ii in range(A.shape[1]):
        for jj in range(B.shape[1]):
            wdiff = (A[:, ii] - B[:, jj]) / W[:, ii]
            D[ii, jj] = np.sqrt((np.abs(wdiff) ** 3).sum())   # a power loop bodies refuse
    return D


def test_wide_double_loop_that_unrolls_runs_as_python_without_a_long_capture():
    # Unrolled, its 4,900 steps would pass the capture limit; capture sees that after two
    # outer iterations and the function runs as Python (it used to capture 200,000
    # instructions, then fail).
    compiled = kiln.compile(for_for_cubed)
    args = _inputs(70)
    assert_same(compiled(*args), for_for_cubed(*args))
    [record] = compiled.records
    assert record.graph is None and record.graph_break.kind == "long_loop"
    assert "would unroll past" in record.graph_break.reason
