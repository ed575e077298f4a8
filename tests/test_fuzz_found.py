"""Bugs the program fuzzer (tests/fuzz) found, each as the smallest program that showed it,
checked like test_programs.py checks its programs (every backend, against NumPy)."""
from __future__ import annotations

import numpy as np
import pytest

from test_programs import BACKENDS, check_program

FOUND = {}


def found(*calls, xfail: str | None = None):
    def deco(fn):
        FOUND[fn.__name__] = (fn, list(calls), xfail)
        return fn
    return deco


_SIGNED_ZEROS = np.array([-0.0, 0.0, -1.0, 2.0, np.nan] * 4)


@found((_SIGNED_ZEROS,), (_SIGNED_ZEROS.astype(np.float32)[::-1],))
def clip_ties_with_scalar_bounds_keep_x(x):
    # NumPy's clip loop for 0-d bounds keeps x on a tie (-0.0 stays -0.0); array bounds and
    # a missing bound (np.maximum/np.minimum) take the bound (+0.0)
    return x.clip(0, 1), np.clip(x, -1.0, -0.0), np.clip(x, np.zeros(20, x.dtype), 1), \
        np.clip(x, 0.0, None), np.clip(x, x.max(), x[0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(FOUND))
def test_found_by_fuzzer(name, backend, request):
    fn, calls, xfail = FOUND[name]
    if xfail:
        request.applymarker(pytest.mark.xfail(strict=True, reason=xfail))
    check_program(fn, calls, backend)
