"""The graph-break cost model: is a graph worth compiling, or would Python be faster?

A compiled call pays a fixed price — the generated entry, the wrapper, one native call
per kernel, and at a graph break the segment machinery (rebuilding the stack, the eager
segment, the resume function's own entry) — where NumPy pays a dispatch per operation.
On small arrays nothing else counts: a three-element ODE right-hand side (``np.empty(3)``
and three element writes) is four NumPy calls, about as cheap as the compiled path's
fixed price. Such graphs are not compiled; their cache entry runs the function as Python
and ``kiln.explain`` says so, with the estimate.

Each extern (a matmul, an inverse) ends the kernel before it, so a graph alternating
extern calls and elementwise ops on small arrays (an unrolled Kalman filter) pays one
native call per elementwise stretch; views are index arithmetic (no call of their own).

The estimate only judges graphs whose elementwise work is on small arrays (at most
``SMALL_ELEMENTS`` elements, per-element work negligible on both sides). Reads and writes
of one element (``x[i]``, ``out[i] = v``: one step of a loop that runs as Python) cost
NumPy the same whatever the array's size, and so do extern ops (a matmul, a solve, a
norm) and views of large arrays: the same NumPy call runs either way, so only dispatch
counts (a power iteration breaking on its convergence test every step). A graph with
elementwise work on a larger array always compiles, unless a graph break follows it: then
the fusion's gain (each NumPy call's pass over the elements, ``ELEMENT_US``, against one
pass a kernel) is priced against the break's fixed cost, for arrays of known sizes up to
``PASSES_ELEMENTS``.
Costs are in microseconds of a quiet core, from benchmarks/cache_hit_overhead.py and
benchmarks/idioms.py; only their ratios matter. ``KILN_COST_MODEL=0`` turns it off.

    >>> import numpy as np
    >>> from kiln.ir import trace
    >>> from kiln.ops import F, TensorMeta
    >>> g = trace(lambda x: F.sqrt(F.sum(F.multiply(x, x))), [TensorMeta((3,), np.float64)], ["x"])
    >>> python_is_faster(g) is not None
    True
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable

from ..ops import REGISTRY, Category, TensorMeta
from ..ops.graph_loops import runtime_trips
from ..ops.loops import RUNTIME_TRIPS
from ..ops.mutation import touches_one_element

SMALL_ELEMENTS = 256
# Measured on 3-element float64 arrays (best of 300 batches of 200 calls, 2-core Xeon):
# x * x 0.4, np.add(x, 1) 0.7, x.sum() 1.0 (np.sum(x) 2.5), np.sqrt of a NumPy scalar
# 0.18, scalar * scalar 0.1, x[1] 0.07, np.empty(3) 0.18, x[0] = v 0.15, np.array([a, b,
# c]) 0.4; compiled x + 1 on a cache hit 1.0 (2.7 before the C launcher).
NUMPY_OP_US = 0.6      # a ufunc on a small array (W7: five ops on 16 elements, 2.8 us)
NUMPY_REDUCE_US = 1.2  # a reduction (x.sum() has a slower entry than a ufunc)
NUMPY_SCALAR_US = 0.12  # arithmetic on NumPy scalars (a ufunc given a 0-d array argument
                        # costs what it costs on an array, though its result is a scalar:
                        # ``z + 1`` 0.68 us, ``z * z`` 0.28, ``s * s`` 0.03 on scalars)
NUMPY_CHEAP_US = 0.1    # a basic index, element write or view; np.empty/np.zeros: 0.2
ENTRY_US = 0.7         # compiled entry + wrapper + output allocation, guards checked in
                       # Python (~40 ns a guard): keyword-only, *args, **kwargs parameters,
                       # dict and list arguments. Stop 52, loaded, one kernel included:
                       # x * scale + shift on 5 elements 0.53 us with scale, shift keyword-
                       # only, 0.42 with *args, 0.76 with **kwargs, 0.56 reading a dict
                       # argument, 0.75 four arrays by keyword (1.5 here made each of them
                       # run as Python, 1.03x NumPy's time, where compiled they took 0.4-0.8x)
ENTRY_C_US = 0.5       # the same with every guard checked in C (guards/fastcheck.c), the
                       # graph's short path taken from C and the error-mode check in C:
                       # x * 2.0 + 1.0 on 3 elements 0.6 us, damped_pendulum (scalars
                       # computed in a Python body) 0.8 us
ENTRY_DIRECT_US = 0.3  # the same with the graph called from C with the entry's parameters
                       # (fastcheck_entry.c SimpleEntry) and a wrapper that only allocates and
                       # launches kernels, run in C (fast_call.c FastCall): lorenz_rhs_empty
                       # 0.32 us compiled, 0.37 us as Python (loaded; its Python estimate
                       # here is 0.71)
KERNEL_US = 0.3        # one native kernel call through the C launcher (runtime/launch.c;
                       # ~1.2 through cffi with a from_buffer per array)
KERNEL_DIRECT_US = 0.1  # the same launched by a wrapper run in C (fast_call.c FastCall) from
                       # an entry that calls the graph from C: a * b + c on 1 to 100 float64
                       # 0.21 us a call in all, a += b 0.16 (NumPy 0.66 and 0.33)
EXTERN_US = 0.2       # a compiled call's NumPy call made through its op's kernel (a Python
                      # function, its parameters by keyword; the wrapper's layout check of
                      # the result), beyond NumPy's own call: np.bitwise_or.reduce on 3x4
                      # 0.93 us, through its kernel 1.12 (1.46 before it passed them by
                      # position); integer_ufunc_reductions, eight such calls and two
                      # comparisons on 3x4, 1.14x NumPy's time compiled
SEGMENT_US = 3.0       # a graph break: stack rebuild, eager segment, resume entry
ELEMENT_US = 0.0002    # one pass over an element of a larger float64 array: a NumPy call's
                       # or a kernel's (x * 2.0 on 3000 elements 1.16 us, 30: 0.56; a fused
                       # A -= 1.5 * (x * y) 1.27 compiled, 0.19 on 30). Priced only for a
                       # graph a break follows (real12's power_iteration_with_deflation at
                       # 30x30: ``A -= lam * np.outer(v, v)`` then a break each step, 1.17x
                       # NumPy's time compiled: its fusion saves two passes of 900, the
                       # break costs more)
# ...on arrays of at most this many elements: declining a graph runs the whole function
# as Python, forgoing the fusion of its graphs after the break too; at this size a pass
# saved there is worth ~0.2 us, a fifteenth of the break (past it, the old rule: compile)
PASSES_ELEMENTS = 1024
# Returned views are not made by kernels: the compiled call rebuilds each one after the
# graph ran, calling its view ops' NumPy kernels (aot/view_outputs.py). Measured on 3x3
# float64, compiled (KILN_COST_MODEL=0) against NumPy: ``return a.T`` 0.48 us / 0.10,
# ``return a.T[::2][::-1][1:]`` 1.1 / 0.34, ``return a * 2, a.T`` 0.68 / 0.78 (before
# view_outputs.py and the view kernels' ndarray methods, ops/shape.py: 1.2, 2.0 and 1.5).
VIEW_OUTPUTS_US = 0.1  # the generated function's frame, once a call when any view is rebuilt
VIEW_REPLAY_US = 0.2   # each view op replayed (reshape's layout check costs more: three
                       # views of a 3x3 array, 2.2 us), an aliasing op too (``Op.aliases``:
                       # ``x.astype(x.dtype, copy=False)``, ``np.ascontiguousarray(x)``, ``x.view()``)
VIEW_LAYOUT_US = 0.3   # once a call when a returned view's op is layout-dependent (a
                       # reshape, np.ascontiguousarray): the compiled call checks the
                       # arguments' layouts in Python before it runs (aot/runtime.py
                       # ``_for_layouts``). identity_returns (test_programs.py: nine views,
                       # copies and the argument itself of a float32[4]) took 1.5x NumPy's
                       # time compiled, priced 2.4 us against 3.8 before aliasing ops were
                       # priced here and as NumPy's no-copy call (``_numpy_us``)

# Each 0-d value a graph computes and returns: its 0-d buffer, the kernel's argument, the
# NumPy scalar made from it. ``[float(v) * 2 for v in x]`` (an unrolled comprehension, one
# output an element) compiled took 1.98, 2.50, 4.49, 9.38, 12.57 us on 4, 8, 16, 32, 48
# float64 against NumPy's 1.59, 2.03, 2.49, 3.99, 4.97 (loaded, CPU time; the same work
# summed to one output 0.7-0.8 us at every size): ~0.24 us an output past the first (which
# the entry's price holds), priced 0 before (test_programs.py's comprehension_breaks on
# 20x30, 650 such outputs, 7.0x NumPy's time).
OUTPUT_SCALAR_US = 0.24

# A graph of small-array work needing more kernels than this runs as Python: building
# them costs ~BUILD_S_PER_KERNEL each (g++ -O3), thousands of calls' worth of any saving.
# (Graphs on large arrays compile: an unrolled 100-step stencil builds for seconds and
# then runs 8x NumPy. Run as their functional NumPy program instead, a write into an
# array copies it: slower than NumPy.)
# Kernels of the same code build once (lowering/renderer.py share_identical), so the
# launches counted here overstate the build of an unrolled loop's identical steps (a
# 100-step tanh(A @ x) update on 8 elements: 100 launches, 1 kernel built, 1.6-1.9x NumPy
# compiled). Past the limit the lowering itself is asked (``built``: the kernels it would
# build, g++ not run); counting alike elementwise stretches of the graph does not predict
# it (toeplitz_solve in tests/runtime/test_cost_model.py: 78 stretches of which 41 alike;
# 157 kernels, none alike).
MAX_SMALL_KERNELS = 64
# A graph on larger arrays of at most this many fused ops is asked whether it builds any
# kernel (``_numpy_calls_only``); larger ones always build one.
MAX_ASKED_FUSED = 4
BUILD_S_PER_KERNEL = 0.04
# Python work capture folded away (arithmetic on constants, a comprehension over a range):
# no node prices it, but the function run as Python does it every call. Each instruction
# capture followed past STEPS_PER_OP per op (an op's own loads and call, in its price)
# costs PYTHON_STEP_US: ``t = sum([i * i for i in range(50)]) / 50; return x * t`` on 3
# values, 380 instructions, 2.5 us as Python (loaded), priced 0.6 before.
PYTHON_STEP_US = 0.005
STEPS_PER_OP = 8

_FUSED = (Category.POINTWISE, Category.REDUCTION, Category.VIEW)


def _elements(node: Any) -> int:
    val = node.val
    shape = getattr(val, "shape", ())
    return math.prod(shape) if isinstance(shape, tuple) and all(isinstance(d, int) for d in shape) \
        else SMALL_ELEMENTS + 1


def _large(node: Any) -> bool:
    return _elements(node) > SMALL_ELEMENTS or any(_elements(a) > SMALL_ELEMENTS for a in node.inputs)


def _known_elements(node: Any) -> int | None:
    """The most elements of ``node``'s result and array inputs, when every shape is known
    (None for a dynamic dim: a later call's arrays may be any size)."""
    shapes = [getattr(v.val, "shape", ()) for v in (node, *node.inputs)]
    if not all(isinstance(s, tuple) and all(type(d) is int for d in s) for s in shapes):
        return None
    return max(math.prod(s) for s in shapes)


def _part_of_one_call(node: Any) -> bool:
    """An identity copy that NumPy makes inside a neighbour's call: the pieces of
    ``np.array([a, b, c])`` (copies feeding only a join) and the copy of its result; the
    write of a ufunc's result into an array it was computed for alone (``a += b``,
    ``np.multiply(a, b, out=c)``: one NumPy call, captured as the ufunc and a copyto)."""
    if node.op.functional == "copy_into":
        src = node.args[1] if len(node.args) > 1 else None
        return getattr(src, "kind", None) == "call" and src.op.category == Category.POINTWISE \
            and len(getattr(src, "users", ())) == 1
    rule = node.op.lowering
    if not (isinstance(rule, dict) and rule.get("scalar") == "identity"):
        return False
    users = list(getattr(node, "users", ()))
    if users and all(u.kind == "call" and u.op.category == Category.JOIN for u in users):
        return True
    src = node.args[0] if node.args else None
    return getattr(src, "kind", None) == "call" and src.op.category == Category.JOIN \
        and len(getattr(src, "users", ())) == 1


def _numpy_us(node: Any) -> float:
    op = node.op
    if _part_of_one_call(node):
        return 0.0
    if op.category == Category.VIEW or op.category == Category.GATHER and op.name.startswith("index_"):
        return NUMPY_CHEAP_US
    if op.aliases and _keeps_meta(node):
        # (``x.astype(x.dtype, copy=False)``, ``np.ascontiguousarray(x)`` of a C-ordered
        # x: NumPy returns the array itself, or a view, without a ufunc loop)
        return NUMPY_CHEAP_US
    if op.category == Category.CREATION:
        return 2 * NUMPY_CHEAP_US
    if op.category == Category.REDUCTION:
        return NUMPY_REDUCE_US
    if _elements(node) == 1 and getattr(node.val, "shape", None) == () and not _reads_0d_array(node):
        return NUMPY_SCALAR_US
    return NUMPY_OP_US


def _numpy_us_before_break(node: Any) -> float:
    """_numpy_us, for a graph a break follows (``before_break``: Op.python_us may price
    its call otherwise there; kiln/ops/loop_cost.py)."""
    return _numpy_us(node)


_numpy_us_before_break.before_break = True


def _keeps_meta(node: Any) -> bool:
    """Is ``node``'s result of its input 0's shape and dtype?"""
    src = node.args[0] if node.args else None
    val, was = node.val, getattr(src, "val", None)
    return isinstance(val, TensorMeta) and isinstance(was, TensorMeta) \
        and val.shape == was.shape and val.dtype == was.dtype


def _reads_0d_array(node: Any) -> bool:
    """Does ``node`` read a 0-d ndarray argument (NumPy's array path, not its scalars')?
    (Results of ufuncs and reductions on 0-d arrays are NumPy scalars, so only arguments
    are 0-d arrays here: a NumPy scalar argument is a placeholder holding its value.)"""
    return any(a.kind == "placeholder" and isinstance(a.val, TensorMeta) for a in node.inputs)


def estimate(graph: Any, breaks: int = 0, c_guards: bool = False,
             direct: bool = False) -> tuple[float, float] | None:
    """(Python µs, compiled µs) for one run of ``graph`` followed by ``breaks`` graph
    breaks, or None when some value is too large for a per-call estimate. ``c_guards``:
    the entry's guards are checked in C (a cheaper entry: ENTRY_C_US); ``direct``: and it
    calls the graph with its parameters from C (ENTRY_DIRECT_US, when the graph is
    kernels only)."""
    found = _tally(graph, breaks > 0)
    return None if found is None else _priced(found, breaks, c_guards, direct and _kernels_only(graph, found),
                                              _returned_us(graph))[:2]


def _kernels_only(graph: Any, found: tuple) -> bool:
    """Is the compiled call kernels only, on static shapes and float or array inputs (a
    wrapper launch.c runs as data: lowering/wrapper.py ``_fast_plan``)?"""
    _, _, externs, calls = found
    return not externs and not calls and not any(
        p.meta.get("dynamic_dims") or type(p.val) in (int, bool) for p in graph.placeholders)


def _priced(found: tuple, breaks: int, c_guards: bool, direct: bool = False,
            views_us: float = 0.0) -> tuple[float, float, int]:
    """(Python µs, compiled µs, kernels) from a ``_tally``; ``views_us``: rebuilding the
    returned views (:func:`_returned_views_us`)."""
    python, kernels = found[:2]
    direct = direct and not breaks
    entry = ENTRY_DIRECT_US if direct else ENTRY_C_US if c_guards else ENTRY_US
    return python, entry + _calls_us(found, KERNEL_DIRECT_US if direct else KERNEL_US) \
        + SEGMENT_US * breaks + views_us, kernels


def _returned_us(graph: Any) -> float:
    """What a compiled call pays for ``graph``'s results beyond its kernels: the views it
    rebuilds and the scalars it hands back."""
    return _returned_views_us(graph) + _returned_scalars_us(graph)


def _returned_scalars_us(graph: Any) -> float:
    """OUTPUT_SCALAR_US for each 0-d value the graph computes and returns past the first
    (each a 0-d buffer of its own, an argument of its kernel and a NumPy scalar made from
    it; the entry's price holds one: ``z + 1`` of a 0-d z, 0.6x NumPy's time compiled)."""
    outputs = graph.nodes[-1].args[0] if graph.nodes and graph.nodes[-1].kind == "output" else ()
    scalars = {id(v) for v in outputs if getattr(v, "kind", None) == "call"
               and isinstance(v.val, TensorMeta) and v.val.shape == ()}
    return OUTPUT_SCALAR_US * max(0, len(scalars) - 1)


def _returned_views_us(graph: Any) -> float:
    """What rebuilding ``graph``'s returned views costs a compiled call: a view of an
    input always (``input_view``), a view of an intermediate that another output also
    returns or views (``base_view``: they share its memory, as in NumPy); aot/
    functionalize.py ``_finish`` decides it. (A non-contiguous view of an intermediate
    returned alone is rebuilt too; not counted: an underestimate, as before.)"""
    outputs = graph.nodes[-1].args[0] if graph.nodes and graph.nodes[-1].kind == "output" else ()
    chains = []
    for value in outputs:
        steps, base, layout = 0, value, False
        while getattr(base, "kind", None) == "call" and base.op.may_alias and base.args:
            steps, base, layout = steps + 1, base.args[0], layout or base.op.layout_dependent
        chains.append((steps, base, layout))
    bases = [id(base) for _, base, _ in chains]
    rebuilt = [(steps, layout) for steps, base, layout in chains if steps and (
        getattr(base, "kind", None) == "placeholder" or bases.count(id(base)) > 1)]
    if not rebuilt:
        return 0.0
    return VIEW_OUTPUTS_US + VIEW_REPLAY_US * sum(steps for steps, _ in rebuilt) \
        + (VIEW_LAYOUT_US if any(layout for _, layout in rebuilt) else 0.0)


def _calls_us(found: tuple, kernel_us: float = KERNEL_US) -> float:
    """The compiled graph's native calls, from a ``_tally``: kernels, extern calls and
    calls priced by their op (a graph loop's trips)."""
    _, kernels, externs, calls = found
    return kernel_us * kernels + (NUMPY_OP_US + EXTERN_US) * externs + calls


def _body_us(graph: Any) -> float | None:
    """One run of a loop body's compiled graph, entry aside; None: not small work."""
    found = _tally(graph)
    return None if found is None else _calls_us(found)


def estimate_as_run(graph: Any) -> tuple[float, float] | None:
    """(Python µs, compiled µs) of one run of ``graph`` judged again after a call
    (as_python.hops_outweigh: the breaks are priced there, by the hops the call made):
    loops as the interpreter runs them, and elementwise work on larger arrays of known
    sizes, any, by its passes over them (every graph of the family is priced there, so
    declining forgoes no fusion left unpriced); None where sizes are unknown."""
    found = _tally(graph, passes=True, limit=None, before_break=False)
    return None if found is None else _priced(found, 0, True, False, _returned_us(graph))[:2]


def _tally(graph: Any, passes: bool = False, limit: int | None = PASSES_ELEMENTS,
           before_break: bool | None = None) -> tuple[float, int, int, float] | None:
    """(Python µs, kernels, extern calls, µs of calls their ops price) of one run of
    ``graph``, or None as estimate. ``passes``: elementwise work on larger arrays of known
    sizes (at most ``limit`` elements; None: any) is priced by its passes over them
    (ELEMENT_US), the kernels' in the last; ``before_break`` (``passes`` unless given):
    ops price their Python calls as before a break (``_numpy_us_before_break``)."""
    per_op_us = _numpy_us_before_break if (passes if before_break is None else before_break) else _numpy_us
    python = calls = 0.0
    externs = kernels = 0
    in_kernel = False   # a fused op after an extern starts a new kernel (upper bound)
    kernel_pass = 0.0   # the current kernel's pass over its largest array, priced so far
    calls_seen: set = set()   # the one_call groups priced
    folded = getattr(graph, "folded", [])   # computed while compiling: Python's work only
    folded_ids = {id(n) for n in folded}
    for node in folded + graph.nodes:
        if node.kind != "call":
            continue
        op = node.op
        fused = _fused(op)
        if touches_one_element(node):  # x[i] of a large x: as cheap in NumPy as compiled
            python += NUMPY_CHEAP_US
        elif _large(node) and fused and passes and op.python_us is None \
                and (known := _known_elements(node)) and (limit is None or known <= limit) \
                and not _numpy_loop(node):
            python += _numpy_us(node) + (0.0 if _part_of_one_call(node) else ELEMENT_US * known)
            if id(node) not in folded_ids:
                kernel_pass = kernel_pass if in_kernel else 0.0
                calls += max(0.0, ELEMENT_US * known - kernel_pass)
                kernel_pass = max(kernel_pass, ELEMENT_US * known)
        elif _large(node) and (op.python_us is None or op.compiled_us is None):
            # (a graph loop prices both sides by its body's ops, below: a power iteration
            # whose body is NumPy's matmul and norm of a 200x200 matrix is those calls either
            # way, plus the driver's step a trip compiled)
            if fused or op.python_us is not None:
                return None   # elementwise work or a loop over a large array: compiling pays
            # A matmul, solve or norm of a large array, or a view of one: NumPy's own
            # call either way, so only its dispatch counts (both sides pay it).
            python += NUMPY_CHEAP_US if op.category == Category.VIEW else NUMPY_OP_US
        elif op.python_us is not None:
            cost = op.python_us(node, per_op_us)
            if cost is None:
                return None
            python += cost
        elif node.meta.get("one_call") is not None:
            # one NumPy call computes every node of the spelling (Composite.one_call): a
            # 9x3 np.linalg.lstsq is one call as Python, eleven nodes compiled
            group = node.meta["one_call"]
            python += 0.0 if group in calls_seen else NUMPY_OP_US
            calls_seen.add(group)
        else:
            python += _numpy_us(node)
        if id(node) in folded_ids:
            continue
        if op.category == Category.VIEW:
            pass   # index arithmetic inside a kernel, or a view NumPy makes as cheaply
        elif op.compiled_us is not None:
            cost = op.compiled_us(node, _body_us)
            if cost is None:
                return None
            calls += cost
            in_kernel = False
        elif fused and not _numpy_loop(node):
            kernels += not in_kernel
            in_kernel = True
        elif _kernel_write(op):
            kernels += 1
            in_kernel = False
        elif op.category == Category.MUTATION and op.functional is not None:
            # NumPy's in-place call (np.maximum.at(v, i, 10.0) of a view v of x),
            # functionalized: a copy, the call on it, and the write back into x (three
            # calls; at_through_views in tests/test_programs_apps_code.py, four such calls
            # on 6x4: 14 us compiled against NumPy's 9.4, priced 5.0 against 5.3 before)
            externs += 3
            in_kernel = False
        else:
            externs += 1
            in_kernel = False
    return python, kernels, externs, calls


def _fused(op: Any) -> bool:
    """Work a kernel does (elementwise, reduction, an op with a lowering), not a NumPy call."""
    return op.category in _FUSED and op.category != Category.VIEW or op.lowering is not None


def _numpy_loop(node: Any) -> bool:
    """Does the lowering leave elementwise ``node`` to NumPy's own loop (an extern call):
    its loop's kind (that of its result and array inputs) not among those its rule lowers
    (``Op.lowering["kinds"]``: power's integer loop), and no decomposition a constant or
    scalar operand picks (``"when"``: ``a ** 2`` is ``a * a``)? (``a ** k, 2 ** abs(a)`` on
    5 int64, two NumPy calls priced as one kernel, took 1.26x NumPy's time compiled.)"""
    rule, op = node.op.lowering, node.op
    if op.category != Category.POINTWISE or not isinstance(rule, dict) or "kinds" not in rule:
        return False
    k = getattr(getattr(node.val, "dtype", None), "kind", None)
    if k is None or k in rule["kinds"] or any(
            getattr(getattr(a.val, "dtype", None), "kind", k) != k for a in node.inputs):
        return False
    when = rule.get("when", {})
    zero_d = []
    for name, v in zip(op.inputs, node.args):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if f"{name}={v:g}" in when or f"{k}:{name}={v:g}" in when:
                return False
            zero_d.append(True)
        else:
            shape = getattr(getattr(v, "val", None), "shape", ())
            if not shape and f"{k}:{name}=scalar" in when:
                return False
            zero_d.append(not shape)
    return not (f"{k}:rest=0d" in when and all(zero_d[1:]))


def _kernel_write(op: Any) -> bool:
    """A write into an array whose functional op a kernel does (``a += b``'s copyto,
    ``x[1:] = v``): counted as a kernel of its own (an upper bound: ``a += b`` is one
    fused kernel), not as an extern NumPy call."""
    return op.category == Category.MUTATION and op.functional is not None \
        and _fused(REGISTRY[op.functional])


def grows_with_size(graph: Any) -> bool:
    """Could larger arrays reverse a "runs as Python" verdict on ``graph``? Yes when it
    has kernel work (or a priced loop) on whole arrays: past SMALL_ELEMENTS that always
    compiles. Extern calls, views and single-element reads cost the same at any size."""
    return any(node.kind == "call" and (_fused(node.op) or node.op.python_us is not None)
               and not touches_one_element(node)
               for node in getattr(graph, "folded", []) + graph.nodes)


def _numpy_calls_only(graph: Any, built: Callable[[], int | None] | None) -> str | None:
    """Why ``graph`` should run as Python though its fused ops looked worth compiling: the
    lowering builds no kernel for it (``x.argmax(axis=1)`` of a C-contiguous x is NumPy's
    own SIMD argmax, a complex sum NumPy's add.reduce: extern calls), so compiled it makes
    NumPy's calls and pays the entry and the wrapper besides (argmax of 64x64 float64: 2.5
    us against NumPy's 1.0). None: compile it. Asked (the
    lowering runs, g++ does not) of graphs of at most MAX_ASKED_FUSED fused ops, none of
    them elementwise (which always makes a kernel), and never of one with folded
    constants (computed once compiled, every call as Python)."""
    fused = [n for n in graph.nodes if n.kind == "call" and _fused(n.op)]
    if built is None or len(fused) > MAX_ASKED_FUSED or getattr(graph, "folded", None) \
            or any(n.op.category == Category.POINTWISE for n in fused):
        return None
    if built() != 0:
        return None
    return (f"runs as Python: its {len(fused)} operation{'s' if len(fused) > 1 else ''} "
            f"compile to no kernel, only NumPy's own calls: compiled would add its entry's cost "
            f"(KILN_COST_MODEL=0 compiles it anyway)")


def _lowered_us(graph: Any, lowered: Callable[[], tuple | None] | None, breaks: int,
                c_guards: bool, direct: bool, views_us: float) -> float | None:
    """A compiled run of a graph that writes into arrays, priced from the calls its
    lowering plans (``lowered()``: runtime/backend.py ``lowered_calls``), or None (no
    writes, or the lowering cannot tell). The tally prices every write as a kernel, but a
    write the lowering leaves to NumPy is an extern: through a strided view of a view
    (``v = x[1:][::2]; v[:] = 0``) a copy of the view and NumPy's write into it, then that
    written back, in a wrapper run as Python (view_chain_write on 6 values: 5.0 us compiled
    against NumPy's 1.0, priced 1.2 against 1.5 by the tally)."""
    if lowered is None or not _writes(graph):
        return None
    calls = lowered()
    if calls is None:
        return None
    launches, computing, cheap = calls
    direct = direct and not breaks and not computing and not cheap
    entry = ENTRY_DIRECT_US if direct else ENTRY_C_US if c_guards else ENTRY_US
    return entry + (KERNEL_DIRECT_US if direct else KERNEL_US) * launches \
        + sum(_extern_us(n) for n in computing) + NUMPY_CHEAP_US * cheap + SEGMENT_US * breaks + views_us


def _writes(graph: Any) -> bool:
    """Does ``graph`` write into arrays: a mutation, or the functional write capture records
    for one into an array the graph made (``Y = np.zeros(...); Y[i, j] += y``: index_put)?
    An admittance matrix built by complex element updates from a list of lines compiled
    each ``+=`` to NumPy's scalar math called from the wrapper: 8x NumPy's time, priced
    as kernels below it."""
    functional = _functional_writes()
    return any(n.kind == "call" and (n.op.category == Category.MUTATION or n.op.name in functional)
               for n in graph.nodes)


@functools.cache
def _functional_writes() -> frozenset:
    """The functional ops of the mutation ops (``setitem``'s ``index_put``)."""
    return frozenset(op.functional for op in REGISTRY.values() if op.functional)


def _extern_us(node: Any) -> float:
    """A NumPy call the lowering plans (``node``: the functional graph's call it makes, or
    None): an op that prices its own NumPy call higher (``Op.python_us``) costs that
    compiled too; any other at least NUMPY_OP_US, through its op's kernel.
    The tally counts a mean as kernel work, but a mean of a boolean selection (a size known
    only at run time) is NumPy's own, a Python function of several ufunc calls
    (lowering/reductions.py): kmeans' ``C[j] = X[m].mean(0)`` after its ``if m.any():``
    break was priced 5.4 us compiled against 7.2 as NumPy; its graph took 7.1 us, and
    with the break's segment, kmeans ran 1.3x NumPy's time compiled."""
    own = node.op.python_us if getattr(node, "kind", None) == "call" else None
    cost = own(node, _numpy_us) if own is not None else None
    return (NUMPY_OP_US if cost is None else max(cost, NUMPY_OP_US)) + EXTERN_US


def folded_python_us(graph: Any, steps: int) -> float:
    """The Python work of a capture that followed ``steps`` instructions to make ``graph``
    beyond its ops' own (PYTHON_STEP_US)."""
    ops = sum(1 for n in graph.nodes if n.kind == "call") + len(getattr(graph, "folded", []))
    return PYTHON_STEP_US * max(0, steps - STEPS_PER_OP * ops)


def python_is_faster(graph: Any, breaks: int = 0, c_guards: bool = False,
                     built: Callable[[], int | None] | None = None,
                     direct: bool = False, lowered: Callable[[], tuple | None] | None = None,
                     steps: int = 0) -> str | None:
    """Why ``graph`` should run as Python (a sentence for explain), or None to compile it.
    ``built()``: how many kernels compiling the graph builds (None: it cannot tell), asked
    when the launches counted here pass MAX_SMALL_KERNELS; ``direct``: see :func:`estimate`;
    ``lowered()``: the calls the lowering plans (:func:`_lowered_us`), asked of a graph of
    small writes the tally would compile; ``steps``: the instructions capture followed
    (:func:`folded_python_us`)."""
    found = _tally(graph, breaks > 0)   # (once: it walks the whole graph)
    if found is None:
        return _numpy_calls_only(graph, built)
    views_us = _returned_us(graph)
    python, compiled, kernels = _priced(found, breaks, c_guards, direct and _kernels_only(graph, found),
                                        views_us)
    python += folded_python_us(graph, steps)
    if compiled < python and kernels <= MAX_SMALL_KERNELS:
        compiled = _lowered_us(graph, lowered, breaks, c_guards, direct and _kernels_only(graph, found),
                               views_us) or compiled
    if kernels > MAX_SMALL_KERNELS and built is not None:
        kernels = built() or kernels
    if kernels > MAX_SMALL_KERNELS:
        # (an unrolled loop whose steps differ in size: no two kernels alike)
        return (f"runs as Python: work on small arrays that would build {kernels} kernels "
                f"(more than {MAX_SMALL_KERNELS}: about {kernels * BUILD_S_PER_KERNEL:.0f} s of "
                f"g++, for {python:.0f} us per call as NumPy; KILN_COST_MODEL=0 compiles it)")
    if compiled < python:
        # (priced as kernels: a reduction the lowering leaves to NumPy, a sum of 10
        # complex128 values, took 2.5 us compiled against NumPy's 0.8)
        return _numpy_calls_only(graph, built)
    calls = [n for n in graph.nodes if n.kind == "call"]
    extra = f" and {breaks} graph break{'s' if breaks > 1 else ''}" if breaks else ""
    large = [n for n in calls if _large(n) and not touches_one_element(n)]
    cheap = sum(1 for n in large if not _fused(n.op))
    what = f" ({cheap} on larger arrays: NumPy calls that cost the same compiled)" if cheap else ""
    sizes = f"on arrays of at most {SMALL_ELEMENTS} elements or on single elements"
    if len(large) > cheap:   # priced by their passes (``_tally``): a break follows
        sizes = (f"on arrays of known sizes ({len(large) - cheap} elementwise on larger arrays: "
                 f"fusing them saves less than the break costs)")
    if any(runtime_trips(n) for n in calls):
        extra += f" (a loop of a run-time trip count priced at {RUNTIME_TRIPS} trips)"
    return (f"runs as Python: {len(calls)} operations {sizes}{what}{extra}; estimated "
            f"{compiled:.1f} us per call compiled against {python:.1f} us as NumPy (KILN_COST_MODEL=0 compiles it anyway)")
