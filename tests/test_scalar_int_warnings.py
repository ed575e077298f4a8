"""NumPy's scalar math checks integer results: ``x.max() - x.min()`` on int8 data warns
"overflow encountered in scalar subtract", ``-np.int8(-128)`` "... in scalar negative",
``a // b`` with b == 0 "divide by zero encountered in scalar floor_divide". Compiled, those
0-d values come out of kernels that wrap silently: kiln/ops/scalar_math.py checks them
after the kernels. Compiled vs plain NumPy, on every backend: values, dtypes, the
warnings (message, category, the user's line), np.errstate and -W error."""
import warnings

import numpy as np
import pytest

import kiln

BACKENDS = ["eager", "cpp"]


def _run(fn, *args):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [(w.category, str(w.message), w.filename, w.lineno) for w in seen]


def _spread(x):
    return x.max() - x.min()


def _product(x):
    return x.sum() * x.sum()


def _negated(x):
    return -x.min() + x


def _magnitude(x):
    return abs(x.min())


def _shifted(x):
    return x.max() + 100


def _from_python(x):
    return 3 - x.min()


def _quotient(x):
    return x.max() // x.min()


def _least_quotient(x):
    return x.min() // x.max()


def _rest(x):
    return x.max() % x.min()


def _mixed(x, k):
    return x.max() * k


def _looped(x):
    total = x.min()
    for i in range(3):
        total = total + x.max()
    return total


def _in_place(x):
    total = x.min()
    total += x.max()
    total -= np.int8(100)
    return total


rng = np.random.default_rng(4207)
# (function, arguments that overflow or divide by zero, arguments that do not)
CASES = {
    "int8-subtract": (_spread, (np.array([105, -88, 3], np.int8),), (np.array([5, -8], np.int8),)),
    "uint8-subtract": (_from_python, (np.array([5, 9], np.uint8),), (np.array([1, 9], np.uint8),)),
    "int64-multiply": (_product, (np.array([2 ** 40, 3], np.int64),), (rng.integers(-9, 9, 5),)),
    "int8-negative": (_negated, (np.array([-128, 3], np.int8),), (np.array([-127, 3], np.int8),)),
    "uint16-negative": (_negated, (np.array([3, 7], np.uint16),), (np.array([0, 7], np.uint16),)),
    "int16-absolute": (_magnitude, (np.array([-32768, 1], np.int16),), (np.array([-3, 1], np.int16),)),
    "int8-add-python-int": (_shifted, (np.array([30, 1], np.int8),), (np.array([27, 1], np.int8),)),
    "int8-floor_divide-overflow": (_least_quotient, (np.array([-128, -1], np.int8),),
                                   (np.array([-128, -2], np.int8),)),
    "int32-floor_divide-by-zero": (_quotient, (np.array([0, 5], np.int32),), (np.array([2, 5], np.int32),)),
    "uint8-remainder-by-zero": (_rest, (np.array([0, 5], np.uint8),), (np.array([2, 5], np.uint8),)),
    "int32-times-scalar": (_mixed, (np.array([7, 2 ** 30], np.int32), np.int32(4)),
                           (np.array([7, 2 ** 20], np.int32), np.int32(4))),
    "in-place": (_in_place, (np.array([100, 90], np.int8),), (np.array([10, 5], np.int8),)),
    "in-a-loop": (_looped, (np.array([100, 50], np.int8),), (np.array([10, 5], np.int8),)),
}


def _same(got, want, where=True):
    assert got[1] == want[1] if where else [w[:2] for w in got[1]] == [w[:2] for w in want[1]]
    assert type(got[0]) is type(want[0]) and got[0].dtype == want[0].dtype
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_integer_scalar_math_warns_as_numpy(backend, case):
    fn, bad, good = CASES[case]
    compiled = kiln.compile(fn, backend=backend)
    for args in (bad, good, bad):   # every call that overflows warns; the others do not
        got, want = _run(compiled, *args), _run(fn, *args)
        _same(got, want)
    assert want[1] and want[1][0][2] == __file__   # (the case overflows, at the user's line)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["int8-subtract", "int8-negative", "int32-floor_divide-by-zero"])
def test_integer_scalar_math_follows_the_error_mode(backend, case):
    fn, bad, _ = CASES[case]
    compiled = kiln.compile(fn, backend=backend)
    with np.errstate(all="ignore"):
        _same(_run(compiled, *bad), _run(fn, *bad))
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError) as want:
            fn(*bad)
        with pytest.raises(FloatingPointError) as got:
            compiled(*bad)
    assert str(got.value) == str(want.value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning) as want:
            fn(*bad)
        with pytest.raises(RuntimeWarning) as got:
            compiled(*bad)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_scalar_math_calls_the_error_handler(backend):
    fn, bad, _ = CASES["int8-subtract"]
    compiled = kiln.compile(fn, backend=backend)
    calls = {"numpy": [], "kiln": []}
    for key, f in (("numpy", fn), ("kiln", compiled)):
        with np.errstate(over="call", call=lambda kind, flag, key=key: calls[key].append((kind, flag))):
            f(*bad)
    assert calls["kiln"] == calls["numpy"] and calls["numpy"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_float_and_unchecked_scalar_math_unchanged(backend):
    """NumPy checks neither integer scalar power nor shifts, and float scalar math raises
    its own flags: no check is added there (the eager backend's float warnings point at
    its graph, not the user's line: not compared here)."""
    x = np.array([100, 3], np.int8)
    for fn in (lambda x: x.max() ** 3, lambda x: x.max() << 3,
               lambda x: x.max() * np.float32(3e38) * np.float32(10)):
        _same(_run(kiln.compile(fn, backend=backend), x), _run(fn, x), where=False)


def _int_loop(x, u, w, n):
    s = x[0]
    c = u[0]
    q = w[0]
    for i in range(1, n):
        s = s * x[i] + x[i]                 # int8: overflow in scalar multiply / add
        c = np.uint32(0) - (c & np.uint32(1)) - u[i]   # uint32: overflow in scalar subtract
        q = -(q // w[i]) % w[i]             # int64: negative, floor_divide, remainder
    return s, c, q


def test_integer_scalar_math_in_a_compiled_loop_warns_as_numpy():
    """A loop body compiled to C++ wrapped silently under the default error mode: it now
    raises NumPy's flags (kiln_over_* in lowering/loop_scalars.py), so the warnings come as
    NumPy's, op by op, in order (the reference reruns for them)."""
    from kiln.ops.loops import stats
    compiled = kiln.compile(_int_loop)
    m = np.iinfo(np.int64).min
    cases = (([3, 50, 2, 1], [1, 2, 3, 4], [7, 2, 3, 5]),      # int8 overflows, uint32 borrows
             ([1, 1, 1, 1], [0, 0, 0, 0], [m, -1, 0, 3]),      # int64 floor_divide overflow, / 0
             ([1, 2, 1, 1], [0, 0, 0, 0], [9, 2, 3, 5]))       # nothing
    for xs, us, ws in cases:
        args = (np.array(xs, np.int8), np.array(us, np.uint32), np.array(ws, np.int64), 4)
        got, want = _run(compiled, *args), _run(_int_loop, *args)
        assert got[1] == want[1], xs
        assert [type(g) for g in got[0]] == [type(w) for w in want[0]] and got[0] == want[0]
    assert want[1] == [] and stats["native"]   # (the quiet case ran native)
