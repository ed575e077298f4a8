"""Shape and dtype rules: abstract values, fake arrays, and the rule helpers ops share.

A :class:`TensorMeta` is what capture knows about an array without its data: a shape and
a dtype. Python scalars stay Python scalars in rules: they are NEP 50 *weak* values (a
Python float never promotes float32 to float64), NumPy scalars are strong.

Most ops state their rule explicitly (``pointwise_meta``, ``reduction_meta``). Ops whose
rule is just "whatever NumPy does" derive it by running their kernel on *fake* arrays:
zero-stride arrays of the right shape and dtype that take no memory. Views, reshapes
and indexing on fakes cost nothing, and NumPy raises its own errors with its own
messages (a bad axis, a shape mismatch), which is exactly what the user should see.

    >>> import numpy as np
    >>> from kiln.ops.meta import TensorMeta, infer_meta
    >>> from kiln.ops import F
    >>> infer_meta(F.add, (TensorMeta((3, 1), np.float32), 1.0), {})
    TensorMeta(shape=(3, 1), dtype=float32)
"""
from __future__ import annotations

import math

import operator
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from ..array_kinds import device_of, kind_of_type
from ..errors import UnsupportedArgument, UnsupportedDtype
from .registry import map_leaves

SUPPORTED_KINDS = "biufc"  # bool, signed, unsigned, float, complex


class TensorMeta:
    """Shape and dtype of an array value, no data."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: Sequence[int], dtype: Any) -> None:
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        if self.dtype.char == "c":
            # np.dtype('c') equals 'S1', but a str assigned into it fills one character
            # per element, and copying the dtype (deepcopy, pickle) gives a plain 'S1'
            raise UnsupportedDtype("dtype 'c' (one character per element) is not supported "
                                   "by kiln; call the function without kiln")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @classmethod
    def of(cls, value: Any) -> "TensorMeta":
        return cls(np.shape(value), np.asarray(value).dtype if not hasattr(value, "dtype") else value.dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorMeta) and self.shape == other.shape and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"TensorMeta(shape={self.shape}, dtype={self.dtype})"


def namespace(*values: Any) -> Any:
    """The array module an op kernel calls for ``values``: ``numpy``, or, when one of them
    is an array on a GPU, its library's module (``cupy``; kiln/array_kinds.py). Kernels
    that make arrays (``asarray`` of a scalar, ``empty``, ``zeros``) call it, so their
    results live where their inputs do and CuPy never sees a NumPy operand.

        >>> namespace(np.ones(2), 3.0) is np
        True
    """
    for v in values:
        t = type(v)
        if t in _HOST_TYPES:
            continue
        if t is tuple or t is list:
            xp = namespace(*v)
            if xp is not np:
                return xp
            continue
        kind = kind_of_type(t)
        if kind is not None and kind.device != "cpu":
            return kind.namespace()
    return np


_HOST_TYPES = frozenset({np.ndarray, float, int, bool, complex, type(None), np.float64, np.int64})


def as_array(x: Any, *like: Any) -> Any:
    """``np.asarray(x)`` in ``x``'s (or ``like``'s) array module: an array stays as it is,
    a scalar or list becomes an array on the device the other values live on.

        >>> as_array(2.0)
        array(2.)
    """
    if not like and type(x) is np.ndarray:
        return x
    return namespace(x, *like).asarray(x)


def to_host(x: Any) -> Any:
    """``x`` as a host value: itself, or for an array on a GPU an explicit copy
    (``cupy.asnumpy``), for the few kernels that read an array's values in Python (the
    positions of ``np.delete``), as NumPy's own functions do.

        >>> to_host(3)
        3
    """
    found = device_of((x,))
    return x if found is None else found[0].namespace().asnumpy(x)


def fresh_copy(x: Any, order: str = "K") -> Any:
    """A copy of ``x`` owning its memory, of ``x``'s kind: ``np.array(x, copy=True)`` for
    NumPy values (no dispatch cost), ``np.copy`` for another array library's array, which
    NumPy's ``__array_function__`` hands to that library (CuPy refuses np.array: it would
    copy to the host).

        >>> fresh_copy(np.float64(2.0))
        array(2.)
    """
    if isinstance(x, (np.ndarray, np.generic)) or not hasattr(type(x), "__array_function__"):
        return np.array(x, copy=True, order=order)
    return np.copy(x, order=order)


def supported_dtype(dtype: Any) -> bool:
    """bool, integers, float32/64, complex64/128 (not float16, longdouble, clongdouble), in
    the machine's byte order: kernels read and write native values, so a big-endian array
    (``astype('>f8')``, data read from a file) runs through NumPy."""
    dt = np.dtype(dtype)
    return dt.kind in SUPPORTED_KINDS and dt != np.float16 and dt.isnative and \
        dt.itemsize <= (16 if dt.kind == "c" else 8)


def check_casting(casting: Any) -> str:
    """A ``casting=`` argument, or NumPy's error for one it does not know.

        >>> check_casting("same_kind")
        'same_kind'
    """
    if not isinstance(casting, str):
        raise TypeError(f"casting must be str, not {type(casting).__name__}")
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError(f"casting must be one of 'no', 'equiv', 'safe', 'same_kind', "
                         f"'unsafe' (got {casting!r})")
    return casting


def is_dtype_class(value: Any) -> bool:
    """A DType class (``np.dtypes.Float64DType``) where NumPy takes a dtype. NumPy's
    functions read it each their own way: np.zeros, np.sum and ``astype`` as the class's
    default instance (float64), np.arange, np.cumsum, np.concatenate and np.einsum as
    ``np.dtype(cls)`` (object). Calls given one run as NumPy.

        >>> is_dtype_class(np.dtypes.Float32DType), is_dtype_class(np.float32)
        (True, False)
    """
    return isinstance(value, type) and issubclass(value, np.dtype)


def plain_dtype(dtype: np.dtype) -> bool:
    """A dtype whose values are single items (not structured, void or a sub-array such as
    ``'(2,)f8'``, which NumPy turns into extra dimensions)."""
    return dtype.fields is None and dtype.subdtype is None and dtype.kind != "V"


def check_dtype(dtype: Any, where: str) -> np.dtype:
    """Reject dtypes kiln cannot compute with (object, strings, float16, longdouble)."""
    dt = np.dtype(dtype)
    if not supported_dtype(dt) and not dt.isnative and supported_dtype(dt.newbyteorder("=")):
        raise UnsupportedDtype(
            f"{where}: dtype {dt} is byte-swapped (big-endian data); kiln computes in the "
            f"machine's byte order: convert with .astype({dt.newbyteorder('=').name!r}) first")
    if not supported_dtype(dt):
        raise UnsupportedDtype(
            f"{where}: dtype {dt} is not supported by kiln (it handles bool, integers, float32, "
            f"float64, complex64 and complex128); convert with .astype(np.float64) first or "
            f"call the function without kiln")
    return dt


# -- fake arrays --------------------------------------------------------------------------

def fake(meta: TensorMeta) -> np.ndarray:
    """A read-only zero-stride array with ``meta``'s shape and dtype, using one element."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, meta.dtype), meta.shape,
                                           (0,) * len(meta.shape), writeable=False)


def to_fake(value: Any) -> Any:
    """``value`` with every TensorMeta inside (nested tuples/lists/slices) made a fake."""
    return map_leaves(value, lambda v: fake(v) if isinstance(v, TensorMeta) else v)


def from_result(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, tuple):
        return tuple(from_result(v) for v in value)
    return TensorMeta(np.shape(value), np.asarray(value).dtype if not hasattr(value, "dtype") else value.dtype)


def on_stand_ins(impl: Callable, *args: Any, **kwargs: Any) -> Any:
    """``impl(*args, **kwargs)`` run on stand-in values to read what NumPy would give
    (a result's shape, dtype, type or layout), silently: NumPy's warnings there
    ("Mean of empty slice", "invalid value encountered in divide") are about the stand-ins,
    not the user's call, which gives its own when it runs."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return impl(*args, **kwargs)


def fake_run_meta(op: Any, inputs: tuple, params: dict) -> Any:
    """The generic rule: run the kernel on fake arrays and read what comes out."""
    return from_result(on_stand_ins(op.impl, *to_fake(inputs), **params))


def infer_meta(op: Any, inputs: tuple, params: dict) -> Any:
    """Shape and dtype of ``op(*inputs, **params)`` where arrays are :class:`TensorMeta`."""
    params = op.bind_params(params)
    if op.meta is not None:
        return op.meta(*inputs, **params)
    return fake_run_meta(op, inputs, params)


# -- helpers for rules and normalizers ----------------------------------------------------

def ndim_of(value: Any) -> int:
    nd = getattr(value, "ndim", None)
    return nd if nd is not None else np.ndim(value)


def count_operand(n: Any, ddof: int | None = None) -> Any:
    """A reduction's element count as the divisor of its derivative: a float (at least
    1), or, when the count is a dynamic size (a backward written with symbolic sizes,
    kiln/ir/graph.py SizeProduct), the size itself, which becomes a graph input.
    With ``ddof`` (var, std): ``n - ddof`` as a float, NaN where it is not positive
    (NumPy's var is nan/inf there; so is the gradient)."""
    if ddof is None:
        return float(max(n, 1)) if isinstance(n, int) else n
    if isinstance(n, int):
        return float(n - ddof) if n - ddof > 0 else math.nan
    return n.less(ddof)


def shape_of(value: Any) -> tuple:
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else np.shape(value)


def dtype_token(value: Any) -> Any:
    """What ``ufunc.resolve_dtypes`` wants: a dtype (strong) or ``int``/``float`` (weak)."""
    if isinstance(value, bool):
        return np.dtype(bool)
    if isinstance(value, (int, float, complex)):
        return type(value)
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return np.asarray(value).dtype
    return np.dtype(dtype)


def normalize_axis(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """``axis`` (None, int, tuple, negative) as a sorted tuple of non-negative ints.

    Out-of-range axes raise NumPy's own ``AxisError`` with NumPy's message.
    """
    if axis is None:
        return None
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        try:
            a = operator.index(a)
        except TypeError:
            raise TypeError(f"'{type(a).__name__}' object cannot be interpreted as an integer") from None
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        a = a % ndim if ndim else 0
        if a in out:
            raise ValueError("duplicate value in 'axis'")
        out.append(a)
    return tuple(sorted(out))


def normalize_one_axis(axis: Any, ndim: int) -> int:
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(a, ndim)
    return a % ndim


def broadcast_shapes(*shapes: tuple) -> tuple:
    """NumPy's broadcast shape; shapes may hold symbolic sizes (kiln/ir/sizes.py), which
    are never 1 and match only a size that is the same expression (else ValueError, as
    NumPy's for sizes that differ)."""
    if all(type(n) is int for s in shapes for n in s):
        return np.broadcast_shapes(*shapes)
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        dim: Any = 1
        for s in shapes:
            j = len(s) - nd + i
            if j < 0 or (type(s[j]) is int and s[j] == 1):
                continue
            if type(dim) is int and dim == 1:
                dim = s[j]
            elif not dim == s[j]:
                raise ValueError("shape mismatch: objects cannot be broadcast to a single shape")
        out.append(dim)
    return tuple(out)


def reject_where(where: Any, name: str) -> None:
    if where is not True and where is not np._NoValue:
        raise UnsupportedArgument(
            f"{name}(..., where=...) is not supported by kiln; use np.where(mask, {name}(...), "
            f"fallback) instead, or call the function without kiln")


def reject(name: str, arg: str, value: Any, hint: str) -> None:
    raise UnsupportedArgument(f"{name}: argument {arg}={value!r} is not supported by kiln; {hint}")


# NumPy's comparison ufuncs: a Python int meets an integer operand without conversion.
COMPARISONS = (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal)


def python_int_overflow(ufunc: np.ufunc) -> Callable[..., bool]:
    """NEP 50: a Python int meeting an integer loop that cannot hold it raises NumPy's
    OverflowError when the op runs (``x_uint8 + -1``), so such a call stays in the graph
    even when nothing uses its value. A constant is tried on a zero of the loop's dtypes;
    a run-time int may not fit on a later call. A comparison never raises where every
    other operand is an integer array or scalar: NumPy 2 compares a Python int of any size
    with integers exactly (``np.arange(3, dtype=np.uint8) < 2 ** 70``); a bool operand
    (``2 ** 63``) or a float one (``10 ** 400``: too large for a float) may raise."""
    compares = ufunc in COMPARISONS

    def raises_for(*args: Any) -> bool:
        # graph values (nodes) carry their example in .val: a Python int for a run-time int
        metas = [a.val if hasattr(a, "graph") else a for a in args]
        if not any(type(m) is int for m in metas):
            return False
        others = [m for m in metas if type(m) is not int]
        if compares and others and all(np.dtype(dtype_token(m)).kind in "iu" for m in others):
            return False
        try:
            loop = ufunc.resolve_dtypes(tuple(dtype_token(m) for m in metas) + (None,) * ufunc.nout)
        except (TypeError, ValueError):
            return True
        if not any(type(m) is int and np.dtype(loop[i]).kind in "iu" for i, m in enumerate(metas)):
            return False
        if any(type(m) is int and a is not m for a, m in zip(args, metas)):
            return True   # a run-time int
        # (each operand in its own dtype, not the loop's: a bool meets 2 ** 63 in an int64
        # comparison loop, which NumPy's special case for Python ints lets pass, but
        # converting 2 ** 63 for a bool operand raises)
        sample = tuple(m if isinstance(m, (int, float, complex)) else np.zeros((), dtype_token(m)) for m in metas)
        try:
            with np.errstate(all="ignore"):
                ufunc(*sample)
        except OverflowError:
            return True
        except Exception:   # noqa: BLE001 - another error is the shape rule's, found at capture
            pass
        return False
    return raises_for


def ufunc_may_raise(*args: Any) -> bool:
    """Whether an unused call of a ufunc named by a parameter (scalar math, a ufunc with
    ``where=``: the ufunc is not known here) must still run, conservatively: a Python int
    operand, which NumPy converts to the loop's dtype (``np.uint64(3) * 2 ** 70``,
    ``np.multiply(x_uint32, -3, out=o, where=m)``: OverflowError), or two integer operands
    (``np.int64(2) ** np.int64(-1)``: ValueError)."""
    metas = [a.val if hasattr(a, "graph") else a for a in args]
    return any(type(m) is int for m in metas) or len(metas) == 2 and \
        all(np.dtype(dtype_token(m)).kind in "iub" for m in metas if type(m) is not bool)


def fill_may_raise(floats: bool) -> Callable[..., bool]:
    """``raises_for(x, fill_value)`` of a fill into x's dtype, kept when unused where NumPy
    may raise: a Python int out of an integer dtype's range (or known only at run time:
    OverflowError), and with ``floats`` (``x.fill``, which converts with ``int()``) any
    float into an integer dtype (NaN, 1e300) and any complex into a real one (``float()``:
    TypeError)."""
    def raises_for(x: Any, fill_value: Any) -> bool:
        meta, value = (a.val if hasattr(a, "graph") else a for a in (x, fill_value))
        dtype = np.dtype(dtype_token(meta))
        if floats and dtype.kind in "iuf" and type(value) is not bool and \
                np.dtype(dtype_token(value)).kind == "c":
            return True
        if dtype.kind not in "iu":
            return False
        if type(value) is int:
            info = np.iinfo(dtype)
            return fill_value is not value or not info.min <= value <= info.max
        return floats and type(value) is not bool and np.dtype(dtype_token(value)).kind == "f"
    return raises_for


def integer_power_raises(ufunc: np.ufunc) -> Callable[..., bool]:
    """``np.power`` over an integer loop raises NumPy's ValueError ("Integers to negative
    integer powers are not allowed.") for a negative exponent, so such a call stays in the
    graph even when nothing uses its value (``v = x ** -1``): a constant exponent with a
    negative element, or a run-time exponent of a signed kind. Python ints that overflow
    the loop raise too (:func:`python_int_overflow`)."""
    overflow = python_int_overflow(ufunc)

    def raises_for(*args: Any) -> bool:
        if overflow(*args):
            return True
        metas = [a.val if hasattr(a, "graph") else a for a in args]
        try:
            loop = ufunc.resolve_dtypes(tuple(dtype_token(m) for m in metas) + (None,) * ufunc.nout)
        except (TypeError, ValueError):
            return True
        if np.dtype(loop[1]).kind not in "iu":
            return False
        y = args[1]
        if hasattr(y, "graph"):          # known at run time only
            return np.dtype(dtype_token(metas[1])).kind not in "ub"
        return bool((np.asarray(y) < 0).any())
    return raises_for


def pointwise_meta_for(ufunc: np.ufunc):
    """Shape/dtype rule of a ufunc: broadcasting plus NumPy's own type resolution (NEP 50)."""

    def rule(*inputs: Any, **params: Any) -> TensorMeta:
        shapes = [shape_of(v) for v in inputs]
        try:
            # (symbolic sizes too: a ufunc lowered as NumPy's call on np.unique's counts,
            # ``counts ** 3 - counts``, keeps their size, not a new one read after it)
            shape = broadcast_shapes(*shapes)
        except ValueError:
            # Let NumPy raise its own message ("operands could not be broadcast together ...").
            ufunc(*to_fake(tuple(v if isinstance(v, TensorMeta) else v for v in inputs)))
            raise
        tokens = tuple(dtype_token(v) for v in inputs)
        try:
            dtypes = ufunc.resolve_dtypes(tokens + (None,) * ufunc.nout)
            dtype = dtypes[ufunc.nin]
        except TypeError:
            # No loop for these dtypes, or weak-scalar corner cases: NumPy decides (and raises).
            sample = tuple(np.zeros((), v.dtype) if isinstance(v, TensorMeta) else v for v in inputs)
            with np.errstate(all="ignore"):  # 0 / 0 on samples: no warning the user would see
                dtype = np.asarray(ufunc(*sample)).dtype
        return TensorMeta(shape, dtype)

    return rule


def below_of_inputs(*arrays: Any, **params: Any) -> int | None:
    """``Op.values_below`` of an op whose values are its inputs' own (a reshape, a view,
    a join): the largest bound of theirs, when every input has one (capture sets
    ``below`` on the inputs it knows: np.bincount(np.column_stack([np.arange(n - 1),
    np.arange(1, n)]).ravel(), minlength=n) has n entries before it runs)."""
    flat = [b for a in arrays for b in (a if isinstance(a, (list, tuple)) else (a,))]
    belows = [getattr(a, "below", None) for a in flat]
    return max(belows) if belows and None not in belows else None


def columns_array(found: tuple) -> Any:
    """The C-ordered ``(..., len(found))`` intp array whose columns NumPy's index arrays
    ``found`` are (np.nonzero's, np.unravel_index's make that one array and return views
    of its columns), or None where they are not such views (a device array, a scalar's)."""
    base = found[0].base if found and type(found[0]) is np.ndarray else None
    if type(base) is np.ndarray and base.shape == found[0].shape + (len(found),) \
            and base.dtype == np.intp and base.flags.c_contiguous:
        return base
    return None

