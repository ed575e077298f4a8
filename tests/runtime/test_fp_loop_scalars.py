"""NumPy's float scalar math warns per operation ("overflow encountered in scalar
multiply", "invalid value encountered in scalar divide", "overflow encountered in cast"
of a float64 written into a float32 array). A loop body compiled to C++ reads the
floating-point flags it raised: where NumPy's error mode and the warnings filters would
show one, the loop runs again as the reference, which warns as NumPy (each time under
"always"); else the native result stands (lowering/loop_runner.py, runtime/fpwarn.py
``loop_flags_heard``). Compiled vs plain NumPy: values, types, warnings (category,
message, file, line), errors."""
from __future__ import annotations

import warnings

import numpy as np

import kiln
from kiln.ops.loops import stats


def _recur(x, y, n):
    acc = x[0]
    q = x[0]
    for i in range(1, n):
        acc = acc * x[i]          # overflow, invalid (0 * inf)
        q = q / x[i] + 1.0        # divide by zero, invalid (0 / 0), overflow
        y[i] = acc                # overflow in cast (float32 y)
    return acc, q


def _reads_back(x, y, n):
    # reads the array it writes: a warning's rerun starts over from the inputs
    for i in range(1, n):
        y[i] = y[i - 1] * x[i] - x[i]
    return y[n - 1]


def _run(fn, *args, mode="always"):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter(mode)
        try:
            out = fn(*args)
        except RuntimeWarning as e:
            out = repr(e)
    return out, [(w.category, str(w.message), w.filename, w.lineno) for w in seen]


def _same(a, b):
    return type(a) is type(b) and (np.array_equal(a, b, equal_nan=True) if not isinstance(a, str) else a == b)


def test_float_scalar_loop_warns_as_numpy():
    compiled = kiln.compile(_recur)
    cases = ([1e308, 10, 10, 0.5], [0.0, 0.0, 1.0, np.inf], [1.0, 0.0, 1.0, 0.0], [1e30, 1e10, 1.0, 2.0],
             [1.0, 2.0, 3.0, 4.0])
    for data in cases:
        x = np.array(data)
        for mode in ("always", "error"):
            ys = [np.zeros(4, np.float32) for _ in range(2)]
            (want, w_seen), (got, g_seen) = _run(_recur, x, ys[0], 4, mode=mode), \
                _run(compiled, x, ys[1], 4, mode=mode)
            assert g_seen == w_seen, (data, mode)
            assert all(_same(g, w) for g, w in zip(got, want)) if not isinstance(want, str) else got == want
            assert np.array_equal(ys[0], ys[1], equal_nan=True), (data, mode)
    x = np.array(cases[0])
    w_first = _run(_recur, x, np.zeros(4, np.float32), 4)[1]
    for _ in range(4):   # warnings' reruns as the reference are no misses: it stays native
        assert _run(compiled, x, np.zeros(4, np.float32), 4)[1] == w_first != []
    native = stats["native"]
    with np.errstate(all="ignore"):   # no warning to give: the native result stands
        assert _run(compiled, x, np.zeros(4, np.float32), 4)[1] == []
    assert _run(compiled, np.array(cases[-1]), np.zeros(4, np.float32), 4)[1] == []
    assert stats["native"] == native + 2


def test_a_loop_reading_what_it_writes_reruns_from_its_inputs():
    compiled = kiln.compile(_reads_back)
    for data in ([1.0, 1e200, 1e200, 2.0], [1.0, np.inf, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0]):
        x = np.array(data)
        for mode in ("always", "default"):
            ys = [np.ones(4) for _ in range(2)]
            (want, w_seen), (got, g_seen) = _run(_reads_back, x, ys[0], 4, mode=mode), \
                _run(compiled, x, ys[1], 4, mode=mode)
            assert g_seen == w_seen and _same(got, want), (data, mode)
            assert np.array_equal(ys[0], ys[1], equal_nan=True), (data, mode)


def _unsigned_chain(a):
    c = np.uint32(0)
    for k in range(a.shape[0]):
        c = c ^ (np.uint32(0) - np.uint32(a[k]))   # overflow in scalar subtract
    return c


def test_a_loop_body_run_by_numpy_warns_at_the_users_line():
    """The NumPy backends print a loop node's body as a function of its own; its scalar ops
    warned inside kiln/ops/loops.py (the scalar function's impl), not at the user's line,
    which also made the default filter's once-per-location differ from NumPy's."""
    a = np.arange(1, 6, dtype=np.uint8)
    for backend in ("eager", "aot_eager", "cpp"):
        compiled = kiln.compile(_unsigned_chain, backend=backend)
        for mode in ("always", "default"):
            want, got = _run(_unsigned_chain, a, mode=mode), _run(compiled, a, mode=mode)
            assert got[1] == want[1] != [] and _same(got[0], want[0]), (backend, mode)
