"""Array kinds: the types of array kiln captures as graph inputs, and what each allows.

One table, read by capture (which arrays become graph inputs, whose memory capture may
read), guards (how the type is named and checked, the device guard, whether the C fast
check may read the array's fields), the cost model and the runtime (which device a call
runs on, what allocates there):

======  ==============  ========  =====================  ============================
kind    type            device    capture reads          cache-hit guard
======  ==============  ========  =====================  ============================
numpy   numpy.ndarray   cpu       memory and metadata    C (fastcheck.c) or Python
cupy    cupy.ndarray    cuda:id   metadata only          Python, plus ``x.device.id``
======  ==============  ========  =====================  ============================

Capture never reads a device array's memory: where kiln would look at an argument's
values (speculating a dtype from the data, ``flags.writeable``), a device array takes the
value-free path, and the user's own code that reads values (``.item()``, ``float(x)``,
``np.asarray``) runs as Python at a graph break, where CuPy raises or copies exactly as it
would without kiln. Nothing here imports CuPy: its array type is recognised by its module
and name, so a machine without CuPy pays nothing.

    >>> import numpy as np
    >>> kind_of(np.zeros(3)).name, kind_of(3.0)
    ('numpy', None)
"""
from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class ArrayKind:
    name: str            # "numpy", "cupy"
    module: str          # the package defining the type (its top-level module)
    type_name: str       # how guard text names the type: "np.ndarray", "cupy.ndarray"
    device: str          # "cpu", or "cuda" (then each array has ``.device.id``)
    host_memory: bool    # capture may read the array's values (False: metadata only)
    c_guard: bool        # fastcheck.c may read its fields (NumPy's PyArrayObject layout)
    writeable_flag: bool  # has ``.flags.writeable`` (a CuPy array is always writeable)

    def device_id(self, value: Any) -> int | None:
        """The GPU an array of this kind lives on, or None on the host."""
        return value.device.id if self.device == "cuda" else None

    def namespace(self) -> Any:
        """The NumPy-like module that allocates arrays of this kind (numpy, cupy)."""
        module = sys.modules.get(self.module)
        return module if module is not None else importlib.import_module(self.module)

    def to_device(self, value: np.ndarray, device_id: int) -> Any:
        """A host array's copy on GPU ``device_id``, made by this kind's module (an
        explicit ``cupy.asarray`` under ``cupy.cuda.Device(device_id)``)."""
        xp = self.namespace()
        with xp.cuda.Device(device_id):
            return xp.asarray(value)


NUMPY = ArrayKind("numpy", "numpy", "np.ndarray", "cpu", host_memory=True, c_guard=True,
                  writeable_flag=True)
CUPY = ArrayKind("cupy", "cupy", "cupy.ndarray", "cuda", host_memory=False, c_guard=False,
                 writeable_flag=False)

# Known types, filled as they are first seen (CuPy's only once CuPy made an array).
_BY_TYPE: dict[type, ArrayKind] = {np.ndarray: NUMPY}
# The same for ``isinstance`` (np.ndarray alone until another kind's type is seen).
ARRAY_TYPES: tuple[type, ...] = (np.ndarray,)
_NOT_ARRAYS: set[type] = set()
# (top-level module, class name) of array types not imported up front.
_BY_NAME = {("cupy", "ndarray"): CUPY}


def kind_of_type(cls: type) -> ArrayKind | None:
    """The kind of arrays of exactly this type (not subclasses: guards check exact types)."""
    kind = _BY_TYPE.get(cls)
    if kind is not None or cls in _NOT_ARRAYS:
        return kind
    module = getattr(cls, "__module__", None) or ""
    kind = _BY_NAME.get((module.split(".")[0], getattr(cls, "__name__", "")))
    if kind is None:
        if len(_NOT_ARRAYS) < 4096:
            _NOT_ARRAYS.add(cls)
        return None
    register(cls, kind)
    return kind


def kind_of(value: Any) -> ArrayKind | None:
    """The kind of an array kiln captures as a graph input, or None for anything else."""
    return kind_of_type(type(value))


def is_device_array(value: Any) -> bool:
    kind = kind_of_type(type(value))
    return kind is not None and kind.device != "cpu"


def reads_memory(value: Any) -> bool:
    """May capture read this value's data? (False for a device array.)"""
    kind = kind_of_type(type(value))
    return kind is None or kind.host_memory


def device_of(values: Any) -> tuple[ArrayKind, int] | None:
    """The kind and GPU of the first device array among ``values``, or None (host only)."""
    for value in values:
        kind = kind_of_type(type(value))
        if kind is not None and kind.device != "cpu":
            return kind, kind.device_id(value)
    return None


def placement(values: Any) -> Callable[[np.ndarray], Any] | None:
    """Where a program run on ``values`` keeps its constant arrays: None on the host, else
    the copy to the device arrays' GPU, which a backend makes once per constant (CuPy
    refuses a NumPy operand, and kiln never copies silently per call).

        >>> placement([np.zeros(3), 1.0]) is None
        True
    """
    found = device_of(values)
    if found is None:
        return None
    kind, device_id = found
    return lambda value: kind.to_device(value, device_id)


def register(cls: type, kind: ArrayKind) -> None:
    """Capture ``cls`` arrays (exactly that type) as arrays of ``kind``: another device
    array library's type, or a test's stand-in for one (tests/capture/device_double.py)."""
    global ARRAY_TYPES
    _NOT_ARRAYS.discard(cls)
    _BY_TYPE[cls] = kind
    if cls not in ARRAY_TYPES:
        ARRAY_TYPES = ARRAY_TYPES + (cls,)
