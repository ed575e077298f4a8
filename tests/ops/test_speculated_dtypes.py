"""Results whose dtype depends on the values (kiln/ops/speculation.py): np.linalg.eig and
eigvals of real matrices, np.roots, np.poly of a matrix or of complex roots,
np.real_if_close. Each spelling is one graph through explain, with data giving a real
result and data giving a complex one, and matches NumPy (values, dtypes, shapes); when
the data change kind the call runs as Python (never a wrong dtype), the next compiles
for the new kind, and a line that gave both kinds breaks the graph there."""

import numpy as np
import pytest

import kiln

from .spelling_run import explain_and_run

rot = np.array([[0.0, -1.0, 0.5], [1.0, 0.0, 0.2], [0.0, 0.3, 2.0]])   # complex eigenvalues
sym = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 1.0]])    # real ones
roots_real = np.array([1.0, -6.0, 11.0, -6.0])                          # 1, 2, 3
roots_complex = np.array([1.0, 0.0, 1.0, 0.0])                          # 0, +-1j
leading_zeros = np.array([0.0, 0.0, 1.0, -3.0, 2.0, 0.0])              # fewer roots; a zero one
close = np.array([1.0 + 1e-15j, 2.0 - 0j, -3.0 + 0j])
far = np.array([1.0 + 1e-3j, 2.0 + 0j, -3.0 + 0j])
_EIG_ALWAYS_COMPLEX = np.linalg.eigvals(sym).dtype.kind == "c"   # NumPy >= 2.5
real_roots = np.array([[1.0, -6.0, 11.0, -6.0], [1.0, 0.0, -4.0, 0.0]])     # rows of polynomials
complex_roots = np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 2.0, 5.0, 0.0]])


def _eig(a):
    w, v = np.linalg.eig(a)
    return w * 2, v.sum(axis=0)


CASES = {
    "eig": (_eig, {"real": (sym,), "complex": (rot,)}),
    "eig_float32": (_eig, {"real": (sym.astype(np.float32),), "complex": (rot.astype(np.float32),)}),
    "eigvals": (lambda a: np.linalg.eigvals(a) + 1, {"real": (sym,), "complex": (rot,)}),
    "eigvals_int": (lambda a: np.linalg.eigvals(a) + 1,
                    {"real": (np.array([[2, 1], [1, 2]]),), "complex": (np.array([[0, -1], [1, 0]]),)}),
    "roots": (lambda p: np.roots(p) * 2, {"real": (roots_real,), "complex": (roots_complex,)}),
    "roots_leading_zeros": (lambda p: np.roots(p) - 1, {"real": (leading_zeros,),
                                                       "complex": (np.array([0.0, 1.0, 0.0, 4.0]),)}),
    "poly_of_a_matrix": (lambda a: np.poly(a) * 3, {"real": (rot,)}),
    "poly_of_complex_roots": (lambda z: np.poly(z) + 1,
                              {"real": (np.array([1 + 2j, 1 - 2j, 3 + 0j]),),
                               "complex": (np.array([1 + 2j, 3 + 0j]),)}),
    "real_if_close": (lambda z: np.real_if_close(z) * 2, {"real": (close,), "complex": (far,)}),
    "real_if_close_tol": (lambda z: np.real_if_close(z, tol=1e13) + 1, {"real": (far,)}),
}
PARAMS = [(name, kind) for name, (_, datas) in CASES.items() for kind in datas]


def _same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    else:
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape)
        np.testing.assert_allclose(got, want, rtol=1e-5 if want.dtype.itemsize <= 8 else 1e-12,
                                   atol=1e-6)


@pytest.mark.parametrize("name,kind", PARAMS)
def test_spelling_is_one_graph_matching_numpy(name, kind):
    fn, datas = CASES[name]
    out, got, want, mine, plain = explain_and_run(fn, datas[kind])
    assert out.graph_count == 1 and out.graph_break_count == 0, out
    _same(got, want)
    if not (name.startswith("eig") and _EIG_ALWAYS_COMPLEX):
        assert (np.asarray(want[0] if isinstance(want, tuple) else want).dtype.kind == "c") == (kind == "complex")


def test_computed_input_falls_back_once_then_compiles_for_the_kind_seen():
    # p[0] * 1.0 is computed in the graph: capture cannot read its values and expects complex
    def f(p, q):
        return np.roots(p[0] * 1.0) + q.sum()

    graphs = []
    cf = kiln.compile(f, backend=lambda g, ex: graphs.append(g) or g)
    for p in (real_roots, real_roots, real_roots):
        _same(cf(p, p), f(p, p))
    assert len(graphs) == 2   # complex expected (the first call ran as Python), then real
    assert [n.val.dtype for n in graphs[-1].calls if n.target.name == "roots"] == [np.float64]
    assert cf.calls_uncompiled == 0 and len(cf.cache_entries) == 1
    # data of the other kind: Python again, then the line breaks the graph and the code
    # after it compiles for each dtype (resume functions guarded by dtype)
    for p in (complex_roots, complex_roots, real_roots, complex_roots, real_roots):
        _same(cf(p, p), f(p, p))
    assert any(r.graph_break is not None and "real in one call, complex in another" in r.graph_break.reason
               for r in cf.records)


def _writes_then_roots(p):
    p += 1.0                          # the caller sees this write once
    w = np.roots(p[0] * 1.0)
    p[0, 0] = w.real.sum()
    return w


@pytest.mark.parametrize("backend", ["cpp", "aot_eager", "eager"])
def test_fallback_after_a_write_writes_once(backend):
    cf = kiln.compile(_writes_then_roots, backend=backend)
    for p in (real_roots - 1, complex_roots - 1, real_roots - 1):
        mine, plain = p.copy(), p.copy()
        _same(cf(mine), _writes_then_roots(plain))
        np.testing.assert_array_equal(mine, plain)


def test_real_if_close_is_a_view_of_its_argument():
    def f(z):
        r = np.real_if_close(z)
        r[0] = 7.0                     # writes z (a view of its real part, or z itself)
        return r

    for z in (close, far):
        mine, plain = z.copy(), z.copy()
        _same(kiln.compile(f)(mine), f(plain))
        np.testing.assert_array_equal(mine, plain)


def test_real_input_of_real_if_close_is_itself():
    x = np.arange(3.0)
    f = kiln.compile(lambda x: np.real_if_close(x))
    assert f(x) is x


def test_on_tensors_the_values_decide():
    t = kiln.tensor(close, requires_grad=False)
    assert np.real_if_close(t).dtype == np.float64
    assert np.linalg.eigvals(kiln.tensor(sym)).dtype == np.linalg.eigvals(sym).dtype
    assert np.linalg.eigvals(kiln.tensor(rot)).dtype == np.complex128
    assert np.roots(kiln.tensor(roots_real)).dtype == np.float64


@pytest.mark.parametrize("name,fn", [("roots_2d", lambda a: np.roots(a)),
                                     ("eig_not_square", lambda a: np.linalg.eig(a[:2])),
                                     ("poly_not_square", lambda a: np.poly(a[:2]))])
def test_numpys_error_comes_out_unchanged(name, fn):
    with pytest.raises(Exception) as want:
        fn(sym.copy())
    with pytest.raises(type(want.value)) as got:
        kiln.compile(fn)(sym.copy())
    assert str(got.value) == str(want.value)
