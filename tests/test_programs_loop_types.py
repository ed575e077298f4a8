"""A loop node's carried Python scalars come out with the type Python gives them.

``t = 0.0; for v in x: if v > 0.5: t += v`` is a Python float when no element passes and
an ``np.float64`` once one did; loop nodes gave ``np.float64(0.0)`` either way (a test
suite's ``type(r) is float``, ``json.dumps(r)`` saw the difference). A carried flag now
tracks the type (kiln/capture/loop_types.py). Each program is checked like
tests/test_programs.py (values, types, dtypes) on data where the NumPy-typing path runs
always, sometimes and never, and must still hold a loop node."""
from __future__ import annotations

import numpy as np
import pytest

import kiln
from tests.test_programs import BACKENDS, program_registry, program_test

_rng = np.random.default_rng(4141)
PROGRAMS, program = program_registry()
_DATA = ((np.zeros(40),), (_rng.random(50),), (np.ones(30),), (np.zeros(0),))


@program(*_DATA)
def sum_above_half(x):            # an array loop: float, or np.float64 once one passed
    t = 0.0
    for v in x:
        if v > 0.5:
            t += v
    return t


@program(*_DATA)
def range_sum_above_half(x):      # the same as a range loop
    t = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            t = t + x[i]
    return t


@program(*_DATA)
def last_flag(x):                 # a bool: False, or the np.bool_ a comparison gave
    b = False
    for v in x:
        if v > 0.5:
            b = v > 0.75
    return b


@program(*[(d[0].astype(np.int64) * 3 - 1,) for d in _DATA])
def int_total(x):                 # an int: 0, or np.int64 once an element was added
    n = 0
    for v in x:
        if v > 0:
            n += v
    return n


@program(*_DATA)
def reset_on_large(x):            # a reset to a Python float makes it a float again
    t = 0.0
    for v in x:
        if v > 0.9:
            t = 0.0
        else:
            t += v
    return t


@program(*[(d[0], d[0].shape[0] // 2) for d in _DATA])
def while_sum(x, n):              # a while loop that may run zero times
    i = 0
    t = 0.0
    while i < n:
        t += x[i]
        i += 1
    return t, i


@program(*[(d[0].reshape(-1, 5) if d[0].size else np.zeros((0, 5)),) for d in _DATA[:3]])
def nested_sum_above_half(a):     # the inner loop's flag goes on in the outer body's
    t = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] > 0.5:
                t += a[i, j]
    return t


@program(*_DATA)
def used_after_the_loop(x):       # float32 * float stays float32; * np.float64 does not
    t = 0.0
    for v in x:
        if v > 0.5:
            t += v
    return t * np.float32(2)


@program((_rng.random(30),), (np.ones(20),))
def always_numpy(x):              # every iteration makes it NumPy: one graph, no break
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s * 2


@program((_rng.random(50), 3), (np.zeros(40), 2.5), (_rng.random(30), np.int64(-1)))
def count_from_argument(x, n):    # a parameter counts: one path rebinds it, the other never read it
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            n += 1
    return n


@program((_rng.random(12), 0.5), (np.ones(12), 0.25))
def scaled_by_python_floats(y, alpha):   # NumPy typed from the start, each step c * t: NumPy still
    trend = y[1] - y[0]
    for _ in range(1, len(y)):
        trend = (1 - alpha) * trend
    return trend + np.arange(3)


@program((np.cumsum(_rng.random(12)), 0.5, 0.3), (np.arange(12.0), 0.8, 0.1))
def holt_level_and_trend(y, alpha, beta):   # level + trend reads both flags, alpha * y[t] decides
    level, trend = y[0], y[1] - y[0]
    for t in range(1, len(y)):
        prev = level
        level = alpha * y[t] + (1 - alpha) * (level + trend)
        trend = beta * (level - prev) + (1 - beta) * trend
    return level + trend * np.arange(1, 4)


@program((_rng.random(8), 0.5), (np.ones(8), 0.25), (np.zeros(0), 0.5))
def python_float_scaled(x, c):      # a Python float scaled by Python floats stays a float
    t = 1.0
    for i in range(x.shape[0]):
        t = c * t
    return t, type(t).__name__


test_program = program_test(PROGRAMS, BACKENDS, share=4)


@pytest.mark.parametrize("name", [n for n in PROGRAMS if n != "while_sum"])
def test_a_carried_python_scalar_stays_a_loop_node(name):
    fn, calls = PROGRAMS[name]
    report = kiln.explain(fn)(*calls[1])
    assert any("loop node" in note for note in report.loops), report.loops


@pytest.mark.parametrize("name", ["always_numpy", "scaled_by_python_floats", "holt_level_and_trend"])
def test_a_loop_that_always_makes_it_numpy_breaks_nothing(name):
    # (a flag that ended as its own placeholder, or was read by a flag node no result
    # needed, was kept: the value then broke the graph at its next use after the loop)
    fn, calls = PROGRAMS[name]
    assert kiln.explain(fn)(*calls[0]).graph_break_count == 0
