"""Resume functions and eager segments built from the running version's bytecode (no
capture involved): each generated code object runs with results equal to the original
function."""
import numpy as np
import pytest

from kiln.capture import bytecode_facts as bf
from kiln.capture import resume as R

# Stack slot of the NULL a plain call's callable has beside it: [NULL, f] or [f, NULL].
CALL_NULL = (1,) if bf.NULL_ABOVE_CALLABLE else (0,)


def _resume(fn, opname, occurrence, nstack, nulls, names):
    facts = R.code_facts(fn.__code__)
    return R.resume_function(fn, R.index_of(facts, opname, occurrence), nstack, nulls, names)


def test_resume_mid_expression_with_two_stack_values():
    def f(x):
        y = x + 1
        return y * 2
    r = _resume(f, "BINARY_OP", 1, 2, (), ())
    assert r(np.ones(2), 3).tolist() == [3.0, 3.0]


def test_resume_is_cached_per_code_and_offset():
    def f(x):
        return x + 1
    facts = R.code_facts(f.__code__)
    k = R.index_of(facts, "BINARY_OP")
    assert R.resume_code(f.__code__, k, 2, (), ()) is R.resume_code(f.__code__, k, 2, (), ())
    code, shift = R.original(R.resume_code(f.__code__, k, 2, (), ()))
    assert code is f.__code__ and shift >= 0


def test_resume_inside_try_region_splits_it():
    # Without the split, the first exception raised in the region segfaults the interpreter.
    def f(x, d):
        try:
            y = x / d
            z = y + 1
        except ZeroDivisionError:
            z = -1.0
        return z
    facts = R.code_facts(f.__code__)
    k = R.index_of(facts, "BINARY_OP", 0)   # x / d, inside the try body
    assert facts.handler_of[k] is not None
    r = R.resume_function(f, k, 2, (), ())
    assert r(1.0, 2.0) == 1.5
    assert r(1.0, 0) == -1.0                 # the handler still catches
    with pytest.raises(TypeError):
        r("a", 2.0)                          # unhandled errors propagate


def test_resume_with_null_below_a_callable_and_live_locals():
    def f(x, scale):
        y = x * scale
        out = abs(y - 10)
        return out + scale
    facts = R.code_facts(f.__code__)
    k = R.index_of(facts, "PRECALL" if bf.HAS_PRECALL else "CALL")
    # stack at the call: abs and its NULL, (y - 10); live locals: scale
    assert R.live_locals(facts, k) == ["scale"]
    r = R.resume_function(f, k, 3, CALL_NULL, ("scale",))
    assert r(abs, -4.0, 2.0) == 6.0


def test_resume_with_cell_variables():
    def f(x, k):
        def g(v):
            return v * k
        y = g(x)
        return y + k
    facts = R.code_facts(f.__code__)
    i = R.index_of(facts, "BINARY_OP", 0)       # y + k
    live = tuple(R.live_locals(facts, i))
    assert "k" in live                           # a cell: always passed
    r = R.resume_function(f, i, 2, (), live)
    args = {"k": 3, "y": 6}
    assert r(6, 3, *[args.get(n, None) for n in live]) == 9


def test_region_of_a_break_in_a_loop_is_the_instruction():
    def f(x, n):
        total = x * 0
        for i in range(n):
            total = total + x
            print(i)
        return total
    facts = R.code_facts(f.__code__)
    i = R.index_of(facts, "CALL", 1)           # print(i)
    a, b = R.region(facts, i)
    assert facts.names[a] == ("PRECALL" if bf.HAS_PRECALL else "CALL") and b == i   # each iteration resumes after it
    head = R.index_of(facts, "FOR_ITER")
    assert R.region(facts, head) == (head, head) and R.is_straight(facts, head, head)
    assert sorted(R.after_straight(facts, head, head, ())) == [head + 1, facts.targets[head]]


def test_region_of_a_loop_inside_a_try_is_the_try_statement():
    def f(x, n):
        try:
            for i in range(n):
                x = x + i
        except ValueError:
            pass
        return x
    facts = R.code_facts(f.__code__)
    a, b = R.region(facts, R.index_of(facts, "BINARY_OP"))
    # The loop and the handler are inside; every exit is ``return x`` (3.12+ copies that
    # short tail after the handler's POP_EXCEPT: its copy is an exit of its own).
    ts = R.exits(facts, a, b)
    assert len(ts) == (1 if bf.PY == (3, 11) else 2)
    assert all((facts.names[t], facts.args[t]) == ("LOAD_FAST", "x") for t in ts)
    assert R.index_of(facts, "FOR_ITER") in R.members(facts, a, b)


def test_region_of_try_and_with_cover_the_statement():
    def f(x):
        try:
            y = x + 1
        except ValueError:
            y = 0
        with open(__file__) as fh:
            fh.read(1)
        return y
    facts = R.code_facts(f.__code__)
    a, b = R.region(facts, R.index_of(facts, "BINARY_OP"))
    open_call = next(k for k, arg in enumerate(facts.args) if facts.names[k] == "LOAD_GLOBAL"
                     and arg[1] == "open")
    assert R.exits(facts, a, b) == [open_call]
    a2, b2 = R.region(facts, R.index_of(facts, "BEFORE_WITH"))
    assert facts.names[R.exits(facts, a2, b2)[0]] == "LOAD_FAST"         # return y


def _conditional_jump(f):
    """f's code facts and the index of its one conditional jump (a one-instruction region).
    (Each test has its own f: segments are assembled once per code object.)"""
    facts = R.code_facts(f.__code__)
    return facts, R.index_of(facts, "POP_JUMP_FORWARD_IF_FALSE" if bf.PY == (3, 11) else "POP_JUMP_IF_FALSE")


def test_single_instruction_segment_calls_resume_functions_for_both_branches():
    def f(c, x):
        if c:
            return x + 1
        return x - 1
    facts, i = _conditional_jump(f)
    assert R.region(facts, i) == (i, i) and R.is_straight(facts, i, i)
    seen = []
    specs = []
    for t, (depth, nulls) in R.after_straight(facts, i, i, ()).items():
        def resume(*args, _t=t):
            seen.append(_t)
            return R.resume_function(f, _t, depth, nulls, ("x",))(*args)
        specs.append(R.Exit(t, depth, nulls, resume, ("x",)))
    seg = R.segment_function(f, f.__code__, i, i, 1, (), ("x",), specs)
    assert seg(True, 1.0) == 2.0 and seg(False, 1.0) == 0.0
    assert seen == [i + 1, facts.targets[i]]


def test_a_segment_is_assembled_once_per_break_and_takes_each_captures_calls(monkeypatch):
    # Each capture of a break (a recompile, a loop's next trip) brings new exit calls; the
    # code around them was assembled anew every time (~5 ms a segment)
    def f(c, x):
        if c:
            return x + 1
        return x - 1
    facts, i = _conditional_jump(f)
    assembled = []
    finish = R._finish
    monkeypatch.setattr(R, "_finish", lambda *args: assembled.append(1) or finish(*args))

    def segment(tag):
        specs = [R.Exit(t, depth, nulls, lambda x, _t=t: (tag, _t, x), ("x",))
                 for t, (depth, nulls) in R.after_straight(facts, i, i, ()).items()]
        return R.segment_function(f, f.__code__, i, i, 1, (), ("x",), specs)
    first, second = segment("first"), segment("second")
    assert len(assembled) == 1
    assert first(True, 1.0) == ("first", i + 1, 1.0) and first(False, 2.0) == ("first", facts.targets[i], 2.0)
    assert second(True, 3.0) == ("second", i + 1, 3.0) and second(False, 4.0) == ("second", facts.targets[i], 4.0)


def test_loop_segment_exits_through_the_dynamic_resume_call():
    def f(x, n):
        total = x * 0
        for i in range(n):
            if i == 2:
                break
            total = total + x
        else:
            total = -total
        return total, i
    facts = R.code_facts(f.__code__)
    a = R.index_of(facts, "GET_ITER")           # the whole loop as one region
    b = max(j for h, j in facts.loops)
    calls = []

    def dispatch_for(t, depth):
        def dispatch(stack, frame_locals):
            names = tuple(n for n in R.live_locals(facts, t) if n in frame_locals)
            calls.append((t, names))
            r = R.resume_function(f, t, depth, (), names)
            return r(*stack, *[frame_locals[n] for n in names])
        return dispatch

    depths = R.exit_depths(facts, a, b)
    specs = [R.Exit(t, d, (), dispatch_for(t, d)) for t, d in depths.items()]
    assert R.live_locals(facts, a) == ["x", "total", "i"]   # i: live, but not bound yet
    seg = R.segment_function(f, f.__code__, a, b, 1, (), ("x", "total"), specs)
    for n in (0, 2, 5):
        try:
            expected = f(1.0, n)
        except UnboundLocalError:   # n == 0: ``i`` is never bound, in both
            with pytest.raises(UnboundLocalError):
                seg(range(n), 1.0, 0.0)
            continue
        assert seg(range(n), 1.0, 0.0) == expected
    # every exit resumes through its dispatcher: the else path and the break path (3.12+
    # copies the short ``return`` into the break path: that one returns inside the segment)
    assert {t for t, _ in calls} == set(depths) and len(depths) == (2 if bf.PY == (3, 11) else 1)


def test_segment_exception_inside_the_region_propagates_with_user_line():
    def f(x):
        y = x + 1
        z = undefined_name_here(y)  # noqa: F821
        return z
    facts = R.code_facts(f.__code__)
    i = R.index_of(facts, "CALL")
    spec = R.Exit(i + 1, 1, (), lambda *a: 0, ())
    seg = R.segment_function(f, f.__code__, i, i, 3, CALL_NULL, (), [spec])
    with pytest.raises(ZeroDivisionError) as info:
        seg(lambda v: 1 / 0, 2)
    lines = [tb.lineno + 1 for tb in info.traceback]   # pytest counts from 0
    assert f.__code__.co_firstlineno + 2 in lines


def test_resume_with_many_stack_values_before_a_fused_load():
    # 3.13 packs both locals of LOAD_FAST_LOAD_FAST into 4 bits each; in a resume function
    # the ___stack arguments come first, so x's index passes 15: generated code splits it.
    def f(x, y):
        return (x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x + y)
    facts = R.code_facts(f.__code__)
    k = R.index_of(facts, "BINARY_OP") - (1 if "LOAD_FAST_LOAD_FAST" in facts.names else 2)
    assert facts.depth[k] == 18
    r = R.resume_function(f, k, 18, (), ("x", "y"))
    assert r(*[1.0] * 18, 2.0, 3.0) == (1.0,) * 18 + (5.0,)
