"""np.fft's transforms have a shape rule of their own (kiln/ops/signal.py ``_fft_meta``):
NumPy's answer on a small stand-in plus NumPy's length rule, never a transform of a fake of
the whole shape (capture probes sizes up to 4099 n: one np.fft.fftn of a (30, 10, 20) array
took 38 s to capture). It must give what NumPy gives: shape, dtype, or its error."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln
from kiln.ops import REGISTRY, TensorMeta
from kiln.ops.signal import _MANY_AXES, _ONE_AXIS

_SHAPES = [(5,), (1,), (0,), (4, 3), (2, 1, 7), (3, 0), (6, 5, 4)]
_DTYPES = [np.float32, np.complex128, np.int64]


def _params(name):
    if name in _ONE_AXIS:
        return [dict(n=n, axis=ax, norm=None) for n in (None, 1, 4, 7, 0) for ax in (-1, 0, 1, 3)]
    return [dict(s=s, axes=ax, norm=None) for s in (None, (3,), (4, 5), (2, 3, 4), (0, 2), (-1, 3))
            for ax in (None, (0,), (0, 1), (-1, 0), (1, 0, 2), (5,))]


def _outcome(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = f()
            return tuple(r.shape), np.dtype(r.dtype)
        except Exception as e:   # noqa: BLE001 - NumPy's error is the answer too
            return type(e), str(e)


@pytest.mark.parametrize("name", _ONE_AXIS + _MANY_AXES)
def test_shape_rule_is_numpys(name):
    op, fn = REGISTRY[name], getattr(np.fft, name)
    assert op.meta is not None
    for shape in _SHAPES:
        for dt in _DTYPES:
            for p in _params(name):
                want = _outcome(lambda: fn(np.zeros(shape, dt), **p))
                got = _outcome(lambda: op.meta(TensorMeta(shape, np.dtype(dt)), **p))
                assert got == want, (shape, dt, p)


def test_fftn_of_transposed_arrays_compiles():
    f = kiln.compile(lambda v: np.fft.fftn(v), backend="eager")
    x = np.random.default_rng(31).random((30, 20, 10))
    for axes in [(0, 1, 2), (0, 2, 1), (2, 0, 1)]:
        v = np.transpose(x, axes)
        np.testing.assert_allclose(f(v), np.fft.fftn(v), rtol=1e-12, atol=1e-9)
