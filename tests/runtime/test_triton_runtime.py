"""The Triton runtime layer with hand-written kernels: the interpreter on NumPy arrays
(adapters, libdevice stand-ins, float64 scalars) against NumPy, the ahead-of-time compile
for sm_90 (int64 indexing visible in the TTIR), the cache dirs, and the device errors."""
import os

import numpy as np
import pytest

pytest.importorskip("triton")

from kiln.config import config
from kiln.errors import KilnError
from kiln.runtime import devices, triton_build as tb
from kiln.runtime.triton_interp import run_interpreted
from kiln.runtime.triton_launch import param_count

SOURCE = '''
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def kiln_axpy_exp(x, y, out, alpha, xnumel, XBLOCK: tl.constexpr):
    # out = exp(x) * alpha + y, with int64 offsets
    xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK).to(tl.int64)
    xmask = xindex < xnumel
    a = tl.load(x + xindex, xmask, other=0.0)
    b = tl.load(y + xindex, xmask, other=0.0)
    tl.store(out + xindex, libdevice.exp(a) * alpha + b, xmask)


@triton.jit
def kiln_axpy(x, y, out, alpha, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    a = tl.load(x + xindex, xmask)
    b = tl.load(y + xindex, xmask)
    tl.store(out + xindex, a * alpha + b, xmask)


@triton.jit
def kiln_max(a, b):
    return tl.where((a > b) | (a != a), a, b)


@triton.jit
def kiln_rowmax(x, out, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    row = tl.program_id(0)
    rindex = tl.arange(0, RBLOCK)
    rmask = rindex < rnumel
    v = tl.load(x + row * rnumel + rindex, rmask, other=float("-inf"))
    tl.store(out + row, tl.reduce(v, 0, kiln_max))
'''

SIG = {"x": "*fp64", "y": "*fp64", "out": "*fp64", "alpha": "fp64", "xnumel": "i64"}


def test_interpreter_runs_on_numpy_arrays_with_libdevice_and_fp64_scalars():
    mod = tb.load_module(SOURCE, "axpy", interpret=True)
    x = np.linspace(-2, 2, 37)
    y = np.arange(37.0)
    out = np.zeros(37)
    alpha = 1.0 + 2.0 ** -40        # not representable in float32
    run_interpreted(mod.kiln_axpy_exp, (3,), [x, y, out, alpha, 37], SIG, {"XBLOCK": 16})
    np.testing.assert_allclose(out, np.exp(x) * alpha + y, rtol=1e-15)
    assert out[0] != np.exp(x[0]) * np.float32(alpha) + y[0]


def test_interpreter_writes_into_strided_views_and_reductions():
    mod = tb.load_module(SOURCE, "axpy", interpret=True)
    x = np.random.default_rng(0).standard_normal((6, 10)).astype(np.float32)
    x[2, 3] = np.nan                             # NaN propagates, as in NumPy
    out = np.zeros(12, np.float32)[::2]          # every second element
    run_interpreted(mod.kiln_rowmax, (6,), [np.ascontiguousarray(x), out.base[:6], 10],
                    {"rnumel": "i32"}, {"XBLOCK": 1, "RBLOCK": 16})
    np.testing.assert_array_equal(out.base[:6], x.max(axis=1))


def test_module_source_lives_in_the_cache_dir_and_loads_once_per_mode():
    a = tb.load_module(SOURCE, "axpy", interpret=True)
    assert tb.load_module(SOURCE, "axpy", interpret=True) is a
    assert a.__file__.startswith(os.path.join(config.cache_dir, "triton", "src"))
    with open(a.__file__) as f:
        assert f.read() == SOURCE


def test_aot_compile_for_sm90_uses_int64_indexing_and_no_fma():
    mod = tb.load_module(SOURCE, "axpy", interpret=False)
    k = tb.compile_kernel(mod.kiln_axpy_exp, SIG, {"XBLOCK": 256}, target=tb.SM90, num_warps=4)
    ttir = k.asm["ttir"]
    assert "tensor<256xi64>" in ttir and "tt.get_program_id x : i32" in ttir
    assert "extsi" in ttir                      # program_id widened to int64
    assert "ex2.approx" not in k.asm["ptx"]     # libdevice exp, not the fast approximation
    # the kernel's 5 runtime arguments plus Triton's scratch pointers
    assert param_count(k.asm["ptx"]) >= 5
    assert k.metadata.num_warps == 4
    assert any(os.path.dirname(p).startswith(os.path.join(config.cache_dir, "triton", "cache"))
               for p in k.metadata_group.values())
    # compiled once per process: the same request is a dictionary hit
    assert tb.compile_kernel(mod.kiln_axpy_exp, SIG, {"XBLOCK": 256}, target=tb.SM90) is k


def test_no_fused_multiply_add():
    mod = tb.load_module(SOURCE, "axpy", interpret=False)
    k = tb.compile_kernel(mod.kiln_axpy, {"x": "*fp32", "y": "*fp32", "out": "*fp32",
                                          "alpha": "fp32", "xnumel": "i32"}, {"XBLOCK": 128})
    ptx = k.asm["ptx"]
    assert "fma" not in ptx and "mul.rn.f32" in ptx and "add.rn.f32" in ptx   # rounds twice


def test_int32_indexing_stays_int32():
    mod = tb.load_module(SOURCE, "axpy", interpret=False)
    k = tb.compile_kernel(mod.kiln_rowmax, {"x": "*fp32", "out": "*fp32", "rnumel": "i32"},
                          {"XBLOCK": 1, "RBLOCK": 16}, aligned=("x", "out"))
    assert "i64" not in k.asm["ttir"].split("tt.func")[1].split("tt.return")[0]
    assert "tt.divisibility = 16" in k.asm["ttir"]


def test_triton_on_numpy_arrays_is_a_clear_error_without_the_interpreter():
    with pytest.raises(KilnError, match="CuPy arrays on a GPU.*KILN_TRITON_INTERPRET=1"):
        devices.require_triton_device([np.zeros(3), 1.0], interpret=False)
    assert devices.require_triton_device([np.zeros(3)], interpret=True) == ("cpu", None)
    assert devices.where([1.0, "s"]) == ("cpu", None)


def test_mixing_numpy_and_cupy_raises_like_cupy():
    cupy = pytest.importorskip("cupy")
    with pytest.raises(TypeError, match="Unsupported type"):
        devices.where([np.zeros(3), cupy.zeros(3)])


def test_compiled_launch_without_cupy_names_the_fix():
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed here")
    except ImportError:
        pass
    mod = tb.load_module(SOURCE, "axpy", interpret=False)
    k = tb.TritonKernel(mod, "kiln_axpy_exp", SIG, {"XBLOCK": 256})
    with pytest.raises(KilnError, match="CuPy arrays on a GPU.*cupy-cuda1"):
        k((1,), np.zeros(4), np.zeros(4), np.zeros(4), 1.0, 4)


def test_the_gpu_check_runs_dry(monkeypatch, tmp_path):
    # benchmarks/gpu_check.py --dry-run, every section through Triton's interpreter on NumPy
    # arrays at tiny sizes: the script's own logic (imports, plans, helpers, the report),
    # not the GPU (which only a GPU run checks)
    import json

    from benchmarks import gpu_check
    monkeypatch.setattr(config, "triton_interpret", config.triton_interpret)   # main sets both
    monkeypatch.setattr(config, "cache_dir", config.cache_dir)
    monkeypatch.setattr(gpu_check, "INTERPRET", False)
    gpu_check.main(["--dry-run", "--out", str(tmp_path)])   # exits 1 naming what failed
    res = json.loads((tmp_path / "gpu_check.json").read_text())
    assert set(res["checks"]) == {"op table", "int8 > 2**31 elements", "reductions", "softmax/layernorm",
                                  "kiln.compile end to end", "capture"}
    assert set(res["perf"]) == {"bandwidth", "rows", "compile", "per call"}
    assert {"compile counts and guards", "graph break runs eagerly", "same errors as without kiln",
            "value_and_grad training step", "time-stepping loops (graph loop nodes)"} <= set(res["checks"]["capture"])
    assert all(v.get("ok") for v in res["checks"].values()), res["checks"]
    assert "| op table |" in (tmp_path / "gpu_check.md").read_text()


def test_the_gpu_check_survives_a_failing_section_and_its_budget(monkeypatch, tmp_path):
    # a section that raises, one still running when --budget runs out (interrupted), and
    # the sections after it (skipped): the JSON and the table say so, and it exits 1
    import json
    import time

    from benchmarks import gpu_check
    monkeypatch.setattr(config, "triton_interpret", config.triton_interpret)
    monkeypatch.setattr(config, "cache_dir", config.cache_dir)
    monkeypatch.setattr(gpu_check, "INTERPRET", False)
    monkeypatch.setattr(gpu_check, "op_table", lambda cupy: 1 / 0)
    monkeypatch.setattr(gpu_check, "big_int8", lambda cupy, quick: time.sleep(30))
    start = time.perf_counter()
    with pytest.raises(SystemExit) as exited:
        gpu_check.main(["--dry-run", "--out", str(tmp_path), "--budget", "1.5"])
    assert exited.value.code == 1 and time.perf_counter() - start < 20
    res = json.loads((tmp_path / "gpu_check.json").read_text())
    assert res["checks"]["op table"]["error"] == "ZeroDivisionError: division by zero"
    assert res["checks"]["int8 > 2**31 elements"]["error"].startswith("SectionTimeout")
    assert "time budget" in res["checks"]["reductions"]["skipped"] and "skipped" in res["perf"]["per call"]
    table = (tmp_path / "gpu_check.md").read_text()
    assert "| op table |" in table and "| per call |" in table


def test_a_warm_process_compiles_nothing(monkeypatch):
    # kernels compiled once are read back from kiln's cache dir: with the process's own
    # table cleared (as in a new process) and Triton's code generation made to fail, the
    # same kernel still loads
    from triton.backends.nvidia.compiler import CUDABackend
    mod = tb.load_module(SOURCE, "axpy", interpret=False)
    sig = {"x": "*fp32", "out": "*fp32", "rnumel": "i32"}
    first = tb.compile_kernel(mod.kiln_rowmax, sig, {"XBLOCK": 1, "RBLOCK": 32})
    tb.clear()

    def no_codegen(*args, **kwargs):
        raise AssertionError("compiled again")
    monkeypatch.setattr(CUDABackend, "add_stages", no_codegen)
    mod = tb.load_module(SOURCE, "axpy", interpret=False)
    again = tb.compile_kernel(mod.kiln_rowmax, sig, {"XBLOCK": 1, "RBLOCK": 32})
    assert again is not first and again.asm["cubin"] == first.asm["cubin"]
    assert all(os.path.dirname(p).startswith(os.path.join(config.cache_dir, "triton", "cache"))
               for p in again.metadata_group.values())


def test_device_follows_data():
    # the default backend hands graphs of device (CuPy) arrays to Triton, of NumPy
    # arrays to C++ (kiln/backends.py); the stand-in is a device array kind
    from capture.device_double import DeviceDouble

    from kiln.backends import BACKENDS
    from kiln.ir import trace
    from kiln.ops import F, TensorMeta
    from kiln.runtime.backend import cpp_backend
    from kiln.runtime.triton_backend import triton_backend
    x = np.linspace(0, 1, 8)
    g = trace(lambda x: (F.sin(x),), [TensorMeta(x.shape, x.dtype)], ["x"])
    assert BACKENDS["cpp"](g, [DeviceDouble(x)]).fw_compiler is triton_backend
    assert BACKENDS["cpp"](g, [x]).fw_compiler is cpp_backend
    # mixing the two raises as CuPy does; kiln never copies between host and device
    with pytest.raises(TypeError, match="Unsupported type"):
        devices.where([x, DeviceDouble(x)])
    with pytest.raises(ValueError, match="on GPUs \\[0, 1\\]"):
        devices.where([DeviceDouble(x), DeviceDouble(x, device=1)])
