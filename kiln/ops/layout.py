"""View layouts: how a VIEW op's window follows from its input's, computed, never run.

A strided window is ``(shape, strides, offset)`` in elements. Each VIEW op declares its
``layout`` rule (``layout(window, *inputs, **params) -> Window | None``) next to its NumPy
kernel; lowering asks the rule instead of running the kernel on a fake array, so no
memory is ever read (a scalar index ``L[i, i]`` of a big matrix used to read far outside
the one-element buffer behind such a fake, and crashed). ``None`` means NumPy would copy
(a reshape of a transposed window), raise, or the rule does not know the arguments: the
caller realizes the input and retries, or calls the op's kernel on real memory.

The rules use only ``+ - *`` and comparisons on sizes, so they are written once for
concrete sizes and for the size expressions of dynamic shapes.

    >>> w = Window((3, 4), (4, 1), 0)
    >>> transpose(w, None)
    Window(shape=(4, 3), strides=(1, 4), offset=0)
    >>> getitem(w, (1, slice(None, None, -1)))
    Window(shape=(4,), strides=(-1,), offset=7)
    >>> reshape(transpose(w, None), (12,)) is None   # NumPy would copy
    True
"""
from __future__ import annotations

import operator
from typing import Any, NamedTuple


class Window(NamedTuple):
    shape: tuple
    strides: tuple
    offset: Any


class Span(NamedTuple):
    """A slice already resolved against its dim's length: the first index, the number of
    elements and the (static) step. Lowering passes one for a slice whose bounds are
    run-time ints, with ``start`` and ``count`` size symbols (kiln/lowering/sizes.py)."""
    start: Any
    count: Any
    step: int


class At(NamedTuple):
    """An integer index already taken on its dim (``0 <= position < length``): lowering
    passes one for a run-time int ``x[i]``, ``position`` a size symbol."""
    position: Any


def _axis(a: Any, ndim: int) -> int | None:
    try:
        a = operator.index(a)
    except TypeError:
        return None
    return a + ndim if -ndim <= a < 0 else a if 0 <= a < ndim else None


def _axes(axis: Any, ndim: int) -> tuple | None:
    """Normalized axes (None: all of them), or None when one is out of range or repeated."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(_axis(a, ndim) for a in items)
    if None in out or len(set(out)) != len(out):
        return None
    return out


def _int(value: Any) -> Any:
    """A concrete Python int, or None (a bool, a traced value, anything else)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        return None
    try:
        return operator.index(value)
    except Exception:  # a symbolic size refuses to be one number
        return None


def transpose(w: Window, axes: Any) -> Window | None:
    nd = len(w.shape)
    perm = tuple(reversed(range(nd))) if axes is None else _axes(axes, nd)
    if perm is None or len(perm) != nd:
        return None
    return Window(tuple(w.shape[a] for a in perm), tuple(w.strides[a] for a in perm), w.offset)


def swapaxes(w: Window, axis1: Any, axis2: Any) -> Window | None:
    nd = len(w.shape)
    a, b = _axis(axis1, nd), _axis(axis2, nd)
    if a is None or b is None:
        return None
    perm = list(range(nd))
    perm[a], perm[b] = b, a
    return transpose(w, tuple(perm))


def moveaxis(w: Window, source: Any, destination: Any) -> Window | None:
    nd = len(w.shape)
    src, dst = _axes(source, nd), _axes(destination, nd)
    if src is None or dst is None or len(src) != len(dst):
        return None
    order = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(w, tuple(order))


def expand_dims(w: Window, axis: Any) -> Window | None:
    nd = len(w.shape) + (len(axis) if isinstance(axis, (tuple, list)) else 1)
    axes = _axes(axis, nd)
    if axes is None:
        return None
    shape, strides = list(w.shape), list(w.strides)
    for a in sorted(axes):
        shape.insert(a, 1)
        strides.insert(a, 0)
    return Window(tuple(shape), tuple(strides), w.offset)


def _unit(n: Any) -> bool:
    """Is this dim 1? A symbolic size that may be 1 at run time (an unbacked size,
    kiln/ir/sizes.py) cannot say: its comparison raises Undecidable."""
    return n == 1 if isinstance(n, int) else not n > 1


def squeeze(w: Window, axis: Any) -> Window | None:
    nd = len(w.shape)
    if axis is None:
        axes = tuple(d for d, n in enumerate(w.shape) if _unit(n))
    else:
        axes = _axes(axis, nd)
        if axes is None or not all(_unit(w.shape[a]) for a in axes):
            return None  # NumPy raises: the kernel says so
    keep = [d for d in range(nd) if d not in axes]
    return Window(tuple(w.shape[d] for d in keep), tuple(w.strides[d] for d in keep), w.offset)


def flip(w: Window, axis: Any) -> Window | None:
    axes = _axes(axis, len(w.shape))
    if axes is None:
        return None
    strides, offset = list(w.strides), w.offset
    for a in axes:
        if w.shape[a] > 0:
            offset = offset + (w.shape[a] - 1) * strides[a]
        strides[a] = -strides[a]
    return Window(w.shape, tuple(strides), offset)


def broadcast_to(w: Window, shape: Any) -> Window | None:
    shape = (shape,) if _int(shape) is not None else tuple(shape)
    lead = len(shape) - len(w.shape)
    if lead < 0 or any(n < 0 for n in shape):
        return None
    strides = [0] * lead
    for n, (m, s) in zip(shape[lead:], zip(w.shape, w.strides)):
        if m == n:
            strides.append(s)
        elif m == 1:
            strides.append(0)
        else:
            return None
    return Window(tuple(shape), tuple(strides), w.offset)


def _size(shape: tuple) -> Any:
    out = 1
    for n in shape:
        out = out * n
    return out


def _contiguous(shape: tuple) -> tuple:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc = acc * (n if not (isinstance(n, int) and n == 0) else 1)
    return tuple(reversed(strides))


def reshape(w: Window, shape: Any) -> Window | None:
    """NumPy's no-copy reshape (``_attempt_nocopy_reshape``, C order); None: it copies."""
    shape = (shape,) if _int(shape) is not None else tuple(shape)
    size = _size(w.shape)
    if sum(1 for n in shape if isinstance(n, int) and n == -1) > 1:
        return None
    if any(isinstance(n, int) and n == -1 for n in shape):
        known = _size(tuple(n for n in shape if not (isinstance(n, int) and n == -1)))
        if isinstance(known, int) and isinstance(size, int):
            if known == 0 or size % known:
                return None
            rest = size // known
        elif isinstance(known, int) and known and hasattr(size, "exact_div"):
            rest = size.exact_div(known)  # (s0, 5) -> (-1,): s0*5 / 5
            if rest is None:
                return None
        else:
            return None
        shape = tuple(rest if isinstance(n, int) and n == -1 else n for n in shape)
    if _size(shape) != size:
        return None
    if isinstance(size, int) and size == 0:
        return Window(shape, _contiguous(shape), w.offset)
    old = [(n, s) for n, s in zip(w.shape, w.strides) if not (isinstance(n, int) and n == 1)]
    new_strides: list = [None] * len(shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(shape) and oi < len(old):
        np_, op = shape[ni], old[oi][0]
        while np_ != op:
            try:  # symbolic sizes compare when the order is the same for every size
                grow_new = np_ < op
            except Exception:
                return None
            if grow_new:
                if nj >= len(shape):
                    return None
                np_ = np_ * shape[nj]
                nj += 1
            else:
                if oj >= len(old):
                    return None
                op = op * old[oj][0]
                oj += 1
        for ok in range(oi, oj - 1):
            if old[ok][1] != old[ok + 1][0] * old[ok + 1][1]:
                return None  # not contiguous across the merged dims: NumPy copies
        new_strides[nj - 1] = old[oj - 1][1]
        for nk in range(nj - 1, ni, -1):
            new_strides[nk - 1] = new_strides[nk] * shape[nk]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    last = new_strides[ni - 1] if ni >= 1 else 1
    for nk in range(ni, len(shape)):
        new_strides[nk] = last
    return Window(shape, tuple(new_strides), w.offset)


def ravel(w: Window) -> Window | None:
    """np.ravel (order 'C') is a view only of a C-contiguous array: a strided, reversed or
    broadcast one (even 1-d) is copied, so the result is writeable and aliases nothing."""
    if not _c_contiguous(w):
        return None
    return reshape(w, (_size(w.shape),))


def _c_contiguous(w: Window) -> bool:
    """NumPy's C-contiguous flag of a window (unit dims' strides do not count)."""
    if any(isinstance(n, int) and n == 0 for n in w.shape):
        return True
    step: Any = 1
    for n, s in reversed(list(zip(w.shape, w.strides))):
        if not (isinstance(n, int) and n == 1):
            if s != step:
                return False
            step = step * n
    return True


def getitem(w: Window, index: Any) -> Window | None:
    """Basic indexing: ints, slices with int bounds, None and one Ellipsis."""
    index = index if isinstance(index, tuple) else (index,)
    if sum(1 for i in index if i is Ellipsis) > 1:
        return None
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > len(w.shape):
        return None
    if Ellipsis not in index:
        index = index + (Ellipsis,)
    shape, strides, offset, d = [], [], w.offset, 0
    for item in index:
        if item is None:
            shape.append(1)
            strides.append(0)
        elif item is Ellipsis:
            for _ in range(len(w.shape) - used):
                shape.append(w.shape[d])
                strides.append(w.strides[d])
                d += 1
        elif isinstance(item, At):
            offset = offset + item.position * w.strides[d]
            d += 1
        elif isinstance(item, Span):
            if item.count:
                offset = offset + item.start * w.strides[d]
            shape.append(item.count)
            strides.append(w.strides[d] * item.step)
            d += 1
        elif isinstance(item, slice):
            bounds = [item.start, item.stop, item.step]
            if bounds == [None, None, None]:  # the whole dim (also when its size is dynamic)
                shape.append(w.shape[d])
                strides.append(w.strides[d])
                d += 1
                continue
            if any(b is not None and _int(b) is None for b in bounds):
                return None
            if item.step is not None and _int(item.step) == 0:
                return None
            found = _slice(*(None if b is None else _int(b) for b in bounds), w.shape[d])
            if found is None:
                return None
            start, n, step = found
            if n:
                offset = offset + start * w.strides[d]
            shape.append(n)
            strides.append(w.strides[d] * step)
            d += 1
        else:
            i = _int(item)
            n = w.shape[d]
            try:  # a symbolic size answers when it can (x[:, 0] of a dynamic dim)
                inside = i is not None and -n <= i and i < n
            except Exception:
                inside = False
            if not inside:
                return None  # NumPy raises IndexError (or it is an advanced index)
            offset = offset + (i if i >= 0 else n + i) * w.strides[d]
            d += 1
    return Window(tuple(shape), tuple(strides), offset)


def index_dims(index: tuple, ndim: int) -> list | None:
    """For each entry of a basic index, the input dim it reads (None for ``None`` and
    ``Ellipsis``); None when the index does not fit ``ndim`` dims."""
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > ndim or sum(1 for i in index if i is Ellipsis) > 1:
        return None
    out, d = [], 0
    for item in index:
        if item is Ellipsis:
            out.append(None)
            d += ndim - used
        elif item is None:
            out.append(None)
        else:
            out.append(d)
            d += 1
    return out


def overlaps_itself(shape: Any, strides: Any, itemsize: int = 1) -> bool:
    """May two elements of this layout share memory (strides and ``itemsize`` in one
    unit: elements, or bytes)? A zero stride on an axis longer than one, or an
    ``as_strided`` window (shape ``(8, 3)`` over element strides ``(1, 1)``). Sufficient,
    not exact: axes by increasing stride, each stride past the extent of the ones before
    it (an interleaving that never overlaps counts as overlapping).

        >>> overlaps_itself((8, 3), (1, 1)), overlaps_itself((3, 4), (1, 3))
        (True, False)
    """
    if any(n == 0 for n in shape):
        return False
    extent = itemsize
    for stride, n in sorted((abs(s), n) for n, s in zip(shape, strides) if n != 1):
        if stride < extent:
            return True
        extent += stride * (n - 1)
    return False


def writes_over_itself(a: Any) -> bool:
    """Is the array ``a`` writeable, with elements that may share memory? (A write into it
    is not a copy of a computed value: NumPy writes only the elements it names, and an
    element aliased by several gets the last write.) fastcheck.c has the same test."""
    flags = a.flags   # (a CuPy array's have no writeable: always writeable)
    return getattr(flags, "writeable", True) and not (flags.c_contiguous or flags.f_contiguous) \
        and overlaps_itself(a.shape, a.strides, a.itemsize)


def _slice(start: Any, stop: Any, step: Any, length: Any) -> tuple | None:
    """(first index, number of elements, step) of ``slice(start, stop, step)`` on a dim
    of ``length``: Python's ``slice.indices`` written with comparisons and ``+ -`` only,
    so that a symbolic length (kiln/lowering/sizes.py) works too — each comparison is
    decided by the size's bound or becomes a guard on the sizes (``x[:10]`` on a dim
    ``s0``: ``s0 >= 10``). None when the count is not a polynomial (``x[::2]`` of a
    dynamic dim)."""
    if isinstance(length, int):
        start, stop, step = slice(start, stop, step).indices(length)
        return start, len(range(start, stop, step)), step
    step = 1 if step is None else step
    lower, upper = (-1, length - 1) if step < 0 else (0, length)

    def clamp(b: Any, default: Any) -> Any:
        if b is None:
            return default
        if b < 0:
            b = b + length
            return lower if b < lower else b
        return upper if b > upper else b

    start = clamp(start, upper if step < 0 else lower)
    stop = clamp(stop, lower if step < 0 else upper)
    span = stop - start if step > 0 else start - stop
    if not span >= 0:   # (an empty slice's count is 0, and s0 - 2 >= 0 always holds)
        return start, 0, step
    if abs(step) == 1:
        return start, span, step
    if isinstance(span, int):
        return start, -(-span // abs(step)), step
    return None


def diagonal(w: Window, offset: Any = 0, axis1: Any = 0, axis2: Any = 1) -> Window | None:
    """np.diagonal: the other axes in order, then the diagonal (stride s1 + s2)."""
    nd = len(w.shape)
    a1, a2 = _axis(axis1, nd), _axis(axis2, nd)
    if a1 is None or a2 is None or a1 == a2 or not isinstance(offset, int) \
            or not all(isinstance(d, int) for d in (w.shape[a1], w.shape[a2])):
        return None
    n, m = w.shape[a1], w.shape[a2]
    length = max(0, min(n - max(-offset, 0), m - max(offset, 0)))
    rest = [k for k in range(nd) if k not in (a1, a2)]
    start = offset * w.strides[a2] if offset >= 0 else -offset * w.strides[a1]
    return Window(tuple(w.shape[k] for k in rest) + (length,),
                  tuple(w.strides[k] for k in rest) + (w.strides[a1] + w.strides[a2],),
                  w.offset + (start if length else 0))
