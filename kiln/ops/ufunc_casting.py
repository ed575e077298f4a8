"""``ufunc(*xs, dtype=..., casting=...)``: NumPy's type resolution, then the plain ufunc.

NumPy reads ``dtype=dt`` as ``signature=(None, ..., dt)``: it picks the loop whose output
is ``dt`` (``np.add(i, i, dtype=np.float32)`` adds in float32), casts each input to that
loop's input dtype under ``casting`` (default 'same_kind': ``np.add(f8, f8,
dtype=np.int32)`` is a ``UFuncTypeError``) and computes. kiln asks NumPy the same
question (``ufunc.resolve_dtypes`` with that signature and casting, which raises NumPy's
own errors) and writes the answer as ops: ``astype`` of each array input whose dtype is
not its loop's, then the ufunc's op on the cast arrays. Python numbers stay weak
operands, so they convert (and overflow: ``OverflowError``) as NumPy converts them; the
call is accepted only when the cast arrays and those numbers resolve to the very loop
NumPy chose, so the op computes exactly NumPy's loop.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .meta import TensorMeta, check_dtype, dtype_token, reject
from .registry import Composite, F, Op


def typed_ufunc_call(op: Op, ufunc: np.ufunc, args: tuple, dtype: Any, casting: Any,
                     out: Any) -> Composite:
    """The Composite of ``ufunc(*args, dtype=dtype, casting=casting, out=out)``."""
    name = f"numpy.{ufunc.__name__}"
    hint = "call .astype(...) on the inputs instead, or call the function without kiln"
    if out is not None and casting != "same_kind":
        reject(name, "casting", casting, hint)   # out='s own cast is checked 'same_kind'
    signature = (None,) * ufunc.nin + (None if dtype is None else check_dtype(dtype, name),)
    tokens = tuple(dtype_token(a) for a in args)
    if casting == "equiv" and not any(isinstance(t, np.dtype) for t in tokens):
        # NumPy 2.4's resolve_dtypes crashes the process (a segfault) on Python numbers
        # alone under 'equiv' whose loop does not fit: np.add(3., 4., dtype="float32",
        # casting="equiv") is its TypeError as a call, so such a call runs as NumPy
        reject(name, "casting", casting, hint)
    outs = (dtype_token(out),) if out is not None else (None,)
    loop = ufunc.resolve_dtypes(tokens + outs, signature=signature, casting=casting)
    arrays = tuple(isinstance(a, TensorMeta) for a in args)
    again = tuple(loop[i] if array else t for i, (array, t) in enumerate(zip(arrays, tokens)))
    try:
        same = ufunc.resolve_dtypes(again + (None,)) == loop
    except TypeError:
        same = False
    if not same:
        reject(name, "dtype", dtype, hint)   # a weak number would pick another loop
    cast = tuple(loop[i] if array and loop[i] != t else None
                 for i, (array, t) in enumerate(zip(arrays, tokens)))
    for dt in loop:
        check_dtype(dt, name)

    def fn(*xs: Any) -> Any:
        return op(*(x if c is None else F.astype(x, dtype=c) for x, c in zip(xs, cast)))

    return Composite(fn, tuple(args), {}, out, out_broadcasts=True)
