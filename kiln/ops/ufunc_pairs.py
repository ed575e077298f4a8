"""NumPy's ufuncs with two outputs: np.divmod, np.modf and np.frexp.

Each output is its own op (kiln's ops have one output); NumPy's loops compute both parts
with the same formulas, so the pair matches the one call.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .meta import dtype_token, reject, reject_where
from .registry import Category, Composite, F, declare, spell_composite


_NO_OUT = object()     # (out= not given: an explicit None is NumPy's TypeError)


def _pair_normalizer(name: str, nin: int, fn: Callable, uses: tuple) -> None:
    ufunc = getattr(np, name)

    def normalize(*args: Any, out: Any = _NO_OUT, **kwargs: Any) -> Composite:
        if out is None:      # (NumPy's error: a ufunc with two outputs takes a tuple)
            raise TypeError("'out' must be a tuple of arrays")
        out = None if out is _NO_OUT else out
        if len(args) != nin:
            raise TypeError(f"{name}() takes from {nin} to {nin + 2} positional arguments "
                            f"but {len(args)} were given")
        for key, value in kwargs.items():
            reject_where(value, f"numpy.{name}") if key == "where" else \
                reject(f"numpy.{name}", key, value, "call it without the argument")
        if out is not None and any(o is not None for o in (out if isinstance(out, tuple) else (out,))):
            reject(f"numpy.{name}", "out", "<arrays>", "assign the results instead")
        # (divmod's nodes take its operands as they are: they warn as its one call)
        return Composite(fn, tuple(args), ufunc=name if name == "divmod" else None)
    spell_composite(ufunc, uses, normalize, f"numpy.{name}")


def _modf(x):
    # frac = x - trunc(x) is exact; modf keeps x's sign (-2.0 -> -0.0) and gives ±0 at ±inf
    loop = np.modf.resolve_dtypes((dtype_token(x), None, None))[0]
    if np.dtype(dtype_token(x)) != loop:
        x = F.astype(x, dtype=loop)
    # (its subtract of an infinity's 0 instead: inf - inf warned "invalid value
    # encountered in subtract", which np.modf(inf) never says)
    finite = F.where(F.isinf(x), 0.0, x)
    frac = F.subtract(finite, F.trunc(finite))
    return F.copysign(frac, x), F.trunc(x)


def _frexp_part(i: int) -> Callable:
    return lambda x: np.frexp(x)[i]


frexp_mantissa = declare(
    "frexp_mantissa", Category.EXTERN, _frexp_part(0), inputs=("x",),
    # x = m * 2**e with e constant near x: dm/dx = 2**-e
    vjp=lambda g, out, x: (F.ldexp(g, F.negative(F.frexp_exponent(x))),),
    doc="numpy.frexp(x)[0]: the mantissa, in [0.5, 1) in magnitude")
frexp_exponent = declare("frexp_exponent", Category.EXTERN, _frexp_part(1), inputs=("x",),
                         doc="numpy.frexp(x)[1]: the exponent (int32)")

_pair_normalizer("divmod", 2, lambda x, y: (F.floor_divide(x, y), F.remainder(x, y)),
                 ("floor_divide", "remainder"))
_pair_normalizer("modf", 1, _modf, ("trunc", "subtract", "copysign"))
_pair_normalizer("frexp", 1, lambda x: (frexp_mantissa(x), frexp_exponent(x)),
                 ("frexp_mantissa", "frexp_exponent"))
