"""What a C++ kernel's floating-point flags can mean: one entry per graph node it computes
that may raise one (kiln/ops/fp_errors.py says which, with NumPy's name for it), read by
kiln/runtime/fpwarn.py when a launch reports a flag (runtime/launch.c).

An entry is ``(kinds, name, filename, lineno, exact)``: the flags the node's computation
may raise (1 divide, 2 overflow, 4 invalid), NumPy's name in its message, the user's line,
and whether NumPy would warn for every flag the kernel's code for it raises. Not exact:
an op under a mask (``np.log(x, where=m)``: kernels compute every lane) unless the
masked-off lanes compute on values that raise nothing (ops/masked.py), a derivative
rule's node (NumPy runs those under ``errstate(all='ignore')``), Python-number math, an op
this table does not know: their flags are never attributed to another node of the
kernel, so the kernel then says nothing about those kinds.
"""
from __future__ import annotations

from typing import Any

from ..ops.fp_errors import ALL, NAN_QUIET, Bounded, fp_kinds
from ..ops.masked import quiet_operands

_MASKED = ("masked_unary", "masked_binary")
_BOUND = {"b": Bounded(1.0), "i": Bounded(2.0 ** 63), "u": Bounded(2.0 ** 64)}


def _dtype(value: Any) -> Any:
    meta = getattr(value, "meta", None)
    val = meta.get("val") if isinstance(meta, dict) else None
    return getattr(val, "dtype", None)


def _dtype_kind(value: Any) -> str | None:
    dtype = _dtype(value)
    return dtype.kind if dtype is not None else None


def _entry(node: Any) -> tuple | None:
    op = node.op
    source = node.meta.get("source") or ("", 0)
    filename, lineno = source[0], source[1]
    out_kind = _dtype_kind(node)
    # operands: constants as they are; a bool or integer array as the largest value it
    # may hold (finite: ``x + (x > 0)`` is never inf - inf); other arrays unknown
    args = tuple(_BOUND.get(_dtype_kind(a)) if hasattr(a, "meta") else a for a in node.args)
    kinds = [k for k in (_dtype_kind(a) for a in node.args) if k] + [out_kind or ""]
    kind = "f" if "f" in kinds and op.name != "astype" else (
        _dtype_kind(node.args[0]) if op.name == "astype" and node.args else (out_kind or "?"))
    name = op.name
    if name in _MASKED or name == "scalar_binary":
        name = node.kwargs.get("ufunc") or ""
    narrows = True
    if op.name == "astype" and node.args and _dtype(node) is not None and _dtype(node.args[0]) is not None:
        narrows = _dtype(node).itemsize < _dtype(node.args[0]).itemsize
    known = fp_kinds(name, kind or "?", args, out_kind, narrows,
                     scalar=op.name == "scalar_binary") if name else None
    if known is None:   # Python numbers, NumPy scalar math, ops not in the table
        return (ALL, name, filename, lineno, False)
    bits, message_name = known
    if not bits:
        return None
    # a masked op is exact where its kernel computes the masked-off lanes on values that
    # raise nothing (ops/masked.py quiet_operands)
    exact = (op.name not in _MASKED or quiet_operands(name, tuple(
        a.meta.get("val") if hasattr(a, "meta") else a for a in node.args[2:])) is not None) \
        and not node.meta.get("quiet")
    return (bits, message_name, filename, lineno, exact)


def _calls(kernel: Any) -> Any:
    """The graph calls ``kernel`` (a scheduler Kernel) computes, in order."""
    for n in kernel.nodes:
        for origin in n.origins:
            if getattr(origin, "kind", None) == "call":
                yield origin


def fp_entries(kernel: Any) -> tuple:
    """The entries of ``kernel`` (a scheduler Kernel), in the order its nodes compute."""
    out: list = []
    for origin in _calls(kernel):
        e = _entry(origin)
        if e is not None and e not in out:
            out.append(e)
    return tuple(out)


def nan_quiet(kernel: Any) -> bool:
    """Whether the NaNs ``kernel`` reads raise no flag: every op it computes is NaN-quiet
    (ops/fp_errors.py NAN_QUIET; float-to-float casts too). Its invalid flag then is its
    ops' own whatever NaNs its inputs hold, an input it overwrites in place included, so
    the runtime needs no NaN check of its arguments (runtime/fpwarn.py)."""
    for origin in _calls(kernel):
        if origin.op.name == "astype" and origin.args:
            if _dtype_kind(origin) != "f" or _dtype_kind(origin.args[0]) != "f":
                return False
        elif origin.op.name not in NAN_QUIET:
            return False
    return True
