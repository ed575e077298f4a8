"""Everyday constructs that broke the graph (stop 54): builtin ``max``/``min`` of a NumPy
float64 scalar and a Python float (``max(np.abs(u).max(), 1e-12)``), whose result's type
is the winner's. Each is checked against the plain function (values, types of returned
scalars) and by its break count, on the counting backend (no kernel build)."""
from __future__ import annotations

import enum

import numpy as np
import pytest

import kiln
from .conftest import run_probe, same_as_numpy


def _floor_scale(u, v):
    s = max(np.abs(u).max(), 1e-12)      # np.float64, or the Python float 1e-12
    lo = min(u.min(), 0.5, v.min())      # NaN first stays first: Python compares, not np.min
    return v / s, s * u, v - lo, s, lo, max(1e-3, u[0])


def _type_observed(u, w32):
    s = max(u.max(), 0.5)
    return w32 / s, isinstance(s, np.float64)   # float32 work keeps a weak Python float


def test_max_and_min_of_numpy_and_python_floats_stay_in_the_graph():
    v = np.linspace(1, 2, 4)
    for u in (np.linspace(-1, 1, 4), np.zeros(4), np.array([np.nan, 1, 2, 3.0]),
              np.array([0.0, -1, 0.25, np.nan])):
        compiled, _, _ = run_probe(_floor_scale, u, v, calls=1)
        assert all(r.graph_break is None for r in compiled.records)
    for u in (np.linspace(-1, 1, 4), -np.ones(4)):   # the winner NumPy's, then Python's
        compiled, _, _ = run_probe(_type_observed, u, np.ones(4, np.float32), calls=1)
    report = kiln.explain(kiln.compile(_type_observed, backend="eager"))(u, np.ones(4, np.float32))
    assert [b.lineno - _type_observed.__code__.co_firstlineno for b in report.break_reasons] == [2], \
        report.break_reasons


def _newton(a, b, y0, x):
    y = y0                                  # a Python float: np.float64 from the first step on
    for _ in range(100):
        step = (np.sum(a * np.exp(-b * y)) - 1.0) / np.sum(-a * b * np.exp(-b * abs(y)))
        y -= step
        if abs(step) < 1e-12:
            break
    return y, _, x * y


def _newton_while(a, b, x):
    y, step = 0.05, 1.0
    while abs(step) > 1e-12:
        step = (np.sum(a * np.exp(-b * y)) - 1.0) / np.sum(-a * b * np.exp(-b * y))
        y = y - step
    return y, x * y


def test_a_newton_loop_from_a_python_float_is_one_loop_node():
    # it broke at the first trip's test ("'y' changes type in the first trip"): traced
    # again with y widened, each first-trip use gives NumPy's result for the weak float
    a, b = np.linspace(0.1, 1, 6), np.linspace(0.5, 2, 6)
    for fn, args in [(_newton, (a, b, 0.05, np.ones(2, np.float32))), (_newton, (a, b, 1.0, np.ones(2))),
                     (_newton_while, (a, b, np.ones(2, np.float32)))]:
        compiled, _, _ = run_probe(fn, *args, calls=1)
        assert all(r.graph_break is None for r in compiled.records), fn.__name__


def _counts(x, k, big):
    n, counts = k, []
    for t in range(3):
        c = int((x > t * 0.25).sum())
        n += c * 3 - 1
        counts.append(c)
    total = big + int(x.astype(np.uint64).sum())     # past int64: Python's ints do not wrap
    return n, counts, total * 4, x * 2


def _forecast(phi, x, horizon):     # Yule-Walker's iterated AR forecast
    hist = list(x[::-1])
    preds = []
    for _ in range(horizon):
        nxt = float(np.dot(phi, hist[:len(phi)]))
        preds.append(nxt)
        hist.insert(0, nxt)
    return np.array(preds), nxt * 0.5 + 1.0, hist


def test_python_floats_read_from_data_stay_in_the_graph():
    # ``float(np.dot(phi, hist))`` broke at float() ("float() of an array reads its data");
    # a float32 dot of a list of float32 items was float64 to capture (its result's meta)
    for dtype in (np.float64, np.float32):
        phi, x = np.array([0.5, -0.25, 0.125], dtype), np.linspace(1, 2, 4).astype(dtype)
        compiled, _, _ = run_probe(_forecast, phi, x, 4, calls=1)
        assert all(r.graph_break is None for r in compiled.records)
        same_as_numpy(kiln.compile(_forecast, backend="cpp"), _forecast, phi, x, 4)


def _kept_fraction(x, details):
    # real18's Haar denoiser: float() of counts and of a uint64 maximum (rounded by the cast)
    kept = float((x != 0).sum())
    top = float(x.astype(np.uint64).max()) * 0.5 + float(x[0] > 0)
    return kept, top, [float((d > 0).sum()) for d in details], x * kept


def test_float_of_integer_and_bool_values_read_from_data_stays_in_the_graph():
    # ("float() of an array reads its data" where the 0-d array was not a float one)
    x = np.array([0, 3, 2 ** 60 + 1, 0, 5], dtype=np.int64)
    compiled, _, _ = run_probe(_kept_fraction, x, [np.arange(3) - 1, np.arange(4)], calls=1)
    assert all(r.graph_break is None for r in compiled.records)


def _bit_weights(x, n):     # local binary patterns' "uniform" weights
    ones = np.array([bin(v).count("1") for v in range(16)])
    return x * ones - ord("A"), hex(12), oct(8), format(5, "08b"), format(2.5, ".3f"), \
        format(n, "b"), chr(ord(b"a") + 2)


def test_bin_hex_oct_format_ord_chr_of_constants_fold():
    # bin() and format() were unknown builtins: a break at each. Of a run-time int they
    # break still (their text would be guarded by value: an entry per value). ord() broke
    # too (real20's Vigenere cipher on bytes: ``(plain - ord("A") + k) % 26``)
    compiled, _, _ = run_probe(_bit_weights, np.ones(16), 6, calls=1)
    breaks = [r.graph_break for r in compiled.records if r.graph_break is not None]
    assert len(breaks) == 1 and "format() of a value known only at run time" in str(breaks[0])


def _sta_lta(a, b, nsta):   # obspy's classic_sta_lta and a C-ordered buffer for a C library
    sta = np.cumsum(a ** 2)
    sta = np.require(sta, dtype=np.float64)
    sta[nsta:] = sta[nsta:] - sta[:-nsta]
    return sta / nsta, np.require(b.T, np.float32, "C"), np.require(a) is a


def test_np_require_of_an_array_is_captured():
    # numpy.require had no kiln op: a break, and the rest of the function after it resumed
    # in a function of its own (real20's STA/LTA trigger)
    run_probe(_sta_lta, np.arange(10, dtype=np.int32), np.ones((3, 2)), 3, calls=1)


def _set_walk(x, k):       # sets of ints: Python's iteration order is their values'
    total = 0.0
    for h in set([k, 9, 1, k, 17]):      # (9, 1 and 17 collide in an 8-slot table)
        total = total * 2 + x[h]
    return total, sorted(frozenset(range(k))), [x[i] for i in set()]


def test_sets_of_known_ints_are_made_and_iterated_in_the_graph():
    # set(...) broke ('constructing builtins.set objects is not supported'), so did the
    # resumed function at iterating the set it was handed
    for k in (3, 4):
        compiled, _, _ = run_probe(_set_walk, np.arange(20.0), k, calls=1)
        assert all(r.graph_break is None for r in compiled.records)


def _keep_labels(labels, keep, x):
    out = np.zeros(labels.shape)
    for k in keep:                       # a set passed in: its items, in its order
        out += (labels == k) * x[k]
    return out, 2 in keep, len(keep), keep


def _grow(x, s):
    t = s
    s |= {7}                             # the set itself changes: t sees it
    return x * len(t), t


def test_a_set_passed_in_is_a_guarded_constant():
    # 'iterating over set object keep is not supported': a break, each step as Python
    labels, x = np.arange(20) % 18, np.arange(20.0)
    compiled = kiln.compile(_keep_labels, backend="eager")
    for keep in ({1, 2}, {2, 1}, {9, 1, 17}, {17, 9, 1}, {True}, {1}, frozenset({3, 1})):
        same_as_numpy(compiled, _keep_labels, labels, set(keep) if type(keep) is set else keep, x)
        if True not in keep:
            given = set(keep)
            assert compiled(labels, given, x)[-1] is given      # the caller's own set
    # ({1, 2} and {2, 1} iterate alike: one entry; {True} is not {1} to an index)
    assert len(compiled.cache_entries) == 5, compiled.cache_entries
    report = kiln.explain(_keep_labels)(labels, {9, 1, 17}, x)
    assert report.graph_break_count == 0 and any(g.startswith("tuple(keep) == (") for g in report.guards), report
    # a set made in the function, changed in place under another name: it was rebound
    # (s = s | {7}), so t kept {1}; a set passed in changed in place runs as Python
    made = kiln.compile(lambda x: _grow(x, {1}), backend="eager")
    same_as_numpy(made, lambda x: _grow(x, {1}), x)
    same_as_numpy(kiln.compile(_grow, backend="eager"), _grow, x, {1})
    report = kiln.explain(_grow)(x, {1})
    assert [b.reason for b in report.break_reasons] == ["an in-place operator on a set passed in runs as Python"]


def _along_axes(a, b, w):
    return (np.apply_along_axis(lambda v: np.convolve(v, w, mode="same"), 0, a),
            np.apply_along_axis(np.sum, -1, b),                              # scalars
            np.apply_along_axis(lambda v, s, t=1: v[:2] * s + t, 1, b, 2.0, t=3),   # another length
            np.apply_along_axis(lambda v: np.outer(v, v), 2, b),             # 2-d results
            np.apply_along_axis(np.mean, 0, a[0]))                           # 1-d: a 0-d result


def test_apply_along_axis_inlines_its_function_per_slice():
    # np.apply_along_axis had no kiln op: a break, NumPy's Python loop (Harris corners)
    rng = np.random.default_rng(0)
    a, b = rng.random((3, 4)), rng.random((2, 3, 4)).astype(np.float32)
    compiled, _, got = run_probe(_along_axes, a, b, np.array([0.25, 0.5, 0.25]), calls=1)
    assert all(r.graph_break is None for r in compiled.records)
    want = _along_axes(a, b, np.array([0.25, 0.5, 0.25]))
    assert [g.strides for g in got] == [w.strides for w in want]   # (NumPy's transposed buffer)


def _count_then_branch(x):
    n = 1 + int((x > 0.5).sum())
    return x[:n] if n > 2 else -n


def test_python_ints_read_from_data_stay_in_the_graph_until_used_otherwise():
    # ``n += int(mask.sum())`` broke at int() ("int() of an array reads its data")
    x = np.linspace(0, 1, 5)
    for k, big in [(5, 2 ** 62), (-(2 ** 70), 0)]:
        compiled, _, _ = run_probe(_counts, x, k, big, calls=1)
        assert all(r.graph_break is None for r in compiled.records)
    compiled = kiln.compile(_count_then_branch, backend="eager")
    for y in (x, x[:2]):
        same_as_numpy(compiled, _count_then_branch, y)
    report = kiln.explain(kiln.compile(_count_then_branch, backend="eager"))(x)
    assert [b.source for b in report.break_reasons] == ["return x[:n] if n > 2 else -n"], report.break_reasons


def _clipped_ranges(ranges, scale, *, max_range=15.0):
    # real18's occupancy grid: a beam's range clipped by a keyword's run-time float
    out = [min(r, max_range) for r in ranges]
    return out, max(ranges.max() * scale, max_range, 0.5)


def test_max_and_min_of_numpy_floats_and_run_time_python_floats_stay_in_the_graph():
    # ("builtin min() compares array values" where the Python float was an argument)
    for ranges, scale in ((np.array([3.0, 20.0, np.nan]), 2.0), (np.array([16.0, -1.0]), 0.5)):
        compiled, _, _ = run_probe(_clipped_ranges, ranges, scale, calls=1)
        assert all(r.graph_break is None for r in compiled.records)
        compiled, _, _ = run_probe(_clipped_ranges, ranges, scale, calls=1, kwargs={"max_range": 2.5})


class _Perm(enum.IntFlag):
    READ = 4
    WRITE = 2
    EXEC = 1


_ROLES = {"viewer": _Perm.READ, "editor": _Perm.READ | _Perm.WRITE}


def _permissions(modes, role):
    # real18's permission bits: an IntFlag's members meet uint8 arrays (NumPy reads a
    # subclass of int as int64, not as a weak Python int), an enum class is iterated
    need = _ROLES[role]
    ok = (modes & np.uint8(need)) == need
    counts = {flag.name: (modes & flag).sum() for flag in _Perm}
    return ok, need, counts, modes + _Perm.WRITE, modes[_Perm.WRITE], np.full(2, _Perm.EXEC)


class _Act(enum.Enum):
    RELU = "relu"
    TANH = "tanh"

    def apply(self, x):
        return np.maximum(x, 0) if self is _Act.RELU else np.tanh(x)

    @property
    def gain(self):
        return 2.0 if self is _Act.RELU else 1.0


def _activate(x, act=_Act.RELU, name="tanh"):
    return act.apply(x) * act.gain, _Act(name).apply(x), act.value


def test_enum_members_and_classes_are_constants():
    # ("P object G['P'].R passed to a NumPy function", "iterating over <flag 'Perm'>")
    modes = np.array([7, 4, 6, 0, 5], np.uint8)
    for role in ("editor", "viewer"):
        compiled, _, got = run_probe(_permissions, modes, role, calls=1)
        assert all(r.graph_break is None for r in compiled.records)
        assert type(got[1]) is _Perm and got[3].dtype == np.int64
    x = np.linspace(-1, 1, 5)
    for args in ((x,), (x, _Act.TANH, "relu")):
        compiled, _, _ = run_probe(_activate, *args, calls=1)
        assert all(r.graph_break is None for r in compiled.records)
    with pytest.raises(ValueError, match="'gelu' is not a valid _Act"):
        kiln.compile(_activate, backend="eager")(x, _Act.RELU, "gelu")


def _check_word(data, big):
    # a Fletcher-like check word from ints read from the data (real18's Fletcher-16)
    s1, s2 = int(data.sum()) % 255, int(data.cumsum().sum()) % 255
    mixed = (int(data.max()) ^ big) & 0xFFFF | (big >> 3) // 7
    return (s2 << 8) | s1, mixed, int(data.min()) << 64, data * 2


def _shift_by_data(data):
    # a count read from data (it may be negative: ValueError): Python computes it
    return 1 << int(data.max()), data * 2


def test_bitwise_shift_and_modulo_of_python_ints_from_data_stay_in_the_graph():
    # ``(s2 << 8) | s1`` broke at the ``<<`` (the cost model then ran the whole function as
    # Python: UnboundLocalError '___tmp0' before the from_start fix)
    for data, big in ((np.arange(9), 5), (np.array([-3, 2 ** 40, 7]), -(2 ** 70))):
        compiled, _, _ = run_probe(_check_word, data, big, calls=1)
        assert all(r.graph_break is None for r in compiled.records)
    report = kiln.explain(kiln.compile(_shift_by_data, backend="eager"))(np.arange(4))
    assert [b.source for b in report.break_reasons] == ["return 1 << int(data.max()), data * 2"]
    same_as_numpy(kiln.compile(_shift_by_data, backend="eager"), _shift_by_data, np.arange(4))


def _pairs_equal_in_a_column(x):
    # a set comprehension of three loops whose test reads the data: on 3.12+ it is inlined,
    # and capture tried the loops more than one way before the break at the test
    return sorted({(i, j) for b in range(2) for i in range(3) for j in range(i + 1, 3)
                   if x[i, b] == x[j, b]})


def test_a_set_comprehension_tried_more_than_once_keeps_only_the_items_python_adds():
    # (SET_ADD added to the set object every attempt shared: all pairs came back, not one)
    x = np.array([[1, 2], [1, 3], [4, 5]])
    compiled = kiln.compile(_pairs_equal_in_a_column, backend="eager")
    for _ in range(2):
        assert compiled(x) == _pairs_equal_in_a_column(x) == [(0, 1)]


def _marks(x):
    seen = {9}
    for i in range(3):
        seen.add(i)            # a set's own method: the statement runs as Python
        if x[i] > 1:
            seen.add(-i)
    return seen


def test_a_set_made_in_the_function_and_added_to_after_a_break_is_a_new_one_each_call():
    # (the bound set.add on the stack at the break was the capture's own set: the first
    # call lost its first item; the set the entry handed the segment was one object for
    # every call, so a later call kept an earlier call's items)
    compiled = kiln.compile(_marks, backend="eager")
    for x in (np.array([1, 2, 3]), np.array([3, 0, 0]), np.array([0, 0, 0])):
        assert compiled(x) == _marks(x)


def _gaps(d):
    return np.diff(d), d + np.timedelta64(1, "D")


def test_dates_break_cleanly_with_a_hint_that_keeps_them_exact():
    # datetime64/timedelta64 arrays are not modelled: a break, NumPy's values; the hint
    # said .astype(np.float64), which loses days past 2**53 ns and NaT
    d = np.array(["2020-01-01", "NaT", "2021-03-01"], dtype="datetime64[D]")
    for got, want in zip(kiln.compile(_gaps, backend="eager")(d), _gaps(d)):
        assert got.dtype == want.dtype and got.view(np.int64).tolist() == want.view(np.int64).tolist()
    [reason] = kiln.explain(_gaps)(d).break_reasons
    assert reason.reason == "array of dtype datetime64[D] is not supported"
    assert "d.view(np.int64)" in reason.hint, reason.hint
