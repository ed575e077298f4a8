"""Where the test suite's time goes, per test file: a pytest plugin and its report.

    python -m pytest -p benchmarks.suite_cost            # writes .suite_cost/<worker>.json
    python -m benchmarks.suite_cost [.suite_cost]        # the table, heaviest files first
    python -m benchmarks.suite_cost --tests [.suite_cost]  # the heaviest single tests

Per test file: kernel builds (kiln/runtime/build.py ``stats``), the worker's own CPU time
(capture, lowering, the tests' NumPy) and its child processes' CPU time (g++), and the
test count. CPU time first: on a loaded machine wall time says little (stop 44: at a load
average of 15 a Python loop took 11x its CPU time). Beside it, the wall time, split into
``blocked``: sampled (every 20 ms, ``/proc``), the time when no thread of the worker and
none of its descendant processes (g++, a Python a test started) was runnable: a sleep, a
lock, I/O, a wait on something outside; the time a core sits idle on an idle machine,
however loaded this one is; and ``load s``, the rest of the wall time that was not CPU:
waiting for a core (this machine's load; on an idle one the two workers' own threads and
g++ runs crowding two cores). ``python -m benchmarks.suite_cost --wait`` lists the files by
``blocked``, what they waited in (the last wait each test was seen in: the main thread's
kernel wait channel, the children then alive),
and each worker's timeline: its start (imports, collection), its tests, the gaps between
them (xdist handing out files), how long it sat idle at the end while the other worker
finished. The folder is ``$KILN_SUITE_COST_DIR`` or ``.suite_cost``.
"""
from __future__ import annotations

import glob
import json
import os
import sys
import time

FOLDER = os.environ.get("KILN_SUITE_COST_DIR", ".suite_cost")
_files: dict = {}   # test file -> [builds, own CPU s, child CPU s, tests, wall s, blocked s]
_tests: dict = {}   # test id -> [builds, own CPU s, child CPU s, 1, wall s, blocked s]
_timeline: list = []   # [test id, start, end] (time.time())
_blocked_on: dict = {}   # "test file | what the worker waited in" -> blocked s
_START = [0.0]
_WIDTH = 6


class _Sampler:
    """A thread that looks every ``period`` s at this process's threads and its descendant
    processes' (``/proc``): when none is runnable (state R: on a core or waiting for one),
    the time since its last look counts as blocked (a sleep, a lock, I/O, a child that
    itself waits): time a core would sit idle on an idle machine, however loaded this one
    is. ``blocked`` only grows; ``what`` names the last wait (the main thread's kernel
    wait channel, the descendants' names)."""

    def __init__(self, period: float = 0.02) -> None:
        import threading
        self.blocked, self.what, self._period = 0.0, "", period
        self._me = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="suite_cost sampler")
        self._thread.start()

    @staticmethod
    def _states(pid: int, skip: int | None = None) -> list:
        out = []
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return out
        for task in tasks:
            if skip is not None and int(task) == skip:
                continue
            try:
                with open(f"/proc/{pid}/task/{task}/stat") as f:
                    stat = f.read()
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    kids = f.read().split()
            except OSError:
                continue
            out.append((stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2], kids))
        return out

    def _runnable(self) -> bool:
        pids, names = [os.getpid()], []
        while pids:
            pid = pids.pop()
            for name, state, kids in self._states(pid, self._me if pid == os.getpid() else None):
                if state == "R":
                    return True
                if pid != os.getpid():
                    names.append(name)
                pids += [int(k) for k in kids]
        try:
            with open("/proc/self/wchan") as f:
                wchan = f.read()
        except OSError:
            wchan = "?"
        self.what = " ".join([wchan or "?"] + sorted(set(names)))
        return False

    def _run(self) -> None:
        import threading
        self._me = threading.get_native_id()
        last = time.perf_counter()
        while True:
            time.sleep(self._period)
            runnable = self._runnable()
            now = time.perf_counter()
            if not runnable:
                self.blocked += now - last
            last = now


_SAMPLER: list = []


def _blocked() -> float:
    if not _SAMPLER and os.path.isdir("/proc/self/task"):
        _SAMPLER.append(_Sampler())
    return _SAMPLER[0].blocked if _SAMPLER else 0.0


def _cpu() -> tuple:
    t = os.times()
    return t.user + t.system, t.children_user + t.children_system, time.perf_counter(), _blocked()


try:
    import pytest

    def pytest_sessionstart(session):
        _START[0] = time.time()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        from kiln.runtime import build
        builds, (own, child, wall, blocked), start = build.stats["builds"], _cpu(), time.time()
        yield
        own2, child2, wall2, blocked2 = _cpu()
        cost = [build.stats["builds"] - builds, own2 - own, child2 - child, 1, wall2 - wall,
                blocked2 - blocked]
        _tests[item.nodeid] = cost
        _timeline.append([item.nodeid, start, time.time()])
        name = item.nodeid.split("::")[0]
        row = _files.setdefault(name, [0, 0, 0.0, 0, 0.0, 0.0])
        for i, v in enumerate(cost):
            row[i] += v
        if cost[5] > 0:
            key = f"{name} | {_SAMPLER[0].what}"
            _blocked_on[key] = _blocked_on.get(key, 0.0) + cost[5]
except ImportError:   # (the report needs no pytest)
    pass


def pytest_sessionfinish(session):
    os.makedirs(FOLDER, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(FOLDER, worker + ".json"), "w") as f:
        json.dump(_files, f)
    with open(os.path.join(FOLDER, worker + ".tests"), "w") as f:
        json.dump(_tests, f)
    with open(os.path.join(FOLDER, worker + ".timeline"), "w") as f:
        json.dump({"start": _START[0], "end": time.time(), "tests": _timeline}, f)
    with open(os.path.join(FOLDER, worker + ".waits"), "w") as f:
        json.dump(_blocked_on, f)


def _rows(folder: str, ext: str) -> dict:
    rows: dict = {}
    for path in glob.glob(os.path.join(folder, ext)):
        with open(path) as f:
            for name, row in json.load(f).items():
                row = row + [0.0] * (_WIDTH - len(row))   # (files an older plugin wrote)
                rows[name] = [a + b for a, b in zip(rows.get(name, [0] * _WIDTH), row)]
    return rows


def report(folder: str = FOLDER, top: int = 40, tests: bool = False) -> str:
    """The heaviest test files (``tests``: single tests), by CPU seconds."""
    return _table(_rows(folder, "*.tests" if tests else "*.json"), top, tests,
                  lambda r: -(r[1] + r[2]))


def _table(rows: dict, top: int, tests: bool, key) -> str:
    total = [sum(r[i] for r in rows.values()) for i in range(_WIDTH)]
    lines = [f"{'test' if tests else 'test file':58s} {'builds':>6s} {'own s':>7s} {'g++ s':>7s} "
             f"{'CPU s':>7s} {'tests':>6s} {'wall s':>7s} {'blocked':>7s} {'load s':>7s}"]
    for name, r in sorted(rows.items(), key=lambda kv: key(kv[1]))[:top] + [("all", total)]:
        wall = (f"{r[4]:7.1f} {r[5]:7.1f} {r[4] - r[1] - r[2] - r[5]:7.1f}" if r[4] else
                f"{'-':>7s} {'-':>7s} {'-':>7s}")   # (a file an older plugin wrote)
        lines.append(f"{name[-58:]:58s} {r[0]:6d} {r[1]:7.1f} {r[2]:7.1f} {r[1] + r[2]:7.1f} {r[3]:6d} {wall}")
    return "\n".join(lines)


def waits(folder: str = FOLDER, top: int = 30) -> str:
    """The test files by blocked seconds (nothing of the worker's runnable), the blocked
    seconds by file and what its tests last waited in, then each worker's timeline: its
    start (collection), its tests' wall, the gaps between them, its idle tail."""
    rows = _rows(folder, "*.json")
    lines = [_table(rows, top, False, lambda r: -r[5]), "", "blocked s  test file | waited in"]
    on: dict = {}
    for path in glob.glob(os.path.join(folder, "*.waits")):
        with open(path) as f:
            for name, seconds in json.load(f).items():
                on[name] = on.get(name, 0.0) + seconds
    lines += [f"{v:9.1f}  {k}" for k, v in sorted(on.items(), key=lambda kv: -kv[1])[:15]] + [""]
    ends = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.timeline"))):
        with open(path) as f:
            ends[os.path.basename(path)[:-9]] = json.load(f)
    last = max((t["tests"][-1][2] for t in ends.values() if t["tests"]), default=0.0)
    for worker, t in ends.items():
        if not t["tests"]:
            continue
        busy = sum(e - s for _, s, e in t["tests"])
        first, end = t["tests"][0][1], t["tests"][-1][2]
        lines.append(f"{worker}: {end - t['start']:.1f} s from its start to its last test, "
                     f"{first - t['start']:.1f} s before its first test, tests {busy:.1f} s, "
                     f"gaps between tests {end - first - busy:.1f} s, idle at the end {last - end:.1f} s "
                     f"(last file {t['tests'][-1][0].split('::')[0]})")
    return "\n".join(lines)


if __name__ == "__main__":
    args = sys.argv[1:]
    single, wait = "--tests" in args, "--wait" in args
    args = [a for a in args if a not in ("--tests", "--wait")]
    print(waits(*args[:1]) if wait else report(*args[:1], tests=single, top=60 if single else 40))
