"""Graph loops whose body appends to a list made in the function, stacked after the loop
(kiln/capture/loop_lists.py): values against NumPy, and the lists that must stay lists."""
import numpy as np

import kiln

M = np.eye(3) * 0.9 + 0.01


def _history(y, h, n):
    ys = [y]
    norms = []
    for i in range(n):
        k1 = y @ M
        k2 = (y + h / 2 * k1) @ M
        y = y + h / 2 * (k1 + k2)
        ys.append(y)
        norms.append(np.linalg.norm(y))
    return np.stack(ys), np.asarray(norms)


def _returned(y, n):
    ys = [y]
    for i in range(n):
        y = y @ M + 1.0
        ys.append(y)
    return ys


def _same_object(y, n):
    y = y.copy()
    ys = []
    for i in range(n):
        y += y @ M
        ys.append(y)
    return np.array(ys)


def _aliased(y, n):
    ys = []
    zs = ys
    for i in range(n):
        y = y @ M
        ys.append(y)
    return np.array(zs)


def _written_after(y, n):
    ys = []
    for i in range(n):
        y = y @ M + 1.0
        ys.append(y)
    y += 1.0
    return np.array(ys)


def _notes(fn, *args):
    return "\n".join(l for l in str(kiln.explain(fn)(*args)).splitlines() if "loop" in l)


def _same(a, b):
    """Same types all the way down (a Python float is not an np.float64), values to rounding."""
    assert type(a) is type(b)
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    else:
        assert a == b or abs(a - b) <= 1e-12 * abs(a)


def test_appended_arrays_and_numbers_become_stacked_rows():
    y0 = np.linspace(0.0, 1.0, 300).reshape(100, 3)
    f = kiln.compile(_history)
    for n in (6, 9, 1):
        _same(_history(y0, 0.1, n), f(y0, 0.1, n))
    # the buffers' size is the run-time trip count: one compile serves every count above 0
    # (it was guarded by value: one compile per n_steps)
    assert len(f.cache_entries) == 1
    _same(_history(y0, 0.1, 0), f(y0, 0.1, 0))   # np.asarray([]): float64 (0,)
    e = kiln.explain(_history)(y0, 0.1, 6)
    assert e.graph_count == 1 and e.graph_break_count == 0
    notes = _notes(_history, y0, 0.1, 6)
    assert "graph loop node" in notes and "stacked: norms" in notes and "stacked: ys" in notes
    assert "trip count run-time" in notes and any("> 0" in g for g in e.guards)


def test_lists_that_escape_stay_lists_of_numpys_arrays():
    y0 = np.linspace(0.0, 1.0, 6).reshape(2, 3)
    for fn in (_returned, _same_object, _aliased):
        g = kiln.compile(fn, backend="eager")
        _same(fn(y0, 5), g(y0, 5))
        assert "stacked" not in _notes(fn, y0, 5)
    got = kiln.compile(_returned, backend="eager")(y0, 5)
    assert type(got) is list and got[0] is y0
    assert "uses otherwise than in one np.array" in _notes(_returned, y0, 5)
    assert "the same array each trip" in _notes(_same_object, y0, 5)


def test_last_row_written_after_the_loop_rebuilds_the_list():
    y0 = np.linspace(0.0, 1.0, 6).reshape(2, 3)
    g = kiln.compile(_written_after, backend="eager")
    _same(_written_after(y0, 5), g(y0, 5))
    e = kiln.explain(g)(y0, 5)
    assert "stacked: ys" in str(e) and e.graph_break_count == 1


def _training(X, y, w, n):
    losses, items, norms, counts = [], [], [], []
    for i in range(n):
        r = X @ w - y
        w = w - 0.1 * (X.T @ r) / 20
        loss = float(np.mean(r ** 2))
        losses.append(loss)
        items.append((r @ r).item() * 0.5)
        norms.append(np.linalg.norm(r))
        counts.append(int(np.sum(w > 0)))
    return w, losses, np.array(items), norms, counts, losses[-1], len(norms)


def test_python_numbers_appended_in_a_graph_loop():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((20, 3)), rng.standard_normal(20)
    f = kiln.compile(_training)
    for n in (6, 9):      # another trip count: the same compile (the rows' count is run-time)
        _same(_training(X, y, np.zeros(3), n), f(X, y, np.zeros(3), n))
    assert len(f.cache_entries) == 1
    e = kiln.explain(_training)(X, y, np.zeros(3), 6)
    assert e.graph_count == 1 and e.graph_break_count == 0
    notes = _notes(_training, X, y, np.zeros(3), 6)
    assert all(f"stacked: {n}" in notes for n in ("losses", "items", "norms", "counts"))


def _tolerance(w, n):
    losses = []
    for i in range(n):
        w = w @ M
        loss = float(np.sum(w))
        losses.append(loss)
        if loss < 2.0:
            break
    return losses


def _one_list_two_names(w, n):
    losses = []
    for i in range(n):
        w = w @ M
        losses.append(float(np.sum(w)))
    other = losses
    other.append(-1.0)
    return losses, other, min(losses)


def _float32(w, n):
    losses = []
    for i in range(n):
        w = w @ M.astype(np.float32)
        losses.append(float(np.sum(w)))
    return np.array(losses), losses


def test_python_number_lists_stack_or_fall_back_as_python():
    w0 = np.ones(3)
    for fn, args in ((_tolerance, (w0, 8)), (_one_list_two_names, (w0, 5)),
                     (_float32, (w0.astype(np.float32), 5))):
        g = kiln.compile(fn, backend="eager")
        _same(fn(*args), g(*args))
    got = kiln.compile(_one_list_two_names, backend="eager")(w0, 5)
    assert got[0] is got[1] and got[0][-1] == -1.0
    # a break on the number: the range loop with a break carries the list (it unrolled)
    assert "graph_while, range loop with a break" in _notes(_tolerance, w0, 8)
    assert "stacked: losses" in _notes(_tolerance, w0, 8)
    assert "stacked: losses" in _notes(_one_list_two_names, w0, 5)
    assert "stacked: losses" in _notes(_float32, w0.astype(np.float32), 5)


def _descent(X, y, w, tol, n):
    losses, ws = [], []
    for i in range(n):
        r = X @ w - y
        loss = float(r @ r)
        losses.append(loss)
        w = w - 0.02 * (X.T @ r)
        ws.append(w)
        if loss < tol:
            break
    # (two lists of one loop: their rows' counts are one size)
    return w, losses, np.array(ws) - np.array(losses)[:, None], len(losses), losses[-1]


def _fixed_point(x, tol):
    errs = []
    err = 1.0
    while err > tol:
        xn = np.cos(x)
        err = float(np.max(np.abs(xn - x)))
        errs.append(err)
        x = xn
    return x, np.array(errs), len(errs)


def test_loops_that_stop_on_their_data_stack_their_lists():
    """``if loss < tol: break`` (and a while loop's test) with a history appended: one
    graph_while node whose rows grow with the trips the data lets run (it unrolled, a
    compile per trip count, and broke at float())."""
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((20, 3)), rng.standard_normal(20)
    best = float(np.sum((X @ np.linalg.lstsq(X, y, rcond=None)[0] - y) ** 2))
    for backend in ("cpp", "eager"):
        f = kiln.compile(_descent, backend=backend)
        # stops early, at max_iter, on its first trip; 40 trips grow the rows past 16
        for tol, n in ((best + 1e-3, 60), (best + 1e-3, 5), (1e9, 8), (0.0, 40)):
            _same(_descent(X, y, np.zeros(3), tol, n), f(X, y, np.zeros(3), tol, n))
        assert len(f.cache_entries) == 1
    e = kiln.explain(_descent)(X, y, np.zeros(3), best + 1e-3, 60)
    assert e.graph_count == 1 and e.graph_break_count == 0
    notes = _notes(_descent, X, y, np.zeros(3), best + 1e-3, 60)
    assert "range loop with a break" in notes and "stacked: ws, stacked: losses" in notes
    # a NumPy float tolerance (its comparison gives an np.bool_): the same node
    graphs = []
    h = kiln.compile(_descent, backend=lambda graph, example_inputs: graphs.append(graph) or graph)
    _same(_descent(X, y, np.zeros(3), np.float64(best + 1e-3), 60),
          h(X, y, np.zeros(3), np.float64(best + 1e-3), 60))
    assert len(graphs) == 1 and "graph_while" in [n.op.name for n in graphs[0].calls]
    g = kiln.compile(_fixed_point)
    x0 = np.linspace(0.0, 1.0, 5)
    for tol in (1e-2, 1e-12):
        _same(_fixed_point(x0, tol), g(x0, tol))
    assert len(g.cache_entries) == 1
    notes = _notes(_fixed_point, x0, 1e-2)
    assert "while loop" in notes and "stacked: errs" in notes


def _relax_until(u0, tol):
    u = u0.copy()
    errs = []
    err = 1.0
    while err > tol:
        prev = u.copy()
        u[1:-1] = 0.5 * (u[:-2] + u[2:])     # the carried array written in place
        err = float(np.abs(u - prev).max())
        errs.append(err)
    return u, np.array(errs)


def _relax_steps(u0, steps):
    u = u0.copy()
    hist = [np.sum(u ** 2)]
    for _ in range(steps):
        u[1:-1] = 0.5 * (u[:-2] + u[2:])
        hist.append(np.sum(u ** 2))
    return u, np.array(hist)


def test_rows_stacked_beside_a_carried_array_written_in_place():
    # A compiled body returns the carried arrays it writes after its own outputs: the rows
    # were read from the trip's last outputs, so a row got the written array ("setting an
    # array element with a sequence"; real4's crank_nicolson_heat)
    rng = np.random.default_rng(5)
    for fn, args in ((_relax_until, (rng.random(10), 1e-3)), (_relax_steps, (rng.random(10), 5)),
                     (_relax_steps, (rng.random(10), 9))):
        c = kiln.compile(fn)
        for e, r in zip(fn(*args), c(*args)):
            np.testing.assert_array_equal(r, e)
            assert r.dtype == e.dtype


def _running_loss(X, y, w, n):
    """``total += loss`` and ``loss + total`` appended: the float() of the float64 mean is
    the same double, and the sums are Python's (the wrapper's scalar code): a graph_while
    node carrying ``total`` (it unrolled, a compile per trip count)."""
    total, seen = 0.0, []
    for i in range(n):
        r = X @ w - y
        w = w - 0.1 * (X.T @ r) / 20
        loss = float(np.mean(r ** 2))
        total += loss
        seen.append(loss + total)
    return w, total, np.array(seen)


def test_a_python_float_from_the_data_carried_and_appended():
    from kiln.runtime import build
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((20, 3)), rng.standard_normal(20)
    f = kiln.compile(_running_loss)
    _same(_running_loss(X, y, np.zeros(3), 6), f(X, y, np.zeros(3), 6))
    builds = build.stats["builds"]
    for n in (9, 1):
        got, want = f(X, y, np.zeros(3), n), _running_loss(X, y, np.zeros(3), n)
        _same(want, got)
        assert type(got[1]) is float
    assert build.stats["builds"] == builds and len(f.cache_entries) == 1
    notes = _notes(_running_loss, X, y, np.zeros(3), 6)
    assert "range loop carrying numbers" in notes and "total, stacked: seen" in notes
