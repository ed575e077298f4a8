"""Everyday constructs that used to break the graph, captured now (stop 48): making user
objects (plain classes, dataclasses, NamedTuples) in the function, the normal path of try
statements (an exception the graph raises reruns the function as Python, so the except
clause runs as without kiln), operator.index, dicts keyed by classes and dtypes, and a
list argument compared with a list. Each is checked against the plain function (values,
types, exceptions, arguments after the call) and by its graph and break counts."""
from __future__ import annotations

import collections
import dataclasses
import operator
import warnings
from typing import NamedTuple

import numpy as np
import pytest

import kiln
from .conftest import assert_same, run_probe, same_as_numpy


class Point:
    scale = 3.0

    def __init__(self, x, y=1.0):
        self.x = x
        self.y = y * self.scale

    def norm(self):
        return np.sqrt(self.x ** 2 + self.y ** 2)


class Shifted(Point):
    def __init__(self, x):
        super().__init__(x, 2.0)
        self.z = x - 1


@dataclasses.dataclass
class Stats:
    mean: np.ndarray
    spread: float = 2.0

    def __post_init__(self):
        self.upper = self.mean + self.spread


class Result(NamedTuple):
    mean: np.ndarray
    std: float = 0.5

    def scaled(self):
        return self.mean * self.std


Pair = collections.namedtuple("Pair", "u v")


@dataclasses.dataclass(frozen=True)
class Frozen:          # its __init__ goes through object.__setattr__: runs as Python
    a: np.ndarray


def _objects(x, log):
    p = Point(x * 2)
    q = Shifted(x)
    s = Stats(x.mean(axis=0))
    r = Result(mean=x.std(axis=0))
    log.append(p)                      # stored into an outside list, then changed
    p.x = p.x + 1
    return (p.norm().sum() + q.norm() + q.z, isinstance(q, Point), p, s, r, r.scaled(),
            Pair(1, x)[0], {"p": p, "again": [p]}, hasattr(p, "x"), hasattr(p, "nope"))


def test_user_objects_made_in_the_function_are_captured():
    compiled, backend, got = run_probe(_objects, np.arange(6.0).reshape(3, 2), [], graphs=1)
    assert all(r.graph_break is None for r in compiled.records)
    p, d = got[2], got[7]
    assert type(p) is Point and d["p"] is p and d["again"][0] is p   # one object, as in Python
    assert type(got[4]) is Result and type(got[3]) is Stats


def _errors(x, which):
    if which == 0:
        return Point(x, 1.0, 2.0)          # TypeError from binding __init__
    if which == 1:
        return Point(x).missing            # AttributeError
    return Result()                        # TypeError: a field without a default


def test_user_object_errors_are_pythons():
    compiled = kiln.compile(_errors, backend="eager")
    for which in range(3):
        same_as_numpy(compiled, _errors, np.ones(2), which)


def test_a_class_that_runs_code_of_its_own_when_made_breaks_and_says_why(probe):
    def f(x):
        return Frozen(x * 2).a + 1
    compiled, _, _ = probe(f, np.ones(3), graphs=2)
    (brk,) = [r.graph_break for r in compiled.records if r.graph_break]
    assert "constructing Frozen objects" in brk.reason and "__setattr__" in brk.reason


def _solve(a, b, log):
    g = a @ a.T
    try:
        chol = np.linalg.cholesky(g)
        how = "cholesky"
    except np.linalg.LinAlgError:
        chol = np.eye(a.shape[0])
        how = "identity"
    else:
        log.append("else")
    finally:
        log.append("finally")
    return chol @ b * 2 + 1, how


def test_try_body_is_captured_and_its_handler_runs_when_the_graph_raises():
    compiled = kiln.compile(_solve, backend="eager")
    b = np.ones(3)
    for a in (np.eye(3) * 2, np.zeros((3, 3)), np.eye(3)):   # the middle one is not PD
        log, want_log = [], []
        assert_same(compiled(a, b, log), _solve(a, b, want_log))
        assert log == want_log
    report = kiln.explain(compiled)(np.zeros((3, 3)), b, [])
    assert report.graph_count == 1 and not report.break_reasons


def test_a_graph_that_keeps_raising_into_a_handler_backs_off():
    """Each call whose graph raised ran it for nothing before the Python run (1.23x
    NumPy's time for a matrix never positive definite); after a raise the next 1, 3, 7 ...
    calls run as Python, and a call the graph serves starts over."""
    runs = []

    def counting(graph, example_inputs):
        def run(*args):
            runs.append(1)
            return graph(*args)
        return run
    compiled = kiln.compile(_solve, backend=counting)
    b = np.ones(3)
    for a in [np.zeros((3, 3))] * 8 + [np.eye(3)] * 10:
        log, want_log = [], []
        assert_same(compiled(a, b, log), _solve(a, b, want_log))
        assert log == want_log
    # raised at calls 1, 3 and 7; 8-14 ran as Python; 15-18 served
    assert len(runs) == 7


def _scalar_in_try(x, d):
    try:
        s = 1.0 / d                        # computed by the entry, outside the graph
    except ZeroDivisionError:
        s = -1.0
    return x * s


def test_run_time_arithmetic_that_can_raise_in_a_try_body_breaks_there():
    compiled = kiln.compile(_scalar_in_try, backend="eager")
    for d in (2.0, 3.0, 4.0, 0.0):         # d becomes a run-time number, then is 0
        assert_same(compiled(np.ones(2), d), _scalar_in_try(np.ones(2), d))
    (brk,) = kiln.explain(compiled)(np.ones(2), 0.0).break_reasons
    assert "inside a try body can raise" in brk.reason


def _small_things(x, n, l):
    k = operator.index(n)
    tol = {np.float32: 1e-4, np.float64: 1e-10}[x.dtype.type]
    name = _NAMES[x.dtype]
    y = np.where(np.abs(x) < tol, 0, x)[:k] * 2
    return y, k, name, l == [3], l != [3, 4], [1] == (1,)


_NAMES = {np.dtype(np.float32): "single", np.dtype(np.float64): "double"}


def test_index_dtype_keyed_dicts_and_list_equality_are_captured():
    compiled = kiln.compile(_small_things, backend="eager")
    x = np.array([1e-5, 1.0, 1e-12, 3.0])
    for args in ((x, 3, [3]), (x.astype(np.float32), np.int64(2), [3, 4]), (x, 2, [])):
        assert_same(compiled(*args), _small_things(*args))
    same_as_numpy(compiled, _small_things, x, 2.0, [3])     # operator.index(2.0): TypeError
    report = kiln.explain(compiled)(x, 3, [3])
    assert not report.break_reasons
    assert "tuple(G['_NAMES']) == (dtype('float32'), dtype('float64'))" in str(report)


def test_a_dtype_key_is_not_its_name():
    # np.dtype('float32') == 'float32', but a dict looks the two up apart: the key guard
    # compares types too, so the changed dict is captured again and raises KeyError
    table = {np.dtype(np.float32): 1.0}
    compiled = kiln.compile(lambda x: x * table[x.dtype], backend="eager")
    x = np.ones(2, np.float32)
    assert_same(compiled(x), x * 1.0)
    del table[np.dtype(np.float32)]
    table["float32"] = 2.0
    with pytest.raises(KeyError):
        compiled(x)


def test_catch_warnings_body_compiles_and_filters_apply():
    def f(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            z = np.log(x)
        return z + 1
    compiled = kiln.compile(f, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(compiled(np.zeros(2)), np.full(2, -np.inf))
    report = kiln.explain(compiled)(np.zeros(2))
    assert len(report.break_reasons) <= 3    # entering, simplefilter, the exit's store (6 before)


def _warning_as_error_caught(x, how):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            with np.errstate(divide="warn", invalid="warn"):   # inside a try: no resume in it
                out = np.log(x) if how == "log" else np.sqrt(x)
        except RuntimeWarning as w:
            return np.zeros_like(x), str(w)
    return out, "ok"


def test_a_with_statement_inside_a_try_body_runs_with_the_try_statement():
    compiled = kiln.compile(_warning_as_error_caught, backend="eager")
    for x, how in ((np.array([1.0, 2.0]), "log"), (np.array([1.0, 0.0]), "log"),
                   (np.array([4.0, -1.0]), "sqrt")):
        assert_same(compiled(x, how), _warning_as_error_caught(x, how))


def _namedtuple_argument(r, p):
    return r.mean * r.std + p.v, r.scaled(), r[0].sum(), len(p)


def test_a_namedtuple_argument_reads_its_fields_in_the_graph():
    # jobs.release of a NamedTuple handed in broke the graph ("attribute 'release' of Job
    # object jobs is a descriptor"): its fields are tuple items
    compiled, _, _ = run_probe(_namedtuple_argument, Result(np.arange(3.0), 2.0), Pair(1, np.ones(3)), graphs=1)
    assert all(r.graph_break is None for r in compiled.records)
    same_as_numpy(compiled, _namedtuple_argument, Result(np.ones(2), np.float64(0.5)), Pair(2, 3.0))


def test_next_of_a_generator_handed_in_takes_its_item():
    # next(gen, None) of a Python generator a resume function was handed (a break inside
    # the generator expression) gave the default instead of the generator's first item
    def first_negative(X):
        return next((i for i, r in enumerate(X) if (r < 0).any()), None)

    compiled = kiln.compile(first_negative, backend="eager")
    for X in (np.array([[1.0, 2], [3, -1], [-1, 0]]), np.ones((2, 2))):
        same_as_numpy(compiled, first_negative, X)


def test_a_key_bound_to_a_dict_of_graph_values_is_not_folded():
    # max(d, key=d.get) of a dict the graph made was folded with the dict seen while
    # compiling: every later call returned the first call's answer
    def best(c):
        d = {"a": c.sum(), "b": -2.0 * c.sum()}
        return max(d, key=d.get), sorted(d, key=d.get), min(d, key=d.__getitem__)

    compiled = kiln.compile(best, backend="eager")
    for c in (np.array([1.0]), np.array([-1.0])):
        same_as_numpy(compiled, best, c)


def test_a_list_of_numpy_integers_as_an_index_is_their_array():
    # league.games[[a, b]] += 1 with a, b unpacked from a row of an int array broke the
    # graph ("ndarray.__getitem__: an argument kiln cannot model"): NumPy makes an array of it
    def games(x, pairs):
        y = x.copy()
        for a, b in pairs:
            y[[a, b]] += 1
        m = x[:4].reshape(2, 2)
        return y, x[[pairs[0, 0], pairs[-1, 1]]], m[[pairs[0, 0], 1], 0]

    compiled, _, _ = run_probe(games, np.arange(5.0), np.array([[0, 0], [1, 3]]), graphs=1)
    assert all(r.graph_break is None for r in compiled.records)
    same_as_numpy(compiled, games, np.arange(5.0), np.array([[1, 7]]))


def _recarray_fields(rows):
    r = rows.view(np.recarray)     # (runs as Python: a structured dtype)
    return r.x * 2, r.id


def test_an_attribute_found_by_a_custom_getattribute_is_no_user_error():
    # np.recarray finds its fields in __getattribute__: r.x was reported as the user's
    # AttributeError ("the function raises here"), which it is not
    rows = np.array([(1, 2.0), (2, 3.5)], dtype=[("id", np.int64), ("x", np.float64)])
    got = kiln.compile(_recarray_fields, backend="eager")(rows)
    np.testing.assert_array_equal(got[0], [4.0, 7.0])
    breaks = kiln.explain(_recarray_fields)(rows).break_reasons
    assert breaks and not [b for b in breaks if b.kind == "user_error"], breaks


class _Settings:
    """A dict-backed settings object: ``__getattr__`` counts its calls and raises KeyError,
    not AttributeError, for a name it lacks."""

    def __init__(self, **values):
        self.values, self.asked = values, 0

    def __getattr__(self, name):
        self.asked += 1
        return self.values[name]


def _scaled_by_setting(x, s):
    return x * s.w + 1.0


def test_a_getattr_object_is_asked_only_for_the_users_names():
    # capture asked it for __kiln_compiled__ (KeyError: the function ran as Python, "a
    # kiln bug") and for __name__, so s.asked ended at 4 where Python leaves 1
    compiled = kiln.compile(_scaled_by_setting, backend="eager")
    for _ in range(2):
        want, got = _Settings(w=2.0), _Settings(w=2.0)
        assert_same(compiled(np.ones(2), got), _scaled_by_setting(np.ones(2), want))
        assert got.asked == want.asked == 1
    kinds = [r.graph_break.kind for r in compiled.records if r.graph_break is not None]
    assert "internal_error" not in kinds, kinds
