"""Guards: the assumptions a cache entry was compiled under, each printable as Python.

A :class:`Guard` has a kind, the source it checks, a predicate (``code``, evaluated in the
generated check function) and ``text`` (the same predicate as a user reads it, such as
``x.shape[0] == 128``). A :class:`GuardSet` collects them during capture without
duplicates, together with a faster combined form for arrays (one ``x.shape == (..)``
comparison instead of one guard per dimension), which is what the generated check
function runs; the per-guard form is only evaluated to explain a miss.

    >>> from kiln.capture.sources import LocalSource, CodeNamespace
    >>> gs = GuardSet(CodeNamespace({}, {}))
    >>> gs.add_equals(LocalSource("n"), 3, "value")
    >>> [g.text for g in gs]
    ['n == 3']
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from ..array_kinds import kind_of_type
from ..capture.sources import CodeNamespace, GlobalSource, Source, key_text
from .fastcheck import array_check

# Guard kinds (what a recompile log says changed).
TYPE, ID, VALUE, TRUTH, DTYPE, NDIM, SIZE, LENGTH, KEYS, NOT_SHADOWED = (
    "type", "id", "value", "truth", "dtype", "ndim", "size", "length", "keys", "not_shadowed")
REQUIRES_GRAD, GRAD_MODE, DEVICE = "requires_grad", "grad_mode", "device"


@dataclass
class Guard:
    kind: str
    source: Source | None
    code: str          # predicate over the entry's parameters and namespace
    text: str          # the same predicate as the user reads it
    seen: str = ""     # expression whose value a recompile log shows ("x.shape[0]")
    dim: int | None = None  # for SIZE guards: which dimension of ``source``

    def __str__(self) -> str:
        return self.text


def literal(value: Any) -> str | None:
    """Python source for a constant that compares by value, or None."""
    if value is None or isinstance(value, (bool, str, bytes)):
        return repr(value)
    if type(value) is int:
        return repr(value)
    if type(value) is float:
        if math.isnan(value) or math.isinf(value):
            return f"float({str(value)!r})"
        return repr(value)
    if type(value) is tuple and all(literal(v) is not None for v in value):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return None


def same_keys(mapping: dict, keys: tuple) -> bool:
    """The dict's keys are ``keys``, in order, each of the same type."""
    return len(mapping) == len(keys) and all(type(a) is type(b) and a == b for a, b in zip(mapping, keys))


def display_object(value: Any) -> str:
    """How guard text names an object compared by identity."""
    if isinstance(value, type):
        kind = kind_of_type(value)
        if kind is not None:
            return kind.type_name
        module = value.__module__
        if module == "numpy":
            return f"np.{value.__name__}"
        if module.startswith("kiln.") and value.__name__ in ("Tensor",):
            return f"kiln.{value.__name__}"
        return value.__qualname__ if module == "builtins" else f"{module}.{value.__qualname__}"
    if isinstance(value, np.dtype):
        return f"np.{value.name}"
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if isinstance(value, type(np)):
        return f"<module {value.__name__}>"
    if name is not None:
        return name
    return f"<{type(value).__name__} object>"


ITEMS_KEPT = 8


def _far_item(source: Any) -> bool:
    """Is this (inside) an item of a sequence past its first ITEMS_KEPT?"""
    while source is not None and hasattr(source, "base"):
        index = getattr(source, "index", None)
        if type(index) is int and index >= ITEMS_KEPT:
            return True
        source = source.base
    return False


@dataclass
class GuardSet:
    ns: CodeNamespace
    guards: list[Guard] = field(default_factory=list)
    fast: list[str] = field(default_factory=list)
    # The fast checks again as (source, "id" | "type" | "array", *operands) for a cache
    # entry run in C (guards/fastcheck.py); None once a check has no such form.
    c_specs: list | None = field(default_factory=list)
    _seen: set = field(default_factory=set)
    _c_of: dict = field(default_factory=dict)    # id(guard) -> its c_spec (unpin_since)

    def __iter__(self) -> Iterator[Guard]:
        return iter(self.guards)

    def __len__(self) -> int:
        return len(self.guards)

    def _add(self, guard: Guard, fast: str | None = None, c_spec: tuple | None = None) -> bool:
        if guard.code in self._seen:
            return False
        self._seen.add(guard.code)
        self.guards.append(guard)
        self.fast.append(fast if fast is not None else guard.code)
        self._c_of[id(guard)] = c_spec
        if self.c_specs is not None and fast != "True":
            if c_spec is None:
                self.c_specs = None
            else:
                self.c_specs.append(c_spec)
        return True

    def add_type(self, source: Source, cls: type) -> None:
        c, d = source.code(self.ns), source.display()
        ref = self.ns.ref(cls, "type")
        self._add(Guard(TYPE, source, f"_kiln_type({c}) is {ref}", f"type({d}) is {display_object(cls)}",
                        seen=f"_kiln_type({c}).__qualname__"),
                  c_spec=(source, "type", cls))

    def add_id(self, source: Source, obj: Any) -> None:
        c, d = source.code(self.ns), source.display()
        self._add(Guard(ID, source, f"{c} is {self.ns.ref(obj)}", f"{d} is {display_object(obj)}",
                        seen=f"{c}"), c_spec=(source, "id", obj))

    def add_equals(self, source: Source, value: Any, kind: str = VALUE) -> None:
        """``source == value`` (with a type check, so 1 and 1.0 and True stay apart)."""
        c, d = source.code(self.ns), source.display()
        lit = literal(value)
        if isinstance(value, (np.floating, np.complexfloating)):
            # (by its bytes: a NaN equals no value, itself included, and -0.0 == 0.0)
            code, text = f"({c}).tobytes() == {value.tobytes()!r}", f"{d} == {value!r}"
        elif lit is None:
            ref = self.ns.ref(value, "v")
            code = f"({c}) == {ref}"
            text = f"{d} == {value!r}"
        elif value is None or isinstance(value, bool):
            code, text = f"({c}) is {lit}", f"{d} is {lit}"
        elif isinstance(value, float) and math.isnan(value):
            code, text = f"({c}) != ({c})", f"{d} is nan"
        else:
            code, text = f"({c}) == {lit}", f"{d} == {lit}"
        if isinstance(value, float) and value == 0.0:   # -0.0 == 0.0, but 1 / -0.0 is -inf
            sign = self.ns.ref(math.copysign, "copysign")
            code += f" and {sign}(1.0, {c}) == {math.copysign(1.0, value)}"
        if isinstance(value, np.dtype):
            # dtypes equal under another name or with metadata (np.longlong and np.int64,
            # np.dtype('i', metadata=...)) make different results in NumPy (their dtype's
            # char; a view carrying the metadata): each its own entry
            code += f" and ({c}).char == {value.char!r} and ({c}).metadata == {self.ns.ref(value.metadata, 'v')}"
        if value is not None and not isinstance(value, bool):
            code = f"_kiln_type({c}) is {self.ns.ref(type(value), 'type')} and {code}"
        # (the same test in C: fastcheck_entry.c's check 5, or identity for None and bools)
        c_spec = (source, "id", value) if value is None or type(value) is bool else \
            (source, "equals", value) if type(value) in (int, str) or \
            type(value) is float and not math.isnan(value) else None
        self._add(Guard(kind, source, code, text, seen=c), c_spec=c_spec)

    def add_truth(self, expr_code: str, expr_text: str, truth: bool, sources: tuple = (),
                  seen: str | None = None) -> None:
        """A runtime scalar decided a branch: guard the decision, not the value (``seen``:
        what a recompile log shows, the decision itself unless told)."""
        code = f"_kiln_bool({expr_code})" if truth else f"not ({expr_code})"
        text = f"bool({expr_text})" if truth else f"not ({expr_text})"
        self._add(Guard(TRUTH, sources[0] if sources else None, code, text, seen=seen or expr_code))

    def add_writeable(self, source: Source, writeable: bool) -> None:
        """The function writes into the NumPy array at ``source``: whether it is writeable
        (NumPy raises on a read-only one). A TRUTH guard, as a branch would give, that
        fastcheck.c reads from the array's flags (``x.flags.writeable`` costs ~0.1 us in
        Python: a flags object per call)."""
        c, d = source.code(self.ns), source.display()
        code = f"_kiln_bool({c}.flags.writeable)" if writeable else f"not ({c}.flags.writeable)"
        text = f"bool({d}.flags.writeable)" if writeable else f"not ({d}.flags.writeable)"
        self._add(Guard(TRUTH, source, code, text, seen=f"{c}.flags.writeable"),
                  c_spec=(source, "writeable", bool(writeable)))

    def add_length(self, source: Source, n: int) -> None:
        c, d = source.code(self.ns), source.display()
        self._add(Guard(LENGTH, source, f"_kiln_len({c}) == {n}", f"len({d}) == {n}",
                        seen=f"_kiln_len({c})"))

    def add_keys(self, source: Source, keys: tuple, typed: bool = False) -> None:
        """A dict's keys (a set's items: ``typed``, each of its type, ``{True}`` not
        ``{1}``), in order."""
        c, d = source.code(self.ns), source.display()
        lit = literal(tuple(keys))
        if lit is not None and not typed:
            self._add(Guard(KEYS, source, f"_kiln_tuple({c}) == {lit}", f"tuple({d}) == {lit}",
                            seen=f"_kiln_tuple({c})"))
            return
        # Keys such as np.float32 or np.dtype('f4'): each of the same type and equal (a
        # dtype equals its name, 'float32', but a dict looks the two up apart).
        shown = key_text(tuple(keys))
        self._add(Guard(KEYS, source, f"{self.ns.ref(same_keys, 'f')}({c}, {self.ns.ref(tuple(keys), 'k')})",
                        f"tuple({d}) == {shown}", seen=f"_kiln_tuple({c})"))

    def add_not_shadowed(self, name: str) -> None:
        """A builtin was used: no global of the same name may appear later."""
        self._add(Guard(NOT_SHADOWED, None, f"{name!r} not in _kiln_G",
                        f"{name!r} not in G", seen="None"),
                  c_spec=(GlobalSource(name), "absent"))

    def add_array(self, source: Source, value: Any, dynamic_dims: frozenset) -> None:
        """type, dtype, ndim and every static size of an array; dynamic dims only >= 2.

        A kiln.Tensor also guards ``requires_grad`` (see :meth:`add_grad_mode`); an array
        on a GPU (kiln/array_kinds.py) its device. Only NumPy arrays are checked in C:
        fastcheck.c reads NumPy's array struct, which no other kind has."""
        c, d = source.code(self.ns), source.display()
        cls = type(value)
        kind = kind_of_type(cls)
        nd = self.ns.ref(cls, "ndarray" if kind is not None else "Tensor")
        dt = self.ns.ref(value.dtype, "dtype")
        shape = value.shape
        tensor = kind is None
        device = None if tensor else kind.device_id(value)
        # The combined check reads a Tensor's array and flag directly (its type is checked
        # first): no property calls on the cache-hit path.
        a = f"{c}._data" if tensor else c
        check = array_check() if kind is not None and kind.c_guard else None
        c_spec = None
        if check is not None:  # the same test in one C call (see guards/fastcheck.c)
            spec = tuple(-1 if i in dynamic_dims else n for i, n in enumerate(shape))
            fast = [f"{self.ns.ref(check, 'array_matches')}({c}, {nd}, {dt}, {literal(spec)})"]
            c_spec = (source, "array", cls, value.dtype, spec)
        else:
            fast = self._array_fast_python(c, a, nd, dt, value, dynamic_dims, tensor)
            if device is not None:
                fast.append(f"{c}.device.id == {device}")
        if tensor:
            rg = bool(value.requires_grad)
        if not self._add(Guard(TYPE, source, f"_kiln_type({c}) is {nd}",
                               f"type({d}) is {display_object(cls)}",
                               seen=f"_kiln_type({c}).__qualname__"), fast=" and ".join(fast),
                         c_spec=c_spec):
            return
        if tensor:
            self._add(Guard(REQUIRES_GRAD, source, f"{c}.requires_grad is {rg}",
                            f"{d}.requires_grad is {rg}", seen=f"{c}.requires_grad"), fast="True")
        if device is not None:
            self._add(Guard(DEVICE, source, f"{c}.device.id == {device}",
                            f"{d}.device.id == {device}", seen=f"{c}.device.id"), fast="True")
        self._add(Guard(DTYPE, source, f"{c}.dtype == {dt}", f"{d}.dtype == np.{value.dtype.name}",
                        seen=f"{c}.dtype"), fast="True")
        self._add(Guard(NDIM, source, f"{c}.ndim == {len(shape)}", f"{d}.ndim == {len(shape)}",
                        seen=f"{c}.ndim"), fast="True")
        for i, n in enumerate(shape):
            if i in dynamic_dims:
                g = Guard(SIZE, source, f"{c}.shape[{i}] >= 2", f"{d}.shape[{i}] >= 2",
                          seen=f"{c}.shape[{i}]", dim=i)
            else:
                g = Guard(SIZE, source, f"{c}.shape[{i}] == {n}", f"{d}.shape[{i}] == {n}",
                          seen=f"{c}.shape[{i}]", dim=i)
            self._add(g, fast="True")

    @staticmethod
    def _array_fast_python(c: str, a: str, nd: str, dt: str, value: Any,
                           dynamic_dims: frozenset, tensor: bool) -> list[str]:
        """The combined array check as Python (a Tensor, a device array, or no C helper)."""
        shape = value.shape
        fast = [f"_kiln_type({c}) is {nd}", f"{a}.dtype == {dt}"]
        if tensor:
            fast.append(f"{c}._requires_grad is {bool(value.requires_grad)}")
        if not dynamic_dims:
            fast.append(f"{a}.shape == {literal(tuple(shape))}")
        else:
            fast.append(f"{a}.ndim == {len(shape)}")
            for i, n in enumerate(shape):
                fast.append(f"{a}.shape[{i}] >= 2" if i in dynamic_dims else f"{a}.shape[{i}] == {n}")
        return fast

    def add_grad_mode(self) -> None:
        """Tensors were captured: the grad mode of the call is part of the key."""
        from ..autograd.grad_mode import is_grad_enabled
        enabled = is_grad_enabled()
        ref = self.ns.ref(is_grad_enabled, "is_grad_enabled")
        self._add(Guard(GRAD_MODE, None, f"{ref}() is {enabled}",
                        f"kiln.is_grad_enabled() is {enabled}", seen=f"{ref}()"))

    def specialize_dim(self, source: Source, dim: int, size: int) -> None:
        """A dynamic dimension flowed into something that needs its value: pin it."""
        c, d = source.code(self.ns), source.display()
        self._add(Guard(SIZE, source, f"{c}.shape[{dim}] == {size}", f"{d}.shape[{dim}] == {size}",
                        seen=f"{c}.shape[{dim}]", dim=dim))

    def mark(self) -> tuple:
        """Where the set stands now, for :meth:`unpin_since`."""
        return len(self.guards), None if self.c_specs is None else list(self.c_specs)

    def unpin_since(self, mark: tuple, dims: set) -> None:
        """Drop the pins of ``dims`` (``(source, dim)`` pairs) added since ``mark``: a
        failed loop attempt's, whose trackers got their dynamic dims back."""
        n, specs = mark
        drop = {k for k in range(n, len(self.guards)) if self.guards[k].kind == SIZE
                and "==" in self.guards[k].code and (self.guards[k].source, self.guards[k].dim) in dims}
        if not drop:
            return
        self._seen -= {self.guards[k].code for k in drop}
        kept = [k for k in range(len(self.guards)) if k not in drop]
        if specs is not None:
            later = [(self.fast[k], self._c_of.get(id(self.guards[k]))) for k in kept if k >= n]
            specs += [c for f, c in later if f != "True"]
            self.c_specs = None if any(c is None for f, c in later if f != "True") else specs
        self.guards = [self.guards[k] for k in kept]
        self.fast = [self.fast[k] for k in kept]

    def without_branches(self) -> "GuardSet":
        """These guards less the TRUTH ones (which way a branch on a run-time scalar went)
        and those on the items of a long list or tuple past its first ``ITEMS_KEPT``:
        enough for an entry that runs the function as Python, which takes every branch
        itself (a ``while n != 1`` over an int leaves one per iteration) and reads every
        item (``for i in idx.tolist()`` left a type guard per item: 2,000 of them, a fifth
        of a call to check)."""
        out = GuardSet(self.ns, c_specs=None)
        for guard, fast in zip(self.guards, self.fast):
            if guard.kind != TRUTH and not _far_item(guard.source):
                out.guards.append(guard)
                out.fast.append(fast)
                out._seen.add(guard.code)
        return out

    def texts(self) -> list[str]:
        # A pinned dynamic dim shows its pin, not the ">= 2" it replaced.
        pinned = {(g.source, g.dim) for g in self.guards if g.kind == SIZE and "==" in g.code}
        return [g.text for g in self.guards
                if not (g.kind == SIZE and ">=" in g.code and (g.source, g.dim) in pinned)]
