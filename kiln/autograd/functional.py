"""kiln.grad and kiln.value_and_grad: gradients of a function, JAX style.

    >>> import numpy as np, kiln
    >>> df = kiln.grad(lambda x: np.sum(x ** 2))
    >>> df(np.array([1.0, 2.0]))
    array([2., 4.])
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable

import numpy as np

from ..errors import KilnError
from .grad_mode import enable_grad


class _Nesting(threading.local):
    depth = 0   # kiln.grad calls whose function is running on this thread


_NESTING = _Nesting()


def _as_leaf(value: Any, position: int) -> Any:
    from ..tensor import Tensor, tensor
    data = value.detach().numpy() if isinstance(value, Tensor) else value
    arr = np.asarray(data)
    if arr.dtype.kind not in "fc":
        raise KilnError(f"kiln.grad: argument {position} has dtype {arr.dtype}; gradients are taken "
                        f"with respect to floating-point or complex arrays (pass "
                        f"x.astype(np.float64))")
    return tensor(arr, requires_grad=True)


def value_and_grad(fn: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """``f(*args) -> (value, grads)``; grads are NumPy arrays (a tuple if argnums is a tuple)."""
    from ..tensor import Tensor

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        nums = argnums if isinstance(argnums, tuple) else (argnums,)
        args = list(args)
        for n in nums:
            if n >= len(args):
                raise KilnError(f"kiln.grad: argnums={argnums} but the function got {len(args)} "
                                f"positional arguments")
        if _NESTING.depth and any(isinstance(args[n], Tensor) and args[n].requires_grad
                                  for n in nums):
            raise KilnError("kiln.grad inside a function that kiln.grad is differentiating, on "
                            "a value that function depends on: higher-order gradients are not "
                            "supported (the inner gradient would be a constant to the outer one)")
        leaves = {}
        for n in nums:
            leaves[n] = _as_leaf(args[n], n)
            args[n] = leaves[n]
        _NESTING.depth += 1
        try:
            with enable_grad():
                out = fn(*args, **kwargs)
        finally:
            _NESTING.depth -= 1
        if not isinstance(out, Tensor):
            out_arr = np.asarray(out)
            if out_arr.dtype.kind != "f" or out_arr.size != 1:
                raise KilnError("kiln.grad: the function must return a scalar float value that "
                                f"depends on its inputs, got {type(out).__name__}")
            grads = tuple(np.zeros_like(leaves[n].numpy()) for n in nums)
            value = out
        else:
            if out.size != 1:
                raise KilnError(f"kiln.grad: the function must return a scalar, got shape {out.shape}; "
                                f"reduce it (e.g. .sum()) or use Tensor.backward(gradient=...)")
            if out.requires_grad:
                out.backward()
            grads = tuple(leaves[n].grad.numpy() if leaves[n].grad is not None
                          else np.zeros_like(leaves[n].numpy()) for n in nums)
            value = out.numpy()[()] if out.ndim == 0 else out.numpy()
        return value, (grads if isinstance(argnums, tuple) else grads[0])

    # What capture reads to differentiate the call inside a compiled function instead.
    wrapper.__kiln_grad__ = (fn, argnums, True)
    return wrapper


def grad(fn: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """``f(*args) -> grads`` of a scalar-valued function; see value_and_grad."""
    vg = value_and_grad(fn, argnums)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return vg(*args, **kwargs)[1]

    wrapper.__kiln_grad__ = (fn, argnums, False)
    return wrapper
