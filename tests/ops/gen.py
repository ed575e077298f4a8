"""Input generation and comparison for the op-table test.

An op-table row draws a :class:`Case`: its positional arguments (generated arrays, each an
:class:`Arg`, or plain Python values such as scalars and index tuples) and its keyword
parameters. Arrays come from a value *domain* (where the op is defined and, for gradient
checks, differentiable) laid out contiguously, transposed, strided, reversed or broadcast
(zero strides), so kernels meet the layouts NumPy users hand them.

Shapes come from hypothesis; values from a NumPy generator seeded by hypothesis, which is
much faster than drawing every element and still reproducible.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

F32, F64, I64, BOOL = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64), np.dtype(bool)
FLOATS = (F32, F64)
NUMERIC = FLOATS + (I64,)
ALL = NUMERIC + (BOOL,)
INTEGRAL = (I64, BOOL)
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
COMPLEX = (C64, C128)


# -- value domains ------------------------------------------------------------------------

@dataclass(frozen=True)
class Domain:
    """Where values are drawn: floats in [lo, hi], integers in [ilo, ihi].

    ``nonzero``: magnitudes in [lo, hi] with a random sign (abs, sign, divisors).
    ``off_int``: floats at least 0.1 away from integers and half-integers (floor, rint, ...).
    ``specials``: forward checks may plant nan, ±inf and ±0.0 (never in gradient checks).
    """
    lo: float = -3.0
    hi: float = 3.0
    ilo: int = -5
    ihi: int = 5
    nonzero: bool = False
    off_int: bool = False
    specials: bool = True

    def sample(self, rng: np.random.Generator, shape: tuple, dtype: np.dtype,
               specials: bool) -> np.ndarray:
        return np.asarray(self._sample(rng, shape, dtype, specials))

    def _sample(self, rng: np.random.Generator, shape: tuple, dtype: np.dtype,
                specials: bool) -> np.ndarray:
        if dtype == BOOL:
            return rng.random(shape) < 0.5
        if dtype.kind == "c":  # real and imaginary parts from the domain, specials in either
            part = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
            re, im = (self._sample(rng, shape, part, specials) for _ in range(2))
            out = np.empty(shape, dtype)
            out.real, out.imag = re, im
            return out
        if dtype.kind in "iu":
            values = rng.integers(self.ilo, self.ihi + 1, size=shape)
            if self.nonzero:
                values = np.where(values == 0, self.ihi if self.ihi != 0 else 1, values)
            return values.astype(dtype)
        if self.off_int:
            frac = rng.choice(np.array([0.15, 0.25, 0.35, 0.65, 0.75, 0.85]), size=shape)
            values = rng.integers(int(np.floor(self.lo)), int(np.ceil(self.hi)), size=shape) + frac
            values = values + rng.uniform(-0.04, 0.04, size=shape)
        elif self.nonzero:
            values = rng.uniform(self.lo, self.hi, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        else:
            values = rng.uniform(self.lo, self.hi, size=shape)
        values = np.asarray(values, dtype=np.float64)
        if specials and self.specials and values.size and rng.random() < 0.5:
            flat = values.reshape(-1)
            picks = rng.integers(0, flat.size, size=max(1, flat.size // 4))
            flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0]), size=picks.size)
        return values.astype(dtype)


REAL = Domain()
POS = Domain(0.2, 3.0, 1, 5)
UNIT = Domain(-0.9, 0.9, -1, 1)          # arcsin, arccos, arctanh: the open interval (-1, 1)
GT1 = Domain(1.2, 3.0, 1, 5)             # arccosh
NONZERO = Domain(0.3, 3.0, -5, 5, nonzero=True)
OFF_INT = Domain(-3.0, 3.0, off_int=True)
SMALL = Domain(-1.5, 1.5, -3, 3)         # exp, sinh, power bases: moderate magnitudes
SHIFT = Domain(0.0, 5.0, 0, 6)           # shift counts: non-negative, below the bit width
EXPONENT = Domain(-2.0, 2.0, 0, 3)       # integer powers must be non-negative


# -- layouts ------------------------------------------------------------------------------

LAYOUTS = ("C", "T", "step", "rev", "bcast")


@dataclass
class Arg:
    """A generated array: ``view(base)``, where ``base`` is contiguous and owned by the Arg.

    ``fresh()`` rebuilds the array from a copy of the base, with the same layout, so each
    code path under test gets its own buffer (mutating ops cannot leak between paths).
    """
    base: np.ndarray
    view: Callable[[np.ndarray], np.ndarray]
    layout: str
    grad: bool = True   # a float Arg is differentiated unless this is False (index arrays)

    def fresh(self) -> np.ndarray:
        return self.view(self.base.copy())

    @property
    def value(self) -> np.ndarray:
        return self.view(self.base)

    def __repr__(self) -> str:
        v = self.value
        return f"Arg({self.layout}, {v.dtype}{list(v.shape)}: {np.array2string(v, threshold=20)})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # hypothesis' reports
        printer.text(repr(self))


def make_arg(rng: np.random.Generator, shape: tuple, dtype: np.dtype, domain: Domain,
             layout: str, specials: bool) -> Arg:
    shape = tuple(shape)
    nd = len(shape)
    if layout == "T" and nd >= 2:
        base = domain.sample(rng, shape[::-1], dtype, specials)
        return Arg(base, lambda b: b.T, "T")
    if layout == "step" and nd >= 1:
        base = domain.sample(rng, tuple(2 * d for d in shape), dtype, specials)
        index = (slice(None, None, 2),) * nd
        return Arg(base, lambda b: b[index], "step")
    if layout == "rev" and nd >= 1:
        base = domain.sample(rng, shape, dtype, specials)
        return Arg(base, lambda b: b[::-1], "rev")
    if layout == "bcast" and nd >= 1 and shape[-1] > 1:
        base = domain.sample(rng, shape[:-1] + (1,), dtype, specials)
        return Arg(base, lambda b: np.broadcast_to(b, shape), "bcast")
    base = domain.sample(rng, shape, dtype, specials)
    return Arg(base, lambda b: b, "C")


def index_arg(values: np.ndarray, layout: str = "C") -> Arg:
    """An integer or boolean array used as an index: never differentiated."""
    values = np.asarray(values)
    if layout == "rev" and values.ndim >= 1:
        return Arg(values[::-1].copy(), lambda b: b[::-1], "rev", grad=False)
    return Arg(values, lambda b: b, "C", grad=False)


@dataclass
class Case:
    """Positional arguments (Args and plain values) and keyword parameters of one call.

    ``traced`` (for error cases): False when NumPy's error comes from normalizing the
    arguments (a bad axis), which a direct call of the op with canonical parameters skips.
    """
    args: list
    params: dict = field(default_factory=dict)
    traced: bool = True

    @property
    def arrays(self) -> list[Arg]:
        return [a for a in self.args if isinstance(a, Arg)]

    def fill(self, arrays: Sequence[Any]) -> list:
        """The positional arguments with each Arg replaced by the next of ``arrays``."""
        it = iter(arrays)
        return [next(it) if isinstance(a, Arg) else a for a in self.args]


class Ctx:
    """What a case builder gets: hypothesis' draw, the dtype under test, and the purpose.

    ``grad`` cases are float64, free of special values and kept small; forward cases may
    plant nan/inf and use every layout.
    """

    def __init__(self, draw: Callable, dtype: np.dtype, grad: bool, mutating: bool = False) -> None:
        self.draw = draw
        self.dtype = dtype
        self.grad = grad
        self.mutating = mutating
        self.rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1), label="seed"))

    @property
    def max_side(self) -> int:
        return 3 if self.grad else 4

    def sides(self, min_side: int) -> int:
        """The smallest side to draw: size-0 dimensions in about one case in six, so that
        they are covered without crowding out the cases with data."""
        return min_side if self.rng.random() < 0.15 else max(min_side, 1)

    def shape(self, min_dims: int = 0, max_dims: int = 3, min_side: int = 0) -> tuple:
        return self.draw(array_shapes(min_dims=min_dims, max_dims=max_dims,
                                      min_side=self.sides(min_side), max_side=self.max_side),
                         label="shape")

    def broadcast_shapes(self, n: int, min_dims: int = 0, max_dims: int = 3) -> list[tuple]:
        shapes = self.draw(mutually_broadcastable_shapes(
            num_shapes=n, min_dims=min_dims, max_dims=max_dims, min_side=self.sides(0),
            max_side=self.max_side), label="shapes")
        return list(shapes.input_shapes)

    def layout(self, ndim: int, writable: bool = False) -> str:
        """A layout; zero-stride (read-only) views only where nothing writes into them."""
        if self.grad or not ndim:
            return "C"
        allowed = [l for l in LAYOUTS if not (l == "bcast" and (self.mutating or writable))]
        return self.draw(st.sampled_from(allowed), label="layout")

    def arg(self, shape: tuple, domain: Domain = REAL, dtype: np.dtype | None = None,
            layout: str | None = None, writable: bool = False) -> Arg:
        """An array argument; ``writable`` when the case builder adjusts its values."""
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        layout = self.layout(len(shape), writable) if layout is None else layout
        return make_arg(self.rng, shape, dtype, domain, layout, specials=not self.grad)

    def choice(self, options: Sequence[Any], label: str = "choice") -> Any:
        return self.draw(st.sampled_from(list(options)), label=label)

    def boolean(self, label: str = "flag") -> bool:
        return self.draw(st.booleans(), label=label)

    def integer(self, lo: int, hi: int, label: str = "int") -> int:
        return self.draw(st.integers(lo, hi), label=label)


# -- comparison ---------------------------------------------------------------------------

def tolerances(dtype: np.dtype) -> tuple[float, float]:
    """(rtol, atol): float32 1e-5 relative plus slack for values near zero; float64 1e-12."""
    if dtype in (F32, C64):
        return 1e-5, 1e-6
    return 1e-12, 1e-13


def as_array(value: Any) -> np.ndarray:
    from kiln import Tensor
    if isinstance(value, Tensor):
        return value.numpy()
    return np.asarray(value)


def assert_same_values(got: Any, want: Any, what: str) -> None:
    """Same dtype, shape and values (NaN where NumPy has NaN, infinities equal)."""
    got_a, want_a = as_array(got), as_array(want)
    assert got_a.dtype == want_a.dtype, f"{what}: dtype {got_a.dtype}, NumPy gives {want_a.dtype}"
    assert got_a.shape == want_a.shape, f"{what}: shape {got_a.shape}, NumPy gives {want_a.shape}"
    if want_a.dtype.kind in "fc":
        rtol, atol = tolerances(want_a.dtype)
        np.testing.assert_allclose(got_a, want_a, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=what)
        assert np.array_equal(np.isnan(got_a), np.isnan(want_a)), f"{what}: NaN positions differ"
    else:
        assert np.array_equal(got_a, want_a), f"{what}: values differ\n{got_a}\n!=\n{want_a}"


def strides_that_show(a: Any) -> tuple | None:
    """An array's strides on its axes longer than one (the others are free in NumPy too)."""
    a = getattr(a, "_data", a)
    if not isinstance(a, np.ndarray):
        return None
    return tuple(s for s, n in zip(a.strides, a.shape) if n > 1)


def assert_same_layout(got: Any, want: Any, what: str) -> None:
    """NumPy's memory layout: the strides users see in ``.strides``, ``.flags`` and
    ``ravel(order='K')`` (a Fortran-ordered operand makes a Fortran-ordered result)."""
    want_s, got_s = strides_that_show(want), strides_that_show(got)
    if want_s is not None and got_s is not None:
        assert got_s == want_s, f"{what}: strides {got_s}, NumPy gives {want_s}"


def assert_same_result(got: Any, want: Any, what: str, layout: bool = False) -> None:
    """Compare results that may be tuples/lists of arrays (split, meshgrid-like ops);
    with ``layout``, their strides too."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"{what}: got {type(got).__name__}, NumPy gives a sequence"
        assert len(got) == len(want), f"{what}: {len(got)} results, NumPy gives {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same_values(g, w, f"{what}[{i}]")
            if layout:
                assert_same_layout(g, w, f"{what}[{i}]")
    elif want is None:
        assert got is None, f"{what}: got {got!r}, NumPy gives None"
    else:
        assert_same_values(got, want, what)
        if layout:
            assert_same_layout(got, want, what)


def axis_choices(ndim: int, allow_tuple: bool = True, allow_none: bool = True) -> list:
    """Every axis spelling NumPy accepts for an ndim-d array: None, ±ints, tuples of ints."""
    out: list = [None] if allow_none else []
    out += list(range(-ndim, ndim))
    if allow_tuple and ndim >= 1:
        out += [(), (-1,)]
    if allow_tuple and ndim >= 2:
        out += [(0, -1), (-1, 0)]
    if allow_tuple and ndim >= 3:
        out += [(0, 2), (2, 0, 1)]
    return out
