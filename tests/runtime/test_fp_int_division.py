"""Integer division edge cases compiled, against plain NumPy: a zero divisor ("divide by
zero encountered in floor_divide/remainder/fmod/divmod", the result 0) and MIN // -1
("overflow encountered in ...", MIN), for every integer dtype, on both backends: values,
dtypes, the warnings (category, message, the user's file and line), np.errstate."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln

BACKENDS = ["eager", "cpp"]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _run(fn, args, **errstate):
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]   # (a run-time int as it is)
    with warnings.catch_warnings(record=True) as seen, np.errstate(**errstate):
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [(w.category, str(w.message), w.filename, w.lineno) for w in seen], args


def _same(got, want):
    assert got[1] == want[1]
    outs = (got[0], want[0]) if isinstance(want[0], tuple) else ((got[0],), (want[0],))
    assert len(outs[0]) == len(outs[1])
    for g, w in zip(*outs):
        assert type(g) is type(w) and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    for g, w in zip(got[2], want[2]):   # the arguments, after the call
        np.testing.assert_array_equal(g, w)


def _operands(dtype, n=300):
    """a, b with zeros in b and (signed) MIN // -1 at one place."""
    a = (np.arange(n) % 7 + 1).astype(dtype)
    b = (np.arange(n) % 5).astype(dtype)
    if np.iinfo(dtype).min < 0:
        a[3], b[3] = np.iinfo(dtype).min, -1
    return a, b


def fmod(a, b):
    return np.fmod(a, b)


def fmod_chain(a, b):
    return np.fmod(a, b) * 3 + a


def floor_divide_and_remainder(a, b):
    return (a % b) + (a // b)


def remainder_and_fmod(a, b):
    return np.remainder(a, b) - np.fmod(b, a)


def three_divisions(a, b):
    q = a // b
    r = b % a
    return q + r * (a // (b + 1))


def divmod_of(a, b):
    return np.divmod(a, b)


def divmod_quotient(a, b):
    return np.divmod(a, b)[0] + 1


def divmod_remainder(a, b):   # (NumPy's call still warns of the quotient's overflow)
    return np.divmod(a, b)[1] * 2


def divmod_fused(a, b):
    q, r = np.divmod(a, b)
    return q + r + (b % a)


def divmod_reduced(a, b):
    q, r = np.divmod(a, b)
    return q.sum(), r


def divmod_twice(a, b):
    q, _ = np.divmod(a, b)
    _, r = np.divmod(b, a)
    return q - r


def divmods_on_one_line(a, b):   # (two calls: each warns)
    return np.divmod(a, b)[0] + np.divmod(b, a)[1]


def builtin_divmod(a, b):
    return divmod(a, b)


CASES = [fmod, fmod_chain, floor_divide_and_remainder, remainder_and_fmod, three_divisions,
         divmod_of, divmod_quotient, divmod_remainder, divmod_fused, divmod_reduced, divmod_twice,
         divmods_on_one_line, builtin_divmod]


def _every_dtype(fn):
    """``(fn(a0, b0), ..., fn(a7, b7))``: fn on every integer dtype's operands in one
    function, one build for the eight. Each dtype's operands have their own length
    (``_sizes``), so no kernel holds two dtypes' ops and each warns as fn alone does."""
    args = ", ".join(f"a{k}, b{k}" for k in range(len(INTS)))
    calls = "".join(f"fn(a{k}, b{k}), " for k in range(len(INTS)))
    name = f"{fn.__name__}_of_every_dtype"   # (its own name: code objects equal to another
    namespace = {"fn": fn}                   # test's would share kiln's per-code state)
    exec(compile(f"def {name}({args}):\n    return ({calls})\n", __file__, "exec"), namespace)
    return namespace[name]


def _same_per_dtype(got, want):
    """``_same`` for each dtype's result of ``_every_dtype`` (the warnings: the whole list)."""
    assert got[1] == want[1]
    assert len(got[0]) == len(want[0]) == len(INTS)
    for dtype, g, w in zip(INTS, got[0], want[0]):
        outs = (g, w) if isinstance(w, tuple) else ((g,), (w,))
        assert len(outs[0]) == len(outs[1]), np.dtype(dtype).name
        for gv, wv in zip(*outs):
            assert type(gv) is type(wv) and gv.dtype == wv.dtype, np.dtype(dtype).name
            np.testing.assert_array_equal(gv, wv, err_msg=np.dtype(dtype).name)
    for g, w in zip(got[2], want[2]):   # the arguments, after the call
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_integer_division_warns_as_numpy(fn, backend):
    # every integer dtype (300 elements and up) in one compiled function
    operands = [_operands(dtype, 300 + k) for k, dtype in enumerate(INTS)]
    for (a, b), dtype in zip(operands, INTS):   # fn alone warns on each dtype, at its line
        want = _run(fn, (a, b))[1]
        assert want and all(w[2] == __file__ for w in want), np.dtype(dtype).name
    every = _every_dtype(fn)
    compiled = kiln.compile(every, backend=backend)
    divided = [v for a, b in operands for v in (a, b)]
    by_ones = [v for a, b in operands for v in (a, np.ones_like(b))]
    for args in (divided, by_ones, divided):   # every call that divides by zero warns
        _same_per_dtype(_run(compiled, args), _run(every, args))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.int8, np.uint32, np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn", [fmod, floor_divide_and_remainder, divmod_of, divmod_remainder],
                         ids=lambda f: f.__name__)
def test_integer_division_follows_the_error_mode(fn, dtype, backend):
    a, b = _operands(dtype)
    compiled = kiln.compile(fn, backend=backend)
    for mode in ({"divide": "ignore"}, {"over": "ignore"}, {"all": "ignore"}):
        _same(_run(compiled, (a, b), **mode), _run(fn, (a, b), **mode))
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError) as want:
            fn(a, b)
        with pytest.raises(FloatingPointError) as got:
            compiled(a, b)
    assert str(got.value) == str(want.value)


def by_a_number(a, k):
    return a // k + a * 2, a % k


def lone_by_a_number(a, k):
    return a // k


def by_minus_one(a, k):
    return a // -1 + a, np.divmod(a, -1)[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [by_a_number, lone_by_a_number, by_minus_one], ids=lambda f: f.__name__)
def test_a_divisor_the_same_at_every_point_warns_of_min_by_minus_one(fn, backend):
    """A divisor the same at every point (a run-time Python int, a constant) divides by its
    magic number (cpp_prelude.h kiln_divisor32/64), which raised no "overflow" for MIN //
    -1 (silent on cpp before stop 62); -1 now raises it before the loop and the op's
    predicate says whether MIN was divided: no warning for dividends without MIN."""
    compiled = kiln.compile(fn, backend=backend)
    for dtype in (np.int8, np.int32, np.int64) + ((np.uint8,) if fn is not by_minus_one else ()):
        with_min = (np.arange(40) % 7 - 3).astype(dtype)
        with_min[5] = np.iinfo(dtype).min
        without = (np.arange(40) % 7 + 1).astype(dtype)
        for a in (with_min, without):
            for k in (-1, 3, -1):
                if np.iinfo(dtype).min == 0 and k < 0:
                    continue
                _same(_run(compiled, (a, k)), _run(fn, (a, k)))
