"""Lowering of elementwise ops: each op names its scalar function (``op.lowering``,
kiln/ops/pointwise.py) and becomes a :class:`~kiln.lowering.loop_ir.Pointwise` closure
over an ops handler, in the loop dtypes NumPy's type resolution picks (NEP 50 weak
scalars included). A mixin of :class:`~kiln.lowering.lower.GraphLowering`.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ops import TensorMeta
from .handler import EXPENSIVE, RecordingHandler
from .loop_ir import Pointwise, Scalar, Value, broadcast_index, kind, recomputed
from .scalars import fits, narrowed_floats, overflowing_constants, python_int_operands, token, unbounded


def one_element(shape: tuple) -> bool:
    """A result of one element (or none) is computed straight-line: no loop for GCC to
    unswitch on a run-time exponent (a 0-d power of reductions in the same kernel).
    Arrays of 3 to 300 elements matched NumPy's warnings with the loop form (GCC
    unswitches before it unrolls)."""
    return all(isinstance(d, (int, np.integer)) for d in shape) and math.prod(int(d) for d in shape) <= 1


# Elements from which a closure's scalar-width and vector-width calls (Renderer.call_width)
# run in loops of their own: a kernel launch more (~0.3 us) against ~10-20 ns an element
# that a 512-bit SVML call per element costs a scalar loop.
SPLIT_WIDTHS_AT = 256


def splits_widths(shape: tuple) -> bool:
    """Do loops over ``shape`` keep scalar and vector calls apart (SPLIT_WIDTHS_AT)?"""
    return not all(isinstance(d, (int, np.integer)) for d in shape) or \
        math.prod(int(d) for d in shape) >= SPLIT_WIDTHS_AT


def _body_calls(body: Any, dtype: np.dtype, arity: int) -> list:
    """(scalar function, loop dtype) of every call a scalar body makes (recorded)."""
    rec = RecordingHandler()
    body(rec, dtype, *[("operand", i) for i in range(arity)])
    return rec.calls


class PointwiseLowering:
    """``GraphLowering.pointwise`` (needs ``dtypes``, ``renderer``, ``broadcast``, ``_origin``)."""

    def pointwise(self, op: Any, rule: dict, args: tuple, params: dict,
                  meta: TensorMeta) -> Pointwise | None:
        """An elementwise op as a closure calling its scalar function (``op.lowering``)."""
        values = list(args)
        for v in values:
            if v is not None and not isinstance(v, Value):
                return None  # a non-scalar Python argument (a list, say): extern
        out_dtype = meta.dtype
        ufunc = getattr(op, "ufunc", None)
        if ufunc is not None:
            tokens = tuple(token(v) for v in values)
            try:
                loop = ufunc.resolve_dtypes(tokens + (None,) * ufunc.nout)
            except (TypeError, ValueError):
                return None
            in_dts, loop_out = list(loop[:ufunc.nin]), loop[ufunc.nin]
            if {np.dtype(d).kind for d in in_dts} >= {"i", "u"}:
                return None  # NumPy's exact int64-vs-uint64 comparison loops: C would wrap the sign
            bounded = python_int_operands(values, in_dts, loop_out)
            if bounded is None:
                return None
        else:
            bounded = ()
            fixed = rule.get("input_dtypes") or (None,) * len(op.inputs)
            in_dts = [np.dtype(f) if f is not None else out_dtype for f in fixed]
            loop_out = out_dtype
            if np.dtype(out_dtype).kind in "iu" and not all(
                    fits(v, out_dtype) for v in values if isinstance(v, Scalar) and v.weak):
                return None  # np.clip(uint8, -1, 1): NumPy's own rules for the Python int
        if any(np.dtype(d).name not in self.dtypes for d in in_dts + [loop_out]):
            return None
        narrowed = narrowed_floats(values, in_dts)
        if ufunc is None and np.dtype(out_dtype).kind not in "cb" and \
                any(isinstance(v, Value) and np.dtype(v.dtype).kind == "c" for v in values):
            return None  # a cast dropping the imaginary part: NumPy's, with its ComplexWarning
        # the loop's dtype: that of the first operand the op does not fix (where's x)
        fixed = rule.get("input_dtypes") or ()
        free = [d for i, d in enumerate(in_dts) if i >= len(fixed) or fixed[i] is None]
        loop_dt = np.dtype(free[0] if free else loop_out)
        k = kind(loop_dt)
        when = rule.get("when", {})
        body = None
        for i, v in enumerate(values):
            # a compile-time constant operand may select a decomposition: "y=2", "f:y=0.5"
            if isinstance(v, Scalar) and v.value is not None and not v.arg \
                    and isinstance(v.value, (int, float)) and not isinstance(v.value, bool):
                key = f"{op.inputs[i]}={v.value:g}"
                # an unprefixed key is for real kinds: a complex loop rounds its own way
                # (np.power(z, 2) is not z * z to the last bit)
                body = when.get(f"{k}:{key}", body if k == "c" else when.get(key, body))
            elif isinstance(v, Scalar) and v.arg or isinstance(v, Value) and not v.shape and i:
                # a runtime scalar or a 0-d value: NumPy's loops see a zero stride and may
                # take a fast path
                body = when.get(f"{k}:{op.inputs[i]}=scalar", body)
                if one_element(meta.shape):   # straight-line code: its own decomposition
                    body = when.get(f"{k}:{op.inputs[i]}=scalar:one", body)
        if body is None and len(values) > 1 and all(v is not None and not v.shape for v in values[1:]):
            # every operand but the first is 0-d (constants too): zero strides in NumPy's loop
            body = when.get(f"{k}:rest=0d")
        fn_name = rule["scalar"]
        if body is None:
            if k not in rule.get("kinds", ""):
                return None
            body = lambda ops, dt, *xs: ops.call(fn_name, list(xs), dt, loop_out)  # noqa: E731
        shape = self.broadcast([v.shape for v in values if isinstance(v, Value)], meta.shape)

        node = self._origin[0] if self._origin else None

        def fn(ops: Any, index: list) -> Any:
            operands, given = [], []
            for name, v, dt in zip(op.inputs, values, in_dts):
                if v is None:  # a missing clip bound
                    operands.append(ops.constant(unbounded(name, dt), dt))
                    given.append((operands[-1], dt))
                elif isinstance(v, Scalar) and not v.arg:
                    operands.append(ops.constant(v.value, dt))
                    given.append((operands[-1], dt))
                else:
                    loaded = v.load(ops, broadcast_index(v.shape, index))
                    operands.append(ops.cast(loaded, v.dtype, dt))
                    given.append((loaded, v.dtype))
            result = ops.cast(body(ops, loop_dt, *operands), loop_out, out_dtype)
            if node is not None:
                # (a ufunc's predicates test its loop's operands; an op that is no ufunc,
                # a cast, tests the values it was given: astype's of its float input)
                ops.raised(node, (result, out_dtype), list(zip(operands, in_dts)) if ufunc is not None
                           else given)
            return result

        calls = _body_calls(body, loop_dt, len(values))
        if self.renderer is not None and not all(self.renderer.supports(f, d) for f, d in calls):
            return None  # the target does not spell one of its functions: extern
        for i, v in enumerate(values):
            if recomputed(v, shape):   # read through a broadcast: computed once (loop_ir)
                values[i] = self.realize(v)
        widths = self._call_widths(calls, values, shape)
        cost = max(1, sum(8 if f in EXPENSIVE and d.kind == "f" else 1 for f, d in calls)) \
            + sum(getattr(v, "cost", 0) for v in values)
        origins = tuple(dict.fromkeys(o for v in values if isinstance(v, Pointwise) for o in v.origins))
        for v, dt in bounded:  # the wrapper checks the value on each call, as NumPy does
            v.int_bounds = tuple(dict.fromkeys(getattr(v, "int_bounds", ()) + (dt,)))
        for v, dt in narrowed:  # and warns where its cast overflows (wrapper.py)
            v.float_bounds = getattr(v, "float_bounds", ()) + ((dt, node),)
        if node is not None:    # a constant's does on every call
            self.constant_casts += [node for _ in overflowing_constants(values, in_dts)]
        out = Pointwise(shape, out_dtype, fn, cost, origins + self._origin)
        arrays = [v for v in values if isinstance(v, Value) and not isinstance(v, Scalar)]
        out.per_point = bool(arrays) and all(getattr(v, "per_point", False) for v in arrays)
        out.call_widths = widths
        return out

    def _call_widths(self, calls: list, values: list, shape: tuple) -> frozenset:
        """The call widths (Renderer.call_width) of the closure this op makes; an operand
        closure whose calls are of the other width is realized first, so that neither
        loop runs the other's way (``np.sin(np.arctan2(z, p))``: glibc's scalar sin kept
        the loop scalar, and NumPy's SVML atan2 then ran a 512-bit vector per element)."""
        own = frozenset(w for f, d in calls for w in [self.renderer.call_width(f, d)] if w) \
            if self.renderer is not None else frozenset()
        widths = set(own)
        for i, v in enumerate(values):
            theirs = getattr(v, "call_widths", frozenset())
            if isinstance(v, Pointwise) and own and theirs and len(own | theirs) > 1 and splits_widths(shape):
                # in NumPy's layout where it is not C order (a transposed input's sin: both
                # kernels walk memory in order), known for static sizes
                layout = getattr(v, "layout", None)
                values[i] = self.realize(v, layout) if layout is not None and not self.sizes else self.realize(v)
            else:
                widths |= theirs
        return frozenset(widths)
