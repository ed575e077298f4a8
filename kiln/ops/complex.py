"""Complex numbers: conjugate, real, imag, angle, real_if_close.

Complex arrays (complex64, complex128) flow through every op whose NumPy kernel accepts
them; promotion is NumPy's own (NEP 50: a Python complex is weak, ``float32 * 1j`` is
complex64). Backends without complex kernels call the NumPy kernel (an extern call), so
results are always NumPy's, special values (inf/nan components) included.

``real`` and ``imag`` are views in NumPy (``z.real[...] = 0`` writes into ``z``): they are
VIEW ops here, and a write through one puts the new part back next to the other part.
``np.real_if_close`` returns a complex array itself, or its real part when every
imaginary part is tiny: which one depends on the values, so it speculates
(kiln/ops/speculation.py) with an op that only checks, and is the array or its ``real``.
Derivatives: for a real input ``real`` is the identity and ``imag``/``angle`` are
constant; ``conjugate``, ``real``, ``imag`` and ``angle`` also differentiate complex inputs, in the
conjugate (Wirtinger) convention PyTorch uses (``Op.complex_grad``): the gradient of
z = x + iy is dL/dx + i dL/dy, so ``real``'s is g and ``imag``'s is i g.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .meta import TensorMeta, reject
from .pointwise import array_not_scalar, conj, itself, ufunc_normalizer
from .registry import (Bound, Category, Composite, F, N, declare, is_complex_like, method_key,
                       spell, spell_composite)
from .speculation import checked, speculate


def _zeros(g: Any, x: Any) -> tuple:
    return (F.zeros_like(x) if hasattr(x, "shape") else None,)


conjugate = declare("conjugate", Category.POINTWISE, np.conjugate, inputs=("x",),
                    vjp=lambda g, out, x: (conj(g),), complex_grad=True,
                    lowering={"scalar": "conjugate", "kinds": "fiubc"},  # real: itself
                    doc="numpy.conjugate (np.conj): the complex conjugate, elementwise")
conjugate.ufunc = np.conjugate
spell(np.conjugate, conjugate, ufunc_normalizer(conjugate, np.conjugate), "numpy.conjugate")


def _itself(x: Any) -> Any:
    return x


def _method_conjugate_normalize(x: Any) -> Any:
    # ndarray.conj() of a real, integer or bool array is that array itself, not a copy
    # (np.conjugate makes one): a write through the result writes into x
    if is_complex_like(x):
        return Bound(conjugate, (x,), {})
    return Composite(_itself, (x,))


spell(method_key("conj"), conjugate, _method_conjugate_normalize, "ndarray.conj")
spell(method_key("conjugate"), conjugate, _method_conjugate_normalize, "ndarray.conjugate")


def _real_impl(x):
    return np.real(x)


def _imag_impl(x):
    return np.imag(x)


def _imag_vjp(g, out, x):
    return (F.multiply(g, 1j),) if is_complex_like(x) else _zeros(g, x)


# lowering "part": read as the element's part where nothing needs the view's memory
# (kiln/lowering/views.py ``view_part``); a view returned stays NumPy's call.
real = declare("real", Category.VIEW, _real_impl, inputs=("x",),
               vjp=lambda g, out, x: (g,), complex_grad=True, lowering={"part": "real"},
               doc="numpy.real / ndarray.real: the real part (a view of a complex array)")
imag = declare("imag", Category.VIEW, _imag_impl, inputs=("x",), vjp=_imag_vjp, complex_grad=True,
               lowering={"part": "imag"},
               doc="numpy.imag / ndarray.imag: the imaginary part (a view of a complex array)")


def _part_normalizer(op: Any) -> Any:
    def normalize(x: Any) -> Any:
        if op is real and array_not_scalar(x) and np.dtype(x.dtype).kind != "c":
            # a real array's .real is the array itself in NumPy (``x.real is x``); as a view
            # op its value lost x's layout in a kernel reading it (methods.py seed 3274)
            return Composite(itself, (x,))
        return Bound(op, (x,), {})
    return normalize


for _op, _name in ((real, "real"), (imag, "imag")):
    spell(getattr(np, _name), _op, _part_normalizer(_op), f"numpy.{_name}")
    spell(method_key(_name), _op, _part_normalizer(_op), f"ndarray.{_name}")


def _complex_parts_impl(re, im):
    re, im = np.asarray(re), np.asarray(im)
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), _parts_dtype(re.dtype, im.dtype))
    out.real = re
    out.imag = im
    return out


def _parts_dtype(re: Any, im: Any) -> np.dtype:
    return np.result_type(re, im, np.complex64)


def _complex_parts_meta(re, im):
    return TensorMeta(np.broadcast_shapes(tuple(re.shape), tuple(im.shape)),
                      _parts_dtype(re.dtype, im.dtype))


# The complex number re + i im, part by part: what a write through ``z.real``/``z.imag``
# leaves in z. Not ``re + im * 1j``: an infinite part times 1j makes the other part NaN
# (inf * 0), where NumPy's write keeps it.
complex_parts = declare(
    "complex_parts", Category.POINTWISE, _complex_parts_impl, inputs=("re", "im"),
    meta=_complex_parts_meta, vjp=lambda g, out, re, im: (F.real(g), F.imag(g)), complex_grad=True,
    lowering={"scalar": "complex_parts", "kinds": "c", "input_dtypes": (None, None)},
    doc="re + i im built part by part (the value of z after z.real[...] = v or z.imag[...] = v)")


def put_back_real(base: Any, new: Any) -> Any:
    """``base`` after ``base.real[...] = new``: the new real part, the old imaginary one
    (``new`` itself for a real ``base``, whose ``.real`` is all of it), in base's memory, so
    in its layout (methods.py seed 345: ``y.real[...] = s; return y > s`` of a transposed
    ``y`` gave a C-ordered result where NumPy's follows y's Fortran order)."""
    value = F.complex_parts(new, F.imag(base)) if is_complex_like(base) else new
    return F.relayout(value, base, rule="K")


def put_back_imag(base: Any, new: Any) -> Any:
    return F.relayout(F.complex_parts(F.real(base), new), base, rule="K")


real.put_back = put_back_real   # base.real[...] = new (kiln/aot/functionalize.py)
imag.put_back = put_back_imag


def _angle_impl(x, deg=False):
    return np.angle(x, deg=deg)


def _angle_vjp(g, out, x, deg):
    # angle = arctan2(y, x): d/dx = -y/|z|^2, d/dy = x/|z|^2, so the (conjugate
    # convention) gradient is g * i z / |z|^2; 0 at z = 0, as arctan2's at the origin
    if not is_complex_like(x):
        return _zeros(g, x)
    r2 = F.add(F.square(F.real(x)), F.square(F.imag(x)))
    scale = F.true_divide(F.multiply(g, 180.0 / np.pi) if deg else g, F.where(F.equal(r2, 0), 1.0, r2))
    return (F.multiply(F.multiply(x, 1j), F.where(F.equal(r2, 0), 0.0, scale)),)


angle = declare("angle", Category.POINTWISE, _angle_impl, inputs=("x",), params={"deg": False},
                vjp=_angle_vjp, complex_grad=True,
                lowering={"decompose": lambda x, deg: _angle_decomposition(x, deg)},
                doc="numpy.angle: the argument of a complex number (radians, or degrees)")


def _angle_decomposition(x: Any, deg: bool) -> Any:
    # NumPy's own spelling: arctan2(0, x) of a real x, the Python int 0 a weak scalar (so a
    # bool x gives float64, an int8 one float16), arctan2(z.imag, z.real) of a complex z
    complex_x = np.dtype(x.dtype).kind == "c"
    a = F.arctan2(F.imag(x), F.real(x)) if complex_x else F.arctan2(0, x)
    return F.multiply(a, 180.0 / np.pi) if deg else a


spell(np.angle, angle, lambda z, deg=False: Bound(angle, (z,), {"deg": bool(deg)}), "numpy.angle")


# ---- real_if_close ------------------------------------------------------------------------------

def _real_if_close_check(a, tol=100, expect=None, site=""):
    checked(np.real_if_close(a, tol), expect, site)
    return np.zeros(1, bool)   # (not 0-d: capture would run it on fake arrays for its type)


real_if_close_check = declare(
    "real_if_close_check", Category.EXTERN, _real_if_close_check, inputs=("a",),
    params={"tol": 100, "expect": None, "site": ""}, may_raise=True,
    meta=lambda a, tol=100, expect=None, site="": TensorMeta((1,), np.dtype(bool)),
    doc="checks that numpy.real_if_close of a complex array has the dtype expected (its "
        "real part's, or its own); never removed as dead code")


def _real_if_close(a, tol, expect, site):
    if expect is None:   # the values are here (NumPy arrays, Tensors): NumPy decides
        close = np.real_if_close(np.asarray(a), tol).dtype.kind != "c"
    else:
        F.real_if_close_check(a, tol=tol, expect=expect, site=site)
        close = np.dtype(expect).kind != "c"
    return N.real(a) if close else a   # a view of a, or a itself, as NumPy's


def _real_if_close_normalize(a, tol=100):
    if not hasattr(a, "dtype"):
        a = np.asarray(a)
    if np.dtype(a.dtype).kind != "c":
        return Composite(N.asarray, (a,))   # a scalar: a 0-d array (NumPy's asanyarray)
    if not isinstance(tol, (int, float)) or isinstance(tol, bool):
        reject("numpy.real_if_close", "tol", tol, "pass tol as a Python number")
    real_dtype = np.empty(0, a.dtype).real.dtype
    return Composite(_real_if_close, (a,), {"tol": tol, **speculate(
        "numpy.real_if_close", real_dtype, a, lambda v: np.real_if_close(v, tol))})


spell_composite(np.real_if_close, ("real_if_close_check", "real"), _real_if_close_normalize,
                "numpy.real_if_close")
