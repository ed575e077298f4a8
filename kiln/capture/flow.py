"""Control flow of an original code object (CPython 3.11-3.13): the facts the resume and
segment generators (``resume.py``) need, computed once per code object.

:func:`code_facts` decodes the code (``bytecode_facts`` knows each version's opcodes) and
records loops, exception handlers, stack depths and liveness; on top of it, which
locals are live at an instruction, the with statements open there, a graph break's
*region* (one instruction, or the whole try/with statement around it), a region's exits
and the stack depth at each, and whether a span of instructions is straight-line code.
Nothing here builds code.

    >>> def f(x):
    ...     y = x + 1
    ...     z = y * 2
    ...     return z + y
    >>> facts = code_facts(f.__code__)
    >>> live_locals(facts, index_of(facts, "BINARY_OP", 1))   # at the ``*``: y is read again
    ['y']
"""
from __future__ import annotations

import threading
import types
from typing import Any
from dataclasses import dataclass, field

from . import bytecode_facts as bf
from . import comprehension_facts as cf
from .decode import code_key, decode, handlers_by_instruction

PROLOGUE_OPS, NO_FALLTHROUGH, SINGLE_OK = bf.PROLOGUE_OPS, bf.NO_FALLTHROUGH, bf.BREAKABLE_ALONE
_real_effect = bf.real_stack_effect

@dataclass
class CodeFacts:
    """What the generators need to know about one original code object."""
    code: types.CodeType
    names: list[str]                  # opname per instruction (decode()'s indices)
    args: list[Any]
    targets: list[int | None]
    linenos: list[int | None]
    entries: list[tuple[int, int, int, int, bool]]   # (start, end, handler, depth, lasti), inclusive
    handler_of: list[int | None]      # entry index covering each instruction
    loops: list[tuple[int, int]]      # (head, backward jump) pairs
    prologue_len: int
    live_in: list[frozenset] = field(default_factory=list)
    depth: list[int | None] = field(default_factory=list)   # stack depth before each instruction


_facts_cache: dict[tuple, CodeFacts] = {}   # code_key -> facts
_lock = threading.Lock()


def code_facts(code: types.CodeType) -> CodeFacts:
    found = _facts_cache.get(code_key(code))
    if found is not None:
        return found
    decoded = decode(code)
    insts = decoded.instructions
    names = [i.opname for i in insts]
    args = [i.arg for i in insts]
    targets = [i.target for i in insts]
    linenos = [i.lineno for i in insts]
    entries = decoded.entries
    handler_of = handlers_by_instruction(entries, len(insts))
    loops = loop_jumps(names, targets)
    prologue = 0
    while prologue < len(names) and names[prologue] in PROLOGUE_OPS | {"RETURN_GENERATOR", "POP_TOP"}:
        prologue += 1
        if names[prologue - 1] == "RESUME":
            break
    facts = CodeFacts(code, names, args, targets, linenos, entries, handler_of, loops, prologue)
    facts.live_in = _liveness(facts)
    facts.depth = _depths(facts)
    with _lock:
        _facts_cache[code_key(code)] = facts
    return facts


def loop_jumps(names: list[str], targets: list) -> list[tuple[int, int]]:
    """(head, backward jump) of every loop: a backward jump its target reaches without an
    exception (3.12+ with handlers jump back to the code after the statement)."""
    found = []
    for j, t in enumerate(targets):
        if t is None or t > j:
            continue
        seen, work = set(), [t]
        while work and j not in seen:
            k = work.pop()
            if k in seen or k >= len(names):
                continue
            seen.add(k)
            if names[k] not in NO_FALLTHROUGH:
                work.append(k + 1)
            if targets[k] is not None:
                work.append(targets[k])
        if j in seen:
            found.append((t, j))
    return found


def index_of(facts: CodeFacts, opname: str, occurrence: int = 0) -> int:
    """Index of the ``occurrence``-th instruction named ``opname`` (tests and docs)."""
    found = [k for k, n in enumerate(facts.names) if n == opname]
    return found[occurrence]


# -- analyses ----------------------------------------------------------------------------
def successors(facts: CodeFacts, k: int) -> list[int]:
    out = []
    name = facts.names[k]
    if name not in NO_FALLTHROUGH and k + 1 < len(facts.names):
        out.append(k + 1)
    if facts.targets[k] is not None:
        out.append(facts.targets[k])
    if facts.handler_of[k] is not None:
        out.append(facts.entries[facts.handler_of[k]][2])
    return out


def _liveness(facts: CodeFacts) -> list[frozenset]:
    """Locals read before written on some path from each instruction (cells: always live)."""
    n = len(facts.names)
    uses: list[set] = [set() for _ in range(n)]
    defs: list[set] = [set() for _ in range(n)]
    saves, restores = cf.comprehension_restores(
        facts.names, facts.args, facts.targets,
        lambda k: None if facts.handler_of[k] is None else facts.entries[facts.handler_of[k]][2])
    for k, (name, arg) in enumerate(zip(facts.names, facts.args)):
        if k in saves:
            continue
        for kind, var in bf.local_accesses(name, arg):
            if (k, var) in restores:
                continue
            if kind == "use" and var not in defs[k]:
                uses[k].add(var)
            elif kind == "def":
                defs[k].add(var)
    live: list[set] = [set() for _ in range(n)]
    changed = True
    while changed:
        changed = False
        for k in range(n - 1, -1, -1):
            out = set()
            for s in successors(facts, k):
                out |= live[s]
            new = uses[k] | (out - defs[k])
            if new != live[k]:
                live[k] = new
                changed = True
    return [frozenset(s) for s in live]


def live_locals(facts: CodeFacts, k: int) -> list[str]:
    """Plain locals live at ``k`` plus every cell variable, in co_varnames order."""
    code = facts.code
    live = facts.live_in[k]
    names = [v for v in code.co_varnames if v in live]
    return names + [c for c in code.co_cellvars if c not in names]


def open_withs(facts: CodeFacts, entry: int) -> frozenset:
    """Handlers of the with statements whose body contains instruction ``entry``: a resume
    function entered there runs inside them (their ``__exit__`` is on its stack and their
    handler in its exception table)."""
    spans: dict[int, tuple[int, int]] = {}
    for start, end, h, _, _ in facts.entries:
        if bf.is_with_handler(facts.names, h):
            lo, hi = spans.get(h, (start, end))
            spans[h] = (min(lo, start), max(hi, end))
    return frozenset(h for h, (lo, hi) in spans.items() if lo <= entry <= hi)


def open_withs_at_entry(code: types.CodeType) -> frozenset:
    """Handlers of the with statements a resume function starts inside (empty otherwise)."""
    o = origin(code)
    return frozenset() if o.code is code else open_withs(code_facts(o.code), o.entry)


def in_open_with(code: types.CodeType, k: int) -> bool:
    """Is instruction ``k`` of ``code`` (a resume function) in the body of a with statement
    that was already open where the function starts (and in no try/with inside it)?"""
    o = origin(code)
    if o.code is code:
        return False
    facts = code_facts(o.code)
    i, entry = o.to_original(k), o.entry
    e = facts.handler_of[i] if 0 <= i < len(facts.names) else None
    return e is not None and facts.entries[e][2] in open_withs(facts, entry)


# loads of a variable's value, which can break only on the value itself
_VARIABLE_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST", "LOAD_DEREF",
                             "LOAD_GLOBAL", "LOAD_NAME", "LOAD_CLASSDEREF"})


def region(facts: CodeFacts, i: int, open_with: bool = False,
           opened: frozenset = frozenset()) -> tuple[int, int]:
    """The instructions ``[a, b]`` that run as Python for a break at ``i``: ``i`` alone, or
    the whole outermost loop / try / with statement containing it. ``open_with``: the
    break enters a with statement whose body compiles (a user context manager): the region
    ends at its ``BEFORE_WITH``. ``opened``: handlers of with statements already open (a
    resume function inside their body): a break in their body stays a break there."""
    names = facts.names
    a = b = i
    while names[b] in bf.CALL_PREFIX and b + 1 < len(names):
        # A break between a call's halves (the step limit can stop capture anywhere): run
        # the whole call. The assembler counts PRECALL's pops where the interpreter counts
        # them at CALL, so an exit between the two has no depth both agree on.
        b += 1
    if bf.pushes_null(names[i], facts.args[i]):
        # It pushes a NULL or an unbound method (decided at run time): run up to the call
        # that consumes both, so no exit ever holds one.
        while b + 1 < len(names) and not (
                names[b] in bf.CALL_OPS and b > i and
                facts.depth[b] - bf.call_pops(names[b], facts.args[b]) <= facts.depth[i]):
            b += 1
    if names[i] in _VARIABLE_LOADS and facts.depth[i] is not None:
        # The value of a variable capture cannot hold (a tuple of 300 items): run up to the
        # instruction that takes it off the stack, so the code after resumes without it
        # (it would be the resume function's stack input, and break there once more).
        # (a method of it, ``d.values``, is taken off by its call)
        while b + 1 < len(names) and not (
                b > i and facts.depth[b] is not None and not bf.pushes_null(names[b], facts.args[b])
                and facts.depth[b] - _real_effect(names[b], facts.args[b], False)[0] <= facts.depth[i]):
            b += 1
    if names[b] in bf.CALL_OPS:  # KW_NAMES/PRECALL belong to their CALL
        while a > 0 and names[a - 1] in bf.CALL_PREFIX:
            a -= 1
    if open_with:
        if b + 1 < len(names) and names[b + 1] == bf.WITH_ENTER:
            b += 1
        return a, b
    while True:
        a0, b0 = a, b
        for start, end, handler, _, _ in facts.entries:
            if handler in opened:
                continue
            if bf.COLD_HANDLERS:
                start, end = _protected_block(facts, handler, start, end)
            if start <= b and end >= a:
                handler_end = end if bf.COLD_HANDLERS else _handler_end(facts, handler)
                if bf.COLD_HANDLERS and cf.is_synthetic_handler(names, facts.args, handler):
                    # the comprehension's save of a cell runs with it (3.11: its call)
                    start = cf.cell_save_start(names, start)
                a, b = min(a, start), max(b, end, handler_end)
        if bf.COLD_HANDLERS:
            a, b = _enclosing(facts, a, b, opened)
            b = _else_clause(facts, a, b, opened)
        for head, jump in facts.loops:   # a loop inside the try/with runs with it
            if a < b and a <= head <= b:
                b = max(b, jump)
        if a > 0 and names[a - 1] == "BEFORE_WITH" and facts.handler_of[a] is not None \
                and facts.entries[facts.handler_of[a]][2] not in opened:
            a -= 1
        if names[b] == "BEFORE_WITH":
            b += 1   # the with body's try region starts right after it
        if b + 1 < len(names) and names[b + 1] == "BEFORE_WITH":
            b += 1   # the call making the context manager: run the with statement with it
        depths = exit_depths(facts, a, b, opened)
        if a != b and depths:
            # Normal exits leave the statement's base stack; an exit deeper than that still
            # holds exception state (``with``'s suppressed-exception path): it belongs inside.
            # The statement's own base: a try body's handler keeps it; a with keeps one
            # less than the depth at BEFORE_WITH (its __exit__ sits on the stack). Every exit
            # can hold exception state (a with whose __exit__ suppresses the body's raise).
            base = min([*depths.values(),
                        *(e[3] for e in facts.entries if a <= e[0] and e[1] <= b),
                        *(facts.depth[k] - 1 for k in range(a, b + 1)
                          if names[k] == bf.WITH_ENTER and facts.depth[k] is not None)])
            for t, d in depths.items():
                # (3.12+: only the code right after the span; a handler's exits are
                # where it rejoins the statement's continuation)
                if d > base and (t == b + 1 if bf.COLD_HANDLERS else t > b):
                    k = t
                    while k + 1 < len(names) and (facts.depth[k + 1] or 0) > base:
                        k += 1
                    b = max(b, k)
        if (a, b) == (a0, b0):
            return a, b


def _protected_block(facts: CodeFacts, h: int, start: int, end: int) -> tuple[int, int]:
    """The whole block handler ``h`` protects around its range ``[start, end]``. 3.12+
    splits a range around a nested one (an inlined comprehension inside another or in a
    try body, a try inside a try) and leaves out jumps that cannot raise (3.13: an inlined
    comprehension's ``if`` test): pieces of ``h`` with only protected code or such jumps
    between them are one statement, and a break in the inner one runs all of it."""
    pieces = [(s, e) for s, e, hh, _, _ in facts.entries if hh == h]

    def inside(k: int) -> bool:
        return facts.handler_of[k] is not None or facts.names[k] in bf.NEVER_RAISE

    grown = True
    while grown:
        grown = False
        for s, e in pieces:
            if e < start and all(inside(k) for k in range(e + 1, start)):
                start, grown = s, True
            elif s > end and all(inside(k) for k in range(end + 1, s)):
                end, grown = e, True
    return start, end


def _enclosing(facts: CodeFacts, a: int, b: int, opened: frozenset) -> tuple[int, int]:
    """3.12+: ``[a, b]`` grown by a try it is nested in whose range does not reach it (a try
    body that starts with the inner try): the inner statement's handler blocks, at the end
    of the code, are still protected by the outer handler, whose ranges in the code before
    the handler blocks are the rest of the outer statement (3.11 runs the outermost try
    as one region)."""
    cold = min((h for _, _, h, _, _ in facts.entries), default=len(facts.names))
    outer = {facts.entries[facts.handler_of[k]][2] for k in members(facts, a, b, opened)
             if k >= cold and facts.handler_of[k] is not None}
    for start, end, h, _, _ in facts.entries:
        if h in outer and h not in opened and end < cold:
            a, b = min(a, start), max(b, end)
    return a, b


def _else_clause(facts: CodeFacts, a: int, b: int, opened: frozenset) -> int:
    """3.12+: ``b`` grown by a try statement's ``else`` clause. The span ends with the try
    body, which falls through to the else clause; the handler blocks (at the end of the
    code) rejoin after it. 3.11 keeps the handlers between the else clause and the code
    after the statement, so its region is the whole statement: a break in the try body
    runs the else clause as Python too, as here (it compiled, and could break again). A
    handler that ``break``s out of a loop jumps past the rest of the loop body the same
    way, and 3.11 runs that rest with the statement too."""
    if a == b or facts.names[b] in NO_FALLTHROUGH:
        return b
    cold = min((h for _, _, h, _, _ in facts.entries), default=len(facts.names))
    if b + 1 >= cold:
        return b
    inside = members(facts, a, b, opened)
    rejoins = [r for k, t, _ in _leaving(facts, inside) if k > b
               and (r := _rejoin(facts, t, cold)) is not None and b + 1 < r < cold]
    if not rejoins:
        return b
    t = min(rejoins)
    clause = range(b + 1, t)
    # only the try body enters the clause (an if's else branch between would not be it)
    if any(facts.targets[k] in clause for k in range(len(facts.names))
           if not a <= k < t and k not in inside):
        return b
    return t - 1


def _rejoin(facts: CodeFacts, t: int, cold: int) -> int | None:
    """Where a handler's exit at ``t`` rejoins the code before the handler blocks: ``t``
    itself, or past the straight code after ``POP_EXCEPT`` (``except ... as e`` deletes
    ``e``) to its jump back."""
    k = t
    while cold <= k < len(facts.names):
        if facts.names[k] in UNCONDITIONAL_JUMPS:
            return facts.targets[k]
        if facts.names[k] in NO_FALLTHROUGH or facts.targets[k] is not None:
            return None
        k += 1
    return k if k < cold else None


def _handler_end(facts: CodeFacts, h: int) -> int:
    k = h
    while k + 1 < len(facts.names) and facts.names[k] not in NO_FALLTHROUGH:
        k += 1
    return k


UNCONDITIONAL_JUMPS = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"})


def through_jumps(facts: CodeFacts, t: int) -> int:
    """Where control really goes from ``t``: past unconditional jumps (3.12+ repeats a
    while loop's test at its bottom and jumps back: resuming at that jump would make a
    second resume function for the loop body)."""
    for _ in range(len(facts.names)):
        if facts.names[t] == "NOP" and t + 1 < len(facts.names):
            t += 1
        elif facts.names[t] in UNCONDITIONAL_JUMPS:
            t = facts.targets[t]
        else:
            return t
    return t


def _span_exits(facts: CodeFacts, a: int, b: int) -> set[int]:
    out = set()
    for k in range(a, b + 1):
        t = facts.targets[k]
        if t is not None and not a <= t <= b:
            out.add(t)
    if facts.names[b] not in NO_FALLTHROUGH and b + 1 < len(facts.names):
        out.add(b + 1)
    return out


def members(facts: CodeFacts, a: int, b: int, opened: frozenset = frozenset()) -> list[int]:
    """The instructions of region ``[a, b]``: the span, plus (3.12+) the handler blocks of
    the try/with ranges in it, which the compiler put at the end of the code — everything
    a handler reaches before it rejoins the code after the span, or before its
    ``POP_EXCEPT`` leaves the statement's own stack (the compiler may copy the code after
    the statement into the handler: that copy resumes compiled)."""
    inside = set(range(a, b + 1))
    if not bf.COLD_HANDLERS:
        return sorted(inside)
    stop = _span_exits(facts, a, b)
    work = [(h, d) for start, end, h, d, _ in facts.entries
            if start <= b and end >= a and h not in opened]
    while work:
        k, base = work.pop()
        if k in inside or k in stop:
            continue
        inside.add(k)
        for s in successors(facts, k):
            if not (facts.names[k] == "POP_EXCEPT" and s == k + 1 and facts.depth[s] == base):
                work.append((s, base))
    return sorted(inside)


def statement_lines(facts: CodeFacts, a: int, b: int, opened: frozenset = frozenset()) -> list[int]:
    """The user's lines of region ``[a, b]`` (:func:`members`): the span's, and in the
    handler blocks 3.12+ puts at the end of the code only the lines that start there. A
    handler's first instructions (PUSH_EXC_INFO, a comprehension's SWAPs) and the cleanup of
    ``except ... as e`` carry on the line of whatever precedes them in the code, often the
    function's last line."""
    lines = {facts.linenos[k] for k in range(a, b + 1)}
    lines |= {facts.linenos[k] for k in members(facts, a, b, opened)
              if not a <= k <= b and facts.linenos[k] != facts.linenos[k - 1]}
    return sorted(n for n in lines if n is not None)


def region_exit_of(facts: CodeFacts, inside: set, t: int) -> int | None:
    """The exit control reaches when an instruction of the region goes to ``t`` (None:
    it stays inside, maybe through a jump outside)."""
    if t in inside:
        return None
    t = through_jumps(facts, t)
    return None if t in inside else t


def _leaving(facts: CodeFacts, inside: list[int]):
    """(instruction, where it goes, falls through?) for every edge leaving the region."""
    members_set = set(inside)
    for k in inside:
        t = facts.targets[k]
        if t is not None and region_exit_of(facts, members_set, t) is not None:
            yield k, region_exit_of(facts, members_set, t), False
        if facts.names[k] not in NO_FALLTHROUGH and k + 1 < len(facts.names) \
                and region_exit_of(facts, members_set, k + 1) is not None:
            yield k, region_exit_of(facts, members_set, k + 1), True


def exits(facts: CodeFacts, a: int, b: int, opened: frozenset = frozenset()) -> list[int]:
    """Instructions outside the region ``[a, b]`` that control reaches from it, in order."""
    return sorted({t for _, t, _ in _leaving(facts, members(facts, a, b, opened))})


def _depths(facts: CodeFacts) -> list[int | None]:
    """Stack depth before each instruction (None: unreachable)."""
    at: list[int | None] = [None] * len(facts.names)
    at[0] = 0
    work = [0]
    while work:
        k = work.pop()
        d = at[k]
        name, arg = facts.names[k], facts.args[k]
        nexts = []
        if name not in NO_FALLTHROUGH and k + 1 < len(at):
            pop, push = _real_effect(name, arg, False)
            nexts.append((k + 1, d - pop + push))
        if facts.targets[k] is not None:
            pop, push = _real_effect(name, arg, True)
            nexts.append((facts.targets[k], d - pop + push))
        if facts.handler_of[k] is not None:
            _, _, h, hd, lasti = facts.entries[facts.handler_of[k]]
            nexts.append((h, hd + int(lasti) + 1))
        for t, dt in nexts:
            if at[t] is None:
                at[t] = dt
                work.append(t)
    return at


def exit_depths(facts: CodeFacts, a: int, b: int, opened: frozenset = frozenset()) -> dict[int, int]:
    """Stack depth at each exit of ``[a, b]``."""
    return {t: facts.depth[t] for t in exits(facts, a, b, opened)}


LOCAL_STORES = bf.LOCAL_STORES


def is_straight(facts: CodeFacts, a: int, b: int, opened: frozenset = frozenset()) -> bool:
    """No loop, no try, no local assigned in ``[a, b]``: the locals bound at every exit are
    those bound at ``a``, so exits can pass them directly. (A single instruction may jump
    back: a loop's ``FOR_ITER``-less back edge resumes at the loop body.) The body of a with
    in ``opened`` (open where the function starts) counts as straight code."""
    return all(facts.names[k] not in LOCAL_STORES
               and (facts.handler_of[k] is None or facts.entries[facts.handler_of[k]][2] in opened)
               and (facts.targets[k] is None or facts.targets[k] > k or a == b)
               for k in range(a, b + 1))


def kept_nulls(facts: CodeFacts, a: int, b: int, nulls: tuple) -> tuple:
    """The NULL positions of the stack at ``a`` that every exit of ``[a, b]`` still holds:
    values below the lowest point the region pops to are untouched; above it the region
    pushed its own (a resume function entered inside ``k = np.resize(key - ord("A"), n)``
    whose region runs past the store into the next statement: the entry's NULL under
    ``np.resize`` is gone, and the exit's stack is that statement's ``plain, ord("A")``)."""
    low = min(facts.depth[k] - _real_effect(facts.names[k], facts.args[k], jump)[0]
              for k in range(a, b + 1) if facts.depth[k] is not None for jump in (False, True))
    return tuple(p for p in nulls if p < low)


def after_straight(facts: CodeFacts, a: int, b: int, nulls: tuple) -> dict[int, tuple[int, tuple]]:
    """For a straight region: exit -> (stack depth, NULL positions) when control gets there."""
    kept = kept_nulls(facts, a, b, nulls)
    return {t: (facts.depth[t], kept) for t in exits(facts, a, b)}


# -- code generation ---------------------------------------------------------------------


@dataclass(frozen=True)
class Origin:
    """Where a resume function's instructions come from: instruction ``i`` of ``code``
    (the original) is instruction ``i + shift`` of the copy, plus one for each
    superinstruction before it that the copy splits in two (``split``: their original
    indices, ascending; 3.13, bytecode_facts.unfuse). The copy starts at ``entry``."""
    code: types.CodeType
    shift: int
    entry: int
    split: tuple = ()

    def to_original(self, k: int) -> int:
        """The original instruction that instruction ``k`` of the copy is (or half of)."""
        i = k - self.shift
        for s in self.split:
            if s < i:
                i -= 1
        return i

    def from_original(self, i: int) -> int:
        """Where original instruction ``i`` starts in the copy."""
        return i + self.shift + sum(1 for s in self.split if s < i)


# code_key of generated code (resume.py) -> its Origin
ORIGIN: dict[tuple, Origin] = {}


def origin(code: types.CodeType) -> Origin:
    """``code``'s Origin; an original code is its own, unshifted."""
    return ORIGIN.get(code_key(code)) or Origin(code, 0, 0)


def original(code: types.CodeType) -> tuple[types.CodeType, int]:
    o = origin(code)
    return o.code, o.shift

