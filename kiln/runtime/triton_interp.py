"""Run generated Triton kernels on NumPy arrays through Triton's interpreter (tests, CI).

``KILN_TRITON_INTERPRET=1`` sends ``backend="triton"`` here on machines without a GPU.
The interpreter executes a kernel's Python body once per program with NumPy, reading and
writing memory through raw addresses; it finds arrays through objects with ``data_ptr()``
and a dtype whose ``str`` names it, and copies them "to the host" through torch's storage
API, which ``HostArray`` answers without copying (the kernel writes straight into the
NumPy buffer). Scalars are passed as interpreter tensors of the kernel's signature type,
so a float64 scalar stays float64 (a bare Python float would become fp32).

The interpreter has no libdevice (``extern_elementwise`` raises), so interpreted modules
get ``libdevice_standin``: the same function names, computed by NumPy.

    >>> import numpy as np
    >>> from kiln.runtime import triton_build as tb
    >>> mod = tb.load_module(tb.EXAMPLE, "example", interpret=True)     # doctest: +SKIP
    >>> x = np.arange(4, dtype=np.float32)
    >>> run_interpreted(mod.kiln_example, (1,), [x, 4], {"n": "i32"}, {"XBLOCK": 8})  # doctest: +SKIP
    >>> x                                                               # doctest: +SKIP
    array([0., 2., 4., 6.], dtype=float32)
"""
from __future__ import annotations

from typing import Any

import numpy as np


class _HostStorage:
    def __init__(self, array: np.ndarray) -> None:
        self.base = array

    def data_ptr(self) -> int:
        return self.base.__array_interface__["data"][0]

    def cpu(self) -> "_HostStorage":
        return self

    def copy_(self, other: "_HostStorage") -> None:
        if other.data_ptr() != self.data_ptr():
            np.copyto(self.base, other.base)


class HostArray:
    """A NumPy array as the interpreter expects a tensor (``data_ptr``, ``dtype``)."""

    def __init__(self, array: np.ndarray) -> None:
        self.arr = array
        self.dtype = array.dtype        # str(dtype) ('float32', 'bool') names the pointer type

    def data_ptr(self) -> int:
        return self.arr.__array_interface__["data"][0]

    def untyped_storage(self) -> _HostStorage:
        return _HostStorage(self.arr)

    def storage_offset(self) -> int:
        return 0

    def size(self, *dim: int) -> Any:
        return self.arr.shape[dim[0]] if dim else self.arr.shape

    def stride(self, *dim: int) -> Any:
        st = tuple(s // self.arr.itemsize for s in self.arr.strides)
        return st[dim[0]] if dim else st

    def element_size(self) -> int:
        return self.arr.itemsize

    def new_empty(self, *args: Any, **kwargs: Any) -> "HostArray":
        return HostArray(self.arr)

    def set_(self, *args: Any) -> "HostArray":
        return self


_SCALAR_TYPES = {"fp32": np.float32, "fp64": np.float64, "i1": np.bool_, "i8": np.int8,
                 "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
                 "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}


def _scalar(value: Any, ty: str) -> Any:
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle
    tl_type = tl.str_to_ty(ty, None)
    data = np.array([value], dtype=_SCALAR_TYPES[ty])
    return tl.tensor(TensorHandle(data, tl_type), tl_type)


def run_interpreted(fn: Any, grid: tuple, args: list, signature: dict[str, str],
                    constexprs: dict[str, Any]) -> None:
    """Launch an interpreted ``@triton.jit`` function on NumPy arrays and scalars.

    ``signature`` gives the Triton type of each scalar argument by name (pointer
    arguments may be left out); ``args`` are in the kernel's argument order.
    """
    names = [n for n in fn.arg_names if n not in constexprs]
    converted = []
    for name, value in zip(names, args):
        if isinstance(value, np.ndarray):
            converted.append(HostArray(value))      # size 0 too: masks keep every access off it
        else:
            converted.append(_scalar(value, signature[name]))
    with np.errstate(all="ignore"):   # kernels compute IEEE results silently, like NumPy's default
        fn[grid](*converted, **constexprs)


# --- libdevice, computed by NumPy -------------------------------------------------------

def _nearbyint(x: np.ndarray) -> np.ndarray:
    return np.rint(x)


_UNARY = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt, "sqrt_rn": np.sqrt, "rsqrt":
    lambda x: 1 / np.sqrt(x), "cbrt": np.cbrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint,
    "nearbyint": _nearbyint, "fabs": np.abs, "abs": np.abs, "erf": None,
}
_BINARY = {
    "pow": np.power, "fmod": np.fmod, "atan2": np.arctan2, "hypot": np.hypot,
    "copysign": np.copysign, "nextafter": np.nextafter, "fmax": np.fmax, "fmin": np.fmin,
    "div_rn": np.divide, "add_rn": np.add, "mul_rn": np.multiply, "sub_rn": np.subtract,
}
_PREDICATES = {"isnan": np.isnan, "isinf": np.isinf, "isfinited": np.isfinite,
               "finitef": np.isfinite, "signbit": np.signbit}


def _erf(x: np.ndarray) -> np.ndarray:
    import math
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


class _LibdeviceStandin:
    """``libdevice.<name>(...)`` for the interpreter: the NumPy function of that name."""

    def __getattr__(self, name: str) -> Any:
        if name in _UNARY:
            fn, predicate = (_UNARY[name] or _erf), False
        elif name in _BINARY:
            fn, predicate = _BINARY[name], False
        elif name in _PREDICATES:
            fn, predicate = _PREDICATES[name], True
        else:
            raise AttributeError(f"kiln's interpreter stand-in has no libdevice.{name}; add "
                                 f"its NumPy function to kiln/runtime/triton_interp.py")

        def call(*args: Any, **kwargs: Any) -> Any:
            return _apply(fn, predicate, args)
        call.__name__ = name
        return call


def _apply(fn: Any, predicate: bool, args: tuple) -> Any:
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle
    tensors = [a for a in args if isinstance(a, tl.tensor)]
    first = tensors[0]
    data = [a.handle.data if isinstance(a, tl.tensor) else a for a in args]
    with np.errstate(all="ignore"):
        out = np.asarray(fn(*data))
    shape = max((t.shape for t in tensors), key=len)
    if predicate:
        scalar = tl.int1
        out = out.astype(np.bool_)
    else:
        scalar = first.dtype
        out = out.astype(first.handle.data.dtype, copy=False)
    ty = tl.block_type(scalar, list(shape)) if shape else scalar
    return tl.tensor(TensorHandle(out, scalar), ty)


libdevice_standin = _LibdeviceStandin()
