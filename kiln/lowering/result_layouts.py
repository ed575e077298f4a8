"""Layouts of results: the strides NumPy gives what a graph computes (order='K'), recorded
on lowering values and given to the memory whose layout shows (a returned array, the
array a scatter copies and writes into, a relayout). The rule itself is
kiln/ops/result_layout.py; this is :class:`GraphLowering`'s use of it
(docs/lowering.md, "Layouts of results").
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import Category
from ..ops.registry import map_leaves
from . import layout as L
from .loop_ir import Buffer, BufferValue, Pointwise, Scalar, Value, contiguous_strides
from .sizes import Undecidable
from .views import _view_layout


class ResultLayoutLowering:
    """Mixin of GraphLowering: NumPy's layouts of results, and memory laid out so."""

    def note_layout(self, op: Any, args: tuple, params: dict, value: Any) -> None:
        """Record on ``value`` the strides NumPy would give it (kiln/ops/result_layout.py)
        when they are not C order: a returned buffer is allocated that way (Fortran in,
        Fortran out; a join or a scan of Fortran-ordered arrays is Fortran-ordered too)."""
        if not isinstance(value, (Pointwise, BufferValue)) or \
                isinstance(value, BufferValue) and value.buf.kind not in ("computed", "extern"):
            return   # (an extern's result is NumPy's own: what is computed from it follows it)
        strides = self.numpy_layout(op, args, params, tuple(value.shape), allocate=False)
        if strides is not None:
            value.layout = strides

    def numpy_layout(self, op: Any, args: tuple, params: dict, shape: tuple,
                     allocate: bool = True, strides_of: Any = None) -> tuple | None:
        """The strides (elements) NumPy gives ``op``'s result of ``shape`` on these
        operands' layouts, or None for C order. With dynamic sizes the rule runs on the
        example's: memory laid out so (``allocate``; a returned value, realize_output)
        cannot be, and raises Undecidable: the graph is built for its sizes instead.
        ``strides_of(value)``: the operands' strides to take (memory's), not NumPy's."""
        if not self.sizes:
            return self._numpy_layout(op, args, params, shape, lambda v: v, strides_of)
        try:
            hinted = self._numpy_layout(op, args, params, shape, self.sizes.hint, strides_of)
        except Exception:   # noqa: BLE001 - a view's rule on run-time bounds: C order
            hinted = None
        if hinted is not None and allocate:
            _not_c_order(op.name)
        return hinted

    def _numpy_layout(self, op: Any, args: tuple, params: dict, shape: tuple, hint: Any,
                      strides_of: Any = None) -> tuple | None:
        strides_of = strides_of or _layout

        def operand(v: Any) -> Any:
            if isinstance(v, (Pointwise, BufferValue)):
                return L.Strided(hint(tuple(v.shape)), hint(tuple(strides_of(v))), v.dtype)
            if isinstance(v, Scalar):
                return v.value if v.value is not None else np.zeros((), v.dtype)
            return v
        operands = map_leaves(args, operand)
        shape = hint(shape)
        if op.result_order is not None and operands and isinstance(operands[0], L.Strided):
            # the op's own rule (a scatter's result is laid out as x): its kernel on the
            # stand-ins may not run (x[:, 1:-1] = v of a 2-wide stand-in has no room for v)
            order = op.result_order(operands[0].shape, operands[0].strides, *operands[1:], **params)
            strides = None if order is None else L.strides_in_order(shape, order)
            return None if strides is None or L.is_c(shape, strides) else strides
        if op.category != Category.VIEW:
            return L.layout_of(op.impl, operands, params, shape)
        x = args[0]
        if not isinstance(x, Pointwise) and not (
                isinstance(x, BufferValue) and getattr(x, "layout", None) is not None):
            return None   # a view of memory: its strides are the memory's
        found = _view_layout(op, operands[0].shape, operands[0].strides, args[1:], params)
        return None if found is None else L.contiguous_like(found[0], found[1])

    def relayout(self, op: Any, args: tuple, params: dict, meta: Any) -> Value:
        """``relayout(x, like)`` (kiln/ops/relayout.py): x's values, laid out by note_layout
        as NumPy lays out that result; a fresh buffer of x's that already is, as it is (an
        extern's too: ``np.matmul(a, b, out=e)`` on a fresh C-ordered e is no copy). An
        extern's array is laid out as NumPy's kernel lays it out (note_layout), not as its
        buffer says: np.concatenate of Fortran-ordered pieces (np.pad's, where the Triton
        renderer runs the join as NumPy) is Fortran-ordered."""
        x = args[0]
        have = _layout(x) if isinstance(x, BufferValue) and x.buf.kind == "extern" else getattr(x, "strides", None)
        if isinstance(x, BufferValue) and x.buf.kind in ("computed", "extern") and not self.sizes and \
                have == (self.numpy_layout(op, args, params, tuple(meta.shape))
                         or contiguous_strides(x.shape)):
            return x
        out = self.identity(x)
        if isinstance(x, Pointwise):   # named after what it computes (kernel names, comments)
            out.origins = tuple(dict.fromkeys(x.origins + out.origins))
        return out

    def realize_output(self, value: Value) -> BufferValue:
        """:meth:`realize` for a returned value: in NumPy's layout for it."""
        if getattr(value, "creation", None) is not None:
            return self.realize(value)   # a fresh array returned as made: NumPy's own call
        return self.realize_laid_out(value, "a returned value")

    def realize_laid_out(self, value: Value, what: str) -> BufferValue:
        """:meth:`realize` in NumPy's layout for ``value`` (``value.layout``), for memory
        whose layout shows: a returned array, or the array a scatter copies (order='K')
        and writes into (``y = x * 2; np.negative(x[1:], out=y[1:])`` on a Fortran-ordered
        x leaves y Fortran-ordered, so ``y.ravel()`` is a copy; fuzzer seed 20522)."""
        want = getattr(value, "layout", None)
        if want is None or not isinstance(value, (Pointwise, BufferValue)):
            return self.realize(value)
        if isinstance(value, BufferValue) and (value.buf.kind != "computed" or value.strides == want):
            return value   # NumPy's own result (an extern's), or already laid out so
        if self.sizes:
            _not_c_order(what)
        if isinstance(value, BufferValue):
            value = self.identity(value)   # a reduction's result: a copy in NumPy's order
        out = self.realized(value)
        if out is not None and out.strides != want:
            value = self.identity(out)
        return self.realize(value, want)


def _not_c_order(what: str) -> None:
    raise Undecidable(f"{what} is not C-ordered in NumPy on these inputs' layouts (order='K'): "
                      f"built for their sizes")


def lay_out(buf: Buffer, strides: tuple) -> None:
    """Allocate ``buf`` with these strides (elements; NumPy's layout for it) rather than
    in C order."""
    buf.strides = tuple(strides)
    buf.order = L.contiguous_order(buf.shape, tuple(abs(s) for s in buf.strides))
    buf.flips = tuple(a for a, s in enumerate(buf.strides) if s < 0)
    buf.contiguous = False   # the wrapper passes its address (cffi wants C buffers)


def _layout(v: Value) -> tuple:
    """The strides NumPy's version of ``v`` has (elements): memory's own for buffers."""
    found = getattr(v, "layout", None)
    if found is not None:
        return found
    return tuple(v.strides) if isinstance(v, BufferValue) else contiguous_strides(v.shape)
