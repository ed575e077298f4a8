"""Grids and functions of constants (composite spellings, kiln/ops/numeric.py's kind):
np.meshgrid from reshapes and broadcast views; np.indices, np.triu_indices, np.logspace,
the window functions and the like computed by NumPy while capturing (graph constants),
np.logspace of arrays kiln computes as ``base ** linspace``."""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedArgument
from .meta import ndim_of, normalize_one_axis, reject, shape_of
from .numeric import _broadcast_arrays
from .registry import Composite, F, N, spell_composite


# ---- grids and index sets --------------------------------------------------------------------

def _meshgrid(*xi, copy, sparse, indexing):
    out = [N.reshape(x, s) for x, s in zip(xi, _grid_shapes(xi, indexing, True))]
    if not sparse and xi:   # (np.broadcast_arrays's views: writeable, with its warnings)
        out = _broadcast_arrays(*out)
    # NumPy's meshgrid copies with ndarray.copy(): C order (order='K' would keep the
    # broadcast's layout, Fortran for x in the 'xy' grid)
    if copy:
        return tuple(N.copy(o, order="C") for o in out)
    return list(out) if sparse and _SPARSE_VIEWS_IN_A_LIST else tuple(out)


# copy=False, sparse=True: NumPy 2.4 returns its list of reshaped views, 2.5 a tuple
_SPARSE_VIEWS_IN_A_LIST = type(np.meshgrid(np.zeros(1), np.zeros(1), sparse=True, copy=False)) is list


def _grid_shapes(xi, indexing, sparse):
    ndim = len(xi)
    sizes = [int(np.prod(shape_of(x))) for x in xi]
    if indexing == "xy" and ndim > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    if not sparse:
        return [tuple(sizes)] * ndim
    shapes = []
    for i in range(ndim):
        j = i if not (indexing == "xy" and ndim > 1 and i < 2) else 1 - i
        shapes.append(tuple(sizes[j] if k == j else 1 for k in range(ndim)))
    return shapes


def _meshgrid_normalize(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    return Composite(_meshgrid, tuple(xi), {"copy": bool(copy), "sparse": bool(sparse),
                                           "indexing": indexing})


spell_composite(np.meshgrid, ("reshape", "broadcast_arrays_view", "copy"), _meshgrid_normalize,
                "numpy.meshgrid")


def _constant(fn, *args, **kwargs):
    """Functions of shapes and constants only (np.indices, np.triu_indices): NumPy itself
    computes them while capturing; the result is a constant of the graph. Given an array
    kiln computes (a Tensor, a graph value), NumPy's own code would hand it back to kiln
    (the eager tape recursed until RecursionError): np.logspace is then base ** linspace,
    the others say what to write instead."""
    if any(hasattr(v, "shape") and not isinstance(v, (np.ndarray, np.generic))
           for v in (*args, *kwargs.values())):
        if fn is np.logspace:
            return _logspace_of_arrays(*args, **kwargs)
        raise UnsupportedArgument(
            f"numpy.{fn.__name__} of an array kiln computes (a value being differentiated or "
            f"compiled) is not supported by kiln: it is computed from constants only; build "
            f"it from np.linspace, np.exp and np.log (np.geomspace(a, b, n) of positive a, "
            f"b: np.exp(np.linspace(np.log(a), np.log(b), n)))")
    return Composite(lambda: fn(*args, **kwargs), ())


def _logspace_of_arrays(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """NumPy's np.logspace of a scalar base: ``base ** linspace(start, stop)``."""
    if np.ndim(base) != 0 or not isinstance(base, (int, float, np.generic, np.ndarray)):
        reject("numpy.logspace", "base", "<an array>", "write base ** np.linspace(start, stop, num)")

    nd = len(np.broadcast_shapes(tuple(shape_of(start)), tuple(shape_of(stop))))
    axis = normalize_one_axis(axis, nd + 1)

    def fn(start, stop):
        out = F.power(base, F.linspace(start, stop, num=num, endpoint=endpoint, axis=axis))
        return out if dtype is None else F.astype(out, dtype=np.dtype(dtype))
    return Composite(fn, (start, stop))


for _fn in (np.indices, np.triu_indices, np.tril_indices, np.diag_indices, np.fft.fftfreq, np.fft.rfftfreq):
    spell_composite(_fn, (), (lambda fn: lambda *a, **k: _constant(fn, *a, **k))(_fn))


def _from(fn, name: str):
    def normalize(arr, k=0):
        if ndim_of(arr) != 2:
            raise ValueError("input array must be 2-d")
        rows, cols = shape_of(arr)
        return _constant(fn, rows, k=k, m=cols)
    spell_composite(getattr(np, name), (), normalize, f"numpy.{name}")


_from(np.triu_indices, "triu_indices_from")
_from(np.tril_indices, "tril_indices_from")
# ``K[np.diag_indices_from(K)] += alpha``: NumPy's own on a zero-stride stand-in of the shape
spell_composite(np.diag_indices_from, (), lambda arr: _constant(
    np.diag_indices_from, np.broadcast_to(False, tuple(shape_of(arr)))), "numpy.diag_indices_from")
spell_composite(np.logspace, ("linspace", "power", "astype"), lambda *a, **k: _constant(np.logspace, *a, **k))
for _fn in (np.tri, np.geomspace, np.broadcast_shapes, np.bartlett, np.blackman,
            np.hamming, np.hanning, np.kaiser):  # functions of Python numbers: constants
    spell_composite(_fn, (), (lambda fn: lambda *a, **k: _constant(fn, *a, **k))(_fn))
