"""Returned views: the outputs a compiled call rebuilds after its graph ran.

A view NumPy returns (``return a * 2, a.T``: ``a.T`` shares ``a``'s memory) is not a
kernel's output: the compiled call replays the view ops on the argument, or on a
result that other outputs view too, after the graph ran (functionalize.py ``OutputSpec``
'input_view' and 'base_view'). For a graph that writes nothing back, :func:`runner`
makes that call one generated function: the forward, then each output, each view op's
NumPy kernel called with its arguments written in. ``return a * 2, a.T`` on float64[32,
32] took 1.7 us through the per-output loop of ``_Variant.plain_runner`` (NumPy 1.0 us).

    >>> import numpy as np
    >>> from kiln.ops import REGISTRY
    >>> run = runner(lambda a: (a * 2,), (("fresh", 0, ()), ("input_view", 0, ((REGISTRY["transpose"], (), {"axes": None}),))))
    >>> a = np.arange(4.0).reshape(2, 2)
    >>> out, view = run(a)
    >>> np.shares_memory(view, a), view.strides, out.tolist()
    (True, (8, 16), [[0.0, 2.0], [4.0, 6.0]])
"""
from __future__ import annotations

from typing import Any, Callable

from ..ops.registry import iter_leaves
from .functionalize import InputRef, compiled_path


def output_picks(plan: Any) -> tuple | None:
    """(kind, index or constant, view path) of each user output of a functionalize
    ``Plan``; None where outputs share one view object (the general path keeps it one)."""
    views = [id(v) for s in plan.outputs for v in s.views]
    if len(views) != len(set(views)):
        return None
    return tuple((s.kind, s.value if s.kind == "const" else s.index, s.path) for s in plan.outputs)


def for_variant(variant: Any) -> Callable | None:
    """:func:`runner` for an aot ``_Variant`` that writes nothing back, not training;
    else None (its ``plain_runner`` serves it)."""
    picks = None if variant.training or variant.plan.mutated else output_picks(variant.plan)
    return None if picks is None else runner(variant.forward, picks)


def runner(forward: Callable, picks: tuple) -> Callable:
    """``run(*args)`` returning the user's outputs as a tuple: ``forward(*args)``, then for
    each ``(kind, value, path)`` of ``picks`` ('fresh': forward's result ``value``;
    'input': argument ``value``; 'const': ``value``; 'input_view' / 'base_view': ``path``
    replayed on argument / result ``value``)."""
    ns: dict[str, Any] = {"_forward": forward}
    items = []
    for n, (kind, value, path) in enumerate(picks):
        if kind == "fresh":
            items.append(f"_outs[{int(value)}]")
        elif kind == "input":
            items.append(f"args[{int(value)}]")
        elif kind == "const":
            ns[f"_c{n}"] = value
            items.append(f"_c{n}")
        elif kind in ("input_view", "base_view"):
            items.append(_replay(path, f"args[{int(value)}]" if kind == "input_view" else f"_outs[{int(value)}]",
                                 ns, f"_v{n}"))
        else:
            raise ValueError(f"runner: unknown output kind {kind!r}")
    src = "def run(*args):\n    _outs = _forward(*args)\n    return (" + "".join(i + ", " for i in items) + ")\n"
    exec(compile(src, "<kiln returned views>", "exec"), ns)
    return ns["run"]


def _replay(path: tuple, value: str, ns: dict, name: str) -> str:
    """The expression replaying ``path`` on ``value``: each step's kernel called with its
    arguments (a path whose arguments name other inputs, a traced slice bound: the
    path's ``compiled_path``, given the call's arguments)."""
    if any(isinstance(v, InputRef) for _, rest, _ in path for v in iter_leaves(rest)):
        ns[name] = compiled_path(path)
        return f"{name}({value}, args)"
    for k, (op, rest, params) in enumerate(path):
        ns[f"{name}_{k}"], ns[f"{name}_{k}r"], ns[f"{name}_{k}p"] = op.impl, tuple(rest), dict(params)
        value = f"{name}_{k}({value}" + (f", *{name}_{k}r" if rest else "") \
            + (f", **{name}_{k}p" if params else "") + ")"
    return value
