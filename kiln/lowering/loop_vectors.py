"""Run-time-length slices of a loop body as inner C++ loops (kiln/ops/loop_vectors.py).

A ``vec_view`` is a pointer, a length and a stride, computed once per iteration of the
loop around it with Python's slice rules (negative bounds count from the end, bounds
clamp to the axis): no per-element check. A ``vec_fn`` prints nothing where it stands;
the consumer inlines it into its own element loop (a ``vec_flip`` of a view is a view: its
last element's pointer and the stride negated) — ``vec_reduce`` (``a @ b``, ``a.sum()``:
eight partial sums, so the loop is not one chain of dependent adds; ``a.max()``,
``a.min()``: exact, NaN wins, an empty vector fails a check) and ``vec_store``
(``x[i, a:b] = value``). Semantics are NumPy's:

- lengths must match: where capture cannot prove it (the same bounds on axes of the
  same size), a check; a length-1 vector broadcast in NumPy fails it, and the reference
  interpreter runs the loop (as for every check, kiln/lowering/loops.py);
- a ``vec_fn`` is a temporary: inlined, it reads memory when its consumer runs, so the
  printer refuses (Unnative: the loop stays interpreted) one consumed in another loop
  than its own or after a store into an array it reads;
- a store whose value reads the array it writes through another overlapping view
  (``x[1:i] = x[:i - 1]``) computes the value into a scratch buffer first, as NumPy's
  overlap rule does; same positions (``A[i, :] = A[i, :] * 2``) or disjoint memory write
  directly. The scratch (one per function, the largest axis a store writes) is
  allocated before the loop starts, so a store never fails once it began.

``a.sum()`` adds in NumPy's pairwise order, in the sum's type: NumPy's to the last bit.
``a @ b`` sums its products in eight partial sums, in double, not in the order of the BLAS
``dot`` NumPy calls: it agrees to rounding, not bit for bit.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops.loop_vectors import VecMeta
from .loop_scalars import CTYPES, Unnative, _Kind

# Partial sums a reduction keeps (then added pairwise): measured on a 2000-row triangular
# solve, 4 ran 1.9x numba's BLAS dot, 8 at parity, 16 no better on shorter rows.
ACCUMULATORS = 8


class _Vec:
    """A vector in C: its length ``n`` (a C name), the key that proves two lengths equal,
    and either a view (``ptr``, ``stride``, ``base`` array) or an expression (``fn``, its
    ``args``, the block it belongs to and the store counts of the arrays it reads)."""

    def __init__(self, dtype: np.dtype, n: str, key: Any, **kw: Any) -> None:
        self.dtype, self.n, self.key = dtype, n, key
        self.ptr = self.stride = self.base = None
        self.fn: str | None = None
        self.args: tuple = ()
        self.block: Any = None
        self.epochs: dict = {}
        self.__dict__.update(kw)


def _is_vec(value: Any) -> bool:
    return hasattr(value, "kind") and isinstance(value.val, VecMeta)


class VectorOps:
    """The vector ops of :class:`kiln.lowering.loops._Printer` (a mixin)."""

    def _vec_init(self) -> None:
        self.vecs: dict[Any, _Vec] = {}
        self.views: dict[tuple, _Vec] = {}    # (block, array, index, bounds) -> its view
        self.epoch: dict[str, int] = {}       # array C name -> stores printed so far
        self.scratch_dims: list[str] = []     # axes a store through scratch may fill
        self.block: Any = None                # the graph whose body is being printed

    def stored(self, array_name: str) -> None:
        self.epoch[array_name] = self.epoch.get(array_name, 0) + 1

    # -- views ---------------------------------------------------------------------------
    def _bound_key(self, value: Any) -> Any:
        form = self.bounds.form(value) if self.fast and self.bounds is not None else None
        if form is not None:
            return ("affine", tuple(sorted((k.name, c) for k, c in form.coefs.items())), form.const)
        return ("value", value.name if hasattr(value, "kind") else value)

    def _view(self, node: Any, array: Any, index: tuple, start: Any, stop: Any, axis: int,
              step: int = 1) -> _Vec:
        """The view's pointer, length and stride (the same view in the same block once)."""
        def ident(v: Any) -> Any:
            return ("node", self.names.get(v, v.name)) if hasattr(v, "kind") else ("lit", v)
        memo = (id(self.block), self.arrays[array][0], tuple(map(ident, index)), ident(start),
                ident(stop), axis, step)
        found = self.views.get(memo)
        if found is None:
            found = self.views[memo] = self._new_view(node, array, index, start, stop, axis, step)
        return found

    def _new_view(self, node: Any, array: Any, index: tuple, start: Any, stop: Any, axis: int,
                  step: int = 1) -> _Vec:
        name, ndim, dtype = self.arrays[array]
        if dtype.name not in ("float32", "float64"):
            raise Unnative(f"a slice of a {dtype} array")
        axes = [k for k in range(ndim) if k != axis]
        off = self._offset(node, array, index, axes) if index else "0"
        dim = f"{name}_d{axis}"
        depth = self.depth
        bounds = []
        # Python's slice rules: step 1 clamps to [0, dim]; step -1 (``y[k - 1::-1]``)
        # starts at dim - 1 by default, stops before the start ("-1") by default, and
        # clamps to [-1, dim - 1]
        low, high = ("0", dim) if step == 1 else ("-1", f"{dim} - 1")
        defaults = ("0", dim) if step == 1 else (f"{dim} - 1", "-1")
        for value, default in zip((start, stop), defaults):
            if value is None:
                bounds.append(default)
                continue
            kind = value.val if hasattr(value, "kind") else value
            if _Kind(kind if type(kind) is int else type(kind)(1)).name == "uint64":
                raise Unnative("an unsigned 64-bit slice bound")
            b = self.fresh("b")
            self.emit(f"int64_t {b} = {self.ref(value, _Kind(1))};", depth)
            self.emit(f"if ({b} < 0) {{ {b} += {dim}; if ({b} < 0) {b} = {low}; }} "
                      f"else if ({b} > {high}) {b} = {high};", depth)
            bounds.append(b)
        n, ptr = self.fresh("n"), self.fresh("p")
        first, last = bounds if step == 1 else bounds[::-1]
        self.emit(f"const int64_t {n} = {last} > {first} ? {last} - {first} : 0;", depth)
        ct = CTYPES[dtype.name]
        self.emit(f"{ct}* {ptr} = {name} + {off} + {bounds[0]} * {name}_s{axis};", depth)
        shape = self._static_dim(array, axis)
        key = (self._bound_key(start if start is not None else 0),
               self._bound_key(stop) if stop is not None else ("end",), shape, step)
        stride = f"{name}_s{axis}" if step == 1 else f"(-{name}_s{axis})"
        return _Vec(dtype, n, key, ptr=ptr, stride=stride, base=name)

    def _static_dim(self, array: Any, axis: int) -> Any:
        shape = array.val.shape if hasattr(array, "val") and hasattr(array.val, "shape") else None
        if self.fast and shape is not None and type(shape[axis]) is int:
            return shape[axis]
        return f"{self.arrays[array][0]}_d{axis}"

    def op_vec_view(self, node: Any, depth: int) -> None:
        x, index, start, stop = node.args
        self.vecs[node] = self._view(node, x, index, start, stop, node.kwargs["axis"],
                                     node.kwargs.get("step", 1))

    def op_vec_flip(self, node: Any, depth: int) -> None:
        """``np.flip(v)`` of a view: a pointer to its last element and the stride negated
        (a store reading it through the array it writes goes through scratch, below)."""
        v = self.vecs[node.args[0]]
        if v.fn is not None:
            raise Unnative("np.flip of a vector expression")
        ptr = self.fresh("p")
        ct = CTYPES[v.dtype.name]
        self.emit(f"{ct}* {ptr} = {v.n} > 0 ? {v.ptr} + ({v.n} - 1) * {v.stride} : {v.ptr};", self.depth)
        self.vecs[node] = _Vec(v.dtype, v.n, v.key, ptr=ptr, stride=f"(-{v.stride})", base=v.base)

    def op_vec_fn(self, node: Any, depth: int) -> None:
        args = node.args[0]
        vecs = [self.vecs[a] for a in args if _is_vec(a)]
        first = vecs[0]
        for other in vecs[1:]:
            self._same_length(first, other)
        epochs: dict = {}
        for v in vecs:
            if v.fn is None:
                epochs[v.base] = self.epoch.get(v.base, 0)
            else:
                epochs.update(v.epochs)
        self.vecs[node] = _Vec(np.dtype(node.val.dtype), first.n, first.key, fn=node.kwargs["fn"],
                               args=tuple(args), block=self.block, epochs=epochs)

    def _same_length(self, a: _Vec, b: _Vec) -> None:
        if a.key != b.key:
            self.check(f"{a.n} != {b.n}")

    # -- element expressions -------------------------------------------------------------
    def _elem(self, value: Any, j: str, want: np.dtype) -> str:
        """C expression of element ``j`` of a vector (or of a scalar), as ``want``."""
        kind = _Kind(want.type(1))
        if not _is_vec(value):
            return self.ref(value, kind)
        v = self.vecs[value]
        if v.fn is None:
            expr = f"{v.ptr}[{j} * {v.stride}]"
        else:
            if v.block is not self.block or any(self.epoch.get(b, 0) != e for b, e in v.epochs.items()):
                raise Unnative("a vector expression read after a store or in another loop")
            expr = self._fn_expr(v, j)
        return expr if v.dtype == want else f"(({kind.ctype})({expr}))"

    def _fn_expr(self, v: _Vec, j: str) -> str:
        e = [self._elem(a, j, v.dtype) for a in v.args]
        t = CTYPES[v.dtype.name]
        ops = {"add": "+", "sub": "-", "mul": "*", "truediv": "/"}
        if v.fn in ops:
            return f"(({t})({e[0]} {ops[v.fn]} {e[1]}))"
        if v.fn == "neg":
            return f"(-{e[0]})"
        if v.fn == "pos":
            return e[0]
        if v.fn in ("abs", "np.absolute"):
            return f"kiln_fabs({e[0]})"
        if v.fn == "np.sqrt":
            return f"kiln_sqrt({e[0]})"
        if v.fn == "np.square":
            return f"(({t})({e[0]} * {e[0]}))"
        if v.fn == "np.reciprocal":
            return f"(({t})(({t})1 / {e[0]}))"
        if v.fn in ("np.maximum", "np.minimum"):   # NaN propagates; ties give the second
            op = ">" if v.fn == "np.maximum" else "<"
            return f"(({e[0]} {op} {e[1]} || {e[0]} != {e[0]}) ? {e[0]} : {e[1]})"
        raise Unnative(f"vector {v.fn}")

    # -- consumers -----------------------------------------------------------------------
    def _extremum(self, node: Any, depth: int) -> None:
        """``a.max()`` / ``a.min()``: exact, in the vector's type; NaN wins, as in NumPy; an
        empty vector fails the check (the reference raises NumPy's ValueError)."""
        a = node.args[0]
        va = self.vecs[a]
        want = np.dtype(type(node.val))
        t = CTYPES[want.name]
        self.check(f"{va.n} <= 0")
        m, j, x = self.fresh("m"), self.fresh("j"), self.fresh("x")
        op = ">=" if node.kwargs["fn"] == "max" else "<="   # the last of equal values wins
        self.emit(f"{t} {m} = {self._elem(a, '0', want)};", depth)
        self.emit(f"for (int64_t {j} = 1; {j} < {va.n}; ++{j}) {{ const {t} {x} = "
                  f"{self._elem(a, j, want)}; if ({x} {op} {m} || {x} != {x}) {m} = {x}; }}", depth)
        self.names[node] = m

    def op_vec_reduce(self, node: Any, depth: int) -> None:
        a, b = node.args
        fn = node.kwargs["fn"]
        if fn in ("max", "min"):
            return self._extremum(node, depth)
        va = self.vecs[a]
        if fn != "sum":
            self._same_length(va, self.vecs[b])
        out = np.dtype(type(node.val))
        if fn == "sum":
            return self._sum(node, va, out, depth)
        t = "double"   # float32 too, as kiln's dot products do (within rounding of BLAS's)
        accs = [self.fresh("acc") for _ in range(ACCUMULATORS)]
        j = self.fresh("j")

        def term(k: str) -> str:
            x = self._elem(a, k, np.dtype(np.float64))
            return f"{x} * {self._elem(b, k, np.dtype(np.float64))}" if fn != "sum" else x
        self.emit(f"{t} {', '.join(f'{x} = 0' for x in accs)};", depth)
        self.emit(f"int64_t {j} = 0;", depth)
        self.emit(f"for (; {j} + {ACCUMULATORS} <= {va.n}; {j} += {ACCUMULATORS}) {{", depth)
        for k, acc in enumerate(accs):
            self.emit(f"{acc} += {term(f'({j} + {k})')};", depth + 1)
        self.emit("}", depth)
        self.emit(f"for (; {j} < {va.n}; ++{j}) {accs[0]} += {term(j)};", depth)
        name = self.fresh("r")
        pairs = accs
        while len(pairs) > 1:
            pairs = [f"({pairs[k]} + {pairs[k + 1]})" for k in range(0, len(pairs), 2)]
        self.emit(f"{CTYPES[out.name]} {name} = ({CTYPES[out.name]}){pairs[0]};", depth)
        self.names[node] = name

    def _sum(self, node: Any, va: _Vec, out: np.dtype, depth: int) -> None:
        """``a.sum()``: NumPy's to the last bit, added in NumPy's pairwise order in the sum's
        type (a float32 vector's sum is float32 all through; loop_scalars.py
        ``kiln_pairwise_sum``). Vectors are slices of float arrays (capture/loop_vectors.py)."""
        if out.kind != "f":
            raise Unnative(f"a {out} vector sum")
        a = node.args[0]
        t, name, k = CTYPES[out.name], self.fresh("r"), self.fresh("k")
        self.emit(f"const {t} {name} = kiln_pairwise_sum<{t}>([&](int64_t {k}) -> {t} "
                  f"{{ return {self._elem(a, k, out)}; }}, {va.n});", depth)
        self.names[node] = name

    def _leaves(self, value: Any) -> list[_Vec]:
        if not _is_vec(value):
            return []
        v = self.vecs[value]
        if v.fn is None:
            return [v]
        return [leaf for a in v.args for leaf in self._leaves(a)]

    def op_vec_store(self, node: Any, depth: int) -> None:
        x, index, start, stop, value = node.args
        dst = self._view(node, x, index, start, stop, node.kwargs["axis"], node.kwargs.get("step", 1))
        t = CTYPES[dst.dtype.name]
        j = self.fresh("j")
        if not _is_vec(value):
            s = self.fresh("v")
            self.emit(f"const {t} {s} = {self.ref(value, _Kind(dst.dtype.type(1)))};", depth)
            self.emit(f"for (int64_t {j} = 0; {j} < {dst.n}; ++{j}) {dst.ptr}[{j} * {dst.stride}] = {s};",
                      depth)
            self.stored(dst.base)
            return
        self._same_length(dst, self.vecs[value])
        elem = self._elem(value, j, dst.dtype)
        direct = f"for (int64_t {j} = 0; {j} < {dst.n}; ++{j}) {dst.ptr}[{j} * {dst.stride}] = {elem};"
        same = [v for v in self._leaves(value) if v.base == dst.base and v.ptr != dst.ptr]
        if not same:
            self.emit(direct, depth)
        else:
            def span(v: _Vec) -> tuple[str, str]:
                last = f"({dst.n} - 1) * {v.stride}"
                return (f"{v.ptr} + ({last} < 0 ? {last} : 0)", f"{v.ptr} + ({last} > 0 ? {last} : 0)")
            lo, hi = span(dst)
            clauses = []
            for v in same:
                vlo, vhi = span(v)
                clauses.append(f"({vlo} <= {hi} && {lo} <= {vhi})")
            scratch = self.fresh("sc")
            self.scratch_dims.append(self._static_dim(x, node.kwargs["axis"]) if self.fast
                                     else f"{self.arrays[x][0]}_d{node.kwargs['axis']}")
            self.emit(f"if ({dst.n} > 0 && ({' || '.join(clauses)})) {{   // overlapping memory: "
                      f"the value first, as NumPy does", depth)
            self.emit(f"{t}* {scratch} = ({t}*)kiln_scratch_buf.p;", depth + 1)
            self.emit(f"for (int64_t {j} = 0; {j} < {dst.n}; ++{j}) {scratch}[{j}] = {elem};", depth + 1)
            self.emit(f"for (int64_t {j} = 0; {j} < {dst.n}; ++{j}) {dst.ptr}[{j} * {dst.stride}] = "
                      f"{scratch}[{j}];", depth + 1)
            self.emit("} else {", depth)
            self.emit(direct, depth + 1)
            self.emit("}", depth)
        self.stored(dst.base)

    def scratch_lines(self) -> list[str]:
        """The scratch buffer's allocation, before the loop (none when no store needs it)."""
        if not self.scratch_dims:
            return []
        dims = list(dict.fromkeys(str(d) for d in self.scratch_dims))
        size = dims[0]
        for d in dims[1:]:
            size = f"({d} > {size} ? {d} : {size})"
        fail = "2" if self.fast else "1"
        return [f"  kiln_scratch kiln_scratch_buf((unsigned long)({size}) * 8);",
                f"  if (!kiln_scratch_buf.p) return {fail};"]
