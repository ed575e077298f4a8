"""Every scalar function of the Triton renderer's table, for every dtype NumPy has a loop
for, through Triton's interpreter against NumPy (one kernel per dtype, one output per
function); then the same kernels compiled ahead of time for sm_90."""
import numpy as np
import pytest

pytest.importorskip("triton")

from kiln.lowering.scheduler import Frame
from kiln.lowering.triton_ops import SYNTAX, TL_TYPES, template

from .triton_kit import call, inp, kernel, node, pw, run

N = 24
TERNARY = {"where", "clip"}
# scalar functions that are no NumPy ufunc, checked as the one whose loop they compute (a
# zero-stride exponent's fast paths, here an array's: NumPy's pow, the same values)
AS_UFUNC = {"power_scalar_exponent": "power"}


def _values(dtype, rng):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        v = rng.standard_normal(N).astype(dt) * 3
        v[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0]
        return v
    if dt.kind == "b":
        return rng.integers(0, 2, N).astype(bool)
    info = np.iinfo(dt)
    v = rng.integers(max(info.min, -100), min(info.max, 100), N).astype(dt)
    v[:4] = [0, 1, info.max, info.min]
    return v


def _cases(dtype):
    dt = np.dtype(dtype)
    out = []
    for fn in sorted(SYNTAX):
        if template(fn, dt) is None:
            continue
        if fn == "where":
            out.append((fn, 3, np.dtype(bool)))
            continue
        if fn == "clip":
            out.append((fn, 3, dt))
            continue
        uf = getattr(np, AS_UFUNC.get(fn, fn))
        try:
            loop = uf.resolve_dtypes((dt,) * uf.nin + (None,) * uf.nout)
        except TypeError:
            continue
        if all(d == dt for d in loop[:uf.nin]):
            out.append((fn, uf.nin, loop[-1]))
    return out


def _reference(fn, xs):
    with np.errstate(all="ignore"):
        if fn == "where":
            return np.where(xs[0] != 0, xs[1], xs[2])
        if fn == "clip":
            return np.minimum(np.maximum(xs[0], xs[1]), xs[2])
        return getattr(np, AS_UFUNC.get(fn, fn))(*xs)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "bool"])
def test_every_scalar_function_matches_numpy(dtype):
    dt = np.dtype(dtype)
    rng = np.random.default_rng(1)
    a, b, c = (_values(dt, rng) for _ in range(3))
    if dt.kind in "iu":
        b[:8] = [0, -1 if dt.kind == "i" else 1, 3, 7, 31, 64, 2, 5]   # by zero, MIN // -1, shifts
    ins = {"a": a, "b": b, "c": c}
    vals = [inp(k, v) for k, v in ins.items()]
    cases = _cases(dt)
    members = []
    for i, (fn, nin, out) in enumerate(cases):
        if fn == "where":
            value = call(fn, dt, *vals, out=dt)
            value.fn = _where(vals, dt)
        else:
            value = call(fn, dt, *vals[:nin], out=out)
        members.append((node(f"o{i}", value), "row"))
    k = kernel(f"kiln_ops_{dtype}", Frame((N,)), [("loop", members)])
    _, source, outs = run(k, {}, ins)
    wrong = []
    for i, (fn, nin, out) in enumerate(cases):
        xs = [a, b, c][:nin] if fn != "where" else [a, b, c]
        want = _reference(fn, xs)
        got = outs[f"o{i}"]
        tol = 1e-6 if dt == np.float32 else 1e-12
        ok = got.dtype == want.dtype and (np.allclose(got, want, rtol=tol, atol=0, equal_nan=True)
                                          if want.dtype.kind == "f" else np.array_equal(got, want))
        if ok and fn in ("floor_divide", "remainder", "sign", "maximum", "minimum"):
            ok = np.array_equal(np.signbit(got), np.signbit(want)) if want.dtype.kind == "f" else ok
        if not ok:
            wrong.append(f"{fn}: got {got[:10]} want {want[:10]}")
    assert not wrong, "\n".join(wrong)
    assert len(cases) >= {"f": 50, "i": 30, "u": 25, "b": 15}[dt.kind]


def _where(vals, dt):
    def body(ops, index):
        c = ops.cast(vals[0].load(ops, index), vals[0].dtype, np.bool_)
        return ops.call("where", [c, vals[1].load(ops, index), vals[2].load(ops, index)], dt)
    return body


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool"])
def test_every_scalar_function_compiles_for_sm90(dtype):
    from kiln.lowering.triton import render_kernel, render_module
    from kiln.runtime import triton_build as tb
    dt = np.dtype(dtype)
    rng = np.random.default_rng(1)
    vals = [inp(k, _values(dt, rng)) for k in "abc"]
    members = []
    for i, (fn, nin, out) in enumerate(_cases(dt)):
        if dt == np.float64 and template(fn, dt).startswith("libdevice.") and fn != "exp":
            continue   # float64 libdevice bodies take seconds each to compile; float32 has them all
        value = call(fn, dt, *vals[:nin], out=out)
        if fn == "where":
            value.fn = _where(vals, dt)
        members.append((node(f"o{i}", value), "row"))
    k = kernel(f"kiln_ops_{dtype}", Frame((1 << 20,)), [("loop", members)])
    rk = render_kernel(k, {})
    mod = tb.load_module(render_module("test", [rk]), k.name, interpret=False)
    _, constexprs, warps = rk.config()
    compiled = tb.TritonKernel(mod, k.name, rk.signature, constexprs, warps).compile(tb.SM90)
    assert compiled.asm["cubin"] and "fma" not in compiled.asm["ptx"].split("// begin inline asm")[0] \
        or dt.kind == "f"
    # float32 divides correctly rounded everywhere (floor_divide's quotient too):
    # Triton's `/` is arith.divf, within 2 ulp on the GPU (div.full.f32)
    assert dt != np.float32 or "arith.divf" not in compiled.asm["ttir"]


def test_triton_spells_every_scalar_function_an_op_asks_for():
    from .helpers import unspelled_scalar_functions
    assert not unspelled_scalar_functions(template, TL_TYPES)


def test_float_to_integer_casts_convert_as_numpy_on_x86():
    # NumPy's casts are C's as x86 computes them: the minimum of int32/int64 for NaN and
    # values out of range (1e10 -> -2**31 as int32), to (u)int8/16 through int32 keeping
    # the low bits (-1.0 -> 255 as uint8), to uint32/uint64 as its SIMD loop (-5.0 ->
    # 2**32 - 5). Triton's direct conversion is undefined out of range and PTX's saturates
    # (1e10 -> 2**31 - 1, NaN -> 0); the interpreter casts with NumPy, so the sm_90 TTIR
    # shows that every conversion is signed, of 32 or 64 bits, and selected only in range.
    import re
    from kiln.lowering.triton import render_kernel, render_module
    from kiln.runtime import triton_build as tb
    x = np.array([-1.0, 200.0, 300.0, -129.0, 70000.0, -2.5, 2.5, -5.0, 3e9, np.nan, np.inf, -np.inf,
                  1e10, -1e10, 1e19, -1e19, 2.0 ** 63])
    X, X32 = inp("x", x), inp("x32", x.astype(np.float32))
    dtypes = [np.uint8, np.int8, np.uint16, np.int16, np.int32, np.int64, np.uint32, np.uint64]

    def astype(src, dt):
        return pw(x.shape, dt, lambda ops, index: ops.cast(src.load(ops, index), src.buf.dtype, dt))
    members = [(node(f"o{i}_{j}", astype(src, dt)), "row") for i, dt in enumerate(dtypes)
               for j, src in enumerate((X, X32))]
    k = kernel("kiln_fused_astype_0", Frame(x.shape), [("loop", members)])
    with np.errstate(invalid="ignore", over="ignore"):
        _, _, outs = run(k, {}, {"x": x, "x32": x.astype(np.float32)})
        for i, dt in enumerate(dtypes):
            for j, src in enumerate((x, x.astype(np.float32))):
                # (uint32 of NaN, infinities and values past 2**32 or below -2**31: NumPy's
                # value depends on its SIMD path, the array's length)
                keep = slice(None, 9) if dt == np.uint32 else slice(None)
                want = np.tile(src, 4).astype(dt)[:src.size]   # (NumPy's SIMD loop)
                np.testing.assert_array_equal(outs[f"o{i}_{j}"][keep], want[keep], err_msg=np.dtype(dt).name)
    rk = render_kernel(k, {})
    mod = tb.load_module(render_module("test", [rk]), k.name, interpret=False)
    _, constexprs, warps = rk.config()
    ttir = tb.TritonKernel(mod, k.name, rk.signature, constexprs, warps).compile(tb.SM90).asm["ttir"]
    converted = re.findall(r"(%\S+) = arith\.fpto([su])i .* to tensor<\d+x(i\d+)>", ttir)
    assert {(kind, to) for _v, kind, to in converted} == {("s", "i32"), ("s", "i64")}, converted
    for v, _kind, _to in converted:
        assert re.search(rf"arith\.select %\S+, {re.escape(v)}, ", ttir), v
