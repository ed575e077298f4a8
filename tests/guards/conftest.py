"""The guard tests share the capture tests' probe harness (see tests/capture/conftest.py)."""
from capture.conftest import CountingBackend, _fresh_kiln, assert_same, probe, run_probe  # noqa: F401
