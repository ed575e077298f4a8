"""Sources: where an input-derived value came from, as a Python expression.

A source prints the way a user would write it (``x``, ``x.shape[0]``, ``cfg.scale``,
``G['EPS']``, ``C['scale']`` for a closure variable) and renders, for generated guard
and prologue code, to an expression over the compiled function's parameters and a small
namespace (:class:`CodeNamespace`). Guards, graph inputs and error messages all name
values through sources.

    >>> s = GetItemSource(AttrSource(LocalSource("x"), "shape"), 0)
    >>> s.display()
    'x.shape[0]'
"""
from __future__ import annotations

from typing import Any


def local_name(kind: str, i: int) -> str:
    """The ``i``-th name of ``kind`` an entry's body binds (``_kiln_o_3``: a value read or
    computed once, a container, a run-time scalar). Never one of CodeNamespace's names
    (``_kiln_o3``, whose hint ends in a letter): a body binding one would make it a local
    of the whole entry, so a guard reading it raised (UnboundLocalError: every call
    missed) and code after the binding read the wrong object."""
    return f"_kiln_{kind}_{i}"


class CodeNamespace:
    """Objects generated code refers to by name (``_kiln_o3``)."""

    def __init__(self, fn_globals: dict, closure: dict[str, Any]) -> None:
        # Builtins under private names: a parameter called ``type`` or ``len`` must not
        # change what a guard means.
        self.values: dict[str, Any] = {"_kiln_G": fn_globals, "_kiln_type": type, "_kiln_len": len,
                                       "_kiln_bool": bool, "_kiln_tuple": tuple,
                                       "_kiln_hasattr": hasattr}
        self._ids: dict[int, str] = {}
        self.closure = closure  # free variable name -> cell

    def ref(self, obj: Any, hint: str = "o") -> str:
        name = self._ids.get(id(obj))
        if name is None:
            assert hint[-1:].isalpha(), hint   # (so that no local_name is one of these)
            name = f"_kiln_{hint}{len(self.values)}"
            self.values[name] = obj
            self._ids[id(obj)] = name
        return name


class Source:
    __slots__ = ()

    def display(self) -> str:
        raise NotImplementedError

    def code(self, ns: CodeNamespace) -> str:
        raise NotImplementedError

    @property
    def root(self) -> "Source":
        return self

    def is_argument(self) -> bool:
        """Does the value come from the call's arguments (not a global, closure or attribute)?"""
        return False

    def __repr__(self) -> str:
        return self.display()

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.display() == other.display()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.display()))


class LocalSource(Source):
    """A parameter of the compiled function."""
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def display(self) -> str:
        return self.name

    def code(self, ns: CodeNamespace) -> str:
        return self.name

    def is_argument(self) -> bool:
        return True


class GlobalSource(Source):
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def display(self) -> str:
        return f"G[{self.name!r}]"

    def code(self, ns: CodeNamespace) -> str:
        return f"_kiln_G[{self.name!r}]"


class ModuleGlobalSource(Source):
    """A global of another module, read by a helper defined there."""
    __slots__ = ("module_globals", "name")

    def __init__(self, module_globals: dict, name: str) -> None:
        self.module_globals = module_globals
        self.name = name

    def display(self) -> str:
        return f"{self.module_globals.get('__name__', '?')}.{self.name}"

    def code(self, ns: CodeNamespace) -> str:
        return f"{ns.ref(self.module_globals, 'globals')}[{self.name!r}]"


class ClosureSource(Source):
    """The current value of a closure (free) variable of the compiled function."""
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def display(self) -> str:
        return f"C[{self.name!r}]"

    def code(self, ns: CodeNamespace) -> str:
        return f"{ns.ref(ns.closure[self.name], 'cell')}.cell_contents"


class AttrSource(Source):
    __slots__ = ("base", "attr")

    def __init__(self, base: Source, attr: str) -> None:
        self.base = base
        self.attr = attr

    def display(self) -> str:
        return f"{self.base.display()}.{self.attr}"

    def code(self, ns: CodeNamespace) -> str:
        return f"{self.base.code(ns)}.{self.attr}"

    @property
    def root(self) -> Source:
        return self.base.root

    def is_argument(self) -> bool:
        # Attributes of arguments are read state (guarded by value), like globals.
        return False


class GetItemSource(Source):
    __slots__ = ("base", "index")

    def __init__(self, base: Source, index: Any) -> None:
        self.base = base
        self.index = index

    def display(self) -> str:
        return f"{self.base.display()}[{key_text(self.index)}]"

    def code(self, ns: CodeNamespace) -> str:
        key = repr(self.index) if _plain_key(self.index) else ns.ref(self.index, "k")
        return f"{self.base.code(ns)}[{key}]"

    @property
    def root(self) -> Source:
        return self.base.root

    def is_argument(self) -> bool:
        # Items of *args / **kwargs / tuples passed in are arguments too, and so are
        # shape entries of argument arrays.
        return self.base.is_argument() or (isinstance(self.base, AttrSource)
                                           and self.base.attr == "shape"
                                           and self.base.base.is_argument())


def key_text(key: Any) -> str:
    """A dict key as a user writes it: ``np.float32``, not ``<class 'numpy.float32'>``."""
    if type(key) is tuple:
        inner = ", ".join(key_text(k) for k in key)
        return f"({inner},)" if len(key) == 1 else f"({inner})"
    if isinstance(key, type):
        return ("np." if key.__module__ == "numpy" else "") + key.__qualname__
    return repr(key)


def _plain_key(key: Any) -> bool:
    """A key whose repr is Python that makes it (not a class such as np.float32)."""
    if type(key) is tuple:
        return all(_plain_key(k) for k in key)
    return key is None or type(key) in (str, int, bool, bytes) or (type(key) is float and key == key
                                                                   and abs(key) != float("inf"))


class CallOfSource(Source):
    """``fn(base)`` of a sourced value, for a function named by the subclass (``NAME``
    shown, ``FN`` called by generated code)."""
    __slots__ = ("base",)
    NAME, FN, HINT = "", staticmethod(len), "f"

    def __init__(self, base: Source) -> None:
        self.base = base

    def display(self) -> str:
        return f"{self.NAME}({self.base.display()})"

    def code(self, ns: CodeNamespace) -> str:
        return f"{ns.ref(self.FN, self.HINT)}({self.base.code(ns)})"

    @property
    def root(self) -> Source:
        return self.base.root

    def is_argument(self) -> bool:
        return self.base.is_argument()


class LenSource(CallOfSource):
    """``len()`` of a sourced container: a run-time int (``len(items)`` of a list that
    crossed a graph break), specialized and guarded only where it decides something."""
    __slots__ = ()
    NAME, FN, HINT = "len", staticmethod(len), "builtin"


class ObjectSource(Source):
    """A specific object capture found without a path from the frame (a method's function):
    generated code holds it directly."""
    __slots__ = ("obj", "name")

    def __init__(self, obj: Any, name: str) -> None:
        self.obj = obj
        self.name = name

    def display(self) -> str:
        return self.name

    def code(self, ns: CodeNamespace) -> str:
        return ns.ref(self.obj, "obj")


def shape_source(array_source: Source, dim: int) -> Source:
    return GetItemSource(AttrSource(array_source, "shape"), dim)


def range_rest(it: Any) -> range:
    """The steps a live range iterator has left, as a range (``it.__reduce__()`` is
    ``(iter, (range,), index)``; 3.12+ already start the range at the next step and give
    None for the index)."""
    _, (r,), index = it.__reduce__()
    return r[index:] if index else r


class RangeRestSource(CallOfSource):
    """``rest(it)``: the range of the steps a range iterator handed in still has to take
    (a loop's iterator on a resume function's stack), read when the entry is called."""
    __slots__ = ()
    NAME, FN = "rest", staticmethod(range_rest)


def moves_every_step(source: Source) -> bool:
    """``rest(it).start``: the next value of a loop that goes on from an earlier graph,
    another at every step (guarded by value, its entry would be compiled once per step)."""
    return isinstance(source, AttrSource) and isinstance(source.base, RangeRestSource) \
        and source.attr == "start"
