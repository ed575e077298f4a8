"""Loops that break the graph in their body and iterate over something kiln did not make
(an array, list, tuple or generator argument; enumerate/zip of them): after the break the
loop goes on in resume functions, each compiled and called once per iteration with the
live iterator passed in (capture/resume.py, capture/partial.py). Checked against NumPy
on every backend: values, exceptions, early break/return, for-else, the iterated array
written inside the loop, an iterator or generator argument (advanced, never remade)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln
from tests.test_programs import BACKENDS, program_registry, program_test

PROGRAMS, program = program_registry()
rng = np.random.default_rng(7)
X = rng.standard_normal(12)
PTS = np.array([0.3, -1.2, 0.8, -0.1, 1.5])


@program((X, PTS), (X[:5], PTS[:2]), (X, PTS[:1]))
def over_array_arg(x, pts):
    acc = np.zeros_like(x)
    for z in pts:
        y = np.sin(x * z) + z
        if y.sum() > 0:            # a break on the data (y = -y would be a select since
            y *= -1                # stop 59: y is held once; an in-place side is not)
        acc += y * z
    return acc


@program(([X, X * 2, X - 1], 0.5), ([X[:3]], -2.0))
def over_list_of_arrays(xs, w):
    total = np.float64(0)
    out = np.zeros_like(xs[0])
    for a in xs:
        b = np.exp(a * w)
        if b.max() > 2.0:
            out += b
        total += b.sum()
    return out, total


@program(((X, X + 1, X * 3), (X * 0.5, X, X - 2)))
def enumerate_zip_tuples(xs, ys):
    out = np.zeros_like(xs[0])
    for i, (a, b) in enumerate(zip(xs, ys)):
        d = a * b - i
        if d.mean() < 0:
            d = d * 2
        out += d
    return out, i


@program((X, 6), (X, 0))
def range_with_arrays(x, n):
    y = x.copy()
    for i in range(n):
        y = np.tanh(y + i)
        if y[0] > 0.5:
            y = y - 1
    return y


@program((X, PTS), (X, PTS * -1), (X, PTS * 0.01))
def early_break_else(x, pts):
    acc = np.zeros_like(x)
    for k, z in enumerate(pts):
        y = np.cos(x) * z
        if y.sum() > 3.0:
            break
        acc += y
    else:
        acc -= 100.0
        k = -1
    return acc, k


@program((X, PTS), (X, PTS * 0.01))
def early_return(x, pts):
    acc = np.zeros_like(x)
    for z in pts:
        acc += x * z
        if acc.max() > 2.0:
            return acc, z
    return acc, None


@program((PTS.copy(), X), (np.array([1.0, -2.0, 0.5]), X))
def writes_the_iterated_array(pts, x):
    acc = np.zeros_like(x)
    for i, z in enumerate(pts):          # Python reads pts[i] when it gets there
        y = x * z
        if y.sum() > 0 and i + 1 < pts.shape[0]:
            pts[i + 1] = pts[i + 1] * 2.0 + z
        acc += y
    return acc, pts.sum()


@program((X, PTS, np.zeros(12)), (X, np.array([0.1, 0.2, 5.0, 0.3]), np.zeros(12)))
def raises_mid_loop(x, pts, out):
    for z in pts:
        y = x * z
        if np.abs(y).max() > 6.0:
            raise ValueError(f"too large at {z}")
        out += y                         # the writes before the raise stay
    return out



# A range loop whose body breaks: the resume function takes over the live range iterator
# (capture/loops.py LiveRangeIteratorVariable), its rest read per call.
PTS2 = rng.standard_normal((30, 2))


@program((PTS2, PTS2[:4].copy(), 4), (PTS2, PTS2[:3].copy() + 9.0, 3), (PTS2[:5], PTS2[:2].copy(), 2))
def kmeans_centers(pts, centers, k):
    lab = ((pts[:, None, :] - centers[None]) ** 2).sum(-1).argmin(1)
    for j in range(k):
        m = lab == j
        if m.any():                      # a break on the data; centers[j] stays when empty
            centers[j] = pts[m].mean(0)
    return centers, j


@program((PTS2, PTS2[:, 0].copy(), np.zeros(2), 5), (PTS2, PTS2[:, 1].copy(), np.ones(2), 0))
def descent_losses(A, b, x, n):
    losses = []
    for i in range(n):
        r = A @ x - b
        losses.append(float(r @ r))      # float() breaks the graph every step
        x = x - 0.01 * (A.T @ r)
    return x, losses


@program((X, 9), (X, 4), (X, 1))
def stepping_down_iterator_kept(x, n):
    it = iter(range(n, 0, -2))           # a name holds the iterator too: read after the loop
    for i in it:
        x = x + float(x[0]) * i
        if i < 5:
            break
    for j in range(n + 3, 1, -3):        # taken over: a negative step, bounds read per call
        x = x * 0.5 + float(x[1]) * j
    return x, list(it), i, j


test_program = program_test(PROGRAMS, BACKENDS, share=4)


def test_later_iterations_run_compiled_resume_functions():
    # The tail after the branch breaks at the loop's FOR_ITER (an iterator kiln did not
    # make); the body resumes in a resume function of its own, compiled once for each way
    # the branch goes and called for every later iteration.
    out = kiln.explain(over_array_arg)(X, PTS)
    at_loop = [i for i, b in enumerate(out.break_reasons) if "iterator kiln did not make" in b.reason]
    assert at_loop, [b.reason for b in out.break_reasons]
    assert out.break_resumes_at[at_loop[0]], "after the loop head: compiled again"
    sins = [ops for ops in out.ops_per_graph if "sin" in ops]
    assert len(sins) >= 2, out.ops_per_graph     # the first iteration's and the resumed body's
    compiled = kiln.compile(over_array_arg)
    np.testing.assert_allclose(compiled(X, PTS), over_array_arg(X, PTS), rtol=1e-12)
    bodies = [r.function for r in compiled.records if "sin" in r.ops]
    assert bodies[0] == "over_array_arg"
    assert any(f.startswith("over_array_arg.<resume") for f in bodies[1:]), bodies


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_every_iteration_runs_the_compiled_body(backend):
    # the body's resume entries serve every later iteration: no recompiles per element
    compiled = kiln.compile(over_array_arg, backend=backend)
    pts = np.linspace(-1.5, 1.5, 25)
    np.testing.assert_allclose(compiled(X, pts), over_array_arg(X, pts), rtol=1e-12)
    first = len(compiled.records)
    pts2 = np.linspace(-1.4, 1.6, 25)
    np.testing.assert_allclose(compiled(X, pts2), over_array_arg(X, pts2), rtol=1e-12)
    assert len(compiled.records) == first


def iterator_argument(x, it):
    acc = np.zeros_like(x)
    n = 0
    for z in it:                         # an iterator or generator: advanced, never remade
        y = x * z
        if y.sum() > 0:
            y = -y
        acc += y
        n += 1
    return acc, n, next(it, "done")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("make", [lambda: iter([0.5, -0.5, 2.0]), lambda: (v for v in [1.0, -1.0, 3.0]),
                                  lambda: iter(PTS)])
def test_an_iterator_argument_is_advanced_never_remade(backend, make):
    from tests.test_programs import _compile
    compiled = _compile(iterator_argument, backend)
    for _ in range(2):
        got, exp = compiled(X, make()), iterator_argument(X, make())
        np.testing.assert_array_equal(got[0], exp[0])
        assert got[1:] == exp[1:]


def test_a_range_loop_goes_on_in_the_resume_function():
    # The iterator handed to the resume function after the data break is taken over: no
    # break at the loop head, and one resume entry serves every iteration and every k
    # (the rest's bounds are run-time ints; only "any left?" is guarded).
    out = kiln.explain(kmeans_centers)(PTS2, PTS2[:4].copy(), 4)
    assert [b.kind for b in out.break_reasons] == ["data_dependent"], [b.reason for b in out.break_reasons]
    compiled = kiln.compile(kmeans_centers, backend="eager")
    resumed = []
    for k in (6, 4, 5):                  # the first k centers move
        c = PTS2[:6].copy()
        got, exp = compiled(PTS2, c, k), kmeans_centers(PTS2, PTS2[:6].copy(), k)
        np.testing.assert_array_equal(got[0], exp[0])
        assert got[1] == exp[1] and got[0] is c
        resumed.append([r.ops for r in compiled.records if ".<resume" in r.function])
    assert resumed[0] == resumed[1] == resumed[2], resumed   # no entry per iteration or per k
    assert ["getitem_mask", "mean", "setitem", "equal", "any"] in resumed[0]   # the next step's test


def doses_by_day(x, schedule, per_day):
    s = 0.0
    for step in range(x.size):
        d = schedule.get(step // per_day, 0.0)   # a dict key computed from the loop variable
        s = s + x[step] + d
        if s > 1.0:                      # a data break: the loop goes on in a resume function
            s = s - 1.0
            x[0] += 0.0                  # (a side that writes: not a select, graph_selects.py)
        x[step] = s
    return x


def test_a_constant_computed_from_a_taken_over_loop_variable_breaks():
    # A SEIR model's daily dose schedule, ``doses.get(step // steps_per_day, 0.0)`` in a
    # loop that goes on in a resume function: the key, computed from the run-time start of
    # the iterator's rest, was guarded by value, which read its leaf's value and failed
    # (KeyError: 'rest(___stack0).start', an internal error: the function ran as Python);
    # guarded, it would fail at the next step (an entry per step, to the recompile limit).
    x = np.linspace(0.1, 0.9, 7)
    out = kiln.explain(doses_by_day)(x.copy(), {1: 0.5, 2: 0.25}, 2)
    assert [b.kind for b in out.break_reasons] == ["data_dependent", "unsupported_value"], \
        [b.reason for b in out.break_reasons]
    assert "changes at every step" in out.break_reasons[1].reason
    compiled = kiln.compile(doses_by_day, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # (no recompile-limit warning)
        for schedule in ({1: 0.5, 2: 0.25}, {0: 2.0}):
            got, exp = compiled(x.copy(), schedule, 2), doses_by_day(x.copy(), schedule, 2)
            np.testing.assert_array_equal(got, exp)
