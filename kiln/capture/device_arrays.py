"""Capture's rules for arrays on a GPU (kiln/array_kinds.py): which type an op's result
has at run time, and which calls run as Python because CuPy would refuse them there.

Capture never asks CuPy: an array variable's ``array_type`` comes from the graph inputs it
was computed from (a CuPy argument's type), and NumPy functions are told apart by the
protocol that hands them CuPy arrays (ufuncs, ``__array_function__`` dispatchers)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import defined_in_numpy, describe_callable
from .call_inputs import flatten
from .variables.arrays import ArrayVariable


def converts_device_arrays(tx, key: Any, args: list) -> None:
    """A NumPy function that takes part in neither protocol (np.asarray, np.array: not a
    ufunc, not ``__array_function__``-dispatched) converts a device array with
    ``__array__``, which CuPy refuses: such a call on one runs as Python, and raises there."""
    if isinstance(key, (np.ufunc, type)) or hasattr(key, "_implementation") \
            or not defined_in_numpy(key):
        return

    def on_device(v: Any) -> bool:
        items = getattr(v, "item_list", None)   # a tuple or list of arrays
        if items is not None:
            return any(map(on_device, items))
        return isinstance(v, ArrayVariable) and v.array_type is not np.ndarray

    if any(map(on_device, args)):
        tx.unsupported("unsupported_call", f"{describe_callable(key)} converts its argument to a "
                       f"NumPy array, and this one is on a GPU", "it runs as Python (CuPy raises "
                       "on an implicit copy to the host); copy explicitly with cupy.asnumpy(x)")


def result_array_type(tx, text: str, arrays: list, inputs: tuple, composing: bool) -> type:
    """The run-time type of an op's array result: a device array's (cupy.ndarray) when an
    input is one, else np.ndarray. An op mixing NumPy and device arrays runs as Python,
    where CuPy raises (or, for an index, accepts the NumPy array) exactly as without kiln;
    inside a composite spelling, which CuPy runs as one function of its own, the device
    array's type wins."""
    if tx.output.device_type is None:
        return np.ndarray
    types = {a.array_type for a in arrays}
    if any(isinstance(v, np.ndarray) for v in flatten(inputs)):
        types.add(np.ndarray)
    device = [t for t in types if t is not np.ndarray]
    if not device:
        return np.ndarray
    if np.ndarray in types and not composing:
        tx.unsupported("unsupported_call", f"{text} mixes NumPy arrays with {device[0].__name__}s "
                       f"on a GPU; it runs as Python, so the array library raises (or converts) "
                       f"as it does without kiln", "make both operands arrays of one library "
                       "(cupy.asarray(a), or cupy.asnumpy(b))")
    return device[0]
