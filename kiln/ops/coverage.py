"""docs/coverage.md, generated from the inventory: every op, its NumPy spellings, whether
it fuses, whether it differentiates, how each backend runs it; then the composite
spellings (NumPy functions that are compositions of ops) with the ops they use.

    python -m kiln.ops.coverage > docs/coverage.md

tests/ops/test_coverage_doc.py fails when the checked-in page differs from this output.
"""
from __future__ import annotations

import sys

from .registry import REGISTRY, SPELLINGS, Category

def _lowering(op) -> dict | None:
    rule = op.lowering
    return rule if isinstance(rule, dict) else None


def fuses(op) -> bool:
    """Does the C++ backend generate loop code for it (so it fuses with its neighbours)?"""
    rule = _lowering(op)
    if op.category == Category.VIEW:
        return getattr(op, "layout", None) is not None  # a strided view of its input
    if rule is None:
        return op.name == "copy"  # kiln/lowering/rules.py's EXTRA_POINTWISE
    if "decompose" in rule:
        return True
    if op.category == Category.POINTWISE:
        return "scalar" in rule
    if op.category == Category.REDUCTION:
        # (argmax/argmin of an array as it is: the C++ backend calls NumPy's SIMD argmax;
        # of a computed value it is a kernel)
        return "reduce" in rule
    return False


def complex_kernel(op) -> bool:
    """Does the C++ backend generate a complex loop for it?"""
    rule = _lowering(op)
    return rule is not None and "c" in rule.get("kinds", "")


def spellings_of(op) -> list[str]:
    return sorted(s.text for s in SPELLINGS.values() if s.op is op)


def composites() -> list:
    return sorted((s for s in SPELLINGS.values() if s.op is None), key=lambda s: s.text)


def markdown() -> str:
    ops = sorted(REGISTRY.values(), key=lambda op: (str(op.category), op.name))
    lines = [
        "# NumPy coverage",
        "",
        "Generated from kiln's op inventory by `python -m kiln.ops.coverage > docs/coverage.md`;",
        "`tests/ops/test_coverage_doc.py` fails when this page is stale. Every op runs on the",
        "`eager` and `aot_eager` backends (its NumPy kernel). On `cpp` it is a generated kernel",
        "that fuses with its neighbours (**kernel**) or a call of the NumPy kernel (**extern**).",
        "Complex arrays (complex64, complex128) go through every op. On `cpp` these are",
        "complex kernels that fuse with their neighbours: "
        + ", ".join(f"`{op.name}`" for op in ops if complex_kernel(op))
        + "; every other op on complex values calls its NumPy kernel (complex sums and",
        "products too: NumPy's pairwise loops), so results are NumPy's, special values included.",
        "Gradients flow through complex values, in the conjugate (Wirtinger) convention",
        "PyTorch uses (the gradient of z = x + iy is dL/dx + i dL/dy), on the eager tape and",
        "in compiled backward graphs, for "
        + ", ".join(f"`{op.name}`" for op in ops if op.complex_grad)
        + "; through any other op kiln raises AutogradError.",
        "Ops whose result dtype depends on the values (`np.linalg.eig`/`eigvals` of real",
        "matrices, `np.roots`, `np.poly` of a matrix or of complex roots, `np.real_if_close`,",
        "`np.bincount` with weights of a selection, intp zeros where it is empty)",
        "expect the dtype the line gave before and check it: when the data give the other",
        "dtype the call runs as Python and recompiles; a line that gave both breaks the graph",
        "(kiln/ops/speculation.py).",
        "",
        f"{len(REGISTRY)} ops, {sum(1 for s in SPELLINGS.values() if s.op is not None)} spellings "
        f"of them, {len(composites())} composite spellings.",
        "",
        "| op | category | NumPy spellings | cpp | differentiates |",
        "|---|---|---|---|---|",
    ]
    for op in ops:
        spelled = ", ".join(f"`{t}`" for t in spellings_of(op)) or "(internal)"
        lines.append(f"| `{op.name}` | {op.category} | {spelled} | "
                     f"{'kernel' if fuses(op) else 'extern'} | {'yes' if op.differentiable else 'no'} |")
    lines += [
        "",
        "## Composite spellings",
        "",
        "NumPy functions written as compositions of the ops above (kiln/ops/numeric.py and",
        "neighbours): they fuse and differentiate as their ops do.",
        "",
        "| NumPy spelling | ops it uses |",
        "|---|---|",
    ]
    for s in composites():
        uses = ", ".join(f"`{u}`" for u in s.uses) or "(a constant: computed while capturing)"
        lines.append(f"| `{s.text}` | {uses} |")
    lines += [
        "",
        "## Not captured yet (a graph break: the call runs as Python)",
        "",
        "- data-dependent sizes where they cannot be a run-time size: `x[mask]` with several",
        "  index entries, `np.unique(..., axis=...)`, a set operation or `np.polymul` whose",
        "  first operand's length is itself data-dependent (`np.intersect1d(np.unique(a), b)`),",
        "  and any Python use of such a size (`len(x[m])`, `if idx.size:`) or its meeting",
        "  another size (`x[m] + y`): the graph breaks there (`x[mask]`, `np.nonzero`,",
        "  `np.argwhere`, one-argument `np.where`, `np.unique`, `np.flatnonzero`, `np.compress`,",
        "  `np.bincount`, the set operations, `np.polymul`, `np.polydiv` are graph ops);",
        "- `np.frombuffer` of a bytearray, a memoryview or over 64 KiB of bytes (a view of",
        "  a Python buffer; of bytes it is a read-only constant, the bytes guarded by value),",
        "  `np.lib.stride_tricks.as_strided` (arbitrary strides), `ndarray.strides` and",
        "  `ndarray.flags` (NumPy's memory layout of computed arrays), `np.nditer` over a",
        "  computed array or a view in memory order (`order='C'`/`'F'` and arguments are",
        "  captured), `np.delete` at positions computed in the graph where the result has two",
        "  or more dimensions, `x.view(dtype)` to another itemsize of an array computed in the",
        "  function (NumPy's layout decides; of an argument it is captured, its last axis'",
        "  contiguity guarded), `np.polynomial.Polynomial` objects, `np.unwrap` on integers,",
        "  `polyfit(full=True)`/`cov=True`;",
        "- random numbers: `get_state`/`set_state`, `bytes`, `multivariate_normal`,",
        "  `Generator.permuted`/`spawn`, a generator made by `np.random.default_rng` that leaves",
        "  the graph (returned, or alive at a graph break: the function runs as Python) (the",
        "  draws of `np.random.*`, of a Generator or RandomState object and of a",
        "  `default_rng(seed)` made in the function are captured: `random_*` above, NumPy's own",
        "  methods, never merged, dropped, reordered or drawn twice; a Generator passed in is",
        "  guarded by its type and its bit generator's type, a module's or an object's by",
        "  identity), and Python arithmetic on a",
        "  drawn Python `float` other than `+`, `-`, `*` (`if np.random.random() < p:` breaks",
        "  there);",
        "- a result dtype that changed between calls at the same line (`np.linalg.eigvals`",
        "  real in one call, complex in another): the call breaks the graph there;",
        "- Python values read from data: `.item()`, `.tolist()`, and a branch or Python",
        "  arithmetic on the bools `np.allclose`, `np.array_equal`, `np.array_equiv` return",
        "  (those are graph ops returning a Python `bool`; using it in an `if` breaks there).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    import kiln.ops  # noqa: F401  (every declaration)
    sys.stdout.write(markdown())
