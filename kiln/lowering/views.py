"""Lowering of view ops: transposes, basic slices, broadcasts, reshapes, squeezes, flips
never copy. Each view op declares a ``layout`` rule (kiln/ops/layout.py) giving the output
window (shape, strides, offset) from the input's — computed, never run on memory. A view
of a buffer is a new window on it; a view of a closure is an affine remap of its index
when one exists, else the closure is realized first. A mixin of
:class:`~kiln.lowering.lower.GraphLowering`.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..ops import TensorMeta
from ..ops.layout import At, Span, Window, index_dims
from ..ops.layout import _slice as layout_slice
from .loop_ir import (RECOMPUTE_REPEATS, Affine, BufferValue, Pointwise, Scalar, Value, _zero,
                      contiguous_strides, recomputed, run_time_index)
from .nodes import iter_values
from .sizes import MIN_SIZE, Size, Undecidable, is_unbacked, min_size, product


class ViewLowering:
    """``GraphLowering.view`` and ``realize_operand`` (need ``realize`` and ``identity``)."""

    def view(self, op: Any, args: tuple, params: dict, meta: TensorMeta) -> Value | None:
        x, rest = args[0], args[1:]
        if not isinstance(x, (BufferValue, Pointwise)) or op.layout is None:
            return None
        if op.layout_dependent and isinstance(x, BufferValue) and x.buf.kind == "extern" and \
                self._aliasing_extern(x.buf.name):
            return None   # (its memory is the caller's array's, any layout: NumPy decides)
        spans = self._spans(op, x.shape, rest)   # the layout rule's view of the inputs
        if any(isinstance(v, Value) for v in iter_values(spans)):
            return None
        if isinstance(x, Pointwise):
            try:
                remapped = self._remap_pointwise(x, op, spans, params)
            except Undecidable:
                # (``Z.T`` of ``(X[train] - mu) / sd``, a selection's rows: whether its
                # count is more than 1): realized, then viewed (the whole graph ran in the
                # NumPy interpreter: real20's k-fold ridge, 1.2x NumPy)
                remapped = None
            if remapped is not None:
                chain = _operand_chain(x)
                root, views = chain if chain is not None else (x, ())
                views = views + ((op, tuple(spans), dict(params), tuple(rest)),)
                if _blas_friendly(root.shape, views):
                    remapped.view_chain = (root, views)
                elif _most_of(root.shape, remapped.shape):
                    remapped.part_chain = (root, views)
                return remapped
            x = self.realize(x)
        result = _view_layout(op, x.shape, x.strides, spans, params)
        if result is None:  # NumPy would copy (a reshape of a non-contiguous window)
            if _view_layout(op, x.shape, contiguous_strides(x.shape), spans, params) is None:
                # not even of a C-order copy (a reshape to sizes the lowering cannot
                # compare: NumPy's call decides): no copy kernel whose result nothing reads
                return None
            x = self.realize(self.identity(x))
            result = _view_layout(op, x.shape, x.strides, spans, params)
            if result is None:
                return None
        shape, strides, offset = result
        return BufferValue(x.buf, shape, strides, x.offset + offset, py=(op, (x,) + tuple(rest), params))

    def _aliasing_extern(self, name: str) -> bool:
        """Is buffer ``name`` the result of an extern that may be a view of its operand
        (``y.view()``, ``astype(copy=False)``)? Its strides are then the operand's, not
        the C order its buffer says: ``np.ravel(y.view())`` of a broadcast y is a copy
        (tests/fuzz/views.py seed 11555)."""
        from .nodes import ExternNode
        return any(isinstance(n, ExternNode) and n.name == name and n.op.may_alias for n in self.nodes)

    def view_part(self, part: str, x: Value, meta: TensorMeta) -> Pointwise | None:
        """``z.real`` / ``z.imag`` read part by part where nothing needs the view's memory
        (lower.py: not returned): the consumer's loop reads the complex element and keeps
        one part, no extern call and C-order copy first (``z.imag *= -1`` on 512x512
        complex128 ran at 0.03-0.3x NumPy). None: NumPy's call (a real input's ``real`` is
        itself, its ``imag`` zeros)."""
        if not isinstance(x, (BufferValue, Pointwise)) or np.dtype(x.dtype).kind != "c":
            return None
        if self.renderer is not None and not self.renderer.supports(part, x.dtype):
            return None
        out = np.dtype(meta.dtype)

        def fn(ops: Any, index: list) -> Any:
            return ops.call(part, [x.load(ops, index)], x.dtype, out)

        origins = tuple(x.origins) if isinstance(x, Pointwise) else ()
        return Pointwise(x.shape, out, fn, 1 + getattr(x, "cost", 0), origins + self._origin)

    def _spans(self, op: Any, shape: tuple, rest: tuple) -> tuple:
        """``rest`` with each slice whose bounds are run-time ints (``x[:n]``), or whose
        constant step is not 1 on a dynamic dim (``x[::2]``), resolved against its dim
        into a :class:`Span` over size symbols (sizes.py, kind "int");
        a run-time step, or a count of 0 or 1, stays as it is (no kernel lowering)."""
        k = op.runtime_slices
        if k is None or k - 1 >= len(rest) or not isinstance(rest[k - 1], tuple):
            return rest
        index = rest[k - 1]
        dims = index_dims(index, len(shape))
        if dims is None:
            return rest
        out = []
        for item, d in zip(index, dims):
            parts = (item.start, item.stop, item.step) if isinstance(item, slice) else ()
            if any(isinstance(b, Scalar) for b in parts) and all(
                    not isinstance(b, Value) or run_time_index(b) for b in parts):
                if self.specialize_ints:
                    item = slice(*(self._int_value(b) for b in parts))
                else:
                    item = Span(*self.sizes.int_slice(shape[d], *parts))
            elif run_time_index(item):
                item = self._int_value(item) if self.specialize_ints else \
                    At(self.sizes.int_index(shape[d], item, d))
            elif parts and isinstance(shape[d], Size) and item.step not in (None, 1, -1) \
                    and all(b is None or type(b) is int for b in parts):
                # x[::2] of a dynamic dim: a count no polynomial says, Python's own per call
                item = Span(*self.sizes.int_slice(shape[d], *parts))
            elif parts and is_unbacked(shape[d]) and all(b is None or type(b) is int for b in parts) \
                    and _undecided(parts, shape[d]):
                # x[2:] of a selection that may be shorter than 2: Python's count, once known
                item = Span(*self.sizes.int_slice(shape[d], *parts))
            out.append(item)
        return rest[:k - 1] + (tuple(out),) + rest[k:]

    def _remap_pointwise(self, x: Pointwise, op: Any, rest: tuple, params: dict) -> Value | None:
        """A view of a closure as an affine remap of its index, when one exists."""
        cstrides = contiguous_strides(x.shape)
        result = _view_layout(op, x.shape, cstrides, rest, params)
        if result is None:
            return None
        shape, strides, offset = result
        if x.size == 0 or product(shape) == 0:
            return None
        if recomputed(x, shape, [_zero(s) and not (isinstance(n, int) and n == 1) for n, s in zip(shape, strides)]):
            return None   # broadcast_to of a costly closure: realized, then viewed (loop_ir)
        if _overlap(shape, strides, x.size) >= RECOMPUTE_REPEATS:
            # sliding windows of a closure: each element read window-size times, and the
            # view materialized whole if a later view cannot remap it (a 512-wide window
            # of a 16000-sample signal wrote 31 MB): realized once, then windowed for free
            return None
        if isinstance(offset, int) and offset == 0:
            start = [0] * len(x.shape)
        elif all(isinstance(n, int) for n in x.shape) and isinstance(offset, int):
            start = list(np.unravel_index(offset, x.shape)) if x.shape else []
        else:
            return None
        # Output dim j moves input dim k by coef c when its stride is c * cstrides[k].
        moves: list[tuple[int, int] | None] = []
        for n, s in zip(shape, strides):
            if n == 1 or s == 0:
                moves.append(None)
                continue
            k = next((k for k in range(len(x.shape)) if x.shape[k] > 1 and _ratio(s, cstrides[k]) is not None), None)
            if k is None:
                return None
            moves.append((k, _ratio(s, cstrides[k])))
        lo, hi = list(start), list(start)
        for (n, mv) in zip(shape, moves):
            if mv is not None:
                k, c = mv
                (hi if c > 0 else lo)[k] += c * (n - 1)
        if any(l < 0 or h >= d for l, h, d in zip(lo, hi, x.shape)):
            return None

        def fn(ops: Any, index: list) -> Any:
            inner = [Affine(int(s)) for s in start]
            for ix, mv in zip(index, moves):
                if mv is not None:
                    inner[mv[0]] = inner[mv[0]] + ix * mv[1]
            return x.fn(ops, inner)

        return Pointwise(shape, x.dtype, fn, x.cost, x.origins)

    def operand_strides(self, value: Value, written: bool = False) -> tuple:
        """The strides :meth:`realize_operand` (``written``: :meth:`realize`) gives
        ``value``, without realizing it: its memory's, a view chain's over its root in C
        order, or C order."""
        if isinstance(value, BufferValue):
            return tuple(value.strides)
        done = self.realized(value)
        if done is not None:
            return tuple(done.strides)
        chain = _operand_chain(value)
        if chain is None or written:
            return contiguous_strides(value.shape)
        root, views = chain
        shape, strides = tuple(root.shape), contiguous_strides(root.shape)
        for op, spans, params, rest in views:
            shape, strides, _ = _view_layout(op, shape, strides, spans, params)
        return tuple(strides)

    def realize_operand(self, value: Value) -> BufferValue:
        """Memory for an extern's (read-only) operand.

        A closure seen through size-preserving views (``np.maximum(h, 0).T`` feeding a
        matmul) is realized in its own C-contiguous layout and the extern gets the view of
        that buffer, as NumPy code would pass ``a.T``: BLAS reads a transposed operand for
        free, while writing the transposed copy costs a strided pass over the data.
        """
        chain = _operand_chain(value)
        if chain is None or self.realized(value) is not None:
            return self.realize(value)
        root, views = chain
        out = self.realize(root)
        for op, spans, params, rest in views:
            shape, strides, offset = _view_layout(op, out.shape, out.strides, spans, params)
            out = BufferValue(out.buf, shape, strides, out.offset + offset, py=(op, (out,) + rest, params))
        return self._remember(value, out)


    def slice_count(self, length: Any, start: Any, stop: Any, step: Any) -> Any:
        """The length of ``slice(start, stop, step)`` on a dim of ``length`` as the slice
        itself gets it in :meth:`_spans` (the same count symbol for a run-time bound): an
        ir SliceLength in a param (a backward's ``broadcast_to(g, shape=(len(range(s0)[:n]),))``)."""
        from ..ops import REGISTRY
        (item,), = self._spans(REGISTRY["getitem"], (length,), ((slice(start, stop, step),),))
        if isinstance(item, Span):
            return item.count
        found = layout_slice(*(None if b is None else b for b in (item.start, item.stop, item.step)), length)
        if found is None:
            raise Undecidable(f"the length of [{start}:{stop}:{step}] on a dim of {length}")
        return found[1]

    def _int_value(self, b: Any) -> Any:
        if isinstance(b, Scalar):
            self.int_values[b.name] = b.example   # the wrapper checks it
            return operator.index(b.example)   # (a NumPy integer's Python int)
        return b


def _undecided(bounds: tuple, length: Size) -> bool:
    """Does a slice with constant ``bounds`` on an unbacked dim have a count that no
    polynomial of its length says (``x[2:]`` of a length that may be 0)?"""
    try:
        return layout_slice(*bounds, length) is None
    except Undecidable:
        return True


def _ratio(s: Any, t: Any) -> int | None:
    """The integer k with s == k * t (strides: ints or symbolic sizes), or None."""
    if isinstance(s, int) and isinstance(t, int):
        return s // t if t and s % t == 0 else None
    if isinstance(s, Size):
        return s.ratio(t)
    return None


def _view_layout(op: Any, shape: tuple, strides: tuple, rest: tuple, params: dict) -> tuple | None:
    """(shape, strides, offset delta) in elements of ``op``'s view of this window, from the
    op's layout rule (kiln/ops/layout.py): computed, never run on memory. None when NumPy
    would copy or raise."""
    if op.layout is None:
        return None
    return op.layout(Window(tuple(shape), tuple(strides), 0), *rest, **params)


def _most_of(root: tuple, shape: tuple) -> bool:
    """Does a view of ``root``'s shape with ``shape`` (static sizes) read at least half its
    elements? An extern's operand that is such a part of a closure (``x[:n - k]`` and
    ``x[k:]`` of ``x = x - x.mean()`` into np.dot, a lag at a time) gets a view of the
    closure realized once, as NumPy passes views of x: realizing each part wrote the
    whole closure again per operand (21 lags of 20000: 12x NumPy's 117 us)."""
    if not all(isinstance(n, int) for n in root + shape):
        return False
    return 0 < product(root) <= 2 * product(shape)


def _operand_chain(value: Any) -> tuple | None:
    """The root closure and views :meth:`ViewLowering.realize_operand` realizes ``value``
    through (a view that keeps every element, or most of them: _most_of), or None."""
    chain = getattr(value, "view_chain", None)
    return chain if chain is not None else getattr(value, "part_chain", None)


def _blas_friendly(shape: tuple, views: tuple) -> bool:
    """Do these views of a C-contiguous array keep every element once, with strides that a
    matmul takes without copying (positive, and unit stride in one of the last two dims)?
    Transposes, swapaxes and splitting reshapes do; slices, broadcasts and flips do not.
    With dynamic sizes (each at least MIN_SIZE), transposes alone: the view's dims are the
    root's, permuted (the realized transpose of np.cov's ``X @ X.T`` under dynamic=True
    had NumPy call gemm on a copy, not syrk on X itself: 1 ulp off)."""
    dynamic = not all(isinstance(n, int) for n in shape)
    if dynamic and any(min_size(v) < MIN_SIZE for n in shape if isinstance(n, Size) for v in n.symbols):
        return False  # a size that may be 0 or 1: the operand is realized as it is
    size = product(shape)
    strides, offset = contiguous_strides(shape), 0
    root = [(n, s) for n, s in zip(shape, strides) if n != 1]
    for op, spans, params, _ in views:
        result = _view_layout(op, shape, strides, spans, params)
        if result is None:
            return False
        shape, strides, delta = result
        offset += delta
    live = [(n, s) for n, s in zip(shape, strides) if n != 1]
    if dynamic:
        return isinstance(offset, int) and offset == 0 and len(live) == len(root) and \
            all(p in live for p in root) and any(s == 1 for _, s in live[-2:])
    extent = 1
    for n, s in sorted(live, key=lambda ns: ns[1]):  # every element once, none skipped
        if s != extent:
            return False
        extent *= n
    return size > 0 and offset == 0 and extent == size and \
        (not live or any(s == 1 for _, s in live[-2:]))


def _overlap(shape: tuple, strides: tuple, size: Any) -> int:
    """How many times a view of these (non-zero) strides reads each of ``size`` elements
    on average: 1 for slices and transposes, about the window for sliding windows."""
    reads = product([n for n, s in zip(shape, strides) if not _zero(s)])
    if not isinstance(reads, int) or not isinstance(size, int) or size == 0:
        return 1
    return reads // size
