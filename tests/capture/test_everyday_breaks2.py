"""Everyday constructs that broke the graph (stop 50): ufunc calls with ``dtype=`` or
``casting=``, ``vars(obj)`` and ``obj.__dict__``, and logging calls (a disabled one is
nothing; any other breaks and says why). Each is checked against the plain function (values, dtypes, exceptions,
arguments after the call) and by its break count, on the counting backend (no kernel
build) unless said otherwise."""
from __future__ import annotations

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
    return s, m, w, r, c, u, np.subtract(a, b, casting="safe"), np.add(b, b, casting="no")


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
    logging.warning("root: %s", y[0])
    return y + 1


def test_a_disabled_logging_call_is_nothing_and_an_enabled_one_logs():
    records, root = _Records(), _Records()
    _log.addHandler(records)
    _log.propagate = False
    logging.root.addHandler(root)
    try:
        compiled = kiln.compile(_logged, backend="eager")
        for level, root_level, breaks in [(logging.WARNING, logging.ERROR, 0), (logging.DEBUG, logging.ERROR, 2),
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
