"""While loops over whole arrays as one graph loop node (kiln/capture/graph_while.py),
checked against the uncompiled functions with tests/test_programs.py's oracle (values,
dtypes, mutated arguments, aliasing, exceptions) on the C++ and eager backends."""
import sys
from pathlib import Path

import numpy as np
import pytest

import kiln
from kiln.ops import graph_loops
from tests.test_programs import check_program

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
# laplace: CFD Python step 9 (Barba), as written there; jacobi: numerical-mooc's Poisson
# solver (an ``and`` test, a carried Python int); cg: the first test on data (zero trips)
from benchmarks.time_loops import conjugate_gradient as cg  # noqa: E402
from benchmarks.time_loops import jacobi_poisson as jacobi  # noqa: E402
from benchmarks.time_loops import laplace  # noqa: E402


def heat_until(u, dt, T):
    """Carried Python float and int; the test on the float."""
    t = 0.0
    n = 0
    while t < T:
        u = u + dt * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
        t += dt
        n += 1
    return u, t, n


def relax_or(u, tol):
    """An ``or`` test: at least three sweeps, then until the change is small."""
    err = tol + 1.0
    n = 0
    while n < 3 or err > tol:
        v = 0.5 * u + 0.25 * (np.roll(u, 1) + np.roll(u, -1))
        err = np.abs(v - u).max()
        u = v
        n += 1
    return u, err, n


def shrink_until_raises(M, p, tol):
    """np.linalg.cholesky raises on the trip where M stops being positive definite; the
    argument p was written on every trip before it."""
    err = 1.0
    while err > tol:
        p[0] += 1.0
        M = M - 0.4 * np.eye(M.shape[0])
        L = np.linalg.cholesky(M)
        err = np.abs(L).max()
    return M


def _spd(n, seed):
    m = np.random.default_rng(seed).random((n, n))
    return m @ m.T + n * np.eye(n)


def _grid(n=21):
    return np.zeros((n, n)), np.linspace(0.0, 1.0, n)


def _notes(fn, *args):
    return "\n".join(l for l in str(kiln.explain(fn)(*args)).splitlines() if "loop" in l)


BACKENDS = ["cpp", "eager"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_laplace(backend):
    p, y = _grid()
    zeros = np.zeros_like(y)
    # the last call: y = 0 keeps every sum 0, l1norm is 0/0 = NaN and NaN > target is False
    check_program(laplace, [(p, y, 0.1, 0.1, 1e-3), (p, y, 0.1, 0.05, 1e-4),
                            (p, y, 0.1, 0.1, 1e-2), (p, zeros, 0.1, 0.1, 1e-3)], backend)


def test_laplace_one_compile_and_explain():
    p, y = _grid()
    f = kiln.compile(laplace)
    runs, trips = graph_loops.stats["runs"], graph_loops.stats["trips"]
    for target in (1e-3, 1e-4, 1e-2):
        f(p.copy(), y, 0.1, 0.1, target)
    assert len(f.cache_entries) == 1            # one compile serves every trip count
    assert graph_loops.stats["runs"] == runs + 3 and graph_loops.stats["trips"] > trips + 3
    notes = _notes(laplace, p.copy(), y, 0.1, 0.1, 1e-3)
    assert "graph loop node (graph_while, while loop: trip count run-time, at least 1" in notes
    assert "not captured" not in notes
    # a target above the first l1norm: the loop never runs (its first test is guarded)
    check_program(laplace, [(p, y, 0.1, 0.1, 1e-3), (p, y, 0.1, 0.1, 2.0)], "cpp")


@pytest.mark.parametrize("backend", BACKENDS)
def test_jacobi_and_its_maxiter_cap(backend):
    rng = np.random.default_rng(0)
    p, b = np.zeros((17, 17)), rng.random((17, 17))
    check_program(jacobi, [(p, b, 0.1, 1e-5), (p, b, 0.1, 1e-6, 40), (p, b, 0.1, 1e-3, 20000),
                           (p, b * np.nan, 0.1, 1e-5)], backend)   # NaN: one trip


def test_jacobi_carries_the_int_and_compiles_once():
    rng = np.random.default_rng(1)
    b = rng.random((17, 17))
    f = kiln.compile(jacobi)
    for rtol, cap in ((1e-5, 20000), (1e-6, 40), (1e-4, 7)):
        got, n = f(np.zeros((17, 17)), b, 0.1, rtol, cap)
        want, m = jacobi(np.zeros((17, 17)), b, 0.1, rtol, cap)
        assert type(n) is int and n == m
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert len(f.cache_entries) == 1
    notes = _notes(jacobi, np.zeros((17, 17)), b, 0.1)
    assert "graph_while" in notes and "carried: p, ite" in notes


@pytest.mark.parametrize("backend", BACKENDS)
def test_cg_zero_trips_nan_and_cap(backend):
    A, b = _spd(12, 2), np.random.default_rng(3).random(12)
    check_program(cg, [(A, b, 1e-8), (A, b, 1e-12, 3), (A, b, 1e3),        # false at entry
                       (A, b, float("nan"))], backend)                       # NaN at entry


def test_cg_is_one_node_that_may_run_zero_times():
    A, b = _spd(12, 4), np.random.default_rng(5).random(12)
    notes = _notes(cg, A, b, 1e-8)
    assert "graph loop node (graph_while, while loop: trip count run-time, 1" in notes
    f = kiln.compile(cg)
    for tol in (1e-8, 1e3, 1e-12):
        f(A, b, tol)
    assert len(f.cache_entries) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_carried_python_float_and_int(backend):
    u = np.random.default_rng(6).random(32)
    check_program(heat_until, [(u, 0.1, 1.0), (u, 0.05, 0.33), (u, 0.1, 0.0)], backend)
    out = kiln.compile(heat_until, backend=backend)(u, 0.1, 1.0)
    assert type(out[1]) is float and type(out[2]) is int
    assert "carried: u, n, t" in _notes(heat_until, u, 0.1, 1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_or_test(backend):
    u = np.random.default_rng(7).random(40)
    check_program(relax_or, [(u, 1e-3), (u, 10.0), (u, 1e-6)], backend)
    assert "graph_while" in _notes(relax_or, u, 1e-3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_exception_on_trip_three(backend):
    """NumPy's error, with the argument written on the trips before it and on trip 3
    before the error, as NumPy leaves it."""
    M, p = np.eye(4) + 0.0, np.zeros(3)
    # sqrt(1 - 0.4 k) on trip k: raises on trip 3; from 10 I it ends on trip 23, below 0.9
    check_program(shrink_until_raises, [(M, p, 0.1), (M * 10, p, 0.9)], backend)
    p1 = np.zeros(3)
    with pytest.raises(np.linalg.LinAlgError):
        kiln.compile(shrink_until_raises, backend=backend)(M.copy(), p1, 0.1)
    assert p1[0] == 3.0
    assert "graph_while" in _notes(shrink_until_raises, M * 10, np.zeros(3), 0.9)


def test_printed_graph_runs_and_shows_the_while():
    p, b = np.zeros((9, 9)), np.random.default_rng(8).random((9, 9))
    f = kiln.compile(jacobi)
    f(p.copy(), b, 0.1)
    code = f.cache_entries[0].graph.python_code()
    assert "while graph_while_go:" in code and "def graph_loop_body_" in code
    mine, want = p.copy(), p.copy()
    got = kiln.compile(jacobi, backend=lambda graph, example: graph)(mine, b, 0.1)
    exp = jacobi(want, b, 0.1)
    np.testing.assert_allclose(got[0], exp[0], rtol=1e-12)
    assert got[1] == exp[1]


def _swap(u, v, tol):
    err = tol + 1.0
    while err > tol:
        v[1:-1] = 0.5 * (u[:-2] + u[2:])
        err = np.abs(v - u).max()
        u, v = v, u
    return u, v


def _branchy(u, tol):
    err = tol + 1.0
    while err > tol:
        u = 0.5 * (u + np.roll(u, 1))
        if u.sum() > 1e9:
            u = u * 0.5
        err = np.abs(u - np.roll(u, 1)).max()
    return u


def _branchy_writes(u, tol):
    err = tol + 1.0
    while err > tol:
        u = 0.5 * (u + np.roll(u, 1))
        if u.sum() > 1e9:
            u[0] = 0.0           # a side that writes: no select (stop 59's select takes _branchy)
        err = np.abs(u - np.roll(u, 1)).max()
    return u


def _breaks(u, tol):
    err = tol + 1.0
    while err > tol:
        u = 0.5 * (u + np.roll(u, 1))
        err = np.abs(u - np.roll(u, 1)).max()
        if u[0] > 0.9:
            break
    return u


def _rebinds_argument(x, tol):
    while np.abs(x).max() > tol:
        x = x * 0.5
    return x


def test_a_branch_of_cheap_pure_sides_is_a_select_in_the_body():
    # stop 59: ``if u.sum() > 1e9: u = u * 0.5`` is a select; the untaken side keeps the
    # array the body made before the if
    args = (np.linspace(0, 1, 20), 1e-3)
    check_program(_branchy, [args, (args[0] * 2, args[1]), (args[0] * 1e9, args[1])], "cpp")
    assert "graph loop node (graph_while" in _notes(_branchy, *args)


@pytest.mark.parametrize("fn, args, why", [
    (_swap, (np.linspace(0, 1, 20) ** 2, np.linspace(0, 1, 20) ** 2, 1e-3), "names change places"),
    (_branchy_writes, (np.linspace(0, 1, 20), 1e-3), "not a graph while loop either"),
    (_breaks, (np.linspace(0, 1, 20), 1e-3), "not a graph while loop either"),
    (_rebinds_argument, (np.linspace(0, 1, 20), 1e-3), "must stay the same object"),
])
def test_loops_that_stay_as_before_are_still_right(fn, args, why):
    check_program(fn, [args, tuple(a * 2 if isinstance(a, np.ndarray) else a for a in args)], "cpp")
    assert why in _notes(fn, *args)
    # zero trips: the argument itself comes back
    x = np.linspace(0, 1, 20)
    if fn is _rebinds_argument:
        assert kiln.compile(fn)(x, 5.0) is x


def test_gradients_keep_todays_behaviour():
    """kiln.Tensors: no graph while node (gradients as before, exact)."""
    def decay(w, x):
        err = 1.0
        while err > 0.05:
            x = x * w
            err = np.abs(x).max()
        return x.sum()
    w0, x0 = np.full(4, 0.5), np.linspace(0.2, 1.0, 4)
    w = kiln.tensor(w0.copy(), requires_grad=True)
    out = kiln.compile(decay)(w, x0)
    out.backward()
    eps = 1e-6
    fd = [(decay(w0 + eps * e, x0) - decay(w0 - eps * e, x0)) / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(w.grad.numpy(), fd, rtol=1e-6, atol=1e-8)


def test_off_switch(monkeypatch):
    monkeypatch.setattr(kiln.config, "graph_loops", False)
    p, y = _grid(11)
    check_program(laplace, [(p, y, 0.1, 0.1, 1e-3)], "cpp")
    assert "graph_while" not in _notes(laplace, p.copy(), y, 0.1, 0.1, 1e-3)


def _not_converged(u, tol):
    converged = False
    while not converged:
        v = 0.5 * (u + np.roll(u, 1))
        converged = np.abs(v - u).max() < tol
        u = v
    return u


def _sweeps_until_small(p, tol):
    err = tol + 1.0
    while err > tol:
        pn = p.copy()
        for q in range(5):          # an element loop node inside the while body
            p[1:-1] = 0.5 * (p[:-2] + p[2:])
        err = np.abs(p - pn).max()
    return p


def _converge_each_step(p, n):
    for k in range(n):              # a graph loop node around a graph while node
        err = 1.0
        while err > 1e-3:
            pn = p.copy()
            p[1:-1] = 0.5 * (pn[:-2] + pn[2:])
            err = np.abs(p - pn).max()
        p[0] += 0.1
    return p


def _halve_in_place(p, tol):
    while np.abs(p).max() > tol:    # the first test on data, an argument written in place
        p *= 0.5
    return p


def _float32_time(u, dt, T):
    t = 0.0
    while t < T:
        u = u + dt * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
        t += dt
    return u, t


def _halvings_with_previous(u, cap):
    e_prev = e = np.abs(u).sum()    # one NumPy scalar bound to two names
    k = 0
    while e > 1e-3 and k < cap:
        e_prev, e = e, e * 0.5      # e_prev follows e (it kept the start value)
        k += 1
    return e, e_prev, k


def test_a_name_following_an_aliased_scalar_is_carried():
    """``e_prev = e = x.sum()`` then ``e_prev, e = e, e * 0.5``: e_prev ended bound to its
    own start object (e's), so it looked unchanged and kept the start value."""
    u = np.linspace(0, 1, 16) ** 2
    for backend in BACKENDS:
        check_program(_halvings_with_previous, [(u, 50), (u, 0), (u, 1)], backend)


@pytest.mark.parametrize("fn, calls", [
    (_not_converged, [(np.linspace(0, 1, 16) ** 2, 1e-3)]),
    (_sweeps_until_small, [(np.linspace(0, 1, 20) ** 3, 1e-4)]),
    (_converge_each_step, [(np.linspace(0, 1, 20) ** 2, 3), (np.linspace(0, 1, 20), 0)]),
    (_halve_in_place, [(np.linspace(0, 1, 20), 1e-3), (np.linspace(0, 1, 20), 5.0)]),
    (_float32_time, [(np.linspace(0, 1, 16, dtype=np.float32), 0.1, 1.0),
                     (np.linspace(0, 1, 16, dtype=np.float32), 0.1, 0.0)]),
], ids=["not", "element_loop_inside", "inside_a_graph_loop", "first_test_in_place", "float32"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_more_shapes(fn, calls, backend):
    check_program(fn, calls, backend)
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in calls[0]]
    assert "graph loop node (graph_while" in _notes(fn, *args)


def _cg_from(A, b, x, tol):
    r = b - A @ x
    p = r.copy()
    while np.sqrt(r @ r) > tol:
        Ap = A @ p
        rr = r @ r
        alpha = rr / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        p = r + ((r @ r) / rr) * p
    return x


def test_cg_that_rebinds_its_argument():
    """Zero trips must return the argument itself: the graph breaks at the first test once
    per call, and the resume function runs the first trip and the rest as one node."""
    A, b = _spd(12, 9), np.random.default_rng(10).random(12)
    check_program(_cg_from, [(A, b, np.zeros(12), 1e-10), (A, b, np.zeros(12), 1e3)], "cpp")
    out = kiln.explain(_cg_from)(A, b, np.zeros(12), 1e-10)
    assert out.graph_break_count == 1
    assert "graph loop node (graph_while" in "\n".join(out.loops)
    x = np.zeros(12)
    assert kiln.compile(_cg_from)(A, b, x, 1e3) is x


def test_cg_computes_r_dot_r_once_a_trip(monkeypatch):
    """The test's ``r @ r`` and the body's last one are one BLAS call per trip: 4 matmul
    calls a trip (A @ p, r @ r, p @ Ap, the new r @ r), 2 before the loop; values and trip
    counts as NumPy's, the zero-trip call too."""
    from kiln.ops import REGISTRY
    calls = []
    impl = REGISTRY["matmul"].impl
    monkeypatch.setattr(REGISTRY["matmul"], "impl", lambda x, y: calls.append(1) or impl(x, y))
    A, b = _spd(40, 7), np.random.default_rng(8).random(40)
    f = kiln.compile(cg)
    for tol, maxiter in ((1e-10, 1000), (1e-10, 5), (1e-10, 1), (1e-10, 2), (1e3, 1000)):
        f(A, b, tol, maxiter)           # (the first call compiles)
        calls.clear()
        x, k = f(A, b, tol, maxiter)
        x0, k0 = cg(A, b, tol, maxiter)
        assert k == k0 and np.allclose(x, x0, rtol=1e-12, atol=0)
        assert len(calls) == 2 + 4 * k, (len(calls), k)
    assert k == 0 and graph_loops.stats["trips"] > 0


def test_generated_while_driver():
    """The driver of trips after the first: carried values from outputs or from other
    positions, the test chain in the bytecode's order, spread or tuple calls."""
    from kiln.ops.graph_loops import WhileTests, while_driver
    # go on while o[2] (an ``and``: leave when false), or at once when o[3] is true
    each = WhileTests(((0, False, False), (1, True, True)), True)
    for spread in (True, False):
        drive = while_driver((("out", 1), ("in", 0)), each, 2, 1, spread)
        body = (lambda c0, c1, a0: (0, c0 + a0, c0 < 5, False)) if spread else \
            (lambda args: (0, args[0] + args[2], args[0] < 5, False))
        assert drive(body, 0, 0, 1) == ((6, 5), 6)
        assert drive(body, 7, 0, 1) == ((8, 7), 1)
    drive = while_driver((("out", 0),), WhileTests(((0, True, False),), True), 1, 0, True)
    assert drive(lambda c0: (c0 + 1, c0 + 1 >= 3), 0) == ((3,), 3)
