"""The Python wrapper module of a compiled graph (what ``output_code`` shows first).

``call(*inputs)`` checks the input layouts the kernels were specialized for, allocates
outputs and intermediates with ``np.empty`` (reusing dead buffers of the same shape and
dtype), calls kernels and extern NumPy kernels in schedule order, deletes each buffer
after its last use and returns the outputs. The module is runnable on its own
(``python wrapper.py`` times it on random inputs).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.graph import numpy_call_at
from ..ir.printer import errstate_prefix, format_value
from .fast_plan import fast_plan
from .loop_ir import Buffer, BufferValue, Scalar, Value
from .lower import GraphLowering, Opaque
from .memory import MemoryPlan
from .scalars import cast_limit
from .scheduler import Kernel
from .sizes import Size, render


class WrapperCode:
    def __init__(self, low: GraphLowering, items: list, rendered: dict[str, Any],
                 memory: MemoryPlan, renderer: Any) -> None:
        self.low = low
        self.renderer = renderer  # pointers, allocation, launches (lowering/renderer.py)
        self.items = items
        self.rendered = rendered
        self.memory = memory      # allocate, reuse, pool, free (lowering/memory.py)
        self.consts: dict[str, Any] = {}     # extern params that are not literals
        self.scalars: dict[str, str] = {}    # a NumPy scalar's source -> the global made once
        self.externs: dict[str, Any] = {}    # global name -> op (its impl is called)
        # (method, file, line) -> the global of an extern called as the user's ndarray
        # method from their line (ir/graph.py extern_impl)
        self.method_sites: dict[tuple, str] = {}
        self.site_ops: dict[str, Any] = {}   # its global -> the op
        self.site_keywords: set[str] = set()   # sites some call passes keyword params
        self.lines: list[str] = []
        self._views = 0
        self._made_views: dict[int, tuple] = {}   # id of a view value -> (it, its name)
        self.inplace_externs: dict[str, Any] = {}  # name -> op run with its inplace_impl
        self.out_externs: dict[str, Any] = {}      # name -> op run with its out_impl
        # (impl attribute, op, params) -> the global of its spread_impl or check_impl
        self.spread: dict[tuple, str] = {}
        self.checks: dict[int, str] = {}     # step -> the global its check_impl call uses
        self.allocated: set[str] = set()     # dtype names of the arrays call allocates
        self.uses_in_order = False           # an extern result kept in NumPy's layout
        self.uses_straight_loops = False     # a loop's runner called by the wrapper

    # -- expressions -------------------------------------------------------------------------
    def py(self, value: Any) -> str:
        """A Python expression for a value (views are rebuilt with NumPy, as the user's code did)."""
        if isinstance(value, BufferValue):
            if value.is_whole():
                return self.buf_name(value.buf)
            if value.py is None:
                raise AssertionError(f"no Python form for a window on {value.buf.name}")
            made = self._made_views.get(id(value))
            if made is not None and made[0] is value:   # (this step made it already)
                return made[1]
            op, args, params = value.py
            if op.subscript and len(args) == 2 and not params:
                expr = f"{self.py(args[0])}[{self.subscript(args[1])}]"
            else:
                name = f"_view_{op.name}"
                self.externs[name] = op
                base = ", ".join([self.py(args[0])] + [self.arg(a) for a in args[1:]] +
                                 [f"{k}={self.arg(v)}" for k, v in params.items()])
                expr = f"{name}({base})"
            self._views += 1
            var = f"view{self._views - 1}"
            self._made_views[id(value)] = (value, var)   # (held: its id is not reused)
            self.lines.append(f"{var} = {expr}")
            return var
        if isinstance(value, Scalar):
            if value.arg:
                return value.name  # the wrapper's parameter
            if value.weak:
                return self.literal(value.value)
            return self.literal(np.dtype(value.dtype).type(value.value))
        if isinstance(value, Opaque):
            return value.name
        raise AssertionError(f"cannot express {value!r} in the wrapper")

    def arg(self, value: Any) -> str:
        if isinstance(value, Value):
            return self.py(value)
        if isinstance(value, tuple):
            inner = ", ".join(self.arg(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if isinstance(value, list):
            return "[" + ", ".join(self.arg(v) for v in value) + "]"
        if isinstance(value, slice):
            return f"slice({self.arg(value.start)}, {self.arg(value.stop)}, {self.arg(value.step)})"
        if isinstance(value, Size):   # a dynamic size in a view's params: the wrapper's symbols
            return render(value)
        return self.literal(value)

    def literal(self, value: Any) -> str:
        """A constant's source. A NumPy scalar is a module global made once: building
        ``np.uint32(4294967295)`` costs 0.2-0.5 us, on every call of a 1 us loop call."""
        text = format_value(value, self.consts)
        if isinstance(value, np.generic) and text.startswith("np."):
            return self.scalars.setdefault(text, f"_scalar{len(self.scalars)}")
        return text

    def subscript(self, index: Any) -> str:
        """``index`` (an op's index tuple) as the text between a subscript's brackets:
        ``(slice(1, None, None), 0)`` -> ``1:, 0``."""
        def entry(e: Any) -> str:
            if isinstance(e, slice):
                parts = ["" if v is None else self.arg(v) for v in (e.start, e.stop, e.step)]
                return ":".join(parts[:2] if e.step is None else parts)
            return "..." if e is Ellipsis else self.arg(e)
        if not isinstance(index, tuple):
            return entry(index)
        if not index:
            return "()"
        return ", ".join(entry(e) for e in index)   # (an array takes x[(i,)] as x[i])

    def _spread(self, item: Any, read: set) -> str | None:
        """The global naming ``item``'s op's ``spread_impl`` for its params (a scalar_fn
        as the operator itself: no tuple, no keywords per call), or its ``check_impl``
        (a value check whose result nothing in ``read`` reads), or None."""
        if item.op.check_impl is not None and item.name not in read:
            attr = "check_impl"
        elif item.op.spread_impl is not None and len(item.args) == 1 and isinstance(item.args[0], tuple):
            attr = "spread_impl"
        else:
            return None
        if not all(type(v) in (str, int, bool, tuple, type(None)) for v in item.params.values()):
            return None
        key = (attr, item.op.name, tuple(sorted(item.params.items())))
        if key not in self.spread:
            self.spread[key] = f"_{item.op.name}_{len(self.spread)}"
        return self.spread[key]

    def buf_name(self, buf: Buffer) -> str:
        return buf.name

    def _allocate(self, buf: Buffer) -> str:
        self.allocated.add(np.dtype(buf.dtype).name)
        return self.renderer.allocate(buf)

    def _built(self) -> list:
        """The kernels in the module, once each (kernels of the same code share the first's
        name: renderer.share_identical): the first, built one of each name, whose second
        body (its ``told_source``) is of that name; a later alias keeps its own name's."""
        built: dict = {}
        for rk in self.rendered.values():
            built.setdefault(rk.name, rk)
        return list(built.values())


    # -- the module --------------------------------------------------------------------------
    def generate(self, so_path: str, cdefs: str, graph_name: str) -> str:
        """The module's text; ``so_path`` and ``cdefs`` are what the renderer's loader reads."""
        low = self.low
        params = [name for name, _ in low.inputs]
        body: list[str] = []
        if self.rendered:  # np.errstate(divide="raise"), -W error and friends: NumPy's own errors
            body += ["if _fp_trapped():", f"    return _numpy({', '.join(params)})"]
            body += self.renderer.call_prelude(self._built())
        respecialize = f"    return _respecialize({', '.join(params)})"
        checks = self.renderer.input_checks(low.inputs)
        if checks:  # what the renderer's kernels assumed (an array type, a device)
            body[:0] = [f"if {' or '.join(checks)}:", respecialize]
        fixed = [(name, kind_) for name, kind_ in low.inputs
                 if isinstance(kind_, Buffer) and all(isinstance(n, int) for n in kind_.shape)]
        if fixed:  # one call checks every input built for one shape and strides
            body.append(f"if not _layouts({', '.join(name for name, _ in fixed)}):")
            body.append(respecialize)
        for name, kind_ in low.inputs:
            if isinstance(kind_, Buffer) and not all(isinstance(n, int) for n in kind_.shape):
                # dynamic dims: row-major, the static dims as built, the others bound below
                static = [f"{name}.shape[{d}] != {n}" for d, n in enumerate(kind_.shape) if isinstance(n, int)]
                body.append(f"if {name}.ndim != {len(kind_.shape)} or not {name}.flags.c_contiguous"
                            + "".join(f" or {c}" for c in static) + ":")
                body.append(respecialize)
        read = {s.name: s.source for s in low.sizes if s.kind != "unbacked"}
        if read:
            # Sizes are symbols (kernel arguments); 0 and 1 decide broadcasting and equal
            # example sizes share a symbol: anything else compiles for its own sizes.
            body += [f"{sym} = {expr}" for sym, expr in read.items()]
            checks = [f"{s.name} < {s.minimum}" for s in low.sizes if s.name in read and s.minimum] + \
                [f"{expr} != {sym}" for expr, sym in low.sizes.equal] + \
                [f"not ({guard})" for guard in low.sizes.guards]
            if checks:
                body.append(f"if {' or '.join(checks)}:")
                body.append(respecialize)
        if low.int_values:  # run-time ints this build took as constants (lower.specialize_ints)
            body.append(f"if {' or '.join(f'{n} != {v!r}' for n, v in low.int_values.items())}:")
            body.append(respecialize)
        # Sizes known only after an op ran: bound right after it (see the extern calls).
        body += [f"{s.name} = 0  # {s.source}, once it is computed" for s in low.sizes
                 if s.kind == "unbacked"]
        bound = set(read)
        pending_checks = list(low.size_checks)
        for name, kind_ in low.inputs:  # Python ints no C integer holds: NumPy's own arithmetic
            if isinstance(kind_, Scalar) and getattr(kind_, "pytype", None) is int:
                body.append(f"if not -9223372036854775808 <= {name} <= 9223372036854775807:")
                body.append(f"    return _respecialize({', '.join(params)})")
        for name, kind_ in low.inputs:  # Python ints that meet narrower integer loops (NEP 50)
            for dt in getattr(kind_, "int_bounds", ()):
                info = np.iinfo(dt)
                body.append(f"if not {info.min} <= {name} <= {info.max}:")
                body.append(f"    raise OverflowError(f'Python integer {{{name}}} out of bounds for {dt.name}')")
        # Python floats a narrower float loop converts (NEP 50): past its largest value
        # NumPy warns "overflow encountered in cast", once per op converting it, and
        # computes with an infinity. The kernel's own conversion would raise the flag of
        # the op it feeds ("overflow encountered in subtract", or nothing).
        constant_sites = tuple(tuple((node.meta.get("source") or ("", 0))[:2])
                               for node in getattr(low, "constant_casts", ()))
        if constant_sites:   # (NumPy's conversion of a constant: the same on every call)
            body.append(f"_cast_overflow({constant_sites!r})")
        floats = [(name, kind_) for name, kind_ in low.inputs if getattr(kind_, "float_bounds", ())]
        casts = {name: f"{min(cast_limit(dt) for dt, _ in kind_.float_bounds)!r} <= abs({name}) "
                       f"<= {float(np.finfo(np.float64).max)!r}" for name, kind_ in floats}
        for name, kind_ in floats:
            uses = kind_.float_bounds
            body.append(f"if {casts[name]}:")
            if len({cast_limit(dt) for dt, _ in uses}) == 1 and kind_.node is not None \
                    and set(kind_.node.users) <= {node for _, node in uses}:
                # every op reading it converts it so: those warnings, then the infinity
                sites = tuple(tuple((node.meta.get("source") or ("", 0))[:2]) for _, node in uses)
                body.append(f"    _cast_overflow({sites!r})")
                body.append(f"    {name} = _inf if {name} > 0 else -_inf")
            else:   # (also read at other precisions, or by other ops): NumPy runs the graph
                body.append(f"    return _numpy({', '.join(params)})")
        plan = self.memory
        read_by_kernels = {b.name for rk in self.rendered.values() for b in rk.buffers}
        # Results the graph returns whole that no kernel writes: an extern's among them
        # keeps its own value for the caller while kernels read a C-ordered copy (buffer
        # name -> that value's name): a 0-d result, or NumPy's layout (np.histogram2d's
        # counts are a window of a bigger array; H.sum() beside `return H`)
        written = {name for rk in self.rendered.values() for name in rk.written}
        returned_as_is = {v.buf.name for v in low.outputs
                          if isinstance(v, BufferValue) and v.is_whole() and v.buf.name not in written}
        own_value: dict[str, str] = {}
        outputs_read = {v.buf.name for v in low.outputs if isinstance(v, BufferValue)}
        for step, item in enumerate(self.items):
            self.lines = []
            views_before = self._views
            if isinstance(item, Kernel):
                rk = self.rendered[item.name]
                for a in plan.allocations.get(step, ()):
                    if a.how == "inplace":
                        # The kernel writes this output over an input it reads for the
                        # last time (lowering.inplace).
                        self.lines.append(f"{a.name} = {a.source}  # in place")
                    elif a.how == "reuse":
                        self.lines.append(f"{a.name} = {a.source}; del {a.source}  # reuse")
                    elif a.how == "pool":
                        # Big buffers come back from a per-site pool when nobody else
                        # holds them (refcount 2: this name and getrefcount's argument):
                        # fresh pages cost more than the kernel that fills them.
                        self.lines.append(f"{a.name} = {a.source}.pop() if {a.source} else None")
                        self.lines.append(f"if {a.name} is None or _refcount({a.name}) != 2:")
                        self.lines.append(f"    {a.name} = {self._allocate(a.buf)}")
                    else:
                        self.lines.append(f"{a.name} = {self._allocate(a.buf)}")
                args = [self.renderer.pointer(b) for b in rk.buffers] + [s.name for s in rk.scalars]
                args += list(rk.size_args)   # the sizes this kernel's code names
                # the memory offsets of this launch, where its code is shared (renderer.py)
                args += [str(v) for v in getattr(rk, "offset_args", ())]
                self.lines.append(self.renderer.launch(rk, args))
            elif getattr(item, "window_of", None) is not None:
                # the kernel before stored the write into the caller's array itself
                # (lowering/window_writes.py): the result is that array
                self.lines.append(f"{item.name} = {self.py(item.window_of)}  # written in place")
            else:
                name = f"_ext_{item.op.name}"
                at = _method_site(item)
                first_line = len(self.lines)
                if at is not None:   # NumPy's x.var() warns at the user's line
                    name = self.method_sites.setdefault(
                        at, f"_ext_{item.op.name}_at_{len(self.method_sites)}")
                    self.site_ops[name] = item.op
                    if item.params:
                        self.site_keywords.add(name)
                into = getattr(low, "extern_into", {}).get(item.name) if item.op.out_impl is not None else None
                if into is not None:   # written into the caller's array (lowering/inplace.py)
                    name = f"_out_{item.op.name}"
                    self.out_externs[name] = item.op
                spread = self._spread(item, read_by_kernels | outputs_read) \
                    if step not in plan.inplace_externs and into is None else None
                # x[index] = value written out, x the result (no Python frame per step)
                written = step in plan.inplace_externs and item.op.subscript and not item.params
                if spread is None and not written and into is None:
                    self.externs[name] = item.op
                if step in plan.inplace_externs and not written and at is not None \
                        and isinstance(at[0], tuple):   # its NumPy write from the user's line
                    name = self.method_sites.setdefault(
                        ((at[0][0], "inplace_impl"),) + at[1:],
                        f"_inplace_{item.op.name}_at_{len(self.method_sites)}")
                elif step in plan.inplace_externs and not written:
                    name = f"_inplace_{item.op.name}"
                    self.inplace_externs[name] = item.op
                call_args = [self.subscript(a) if written and k == 1 else self.arg(a)
                             for k, a in enumerate(item.args)]
                holder = item.op.call_param
                if spread is not None and item.op.check_impl is not None:
                    rhs = f"{spread}({', '.join(call_args)})"
                    self.checks[step] = spread
                elif spread is not None:
                    rhs = f"{spread}({', '.join(self.arg(a) for a in item.args[0])})"
                elif written and step in plan.written_before:
                    rhs = call_args[0]   # its value's extern wrote it there (memory.py)
                elif written:
                    self.lines.append(f"{call_args[0]}[{call_args[1]}] = {call_args[2]}")
                    rhs = call_args[0]
                elif item.op.item_param is not None and spread is None and into is None \
                        and type(item.params.get(item.op.item_param)) is int:
                    rhs = f"{call_args[0]}[{item.params[item.op.item_param]}]"
                elif holder is not None and holder in item.params:
                    # the op's call bound to this param (a loop's runner), called straight
                    method = "call_owned" if step in plan.inplace_externs else "call"
                    target = self.arg(item.params[holder])
                    rhs = f"{target}.{method}({', '.join(call_args)})"
                    straight = None
                    if item.name not in read_by_kernels:   # the runner called from here
                        from .loop_runner import straight_loop
                        straight = straight_loop(self, item, item.params[holder], method, target, rhs,
                                                 {name for name, _ in fixed})
                    if straight is not None:
                        self.lines += straight
                        rhs = None
                else:
                    call_args += [f"{k}={self.arg(v)}" for k, v in item.params.items()]
                    call_args += [f"out={self.py(BufferValue.whole(into))}"] if into is not None else []
                    rhs = f"{name}({', '.join(call_args)})"
                order = getattr(getattr(item.out, "buf", None), "order", None)
                if item.name in read_by_kernels and order is not None:
                    # NumPy's own layout (advanced indexing), which the kernels were built for
                    buf = item.out.buf
                    rhs = f"_in_order({rhs}, {tuple(s * buf.dtype.itemsize for s in buf.strides)!r}, {order!r})"
                    self.uses_in_order = True
                elif item.name in read_by_kernels and item.name in returned_as_is:
                    # kernels take a C-ordered array; the caller gets what NumPy gave (a
                    # loop's final carried NumPy scalar stays a scalar, as in Python)
                    own_value[item.name] = f"{item.name}_value"
                    self.lines.append(f"{item.name}_value = {rhs}")
                    rhs = f"np.asarray({item.name}_value, order='C')"
                elif item.name in read_by_kernels and into is None:
                    rhs = f"np.asarray({rhs}, order='C')"  # keeps 0-d results 0-d
                if rhs is not None:
                    self.lines.append(f"{item.name} = {rhs}")
                quiet = _quiet(item)
                if quiet:   # a call whose NumPy spelling checks no flag (np.vdot's dot)
                    # (one errstate for the call and the views it reads: ~1 us each)
                    self.lines[first_line:] = [quiet] + [
                        f"    {line}" for line in self.lines[first_line:]]
                for sym, expr in low.binds.get(item.name, ()):
                    self.lines.append(f"{sym} = {expr}")
                    bound.add(sym)
                for s in low.sizes:   # sizes computed from those (x[2:] of a selection)
                    if s.after and s.name not in bound and bound.issuperset(s.after):
                        self.lines.append(f"{s.name} = {s.source}")
                        bound.add(s.name)
                pending_checks = self._size_checks(pending_checks, bound)
            self.lines += [f"del {name}" for name in plan.deaths.get(step, ())]
            # a view made for this step's call is dead after it: held to the end, it kept its
            # base's memory too (a reshape of each step's matmul result in a Stockham FFT)
            self.lines += [f"del view{k}" for k in range(views_before, self._views)]
            self._made_views = {}   # (deleted: the outputs below make their own)
            body += self.lines
        self.lines = []
        outs = []
        for i, value in enumerate(low.outputs):
            if isinstance(value, BufferValue) and value.is_whole() and value.buf.name in own_value:
                # (a view of it, x0[0] of a 1-element x0, is read from the C copy: fuzz 36104)
                expr = own_value[value.buf.name]
            else:
                expr = self.py(value) if isinstance(value, Value) else self.arg(value)
            if i in low.scalar_outputs:
                expr = f"{expr}[()]"
            outs.append(expr)
        body += self.lines
        body += [f"{pool}.append({n})" if pool else f"del {n}" for n, pool in plan.at_exit]
        body += [f"{pool}.append({name})" for name, pool in plan.pooled_outputs]
        body.append(f"return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")

        head = [
            f"# kiln wrapper for graph '{graph_name}' (generated; run it: python <this file>)",
            "import sys",
            "import numpy as np",
        ]
        if self.rendered:
            head += self.renderer.wrapper_prelude(so_path, cdefs, self._built())
        head += [
            "",
            "def _respecialize(*args):  # replaced by the runtime: compile for new layouts",
            "    raise TypeError('kiln: inputs do not match the layouts this code was built for')",
            "",
            "def _numpy(*args):  # replaced by the runtime: the graph run by NumPy",
            "    raise TypeError('kiln: no NumPy fallback was installed')",
            "",
            "from kiln.runtime.fpmode import errors_trapped as _fp_trapped",
        ]
        if any(line.lstrip().startswith("_cast_overflow(") for line in body):
            head += ["from kiln.runtime.fpwarn import cast_overflow as _cast_overflow", "_inf = float('inf')"]
        if self.uses_in_order:
            head.append("from kiln.lowering.layout import in_order as _in_order")
        if self.uses_straight_loops:   # (loop_runner.py Straight)
            head += ["from kiln.ops.loops import stats as _loop_stats", "_loop_missed = (1,)"]
        if any("_wrap_index(" in s.source for s in low.sizes):   # x[i], i a run-time int
            head.append("from kiln.lowering.sizes import wrap_index as _wrap_index")
        if fixed:
            specs = ", ".join(repr((kind_.shape, tuple(s * kind_.dtype.itemsize for s in kind_.strides)))
                              for _, kind_ in fixed)
            head += ["from kiln.runtime.launch import layouts as _layout_check",
                     f"# ({', '.join(name for name, _ in fixed)}): the shapes and strides (bytes) the code was built for",
                     f"_layouts = _layout_check({specs})"]
        head += [
            "",
        ] + self.renderer.wrapper_globals() + self.renderer.allocation_globals(sorted(self.allocated)) + [
            "_refcount = sys.getrefcount",
        ] + [f"{pool} = []" for pool in plan.pools]
        head += self.renderer.bind_kernels(self._built())
        if self.externs or self.out_externs or self.method_sites or self.spread:
            head.append("from kiln.ops import REGISTRY")
        if self.externs or self.out_externs:
            for name, op in sorted(self.externs.items()):
                if name not in self.method_sites.values():
                    head.append(f"{name} = REGISTRY[{op.name!r}].impl")
            for name, op in sorted(self.inplace_externs.items()):
                head.append(f"{name} = REGISTRY[{op.name!r}].inplace_impl")
            for name, op in sorted(self.out_externs.items()):
                head.append(f"{name} = REGISTRY[{op.name!r}].out_impl")
        if self.method_sites:
            head.append("from kiln.ops.value_warnings import method_at as _method_at, ufunc_at as _ufunc_at")
            for (method, filename, lineno), name in sorted(self.method_sites.items(), key=lambda kv: kv[1]):
                if isinstance(method, tuple):   # (op, impl attribute): Op.impl_at
                    op = f"REGISTRY[{method[0]!r}]"
                    head.append(f"{name} = {op}.impl_at({filename!r}, {lineno!r}, {op}.{method[1]})")
                elif isinstance(method, str):
                    head.append(f"{name} = _method_at({method!r}, {filename!r}, {lineno!r})")
                else:   # the op's impl, a NumPy callable (a ufunc, np.dot)
                    op = f"REGISTRY[{self.site_ops[name].name!r}]"
                    keywords = "" if name in self.site_keywords else ", keywords=False"
                    head.append(f"{name} = _ufunc_at({op}.impl, {filename!r}, {lineno!r}{keywords})")
        for (attr, op, kw), name in self.spread.items():
            kwargs = ", ".join(f"{k}={v!r}" for k, v in kw)
            head.append(f"{name} = REGISTRY[{op!r}].{attr}({kwargs})")
        for name in sorted(low.constants):
            head.append(f"{name} = None  # a constant array; the runtime sets it")
        for name in sorted(self.consts):
            head.append(f"{name} = None  # a constant; the runtime sets it")
        head += [f"{name} = {text}" for text, name in self.scalars.items()]
        sig = ", ".join(params)
        text = "\n".join(head) + f"\n\n\ndef call({sig}):\n" + "\n".join("    " + l for l in body) + "\n"
        fast = fast_plan(self, params, fixed, bool(checks) or bool(read))
        if fast is not None and casts:
            # the C call checks the floats too: one Python call with the layouts' check
            names = [name for name, _ in fixed] + list(casts)
            test = ([f"_layouts({', '.join(name for name, _ in fixed)})"] if fixed else []) + \
                [f"not {c}" for c in casts.values()]
            text += (f"\n\ndef _fast_inputs({', '.join(names)}):  # launch.py fast_call\n"
                     f"    return {' and '.join(test)}\n")
            fast = fast[:1] + (tuple(params.index(name) for name in names),) + fast[2:]
        if fast is not None:
            text += ("\n# call's steps as data: the runtime runs them in C where the launcher "
                     "builds\n# (kiln/runtime/fast_call.c FastCall); call stays the reference and "
                     "the fallback\n" f"_fast_plan = {fast!r}\n")
        if self.rendered:
            text += self.renderer.wrapper_tail(self._built())
        text += self._main(params)
        return text

    def _main(self, params: list[str]) -> str:
        examples = []
        for name, kind_ in self.low.inputs:
            if isinstance(kind_, Buffer):
                examples.append(f"    {name} = _example({self.low.sizes.hint(kind_.shape)!r}, np.{kind_.dtype.name})")
            elif isinstance(kind_, Scalar) and getattr(kind_, "pytype", None) is int:
                examples.append(f"    {name} = {kind_.example!r}")   # it may be a slice bound
            elif isinstance(kind_, Scalar):
                examples.append(f"    {name} = {'0.5' if kind_.dtype.kind == 'f' else '1'}")
            else:
                examples.append(f"    {name} = None")
        return ("\n\ndef _example(shape, dtype):\n"
                "    return (np.random.default_rng(0).standard_normal(shape) * 3).astype(dtype)\n"
                "\n\nif __name__ == '__main__':\n"
                "    import timeit\n" + "\n".join(examples) + "\n"
                f"    n, t = timeit.Timer(lambda: call({', '.join(params)})).autorange()\n"
                "    print(f'{t / n * 1e6:.1f} us per call')\n")

    def _size_checks(self, checks: list, bound: set) -> list:
        """Emit the checks whose sizes are all bound now (NumPy's errors on empty
        selections, lowering.check_nonzero); return the others."""
        from .sizes import render
        later = []
        for size, unless, error, message in checks:
            syms = set().union(*(getattr(v, "symbols", set()) for v in (size, unless)))
            if not syms <= bound:
                later.append((size, unless, error, message))
                continue
            cond = f"{render(size)} == 0" + ("" if unless == 1 else f" and {render(unless)} != 0")
            self.lines.append(f"if {cond}:")
            self.lines.append(f"    raise {error}({message!r})")
        return later


def _graph_node(item: Any) -> Any:
    """The graph node extern ``item`` computes (its origin calling its op), or None."""
    for node in getattr(item, "origins", ()):
        if getattr(node, "target", None) is item.op and getattr(node, "kind", None) == "call":
            return node
    return None


def _quiet(item: Any) -> str:
    """The ``with np.errstate(...):`` extern ``item`` runs under, as a NumPy run of its
    graph node does (ir/printer.py: a derivative rule's node, a quiet composite's: all
    ignored; one in a with np.errstate block of the user's: its kinds), else ''."""
    node = _graph_node(item)
    if node is None:
        return ""
    return 'with np.errstate(all="ignore"):' if node.meta.get("quiet") else errstate_prefix(node).rstrip()


def _method_site(item: Any) -> tuple | None:
    """``(what, file, line)`` where extern ``item`` makes its NumPy call from the user's
    line (ir/graph.py ``numpy_call_at`` of its graph node: NumPy's ``x.var()`` and a
    ufunc warn at the frame calling them), else None."""
    node = _graph_node(item)
    return None if node is None else numpy_call_at(node)
