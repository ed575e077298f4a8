"""kiln's own CPU time per compile: what a function's first call costs in Python (capture,
guards, aot, lowering and rendering, loading) when its kernels are already in the on-disk
cache, so g++ does not run. ``first_call.py --cold`` splits a cold call (g++ included)
into phases; this measures the Python half alone, closely enough to compare two trees.

    python -m benchmarks.compile_latency [--rounds 5] [--programs N] [--base TREE] [--pairs 3]

Each process fills (or reuses) one kernel cache, then calls every case ``--rounds`` times
after ``kiln.reset()`` and reports the median CPU milliseconds of each (``time.process_time``:
the machine is shared). Cases: small functions (first_call.py's ``--cold`` ones), a capture-only
sweep (tests/capture/test_nested_loop_breaks.py's step limit at every instruction of a
double loop's body: 60 captures with partial graphs and resume functions, eager), and the
programs of tests/test_programs_real6.py (the first ``--programs``, all 163 by default) on
the default backend, each program's first call after a reset (summed). ``--base TREE``: a second source tree (a worktree of main)
run in alternating processes against this one (``--pairs`` of each), medians of both.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from benchmarks.first_call import COLD_CASES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import copy, json, sys, time, warnings
import numpy as np
import kiln
from kiln.capture import translator
kiln.config.cache_dir = sys.argv[1]
kiln.config.cost_model = False      # as in the tests: everything compiles
rounds, programs = int(sys.argv[2]), int(sys.argv[3])
warnings.simplefilter("ignore")

from tests.test_programs_real9 import lennard_jones_triu_forces as lennard_jones
""" + COLD_CASES + r"""
def first_call(fn, args, backend="cpp"):
    kiln.reset()
    args = copy.deepcopy(args)
    t = time.process_time()
    kiln.compile(fn, backend=backend)(*args)
    return time.process_time() - t

from tests.capture.test_nested_loop_breaks import for_for, _inputs
def step_sweep():
    old = translator.MAX_STEPS, kiln.config.recompile_limit
    kiln.config.recompile_limit = 2
    args, total = _inputs(3), 0.0
    try:
        for limit in range(40, 100):
            translator.MAX_STEPS = limit
            total += first_call(for_for, args, "eager")
    finally:
        translator.MAX_STEPS, kiln.config.recompile_limit = old
    return total

from tests.test_programs_real6 import PROGRAMS
def real6():
    total = 0.0
    for name, (fn, calls) in list(PROGRAMS.items())[:programs]:
        try:
            total += first_call(fn, calls[0])
        except Exception:
            pass
    return total

cases = {fn.__name__: (lambda fn=fn, args=args: first_call(fn, args)) for fn, args in cases}
cases["step_sweep (60 captures)"] = step_sweep
cases[f"real6 ({min(programs, len(PROGRAMS))} programs)"] = real6
for run in cases.values():     # fills the kernel cache (the first process builds)
    run()
times = {name: [] for name in cases}
for _ in range(rounds):
    for name, run in cases.items():
        times[name].append(run())
print(json.dumps({name: 1000 * sorted(v)[len(v) // 2] for name, v in times.items()}))
"""


def run_child(tree: str, cache: str, rounds: int, programs: int) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, KILN_COST_MODEL="0")
    out = subprocess.run([sys.executable, "-c", CHILD, cache, str(rounds), str(programs)], cwd=tree, env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--base", help="another source tree to compare against (run alternately)")
    ap.add_argument("--programs", type=int, default=163, help="how many of real6's programs")
    ap.add_argument("--cache", help="kernel cache directory (default: a fresh one)")
    opts = ap.parse_args()
    cache = opts.cache or tempfile.mkdtemp(prefix="kiln-compile-latency-")
    trees = {"this": ROOT} if not opts.base else {"base": os.path.abspath(opts.base), "this": ROOT}
    rows: dict[str, list] = {t: [] for t in trees}
    for _ in range(opts.pairs if opts.base else 1):
        for label, tree in trees.items():
            rows[label].append(run_child(tree, cache, opts.rounds, opts.programs))
    names = list(rows["this"][0])
    print(f"CPU ms per first call, kernels cached (medians of {opts.rounds} rounds"
          + (f", then of {opts.pairs} alternating processes each)" if opts.base else ")"))
    print(f"{'case':28}" + "".join(f"{t:>10}" for t in trees) + ("     ratio" if opts.base else ""))
    for name in names:
        med = {t: statistics.median(r[name] for r in rows[t]) for t in trees}
        line = f"{name:28}" + "".join(f"{med[t]:10.1f}" for t in trees)
        if opts.base:
            line += f"{med['this'] / med['base']:10.2f}"
        print(line)


if __name__ == "__main__":
    main()
