"""Everyday constructs that broke the graph (stop 49): np.fromiter over a generator,
setattr and ``is`` on objects made in the function, a long loop inside a call capture
inlines (np.fromiter's generator, a helper), and an RK4 integrator whose right-hand side
is a closure of the time ``t`` carried as a Python number. Each is checked against the
plain function (values, types, exceptions, arguments after the call) and by its graph and
break counts; all but the RK4 run on the counting backend (no kernel build)."""
from __future__ import annotations

import numpy as np
import pytest

import kiln
from .conftest import assert_same, run_probe, same_as_numpy


def _fromiter(x, n):
    g = np.fromiter((i * i for i in range(n)), dtype=np.float64, count=n)
    ints = np.fromiter(range(1, 5), np.int32)
    it = iter([1.5, 2.5, 3.5, 4.5])
    head = np.fromiter(it, np.int64, 2)        # takes two items, leaves the rest
    empty = np.fromiter([], float)
    return x[:n] * g + 1.0, ints, head, next(it), empty, np.fromiter(x[:3], np.float32)


def test_fromiter_is_captured():
    compiled, _, _ = run_probe(_fromiter, np.arange(8.0), 6)
    assert all(r.graph_break is None for r in compiled.records)


def _fromiter_errors(x, which):
    if which == 0:
        return np.fromiter(iter([1.0, 2.0]), float, 5) + x     # iterator too short
    if which == 1:
        return np.fromiter([[1.0, 2.0]], float)               # an item is a sequence
    return np.fromiter([300], np.int8)                         # out of bounds for int8


def test_fromiter_errors_are_numpys():
    compiled = kiln.compile(_fromiter_errors, backend="eager")
    for which in range(3):
        same_as_numpy(compiled, _fromiter_errors, np.ones(1), which)


def _long_generator(x):
    y = np.tanh(x) * 2
    g = np.fromiter((i * 0.5 for i in range(len(x))), np.float64, len(x))
    return (y + g).sum()


def _harmonic(n):
    terms = []
    for k in range(1, n + 1):
        terms.append(1.0 / k)
    return sum(terms)


def _calls_a_long_loop(x):
    y = np.exp(x) - 1
    h = _harmonic(x.shape[0])
    return y.sum() * h + y.mean()


@pytest.mark.parametrize("fn, kind", [(_long_generator, "long_loop"),
                                      # (the loop is a node now, loop_appends, and Python's
                                      # ``sum`` of its list of floats too: no break at all,
                                      # appended_uses)
                                      (_calls_a_long_loop, None)])
def test_a_long_loop_inside_a_call_breaks_only_there(fn, kind):
    # (a long loop in the function itself runs it all as Python; inside a call capture
    # inlines, only that call does: before, both ran the whole function as Python)
    # (graphs: the code before the call and after it; np.fromiter's generator breaks once
    # more where the resume function iterates it, and the real np.fromiter runs)
    compiled, _, _ = run_probe(fn, np.linspace(0, 1, 2500), graphs=2 if kind else 1)
    breaks = [r.graph_break.kind for r in compiled.records if r.graph_break]
    assert breaks[:1] == ([kind] if kind else [])


class Box:
    pass


def _attributes(x, cfg):
    p = Box()
    q = p
    r = Box()
    setattr(p, "w", x * 2)
    for name in ("lo", "hi"):
        setattr(cfg, name, x.min() if name == "lo" else x.max())
    setattr(cfg, "scale", cfg.scale + 1)
    y = p.w + q.w + cfg.lo
    if p is q and p is not r and r is not None:
        y = y * 3
    return y, getattr(q, "w").sum(), p is q, r is p


def test_setattr_and_is_on_objects_made_in_the_function():
    cfg = Box()
    cfg.scale = 2.0
    compiled, _, _ = run_probe(_attributes, np.arange(4.0), cfg)
    assert all(r.graph_break is None for r in compiled.records)


def test_setattr_with_a_name_that_is_not_a_string_raises_pythons_error():
    def f(x):
        setattr(Box(), 1, x)
        return x + 1
    same_as_numpy(kiln.compile(f, backend="eager"), f, np.ones(2))


def _rk4(y0, h, n, t0=0.0):
    lam = -0.5
    rhs = lambda t, y: lam * y + np.sin(t)     # noqa: E731

    def f(t, y):
        return rhs(t, y) * np.cos(y)
    t, y, steps, half = t0, y0, 0, h / 2
    for i in range(n):
        k1 = f(t, y)
        k2 = f(t + half, y + half * k1)
        k3 = f(t + half, y + half * k2)
        y = y + h / 6 * (k1 + 2 * (k2 + k3) + f(t + h, y + h * k3))
        steps += 1
        t = t + h
    return y, t, steps


def test_rk4_carrying_the_time_as_a_python_number_is_one_loop_node():
    # t = t + h beside the array step: the range form carries arrays only, so the loop
    # unrolled, and at 200 steps ran the whole function as Python (long_loop)
    compiled = kiln.compile(_rk4)
    for args in [(np.ones(8), 0.01, 200), (np.linspace(0, 1, 8), 0.02, 57), (np.ones(8), 0.01, 0),
                 (np.ones(8), 0.01, 300, 2)]:
        assert_same(compiled(*args), _rk4(*args))
    report = kiln.explain(kiln.compile(_rk4))(np.ones(8), 0.01, 200)
    assert not report.break_reasons and report.graph_count == 1
    assert any("graph_while, range loop carrying numbers" in n for n in report.loops), report.loops


def _decay(y, h, n):
    t = 0.0
    for i in range(n):
        y = y - h * (np.roll(y, 1) - y) * t
        t = t + h
    return y, t


def test_a_carried_python_float_in_float32_work_is_a_node_too():
    # a Python float is weak in NumPy's arithmetic (float32 stays float32): the number the
    # graph computes is rounded into float32 where it meets float32 work, as NumPy rounds
    # it (python_numbers.narrowed_int), so float32 work takes it as float64 work does
    compiled = kiln.compile(_decay, backend="eager")
    for y in (np.ones(4), np.ones(4, np.float32)):
        assert_same(compiled(y, 0.01, 120), _decay(y, 0.01, 120))
        notes = kiln.explain(kiln.compile(_decay, backend="eager"))(y, 0.01, 120).loops
        assert any("range loop carrying numbers" in n for n in notes), notes


def _descent(A, b, w, tol, maxiter):
    for it in range(maxiter):
        g = A.T @ (A @ w - b)
        if np.linalg.norm(g) < tol:
            break
        w = w - 0.05 * g
    return w, it


def test_a_break_before_the_update_says_why_it_is_not_a_node():
    # (the node tests at the end of a trip; here the trip goes on past the test)
    A, b = np.eye(3) * 2, np.ones(3)
    compiled = kiln.compile(_descent, backend="eager")
    for maxiter in (40, 400):
        assert_same(compiled(A, b, np.zeros(3), 1e-6, maxiter), _descent(A, b, np.zeros(3), 1e-6, maxiter))
    notes = kiln.explain(kiln.compile(_descent, backend="eager"))(A, b, np.zeros(3), 1e-6, 40).loops
    assert any("the break is not its last statement" in n for n in notes), notes
