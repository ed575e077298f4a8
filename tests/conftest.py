"""Every test session compiles through one fresh on-disk kernel cache (reruns of the same
kernels inside the session load instead of compiling; ~/.cache/kiln is never touched).
The cost model (kiln/runtime/cost.py) is off, in subprocesses too (KILN_COST_MODEL=0):
tests compile their small examples to test the compiled path;
tests/runtime/test_cost_model.py turns it on."""
import atexit
import os
import shutil
import tempfile

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
