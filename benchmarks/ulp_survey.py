"""Bit-exactness of kiln's transcendental ufuncs against NumPy, float32 and float64.

    python -m benchmarks.ulp_survey [--n N] [--fn NAME ...]

For each function and dtype, kiln compiles ``func(x, out=y)`` (binary: ``func(x, z,
out=y)``) and runs it on ~N random values spread over the function's useful range and
far out of it, with the edge values appended (nan, ±inf, ±0, subnormals, the largest
finite), and prints the share of elements whose bits differ from NumPy's result (NaNs
count equal to NaNs) and the largest difference in ulps.
"""
from __future__ import annotations

import argparse

import numpy as np

import kiln

UNARY = ["exp", "log", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
         "tanh", "arcsinh", "arccosh", "arctanh", "exp2", "log2", "log10", "expm1", "log1p",
         "cbrt"]
BINARY = ["power", "arctan2", "hypot"]


def values(n: int, dtype, rng: np.random.Generator) -> np.ndarray:
    """n values: a quarter uniform in [-2, 2], a quarter in [-100, 100], half log-uniform
    magnitudes of either sign over the dtype's whole exponent range; edges appended."""
    info = np.finfo(dtype)
    lo, hi = np.log2(info.smallest_subnormal), np.log2(info.max)
    parts = [rng.uniform(-2, 2, n // 4), rng.uniform(-100, 100, n // 4),
             np.exp2(rng.uniform(lo, hi, n - 2 * (n // 4))) * rng.choice([-1.0, 1.0], n - 2 * (n // 4))]
    edges = [np.nan, np.inf, -np.inf, 0.0, -0.0, info.smallest_subnormal, -info.smallest_subnormal,
             info.tiny, -info.tiny, info.max, -info.max, 1.0, -1.0, 0.5, 2.0]
    with np.errstate(all="ignore"):
        x = np.concatenate(parts + [np.array(edges)]).astype(dtype)
    return x


def compiled(func, nargs: int):
    scope = {"func": func}
    params = ", ".join(f"a{i}" for i in range(nargs))
    exec(f"def f({params}, out):\n    func({params}, out=out)\n    return out\n", scope)
    return kiln.compile(scope["f"])


def compare(got: np.ndarray, want: np.ndarray) -> tuple[float, float]:
    both_nan = np.isnan(got) & np.isnan(want)
    bits = got.view(f"u{got.itemsize}") != want.view(f"u{want.itemsize}")
    differ = bits & ~both_nan
    if not differ.any():
        return 0.0, 0.0
    g, w = got[differ].astype(np.float64), want[differ].astype(np.float64)
    with np.errstate(all="ignore"):
        ulps = np.abs(g - w) / np.spacing(np.abs(w).astype(got.dtype)).astype(np.float64)
    return differ.mean(), float(np.nanmax(np.where(np.isfinite(ulps), ulps, np.inf)))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--fn", nargs="*", default=UNARY + BINARY)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{'function':10} {'float32 differ':>16} {'max ulp':>9} {'float64 differ':>16} {'max ulp':>9}")
    for name in args.fn:
        func = getattr(np, name)
        row = []
        for dtype in (np.float32, np.float64):
            operands = [values(args.n, dtype, rng)]
            if func.nin == 2:
                y = values(args.n, dtype, rng)
                operands.append(rng.permutation(y))
            with np.errstate(all="ignore"):
                want = func(*operands)
                got = compiled(func, func.nin)(*operands, np.empty_like(want))
            row.append(compare(got, want))
        print(f"{name:10} " + " ".join(f"{share:16.4%} {ulp:9.3g}" for share, ulp in row), flush=True)


if __name__ == "__main__":
    main()
