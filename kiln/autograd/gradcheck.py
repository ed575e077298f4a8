"""Check analytic gradients against central finite differences (float64).

    >>> import numpy as np, kiln
    >>> kiln.autograd.gradcheck(np.tanh, (np.array([0.1, -0.3]),))
    True
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..errors import KilnError


def numerical_grad(fn: Callable, args: Sequence[np.ndarray], index: int, cotangent: np.ndarray,
                   eps: float = 1e-6) -> np.ndarray:
    """d <cotangent, fn(*args)> / d args[index] by central differences."""
    x = np.array(args[index], dtype=np.float64, copy=True, order="C")
    grad = np.zeros_like(x)
    flat = x.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        plus = np.sum(np.asarray(fn(*_with(args, index, x)), dtype=np.float64) * cotangent)
        flat[i] = old - eps
        minus = np.sum(np.asarray(fn(*_with(args, index, x)), dtype=np.float64) * cotangent)
        flat[i] = old
        grad.reshape(-1)[i] = (plus - minus) / (2 * eps)
    return grad


def _with(args: Sequence[Any], index: int, value: Any) -> list:
    out = list(args)
    out[index] = value
    return out


def gradcheck(fn: Callable, args: Sequence[Any], *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-4, raise_exception: bool = True, seed: int = 0) -> bool:
    """Compare kiln's gradients of ``fn`` w.r.t. every float argument with finite differences."""
    from ..tensor import Tensor, tensor
    args = [np.asarray(a, dtype=np.float64) if np.asarray(a).dtype.kind == "f" else a for a in args]
    leaves = [tensor(a, requires_grad=True) if np.asarray(a).dtype.kind == "f" else a for a in args]
    out = fn(*leaves)
    out_arr = out.numpy() if isinstance(out, Tensor) else np.asarray(out)
    rng = np.random.default_rng(seed)
    cot = rng.standard_normal(out_arr.shape)
    if isinstance(out, Tensor) and out.requires_grad:
        out.backward(cot)
    for i, (a, leaf) in enumerate(zip(args, leaves)):
        if not isinstance(leaf, Tensor):
            continue
        analytic = leaf.grad.numpy() if leaf.grad is not None else np.zeros_like(a)
        numeric = numerical_grad(lambda *xs: _plain(fn(*xs)), args, i, cot, eps)
        if not np.allclose(analytic, numeric, atol=atol, rtol=rtol):
            if raise_exception:
                err = np.max(np.abs(analytic - numeric))
                raise KilnError(f"gradcheck: gradient of argument {i} differs from finite "
                                f"differences by up to {err:.3g}\nanalytic:\n{analytic}\n"
                                f"numeric:\n{numeric}")
            return False
    return True


def _plain(value: Any) -> Any:
    from ..tensor import Tensor
    return value.numpy() if isinstance(value, Tensor) else value
