"""Every idiom of benchmarks/idioms.py, once, at tiny sizes: compiled (C++ backend)
against plain NumPy — values, dtypes, shapes and the arguments after the call — so the
benchmark cannot rot and each idiom stays correct."""
import copy
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import kiln

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.idioms import IDIOMS  # noqa: E402


def _same(got, want, what):
    assert type(got) is type(want), f"{what}: {type(got).__name__} != {type(want).__name__}"
    if isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want), what
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300, err_msg=what)
    elif isinstance(want, tuple):
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{what}[{i}]")
    else:
        assert got == want, what


def test_there_are_at_least_forty_idioms():
    assert len(IDIOMS) >= 40 and len({i.name for i in IDIOMS}) == len(IDIOMS)


@pytest.mark.parametrize("it", IDIOMS, ids=lambda i: i.name)
def test_idiom_matches_numpy(it):
    args = it.make(np.random.default_rng(1), True)
    plain_args, kiln_args = copy.deepcopy(args), copy.deepcopy(args)
    want = it.fn(*plain_args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = kiln.compile(it.fn)(*kiln_args)
    _same(got, want, it.name)
    for i, (g, w) in enumerate(zip(kiln_args, plain_args)):
        _same(g, w, f"{it.name}: argument {i} after the call")
