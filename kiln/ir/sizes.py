"""Exact integer polynomials over size symbols (``s0``, ``s1``, ...): :class:`Size`.

A size is a Python ``int`` when it is static and a :class:`Size` when it is dynamic: a
canonical polynomial with integer coefficients, not sympy (sizes only ever meet
``+ - *`` and comparisons, and importing sympy alone costs more than a whole cold
compile; docs/lowering.md has the figures). Arithmetic that cancels the symbols gives
back an ``int``, so static code stays static. Shape rules in kiln/ops run on metas
whose sizes are Sizes: capture asks them which expression an output dim is
(kiln/capture/dims.py), lowering what its buffers, loops and strides are
(kiln/lowering/sizes.py, which names the symbols and says where each comes from).

A symbol's least value depends on its name (:func:`min_size`): sizes 0 and 1 decide
broadcasting, so dynamic sizes are at least 2 unless the name says otherwise. A
comparison that bound cannot decide raises :class:`Undecidable` (an ``Unsupported``):
whoever asked then uses concrete sizes, never a wrong answer; while a lowering runs,
its symbol table may answer from the example and record a guard instead (``_GUARDING``).

    >>> s0, s1 = Size.symbol("s0"), Size.symbol("s1")
    >>> str(s0 * s1 + 3), (s0 * s1 - s1 * s0 + 2)
    ('s0*s1 + 3', 2)
    >>> s0 > 1, s0 * 2 == 2 * s0, (s0 - 1) >= 1
    (True, True, True)
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Iterable

from ..errors import Unsupported

# A monomial is a sorted tuple of symbol names (with repeats); () is the constant term.
Monomial = tuple


class Undecidable(Unsupported):
    """A comparison of sizes that holds for some dynamic sizes and not for others."""


# Every dynamic size is at least this (0 and 1 are specialized).
MIN_SIZE = 2


class Size:
    """An exact polynomial in size symbols (immutable, hashable, canonical)."""

    __slots__ = ("terms", "_hash")

    def __init__(self, terms: dict) -> None:
        self.terms = {m: c for m, c in terms.items() if c}
        self._hash = hash(frozenset(self.terms.items()))

    @staticmethod
    def symbol(name: str) -> "Size":
        return Size({(name,): 1})

    @staticmethod
    def make(terms: dict) -> "Size | int":
        terms = {m: c for m, c in terms.items() if c}
        if not terms:
            return 0
        if list(terms) == [()]:
            return terms[()]
        return Size(terms)

    # -- arithmetic ----------------------------------------------------------------------
    def __add__(self, other: Any) -> "Size | int":
        o = _terms(other)
        if o is None:
            return NotImplemented
        out = dict(self.terms)
        for m, c in o.items():
            out[m] = out.get(m, 0) + c
        return Size.make(out)

    __radd__ = __add__

    def __neg__(self) -> "Size | int":
        return Size.make({m: -c for m, c in self.terms.items()})

    def __sub__(self, other: Any) -> "Size | int":
        o = _terms(other)
        if o is None:
            return NotImplemented
        return self + Size.make({m: -c for m, c in o.items()})

    def __rsub__(self, other: Any) -> "Size | int":
        return (-self) + other

    def __mul__(self, other: Any) -> "Size | int":
        o = _terms(other)
        if o is None:
            return NotImplemented
        out: dict = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in o.items():
                m = tuple(sorted(m1 + m2))
                out[m] = out.get(m, 0) + c1 * c2
        return Size.make(out)

    __rmul__ = __mul__

    def exact_div(self, k: int) -> "Size | int | None":
        """``self / k`` when every coefficient is a multiple of the int ``k``."""
        if any(c % k for c in self.terms.values()):
            return None
        return Size.make({m: c // k for m, c in self.terms.items()})

    def ratio(self, other: Any) -> int | None:
        """The integer k with ``self == k * other``, if there is one."""
        o = _terms(other)
        if not o or set(o) != set(self.terms):
            return None
        m0 = next(iter(o))
        k, rem = divmod(self.terms[m0], o[m0])
        if rem or any(self.terms[m] != k * c for m, c in o.items()):
            return None
        return k

    # -- comparisons ---------------------------------------------------------------------
    def __eq__(self, other: Any) -> bool:
        o = _terms(other)
        return o is not None and self.terms == {m: c for m, c in o.items() if c}

    def __hash__(self) -> int:
        return self._hash

    def __bool__(self) -> bool:
        return True  # a non-constant polynomial is never identically zero

    def __ge__(self, other: Any) -> bool:
        return _decide(self - other, "ge")

    def __gt__(self, other: Any) -> bool:
        return _decide(self - other, "gt")

    def __le__(self, other: Any) -> bool:
        return _decide(other - self, "ge")

    def __lt__(self, other: Any) -> bool:
        return _decide(other - self, "gt")

    def __index__(self) -> int:
        raise Undecidable(f"the size {self} is dynamic here; a concrete number is needed")

    # -- reading -------------------------------------------------------------------------
    @property
    def symbols(self) -> set[str]:
        return {s for m in self.terms for s in m}

    def subs(self, values: dict) -> Any:
        """Evaluate with ``values`` (symbol -> int or Size)."""
        total: Any = 0
        for m, c in self.terms.items():
            term: Any = c
            for s in m:
                term = term * values[s]
            total = total + term
        return total

    def __str__(self) -> str:
        printing = _PRINTED.get()
        if printing is not None:
            printing.update(self.symbols)
        parts = []
        for m, c in sorted(self.terms.items(), key=lambda mc: (-len(mc[0]), mc[0])):
            if not m:
                parts.append(str(c))
                continue
            body = "*".join(m)
            parts.append(body if c == 1 else f"-{body}" if c == -1 else f"{c}*{body}")
        return " + ".join(parts).replace("+ -", "- ")

    __repr__ = __str__

    @property
    def atomic(self) -> bool:
        """Printed without operators of lower precedence than ``*``."""
        return len(self.terms) == 1 and next(iter(self.terms.values())) > 0


def _terms(value: Any) -> dict | None:
    if isinstance(value, Size):
        return value.terms
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return {(): value}


def settled(diff: Any, how: str) -> bool | None:
    """Is ``diff >= 0`` ('ge') or ``diff > 0`` ('gt') for every admitted size (True), for
    none (False)? None where the bound cannot say (no guard is taken).

        >>> s0 = Size.symbol("s0")
        >>> settled(s0 - 1, "gt"), settled(s0 - 3, "ge")
        (True, None)
    """
    if isinstance(diff, int):
        return diff >= 0 if how == "ge" else diff > 0
    # Every symbol is its least value + t with t >= 0: expanded in the t's, a polynomial
    # whose coefficients all have one sign is decided by its constant term.
    shifted = diff.subs({name: Size.symbol(name) + min_size(name) for name in diff.symbols})
    if isinstance(shifted, int):
        return shifted >= 0 if how == "ge" else shifted > 0
    const = shifted.terms.get((), 0)
    coefs = [c for m, c in shifted.terms.items() if m]
    if all(c >= 0 for c in coefs) and (const >= 0 if how == "ge" else const > 0):
        return True
    if all(c <= 0 for c in coefs) and (const < 0 if how == "ge" else const <= 0):
        return False
    return None


def _decide(diff: Any, how: str) -> bool:
    """Is ``diff >= 0`` ('ge') or ``diff > 0`` ('gt') for every admitted size?"""
    answer = settled(diff, how)
    if answer is not None:
        return answer
    table = _GUARDING.get()
    if table is not None:
        answer = table.guard(diff, how)
        if answer is not None:
            return answer
    raise Undecidable(f"whether {diff} {'>=' if how == 'ge' else '>'} 0 depends on the sizes")


def min_size(name: str) -> int:
    """The least value of a symbol: an unbacked size (``u3``) or a slice's first index
    (``o4``) may be 0, a run-time step's magnitude (``k5``) 1; others are MIN_SIZE."""
    return 0 if name[0] in "uo" else 1 if name[0] == "k" else MIN_SIZE




# The symbol table whose lowering is running (SymbolTable.guarding): an undecidable
# comparison of input sizes takes the example's answer and becomes a guard. Per thread.
_GUARDING: contextvars.ContextVar = contextvars.ContextVar("kiln_size_guards", default=None)


# The symbols of every Size printed while a renderer prints one kernel (printed_symbols).
_PRINTED: contextvars.ContextVar = contextvars.ContextVar("kiln_printed_sizes", default=None)


@contextlib.contextmanager
def printed_symbols():
    """The set of symbols of every :class:`Size` printed in this block: a renderer
    printing a kernel inside it learns which size symbols the kernel's text names, and
    takes only those as arguments (a kNN wrapper has 30 unbacked sizes; a kernel after
    the selections uses a few).

        >>> with printed_symbols() as used:
        ...     text = f"x0 < {Size.symbol('s0') * Size.symbol('s2')}"
        >>> sorted(used)
        ['s0', 's2']
    """
    found: set = set()
    token = _PRINTED.set(found)
    try:
        yield found
    finally:
        _PRINTED.reset(token)


def is_static(value: Any) -> bool:
    return not isinstance(value, Size)


def render(value: Any) -> str:
    """A size as C/Python text, parenthesized unless it is a product."""
    if isinstance(value, Size) and not value.atomic:
        return f"({value})"
    return str(value)


def product(values: Iterable[Any]) -> Any:
    out: Any = 1
    for v in values:
        out = out * v
    return out
