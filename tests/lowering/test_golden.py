"""Golden text: the generated C++ kernel and Python wrapper users see in output_code.

Regenerate after an intended change with ``KILN_UPDATE_GOLDEN=1 pytest tests/lowering/test_golden.py``
and review the diff.
"""
import os
import re

import numpy as np

from kiln.ir import Graph
from kiln.ops import F, TensorMeta
from kiln.runtime import cpp_backend

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")


def softmax_graph() -> Graph:
    g = Graph("softmax")
    x = g.placeholder("x", TensorMeta((8, 16), np.float32))
    src = ("model.py", 3, "    m = x.max(axis=1, keepdims=True)")
    m = g.call(F.max, (x,), {"axis": 1, "keepdims": True}, val=TensorMeta((8, 1), np.float32), source=src)
    src = ("model.py", 4, "    e = np.exp(x - m)")
    d = g.call(F.subtract, (x, m), source=src)
    e = g.call(F.exp, (d,), source=src)
    src = ("model.py", 5, "    return e / e.sum(axis=1, keepdims=True)")
    s = g.call(F.sum, (e,), {"axis": 1, "keepdims": True}, val=TensorMeta((8, 1), np.float32), source=src)
    g.output((g.call(F.true_divide, (e, s), source=src),))
    return g


def check(name: str, text: str) -> None:
    path = os.path.join(GOLDEN, name)
    if os.environ.get("KILN_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        assert text == f.read(), f"{name} changed; rerun with KILN_UPDATE_GOLDEN=1 and review the diff"


def test_golden_kernel_and_wrapper():
    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    fn = cpp_backend(softmax_graph(), [x])
    art = fn.kiln_artifact
    kernel = art.cpp[art.cpp.index("// kiln_fused"):]
    check("softmax_kernel.cpp", kernel)
    wrapper = re.sub(r"load_library\('[^']*'", "load_library('<cache>/kernels.so'", art.wrapper)
    check("softmax_wrapper.py", wrapper)
    ref = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(fn(x)[0], ref / ref.sum(1, keepdims=True), rtol=2e-6)
