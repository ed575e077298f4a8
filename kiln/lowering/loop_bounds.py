"""Which checks of a loop body one test before the loop replaces (kiln/lowering/loops.py).

An index such as ``A[i - 1, j + 1]`` is *affine* in the loop variables: a sum of integer
multiples of induction variables and of Python ints the loop reads but never changes
(its operands), plus a constant. Every loop variable lies in an interval known before
the loop starts (``for j in range(i + 1, n)`` inside ``for i in range(a, b)``: ``j`` in
``[a + 1, n - 1]``), so an affine index has an interval too, and so does every affine
Python-int sum. One test at the function's entry — every affine index inside its axis,
every affine sum inside int64, every affine value stored into an integer array inside
its type — stands for all the per-element checks of those values: the fast variant
prints them unchecked. The intervals over-approximate (a loop that runs zero times at
some outer iteration still counts), so the test may fail where no access would: then
the checked variant runs, never a wrong one.

A carried Python int the top body moves by a small constant (``steps += 1``, also under
a condition: ``if d: count -= 1``) is a *counter*: from an entry value within
``COUNTER_START`` it cannot leave int64 in fewer than ``2**58`` iterations (about nine
years at one a nanosecond), so its sum is printed unchecked too. Without that one check
a convergence loop's fast variant cannot fail once started, and writes in place.

:class:`Affine` is ``const + sum(coef * key)``; keys are loop-variable placeholders and
the top body's Python-int operand placeholders (``atoms``: fixed for the whole call).
"""
from __future__ import annotations

from typing import Any

from ..ops.loops import LoopBody


class Affine:
    def __init__(self, coefs: dict | None = None, const: int = 0) -> None:
        self.coefs = {k: c for k, c in (coefs or {}).items() if c}
        self.const = const

    def plus(self, other: "Affine", sign: int = 1) -> "Affine":
        coefs = dict(self.coefs)
        for k, c in other.coefs.items():
            coefs[k] = coefs.get(k, 0) + sign * c
        return Affine(coefs, self.const + sign * other.const)

    def times(self, factor: int) -> "Affine":
        return Affine({k: c * factor for k, c in self.coefs.items()}, self.const * factor)


def _int_literal(value: Any) -> bool:
    return type(value) is int


def _unguarded(stop: Any, start: Any) -> Any:
    """A loop's stop without its predicate: ``select(when, stop, start)`` runs it zero
    times where ``when`` is false (kiln/capture/loop_branches.py), so the variable's
    interval where it runs is the unguarded loop's."""
    if hasattr(stop, "kind") and stop.kind == "call" and stop.target.name == "scalar_fn" \
            and stop.kwargs.get("fn") == "select" and stop.args[0][2] is start:
        return stop.args[0][1]
    return stop


COUNTER_START = 2 ** 62    # |entry value| of a counter
COUNTER_STEP = 16          # |its step|: 2**63 - 2**62 is 2**58 steps of 16


def _is_fn(node: Any, *fns: str) -> bool:
    return hasattr(node, "kind") and node.kind == "call" and node.target.name == "scalar_fn" \
        and node.kwargs.get("fn") in fns


def _step_of(node: Any, ph: Any) -> bool:
    """Is ``node`` ``ph + c`` or ``ph - c`` (``c + ph``) for a literal ``|c| <= COUNTER_STEP``?"""
    if not _is_fn(node, "add", "sub"):
        return False
    a, b = node.args[0]
    if node.kwargs["fn"] == "add" and b is ph:
        a, b = b, a
    return a is ph and _int_literal(b) and abs(b) <= COUNTER_STEP


class Bounds:
    """The affine forms of a top-level body's Python-int values and its loops' variables.

    ``forms[node]``: the node's form (absent: not affine). ``loops``: ``(var placeholder,
    start form, stop form, step)`` for every loop, outer loops first; the top loop's
    bounds are the function's ``start``/``stop`` parameters (forms None)."""

    def __init__(self, body: LoopBody, step: int | None) -> None:
        self.forms: dict[Any, Affine] = {}
        self.atoms: list[Any] = []
        self.loops: list[tuple] = []
        graph = body.graph
        phs = graph.placeholders
        self.top_var = phs[0]
        self.loops.append((phs[0], None, None, step))
        self.forms[phs[0]] = Affine({phs[0]: 1})
        for p in phs[1 + body.n_carried:]:
            if type(p.val) is int:
                self.atoms.append(p)
                self.forms[p] = Affine({p: 1})
        self._walk(graph)
        # counters (module docstring): the step node -> its carried placeholder
        self.counters: dict[Any, Any] = {}
        outs = next(n for n in graph.nodes if n.kind == "output").args[0]
        for ph, out in zip(phs[1:1 + body.n_carried], outs):
            if type(ph.val) is not int:
                continue
            if _is_fn(out, "select"):   # a step under a condition, else the same value
                _, a, b = out.args[0]
                out = a if b is ph else b if a is ph else None
            if _step_of(out, ph):
                self.counters[out] = ph

    def form(self, value: Any) -> Affine | None:
        if hasattr(value, "kind"):
            return self.forms.get(value)
        return Affine({}, value) if _int_literal(value) else None

    def _walk(self, graph: Any) -> None:
        for node in graph.nodes:
            if node.kind != "call":
                continue
            name = node.target.name
            if name == "scalar_fn" and type(node.val) is int:
                f = self._arith(node.kwargs["fn"], node.args[0])
                if f is not None:
                    self.forms[node] = f
            elif name == "loop":
                self._loop(node)

    def _arith(self, fn: str, args: tuple) -> Affine | None:
        forms = [self.form(a) for a in args]
        if any(f is None for f in forms):
            return None
        if fn in ("add", "sub"):
            return forms[0].plus(forms[1], 1 if fn == "add" else -1)
        if fn == "mul":
            a, b = forms
            if not a.coefs:
                return b.times(a.const)
            if not b.coefs:
                return a.times(b.const)
            return None
        if fn == "neg":
            return forms[0].times(-1)
        if fn in ("pos", "int"):
            return forms[0]
        return None

    def _loop(self, node: Any) -> None:
        start, stop, step, inits, operands = node.args
        body: LoopBody = node.kwargs["body"]
        phs = body.graph.placeholders
        if not _int_literal(step) or step == 0:
            return
        if body.cont is None:   # (a while loop's counter has no bounds: its bounds are 0, 0)
            self.loops.append((phs[0], self.form(start), self.form(_unguarded(stop, start)), step))
            self.forms[phs[0]] = Affine({phs[0]: 1})
        for p, v in zip(phs[1 + body.n_carried:], operands):
            f = self.form(v)
            if f is not None and type(p.val) is int:
                self.forms[p] = f
        self._walk(body.graph)


class Intervals:
    """Interval C expressions (``__int128``) of forms, for a printer's entry test."""

    def __init__(self, bounds: Bounds, names: dict) -> None:
        self.bounds = bounds
        self.names = names            # atom placeholder -> its C name
        self.vars: dict[Any, tuple[str, str]] = {}
        self.known: dict[Any, tuple[int, int]] = {}   # loop variables of literal bounds
        self.lines: list[str] = []

    def declare(self, start: str, stop: str) -> None:
        """Interval variables of every loop variable (outer first)."""
        for k, (ph, f_start, f_stop, step) in enumerate(self.bounds.loops):
            if step is None:
                continue
            if k == 0:
                lo_s = hi_s = f"(__int128){start}"
                lo_e = hi_e = f"(__int128){stop}"
            else:
                a, b = self.interval(f_start), self.interval(f_stop)
                if a is None or b is None:
                    continue
                (lo_s, hi_s), (lo_e, hi_e) = a, b
            lo, hi = (lo_s, f"({hi_e} - 1)") if step > 0 else (f"({lo_e} + 1)", hi_s)
            a, b = self.known_interval(f_start), self.known_interval(f_stop)
            if k and a is not None and b is not None:
                self.known[ph] = (a[0], b[1] - 1) if step > 0 else (b[0] + 1, a[1])
            names = (f"lo{k}", f"hi{k}")
            self.lines.append(f"const __int128 {names[0]} = {lo}, {names[1]} = {hi};")
            self.vars[ph] = names

    def interval(self, form: Affine | None) -> tuple[str, str] | None:
        if form is None:
            return None
        lo, hi = [f"(__int128){form.const}LL"], [f"(__int128){form.const}LL"]
        for key, c in form.coefs.items():
            if key in self.vars:
                a, b = self.vars[key]
                lo.append(f"{c} * {a if c > 0 else b}")
                hi.append(f"{c} * {b if c > 0 else a}")
            elif key in self.names and key in self.bounds.atoms:
                lo.append(f"{c} * (__int128){self.names[key]}")
                hi.append(lo[-1])
            else:
                return None
        return " + ".join(lo), " + ".join(hi)

    def known_interval(self, form: Affine | None) -> tuple[int, int] | None:
        """:meth:`interval` where it is known when printing (literal bounds all the way
        down: ``for i in range(n)`` of a static ``n`` inside the top loop), else None."""
        if form is None:
            return None
        lo = hi = form.const
        for key, c in form.coefs.items():
            if key not in self.known:
                return None
            a, b = self.known[key]
            lo, hi = lo + c * (a if c > 0 else b), hi + c * (b if c > 0 else a)
        return lo, hi


def _stores(graph: Any) -> list[tuple]:
    """``(array, index)`` of every element store of one body graph (not its inner loops')."""
    out = []
    for node in graph.nodes:
        if node.kind == "call" and node.target.name == "store_elem":
            out.append((node.args[0], node.args[1]))
        elif node.kind == "call" and node.target.name == "store_elem_if":
            out.append((node.args[1], node.args[2]))
    return out


def chain_last(pr: Any, args: tuple) -> tuple[list, int]:
    """An integer ``min``/``max``'s operands, those :func:`on_the_chain` last, and how many
    come first. The printer compares those first and passes their result through
    ``KILN_SETTLED`` (an empty asm) before the rest: GCC reassociated edit distance's
    ``min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + cost)`` so that the value the
    last iteration stored met two compares on its way to the next (160x160: 35 -> 27 us,
    numba 20)."""
    memo: dict = {}
    late = [on_the_chain(pr, x, memo) for x in args]
    early = [x for x, t in zip(args, late) if not t]
    return early + [x for x, t in zip(args, late) if t], len(early)


def on_the_chain(pr: Any, value: Any, memo: dict) -> bool:
    """Does ``value`` wait on the iteration just before, in the loop whose body ``pr`` (a
    fast printer, kiln/lowering/loops.py) prints: a carried scalar of that body, or an
    element one of its stores wrote a few iterations back along its own variable
    (``d[i, j - 1]`` after ``d[i, j] = ...`` in the loop over ``j``; ``d[i - 1, j]`` was
    written by the loop over ``i``, long before)?"""
    if not hasattr(value, "kind") or pr.bounds is None:
        return False
    if value in memo:
        return memo[value]
    memo[value] = False   # (no cycles in a graph; a mark while it is worked out)
    graph = pr.block
    if value.kind == "placeholder":
        late = value in pr.carried_of.get(graph, ())
    elif value.kind == "call" and value.target.name == "load_elem" and value.graph is graph:
        late = _stored_before(pr, graph, value.args[0], value.args[1])
    elif value.kind == "call" and value.graph is graph:
        late = any(on_the_chain(pr, a, memo) for a in _operands(value))
    else:
        late = False
    memo[value] = late
    return late


def _operands(node: Any) -> list:
    flat = []
    for a in list(node.args) + list(node.kwargs.values()):
        flat.extend(a if isinstance(a, (tuple, list)) else (a,))
    return [a for a in flat if hasattr(a, "kind")]


def _stored_before(pr: Any, graph: Any, array: Any, index: tuple) -> bool:
    var = graph.placeholders[0]
    name = pr.arrays.get(array, (None,))[0]
    for target, at in _stores(graph):
        if name is None or pr.arrays.get(target, (None,))[0] != name or len(at) != len(index):
            continue
        forms = [(pr.bounds.form(a), pr.bounds.form(b)) for a, b in zip(index, at)]
        if any(a is None or b is None or a.plus(b, -1).coefs for a, b in forms):
            continue
        moved = [a.const != b.const for a, b in forms]   # (same element: not written before)
        if any(moved) and all(var in b.coefs for (a, b), m in zip(forms, moved) if m):
            return True
    return False
