"""The ``kiln`` command line: ``kiln explain SCRIPT [ARGS...]`` (also ``python -m kiln``).

It runs the script as ``__main__`` and then reports, for every function compiled with
``kiln.compile`` that was called: its graphs (ops), graph breaks with the user's source
line, guards, recompiles with the guard that failed, and compile time. The report goes to
stdout (``--json`` for machines; the script's own stdout is then sent to stderr so stdout
holds only JSON).

    $ kiln explain train.py --epochs 1
    $ python -m kiln explain --json train.py > report.json
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import runpy
import sys
import traceback
from typing import Any


def _function_report(cf: Any) -> dict:
    from .explain import build_explain_output
    code = cf.fn.__code__
    compilations = []
    for rec in cf.records:
        compilations.append({
            "function": rec.function,
            "resumes_at": list(rec.resumes_at),
            "ops": list(rec.ops),
            "graph": str(rec.graph) if rec.graph is not None else None,
            "graph_break": rec.graph_break.to_json() if rec.graph_break is not None else None,
            "guards": list(rec.guards),
            "recompile_reasons": list(rec.recompile_reasons),
            "dynamic_dims": list(rec.dynamic_dims),
            "compile_time_s": rec.compile_time_s,
        })
    summary = build_explain_output(cf.records)
    backend = cf.backend_name if isinstance(cf.backend_name, str) else getattr(
        cf.backend_name, "__name__", type(cf.backend_name).__name__)
    return {"name": cf.fn.__qualname__, "file": code.co_filename, "line": code.co_firstlineno,
            "backend": backend, "cache_entries": len(cf.cache_entries),
            "graph_count": summary.graph_count, "graph_break_count": summary.graph_break_count,
            "recompiles": sum(1 for r in cf.records if r.recompile_reasons),
            "uncompiled_calls": cf.calls_uncompiled,
            "breaks": [dict(b.to_json(), graph_before=g, resumes_at=r) for b, g, r in sorted(
                zip(summary.break_reasons, summary.break_graph_before, summary.break_resumes_at),
                key=lambda t: (t[0].filename, t[0].lineno or 0))],
            "kernels": _kernel_count(cf), "compile_time_s": summary.compile_time_s,
            "compilations": compilations}


def _kernel_count(cf) -> int:
    """Generated kernels behind a compiled function's cache entries (0 for backends that
    generate none): each entry's backend callable, or the forward/backward of its aot
    variants, carries the artifact it was built from."""
    total = 0
    for entry in cf.cache_entries:
        compiled = getattr(entry.check, "__globals__", {}).get("_kiln_graph")
        variants = getattr(compiled, "variants", None)
        callables = [compiled] if variants is None else [
            f for v in variants.values() for f in (v.forward, getattr(v, "backward_fn", None))]
        for fn in callables:
            artifact = getattr(fn, "kiln_artifact", None)
            total += len(getattr(artifact, "kernel_names", ()) or ())
    return total


def _human(report: dict) -> str:
    from .explain import op_summary
    lines = [f"kiln explain: {report['script']}  (exit status {report['exit_status']})",
             f"{len(report['functions'])} compiled function(s) called", ""]
    for fn in report["functions"]:
        lines.append(f"== {fn['name']}  ({fn['file']}:{fn['line']})")
        lines.append(f"   graphs: {fn['graph_count']}   graph breaks: {fn['graph_break_count']}   "
                     f"recompiles: {fn['recompiles']}   cache entries: {fn['cache_entries']}   "
                     f"kernels: {fn['kernels']} (backend {fn['backend']})   "
                     f"compile time: {fn['compile_time_s'] * 1000:.1f} ms")
        if fn["uncompiled_calls"]:
            lines.append(f"   calls run uncompiled past recompile_limit: {fn['uncompiled_calls']}")
        if fn["breaks"]:
            lines.append("   graph breaks, in source order:")
            for b in fn["breaks"]:
                before = f"graph {b['graph_before']}" if b["graph_before"] is not None else "no graph"
                after = ", ".join(f"line {n}" for n in b["resumes_at"]) or "nowhere (Python to the end)"
                lines.append(f"     {b['filename']}:{b['lineno']}  [{b['kind']}] {b['source']}")
                lines.append(f"         before: {before}; compiled again from: {after}")
        for i, comp in enumerate(fn["compilations"]):
            lines.append(f"   -- compilation {i}" + (f" ({comp['function']})" if comp["function"] else ""))
            for reason in comp["recompile_reasons"]:
                lines.append(f"      recompile: {reason}")
            brk = comp["graph_break"]
            if brk is not None:
                lines.append(f"      graph break [{brk['kind']}] at {brk['filename']}:{brk['lineno']}")
                lines.append(f"          {brk['source']}")
                lines.append(f"        {brk['reason']}")
                if brk["hint"]:
                    lines.append(f"        hint: {brk['hint']}")
            if comp["ops"]:
                lines.append(f"      graph: {len(comp['ops'])} ops: {op_summary(comp['ops'])}")
            if comp["dynamic_dims"]:
                lines.append(f"      dynamic dims: {', '.join(comp['dynamic_dims'])}")
            lines.append(f"      guards ({len(comp['guards'])}):")
            lines += [f"        {g}" for g in comp["guards"]]
        lines.append("")
    return "\n".join(lines)


def run_explain(script: str, script_args: list[str], as_json: bool) -> int:
    from .api import live_compiled_functions
    before = {id(cf) for cf in live_compiled_functions()}
    old_argv, old_path0 = sys.argv[:], sys.path[0] if sys.path else None
    sys.argv = [script] + list(script_args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    status = 0
    redirect = contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext()
    try:
        with redirect:
            runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        traceback.print_exc(file=sys.stderr)
        status = 1
    finally:
        sys.argv = old_argv
        if sys.path and old_path0 is not None:
            sys.path.pop(0)
    functions = [_function_report(cf) for cf in live_compiled_functions()
                 if cf.records and id(cf) not in before]
    report = {"script": script, "exit_status": status, "functions": functions}
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        sys.stdout.write(_human(report) + "\n")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kiln", description="kiln, a compiler for NumPy programs")
    sub = parser.add_subparsers(dest="command", required=True)
    explain = sub.add_parser("explain", help="run a script and report what kiln compiled")
    explain.add_argument("--json", action="store_true", help="print the report as JSON")
    explain.add_argument("script", help="the Python script to run")
    explain.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    ns = parser.parse_args(argv)
    if ns.command == "explain":
        if not os.path.exists(ns.script):
            parser.error(f"no such script: {ns.script}")
        return run_explain(ns.script, ns.args, ns.json)
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
