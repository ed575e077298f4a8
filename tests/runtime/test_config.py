"""kiln.config's defaults from the environment (docs/env_vars.md)."""
import os

import pytest

from kiln.config import Config


def _threads(monkeypatch, env: dict, cpus=None) -> int:
    for name in ("KILN_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if cpus is not None:
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)), raising=False)
    return Config().num_threads


def test_kernel_threads_follow_the_cpus_this_process_may_use(monkeypatch):
    # taskset -c 0 on a 2-core machine: os.cpu_count() is 2, but a second thread would
    # only wait for the first one's core at every parallel region
    assert _threads(monkeypatch, {}, cpus=1) == 1
    assert _threads(monkeypatch, {}, cpus=3) == 3


def test_omp_num_threads_and_kiln_num_threads(monkeypatch):
    assert _threads(monkeypatch, {"OMP_NUM_THREADS": "1"}, cpus=4) == 1     # a pool's workers
    assert _threads(monkeypatch, {"OMP_NUM_THREADS": "3,2"}, cpus=4) == 3   # nested: the outer
    assert _threads(monkeypatch, {"OMP_NUM_THREADS": "garbage"}, cpus=4) == 4
    assert _threads(monkeypatch, {"OMP_NUM_THREADS": "1", "KILN_NUM_THREADS": "2"}, cpus=4) == 2
    with pytest.raises(ValueError, match="KILN_NUM_THREADS='two' is not an integer"):
        _threads(monkeypatch, {"KILN_NUM_THREADS": "two"})


def test_switches_read_on_and_off_and_refuse_anything_else(monkeypatch):
    for raw, value in (("1", True), ("On", True), ("yes", True), ("0", False), ("off", False),
                       (" FALSE ", False), ("", True)):
        monkeypatch.setenv("KILN_COST_MODEL", raw)
        assert Config().cost_model is value, raw
    # a typo must not silently turn a switch off
    monkeypatch.setenv("KILN_COST_MODEL", "banana")
    with pytest.raises(ValueError, match="KILN_COST_MODEL='banana' is not a switch; set it to 1"):
        Config()


def test_every_kiln_variable_read_from_the_environment_is_documented():
    # docs/env_vars.md is the one list of KILN_* variables (kiln's, the suite's, the
    # benchmarks'): a new os.environ.get("KILN_...") / getenv / config _env_* read must add its row
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parents[2]
    read = re.compile(r"""(?:environ(?:\.get)?\s*[(\[]|getenv\s*\(|_env_[a-z]+\s*\()\s*["'](KILN_[A-Z0-9_]+)""")
    names = set()
    for folder in ("kiln", "benchmarks", "tests"):
        for path in (root / folder).rglob("*"):
            if path.suffix in (".py", ".c", ".h") and "__pycache__" not in path.parts:
                names.update(read.findall(path.read_text(encoding="utf-8", errors="replace")))
    assert len(names) > 20, names    # the pattern still finds config.py's reads
    documented = (root / "docs" / "env_vars.md").read_text(encoding="utf-8")
    missing = sorted(n for n in names if f"`{n}`" not in documented)
    assert not missing, f"KILN_* variables read but not in docs/env_vars.md: {missing}"
