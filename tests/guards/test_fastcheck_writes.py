"""Cache hits of graphs that write their arguments, in C (kiln/guards/fastcheck.c): the
writeable guard, the SimpleEntry with the overlap handler and aot's short path (PlainRun)
give the answers of the Python forms they replace, and NumPy's, when what the guards
checked changes between calls."""
import sys
from pathlib import Path

import numpy as np
import pytest

import kiln
from kiln.guards import fastcheck

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.cache_hit_overhead import iadd as _iadd, mul_out as _mul_out, shift as _shift  # noqa: E402

pytestmark = pytest.mark.skipif(fastcheck.module() is None, reason="the C helper does not build here")


def _numpy_error(fn, *args):
    try:
        fn(*args)
    except Exception as e:
        return type(e), str(e)
    return None


def _entry(cf):
    (entry,) = cf.cache_entries
    return entry


@pytest.mark.parametrize("fn, make", [
    (_iadd, lambda rng: (rng.standard_normal(50), rng.standard_normal(50))),
    (_mul_out, lambda rng: (rng.standard_normal(50), rng.standard_normal(50), np.zeros(50))),
    (_shift, lambda rng: (rng.standard_normal(50),)),
])
def test_an_in_place_entry_runs_in_c_and_honours_the_writeable_flag(fn, make):
    rng = np.random.default_rng(41)
    cf = kiln.compile(fn)
    args, mine = make(rng), None
    mine = tuple(a.copy() for a in args)
    for _ in range(2):
        got, want = cf(*mine), fn(*args)
        np.testing.assert_array_equal(got, want)
    entry = _entry(cf)
    assert type(entry.fast).__name__ == "SimpleEntry"          # no Python frame of kiln's
    assert any("flags.writeable" in t for t in entry.guard_texts())
    written = fn.__code__.co_argcount - 1 if fn is _mul_out else 0
    # read-only between calls: NumPy's own error, nothing written; then writeable again
    for flag in (False, True, False, True):
        ro_np, ro_k = [a.copy() for a in args], [a.copy() for a in args]
        ro_np[written].flags.writeable = flag
        ro_k[written].flags.writeable = flag
        err = _numpy_error(fn, *ro_np)
        if err is None:
            np.testing.assert_array_equal(cf(*ro_k), fn(*[a.copy() for a in args]))
        else:
            with pytest.raises(err[0]) as info:
                cf(*ro_k)
            assert str(info.value) == err[1]
        for a, b in zip(ro_k, ro_np):
            np.testing.assert_array_equal(a, b)
    # a read-only view of a writeable array, and a writeable view of a read-only base
    base = mine[written].copy()
    view = base[:]
    view.flags.writeable = False
    changed = list(mine)
    changed[written] = view
    with pytest.raises(ValueError):
        cf(*changed)
    np.testing.assert_array_equal(base, mine[written])


def test_the_writeable_guard_in_c_reads_the_flag_as_python_does():
    # the guard's C form (fastcheck_entry.c check 4) against its Python form, on one entry
    cf = kiln.compile(_iadd)
    a, b = np.ones(8), np.ones(8)
    cf(a, b)
    entry = _entry(cf)
    miss = kiln.api.MISS
    ro = np.ones(8)
    ro.flags.writeable = False
    assert entry.fast(ro, b) is miss and entry.check(ro, b) is miss
    np.testing.assert_array_equal(entry.fast(a, b), np.full(8, 3.0))
    assert entry.fast(np.ones(8, np.float32), b) is miss       # dtype changed
    assert entry.fast(np.ones(9), np.ones(9)) is miss           # shape changed
    assert entry.fast(list(a), b) is miss                       # not an array


def test_overlapping_arguments_of_a_c_entry_run_as_python():
    # InputsOverlap from the graph: the SimpleEntry answers RUN_EAGER, NumPy's own a += b
    cf = kiln.compile(_iadd)
    for _ in range(2):
        cf(np.ones(9), np.ones(9))
    assert type(_entry(cf).fast).__name__ == "SimpleEntry"
    x, y = np.arange(10.0), np.arange(10.0)
    got, want = cf(x[1:], x[:-1]), _iadd(y[1:], y[:-1])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(x, y)
    assert len(cf.cache_entries) == 1
    same = np.arange(9.0)                                       # the same array twice
    np.testing.assert_array_equal(cf(same, same), np.arange(9.0) * 2)


@pytest.mark.parametrize("layout", [
    lambda a: a.copy(), lambda a: np.concatenate([a, a])[::2], lambda a: a[::-1].copy()[::-1],
    lambda a: a.astype(np.float32), lambda a: a.astype(np.int64)])
def test_a_c_entry_sees_layout_and_dtype_changes(layout):
    # the in-place graph built for contiguous float64 must not run on other layouts or dtypes
    cf = kiln.compile(_shift)
    for _ in range(2):
        cf(np.arange(12.0))
    x = np.arange(12.0)
    mine, theirs = layout(x), layout(x)
    got, want = cf(mine), _shift(theirs)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(mine, theirs)


def test_plain_run_is_the_python_runner():
    run_type = fastcheck.plain_run()
    copyto = np.copyto
    fresh = np.zeros(3)

    def forward(a, b):
        return (a + b, fresh)

    reruns = []
    run = run_type(forward, ((0, 0),), ((1, 0), (0, 1), (2, "k")), copyto,
                   lambda args: reruns.append(args) or ("rerun",))
    a, b = np.ones(3), np.full(3, 2.0)
    out = run((a, b))
    assert out[0] is a and out[1] is fresh and out[2] == "k"
    np.testing.assert_array_equal(a, [3.0, 3.0, 3.0])
    # an Exception in the forward (or the epilogue): on_error with the arguments
    assert run((a, np.ones(4))) == ("rerun",) and reruns[0][0] is a
    ints = np.zeros(3, np.int64)                    # copyto casts unsafely, as aot's epilogue
    run((ints, np.full(3, 0.5)))
    np.testing.assert_array_equal(ints, [0, 0, 0])

    def interrupted(a, b):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):           # not an Exception: no rerun
        run_type(interrupted, (), (), copyto, lambda args: pytest.fail("reran"))((a, b))
    with pytest.raises(ValueError):                  # no on_error: the error itself
        run_type(forward, ((0, 0),), (), copyto, None)((a, np.ones(4)))
    with pytest.raises(ValueError):
        run_type(forward, ((0, -1),), (), copyto, None)
    with pytest.raises(ValueError):
        run_type(forward, (), ((3, 0),), copyto, None)


def test_a_c_entry_whose_graph_raises_leaves_arguments_as_numpy_does():
    # a ValueError in the graph after a write: the entry reruns it op by op (aot), as
    # NumPy leaves it: the write done, then the error
    def f(a, b, m):
        a += b
        return np.linalg.inv(m) @ a
    cf = kiln.compile(f)
    a, b = np.ones(3), np.ones(3)
    for _ in range(2):
        cf(a, b, np.eye(3))
    x, y = np.ones(3), np.ones(3)
    with pytest.raises(np.linalg.LinAlgError) as got:
        cf(x, b, np.zeros((3, 3)))
    with pytest.raises(np.linalg.LinAlgError) as want:
        f(y, b, np.zeros((3, 3)))
    assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(x, y)


class _State:
    def __init__(self, n):
        self.buf = np.zeros(n)

    def step(self, x):
        self.buf += x
        return self.buf


def test_the_writeable_guard_on_an_attribute_is_checked_in_c():
    # self.buf += x: the guard reads self.buf's flags through the attribute (fastcheck.c
    # guard roots with attribute names), on an entry of a compiled bound method
    state, ref = _State(5), _State(5)
    cf = kiln.compile(state.step)
    x = np.arange(5.0)
    for _ in range(2):
        np.testing.assert_array_equal(cf(x), ref.step(x))
    assert type(_entry(cf).fast).__name__ == "SimpleEntry"
    state.buf.flags.writeable = ref.buf.flags.writeable = False
    err = _numpy_error(ref.step, x)
    with pytest.raises(err[0]) as info:
        cf(x)
    assert str(info.value) == err[1]
    state.buf.flags.writeable = ref.buf.flags.writeable = True
    np.testing.assert_array_equal(cf(x), ref.step(x))
    state.buf, ref.buf = np.ones(5), np.ones(5)             # another array, same kind
    np.testing.assert_array_equal(cf(x), ref.step(x))
    np.testing.assert_array_equal(state.buf, ref.buf)


def test_a_numpy_integer_argument_takes_the_c_short_path(monkeypatch):
    # x[i] = 5 with i an np.int64 (a run-time index): plain_call took Python numbers only,
    # so every call went through AOTFunction.__call__'s overlap check in Python (+2 us)
    def zero_at(x, i):
        y = x * 2.0
        x[i] = 5.0
        return y
    cf = kiln.compile(zero_at)
    mine, theirs = np.arange(300.0), np.arange(300.0)
    for i in (np.int64(3), np.int64(7)):
        np.testing.assert_array_equal(cf(mine, i), zero_at(theirs, i))
    assert type(_entry(cf).fast).__name__ == "SimpleEntry"
    from kiln.aot.runtime import AOTFunction
    monkeypatch.setattr(AOTFunction, "__call__", lambda self, *args: pytest.fail("called from Python"))
    for i in (np.int64(11), np.int64(-1)):
        np.testing.assert_array_equal(cf(mine, i), zero_at(theirs, i))
    np.testing.assert_array_equal(mine, theirs)


def test_the_same_array_twice_runs_from_c(monkeypatch):
    # iadd(x, x): after its first call the merged variant's run (a PlainRun keeping one
    # of the two arguments) is taken from C, with no Python aliasing check per call
    # (AOTFunction.__call__ took 3.1 us of it against NumPy's 0.35)
    from kiln.aot import runtime as aot_runtime
    cf = kiln.compile(_iadd)
    x = np.arange(5.0)
    cf(x, x)
    cf(x, x)
    monkeypatch.setattr(aot_runtime, "input_aliasing",
                        lambda *a: pytest.fail("the Python aliasing check ran"))
    y = np.arange(5.0)
    assert cf(y, y) is y
    np.testing.assert_array_equal(y, np.arange(5.0) * 2)
    monkeypatch.undo()
    z = np.arange(5.0)   # overlapping views of one array: still NumPy's answer
    want = z.copy()
    _iadd(want[1:], want[:-1])
    cf(z[1:], z[:-1])
    np.testing.assert_array_equal(z, want)
