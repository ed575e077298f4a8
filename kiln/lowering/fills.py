"""Fresh arrays and writes into them, as closures: ``np.zeros``/``np.empty``/``np.full``
followed by slice or element assignments become one value computed where it is stored.

    z = np.zeros((n, n, 3)); z[:, :, 0] = x.reshape(-1, 1); z[:, :, 1] = x

lowers to one kernel writing each element of ``z`` once,
``k == 1 ? x[j] : k == 0 ? x[i] : 0.0``, instead of a fill pass, then a copy of ``z`` per
write (the functional ``index_put``), then the writes.

- A creation op with ``lowering={"fill": v}`` (``v`` a number, or the name of its input
  holding the fill value) is a closure returning that value. Returned as it is, it stays
  NumPy's own call (``np.zeros`` gets zeroed pages from the OS without touching them).
- An op with ``lowering={"region_write": True}`` (``index_put``: ``x[index] = value``)
  with a basic index (integers, slices of step 1) selects ``value`` inside the region and
  ``x`` outside, when nothing else reads ``x`` (its states are never realized). Where the
  value would be read outside its own bounds for points outside the region (``y[:n] = x``
  into a longer ``y``, a stencil into the inside of a grid), its index is clamped into
  the region (a select reads both sides).
- An op with ``lowering={"join": True}`` (``np.stack``, ``np.concatenate``) with a small
  result or a few pieces is a select on the joined axis among its pieces (each read at a
  clamped index), so ``np.array([a * x, b - y, c])`` is one kernel writing three
  elements, not a call, and ``np.concatenate([A, B]) * 2`` one pass.
- An op with ``lowering={"repeat": True}`` (``np.repeat`` with one count) is its input
  read at ``index // count`` along the axis: ``y[n:] = np.repeat(x, 3)`` writes ``y`` in
  one pass, without the repeated temporary.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..ops.meta import TensorMeta
from .loop_ir import Affine, BufferValue, Pointwise, Scalar, Value, broadcast_index
from .scalars import narrowed_floats


def lower_fill(gl: Any, fill: Any, args: tuple, params: dict, op: Any, meta: TensorMeta) -> Value | None:
    """A creation op's value as a closure (see the module docstring)."""
    if gl.sizes or not _renderer_ok(gl):
        return None   # dynamic sizes: NumPy's own call (regions are static bounds)
    dtype = np.dtype(meta.dtype)
    shape = tuple(meta.shape)
    if isinstance(fill, str):
        value = args[list(op.inputs).index(fill)]
        if not isinstance(value, (Scalar, BufferValue, Pointwise)) or len(value.shape) > len(shape):
            return None
        constant = isinstance(value, Scalar) and value.value is not None and not getattr(value, "arg", False)
        if not constant and not np.can_cast(value.dtype, dtype, "safe" if dtype.kind in "iub" else "same_kind"):
            return None   # NumPy's own conversion (a range check for integer fills)
        if isinstance(value, Scalar) and value.value is not None and not getattr(value, "arg", False):
            number = _converted(value.value, dtype)
            if number is None:
                return None
            fn = lambda ops, index: ops.constant(number, dtype)  # noqa: E731
        else:
            fn = lambda ops, index: ops.cast(value.load(ops, broadcast_index(value.shape, index)),  # noqa: E731
                                             value.dtype, dtype)
        cost = getattr(value, "cost", 0)
    else:
        fn = lambda ops, index: ops.constant(fill, dtype)  # noqa: E731
        cost = 0
    out = Pointwise(shape, dtype, fn, cost, gl._origin)
    out.creation = (op, args, params, meta)   # returned unchanged: NumPy's own call
    return out


def _renderer_ok(gl: Any) -> bool:
    """Does the target's handler load at computed indices (Renderer.computed_indices)?
    Others (Triton, for now) keep NumPy's creation calls and extern writes."""
    return gl.renderer is None or getattr(gl.renderer, "computed_indices", False)


def _region(shape: tuple, index: Any) -> list | None:
    """Per base dim: None (all of it), ("at", k) or ("span", start, stop); None if the index
    is not basic with unit steps and static bounds."""
    index = index if isinstance(index, tuple) else (index,)
    if len(index) > len(shape):
        return None
    out: list = []
    for d, ix in zip(shape, index):
        if isinstance(ix, (bool, np.bool_)):
            return None
        if isinstance(ix, (int, np.integer)):
            k = int(ix) + (d if ix < 0 else 0)
            if not 0 <= k < d:
                return None
            out.append(("at", k))
        elif isinstance(ix, slice) and all(v is None or isinstance(v, (int, np.integer)) and
                                           not isinstance(v, bool) for v in (ix.start, ix.stop, ix.step)):
            start, stop, step = ix.indices(d)
            if step != 1:
                return None
            stop = max(stop, start)
            out.append(None if (start, stop) == (0, d) else ("span", start, stop))
        else:
            return None
    return out + [None] * (len(shape) - len(index))


def _converted(number: Any, dtype: np.dtype) -> Any:
    """A constant converted as NumPy writes it into an array of ``dtype``, or None where
    that raises or warns (1e300 into float32: "overflow encountered in cast", which
    NumPy's write then says at every call, not the compiler once)."""
    try:
        with np.errstate(all="warn"), warnings.catch_warnings():
            warnings.simplefilter("error")
            return np.array(number, dtype=dtype).item()
    except (OverflowError, ValueError, TypeError, Warning):
        return None


def _written(value: Value, dtype: np.dtype, node: Any = None) -> tuple[bool, Any] | None:
    """``value`` written into an array of ``dtype``, when C's conversion is NumPy's:
    (is it a compile-time constant, that constant converted), or None (NumPy's casting
    or range check decides: the write stays NumPy's). A run-time float written into a
    narrower float array is checked by the wrapper on each call, as a narrower loop's
    (``float_bounds``: NumPy's "overflow encountered in cast" past its range)."""
    weak = isinstance(value, Scalar) and value.weak
    if not weak and not np.can_cast(value.dtype, dtype, "same_kind"):
        return None   # float into int and friends: NumPy's casting, not C's
    if weak and dtype.kind in "iub" and np.dtype(value.dtype).kind == "f":
        return None
    if dtype.kind in "iub" and value.shape == () and not np.can_cast(value.dtype, dtype, "safe") \
            and not (isinstance(value, Scalar) and value.value is not None and not getattr(value, "arg", False)):
        return None   # NumPy range-checks a scalar written into an integer array
    if isinstance(value, Scalar) and value.value is not None and not getattr(value, "arg", False):
        # NumPy's own conversion: a Python int out of range raises there
        number = _converted(value.value, dtype)
        return None if number is None else (True, number)
    if weak and dtype.kind in "iub":
        return None   # a run-time Python number: its range is NumPy's to check
    for v, dt in narrowed_floats([value], [dtype], weak_only=False):
        if node is None:
            return None
        v.float_bounds = getattr(v, "float_bounds", ()) + ((dt, node),)
    return False, None


def _mask_write(gl: Any, base: Value, mask: Value, value: Value) -> Value | None:
    """``x[mask] = value`` with a boolean ``mask`` over x's leading dims and a value that
    is the same for every selected point (it broadcasts over the dims after the mask's):
    ``where(mask, value, x)``, elementwise. A value with one entry per selected point
    (``x[m] = y[m]``) pairs them by count: NumPy's own write."""
    shape, mshape = tuple(base.shape), tuple(mask.shape)
    if not mshape or shape[:len(mshape)] != mshape or not all(isinstance(d, int) for d in shape):
        return None   # NumPy raises its IndexError (or the sizes are symbols)
    trailing = shape[len(mshape):]
    vshape = tuple(value.shape)
    if not trailing and len(vshape) > 1:
        return None   # NumPy's TypeError: "requires a 0 or 1-dimensional input" (seed 9008)
    while vshape and vshape[0] == 1:
        vshape = vshape[1:]
    if len(vshape) > len(trailing) or any(v not in (1, t) for v, t in
                                          zip(vshape, trailing[len(trailing) - len(vshape):])):
        return None
    dtype = np.dtype(base.dtype)
    written = _written(value, dtype, gl._origin[0] if gl._origin else None)
    if written is None:
        return None
    constant, number = written
    pad = len(value.shape) - len(vshape)

    def fn(ops: Any, idx: list) -> Any:
        new = ops.constant(number, dtype) if constant else ops.cast(
            value.load(ops, [Affine(0)] * pad + broadcast_index(vshape, idx)), value.dtype, dtype)
        return ops.call("where", [mask.load(ops, idx[:len(mshape)]), new, base.load(ops, idx)], dtype)

    cost = sum(getattr(v, "cost", 0) for v in (base, mask, value)) + 1
    origins = tuple(dict.fromkeys(o for v in (base, mask, value) if isinstance(v, Pointwise)
                                  for o in v.origins))
    return Pointwise(shape, dtype, fn, cost, origins + gl._origin)


def lower_region_write(gl: Any, args: tuple, meta: TensorMeta) -> Value | None:
    """``x[index] = value`` as a select between ``value`` and ``x`` (module docstring)."""
    base, index, value = args
    if not isinstance(base, (BufferValue, Pointwise)) or \
            not isinstance(value, (Scalar, BufferValue, Pointwise)):
        return None
    entries = index if isinstance(index, tuple) else (index,)
    if len(entries) == 1 and isinstance(entries[0], (BufferValue, Pointwise)) \
            and np.dtype(entries[0].dtype) == np.bool_:
        # Every point is decided by its own mask entry: other readers of x are no reason
        # to keep the write NumPy's (each state is one elementwise pass either way).
        return None if gl.sizes else _mask_write(gl, base, entries[0], value)
    node = gl._origin[0] if gl._origin else None
    first = getattr(node, "args", (None,))[0]
    if len(getattr(first, "users", ())) > 1:
        # The array before this write is read too (``e[i] = f(e[i - 1])``): every state
        # would be realized whole, quadratic in the writes; the extern writes in place.
        return None
    shape = tuple(base.shape)
    if gl.sizes or not _renderer_ok(gl) or not all(isinstance(d, int) for d in shape + tuple(value.shape)):
        return None   # dynamic sizes: regions are static bounds
    size = int(np.prod(shape))
    if getattr(base, "region_writes", 0) >= (MAX_REGION_WRITES if size <= SMALL_BASE else MAX_LARGE_WRITES):
        return None   # the writes so far become one buffer; this one NumPy's, in place
    region = _region(shape, index)
    if region is None:
        return None
    covered = int(np.prod([d if r is None else 1 if r[0] == "at" else r[2] - r[1]
                           for d, r in zip(shape, region)]))
    if isinstance(base, BufferValue) and size > SMALL_BASE and covered * REGION_FRACTION < size:
        # Into an array already computed, a select is a pass over all of it: for a row of
        # a large matrix that costs more than NumPy's write of the row (a loop writing
        # each row of a 500 x 500 matrix made 1,000 passes, 10x NumPy's time). Into a
        # fill (np.zeros, np.ones) or earlier selects the pass is made anyway.
        return None
    dtype = np.dtype(base.dtype)
    written = _written(value, dtype, node)
    if written is None:
        return None
    constant, number = written
    # The region's dims (integer-indexed ones dropped) and where each starts in the base.
    kept = [(d, r) for d, r in enumerate(region) if r is None or r[0] == "span"]
    rshape = tuple(shape[d] if r is None else r[2] - r[1] for d, r in kept)
    vshape = tuple(value.shape)
    while len(vshape) > len(rshape) and vshape[0] == 1:
        vshape = vshape[1:]
    if len(vshape) > len(rshape):
        return None
    lead = len(rshape) - len(vshape)
    # The value is read at every point (a select, not a branch: it vectorizes as a blend),
    # so along partly written dims its index is clamped into the region: every load stays
    # inside its buffer. (Masked loads of addresses outside it were 3x slower than NumPy's
    # copies: each one that reaches an unmapped page takes a microcode assist.)
    pad = len(value.shape) - len(vshape)
    i64, b = np.dtype(np.int64), np.dtype(np.bool_)
    node = gl._origin[0] if gl._origin else None

    def fn(ops: Any, idx: list) -> Any:
        def const(k: int) -> Any:
            return ops.constant(k, i64)

        conds = []
        for d, r in enumerate(region):
            if r is None:
                continue
            i = ops.index(idx[d])
            if r[0] == "at":
                conds.append(ops.call("equal", [i, const(r[1])], i64, b))
            else:
                conds.append(ops.call("logical_and", [ops.call("greater_equal", [i, const(r[1])], i64, b),
                                                      ops.call("less", [i, const(r[2])], i64, b)], b))

        def load_value() -> Any:
            if constant:
                return ops.constant(number, dtype)
            rindex = []
            for d, r in kept:
                if r is None:
                    rindex.append(idx[d])
                else:
                    lo, hi = r[1], r[2] - 1
                    clamped = ops.call("clip", [ops.index(idx[d]), const(lo), const(hi)], i64)
                    rindex.append(Affine.var(ops.bind_index(clamped)) + (-lo))
            vindex = [Affine(0)] * pad + broadcast_index(vshape, rindex)
            loaded = value.load(ops, vindex)
            cast = ops.cast(loaded, value.dtype, dtype)
            if node is not None and value.dtype != dtype:   # where NumPy's cast warns (fp_flags.py)
                ops.raised(node, (cast, dtype), [(loaded, value.dtype)])
            return cast

        if not conds:
            return load_value()
        cond = conds[0]
        for c in conds[1:]:
            cond = ops.call("logical_and", [cond, c], b)
        return ops.call("where", [cond, load_value(), base.load(ops, idx)], dtype)

    cost = getattr(base, "cost", 0) + getattr(value, "cost", 0) + 1
    origins = tuple(dict.fromkeys(o for v in (base, value) if isinstance(v, Pointwise) for o in v.origins))
    written = Pointwise(shape, dtype, fn, cost, origins + gl._origin)
    written.region_writes = getattr(base, "region_writes", 0) + 1
    return written


# Each write wraps the selects of the ones before: every point evaluates them all, and
# the lowering recurses through them (an unrolled loop of 100 element writes into one
# ``np.zeros`` passed Python's recursion limit).
MAX_REGION_WRITES = 32
MAX_LARGE_WRITES = 8      # into an array of more than SMALL_BASE elements
# A write into a larger computed array is a select only where it covers at least
# 1/REGION_FRACTION of it (a half ``y[n:] = ...``, a channel ``z[:, :, 1] = x``).
SMALL_BASE = 256
REGION_FRACTION = 8


# A join's select reads every piece at each point: worth it where a call of NumPy's costs
# more than the elements (ODE right-hand sides, ``np.array([...])`` of a few scalars), or
# where the pieces are few. A larger join of up to JOIN_SELECT_PIECES pieces is a select
# too: fused into its consumer, it makes one pass where NumPy copies and then computes
# (``np.concatenate([A, B]) * 2`` at 1000 x 1000: 0.6-0.7x NumPy as a copy then a kernel,
# 1.2-1.4x as a select, loaded); in an elementwise kernel the loop over the joined axis
# is cut at the pieces' bounds (plan.index_cuts), so each segment reads one piece.
JOIN_SELECT_ELEMENTS = 256
JOIN_SELECT_PIECES = 4


def lower_join(gl: Any, kind: str, args: tuple, params: dict, meta: TensorMeta) -> Value | None:
    """``np.stack``/``np.concatenate`` (``kind``) of a small result as a select (module
    docstring)."""
    pieces = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else None
    shape, dtype = tuple(meta.shape), np.dtype(meta.dtype)
    if not pieces or gl.sizes or not _renderer_ok(gl) or params.get("shapes") is not None \
            or params.get("axis") is None or not all(isinstance(d, int) for d in shape) \
            or int(np.prod(shape)) > JOIN_SELECT_ELEMENTS and len(pieces) > JOIN_SELECT_PIECES:
        return None
    if not all(isinstance(v, (Scalar, BufferValue, Pointwise)) for v in pieces) or \
            not all(np.can_cast(v.dtype, dtype, "same_kind") for v in pieces) or \
            any(0 in tuple(v.shape) for v in pieces) or 0 in shape:
        return None   # NumPy's casting decides; an empty piece has no element to read
    ax = int(params["axis"])
    stacked = kind == "stack"
    bounds, start = [], 0
    for v in pieces:
        n = 1 if stacked else tuple(v.shape)[ax]
        bounds.append((start, start + n))
        start += n
    if start != shape[ax]:
        return None
    i64, b = np.dtype(np.int64), np.dtype(np.bool_)

    def fn(ops: Any, idx: list) -> Any:
        k = ops.index(idx[ax])

        def piece(i: int) -> Any:
            v, (lo, hi) = pieces[i], bounds[i]
            if stacked:
                vidx = list(idx[:ax]) + list(idx[ax + 1:])
            else:   # read inside the piece's own bounds at every point (a select)
                kk = ops.call("clip", [k, ops.constant(lo, i64), ops.constant(hi - 1, i64)], i64)
                vidx = list(idx[:ax]) + [Affine.var(ops.bind_index(kk)) + (-lo)] + list(idx[ax + 1:])
            return ops.cast(v.load(ops, vidx), v.dtype, dtype)

        out = piece(len(pieces) - 1)
        for i in range(len(pieces) - 2, -1, -1):
            cond = ops.call("less", [k, ops.constant(bounds[i][1], i64)], i64, b)
            out = ops.call("where", [cond, piece(i), out], dtype)
        return out

    cost = sum(getattr(v, "cost", 0) for v in pieces) + len(pieces)
    origins = tuple(dict.fromkeys(o for v in pieces if isinstance(v, Pointwise) for o in v.origins))
    return Pointwise(shape, dtype, fn, cost, origins + gl._origin)


def lower_tri(gl: Any, kind: str, args: tuple, params: dict, meta: TensorMeta) -> Value | None:
    """``np.tril``/``np.triu`` (``kind``) as a select on the position against the k-th
    diagonal (NumPy's own ``where(mask, m, 0)``): fused into its consumer, so
    ``np.tril(A) * A`` is one pass where NumPy writes the triangle first (0.78-0.84x NumPy
    as an extern call then a kernel, loaded). A 1-d input is its row broadcast."""
    (x,) = args
    shape, dtype = tuple(meta.shape), np.dtype(meta.dtype)
    if gl.sizes or not _renderer_ok(gl) or not isinstance(x, (BufferValue, Pointwise)) \
            or len(shape) < 2 or not all(isinstance(d, int) for d in shape) or 0 in shape:
        return None
    k = int(params.get("k", 0))
    i64, b = np.dtype(np.int64), np.dtype(np.bool_)
    compare = "less_equal" if kind == "tril" else "greater_equal"

    def fn(ops: Any, idx: list) -> Any:
        offset = ops.index(idx[-1] + idx[-2] * -1)   # column - row: the diagonal it is on
        keep = ops.call(compare, [offset, ops.constant(k, i64)], i64, b)
        value = ops.cast(x.load(ops, broadcast_index(tuple(x.shape), idx)), x.dtype, dtype)
        return ops.call("where", [keep, value, ops.constant(0, dtype)], dtype)

    return Pointwise(shape, dtype, fn, getattr(x, "cost", 0) + 3, getattr(x, "origins", ()) + gl._origin)


def lower_repeat(gl: Any, args: tuple, params: dict, meta: TensorMeta) -> Value | None:
    """``np.repeat(x, r, axis)`` with an int ``r`` as a closure (module docstring)."""
    (x,) = args
    r, axis = params.get("repeats"), params.get("axis")
    if not isinstance(x, (BufferValue, Pointwise)) or not isinstance(r, int) or r < 1 \
            or gl.sizes or not _renderer_ok(gl):
        return None
    if axis is None:
        if len(x.shape) != 1:
            return None   # the flattened input: an unravelled index (NumPy's own call)
        axis = 0
    shape = tuple(meta.shape)
    if not all(isinstance(d, int) for d in shape) or 0 in shape:
        return None
    if r > 1 and isinstance(x, Pointwise) and x.cost > 1:
        # Each element is read r times: computed once, into a buffer r times smaller than
        # the result, rather than r times (the twiddle factors' complex exp of a Stockham
        # FFT, repeated 16,384 times, made it 10x slower than NumPy).
        x = gl.realize(x)
    i64 = np.dtype(np.int64)

    def fn(ops: Any, idx: list) -> Any:
        if r == 1:
            return x.load(ops, idx)
        src = ops.call("floor_divide", [ops.index(idx[axis]), ops.constant(r, i64)], i64)
        return x.load(ops, list(idx[:axis]) + [Affine.var(ops.bind_index(src))] + list(idx[axis + 1:]))

    out = Pointwise(shape, x.dtype, fn, getattr(x, "cost", 0) + 1, getattr(x, "origins", ()) + gl._origin)
    return out
