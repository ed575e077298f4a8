"""Integer // and % by a divisor the same at every point (a constant, a scalar argument):
the C++ kernel makes the divisor's magic number once and divides by multiply-high
(kiln_divisor32/64 in cpp_prelude.h). Checked against NumPy on every int dtype over edge
values: 0, +-1, min and max, negative and zero divisors, MIN // -1; int8 and uint8
exhaustively."""
import warnings

import numpy as np
import pytest

import kiln
from kiln.lowering.cpp_ops import CppEmitter, NameSource
from kiln.lowering.loop_ir import Affine, Buffer

INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def edge_values(dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    vals = {0, 1, 2, 3, 7, 10, 100, info.max, info.max - 1, info.max // 2, info.max // 2 + 1,
            info.max // 3}
    if info.min < 0:
        vals |= {-1, -2, -3, -7, -100, info.min, info.min + 1, info.min // 2, info.min // 3}
    vals |= {v for v in (2 ** k for k in range(1, info.bits)) if v <= info.max}
    return np.array(sorted(vals), dtype=dtype)


def dividends(dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    if info.bits == 8:
        return np.arange(info.min, info.max + 1).astype(dtype)   # every value
    rng = np.random.default_rng(info.bits + (info.min < 0))
    return np.concatenate([edge_values(dtype),
                           rng.integers(info.min, info.max, 3000, dtype=dtype, endpoint=True),
                           rng.integers(-1000 if info.min < 0 else 0, 1000, 3000).astype(dtype)])


def divisors(dtype) -> list:
    info = np.iinfo(dtype)
    if info.bits == 8:
        return [dtype(v) for v in range(info.min, info.max + 1)]   # every value, 0 too
    return [dtype(v) for v in edge_values(dtype)] + [dtype(0)]


def numpy_divmod(x, d):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return x // d, x % d


def divmod_by_argument(x, d):
    return x // d, x % d


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_scalar_argument_divisor_matches_numpy(dtype):
    f = kiln.compile(divmod_by_argument)
    x = dividends(dtype)
    for d in divisors(dtype):
        want = numpy_divmod(x, d)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            got = f(x, d)
        for w, g, what in zip(want, got, ("//", "%")):
            assert g.dtype == w.dtype, (what, d)
            np.testing.assert_array_equal(g, w, err_msg=f"x {what} {d!r} ({np.dtype(dtype).name})")


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.int64, np.uint64],
                         ids=lambda d: np.dtype(d).name)
def test_constant_divisor_matches_numpy(dtype):
    x = dividends(dtype)
    info = np.iinfo(dtype)
    ds = [dtype(d) for d in sorted({1, 3, 7, 10, 64, info.max} | ({-1, -7, info.min} if info.min < 0 else set()))]
    by_constants = _by_constants(ds)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        got, want = kiln.compile(by_constants)(x), by_constants(x)
    assert len(got) == len(want) == 3 * len(ds)
    for i, (w, g) in enumerate(zip(want, got)):
        what = f"{np.dtype(dtype).name} {('//', '%.sum()', '%')[i % 3]} {ds[i // 3]!r}"
        assert np.asarray(g).dtype == np.asarray(w).dtype, what
        np.testing.assert_array_equal(g, w, err_msg=what)


def _by_constants(ds):
    """``x // d, (x % d).sum(), x % d`` for each d, every d its own closure constant (a
    literal in C++): one function, one build, for all the divisors."""
    names = [f"d{k}" for k in range(len(ds))]
    terms = "".join(f"x // {d}, (x % {d}).sum(), x % {d}, " for d in names)
    src = f"def make({', '.join(names)}):\n    def by_constants(x):\n        return ({terms})\n" \
          f"    return by_constants\n"
    namespace: dict = {}
    exec(compile(src, __file__, "exec"), namespace)
    return namespace["make"](*ds)


def test_python_int_divisor_and_computed_divisor():
    x = dividends(np.int64)

    def f(x, n):
        return x % n, x // (n + 1), (x.astype(np.int32) % (2 * n)).sum()

    g = kiln.compile(f)
    for n in (1, 7, -3, 1000, -(2 ** 30)):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            want, got = f(x, n), g(x, n)
        for w, v in zip(want, got):
            np.testing.assert_array_equal(v, w)


def test_broadcast_array_divisor_matches_numpy():
    x = dividends(np.int64)[:4000].reshape(40, 100)
    d = np.array([0, 1, -1, 7, -7, np.iinfo(np.int64).min, 3, 100] * 5).reshape(40, 1)
    f = kiln.compile(divmod_by_argument)
    want = numpy_divmod(x, d)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        got = f(x, d)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("fn", ["floor_divide", "remainder"])
def test_invariant_divisor_is_hoisted_and_varying_one_is_not(fn):
    names = NameSource()
    em = CppEmitter(names)
    x = em.load(Buffer("x", (8,), np.int64, "input"), Affine.var("i"))
    by_const = em.call(fn, [x, em.constant(7, np.int64)], np.int64)
    y = em.load(Buffer("y", (8,), np.int64, "input"), Affine.var("i"))
    by_array = em.call(fn, [x, y], np.int64)
    text = "\n".join(em.lines)
    assert names.prologue("n") == ["const int64_t kiln_points = n;", "const auto h0 = kiln_divisor64((int64_t)7LL, kiln_points);"]
    assert f"{by_const} = kiln_{fn}_by({x}, h0);" in text
    assert f"{by_array} = kiln_{fn}_int({x}, {y});" in text


@pytest.mark.parametrize("fn", [lambda x, d: x // 0, lambda x, d: x % 0, lambda x, d: np.remainder(x, d),
                                lambda x, d: (x.astype(np.int8) // d) * 2, lambda x, d: np.floor_divide(x, d),
                                lambda x, d: x // d + x % 7, lambda x, d: x % d - x // -1,
                                lambda x, d: (x // d).sum()],
                         ids=["const-floordiv", "const-mod", "arg-remainder", "int8-arg", "arg-floordiv",
                              "with-a-nonzero-constant", "with-minus-one", "summed"])
def test_a_zero_divisor_warns_as_numpy(fn):
    """A divisor the same at every point is made once before the loops; a zero one raises
    NumPy's divide-by-zero flag there (not in the loop, which then would not vectorize),
    and only where the kernel computed an element (an empty array: no warning, also where
    the kernel writes a sum of none, which raised it before the loops). A division
    by a nonzero constant beside it (x % 7) cannot raise that flag, so the flag is the
    zero divisor's."""
    compiled = kiln.compile(fn, backend="cpp")
    for x, d in ((np.arange(5), 3), (np.arange(5), 0), (np.arange(0), 0), (np.arange(7), 0)):
        got, want = [], []
        for f, into in ((compiled, got), (fn, want)):
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                into.append(f(x, d).tolist())
            into.append([(w.category, str(w.message)) for w in seen])
        assert got == want


def test_an_invariant_squared_again_and_again_keeps_a_bounded_text():
    """An invariant's text is its whole expression over the kernel's arguments (for code
    hoisted before the loops). A complex value squared k times read its operand's text
    four times per square: 14 squares of np.ones_like(z) took 10 s of re.sub in
    assign (fuzz7). Past INVARIANT_TEXT characters the temporary stays a temporary; what
    depends on it is no longer hoisted, and a short invariant still is."""
    from kiln.lowering.cpp_ops import INVARIANT_TEXT
    names = NameSource()
    em = CppEmitter(names)
    v = em.scalar_arg(type("S", (), {"name": "a"})())
    for _ in range(12):
        v = em.call("multiply", [em.call("add", [v, v], np.float64), v], np.float64)
    assert max(len(t) for t in em.invariant.values()) <= 3 * INVARIANT_TEXT + 100
    assert v not in em.invariant
    x = em.load(Buffer("x", (8,), np.int64, "input"), Affine.var("i"))
    em.call("floor_divide", [x, em.constant(7, np.int64)], np.int64)
    assert names.prologue("n") == ["const int64_t kiln_points = n;", "const auto h0 = kiln_divisor64((int64_t)7LL, kiln_points);"]
