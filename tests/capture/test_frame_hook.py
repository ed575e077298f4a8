"""The PEP 523 hook: flagged calls are intercepted (only while active, only on the thread
that activated it), exceptions and generator closes pass through untouched, unflagged
code is unaffected, and without the installed module and a compiler kiln falls back to
call-site wrapping."""
import threading
import warnings

import numpy as np
import pytest

import kiln
from kiln.capture import frame_hook

needs_hook = pytest.mark.skipif(not frame_hook.available(), reason="no C compiler for the hook")


def target(x, y=1, *rest, k=2, **kw):
    return ("original", x, y, rest, k, kw)


def plain(x):
    return x + 1


@pytest.fixture
def flagged():
    seen = []

    def factory(fn):
        def replacement(*args, **kwargs):
            seen.append((args, kwargs))
            return ("replaced",) + args
        return replacement
    frame_hook.forget()
    frame_hook.flag(target.__code__, factory)
    yield seen
    frame_hook.unflag(target.__code__)
    frame_hook.forget()


@needs_hook
def test_flagged_call_is_intercepted_only_while_active(flagged):
    assert target(1) == ("original", 1, 1, (), 2, {})
    before = frame_hook.intercepted()
    with frame_hook.active():
        assert frame_hook.installed()
        assert target(1, 5, 6, 7, k=3, z=4) == ("replaced", 1, 5, 6, 7)
    assert not frame_hook.installed()           # unhooked again: CPython's fast calls
    assert flagged == [((1, 5, 6, 7), {"k": 3, "z": 4})]
    assert frame_hook.intercepted() == before + 1
    assert target(1)[0] == "original"


@needs_hook
def test_unflagged_code_is_unaffected(flagged):
    before = frame_hook.intercepted()
    with frame_hook.active():
        assert [plain(i) for i in range(1000)] == list(range(1, 1001))
        assert sorted([3, 1, 2], key=lambda v: -v) == [3, 2, 1]
    assert frame_hook.intercepted() == before


@needs_hook
def test_exceptions_pass_through_the_hook():
    def boom(x):
        raise KeyError(x)

    frame_hook.flag(boom.__code__, lambda fn: None)          # run the original: it raises
    try:
        with frame_hook.active(), pytest.raises(KeyError):
            boom(1)
    finally:
        frame_hook.unflag(boom.__code__)

    def bad_replacement(fn):
        def replacement(*args):
            raise ValueError("from the replacement")
        return replacement
    frame_hook.forget()
    frame_hook.flag(plain.__code__, bad_replacement)
    try:
        with frame_hook.active(), pytest.raises(ValueError, match="from the replacement"):
            plain(1)
    finally:
        frame_hook.unflag(plain.__code__)
        frame_hook.forget()

    def broken_factory(fn):
        raise RuntimeError("dispatcher failed")
    frame_hook.flag(boom.__code__, broken_factory)
    try:
        with frame_hook.active(), pytest.raises(RuntimeError, match="dispatcher failed"):
            boom(1)
    finally:
        frame_hook.unflag(boom.__code__)


@needs_hook
def test_generators_close_through_the_hook():
    cleaned = []

    def gen():
        try:
            yield 1
            yield 2
        finally:
            cleaned.append(1)

    frame_hook.flag(gen.__code__, lambda fn: None)
    try:
        with frame_hook.active():
            g = gen()
            assert next(g) == 1
            g.close()                          # throw_flag: the pending exception is untouched
            h = gen()
            next(h)
            with pytest.raises(ZeroDivisionError):
                h.throw(ZeroDivisionError)
        assert cleaned == [1, 1]
        g2 = gen()
        with frame_hook.active():
            next(g2)
        g2.close()                             # closed after the hook went away
        assert cleaned == [1, 1, 1]
    finally:
        frame_hook.unflag(gen.__code__)


@needs_hook
def test_four_threads(flagged):
    results = {}
    errors = []
    barrier = threading.Barrier(4)

    def work(i):
        try:
            barrier.wait()
            out = []
            for j in range(200):
                if i % 2 == 0:
                    with frame_hook.active():
                        out.append(target(j)[0])
                else:                          # never active here: always the original
                    out.append(target(j)[0])
            results[i] = out
        except Exception as e:  # pragma: no cover
            errors.append(e)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(4):
        assert set(results[i]) == ({"replaced"} if i % 2 == 0 else {"original"})
    assert not frame_hook.installed()


@needs_hook
def test_reentrant_activation_and_nested_interception(flagged):
    def outer():
        with frame_hook.active():
            return target(1)
    with frame_hook.active():
        assert outer()[0] == "replaced"
        assert frame_hook.installed()
        assert target(2)[0] == "replaced"
    assert not frame_hook.installed()


def _loop_helper(v):
    return np.tanh(v) * 2


@needs_hook
def test_helpers_called_in_a_statement_that_runs_as_python_are_compiled():
    def f(x, n):
        y = x + 1
        try:                       # the try statement runs as Python
            kiln.graph_break()     # (a break in its body)
            for i in range(n):
                y = _loop_helper(y)
        except ValueError:
            pass
        return y * 3
    compiled = kiln.compile(f)
    got = compiled(np.ones(3), 3)
    np.testing.assert_allclose(got, f(np.ones(3), 3))
    names = [r.ops for r in compiled.records]
    assert ["tanh", "multiply"] in names       # the helper, compiled on its own
    assert not frame_hook.installed()


def _breaking_helper(p):
    w = p * 2
    total = float(p.sum())         # breaks the graph: the caller calls this helper as a whole
    return w + total


def _calls_breaking_helper(x):
    return _breaking_helper(x) - 1


@needs_hook
def test_each_compiled_function_gets_its_own_compiled_helpers():
    # A helper that two compiled functions call was compiled once, by the first, and that
    # replacement served both: an eager-backend function ran the C++ one's kernels.
    from kiln.runtime.build import stats
    kiln.reset()
    as_cpp = kiln.compile(_calls_breaking_helper, backend="cpp")
    np.testing.assert_array_equal(as_cpp(np.ones(5)), np.full(5, 6.0))
    as_eager = kiln.compile(_calls_breaking_helper, backend="eager")
    builds = stats["builds"] + stats["disk_hits"]
    np.testing.assert_array_equal(as_eager(np.ones(7)), np.full(7, 8.0))
    assert stats["builds"] + stats["disk_hits"] == builds      # eager builds no kernel
    assert [r.ops for r in as_eager.records] and [r.ops for r in as_cpp.records]
    assert not frame_hook.installed()


def test_no_compiler_falls_back_to_call_site_wrapping(tmp_path, monkeypatch):
    import sys
    from .test_partial import k_helper, run_counts
    monkeypatch.setitem(sys.modules, "kiln._native.frame_hook", None)   # not installed
    monkeypatch.setattr(frame_hook, "_lib", None)
    monkeypatch.setattr(frame_hook, "_failed", {})
    monkeypatch.setattr(kiln.config, "cxx", str(tmp_path / "no-such-compiler"))
    monkeypatch.setattr(kiln.config, "cache_dir", str(tmp_path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert not frame_hook.available()
        assert not frame_hook.available()      # said once
        counts, _, _ = run_counts(k_helper, np.arange(6.0))
    assert counts == [4, 4]                    # the helper still compiles (wrapped at the call)
    messages = [str(w.message) for w in caught if "frame-evaluation hook" in str(w.message)]
    assert len(messages) == 1 and "falling back to wrapping" in messages[0]


@needs_hook
def test_intercepted_calls_free_their_arguments():
    # From 3.12 the hook itself must clear and pop a frame it replaces: skipping that kept
    # every intercepted call's arguments alive (and its data-stack slots).
    import gc
    import weakref

    class Arg:
        pass

    def take(a, b=None):
        return "original"

    frame_hook.forget()
    frame_hook.flag(take.__code__, lambda fn: (lambda a, b=None: "replaced"))
    refs = []
    try:
        with frame_hook.active():
            for _ in range(2000):
                arg = Arg()
                refs.append(weakref.ref(arg))
                assert take(arg, b=[arg]) == "replaced"
                del arg
    finally:
        frame_hook.unflag(take.__code__)
        frame_hook.forget()
    gc.collect()
    assert sum(r() is not None for r in refs) == 0


def test_free_threaded_builds_fall_back(monkeypatch):
    # The hook is refused there: kiln warns once and wraps helpers at call sites instead.
    monkeypatch.setattr(frame_hook, "_lib", None)
    monkeypatch.setattr(frame_hook, "_failed", {})
    monkeypatch.setattr(frame_hook, "free_threaded", lambda: True)
    with pytest.warns(RuntimeWarning, match="free-threaded"):
        assert frame_hook.load() is None
    assert not frame_hook.available()
