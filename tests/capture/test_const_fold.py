"""NumPy ufuncs on numbers capture knows (kiln/capture/const_fold.py): computed while
capturing, as NumPy's scalars, so int()/float() and branches on them do not break."""
import warnings

import numpy as np
import pytest

import kiln


def box_sizes(Z):   # fractal_dimension (From Python to NumPy): sizes from the shape
    p = min(Z.shape)
    n = 2 ** np.floor(np.log(p) / np.log(2))
    n = int(np.log(n) / np.log(2))
    sizes = 2 ** np.arange(n, 1, -1)
    return Z.sum() * n, sizes


def test_ufuncs_of_shape_numbers_fold_and_int_does_not_break(probe):
    compiled, _, _ = probe(box_sizes, np.ones((64, 40)), graphs=1)
    assert not [r for r in compiled.records if r.graph_break is not None]


def test_folded_scalars_keep_numpy_types_and_promotion(probe):
    def f(x):
        s = np.sqrt(2)          # np.float64, strong: float32 * it is float64
        k = np.add(3, 4)        # np.int64
        h = np.float32(0.5) * np.exp(np.float32(1.0))   # float32 all the way
        return x * s, x * k, type(s), type(k), h, np.isnan(s), bool(np.signbit(-s))
    probe(f, np.arange(4, dtype=np.float32), graphs=1)


def test_a_ufunc_that_warns_is_not_folded_and_raises_where_numpy_raises():
    def f(x):
        return x + np.log(0.0)
    compiled = kiln.compile(f)
    assert np.all(compiled(np.zeros(3)) == -np.inf)
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            f(np.zeros(3))
        with pytest.raises(FloatingPointError):
            compiled(np.zeros(3))


def test_a_ufunc_of_an_argument_is_not_folded_when_the_number_changes():
    def f(x, n):
        return x * float(np.sqrt(n))
    compiled = kiln.compile(f)
    for n in (4, 9, 16):
        assert np.array_equal(compiled(np.ones(2), n), np.ones(2) * float(np.sqrt(n)))


@pytest.mark.parametrize("shape", [(8, 8), (33, 5)])
def test_fold_follows_the_shape_guard(shape):
    compiled = kiln.compile(box_sizes)
    for s in (shape, (128, 128)):
        Z = np.ones(s)
        got, want = compiled(Z), box_sizes(Z)
        assert got[0] == want[0] and np.array_equal(got[1], want[1])


def test_reductions_of_constant_tuples_fold(probe):
    # im2col (ML-From-Scratch's Conv2D): out_height = int((h + np.sum(pad_h) - fh) / s + 1)
    def out_size(x):
        pad, k = (1, 1), 3
        h = x.shape[-1]
        n = int((h + np.sum(pad) - k) / 1 + 1)
        return x[..., :n] * np.prod((2, 3)), np.max([n, 4])
    compiled, _, _ = probe(out_size, np.ones((2, 16)), graphs=1)
    assert not [r for r in compiled.records if r.graph_break is not None]


def fractal_dimension(Z, threshold=0.9):   # From Python to NumPy (Rougier), as written there
    def boxcount(Z, k):
        S = np.add.reduceat(
            np.add.reduceat(Z, np.arange(0, Z.shape[0], k), axis=0),
            np.arange(0, Z.shape[1], k), axis=1)
        return len(np.where((S > 0) & (S < k * k))[0])
    Z = (Z < threshold)
    p = min(Z.shape)
    n = 2 ** np.floor(np.log(p) / np.log(2))
    n = int(np.log(n) / np.log(2))
    sizes = 2 ** np.arange(n, 1, -1)
    counts = []
    for size in sizes:
        counts.append(boxcount(Z, size))
    coeffs = np.polyfit(np.log(sizes), np.log(counts), 1)
    return -coeffs[0]


def test_a_nested_helper_made_on_every_call_compiles_once():
    # Past the folded int(), the loop calls boxcount, a closure-free function made anew on
    # every call, whose inlining breaks (np.add.reduceat): one compiled helper serves every
    # such function object (it recompiled 5 times a call: 30 ms against NumPy's 1 ms).
    compiled = kiln.compile(fractal_dimension)
    img = np.random.default_rng(1).random((64, 80))
    for _ in range(4):
        assert compiled(img, 0.25) == fractal_dimension(img, 0.25)
    assert len(compiled._helpers) == 1
