"""Sizes computed from sizes known only after an op ran: ``x[m][2:]``, ``np.r_[0, x[m], n]``.

An :class:`UnbackedSize` (the length of ``x[mask]``, of ``np.flatnonzero(d)``) has no
Python value before the graph runs. Ops whose output size is an expression of such
sizes keep the graph going with a size of the same kind, derived from theirs:

- a shape rule run over size symbols (kiln/ir/sizes.py) whose answer is a polynomial
  (``np.concatenate`` of a selection and two scalars: ``u0 + 2``; ``np.outer``: ``u0*u1``).
  Unbacked symbols are at least 0, so the rule's comparisons hold for every run-time
  length; the rule is asked again with each such size at 0 and 1 (a rule that tests
  ``n == 1``, as ``np.squeeze`` does, would take a symbol for "not 1"), and an answer
  that moves any other way breaks the graph as before;
- a slice with constant bounds (``x[2:]``, ``x[::2]``): the polynomial when the bounds
  always fit (``(u0 + 2)[1:]`` is ``u0 + 1``), else a size of its own, Python's
  ``len(range(u0)[2:])``, that slices spelled alike share (``x[1:]`` and ``x[:-1]`` of
  one selection have one length: ``np.diff`` of it stays in the graph).

Derived sizes of one expression are one tracker (``tx.output.unbacked_sizes`` by a key
of the expression), so they meet in broadcasting as equal sizes do; anything that would
read one as a number still breaks the graph (UnbackedSize.as_constant). Lowering works
the same sizes out from the graph again (kiln/lowering/sizes.py ``int_slice``).
"""
from __future__ import annotations

from typing import Any

from ..ir.sizes import Size, Undecidable
from ..ir.symbolic import canonical_slice
from ..ops import Category, TensorMeta, infer_meta
from ..ops.layout import _slice as layout_slice


def atom_symbol(tx, dim: Any) -> Size:
    """``dim`` (an UnbackedSize, or a dynamic input size) as a polynomial over stable
    symbols: ``u<n>`` for a size known only once the graph ran (at least 0), ``d<n>``
    for a dynamic size (at least 2, as capture guards it)."""
    from .variables.arrays import UnbackedSize
    poly = getattr(dim, "poly", None)
    if poly is not None:
        return poly
    names = tx.output.size_names
    key = dim.key if isinstance(dim, UnbackedSize) else ("sym", dim.code)
    name = names.get(key)
    if name is None:
        name = names[key] = f"{'u' if isinstance(dim, UnbackedSize) else 'd'}{len(names)}"
        tx.output.size_atoms[name] = dim
    return Size.symbol(name)


def derived_size(tx, poly: Any, example: int, what: str) -> Any:
    """The dim for size ``poly`` (over :func:`atom_symbol` names; example ``example``):
    None for a number, the tracker itself for one symbol, else the UnbackedSize of that
    expression (one per expression). An example of 0 or 1 breaks the graph, as a
    selection's does (they decide broadcasting)."""
    from .variables.arrays import UnbackedSize
    if isinstance(poly, int):
        return None
    atoms = tx.output.size_atoms
    if len(poly.terms) == 1 and next(iter(poly.terms.items()))[1] == 1 \
            and len(next(iter(poly.terms))) == 1:
        return atoms[next(iter(poly.symbols))]
    if example < 2:
        tx.unsupported("data_dependent", f"{what} has a data-dependent size of {example} here "
                       f"(sizes 0 and 1 decide broadcasting)")
    key = ("size", poly)
    found = tx.output.unbacked_sizes.get(key)
    if found is None:
        size = UnbackedSize(key, example, what)
        size.poly = poly
        found = tx.output.unbacked_sizes[key] = (size, None)
    return found[0]


def sliced(tx, length: Any, e: slice, runtime: Any) -> Any:
    """The dim of slice ``e`` of a dim of unbacked ``length``: its bounds are constants, or
    run-time ints (``runtime(bound)``: the SymScalarVariable of one, else None) that stay
    graph inputs; no guard names the count, which is known only once the graph ran."""
    from .variables.arrays import UnbackedSize
    bounds = (e.start, e.stop, e.step)
    syms = [runtime(b) for b in bounds]
    values = tuple(b if s is None else s.example for b, s in zip(bounds, syms))
    count = len(range(length.example)[slice(*values)])
    texts = ["" if b is None else str(b) if s is None else s.text for b, s in zip(bounds, syms)]
    what = f"{length.text}[{texts[0]}:{texts[1]}" + ("" if e.step is None else f":{texts[2]}") + "]"
    found = None
    if not any(syms):
        try:
            found = layout_slice(*bounds, atom_symbol(tx, length))
        except Undecidable:
            pass
    if found is not None:
        return derived_size(tx, found[1], count, what)
    if count < 2:
        tx.unsupported("data_dependent", f"{what} has a data-dependent size of {count} here "
                       f"(sizes 0 and 1 decide broadcasting)")
    if any(syms):
        key = ("slice", length.key, tuple(("int", s.code) if s is not None else b for b, s in zip(bounds, syms)))
    else:
        key = ("slice", length.key, canonical_slice(bounds) or bounds)
    found = tx.output.unbacked_sizes.get(key)
    if found is None:
        found = tx.output.unbacked_sizes[key] = (UnbackedSize(key, count, what), None)
    return found[0]


def rule_dims(tx, op, live: list, inputs: tuple, params: dict) -> tuple | None:
    """The output dims of ``op`` from its shape rule over symbols, where some of the
    ``live`` input sizes are UnbackedSizes; None when the rule cannot say (the caller
    probes, and breaks the graph)."""
    from .dims import _rule_over_symbols, _with_size, _with_symbols, example_meta
    from .variables.arrays import UnbackedSize
    fresh = {d.code: f"{'u' if isinstance(d, UnbackedSize) else 'c'}{i}" for i, d in enumerate(live)}
    hints = {fresh[d.code]: d.example for d in live}
    base = example_meta(op, inputs, params)
    if base is None:
        return None
    out = _rule_over_symbols(op, _with_symbols(inputs, fresh), params, base)
    if not (isinstance(out, TensorMeta) and out.dtype == base.dtype and len(out.shape) == len(base.shape)):
        return _divided_dims(tx, op, live, inputs, params, base)
    if any(_at(o, hints) != b for o, b in zip(out.shape, base.shape)):
        return None
    for d in live:
        if not isinstance(d, UnbackedSize):
            continue
        for n in (0, 1):   # a rule that tests n == 1 (np.squeeze) takes a symbol for "not 1"
            try:
                probe = infer_meta(op, _with_size(inputs, d.code, n), params)
            except Exception:
                if n == 0:
                    continue   # NumPy raises for an empty one at run time too
                return None
            moved = {**hints, fresh[d.code]: n}
            if not isinstance(probe, TensorMeta) or tuple(probe.shape) != tuple(_at(o, moved) for o in out.shape):
                return None
    values = {fresh[d.code]: atom_symbol(tx, d) for d in live}
    by_name = {fresh[d.code]: d for d in live}
    dims = []
    for o, b in zip(out.shape, base.shape):
        if isinstance(o, int):
            dims.append(None)
        elif len(o.terms) == 1 and next(iter(o.terms.items()))[1] == 1 and len(next(iter(o.terms))) == 1:
            dims.append(by_name[next(iter(o.symbols))])
        elif any(n.startswith("u") for n in o.symbols):
            dims.append(derived_size(tx, o.subs(values), b, f"{op.name}'s result"))
        else:
            return None   # an expression of dynamic input sizes only: dims.py's own path
    return tuple(dims)


def _divided_dims(tx, op, live: list, inputs: tuple, params: dict, base: TensorMeta) -> tuple | None:
    """A view of one unbacked size whose rule cannot run over symbols, where one output
    dim is that size divided by a constant (``y.reshape(-1, 2)``: ``u0 / 2``, NumPy's
    error at run time when it does not divide) and the others stay put, as probing at
    multiples of the example says: that dim is a size of its own, one per size and
    divisor. None for anything else."""
    from .dims import _with_size
    from .variables.arrays import UnbackedSize
    if op.category != Category.VIEW or len(live) != 1 or not isinstance(live[0], UnbackedSize):
        return None
    (d,) = live
    moved: set | None = None
    for m in (2, 3, 5):
        try:
            probe = infer_meta(op, _with_size(inputs, d.code, d.example * m), params)
        except Exception:
            return None
        if not isinstance(probe, TensorMeta) or len(probe.shape) != len(base.shape):
            return None
        now = {i for i, (b, o) in enumerate(zip(base.shape, probe.shape)) if b != o}
        if any(probe.shape[i] != base.shape[i] * m for i in now) or moved not in (None, now):
            return None
        moved = now
    if not moved or len(moved) != 1:
        return None
    (i,) = moved
    if base.shape[i] == 0 or d.example % base.shape[i]:
        return None
    divisor = d.example // base.shape[i]
    if divisor == 1:
        return tuple(d if k == i else None for k in range(len(base.shape)))
    what = f"{d.text} / {divisor}"
    if base.shape[i] < 2:
        tx.unsupported("data_dependent", f"{what} has a data-dependent size of {base.shape[i]} "
                       f"here (sizes 0 and 1 decide broadcasting)")
    key = ("divided", d.key, divisor)
    found = tx.output.unbacked_sizes.get(key)
    if found is None:
        found = tx.output.unbacked_sizes[key] = (UnbackedSize(key, base.shape[i], what), None)
    return tuple(found[0] if k == i else None for k in range(len(base.shape)))


def _at(size: Any, values: dict) -> Any:
    return size.subs(values) if isinstance(size, Size) else size
