"""Everyday constructs that broke the graph (stop 50): ufunc calls with ``dtype=`` or
``casting=``. Each is checked against the plain function (values, dtypes, exceptions,
arguments after the call) and by its break count, on the counting backend (no kernel
build) unless said otherwise."""
from __future__ import annotations

import numpy as np

import kiln
from .conftest import run_probe, same_as_numpy


def _typed_ufuncs(a, b, i, o):
    s = np.add(a, b, dtype=np.float32) * 2          # float64 + float32 added in float32
    m = np.multiply(i, i, dtype=np.float64)         # int64 cast to float64 first
    w = np.add(i, 2.5, dtype=np.float32)            # a weak Python float, float32 loop
    r = np.sqrt(i, dtype="f4")
    c = np.less(b, b, dtype=bool)
    u = np.add(a, a, dtype=np.int32, casting="unsafe")
    np.add(a, 1, dtype=np.float32, out=o)           # the float32 result cast into float64 o
    return s, m, w, r, c, u, np.subtract(a, b, casting="safe"), np.add(b, b, casting="no")


def test_ufunc_dtype_and_casting_are_captured():
    a, b = np.linspace(-2, 3, 5), np.linspace(0, 1, 5).astype(np.float32)
    compiled, _, _ = run_probe(_typed_ufuncs, a, b, np.arange(5), np.zeros(5))
    assert all(r.graph_break is None for r in compiled.records)


def _typed_errors(a, i, which):
    if which == 0:
        return np.add(a, a, dtype=np.int32)             # input cast not 'same_kind'
    if which == 1:
        return np.add(i, 2 ** 40, dtype=np.int32)       # the Python int overflows int32
    if which == 2:
        return np.less(a, a, dtype=np.float64)          # no such loop
    if which == 3:
        return np.add(a, 1, dtype=np.float32, out=i)    # output cast not 'same_kind'
    return np.add(a, i, casting="equiv")


def test_ufunc_dtype_and_casting_errors_are_numpys():
    compiled = kiln.compile(_typed_errors, backend="eager")
    for which in range(5):
        same_as_numpy(compiled, _typed_errors, np.linspace(0, 1, 3), np.arange(3), which)
