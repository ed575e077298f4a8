"""Programs drawn from other libraries' own test suites, run through kiln
(docs/numpy_tests.md, "Other libraries' tests": benchmarks/library_tests.py runs a
package's tests with its functions compiled). Each is a case where kiln differed from
Python, written without the library; checked like tests/test_programs.py on cpp and eager.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln
from tests.test_programs import program_registry, program_test

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)


# opt_einsum test_backends.py::test_dask (contract_path): input_list = subscripts.split(",")
# was folded into one list the cache entry held, and the contraction loop's
# input_list.pop() emptied it; the next call hitting the entry read ['ca'] and failed with
# KeyError 'b'. A folded list (str.split, sorted) or dict (str.maketrans) is a new one on
# every call; the calls repeat so that later ones hit the entry.
@program(("ab,bc,cd", np.ones(3)), ("ab,bc,cd", np.ones(3)), ("ab,bc,cd", np.ones(3)),
         ("ab,bc", np.arange(3.0)), ("ab,bc", np.arange(3.0)))
def folded_list_popped(s, x):
    parts = s.split(",")
    last = parts.pop()
    order = sorted(s)
    order.append(last)
    table = str.maketrans("ab", "xy")
    table[ord("c")] = "z"
    return parts, order, table, x * len(parts)


# The same list living on across a graph break (a comprehension over frozensets breaks, as
# contract_path's did): the resume function took the entry's list, already popped.
@program(("ab,bc,ca", np.ones(2)), ("ab,bc,ca", np.ones(2)), ("ab,bc,ca", np.ones(2)))
def folded_list_across_a_break(s, x):
    parts = s.split(",")
    sets = [frozenset(p) for p in parts]
    while len(parts) > 1:
        parts.pop(0)
    return parts, len(sets), x + len(parts)


# Idioms of the libraries' code that broke the graph or recompiled per value:
# transforms3d's decompose44 returns np.array([sxy, sxz, syz]) of NumPy scalars it
# computed (after a break on the sign of a determinant, so they are its resume function's
# arguments): each was specialized, one entry per value (recompile limit hit in real use),
# where a Python float in such a list was a run-time value already; finite-element
# assembly ``K[np.ix_(dofs, dofs)] += ke`` with dofs a list of numbers read from the
# connectivity array; ``np.multiply.outer(arr, [c, s])`` with c, s computed; and
# ``", ".join(genexpr)`` (the joined items are constants). Each was a graph break.
@program((np.zeros((6, 6)), np.array([[0, 1], [1, 2]]), np.arange(16.0).reshape(4, 4),
          np.float64(0.25), np.float64(-1.5)),
         (np.ones((6, 6)), np.array([[2, 0], [1, 1]]), np.eye(4), np.float64(2.0), np.float64(0.5)))
def assembly_idioms(K, conn, ke, a, b):
    for e in range(conn.shape[0]):
        n1, n2 = conn[e]
        dofs = [2 * n1, 2 * n1 + 1, 2 * n2, 2 * n2 + 1]
        K[np.ix_(dofs, dofs)] += ke
    c, s = np.cos(a), np.sin(a)
    label = ", ".join(f"K{n}" for n in K.shape)
    # filterpy's UKF.update: np.atleast_2d of a list of hx(s) = s[0:1] was (1, n), the
    # shape taken of a list of opaque items, where NumPy's array of it is (n, 1)
    rows = np.atleast_2d([ke[i, 0:1] for i in range(3)])
    return K, np.multiply.outer(ke[0], [c, s]), label, np.array([a, b, c]), rows, \
        np.atleast_3d([ke[0], ke[1]])


# emcee's test_blobs: a log-probability returning ``object()`` as its blob, kept past a
# graph break, was rebuilt for the resume function by setting the attributes of a new
# object through its __dict__, which a plain object() has not (AttributeError out of a
# function that works).
def _sentinel_blob(x):
    return object()


@program((np.ones(3),), (np.arange(3.0),))
def object_blob_across_a_break(x):
    lp, blob = -0.5 * np.sum(x ** 2), _sentinel_blob(x)
    if lp < -1:
        lp = lp * 2
    return lp, type(blob), blob is not None


test_program = program_test(PROGRAMS, ["cpp", "eager"])


def test_assembly_idioms_are_one_graph_for_every_value():
    fn, calls = PROGRAMS["assembly_idioms"]
    explained = kiln.explain(fn)(*(v.copy() for v in calls[0]))   # (np.float64.copy: a scalar)
    assert [b.reason for b in explained.break_reasons] == []
    assert [g for g in explained.guards if "np.float64(" in g] == [], "a, b are run-time values"
    f = kiln.compile(fn, backend="eager")
    for args in calls:
        f(*(v.copy() for v in args))
    assert len(f.cache_entries) == 1


def test_recompile_limit_under_an_error_filter_still_runs(monkeypatch):
    # transforms3d's tests with -W error::RuntimeWarning (decompose44's resume function,
    # specialized on a float it computed, reached its limit): kiln's recompile_limit
    # warning, raised as an error by the filter, made the decorated call fail where the
    # function works. The call runs uncompiled, as it does past the limit.
    monkeypatch.setattr(kiln.config, "recompile_limit", 2)

    def scaled(x, n):
        return x.reshape(n, -1) * 2

    f = kiln.compile(scaled, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for n in (1, 2, 3, 6):
            np.testing.assert_array_equal(f(np.arange(6.0), n), scaled(np.arange(6.0), n))
    assert len(f.cache_entries) == 2


class _HalfBuilt:
    def __repr__(self):
        return f"_HalfBuilt(n={self.n})"   # (n is set by __init__, which deepcopy skips)


def test_recompile_reason_of_an_object_whose_repr_raises():
    # filterpy's Saver deep-copies a filter: copy._reconstruct (compiled with the library)
    # recompiled on a MerweScaledSigmaPoints made by object.__new__, not filled yet, and
    # the recompile's reason called its __repr__, which raised AttributeError out of a
    # call that works without kiln.
    def keep(o, x):
        return o, x + 1

    f = kiln.compile(keep, backend="eager")
    f(None, np.ones(2))
    half = object.__new__(_HalfBuilt)
    o, y = f(half, np.ones(2))
    assert o is half and len(f.cache_entries) == 2
    np.testing.assert_array_equal(y, [2.0, 2.0])


def _scaler(k):
    def scale(x, shift=None, j=2):
        return x * k + (j if shift is None else shift)
    return scale


_SCALE = kiln.compile(_scaler(3.0), backend="eager")


def test_a_compiled_helper_with_defaults_and_a_closure_keeps_one_entry():
    # opt_einsum's backends.get_func(func, backend="numpy", default=None) and the library's
    # other compiled helpers with defaults: inlined into a compiled caller, their defaults
    # and closure cells were guarded as ``helper.__defaults__[0]`` on the kiln.compile
    # wrapper, which has none: no entry held again, one recompile per call (emcee's
    # test_deal_with_scalar_likes, numdifftools' test_high_order_derivative: minutes).
    def outer(x):
        return _SCALE(x) + 1

    f = kiln.compile(outer, backend="eager")
    for n in range(3):
        np.testing.assert_array_equal(f(np.arange(3.0) + n), (np.arange(3.0) + n) * 3 + 3)
    assert len(f.cache_entries) == 1


def test_a_recompile_frees_the_arguments_when_it_returns():
    # opt_einsum's test_sharing_nesting (weakref, no gc.collect()): a recompile asks each
    # entry which guards fail; a value its guard could not read (x.shape[1] of a 1-d x) was
    # kept as the exception with its traceback, which held the explaining frame and the
    # list holding the exception: a cycle keeping the call's arguments until gc ran.
    import gc
    import weakref

    f = kiln.compile(lambda x: x * 2, backend="eager")
    f(np.ones((2, 3)))
    was = gc.isenabled()
    gc.disable()
    try:
        y = np.ones(3)
        ref = weakref.ref(y)
        f(y)
        del y
        assert ref() is None
    finally:
        if was:
            gc.enable()


def test_isscalar_of_a_run_time_number_reads_only_its_type():
    # emcee's _scalar (``float(fx) if np.isscalar(fx) else np.asarray(fx).item()``) on the
    # float a log-probability returns: np.isscalar's answer, a constant, left the number
    # handed to no op, so it was specialized (guard ``fx == 0.637``): one entry per value,
    # 2101 entries in test_deal_with_scalar_likes, which took 15 minutes.
    def scalar(fx):
        return (float(fx), 1) if np.isscalar(fx) else (float(np.asarray(fx).item()), 2)

    f = kiln.compile(scalar, backend="eager")
    for v in (0.5, 0.25, np.float64(0.5), np.float64(1.5), 3, np.array([2.0]), np.array(1.0)):
        assert f(v) == scalar(v)
    assert len(f.cache_entries) == 4   # by type: float, np.float64, int, an array


def test_divmod_of_run_time_ints_reads_them_at_run_time():
    # sgp4's _day_of_year_to_month_day(day_of_year, is_leap), called by its tests for every
    # day of two years: divmod was folded, guarding day_of_year by value (731 entries);
    # its invjday's divmod(second, 60.0) of a float, the same (619).
    def month_day(day_of_year, is_leap):
        bump = (2 - is_leap) * (day_of_year >= 60 + is_leap)
        month, day = divmod(2 * (day_of_year - 1 + bump), 61)
        minute, second = divmod(day_of_year * -86.4, 60.0)   # (its days2mdhms)
        return month + 1, day // 2 + 1, divmod(-day_of_year, 7), divmod(is_leap, 2), minute, second

    f = kiln.compile(month_day, backend="eager")
    for d in (1, 59, 60, 365):
        assert f(d, d == 60) == month_day(d, d == 60)
    assert len(f.cache_entries) == 1
    try:
        divmod(5, 0)
    except ZeroDivisionError as e:
        expected = str(e)
    g = kiln.compile(lambda a, b: divmod(a, b), backend="eager")
    g(5, 2)
    try:
        g(5, 0)
    except ZeroDivisionError as e:
        assert str(e) == expected
    else:
        raise AssertionError("divmod(5, 0) did not raise")


def _warns_for_its_caller(x, level):
    y = x * 2
    if y.sum() > 0:   # (a break first: the warning comes from a resume function)
        y = y + 1
    warnings.warn("time-varying", UserWarning, stacklevel=level)
    return y


def test_a_warning_with_a_stacklevel_names_the_users_frame():
    # pykalman's KalmanFilter.em: warnings.warn(..., stacklevel=2) runs as Python at a
    # break; the frame above the segment was kiln's entry, so the warning named
    # '<kiln ... entry #2615>', line 8, not the test calling em (filters by module and
    # the once-per-line registry then differ).
    f = kiln.compile(_warns_for_its_caller, backend="eager")
    for level in (1, 2, 3):
        seen = []
        for fn in (_warns_for_its_caller, f):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                fn(np.ones(2), level)   # the line stacklevel 2 names
            seen.append((w[0].filename, w[0].lineno, w[0].message.args))
        assert seen[0] == seen[1], level


class _Structure(dict):   # colour-science's Structure: a dict read through attributes
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(name) from e


_CONSTANTS = _Structure(alpha=lambda twelve_bits: 1.0993 if twelve_bits else 1.099)


def test_a_break_at_a_call_whose_callable_the_segment_loads():
    # colour's oetf_BT2020: ``a = constants.alpha(is_12_bits_system)`` breaks at the call
    # with only ``constants`` on the stack (the segment loads the method itself); the
    # warnings.warn check read the callable's slot off that shorter stack (IndexError).
    def gamma(x, twelve_bits):
        a = _CONSTANTS.alpha(twelve_bits)
        return x * a

    def below(x):
        return x < gamma(x, False)   # (the break is inside the inlined helper)

    f = kiln.compile(below, backend="eager")
    np.testing.assert_array_equal(f(np.ones(2)), below(np.ones(2)))


def test_an_int_computed_from_a_run_time_int_guards_its_value_not_the_ints():
    # numdifftools' derivative_sinh(n) = ``(sinh, cosh)[n % 2]``: the tuple's index must be
    # known, and it was pinned by its run-time int (guard ``n == 5``): one entry per n, 20
    # in test_high_order_derivative. ``n % 2`` (``n // 3``) is guarded instead; n itself
    # stays a run-time int, which later slices and results read (``x[:n]``, ``n * 2``).
    def pick(n, x):
        fn = (np.sin, np.cos)[n % 2]
        return fn(x[:n]), n * 2, list(range(n // 3)), x[n - 1]

    f = kiln.compile(pick, backend="eager")
    x = np.arange(10.0)
    for n in (4, 6, 5, 7, 3, 1):
        got, want = f(n, x), pick(n, x)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1:] == want[1:], n
    assert len(f.cache_entries) == 5   # (n % 2, n // 3): (0, 1), (0, 2), (1, 1), (1, 2), (1, 0)


def test_one_number_object_given_twice_stays_a_run_time_number():
    # pytransform3d's make_world_grid: make_world_line([x0, y], [x1, y], n) for each y of a
    # linspace, and ``np.linspace(p1[1], p2[1], n)`` took the one object ``y`` as start
    # and stop; found again by identity after the normalizer, an object standing for two
    # run-time numbers was specialized (guards ``p1[1] == np.float64(0.5)``): one entry
    # per y, 50 in test_camera. Each gets an object of its own (the same type and value).
    def line(p1, p2, n):
        return np.array([np.linspace(p1[0], p2[0], n), np.linspace(p1[1], p2[1], n)]).T

    f = kiln.compile(line, backend="eager")
    for y in list(np.linspace(-0.5, 0.5, 3)) + [np.float32(-0.0), 0.25, -0.0, float("nan")]:
        np.testing.assert_array_equal(f([-0.5, y], [0.5, y], 5), line([-0.5, y], [0.5, y], 5))
    assert len(f.cache_entries) == 3   # by the type of y: np.float64, np.float32, float


def _centroid(x, mfx):
    # scikit-fuzzy's defuzzify.centroid: the trapezoid between each pair of points; the
    # division's branch is taken only where y1 and y2 are both non-zero
    sum_moment_area = 0.0
    sum_area = 0.0
    for i in range(1, len(x)):
        x1, x2, y1, y2 = x[i - 1], x[i], mfx[i - 1], mfx[i]
        if not (y1 == y2 == 0.0 or x1 == x2):
            if y1 == y2:
                moment = 0.5 * (x1 + x2)
                area = (x2 - x1) * y1
            elif y1 == 0.0 and y2 != 0.0:
                moment = 2.0 / 3.0 * (x2 - x1) + x1
                area = 0.5 * (x2 - x1) * y2
            elif y2 == 0.0 and y1 != 0.0:
                moment = 1.0 / 3.0 * (x2 - x1) + x1
                area = 0.5 * (x2 - x1) * y1
            else:
                moment = (2.0 / 3.0 * (x2 - x1) * (y2 + 0.5 * y1)) / (y1 + y2) + x1
                area = 0.5 * (x2 - x1) * (y1 + y2)
            sum_moment_area += moment * area
            sum_area += area
    return sum_moment_area / max(sum_area, 1e-300)


def _guarded_scalar_math(a, b):
    # NumPy scalar math that warns where its operands are off the guarded path: a
    # division by zero, an overflowing product, a square root of a negative number
    out = np.float64(0.0)
    for i in range(a.shape[0]):
        if b[i] != 0.0:
            out += a[i] / b[i]
        if abs(a[i]) < 1e100:
            out += a[i] * a[i] * 1e200 * 1e-300
        elif a[i] >= 0.0:
            out += np.sqrt(a[i]) * 1e-100
    return out


@pytest.mark.parametrize("backend", ["eager", "cpp"])
@pytest.mark.parametrize("fn, args", [
    (_centroid, (np.linspace(0.0, 10.0, 11), np.array([0, 0, 0, .2, .5, .5, .3, 0, 0, 0, 0.]))),
    (_guarded_scalar_math, (np.array([1.0, 1e300, -1e300, 4.0, 1e-10]), np.array([0.0, 2.0, 0.0, 0.0, 1.0]))),
    (_guarded_scalar_math, (np.array([0.0, 1e300]), np.array([0.0, 0.0]))),
])
def test_a_branch_not_taken_in_a_loop_body_does_not_warn(fn, args, backend):
    # scikit-fuzzy's centroid (63 "invalid value encountered in scalar divide" warnings in
    # its control-system tests, none plainly): a data-dependent if/else in an element loop
    # is traced on both sides, and NumPy scalar math off the taken path warned on the
    # values it computed there (0 / 0 where y1 == y2 == 0.0)
    def run(f):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = f(*args)
        return out, [(w.category, str(w.message)) for w in caught if "kiln" not in str(w.message)]
    want, want_warnings = run(fn)
    compiled = kiln.compile(fn, backend=backend)
    for _ in range(2):
        got, got_warnings = run(compiled)
        assert got == want and type(got) is type(want)
        assert got_warnings == want_warnings


def test_every_scalar_function_that_warns_is_known_to():
    # numpy_may_warn decides which ops off a taken path get harmless operands: every
    # function and operand types for which some values warn must be among them
    from itertools import product

    from kiln.ops.loops import SCALAR_FUNCTIONS, numpy_may_warn
    edges = {np.float64: [0.0, -1.0, 1e300, np.inf, np.nan], np.float32: [0.0, -1.0, 3e38, np.nan],
             np.int64: [0, -2 ** 63, 2 ** 63 - 1], np.uint8: [0, 255], np.int8: [-128, 0],
             np.bool_: [True], int: [0, -1, 2 ** 63 - 1], float: [0.0, 1e300, np.nan], bool: [True]}
    for fn, f in SCALAR_FUNCTIONS.items():
        if fn.startswith("math.") or fn == "select":
            continue
        for n in (1, 2):
            for types in product(edges, repeat=n):
                if not any(issubclass(t, np.generic) for t in types):
                    continue
                warned = False
                for values in product(*[[t(v) for v in edges[t]] for t in types]):
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        try:
                            f(*values)
                        except Exception:
                            continue
                    warned = warned or bool(caught)
                if warned:
                    assert numpy_may_warn(fn, tuple(t(1) for t in types)), (fn, types)


def _weighted_mean(x, w):
    # scikit-fuzzy's centroid ends ``sum_moment_area / np.fmax(sum_area, eps).astype(float)``:
    # sums a loop carried, a Python float or np.float64 as the data decides, so the call
    # breaks and its resume function is handed the np.float64 np.fmax gave
    s = 0.0
    a = 0.0
    for i in range(x.shape[0]):
        if w[i] > 0.0:
            s += x[i] * w[i]
            a += w[i]
    return s / np.fmax(a, np.finfo(float).eps).astype(float)


def _scalar_methods(s, k):
    return s.astype(float) * 2, s.astype(np.complex128), s.item() + 1, k.astype(np.float64), \
        k.item() // 3, s.conj(), s.astype(np.float32)


def test_a_numpy_scalars_astype_and_item_keep_one_entry():
    # the resume function's np.float64 ``.astype(float)`` specialized its value (guard
    # ``___stack1 == np.float64(2.38...)``): one entry per call, 13 in scikit-fuzzy's tests
    # before the recompile limit. astype to a type it casts to safely, item() and conj()
    # of a run-time NumPy scalar are computed by the entry
    rng = np.random.default_rng(5)
    f = kiln.compile(_weighted_mean, backend="eager")
    for k in range(4):
        x, w = rng.random(7), rng.random(7) - 0.3
        got, want = f(x, w), _weighted_mean(x, w)
        assert got == want and type(got) is type(want)
        if k == 0:
            first = len(f.records)
    assert len(f.records) == first, [r.function for r in f.records]
    g = kiln.compile(_scalar_methods, backend="eager")
    for s, k in [(np.float64(2.5), np.int64(7)), (np.float64(-1e300), np.int64(-2 ** 62)),
                 (np.float64(np.nan), np.int64(0))]:
        got, want = g(s, k), _scalar_methods(s, k)
        assert [type(v) for v in got] == [type(v) for v in want]
        np.testing.assert_array_equal(np.array(got[:6], dtype=complex), np.array(want[:6], dtype=complex))
    # (float64 to float32 may overflow and warn: that one is still specialized)
    assert len(g.cache_entries) == 3


# scikit-fuzzy's _cmeans0 (cluster centers `um.dot(data) / np.atleast_2d(um.sum(axis=1)).T`
# over c clusters): np.atleast_2d of the 1-d sums was a reshape to (1, c), and the reshape's
# target pinned the dynamic length back (guard `u_old.shape[0] == c` after "marking
# dynamic"), one cache entry per cluster count: the recompile limit of 8 in its tests
def _centers(u, data):
    um = u ** 2.0
    return um.dot(data.T) / np.atleast_2d(um.sum(axis=1)).T, np.atleast_3d(um[:, 0]), \
        np.atleast_3d(um), np.atleast_1d(um[0, 0])


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_atleast_nd_keeps_a_dynamic_length_dynamic(backend):
    rng = np.random.default_rng(3)
    f = kiln.compile(_centers, backend=backend)
    data = rng.random((2, 30))
    for c in range(2, 7):
        u = rng.random((c, 30))
        for got, want in zip(f(u, data), _centers(u, data)):
            np.testing.assert_allclose(got, want, rtol=1e-12)
            assert got.shape == want.shape and got.dtype == want.dtype
    assert len(f.cache_entries) == 2


# scikit-fuzzy's cmeans keeps its objective's history, `jm = np.hstack((jm, Jjm))`, across
# its loop (a graph break every iteration): hstack's promotion of the 0-d Jjm carried every
# array's shape as a parameter, jm's growing length with it (guard `jm.shape[0] == 7` after
# "marking dynamic"): one entry per iteration count. An array joined as it is has no shape there
def _history(jm, x, rows, row):
    return np.hstack((jm, x.sum())), np.hstack((x.sum(), jm, 2.0)), np.vstack((rows, row)), \
        np.column_stack((jm, jm))


@pytest.mark.parametrize("backend", ["eager", "cpp"])
def test_hstack_of_a_growing_array_and_a_scalar_keeps_one_entry(backend):
    f = kiln.compile(_history, backend=backend)
    for n in range(2, 7):
        args = (np.arange(float(n)), np.ones(3), np.ones((n, 3)), np.arange(3.0))
        for got, want in zip(f(*args), _history(*args)):
            np.testing.assert_array_equal(got, want)
            assert got.shape == want.shape and got.dtype == want.dtype
    assert len(f.cache_entries) == 2
