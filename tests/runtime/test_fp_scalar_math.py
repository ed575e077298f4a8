"""NumPy's scalar math on float scalars warns per operation: ``x.max() % x.min()`` with a
zero minimum "invalid value encountered in scalar remainder", ``inf + -inf`` "... in
scalar add". Compiled, those scalars come out of one kernel with the reductions that made
them; the kernel's flags say the same (runtime/fpwarn.py: a max/min reduction's NaN
propagation is no NaN the input checks miss, lowering/cpp.py reads_nan_literal; a few
values summing to NaN are looked at one by one). Compiled vs plain NumPy: values, types,
the warnings (category, message, file, line)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln

OPS = {
    "add": lambda x: x.max() + x.min(),
    "subtract": lambda x: x.max() - x.min(),
    "multiply": lambda x: x.max() * x.min(),
    "divide": lambda x: x.max() / x.min(),
    "floor_divide": lambda x: x.max() // x.min(),
    "remainder": lambda x: x.max() % x.min(),
    "power": lambda x: x.max() ** x.min(),
    "reversed_divide": lambda x: x.min() / x.max(),
    "reversed_remainder": lambda x: x.min() % x.max(),
    "divmod": lambda x: divmod(x.max(), x.min()),
}
DATA = ([3, 0], [0, 0], [-3, 0], [3e38, 1e-38], [np.inf, 2], [np.nan, 1], [np.inf, -np.inf],
        [2.5, 1.5])


def _run(fn, x):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fn(x)
    return out, [(w.category, str(w.message), w.filename, w.lineno) for w in seen]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_float_scalar_math_warns_as_numpy(op, dtype, monkeypatch):
    monkeypatch.setenv("KILN_COST_MODEL", "0")
    fn = OPS[op]
    compiled = kiln.compile(fn)
    for data in DATA:
        x = np.array(data, dtype)
        (exp, want), (got, seen) = _run(fn, x), _run(compiled, x)
        assert type(got) is type(exp) and np.array_equal(got, exp, equal_nan=True), (data, got, exp)
        assert seen == want, data


def test_inf_minus_inf_in_a_small_array_warns():
    # (a few values that sum to NaN, inf and -inf, hold no NaN: the kernel's flag is real)
    def f(x):
        return x[0] + x[1]
    x = np.array([np.inf, -np.inf])
    assert _run(kiln.compile(f), x)[1] == _run(f, x)[1] != []


def _float16_constant(v):
    return np.float16(v) * np.float16(70000.0)


def test_a_numpy_scalar_made_with_a_warning_warns_on_every_call():
    """np.float16(70000.0) overflows ("overflow encountered in cast") each time the
    function runs: capture does not fold it into a constant made once."""
    compiled = kiln.compile(_float16_constant, backend="eager")
    for v in (2.0, 1e5, 3.0):
        want, got = _run(_float16_constant, v), _run(compiled, v)
        assert got[0] == want[0] and type(got[0]) is type(want[0]) and got[1] == want[1]


def _column_max_of_log(X):
    return np.log(X).max(axis=0)


def test_a_column_max_of_an_invalid_op_warns_invalid():
    # a column reduction keeps its NaN flags per column (``nan0[x1 - x1_b] ? NaN : ...``):
    # propagation too, no NaN literal the input checks miss (it made the kernel's invalid
    # flag mean nothing: np.log's "invalid value" was lost)
    compiled = kiln.compile(_column_max_of_log)
    X = np.linspace(1.0, 2.0, 60).reshape(6, 10)
    for bad in (-1.0, np.nan, 0.0):
        X[2, 3] = bad
        want = _run(_column_max_of_log, X)
        got = _run(compiled, X)
        assert np.array_equal(got[0], want[0], equal_nan=True)
        assert got[1] == want[1], bad
