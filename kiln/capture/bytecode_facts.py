"""Everything kiln knows about CPython 3.11 bytecode, in one place.

Code objects are decoded with the ``bytecode`` package into a flat list of
:class:`Inst` (jump targets resolved to indices, the exception table turned into a
per-instruction "inside a try region" flag, line numbers and source text attached).
The translator only ever sees :class:`Inst` and the tables below; when kiln moves to a
new Python version this is the module that changes.

3.11 facts the translator relies on:

- ``LOAD_GLOBAL``'s argument is ``(push_null, name)``: with ``push_null`` a NULL is
  pushed *before* the value (the callable slot of the following ``CALL``).
- ``LOAD_METHOD`` pushes two values (method + self, or NULL + attribute); we always push
  NULL + the bound attribute, which ``CALL`` treats identically.
- ``PRECALL n`` is a no-op for us; ``CALL n`` pops ``n`` arguments, the callable and the
  NULL/self slot below it. ``KW_NAMES`` (argument: the tuple of names) applies to the next
  ``CALL``: the last ``len(names)`` arguments are keywords.
- ``CALL_FUNCTION_EX flags`` pops (kwargs dict if ``flags & 1``), the args tuple, the
  callable and the NULL pushed before it.
- ``MAKE_FUNCTION flags`` pops the code object (3.11 no longer pushes a qualified name),
  then closure (0x08), annotations (0x04), kw defaults (0x02), defaults (0x01).
- ``BINARY_OP``'s argument is an ``NB_*`` code covering both plain and in-place
  operators (:data:`BINARY_OPS`); ``COMPARE_OP``'s is a rich-comparison code.
- Comprehensions are nested functions called with the iterator as their only argument
  (named ``.0``); generator expressions are generator functions (``RETURN_GENERATOR``).
- The quickened "superinstructions" of 3.11 (``LOAD_FAST__LOAD_FAST``, ...) and the
  specialized forms exist only in the interpreter's private copy of the code;
  ``co_code`` and therefore ``bytecode`` always show the base instructions.
- ``CACHE`` entries and ``EXTENDED_ARG`` are dropped by the decoder.
"""
from __future__ import annotations

import dis
import linecache
import operator
import types
from dataclasses import dataclass
from typing import Any

import bytecode
from bytecode import BinaryOp, Compare, Instr, Label, SetLineno, TryBegin, TryEnd

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

UNARY_OPS = {"UNARY_NEGATIVE": operator.neg, "UNARY_POSITIVE": operator.pos,
             "UNARY_INVERT": operator.invert, "UNARY_NOT": operator.not_}


@dataclass
class Inst:
    """One decoded instruction: ``arg`` is decoded (names, constants, enums); jumps
    carry ``target`` (an index into the instruction list)."""
    index: int
    opname: str
    arg: Any
    lineno: int | None
    target: int | None = None
    in_try: bool = False

    def __repr__(self) -> str:
        arg = "" if self.arg is bytecode.UNSET else f" {self.arg!r}"
        return f"{self.index}: {self.opname}{arg}"


@dataclass
class DecodedCode:
    code: types.CodeType
    instructions: list[Inst]
    filename: str

    def source_line(self, lineno: int | None) -> str:
        if lineno is None:
            return ""
        return linecache.getline(self.filename, lineno).strip()


_decode_cache: dict[types.CodeType, DecodedCode] = {}


def decode(code: types.CodeType) -> DecodedCode:
    """Decode ``code`` into :class:`Inst` records (cached per code object)."""
    found = _decode_cache.get(code)
    if found is not None:
        return found
    abstract = bytecode.Bytecode.from_code(code)
    instructions: list[Inst] = []
    label_at: dict[int, int] = {}
    pending_jumps: list[tuple[Inst, Label]] = []
    try_depth = 0
    lineno = code.co_firstlineno
    for item in abstract:
        if isinstance(item, Label):
            label_at[id(item)] = len(instructions)
        elif isinstance(item, TryBegin):
            try_depth += 1
        elif isinstance(item, TryEnd):
            try_depth -= 1
        elif isinstance(item, SetLineno):
            lineno = item.lineno
        elif isinstance(item, Instr):
            if item.lineno is not None:
                lineno = item.lineno
            inst = Inst(len(instructions), item.name, item.arg, lineno, in_try=try_depth > 0)
            if isinstance(item.arg, Label):
                pending_jumps.append((inst, item.arg))
                inst.arg = None
            instructions.append(inst)
    for inst, label in pending_jumps:
        inst.target = label_at[id(label)]
    decoded = DecodedCode(code, instructions, code.co_filename)
    _decode_cache[code] = decoded
    return decoded


def cell_name(arg: Any) -> str:
    """The variable name of a CellVar/FreeVar argument (LOAD_DEREF, MAKE_CELL, ...)."""
    return arg.name


def load_global_arg(arg: Any) -> tuple[bool, str]:
    """``LOAD_GLOBAL``'s argument as ``(push_null, name)``."""
    push_null, name = arg
    return bool(push_null), name


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
                            "RETURN_VALUE", "RERAISE", "RAISE_VARARGS"})
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
    "PRECALL", "BEFORE_WITH"})


def real_stack_effect(name: str, arg: Any, jump: bool) -> tuple[int, int]:
    """(values popped, values pushed) of one instruction as the interpreter runs it."""
    if name == "PRECALL" or name == "KW_NAMES":
        return 0, 0
    if name == "CALL":
        return arg + 2, 1
    if name == "CALL_FUNCTION_EX":  # NULL, callable, args tuple (, kwargs dict) -> result
        return 3 + (oparg_of(arg) & 1), 1
    if name == "LOAD_CONST":  # its argument is the constant itself (2**64 is no C int)
        return 0, 1
    if name == WITH_ENTER:      # the context manager -> its bound __exit__, __enter__()
        return 1, 2
    if name in ("POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_NONE",
                "POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_TRUE",
                "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_NONE",
                "POP_JUMP_BACKWARD_IF_NOT_NONE"):
        return 1, 0
    if name in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"):
        return (0, 0) if jump else (1, 0)
    if name == "FOR_ITER":
        return (1, 0) if jump else (0, 1)
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

LOCAL_STORES = frozenset({"STORE_FAST", "DELETE_FAST", "STORE_DEREF", "DELETE_DEREF"})
CELL_STORES = frozenset({"STORE_DEREF", "DELETE_DEREF"})


def is_cell_store(opname: str) -> bool:
    """Does this instruction write a closure cell of the frame?"""
    return opname in CELL_STORES
# A jump retargeted to a block placed later in the code must jump forward.
FORWARD_OF = {"JUMP_BACKWARD": "JUMP_FORWARD", "JUMP_BACKWARD_NO_INTERRUPT": "JUMP_FORWARD",
              "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_FORWARD_IF_TRUE",
              "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_FORWARD_IF_FALSE",
              "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_FORWARD_IF_NONE",
              "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_FORWARD_IF_NOT_NONE"}
