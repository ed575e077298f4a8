"""What differs between CPython 3.11, 3.12 and 3.13 and must not show: inlined
comprehensions (PEP 709) and generator expressions capture whole (their synthetic
exception-table ranges are not try blocks), superinstructions, the NULL's side of a
call, keyword calls, f-strings, closures made in the frame, slices, and 3.13's TO_BOOL
before a data-dependent jump. Every function here compiles with ``fullgraph=True`` (no
break) on every version, and gives NumPy's results."""
import math

import numpy as np
import pytest

import kiln
from kiln.capture import bytecode_facts as bf

from tests.test_programs_loop_nests import while_in_for

from .conftest import CountingBackend, assert_same
from .test_partial import Recorder

X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)


def comprehensions(x):
    rows = [r * 2 for r in x]                        # list comprehension
    table = {i: x[i] + i for i in range(2)}          # dict comprehension
    total = sum(np.tanh(r) for r in rows)            # generator expression
    nested = [[v + w for v in (1.0, 2.0)] for w in (3.0, 4.0)]
    return rows[0] + table[1] + total + nested[1][0]


def shadowing(x):
    i = x * 3                       # the comprehension's i shadows it, then it is restored
    parts = [x[i] for i in range(2)]
    return i + parts[1]


def unbound_after(x):
    ys = [x + k for k in range(3)]
    return ys[2], len(ys)


def calls_and_slices(x, w):
    a = np.sum(x, axis=1, keepdims=True)             # keywords: KW_NAMES / CALL_KW
    b = x.reshape(3, 2)[1:3]                         # method call, BINARY_SLICE
    c = np.maximum(*(x, w))                          # CALL_FUNCTION_EX
    label = f"{x.shape[0]!r:>3}-{x.ndim}"            # FORMAT_VALUE / CONVERT_VALUE ...
    return a, b, c, label


def closures(x, s):
    def scaled(v, k=2.0):                            # defaults and a closure cell
        return v * k * s
    m = lambda v: scaled(v) + s                      # noqa: E731
    return m(x)


def swap_and_unpack(x, w):
    a, b = x, w
    a, b = b, a                                      # STORE_FAST_STORE_FAST on 3.13
    (c, d), e = (a, b), a + b
    return c - d + e


def unary_plus(x):
    # 3.12+: CALL_INTRINSIC_1 INTRINSIC_UNARY_POSITIVE (3.11: UNARY_POSITIVE); (*l,) is
    # INTRINSIC_LIST_TO_TUPLE.
    parts = (*[+x, x],)
    return +parts[0] - parts[1]


def comprehension_shadows_a_cell(x, s):
    # 3.12+ (langfuzz): the comprehension's v is a plain local in the slot of the cell the
    # lambda reads (LOAD_FAST_AND_CLEAR takes the cell out, STORE_FAST puts it back); its
    # loads were taken for the cell's (a graph break, then the last row for v after it)
    v = s
    f = lambda: v                                    # noqa: E731
    rows = [v * 2 for v in x]
    table = {i: v.sum() for i, v in enumerate(x)}
    return f(), v, rows[1], table[0]


def comprehension_closure_over_its_variable(x, s):
    # 3.12+: a closure in the comprehension captures its r, so the comprehension makes a
    # cell of its own (MAKE_CELL after LOAD_FAST_AND_CLEAR) and puts the outer cell back
    # after its loop; the outer r was read from the comprehension's cell (x[1], not s)
    r = s
    rows = [(lambda: r * 2.0)() for r in x]
    return rows[1] + r, r


CASES = [(comprehensions, (X,)), (shadowing, (X,)), (unbound_after, (X,)),
         (calls_and_slices, (X, X * 0.5)), (closures, (X, 3.0)), (swap_and_unpack, (X, X + 1)),
         (unary_plus, (X,)), (comprehension_shadows_a_cell, (X, 0.5)),
         (comprehension_closure_over_its_variable, (X, 0.5))]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", None))
def test_captures_whole_on_every_version(fn, args):
    backend = CountingBackend()
    compiled = kiln.compile(fn, backend=backend, fullgraph=True)
    assert_same(compiled(*args), fn(*args))
    assert len(backend.graphs) == 1


def test_comprehension_variable_is_unbound_after_like_python():
    def f(x):
        ys = [x * k for k in range(2)]
        return k  # noqa: F821  (NameError in both: the comprehension's k is its own)
    with pytest.raises(NameError):
        f(X)
    with pytest.raises(NameError):
        kiln.compile(f, backend="eager")(X)


def test_a_break_inside_a_comprehension_that_shadows_a_cell_runs_as_python():
    # (3.12+, langfuzz) the frame is not rebuilt there: the function runs as Python
    def f(x, s):
        v = s
        g = lambda: v                                # noqa: E731
        rows = [(kiln.graph_break(), v * 2)[1] for v in x]
        return g(), v, rows
    assert_same(kiln.compile(f, backend="eager")(X, 0.5), f(X, 0.5))


def test_data_dependent_branch_takes_numpy_truth():
    # 3.13: POP_JUMP_IF_* needs an exact bool (TO_BOOL made it); a resumed jump re-emits it.
    def f(x):
        y = x * 2
        if y.sum() > 0:
            return y + 1
        if not (y < 5).all():
            return y - 1
        return y
    compiled = kiln.compile(f, backend="eager")
    for x in (X, -X - 1, X * 10):
        assert_same(compiled(x), f(x))


def test_a_loop_that_breaks_resumes_after_it():
    # FOR_ITER's exhausted jump skips END_FOR (3.12) and POP_TOP (3.13): a segment that
    # retargets it lands on a pad of those.
    def f(x, n):
        total = x * 0
        for i in range(n):
            print(i)
            total = total + x
        return total * 2
    compiled = kiln.compile(f, backend="eager")
    for n in (0, 1, 3):
        assert_same(compiled(X, n), f(X, n))


def test_unknown_versions_are_refused_at_import():
    assert bf.check_version((3, 12)) == (3, 12)
    for version in ((3, 10), (3, 14), (4, 0)):
        with pytest.raises(ImportError, match=r"CPython 3\.11, 3\.12, 3\.13"):
            bf.check_version(version)


# -- the same graphs on every version ----------------------------------------------------
# Where the bytecode of 3.12/3.13 differs in shape from 3.11's, capture must still make
# 3.11's graphs: the counts below are 3.11's (benchmarks/versions.py diffs the program
# corpus across versions).

def many_locals_with_breaks_in_a_with(x, log):
    # 3.13 fuses pairs of loads (LOAD_FAST_LOAD_FAST: two 4-bit indices); the resume
    # function after the first break has its ___stack and live locals first, so indices
    # pass 15 and it splits them: a break in it must still plan from the original code
    # (the with statement is already open there), not run the rest of the body as Python.
    y = x + 1
    a0 = x + y; a1 = a0 * y; a2 = a1 - a0; a3 = a2 + a0; a4 = a3 * a1      # noqa: E702
    a5 = a4 + a1; a6 = a5 * a2; a7 = a6 - a3; a8 = a7 + a0; a9 = a8 * a1   # noqa: E702
    b0 = a9 + a1; b1 = b0 * a2; b2 = b1 - a3; b3 = b2 + a0; b4 = b3 * a1  # noqa: E702
    with Recorder(log):
        b5 = b4 + a9
        kiln.graph_break()
        b6 = b5 * a8
        kiln.graph_break()
        c = b6 + b5
    return c + a0 + b0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + b1 + b2 + b3


def vectorized_while_in_for(x):
    # 3.12+: the while's first test jumps straight back to the for loop's head when false
    # (a continue that still holds t before the while: an int here); 3.11 leaves the while
    # first. t is dead there, so the paths need not agree on its type.
    return np.vectorize(while_in_for)(x)


def test_a_while_loop_ending_a_for_body_is_one_node_from_its_first_test():
    # 3.12+: the while's first test jumps into its body when it holds and falls through to
    # the for loop's jump back; 3.11 jumps to the while's exit. Both are a while node
    # entered at that test: the body (t - 1.0) is in the graph once, not peeled once more.
    backend = CountingBackend()
    x = np.arange(-6, 6)
    assert_same(kiln.compile(vectorized_while_in_for, backend=backend)(x), vectorized_while_in_for(x))
    (graph,) = backend.graphs
    assert str(graph).count("fn='sub'") == 1, str(graph)


def _root_or_negated(v):
    # 3.12+ copy the return into both sides of the conditional expression (two returns in
    # branches of an inlined call); 3.11's sides meet at one return.
    return math.sqrt(v) * 2.0 if v > 0 else -v


def test_a_ternary_return_in_a_loop_body_stores_unpredicated():
    # Every path through the helper comes out of it, so the store after it is as
    # unconditional as on 3.11: a plain store_elem, no store_elem_if and its select.
    def f(x):
        return np.vectorize(_root_or_negated)(x)
    x = np.linspace(-2.0, 2.0, 7)
    backend = CountingBackend()
    assert_same(kiln.compile(f, backend=backend)(x), f(x))
    (graph,) = backend.graphs
    text = str(graph)
    assert "ops.store_elem(" in text and "store_elem_if" not in text, text


def test_many_locals_break_twice_in_a_with_body_as_on_3_11():
    backend = CountingBackend()
    compiled = kiln.compile(many_locals_with_breaks_in_a_with, backend=backend)
    got_log, want_log = [], []
    assert_same(compiled(X, got_log), many_locals_with_breaks_in_a_with(X, want_log))
    assert got_log == want_log
    assert len(backend.graphs) == 4       # before the with, its body's three pieces
    # Recorder(log) and the two graph_break()s
    assert kiln.explain(many_locals_with_breaks_in_a_with)(X, []).graph_break_count == 3


def test_a_while_whose_first_test_continues_an_outer_loop_captures_as_on_3_11():
    backend = CountingBackend()
    x = np.arange(-6, 6)
    assert_same(kiln.compile(vectorized_while_in_for, backend=backend)(x), vectorized_while_in_for(x))
    assert len(backend.graphs) == 1
    assert kiln.explain(vectorized_while_in_for)(x).graph_break_count == 0


def filtered_rows(x):
    # 3.13 leaves the filter's jump (after TO_BOOL: it cannot raise) out of the inlined
    # comprehension's exception-table ranges: a break there is still in the comprehension.
    y = np.tanh(x) * 2
    rows = [r for r in y if r.sum() > 0]
    return len(rows), y + 1


def test_a_break_in_a_comprehension_filter_runs_the_statement_as_on_3_11():
    backend = CountingBackend()
    x = np.array([[1.0, -2.0], [3.0, 1.0], [-4.0, 0.5]])
    assert_same(kiln.compile(filtered_rows, backend=backend)(x), filtered_rows(x))
    assert len(backend.graphs) == 2       # before and after the comprehension
    out = kiln.explain(filtered_rows)(x)
    assert (out.graph_count, out.graph_break_count) == (2, 1), str(out)


def shadowed_after_a_loop(x):
    # The comprehension's i shadows the loop's (3.12+: LOAD_FAST_AND_CLEAR saves the
    # outer i and stores it back): the outer i is dead after the loop, as on 3.11 where
    # the comprehension's i is its own, so the continue path need not assign it.
    out = np.zeros(x.shape[0])
    for r in range(x.shape[0]):
        if x[r, 0] > 0.5:
            continue
        i = r * 2
        out[r] = x[r, 1] * i
    return out + sum([x[i, 2] for i in range(2)])


def test_a_local_a_comprehension_shadows_is_dead_before_it_as_on_3_11():
    x = np.linspace(0.0, 1.0, 12).reshape(4, 3)
    out = kiln.explain(shadowed_after_a_loop)(x)
    assert any("loop node" in note and "for r in" in note for note in out.loops), out.loops
    assert_same(kiln.compile(shadowed_after_a_loop, backend="eager")(x), shadowed_after_a_loop(x))


def slices_after_a_with(e):
    # 3.12's with handler, placed at the end, jumps back (JUMP_BACKWARD) to the code after
    # the statement; that is no ``while True:`` loop, whose one-node attempt would pin
    # ``e``'s size (a loop node's result sizes are static) where 3.11 leaves it dynamic.
    with np.errstate(divide="warn"):   # (entered as Python: "ignore" is captured)
        g = np.log(e)
    return 0.5 * (e[1:] + e[:-1]), g


def test_the_code_after_a_with_is_no_loop_and_sizes_stay_dynamic():
    backend = CountingBackend()
    compiled = kiln.compile(slices_after_a_with, backend=backend)
    for n in (9, 5, 4):
        e = np.arange(1.0, n + 1)
        assert_same(compiled(e), slices_after_a_with(e))
    # with's body and the code after it, once for n=9 and once with dynamic sizes
    assert len(backend.graphs) == 4, [str(g) for g in backend.graphs]


def shrink_while_large_or_few(x):
    # 3.12+: the bottom test's ``a`` jumps to ``b`` when it fails and falls through to the
    # jump back (3.11: POP_JUMP_BACKWARD_IF_TRUE to the head, falling through to ``b``).
    y = x.copy()
    k = 0
    while y.sum() > 100.0 or k < 3:
        y = y * 0.9
        k += 1
    return y, k


def test_a_while_or_test_is_one_graph_while_node_as_on_3_11():
    backend = CountingBackend()
    compiled = kiln.compile(shrink_while_large_or_few, backend=backend)
    for x in (X + 2.0, X * 100.0):
        assert_same(compiled(x), shrink_while_large_or_few(x))
    out = kiln.explain(shrink_while_large_or_few)(X + 2.0)
    assert (out.graph_count, out.graph_break_count) == (1, 0), str(out)
    assert any("graph_while" in note for note in out.loops), out.loops


def merge_sorted(a, b):
    # ``while a or b:`` with a data-dependent body: the bottom test's ``a`` jumps back to
    # the body when it holds (3.11), or (3.12+) jumps on to ``b`` when it fails and falls
    # through to the jump back; either way that side goes on to the next iteration.
    n, m = a.shape[0], b.shape[0]
    out = np.empty(n + m)
    i = j = 0
    while i < n or j < m:
        if j >= m or (i < n and a[i] <= b[j]):
            out[i + j] = a[i]
            i += 1
        else:
            out[i + j] = b[j]
            j += 1
    return out, i + j


def test_a_while_or_loop_with_a_data_dependent_body_is_one_loop_node():
    rng = np.random.default_rng(3)
    backend = CountingBackend()
    compiled = kiln.compile(merge_sorted, backend=backend)
    for n, m in ((5, 4), (2, 7)):
        a, b = np.sort(rng.random(n)), np.sort(rng.random(m))
        assert_same(compiled(a, b), merge_sorted(a, b))
    out = kiln.explain(merge_sorted)(a, b)
    assert (out.graph_count, out.graph_break_count) == (1, 0), str(out)
    assert any("loop node" in note for note in out.loops), out.loops


def best_key_per_row(x, vocab):
    # (tfidf_from_token_lists) a break inside a comprehension whose variable a closure
    # captures: 3.12+ save the outer cell and make the comprehension's before its
    # protected range starts; the statement runs as Python from the save, as 3.11 runs
    # the comprehension's call (it ran the whole function as Python: 0 graphs)
    y = x * 2
    top = [max(vocab, key=lambda w: y[r, vocab[w]]) for r in range(2)]
    return y + 1, top


def test_a_break_in_a_comprehension_over_a_cell_runs_the_statement_as_on_3_11():
    backend = CountingBackend()
    vocab = {"a": 0, "b": 2}
    assert_same(kiln.compile(best_key_per_row, backend=backend)(X, vocab), best_key_per_row(X, vocab))
    assert len(backend.graphs) == 2       # before and after the comprehension
    out = kiln.explain(best_key_per_row)(X, vocab)
    assert out.graph_break_count == 1 and "not a Python constant" in out.break_reasons[0].reason, str(out)


def try_else_breaks(x):
    # 3.12+ put the handler after the code, which it rejoins past the else clause: the
    # try statement's region is the try body and, as on 3.11, the else clause (which
    # compiled and broke again: one more graph; asarray_copy_false_in_numpy_two broke at
    # its else clause's ``A is X``)
    y = x * 2
    try:
        kiln.graph_break()
        z = y + 1
    except ValueError:
        z = y
    else:
        w = z * 3
        kiln.graph_break()
        z = w + 1
    out = np.abs(z - 1)                  # long enough not to be copied into the handler
    return out * 2 + np.sqrt(out)


def try_as_else_breaks(x):
    # ``except ... as e`` deletes e before it jumps back past the else clause
    y = x * 2
    try:
        kiln.graph_break()
        z = y + 1
    except ValueError as e:
        z = y + len(str(e))
    else:
        w = z * 3
        kiln.graph_break()
        z = w + 1
    out = np.abs(z - 1)
    return out * 2 + np.sqrt(out)


def try_in_loop_breaks_out(x):
    # the handler's ``break`` jumps past the rest of the loop body, as an else clause's
    # rejoin would: 3.11's region runs that rest as Python too (2 graphs; 3 on 3.12+ before)
    acc = x * 0
    for i in range(5):
        try:
            kiln.graph_break()
            v = x[i]
        except IndexError:
            break
        acc = acc + v * 2
        acc = np.sqrt(acc * acc + 1)
    out = acc - 1
    return np.abs(out) + out * 3


@pytest.mark.parametrize("fn", [try_else_breaks, try_as_else_breaks, try_in_loop_breaks_out],
                         ids=lambda f: f.__name__)
def test_a_break_in_a_try_body_runs_its_else_clause_as_on_3_11(fn):
    backend = CountingBackend()
    x = np.arange(3.0)
    assert_same(kiln.compile(fn, backend=backend)(x), fn(x))
    assert len(backend.graphs) == 2       # before and after the try statement
