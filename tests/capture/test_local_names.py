"""The names an entry's body binds (sources.local_name: values read or computed once,
containers, run-time scalars) are never the namespace's (CodeNamespace.ref: constants,
types, modules the guards and the body read)."""
import numpy as np
import pytest

import kiln

from .conftest import same_as_numpy


def _many_lists_then_nan(x, brk):
    nan = float("nan")                        # a NaN: the namespace's own object, by name
    out = [[x[0] * i] for i in range(14)]     # 14 containers the entry builds under names
    if brk:
        print("", end="")                     # (both alive here: rebuilt for the rest)
    return out, nan


@pytest.mark.parametrize("brk", [False, True], ids=["returned", "at_a_break"])
def test_names_the_entry_binds_are_not_the_namespace_s(brk):
    # The entry's 11th list was named ``_kiln_c10`` and so was the namespace's NaN: the
    # entry returned ``[np.float64(0.0)]`` for ``float("nan")``
    x = np.arange(3.0)
    for backend in ("eager", "aot_eager"):
        same_as_numpy(kiln.compile(_many_lists_then_nan, backend=backend), _many_lists_then_nan, x, brk)
