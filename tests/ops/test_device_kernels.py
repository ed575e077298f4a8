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
cases NumPy rejects and those holding NaN or inf (tests/ops/test_op_table.py checks
kiln's errors and special values).

The stand-in is NumPy underneath, so it proves the kernels' array handling, not CuPy's
coverage of NumPy's API. Where CuPy and a GPU are present (not in CI), the same rows run
on real CuPy arrays too: a row whose NumPy spelling CuPy itself refuses (a function CuPy
lacks) is left out there, since kiln then raises as the user's code does.
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
from .test_op_table import draw_case, outcome, run_numpy, traced

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DEVICE = settings(max_examples=2, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
DEVICE_ID = 1   # not the default device: results must stay on their inputs' GPU, where
# they are made as CuPy makes arrays: on the current device, which the caller sets
# (``with cupy.cuda.Device(1):``; CuPy refuses to compute on arrays of another device)


class Module:
    """An array library on a GPU as the test uses it: its module (``cupy``-like), its array
    type, and the GPU the arrays live on."""

    def __init__(self, xp: Any, array: type, device: int) -> None:
        self.xp, self.array, self.device = xp, array, device

    def put(self, host: np.ndarray) -> Any:
        with self.xp.cuda.Device(self.device):
            return self.xp.asarray(host)

    def get(self, value: Any, what: str) -> Any:
        if isinstance(value, (tuple, list)):
            return type(value)(self.get(v, what) for v in value)
        if value is None:
            return None
        assert type(value) is self.array, f"{what}: a {type(value).__name__}, not a device array"
        assert value.device.id == self.device, f"{what}: on GPU {value.device.id}, not {self.device}"
        return self.xp.asnumpy(value)


def _modules() -> list:
    modules = [pytest.param(Module(XP, DeviceDouble, DEVICE_ID), id="stand-in")]
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            modules.append(pytest.param(Module(cupy, cupy.ndarray, 0), id="cupy"))
    except Exception:   # no CuPy, or no driver or device: the stand-in only
        pass
    return modules


@pytest.mark.parametrize("module", _modules())
@pytest.mark.parametrize("row", [pytest.param(row, id=row.id) for row in ROWS])
@DEVICE
@given(data=st.data())
def test_kernel_on_device_arrays_matches_numpy(row: Row, module: Module, data: Any) -> None:
    case = draw_case(row, data, row.dtypes[0])
    if not case.arrays or not all(np.isfinite(a.value).all() for a in case.arrays
                                  if a.value.dtype.kind in "fc"):
        # (NaN and inf are the op table's: LAPACK may not return on them, NumPy's own
        # np.linalg.pinv of a matrix holding a NaN did not here)
        return
    host_args = [a.fresh() for a in case.arrays]
    want, err = run_numpy(row.numpy, case)
    if err is not None:
        return
    if row.mutates:
        row.numpy(*case.fill(host_args), **case.params)
    if module.array is not DeviceDouble:
        _, refused = outcome(lambda: row.numpy(*case.fill([module.put(a.fresh()) for a in case.arrays]),
                                               **case.params))
        if refused is not None:
            return   # CuPy refuses the user's own call: kiln raises there too
    args = [module.put(a.fresh()) for a in case.arrays]
    program = numpy_program(traced(row, case), place=array_kinds.placement(args))
    with module.xp.cuda.Device(module.device):
        got = program(*args)
    got = got if isinstance(want, (tuple, list)) else got[0]
    assert_same_result(module.get(got, row.id), want, f"{row.id} on device arrays")
    if row.mutates:
        for i, (g, w) in enumerate(zip(args, host_args)):
            assert_same_result(module.get(g, row.id), w, f"{row.id}: argument {i} after the call")
