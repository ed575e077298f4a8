"""Every test session compiles through one fresh on-disk kernel cache (reruns of the same
kernels inside the session load instead of compiling; ~/.cache/kiln is never touched).
The cost model (kiln/runtime/cost.py) is off: tests compile their small examples to test
the compiled path; tests/runtime/test_cost_model.py turns it on."""
import pytest

import kiln
from kiln.config import config


@pytest.fixture(autouse=True, scope="session")
def _kiln_session_cache(tmp_path_factory):
    old = config.cache_dir, config.num_threads, config.cost_model
    config.cache_dir = str(tmp_path_factory.getbasetemp() / "kiln_cache")
    config.num_threads = 2
    config.cost_model = False
    yield
    config.cache_dir, config.num_threads, config.cost_model = old
