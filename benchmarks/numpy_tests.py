"""NumPy's own test suite with NumPy's functions compiled by kiln (docs/numpy_tests.md).

    python -m benchmarks.numpy_tests [--mode eager|cpp|plain] [--ufuncs] [--reset-per-test] MODULE... [-- PYTEST ARGS]
    python -m benchmarks.numpy_tests numpy.lib.tests.test_nanfunctions -- -x -k nanvar

Each test module's ``np`` (and ``np.linalg``, ``np.fft``, names imported ``from numpy import
...``, class attributes such as ``nanfuncs = [np.nanmin, ...]`` and parametrize values) is
swapped, after collection, for a proxy whose public functions are one ``kiln.compile``d
wrapper each (``def diff(*a, **k): return _fn(*a, **k)``), so a wrapper sees the many
calls a user's function would. Classes, dtypes, constants and ufunc objects stay NumPy's
(``--ufuncs`` also compiles ufunc calls; ``np.add.reduce`` stays NumPy's). ``plain`` runs
the same proxies without kiln: a test that fails there is an artifact of the proxies,
not kiln's. The cost model is off and the recompile limit high, so calls compile.
"""
from __future__ import annotations

import os
import subprocess
import sys
import types

MODE = os.environ.get("KILN_NPTESTS_MODE", "eager")
WRAP_UFUNCS = os.environ.get("KILN_NPTESTS_UFUNCS") == "1"
RESET_PER_TEST = os.environ.get("KILN_NPTESTS_RESET") == "1"
SUBMODULES = ("numpy", "numpy.linalg", "numpy.fft")
_wrappers: dict = {}    # id(NumPy callable) -> its wrapper (the originals stay referenced)


def _make_wrapper(name: str, fn):
    ns = {"_fn": fn}
    exec(f"def {name}(*a, **k):\n    return _fn(*a, **k)\n", ns)
    if MODE == "plain":
        return ns[name]
    import kiln
    return kiln.compile(ns[name], backend=MODE)


class UfuncProxy:
    """A ufunc whose calls go through kiln; its attributes (reduce, nin...) are NumPy's."""

    def __init__(self, uf, call):
        self._uf, self._call = uf, call

    def __call__(self, *a, **k):
        return self._call(*a, **k)

    def __getattr__(self, name):
        return getattr(self._uf, name)

    def __repr__(self):
        return repr(self._uf)


def _wrap(name: str, obj):
    import numpy as np
    if id(obj) in _wrappers:
        return _wrappers[id(obj)][0]
    if isinstance(obj, np.ufunc):
        if not WRAP_UFUNCS:
            return obj
        w = UfuncProxy(obj, _make_wrapper(name, obj))
    elif isinstance(obj, (type, types.ModuleType)) or not callable(obj):
        return obj
    else:
        w = _make_wrapper(name, obj)
    _wrappers[id(obj)] = (w, obj)
    return w


class Proxy(types.ModuleType):
    def __init__(self, mod):
        super().__init__(mod.__name__)
        self._mod = mod

    def __getattr__(self, name):
        obj = getattr(self._mod, name)
        if isinstance(obj, types.ModuleType):
            return _proxy(obj) if obj.__name__ in SUBMODULES else obj
        return obj if name.startswith("_") else _wrap(name, obj)

    def __dir__(self):
        return dir(self._mod)


_proxies: dict = {}


def _proxy(mod):
    return _proxies.setdefault(mod.__name__, Proxy(mod))


def _public_callables() -> dict:
    import numpy as np
    table = {}
    for mname in SUBMODULES:
        mod = sys.modules[mname]
        for n in dir(mod):
            o = getattr(mod, n, None)
            if n.startswith("_") or isinstance(o, (type, types.ModuleType)) or not callable(o):
                continue
            if not isinstance(o, np.ufunc) or WRAP_UFUNCS:
                table.setdefault(id(o), (n, o))
    return table


def swap_values(v, replace):
    """``v`` with each value ``replace`` gives a replacement for (not None) replaced, inside
    lists, tuples and dicts too (keys too: overflow_results = {np.floor_divide: ...})."""
    r = replace(v)
    if r is not None:
        return r
    if type(v) in (list, tuple):
        return type(v)(swap_values(x, replace) for x in v)
    if type(v) is dict:
        return {swap_values(k, replace): swap_values(x, replace) for k, x in v.items()}
    return v


def _swap(v, table):
    def replace(x):
        if id(x) in table:
            return _wrap(*table[id(x)])
        if isinstance(x, types.ModuleType) and x.__name__ in SUBMODULES:
            return _proxy(x)
        return None
    return swap_values(v, replace)


def _patch_module(mod, table) -> None:
    g = mod.__dict__
    for k, v in list(g.items()):
        if not k.startswith("__") and (id(v) in table or isinstance(v, types.ModuleType)):
            g[k] = _swap(v, table)
    for c in list(g.values()):    # nanfuncs = [np.nanmin, np.nanmax], made at import
        if isinstance(c, type) and c.__module__ == mod.__name__:
            for k, v in list(vars(c).items()):
                if not k.startswith("__") and type(v) in (list, tuple, dict):
                    setattr(c, k, _swap(v, table))


def _numpy_test_module(mod) -> bool:
    """A module of NumPy's test suite, by file: numpy/_core/tests has no __init__.py, so
    pytest imports its modules as top-level ``test_umath``, not ``numpy._core.tests...``."""
    import numpy as np
    root = os.path.dirname(np.__file__) + os.sep
    return mod is not None and (getattr(mod, "__file__", None) or "").startswith(root)


def pytest_collection_modifyitems(session, config, items):
    table, patched = _public_callables(), set()
    for item in items:
        mod = getattr(item, "module", None)
        if not _numpy_test_module(mod):
            continue
        if mod.__name__ not in patched:
            patched.add(mod.__name__)
            _patch_module(mod, table)
        spec = getattr(item, "callspec", None)
        if spec is not None:   # @parametrize("fft", [np.fft.fftn, ...]), made at import
            for k, v in list(spec.params.items()):
                spec.params[k] = _swap(v, table)


def pytest_runtest_setup(item):
    """``--reset-per-test``: every test starts with empty caches (kiln.reset()), so a long
    module (test_linalg, test_pocketfft) does not pile up thousands of entries per wrapper
    under the raised recompile limit; each wrapper still sees every call of its test."""
    if RESET_PER_TEST and MODE != "plain":
        import kiln
        kiln.reset()


def runner_parser(doc: str, targets_help: str):
    """The command line both runners share: --mode, --reset-per-test, targets, ``-- PYTEST ARGS``."""
    import argparse
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--mode", default="eager", choices=("eager", "cpp", "plain"))
    parser.add_argument("--reset-per-test", action="store_true",
                        help="empty kiln's caches before each test (long modules: linalg, fft)")
    parser.add_argument("targets", nargs="+", help=targets_help)
    return parser


def run_pytest(plugin: str, args, argv: list[str], env: dict) -> int:
    """pytest on ``args.targets`` (--pyargs) with ``plugin``, the cost model off and the
    recompile limit high (so calls compile), and the arguments after ``--``."""
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, **env, KILN_NPTESTS_MODE=args.mode,
               KILN_NPTESTS_RESET=str(int(args.reset_per_test)),
               PYTHONPATH=os.pathsep.join([root] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    env.setdefault("KILN_COST_MODEL", "0")
    env.setdefault("KILN_RECOMPILE_LIMIT", "100000")
    cmd = [sys.executable, "-m", "pytest", "-p", plugin, "-p", "no:cacheprovider",
           "-o", "addopts=", "-q", "-rf", "-W", "ignore::RuntimeWarning:kiln", "--pyargs",
           *args.targets, *extra]
    return subprocess.call(cmd, env=env, cwd=root)


def main(argv: list[str]) -> int:
    parser = runner_parser(__doc__, "e.g. numpy.lib.tests.test_function_base")
    parser.add_argument("--ufuncs", action="store_true", help="compile ufunc calls too")
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    return run_pytest("benchmarks.numpy_tests", args, argv,
                      {"KILN_NPTESTS_UFUNCS": str(int(args.ufuncs))})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
