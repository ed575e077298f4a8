"""The NULLs of a segment's exit stacks (kiln/capture/exit_stacks.py) and the end of a
break's statement for a region from a resume function's start (partial._statement_end),
from the running version's bytecode: a segment whose exit would store a NULL as a value
(3.12/3.13: passed on to a call, a segfault) or a value as NULL is never built."""
import numpy as np

from kiln.capture import bytecode_facts as bf
from kiln.capture import exit_stacks as E
from kiln.capture import partial as P
from kiln.capture import resume as R

CALL_NULL = 1 if bf.NULL_ABOVE_CALLABLE else 0


def _first(facts, name, after=0):
    return next(k for k in range(after, len(facts.names)) if facts.names[k] == name)


def _store_of(facts, name):
    return next(k for k, (n, a) in enumerate(zip(facts.names, facts.args))
                if ("def", name) in bf.local_accesses(n, a))


def two_calls(x):
    a = np.sqrt(x)
    b = np.abs(x)
    return a, b


def test_an_exit_holding_a_call_s_null_is_proven_only_as_null():
    facts = R.code_facts(two_calls.__code__)
    k = _first(facts, "LOAD_FAST")            # np.sqrt's argument: NULL and np.sqrt below
    assert facts.depth[k] == 2
    assert E.proven(facts, k, k, frozenset(), (CALL_NULL,), {k + 1: (3, (CALL_NULL,))})
    assert not E.proven(facts, k, k, frozenset(), (CALL_NULL,), {k + 1: (3, ())})
    assert not E.proven(facts, k, k, frozenset(), (), {k + 1: (3, (CALL_NULL,))})


def test_a_null_the_region_pushes_itself_is_known():
    facts = R.code_facts(two_calls.__code__)
    second = _first(facts, "STORE_FAST") + 1   # the second statement starts
    load = _first(facts, "LOAD_FAST", second)  # its np.abs and NULL pushed in the region
    kinds = E.exit_kinds(facts, second, load - 1, frozenset(), ())
    assert kinds == {load: tuple(bf.with_null(E.VALUE, E.NULL))}
    assert E.proven(facts, second, load - 1, frozenset(), (), {load: (2, (CALL_NULL,))})
    assert not E.proven(facts, second, load - 1, frozenset(), (), {load: (2, ())})


def method_call(box):
    return box.values(1)


def test_a_method_load_s_slot_is_never_proven():
    # NULL and the attribute, or the method and self: only run time knows
    facts = R.code_facts(method_call.__code__)
    load = next(k for k, n in enumerate(facts.names) if bf.pushes_null(n, facts.args[k]))
    after = load + 1
    for nulls in ((), (CALL_NULL,)):
        assert not E.proven(facts, load, load, frozenset(), (), {after: (2, nulls)})


def comprehension(xs):
    out = [v * 2 for v in xs]
    return np.array(out)


def test_an_inlined_comprehension_s_saved_local_may_be_null():
    facts = R.code_facts(comprehension.__code__)
    if "LOAD_FAST_AND_CLEAR" not in facts.names:
        assert bf.PY == (3, 11)      # a function of its own: nothing saved in this frame
        return
    save = _first(facts, "LOAD_FAST_AND_CLEAR")
    depth = facts.depth[save + 1]
    kinds = E.exit_kinds(facts, save, save, frozenset(), ())
    assert kinds[save + 1][-1] == E.MAYBE
    for nulls in ((), (depth - 1,)):
        assert not E.proven(facts, save, save, frozenset(), (), {save + 1: (depth, nulls)})


def lots(d):
    left = np.array([lot[0] for lot in d], dtype=np.int64)
    basis = np.array([lot[1] for lot in d])
    return left, basis


def test_a_statement_ends_past_its_comprehension_s_loop():
    # from a point inside the first statement (the stack above its lowest point) to a
    # break in the second's comprehension: the region ends where ``basis`` is stored,
    # not at the comprehension's back edge (3.12+: the END_FOR after it is unreachable)
    facts = R.code_facts(lots.__code__)
    store_left, store_basis = _store_of(facts, "left"), _store_of(facts, "basis")
    inside_first = store_left - 2       # the dtype's load: np.array's call still pending
    get_iter = _first(facts, "GET_ITER", store_left)
    assert facts.depth[inside_first] > facts.depth[store_left + 1]
    assert P._statement_end(facts, inside_first, get_iter) == store_basis
    assert P._statement_end(facts, store_left + 1, get_iter) == store_basis


def returns_a_call(d):
    x = np.array([v for v in d])
    return np.array([v * 2 for v in d]) + x


def test_a_statement_ends_at_a_return():
    facts = R.code_facts(returns_a_call.__code__)
    start = _store_of(facts, "x") + 1            # the return statement, its stack empty
    get_iter = [k for k, n in enumerate(facts.names) if n == "GET_ITER"][-1]
    assert facts.depth[start] == 0 and get_iter > start
    end = P._statement_end(facts, start, get_iter)
    assert facts.names[end] in bf.LEAVES_FRAME   # not on into the handlers after it
    assert P._statement_end(facts, get_iter, get_iter) == get_iter   # (its stack's floor)


def cell_comprehension(x, vocab):
    return [max(vocab, key=lambda w: x[r, vocab[w]]) for r in range(2)]


def test_a_saved_cell_is_a_value():
    # 3.12+: a comprehension variable a closure captures is a cell; the slot the
    # comprehension saves holds the frame's cell (made in the prologue), never NULL, so a
    # region from the save (capture.flow.region runs the statement from it) is built
    facts = R.code_facts(cell_comprehension.__code__)
    if "LOAD_FAST_AND_CLEAR" not in facts.names:
        assert bf.PY == (3, 11)
        return
    save = _first(facts, "LOAD_FAST_AND_CLEAR")
    assert bf.is_cell(facts.args[save], facts.code)
    assert E.exit_kinds(facts, save, save, frozenset(), ())[save + 1][-1] == E.VALUE
