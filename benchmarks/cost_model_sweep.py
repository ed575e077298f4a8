"""Every program checked with the cost model ON (the user's default), at the tests' sizes and
scaled up, so that both sides of each of its decisions run.

    COST_SWEEP_LOG=failures.txt python -m pytest -n 2 -p benchmarks.cost_model_sweep \\
        tests/test_programs*.py -k "cpp and not dynamic" -q -p no:cacheprovider > sweep.log 2>&1

The tests turn the cost model off (tests/conftest.py: ``KILN_COST_MODEL=0``), so the
programs of tests/test_programs*.py are checked only where everything compiles. This pytest
plugin turns it back on for every test (after conftest's session fixture) and makes
``check_program`` (tests/test_programs.py: values, dtypes, shapes, exceptions, arguments
after the call, aliasing) check each program on its own calls and then on its first call's
arguments scaled x10, the small call again, scaled x30 and the small call again
(``benchmarks.slowdown_sweep.scaled``: arrays tiled along their dims of 2 or more), all
through one compiled function: small graphs priced out and run as Python, breaks whose
leading region runs as Python while the rest compiles, and entries that switch between
Python and compiled as their sizes change. Programs whose calls are factories (views of one
base) are checked on their own calls only. ``COST_SWEEP_SCALES=10,30`` sets the factors.
926 programs (their cpp case): 33 min with ``-n 2`` on a loaded 2-core machine (load ~15); run it in the background.
"""
from __future__ import annotations

import functools
import os
import sys

import pytest

from kiln.config import config

from .slowdown_sweep import scaled

SCALES = [int(s) for s in os.environ.get("COST_SWEEP_SCALES", "10,30").split(",") if s]


def schedule(calls: list) -> list:
    """``calls``, then the first plain call scaled by each factor, each followed by the small
    call again (small, large, small: an entry switching itself both ways). The calls added
    are factories (fresh arguments per side, ``_clone``: strides kept), so a program that
    appends to a list argument gets the list as it was."""
    from tests.test_programs import _clone
    out = list(calls)
    first = next((c for c in calls if not callable(c)), None)
    if first is None:
        return out
    for factor in SCALES:
        big = scaled(first, factor)
        if big is not None:
            out += [functools.partial(_fresh, _clone, arg) for arg in (big, first)]
    return out


def _fresh(clone, args):
    return clone(args, {})


@pytest.fixture(autouse=True)
def _cost_model_on(_kiln_session_cache, monkeypatch):
    monkeypatch.setattr(config, "cost_model", True)
    monkeypatch.setenv("KILN_COST_MODEL", "1")
    # tests/test_programs.py is imported twice: as the test module "test_programs" (tests/
    # has no __init__.py) and as "tests.test_programs" by the other program files
    for name in ("test_programs", "tests.test_programs"):
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "check_program"):
            check = module.__dict__.setdefault("_sweep_original", module.check_program)
            monkeypatch.setattr(module, "check_program", functools.partial(_swept, check))
    yield


def _swept(check, fn, calls, backend):
    check(fn, schedule(calls), backend)


def pytest_runtest_logreport(report):
    """Each failure as it happens, one line, to ``COST_SWEEP_LOG`` (the run takes half an hour)."""
    path = os.environ.get("COST_SWEEP_LOG")
    if path and report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        line = crash.message.splitlines()[0][:300] if crash else str(report.longrepr)[-300:]
        with open(path, "a") as f:
            f.write(f"{report.nodeid} | {line}\n")
