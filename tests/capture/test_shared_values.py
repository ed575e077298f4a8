"""Values made in the frame that reach each other more than once: Python ints read from
data (``int(a0[0])``: capture/python_numbers.py PythonIntVariable) in a recurrence, and
tuples of tuples.

``a, b = b, a + b`` makes each sum an operand of the next two, ``t = (t, t)`` each tuple
both items of the next: the values form a graph, not a tree. Written out as one
expression per value, 40 steps were a fib(40)-term expression (30 steps of the tuples
2**30 items) and capture never returned (eager, aot_eager and cpp). A long one is now
built once under a name (output.py ``once_if_long``). The tests count the rebuild work,
and stop a runaway at a budget (a BaseException, which no ``except Exception`` in capture
turns into a run as Python), so a regression fails in seconds, not hangs."""
import numpy as np
import pytest

import kiln
from kiln.capture.output import OutputGraph
from kiln.capture.rebuild import Rebuilder
from kiln.config import config

from .conftest import assert_same, run_probe, same_as_numpy


class _Runaway(BaseException):
    pass


@pytest.fixture
def reconstructs(monkeypatch):
    """How many values were rebuilt (OutputGraph.reconstruct: a return, the replay;
    Rebuilder: a graph break's segment); past 200,000 it raises _Runaway."""
    made = [0]

    def counting(plain):
        def counted(self, *args):
            made[0] += 1
            if made[0] > 200_000:
                raise _Runaway(f"{made[0]} values rebuilt")
            return plain(self, *args)
        return counted
    monkeypatch.setattr(OutputGraph, "reconstruct", counting(OutputGraph.reconstruct))
    monkeypatch.setattr(Rebuilder, "__call__", counting(Rebuilder.__call__))
    return made


def _fib_returned(a0, n):
    a, b = int(a0[0]), int(a0[1])      # Python ints read from data: PythonIntVariables
    seq = []
    for _ in range(n):
        seq.append(a)
        a, b = b, a + b                 # each sum is an operand of the next two
    return seq, a


def _fib_at_a_break(a0, n):            # the stop-60 reproducer
    a, b = int(a0[0]), int(a0[1])
    seq = []
    for _ in range(n):
        seq.append(a)
        a, b = b, a + b
    print("", end="")                   # a graph break: the list and ints are rebuilt for the rest
    return seq, a


def _fib_breaking_in_the_loop(a0, n):
    a, b = int(a0[0]), int(a0[1])
    seq = []
    for i in range(n):
        seq.append(a)
        a, b = b, a + b
        if i % 16 == 15:
            print("", end="")           # a break every 16 steps, the ints alive across it
    return seq, a


def _fib_of_0d(a0, a1, n):             # real22's int32_fibonacci_wrap: 0-d int32 arguments
    exact = [int(a0), int(a1)]
    for _ in range(n):
        exact.append(exact[-1] + exact[-2])
    return exact[-1], exact


_PROGRAMS = {"returned": _fib_returned, "at_a_break": _fib_at_a_break,
             "breaking_in_the_loop": _fib_breaking_in_the_loop}


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpp"])
@pytest.mark.parametrize("where", list(_PROGRAMS))
@pytest.mark.parametrize("cost_model", [True, False], ids=["cost_model", "compiled"])
def test_int_recurrence_read_from_data_compiles(monkeypatch, reconstructs, backend, where, cost_model):
    if backend == "cpp" and where != "at_a_break":
        pytest.skip("(one cpp program: each is a g++ build)")
    monkeypatch.setattr(config, "cost_model", cost_model)
    fn = _PROGRAMS[where]
    compiled = kiln.compile(fn, backend=backend)
    for a0, n in [(np.array([0, 1], np.int32), 40), (np.array([0, 1], np.int32), 40),
                  (np.array([-5, 2 ** 31 - 1], np.int32), 40)]:
        same_as_numpy(compiled, fn, a0, n)
    assert reconstructs[0] < 20_000, reconstructs[0]


def test_int_recurrence_of_0d_arguments_compiles(reconstructs):
    a0, a1 = np.array(1, np.int32), np.array(2 ** 31 - 1, np.int32)
    compiled, _, _ = run_probe(_fib_of_0d, a0, a1, 50, graphs=0)   # (int() of a 0-d argument: no graph)
    assert all(r.graph_break is None for r in compiled.records)
    assert reconstructs[0] < 20_000, reconstructs[0]


@pytest.mark.parametrize("fn", [_fib_returned, _fib_at_a_break], ids=["returned", "at_a_break"])
def test_reconstruct_work_grows_linearly_with_the_recurrence(reconstructs, fn):
    # (fib(n)-sized before: ~85,000 calls at 20 steps, ~10**8 at 40)
    counts = []
    for n in (10, 20, 30):
        reconstructs[0] = 0
        compiled = kiln.compile(fn, backend="eager")
        assert_same(compiled(np.array([0, 1], np.int32), n), fn(np.array([0, 1], np.int32), n))
        counts.append(reconstructs[0])
    # ~170, 370, 560 with the fix: ~19 per step (a sum is written out inline while its
    # code is short, output.MAX_INLINE_CODE, then named once)
    assert counts[2] - counts[1] <= 1.5 * (counts[1] - counts[0]), counts
    assert counts[2] < 40 * 30, counts


def _tuple_doubling(x, n, brk):
    t = (x.sum(),)
    for _ in range(n):
        t = (t, t)                      # both items of the next tuple: 2**n leaves
    if brk:
        print("", end="")
    return t, x * 2


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("brk", [False, True], ids=["returned", "at_a_break"])
def test_tuples_of_one_tuple_twice_compile(reconstructs, backend, brk):
    x = np.arange(5.0)
    compiled = kiln.compile(_tuple_doubling, backend=backend)
    for _ in range(2):
        (t, doubled), (want, want_doubled) = compiled(x, 30, brk), _tuple_doubling(x, 30, brk)
        assert_same(doubled, want_doubled)
        depth = 0
        while isinstance(t, tuple):     # (not assert_same: it would walk 2**30 leaves)
            assert len(t) == 2 and isinstance(t[1], tuple) == isinstance(t[0], tuple) \
                or len(t) == 1, t
            t, want, depth = t[0], want[0], depth + 1
        assert depth == 31 and type(t) is type(want) and t == want, (depth, t, want)
    assert reconstructs[0] < 20_000, reconstructs[0]
