"""Running extrema: ``np.maximum.accumulate``, ``np.minimum.accumulate``,
``np.fmax.accumulate`` and ``np.fmin.accumulate`` (a drawdown's running peak, a running
minimum of a signal).

Each is a scan like cumsum (kiln/ops/reduction.py): ``lowering={"scan": combine}`` runs
one in-order loop along the axis (kiln/lowering/cpp_stages.py ``_scan_update``) that
combines exactly as NumPy's binary loop does, element by element: on ties the second
operand (the new element) wins, so ``-0.0`` then ``0.0`` gives ``0.0``; ``maximum`` and
``minimum`` keep the first NaN they meet, ``fmax`` and ``fmin`` skip NaNs. Booleans and
complex values run NumPy's own accumulate (an extern call).

The derivative: ``out[i]`` is ``x[k]`` for the last position ``k <= i`` where the input
equals the running value (a ``record``; ties go to the later element, as the value does),
so the cotangent is ``g`` added back at those positions, the adjoint of
``take_along_axis`` (``put_along_axis_add``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .indexing import zeros_for
from .reduction import _accumulate_family, _scan_meta
from .registry import Category, F, declare, is_float_like, spell, ufunc_method_key
from .meta import shape_of

_UFUNCS = {"cummax": np.maximum, "cummin": np.minimum, "cumfmax": np.fmax, "cumfmin": np.fmin}


def _impl_for(ufunc: np.ufunc):
    def impl(x: Any, axis: int = 0, dtype: Any = None) -> Any:
        return ufunc.accumulate(x, axis=axis, dtype=dtype)
    return impl


def _running_vjp(op_name: str):
    def vjp(g, out, x, axis, dtype):
        if not is_float_like(x):
            return (None,)
        shape = tuple(shape_of(x))
        n = shape[axis]
        pos = F.reshape(F.arange(start=0, stop=n, step=1, dtype=np.dtype(np.int64)),
                        shape=(1,) * axis + (n,) + (1,) * (len(shape) - axis - 1))
        value = x if dtype is None else F.astype(x, dtype=np.dtype(dtype))
        record = F.where(F.equal(value, out), pos, 0)   # 0 before the first record (NaNs)
        source = F.cummax(record, axis=axis, dtype=None)
        return (F.put_along_axis_add(zeros_for(g, x), source, g, axis=axis),)
    return vjp


OPS = {}
for _name, _ufunc in _UFUNCS.items():
    _impl = _impl_for(_ufunc)
    _text = f"numpy.{_ufunc.__name__}.accumulate"
    OPS[_name] = declare(_name, Category.SCAN, _impl, inputs=("x",),
                         params={"axis": 0, "dtype": None}, meta=_scan_meta(_impl),
                         vjp=_running_vjp(_name), lowering={"scan": _name[3:]},
                         doc=f"{_text}: the running {_name[3:]} along one axis")
    spell(ufunc_method_key(_ufunc, "accumulate"), OPS[_name],
          _accumulate_family(OPS[_name], _text), _text)
