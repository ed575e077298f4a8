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



def _python_calls(fn, *args):
    """The names of the Python functions ``fn(*args)`` entered (NumPy's own included), on
    a call after the one that compiles."""
    import sys
    fn(*args)
    names = []
    sys.setprofile(lambda frame, event, arg: names.append(frame.f_code.co_name) if event == "call" else None)
    try:
        out = fn(*args)
    finally:
        sys.setprofile(None)
    return out, names



def fit(X, y):
    beta, res, rank, sv = np.linalg.lstsq(X, y)
    return beta * 2.0, res + 1.0, rank, sv


def test_a_small_selection_is_numpys_own_indexing():
    """Below MASK_TAKE_MIN elements NumPy's x[m] is the faster and the sampling of the runs
    alone cost ~2 us: np.linalg.lstsq's residuals (a 2-element mask) made a compiled 9x3
    lstsq 2.3x slower than NumPy's (9.7 against 22 us). Small masks take NumPy's path (no
    flatnonzero), large ones of short runs still the positions."""
    from kiln.ops import REGISTRY
    rng = np.random.default_rng(11)
    for n, taken in ((64, False), (5000, True)):
        x, m = rng.standard_normal(n), rng.random(n) < 0.5
        got, names = _python_calls(REGISTRY["getitem_mask"].impl, x, (m,))
        np.testing.assert_array_equal(got, x[m])
        assert ("flatnonzero" in names) == taken, (n, taken)
    X, y = rng.standard_normal((9, 3)), rng.standard_normal(9)
    got, names = _python_calls(kiln.compile(fit, backend="cpp"), X, y)
    for g, w in zip(got, fit(X, y)):
        assert type(g) is type(w) and g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    # (lstsq's residuals are now one slice of its packed result: no mask at all)
    assert "_residuals_impl" in names and "flatnonzero" not in names
