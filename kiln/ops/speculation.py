"""Ops whose result dtype depends on the values: ``np.linalg.eig``/``eigvals`` of a real
matrix (real when every eigenvalue is), ``np.roots``, ``np.real_if_close``, ``np.poly``
of a matrix or of complex roots (real when the roots come in conjugate pairs),
``np.bincount`` with weights of an x whose length only the data give (intp zeros, not
float64 sums, when that x is empty: kiln/ops/selection.py).

A graph needs every dtype before it runs, so capture *speculates*: such an op's params
name the dtype of result expected (``expect``, a dtype name: ``"complex128"``) and the
user's line it stands for (``site``), and its kernel checks NumPy's answer against
``expect`` (:func:`checked`), raising :class:`ResultKindChanged` when the data give
another dtype (real for complex, or float64 where a float32 polynomial degenerates). That is a ``BaseException``, so no handler of errors raised in a graph (the
replays of writes, the notes naming the user's line) takes it: the cache entry running the
graph does (kiln/api.py), runs this call as Python (the graph wrote nothing the caller
sees yet: functionalizing backends write after the graph ran), and capture learns the dtype
seen at that line: the next call compiles for it. At first capture expects what NumPy
gives on this call's values where the op reads an argument, else the op's default. A
line seen with two dtypes is not speculated any more (:func:`speculate` rejects it): the call breaks the graph, and the
code after it compiles per dtype through the resume function's guards. So a result
always has NumPy's dtype, and a line whose data keep one kind compiles to one graph.

Outside capture (NumPy arrays, the eager Tensor) ``expect`` is None: NumPy's result as
it comes.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from .meta import reject

# While capture binds a call: (site, {site: set of dtype names seen}, example) of its user line.
_SITES: list = []


class ResultKindChanged(BaseException):
    """A speculated op's result has another dtype than the graph expected (real where it
    expected complex, or the reverse).

    Not an ``Exception``: nothing between the op and the cache entry running its graph
    may take it for an error of the user's program."""

    def __init__(self, site: str, dtype: str) -> None:
        super().__init__(f"{site}: the result is {dtype} this time; kiln runs the call as "
                         f"Python and recompiles")
        self.site = site
        self.dtype = dtype


class speculating:
    """Capture binds a call at ``site`` (``file:line``), with the dtypes seen there and
    ``example(arg)``: the call's value of an argument array, or None."""

    def __init__(self, site: str, seen: dict, example: Callable[[Any], Any]) -> None:
        self.entry = (site, seen, example)

    def __enter__(self) -> None:
        _SITES.append(self.entry)

    def __exit__(self, *exc: Any) -> None:
        _SITES.pop()


def speculate(name: str, default: Any, a: Any = None, fn: Callable | None = None) -> dict:
    """The params ``expect`` and ``site`` of a speculated op, for its normalizer: the
    dtype this line gave before; at first the dtype of ``fn``'s result on this call's
    value of ``a`` where ``a`` is an argument (no op computed it) or a constant, else
    ``default``.
    ``expect`` is None outside capture. A line that gave two dtypes is rejected (capture
    breaks the graph at the call)."""
    if not _SITES:
        return {"expect": None, "site": ""}
    site, seen, example = _SITES[-1]
    dtypes = seen.get(site, set())
    if len(dtypes) > 1:
        reject(name, "a", "<an array whose result was real in one call, complex in another>",
               "NumPy's result dtype depends on the values; the call runs as Python and the "
               "code after it compiles for each dtype")
    if dtypes:
        return {"expect": next(iter(dtypes)), "site": site}
    value = (a if isinstance(a, np.ndarray) else example(a)) if fn is not None else None
    if value is not None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                default = np.asarray(fn(value)).dtype
        except Exception:   # NumPy raises at run time too, with its message
            pass
    return {"expect": np.dtype(default).name, "site": site}


def checked(result: Any, expect: str | None, site: str) -> Any:
    """``result`` when its dtype is the expected one; raises ResultKindChanged otherwise."""
    if expect is not None:
        # (a device array's dtype without a copy to the host: CuPy refuses np.asarray)
        dtype = result.dtype if hasattr(result, "dtype") else np.asarray(result).dtype
        if dtype.name != expect:
            raise ResultKindChanged(site, dtype.name)
    return result


def complex_of(dtype: Any) -> np.dtype:
    """The complex dtype of ``dtype``'s precision (float32 -> complex64)."""
    return np.result_type(dtype, np.complex64)
