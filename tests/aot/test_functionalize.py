"""Mutation probes: graphs that write (x += 1, out=, index and slice assignment, writes
through views and views of views, the same array passed twice, overlapping inputs) run
through aot_eager and compared with running the same op calls on NumPy arrays directly:
outputs, the final state of every argument, and which outputs alias which arguments and
each other.
"""
from __future__ import annotations

import numpy as np
import pytest

import kiln
from kiln.aot import aot_eager, functionalize, functionalize_with_plan, has_mutation
from kiln.ir import lint, trace
from kiln.ops import F, TensorMeta


def _meta(v):
    return TensorMeta(v.shape, v.dtype) if isinstance(v, np.ndarray) else None


def check(fn, make):
    """fn written with ops; make() returns fresh arguments (with their aliasing)."""
    want_args = make()
    want = fn(*want_args)
    got_args = make()
    graph = trace(fn, [_meta(a) for a in got_args])
    compiled = aot_eager(graph, make())
    want = want if isinstance(want, tuple) else (want,)
    _compare(compiled(*got_args), want, got_args, want_args)
    # The second call takes the plain-array short path (outputs that are views rebuilt
    # by precompiled view paths): the same values, states and aliasing.
    got_args = make()
    _compare(compiled(*got_args), want, got_args, want_args)
    return graph, compiled


def _compare(got, want, got_args, want_args):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, w, err_msg=f"output {k}")
        assert np.asarray(g).dtype == np.asarray(w).dtype
    for j, (g, w) in enumerate(zip(got_args, want_args)):
        np.testing.assert_array_equal(g, w, err_msg=f"final state of argument {j}")
    for k, (g, w) in enumerate(zip(got, want)):
        for j, (ga, wa) in enumerate(zip(got_args, want_args)):
            assert (g is ga) == (w is wa), f"output {k} is argument {j}: {w is wa} in NumPy"
            if isinstance(w, np.ndarray) and isinstance(wa, np.ndarray):
                assert np.shares_memory(g, ga) == np.shares_memory(w, wa), \
                    f"output {k} aliases argument {j}: {np.shares_memory(w, wa)} in NumPy"
        for m in range(k):
            if isinstance(w, np.ndarray) and isinstance(want[m], np.ndarray):
                assert np.shares_memory(g, got[m]) == np.shares_memory(w, want[m]), \
                    f"outputs {m} and {k} alias: {np.shares_memory(w, want[m])} in NumPy"
            if isinstance(w, np.ndarray):
                assert (g is got[m]) == (w is want[m]), f"outputs {m} and {k} are one object"


def arange(*shape):
    return np.arange(float(np.prod(shape))).reshape(shape)


def iadd(x, v):
    F.copyto(x, F.add(x, v), True)


# -- the probes -------------------------------------------------------------------------------

def test_augmented_assignment_returns_the_argument():
    def fn(x):
        iadd(x, 1.0)
        return (x,)
    graph, _ = check(fn, lambda: (arange(3, 4),))
    assert has_mutation(graph)
    fg = functionalize(graph)
    assert not has_mutation(lint(fg))


def test_out_argument():
    def fn(a, b, c):
        F.copyto(c, F.multiply(a, b), True)
        return (c, F.sum(c))
    check(fn, lambda: (arange(3, 4), arange(4) + 1, np.zeros((3, 4))))


def test_out_argument_casts_like_numpy():
    def fn(a, c):
        F.copyto(c, F.multiply(a, 2.5), True)
        return (c,)
    check(fn, lambda: (arange(5), np.zeros(5, np.float32)))


def test_index_assignment_with_integer_array():
    def fn(x, v):
        F.setitem(x, (np.array([0, 2]),), v)
        return (F.sum(x, axis=0),)
    check(fn, lambda: (arange(3, 4), -arange(2, 4)))


def test_slice_assignment_reading_overlapping_slices():
    def fn(x):
        F.setitem(x, (slice(1, -1),), F.add(F.getitem(x, (slice(None, -2),)),
                                             F.getitem(x, (slice(2, None),))))
        return (F.multiply(x, 2.0),)
    check(fn, lambda: (arange(7),))


def _augmented_slice_add(x, idx):
    # Python's x[idx] += x[:-1]: an in-place add into the view, then x[idx] = that view
    v = F.getitem(x, idx)
    iadd(v, F.getitem(x, (slice(None, -1),)))
    F.setitem(x, idx, v)
    return (x,)


def test_the_store_that_ends_an_augmented_slice_assignment_is_dropped():
    # NumPy skips the copy of a view onto its own memory; kept, it made the write a copy
    # of the whole array plus one of the view (u[1:] += u[:-1] at 0.3x NumPy)
    graph, _ = check(lambda x: _augmented_slice_add(x, (slice(1, None),)), lambda: (arange(6),))
    fg = functionalize(graph)
    assert [n.target.name for n in fg.nodes if n.kind == "call"].count("index_put") == 1


def test_the_store_of_an_augmented_fancy_index_assignment_stays():
    # x[[1, 2]] is a copy: the store is the only write that reaches x
    idx = (np.array([1, 2]),)
    graph, _ = check(lambda x: _augmented_slice_add(x, idx), lambda: (arange(3),))
    fg = functionalize(graph)
    assert [n.target.name for n in fg.nodes if n.kind == "call"].count("index_put") == 1


@pytest.mark.parametrize("index", [(slice(1, -1), slice(1, -1)), (np.array([0, 2, 2]),), (Ellipsis,)])
def test_storing_an_updated_view_back_writes_nothing_more(index):
    # x[i] *= 2 is Python's t = x[i]; t *= 2; x[i] = t: the last store copies the view
    # onto itself; functionalized, it was a second index_put of the whole array (a copy of
    # x per call); now one index_put remains
    def fn(x):
        t = F.getitem(x, index)
        iadd(t, t)
        F.setitem(x, index, t)
        return (x,)
    graph, _ = check(fn, lambda: (arange(4, 5),))
    ops = [n.op.name for n in functionalize(graph).nodes if n.kind == "call"]
    assert ops.count("index_put") == 1, ops


def test_write_through_a_view_then_read_base_and_view():
    def fn(x):
        v = F.getitem(x, (slice(1, None),))
        iadd(v, 10.0)
        return (F.sum(x), v, F.exp(v))
    check(fn, lambda: (arange(4, 3),))


def test_write_through_view_of_view():
    def fn(x):
        t = F.transpose(x, axes=(1, 0))
        v = F.getitem(t, (slice(1, None),))
        w = F.getitem(v, (slice(None), 0))
        F.setitem(w, (Ellipsis,), 100.0)
        return (x, t, F.add(v, 0.0))
    check(fn, lambda: (arange(3, 4),))


def test_view_taken_before_a_write_sees_it():
    def fn(x):
        row = F.getitem(x, (0,))
        F.setitem(x, (slice(None), 1), -1.0)   # writes x[0, 1] too
        return (F.multiply(row, 1.0), row)
    check(fn, lambda: (arange(3, 4),))


def test_reshape_view_of_contiguous_input_aliases():
    def fn(x):
        r = F.reshape(x, shape=(12,))
        F.setitem(r, (slice(0, 3),), 7.0)
        return (x, r)
    check(fn, lambda: (arange(3, 4),))


def test_reshape_of_noncontiguous_input_is_a_copy():
    def fn(x):
        r = F.reshape(x, shape=(12,))
        F.setitem(r, (0,), 7.0)
        return (r, F.sum(x))
    check(fn, lambda: (arange(4, 3).T,))


def test_mutating_an_intermediate():
    def fn(x):
        t = F.exp(x)
        F.setitem(t, (0,), 0.0)
        iadd(F.getitem(t, (slice(1, None),)), 1.0)
        return (F.sum(t), t)
    check(fn, lambda: (arange(5) / 5,))


def test_add_at_and_fill():
    def fn(x, y):
        F.add_at(x, (np.array([0, 0, 2]),), 1.0)
        F.fill(y, 3.0)
        return (x, y)
    check(fn, lambda: (arange(4), arange(2, 2)))


def test_outputs_alias_inputs_and_each_other():
    def fn(x):
        t = F.add(x, 1.0)
        return (F.getitem(x, (slice(0, 2),)), x, t, F.getitem(t, (1,)), t, F.transpose(x, axes=None))
    check(fn, lambda: (arange(3, 4),))


def test_same_array_passed_twice():
    def fn(a, b):
        iadd(a, 1.0)
        return (F.multiply(b, 2.0), b)
    a = arange(3)
    graph, compiled = check(fn, lambda: (lambda arr: (arr, arr))(arange(3)))
    del a


def test_overlapping_views_as_inputs():
    def fn(a, b):
        F.setitem(a, (slice(None),), F.add(b, 1.0))
        return (F.sum(b), a)
    check(fn, lambda: (lambda arr: (arr[1:], arr[:-1]))(arange(6)))


def test_write_to_broadcast_view_raises_like_numpy():
    def fn(x):
        F.setitem(F.broadcast_to(x, shape=(3, 4)), (0,), 1.0)
        return (x,)
    with pytest.raises(ValueError, match="read-only"):
        fn(arange(4))
    graph = trace(fn, [TensorMeta((4,), np.float64)])
    with pytest.raises(ValueError, match="read-only"):
        aot_eager(graph, [arange(4)])(arange(4))


def test_noncontiguous_argument_written_in_place():
    def fn(x):
        iadd(x, 1.0)
        F.setitem(x, (0,), F.sum(x))
        return (x,)
    base = arange(4, 6)
    check(fn, lambda: (arange(4, 6)[::2, 1::2],))
    del base


def test_functional_graph_compiles_once_per_aliasing_pattern():
    def fn(a, b):
        iadd(a, b)
        return (a,)
    graph = trace(fn, [TensorMeta((3,), np.float64)] * 2)
    compiled = aot_eager(graph, [arange(3), arange(3)])
    compiled(arange(3), arange(3))
    x = arange(3)
    compiled(x, x)
    np.testing.assert_array_equal(x, [0.0, 2.0, 4.0])
    compiled(arange(3), arange(3))
    assert len(compiled.variants) == 2



def test_the_same_array_twice_takes_a_short_path_after_its_first_call(monkeypatch):
    # f(x, x) of a graph that writes ran the general path every call (the aliasing check,
    # grad mode, the variant's key, outputs rebuilt in Python): iadd(x, x) on 100 values
    # 8.2 us compiled against NumPy's 0.3; now the merged variant's plain run (3.1)
    def fn(a, b):
        iadd(a, b)
        return (a,)
    graph = trace(fn, [TensorMeta((3,), np.float64)] * 2)
    compiled = aot_eager(graph, [arange(3), arange(3)])
    x = arange(3)
    compiled(x, x)
    assert list(compiled._merged) == [(0, 0)]
    monkeypatch.setattr(compiled, "_general", lambda args: pytest.fail("the general path"))
    y = arange(3)
    (out,) = compiled(y, y)
    assert out is y
    np.testing.assert_array_equal(y, [0.0, 2.0, 4.0])

def test_a_variant_pinned_to_its_sizes_takes_a_short_path_for_them(monkeypatch):
    # x.ravel()[::2] = 0 of a graph over dynamic sizes is put back through a reshape to
    # x's shape as numbers: the variant is built (pinned) for the call's sizes. Every call
    # of those sizes took the general path (layout_dependent_views at 30x40: 20 us
    # against NumPy's 4.2); now the plain run, after checking the sizes.
    def fn(x):
        F.setitem(F.ravel(x), (slice(None, None, 2),), 0.0)
        return (F.sum(x),)
    graph = trace(fn, [TensorMeta((3, 4), np.float64)])
    graph.placeholders[0].meta["dynamic_dims"] = (0, 1)
    compiled = aot_eager(graph, [arange(12).reshape(3, 4)])
    compiled(arange(12).reshape(3, 4))
    assert compiled.pinned and compiled._plain is not None
    monkeypatch.setattr(compiled, "_general", lambda args: pytest.fail("the general path"))
    x = arange(12).reshape(3, 4)
    (total,) = compiled(x)
    assert total == 36.0
    np.testing.assert_array_equal(x.ravel()[::2], 0.0)
    y = arange(30).reshape(5, 6)   # other sizes: their own variant, NumPy's answer
    (total,) = compiled(y)
    assert len(compiled.variants) == 2 and total == sum(range(1, 30, 2))
    np.testing.assert_array_equal(y.ravel()[1::2], np.arange(1, 30, 2.0))


# -- mutations with Tensors ---------------------------------------------------------------------

def test_mutating_an_intermediate_under_autograd():
    def fn(w):
        h = F.multiply(w, 3.0)
        F.setitem(h, (slice(0, 2),), F.sin(F.getitem(w, (slice(0, 2),))))
        return (F.sum(F.square(h)),)
    w0 = np.linspace(0.1, 1.0, 5)
    graph = trace(fn, [_meta(w0)])
    w = kiln.tensor(w0, requires_grad=True)
    (loss,) = aot_eager(graph, [w0])(w)
    loss.backward()
    we = kiln.tensor(w0, requires_grad=True)
    h = we * 3.0
    h[0:2] = np.sin(we[0:2])
    (h ** 2).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), we.grad.numpy(), rtol=1e-13)


def test_mutated_nonleaf_tensor_argument_gets_the_compiled_history():
    def fn(y, w):
        iadd(y, F.multiply(w, w))
        return (F.sum(y),)
    w0 = np.array([1.0, 2.0, 3.0])
    graph = trace(fn, [_meta(w0), _meta(w0)])
    compiled = aot_eager(graph, [w0.copy(), w0])
    w = kiln.tensor(w0, requires_grad=True)
    y = w * 2.0
    (s,) = compiled(y, w)
    np.testing.assert_allclose(y.numpy(), 2 * w0 + w0 ** 2)
    assert "CompiledFunctionBackward" in repr(y.grad_fn)
    (y * 1.0).sum().backward()          # through the mutated argument's new history
    np.testing.assert_allclose(w.grad.numpy(), 2 + 2 * w0)


def test_mutating_a_leaf_that_requires_grad_raises_like_eager():
    def fn(x):
        iadd(x, 1.0)
        return (x,)
    graph = trace(fn, [TensorMeta((3,), np.float64)])
    x = kiln.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(kiln.KilnError, match="in place"):
        aot_eager(graph, [x.numpy()])(x)
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0, 3.0])
    with kiln.no_grad():
        aot_eager(graph, [x.numpy()])(x)
    np.testing.assert_array_equal(x.numpy(), [2.0, 3.0, 4.0])


def test_overlapping_tensor_inputs_run_op_by_op_on_the_tape():
    def fn(a, b):
        F.copyto(a, F.multiply(b, 2.0), True)
        return (F.sum(F.multiply(a, b)),)
    m = TensorMeta((3,), np.float64)
    graph = trace(fn, [m, m])
    compiled = aot_eager(graph, [np.zeros(3), np.zeros(3)])

    def run(call):
        base = kiln.tensor([1.0, 2.0, 3.0, 4.0])
        (s,) = call(base[1:], base[:-1])
        return s.numpy(), base.numpy()

    for g, w in zip(run(compiled), run(fn)):   # the same values as op-by-op eager
        np.testing.assert_allclose(g, w, rtol=1e-14)
    for call in (compiled, fn):   # writes through views of a recording Tensor, as eager does
        w = kiln.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        base = w * 1.0
        (s,) = call(base[1:], base[:-1])    # s = 2 w0^2 + 4 w0 w1 + 4 w1 w2
        s.backward()
        np.testing.assert_allclose(w.grad.numpy(), [12.0, 16.0, 8.0, 0.0], rtol=1e-14)


def test_same_tensor_passed_twice_under_autograd():
    def fn(a, b):
        return (F.sum(F.multiply(F.sin(a), b)),)
    m = TensorMeta((3,), np.float64)
    compiled = aot_eager(trace(fn, [m, m]), [np.zeros(3), np.zeros(3)])
    w = kiln.tensor([0.1, 0.2, 0.3], requires_grad=True)
    (s,) = compiled(w, w)
    s.backward()
    w0 = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(w.grad.numpy(), np.cos(w0) * w0 + np.sin(w0), rtol=1e-14)


def test_write_into_a_constant_is_refused():
    const = np.zeros(3)

    def fn(x):
        F.setitem(const, (0,), F.sum(x))
        return (x,)
    graph = trace(lambda x: fn(x), [TensorMeta((3,), np.float64)])
    with pytest.raises(kiln.KilnError, match="constant"):
        aot_eager(graph, [np.ones(3)])(np.ones(3))


GOLDEN_FUNCTIONAL = '''\
def forward(x, y):
    add = ops.add(x, 1.0)  # float64[4]
    copy_into = ops.copy_into(x, add, True, casting='same_kind')  # float64[4]
    add = None
    getitem = ops.getitem(copy_into, (slice(1, None, None),))  # float64[3]
    multiply = ops.multiply(y, 2.0)  # float64[]
    index_put = ops.index_put(getitem, (0,), multiply)  # float64[3]
    getitem = multiply = None
    index_put_1 = ops.index_put(copy_into, (slice(1, None, None),), index_put)  # float64[4]
    copy_into = index_put = None
    sum = ops.sum(index_put_1, axis=None, keepdims=False, dtype=None)  # float64[]
    return (sum, index_put_1)
'''


def test_functional_graph_text():
    """What the aot log shows for x += 1; x[1:][0] = 2 * y; return x, x[1:], x.sum()."""
    def fn(x, y):
        iadd(x, 1.0)
        v = F.getitem(x, (slice(1, None),))
        F.setitem(v, (0,), F.multiply(y, 2.0))
        return x, v, F.sum(x)
    g = trace(fn, [TensorMeta((4,), np.float64), TensorMeta((), np.float64)], ["x", "y"])
    fg, plan = functionalize_with_plan(g)
    assert fg.python_code() == GOLDEN_FUNCTIONAL
    assert [o.kind for o in plan.outputs] == ["input", "input_view", "fresh"]
    assert plan.mutated == [(0, 1)]


@pytest.mark.parametrize("backend", ["aot_eager", "cpp"])
def test_an_error_after_a_write_to_an_array_passed_twice(backend):
    # the graph takes the array once (inputs merged); the replay that gives NumPy's error
    # and NumPy's writes takes both arguments
    def f(a, b):
        a += 1.0
        return np.linalg.inv(b)
    x, y = np.zeros((2, 2)), np.zeros((2, 2))
    with pytest.raises(np.linalg.LinAlgError) as eager:
        f(y, y)
    with pytest.raises(np.linalg.LinAlgError) as compiled:
        kiln.compile(f, backend=backend)(x, x)
    assert str(compiled.value) == str(eager.value)
    np.testing.assert_array_equal(x, y)


def test_a_graph_that_fails_to_build_runs_op_by_op_and_says_so(monkeypatch):
    # A kiln bug while functionalizing (a malformed graph raised KeyError there on every
    # call) made every call rerun the whole function as Python, silently. Now the variant
    # runs op by op with NumPy, built once, with a warning.
    import warnings
    import kiln
    import kiln.aot.variant as variant

    tries = []

    def broken(graph, arrays):
        tries.append(graph)
        raise KeyError("subtract_2")
    monkeypatch.setattr(variant, "functionalize_with_plan", broken)

    def f(x, i):
        x[i] = 7.0
        return (x * 2).sum()
    compiled = kiln.compile(f, backend="cpp")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(3):
            want_x, got_x = np.arange(6.0), np.arange(6.0)
            assert compiled(got_x, np.array([1, 3])) == f(want_x, np.array([1, 3]))
            np.testing.assert_array_equal(got_x, want_x)
    assert len(tries) == 1
    assert sum("could not be compiled" in str(w.message) for w in seen) == 1
