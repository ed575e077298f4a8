"""Python and NumPy scalars meeting C loops: NEP 50's rules for weak Python ints (range
checks, the comparison loops) and the values standing for missing clip bounds."""
from __future__ import annotations

from typing import Any

import numpy as np

from .loop_ir import Scalar


def token(value: Any) -> Any:
    if isinstance(value, Scalar) and value.weak:
        return getattr(value, "pytype", None) or (bool if value.dtype.kind == "b" else
                                                   int if value.dtype.kind in "iu" else
                                                   complex if value.dtype.kind == "c" else float)
    return np.dtype(value.dtype)


def python_int_operands(values: list, in_dts: list, loop_out: Any) -> list | None:
    """NEP 50 for Python ints meeting an integer loop; edits ``in_dts`` in place.

    Comparisons take any Python int (NumPy compares exactly): they run in int64. Other
    loops raise NumPy's OverflowError when the value does not fit the loop dtype: a
    constant that does not fit makes the node an extern (NumPy raises), a runtime value
    is returned with its dtype so the wrapper checks it on each call. None: extern.
    """
    checks = []
    for i, v in enumerate(values):
        if not (isinstance(v, Scalar) and v.weak and token(v) is int and np.dtype(in_dts[i]).kind in "iu"):
            continue
        if np.dtype(loop_out) == np.bool_:
            if any(np.dtype(d) == np.uint64 for d in in_dts):
                return None
            in_dts[:] = [np.dtype(np.int64) if np.dtype(d).kind in "iu" else d for d in in_dts]
            dt = np.dtype(np.int64)
        else:
            dt = np.dtype(in_dts[i])
            if dt == np.uint64 and v.value is None:
                return None  # kernel scalars are int64: NumPy takes up to 2**64 - 1
        if v.value is not None:
            info = np.iinfo(dt)
            if not info.min <= v.value <= info.max:
                return None
        else:
            checks.append((v, dt))
    return checks


def narrowed_floats(values: list, in_dts: list, weak_only: bool = True) -> list:
    """``(scalar, dtype)`` for each runtime Python float a loop takes in a
    narrower float dtype (NEP 50: ``float32_array + x``). NumPy converts it once per call,
    and a value past that dtype's largest warns "overflow encountered in cast"; the kernel
    converts it at every point, where the flag would read as its op's own (the wrapper
    checks the value on each call instead: :func:`cast_limit`). ``weak_only=False``: NumPy
    scalars too (a write, ``x32[:] = np.float64(v)``, converts them as well)."""
    def part(dtype: Any) -> int:   # a float's size, a complex's part's
        return np.dtype(dtype).itemsize // (2 if np.dtype(dtype).kind == "c" else 1)
    return [(v, np.dtype(dt)) for v, dt in zip(values, in_dts)
            if isinstance(v, Scalar) and (v.weak or not weak_only) and v.arg and v.dtype.kind == "f"
            and np.dtype(dt).kind in "fc" and part(dt) < part(v.dtype)]


def overflowing_constants(values: list, in_dts: list) -> list:
    """The compile-time Python floats a loop takes in a narrower float dtype whose
    conversion overflows (``float32_array + 1e300``): NumPy warns "overflow encountered in
    cast" on every call (the wrapper says it: ``low.constant_casts``), and computes with
    the infinity the C literal is."""
    def part(dtype: Any) -> np.dtype:
        dt = np.dtype(dtype)
        return np.dtype(dt.char.lower()) if dt.kind == "c" else dt
    return [(v, np.dtype(dt)) for v, dt in zip(values, in_dts)
            if isinstance(v, Scalar) and v.weak and not v.arg and type(v.value) is float
            and np.dtype(dt).kind in "fc" and part(dt).itemsize < 8
            and cast_limit(dt) <= abs(v.value) <= float(np.finfo(np.float64).max)]


def cast_limit(dtype: Any) -> float:
    """The least Python float whose conversion to ``dtype`` (its real part's, for a
    complex one) overflows: the largest value plus half its ulp, which rounds to infinity.

    >>> cast_limit(np.float32), cast_limit(np.float16)
    (3.4028235677973366e+38, 65520.0)
    """
    dt = np.dtype(dtype)
    part = np.dtype(dt.char.lower()) if dt.kind == "c" else dt
    largest = np.finfo(part).max
    return float(largest) + (float(largest) - float(np.nextafter(largest, part.type(0)))) / 2


def fits(v: Any, dtype: Any) -> bool:
    """A weak Python scalar the C code can take in ``dtype`` as is: a constant in range
    (a runtime int could be anything; a float is not an int loop's operand)."""
    if v.value is None or not isinstance(v.value, (int, bool)) or isinstance(v.value, bool):
        return isinstance(v.value, bool)
    info = np.iinfo(dtype)
    return info.min <= v.value <= info.max


def unbounded(name: str, dtype: Any) -> Any:
    """The value standing for a missing clip bound ``name`` ('lo' or 'hi') in ``dtype``."""
    dt = np.dtype(dtype)
    low = name == "lo"
    if dt.kind == "f":
        return -np.inf if low else np.inf
    if dt.kind == "b":
        return not low
    info = np.iinfo(dt)
    return info.min if low else info.max
