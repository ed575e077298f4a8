"""The Triton backend end to end on NumPy arrays through Triton's interpreter
(KILN_TRITON_INTERPRET): the pointwise op table, reductions, fusion (kernel counts),
kiln.compile with backend="triton", and the error without the interpreter."""
import numpy as np
import pytest

pytest.importorskip("triton")

import kiln
from kiln.config import config
from kiln.errors import KilnError
from kiln.ir import trace
from kiln.ops import F, TensorMeta
from kiln.ops.pointwise import BINARY, UNARY
from kiln.runtime.triton_backend import triton_backend

from .helpers import assert_same, multi_op_graph, run_both
from .test_fusion import X, W, layernorm, softmax
from .test_pointwise import pairs, values
from .triton_kit import interpret  # noqa: F401  (autouse: Triton's interpreter on NumPy arrays)




def _run(g, inputs):
    return run_both(g, inputs, compiled=triton_backend(g, list(inputs)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint8, np.int64, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_unary_ops(dtype):
    x = values(dtype)
    g, kept = multi_op_graph(list(UNARY), [x], 1)
    expected, got, _ = _run(g, [x])
    for name, e, r in zip(kept, expected, got):
        assert_same(f"{name}({np.dtype(dtype).name})", e, r)


@pytest.mark.parametrize("dx,dy", [(np.float32, np.float32), (np.float64, np.float64), (np.int32, np.int32),
                                   (np.uint8, np.uint8), (np.bool_, np.bool_), (np.float32, np.int32),
                                   (np.uint8, np.int8)], ids=lambda d: np.dtype(d).name)
def test_binary_ops(dx, dy):
    x, y = pairs(dx, dy)
    ops = [n for n in BINARY if not (n == "power" and np.dtype(dy).kind in "iub")]
    g, kept = multi_op_graph(ops, [x, y], 2)
    expected, got, _ = _run(g, [x, y])
    for name, e, r in zip(kept, expected, got):
        # (float_power is libdevice's pow here, within an ulp of the libm pow NumPy calls)
        rtol = (4e-6 if e.dtype == np.float32 else 1e-13) if name == "float_power" and e.dtype.kind == "f" else None
        assert_same(f"{name}({np.dtype(dx).name}, {np.dtype(dy).name})", e, r, rtol=rtol)


def _check(fn, *inputs, rtol=2e-6):
    g = trace(fn, [TensorMeta(a.shape, a.dtype) for a in inputs], [f"a{i}" for i in range(len(inputs))])
    expected, got, compiled = _run(g, list(inputs))
    for i, (e, r) in enumerate(zip(expected, got)):
        assert_same(f"out{i}", e, r, rtol=rtol, atol=1e-6)
    return compiled.kiln_artifact


def test_softmax_and_layernorm_are_one_kernel_each():
    art = _check(softmax, X)
    assert art.kernel_names == ["kiln_fused_max_subtract_exp_sum_0"]
    assert art.wrapper.count("np.empty") == 1
    assert "tl.reduce(" in art.cpp and "persistent" in art.cpp
    art = _check(layernorm, X, W, W + 1)
    assert len(art.kernel_names) == 1 and art.wrapper.count("np.empty") == 1


def test_long_rows_loop_and_reductions_over_leading_axes():
    x = np.random.default_rng(0).standard_normal((3, 1500))
    x[1, 7] = np.nan
    art = _check(lambda x: (F.max(x, axis=1), F.sum(x, axis=1), F.min(x, axis=0), F.prod(x, axis=0),
                            F.mean(x), F.var(x, axis=1)), x, rtol=1e-12)
    assert "for roffset in range(0, 1500, RBLOCK):" in art.cpp


def test_any_all_and_int_sums():
    b = np.random.default_rng(1).random((4, 9)) > 0.7
    i = np.arange(36, dtype=np.int8).reshape(4, 9) * 5
    _check(lambda b, i: (F.any(b, axis=1), F.all(b, axis=0), F.sum(i, axis=1), F.sum(i)), b, i)


def test_argmax_argmin_are_kernels_first_nan_then_first_index():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 40)).astype(np.float32)
    x[1, 5] = x[1, 20] = np.nan          # the first NaN wins (argmax and argmin)
    x[2, 3] = x[2, 9] = 50               # ties: the lowest index
    x[3] = np.float32(-np.inf)
    art = _check(lambda x: (F.argmax(x, axis=1), F.argmin(x, axis=0, keepdims=True), F.argmax(x),
                            F.argmin(F.sin(x), axis=1), F.sum(x, axis=1)), x)
    assert not art.wrapper.count("_ext_arg")   # kernels, not NumPy's calls
    assert "kiln_argmax" in art.cpp and "kiln_argmin" in art.cpp
    assert any("sum" in k and "argmin" in k for k in art.kernel_names)  # one row loop
    long = rng.standard_normal((2, 3000))
    long[1, 2500] = np.nan
    art = _check(lambda x: (F.argmax(x, axis=1), F.argmin(x, axis=1)), long)
    assert "for roffset in range(0, 3000, RBLOCK):" in art.cpp
    i = rng.integers(-5, 5, (3, 17)).astype(np.int16)
    b = i > 2
    _check(lambda i, b: (F.argmax(i, axis=1), F.argmin(i), F.argmax(b, axis=0), F.argmin(b, axis=1)), i, b)


def test_cpp_keeps_argmax_an_extern_call():
    from kiln.runtime import cpp_backend
    x = np.random.default_rng(5).standard_normal((4, 9))
    g = trace(lambda x: (F.argmax(x, axis=1),), [TensorMeta(x.shape, x.dtype)], ["x"])
    fn = cpp_backend(g, [x])
    assert "_ext_argmax" in fn.kiln_artifact.wrapper and not fn.kiln_artifact.kernel_names
    np.testing.assert_array_equal(fn(x)[0], x.argmax(axis=1))


def test_compile_runs_user_functions_through_the_interpreter():
    @kiln.compile(backend="triton")
    def step(x, w, lr):
        h = np.tanh(x @ w)                    # matmul is an extern call, tanh a kernel
        return x - lr * h.mean(axis=1, keepdims=True), h.argmax(axis=1)

    x = np.random.default_rng(2).standard_normal((8, 8))
    w = np.eye(8)
    for lr in (0.1, 0.2):                     # a runtime scalar: no recompile
        got = step(x, w, lr)
        h = np.tanh(x @ w)
        np.testing.assert_allclose(got[0], x - lr * h.mean(axis=1, keepdims=True), rtol=1e-12)
        np.testing.assert_array_equal(got[1], h.argmax(axis=1))
    report = kiln.explain(step)(x, w, 0.3)
    assert report.graph_count == 1 and report.graph_break_count == 0


def test_triton_on_numpy_arrays_without_the_interpreter_is_a_clear_error():
    config.triton_interpret = False
    with pytest.raises(KilnError, match="CuPy arrays on a GPU"):
        kiln.compile(lambda x: np.sin(x) + 1, backend="triton")(np.ones(3))


def test_value_and_grad_in_a_compiled_training_step(tmp_path, capsys):
    def loss(w, x, y):
        return ((np.tanh(x @ w) - y) ** 2).mean()

    def step(w, x, y, lr):
        value, g = kiln.value_and_grad(loss)(w, x, y)
        return w - lr * g, value

    rng = np.random.default_rng(0)
    w, x, y = rng.standard_normal((6, 3)), rng.standard_normal((10, 6)), rng.standard_normal((10, 3))
    old = config.debug_dir
    config.debug_dir = str(tmp_path)
    kiln.set_logs(output_code=True)
    try:
        got = kiln.compile(step, backend="triton")(w, x, y, 0.1)
    finally:
        config.debug_dir = old
        kiln.set_logs()
    # output_code shows the Triton kernels, their comments the user's source lines
    err = capsys.readouterr().err
    assert "[kiln:output_code]" in err and "@triton.jit" in err
    assert "return ((np.tanh(x @ w) - y) ** 2).mean()" in err
    want = step(w, x, y, 0.1)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    assert got[1] == pytest.approx(want[1], rel=1e-12)
    written = sorted(p.name for p in tmp_path.glob("*/kernels.py"))
    assert written and all("@triton.jit" in p.read_text() for p in tmp_path.glob("*/kernels.py"))


def test_the_wrapper_checks_what_the_renderer_assumed():
    """Renderer.input_checks: the Triton wrapper's first statement re-checks the array
    type (and, on a GPU, the device); another array type compiles its own variant."""
    from kiln.lowering.loop_ir import Buffer, Scalar
    from kiln.lowering.triton import TritonRenderer
    inputs = [("x", Buffer("x", (4,), np.float32, "input")), ("a", Scalar(np.float32, name="a"))]
    assert TritonRenderer(("cuda", 1)).input_checks(inputs) == \
        ["type(x) is not _ARRAY", "x.device.id != 1"]
    x = np.linspace(-1, 1, 12, dtype=np.float32)
    g = trace(lambda x: (F.sin(x),), [TensorMeta(x.shape, x.dtype)], ["x"])
    fn = triton_backend(g, [x])
    body = fn.kiln_artifact.wrapper.split("def call(x):\n")[1].splitlines()
    assert body[:2] == ["    if type(x) is not _ARRAY:", "        return _respecialize(x)"]

    class Sub(np.ndarray):
        pass

    seen = []
    fn.__globals__["_respecialize"] = lambda *args: seen.append(type(args[0])) or (args[0],)
    fn(x.view(Sub))
    assert seen == [Sub]
    np.testing.assert_allclose(fn(x)[0], np.sin(x), rtol=1e-6)
    assert seen == [Sub]


def test_dynamic_sizes_one_build_serves_every_shape():
    """Sizes are int64 kernel parameters (no specialization per shape): the grid follows
    each call; rows of a dynamic length loop; the kernels also compile for sm_90."""
    from kiln.runtime import triton_build as tb
    x = np.random.default_rng(0).standard_normal((6, 10)).astype(np.float32)
    b = np.linspace(0, 1, 10, dtype=np.float32)
    g = trace(lambda x, b: (F.add(softmax(x), b), F.mean(x, axis=0), F.sin(F.getitem(x, slice(1, None))),
                            F.argmax(x, axis=0)),
              [TensorMeta(x.shape, x.dtype), TensorMeta(b.shape, b.dtype)], ["x", "b"])
    g.placeholders[0].meta["dynamic_dims"] = (0,)
    g2 = trace(lambda x: (F.multiply(F.sin(x), F.sum(x, axis=1, keepdims=True)),),
               [TensorMeta((4, 5), np.float64)], ["x"])
    g2.placeholders[0].meta["dynamic_dims"] = (0, 1)
    fn, fn2 = triton_backend(g, [x, b]), triton_backend(g2, [np.zeros((4, 5))])
    assert "xnumel = s0" in fn.kiln_artifact.cpp and "range(0, s1, RBLOCK)" in fn2.kiln_artifact.cpp
    for f in (fn, fn2):
        f.__globals__["_respecialize"] = lambda *a: pytest.fail("compiled another variant")
    for n in (6, 3, 50, 1100):
        xn = np.random.default_rng(n).standard_normal((n, 10)).astype(np.float32)
        for i, (e, r) in enumerate(zip(g(xn, b), fn(xn, b))):
            assert_same(f"out{i}", e, r, rtol=3e-6, atol=1e-6)
    for shape in [(3, 9), (17, 2), (2, 1500)]:
        xs = np.random.default_rng(2).standard_normal(shape)
        assert_same("out", g2(xs)[0], fn2(xs)[0], rtol=1e-12)
    module = tb.load_module(fn2.kiln_artifact.cpp, "dyn", interpret=False)
    (name,) = fn2.kiln_artifact.kernel_names
    kernel = fn2.__globals__[name]
    compiled = tb.TritonKernel(module, name, kernel.rendered.signature, kernel.constexprs, 4).compile(tb.SM90)
    assert "i64" in str(compiled.asm["ttir"])


def test_dynamic_nd_coordinates_divide_by_the_whole_product():
    # x0 = xindex // (s1*s2): printed bare, Python read it as (xindex // s1) * s2 and the
    # kernel wrote the first rows only (fg // 2 + bg // 2 on (4, 5, 3) images, dynamic=True)
    x = np.arange(60, dtype=np.uint8).reshape(4, 5, 3)
    g = trace(lambda x: (F.add(F.floor_divide(x, 2), x),), [TensorMeta(x.shape, x.dtype)], ["x"])
    g.placeholders[0].meta["dynamic_dims"] = (0, 1, 2)
    fn = triton_backend(g, [x])
    assert "xindex // (s1*s2)" in fn.kiln_artifact.cpp
    assert_same("out", g(x)[0], fn(x)[0])
