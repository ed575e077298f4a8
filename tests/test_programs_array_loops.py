"""``for v in x`` and ``for i, v in enumerate(x)`` over a 1-D array: a loop over its
positions, each step reading x[i] when it runs (Python's array iterator reads lazily, so a
body that writes into x sees its writes), captured as one loop node instead of unrolling
(npbench's crc16 ran as Python: 1.4 ms, now ~0.05 ms). Checked like tests/test_programs.py
on every backend, and each must be one graph holding a loop node."""
from __future__ import annotations

import numpy as np
import pytest

import kiln
from benchmarks.npbench import crc16
from tests.test_programs import BACKENDS, program_registry, program_test

_rng = np.random.default_rng(4040)
PROGRAMS, program = program_registry()


def _bytes(n):
    return _rng.integers(0, 256, n, dtype=np.uint8)


program((_bytes(40),), (_bytes(1),), (_bytes(0),))(crc16)


@program((_rng.random(60),), (np.zeros(30) + 0.75,), (_rng.random(50).astype(np.float32),))
def weighted_above_half(x):
    t = 0.0
    for i, v in enumerate(x):
        if v > 0.5:
            t += v * i
    return t


@program((_rng.integers(-5, 5, 40),), (np.arange(30),))
def first_negative_position(x):
    for i, v in enumerate(x, start=1):
        if v < 0:
            return i
    return -1


@program((np.arange(20.0),), (_rng.random(25),))
def running_writes(x):   # each step reads x[i] after the earlier steps' writes
    for v in x:
        x[0] += v
    return x


@program((_rng.random(40) * 10,), (_rng.random(40).astype(np.float32) * 10,))
def clamp_count(x):
    n = 0
    s = 0.0
    for v in x:
        if v > 9.0:
            break
        if v < 1.0:
            continue
        n += 1
        s += v
    return n, s


@program((_rng.random((12, 3)),))
def row_sums(a):          # rows of a 2-D array: views, unrolled as before
    out = 0.0
    for r in a:
        out += r.sum()
    return out


test_program = program_test(PROGRAMS, BACKENDS, share=4)


@pytest.mark.parametrize("name", [n for n in PROGRAMS if n != "row_sums"])
def test_a_loop_over_an_array_is_one_loop_node(name):
    fn, calls = PROGRAMS[name]
    report = kiln.explain(fn)(*[a.copy() if isinstance(a, np.ndarray) else a for a in calls[0]])
    # (a return inside the body ends the graph after the node, as for a range loop)
    assert all("returns from inside its body" in b.reason for b in report.break_reasons), \
        [b.reason for b in report.break_reasons]
    assert any("loop node" in note for note in report.loops), report.loops
