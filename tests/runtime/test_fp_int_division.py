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
    args = [a.copy() for a in args]
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


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_integer_division_warns_as_numpy(fn, dtype, backend):
    a, b = _operands(dtype)
    compiled = kiln.compile(fn, backend=backend)
    ones = np.ones_like(b)
    for args in ((a, b), (a, ones), (a, b)):   # every call that divides by zero warns
        _same(_run(compiled, args), _run(fn, args))
    want = _run(fn, (a, b))[1]
    assert want and all(w[2] == __file__ for w in want)


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
