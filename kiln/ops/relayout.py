"""``relayout(x, like, rule)``: x's values in the memory layout NumPy gives a result it
makes from ``like``.

Composites build some results from slices joined (np.insert, np.delete, np.roll), where
NumPy allocates the result first and copies into it: the join's own layout rule
(``order='K'`` over its pieces) is not the one NumPy's allocation follows. The rules:

- ``"A"``: ``empty_like(like, order='A')``, NumPy's ``empty(shape, order='F' if
  arr.flags.fnc else 'C')`` in np.insert and np.delete along an axis (Fortran order only
  for a Fortran-contiguous ``like``);
- ``"K"``: ``empty_like(like)`` (np.roll), like's axis order;
- an axis ``k``: the layout of ``like[..., keep]`` with a boolean ``keep`` at axis k
  (np.delete at several positions): advanced indexing's, which may move that axis.

Capture also records it where an in-place update on a fresh array becomes a new value
(``h += c`` as ``relayout(add(h, c), h, rule='K')``, kiln/capture/array_writes.py ``write_out``):
the write keeps h's memory, so its layout.

Run as NumPy (eager, on Tensors) it is a copy into such an array. Compiled it costs no
pass of its own: lowering (kiln/lowering/result_layouts.py ``relayout``) writes x's values where
``note_layout`` says, asking this impl on stand-ins (kiln/ops/result_layout.py).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .meta import TensorMeta, namespace, shape_of
from .registry import Category, declare
from .result_layout import _stand_in, axis_order, empty_in_order


def _relayout_impl(x: Any, like: Any, rule: Any) -> Any:
    xp = namespace(x)
    if rule in ("A", "K"):
        out = xp.empty_like(like, dtype=x.dtype, order=rule, shape=x.shape)
    else:   # the axis order of like[..., keep] at axis ``rule``: a stand-in's tells it
        probe = _stand_in(like.shape, [s // like.itemsize for s in like.strides])
        picked = probe[(slice(None),) * rule + (np.ones(probe.shape[rule], bool),)]
        out = empty_in_order(x.shape, axis_order(picked.shape, [s // picked.itemsize for s in picked.strides]),
                             x.dtype, xp)
    out[...] = x
    return out


# result_layout.layout_of takes C-ordered operands to make a C-ordered result; advanced
# indexing may not (a C array's a[:, keep] puts that axis first in memory)
_relayout_impl.layout_of_c_inputs = True


relayout = declare(
    "relayout", Category.EXTERN, _relayout_impl, inputs=("x", "like"), params={"rule": "A"},
    meta=lambda x, like, rule: TensorMeta(tuple(shape_of(x)), np.dtype(x.dtype)),
    vjp=lambda g, out, x, like, rule: (g, None), fresh_result=True, complex_grad=True,
    lowering={"relayout": True},
    doc="x laid out as NumPy lays out a result it allocates from `like`: rule 'A' or 'K' "
        "as empty_like(like, order=rule), an axis as like[..., keep] at that axis")
