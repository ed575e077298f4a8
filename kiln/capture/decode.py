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
import types
from dataclasses import dataclass
from typing import Any

import bytecode
from bytecode import Instr, Label, SetLineno

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
    abstract = bytecode.Bytecode.from_code(code)
    instructions: list[Inst] = []
    label_at: dict[int, int] = {}
    pending_jumps: list[tuple[Inst, Label]] = []
    lineno = code.co_firstlineno
    for item in abstract:
        if isinstance(item, Label):
            label_at[id(item)] = len(instructions)
        elif isinstance(item, SetLineno):
            lineno = item.lineno
        elif isinstance(item, Instr):
            if item.lineno is not None:
                lineno = item.lineno
            inst = Inst(len(instructions), item.name, item.arg, lineno)
            if isinstance(item.arg, Label):
                pending_jumps.append((inst, item.arg))
                inst.arg = None
            instructions.append(inst)
    for inst, label in pending_jumps:
        inst.target = label_at[id(label)]
        if inst.opname == "FOR_ITER":
            inst.target += for_iter_skip(instructions, inst.target)
    names = [i.opname for i in instructions]
    args = [i.arg for i in instructions]
    entries = exception_entries(code, len(instructions))
    handler_of = handlers_by_instruction(entries, len(instructions))
    for inst in instructions:
        inst.in_try = in_user_try(names, args, entries, handler_of, inst.index)
    decoded = DecodedCode(code, instructions, code.co_filename)
    _decode_cache[code_key(code)] = decoded
    return decoded


# (start, end, handler, depth, lasti) in decode()'s instruction indices, end inclusive.
Entry = tuple[int, int, int, int, bool]


def exception_entries(code: types.CodeType, count: int) -> list[Entry]:
    """The exception table of ``code`` in decode()'s indices (``count`` instructions)."""
    # dis instructions (minus CACHE/EXTENDED_ARG) match decode()'s one to one.
    offsets = [ins.offset for ins in dis.get_instructions(code)
               if ins.opname not in ("CACHE", "EXTENDED_ARG")]
    if len(offsets) != count:
        raise AssertionError("kiln bug: dis and bytecode disagree on instruction count")
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
