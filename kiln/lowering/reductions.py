"""Reductions: sum/prod/max/min/any/all/argmax/argmin loops (as the renderer has them); mean/var/std (``finish``) and sum_to built from sums.

A reduction node iterates its source's shape; ``axes`` are reduced, the other dims index
the output. Floating-point sums and products accumulate in float64 whatever the input
dtype unless the loop adds in NumPy's own order, in the result's dtype (a leading axis row
by row, or one contiguous run pairwise: kiln/lowering/cpp_stages.py), which gives NumPy's
bits; float32 results elsewhere are within rounding of NumPy's.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import Unsupported
from ..ops import TensorMeta
from ..ops.meta import normalize_axis
from .loop_ir import Affine, BufferValue, Pointwise, Value, broadcast_index, recomputed
from .lower import ComputeNode, GraphLowering
from .result_layouts import lay_out
from .renderer import BASE_REDUCTIONS
from .sizes import MIN_SIZE, is_static, is_unbacked, product


def reduce(gl: GraphLowering, src: Value, axes: tuple, combine: str, out_shape: tuple,
           out_dtype: Any, acc_dtype: Any) -> BufferValue:
    """A reduction node writing a buffer of ``out_shape`` (kept dims, in order)."""
    buf = gl.new_buffer(out_shape, out_dtype, "computed")
    origins = tuple(dict.fromkeys(getattr(src, "origins", ()) + gl._origin))
    node = ComputeNode(buf.name, buf, "reduction", origins)
    node.src = src
    node.in_shape = tuple(src.shape)
    node.axes = tuple(axes)
    node.combine = combine
    node.acc_dtype = np.dtype(acc_dtype)
    gl.nodes.append(node)
    out = BufferValue.whole(buf)
    out.per_point = True   # a reduction's result (loop_ir RECOMPUTE_COST)
    return out


def lower_selected(gl: GraphLowering, x: Any, mask: Any, meta: TensorMeta) -> Value | None:
    """``x[mask].sum()`` (ops/reduction_where.py selected_sum): a sum of ``where(mask, x,
    0)`` whose node also keeps the mask and x (``node.select``), so that a loop that adds
    in NumPy's order adds the selected terms alone, compacted (cpp_stages.py); any other
    loop adds the filled terms. Complex sums and masks of another shape: NumPy's own."""
    if not all(isinstance(v, (BufferValue, Pointwise)) for v in (x, mask)) \
            or tuple(mask.shape) != tuple(x.shape) or np.dtype(mask.dtype) != np.dtype(bool) \
            or np.dtype(x.dtype).kind not in "biuf" or np.dtype(meta.dtype).kind != "f":
        return None
    dt = np.dtype(x.dtype)

    def fn(ops: Any, index: Any) -> Any:
        return ops.call("where", [mask.load(ops, index), x.load(ops, index), ops.constant(0, dt)], dt)
    origins = tuple(dict.fromkeys(getattr(mask, "origins", ()) + getattr(x, "origins", ())))
    terms = Pointwise(x.shape, dt, fn, getattr(x, "cost", 0) + getattr(mask, "cost", 0) + 1,
                      origins + gl._origin)
    total = reduce(gl, terms, tuple(range(len(x.shape))), "sum", (), meta.dtype,
                   _acc_dtype("sum", dt, meta.dtype))
    gl.nodes[-1].select = (mask, x)
    return total


def _acc_dtype(combine: str, src_dtype: np.dtype, out_dtype: np.dtype) -> np.dtype:
    if combine in ("any", "all"):
        return np.dtype(bool)
    if combine in ("max", "min"):
        return np.dtype(out_dtype)
    if combine in ("argmax", "argmin"):
        return np.dtype(src_dtype)   # values compare in their own dtype; the result is an index
    if np.dtype(out_dtype).kind in "iub":
        # sum(float_array, dtype=int): NumPy casts each element, then adds (wrapping)
        return np.dtype(out_dtype)
    if np.dtype(out_dtype).kind == "f" or np.dtype(src_dtype).kind == "f":
        return np.dtype(np.float64)
    return np.dtype(out_dtype)


def _pointwise(gl: GraphLowering, shape: tuple, dtype: Any, fn) -> Pointwise:
    """A reduction's finish (mean's division, std's root) of its sums' results."""
    out = Pointwise(shape, dtype, fn, 1, gl._origin)
    out.per_point = True
    return out


def lower_reduction(gl: GraphLowering, rule: dict, x: Any, params: dict,
                    meta: TensorMeta) -> Value | None:
    """Lower a reduction op whose ``lowering`` is ``rule``: ``{"reduce": combine}``, plus
    ``"axes": "broadcast"`` (the axes broadcast to ``params['shape']``: sum_to) or
    ``"finish": "mean" | "var" | "std"`` (kiln/ops/reduction.py)."""
    if not isinstance(x, (BufferValue, Pointwise)):
        return None
    if np.dtype(x.dtype).kind == "c" or np.dtype(meta.dtype).kind == "c":
        return None  # complex sums and products: NumPy's (pairwise) loops, an extern call
    combine, finish_as, by_shape = rule["reduce"], rule.get("finish"), rule.get("axes") == "broadcast"
    in_shape = tuple(x.shape)
    if by_shape:
        target = tuple(params["shape"])
        lead = len(in_shape) - len(target)
        axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(target)
                                          if d == 1 and in_shape[lead + i] != 1)
        if not axes:
            return x   # nothing was broadcast: x itself, not an extern call that returns x
    else:
        axes = normalize_axis(params.get("axis"), len(in_shape))
        axes = tuple(range(len(in_shape))) if axes is None else axes
    if not all(isinstance(a, int) for a in axes):
        return None
    r = product(in_shape[a] for a in axes)
    m = product(d for i, d in enumerate(in_shape) if i not in axes)
    out_dtype = meta.dtype
    if by_shape:  # the kept dims are x's (sizes may be symbols)
        out_shape = tuple(1 if d == 1 else in_shape[lead + i] for i, d in enumerate(params["shape"]))
    elif params.get("keepdims"):
        out_shape = tuple(1 if i in axes else d for i, d in enumerate(in_shape))
    else:
        out_shape = tuple(d for i, d in enumerate(in_shape) if i not in axes)
    if combine not in getattr(gl.renderer, "reductions", BASE_REDUCTIONS):
        return None  # the target has no such loop: NumPy's kernel
    if combine in getattr(gl.renderer, "extern_when_contiguous", ()) and isinstance(x, BufferValue) \
            and _reduces_contiguous_runs(x, axes):
        return None  # argmax along an array's own contiguous rows: NumPy's SIMD loop is faster
    initial = params.get("initial")
    if isinstance(initial, np.generic):
        initial = initial.item()   # (a literal of the renderer's, not NumPy's repr)
    if initial is not None and (r == 0 or is_unbacked(r)):
        return None  # np.max(x, initial=c) of what may be empty: NumPy's, which gives c
    if combine in ("max", "min", "argmax", "argmin") and r == 0 and m > 0:
        return None  # NumPy raises "zero-size array to reduction operation": the extern does
    if combine in ("max", "min") and is_unbacked(r):
        # an empty selection at run time: the same error, from the wrapper
        gl.check_nonzero(r, m, "ValueError", f"zero-size array to reduction operation "
                         f"{'maximum' if combine == 'max' else 'minimum'} which has no identity")
    if combine in ("argmax", "argmin") and is_unbacked(r):
        gl.check_nonzero(r, m, "ValueError", f"attempt to get {combine} of an empty sequence")
    if finish_as is None:
        total = reduce(gl, x, axes, combine, out_shape, out_dtype, _acc_dtype(combine, x.dtype, out_dtype))
        if initial is None:
            return total
        # initial (of out_dtype, ops/reduction.py) joins the elements: a NaN among them wins
        fn = "maximum" if combine == "max" else "minimum"
        return _pointwise(gl, out_shape, out_dtype, lambda ops, index: ops.call(
            fn, [total.load(ops, index), ops.constant(initial, out_dtype)], out_dtype))

    if is_unbacked(r):
        return None  # a mean of what may be empty at run time: NumPy's, with its warnings
    if np.dtype(out_dtype).kind != "f":
        return None  # mean(x, dtype=np.int8): NumPy sums and divides in that dtype (extern)
    # NumPy's _mean/_var (numpy/_core/_methods.py), step by step: each sum in the dtype it
    # sums in (dtype=, float64 for ints, else the input's), each division by the intp count
    # in float64 cast back into the sum's dtype, var's deviations in the input's and that
    # dtype's promotion, std's square root in var's dtype. Sums are NumPy's where the loop
    # adds in NumPy's order (kiln/lowering/cpp_stages.py), and so are the results then.
    keep_shape = tuple(1 if i in axes else d for i, d in enumerate(in_shape))
    f64 = np.dtype(np.float64)
    src = np.dtype(x.dtype)
    given = params.get("dtype")
    sum_dt = np.dtype(given) if given is not None else f64 if src.kind in "biu" else src
    total = reduce(gl, x, axes, "sum", keep_shape, sum_dt, _acc_dtype("sum", src, sum_dt))

    def count(ops: Any, n: Any) -> Any:
        return ops.cast(ops.size(n), np.int64, f64)

    def divided(ops: Any, value: Any, dt: np.dtype, n: Any) -> Any:
        return ops.call("true_divide", [ops.cast(value, dt, f64), n], f64)

    if finish_as == "mean":
        return _pointwise(gl, out_shape, out_dtype, lambda ops, index: ops.cast(divided(
            ops, total.load(ops, _keep_index(index, out_shape, keep_shape, axes)), sum_dt,
            count(ops, r)), f64, out_dtype))
    ddof = params.get("ddof", 0) or 0
    # NumPy warns "Degrees of freedom <= 0 for slice" where ddof leaves none (and divides
    # by zero): such sizes run the graph by NumPy (kiln/runtime/backend.py). A dynamic
    # count is a size guard: the example's answer holds for the sizes this build runs.
    if (r <= ddof) if is_static(r) else ddof >= MIN_SIZE and not r > math.floor(ddof):
        raise Unsupported(f"{finish_as} with ddof={ddof} of {r} elements: NumPy warns")
    dev_dt = np.promote_types(src, sum_dt)

    mean = _pointwise(gl, keep_shape, sum_dt, lambda ops, index: ops.cast(divided(
        ops, total.load(ops, index), sum_dt, count(ops, r)), f64, sum_dt))
    if recomputed(mean, in_shape):   # divided once per point, not per element (loop_ir)
        mean = gl.realize(mean)

    def deviation_sq(ops: Any, index: list) -> Any:
        d = ops.call("subtract", [ops.cast(x.load(ops, index), src, dev_dt),
                                  ops.cast(mean.load(ops, broadcast_index(keep_shape, index)), sum_dt, dev_dt)],
                     dev_dt)
        return ops.call("multiply", [d, d], dev_dt)

    squares = reduce(gl, _pointwise(gl, in_shape, dev_dt, deviation_sq), axes, "sum", keep_shape,
                     sum_dt, _acc_dtype("sum", dev_dt, sum_dt))
    root = finish_as == "std"

    def degrees_of_freedom(ops: Any) -> Any:
        # count - ddof > 0 at every size this build runs (refused or guarded above)
        if ddof != int(ddof):  # ddof=0.5: NumPy's count - ddof is a float64
            return ops.call("subtract", [count(ops, r), ops.constant(float(ddof), f64)], f64)
        return count(ops, r - int(ddof))

    def finish(ops: Any, index: list) -> Any:
        var = ops.cast(divided(ops, squares.load(ops, _keep_index(index, out_shape, keep_shape, axes)),
                               sum_dt, degrees_of_freedom(ops)), f64, out_dtype)
        return ops.call("sqrt", [var], out_dtype) if root else var

    return _pointwise(gl, out_shape, out_dtype, finish)


def _keep_index(index: list, out_shape: tuple, keep_shape: tuple, axes: tuple) -> list:
    """Map an index of the reduction's output (keepdims or not) to the keepdims shape."""
    if len(out_shape) == len(keep_shape):
        return list(index)
    it = iter(index)
    return [Affine(0) if i in axes else next(it) for i in range(len(keep_shape))]


def lower_scan(gl: GraphLowering, rule: dict, x: Any, params: dict, meta: TensorMeta,
               layout: tuple | None = None) -> Value | None:
    """A scan op (``lowering={"scan": combine}``: cumsum, cumprod) as a node of kind
    'scan': per point of the other dims, a sequential loop along ``axis`` that combines
    and stores each prefix. The running value is held in the result's dtype, element by
    element in order, which is what NumPy's ``add.accumulate`` does: results are NumPy's
    bit for bit. ``axis=None`` scans every axis in C order, one running value, and the
    result is that buffer flattened (a view). Along one axis the result is written in
    ``layout`` (NumPy's order for it: a Fortran-ordered input gives a Fortran-ordered
    cumsum), when given."""
    combine = rule["scan"]
    if combine not in getattr(gl.renderer, "scans", frozenset()) or \
            not isinstance(x, (BufferValue, Pointwise)) or not x.shape:
        return None   # Triton, and 0-d inputs: NumPy's kernel
    out_dtype = np.dtype(meta.dtype)
    if out_dtype.kind not in "iuf":
        return None
    axis = params.get("axis")
    axes = tuple(range(len(x.shape))) if axis is None else normalize_axis(axis, len(x.shape))
    buf = gl.new_buffer(tuple(x.shape), out_dtype, "computed")
    if layout is not None and axis is not None:
        lay_out(buf, layout)
    origins = tuple(dict.fromkeys(getattr(x, "origins", ()) + gl._origin))
    node = ComputeNode(buf.name, buf, "scan", origins)
    node.src = x
    node.in_shape = tuple(x.shape)
    node.axes = axes
    node.combine = combine
    node.acc_dtype = out_dtype
    gl.nodes.append(node)
    out = BufferValue.whole(buf)
    if axis is None and len(x.shape) > 1:
        from ..ops import F
        out = gl.decompose(lambda v: F.reshape(v, shape=(-1,)), (out,), {})
    return out


def _reduces_contiguous_runs(x: BufferValue, axes: tuple) -> bool:
    """Are the elements reduced for each output point one contiguous run of memory, in
    the order they are reduced (one axis of unit stride; several: the trailing dims,
    row-major)?"""
    dims = [d for d, n in enumerate(x.shape) if n != 1]
    reduced = [d for d in dims if d in axes]
    if len(reduced) == 1:
        return x.strides[reduced[0]] == 1
    if dims[len(dims) - len(reduced):] != reduced:
        return False
    step = 1
    for d in reversed(reduced):
        if x.strides[d] != step:
            return False
        step = step * x.shape[d]
    return True
