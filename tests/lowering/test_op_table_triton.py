"""Every row of the op table (tests/ops/table.py) through the Triton backend, on NumPy
arrays through Triton's interpreter: the traced op, as Triton kernels (or an extern call
where it has no lowering), gives NumPy's values, dtype and shape. One example per row and
dtype (the interpreter costs about a millisecond per program)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("triton")

from kiln.runtime.triton_backend import triton_backend

from ops.gen import assert_same_result
from ops.test_op_table import by_dtype, draw_case, outcome, run_numpy, traced

from .triton_kit import interpret  # noqa: F401  (autouse: Triton's interpreter on NumPy arrays)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

ONE = settings(max_examples=1, deadline=None, derandomize=True, database=None,
               suppress_health_check=list(HealthCheck))




@pytest.mark.parametrize("row, dtype", by_dtype("graph"))
@ONE
@given(data=st.data())
def test_triton_backend_matches_numpy(row, dtype, data: Any) -> None:
    case = draw_case(row, data, dtype)
    want, err = run_numpy(row.numpy, case)
    if err is not None:
        return
    graph = traced(row, case)
    fn = triton_backend(graph, [a.fresh() for a in case.arrays])
    got, got_err = outcome(lambda: fn(*[a.fresh() for a in case.arrays]))
    if got_err is not None:
        raise AssertionError(f"{row.id}: the triton backend raises {got_err!r}\n{graph}") from got_err
    where = getattr(fn, "kiln_artifact", None)
    assert_same_result(got if isinstance(want, (tuple, list)) else got[0], want,
                       f"{row.id}: triton backend\n{graph}\n{where.wrapper if where else 'NumPy fallback'}")
