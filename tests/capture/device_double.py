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

import contextlib
import operator
import sys
import types

import numpy as np

from kiln import array_kinds

# The stand-in's array module (``cupy``'s part kiln uses), registered under this name.
XP_NAME = "kiln_tests_device_double_xp"
KIND = array_kinds.ArrayKind("device_double", XP_NAME, "DeviceDouble", "cuda", host_memory=False,
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
            items = [self._wrap(v) for v in value]
            return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
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

    def _key(self, key):
        """An index: device arrays, or host arrays and lists (CuPy copies those to the
        device, as an explicit index)."""
        if isinstance(key, tuple):
            return tuple(self._key(k) for k in key)
        return key._a if isinstance(key, DeviceDouble) else key

    def __getitem__(self, key):
        return self._wrap(self._a[self._key(key)])

    def __setitem__(self, key, value):
        self._a[self._key(key)] = self._unwrap(value)

    def __len__(self) -> int:
        return len(self._a)

    def __bool__(self) -> bool:
        return bool(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __index__(self) -> int:   # CuPy: a 0-d integer array is an index
        return operator.index(self._a)

    def item(self):
        return self._a.item()

    def copy(self):
        return DeviceDouble(self._a.copy(), self.device.id)

    def astype(self, dtype, copy=True):
        return DeviceDouble(self._a.astype(dtype, copy=copy), self.device.id)

    def reshape(self, *shape, **kwargs):
        return self._wrap(self._a.reshape(*shape, **kwargs))

    def fill(self, value) -> None:
        self._a.fill(value)

    def tolist(self):   # CuPy copies to the host for this
        return self._a.tolist()

    def __repr__(self) -> str:
        return f"DeviceDouble({self._a!r}, device={self.device.id})"


def _method(name):
    def method(self, *args, **kwargs):
        return self._wrap(getattr(self._a, name)(*self._unwrap(args), **self._unwrap(kwargs)))
    method.__name__ = name
    return method


# ndarray methods CuPy's arrays have too (not fill, tolist, item, copy, astype: above)
for _name in ["sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "all",
              "any", "cumsum", "cumprod", "ravel", "flatten", "transpose", "swapaxes", "squeeze",
              "take", "repeat", "clip", "round", "conj", "nonzero", "sort", "argsort", "dot",
              "diagonal", "trace", "view"]:
    setattr(DeviceDouble, _name, _method(_name))


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



# -- the stand-in's array module, as ``cupy`` is CuPy arrays' ---------------------------

_current = [0]   # the current device (cupy.cuda.Device(i) as a context manager sets it)


@contextlib.contextmanager
def _device(id: int):
    before, _current[0] = _current[0], id
    try:
        yield
    finally:
        _current[0] = before


def _on_device(value):
    if isinstance(value, np.ndarray):
        return DeviceDouble(value, _current[0])
    if isinstance(value, np.generic):
        return DeviceDouble(np.asarray(value), _current[0])
    if isinstance(value, (tuple, list)):
        return type(value)(_on_device(v) for v in value)
    return value


def _to_array(value, **kwargs):
    """cupy.asarray / cupy.array: a host array (or list, scalar) is copied to the device
    explicitly; a device array stays where it is."""
    if isinstance(value, DeviceDouble):
        return DeviceDouble(np.array(value._a, **kwargs), value.device.id)
    return _on_device(np.array(value, **kwargs))


def _device_function(name: str):
    """Any other function of the module: device arrays in (a host array raises, as in
    CuPy), a device array out, made on the current device."""
    fn = getattr(np, name)

    def call(*args, **kwargs):
        probe = DeviceDouble(np.zeros(0), _current[0])
        return _on_device(fn(*probe._unwrap(args), **probe._unwrap(kwargs)))
    call.__name__ = name
    return call


class _XP(types.ModuleType):
    """What of CuPy's module kiln's kernels use: ``asarray``/``array`` copy host data to
    the device; every other NumPy function runs on device arrays only and returns one."""

    def __init__(self) -> None:
        super().__init__(XP_NAME)
        self.ndarray = DeviceDouble
        self.cuda = types.SimpleNamespace(Device=_device)
        self.asarray = lambda a, dtype=None, order=None: _to_array(a, dtype=dtype, order=order, copy=None)
        self.array = lambda a, dtype=None, copy=True, order="K", ndmin=0: _to_array(
            a, dtype=dtype, copy=copy, order=order, ndmin=ndmin)
        self.ascontiguousarray = lambda a, dtype=None: _to_array(a, dtype=dtype, order="C", copy=None)
        self.asnumpy = lambda a: a.get() if isinstance(a, DeviceDouble) else np.asarray(a)

    def __getattr__(self, name: str):
        value = getattr(np, name)
        if not callable(value) or isinstance(value, type):
            return value
        fn = _device_function(name)
        setattr(self, name, fn)
        return fn


XP = sys.modules.setdefault(XP_NAME, _XP())
array_kinds.register(DeviceDouble, KIND)
