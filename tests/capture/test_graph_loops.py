"""Graph loop nodes (kiln/capture/graph_loop.py): time-stepping range loops over whole
arrays, checked against plain NumPy (values, dtypes, mutated arguments, locals)."""
import numpy as np
import pytest

import kiln
from kiln.ops import graph_loops
from kiln.runtime import build


def _jacobi(TSTEPS, A, B):
    for t in range(1, TSTEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def _heat(u, dt, steps):
    for _ in range(steps):
        u = u + dt * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    return u


def _ping_pong(a, b, n):
    u, v = a, b
    for k in range(n):
        v[1:-1] = 0.5 * (u[:-2] + u[2:])
        u, v = v, u
    return u, v


def _fresh_ping_pong(x):
    u = x.copy()
    v = np.zeros_like(x)
    for k in range(7):
        v[1:-1] = 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:]
        u, v = v, u
    return u, k


def _life(grid, steps):
    for _ in range(steps):
        n = (np.roll(grid, 1, 0) + np.roll(grid, -1, 0) + np.roll(grid, 1, 1) + np.roll(grid, -1, 1)
             + np.roll(np.roll(grid, 1, 0), 1, 1) + np.roll(np.roll(grid, 1, 0), -1, 1)
             + np.roll(np.roll(grid, -1, 0), 1, 1) + np.roll(np.roll(grid, -1, 0), -1, 1))
        grid = ((n == 3) | ((grid == 1) & (n == 2))).astype(np.int8)
    return grid


def _euler(y, h):
    for i in range(10):
        y = y + h * (-0.5 * y + np.sin(np.roll(y, 1)))
    else:
        y = y * 2
    return y, i


def _notes(fn, *args):
    return "\n".join(l for l in str(kiln.explain(fn)(*args)).splitlines() if "loop" in l)


def _same(a, b):
    assert type(a) is type(b)
    if isinstance(a, tuple):
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    else:
        assert a == b


def test_jacobi_matches_numpy_and_compiles_once_over_trip_counts():
    rng = np.random.default_rng(0)
    A0, B0 = rng.random((30, 30)), rng.random((30, 30))
    f = kiln.compile(_jacobi)
    for steps in (20, 33, 5, 50, 1, 0):
        A1, B1, A2, B2 = A0.copy(), B0.copy(), A0.copy(), B0.copy()
        assert _jacobi(steps, A1, B1) is f(steps, A2, B2) is None
        _same(A1, A2)
        _same(B1, B2)
    # TSTEPS is a run-time int of the one entry: one compile for every trip count
    assert len(f.cache_entries) == 1
    notes = _notes(_jacobi, 20, A0.copy(), B0.copy())
    assert "graph loop node" in notes and "22 body ops" in notes


def test_graph_loop_runs_body_compiled_once():
    rng = np.random.default_rng(1)
    A0, B0 = rng.random((20, 20)), rng.random((20, 20))
    f = kiln.compile(_jacobi)
    runs, trips = graph_loops.stats["runs"], graph_loops.stats["trips"]
    for steps in (12, 30, 31, 7):
        A2, B2 = A0.copy(), B0.copy()
        f(steps, A2, B2)
    assert graph_loops.stats["runs"] == runs + 4
    assert graph_loops.stats["trips"] == trips + 11 + 29 + 30 + 6
    assert len(f.cache_entries) == 1


def test_explain_shows_trip_count():
    rng = np.random.default_rng(2)
    notes = _notes(_heat, rng.random(64), 0.1, 25)
    assert "graph loop node" in notes


@pytest.mark.parametrize("steps", [0, 1, 6, 25])
def test_heat_rebinding(steps):
    rng = np.random.default_rng(3)
    u0 = rng.random(64)
    f = kiln.compile(_heat)
    u = u0.copy()
    _same(_heat(u0.copy(), 0.1, steps), f(u, 0.1, steps))
    _same(u, u0)   # rebinding never writes the argument


@pytest.mark.parametrize("n", [4, 5, 9])
def test_ping_pong_of_arguments(n):
    rng = np.random.default_rng(4)
    a0, b0 = rng.random(40), rng.random(40)
    a1, b1, a2, b2 = a0.copy(), b0.copy(), a0.copy(), b0.copy()
    u1, v1 = _ping_pong(a1, b1, n)
    u2, v2 = kiln.compile(_ping_pong)(a2, b2, n)
    _same((a1, b1), (a2, b2))
    _same((u1, v1), (u2, v2))
    # identity: the names end bound to the arguments as Python leaves them
    assert (u2 is a2) == (u1 is a1) and (v2 is b2) == (v1 is b1)
    assert "graph loop node" in _notes(_ping_pong, a0.copy(), b0.copy(), n)


def test_fresh_ping_pong_and_loop_variable_after():
    x = np.random.default_rng(5).random(50)
    _same(_fresh_ping_pong(x), kiln.compile(_fresh_ping_pong)(x))
    assert "graph loop node" in _notes(_fresh_ping_pong, x)


def test_life_int8_dtype_kept():
    g = (np.random.default_rng(6).random((16, 16)) < 0.3).astype(np.int8)
    _same(_life(g, 12), kiln.compile(_life)(g, 12))
    assert "graph loop node" in _notes(_life, g, 12)


def test_for_else_and_loop_variable():
    y = np.random.default_rng(7).random(10)
    _same(_euler(y, 0.1), kiln.compile(_euler)(y, 0.1))
    assert "graph loop node" in _notes(_euler, y, 0.1)


def _uses_t(u, n):
    for t in range(n):
        u = u + t
    return u


def _prints(u, n):
    for t in range(n):
        u = u * 0.5
        print("step")
    return u


def _dtype_changes(u):
    for t in range(6):
        u = np.roll(u, 1) * 0.5
    return u


def _random(u):
    for t in range(6):
        u = u + np.random.random(u.shape)
    return u


def _scalar_carried(u):
    s = 0.0
    for t in range(6):
        u = np.roll(u, 1) * 0.5
        s = s + 1.0
    return u, s


def _breaks(u):
    for t in range(8):
        u = u * 0.5
        break
    return u


@pytest.mark.parametrize("fn,arg,why", [
    (_uses_t, (np.ones(5), 6), "loop variable"),
    (_dtype_changes, (np.arange(5),), "changes from"),
    # a carried Python number: the while form's node instead (the range its test)
    (_scalar_carried, (np.ones(5),), "graph_while, range loop carrying numbers"),
    (_breaks, (np.ones(5),), "leaves the loop"),
])
def test_fallbacks_still_correct(fn, arg, why):
    expect = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in arg])
    got = kiln.compile(fn)(*[a.copy() if isinstance(a, np.ndarray) else a for a in arg])
    _same(expect, got)
    assert why in _notes(fn, *arg)


def test_random_draw_falls_back():
    np.random.seed(0)
    expect = _random(np.ones(5))
    np.random.seed(0)
    got = kiln.compile(_random)(np.ones(5))
    _same(expect, got)
    assert "graph loop node" not in _notes(_random, np.ones(5))


def test_print_falls_back(capsys):
    got = kiln.compile(_prints)(np.ones(5), 5)
    _same(_prints(np.ones(5), 5), got)
    assert capsys.readouterr().out.count("step") == 10


def test_aliasing_arguments():
    base = np.random.default_rng(8).random((12, 12))
    b1, b2 = base.copy(), base.copy()
    _jacobi(6, b1, b1.T)
    kiln.compile(_jacobi)(6, b2, b2.T)
    _same(b1, b2)
    c1, c2 = base.copy(), base.copy()
    _jacobi(6, c1, c1)
    kiln.compile(_jacobi)(6, c2, c2)
    _same(c1, c2)


def test_printed_graph_runs():
    rng = np.random.default_rng(9)
    A0, B0 = rng.random((10, 10)), rng.random((10, 10))
    A1, B1, A2, B2 = A0.copy(), B0.copy(), A0.copy(), B0.copy()
    _jacobi(9, A1, B1)
    kiln.compile(_jacobi, backend="eager")(9, A2, B2)
    _same((A1, B1), (A2, B2))


def _decay(w, x):
    for t in range(6):
        x = x * w + 0.1 * np.tanh(x)
    return x.sum()


def test_gradients_keep_the_loop_unrolled():
    """A kiln.Tensor argument: the loop unrolls as before, gradients exact (float64 FD)."""
    rng = np.random.default_rng(10)
    w0, x = rng.random(5), rng.random(5)
    w = kiln.tensor(w0.copy(), requires_grad=True)
    compiled = kiln.compile(_decay, backend="aot_eager")
    out = compiled(w, x)
    out.backward()
    assert all("graph_loop" not in r.ops for r in compiled.records)
    eps = 1e-6
    fd = [(_decay(w0 + eps * e, x) - _decay(w0 - eps * e, x)) / (2 * eps) for e in np.eye(5)]
    np.testing.assert_allclose(w.grad.numpy(), fd, rtol=1e-6, atol=1e-8)


def test_printed_graph_shows_the_for_loop():
    rng = np.random.default_rng(11)
    f = kiln.compile(_jacobi)
    f(12, rng.random((8, 8)), rng.random((8, 8)))
    code = f.cache_entries[0].graph.python_code()
    assert "for graph_loop_i in range(" in code and "def graph_loop_body_" in code


def _transposes(u, v):
    for t in range(5):
        u, v = v.T, u + 1.0
    v[0, 0] = 7.0
    return u, v


def test_view_rebinding_falls_back():
    a, b = np.arange(9.0).reshape(3, 3), np.ones((3, 3))
    _same(_transposes(a.copy(), b.copy()), kiln.compile(_transposes)(a.copy(), b.copy()))
    assert "rebound to a view" in _notes(_transposes, a.copy(), b.copy())


def test_ping_pong_run_time_trips_one_entry_per_parity():
    rng = np.random.default_rng(12)
    a0, b0 = rng.random(30), rng.random(30)
    f = kiln.compile(_ping_pong)
    for n in (4, 5, 6, 7, 0, 11, 1):
        a1, b1, a2, b2 = a0.copy(), b0.copy(), a0.copy(), b0.copy()
        u1, v1 = _ping_pong(a1, b1, n)
        u2, v2 = f(a2, b2, n)
        _same((a1, b1, u1, v1), (a2, b2, u2, v2))
        assert (u2 is a2) == (u1 is a1) and (v2 is b2) == (v1 is b1)
    # n == 0 runs nothing; after that, odd and even trip counts are one entry each
    assert len(f.cache_entries) <= 3


def _step(u, c):
    return u + c * (np.roll(u, 1) - u)


def _helper_steps(u, n, c):
    flag = True
    for t in range(n):
        u = _step(u, c)
        flag = True
    return u, flag


def test_inlined_helper_and_constant_rebinding():
    u0 = np.random.default_rng(13).random(20)
    f = kiln.compile(_helper_steps)
    for n in (6, 9):
        _same(_helper_steps(u0.copy(), n, 0.3), f(u0.copy(), n, 0.3))
    assert "graph loop node" in _notes(_helper_steps, u0.copy(), 6, 0.3)


GLOBAL = np.zeros((4, 4))


def _writes_global(u):
    for t in range(5):
        GLOBAL[1:, 1:] = GLOBAL[1:, 1:] + u[1:, 1:]
    return u


def test_write_into_an_uncarried_array_falls_back():
    global GLOBAL
    u = np.arange(16.0).reshape(4, 4)
    GLOBAL = np.zeros((4, 4))
    kiln.compile(_writes_global)(u)
    got = GLOBAL.copy()
    GLOBAL = np.zeros((4, 4))
    _writes_global(u)
    _same(GLOBAL, got)
    assert "does not carry" in _notes(_writes_global, u)


WEIGHTS = np.linspace(0.5, 1.0, 12).reshape(3, 4)


def _global_operand(u, n):
    for t in range(n):
        u = np.roll(u, 1, axis=1) * WEIGHTS + 0.01
    return u


def test_global_array_read_in_the_body():
    u0 = np.random.default_rng(14).random((3, 4))
    f = kiln.compile(_global_operand)
    for n in (5, 8):
        _same(_global_operand(u0.copy(), n), f(u0.copy(), n))
    assert "graph loop node" in _notes(_global_operand, u0.copy(), 5)


def _recurrence(z, c):
    for t in range(12):
        z = z * z + c
    return z


def test_elementwise_recurrence_stays_unrolled():
    """Unrolled, its iterations fuse into one kernel (tests/lowering/test_complex_kernels.py)."""
    z, c = np.zeros(6), np.linspace(-0.5, 0.2, 6)
    _same(_recurrence(z, c), kiln.compile(_recurrence)(z, c))
    assert "elementwise body" in _notes(_recurrence, z, c)


def _euler_steps(y, dt, n_steps):
    for _ in range(n_steps):
        y = y + dt * (-0.5 * y + np.sin(y))
    return y


def test_a_trip_count_argument_that_changes_is_left_to_run_time():
    """Unrolled for its first value (the iterations fuse); once ``n_steps`` takes another
    value, one graph loop entry serves every count (unrolled, each count built again)."""
    y = np.linspace(0, 1, 8)
    f = kiln.compile(_euler_steps)
    builds = build.stats["builds"]
    for n in (10, 11, 12, 40, 3):
        assert np.array_equal(f(y, 0.01, n), _euler_steps(y, 0.01, n))
    assert build.stats["builds"] - builds <= 2
    assert len(f.cache_entries) == 2
    # (the unrolled entry is tried first: for n_steps=10 again its fused kernel runs)
    first, rest = [{n.op.name for n in e.graph.calls} for e in f.cache_entries]
    assert "graph_loop" not in first and "graph_loop" in rest


def _roll_steps(x, m):
    acc = x.copy()
    for _ in range(m):
        acc = 0.5 * np.roll(acc, 1) + acc - x   # (roll's size: a slice length + 1, guarded == len(x))
    return acc


def _zeros_steps(x, m):
    acc = np.zeros(len(x))
    for _ in range(m):
        acc = acc + np.roll(x, 1) * np.roll(acc, 1) + 1.0
    return acc


def _smooth_until(x, tol):
    u, d = x.copy(), 1.0
    while d > tol:
        un = 0.5 * (u + np.roll(u, 1))
        d = np.abs(un - u).max()
        u = un
    return u


@pytest.mark.parametrize("fn, arg", [(_roll_steps, 4), (_zeros_steps, 5), (_smooth_until, 1e-2)])
def test_carried_arrays_of_run_time_size_compile_once(fn, arg):
    """Under dynamic shapes a graph loop carries arrays sized by a dynamic dim (it unrolled
    them, a build per size and trip count): one entry, its body compiled once."""
    f = kiln.compile(fn, dynamic=True)
    builds = build.stats["builds"]
    for n in (9, 12, 17):
        x = np.sin(np.linspace(0, 3, n))
        a = arg + n % 3 if type(arg) is int else arg
        assert np.array_equal(f(x, a), fn(x, a))
    assert build.stats["builds"] - builds <= 2
    assert len(f.cache_entries) == 1
    assert {"graph_loop", "graph_while"} & {n.op.name for n in f.cache_entries[0].graph.calls}


def _halve_steps(x, n):
    acc = x.copy()
    for _ in range(n):
        acc = acc * 0.5 + x
    return acc


def test_a_failed_element_loop_attempt_gives_back_the_dims_it_pinned():
    """The element loop node's attempt pins the dynamic dims of the arrays it reads (its
    result sizes are static); when it fails (``acc`` rebound), the unrolled loop and a later
    count's graph loop kept ``x.shape[0] == 5``: an entry per size (fuzz7)."""
    f = kiln.compile(_halve_steps, backend="eager", dynamic=True)
    for n, m in ((3, 5), (1, 5), (2, 6), (7, 7), (3, 8)):
        x = np.linspace(-1, 1, m)
        assert np.array_equal(f(x, n), _halve_steps(x, n))
    assert len(f.cache_entries) == 2
    assert not [g.text for e in f.cache_entries for g in e.guards if g.kind == "size" and "==" in g.text]


class _GradientDescent:
    def __init__(self, n_iterations):
        self.n_iterations = n_iterations
        self.reg = lambda w: 0
        self.reg.grad = lambda w: 0

    def fit(self, X, y):
        self.errors = []
        self.w = np.linspace(-0.1, 0.1, X.shape[1])
        for _ in range(self.n_iterations):
            y_pred = X.dot(self.w)
            self.errors.append(np.mean(0.5 * (y - y_pred) ** 2 + self.reg(self.w)))
            self.w -= 0.001 * (-(y - y_pred).dot(X) + self.reg.grad(self.w))
        return X.dot(self.w)


def test_a_loop_that_is_not_a_graph_loop_leaves_object_attributes_as_they_were():
    # ML-From-Scratch's Regression.fit: the graph-loop attempt fails (the body appends to
    # a list), and the unrolled loop that follows read self.w as the failed attempt left
    # it, a node the rollback had removed: a graph that could not run (KeyError in aot,
    # then every call ran as Python after a failed compile).
    from kiln.ir.passes import lint

    def fit(model, X, y):
        return model.fit(X, y), model.errors, model.w

    X = np.linspace(0, 1, 60).reshape(20, 3)
    y = X @ np.array([1.0, -2.0, 0.5])
    compiled = kiln.compile(fit)
    for n in (5, 5):
        want, got = fit(_GradientDescent(n), X, y), compiled(_GradientDescent(n), X, y)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
        np.testing.assert_allclose(got[2], want[2], rtol=1e-12)
    graphs = [r.graph for r in compiled.records if r.graph is not None]
    assert graphs
    for g in graphs:
        lint(g)


def _relax_rows(p, b, inner):
    for q in range(inner):                  # an inner time loop: a graph loop of its own
        pn = p.copy()
        p[1:-1, 1:-1] = 0.25 * (pn[1:-1, 2:] + pn[1:-1, :-2] + pn[2:, 1:-1] + pn[:-2, 1:-1]) - b[1:-1, 1:-1]
        p[:, -1] = p[:, -2]
    return p


def _cavity(u, p, b, steps, inner):
    for n in range(steps):                  # an outer loop whose body holds the inner one
        un = u.copy()
        b[1:-1, 1:-1] = 0.1 * (un[1:-1, 2:] - un[1:-1, :-2]) ** 2
        p = _relax_rows(p, b, inner)
        u[1:-1, 1:-1] = un[1:-1, 1:-1] - 0.05 * (p[1:-1, 2:] - p[1:-1, :-2])
        u[-1, :] = 1.0
    return u, p


def test_a_graph_loop_inside_a_graph_loop_body():
    """The lid-driven cavity of "12 steps to Navier-Stokes" (a pressure solve of ``nit``
    sweeps inside each time step): the inner loop is a graph loop node in the outer loop's
    body, which is one node too. Before, the outer loop refused a loop node in its body,
    unrolled past the op budget and ran the whole function as Python (1.0x NumPy)."""
    rng = np.random.default_rng(3)
    u0, p0, b0 = rng.random((24, 24)), rng.random((24, 24)), np.zeros((24, 24))
    f = kiln.compile(_cavity)
    for steps, inner in ((6, 9), (4, 13), (0, 3), (3, 0)):
        mine = u0.copy(), p0.copy(), b0.copy()
        theirs = u0.copy(), p0.copy(), b0.copy()
        got = f(*mine, steps, inner)
        want = _cavity(*theirs, steps, inner)
        _same(got, want)
        for a, w in zip(mine, theirs):
            _same(a, w)
        assert got[0] is mine[0] and got[1] is mine[1]
    notes = _notes(_cavity, u0.copy(), p0.copy(), b0.copy(), 6, 9)
    assert notes.count("graph loop node (") == 2 and "unrolled" not in notes, notes


def _burgers(u, nt, c):
    nx = u.shape[0]
    for n in range(nt):
        un = u.copy()
        for i in range(1, nx - 1):          # element code inside the time step
            u[i] = un[i] - un[i] * c * (un[i] - un[i - 1]) + 0.1 * (un[i + 1] - 2 * un[i] + un[i - 1])
        u[0] = un[0] - un[0] * c * (un[0] - un[-2])
        u[-1] = u[0]
    return u


def _sweeps_with_sum(u, nt):
    for n in range(nt):
        s = 0.0
        for i in range(u.shape[0]):          # a scalar carried by the element loop
            s += u[i] * u[i]
            if s > 50.0:
                break
        u = u * 0.9 + 0.01 / (1.0 + s)
    return u


def _gauss_seidel(p, sweeps):
    ny, nx = p.shape
    for it in range(sweeps):
        for j in range(1, ny - 1):
            for i in range(1, nx - 1):
                p[j, i] = 0.25 * (p[j, i - 1] + p[j, i + 1] + p[j - 1, i] + p[j + 1, i])
        p[:, -1] = p[:, -2]
    return p


@pytest.mark.parametrize("fn, make, expect", [
    (_burgers, lambda r, n: (1.0 + r.random(40), n, 0.05), "graph loop node ("),
    # the element loop's break flag and scalar are numbers in the body graph
    (_sweeps_with_sum, lambda r, n: (r.random(30) * 3, n), "graph loop node ("),
    # all element code: one element loop nest, outer loop included
    (_gauss_seidel, lambda r, n: (r.random((12, 14)), n), "loop node (loop"),
], ids=["burgers", "sum_with_break", "gauss_seidel"])
def test_element_loops_inside_a_graph_loop_body(fn, make, expect):
    """An element loop node (kiln/capture/loop_node.py) inside a time-stepping loop's body:
    the time loop is one graph loop node around it (before: it unrolled, and past the op
    budget the function ran as Python: 1.0x NumPy on the 1-D Burgers step of "12 steps")."""
    rng = np.random.default_rng(5)
    f = kiln.compile(fn)
    for n in (7, 3, 0, 11):
        args = make(rng, n)
        mine = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        theirs = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        _same(f(*mine), fn(*theirs))
        for a, w in zip(mine, theirs):
            if isinstance(a, np.ndarray):
                _same(a, w)
    notes = _notes(fn, *make(rng, 7))
    assert expect in notes and "loop node (loop" in notes, notes


def last_step_kept(Z, steps):
    """An array first bound in the loop and read after it (game of life's neighbour count
    N, stop 57: "'N' is assigned in the loop and used after it, but not bound before it"
    unrolled the loop): the last trip's; no trip leaves it unbound (UnboundLocalError)."""
    for _ in range(steps):
        N = np.roll(Z, 1) + np.roll(Z, -1)
        Z = 0.5 * Z + 0.25 * N
    return Z, N


@pytest.mark.parametrize("backend", ["cpp", "eager"])
def test_array_first_bound_in_the_loop(backend):
    from tests.test_programs import check_program
    Z = np.cos(np.linspace(0, 5, 16))
    check_program(last_step_kept, [(Z, 30), (Z, 1), (Z, 0), (Z, 12)], backend)
    out = kiln.explain(last_step_kept)(Z, 30)
    assert out.graph_break_count == 0 and any("graph loop node (graph_loop" in n for n in out.loops)
