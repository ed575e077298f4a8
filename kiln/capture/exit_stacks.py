"""Which values of a segment's exit stack may be NULL (CPython 3.11-3.13).

An eager segment (resume.py) runs a region of the original code as Python and, at each
exit, stores the stack into locals (``___tmpN``; a slot the exit knows is NULL into
``___null``) and passes them to the resume function, which pushes ``PUSH_NULL`` for the
NULL slots. A NULL stored to ``___tmpN`` and loaded again is a crash waiting to happen:
3.11's ``LOAD_FAST`` raises UnboundLocalError, 3.12's and 3.13's do not check and pass
the NULL to whatever comes next (a segfault). A value stored as ``___null`` is dropped
(a method's ``self`` replaced by NULL: the call calls something else).

The NULLs a region pushes itself are run-time facts the capture never saw: a call's slot
beside its callable (``np.array(...)``: NULL for certain), a method load's (NULL or the
method, as the attribute decides), 3.12's inlined comprehension saving a local that may
be unbound (``LOAD_FAST_AND_CLEAR``). :func:`proven` follows them through the region's
control flow, exception edges included, and says whether every exit's stack holds a NULL
exactly where the exit says, and a value everywhere else. Where it cannot prove it, the
caller runs the code as Python instead (partial.build returns None).

    >>> import numpy as np
    >>> from kiln.capture.flow import code_facts, index_of
    >>> def f(x):
    ...     return np.sum(x + 1)
    >>> facts = code_facts(f.__code__)
    >>> add = index_of(facts, "BINARY_OP")        # the stack: NULL, np.sum, x, 1
    >>> null = 1 if bf.NULL_ABOVE_CALLABLE else 0
    >>> proven(facts, add, add, frozenset(), (null,), {add + 1: (3, (null,))})
    True
    >>> proven(facts, add, add, frozenset(), (null,), {add + 1: (3, ())})   # ___tmp of a NULL
    False
"""
from __future__ import annotations

from . import bytecode_facts as bf
from .flow import CodeFacts, members, region_exit_of, through_jumps

NULL, MAYBE, VALUE = bf.NULL_KIND, bf.MAYBE_NULL_KIND, bf.VALUE_KIND


def _after(facts: CodeFacts, k: int, stack: tuple, jump: bool) -> tuple:
    """The stack's kinds after instruction ``k`` (taking its jump when ``jump``)."""
    name, arg = facts.names[k], facts.args[k]
    pushed = bf.pushed_kinds(name, arg, facts.code)
    if pushed is not None:
        pop, push = bf.real_stack_effect(name, arg, jump)
        pop = len(pushed) - (push - pop)      # (the effect is a net one: LOAD_ATTR pops its owner)
        return stack[:len(stack) - pop] + pushed
    if name == "SWAP":
        i = len(stack) - arg
        return stack[:i] + stack[-1:] + stack[i + 1:-1] + stack[i:i + 1]
    if name == "COPY":
        return stack + (stack[-arg],)
    pop, push = bf.real_stack_effect(name, arg, jump)
    return stack[:len(stack) - pop] + (VALUE,) * push


def _join(a: tuple | None, b: tuple) -> tuple | None:
    if a is None:
        return b
    if len(a) != len(b):
        raise _Unproven
    return tuple(x if x == y else MAYBE for x, y in zip(a, b))


class _Unproven(Exception):
    pass


def exit_kinds(facts: CodeFacts, a: int, b: int, opened: frozenset,
               nulls: tuple) -> dict[int, tuple] | None:
    """For each exit of region ``[a, b]`` entered with NULLs at ``nulls`` (values in every
    other slot): the kind of each stack slot when control gets there. None where two paths
    meet with different depths (never in code the compiler made)."""
    inside = members(facts, a, b, opened)
    inside_set = set(inside)
    at: dict[int, tuple] = {a: tuple(NULL if p in nulls else VALUE for p in range(facts.depth[a]))}
    out: dict[int, tuple] = {}
    work = [a]
    try:
        while work:
            k = work.pop()
            stack = at[k]
            edges = []
            if facts.names[k] not in bf.NO_FALLTHROUGH and k + 1 < len(facts.names):
                edges.append((k + 1, _after(facts, k, stack, False)))
            if facts.targets[k] is not None:
                edges.append((facts.targets[k], _after(facts, k, stack, True)))
            if facts.handler_of[k] is not None:
                _, _, h, hd, lasti = facts.entries[facts.handler_of[k]]
                if h in inside_set:   # (a handler outside the region: the exception leaves it)
                    edges.append((h, stack[:hd] + (VALUE,) * (int(lasti) + 1)))
            for t, kinds in edges:
                if t not in inside_set:
                    leave = region_exit_of(facts, inside_set, t)
                    if leave is not None:   # (through jumps outside: they leave the stack alone)
                        out[leave] = _join(out.get(leave), kinds)
                        continue
                    t = through_jumps(facts, t)   # (a jump outside back in)
                joined = _join(at.get(t), kinds)
                if joined != at.get(t):
                    at[t] = joined
                    work.append(t)
    except _Unproven:
        return None
    return out


def proven(facts: CodeFacts, a: int, b: int, opened: frozenset, nulls: tuple,
           exits: dict[int, tuple[int, tuple]]) -> bool:
    """Does every exit ``t`` of ``exits`` (``t -> (depth, NULL positions)``) that control
    reaches get a stack of that depth with a NULL at each of those positions and a value
    at every other?"""
    kinds = exit_kinds(facts, a, b, opened, nulls)
    if kinds is None:
        return False
    for t, (depth, t_nulls) in exits.items():
        got = kinds.get(t)
        if got is None:
            continue       # (only unreachable code leads there: 3.12's END_FOR's fall-through)
        if len(got) != depth or any(
                kind != (NULL if p in t_nulls else VALUE) for p, kind in enumerate(got)):
            return False
    return True
