"""The generated wrapper writes views and in-place writes as Python subscripts
(``view3 = buf1[:, 2:64]``, ``buf7[22:64, 22] = buf8``) rather than calling the ops'
Python functions: an unrolled row loop (npbench's covariance, 64 steps of a column view,
a matmul and two writes) ran at 0.9x NumPy on those frames, 1.1x without them. Checked
against NumPy with the arguments after the call, and on the text of the wrapper."""
import numpy as np
import pytest

import kiln
from benchmarks.npbench_more import covariance
from kiln.config import config


def odd_indices(a, b):
    out = np.zeros((4, 5, 6))
    out[..., ::-2] = b[::-1, None, :3]          # Ellipsis, a negative step, None
    out[1, ::2, 1:-1:2] = a[0] @ a[:, :2]       # ints, steps, a negative stop
    out[(2,)] = a.T[0, 1]
    out[-1, -1, -1] = a[-1, ::-1].sum()
    return out, out[::-1, 1:, ...][..., None, 0] * a[:1, :1]


def _wrapper_text(fn, args, tmp_path, monkeypatch):
    monkeypatch.setattr(config, "debug_dir", str(tmp_path))
    got = kiln.compile(fn)(*args)
    texts = [p.read_text() for p in tmp_path.rglob("wrapper.py")]
    assert texts, "no wrapper was written"
    return got, "\n".join(texts)


@pytest.mark.parametrize("fn, make, written", [
    (covariance, lambda g: (12, 17.0, g.random((17, 12))), "[:, 1:12]"),
    (covariance, lambda g: (40, 45.0, g.random((45, 40))), "[38:40, 38] = "),
    (odd_indices, lambda g: (g.random((3, 3)), g.random((4, 6))), "]"),
])
def test_views_and_writes_are_subscripts_in_the_wrapper(fn, make, written, tmp_path, monkeypatch):
    args = make(np.random.default_rng(3))
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*args)
    got, text = _wrapper_text(fn, mine, tmp_path, monkeypatch)
    for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-13)
    for a, m in zip(args, mine):                     # data -= mean reached the caller
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(m, a, rtol=1e-13)
    assert "_view_getitem(" not in text and "_inplace_index_put(" not in text, text
    assert written in text, text


def test_a_subscript_write_keeps_numpys_errors():
    def f(x, v):
        y = x * 2
        y[1:3] = v          # v of the wrong shape: NumPy's ValueError, from the wrapper
        return y

    x = np.arange(6.0)
    with pytest.raises(ValueError) as want:
        f(x, np.ones(3))
    with pytest.raises(ValueError) as got:
        kiln.compile(f)(x, np.ones(3))
    assert str(got.value) == str(want.value)
