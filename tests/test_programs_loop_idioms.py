"""Loops as numba users write them (numba's examples, npbench's numba variants): while
loops with two or three tests, break/continue in nested loops, union-find, error
diffusion, escape counts, a cellular automaton, sorts in place, binary search, merges,
alignment tables, Bresenham, flood fill with a stack array, histograms on float edges,
small integer and float32 dtypes with mixed accumulators, helpers, tuples of results.
Each is checked like tests/test_programs.py (values, types, dtypes, argument states,
exceptions) and must be one graph holding a loop node on 3.11 and 3.13 (``while a and
b:``, kiln/capture/loop_heads.py ``_first_of_chain``; ``max(0.0, h)``,
kiln/capture/loops.py ``_mixed_extreme``; 3.13's ``return img`` copied into a break)."""
from __future__ import annotations

import numpy as np
import pytest

import kiln
from benchmarks.loop_kernels import insertion_sort, smith_waterman
from tests.test_programs import BACKENDS, program_registry, program_test

_rng = np.random.default_rng(4747)
PROGRAMS, program = program_registry()


@program((np.arange(1, 30), 20))
def collatz_steps(x, cap):
    """while with two exit conditions"""
    out = np.zeros(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        n = x[i]
        k = 0
        while n != 1 and k < cap:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            k += 1
        out[i] = k
    return out


@program((np.arange(20), 25), (np.arange(20) * 2, 25))
def first_pair_sum(a, t):
    """break in nested loops via flag"""
    n = a.shape[0]
    bi = -1
    bj = -1
    for i in range(n):
        found = False
        for j in range(i + 1, n):
            if a[i] + a[j] == t:
                bi = i
                bj = j
                found = True
                break
        if found:
            break
    return bi, bj


@program((_rng.standard_normal((6, 5)),))
def skip_sum(a):
    """continue in nested loops"""
    s = 0.0
    for i in range(a.shape[0]):
        if a[i, 0] < 0:
            continue
        for j in range(a.shape[1]):
            if a[i, j] < 0:
                continue
            s += a[i, j]
    return s


@program((_rng.standard_normal((5, 7)),))
def running_max_2d(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        m = -np.inf
        for j in range(a.shape[1]):
            if a[i, j] > m:
                m = a[i, j]
            out[i, j] = m
    return out


@program((_rng.standard_normal((5, 6, 4)),))
def grid3d(u):
    nx, ny, nz = u.shape
    out = np.zeros_like(u)
    for i in range(1, nx - 1):
        for j in range(1, ny - 1):
            for k in range(1, nz - 1):
                out[i, j, k] = (u[i - 1, j, k] + u[i + 1, j, k] + u[i, j - 1, k]
                                + u[i, j + 1, k] + u[i, j, k - 1] + u[i, j, k + 1]) / 6.0
    return out


@program((12, _rng.integers(0, 12, (10, 2))),)
def union_find(n, edges):
    parent = np.arange(n)
    for e in range(edges.shape[0]):
        a = edges[e, 0]
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        b = edges[e, 1]
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        if a != b:
            parent[a] = b
    roots = 0
    for i in range(n):
        if parent[i] == i:
            roots += 1
    return parent, roots


@program((_rng.integers(0, 256, (6, 7)).astype(np.uint8),))
def dither(img):
    out = img.astype(np.float64).copy()
    h, w = out.shape
    for y in range(h):
        for x in range(w):
            old = out[y, x]
            new = 255.0 if old > 127.5 else 0.0
            out[y, x] = new
            err = old - new
            if x + 1 < w:
                out[y, x + 1] += err * 7 / 16
            if y + 1 < h:
                if x > 0:
                    out[y + 1, x - 1] += err * 3 / 16
                out[y + 1, x] += err * 5 / 16
                if x + 1 < w:
                    out[y + 1, x + 1] += err * 1 / 16
    return out.astype(np.uint8)


@program((np.linspace(-2, 1, 9), np.linspace(-1.2, 1.2, 7), 30))
def mandel(xs, ys, maxit):
    out = np.zeros((ys.shape[0], xs.shape[0]), dtype=np.int32)
    for i in range(ys.shape[0]):
        for j in range(xs.shape[0]):
            cr = xs[j]
            ci = ys[i]
            zr = 0.0
            zi = 0.0
            n = 0
            while n < maxit and zr * zr + zi * zi <= 4.0:
                zr, zi = zr * zr - zi * zi + cr, 2 * zr * zi + ci
                n += 1
            out[i, j] = n
    return out


@program((np.eye(1, 15, 7, dtype=np.uint8)[0], 6))
def rule30(cells, steps):
    n = cells.shape[0]
    hist = np.zeros((steps + 1, n), dtype=np.uint8)
    hist[0] = cells
    for t in range(steps):
        for i in range(n):
            l = hist[t, (i - 1) % n]
            c = hist[t, i]
            r = hist[t, (i + 1) % n]
            hist[t + 1, i] = (30 >> (l * 4 + c * 2 + r)) & 1
    return hist


@program((np.arange(10.0) - 2.5, np.array([3, 0, 2, 1, 0, 4, 1, 1, 2, 0])),)
def rle_decode(vals, counts):
    total = 0
    for i in range(counts.shape[0]):
        total += counts[i]
    out = np.empty(total, dtype=vals.dtype)
    p = 0
    for i in range(counts.shape[0]):
        for k in range(counts[i]):
            out[p] = vals[i]
            p += 1
    return out


@program((_rng.standard_normal(12),), (np.arange(12.0),))
def bubble(a):
    n = a.shape[0]
    for i in range(n):
        swapped = False
        for j in range(n - 1 - i):
            if a[j] > a[j + 1]:
                a[j], a[j + 1] = a[j + 1], a[j]
                swapped = True
        if not swapped:
            break
    return a


program((_rng.integers(-50, 50, 14).astype(np.int32),))(insertion_sort)   # (benchmarks/loop_kernels.py)


@program((np.sort(_rng.standard_normal(20)), 0.3), (np.arange(20.0), 100.0))
def bsearch(a, x):
    lo = 0
    hi = a.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@program((np.sort(_rng.standard_normal(7)), np.sort(_rng.standard_normal(9))))
def merge(a, b):
    out = np.empty(a.shape[0] + b.shape[0], dtype=a.dtype)
    i = 0
    j = 0
    k = 0
    while i < a.shape[0] and j < b.shape[0]:
        if a[i] <= b[j]:
            out[k] = a[i]
            i += 1
        else:
            out[k] = b[j]
            j += 1
        k += 1
    while i < a.shape[0]:
        out[k] = a[i]
        i += 1
        k += 1
    while j < b.shape[0]:
        out[k] = b[j]
        j += 1
        k += 1
    return out


@program((_rng.integers(0, 4, 9), _rng.integers(0, 4, 11)))
def lcs(a, b):
    n, m = a.shape[0], b.shape[0]
    t = np.zeros((n + 1, m + 1), dtype=np.int32)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if a[i - 1] == b[j - 1]:
                t[i, j] = t[i - 1, j - 1] + 1
            else:
                t[i, j] = max(t[i - 1, j], t[i, j - 1])
    return t[n, m], t


# (the benchmark's own loop, benchmarks/loop_kernels.py: local alignment score and where it ends)
program((_rng.integers(0, 4, 10), _rng.integers(0, 4, 8), 2.0, -1.0, 1.5))(smith_waterman)


@program((np.zeros((8, 9), np.int16), 1, 2, 1, 1), (np.zeros((8, 9), np.int16), 7, 8, -1, -2))
def ray_walk(grid, y, x, dy, dx):
    """Step until the next cell leaves the grid or is a wall; 3.12+ copies ``return grid``
    into the break."""
    grid[4, 5] = -1
    while True:
        grid[y, x] += 1
        ny = y + dy
        nx = x + dx
        if ny < 0 or ny >= grid.shape[0] or nx < 0 or nx >= grid.shape[1]:
            break
        if grid[ny, nx] < 0:
            break
        y = ny
        x = nx
    return grid


@program(((_rng.random((6, 7)) > 0.3).astype(np.int8), 0, 0))
def flood(grid, sy, sx):
    h, w = grid.shape
    stack = np.empty(h * w * 4 + 1, dtype=np.int64)
    top = 0
    stack[top] = sy * w + sx
    top += 1
    target = grid[sy, sx]
    filled = 0
    while top > 0:
        top -= 1
        p = stack[top]
        y = p // w
        x = p % w
        if grid[y, x] != target:
            continue
        grid[y, x] = 2
        filled += 1
        if y > 0:
            stack[top] = p - w
            top += 1
        if y < h - 1:
            stack[top] = p + w
            top += 1
        if x > 0:
            stack[top] = p - 1
            top += 1
        if x < w - 1:
            stack[top] = p + 1
            top += 1
    return filled


@program((_rng.standard_normal(40), np.array([-1.0, -0.3, 0.0, 0.25, 1.5])))
def hist_edges(x, edges):
    counts = np.zeros(edges.shape[0] - 1, dtype=np.int64)
    for i in range(x.shape[0]):
        v = x[i]
        if v < edges[0] or v > edges[-1]:
            continue
        lo = 0
        hi = edges.shape[0] - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if v >= edges[mid]:
                lo = mid
            else:
                hi = mid
        counts[lo] += 1
    return counts


@program((_rng.integers(0, 256, 20).astype(np.uint8), _rng.integers(-9, 9, 20).astype(np.int32),
         _rng.standard_normal(20).astype(np.float32)))
def mixed_acc(a8, b32, f32):
    s = 0
    t = np.float32(0)
    u = 0.0
    for i in range(a8.shape[0]):
        s += a8[i]
        t += f32[i] * b32[i]
        u += a8[i] * f32[i]
    return s, t, u


@program((_rng.integers(0, 256, 20).astype(np.uint8),))
def u8_wrap(a):
    acc = np.uint8(0)
    for i in range(a.shape[0]):
        acc = acc + a[i]
    return acc


def clamp(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@kiln.compile
def sq(v):
    return v * v


@program((_rng.standard_normal(15),))
def calls_helpers(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = clamp(a[i], -1.0, 1.0) + sq(a[i])
    return out


@program((_rng.standard_normal(13),), (_rng.standard_normal(5).astype(np.float32),))
def stats_tuple(a):
    mn = a[0]
    mx = a[0]
    s = 0.0
    cum = np.empty_like(a)
    for i in range(a.shape[0]):
        v = a[i]
        if v < mn:
            mn = v
        if v > mx:
            mx = v
        s += v
        cum[i] = s
    return mn, mx, s / a.shape[0], cum


@program((np.arange(5.0), 0), (np.arange(5.0), 2))
def oob(a, k):
    s = 0.0
    for i in range(a.shape[0] + k):
        s += a[i]
    return s


@program((np.arange(30),))
def int_py_acc(a):
    s = 0
    for i in range(a.shape[0]):
        s = s * 31 + int(a[i])
    return s


@program((_rng.integers(-100, 100, 15).astype(np.int32),))
def prefix_max_i32(a):
    out = np.zeros(a.shape[0], dtype=np.int32)
    best = a[0]
    for i in range(a.shape[0]):
        if a[i] > best:
            best = a[i]
        out[i] = best
    return out


@program((np.ones(6),), (np.array([1.0, 2.0, 3.0, -1.0, 2.0, 1.0]),))
def count_leading_pos(a):
    """short circuit: a[i] is read only while i < n"""
    i = 0
    n = a.shape[0]
    while i < n and a[i] > 0:
        i += 1
    return i


@program((np.array([1.0, 2.0, 0.0, 3.0, 4.0, 5.0]), 4.0),)
def three_part_while(a, t):
    out = np.zeros(a.shape[0], dtype=np.int64)
    for r in range(a.shape[0]):
        j = r
        s = 0.0
        while j < a.shape[0] and s < t and a[j] != 0:
            s += a[j]
            j += 1
        out[r] = j
    return out


@program((np.r_[np.arange(20.0), 0.5],), (np.r_[np.arange(20.0), 3.0],), (np.r_[np.arange(20.0), np.nan],),
        (np.r_[np.arange(20.0), 1.0],), (np.r_[np.arange(20.0), -7.0],))
def relu_last(x):
    """max() of a Python float and np.float64: the result's type is the chosen one's"""
    m = 0.0
    k = 0
    for i in range(x.shape[0]):
        m = max(0.0, x[i] - 1.0, -x[i] - 5.0)
        k = min(k, np.int64(x[i] > 2.5) - 1)
    return m, k


@program((np.arange(40.0),), (np.arange(40.0) - 20,))
def while_over_positions(a):
    """A test on Python ints alone: decided on constants at the head, one node (it
    unrolled to the end: 3000 elements overflowed the lowering's recursion)."""
    j = 0
    s = 0.0
    while j < a.shape[0]:
        s += a[j] * j
        j += 1
    return s, j


@program((np.zeros(30), np.array([0, 30])), (np.zeros(30), np.array([-12, 20])),
         (np.zeros(30), np.array([0, 33])))
def strided_marks(a, b):
    """Inner loops whose step is the outer variable (a sieve's): their index is tested
    against the axis once per inner loop where it stays inside, else per element
    (negative indices wrap; past the end, IndexError after the writes before it)."""
    for s in range(1, 6):
        for j in range(b[0], b[1], s):
            a[j] += s
        for j in range(b[1] - 1, b[0] - 1, -s):
            a[j] -= 0.5
    return a


@program((30,))
def sawtooth_counts(n):
    """The first trace decides ``v > 3`` on the constant 5 and rebinds v and down alone:
    a node carrying those left ``up`` at its start (0 for Python's 12)."""
    up = 0
    down = 0
    v = 5
    for _ in range(n):
        if v > 3:
            down += 1
            v -= 2
        else:
            up += 1
            v += 3
    return up, down, v


test_program = program_test(PROGRAMS, BACKENDS, share=4)

_BREAKS = {"rle_decode": ["numpy.empty: an array as a static parameter"]}   # np.empty(total)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_numba_style_loop_is_one_graph_with_loop_nodes(name):
    fn, calls = PROGRAMS[name]
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in calls[0]]
    report = kiln.explain(fn)(*args)
    assert [b.reason for b in report.break_reasons] == _BREAKS.get(name, []), report.break_reasons
    assert any("loop node" in note for note in report.loops), report.loops


def _past_the_end(a, k):
    t = 0.0
    for i in range(a.shape[0] + k):
        t += a[i] * 2
    return t


def test_an_index_out_of_range_in_a_loop_body_names_the_body_line():
    with pytest.raises(IndexError) as info:
        kiln.compile(_past_the_end)(np.arange(5.0), 2)
    assert any("t += a[i] * 2" in n for n in getattr(info.value, "__notes__", [])), info.value
