"""Kernel modules link without libstdc++ (kiln/runtime/build.py LINK_LIBS): what they
need must still resolve when the library is built, and a symbol nothing defines is a
BuildError naming it, not a library that fails to load later."""
import warnings

import numpy as np
import pytest

import kiln
from kiln.config import config
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
