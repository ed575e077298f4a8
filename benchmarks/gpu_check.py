"""One-shot GPU check of kiln's Triton backend (under 5 minutes on one H200).

Run from the repository root on a machine with a CUDA GPU, triton and CuPy (torch
optional)::

    python benchmarks/gpu_check.py --out gpu_check_out     # --budget 420 (seconds)

(benchmarks/gpu_check.sh: the same as one prepared command on a GPU machine without
network.) It exits with status 1, naming what failed or did not run, when any check
fails. Each section is guarded (one that raises is recorded, the others run), the JSON is
rewritten after each, and a section the time budget interrupts or never reaches is
recorded so. ``--dry-run`` runs the
same script without a GPU: NumPy arrays through Triton's interpreter at small sizes (a
NumPy stand-in for the ``cupy`` module, benchmarks/gpu_check_capture.py), which checks
the script itself; its timings mean nothing.

It checks, on CuPy arrays against NumPy on host copies: every scalar function of the
Triton table for float32/float64/int64/uint8/bool, a pointwise kernel over more than 2**31
int8 elements (int64 indexing), reductions on the persistent and the looped path (NaN and
tie rules), softmax and layernorm; then measures a fused pointwise chain's bandwidth
against a device-to-device copy, softmax and layernorm against CuPy eager and (when torch
is installed, in its own process) torch.compile, cold and warm compile times, and µs per
call on 1K elements. Writes ``gpu_check.json`` and ``gpu_check.md`` (a table) to --out.
Most kernels are built by the renderer from hand-written kernel plans (tests/lowering/
triton_kit.py), which bypass capture; a last section runs a traced softmax through the
real lowering (``triton_backend``) and ``kiln.compile(backend="triton")`` on CuPy arrays
end to end, and reports what happened. The "capture" section (gpu_check_capture.py)
runs user functions through kiln.compile's default backend on CuPy arrays: compile counts,
guards on type and device, a graph break run eagerly on CuPy, the errors CuPy raises, a
value_and_grad training step, a > 2**31-element int8 function, cache-hit µs. See
docs/triton.md.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
INTERPRET = False   # --dry-run: kernels through Triton's interpreter on NumPy arrays


def main(argv: list | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="gpu_check_out")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU: NumPy arrays through Triton's interpreter, tiny sizes")
    ap.add_argument("--no-torch", action="store_true",
                    help="skip the torch.compile comparison (its own process, up to 150 s)")
    ap.add_argument("--budget", type=float, default=420.0,
                    help="seconds for the whole run: a section that would start later is skipped, "
                         "one still running then is interrupted (default 420)")
    opts = ap.parse_args(argv)
    os.makedirs(opts.out, exist_ok=True)
    t0 = time.perf_counter()
    res: dict = {"device": "?", "triton": "?", "cupy": "?", "checks": {}, "perf": {},
                 "budget_s": opts.budget}
    checks, perf = res["checks"], res["perf"]

    def save() -> None:   # after every section: a run cut short keeps what it found
        res["seconds"] = round(time.perf_counter() - t0, 1)
        with open(os.path.join(opts.out, "gpu_check.json"), "w") as f:
            json.dump(res, f, indent=2, default=str)
    try:
        cupy = setup(opts, res)
    except Exception as e:   # nothing can run; say why in the JSON and the table
        import traceback
        checks["setup"] = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-2000:]}
        cupy = None
    save()
    from benchmarks.gpu_check_capture import capture_checks
    # correctness first (kiln.compile end to end included), timings after
    sections = [
        (checks, "op table", lambda: op_table(cupy)),
        (checks, "int8 > 2**31 elements", lambda: big_int8(cupy, opts.quick)),
        (checks, "reductions", lambda: reductions(cupy)),
        (checks, "softmax/layernorm", lambda: rows_correct(cupy)),
        (checks, "kiln.compile end to end", lambda: end_to_end(cupy)),
        (checks, "capture", lambda: capture_checks(cupy, not INTERPRET, opts.quick)),
        (perf, "bandwidth", lambda: bandwidth(cupy, opts.quick)),
        (perf, "rows", lambda: rows_speed(cupy, opts.quick, not opts.no_torch,
                                          left=lambda: opts.budget - (time.perf_counter() - t0))),
        (perf, "compile", lambda: compile_times(cupy)),
        (perf, "per call", lambda: per_call(cupy))]
    for into, name, fn in sections if cupy is not None else []:
        left = opts.budget - (time.perf_counter() - t0)
        if left < 1:
            into[name] = {"skipped": f"the time budget ({opts.budget:.0f} s, --budget) ran out"}
        else:
            section(into, name, fn, left)
            free_device_memory(cupy)
        save()
    table = render_table(res)
    with open(os.path.join(opts.out, "gpu_check.md"), "w") as f:
        f.write(table)
    sys.stderr.write(table)
    failed = [name for name, val in checks.items() if "error" in val or not val.get("ok", False)]
    failed += [name for name, val in perf.items() if "error" in val or val.get("correct") is False
               or "skipped" in val]
    if failed:
        sys.stderr.write(f"\nFAILED or not run: {', '.join(failed)} (details in {opts.out}/gpu_check.json)\n")
        sys.exit(1)
    sys.stderr.write("\nall checks passed\n")


def setup(opts: Any, res: dict) -> Any:
    """The ``cupy`` module the sections use (or the dry run's NumPy stand-in), the
    configuration, and the device, Triton and CuPy versions in ``res``."""
    from kiln.config import config
    config.cache_dir = tempfile.mkdtemp(prefix="kiln_gpu_check_")
    global INTERPRET
    if opts.dry_run:
        from benchmarks.gpu_check_capture import HostXP
        INTERPRET = config.triton_interpret = opts.quick = True
        cupy = HostXP()
    else:
        try:
            import cupy
        except ImportError as e:
            raise RuntimeError(f"CuPy does not import ({e}); the check runs kernels on CuPy arrays "
                               f"(pip install cupy-cuda12x), or try --dry-run without a GPU") from e
    import triton
    res.update(device=cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
               triton=triton.__version__, cupy=cupy.__version__)
    return cupy


def free_device_memory(cupy) -> None:
    """Give CuPy's pooled blocks back (the int8 sections hold gigabytes; torch's process
    runs beside this one)."""
    pool = getattr(cupy, "get_default_memory_pool", None)
    if pool is not None and not INTERPRET:
        pool().free_all_blocks()


class SectionTimeout(Exception):
    """A section still running when the time budget ran out (SIGALRM)."""


def _out_of_time(signum, frame):
    raise SectionTimeout("the time budget ran out during this section (--budget)")


def section(into: dict, name: str, fn, left: float = 0.0) -> None:
    """``into[name] = fn()``, or what it raised; ``left``: seconds before it is interrupted
    (SIGALRM in the main thread; a kernel launch or a device wait finishes first)."""
    start = time.perf_counter()
    alarm = left > 0 and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if alarm:
        old = signal.signal(signal.SIGALRM, _out_of_time)
        signal.setitimer(signal.ITIMER_REAL, left)
    try:
        into[name] = fn()
    except Exception as e:   # one failing section must not hide the others
        import traceback
        into[name] = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-2000:]}
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    if not isinstance(into[name], dict):
        into[name] = {"error": f"the section returned {into[name]!r}"}
    into[name] = dict(into[name], seconds=round(time.perf_counter() - start, 2))


# -- helpers: run a hand-built kernel plan on CuPy arrays ------------------------------

def launch(k, local, inputs: dict, cupy):
    from kiln.lowering.triton import render_kernel, render_module
    from kiln.runtime import triton_build as tb
    rk = render_kernel(k, local)
    mod = tb.load_module(render_module("gpu_check", [rk]), k.name, interpret=INTERPRET)
    grid, constexprs, warps = rk.config(INTERPRET)
    kern = tb.TritonKernel(mod, k.name, rk.signature, constexprs, warps, interpret=INTERPRET)
    outs = {b.name: cupy.empty(b.shape, b.dtype) for b in rk.buffers if b.name in rk.written}
    args = [inputs.get(b.name, outs.get(b.name)) for b in rk.buffers]
    return rk, kern, grid, args, outs


def op_table(cupy) -> dict:
    from kiln.lowering.scheduler import Frame
    from tests.lowering.test_triton_ops import _cases, _reference, _values, _where
    from tests.lowering.triton_kit import call, inp, kernel, node
    wrong, count = [], 0
    for dtype in ["float32", "float64", "int64", "uint8", "bool"]:
        dt = np.dtype(dtype)
        rng = np.random.default_rng(1)
        host = {k: _values(dt, rng) for k in "abc"}
        if dt.kind in "iu":
            host["b"][:8] = [0, -1 if dt.kind == "i" else 1, 3, 7, 31, 64, 2, 5]
        vals = [inp(k, v) for k, v in host.items()]
        members = []
        cases = _cases(dt)
        for i, (fn, nin, out) in enumerate(cases):
            if fn == "where":    # (as tests/lowering/test_triton_ops.py builds it)
                value = call(fn, dt, *vals, out=dt)
                value.fn = _where(vals, dt)
            else:
                value = call(fn, dt, *vals[:nin], out=out)
            members.append((node(f"o{i}", value), "row"))
        k = kernel(f"kiln_ops_{dtype}", Frame((len(host["a"]),)), [("loop", members)])
        rk, kern, grid, args, outs = launch(k, {}, {n: cupy.asarray(v) for n, v in host.items()}, cupy)
        kern(grid, *args)
        for i, (fn, nin, out) in enumerate(cases):
            count += 1
            want = _reference(fn, [host["a"], host["b"], host["c"]][:nin if fn != "where" else 3])
            got = cupy.asnumpy(outs[f"o{i}"])
            tol = 4e-6 if dt == np.float32 else 1e-12
            ok = (np.allclose(got, want, rtol=tol, atol=tol if fn in ("sin", "cos", "tan") else 0, equal_nan=True)
                  if want.dtype.kind == "f" else np.array_equal(got, want))
            if not ok:
                bad = np.flatnonzero(~np.isclose(got, want, rtol=tol, equal_nan=True)) if want.dtype.kind == "f" \
                    else np.flatnonzero(got != want)
                wrong.append(f"{dtype} {fn}: at {bad[:3].tolist()} got {got[bad[:3]].tolist()} "
                             f"want {want[bad[:3]].tolist()}")
    return {"ok": not wrong, "functions": count, "wrong": wrong}


def big_int8(cupy, quick: bool) -> dict:
    from kiln.lowering.scheduler import Frame
    from tests.lowering.triton_kit import call, inp, kernel, node
    n = (1 << 12) + 5 if INTERPRET else (1 << 20) if quick else (1 << 31) + 4096
    from benchmarks.gpu_check_capture import int8_ramp
    x = int8_ramp(cupy, n)
    X = inp("x", _stand_in((n,), np.int8))
    k = kernel("kiln_fused_add_big_0", Frame((n,)), [("loop", [(node("buf0", call("add", np.int8, X, 3)), "row")])])
    rk, kern, grid, args, outs = launch(k, {}, {"x": x}, cupy)
    kern(grid, *args)
    out = outs["buf0"]
    idx = np.array([0, 1, n // 2, n - 4097, n - 2, n - 1])
    got = cupy.asnumpy(out[cupy.asarray(idx)])
    want = ((idx % 256).astype(np.int64).astype(np.int8) + np.int8(3)).astype(np.int8)
    mismatches = int(cupy.count_nonzero(out != (x + cupy.int8(3))))
    return {"ok": bool(np.array_equal(got, want)) and mismatches == 0 and rk.int64 == (n >= 1 << 31),
            "elements": n, "int64_indexing": rk.int64, "mismatches": mismatches}


def reductions(cupy) -> dict:
    from kiln.lowering.scheduler import Frame
    from tests.lowering.triton_kit import inp, kernel, reduction
    wrong = []
    rows = 3 if INTERPRET else 64       # (rows 1 and 2 hold the NaN and tie cases)
    for cols in (7, 1100) if INTERPRET else (7, 1000, 5000, 100_000):   # persistent, looped
        for combine in ("sum", "prod", "max", "min", "argmax", "argmin"):
            rng = np.random.default_rng(cols)
            x = rng.standard_normal((rows, cols))
            if combine == "prod":
                x = 1 + x * 1e-4
            x[1, 5] = x[1, 6] = np.nan
            x[2, 3] = x[2, 4] = x[2].max() + 1
            x[2, 1] = x[2, 2] = x[2].min() - 1
            arg = combine.startswith("arg")
            r = reduction("buf0", inp("x", x), (1,), combine, (rows,), np.int64 if arg else x.dtype, x.dtype)
            k = kernel(f"kiln_red_{combine}_{cols}", Frame(x.shape, (1,)), [("loop", [(r, "reduce")])])
            rk, kern, grid, args, outs = launch(k, {}, {"x": cupy.asarray(x)}, cupy)
            kern(grid, *args)
            got, want = cupy.asnumpy(outs["buf0"]), getattr(np, combine)(x, axis=1)
            ok = np.array_equal(got, want) if arg else np.allclose(got, want, rtol=1e-10, equal_nan=True)
            if not ok:
                wrong.append(f"{combine} cols={cols} persistent={rk.persistent}")
    return {"ok": not wrong, "wrong": wrong}


def _stand_in(shape, dtype):
    """A C-contiguous array of ``shape`` that owns one element: plans read only its layout."""
    dt = np.dtype(dtype)
    strides = tuple(int(np.prod(shape[i + 1:])) * dt.itemsize for i in range(len(shape)))
    return np.lib.stride_tricks.as_strided(np.zeros(1, dt), shape, strides)


def _softmax_plan(shape, dtype=np.float32):
    from tests.lowering.test_triton_kernels import _softmax
    from kiln.lowering.triton import fit_locals
    k, local = _softmax(_stand_in(shape, dtype),
                        f"kiln_softmax_{shape[0]}x{shape[1]}")
    return k, fit_locals([k], local)


def _layernorm_plan(shape):
    from kiln.lowering.loop_ir import BufferValue
    from kiln.lowering.scheduler import Frame
    from tests.lowering.triton_kit import call, inp, kernel, node, reduction
    rows, n = shape
    X = inp("x", _stand_in(shape, np.float32))
    f32 = np.float32
    s = reduction("buf0", X, (1,), "sum", (rows, 1), f32, f32)
    d = call("subtract", f32, X, call("true_divide", f32, BufferValue.whole(s.buf), float(n)))
    sq = reduction("buf1", call("multiply", f32, d, d), (1,), "sum", (rows, 1), f32, f32)
    inv = call("true_divide", f32, 1.0, call("sqrt", f32, call("add", f32, call(
        "true_divide", f32, BufferValue.whole(sq.buf), float(n)), 1e-5)))
    o = node("buf2", call("multiply", f32, d, inv))
    return kernel(f"kiln_layernorm_{rows}x{n}", Frame(shape, (1,)),
                  [("loop", [(s, "reduce")]), ("loop", [(sq, "reduce")]), ("loop", [(o, "row")])]), \
        {"buf0": "scalar", "buf1": "scalar"}


def rows_correct(cupy) -> dict:
    out = {}
    for shape in [(2, 100), (2, 1100)] if INTERPRET else [(512, 1000), (64, 20000)]:
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        k, local = _softmax_plan(shape)
        rk, kern, grid, args, outs = launch(k, local, {"x": cupy.asarray(x)}, cupy)
        kern(grid, *args)
        e = np.exp(x - x.max(1, keepdims=True))
        out[f"softmax {shape}"] = bool(np.allclose(cupy.asnumpy(outs["buf3"]), e / e.sum(1, keepdims=True),
                                                   rtol=1e-5, atol=1e-8))
        k, local = _layernorm_plan(shape)
        rk, kern, grid, args, outs = launch(k, local, {"x": cupy.asarray(x)}, cupy)
        kern(grid, *args)
        want = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
        out[f"layernorm {shape}"] = bool(np.allclose(cupy.asnumpy(outs["buf2"]), want, rtol=1e-4, atol=1e-5))
    return dict(out, ok=all(out.values()))


def _time(cupy, fn, reps=20) -> float:
    """Median seconds of ``fn()`` on the current stream (CUDA events)."""
    reps = 2 if INTERPRET else reps
    fn()
    cupy.cuda.get_current_stream().synchronize()
    times = []
    for _ in range(reps):
        a, b = cupy.cuda.Event(), cupy.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(cupy.cuda.get_elapsed_time(a, b) / 1e3)
    return float(np.median(times))


def bandwidth(cupy, quick: bool) -> dict:
    from kiln.lowering.scheduler import Frame
    from tests.lowering.triton_kit import call, inp, kernel, node
    n = (1 << 12) if INTERPRET else (1 << 20) if quick else (1 << 26)
    f32 = np.float32
    stand = {k: inp(k, _stand_in((n,), f32)) for k in "abc"}
    a, b, c = stand["a"], stand["b"], stand["c"]
    chain = call("subtract", f32, call("multiply", f32, call("maximum", f32, call(
        "add", f32, call("multiply", f32, a, b), c), 0.0), 0.5), a)
    k = kernel("kiln_fused_multiply_add_maximum_multiply_0", Frame((n,)), [("loop", [(node("buf0", chain), "row")])])
    dev = {k: cupy.random.standard_normal(n, dtype=f32) for k in "abc"}
    rk, kern, grid, args, outs = launch(k, {}, dev, cupy)
    t_kiln = _time(cupy, lambda: kern(grid, *args))
    dst = cupy.empty_like(dev["a"])
    t_copy = _time(cupy, lambda: cupy.copyto(dst, dev["a"]))
    t_cupy = _time(cupy, lambda: cupy.maximum(dev["a"] * dev["b"] + dev["c"], 0) * 0.5 - dev["a"])
    want = np.maximum(cupy.asnumpy(dev["a"]) * cupy.asnumpy(dev["b"]) + cupy.asnumpy(dev["c"]), 0) * 0.5 \
        - cupy.asnumpy(dev["a"])
    gbs = 16 * n / t_kiln / 1e9
    copy_gbs = 8 * n / t_copy / 1e9
    return {"elements": n, "kiln_GBps": round(gbs, 1), "copy_GBps": round(copy_gbs, 1),
            "fraction_of_copy": round(gbs / copy_gbs, 3), "cupy_eager_ms": round(t_cupy * 1e3, 3),
            "kiln_ms": round(t_kiln * 1e3, 3),
            "correct": bool(np.allclose(cupy.asnumpy(outs["buf0"]), want, rtol=1e-6, atol=1e-6)),
            "config": rk.config()}


def rows_speed(cupy, quick: bool, torch: bool = True, left=lambda: 150.0) -> dict:
    shapes = [(2, 128)] if INTERPRET else [(4096, 1024), (1024, 8192)] if not quick else [(256, 1024)]
    out = {}
    for shape in shapes:
        x = cupy.random.standard_normal(shape, dtype=np.float32)
        k, local = _softmax_plan(shape)
        rk, kern, grid, args, _ = launch(k, local, {"x": x}, cupy)
        t_sm = _time(cupy, lambda: kern(grid, *args))

        def eager_sm():
            e = cupy.exp(x - x.max(1, keepdims=True))
            return e / e.sum(1, keepdims=True)
        k2, local2 = _layernorm_plan(shape)
        rk2, kern2, grid2, args2, _ = launch(k2, local2, {"x": x}, cupy)
        t_ln = _time(cupy, lambda: kern2(grid2, *args2))

        def eager_ln():
            m = x.mean(1, keepdims=True)
            return (x - m) / cupy.sqrt(x.var(1, keepdims=True) + 1e-5)
        out[f"{shape}"] = {"softmax_us": round(t_sm * 1e6, 1), "softmax_cupy_us": round(_time(cupy, eager_sm) * 1e6, 1),
                           "layernorm_us": round(t_ln * 1e6, 1), "layernorm_cupy_us": round(_time(cupy, eager_ln) * 1e6, 1),
                           "softmax_persistent": rk.persistent}
    # (torch's own process gets at most 150 s, and what the budget leaves but 20 s)
    torch_res = _torch_compile_rows(shapes, min(150.0, left() - 20)) if torch and not INTERPRET else {}
    for key, val in torch_res.items():
        out.setdefault(key, {}).update(val)
    return out


TORCH_SCRIPT = r'''
import json, sys, torch
shapes = json.loads(sys.argv[1]); out = {}
sm = torch.compile(lambda x: torch.softmax(x, 1))
ln = torch.compile(lambda x: torch.nn.functional.layer_norm(x, x.shape[1:], eps=1e-5))
def t(fn, x):
    for _ in range(3): fn(x)
    torch.cuda.synchronize(); ts = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(x); b.record(); b.synchronize(); ts.append(a.elapsed_time(b) * 1e3)
    ts.sort(); return ts[len(ts) // 2]
for s in shapes:
    x = torch.randn(*s, device="cuda")
    out[str(tuple(s))] = {"softmax_torch_compile_us": round(t(sm, x), 1), "layernorm_torch_compile_us": round(t(ln, x), 1)}
print(json.dumps(out))
'''


def _torch_compile_rows(shapes, timeout: float = 150.0) -> dict:
    try:
        import importlib.util
        if importlib.util.find_spec("torch") is None:
            return {}
        if timeout < 10:
            return {"torch": {"skipped": "the time budget left no time for torch.compile"}}
        proc = subprocess.run([sys.executable, "-c", TORCH_SCRIPT, json.dumps(shapes)], capture_output=True,
                              text=True, timeout=timeout)
        return json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else \
            {"torch": {"error": proc.stderr[-800:]}}
    except Exception as e:
        return {"torch": {"error": repr(e)}}


def compile_times(cupy) -> dict:
    from kiln.runtime import triton_build as tb
    shape = (2, 77) if INTERPRET else (128, 777)
    k, local = _softmax_plan(shape)
    start = time.perf_counter()
    rk, kern, grid, args, _ = launch(k, local, {"x": cupy.zeros(shape, np.float32)}, cupy)
    kern(grid, *args)
    cupy.cuda.get_current_stream().synchronize()
    cold = time.perf_counter() - start
    tb.clear()      # forget the process caches: the next compile reads Triton's disk cache
    start = time.perf_counter()
    rk, kern, grid, args, _ = launch(k, local, {"x": cupy.zeros(shape, np.float32)}, cupy)
    kern(grid, *args)
    cupy.cuda.get_current_stream().synchronize()
    return {"cold_s": round(cold, 3), "warm_s": round(time.perf_counter() - start, 3)}


def per_call(cupy) -> dict:
    from kiln.lowering.scheduler import Frame
    from tests.lowering.triton_kit import call, inp, kernel, node
    x = cupy.ones(1024, np.float32)
    k = kernel("kiln_fused_sin_0", Frame((1024,)), [("loop", [(node("buf0", call("sin", np.float32, inp("x", np.ones(1024, np.float32)))), "row")])])
    rk, kern, grid, args, _ = launch(k, {}, {"x": x}, cupy)
    kern(grid, *args)
    cupy.cuda.get_current_stream().synchronize()
    reps = 20 if INTERPRET else 2000
    start = time.perf_counter()
    for _ in range(reps):
        kern(grid, *args)
    cupy.cuda.get_current_stream().synchronize()
    t_kiln = (time.perf_counter() - start) / reps
    start = time.perf_counter()
    for _ in range(reps):
        cupy.sin(x)
    cupy.cuda.get_current_stream().synchronize()
    return {"kiln_launch_us": round(t_kiln * 1e6, 2), "cupy_sin_us": round((time.perf_counter() - start) / reps * 1e6, 2)}


def end_to_end(cupy) -> dict:
    import kiln
    from kiln.ir import trace
    from kiln.ops import F, TensorMeta
    from kiln.runtime.triton_backend import triton_backend
    out: dict = {}
    # The real lowering and scheduler on CuPy arrays (capture bypassed: a traced graph).
    x = cupy.random.standard_normal((2, 100) if INTERPRET else (256, 1000), dtype=np.float32)

    def softmax(x):
        e = F.exp(F.subtract(x, F.max(x, axis=1, keepdims=True)))
        return F.true_divide(e, F.sum(e, axis=1, keepdims=True))
    try:
        g = trace(softmax, [TensorMeta(x.shape, x.dtype)], ["x"])
        got = triton_backend(g, [x])(x)[0]
        xh = cupy.asnumpy(x)
        e = np.exp(xh - xh.max(1, keepdims=True))
        out["traced softmax"] = {"ok": bool(np.allclose(cupy.asnumpy(got), e / e.sum(1, keepdims=True),
                                                        rtol=1e-5, atol=1e-8)), "type": type(got).__name__}
    except Exception as e:
        out["traced softmax"] = {"ok": False, "error": f"{type(e).__name__}: {e}"}

    def f(x, y):
        return np.maximum(np.sin(x) * y, 0.0).sum(axis=1)
    x = cupy.random.standard_normal((4, 100) if INTERPRET else (64, 100), dtype=np.float32)
    y = cupy.random.standard_normal(100, dtype=np.float32)
    try:
        got = kiln.compile(f, backend="triton")(x, y)
        want = f(cupy.asnumpy(x), cupy.asnumpy(y))
        out["kiln.compile"] = {"ok": bool(np.allclose(cupy.asnumpy(got), want, rtol=1e-5)),
                               "type": type(got).__name__,
                               "graphs": kiln.explain(f)(x, y).graph_count}
    except Exception as e:
        out["kiln.compile"] = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    out["ok"] = all(v.get("ok") for v in out.values() if isinstance(v, dict))
    return out


def render_table(res: dict) -> str:
    lines = [f"# kiln GPU check: {res['device']} (triton {res['triton']}, cupy {res['cupy']}), "
             f"{res.get('seconds', 0):.0f} s", "", "| check | result |", "|---|---|"]
    for name, val in res["checks"].items():
        parts = [(f"{name}: {k}", v) for k, v in val.items() if isinstance(v, dict)] or [(name, val)]
        for label, v in parts:   # (one row per check of a section that has several)
            lines.append(f"| {label} | {json.dumps({k: x for k, x in v.items() if k != 'trace'}, default=str)[:300]} |")
    lines += ["", "| measurement | result |", "|---|---|"]
    for name, val in res["perf"].items():
        lines.append(f"| {name} | {json.dumps({k: v for k, v in val.items() if k != 'trace'}, default=str)[:400]} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
