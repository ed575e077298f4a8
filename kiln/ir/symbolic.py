"""Shapes with dynamic sizes for a backward written into a graph (derivative rules).

Derivative rules read shapes (``broadcast_to(g, shape=shape_of(x))``, a mean's ``1/N``).
While a backward is written for a graph whose inputs have dynamic dims,
``Proxy.shape`` (kiln/ir/tracer.py ``SHAPES``) asks a :class:`SymbolicShapes`: each dim
that follows a dynamic input dim is that input's ``SizeRef`` (``x.shape[0]``,
kiln/ir/graph.py), so what the rule records holds for every size. Which dims follow one
is found the way capture finds them for shape rules (kiln/capture/dims.py): every
node's shape rule runs again with each dynamic size moved (:meth:`_shadow`), and a dim
follows a dynamic size when it moves with it. A rule that needs a number (arithmetic
on a SizeRef, a shape that moves another way) raises ``TypeError``; the one writing the
backward then takes back what it wrote and builds it for the example's sizes instead.

Dynamic dims of one example size share a SizeRef (duck sizing: ``x`` and ``y`` of one
batch meet in broadcasting); whoever runs the graph must check they are still equal.
Two users: ``kiln.value_and_grad`` inside a compiled function
(kiln/capture/variables/grad.py) and the joint graph of the kiln.Tensor path
(kiln/aot/symbolic.py). Each says how a size that is an *operand* of an op (a
:class:`SizeProduct`, the count a mean's derivative divides by) becomes a graph value
(:meth:`value`).

    >>> import numpy as np
    >>> from kiln.ir import trace
    >>> from kiln.ops import F, TensorMeta
    >>> g = trace(lambda x: F.sin(x), [TensorMeta((8, 3), np.float64)], ["x"])
    >>> x = g.placeholders[0]
    >>> SymbolicShapes(g, {x: {0}}).shape(g.calls[0])
    (x.shape[0], 3)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import TensorMeta, infer_meta
from ..ops.layout import index_dims
from ..ops.registry import map_leaves
from .graph import Node, SizeRef, SliceLength, map_nodes, resolve_sizes

# Stand-in sizes of slice lengths in the moved shapes (:meth:`SymbolicShapes._mark`): far
# from any moved input size, one per length.
_MARK = 10**9 + 7


class SymbolicShapes:
    """Shapes of a graph's nodes with SizeRefs for the dims that follow dynamic sizes.

    ``dynamic``: placeholder -> its dynamic dims; ``sized``: scalar placeholder that holds
    a dynamic size (capture passes an int computed from a dim as an input) -> that size.

    With ``slice_lengths`` (a user that can make a graph run with them opts in), a basic
    slice whose length is no input's size — a bound that is an int placeholder
    (``x[:n]``), or bounds other than ``[:]`` on a dynamic dim (``x[1:]``) — gives that
    dim a :class:`SliceLength`: in the moved shapes it is a stand-in size of its own
    (:meth:`_mark`), so a dim follows the slice exactly when it moves with that stand-in.
    Slices whose lengths are equal for every size share one (``x[1:]`` and ``x[:-1]``:
    both ``max(L - 1, 0)``).
    """

    slice_lengths = False

    def __init__(self, graph: Any, dynamic: dict, sized: dict | None = None,
                 refs: dict | None = None) -> None:
        self.graph = graph
        self.dynamic = dynamic
        self.sized = sized or {}
        self.named = {p.name: p for p in graph.placeholders}
        if refs is None:   # example size -> its SizeRef: the first dynamic dim of that size
            refs = {}
            for p, dims in dynamic.items():
                for d in sorted(dims):
                    refs.setdefault(p.val.shape[d], SizeRef(p.name, d, p.val.shape[d]))
        self.refs: dict[int, SizeRef] = refs
        self.metas: dict = {}
        self.marks: dict[int, SliceLength] = {}   # stand-in size -> the slice length
        self.mark_of: dict = {}                   # a length's key -> its stand-in

    @staticmethod
    def moved(n: int) -> int:
        return 2 * n + 3

    def shape(self, node: Node) -> tuple:
        """``node``'s shape with SizeRefs for dims that follow a dynamic size."""
        base, moved = node.val.shape, self._shadow(node).shape
        out = []
        for b, m in zip(base, moved):
            if m in self.marks and self.marks[m].example == b:
                out.append(self.marks[m])
            elif b == m:
                out.append(b)
            elif m == self.moved(b) and b in self.refs:
                out.append(self.refs[b])
            else:
                raise TypeError(f"a size of {node.name} is no input's size")
        return tuple(out)

    def value(self, size: Any) -> Node:
        """A graph value holding ``size`` (a SizeRef or SizeProduct) on each run."""
        raise TypeError(f"the size {size!r} is needed as a number here")

    def check(self, new_nodes: Any, grads: list, wrt: list) -> None:
        """Raise TypeError unless every new node's shape follows the sizes and each
        gradient has its input's shape."""
        for node in new_nodes:
            if node.kind == "call":
                self.shape(node)
        if any(g is not None and self.shape(g.node) != self.shape(w) for g, w in zip(grads, wrt)):
            raise TypeError("a gradient's shape does not follow its input's")

    def _shadow(self, node: Node) -> Any:
        """``node``'s meta with every dynamic size moved (computed in dependency order)."""
        stack = [node]
        while stack:
            n = stack[-1]
            if n in self.metas:
                stack.pop()
                continue
            missing = [i for i in n.inputs if i not in self.metas]
            if missing:
                stack.extend(missing)
                continue
            self.metas[n] = self._compute(n)
            stack.pop()
        return self.metas[node]

    def _compute(self, n: Node) -> Any:
        if n.kind == "placeholder":
            dims = self.dynamic.get(n, ())
            if isinstance(n.val, TensorMeta):
                return TensorMeta(tuple(self.moved(s) if i in dims else s for i, s in enumerate(n.val.shape)),
                                  n.val.dtype)
            return self.moved(n.val) if n in self.sized else n.val
        if n.kind == "constant":
            return n.val if n.val is not None else n.target
        kwargs = n.kwargs
        if self.slice_lengths:
            kwargs = {k: map_leaves(v, lambda r: self._mark(r) if isinstance(r, SliceLength) else r)
                      for k, v in kwargs.items()}
            if n.op.runtime_slices is not None and not n.op.mutates:
                return TensorMeta(self._sliced(n.args[0], n.args[n.op.runtime_slices], n.val.shape),
                                  n.val.dtype)
            if n.op.name in ("index_put", "index_add") and _basic(n.args[1]):
                return self._scatter(n)
        params = resolve_sizes(kwargs, lambda r: self._shadow(self.named[r.array]).shape[r.dim])
        return infer_meta(n.op, map_nodes(n.args, self.metas.__getitem__), params)

    # -- slice lengths ---------------------------------------------------------------------
    def _mark(self, ref: SliceLength) -> int:
        """The stand-in size of a slice length in the moved shapes. Slices of one length
        ``L`` with a constant step ``k > 0``, a start >= 0 and a stop < 0 (``x[1:]``,
        ``x[:-1]``, ``x[1::2]``, ``x[:-1:2]``) are ``len(range(L + stop - start)[::k])``
        long for every ``L``: one stand-in per sum and step."""
        key: object = ref
        if isinstance(ref.length, SizeRef) and canonical_slice(ref.bounds) is not None:
            key = ("sum", ref.length) + canonical_slice(ref.bounds)
        mark = self.mark_of.get(key)
        if mark is None:
            mark = self.mark_of[key] = _MARK + 2 * len(self.marks)
            self.marks[mark] = ref
        return mark

    def _sliced(self, x: Any, index: Any, base: tuple) -> tuple:
        """The moved shape of ``x[index]`` (``base``: its example shape), with a stand-in
        for each slice of a length no input's size is."""
        xmeta = self._shadow(x) if isinstance(x, Node) else None
        if not isinstance(xmeta, TensorMeta) or not isinstance(index, tuple):
            raise TypeError("a slice the sizes cannot follow")
        xshape = self.shape(x)
        ndim = len(xshape)
        dims = index_dims(index, ndim)
        out = list(infer_meta(_getitem(), (xmeta, _examples(index)), {}).shape)
        if dims is None or len(out) != len(base):
            raise TypeError("a slice the sizes cannot follow")
        used = sum(1 for e in index if e is not None and e is not Ellipsis)
        pos = 0
        for e, d in zip(index, dims):
            if e is None:
                pos += 1
            elif e is Ellipsis:
                pos += ndim - used
            elif isinstance(e, slice):
                bounds = (e.start, e.stop, e.step)
                length = xshape[d]
                runtime = any(isinstance(b, Node) for b in bounds)
                if runtime or (isinstance(length, SizeRef) and not all(
                        len(range(m)[e]) == m for m in (2, 7, 4099))):
                    names = []
                    for b in bounds:
                        if isinstance(b, Node) and (not _int_input(b) or b in self.sized):
                            raise TypeError(f"a slice bound {b.name} that is no int input")
                        names.append(b.name if isinstance(b, Node) else b)
                    out[pos] = self._mark(SliceLength(length, tuple(names), base[pos]))
                pos += 1
        return tuple(out)

    def _scatter(self, n: Node) -> TensorMeta:
        """index_put / index_add: x's moved shape, once the value fits the moved target."""
        x, index, value = n.args
        xmeta = self._shadow(x)
        target = self._sliced(x, index, _getitem_shape(x, index))
        vshape = tuple(self._shadow(value).shape) if isinstance(value, Node) else np.shape(value)
        vshape = vshape[max(len(vshape) - len(target), 0):] \
            if all(v == 1 for v in vshape[:max(len(vshape) - len(target), 0)]) else vshape
        if len(vshape) > len(target) or any(v not in (1, t) for v, t in zip(vshape[::-1], target[::-1])):
            raise TypeError(f"{n.name} writes a value whose size does not follow its target's")
        return TensorMeta(xmeta.shape, n.val.dtype)


def canonical_slice(bounds: tuple) -> tuple | None:
    """(start - stop, step) of constant slice bounds with a step > 0, a start >= 0 and a
    stop < 0 (None counts as 0 for both): such a slice of a dim of length ``L`` has
    ``len(range(L - (start - stop))[::step])`` elements, whatever ``L`` is. None for
    other bounds. (kiln/lowering/sizes.py names such lengths by this form too.)"""
    start, stop, step = bounds
    if not all(b is None or type(b) is int for b in bounds) or (step or 1) < 1 \
            or (start or 0) < 0 or (stop or 0) > 0 or stop == 0:
        return None
    return (start or 0) - (stop or 0), step or 1


def _int_input(b: Node) -> bool:
    """An int input: a Python int or a NumPy integer (``np.int64``, read through
    ``__index__`` as an index or slice bound), not a bool."""
    return b.kind == "placeholder" and isinstance(b.val, (int, np.integer)) \
        and not isinstance(b.val, (bool, np.bool_))


def _basic(index: Any) -> bool:
    """A basic index: ints (or int placeholders), slices, None and Ellipsis."""
    return isinstance(index, tuple) and all(
        e is None or e is Ellipsis or type(e) in (int, slice)
        or isinstance(e, Node) and _int_input(e) for e in index)


def _getitem() -> Any:
    from ..ops import REGISTRY
    return REGISTRY["getitem"]


def _examples(index: tuple) -> tuple:
    """``index`` with each int placeholder (a bound, an int index) at its example value."""
    value = lambda b: b.val if isinstance(b, Node) else b   # noqa: E731
    return tuple(slice(value(e.start), value(e.stop), value(e.step)) if isinstance(e, slice)
                 else value(e) for e in index)


def _getitem_shape(x: Node, index: tuple) -> tuple:
    """The example shape of ``x[index]``."""
    return tuple(infer_meta(_getitem(), (x.val, _examples(index)), {}).shape)
