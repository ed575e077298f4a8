"""A wrapper's ``call`` as data (``_fast_plan``), for the C ``FastCall``.

When the generated ``call`` only allocates fresh arrays of static shapes (C order, or the
axis order NumPy gives the result), launches kernels and returns whole arrays or its own
parameters, wrapper.py's ``WrapperCode.generate`` also writes those steps as a tuple
(``_fast_plan``); runtime/launch.py ``fast_call`` builds kiln/runtime/fast_call.c's
``FastCall`` from it and runs them without a Python frame. ``fast_plan`` decides whether a
wrapper qualifies and builds the tuple; ``call`` stays the reference and the fallback.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .loop_ir import Buffer, BufferValue, Scalar
from .scheduler import Kernel


def fast_plan(code: Any, params: list[str], fixed: list, checked: bool) -> tuple | None:
    """``call``'s steps as data (``code``: wrapper.py's WrapperCode), when it only
    allocates fresh C-order arrays of static shapes, launches kernels and returns whole
    arrays or its own parameters (a 3-element ODE right-hand side; runtime/launch.py
    ``fast_call`` runs them in C) or in the axis order NumPy gives a result (``a.T +
    b.T``); None for anything else (views, extern calls, sizes, pools, integer checks, a
    constant's warning).

    ``(nparams, fixed, allocations, launches, outputs)``: ``fixed`` the parameter
    positions ``_layouts`` checks (``_fast_inputs`` where ``generate`` writes one: also
    the casts of Python floats); an allocation ``(shape, dtype name)``, or ``(shape,
    dtype name, strides)`` in another axis order (``_axis_order_strides``); a launch
    ``(kernel global, args)``; an argument or output ``("i", k)`` parameter k, ``("b",
    j)`` allocation j, ``("g", name)`` a module global (``_NT``, a constant array)."""
    low, plan = code.low, code.memory
    tail = getattr(code.renderer, "fast_launch_tail", None)
    if tail is None or checked or not code.rendered or low.int_values or low.scalar_outputs \
            or low.size_checks or plan.at_exit or plan.pooled_outputs or plan.pools \
            or getattr(low, "constant_casts", ()) \
            or any(isinstance(k, Scalar) and (getattr(k, "pytype", None) is int
                                              or getattr(k, "int_bounds", ()))
                   or isinstance(k, Buffer) and not all(type(n) is int for n in k.shape)
                   for _, k in low.inputs):
        return None
    where = {name: ("i", k) for k, name in enumerate(params)}
    allocations: list = []
    launches: list = []
    for step, item in enumerate(code.items):
        if step in code.checks and not plan.allocations.get(step) and all(
                isinstance(a, BufferValue) and a.is_whole() and a.buf.name in where for a in item.args):
            launches.append((code.checks[step], tuple(where[a.buf.name] for a in item.args)))
            continue
        if not isinstance(item, Kernel):
            return None
        rk = code.rendered[item.name]
        if rk.size_args or getattr(rk, "offset_args", ()):
            return None
        for a in plan.allocations.get(step, ()):
            if a.how in ("inplace", "reuse") and a.source in where:
                where[a.name] = where[a.source]
            elif a.how == "new" and not getattr(a.buf, "flips", ()) \
                    and all(type(n) is int for n in a.buf.shape):
                where[a.name] = ("b", len(allocations))
                allocations.append((tuple(a.buf.shape), np.dtype(a.buf.dtype).name)
                                   + _axis_order_strides(a.buf))
            else:
                return None
        args = []
        for name in [code.renderer.pointer(b) for b in rk.buffers] + [s.name for s in rk.scalars]:
            args.append(where.get(name, ("g", name)) if name in where or name in low.constants
                        else None)
        if None in args:
            return None
        launches.append((rk.name, tuple(args) + tuple(("g", name) for name in tail)))
    outputs = []
    for value in low.outputs:
        if isinstance(value, BufferValue) and value.is_whole() and value.buf.name in where:
            outputs.append(where[value.buf.name])
        elif isinstance(value, Scalar) and value.arg and value.name in where:
            outputs.append(where[value.name])
        else:
            return None
    return (len(params), tuple(where[name][1] for name, _ in fixed), tuple(allocations),
            tuple(launches), tuple(outputs))


def _axis_order_strides(buf: Any) -> tuple:
    """``(strides,)`` in bytes of a fresh array laid out in ``buf.order`` (the axis order
    NumPy gives the result: ``a.T + b.T`` is F-ordered), as Renderer.allocate makes it;
    ``()`` for C order. FastCall allocates it with these strides (its plan's third item)."""
    order = getattr(buf, "order", None)
    if order is None or tuple(order) == tuple(range(len(buf.shape))):
        return ()
    step, by_axis = np.dtype(buf.dtype).itemsize, {}
    for axis in reversed(order):
        by_axis[axis] = step
        step *= buf.shape[axis]
    return (tuple(by_axis[d] for d in range(len(buf.shape))),)
