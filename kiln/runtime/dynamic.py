"""Dynamic dimensions: one build whose kernels take the dynamic sizes as arguments.

Capture marks placeholder dims as dynamic (``node.meta['dynamic_dims']``). The lowering
works on concrete sizes, so the symbolic version is found by *differential codegen*: the
graph is generated at the example sizes, once more per dynamic size with only that size
changed, and once with all of them changed. Every number in the C++ and wrapper text
must then be an affine function of the sizes (loop bounds, strides, buffer shapes are);
those numbers become expressions over ``n0, n1, ...`` (kernel arguments, read from the
inputs' shapes in the wrapper). If the text differs in any other way (a size decides
fusion, a product of two dynamic sizes appears), the graph is specialized as usual.

Sizes 0 and 1 are never made dynamic (broadcasting depends on them); the wrapper checks
the dynamic sizes are at least 2 and respecializes otherwise.
"""
from __future__ import annotations

import re
import time
from typing import Any, Callable

import numpy as np

from .. import logs
from .backend import Artifact, finish, generate
from .build import stats

_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
_DELTAS = (5, 11)


def dynamic_sizes(graph: Any, example_inputs: list) -> list[tuple[int, int, str]]:
    """(input position, dim, Python expression) for every usable dynamic dim."""
    out = []
    for i, (node, value) in enumerate(zip(graph.placeholders, example_inputs)):
        for d in node.meta.get("dynamic_dims", ()) or ():
            if isinstance(value, np.ndarray) and value.flags.c_contiguous and value.shape[d] >= 2:
                out.append((i, d, f"{node.name}.shape[{d}]"))
    return out


def _resized(example_inputs: list, sizes: list, deltas: list[int]) -> list:
    shapes = {i: list(v.shape) for i, v in enumerate(example_inputs) if isinstance(v, np.ndarray)}
    for (i, d, _), delta in zip(sizes, deltas):
        shapes[i][d] += delta
    return [np.zeros(shapes[i], v.dtype) if i in shapes else v for i, v in enumerate(example_inputs)]


def _split(text: str) -> tuple[list[str], list[int]]:
    parts = _NUMBER.split(text)
    return parts[0::2], [int(p) for p in parts[1::2]]


def _symbolize(texts: list[str], base: list[int], deltas: int, paren: bool) -> str | None:
    """Replace numbers that move with the sizes by affine expressions; None if impossible."""
    skeleton, v0 = _split(texts[0])
    singles = []
    for t in texts[1:-1]:
        sk, v = _split(t)
        if sk != skeleton:
            return None
        singles.append(v)
    sk, v_all = _split(texts[-1])
    if sk != skeleton:
        return None
    out = [skeleton[0]]
    for pos, value in enumerate(v0):
        coefs = []
        for k, v in enumerate(singles):
            diff = v[pos] - value
            if diff % _DELTAS[0]:
                return None
            coefs.append(diff // _DELTAS[0])
        predicted = value + sum(c * _DELTAS[1] for c in coefs)
        if predicted != v_all[pos]:
            return None
        if not any(coefs):
            out.append(str(value))
        else:
            const = value - sum(c * b for c, b in zip(coefs, base))
            terms = [(f"n{k}" if c == 1 else f"{c}*n{k}") for k, c in enumerate(coefs) if c]
            if const:
                terms.append(str(const))
            expr = " + ".join(terms).replace("+ -", "- ")
            out.append(f"({expr})" if paren or len(terms) > 1 else expr)
        out.append(skeleton[pos + 1])
    return "".join(out)


def compile_dynamic(graph: Any, example_inputs: list, respecialize: Callable) -> Artifact | None:
    sizes = dynamic_sizes(graph, example_inputs)
    if not sizes:
        return None
    start = time.perf_counter()
    builds_before = stats["builds"]
    syms = tuple(f"n{k}" for k in range(len(sizes)))
    exprs = dict(zip(syms, (e for _, _, e in sizes)))
    base = [example_inputs[i].shape[d] for i, d, _ in sizes]
    variants = [list(example_inputs)]
    for k in range(len(sizes)):
        deltas = [0] * len(sizes)
        deltas[k] = _DELTAS[0]
        variants.append(_resized(example_inputs, sizes, deltas))
    variants.append(_resized(example_inputs, sizes, [_DELTAS[1]] * len(sizes)))
    try:
        gens = [generate(graph, inputs, syms, exprs, reinfer=True, pool=False) for inputs in variants]
    except Exception as e:  # a size the graph cannot take: specialize instead
        _log(graph, f"lowering at other sizes failed ({type(e).__name__}: {e})")
        return None
    cpp = _symbolize([g.cpp for g in gens], base, len(sizes), paren=True)
    wrapper = _symbolize([g.wrapper for g in gens], base, len(sizes), paren=False)
    if cpp is None or wrapper is None:
        _log(graph, "the generated code depends on the sizes in a non-affine way")
        return None
    checks = " or ".join(f"{s} < 2" for s in syms)
    wrapper = wrapper.replace(f"    {syms[-1]} = {exprs[syms[-1]]}\n",
                              f"    {syms[-1]} = {exprs[syms[-1]]}\n    if {checks}:\n"
                              f"        return _respecialize({', '.join(n.name for n in graph.placeholders)})\n", 1)
    gen = gens[0]
    gen.cpp, gen.wrapper = cpp, wrapper
    _log(graph, f"one build for dynamic sizes {', '.join(f'{s} = {e}' for s, e in exprs.items())}")
    return finish(graph, gen, respecialize, start, builds_before)


def _log(graph: Any, message: str) -> None:
    if logs.enabled("perf"):
        logs.log("perf", f"cpp backend, graph '{graph.name}': dynamic shapes", message)
