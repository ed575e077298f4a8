"""Control flow nested inside a loop body: an inner loop (for or while) whose body has
if/elif/else, break, continue or a return, in a hand-written loop over an array and in
np.vectorize's per-element function. Each program is checked like tests/test_programs.py
(values, dtypes, shapes, exceptions, argument states) and must be one graph with a loop
node on 3.11, 3.12 and 3.13: CPython 3.12+ ends both sides of an if at the end of a for
loop's body with their own jump back to its head (3.11 only with an else), which the
branch merge joins there (kiln/capture/loop_branches.py ``branch``).
"""
from __future__ import annotations

import numpy as np
import pytest

import kiln
from tests.test_programs import BACKENDS, program_registry, program_test

_rng = np.random.default_rng(2026)

PROGRAMS, program = program_registry()


def rn(*shape, dtype=np.float64):
    return (_rng.standard_normal(shape) * 3).astype(dtype)


# -- element functions: a short inner loop (unrolled in the body) or a longer one (a
# loop node inside the loop node) ----------------------------------------------------

def count_above(v):
    n = 0
    for k in range(3):
        if v > k:
            n += 1
    return n


def count_with_else(v):
    n = 0
    for k in range(3):
        if v > k:
            n += 1
        else:
            n -= 2
    return n


def elif_chain(v):
    s = 0.0
    for k in range(3):
        if v > k:
            s += 1.0
        elif v < -k:
            s -= 0.5 * v
        else:
            s *= 0.5
    return s


def elif_chain_long(v):
    s = 0.0
    for k in range(6):
        if v > k:
            s += 1.0
        elif v < -k:
            s -= 0.5 * v
        else:
            s *= 0.5
    return s


def first_above(v):
    for k in range(3):
        if v < k:
            return k
    return -1


def first_above_long(v):
    for k in range(6):
        if v < k:
            return k
    return -1


def break_short(v):
    n = 0.0
    for k in range(3):
        if v < k:
            break
        n += v * k
    return n


def continue_short(v):
    n = 0.0
    for k in range(3):
        if v < k:
            continue
        n += v - k
    return n


def nested_ifs_in_inner(v, w):
    s = 0.0
    for k in range(3):
        if v > w:
            if v > k:
                s += v
            else:
                s -= w
        else:
            s += k
    return s


def halvings(v):
    n = 0
    t = abs(v)
    while t > 0.5:
        t = t * 0.5
        n += 1
    return n


def halvings_capped(v):
    """A while loop with a break and a continue."""
    n = 0
    t = v
    while t > 0.1:
        t = t * 0.75
        if n > 6:
            break
        n += 1
        if t < 1.0:
            continue
        t = t - 0.125
    return n, t


def newton_sqrt(v):
    """A while loop on a convergence test whose first test is always true."""
    g = 1.0
    err = 1.0
    while err > 1e-12:
        nxt = 0.5 * (g + v / g)
        err = abs(nxt - g)
        g = nxt
    return g


def while_under_if(v, w):
    s = 0.0
    if v > w:
        t = v
        while t > w:
            t = t - 1.0
            s += t
    else:
        s = w
    return s


def while_if_else_at_end(v):
    n = 0
    t = abs(v) * 4
    while t > 0.5:
        n += 1
        if t > 3.0:
            t = t * 0.25
        else:
            t = t * 0.5
    return n


def while_in_for(v):
    n = 0
    for k in range(5):
        t = abs(v) + k
        while t > 1.0:
            t = t - 1.0
            n += 1
    return n


def for_in_while(v):
    n = 0
    t = abs(v) * 3
    while t > 1.0:
        for k in range(4):
            if t > k:
                n += 1
        t = t - 1.0
    return n


# -- through np.vectorize ----------------------------------------------------------------

@program((rn(20),), (np.arange(-4, 5),), (rn(3, 4, dtype=np.float32),))
def vec_count_above(x):
    return np.vectorize(count_above)(x)


@program((rn(20),), (np.arange(-4, 5),))
def vec_count_with_else(x):
    return np.vectorize(count_with_else)(x)


@program((rn(20),), (rn(5, dtype=np.float32),))
def vec_elif_chain(x):
    return np.vectorize(elif_chain)(x), np.vectorize(elif_chain_long)(x)


@program((rn(20),), (np.arange(-2, 8),))
def vec_first_above(x):
    return np.vectorize(first_above)(x), np.vectorize(first_above_long)(x)


@program((rn(20),))
def vec_break_continue(x):
    return np.vectorize(break_short)(x) - np.vectorize(continue_short)(x)


@program((rn(4, 5), rn(5)))
def vec_nested_ifs(x, y):
    return np.vectorize(nested_ifs_in_inner)(x, y)


@program((rn(20),), (np.array([0.0, 0.5, 0.51, 1e6]),))
def vec_while_in_element(x):
    return np.vectorize(halvings)(x), np.vectorize(halvings_capped)(x)


@program((rn(20),), (np.arange(-6, 6),))
def vec_while_and_for_nests(x):
    return (np.vectorize(while_if_else_at_end)(x), np.vectorize(while_in_for)(x),
            np.vectorize(for_in_while)(x))


@program((np.abs(rn(20)) + 0.1,))
def vec_newton(x):
    return np.vectorize(newton_sqrt)(x)


@program((rn(4, 5), rn(5)))
def vec_while_under_if(x, y):
    return np.vectorize(while_under_if)(x, y)


# -- in a hand-written loop --------------------------------------------------------------

@program((rn(16),), (np.arange(-4, 5).astype(np.float64),))
def loop_counts_with_else(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        n = 0
        for k in range(3):
            if x[i] > k:
                n += 1
            else:
                n -= 2
        out[i] = n
    return out


@program((rn(16),))
def loop_calls_elif_helper(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = elif_chain(x[i]) + first_above(x[i])
    return out


@program((rn(6, 5),))
def loop_rows_inner_if_at_end(a):
    """Per row, the columns above a threshold: the if ends the inner body."""
    total = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] > 0.5:
                total[i] += a[i, j]
    return total


@program((rn(6, 5),))
def loop_rows_inner_if_else_at_end(a):
    total = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] > 0.5:
                total[i] += a[i, j]
            else:
                total[i] -= 1.0
    return total


@program((rn(16),), (np.array([0.0, 0.5, 0.51, 1e6, -3.0]),))
def loop_while_in_body(x):
    out = np.zeros(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        n = 0
        t = x[i]
        while t > 0.5:
            t = t * 0.5
            n += 1
        out[i] = n
    return out


@program((rn(16),))
def loop_while_with_break_in_body(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        t = x[i]
        k = 0
        while t > 0.0:
            t -= 0.7
            k += 1
            if k >= 3:
                break
        out[i] = t + k
    return out


@program((rn(12),))
def loop_calls_while_helpers(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        n, t = halvings_capped(x[i])
        out[i] = n + t + newton_sqrt(abs(x[i]) + 0.5)
    return out


test_program = program_test(PROGRAMS, BACKENDS, share=4)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_nested_control_flow_is_one_graph_with_loop_nodes(name):
    fn, calls = PROGRAMS[name]
    report = kiln.explain(fn)(*calls[0])
    assert report.graph_break_count == 0, [b.reason for b in report.break_reasons]
    assert any("loop" in ops for ops in report.ops_per_graph), report.ops_per_graph
    assert not any("unrolled: an if/else whose sides do not meet" in n for n in report.loops), \
        report.loops
