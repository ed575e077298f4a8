"""Random chains of the ops ops/fp_errors.py ``raises_where`` covers, fused into one
kernel, over edge values: the compiled call gives NumPy's exact list of floating-point
warnings (category, message, count, order), where several ops of the kernel may raise
one kind (the kernel computes which did) and where one may."""
from __future__ import annotations

import linecache
import warnings

import numpy as np
import pytest

import kiln

UNARY = ["log", "log2", "log10", "log1p", "sqrt", "exp", "exp2", "expm1", "sinh", "cosh",
         "arcsin", "arccos", "arccosh", "arctanh", "sin", "cos", "tan", "square", "reciprocal",
         "rad2deg"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "fmod", "remainder", "hypot"]
# (a Python float beyond float32's range in a float32 chain warns "overflow encountered in
# cast" from NumPy's conversion: not this test's business)
CONSTANTS = {np.float64: ["0.0", "-1.0", "0.5", "2.0", "1e300", "y"],
             np.float32: ["0.0", "-1.0", "0.5", "2.0", "1e38", "y"]}
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -3.0, 1e-3, 30.0, 100.0, 710.0, 1e20, -1e20,
         1e300, -1e300, np.inf, -np.inf, 1e-310, 0.999, -1.5]


def _chain(rng, length, dtype):
    lines, value = [], "x"
    for k in range(length):
        if rng.random() < 0.6:
            expr = f"np.{rng.choice(UNARY)}({value})"
        else:
            other = rng.choice(CONSTANTS[dtype])
            args = [value, other] if rng.random() < 0.7 else [other, value]
            expr = f"np.{rng.choice(BINARY)}({args[0]}, {args[1]})"
        lines.append(f"    t{k} = {expr}")
        value = f"t{k}"
    return "def chain(x, y):\n" + "\n".join(lines) + f"\n    return {value}\n"


def _compile(source, name):
    filename = f"<fp-chain {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = {"np": np}
    exec(compile(source, filename, "exec"), scope)
    return scope["chain"]


def _warnings(fn, *args):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [(w.category, str(w.message), w.lineno) for w in got]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", range(12))
def test_random_chains_warn_as_numpy(seed, dtype):
    rng = np.random.default_rng([seed, np.dtype(dtype).itemsize])
    for case in range(4):
        source = _chain(rng, int(rng.integers(2, 7)), dtype)
        fn = _compile(source, f"{seed}-{case}-{np.dtype(dtype).name}")
        n = int(rng.choice([5, 19, 67]))   # (SIMD bodies and scalar tails)
        with np.errstate(all="ignore"):
            x = rng.choice(np.array(EDGES), n).astype(dtype)
            y = rng.choice(np.array(EDGES), n).astype(dtype)
        want_out, want = _warnings(fn, x, y)
        compiled = kiln.compile(fn, backend="cpp")
        for _ in range(2):
            out, got = _warnings(compiled, x.copy(), y.copy())
            assert got == want, source
            np.testing.assert_array_equal(np.isnan(out), np.isnan(want_out))
