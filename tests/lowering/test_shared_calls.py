"""Repeated extern calls computed once (kiln/ir/passes.py shared_calls, used by
kiln/lowering/lower.py): values, aliasing and written arrays against NumPy, and a count
of the NumPy calls the compiled code makes."""
import numpy as np
import pytest

import kiln
from kiln.ops import REGISTRY
from tests.test_programs import check_program


def both_returned(a, b):
    return a @ b, a @ b                  # two arrays, as NumPy gives


def one_written(a, b):
    x = a @ b
    y = a @ b
    y[0] = 5.0                           # x keeps its value
    return x, y


def view_returned(a, b):
    x = a @ b
    return x, (a @ b)[1:]                # the view shares no memory with x


def repeated(a, b):
    return (a @ b) + 2.0 * (a @ b)


def across_a_write(a, b):
    x = a @ b
    a[0] = 1.0                           # the second product sees the write
    return x + (a @ b)


def _args(shape_a=(4, 4), shape_b=(4,)):
    rng = np.random.default_rng(0)
    return rng.random(shape_a), rng.random(shape_b)


@pytest.mark.parametrize("fn", [both_returned, one_written, view_returned, repeated, across_a_write])
def test_against_numpy(fn):
    check_program(fn, [_args(), _args((3, 5), (5, 2))], "cpp")


def _counted(monkeypatch):
    calls = []
    impl = REGISTRY["matmul"].impl
    monkeypatch.setattr(REGISTRY["matmul"], "impl", lambda x, y: calls.append(1) or impl(x, y))
    return calls


def test_repeat_runs_once(monkeypatch):
    calls = _counted(monkeypatch)
    f = kiln.compile(repeated)
    a, b = _args()
    for _ in range(3):
        calls.clear()
        np.testing.assert_array_equal(f(a, b), repeated(a, b))
        assert len(calls) == 1, calls       # (the uncompiled call's @ is not counted)


def test_not_merged_where_the_caller_would_see_it(monkeypatch):
    calls = _counted(monkeypatch)
    f = kiln.compile(both_returned)
    a, b = _args()
    f(a, b)
    calls.clear()
    x, y = f(a, b)
    assert len(calls) == 2 and x is not y and not np.shares_memory(x, y)
