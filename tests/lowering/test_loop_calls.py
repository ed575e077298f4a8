"""How a compiled graph calls its loops (issue #13's per-call cost): the generated wrapper
calls a loop's C++ runner straight (``LoopBody.call``/``call_owned``, set by
kiln/lowering/loop_runner.py), and a graph that writes its one array argument takes
aot's short path from C. Each against plain Python: values, the state of mutated
arguments, exceptions raised inside the loop."""
from __future__ import annotations

import numpy as np
import pytest

import kiln
from kiln.aot.runtime import AOTFunction
from kiln.ops import loops as loop_ops


def crc(data):
    c = np.uint32(0xFFFFFFFF)
    for k in range(data.shape[0]):
        c = c ^ np.uint32(data[k])
        for _ in range(8):
            c = (c >> np.uint32(1)) ^ (np.uint32(0xEDB88320) & (np.uint32(0) - (c & np.uint32(1))))
    return c ^ np.uint32(0xFFFFFFFF)


def prefix_table(a):
    n = a.shape[0]
    d = np.zeros((n + 1,), dtype=np.int64)
    for i in range(1, n + 1):
        d[i] = d[i - 1] + a[i - 1] * i
    return d


def gather_sum(a, idx):
    s = 0.0
    for k in range(idx.shape[0]):
        s += a[idx[k]]
    return s


def relax(u, tol):
    n = u.shape[0]
    err = tol + 1.0
    steps = 0
    while err > tol:
        err = 0.0
        for i in range(1, n - 1):
            new = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1])
            err = max(err, float(abs(new - u[i])))
            u[i] = new
        steps += 1
    return steps


def bumps(u, idx):
    for k in range(idx.shape[0]):
        u[idx[k]] += 1.0
    return u[0] + u[-1]


def merge_head(a, b):
    """The loop writes an array the graph made (np.zeros: given up to it, call_owned)
    at an index it cannot prove in range: its runner copies the array first."""
    out = np.zeros(a.shape[0] + b.shape[0])
    i = j = k = 0
    while i < a.shape[0] and j < b.shape[0]:
        if a[i] <= b[j]:
            out[k] = a[i]
            i += 1
        else:
            out[k] = b[j]
            j += 1
        k += 1
    return out, k


@pytest.fixture
def counted(monkeypatch):
    """Counts the loop runs that go through the generic path (ops/loops.py _run_loop)."""
    calls = []
    generic = loop_ops._run_loop

    def run_loop(*args, **kwargs):
        calls.append(args[5])
        return generic(*args, **kwargs)
    monkeypatch.setattr(loop_ops, "_run_loop", run_loop)
    return calls


@pytest.mark.parametrize("fn, make", [
    (crc, lambda rng: (rng.integers(0, 256, 37).astype(np.uint8),)),
    (prefix_table, lambda rng: (rng.integers(-50, 50, 23),)),
    (merge_head, lambda rng: (np.sort(rng.random(5)), np.sort(rng.random(4)))),
])
def test_a_wrapper_calls_the_loop_runner_straight(fn, make, counted):
    rng = np.random.default_rng(3)
    compiled = kiln.compile(fn)
    compiled(*make(rng))            # compiles; the runner is built
    counted.clear()
    before = dict(loop_ops.stats)
    for _ in range(3):
        args = make(rng)
        got, want = compiled(*args), fn(*args)
        assert type(got) is type(want)
        for g, w in zip(got, want) if type(want) is tuple else [(got, want)]:
            assert type(g) is type(w) and np.array_equal(g, w)
            assert getattr(g, "dtype", None) == getattr(w, "dtype", None)
    assert counted == []            # no generic dispatch: the wrapper called the runner
    assert loop_ops.stats["native"] - before["native"] >= 3
    assert loop_ops.stats["reference"] == before["reference"]


def test_a_straight_call_that_fails_its_checks_runs_as_python(counted):
    """An index the runner finds out of range: the generic path runs the reference,
    which raises Python's IndexError; in-range calls stay native."""
    rng = np.random.default_rng(4)
    a = rng.random(10)
    compiled = kiln.compile(gather_sum)
    ok = rng.integers(-10, 10, 6)
    assert compiled(a, ok) == gather_sum(a, ok)
    counted.clear()
    bad = ok.copy()
    bad[4] = 10
    with pytest.raises(IndexError):
        gather_sum(a, bad)
    with pytest.raises(IndexError):
        compiled(a, bad)
    assert counted                  # the failed runner handed over to the generic path
    ok2 = rng.integers(-10, 10, 6)
    assert compiled(a, ok2) == gather_sum(a, ok2)


def test_a_graph_writing_its_one_array_takes_the_short_path(monkeypatch):
    """relax writes u and reads a float: no two inputs can overlap, so the entry calls
    aot's short path from C (AOTFunction.__call__ runs only for the first call)."""
    calls = []
    general = AOTFunction.__call__

    def call(self, *args):
        calls.append(self)
        return general(self, *args)
    monkeypatch.setattr(AOTFunction, "__call__", call)
    rng = np.random.default_rng(5)
    compiled = kiln.compile(relax)
    for k in range(4):
        u = np.r_[0.0, rng.random(20), 0.0]
        mine = u.copy()
        assert compiled(mine, 1e-3) == relax(u, 1e-3)
        assert np.array_equal(mine, u)
        if k == 1:
            calls.clear()
    assert calls == []


def test_the_short_path_of_a_writing_graph_leaves_pythons_state_on_an_error():
    """bumps writes u, then meets an index out of range: u holds the writes before it,
    as in Python, on the short path too."""
    rng = np.random.default_rng(6)
    compiled = kiln.compile(bumps)
    for _ in range(2):
        u = rng.random(8)
        idx = rng.integers(0, 8, 5)
        mine = u.copy()
        assert compiled(mine, idx) == bumps(u, idx)
        assert np.array_equal(mine, u)
    idx = np.array([1, 2, 9, 3])
    u = rng.random(8)
    mine = u.copy()
    with pytest.raises(IndexError):
        bumps(u, idx)
    with pytest.raises(IndexError):
        compiled(mine, idx)
    assert np.array_equal(mine, u)


def sweep(u, f):
    n, m = u.shape
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            u[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - f[i, j])
    return u


@pytest.fixture
def general_calls(monkeypatch):
    """Counts the calls that reach AOTFunction.__call__ (not a short path taken in C)."""
    calls = []
    general = AOTFunction.__call__

    def call(self, *args):
        calls.append(self)
        return general(self, *args)
    monkeypatch.setattr(AOTFunction, "__call__", call)
    return calls


def test_a_loop_writing_a_donated_array_is_called_straight(counted, general_calls):
    """sweep writes u in place (donated, loop_donate.py) and reads f: the entry takes aot's
    overlap-checked short path from C, the wrapper calls the runner straight."""
    rng = np.random.default_rng(7)
    compiled = kiln.compile(sweep)
    for k in range(4):
        u, f = rng.random((6, 5)), rng.random((6, 5))
        mine = u.copy()
        assert compiled(mine, f) is mine
        sweep(u, f)
        assert np.array_equal(mine, u)
        if k == 1:
            counted.clear()
            general_calls.clear()
            before = dict(loop_ops.stats)
    assert counted == [] and general_calls == []
    assert loop_ops.stats["inplace"] - before["inplace"] == 2


@pytest.mark.parametrize("case", ["overlap", "same", "numpy scalar", "read-only"])
def test_inputs_the_c_short_path_does_not_take_still_match_python(case, general_calls):
    rng = np.random.default_rng(8)
    compiled = kiln.compile(sweep)
    for _ in range(2):
        u, f = rng.random((6, 5)), rng.random((6, 5))
        compiled(u.copy(), f)
    general_calls.clear()
    base = rng.random((7, 5))
    mine = base.copy()
    if case == "overlap":          # f is u shifted by a row: reads see the writes
        args, margs = (base[1:], base[:-1]), (mine[1:], mine[:-1])
    elif case == "same":
        args, margs = (base[:6], base[:6]), None
        margs = (mine[:6],) * 2
    elif case == "numpy scalar":
        args, margs = (base[:6], np.float64(2.0) + base[:6]), (mine[:6], np.float64(2.0) + mine[:6])
    else:
        base.flags.writeable = False
        mine.flags.writeable = False
        args, margs = (base[:6], rng.random((6, 5))), None
        margs = (mine[:6], args[1])
    try:
        want = sweep(*args)
    except ValueError as e:
        with pytest.raises(ValueError, match="read-only"):
            compiled(*margs)
        assert "read-only" in str(e)
    else:
        assert compiled(*margs) is margs[0]
        assert np.array_equal(want, margs[0])
    assert np.array_equal(mine, base)


def test_a_loop_that_must_copy_its_array_is_called_straight(counted):
    """relax's runner may fail after it wrote (its Python-int counter is checked), so it
    writes a copy of u: the straight call makes it, as _run_loop would; u is written back."""
    rng = np.random.default_rng(9)
    compiled = kiln.compile(relax)
    for k in range(4):
        u = np.r_[0.0, rng.random(20), 0.0]
        mine = u.copy()
        assert compiled(mine, 1e-3) == relax(u, 1e-3)
        assert np.array_equal(mine, u)
        if k == 1:
            counted.clear()
    assert counted == []


def relu_sq_of_floats(x):
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        v = float(x[i])
        out[i] = v * v if v > 0 else 0.0   # a Python float compared with the int literal 0
    return out


def test_a_python_float_compared_with_a_small_int_literal_needs_no_check():
    """``v > 0`` on a Python float: 0 is exact in a double, so the loop's fast variant has
    no run-time check and writes its output in place (with the check it could fail once
    started, so each call copied the output first: 14x the loop's own time on 1e6)."""
    compiled = kiln.compile(relu_sq_of_floats)
    rng = np.random.default_rng(3)
    for n in (50, 80, 90, 100):   # the second size makes the dimension dynamic
        x = rng.standard_normal(n)
        before = dict(loop_ops.stats)
        assert np.array_equal(compiled(x), relu_sq_of_floats(x))
    assert loop_ops.stats["inplace"] - before["inplace"] == 1


def roots_of(parent, n):
    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    return [find(i) for i in range(n)]


def test_a_numpy_bool_operand_goes_through_the_c_launcher(monkeypatch):
    """A loop's bool slot given a NumPy bool (the flag "is i NumPy typed" one loop node
    hands the next, union-find's ``[find(i) for i in ...]``) is converted for the C
    launcher, which takes Python bools only: it went to the cffi call instead, ~5 us more
    per loop (the union-find program ran 6x NumPy's time)."""
    from kiln.runtime import loader
    allocations = []
    load = loader.load_library

    class CountingFFI:
        def __init__(self, ffi):
            self._ffi = ffi

        def __getattr__(self, name):
            return getattr(self._ffi, name)

        def new(self, *args):       # the cffi path's result struct: one per call
            allocations.append(args)
            return self._ffi.new(*args)

    def counting_load(*args, **kwargs):
        lib, ffi = load(*args, **kwargs)
        return lib, CountingFFI(ffi)
    monkeypatch.setattr(loader, "load_library", counting_load)
    parent = np.array([0, 0, 1, 2, 3, 4, 6, 6])
    compiled = kiln.compile(roots_of)
    compiled(parent.copy(), 8)
    allocations.clear()
    mine, theirs = parent.copy(), parent.copy()
    got, want = compiled(mine, 8), roots_of(theirs, 8)
    assert [type(v) for v in got] == [type(v) for v in want] and got == want
    assert np.array_equal(mine, theirs)
    assert allocations == []


def test_a_numpy_scalar_constant_is_made_once_not_per_call(tmp_path, monkeypatch):
    """crc's carried ``np.uint32(0xFFFFFFFF)`` went to its loop as ``np.uint32(4294967295)``
    written inside ``call``: NumPy builds an integer scalar in 0.2-0.5 us, a third of a
    one-byte crc call. The wrapper makes it once, as a module global."""
    from kiln.config import config
    monkeypatch.setattr(config, "debug_dir", str(tmp_path))
    data = np.arange(5, dtype=np.uint8)
    got = kiln.compile(crc)(data)
    assert type(got) is np.uint32 and got == crc(data)
    wrappers = [p for p in tmp_path.glob("*/wrapper.py") if not p.parent.name.endswith("_loops")]
    text = wrappers[0].read_text()
    head, body = text.split("\ndef call(")
    body = body.split("\ndef _example")[0]
    assert "np.uint32(4294967295)" in head and "np.uint32(" not in body, text


def test_the_launcher_makes_a_loops_numpy_scalar_results_itself():
    """A runner's NumPy scalar results come out of the C launcher as NumPy scalars:
    ``np.uint32(r[1])`` in the generated runner cost 0.2-0.4 us a call (NumPy 2 builds
    an integer scalar from a Python int slowly). The launcher refuses a type whose scalars
    it cannot lay out as NumPy's (then the runner converts in Python)."""
    from kiln.runtime.launch import module
    data = np.arange(9, dtype=np.uint8)
    compiled = kiln.compile(crc)
    got = compiled(data)
    assert type(got) is np.uint32 and got == crc(data)
    from kiln.lowering.loop_runner import prepare_loops
    graph = compiled.records[0].graph
    prepare_loops(graph)
    source = next(n.kwargs["body"].native.source for n in graph.calls if n.target.name == "loop")
    assert "return (r[1], )" in source, source
    m = module()
    if m is None:
        pytest.skip("no C launcher here")
    for bad in ((int, "q"), (np.int16, "q"), (np.float64, "q"), (np.int64, "d"), (np.uint8, "x")):
        with pytest.raises(ValueError, match="cannot make"):
            m.Launcher(1, "q", np.ndarray, print, None, "q", False, None, 7, None, (bad,))
    m.Launcher(1, "q", np.ndarray, print, None, "q", False, None, 7, None, ((np.int16, "h"),))


def bump(u):
    for i in range(u.shape[0]):
        u[i] += 1.0
    return u


def test_the_launcher_tests_that_an_array_written_in_place_is_writable(tmp_path, monkeypatch):
    """A donated array's ``a.flags.writeable`` (NumPy builds a flags object: ~0.2 us) was
    the runner's first Python test on every call; the launcher reads the flag itself
    (code 'w') and gives ``(4, ...)`` for a read-only array without running the loop."""
    from kiln.lowering.loop_runner import prepare_loops
    compiled = kiln.compile(bump)
    x = np.arange(4.0)
    assert compiled(x) is x and np.array_equal(x, np.arange(4.0) + 1)
    graph = compiled.records[0].graph
    prepare_loops(graph)
    native = next(n.kwargs["body"].native for n in graph.calls if n.target.name == "loop")
    assert "flags.writeable" not in native.source, native.source
    frozen = np.arange(4.0)
    frozen.flags.writeable = False
    assert native(0, 4, 1, (frozen,), (), True) is None
    assert np.array_equal(frozen, np.arange(4.0))
    u = np.arange(4.0)
    (out,) = native(0, 4, 1, (u,), (), True)
    assert out is u and np.array_equal(u, np.arange(4.0) + 1)
    with pytest.raises(ValueError, match="read-only"):
        compiled(frozen)
    from kiln.config import config
    monkeypatch.setattr(config, "debug_dir", str(tmp_path))
    rod = np.r_[1.0, np.linspace(0.0, 1.0, 6), 2.0]      # relax writes its donated u
    assert kiln.compile(relax)(rod.copy(), 1e9) == relax(rod.copy(), 1e9)
    (launchers,) = tmp_path.glob("*_loops/launchers.py")
    text = launchers.read_text()
    assert "def call(" in text and "flags.writeable" not in text, text


def scan(a, x, k):
    i = 0
    n = a.shape[0]
    while i < n and a[i] > 0:   # its first test: a kernel's 0-d bool
        i += 1
    lo = 0
    hi = n
    while lo < hi:              # a float argument, int literals
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    cum = np.empty_like(a)
    t = 0.0
    for j in range(n):          # writes, in place, an array the graph made; float flags
        t += a[j]
        cum[j] = t
    s = 0.0
    for j in range(n + k):      # an int argument's bound: past the end, IndexError
        s += a[j]
    return i, lo, s, cum


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is type(w) and np.array_equal(g, w), (got, want)


def _launcher_frames(fn, *args):
    """``fn(*args)`` and the names of the loop launchers' Python functions it entered."""
    import sys
    seen = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.endswith(" launcher>"):
            seen.append(frame.f_code.co_name)
    sys.setprofile(profile)
    try:
        return fn(*args), seen
    finally:
        sys.setprofile(None)


def test_a_loop_carrying_no_array_runs_from_the_wrapper_itself(counted):
    """Loops that carry only scalars (a first test computed by a kernel, a float argument,
    a run-time bound) or an array they write in place: the wrapper calls each runner
    itself, no launcher frame and no test of the literals and input arrays it knows
    (bsearch, oob, count_leading_pos: ~0.4 us of a ~1 us call). Flags of a run that wrote
    in place end nothing: the reference runs again for NumPy's warning alone. A runner
    that fails its checks hands over to the launcher's call, which runs the reference:
    Python's IndexError; the next call takes the launcher's way (a miss), which finds
    the runner well again, and the one after is straight again."""
    a = np.array([1.0, 2.0, 3.0, -1.0, 5.0, 6.0])
    compiled = kiln.compile(scan)
    _same(compiled(a, 2.5, 0), scan(a, 2.5, 0))
    before = dict(loop_ops.stats)
    for x, data in ((2.5, a), (9.0, a[::-1].copy()), (-3.0, np.ones(6))):
        got, frames = _launcher_frames(compiled, data, x, 0)
        _same(got, scan(data, x, 0))
        assert frames == [], frames
    assert loop_ops.stats["native"] - before["native"] == 12
    assert loop_ops.stats["inplace"] - before["inplace"] == 3
    assert counted == [] and loop_ops.stats["reference"] == before["reference"]
    huge = np.full(6, 1e308)
    with pytest.warns(RuntimeWarning, match="overflow encountered in scalar add") as plain:
        want = scan(huge, 2.5, 0)
    with pytest.warns(RuntimeWarning, match="overflow encountered in scalar add") as mine:
        got, frames = _launcher_frames(compiled, huge, 2.5, 0)
    _same(got, want)
    assert len(mine) == len(plain) and "call" not in frames
    with pytest.raises(IndexError):
        scan(a, 2.5, 1)
    with pytest.raises(IndexError):
        _launcher_frames(compiled, a, 2.5, 1)
    assert counted                  # the launcher's call ran the reference
    for frames_then in (["call", "native"], []):
        got, frames = _launcher_frames(compiled, a, 1.5, -2)
        _same(got, scan(a, 1.5, -2))
        assert frames == frames_then, frames
