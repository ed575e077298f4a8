"""Graph -> loop-level IR: each graph node becomes a value (see loop_ir.py).

:class:`GraphLowering` interprets the graph with lowering rules instead of NumPy kernels
(the way Inductor's ``GraphLowering`` is an FX interpreter):

- pointwise ops (each names its scalar function) compose into :class:`Pointwise` closures (no buffer);
- reductions become :class:`ComputeNode` s of kind 'reduction' (realized buffers), scans
  (cumsum, cumprod) nodes of kind 'scan';
- views remap indices (strides of a buffer, or an affine remap of a closure);
- anything else is an :class:`ExternNode`: the op's NumPy kernel called by the wrapper.

A closure is *realized* into a 'pointwise' ComputeNode when its array is needed as
memory: graph outputs, extern inputs, views that no affine remap can express, and
expensive values read by several users.

    >>> import numpy as np
    >>> from kiln.ir import trace
    >>> from kiln.ops import F, TensorMeta
    >>> g = trace(lambda x: F.sin(F.cos(x)), [TensorMeta((8,), np.float32)], ["x"])
    >>> low = GraphLowering(g, [np.zeros(8, np.float32)]).run()
    >>> [n.kind for n in low.nodes]
    ['pointwise']
"""
from __future__ import annotations

import contextvars
import re
from typing import Any, Iterator

import numpy as np

from ..errors import Unsupported
from ..ir import Graph, Node, map_nodes
from ..ir.graph import resolve_sizes
from ..ir.passes import may_warn_call, shared_calls
from ..ops import Category, TensorMeta, infer_meta
from ..ops.fp_errors import STORES_TOLD_INPUT
from ..ops.layout import overlaps_itself
from ..ops.meta import on_stand_ins, to_fake
from ..ops.registry import iter_leaves, map_leaves
from .loop_ir import DTYPES, Buffer, BufferValue, Pointwise, Scalar, Value, contiguous_strides
from .nodes import ComputeNode, ExternNode, Opaque, iter_values, map_values
from .externs import ExternLowering, _is_array, _meta_of
from .pointwise import PointwiseLowering
from .sizes import Size, SymbolTable, Undecidable
from .slice_bounds import runtime_slice
from .views import ViewLowering
from .result_layouts import ResultLayoutLowering, lay_out
from .realize_early import EarlyRealization, breaks_order
from .fills import lower_fill, lower_join, lower_region_write, lower_repeat, lower_tri

# A value read by more than one user is realized (computed once) when its closure costs
# more than this many "ops" (a libm call counts 8: one alone is worth storing, not
# recomputing: exp feeding both a sum and a divide); cheaper ones are recomputed in each
# consumer. Realized values whose consumers share its kernel are never allocated: they
# live in registers or per-row arrays (softmax computes exp once and keeps one kernel).
REALIZE_COST_SHARED = 7
# A closure reading this many nested closures is realized: building its code recurses once
# per level (each load calls its operand's closure), and an unrolled elementwise recurrence
# of 300 steps (``y = y * 0.999 + h``: 600 ops in one chain) passed Python's recursion
# limit, so the whole graph ran as its NumPy program. Realized, its consumers in the same
# kernel read it from a register (above): the recurrence stays one kernel.
MAX_FUSED_CHAIN = 100
# Names the generated wrapper gives its own values (lowering/wrapper.py; sizes.py's size
# symbols s<n>, unbacked u<n>, start o<n>, step magnitude k<n>)
_GENERATED_NAME = re.compile(r"(s|u|o|k|buf|view|pool)\d+(_value)?$|(np|sys|call)$|_")


class GraphLowering(PointwiseLowering, ViewLowering, ExternLowering, ResultLayoutLowering,
                    EarlyRealization):
    """Lower a graph for given example inputs (their strides are specialized on)."""

    def __init__(self, graph: Graph, example_inputs: list, reinfer: bool = False,
                 dynamic: bool = False, renderer: Any = None, specialize_ints: bool = False) -> None:
        self.graph = graph
        # Run-time int slice bounds (``x[:n]``) are size symbols (sizes.py, kind "int");
        # specialize_ints: their example values instead, which the wrapper checks
        # (``int_values``: name -> value), for graphs whose sizes symbols cannot say.
        self.specialize_ints = specialize_ints
        self.int_values: dict[str, int] = {}
        # what the target can hold and spell (lowering/renderer.py); None: any kernel dtype
        self.renderer = renderer
        self.dtypes = renderer.dtypes if renderer is not None else DTYPES
        # True: shapes come from the example inputs, not the graph's recorded metas (a
        # variant for other sizes or layouts).
        self.reinfer = reinfer or dynamic
        # dynamic: placeholder dims in node.meta['dynamic_dims'] become size symbols
        # (kiln/lowering/sizes.py); every size derived from them is an expression.
        self.dynamic = dynamic
        self.sizes = SymbolTable()
        self.example_inputs = list(example_inputs)
        self.nodes: list[ComputeNode | ExternNode] = []
        self.buffers: dict[str, Buffer] = {}
        self.inputs: list[tuple[str, Any]] = []   # (placeholder name, Buffer | Scalar | None)
        self.constants: dict[str, Any] = {}        # wrapper global name -> value
        self.outputs: list[Any] = []
        # buffers of unused calls kept for NumPy's floating-point warnings (ir/passes.py
        # must_stay): stored, never kernel-local, so the compiler keeps their code
        self.sinks: set[str] = set()
        # calls converting a Python float constant past a narrower float loop's range: the
        # wrapper warns "overflow encountered in cast" for each on every call (pointwise.py)
        self.constant_casts: list[Node] = []
        self.scalar_outputs: set[int] = set()      # output positions NumPy returns as scalars
        self.env: dict[Node, Any] = {}
        # id(value) -> (value, its memory). The value is kept: a closure nothing else holds
        # (a fresh array's fill, realized and replaced in env by its buffer) would free its
        # id for the next closure, which would then find this buffer (3.13 reuses it).
        self._realized: dict[int, tuple[Value, BufferValue]] = {}
        self._count = 0
        self._origin: tuple = ()
        # Sizes known only after an op ran (sizes.py, "unbacked"): by what they count; the
        # wrapper binds each right after the extern named here, then runs these checks
        # (symbolic size, size that must be nonzero with it, exception type, message).
        self._unbacked: dict[tuple, Any] = {}
        self.binds: dict[str, list[tuple[str, str]]] = {}   # extern name -> [(symbol, expr)]
        self.size_checks: list[tuple[Any, Any, str, str]] = []
        if any(n.kind == "call" and (n.op.data_dependent or runtime_slice(n)) for n in graph.nodes):
            self.reinfer = True   # the graph's metas hold example sizes for them

    # -- helpers ----------------------------------------------------------------------------
    def donated(self) -> dict[int, int]:
        """``Graph.donated`` (output -> the input array it is the new value of, which a
        kernel or an extern may write in place) less the inputs whose elements overlap one
        another (``as_strided`` windows, zero strides): NumPy writes those as if every
        element were computed first, a kernel storing in place would read back its own
        stores. aot's epilogue copies their new values instead."""
        def own(i: int) -> bool:
            buf = self.inputs[i][1] if i < len(self.inputs) else None
            return not isinstance(buf, Buffer) or buf.contiguous or \
                not overlaps_itself(buf.shape, buf.strides)   # (sizes symbols: contiguous)
        return {k: i for k, i in getattr(self.graph, "donated", {}).items() if own(i)}

    def fresh(self, prefix: str = "buf") -> str:
        self._count += 1
        return f"{prefix}{self._count - 1}"

    def new_buffer(self, shape: tuple, dtype: Any, kind: str) -> Buffer:
        dtype = np.dtype(dtype)
        if dtype.name not in self.dtypes:
            raise Unsupported(f"dtype {dtype} has no kernel lowering")
        buf = Buffer(self.fresh(), shape, dtype, kind)
        self.buffers[buf.name] = buf
        return buf

    def as_value(self, arg: Any) -> Any:
        """A graph argument as a lowering value (Python scalars become weak Scalars)."""
        if isinstance(arg, Node):
            return self.env[arg]
        if isinstance(arg, np.generic) and arg.dtype.name in self.dtypes:  # strong (np.float64 is a float!)
            return Scalar(arg.dtype, weak=False, value=arg.item())
        if isinstance(arg, bool):
            return Scalar(np.bool_, weak=True, value=arg)
        if isinstance(arg, int):
            return Scalar(np.int64, weak=True, value=arg)
        if isinstance(arg, float):
            return Scalar(np.float64, weak=True, value=arg)
        if isinstance(arg, complex) and "complex128" in self.dtypes:
            return Scalar(np.complex128, weak=True, value=arg)
        return arg

    # -- the interpreter --------------------------------------------------------------------
    def run(self) -> "GraphLowering":
        # Comparisons of dynamic sizes the bound cannot decide become guards (sizes.py).
        with self.sizes.guarding():
            return self._run()

    def _run(self) -> "GraphLowering":
        placeholders = self.graph.placeholders
        if len(placeholders) != len(self.example_inputs):
            raise Unsupported("example inputs do not match the graph's placeholders")
        if any(not np.dtype(d).isnative for d in _dtypes_in(self.graph, self.example_inputs)):
            # Kernels read and write the machine's byte order; ``astype('>f8')``'s result
            # would come back native: NumPy runs such a graph.
            raise Unsupported("a byte-swapped dtype (big-endian data): NumPy runs the graph")
        uses = {n: len(n.users) for n in self.graph.nodes}
        # Returned closures get their buffer where they are defined, not after the whole
        # graph: the kernel computing them stores them too (a saved relu input is written
        # by the relu's kernel instead of a second pass over the matmul result).
        returned = {v for n in self.graph.nodes if n.kind == "output" for v in n.args[0]
                    if isinstance(v, Node)}
        named = {p.name: p for p in placeholders}
        # Nodes returned as they are or through views (``z.real[1:]``): NumPy's result
        # shares their memory, so a view op among them keeps its memory (views.py).
        self._returned_views = set(returned)
        for n in reversed(list(self.graph.nodes)):
            if any(u in self._returned_views and u.kind == "call" and u.op.category == Category.VIEW
                   and u.args and u.args[0] is n for u in n.users):
                self._returned_views.add(n)
        # An extern call repeating an earlier one (``r @ r`` in a while loop's test and its
        # body) takes its value: one NumPy call (kiln/ir/passes.py shared_calls).
        shared = shared_calls(self.graph)
        warning: dict = {}   # unrealized closures computing a call that may warn (in order)
        chain: dict = {}     # how many closures deep each unrealized call's closure is
        writes = self._donated_writes()
        for node in self.graph.nodes:
            self._origin = (node,)
            if node.kind == "call" and warning and breaks_order(node):
                self._realize_warning(warning)
            if node.kind == "call" and warning:
                self._store_picked(node, warning)
            if node.kind == "call" and warning and node.op.name in STORES_TOLD_INPUT:
                self._store_told_input(node, warning, REALIZE_COST_SHARED)
            if node in writes:
                self._realize_old_reads(node, writes[node])
            if node.kind == "placeholder":
                value = self.example_inputs[placeholders.index(node)]
                self.env[node] = self.lower_input(self._param_name(node.name), value,
                                                  node.meta.get("dynamic_dims"),
                                                  node.meta.get("equal_dims"))
            elif node.kind == "constant":
                self.env[node] = self.lower_constant(node.name, node.target)
            elif node.kind == "call":
                args = tuple(self.as_value(a) for a in map_nodes(node.args, self.env.__getitem__))
                params = node.kwargs
                if "size_refs" in node.meta:   # an input's size in a param (ir SizeRef)
                    params = resolve_sizes(params, lambda r: self.env[named[r.array]].shape[r.dim],
                                           lambda name: self.env[named[name]], self.slice_count)
                if node in shared:
                    value = self.env[shared[node]]
                else:
                    value = self.lower_call(node.op, args, params, None if self.reinfer else node.val)
                if isinstance(value, Pointwise) and node in returned:
                    value = self.realize_output(value)
                elif isinstance(value, Pointwise) and uses[node] > 1 and value.cost > REALIZE_COST_SHARED:
                    value = self.realize(value)
                if isinstance(value, Pointwise):
                    chain[node] = 1 + max((chain.get(a, 0) for a in node.inputs), default=0)
                    if chain[node] > MAX_FUSED_CHAIN:
                        value, chain[node] = self.realize(value), 0
                if not uses[node] and isinstance(value, (Pointwise, Scalar, BufferValue)):
                    # unused, kept for NumPy's floating-point warnings (ir/passes.py
                    # must_stay): a kernel computes it and stores it (code whose value
                    # nothing reads, g++ removes with its flags)
                    value = self.realize(value)
                    self.sinks.add(value.buf.name)
                self.env[node] = value
                if isinstance(value, Pointwise) and (may_warn_call(node) or any(
                        a in warning for a in node.inputs)):
                    warning[node] = None
            elif node.kind == "output":
                self.lower_outputs(node)
        return self

    def _param_name(self, name: str) -> str:
        """The wrapper's parameter for placeholder ``name``: the same name unless it could
        meet a name the wrapper makes itself (size symbols ``s0``/``u1``/``o2``/``k3``, buffers ``buf0``, views,
        ``np``, ``call``, ``_``-globals), e.g. a user's argument called ``s0``."""
        taken = {n for n, _ in self.inputs}
        if not _GENERATED_NAME.match(name) and name not in taken:
            return name
        k = 0
        taken |= {n.name for n in self.graph.nodes}
        while f"in{k}_{name.lstrip('_')}" in taken:
            k += 1
        return f"in{k}_{name.lstrip('_')}"

    def lower_input(self, name: str, value: Any, dynamic_dims: Any = None,
                    equal_dims: dict | None = None) -> Any:
        if isinstance(value, np.ndarray) and value.dtype.kind == "c" and value.dtype.name not in self.dtypes:
            # No complex kernels on this target: every op reading it is an extern call
            # (NumPy's). The wrapper checks the layouts of buffer inputs only, so a graph whose
            # sizes vary runs in NumPy instead: an opaque input's new size is never missed.
            if self.dynamic or any(n.meta.get("dynamic_dims") for n in self.graph.placeholders):
                raise Unsupported(f"input {name} is complex ({value.dtype}) in a graph with "
                                  f"dynamic sizes: no kernel lowering")
            self.inputs.append((name, None))
            return Opaque(name, TensorMeta(value.shape, value.dtype))
        if isinstance(value, np.ndarray):
            if value.dtype.name not in self.dtypes:
                raise Unsupported(f"input {name} has dtype {value.dtype}, which has no kernel lowering")
            item = value.itemsize
            if any(s % item for s in value.strides):
                raise Unsupported(f"input {name} has strides {value.strides} that are not "
                                  f"multiples of its item size")
            dims = set(dynamic_dims or ()) if self.dynamic and value.flags.c_contiguous else set()
            shape = self.sizes.input_shape(name, tuple(value.shape), dims, equal_dims)
            buf = Buffer(name, shape, value.dtype, "input")
            if any(isinstance(n, Size) for n in shape):
                buf.strides = contiguous_strides(shape)  # row-major in the symbols
            else:
                buf.strides = tuple(s // item for s in value.strides)
            buf.contiguous = bool(value.flags.c_contiguous)
            self.buffers[name] = buf
            self.inputs.append((name, buf))
            return BufferValue.whole(buf)
        if isinstance(value, (bool, int, float, np.generic)) and \
                np.asarray(value).dtype.name in self.dtypes and np.asarray(value).dtype.kind != "c":
            weak = isinstance(value, (bool, int, float)) and not isinstance(value, np.generic)
            dtype = np.dtype(value.dtype if isinstance(value, np.generic) else np.bool_
                             if isinstance(value, bool) else np.int64 if isinstance(value, int)
                             else np.float64)
            scalar = Scalar(dtype, weak=weak, name=name)
            scalar.pytype = type(value) if weak else None
            scalar.example = value   # a slice bound's example decides the example's sizes
            scalar.node = self._origin[0] if self._origin else None   # its placeholder
            self.inputs.append((name, scalar))
            return scalar
        self.inputs.append((name, None))
        if type(value) in (bool, int, float, complex):
            # a Python complex (or an int past int64): no kernel scalar, but a weak
            # number where dtypes are inferred again (dynamic sizes), as NumPy takes it
            opaque = Opaque(name, None)
            opaque.pytype = type(value)
            return opaque
        if isinstance(value, np.generic):
            # np.float16(0.5), np.complex64(1j): no kernel scalar, but its dtype still rules
            # the externs reading it where dtypes are inferred again (dynamic sizes)
            return Opaque(name, TensorMeta((), value.dtype))
        return Opaque(name, None)

    def lower_constant(self, name: str, value: Any) -> Any:
        if isinstance(value, np.ndarray) and value.dtype.name in self.dtypes and \
                all(s % value.itemsize == 0 for s in value.strides):
            gname = f"_c_{name}"
            buf = Buffer(gname, value.shape, value.dtype, "const")
            buf.strides = tuple(s // value.itemsize for s in value.strides)
            buf.contiguous = bool(value.flags.c_contiguous)
            self.buffers[gname] = buf
            self.constants[gname] = value
            return BufferValue.whole(buf)
        return self.as_value(value)

    def lower_call(self, op: Any, args: tuple, params: dict, meta: Any) -> Any:
        if meta is None:  # on the example's sizes: dtype rules and NumPy's errors
            example = params if not self.sizes else \
                {k: map_leaves(v, self.sizes.hint) for k, v in params.items()}   # sizes in params
            meta = infer_meta(op, map_values(args, self.meta_of), example)
        if any(isinstance(v, Opaque) for v in iter_values(args)) or not isinstance(meta, TensorMeta) \
                or meta.dtype.name not in self.dtypes:
            return self.extern(op, args, params, meta)
        value = self._lower_call(op, args, params, meta)
        if op.category != Category.MUTATION:   # (np.zeros_like(x) is laid out like x)
            self.note_layout(op, args, params, value)
        return value

    def _lower_call(self, op: Any, args: tuple, params: dict, meta: Any) -> Any:
        rule = op.lowering
        try:
            if isinstance(rule, dict) and rule.get("or_extern"):
                value = self.decompose_or_extern(rule["decompose"], args, params)
                if value is not None:
                    return value
            elif isinstance(rule, dict) and "decompose" in rule:
                return self.decompose(rule["decompose"], args, params)
            if isinstance(rule, dict) and rule.get("relayout") and isinstance(args[0], (Pointwise, BufferValue)):
                return self.relayout(op, args, params, meta)
            if isinstance(rule, dict) and "fill" in rule:
                value = lower_fill(self, rule["fill"], args, params, op, meta)
                if value is not None:
                    return value
            if isinstance(rule, dict) and rule.get("repeat"):
                value = lower_repeat(self, args, params, meta)
                if value is not None:
                    return value
            if isinstance(rule, dict) and rule.get("join"):
                value = lower_join(self, rule["join"], args, params, meta)
                if value is not None:
                    return value
            if isinstance(rule, dict) and rule.get("tri"):
                value = lower_tri(self, rule["tri"], args, params, meta)
                if value is not None:
                    return value
            if isinstance(rule, dict) and rule.get("region_write"):
                value = lower_region_write(self, args, meta)
                if value is not None:
                    return value
            if op.category == Category.POINTWISE and isinstance(rule, dict) and "scalar" in rule:
                value = self.pointwise(op, rule, args, params, meta)
                if value is not None:
                    return value
            elif op.category == Category.REDUCTION and isinstance(rule, dict) and "reduce" in rule:
                from .reductions import lower_reduction, lower_selected
                value = lower_selected(self, *args, meta) if rule.get("select") else \
                    lower_reduction(self, rule, args[0], params, meta)
                if value is not None:
                    return value
            elif op.category == Category.SCAN and isinstance(rule, dict) and "scan" in rule:
                from .reductions import lower_scan
                value = lower_scan(self, rule, args[0], params, meta,
                                   self.numpy_layout(op, args, params, tuple(meta.shape)))
                if value is not None:
                    return value
            elif op.category == Category.VIEW and isinstance(rule, dict) and "part" in rule:
                origin = getattr(self, "_origin", ())
                if origin and origin[0] not in getattr(self, "_returned_views", {origin[0]}):
                    value = self.view_part(rule["part"], args[0], meta)
                    if value is not None:
                        return value
            elif op.category == Category.VIEW:
                value = self.view(op, args, params, meta)
                if value is not None:
                    return value
        except _NoRule:
            pass
        return self.extern(op, args, params, meta)

    def decompose(self, fn: Any, args: tuple, params: dict) -> Any:
        """Run a decomposition written with ops: each op call lowers through this object."""
        token = _CURRENT.set(self)
        try:
            return fn(*args, **params)
        finally:
            _CURRENT.reset(token)

    def decompose_or_extern(self, fn: Any, args: tuple, params: dict) -> Any:
        """A decomposition whose ops must lower to loop code, or None: a ufunc with
        ``where=`` (kiln/ops/masked.py) as ``where(mask, ufunc(...), o)`` is None when the
        ufunc lowers to an extern NumPy call, which would compute every element (an
        operator on NumPy scalars, kiln/ops/scalar_math.py, when the ufunc's call would
        skip scalar math's checks): what the decomposition added is taken back and the
        node's own NumPy call runs."""
        nodes, buffers, realized = len(self.nodes), set(self.buffers), dict(self._realized)
        value = self.decompose(fn, args, params)
        if not any(isinstance(n, ExternNode) for n in self.nodes[nodes:]):
            return value
        del self.nodes[nodes:]
        for name in set(self.buffers) - buffers:
            del self.buffers[name]
        # an input the decomposition gave memory (its kernel just taken back) has none
        # (np.sin(s) + True on NumPy scalars: the extern read a buffer nothing wrote)
        self._realized = realized
        return None

    def meta_of(self, value: Any) -> Any:
        """What infer_meta sees of a lowering value (an array on the example's sizes)."""
        if _is_array(value):
            return TensorMeta(self.sizes.hint(tuple(value.shape)), value.dtype)
        return _meta_of(value)

    def broadcast(self, shapes: list, example: tuple) -> tuple:
        """NumPy's broadcast of (possibly symbolic) shapes; ``example`` is the result on
        the example's sizes. Two different sizes meeting in one dim (a symbol and a number
        NumPy happened to accept) cannot be expressed: the graph specializes."""
        if not self.sizes:
            return tuple(example)
        out = []
        for k in range(1, len(example) + 1):
            dims = {sh[-k] for sh in shapes if len(sh) >= k and not (isinstance(sh[-k], int) and sh[-k] == 1)}
            if len(dims) > 1:
                raise Undecidable(f"sizes {sorted(map(str, dims))} meet in one dimension")
            out.append(dims.pop() if dims else 1)
        shape = tuple(reversed(out))
        if self.sizes.hint(shape) != tuple(example):
            raise Undecidable(f"shape {shape} does not match the example's {example}")
        return shape

    def identity(self, x: Value) -> Pointwise:
        # x's cost: each load of the identity loads (recomputes) x, so a value read by
        # several users through it is realized as x would be (REALIZE_COST_SHARED)
        return Pointwise(x.shape, x.dtype, lambda ops, index: x.load(ops, index), getattr(x, "cost", 0),
                         self._origin)

    # -- realization and externs -------------------------------------------------------------
    def realize(self, value: Value, strides: tuple | None = None) -> BufferValue:
        """Give ``value`` memory: a computed buffer written by a pointwise node (C order,
        or ``strides``)."""
        if isinstance(value, BufferValue):
            return value
        done = self.realized(value)
        if done is not None:
            return done
        creation = getattr(value, "creation", None)
        if creation is not None:
            # A fresh array needed as memory (returned, or written by an extern): NumPy's
            # own call, which np.zeros/np.empty answer without touching the pages.
            return self._remember(value, self.extern(*creation))
        if isinstance(value, Scalar):
            value = Pointwise((), value.dtype, lambda ops, index, v=value: v.load(ops, index), 0, self._origin)
        buf = self.new_buffer(value.shape, value.dtype, "computed")
        if strides is not None:
            lay_out(buf, strides)
        node = ComputeNode(buf.name, buf, "pointwise", getattr(value, "origins", self._origin))
        node.value = value
        self.nodes.append(node)
        out = BufferValue.whole(buf)
        if getattr(value, "layout", None) is not None:
            out.layout = value.layout   # NumPy's, for what is computed from it (or returned)
        return self._remember(value, out)

    def realized(self, value: Value) -> BufferValue | None:
        """The memory already given to ``value`` (this very object), or None."""
        found = self._realized.get(id(value))
        return None if found is None else found[1]

    def _remember(self, value: Value, out: BufferValue) -> BufferValue:
        self._realized[id(value)] = (value, out)
        return out

    # -- outputs -----------------------------------------------------------------------------
    def lower_outputs(self, node: Node) -> None:
        (values,) = node.args
        outs = []
        for i, v in enumerate(values):
            value = self.env[v] if isinstance(v, Node) else v
            if isinstance(value, Pointwise) or (isinstance(value, Scalar) and isinstance(v, Node)
                                                and not value.arg):
                value = self.realize_output(value)
            elif isinstance(value, BufferValue) and getattr(value, "layout", None) is not None:
                value = self.realize_output(value)
            if isinstance(v, Node) and v.kind == "call" and isinstance(value, BufferValue) \
                    and value.shape == () and _numpy_returns_scalar(v):
                self.scalar_outputs.add(i)
            outs.append(value)
        self.outputs = outs


class _NoRule(Exception):
    pass


# The lowering running a decomposition, per thread (and per asyncio task): two functions
# lowering in two threads never see each other's.
_CURRENT: contextvars.ContextVar = contextvars.ContextVar("kiln_lowering", default=None)


def _hook(op: Any, inputs: tuple, params: dict) -> Any:
    """Ops called on lowering values (inside decompositions) lower through the current graph."""
    low = _CURRENT.get()
    if low is None:
        raise RuntimeError("a lowering value was used outside of lowering")
    inputs = tuple(low.as_value(a) for a in inputs)
    return low.lower_call(op, inputs, op.bind_params(params), None)


Value.__kiln_op__ = staticmethod(_hook)


def _numpy_returns_scalar(node: Node, memo: dict | None = None) -> bool:
    """Would NumPy give a scalar (not a 0-d array) for this 0-d result? (Run on stand-ins:
    a 0-d input that is itself a NumPy scalar is one here too: ``np.float32(x.sum())``.)
    ``memo``: answers so far, by node (a chain of 0-d ops reusing each step, ``s = s * 3 +
    s`` unrolled, asked each node twice per step: exponential without it)."""
    memo = {} if memo is None else memo
    if id(node) in memo:
        return memo[id(node)]
    if node.op.state is not None:   # its kernel would draw (a random op's result is an array)
        answer = False
    else:
        try:
            fake_args = to_fake(map_nodes(node.args, lambda n: _stand_in(n, memo)))
            answer = isinstance(on_stand_ins(node.op.impl, *fake_args, **node.kwargs), np.generic)
        except Exception:
            answer = False
    memo[id(node)] = answer
    return answer


def _stand_in(n: Node, memo: dict | None = None) -> Any:
    val = n.val
    if n.kind == "call" and isinstance(val, TensorMeta) and val.shape == () \
            and _numpy_returns_scalar(n, memo):
        return val.dtype.type(1)
    if type(val) is int:
        # a Python int argument: its type decides (NEP 50), not its value, which can be one
        # the call at hand rejects (``np.uint8(8) * t`` with t = 2**40: OverflowError)
        return 1
    return val


def _dtypes_in(graph: Graph, example_inputs: list) -> Iterator[Any]:
    """Every dtype a graph computes with: its inputs' and each value's."""
    for value in example_inputs:
        if hasattr(value, "dtype"):
            yield value.dtype
    for node in graph.nodes:
        for meta in iter_leaves(node.meta.get("val")):
            if isinstance(meta, TensorMeta):
                yield meta.dtype
