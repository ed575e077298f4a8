"""Capture on every CPython: run the tests' program corpus (tests/test_programs*.py
registries) and record, per program, the graphs, graph breaks (with reasons), kernels and
guards kiln made; then diff one interpreter's record against another's.

    python -m benchmarks.versions record out311.json            # under each interpreter
    python -m benchmarks.versions diff out311.json out313.json  # differences, one row each

``record`` takes ``--backend`` (cpp by default: kernel counts need a backend that builds
kernels, and the cost model's "runs as Python" verdicts one that prices kernels; ``eager``
captures the same graphs without g++), ``--only SUBSTRING`` (program names), ``--names
FILE`` (program names, one a line: the programs added since an earlier record),
``--files`` (test modules) and ``--loop-benchmarks also|only`` (benchmarks/loops.py's
cases and time_loops.py's loops at small sizes). Programs run each of their calls in
order on one compiled function, as the tests do; graphs are compared as their printed
text with the file's line numbers removed (they differ between nothing else). Each call
also runs plainly on a copy of its arguments: ``values`` says per call whether the
compiled one gave the same result, exception and argument state (random generators by
their state), and ``loops`` holds explain's loop notes (loop node or why unrolled). Users on 3.12/3.13 must
get the same graphs, breaks, kernels and guards as on 3.11 (docs/capture.md "Python
versions").
"""
from __future__ import annotations

import argparse
import copy
import glob
import importlib
import json
import os
import re
import sys
import warnings
from collections import Counter


def _modules(files: list[str] | None) -> list[str]:
    paths = files or sorted(glob.glob(os.path.join("tests", "test_programs*.py")))
    return [os.path.splitext(p)[0].replace(os.sep, ".") for p in paths]


def _programs(modules: list[str]):
    for name in modules:
        mod = importlib.import_module(name)
        for prog, entry in getattr(mod, "PROGRAMS", {}).items():
            # Gradient programs are (fn, args, argnums[, has_aux, ...]): one call through
            # value_and_grad; the others (fn, calls).
            fn, calls, argnums, has_aux = (*entry[:3], bool(entry[3:4] and entry[3])) \
                if len(entry) >= 3 else (*entry, None, False)
            yield (f"{name.rsplit('.', 1)[-1]}::{prog}", fn, calls if argnums is None else [calls],
                   argnums, has_aux)


def _loop_benchmarks():
    """benchmarks/loops.py's cases and benchmarks/time_loops.py's loops at small sizes,
    each called twice with fresh arguments."""
    import numpy as np
    from benchmarks import loops, time_loops as tl
    rng = np.random.default_rng(0)
    for name, (fn, make) in loops.cases(rng).items():
        yield f"loops::{name}", fn, [make, make], None, False
    A0, B0, u0 = rng.random((12, 12)), rng.random((12, 12)), rng.random((12, 12))
    y = np.linspace(0.0, 1.0, 9)
    p0 = np.zeros((9, 9))
    p0[:, -1] = y
    m = rng.random((20, 20)) - 0.5
    spd, b = m @ m.T + 0.5 * np.eye(20), rng.random(20)
    T0 = np.zeros((12, 12))
    T0[0] = 100.0
    small = {"jacobi_2d": (tl.jacobi_2d, lambda: (5, A0.copy(), B0.copy())),
             "heat_ping_pong": (tl.heat_ping_pong, lambda: (u0.copy(), u0.copy(), 5, 0.1)),
             "heat_rebind": (tl.heat_rebind, lambda: (u0.copy(), 5, 0.1)),
             "laplace": (tl.laplace, lambda: (p0.copy(), y, 0.25, 0.125, 1e-3)),
             "jacobi_poisson": (tl.jacobi_poisson, lambda: (u0.copy(), B0, 0.1, 1e-3)),
             "conjugate_gradient": (tl.conjugate_gradient, lambda: (spd, b, 1e-8)),
             "heat_break": (tl.heat_break, lambda: (T0.copy(), 500, 0.5))}
    for name, (fn, make) in small.items():
        yield f"time_loops::{name}", fn, [make, make], None, False


def _record_one(fn, calls, argnums, has_aux, backend: str) -> dict:
    import kiln
    from kiln.cli import _function_report
    dynamic = True if backend == "cpp-dynamic" else None
    compiled = kiln.compile(fn, backend="cpp" if backend == "cpp-dynamic" else backend, dynamic=dynamic)
    run = compiled if argnums is None else kiln.value_and_grad(compiled, argnums, has_aux=has_aux)
    plain = fn if argnums is None else kiln.value_and_grad(fn, argnums, has_aux=has_aux)
    outcomes, values = [], []
    for args in calls:
        made = args() if callable(args) else args
        mine, theirs = copy.deepcopy(made), copy.deepcopy(made)
        got, want = _outcome(run, mine), _outcome(plain, theirs)
        outcomes.append(got[0])
        values.append(_agreement((got, mine), (want, theirs)))
    rep = _function_report(compiled)
    from kiln.explain import build_explain_output
    explained = build_explain_output(compiled.records)
    as_python = explained.runs_as_python
    strip = re.compile(r"(\.py):\d+|(?<=loop_body_)\d+")
    return {"graphs": rep["graph_count"], "breaks": rep["graph_break_count"],
            "reasons": sorted(f"{b['kind']} {os.path.basename(b['filename'])}:{b['lineno']} {b['reason']}"
                              for b in rep["breaks"]),
            "kernels": rep["kernels"], "cache_entries": rep["cache_entries"],
            "ops": sum(len(c["ops"]) for c in rep["compilations"]),
            "runs_as_python": sorted(_verdict(note) for note in as_python),
            "recompiles": rep["recompiles"],
            "guards": sorted({g for c in rep["compilations"] for g in c["guards"]}),
            "graph_text": [strip.sub(r"\1", c["graph"]) for c in rep["compilations"] if c["graph"] and c["ops"]],
            "outcomes": outcomes, "values": values,
            "loops": sorted(strip.sub(r"\1", note) for note in explained.loops)}


def _outcome(run, args) -> tuple:
    """("ok", result) or (the exception's type name and message, None); warnings ignored."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", run(*args)
        except Exception as e:                # noqa: BLE001 - the program's own exceptions
            return f"{type(e).__name__}: {e}"[:200], None


def _states(v):
    """``v`` with each NumPy random generator replaced by its state (the compiled and plain
    calls draw from copies of one generator: the same state after is the same draws)."""
    import numpy as np
    if isinstance(v, np.random.Generator):
        return repr(v.bit_generator.state)
    if isinstance(v, np.random.RandomState):
        return repr(v.get_state(legacy=False))
    if type(v) in (list, tuple):
        return type(v)(_states(x) for x in v)
    if type(v) is dict:
        return {k: _states(x) for k, x in v.items()}
    return v


def _agreement(got, want) -> str:
    """'same' when a compiled call gave what the plain call gave (result, exception and
    the arguments' state after it; NaN equal, rtol 1e-12), else where they part first."""
    from tests.capture.conftest import assert_same
    (g, g_result), g_args = _states(got)
    (w, w_result), w_args = _states(want)
    if g != w:
        return f"raised {g!r} where plainly {w!r}"
    try:
        assert_same(g_result, w_result)
        assert_same(list(g_args), list(w_args), "arguments")
    except AssertionError as e:
        return "differs: " + str(e).strip().splitlines()[0][:200]
    except Exception as e:                    # noqa: BLE001 - values assert_same cannot compare
        return f"not compared: {type(e).__name__}"
    return "same"


def record(out: str, backend: str, only: str | None, files: list[str] | None,
           names: str | None = None, loop_benchmarks: str | None = None) -> None:
    sys.path.insert(0, os.getcwd())
    results = {"python": sys.version.split()[0], "backend": backend, "programs": {}}
    wanted = set(open(names).read().split()) if names else None
    progs = _programs(_modules(files)) if loop_benchmarks != "only" else iter(())
    if loop_benchmarks:
        import itertools
        progs = itertools.chain(progs, _loop_benchmarks())
    for name, fn, calls, argnums, has_aux in progs:
        if (only and only not in name) or (wanted is not None and name not in wanted):
            continue
        print(f"  {name}", file=sys.stderr, flush=True)
        try:
            results["programs"][name] = _record_one(fn, calls, argnums, has_aux, backend)
        except Exception as e:                # noqa: BLE001 - a harness failure is a row too
            results["programs"][name] = {"error": f"{type(e).__name__}: {e}"[:300]}
    with open(out, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    print(f"{len(results['programs'])} programs recorded on Python {results['python']} -> {out}",
          file=sys.stderr)


def _verdict(note: str) -> str:
    """A cost-model note without what differs between runs: the resume function's
    bytecode offset and the timed estimates."""
    return re.sub(r"(?<=resume at )\d+|\d+\.\d+(?= us)", "N", note)


_OP = re.compile(r"ops\.(\w+)\((.*)")


def _ops(texts: list[str]) -> Counter:
    """The ops of printed graphs (with a scalar_fn's function), order aside."""
    return Counter(f"{op}:{m.group(1)}" if (m := re.search(r"fn='(\w+)'", args)) else op
                   for text in texts for op, args in _OP.findall(text))


def diff(base_path: str, other_path: str, verbose: bool) -> int:
    base, other = (json.load(open(p)) for p in (base_path, other_path))
    rows = []
    for name, b in base["programs"].items():
        o = other["programs"].get(name)
        if o is None:
            continue
        fields = [k for k in ("error", "graphs", "breaks", "kernels", "ops", "runs_as_python",
                              "cache_entries", "recompiles", "loops", "values",
                              "outcomes", "reasons", "guards", "graph_text") if b.get(k) != o.get(k)]
        if "graph_text" in fields and _ops(b.get("graph_text", [])) == _ops(o.get("graph_text", [])):
            fields[fields.index("graph_text")] = "graph_text (same ops, other order)"
        if fields:
            rows.append((name, fields, b, o))
    print(f"{base['python']} vs {other['python']} ({base['backend']}): "
          f"{len(rows)} of {len(base['programs'])} programs differ")
    for name, fields, b, o in rows:
        counts = " ".join(f"{k} {b.get(k)}->{o.get(k)}" for k in ("graphs", "breaks", "kernels", "ops")
                          if b.get(k) != o.get(k))
        print(f"  {name}: {', '.join(fields)}  {counts}")
        if verbose:
            for k in ("error", "reasons", "runs_as_python", "loops", "values", "outcomes", "guards"):
                if b.get(k) != o.get(k):
                    mine, theirs = b.get(k) or [], o.get(k) or []
                    if isinstance(mine, list) and isinstance(theirs, list):
                        mine, theirs = sorted(set(mine) - set(theirs)), sorted(set(theirs) - set(mine))
                    print(f"    {k}:\n      - {mine}\n      + {theirs}")
            ops_b, ops_o = _ops(b.get("graph_text", [])), _ops(o.get("graph_text", []))
            if ops_b != ops_o:
                print(f"    ops only in the first: {dict(ops_b - ops_o)}; only in the second: {dict(ops_o - ops_b)}")
    return 1 if rows else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("out")
    r.add_argument("--backend", default="cpp")
    r.add_argument("--only")
    r.add_argument("--files", nargs="*")
    r.add_argument("--names", help="a file of program names (module::program), one a line")
    r.add_argument("--loop-benchmarks", choices=("also", "only"),
                   help="also (or only) benchmarks/loops.py's and time_loops.py's loops")
    d = sub.add_parser("diff")
    d.add_argument("base")
    d.add_argument("other")
    d.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args(argv)
    if a.cmd == "record":
        record(a.out, a.backend, a.only, a.files, a.names, a.loop_benchmarks)
        return 0
    return diff(a.base, a.other, a.verbose)


if __name__ == "__main__":
    sys.exit(main())
