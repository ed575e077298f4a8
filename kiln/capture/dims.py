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
from ..ops.meta import normalize_axis


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


def _with_size(value: Any, code: str, size: int) -> Any:
    """The op's inputs as metas, with every dim of symbol ``code`` set to ``size``."""
    var = getattr(value, "var", None)
    if var is not None:
        shape = tuple(size if _live(d) and d.code == code else n
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
    for code, sym in symbols.items():
        dims = _probe(op, inputs, params, code, sym.example)
        if dims is None or any(i in follow for i in dims):
            sym.as_constant(tx)
        else:
            follow.update({i: sym for i in dims})
    return follow


def _probe(op, inputs: tuple, params: dict, code: str, n: int) -> set | None:
    """Output dims that follow symbol ``code`` (example size ``n``), or None if unclear."""
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
