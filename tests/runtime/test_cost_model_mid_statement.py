"""A graph priced out before a break, in a resume function entered mid-statement
(kiln/capture/partial.py ``from_start``, kiln/capture/exit_stacks.py).

The region that runs as Python then starts where the resume function starts, inside a
statement (``np.array([...], dtype=...)`` after its list was built), and must run to the
end of the statement the break is in. On 3.11 ending it where the stack was back at its
entry depth left the next statement's call slot (a NULL) on the exit's stack: stored to
``___tmp0``, UnboundLocalError on every call (real21's FIFO cost basis). 3.12's and 3.13's
inlined comprehensions (PEP 709) end their loop with an END_FOR the loop's exit skips
(unreachable in kiln's facts), where the extension stopped: the region ended inside the
comprehension's loop and its exit passed the NULL to a call, a segfault, on 3.12 and 3.13
for all but two of the shapes below (main had the 3.11 bug and the segfault both).

Every shape runs compiled with the cost model on, twice per size, against NumPy."""
from collections import deque

import numpy as np
import pytest

import kiln
from kiln.config import config


@pytest.fixture(autouse=True)
def _cost_model_on(monkeypatch):
    kiln.reset()
    monkeypatch.setattr(config, "cost_model", True)


def two_comprehensions(qty):      # real21's FIFO lots: iterating a deque breaks
    lots = deque([q, 2.0] for q in qty.tolist())
    left = np.array([lot[0] for lot in lots], dtype=np.int64)
    basis = np.array([lot[1] for lot in lots])
    return left, basis


def shadowing_a_bound_local(qty):  # 3.12+: the comprehension saves and restores ``lot``
    lot = qty[0] * 2
    lots = deque(qty.tolist())
    first = np.array([lot + 1 for lot in lots], dtype=np.float64)
    second = np.array([lot * 2 for lot in lots]) + lot
    return first, second, lot


def nested_calls(qty):
    d = deque(qty.tolist())
    a = np.sqrt(np.abs(np.array([v - 1.5 for v in d], dtype=np.float64)))
    b = np.maximum(np.array([v for v in d]), np.asarray(list(d)).mean())
    return a, b


class Box:
    def __init__(self, d):
        self.d = d

    def values(self):
        return list(self.d)


def method_calls(qty):             # a method's slot: NULL or self, as the attribute decides
    box = Box(deque(qty.tolist()))
    a = np.array(box.values(), dtype=np.float64).sum()
    b = np.cumsum(np.array(box.values())) * a
    return a, b


def in_a_call_s_arguments(qty):
    rows = deque(qty.tolist())
    z = np.zeros(len(rows)) + np.array(sorted(rows))
    w = np.full(len(rows), sum(v for v in rows)) - z
    return z, w


class Counting:
    def __init__(self):
        self.n = 0

    def __enter__(self):
        self.n += 1
        return self

    def __exit__(self, *exc):
        self.n -= 1
        return False


def in_a_with_block(qty):
    d = deque(qty.tolist())
    c = Counting()
    x = np.array([v for v in d], dtype=np.float64)
    with c:
        y = np.array([v * 2 for v in d]) + x
    return x, y, c.n


def set_and_dict_comprehensions(qty):
    d = deque(qty.tolist())
    m = np.array(sorted({v % 3 for v in d}), dtype=np.int64)
    k = np.array(list({v: v * 2 for v in d}.values())) + m.sum()
    return m, k


@pytest.mark.parametrize("fn", [two_comprehensions, shadowing_a_bound_local, nested_calls,
                                method_calls, in_a_call_s_arguments, in_a_with_block,
                                set_and_dict_comprehensions], ids=lambda f: f.__name__)
def test_a_region_from_a_resume_entered_mid_statement_runs_to_the_break_s_statement_end(fn):
    compiled = kiln.compile(fn)
    for n in (2, 5, 5, 3, 3):
        qty = np.arange(1, n + 1)
        got, want = compiled(qty), fn(qty)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
            assert np.asarray(g).dtype == np.asarray(w).dtype
