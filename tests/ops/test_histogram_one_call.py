"""np.histogram with edges from the data (no range) and np.histogram2d compute their
counts and edges in one NumPy call (``histogram_both``, ``histogram2d_both`` in
kiln/ops/histograms.py), as NumPy does: before, the edges came from a second call of
np.histogram_bin_edges per axis (40% of a histogram of 100 values)."""
import numpy as np
import pytest

import kiln


def hists(x, y):
    return (np.histogram(x, bins=5), np.histogram(x[x > 0], bins=3, density=True),
            np.histogram(x, bins=4, weights=y), np.histogram2d(x, y, bins=(2, 3)),
            np.histogram2d(x, y, bins=2, density=True), np.histogram2d(x, y, 2, range=[[0, 1], [-1, 1]]))


def _ops(fn, *args):
    seen = []
    kiln.compile(fn, backend=lambda g, ex: seen.append(g) or g)(*args)
    return [n.op.name for g in seen for n in g.nodes if n.kind == "call"]


def test_one_numpy_call_per_histogram():
    x = np.random.default_rng(3).standard_normal(20)
    names = _ops(hists, x, x[::-1].copy())
    assert names.count("histogram_both") == 3 and names.count("histogram2d_both") == 3, names
    assert not {"histogram_bin_edges", "histogram_counts", "histogram2d_counts"} & set(names), names


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_histograms_match_numpy(dtype):
    x = np.random.default_rng(4).standard_normal(20).astype(dtype)
    y = x[::-1].copy()
    got, want = kiln.compile(hists)(x, y), hists(x, y)
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides, (a, b)
    empty = x[:0]   # an empty float32 array's 2-D edges are float64
    for a, b in zip(kiln.compile(lambda a: np.histogram2d(a, a, 2))(empty), np.histogram2d(empty, empty, 2)):
        assert a.dtype == b.dtype and np.array_equal(a, b)


def ranged(img):
    hist, bins = np.histogram(img.ravel(), bins=8, range=(0, 256))
    return hist, bins, np.histogram(img, bins=3, range=(-1.5, 2))[1]


def test_edges_of_a_range_are_a_constant():
    # With a range given the edges depend on the data's dtype alone: NumPy's, computed once
    # at capture, not np.histogram_bin_edges on every call (equalize_with_interp,
    # test_programs_apps.py: 1.2-1.5x NumPy's time compiled); each call gets its own copy
    img = np.random.default_rng(5).integers(0, 256, (4, 5)).astype(np.uint8)
    assert "histogram_bin_edges" not in _ops(ranged, img)
    compiled = kiln.compile(ranged)
    for x in (img, img.astype(np.float32)):
        for _ in range(2):
            got, want = compiled(x), ranged(x)
            for a, b in zip(got, want):
                np.testing.assert_array_equal(a, b)
                assert a.dtype == b.dtype
            got[1][:] = -1   # the caller's to write
