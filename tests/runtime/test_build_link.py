"""Kernel modules link without libstdc++ (kiln/runtime/build.py LINK_LIBS): what they
need must still resolve when the library is built, and a symbol nothing defines is a
BuildError naming it, not a library that fails to load later."""
import re
import warnings

import numpy as np
import pytest

import kiln
from kiln.config import config
from kiln.lowering.svml import kernels_call_svml
from kiln.runtime import build as build_mod

def test_a_kernel_with_a_parallel_region_builds(tmp_path, monkeypatch):
    # (compiled with exceptions on, a parallel region that calls the kernel's body per
    # chunk references libstdc++'s personality routine: the build failed, and kiln ran
    # the graph with NumPy)
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))

    def f(x):   # (a sin/cos chain's region does not reference it; this one did)
        y = np.empty(4 * x.shape[0])
        y[:x.shape[0]] = x
        y[x.shape[0]:] = np.repeat(x, 3)
        return y

    x = np.arange(300_000.0)
    compiled = kiln.compile(f)
    before = build_mod.stats["builds"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(compiled(x), f(x), rtol=1e-12)
    assert build_mod.stats["builds"] == before + 1
    source = "".join(open(p).read() for p in tmp_path.glob("kernels/*/*.cpp"))
    assert "omp parallel" in source


def test_an_undefined_symbol_is_a_build_error(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    source = 'extern "C" double kiln_no_such_function(double);\n' \
             'extern "C" double f(double x) { return kiln_no_such_function(x); }\n'
    with pytest.raises(build_mod.BuildError, match="kiln_no_such_function"):
        build_mod.build(source)



def _needs_gold():
    import shutil
    if shutil.which("ld.gold") is None:
        pytest.skip("no ld.gold here: kernels link through the driver")


def _load(path, declaration, name):
    import cffi
    ffi = cffi.FFI()
    ffi.cdef(declaration)
    return getattr(ffi.dlopen(path), name)


def test_the_linker_runs_without_the_driver_where_gold_is(tmp_path, monkeypatch):
    # (build.link_command: the driver's collect2 line from `g++ -###`, run by ld.gold;
    # kept on disk under the compiler and the flags)
    import subprocess
    _needs_gold()
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    command = build_mod.link_command(["g++"])
    assert command[0].endswith("ld.gold") and "-lgomp" in command and "--no-undefined" in command
    assert list(tmp_path.glob("linkers/*"))
    ran, original = [], subprocess.run

    def spy(cmd, *args, **kwargs):
        ran.append(cmd[0])
        return original(cmd, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", spy)
    path = build_mod.build('extern "C" double kiln_twice(double x) { return 2 * x; }\n')
    assert ran == [command[0]]          # (g++ -c runs by Popen) the link is gold's alone
    assert _load(path, "double kiln_twice(double);", "kiln_twice")(21.0) == 42.0


def test_a_direct_link_that_fails_is_done_by_the_driver_and_not_tried_again(tmp_path, monkeypatch):
    _needs_gold()
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(build_mod, "_direct_link_failed", set())
    real = build_mod.link_command
    monkeypatch.setattr(build_mod, "link_command", lambda cxx: real(cxx) and
                        ["false", build_mod._OBJECTS, "-o", build_mod._OUTPUT])
    path = build_mod.build('extern "C" int kiln_seven(void) { return 7; }\n')
    assert _load(path, "int kiln_seven(void);", "kiln_seven")() == 7
    assert build_mod._direct_link_failed == {"g++"}
    assert real(["g++"]) is None


def test_modules_link_one_support_object_and_keep_their_own_state(tmp_path, monkeypatch):
    # (the fork handler and the busy-core state are compiled once into the support object,
    # not into every module; each library still has its own copy: a late helper thread
    # backs off only the library it was late in)
    import ctypes
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setenv("KILN_LATE_US", "-1")   # every helper is late (read when a library loads)
    f = kiln.compile(lambda x: np.sin(x) * 2.0)
    g = kiln.compile(lambda x: np.cos(x) + 1.0)
    x = np.linspace(0.0, 1.0, 300_000)
    np.testing.assert_allclose(f(x), np.sin(x) * 2.0, rtol=1e-15)   # (libmvec: 1 ulp)
    small = x[:10]   # (too little work for a parallel region: no helper thread)
    np.testing.assert_allclose(g(small), np.cos(small) + 1.0, rtol=1e-15)
    (support,) = tmp_path.glob("support/*.o")
    assert "kiln_watch_fork" in support.with_suffix(".cpp").read_text()
    libraries = sorted(tmp_path.glob("kernels/*/*.so"))
    assert len(libraries) == 2
    for so in libraries:
        assert "kiln_watch_fork" not in so.with_suffix(".cpp").read_text()
    first, second = (ctypes.CDLL(str(so)) for so in libraries)   # (the loaded libraries)
    for lib in (first, second):
        lib.kiln_team_now.restype = ctypes.c_int
        lib.kiln_team_now.argtypes = [ctypes.c_int]
    # (a back-off lasts KILN_SERIAL_US, 200 ms: building g under load can take longer, so
    # run f's parallel region again just before reading both libraries' state)
    f(x)
    late = [lib.kiln_team_now(2) for lib in (first, second)]
    assert sorted(late) == [1, 2], late


@pytest.mark.skipif(not kernels_call_svml(config.cxx_flags),
                    reason="NumPy's loops do not call SVML on this CPU, or kiln's flags build no AVX-512 code")
def test_a_module_links_the_vector_math_objects_its_kernels_call_and_no_others(tmp_path, monkeypatch):
    # (NumPy's vector math functions were all one support object, ~1.1-1.5 s of g++ that a
    # first softmax waited for; each is an object of its own now, built where a module
    # calls it: float64 exp's (kiln_exp), float32 power's, the base every module links)
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    x = np.linspace(0.5, 2.0, 40)
    f = kiln.compile(lambda x: np.exp(x) * 2.0)
    g = kiln.compile(lambda x, y: np.power(x, y) - 1.0)
    assert np.array_equal(f(x), np.exp(x) * 2.0)
    x32, y32 = x.astype(np.float32), np.ascontiguousarray(x[::-1], np.float32)
    assert np.array_equal(g(x32, y32), np.power(x32, y32) - np.float32(1.0))
    entry = re.compile(r"^extern \"C\" .* (?:float|double) (kiln_np_\w+)\(", re.M)
    defined = sorted(sorted(set(entry.findall(o.with_suffix(".cpp").read_text())))
                     for o in tmp_path.glob("support/*.o"))
    assert defined == [[], ["kiln_np_exp"], ["kiln_np_powf"]], defined
