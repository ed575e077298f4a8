"""Dynamic dimensions through ops: which output dims stay dynamic, which get pinned.

A dynamic dim is a run-time size (a :class:`SymScalarVariable` over ``x.shape[i]``, or
an expression of such sizes) that flows through an op when kiln can tell how the op's
output shape depends on it:

- elementwise ops: broadcasting (a dynamic dim meeting a static size other than 1 is
  pinned to it);
- reductions with ``axis``: reduced dims become static, the others keep their symbol;
- slices with constant bounds (``x[1:]``, ``x[:-1]``, ``x[5:]``): the length is Python's
  ``len(range(L)[1:])`` of the dim's length ``L``, evaluated per call, so NumPy's
  clamping holds for every size (``x[5:]`` of 3 elements is empty) with no guard on
  ``L`` beyond the length's own (:func:`runtime_slices`);
- any other op: its shape rule runs on metas whose dynamic dims are exact integer
  polynomials (kiln/ir/sizes.py): each output dim is a number, one of the input sizes,
  or an expression of them (``np.concatenate`` on the batch axis: ``n + m``;
  ``np.pad``: ``n + 2``; ``reshape(-1)``: ``n*m``), which becomes a size of its own,
  spelled as that Python expression. A rule that cannot take such sizes (it compares two
  of them, or runs NumPy) is asked again with the symbol's size changed to several other
  values (2, n+1, 2n+3 and a very large one). If every output dim either stays put or
  equals the new size each time, those dims follow the symbol; if the rule fails or the
  output moves any other way (``np.repeat`` by an array), the symbol is *specialized*:
  its size is guarded (``x.shape[0] == 128``).

A size that is an expression is guarded at least 2 like an input dim (sizes 0 and 1
decide broadcasting); one that is 0 or 1 in the example is guarded equal to it instead.
The sizes never matter to results with the eager backend (NumPy runs on the real arrays);
they matter to what capture decides from shapes, which is why anything unclear pins.
Lowering works the same sizes out again from the graph (kiln/lowering/sizes.py).
"""
from __future__ import annotations

import math

from typing import Any

import numpy as np

from ..ir.sizes import Size
from ..ops import REGISTRY, Category, TensorMeta, infer_meta
from ..ops.layout import Window, _contiguous, index_dims
from ..ops.meta import normalize_axis
from .sources import shape_source


def array_tracker(value: Any) -> Any:
    """The tracker behind an op input standing for a traced array (an ``ArrayArg``), else
    None. Not ``getattr(value, "var")``: a NumPy array a composite made (np.polyval's
    coefficients) has a ``var`` too, the variance method."""
    return getattr(value, "var", None) if isinstance(value, TensorMeta) else None


def _live(dim: Any) -> bool:
    return dim is not None and not getattr(dim, "pinned", False)


def propagate_dims(tx, op, arrays: list, inputs: tuple, params: dict, exact: bool = True):
    """A function ``meta -> dims`` for the op's output (call it once the node exists).
    ``exact``: output sizes may be expressions of the input sizes (not inside a composite
    spelling that may have computed a number from them: ``Composite.relative_sizes``)."""
    static = lambda val: (None,) * len(val.shape) if isinstance(val, TensorMeta) else None  # noqa: E731
    if not any(_live(d) for a in arrays for d in a.dims):
        return static
    if op.category == Category.POINTWISE and _broadcast_result(op, arrays, inputs, params):
        return lambda val: _broadcast_dims(tx, arrays, val)
    if op.category == Category.REDUCTION and "axis" in params and len(arrays) == 1:
        (a,) = arrays
        axes = normalize_axis(params.get("axis"), len(a.dims))
        keep = bool(params.get("keepdims", False))

        def reduce_dims(val):
            if axes is None:
                return (None,) * len(val.shape)
            out = [None if i in axes else d for i, d in enumerate(a.dims) if keep or i not in axes]
            return tuple(out) if len(out) == len(val.shape) else (None,) * len(val.shape)
        return reduce_dims
    if op.mutates and op.functional:
        # x[i] = v writes a new value of x: its functional op's shape rule says which
        # sizes follow (a mutation's own rule returns None, which would pin them all).
        op = REGISTRY[op.functional]
    composing = not exact
    # (not where a derivative is written: its rules read sizes, kiln/ir/symbolic.py)
    exact = exact and not (any(a.tensor for a in arrays) or getattr(tx.output, "grad_depth", 0))
    derived = _symbolic_dims(tx, op, arrays, inputs, params) if exact else None
    if derived is None and exact:
        derived = _unbacked_rule_dims(tx, op, arrays, inputs, params)
    if derived is not None:
        return lambda val: derived if isinstance(val, TensorMeta) and len(val.shape) == len(derived) \
            else static(val)
    follow = _follow_by_probing(tx, op, arrays, inputs, params, composing)
    return lambda val: tuple(follow.get(i) for i in range(len(val.shape))) \
        if isinstance(val, TensorMeta) else None


def _broadcast_result(op, arrays: list, inputs: tuple, params: dict) -> bool:
    """Is the elementwise op's result its array operands broadcast? Not every pointwise
    op's: ``x.flatten()`` (a copy, fused as one) has one dim of ``n * m`` (its shape rule
    says so; broadcasting took its last dim for it, tests/fuzz/views.py seed 7308)."""
    base = example_meta(op, inputs, params)
    try:
        return base is None or tuple(base.shape) == np.broadcast_shapes(*(a.meta.shape for a in arrays))
    except ValueError:
        return True


def sizes_meet(arrays: list) -> bool:
    """Do two different run-time sizes meet on one axis of an elementwise op's operands
    (``np.where(x > 0, y, 0)`` of dynamic x and y)? They are not guarded equal (the
    example's sizes say the op broadcasts), so NumPy may raise there at run time: the call
    stays in the graph unused (ir/passes.py ``must_stay``)."""
    ndim = max((len(a.dims) for a in arrays), default=0)
    for i in range(ndim):
        codes = {a.dims[j].code for a in arrays
                 for j in [len(a.dims) - ndim + i] if j >= 0 and _live(a.dims[j])}
        if len(codes) > 1:
            return True
    return False


def _broadcast_dims(tx, arrays: list, val: TensorMeta) -> tuple:
    ndim = len(val.shape)
    out: list = [None] * ndim
    for i in range(ndim):
        candidates = []
        for a in arrays:
            j = len(a.dims) - ndim + i
            if j >= 0 and a.meta.shape[j] != 1:
                candidates.append((a, j))
        syms = [a.dims[j] for a, j in candidates if _live(a.dims[j])]
        unbacked = [d for d in syms if getattr(d, "key", None) is not None]
        if unbacked and any(d is not unbacked[0] for d in syms):
            # A size known only at run time meets another size: it may be 1 or differ
            # there (a broadcast or NumPy's error); only running it as Python knows.
            unbacked[0].as_constant(tx)
        if syms and all(_live(a.dims[j]) for a, j in candidates):
            out[i] = syms[0]
        elif syms:
            # A static size meets a dynamic one: the dynamic one must equal it.
            for a, j in candidates:
                if _live(a.dims[j]):
                    a.dims[j].as_constant(tx)
    return tuple(out)


def _unbacked_rule_dims(tx, op, arrays: list, inputs: tuple, params: dict) -> tuple | None:
    """Output dims derived from sizes known only once the graph ran (unbacked_dims.py)."""
    from .unbacked_dims import rule_dims
    from .variables.arrays import UnbackedSize
    live = list({d.code: d for a in arrays for d in a.dims if _live(d)}.values())
    if not any(isinstance(d, UnbackedSize) for d in live):
        return None
    return rule_dims(tx, op, live, inputs, params)


def _with_size(value: Any, code: Any, size: int) -> Any:
    """The op's inputs as metas, with every dim of symbol ``code`` (or of any symbol in
    the set ``code``) set to ``size``."""
    codes = code if isinstance(code, (set, frozenset)) else {code}
    var = array_tracker(value)
    if var is not None:
        shape = tuple(size if _live(d) and d.code in codes else n
                      for d, n in zip(var.dims, var.meta.shape))
        return TensorMeta(shape, var.meta.dtype)
    if isinstance(value, tuple):
        return tuple(_with_size(v, code, size) for v in value)
    if isinstance(value, list):
        return [_with_size(v, code, size) for v in value]
    return value


def _with_symbols(value: Any, names: dict) -> Any:
    """The op's inputs as metas, each live dim the :class:`Size` symbol ``names`` gives
    its code."""
    var = array_tracker(value)
    if var is not None:
        return TensorMeta(tuple(Size.symbol(names[d.code]) if _live(d) else n
                                for d, n in zip(var.dims, var.meta.shape)), var.meta.dtype)
    if isinstance(value, tuple):
        return tuple(_with_symbols(v, names) for v in value)
    if isinstance(value, list):
        return [_with_symbols(v, names) for v in value]
    return value


def _symbolic_dims(tx, op, arrays: list, inputs: tuple, params: dict) -> tuple | None:
    """The output's dims from the op's shape rule run over size symbols: None (static),
    an input's dim, or a new run-time size for an expression of them; None when the
    rule cannot take symbols or its answer at the example's sizes is not the example's.

    Each input size is a symbol of its own; a rule that needs two of them equal
    (``np.vstack`` of two batches of rows of one dynamic width) is asked again with the
    sizes of one example size as one symbol, and the entry guards they are equal (the
    duck sizing lowering assumes, kiln/lowering/sizes.py)."""
    from .variables.arrays import UnbackedSize
    live = list({d.code: d for a in arrays for d in a.dims if _live(d)}.values())
    if any(getattr(d, "key", None) is not None for d in live):
        return None   # an unbacked size may be 0 or 1: the symbols' bound is 2
    base = example_meta(op, inputs, params)
    if base is None:
        return None
    for duck in (False, True):
        key = (lambda d: d.example) if duck else (lambda d: d.code)
        first: dict = {}
        for d in live:
            first.setdefault(key(d), d)
        if duck and len(first) == len(live):
            return None   # no two of one size: the same question again
        syms = {f"c{i}": d for i, d in enumerate(first.values())}
        names = {d.code: f"c{list(first).index(key(d))}" for d in live}
        out = _rule_over_symbols(op, _with_symbols(inputs, names), params, base)
        if isinstance(out, TensorMeta) and out.dtype == base.dtype and len(out.shape) == len(base.shape):
            break
    else:
        return None
    hints = {name: sym.example for name, sym in syms.items()}
    for o, b in zip(out.shape, base.shape):
        if not (o == b if type(o) is int else isinstance(o, Size) and o.subs(hints) == b):
            return None
    for d in live:
        rep = syms[names[d.code]]
        if rep is not d:
            for size in (rep, d):   # a size known only once the graph ran: no guard can
                if isinstance(size, UnbackedSize):   # say it equals another (it breaks)
                    size.as_constant(tx)
            tx.guards.add_truth(f"({rep.code} == {d.code})", f"({rep.text} == {d.text})", True,
                                tuple(dict.fromkeys(rep.leaves + d.leaves)))
    dims = []
    for o in out.shape:
        if type(o) is int:
            dims.append(None)
        elif len(o.terms) == 1 and next(iter(o.terms.items()))[1] == 1 and len(next(iter(o.terms))) == 1:
            dims.append(syms[next(iter(o.symbols))])
        else:
            dims.append(_derived_size(tx, o, syms, o.subs(hints)))
    return tuple(dims)


def example_meta(op, inputs: tuple, params: dict) -> TensorMeta | None:
    """The op's result meta at the example's sizes; None if it is no array or the rule fails."""
    try:
        base = infer_meta(op, _with_size(inputs, frozenset(), 0), params)
    except Exception:
        return None
    return base if isinstance(base, TensorMeta) else None


def _rule_over_symbols(op, metas: tuple, params: dict, base: Any) -> Any:
    """The op's result meta for inputs with symbolic sizes: its shape rule, or for a
    view op whose rule runs NumPy (reshape resolving -1) its layout rule on the
    C-contiguous input (kiln/ops/layout.py, as lowering asks it); None if neither can."""
    try:
        return infer_meta(op, metas, params)
    except Exception:
        pass
    if op.layout is None or not metas or not isinstance(metas[0], TensorMeta) \
            or any(isinstance(m, TensorMeta) for m in metas[1:]) or not isinstance(base, TensorMeta):
        return None
    shape = metas[0].shape
    try:
        window = op.layout(Window(shape, _contiguous(shape), 0), *metas[1:], **op.bind_params(params))
    except Exception:
        return None
    return None if window is None else TensorMeta(tuple(window.shape), base.dtype)


def _derived_size(tx, size: Size, syms: dict, example: int) -> Any:
    """A run-time size for ``size``, a polynomial over the sizes ``syms`` (symbol name ->
    SymScalarVariable), guarded at least 2; None (a number) with a guard where the
    example's is 0 or 1."""
    from .variables.arrays import SymScalarVariable

    def spell(field: str) -> str:
        parts = []
        for m, c in sorted(size.terms.items(), key=lambda mc: (-len(mc[0]), mc[0])):
            factors = [f"{getattr(syms[n], field)}" for n in m]
            if c != 1 or not factors:
                factors.insert(0, str(c))
            parts.append(" * ".join(factors))
        return "(" + " + ".join(parts) + ")"
    leaves = tuple(dict.fromkeys(leaf for n in size.symbols for leaf in syms[n].leaves))
    dim = SymScalarVariable(spell("code"), spell("text"), example, leaves, tx=tx)
    return _at_least_two(tx, dim)


def _at_least_two(tx, size: Any) -> Any:
    """``size`` (a run-time size), guarded at least 2 as every dynamic size is; None with
    a guard on its value where the example's is 0 or 1 (they decide broadcasting)."""
    if size.example >= 2:
        tx.guards.add_truth(f"({size.code} >= 2)", f"({size.text} >= 2)", True, size.leaves)
        return size
    tx.guards.add_truth(f"({size.code} == {size.example})", f"({size.text} == {size.example})",
                        True, size.leaves)
    return None


def _follow_by_probing(tx, op, arrays: list, inputs: tuple, params: dict,
                       composing: bool = False) -> dict:
    """Output dims that follow each dynamic input size (probed); sizes that cannot follow
    are specialized. ``composing``: inside a composite spelling, a size no output dim
    follows is specialized too, for the spelling may have read it (np.delete(z, 0) on an
    example of 2 slices ``[1:2]``: one element for every size probed)."""
    from .variables.arrays import UnbackedSize
    symbols = {}
    for a in arrays:
        for d in a.dims:
            if _live(d):
                symbols.setdefault(d.code, d)
    follow: dict[int, Any] = {}
    failed = []
    for code, sym in symbols.items():
        dims = _probe(op, inputs, params, code, sym.example, isinstance(sym, UnbackedSize))
        if dims is None or any(i in follow for i in dims) or composing and not dims:
            failed.append(sym)
        else:
            follow.update({i: sym for i in dims})
    # Symbols of one example size that must move together (np.concatenate([x @ w, y],
    # axis=1) of two batches): they follow as one when the entry guards they are equal,
    # as lowering's duck sizing assumes (kiln/lowering/sizes.py).
    handled: set = set()
    for sym in failed:
        if id(sym) in handled:
            continue
        group = [t for t in failed if t.example == sym.example and id(t) not in handled]
        handled.update(id(t) for t in group)
        dims = _probe(op, inputs, params, {t.code for t in group}, sym.example,
                      any(isinstance(t, UnbackedSize) for t in group)) if len(group) > 1 else None
        if dims is None or any(i in follow for i in dims) or composing and not dims:
            for t in group:
                t.as_constant(tx)
            continue
        for other in group[1:]:
            for size in (sym, other):
                if isinstance(size, UnbackedSize):
                    size.as_constant(tx)
            tx.guards.add_truth(f"({sym.code} == {other.code})", f"({sym.text} == {other.text})",
                                True, sym.leaves + other.leaves)
        follow.update({i: sym for i in dims})
    return follow


# The most elements a probe's result may have beyond four times the example's
PROBE_ELEMENTS = 1 << 22


def _elements(shape: tuple) -> int:
    return math.prod(int(d) for d in shape)


def _input_elements(value: Any) -> int:
    """The elements of every array among an op's inputs (metas, nested in tuples/lists)."""
    if isinstance(value, TensorMeta):
        return _elements(value.shape)
    if isinstance(value, (tuple, list)):
        return sum(_input_elements(v) for v in value)
    return 0


def _probe(op, inputs: tuple, params: dict, code: Any, n: int, unbacked: bool = False) -> set | None:
    """Output dims that follow symbol ``code`` (or the set of symbols ``code``, moved
    together; example size ``n``), or None if unclear. ``unbacked``: the size is known
    only at run time and may be 1 there, which is asked too (``np.squeeze`` of a
    one-element selection drops its axis)."""
    try:
        base = infer_meta(op, _with_size(inputs, code, n), params)
    except Exception:
        return None
    if not isinstance(base, TensorMeta):
        return None
    followed = None
    base_in = _input_elements(_with_size(inputs, code, n))
    for size in (2, n + 1, 2 * n + 3, 4099 * n + 7) + ((1,) if unbacked else ()):
        if size == n:
            continue
        probed = _with_size(inputs, code, size)
        if followed is not None and size > n and (
                _elements(base.shape) * (size / n) ** len(followed) > max(PROBE_ELEMENTS, 4 * _elements(base.shape))
                or _input_elements(probed) > max(PROBE_ELEMENTS, 4 * base_in)):
            # (NumPy runs on stand-ins this size: np.outer of a size-20502 probe is 1.7 GB,
            # its np.dot an hour, np.linalg.eigvalsh of a 20502 x 20502 stand-in, whose
            # result is small, as long; the smaller probes have said which dims follow)
            continue
        try:
            out = infer_meta(op, probed, params)
        except Exception:
            return None
        if not isinstance(out, TensorMeta) or out.dtype != base.dtype or len(out.shape) != len(base.shape):
            return None
        changed = {i for i, (b, o) in enumerate(zip(base.shape, out.shape)) if b != o}
        if any(base.shape[i] != n or out.shape[i] != size for i in changed):
            return None
        if followed is not None and changed != followed:
            return None
        followed = changed
    return followed or set()


def _slice_length(length: int, start: Any, stop: Any, step: Any) -> int:
    """The number of elements of ``slice(start, stop, step)`` on a dim of ``length``:
    Python's own rule (negative bounds count from the end, bounds past the ends clamp)."""
    return len(range(length)[start:stop:step])


def _slice_start(length: int, start: Any, stop: Any, step: Any) -> int:
    """The first index ``slice(start, stop, step)`` takes on a dim of ``length``."""
    return range(length)[start:stop:step].start


def runtime_slices(tx, op, bound, scalars: dict, used: set, exact: bool = True):
    """``x[:n]`` with ``n`` a run-time Python int (an argument, or an int the function
    computed from arguments and sizes): ``(slices, meta -> dims)``, ``slices`` mapping
    each such slice of the index (by id) to the slice the graph records.

    The sliced dim is the run-time size ``len(range(L)[:n])``, a
    :class:`SymScalarVariable` (Python reading ``y.shape[0]`` gets it; ops propagate it
    like a dynamic input dim) and ``n`` stays a graph input; lowering gives the length a
    size symbol of kind "int" (kiln/lowering/sizes.py). Python's slicing of a range says
    what NumPy does with any ``n`` (negative, past the end), so no guard on ``n`` is
    needed, except that sizes 0 and 1 decide broadcasting: the entry guards the length
    ``>= 2``; an example of length 0 or 1 records a constant slice instead, guarded by
    the length (and, for 1, the index it takes), so every ``n`` giving an empty slice
    shares one entry.

    A run-time step (``x[::k]``) is the same kind of length, and the entry guards its
    sign; a run-time int index (``x[i]``) stays a graph input too, and no size follows it.
    Constant bounds on a dynamic dim (``x[1:]``, ``x[5:]``; ``exact``, and not a write)
    are the same kind of length, ``len(range(L)[5:])``, and the graph keeps the slice.
    Where a derivative is written (inside a function ``kiln.grad`` differentiates, or
    on a kiln.Tensor: the joint graph, kiln/aot/symbolic.py) they stay run-time lengths
    too: the backward names them as ``SliceLength``s (kiln/ir/symbolic.py), or pins them.

    None when the op takes no run-time slice bounds here (``Op.runtime_slices``)."""
    k = op.runtime_slices
    if k is None or k >= len(bound.inputs):
        return None
    from .variables.arrays import UnbackedSize
    x, index = bound.inputs[0], bound.inputs[k]
    var = array_tracker(x)
    if var is None or not isinstance(index, tuple):
        return None

    def runtime(b: Any) -> Any:
        syms = scalars.get(id(b))
        return syms[0] if syms and type(b) is int else None
    slices = [e for e in index if isinstance(e, slice)]
    ndim = len(var.meta.shape)
    consumed = sum(1 for e in index if e is not None and e is not Ellipsis)
    if consumed > ndim or sum(1 for e in index if e is Ellipsis) > 1:
        return None   # NumPy's IndexError, raised by the shape rule
    at = _runtime_indices(var, index, runtime)
    sized = any(runtime(e.start) or runtime(e.stop) or runtime(e.step) for e in slices)
    # (the backward follows such lengths: kiln/ir/symbolic.py SliceLength)
    # x[1:], x[:-1] on a dynamic dim: a run-time length like x[:n]'s
    # (a write too where the dim is known only once the graph ran: y[1:] = y[:-1] of a
    # selection, whose two sides then have one size)
    clamped = exact and (not op.mutates or any(isinstance(d, UnbackedSize) for d in var.dims)) \
        and any(_live(d) for d in var.dims) and slices and all(
        e is None or e is Ellipsis or type(e) is int or type(e) is slice and all(
            p is None or type(p) is int for p in (e.start, e.stop, e.step)) for e in index)
    if not (at or sized or clamped) or any(not isinstance(e.step, (int, type(None))) or e.step == 0 for e in slices):
        return None
    out: list = []
    replaced: dict = {}
    d = 0
    for e in list(index) + ([] if Ellipsis in index else [Ellipsis]):
        if e is Ellipsis:
            out.extend(var.dims[d:d + ndim - consumed])
            d += ndim - consumed
        elif e is None:
            out.append(None)
        elif isinstance(e, slice):
            dim = var.dims[d] if _live(var.dims[d]) else None
            if any(runtime(p) for p in (e.start, e.stop)):
                length = dim if dim is not None else _length_of(tx, var, d)
                out.append(_runtime_slice(tx, e, length, runtime, replaced, used))
            elif runtime(e.step):
                length = dim if dim is not None else _length_of(tx, var, d)
                out.append(_runtime_slice(tx, e, length, runtime, replaced, used))
            elif all(len(range(m)[e]) == m for m in (2, 7, 4099)):   # [:], [::-1], [0:]
                out.append(dim)
            elif dim is not None and clamped:
                out.append(_runtime_slice(tx, e, dim, runtime, replaced, used))
            else:
                if dim is not None:
                    dim.as_constant(tx)
                out.append(None)
            d += 1
        elif d in at:
            # x[i], i a run-time int: a graph input; the wrapper wraps a negative i and
            # raises NumPy's IndexError for one out of range (kiln/lowering/sizes.py)
            replaced[id(e)] = tx.output.scalar_node(runtime(e))
            used.add(id(e))
            d += 1
        else:
            if _live(var.dims[d]) and e not in (0, -1):
                var.dims[d].as_constant(tx)
            d += 1
    dims = tuple(out)
    return replaced, lambda val: dims if isinstance(val, TensorMeta) and len(val.shape) == len(dims) \
        else (None,) * len(getattr(val, "shape", ()))


def _length_of(tx, var, d: int) -> Any:
    """The length of static dim ``d`` of ``var`` for a run-time slice: spelled as its
    source (guarded equal already), so that a new size fails only its own guard and can
    become dynamic."""
    from .variables.arrays import SymScalarVariable
    length = var.meta.shape[d]
    if var.source is None:
        return length
    src = shape_source(var.source, d)
    return SymScalarVariable(src.code(tx.output.ns), src.display(), length, ())


def _runtime_indices(var, index: tuple, runtime) -> set:
    """The dims of ``var`` that ``index`` takes with a run-time int (``x[i]``) whose
    example is inside the dim (an example out of range raises at capture: NumPy's error
    from the user's line, as Python)."""
    dims = index_dims(index, len(var.meta.shape))
    out = set()
    for e, d in zip(index, dims or ()):
        if d is not None and type(e) is int and runtime(e) is not None \
                and -var.meta.shape[d] <= e < var.meta.shape[d]:
            out.add(d)
    return out


def _runtime_slice(tx, e: slice, length: Any, runtime, replaced: dict, used: set) -> Any:
    """One slice with run-time bounds on a dim of ``length`` (an int or a run-time size;
    see :func:`runtime_slices`): its dim in the result."""
    from .variables.arrays import SymScalarVariable, UnbackedSize
    parts = (e.start, e.stop, e.step)
    if isinstance(length, UnbackedSize):
        # x[2:], x[:n] of a dim known only once the graph ran: a size derived from it
        from .unbacked_dims import sliced
        if runtime(e.step) is not None:
            length.as_constant(tx)   # (a run-time step's sign would be guarded)
        dim = sliced(tx, length, e, runtime)
        used.update(id(p) for p in parts if runtime(p) is not None)
        replaced[id(e)] = slice(*(tx.output.scalar_node(runtime(p)) if runtime(p) is not None else p
                                  for p in parts))
        return dim
    codes, texts, values, leaves = [], [], [], []
    for p, sym in [(length, length if isinstance(length, SymScalarVariable) else None)] + \
            [(p, runtime(p)) for p in parts]:
        if sym is not None:
            codes.append(sym.code)
            texts.append(sym.text)
            values.append(sym.example)
            leaves += sym.leaves
        else:
            codes.append(repr(p))
            texts.append("" if p is None else repr(p))
            values.append(p)
    leaves = tuple(dict.fromkeys(leaves))
    where = f"range({texts[0]})[{texts[1]}:{texts[2]}" + ("" if e.step is None else f":{texts[3]}") + "]"
    args = ", ".join(codes)
    count = _slice_length(*values)
    size = SymScalarVariable(f"{tx.output.ns.ref(_slice_length, 'fn')}({args})", f"len({where})",
                             count, leaves, tx=tx)
    if all(runtime(p) is None for p in parts):
        # constant bounds on a dynamic dim: the graph keeps the slice as it is
        return _at_least_two(tx, size)
    used.update(id(p) for p in parts if runtime(p) is not None)
    step = runtime(e.step)
    if step is not None:
        # the sign of a run-time step: size expressions over its magnitude (sizes.py)
        sign = ">" if step.example > 0 else "<"
        tx.guards.add_truth(f"({step.code} {sign} 0)", f"({step.text} {sign} 0)", True, step.leaves)
    if count >= 2:
        tx.guards.add_truth(f"({size.code} >= 2)", f"({size.text} >= 2)", True, leaves)
        replaced[id(e)] = slice(*(tx.output.scalar_node(runtime(p)) if runtime(p) is not None else p
                                  for p in parts))
        return size
    tx.guards.add_truth(f"({size.code} == {count})", f"({size.text} == {count})", True, leaves)
    if count == 0:
        replaced[id(e)] = slice(0, 0)
        return None
    first = _slice_start(*values)
    tx.guards.add_truth(f"({tx.output.ns.ref(_slice_start, 'fn')}({args}) == {first})",
                        f"({where}.start == {first})", True, leaves)
    replaced[id(e)] = slice(first, first + 1)
    return None
