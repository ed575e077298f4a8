"""Where the two sides of a data-dependent ``if`` meet again (kiln/capture/graph_selects.py
traces each side up to there, then merges what they leave as selects).

``join`` takes the shapes an ``if`` statement or a conditional expression compiles to
(its sides' jumps stay inside or go to the join) and ``back_edge`` 3.12+'s sides that
each end in their own jump back to a for loop's head. ``meeting`` takes any other shape
of forward jumps: the short-circuit jumps of ``or``, ``and`` and chained comparisons, whose
inner tests jump past the outer test's target (``if m > 0 or s < 1:`` jumps to the body
when ``m > 0``, and the inner test jumps past the body to the else side when ``s >= 1``;
``if 0 < m < 1:`` jumps to a ``POP_TOP`` of the copied ``m``, then on to the else side).
"""
from __future__ import annotations

from .bytecode_facts import BACKWARD_JUMPS, LEAVES_FRAME, NO_FALLTHROUGH

MAX_REGION = 2000     # instructions reachable from the jump that ``meeting`` looks at


class _Decline(Exception):
    pass


def join(instructions: list, k: int, t: int) -> int | None:
    """Where the sides of the conditional jump at ``k`` to ``t`` meet: ``t`` (an ``if``
    without an else), or past the else side, where the fall side's last instruction jumps;
    None where the fall side returns. Every other jump in between goes forward and stays
    inside (no loop, no ``break`` out of an enclosing loop: ``if c: break`` looks like an
    if/else whose else side is the rest of the loop, back edge and all); no try body."""
    last = instructions[t - 1]
    if last.opname in ("RETURN_VALUE", "RETURN_CONST"):
        join = None
    elif last.opname == "JUMP_FORWARD" and last.target > t:
        join = last.target
    else:
        join = t
    for i in range(k, t if join is None else join):
        ins = instructions[i]
        if ins.in_try:
            raise _Decline()
        if i == k or ins.target is None or (i == t - 1 and join is not None and join != t):
            continue
        if not (i < ins.target <= (t if i < t else join) or i < ins.target == join):
            raise _Decline()     # (an inner if's side may jump to the join: 3.11's nested if)
    return join


def back_edge(instructions: list, k: int, t: int) -> tuple | None:
    """``(fall_end, jump_end)`` where both sides of the jump at ``k`` to ``t`` end in a
    backward jump to the ``FOR_ITER`` of a loop holding them (``fall_end = t - 1`` and
    the first such jump from ``t``), every other jump in each side going forward and
    staying inside it; None: another shape (``join``'s)."""
    last = instructions[t - 1]
    head = last.target
    if last.opname not in BACKWARD_JUMPS or head is None or head >= k \
            or instructions[head].opname != "FOR_ITER" or instructions[head].target <= t:
        return None
    end = next((e for e in range(t, instructions[head].target)
                if instructions[e].opname in BACKWARD_JUMPS), None)
    if end is None or instructions[end].target != head:
        return None
    for lo, hi in ((k + 1, t - 1), (t, end)):
        for i in range(lo, hi):
            ins = instructions[i]
            if ins.in_try or ins.target is not None and not i < ins.target <= hi:
                raise _Decline()
    return t - 1, end


def meeting(instructions: list, k: int, t: int) -> int | frozenset | None:
    """The first instruction every path from the conditional jump at ``k`` (to ``t``)
    runs again (its immediate post-dominator); the jumps back to the head of the for loop
    holding it, where every path goes back there (each side's or test's own: 3.12+ copy
    the jump back into each; ``continue`` is one too); None where every path returns
    first. A path ends at a return or a jump back elsewhere. No try body in between."""
    n = len(instructions)
    back, done = n, n + 1          # the loop's head, where every path has ended
    head = max((j for j in range(k) if instructions[j].opname == "FOR_ITER"
                and instructions[j].target > k), default=None)

    def after(i: int) -> list[int]:
        if i == back:
            return [done]
        ins = instructions[i]
        if ins.target is not None and ins.target <= i:
            return [back] if ins.target == head else [done]
        if ins.opname in LEAVES_FRAME:
            return [done]
        out = [ins.target] if ins.target is not None else []
        if ins.opname not in NO_FALLTHROUGH and i + 1 < n:
            out.append(i + 1)
        return out or [done]

    reached, work = set(), [k]
    while work:
        i = work.pop()
        if i not in reached and i != done:
            reached.add(i)
            work.extend(after(i))
            if len(reached) > MAX_REGION:
                raise _Decline()
    # every edge goes forward, so each instruction's post-dominators come after it: from
    # the last instruction back, each one's first is where all its successors' chains meet
    first: dict[int, int] = {}
    for i in sorted(reached, reverse=True):
        meet = None
        for j in after(i):
            if meet is None:
                meet = j
            while meet != j:
                if meet < j:
                    meet = first[meet]
                else:
                    j = first[j]
        first[i] = meet
    join = first[k]
    seen, work = set(), [k]
    while work:
        i = work.pop()
        if i in seen or i == join or i >= n:
            continue
        seen.add(i)
        if instructions[i].in_try:
            raise _Decline()
        work.extend(after(i))
    if join == back:
        return frozenset(i for i in seen if instructions[i].target == head
                         and instructions[i].target < i)
    return None if join == done else join
