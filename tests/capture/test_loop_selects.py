"""A data-dependent ``if`` in the body of a whole-array loop whose sides are cheap and pure
is a select in the loop's body graph (kiln/capture/graph_selects.py, asked by the
translator's ``jump_if`` while a graph loop's trip is traced): the loop is one graph loop
node instead of an unrolled copy per trip (``if t % 10 == 0: u = u - u.mean()`` on the
counter: 660 ops for 50 steps) or a graph break per trip (``if s > best: best_t, best = t,
s``). Checked against the function run without kiln (values, types, warnings, mutated
inputs) on every backend, with trip counts that take the side no time, once, and often."""
import warnings

import numpy as np
import pytest

import kiln

BACKENDS = ["cpp", "eager", "aot_eager"]


def _outcome(fn, *args):
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", fn(*args))
        except Exception as e:   # noqa: BLE001 - the exception itself is compared
            result = ("raise", type(e), str(e))
    return result, sorted(str(w.message) for w in caught), args


def _same(got, want):
    (g, gw, ga), (w, ww, wa) = got, want
    assert gw == ww and g[0] == w[0], (got, want)
    if w[0] == "raise":
        assert g == w
        return
    flat = (lambda v: list(v) if isinstance(v, (tuple, list)) else [v])
    for a, b in zip(flat(g[1]), flat(w[1])):
        assert type(a) is type(b), (a, b)
        assert np.asarray(a).dtype == np.asarray(b).dtype
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes(), (a, b)
    for a, b in zip(ga, wa):                      # mutated inputs
        if isinstance(b, np.ndarray):
            assert a.tobytes() == b.tobytes()


def _diffuse(u):
    return u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))


def recentred_every_ten(u, steps):
    for t in range(steps):
        u = _diffuse(u)
        if t % 10 == 0:                  # on the counter: the last statement of the body
            u = u - u.mean()
    return u


def if_else_on_the_counter(u, steps):
    for t in range(steps):
        u = _diffuse(u)
        if t % 2 == 0:
            u = u * 1.5
        else:
            u = u - 0.25
    return u


def running_peak(y, dt, steps):
    t = 0.0
    peak_t, peak = 0.0, y.sum()
    for _ in range(steps):
        y = _diffuse(y) * 1.02 - 0.01
        t += dt
        if y.sum() > peak:               # on the data: the peak and its time
            peak_t, peak = t, y.sum()
    return y, peak_t, peak


def normalised_on_the_counter(u, steps):
    for t in range(steps):
        u = _diffuse(u) - 0.5
        if t % 3 == 0:
            u = u / u.sum()              # 0 / 0 warns only on the trips that take it
    return u


def kept_in_a_list(u, steps):
    hist = []
    for t in range(steps):
        u = _diffuse(u)
        hist.append(u)
        if t % 4 == 0:                   # the untaken side keeps the listed array itself
            u = u * 0.5
    return hist[-1] is u, u


CASES = [
    (recentred_every_ten, [(np.linspace(0, 1, 40), n) for n in (1, 9, 10, 11, 37)]),
    (if_else_on_the_counter, [(np.linspace(0, 1, 16), n) for n in (1, 4, 7)]),
    (running_peak, [(np.linspace(0, 1, 32), 0.1, n) for n in (1, 5, 30)]
     + [(-np.linspace(0, 1, 32), 0.1, 30)]),
    (normalised_on_the_counter, [(np.zeros(8) + 0.5, n) for n in (1, 4, 9)]
     + [(np.linspace(0, 1, 8), 6)]),
    (kept_in_a_list, [(np.linspace(0, 1, 8), n) for n in (1, 4, 6)]),
]


@pytest.mark.parametrize("fn,calls", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("backend", BACKENDS)
def test_same_as_numpy(fn, calls, backend):
    compiled = kiln.compile(fn, backend=backend)
    for args in calls + calls[::-1]:
        _same(_outcome(compiled, *args), _outcome(fn, *args))


@pytest.mark.parametrize("fn,args", [
    (recentred_every_ten, (np.linspace(0, 1, 40), 50)),
    (if_else_on_the_counter, (np.linspace(0, 1, 16), 50)),
    (running_peak, (np.linspace(0, 1, 32), 0.1, 50)),
    (normalised_on_the_counter, (np.linspace(0, 1, 8), 50)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_one_loop_node(fn, args):
    out = kiln.explain(fn)(*args)
    assert out.graph_break_count == 0
    assert out.graph_count == 1
    assert any("graph loop node (graph_while" in note for note in out.loops), out.loops
    # one node, not a copy of the body per trip (660 ops for the first unrolled)
    assert sum(len(ops) for ops in out.ops_per_graph) < 10, out.ops_per_graph


def test_one_compile_for_every_count():
    graphs = []
    compiled = kiln.compile(recentred_every_ten, backend=lambda g, ex: graphs.append(g) or g)
    # (a first count whose unrolled trips stay short would unroll once, as any short body
    # reading its variable does: kiln/capture/unroll_policy.py)
    for n in (50, 63, 20, 11):
        _same(_outcome(compiled, np.linspace(0, 1, 40), n),
              _outcome(recentred_every_ten, np.linspace(0, 1, 40), n))
    assert len(graphs) == 1


def test_a_listed_array_is_not_replaced():
    # hist[-1] is u on the trips that do not take the side: no select stands for u there
    compiled = kiln.compile(kept_in_a_list)
    for n in (1, 2, 5):
        assert compiled(np.linspace(0, 1, 8), n)[0] is kept_in_a_list(np.linspace(0, 1, 8), n)[0]


# -- an array made before the branch stands on the untaken side only where nothing else
# -- holds it (without _inside these two gave the old array's sum / elements: wrong)

def bound_method_kept(x):
    y = x * 2
    m = y.sum                            # holds y: y[0] = 50 must reach it
    if y.max() > 100:
        y = y - 1
    y[0] = 50.0
    return m(), y


def iterated_while_rebound(x):
    y = x * 2
    out = []
    for e in y:                          # the iterator walks y, which y[1] = 7 writes
        if y.max() > 100:
            y = y - 1
        y[1] = 7.0
        out.append(e)
    return np.array(out), y


@pytest.mark.parametrize("fn", [bound_method_kept, iterated_while_rebound], ids=lambda f: f.__name__)
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_array_another_value_holds_is_not_replaced(fn, backend):
    compiled = kiln.compile(fn, backend=backend)
    for x in (np.arange(4.0), np.arange(4.0) * 100, np.arange(4.0)):
        _same(_outcome(compiled, x), _outcome(fn, x))
