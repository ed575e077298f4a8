"""A graph break in the middle of 20 array ops: graphs compiled, time per call compiled vs
plain NumPy, and the cost of the frame-evaluation hook on unflagged calls while active.

The function does 10 elementwise ops, prints (a graph break: here into a StringIO, so the
benchmark keeps stdout clean), then 10 more ops. kiln compiles the 10 ops before the print
into one graph, runs the print as Python, and compiles the 10 ops after it as the resume
function's graph. Run: ``python -m benchmarks.graph_break_print`` (report on stderr,
JSON on stdout with ``--json``).
"""
from __future__ import annotations

import io
import json
import sys
import time

import numpy as np

import kiln
from kiln.capture import frame_hook

from .harness import per_call_us

SINK = io.StringIO()


def twenty_ops(x, y):
    a = x * 1.5 + y
    b = np.tanh(a) - 0.25
    c = b * b + x
    d = np.exp(-c) * y
    e = d + a * 0.5
    print("checkpoint", e.shape, file=SINK)      # the graph break
    f = np.sqrt(np.abs(e) + 1.0)
    g = f * y - x
    h = np.maximum(g, 0.0) + b
    i = h / (1.0 + c)
    return i.sum(axis=-1) + d.mean()


def twenty_ops_no_print(x, y):
    a = x * 1.5 + y
    b = np.tanh(a) - 0.25
    c = b * b + x
    d = np.exp(-c) * y
    e = d + a * 0.5
    f = np.sqrt(np.abs(e) + 1.0)
    g = f * y - x
    h = np.maximum(g, 0.0) + b
    i = h / (1.0 + c)
    return i.sum(axis=-1) + d.mean()


class Counting:
    def __init__(self, backend):
        self.backend, self.graphs = backend, 0

    def __call__(self, graph, example_inputs):
        self.graphs += 1
        return self.backend(graph, example_inputs)


def _fib(n):
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


def hook_overhead(repeats: int = 15) -> dict:
    """fib(20) (~22k unflagged Python calls) with the hook inactive vs active on this
    thread, and under a do-nothing hook (the floor: CPython stops inlining Python calls
    under any PEP 523 hook, which costs 3.12/3.13 more than 3.11)."""
    if not frame_hook.available():
        return {"hook": "unavailable"}

    def run_plain():
        _fib(20)

    def run_active():
        with frame_hook.active():
            _fib(20)
    lib = frame_hook.load()

    def run_baseline():  # a do-nothing PEP 523 hook: CPython's own cost of any hook
        lib.kiln_hook_baseline(1)
        try:
            _fib(20)
        finally:
            lib.kiln_hook_baseline(0)
    plain, active, floor = [], [], []
    for _ in range(repeats):   # interleaved, so drift hits all three alike
        plain.append(per_call_us(run_plain, (), 3, 1))
        active.append(per_call_us(run_active, (), 3, 1))
        floor.append(per_call_us(run_baseline, (), 3, 1))
    plain, active, floor = min(plain), min(active), min(floor)
    calls = 21891  # calls of _fib in fib(20)
    return {"fib20_plain_us": plain, "fib20_hook_active_us": active, "ratio": active / plain,
            "per_call_overhead_ns": (active - plain) / calls * 1e3,
            "fib20_any_hook_us": floor, "any_hook_ratio": floor / plain}


def main(as_json: bool = False) -> dict:
    results = {}
    rng = np.random.default_rng(0)
    for n, calls in ((1_000, 300), (1_000_000, 5)):
        x = rng.standard_normal((4, n // 4)).astype(np.float64)
        y = rng.standard_normal((4, n // 4)).astype(np.float64)
        row = {"plain_us": per_call_us(twenty_ops, (x, y), calls, 7)}
        for backend in ("eager", "cpp"):
            if backend not in kiln.api.available_backends():
                continue
            counting = Counting(kiln.api.BACKENDS[backend])
            compiled = kiln.compile(twenty_ops, backend=counting)
            start = time.perf_counter()
            got = compiled(x, y)
            first = time.perf_counter() - start
            np.testing.assert_allclose(got, twenty_ops(x, y), rtol=1e-9, atol=1e-9)
            row[f"{backend}_graphs"] = counting.graphs
            row[f"{backend}_first_call_s"] = first
            row[f"{backend}_us"] = per_call_us(compiled, (x, y), calls, 7)
            whole = kiln.compile(twenty_ops_no_print, backend=backend)
            whole(x, y)
            row[f"{backend}_no_break_us"] = per_call_us(whole, (x, y), calls, 7)
        results[n] = row
    results["hook"] = hook_overhead()
    lines = ["one print between 10 + 10 array ops (float64, shape (4, n/4)); median us/call"]
    for n in (1_000, 1_000_000):
        r = results[n]
        parts = [f"n={n:>9}: numpy {r['plain_us']:9.1f}"]
        for backend in ("eager", "cpp"):
            if f"{backend}_us" in r:
                parts.append(f"kiln[{backend}] {r[f'{backend}_us']:9.1f} "
                             f"({r['plain_us'] / r[f'{backend}_us']:.2f}x numpy, "
                             f"{r[f'{backend}_graphs']} graphs, first call {r[f'{backend}_first_call_s']:.2f} s; "
                             f"without the print {r[f'{backend}_no_break_us']:.1f})")
        lines.append("  " + " | ".join(parts))
    h = results["hook"]
    if "ratio" in h:
        lines.append(f"frame hook on unflagged calls while active: fib(20) {h['fib20_plain_us']:.0f} us -> "
                     f"{h['fib20_hook_active_us']:.0f} us ({h['ratio']:.2f}x, "
                     f"+{h['per_call_overhead_ns']:.0f} ns per Python call); a do-nothing PEP 523 "
                     f"hook: {h['fib20_any_hook_us']:.0f} us ({h['any_hook_ratio']:.2f}x, CPython's "
                     f"own cost of any hook)")
    sys.stderr.write("\n".join(lines) + "\n")
    if as_json:
        sys.stdout.write(json.dumps({str(k): v for k, v in results.items()}, indent=1) + "\n")
    return results


if __name__ == "__main__":
    main("--json" in sys.argv)
