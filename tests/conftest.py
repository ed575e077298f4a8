"""Every test session compiles through one fresh on-disk kernel cache (reruns of the same
kernels inside the session load instead of compiling; ~/.cache/kiln is never touched)."""
import pytest

import kiln
from kiln.config import config


@pytest.fixture(autouse=True, scope="session")
def _kiln_session_cache(tmp_path_factory):
    old = config.cache_dir, config.num_threads
    config.cache_dir = str(tmp_path_factory.getbasetemp() / "kiln_cache")
    config.num_threads = 2
    yield
    config.cache_dir, config.num_threads = old
