"""Per-call overhead of a kiln cache hit on small inputs (guards + dispatch + run).

Two parts:

- the original probe: a 2-op step on float64[4], plain and compiled, and a function
  with no graph at all (guards and dispatch only);
- ``--table``: the small-call cases "decorating never makes it slower" is about, each at
  n = 1, 10, 100, 1000 elements (float64 and float32, contiguous): an out-of-place chain,
  a reduction, in-place updates (``a += b``, ``np.multiply(a, b, out=c)``,
  ``x[1:] = x[:-1] * 2``), functions returning views (``a.T``, ``a[::2]``), a function
  returning a Python float, keyword arguments, a method on an object holding arrays
  (``self.w @ x``: ``kiln.compile(obj.method)`` and ``@kiln.compile`` on the class) and
  Python int/float arguments. Rounds alternate NumPy and kiln; each sample is the mean of
  a batch of calls, the row shows medians and NumPy time / kiln time (below 1: kiln is
  slower). ``--clock process`` counts this process's CPU time (less disturbed by other
  processes on a shared machine than wall time).

Also: several views returned (``a.T[::2], a.reshape(-1), a.swapaxes(0, 1)``), a result
and a view (``a * 2, a.T``), keyword-only arguments, ``*args``, ``**kwargs``, a default
argument, tuple, dict and NumPy-scalar results, one graph break (``kiln.graph_break()``),
Python-only work (a loop over ``range(n)`` of ints) and a generator over a small loop.

- ``--tiny``: functions that take well under 1 us (``x + 1`` on float64[1] and on a 0-d
  array, ``a.shape[0] * 2``, ``a * b + 1.0`` on floats, ``return x``, a graph break, a
  default argument, a keyword argument, a method), each called directly as user code
  calls it (``f(x)``: the table's ``fn(*args)`` is a frame 3.11 does not inline for the
  plain function and 3.12/3.13 do, which hid kiln's own frame on 3.11); nanoseconds per
  call with the loop, plain and compiled, and their ratio.

Run: ``python -m benchmarks.cache_hit_overhead [--table | --tiny] [--sizes 1,10,100,1000]
[--dtypes float64,float32] [--only a+=b,method] [--rounds 15] [--clock wall|process]``.

``--tiny --rounds 41``, 2026-12-05, load average ~10 on the shared 2-core machine, two
runs each (before: main at 2bd929e; after: 0-d arrays priced as arrays by the cost model,
equality guards on constants checked in C, no-graph entries that run no Python kept,
C-to-C calls without the thread-state fetch, graph short paths read from a list; the
first row from a third run of the final branch, 220 -> 195 ns a call on 3.11, 279 -> 234
on 3.12, 254 -> 235 on 3.13): plain time / kiln time.

    case                  3.11 before  after       3.12 before  after       3.13 before  after
    x + 1, float64[1]     2.68-2.70    3.20        2.50-2.64    3.02        2.60-2.68    3.03
    x + 1, 0-d            0.92-0.93    1.70-1.75   0.87-0.90    1.66        0.88-0.93    1.78-1.81
    a.shape[0] * 2        0.65-0.66    1.78        0.68         2.04-2.07   0.68-0.69    1.98-2.09
    a * b + 1.0, floats   0.58-0.59    0.60-0.61   0.59         0.60-0.61   0.57-0.58    0.64
    return x              0.48-0.49    0.86-0.87   0.47-0.49    0.83-0.84   0.49         0.87-0.90
    graph break (min)     0.94-0.96    0.95-0.96   0.93-0.95    0.95-0.97   0.96-0.97    0.92-0.96
    default used          1.29         1.29-1.30   1.15-1.16    1.20-1.23   1.25-1.27    1.23-1.31
    keyword given         1.30-1.31    1.31-1.33   1.17-1.19    1.23-1.27   1.19-1.22    1.27-1.30
    kiln.compile(obj.m)   0.90-0.91    2.04-2.08   0.86-0.90    1.90-1.93   0.90-0.91    1.87-1.94
    obj.m(x), @compile    0.86-0.90    1.90-1.93   0.91-0.92    1.90        0.87         1.80-1.83

The rows left below 1.0x run as Python on the cost model's verdict (no graph, or a graph
priced out): ~30 ns a call on every version (``return x``: 28 ns plain, 57 verdict, 36
now; ``functools.partial`` of the function costs 23-29 of those 30), the frame a C
callable gives a Python function where a Python caller's would be inlined. The graph
break row's medians swing by seconds on this load; its minima are shown.

Measured 2026-12-05, Python 3.11, float64, ``--sizes 10,1000 --rounds 9 --clock process``
on the shared 2-core machine (load average 6-7): us per call, NumPy / kiln (speed).
"before": main at 634eb03; "after": returned views priced by the cost model, rebuilt by
one generated function (aot/view_outputs.py), view kernels through ndarray methods.

    case              n      before: NumPy  kiln (speed)   after: NumPy  kiln (speed)
    views tuple       10      0.51   4.36 (0.12x)        0.51   0.53 (0.96x)
    views tuple       1000    0.51   4.33 (0.12x)        0.51   0.55 (0.93x)
    a*2, a.T          10      0.67   1.45 (0.46x)        0.67   0.72 (0.93x)
    a*2, a.T          1000    0.95   1.69 (0.56x)        0.94   0.99 (0.96x)
    python only       10      0.34   0.61 (0.55x)        0.35   0.63 (0.56x)
    python only       1000    0.11   0.61 (0.17x)        0.10   0.61 (0.17x)
    a.T               10      0.10   0.11 (0.89x)        0.10   0.11 (0.90x)
    reshape(-1)       10      0.17   0.19 (0.85x)        0.15   0.19 (0.81x)
    *args             10      0.40   0.44 (0.90x)        0.47   0.56 (0.84x)
    *args             1000    0.94   0.93 (1.01x)        0.66   0.66 (0.99x)
    keywords          10      0.94   1.04 (0.90x)        0.93   1.01 (0.92x)
    keyword-only      10      0.66   0.69 (0.95x)        0.62   0.67 (0.93x)
    **kwargs          10      0.75   0.81 (0.93x)        0.74   0.80 (0.93x)
    @compile method   10      1.00   1.10 (0.91x)        0.97   1.08 (0.90x)
    @compile method   1000    1.12   1.19 (0.94x)        1.13   1.24 (0.92x)
    one graph break   10      1.21   1.24 (0.97x)        1.22   1.23 (0.99x)
    (every other row 0.97x to 3.3x in both runs; python only n=1000: 0 trips, n % 50)

Rows left below 1.0x are calls the cost model runs as Python (its verdict checked in C,
guards skipped), and for them kiln adds what any C-level callable between the caller and
a Python function adds: the function runs in a new interpreter frame instead of inline.
That is the cost of ``functools.partial(fn)``, measured in the same process: 20-30 ns on
``lambda x: x`` (kiln's dispatcher +3 ns), 60-100 ns on ``self.w @ x`` (kiln the same),
so functions under ~1 us stay at 0.85-0.95x. "python only" compiles its loop (a C loop,
0.6 us fixed cost: faster than Python past ~20 trips, 1000x on 10^6); the cost model
cannot price it since the trip count is a run-time int.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import kiln

from .harness import _loadavg, per_call_us
from .sweep import iadd  # noqa: F401 (a case here too; the tests import it from here)


def step(w, g, lr):
    return w - lr * g


def probe(calls: int = 2000, repeats: int = 51) -> dict:
    args = (np.ones(4), np.full(4, 0.5), 0.1)
    compiled = kiln.compile(step)
    compiled(*args)                         # compile once
    assert len(compiled.cache_entries) == 1
    plain = per_call_us(step, args, calls, repeats)
    hit = per_call_us(compiled, args, calls, repeats)
    noop = kiln.compile(lambda x: x)       # guards + return only, no graph at all
    noop(args[0])
    guards_only = per_call_us(noop, args[:1], calls, repeats)
    baseline = per_call_us(lambda x: x, args[:1], calls, repeats)
    result = {"plain_us": plain, "compiled_us": hit, "overhead_us": hit - plain,
              "guards_and_dispatch_us": guards_only - baseline}
    sys.stderr.write(
        f"tiny input (float64[4], 2 ops), median of {repeats} x {calls} calls:\n"
        f"  plain NumPy         {plain:7.2f} us/call\n"
        f"  kiln cache hit      {hit:7.2f} us/call\n"
        f"  overhead            {hit - plain:7.2f} us/call\n"
        f"  guards + dispatch   {guards_only - baseline:7.2f} us/call (function with no graph)\n")
    return result


# -- the small-call table ---------------------------------------------------------------
def chain(a, b, c):
    return a * b + c


def dot_sum(a, b):
    return (a * b).sum()


def mul_out(a, b, c):
    np.multiply(a, b, out=c)
    return c


def shift(x):
    x[1:] = x[:-1] * 2
    return x


def transpose(a):
    return a.T


def every_other(a):
    return a[::2]


def as_float(a, b):
    return float((a * b).sum())


def keywords(a, b, *, alpha=1.0):
    return a + alpha * b


def python_numbers(a, s, k):
    return a * s + k


def views_combined(a):
    return a.T[::2], a.reshape(-1), a.swapaxes(0, 1)


def product_and_transpose(a):
    return a * 2.0, a.T


def reshape_view(a):
    return a.reshape(-1)


def keyword_only(x, *, scale=2.0):
    return x * scale


def star_args(*xs):
    return xs[0] + xs[1]


def star_kwargs(x, **kw):
    return x * kw["scale"]


def default_arg(x, scale=2.0):
    return x * scale


def two_results(a, b):
    return a + b, a * b


def as_dict(a, b):
    return {"sum": a + b, "prod": a * b}


def numpy_scalar(a):
    return a.sum()


def one_break(a):
    b = a * 2.0
    kiln.graph_break()
    return b + 1.0


def python_only(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def generator_sum(a):
    return sum(a[i] * i for i in range(4))


class Layer:
    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return self.w @ x

    @kiln.compile
    def compiled_forward(self, x):
        return self.w @ x


def _cases(n: int, dtype: str) -> list:
    """(name, plain callable, compiled callable, make arguments) for n elements."""
    def draw(rng, *shape):
        return rng.standard_normal(shape).astype(dtype)

    m = max(1, round(n ** 0.5))
    layer = Layer(draw(np.random.default_rng(1), m, m))
    rows = [
        ("a*b+c", chain, lambda r: (draw(r, n), draw(r, n), draw(r, n))),
        ("(a*b).sum()", dot_sum, lambda r: (draw(r, n), draw(r, n))),
        ("a += b", iadd, lambda r: (draw(r, n), draw(r, n) * 0)),
        ("multiply(out=c)", mul_out, lambda r: (draw(r, n), draw(r, n), draw(r, n))),
        ("x[1:] = x[:-1]*2", shift, lambda r: (np.zeros(n, dtype),)),
        ("a.T", transpose, lambda r: (draw(r, m, m),)),
        ("a[::2]", every_other, lambda r: (draw(r, n),)),
        ("float(sum)", as_float, lambda r: (draw(r, n), draw(r, n))),
        ("python numbers", python_numbers, lambda r: (draw(r, n), 2.0, 3)),
        ("views tuple", views_combined, lambda r: (draw(r, m, m),)),
        ("reshape(-1)", reshape_view, lambda r: (draw(r, m, m),)),
        ("a*2, a.T", product_and_transpose, lambda r: (draw(r, m, m),)),
        ("*args", star_args, lambda r: (draw(r, n), draw(r, n))),
        ("default arg", default_arg, lambda r: (draw(r, n),)),
        ("tuple result", two_results, lambda r: (draw(r, n), draw(r, n))),
        ("dict result", as_dict, lambda r: (draw(r, n), draw(r, n))),
        ("a.sum() scalar", numpy_scalar, lambda r: (draw(r, n),)),
        ("one graph break", one_break, lambda r: (draw(r, n),)),
        ("python only", python_only, lambda r: (n % 50,)),
        ("generator sum", generator_sum, lambda r: (draw(r, n),)),
    ]
    out = [(name, fn, kiln.compile(fn), make) for name, fn, make in rows]
    # (called as user code calls them, with keyword names in the call: a partial would
    # pass a dict)
    kw, kwonly, starkw = kiln.compile(keywords), kiln.compile(keyword_only), kiln.compile(star_kwargs)
    out += [("keywords", lambda a, b: keywords(a, b, alpha=0.5), lambda a, b: kw(a, b, alpha=0.5),
             lambda r: (draw(r, n), draw(r, n))),
            ("keyword-only", lambda x: keyword_only(x, scale=3.0), lambda x: kwonly(x, scale=3.0),
             lambda r: (draw(r, n),)),
            ("**kwargs", lambda x: star_kwargs(x, scale=3.0), lambda x: starkw(x, scale=3.0),
             lambda r: (draw(r, n),))]
    out.append(("method w@x", layer.forward, kiln.compile(layer.forward), lambda r: (draw(r, m),)))
    # (the attribute looked up per call, as user code does: __get__ is part of the cost)
    out.append(("@compile method", lambda x: layer.forward(x), lambda x: layer.compiled_forward(x),
                lambda r: (draw(r, m),)))
    return out


def table(sizes=(1, 10, 100, 1000), dtypes=("float64", "float32"), only=(), rounds: int = 15,
          calls: int = 2000, clock: str = "wall") -> list[dict]:
    """One row per case: medians of ``rounds`` alternating NumPy/kiln batches."""
    tick = time.process_time if clock == "process" else time.perf_counter
    rows = []
    print(f"{'case':34s} {'NumPy us':>9s} {'kiln us':>9s} {'speed':>7s}")
    for dtype in dtypes:
        for n in sizes:
            for name, plain, compiled, make in _cases(n, dtype):
                if only and not any(o in name for o in only):
                    continue
                args_np, args_k = make(np.random.default_rng(0)), make(np.random.default_rng(0))
                compiled(*args_k)
                compiled(*args_k)
                numpy_t, kiln_t = [], []
                for _ in range(rounds):
                    numpy_t.append(per_call_us(plain, args_np, calls, 1, clock=tick))
                    kiln_t.append(per_call_us(compiled, args_k, calls, 1, clock=tick))
                numpy_us, kiln_us = statistics.median(numpy_t), statistics.median(kiln_t)
                row = {"name": name, "n": n, "dtype": dtype, "numpy_us": numpy_us, "kiln_us": kiln_us,
                       "speed": numpy_us / kiln_us}
                rows.append(row)
                print(f"{name + f' n={n} {dtype}':34s} {numpy_us:9.3f} {kiln_us:9.3f} {row['speed']:6.2f}x",
                      flush=True)
    print(f"load average {_loadavg():.1f}; clock: {clock}")
    return rows


# -- tiny calls: direct calls (f(a), not f(*args)) of functions under ~1 us -------------
def add_one(x):
    return x + 1


def shape_twice(a):
    return a.shape[0] * 2


def float_math(a, b):
    return a * b + 1.0


def identity(x):
    return x


def tiny_break(a):
    b = a * 2.0
    kiln.graph_break()
    return b + 1.0


def scaled(x, scale=2.0):
    return x * scale


class Scaler:
    def __init__(self, c):
        self.c = c

    def plain(self, x):
        return x * self.c

    @kiln.compile
    def compiled(self, x):
        return x * self.c


_TINY_LOOP = """
def loop(f, calls{params}):
    for _ in range(calls):
        f({call})
"""


def _loop(call: str, params: str):
    """A timing loop whose body is the call ``call`` written out (CALL, not
    CALL_FUNCTION_EX: user code calls with its arguments, and 3.11 never inlines a
    ``f(*args)`` frame where 3.13 does)."""
    space: dict = {}
    exec(_TINY_LOOP.format(call=call, params=params and ", " + params), space)
    return space["loop"]


def _tiny_cases() -> list:
    """(name, plain f, compiled f, loop, arguments): the loop calls f(arguments) as written."""
    one, zero_d, small = np.ones(1), np.array(2.0), np.arange(4.0)
    scaler = Scaler(3.0)
    cases = [("x + 1, float64[1]", add_one, "x", (one,)),
             ("x + 1, 0-d", add_one, "x", (zero_d,)),
             ("a.shape[0] * 2", shape_twice, "a", (small,)),
             ("a * b + 1.0, floats", float_math, "a, b", (1.5, 2.5)),
             ("return x", identity, "x", (small,)),
             ("graph break", tiny_break, "a", (one,)),
             ("default used", scaled, "x", (one,)),
             ("keyword given", scaled, "x, scale=s", (one, 3.0))]
    out = [(name, fn, kiln.compile(fn), _loop(call, call.replace("scale=", "")), args)
           for name, fn, call, args in cases]
    out.append(("kiln.compile(obj.m)", scaler.plain, kiln.compile(scaler.plain), _loop("x", "x"), (one,)))
    out.append(("obj.m(x), @compile", None, None, _loop("x", "x"), (one,)))
    return out


def tiny(rounds: int = 15, calls: int = 2000, only=()) -> list[dict]:
    """Per-call time of functions that take well under 1 us, plain and compiled, the loop
    calling each as user code does; rows: medians of ``rounds`` alternating batches, the
    difference in ns, and plain time / kiln time."""
    rows = []
    print(f"Python {sys.version.split()[0]}; {'case':24s} {'plain ns':>9s} {'kiln ns':>9s} "
          f"{'+ns':>6s} {'speed':>7s}")
    scaler = Scaler(3.0)
    for name, plain, compiled, loop, args in _tiny_cases():
        if only and not any(o in name for o in only):
            continue
        if plain is None:   # a method looked up per call: obj.m(x)
            plain_fn = kiln_fn = scaler
            run_plain, run_kiln = _method_loop("plain"), _method_loop("compiled")
        else:
            plain_fn, kiln_fn, run_plain, run_kiln = plain, compiled, loop, loop
        run_kiln(kiln_fn, 3, *args)      # compile
        run_kiln(kiln_fn, 3, *args)
        plain_t, kiln_t = [], []
        for _ in range(rounds):
            for run, fn, into in ((run_plain, plain_fn, plain_t), (run_kiln, kiln_fn, kiln_t)):
                start = time.perf_counter_ns()
                run(fn, calls, *args)
                into.append((time.perf_counter_ns() - start) / calls)
        p, k = statistics.median(plain_t), statistics.median(kiln_t)
        rows.append({"name": name, "plain_ns": p, "kiln_ns": k, "speed": p / k,
                     "plain_min_ns": min(plain_t), "kiln_min_ns": min(kiln_t)})
        print(f"{name:40s} {p:9.1f} {k:9.1f} {k - p:+6.1f} {p / k:6.2f}x   (min {min(plain_t):7.1f} "
              f"{min(kiln_t):7.1f})", flush=True)
    print(f"load average {_loadavg():.1f}")
    return rows


def _method_loop(attr: str):
    space: dict = {}
    exec(f"def loop(obj, calls, x):\n    for _ in range(calls):\n        obj.{attr}(x)\n", space)
    return space["loop"]


def main(argv: list[str] | None = None) -> dict | list:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", action="store_true", help="the small-call table (else the probe)")
    ap.add_argument("--tiny", action="store_true", help="functions under ~1 us, called directly")
    ap.add_argument("--sizes", default="1,10,100,1000")
    ap.add_argument("--dtypes", default="float64,float32")
    ap.add_argument("--only", default="", help="comma list of substrings of case names")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--clock", choices=("wall", "process"), default="wall")
    opts = ap.parse_args(argv)
    only = tuple(s for s in opts.only.split(",") if s)
    if opts.tiny:
        return tiny(opts.rounds, only=only)
    if not opts.table:
        return probe()
    return table(tuple(int(float(s)) for s in opts.sizes.split(",")), tuple(opts.dtypes.split(",")),
                 tuple(s for s in opts.only.split(",") if s), opts.rounds, clock=opts.clock)


if __name__ == "__main__":
    main()
