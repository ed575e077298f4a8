"""Bit packing: ``np.packbits`` (the truth of each element, eight to a uint8) and
``np.unpackbits`` (the eight bits of each uint8, one per element).

Both are EXTERN ops: every backend calls NumPy's kernel, and the shape rule runs it on
zero-stride fakes (``meta=None``), so NumPy's own shapes (the last byte padded with
zero bits; ``axis=None`` flattens; ``count=`` trims or pads with zeros) and errors
(``TypeError`` for a float array, or for anything but uint8 to unpack; ``ValueError`` for
a ``count`` below ``-8 * n`` or an unknown ``bitorder``) come out unchanged. The results
are integer-valued: nothing to differentiate.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .meta import ndim_of, normalize_one_axis
from .registry import Bound, Category, declare, spell


def _axis(axis: Any, x: Any) -> int | None:
    return None if axis is None else normalize_one_axis(axis, max(ndim_of(x), 1))


def _bitorder(bitorder: Any) -> Any:
    # NumPy's own check, on a stand-in: an unknown order (ValueError), a non-str (TypeError)
    np.packbits(np.zeros(1, np.uint8), bitorder=bitorder)
    return bitorder


packbits = declare("packbits", Category.EXTERN,
                   lambda x, axis=None, bitorder="big": np.packbits(x, axis=axis, bitorder=bitorder),
                   inputs=("x",), params={"axis": None, "bitorder": "big"},
                   doc="numpy.packbits: the truth of each element of an integer or bool array, "
                       "eight to a uint8 (the last byte padded with zeros)")
unpackbits = declare("unpackbits", Category.EXTERN,
                     lambda x, axis=None, count=None, bitorder="big":
                         np.unpackbits(x, axis=axis, count=count, bitorder=bitorder),
                     inputs=("x",), params={"axis": None, "count": None, "bitorder": "big"},
                     doc="numpy.unpackbits: the bits of a uint8 array, one uint8 0 or 1 each")


def _packbits_normalize(a, /, axis=None, bitorder="big"):
    return Bound(packbits, (a,), {"axis": _axis(axis, a), "bitorder": _bitorder(bitorder)})


def _unpackbits_normalize(a, /, axis=None, count=None, bitorder="big"):
    return Bound(unpackbits, (a,), {"axis": _axis(axis, a),
                                    "count": None if count is None else operator.index(count),
                                    "bitorder": _bitorder(bitorder)})


spell(np.packbits, packbits, _packbits_normalize, "numpy.packbits")
spell(np.unpackbits, unpackbits, _unpackbits_normalize, "numpy.unpackbits")
