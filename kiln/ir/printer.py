"""Print a Graph as readable, runnable Python, and turn that text into a function.

Each call becomes one line ``name = ops.<op>(args, param=value)``, with a comment giving
the shape/dtype and, when it changes, the user's source line it came from. Values are
released (``name = None``) after their last use, so running the printed code frees
memory the way the compiled code will. The text is registered with ``linecache`` so
tracebacks and pdb show it.
"""
from __future__ import annotations

import functools
import linecache
import math
import types
from typing import Any, Callable

import numpy as np

from ..ops import F, TensorMeta
from .graph import Graph, Node, SizeRef, extern_impl, out_write, write_before_raise
from .passes import last_uses


def format_value(value: Any, consts: dict[str, Any]) -> str:
    """Python source for an argument or param value."""
    if isinstance(value, Node):
        return value.name
    if isinstance(value, SizeRef):
        return repr(value)   # x.shape[0]: x is the graph function's parameter
    if isinstance(value, tuple):
        inner = ", ".join(format_value(v, consts) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v, consts) for v in value) + "]"
    if isinstance(value, slice):
        return (f"slice({format_value(value.start, consts)}, {format_value(value.stop, consts)}, "
                f"{format_value(value.step, consts)})")
    if value is Ellipsis:
        return "Ellipsis"
    if isinstance(value, np.dtype) and value.metadata is None:
        # (np.longlong's dtype equals int64's but has its own char, 'q', and NumPy's views
        # and results keep it: printed by that char)
        if value.name in _NP_NAMES and value.isnative:
            return f"np.{value.name}" if np.dtype(value.name).char == value.char else f"np.dtype({value.char!r})"
        return f"np.dtype({value.str!r})"
    if isinstance(value, type) and issubclass(value, np.generic):
        return f"np.{value.__name__}"
    if isinstance(value, (bool, int, str)) or value is None:
        return repr(value)
    if isinstance(value, float) and not isinstance(value, np.generic):   # np.float64 is a float
        if value != value:   # (its sign too: -nan is NumPy's 0 / 0 on x86)
            return "-float('nan')" if math.copysign(1.0, value) < 0 else "float('nan')"
        if value in (float("inf"), float("-inf")):
            return f"float({str(value)!r})"
        return repr(value)
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return f"np.{value.dtype.name}({format_value(value.item(), consts)})"
    # Anything else (arrays, objects) becomes a named constant in the function's globals.
    name = f"_const{len(consts)}"
    consts[name] = value
    return name


_NP_NAMES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64", "complex64", "complex128"}


def describe_meta(val: Any) -> str:
    if isinstance(val, TensorMeta):
        dims = ", ".join(str(d) for d in val.shape)
        return f"{val.dtype.name}[{dims}]"
    if isinstance(val, tuple):
        return "(" + ", ".join(describe_meta(v) for v in val) + ")"
    return "" if val is None else type(val).__name__


def format_source(source: Any) -> str | None:
    if not source:
        return None
    filename, lineno, text = source
    short = filename.rsplit("/", 1)[-1]
    return f"# {short}:{lineno}  {text.strip()}" if text else f"# {short}:{lineno}"


def python_code(graph: Graph, consts: dict[str, Any] | None = None, *,
                readable: bool = True, methods: bool = False) -> str:
    """The graph as a Python function's source. ``readable=False`` prints every call as
    ``ops.<op>(...)`` (no op's own printing: a loop node stays one call of its runner),
    for :func:`numpy_program`; ``methods``: a call of the user's ndarray method, or of a
    ufunc op, calls it from their line (ir/graph.py extern_impl), a constant in ``consts``."""
    consts = {} if consts is None else consts
    params = [n.name for n in graph.placeholders]
    lines = [f"def {graph.name}({', '.join(params)}):"]
    nodes = list(graph.nodes)
    dies_at: dict[Node, list[Node]] = {}
    for value, step in last_uses(node.inputs for node in nodes).items():
        if nodes[step].kind != "output":
            dies_at.setdefault(nodes[step], []).append(value)
    last_source = None
    body = []
    for node in graph.nodes:
        if node.kind == "placeholder":
            continue
        if node.kind == "output":
            (values,) = node.args
            body.append(f"return {format_value(tuple(values), consts)}")
            continue
        source = format_source(node.meta.get("source"))
        if source and source != last_source:
            body.append(source)
            last_source = source
        if readable and node.kind == "call" and node.target.print_python is not None:
            # (a loop's body prints with the graph's ``methods``: its ops warn at the
            # user's lines too)
            body += node.target.print_python(node, consts, format_value,
                                             functools.partial(python_code, methods=methods))
            dead = [n.name for n in dies_at.get(node, ()) if n.kind != "placeholder"]
            if dead:
                body.append(" = ".join(dead) + " = None")
            continue
        meta = describe_meta(node.val)
        part = node.meta.get("ufunc")
        if part:   # (it warns as that call: in the text, so a cached build is not another's)
            meta += f"; result {part[1]} of np.{part[0]}"
        quiet = 'with np.errstate(all="ignore"): ' if node.meta.get("quiet") else errstate_prefix(node)
        rhs = _call_text(node, consts, methods)
        line = f"{quiet}{node.name} = {rhs}" + (f"  # {meta}" if meta else "")
        write = out_write(node) if node.kind == "call" else None
        if write is None:
            body.append(line)
        else:   # NumPy writes out= before it raises FloatingPointError (ir/graph.py out_write)
            body += ["try:", f"    {line}", "except Exception as _e:",
                     f"    _write_before_raise(_e, lambda: {_call_text(write, consts, methods, {node: rhs})})",
                     "    raise"]
        dead = [n.name for n in dies_at.get(node, ()) if n.kind != "placeholder"]
        if dead:
            body.append(" = ".join(dead) + " = None")
    lines += ["    " + line for line in body]
    return "\n".join(lines) + "\n"


def _call_text(node: Node, consts: dict[str, Any], methods: bool, given: dict | None = None) -> str:
    """The expression computing call or constant ``node`` (:func:`python_code`); ``given``:
    the text of some of its arguments (nodes), in place of their names."""
    if node.kind == "constant":
        return format_value(node.target, consts)
    given = given or {}
    args = [given[a] if isinstance(a, Node) and a in given else format_value(a, consts)
            for a in node.args]
    args += [f"{k}={format_value(v, consts)}" for k, v in node.kwargs.items()]
    call = f"ops.{node.target.name}"
    fn = extern_impl(node) if methods else None
    if fn is not None and fn is not node.target.impl:
        # NumPy's x.var() and a ufunc warn at the user's line (ir/graph.py extern_impl)
        base, k = node.meta.get("method") or node.target.name, 0
        while consts.setdefault(f"_{base}_at_{k}", fn) is not fn:
            k += 1
        call = f"_{base}_at_{k}"
    return f"{call}({', '.join(args)})"


def exec_source(source: str, filename: str, namespace: dict) -> dict:
    """Run generated ``source`` in ``namespace`` as the file ``filename``, registered with
    ``linecache`` so that tracebacks and pdb show its lines (graphs, guards, wrappers).

        >>> exec_source("x = 1 + 1", "<kiln example>", {})["x"]
        2
    """
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(_renamed(_compiled(source), filename), namespace)
    return namespace


@functools.lru_cache(maxsize=512)
def _compiled(source: str) -> types.CodeType:
    """``source`` compiled once: a function's entries, recompiles and the resume functions
    of its breaks generate the same text again and again (380 guard entries, 145 texts, in
    six of real6's programs; ~0.8 ms a compile)."""
    return compile(source, "<kiln>", "exec")


def _renamed(code: types.CodeType, filename: str) -> types.CodeType:
    """``code`` and the code objects nested in it, as compiled from the file ``filename``."""
    consts = tuple(_renamed(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


_counter = [0]


class _Kernels:
    """``ops.<name>`` for :func:`numpy_program`: each op's NumPy kernel itself, without the
    op call's checks (arity, params, tracing hooks), which the graph's nodes already passed."""

    def __getattr__(self, name: str) -> Callable:
        kernel = getattr(F, name).impl
        setattr(self, name, kernel)
        return kernel


_KERNELS = _Kernels()


def numpy_program(graph: Graph, *, readable: bool = False, through_ops: bool = False,
                  label: str = "numpy program", place: Callable | None = None) -> Callable:
    """The graph as a Python function calling each op's NumPy kernel directly: what
    ``graph(*args)`` (the reference interpreter) computes for plain arrays, at a fraction
    of its per-node cost. Graph nodes hold fully bound params, so ``ops.<name>(...)`` can
    skip the op call's checks. ``readable``: ops print their own Python (a loop node as a
    ``for`` statement over its body; otherwise it stays one call of its runner).
    ``through_ops``: ``ops.<name>`` is the Op itself, whose call hands kiln.Tensors to the
    eager Tensor (they record on the tape). ``place``: where the program's arrays live
    other than the host (a CuPy array's GPU), it returns the copy there of a constant
    array, made once here. The code is registered with linecache, so tracebacks show the
    graph's lines. The graph must not change afterwards."""
    consts: dict[str, Any] = {}
    code = python_code(graph, consts, readable=readable, methods=not through_ops)
    if place is not None:
        consts = {k: place(v) if isinstance(v, np.ndarray) else v for k, v in consts.items()}
    _counter[0] += 1
    filename = f"<kiln {label} {graph.name} #{_counter[0]}>"
    namespace = exec_source(code, filename, {"ops": F if through_ops else _KERNELS, "np": np,
                                             "_write_before_raise": write_before_raise, **consts})
    fn = namespace[graph.name]
    fn.__kiln_source__ = code
    fn.__kiln_numpy_program__ = graph   # what a backend fallback runs (tests check for it)
    return fn


def compile_graph(graph: Graph) -> Callable:
    """``Graph.compile()``: the printed graph, calling the ops themselves (Tensors record)."""
    return numpy_program(graph, readable=True, through_ops=True, label="graph")


class LazyNumpyProgram:
    """:func:`numpy_program` of a graph, made on its first call: for the fallbacks a
    compiled graph keeps (NumPy's error mode set to raise, a Python int past int64), which
    most processes never take."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._fn: Callable | None = None

    def __call__(self, *args: Any) -> Any:
        if self._fn is None:
            self._fn = numpy_program(self.graph)
        return self._fn(*args)


def errstate_prefix(node: Any) -> str:
    """``with np.errstate(divide="ignore"): `` for a call recorded in such a with block
    (capture's ``meta["errstate"]``: the kinds ignored there), else ''."""
    kinds = node.meta.get("errstate")
    return f"with np.errstate({', '.join(k + '=' + repr('ignore') for k in kinds)}): " if kinds else ""
