"""Every kind of Triton kernel the renderer prints — N-d pointwise with broadcasts,
persistent and looped reductions (sum/prod/max/min/any/all/argmax/argmin, NaN rules),
one-kernel softmax and layernorm — run through the interpreter against NumPy, compiled
for sm_90, with int64 indexing in the TTIR when offsets pass 2**31; golden text."""
import os
import re

import numpy as np
import pytest

pytest.importorskip("triton")

from kiln.lowering.loop_ir import BufferValue
from kiln.lowering.scheduler import Frame
from kiln.lowering.triton import RenderedTritonKernel, fit_locals, render_kernel, render_module
from kiln.runtime import triton_build as tb

from .triton_kit import call, inp, kernel, node, reduction, run

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")


def _compile(k, local):
    rk = render_kernel(k, local)
    mod = tb.load_module(render_module("test", [rk]), k.name, interpret=False)
    _, constexprs, warps = rk.config()
    return rk, tb.TritonKernel(mod, k.name, rk.signature, constexprs, warps).compile(tb.SM90)


def _softmax(x, name="kiln_fused_max_subtract_exp_sum_0"):
    X = inp("x", x)
    rows, n = x.shape
    m = reduction("buf0", X, (1,), "max", (rows, 1), x.dtype, x.dtype)
    e = node("buf1", call("exp", x.dtype, call("subtract", x.dtype, X, BufferValue.whole(m.buf))))
    s = reduction("buf2", BufferValue.whole(e.buf), (1,), "sum", (rows, 1), x.dtype, np.float64)
    o = node("buf3", call("true_divide", x.dtype, BufferValue.whole(e.buf), BufferValue.whole(s.buf)))
    k = kernel(name, Frame(x.shape, (1,)),
               [("loop", [(m, "reduce")]), ("loop", [(e, "row"), (s, "reduce")]), ("loop", [(o, "row")])])
    return k, {"buf0": "scalar", "buf1": "row", "buf2": "scalar"}


def _softmax_ref(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _pointwise_nd():
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    xt = x.transpose(2, 0, 1)                 # (5, 3, 4), strided
    b = np.arange(4, dtype=np.float64)        # broadcast over the last axis, float64
    v = call("multiply", np.float64, call("tanh", np.float32, inp("x", xt)), inp("b", b))
    return kernel("kiln_fused_tanh_multiply_0", Frame((5, 3, 4)), [("loop", [(node("buf0", v), "row")])]), xt, b


def test_pointwise_nd_broadcast_and_strided_input():
    k, xt, b = _pointwise_nd()
    rk, source, outs = run(k, {}, {"x": xt, "b": b})
    np.testing.assert_allclose(outs["buf0"], np.tanh(xt).astype(np.float64) * b, rtol=1e-6)
    assert "x2 = xindex % 4" in source and "p_b + x2" in source     # stride-0 dims drop out


@pytest.mark.parametrize("cols", [10, 3000])
def test_softmax_is_one_kernel_persistent_or_looped(cols):
    x = np.random.default_rng(1).standard_normal((3, cols)).astype(np.float32)
    k, local = _softmax(x)
    local = fit_locals([k], local)
    rk, source, outs = run(k, local, {"x": x})
    np.testing.assert_allclose(outs["buf3"], _softmax_ref(x), rtol=1e-5, atol=1e-7)
    assert rk.persistent == (cols <= 1024)
    assert ("for roffset in range(0, 3000, RBLOCK):" in source) == (cols > 1024)
    if cols > 1024:   # the exp values of a looped kernel go through memory, not a tile
        assert "buf1" in outs


def _reduction(combine, cols):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, cols))
    if combine == "prod":
        x = 1 + x * 1e-3
    x[1, 5] = np.nan                           # NaN propagates; argmax picks the first NaN
    x[1, 6] = np.nan
    x[2, 3] = x[2, 4] = x[2].max() + 1         # ties go to the lower index
    x[2, 1] = x[2, 2] = x[2].min() - 1
    if combine in ("any", "all"):
        x = (rng.random((3, cols)) > (0.0 if combine == "all" else 0.999))
        x[1, 3] = combine == "any"
    arg = combine in ("argmax", "argmin")
    out_dtype = np.int64 if arg else x.dtype
    acc = x.dtype
    r = reduction("buf0", inp("x", x), (1,), combine, (3,), out_dtype, acc)
    return kernel(f"kiln_fused_{combine}_0", Frame(x.shape, (1,)), [("loop", [(r, "reduce")])]), x


@pytest.mark.parametrize("combine", ["sum", "prod", "max", "min", "argmax", "argmin", "any", "all"])
@pytest.mark.parametrize("cols", [7, 1100])
def test_reductions_follow_numpy(combine, cols):
    k, x = _reduction(combine, cols)
    arg = combine in ("argmax", "argmin")
    _, _, outs = run(k, {}, {"x": x})
    want = getattr(np, combine)(x, axis=1)
    if arg:
        np.testing.assert_array_equal(outs["buf0"], want)
    else:
        np.testing.assert_allclose(outs["buf0"], want, rtol=1e-12, equal_nan=True)


def _layernorm(x):
    X = inp("x", x)
    f64 = np.float64
    s = reduction("buf0", X, (1,), "sum", (4, 1), f64, f64)
    mean = call("true_divide", f64, BufferValue.whole(s.buf), 33.0)
    d = call("subtract", f64, X, mean)
    sq = reduction("buf1", call("multiply", f64, d, d), (1,), "sum", (4, 1), f64, f64)
    inv = call("true_divide", f64, 1.0, call("sqrt", f64, call("add", f64, call(
        "true_divide", f64, BufferValue.whole(sq.buf), 33.0), 1e-5)))
    o = node("buf2", call("multiply", np.float32, d, inv))
    return kernel("kiln_fused_layernorm_0", Frame((4, 33), (1,)),
                  [("loop", [(s, "reduce")]), ("loop", [(sq, "reduce")]), ("loop", [(o, "row")])])


def test_layernorm_is_one_kernel():
    x = np.random.default_rng(3).standard_normal((4, 33)).astype(np.float32)
    f64 = np.float64
    _, _, outs = run(_layernorm(x), {"buf0": "scalar", "buf1": "scalar"}, {"x": x})
    x64 = x.astype(f64)
    want = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(outs["buf2"], want.astype(np.float32), rtol=1e-5)


def test_float64_scalar_argument_stays_float64():
    class Scalar:               # a runtime scalar argument as lowering hands it over
        name, dtype = "lr", np.dtype(np.float64)
    x = np.linspace(0, 1, 9)
    lr = 1 + 2.0 ** -40

    def body(ops, index):
        return ops.call("multiply", [inp("x", x).load(ops, index), ops.scalar_arg(Scalar)], np.float64)
    from .triton_kit import pw
    k = kernel("kiln_fused_multiply_0", Frame((9,)), [("loop", [(node("buf0", pw((9,), np.float64, body)), "row")])])
    rk = render_kernel(k, {})
    assert list(rk.signature.items()) == [("p_x", "*fp64"), ("p_buf0", "*fp64"), ("s_lr", "fp64")]
    mod = tb.load_module(render_module("test", [rk]), k.name, interpret=True)
    grid, constexprs, warps = rk.config(interpret=True)
    out = np.zeros(9)
    tb.TritonKernel(mod, k.name, rk.signature, constexprs, warps, interpret=True)(grid, x, out, lr)
    np.testing.assert_array_equal(out, x * lr)
    _, c = _compile(k, {})                    # on sm_90 too, with an f64 parameter
    assert ".param .f64" in c.asm["ptx"]


def test_row_values_of_a_one_row_reduction_store_from_any_tile():
    # x - x.max() over a vector: one row, its stores' addresses have no row index. The
    # source is the same for any XBLOCK (config chooses it at launch): with XBLOCK 2,
    # tl.store refused a [1, RBLOCK] pointer under an [XBLOCK, RBLOCK] value and mask.
    x = np.array([3.0, 1, 4, 1, 5])
    X = inp("x", x)
    m = reduction("buf0", X, (0,), "max", (), x.dtype, x.dtype)
    e = node("buf1", call("subtract", x.dtype, X, BufferValue.whole(m.buf)))
    k = kernel("kiln_fused_max_subtract_0", Frame((5,), (0,)), [("loop", [(m, "reduce")]), ("loop", [(e, "row")])])
    rk = render_kernel(k, {"buf0": "scalar"})
    mod = tb.load_module(render_module("test", [rk]), k.name, interpret=True)
    out = np.zeros(5)
    args = [x if b.name == "x" else out for b in rk.buffers]
    tb.TritonKernel(mod, k.name, rk.signature, {"XBLOCK": 2, "RBLOCK": 8}, interpret=True)((1, 1, 1), *args)
    np.testing.assert_array_equal(out, x - 5)


def test_every_kernel_kind_compiles_for_sm90_and_int64_when_needed():
    small = np.zeros((3, 10), np.float32)
    k, local = _softmax(small)
    rk, c = _compile(k, local)
    assert not rk.int64 and "i64" not in c.asm["ttir"].split("tt.func")[1].split("tt.return")[0].replace("f64", "")
    k, local = _softmax(np.zeros((3, 5000), np.float32), "kiln_fused_softmax_looped_0")
    rk, c = _compile(k, fit_locals([k], local))
    assert not rk.persistent and "scf.for" in c.asm["ttir"]
    assert "8 partial sums each, 6 levels of halving" in rk.source   # (its sum: NumPy's order)
    # argmax over long rows, and a pointwise kernel over more than 2**31 int8 elements
    r = reduction("buf0", inp("x", np.zeros((2, 4000))), (1,), "argmax", (2,), np.int64, np.float64)
    _compile(kernel("kiln_fused_argmax_0", Frame((2, 4000), (1,)), [("loop", [(r, "reduce")])]), {})
    big = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), (2 ** 31 + 8,), (1,))
    v = call("add", np.int8, inp("x", big), 1)
    rk, c = _compile(kernel("kiln_fused_add_0", Frame(big.shape), [("loop", [(node("buf0", v), "row")])]), {})
    assert rk.int64 and "xoffset = tl.program_id(0).to(tl.int64) * XBLOCK" in rk.source
    ttir = c.asm["ttir"]
    assert "arith.extsi" in ttir and "tensor<1024xi64>" in ttir
    grid, constexprs, _ = rk.config()
    assert grid[0] * constexprs["XBLOCK"] >= 2 ** 31 + 8 and grid[0] < 2 ** 31 - 1


def test_the_other_kernel_kinds_compile_for_sm90():
    # (softmax persistent and looped, a looped argmax, > 2**31 elements: above)
    _compile(_pointwise_nd()[0], {})
    _, c = _compile(_layernorm(np.zeros((4, 33), np.float32)), {"buf0": "scalar", "buf1": "scalar"})
    # (d * d added into the sum: no FMA contraction, each rounds, as NumPy's)
    assert "fma" not in c.asm["ptx"] and "mul.rn.f64" in c.asm["ptx"] and "add.rn.f64" in c.asm["ptx"]
    for combine in ("prod", "min", "argmin", "any", "all"):
        for cols in (7, 1100):
            rk, c = _compile(_reduction(combine, cols)[0], {})
            assert rk.persistent == (cols <= 1024) and c.asm["cubin"]
            if combine in ("any", "all"):   # bools reduced as bools: an int identity (1) made
                # the tile int32, and tl.where of the result as a condition a deprecation on
                # sm_90 (np.isnan(v).all(axis=1) in nan_extremes_of_a_row), an error later
                assert set(re.findall(r'"tt.reduce".*\n\s*\^bb0\(%\w+: (\w+)', c.asm["ttir"])) == {"i1"}
    rk, c = _compile(_reduction("argmax", 7)[0], {})
    assert rk.persistent and c.asm["cubin"]
    # float32 / and sqrt round correctly (div_rn, sqrt_rn: Triton's own are approximate)
    v = call("true_divide", np.float32, call("sqrt", np.float32, inp("a", np.ones(64, np.float32))),
             inp("b", np.ones(64, np.float32)))
    _, c = _compile(kernel("kiln_fused_sqrt_divide_0", Frame((64,)), [("loop", [(node("buf0", v), "row")])]), {})
    ptx = c.asm["ptx"]
    assert "sqrt.rn.f32" in ptx and "div.rn.f32" in ptx and "approx" not in ptx


def test_golden_softmax_kernel():
    k, local = _softmax(np.zeros((8, 100), np.float32))
    text = render_kernel(k, local).source
    path = os.path.join(GOLDEN, "triton_softmax_kernel.py")
    if os.environ.get("KILN_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        assert text == f.read()


def test_region_select_on_loop_indices():
    # z[:, 1:3] = x[:, 1:3] into zeros, as fills.py builds it: ops.index, comparisons, where.
    from kiln.lowering.loop_ir import Pointwise
    x = np.random.default_rng(5).standard_normal((3, 5))
    X = inp("x", x)
    i64, b = np.dtype(np.int64), np.dtype(np.bool_)

    def body(ops, index):
        j = ops.index(index[1])
        inside = ops.call("logical_and", [ops.call("greater_equal", [j, ops.constant(1, i64)], i64, b),
                                          ops.call("less", [j, ops.constant(3, i64)], i64, b)], b)
        return ops.call("where", [inside, X.load(ops, index), ops.constant(0.0, x.dtype)], x.dtype)

    k = kernel("kiln_fused_index_put_0", Frame(x.shape),
               [("loop", [(node("buf0", Pointwise(x.shape, x.dtype, body, 3, ())), "row")])])
    _, _, outs = run(k, {}, {"x": x})
    want = np.zeros_like(x)
    want[:, 1:3] = x[:, 1:3]
    np.testing.assert_array_equal(outs["buf0"], want)


def test_float_sums_add_in_numpys_order():
    # Rows of 264 are NumPy's pairwise leaves 128, 64, 72 (tree (0 + (1 + 2))); tl.reduce's
    # tree gave other bits (the first row's sum: 50.05, NumPy 0.0). A column sum adds each
    # column in order (NumPy's elementwise inner loop), and a sum of a row value held in
    # the tile computes it again at the pairwise positions (triton_sums.py).
    rng = np.random.default_rng(5)
    x = np.stack([np.array([1e8, 1.0, -1e8, 1e-3] * 66, np.float32),
                  (rng.standard_normal(264) * 10.0 ** rng.uniform(-4, 4, 264)).astype(np.float32),
                  np.full(264, 0.1, np.float32)])
    X = inp("x", x)
    twice = node("buf0", call("multiply", np.float32, X, 2.0))
    rows = reduction("buf1", X, (1,), "sum", (3,), np.float32, np.float64)
    rows2 = reduction("buf2", BufferValue.whole(twice.buf), (1,), "sum", (3,), np.float32, np.float32)
    k = kernel("kiln_fused_sum_0", Frame(x.shape, (1,)),
               [("loop", [(rows, "reduce")]), ("loop", [(twice, "row"), (rows2, "reduce")])])
    rk, source, outs = run(k, {"buf0": "row"}, {"x": x})
    np.testing.assert_array_equal(outs["buf1"], x.sum(1))
    assert outs["buf1"][0] == 0.0 and "leaves [(0, 128), (128, 64), (192, 72)]" in source
    np.testing.assert_array_equal(outs["buf2"], (x * 2).sum(1))
    y = np.ascontiguousarray(x[:, :40].T)           # (40, 3): columns in order
    cols = reduction("buf0", inp("y", y), (0,), "sum", (3,), np.float32, np.float32)
    _, source, outs = run(kernel("kiln_fused_sum_1", Frame(y.shape, (0,)), [("loop", [(cols, "reduce")])]), {}, {"y": y})
    assert "sequential order of 40 terms" in source
    np.testing.assert_array_equal(outs["buf0"], y.sum(0))
    # a looped row (1929 > 1024 terms, 17 leaves, one level deeper than the other 15):
    # 32 leaf slots laid out in the kernel (the split rule descended per slot), merged
    # bottom up, a slot whose node is a leaf already passing its left neighbour up
    z = np.tile(x, (1, 8))[:, :1929]
    rows = reduction("buf0", inp("z", z), (1,), "sum", (3,), np.float32, np.float64)
    rk, source, outs = run(kernel("kiln_fused_sum_2", Frame(z.shape, (1,)), [("loop", [(rows, "reduce")])]), {}, {"z": z})
    np.testing.assert_array_equal(outs["buf0"], z.sum(1))
    assert not rk.persistent and "17 leaves of 64..120, 8 partial sums each, 5 levels" in source


def test_block_sizes_and_warps_follow_inductor_like_heuristics():
    # chosen at launch from the sizes (RenderedTritonKernel.config), no autotuning
    def config(xnumel, rnumel=1, reduction=False, persistent=True, interpret=False):
        return RenderedTritonKernel(
            "k", "", {}, xnumel=xnumel, rnumel=rnumel, reduction=reduction,
            persistent=persistent).config(interpret)
    assert config(1 << 20) == ((1024, 1, 1), {"XBLOCK": 1024}, 4)       # pointwise
    assert config(100) == ((1, 1, 1), {"XBLOCK": 128}, 1)               # never past pow2(n)
    assert config(50000) == ((98, 1, 1), {"XBLOCK": 512}, 2)         # pow2(50000 // 128)
    assert config(8, 100, True) == ((1, 1, 1), {"XBLOCK": 8, "RBLOCK": 128}, 4)   # persistent
    assert config(1000, 1000, True) == ((250, 1, 1), {"XBLOCK": 4, "RBLOCK": 1024}, 8)
    assert config(10, 5000, True, False) == ((10, 1, 1), {"XBLOCK": 1, "RBLOCK": 2048}, 8)  # looped
    assert config(10, 5000, True, False, interpret=True)[1] == {"XBLOCK": 1, "RBLOCK": 256}
