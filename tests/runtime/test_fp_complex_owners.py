"""Complex ops of one kind beside each other in one kernel: the second body tells which
raised it by their predicates (ops/fp_predicates.py ``complex_raises_where``). Before stop
62 two complex multiplies, a divide beside a multiply or two complex adds that may
overflow said nothing of that kind."""
from __future__ import annotations

import numpy as np
import pytest

import kiln
from tests.runtime.test_fp_reductions import _said


def two_products(z, w):
    return z * w + w * w


def quotient_times(z, w):
    return z / w * z


def two_sums(z, w):
    return (z + w) - (w + z * 0.5)


def exp_and_square(z, w):
    return np.exp(z) + z ** 2


def _values(dtype):
    big = 1e300 if dtype == np.complex128 else 1e38
    tiny = 1e-300 if dtype == np.complex128 else 1e-40
    return [0j, complex(big, big), complex(np.inf, 0), complex(np.nan, 1), complex(1, 0),
            complex(-big, big), complex(tiny, 0), complex(710, 1)]


@pytest.mark.parametrize("fn", [two_products, quotient_times, two_sums, exp_and_square])
def test_complex_ops_beside_each_other_warn_as_numpy(fn):
    compiled = kiln.compile(fn, backend="cpp")
    told = 0
    for dtype in (np.complex128, np.complex64):
        for v in _values(dtype):
            z, w = np.full(16, 1 + 1j, dtype), np.full(16, 2 - 1j, dtype)
            z[3], w[5] = v, v
            theirs, ours = _said(fn, z, w), _said(compiled, z, w)
            assert set(ours) <= set(theirs), (dtype, v, theirs, ours)
            if np.isnan(v):   # (a NaN part: the predicates stay silent)
                continue
            assert ours == theirs, (dtype, v)
            told += bool(theirs)
    assert told   # (some edge value warns)
