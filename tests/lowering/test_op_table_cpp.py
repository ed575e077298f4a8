"""Every row of the op table (tests/ops/table.py) through the cpp backend: the traced op,
compiled with kernels (or as an extern call where it has no lowering), gives NumPy's
values, dtype and shape. Cases come from the table's own generators (broadcasting,
size-0/1 dims, transposed, strided, reversed and zero-stride inputs, planted nan/inf); a
few examples per row and dtype keep the number of compiled libraries small."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kiln.runtime import cpp_backend

from ops.gen import assert_same_result
from ops.test_op_table import by_dtype, draw_case, outcome, run_numpy, traced

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

CPP = settings(max_examples=2, deadline=None, derandomize=True, database=None,
               suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("row, dtype", by_dtype("graph"))
@CPP
@given(data=st.data())
def test_cpp_backend_matches_numpy(row, dtype, data: Any) -> None:
    case = draw_case(row, data, dtype)
    want, err = run_numpy(row.numpy, case)
    if err is not None:
        return  # error cases are the graph test's business (meta rules raise while tracing)
    graph = traced(row, case)
    fn = cpp_backend(graph, [a.fresh() for a in case.arrays])
    # (var/std where ddof leaves no degree of freedom: NumPy's warnings, so NumPy's call)
    assert not hasattr(fn, "__kiln_numpy_program__") or _no_degree_of_freedom(row, case), \
        f"{row.id}: the cpp backend fell back to the interpreter"
    got, got_err = outcome(lambda: fn(*[a.fresh() for a in case.arrays]))
    if got_err is not None:
        raise AssertionError(f"{row.id}: the cpp backend raises {got_err!r}\n{graph}") from got_err
    assert_same_result(got if isinstance(want, (tuple, list)) else got[0], want,
                       f"{row.id}: cpp backend\n{graph}\n{getattr(getattr(fn, 'kiln_artifact', None), 'wrapper', '(the NumPy program)')}")


def _no_degree_of_freedom(row: Any, case: Any) -> bool:
    if row.id not in ("var", "std"):
        return False
    shape, axis = case.arrays[0].value.shape, case.params.get("axis")
    axes = range(len(shape)) if axis is None else (axis,) if isinstance(axis, int) else axis
    return math.prod(shape[a] for a in axes) <= case.params.get("ddof", 0)
