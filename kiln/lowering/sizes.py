"""Symbolic sizes in lowering: where each size symbol (``s0``, ``s1``, ...) comes from.

A size in lowering is a Python ``int`` when it is static and a :class:`Size` when it is
dynamic: an exact integer polynomial over size symbols (the class lives in
kiln/ir/sizes.py, shared with capture, which runs shape rules over it too).

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
from dataclasses import dataclass
from typing import Any

from ..ir.symbolic import canonical_slice
from ..ir.sizes import (MIN_SIZE, Size, Undecidable, _GUARDING, is_static, min_size,  # noqa: F401
                        printed_symbols, product, render, settled)


def wrap_index(index: int, length: int, axis: int) -> int:
    """``index`` as NumPy takes it on a dim of ``length`` (axis ``axis``): a negative one
    counts from the end; one out of range raises NumPy's IndexError. The wrapper binds
    a run-time int index's symbol with it.

        >>> wrap_index(-1, 10, 0)
        9

    A NumPy integer index past int64 (``np.uint64(2**63)``) gets NumPy's OverflowError
    from converting it; a Python int that large never gets here (the wrapper
    respecializes)."""
    if -length <= index < length:
        return index + length if index < 0 else index
    if not -9223372036854775808 <= index <= 9223372036854775807:
        raise OverflowError("Python int too large to convert to C long")
    raise IndexError(f"index {index} is out of bounds for axis {axis} with size {length}")


def magnitude(c: Any) -> Any:
    """``abs(c)`` of an int, or of a size whose sign the bound settles (``-s1``: ``s1``);
    None where it does not."""
    return next((m for m in (c, -c) if settled(m, "ge")), None)


def is_unbacked(value: Any) -> bool:
    """Does a size depend on a size known only after an op ran?"""
    return isinstance(value, Size) and any(s.startswith("u") for s in value.symbols)


@dataclass
class SizeSymbol:
    """Where a symbol's value comes from at run time (see the module doc)."""

    name: str
    kind: str          # 'input' | 'int' | 'unbacked'
    source: str        # Python expression in the wrapper: "x.shape[0]", "len(range(10)[:n])", "buf3.shape[0]"
    hint: int          # the value in the example the graph was lowered with
    after: tuple = ()  # an unbacked size computed from these unbacked symbols, once bound

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

    def input_shape(self, array: str, shape: tuple, dims: set, equal_dims: dict | None = None) -> tuple:
        """Input ``array``'s shape with a symbol for each dim in ``dims`` (:meth:`input_dim`)
        of size 2 or more (0 and 1 decide broadcasting: they stay numbers). ``equal_dims``:
        dim -> an earlier dim of the array that the entry keeps equal to it (a square
        weight in a backward written with one SizeRef for both): it takes that symbol,
        and the wrapper checks it."""
        out: list = []
        for d, n in enumerate(shape):
            same = (equal_dims or {}).get(d)
            if d not in dims or n < MIN_SIZE:
                out.append(n)
            elif same is not None and isinstance(out[same], Size):
                self.equal.append((f"{array}.shape[{d}]", str(out[same])))
                out.append(out[same])
            else:
                out.append(self.input_dim(array, d, len(shape), n))
        return tuple(out)

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
        unbacked = is_unbacked(length)
        if unbacked and not (step is None or type(step) is int):
            # the sign of a run-time step would be checked before the op ran
            raise Undecidable("a run-time step on a length known only once an op ran")

        def text(b: Any) -> str:
            return "" if b is None else str(b) if isinstance(b, int) else b.name

        def hint(b: Any) -> Any:
            return b if b is None or isinstance(b, int) else b.example
        bounds = f"{text(start)}:{text(stop)}" + ("" if step is None else f":{text(step)}")
        where = f"range({length})[{bounds}]"
        example = range(self.hint(length))[hint(start):hint(stop):hint(step)]
        if unbacked:
            # x[2:] of a selection: Python's slicing of a range of its length, computed in
            # the wrapper once that length is bound (both may be 0)
            return self._sliced_unbacked(length, where, example, start, stop, step)
        if len(example) < MIN_SIZE:
            raise Undecidable(f"the slice [{bounds}] has {len(example)} elements in the example "
                              f"(sizes 0 and 1 are specialized)")
        # Constant bounds that give len(range(L - d)[::k]) for every L (x[1::2], x[:-1:2])
        # are named by that form: slices of one length share the symbol.
        canon = canonical_slice((start, stop, step)) if all(
            b is None or type(b) is int for b in (start, stop, step)) else None
        if canon is not None:
            d, k = canon
            where_count = f"range({length}{f' - {d}' if d else ''})" + (f"[::{k}]" if k != 1 else "")
        else:
            where_count = where
        count = self._int_symbol(f"len({where_count})", len(example), "s")
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

    def _sliced_unbacked(self, length: Size, where: str, example: range, *bounds: Any) -> tuple:
        """(first index, count, step) of constant ``bounds`` on a dim of unbacked ``length``
        (:meth:`int_slice`): symbols of kind "unbacked" computed from ``length``'s."""
        after = tuple(sorted(length.symbols))
        canon = canonical_slice(bounds) if all(b is None or type(b) is int for b in bounds) else None
        if canon is not None:
            d, k = canon
            where_count = f"range({length}{f' - {d}' if d else ''})" + (f"[::{k}]" if k != 1 else "")
        else:
            where_count = where
        count = self.derived(f"len({where_count})", len(example), "u", after)
        start, _, step = bounds
        first: Any = 0
        if not (start is None or type(start) is int and start == 0) or (step or 1) < 0:
            first = self.derived(f"{where}.start", example.start, "o", after)
        return first, count, 1 if step is None else step

    def derived(self, source: str, hint: int, prefix: str, after: tuple) -> Size:
        """A size of kind "unbacked" that the wrapper computes with ``source`` once the
        unbacked symbols ``after`` are bound; sizes spelled alike share one."""
        for s in self.symbols.values():
            if s.kind == "unbacked" and s.after and s.source == source:
                return Size.symbol(s.name)
        name = f"{prefix}{len(self.symbols)}"
        self.symbols[name] = SizeSymbol(name, "unbacked", source, hint, after)
        return Size.symbol(name)

    def int_index(self, length: Any, index: Any, axis: int) -> Size:
        """The element a run-time int ``index`` (an object with ``name`` and ``example``)
        takes on a dim of ``length``: a symbol of kind "int" (``o<n>``, at least 0) whose
        source wraps a negative index and raises NumPy's IndexError for one out of range
        (:func:`wrap_index`; ``axis`` is the dim's position in the message)."""
        source = f"_wrap_index({index.name}, {length}, {axis})"
        hint = wrap_index(index.example, self.hint(length), axis)
        if is_unbacked(length):   # (losses[k] of a sort's result): once that length is bound
            return self.derived(source, hint, "o", tuple(sorted(length.symbols)))
        return self._int_symbol(source, hint, "o")

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
