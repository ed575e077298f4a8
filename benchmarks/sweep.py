"""A sweep of common NumPy idioms over sizes, dtypes and layouts, compiled against NumPy.

    python -m benchmarks.sweep [--sizes 10,1e3,1e5,1e7] [--dtypes float64,float32,int64]
                               [--layouts contig,strided,transposed,broadcast]
                               [--only add,sum0] [--rounds 5] [--below 0.95] [--json FILE]

"Decorating a working function never makes it slower": this looks for the places where it
does. Each case is one short function (an elementwise chain, an in-place ``a += b``,
``np.add(a, b, out=c)``, a sum/max along each axis, cumsum, where, clip, fancy indexing,
a boolean mask, sort/argsort, a matmul chain, a tiny normalization, and everyday ones:
rows scaled by their norm, a softmax over rows, cumsum then diff, ``x[np.argsort(x)]``,
``np.where(a > t, a, 0).sum(axis=0)``, boolean counts, ``np.einsum('ij,ij->i', a, b)``,
pairwise distances of points, ``np.outer``, ``a.T @ b``, ``np.abs(a - b).max()``, column
z-scores, argmax, relu, ``np.isnan(a).any()``, ``a.all()``) applied to 2-D inputs
of about N elements (10 -> 2x5, 1e3 -> 20x50, 1e5 -> 200x500, 1e7 -> 2000x5000) of one
dtype in one layout:

- ``contig``: C-contiguous arrays;
- ``strided``: every other column of an array twice as wide (``base[:, ::2]``);
- ``transposed``: the transpose of a C-contiguous array (``base.T``);
- ``broadcast``: the second operand is one row (``(1, cols)``), or, for one-input
  functions, the input is that row broadcast to the full shape (zero strides).

A few take other inputs of about N elements: ``matmul_chain`` and ``a.T @ b`` square
matrices, ``pairwise_dist`` sqrt(N) points in 3-D, ``outer`` two vectors of sqrt(N)
(their result has about N elements), ``clip_scalars`` an array and two Python floats.

The default sweeps every function at every size in float64 over the four layouts, plus
float32 and int64 in the contiguous layout (``--full`` crosses every dtype with every
layout). Per case: the compiled function's first call (compile), then ``--rounds`` rounds
that alternate NumPy and kiln, each the mean of a batch of about 20 ms of calls
(``harness.per_call_us``); the row shows medians and kiln / NumPy speed (NumPy time over
kiln time: below 1 means kiln is slower). Rows below ``--below`` are listed again at the
end. Inputs are made fresh per case from ``np.random.default_rng(0)``; in-place cases
keep adding into their argument across calls, which does not change their cost.
Cases whose NumPy call raises (sorting a broadcast view in place, say) are skipped.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
import warnings

import numpy as np

import kiln

from .harness import _loadavg, per_call_us


# -- the idioms: name -> (function, arity) ------------------------------------------------
def add(a, b):
    return a + b


def fused(a, b):
    return np.sqrt(a * a + b * b) * 0.5 + 1.0


def iadd(a, b):
    a += b
    return a


def add_out(a, b, c):
    np.add(a, b, out=c)
    return c


def axpy_inplace(a, b):
    a *= 0.5
    a += 2.0 * b
    return a


def sum_all(a):
    return a.sum()


def sum0(a):
    return a.sum(axis=0)


def sum1(a):
    return a.sum(axis=1)


def max0(a):
    return a.max(axis=0)


def max1(a):
    return a.max(axis=1)


def mean_std(a):
    return a.mean(), a.std()


def cumsum1(a):
    return np.cumsum(a, axis=1)


def cumsum0(a):
    return np.cumsum(a, axis=0)


def where_pos(a, b):
    return np.where(a > 0, a, b)


def clip(a):
    return np.clip(a, -0.5, 0.5)


def fancy(a, idx):
    return a[:, idx]


def mask(a):
    return a[a > 0]


def mask_assign(a):
    b = a.copy()
    b[b < 0] = 0
    return b


def sort1(a):
    return np.sort(a, axis=1)


def argsort1(a):
    return np.argsort(a, axis=1)


def matmul_chain(a, b):
    return (a @ b.T) @ b


def normalize(a):
    return a / np.sqrt((a * a).sum())


# -- everyday idioms the ones above lack (each on the same 2-D inputs) ---------------------
def unit_rows_norm(a):
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def clip_scalars(a, lo, hi):
    return np.clip(a, lo, hi)


def softmax_rows(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def cumsum_diff(a):
    return np.diff(np.cumsum(a, axis=1), axis=1)


def sort_by_argsort(a):
    x = a.ravel()
    return x[np.argsort(x)]


def where_sum0(a):
    return np.where(a > 0.5, a, 0).sum(axis=0)


def count_true(a):
    return (a > 0).sum(), np.count_nonzero(a < -1, axis=1)


def rowdot_einsum(a, b):
    return np.einsum('ij,ij->i', a, b)


def pairwise_dist(p):
    return np.sqrt(((p[:, None, :] - p[None, :, :]) ** 2).sum(axis=-1))


def outer(u, v):
    return np.outer(u, v)


def gram_t(a, b):
    return a.T @ b


def max_abs_diff(a, b):
    return np.abs(a - b).max()


def zscore_cols(a):
    return (a - a.mean(axis=0)) / a.std(axis=0)


def argmax_rows(a):
    return a.argmax(axis=1)


def relu(a):
    return np.maximum(a, 0)


def any_nan(a):
    return np.isnan(a).any()


def all_nonzero(a):
    return a.all()


FUNCS = {f.__name__: f for f in (add, fused, iadd, add_out, axpy_inplace, sum_all, sum0, sum1,
                                 max0, max1, mean_std, cumsum1, cumsum0, where_pos, clip, fancy,
                                 mask, mask_assign, sort1, argsort1, matmul_chain, normalize,
                                 unit_rows_norm, clip_scalars, softmax_rows, cumsum_diff,
                                 sort_by_argsort, where_sum0, count_true, rowdot_einsum,
                                 pairwise_dist, outer, gram_t, max_abs_diff, zscore_cols,
                                 argmax_rows, relu, any_nan, all_nonzero)}
SHAPES = {10: (2, 5), 1000: (20, 50), 100_000: (200, 500), 10_000_000: (2000, 5000)}


def _shape(n: int) -> tuple[int, int]:
    if n in SHAPES:
        return SHAPES[n]
    cols = max(1, int(round(math.sqrt(n * 2.5))))
    return max(1, n // cols), cols


def _array(rng, shape, dtype, layout, operand):
    rows, cols = shape
    if dtype.kind == "b":   # all True: any/all read every element
        def draw(s): return np.ones(s, bool)
    elif dtype.kind in "iu":
        def draw(s): return rng.integers(1 if dtype.kind == "u" else -100, 100, s).astype(dtype)
    else:
        def draw(s): return rng.standard_normal(s).astype(dtype)
    if layout == "strided":
        return draw((rows, 2 * cols))[:, ::2]
    if layout == "transposed":
        return draw((cols, rows)).T
    if layout == "broadcast":
        row = draw((1, cols))
        return row if operand == 1 else np.broadcast_to(row, shape)
    return draw(shape)


def make_args(name: str, n: int, dtype, layout: str) -> tuple:
    """Fresh inputs for one case (``np.random.default_rng(0)``)."""
    rng = np.random.default_rng(0)
    dtype = np.dtype(dtype)
    shape = _shape(n)
    fn = FUNCS[name]
    if name == "fancy":
        return (_array(rng, shape, dtype, layout, 0), rng.integers(0, shape[1], shape[1] // 2 + 1))
    if name in ("matmul_chain", "gram_t"):   # square-ish matrices of about n elements
        k = max(2, int(math.sqrt(n)) // 4 * 4 or 2)
        return (_array(rng, (k, k), dtype, layout, 0), _array(rng, (k, k), dtype, "contig", 1))
    if name == "clip_scalars":   # Python float bounds (graph inputs, not constants)
        return (_array(rng, shape, dtype, layout, 0), -0.5, 0.5)
    if name == "pairwise_dist":   # m points in 3-D: an m x m result of about n elements
        m = max(2, int(math.sqrt(n)))
        return (_array(rng, (m, 3), dtype, layout, 0),)
    if name == "outer":   # two vectors (rows of the layout's array): an about-n result
        m = max(2, int(math.sqrt(n)))
        return (_array(rng, (2, m), dtype, layout, 0)[0], _array(rng, (2, m), dtype, "contig", 1)[1])
    arity = fn.__code__.co_argcount
    args = []
    for i in range(arity):
        lay = layout
        if name in ("iadd", "axpy_inplace", "add_out") and i == 0 and layout == "broadcast":
            lay = "contig"   # the written operand cannot be a broadcast view
        if name == "add_out" and i == 2:
            lay = "contig"
        if layout == "broadcast" and arity > 1 and i == 0:
            lay = "contig"   # broadcasting: the full operand is contiguous, the others rows
        if arity == 1:
            args.append(_array(rng, shape, dtype, lay, 0))
        else:
            args.append(_array(rng, shape, dtype, lay, i))
    return tuple(args)


def measure(name: str, n: int, dtype: str, layout: str, rounds: int) -> dict | None:
    fn = FUNCS[name]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*make_args(name, n, dtype, layout))
    except Exception:
        return None
    args_np = make_args(name, n, dtype, layout)
    args_k = make_args(name, n, dtype, layout)
    compiled = kiln.compile(fn)
    start = time.perf_counter()
    compiled(*args_k)
    first_s = time.perf_counter() - start
    compiled(*args_k)
    one = max(per_call_us(fn, args_np, 1, 3), 1.0)
    calls = max(1, min(20000, int(20_000 / one)))
    numpy_t, kiln_t = [], []
    for _ in range(rounds):
        numpy_t.append(per_call_us(fn, args_np, calls, 1))
        kiln_t.append(per_call_us(compiled, args_k, calls, 1))
    numpy_us, kiln_us = statistics.median(numpy_t), statistics.median(kiln_t)
    return {"name": name, "n": n, "dtype": dtype, "layout": layout, "compile_s": first_s,
            "numpy_us": numpy_us, "kiln_us": kiln_us, "speed": numpy_us / kiln_us}


def cases(names, sizes, dtypes, layouts, full: bool):
    for name in names:
        for n in sizes:
            for dtype in dtypes:
                for layout in layouts:
                    if full or dtype == dtypes[0] or layout == "contig":
                        yield name, n, dtype, layout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,1e3,1e5,1e7")
    ap.add_argument("--dtypes", default="float64,float32,int64")
    ap.add_argument("--layouts", default="contig,strided,transposed,broadcast")
    ap.add_argument("--only", default="", help="comma list of idiom names: " + ",".join(FUNCS))
    ap.add_argument("--full", action="store_true", help="every dtype in every layout")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--below", type=float, default=0.95)
    ap.add_argument("--json", default="", help="also write the rows to this file")
    opts = ap.parse_args(argv)
    names = [s for s in opts.only.split(",") if s] or list(FUNCS)
    sizes = [int(float(s)) for s in opts.sizes.split(",")]
    dtypes = opts.dtypes.split(",")
    layouts = opts.layouts.split(",")
    rows = []
    print(f"{'case':44s} {'compile':>8s} {'NumPy us':>11s} {'kiln us':>11s} {'speed':>7s}")
    for case in cases(names, sizes, dtypes, layouts, opts.full):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = measure(*case, opts.rounds)
        if r is None:
            continue
        rows.append(r)
        label = f"{r['name']} n={r['n']:g} {r['dtype']} {r['layout']}"
        print(f"{label:44s} {r['compile_s'] * 1e3:6.0f}ms {r['numpy_us']:11.1f} {r['kiln_us']:11.1f} "
              f"{r['speed']:6.2f}x", flush=True)
    slow = [r for r in rows if r["speed"] < opts.below]
    geo = math.exp(statistics.fmean(math.log(r["speed"]) for r in rows)) if rows else float("nan")
    print(f"\ngeomean kiln/NumPy speed {geo:.2f}x over {len(rows)} cases; load average {_loadavg():.1f}")
    print(f"below {opts.below}x: " + (", ".join(f"{r['name']} n={r['n']:g} {r['dtype']} {r['layout']} "
                                          f"{r['speed']:.2f}x" for r in slow) or "none"))
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"rows": rows, "geomean": geo, "loadavg": _loadavg()}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
