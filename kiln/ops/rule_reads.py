"""Which values a derivative rule reads: its output, and each of its inputs.

An op's ``vjp(g, out, *inputs, **params)`` often needs only some of what it is handed:
``multiply``'s rule reads both inputs and not the output, ``exp``'s reads only the output.
Eager autograd (kiln/autograd/node.py) keeps a private copy of a saved value that is about
to be overwritten in place, and only a value the rule reads needs one: so
``h = x @ w; h += b`` copies nothing, while ``a = np.exp(s); a /= a.sum()`` copies ``a``
once, before the division writes it.

The answer is read off the rule's code: a parameter its bytecode never loads (and no inner
function captures) is not read. Anything this cannot see through (a rule that is not a plain
function, ``*args`` rules, ``locals()``) counts as reading everything, so the answer can
only be too cautious (a needless copy), never wrong. Only opcode *name* patterns are used
(every ``LOAD`` of a fast or cell variable, ``LOAD_FAST_LOAD_FAST``'s pair of names in
3.13 included), so no per-version fact lives here.

    >>> import numpy as np
    >>> from kiln.ops import get_op
    >>> rule_reads(get_op("multiply"))
    (False, (True, True))
    >>> rule_reads(get_op("exp"))
    (True, (False,))
"""
from __future__ import annotations

import dis
import inspect
from typing import Any

_CACHE: dict[int, tuple[bool, tuple[bool, ...]]] = {}


def rule_reads(op: Any) -> tuple[bool, tuple[bool, ...]]:
    """(does ``op.vjp`` read ``out``, does it read each input) for ``op``'s declared inputs."""
    key = id(op)
    found = _CACHE.get(key)
    if found is None:
        found = _CACHE[key] = _scan(op.vjp, len(op.inputs))
    return found


def _scan(rule: Any, n_inputs: int) -> tuple[bool, tuple[bool, ...]]:
    everything = (True, (True,) * n_inputs)
    code = getattr(rule, "__code__", None)
    if code is None or not inspect.isfunction(rule) or code.co_flags & inspect.CO_VARARGS \
            or code.co_argcount < 2 + n_inputs:
        return everything
    if {"locals", "vars", "eval", "exec"} & set(code.co_names):
        return everything
    names = code.co_varnames[1:2 + n_inputs]          # out, then the inputs, by position
    loaded = _loaded_names(code)
    read = tuple(name in loaded or name in code.co_cellvars for name in names)
    return read[0], read[1:]


def _loaded_names(code: Any) -> set[str]:
    loaded: set[str] = set()
    for ins in dis.get_instructions(code):
        if "LOAD" in ins.opname and ("FAST" in ins.opname or "DEREF" in ins.opname):
            value = ins.argval
            loaded.update(value if isinstance(value, tuple) else (value,))
    return loaded
