"""Autograd semantics: accumulation, no_grad, detach, shared subexpressions, version
counters, backward twice, non-scalar backward, deep chains, hooks, grad/value_and_grad."""
import re

import numpy as np
import pytest

import kiln
from kiln.autograd import numerical_grad


def leaf(values, dtype=np.float64):
    return kiln.tensor(np.asarray(values, dtype=dtype), requires_grad=True)


def test_gradient_accumulates_across_backward_calls():
    x = leaf([1.0, 2.0])
    (x * 3.0).backward(np.ones(2))
    (x * 3.0).backward(np.ones(2))
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])
    x.grad = None
    (x * x).backward(np.ones(2))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


def test_grad_keeps_leaf_dtype_and_shape_under_broadcasting():
    w = leaf(np.ones(3), np.float32)
    x = np.arange(6.0).reshape(2, 3)        # float64 data promotes the product
    out = x * w
    assert out.dtype == np.float64
    out.backward(np.ones((2, 3)))
    assert w.grad.dtype == np.float32 and w.grad.shape == (3,)
    np.testing.assert_allclose(w.grad.numpy(), x.sum(axis=0))


def test_non_leaf_grad_stays_none_and_is_leaf_flags():
    x = leaf([1.0])
    y = x * 2.0
    (y * 1.0).backward(np.ones(1))
    assert x.is_leaf and not y.is_leaf
    assert y.grad is None and x.grad is not None
    assert y.grad_fn is not None and "MultiplyBackward" in repr(y.grad_fn)


def test_no_grad_context_and_decorator():
    x = leaf([1.0, 2.0])
    with kiln.no_grad():
        y = x * 2.0
    assert not y.requires_grad and y.grad_fn is None

    @kiln.no_grad()
    def f(t):
        return t + 1.0

    assert not f(x).requires_grad
    assert kiln.is_grad_enabled()
    assert (x + 1.0).requires_grad


def test_detach_shares_data_and_stops_gradient():
    x = leaf([1.0, 2.0])
    d = x.detach()
    assert not d.requires_grad and np.shares_memory(d.numpy(), x.numpy())
    (x * d).backward(np.ones(2))
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 2.0])   # d is a constant


def test_shared_subexpression_sums_both_paths():
    x = leaf([0.3, -0.7])
    s = np.sin(x)
    out = s * s + s
    out.backward(np.ones(2))
    xv = np.array([0.3, -0.7])
    np.testing.assert_allclose(x.grad.numpy(), (2 * np.sin(xv) + 1) * np.cos(xv), rtol=1e-12)


def test_modifying_a_saved_value_differentiates_the_value_it_had():
    # Copy on write: exp's rule reads its output; `h += 1` writes it after exp saved it.
    x = leaf([1.0, 2.0])
    h = np.exp(x)
    exp_node = h.grad_fn
    h += 1.0
    assert exp_node.out is not h._data            # exp kept the old value for itself
    h.backward(np.ones(2))
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]), rtol=1e-12)


def test_a_write_through_a_view_copies_the_saved_base():
    x = leaf([0.5, 1.0, 1.5])
    h = np.exp(x)
    v = h[1:]
    with kiln.no_grad():
        v *= 2.0                                  # writes h's data through a view, unrecorded
    (h * h).sum().backward()
    ex = np.exp([0.5, 1.0, 1.5])
    # d(h.h)/dh at h's new values, times exp's derivative at x: exp(x), as it was saved
    np.testing.assert_allclose(x.grad.numpy(), 2 * (ex * [1, 2, 2]) * ex, rtol=1e-12)


def test_numpy_style_in_place_normalisation_under_eager_grad():
    def nll(s, y):
        a = np.exp(s - s.max())
        a /= a.sum()                              # exp's output, divided in place
        return -np.log(a[y])

    def rk(y0, k):
        y = y0.copy()
        for _ in range(3):
            y += 0.1 * (np.sin(y) * k)            # sin's input, written each step
        return (y ** 2).sum()

    s = np.array([0.1, 0.5, -0.3])
    k = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(kiln.grad(nll)(s, 1), numerical_grad(nll, (s, 1), 0, np.float64(1.0)),
                               rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(kiln.grad(rk)(s, k), numerical_grad(rk, (s, k), 0, np.float64(1.0)),
                               rtol=1e-7, atol=1e-9)
    # the same through a compiled function that breaks between the op and the write
    def nll_with_break(s, y):
        a = np.exp(s - s.max())
        kiln.graph_break()
        a /= a.sum()
        return -np.log(a[y])
    np.testing.assert_allclose(kiln.grad(kiln.compile(nll_with_break))(s, 1),
                               kiln.grad(nll)(s, 1), rtol=1e-12)


def test_saved_values_the_rule_does_not_read_are_not_copied():
    x = leaf([1.0, 2.0])
    h = x * 3.0
    mul_node = h.grad_fn
    h += 1.0          # multiply's rule reads x and 3.0, not its output: nothing to keep
    assert mul_node.out is h._data
    assert h._version.savers is None or not any(r() is mul_node for r in h._version.savers)


def test_a_parameter_read_by_many_graphs_does_not_collect_dead_watchers():
    w = leaf([0.5, -0.5])
    for _ in range(300):
        loss = (np.tanh(w * 2.0) * w).sum()       # multiply saves w, graph dropped each step
        loss.backward()
        with kiln.no_grad():
            w -= 0.01 * w.grad
        w.grad = None
    assert len(w._version.savers or []) < 40


def test_in_place_update_of_a_value_nobody_saved_is_fine():
    x = leaf([1.0, 2.0])
    h = x * 3.0
    h += 1.0          # multiply's rule reads x (untouched) and 3.0, not its output
    h.backward(np.ones(2))
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_in_place_on_leaf_requiring_grad_raises_outside_no_grad():
    w = leaf([1.0, 2.0])
    with pytest.raises(kiln.KilnError, match="no_grad"):
        w += 1.0
    with kiln.no_grad():
        before = w
        w -= 0.5
    assert w is before
    np.testing.assert_array_equal(w.numpy(), [0.5, 1.5])


def test_backward_twice_raises_unless_retained():
    x = leaf([1.0, 2.0])
    y = np.sin(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos([1.0, 2.0]))
    with pytest.raises(kiln.AutogradError, match="second time"):
        y.backward()


def test_non_scalar_backward_needs_gradient():
    x = leaf([1.0, 2.0])
    with pytest.raises(kiln.AutogradError, match="gradient"):
        (x * 2.0).backward()
    with pytest.raises(kiln.AutogradError, match="shape"):
        (x * 2.0).backward(np.ones(3))


def test_ten_thousand_op_chain_does_not_recurse():
    x = leaf(1.0)
    t = x
    for _ in range(10_000):
        t = t * 1.0001
    t.backward()
    assert x.grad.item() == pytest.approx(1.0001 ** 10_000, rel=1e-9)
    del t   # freeing the chain must not blow the stack either


def test_hooks_see_and_replace_gradients():
    x = leaf([1.0, 2.0])
    seen = []
    y = x * 2.0
    y.register_hook(lambda g: seen.append(g.numpy().copy()))
    handle = x.register_hook(lambda g: g * 10.0)
    (y * 3.0).backward(np.ones(2))
    np.testing.assert_array_equal(seen[0], [3.0, 3.0])
    np.testing.assert_array_equal(x.grad.numpy(), [60.0, 60.0])
    handle.remove()
    x.grad = None
    (x * 1.0).backward(np.ones(2))       # the removed hook no longer scales the gradient
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(kiln.KilnError, match="floating-point"):
        kiln.tensor([1, 2], requires_grad=True)
    t = kiln.tensor([True, False])
    with pytest.raises(kiln.KilnError):
        t.requires_grad = True


def test_tensor_copies_and_numpy_does_not():
    data = np.array([1.0, 2.0])
    t = kiln.tensor(data)
    data[0] = 5.0
    assert t.numpy()[0] == 1.0
    assert np.asarray(t) is t.numpy()


def test_grad_and_value_and_grad():
    def f(a, b):
        return np.sum(np.tanh(a) * b)

    a = np.array([0.1, -0.4, 0.9])
    b = np.array([2.0, 3.0, -1.0])
    ga = kiln.grad(f)(a, b)
    np.testing.assert_allclose(ga, (1 - np.tanh(a) ** 2) * b, rtol=1e-12)
    value, (ga2, gb) = kiln.value_and_grad(f, argnums=(0, 1))(a, b)
    assert value == pytest.approx(f(a, b))
    np.testing.assert_allclose(ga2, ga)
    np.testing.assert_allclose(gb, np.tanh(a), rtol=1e-12)
    assert isinstance(ga, np.ndarray)


def _count_positive(x):
    return np.sum(x > 0)


def _truncated(x):
    return np.sum((x * 10).astype(np.int64))


@pytest.mark.parametrize("loss", [_count_positive, _truncated])
@pytest.mark.parametrize("way", ["eager", "compiled_fn", "in_compiled"])
def test_an_integer_loss_raises_naming_the_function(loss, way):
    """kiln.grad of a function returning an integer (a count, a cast) returned zeros as
    if that were its gradient; JAX raises. The error names the function and its line."""
    grad = {"eager": kiln.grad(loss), "compiled_fn": kiln.grad(kiln.compile(loss, backend="eager")),
            "in_compiled": kiln.compile(lambda x: kiln.grad(loss)(x), backend="eager")}[way]
    line = loss.__code__.co_firstlineno
    with pytest.raises(kiln.KilnError, match=rf"the function {loss.__name__} \({re.escape(__file__)}:{line}\) "
                                             r"returns a value of dtype int64; .*return a float expression"):
        grad(np.array([0.5, -1.0, 2.0]))


def test_an_integer_argument_error_names_the_callers_line():
    with pytest.raises(kiln.KilnError, match=rf"kiln.grad at {re.escape(__file__)}:\d+: argument 0 has "
                                             r"dtype int64; .*x.astype\(np.float64\)"):
        kiln.grad(lambda x: np.sum(x * 1.0))(np.arange(3))


def test_a_numpy_arrays_method_given_a_tensor_says_to_call_the_function():
    """X.dot(w) of a NumPy X does not dispatch to the Tensor (ndarray.dot is C code that
    converts it): the error named np.array([...]) and writes, not the method it was."""
    X = np.ones((2, 3))
    with pytest.raises(kiln.KilnError, match=rf"plain NumPy array at {re.escape(__file__)}:\d+ .*"
                                             r"X.dot\(t\).*\(np.dot\(X, t\), X @ t\)"):
        kiln.grad(lambda w: np.sum(X.dot(w)))(np.ones(3))
    np.testing.assert_array_equal(kiln.grad(lambda w: np.sum(np.dot(X, w)))(np.ones(3)), [2.0, 2.0, 2.0])


def test_gradient_through_setitem_on_a_non_leaf():
    x = leaf([1.0, 2.0, 3.0])
    v = leaf([10.0])
    y = x * 2.0
    y[1:2] = v * v
    y.backward(np.array([1.0, 1.0, 1.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 0.0, 2.0])
    np.testing.assert_array_equal(v.grad.numpy(), [20.0])


def _into_numpy(x):
    y = np.ones(5)
    y[:2] = x[:2] * 3          # NumPy's setitem turns the Tensor into an array
    return (y * x).sum()


def _into_like(x):
    y = np.ones_like(x)        # follows x: a Tensor under kiln.grad
    y[:2] = x[:2] * 3
    return (y * x).sum() + np.stack([x.sum(), x.max()]).sum()


def test_a_gradient_leaving_the_tape_raises_instead_of_being_lost():
    """Eager kiln.grad gave [3, 6, 1, 1, 1] for [6, 12, 1, 1, 1]: the write into a NumPy
    array dropped the path through y. Now it raises, naming the line; the Tensor-following
    spelling is right, and the compiled call (which traces the write) is right for both."""
    x = np.arange(1.0, 6.0)
    with pytest.raises(kiln.KilnError, match=r"test_autograd.py:\d+ .*gradient through it would be lost"):
        kiln.grad(_into_numpy)(x)
    eps = np.eye(5) * 1e-6
    want = np.array([(_into_like(x + e) - _into_like(x - e)) / 2e-6 for e in eps])
    np.testing.assert_allclose(kiln.grad(_into_like)(x), want, rtol=1e-6)
    np.testing.assert_allclose(kiln.compile(lambda v: kiln.grad(_into_numpy)(v))(x), [6, 12, 1, 1, 1])
    np.testing.assert_allclose(kiln.compile(lambda v: kiln.grad(_into_like)(v))(x), want, rtol=1e-6)
    assert np.asarray(kiln.tensor(x, requires_grad=True)).shape == (5,)   # outside kiln.grad


def test_gradient_matches_finite_differences_for_a_composite():
    def f(w):
        h = np.maximum(w @ np.array([[1.0, -2.0], [0.5, 3.0]]), 0.1)
        return np.log(np.sum(np.exp(h), axis=1))

    w = np.array([[0.3, 0.2], [-0.1, 0.7], [1.1, -0.4]])
    assert kiln.autograd.gradcheck(f, (w,))


def test_unknown_numpy_function_works_without_grad_and_errors_with_grad():
    t = kiln.tensor([4.0, 1.0, 4.0])
    out = np.i0(t)
    np.testing.assert_allclose(np.asarray(out), np.i0([4.0, 1.0, 4.0]))
    with pytest.raises(kiln.NoOpError, match="numpy.i0"):
        np.i0(leaf([4.0, 1.0, 4.0]))


def test_complex_values_without_a_complex_rule_raise():
    """Ops with no complex derivative rule: a clear error, never a missing or wrong
    gradient (those with one: tests/ops/test_complex_grads.py)."""
    np.testing.assert_allclose(np.asarray(np.arcsinh(kiln.tensor([1.0, 4.0]) * 1j)), np.arcsinh(np.array([1.0, 4.0]) * 1j))
    with pytest.raises(kiln.errors.AutogradError, match="complex"):
        np.arcsinh(leaf([1.0, 4.0]) * 1j)   # (ihfft, tan and angle, examples here before, have a rule now)
    with pytest.raises(kiln.errors.AutogradError, match="complex"):
        np.arctanh(kiln.tensor(np.array([0.5 + 1j]), requires_grad=True))
    with pytest.raises(kiln.errors.AutogradError, match="needs a gradient"):
        (leaf([1.0, 2.0]) * 1j).sum().backward()


def test_user_numpy_errors_keep_type_and_message():
    a = kiln.tensor(np.ones(3))
    b = kiln.tensor(np.ones(4))
    with pytest.raises(ValueError) as kiln_err:
        a + b
    with pytest.raises(ValueError) as np_err:
        np.ones(3) + np.ones(4)
    assert str(kiln_err.value) == str(np_err.value)


def test_numerical_grad_helper_is_correct():
    g = numerical_grad(lambda x: x ** 3, [np.array([2.0])], 0, np.ones(1))
    assert g[0] == pytest.approx(12.0, rel=1e-6)


def test_grads_never_share_memory_with_each_other_or_user_arrays():
    # .grad may take a fresh gradient array without copying it, but only one nobody else
    # holds: two leaves fed the same gradient, a user's gradient argument, and an array a
    # hook kept all stay separate.
    x = kiln.tensor(np.ones(4), requires_grad=True)
    y = kiln.tensor(np.ones(4), requires_grad=True)
    (x + y).backward(np.arange(4.0))
    assert not np.shares_memory(x.grad.numpy(), y.grad.numpy())
    x.grad.numpy()[0] = 100.0
    np.testing.assert_array_equal(y.grad.numpy(), np.arange(4.0))
    g = np.full(4, 2.0)
    z = kiln.tensor(np.ones(4), requires_grad=True)
    z.backward(g)
    assert not np.shares_memory(z.grad.numpy(), g)
    kept = []
    u = kiln.tensor(np.ones(3), requires_grad=True)
    u.register_hook(lambda grad: kept.append(grad))
    (u * 3.0).sum().backward()
    assert not np.shares_memory(u.grad.numpy(), kept[0].numpy())
    np.testing.assert_array_equal(u.grad.numpy(), [3.0, 3.0, 3.0])
    v = kiln.tensor(np.ones(3), requires_grad=True)
    (v * 2.0).sum().backward()
    (v * 2.0).sum().backward()  # the second gradient adds into the first
    np.testing.assert_array_equal(v.grad.numpy(), [4.0, 4.0, 4.0])


def test_a_view_sees_in_place_updates_of_its_base():
    # h *= 3 changes v's values; its gradient must go through the update (as compiled
    # code and PyTorch do), not through h's old history.
    x = leaf([1.0, 2.0, 3.0])
    h = x * 1.0
    v = h[0:2]
    h *= 3.0
    v.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 0.0])
    x = leaf([1.0, 2.0, 3.0])
    h = x * 1.0
    v = h[0:2][::-1]          # a view of a view: its view ops replayed on the new h
    h *= 3.0
    (v * np.array([1.0, 2.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 3.0, 0.0])


def test_a_view_taken_before_its_base_carried_a_gradient_follows_the_write():
    # old saw base before base depended on x: it must not stay a constant (it did, through
    # the ufunc fast path and _record's refresh, which looked only at views needing grad)
    for write in ("setitem", "through_a_view"):
        x = leaf([1.0, 2.0, 3.0])
        base = kiln.tensor(np.zeros(3))
        old = base[:2]
        if write == "setitem":
            base[1:] = x[1:] * 2.0
        else:
            v = base[1:]
            v += x[1:] * 2.0
        ((old * np.array([1.0, 10.0])).sum() + base.sum()).backward()
        np.testing.assert_array_equal(x.grad.numpy(), [0.0, 22.0, 2.0], err_msg=write)


def test_multiplying_by_a_number_does_not_read_the_other_operand():
    x = leaf([1.0, 2.0])
    h = x * 2
    y = h * 3.0
    h *= 5            # y's derivative is 3.0: h's old value is not needed
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])


def test_clip_gradient_when_lo_exceeds_hi():
    # np.clip is minimum(maximum(x, lo), hi): with lo > hi the result is hi.
    a, lo, hi = leaf([0.0, 0.0, 3.0, 1.2]), leaf([1.5, 1.5, 0.5, 1.0]), leaf([1.0, 1.0, 2.0, 2.0])
    np.clip(a, lo, hi).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(lo.grad.numpy(), [0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(hi.grad.numpy(), [1.0, 1.0, 1.0, 0.0])


def test_repeated_index_assignment_sends_the_gradient_to_the_write_that_lands():
    # h[[0, 0]] = y keeps y[1] (NumPy: the last write wins); y[0] gets no gradient.
    x, y = leaf([1.0, 2.0, 3.0]), leaf([10.0, 20.0])
    h = x * 1.0
    h[[0, 0]] = y
    np.testing.assert_array_equal(h.numpy(), [20.0, 2.0, 3.0])
    (h * h).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [0.0, 40.0])
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 4.0, 6.0])
    x, rows = leaf(np.ones((3, 4))), leaf(np.arange(8.0).reshape(2, 4))
    h = x * 1.0
    h[[2, 0, 2]] = np.stack([rows[0], rows[1], rows[0] * 2.0])   # the third row lands in 2
    (h * h).sum().backward()
    np.testing.assert_array_equal(rows.grad.numpy(), [[0.0, 8.0, 16.0, 24.0], [8.0, 10.0, 12.0, 14.0]])


def test_no_grad_as_a_decorator_is_reentrant_and_per_thread():
    import threading

    @kiln.no_grad()
    def walk(n):
        return 0 if n == 0 else 1 + walk(n - 1)
    walk(3)
    assert kiln.is_grad_enabled()
    seen = []

    def other():
        with kiln.no_grad():
            walk(2)
            seen.append(kiln.is_grad_enabled())
    threads = [threading.Thread(target=other) for _ in range(4)] + [threading.Thread(target=walk, args=(50,))]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert seen == [False] * 4 and kiln.is_grad_enabled()
