"""The focused generator (alias.py: aliasing, layouts, dtype keywords, calls that change
layout) on a fixed seed set, and the programs it found, each checked against NumPy."""
from __future__ import annotations

import os

import numpy as np
import pytest

from .alias import check_seed

# (a long run: python -m tests.fuzz.alias, docs/fuzzing.md)
SEEDS = [int(s) for s in (os.environ.get("KILN_FUZZ_ALIAS_SUITE") or "3,11,26,40").split(",")]

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.mark.parametrize("seed", SEEDS)
def test_alias_programs_match_numpy(seed):
    check_seed(seed)


def _check(fn, calls, backends=("eager", "cpp")):
    import sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from test_programs import check_program
    for backend in backends:
        check_program(fn, calls, backend)


def _store_python_complex(x, s):
    v = x.T
    x.real[...] = s
    x[0] = s
    return v


def _fill_python_complex(x, s):
    x.fill(s)
    return x


@pytest.mark.parametrize("fn", [_store_python_complex, _fill_python_complex])
def test_a_python_complex_stored_into_a_real_array_raises(fn):
    """Seeds 185, 238: NumPy converts a Python complex with float() or int() (TypeError);
    kiln made it a 0-d complex array, which casts with a ComplexWarning. A NumPy complex
    scalar still casts."""
    _check(fn, [(np.array([[-2], [2]], np.int16), 1j), (np.ones((2, 2), np.float32), complex(0.5, 0.0)),
                (np.ones((2, 2), np.float32), np.complex64(1j)), (np.ones((1, 2), np.complex64), 2j)])
