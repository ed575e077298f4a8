"""Everyday constructs that broke the graph (stop 50): ufunc calls with ``dtype=`` or
``casting=``, ``vars(obj)`` and ``obj.__dict__``, and logging calls (a disabled one is
nothing; any other breaks and says why). Each is checked against the plain function (values, dtypes, exceptions,
arguments after the call) and by its break count, on the counting backend (no kernel
build) unless said otherwise."""
from __future__ import annotations

import collections
import functools
import itertools
import logging

import numpy as np
import pytest

import kiln
from .conftest import CountingBackend, assert_same, run_probe, same_as_numpy


def _typed_ufuncs(a, b, i, o):
    s = np.add(a, b, dtype=np.float32) * 2          # float64 + float32 added in float32
    m = np.multiply(i, i, dtype=np.float64)         # int64 cast to float64 first
    w = np.add(i, 2.5, dtype=np.float32)            # a weak Python float, float32 loop
    r = np.sqrt(i, dtype="f4")
    c = np.less(b, b, dtype=bool)
    u = np.add(a, a, dtype=np.int32, casting="unsafe")
    np.add(a, 1, dtype=np.float32, out=o)           # the float32 result cast into float64 o
    return (s, m, w, r, c, u, np.subtract(a, b, casting="safe"), np.add(b, b, casting="no"),
            np.add(a[0], i[1], dtype=np.float32), np.sqrt(i[2], dtype=np.float32))   # NumPy scalars


def test_ufunc_dtype_and_casting_are_captured():
    a, b = np.linspace(-2, 3, 5), np.linspace(0, 1, 5).astype(np.float32)
    compiled, _, _ = run_probe(_typed_ufuncs, a, b, np.arange(5), np.zeros(5))
    assert all(r.graph_break is None for r in compiled.records)


def _typed_errors(a, i, which):
    if which == 0:
        return np.add(a, a, dtype=np.int32)             # input cast not 'same_kind'
    if which == 1:
        return np.add(i, 2 ** 40, dtype=np.int32)       # the Python int overflows int32
    if which == 2:
        return np.less(a, a, dtype=np.float64)          # no such loop
    if which == 3:
        return np.add(a, 1, dtype=np.float32, out=i)    # output cast not 'same_kind'
    return np.add(a, i, casting="equiv")


def test_ufunc_dtype_and_casting_errors_are_numpys():
    compiled = kiln.compile(_typed_errors, backend="eager")
    for which in range(5):
        same_as_numpy(compiled, _typed_errors, np.linspace(0, 1, 3), np.arange(3), which)


class Params:
    def __init__(self):
        self.w = np.linspace(-1, 1, 4)
        self.b = np.ones(4)
        self.lr = 0.1


def _sgd_by_vars(p, g):
    for name, value in vars(p).items():            # every array attribute takes a step
        if isinstance(value, np.ndarray):
            setattr(p, name, value - p.lr * g)
    return p.w + p.b


def _through_dict(p, x):
    p.scale = x.sum()                               # set before the dict is read: seen in it
    d = p.__dict__
    d["lr"] = 0.5                                   # a store through the dict: seen as p.lr
    d["w"] = d["w"] * p.lr
    p.b[0] += 1.0                                   # an in-place write seen through d["b"]
    return x * d["scale"] + d["b"], sorted(d), hasattr(p, "scale"), len(vars(p))


@pytest.mark.parametrize("fn", [_sgd_by_vars, _through_dict])
def test_vars_and_dict_of_an_argument_are_captured(fn):
    compiled, _, _ = run_probe(fn, Params(), np.arange(4.0))
    assert all(r.graph_break is None for r in compiled.records)


def _vars_breaks(p, x, which):
    if which == 0:
        del vars(p)["w"]                            # then p.w: the attribute is gone
        return hasattr(p, "w"), x + 1
    if which == 1:
        return vars(Params())["b"] + x              # an object made in the function
    return sorted(vars()), x + 1                    # the frame's locals


def test_vars_it_cannot_follow_breaks_with_its_reason():
    compiled = kiln.compile(_vars_breaks, backend="eager")
    for which, reason in enumerate(["was deleted through its __dict__", "(made in the frame)",
                                    "reads the frame's locals"]):
        want, p = _vars_breaks(Params(), np.arange(4.0), which), Params()
        assert_same(compiled(p, np.arange(4.0), which), want)
        assert sorted(vars(p)) == sorted(vars(Params())) or which == 0 and "w" not in vars(p)
        report = kiln.explain(_vars_breaks)(Params(), np.arange(4.0), which)
        assert reason in report.break_reasons[0].reason, report.break_reasons


_log = logging.getLogger("kiln.tests.everyday")


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.seen = []

    def emit(self, record):
        self.seen.append((record.name, record.levelname, record.getMessage()))


def _logged(x):
    y = x * 2
    _log.debug("y sums to %s", y.sum())
    _log.info("%d items", len(x))
    _log.log(logging.DEBUG, "first %s", y[0])
    logging.warning("root: %s", y[0])
    return y + 1


def test_a_disabled_logging_call_is_nothing_and_an_enabled_one_logs():
    records, root = _Records(), _Records()
    _log.addHandler(records)
    _log.propagate = False
    logging.root.addHandler(root)
    try:
        compiled = kiln.compile(_logged, backend="eager")
        for level, root_level, breaks in [(logging.WARNING, logging.ERROR, 0), (logging.DEBUG, logging.ERROR, 3),
                                          (logging.INFO, logging.WARNING, 2), (logging.WARNING, logging.ERROR, 0)]:
            _log.setLevel(level)
            logging.root.setLevel(root_level)
            seen = []
            for fn in (_logged, compiled):
                records.seen.clear()
                root.seen.clear()
                value = fn(np.arange(3.0))
                seen.append((repr(value), list(records.seen), list(root.seen)))
            assert seen[0] == seen[1]
            report = kiln.explain(_logged)(np.arange(3.0))
            assert report.graph_break_count == breaks, report.break_reasons
            assert all("is enabled for" in r.reason for r in report.break_reasons)
    finally:
        _log.removeHandler(records)
        _log.propagate = True
        _log.setLevel(logging.NOTSET)
        logging.root.removeHandler(root)
        logging.root.setLevel(logging.WARNING)


def _descent_with_history(w, X, y, lr, history):
    losses = []
    for _ in range(6):
        r = X @ w - y
        losses.append(float(r @ r))                 # append loaded before float() breaks
        history.append(float(np.abs(r).max()))     # a list passed in: replayed on it
        w = w - lr * (X.T @ r)
    return w, losses


def test_an_append_of_a_float_taken_from_an_array_is_captured():
    g = np.random.default_rng(50)
    X, y = g.standard_normal((9, 3)), g.standard_normal(9)
    backend = CountingBackend()
    compiled = kiln.compile(_descent_with_history, backend=backend)
    built = []
    for lr in (0.01, 0.02):
        want_history, got_history = [1.0], [1.0]
        want = _descent_with_history(np.zeros(3), X, y, lr, want_history)
        assert_same(compiled(np.zeros(3), X, y, lr, got_history), want)
        assert got_history == want_history
        built.append(len(backend.graphs))
    assert built[0] == built[1], built   # lists growing by one per iteration do not recompile
    report = kiln.explain(_descent_with_history)(np.zeros(3), X, y, 0.01, [])
    assert not any("append" in r.reason for r in report.break_reasons), report.break_reasons


def _ordered_by_keys(xs, d, lengths):
    by_size = sorted(xs, key=lambda a: a.shape[0])             # keys made in the function
    biggest = max(d, key=lambda k: d[k].shape[0])
    smallest = min(d.items(), key=lambda kv: kv[1].size)
    order = [3, 1, 2, 1]
    order.sort()
    pairs = [(2, "b"), (1, "a"), (2, "a")]
    pairs.sort(key=lambda t: t[0], reverse=True)              # stable, as Python's
    lengths.sort(key=abs, reverse=True)                        # a list passed in: replayed
    return ([a.sum() for a in by_size], d[biggest] * 2, smallest[0], xs[0][order], pairs,
            max([], key=len, default=None), sorted(xs, key=lambda a: a.ndim, reverse=True)[0])


def _grid(x, xs):
    out = np.zeros((2, 3))
    for i, j in itertools.product(range(2), range(3)):
        out[i, j] = x[i] * x[j]
    dots = [a @ b for a, b in itertools.combinations(xs, 2)]
    diffs = [a - b for a, b in itertools.permutations(xs[:2])]
    return out, dots, diffs, [a + b for a, b in itertools.product(xs[:2], repeat=2)]


@pytest.mark.parametrize("fn", [_ordered_by_keys, _grid])
def test_key_functions_and_itertools_are_captured(fn):
    v = np.arange(6.0)
    args = ([v, v[:2], v[:4], v[:2] * 3], {"a": v[:2], "b": v, "c": v[:1]}, [3, -5, 1]) \
        if fn is _ordered_by_keys else (v, [v, v * 2, v * 3])
    compiled, _, _ = run_probe(fn, *args)
    assert all(r.graph_break is None for r in compiled.records)


def test_a_key_of_array_values_and_a_builtin_type_break_saying_why():
    def f(xs):
        return sorted(xs, key=lambda a: a.sum())[0]

    def g(x):
        return x * len(bytearray([1, 2, 2]))   # (a set of constants is made: everyday_breaks3)
    for fn, reason in [(f, "is not a Python constant here"), (g, "builtins.bytearray objects is not "
                                                                 "supported (a built-in type")]:
        same_as_numpy(kiln.compile(fn, backend="eager"), fn, [np.ones(3), np.zeros(3)]
                      if fn is f else np.ones(3))
        assert reason in kiln.explain(fn)([np.ones(3), np.zeros(3)] if fn is f else np.ones(3)) \
            .break_reasons[0].reason


def _grouped(xs):
    groups = collections.defaultdict(list)
    counts = collections.defaultdict(int)
    for i, a in enumerate(xs):
        groups[a.shape[0]].append(a * i)
        counts[a.shape[0]] += 1
    total = collections.defaultdict(float)
    total["sum"] += xs[0].sum()
    return {k: np.stack(v).sum(0) for k, v in groups.items()}, counts, total, "x" in total, total.get("y")


def _grouped_across_a_break(x):
    seen = collections.defaultdict(int)
    for k in ("a", "b", "a"):
        seen[k] += 1
    kiln.graph_break()
    seen["c"] += 2                  # the resume function gets the defaultdict itself
    return x * seen["a"], seen


@pytest.mark.parametrize("fn, arg", [(_grouped, [np.arange(6.0), np.ones(2), np.arange(6.0) * 2]),
                                     (_grouped_across_a_break, np.arange(3.0))])
def test_defaultdict_is_captured(fn, arg):
    compiled, _, _ = run_probe(fn, arg)
    assert [r.graph_break.reason for r in compiled.records if r.graph_break] == \
        (["kiln.graph_break() was called"] if fn is _grouped_across_a_break else [])


class Windows:
    """A Dataset-like object: __len__, __getitem__ and a generator __iter__."""

    def __init__(self, x, width):
        self.x, self.width = x, width

    def __len__(self):
        return self.x.shape[0] - self.width + 1

    def __getitem__(self, i):
        return self.x[i:i + self.width].mean()

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]


def _use_windows(ds):
    means = [ds[i] for i in range(len(ds))]
    return np.array(means), sum(w * 2 for w in ds), bool(ds), ds[len(ds) - 1] if len(ds) > 3 else None


def test_len_getitem_and_iter_of_a_user_class_are_inlined():
    compiled, _, _ = run_probe(_use_windows, Windows(np.arange(8.0), 3))
    assert all(r.graph_break is None for r in compiled.records)


def _mapped(xs):
    sums = list(map(np.sum, filter(lambda a: a.shape[0] > 2, xs)))
    products = []
    for p in map(lambda a, b: a[:2] * b[:2], xs, xs[1:]):   # the calls interleave with the body
        products.append(p + len(products))
    it = map(lambda a: a + 1, xs)
    first = next(it)
    kiln.graph_break()                                  # the rest of the map: Python's own
    return sums, products, list(filter(None, [0, 1, 2, 0])), first, list(it)


def test_map_and_filter_are_lazy_iterators():
    v = np.arange(6.0)
    compiled, _, _ = run_probe(_mapped, [v, v[:2], v[:4] * 2])
    reasons = [r.graph_break.reason for r in compiled.records if r.graph_break]
    assert reasons[0] == "kiln.graph_break() was called" and not any("constructing" in r for r in reasons)


def _reduced(xs, which):
    if which == 1:
        return functools.reduce(np.add, [])                 # Python's TypeError
    return (functools.reduce(np.add, xs), functools.reduce(lambda a, b: a @ b, [np.eye(2) * 2] * 3),
            functools.reduce(lambda a, b: a * b, map(lambda a: a + 1, xs), 1.0))


def test_functools_reduce_is_captured():
    v = np.arange(4.0)
    compiled, _, _ = run_probe(_reduced, [v, v * 2, v * 3], 0)
    assert all(r.graph_break is None for r in compiled.records)
    same_as_numpy(kiln.compile(_reduced, backend="eager"), _reduced, [v], 1)


def _accumulated(mats, x, which):
    if which == 1:
        return list(itertools.accumulate(mats, np.matmul, 3))   # Python's TypeError
    it = itertools.accumulate(mats, np.matmul)       # running products, lazy
    first = next(it)
    if which == 2:
        kiln.graph_break()          # alive at a break: rebuilt from its running value
    return (first, list(it), list(itertools.accumulate(x)),
            [float(v) for v in itertools.accumulate(x, max, initial=0.5)])


def test_itertools_accumulate_is_a_lazy_iterator():
    # stop 57: "constructing itertools.accumulate objects is not supported" (two breaks)
    mats, x = [np.eye(2) * 2, np.arange(4.0).reshape(2, 2), np.ones((2, 2))], [1.0, 3.0, 2.0]
    compiled, _, _ = run_probe(_accumulated, mats, x, 0)
    assert all(r.graph_break is None for r in compiled.records)
    for which in (1, 2):
        same_as_numpy(kiln.compile(_accumulated, backend="eager"), _accumulated, mats, x, which)


class Disk:
    def __init__(self):
        self._r = 1.0

    @property
    def radius(self):
        return self._r

    @radius.setter
    def radius(self, value):
        self._r = abs(value)

    @property
    def area(self):
        return np.pi * self._r ** 2


def _resize(disk, x):
    disk.radius = -2.0 * x.shape[0]               # the setter is inlined, its store replayed
    return disk.area * x, disk.radius


@np.errstate(divide="ignore", invalid="ignore")
def _ratio(a, b):
    return a / b


def _ratio_of(x):
    return _ratio(x, x - 1.0) + 1.0


def test_a_property_setter_is_inlined_and_an_errstate_decorated_call_says_why_it_breaks():
    compiled, _, _ = run_probe(_resize, Disk(), np.arange(3.0))
    assert all(r.graph_break is None for r in compiled.records)
    same_as_numpy(kiln.compile(_ratio_of, backend="eager"), _ratio_of, np.arange(3.0))
    reasons = [r.reason for r in kiln.explain(_ratio_of)(np.arange(3.0)).break_reasons]
    assert len(reasons) == 1 and "decorated with np.errstate(...)" in reasons[0], reasons


def _vars_then_a_break(p, x):
    d = vars(p)                     # reads p, not the frame: a break elsewhere stays partial
    y = x * d["lr"]
    kiln.graph_break()
    return y + p.w, sorted(vars())  # vars() reads the frame: this one runs it all as Python


def test_vars_of_an_object_keeps_partial_graphs_and_bare_vars_does_not():
    def one_arg(p, x):
        y = x * vars(p)["lr"]
        kiln.graph_break()
        return y + p.w
    compiled, _, _ = run_probe(one_arg, Params(), np.arange(4.0), graphs=2)
    compiled = kiln.compile(_vars_then_a_break, backend="eager")
    assert_same(compiled(Params(), np.arange(4.0)), _vars_then_a_break(Params(), np.arange(4.0)))
    assert kiln.explain(_vars_then_a_break)(Params(), np.arange(4.0)).graph_count == 0


# ----------------------------------------------------------------------------- np.roll by a shift read from an array

_VELOCITIES = np.array([[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1], [1, 1], [-1, -1]])


def _stream(f, k):
    # lattice Boltzmann streaming: each population rolled by its lattice velocity, a row of a
    # module-level table (0-d integers, as zip over the table's columns gives them too)
    moved = [np.roll(f[i], (_VELOCITIES[i, 1], _VELOCITIES[i, 0]), axis=(0, 1)) for i in range(len(f))]
    return moved, np.roll(f[0], k[0]), np.roll(f[1].T, (k[1], 2, k[0]), axis=(1, 1, 0))


def test_roll_by_a_shift_read_from_an_array_stays_in_the_graph():
    # np.roll(f[i], c[i]) broke the graph ("numpy.roll: an array as a static parameter"):
    # a run-time shift is now a gather by (arange(n) - shift) % n, laid out as NumPy's
    # empty_like (a transposed input keeps its strides); shifts beyond the size and negative ones wrap
    f = np.arange(7 * 3 * 4, dtype=np.float64).reshape(7, 3, 4)
    run_probe(_stream, f, np.array([1, -9]), calls=1)
    run_probe(_stream, f[:, :, :3], np.array([5, 2], dtype=np.int32), calls=1)
    compiled = kiln.compile(_stream)
    for k in (np.array([1, -9]), np.array([-4, 11])):
        got, want = compiled(f, k), _stream(f, k)
        for g, w in zip(got[0] + [got[1], got[2]], want[0] + [want[1], want[2]]):
            assert g.dtype == w.dtype and g.strides == w.strides
            np.testing.assert_array_equal(g, w)
    grad = kiln.grad(lambda x, k: np.sum(np.roll(x, k[0], axis=1) * np.arange(4.0)))(np.ones((2, 4)), np.array([5]))
    np.testing.assert_array_equal(grad, np.tile([1.0, 2.0, 3.0, 0.0], (2, 1)))
