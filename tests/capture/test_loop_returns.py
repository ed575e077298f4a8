"""``return`` inside a loop node's body (kiln/capture/loop_branches.py ``_return``,
kiln/capture/loop_returns.py ``_return_after``): the body ends the loop where it returns, the
graph ends after the loop, and the entry returns the loop's value there or goes on
compiled. Every form against plain Python: values, types, the final state of mutated
arguments, exceptions; on the reference backend and on C++."""
from __future__ import annotations

import numpy as np
import pytest

import kiln

from .test_loops import _copy, _same

BACKENDS = ["eager", "cpp"]


def first_above(a, t):                 # the search loop: an index, or -1 after the loop
    for i in range(a.shape[0]):
        if a[i] > t:
            return i
    return -1


def first_value_above(a, t):           # a NumPy scalar read in the body; None after it
    for i in range(a.shape[0]):
        if a[i] > t:
            return a[i]
    return None


def sign_of_first(a):                  # two constant returns: the value is carried
    for i in range(a.shape[0]):
        if a[i] > 0:
            return 1
        if a[i] < 0:
            return -1
    return 0


def found(a, t):                       # one constant for every return: only the flag
    for i in range(a.shape[0]):
        if a[i] == t:
            return True
    return False


def while_search(a, t):                # a while loop that returns
    i = 0
    while i < a.shape[0]:
        if a[i] > t:
            return a[i] * 2.0
        i += 1
    return -1.0


def write_then_return(a, t):           # writes before the return stay; the argument is mutated
    for i in range(a.shape[0]):
        if a[i] > t:
            a[i] = t
            return i
        a[i] += 1.0
    return -1


def break_or_return(a, lo, hi):        # a break and a return in one body
    k = -1
    for i in range(a.shape[0]):
        if a[i] < lo:
            k = i
            break
        if a[i] > hi:
            return -i
    return k


def return_then_array_work(a, t):      # no return: the function goes on compiled after the loop
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
        if s > t:
            return s
    return np.sqrt(a * a).sum() + s


def raises_in_loop(a, d):              # a Python error inside the loop before any return
    q = 0
    for i in range(a.shape[0]):
        q += 100 // int(d[i])
        if a[i] > 0.5:
            return q
    return -q


def accumulate_until(a, t):            # a carried value and a return of it
    s = np.float64(0)
    for i in range(a.shape[0]):
        s += a[i]
        if s > t:
            return s
    return s - 1.0


RNG = np.random.default_rng(7)


def _arrays(n):
    return RNG.random(n)


CASES = {
    "first_above": (first_above, [(_arrays(200), 0.99), (_arrays(200), 2.0), (_arrays(0), 0.5),
                                  (_arrays(50), 0.1)]),
    "first_value_above": (first_value_above, [(_arrays(200), 0.95), (_arrays(100), 1.5)]),
    "sign_of_first": (sign_of_first, [(np.array([0.0, 0.0, -2.0, 1.0]),), (np.zeros(6),),
                                      (np.array([0.0, 3.0, -1.0, 0.0]),)]),
    "found": (found, [(np.arange(10.0), 4.0), (np.arange(10.0), 40.0)]),
    "while_search": (while_search, [(_arrays(100), 0.9), (_arrays(100), 3.0)]),
    "write_then_return": (write_then_return, [(_arrays(50) * 3, 2.5), (_arrays(50), 5.0)]),
    "break_or_return": (break_or_return, [(np.linspace(0.3, 0.9, 40), 0.2, 0.8),
                                          (np.linspace(0.3, 0.9, 40)[::-1].copy(), 0.4, 0.95),
                                          (np.linspace(0.3, 0.9, 40), 0.0, 2.0)]),
    "return_then_array_work": (return_then_array_work, [(_arrays(100), 10.0), (_arrays(100), 1e9)]),
    "raises_in_loop": (raises_in_loop, [(np.array([0.1, 0.2, 0.9, 0.3]), np.array([1, 2, 3, 4])),
                                        (np.array([0.1, 0.2, 0.3, 0.9]), np.array([1, 2, 0, 4])),
                                        (np.array([0.1, 0.2, 0.3, 0.4]), np.array([5, 2, 1, 4]))]),
    "accumulate_until": (accumulate_until, [(_arrays(100), 10.0), (_arrays(100), 1e9)]),
}


def _outcome(fn, args):
    try:
        return "value", fn(*args)
    except Exception as e:   # noqa: BLE001 - compared as Python raised it
        return "raised", (type(e), str(e))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_loop_returns_match_python(case, backend):
    fn, calls = CASES[case]
    compiled = kiln.compile(fn, backend=backend)
    for args in calls:
        for _ in range(2):   # the first call compiles, the second hits the cache
            mine, theirs = _copy(args), _copy(args)
            got, want = _outcome(compiled, mine), _outcome(fn, theirs)
            assert got[0] == want[0], (got, want)
            if got[0] == "raised":
                assert got[1] == want[1]
            else:
                _same(got[1], want[1])
            for m, t in zip(mine, theirs):
                if isinstance(t, np.ndarray):
                    np.testing.assert_array_equal(m, t)


def test_the_loop_is_one_node_and_the_graph_ends_after_it():
    a = np.linspace(0.0, 1.0, 1000)
    out = kiln.explain(first_above)(a, 0.75)
    assert out.graph_count == 1 and out.graph_break_count == 1, str(out)
    text = str(out)
    assert "loop node" in text and "it breaks or returns" in text, text
    assert "the loop returns from inside its body" in text, text
    compiled = kiln.compile(first_above)
    assert compiled(a, 0.75) == first_above(a, 0.75) == 750
    assert compiled(a, 2.0) == -1
    # the graph with the loop, and (3.11: ``LOAD_CONST; RETURN_VALUE``) the code after it
    assert len(compiled.records) <= 2


def test_a_return_in_a_nested_loop_still_runs_as_python():
    def pair_above(A, t):
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                if A[i, j] > t:
                    return i, j
        return None

    A = np.arange(20.0).reshape(4, 5)
    compiled = kiln.compile(pair_above)
    assert compiled(A, 12.5) == pair_above(A, 12.5) == (2, 3)
    assert compiled(A, 99.0) is None
    text = str(kiln.explain(pair_above)(A, 12.5))
    assert "loop unrolled: a return inside the body of a nested loop" in text, text


def test_a_return_of_an_array_is_not_a_loop_node():
    def prefix_above(a, t):
        for i in range(a.shape[0]):
            if a[i] > t:
                return a[:i]
        return a

    a = np.linspace(0.0, 1.0, 50)
    compiled = kiln.compile(prefix_above)
    np.testing.assert_array_equal(compiled(a, 0.5), prefix_above(a, 0.5))
    np.testing.assert_array_equal(compiled(a, 5.0), a)


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_form_is_one_loop_node(case):
    fn, calls = CASES[case]
    text = str(kiln.explain(fn)(*_copy(calls[0])))
    assert "it breaks or returns" in text, text


def _print_then_search(a, t, sink):
    print(a.shape, file=sink)         # a break before the loop: the loop is in a resume function
    for i in range(a.shape[0]):
        if a[i] > t:
            return i
    return -1


def _search(a, t):
    for i in range(a.shape[0]):
        if a[i] > t:
            return i
    return -1


def _calls_search(a, t):              # the loop in an inlined call: runs as before
    return _search(a, t) + 1


def _endless(a, t):                   # while True with a break, code after the loop
    i = 0
    while True:
        if a[i] > t:
            break
        i += 1
    return i * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_returns_in_resume_functions_inlined_calls_and_endless_loops(backend):
    import io
    a = np.linspace(0.0, 1.0, 64)
    sink_mine, sink_theirs = io.StringIO(), io.StringIO()
    compiled = kiln.compile(_print_then_search, backend=backend)
    for t in (0.5, 0.9, 3.0):
        assert compiled(a, t, sink_mine) == _print_then_search(a, t, sink_theirs)
    assert sink_mine.getvalue() == sink_theirs.getvalue()
    for fn in (_calls_search, _endless):
        compiled = kiln.compile(fn, backend=backend)
        for t in (0.5, 0.9):
            got, want = compiled(a, t), fn(a, t)
            assert got == want and type(got) is type(want)


def _search_forever(a, t):            # a while True loop that only a return ends
    i = 0
    while True:
        if a[i] > t:
            return a[i] + i
        i += 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_that_ends_only_by_returning_is_the_whole_function(backend):
    """No test after the loop: the function returns the node's value, one graph, no
    break; running off the array's end raises Python's IndexError."""
    a = np.linspace(0.0, 1.0, 30)
    compiled = kiln.compile(_search_forever, backend=backend)
    for t in (-1.0, 0.5, 0.99):
        got, want = compiled(a, t), _search_forever(a, t)
        assert got == want and type(got) is type(want)
    with pytest.raises(IndexError) as want:
        _search_forever(a, 2.0)
    with pytest.raises(IndexError) as got:
        compiled(a, 2.0)
    assert str(got.value) == str(want.value)
    out = kiln.explain(_search_forever)(a, 0.5)
    assert out.graph_count == 1 and out.graph_break_count == 0, str(out)


def sum_and_count_until(a, t):         # ``return s, i``: each item carried
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
        if s > t:
            return s, i
    return s, -1


def _endless_pair(a, t):               # 3.12+: the code after the loop, copied into the break
    s, i = 0.0, 0
    while True:
        s += a[i]
        i += 1
        if s > t:
            break
    return s, i


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_return_of_a_tuple_of_numbers(backend):
    a = np.linspace(0.0, 1.0, 40)
    for fn in (sum_and_count_until, _endless_pair):
        compiled = kiln.compile(fn, backend=backend)
        for t in (3.0, 10.0):
            got, want = compiled(a, t), fn(a, t)
            assert got == want and [type(v) for v in got] == [type(v) for v in want]
    text = str(kiln.explain(sum_and_count_until)(a, 3.0))
    assert "it breaks or returns" in text, text
