"""Calling a C++ kernel from its generated wrapper (``launch.c``): the wrapper passes
arrays and scalars as they are, ``kernel(x, out, 0.5, _NT)``, and the kernel's name is
bound once, at import, by :func:`bind`:

- to a C ``Launcher`` that reads each array's data pointer and calls the kernel's packed
  entry (one call from Python, no cffi objects: ~0.1 us where cffi with
  ``ffi.from_buffer`` per array cost ~0.6 us an array plus the call);
- otherwise (the extension cannot be built, ``KILN_FAST_GUARDS=0``, a kernel without a
  packed entry) to :func:`pointers`, the cffi call with each array converted as before.

The launcher hands anything it does not convert itself (an argument that is not an
ndarray, an int out of its C type's range) to the cffi path, so both give the same
answers and raise the same errors.
"""
from __future__ import annotations

import os
from types import ModuleType
from typing import Any, Callable

import numpy as np

from ..cext import shipped_extension
from ..config import config

_C_SOURCE = os.path.join(os.path.dirname(__file__), "launch.c")
_FAST_CALL_SOURCE = os.path.join(os.path.dirname(__file__), "fast_call.c")


def module() -> ModuleType | None:
    """The built extension, or None (disabled, or it cannot be built)."""
    return shipped_extension(_C_SOURCE, "_kiln_launch_", "launch") if config.fast_guards else None


def pointers(fn: Callable, ffi: Any, npointers: int) -> Callable:
    """``fn`` (a cffi function) taking arrays for its first ``npointers`` parameters."""
    fb, cast = ffi.from_buffer, ffi.cast

    def pointer(a: Any) -> Any:
        if isinstance(a, np.ndarray) and not a.flags.c_contiguous:
            return cast("char *", a.ctypes.data)  # strided or broadcast: its first element
        return fb(a)

    def call(*args: Any) -> Any:
        return fn(*[pointer(a) for a in args[:npointers]], *args[npointers:])
    call.__name__ = getattr(fn, "__name__", "kernel")
    return call


def bind(lib: Any, ffi: Any, name: str, arg_codes: str, keep_gil: bool = False,
         on_fp: Callable | None = None) -> Callable:
    """The callable a wrapper calls kernel ``name`` of ``lib`` through (see the module doc);
    ``arg_codes`` from lowering/cpp.py's launch_codes ('?': no packed entry); ``keep_gil``:
    a kernel of tiny work, run without releasing the GIL (lowering/cpp.py KEEP_GIL_WORK);
    ``on_fp``: called as ``on_fp(flags, *args)`` when the kernel raised a floating-point
    flag of ``on_fp.mask`` (runtime/fpwarn.py; only through the C launcher: the cffi path
    reads no flags), except "invalid" alone with a NaN in an argument of ``on_fp.nan_reads``,
    which the launcher drops itself."""
    npointers = arg_codes.count("p")
    m = module() if "?" not in arg_codes else None
    if m is None:
        return pointers(getattr(lib, name), ffi, npointers)
    slow = _OnFirstCall(lambda: pointers(getattr(lib, name), ffi, npointers), name)
    address = lib.address(name + "_packed")   # (runtime/loader.py: cffi is not needed for it)
    try:
        return m.Launcher(address, arg_codes, np.ndarray, slow, lib, None, keep_gil, on_fp,
                          getattr(on_fp, "mask", 7), getattr(on_fp, "nan_reads", None))
    except ValueError:   # more arguments than the launcher takes (a long unrolled loop)
        return slow


class _OnFirstCall:
    """The cffi call of a kernel, built when the launcher first hands it an argument
    (cffi parses the library's declarations then, not at load)."""

    def __init__(self, build: Callable[[], Callable], name: str) -> None:
        self._build, self._call = build, None
        self.__name__ = name

    def __call__(self, *args: Any) -> Any:
        if self._call is None:
            self._call = self._build()
        return self._call(*args)


FAST_MAX = 64   # fast_call.c's KILN_FAST_MAX: inputs, checked inputs and allocations
FAST_DIMS = 32  # fast_call.c's KILN_FAST_DIMS: the dimensions of an allocation


def fast_call(wrapper: Any) -> Callable:
    """A loaded wrapper module's ``call``, run in C (fast_call.c ``FastCall``) when the
    module states its steps as data (``_fast_plan``, lowering/wrapper.py) and the
    extension builds; else ``module.call`` itself. Built once the runtime has set the
    module's constants (the plan names them)."""
    plan = getattr(wrapper, "_fast_plan", None)
    m = shipped_extension(_FAST_CALL_SOURCE, "_kiln_fast_call_", "fast_call", numpy_api=True) \
        if plan is not None and config.fast_guards and module() is not None else None
    if m is None:
        return wrapper.call
    nparams, fixed, allocations, launches, outputs = plan
    if max(nparams, len(fixed), len(allocations), len(outputs),
           *(len(args) for _, args in launches)) > FAST_MAX or \
            any(len(shape) > FAST_DIMS for shape, *_ in allocations):
        # a graph over a long list's items, an array of more than 32 dimensions (NumPy
        # allows 64): more than FastCall holds
        return wrapper.call

    def item(kind_value: tuple) -> tuple:
        kind, value = kind_value
        return (2, getattr(wrapper, value)) if kind == "g" else ({"i": 0, "b": 1}[kind], value)
    return m.FastCall(nparams, wrapper.call, wrapper._fp_trapped,
                      getattr(wrapper, "_fast_inputs", None) or getattr(wrapper, "_layouts", None)
                      if fixed else None, tuple(fixed),
                      tuple((shape, np.dtype(dtype)) + tuple(strides) for shape, dtype, *strides in allocations),
                      tuple((getattr(wrapper, name), tuple(item(a) for a in args))
                            for name, args in launches),
                      tuple(item(o) for o in outputs))


def layouts(*specs: tuple) -> Callable[..., bool]:
    """``check(x, y, ...)``: does each argument have the ``(shape, strides)`` (strides in
    bytes) of its spec? The wrapper's input check, in C when the extension builds."""
    m = module()
    if m is not None:
        return m.Layouts(np.ndarray, *specs)

    def check(*args: Any) -> bool:
        return all(a.shape == shape and a.strides == strides for a, (shape, strides) in zip(args, specs))
    return check
