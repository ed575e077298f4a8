"""Advanced indexing keeps NumPy's result layout through compiled code (Op.result_order,
kiln/ops/indexing.py ``advanced_order``): ``x[:, k, i, j]`` is laid out with x's first
axis fastest, kernels read it as it is (no copy to C order), and what the caller gets
has NumPy's strides and flags."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import kiln
from kiln.lowering.layout import contiguous_order, in_order
from kiln.ops.indexing import advanced_order


def _entries(combo):
    arrays = {"a1": np.array([0, 1, 0]), "a2": np.zeros((2, 3), int), "a21": np.zeros((2, 1), int)}
    return tuple(arrays.get(c, c) if isinstance(c, str) else c for c in combo)


BASE = np.zeros((4, 5, 6, 7))
VIEWS = {"C": BASE, "F": np.asfortranarray(BASE), "T": BASE.transpose(2, 0, 3, 1),
         "step": BASE[:, ::2], "neg": BASE[:, :, ::-1]}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_advanced_order_is_numpys(view):
    x = VIEWS[view]
    checked = 0
    for n in range(1, 5):
        for combo in itertools.product([slice(None), slice(1, 4), slice(None, None, 2), 1,
                                        "a1", "a2", "a21"], repeat=n):
            if not any(isinstance(c, str) for c in combo):
                continue
            index = _entries(combo)
            try:
                r = x[index]
            except IndexError:
                continue
            order = advanced_order(x.shape, tuple(s // 8 for s in x.strides), index)
            want = np.empty([r.shape[a] for a in order]).transpose(np.argsort(order)).strides
            assert all(a == b for a, b, m in zip(want, r.strides, r.shape) if m > 1), (view, combo)
            checked += 1
    assert checked > 2000


def test_in_order_copies_only_a_different_layout():
    x = np.arange(24.0).reshape(2, 3, 4)
    r = x[:, np.array([0, 2])]          # NumPy: axis 0 fastest
    order = contiguous_order(r.shape, [s // 8 for s in r.strides])
    assert in_order(r, r.strides, order) is r
    c = np.ascontiguousarray(r)
    got = in_order(c, r.strides, order)
    assert got is not c and got.strides == r.strides and np.array_equal(got, r)


def _im2col_indices(c, h, w, fh=3, fw=3):
    i0 = np.tile(np.repeat(np.arange(fh), fw), c)
    j0 = np.tile(np.arange(fw), fh * c)
    i = i0.reshape(-1, 1) + np.repeat(np.arange(h), w).reshape(1, -1)
    j = j0.reshape(-1, 1) + np.tile(np.arange(w), h).reshape(1, -1)
    k = np.repeat(np.arange(c), fh * fw).reshape(-1, 1)
    return k, i, j


def im2col_scaled(xp, k, i, j, s):
    cols = xp[:, k, i, j]
    return cols, cols * s, cols.transpose(1, 2, 0).reshape(k.shape[0], -1)


@pytest.mark.parametrize("layout", ["C", "F", "T"])
@pytest.mark.parametrize("backend", ["cpp", "aot_eager"])
def test_gather_result_keeps_numpys_layout(layout, backend):
    rng = np.random.default_rng(0)
    xp = rng.standard_normal((4, 2, 8, 8))
    xp = {"C": xp, "F": np.asfortranarray(xp), "T": xp.transpose(0, 1, 3, 2).copy().transpose(0, 1, 3, 2)}[layout]
    k, i, j = _im2col_indices(2, 6, 6)
    exp = im2col_scaled(xp, k, i, j, 0.5)
    got = kiln.compile(im2col_scaled, backend=backend)(xp, k, i, j, 0.5)
    for g, e in zip(got, exp):
        np.testing.assert_array_equal(g, e)
        assert g.strides == e.strides, (g.strides, e.strides)
        assert g.flags.c_contiguous == e.flags.c_contiguous and g.flags.f_contiguous == e.flags.f_contiguous


def test_a_result_numpy_lays_out_otherwise_is_copied_into_the_built_layout():
    # size-1 axes: NumPy's strides for them are its own choice; the kernel reads the rest
    def f(x, i):
        return x[:, i] * 2.0
    x = np.arange(60.0).reshape(3, 4, 5)
    compiled = kiln.compile(f, backend="cpp")
    for idx in (np.array([0, 2]), np.array([3, 1]), np.array([[1], [2]])):
        np.testing.assert_array_equal(compiled(x, idx), f(x, idx))
        np.testing.assert_array_equal(compiled(x[:, ::-1], idx), f(x[:, ::-1], idx))


def test_what_is_computed_from_a_gather_follows_its_layout_under_dynamic_sizes():
    # with size symbols the gather's buffer stays C-ordered for the kernels, but NumPy
    # lays img[:, cols] out with axis 0 fastest and a product of it follows (bilinear
    # resize: img[y0][:, x0] * wx came back C-ordered under dynamic=True)
    def f(img, cols, w):
        a = img[:, cols]
        return a * w, (a * w).sum(axis=0), a
    compiled = kiln.compile(f, backend="cpp", dynamic=True)
    cols = np.array([0, 1, 1, 3])
    for rows in (5, 7):
        img = np.arange(rows * 6.0).reshape(rows, 6)
        for g, e in zip(compiled(img, cols, np.linspace(0.0, 1.0, 4)), f(img, cols, np.linspace(0.0, 1.0, 4))):
            np.testing.assert_array_equal(g, e)
            assert g.strides == e.strides, (g.strides, e.strides)
