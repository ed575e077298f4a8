"""with and try statements in a compiled function. A try statement, or a with statement
whose context manager is not plain Python, runs whole as Python; the code before and after
it is compiled (the resume function starts right after the statement's exception-handling
code). A user context manager (``__enter__``/``__exit__`` Python functions) and
``np.errstate``: only entering it runs as Python; its body resumes compiled with the
bound ``__exit__`` on the stack and the with's handler in the resume function's exception
table (a compiled call reads NumPy's error mode as it starts: a mode that raises runs the
graph with NumPy). Each case checks results and arguments against the plain function and the exact
number of graphs after the first and the second call; exceptions are checked on the
Python path and on the graph path."""
import copy
import traceback

import numpy as np
import pytest

import kiln
from kiln.capture import resume as R

from .conftest import CountingBackend, assert_same
from .test_partial import Recorder

X = np.arange(6.0).reshape(2, 3)


CM = Recorder   # a user context manager that logs what happens to it


class Suppress:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return True


def errstate_ignore(x):
    y = np.sin(x) * 2
    with np.errstate(divide="ignore"):
        z = np.log(y)          # captured: one graph (tests/capture/test_errstate_blocks.py)
    return z + 1


def errstate_warn(x):
    y = np.sin(x) * 2
    with np.errstate(divide="warn"):
        z = np.log(y)          # entering runs as Python, the body compiles
    return z + 1               # compiled again


def nested(x, log):
    y = x + 1
    with CM(log):
        with np.errstate(all="ignore"):
            z = y / 0
        w = z * 0
    return w + y


def in_a_loop(x, log, n):
    y = x * 2
    for i in range(n):
        with CM(log):
            y = y + i
        y = y * 1.5
    return y - 1


def break_continue_in_body(x, log, n):
    y = x * 2
    for i in range(n):
        with CM(log):
            if i == 2:
                break
            if i == 0:
                continue
            y = y + i
        y = y * 1.5
    return y - 1


def last_statement(x, log):
    y = x * 2
    with CM(log):
        log.append(float(y.sum()))


def return_inside(x, log):
    y = x * 2
    with CM(log):
        return y + 1


def return_on_one_side(x, log):
    y = x * 2
    with CM(log):
        if y.sum() > 100:
            return y + 1
        z = y - 1
    return z * 3


def suppressed_raise(x):
    y = x * 2
    with Suppress():           # __exit__ swallows the KeyError: control goes on after it
        y = y + 1
        raise KeyError("x")
    return y * 3


def two_items(x, log):
    y = x * 2
    with CM(log) as a, CM(log) as b:
        z = y + (b is not a)
    return z * 2


def two_statements(x, log):
    y = x + 1
    with CM(log):
        a = y * 2
    b = a + y                  # its own graph between the two statements
    with CM(log):
        c = b * 2
    return c + a


def try_finally(x, log):
    y = x + 1
    try:
        z = y * 2
    finally:
        log.append("finally")
    return z - 1


def try_except_else_finally(x, d):
    y = x + 1
    try:
        z = y / d
    except ZeroDivisionError:
        z = y
    else:
        z = z + 100
    finally:
        y = y * 2
    return z + y


def with_inside_try(x, log):
    y = x + 1
    try:
        with CM(log):
            z = y * 3
    except KeyError:
        z = y
    return z + 1


def only_exit_through_the_handler(x):
    y = x + 1
    try:
        raise KeyError("k")
    except KeyError as e:
        z = y + len(str(e))
    return z * 2


def try_in_a_loop(x, ds):
    y = x + 1
    for d in ds:
        try:
            y = y / d
        except ZeroDivisionError:
            continue
        y = y + 1
    return y * 2


CASES = [
    # sin, multiply | the errstate statement as Python | add
    (errstate_ignore, (np.arange(4.0),), [1, 1]),
    (errstate_warn, (np.arange(1.0, 5.0),), [3, 3]),
    # y + 1 | entering CM | entering errstate | y / 0 | z * 0, w + y
    (nested, (X, []), [2, 2]),     # (the errstate inside is captured)
    # x * 2 | per iteration: entering CM, then y + i and y * 1.5 compiled | y - 1
    (in_a_loop, (X, [], 3), [4, 4]),   # (the resume function takes the range loop over)
    (break_continue_in_body, (X, [], 4), [3, 3]),
    # x * 2 | entering | y.sum() then float() as Python | the rest (no ops)
    (last_statement, (X, []), [2, 2]),
    (return_inside, (X, []), [2, 2]),
    # x * 2 | entering | the condition | the side taken (z * 3 after the with included)
    (return_on_one_side, (X, []), [3, 3]),
    (return_on_one_side, (X * 100, []), [3, 3]),
    (suppressed_raise, (X,), [2, 2]),
    (two_items, (X, []), [2, 2]),
    (two_statements, (X, []), [3, 3]),
    # a try statement's normal path compiles with the code around it (a graph raising
    # reruns as Python); one with a with statement inside runs whole as Python
    (try_finally, (X, []), [1, 1]),
    (try_except_else_finally, (X, 2.0), [1, 1]),
    (try_except_else_finally, (X, 0.0), [1, 1]),
    (with_inside_try, (X, []), [2, 2]),
    (try_in_a_loop, (X, [2.0, 0, 4.0]), [1, 1]),
    (only_exit_through_the_handler, (X,), [2, 2]),
]


@pytest.mark.parametrize("fn, args, counts", CASES, ids=lambda v: getattr(v, "__name__", None))
def test_code_after_the_statement_is_compiled(fn, args, counts):
    backend = CountingBackend()
    compiled = kiln.compile(fn, backend=backend)
    got_counts = []
    with np.errstate(all="ignore"):
        for _ in range(2):
            eager_args, kiln_args = copy.deepcopy(args), copy.deepcopy(args)
            expected = fn(*eager_args)
            assert_same(compiled(*kiln_args), expected)
            assert_same(list(kiln_args), list(eager_args), "arguments after the call")
            got_counts.append(len(backend.graphs))
    assert got_counts == counts, [str(r.graph_break) for r in compiled.records if r.graph_break]


def test_errstate_example_compiles_on_both_sides_and_in_its_body():
    compiled = kiln.compile(errstate_ignore, backend=CountingBackend())
    compiled(np.arange(4.0))
    assert [r.ops for r in compiled.records] == [["sin", "multiply", "log", "add"]]
    compiled = kiln.compile(errstate_warn, backend=CountingBackend())
    with np.errstate(all="ignore"):
        compiled(np.arange(4.0))
    assert [r.ops for r in compiled.records] == [["sin", "multiply"], ["log"], ["add"]]
    breaks = {str(r.graph_break.reason) for r in compiled.records if r.graph_break}
    assert "making and entering np.errstate runs as Python; the with statement's " \
        "body is compiled" in breaks


def test_values_assigned_in_the_body_are_live_locals_of_the_resume_function():
    compiled = kiln.compile(errstate_warn, backend=CountingBackend())
    compiled(np.arange(1.0, 3.0))
    assert any("z" in g for resume in compiled._resumes.values()
               for g in resume.cache_entries[0].guard_texts())


def _user_frames(exc):
    return [(t.name, t.line) for t in traceback.extract_tb(exc.__traceback__) if t.filename == __file__]


def errstate_raise(x):
    y = x - 1
    with np.errstate(divide="raise"):
        z = 1.0 / y
    return z + 1


def test_errstate_raise_mode_still_raises_like_numpy():
    compiled = kiln.compile(errstate_raise, backend=(backend := CountingBackend()))
    assert_same(compiled(X + 2), errstate_raise(X + 2))
    with pytest.raises(FloatingPointError) as eager:
        errstate_raise(X)
    with pytest.raises(FloatingPointError) as got:
        compiled(X)
    assert str(got.value) == str(eager.value)
    assert _user_frames(got.value)[-1] == ("errstate_raise", "z = 1.0 / y")
    assert len(backend.graphs) == 3   # x - 1 | 1.0 / y (run by NumPy in raise mode) | z + 1


def test_exception_in_a_user_with_body_reaches_exit_and_keeps_the_users_line():
    def f(x, log, d):
        y = x * 2
        with CM(log):
            z = y + d["missing"]
        return z

    eager_log, kiln_log = [], []
    with pytest.raises(KeyError) as eager:
        f(X, eager_log, {})
    with pytest.raises(KeyError) as got:
        kiln.compile(f)(X, kiln_log, {})
    assert str(got.value) == str(eager.value)
    assert kiln_log == eager_log == ["enter", ("exit", "KeyError")]
    assert _user_frames(got.value)[-1] == ("f", 'z = y + d["missing"]')


def test_exception_raised_in_a_with_inside_a_loop():
    def f(x, log, n):
        y = x
        for i in range(n):
            with CM(log):
                y = y + 1
                if i == 1:
                    raise ValueError("boom")
        return y

    eager_log, kiln_log = [], []
    with pytest.raises(ValueError, match="boom"):
        f(X, eager_log, 3)
    with pytest.raises(ValueError, match="boom"):
        kiln.compile(f)(X, kiln_log, 3)
    assert kiln_log == eager_log


def test_region_of_a_suppressing_with_ends_after_its_exception_state():
    # The only exit of this with is the suppressed-exception path: the region must run it
    # through POP_EXCEPT (resuming with the exception state on the stack crashed CPython).
    facts = R.code_facts(suppressed_raise.__code__)
    w = R.index_of(facts, "BEFORE_WITH")
    a, b = R.region(facts, w)
    (exit_,) = R.exits(facts, a, b)
    assert "POP_EXCEPT" in facts.names[a:b + 1]
    assert facts.depth[exit_] == 0


# -- a user context manager's body compiles ---------------------------------------------------
class Tagged:
    """Logs enter/exit with a tag and the exception type; suppresses when asked."""

    def __init__(self, log, tag="a", suppress=False):
        self.log, self.tag, self.suppress = log, tag, suppress

    def __enter__(self):
        self.log.append(("enter", self.tag))
        return self

    def __exit__(self, *exc):
        self.log.append(("exit", self.tag, exc[0].__name__ if exc[0] else None))
        return self.suppress


@kiln.disable
def _check(v, flag):
    if flag:
        raise RuntimeError("flagged")
    return v


def _run_both(fn, *args, backend=None, compiled=None):
    """(eager outcome, kiln outcome): the result or (exception type, message, last user
    line), and the arguments after the call."""
    def outcome(f, a):
        try:
            return f(*a), a
        except Exception as e:
            return (type(e), str(e), _user_frames(e)[-1]), a
    compiled = compiled or kiln.compile(fn, backend=backend or CountingBackend())
    return outcome(fn, copy.deepcopy(args)), outcome(compiled, copy.deepcopy(args)), compiled


def test_body_of_a_user_context_manager_is_compiled():
    def f(x, log):
        y = x * 2
        with Tagged(log):
            z = y + 1
            print("mid")
            w = z * 3
        return w - y

    backend = CountingBackend()
    compiled = kiln.compile(f, backend=backend)
    for _ in range(2):
        eager_log, kiln_log = [], []
        assert_same(compiled(X, kiln_log), f(X, eager_log))
        assert kiln_log == eager_log == [("enter", "a"), ("exit", "a", None)]
    # x * 2 | entering | z = y + 1 | print | w = z * 3 and w - y (__exit__ inlined)
    assert [r.ops for r in compiled.records] == [["multiply"], ["add"], ["multiply", "subtract"]]
    assert len(backend.graphs) == 3


def test_context_manager_passed_in():
    def f(x, cm):
        y = x * 2
        with cm as c:
            z = y + c.scale
        return z - 1

    class Scaled(Tagged):
        scale = 3.0

    compiled = kiln.compile(f, backend=(backend := CountingBackend()))
    for _ in range(2):
        a, b = Scaled([]), Scaled([])
        assert_same(compiled(X, b), f(X, a))
        assert b.log == a.log
    assert [r.ops for r in compiled.records] == [["multiply"], ["add", "subtract"]]
    assert len(backend.graphs) == 2


def nested_user(x, log, flag):
    y = x + 1
    with Tagged(log, "a"):
        z = y * 2
        with Tagged(log, "b") as b:
            w = _check(z, flag) + 1        # runs as Python inside both withs
            print("in", b.tag)
        v = w * 3
    return v + z


@pytest.mark.parametrize("flag", [False, True])
def test_nested_user_withs_exit_in_order_on_both_paths(flag, capsys):
    eager, got, compiled = _run_both(nested_user, X, [], flag)
    assert_same(got[1], eager[1])                      # the logs: enter a, b; exit b, a
    if flag:
        assert got[0] == eager[0] == (RuntimeError, "flagged", ("_check", 'raise RuntimeError("flagged")'))
        assert eager[1][1][-2:] == [("exit", "b", "RuntimeError"), ("exit", "a", "RuntimeError")]
    else:
        assert_same(got[0], eager[0])
        assert [r.ops for r in compiled.records] == [["add"], ["multiply"], [], ["add"], ["multiply", "add"]]


def in_graph_error(x, idx, log, suppress):
    y = x * 2
    z = y
    with Tagged(log, "g", suppress):
        # compiled: an index out of bounds raises inside the graph
        z = y[idx] + 1
    return z - 1


@pytest.mark.parametrize("backend", ["eager", "cpp", "counting"])
@pytest.mark.parametrize("suppress", [False, True])
def test_exception_raised_by_a_compiled_body_reaches_exit(backend, suppress):
    backend = CountingBackend() if backend == "counting" else backend
    compiled = kiln.compile(in_graph_error, backend=backend)
    for idx in (np.array([0, 1]), np.array([0, 7]), np.array([0, 1]), np.array([0, 7])):
        eager, got, _ = _run_both(in_graph_error, np.arange(3.0), idx, [], suppress,
                                  compiled=compiled)
        if isinstance(eager[0], tuple):
            assert got[0] == eager[0]
            assert eager[0][2] == ("in_graph_error", "z = y[idx] + 1")   # the user's line
        else:
            assert_same(got[0], eager[0])
        assert got[1][2] == eager[1][2]            # __exit__ saw the same exception
    assert ["index", "add", "subtract"] in [r.ops for r in compiled.records]


def test_array_write_in_a_body_that_raises_happens_once():
    def f(x, idx, log):
        with Tagged(log, "w", True):
            x += 1
            z = x[idx]
        return x * 2 + z

    for backend in ("eager", "cpp", "aot_eager"):
        for idx in (np.array([0]), np.array([9])):
            eager, got, _ = _run_both(f, np.arange(3.0), idx, [], backend=backend)
            assert_same(got[1][0], eager[1][0])    # x incremented exactly once
            assert got[1][2] == eager[1][2]
            if isinstance(eager[0], tuple):
                assert got[0] == eager[0]
            else:
                assert_same(got[0], eager[0])


def test_user_with_in_a_loop_with_a_break_in_its_body():
    def f(x, log, n):
        y = x
        for i in range(n):
            with Tagged(log, i):
                y = y * 2
                kiln.graph_break()
                y = y + i
        return y

    eager, got, compiled = _run_both(f, X, [], 3)
    assert_same(got[0], eager[0])
    assert got[1][1] == eager[1][1]
    assert sum(1 for r in compiled.records if r.ops == ["multiply"]) >= 1


def test_contextlib_managers_work_too():
    import contextlib

    @contextlib.contextmanager
    def tagged(log):
        log.append("in")
        try:
            yield
        finally:
            log.append("out")

    def f(x, log):
        y = x + 1
        with tagged(log), contextlib.suppress(KeyError):
            y = y * 2
            {}["k"]
        return y

    eager, got, _ = _run_both(f, X, [])
    assert_same(got[0], eager[0])
    assert got[1][1] == eager[1][1] == ["in", "out"]


def test_errstate_made_per_call_compiles_once():
    """Each call makes a new errstate; its bound ``__exit__`` on the resume function's stack
    is guarded by method and type, not identity (it recompiled every call)."""
    compiled = kiln.compile(errstate_raise, backend=(backend := CountingBackend()))
    for i in range(12):
        assert_same(compiled(X + 2 + i), errstate_raise(X + 2 + i))
    assert len(backend.graphs) == 3


def test_exception_table_depths_of_a_resume_point_in_a_nested_with():
    # The package recomputes a handler's depth from the try ranges it can reach; with the
    # outer with's first range jumped over it came out one too deep (inner __exit__ twice).
    code = nested_user.__code__
    facts = R.code_facts(code)
    k = R.index_of(facts, "BEFORE_WITH", 1) + 1          # the inner with's body
    new = R.resume_code(code, k, 3, (), ("flag", "z"))
    import dis
    depths = {e.depth for e in dis._parse_exception_table(new)}
    assert depths == {e.depth for e in dis._parse_exception_table(code)}   # no 32768, none off by one
    log = []
    with pytest.raises(RuntimeError):
        types_fn = type(nested_user)
        types_fn(new, nested_user.__globals__)(*_exits_of(log), True, X)
    assert log == [("enter", "a"), ("enter", "b"), ("exit", "b", "RuntimeError"),
                   ("exit", "a", "RuntimeError")]


def _exits_of(log):
    a, b = Tagged(log, "a"), Tagged(log, "b")
    a.__enter__(), b.__enter__()
    return a.__exit__, b.__exit__, b
