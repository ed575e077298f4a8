"""Every test session compiles through one fresh on-disk kernel cache (reruns of the same
kernels inside the session load instead of compiling; ~/.cache/kiln is never touched).
The cost model (kiln/runtime/cost.py) is off, in subprocesses too (KILN_COST_MODEL=0):
tests compile their small examples to test the compiled path;
tests/runtime/test_cost_model.py turns it on."""
import atexit
import functools
import gc
import os
import shutil
import tempfile

import hypothesis.core
import pytest

import kiln
from kiln.config import config

# Test modules decorate functions while they are collected, before the session fixture
# runs (kiln.compile builds its small C helper then): that goes to a scratch cache too.
# (pytest-xdist's controller process collects but runs no test: the scratch cache goes at exit)
_COLLECT_CACHE = tempfile.mkdtemp(prefix="kiln-collect-cache-")
atexit.register(shutil.rmtree, _COLLECT_CACHE, ignore_errors=True)
_USER_CACHE = config.cache_dir
config.cache_dir = _COLLECT_CACHE


@pytest.fixture(autouse=True, scope="session")
def _kiln_session_cache(tmp_path_factory):
    old = _USER_CACHE, config.num_threads, config.cost_model
    config.cache_dir = str(tmp_path_factory.getbasetemp() / "kiln_cache")
    config.num_threads = 2
    config.cost_model = False
    env = os.environ.get("KILN_COST_MODEL")
    os.environ["KILN_COST_MODEL"] = "0"   # scripts the tests run in subprocesses too
    yield
    config.cache_dir, config.num_threads, config.cost_model = old
    if env is None:
        os.environ.pop("KILN_COST_MODEL", None)
    else:
        os.environ["KILN_COST_MODEL"] = env


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_call(item):
    """Hypothesis' pytest plugin (6.170) wraps a parametrized @given test's settings in a
    new ``Settings(parent=...)`` on every parametrization it runs, so a test function with
    ~950 cases in one process (an op table's) overflows the stack reading the chain
    (RecursionError in ``settings.database``). Each run starts from the settings the test
    was defined with."""
    fn = getattr(item, "obj", None)
    fn = getattr(fn, "__func__", fn)
    if fn is not None and hasattr(fn, "_hypothesis_internal_use_settings"):
        base = fn.__dict__.setdefault("_kiln_defined_settings", fn._hypothesis_internal_use_settings)
        fn._hypothesis_internal_use_settings = base
    yield


# Hypothesis (6.170) hashes a test function's source (inspect.getsource: the tokenizer over
# the whole function) on every run of a derandomized test, twice (its seed and its
# database key): for a parametrized @given test, once per parametrization of the same
# function. The op tables' ~4,000 runs spent ~10% of their time there. The digest of a
# function object cannot change within a session, so it is computed once per function.
hypothesis.core.function_digest = functools.lru_cache(maxsize=None)(hypothesis.core.function_digest)


# The cycle collector's full (generation 2) passes: a test's compile makes many objects
# that live past the young collections and die with the test (graphs, lowerings, code), and
# each such batch moved into generation 2 brings a full pass over a worker's whole heap
# nearer. With CPython's default (700, 10, 10) they were ~7-10% of the CPU of capture and
# program files (stop 61, -n 0, gc.callbacks: tests/capture/test_everyday_breaks*.py and
# test_resume_iterations.py 1.14 s of 11.8 s, 8 full passes; test_programs_real6.py 2.24 s
# of 30.7 s, 15); a full pass at most every 100 middle ones, not 10: 0.56 s, 1 full pass,
# max RSS 172 -> 165 MB. The young generations are collected as before. Tests only: a
# user's process keeps Python's settings (kiln sets none).
gc.set_threshold(700, 10, 100)


# pytest-xdist hands out whole files (--dist loadfile) one at a time to whichever worker is
# free. Its default order, the most tests first (--loadscope-reorder), left the files of a
# few slow tests (programs that each build kernels, subprocesses) for the end, where one
# worker ran the last of them while the other had nothing left. So the suite's costliest
# files (CPU seconds, `python -m pytest -p benchmarks.suite_cost` then
# `python -m benchmarks.suite_cost`) go first, in this order, and the cheap rest after them
# in collection order (pyproject.toml passes --no-loadscope-reorder); the order of the
# tests inside a file is kept.
HEAVY_FIRST = [
    "lowering/test_op_table_cpp.py", "test_programs.py", "test_programs_real4.py",
    "test_programs_real6.py", "test_fuzz_found.py", "test_programs_real5.py",
    "test_programs_real3.py", "ops/test_op_table.py", "lowering/test_selection_sums.py",
    "test_programs_grads.py", "lowering/test_triton_programs.py",
    "lowering/test_triton_backend.py", "test_programs_grads_apps.py",
    "test_programs_grads_real.py", "lowering/test_loops.py",
    "capture/test_python_numpy_scalar_mix.py", "lowering/test_pairwise_sum.py",
    "runtime/test_fp_owner_chains.py", "test_programs_apps.py", "runtime/test_workers.py",
    "aot/test_aot_gradients.py", "lowering/test_layouts.py", "test_programs_data.py",
    "test_programs_nptests.py", "runtime/test_fp_numpy_warnings.py",
    "lowering/test_reductions.py", "test_programs_npbench.py", "runtime/test_cache.py",
    "test_programs_apps_code.py", "fuzz/test_fuzz.py",
    # (stop 61: the heaviest of the files collected last, CPU s at -n 2 under suite_cost:
    # real22 30.6, real21 22.6, real23 20.6, realcode 18.9; the rest of them 0-11 s each)
    "test_programs_real22.py", "test_programs_real21.py", "test_programs_real23.py",
    "test_programs_realcode.py",
]


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    here = os.path.dirname(__file__)

    def file_rank(item):
        path = os.path.relpath(str(item.path), here).replace(os.sep, "/")
        return rank.get(path, len(rank))
    items.sort(key=file_rank)   # stable: the rest keep their order
