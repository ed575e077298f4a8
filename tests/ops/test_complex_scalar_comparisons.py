"""Comparisons of complex NumPy scalars are NumPy's scalar math, which never warns
(kiln/ops/scalar_math.py ``complex_scalar_comparison``): ``np.complex128(nan) < 1`` is
silent, where ``np.less`` of the same values (a ufunc on 0-d arrays, which a graph held
them as) says "invalid value encountered in less". A complex64 and a float64 (promoted),
or an explicit ``np.less``, stay the ufunc, and warn as NumPy's does."""
import warnings

import numpy as np
import pytest

import kiln

NAN = float("nan")
VALUES = [complex(NAN, 0), complex(0, NAN), complex(NAN, NAN), 1 + 0j, complex(1, NAN), 2 + 2j]
OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
       ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def run(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, sorted(str(w.message) for w in caught)


def check(fn, *args):
    want, want_warns = run(fn, *args)
    got, got_warns = run(kiln.compile(fn), *args)
    assert got_warns == want_warns
    assert repr(got) == repr(want)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", list(OPS))
def test_complex_scalar_comparisons_in_a_graph_are_silent(name, dtype):
    op = OPS[name]     # (a lambda: the operator itself, inlined)

    def compare(re, im):
        z = (re + im * 1j).astype(dtype)     # (computed in the graph: 0-d values there)
        return op(z[0], 1), op(z[1], 0.5), op(z[2], z[3]), op(z[4], z[0]), re.sum()

    re, im = np.array(VALUES).real.copy(), np.array(VALUES).imag.copy()
    check(compare, re, im)
    assert kiln.explain(compare)(re, im).graph_break_count == 0


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_scalar_comparisons_in_a_loop_are_silent(dtype):
    def count(z):
        s = 0.0
        for i in range(len(z)):
            s += (z[i] * 2 < 1) + (z[i] + 1j == 1) + (z[i] >= 0.5)
        return s

    for n in (4, 200):   # unrolled, and a graph loop
        check(count, np.array(VALUES * n, dtype=dtype))


def test_promoted_and_ufunc_comparisons_still_warn():
    def promoted(re):
        z = re.astype(np.complex64)
        return z[0] < re[1], np.less(z[0], 1), re.sum()

    x = np.array(VALUES).real.copy()
    _, warns = run(promoted, x)
    assert warns == ["invalid value encountered in less"] * 2
    check(promoted, x)
