"""What a NumPy call's result depends on beyond its inputs' shapes and dtypes, decided while
capturing it (kiln/capture/opcall.py): how NumPy lays out an argument (``Op.numpy_layout``:
guarded), and sizes known only once the op ran (``Op.unbacked``: one symbol per thing
counted)."""
from __future__ import annotations

from typing import Any

from ..ops import Bound, infer_meta
from ..ops.registry import map_leaves
from .call_inputs import ArrayArg, as_meta, flatten, input_at, replace_at
from .dims import array_tracker
from ..ir.graph import SizeRef
from .variables.arrays import SymScalarVariable, UnbackedSize, same_value


def numpy_layout_known(tx, text: str, x: Any) -> None:
    """Op.numpy_layout: ``x`` must be an argument the graph has not written (kiln lays out
    what it computes its own way); whether its last axis is contiguous is guarded."""
    var = array_tracker(x)
    value = tx.output.leaf_value(var.source) if var is not None and var.node.kind == "placeholder" \
        and var.source is not None else None
    contiguous = value is not None and (value.ndim == 0 or value.shape[-1] == 1
                                        or value.strides[-1] == value.itemsize)
    # (once the graph wrote it, kiln's value of it is a C-ordered copy: the same answer
    # where NumPy's last axis is contiguous too)
    if value is None or tx.output.writes and not contiguous:
        tx.unsupported("unsupported_call", f"{text}: the result depends on how NumPy lays out an "
                       f"array computed in the function; it runs as Python")
    code, shown = var.source.code(tx.guards.ns), var.source.display()
    tx.guards.add_truth(f"({code}.ndim == 0 or {code}.shape[-1] == 1 or {code}.strides[-1] == {code}.itemsize)",
                        f"{shown}'s last axis is contiguous", contiguous, (var.source,))


def unbacked_dims(tx, text: str, bound: Bound, spec: tuple):
    """``meta -> dims`` of a data-dependent op's result (Op.unbacked): its "u" dims one
    :class:`UnbackedSize` per thing counted (``x[m]`` and ``np.nonzero(m)`` share one)."""
    count, out_dims = spec
    sizes = tx.output.unbacked_sizes
    counted = input_at(bound.inputs, count[1])
    rest = tuple(count[2:]) + (tx.output.writes,)
    key = (count[0], counted.var.node) + rest
    for (what, node, *others), (_, var) in sizes.items():
        if what == count[0] and tuple(others) == rest and same_value(node, counted.var.node):
            # the same count of an equal value (``x > 0`` written twice): one size, and the
            # graph reads it from the first value, so lowering shares the symbol too
            key = (what, node) + rest
            used_inputs = replace_at(bound.inputs, count[1], ArrayArg(var))
            bound = Bound(bound.op, used_inputs, bound.params, bound.out)
            break
    hint = infer_meta(bound.op, tuple(map_leaves(bound.inputs, as_meta)), bound.params)
    dims: list = []
    for d, spec_d in enumerate(out_dims):
        if spec_d == "u" or isinstance(spec_d, tuple) and spec_d[0] == "u":
            if hint.shape[d] < 2:
                # sizes 0 and 1 decide broadcasting: an example this small says nothing
                tx.unsupported("data_dependent", f"{text} of so small an array has a "
                               f"data-dependent size of at most {hint.shape[d]}")
            key_d = key if spec_d == "u" else key + spec_d[1:]   # ("u", tag): one per tag
            sym = sizes.get(key_d)
            if sym is None:
                sym = sizes[key_d] = (UnbackedSize(key_d, hint.shape[d], text),
                                      input_at(bound.inputs, count[1]).var)
            dims.append(sym[0])
        elif spec_d is None:
            dims.append(None)
        else:
            i, k = spec_d
            dims.append(bound.inputs[i].var.dims[k])
    return bound, lambda val: tuple(dims)


def creation_sizes(tx, op, bound: Bound, scalars: dict, used: set):
    """``np.zeros(x.shape[0])``, ``np.ones(x.shape)``, ``np.arange(len(x))``: a creation
    op's size params (``Op.runtime_sizes``) that are dynamic dims of the function's input
    arrays stay sizes: the graph's param names the input's dim (an ``ir.SizeRef``, read
    from the input by whoever runs the graph, as a backward's ``broadcast_to`` shape is)
    and the result's dim follows that dim. ``(params, meta -> dims)``, or None where no
    size is such a dim (an expression of sizes, ``x.shape[0] - 1``, stays a number: it
    is pinned where the op's params take it), or where an array input has dynamic dims
    of its own (``np.linspace(a, b, n)`` of arrays: their dims are the rule's to say)."""
    spec = op.runtime_sizes(**bound.params) if op.runtime_sizes is not None else None
    if not spec or any(d is not None for a in flatten(bound.inputs) if isinstance(a, ArrayArg)
                       for d in a.var.dims):
        return None
    params, dims = dict(bound.params), {}

    def sized(value: Any, where: Any) -> Any:
        syms = scalars.get(id(value))
        # (np.eye(len(x), len(x)): one run-time number, given twice)
        sym = syms[0] if syms and len({s.code for s in syms}) == 1 and type(value) is int else None
        node = None
        if isinstance(sym, SymScalarVariable) and sym.is_shape() and not sym.pinned:
            node = tx.output._input_by_code.get(sym.source.base.base.code(tx.output.ns))
        where = (where,) if type(where) is int else where
        if node is None or node.kind != "placeholder" or any(d in dims for d in where):
            return value
        # (left in ``scalars``: the same int passed where it is a value, np.full(n, n),
        # is a run-time input there)
        used.add(id(value))
        dims.update((d, sym) for d in where)
        return SizeRef(node.name, sym.source.index, value)
    for name, where in spec.items():
        value = params[name]
        if type(value) is tuple:   # a shape: the dim of each entry
            if len(value) == len(where):
                params[name] = tuple(sized(v, d) for v, d in zip(value, where))
        elif value is not None:   # a size: its dim (or dims: np.eye(n) is n by n)
            params[name] = sized(value, where)
    if not dims:
        return None
    return params, lambda meta: tuple(dims.get(d) for d in range(len(meta.shape)))
