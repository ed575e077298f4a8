"""May a generator made in the function be run to its end where it is made?

Capture inlines a generator (a generator expression, a user generator function) when it
is made and keeps the values it yields (``IteratorVariable``). Python runs it item by
item, when the consumer asks: code that runs between its making and its last item and
changes what it reads (``h((v + 1 for v in l), l, x)`` where ``h`` appends to ``l``
first; ``for v in (r for r in x): x[2] += v``) would see stale items. So the early run
is kept only where nothing can run in between: the generator goes at once to a builtin
that drains it (``sum``, ``list``, ``np.fromiter``, unpacking), or to a loop or
comprehension whose body writes nothing a generator could read (no stores into items,
attributes, cells or globals, no calls but of known pure functions, augmented
assignments only to numbers or to arrays made in the function). Anything else runs the
generator as Python (a graph break where it is made).
"""
from __future__ import annotations

import builtins
import math
import types
from typing import Any

import numpy as np

from . import bytecode_facts as bc
from .decode import decode
from .variables.base import NULL

# Callables that drain an iterable argument before they return or call anything else.
_DRAINING = {builtins.sum, builtins.list, builtins.tuple, builtins.set, builtins.frozenset,
             builtins.dict, builtins.sorted, builtins.min, builtins.max, builtins.any,
             builtins.all, np.fromiter, np.array, np.asarray, math.fsum, math.prod}
# Instructions that drain the iterable on top of the stack.
_DRAINING_OPS = frozenset({"UNPACK_SEQUENCE", "UNPACK_EX", "LIST_EXTEND", "SET_UPDATE",
                           "CALL_FUNCTION_EX"})
# Loads with no effect that may come between the generator and the call that takes it
# (further arguments: ``np.fromiter(g, dtype=float)``).
_PLAIN_LOADS = frozenset({"LOAD_CONST", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF",
                          "LOAD_GLOBAL", "LOAD_FAST_LOAD_FAST", "LOAD_SMALL_INT"})
# Making a function (a lambda for ``key=``) after the generator: no code runs.
_MAKING_A_FUNCTION = frozenset({"MAKE_FUNCTION", "SET_FUNCTION_ATTRIBUTE", "LOAD_CLOSURE",
                                "BUILD_TUPLE"})
# Between GET_ITER and FOR_ITER of a 3.12+ inlined comprehension.
_COMPREHENSION_SETUP = frozenset({"LOAD_FAST_AND_CLEAR", "SWAP", "BUILD_LIST", "BUILD_SET",
                                  "BUILD_MAP", "PRECALL", "NOP"})
_WRITES = frozenset({"STORE_SUBSCR", "STORE_SLICE", "DELETE_SUBSCR", "STORE_ATTR",
                     "DELETE_ATTR", "STORE_DEREF", "DELETE_DEREF", "STORE_GLOBAL",
                     "DELETE_GLOBAL"})
_COMPREHENSIONS = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"})
# Calls a loop body may make: builtins and NumPy functions and array methods that write
# nothing (``out=`` aside, checked apart).
_PURE_NAMES = frozenset({
    "len", "range", "abs", "min", "max", "float", "int", "bool", "round", "isinstance",
    "print", "enumerate", "zip", "sum", "str", "repr", "tuple", "list", "sorted", "any",
    "all", "divmod", "pow", "reversed", "mean", "std", "var", "prod", "cumsum", "cumprod",
    "argmax", "argmin", "reshape", "ravel", "flatten", "transpose", "swapaxes", "squeeze",
    "copy", "astype", "dot", "item", "tolist", "clip", "conj", "matmul", "where", "zeros",
    "ones", "empty", "full", "zeros_like", "ones_like", "full_like", "empty_like", "arange",
    "linspace", "concatenate", "stack", "hstack", "vstack", "array", "asarray", "outer",
    "einsum", "diff", "trace", "diag", "norm", "sign"})


def drained_where_made(tx, gen_tx, inputs: list) -> bool:
    """Is the generator just made in ``tx`` (at ``tx.ip``, not pushed yet) drained before
    anything can change what it reads? ``gen_tx`` ran its body; ``inputs`` are the
    trackers it was called with."""
    insts = tx.decoded.instructions
    gen = object()
    stack = list(tx.stack) + [gen]
    i = tx.ip
    while i < len(insts):
        inst = insts[i]
        op = inst.opname
        if op in bc.CALL_PREFIX or op == "NOP":
            pass
        elif op in _PLAIN_LOADS and not bc.pushes_null(op, inst.arg):
            stack += [None] * bc.real_stack_effect(op, inst.arg, False)[1]
        elif op in _MAKING_A_FUNCTION:      # ``max(g, key=lambda t: t[0])``
            pops, pushes = bc.real_stack_effect(op, inst.arg, False)
            if gen in stack[len(stack) - pops:]:
                return False
            stack = stack[:len(stack) - pops] + [None] * pushes
        elif op in ("LOAD_ATTR", "LOAD_METHOD") and not bc.pushes_null(op, inst.arg) and \
                insts[i - 1].opname in ("LOAD_GLOBAL", "LOAD_ATTR"):
            pass                                   # ``dtype=np.float64``: a module's attribute
        elif op in _DRAINING_OPS:
            return stack[-1] is gen or op == "CALL_FUNCTION_EX" and stack[-2] is gen
        elif op in ("CALL", "CALL_KW"):
            nulls = tuple(k for k, v in enumerate(stack) if v is NULL)
            fn = stack[bc.callable_slot(op, inst.arg, len(stack), nulls)]
            if getattr(fn, "fn", None) in (builtins.zip, builtins.enumerate) and \
                    i + 1 < len(insts) and insts[i + 1].opname == "GET_ITER":
                return _loop_reads_only(tx, i + 2, gen_tx, inputs)   # ``for i, v in enumerate(g):``
            return _drains(fn, inputs, tx)
        elif op == "GET_ITER" and stack[-1] is gen:
            return _loop_reads_only(tx, i + 1, gen_tx, inputs)
        elif op == "RETURN_VALUE" and stack[-1] is gen and tx.parent is not None:
            return drained_where_made(tx.parent, gen_tx, inputs)   # a helper's: where its caller puts it
        else:
            return False
        i += 1
    return False


def _drains(fn: Any, inputs: list, tx) -> bool:
    code = getattr(fn, "code", None)
    if isinstance(code, types.CodeType) and code.co_name in _COMPREHENSIONS:
        return _writes_nothing(tx, decode(code).instructions, inputs, own_locals=False)
    method = getattr(fn, "method", None)      # ``", ".join(g)``
    if isinstance(method, types.BuiltinMethodType) and isinstance(method.__self__, str):
        return method.__name__ == "join"
    target = getattr(fn, "fn", None)
    try:
        return target in _DRAINING
    except TypeError:          # an unhashable callable
        return False


def _loop_reads_only(tx, i: int, gen_tx, inputs: list) -> bool:
    """After ``GET_ITER`` at ``i - 1``: a for loop or comprehension whose body changes
    nothing (a 3.11 comprehension is a call of its own code object), over a generator
    that changes nothing either (its writes would come before the body's reads)."""
    if not _writes_nothing(gen_tx, gen_tx.decoded.instructions, inputs, own_locals=True):
        return False
    insts = tx.decoded.instructions
    while i < len(insts) and insts[i].opname in _COMPREHENSION_SETUP:
        i += 1
    if i >= len(insts):
        return False
    inst = insts[i]
    if inst.opname == "FOR_ITER" and inst.target is not None and inst.target > i:
        return _writes_nothing(tx, insts[i + 1:inst.target], inputs, own_locals=True)
    if inst.opname in ("CALL", "CALL_KW") and bc.oparg_of(inst.arg) == 0:
        nulls = tuple(k for k, v in enumerate(tx.stack) if v is NULL)
        return _drains(tx.stack[bc.callable_slot(inst.opname, inst.arg, len(tx.stack) + 1, nulls)],
                       inputs, tx)
    return False


def _writes_nothing(tx, body: list, inputs: list, own_locals: bool) -> bool:
    for k, inst in enumerate(body):
        op = inst.opname
        if op in _WRITES:
            return False
        if op == "BINARY_OP" and bc.BINARY_OPS.get(inst.arg) in bc.INPLACE_TO_PLAIN:
            after = body[k + 1] if k + 1 < len(body) else None
            if not (own_locals and after is not None and after.opname == "STORE_FAST"
                    and _rebinds_only(tx.locals.get(after.arg), inputs)):
                return False
        if op in bc.CALL_OPS and not _pure_call(body, k):
            return False
    return True


def _rebinds_only(value: Any, inputs: list) -> bool:
    """Does ``name += v`` leave every object the generator may read as it was? For a
    number, or an array the function made (no view) that the generator was not given."""
    from .variables.arrays import ArrayVariable
    from .variables.containers import DictVariable, ListVariable
    from .variables.functions import UserObjectVariable
    if value is None or any(value is v for v in inputs):
        return False
    if isinstance(value, ArrayVariable):
        return bool(value.scalar or (value.fresh and value.base is None))
    return not isinstance(value, (ListVariable, DictVariable, UserObjectVariable))


def _pure_call(body: list, k: int) -> bool:
    """Is the call at ``body[k]`` one of a known function that writes nothing? Its
    callable is found by walking back over the values its arguments pushed."""
    inst = body[k]
    if inst.opname == "CALL_FUNCTION_EX":
        return False
    prev = body[k - 1] if k else None
    if prev is not None and prev.opname in ("KW_NAMES", "LOAD_CONST") and \
            (prev.opname == "KW_NAMES" or inst.opname == "CALL_KW") and "out" in prev.arg:
        return False
    need = bc.call_pops(inst.opname, inst.arg)
    j = k - 1
    while j >= 0:   # (net effects: ``x.sum`` is LOAD_FAST x then a load replacing it)
        pops, pushes = bc.real_stack_effect(body[j].opname, body[j].arg, False)
        need -= pushes - pops
        if need <= 0:
            break
        j -= 1
    if j < 0:
        return False
    while j + 1 < k and body[j + 1].opname in ("LOAD_ATTR", "LOAD_METHOD"):
        j += 1
    load = body[j]
    if load.opname == "LOAD_GLOBAL":
        name = bc.load_global_arg(load.arg)[1]
    elif load.opname in ("LOAD_ATTR", "LOAD_METHOD"):
        name = bc.load_attr_arg(load.opname, load.arg)[1]
    else:
        return False
    if name in _PURE_NAMES:
        return True
    ufunc = vars(np).get(name)          # (not getattr: np.str warns)
    return isinstance(ufunc, np.ufunc) and bc.oparg_of(inst.arg) <= ufunc.nin   # np.add(a, b, c) writes c
