"""Rebuilding a stopped capture's state as Python: the expressions over the entry's
parameters and the graph's outputs (``_kiln_out``) that remake each tracker at a graph
break, for the segment's arguments (kiln/capture/partial.py ``build``).

:class:`Rebuilder` turns one tracker into one expression: functions, modules and objects
by reference; lists, dicts, iterators, ``functools.partial`` objects and functions made
in the frame once each, under a name (a line run before the segment), so every place
that reaches one shares the object, as in the frame; iterators advanced to where the
capture left them, over the real list, dict or array. :func:`_frozen_cells` says which
of the frame's cell variables nothing writes after the break, so a function made in the
frame may be rebuilt over a copy of its cell.
"""
from __future__ import annotations

import functools
import itertools
import types
from typing import Any, Callable

from . import bytecode_facts as bf
from .loop_lists import StackedListVariable
from .loops import RangeItems
from .output import once_if_long
from .sources import local_name
from .variables.arrays import MaskedSelectionVariable
from .variables.base import CellVariable, ConstantVariable, VariableTracker
from .variables.builtins import BuiltinVariable
from .variables.containers import (ContainerMethodVariable, DictVariable, DictViewVariable, ListVariable,
                                   NamedTupleVariable, TupleVariable, rebuild_dict)
from .variables.iterators import (AccumulateIteratorVariable, ArrayIteratorVariable,
                                  IteratorVariable, MapIteratorVariable,
                                  ZipIteratorVariable, changed_dict_iter)
from .variables.user_classes import NewObjectVariable
from .variables.functions import (ArrayMethodVariable, MathFunctionVariable, ModuleVariable,
                                  NestedFunctionVariable, NumpyFunctionVariable, PartialVariable,
                                  UfuncMethodVariable, UserFunctionVariable, UserMethodVariable,
                                  UserObjectVariable)


def _make_function(code, fn_globals, defaults, kwdefaults, cells):
    fn = types.FunctionType(code, fn_globals, code.co_name, defaults or None, cells or None)
    fn.__kwdefaults__ = kwdefaults or None
    fn.__qualname__ = code.co_qualname
    return fn


def _advanced_iter(items: Any, taken: int) -> Any:
    """``iter(items)`` with ``taken`` items already consumed."""
    it = iter(items)
    for _ in range(taken):
        next(it, None)
    return it


def _reversed_at(items: list, index: int) -> Any:
    """``reversed(items)`` whose next item is ``items[index]``, as Python's iterator made
    before the list changed: past the list's end it is exhausted."""
    if index >= len(items):
        return iter(())
    it = reversed(items)
    it.__setstate__(index)
    return it


class Rebuilder:
    """Python expressions (over the entry's parameters and ``_kiln_out``) for trackers."""

    def __init__(self, tx, output, frozen_cells: frozenset = frozenset()) -> None:
        self.tx = tx
        self.output = output
        self.ns = output.ns
        # Cell variables of the frame that nothing writes after the break.
        self.frozen_cells = frozen_cells
        # Lists and dicts made in the frame are built once, under a name, so every place
        # that reaches one (a local, a pending h.append, another container) shares it.
        self.named: dict[int, str] = {}
        self.lines: list[str] = []

    def __call__(self, var: VariableTracker) -> str:
        from .variables.base import LazyVariable
        ref = self.ns.ref
        if isinstance(var, LazyVariable):
            return var.source.code(self.ns)   # an argument never used: passed as it is
        if isinstance(var, BuiltinVariable):
            return ref(var.fn, "f")
        if isinstance(var, (UserFunctionVariable, NumpyFunctionVariable, MathFunctionVariable)):
            return self.output.object_code(var.source) if var.source is not None else ref(var.fn, "f")
        if isinstance(var, ModuleVariable):
            return ref(var.module, "m")
        if isinstance(var, NewObjectVariable):
            return self.once(var, lambda v: v.rebuild(self, self.ns))
        if isinstance(var, UserObjectVariable):
            return self.output.object_code(var.source) if var.source is not None else ref(var.obj)
        if isinstance(var, ContainerMethodVariable):
            return f"{self(var.obj)}.{var.name}"
        if isinstance(var, ArrayMethodVariable):
            return f"{self(var.array)}.{var.name}"
        if isinstance(var, UfuncMethodVariable):
            return f"{ref(var.ufunc, 'f')}.{var.method}"
        if isinstance(var, UserMethodVariable):
            return f"{ref(types.MethodType, 'type')}({ref(var.fn, 'f')}, {self(var.self_var)})"
        if isinstance(var, IteratorVariable):
            # the loop's iterator on the stack and a local naming it (``it = iter(x); for
            # v in it: ...``) are one object, as in the frame
            return self.once(var, self.iterator)
        if isinstance(var, NestedFunctionVariable):
            return self.nested_function(var)
        if isinstance(var, PartialVariable):   # made once: a local and a dict entry share it
            return self.output.object_code(var.source) if var.source is not None \
                else self.once(var, self.partial_object)
        if isinstance(var, DictViewVariable):
            return f"{self(var.owner)}.{var.kind}()"
        if isinstance(var, (ListVariable, DictVariable)) and var.source is None:
            return self.once(var, self.container)
        if isinstance(var, TupleVariable) and var.source is None:
            return once_if_long(var, self.container, self.named, self.line)
        if isinstance(var, ConstantVariable) and type(var.value) is set and var.source is None:
            # a set made in the frame ({9}, a comprehension's): a new one on every call, made
            # once so every place that reaches it shares it (the entry's own set, handed to
            # the segment, was the same object every call)
            return self.once(var, lambda v: f"{ref(set, 'f')}({ref(frozenset(v.value))})")
        if isinstance(var, StackedListVariable):   # a list too (``other = losses``: one list)
            return self.once(var, lambda v: v.rebuild(self))
        if isinstance(var, MaskedSelectionVariable) and var.taken is None:
            # x[mask] taken after the graph: once, so that a local and a value on the stack
            # (a view of it, say) stay one array, as in the frame
            return self.once(var, lambda v: self.output.reconstruct(self.tx, v))
        return self.output.reconstruct(self.tx, var)

    def once(self, var: VariableTracker, make: Callable[[VariableTracker], str]) -> str:
        """``var`` made once, under a name (a line run before the segment), so every place
        that reaches it shares one object."""
        name = self.named.get(id(var))
        if name == "pending":   # it holds itself (``a.append(a)``, ``self.me = self``)
            self.tx.unsupported("unsupported_value", f"{var.describe()} holds itself at a graph break")
        if name is None:
            self.named[id(var)] = "pending"
            name = self.named[id(var)] = self.line(make(var))
        return name

    def line(self, code: str) -> str:
        """A name ``code`` is evaluated into, in a line run before the segment."""
        name = local_name("c", len(self.lines))
        self.lines.append(f"{name} = {code}")
        return name

    def iterator(self, var: IteratorVariable) -> str:
        """The rest of a loop capture was unrolling: ``iter(range(..))`` when it is one; a
        loop over a list goes on over the real list (live, as Python walks it), from where
        it was."""
        if isinstance(var, AccumulateIteratorVariable):   # from its running value on
            made = f"{self.ns.ref(itertools.accumulate, 'f')}({self(var.parts[0])}, " \
                   f"{'None' if var.fn is None else self(var.fn)}" + \
                   ("" if var.acc is None else f", initial={self(var.acc)}") + ")"
            if var.acc is None or var.first:
                return made
            return f"{self.ns.ref(_advanced_iter, 'f')}({made}, 1)"   # (its initial: taken)
        if isinstance(var, ZipIteratorVariable):   # zip/enumerate over the parts where they are
            parts = ", ".join(self(p) for p in var.parts)
            if isinstance(var, MapIteratorVariable):
                return f"{self.ns.ref(var.kind, 'builtin')}({self(var.fn)}, {parts})"
            if var.count is None:
                return f"{self.ns.ref(zip, 'builtin')}({parts})"
            return f"{self.ns.ref(enumerate, 'builtin')}({parts}, {var.count})"
        if isinstance(var.origin, ListVariable) and var.reverse:   # its index counts down
            return f"{self.ns.ref(_reversed_at, 'f')}({self(var.origin)}, {len(var.pending) - 1})"
        if isinstance(var.origin, ListVariable):
            ref = self.ns.ref(_advanced_iter, "f")
            return f"{ref}({self(var.origin)}, {var.taken})"
        if isinstance(var.origin, DictVariable):   # the real dict, live: grown, Python's next raises
            ref = self.ns.ref(changed_dict_iter if var.changed() else _advanced_iter, "f")
            return f"{ref}({self(var.origin)}, {var.taken})"
        if isinstance(var, ArrayIteratorVariable):     # the real array, read live from where it was
            ref = self.ns.ref(_advanced_iter, "f")
            if var.reverse:
                return f"{ref}({self.ns.ref(reversed, 'builtin')}({self(var.array)}), {var.taken})"
            if var.start is None:
                return f"{ref}({self(var.array)}, {var.taken})"
            return f"{ref}(enumerate({self(var.array)}, {var.start}), {var.taken})"
        remake = getattr(var, "python_iterable", None)
        if remake is not None:     # np.nditer(a), np.ndenumerate(a): NumPy's own, from where it was
            return f"{self.ns.ref(_advanced_iter, 'f')}({remake(self, self.ns)}, {var.taken})"
        items = var.pending
        if isinstance(items, RangeItems):
            r = items.steps
            return f"iter({self.ns.ref(range, 'builtin')}({r.start}, {r.stop}, {r.step}))"
        values = [v.value for v in items if v.is_constant() and type(v.value) is int]
        if len(values) == len(items) >= 2 and len({b - a for a, b in zip(values, values[1:])}) == 1 \
                and values[1] != values[0]:
            step = values[1] - values[0]
            return f"iter(range({values[0]}, {values[-1] + step}, {step}))"
        return f"iter([{', '.join(self(v) for v in items)}])"

    def container(self, var) -> str:
        if isinstance(var, DictVariable):
            from ..guards.guard import literal
            return rebuild_dict(var, "{" + ", ".join(f"{literal(k) or self.ns.ref(k)}: {self(v)}"
                                                     for k, v in var.entries.items()) + "}", self.ns)
        inner = ", ".join(self(v) for v in var.item_list)
        if isinstance(var, ListVariable):
            return f"[{inner}]"
        if isinstance(var, NamedTupleVariable):   # the same class (SVDResult, a user's NamedTuple)
            return f"{self.ns.ref(var.cls, 'cls')}({inner})"
        return f"({inner},)" if len(var.item_list) == 1 else f"({inner})"

    def partial_object(self, var: PartialVariable) -> str:
        parts = [self(var.func)] + [self(a) for a in var.args] + \
            [f"**{{{k!r}: {self(v)}}}" for k, v in var.kwargs.items()]
        return f"{self.ns.ref(functools.partial, 'f')}({', '.join(parts)})"

    def nested_function(self, var: NestedFunctionVariable) -> str:
        """The function made once, under a name, like a container. Its copied cells are
        made empty and filled after it, so a function whose closure reaches itself (a
        recursive helper, two helpers calling each other) refers to the one object."""
        fills: list = []
        name = self.once(var, lambda v: self._function(v, fills))
        for cell_name, contents in fills:
            self.lines.append(f"{cell_name}.cell_contents = {self(contents)}")
        return name

    def _function(self, var: NestedFunctionVariable, fills: list) -> str:
        """The expression making ``var``; its copied cells, made empty, go to ``fills``."""
        from .variables.base import RealCellVariable
        cells = []
        for cell in var.closure:
            if isinstance(cell, RealCellVariable):
                cells.append(self.ns.ref(self.ns.closure[cell.name], "cell"))
            elif isinstance(cell, CellVariable) and cell.contents is not None \
                    and cell.name in self.frozen_cells:
                # Never written again after the break: a copy of the cell is as good.
                cell_name = local_name("c", len(self.lines))
                self.lines.append(f"{cell_name} = {self.ns.ref(types.CellType, 'type')}()")
                cells.append(cell_name)
                fills.append((cell_name, cell.contents))
            else:
                # A closure over this frame's own variables, made before the break: a
                # rebuilt function gets a new cell, so writes to the variable after the
                # break (in the resume function) would not reach it. Run the whole
                # function as Python instead: a break must never change results.
                self.tx.unsupported("closure_cell", f"closure '{var.code.co_name}' shares a "
                                    f"variable of the frame across a graph break",
                                    "move the break (print, unsupported call) out of the "
                                    "function, or pass the value as an argument")
        defaults = "(" + "".join(f"{self(d)}, " for d in var.defaults) + ")"
        kwdefaults = "{" + ", ".join(f"{k!r}: {self(v)}" for k, v in var.kwdefaults.items()) + "}"
        closure = "(" + "".join(f"{c}, " for c in cells) + ")"
        return (f"{self.ns.ref(_make_function, 'f')}({self.ns.ref(var.code, 'code')}, "
                f"{self.ns.ref(var.fn_globals, 'G')}, {defaults}, {kwdefaults}, {closure})")


def _frozen_cells(facts, a: int, cellvars: tuple = ()) -> frozenset:
    """Cell variables whose every store comes before instruction ``a`` and outside any
    loop that contains ``a`` (so no write can follow the break). A parameter a closure
    reads (``def A(p): ... dx ...``) and nothing stores is frozen too."""
    stores: dict[str, list[int]] = {name: [] for name in cellvars}
    for k, (name, arg) in enumerate(zip(facts.names, facts.args)):
        if bf.is_cell_store(name):
            stores.setdefault(getattr(arg, "name", arg), []).append(k)
    frozen = set()
    for var, at in stores.items():
        if all(k < a for k in at) and not any(head <= a <= back and head <= k <= back
                                              for head, back in facts.loops for k in at):
            frozen.add(var)
    return frozenset(frozen - _nonlocal_stores(facts.code))


def _nonlocal_stores(code: types.CodeType) -> set:
    """Names that functions nested in ``code`` (at any depth) assign through ``nonlocal``:
    such a cell may be written after a break by the function the break rebuilds."""
    import dis
    names: set = set()
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= {i.argval for i in dis.get_instructions(const)
                      if bf.is_cell_store(i.opname) and i.argval in const.co_freevars}
            names |= _nonlocal_stores(const)
    return names
