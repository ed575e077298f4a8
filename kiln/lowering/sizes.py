"""Symbolic sizes: exact integer polynomials over size symbols (``s0``, ``s1``, ...).

A size in lowering is a Python ``int`` when it is static and a :class:`Size` when it is
dynamic. ``Size`` is a small exact class (a canonical polynomial with integer
coefficients), not sympy: sizes only ever meet ``+ - *`` and comparisons, and importing
sympy alone costs more than a whole cold compile (docs/lowering.md has the figures).
Arithmetic that cancels the symbols gives back an ``int``, so static code stays static.

Kinds of symbols (:class:`SymbolTable`):

- ``input``: a dim of an input array (``x.shape[0]``), read by the wrapper on each call.
  Dims of different inputs with the same size in the example share a symbol (duck
  sizing, as Dynamo does); the wrapper checks they are still equal. Dynamic dims are at least 2 (sizes 0 and 1 decide
  broadcasting, so they stay specialized): comparisons use that bound;
- ``int``: a size computed from run-time Python ints (a slice bound ``x[:n]``, ``n`` an
  argument, or an int the function computed from arguments and input dims, which capture
  passes in as an argument of its own): the slice's length ``len(range(L)[a:b:c])`` and,
  when it is not 0, its first index ``range(L)[a:b:c].start`` (named ``o<n>``, at least 0).
  The wrapper evaluates these Python expressions on each call, so Python's clamping and
  negative bounds (``x[:-n]``) hold for every call with no guard on ``n``; lengths are at
  least 2 like input dims (capture guards that, or specializes ``n`` when the example's
  length is 0 or 1, which decide broadcasting). :meth:`SymbolTable.int_slice`;
- ``unbacked``: a size known only after an op ran (a boolean mask selection, the length
  of ``np.unique``'s result; ``Op.unbacked`` in kiln/ops says which); the wrapper binds it
  from the op's result, right after the op, before any kernel that uses it. These are
  named ``u<n>`` and may be 0 or 1: comparisons take them as at least 0 (:func:`min_size`).

A comparison that the bound cannot decide raises :class:`Undecidable` (an
``Unsupported``): the graph then compiles for concrete sizes, never wrongly. While a
lowering runs (``SymbolTable.guarding``), one over input dims instead takes the answer
of the example's sizes and becomes a guard the wrapper checks (``x[:10]`` on a dynamic
dim: ``s0 - 10 >= 0``).

    >>> s0, s1 = Size.symbol("s0"), Size.symbol("s1")
    >>> str(s0 * s1 + 3), (s0 * s1 - s1 * s0 + 2)
    ('s0*s1 + 3', 2)
    >>> s0 > 1, s0 * 2 == 2 * s0, (s0 - 1) >= 1
    (True, True, True)
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
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


def _decide(diff: Any, how: str) -> bool:
    """Is ``diff >= 0`` ('ge') or ``diff > 0`` ('gt') for every admitted size?"""
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


def wrap_index(index: int, length: int, axis: int) -> int:
    """``index`` as NumPy takes it on a dim of ``length`` (axis ``axis``): a negative one
    counts from the end; one out of range raises NumPy's IndexError. The wrapper binds
    a run-time int index's symbol with it.

        >>> wrap_index(-1, 10, 0)
        9
    """
    if -length <= index < length:
        return index + length if index < 0 else index
    raise IndexError(f"index {index} is out of bounds for axis {axis} with size {length}")


def is_unbacked(value: Any) -> bool:
    """Does a size depend on a size known only after an op ran?"""
    return isinstance(value, Size) and any(s.startswith("u") for s in value.symbols)


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


@dataclass
class SizeSymbol:
    """Where a symbol's value comes from at run time (see the module doc)."""

    name: str
    kind: str          # 'input' | 'int' | 'unbacked'
    source: str        # Python expression in the wrapper: "x.shape[0]", "len(range(10)[:n])", "buf3.shape[0]"
    hint: int          # the value in the example the graph was lowered with

    @property
    def minimum(self) -> int:
        return min_size(self.name)


class SymbolTable:
    """The size symbols of one lowering, in creation order."""

    def __init__(self) -> None:
        self.symbols: dict[str, SizeSymbol] = {}
        # hint -> [(input, dim counted from the right, symbol)] for duck sizing
        self._by_hint: dict[int, list[tuple[str, int, str]]] = {}
        # (Python expression, symbol): further places a symbol was found (duck sizing);
        # the wrapper checks each equals the symbol.
        self.equal: list[tuple[str, str]] = []
        # Python conditions on the symbols the code assumed (``s0 - 10 >= 0`` for
        # ``x[:10]``); the wrapper compiles another variant when one fails.
        self.guards: list[str] = []

    @contextlib.contextmanager
    def guarding(self):
        """While lowering: comparisons the bound cannot decide are answered from the
        example's sizes and recorded in ``guards`` (input symbols only; others, and any
        comparison outside this block, still raise :class:`Undecidable`)."""
        token = _GUARDING.set(self)
        try:
            yield self
        finally:
            _GUARDING.reset(token)

    def guard(self, diff: "Size", how: str) -> bool | None:
        """The example's answer to ``diff >= 0`` ('ge') or ``> 0`` ('gt'), recorded as a
        guard; None when a symbol is unbacked."""
        if any(getattr(self.symbols.get(n), "kind", None) not in ("input", "int") for n in diff.symbols):
            return None
        value = diff.subs(self.hints())
        answer = value >= 0 if how == "ge" else value > 0
        op = {("ge", True): ">=", ("ge", False): "<", ("gt", True): ">", ("gt", False): "<="}[how, answer]
        text = f"{diff} {op} 0"
        if text not in self.guards:
            self.guards.append(text)
        return answer

    def input_dim(self, array: str, dim: int, ndim: int, hint: int) -> Size:
        """The symbol of dim ``dim`` of input ``array`` (example size ``hint``).

        Dims of *other* inputs with the same example size share it (they meet in
        broadcasting: ``x * b`` with ``b`` a row); the dims of one array never do (a
        square example is not a square function). Among several candidates the one at the
        same position counted from the right wins, as broadcasting aligns them."""
        source = f"{array}.shape[{dim}]"
        right = ndim - dim
        candidates = [c for c in self._by_hint.get(hint, []) if c[0] != array]
        if candidates:
            name = next((c[2] for c in candidates if c[1] == right), candidates[0][2])
            self.equal.append((source, name))
        else:
            name = f"s{len(self.symbols)}"
            self.symbols[name] = SizeSymbol(name, "input", source, hint)
        self._by_hint.setdefault(hint, []).append((array, right, name))
        return Size.symbol(name)

    def int_slice(self, length: Any, start: Any, stop: Any, step: Any) -> tuple:
        """(first index, count, step) of ``slice(start, stop, step)`` on a dim of
        ``length`` where a bound or the step is a run-time int (an object with ``name``,
        the wrapper's parameter, and ``example``); other parts are ints or None.

        The first index and the count are symbols of kind "int" whose source is Python's
        own slicing of a range (``len(range(s0)[:n])``), shared by slices spelled alike.
        A run-time step is ``±k`` with ``k`` a symbol for its magnitude (``abs(k)``, at
        least 1) and its sign that of the example (capture guards it, and so does the
        wrapper). A count of 0 or 1 in the example raises :class:`Undecidable` (such
        sizes are specialized)."""
        def text(b: Any) -> str:
            return "" if b is None else str(b) if isinstance(b, int) else b.name

        def hint(b: Any) -> Any:
            return b if b is None or isinstance(b, int) else b.example
        bounds = f"{text(start)}:{text(stop)}" + ("" if step is None else f":{text(step)}")
        where = f"range({length})[{bounds}]"
        example = range(self.hint(length))[hint(start):hint(stop):hint(step)]
        if len(example) < MIN_SIZE:
            raise Undecidable(f"the slice [{bounds}] has {len(example)} elements in the example "
                              f"(sizes 0 and 1 are specialized)")
        count = self._int_symbol(f"len({where})", len(example), "s")
        first: Any = 0
        if not (start is None or start == 0) or (hint(step) or 1) < 0:
            first = self._int_symbol(f"{where}.start", example.start, "o")
        if step is None or isinstance(step, int):
            return first, count, 1 if step is None else step
        magnitude = self._int_symbol(f"abs({step.name})", abs(step.example), "k")
        sign = f"{step.name} {'>' if step.example > 0 else '<'} 0"
        if sign not in self.guards:
            self.guards.append(sign)
        return first, count, magnitude if step.example > 0 else -magnitude

    def int_index(self, length: Any, index: Any, axis: int) -> Size:
        """The element a run-time int ``index`` (an object with ``name`` and ``example``)
        takes on a dim of ``length``: a symbol of kind "int" (``o<n>``, at least 0) whose
        source wraps a negative index and raises NumPy's IndexError for one out of range
        (:func:`wrap_index`; ``axis`` is the dim's position in the message)."""
        return self._int_symbol(f"_wrap_index({index.name}, {length}, {axis})",
                                wrap_index(index.example, self.hint(length), axis), "o")

    def _int_symbol(self, source: str, hint: int, prefix: str) -> Size:
        for s in self.symbols.values():
            if s.kind == "int" and s.source == source:
                return Size.symbol(s.name)
        name = f"{prefix}{len(self.symbols)}"
        self.symbols[name] = SizeSymbol(name, "int", source, hint)
        return Size.symbol(name)

    def unbacked(self, source: str, hint: int) -> Size:
        """A new symbol for a size the wrapper reads from an op's result (``source``,
        "buf3.shape[0]") once that op ran; ``hint`` is its example value."""
        name = f"u{len(self.symbols)}"
        self.symbols[name] = SizeSymbol(name, "unbacked", source, hint)
        return Size.symbol(name)

    def hints(self) -> dict[str, int]:
        return {name: s.hint for name, s in self.symbols.items()}

    def hint(self, value: Any) -> Any:
        """The example value of a size (or of a tuple of sizes)."""
        if isinstance(value, tuple):
            return tuple(self.hint(v) for v in value)
        return value.subs(self.hints()) if isinstance(value, Size) else value

    def __bool__(self) -> bool:
        return bool(self.symbols)

    def __iter__(self):
        return iter(self.symbols.values())
