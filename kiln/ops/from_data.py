"""Arrays made from data: ``np.asarray``, ``np.asanyarray``, ``np.array`` and
``np.ndarray(shape)``, composite spellings (see kiln/ops/numeric.py). A list of arrays is
a ``stack``; Python numbers are NumPy's own constant array, or, where one of them is a
float that changes from call to call (``np.array([dx, dy])`` of float arguments), a stack
of ``full``s made in the graph, so new values do not recompile.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .meta import ndim_of, reject, shape_of
from .numeric import _dtype, _is_array
from .registry import Composite, F, N, is_runtime_number, spell_composite


# ---- array construction ------------------------------------------------------------------

def _as_array(a: Any, dtype: Any = None, copy: bool | None = None, ndmin: int = 0,
              order: str | None = None) -> Any:
    if dtype is not None and (np.dtype(dtype).kind == "O" or np.dtype(dtype).metadata is not None):
        # NumPy keeps the objects themselves (a float64 subclass stays one); kiln's values
        # are numbers. A dtype with metadata equals the plain one (guards compare by ==),
        # but NumPy hands back a new view carrying it
        reject("numpy.array", "dtype", dtype, "it runs as NumPy")
    if isinstance(a, (list, tuple)):
        if _nesting(a) > _MAXDIMS:
            # NumPy's ValueError ("... would exceed the maximum number of dimensions")
            reject("numpy.array", "object", "<a sequence nested too deep>", "it runs as NumPy")
        if any(_is_array(v) or isinstance(v, (list, tuple)) for v in a):
            if dtype is not None and np.dtype(dtype).kind == "i" and any(
                    _numpy_scalar(v) and not np.can_cast(_dtype(v), dtype) for v in a):
                # NumPy converts a NumPy scalar in a list to a signed integer type as a
                # Python number, range-checked (np.array([np.int64(300)], dtype=np.int8):
                # OverflowError; uint8 wraps): the values decide
                reject("numpy.array", "dtype", dtype, "it runs as NumPy")
            # stack reads its items and makes a new array: neither they nor it are copied
            # (numbers among them are converted to dtype as NumPy converts them)
            # (each array converted to dtype on its own, as NumPy does: through the stack's
            # common dtype an int64 2**60 + 2**36 + 1 beside a float into float32 was
            # rounded twice, to 2**60 where NumPy's one rounding gives 2**60 + 2**37)
            a = N.stack([_as_array(v, dtype=dtype, copy=False) if isinstance(v, (list, tuple))
                         or not _is_array(v) or dtype is not None or is_runtime_number(v) else v
                         for v in a])
        elif runtime_numbers(a) is not None:
            # np.array([dx, dy]) of float arguments, np.array(flags) of bools: made in the
            # graph, so new values do not recompile (NumPy's dtype: float64 with ints
            # among the floats converted, or bool)
            kind = None if dtype is None else np.dtype(dtype).kind
            if kind is not None and kind not in "fcb" and not (kind in "iu" and runtime_numbers(a) == np.bool_):
                # NumPy converts each float as int() does, in range or OverflowError
                # (ValueError for NaN); a cast would wrap: NumPy checks the values. Into
                # 'S' or 'U' it writes str(x) (np.array([1.2], dtype="S") is S3; a cast of
                # the float64 array is S32)
                reject("numpy.array", "dtype", dtype, "it runs as NumPy")
            a = N.stack([N.full((), v, dtype=runtime_numbers(a)) for v in a])
        else:  # constants (and run-time ints, specialized): NumPy makes the array
            a = _constant_array(a, dtype)
        copy = False
    elif not _is_array(a) and runtime_numbers([a]) is not None and (dtype is None or np.dtype(dtype).kind in "fc"):
        a = N.full((), a, dtype=runtime_numbers([a]))   # ``np.asarray(dt)`` of a float argument
    elif not _is_array(a):
        a = _constant_array(a, dtype)
    elif _numpy_scalar(a):
        # a NumPy scalar becomes a 0-d array (a new one); one that changes from call to
        # call is the graph's input (``out[k] = S, E`` of np.float64 arguments), not a constant
        a = N.full((), a, dtype=a.dtype) if is_runtime_number(a) else N.copy(a)
        copy = False
    if dtype is not None and (np.dtype(dtype) != _dtype(a) or copy and np.dtype(dtype).char != _dtype(a).char):
        a = N.method("astype", a, dtype)   # (the char: 'c' equals 'S1', kiln refuses it)
    elif dtype is not None and np.dtype(dtype).char != _dtype(a).char:
        # an equal dtype of another name (np.longlong for int64): NumPy's view of a, not a copy
        a = N.method("view", a, np.dtype(dtype))
    elif copy:
        a = N.copy(a, order=order if order in ("A", "C") else "K")
    nd = ndim_of(a)
    if ndmin > nd:
        a = N.reshape(a, (1,) * (ndmin - nd) + tuple(shape_of(a)))
    if order in ("C", "F") and ndim_of(a) > 0:
        # np.asarray(x, order="C") of a Fortran-ordered or strided x is a C-ordered copy
        # (and x itself when already so): not x, whose writes the caller would see
        a = N.ascontiguousarray(a) if order == "C" else N.asfortranarray(a)
    return a


def _constant_array(a: Any, dtype: Any) -> np.ndarray:
    """NumPy's array of Python numbers: converted to ``dtype`` item by item, so a number out
    of its range raises here, at capture (``np.array(128, dtype=np.int8)``: OverflowError),
    and the call runs as NumPy, which raises it (a cast of the int64 array would wrap). A
    conversion that warns (70000 to float16: overflow) is left to the graph's cast, which
    gives NumPy's warning at every call."""
    if dtype is None:
        return np.array(a)
    with warnings.catch_warnings(), np.errstate(all="raise"):   # (capture may ignore them)
        warnings.simplefilter("error")
        try:
            return np.array(a, dtype=dtype)
        except (Warning, FloatingPointError):
            return np.array(a)


_MAXDIMS = 64   # (NumPy's NPY_MAXDIMS since 2.0)


def _nesting(a: Any) -> int:
    """The dimensions a nested sequence makes, along its first items (lists, then an
    array's own)."""
    depth = 0
    while isinstance(a, (list, tuple)) and len(a) > 0:
        depth, a = depth + 1, a[0]
    return depth + (1 if isinstance(a, (list, tuple)) else ndim_of(a) if _is_array(a) else 0)


def _numpy_scalar(a: Any) -> bool:
    return isinstance(a, np.generic) or getattr(a, "numpy_scalar", False)


_NUMPY_FLOATS = {np.float16, np.float32, np.float64}


def numbers_dtype(items: Any) -> Any:
    """The dtype of NumPy's array of the flat list of numbers ``items`` where kiln can
    make it in the graph from run-time ones: float64 (a Python float among them, no
    bool), the NumPy floats' own (``[S, E]`` of np.float64 arguments: float64; of
    float32 ones alone, float32; beside a Python number, float64) or bool (bools alone);
    None for others (a list of ints, whose next values may be past int64, where NumPy
    makes another dtype)."""
    if not isinstance(items, (list, tuple)):
        return None
    kinds = {type(v) for v in items}
    if kinds & ({float} | _NUMPY_FLOATS) and kinds <= {int, float} | _NUMPY_FLOATS:
        numpy_floats = kinds & _NUMPY_FLOATS
        return np.result_type(*numpy_floats) if kinds == numpy_floats else np.dtype(np.float64)
    return np.dtype(np.bool_) if kinds == {bool} else None


def runtime_numbers(items: Any) -> Any:
    """:func:`numbers_dtype`, where one of the numbers changes from call to call (else
    None: NumPy's constant array is made once)."""
    return numbers_dtype(items) if any(map(is_runtime_number, items)) else None


def _numbers_only(a: Any) -> bool:
    """Is ``a`` a (nested) list or tuple of Python numbers alone?"""
    return isinstance(a, (list, tuple)) and all(
        _numbers_only(v) if isinstance(v, (list, tuple)) else type(v) in (bool, int, float) for v in a)


def _order_ok(name: str, order: Any) -> None:
    if order not in (None, "K", "A", "C", "F"):
        reject(name, "order", order, "pass one of 'K', 'A', 'C', 'F'")


def _copy_false_ok(name: str, a: Any, dtype: Any, order: Any, copy: Any) -> None:
    """``copy=False`` where NumPy may have to copy (another dtype, an order it may not
    have, not an array at all) raises in NumPy when it would: that call runs as Python."""
    if copy is False and (not _is_array(a) or order in ("C", "F") or _numpy_scalar(a)
                          or dtype is not None and np.dtype(dtype) != _dtype(a)):
        reject(name, "copy", copy, "use copy=None (a copy only when needed)")


def _copy_mode(name: str, copy: Any) -> bool | None:
    """``copy=`` as NumPy reads it: None, np._CopyMode, or the truth of a number
    (``copy=0`` and ``copy=np.False_`` are False: never a copy). A string is NumPy's
    ValueError and any other object is left to NumPy: such a call runs as NumPy."""
    if copy is None or isinstance(copy, np._CopyMode):
        return {np._CopyMode.ALWAYS: True, np._CopyMode.NEVER: False}.get(copy)
    if not isinstance(copy, (bool, int, float, np.bool_, np.number)):
        reject(name, "copy", copy, "pass True, False or None")
    return bool(copy)


def _asarray_normalize(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    _order_ok("numpy.asarray", order)
    copy = _copy_mode("numpy.asarray", copy)
    _copy_false_ok("numpy.asarray", a, dtype, order, copy)
    if like is not None:
        reject("numpy.asarray", "like", like, "drop like=")
    if device not in (None, "cpu"):
        reject("numpy.asarray", "device", device, "it runs as NumPy, which raises")
    if order == "F" and copy:
        return Composite(_as_fortran_array, (a,), {"dtype": dtype, "copy": False}, passes_scalars=True,
                         in_order=_numbers_only(a))
    return Composite(_as_array, (a,), {"dtype": dtype, "copy": bool(copy), "order": order},
                     passes_scalars=True, in_order=_numbers_only(a))


def _copy_fortran(x: Any) -> Any:
    """ndarray.copy(order='F'): a Fortran-ordered copy owning its memory, as NumPy's (not a
    transposed view of a copy of x.T: ``.base``, ``.flags.owndata``)."""
    return F.copy(x, order="F")


def _as_fortran_array(a: Any, **params: Any) -> Any:
    """np.array(a, order='F') (a copy): ndarray.copy(order='F')'s."""
    return _copy_fortran(_as_array(a, **params))


def _array_normalize(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    _order_ok("numpy.array", order)
    copy = _copy_mode("numpy.array", copy)
    _copy_false_ok("numpy.array", object, dtype, order, copy)
    copies = copy is not False and copy is not None
    fortran = order == "F" and copies
    if like is not None:
        reject("numpy.array", "like", like, "drop like=")
    params = {"dtype": dtype, "copy": not fortran and copies, "ndmin": int(ndmin), "order": order}
    return Composite(_as_fortran_array if fortran else _as_array, (object,), params,
                     passes_scalars=int(ndmin) == 0,   # (ndmin: a shape of 1s)
                     in_order=int(ndmin) == 0 and _numbers_only(object))


spell_composite(np.asarray, ("stack", "astype", "ascontiguousarray", "asfortranarray", "copy", "transpose"),
                _asarray_normalize, "numpy.asarray", builds_array=True)
spell_composite(np.asanyarray, ("stack", "astype", "ascontiguousarray", "asfortranarray", "copy", "transpose"),
                _asarray_normalize, "numpy.asanyarray", builds_array=True)
spell_composite(np.array, ("stack", "astype", "copy", "reshape", "ascontiguousarray", "asfortranarray"),
                _array_normalize, "numpy.array", builds_array=True)


_REQUIRE_FLAGS = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
                  "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W",
                  "O": "O", "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}


def _require_normalize(a, dtype=None, requirements=None, *, like=None):
    """``np.require``: without requirements NumPy's ``asanyarray(a, dtype=dtype)``; with
    'C' or 'F' its ``array(a, dtype, order, copy=None)`` (obspy's classic_sta_lta:
    ``np.require(sta, dtype=np.float64)``). Flags the data decides (writeable, owndata,
    aligned), 'E' and both orders run as NumPy."""
    if like is not None:
        reject("numpy.require", "like", like, "drop like=")
    try:
        flags = {_REQUIRE_FLAGS[x.upper()] for x in (requirements or ())}
    except (KeyError, AttributeError, TypeError):
        reject("numpy.require", "requirements", requirements, "it runs as NumPy, which raises")
    if flags - {"C", "F"} or flags == {"C", "F"}:
        reject("numpy.require", "requirements", requirements, "it runs as NumPy")
    order = flags.pop() if flags else None
    return Composite(_as_array, (a,), {"dtype": dtype, "copy": False, "order": order},
                     passes_scalars=True, in_order=_numbers_only(a))


spell_composite(np.require, ("stack", "astype", "ascontiguousarray", "asfortranarray", "copy", "transpose"),
                _require_normalize, "numpy.require", builds_array=True)


def _ndarray_new(shape: Any, dtype: Any = float) -> Any:
    return N.empty(shape, dtype)


def _ndarray_normalize(shape, dtype=float, buffer=None, offset=0, strides=None, order=None):
    if buffer is not None or strides is not None or offset:
        reject("numpy.ndarray", "buffer/strides/offset", buffer, "use np.frombuffer outside the "
               "compiled function, or np.empty(shape, dtype)")
    _order_ok("numpy.ndarray", order)
    return Composite(_ndarray_new, (), {"shape": shape, "dtype": dtype})


spell_composite(np.ndarray, ("empty",), _ndarray_normalize, "numpy.ndarray")


# The longest bytes object np.frombuffer takes as a graph constant
FROMBUFFER_BYTES = 1 << 16


def _frombuffer_normalize(buffer, dtype=float, count=-1, offset=0, *, like=None):
    """``np.frombuffer`` of a ``bytes`` object (guarded by value, as every bytes constant
    is): NumPy's read-only view of it, computed while capturing, a constant of the graph
    (as grids.py ``_constant``'s; NumPy's errors for a bad size, count or offset come
    from there). A bytearray, memoryview or array shares its memory with the result, whose
    writes (and the buffer's) each other sees, and a dtype kiln computes in no kernel
    (structured, object, strings, another byte order) is NumPy's own: they run as NumPy."""
    if like is not None:
        reject("numpy.frombuffer", "like", like, "drop like=")
    if type(buffer) is not bytes:
        reject("numpy.frombuffer", "buffer", f"<a {type(buffer).__name__}>",
               "it shares the buffer's memory: it runs as NumPy (bytes are captured)")
    if len(buffer) > FROMBUFFER_BYTES:
        # (a constant copied on every call, where NumPy's view copies nothing)
        reject("numpy.frombuffer", "buffer", f"<{len(buffer)} bytes>", "it runs as NumPy, a view")
    dt = np.dtype(dtype)
    if dt.kind not in "biufc" or not dt.isnative or dt.names is not None or dt.subdtype is not None:
        reject("numpy.frombuffer", "dtype", dtype, "it runs as NumPy")
    return Composite(lambda: np.frombuffer(buffer, dtype=dt, count=count, offset=offset), ())


spell_composite(np.frombuffer, (), _frombuffer_normalize, "numpy.frombuffer")
