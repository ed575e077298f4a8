"""Every op's NumPy kernel on arrays on a GPU: the op table (table.py) run on the CuPy
stand-in (tests/capture/device_double.py), as the eager backends and the fallbacks of the
compiled ones run a graph on CuPy arrays.

A kernel must not leave NumPy's dispatch protocols (``np.asarray``, ``np.array``,
``np.zeros`` of a result: CuPy refuses the implicit copy, or gets a NumPy operand): it
takes the array module from its inputs (``kiln.ops.meta.namespace``). Each row is traced
into a graph, which runs as its NumPy program with its constant arrays copied to the
device once (``kiln.array_kinds.placement``) on stand-in arrays; its results must be
stand-in arrays on the same device with NumPy's values, dtypes and shapes, and the
arguments it writes must end up as NumPy leaves them. It runs on GPU 1, the current
device then, as a CuPy user on that GPU runs their code. Rows whose arguments hold no array
make host arrays, as NumPy's creators do on CuPy's side too, and are left out; so are the
cases NumPy rejects (tests/ops/test_op_table.py checks kiln's errors).

The stand-in is NumPy underneath, so this proves the kernels' array handling, not CuPy's
coverage of NumPy's API: tests/runtime/test_triton_cupy.py and benchmarks/gpu_check.py
run real CuPy arrays on a GPU.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kiln import array_kinds
from kiln.ir.printer import numpy_program

from capture.device_double import XP, DeviceDouble   # (tests/ is on the path: rootdir imports)
from .gen import assert_same_result
from .table import ROWS, Row
from .test_op_table import draw_case, run_numpy, traced

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DEVICE = settings(max_examples=2, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
DEVICE_ID = 1   # not the default device: results must stay on their inputs' GPU, where
# they are made as CuPy makes arrays: on the current device, which the caller sets
# (``with cupy.cuda.Device(1):``; CuPy refuses to compute on arrays of another device)


def _host(value: Any, what: str) -> Any:
    if isinstance(value, (tuple, list)):
        return type(value)(_host(v, what) for v in value)
    if value is None:
        return None
    assert isinstance(value, DeviceDouble), f"{what}: a {type(value).__name__} on the host"
    assert value.device.id == DEVICE_ID, f"{what}: on GPU {value.device.id}, not {DEVICE_ID}"
    return value.get()


@pytest.mark.parametrize("row", [pytest.param(row, id=row.id) for row in ROWS])
@DEVICE
@given(data=st.data())
def test_kernel_on_device_arrays_matches_numpy(row: Row, data: Any) -> None:
    case = draw_case(row, data, row.dtypes[0])
    if not case.arrays:
        return
    host_args = [a.fresh() for a in case.arrays]
    want, err = run_numpy(row.numpy, case)
    if err is not None:
        return
    if row.mutates:
        row.numpy(*case.fill(host_args), **case.params)
    args = [DeviceDouble(a.fresh(), DEVICE_ID) for a in case.arrays]
    program = numpy_program(traced(row, case), place=array_kinds.placement(args))
    with XP.cuda.Device(DEVICE_ID):
        got = program(*args)
    got = got if isinstance(want, (tuple, list)) else got[0]
    assert_same_result(_host(got, row.id), want, f"{row.id} on device arrays")
    if row.mutates:
        for i, (g, w) in enumerate(zip(args, host_args)):
            assert_same_result(_host(g, row.id), w, f"{row.id}: argument {i} after the call")
