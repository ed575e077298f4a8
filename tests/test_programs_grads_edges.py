"""Gradient edge cases a probe over every differentiable op found wrong or raising in
compiled code (kiln.grad of a compiled function, kiln.grad inside one), each checked
against central finite differences in float64 as tests/test_programs_grads.py does."""
from __future__ import annotations

import numpy as np
import pytest

import kiln
from tests.test_programs_grads import check_gradient, rn


def _write_masked_value(x, v):
    y = x * 1.0
    y[x > 0] = v
    return np.sum(y ** 2 * np.arange(1, 7))


def _write_masked_rows(x, v):
    y = x * 1.0
    y[:, x[0] > 0] = v
    return np.sum(np.sin(y))


def _write_masked_value_after_a_break(x, v):
    y = x * 1.0
    y[x > 0] = v[x > 0] ** 2   # v[x > 0] breaks the graph: the value comes in with its size
    return np.sum(y * np.arange(6))


_SIGNS = np.array([1.0, -1.0, 2.0, -2.0, 3.0, -3.0])


@pytest.mark.parametrize("fn, args", [
    (_write_masked_value, (_SIGNS, rn(3))),
    (_write_masked_rows, (np.stack([_SIGNS, rn(6)]), rn(2, 3))),
    (_write_masked_value_after_a_break, (_SIGNS, rn(6))),
], ids=["mask", "mask_after_a_slice", "value_from_a_graph_break"])
def test_writing_a_value_that_spans_a_mask_differentiates(fn, args):
    """``y[m] = v`` with v as long as m has Trues: the value's cotangent was ``g[m]``, whose
    length the compiled graph only bounds (m's size), so the backward's sum to v's shape
    raised a broadcasting/reshape ValueError at compile time."""
    check_gradient(fn, args, argnums=(0, 1))


def _recurrence_into_a_fresh_array(x):
    out = np.empty(6)
    out[0] = 1.0
    for t in range(1, 6):
        out[t] = out[t - 1] * x[t] + x[t - 1]
    return np.sum(out ** 2)


def _history_of_a_time_stepping_loop(x):
    u = x * 1.0
    history = np.zeros((12, 6))
    for t in range(12):
        history[t] = u
        u = u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    return np.sum(history[::3] ** 2)


@pytest.mark.parametrize("fn", [_recurrence_into_a_fresh_array, _history_of_a_time_stepping_loop])
def test_a_loop_writing_into_an_array_inside_kiln_grad_in_compiled_code(fn):
    """A loop capture made one loop node sent kiln.grad in compiled code to the eager tape,
    which cannot follow a Tensor written into a NumPy array (``out = np.empty(n);
    out[t] = ...``): the compiled call raised 'setting an array element with a sequence'
    where kiln.grad of the compiled function (the loop unrolled) worked."""
    check_gradient(fn, (rn(6),), ways=("compiled_fn", "in_compiled"))


def _recurrence_of_rows(x, y):
    v = np.zeros((x.shape[0], 3))
    v[0] = x[0] * y
    for i in range(1, x.shape[0]):
        v[i] = x[i] * y + v[i - 1]
    return np.sum(np.sin(v))


def test_a_recurrence_over_the_rows_of_a_fresh_array_inside_kiln_grad_in_compiled_code():
    """``v[i] = x[i] * y + v[i - 1]`` reads a row of v (a view) before writing the next:
    capture kept the write a mutation op (v had a view), which kiln.grad in compiled code
    refuses ("the function writes into an array"), so it ran on the eager tape and raised
    that a Tensor became a plain NumPy array. The view is a temporary, gone before the
    write: the write becomes a new node (and a reference cycle in capture's opcall kept
    the temporary alive)."""
    check_gradient(_recurrence_of_rows, (rn(4, 3), rn(3)), argnums=(0, 1),
                   ways=("compiled_fn", "in_compiled"))


def _scalar_updated_in_place(x1, x2):
    v = x1 + 0.0       # a 0-d x1: NumPy gives a NumPy scalar...
    v *= np.tanh(x2)   # ...which has no in-place operator: v becomes a new (4, 1) array
    w = x2[0, 0] * 1.0
    old = w
    w -= x1            # a new scalar: old keeps its value (the Tensor changed both)
    return np.sum(v) + w * old * 2.0


def test_an_in_place_operator_on_a_value_numpy_gives_as_a_scalar_rebinds_it():
    """grads seed 2024: the Tensor of a 0-d result updated itself in place and raised
    'could not broadcast input array from shape (4,1) into shape ()' (eager kiln.grad and
    kiln.grad of the compiled function), and under ``old = w; w -= x1`` changed old too:
    a wrong value and gradient. NumPy rebinds a NumPy scalar. Capture knows it
    of Tensors too: the compiled function on Tensors keeps the rebinding in its graph."""
    args = (np.array(0.7), rn(4, 1))
    check_gradient(_scalar_updated_in_place, args, argnums=(0, 1))
    tensors = [kiln.tensor(a, requires_grad=True) for a in args]
    assert kiln.explain(_scalar_updated_in_place)(*tensors).graph_break_count == 0


def test_a_complex_loss_raises_a_kiln_grad_error():
    """kiln.grad of a complex-valued function raised the Tensor's backward() message
    ('pass gradient=', which kiln.grad has no place for)."""
    z = rn(3) + 1j * rn(3)
    for grad in (kiln.grad(lambda z: np.sum(z ** 2)),
                 kiln.compile(lambda z: kiln.grad(lambda z: np.sum(z ** 2))(z))):
        with pytest.raises(kiln.KilnError, match=r"kiln.grad: the function returns a complex128 "
                                                 r"value.*np.real\(\.\.\.\) or np.abs"):
            grad(z)


def _write_masked_any_length(x, v):
    y = x * 1.0
    y[x > 0] = v
    return np.sum(y ** 2 * np.arange(1, x.size + 1))


@pytest.mark.parametrize("dynamic", [None, True], ids=["sizes_seen_twice", "dynamic"])
def test_writing_a_value_that_spans_a_mask_with_dynamic_sizes(dynamic):
    """The same write on arrays of other lengths: with dynamic sizes the value's length is
    an input's size (ir.SizeRef), and the backward still took the gather g[m]."""
    rng = np.random.default_rng(17)
    f = kiln.compile(lambda x, v: kiln.grad(_write_masked_any_length, (0, 1))(x, v), dynamic=dynamic)
    for n in (6, 8, 11, 6):
        x = rng.standard_normal(n)
        v = rng.standard_normal(int(np.sum(x > 0)))
        want = kiln.grad(_write_masked_any_length, (0, 1))(x, v)
        for got, w in zip(f(x, v), want):
            np.testing.assert_allclose(got, w, rtol=1e-12, atol=1e-14)
