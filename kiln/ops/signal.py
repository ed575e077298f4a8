"""Discrete Fourier transforms, convolution and padding.

``np.fft``'s transforms are EXTERN ops (NumPy's pocketfft on every backend), one op per
transform with NumPy's ``n``/``s``, ``axis``/``axes`` and ``norm`` as parameters. The
complex-to-complex transforms and ``rfft``/``rfft2``/``rfftn`` differentiate (in the
conjugate convention of ``Op.complex_grad``): each is linear, y = W x, so the cotangent
is W^H g, the opposite transform with the opposite scaling (``norm`` 'backward' <->
'forward'), cropped or zero-padded back to the input's lengths; ``rfft`` first pads g to
the full spectrum. ``irfft``/``hfft``/``ihfft`` differentiate too: irfft's cotangent is rfft(g) weighted 2 for
the bins it counts twice (the conjugate half it mirrors), hfft and ihfft are irfft and rfft
of conjugates; ``irfft2``/``irfftn`` are complex inverse transforms then irfft, so their
cotangent is irfft's followed by the forward transforms' adjoint.
``fftshift``/``ifftshift`` are composites of ``np.roll``;
``fftfreq``/``rfftfreq`` are constants (kiln/ops/numeric.py).

``convolve`` is an EXTERN op with a derivative for real inputs (the cotangent of a full
convolution is a correlation, for every mode after padding the cotangent back to the full
length); ``correlate`` is ``convolve`` with the second operand reversed (and conjugated).
``pad`` is a composite of slices, flips, broadcasts and ``concatenate``.
"""
from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from .meta import TensorMeta, fake, from_result, ndim_of, normalize_one_axis, on_stand_ins, reject, shape_of
from .numeric import array_like
from .reduction import dtype_of
from .registry import Bound, Category, Composite, F, N, declare, spell, spell_composite

# ---- np.fft ----------------------------------------------------------------------------------

_ONE_AXIS = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
_MANY_AXES = ("fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn")


# The adjoint of each differentiable transform, and of each scaling (W^H of an unscaled
# DFT is the unscaled inverse: ifft with norm='forward').
_ADJOINT = {"fft": "ifft", "ifft": "fft", "rfft": "ifft", "fft2": "ifft2", "ifft2": "fft2",
            "rfft2": "ifft2", "fftn": "ifftn", "ifftn": "fftn", "rfftn": "ifftn"}
_ADJOINT_NORM = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _fit_length(g: Any, axis: int, length: int) -> Any:
    """g cropped or zero-padded along ``axis`` to ``length`` (the transform's input length)."""
    have = shape_of(g)[axis]
    if have > length:
        return F.getitem(g, (slice(None),) * axis + (slice(0, length),))
    if have < length:
        shape = list(shape_of(g))
        shape[axis] = length - have
        return F.concatenate((g, F.zeros(shape=tuple(shape), dtype=dtype_of(g))), axis=axis)
    return g


def _fft_axes(x: Any, s: Any, axes: Any) -> tuple:
    """NumPy's (axes, lengths) of an n-d transform (numpy.fft._raw_fftnd's rule)."""
    nd = ndim_of(x)
    if axes is None:
        axes = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
    lengths = tuple(shape_of(x)[a] for a in axes) if s is None else tuple(s)
    return tuple(a % nd for a in axes), lengths


def _fft_vjp(name: str):
    adjoint = _ADJOINT[name]
    real = name.startswith("rfft")

    def vjp(g, out, x, *, n=None, axis=None, s=None, axes=None, norm=None):
        if name in _ONE_AXIS:
            axes_, lengths = (axis % ndim_of(x),), (shape_of(x)[axis] if n is None else n,)
        else:
            axes_, lengths = _fft_axes(x, s, axes)
        if real:   # the half spectrum back to the full one (the rest has no cotangent)
            g = _fit_length(g, axes_[-1], lengths[-1])
        grad = getattr(F, adjoint)(g, **({"axis": axes_[0]} if name in _ONE_AXIS else {"axes": axes_}),
                                   norm=_ADJOINT_NORM[norm])
        for a in axes_:   # W^H g has the transform's lengths: back to x's
            grad = _fit_length(grad, a, shape_of(x)[a])
        return (grad,)
    return vjp


def _irfft_cotangent(g, x, n, axis, norm):
    """The cotangent of irfft's input X (length m along ``axis``) for the cotangent g of its
    real output (length n): y = W X with W summing X_0, 2 Re(X_k e^{2 pi i k t / n}) for
    0 < k < n/2, and X_{n/2} when n is even, so dL/dRe X_k - ... gives rfft(g) with k's
    weight (1 at 0 and n/2, else 2), scaled as the adjoint norm, cropped or zero-padded
    back to m (irfft reads only X[:n//2+1], and only the real parts of X_0, X_{n/2})."""
    half = n // 2 + 1
    weights = np.full(half, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    weights = weights.reshape((half,) + (1,) * (ndim_of(g) - 1 - axis))
    grad = F.multiply(F.rfft(g, n=None, axis=axis, norm=_ADJOINT_NORM[norm]), weights)
    return _fit_length(grad, axis, shape_of(x)[axis])


def _irfft_vjp(g, out, x, *, n=None, axis=None, norm=None):
    n = 2 * (shape_of(x)[axis] - 1) if n is None else n
    return (_irfft_cotangent(g, x, n, axis, norm),)


def _hfft_vjp(g, out, x, *, n=None, axis=None, norm=None):
    # hfft(a) = irfft(conj(a)) with the opposite norm: the cotangent of conj is conj's
    n = 2 * (shape_of(x)[axis] - 1) if n is None else n
    return (F.conjugate(_irfft_cotangent(g, x, n, axis, _ADJOINT_NORM[norm])),)


def _ihfft_vjp(g, out, x, *, n=None, axis=None, norm=None):
    # ihfft(a) = conj(rfft(a)) with the opposite norm
    return _fft_vjp("rfft")(F.conjugate(g), None, x, n=n, axis=axis, norm=_ADJOINT_NORM[norm])


def _irfftn_vjp(g, out, x, *, s=None, axes=None, norm=None):
    # NumPy's irfftn is the complex inverse transforms over axes[:-1] (lengths s[:-1]), then
    # irfft along axes[-1] (length s[-1], by default 2 (m - 1)), each scaled as ``norm``
    # says per axis: the cotangent is irfft's, then the adjoint of those inverse transforms.
    axes_, lengths = _fft_axes(x, s, axes)
    last = axes_[-1]
    n = 2 * (shape_of(x)[last] - 1) if s is None else lengths[-1]
    grad = _irfft_cotangent(g, x, n, last, norm)
    if len(axes_) > 1:
        (grad,) = _fft_vjp("ifftn")(grad, None, x, s=lengths[:-1], axes=axes_[:-1], norm=norm)
    return (grad,)


_MORE_VJPS = {"irfft": _irfft_vjp, "hfft": _hfft_vjp, "ihfft": _ihfft_vjp,
              "irfft2": _irfftn_vjp, "irfftn": _irfftn_vjp}


def _run_on_fake(fn, x: TensorMeta, params: dict) -> TensorMeta:
    return from_result(on_stand_ins(fn, fake(x), **params))


def _fft_meta(name: str, fn):
    """The shape rule of a transform, without transforming a fake of the whole shape
    (capture's size probes, kiln/capture/dims.py, try lengths up to 4099 n: pocketfft over
    every row took 38 s for one np.fft.fftn of a (30, 10, 20) array). NumPy runs on a
    stand-in whose untransformed axes are at most 1 long and transformed ones at most 3
    of the same parity (its errors depend on those lengths being 0 or 1, on their parity
    and on the params: the same), which
    gives the dtype; the transformed lengths are NumPy's rule (n, or m, m // 2 + 1 of a
    real forward transform's last axis, 2 (m - 1) of a real inverse one's), checked
    against the stand-in's result."""
    one_axis = name in _ONE_AXIS
    half, doubled = name.startswith(("rfft", "ihfft")), name.startswith(("irfft", "hfft"))

    def lengths(shape: tuple, params: dict) -> dict | None:
        nd = len(shape)
        if one_axis:
            axes, s = [params["axis"]], [params["n"]]
        else:
            s = params["s"]
            axes = list(params["axes"]) if params["axes"] is not None else \
                list(range(nd - len(s), nd)) if s is not None else list(range(nd))
            s = list(s) if s is not None else [None] * len(axes)
        if not nd or len(s) != len(axes) or not all(-nd <= a < nd for a in axes) \
                or len({a % nd for a in axes}) != len(axes):   # (an axis twice: NumPy's order)
            return None
        out = {}
        for k, (a, n) in enumerate(zip(axes, s)):
            m = shape[a % nd] if n is None or n == -1 else n
            last = k == len(axes) - 1
            out[a % nd] = (m // 2 + 1 if half and last else
                           2 * (shape[a % nd] - 1) if doubled and last and (n is None or n == -1) else m)
        return out

    def meta(x, **params):
        shape = tuple(x.shape)
        at = lengths(shape, params)
        if at is None:
            return _run_on_fake(fn, x, params)   # (NumPy's own error, or its own rule)
        small = tuple(min(n, 2 + n % 2) if i in at else min(n, 1) for i, n in enumerate(shape))
        out = _run_on_fake(fn, TensorMeta(small, x.dtype), params)
        want = lengths(small, params)
        if want is None or tuple(want.get(i, n) for i, n in enumerate(small)) != tuple(out.shape):
            return _run_on_fake(fn, x, params)
        return TensorMeta(tuple(at.get(i, n) for i, n in enumerate(shape)), out.dtype)
    return meta


def _fft_op(name: str):
    fn = getattr(np.fft, name)
    grad = {"vjp": _fft_vjp(name), "complex_grad": True} if name in _ADJOINT else \
        {"vjp": _MORE_VJPS[name], "complex_grad": True} if name in _MORE_VJPS else {}
    if name in _ONE_AXIS:
        op = declare(name if name not in ("fft",) else "fft", Category.EXTERN,
                     lambda x, n=None, axis=-1, norm=None: fn(x, n=n, axis=axis, norm=norm),
                     inputs=("x",), params={"n": None, "axis": -1, "norm": None},
                     meta=_fft_meta(name, fn), doc=f"numpy.fft.{name}", **grad)

        def normalize(a, n=None, axis=-1, norm=None, out=None):
            if out is not None:
                reject(f"numpy.fft.{name}", "out", "<array>", "assign the result instead")
            return Bound(op, (a,), {"n": None if n is None else operator.index(n),
                                    "axis": normalize_one_axis(axis, max(ndim_of(a), 1)),
                                    "norm": norm})
    else:
        op = declare(name, Category.EXTERN,
                     lambda x, s=None, axes=None, norm=None: fn(x, s=s, axes=axes, norm=norm),
                     inputs=("x",), params={"s": None, "axes": None, "norm": None},
                     meta=_fft_meta(name, fn), doc=f"numpy.fft.{name}", **grad)
        default_axes = (-2, -1) if name.endswith("2") else None

        def normalize(a, s=None, axes=default_axes, norm=None, out=None):
            if out is not None:
                reject(f"numpy.fft.{name}", "out", "<array>", "assign the result instead")
            nd = ndim_of(a)
            axes = None if axes is None else tuple(normalize_one_axis(ax, nd) for ax in axes)
            return Bound(op, (a,), {"s": None if s is None else tuple(int(v) for v in s),
                                    "axes": axes, "norm": norm})
    spell(fn, op, normalize, f"numpy.fft.{name}")
    return op


FFT_OPS = {name: _fft_op(name) for name in _ONE_AXIS + _MANY_AXES}


def _shift(x, axes, sign):
    nd = ndim_of(x)
    axes = tuple(range(nd)) if axes is None else \
        tuple(normalize_one_axis(a, nd) for a in (axes if isinstance(axes, (tuple, list)) else (axes,)))
    shifts = tuple(sign * (shape_of(x)[a] // 2) for a in axes)
    return N.roll(x, shifts, axes) if axes else N.copy(x)


spell_composite(np.fft.fftshift, ("getitem", "concatenate"),
                lambda x, axes=None: Composite(_shift, (x,), {"axes": axes, "sign": 1}),
                "numpy.fft.fftshift")
spell_composite(np.fft.ifftshift, ("getitem", "concatenate"),
                lambda x, axes=None: Composite(_shift, (x,), {"axes": axes, "sign": -1}),
                "numpy.fft.ifftshift")


# ---- convolve, correlate ----------------------------------------------------------------------

def _convolve_impl(a, v, mode="full"):
    return np.convolve(a, v, mode=mode)


def _window(la: int, lv: int, mode: str) -> tuple[int, int]:
    """(start, length) of a mode's output inside the full convolution."""
    if mode == "full":
        return 0, la + lv - 1
    big, small = max(la, lv), min(la, lv)
    if mode == "same":
        return (small - 1) // 2, big
    return small - 1, big - small + 1


def _convolve_vjp(g, out, a, v, mode):
    la, lv = shape_of(a)[0], shape_of(v)[0]
    start, length = _window(la, lv, mode)
    full = la + lv - 1
    if (start, length) != (0, full):
        parts = []
        if start:
            parts.append(F.zeros(shape=(start,), dtype=dtype_of(g)))
        parts.append(g)
        if full - start - length:
            parts.append(F.zeros(shape=(full - start - length,), dtype=dtype_of(g)))
        g = F.concatenate(tuple(parts), axis=0)
    # out[n] = sum_k a[k] v[n - k]: ga[k] = sum_n g[n] v[n - k] (a valid correlation).
    ga = F.convolve(g, F.flip(v, axis=(0,)), mode="valid") if lv <= full else None
    gv = F.convolve(g, F.flip(a, axis=(0,)), mode="valid")
    return ga, gv


convolve = declare("convolve", Category.EXTERN, _convolve_impl, inputs=("a", "v"),
                   params={"mode": "full"}, vjp=_convolve_vjp,
                   doc="numpy.convolve of two 1-D arrays; mode 'full', 'same' or 'valid'")


def _mode(mode: Any) -> str:
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    return mode


def _convolve_normalize(a, v, mode="full"):
    if ndim_of(a) != 1 or ndim_of(v) != 1:
        reject("numpy.convolve", "a/v", "<not 1-D>", "pass 1-D arrays")
    if shape_of(a)[0] == 0:
        raise ValueError("a cannot be empty")
    if shape_of(v)[0] == 0:
        raise ValueError("v cannot be empty")
    return Bound(convolve, (a, v), {"mode": _mode(mode)})


spell(np.convolve, convolve, _convolve_normalize, "numpy.convolve")


def _correlate(a, v, mode):
    w = N.flip(v)
    if dtype_of(w).kind == "c":
        w = N.conjugate(w)
    if shape_of(v)[0] > shape_of(a)[0]:
        # NumPy correlates the longer with the shorter and reverses the result in place
        # (a contiguous array, not a reversed view)
        return N.ascontiguousarray(N.flip(N.conjugate(_correlate(v, a, mode)) if dtype_of(a).kind == "c"
                                          else _correlate(v, a, mode)))
    return N.convolve(a, w, mode)


def _correlate_normalize(a, v, mode="valid"):
    if ndim_of(a) != 1 or ndim_of(v) != 1:
        reject("numpy.correlate", "a/v", "<not 1-D>", "pass 1-D arrays")
    if shape_of(a)[0] == 0 or shape_of(v)[0] == 0:
        raise ValueError("a cannot be empty" if shape_of(a)[0] == 0 else "v cannot be empty")
    return Composite(_correlate, (a, v), {"mode": _mode(mode)})


spell_composite(np.correlate, ("convolve", "flip", "conjugate", "ascontiguousarray"), _correlate_normalize,
                "numpy.correlate")


# ---- pad ------------------------------------------------------------------------------------

def _pad_widths(pad_width: Any, nd: int) -> list[tuple[int, int]]:
    w = np.asarray(pad_width)
    if w.dtype.kind not in "iu":
        raise TypeError("`pad_width` must be of integral type.")
    if (w < 0).any():      # (before broadcasting: np.pad(x0d, -1) raises too)
        raise ValueError("index can't contain negative values")
    w = np.broadcast_to(w, (nd, 2)).tolist()
    return [tuple(int(v) for v in pair) for pair in w]


def _edge_block(x, axis: int, which: str, count: int, mode: str, value: Any):
    n = shape_of(x)[axis]

    def take(s):
        return N.getitem(x, (slice(None),) * axis + (s,))

    if n == 0 and mode != "constant":
        raise ValueError(f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'")
    # 'constant' and 'edge' spell no size of x (Composite.relative_sizes): the block is
    # one edge slice of x repeated ``count`` times, so a dynamic size flows through them
    if mode == "constant" and n == 0:
        shape = list(shape_of(x))
        shape[axis] = count
        return N.full(tuple(shape), value, dtype=dtype_of(x))
    if mode == "constant":
        return N.repeat(N.full_like(take(slice(0, 1)), value), count, axis=axis)
    if mode == "edge":
        return N.repeat(take(slice(0, 1) if which == "before" else slice(-1, None)), count, axis=axis)
    if mode == "wrap":
        if count > n:
            reject("numpy.pad", "pad_width", count, "pad by at most the axis length with "
                   "mode='wrap', or call it without kiln")
        return take(slice(n - count, n) if which == "before" else slice(0, count))
    if mode in ("reflect", "symmetric"):
        off = 1 if mode == "reflect" else 0
        if count > n - off:
            reject("numpy.pad", "pad_width", count, f"pad by less than the axis length with "
                   f"mode={mode!r}, or call it without kiln")
        if which == "before":
            return N.flip(take(slice(off, off + count)), axis)
        return N.flip(take(slice(n - off - count, n - off)), axis)
    reject("numpy.pad", "mode", mode, "use 'constant', 'edge', 'wrap', 'reflect' or 'symmetric'")


def _pad(array, widths, mode, value):
    x = array_like(array)
    for axis, (before, after) in enumerate(widths):
        parts = []
        if before:
            parts.append(_edge_block(x, axis, "before", before, mode, value[axis][0]))
        parts.append(x)
        if after:
            parts.append(_edge_block(x, axis, "after", after, mode, value[axis][1]))
        if len(parts) > 1:
            x = N.concatenate(parts, axis=axis)
    x = x if any(b or a for b, a in widths) else N.copy(x)
    # NumPy allocates the result first, np.empty(shape, order='F' if array.flags.fnc else
    # 'C'), and fills it: the join's own order='K' layout is not that one
    return x if len(widths) < 2 else F.relayout(x, array, rule="A")


# NumPy's allowedkwargs: a keyword of another mode is its ValueError
_PAD_KEYWORDS = {"constant": {"constant_values"}, "edge": set(), "wrap": set(), "empty": set(),
                 "linear_ramp": {"end_values"}, "maximum": {"stat_length"}, "mean": {"stat_length"},
                 "median": {"stat_length"}, "minimum": {"stat_length"},
                 "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}}


def _constant_pairs(values, nd: int, dtype) -> list:
    """NumPy's ``_as_pairs(constant_values, ndim)`` and the writes of its pairs into the
    result, one per side of every axis (``padded[side] = value``, even where the width is
    0): one value or a pair are NumPy scalars of ``np.array(values)``, more are Python
    numbers (``.tolist()``), and each write casts as a setitem does (np.int64(300) into
    uint8 wraps, the Python int 300 raises, NaN into an integer array raises). The values
    are constants: each is written into a 0-d array of the result's dtype here (its error is
    NumPy's; a warning runs the call as NumPy, which warns at every call)."""
    if nd == 0:
        return []
    v = np.array(values)
    flat = v.ravel()
    if v.ndim < 3 and v.size == 1:
        pairs = [[flat[0], flat[0]]] * nd
    elif v.ndim < 3 and v.size == 2 and v.shape != (2, 1):
        pairs = [[flat[0], flat[1]]] * nd
    else:
        pairs = np.broadcast_to(v, (nd, 2)).tolist()
    cell = np.empty((), np.dtype(dtype))
    written = []
    for pair in pairs:
        written.append([])
        for value in pair:
            with warnings.catch_warnings(), np.errstate(all="warn"):
                warnings.simplefilter("error")
                try:
                    cell[()] = value
                except Warning:
                    reject("numpy.pad", "constant_values", value, "a value the result's dtype "
                           "holds (NumPy warns as it casts this one)")
            written[-1].append(cell.item())
    return written


def _pad_normalize(array, pad_width, mode="constant", **kwargs):
    nd = ndim_of(array)
    widths = _pad_widths(pad_width, nd)
    if isinstance(mode, str) and mode in _PAD_KEYWORDS:
        unsupported = set(kwargs) - _PAD_KEYWORDS[mode]
        if unsupported:
            raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    values = kwargs.pop("constant_values", 0)
    if kwargs and not (set(kwargs) <= {"reflect_type"} and kwargs.get("reflect_type") == "even"):
        reject("numpy.pad", next(iter(kwargs)), kwargs[next(iter(kwargs))], "call it without kiln")
    if callable(mode):
        reject("numpy.pad", "mode", mode, "use a named mode")
    if hasattr(values, "shape") and not isinstance(values, np.ndarray):
        reject("numpy.pad", "constant_values", "<array>", "pass Python numbers")
    value_pairs = _constant_pairs(values, nd, dtype_of(array)) if mode == "constant" else [[0, 0]] * nd
    return Composite(_pad, (array,), {"widths": widths, "mode": mode, "value": value_pairs},
                     relative_sizes=mode in ("constant", "edge"))


spell_composite(np.pad, ("concatenate", "full", "full_like", "repeat", "getitem", "flip"), _pad_normalize,
                "numpy.pad")


# ---- gradient ---------------------------------------------------------------------------------

def _gradient_along(f: Any, axis: int, dx: Any) -> Any:
    """NumPy's second-order central differences inside, first-order one-sided at the two
    edges (edge_order=1, uniform spacing ``dx``): the same operations on each element."""
    def at(start, stop):
        index = [slice(None)] * ndim_of(f)
        index[axis] = slice(start, stop)
        return N.getitem(f, tuple(index))
    inner = N.true_divide(N.subtract(at(2, None), at(None, -2)), 2. * dx)
    first = N.true_divide(N.subtract(at(1, 2), at(0, 1)), dx)
    last = N.true_divide(N.subtract(at(-1, None), at(-2, -1)), dx)
    # NumPy's out = np.empty_like(f), its three parts then written
    return F.relayout(N.concatenate([first, inner, last], axis=axis), f, rule="K")


def _gradient_along_coordinates(f: Any, axis: int, x: Any, otype: Any) -> Any:
    """NumPy's gradient along ``axis`` at the points ``x`` (1-d, edge_order=1): with
    ``diffx = np.diff(x)``, the uniform formula of ``diffx[0]`` where every step equals
    it (NumPy's data-dependent shortcut, so both are computed and one selected), else the
    second-order non-uniform weights; each part cast into NumPy's ``out`` of ``otype``."""
    nd = ndim_of(f)

    def at(a, start, stop, along=axis):
        index = [slice(None)] * ndim_of(a)
        index[along] = slice(start, stop)
        return N.getitem(a, tuple(index))

    def column(v):   # a 1-d weight along ``axis`` (NumPy's ``a.shape = shape``)
        shape = [1] * nd
        shape[axis] = -1
        return N.reshape(v, tuple(shape))
    if np.dtype(dtype_of(x)).kind in "iu":
        x = N.method("astype", x, np.float64)
    diffx = N.diff(x)
    step = N.getitem(diffx, 0)
    uniform = N.all(N.equal(diffx, step))
    same = N.true_divide(N.subtract(at(f, 2, None), at(f, None, -2)), N.multiply(2., step))
    dx1, dx2 = at(diffx, None, -1, 0), at(diffx, 1, None, 0)
    a = column(N.true_divide(N.negative(dx2), N.multiply(dx1, N.add(dx1, dx2))))
    b = column(N.true_divide(N.subtract(dx2, dx1), N.multiply(dx1, dx2)))
    c = column(N.true_divide(dx1, N.multiply(dx2, N.add(dx1, dx2))))
    varying = N.add(N.add(N.multiply(a, at(f, None, -2)), N.multiply(b, at(f, 1, -1))),
                    N.multiply(c, at(f, 2, None)))
    inner = N.where(uniform, N.method("astype", same, otype), N.method("astype", varying, otype))
    first = N.true_divide(N.subtract(at(f, 1, 2), at(f, 0, 1)), step)
    last = N.true_divide(N.subtract(at(f, -1, None), at(f, -2, -1)),
                         N.where(uniform, step, N.getitem(diffx, -1)))
    parts = [N.method("astype", p, otype) for p in (first, inner, last)]
    return F.relayout(N.concatenate(parts, axis=axis), f, rule="K")


def _gradient(f: Any, *coordinates: Any, axes: tuple, dx: tuple) -> Any:
    f = array_like(f)
    if np.dtype(dtype_of(f)).kind in "iu":   # (not bool: NumPy subtracts bools, and raises)
        f = N.method("astype", f, np.float64)
    points = iter(coordinates)
    out = tuple(_gradient_along(f, axis, d) if d is not None else
                _gradient_along_coordinates(f, axis, next(points), dtype_of(f))
                for axis, d in zip(axes, dx))
    return out[0] if len(out) == 1 else out


def _gradient_normalize(f, *varargs, axis=None, edge_order=1):
    nd = ndim_of(f)
    axes = tuple(range(nd)) if axis is None else tuple(
        normalize_one_axis(a, nd) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError("duplicate value in 'axis'")
    if edge_order != 1:
        reject("numpy.gradient", "edge_order", edge_order, "kiln has edge_order=1 (the default)")
    number = [isinstance(v, (int, float)) and not isinstance(v, bool) for v in varargs]
    # 1-d arrays of coordinates, one per axis (NumPy's ``len(varargs) == len(axes)`` form)
    points = [not n and hasattr(v, "dtype") and ndim_of(v) == 1 and np.dtype(dtype_of(v)).kind in "iuf"
              for n, v in zip(number, varargs)]
    if not all(n or p for n, p in zip(number, points)) or (any(points) and len(varargs) != len(axes)):
        reject("numpy.gradient", "varargs", "<coordinates other than 1-d int or float arrays>",
               "pass Python numbers or one 1-d array of coordinates per axis")
    if len(varargs) == 0:
        dx = (1.0,) * len(axes)
    elif len(varargs) == 1 and number[0]:
        dx = varargs * len(axes)
    elif len(varargs) == len(axes):
        dx = tuple(None if p else v for p, v in zip(points, varargs))
    else:
        raise TypeError("invalid number of arguments")
    coordinates = tuple(v for p, v in zip(points, varargs) if p)
    for p, v, a in zip(points, varargs, axes):
        if p and shape_of(v)[0] != shape_of(f)[a]:
            raise ValueError("when 1d, distances must match the length of the corresponding dimension")
    if any(shape_of(f)[a] < edge_order + 1 for a in axes):
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                         "(edge_order + 1) elements are required.")
    return Composite(_gradient, (f,) + coordinates, {"axes": axes, "dx": tuple(dx)})


spell_composite(np.gradient, ("getitem", "subtract", "true_divide", "concatenate", "relayout",
                              "equal", "all", "where", "multiply", "add", "negative", "reshape", "astype"),
                _gradient_normalize, "numpy.gradient")


# ---- unwrap ----------------------------------------------------------------------------------

def _unwrap(p, discont, axis, period):
    # NumPy's algorithm (float inputs): the jumps of more than discont, folded into
    # [-period/2, period/2), accumulated along the axis
    nd = ndim_of(p)
    dd = N.diff(p, axis=axis)
    high = period / 2
    ddmod = N.add(N.mod(N.subtract(dd, -high), period), -high)
    ddmod = N.where(N.logical_and(N.equal(ddmod, -high), N.greater(dd, 0)), high, ddmod)
    correct = N.subtract(ddmod, dd)
    correct = N.where(N.less(N.absolute(dd), discont), 0, correct)
    head = tuple(slice(None) if i != axis else slice(None, 1) for i in range(nd))
    tail = tuple(slice(None) if i != axis else slice(1, None) for i in range(nd))
    dt = np.result_type(dtype_of(p), period)
    rest = N.add(N.getitem(p, tail), N.cumsum(correct, axis=axis))
    first = N.method("astype", N.getitem(p, head), dt)
    # NumPy's up = np.array(p, dtype) (p's layout), its slices then written
    return F.relayout(N.concatenate((first, N.method("astype", rest, dt)), axis=axis), p, rule="K")


def _unwrap_normalize(p, discont=None, axis=-1, *, period=2 * np.pi):
    if np.dtype(dtype_of(p)).kind != "f" or not isinstance(period, (int, float)) or \
            not (discont is None or isinstance(discont, (int, float))):
        reject("numpy.unwrap", "p", f"<{np.dtype(dtype_of(p))} array>",
               "kiln compiles np.unwrap of float arrays with a Python number period and discont")
    axis = normalize_one_axis(axis, ndim_of(p))
    if shape_of(p)[axis] == 0:
        reject("numpy.unwrap", "p", "<an empty axis>", "it runs as Python")
    period = float(period)
    return Composite(_unwrap, (p,), {"discont": period / 2 if discont is None else discont,
                                     "axis": axis, "period": period})


spell_composite(np.unwrap, ("diff", "mod", "where", "cumsum", "concatenate", "relayout"), _unwrap_normalize,
                "numpy.unwrap")
