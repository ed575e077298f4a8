"""np.quantile, np.nanquantile and the medians have a shape rule of their own
(kiln/ops/sorting.py ``_quantile_meta``): NumPy's dtype on a one-element stand-in, and
q's shape before x's reduced one, never a quantile of a fake of the whole shape (capture
probes a dynamic size up to 4099 n, and np.nanquantile goes lane by lane in Python: 3-12 s
to capture ``np.nanquantile(x, q, axis=1)`` with ``dynamic=True``). It must give what
NumPy gives."""
from __future__ import annotations

import itertools

import numpy as np

import kiln
from kiln.ops import REGISTRY, TensorMeta
from kiln.ops import sorting
from .test_fft_shape_rule import _outcome   # NumPy's shape and dtype, or its error


def test_shape_rule_is_numpys():
    op = REGISTRY["quantile"]
    for shape, dt in itertools.product([(), (3, 4), (2, 1, 3), (0, 3)], [np.float32, np.int64, np.bool_]):
        axes = [None] + [(a,) for a in range(len(shape))] + ([(0, len(shape) - 1)] if len(shape) > 1 else [])
        for axis, keepdims, kind, method, q in itertools.product(
                axes, (False, True), ("quantile", "nanquantile", "median", "nanmedian"),
                ("linear", "lower"), (0.3, np.array([0.1, 0.9]))):
            if "median" in kind and (method != "linear" or not isinstance(q, float)):
                continue
            params = dict(axis=axis, method=method, keepdims=keepdims, kind=kind)
            want = _outcome(lambda: sorting._quantile_impl(np.zeros(shape, dt), q, **params))
            got = _outcome(lambda: op.meta(TensorMeta(shape, np.dtype(dt)), q, **params))
            assert got == want, (shape, dt, params, q)


def test_capture_runs_no_long_stand_in(monkeypatch):
    seen = []

    def recorded(x, q, **params):
        seen.append(np.size(x))
        return np.nanquantile(x, q, **params)
    monkeypatch.setitem(sorting._QUANTILES, "nanquantile", recorded)
    f = kiln.compile(lambda x, q: np.nanquantile(x, q, axis=1), dynamic=True, backend="eager")
    rng = np.random.default_rng(8)
    for rows in (6, 9):
        x = rng.standard_normal((rows, 40))
        x[1, 3] = np.nan
        np.testing.assert_array_equal(f(x, 0.3), np.nanquantile(x, 0.3, axis=1))
    assert max(seen) <= 9 * 40
