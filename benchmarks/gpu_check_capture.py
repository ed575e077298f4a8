"""benchmarks/gpu_check.py's end-to-end part: user functions through ``kiln.compile`` on
CuPy arrays (capture, guards, the Triton backend, graph breaks, a training step), and
``HostXP``, the NumPy stand-in for the ``cupy`` module that ``--dry-run`` runs the whole
script with (Triton's interpreter on NumPy arrays, small sizes, no GPU).

Every check compares against the same function run without kiln on host copies (NumPy),
or against a formula in float64; a check that fails says what differed.
"""
from __future__ import annotations

import time
import types
from typing import Any, Callable

import numpy as np


class _Event:
    def record(self) -> None:
        self.t = time.perf_counter()

    def synchronize(self) -> None:
        pass


class _Stream:
    ptr = 0

    def synchronize(self) -> None:
        pass


class HostXP(types.ModuleType):
    """The parts of the ``cupy`` module gpu_check.py uses, on NumPy arrays (``--dry-run``)."""

    def __init__(self) -> None:
        super().__init__("host_xp")
        self.ndarray = np.ndarray
        self.__version__ = f"numpy {np.__version__} (dry run)"
        rng = np.random.default_rng(0)
        self.random = types.SimpleNamespace(
            standard_normal=lambda size, dtype=np.float64: rng.standard_normal(size, dtype=dtype))
        self.cuda = types.SimpleNamespace(
            Event=_Event, get_current_stream=lambda: _Stream(),
            get_elapsed_time=lambda a, b: (b.t - a.t) * 1e3,
            runtime=types.SimpleNamespace(getDeviceProperties=lambda i: {"name": b"CPU (Triton interpreter)"},
                                          getDeviceCount=lambda: 0))

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)

    @staticmethod
    def asnumpy(x: Any) -> np.ndarray:
        return np.asarray(x)


def int8_ramp(xp, n: int):
    """``arange(n) % 256`` as int8 (wrapping) on the device, without an int64 arange of n
    elements (16 GiB at n = 2**31)."""
    return xp.tile(xp.arange(256, dtype=xp.int64).astype(xp.int8), -(-n // 256))[:n]


def _host(xp: Any, value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_host(xp, v) for v in value)
    return xp.asnumpy(value) if isinstance(value, xp.ndarray) else value


def _compare(xp: Any, got: Any, want: Any, rtol: float) -> str:
    """'' when ``got`` (on the device) is ``want`` (NumPy, on the host), else what differs."""
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            return f"got {type(got).__name__}, want a tuple of {len(want)}"
        return "; ".join(filter(None, (_compare(xp, g, w, rtol) for g, w in zip(got, want))))
    if isinstance(want, np.ndarray):
        if type(got) is not xp.ndarray:
            return f"got a {type(got).__module__}.{type(got).__name__}, want {xp.ndarray.__module__}.ndarray"
        if got.dtype != want.dtype or got.shape != want.shape:
            return f"got {got.dtype}{got.shape}, want {want.dtype}{want.shape}"
        g = xp.asnumpy(got)
        ok = np.array_equal(g, want) if want.dtype.kind in "biu" else \
            np.allclose(g, want, rtol=rtol, atol=rtol * 1e-3, equal_nan=True)
        return "" if ok else f"values differ (max abs diff {np.max(np.abs(g - want))})"
    ok = np.allclose(float(got), float(want), rtol=rtol) if isinstance(want, (float, np.floating)) else got == want
    return "" if ok else f"got {got!r}, want {want!r}"


class _Counting:
    """The backend kiln.compile picks by name, counting the graphs it compiles."""

    def __init__(self, name: str) -> None:
        from kiln.backends import resolve_backend
        self.inner = resolve_backend(name)
        self.graphs = 0

    def __call__(self, graph: Any, example_inputs: list) -> Callable:
        self.graphs += 1
        return self.inner(graph, example_inputs)


def capture_checks(xp: Any, gpu: bool, quick: bool) -> dict:
    """kiln.compile on the device's arrays, end to end. ``gpu``: CuPy arrays with the
    default backend (device follows data); else NumPy arrays through Triton's interpreter."""
    import kiln
    from kiln.runtime import triton_build as tb
    backend = "cpp" if gpu else "triton"    # cpp hands CuPy arrays to Triton itself
    array_type = "cupy.ndarray" if gpu else "np.ndarray"
    out: dict = {}

    def check(name: str, fn: Callable[[], str]) -> None:
        start = time.perf_counter()
        try:
            problem = fn()
        except Exception as e:   # one failing check must not hide the others
            problem = f"{type(e).__name__}: {e}"
        out[name] = {"ok": not problem, "seconds": round(time.perf_counter() - start, 2)}
        if problem:
            out[name]["problem"] = problem[:600]

    rng = np.random.default_rng(0)

    def compile_counts_and_guards() -> str:
        def f(x, y, scale):
            return np.maximum(np.sin(x) * y, 0.0).sum(axis=1) * scale
        xh, yh = rng.standard_normal((64, 100)), rng.standard_normal(100)
        x, y = xp.asarray(xh), xp.asarray(yh)
        counting = _Counting(backend)
        cf = kiln.compile(f, backend=counting)
        compiles = tb.stats["compiles"]
        problems = [_compare(xp, cf(x, y, s), f(xh, yh, s), 1e-12) for s in (1.0, 2.0, 3.0)]
        if counting.graphs != 1 or len(cf.cache_entries) != 1:
            problems.append(f"3 calls differing in a runtime scalar compiled {counting.graphs} graphs")
        if gpu and tb.stats["compiles"] == compiles:
            problems.append("no Triton kernel was compiled: the graph ran somewhere else")
        problems.append(_compare(xp, cf(x.astype(np.float32), y.astype(np.float32), 2.0),
                                 f(xh.astype(np.float32), yh.astype(np.float32), 2.0), 1e-5))
        if counting.graphs != 2:
            problems.append(f"a dtype change made {counting.graphs - 1} more graphs, not 1")
        guards = kiln.explain(f)(x, y, 2.0).guards
        want = [f"type(x) is {array_type}", "x.dtype == np.float64", "x.shape[0] == 64"]
        if gpu:
            want.append("x.device.id == 0")
        problems += [f"no guard `{g}` in {guards}" for g in want if g not in guards]
        return "; ".join(filter(None, problems))

    def graph_break_runs_eagerly() -> str:
        def f(x):
            s = float(x.max())        # the user's own explicit copy of one value (in the graph)
            kiln.graph_break()        # (float() of an array no longer breaks: an explicit one)
            return np.tanh(x / s) * 2
        xh = np.linspace(0.5, 2.0, 1000)
        explained = kiln.explain(f)(xp.asarray(xh))
        if explained.graph_break_count != 1:
            return f"{explained.graph_break_count} graph breaks, want 1"
        return _compare(xp, kiln.compile(f, backend=backend)(xp.asarray(xh)), f(xh), 1e-12)

    def same_errors_as_without_kiln() -> str:
        problems = []
        for name, fn in [("a NumPy operand", lambda x: x + np.ones(4)),
                         ("np.asarray", lambda x: np.asarray(x) * 2)]:
            x = xp.arange(4.0)
            try:
                want: Any = fn(x)
            except Exception as e:
                want = e
            try:
                got: Any = kiln.compile(fn, backend=backend)(x)
            except Exception as e:
                got = e
            if isinstance(want, Exception) or isinstance(got, Exception):
                if type(got) is not type(want):
                    problems.append(f"{name}: kiln gave {got!r}, without kiln {want!r}")
            else:
                problems.append(_compare(xp, got, _host(xp, want), 0))
        return "; ".join(filter(None, problems))

    def training_step() -> str:
        def step(w, x, y, lr):
            def loss(w):
                p = np.tanh(x @ w)
                return ((p - y) ** 2).mean()
            value, grad = kiln.value_and_grad(loss)(w)
            return w - lr * grad, value
        w, x, y = rng.standard_normal(16), rng.standard_normal((256, 16)), rng.standard_normal(256)
        cf = kiln.compile(step, backend=backend)
        problems = []
        for _ in range(3):        # three steps, one compile
            p = np.tanh(x @ w)
            grad = x.T @ (2 * (p - y) * (1 - p ** 2)) / len(y)
            new_w, value = cf(xp.asarray(w), xp.asarray(x), xp.asarray(y), 0.1)
            problems.append(_compare(xp, new_w, w - 0.1 * grad, 1e-10))
            problems.append(_compare(xp, float(value), float(((p - y) ** 2).mean()), 1e-12))
            w = xp.asnumpy(new_w)
        if len(cf.cache_entries) != 1:
            problems.append(f"{len(cf.cache_entries)} cache entries for 3 steps")
        return "; ".join(filter(None, problems))

    def int8_past_2_31() -> str:
        def inc(x):
            return x + np.int8(3)
        n = (1 << 31) + 4096 if gpu and not quick else (1 << 12) + 5
        x = int8_ramp(xp, n)
        got = kiln.compile(inc, backend=backend)(x)
        if type(got) is not xp.ndarray or got.dtype != np.int8 or got.shape != (n,):
            return f"got {type(got).__name__} {getattr(got, 'dtype', '')}{getattr(got, 'shape', '')}"
        idx = np.array([0, 1, n // 2, n - 4097, n - 2, n - 1])
        want = ((idx % 256).astype(np.int8) + np.int8(3)).astype(np.int8)
        sample = xp.asnumpy(got[xp.asarray(idx)])
        wrong = int(xp.count_nonzero(got != x + np.int8(3)))
        del got, x
        return "" if np.array_equal(sample, want) and wrong == 0 else \
            f"{wrong} wrong elements of {n}; sample {sample.tolist()} want {want.tolist()}"

    def constants_on_the_device() -> str:
        # graph constants a decomposition makes (kept positions, an appended value) go to
        # the device once; the op kernels of the eager backends stay on the device
        fns = {"delete": lambda x: np.delete(x, 1) * 2,
               "insert": lambda x: np.insert(x, 1, 9.0) - x.sum(),
               "diff append": lambda x: np.diff(x, append=0.0),
               "astype, reshape, sum": lambda x: (x.astype(np.float32).reshape(4, 8) * x[:8]).sum(0)}
        xh = np.linspace(-1.0, 1.0, 32)
        problems = []
        for name, fn in fns.items():
            for b in ("eager", "aot_eager", backend):
                try:
                    problem = _compare(xp, kiln.compile(fn, backend=b)(xp.asarray(xh)), fn(xh), 1e-6)
                except Exception as e:
                    problem = f"{type(e).__name__}: {e}"
                if problem:
                    problems.append(f"{name} on {b}: {problem}")
        return "; ".join(problems)

    def time_stepping_loops() -> str:
        # a graph loop node (for t in range(T): u = step(u), a while loop to convergence):
        # the body is Triton kernels built once and launched per trip on the device's
        # arrays, whatever the trip count
        def heat(u, dt, steps):
            for _ in range(steps):
                u = u + dt * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
            return u

        def relax(u, tol):
            err = tol + 1.0
            while err > tol:
                v = 0.5 * u + 0.25 * (np.roll(u, 1) + np.roll(u, -1))
                err = np.abs(v - u).max()   # (bool(err > tol): one value read a trip)
                u = v
            return u
        uh = rng.random(100_000 if gpu and not quick else 64)
        problems = []
        cf = kiln.compile(heat, backend=backend)
        compiles = tb.stats["compiles"]
        trips = (50, 7, 200) if gpu else (50, 3, 5)   # (the interpreter: ~0.1 s a trip)
        for steps in trips:
            problems.append(_compare(xp, cf(xp.asarray(uh), 0.1, steps), heat(uh, 0.1, steps), 1e-12))
            if steps == trips[0]:
                compiles = tb.stats["compiles"] - compiles
        if "graph loop node" not in str(kiln.explain(heat)(xp.asarray(uh), 0.1, 50)):
            problems.append("heat's loop is no graph loop node")
        if gpu and compiles == 0:
            problems.append("heat's loop compiled no Triton kernel")
        tol = 1e-4 if gpu else 3e-2
        problems.append(_compare(xp, kiln.compile(relax, backend=backend)(xp.asarray(uh[:64]), tol),
                                 relax(uh[:64], tol), 1e-12))
        return "; ".join(filter(None, problems))

    def cache_hit_us() -> str:
        def f(x):
            return np.sin(x) * 2.0 + 1.0
        x = xp.ones(1024, np.float32)
        cf = kiln.compile(f, backend=backend)
        cf(x)
        reps = 2000 if gpu else 20
        timings = {}
        for name, fn in [("kiln", cf), ("eager", f)]:
            fn(x)
            xp.cuda.get_current_stream().synchronize()
            start = time.perf_counter()
            for _ in range(reps):
                fn(x)
            xp.cuda.get_current_stream().synchronize()
            timings[name] = (time.perf_counter() - start) / reps * 1e6
        out["cache hit, 1K float32 elements"] = {"kiln_us": round(timings["kiln"], 2),
                                                 "eager_us": round(timings["eager"], 2)}
        return ""

    check("compile counts and guards", compile_counts_and_guards)
    check("graph break runs eagerly", graph_break_runs_eagerly)
    check("same errors as without kiln", same_errors_as_without_kiln)
    check("value_and_grad training step", training_step)
    check("int8 past 2**31 elements through kiln.compile", int8_past_2_31)
    check("graph constants and op kernels on the device", constants_on_the_device)
    check("time-stepping loops (graph loop nodes)", time_stepping_loops)
    check("cache hit timing", cache_hit_us)
    out["ok"] = all(v.get("ok", True) for v in out.values() if isinstance(v, dict))
    return out
