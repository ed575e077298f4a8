"""What a composite NumPy spelling normalizes to: a composition of ops (kiln/ops/registry.py
``spell_composite``), with what capture and the runners must know about it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Composite:
    """A NumPy call normalized to a composition of ops: ``fn(*inputs, **params)``, written
    with ``F.<op>(...)`` only (like a derivative rule), then maybe ``out=``.

    Whoever runs it hands ``fn`` its own values: arrays (eager), Tensors (recorded on the
    tape), capture's array stand-ins or graph proxies (each ``F`` call becomes a node). So
    a spelling such as ``np.nansum`` or ``np.meshgrid`` needs no op, kernel, shape rule or
    derivative of its own: its ops fuse and differentiate as they always do.
    """
    fn: Callable
    inputs: tuple
    params: dict = field(default_factory=dict)
    out: Any = None
    # NumPy returns a Python scalar read from the data (``np.allclose`` a bool,
    # ``np.count_nonzero(x)`` an int): ``fn`` computes it as a 0-d array and whoever runs
    # the spelling converts it with this type where it leaves kiln's hands.
    python: type | None = None
    # ``fn`` never turns an input's size into a number: its slices count from the ends
    # (``x[1:]``, ``x[-1:]``) and every size it passes is its inputs' or the caller's.
    # Capture then carries dynamic sizes through its ops as expressions (``n - 1``,
    # ``n + 2``; kiln/capture/dims.py); otherwise a slice or a size expression inside
    # it specializes the sizes it meets, since ``slice(n - 1, n)`` holds the example's n.
    relative_sizes: bool = False
    # The value is this attribute of the first input (``np.shape(x)`` is ``x.shape``):
    # capture reads it as it reads the attribute, with its guards and symbolic sizes.
    attribute: str | None = None
    # ``fn`` reads only the types of its inputs (np.isscalar): a run-time number among them
    # is not specialized (its type is guarded already); otherwise one ``fn`` hands to no op
    # is, and ``np.isscalar(lp)`` of a float argument recompiled per value (emcee's
    # _scalar: 2101 entries in one test).
    type_only: bool = False
    # ``fn`` hands each run-time Python number it is given to an op as it is, and gives no
    # op another small int or bool (a literal ``0``, a ``range`` index, a default). Capture
    # finds run-time numbers by identity, and CPython shares the objects of small ints and
    # bools, so without this promise such a number is specialized (guarded by value)
    # before ``fn`` runs: a run-time ``nan=k`` of 0 would else take the place of every 0
    # in the composite (np.nan_to_num's ``greater(x, 0)``), wrong once k changes.
    passes_scalars: bool = False
    # With passes_scalars: ``fn`` hands every run-time number it is given to its ops in
    # the order they come in its inputs, each once (np.array of a list of bools). Then
    # run-time bools and small ints that are one object (CPython's True, its 0..256) are
    # told apart by that order, the n-th op to take the object taking the n-th of them;
    # otherwise they are specialized (``np.array(flags)`` recompiled for each new list).
    in_order: bool = False
    # The ufunc whose one call computes all of ``fn``'s results (np.divmod's quotient and
    # remainder): the nodes of its results warn as it does (``divide by zero encountered
    # in divmod``, once), not as the ops they are (ir/graph.py ``extern_impl``,
    # lowering/fp_flags.py).
    ufunc: str | None = None
    # ``out=`` may be larger than the result, which NumPy broadcasts into it: a ufunc's
    # (``np.add(x, 1, out=o, where=m)``, ``np.fix``, ``ufunc.outer``). Elsewhere (a
    # reduction's ``where=``/``initial=``, the nan-reductions, ``np.round``) NumPy wants
    # the result's own shape and raises otherwise, so capture runs such a call as Python.
    out_broadcasts: bool = False
    # NumPy's call checks no floating-point flag (np.vdot: BLAS's dot, never "overflow
    # encountered in dot", which np.dot gives): ``fn``'s ops run under
    # ``np.errstate(all="ignore")`` wherever it runs (capture marks their nodes ``quiet``).
    quiet: bool = False
    # ``fn`` ends with a write of what its steps computed into the caller's array (np.copyto
    # of a value cast first): NumPy's one call writes, then raises for the cast's
    # floating-point error, so capture marks that write ``out_write`` (ir/graph.py).
    out_write: bool = False
    # NumPy computes every result of ``fn`` in one call of its own (a LAPACK factorization
    # and its unpacking, np.histogram's counts and edges): run as Python, the spelling costs
    # that one call, not one per op of ``fn`` (capture marks its nodes ``one_call``;
    # kiln/runtime/cost.py prices them so).
    one_call: bool = False
