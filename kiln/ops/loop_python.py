"""A loop node as plain Python: the body's ops written back as the statements they stand for.

``LoopBody.run`` (kiln/ops/loops.py) is what runs a loop where no compiled runner can:
the eager backend, and a compiled loop whose checks failed (a Python int past int64, an
index out of bounds, a float that does not fit an integer). It used to interpret the body
graph node by node, ~100x slower than the user's own loop (factorial to 30: 3 ms instead
of 1.5 us). :func:`python_runner` prints the whole loop once as a Python function —

    def loop_body_1_python(start, stop, step, carried, operands):
        s, = carried
        x, = operands
        for i in range(start, stop, step):
            scalar_fn = s * i
            s = scalar_fn
        return (s,)

— where every op is spelled as the Python operation its eager kernel performs
(``scalar_fn(add)`` is ``a + b``, ``load_elem`` is ``x[i, j]``, ``vec_view`` is
``x[i, a:b]``, an inner loop node is an inner ``for``), so results and exceptions are
Python's and NumPy's by construction, at about the cost of the user's loop. A body with
an op it does not know keeps the interpreter. One difference from the interpreter is
deliberate: an inner loop writes its arrays in place, as the user's Python does, where
the interpreter's inner ``loop`` call copied them first.
"""
from __future__ import annotations

import keyword
from typing import Any, Callable

import numpy as np

_INFIX = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
          "pow": "**", "lshift": "<<", "rshift": ">>", "and_": "&", "or_": "|", "xor": "^",
          "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_PREFIX = {"neg": "-", "pos": "+", "invert": "~"}


class _Unknown(Exception):
    """An op the printer does not spell: the body keeps the interpreter."""


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.env: dict[str, Any] = {"np": np}
        self.names: dict[Any, str] = {}
        self.used: set[str] = set()
        self.inner: dict[Any, list[str]] = {}
        self.source: tuple | None = None      # the user's (file, line) of the node being written
        self.at: list[tuple | None] = []      # per line: its node's (lines.py ``user_lines``)

    def fresh(self, hint: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "v"
        if base[0].isdigit() or keyword.iskeyword(base) or base in ("np", "start", "stop", "step",
                                                                     "carried", "operands"):
            base = "v_" + base
        name, k = base, 1
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name

    def const(self, value: Any) -> str:
        if value is None or type(value) in (bool, int) or (type(value) is float and value == value
                                                           and value not in (float("inf"), float("-inf"))):
            return repr(value)
        name = self.fresh("K")
        self.env[name] = value
        return name

    def ref(self, value: Any) -> str:
        if hasattr(value, "kind"):
            return self.names[value]
        if isinstance(value, tuple):
            return "(" + "".join(self.ref(v) + ", " for v in value) + ")"
        return self.const(value)

    def emit(self, line: str, depth: int) -> None:
        self.lines.append("    " * depth + line)
        self.at.append(self.source)

    def fn(self, value: Callable, hint: str) -> str:
        name = self.fresh(hint)
        self.env[name] = value
        return name

    # -- a body ----------------------------------------------------------------------------
    def body(self, graph: Any, carried: list, depth: int) -> None:
        for node in graph.nodes:
            if node.kind == "placeholder":
                continue
            if node.kind == "output":
                outs = [self.ref(v) for v in node.args[0]]
                targets = [self.names[c] for c in carried]
                if targets:
                    self.emit(f"{', '.join(targets)}, = {', '.join(outs)},", depth)
                continue
            if node.kind != "call":
                raise _Unknown(node.kind)
            op = getattr(self, f"op_{node.target.name}", None)
            if op is None:
                raise _Unknown(node.target.name)
            outer, self.source = self.source, node.meta.get("source") or self.source
            op(node, depth)
            self.source = outer

    def _index(self, index: tuple, extra: str | None = None, axis: int = 0) -> str:
        # (one integer index is written ``x[i]``, NumPy's fast path, the user's spelling:
        # ``x[i,]`` builds a tuple NumPy parses, 20 ns a read, a tenth of a loop's trip)
        parts = [self.ref(v) for v in index]
        if extra is not None:
            parts.insert(axis, extra)
        return ", ".join(parts)

    def _slice(self, start: Any, stop: Any, step: int = 1) -> str:
        a = "" if start is None else self.ref(start)
        b = "" if stop is None else self.ref(stop)
        return f"{a}:{b}" if step == 1 else f"{a}:{b}:{step}"

    def bind(self, node: Any, expr: str, depth: int) -> None:
        name = self.fresh(node.name)
        self.names[node] = name
        self.emit(f"{name} = {expr}", depth)

    def op_scalar_fn(self, node: Any, depth: int) -> None:
        from .loops import SCALAR_FUNCTIONS
        fn, args = node.kwargs["fn"], [self.ref(a) for a in node.args[0]]
        if fn in _INFIX:
            expr = f"{args[0]} {_INFIX[fn]} {args[1]}"
        elif fn in _PREFIX:
            expr = f"{_PREFIX[fn]}{args[0]}"
        elif fn == "select":
            expr = f"{args[1]} if {args[0]} else {args[2]}"
        else:
            expr = f"{self.fn(SCALAR_FUNCTIONS[fn], fn.replace('np.', 'np_'))}({', '.join(args)})"
        self.bind(node, expr, depth)

    def op_load_elem(self, node: Any, depth: int) -> None:
        x, index = node.args
        self.bind(node, f"{self.ref(x)}[{self._index(index)}]", depth)

    def op_store_elem(self, node: Any, depth: int) -> None:
        x, index, value = node.args
        self.emit(f"{self.ref(x)}[{self._index(index)}] = {self.ref(value)}", depth)

    def op_store_elem_if(self, node: Any, depth: int) -> None:
        when, x, index, value = node.args
        self.emit(f"if {self.ref(when)}:", depth)
        self.emit(f"    {self.ref(x)}[{self._index(index)}] = {self.ref(value)}", depth)

    def op_vec_view(self, node: Any, depth: int) -> None:
        x, index, start, stop = node.args
        where = self._index(index, self._slice(start, stop, node.kwargs.get("step", 1)), node.kwargs["axis"])
        self.bind(node, f"{self.ref(x)}[{where}]", depth)

    def op_vec_store(self, node: Any, depth: int) -> None:
        x, index, start, stop, value = node.args
        where = self._index(index, self._slice(start, stop, node.kwargs.get("step", 1)), node.kwargs["axis"])
        self.emit(f"{self.ref(x)}[{where}] = {self.ref(value)}", depth)

    def op_vec_flip(self, node: Any, depth: int) -> None:
        self.bind(node, f"{self.fn(np.flip, 'np_flip')}({self.ref(node.args[0])})", depth)

    def op_vec_fn(self, node: Any, depth: int) -> None:
        from .loop_vectors import VEC_FUNCTIONS
        fn, args = node.kwargs["fn"], [self.ref(a) for a in node.args[0]]
        if fn in _INFIX:
            expr = f"{args[0]} {_INFIX[fn]} {args[1]}"
        elif fn in _PREFIX:
            expr = f"{_PREFIX[fn]}{args[0]}"
        else:
            expr = f"{self.fn(VEC_FUNCTIONS[fn], fn.replace('np.', 'np_'))}({', '.join(args)})"
        self.bind(node, expr, depth)

    def op_vec_reduce(self, node: Any, depth: int) -> None:
        from .loop_vectors import PRODUCTS
        a, b = node.args
        fn = node.kwargs["fn"]
        if fn in PRODUCTS:
            self.bind(node, f"{self.fn(PRODUCTS[fn], 'np_' + fn)}({self.ref(a)}, {self.ref(b)})", depth)
        else:
            self.bind(node, f"{self.ref(a)}.{fn}()", depth)   # sum, max, min

    def op_loop_item(self, node: Any, depth: int) -> None:
        self.names[node] = self.inner[node.args[0]][node.kwargs["index"]]

    def op_loop(self, node: Any, depth: int) -> None:
        start, stop, step, inits, operands = node.args
        body = node.kwargs["body"]
        phs = body.graph.placeholders
        carried = phs[1:1 + body.n_carried]
        for p, v in zip(phs[1 + body.n_carried:], operands):
            self.names[p] = self.ref(v)
        names = []
        for p, v in zip(carried, inits):
            name = self.fresh(p.name)
            self.names[p] = name
            names.append(name)
            self.emit(f"{name} = {self.ref(v)}", depth)
        self.inner[node] = names
        self.loop_head(body, phs[0], [self.ref(v) for v in (start, stop, step)], names, depth)
        head = len(self.lines)
        self.body(body.graph, carried, depth + 1)
        self.loop_tail(body, phs[0], names, depth + 1)
        self.non_empty(head, depth + 1)

    def non_empty(self, head: int, depth: int) -> None:
        """A loop whose body printed no line (``for i in range(n): pass``) gets ``pass``."""
        if len(self.lines) == head:
            self.emit("pass", depth)

    def loop_tail(self, body: Any, var: Any, carried: list, depth: int) -> None:
        if body.cont is not None:
            self.emit(f"{self.names[var]} += 1", depth)
        if body.brk is not None:    # the iteration that met a break ends the loop
            self.emit(f"if {carried[body.brk]}:", depth)
            self.emit("    break", depth)

    def loop_head(self, body: Any, var: Any, bounds: list, carried: list, depth: int) -> None:
        i = self.fresh(var.name)
        self.names[var] = i
        if body.cont is not None:   # a while loop: carried value 0 is its condition
            self.emit(f"{i} = 0", depth)
            self.emit(f"while bool({carried[0]}) is {body.cont}:", depth)
        else:
            self.emit(f"for {i} in range({', '.join(bounds)}):", depth)


def python_runner(body: Any) -> Callable | None:
    """``run(start, stop, step, carried, operands)`` for ``body`` as generated Python (its
    source in ``run.source``), or None when the body has an op this printer does not spell."""
    w = _Writer()
    phs = body.graph.placeholders
    carried = phs[1:1 + body.n_carried]
    operands = phs[1 + body.n_carried:]
    fname = w.fresh(f"{body.name}_python")
    w.emit(f"def {fname}(start, stop, step, carried, operands):", 0)
    for group, source in ((carried, "carried"), (operands, "operands")):
        if group:
            names = [w.fresh(p.name) for p in group]
            w.names.update(zip(group, names))
            w.emit(f"{', '.join(names)}, = {source}", 1)
    try:
        w.loop_head(body, phs[0], ["start", "stop", "step"], [w.names[c] for c in carried], 1)
        head = len(w.lines)
        w.body(body.graph, carried, 2)
    except _Unknown:
        return None
    w.loop_tail(body, phs[0], [w.names[c] for c in carried], 2)
    w.non_empty(head, 2)
    w.emit(f"return ({''.join(w.names[c] + ', ' for c in carried)})", 1)
    source = "\n".join(w.lines) + "\n"
    exec(_user_lines(source, w, body.where, f"<kiln {body.name} as Python ({body.where})>"), w.env)
    run = w.env[fname]
    run.source = source
    return run


def _user_lines(source: str, w: _Writer, where: str, name: str) -> Any:
    """``source`` compiled with each statement at its op's line of the user's file (the
    loop's own, ``where``, its ``file:line``, for the lines of no op), in that
    module's namespace for the warnings machinery (``__name__``, its
    ``__warningregistry__``): a warning NumPy's scalar math gives in the loop ("overflow
    encountered in scalar multiply") is the user's line's, as in the user's own loop, shown
    once per line under the default filter with the user's own. Where the ops come from
    no one file, the generated code's own lines."""
    import ast
    filename, _, line = where.rpartition(":")
    if not line.isdigit() or any(at and at[0] != filename for at in w.at):
        return compile(source, name, "exec")
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if hasattr(node, "lineno"):
            node.lineno = node.end_lineno = (w.at[node.lineno - 1] or (filename, int(line)))[1]
    from .value_warnings import _module_of
    module, globals_ = _module_of(filename)
    if globals_ is not None:
        w.env["__name__"] = module
        w.env["__warningregistry__"] = globals_.setdefault("__warningregistry__", {})
    return compile(tree, filename, "exec")
