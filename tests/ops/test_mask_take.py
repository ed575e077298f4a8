"""``x[m]`` of a mask of short runs is taken by its positions (kiln/ops/indexing.py
``_mask_impl``: flatnonzero + take, 10x NumPy's run-by-run copy on a random mask); the
result is NumPy's: values, dtype, shape and strides, for C- and F-ordered, reversed and
integer arrays, 1-D and row masks, sparse, dense and empty ones."""
from __future__ import annotations

import numpy as np
import pytest

import kiln

BACKENDS = ["cpp", "eager"]


def selection(x, m):
    return x[m]


@pytest.mark.parametrize("backend", BACKENDS)
def test_selections_of_short_and_long_runs_are_numpys(backend, monkeypatch):
    monkeypatch.setattr(kiln.config, "recompile_limit", 1000)   # (every case compiled)
    rng = np.random.default_rng(10)
    f = kiln.compile(selection, backend=backend)
    for shape in ((9000,), (300, 7), (40, 50)):
        base = rng.standard_normal(shape)
        for x in (base, base.astype(np.float32), np.asfortranarray(base), (base * 100).astype(np.int16),
                  base[::-1]):
            for k in (1, len(shape)):
                for m in (rng.random(shape[:k]) < 0.5, np.arange(np.prod(shape[:k])).reshape(shape[:k]) < 3000,
                          np.zeros(shape[:k], bool)):
                    got, want = f(x, m), selection(x, m)
                    assert got.dtype == want.dtype and got.shape == want.shape
                    assert got.strides == want.strides
                    np.testing.assert_array_equal(got, want)
