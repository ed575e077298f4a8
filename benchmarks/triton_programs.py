"""The program corpus (every tests/test_programs*.py) through backend="triton" on NumPy
arrays through Triton's interpreter, failures listed by cause; then the kernels it
generated compiled ahead of time for sm_90.

    python -m benchmarks.triton_programs run [FILES] [--out DIR] [--timeout S] [--only NAMES]
    python -m benchmarks.triton_programs ops [--out DIR]
    python -m benchmarks.triton_programs aot [--out DIR[,DIR...]] [--features]
    python -m benchmarks.triton_programs report [--out DIR[,DIR...]]

``run`` checks each program as its test file does (tests/test_programs.py
``check_program``: values, dtypes, shapes, raised exceptions, arguments after the call,
aliasing, no "build failed" fallback) at the tests' sizes; a gradient program
(tests/test_programs_grads*.py: ``(fn, args, argnums, ...)``) is checked as
``kiln.compile(lambda *a: kiln.value_and_grad(fn, argnums)(*a), backend="triton")``
against the same on the eager backend (the tape cannot follow some of them). Each file
runs in its own process (a crash loses one program, named ``crash``); a program gets
``--timeout`` seconds (SIGALRM). Results go to ``DIR/results.jsonl`` (one line per
program: file, name, cause, message, CPU seconds, how many Triton kernels it built, how
many graphs ran as NumPy programs instead, and what the builds raised) and every kernel
the backend built to ``DIR/kernels.jsonl`` (source file, name, signature and the GPU's
block sizes and warps), with Triton's modules under ``DIR/cache``. Run files in parallel
as separate ``run`` commands with their own ``--out``: on 2 loaded cores the corpus
(1170 programs) took about 20 minutes in two halves; stop 61's 1584 programs about
70 minutes in four parts at a load of 15-20.

``ops`` runs every op-table row (tests/ops/table.py, one example per row and dtype) as
tests/lowering/test_op_table_triton.py does, one line per row in ``DIR/results.jsonl``
(how many kernels it built, whether a graph ran as a NumPy program instead), its
kernels recorded for ``aot`` as the programs' are. Stop 58: 978 rows pass (~16 s of CPU,
a minute on 2 loaded cores); 407 built kernels (the rest are views, creations and extern
calls); ``aot``: their 258 distinct kernels compile for sm_90, no Triton warning.

``aot`` compiles each recorded kernel with ``triton.compile`` for
``GPUTarget("cuda", 90, 32)`` (a process of its own: Triton's interpreter and its compiler
do not share a process) and lists the failures; the interpreter is more permissive than
the compiler (dtypes in ``tl.where``, loop-carried types, constexprs). ``report`` prints
counts by cause and each failure's first line.
"""
from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import signal
import subprocess
import sys
import time
import traceback
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAUSES = ("pass", "value", "dtype", "shape", "layout", "exception", "no-exception", "fallback",
          "unsupported", "kiln-error", "timeout", "crash", "other")


def classify(exc: BaseException) -> str:
    """The cause of one program's failure, from what check_program raised."""
    msg = str(exc)
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, AssertionError):
        first = msg.strip().splitlines()[0] if msg.strip() else ""
        if "build failed" in msg:
            return "fallback"
        if ": raised " in first:
            cause = exc.__cause__
            if cause is not None and type(cause).__name__ in ("Unsupported", "NotImplementedError"):
                return "unsupported"
            if cause is not None and type(cause).__name__.endswith("KilnError"):
                return "kiln-error"
            return "exception"
        if "expected" in first and "got result" in first:
            return "no-exception"
        if ": expected " in first:
            return "exception"      # a different exception than NumPy's
        if ": dtype " in first:
            return "dtype"
        if ": shape " in first or ": len " in first:
            return "shape"
        if ": strides " in first or "alias" in first:
            return "layout"
        return "value"
    if type(exc).__name__ in ("Unsupported", "NotImplementedError"):
        return "unsupported"
    return "other"


def _check_grad(entry: tuple) -> None:
    import numpy as np

    import kiln
    from tests.test_programs import _check_same
    fn, args, argnums = entry[:3]
    has_aux = bool(entry[3]) if len(entry) > 3 else False
    rtol = entry[4] if len(entry) > 4 and entry[4] else 1e-7

    def fresh():
        return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]

    def in_compiled(*a):   # (as the gradient tests compile it: kiln.compile of
        return kiln.value_and_grad(fn, argnums, has_aux)(*a)   # value_and_grad(fn) breaks)
    want = kiln.compile(in_compiled, backend="eager")(*fresh())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = kiln.compile(in_compiled, backend="triton")(*fresh())
    failed = [str(w.message) for w in caught if "build failed" in str(w.message)]
    assert not failed, f"{fn.__name__}: {failed[0][:2000]}"

    def walk(g, w, where):
        if isinstance(w, (list, tuple)):
            assert type(g) is type(w) and len(g) == len(w), f"{where}: len/type differ"
            for i, (a, b) in enumerate(zip(g, w)):
                walk(a, b, f"{where}[{i}]")
        elif isinstance(w, (np.ndarray, np.generic)) and w.dtype.kind == "f":
            assert g.dtype == w.dtype, f"{where}: dtype {g.dtype} != {w.dtype}"
            assert g.shape == w.shape, f"{where}: shape {g.shape} != {w.shape}"
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-9, err_msg=where)
        else:
            _check_same(g, w, where)
    walk(got, want, f"{fn.__name__} value_and_grad")


def _record_kernels(out: str) -> None:
    """Every kernel the Triton loader installs, to ``out/kernels.jsonl``; per program, how
    many kernels and which graphs ran as NumPy programs instead (``_seen``)."""
    from kiln.runtime import triton_backend as tbk
    original, variant, fallback = (tbk.TritonLoader.install, tbk.compile_variant,
                                   tbk._NumpyFallback.program)

    def compile_variant(*args, **kwargs):
        try:
            return variant(*args, **kwargs)
        except Exception as e:
            _seen["why"].append(f"{type(e).__name__}: {str(e)[:300]}")
            raise

    def program(self, device):
        _seen["numpy"] += 1
        return fallback(self, device)

    def install(self, wmod, gen):
        original(self, wmod, gen)
        _seen["kernels"] += len(self.renderer.rendered)
        with open(os.path.join(out, "kernels.jsonl"), "a") as f:
            for name, rk in self.renderer.rendered.items():
                _, constexprs, warps = rk.config(False)
                f.write(json.dumps({"source": self.module.__file__, "name": name,
                                    "signature": rk.signature, "constexprs": constexprs,
                                    "num_warps": warps, "program": _current[0]}) + "\n")
    tbk.TritonLoader.install = install
    tbk.compile_variant = compile_variant
    tbk._NumpyFallback.program = program


_current = [""]
_seen: dict = {}


def _alarm(signum, frame):
    raise TimeoutError("program timed out")


def run_file(path: str, out: str, timeout: float, only: set) -> None:
    """Check every program of one test file (this process)."""
    import importlib
    sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]
    from kiln.config import config
    config.triton_interpret = True
    _record_kernels(out)
    from tests.test_programs import check_program
    modname = "tests." + os.path.splitext(os.path.basename(path))[0]
    mod = importlib.import_module(modname)
    programs = getattr(mod, "PROGRAMS", {})
    signal.signal(signal.SIGALRM, _alarm)
    results = os.path.join(out, "results.jsonl")
    for name, entry in programs.items():
        if only and name not in only:
            continue
        _current[0] = f"{os.path.basename(path)}::{name}"
        with open(os.path.join(out, f"current.{os.getpid()}"), "w") as f:
            f.write(_current[0])
        _seen.update(kernels=0, numpy=0, why=[])
        start = time.process_time()
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            if len(entry) == 2:
                check_program(entry[0], entry[1], "triton")
            else:
                _check_grad(entry)
            cause, msg = "pass", ""
        except BaseException as e:   # noqa: BLE001 - every failure is a row of the report
            if isinstance(e, KeyboardInterrupt):
                raise
            cause = classify(e)
            inner = e.__cause__ or e
            msg = f"{type(inner).__name__}: {str(e)[:1500]}"
            if cause in ("other", "exception", "kiln-error", "unsupported"):
                msg += "\n" + "".join(traceback.format_exception(inner)[-6:])[-2500:]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        with open(results, "a") as f:
            f.write(json.dumps({"file": os.path.basename(path), "name": name, "cause": cause,
                                "message": msg, "cpu_s": round(time.process_time() - start, 2),
                                "kernels": _seen["kernels"], "numpy_programs": _seen["numpy"],
                                "why": sorted(set(_seen["why"]))}) + "\n")
    if os.path.exists(os.path.join(out, f"current.{os.getpid()}")):
        os.remove(os.path.join(out, f"current.{os.getpid()}"))


def run(files: list, out: str, timeout: float, only: set) -> None:
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, KILN_CACHE_DIR=os.path.abspath(os.path.join(out, "cache")),
               KILN_TRITON_INTERPRET="1", PYTHONPATH=ROOT)
    for path in files:
        cmd = [sys.executable, "-m", "benchmarks.triton_programs", "_file", path, "--out", out,
               "--timeout", str(timeout)] + (["--only", ",".join(only)] if only else [])
        start = time.time()
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        _, stderr = proc.communicate()
        if proc.returncode != 0:
            current = glob.glob(os.path.join(out, f"current.{proc.pid}"))
            name = open(current[0]).read() if current else "?"
            with open(os.path.join(out, "results.jsonl"), "a") as f:
                f.write(json.dumps({"file": os.path.basename(path), "name": name.split("::")[-1],
                                    "cause": "crash", "message": f"rc {proc.returncode}: "
                                    f"{stderr[-1500:]}", "cpu_s": 0}) + "\n")
        print(f"{path}: {time.time() - start:.0f} s (rc {proc.returncode})", flush=True)


def features(k: dict, source: str) -> str:
    """What a recorded kernel asks of Triton's compiler: the ``tl.``/``libdevice.``
    functions and prelude helpers it calls, its casts and typed constants, whether it
    loops, its parameter types and warps (sizes, offsets and names left out)."""
    import re
    start = source.index(f"def {k['name']}(")
    end = source.find("@triton.jit", start)
    body = "\n".join(line for line in source[start:end if end > 0 else None].splitlines()
                     if not line.strip().startswith("#"))
    found = set(re.findall(r"(?:tl|libdevice)\.\w+", body))
    found |= set(re.findall(r"\bkiln_\w+(?=\()", body)) - {k["name"]}
    found |= set(re.findall(r"\.to\(tl\.\w+\)", body))
    found |= {"full " + t for t in re.findall(r"tl\.full\(\[[^\]]*\], [^,]+, (tl\.\w+)\)", body)}
    found |= {"loop" if "for " in body else "no loop", f"warps {k['num_warps']}",
              "params " + ",".join(sorted(set(k["signature"].values())))}
    return json.dumps(sorted(found))


def aot(out: str, by_features: bool = False) -> dict:
    """Compile every recorded kernel for sm_90 (``by_features``: one kernel per
    :func:`features`, the corpus's thousands of kernels in a few hundred compiles);
    counts and failures."""
    out, *more = out.split(",")
    os.environ.setdefault("KILN_CACHE_DIR", os.path.abspath(os.path.join(out, "cache")))
    sys.path.insert(0, ROOT)
    from kiln.runtime import triton_build as tb
    seen, counts, failures, warned = set(), collections.Counter(), [], []
    for k in _lines(",".join([out, *more]), "kernels.jsonl"):
        key = (k["source"], k["name"], json.dumps(k["constexprs"], sort_keys=True))
        if by_features:
            with open(k["source"]) as f:
                key = features(k, f.read())
        if key in seen:
            continue
        seen.add(key)
        if len(seen) % 50 == 0:
            print(f"{len(seen)} kernels: {dict(counts)}", flush=True)
        source = open(k["source"]).read()
        mod = tb.load_module(source, os.path.basename(k["source"]).rsplit("_", 1)[0], interpret=False)
        try:
            # every pointer 16-byte aligned, as CuPy's own allocations are (views at an
            # offset compile without the attribute, a subset of this code)
            aligned = tuple(n for n, ty in k["signature"].items() if ty.startswith("*"))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                tb.compile_kernel(getattr(mod, k["name"]), k["signature"], k["constexprs"],
                                  num_warps=k["num_warps"], aligned=aligned)
            counts["compiled"] += 1
            if caught:   # Triton's deprecations: errors in a later release
                counts["warned"] += 1
                warned.append({**k, "warnings": sorted({str(w.message) for w in caught})})
                print(f"  warned: {k['program']} {k['name']}: {warned[-1]['warnings'][0][:200]}", flush=True)
        except Exception as e:   # noqa: BLE001 - every failure is a row of the report
            counts["failed"] += 1
            failures.append({**k, "error": f"{type(e).__name__}: {str(e)[-1500:]}"})
            print(f"  failed: {k['program']} {k['name']}: {failures[-1]['error'][-300:]}", flush=True)
    with open(os.path.join(out, "aot.json"), "w") as f:
        json.dump({"counts": counts, "failures": failures, "warned": warned}, f, indent=1)
    print(f"AOT sm_90: {counts['compiled']} compiled ({counts['warned']} with Triton warnings), "
          f"{counts['failed']} failed ({len(seen)} distinct kernels)")
    for w in warned:
        print(f"  warned: {w['program']} {w['name']}: {'; '.join(w['warnings'])[:300]}")
    for fail in failures:
        print(f"  {fail['program']} {fail['name']}: {fail['error'].strip().splitlines()[-1][:300]}")
    return counts


def _lines(out: str, name: str) -> list:
    """The JSON lines of ``name`` in each of the comma-separated folders ``out``."""
    return [json.loads(line) for d in out.split(",") for line in open(os.path.join(d, name))]


def report(out: str) -> None:
    rows = _lines(out, "results.jsonl")
    counts = collections.Counter(r["cause"] for r in rows)
    print(f"{len(rows)} programs: " + ", ".join(f"{c} {counts[c]}" for c in CAUSES if counts[c]))
    ok = [r for r in rows if r["cause"] == "pass"]
    print(f"of those passing: {sum(1 for r in ok if r.get('kernels'))} ran Triton kernels, "
          f"{sum(1 for r in ok if r.get('numpy_programs'))} ran a graph as a NumPy program "
          f"(reasons below), {sum(1 for r in ok if not r.get('kernels'))} built no kernel")
    why = collections.Counter(w[:100] for r in rows for w in r.get("why", []))
    for reason, n in why.most_common():   # (a dynamic build that raised is rebuilt per size)
        print(f"  [a build raised x{n}] {reason}")
    for cause in CAUSES[1:]:
        for r in rows:
            if r["cause"] == cause:
                first = r["message"].strip().splitlines()[0][:240] if r["message"] else ""
                print(f"  [{cause}] {r['file']}::{r['name']}: {first}")


def run_ops(out: str) -> None:
    """Every op-table row through the interpreter (this process), kernels recorded."""
    sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]
    os.makedirs(out, exist_ok=True)
    os.environ.setdefault("KILN_CACHE_DIR", os.path.abspath(os.path.join(out, "cache")))
    from kiln.config import config
    config.triton_interpret = True
    _record_kernels(out)
    from lowering.test_op_table_triton import test_triton_backend_matches_numpy as check
    from ops.test_op_table import by_dtype
    counts = collections.Counter()
    with open(os.path.join(out, "results.jsonl"), "a") as results:
        for param in by_dtype("graph"):
            row, dtype = param.values
            _current[0] = param.id
            _seen.update(kernels=0, numpy=0, why=[])
            start = time.process_time()
            try:
                check(row, dtype)    # (hypothesis: one example, derandomized)
                cause, msg = "pass", ""
            except Exception as e:   # noqa: BLE001 - every failure is a row of the report
                cause, msg = "value", f"{type(e).__name__}: {str(e)[:1500]}"
            counts[cause] += 1
            counts["built kernels"] += bool(_seen["kernels"])
            counts["ran a NumPy program"] += bool(_seen["numpy"])
            results.write(json.dumps({"file": "ops", "name": param.id, "cause": cause, "message": msg,
                                      "cpu_s": round(time.process_time() - start, 2),
                                      "kernels": _seen["kernels"], "numpy_programs": _seen["numpy"],
                                      "why": sorted(set(_seen["why"]))}) + "\n")
    print(f"{sum(counts[c] for c in CAUSES)} op rows: {dict(counts)}")


def main(argv: list | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cmd", choices=["run", "ops", "aot", "report", "_file"])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--out", default="triton_programs_out")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--only", default="")
    ap.add_argument("--features", action="store_true",
                    help="aot: one kernel per set of features (calls, casts, loop, parameter types)")
    a = ap.parse_args(argv)
    only = set(filter(None, a.only.split(",")))
    if a.cmd == "_file":
        return run_file(a.files[0], a.out, a.timeout, only)
    if a.cmd == "run":
        files = a.files or sorted(glob.glob(os.path.join(ROOT, "tests", "test_programs*.py")))
        run(files, a.out, a.timeout, only)
        return report(a.out)
    if a.cmd == "ops":
        run_ops(a.out)
        return report(a.out)
    if a.cmd == "aot":
        return aot(a.out, a.features)
    return report(a.out)


if __name__ == "__main__":
    main()
