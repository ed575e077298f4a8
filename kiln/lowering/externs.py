"""Extern nodes: ops without a loop rule run their NumPy kernel from the wrapper.

:class:`ExternLowering` is the part of :class:`~kiln.lowering.lower.GraphLowering` that
makes them: operands realized (written ones into buffers of their own), closures that
read memory the op overwrites computed before it, and the result's shape over the size
symbols: the op's shape rule run on symbolic metas, unbacked symbols the wrapper reads
from the result for data-dependent ops (``Op.unbacked``) or when the rule cannot run on
symbols, and run-time checks on unbacked sizes.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import Unsupported
from ..ops import TensorMeta, infer_meta
from ..ops.registry import iter_leaves
from .layout import strides_in_order
from .loop_ir import Buffer, BufferValue, Pointwise, Scalar, Value, contiguous_strides, run_time_index
from .nodes import ExternNode, Opaque, buffers_read, iter_values, map_values
from .scalars import token
from .sizes import Size, Undecidable, is_unbacked


class ExternLowering:
    """Mixin of GraphLowering: ``extern`` and the shapes of extern results."""

    def extern(self, op: Any, args: tuple, params: dict, meta: Any) -> Value:
        # Operands the op writes get a buffer of their own; read-only ones may be views.
        # Where NumPy's kernel would lay out its result otherwise on that memory than on
        # NumPy's operands (np.sort's copy, order='K', of ``x * 2`` of a Fortran-ordered
        # x, of a closure's transpose; a scatter's copy of its first operand), every
        # operand is realized in NumPy's layout for it.
        written = {id(v) for i in op.mutates if i < len(args) for v in iter_values((args[i],))}
        laid_out = isinstance(meta, TensorMeta) and \
            any(isinstance(v, (Pointwise, BufferValue)) for v in iter_values(args)) and \
            self.numpy_layout(op, args, params, tuple(meta.shape), allocate=False) != \
            self.numpy_layout(op, args, params, tuple(meta.shape), allocate=False,
                              strides_of=lambda v: self.operand_strides(v, id(v) in written))

        def operand(i: int, v: Any) -> Any:
            if laid_out and isinstance(v, BufferValue) and v.buf.kind == "extern" and \
                    getattr(v, "layout", None) not in (None, tuple(v.strides)):
                # an extern's result in NumPy's layout, which its memory is not where kernels
                # read it (the wrapper copies it C-ordered): np.sort(x) of a Fortran-ordered
                # x, then ``v[::-1] += x`` (index_put lays out its result as its operand)
                copy = self.identity(v)
                copy.layout = v.layout
                return self.realize_laid_out(copy, f"an operand of {op.name}")
            if laid_out and isinstance(v, (Pointwise, BufferValue)):
                return self.realize_laid_out(v, f"an operand of {op.name}")
            if isinstance(v, Pointwise):
                return (self.realize if i in op.mutates else self.realize_operand)(v)
            return v
        args = tuple(map_values(a, lambda v, i=i: operand(i, v)) for i, a in enumerate(args))
        if op.mutates:
            # Closures are evaluated lazily; one that reads memory this op overwrites must
            # be computed now, before the write.
            written = {v.buf.name for i in op.mutates if i < len(args)
                       for v in iter_values((args[i],)) if isinstance(v, BufferValue)}
            for node, value in list(self.env.items()):
                if isinstance(value, Pointwise) and buffers_read(value) & written:
                    self.env[node] = self.realize(value)
        name = self.fresh()
        if op.data_dependent:
            meta = self._unbacked_meta(name, op, args, params, meta)
        elif isinstance(meta, TensorMeta) and self.sizes:
            try:
                meta = self._symbolic_meta(op, args, params, meta)
            except Undecidable:
                meta = self._read_after(name, meta, self._view_static_dims(op, args, params, meta))
        sym_tuple = self._symbolic_tuple(op, args, params, meta) \
            if isinstance(meta, tuple) and self.sizes else None
        if isinstance(meta, TensorMeta) and meta.dtype.name in self.dtypes:
            buf = Buffer(name, meta.shape, meta.dtype, "extern")
            hint = self.sizes.hint if self.sizes else (lambda v: v)
            order = _numpy_order(buf, op, args, params, hint)
            self.buffers[name] = buf
            out: Value = BufferValue.whole(buf)
            if order is not None and buf.order is None:
                # sizes are symbols: kernels read it C-ordered (the wrapper copies), but
                # what is computed from it follows NumPy's layout (result_layouts.py)
                out.layout = strides_in_order(hint(tuple(buf.shape)), order)
        else:
            out = Opaque(name, meta)
            out.sym = sym_tuple
        self.nodes.append(ExternNode(name, op, args, dict(params), out, self._origin))
        return out

    def _unbacked_meta(self, name: str, op: Any, args: tuple, params: dict,
                       meta: TensorMeta) -> TensorMeta:
        """A data-dependent op's result shape: its ``Op.unbacked`` dims are size symbols
        the wrapper reads from the result ``name`` (one per thing counted)."""
        spec = op.unbacked(*map_values(args, self.meta_of), **params) if op.unbacked else None
        if spec is None or not isinstance(meta, TensorMeta):
            raise Unsupported(f"{op.name}: a data-dependent size kiln cannot bind")
        count, dims = spec
        writes = sum(1 for n in self.nodes if isinstance(n, ExternNode) and n.op.mutates)
        where = count[1] if isinstance(count[1], tuple) else (count[1],)
        counted = args
        for i in where:
            counted = counted[i]
        key = (count[0], _value_key(counted)) + tuple(count[2:]) + (writes,)
        shape = []
        for d, how in enumerate(dims):
            if how == "u" or isinstance(how, tuple) and how[0] == "u":
                key_d = key if how == "u" else key + how[1:]   # ("u", tag): one per tag
                sym = self._unbacked.get(key_d)
                if sym is None:
                    sym = self._unbacked[key_d] = self.sizes.unbacked(f"{name}.shape[{d}]", meta.shape[d])
                    self.binds.setdefault(name, []).append((str(sym), f"{name}.shape[{d}]"))
                shape.append(sym)
            elif how is None:
                shape.append(meta.shape[d])
            else:
                shape.append(args[how[0]].shape[how[1]])
        return TensorMeta(tuple(shape), meta.dtype)

    def _read_after(self, name: str, meta: TensorMeta, static: set = frozenset()) -> TensorMeta:
        """An extern whose shape rule cannot run over the size symbols (argmax of an
        unbacked-size selection): each dim of its result is a new unbacked symbol the
        wrapper reads from the result once it ran, so the rest of the graph still
        compiles; a later comparison those symbols cannot decide raises Undecidable.
        Dims in ``static`` keep the example's size."""
        shape = []
        for d, hint in enumerate(meta.shape):
            if d in static:
                shape.append(hint)
                continue
            sym = self.sizes.unbacked(f"{name}.shape[{d}]", hint)
            self.binds.setdefault(name, []).append((str(sym), f"{name}.shape[{d}]"))
            shape.append(sym)
        return TensorMeta(tuple(shape), meta.dtype)

    def _view_static_dims(self, op: Any, args: tuple, params: dict, meta: TensorMeta) -> set:
        """The dims of a view's result (``y.reshape(-1, 2)`` of a selection: its 2) that
        keep their size when every size is 2, 3 and 5 times the example's, as capture
        found them (kiln/capture/unbacked_dims.py); none for other ops, or where no
        operand has an unbacked size."""
        from ..ops import Category
        if op.category != Category.VIEW or not any(
                is_unbacked(n) for v in iter_values(args) for n in getattr(v, "shape", ())):
            return set()
        hints = self.sizes.hints()
        static = set(range(len(meta.shape)))
        for m in (2, 3, 5):
            scaled = {n: h * m for n, h in hints.items()}

            def scaled_meta(v: Any) -> Any:
                if not _is_array(v):
                    return _meta_of(v)
                return TensorMeta(tuple(n.subs(scaled) if isinstance(n, Size) else n for n in v.shape), v.dtype)
            try:
                out = infer_meta(op, map_values(args, scaled_meta), params)
            except Exception:
                return set()
            if not isinstance(out, TensorMeta) or len(out.shape) != len(meta.shape):
                return set()
            static -= {d for d, (a, b) in enumerate(zip(out.shape, meta.shape)) if a != b}
        return static

    def check_nonzero(self, size: Any, unless: Any, error: str, message: str) -> None:
        """At run time, raise ``error(message)`` when ``size`` is 0 and ``unless`` is not
        (NumPy's errors that depend on an unbacked size: max of an empty selection)."""
        self.size_checks.append((size, unless, error, message))

    def _symbolic_meta(self, op: Any, args: tuple, params: dict, meta: TensorMeta) -> TensorMeta:
        """An extern's result shape over the size symbols: its shape rule run on symbolic
        metas when it can take them; static when no input has a dynamic size and no param
        names one (``zeros_like(g, shape=(x.shape[0], 2))`` in a backward graph)."""
        if not _names_sizes(args, params):
            return meta
        try:
            sym = infer_meta(op, map_values(args, _symbolic_meta_of), params)
        except Exception as e:  # a rule that needs concrete sizes (it runs NumPy, say)
            first = args[0] if args else None
            if op.name in _COPIES_FIRST and _is_array(first) and first.dtype == meta.dtype \
                    and self.sizes.hint(tuple(first.shape)) == meta.shape:
                # a copy of x with x[index] written: x's shape, whatever the index (a
                # slice of a dynamic dim: the rule's target shape needs numbers); NumPy's
                # kernel checks the value fits the target on every run
                return TensorMeta(tuple(first.shape), meta.dtype)
            raise Undecidable(f"{op.name}'s shape rule needs concrete sizes ({type(e).__name__})") from e
        if not isinstance(sym, TensorMeta) or self.sizes.hint(sym.shape) != meta.shape:
            raise Undecidable(f"{op.name}'s shape over dynamic sizes is unknown")
        return sym


    def _symbolic_tuple(self, op: Any, args: tuple, params: dict, meta: tuple) -> tuple | None:
        """A tuple result's items over the size symbols (a loop node's carried arrays, whose
        sizes are its inputs'), for the externs taking items from it (``loop_item``): on the
        example's sizes a later kernel over a loop's result was built for those sizes, and
        ran them on every call (a 100x100 result's max read 100 elements; a 10x10 one's,
        built for 100x100, read past its end). None: nothing it reads has a dynamic size;
        Undecidable where the rule cannot say (the graph compiles for concrete sizes)."""
        if not _names_sizes(args, params):
            return None
        try:
            sym = infer_meta(op, map_values(args, _symbolic_meta_of), params)
        except Exception as e:
            raise Undecidable(f"{op.name}'s items over dynamic sizes are unknown ({type(e).__name__})") from e
        items = [(s, m) for s, m in zip(sym, meta) if isinstance(m, TensorMeta)] \
            if isinstance(sym, tuple) and len(sym) == len(meta) else None
        if items is None or any(not isinstance(s, TensorMeta) or self.sizes.hint(tuple(s.shape)) != tuple(m.shape)
                                for s, m in items):
            raise Undecidable(f"{op.name}'s items over dynamic sizes are unknown")
        return sym


def _symbolic_meta_of(value: Any) -> Any:
    """What a shape rule run over the size symbols sees of a lowering value."""
    if isinstance(value, Opaque) and getattr(value, "sym", None) is not None:
        return value.sym
    return TensorMeta(value.shape, value.dtype) if _is_array(value) else _meta_of(value)


def _names_sizes(args: tuple, params: dict) -> bool:
    """Does an op's input (an array, a tuple result's item) or a param hold a dynamic size?"""
    def sizes(v: Any) -> Any:
        if isinstance(v, Opaque) and getattr(v, "sym", None) is not None:
            return [n for m in v.sym if isinstance(m, TensorMeta) for n in m.shape]
        return getattr(v, "shape", ())
    return any(isinstance(n, Size) for v in iter_values(args) for n in sizes(v)) or \
        any(isinstance(n, Size) for v in params.values() for n in iter_leaves(v))


# Scatters whose result is a copy of their first operand, the array written into
# (kiln/ops/scatter.py): its shape and dtype (the backward of a slice, ``x[1:]``, on a
# dynamic dim).
_COPIES_FIRST = frozenset({"index_put", "index_add"})


def _value_key(value: Any) -> Any:
    """What identifies an op input's value for sharing unbacked sizes (a window's buffer
    and layout; any other value by identity)."""
    if isinstance(value, BufferValue):
        return (value.buf.name, value.shape, value.strides, value.offset)
    return id(value)


def _is_array(value: Any) -> bool:
    """Does infer_meta see this lowering value as an array (not a scalar, not the tuple
    an extern such as a loop returns)?"""
    return isinstance(value, Value) and not isinstance(value, Scalar) and \
        not (isinstance(value, Opaque) and (isinstance(value.meta, tuple)
                                            or getattr(value, "pytype", None) is not None))


def _meta_of(value: Any) -> Any:
    if isinstance(value, Scalar):
        if value.value is not None:  # a NumPy scalar constant stays strong (np.float64(1.0))
            return value.value if value.weak else np.dtype(value.dtype).type(value.value)
        if run_time_index(value):
            return value.example  # a run-time int (a slice bound sizes the example's result)
        if value.weak:  # a runtime Python scalar: stays weak (NEP 50) for the dtype rule
            return token(value)(0)
        return np.zeros((), value.dtype)[()]
    if isinstance(value, Opaque) and isinstance(value.meta, tuple):
        return value.meta   # a tuple from an extern (a loop's carried values) stays a tuple
    if isinstance(value, Opaque) and getattr(value, "pytype", None) is not None:
        return value.pytype(0)   # a run-time Python number: weak (NEP 50), of its type
    if isinstance(value, Value):
        return TensorMeta(value.shape, value.dtype)
    return value


def _numpy_order(buf: Buffer, op: Any, args: tuple, params: dict, hint: Any) -> tuple | None:
    """An extern result NumPy lays out in another axis order (``Op.result_order``:
    advanced indexing) keeps that layout: kernels are built for its strides (the wrapper
    copies only a result that differs: kiln/lowering/layout.py ``in_order``), and the
    caller gets NumPy's array. Static shapes lay ``buf`` out so; with size symbols the
    order (found on the example's sizes, input-0 layouts only) is returned, not applied."""
    if op.result_order is None or not args or not isinstance(args[0], BufferValue):
        return None
    x = args[0]
    xshape, xstrides = hint(tuple(x.shape)), hint(tuple(x.strides))
    if not all(isinstance(n, int) for n in (*xshape, *xstrides)):
        return None
    order = op.result_order(xshape, xstrides, *args[1:], **params)
    if order is None or tuple(order) == tuple(range(len(buf.shape))):
        return None
    if not all(isinstance(n, int) for n in (*buf.shape, *x.shape, *x.strides)):
        return tuple(order)
    dense = contiguous_strides([buf.shape[a] for a in order])
    strides = [0] * len(order)
    for pos, axis in enumerate(order):
        strides[axis] = dense[pos]
    buf.strides, buf.order, buf.contiguous = tuple(strides), tuple(order), False
    return tuple(order)
