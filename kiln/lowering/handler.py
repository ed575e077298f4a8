"""The ops-handler seam: kernel bodies are built by calling a handler, never by writing text.

A value's code is ``fn(ops, index)``: it calls ``ops.load``, ``ops.constant``, ``ops.cast``
and ``ops.call(scalar_function, args, dtype)``, and returns whatever the handler returns
for the result. What those values are is the handler's business (Inductor's
``OpsHandler``/``V.ops``; tinygrad's ``code_for_op``):

- a renderer's emitter returns variables of its language and writes their statements
  (kiln/lowering/cpp_ops.py ``CppEmitter``: C++);
- :class:`RecordingHandler` returns opaque tokens and records what the body does — the
  elements it loads, the scalar functions it calls, how many statements it needs. The
  scheduler (fusion legality), the in-place planner and cost estimates use it, so no
  analysis ever reads generated code.

Scalar functions are named after the NumPy ufunc whose loop they compute (``add``,
``sin``, ``maximum``, ``floor_divide``, ...), plus ``where(c, x, y)``, ``clip(x, lo, hi)``
and ``identity(x)``. ``dtype`` is the dtype of the loop (the operands were cast to it),
``out`` the result's dtype when it differs (comparisons give bool). Each renderer has one
table from scalar function (and dtype kind) to its syntax; tests check that every table
covers every (function, kind) that an op in kiln/ops/ asks for.

    >>> import numpy as np
    >>> from kiln.lowering.loop_ir import Affine, Buffer
    >>> rec = RecordingHandler()
    >>> x = rec.load(Buffer("x", (4,), np.float32, "input"), Affine.var("i"))
    >>> _ = rec.call("sin", [rec.call("add", [x, rec.constant(1.0, np.float32)], np.float32)], np.float32)
    >>> [b.name for b, _ in rec.loads], [fn for fn, _ in rec.calls], rec.statements
    (['x'], ['add', 'sin'], 3)
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

# Scalar functions that cost about as much as a libm call (used to decide whether a
# shared value is worth computing once; renderers have their own cost tables). Float
# remainder and floor division call fmod (NumPy's npy_divmod), logaddexp exp and log1p;
# priced as one op, ``pos %= box`` read as ``pos[:, None] - pos[None]`` was recomputed
# twice per pair element (Lennard-Jones on 40 particles: 1.3x NumPy's CPU time).
EXPENSIVE = frozenset({
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "cbrt", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    "sqrt", "power", "power_scalar_exponent", "float_power", "arctan2", "hypot", "fmod",
    "remainder", "floor_divide", "logaddexp", "copysign", "absolute", "floor", "ceil",
    "trunc", "rint", "isinf", "isfinite"})


class OpsHandler:
    """The operations a kernel body is built from (see the module doc)."""

    def load(self, buf: Any, index: Any) -> Any:
        """The element of ``buf`` (a :class:`~kiln.lowering.loop_ir.Buffer`) at the flat
        offset ``index`` (an :class:`~kiln.lowering.loop_ir.Affine` over loop variables)."""
        raise NotImplementedError

    def constant(self, value: Any, dtype: Any) -> Any:
        """``value`` converted to ``dtype`` as NumPy converts it."""
        raise NotImplementedError

    def scalar_arg(self, scalar: Any) -> Any:
        """A runtime scalar argument of the kernel (a learning rate passed to the function)."""
        raise NotImplementedError

    def size(self, n: Any) -> Any:
        """A size (a number of elements) as an int64 value."""
        raise NotImplementedError

    def cast(self, value: Any, src: Any, dst: Any) -> Any:
        """``value`` of dtype ``src`` converted to ``dst`` (C semantics; bool: ``!= 0``)."""
        raise NotImplementedError

    def index(self, index: Any) -> Any:
        """The int64 value of a loop index (an :class:`~kiln.lowering.loop_ir.Affine` over
        loop variables), for conditions on where a point lies (``k == 0``). Renderers keep
        the loops it uses their own (never collapsed into one flat loop)."""
        raise NotImplementedError

    def bind_index(self, value: Any) -> str:
        """A name for an int64 ``value`` usable as a variable of an
        :class:`~kiln.lowering.loop_ir.Affine` (a load at a computed index)."""
        raise NotImplementedError

    def call(self, fn: str, args: Sequence[Any], dtype: Any, out: Any = None) -> Any:
        """The scalar function ``fn`` on ``args`` in a loop of ``dtype``."""
        raise NotImplementedError

    def raised(self, node: Any, result: tuple, operands: list) -> None:
        """Graph node ``node`` (an op) computed ``result`` from ``operands``, each a
        (value, dtype) pair: a renderer that tells which op raised a floating-point flag
        computes here where it did (cpp_ops.py; lowering/fp_flags.py). Others: nothing."""


class RecordingHandler(OpsHandler):
    """A handler that generates nothing and records what a body does.

    ``loads``: (Buffer, Affine) per load, in order; ``calls``: (function, loop dtype) per
    distinct call; ``casts``: (source, target) dtypes; ``sizes``: the sizes it uses;
    ``indices``: the loop indices it uses as values; ``bound``: the names given to values
    used as index variables;
    ``statements``: values a renderer would compute (loads, casts, calls, each once: equal
    calls on equal operands are one value, as renderers share them).
    """

    def __init__(self) -> None:
        self.loads: list[tuple[Any, Any]] = []
        self.calls: list[tuple[str, np.dtype]] = []
        self.casts: list[tuple[np.dtype, np.dtype]] = []
        self.sizes: list[Any] = []
        self.indices: list[Any] = []
        self.bound: list[str] = []
        # (loop variable, function, int constant) per comparison of a loop index with a
        # constant: where a select changes arms (region writes, fills, joins)
        self.index_tests: list[tuple[str, str, int]] = []
        self.statements = 0
        self._values: dict[tuple, tuple] = {}

    def _value(self, key: tuple) -> tuple:
        found = self._values.get(key)
        if found is None:
            found = self._values[key] = ("v", len(self._values))
            self.statements += 1
        return found

    def load(self, buf: Any, index: Any) -> Any:
        self.loads.append((buf, index))
        return self._value(("load", buf.name, index))

    def constant(self, value: Any, dtype: Any) -> Any:
        return ("const", repr(value), np.dtype(dtype).str)

    def scalar_arg(self, scalar: Any) -> Any:
        return ("arg", scalar.name)

    def size(self, n: Any) -> Any:
        self.sizes.append(n)
        return ("size", str(n))

    def cast(self, value: Any, src: Any, dst: Any) -> Any:
        if np.dtype(src) == np.dtype(dst):
            return value
        self.casts.append((np.dtype(src), np.dtype(dst)))
        return self._value(("cast", value, np.dtype(dst).str))

    def index(self, index: Any) -> Any:
        self.indices.append(index)
        return ("index", index)

    def bind_index(self, value: Any) -> str:
        self.bound.append(f"_bound{len(self.bound)}")
        return self.bound[-1]

    def call(self, fn: str, args: Sequence[Any], dtype: Any, out: Any = None) -> Any:
        if fn == "identity":
            return args[0]
        key = ("call", fn, tuple(args), np.dtype(dtype).str)
        if key not in self._values:
            self.calls.append((fn, np.dtype(dtype)))
            self._note_index_test(fn, args)
        return self._value(key)

    def _note_index_test(self, fn: str, args: Sequence[Any]) -> None:
        if fn not in _COMPARISONS or len(args) != 2:
            return
        ix, c = args
        if not (isinstance(ix, tuple) and ix[0] == "index" and isinstance(c, tuple) and c[0] == "const"):
            return
        affine = ix[1]
        if len(affine.terms) != 1 or affine.const != 0 or list(affine.terms.values()) != [1]:
            return
        try:
            value = int(c[1])
        except ValueError:
            return
        self.index_tests.append((next(iter(affine.terms)), fn, value))

    def cost(self) -> int:
        """Statements, an expensive scalar function counting 8."""
        return self.statements + 7 * sum(1 for fn, dt in self.calls if fn in EXPENSIVE and dt.kind == "f")


_COMPARISONS = frozenset({"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})
