"""Side-by-side timing: NumPy, kiln (C++ backend), and installed peers, in one process.

Method (see shared/research/peers-measured.md, "measurement hygiene"): per workload each
system's first call is timed (its compile), results are checked against a float64
reference, then rounds run the systems in a fresh random order; each sample is a short
sleep (lets spinning OpenMP/BLAS workers go idle), one untimed warm call and one timed
call. The table shows medians, the ratio to NumPy from the same rounds, first-call time
and max abs error vs float64. W7 times batches of calls and reports microseconds per call.
"""
from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable

import numpy as np

import kiln
from kiln.config import config

from .workloads import WORKLOADS, Workload, other_systems


def per_call_us(fn: Callable, args: tuple, calls: int, repeats: int,
                clock: Callable[[], float] = time.perf_counter) -> float:
    """Median over ``repeats`` batches of the mean time of one call in a batch (µs), on
    ``clock`` (wall time; ``time.process_time`` counts this process's CPU time, every
    thread's, which other processes' load disturbs less)."""
    samples = []
    for _ in range(repeats):
        start = clock()
        for _ in range(calls):
            fn(*args)
        samples.append((clock() - start) / calls * 1e6)
    return statistics.median(samples)


def kiln_compile(fn: Callable) -> Callable:
    """kiln.compile with the C++ backend (by name once api.py knows it, else the callable)."""
    try:
        compiled = kiln.compile(fn, backend="cpp")
    except Exception:
        from kiln.runtime import cpp_backend
        compiled = kiln.compile(fn, backend=cpp_backend)
    return compiled


def kiln_compile_direct(fn: Callable) -> Callable:
    """kiln.compile with the C++ backend callable itself (no aot_autograd wrapper)."""
    from kiln.runtime import cpp_backend
    return kiln.compile(fn, backend=cpp_backend)


def _loadavg() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def _busy_seconds() -> float:
    """CPU seconds all processes have used (from /proc/stat), or 0 where unavailable."""
    try:
        with open("/proc/stat") as f:
            vals = [int(v) for v in f.readline().split()[1:9]]
    except OSError:
        return 0.0
    return (sum(vals) - vals[3] - vals[4]) / os.sysconf("SC_CLK_TCK")


def _own_seconds() -> float:
    t = os.times()
    return t.user + t.system


MAX_FOREIGN_CORES = 0.3
RETRIES = 4


def sample(run: Callable, inputs: list, gap: float, per_call: bool, stats: dict) -> float:
    """One timed sample, retried while other processes used more than MAX_FOREIGN_CORES."""
    for attempt in range(RETRIES + 1):
        b0, o0, t0 = _busy_seconds(), _own_seconds(), time.perf_counter()
        time.sleep(gap)
        if per_call:
            calls = 2000
            run(*inputs)
            start = time.perf_counter()
            for _ in range(calls):
                run(*inputs)
            elapsed = (time.perf_counter() - start) / calls
        else:
            run(*inputs)
            start = time.perf_counter()
            run(*inputs)
            elapsed = time.perf_counter() - start
        window = time.perf_counter() - t0
        foreign = ((_busy_seconds() - b0) - (_own_seconds() - o0)) / window
        if foreign <= MAX_FOREIGN_CORES:
            return elapsed
        stats["retried"] += 1
    stats["disturbed"] += 1
    return elapsed


def measure(w: Workload, rounds: int, gap: float, systems: dict[str, Callable]) -> dict:
    rng = np.random.default_rng(0)
    inputs = w.make(rng)
    ref = np.asarray(w.fn(*[a.astype(np.float64) for a in inputs]), dtype=np.float64)
    runners: dict[str, Callable] = {"NumPy": w.fn}
    first: dict[str, float] = {}
    errors: dict[str, float] = {}
    wraps = [("kiln", kiln_compile)] + list(systems.items())
    if w.per_call:  # the same kernels without the aot_autograd dispatch layer
        wraps.insert(1, ("kiln (backend only)", kiln_compile_direct))
    for name, wrap in wraps:
        try:
            runners[name] = wrap(w.fn)
        except Exception as e:  # a peer that cannot take this workload
            print(f"  {name}: skipped ({type(e).__name__}: {e})", file=sys.stderr)
    for name, run in list(runners.items()):
        start = time.perf_counter()
        try:
            out = run(*inputs)
        except Exception as e:
            print(f"  {name}: failed ({type(e).__name__}: {e})", file=sys.stderr)
            runners.pop(name)
            continue
        first[name] = time.perf_counter() - start
        errors[name] = float(np.max(np.abs(np.asarray(out, dtype=np.float64) - ref))) if ref.size else 0.0
    samples: dict[str, list[float]] = {name: [] for name in runners}
    load = {"retried": 0, "disturbed": 0}
    for _ in range(rounds):
        order = list(runners)
        random.shuffle(order)
        for name in order:
            samples[name].append(sample(runners[name], inputs, gap, w.per_call, load))
    medians = {name: statistics.median(s) for name, s in samples.items()}
    result = {"name": w.name, "what": w.what, "median_s": medians, "first_call_s": first,
              "max_abs_err_vs_f64": errors, "rounds": rounds, "per_call": w.per_call,
              "ratio_vs_numpy": {n: medians["NumPy"] / t for n, t in medians.items()},
              "samples_retried": load["retried"], "samples_disturbed": load["disturbed"]}
    if w.name == "W1":
        out = np.empty_like(inputs[0])
        copies = []
        for _ in range(max(5, rounds // 2)):
            time.sleep(gap)
            start = time.perf_counter()
            np.copyto(out, inputs[0])
            copies.append(time.perf_counter() - start)
        result["copy_s"] = statistics.median(copies)
    return result


CACHE_PROBE = """
import sys, time, json
start = time.perf_counter()
import numpy as np, kiln
from kiln.config import config
from kiln.runtime.build import stats
config.cache_dir = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from benchmarks.harness import kiln_compile
from benchmarks.workloads import w1
x = np.random.default_rng(0).standard_normal(10_000_000).astype(np.float32)
t0 = time.perf_counter()
f = kiln_compile(w1)
f(x)
first = time.perf_counter() - t0
print(json.dumps({"first_call_s": first, "builds": stats["builds"], "disk_hits": stats["disk_hits"],
                  "artifact_hits": stats["artifact_hits"]}))
"""


def cache_probe(cache_dir: str) -> dict:
    """A fresh process with the warm cache: first call time, and whether g++ ran."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", CACHE_PROBE, cache_dir, root], capture_output=True,
                         text=True, timeout=300, cwd=root)
    if out.returncode != 0:
        return {"error": out.stderr[-500:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(only: list[str] | None = None, rounds: int = 15, gap: float = 0.1,
        peers: bool = True) -> dict:
    cache = tempfile.mkdtemp(prefix="kiln-bench-cache-")  # cold compiles, measured
    config.cache_dir = cache
    systems = other_systems() if peers else {}
    results = []
    for w in WORKLOADS:
        if only and w.name not in only:
            continue
        print(f"{w.name}: {w.what} ...", file=sys.stderr, flush=True)
        results.append(measure(w, rounds, gap, systems))
    probe = cache_probe(cache) if (not only or "W1" in only) else None
    names = ["NumPy", "kiln"] + list(systems)
    if any(r["per_call"] for r in results):
        names.insert(2, "kiln (backend only)")
    return {"results": results, "cache_probe": probe, "threads": config.num_threads,
            "loadavg_end": _loadavg(), "systems": names}


TARGETS = {"W1": 5.0, "W2": 4.0, "W3": 2.5, "W4": 3.0, "W5": 6.0}


def table(report: dict) -> str:
    systems = report["systems"]
    lines = ["| workload | " + " | ".join(systems) + " | target | err vs f64 (NumPy / kiln) |",
             "|---|" + "---|" * len(systems) + "---|---|"]
    for r in report["results"]:
        cells = []
        for s in systems:
            if s not in r["median_s"]:
                cells.append("–")
                continue
            t = r["median_s"][s]
            text = f"{t * 1e6:.1f} µs" if r["per_call"] else f"{t * 1e3:.2f} ms"
            text += f" · {r['ratio_vs_numpy'][s]:.2f}×"
            if s != "NumPy" and s in r["first_call_s"]:
                text += f" · 1st {r['first_call_s'][s]:.2f} s"
            cells.append(text)
        target = f"≥ {TARGETS[r['name']]}×" if r["name"] in TARGETS else (
            "≤ 10 µs" if r["name"] == "W7" else "–")
        err = r["max_abs_err_vs_f64"]
        errs = f"{err.get('NumPy', float('nan')):.1e} / {err.get('kiln', float('nan')):.1e}"
        lines.append(f"| {r['name']} {r['what']} | " + " | ".join(cells) + f" | {target} | {errs} |")
    out = "\n".join(lines)
    for r in report["results"]:
        if "copy_s" in r:
            k = r["median_s"].get("kiln")
            out += (f"\n\nW1 vs a plain copy of its bytes (np.copyto, 40 MB): copy {r['copy_s'] * 1e3:.2f} ms, "
                    f"kiln {k * 1e3:.2f} ms = {k / r['copy_s']:.2f}× the copy (target ≤ 2×)")
            out += f"\nCold compile of W1 (first call, empty cache): {r['first_call_s']['kiln']:.2f} s (target ≤ 1 s)"
    probe = report.get("cache_probe")
    if probe:
        out += (f"\nFresh process, warm cache: W1 first call {probe.get('first_call_s', float('nan')):.3f} s, "
                f"g++ runs: {probe.get('builds')}, cached graph artifacts loaded: {probe.get('artifact_hits')}, "
                f"cached libraries loaded: {probe.get('disk_hits')}")
    retried = sum(r["samples_retried"] for r in report["results"])
    disturbed = sum(r["samples_disturbed"] for r in report["results"])
    out += (f"\n\n{report['threads']} threads; medians of {report['results'][0]['rounds'] if report['results'] else 0} "
            f"interleaved rounds; samples during which other processes used > {MAX_FOREIGN_CORES} cores "
            f"were retried ({retried} retries, {disturbed} kept after {RETRIES} retries); "
            f"load average at the end {report['loadavg_end']:.2f}")
    return out
