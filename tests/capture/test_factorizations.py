"""np.linalg.svd / eigh / qr / slogdet in compiled code: one graph (one packed extern op
each, kiln/ops/factorizations.py), NumPy's result types and values, through the C++
backend; slogdet's gradient against finite differences, and AutogradError where no
derivative is declared."""
import numpy as np
import pytest

import kiln

from .conftest import assert_same
from .test_data_dependent import CppCounting

RNG = np.random.default_rng(11)


def factor_all(a, b):
    s, ld = np.linalg.slogdet(a)
    w, v = np.linalg.eigh(a @ np.swapaxes(a, -1, -2))
    svd = np.linalg.svd(b)
    u2, s2, vh2 = np.linalg.svd(b, full_matrices=False)
    q, r = np.linalg.qr(b)
    return (s * ld, w * 2, v, svd, svd.S.sum(), (u2 * s2[..., None, :]) @ vh2, q, r,
            np.linalg.qr(b, mode="complete"), np.linalg.qr(b, mode="r"),
            np.linalg.eigh(a, "U").eigenvalues)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_factorizations_compile_to_one_graph(batch):
    backend = CppCounting()
    compiled = kiln.compile(factor_all, backend=backend)
    for _ in range(2):
        a = RNG.standard_normal(batch + (4, 4))
        b = RNG.standard_normal(batch + (5, 3))
        assert_same(compiled(a, b), factor_all(a, b))
    assert len(backend.graphs) == 1
    assert kiln.explain(factor_all)(a, b).graph_break_count == 0


def test_complex_svd_is_captured_with_a_real_s():
    a = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
    f = lambda a: np.linalg.svd(a)  # noqa: E731
    got, want = kiln.compile(f)(a), f(a)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert kiln.explain(f)(a).graph_break_count == 0


def test_slogdet_gradient_and_missing_derivatives():
    def loss(a):
        sign, logdet = np.linalg.slogdet(a)
        return logdet * 3 + sign
    a = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    g = kiln.grad(kiln.compile(loss))(a)
    eps, fd = 1e-6, np.zeros_like(a)
    for i in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[i] = eps
        fd[i] = (loss(a + d) - loss(a - d)) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    with pytest.raises(kiln.AutogradError, match="svd_packed"):   # U of a tall matrix: not unique
        kiln.grad(kiln.compile(lambda a: np.linalg.svd(a).U.sum()))(a[:, :2])


def test_lstsq_unpacks_its_residuals_without_a_range_per_call():
    # which residuals NumPy returns (k of them, or none) is a constant mask and the
    # packed flag: an np.arange node made a NumPy call of every compiled 9x3 lstsq
    seen = []
    a, b = np.arange(27.0).reshape(9, 3) ** 0.5, np.arange(9.0)
    got = kiln.compile(lambda a, b: np.linalg.lstsq(a, b, rcond=None),
                       backend=lambda g, ex: seen.append(g) or g)(a, b)
    [graph] = seen
    names = [n.op.name for n in graph.nodes if n.kind == "call"]
    assert "arange" not in names and names.count("lstsq_packed") == 1, names
    for g, w in zip(got, np.linalg.lstsq(a, b, rcond=None)):
        np.testing.assert_array_equal(g, w)
