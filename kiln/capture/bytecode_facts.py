"""Everything kiln knows about CPython bytecode, for 3.11, 3.12 and 3.13, in one place.

Code objects are decoded (decode.py, with the ``bytecode`` package) into a flat list of
:class:`~kiln.capture.decode.Inst`. The translator, the resume-function generator
(resume.py) and partial graphs only ever see those records and the tables and functions
below; a new Python version is a new column here (and a new branch in frame_hook.c),
never a search through the translator.

Facts shared by the three versions:

- ``LOAD_GLOBAL``'s argument is ``(push_null, name)``; with ``push_null`` a NULL is pushed
  beside the value (the self slot of the following ``CALL``). A method load
  (3.11 ``LOAD_METHOD``, 3.12+ ``LOAD_ATTR`` with the method bit, argument
  ``(True, name)``) pushes two values: method + self, or NULL + the attribute; we always
  push NULL + the bound attribute, which ``CALL`` treats identically.
- ``CALL n`` pops ``n`` arguments, the callable and the NULL/self slot beside it.
- ``BINARY_OP``'s argument is an ``NB_*`` code covering both plain and in-place
  operators (:data:`BINARY_OPS`); ``COMPARE_OP``'s is a rich-comparison code.
- Generator expressions are generator functions (``RETURN_GENERATOR``).
- Specialized forms exist only in the interpreter's private copy of the code; ``co_code``
  and therefore ``bytecode`` always show the base instructions. ``CACHE`` entries and
  ``EXTENDED_ARG`` are dropped by the decoder.

What differs (each has its table or function below):

============================  ==================  ==================  ==================
fact                          3.11                3.12                3.13
============================  ==================  ==================  ==================
NULL beside a callable        below it            below it            above it
call sequence                 PRECALL n; CALL n   CALL n              CALL n
keyword names                 KW_NAMES; CALL      KW_NAMES; CALL      tuple; CALL_KW
method load                   LOAD_METHOD         LOAD_ATTR (1, n)    LOAD_ATTR (1, n)
conditional jumps             POP_JUMP_FORWARD/   POP_JUMP_IF_*       POP_JUMP_IF_*
                              BACKWARD_IF_*,      (forward only)      after TO_BOOL
                              JUMP_IF_*_OR_POP
FOR_ITER exhausted            jumps to target     skips END_FOR       skips END_FOR,
                                                                      POP_TOP
comprehensions                nested function     inlined (PEP 709)   inlined
synthetic handlers            none                comprehension,      the same
(comprehension_facts.py)                          generator StopIter
MAKE_FUNCTION                 flags               flags               SET_FUNCTION_ATTR.
f-strings                     FORMAT_VALUE        FORMAT_VALUE        CONVERT_VALUE,
                                                                      FORMAT_SIMPLE/SPEC
superinstructions in co_code  none                none                LOAD_FAST_LOAD_FAST,
                                                                      STORE_FAST_*_FAST
closure cells loaded with     LOAD_CLOSURE        LOAD_CLOSURE        LOAD_FAST (CellVar)
jumps left out of exception   none                JUMP_*              and POP_JUMP_IF_*
ranges (NEVER_RAISE)                                                  after TO_BOOL
a handler's jump to the code  JUMP_FORWARD        JUMP_BACKWARD       JUMP_BACKWARD_NO_
after its try/with            (inline handler)    (cold handler)      INTERRUPT
============================  ==================  ==================  ==================

FOR_ITER is normalised: :class:`Inst` ``target`` is where the interpreter really lands
when the iterator is exhausted (past the END_FOR it skips), with the iterator popped —
3.11's meaning on every version. Generated code that retargets a FOR_ITER puts a
landing pad (:func:`for_iter_landing`) at the new target.
"""
from __future__ import annotations

import dis
import operator
import sys
import types
from typing import Any

from bytecode import BinaryOp, CellVar, Compare, FreeVar, Instr

SUPPORTED_VERSIONS = ((3, 11), (3, 12), (3, 13))


def check_version(version: tuple = tuple(sys.version_info[:2])) -> tuple[int, int]:
    """The running CPython as ``(major, minor)``; an ImportError for one kiln has no
    bytecode tables for (a wrong table would mean wrong results, not a slow path)."""
    version = tuple(version[:2])
    if version not in SUPPORTED_VERSIONS or sys.implementation.name != "cpython":
        names = ", ".join(f"{a}.{b}" for a, b in SUPPORTED_VERSIONS)
        raise ImportError(
            f"kiln reads CPython bytecode and knows CPython {names}; this is "
            f"{sys.implementation.name} {'.'.join(map(str, version))}. Install kiln into a "
            f"virtual environment made with one of those (python3.12 -m venv .venv).")
    return version


PY = check_version()
# -- the per-version columns (see the table in the module docstring) ---------------------
NULL_ABOVE_CALLABLE = PY >= (3, 13)         # [callable, self_or_null, args...]
HAS_PRECALL = PY == (3, 11)
# what may come between a callable's load and its first argument's (3.13: ``np.array(ys)``
# is LOAD_ATTR array, PUSH_NULL, LOAD_FAST ys)
AFTER_CALLABLE = frozenset({"PUSH_NULL"}) if NULL_ABOVE_CALLABLE else frozenset()
# Instructions the interpreter skips after FOR_ITER's target when the iterator is done.
FOR_ITER_SKIPS = {(3, 11): (), (3, 12): ("END_FOR",), (3, 13): ("END_FOR", "POP_TOP")}[PY]
# 3.13 jumps and ``not`` only accept exact bools (TO_BOOL makes them): generated code that
# enters at one of these with a rebuilt value re-emits TO_BOOL first.
NEEDS_BOOL = frozenset({"POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "UNARY_NOT"}) \
    if PY >= (3, 13) else frozenset()
COND_JUMPS = frozenset({"POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE",
                        "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
                        "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_FALSE",
                        "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE"}) \
    if PY == (3, 11) else frozenset({"POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE",
                                     "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"})
CALL_OPS = frozenset({"CALL", "CALL_FUNCTION_EX", "CALL_KW"})
# 3.12+ places exception handlers (and what only they reach) at the end of the code: a
# try/with statement is its protected range plus handler blocks elsewhere, not one span.
COLD_HANDLERS = PY >= (3, 12)
# Instructions that cannot raise, which the compiler leaves out of the exception-table
# range of the statement they are in (3.12: unconditional jumps; 3.13 also the jump after
# TO_BOOL): an inlined comprehension's `if` test splits its range around them.
NEVER_RAISE = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "NOP"}) \
    | (COND_JUMPS if PY >= (3, 13) else frozenset())
# 3.12+'s builtin sum() adds exact Python floats with Neumaier's compensation (CPython's
# bltinmodule.c builtin_sum_impl): sum([1e16, 1.0, -1e16]) is 1.0, not 3.11's 0.0
# (variables/builtins.py call_sum). Not bytecode, but a per-version fact of the interpreter.
COMPENSATED_FLOAT_SUM = PY >= (3, 12)
# Capture budgets (translator.MAX_STEPS, the long-loop estimate) count 3.11 instructions,
# so a function gets the same budget on every version: 3.11 spends a PRECALL on every
# CALL; 3.13's TO_BOOL before a jump is free.
STEP_COST = {} if PY == (3, 11) else {"CALL": 2, "CALL_KW": 2, "TO_BOOL": 0}
# Instructions that belong to the CALL after them (they set interpreter state for it).
CALL_PREFIX = frozenset({"PRECALL", "KW_NAMES"})

CO_VARARGS = 0x04
CO_VARKEYWORDS = 0x08
CO_GENERATOR = 0x20
CO_COROUTINE = 0x80
CO_ASYNC_GENERATOR = 0x200

MAKE_FUNCTION_DEFAULTS = 0x01
MAKE_FUNCTION_KWDEFAULTS = 0x02
MAKE_FUNCTION_ANNOTATIONS = 0x04
MAKE_FUNCTION_CLOSURE = 0x08

CALL_FUNCTION_EX_KWARGS = 0x01

# NB_* code of BINARY_OP -> the operator function Python applies.
BINARY_OPS: dict[BinaryOp, Any] = {
    BinaryOp.ADD: operator.add, BinaryOp.AND: operator.and_,
    BinaryOp.FLOOR_DIVIDE: operator.floordiv, BinaryOp.LSHIFT: operator.lshift,
    BinaryOp.MATRIX_MULTIPLY: operator.matmul, BinaryOp.MULTIPLY: operator.mul,
    BinaryOp.REMAINDER: operator.mod, BinaryOp.OR: operator.or_, BinaryOp.POWER: operator.pow,
    BinaryOp.RSHIFT: operator.rshift, BinaryOp.SUBTRACT: operator.sub,
    BinaryOp.TRUE_DIVIDE: operator.truediv, BinaryOp.XOR: operator.xor,
    BinaryOp.INPLACE_ADD: operator.iadd, BinaryOp.INPLACE_AND: operator.iand,
    BinaryOp.INPLACE_FLOOR_DIVIDE: operator.ifloordiv, BinaryOp.INPLACE_LSHIFT: operator.ilshift,
    BinaryOp.INPLACE_MATRIX_MULTIPLY: operator.imatmul, BinaryOp.INPLACE_MULTIPLY: operator.imul,
    BinaryOp.INPLACE_REMAINDER: operator.imod, BinaryOp.INPLACE_OR: operator.ior,
    BinaryOp.INPLACE_POWER: operator.ipow, BinaryOp.INPLACE_RSHIFT: operator.irshift,
    BinaryOp.INPLACE_SUBTRACT: operator.isub, BinaryOp.INPLACE_TRUE_DIVIDE: operator.itruediv,
    BinaryOp.INPLACE_XOR: operator.ixor,
}

# In-place operator -> its plain counterpart (what a functional rewrite computes).
INPLACE_TO_PLAIN = {
    operator.iadd: operator.add, operator.iand: operator.and_, operator.ifloordiv: operator.floordiv,
    operator.ilshift: operator.lshift, operator.imatmul: operator.matmul, operator.imul: operator.mul,
    operator.imod: operator.mod, operator.ior: operator.or_, operator.ipow: operator.pow,
    operator.irshift: operator.rshift, operator.isub: operator.sub,
    operator.itruediv: operator.truediv, operator.ixor: operator.xor,
}

COMPARE_OPS: dict[Compare, Any] = {
    Compare.LT: operator.lt, Compare.LE: operator.le, Compare.EQ: operator.eq,
    Compare.NE: operator.ne, Compare.GT: operator.gt, Compare.GE: operator.ge,
}

# Python source spelling of operators, for symbolic scalar expressions.
OPERATOR_SYMBOLS = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
    operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.lshift: "<<",
    operator.rshift: ">>", operator.lt: "<", operator.le: "<=", operator.eq: "==",
    operator.ne: "!=", operator.gt: ">", operator.ge: ">=",
}
for _inplace, _plain in INPLACE_TO_PLAIN.items():
    OPERATOR_SYMBOLS[_inplace] = OPERATOR_SYMBOLS[_plain]

# 3.13's ``*_CAST`` comparisons feed a jump: the plain operator, whose truth the jump takes.
for _name in ("LT", "LE", "EQ", "NE", "GT", "GE"):
    if hasattr(Compare, _name + "_CAST"):
        COMPARE_OPS[getattr(Compare, _name + "_CAST")] = COMPARE_OPS[getattr(Compare, _name)]

UNARY_OPS = {"UNARY_NEGATIVE": operator.neg, "UNARY_POSITIVE": operator.pos,
             "UNARY_INVERT": operator.invert, "UNARY_NOT": operator.not_}
# CALL_INTRINSIC_1 (3.12+) -> the 3.11 opcode that did the same.
INTRINSIC_AS = {"INTRINSIC_UNARY_POSITIVE": "UNARY_POSITIVE",
                "INTRINSIC_LIST_TO_TUPLE": "LIST_TO_TUPLE"}

# f-string conversions: FORMAT_VALUE's low bits (3.11/3.12), CONVERT_VALUE's arg (3.13).
CONVERSIONS = {1: str, 2: repr, 3: ascii}
FORMAT_VALUE_SPEC = 0x04


def for_iter_skip(instructions: list, target: int) -> int:
    """How many instructions the interpreter skips at FOR_ITER's jump target."""
    for k, name in enumerate(FOR_ITER_SKIPS):
        got = instructions[target + k]
        got = getattr(got, "opname", got)
        if got != name:
            raise AssertionError(f"kiln bug: FOR_ITER's target is {got}, not {name}")
    return len(FOR_ITER_SKIPS)


def for_iter_landing(lineno: int | None) -> list[Instr]:
    """What a retargeted FOR_ITER's new target starts with (the interpreter skips it)."""
    return [Instr(name, lineno=lineno) for name in FOR_ITER_SKIPS]


def cell_name(arg: Any) -> str:
    """The variable name of a CellVar/FreeVar argument (LOAD_DEREF, MAKE_CELL, ...)."""
    return arg.name


def load_global_arg(arg: Any) -> tuple[bool, str]:
    """``LOAD_GLOBAL``'s argument as ``(push_null, name)``."""
    push_null, name = arg
    return bool(push_null), name


def called_bare(names: list[str], args: list) -> set[str]:
    """Globals called with no argument (``vars()``, ``dir()``): a ``LOAD_GLOBAL`` its
    ``CALL 0`` follows at once (3.11: after ``PRECALL 0``), or called with ``*args``."""
    out = set()
    for k in range(len(names) - 1):
        if names[k] != "LOAD_GLOBAL":
            continue
        j = k + 1 + (names[k + 1] in CALL_PREFIX)
        if j < len(names) and names[j] in CALL_OPS and (names[j] == "CALL_FUNCTION_EX" or oparg_of(args[j]) == 0):
            out.add(load_global_arg(args[k])[1])
    return out


def load_attr_arg(opname: str, arg: Any) -> tuple[bool, str]:
    """``(method load?, name)`` of LOAD_ATTR (3.12+: ``(bool, name)``) or LOAD_METHOD."""
    if opname == "LOAD_METHOD":
        return True, arg
    if isinstance(arg, tuple):
        return bool(arg[0]), arg[1]
    return False, arg


def load_super_attr_arg(arg: Any) -> tuple[bool, str]:
    """``(method load?, name)`` of 3.12+'s ``LOAD_SUPER_ATTR``, whose argument decodes as
    ``(method load, two-argument form, name)``."""
    return bool(arg[0]), arg[-1]


def pushes_null(opname: str, arg: Any) -> bool:
    """May this instruction push a NULL (or an unbound method) beside its value?"""
    if opname == "LOAD_GLOBAL":
        return bool(arg[0])
    if opname in ("LOAD_ATTR", "LOAD_METHOD"):
        return load_attr_arg(opname, arg)[0]
    if opname == "LOAD_SUPER_ATTR":
        return load_super_attr_arg(arg)[0]
    return False


def with_null(value: Any, null: Any) -> list:
    """``value`` and the NULL of a call slot, in this version's stack order."""
    return [value, null] if NULL_ABOVE_CALLABLE else [null, value]


def split_callable(lower: Any, upper: Any, null: Any) -> tuple[Any, Any]:
    """The two values below a call's arguments -> ``(callable, self or None)``."""
    if NULL_ABOVE_CALLABLE:               # [callable, self_or_null]
        return lower, (None if upper is null else upper)
    if lower is null:                     # [NULL, callable]
        return upper, None
    return lower, upper                   # [method, self]


# What a stack slot holds, for the check of a segment's exits (capture/exit_stacks.py).
NULL_KIND, MAYBE_NULL_KIND, VALUE_KIND = "NULL", "NULL or a value", "a value"


def pushed_kinds(opname: str, arg: Any, code: types.CodeType) -> tuple | None:
    """What an instruction of ``code`` that may push a NULL pushes, bottom first:
    ``PUSH_NULL``, a call's ``LOAD_GLOBAL`` (a NULL for certain), a method load (NULL or
    the method, the attribute decides), 3.12+'s ``LOAD_FAST_AND_CLEAR`` (a local that may
    be unbound; a cell variable's slot holds its cell from the prologue on). None for
    every other instruction (it pushes values only)."""
    if opname == "PUSH_NULL":
        return (NULL_KIND,)
    if opname == "LOAD_FAST_AND_CLEAR":
        return (VALUE_KIND if is_cell(arg, code) else MAYBE_NULL_KIND,)
    if pushes_null(opname, arg):
        null = NULL_KIND if opname == "LOAD_GLOBAL" else MAYBE_NULL_KIND
        return tuple(with_null(VALUE_KIND, null))
    return None


def call_pops(opname: str, arg: Any) -> int:
    """Values a call instruction pops (arguments, callable, its NULL/self slot, names)."""
    return real_stack_effect(opname, arg, False)[0]


def callable_slot(opname: str, arg: Any, depth: int, nulls: tuple) -> int:
    """Stack position of the function a call instruction calls (``depth`` values before it,
    NULLs at ``nulls``)."""
    if opname == "CALL_FUNCTION_EX":
        below = depth - (3 + (oparg_of(arg) & CALL_FUNCTION_EX_KWARGS))
    else:
        below = depth - call_pops(opname, arg)
    if NULL_ABOVE_CALLABLE:
        return below
    return below + 1 if below in nulls else below


def call_instrs(fn: Instr, args: list[Instr], n: int, lineno: int | None) -> list[Instr]:
    """Generated code calling the value ``fn`` loads with the ``n`` positional arguments
    that ``args`` push, in this version's call sequence."""
    null = Instr("PUSH_NULL", lineno=lineno)
    out = [fn, null] if NULL_ABOVE_CALLABLE else [null, fn]
    out += args
    if HAS_PRECALL:
        out.append(Instr("PRECALL", n, lineno=lineno))
    out.append(Instr("CALL", n, lineno=lineno))
    return out


# 3.13's fused loads/stores pack two local indices into 4 bits each: in generated code,
# whose locals are renumbered (the ___stack arguments come first), an index past 15 does
# not fit (``bytecode`` then writes a wrong pair). Generated code uses the plain pair.
SUPERINSTRUCTIONS = {"LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
                     "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST"),
                     "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST")}


def plain_parts(opname: str, arg: Any) -> list[tuple[str, Any]]:
    """One decoded instruction as the plain ``(opname, arg)`` steps it does, for comparing
    a tail 3.12+ copied into a ``break`` with its original: 3.13 may fuse two loads in
    one copy and not the other, and the original checks a local the copy knows is bound
    (``LOAD_FAST_CHECK``)."""
    if opname in SUPERINSTRUCTIONS:
        return list(zip(SUPERINSTRUCTIONS[opname], arg))
    if opname == "LOAD_FAST_CHECK":
        return [("LOAD_FAST", arg)]
    return [(opname, arg)]


def unfuse(items: list, argnames: list[str]) -> list | None:
    """``items`` with every superinstruction split in two when one of them names a local
    whose index (arguments first, then locals in order of appearance) passes 15; None
    when nothing needs splitting (the copy then keeps the original's instruction count)."""
    order = {n: i for i, n in enumerate(argnames)}
    for item in items:
        if isinstance(item, Instr) and isinstance(item.arg, str) and item.arg not in order:
            order[item.arg] = len(order)
        if isinstance(item, Instr) and item.name in SUPERINSTRUCTIONS:
            for n in item.arg:
                order.setdefault(getattr(n, "name", n), len(order))
    if not any(isinstance(it, Instr) and it.name in SUPERINSTRUCTIONS
               and any(order[getattr(n, "name", n)] > 15 for n in it.arg) for it in items):
        return None
    out = []
    for item in items:
        parts = SUPERINSTRUCTIONS.get(item.name) if isinstance(item, Instr) else None
        if parts is None:
            out.append(item)
        else:
            out += [Instr(name, arg, lineno=item.lineno) for name, arg in zip(parts, item.arg)]
    return out


def make_function_flags(arg: Any) -> int:
    """MAKE_FUNCTION's flags (3.13: none; SET_FUNCTION_ATTRIBUTE sets them one by one)."""
    return 0 if PY >= (3, 13) else arg


def local_accesses(opname: str, arg: Any) -> list[tuple[str, str]]:
    """The plain locals an instruction reads ("use") and writes ("def"), in order.
    Cell variables (3.13 loads them with LOAD_FAST, as CellVar) are not plain locals."""
    if isinstance(arg, (CellVar, FreeVar)):
        return []
    if opname in ("LOAD_FAST", "LOAD_FAST_CHECK", "DELETE_FAST"):
        return [("use", arg)]
    if opname == "LOAD_FAST_AND_CLEAR":
        return [("use", arg), ("def", arg)]
    if opname in ("STORE_FAST", "STORE_FAST_MAYBE_NULL"):
        return [("def", arg)]
    if opname == "LOAD_FAST_LOAD_FAST":
        return [("use", arg[0]), ("use", arg[1])]
    if opname == "STORE_FAST_STORE_FAST":
        return [("def", arg[0]), ("def", arg[1])]
    if opname == "STORE_FAST_LOAD_FAST":
        return [("def", arg[0]), ("use", arg[1])]
    return []


def is_cell(arg: Any, code: types.CodeType) -> bool:
    """Does this LOAD_FAST load a closure cell itself (3.13's LOAD_CLOSURE)? Its argument
    is a CellVar/FreeVar, or the name of an argument that is also a cell."""
    return isinstance(arg, (CellVar, FreeVar)) or arg in code.co_cellvars or arg in code.co_freevars


def is_generator_code(code: types.CodeType) -> bool:
    return bool(code.co_flags & CO_GENERATOR)


def is_async_code(code: types.CodeType) -> bool:
    return bool(code.co_flags & (CO_COROUTINE | CO_ASYNC_GENERATOR))


def parameter_layout(code: types.CodeType) -> tuple[list[str], list[str], str | None, str | None]:
    """``(positional names, keyword-only names, *args name, **kwargs name)`` of a code object."""
    names = code.co_varnames
    npos = code.co_argcount
    nkw = code.co_kwonlyargcount
    positional = list(names[:npos])
    kwonly = list(names[npos:npos + nkw])
    i = npos + nkw
    varargs = varkw = None
    if code.co_flags & CO_VARARGS:
        varargs = names[i]
        i += 1
    if code.co_flags & CO_VARKEYWORDS:
        varkw = names[i]
    return positional, kwonly, varargs, varkw


def cellvars(code: types.CodeType) -> tuple[str, ...]:
    return code.co_cellvars


def freevars(code: types.CodeType) -> tuple[str, ...]:
    return code.co_freevars


# -- facts the resume-function generator (resume.py) relies on ---------------------------
PROLOGUE_OPS = frozenset({"COPY_FREE_VARS", "MAKE_CELL", "RESUME"})
NO_FALLTHROUGH = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
                            "RETURN_VALUE", "RETURN_CONST", "RERAISE", "RAISE_VARARGS"})
# Instructions that leave the frame (nothing after them in the code is their statement's).
LEAVES_FRAME = frozenset({"RETURN_VALUE", "RETURN_CONST", "RERAISE", "RAISE_VARARGS"})
# Instructions a straight region may break at. Their pushes are never NULL (LOAD_METHOD and
# LOAD_GLOBAL may push one: their region runs up to the CALL consuming it, see region()).
BREAKABLE_ALONE = frozenset({
    "CALL", "CALL_FUNCTION_EX", "BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR", "STORE_ATTR",
    "LOAD_ATTR", "BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "FORMAT_VALUE",
    "UNPACK_SEQUENCE", "UNPACK_EX", "STORE_GLOBAL", "STORE_DEREF", "IMPORT_NAME", "IMPORT_FROM",
    "UNARY_NOT", "UNARY_NEGATIVE", "UNARY_INVERT", "UNARY_POSITIVE", "BUILD_STRING",
    "LIST_EXTEND", "LIST_APPEND", "BUILD_LIST", "BUILD_TUPLE", "BUILD_MAP", "BUILD_SLICE",
    "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE", "JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP",
    "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE", "FOR_ITER",
    "RAISE_VARARGS", "RETURN_VALUE", "MAKE_FUNCTION", "LOAD_DEREF", "LOAD_GLOBAL", "NOP",
    "POP_TOP", "PRINT_EXPR", "GET_ITER", "LOAD_ASSERTION_ERROR", "LOAD_METHOD", "KW_NAMES",
    "PRECALL", "BEFORE_WITH",
    # 3.12
    "RETURN_CONST", "BINARY_SLICE", "STORE_SLICE", "CALL_INTRINSIC_1", "POP_JUMP_IF_TRUE",
    "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE", "LOAD_SUPER_ATTR",
    # 3.13
    "CALL_KW", "TO_BOOL", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "CONVERT_VALUE",
    "SET_FUNCTION_ATTRIBUTE",
    # the code after a loop whose body returns (the graph ends at the loop's exit,
    # kiln/capture/loop_node.py _return_after): loads and stores of locals and constants
    "LOAD_CONST", "LOAD_FAST", "LOAD_FAST_CHECK", "STORE_FAST", "LOAD_FAST_LOAD_FAST"})


def real_stack_effect(name: str, arg: Any, jump: bool) -> tuple[int, int]:
    """(values popped, values pushed) of one instruction as the interpreter runs it."""
    if name == "PRECALL" or name == "KW_NAMES":
        return 0, 0
    if name == "CALL":
        return arg + 2, 1
    if name == "CALL_KW":      # callable, self_or_null, arguments, the names tuple
        return arg + 3, 1
    if name == "CALL_FUNCTION_EX":  # NULL, callable, args tuple (, kwargs dict) -> result
        return 3 + (oparg_of(arg) & 1), 1
    if name == "LOAD_CONST":  # its argument is the constant itself (2**64 is no C int)
        return 0, 1
    if name == WITH_ENTER:      # the context manager -> its bound __exit__, __enter__()
        return 1, 2
    if name in COND_JUMPS:
        return 1, 0
    if name in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"):
        return (0, 0) if jump else (1, 0)
    if name == "FOR_ITER":     # normalised: exhausted, it pops the iterator (see decode)
        return (1, 0) if jump else (0, 1)
    if name == "LOAD_FAST_LOAD_FAST":
        return 0, 2
    if name == "STORE_FAST_STORE_FAST":
        return 2, 0
    if name == "TO_BOOL":
        return 1, 1
    if name == "SET_FUNCTION_ATTRIBUTE":   # the value, the function -> the function
        return 2, 1
    if name in ("UNPACK_SEQUENCE",):
        return 1, arg
    if name == "UNPACK_EX":
        return 1, (arg & 0xFF) + (arg >> 8) + 1
    effect = dis.stack_effect(dis.opmap[name], oparg_of(arg) if dis.opmap[name] >= dis.HAVE_ARGUMENT
                              else None, jump=jump)
    return (0, effect) if effect >= 0 else (-effect, 0)


def oparg_of(arg: Any) -> int:
    if isinstance(arg, bool):
        return int(arg)
    if isinstance(arg, int):
        return arg
    if isinstance(arg, tuple) and len(arg) == 2 and isinstance(arg[0], bool):  # LOAD_GLOBAL
        return int(arg[0])
    if hasattr(arg, "value") and isinstance(getattr(arg, "value"), int):   # enums
        return arg.value
    return 0


# ``BEFORE_WITH`` pops the context manager and pushes its bound ``__exit__``, then the
# ``__enter__`` result; the ``__exit__`` stays on the stack for the whole body, so the with
# statement's own stack is one value below the depth at ``BEFORE_WITH``.
WITH_ENTER = "BEFORE_WITH"
# The handler of a with body starts with these two (WITH_EXCEPT_START calls the __exit__
# still on the stack with the exception); a try body's handler never does.
WITH_HANDLER = ("PUSH_EXC_INFO", "WITH_EXCEPT_START")


def is_with_handler(names: list[str], h: int) -> bool:
    return tuple(names[h:h + 2]) == WITH_HANDLER

LOCAL_STORES = frozenset({"STORE_FAST", "DELETE_FAST", "STORE_DEREF", "DELETE_DEREF",
                          "LOAD_FAST_AND_CLEAR", "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST",
                          "STORE_FAST_MAYBE_NULL"})
CELL_STORES = frozenset({"STORE_DEREF", "DELETE_DEREF"})


def is_cell_store(opname: str) -> bool:
    """Does this instruction write a closure cell of the frame?"""
    return opname in CELL_STORES


# Unconditional jumps back to a loop's head (the end of a while loop's iteration on 3.12+).
BACKWARD_JUMPS = frozenset({"JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"})
# The jump that ends every iteration of a ``while True:`` loop (no test: the loop ends by
# break or return), on every version; JUMP_BACKWARD_NO_INTERRUPT is a ``yield from``'s.
ENDLESS_LOOP_JUMP = "JUMP_BACKWARD"
# A jump retargeted to a block placed later in the code must jump forward (3.12+'s
# conditional jumps are forward-only already).
FORWARD_OF = {"JUMP_BACKWARD": "JUMP_FORWARD", "JUMP_BACKWARD_NO_INTERRUPT": "JUMP_FORWARD"}
if PY == (3, 11):
    FORWARD_OF.update({"POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_FORWARD_IF_TRUE",
                       "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_FORWARD_IF_FALSE",
                       "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_FORWARD_IF_NONE",
                       "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_FORWARD_IF_NOT_NONE"})
