"""View layouts are computed by each op's rule (kiln/ops/layout.py), never by running the
op on fake memory: the rules agree with NumPy on real arrays, and a scalar index into a
big matrix (which used to read far outside a one-element fake buffer) compiles."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from kiln.ops import F
from kiln.ops.layout import Window

BASE = np.arange(4 * 6 * 5, dtype=np.float64).reshape(4, 6, 5)
INPUTS = {"contiguous": BASE, "transposed": BASE.transpose(2, 0, 1), "sliced": BASE[::2, 1:, ::-2],
          "unit": BASE[:, :1, :], "empty": BASE[:, :0]}
CASES = [
    ("transpose", (), {"axes": None}), ("transpose", (), {"axes": (1, 0, 2)}),
    ("transpose", (), {"axes": (0, 0, 1)}),
    ("swapaxes", (), {"axis1": 0, "axis2": 2}), ("moveaxis", (), {"source": (0,), "destination": (2,)}),
    ("moveaxis", (), {"source": (2, 0), "destination": (0, 1)}),
    ("expand_dims", (), {"axis": (0, 3)}), ("squeeze", (), {"axis": None}),
    ("squeeze", (), {"axis": (1,)}), ("flip", (), {"axis": None}), ("flip", (), {"axis": (1,)}),
    ("broadcast_to", (), {"shape": (2, 4, 6, 5)}), ("broadcast_to", (), {"shape": (4, 7, 5)}),
    ("reshape", (), {"shape": (-1,)}), ("reshape", (), {"shape": (2, 2, 30)}),
    ("reshape", (), {"shape": (4, 1, 3, 2, 5, 1)}), ("reshape", (), {"shape": (-1, 5)}),
    ("ravel", (), {}),
    ("getitem", ((1, slice(None, None, -1)),), {}), ("getitem", ((Ellipsis, 2),), {}),
    ("getitem", ((None, slice(1, -1), None, 0),), {}), ("getitem", ((-1, -1, -1),), {}),
    ("getitem", ((slice(5, 1, -2), Ellipsis, slice(None, 100)),), {}),
    ("getitem", ((9,),), {}), ("getitem", ((slice(None, None, 0),),), {}),
]


def numpy_window(result: np.ndarray, base: np.ndarray) -> Window:
    item = base.itemsize
    delta = result.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return Window(result.shape, tuple(s // item for s in result.strides), delta // item)


@pytest.mark.parametrize("layout_name", list(INPUTS))
@pytest.mark.parametrize("op_name,rest,params", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_layout_rule_matches_numpy(layout_name, op_name, rest, params):
    x = INPUTS[layout_name]
    op = getattr(F, op_name)
    item = x.itemsize
    start = (x.__array_interface__["data"][0] - BASE.__array_interface__["data"][0]) // item
    got = op.layout(Window(x.shape, tuple(s // item for s in x.strides), start), *rest, **params)
    try:
        expected = op.impl(x, *rest, **params)
    except (ValueError, IndexError, np.exceptions.AxisError):
        assert got is None  # NumPy raises: lowering leaves it to the op's kernel
        return
    if isinstance(expected, np.generic):  # a scalar: NumPy read the element
        expected = op.impl(x, *rest[:-1], rest[-1] + (Ellipsis,), **params)
    if not np.shares_memory(expected, x) and expected.size > 1:
        assert got is None, "NumPy copies here; the rule must say so"
        return
    assert got is not None
    want = numpy_window(expected, BASE)
    assert got.shape == want.shape
    if expected.size:
        live = [k for k, n in enumerate(want.shape) if n > 1]
        assert [got.strides[k] for k in live] == [want.strides[k] for k in live]
        assert got.offset == want.offset


def test_scalar_index_of_a_big_matrix_compiles():
    # L[i, i] of a 2000x2000 float64 matrix once ran NumPy on a fake array over one element
    # and read 32 MB past it (SIGSEGV while compiling); run it where a crash cannot kill pytest.
    code = textwrap.dedent("""
        import numpy as np, kiln
        @kiln.compile
        def corners(L):
            return L[1999, 1999] * 2.0 + L[1500, 3] - L[-1, 0]
        @kiln.compile
        def forward_substitution(L, b):
            x = np.zeros_like(b)
            for i in range(b.shape[0]):
                x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
            return x
        rng = np.random.default_rng(0)
        L = rng.random((2000, 2000))
        assert corners(L) == L[1999, 1999] * 2.0 + L[1500, 3] - L[-1, 0]
        T = np.tril(L[:64, :64]) + 64 * np.eye(64)
        b = rng.random(64)
        assert np.allclose(forward_substitution(T, b), np.linalg.solve(T, b), rtol=1e-12)
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    assert proc.stdout.strip() == "ok"
