"""Golden text: the generated C++ kernel and Python wrapper users see in output_code.

Regenerate after an intended change with ``KILN_UPDATE_GOLDEN=1 pytest tests/lowering/test_golden.py``
and review the diff.
"""
import os
import re

import numpy as np

from kiln.ir import Graph, trace
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


def kernels_of(fn) -> str:
    art = fn.kiln_artifact
    return art.cpp[art.cpp.index("// kiln_fused"):]


def test_golden_pointwise():
    # where/clip/power by a constant and by a runtime scalar, a comparison, a cast.
    def f(x, y, a):
        z = F.where(F.greater(x, y), F.power(x, 2.0), F.clip(y, -1.0, None))
        return (F.add(F.multiply(F.power(z, a), 3.0), F.astype(F.less(x, 0.5), dtype=np.dtype(np.float32))),)
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    g = trace(f, [TensorMeta((3, 4), np.float32), TensorMeta((4,), np.float32), 1.5], ["x", "y", "a"])
    fn = cpp_backend(g, [x, x[0], 1.5])
    check("pointwise_kernel.cpp", kernels_of(fn))
    np.testing.assert_allclose(fn(x, x[1], 1.5)[0], g(x, x[1], 1.5)[0], rtol=2e-6)


def test_golden_reduction():
    # a blocked column reduction (std over axis 0) and a row mean: composite reductions.
    def f(x):
        return F.std(x, axis=0, ddof=1), F.mean(x, axis=1)
    x = np.random.default_rng(0).standard_normal((64, 32))
    g = trace(f, [TensorMeta(x.shape, x.dtype)], ["x"])
    fn = cpp_backend(g, [x])
    check("reduction_kernel.cpp", kernels_of(fn))
    for e, r in zip(g(x), fn(x)):
        np.testing.assert_allclose(r, e, rtol=1e-12)


def test_golden_dynamic_shape():
    def f(x, b):
        return (F.sum(F.multiply(F.tanh(x), b), axis=1),)
    x = np.random.default_rng(0).standard_normal((6, 10)).astype(np.float32)
    b = np.ones(10, np.float32)
    g = trace(f, [TensorMeta(x.shape, x.dtype), TensorMeta(b.shape, b.dtype)], ["x", "b"])
    g.placeholders[0].meta["dynamic_dims"] = (0, 1)
    g.placeholders[1].meta["dynamic_dims"] = (0,)
    fn = cpp_backend(g, [x, b])
    check("dynamic_kernel.cpp", kernels_of(fn))
    wrapper = re.sub(r"load_library\('[^']*'", "load_library('<cache>/kernels.so'", fn.kiln_artifact.wrapper)
    check("dynamic_wrapper.py", wrapper)
    for shape in [(3, 7), (9, 2)]:
        xs = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
        bs = np.linspace(0, 1, shape[1], dtype=np.float32)
        np.testing.assert_allclose(fn(xs, bs)[0], g(xs, bs)[0], rtol=2e-6, atol=1e-6)
