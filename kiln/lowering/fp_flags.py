"""What a C++ kernel's floating-point flags can mean: one entry per graph node it computes
that may raise one (kiln/ops/fp_errors.py says which, with NumPy's name for it), read by
kiln/runtime/fpwarn.py when a launch reports a flag (runtime/launch.c).

An entry is ``(kinds, name, filename, lineno, exact)``: the flags the node's computation
may raise (1 divide, 2 overflow, 4 invalid), NumPy's name in its message, the user's line,
and whether NumPy would warn for every flag the kernel's code for it raises; a result of
one ufunc call (np.divmod's) has a sixth field, the same for all that call's results. Not exact:
an op under a mask (``np.log(x, where=m)``: kernels compute every lane) unless the
masked-off lanes compute on values that raise nothing (ops/masked.py), a derivative
rule's node (NumPy runs those under ``errstate(all='ignore')``), Python-number math, an op
this table does not know: their flags are never attributed to another node of the
kernel, so the kernel then says nothing about those kinds.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..config import config
from ..ops import Category
from ..ops.fp_errors import (ALL, CAST_INPUT, COMPLEX_LIBM, INVALID, KINDS, NAN_QUIET, NUMPY_TELLS, OVER,
                              REDUCES, TOLD_BESIDE_NAN, Bounded, exact_kinds, fp_kinds, kernel_noise, numpy_name,
                              part_exact, raises_where, ufunc_name)
from ..ops.masked import quiet_operands
from .cpp_ops import svml_ufunc
from .handler import RecordingHandler
from .loop_ir import Affine, BufferValue, Pointwise

_MASKED = ("masked_unary", "masked_binary")
_BOUND = {"b": Bounded(1.0), "i": Bounded(2.0 ** 63), "u": Bounded(2.0 ** 64)}


def _dtype(value: Any) -> Any:
    meta = getattr(value, "meta", None)
    val = meta.get("val") if isinstance(meta, dict) else None
    return getattr(val, "dtype", None)


def _dtype_kind(value: Any) -> str | None:
    dtype = _dtype(value)
    return dtype.kind if dtype is not None else None


def _entry(node: Any) -> tuple[tuple | None, int]:
    """:func:`_own_entry`, less the kinds a ``with np.errstate(...='ignore')`` around the
    node's line ignores (capture's ``meta["errstate"]``): never exact nor told for those,
    so their flags are not the node's to warn of, nor certain to be another's."""
    entry, told = _own_entry(node)
    ignored = sum(bit for bit, key, _ in KINDS if key in node.meta.get("errstate", ()))
    if entry is None or not ignored:
        return entry, told
    return (*entry[:4], exact_kinds(entry) & ~ignored, *entry[5:]), told & ~ignored


def _own_entry(node: Any) -> tuple[tuple | None, int]:
    """The node's entry (None: it raises nothing) and the kinds NumPy warns of where the
    op's predicate holds (ops/fp_errors.py ``raises_where``): all of an exact entry's,
    NumPy's own of an op whose kernel code raises flags NumPy's does not (kernel_noise),
    none under a mask, for a derivative rule's node or an op the table does not know."""
    op = node.op
    source = node.meta.get("source") or ("", 0)
    filename, lineno = source[0], source[1]
    if _out_cast(node) is not None:   # the ufunc's call casts: "overflow encountered in add"
        src = _out_cast(node)
        return (OVER, ufunc_name(_name_of_call(src)),
                filename, lineno, OVER), OVER
    out_kind = _dtype_kind(node)
    # operands: constants as they are; a bool or integer array as the largest value it
    # may hold (finite: ``x + (x > 0)`` is never inf - inf); other arrays unknown. A
    # masked op's mask and fallback are none of its ufunc's operands (the bool mask, taken
    # for a factor of at most 1, said ``np.multiply(x, 1e10, where=m)`` never overflows)
    operands = node.args[2:] if op.name in _MASKED else node.args
    args = tuple(_BOUND.get(_dtype_kind(a)) if hasattr(a, "meta") else _in_loop(a, _dtype(node))
                 for a in operands)
    kinds = [k for k in (_dtype_kind(a) for a in operands) if k] + [out_kind or ""]
    cast = node.args[CAST_INPUT[op.name]] if op.name in CAST_INPUT and len(node.args) > CAST_INPUT[op.name] \
        else None   # (the input a cast converts: astype's, the value an index_put writes)
    # (a complex result is a complex loop's, float operands cast: x + 0j adds part by part)
    kind = "c" if out_kind == "c" and op.name not in CAST_INPUT else \
        "f" if "f" in kinds and op.name not in CAST_INPUT else (
        _dtype_kind(cast) if cast is not None else (out_kind or "?"))
    name = _name_of_call(node)
    narrows = True
    if cast is not None and _dtype(node) is not None and _dtype(cast) is not None:
        to, of = _dtype(node), _dtype(cast)
        narrows = np.finfo(to).max < np.finfo(of).max if to.kind in "fc" and of.kind in "fc" else \
            to.itemsize < of.itemsize
    known = fp_kinds(name, kind or "?", args, out_kind, narrows,
                     scalar=op.name == "scalar_binary") if name else None
    if kind == "c" and node.meta.get("step") and (known is None or known[0]):
        # a composite's complex step: NumPy's own code may run it under errstate(ignore)
        # (np.nanmean's total / NaN of an all-NaN row, whose complex loop compares a NaN);
        # one whose op raises nothing (np.vdot's conjugate) stays silent: left unknown, it
        # was a second candidate for every kind, and the kernel it shares with the user's
        # `z * z.conj()` no longer warned "overflow encountered in multiply"
        known = None
    if known is None:   # Python numbers, NumPy scalar math, ops not in the table
        return (ALL, name, filename, lineno, False), 0
    bits, message_name = known
    # a result of one ufunc call (np.divmod's remainder) may warn of kinds its own op's
    # code does not raise (MIN // -1's overflow): only its predicate tells those
    own = ALL if name == op.name else _own_kinds(node)
    # (NumPy scalar math is one scalar libm call, never the vector code the table is of)
    # (NumPy's own SVML function, where a kernel calls it: NumPy's flags, no noise; svml.py)
    noise = kernel_noise(name) if kind == "f" and op.name != "scalar_binary" \
        and not svml_ufunc(name, config.cxx_flags, _dtype(node) or "float64") else \
        kernel_noise(name, kind) & bits if kind == "i" and op.name != "scalar_binary" else 0
    if not bits | noise:
        return None, 0
    # a masked op is exact where its kernel computes the masked-off lanes on values that
    # raise nothing (ops/masked.py quiet_operands); predicates tell only unmasked ops' kinds
    quiet = node.meta.get("quiet")
    exact = (op.name not in _MASKED or quiet_operands(name, tuple(
        a.meta.get("val") if hasattr(a, "meta") else a for a in operands)) is not None) \
        and not quiet
    told = bits if op.name not in _MASKED and not quiet else 0
    # (the kinds the flag tells: not those its kernel code raises where NumPy's loop does not)
    return (bits | noise, message_name, filename, lineno, own & ~noise if exact else 0), told


def _in_loop(value: Any, dtype: Any) -> Any:
    """A Python float constant as a float loop of ``dtype`` takes it (NEP 50): past that
    dtype's largest value it is an infinity (``x32 * 1e300`` multiplies by inf, so
    ``0 * inf`` is invalid there; the constant 1e300 narrowed the multiply's kinds)."""
    if isinstance(value, float) and dtype is not None and dtype.kind == "f" and math.isfinite(value) \
            and abs(value) > float(np.finfo(dtype).max):
        return math.copysign(math.inf, value)
    return value


def _out_cast(node: Any) -> Any:
    """For the write of a call's result into a narrower float ``out=`` (capture's
    ``out_write``: ``np.add(x, 1, out=y32)``, ``y32 += x64``), the node computing that
    result: NumPy casts inside that call, which warns "overflow encountered in add" for
    1e300 (kernels cast in the write, whose op is a copy: ops/fp_errors.py). Else None."""
    if node.op.name != "copy_into" or not node.meta.get("out_write") or len(node.args) < 2:
        return None
    src, to, of = node.args[1], _dtype(node), _dtype(node.args[1])
    if getattr(src, "kind", None) != "call" or to is None or of is None or to.kind not in "fc" \
            or of.kind not in "fc" or not np.finfo(to).max < np.finfo(of).max:
        return None
    return src


def _own_kinds(node: Any) -> int:
    """The kinds the code of ``node``'s own op may raise (an integer loop's), for a result
    of one ufunc call (np.divmod's) those it raises wherever the call does
    (ops/fp_errors.py ``part_exact``)."""
    kinds = [_dtype_kind(a) for a in node.args if hasattr(a, "meta")] + [_dtype_kind(node)]
    kind = "f" if "f" in kinds else (kinds[-1] or "?")
    args = tuple(_BOUND.get(_dtype_kind(a)) if hasattr(a, "meta") else a for a in node.args)
    exact = part_exact(*node.meta["ufunc"], kind) if node.meta.get("ufunc") else ALL
    return (fp_kinds(node.op.name, kind, args, kinds[-1]) or (ALL,))[0] & exact


def _exact_together(node: Any) -> bool:
    """Is ``node`` a result of a ufunc call whose code alone is not exact for the call's
    kinds (ops/fp_errors.py ``part_exact``), though with the call's other result's it is?"""
    part = node.meta.get("ufunc")
    return bool(part) and not node.meta.get("quiet") and \
        part_exact(*part, _loop_kind(node) or "?") != ALL


def flagless(slots: list) -> bool:
    """Does some slot tell a kind its node's own code never raises (np.divmod's remainder
    alone: NumPy's call overflows for MIN by -1, the remainder's code raises nothing)?
    No flag then makes the runtime rerun the body for its predicates: the kernel computes
    them on every launch (cpp.py)."""
    return any(_name(node) != node.op.name and not _own_kinds(node) & bit for _i, bit, node, _w in slots)


def _same_call(node: Any, nodes: list) -> int | None:
    """For a result of one ufunc call (``meta["ufunc"]``: np.divmod's), the index in
    ``nodes`` of its first result there (itself next: ``len(nodes)``), a sixth field of its
    entry by which runtime/fpwarn.py warns once for their call; else None."""
    part = node.meta.get("ufunc")
    if not part:
        return None
    for i, other in enumerate(nodes):
        other_part = other.meta.get("ufunc")
        if other_part and other_part[0] == part[0] and len(other.args) == len(node.args) \
                and all(a is b for a, b in zip(other.args, node.args)):
            return i
    return len(nodes)


def _name_of_call(node: Any) -> str:
    """The ufunc NumPy computes ``node`` by (a scalar_binary's, a masked op's: its kwargs')."""
    return numpy_name(node.op.name, node.kwargs, node.meta.get("ufunc"))


def _name(node: Any) -> str:
    """The op NumPy computes ``node`` by: its own, or the ufunc whose call gives it
    (``meta["ufunc"]``: np.divmod's quotient and remainder warn as "divmod", once)."""
    part = node.meta.get("ufunc")
    return part[0] if part else node.op.name


def _calls(kernel: Any) -> Any:
    """The graph calls ``kernel`` (a scheduler Kernel) computes, in order."""
    for n in kernel.nodes:
        for origin in n.origins:
            if getattr(origin, "kind", None) == "call":
                yield origin


# A kernel tells at most this many (op, kind) raisers apart (the bits of one word)
MAX_SLOTS = 32


def _casts_to_int(node: Any) -> bool:
    """A float-to-integer cast: its "invalid" is raised by a NaN it reads (NumPy warns for
    it), so a NaN in its input does not silence it; only its predicate tells."""
    return node.op.name == "astype" and bool(node.args) and _dtype_kind(node.args[0]) == "f" \
        and _dtype_kind(node) in ("i", "u")


def _told_beside_nan(node: Any, kernel: Any) -> bool:
    """Is the "invalid" of ``node``, the one op of ``kernel`` that may raise it, told by its
    predicate, since a NaN the kernel reads raises the flag too (the runtime drops a flag
    raised beside a NaN): a float-to-integer cast's (NumPy warns for the NaN itself), or
    a division loop's in a kernel whose NaNs are not quiet (ops/fp_errors.py
    TOLD_BESIDE_NAN: 0 // 0 beside a NaN)."""
    return _casts_to_int(node) or _name(node) in TOLD_BESIDE_NAN and not nan_quiet(kernel)


def _loop_kind(node: Any) -> str | None:
    """'f' for a float result of real operands (a predicate's tests are of real floats)
    or a cast's complex one, 'c' for a complex loop's,
    'i' or 'u' for an integer loop (all its arrays of that kind, and run-time Python
    ints: ``a // k`` of an int ``k`` is a's loop, NEP 50), else None."""
    kinds = [_dtype_kind(a) for a in node.args if hasattr(a, "meta")] + [_dtype_kind(node)]
    if (kinds[-1] == "f" or _casts_to_int(node)) and "c" not in kinds:
        return "f"
    if kinds[-1] == "c" and (node.op.name in CAST_INPUT or _out_cast(node) is not None):
        return "f"   # a cast to complex64: its predicate tests the parts (fp_errors.py _isinf)
    if kinds[-1] == "c" and node.op.name != "scalar_binary":
        return "c"   # a complex loop (fp_predicates.py complex_raises_where)
    return kinds[-1] if kinds[-1] in ("i", "u") and set(kinds) - {None} == {kinds[-1]} else None


def fp_table(kernel: Any) -> tuple[tuple, list, tuple]:
    """``(entries, slots, names)`` of ``kernel`` (a scheduler Kernel): an entry per graph node
    it computes that may raise a flag, in the order its nodes compute; and, for each kind
    that several of those nodes may raise (or one beside a node whose flags NumPy would not
    report: a masked or derivative op), a slot per node NumPy would warn for that has a
    predicate for it (ops/fp_errors.py ``raises_where``; one that has none, a sum's
    inf - inf, stays silent):
    ``(entry index, kind, node, predicate)``. The kernel computes the predicates
    (cpp_ops.py ``CppEmitter.raised``) and the runtime warns for each node whose
    predicate held (runtime/fpwarn.py), in place of the flag that cannot say which.
    ``names``: each entry's graph node's name (a node another kernel of the graph computes
    again warns once per call: cpp.py ``CppRenderer.bind_kernels``)."""
    nodes: list = []
    entries: list = []
    told: list = []
    for origin in _calls(kernel):
        e, kinds = _entry(origin) if origin not in nodes else (None, 0)
        if e is not None and _out_cast(origin) in nodes:
            # the cast of a result this kernel computes: one call, which warns once
            i = nodes.index(_out_cast(origin))
            entries[i] = entries[i][:5] + (entries[i][5] if len(entries[i]) > 5 else i,)
            nodes.append(origin)
            entries.append(e + (entries[i][5],))
            told.append(kinds)
            continue
        if e is not None:
            call = _same_call(origin, nodes)
            if call is not None and call < len(nodes) and _exact_together(origin):
                # both results of one float call (np.divmod's): their codes together raise
                # what the call does; one entry says so for both
                entries[call] = entries[call][:4] + (entries[call][0],) + entries[call][5:]
                continue
            nodes.append(origin)
            entries.append(e if call is None else e + (call,))
            told.append(kinds)
    slots: list = []
    for bit, _key, _text in KINDS:
        may = [i for i, e in enumerate(entries) if e[0] & bit]
        warns = [i for i in may if told[i] & bit]
        if not warns or len(may) == 1 and exact_kinds(entries[may[0]]) & bit and not (
                bit == INVALID and _told_beside_nan(nodes[may[0]], kernel)):
            continue   # nothing NumPy would say, or one raiser: the flag says it all
        wheres = [raises_where("astype" if _out_cast(nodes[i]) is not None or nodes[i].op.name in CAST_INPUT
                               else _name(nodes[i]), bit, kind, _dtype(nodes[i]))
                  if (kind := _loop_kind(nodes[i])) else None for i in warns]
        told_here = [(i, w) for i, w in zip(warns, wheres) if w is not None]
        rest = [i for i, w in zip(warns, wheres) if w is None]
        # (a reduction's predicate needs its stage's term accumulators, which a blocked
        # stage has not: lowered without it, it is what it was before it had one, the op of
        # its kind without a predicate; cpp_fp.py told_body reads ``fallback``)
        plain = rest + [i for i, w in told_here if _name(nodes[i]) in REDUCES]
        residual = len(plain) == 1 and bit == OVER and len(warns) == len(may) and \
            all(exact_kinds(entries[i]) & bit for i in may)
        for i, w in told_here:
            if _name(nodes[i]) in REDUCES:
                w.fallback = "residual" if residual else "none"
        if len(rest) == 1 and residual:
            # the one op without a predicate for an overflow (a sum's: ``(x * 2).sum()``,
            # ``x[m].mean()``'s sum beside its divide and cast), beside ops whose code raises
            # it only where NumPy's would: it overflowed where none of their predicates held
            # (``None``: runtime/fpwarn.py fires it then; the second body alone tells it)
            told_here.append((rest[0], None))
        if not told_here or len(slots) + len(told_here) > MAX_SLOTS:
            continue
        # an op without a predicate (a sum's inf - inf) stays silent, the others still
        # warn where theirs held (np.sum(np.log(p) * p): the multiply's 0 * -inf)
        slots += [(i, bit, nodes[i], w) for i, w in told_here]
    slots.sort(key=lambda s: (s[0], s[1]))   # NumPy's order: op by op, then npy_fpe's
    return tuple(entries), slots, tuple(n.name for n in nodes)


def numpy_tells(kernel: Any, names: tuple, arguments: list, written: set, inplace: dict | None = None,
                scalars: tuple = ()) -> tuple:
    """``(entry index, argument position, op name, kwargs)`` for each node of ``kernel``
    whose warnings NumPy's own op tells (ops/fp_errors.py NUMPY_TELLS: var, std, vector_norm) and
    that reads the whole of one of the kernel's arguments, ``arguments`` (Buffers, in
    parameter order), which the kernel does not write (``written``: names) or computes
    itself (the var's input lowering stores: realize_early.py ``_store_told_input``;
    not one whose memory an output of the kernel takes, ``inplace``): the runtime
    runs the op on that argument after a launch that raised a flag (runtime/fpwarn.py).
    Where the op reads a value the kernel computes from its arguments, the position is
    how NumPy computes that value from them (:func:`_recipe`; ``scalars``: the kernel's
    Scalar arguments, after the buffers).
    ``names``: the kernel's entries' node names (:func:`fp_table`)."""
    shared = {b.name for b in (inplace or {}).values()} | set(inplace or {})
    told = []
    for n in kernel.nodes:
        for origin in n.origins:
            if getattr(origin, "kind", None) != "call" or origin.op.name not in NUMPY_TELLS \
                    or origin.meta.get("errstate") \
                    or origin.name not in names or any(t[0] == names.index(origin.name) for t in told):
                continue
            buf = _told_reads(n)
            if buf is None and n.kind == "reduction" and origin.args:
                # a value the kernel computes from its arguments (np.var(2 * x)): NumPy
                # computes it again from them, on the rare path alone (a stored one cost
                # a column var 3-5x its time: realize_early.py _store_told_input)
                position = [_recipe(origin.args[0], (arguments, scalars), written, [8])]
            elif buf is None or buf.name in written and (buf.kind != "computed" or buf.name in shared):
                continue
            else:
                position = [i for i, b in enumerate(arguments) if b.name == buf.name]
            kwargs = _literal_kwargs(origin)
            if position and position[0] is not None and kwargs is not None:
                told.append((names.index(origin.name), position[0], origin.op.name, kwargs))
    return tuple(told)


def _literal_kwargs(node: Any) -> dict | None:
    """``node``'s kwargs as literals of the wrapper's text (a dtype as its string), or None."""
    kwargs = {k: (v.str if isinstance(v, np.dtype) else v) for k, v in node.kwargs.items()}
    return kwargs if all(isinstance(v, (type(None), bool, int, str, tuple)) for v in kwargs.values()) else None


def _basic_index(value: Any) -> bool:
    """Is ``value`` a getitem's index of Python ints, None, ``...`` and slices of ints
    (``x[1:]``'s ``(slice(1, None, None),)``), which the wrapper's text writes as it is?"""
    def part(v: Any) -> bool:
        return v is None or v is Ellipsis or type(v) is int or isinstance(v, slice) and all(
            b is None or type(b) is int for b in (v.start, v.stop, v.step))
    return isinstance(value, tuple) and all(part(v) for v in value)


def _recipe(value: Any, arguments: tuple, written: set, budget: list) -> Any:
    """How NumPy computes graph value ``value`` from the kernel's ``arguments`` (its
    buffers, its scalars; runtime/fpwarn.py ``recomputed``): ``("arg", position)`` of a
    graph input the kernel reads and does not write (a run-time Python number as the
    caller passed it: ``np.var(x + s)``), ``("const", number)``, ``("call", op name, operands, kwargs)`` of an
    elementwise op or a view whose parameters are literals (a reshape's shape, ``x[1:]``'s
    index); None where it is anything else, or past ``budget`` calls."""
    if isinstance(value, (bool, int)) or isinstance(value, float) and np.isfinite(value) or _basic_index(value):
        return ("const", value)
    kind = getattr(value, "kind", None)
    if kind == "placeholder":
        buffers, scalars = arguments
        found = [i for i, b in enumerate(buffers) if b.name == value.name and b.kind == "input"] + \
            [len(buffers) + i for i, sc in enumerate(scalars) if getattr(sc, "node", None) is value]
        return ("arg", found[0]) if found and value.name not in written else None
    if kind != "call" or value.op.category not in (Category.POINTWISE, Category.VIEW) or budget[0] <= 0 \
            or value.meta.get("quiet") or value.meta.get("errstate"):
        return None
    budget[0] -= 1
    operands = tuple(_recipe(a, arguments, written, budget) for a in value.args)
    kwargs = _literal_kwargs(value)
    return None if kwargs is None or None in operands else ("call", value.op.name, operands, kwargs)


def _told_reads(n: Any) -> Any:
    """The buffer whose whole a told op reads in reduction ``n``, or None: the reduction's
    own operand (var's), or the buffer it squares before reducing (vector_norm's ``x * x``
    of ``np.linalg.norm(x, axis=1)``: its code loads one buffer, whole, and multiplies it
    by itself; not a value computed in the kernel, ``norm(2 * x, axis=1)``)."""
    src = n.src if n.kind == "reduction" else None
    if isinstance(src, BufferValue):
        return src.buf if src.is_whole() else None
    if not isinstance(src, Pointwise):
        return None
    index = [Affine.var(f"d{k}") for k in range(len(src.shape))]
    rec = RecordingHandler()
    src.fn(rec, index)
    if len({(b.name, str(at)) for b, at in rec.loads}) != 1 or rec.casts or \
            [fn for fn, _dt in rec.calls] != ["multiply"]:
        return None
    buf = rec.loads[0][0]
    whole = RecordingHandler()
    BufferValue.whole(buf).load(whole, index)
    return buf if tuple(src.shape) == tuple(buf.shape) and str(whole.loads[0][1]) == str(rec.loads[0][1]) \
        else None


def nan_quiet(kernel: Any) -> bool:
    """Whether the NaNs ``kernel`` reads raise no flag: every op it computes is NaN-quiet
    (ops/fp_errors.py NAN_QUIET; float-to-float casts too). Its invalid flag then is its
    ops' own whatever NaNs its inputs hold, an input it overwrites in place included, so
    the runtime needs no NaN check of its arguments (runtime/fpwarn.py)."""
    for origin in _calls(kernel):
        if origin.op.name == "astype" and origin.args:
            if _dtype_kind(origin) != "f" or _dtype_kind(origin.args[0]) != "f":
                return False
        elif origin.op.name not in NAN_QUIET and not (
                _dtype_kind(origin) == "f" and svml_ufunc(origin.op.name, config.cxx_flags, _dtype(origin))) \
                and not (_dtype_kind(origin) == "c" and origin.op.name in COMPLEX_LIBM) \
                and not (_dtype_kind(origin) == "c" and origin.op.name == "scalar_binary"
                         and _name_of_call(origin) in NAN_QUIET):
            # (NumPy's own SVML function, or libm's complex one NumPy calls, raises on NaNs
            # too what NumPy's loop raises; NumPy's complex scalar math of a quiet op is its
            # loop's formula, kiln_cdiv's: 2**40 / np.complex128(nan+0j)'s compare of the NaN
            # raises "invalid" as NumPy's "invalid value encountered in scalar divide")
            return False
    return True
