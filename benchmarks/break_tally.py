"""Which graph breaks do the test programs still hit? A tally of break reasons.

    python -m benchmarks.break_tally [--files tests/test_programs_sim.py,...] [--top 40]
        [--all-calls] [--json FILE]

Every program of every tests/test_programs*.py (``PROGRAMS``: its first call, or each call
with ``--all-calls``) runs once through ``kiln.explain`` (capture on the eager backend: no
g++ build) with the cost model off, as the tests run it, so every break counted is one
capture made, not a price. Each break reason is reduced to its kind (the reason's text up
to its first ``:``, ``—`` or ``(``, with the values the program named replaced by ``#``),
and the kinds are listed most frequent first with the programs that hit them; the most
frequent are the next things to capture. A program that raises on NumPy is still counted
(its breaks before the raise). Runs in ~2 minutes on an idle machine (~1,000 programs).
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import glob
import importlib
import io
import json
import os
import re
import sys
import warnings

import kiln
from kiln.config import config


def _kind(reason: str) -> str:
    """A break reason with the names that vary per program taken out."""
    text = reason.split(" — ")[0]
    text = re.split(r"[:(]", text, maxsplit=1)[0]
    text = re.sub(r"'[^']*'", "'#'", text)                       # quoted names
    text = re.sub(r"\b(array|variable|local|object|name) [\w.]+", r"\1 #", text)
    text = re.sub(r"\b[a-z_]+_\d+\b", "#", text)                  # graph node names
    text = re.sub(r"\d+", "#", text)
    return text.strip()


def _programs(files: list[str]):
    for path in files:
        module = importlib.import_module(path[:-3].replace(os.sep, "."))
        for name, entry in getattr(module, "PROGRAMS", {}).items():
            # (fn, calls); the gradient files' (fn, args, argnums): the function's own call
            fn, calls = entry if len(entry) == 2 else (entry[0], [entry[1]])
            yield os.path.basename(path)[:-3], name, fn, calls


def tally(files: list[str], all_calls: bool = False) -> tuple[dict, int, int]:
    """``(kinds, loops, programs, broken)``: kind -> list of (file, program, line, reason);
    ``loops``: the same for the reasons loop forms gave for not taking a loop (explain's
    "not a graph loop either: ..." notes)."""
    from tests.test_programs import _clone
    kinds: dict[str, list] = collections.defaultdict(list)
    loops: dict[str, list] = collections.defaultdict(list)
    count = broken = 0
    for file, name, fn, calls in _programs(files):
        count += 1
        hit = False
        for args in (calls if all_calls else calls[:1]):
            args = args() if callable(args) else _clone(args, {})
            try:
                with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                    warnings.simplefilter("ignore")
                    out = kiln.explain(fn)(*args)
            except Exception:          # noqa: BLE001 - a program that raises on purpose
                continue
            for b in out.break_reasons:
                hit = True
                kinds[_kind(b.reason)].append((file, name, b.lineno, b.reason))
            for note in out.loops:
                # "file:line: not a graph loop with a break either: <why>": the loop forms' refusals
                where, _, why = note.partition(": ")
                if why.startswith("not a graph"):
                    form, _, why = why.partition(" either: ")
                    loops[f"{form}: {_kind(why)}"].append((file, name, where, note))
        broken += hit
    return kinds, loops, count, broken


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", default="", help="comma list (default: tests/test_programs*.py)")
    p.add_argument("--top", type=int, default=40)
    p.add_argument("--all-calls", action="store_true")
    p.add_argument("--json", default="")
    a = p.parse_args(argv)
    files = a.files.split(",") if a.files else sorted(glob.glob("tests/test_programs*.py"))
    config.cost_model = False
    kinds, loops, count, broken = tally(files, a.all_calls)
    rows = sorted(kinds.items(), key=lambda kv: -len(kv[1]))
    loop_rows = sorted(loops.items(), key=lambda kv: -len(kv[1]))
    print(f"{count} programs, {broken} with a graph break, {sum(map(len, kinds.values()))} breaks",
          file=sys.stderr)
    for kind, hits in rows[:a.top]:
        programs = sorted({f"{f}:{n}" for f, n, _, _ in hits})
        print(f"{len(hits):5d}  {kind}", file=sys.stderr)
        print(f"       {', '.join(programs[:6])}{' ...' if len(programs) > 6 else ''}", file=sys.stderr)
    print("Loop forms that declined a loop:", file=sys.stderr)
    for kind, hits in loop_rows[:a.top]:
        programs = sorted({f"{f}:{n}" for f, n, _, _ in hits})
        print(f"{len(hits):5d}  {kind}", file=sys.stderr)
        print(f"       {', '.join(programs[:6])}{' ...' if len(programs) > 6 else ''}", file=sys.stderr)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"breaks": dict(rows), "loops": dict(loop_rows)}, f, indent=1)


if __name__ == "__main__":
    main()
