"""Range loops over whole arrays that end in ``if <data>: break``, as one graph_while node
(kiln/capture/graph_breaks.py), checked against the uncompiled functions with
tests/test_programs.py's oracle (values, dtypes, mutated arguments, aliasing, exceptions)
on the C++ and eager backends: loops that break early, never, on the first trip, run no
trip; the loop variable after the loop; for-else; element reads and NumPy scalars in the
test; one compile for every trip count."""
import numpy as np
import pytest

import kiln
from kiln.ops import graph_loops
from tests.test_programs import check_program

from benchmarks.time_loops import heat_break as heat  # the example, as benchmarked

BACKENDS = ["cpp", "eager"]
NODE = "graph loop node (graph_while, range loop with a break"


def heat_rebound(u, maxiter, tol):
    """The array rebound to a new one each trip; nothing read after the loop but it."""
    for _ in range(maxiter):
        v = u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
        err = np.abs(v - u).max()
        u = v
        if err < tol:
            break
    return u


def until_hot(T, maxiter, j, i):
    """An element read in the test (a NumPy scalar against a Python int)."""
    for step in range(maxiter):
        T[1:-1, 1:-1] = 0.25 * (T[2:, 1:-1] + T[:-2, 1:-1] + T[1:-1, 2:] + T[1:-1, :-2]) + 1.0
        if T[j, i] >= 70:
            break
    return T, step


def strided(u, maxiter, tol):
    """A start and a step: the variable after the loop is the trip's own value."""
    k = -1
    for k in range(3, maxiter, 4):
        u = 0.5 * (u + np.roll(u, 1))
        if np.abs(u - np.roll(u, 1)).max() < tol:
            break
    return u, k


def counted(u, maxiter, tol):
    """A Python int the body counts with, carried like the while form's."""
    n = 0
    for _ in range(maxiter):
        u = 0.5 * (u + np.roll(u, -1))
        n += 2
        if u.std() < tol:
            break
    return u, n


def both(u, maxiter, tol):
    """An ``and`` of two tests on computed values."""
    for it in range(maxiter):
        u = 0.5 * (u + np.roll(u, 1))
        if u.max() - u.min() < tol and u.std() < tol:
            break
    return u, it


def either(T, maxiter, tol):
    """An ``or`` of a reduction and an element read."""
    for it in range(maxiter):
        T[1:-1] = 0.5 * (T[2:] + T[:-2])
        if T.max() < tol or T[3] > 0.7:
            break
    return T, it


def countdown(u, n, tol):
    """A negative step: the counter tests ``next > stop``."""
    for k in range(n, 0, -2):
        u = 0.5 * (u + np.roll(u, 1))
        if u.std() < tol:
            break
    return u, k


def inner_convergence(u, steps, maxiter, tol):
    """A range loop with a break inside a time loop (a graph loop node's body)."""
    for _ in range(steps):
        u = u + 0.1
        for it in range(maxiter):
            v = 0.5 * (u + np.roll(u, 1))
            err = np.abs(v - u).max()
            u = v
            if err < tol:
                break
    return u


def for_else(T, maxiter, tol):
    """The else block runs only when no break did (not a node: which runs is the data's)."""
    for it in range(maxiter):
        T[1:-1] = 0.5 * (T[:-2] + T[2:])
        if np.abs(T).max() < tol:
            break
    else:
        T[0] = -1.0
    return T


def break_midway(T, maxiter, tol):
    """A break that is not the body's last statement: as before (unrolled or broken)."""
    for it in range(maxiter):
        T[1:-1] = 0.5 * (T[:-2] + T[2:])
        if np.abs(T).max() < tol:
            break
        T[0] = T[0] * 0.5
    return T, it


def _plate(n=24):
    T = np.zeros((n, n))
    T[0] = 100.0
    return T


def _notes(fn, *args):
    return "\n".join(l for l in str(kiln.explain(fn)(*args)).splitlines() if "loop" in l)


@pytest.mark.parametrize("backend", BACKENDS)
def test_heat_breaks_early_never_first_and_zero_trips(backend):
    T = _plate()
    check_program(heat, [(T, 500, 1e-2),        # breaks early
                         (T, 40, 1e-12),        # never: the variable ends at maxiter - 1
                         (T, 50, 1e3),          # on the first trip
                         (T, 0, 1e-2),          # no trip: 'it' unbound, UnboundLocalError
                         (T, 1, 1e-2)], backend)


def test_heat_is_one_node_compiled_once():
    T = _plate()
    assert NODE in _notes(heat, T.copy(), 500, 1e-2)
    f = kiln.compile(heat)
    runs = graph_loops.stats["runs"]
    for maxiter, tol in ((500, 1e-2), (60, 1e-9), (7, 1e-2), (300, 1e-3)):
        got, it = f(T.copy(), maxiter, tol)
        want, wit = heat(T.copy(), maxiter, tol)
        assert type(it) is int and it == wit
        np.testing.assert_array_equal(got, want)
    assert len(f.cache_entries) == 1            # the run-time trip count: one compile
    assert graph_loops.stats["runs"] == runs + 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_rebound_array(backend):
    u = np.random.default_rng(0).random(64)
    check_program(heat_rebound, [(u, 400, 1e-3), (u, 5, 1e-3), (u, 100, 10.0), (u, 0, 1e-3)],
                  backend)
    assert NODE in _notes(heat_rebound, u, 400, 1e-3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_element_read_condition(backend):
    T = _plate(16)
    check_program(until_hot, [(T, 200, 3, 8), (T, 200, 1, 1), (T, 10, 8, 8), (T, 200, 1, 0)],
                  backend)
    assert NODE in _notes(until_hot, T.copy(), 200, 3, 8)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tol", [1e-3, np.float64(1e-3), np.float32(1e-3), float("nan")])
def test_python_float_numpy_scalar_and_nan_tolerance(backend, tol):
    check_program(heat, [(_plate(), 300, tol)], backend)
    f32 = _plate().astype(np.float32)
    check_program(heat, [(f32, 300, tol)], backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_start_step_and_variable_bound_before(backend):
    u = np.random.default_rng(1).random(48)
    check_program(strided, [(u, 400, 1e-3), (u, 30, 1e-9), (u, 3, 1e-3), (u, 200, 10.0)], backend)
    assert NODE in _notes(strided, u, 400, 1e-3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_carried_python_int(backend):
    u = np.random.default_rng(2).random(32)
    check_program(counted, [(u, 500, 1e-4), (u, 6, 1e-4), (u, 0, 1e-4)], backend)
    out = kiln.compile(counted, backend=backend)(u.copy(), 500, 1e-4)
    assert type(out[1]) is int and out[1] == counted(u.copy(), 500, 1e-4)[1]
    assert NODE in _notes(counted, u, 500, 1e-4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_and_of_two_tests(backend):
    u = np.random.default_rng(3).random(32)
    check_program(both, [(u, 500, 1e-3), (u, 4, 1e-3), (u, 100, 10.0)], backend)
    assert NODE in _notes(both, u, 500, 1e-3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_or_negative_step_and_nested(backend):
    T = np.linspace(0.0, 1.0, 20)
    check_program(either, [(T, 100, 1e-3), (T, 100, 0.3), (T, 3, 1e-3)], backend)
    u = np.random.default_rng(4).random(30)
    check_program(countdown, [(u, 100, 1e-3), (u, 9, 1e-9), (u, 101, 1e-3), (u, 0, 1e-3)], backend)
    check_program(inner_convergence, [(u, 5, 50, 1e-3), (u, 5, 3, 1e-3), (u, 4, 0, 1e-3)], backend)
    for fn, args in ((either, (T, 100, 1e-3)), (countdown, (u, 100, 1e-3)),
                     (inner_convergence, (u, 5, 50, 1e-3))):
        assert NODE in _notes(fn, *args)


def test_fullgraph():
    T = _plate(12)
    got, it = kiln.compile(heat, fullgraph=True)(T.copy(), 300, 1e-2)
    want, wit = heat(T.copy(), 300, 1e-2)
    np.testing.assert_array_equal(got, want)
    assert it == wit


@pytest.mark.parametrize("backend", BACKENDS)
def test_for_else_and_midway_break_as_before(backend):
    T = np.linspace(0.0, 1.0, 20)
    check_program(for_else, [(T, 300, 1e-2), (T, 5, 1e-9), (T, 0, 1.0)], backend)
    check_program(break_midway, [(T, 300, 1e-2), (T, 5, 1e-9)], backend)


def test_constant_trip_count():
    def fixed(T, tol):
        for it in range(100):
            Tn = T.copy()
            T[1:-1, 1:-1] = 0.25 * (Tn[2:, 1:-1] + Tn[:-2, 1:-1] + Tn[1:-1, 2:] + Tn[1:-1, :-2])
            if np.abs(T - Tn).max() < tol:
                break
        return T, it
    check_program(fixed, [(_plate(), 1e-2), (_plate(), 1e-12)], "cpp")
    assert NODE in _notes(fixed, _plate(), 1e-2)


def test_graph_loops_off_keeps_it_unrolled(monkeypatch):
    from kiln.config import config
    monkeypatch.setattr(config, "graph_loops", False)
    assert NODE not in _notes(heat, _plate(), 20, 1e-2)


def append_after_break(x, n):
    """An append after the break's test, which Python skips on the trip that breaks (fuzz
    seed 724: the node appended there too, ``[2, 6, 14, 30]`` for ``[2, 6, 14]``)."""
    out = []
    acc = x.copy()
    for i in range(n):
        acc[:] = acc * 2 + 1
        if acc.sum() > 20:
            break
        out.append(acc.sum())
    return out, acc


def test_append_after_the_break_is_not_made_on_the_breaking_trip():
    x = np.zeros(2)
    check_program(append_after_break, [(x, 10), (x, 2), (x, 0)], "eager")
    assert "appends to a list after the break's test" in _notes(append_after_break, x, 10)


def bound_in_the_loop(u, maxiter, tol):
    """Locals first bound in the loop and read after it (stop 57: "'err' is assigned in the
    loop and used after it, but not bound before it" kept the loop unrolled): an array, a
    NumPy scalar and a Python number, each the last trip's."""
    u = u.copy()
    for it in range(maxiter):
        old = u.copy()
        u[1:-1] = 0.5 * (old[:-2] + old[2:])
        err = np.abs(u - old).max()
        n = it * 2
        if err < tol:
            break
    return u, old, err, n


def read_before_bound(u, maxiter):
    """A name the trip reads before it binds it: Python's UnboundLocalError, first trip."""
    for _ in range(maxiter):
        u = u + late
        late = u.sum()
        if late > 1e9:
            break
    return u, late


@pytest.mark.parametrize("backend", BACKENDS)
def test_locals_first_bound_in_the_loop(backend):
    u = np.sin(np.linspace(0, 3, 24))
    check_program(bound_in_the_loop, [(u, 300, 1e-4),   # breaks early
                                      (u, 3, 1e-4),     # never: the last trip's values
                                      (u, 50, 10.0),    # on the first trip
                                      (u, 0, 1e-4)],    # no trip: UnboundLocalError
                  backend)
    if backend != "cpp":     # (Python's UnboundLocalError at capture: no builds needed)
        check_program(read_before_bound, [(u, 5)], backend)
    out = kiln.explain(bound_in_the_loop)(u, 300, 1e-4)
    # (before: the first trip inline, a break at its test, the node in the resume function)
    assert out.graph_break_count == 0 and out.graph_count == 1
    assert any(NODE in note for note in out.loops)


def rebound_after_the_break(X, C, max_iter, tol):
    """k-means' "until converged": the test, then only rebindings (stop 57: "the body
    stores a local after the break's test" ran the first trip inline and broke the graph
    at the test). The trip that breaks skips ``C = newC`` and ``lam = lam_new``."""
    C = C.copy()
    lam = X.sum() * 0.0           # (an np.float64, as the trip's: a Python float is not kept)
    for it in range(max_iter):
        d = ((X[:, None] - C[None]) ** 2).sum(-1)
        newC = 0.5 * C + 0.5 * X[d.argmin(0)]
        lam_new = d.min()
        if np.abs(newC - C).max() < tol:
            break
        C = newC
        lam = lam_new
    return C, it, lam


@pytest.mark.parametrize("backend", BACKENDS + ["aot_eager"])
def test_rebindings_after_the_break(backend):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((12, 2))
    C = X[:3] + 0.25
    check_program(rebound_after_the_break, [(X, C, 60, 1e-9),   # breaks early
                                            (X, C, 2, 1e-9),    # never: the last rebinding kept
                                            (X, C, 60, 10.0),   # the first trip breaks
                                            (X, C, 0, 1e-9)],   # no trip: 'it' unbound
                  backend)
    # an argument rebound after the test stays as before (on a first-trip break C is the
    # caller's own array): values and aliasing checked, the loop is not this node
    if backend != "cpp":     # (capture's choice, the same on every backend: no builds)
        check_program(heat_rebound_after, [(C, 40, 1e-9), (C, 40, 10.0)], backend)
    out = kiln.explain(rebound_after_the_break)(X, C, 60, 1e-9)
    assert out.graph_break_count == 0 and any(NODE in note for note in out.loops)


def heat_rebound_after(u, maxiter, tol):
    for _ in range(maxiter):
        v = 0.5 * (u + np.roll(u, 1))
        if np.abs(v - u).max() < tol:
            break
        u = v
    return u
