"""The cache-hit path without Python-level per-argument work: kernels called through the C
launcher (kiln/runtime/launch.c), the wrapper's one-call layout check, and SimpleEntry
calling the compiled forward itself (kiln/guards/fastcheck.c)."""
import numpy as np
import pytest

import kiln
from kiln.aot.runtime import AOTFunction
from kiln.ir import trace
from kiln.ops import F, TensorMeta
from kiln.runtime import cpp_backend, launch


def _wrapper_globals(fn):
    return getattr(fn, "python_call", fn).__globals__   # (FastCall: the wrapper's call it runs)


def test_kernels_take_arrays_and_every_scalar_kind_through_the_launcher():
    if launch.module() is None:
        pytest.skip("the launcher extension does not build here")

    def f(x, y, a, b):
        return x * np.float32(a) + y * b, (x + b) * a

    x = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]   # strided
    y = np.arange(6, dtype=np.float32).reshape(3, 2)
    compiled = kiln.compile(f, backend="cpp")
    for a, b in ((0.5, 3), (-2.25, -7), (1e30, 2 ** 40)):
        got, want = compiled(x, y, a, b), f(x, y, a, b)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6)
            assert g.dtype == w.dtype


def test_the_launcher_is_bound_and_its_fallback_is_the_cffi_path():
    if launch.module() is None:
        pytest.skip("the launcher extension does not build here")
    g = trace(lambda x: F.add(F.multiply(x, 2.0), 1.0), [TensorMeta((5,), np.float64)], ["x"])
    fn = cpp_backend(g, [np.zeros(5)])
    wrapper = fn.kiln_artifact.wrapper
    assert "_bind(_lib, _ffi, " in wrapper and "_fb(" not in wrapper
    kernels = [v for k, v in _wrapper_globals(fn).items() if k.startswith("kiln_fused")]
    assert kernels and all(type(k).__name__ == "Launcher" for k in kernels)
    kernel = kernels[0]
    assert kernel.codes == "ppi"
    x, out = np.arange(5.0), np.empty(5)
    kernel(x, out, 1)
    np.testing.assert_array_equal(out, x * 2 + 1)
    # not an ndarray: the cffi path converts it (a writable buffer) ...
    raw = bytearray(np.arange(5.0).tobytes())
    kernel(raw, out, 1)
    np.testing.assert_array_equal(out, x * 2 + 1)
    # ... or raises as it did; an int beyond C int is cffi's OverflowError
    with pytest.raises(TypeError):
        kernel(3, out, 1)
    with pytest.raises(OverflowError):
        kernel(x, out, 2 ** 40)


def test_tiny_kernels_keep_the_gil_and_large_ones_release_it():
    """A kernel of a few hundred operations takes less time than releasing the GIL and
    taking it back; one whose work is large, or unknown when it is built, releases it."""
    if launch.module() is None:
        pytest.skip("the launcher extension does not build here")
    for n, keep in ((5, True), (100_000, False)):
        g = trace(lambda x: F.add(F.multiply(x, 2.0), 1.0), [TensorMeta((n,), np.float64)], ["x"])
        fn = cpp_backend(g, [np.zeros(n)])
        kernels = [v for k, v in _wrapper_globals(fn).items() if k.startswith("kiln_fused")]
        assert [k.keep_gil for k in kernels] == [keep]
        x = np.arange(float(n))
        np.testing.assert_array_equal(fn(x)[0], x * 2 + 1)


def test_small_kernels_of_costly_calls_keep_the_gil_as_numpys_loops_do():
    """np.sin of 8 float64 elements (glibc's scalar sin: 1000 statements an element) runs
    holding the GIL, as NumPy's own loop does below 500 elements; 600 elements release it."""
    if launch.module() is None:
        pytest.skip("the launcher extension does not build here")
    for n, keep in ((8, True), (600, False)):
        g = trace(lambda x: F.add(F.multiply(F.sin(x), 2.0), 1.0), [TensorMeta((n,), np.float64)], ["x"])
        fn = cpp_backend(g, [np.zeros(n)])
        kernels = [v for k, v in _wrapper_globals(fn).items() if k.startswith("kiln_fused")]
        assert [k.keep_gil for k in kernels] == [keep]
        x = np.linspace(-3.0, 3.0, n)
        np.testing.assert_allclose(fn(x)[0], np.sin(x) * 2 + 1, rtol=1e-15)


def test_the_layout_check_compares_every_input_in_one_call():
    check = launch.layouts(((2, 3), (24, 8)), ((3,), (8,)))
    a, b = np.zeros((2, 3)), np.zeros(3)
    assert check(a, b)
    assert not check(a.T.copy().T, b)            # same shape, other strides
    assert not check(np.zeros((3, 2)), b)
    assert not check(a, np.zeros(4))
    assert not check(a, np.zeros((3, 1)))

    class Shaped:                                 # not an ndarray: read its attributes
        shape, strides = (3,), (8,)
    assert check(a, Shaped())


def _sin_times(x, y):
    return np.sin(x) * y + 1.0


def _sin_times_ratio(x, a, b):
    return np.sin(x) * (a / b) + 1.0


@pytest.mark.parametrize("fn, scalars", [(_sin_times, (np.full(6, 0.5),)), (_sin_times_ratio, (1.0, 2.0))])
def test_a_cache_hit_on_plain_arrays_skips_the_aot_wrapper(fn, scalars, monkeypatch):
    # _sin_times: SimpleEntry calls the compiled forward itself; _sin_times_ratio computes
    # a / b in its Python body first, which calls the graph through fastcheck's GraphCall,
    # taking the same short path from C. A Tensor goes the AOT way (autograd).
    from kiln.guards import fastcheck
    if fastcheck.module() is None:
        pytest.skip("the fast guards do not build here")
    x = np.arange(6.0)
    compiled = kiln.compile(fn, backend="cpp")
    compiled(x, *scalars)
    compiled(x, *scalars)
    calls = []
    real = AOTFunction.__call__

    def counting(self, *args):
        calls.append(args)
        return real(self, *args)
    monkeypatch.setattr(AOTFunction, "__call__", counting)
    np.testing.assert_allclose(compiled(x, *scalars), fn(x, *scalars))
    assert calls == []
    t = kiln.Tensor(x, requires_grad=True)
    out = compiled(t, *scalars)
    assert len(calls) == 1
    out.sum().backward()
    np.testing.assert_allclose(t.grad, np.cos(x) * 0.5)


def test_the_error_mode_check_follows_every_change_of_numpy_mode():
    from kiln.runtime import fpmode
    checks = [fpmode.numpy_errors_trapped, fpmode._numpy_errors_trapped]
    if launch.module() is not None:
        assert type(checks[0]).__name__ == "ErrorMode"
    for check in checks:
        assert check() is False
        with np.errstate(over="raise"):
            assert check() is True
            with np.errstate(over="warn"):
                assert check() is False
            assert check() is True
        assert check() is False
        old = np.seterr(invalid="call")
        try:
            assert check() is True
        finally:
            np.seterr(**old)
        assert check() is False


_NO_CFFI_CHILD = """
import sys
import numpy as np
import kiln
f = kiln.compile(lambda x: np.maximum(np.sin(x) + np.cos(x), 0.0) * 2.0)
x = np.linspace(-3.0, 3.0, 1001)
assert np.allclose(f(x), np.maximum(np.sin(x) + np.cos(x), 0.0) * 2.0)


def decay(a):     # a loop node: its runner calls the library through the launcher
    m = a[0]
    for i in range(1, a.shape[0]):
        m = 0.5 * m + a[i]
    return m


from kiln.ops.loops import stats
assert kiln.compile(decay)(x) == decay(x) and stats["native"] == 1
print(sorted(m for m in ("cffi", "pycparser") if m in sys.modules))
"""


def test_a_fresh_process_calls_its_kernels_without_cffi_parsing_their_declarations(tmp_path):
    # runtime/loader.py: the launcher reaches kernels by address (ctypes), so the first
    # compile of a process does not import pycparser for cffi's cdef (~20 ms cold); nor
    # does a loop node's runner (its cffi call is looked up only where it runs: 65-115 ms)
    import os
    import subprocess
    import sys
    if launch.module() is None:
        pytest.skip("the launcher extension does not build here")
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path), KILN_COST_MODEL="0")
    out = subprocess.run([sys.executable, "-c", _NO_CFFI_CHILD], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_the_cffi_call_is_built_when_the_launcher_first_falls_back():
    from kiln.runtime.loader import Library
    if launch.module() is None:
        pytest.skip("the launcher extension does not build here")
    g = trace(lambda x: F.multiply(x, 3.0), [TensorMeta((4,), np.float64)], ["x"])
    fn = cpp_backend(g, [np.zeros(4)])
    glob = _wrapper_globals(fn)
    lib = glob["_lib"]
    assert isinstance(lib, Library) and lib._cffi is None   # nothing parsed yet
    kernel = next(v for k, v in glob.items() if k.startswith("kiln_fused"))
    out = np.empty(4)
    kernel(bytearray(np.arange(4.0).tobytes()), out, 1)     # not an ndarray: the cffi path
    np.testing.assert_array_equal(out, np.arange(4.0) * 3)
    assert lib._cffi is not None


_LOOP_CHILD = """
import sys
import numpy as np
import kiln


def decay(a):
    m = a[0]
    for i in range(1, a.shape[0]):
        m = 0.5 * m + a[i]
    return m


x = np.linspace(-3.0, 3.0, 1001)
assert kiln.compile(decay)(x) == decay(x)
print("kiln.lowering.cpp" in sys.modules)
"""


def test_a_loop_found_in_the_cache_does_not_import_the_kernel_lowering(tmp_path):
    # (build.flags(), which every build's key reads, took its -fno-builtin list from
    # lowering/cpp.py: 27-99 ms of a cached loop function's first call)
    import os
    import subprocess
    import sys
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path), KILN_COST_MODEL="0")
    runs = [subprocess.run([sys.executable, "-c", _LOOP_CHILD], capture_output=True, text=True,
                           env=env, timeout=300) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[-1].stderr[-2000:]
    assert [r.stdout.split()[-1] for r in runs] == ["True", "False"]


def test_the_plain_entry_hands_every_scalar_kind_to_the_packed_one(monkeypatch):
    # lowering/cpp.py packed_entry: a kernel's code is <name>_entry, inlined into its packed
    # entry alone (the launcher's); the plain entry (cffi's: KILN_FAST_GUARDS=0, an argument
    # the launcher does not convert) packs its arguments into slots and calls the packed
    # one. GCC compiled the entry twice before (on its own and inlined into the packed one).
    def f(x, y, a, b, c, h):   # a float, an int, a bool and a float32 scalar
        return np.where(c, x * h + a, y - b), (x + b) * a

    seen = []

    def backend(graph, example_inputs):
        seen.append(cpp_backend(graph, example_inputs))
        return seen[-1]

    x = np.linspace(-2.0, 2.0, 12, dtype=np.float32).reshape(3, 4)
    y = x[::-1, ::2].copy()[:, :1] * 3
    calls = [(x, y, 0.75, 3, True, np.float32(1.5)), (x, y, -2.5, -(2 ** 40), False, np.float32(-0.25))]
    fast = kiln.compile(f, backend=backend)
    wants = [f(*args) for args in calls]
    for args, want in zip(calls, wants):
        for g, w in zip(fast(*args), want):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype
    [art] = [fn.kiln_artifact for fn in seen]
    names = art.kernel_names
    assert names and all(art.cpp.count(f"{name}_entry(") == 2 and        # defined; packed calls it
                         f"    {name}_packed(a);\n}}" in art.cpp for name in names), art.cpp
    # (a kernel of 12 elements never takes threads: its code names no parallel region, which
    # GCC outlined and compiled before it could see that it never runs)
    assert "#pragma omp parallel" not in art.cpp, art.cpp
    monkeypatch.setattr(kiln.config, "fast_guards", False)   # every kernel through cffi: the plain entry
    plain = kiln.compile(f, backend=backend)
    for args, want in zip(calls, wants):
        for g, w in zip(plain(*args), want):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype
    kernels = [v for k, v in _wrapper_globals(seen[-1]).items() if k.startswith("kiln_fused")]
    assert kernels and all(type(k).__name__ != "Launcher" for k in kernels)
