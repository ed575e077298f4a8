"""``python -m benchmarks.short_circuit_selects [--rounds N] [--clock process|wall]``: ``or``, ``and`` and chained
comparisons on values the graph computes (kiln/capture/select_joins.py ``meeting``), before
and after, against NumPy, in the same process.

"before" is the same kiln with ``meeting`` declining (each such test broke the graph, as it
did before the change; its code object is a copy under another file name, so it has its own
cache entries); "after" is kiln as it is. Each round runs NumPy, before and after in a fresh
random order, each ``--inner`` calls back to back keeping the fastest (process CPU time by
default, all threads: the wall clock of a loaded machine mostly measures the others); the table shows
medians and the ratio to NumPy's median from the same rounds, the graph breaks of each, and
whether both gave NumPy's results bit for bit. The load average is printed: the machine is
shared.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import time
import types

import numpy as np

import kiln
from kiln.capture import graph_selects
from kiln.capture.select_joins import _Decline
from tests.capture.test_short_circuit_selects import banded_hits, clamped_mean

from .loop_selects import _best, _flat


def robust_scale(x, lo, hi):
    # a scale clamped into a band unless it is degenerate (top level: one graph either way
    # after the change; before, the test broke and the rest ran in a resume function)
    s = x.std()
    if s == 0 or not (lo <= s <= hi):
        s = np.float64(1.0)
    m = x.mean()
    return (x - m) / s


def cases(rng) -> dict:
    out = {}
    for n in (16, 256, 4096):
        x = rng.random(n)
        out[f"robust_scale n={n}"] = (robust_scale, (x, 0.1, 0.2))
        for steps in (20, 200):
            out[f"clamped_mean n={n} steps={steps}"] = (clamped_mean, (x * 3, steps))
            out[f"banded_hits n={n} steps={steps}"] = (banded_hits, (x, steps))
    return out


def _copy(fn, tag: str):
    code = fn.__code__.replace(co_filename=f"{fn.__code__.co_filename}<{tag}>")
    return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def _declined(*args):
    raise _Decline()


def _equal(got, want) -> bool:
    return all(np.asarray(x).tobytes() == np.asarray(y).tobytes() and type(x) is type(y)
               for x, y in zip(_flat(got), _flat(want)))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=11)
    p.add_argument("--inner", type=int, default=3)
    p.add_argument("--only", default="")
    p.add_argument("--clock", choices=("process", "wall"), default="process")
    a = p.parse_args(argv)
    rng = np.random.default_rng(0)
    clock = time.process_time if a.clock == "process" else time.perf_counter
    print(f"{a.clock} clock, load average {os.getloadavg()[0]:.1f}, cost model {kiln.config.cost_model}")
    print(f"{'case':34s} {'numpy us':>10s} {'before/np':>9s} {'after/np':>9s} "
          f"{'breaks':>7s}  equal")
    for name, (fn, args) in cases(rng).items():
        if a.only and a.only not in name:
            continue
        want = fn(*args)
        systems, breaks, equal = {"numpy": fn}, [], True
        for tag in ("before", "after"):
            copy = _copy(fn, tag)
            kept = graph_selects.meeting
            if tag == "before":
                graph_selects.meeting = _declined
            try:
                breaks.append(kiln.explain(copy)(*args).graph_break_count)
                systems[tag] = kiln.compile(copy)
                equal = equal and _equal(systems[tag](*args), want)
            finally:
                graph_selects.meeting = kept
        times = {s: [] for s in systems}
        for _ in range(a.rounds):
            order = list(times)
            random.shuffle(order)
            for system in order:
                times[system].append(_best(systems[system], args, a.inner, clock))
        med = {s: statistics.median(v) for s, v in times.items()}
        print(f"{name:34s} {med['numpy'] * 1e6:10.1f} {med['before'] / med['numpy']:9.2f} "
              f"{med['after'] / med['numpy']:9.2f} {breaks[0]:>3d}->{breaks[1]:<3d}  {equal}")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
