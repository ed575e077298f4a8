"""Loops and the scalar element code inside them.

``loop`` is kiln's ``fori_loop``: ``for i in range(start, stop, step)`` over a body graph
traced once with ``i`` as a symbolic int (kiln/capture/loops.py builds it). The body graph
takes ``(i, *carried, *operands)`` and returns the carried values' next state; carried
values are the locals the body rebinds (Python and NumPy scalars) and the arrays it
writes. ``loop`` is functional: written arrays are copied first, and the result is the
tuple of final carried values, read with ``loop_item``.

Inside a body, values are scalars (Python ``int``/``float``/``bool`` or NumPy scalars):

- ``load_elem(x, index)``   ``x[i, j]`` with a full integer index: a NumPy scalar;
- ``store_elem(x, index, value)`` ``x[i, j] = value`` (NumPy's casting rules; it writes);
- ``scalar_fn(args, fn=...)`` one Python operator, builtin or NumPy scalar function named
  in :data:`SCALAR_FUNCTIONS`, applied to Python/NumPy scalars: the eager kernel *is* the
  Python operation, so NumPy's scalar semantics (uint8 wrapping, float32 rounding, NEP 50)
  and Python's (unbounded ints, ZeroDivisionError) hold by construction.

A node's ``val`` in a body is a stand-in scalar of the value's type (``1``, ``1.0``,
``np.uint8(1)``): types are all a body's shape rules need. Backends may run a body their
own way (kiln/lowering/loops.py prints it as a C++ loop); :meth:`LoopBody.run` is the
reference.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Callable, Iterator

import numpy as np

from .meta import TensorMeta, fresh_copy
from .registry import Category, declare
from .value_warnings import ufunc_at

# Every function a body may apply to scalars, by name. A backend that compiles bodies
# must spell each one (tests/lowering/test_loops.py checks the C++ table covers them).
_OPERATORS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift",
              "and_", "or_", "xor", "lt", "le", "gt", "ge", "eq", "ne", "neg", "pos", "invert")
SCALAR_FUNCTIONS: dict[str, Callable[..., Any]] = {name: getattr(operator, name) for name in _OPERATORS}
SCALAR_FUNCTIONS.update({"min": builtins.min, "max": builtins.max, "abs": builtins.abs,
                         "int": builtins.int, "float": builtins.float, "bool": builtins.bool})
NUMPY_SCALAR_TYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                      "uint64", "float32", "float64")
SCALAR_FUNCTIONS.update({f"np.{name}": np.dtype(name).type for name in NUMPY_SCALAR_TYPES})
# (Transcendentals such as exp/log stay out: NumPy's SIMD versions and libm can differ
# by an ulp, and loop code must give NumPy's bits.)
NUMPY_SCALAR_UFUNCS = ("sqrt", "floor", "ceil", "absolute", "maximum", "minimum", "fmax", "fmin")
SCALAR_FUNCTIONS.update({f"np.{name}": getattr(np, name) for name in NUMPY_SCALAR_UFUNCS})
# math's functions of one number give a Python float: sqrt and fabs (exactly rounded),
# and those CPython computes as one call of the C library's function of the same name
# (``math_1`` in mathmodule.c: ValueError or OverflowError where the double is NaN or
# infinite from a finite argument). A compiled body calls that same libm function (the
# process's own), so its bits are Python's; NumPy's ufuncs of the same names are
# NumPy's SIMD code, and stay out.
LIBM_MATH = tuple(f"math.{name}" for name in (
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "exp", "expm1", "log", "log2", "log10", "log1p", "exp2", "cbrt") if hasattr(math, name))
SCALAR_MATH = ("math.sqrt", "math.fabs") + LIBM_MATH
SCALAR_FUNCTIONS.update({name: getattr(math, name[5:]) for name in SCALAR_MATH})
# ``a if cond else b`` (a data-dependent if/else whose sides only compute): both sides are
# computed, so only operations that never raise may feed it (see SELECT_SAFE).
SCALAR_FUNCTIONS["select"] = lambda cond, a, b: a if cond else b
SELECT_SAFE = frozenset({"add", "sub", "mul", "and_", "or_", "xor", "lt", "le", "gt", "ge",
                         "eq", "ne", "neg", "pos", "invert", "min", "max", "abs", "float",
                         "bool", "select", "np.float32", "np.float64", "np.bool"})
NUMPY_NEVER_RAISE = frozenset({"rshift", "lshift", "floordiv", "mod", "truediv", "np.sqrt",
                               "np.floor", "np.ceil", "np.maximum", "np.minimum", "np.fmax",
                               "np.fmin", "np.absolute"})
# Functions NumPy scalars never warn in (comparisons, tests, bit logic): any other one may
# ("overflow encountered in scalar multiply", "invalid value encountered in scalar
# subtract", a cast's), so a path not taken must not run it on its values either.
NUMPY_QUIET = frozenset({"lt", "le", "gt", "ge", "eq", "ne", "select", "bool", "np.bool", "and_",
                         "or_", "xor", "invert", "pos", "min", "max"})
# NumPy scalar math that may warn (RuntimeWarning "divide by zero / invalid value /
# overflow encountered in scalar ..." or "... in cast") on some NumPy operand: off the
# path a body takes, it must compute on harmless operands (capture/loop_branches.py).
NUMPY_MAY_WARN = frozenset({"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg",
                            "abs", "np.sqrt", "np.float32"} | {
                           f"np.{t}" for t in NUMPY_SCALAR_TYPES if "int" in t})
# ... and these only where a Python number meets a float32 (its cast overflows: 1e300)
NUMPY_CAST_WARNS = frozenset({"lt", "le", "gt", "ge", "eq", "ne", "min", "max", "np.maximum",
                              "np.minimum", "np.fmax", "np.fmin"})


def numpy_may_warn(fn: str, values: tuple) -> bool:
    """Can ``scalar_fn(fn)`` on these operands (stand-ins, TensorMetas, Python numbers)
    give one of NumPy's floating-point warnings for some of their values?"""
    dtypes = [np.dtype(v.dtype) if isinstance(v, TensorMeta) else v.dtype
              for v in values if isinstance(v, (np.generic, TensorMeta))]
    if not dtypes:
        return False
    if fn in NUMPY_MAY_WARN:
        return True
    return fn in NUMPY_CAST_WARNS and np.dtype(np.float32) in dtypes and any(
        type(v) in (int, float) for v in values)

# Arithmetic and comparisons whose result, beside a NumPy operand of dtype d, has the dtype
# np.result_type(d, other): a Python int 0 or an np.float64 0.0 as the other operand give
# the same type (capture/loop_zero_trips.py: an inner loop's result after zero trips).
RESULT_BY_DTYPE = frozenset({"add", "sub", "mul", "truediv", "lt", "le", "gt", "ge", "eq", "ne"})

# Python operators by the function the translator applies (operator.iadd is add on scalars).
OPERATOR_NAMES = {getattr(operator, name): name for name in _OPERATORS}
OPERATOR_NAMES.update({operator.iadd: "add", operator.isub: "sub", operator.imul: "mul",
                       operator.itruediv: "truediv", operator.ifloordiv: "floordiv",
                       operator.imod: "mod", operator.ipow: "pow", operator.ilshift: "lshift",
                       operator.irshift: "rshift", operator.iand: "and_", operator.ior: "or_",
                       operator.ixor: "xor"})


def stand_in(value: Any) -> Any:
    """The stand-in of a scalar's type (``1``, ``1.0``, ``True``, ``np.float32(1)``), or
    None for anything that is not a real Python or NumPy scalar."""
    if isinstance(value, TensorMeta):
        return np.dtype(value.dtype).type(1) if value.shape == () else None
    if isinstance(value, np.generic):
        return type(value)(1) if type(value).__name__ in NUMPY_SCALAR_TYPES else None
    if isinstance(value, bool):
        return True
    if type(value) in (int, float):
        return type(value)(1)
    return None


def scalar_type_name(value: Any) -> str:
    s = stand_in(value)
    return type(s).__name__ if s is not None else type(value).__name__


def _scalar_fn_meta(args: tuple, fn: str) -> Any:
    """The result's stand-in: the function run on stand-ins (2 and 3 when 1 raises)."""
    error: Exception | None = None
    for trial in (1, 2, 3):
        values = [type(s)(trial) if s is not None and not isinstance(s, (bool, np.bool_)) else s
                  for s in (stand_in(a) if not isinstance(a, (int, float)) or isinstance(a, bool)
                            else a for a in args)]
        if any(v is None for v in values):
            raise TypeError(f"scalar_fn {fn}: a non-scalar argument")
        if fn in SCALAR_MATH:   # a float, or an error (math.atanh is one at 1, 2 and 3)
            return 1.0
        try:
            with np.errstate(all="ignore"):
                out = stand_in(SCALAR_FUNCTIONS[fn](*values))
        except Exception as e:
            error = e
            continue
        if out is None:
            raise TypeError(f"scalar_fn {fn}: its result is not a real scalar")
        return out
    raise error


def _scalar_fn_impl(args: tuple, fn: str) -> Any:
    return SCALAR_FUNCTIONS[fn](*args)


def _scalar_fn_impl_at(filename: str, lineno: int, impl: Any = _scalar_fn_impl) -> Any:
    """Op.impl_at: the scalar function called from a frame at the user's line, where NumPy's
    scalar math warns ("overflow encountered in scalar subtract" of ``np.uint32(0) - c``
    pointed into this module on the NumPy backends)."""
    def run(args: tuple, fn: str) -> Any:
        return ufunc_at(SCALAR_FUNCTIONS[fn], filename, lineno, keywords=False)(*args)
    return run


scalar_fn = declare("scalar_fn", Category.EXTERN, _scalar_fn_impl, inputs=("args",),
                    params={"fn": "add"}, meta=_scalar_fn_meta, may_raise=True,
                    impl_at=_scalar_fn_impl_at,
                    spread_impl=lambda fn: SCALAR_FUNCTIONS[fn],
                    doc="a Python operator, builtin or NumPy scalar function on scalars (loop bodies)")


def _load_elem_impl(x: Any, index: tuple) -> Any:
    return x[index]


def _load_elem_meta(x: Any, index: tuple) -> Any:
    return np.dtype(x.dtype).type(1)


load_elem = declare("load_elem", Category.EXTERN, _load_elem_impl, inputs=("x", "index"),
                    meta=_load_elem_meta, may_raise=True,
                    doc="x[i, j, ...] with one integer per axis: a NumPy scalar (loop bodies)")


def _store_elem_impl(x: Any, index: tuple, value: Any) -> None:
    x[index] = value


store_elem = declare("store_elem", Category.MUTATION, _store_elem_impl,
                     inputs=("x", "index", "value"), meta=lambda x, index, value: None,
                     mutates=(0,), may_raise=True,
                     doc="x[i, j, ...] = value with one integer per axis (loop bodies; it writes)")


def _store_elem_if_impl(when: Any, x: Any, index: tuple, value: Any) -> None:
    if when:
        x[index] = value


# A store on one path of a data-dependent branch (or after a ``break``/``continue`` on
# another): it writes only where ``when`` holds (kiln/capture/loop_branches.py).
store_elem_if = declare("store_elem_if", Category.MUTATION, _store_elem_if_impl,
                        inputs=("when", "x", "index", "value"),
                        meta=lambda when, x, index, value: None, mutates=(1,), may_raise=True,
                        doc="if when: x[i, j, ...] = value (a store under a data-dependent "
                            "branch in a loop body)")


class LoopBody:
    """A loop's body graph and how its values line up.

    ``graph`` takes ``(i, *carried, *operands)`` and returns the next carried values;
    ``arrays`` are the positions (in carried) of arrays the body writes. A backend that
    compiles the body sets ``native``: ``native(start, stop, step, carried, operands)``
    returning the final carried values, with the same semantics as :meth:`run`."""

    _count = 0

    def __init__(self, graph: Any, n_carried: int, arrays: tuple, where: str = "",
                 cont: bool | None = None, brk: int | None = None) -> None:
        self.graph = graph
        # A while loop (``cont`` not None): carried value 0 is its condition, and the body
        # runs again while ``bool(condition) is cont`` (the range bounds are unused).
        self.cont = cont
        # A body with a ``break``: carried value ``brk`` is a bool, True after the
        # iteration that broke out; the loop ends there.
        self.brk = brk
        self.n_carried = n_carried
        self.arrays = arrays
        self.where = where           # the user's file:line of the for statement
        self.native: Callable | None = None
        LoopBody._count += 1
        self.name = f"loop_body_{LoopBody._count}"
        graph.name = self.name      # the printed graph defines the body under this name
        # In the function's own (mutating) graph an error leaves the iterations before it
        # written into the caller's arrays, as NumPy does; a functionalized graph's copy
        # writes nothing back (its caller replays the mutating graph on an error).
        self.writes_back = True
        # Positions (in carried) of the caller's arrays a functional graph gives this
        # loop to write in place (kiln/lowering/loop_donate.py): it does so only where
        # its native runner cannot fail once started, and copies them otherwise.
        self.donate: frozenset = frozenset()
        # Native runs in a row that met a check (a Python int past int64, an index out of
        # bounds): at GIVE_UP the loop stops trying its compiled runner and runs as Python.
        self.misses = 0
        # The places where NumPy's scalar math may warn in the body (integers that wrap
        # or divide by zero: ``(message, filename, lineno)``, set by the C++ printer) and
        # whether NumPy's error mode would make one raise, call or log (then the
        # reference runs, which does so where NumPy does; a native run's warnings come
        # by ``fp_flags``)
        self.warnings: tuple = ()
        # of those, the kinds (ops/fp_errors.py bits): a native run hands back the kinds
        # its scalar math raised (the floating-point flags of its float math, a flag word
        # of its integer math), and where one may be a warning the user would see, the
        # reference runs again (kiln/lowering/loop_runner.py)
        self.fp_flags = 0
        self.trapped: Callable[[], bool] = _never
        # Called once when the native runner fails its GIVE_UP-th check in a row: the
        # loop runs as Python from then on, and so may the function holding it
        # (kiln/as_python.py watch_loops sets it before the graph is lowered, so the
        # functional and donating copies share it).
        self.gave_up: Callable[[], None] = _nothing
        self.plain_calls()

    def plain_calls(self) -> None:
        """``call`` and ``call_owned``: the loop run for a generated wrapper
        (``Op.call_param``), as the op's ``impl`` and ``inplace_impl`` run it;
        kiln/lowering/loop_runner.py replaces them with its compiled runner's straight
        calls where one applies."""
        self.call = lambda start, stop, step, carried, operands: \
            _run_loop(start, stop, step, carried, operands, self, False)
        self.call_owned = lambda start, stop, step, carried, operands: \
            _run_loop(start, stop, step, carried, operands, self, True)

    def __repr__(self) -> str:
        return f"<kiln {self.name}>"

    def functional(self) -> "LoopBody":
        """This body for a functionalized graph (see ``writes_back``)."""
        copy = LoopBody.__new__(LoopBody)
        copy.__dict__.update(self.__dict__)
        copy.writes_back = False
        copy.native = None
        copy.misses = 0
        copy.plain_calls()
        return copy

    def donating(self, position: int) -> "LoopBody":
        """This body, given the caller's array at carried ``position`` (see ``donate``)."""
        copy = LoopBody.__new__(LoopBody)
        copy.__dict__.update(self.__dict__)
        copy.donate = self.donate | {position}
        copy.native = None
        copy.misses = 0
        copy.plain_calls()
        return copy

    def run(self, start: int, stop: int, step: int, carried: tuple, operands: tuple) -> tuple:
        """The loop as plain Python (kiln/ops/loop_python.py: each op spelled as the Python
        operation it stands for), or by the interpreter where that printer cannot."""
        runner = self.__dict__.get("_python")
        if runner is None:
            from .loop_python import python_runner
            runner = self._python = python_runner(self) or False
        if runner:
            return runner(start, stop, step, tuple(carried), tuple(operands))
        return self.run_interpreted(start, stop, step, carried, operands)

    def run_interpreted(self, start: int, stop: int, step: int, carried: tuple,
                        operands: tuple) -> tuple:
        """The reference: the body graph run by the interpreter, once per iteration."""
        from ..ir.interpreter import Interpreter
        interp = Interpreter(self.graph)
        state = tuple(carried)
        if self.cont is not None:
            i = 0
            while bool(state[0]) is self.cont:
                state = interp.run(i, *state, *operands)
                i += 1
                if self.brk is not None and state[self.brk]:
                    break
            return state
        for i in range(start, stop, step):
            state = interp.run(i, *state, *operands)
            if self.brk is not None and state[self.brk]:
                break
        return state


# Loop runs by how they ran (tests and benchmarks read it): natively, or by the reference
# (no native runner, or the native one met something only the reference can do).
stats = {"native": 0, "reference": 0, "inplace": 0, "gave_up": 0}   # inplace: native runs
# that wrote into arrays the caller gave up (not copied first); gave_up: reference runs
# that did not try a native runner that failed GIVE_UP times in a row


def _scalar(value: Any) -> Any:
    """A 0-d array handed over for a scalar becomes the NumPy scalar it stands for."""
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value


def _scalars(values: tuple) -> tuple:
    """``values`` with each 0-d array as its NumPy scalar (``values`` itself when none
    is one: a loop that runs as Python on every call, a Python int past int64, paid
    1.2 us of generators here on a 5 us loop)."""
    for v in values:
        if isinstance(v, np.ndarray) and v.ndim == 0:
            return tuple(_scalar(v) for v in values)
    return values


def _bounds(start: Any, stop: Any, step: Any) -> tuple:
    """The range's bounds as Python ints (0-d arrays and NumPy ints given by a graph)."""
    if type(start) is int and type(stop) is int and type(step) is int:
        return start, stop, step
    return tuple(operator.index(_scalar(v)) for v in (start, stop, step))


def echo_warnings(body: LoopBody, start: Any, stop: Any, step: Any, carried: tuple,
                  operands: tuple) -> bool:
    """Run the loop as the reference on copies of its carried arrays for the warnings
    NumPy's scalar math gives in it, its result dropped: the native run's stands (a body
    that reads none of the arrays it writes computes the same values from the same
    inputs, so the same warnings; kiln/lowering/loop_runner.py). False (not a miss)."""
    state = tuple(fresh_copy(v) if k in body.arrays else _scalar(v) for k, v in enumerate(carried))
    start, stop, step = _bounds(start, stop, step)
    stats["reference"] += 1
    body.run(start, stop, step, state, _scalars(tuple(operands)))
    return False


def _loop_impl(start: Any, stop: Any, step: Any, carried: tuple, operands: tuple,
               body: LoopBody) -> tuple:
    return _run_loop(start, stop, step, carried, operands, body, owned=False)


def _loop_inplace(start: Any, stop: Any, step: Any, carried: tuple, operands: tuple,
                  body: LoopBody) -> tuple:
    """The loop for a caller that gives up the arrays it carries (nothing reads them
    again): a native runner that cannot fail once started writes into them, uncopied."""
    return _run_loop(start, stop, step, carried, operands, body, owned=True)


def _overlapping(carried: tuple, operands: tuple, arrays: tuple) -> bool:
    """Does an array the loop writes share memory with another array it reads or writes
    (the caller passed ``u`` and ``u.T``)?"""
    written = [carried[k] for k in arrays if isinstance(carried[k], np.ndarray)]
    others = written + [v for v in operands if isinstance(v, np.ndarray)]
    return any(o is not w and may_overlap(w, o) for w in written for o in others)


def may_overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """np.may_share_memory, answered without it for two arrays that each own their memory
    (a loop's carried arrays the enclosing graph computed: ~1 us a pair less per call;
    merge's three while loops over an np.empty result checked four pairs a call)."""
    if a is not b and a.flags.owndata and b.flags.owndata:
        return False
    return np.may_share_memory(a, b)


# Native runs in a row that fail a check before a loop runs as Python only (a Python int
# that always passes int64, an IndexError on every call): then a call costs what Python's
# loop costs, not a compiled attempt plus Python's loop.
GIVE_UP = 3


def _never() -> bool:
    return False


def _nothing() -> None:
    return None


def _run_loop(start: Any, stop: Any, step: Any, carried: tuple, operands: tuple,
              body: LoopBody, owned: bool) -> tuple:
    native = body.native if body.misses < GIVE_UP else None
    tried = native is not None
    if body.native is not None and not tried:
        stats["gave_up"] += 1
    if tried and body.trapped():   # NumPy may raise, call or log: only Python does
        native, tried = None, False
    if not body.writes_back and native is not None \
            and type(start) is int and type(stop) is int and type(step) is int:
        # The cache-hit path of a compiled graph: the native runner takes the values as
        # they are (it checks their types itself; None sends them the long way round).
        if native.inplace and (owned or body.donate):
            state = carried
            if not owned:   # the caller's arrays it was given, writable; copies of the rest
                state = list(carried)
                for k in body.arrays:
                    if k not in body.donate or type(carried[k]) is not np.ndarray \
                            or not carried[k].flags.writeable:
                        state[k] = fresh_copy(carried[k])
            done = native(start, stop, step, state, operands, True)
            if done is not None:
                stats["native"] += 1
                stats["inplace"] += 1
                body.misses = 0
                return done
        state = list(carried)
        for k in body.arrays:
            state[k] = fresh_copy(carried[k])
        done = native(start, stop, step, state, operands, False)
        if done is not None:
            stats["native"] += 1
            body.misses = 0
            return done
        native = None   # it met something only the reference does: no second try
    originals = list(carried)
    state = list(_scalars(tuple(carried)))
    start, stop, step = _bounds(start, stop, step)
    operands = _scalars(tuple(operands))
    if body.writes_back and _overlapping(tuple(originals), operands, body.arrays):
        # Reads through one view must see the writes through another, iteration by
        # iteration, as in Python: the reference writes straight into the caller's arrays
        # (no copies; an error leaves the iterations before it written, as NumPy does).
        # The function's own graph only: aot runs it op by op when inputs overlap.
        stats["reference"] += 1
        return tuple(body.run(start, stop, step, tuple(state), operands))
    if native is not None and owned and native.inplace:
        done = native(start, stop, step, tuple(state), operands, True)
        if done is not None:
            stats["native"] += 1
            stats["inplace"] += 1
            body.misses = 0
            return done
    for k in body.arrays:
        state[k] = fresh_copy(originals[k])
    if native is not None:
        done = native(start, stop, step, tuple(state), operands, False)
        if done is not None:
            stats["native"] += 1
            body.misses = 0
            return done
        # The compiled loop met something Python or NumPy raises on (or a value past its
        # types): run it again from the start as the reference does.
        for k in body.arrays:
            state[k] = fresh_copy(originals[k])
    stats["reference"] += 1
    if tried and not body.__dict__.pop("heard", False):   # (a warning's rerun is no miss)
        body.misses += 1
        if body.misses == GIVE_UP:
            body.gave_up()
    try:
        return tuple(body.run(start, stop, step, tuple(state), operands))
    except Exception:
        # NumPy would have written the iterations before the error into the arrays.
        for k in body.arrays if body.writes_back else ():
            if isinstance(originals[k], np.ndarray) and originals[k].flags.writeable:
                np.copyto(originals[k], state[k])
        raise


def loop_bodies(graph: Any) -> Iterator[LoopBody]:
    """The bodies of ``graph``'s loop nodes, and of the loops inside them."""
    for node in graph.calls:
        body = node.kwargs.get("body") if node.target is loop else None
        if isinstance(body, LoopBody):
            yield body
            yield from loop_bodies(body.graph)


def _loop_meta(start: Any, stop: Any, step: Any, carried: tuple, operands: tuple,
               body: LoopBody) -> tuple:
    return tuple(v if isinstance(v, TensorMeta) or stand_in(v) is None else
                 (TensorMeta((), np.dtype(type(stand_in(v)))) if isinstance(stand_in(v), np.generic)
                  else stand_in(v)) for v in carried)


def _print_loop(node: Any, consts: dict, format_value: Callable, python_code: Callable) -> list:
    """The loop as runnable Python: the body as a function, then the for statement.

        loop = (s0, np.copy(x),)      # written arrays are copied first (on their device)
        for loop_i in range(0, n, 1):
            loop = loop_body_1(loop_i, *loop, L, b)
    """
    body: LoopBody = node.kwargs["body"]
    start, stop, step, carried, operands = node.args
    lines = python_code(body.graph, consts).rstrip("\n").split("\n")
    # The function's own graph (writes_back) runs the body on the caller's arrays, as
    # Python does: reads through an overlapping view see the writes, and an error leaves
    # the iterations before it written. A functionalized graph's loop works on copies.
    init = ", ".join(f"np.copy({format_value(v, consts)})"
                     if k in body.arrays and not body.writes_back
                     else format_value(v, consts) for k, v in enumerate(carried))
    rest = "".join(f", {format_value(v, consts)}" for v in operands)
    i = f"{node.name}_i"
    bounds = ", ".join(f"int({format_value(v, consts)})" if hasattr(v, "kind")
                       else format_value(v, consts) for v in (start, stop, step))
    loop = [f"for {i} in range({bounds}):", f"    {node.name} = {body.name}({i}, *{node.name}{rest})"]
    if body.cont is not None:   # a while loop: carried value 0 is its condition
        loop = [f"{i} = 0", f"while bool({node.name}[0]) is {body.cont}:",
                f"    {node.name} = {body.name}({i}, *{node.name}{rest})", f"    {i} += 1"]
    if body.brk is not None:    # the iteration that met a break ends the loop
        loop += [f"    if {node.name}[{body.brk}]:", "        break"]
    lines += [f"{node.name} = ({init},)  # loop node: carried values" if carried else
              f"{node.name} = ()  # loop node: nothing carried"]
    return lines + loop


loop = declare("loop", Category.EXTERN, _loop_impl,
               inputs=("start", "stop", "step", "carried", "operands"),
               params={"body": None}, meta=_loop_meta, may_raise=True,
               functional_params=lambda params: {**params, "body": params["body"].functional()},
               call_param="body",
               print_python=_print_loop,
               doc="for i in range(start, stop, step): carried = body(i, *carried, *operands)")


def _loop_item_impl(values: tuple, index: int) -> Any:
    return values[index]


def _loop_item_meta(values: Any, index: int) -> Any:
    return values[index] if isinstance(values, tuple) else values


# A loop whose trip count is known only at run time (``range(n)`` of an int argument) is
# priced as this many trips: what the call costs either way is then its trips, so the cost
# model's verdict is the cheaper trip's, and it holds for every count the guards admit
# (priced at the count of the call that compiled, a verdict for running as Python at a few
# trips would run a later call of thousands as Python too, where compiled trips are cheaper).
RUNTIME_TRIPS = 1000


def priced_trips(start: Any, stop: Any, step: Any) -> int:
    """The trips a loop's cost is priced at: its count where the bounds are ints, else
    RUNTIME_TRIPS."""
    if all(type(v) is int for v in (start, stop, step)):
        return len(range(start, stop, step))
    return RUNTIME_TRIPS


loop.inplace_impl = _loop_inplace
loop.inplace_inputs = lambda args, params: [args[3][k] for k in params["body"].arrays]


loop_item = declare("loop_item", Category.EXTERN, _loop_item_impl, inputs=("values",),
                    params={"index": 0}, meta=_loop_item_meta,
                    doc="one final carried value of a loop")
# A loop's arrays are its own: copies of what it was given, or arrays the caller gave up.
loop_item.fresh_result = True
loop_item.item_param = "index"
