"""Helpers that compile nothing stop being dispatched by the frame hook (kiln/as_python.py).

A helper reached through the hook (called in a statement that runs as Python, or whose
inlining broke) that compiled nothing for arguments of some kinds runs as Python in C
on later calls of those kinds; other kinds (another type, another dtype, larger arrays
where the cost model priced a graph out), other compiled functions and kiln.reset() still
go through the dispatcher, and values match NumPy throughout.
"""
import inspect
import sys
from collections import OrderedDict

import numpy as np
import pytest

import kiln
from kiln.capture import frame_hook
from kiln.config import config

needs_hook = pytest.mark.skipif(not frame_hook.available(), reason="no C compiler for the hook")


@pytest.fixture(autouse=True)
def _cost_model_on(monkeypatch):
    # verdicts are the cost model's (tests/conftest.py turns it off for the rest)
    monkeypatch.setattr(config, "cost_model", True)


def _lookup(table, key):           # no array work: its compiled version compiles nothing
    return table.get(key, 1.0)


def _scaled(x, table, n):
    y = x * 2.0
    try:                           # the try statement runs as Python, with the hook on
        kiln.graph_break()         # a break in its body: the try statement runs as Python
        for _ in range(n):
            y = y * _lookup(table, "scale")
    except KeyError:
        pass
    return y + 1.0


@needs_hook
def test_a_helper_that_compiles_nothing_stops_being_dispatched():
    kiln.reset()
    compiled = kiln.compile(_scaled)
    x, table = np.linspace(0.0, 1.0, 2000), {"scale": 0.5}
    np.testing.assert_array_equal(compiled(x, table, 3), _scaled(x, table, 3))
    assert frame_hook.is_flagged(_lookup.__code__)
    intercepted, skipped = frame_hook.intercepted(), frame_hook.skipped()
    for n in (3, 5):
        np.testing.assert_array_equal(compiled(x, table, n), _scaled(x, table, n))
    assert frame_hook.intercepted() == intercepted        # no call left C
    assert frame_hook.skipped() == skipped + 8
    assert any(r.graph is not None for r in compiled.records)   # the caller still compiles
    assert not frame_hook.installed()


def _maybe_upcast(v):
    if v.dtype == np.float64:
        return v                   # float64: nothing to compile
    return v.astype(np.float64) * 3.0


def _upcasts(x, n):
    y = x + 0                      # keeps x's dtype
    try:
        kiln.graph_break()         # a break in its body: the try statement runs as Python
        for _ in range(n):
            y = _maybe_upcast(y)
    except KeyError:
        pass
    return y


@needs_hook
def test_a_helper_that_compiled_nothing_for_one_dtype_compiles_for_another():
    kiln.reset()
    compiled = kiln.compile(_upcasts)
    x64 = np.arange(5000.0)
    np.testing.assert_array_equal(compiled(x64, 2), _upcasts(x64, 2))
    assert not any("astype" in r.ops for r in compiled.records)
    skipped = frame_hook.skipped()
    np.testing.assert_array_equal(compiled(x64, 2), _upcasts(x64, 2))
    assert frame_hook.skipped() == skipped + 2
    x32 = np.arange(5000.0, dtype=np.float32)
    got = compiled(x32, 1)
    np.testing.assert_array_equal(got, _upcasts(x32, 1))
    assert got.dtype == np.float64
    assert any("astype" in r.ops for r in compiled.records)    # compiled on its own


def _times(v, s):
    return v * s


def _repeat(x, n):
    try:
        kiln.graph_break()         # a break in its body: the try statement runs as Python
        for _ in range(n):
            x = _times(x, 2.0)
    except KeyError:
        pass
    return x


@needs_hook
def test_a_helper_that_compiled_nothing_for_floats_compiles_for_arrays():
    kiln.reset()
    compiled = kiln.compile(_repeat)
    assert compiled(1.5, 3) == _repeat(1.5, 3)
    assert compiled(1.5, 3) == 12.0
    x = np.arange(5000.0)
    np.testing.assert_array_equal(compiled(x, 3), _repeat(x, 3))
    assert ["multiply"] in [r.ops for r in compiled.records]


def _small_work(v):
    return v * 2.0                 # priced out on small arrays by the cpp cost model


def _calls_small_work(x, n):
    y = x + 1.0
    try:
        kiln.graph_break()         # a break in its body: the try statement runs as Python
        for _ in range(n):
            y = _small_work(y)
    except KeyError:
        pass
    return y


@needs_hook
def test_verdicts_belong_to_one_compiled_function_and_one_size():
    kiln.reset()
    as_cpp = kiln.compile(_calls_small_work)
    small = np.arange(5.0)
    for _ in range(2):
        np.testing.assert_array_equal(as_cpp(small, 2), _calls_small_work(small, 2))
    # the code after the break is captured once to be priced (partial.from_start), and the
    # verdict holds for the second call: one capture of the multiply, not one per call
    multiplies = lambda f: sum(r.ops == ["multiply"] for r in f.records)  # noqa: E731
    assert multiplies(as_cpp) == 1
    # the eager backend compiles every graph: the cpp function's verdict is not its own
    as_eager = kiln.compile(_calls_small_work, backend="eager")
    np.testing.assert_array_equal(as_eager(small, 2), _calls_small_work(small, 2))
    assert ["multiply"] in [r.ops for r in as_eager.records]
    # larger arrays than the verdict's go to the dispatcher again, and compile
    large = np.arange(5000.0)
    np.testing.assert_array_equal(as_cpp(large, 2), _calls_small_work(large, 2))
    assert multiplies(as_cpp) == 2


@needs_hook
def test_reset_forgets_verdicts():
    kiln.reset()
    compiled = kiln.compile(_scaled)
    x, table = np.linspace(0.0, 1.0, 2000), {"scale": 0.5}
    compiled(x, table, 2)
    assert frame_hook._ident(_lookup.__code__) in frame_hook._verdicts
    kiln.reset()
    assert not frame_hook._verdicts
    intercepted, skipped = frame_hook.intercepted(), frame_hook.skipped()
    np.testing.assert_array_equal(compiled(x, table, 2), _scaled(x, table, 2))
    assert frame_hook.intercepted() == intercepted + 1    # dispatched again, then judged
    assert frame_hook.skipped() == skipped + 1


@needs_hook
def test_equal_code_objects_keep_their_own_flags_and_verdicts():
    # One helper exec'd twice: two code objects that compare equal (same file name, same
    # line). The C hook keeps flags and verdicts per object, and so must frame_hook's
    # tables: keyed by equality, the second's verdicts freed the tuple the first's slot
    # still pointed at, and unflagging one unflagged the other in Python only.
    kiln.reset()
    source = inspect.getsource(_lookup) + inspect.getsource(_scaled)
    twins = []
    for _ in range(2):
        ns = {"kiln": kiln}
        exec(compile(source, "<kiln-twins>", "exec"), ns)
        twins.append(ns)
    a, b = (ns["_lookup"].__code__ for ns in twins)
    assert a == b and a is not b
    x, table = np.linspace(0.0, 1.0, 2000), {"scale": 0.5}
    compiled = [kiln.compile(ns["_scaled"]) for ns in twins]
    for _ in range(3):
        for ns, f in zip(twins, compiled):
            np.testing.assert_array_equal(f(x, table, 2), ns["_scaled"](x, table, 2))
    assert len(frame_hook._verdicts) == 2     # one per code object
    assert frame_hook.is_flagged(a) and frame_hook.is_flagged(b)
    frame_hook.unflag(a)
    assert not frame_hook.is_flagged(a) and frame_hook.is_flagged(b)
    kiln.reset()


def _reads_items(x, d):
    s = [v.item() for v in d.values()]   # a break inside the comprehension
    return x * sum(s)


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12 inlines comprehensions (PEP 709)")
@needs_hook
def test_a_comprehension_is_never_flagged():
    # Its code cannot be a cache entry: it always ran as Python, after a dispatch per call
    kiln.reset()
    compiled = kiln.compile(_reads_items)
    d = OrderedDict(a=np.float64(1.0), b=np.float64(2.0))
    for _ in range(3):
        np.testing.assert_array_equal(compiled(np.ones(3), d), _reads_items(np.ones(3), d))
    assert not any(code.co_name == "<listcomp>" for _id, code in frame_hook._factories)


def _mro(klass):
    return type.__dict__["__mro__"].__get__(klass)   # inspect's _static_getmro


def _mro_sizes(x, objs):
    y = x * 2.0
    n = 0
    try:
        kiln.graph_break()         # a break in its body: the try statement runs as Python
        for o in objs:
            try:
                n += len(_mro(o))
            except TypeError:      # not a class: the caller expects it
                n -= 1
    except KeyError:
        pass
    return y + n


@needs_hook
def test_kinds_an_entry_serves_beyond_its_verdict_and_calls_that_raise_are_remembered():
    # The entry compiled for _mro(int) has no guard on its argument's type, so it served
    # _mro(Sized) (type ABCMeta) and _mro(None) (raises) too, each dispatched on every
    # call (scikit-learn's cosine_similarity: inspect's _static_getmro, 16 a call)
    from collections.abc import Sized
    kiln.reset()
    compiled = kiln.compile(_mro_sizes)
    x, objs = np.linspace(0.0, 1.0, 2000), [int, Sized, None, np.float64]
    np.testing.assert_array_equal(compiled(x, objs), _mro_sizes(x, objs))
    intercepted, skipped = frame_hook.intercepted(), frame_hook.skipped()
    np.testing.assert_array_equal(compiled(x, objs), _mro_sizes(x, objs))
    assert frame_hook.intercepted() == intercepted      # none dispatched: all run in C
    assert frame_hook.skipped() > skipped


@needs_hook
def test_a_segment_whose_helpers_all_run_as_python_stops_installing_the_hook():
    from kiln.capture.partial import Hooked
    kiln.reset()
    compiled = kiln.compile(_scaled)
    x, table = np.linspace(0.0, 1.0, 2000), {"scale": 0.5}
    compiled(x, table, 3)                     # dispatched: the helper compiles nothing
    for _ in range(Hooked.QUIET_RUNS):
        skipped = frame_hook.skipped()
        np.testing.assert_array_equal(compiled(x, table, 3), _scaled(x, table, 3))
    assert frame_hook.skipped() == skipped + 3    # hooked, the helper run as Python in C
    for _ in range(3):
        np.testing.assert_array_equal(compiled(x, table, 3), _scaled(x, table, 3))
    assert frame_hook.skipped() == skipped + 3    # no hook at all now


def _tanh_twice(v):
    return np.tanh(v) * 2.0


def _calls_tanh_twice(x, n):
    y = x + 1.0
    try:
        kiln.graph_break()         # a break in its body: the try statement runs as Python
        for _ in range(n):
            y = _tanh_twice(y)
    except KeyError:
        pass
    return y


@needs_hook
def test_a_segment_whose_helper_compiles_stays_hooked():
    from kiln.capture.partial import Hooked
    kiln.reset()
    compiled = kiln.compile(_calls_tanh_twice)
    x = np.linspace(0.0, 1.0, 5000)
    for _ in range(Hooked.QUIET_RUNS + 3):
        intercepted = frame_hook.intercepted()
        np.testing.assert_allclose(compiled(x, 2), _calls_tanh_twice(x, 2), rtol=1e-12)
        assert frame_hook.intercepted() == intercepted + 2
    assert ["tanh", "multiply"] in [r.ops for r in compiled.records]


class _Caller:
    def go(self, v):
        return _tanh_twice(v)      # reached through a method: B never flags _tanh_twice


def _calls_through_a_method(x, caller):
    y = x + 1.0
    try:                           # _lookup: B's own flagged helper, so the hook is on
        kiln.graph_break()         # a break in its body: the try statement runs as Python
        y = caller.go(y) * _lookup({"scale": 1.0}, "scale")
    except KeyError:
        pass
    return y


@needs_hook
def test_a_code_flagged_by_another_compiled_function_is_not_dispatched():
    # What a compiled function compiles must not depend on which others ran before it:
    # scikit-learn's normalize took 1.00x NumPy's time alone and 1.9x after another
    # compiled function had flagged its validation helpers (they compiled small graphs
    # in normalize's family, which then kept the hook on)
    kiln.reset()
    x = np.linspace(0.0, 1.0, 5000)
    alone = kiln.compile(_calls_through_a_method)
    np.testing.assert_allclose(alone(x, _Caller()), _calls_through_a_method(x, _Caller()), rtol=1e-12)
    ops_alone = sorted(map(tuple, (r.ops for r in alone.records)))
    kiln.reset()
    first = kiln.compile(_calls_tanh_twice)
    first(x, 1)
    assert frame_hook.is_flagged(_tanh_twice.__code__)
    after = kiln.compile(_calls_through_a_method)
    intercepted = frame_hook.intercepted()
    for _ in range(3):
        np.testing.assert_allclose(after(x, _Caller()), _calls_through_a_method(x, _Caller()),
                                   rtol=1e-12)
    assert frame_hook.intercepted() == intercepted + 1    # its own _lookup, once
    assert sorted(map(tuple, (r.ops for r in after.records))) == ops_alone
    assert ("tanh", "multiply") not in ops_alone
