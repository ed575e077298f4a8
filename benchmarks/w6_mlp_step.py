"""W6: one training step of an MLP (784 -> 512 -> 10, relu, softmax cross-entropy, batch
256, float32): forward + backward + SGD.

    python benchmarks/w6_mlp_step.py [--reps N] [--json]

Compares NumPy with a hand-written backward, kiln's eager Tensor, kiln compiled with
Tensors (aot_autograd: the loss's forward and backward graphs compiled, ``backward()`` and
the SGD update run eagerly; aot_eager runs the graphs with NumPy, cpp with generated
kernels), the whole step compiled as one graph (``kiln.value_and_grad`` inside
``kiln.compile``, SGD included), plus torch.compile and jax.jit(value_and_grad) when
installed. Reports the median step time, ratios against
NumPy measured in the same run, peak memory allocated during one step (tracemalloc; NumPy
reports its buffers to it) and the bytes the partitioner saves for backward.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import kiln  # noqa: E402
from kiln.aot import aot_autograd, aot_eager, build_joint, min_cut_partition  # noqa: E402
from kiln.ir import trace  # noqa: E402
from kiln.ops import F, TensorMeta  # noqa: E402

B, D_IN, HIDDEN, CLASSES = 256, 784, 512, 10
LR = 0.1
DT = np.float32


def make_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((B, D_IN)).astype(DT)
    labels = rng.integers(0, CLASSES, B)
    y1h = np.eye(CLASSES, dtype=DT)[labels]
    params = [(rng.standard_normal((D_IN, HIDDEN)) * np.sqrt(2 / D_IN)).astype(DT),
              np.zeros(HIDDEN, DT),
              (rng.standard_normal((HIDDEN, CLASSES)) * np.sqrt(1 / HIDDEN)).astype(DT),
              np.zeros(CLASSES, DT)]
    return x, y1h, params


# -- the model, three ways ---------------------------------------------------------------------

def loss_numpy(x, y1h, w1, b1, w2, b2):
    """NumPy-style loss: runs on arrays, and on kiln Tensors (eager autograd)."""
    h = np.maximum(x @ w1 + b1, 0.0)
    logits = h @ w2 + b2
    z = logits - logits.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -(y1h * (z - lse)).sum() / x.shape[0]


def loss_ops(x, y1h, w1, b1, w2, b2):
    """The same loss written with kiln ops, for tracing when capture cannot take Tensors."""
    h = F.maximum(F.add(F.matmul(x, w1), b1), 0.0)
    logits = F.add(F.matmul(h, w2), b2)
    z = F.subtract(logits, F.max(logits, axis=(1,), keepdims=True))
    lse = F.log(F.sum(F.exp(z), axis=(1,), keepdims=True))
    return F.true_divide(F.negative(F.sum(F.multiply(y1h, F.subtract(z, lse)))), x.shape[0])


def numpy_step(x, y1h, params):
    """Forward, hand-written backward, SGD in place."""
    w1, b1, w2, b2 = params
    h = x @ w1
    h += b1
    a = np.maximum(h, 0.0, out=h)          # relu in place: a is h
    logits = a @ w2
    logits += b2
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    loss = -np.sum(y1h * np.log(p)) / B
    dlogits = (p - y1h) / B
    dw2 = a.T @ dlogits
    db2 = dlogits.sum(axis=0)
    da = dlogits @ w2.T
    da *= a > 0
    dw1 = x.T @ da
    db1 = da.sum(axis=0)
    for w, g in zip(params, (dw1, db1, dw2, db2)):
        w -= LR * g
    return loss


def make_tensor_step(loss_fn):
    def step(x, y1h, params):
        loss = loss_fn(x, y1h, *params)
        loss.backward()
        with kiln.no_grad():
            for p in params:
                p -= LR * p.grad
                p.grad = None
        return float(loss)
    return step


def compiled_loss(backend_name: str):
    """kiln.compile(loss_numpy) when capture takes Tensors, else the traced loss_ops graph."""
    x, y1h, params = make_data()
    if backend_name == "aot_eager":
        compiler = None
    else:
        compiler = cpp_compiler()
        if compiler is None:
            return None, "kiln's cpp backend is not available yet"
    how = "traced graph"
    try:
        fn = kiln.compile(loss_numpy, backend=(aot_eager if compiler is None else
                                               (lambda g, ex: aot_autograd(g, ex, compiler))),
                          fullgraph=True)
        ts = [kiln.tensor(p, requires_grad=True) for p in params]
        out = fn(x, y1h, *ts)
        if isinstance(out, kiln.Tensor) and "CompiledFunctionBackward" in repr(out.grad_fn):
            return fn, "kiln.compile"
    except Exception:  # capture does not take Tensors yet
        pass
    metas = [TensorMeta(a.shape, a.dtype) for a in (x, y1h, *params)]
    graph = trace(loss_ops, metas, ["x", "y1h", "w1", "b1", "w2", "b2"], name="mlp_loss")
    compiled = aot_eager(graph, [x, y1h, *params]) if compiler is None else \
        aot_autograd(graph, [x, y1h, *params], compiler)
    return (lambda *a: compiled(*a)[0]), how


def compiled_train_step(backend: str = "cpp"):
    """The whole step in one compiled function: kiln.value_and_grad inside kiln.compile
    puts forward, backward and the in-place SGD update into one graph (JAX's
    jit(value_and_grad) in NumPy style); no autograd runs at run time."""
    @kiln.compile(backend=backend, fullgraph=True)
    def train_step(x, y1h, w1, b1, w2, b2):
        loss, grads = kiln.value_and_grad(loss_numpy, argnums=(2, 3, 4, 5))(x, y1h, w1, b1, w2, b2)
        for p, g in zip((w1, b1, w2, b2), grads):
            p -= LR * g
        return loss

    def step(x, y1h, params):
        return train_step(x, y1h, *params)
    return step


def cpp_compiler():
    for mod, attr in (("kiln.runtime", "cpp_backend"),):
        try:
            module = __import__(mod, fromlist=[attr])
            return getattr(module, attr)
        except Exception:
            continue
    return None


# -- other systems, when installed ----------------------------------------------------------------

def torch_step():
    try:
        import torch
    except ImportError:
        return None
    x, y1h, params = make_data()
    tx, ty = torch.from_numpy(x), torch.from_numpy(y1h)
    ps = [torch.tensor(p, requires_grad=True) for p in params]

    def loss_fn(x, y, w1, b1, w2, b2):
        h = torch.relu(x @ w1 + b1)
        logits = h @ w2 + b2
        return -(y * torch.log_softmax(logits, dim=1)).sum() / x.shape[0]

    loss_c = torch.compile(loss_fn)

    def step(*_):
        loss = loss_c(tx, ty, *ps)
        loss.backward()
        with torch.no_grad():
            for p in ps:
                p -= LR * p.grad
                p.grad = None
        return float(loss)
    return step


def jax_step():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    x, y1h, params = make_data()

    def loss_fn(params, x, y):
        w1, b1, w2, b2 = params
        h = jnp.maximum(x @ w1 + b1, 0.0)
        logits = h @ w2 + b2
        return -(y * jax.nn.log_softmax(logits, axis=1)).sum() / x.shape[0]

    @jax.jit
    def update(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return loss, [p - LR * g for p, g in zip(params, grads)]

    state = {"params": [jnp.asarray(p) for p in params]}

    def step(*_):
        loss, state["params"] = update(state["params"], x, y1h)
        return float(loss.block_until_ready())
    return step


# -- measuring ------------------------------------------------------------------------------------

def measure_all(configs, reps: int):
    """Median step time per config, measured round-robin so that load from other processes
    hits every config alike; then the peak memory of one step of each (tracemalloc)."""
    states = []
    for name, step, factory in configs:
        args = factory()
        for _ in range(3):      # warm up: compiles, caches, lazy backward
            step(*args)
        states.append((step, args, []))
    for _ in range(reps):
        for step, args, times in states:
            t0 = time.perf_counter()
            step(*args)
            times.append(time.perf_counter() - t0)
    results = []
    for step, args, times in states:
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        step(*args)
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        results.append((statistics.median(times), peak))
    return results


def saved_bytes_report():
    x, y1h, params = make_data()
    metas = [TensorMeta(a.shape, a.dtype) for a in (x, y1h, *params)]
    graph = trace(loss_ops, metas, ["x", "y1h", "w1", "b1", "w2", "b2"], name="mlp_loss")
    part = min_cut_partition(build_joint(graph, [False, False, True, True, True, True]))
    f4 = 4
    hand = B * D_IN * f4 + B * HIDDEN * f4 + HIDDEN * CLASSES * f4 + 2 * B * CLASSES * f4
    return {"saved_bytes": part.saved_bytes, "save_every_intermediate_bytes": part.save_all_bytes,
            "hand_written_bytes": hand, "saved": [n.name for n in part.saved]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json", action="store_true")
    opts = ap.parse_args()

    def numpy_args():
        x, y1h, params = make_data()
        return x, y1h, params

    def tensor_args():
        x, y1h, params = make_data()
        return x, y1h, [kiln.tensor(p, requires_grad=True) for p in params]

    candidates = [("numpy (hand-written backward)", numpy_step, numpy_args, ""),
                  ("kiln eager Tensor", make_tensor_step(loss_numpy), tensor_args, "")]
    for backend in ("aot_eager", "cpp"):
        loss_fn, how = compiled_loss(backend)
        candidates.append((f"kiln compiled ({backend})",
                           make_tensor_step(loss_fn) if loss_fn else None, tensor_args, how))
    candidates.append(("kiln compiled step (cpp)", compiled_train_step(), numpy_args,
                       "value_and_grad + SGD in one kiln.compile graph"))
    candidates.append(("torch.compile", torch_step(), numpy_args, "not installed"))
    candidates.append(("jax.jit(value_and_grad)", jax_step(), numpy_args, "not installed"))
    runnable = [(n, s_, f) for n, s_, f, _ in candidates if s_ is not None]
    measured = dict(zip([n for n, _, _ in runnable], measure_all(runnable, opts.reps)))
    rows = []
    for name, step, _, note in candidates:
        if name in measured:
            t, peak = measured[name]
            rows.append({"name": name, "median_ms": t * 1e3, "peak_mb": peak / 2**20,
                         "note": note if step is not None and note not in ("not installed",) else ""})
        else:
            rows.append({"name": name, "median_ms": None, "note": note})

    np_ms = rows[0]["median_ms"]
    eager_ms = rows[1]["median_ms"]
    for r in rows:
        if r["median_ms"] is not None:
            r["vs_numpy"] = np_ms / r["median_ms"]
            r["vs_kiln_eager"] = eager_ms / r["median_ms"]
    report = {"workload": f"MLP {D_IN}->{HIDDEN}->{CLASSES}, batch {B}, float32, fw+bw+SGD",
              "threads": {k: os.environ.get(k, "default") for k in
                          ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "KILN_NUM_THREADS")},
              "cpus": os.cpu_count(), "rows": rows,
              "partition": saved_bytes_report()}
    if opts.json:
        print(json.dumps(report, indent=2))
        return
    print(report["workload"], f"({report['cpus']} cpus; threads: {report['threads']})")
    print(f"{'':32s} {'median ms':>10s} {'x numpy':>8s} {'x eager':>8s} {'peak MB':>8s}")
    for r in rows:
        if r["median_ms"] is None:
            print(f"{r['name']:32s} {'—':>10s}   ({r['note']})")
            continue
        print(f"{r['name']:32s} {r['median_ms']:10.2f} {r['vs_numpy']:8.2f} {r['vs_kiln_eager']:8.2f} "
              f"{r['peak_mb']:8.2f}" + (f"   ({r['note']})" if r["note"] else ""))
    p = report["partition"]
    print(f"saved for backward: {p['saved_bytes']} bytes ({', '.join(p['saved'])}); saving every "
          f"intermediate: {p['save_every_intermediate_bytes']}; hand-written keeps "
          f"{p['hand_written_bytes']}")


if __name__ == "__main__":
    main()
