"""Resume functions and eager segments: new code objects derived from a function's own
bytecode (CPython 3.11-3.13), the bytecode half of partial graphs.

With ``bytecode_facts`` and ``flow`` (the control-flow analysis: liveness, regions, exits,
stack depths) this is the only module that knows opcodes. At a graph break the
compiled entry runs the graph captured so far, rebuilds the Python-visible state (the
value stack and the live locals) and calls an **eager segment**: the original code,
entered at the break (stack values and live locals are its arguments), running the
unsupported *region* as plain Python. Every way out of the region is redirected to an
exit block that calls the **resume function** for the instruction control reaches — the
original code entered there — and returns its result. Resume functions are compiled by
kiln like any function, on their first call.

Regions (:func:`region`): one instruction (a ``print`` call, a data-dependent jump: its
two exits resume separately; a loop's ``FOR_ITER`` or back edge: each iteration resumes
at the body), or, when the break is inside a ``try`` or a ``with``, that whole statement
(it runs as Python; what comes after it is compiled again). A user context manager's
with statement is *entered* as a region of its own (up to ``BEFORE_WITH``): the resume
function starts inside the body with the bound ``__exit__`` on its stack and the with's
handler in its exception table (:func:`open_withs`).

    >>> import numpy as np
    >>> def f(x):
    ...     y = x + 1
    ...     return y * 2
    >>> facts = code_facts(f.__code__)
    >>> k = index_of(facts, "BINARY_OP", 1)       # the ``*``: the stack holds y and 2
    >>> r = resume_function(f, k, 2, (), ())      # arguments: ___stack0, ___stack1
    >>> r(np.ones(1), 3)
    array([3.])

Pitfalls this module exists for (measured-here.md section 1): jumping into a try region
needs the region split, or CPython writes depth 32768 into the exception table and
segfaults on the first exception there; 3.11's ``PRECALL``/``CALL`` split the call's
stack effect between them; NULLs beside callables cannot be passed as arguments.
Per-version facts (call sequences, the NULL's side, FOR_ITER's landing, 3.13's TO_BOOL
before a jump) come from ``bytecode_facts``; this module only arranges instructions.
"""
from __future__ import annotations

import builtins
import dataclasses
import types
from dataclasses import dataclass
from typing import Any, Callable

import bytecode
from bytecode import CellVar, Instr, Label, TryBegin, TryEnd

from . import bytecode_facts as bf
from .decode import code_key
# The control-flow analysis (flow.py); its names are this module's API too.
from .flow import (NO_FALLTHROUGH, ORIGIN, PROLOGUE_OPS, SINGLE_OK, CodeFacts,  # noqa: F401
                   Origin, _leaving, _lock, origin, original,
                   _real_effect, after_straight, code_facts, exit_depths, exits, in_open_with, kept_nulls,
                   index_of, is_straight, live_locals, members, open_withs, open_withs_at_entry,
                   region, region_exit_of, successors, through_jumps)

STACK_PREFIX = "___stack"
TMP_PREFIX = "___tmp"


_templates: dict[tuple, bytecode.Bytecode] = {}   # code_key -> the decoded original


def _fresh_bytecode(code: types.CodeType) -> bytecode.Bytecode:
    """A private copy of ``code``'s abstract bytecode, to edit. The package decodes a code
    object in ~3-4 ms (a function of a few hundred instructions), and a function with
    several breaks asks for one copy per resume function and segment: it is decoded once,
    then copied item by item (~10x faster), with new labels and try ranges so that no edit
    of a copy reaches the template or another copy."""
    template = _templates.get(code_key(code))
    if template is None:
        template = _templates.setdefault(code_key(code), bytecode.Bytecode.from_code(code))
    renewed: dict[int, Any] = {}   # id of a template Label or TryBegin -> the copy's

    def label(old: Label) -> Label:
        new = renewed.get(id(old))
        if new is None:
            new = renewed[id(old)] = Label()
        return new

    items: list = []
    for item in template:
        if isinstance(item, Instr):
            new = item.copy()
            if isinstance(item.arg, Label):
                new.arg = label(item.arg)
            items.append(new)
        elif isinstance(item, Label):
            items.append(label(item))
        elif isinstance(item, TryBegin) and isinstance(item.target, Label):
            # (one TryBegin may stand at several places: the copy keeps that)
            if id(item) not in renewed:
                renewed[id(item)] = TryBegin(label(item.target), item.push_lasti, item.stack_depth)
            items.append(renewed[id(item)])
        elif isinstance(item, TryEnd) and id(item.entry) in renewed:
            items.append(TryEnd(renewed[id(item.entry)]))
        else:   # (nothing else comes out of from_code today: decode this one afresh)
            return bytecode.Bytecode.from_code(code)
    copy = template.copy()
    copy[:] = items
    copy.argnames, copy.cellvars, copy.freevars = (list(template.argnames), list(template.cellvars),
                                                   list(template.freevars))
    return copy


def _split_body(facts: CodeFacts):
    """(prologue Instrs, body items, the body Instrs in decode order) of a fresh copy."""
    abstract = _fresh_bytecode(facts.code)
    items = list(abstract)
    instrs_seen = 0
    cut = 0
    for pos, item in enumerate(items):
        if isinstance(item, Instr):
            instrs_seen += 1
            if instrs_seen == facts.prologue_len:
                cut = pos + 1
                break
    prologue = [it for it in items[:cut] if isinstance(it, Instr)]
    body = items[cut:]
    return abstract, prologue, body


def _place_label(body: list, target: Instr, label: Label) -> None:
    """Insert ``label`` right before ``target``, splitting the try region it sits in."""
    active = None
    for pos, item in enumerate(body):
        if isinstance(item, TryBegin):
            active = item
        elif isinstance(item, TryEnd):
            active = None
        elif item is target:
            if active is None:
                body.insert(pos, label)
                return
            fresh = TryBegin(active.target, active.push_lasti, active.stack_depth)
            body[pos:pos] = [TryEnd(active), label, fresh]
            for later in body[pos + 3:]:
                if isinstance(later, TryEnd) and later.entry is active:
                    later.entry = fresh
            return
    raise AssertionError("kiln bug: resume target not found")


def _body_instrs(body: list) -> list[Instr]:
    return [it for it in body if isinstance(it, Instr)]


def _stack_loads(nstack: int, nulls: tuple, lineno: int | None) -> list[Instr]:
    loads = []
    for slot in range(nstack):
        if slot in nulls:
            loads.append(Instr("PUSH_NULL", lineno=lineno))
        else:
            loads.append(Instr("LOAD_FAST", f"{STACK_PREFIX}{slot}", lineno=lineno))
    return loads


def _finish(abstract, items: list, facts: CodeFacts, args: list[str],
            qualname: str) -> tuple[types.CodeType, bool]:
    """The code object of ``items``, and whether its superinstructions were split."""
    code = facts.code
    unfused = bf.unfuse(items, list(args))
    abstract.clear()
    abstract.extend(items if unfused is None else unfused)
    abstract.argnames = list(args)
    abstract.argcount = len(args)
    abstract.posonlyargcount = 0
    abstract.kwonlyargcount = 0
    abstract.flags = abstract.flags & ~(bf.CO_VARARGS | bf.CO_VARKEYWORDS)
    abstract.name = code.co_name
    abstract.qualname = qualname
    # Keep the original exception-table depths: the code is entered with the original stack
    # layout, so they are exact, whereas the package recomputes a handler's depth from the
    # try ranges it can reach, and a range jumped over (the outer with around a resume point
    # inside a nested with) leaves it one too deep: __exit__ of the inner with called twice.
    # (Its stack size is computed here, through the package's control-flow graph, which also
    # puts the try ranges back in order: given a bound instead, a copy entered inside a with
    # came out with overlapping exception-table entries.)
    return abstract.to_code(compute_exception_stack_depths=False), unfused is not None


def _entry_args(nstack: int, nulls: tuple, local_names: tuple) -> list[str]:
    return [f"{STACK_PREFIX}{s}" for s in range(nstack) if s not in nulls] + list(local_names)


def _set_try_depths(facts: CodeFacts, body: list, instrs: list[Instr]) -> None:
    """Give every try range its handler's original depth (see _finish)."""
    index = {id(ins): facts.prologue_len + p for p, ins in enumerate(instrs)}
    depth_at = {h: d for _, _, h, d, _ in facts.entries}
    handler_of_label: dict[int, int] = {}
    pending: list[Label] = []
    for item in body:
        if isinstance(item, Label):
            pending.append(item)
        elif isinstance(item, Instr):
            for lab in pending:
                handler_of_label[id(lab)] = index[id(item)]
            pending = []
    for item in body:
        if isinstance(item, TryBegin):
            h = handler_of_label.get(id(item.target))
            if h is None or h not in depth_at:
                raise AssertionError("kiln bug: a try range's handler is not in the table")
            item.stack_depth = depth_at[h]


def _enter(facts: CodeFacts, k: int, nstack: int, nulls: tuple):
    """A fresh copy of the code that starts at instruction ``k`` with the stack reloaded."""
    abstract, prologue, body = _split_body(facts)
    instrs = _body_instrs(body)
    target = instrs[k - facts.prologue_len]
    label = Label()
    _place_label(body, target, label)
    _set_try_depths(facts, body, instrs)
    lineno = facts.linenos[k]
    head = [Instr(i.name, i.arg, lineno=lineno) if i.arg is not bytecode.UNSET else Instr(i.name, lineno=lineno)
            for i in prologue]
    head += _stack_loads(nstack, nulls, lineno)
    if facts.names[k] in bf.NEEDS_BOOL:
        # 3.13: the original TO_BOOL before this jump ran in the capture, which passes the
        # value itself; a jump given a non-bool would silently take the wrong branch.
        head.append(Instr("TO_BOOL", lineno=lineno))
    head.append(Instr("JUMP_FORWARD", label, lineno=lineno))
    return abstract, head, body, instrs


_resume_codes: dict[tuple, types.CodeType] = {}


def resume_code(code: types.CodeType, k: int, nstack: int, nulls: tuple,
                local_names: tuple) -> types.CodeType:
    """The original code entered at instruction ``k``: arguments are the non-NULL stack
    values (``___stack0``...) then ``local_names``. Cached per (code, k, layout)."""
    key = (code_key(code), k, nstack, nulls, local_names)
    found = _resume_codes.get(key)
    if found is not None:
        return found
    facts = code_facts(code)
    abstract, head, body, instrs = _enter(facts, k, nstack, nulls)
    qualname = f"{code.co_qualname}.<resume at {k}>"
    new, split = _finish(abstract, head + body, facts, _entry_args(nstack, nulls, local_names), qualname)
    # A break inside it plans from the original code (partial.plan), as on 3.11: the
    # superinstructions a split copy has two instructions for stay mapped to one.
    split_at = tuple(facts.prologue_len + p for p, ins in enumerate(instrs)
                     if ins.name in bf.SUPERINSTRUCTIONS) if split else ()
    with _lock:
        _resume_codes[key] = new
        ORIGIN[code_key(new)] = Origin(code, len(head) - facts.prologue_len, k, split_at)
    return new


def resume_function(fn: types.FunctionType, k: int, nstack: int, nulls: tuple,
                    local_names: tuple) -> types.FunctionType:
    code = resume_code(fn.__code__, k, nstack, nulls, local_names)
    return types.FunctionType(code, fn.__globals__, fn.__name__, None, fn.__closure__)



@dataclass
class Exit:
    """Where a segment goes when control leaves its region at instruction ``target``.

    ``call`` is the resume function. With ``local_names`` (exits of one-instruction regions,
    where the bound locals are known) it is called as ``call(*stack, *locals)``; without,
    as ``call(stack_tuple, locals())`` and picks the live bound locals itself."""
    target: int
    depth: int
    nulls: tuple
    call: Callable
    local_names: tuple | None = None


class _ExitSlot:
    """A segment template's constant where an exit's ``call`` goes (no two are equal)."""
    __slots__ = ()


_segment_codes: dict[tuple, tuple[types.CodeType, tuple]] = {}


def segment_code(code: types.CodeType, a: int, b: int, nstack: int, nulls: tuple,
                 local_names: tuple, exit_specs: list[Exit],
                 opened: frozenset = frozenset()) -> types.CodeType:
    """The original code entered at ``a`` running ``[a, b]`` as Python; every exit calls
    its resume function and returns the result. The calls are the code's only constants
    that change from one capture of the break to the next (each capture, a recompile or
    a loop's next trip, brings its own): the code is assembled once per (code, region,
    layout, exits) with a placeholder for each call (~5 ms each, 107 times for 7 breaks
    in six real6 programs), and each segment is that template with its calls put in."""
    key = (code_key(code), a, b, nstack, nulls, local_names, opened,
           tuple((e.target, e.depth, e.nulls, e.local_names) for e in exit_specs))
    found = _segment_codes.get(key)
    if found is None:
        slots = tuple(_ExitSlot() for _ in exit_specs)
        template = _segment_code(code, a, b, nstack, nulls, local_names,
                                 [dataclasses.replace(e, call=slot) for e, slot in zip(exit_specs, slots)],
                                 opened)
        with _lock:
            found = _segment_codes.setdefault(key, (template, slots))
    template, slots = found
    calls = {id(slot): spec.call for slot, spec in zip(slots, exit_specs)}
    return template.replace(co_consts=tuple(calls.get(id(c), c) for c in template.co_consts))


def _segment_code(code: types.CodeType, a: int, b: int, nstack: int, nulls: tuple,
                  local_names: tuple, exit_specs: list[Exit], opened: frozenset) -> types.CodeType:
    facts = code_facts(code)
    abstract, head, body, instrs = _enter(facts, a, nstack, nulls)
    first = facts.prologue_len
    labels = {e.target: Label() for e in exit_specs}
    pads: list = []   # FOR_ITERs retargeted to an exit land on what the interpreter skips
    falls: list[tuple[int, int]] = []
    for k, t, fallthrough in _leaving(facts, members(facts, a, b, opened)):
        if t not in labels:
            continue
        instr = instrs[k - first]
        if fallthrough:
            falls.append((k, t))
        elif instr.name == "FOR_ITER" and bf.FOR_ITER_SKIPS:
            pad = Label()
            pads += [pad, *bf.for_iter_landing(facts.linenos[k]),
                     Instr("JUMP_FORWARD", labels[t], lineno=facts.linenos[k])]
            instr.arg = pad
        else:
            instr.set(bf.FORWARD_OF.get(instr.name, instr.name), labels[t])  # exits come last
    for k, t in falls:
        last = instrs[k - first]
        pos = next(p for p, it in enumerate(body) if it is last)
        body.insert(pos + 1, Instr("JUMP_FORWARD", labels[t], lineno=facts.linenos[k]))
    tail: list = pads
    cellvars = set(code.co_cellvars)
    for spec in exit_specs:
        lineno = facts.linenos[b]
        tail.append(labels[spec.target])
        for slot in reversed(range(spec.depth)):
            name = "___null" if slot in spec.nulls else f"{TMP_PREFIX}{slot}"
            tail.append(Instr("STORE_FAST", name, lineno=lineno))
        values = [Instr("LOAD_FAST", f"{TMP_PREFIX}{s}", lineno=lineno)
                  for s in range(spec.depth) if s not in spec.nulls]
        call = Instr("LOAD_CONST", spec.call, lineno=lineno)
        if spec.local_names is not None:
            args = values + [Instr("LOAD_DEREF", CellVar(n), lineno=lineno) if n in cellvars
                             else Instr("LOAD_FAST", n, lineno=lineno) for n in spec.local_names]
            tail += bf.call_instrs(call, args, len(args), lineno)
        else:   # call(stack_tuple, locals())
            args = values + [Instr("BUILD_TUPLE", len(values), lineno=lineno)]
            args += bf.call_instrs(Instr("LOAD_CONST", builtins.locals, lineno=lineno), [], 0, lineno)
            tail += bf.call_instrs(call, args, 2, lineno)
        tail.append(Instr("RETURN_VALUE", lineno=lineno))
    qualname = f"{code.co_qualname}.<segment at {a}>"
    return _finish(abstract, head + body + tail, facts, _entry_args(nstack, nulls, local_names), qualname)[0]


def segment_function(fn: types.FunctionType, code: types.CodeType, *args: Any) -> types.FunctionType:
    new = segment_code(code, *args)
    return types.FunctionType(new, fn.__globals__, fn.__name__, None, fn.__closure__)


def is_generated(code: types.CodeType) -> bool:
    return code_key(code) in ORIGIN


__all__ = ["CodeFacts", "code_facts", "region", "exits", "exit_depths",
           "live_locals", "members", "resume_code", "resume_function", "segment_code", "segment_function",
           "Exit", "origin", "original", "SINGLE_OK", "is_straight", "after_straight",
           "kept_nulls"]
