"""Every row of the op table (tests/ops/table.py) through the cpp backend: the traced op,
compiled with kernels (or as an extern call where it has no lowering), gives NumPy's
values, dtype and shape. Cases come from the table's own generators (broadcasting,
size-0/1 dims, transposed, strided, reversed and zero-stride inputs, planted nan/inf); a
few examples per row and dtype keep the number of compiled libraries small: each example
draws a case for every dtype of the row, and cases of different shapes are one graph
(each case its own inputs, and its own kernel or extern call): one build for them instead
of one a dtype."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kiln.ir import trace
from kiln.ops import TensorMeta
from kiln.runtime import cpp_backend

from ops.gen import assert_same_result
from ops.test_op_table import ROWS, draw_case, marks, outcome, run_numpy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

CPP = settings(max_examples=2, deadline=None, derandomize=True, database=None,
               suppress_health_check=list(HealthCheck))


def traced_cases(row: Any, cases: list) -> tuple:
    """One graph of the row's op on each case's own inputs, its outputs case by case, and
    how many outputs each case has."""
    metas, spans, counts = [], [], []
    for case in cases:
        spans.append((len(metas), len(case.arrays)))
        metas += [TensorMeta(a.value.shape, a.value.dtype) for a in case.arrays]

    def every_case(*xs):
        outs = []
        for (start, n), case in zip(spans, cases):
            result = row.via_op(*case.fill(xs[start:start + n]), **case.params)
            result = result if isinstance(result, tuple) else (result,)
            counts.append(len(result))
            outs += result
        return tuple(outs)
    return trace(every_case, metas, [f"x{i}" for i in range(len(metas))]), counts


def _check(row: Any, dtypes: list, cases: list, wants: list) -> None:
    """The cases' graph through the cpp backend, each case's outputs against NumPy's."""
    graph, counts = traced_cases(row, cases)
    fn = cpp_backend(graph, [a.fresh() for case in cases for a in case.arrays])
    what = f"{row.id} ({', '.join(map(str, dtypes))})"
    # (var/std where ddof leaves no degree of freedom: NumPy's warnings, so NumPy's call)
    assert not hasattr(fn, "__kiln_numpy_program__") or \
        any(_no_degree_of_freedom(row, case) for case in cases), \
        f"{what}: the cpp backend fell back to the interpreter"
    got, got_err = outcome(lambda: fn(*[a.fresh() for case in cases for a in case.arrays]))
    if got_err is not None:
        raise AssertionError(f"{what}: the cpp backend raises {got_err!r}\n{graph}") from got_err
    code = getattr(getattr(fn, "kiln_artifact", None), "wrapper", "(the NumPy program)")
    k = 0
    for dtype, n, want in zip(dtypes, counts, wants, strict=True):
        mine, k = tuple(got[k:k + n]), k + n
        assert_same_result(mine if isinstance(want, (tuple, list)) else mine[0], want,
                           f"{row.id}-{dtype}: cpp backend\n{graph}\n{code}")
    assert k == len(got)


# (a known bug of one dtype, KNOWN_BUGS[("graph", row, dtype)], marks the row's test)
ROW_PARAMS = [pytest.param(row, id=row.id, marks=marks("graph", row.id) + [
    m for dtype in row.dtypes for m in marks("graph", row.id, str(dtype))]) for row in ROWS]


@pytest.mark.parametrize("row", ROW_PARAMS)
@CPP
@given(data=st.data())
def test_cpp_backend_matches_numpy(row: Any, data: Any) -> None:
    dtypes, cases, wants = [], [], []
    for dtype in row.dtypes:
        case = draw_case(row, data, dtype)
        want, err = run_numpy(row.numpy, case)
        if err is not None:
            continue  # error cases are the graph test's business (meta rules raise while tracing)
        if _no_degree_of_freedom(row, case):   # NumPy's program: checked alone
            _check(row, [dtype], [case], [want])
            continue
        dtypes.append(dtype)
        cases.append(case)
        wants.append(want)
    for group in _apart(cases, wants):
        _check(row, [dtypes[i] for i in group], [cases[i] for i in group], [wants[i] for i in group])


def _shapes(case: Any, want: Any) -> set:
    outs = want if isinstance(want, (tuple, list)) else (want,)
    return {a.value.shape for a in case.arrays} | {np.shape(w) for w in outs}


def _apart(cases: list, wants: list) -> list:
    """The cases in groups where no two share an array's shape (inputs or results): the
    scheduler fuses ops over one frame into one kernel, so each case's op stays a kernel of
    its own, the one it compiles to alone (an example of 0-d arrays for every dtype is one
    group a dtype)."""
    groups: list = []
    for i, (case, want) in enumerate(zip(cases, wants)):
        shapes = _shapes(case, want)
        for group, seen in groups:
            if not shapes & seen:
                group.append(i)
                seen |= shapes
                break
        else:
            groups.append(([i], set(shapes)))
    return [group for group, _ in groups]


def _no_degree_of_freedom(row: Any, case: Any) -> bool:
    if row.id not in ("var", "std"):
        return False
    shape, axis = case.arrays[0].value.shape, case.params.get("axis")
    axes = range(len(shape)) if axis is None else (axis,) if isinstance(axis, int) else axis
    return math.prod(shape[a] for a in axes) <= case.params.get("ddof", 0)
