"""What an element loop node (``loop``, kiln/ops/loops.py) costs run as Python and compiled,
for the cost model (kiln/runtime/cost.py ``Op.python_us`` / ``Op.compiled_us``).

Run as Python, a trip of ``for i in range(len(x)): if x[i] > t: n += 1`` is the
interpreter's: an element read that makes a NumPy scalar, a comparison, an int addition,
tens of nanoseconds each; pricing each body op as a NumPy call on an array (~0.6 us, as
this loop was priced until stop 58) made a 16-trip count 50 us as Python where it takes
1.3, so every element loop compiled, and a loop node's fixed cost (~1.7-4.6 us) lost to
Python's loop below ~10-40 trips (capture/loop_appends.py kept a floor of 40 trips for
appends because of it). Each body op is priced here by its kind, from
``python -m benchmarks.element_loop_cost --python`` (Python 3.11, NumPy 2, loaded 2-core
Xeon, load ~7; ns a trip less the empty loop's, which is TRIP_NS):

    x[i] of float64 47, A[i, j] 83; out[i] = v 33-39; L.append(i) 10
    NumPy scalars: a * b 43, a + b 45, a / b 44, a % b 54, a > b 13, a > 0.5 18,
    abs(a) 25, int(a) 59, float(a) 20, np.sqrt(a) 169; np.float64(2.5) 106
    Python numbers: a * b 10, a > b 11, n += 1 12, a % b 20, i // 3 and i % 3 33,
    math.sqrt(a) 27; max(a, b) 118-126 (either); an ``if`` on a bool 3

A body traces every path of a data-dependent branch (kiln/capture/loop_branches.py):
each path's ops are priced as if every trip ran them (an upper bound) and the ``select``
of a rebinding after it, which Python does not do, is free.

Compiled, the node is one native call: a fixed cost besides the entry (LOOP_NODE_US, each
array the body writes LOOP_ARRAY_US, the appends' ``loop_head`` LOOP_HEAD_US) and about a
nanosecond a body op a trip. ``python -m benchmarks.element_loop_cost --compiled`` (cost
model off, same machine and load; us a call, plain / compiled):

    count under a test    4 trips 1.6 / 1.9    8 1.9 / 1.8    16 2.6 / 1.8   4096 743 / 3.8
    running sum written   4 trips 2.5 / 3.4    8 2.9 / 3.3    16 4.5 / 3.4   4096 663 / 8.7
    max and its index     4 trips 1.7 / 2.4    8 1.9 / 2.3    16 2.7 / 2.4   4096 338 / 5.3
    appends under a test  64 trips 6.8 / 4.6  128 13.7 / 5.6  1024 101 / 14  4096 410 / 45
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .appended_lists import loop_head
from .loops import LoopBody, loop, loop_item, priced_trips, stand_in

NS = 1e-3   # us
TRIP_NS = 15          # the for statement's step: FOR_ITER of the range, the index stored
LOOP_US = 0.2         # range(len(x)), its iterator and the loop's exit, once a loop
LOAD_NS = 47          # x[i]: a NumPy scalar made (each further index: LOAD_AXIS_NS)
LOAD_AXIS_NS = 35
STORE_NS = 36         # out[i] = v
APPEND_NS = 10        # L.append(v): a buffer store and a count's step in the node
BRANCH_NS = 3         # ``if c:`` (the body's bool of its test)
# scalar_fn by name: (a NumPy scalar among the operands, Python numbers only)
_COMPARE = (15, 11)
_ARITHMETIC = (44, 11)
_DIVIDING = (54, 20)   # floordiv, mod, pow
SCALAR_NS: dict[str, tuple[int, int]] = {
    **{f: _COMPARE for f in ("lt", "le", "gt", "ge", "eq", "ne")},
    **{f: _ARITHMETIC for f in ("add", "sub", "mul", "truediv", "neg", "pos", "invert",
                                "and_", "or_", "xor", "lshift", "rshift")},
    **{f: _DIVIDING for f in ("floordiv", "mod", "pow")},
    "min": (120, 120), "max": (120, 120), "abs": (25, 15),
    "int": (59, 20), "float": (20, 15), "bool": (BRANCH_NS, BRANCH_NS), "select": (0, 0),
}
NUMPY_CALL_NS = (170, 170)   # np.sqrt(a), np.maximum(a, b): a ufunc called on scalars
NUMPY_TYPE_NS = (106, 106)   # np.float64(a), np.uint8(k)
MATH_NS = (27, 27)           # math.sqrt(a), math.exp(a): a libm call
OTHER_NS = (45, 45)

# Compiled: beyond the entry the cost model prices for any graph
LOOP_NODE_US = 1.0    # the node's native call: its runner, the carried values in and out
LOOP_ARRAY_US = 0.8   # each array the body writes: its copy (or donation), handed back
LOOP_HEAD_US = 1.5    # an append list's items: loop_head's copy, the list rebuilt (and an
APPENDED_NS = 5       # item a trip each, rebuilt as Python's list: picks of 4096, ~20 us)
COMPILED_OP_NS = 0.5  # a body op in the C++ loop (4096 trips: a count 0.5 ns a trip, a running sum 1.3)
COPY_NS = 0.2         # an element of a written array copied (ELEMENT_US of the cost model)


ELEMENT_OPS = frozenset({"load_elem", "store_elem", "store_elem_if", "scalar_fn", "loop_item"})


def element_op_us(node: Any, per_op_us: Callable) -> float | None:
    """One run of body op ``node`` as Python; an op that is no scalar element code (a row
    operation, an inner loop) is priced as its own rule or a NumPy call (``per_op_us``)."""
    name = node.op.name
    if node.op.python_us is not None:
        return node.op.python_us(node, per_op_us)
    if name == "load_elem":
        return (LOAD_NS + LOAD_AXIS_NS * max(0, len(_index(node)) - 1)) * NS
    if name in ("store_elem", "store_elem_if"):
        return (APPEND_NS if node.meta.get("append") else STORE_NS) * NS
    if name != "scalar_fn":
        return per_op_us(node)
    if node.meta.get("append"):
        return 0.0      # the count's step of an append (APPEND_NS)
    fn = node.kwargs.get("fn", "")
    prices = SCALAR_NS.get(fn) or (NUMPY_TYPE_NS if fn.startswith("np.") and fn[3:] in np.sctypeDict
                                   else NUMPY_CALL_NS if fn.startswith("np.")
                                   else MATH_NS if fn.startswith("math.") else OTHER_NS)
    numpy = any(isinstance(stand_in(getattr(a, "val", a)), np.generic) for a in _operands(node))
    return prices[0 if numpy else 1] * NS


def _operands(node: Any) -> tuple:
    args = node.args[0] if node.args else ()
    return args if isinstance(args, (tuple, list)) else (args,)


def _index(node: Any) -> tuple:
    index = node.args[1] if len(node.args) > 1 else ()
    return index if isinstance(index, (tuple, list)) else (index,)


def _loop_python_us(node: Any, per_op_us: Callable) -> float | None:
    """The loop run as Python: its trips (loops.priced_trips) times its body's ops; None
    for a while loop (its trips are the data's)."""
    body: LoopBody = node.kwargs["body"]
    if body.cont is not None:
        return None
    price, per_trip, fixed = element_op_us, TRIP_NS * NS, LOOP_US
    if getattr(per_op_us, "before_break", False):
        # Priced out, a graph a break follows runs as Python up to the break and the rest
        # resumes compiled (partial.from_start), a handoff dearer than the break's segment:
        # rle_decode's 10-trip sum before np.empty(total) ran 9.2 us so against 6.4 compiled
        # (Python 6.1). Such a loop keeps the price it had (its body as NumPy calls), which
        # compiles it, as before.
        price, per_trip, fixed = _as_calls, 0.0, 0.0
    for inner in body.graph.calls:
        cost = price(inner, per_op_us)
        if cost is None:
            return None
        per_trip += cost
    return fixed + priced_trips(*node.args[:3]) * per_trip


def _as_calls(node: Any, per_op_us: Callable) -> float | None:
    return per_op_us(node) if node.op.python_us is None else node.op.python_us(node, per_op_us)


def _loop_compiled_us(node: Any, body_us: Callable) -> float | None:
    """The loop node compiled: its fixed cost, each array it writes copied, and its trips'
    body ops in C++ (an inner loop's trips at RUNTIME_TRIPS where its bounds move); None
    (compile: the cost model's rule before element loops were priced) for a while loop or
    a body of other than scalar element code (a row operation of the body's vectors)."""
    body: LoopBody = node.kwargs["body"]
    trip = _trip_ns(body)
    if body.cont is not None or trip is None:
        return None
    carried = node.args[3] if len(node.args) > 3 else ()
    written = [carried[k] for k in body.arrays if k < len(carried)]
    copies = sum(LOOP_ARRAY_US + COPY_NS * NS * _elements(a) for a in written)
    return LOOP_NODE_US + copies + priced_trips(*node.args[:3]) * trip * NS


def _trip_ns(body: LoopBody) -> float | None:
    """A compiled trip of ``body``, ns: its ops, an inner loop's trips of its own; None
    where it holds other than scalar element code and element loops."""
    ns = 0.0
    for inner in body.graph.calls:
        sub = inner.kwargs.get("body")
        if inner.op is loop and isinstance(sub, LoopBody) and sub.cont is None:
            more = _trip_ns(sub)
            if more is None:
                return None
            ns += priced_trips(*inner.args[:3]) * more
        elif inner.op.name in ELEMENT_OPS:
            ns += COMPILED_OP_NS
        else:
            return None
    return ns


def _elements(node: Any) -> int:
    shape = getattr(getattr(node, "val", None), "shape", ())
    return math.prod(d if type(d) is int else 1000 for d in shape) if isinstance(shape, tuple) else 1


loop.python_us = _loop_python_us
loop.compiled_us = _loop_compiled_us
# A loop's final values: a tuple's item in the wrapper; Python holds them as its locals.
loop_item.python_us = lambda node, per_op_us: 0.0
loop_item.compiled_us = lambda node, body_us: 0.05
# An append list's items: Python appended them in the loop (APPEND_NS a trip, above).
loop_head.python_us = lambda node, per_op_us: 0.0
loop_head.compiled_us = lambda node, body_us: LOOP_HEAD_US + APPENDED_NS * NS * _elements(node)
