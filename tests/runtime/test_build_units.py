"""A module of many or long kernels builds as several translation units compiled in
parallel and linked into one library (lowering/cpp.py ``module_units``, runtime/build.py)."""
import warnings

import numpy as np
import pytest

import kiln
from kiln.config import config
from kiln.lowering.cpp import UNIT_CHARS, RenderedKernel, module_units, render_module
from kiln.runtime import build as build_mod


def _kernels(n, chars):
    body = "// " + "x" * chars + "\n"
    return [RenderedKernel(f"k{i}", body + f'extern "C" void k{i}(void) {{}}\n', "") for i in range(n)]


def test_units_are_whole_modules_holding_every_kernel_once_in_order():
    kernels = _kernels(40, 2000)
    units = module_units("g", kernels, jobs=4)
    assert len(units) == 4
    assert all("union kiln_slot" in u for u in units)   # each has the prelude
    found = [f"k{i}" for u in units for i in range(40) if f'void k{i}(void)' in u]
    assert found == [f"k{i}" for i in range(40)]
    assert max(map(len, units)) < 2 * min(map(len, units))   # balanced by text length


@pytest.mark.parametrize("n, chars, jobs", [(40, 2000, 1), (1, 100000, 8), (3, UNIT_CHARS // 4, 8)])
def test_one_unit_when_one_job_one_kernel_or_little_text(n, chars, jobs):
    kernels = _kernels(n, chars)
    assert module_units("g", kernels, jobs) == [render_module("g", kernels)]


def floyd_warshall(path):
    # "+ k": each step's kernel differs in a constant, not only in its offsets (which
    # would share one build: lowering/renderer.py share_identical), so the module is long
    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]) + k)
    return path.sum()


def test_a_module_built_in_units_gives_numpys_results(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(config, "num_threads", 3)
    seen = []
    real = build_mod._compile_units

    def spy(cxx, units, folder, tmp, *rest, **kwargs):
        seen.append(len(units))
        return real(cxx, units, folder, tmp, *rest, **kwargs)
    monkeypatch.setattr(build_mod, "_compile_units", spy)
    path = np.random.default_rng(0).integers(1, 100, (24, 24)).astype(np.int32)
    want = path.copy()
    expected = floyd_warshall(want)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a failed link falls back with a warning
        got = kiln.compile(floyd_warshall)(path)
    assert seen == [3]
    assert got == expected and type(got) is type(expected)
    np.testing.assert_array_equal(path, want)


def test_a_unit_g_plus_plus_rejects_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    with pytest.raises(build_mod.BuildError, match="translation unit 2 of 2"):
        build_mod.build("// a module no one builds as one", units=lambda: ["int ok;", "int broken = ;"])
    leftovers = [p for p in tmp_path.rglob(".tmp-*")]
    assert not leftovers
