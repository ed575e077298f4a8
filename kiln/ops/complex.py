"""Complex numbers: conjugate, real, imag, angle.

Complex arrays (complex64, complex128) flow through every op whose NumPy kernel accepts
them; promotion is NumPy's own (NEP 50: a Python complex is weak, ``float32 * 1j`` is
complex64). Backends without complex kernels call the NumPy kernel (an extern call), so
results are always NumPy's, special values (inf/nan components) included.

``real`` and ``imag`` are views in NumPy (``z.real[...] = 0`` writes into ``z``): they are
VIEW ops here, and a write through one puts the new part back next to the other part.
Derivatives: for a real input ``real`` is the identity and ``imag``/``angle`` are
constant; ``conjugate``, ``real`` and ``imag`` also differentiate complex inputs, in the
conjugate (Wirtinger) convention PyTorch uses (``Op.complex_grad``): the gradient of
z = x + iy is dL/dx + i dL/dy, so ``real``'s is g and ``imag``'s is i g.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .pointwise import conj, ufunc_normalizer
from .registry import Bound, Category, F, declare, is_complex_like, method_key, spell


def _zeros(g: Any, x: Any) -> tuple:
    return (F.zeros_like(x) if hasattr(x, "shape") else None,)


conjugate = declare("conjugate", Category.POINTWISE, np.conjugate, inputs=("x",),
                    vjp=lambda g, out, x: (conj(g),), complex_grad=True,
                    lowering={"scalar": "conjugate", "kinds": "fiubc"},  # real: itself
                    doc="numpy.conjugate (np.conj): the complex conjugate, elementwise")
conjugate.ufunc = np.conjugate
spell(np.conjugate, conjugate, ufunc_normalizer(conjugate, np.conjugate), "numpy.conjugate")
spell(method_key("conj"), conjugate, lambda x: Bound(conjugate, (x,), {}), "ndarray.conj")
spell(method_key("conjugate"), conjugate, lambda x: Bound(conjugate, (x,), {}),
      "ndarray.conjugate")


def _real_impl(x):
    return np.real(x)


def _imag_impl(x):
    return np.imag(x)


def _imag_vjp(g, out, x):
    return (F.multiply(g, 1j),) if is_complex_like(x) else _zeros(g, x)


real = declare("real", Category.VIEW, _real_impl, inputs=("x",),
               vjp=lambda g, out, x: (g,), complex_grad=True,
               doc="numpy.real / ndarray.real: the real part (a view of a complex array)")
imag = declare("imag", Category.VIEW, _imag_impl, inputs=("x",), vjp=_imag_vjp, complex_grad=True,
               doc="numpy.imag / ndarray.imag: the imaginary part (a view of a complex array)")
for _op, _name in ((real, "real"), (imag, "imag")):
    spell(getattr(np, _name), _op, (lambda op: lambda val: Bound(op, (val,), {}))(_op), f"numpy.{_name}")
    spell(method_key(_name), _op, (lambda op: lambda x: Bound(op, (x,), {}))(_op), f"ndarray.{_name}")


def put_back_real(base: Any, new: Any) -> Any:
    """``base`` after ``base.real[...] = new``: the new real part, the old imaginary one."""
    return F.add(new, F.multiply(F.imag(base), 1j))


def put_back_imag(base: Any, new: Any) -> Any:
    return F.add(F.real(base), F.multiply(new, 1j))


real.put_back = put_back_real   # base.real[...] = new (kiln/aot/functionalize.py)
imag.put_back = put_back_imag


def _angle_impl(x, deg=False):
    return np.angle(x, deg=deg)


angle = declare("angle", Category.POINTWISE, _angle_impl, inputs=("x",), params={"deg": False},
                vjp=lambda g, out, x, deg: _zeros(g, x),
                lowering={"decompose": lambda x, deg: _angle_decomposition(x, deg)},
                doc="numpy.angle: the argument of a complex number (radians, or degrees)")


def _angle_decomposition(x: Any, deg: bool) -> Any:
    a = F.arctan2(F.imag(x), F.real(x))
    return F.multiply(a, 180.0 / np.pi) if deg else a


spell(np.angle, angle, lambda z, deg=False: Bound(angle, (z,), {"deg": bool(deg)}), "numpy.angle")
