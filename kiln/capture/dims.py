"""Dynamic dimensions through ops: which output dims stay dynamic, which get pinned.

kiln has no symbolic shapes yet. A dynamic dim is a runtime size (a
:class:`SymScalarVariable` over ``x.shape[i]``) that may flow through an op only when
kiln can tell how the op's output shape depends on it:

- elementwise ops: broadcasting (a dynamic dim meeting a static size other than 1 is
  pinned to it);
- reductions with ``axis``: reduced dims become static, the others keep their symbol;
- any other op: its shape rule is asked again with the symbol's size changed to several
  other values (2, n+1, 2n+3 and a very large one). If every output dim either stays put
  or equals the new size each time, those dims follow the symbol; if the rule fails or
  the output moves any other way (``x[1:]``, ``np.repeat``, a clamp like ``x[:5]``), the
  symbol is *specialized*: its size is guarded (``x.shape[0] == 128``).

The sizes never matter to results with the eager backend (NumPy runs on the real arrays);
they matter to what capture decides from shapes, which is why anything unclear pins.
"""
from __future__ import annotations

from typing import Any

from ..ops import REGISTRY, Category, TensorMeta, infer_meta
from ..ops.layout import index_dims
from ..ops.meta import normalize_axis
from .sources import shape_source


def _live(dim: Any) -> bool:
    return dim is not None and not getattr(dim, "pinned", False)


def propagate_dims(tx, op, arrays: list, inputs: tuple, params: dict):
    """A function ``meta -> dims`` for the op's output (call it once the node exists)."""
    static = lambda val: (None,) * len(val.shape) if isinstance(val, TensorMeta) else None  # noqa: E731
    if not any(_live(d) for a in arrays for d in a.dims):
        return static
    if op.category == Category.POINTWISE:
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
    follow = _follow_by_probing(tx, op, arrays, inputs, params)
    return lambda val: tuple(follow.get(i) for i in range(len(val.shape))) \
        if isinstance(val, TensorMeta) else None


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


def _with_size(value: Any, code: Any, size: int) -> Any:
    """The op's inputs as metas, with every dim of symbol ``code`` (or of any symbol in
    the set ``code``) set to ``size``."""
    codes = code if isinstance(code, (set, frozenset)) else {code}
    var = getattr(value, "var", None)
    if var is not None:
        shape = tuple(size if _live(d) and d.code in codes else n
                      for d, n in zip(var.dims, var.meta.shape))
        return TensorMeta(shape, var.meta.dtype)
    if isinstance(value, tuple):
        return tuple(_with_size(v, code, size) for v in value)
    if isinstance(value, list):
        return [_with_size(v, code, size) for v in value]
    return value


def _follow_by_probing(tx, op, arrays: list, inputs: tuple, params: dict) -> dict:
    symbols = {}
    for a in arrays:
        for d in a.dims:
            if _live(d):
                symbols.setdefault(d.code, d)
    follow: dict[int, Any] = {}
    failed = []
    for code, sym in symbols.items():
        dims = _probe(op, inputs, params, code, sym.example)
        if dims is None or any(i in follow for i in dims):
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
        dims = _probe(op, inputs, params, {t.code for t in group}, sym.example) \
            if len(group) > 1 else None
        if dims is None or any(i in follow for i in dims):
            for t in group:
                t.as_constant(tx)
            continue
        for other in group[1:]:
            tx.guards.add_truth(f"({sym.code} == {other.code})", f"({sym.text} == {other.text})",
                                True, sym.leaves + other.leaves)
        follow.update({i: sym for i in dims})
    return follow


def _probe(op, inputs: tuple, params: dict, code: Any, n: int) -> set | None:
    """Output dims that follow symbol ``code`` (or the set of symbols ``code``, moved
    together; example size ``n``), or None if unclear."""
    try:
        base = infer_meta(op, _with_size(inputs, code, n), params)
    except Exception:
        return None
    if not isinstance(base, TensorMeta):
        return None
    followed = None
    for size in (2, n + 1, 2 * n + 3, 4099 * n + 7):
        if size == n:
            continue
        try:
            out = infer_meta(op, _with_size(inputs, code, size), params)
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


def runtime_slices(tx, op, bound, scalars: dict, used: set):
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
    Slices of a kiln.Tensor and slices inside a function ``kiln.grad`` differentiates
    keep their bounds specialized: derivative rules read sizes, and a run-time length is
    no input's size (kiln/ir/symbolic.py); an int index needs none.

    None when the op takes no run-time slice bounds here (``Op.runtime_slices``)."""
    k = op.runtime_slices
    if k is None or k >= len(bound.inputs):
        return None
    x, index = bound.inputs[0], bound.inputs[k]
    var = getattr(x, "var", None)
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
    if not (at or sized) or sized and (var.tensor or getattr(tx.output, "grad_depth", 0)) \
            or any(not isinstance(e.step, (int, type(None))) or e.step == 0 for e in slices):
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
    from .variables.arrays import SymScalarVariable
    parts = (e.start, e.stop, e.step)
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
