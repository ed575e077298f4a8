"""The joint graph over dynamic sizes: one training variant for every batch size.

When a captured graph has dynamic dims (``placeholder.meta['dynamic_dims']``), the joint
graph is written with :class:`JointSizes` answering ``Proxy.shape`` (kiln/ir/symbolic.py):
a derivative rule's ``broadcast_to(g, shape=x.shape)`` records ``shape=(x.shape[0], 3)``
and a mean's ``1/N`` divides by an input of the backward graph (``size_0``) that the
runtime computes from the call's arrays. The backward then has two kinds of inputs
besides the saved values and tangents, both supplied per call by the runtime
(kiln/aot/runtime.py): those sizes, and the primals whose dims its params name (only
where no saved value carries them; the backward reads their shape, never their data).

Dims of one example size share a SizeRef (duck sizing): the runtime keys training
variants by which dynamic dims are equal (:func:`size_pattern`), so two dims that
happened to be equal in the example and differ later get a variant of their own. A rule
that needs a number raises :class:`PinnedSizes`; the runtime then builds the joint graph
for the call's sizes, as before, and keys those variants by shape (and by the values of
int slice bounds).

Slices of run-time length (``x[1:]`` of a dynamic dim, ``x[:n]`` with ``n`` an int
input) are followed as inside ``kiln.grad``: their lengths are ``SliceLength``s in the
rules' shapes, and a count over one is a size input computed with Python's slicing of the
call's sizes and ints. No backward input may have such a dim (:meth:`dynamic_dims`
raises PinnedSizes; the partitioner saves no such value, kiln/aot/partition.py).
"""
from __future__ import annotations

from typing import Any, Sequence

from ..ir.graph import SizeProduct, SizeRef, SliceLength, finish_count
from ..ir.symbolic import SymbolicShapes


class PinnedSizes(Exception):
    """A derivative rule needs a dynamic size as a number (``var``'s ``count - ddof``)."""


class JointSizes(SymbolicShapes):
    """Symbolic shapes of a joint graph; sizes that are operands become its inputs."""

    slice_lengths = True   # the backward recomputes slices it needs (partition: _saveable)

    def __init__(self, graph: Any, primals: Sequence[Any], dims: Sequence[tuple]) -> None:
        dynamic = {p: set(d) for p, d in zip(primals, dims) if d}
        super().__init__(graph, dynamic)
        self.position = {p.name: i for i, p in enumerate(primals)}
        # (placeholder, (factors, ddof)): factors are (primal index, dim) pairs and
        # ints; ddof is var's (the value is then N - ddof, kiln/ir/graph.py finish_count)
        self.size_inputs: list[tuple[Any, tuple]] = []

    def value(self, size: Any) -> Any:
        factors = size.factors if isinstance(size, SizeProduct) else (size,)
        spec = []
        for f in factors:
            if isinstance(f, SizeRef):
                spec.append(self._factor(f))
            elif f != 1:
                spec.append(int(f))
        spec = (tuple(spec), size.ddof if isinstance(size, SizeProduct) else None)
        for node, known in self.size_inputs:
            if known == spec:
                return node
        node = self.graph.placeholder(f"size_{len(self.size_inputs)}", size.example)
        self.size_inputs.append((node, spec))
        return node

    def _factor(self, ref: SizeRef) -> tuple:
        """A size's spec for :func:`size_values`: (primal index, dim), or for a slice's
        length ("slice", its length's spec or int, bounds), a bound an int or None or
        ("input", primal index) (an int argument)."""
        if not isinstance(ref, SliceLength):
            ref = self.refs[ref.example]
            return (self.position[ref.array], ref.dim)
        length = self._factor(ref.length) if isinstance(ref.length, SizeRef) else ref.length
        bounds = tuple(("input", self.position[b]) if isinstance(b, str) else b for b in ref.bounds)
        return ("slice", length, bounds)

    def dynamic_dims(self, node: Any) -> tuple:
        """The dims of ``node`` (a joint value) that follow a dynamic size. A dim that
        is a slice's length (a SliceLength) raises PinnedSizes: no graph input may carry
        one (kiln/aot/partition.py saves no such value)."""
        shape = self.shape(node)
        if any(isinstance(s, SliceLength) for s in shape):
            raise PinnedSizes(f"{node.name} has a slice's length as a dim")
        return tuple(i for i, s in enumerate(shape) if isinstance(s, SizeRef))


def size_pattern(arrays: Sequence[Any], dims: Sequence[tuple[int, int]]) -> tuple:
    """Which of the dynamic dims ``dims`` ((input, dim) pairs) are equal in this call:
    each dim's first position with the same size (the duck sizing a variant assumed)."""
    seen: dict[int, int] = {}
    out = []
    for k, (i, d) in enumerate(dims):
        out.append(seen.setdefault(arrays[i].shape[d], k))
    return tuple(out)


def size_values(arrays: Sequence[Any], specs: Sequence[tuple]) -> list[int]:
    """The backward's size inputs for this call's arrays (products of dims and ints)."""
    def size(f: Any) -> int:
        if not isinstance(f, tuple):
            return f
        if f[0] == "slice":
            bounds = [arrays[b[1]] if isinstance(b, tuple) else b for b in f[2]]
            return len(range(size(f[1]))[slice(*bounds)])
        return arrays[f[0]].shape[f[1]]
    out = []
    for factors, ddof in specs:
        n = 1
        for f in factors:
            n *= size(f)
        out.append(finish_count(n, ddof))
    return out
