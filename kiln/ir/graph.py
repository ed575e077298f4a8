"""kiln's graph IR: a Graph is an ordered list of Nodes, and a Node is one of four kinds.

- ``placeholder``: a graph input (``target`` is its name);
- ``constant``:    a value baked into the graph (an array, a dtype; ``target`` is the value);
- ``call``:        a call of an inventory op (``target`` is the :class:`~kiln.ops.Op`,
                   ``args`` its inputs — Nodes, Python scalars, or tuples of them —,
                   ``kwargs`` its static params);
- ``output``:      the graph's result (``args[0]`` is a tuple of Nodes/values).

The meaning of a node lives in its target, so the IR never grows. ``meta`` carries
``val`` (a :class:`~kiln.ops.TensorMeta`: shape and dtype) and ``source`` (the user's
file, line number and source text). Users are kept up to date automatically.

    >>> import numpy as np
    >>> from kiln.ir import Graph
    >>> from kiln.ops import F, TensorMeta
    >>> g = Graph()
    >>> x = g.placeholder("x", TensorMeta((3,), np.float64))
    >>> y = g.call(F.sin, (x,))
    >>> _ = g.output((y,))
    >>> g(np.zeros(3))
    (array([0., 0., 0.]),)
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ..ops import Op, TensorMeta, infer_meta
from ..ops.registry import iter_leaves, map_leaves
from ..ops.value_warnings import method_at, ufunc_at, ufunc_part_at

KINDS = ("placeholder", "constant", "call", "output")


class Node:
    __slots__ = ("graph", "name", "kind", "target", "_args", "kwargs", "meta", "users")

    def __init__(self, graph: "Graph", name: str, kind: str, target: Any, args: tuple,
                 kwargs: dict, meta: dict | None = None) -> None:
        assert kind in KINDS, kind
        self.graph = graph
        self.name = name
        self.kind = kind
        self.target = target
        self.kwargs = dict(kwargs)
        self.meta = dict(meta or {})
        self.users: dict[Node, None] = {}
        self._args: tuple = ()
        self.args = args

    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, new: tuple) -> None:
        for node in iter_nodes(self._args):
            node.users.pop(self, None)
        self._args = tuple(new)
        for node in iter_nodes(self._args):
            node.users[self] = None

    @property
    def inputs(self) -> list["Node"]:
        """The nodes this node reads, in order, without duplicates."""
        return list(dict.fromkeys(iter_nodes(self._args)))

    @property
    def op(self) -> Op:
        assert self.kind == "call", f"{self.name} is a {self.kind}, not a call"
        return self.target

    @property
    def val(self) -> TensorMeta | None:
        return self.meta.get("val")

    def replace_all_uses_with(self, other: "Node") -> None:
        for user in list(self.users):
            user.args = map_nodes(user.args, lambda n: other if n is self else n)

    def __repr__(self) -> str:
        return self.name


class SizeRef:
    """A dim of a graph input inside a call's params: ``broadcast_to(g, shape=(x.shape[0],
    3))`` in a backward graph built while ``x.shape[0]`` is a dynamic size
    (kiln/capture/variables/grad.py). ``array`` names the placeholder; whoever runs the
    graph reads the size from its value (:func:`resolve_sizes`); the graph prints it as
    ``x.shape[0]``. Not an int: arithmetic on it raises TypeError (a derivative rule that
    needs a number cannot be symbolic; the caller specializes the size instead), and it
    equals no number (it is at least 2 and capture pins a dynamic dim that meets one).
    What a rule decides with it is checked by running the shape rules at other sizes."""

    __slots__ = ("array", "dim", "example")

    def __init__(self, array: str, dim: int, example: int) -> None:
        self.array, self.dim, self.example = array, dim, example

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, SizeRef):
            return type(other) is type(self) and (self.array, self.dim) == (other.array, other.dim)
        if isinstance(other, int):
            # A dynamic size is at least 2, and never a static size it meets (capture
            # pins a dynamic dim that meets a number in broadcasting).
            return False
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.array, self.dim))

    def __index__(self) -> int:
        raise TypeError(f"the size {self!r} is dynamic here; a number is needed")

    def __mul__(self, other: Any) -> "SizeRef | SizeProduct":
        if isinstance(other, int) and not isinstance(other, bool) and other == 1:
            return self   # the size of a 1-d array (math.prod of its shape) is its dim
        return SizeProduct((self,)) * other

    __rmul__ = __mul__

    def less(self, ddof: Any) -> "SizeProduct":
        """The divisor ``N - ddof`` of a var/std derivative (NaN where not positive)."""
        return SizeProduct((self,), ddof)

    def __repr__(self) -> str:
        return f"{self.array}.shape[{self.dim}]"


class SliceLength(SizeRef):
    """The length of a slice of a dim, ``len(range(L)[start:stop:step])``, inside a call's
    params: the backward of ``x[:n]`` (``n`` an int argument) or of ``x[1:]`` on a dim of
    changing length broadcasts its cotangent to ``(len(range(x.shape[0])[:n]),)``
    (kiln/ir/symbolic.py writes it). ``length`` is an int, a :class:`SizeRef` or another
    SliceLength (a slice of a slice); each of ``bounds`` (start, stop, step) is an int,
    None, or a str: the name of the int placeholder holding it. Whoever runs the graph
    resolves it with Python's own slicing of a range (:func:`resolve_sizes`), so clamping
    and negative bounds are NumPy's for every call; lowering resolves it to the count
    symbol of the slice itself (kiln/lowering/sizes.py ``int_slice``). ``array``/``dim``
    name the dim at its root (None for a static length)."""

    __slots__ = ("length", "bounds")

    def __init__(self, length: Any, bounds: tuple, example: int) -> None:
        root = length
        while isinstance(root, SliceLength):
            root = root.length
        super().__init__(getattr(root, "array", None), getattr(root, "dim", None), example)
        self.length, self.bounds = length, tuple(bounds)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, SliceLength):
            return (self.length, self.bounds) == (other.length, other.bounds)
        return False if isinstance(other, (SizeRef, int)) else NotImplemented

    def __hash__(self) -> int:
        return hash(("slice", self.length, self.bounds))

    @property
    def names(self) -> set:
        """The int placeholders its value reads (bounds here and in the slices below)."""
        out = {b for b in self.bounds if isinstance(b, str)}
        return out | (self.length.names if isinstance(self.length, SliceLength) else set())

    def __repr__(self) -> str:
        text = ["" if b is None else str(b) for b in self.bounds]
        inner = f"{text[0]}:{text[1]}" + ("" if self.bounds[2] is None else f":{text[2]}")
        return f"len(range({self.length!r})[{inner}])"


class SizeProduct:
    """A product of input sizes and ints (a reduction's element count, ``math.prod`` of a
    shape with SizeRefs). Only an operand of an op can hold one (the ``1/N`` of a mean's
    derivative): the one writing the graph makes it a graph input (kiln/ir/tracer.py).

    With ``ddof`` set it is the divisor of a ``var``/``std`` derivative instead: the
    float ``N - ddof``, NaN where that is not positive (:meth:`finish`)."""

    __slots__ = ("factors", "ddof")

    def __init__(self, factors: tuple, ddof: Any = None) -> None:
        self.factors = factors
        self.ddof = ddof

    def __mul__(self, other: Any) -> "SizeProduct":
        if self.ddof is not None:
            return NotImplemented
        if isinstance(other, SizeProduct) and other.ddof is None:
            return SizeProduct(self.factors + other.factors)
        if isinstance(other, SizeRef) or (isinstance(other, int) and not isinstance(other, bool)):
            return SizeProduct(self.factors + (other,))
        return NotImplemented

    __rmul__ = __mul__

    def less(self, ddof: Any) -> "SizeProduct":
        """The divisor ``N - ddof`` of a var/std derivative (NaN where not positive)."""
        return SizeProduct(self.factors, ddof)

    def finish(self, n: int) -> Any:
        """The operand's value given the product ``n`` of its factors' values."""
        return finish_count(n, self.ddof)

    def finish_code(self, product: str) -> str:
        """:meth:`finish` as a Python expression over the product's expression."""
        if self.ddof is None:
            return product
        dof = f"({product} - {self.ddof!r})"
        return f"(float({dof}) if {dof} > 0 else float('nan'))"

    @property
    def example(self) -> Any:
        out = 1
        for f in self.factors:
            out *= f.example if isinstance(f, SizeRef) else f
        return self.finish(out)

    def __repr__(self) -> str:
        text = " * ".join(repr(f) for f in self.factors if not (isinstance(f, int) and f == 1))
        return text if self.ddof is None else f"({text}) - {self.ddof}"


def finish_count(n: int, ddof: Any) -> Any:
    """A count as a derivative's divisor: ``n`` itself (``ddof`` None: a mean's), or the
    float ``n - ddof``, NaN where that is not positive (var/std; as NumPy's var)."""
    if ddof is None:
        return n
    n -= ddof
    return float(n) if n > 0 else math.nan


def has_size_refs(params: dict) -> bool:
    """Does a param, or an item of a tuple/list param (a shape), hold a SizeRef?"""
    for v in params.values():
        if isinstance(v, SizeRef) or (type(v) in (tuple, list) and any(isinstance(e, SizeRef) for e in v)):
            return True
    return False


def size_ref_names(calls: Any) -> list:
    """The placeholders the SizeRefs in these calls' params read: each one's array, and
    the int placeholders of a SliceLength's bounds."""
    refs = [r for n in calls if "size_refs" in n.meta
            for v in n.kwargs.values() for r in iter_leaves(v) if isinstance(r, SizeRef)]
    return [r.array for r in refs] + [b for r in refs if isinstance(r, SliceLength) for b in r.names]


def resolve_sizes(params: dict, size: Callable[["SizeRef"], Any], scalar: Callable | None = None,
                  count: Callable | None = None) -> dict:
    """``params`` with every :class:`SizeRef` replaced by ``size(ref)``. A
    :class:`SliceLength` becomes its example without ``scalar`` (int placeholder name ->
    its value); with it, Python's ``len(range(L)[start:stop:step])``, or ``count(L,
    start, stop, step)`` where given (lowering: the slice's count symbol)."""
    def one(r: SizeRef) -> Any:
        if not isinstance(r, SliceLength):
            return size(r)
        if scalar is None:
            return r.example
        length = one(r.length) if isinstance(r.length, SizeRef) else r.length
        parts = tuple(scalar(b) if isinstance(b, str) else b for b in r.bounds)
        return count(length, *parts) if count is not None else len(range(length)[slice(*parts)])
    return {k: map_leaves(v, lambda x: one(x) if isinstance(x, SizeRef) else x) for k, v in params.items()}


def iter_nodes(value: Any) -> Iterator[Node]:
    """Every Node inside nested tuples/lists/slices of ``value``."""
    return (v for v in iter_leaves(value) if isinstance(v, Node))


def map_nodes(value: Any, fn: Callable[[Node], Any]) -> Any:
    """Rebuild nested tuples/lists/slices with every Node replaced by ``fn(node)``."""
    return map_leaves(value, lambda v: fn(v) if isinstance(v, Node) else v)


_IDENT = re.compile(r"[^0-9a-zA-Z_]")



_NUMPY_CALLABLES = (np.ufunc, type(np.where))   # (NumPy's array-function dispatchers)


def extern_impl(node: Node) -> Callable:
    """What runs call ``node`` as NumPy: its op's impl, or the ndarray method the user
    called, called from the user's line (``meta["method"]``: NumPy's method warns there),
    as is an op's ufunc (it warns at the frame calling it)."""
    source = node.meta.get("source")
    part = node.meta.get("ufunc")
    if part is not None and source and source[0]:
        # result i of a ufunc's one call (np.divmod): it warns as that call, once, from the
        # first of its results the graph computes
        name, i = part
        earlier = {(name, j) for j in range(i)}
        quiet = any(n.kind == "call" and n.meta.get("ufunc") in earlier and len(n.args) == len(node.args)
                    and all(a is b for a, b in zip(n.args, node.args)) for n in node.graph.nodes)
        return ufunc_part_at(getattr(np, name), i, source[0], source[1], quiet)
    at = numpy_call_at(node)
    if at is None:
        return node.target.impl
    what, filename, lineno = at
    if isinstance(what, str):
        return method_at(what, filename, lineno)
    if isinstance(what, tuple):
        return node.target.impl_at(filename, lineno)
    return ufunc_at(what, filename, lineno)


def numpy_call_at(node: Node) -> tuple | None:
    """``(what, file, line)``: what a NumPy run of call ``node`` calls from the user's line
    (``file:line``), where NumPy's code warns at the frame calling it: the ndarray method
    the user called (a name: ``meta["method"]``, or the op's ``numpy_method`` on an array,
    astype's "invalid value encountered in cast"), ``(op name, "impl")`` for an op whose
    impl makes its NumPy call there (Op.impl_at), or the op's impl itself (a ufunc, or a
    NumPy function such as np.where). None: its impl, called as it is."""
    method, source = node.meta.get("method"), node.meta.get("source")
    if not (source and source[0]):
        return None
    op = node.target
    if method is None and op.numpy_method and all(isinstance(a, Node) for a in node.args[:1]):
        method = op.numpy_method   # (an array's method: astype's warnings)
    if method is not None:
        return method, source[0], source[1]
    if op.impl_at is not None:
        return (op.name, "impl"), source[0], source[1]
    # (a ufunc, or a NumPy function itself (np.where), warns at the frame calling it: the
    # user's line, as NumPy's call)
    return (op.impl, source[0], source[1]) if isinstance(op.impl, _NUMPY_CALLABLES) else None


def kept_meta(node: Node) -> dict:
    """What a copy of call ``node`` in another graph keeps of its meta besides ``val``
    (``Graph.call``'s ``source``, ``quiet``, ``errstate``, ``method``, ``ufunc``,
    ``out_write``, ``step`` and ``sizes_meet``)."""
    return {"source": node.meta.get("source"), "quiet": node.meta.get("quiet", False),
            "errstate": node.meta.get("errstate", ()),
            "method": node.meta.get("method"), "ufunc": node.meta.get("ufunc"),
            "out_write": node.meta.get("out_write", False),
            "step": bool(node.meta.get("inner") or node.meta.get("step")),
            "sizes_meet": node.meta.get("sizes_meet", False)}


def out_write(node: Node) -> Node | None:
    """The write of ``node``'s value into the ``out=`` array of the user's call (or an
    in-place operator's target): a mutation capture recorded with ``out_write``. NumPy
    computes the whole call into ``out`` before it checks the error flags, so where the
    call raises for its error mode (FloatingPointError, a RuntimeWarning made an error, the
    exception of an ``np.errstate(call=f)`` handler) a NumPy run of the graph still does
    this write, then raises (:func:`write_before_raise`)."""
    for user in node.users:
        if user.meta.get("out_write") and user.target.mutates and user.args[1] is node:
            return user
    return None


def write_before_raise(error: BaseException, write: Callable[[], Any]) -> None:
    """``error`` came out of a call whose value NumPy writes into ``out=`` (:func:`out_write`):
    where NumPy's floating-point error handling raised it, after the call had computed
    everything, do that write (``write()`` computes the value again and writes it, under
    ``np.errstate(all="ignore")``: its warnings came out of the call that raised). An
    error the quiet call raises too came before any write (a shape, a type): nothing is
    written. The caller then raises ``error``."""
    if not isinstance(error, (FloatingPointError, RuntimeWarning)) and \
            "call" not in np.geterr().values():
        return
    try:
        with np.errstate(all="ignore"):
            write()
    except Exception:   # noqa: BLE001 - raised before NumPy's error handling: no write
        pass


class Graph:
    """An ordered list of nodes; calling it runs the reference interpreter."""

    def __init__(self, name: str = "forward") -> None:
        self.name = name
        self.nodes: list[Node] = []
        self._names: dict[str, int] = {}
        self._compiled: Callable | None = None
        # output index -> placeholder index: that output is the new value of that input,
        # which the caller copies back into it (aot's epilogue), so a backend may compute
        # it in the input's own memory and return the input itself (JAX's donation).
        self.donated: dict[int, int] = {}
        # Calls computed while compiling (ir/fold.py), as records with a call node's
        # attributes: running the function as Python still pays for them (runtime/cost.py).
        self.folded: list = []

    # -- building ---------------------------------------------------------------------------
    def _fresh_name(self, hint: str) -> str:
        base = _IDENT.sub("_", hint) or "v"
        if base[0].isdigit():
            base = "_" + base
        if base in _RESERVED:
            base = base + "_"
        count = self._names.get(base)
        if count is None:
            self._names[base] = 0
            return base
        while True:
            count += 1
            candidate = f"{base}_{count}"
            if candidate not in self._names:
                self._names[base] = count
                self._names[candidate] = 0
                return candidate

    def _add(self, node: Node, before: Node | None = None) -> Node:
        if before is None:
            self.nodes.append(node)
        else:
            self.nodes.insert(self.nodes.index(before), node)
        self._compiled = None
        return node

    def placeholder(self, name: str, val: TensorMeta | None = None, **meta: Any) -> Node:
        node = Node(self, self._fresh_name(name), "placeholder", name, (), {}, meta)
        if val is not None:
            node.meta["val"] = val
        # Placeholders stay together at the front, in the order they were made.
        first_other = next((n for n in self.nodes if n.kind != "placeholder"), None)
        return self._add(node, before=first_other)

    def constant(self, value: Any, name: str = "const", before: Node | None = None) -> Node:
        node = Node(self, self._fresh_name(name), "constant", value, (), {})
        if hasattr(value, "shape") and hasattr(value, "dtype"):
            node.meta["val"] = TensorMeta(value.shape, value.dtype)
        return self._add(node, before=before)

    def call(self, op: Op, args: tuple, kwargs: dict | None = None, *, name: str | None = None,
             val: Any = None, source: Any = None, quiet: bool = False,
             method: str | None = None, before: Node | None = None,
             ufunc: tuple | None = None, out_write: bool = False, step: bool = False,
             errstate: tuple = (), sizes_meet: bool = False) -> Node:
        """Append a call of ``op``; its meta is inferred unless given. ``source``: the
        user's line it computes; ``quiet``: a derivative rule's node (ir/autodiff.py), run
        under ``np.errstate(all="ignore")`` where the graph runs as NumPy; ``method``: the
        ndarray method the user called (``Bound.method``), which a NumPy run of the node
        calls from ``source``'s line (:func:`extern_impl`); ``ufunc``: ``(name, i)``, the node
        is result ``i`` of that NumPy ufunc's call on its inputs (np.divmod), and warns as it;
        ``out_write``: a mutation writing its input 1 into the ``out=`` of the call that
        computed it (:func:`out_write`); ``step``: a step of a composite spelling other
        than its result (capture's ``inner``, which ir/passes.py reads, kept through aot
        as ``step``: lowering/lower.py ``_store_picked``); ``errstate``: the kinds a
        ``with np.errstate(...='ignore')`` around its line ignores (capture's
        variables/errstate.py); ``sizes_meet``: run-time sizes its operands may not
        broadcast (capture/dims.py ``sizes_meet``: kept unused, ir/passes.py)."""
        kwargs = op.bind_params(dict(kwargs or {}))
        sized = bool(kwargs) and has_size_refs(kwargs)
        if val is None:
            val = infer_meta(op, map_nodes(tuple(args), lambda n: n.val),
                             resolve_sizes(kwargs, lambda r: r.example) if sized else kwargs)
        node = Node(self, self._fresh_name(name or op.name), "call", op, tuple(args), kwargs)
        node.meta["val"] = val
        if sized:
            node.meta["size_refs"] = True   # params name input sizes (SizeRef)
        if source is not None:
            node.meta["source"] = source
        if quiet:
            node.meta["quiet"] = True
        if method is not None and source is not None:
            node.meta["method"] = method
        if ufunc is not None:
            node.meta["ufunc"] = ufunc
        if out_write:
            node.meta["out_write"] = True
        if step:
            node.meta["step"] = True
        if errstate:
            node.meta["errstate"] = errstate
        if sizes_meet:
            node.meta["sizes_meet"] = True
        return self._add(node, before=before)

    def output(self, values: tuple) -> Node:
        node = Node(self, "output", "output", "output", (tuple(values),), {})
        return self._add(node)

    def erase(self, node: Node) -> None:
        if node.users:
            raise ValueError(f"cannot erase {node.name}: still used by {list(node.users)}")
        node.args = ()
        self.nodes.remove(node)
        self._compiled = None

    # -- reading ----------------------------------------------------------------------------
    @property
    def placeholders(self) -> list[Node]:
        return [n for n in self.nodes if n.kind == "placeholder"]

    @property
    def output_node(self) -> Node:
        last = self.nodes[-1] if self.nodes else None
        if last is None or last.kind != "output":
            raise ValueError(f"graph '{self.name}' has no output node")
        return last

    @property
    def calls(self) -> list[Node]:
        return [n for n in self.nodes if n.kind == "call"]

    def op_names(self) -> list[str]:
        return [n.target.name for n in self.calls]

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    # -- printing and running -----------------------------------------------------------------
    def python_code(self) -> str:
        from .printer import python_code
        return python_code(self)

    def __str__(self) -> str:
        return self.python_code()

    def __repr__(self) -> str:
        return f"<kiln Graph '{self.name}': {len(self.calls)} ops>"

    def __call__(self, *args: Any) -> Any:
        """Run the graph with the NumPy reference interpreter."""
        from .interpreter import Interpreter
        return Interpreter(self).run(*args)

    def compile(self) -> Callable:
        """The graph as a Python function (its printed code, exec'd; shows in tracebacks)."""
        if self._compiled is None:
            from .printer import compile_graph
            self._compiled = compile_graph(self)
        return self._compiled


_RESERVED = {"ops", "np", "output", "self", "None", "True", "False", "def", "return", "del",
             "lambda", "in", "is", "not", "and", "or", "if", "else", "for", "while", "class",
             "import", "from", "as", "with", "pass", "global", "yield", "try", "except"}


def topo_check(nodes: Iterable[Node]) -> None:
    seen: set[Node] = set()
    for node in nodes:
        for inp in node.inputs:
            if inp not in seen:
                raise ValueError(f"node {node.name} uses {inp.name} before it is defined")
        seen.add(node)
