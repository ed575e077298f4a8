"""In-order float sums over permuted loads, the loops GCC 12.2's vectorizer miscompiled
(stop 49, docs/lowering.md "GCC 12.2's loop vectorizer"; the prelude's KILN_OPAQUE).

``python -m tests.fuzz.fold`` draws small functions that add the columns of a 2-d array
into one float, element by element, in a drawn order: unrolled statements
(``s += x[i, 2]; s += x[i, 0]; ...``), one expression (``s = s + x[i, 3] + x[i, 1]``), a
short inner loop reading a row backwards or by a stride, and a subtraction of scaled
terms. The data are small integers, so every order gives the same sum: a difference
from the plain run is a wrong element read, not rounding. Seeds 1-40: 25 wrong sums on
cpp before the workaround (GCC 12.2), none after it.

``KILN_FUZZ_FOLD_SEED`` (first seed) and ``KILN_FUZZ_FOLD_PROGRAMS`` (how many): one
program per seed, compiled with the cpp backend (each is a g++ build; the suite runs
none of them: tests/lowering/test_loops.py and test_reductions.py hold its findings).
"""
from __future__ import annotations

import os
import random

import numpy as np

import kiln
from kiln.config import config


def program(seed: int) -> tuple[str, str, int]:
    """(source, dtype name, columns) of the function ``f(x)`` drawn from ``seed``."""
    rng = random.Random(seed)
    m = rng.choice([2, 3, 4, 5, 8, 12, 16])
    order = list(range(m))
    rng.shuffle(order)
    kind = rng.choice(["statements", "expression", "backwards", "strided"])
    head = "def f(x):\n    s = 0.0\n    for i in range(x.shape[0]):\n"
    if kind == "statements":
        body = "".join(f"        s += x[i, {k}]\n" for k in order)
    elif kind == "expression":
        body = "        s = s + " + " + ".join(f"x[i, {k}]" for k in order) + "\n"
    elif kind == "backwards":
        body = f"        for j in range({m}):\n            s += x[i, {m - 1} - j]\n"
    else:
        body = f"        for j in range({m}):\n            s -= x[i, (j * 3) % {m}] * 2.0\n"
    return head + body + "    return s\n", rng.choice(["float64", "float32"]), m


def check(seed: int) -> str | None:
    """None where the compiled sum is the plain one; else what differed."""
    src, dtype, m = program(seed)
    namespace: dict = {}
    exec(compile(src, f"<fold seed {seed}>", "exec"), namespace)
    f = namespace["f"]
    x = np.arange(37 * m, dtype=dtype).reshape(37, m)
    want, got = f(x), kiln.compile(f, backend="cpp")(x)
    if type(want) is not type(got) or want != got:
        return f"seed {seed} ({dtype}):\n{src}plain {want!r}, compiled {got!r}"
    return None


def main() -> None:
    first = int(os.environ.get("KILN_FUZZ_FOLD_SEED", "1"))
    count = int(os.environ.get("KILN_FUZZ_FOLD_PROGRAMS", "40"))
    config.cost_model = False   # (every program compiles, however small)
    config.recompile_limit = 1000
    found = [r for r in (check(s) for s in range(first, first + count)) if r]
    for r in found:
        print(r)
    print(f"{count} programs, {len(found)} wrong")


if __name__ == "__main__":
    main()
