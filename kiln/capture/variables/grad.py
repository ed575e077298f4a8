"""``kiln.grad(f)`` / ``kiln.value_and_grad(f)`` called inside a compiled function.

Instead of running the eager tape at run time, capture inlines ``f`` into the graph as
usual and then writes its backward into the same graph (kiln/ir/autodiff.py: the same
derivative rules the eager Tensor runs). The compiled function then holds forward,
backward and whatever the caller does with the gradients (an SGD update) in one graph,
which the backends fuse and run without any autograd at run time, JAX's
``jit(value_and_grad)``::

    @kiln.compile
    def step(w, x, y):
        loss, g = kiln.value_and_grad(loss_fn)(w, x, y)
        return loss, w - 0.1 * g

Anything the eager ``kiln.grad`` would treat differently — an argument that is not a
float array, a result that is not a scalar, ``f`` writing into its arguments or breaking
the graph — falls back: the call runs as Python (eager autograd), so behaviour and
errors are the eager ones.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import NoDerivative
from ...ir import Proxy
from ...ir.graph import SizeProduct, SizeRef, SliceLength
from ...ir.autodiff import backprop
from ...ir.symbolic import SymbolicShapes
from ...ops import REGISTRY, F, method_key
from .arrays import ArrayVariable
from .base import ConstantVariable, VariableTracker


class GradTransformVariable(VariableTracker):
    """The function ``kiln.value_and_grad(fn, argnums)`` (or ``kiln.grad``) returned."""

    def __init__(self, fn: VariableTracker, argnums: Any, with_value: bool,
                 has_aux: bool = False) -> None:
        self.fn = fn
        self.argnums = argnums
        self.with_value = with_value
        self.has_aux = has_aux   # fn returns (loss, aux): aux passes through

    def describe(self) -> str:
        return f"kiln.{'value_and_grad' if self.with_value else 'grad'}({self.fn.describe()})"

    def call(self, tx, args: list, kwargs: dict) -> VariableTracker:
        from .containers import ListVariable, TupleVariable
        what = self.describe()
        named = self.argnums if isinstance(self.argnums, tuple) else (self.argnums,)
        if not all(isinstance(n, int) and -len(args) <= n < len(args) for n in named):
            tx.unsupported("unsupported_call", f"{what}: argnums={self.argnums!r} does not name "
                           f"positional arguments of this call")
        named = tuple(n % len(args) for n in named)   # (as the eager kiln.grad: functional.py)
        nums = tuple(dict.fromkeys(named))
        if any(isinstance(a, ArrayVariable) and a.tensor for a in list(args) + list(kwargs.values())):
            tx.unsupported("unsupported_call", f"{what}: kiln.Tensor arguments (the eager "
                           f"kiln.grad detaches them)")
        wrt, counts = [], []
        for n in nums:
            leaves = _tree_leaves(tx, args[n])
            if leaves is None:
                tx.unsupported("unsupported_call", f"{what}: argument {n} is {args[n].describe()}, "
                               f"not a float array or a dict, list or tuple of them")
            wrt.extend(leaves)
            counts.append(len(leaves))
        if getattr(tx.output, "grad_depth", 0):
            tx.unsupported("unsupported_call", f"{what} inside a function being "
                           f"differentiated (higher-order gradients run as Python)")
        # Derivative rules write sizes into the graph (broadcast_to(g, shape=x.shape)):
        # with dynamic dims they are written as the inputs' sizes (SymbolicSizes), or,
        # where a rule needs a number, the dims are pinned (a graph per size).
        arrays = _arrays(tx, args, kwargs)
        graph = tx.output.graph
        symbolic = SymbolicSizes.make(tx, graph, arrays)
        if symbolic is None:
            for var in arrays:
                var.specialize_dims(tx)
        # Each differentiated argument enters as a view node of its own (free: a reshape
        # to its own shape), like eager's fresh leaf: the same array reached another way
        # (a closure, another argument) stays a constant of the derivative.
        given, args = list(args), list(args)
        for i, a in enumerate(wrt):
            shape = symbolic.shape(a.node) if symbolic is not None else tuple(a.meta.shape)
            if symbolic is not None:
                symbolic.guard_shared(a, shape)
            node = graph.call(REGISTRY["reshape"], (a.node,), {"shape": shape}, source=tx.location())
            wrt[i] = ArrayVariable(node, a.dims, fresh=False, base=a.base or a,
                                   array_type=a.array_type)
        # (a dict, list or tuple of arrays: a new one around the new leaves, as eager's)
        for n, leaves in zip(nums, _split(wrt, counts)):
            args[n] = _rebuild(tx, given[n], iter(leaves))
        # New inputs reached inside fn are inserted before existing nodes: what fn
        # recorded is found by identity, not by position.
        before = set(graph.nodes)
        wrt_nodes = [a.node for a in wrt]
        lengths_before = len(getattr(tx.output, "grad_lengths", []))
        tx.output.grad_depth = getattr(tx.output, "grad_depth", 0) + 1
        try:
            result = self.fn.call(tx, args, dict(kwargs))
        finally:
            tx.output.grad_depth -= 1
        aux = None
        if self.has_aux:
            pair = result.items(tx) if isinstance(result, (TupleVariable, ListVariable)) else None
            if pair is None or len(pair) != 2:
                tx.unsupported("unsupported_call", f"{what}(has_aux=True): the function returns "
                               f"{result.describe()}, not a pair (loss, aux)")
            result, aux = pair
        calls = [n for n in graph.nodes if n.kind == "call" and n not in before]
        before.update(graph.nodes)
        # Arrays fn reached that were not inputs yet (the arguments of the compiled
        # function a lambda closes over): their dims take part in the sizes too.
        arrays = _arrays(tx, given, kwargs)
        # Run-time slice lengths fn made (x[:n], x[1:] of a dynamic dim): the backward
        # names them (ir SliceLength), or they are pinned with the sizes.
        lengths = getattr(tx.output, "grad_lengths", [])[lengths_before:]
        symbolic = symbolic.extended(tx, arrays) if symbolic is not None else \
            SymbolicSizes.make(tx, graph, arrays, slices=bool(lengths))   # (dims pinned above are skipped)

        def pin() -> None:
            for var in arrays:
                var.specialize_dims(tx)
            for sym in lengths:
                sym.as_constant(tx)
        if symbolic is None:
            pin()
        # A write into an argument (eager: an error on a leaf) shows as a mutation op or as
        # the argument's tracker moved to a new node (capture's in-place rewrite).
        if any(n.target.mutates for n in calls) or \
                any(a.node is not n for a, n in zip(wrt, wrt_nodes)):
            tx.unsupported("unsupported_call", f"{what}: the function writes into an array")
        if isinstance(result, ArrayVariable) and not result.tensor:
            meta = result.meta
            if meta.dtype.kind != "f" or meta.size != 1:
                tx.unsupported("unsupported_call", f"{what}: the function returns "
                               f"{result.describe()}, not a float scalar")
            seed = Proxy(graph.constant(np.ones(meta.shape, meta.dtype), "grad_seed"))
            grads = None
            if symbolic is not None:
                before.update(graph.nodes)
                grads = symbolic.backprop(tx, calls, [(result.node, seed)], wrt_nodes, before)
                if grads is None:
                    # Dims fn pinned since (one met a number: ``* np.arange(3.0)``) move
                    # along in the shapes above; guarded, they may be numbers instead.
                    fixed = SymbolicSizes.make(tx, graph, arrays, numbers=True, slices=bool(lengths))
                    if fixed is not None and fixed.dynamic != symbolic.dynamic:
                        grads = fixed.backprop(tx, calls, [(result.node, seed)], wrt_nodes, before)
                if grads is None:   # a rule needs a number: this graph is for these sizes
                    pin()
            if grads is None:
                try:
                    grads = backprop(calls, [(result.node, seed)], wrt_nodes)
                except NoDerivative as e:
                    tx.unsupported("unsupported_call", f"{what}: {e}")
        elif isinstance(result, ConstantVariable) and _float_scalar(result.value):
            grads = [None] * len(wrt)
        else:
            tx.unsupported("unsupported_call", f"{what}: the function returns "
                           f"{result.describe()}, not a float scalar")
        out = []
        for a, g in zip(wrt, grads):
            node = g.node if g is not None else F.zeros_like(Proxy(a.node)).node
            if a.meta.shape == ():  # eager hands back leaf.grad.numpy(): a 0-d array
                node = F.copy(Proxy(node)).node
            out.append(ArrayVariable(node, a.dims, array_type=a.array_type))
        where = tx.location()  # the backward's nodes show the line that asked for it
        for node in graph.nodes:
            if node not in before and node.kind == "call" and "source" not in node.meta:
                node.meta["source"] = where
        trees = {n: _rebuild(tx, given[n], iter(leaves)) for n, leaves in zip(nums, _split(out, counts))}
        grad_var = TupleVariable([trees[n] for n in named]) if isinstance(self.argnums, tuple) \
            else trees[named[0]]
        if not self.with_value:
            return TupleVariable([grad_var, aux]) if self.has_aux else grad_var
        if isinstance(result, ArrayVariable) and result.meta.shape == () and not result.scalar:
            # eager returns out.numpy()[()] for a 0-d value: a NumPy scalar
            result = tx.call_op(method_key("__getitem__"), [result, ConstantVariable(())], {},
                                "indexing")
        return TupleVariable([TupleVariable([result, aux]) if self.has_aux else result, grad_var])


class SymbolicSizes(SymbolicShapes):
    """Sizes for a backward written while some input dims are dynamic (kiln/ir/symbolic.py).

    A size that is an operand (a mean's ``1/N``) becomes a scalar input the entry
    evaluates on each call; dims that share a SizeRef get a guard that they are equal.
    When a rule needs a number, :meth:`backprop` takes back what it wrote and returns
    None, and the caller pins the sizes (a graph per size)."""

    def __init__(self, tx, graph: Any, refs: dict, dynamic: dict, sized: dict, same: list,
                 syms: dict) -> None:
        super().__init__(graph, dynamic, sized, refs)
        self.tx = tx
        self.syms = syms            # SizeRef -> the run-time size it reads
        self.same = same            # (code, text, leaves): dims that share a SizeRef

    slice_lengths = True   # the graph runs in one piece: a SliceLength reads its inputs

    @staticmethod
    def make(tx, graph: Any, arrays: list, known: "SymbolicSizes | None" = None,
             numbers: bool = False, slices: bool = False) -> "SymbolicSizes | None":
        """``numbers``: a dim of the example size of a pinned one is a number too (dims of
        one example size share a SizeRef, so they move together or not at all).
        ``slices``: the function made run-time slice lengths, which are sizes to follow
        even where no input dim is dynamic."""
        from .arrays import UnbackedSize
        refs, dynamic, codes, first, same, syms = {}, {}, {}, {}, [], {}
        pinned = {d.example for var in arrays for d in var.dims
                  if numbers and d is not None and d.pinned}
        if known is not None:   # start from these, adding arrays they do not cover
            refs, syms, same = dict(known.refs), dict(known.syms), list(known.same)
            dynamic = {n: set(d) for n, d in known.dynamic.items()}
            codes, first = dict(known.codes), dict(known.first)
            arrays = [v for v in arrays if v.node not in known.dynamic]
        for var in arrays:
            for i, d in enumerate(var.dims):
                # (an input the function reached keeps the dims it pinned since: they
                # met the known dims, which keep moving)
                if d is None or (d.pinned and known is None) or d.example in pinned:
                    continue
                if isinstance(d, UnbackedSize) or not d.is_shape() or var.node.kind != "placeholder":
                    return None   # a size that is no input's dim (a run-time slice length)
                if i in dynamic.get(var.node, ()):
                    continue
                if d.example not in refs:
                    refs[d.example] = SizeRef(var.node.name, i, d.example)
                    syms[refs[d.example]] = d
                dynamic.setdefault(var.node, set()).add(i)
                codes[d.code] = d.example
                # Dynamic dims of one example size share a SizeRef (they meet in
                # broadcasting: x and y of one batch); the entry guards they are equal.
                if d.example in first and first[d.example].code != d.code:
                    a = first[d.example]
                    same.append((f"({a.code} == {d.code})", f"({a.text} == {d.text})", a.leaves + d.leaves))
                first.setdefault(d.example, d)
        if not refs and not slices:
            return None
        sized = {node: codes[code] for node, code in tx.output.inputs if code in codes}
        out = SymbolicSizes(tx, graph, refs, dynamic, sized, same, syms)
        out.codes, out.first = codes, first
        return out

    def guard_shared(self, var: Any, shape: tuple) -> None:
        """``shape`` (``var``'s, written into the graph) names the SizeRef of another dim
        where two dims share an example size (a square weight: ``(w.shape[0],
        w.shape[0])``): the entry guards them equal now, whatever the backward does later
        (a retry with numbers writes other sizes, but this shape stays in the graph)."""
        for ref, dim in zip(shape, var.dims):
            if isinstance(ref, SizeRef) and dim is not None:
                sym = self.syms[self.refs[ref.example]]
                if sym.code != dim.code:
                    self.tx.guards.add_truth(f"({sym.code} == {dim.code})", f"({sym.text} == {dim.text})",
                                             True, tuple(dict.fromkeys(sym.leaves + dim.leaves)))

    def extended(self, tx, arrays: list) -> "SymbolicSizes | None":
        """These sizes with the dynamic dims of inputs the differentiated function reached
        (a closure's arrays) added; None when one is no input's dim. Dims keep moving
        (and their SizeRefs) even where the function pinned them since: a SizeRef of a
        pinned dim still reads the right, now constant, size."""
        return SymbolicSizes.make(tx, self.graph, arrays, self)

    def value(self, size: Any) -> Any:
        """A graph input holding a dynamic size or a product of them (SizeProduct: the
        count a mean's derivative divides by), evaluated by the entry on each call."""
        from .arrays import SymScalarVariable
        factors = size.factors if isinstance(size, SizeProduct) else (size,)
        codes, texts, leaves, example = [], [], [], 1
        for f in factors:
            if isinstance(f, SizeRef):
                code, text, more, value = self._size_code(f)
                codes.append(code)
                texts.append(text)
                leaves += more
                example *= value
            elif f != 1:
                codes.append(repr(f))
                texts.append(repr(f))
                example *= f
        code, text = f"({' * '.join(codes)})", f"({' * '.join(texts)})"
        if isinstance(size, SizeProduct):   # var's N - ddof: a float, NaN where not positive
            code, text, example = size.finish_code(code), size.finish_code(text), size.finish(example)
        sym = SymScalarVariable(code, text, example, tuple(dict.fromkeys(leaves)), tx=self.tx)
        return self.tx.output.scalar_node(sym)

    def _size_code(self, ref: SizeRef) -> tuple:
        """(code, text, leaves, example) of a dynamic size for the entry: an input's dim,
        or a slice length, ``len(range(L)[a:b:k])`` over it and the bounds' int inputs."""
        if not isinstance(ref, SliceLength):
            sym = self.syms[self.refs[ref.example]]
            return sym.code, sym.text, sym.leaves, sym.example
        if isinstance(ref.length, SizeRef):
            lcode, ltext, leaves, _ = self._size_code(ref.length)
        else:
            lcode = ltext = repr(ref.length)
            leaves = ()
        codes, texts = [], []
        for b in ref.bounds:
            if isinstance(b, str):
                node_code = next(c for n, c in self.tx.output.inputs if n.name == b)
                codes.append(f"({node_code})")
                texts.append(b)
            else:
                codes.append("" if b is None else repr(b))
                texts.append(codes[-1])
        return (f"len(range({lcode})[{codes[0]}:{codes[1]}:{codes[2]}])",
                f"len(range({ltext})[{texts[0]}:{texts[1]}:{texts[2]}])", leaves, ref.example)

    def backprop(self, tx, calls: list, seeds: list, wrt: list, before: set) -> list | None:
        """:func:`backprop` with symbolic sizes; None (and the graph as it was) when a
        rule needs a number."""
        from ...ir.tracer import SHAPES
        token = SHAPES.set(self)
        try:
            grads = backprop(calls, seeds, wrt)
            self.check([n for n in self.graph.nodes if n not in before], grads, wrt)
            for code, text, leaves in self.same:
                tx.guards.add_truth(code, text, True, leaves)
            for node, dims in self.dynamic.items():
                # two dims of one array under one SizeRef (a square weight): the entry
                # guards them equal, and lowering gives them one symbol too
                # (``equal_dims``; kiln/lowering/sizes.py input_dim)
                for d in sorted(dims):
                    ref = self.refs[node.val.shape[d]]
                    if ref.array == node.name and ref.dim != d:
                        node.meta.setdefault("equal_dims", {})[d] = ref.dim
            return grads
        except NoDerivative:
            raise
        except Exception as e:
            from ... import logs
            if logs.enabled("perf"):
                logs.log("perf", "kiln.value_and_grad: the backward is built for these sizes",
                         f"a derivative rule needs them as numbers ({type(e).__name__}: {e})")
            for node in reversed([n for n in self.graph.nodes if n not in before]):
                if node.kind != "placeholder":   # (an input made for a size stays one)
                    self.graph.erase(node)
            return None
        finally:
            SHAPES.reset(token)


def _arrays(tx, args: list, kwargs: dict) -> list:
    """The arrays whose sizes a backward may write: the inputs so far and the arguments."""
    return [v for v in list(tx.output.wrapped.values()) + list(args) + list(kwargs.values())
            if isinstance(v, ArrayVariable)]


def _tree_leaves(tx, var: VariableTracker) -> list | None:
    """The float arrays of an argument kiln.grad differentiates: the array, or the leaves
    of nested dicts, lists and tuples of them (eager's pytrees, kiln/autograd/functional.py);
    None for anything else (a container holding numbers: eager makes it one array)."""
    from .containers import DictVariable, DictViewVariable, TupleVariable
    from .keyed_dicts import KeyedDictVariable
    if isinstance(var, ArrayVariable):
        return [var] if var.meta.dtype.kind == "f" and not var.tensor else None
    if isinstance(var, KeyedDictVariable):
        var = var._all(tx)
    if isinstance(var, DictVariable):
        children = list(var.entries.values())
    elif isinstance(var, TupleVariable) and not isinstance(var, DictViewVariable):
        children = var.items(tx)
    else:
        return None
    leaves: list = []
    for child in children:
        found = _tree_leaves(tx, child)
        if found is None:
            return None
        leaves += found
    return leaves or None


def _rebuild(tx, var: VariableTracker, leaves: Any) -> VariableTracker:
    """``var``'s structure (new containers) around the next trackers of ``leaves``."""
    from .containers import (DictVariable, ListVariable, NamedTupleVariable,
                             TupleVariable)
    from .keyed_dicts import KeyedDictVariable
    if isinstance(var, ArrayVariable):
        return next(leaves)
    if isinstance(var, KeyedDictVariable):
        var = var._all(tx)
    if isinstance(var, DictVariable):
        return DictVariable({k: _rebuild(tx, v, leaves) for k, v in var.entries.items()})
    items = [_rebuild(tx, v, leaves) for v in var.items(tx)]
    if isinstance(var, NamedTupleVariable):
        return NamedTupleVariable(var.cls, items)
    return ListVariable(items) if isinstance(var, ListVariable) else TupleVariable(items)


def _split(values: list, counts: list) -> list:
    out, start = [], 0
    for c in counts:
        out.append(values[start:start + c])
        start += c
    return out


def _float_scalar(value: Any) -> bool:
    arr = np.asarray(value)
    return arr.dtype.kind == "f" and arr.size == 1


def grad_transform(tx, fn_value: Any, args: list, kwargs: dict) -> VariableTracker | None:
    """``kiln.value_and_grad(f, argnums)`` / ``kiln.grad(...)`` called in the frame."""
    from ...autograd import functional
    if fn_value not in (functional.value_and_grad, functional.grad):
        return None
    params = dict(zip(("fn", "argnums", "has_aux"), args))
    params.update(kwargs)
    if "fn" not in params or set(params) - {"fn", "argnums", "has_aux"}:
        return None
    argnums = params.get("argnums", ConstantVariable(0))
    has_aux = params.get("has_aux", ConstantVariable(False))
    if not argnums.is_constant() or not has_aux.is_constant():
        return None
    return GradTransformVariable(params["fn"], argnums.as_constant(tx),
                                 fn_value is functional.value_and_grad, bool(has_aux.as_constant(tx)))
