"""The named backends ``kiln.compile(backend=...)`` accepts, and resolving a name.

A backend is ``backend(graph, example_inputs) -> callable``: ``eager`` runs the graph's
printed code with NumPy, ``aot_eager`` adds functionalization and ahead-of-time autograd,
``cpp`` compiles both graphs to C++ (CuPy arrays go to ``triton``: device follows data),
``triton`` compiles Triton kernels. A user's callable is a backend too.
"""
from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np

from .config import config
from .errors import KilnError
from .ir.passes import writes_an_input
from .ir.printer import numpy_program


def _eager_backend(graph: Any, example_inputs: list) -> Callable:
    """Run the graph with NumPy: its printed code, each op calling its NumPy kernel directly.

    The printed ``ops.<name>(...)`` calls go straight to ``op.impl`` (``numpy_program``);
    mutation ops write in place, in program order, exactly as the user's NumPy code did.

    When the inputs include kiln.Tensors (guards pin argument types, so the example inputs
    tell), ``ops.<name>`` is the Op itself: its call hands Tensors to the eager Tensor
    (``Tensor.__kiln_op__``), so the graph records on the autograd tape like eager code.
    On arrays on a GPU (CuPy's), the graph's constant arrays are copied there once, here:
    NumPy's protocols hand each op's kernel to CuPy, which refuses a host operand.
    """
    from .array_kinds import placement
    from .tensor import Tensor
    tensors = any(isinstance(e, Tensor) for e in example_inputs)
    fn = numpy_program(graph, readable=True, through_ops=tensors, label="eager graph",
                       place=placement(example_inputs))
    return fn if tensors or not writes_an_input(graph) else _python_on_self_overlap(fn, graph.name)


def _python_on_self_overlap(fn: Callable, name: str) -> Callable:
    """``fn`` (an eager graph writing into its inputs) raising InputsOverlap, on which its
    cache entry runs the function as Python (entries.graph_call, as for aot's), when a
    writeable argument's elements overlap one another (an ``as_strided`` window): the graph
    spells ``np.add(a, b, out=v)`` as ``np.copyto(v, np.add(a, b))``, and of elements
    ``v`` aliases, NumPy's ufunc keeps the write of the last index in C order, np.copyto
    (and ``v[...] =``) the one its reordered loop (negative strides flipped) writes last."""
    from .aot.aliasing import InputsOverlap
    from .ops.layout import writes_over_itself

    def run(*args: Any) -> Any:
        if run.overlap_runs_python and any(isinstance(a, np.ndarray) and writes_over_itself(a)
                                           for a in args):
            raise InputsOverlap(name)
        return fn(*args)
    run.__dict__.update(fn.__dict__, writes_inputs=True, overlap_runs_python=False)
    return run


def _aot_eager_backend(graph: Any, example_inputs: list) -> Callable:
    """Functionalization and ahead-of-time autograd; both graphs run with NumPy."""
    from .aot import aot_eager
    return aot_eager(graph, example_inputs)


def _cpp_backend(graph: Any, example_inputs: list) -> Callable:
    """aot (functionalization, autograd) with the C++ backend compiling both graphs; CuPy
    arrays go to the Triton backend (device follows data)."""
    from .aot import aot_autograd
    from .runtime.backend import cpp_backend
    from .runtime.devices import where
    if where(example_inputs)[0] == "cuda":
        return _triton_backend(graph, example_inputs)
    return aot_autograd(graph, example_inputs, cpp_backend)


def _triton_backend(graph: Any, example_inputs: list) -> Callable:
    """aot with Triton kernels: CuPy arrays on their GPU, or NumPy arrays through Triton's
    interpreter when KILN_TRITON_INTERPRET=1 (otherwise a KilnError)."""
    from .aot import aot_autograd
    from .runtime.devices import require_triton_device
    from .runtime.triton_backend import triton_backend
    require_triton_device(example_inputs, config.triton_interpret)
    return aot_autograd(graph, example_inputs, triton_backend)


def _cpp_available() -> bool:
    try:
        from .runtime.backend import cpp_backend  # noqa: F401
    except ImportError:
        return False
    return True


BACKENDS: dict[str, Callable] = {"eager": _eager_backend, "aot_eager": _aot_eager_backend,
                                 "cpp": _cpp_backend, "triton": _triton_backend}
def _triton_available() -> bool:
    import importlib.util
    return importlib.util.find_spec("triton") is not None


_OPTIONAL = {"cpp": _cpp_available, "triton": _triton_available}


def available_backends() -> list[str]:
    """The backend names ``kiln.compile`` accepts here (``cpp`` needs kiln.runtime)."""
    return [name for name in BACKENDS if name not in _OPTIONAL or _OPTIONAL[name]()]


def resolve_backend(backend: Any) -> Callable:
    if callable(backend):
        return backend
    names = available_backends()
    if isinstance(backend, str) and backend in names:
        return BACKENDS[backend]
    why = {"cpp": " (kiln.runtime's C++ backend does not import here)",
           "triton": " (the 'triton' package is not installed: pip install 'kiln[triton]')"}.get(backend, "")
    raise KilnError(f"unknown kiln backend {backend!r}{why}; available: "
                    f"{', '.join(map(repr, names))} or a callable backend(graph, example_inputs) "
                    f"-> callable")
