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


def _as_leaf(value: Any, position: str) -> Any:
    from ..tensor import Tensor, _user_location, tensor
    data = value.detach().numpy() if isinstance(value, Tensor) else value
    arr = np.asarray(data)
    if arr.dtype.kind not in "fc":
        raise KilnError(f"kiln.grad at {_user_location()}: argument {position} has dtype "
                        f"{arr.dtype}; gradients are taken with respect to floating-point or "
                        f"complex arrays (pass x.astype(np.float64)), or dicts, lists and "
                        f"tuples of them")
    return tensor(arr, requires_grad=True)


def _defined_at(fn: Callable) -> str:
    """``name (file:line)`` of the function kiln.grad differentiates (through kiln.compile
    and functools.wraps wrappers)."""
    import inspect
    inner = inspect.unwrap(fn)
    code = getattr(inner, "__code__", None)
    name = getattr(inner, "__qualname__", type(inner).__name__)
    return name if code is None else f"{name} ({code.co_filename}:{code.co_firstlineno})"


def _not_a_float_loss(fn: Callable, dtype: np.dtype) -> KilnError:
    return KilnError(f"kiln.grad: the function {_defined_at(fn)} returns a value of dtype {dtype}; "
                     f"gradients are taken of a floating-point loss, and an integer or bool "
                     f"one (a count: np.sum(x > 0); a cast: x.astype(int)) does not change "
                     f"smoothly with the inputs: return a float expression of them")


def _map_tree(fn: Callable[[Any, str], Any], value: Any, path: str) -> Any:
    """``fn(leaf, path)`` on every leaf of nested dicts, lists and tuples (JAX's pytrees:
    a dict of parameters), the containers rebuilt around the results. A list or tuple
    holding no array (``[0.5, 1.0]``, nested or not) is one array-like leaf, as before."""
    if isinstance(value, dict):
        return type(value)((k, _map_tree(fn, v, f"{path}[{k!r}]")) for k, v in value.items())
    if _holds_arrays(value):
        items = [_map_tree(fn, v, f"{path}[{i}]") for i, v in enumerate(value)]
        if hasattr(value, "_fields"):     # a namedtuple
            return type(value)(*items)
        return type(value)(items)
    return fn(value, path)


def _holds_arrays(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and any(
        isinstance(v, dict) or hasattr(v, "__array__") and np.ndim(v) > 0 or _holds_arrays(v)
        for v in value)


def _tree_leaves(value: Any) -> list:
    found: list = []
    _map_tree(lambda leaf, _: found.append(leaf), value, "")
    return found


def value_and_grad(fn: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """``f(*args) -> (value, grads)``; grads are NumPy arrays (a tuple if argnums is a tuple),
    or, for an argument that is a dict, list or tuple of arrays, the same structure of them.
    ``has_aux``: ``fn`` returns ``(loss, aux)``; the call returns ``((loss, aux), grads)``,
    aux's arrays as NumPy's (JAX's convention), differentiating the loss alone."""
    from ..tensor import Tensor

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        named = argnums if isinstance(argnums, tuple) else (argnums,)
        args = list(args)
        for n in named:
            if not -len(args) <= n < len(args):
                raise KilnError(f"kiln.grad: argnums={argnums} but the function got {len(args)} "
                                f"positional arguments")
        # -1 is the last argument; one named twice ((0, 0), (1, -1)) is one leaf, whose
        # gradient is given for each name (each name made a leaf of the last one: zeros)
        named = tuple(n % len(args) for n in named)
        nums = tuple(dict.fromkeys(named))
        if _NESTING.depth and any(isinstance(t, Tensor) and t.requires_grad
                                  for n in nums for t in _tree_leaves(args[n])):
            raise KilnError("kiln.grad inside a function that kiln.grad is differentiating, on "
                            "a value that function depends on: higher-order gradients are not "
                            "supported (the inner gradient would be a constant to the outer one)")
        leaves = {}
        for n in nums:
            leaves[n] = _map_tree(_as_leaf, args[n], str(n))
            args[n] = leaves[n]
        _NESTING.depth += 1
        try:
            with enable_grad():
                out = fn(*args, **kwargs)
        finally:
            _NESTING.depth -= 1
        if has_aux:
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise KilnError(f"kiln.grad(has_aux=True): the function must return a pair "
                                f"(loss, aux), got {type(out).__name__}")
            out, aux = out
            aux = _map_tree(_as_numpy, aux, "")
        elif isinstance(out, (tuple, list)):
            raise KilnError(f"kiln.grad: the function must return a scalar, got a "
                            f"{type(out).__name__} of {len(out)}; to return (loss, aux), pass "
                            f"has_aux=True")
        dtype = out.dtype if isinstance(out, Tensor) else np.asarray(out).dtype
        if dtype.kind == "c":
            raise KilnError(f"kiln.grad: the function returns a {dtype} value; gradients are "
                            f"taken of a real scalar loss (as JAX's grad and PyTorch's "
                            f"backward() do): return np.real(...) or np.abs(...) of it")
        if dtype.kind in "biu":
            raise _not_a_float_loss(fn, dtype)
        if not isinstance(out, Tensor):
            out_arr = np.asarray(out)
            if out_arr.dtype.kind != "f" or out_arr.size != 1:
                raise KilnError("kiln.grad: the function must return a scalar float value that "
                                f"depends on its inputs, got {type(out).__name__}")
            grads = tuple(_map_tree(lambda t, _: np.zeros_like(t.numpy()), leaves[n], "")
                          for n in named)
            value = out
        else:
            if out.size != 1:
                raise KilnError(f"kiln.grad: the function must return a scalar, got shape {out.shape}; "
                                f"reduce it (e.g. .sum()) or use Tensor.backward(gradient=...)")
            if out.requires_grad:
                out.backward()
            grads = tuple(_map_tree(_grad_of, leaves[n], "") for n in named)
            value = out.numpy()[()] if out.ndim == 0 else out.numpy()
        grads = grads if isinstance(argnums, tuple) else grads[0]
        return ((value, aux) if has_aux else value), grads

    # What capture reads to differentiate the call inside a compiled function instead.
    wrapper.__kiln_grad__ = (fn, argnums, True, has_aux)
    return wrapper


def _as_numpy(value: Any, _: str) -> Any:
    """An aux leaf as the uncompiled function gives it: a Tensor's data (0-d: a NumPy
    scalar, as a reduction of an array is)."""
    from ..tensor import Tensor
    if isinstance(value, Tensor):
        return value.numpy()[()] if value.ndim == 0 else value.numpy()
    return value


def _grad_of(leaf: Any, _: str) -> np.ndarray:
    return leaf.grad.numpy() if leaf.grad is not None else np.zeros_like(leaf.numpy())


def grad(fn: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """``f(*args) -> grads`` of a scalar-valued function; see value_and_grad. With
    ``has_aux`` (``fn`` returns ``(loss, aux)``): ``(grads, aux)``."""
    vg = value_and_grad(fn, argnums, has_aux)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        value, grads = vg(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    wrapper.__kiln_grad__ = (fn, argnums, False, has_aux)
    return wrapper
