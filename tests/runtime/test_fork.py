"""Compiled functions in processes forked after a threaded kernel ran (multiprocessing's
"fork" start method, Linux's default before Python 3.14): GNU OpenMP's thread pool does
not survive fork(), and a child entering a parallel region from the forking thread waited
forever for its parent's workers. Kernels now run on one thread in a forked child
(cpp_prelude.h, runtime/loader.py), whether their library was loaded before the fork or
in the child. Each check runs in a fresh interpreter with a time limit: a hang fails it."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

_SCRIPT = textwrap.dedent("""
    import multiprocessing, sys
    import numpy as np
    import kiln

    @kiln.compile
    def energy(x):
        return (np.sin(x) * np.cos(x) + x * x).sum()

    @kiln.compile
    def spread(x):                      # first compiled in the children
        return np.sqrt(np.abs(x) + 1.0).max() - np.tanh(x).mean()

    def eager_energy(x):
        return (np.sin(x) * np.cos(x) + x * x).sum()

    def eager_spread(x):
        return np.sqrt(np.abs(x) + 1.0).max() - np.tanh(x).mean()

    def data(seed):
        return np.random.default_rng(seed).standard_normal(1_000_000)

    def work(seed):
        x = data(seed)
        return float(energy(x)), float(spread(x))

    if __name__ == "__main__":
        energy(data(0))                  # the parent's kernel runs on its threads
        with multiprocessing.get_context("fork").Pool(2) as pool:
            got = pool.map(work, [1, 2, 3])
        for seed, (e, s) in zip([1, 2, 3], got):
            x = data(seed)
            assert np.isclose(e, eager_energy(x), rtol=1e-12), (e, eager_energy(x))
            assert np.isclose(s, eager_spread(x), rtol=1e-12), (s, eager_spread(x))
        energy(data(4))                  # and the parent's threads still work
        print("forked children ok")
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_kernels_run_in_children_forked_after_a_threaded_kernel(tmp_path):
    script = tmp_path / "forks.py"
    script.write_text(_SCRIPT)
    env = dict(os.environ, KILN_NUM_THREADS="2", KILN_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)   # the hung children too
        proc.communicate()
        pytest.fail("a forked child hung in a compiled kernel")
    assert proc.returncode == 0, err[-3000:]
    assert "forked children ok" in out
