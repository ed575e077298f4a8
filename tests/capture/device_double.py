"""A stand-in for cupy.ndarray on machines without a GPU (all of CI).

``DeviceDouble`` behaves, where kiln's capture can tell, as a CuPy array does: NumPy's
functions reach it through ``__array_ufunc__`` and ``__array_function__`` and return
arrays of its own type; it has ``.device.id``; it refuses ``__array__`` (CuPy raises on an
implicit copy to the host) and a NumPy operand in an operation; a full reduction gives a
0-d array, not a NumPy scalar; ``flags`` has no ``writeable``. Its memory is a NumPy array,
so capture, guards and the eager backends run on it without a GPU. It is not CuPy (no
kernels run on a device): tests/runtime/test_triton_cupy.py runs the same programs on
real CuPy arrays on a GPU, and benchmarks/gpu_check.py the whole path.
"""
from __future__ import annotations

import operator

import numpy as np

from kiln import array_kinds

KIND = array_kinds.ArrayKind("device_double", "numpy", "DeviceDouble", "cuda", host_memory=False,
                             c_guard=False, writeable_flag=False)


class Device:
    def __init__(self, id: int) -> None:
        self.id = id


class Flags:
    def __init__(self, a: np.ndarray) -> None:
        self.c_contiguous, self.f_contiguous = a.flags.c_contiguous, a.flags.f_contiguous
        self.owndata = a.flags.owndata


class DeviceDouble:
    def __init__(self, data, device: int = 0) -> None:
        self._a = data if isinstance(data, np.ndarray) else np.array(data)
        self.device = Device(device)

    shape = property(lambda s: s._a.shape)
    dtype = property(lambda s: s._a.dtype)
    strides = property(lambda s: s._a.strides)
    ndim = property(lambda s: s._a.ndim)
    size = property(lambda s: s._a.size)
    itemsize = property(lambda s: s._a.itemsize)
    flags = property(lambda s: Flags(s._a))
    T = property(lambda s: s._wrap(s._a.T))

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def get(self) -> np.ndarray:
        return self._a.copy()

    def _wrap(self, value):
        if isinstance(value, np.ndarray):
            return DeviceDouble(value, self.device.id)
        if isinstance(value, np.generic):   # CuPy: a 0-d array
            return DeviceDouble(np.asarray(value), self.device.id)
        if isinstance(value, (tuple, list)):
            return type(value)(self._wrap(v) for v in value)
        return value

    def _unwrap(self, value):
        if isinstance(value, DeviceDouble):
            if value.device.id != self.device.id:
                raise ValueError("arrays on different devices")
            return value._a
        if isinstance(value, np.ndarray):
            raise TypeError(f"Unsupported type {type(value)}")
        if isinstance(value, (tuple, list)):
            return type(value)(self._unwrap(v) for v in value)
        if isinstance(value, dict):
            return {k: self._unwrap(v) for k, v in value.items()}
        return value

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        result = getattr(ufunc, method)(*self._unwrap(inputs), **self._unwrap(kwargs))
        if out is not None:
            (target,) = out
            target._a[...] = result
            return target
        return self._wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        return self._wrap(func(*self._unwrap(args), **self._unwrap(kwargs)))

    def __getitem__(self, key):
        key = key._a if isinstance(key, DeviceDouble) else key
        return self._wrap(self._a[key])

    def __setitem__(self, key, value):
        key = key._a if isinstance(key, DeviceDouble) else key
        self._a[key] = self._unwrap(value)

    def __len__(self) -> int:
        return len(self._a)

    def __bool__(self) -> bool:
        return bool(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def item(self):
        return self._a.item()

    def copy(self):
        return DeviceDouble(self._a.copy(), self.device.id)

    def astype(self, dtype, copy=True):
        return DeviceDouble(self._a.astype(dtype, copy=copy), self.device.id)

    def reshape(self, *shape, **kwargs):
        return self._wrap(self._a.reshape(*shape, **kwargs))

    def sum(self, *args, **kwargs):
        return np.sum(self, *args, **kwargs)

    def max(self, *args, **kwargs):
        return np.max(self, *args, **kwargs)

    def mean(self, *args, **kwargs):
        return np.mean(self, *args, **kwargs)

    def __repr__(self) -> str:
        return f"DeviceDouble({self._a!r}, device={self.device.id})"


def _binary(fn):
    return lambda self, other: fn(self, other)


def _reflected(fn):
    return lambda self, other: fn(other, self)


def _inplace(fn):
    def method(self, other):
        self[...] = fn(self, other)
        return self
    return method


for _name, _ufunc in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                      ("truediv", np.true_divide), ("floordiv", np.floor_divide),
                      ("mod", np.remainder), ("pow", np.power), ("matmul", np.matmul),
                      ("and", np.bitwise_and), ("or", np.bitwise_or)]:
    setattr(DeviceDouble, f"__{_name}__", _binary(_ufunc))
    setattr(DeviceDouble, f"__r{_name}__", _reflected(_ufunc))
    setattr(DeviceDouble, f"__i{_name}__", _inplace(_ufunc))
for _name, _ufunc in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                      ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)]:
    setattr(DeviceDouble, f"__{_name}__", _binary(_ufunc))
DeviceDouble.__neg__ = lambda self: np.negative(self)
DeviceDouble.__abs__ = lambda self: np.absolute(self)
DeviceDouble.__hash__ = None
del operator

array_kinds.register(DeviceDouble, KIND)
