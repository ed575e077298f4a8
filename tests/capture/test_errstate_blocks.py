"""``with np.errstate(...='ignore'):`` around array code is captured (capture's
variables/numpy_objects.py): no graph break, the body's ops marked with the kinds NumPy
ignores there. Kernels warn of the other kinds only, the graph run by NumPy (the caller's
mode raises) runs those ops under the same errstate, and NumPy's mode outside is never
touched. Other arguments (warn, raise, call, a value computed at run time) still enter
the statement as Python, the body compiled under the real mode."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import kiln


def blocks(x, y):
    a = np.log(y) + x                      # outside: warns as NumPy
    with np.errstate(divide="ignore"):
        b = np.log(x) / y                  # divide ignored; log of a negative: invalid
    with np.errstate(all="ignore"):
        c = np.sqrt(x) * 1e308 * 10        # nothing here warns
    return a + b, c, (x / y).sum()         # outside again


def _run(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args)
        except FloatingPointError as e:
            out = e
    return out, sorted((str(w.message), w.lineno) for w in caught)


def _same(got, want):
    if isinstance(want, Exception):
        assert type(got) is type(want) and str(got) == str(want)
        return
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert np.asarray(g).dtype == np.asarray(w).dtype


INPUTS = [(np.array([0.0, 1.0, -1.0, 4.0]), np.array([0.0, 2.0, 1.0, 0.0])),  # all kinds, everywhere
          (np.array([0.0, 1.0, 4.0, 9.0]), np.ones(4)),      # only what the blocks ignore
          (np.array([-1.0, 1.0, 4.0, 9.0]), np.ones(4))]     # invalid inside the first block


def test_an_ignoring_errstate_block_is_captured_and_warns_as_numpy():
    compiled = kiln.compile(blocks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = kiln.explain(compiled)(*INPUTS[0])
    assert out.graph_count == 1 and out.graph_break_count == 0, out
    outer = np.geterr()
    for x, y in INPUTS:
        for mode in ("warn", "ignore", "raise"):
            with np.errstate(all=mode):
                want, want_warnings = _run(blocks, x, y)
                got, got_warnings = _run(compiled, x, y)
                assert np.geterr() == dict.fromkeys(outer, mode)
            assert np.geterr() == outer   # the caller's mode, after a raise too
            _same(got, want)
            assert got_warnings == want_warnings, (x, y, mode)
    assert len(compiled.records) == 1


def still_breaks(x, mode):
    with np.errstate(divide=mode):
        y = np.log(x)
    return y + 1


def test_other_errstate_arguments_still_run_the_with_statement_as_python():
    x = np.array([0.0, 1.0])
    for mode in ("warn", "raise"):
        compiled = kiln.compile(still_breaks)
        want, want_warnings = _run(still_breaks, x, mode)
        got, got_warnings = _run(compiled, x, mode)
        _same((got,) if not isinstance(got, Exception) else got,
              (want,) if not isinstance(want, Exception) else want)
        assert got_warnings == want_warnings
        assert any(r.graph_break is not None and "np.errstate" in r.graph_break.reason
                   for r in compiled.records)


def body_breaks(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
        if y[2] > 0:        # a break in the body
            y = y * 2
    return y + 1


def test_a_break_in_the_body_enters_the_errstate_as_python_and_compiles_the_body():
    # (the break moves to the errstate's call: only the if runs as Python, not the whole
    # with statement)
    x = np.array([0.0, 1.0, 4.0])
    compiled = kiln.compile(body_breaks, backend="eager")
    for _ in range(2):
        (got,), got_warnings = _run(lambda v: (compiled(v),), x)
        (want,), want_warnings = _run(lambda v: (body_breaks(v),), x)
        np.testing.assert_array_equal(got, want)
        assert got_warnings == want_warnings == []
    assert [r.ops[0] for r in compiled.records if r.ops] == ["log", "multiply", "add"], \
        [(r.function, r.ops) for r in compiled.records]
    assert np.geterr()["divide"] == "warn"
