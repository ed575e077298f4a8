"""``ufunc.at`` as kiln calls it (kiln/ops/scatter.py ``add_at_broadcast``): NumPy's values,
and the shape work of its broadcast workaround skipped where NumPy needs none: a single
value, or integer index arrays of one shape (each ufunc.at took ~1.3 us more than
NumPy's own, so np.maximum.at on a view ran 3x slower compiled)."""
from __future__ import annotations

import numpy as np
import pytest

from kiln.ops import scatter


def _boom(*args, **kwargs):
    raise AssertionError("the broadcast workaround's shape work ran")


@pytest.mark.parametrize("ufunc", [np.add, np.maximum, np.multiply])
def test_single_values_and_index_arrays_of_one_shape_go_straight_to_ufunc_at(ufunc, monkeypatch):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 5, 3))
    rows, cols = rng.integers(0, 4, (2, 6)), rng.integers(0, 5, (2, 6))
    cases = [((rows, cols), rng.standard_normal((2, 6, 3))),    # arrays of one shape, x's last dim left
             ((rows, cols), 2.5),                                # a single value, 2-D index
             ((rows[0],), rng.standard_normal((6, 5, 3))),
             ((rows, cols, rows % 3), np.float32(-1.5))]
    want = []
    for index, value in cases:
        w = x.copy()
        ufunc.at(w, index, value)
        want.append(w)
    monkeypatch.setattr(scatter, "indexed_shape", _boom)
    monkeypatch.setattr(np, "broadcast_to", _boom)
    for (index, value), w in zip(cases, want):
        got = x.copy()
        scatter.add_at_broadcast(got, index, value, ufunc)
        np.testing.assert_array_equal(got, w)


def test_a_value_broadcast_against_a_two_dimensional_index_is_still_broadcast_first():
    # NumPy 2.4 reads uninitialised memory here (np.add.at(np.zeros(3), (i2d,), row))
    x = np.zeros(3)
    scatter.add_at_broadcast(x, (np.array([[0, 1], [2, 0]]),), np.array([3.0, 2.0]))
    np.testing.assert_array_equal(x, [5.0, 2.0, 3.0])
