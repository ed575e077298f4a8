"""Where the test suite's time goes, per test file: a pytest plugin and its report.

    python -m pytest -p benchmarks.suite_cost            # writes .suite_cost/<worker>.json
    python -m benchmarks.suite_cost [.suite_cost]        # the table, heaviest files first
    python -m benchmarks.suite_cost --tests [.suite_cost]  # the heaviest single tests

Per test file: kernel builds (kiln/runtime/build.py ``stats``), the worker's own CPU time
(capture, lowering, the tests' NumPy) and its child processes' CPU time (g++), and the
test count. CPU time, not wall time: on a loaded machine wall time says little (stop 44:
at a load average of 15 a Python loop took 11x its CPU time). The folder is
``$KILN_SUITE_COST_DIR`` or ``.suite_cost``.
"""
from __future__ import annotations

import glob
import json
import os
import sys

FOLDER = os.environ.get("KILN_SUITE_COST_DIR", ".suite_cost")
_files: dict = {}   # test file -> [builds, own CPU s, child CPU s, tests]
_tests: dict = {}   # test id -> [builds, own CPU s, child CPU s, 1]


def _cpu() -> tuple:
    t = os.times()
    return t.user + t.system, t.children_user + t.children_system


try:
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        from kiln.runtime import build
        builds, (own, child) = build.stats["builds"], _cpu()
        yield
        own2, child2 = _cpu()
        cost = [build.stats["builds"] - builds, own2 - own, child2 - child, 1]
        _tests[item.nodeid] = cost
        row = _files.setdefault(item.nodeid.split("::")[0], [0, 0.0, 0.0, 0])
        for i, v in enumerate(cost):
            row[i] += v
except ImportError:   # (the report needs no pytest)
    pass


def pytest_sessionfinish(session):
    os.makedirs(FOLDER, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(FOLDER, worker + ".json"), "w") as f:
        json.dump(_files, f)
    with open(os.path.join(FOLDER, worker + ".tests"), "w") as f:
        json.dump(_tests, f)


def report(folder: str = FOLDER, top: int = 40, tests: bool = False) -> str:
    """The heaviest test files (``tests``: single tests), by CPU seconds."""
    rows: dict = {}
    for path in glob.glob(os.path.join(folder, "*.tests" if tests else "*.json")):
        with open(path) as f:
            for name, row in json.load(f).items():
                rows[name] = [a + b for a, b in zip(rows.get(name, [0, 0.0, 0.0, 0]), row)]
    total = [sum(r[i] for r in rows.values()) for i in range(4)]
    lines = [f"{'test' if tests else 'test file':58s} {'builds':>6s} {'own s':>7s} {'g++ s':>7s} {'CPU s':>7s} {'tests':>6s}"]
    for name, r in sorted(rows.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))[:top]:
        lines.append(f"{name[-58:]:58s} {r[0]:6d} {r[1]:7.1f} {r[2]:7.1f} {r[1] + r[2]:7.1f} {r[3]:6d}")
    lines.append(f"{'all':58s} {total[0]:6d} {total[1]:7.1f} {total[2]:7.1f} {total[1] + total[2]:7.1f} {total[3]:6d}")
    return "\n".join(lines)


if __name__ == "__main__":
    args = sys.argv[1:]
    single = "--tests" in args
    args = [a for a in args if a != "--tests"]
    print(report(*args[:1], tests=single, top=60 if single else 40))
