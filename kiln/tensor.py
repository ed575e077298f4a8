"""kiln.Tensor: a NumPy-compatible array that records operations for backward.

A Tensor wraps an ndarray. NumPy functions and ufuncs accept it through
``__array_ufunc__`` and ``__array_function__``, so ``np.tanh(t)`` works and records.
Every operation is looked up in the op inventory (``kiln.ops``): the op's NumPy kernel
computes the value and, when a gradient is needed, a backward node keeps what the op's
derivative rule will read. There is no second copy of any formula here.

    >>> import numpy as np, kiln
    >>> x = kiln.tensor([0.5, 1.0], requires_grad=True)
    >>> np.sin(x).sum().backward()
    >>> np.allclose(x.grad.numpy(), np.cos([0.5, 1.0]))
    True
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from .autograd.engine import check_root_gradient, run_backward
from .autograd.grad_mode import is_grad_enabled
from .autograd.node import AccumulateGrad, BackwardNode, VersionCounter
from .errors import AutogradError, KilnError, NoOpError, UnsupportedArgument
from .ops import REGISTRY, Bound, find_spelling, lookup, method_key, ufunc_method_key
from .ops.polyfills import POLYFILLS
from .ops.registry import iter_leaves, map_leaves
from .ops.meta import check_dtype


_UNSUPPORTED_KINDS = frozenset("OUSVMm")


class Tensor(NDArrayOperatorsMixin):
    """A NumPy-compatible array with autograd. ``Tensor(data)`` wraps without copying."""

    __array_priority__ = 1000

    # Defaults every new Tensor starts with (class attributes: creating a Tensor stores
    # only its data and version counter; setting one of these makes it the instance's own).
    _grad: "Tensor | None" = None
    grad_fn: BackwardNode | None = None
    _requires_grad = False
    _base: "Tensor | None" = None          # the Tensor whose data a view shares
    _accumulator: AccumulateGrad | None = None
    _output_nr = 0                          # which output of grad_fn this Tensor is
    _view_version = 0                       # the shared version when a view was taken
    _view_path: tuple = ()                  # a view's (op, other inputs, params) from its base
    _scalar = False                         # NumPy's value is a NumPy scalar (np.float64), not a
                                            # 0-d array: ``v *= t`` rebinds v, as NumPy's does

    def __init__(self, data: Any, requires_grad: bool = False) -> None:
        if isinstance(data, Tensor):
            data = data._data
        self._data = np.asarray(data)
        self._version = VersionCounter()
        if requires_grad:
            self.requires_grad = True

    @staticmethod
    def _of_result(value: Any) -> "Tensor":
        """A Tensor of NumPy's (or a compiled graph's) result ``value``, which remembers
        whether it was a NumPy scalar."""
        tensor = Tensor(np.asarray(value))
        if isinstance(value, np.generic):
            tensor._scalar = True
        return tensor

    # -- autograd attributes -------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if not self.is_leaf:
            raise KilnError("requires_grad can only be changed on leaf Tensors (this one was "
                            "computed by an op); use .detach() to get a new leaf")
        if value and self._data.dtype.kind not in "fc":
            raise KilnError(f"only floating-point and complex Tensors can require gradients, "
                            f"not {self._data.dtype}; convert with .astype(np.float64) first")
        if value:
            check_dtype(self._data.dtype, "kiln.tensor")
        self._requires_grad = bool(value)

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self) -> "Tensor | None":
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is None:
            self._grad = None
            return
        arr = np.asarray(value._data if isinstance(value, Tensor) else value)
        if arr.shape != self.shape:
            raise KilnError(f"assigned grad has shape {arr.shape}, but the Tensor has shape {self.shape}")
        self._grad = value if isinstance(value, Tensor) else Tensor(arr.astype(self.dtype, copy=False))

    def backward(self, gradient: Any = None, retain_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) · gradient into every leaf's ``.grad``."""
        if not self._requires_grad:
            raise AutogradError("backward() on a Tensor that does not require grad and has no "
                                "grad_fn; did you create the inputs with requires_grad=True "
                                "(or compute it inside kiln.no_grad())?")
        g = check_root_gradient(self, gradient)
        root = self.grad_fn if self.grad_fn is not None else _accumulator_of(self)
        run_backward([(root, g)], retain_graph, Tensor, [self._output_nr])

    def register_hook(self, hook: Callable[["Tensor"], Any]) -> "_HookHandle":
        """Call ``hook(grad)`` when this Tensor's gradient is computed; a return value replaces it."""
        if not self._requires_grad:
            raise KilnError("cannot register a hook on a Tensor that does not require grad")
        node = self.grad_fn if self.grad_fn is not None else _accumulator_of(self)
        entry = (self._output_nr, hook)
        node.pre_hooks.append(entry)
        return _HookHandle(node.pre_hooks, entry)

    def detach(self) -> "Tensor":
        out = Tensor(self._data)
        out._version = self._version
        return out

    def numpy(self) -> np.ndarray:
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._requires_grad and is_grad_enabled() and _differentiating():
            if _numpy_caller() == "as_strided":
                raise KilnError(
                    f"kiln.grad: np.lib.stride_tricks.as_strided at {_user_location()} reads "
                    f"the raw memory of a Tensor that carries the gradient, which kiln cannot "
                    f"follow; for windows use sliding_window_view (differentiated), or pass "
                    f"t.detach() where no gradient should flow")
            raise KilnError(
                f"kiln.grad: a Tensor that carries the gradient became a plain NumPy array at "
                f"{_user_location()} (np.array([...]) of Tensors, np.asarray(t), a NumPy "
                f"array's method given it: X.dot(t), or writing it into a NumPy array: "
                f"y[...] = t), so the gradient through it would be lost. Build arrays with "
                f"np.stack/np.concatenate, call NumPy's functions or operators instead of a "
                f"NumPy array's methods (np.dot(X, t), X @ t), make the target follow the input "
                f"(y = np.ones_like(x), or kiln.tensor(y)), or use t.detach() where no gradient "
                f"should flow")
        if dtype is not None and np.dtype(dtype) != self._data.dtype:
            return self._data.astype(dtype)
        return self._data.copy() if copy else self._data

    # -- ndarray attributes ----------------------------------------------------------------
    shape = property(lambda self: self._data.shape)
    ndim = property(lambda self: self._data.ndim)
    size = property(lambda self: self._data.size)
    dtype = property(lambda self: self._data.dtype)
    itemsize = property(lambda self: self._data.itemsize)
    nbytes = property(lambda self: self._data.nbytes)
    strides = property(lambda self: self._data.strides)

    @property
    def T(self) -> "Tensor":
        return self._method("T")

    @property
    def mT(self) -> "Tensor":
        return self._method("mT")

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(len(self._data)):
            yield self[i]

    def __bool__(self) -> bool:
        return bool(self._data)

    def __float__(self) -> float:
        self._check_leaves_tape("float(t)", "float(t.detach())")
        return float(self._data)

    def __int__(self) -> int:
        return int(self._data)

    def __index__(self) -> int:
        return self._data.__index__()

    def item(self, *args: Any) -> Any:
        self._check_leaves_tape("t.item()", "t.detach().item()")
        return self._data.item(*args)

    def __format__(self, spec: str) -> str:
        # f"{loss:.4f}" in a loss function under kiln.grad formats as the array would
        return format(self._data, spec) if spec else str(self)

    def _check_leaves_tape(self, what: str, detached: str) -> None:
        """A Python float of a value that carries the gradient is a constant to it: used in
        arithmetic, the gradient through it would be silently lost (JAX raises the same)."""
        if self._requires_grad and self._data.dtype.kind in "fc" and is_grad_enabled() \
                and _differentiating():
            raise KilnError(
                f"kiln.grad: {what} of a Tensor that carries the gradient at {_user_location()} "
                f"makes a Python number the gradient cannot follow, so a gradient through it "
                f"would be lost. Keep it an array (0-d arrays work in arithmetic), or use "
                f"{detached} where no gradient should flow (logging, "
                f"a stopping test)")

    def tolist(self) -> Any:
        return self._data.tolist()

    def __repr__(self) -> str:
        body = np.array2string(self._data, separator=", ", prefix="tensor(")
        extra = ""
        if self._data.dtype not in (np.float64, np.int64, np.bool_):
            extra += f", dtype={self._data.dtype}"
        if self.grad_fn is not None:
            extra += f", grad_fn={self.grad_fn}"
        elif self._requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    __hash__ = None  # type: ignore[assignment]  (like ndarray: == is elementwise)

    # -- NumPy protocols -------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method == "__call__" and ufunc in _PLAIN_UFUNCS:
            result = _plain_ufunc_call(ufunc, inputs, kwargs)
            if result is not NotImplemented:
                return result
        key = ufunc if method == "__call__" else ufunc_method_key(ufunc, method)
        spelling = find_spelling(key)
        if spelling is None:
            return _without_op(key, getattr(ufunc, method), inputs, kwargs)
        return _apply_as_numpy(getattr(ufunc, method), inputs, kwargs, spelling)

    def __array_function__(self, func: Callable, types: tuple, args: tuple, kwargs: dict) -> Any:
        spelling = find_spelling(func)
        if spelling is None and func in POLYFILLS:   # np.piecewise: NumPy code on Tensors
            return POLYFILLS[func](*args, **kwargs)
        if spelling is None:
            return _without_op(func, func, args, kwargs)
        return _apply_as_numpy(func, args, kwargs, spelling)

    @staticmethod
    def __kiln_op__(op: Any, inputs: tuple, params: dict) -> Any:
        """Calling an op on Tensors (``F.sin(t)``, a captured graph run with Tensors)
        records on the tape like eager code: the ops package hands the call here."""
        return apply(Bound(op, inputs, params))

    def _method(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return _apply_as_numpy(getattr(np.ndarray, name), (self, *args), kwargs, lookup(method_key(name)))

    def __getitem__(self, index: Any) -> "Tensor":
        return self._method("__getitem__", index)

    def __setitem__(self, index: Any, value: Any) -> None:
        self._method("__setitem__", index, value)


def _method(name: str) -> Callable:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return self._method(name, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"Like ndarray.{name}; recorded for backward."
    return method


for _name in ("sum", "mean", "max", "min", "prod", "var", "std", "argmax", "argmin", "any", "all",
              "cumsum", "cumprod", "reshape", "transpose", "swapaxes", "squeeze", "ravel", "flatten",
              "astype", "clip", "copy", "dot", "repeat", "take", "fill", "conj", "conjugate",
              "round", "argsort", "searchsorted", "diagonal", "trace", "nonzero", "put", "sort",
              "view", "__contains__"):
    setattr(Tensor, _name, _method(_name))


def _part_setter(part: str) -> Callable:
    def store(self: Tensor, value: Any) -> None:
        """``t.real = v`` / ``t.imag = v``: NumPy's write through the part's view (an
        error from NumPy itself where it has one: the imaginary part of a real array)."""
        if part == "imag" and self._data.dtype.kind != "c":
            setattr(np.empty(0, self._data.dtype), part, np.empty(0))  # raises NumPy's TypeError
        getattr(self, part)[...] = value
    return store


Tensor.real = property(lambda self: self._method("real"), _part_setter("real"))
Tensor.imag = property(lambda self: self._method("imag"), _part_setter("imag"))


class _HookHandle:
    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def _accumulator_of(t: Tensor) -> AccumulateGrad:
    if t._accumulator is None:
        t._accumulator = AccumulateGrad(t)
    return t._accumulator


# -- running ops on Tensors ------------------------------------------------------------------

def _data_of(value: Any) -> Any:
    return value._data if isinstance(value, Tensor) else value


def unwrap(value: Any) -> Any:
    """Replace Tensors by their arrays inside nested tuples/lists/slices."""
    if isinstance(value, Tensor):
        return value._data
    return map_leaves(value, _data_of)


def _tensors_in(value: Any):
    return (v for v in iter_leaves(value) if isinstance(v, Tensor))


def _wrap_result(value: Any) -> Any:
    if isinstance(value, (np.ndarray, np.generic)):
        return Tensor._of_result(value)
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):   # SVDResult, ...
        return type(value)(*(_wrap_result(v) for v in value))
    if isinstance(value, tuple):
        return tuple(_wrap_result(v) for v in value)
    if isinstance(value, list):
        return [_wrap_result(v) for v in value]
    return value


def _bind(spelling: Any, args: tuple, kwargs: dict) -> Any:
    """``spelling.bind(*args, **kwargs)``; an argument kiln does not handle names the
    user's line (NumPy's call on Tensors has no line of its own in the traceback)."""
    try:
        return spelling.bind(*args, **kwargs)
    except UnsupportedArgument as e:
        if str(e).startswith("at "):   # (named by a call inside this one)
            raise
        raise UnsupportedArgument(f"at {_user_location()}: {e}") from None


def _apply_as_numpy(fn: Callable, args: tuple, kwargs: dict, spelling: Any) -> Any:
    """``apply`` of NumPy's call ``fn(*args, **kwargs)``; where its ``out=`` has another
    shape than a result NumPy does not broadcast (tensor_apply.py ``OutShape``), NumPy's
    call on the data raises NumPy's own error (nothing is written: it checks first)."""
    try:
        return apply(_bind(spelling, args, kwargs))
    except OutShape:
        fn(*_copies(unwrap(args)), **{k: _copies(unwrap(v)) for k, v in kwargs.items()})
        raise


def _without_op(key: Any, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """A NumPy callable with no kiln op: fine on data, an error if a gradient is needed.

    On Tensors that require grad it runs on copies: results that cannot carry a gradient
    (``np.argsort``, ``np.searchsorted``: integer or bool arrays) are returned as in
    PyTorch; a float result, or none (a function that writes its input), raises.
    """
    if is_grad_enabled() and any(t._requires_grad for t in _tensors_in((args, tuple(kwargs.values())))):
        try:
            lookup(key)
        except NoOpError as e:
            result = fn(*_copies(unwrap(args)), **{k: _copies(unwrap(v)) for k, v in kwargs.items()})
            if type(result) in (bool, int):  # np.allclose, np.array_equal: a Python answer
                return result
            leaves = list(_array_leaves(result))
            if result is None or not leaves or any(a.dtype.kind not in "biu" for a in leaves):
                raise NoOpError(f"at {_user_location()}: {e.args[0].split(';')[0]}, so it cannot "
                                f"be differentiated; call it on t.detach() or inside "
                                f"kiln.no_grad()") from None
            return _wrap_result(result)
    return _wrap_result(fn(*unwrap(args), **{k: unwrap(v) for k, v in kwargs.items()}))


def _copies(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (tuple, list)):
        return type(value)(_copies(v) for v in value)
    return value


def _array_leaves(value: Any):
    if isinstance(value, (np.ndarray, np.generic)):
        yield np.asarray(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _array_leaves(v)
    elif value is not None and not isinstance(value, (bool, int)):
        yield np.asarray(value, dtype=object)  # anything else counts as a value that needs grad


_PLAIN_LEAVES = (int, float, bool, np.generic)
# ufunc -> op name, for the ops whose kernel is the ufunc itself.
_PLAIN_UFUNCS = {op.ufunc: op.name for op in REGISTRY.values()
                 if getattr(op, "ufunc", None) is not None and op.impl is op.ufunc}


def _plain_ufunc_call(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """The fast path of a ufunc on Tensors when nothing is recorded (an SGD update under
    ``no_grad``, arithmetic on Tensors that do not require grad): the result ``apply``
    would compute, without binding the call. ``NotImplemented`` sends anything unusual
    (other keywords, nested inputs, inputs needing a gradient) down the general path."""
    out = None
    if kwargs:
        if len(kwargs) != 1 or "out" not in kwargs:
            return NotImplemented
        out = kwargs["out"]
    if len(inputs) != ufunc.nin:
        return NotImplemented
    grad_on = is_grad_enabled()
    raw = []
    for value in inputs:
        if isinstance(value, Tensor):
            if grad_on and (value._requires_grad or value._base is not None
                            and value._version.value != value._view_version):
                return NotImplemented   # (a view whose base was written: apply refreshes it)
            value = value._data
        elif not isinstance(value, _PLAIN_LEAVES) and type(value) is not np.ndarray:
            return NotImplemented
        if isinstance(value, np.ndarray) and value.dtype.kind in _UNSUPPORTED_KINDS:
            return NotImplemented
        raw.append(value)
    if out is None:
        return Tensor._of_result(ufunc(*raw))
    if len(out) != 1 or not isinstance(out[0], Tensor):
        return NotImplemented
    target = out[0]
    _check_inplace_target(target, f"{_PLAIN_UFUNCS[ufunc]}(..., out=...)")
    target._version.before_write()
    ufunc(*raw, out=target._data)
    target._version.bump()
    return target


def _operator(name: str, ufunc: np.ufunc, form: str) -> Callable:
    """``Tensor.__mul__`` and friends: the no-recording fast path without NumPy's override
    dispatch; anything else goes through NDArrayOperatorsMixin (and so __array_ufunc__)."""
    slow = getattr(NDArrayOperatorsMixin, name)

    def method(self: Tensor, other: Any) -> Any:
        if form == "in_place" and self._scalar:
            return _rebind_scalar(self, name, other)
        if form == "in_place":
            result = _plain_ufunc_call(ufunc, (self, other), {"out": (self,)})
        elif form == "reflected":
            result = _plain_ufunc_call(ufunc, (other, self), {})
        else:
            result = _plain_ufunc_call(ufunc, (self, other), {})
        return slow(self, other) if result is NotImplemented else result
    method.__name__ = name
    return method


for _ufunc, _stem in ((np.add, "add"), (np.subtract, "sub"), (np.multiply, "mul"),
                      (np.true_divide, "truediv"), (np.power, "pow")):
    setattr(Tensor, f"__{_stem}__", _operator(f"__{_stem}__", _ufunc, "plain"))
    setattr(Tensor, f"__r{_stem}__", _operator(f"__r{_stem}__", _ufunc, "reflected"))
    setattr(Tensor, f"__i{_stem}__", _operator(f"__i{_stem}__", _ufunc, "in_place"))


def _rebind_scalar(value: Tensor, name: str, other: Any) -> Any:
    """``v op= other`` where NumPy's v is a NumPy scalar, which has no in-place operators:
    Python computes ``v op other`` and rebinds v (``v = x1 + 0.0; v *= y`` with x1 0-d
    makes a new array of y's shape)."""
    return getattr(value, "__" + name[3:])(other)


def _in_place_of_mixin(name: str) -> Callable:
    in_place = getattr(NDArrayOperatorsMixin, name)

    def method(self: Tensor, other: Any) -> Any:
        return _rebind_scalar(self, name, other) if self._scalar else in_place(self, other)
    method.__name__ = name
    return method


for _stem in ("matmul", "floordiv", "mod", "lshift", "rshift", "and", "xor", "or"):
    setattr(Tensor, f"__i{_stem}__", _in_place_of_mixin(f"__i{_stem}__"))
for _ufunc, _stem in ((np.less, "lt"), (np.less_equal, "le"), (np.greater, "gt"),
                      (np.greater_equal, "ge")):
    setattr(Tensor, f"__{_stem}__", _operator(f"__{_stem}__", _ufunc, "plain"))


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """A new Tensor holding a copy of ``data`` (like ``np.array``).

        >>> import kiln
        >>> kiln.tensor([1, 2]).dtype
        dtype('int64')
    """
    if isinstance(data, Tensor):
        data = data._data
    arr = np.array(data, dtype=dtype, copy=True)
    check_dtype(arr.dtype, "kiln.tensor")
    return Tensor(arr, requires_grad=requires_grad)


def _differentiating() -> bool:
    """Is a function given to kiln.grad / value_and_grad running on this thread?"""
    from .autograd.functional import _NESTING
    return _NESTING.depth > 0


def _user_location() -> str:
    """file:line of the innermost frame outside kiln and NumPy (where the user converted)."""
    import os
    import sys
    kiln_dir = os.path.dirname(os.path.abspath(__file__))
    numpy_dir = os.path.dirname(os.path.abspath(np.__file__))
    frame = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename.startswith((kiln_dir, numpy_dir))
                                 or frame.f_code.co_filename.startswith("<kiln")):
        frame = frame.f_back
    return "an unknown place" if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _numpy_caller() -> str | None:
    """The name of the outermost NumPy function on the stack under the user's frame."""
    import os
    import sys
    numpy_dir = os.path.dirname(os.path.abspath(np.__file__))
    frame, name = sys._getframe(1), None
    while frame is not None:
        if frame.f_code.co_filename.startswith(numpy_dir):
            name = frame.f_code.co_name
        elif name is not None:
            return name
        frame = frame.f_back
    return name


# Running ops on Tensors (apply, recording, in-place writes) lives in tensor_apply.py,
# which needs the Tensor class above; imported last so both modules load in one pass.
from .tensor_apply import OutShape, _check_inplace_target, apply  # noqa: E402
