"""Partial graphs and resume functions: every kind of graph break keeps what it can
compiled. Each case checks results (and arguments after the call) against the plain
function and the exact number of graphs compiled after the first and the second call."""
import copy
import sys

import numpy as np
import pytest

import kiln

from .conftest import CountingBackend, assert_same

X = np.arange(6.0).reshape(2, 3)


def run_counts(fn, *args, calls=2, **compile_kwargs):
    """Graphs compiled after each call; every call compared with the plain function."""
    backend = CountingBackend()
    compiled = kiln.compile(fn, backend=backend, **compile_kwargs)
    counts = []
    for _ in range(calls):
        eager_args, kiln_args = copy.deepcopy(args), copy.deepcopy(args)
        expected = fn(*eager_args)
        got = compiled(*kiln_args)
        if hasattr(expected, "__next__"):
            expected, got = list(expected), list(got)
        assert_same(got, expected)
        assert_same(list(kiln_args), list(eager_args), "arguments after the call")
        counts.append(len(backend.graphs))
    return counts, compiled, backend


def _helper_with_print(x):
    y = x * 3
    print("in helper")
    return y + 1


def _unflagged(x):
    return x + 1


# -- one case per break kind: (function, arguments, graphs after call 1 and call 2) ----------
def k_print(x):
    y = x * 2
    print("hello")
    return y + 1


def k_unknown_call(x):
    y = x + 1
    z = np.round(y / 3, 2)          # not in kiln's op inventory
    return z * 2


def k_if(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


def k_while(x):
    err = np.abs(x).sum()
    y = x
    while err > 1.0:
        y = y * 0.5
        err = np.abs(y).sum()
    return y + 1


def k_item(x):
    s = x.sum().item()
    if s > 3:
        return x * s
    return x


def k_float(x):
    s = float(x.max())
    return x * 2 + s


def k_generator(x):
    y = x * 2
    yield y
    yield y + 1


def k_try(x):
    y = x + 1
    try:
        z = y / 2
    except ZeroDivisionError:
        z = y
    return z * 3


def k_with(x):
    y = x + 1
    with np.errstate(all="raise"):
        z = y * 2
    return z - 1


def k_graph_break(x):
    y = x + 1
    kiln.graph_break()
    return y * 2


def k_helper(x):
    a = x + 1
    b = _helper_with_print(a)
    return b * 2


def k_loop(x, n):
    y = x * 2
    for i in range(n):
        y = y + i
        print(i)
    return y * 3


def k_two_breaks(x):
    y = x + 1
    print("a")
    z = y * 2
    print("b")
    return z - y


def k_list(x):
    out = []
    out.append(x + 1)
    print("mid")
    out.append(x * 2)
    return out[0] + out[1]


def k_closure(x):
    def g(v):
        print("in g")
        return v * 2
    y = x + 1
    z = g(y)
    return z - 1


CASES = [
    # print: x * 2 | print | y + 1
    (k_print, (X,), [2, 2]),
    # np.round has no kiln op: x + 1, y / 3 | round | z * 2
    (k_unknown_call, (X,), [2, 2]),
    # the condition in graph 0; the branch taken resumes compiled
    (k_if, (X,), [2, 2]),
    (k_if, (-X - 1,), [2, 2]),
    # err in graph 0; the loop runs as Python; y + 1 compiled after it
    (k_while, (X,), [2, 2]),
    (k_item, (X,), [2, 2]),
    (k_float, (X,), [2, 2]),
    # a generator function itself runs as Python
    (k_generator, (X,), [0, 0]),
    (k_try, (X,), [2, 2]),
    (k_with, (X,), [2, 2]),
    (k_graph_break, (X,), [2, 2]),
    # a + 1 | the helper compiled on its own: x * 3 | print | y + 1 | b * 2
    (k_helper, (X,), [4, 4]),
    # x * 2 | the loop as Python | y * 3
    (k_loop, (X, 3), [2, 2]),
    (k_two_breaks, (X,), [3, 3]),
    # the list [x + 1] is rebuilt for the resume function; its append breaks again
    (k_list, (X,), [3, 3]),
    # the inlined closure breaks at its call: y = x + 1 | g(y) as Python | z - 1
    (k_closure, (X,), [2, 2]),
]


@pytest.mark.parametrize("fn, args, counts", CASES, ids=lambda v: getattr(v, "__name__", None))
def test_break_kind_keeps_compiling(fn, args, counts, capsys):
    got, compiled, _ = run_counts(fn, *args)
    assert got == counts, [str(r.graph_break) for r in compiled.records if r.graph_break]
    out = capsys.readouterr().out
    assert out[:len(out) // 2] == out[len(out) // 2:]   # kiln printed exactly what eager did


def test_both_branches_compile_when_taken():
    counts, _, _ = run_counts(k_if, X)
    assert counts == [2, 2]
    compiled = kiln.compile(k_if, backend=(backend := CountingBackend()))
    compiled(X)
    compiled(-X - 1)
    compiled(X)
    compiled(-X - 1)
    assert len(backend.graphs) == 3   # the condition, then each side once


def test_break_in_a_loop_is_reported_prominently_and_code_around_it_compiles():
    out = kiln.explain(k_loop)(X, 2)
    assert out.graph_count == 2 and out.ops_per_graph == [["multiply"], ["multiply"]]
    (b,) = out.break_reasons
    assert "loop" in b.reason and "runs as Python" in b.reason


def test_side_effects_before_the_break_happen_in_program_order():
    log = []

    def f(x, items, obj):
        x[0, 0] = 100.0               # captured: a mutation op inside graph 0
        obj.w -= 1.0                  # captured too (in-place on an attribute's array)
        items.append(x.sum())         # breaks: runs as Python, after the graph
        log.append(len(items))
        x[1, 1] = -1.0                # after the break: in the resume function's graph
        return x * 2

    class Obj:
        pass

    def args():
        o = Obj()
        o.w = np.ones(3)
        return X.copy(), [1.0], o

    eager = args()
    expected = f(*eager)
    compiled = kiln.compile(f)
    got_args = args()
    got = compiled(*got_args)
    assert_same(got, expected)
    assert_same(got_args[0], eager[0])
    assert_same(got_args[1], eager[1])
    assert_same(got_args[2].w, eager[2].w)
    assert log == [2, 2]


def test_exception_in_the_eager_segment_surfaces_unchanged_with_user_line():
    def f(x, d):
        y = x * 2
        z = {"a": y}[d]               # KeyError when d != "a": dict lookups on arguments
        return z + 1

    def f_print(x):
        y = x + 1
        print("n", undefined_global)  # noqa: F821  NameError raised in the segment
        return y

    with pytest.raises(NameError) as eager:
        f_print(X)
    with pytest.raises(NameError) as info:
        kiln.compile(f_print)(X)
    assert str(info.value) == str(eager.value)
    lines = [tb.lineno + 1 for tb in info.traceback if tb.path == __file__ or str(tb.path) == __file__]
    assert f_print.__code__.co_firstlineno + 2 in lines


def test_exception_in_a_resume_graph_is_the_users():
    def f(x, y):
        a = x + 1
        print("before")
        return a + y                 # broadcasting error in the resume function
    with pytest.raises(ValueError) as eager:
        f(np.ones(3), np.ones(4))
    with pytest.raises(ValueError) as info:
        kiln.compile(f)(np.ones(3), np.ones(4))
    assert str(info.value) == str(eager.value)


def test_fullgraph_still_raises_at_the_first_break():
    def f(x):
        y = x + 1
        print("no")
        return y
    with pytest.raises(kiln.Unsupported, match="print"):
        kiln.compile(f, fullgraph=True)(X)


def test_resume_functions_are_cached_per_code_and_offset():
    compiled = kiln.compile(k_two_breaks, backend=CountingBackend())
    for _ in range(3):
        compiled(X)
    resumes = compiled._resumes
    assert len(resumes) == 2               # after "a" and after "b"; no variants
    for cf in resumes.values():
        assert len(cf.cache_entries) == 1  # compiled once, then cache hits


def test_resume_functions_have_their_own_guards_and_recompile():
    backend = CountingBackend()
    compiled = kiln.compile(k_print, backend=backend, dynamic=False)
    compiled(X)
    compiled(np.ones(4))                    # new shape: the function and its resume recompile
    assert len(backend.graphs) == 4
    (resume_fn,) = compiled._resumes.values()
    assert len(resume_fn.cache_entries) == 2
    assert any("___stack" in g or "y.shape" in g for g in resume_fn.cache_entries[0].guard_texts())


def test_explain_shows_graphs_on_each_side_of_every_break():
    out = kiln.explain(k_two_breaks)(X)
    assert out.graph_count == 3 and out.graph_break_count == 2
    assert out.ops_per_graph == [["add"], ["multiply"], ["subtract"]]
    assert [b.source for b in out.break_reasons] == ['print("a")', 'print("b")']
    text = str(out)
    assert "Graph 2" in text and "print(\"b\")" in text


def test_kiln_reset_drops_resume_functions():
    compiled = kiln.compile(k_print, backend=CountingBackend())
    compiled(X)
    assert compiled._resumes
    kiln.reset()
    assert not compiled._resumes and not compiled.records
    np.testing.assert_array_equal(compiled(X), k_print(X))


def test_threads_share_one_family_of_resume_functions():
    import threading
    compiled = kiln.compile(k_if, backend=CountingBackend())
    errors = []

    def work(sign):
        try:
            for _ in range(20):
                x = X * sign
                assert_same(compiled(x), k_if(x))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(s,)) for s in (1, -1, 1, -1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(compiled._resumes) == 2
