"""Where a call's arrays live: device follows data.

NumPy arrays are on the host, CuPy arrays on their GPU. kiln never moves data between
them: a call mixing the two raises the ``TypeError`` CuPy raises for such a mix, and
``backend="triton"`` on NumPy arrays is a ``KilnError`` unless Triton's interpreter was
asked for (``KILN_TRITON_INTERPRET=1``, tests). The array kinds and their devices are
kiln/array_kinds.py's table; nothing here imports CuPy.

    >>> import numpy as np
    >>> where([np.zeros(3), 2.0])
    ('cpu', None)
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ..array_kinds import kind_of
from ..errors import KilnError


def where(values: Iterable[Any]) -> tuple[str, int | None]:
    """``("cpu", None)`` for host arrays (or no arrays), ``("cuda", id)`` for CuPy arrays."""
    host = gpu = None
    devices: set[int] = set()
    for value in values:
        kind = kind_of(value)
        if kind is None:
            if isinstance(value, np.ndarray):   # a subclass (np.matrix, a memmap)
                host = value
        elif kind.device == "cpu":
            host = value
        else:
            gpu = value
            devices.add(kind.device_id(value))
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
