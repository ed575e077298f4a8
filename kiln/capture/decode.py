"""Decoding a code object into kiln's instruction records.

``decode`` turns a code object, through the ``bytecode`` package, into a flat list of
:class:`Inst`: jump targets resolved to indices (FOR_ITER's to where the interpreter
really lands, bytecode_facts.for_iter_skip), the exception table turned into a
per-instruction "inside a try of the source" flag, line numbers attached. What differs
between Python versions stays in bytecode_facts.py; this module only applies it.
"""
from __future__ import annotations

import dis
import linecache
import opcode as _opcode
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import bytecode
from bytecode import Instr, Label
from bytecode.concrete import HAS_COMPARE, HAS_CONST, HAS_FREE, HAS_LOCAL, HAS_NAME
from bytecode.instr import (BINARY_OPS, BITFLAG2_OPCODES, BITFLAG_OPCODES, CACHE_OPCODE,
                            DUAL_ARG_OPCODES, EXTENDEDARG_OPCODE, FORMAT_VALUE_OPS,
                            HAS_ABSOLUTE_JUMP as _ABSOLUTE,
                            HAS_BACKWARD_RELATIVE_JUMP as _BACKWARD,
                            HAS_FORWARD_RELATIVE_JUMP as _FORWARD, INTRINSIC_1OP,
                            INTRINSIC_2OP, NOP_OPCODE, UNSET, BinaryOp, CellVar, Compare,
                            FormatValue, FreeVar, Intrinsic1Op, Intrinsic2Op,
                            opcode_has_argument)

from .bytecode_facts import for_iter_skip
from .comprehension_facts import is_synthetic_handler


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
    entries: list = field(default_factory=list)   # the exception table, in Entry tuples

    def source_line(self, lineno: int | None) -> str:
        if lineno is None:
            return ""
        return linecache.getline(self.filename, lineno).strip()


def code_key(code: types.CodeType) -> tuple:
    """The key of kiln's per-code-object tables. CPython's code objects compare (and hash)
    equal without their file name: two identical functions at the same line of two files
    are one key, and the second file's warnings, tracebacks and resume functions named the
    first file."""
    return code, code.co_filename


_decode_cache: dict[tuple, DecodedCode] = {}


def decode(code: types.CodeType) -> DecodedCode:
    """Decode ``code`` into :class:`Inst` records (cached per code object)."""
    found = _decode_cache.get(code_key(code))
    if found is not None:
        return found
    raw = _raw_instructions(code) if _FAST else _package_instructions(code)
    instructions = [Inst(k, name, None if target is not None else arg, lineno)
                    for k, (name, arg, lineno, _, _, target) in enumerate(raw)]
    index_at = {start: k for k, (_, _, _, start, _, _) in enumerate(raw)}
    for inst, (_, _, _, _, _, target) in zip(instructions, raw):
        if target is not None:
            inst.target = index_at[target]
            if inst.opname == "FOR_ITER":
                inst.target += for_iter_skip(instructions, inst.target)
    names = [i.opname for i in instructions]
    args = [i.arg for i in instructions]
    entries = _entries(code, [2 * unit for _, _, _, _, unit, _ in raw])
    handler_of = handlers_by_instruction(entries, len(instructions))
    for inst in instructions:
        inst.in_try = in_user_try(names, args, entries, handler_of, inst.index)
    decoded = DecodedCode(code, instructions, code.co_filename, entries)
    _decode_cache[code_key(code)] = decoded
    return decoded


# One instruction of a code object: (name, arg, line, the code unit it starts at (its
# EXTENDED_ARGs'), the code unit of its opcode, the code unit it jumps to or None).
Raw = tuple[str, Any, int, int, int, "int | None"]


def _package_instructions(code: types.CodeType) -> list[Raw]:
    """:func:`_raw_instructions` through the ``bytecode`` package's abstract bytecode
    (~4x slower): what the fast decoder is checked against (tests/capture/test_decode.py),
    and the decoder of Python versions it does not know."""
    out: list[list] = []
    label_at: dict[int, int] = {}
    jumps: list[tuple[list, Label]] = []
    lineno = code.co_firstlineno
    for item in bytecode.Bytecode.from_code(code):
        if isinstance(item, Label):
            label_at[id(item)] = len(out)
        elif isinstance(item, Instr):
            if item.lineno is not None:
                lineno = item.lineno
            row = [item.name, item.arg, lineno, len(out), len(out), None]
            if isinstance(item.arg, Label):
                jumps.append((row, item.arg))
                row[1] = None
            out.append(row)
    for row, label in jumps:
        row[5] = label_at[id(label)]
    offsets = [ins.offset for ins in dis.get_instructions(code)
               if ins.opname not in ("CACHE", "EXTENDED_ARG")]
    if len(offsets) != len(out):
        raise AssertionError("kiln bug: dis and bytecode disagree on instruction count")
    # (starts and jumps counted in instructions here: decode() only maps them to indices)
    return [(n, a, ln, s, off // 2, t) for (n, a, ln, s, _, t), off in zip(out, offsets)]


_FAST = (3, 11) <= sys.version_info[:2] <= (3, 13)


def _raw_instructions(code: types.CodeType) -> list[Raw]:
    """``code``'s instructions read straight from ``co_code``, their arguments decoded as
    the ``bytecode`` package's abstract bytecode has them (names, constants, CellVar and
    FreeVar, the package's enums: the rest of capture reads those), CACHE entries dropped,
    EXTENDED_ARGs folded into their instruction, lines inherited where an instruction has
    none. The package builds a whole abstract Bytecode (labels, try ranges, instruction
    objects) for this: ~6x the time, ~10% of a warm compile's CPU."""
    co = code.co_code
    varnames = code.co_varnames
    cells = list(varnames) + [CellVar(n) for n in code.co_cellvars if n not in varnames]
    ncells = len(cells)
    local_names = (cells + [FreeVar(n) for n in code.co_freevars if n not in varnames]
                   if sys.version_info >= (3, 13) else varnames)
    consts, names, freevars = code.co_consts, code.co_names, code.co_freevars
    opname = _opcode.opname
    out: list[Raw] = []
    lineno = code.co_firstlineno
    start = extended = None
    for unit, pos in enumerate(code.co_positions()):
        op = co[2 * unit]
        if op == CACHE_OPCODE:
            continue
        c_arg = co[2 * unit + 1] if opcode_has_argument(op) else UNSET
        if op == EXTENDEDARG_OPCODE:
            if extended is None:
                start, extended = unit, c_arg
            else:
                extended = (extended << 8) + c_arg
            continue
        if extended is not None:
            c_arg = UNSET if op == NOP_OPCODE else (extended << 8) + c_arg
        first, start, extended = (unit if start is None else start), None, None
        if pos[0] is not None:
            lineno = pos[0]
        name = opname[op]
        target = None
        if op in _FORWARD:
            target = unit + 1 + _caches(op, name) + c_arg
        elif op in _BACKWARD:
            target = unit + 1 + _caches(op, name) - c_arg
        elif op in _ABSOLUTE:
            target = c_arg
        if target is not None:
            arg = None
        elif op in HAS_CONST:
            arg = consts[c_arg]
        elif op in HAS_LOCAL:
            arg = ((local_names[c_arg >> 4], local_names[c_arg & 15]) if op in DUAL_ARG_OPCODES
                   else local_names[c_arg])
        elif op in HAS_NAME:
            if op in BITFLAG_OPCODES:
                arg = (bool(c_arg & 1), names[c_arg >> 1])
            elif op in BITFLAG2_OPCODES:
                arg = (bool(c_arg & 1), bool(c_arg & 2), names[c_arg >> 2])
            else:
                arg = names[c_arg]
        elif op in HAS_FREE:
            if c_arg < ncells:
                cell = cells[c_arg]
                arg = cell if isinstance(cell, CellVar) else CellVar(cell)
            else:
                arg = FreeVar(freevars[c_arg - ncells])
        elif op in HAS_COMPARE:
            arg = Compare((c_arg >> 5) + (16 if c_arg & 16 else 0) if sys.version_info >= (3, 13)
                          else (c_arg >> 4) if sys.version_info >= (3, 12) else c_arg)
        elif op in INTRINSIC_1OP:
            arg = Intrinsic1Op(c_arg)
        elif op in INTRINSIC_2OP:
            arg = Intrinsic2Op(c_arg)
        elif op in BINARY_OPS:
            arg = BinaryOp(c_arg)
        elif op in FORMAT_VALUE_OPS:
            arg = (bool(c_arg & 1), FormatValue(c_arg >> 1)) if op in BITFLAG_OPCODES else FormatValue(c_arg)
        else:
            arg = c_arg
        out.append((name, arg, lineno, first, unit, target))
    return out


def _caches(op: int, name: str) -> int:
    """The CACHE entries after opcode ``op`` (keyed by name from 3.13, as the package does)."""
    table = dis._inline_cache_entries   # type: ignore[attr-defined]
    return table.get(name, 0) if sys.version_info >= (3, 13) else table[op]


# (start, end, handler, depth, lasti) in decode()'s instruction indices, end inclusive.
Entry = tuple[int, int, int, int, bool]


def _entries(code: types.CodeType, offsets: list[int]) -> list[Entry]:
    """The exception table of ``code``, given the byte offset of each decoded instruction's
    opcode (its EXTENDED_ARGs and CACHEs are no instruction of decode's)."""
    index_at = {off: k for k, off in enumerate(offsets)}

    def index_before(off: int) -> int:
        k = index_at.get(off)
        while k is None:
            off -= 2
            k = index_at.get(off)
        return k

    return [(index_at[e.start], index_before(e.end - 2), index_at[e.target], e.depth, e.lasti)
            for e in dis._parse_exception_table(code)]


def handlers_by_instruction(entries: list[Entry], count: int) -> list[int | None]:
    """The entry (index into ``entries``) covering each instruction, or None."""
    handler_of: list[int | None] = [None] * count
    for e, (start, end, _, _, _) in enumerate(entries):
        for k in range(start, end + 1):
            handler_of[k] = e
    return handler_of


def in_user_try(names: list[str], args: list, entries: list[Entry],
                handler_of: list[int | None], k: int) -> bool:
    """Is instruction ``k`` inside a try or with of the source? A synthetic range counts
    exactly when its re-raise does (a comprehension inside a try body)."""
    for _ in range(len(entries) + 1):
        e = handler_of[k]
        if e is None:
            return False
        h = entries[e][2]
        if not is_synthetic_handler(names, args, h):
            return True
        k = h
        while names[k] != "RERAISE":
            k += 1
    return False
