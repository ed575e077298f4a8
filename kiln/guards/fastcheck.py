"""kiln's cache-hit path in C (``fastcheck.c``): the array guard (one call instead of
three attribute reads and a tuple per array argument) and the dispatcher base class
(trying the cache entries without a Python frame), entries checked and run in C, and
the call of an AOTFunction graph from a Python entry. Built with the configured compiler on
first use and cached on disk; without a working compiler, or with
``KILN_FAST_GUARDS=0``, the generated check functions keep the plain Python form and the
dispatcher stays Python (same answers, a little slower).

    >>> import numpy as np
    >>> check = array_check()
    >>> check is None or (check(np.ones((4, 3)), np.ndarray, np.dtype("float64"), (4, -1)),
    ...                   check(np.ones((4, 1)), np.ndarray, np.dtype("float64"), (4, -1)))
    True
"""
from __future__ import annotations

import ast
import inspect
import os
from types import ModuleType
from typing import Any, Callable

from ..cext import shipped_extension
from ..config import config

_C_SOURCE = os.path.join(os.path.dirname(__file__), "fastcheck.c")


def module() -> ModuleType | None:
    """The built extension, or None (disabled, or it cannot be built)."""
    return shipped_extension(_C_SOURCE, "_kiln_fastcheck_", "fastcheck") if config.fast_guards else None


def array_check() -> Callable | None:
    """``array_matches(x, np.ndarray, dtype, shape)``, or None."""
    m = module()
    return None if m is None else m.array_matches


def overlap_check() -> Callable | None:
    """``any_overlap(tuple_of_arrays) -> bool | None`` (np.may_share_memory over every pair;
    None: not all np.ndarrays), or None."""
    m = module()
    return None if m is None else m.any_overlap


def plain_run() -> type | None:
    """``PlainRun(forward, mutated, picks, copyto, on_error)``: aot's short path for a graph
    that writes its arguments (see fastcheck.c), or None."""
    m = module()
    return None if m is None else m.PlainRun


def dispatcher_base() -> type | None:
    """The C ``Dispatcher`` type a compiled function's class derives from, or None."""
    m = module()
    return None if m is None else m.Dispatcher


def simple_entry(fn: Any, guards: Any, graph: Any, input_codes: list[str], return_code: str,
                 python_entry: Callable, miss: Any, direct_owner: Any = None,
                 tensor_type: type | None = None, overlap: type | None = None,
                 run_eager: Any = None, note: str | None = None) -> Callable | None:
    """The cache entry run in C (``SimpleEntry`` in fastcheck_entry.c) when it can be: every
    fast guard is an identity, type or array check on a parameter, a global or a cell (or
    their attributes), the graph (or none) takes parameters, and the entry returns items of the graph's result or parameters.
    Calls it cannot take (keywords, defaults, another argument count) go to
    ``python_entry``, which checks the same guards. ``direct_owner``: the graph when it
    is an AOTFunction, whose ``_direct`` the entry calls for inputs that are not
    ``tensor_type`` (see fastcheck.c); ``overlap``: the exception it raises for arguments
    that overlap, on which the entry returns ``run_eager``; ``note``: the str it adds to an
    exception the graph raises (entries.raise_note). None: use ``python_entry``."""
    m, code = module(), fn.__code__
    checks = _checks(guards, code) if m is not None else None
    if checks is None:
        return None
    params = {name: i for i, name in enumerate(code.co_varnames[:code.co_argcount])}
    try:
        inputs = tuple(params[c] for c in input_codes) if graph is not None else ()
    except KeyError:        # an input that is not a parameter itself
        return None
    picks = _picks(return_code, params, graph is not None)
    if picks is None or len(inputs) > 32:
        return None
    items, single, constants = picks
    return _binding_defaults_of(fn, m.SimpleEntry(
        python_entry, code.co_argcount, checks, graph if graph is not None else None, inputs, items, single,
        miss, direct_owner, tensor_type, overlap, run_eager, constants if graph is None else None, note))


def frameless_entry_possible(fn: Any, guards: Any, return_code: str) -> bool:
    """Would :func:`simple_entry` make the entry of a call that compiled no graph, one
    that runs no Python at all: every guard checked in C, and a return of parameters and
    constants capture computed (``return x``; ``return a.shape[0] * 2`` under its shape
    guard is ``return 8``)? Such an entry costs less than running the function (a C
    caller's Python frame alone is ~30 ns)."""
    m, code = module(), fn.__code__
    if m is None or _checks(guards, code) is None:
        return False
    params = {name: i for i, name in enumerate(code.co_varnames[:code.co_argcount])}
    return _picks(return_code, params, False) is not None


def direct_entry_possible(fn: Any, guards: Any, input_codes: list[str], return_code: str) -> bool:
    """Would :func:`simple_entry` take these guards, graph inputs and return code (the
    graph then runs straight from C with the parameters)? The cost model's question."""
    m, code = module(), fn.__code__
    if m is None or _checks(guards, code) is None:
        return False
    params = {name: i for i, name in enumerate(code.co_varnames[:code.co_argcount])}
    return all(c in params for c in input_codes) and len(input_codes) <= 32 \
        and _picks(return_code, params, True) is not None


def eager_entry(fn: Any, guards: Any, python_entry: Callable, miss: Any) -> Callable | None:
    """An entry whose guards say "run the function as Python" (the cost model's verdict),
    checked in C and calling ``fn`` directly; None: use ``python_entry``."""
    return guarded_body(fn, guards, fn, python_entry, miss)


def guarded_body(fn: Any, guards: Any, body: Callable, python_entry: Callable,
                 miss: Any) -> Callable | None:
    """An entry whose guards are checked in C and whose ``body`` (a function of ``fn``'s
    signature: codegen.make_body, or ``fn`` itself) runs with the arguments when they
    hold; None: use ``python_entry``, which checks the same guards in Python before the
    same body (about 40 ns a guard there, a few here)."""
    m, code = module(), fn.__code__
    checks = _checks(guards, code) if m is not None else None
    if checks is None or code.co_argcount > 32:
        return None
    return _binding_defaults_of(fn, m.SimpleEntry(python_entry, code.co_argcount, checks, body,
                                                  tuple(range(code.co_argcount)), (), False, miss))


def _binding_defaults_of(fn: Any, entry: Any) -> Any:
    """``entry``, told whose defaults it binds when a call leaves them out (the copy
    codegen._finish gave the Python entry): a call that binds them after
    ``fn.__defaults__ = (...)`` goes to the Python entry, which misses, as it does itself
    (codegen.make_entry); calls that pass every argument check nothing more."""
    if getattr(fn, "__defaults__", None):
        entry.defaults_of = fn
    return entry


def checked_in_c(fn: Any, guards: Any) -> bool:
    """Would :func:`guarded_body` check these guards of ``fn`` in C?"""
    return module() is not None and fn.__code__.co_argcount <= 32 and _checks(guards, fn.__code__) is not None


def graph_caller(graph: Any, direct_owner: Any = None, tensor_type: type | None = None) -> Any:
    """What a Python entry calls its compiled ``graph`` through: ``GraphCall`` (in
    fastcheck.c) when the graph is an AOTFunction (``direct_owner``), which takes its
    cache-hit short path from C; else the graph itself."""
    m = module() if direct_owner is not None else None
    return graph if m is None else m.GraphCall(direct_owner, tensor_type)


MAX_DIMS = 32   # fastcheck.c's KILN_MAX_DIMS: an array guard's dimensions (NumPy allows 64)


def _checks(guards: Any, code: Any) -> tuple | None:
    """The guards as SimpleEntry specs, or None: a guard C does not do, or a signature
    with *args, **kwargs or keyword-only parameters (the Python entry binds those)."""
    if guards.c_specs is None or code.co_kwonlyargcount \
            or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return None
    params = {name: i for i, name in enumerate(code.co_varnames[:code.co_argcount])}
    checks = []
    for source, kind, *operands in guards.c_specs:
        path = _path(source, params, guards.ns)
        if path is None or kind == "array" and len(operands[2]) > MAX_DIMS:
            return None
        check = {"id": 0, "type": 1, "array": 2, "absent": 3, "writeable": 4, "equals": 5}[kind]
        checks.append(path + (check, *operands) + (None,) * (3 - len(operands)))
    return tuple(checks)


def _path(source: Any, params: dict, ns: Any) -> tuple | None:
    """``(root kind, a, b, attribute names)`` reaching ``source`` (see guard_holds in
    fastcheck.c), or None when it is not a parameter, global or cell plus attributes."""
    from ..capture.sources import (AttrSource, ClosureSource, GlobalSource, LocalSource,
                                   ModuleGlobalSource)
    attrs = []
    while isinstance(source, AttrSource):
        attrs.append(source.attr)
        source = source.base
    attrs = tuple(reversed(attrs))
    if isinstance(source, LocalSource) and source.name in params:
        return (0, params[source.name], None, attrs)
    if isinstance(source, GlobalSource):
        return (1, ns.values["_kiln_G"], source.name, attrs)
    if isinstance(source, ModuleGlobalSource):
        return (1, source.module_globals, source.name, attrs)
    if isinstance(source, ClosureSource) and source.name in ns.closure:
        return (2, ns.closure[source.name], None, attrs)
    return None


def _picks(return_code: str, params: dict, has_graph: bool) -> tuple[tuple, bool, tuple] | None:
    """``return_code`` as picks: k for ``_kiln_out[k]``, -1-i for parameter i, and with no
    graph k for constant k (immutable literals: numbers, strings, None, tuples of them);
    the constants; or None."""
    try:
        tree = ast.parse(return_code, mode="eval").body
    except SyntaxError:
        return None
    constants: list = []

    def pick(node: ast.AST) -> int | None:
        if isinstance(node, ast.Name) and node.id in params:
            return -1 - params[node.id]
        if (has_graph and isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                and node.value.id == "_kiln_out" and isinstance(node.slice, ast.Constant)
                and type(node.slice.value) is int and node.slice.value >= 0):
            return node.slice.value
        if not has_graph:
            try:
                value = ast.literal_eval(node)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                return None
            if _immutable(value):
                constants.append(value)
                return len(constants) - 1
        return None
    if isinstance(tree, ast.Tuple) and tree.elts:
        items = tuple(pick(e) for e in tree.elts)
        return None if None in items else (items, False, tuple(constants))
    one = pick(tree)
    return None if one is None else ((one,), True, tuple(constants))


def _immutable(value: Any) -> bool:
    if type(value) is tuple:
        return all(_immutable(v) for v in value)
    return value is None or type(value) in (bool, int, float, complex, str, bytes)
