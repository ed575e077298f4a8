"""A data-dependent ``if`` outside loop bodies whose sides are cheap and pure is a select in
the graph (kiln/capture/graph_selects.py): no graph break. Each case is checked against the
function run without kiln (values, types, warnings, exceptions, mutated inputs) on every
backend, with the data taking each side; the cases that must not become a select (a side
with an effect, one that raises, arrays Python hands over as the same object) still break
and still agree."""
import warnings

import numpy as np
import pytest

import kiln

BACKENDS = ["cpp", "eager", "aot_eager"]


def _outcome(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", fn(*args))
        except Exception as e:   # noqa: BLE001 - the exception itself is compared
            result = ("raise", type(e), str(e))
    return result, [str(w.message) for w in caught]


def _flat(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _same(got, want):
    (g, gw), (w, ww) = got, want
    assert gw == ww and g[0] == w[0], (got, want)
    if w[0] == "raise":
        assert g == w
        return
    for a, b in zip(_flat(g[1]), _flat(w[1])):
        assert type(a) is type(b), (a, b)
        assert np.asarray(a).dtype == np.asarray(b).dtype
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes(), (a, b)


def dbfs(x):
    rms = np.sqrt((x ** 2).mean())
    level = 20 * np.log10(rms) if rms > 0 else -np.inf    # log10(0) would warn
    return level, x * 2


def newton_step(x, fx):
    d = x.sum()
    step = fx / d if d != 0 else np.inf                   # fx / 0 would warn
    return x - 1.0, step


def mad_floor(x):
    med = np.median(x)
    mad = np.median(np.abs(x - med))
    if mad == 0:
        mad = 1.0
    return (x - med) / mad, mad


def sign_of_sum(x):
    s = x.sum()
    return (1 if s > 0 else -1), s * 2


def clamp_max(x):
    m = x.max()
    top = m if m < 10.0 else np.float64(10.0)
    return top, x + top


def first_big(x, t):
    i = np.argmax(x)
    return i if x[i] > t else -1


def zscore(x):
    mu, sd = x.mean(), x.std()
    z = (x - mu) / sd if sd > 0 else x - mu              # an array each side makes
    return z


def two_names_one_array(x):
    y = x * 2 if x.sum() > 0 else x * 3
    w = y                                                 # one object under two names
    w[0] = 100.0
    return y, w


def pair(x):
    lo, hi = (x.min(), x.max()) if x.sum() > 0 else (x.max(), x.min())
    return lo, hi


def std_or_one(x):
    return x.std() or 1.0                                 # 3.11: JUMP_IF_TRUE_OR_POP


def early_return(x):
    if x.std() == 0:
        return x.mean()
    return x.sum() / x.size


def nested_if(x):
    # 3.12+ copy ``return s`` into the inner if's first side: the inner select returns, past
    # the outer one's join (it broke at the outer test on 3.12/3.13, not on 3.11)
    s, m = x.sum(), x.max()
    if s > 0:
        if m > 2.0:
            s = s + m
        else:
            s = s - m
    return s


def nested_if_else(x):
    # 3.11: the inner if's first side jumps to the outer join, past the outer else (it broke
    # at the outer test on 3.11, not on 3.12/3.13)
    s, m = x.sum(), x.max()
    if s > 0:
        if m > 2.0:
            s = s + m
        else:
            s = s - m
    else:
        s = -s
    return s


def return_in_else_side(x):
    # the else side returns inside an inner select: both sides run on to their return (on
    # 3.11 the outer select merged the else side's locals from before the inner if and went
    # on at the join: -4.0 where NumPy gives -3.5 for [-2, -1, -0.5])
    s, m = x.sum(), x.max()
    if s > 0:
        s = s + 1
    else:
        if m > -0.75:
            return s + m
        s = s - m
    return s


NESTED_CALLS = [(np.arange(4.0),), (np.array([0.5, 1.0, 1.0]),), (-np.ones(3),)]

CASES = [
    (dbfs, [(np.zeros(4),), (np.arange(4.0),)]),
    (newton_step, [(np.zeros(3), 2.0), (np.ones(3), 2.0)]),
    (mad_floor, [(np.ones(5),), (np.arange(5.0),)]),
    (sign_of_sum, [(np.ones(3),), (-np.ones(3),)]),
    (clamp_max, [(np.arange(4.0),), (np.arange(40.0),)]),
    (first_big, [(np.arange(6.0), 2.0), (np.arange(6.0), 9.0)]),
    (zscore, [(np.ones(4),), (np.arange(4.0),)]),
    (two_names_one_array, [(np.ones(3),), (-np.ones(3),)]),
    (pair, [(np.arange(3.0),), (-np.arange(3.0),)]),
    (std_or_one, [(np.ones(3),), (np.arange(3.0),)]),
    (early_return, [(np.ones(3),), (np.arange(3.0),)]),
    (nested_if, NESTED_CALLS),
    (nested_if_else, NESTED_CALLS),
    (return_in_else_side, [(np.ones(3),), (np.array([-2.0, -1.0, -0.5]),), (-np.ones(3),)]),
]


@pytest.mark.parametrize("fn,calls", CASES, ids=[c[0].__name__ for c in CASES])
def test_no_break(fn, calls):
    for args in calls:
        assert kiln.explain(fn)(*args).graph_break_count == 0, fn.__name__


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,calls", CASES, ids=[c[0].__name__ for c in CASES])
def test_same_as_numpy(fn, calls, backend):
    compiled = kiln.compile(fn, backend=backend)
    for args in calls + calls[::-1]:
        _same(_outcome(compiled, *args), _outcome(fn, *args))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [dbfs, zscore])
def test_untaken_side_neither_warns_nor_raises_under_errstate(fn, backend):
    compiled = kiln.compile(fn, backend=backend)
    with np.errstate(all="raise"):
        _same(_outcome(compiled, np.zeros(4)), _outcome(fn, np.zeros(4)))
        _same(_outcome(compiled, np.arange(4.0)), _outcome(fn, np.arange(4.0)))


def test_one_array_under_two_names_stays_one():
    y, w = kiln.compile(two_names_one_array)(np.ones(3))
    assert y is w


def test_large_sides_are_not_computed_for_nothing():
    # an untaken side over more than CHEAP elements would cost a pass the break does not
    assert kiln.explain(zscore)(np.arange(5000.0)).graph_break_count == 1


def break_in_while(u, tol):
    err = tol + 1.0
    while err > tol:
        u = 0.5 * (u + np.roll(u, 1))
        err = np.abs(u - np.roll(u, 1)).max()
        if u[0] > 0.9:           # not an if/else whose else side is the rest of the loop
            break
    return u


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_in_a_while_loop(backend):
    compiled = kiln.compile(break_in_while, backend=backend)
    for u in (np.linspace(0, 1, 20), np.linspace(0, 2, 20), np.linspace(0, 0.1, 20)):
        _same(_outcome(compiled, u, 1e-3), _outcome(break_in_while, u, 1e-3))


# -- what stays a break --------------------------------------------------------------------

def side_appends(x, log):
    s = x.sum()
    if s > 0:
        log.append(1)            # an effect Python must see only when taken
    return s


def side_divides_run_time(x, d):
    s = x.sum()
    r = 1.0 / d if s > 0 else 0.0    # 1.0 / 0.0 raises where Python takes the side
    return r, s


def side_hands_over_the_array(x):
    s = x.sum()
    y = x if s > 0 else x * 2       # the same object as x where taken
    y[0] = 7.0
    return y


@pytest.mark.parametrize("backend", BACKENDS)
def test_side_effect_still_breaks(backend):
    assert kiln.explain(side_appends)(np.ones(3), []).graph_break_count == 1
    compiled = kiln.compile(side_appends, backend=backend)
    for x in (np.ones(3), -np.ones(3)):
        got_log, want_log = [], []
        _same(_outcome(compiled, x, got_log), _outcome(side_appends, x, want_log))
        assert got_log == want_log


@pytest.mark.parametrize("backend", BACKENDS)
def test_raising_run_time_number_still_breaks(backend):
    assert kiln.explain(side_divides_run_time)(-np.ones(3), 0.0).graph_break_count == 1
    compiled = kiln.compile(side_divides_run_time, backend=backend)
    for x, d in ((-np.ones(3), 0.0), (np.ones(3), 0.0), (np.ones(3), 4.0)):
        _same(_outcome(compiled, x, d), _outcome(side_divides_run_time, x, d))


@pytest.mark.parametrize("backend", BACKENDS)
def test_array_sides_still_break(backend):
    assert kiln.explain(side_hands_over_the_array)(np.ones(3)).graph_break_count == 1
    compiled = kiln.compile(side_hands_over_the_array, backend=backend)
    for x in (np.ones(3), -np.ones(3)):
        a, b = x.copy(), x.copy()
        _same(_outcome(compiled, a), _outcome(side_hands_over_the_array, b))
        assert a.tobytes() == b.tobytes()


def running_max_index(a):
    best, idx = a[0], 0
    for i in range(1, 6):                 # unrolled: idx is a constant, then a number read
        if a[i] > best:                   # from the select, then a select of that again
            best, idx = a[i], i
    return best, idx


@pytest.mark.parametrize("backend", BACKENDS)
def test_numbers_read_from_a_select(backend):
    assert kiln.explain(running_max_index)(np.arange(6.0)).graph_break_count == 0
    compiled = kiln.compile(running_max_index, backend=backend)
    for a in (np.arange(6.0), -np.arange(6.0), np.array([1.0, 5, 2, 7, 7, 0])):
        _same(_outcome(compiled, a), _outcome(running_max_index, a))


def else_side_returns(x):
    s = x.sum()
    r = np.float64(0.0)
    if s > 0:
        r = s * 2
    else:
        return s                  # 3.11: the if side jumps over this to the join
    return r + 1


def elif_side_returns(x):
    s = x.sum()
    r = 0.0
    if s > 10:
        r = 1.0
    elif s > 0:
        return 7.0
    else:
        r = 3.0
    return r


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [else_side_returns, elif_side_returns])
def test_an_else_side_that_returns_returns(fn, backend):
    # the else side of an if/else whose if side reaches the join returned, and the select
    # went on past the join as if it had not: else_side_returns(-arange(4.0)) gave 1.0
    # (r + 1 of the r before the if) where Python returns s, -6.0
    compiled = kiln.compile(fn, backend=backend)
    for x in (np.arange(4.0), -np.arange(4.0), np.arange(10.0), np.ones(2)):
        _same(_outcome(compiled, x), _outcome(fn, x))
