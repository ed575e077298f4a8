"""Where does decorating a working function make it slower? Every program, plain and compiled.

    python -m benchmarks.slowdown_sweep [--files tests/test_programs_sim.py,...] [--idioms]
        [--workloads] [--known] [--scale 10] [--only NAME,NAME] [--shard I/N] [--rounds 5]
        [--slower 1.10] [--json FILE] [--retime FILE.json]

The programs are the realistic ones the tests check (``PROGRAMS`` of every
tests/test_programs*.py: each program's first call), the short idioms of
benchmarks/idioms.py (their small and their benchmark inputs) and, with ``--workloads``,
W1-W7 (benchmarks/workloads.py) and, with ``--known``, the slowdowns found before
(benchmarks/slowdowns.py). Each program runs at its test size and again scaled up:
every dim of 2 or more of every array argument multiplied by the same factor (``--scale``,
fewer per dim where arrays have several such dims, so no array grows more than ~1000x;
the arrays are tiled, so index arrays stay in range and values keep their mix). A program
that raises on NumPy, or whose scaled call raises, is skipped at that size.

Per case: ``kiln.compile(fn)`` (default backend, default cost model), its first call
(compile) and one more, then ``--rounds`` rounds that alternate plain and compiled (the
order flips each round), each the mean of a batch of calls of about 3 ms
(``harness.per_call_us``, CPU time). A program that writes into its arguments gets fresh copies
for every call, both ways (the copies are timed in both). Rows whose compiled time is
above ``--slower`` times the plain one and at least 0.3 us longer are timed again at the
end, alone, with three times the rounds; the list of those still slower ends the output.
``--retime FILE.json`` times again only the slow rows of an earlier run.
Output is a table: program, size (elements of the largest argument), plain and compiled
us per call (medians), compiled / plain (above 1: kiln is slower), and compile seconds; the
rows still slower after timing again say what kiln made of them (``kiln.explain``: graphs,
breaks, graphs the cost model runs as Python).
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import glob
import importlib
import io
import json
import os
import statistics
import sys
import time
import warnings

import numpy as np

import kiln

from .harness import _loadavg, per_call_us

SINK = io.StringIO()
# This process's CPU time (all its threads): other processes' load disturbs it far less
# than wall time (on the shared 2-core machine one program's wall time swung 6x between
# rounds); a kernel on two threads counts twice, which only makes kiln look slower.
CLOCK = time.process_time
GROWTH = 1000   # the most a scaled argument grows (elements)


def _largest(args) -> int:
    return max([a.size for a in _arrays(args)] or [0])


def _arrays(args):
    for a in args:
        if isinstance(a, np.ndarray):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from _arrays(a)
        elif isinstance(a, dict):
            yield from _arrays(a.values())


def scaled(args: tuple, factor: int):
    """``args`` with every array tiled ``factor`` times along each dim of 2 or more (fewer
    where an array has several, so that none grows past GROWTH); None if nothing grows."""
    dims = max([sum(d >= 2 for d in a.shape) for a in _arrays(args)] or [0])
    if dims == 0:
        return None
    k = max(2, min(factor, int(round(GROWTH ** (1 / dims)))))

    def grow(a):
        if isinstance(a, np.ndarray):
            if a.dtype == object or a.ndim == 0:
                return a
            big = np.tile(a, [k if d >= 2 else 1 for d in a.shape])
            return np.asfortranarray(big) if a.flags.f_contiguous and not a.flags.c_contiguous else big
        if isinstance(a, tuple) and not hasattr(a, "_fields"):
            return tuple(grow(v) for v in a)
        if isinstance(a, list):
            return [grow(v) for v in a]
        if isinstance(a, dict):
            return {key: grow(v) for key, v in a.items()}
        return a
    return tuple(grow(a) for a in args)


def _snapshot(args):
    return [a.copy() for a in _arrays(args)]


def _writes(fn, args) -> bool:
    """Does ``fn`` write into an array argument (one call on copies)?"""
    mine = copy.deepcopy(args)
    before = _snapshot(mine)
    _quiet(fn, mine)
    return any(not _equal(b, a) for b, a in zip(before, _arrays(mine)))


def _equal(b, a) -> bool:
    """Same values (NaNs equal where the dtype has them: np.isnan refuses structured, string
    and object arrays, whose programs were left out of the sweep until stop 52)."""
    try:
        return np.array_equal(b, a, equal_nan=True)
    except TypeError:
        return np.array_equal(b, a)


def _quiet(fn, args):
    with warnings.catch_warnings(), contextlib.redirect_stdout(SINK):
        warnings.simplefilter("ignore")
        return fn(*args)


def _runner(fn, args, fresh: bool):
    if not fresh:
        return lambda: _quiet(fn, args)
    return lambda: _quiet(fn, copy.deepcopy(args))


def time_pair(plain, compiled, rounds: int, budget_s: float = 0.003) -> tuple[float, float]:
    """Median us per call of ``plain()`` and ``compiled()``, rounds alternating."""
    start = time.perf_counter()
    plain()
    once = max(time.perf_counter() - start, 1e-7)
    calls = max(1, min(20000, int(budget_s / once)))
    a, b = [], []
    for r in range(rounds):
        pair = [(plain, a), (compiled, b)]
        for run, out in (pair if r % 2 == 0 else pair[::-1]):
            out.append(per_call_us(run, (), calls, 1, CLOCK))
    return statistics.median(a), statistics.median(b)


def measure(name: str, fn, args: tuple, rounds: int) -> dict | None:
    """One row (None when NumPy raises on these arguments)."""
    try:
        fresh = _writes(fn, args)
    except Exception:
        return None
    cf = kiln.compile(fn)
    plain = _runner(fn, args, fresh)
    compiled = _runner(cf, args, fresh)
    start = time.perf_counter()
    try:
        compiled()
    except Exception as e:   # kiln raising where NumPy did not: a bug, listed
        return {"name": name, "size": _largest(args), "error": f"{type(e).__name__}: {e}"[:200]}
    first = time.perf_counter() - start
    compiled()
    p, c = time_pair(plain, compiled, rounds)
    return {"name": name, "size": _largest(args), "plain_us": p, "kiln_us": c, "ratio": c / p,
            "first_s": first}


def explained(fn, args) -> str:
    """What kiln made of the call: graphs, breaks, graphs run as Python (kiln.explain)."""
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(SINK):
            warnings.simplefilter("ignore")
            out = kiln.explain(fn)(*copy.deepcopy(args))
    except Exception as e:
        return f"explain raised {type(e).__name__}"
    return (f"{out.graph_count} graphs, {out.graph_break_count} breaks"
            + "".join(f"; as Python: {n}" for n in out.runs_as_python)[:300]
            + "".join(f"; break: {b.reason}" for b in out.break_reasons[:3])[:300])


def cases(files: list[str], idioms: bool, workloads: bool, factor: int, only: set | None,
          known: bool = False):
    """(name, fn, args) per program and size."""
    for path in files:
        mod = importlib.import_module("tests." + os.path.basename(path)[:-3])
        for name, entry in getattr(mod, "PROGRAMS", {}).items():
            # (fn, calls); the gradient files' (fn, args, argnums): the function's own call
            fn, calls = entry if len(entry) == 2 else (entry[0], [entry[1]])
            if only and name not in only or not calls:
                continue
            args = calls[0]() if callable(calls[0]) else calls[0]
            tag = os.path.basename(path)[len("test_programs"):-3].lstrip("_") or "programs"
            yield f"{tag}:{name}", fn, tuple(args)
            if factor > 1:
                big = scaled(tuple(args), factor)
                if big is not None:
                    yield f"{tag}:{name} (x{factor})", fn, big
    if idioms:
        from .idioms import IDIOMS
        for idm in IDIOMS:
            if only and idm.name not in only:
                continue
            for small in (True, False):
                yield f"idioms:{idm.name}{' (small)' if small else ''}", idm.fn, \
                    tuple(idm.make(np.random.default_rng(0), small))
    if known:
        from .slowdowns import cases as known_cases
        for name, fn, args in known_cases():
            if not only or name in only:
                yield f"known:{name}", fn, args
    if workloads:
        from .workloads import WORKLOADS
        for w in WORKLOADS:
            if not only or w.name in only:
                yield f"workloads:{w.name}", w.fn, tuple(w.make(np.random.default_rng(0)))


def row_text(r: dict) -> str:
    if "error" in r:
        return f"{r['name'][:60]:60s} {r['size']:>9d}  ERROR {r['error']}"
    return (f"{r['name'][:60]:60s} {r['size']:>9d} {r['plain_us']:10.2f} {r['kiln_us']:10.2f} "
            f"{r['ratio']:7.2f} {r['first_s']:7.2f}" + (f"  {r['explain']}" if r.get("explain") else ""))


HEADER = f"{'program':60s} {'elements':>9s} {'plain us':>10s} {'kiln us':>10s} {'k/p':>7s} {'first s':>7s}"


def slow(r: dict, limit: float) -> bool:
    return "error" not in r and r["ratio"] > limit and r["kiln_us"] - r["plain_us"] > 0.3


def _last(r: dict) -> dict:
    """A row of an earlier run as its second timing found it, where it was timed again."""
    if "retimed_ratio" not in r or r["retimed_ratio"] is None:
        return r
    return {**r, "plain_us": r["retimed_plain_us"], "kiln_us": r["retimed_kiln_us"], "ratio": r["retimed_ratio"]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", default="tests/test_programs*.py")
    ap.add_argument("--idioms", action="store_true")
    ap.add_argument("--workloads", action="store_true")
    ap.add_argument("--known", action="store_true")
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--only")
    ap.add_argument("--shard", default="0/1")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--slower", type=float, default=1.10)
    ap.add_argument("--json")
    ap.add_argument("--retime", help="a JSON of an earlier run: time its slow rows again")
    opts = ap.parse_args(argv)
    files = sorted(f for pat in opts.files.split(",") for f in glob.glob(pat))
    only = set(opts.only.split(",")) if opts.only else None
    shard, shards = map(int, opts.shard.split("/"))
    print(f"# load {_loadavg():.2f}; numpy {np.__version__}; python {sys.version.split()[0]}", flush=True)
    print(HEADER, flush=True)
    rows, kept = [], {}
    todo = list(cases(files, opts.idioms, opts.workloads, opts.scale, only, opts.known))
    if opts.retime:
        with open(opts.retime) as f:
            again = {r["name"] for r in json.load(f) if slow(_last(r), opts.slower)}
        todo = [c for c in todo if c[0] in again]
    for i, (name, fn, args) in enumerate(todo):
        if i % shards != shard:
            continue
        try:
            r = measure(name, fn, args, opts.rounds)
        except Exception as e:   # plain raising at a scaled size, say
            r = None if "(x" in name else {"name": name, "size": _largest(args),
                                           "error": f"{type(e).__name__}: {e}"[:200]}
        if r is None:
            continue
        rows.append(r)
        kept[name] = (fn, args)
        print(row_text(r), flush=True)
    flagged = [r for r in rows if slow(r, opts.slower)]
    if flagged:
        print(f"\n# timed again, alone, {3 * opts.rounds} rounds", flush=True)
        print(HEADER, flush=True)
    still = []
    for r in flagged:
        fn, args = kept[r["name"]]
        again = measure(r["name"], fn, args, 3 * opts.rounds)
        if again is None:
            continue
        r.update(retimed_plain_us=again.get("plain_us"), retimed_kiln_us=again.get("kiln_us"),
                 retimed_ratio=again.get("ratio"))
        print(row_text(again), flush=True)
        if slow(again, opts.slower):
            again["explain"] = explained(fn, args)
            still.append(again)
    print(f"\n# slower compiled (> {opts.slower}x and > 0.3 us), after timing again: {len(still)}")
    for r in sorted(still, key=lambda r: -r["ratio"]):
        print(row_text(r))
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)


if __name__ == "__main__":
    main()
