"""Where a call's arrays live: device follows data.

NumPy arrays are on the host, CuPy arrays on their GPU. kiln never moves data between
them: a call mixing the two raises the ``TypeError`` CuPy raises for such a mix, and
``backend="triton"`` on NumPy arrays is a ``KilnError`` unless Triton's interpreter was
asked for (``KILN_TRITON_INTERPRET=1``, tests). Nothing here imports CuPy: an array is
recognised by its type's module, so machines without CuPy pay nothing.

    >>> import numpy as np
    >>> where([np.zeros(3), 2.0])
    ('cpu', None)
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ..errors import KilnError


def is_cupy_array(value: Any) -> bool:
    cls = type(value)
    return cls.__name__ == "ndarray" and cls.__module__.split(".")[0] == "cupy"


def where(values: Iterable[Any]) -> tuple[str, int | None]:
    """``("cpu", None)`` for host arrays (or no arrays), ``("cuda", id)`` for CuPy arrays."""
    host = gpu = None
    devices: set[int] = set()
    for value in values:
        if isinstance(value, np.ndarray):
            host = value
        elif is_cupy_array(value):
            gpu = value
            devices.add(value.device.id)
    if host is not None and gpu is not None:
        # CuPy's own words for a NumPy array in a CuPy operation.
        raise TypeError(f"Unsupported type {type(host)}: kiln does not copy NumPy arrays to the "
                        f"GPU; convert with cupy.asarray(...) (or cupy.asnumpy(...) the other way)")
    if len(devices) > 1:
        raise ValueError(f"arrays are on GPUs {sorted(devices)}; all arrays of one call must be on "
                         f"one device (move them with cupy.asarray under cupy.cuda.Device(i))")
    if gpu is not None:
        return "cuda", devices.pop()
    return "cpu", None


def require_triton_device(values: Iterable[Any], interpret: bool) -> tuple[str, int | None]:
    """The device a Triton graph runs on, or a KilnError saying why it cannot run."""
    device = where(values)
    if device[0] == "cpu" and not interpret:
        raise KilnError(
            "backend='triton' runs Triton kernels on CuPy arrays on a GPU, and this call passed "
            "NumPy arrays; pass cupy arrays (cupy.asarray(x)), use backend='cpp' for NumPy "
            "arrays, or set KILN_TRITON_INTERPRET=1 to run the kernels through Triton's "
            "interpreter on NumPy arrays (slow: for tests)")
    return device
