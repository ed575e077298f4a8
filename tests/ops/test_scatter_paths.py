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


def extremes(v, cell):
    hi, lo = np.full(4, -np.inf), np.full(4, np.inf)
    np.maximum.at(hi, cell, v); np.minimum.at(lo, cell, v)   # noqa: E702 (one site, two ufuncs)
    return hi, lo


def test_a_compiled_ufunc_at_enters_one_python_frame_before_numpys_call():
    # Each compiled np.maximum.at looked its store up per call (a helper and ufunc_at's
    # cache) and checked its index in a helper of its own: 6 Python frames where NumPy's
    # call has none (~3.2 us against NumPy's 1.4 in scatter_extremes_per_cell). The store
    # was then found once per call site and ufunc, three frames (the impl, the broadcast
    # workaround, the store: 2.42 us against 1.37); a vector's scatter by label now runs
    # in the site's one frame at the user's line.
    import sys

    import kiln
    rng = np.random.default_rng(6)
    v, cell = rng.standard_normal(7), rng.integers(0, 4, 7)
    compiled = kiln.compile(extremes)
    compiled(v, cell)
    calls = []
    sys.setprofile(lambda frame, event, arg: calls.append(frame.f_code) if event == "call" else None)
    try:
        got = compiled(v, cell)
    finally:
        sys.setprofile(None)
    for g, w in zip(got, extremes(v, cell)):
        np.testing.assert_array_equal(g, w)
    names = [c.co_name for c in calls if c.co_name == "at" or c.co_filename.endswith(
        ("ufunc_methods.py", "scatter.py", "value_warnings.py"))]
    assert names == ["at"] * 2
    # the user's line, which NumPy's warnings name
    line = extremes.__code__.co_firstlineno + 2
    assert [c.co_firstlineno for c in calls if c.co_name == "at"] == [line, line]


def test_a_ufunc_at_site_copies_for_the_functional_op_and_warns_at_the_users_line():
    # The site's one frame (kiln/ops/ufunc_methods.py _AT_SOURCE) for both ops: the
    # functional one writes a copy, the in-place one x itself; NumPy's warning names the
    # line given, as the user's own np.divide.at does.
    import warnings

    from kiln.ops import REGISTRY
    op = REGISTRY["index_ufunc_at"]
    x, i, v = np.ones(3), np.array([0, 2, 2]), np.array([0.0, 2.0, 4.0])
    want = x.copy()
    with np.errstate(divide="ignore"):
        np.divide.at(want, i, v)
    for fn, fresh in ((op.impl, True), (op.inplace_impl, False)):
        site = op.impl_at("site.py", 41, fn)
        got = x.copy()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = site(got, (i,), v, ufunc="divide")
        np.testing.assert_array_equal(out, want)
        assert (out is got) is not fresh and bool((got == 1.0).all()) is fresh
        assert [(w.filename, w.lineno) for w in caught] == [("site.py", 41)]
