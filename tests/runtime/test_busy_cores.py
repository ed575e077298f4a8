"""A kernel library runs its kernels on the calling thread alone for a while after a helper
thread started a parallel region late (its core busy with another process: the region's end
would wait for it; cpp_prelude.h, "busy cores"). KILN_LATE_US sets the threshold when a
library loads; a negative one makes every helper late."""
import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import re, cffi, numpy as np, kiln
from kiln.runtime import cpp_backend
kiln.config.num_threads = 2
seen = []
def backend(graph, example_inputs):
    seen.append(cpp_backend(graph, example_inputs))
    return seen[-1]
def f(x):
    return np.exp(x) * 2.0 + 1.0
x = np.linspace(0.0, 1.0, 1 << 22)
compiled = kiln.compile(f, backend=backend)
np.testing.assert_allclose(compiled(x), f(x), rtol=1e-14)
[art] = [c.kiln_artifact for c in seen]
assert "kiln_arrived(launched)" in art.cpp and "omp parallel num_threads(nthreads)" in art.cpp
[path] = re.findall(r"load_library\('([^']+)'", art.wrapper)
ffi = cffi.FFI()
ffi.cdef("int kiln_team_now(int);")
lib = ffi.dlopen(path)
compiled(x)                    # (the back-off lasts 0.2 s from the late start)
print(lib.kiln_team_now(2))
"""


@pytest.mark.parametrize("late_us, team", [("-1", 1), ("1000000000", 2)])
def test_a_late_helper_makes_the_library_run_serially(tmp_path, late_us, team):
    env = dict(os.environ, KILN_LATE_US=late_us, KILN_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == str(team), out.stdout + out.stderr
