"""Build test graphs directly and compare the cpp backend against the NumPy interpreter."""
from __future__ import annotations

import warnings

import numpy as np

from kiln.ir import Graph
from kiln.ops import REGISTRY, TensorMeta, infer_meta
from kiln.runtime import cpp_backend

# Ops whose results are exact (no libm rounding): compared bit for bit (signed zeros too).
INEXACT = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "cbrt", "sin", "cos", "tan",
           "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
           "power", "arctan2", "hypot", "logaddexp", "true_divide", "reciprocal", "sqrt",
           "floor_divide", "remainder", "fmod"}   # (float_power: libm's pow, as NumPy's loop)


def multi_op_graph(op_names: list[str], inputs: list[np.ndarray], arity: int) -> tuple[Graph, list[str]]:
    """One graph computing ``op(x)`` or ``op(x, y)`` for every op NumPy accepts on these dtypes."""
    g = Graph("ops")
    names = ["x", "y"][:max(arity, len(inputs))]
    phs = [g.placeholder(n, TensorMeta(a.shape, a.dtype)) for n, a in zip(names, inputs)]
    outs, kept = [], []
    for name in op_names:
        op = REGISTRY[name]
        args = tuple(phs[:arity])
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                meta = infer_meta(op, tuple(p.val for p in args), {})
        except (TypeError, ValueError):
            continue  # NumPy has no loop for these dtypes
        outs.append(g.call(op, args, {}, val=meta))
        kept.append(name)
    g.output(tuple(outs))
    return g, kept


def each(fn):
    """``fn`` of every argument group of a list, as one function to compile: one build
    for the groups, where each group's static sizes (all different) make a kernel of its
    own, the kernel ``fn`` alone compiles to (the suite's time: a module costs ~0.1-0.3 s
    of g++ whatever its kernels). Check that in the generated code where it matters."""
    def over(groups):
        out = []
        for args in groups:
            out.append(fn(*args))
        return out
    over.__name__ = over.__qualname__ = f"each_{fn.__name__}"
    return over


def run_both(graph: Graph, inputs: list, compiled=None):
    fn = compiled if compiled is not None else cpp_backend(graph, list(inputs))
    assert not hasattr(fn, "__kiln_numpy_program__"), "the cpp backend fell back to the interpreter"
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        expected = graph(*inputs)
        got = fn(*inputs)
    return expected, got, fn


def assert_same(name: str, expected, got, rtol: float | None = None, atol: float = 0.0) -> None:
    exp = np.asarray(expected)
    res = np.asarray(got)
    assert type(got) is type(expected) or (isinstance(got, np.ndarray) and isinstance(expected, np.ndarray)), \
        f"{name}: type {type(got).__name__} != {type(expected).__name__}"
    assert res.dtype == exp.dtype, f"{name}: dtype {res.dtype} != {exp.dtype}"
    assert res.shape == exp.shape, f"{name}: shape {res.shape} != {exp.shape}"
    if exp.dtype.kind == "f":
        if rtol is None:
            rtol = (4e-6 if exp.dtype == np.float32 else 1e-13) if name.split("(")[0] in INEXACT else 0.0
        if rtol == 0.0:
            np.testing.assert_array_equal(res, exp, err_msg=name)
            np.testing.assert_array_equal(np.signbit(res), np.signbit(exp), err_msg=f"{name} (signs)")
        else:
            finite = np.isfinite(exp)
            np.testing.assert_array_equal(np.isnan(res), np.isnan(exp), err_msg=f"{name} (nan)")
            np.testing.assert_array_equal(res[~finite & ~np.isnan(exp)], exp[~finite & ~np.isnan(exp)],
                                          err_msg=f"{name} (inf)")
            tiny = max(np.finfo(exp.dtype).tiny * 16, atol)
            np.testing.assert_allclose(res[finite], exp[finite], rtol=rtol, atol=tiny, err_msg=name)
    else:
        np.testing.assert_array_equal(res, exp, err_msg=name)


def unspelled_scalar_functions(template, dtypes=None) -> list:
    """Every (op, kind[, when-key, function]) an op's lowering asks a renderer for that
    ``template(fn, dtype)`` has no spelling of (one check for every renderer's table);
    kinds whose dtype the renderer does not hold (``dtypes``: complex on Triton) are skipped."""
    from kiln.lowering.handler import RecordingHandler
    from kiln.ops import REGISTRY
    from kiln.ops.registry import Category
    kinds = {"f": np.dtype(np.float64), "i": np.dtype(np.int64), "u": np.dtype(np.uint8),
             "b": np.dtype(bool), "c": np.dtype(np.complex128)}
    missing = []
    for op in REGISTRY.values():
        rule = op.lowering
        if op.category != Category.POINTWISE or not isinstance(rule, dict) or "scalar" not in rule:
            continue
        for k in rule["kinds"]:
            dt = kinds[k]
            if dtypes is not None and dt.name not in dtypes:
                continue
            if rule["scalar"] != "identity" and template(rule["scalar"], dt) is None:
                missing.append((op.name, k))
            for key, decomposition in rule.get("when", {}).items():
                rec = RecordingHandler()
                decomposition(rec, dt, *((name,) for name in op.inputs))
                missing += [(op.name, key, fn) for fn, d in rec.calls if template(fn, d) is None]
    return missing


def compiled_with_disassembly(fn):
    """``(compiled fn, disassembly())``: ``fn`` compiled with the cpp backend, and a function
    giving the objdump of the kernels its first graph built (demangled, no raw bytes), for
    vectorization checks; skips the test without objdump or an AVX2 CPU under -march=native."""
    import shutil
    import subprocess

    import pytest

    import kiln
    if shutil.which("objdump") is None or "avx2" not in open("/proc/cpuinfo").read() \
            or "-march=native" not in kiln.config.cxx_flags:
        pytest.skip("needs objdump and an AVX2 CPU")
    seen = []

    def backend(graph, example_inputs):
        seen.append(cpp_backend(graph, example_inputs))
        return seen[-1]

    def disassembly() -> str:
        return subprocess.run(["objdump", "-d", "-C", "--no-show-raw-insn", seen[0].kiln_artifact.so],
                              capture_output=True, text=True, check=True).stdout
    return kiln.compile(fn, backend=backend), disassembly
