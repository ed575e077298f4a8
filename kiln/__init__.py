"""kiln: a compiler for NumPy programs.

    import numpy as np, kiln

    x = kiln.tensor([0.5, 1.0], requires_grad=True)
    np.sin(x).sum().backward()
    x.grad                      # tensor([0.8776, 0.5403])
"""
from . import autograd, ops
from .autograd import enable_grad, grad, is_grad_enabled, no_grad, value_and_grad
from .config import config
from .errors import (AutogradError, KilnError, NoDerivative, NoOpError, Unsupported,
                     UnsupportedArgument, UnsupportedDtype)
from .tensor import Tensor, tensor
from .api import compile, reset
from .explain import explain
from .markers import graph_break, disable
from .logs import set_logs

__version__ = "0.1.0"

__all__ = [
    "Tensor", "tensor", "no_grad", "enable_grad", "is_grad_enabled", "grad", "value_and_grad",
    "config", "autograd", "ops",
    "KilnError", "Unsupported", "UnsupportedDtype", "UnsupportedArgument", "NoOpError",
    "NoDerivative", "AutogradError",
    "compile", "explain", "reset", "graph_break", "disable", "set_logs",
]
