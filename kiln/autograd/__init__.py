"""The eager autograd engine: backward nodes, version counters, the tape walker."""
from .engine import run_backward
from .functional import grad, value_and_grad
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import gradcheck, numerical_grad

__all__ = ["run_backward", "grad", "value_and_grad", "enable_grad", "is_grad_enabled", "no_grad",
           "set_grad_enabled", "gradcheck", "numerical_grad"]
