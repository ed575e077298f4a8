"""Other libraries' own test suites with the libraries' functions compiled by kiln
(docs/numpy_tests.md, "Other libraries' tests").

    python -m benchmarks.library_tests [--mode eager|cpp|plain] [--methods] [--reset-per-test] PACKAGE... [-- PYTEST ARGS]
    python -m benchmarks.library_tests --mode cpp numpy_financial -- -k irr

After collection, every function defined at module level in the package's own modules
(its tests and test helpers aside: ``numpy_financial.npv``, ``einops.rearrange``, the
private helpers its classes call) becomes ``kiln.compile(fn)``, in the package's modules
and in its test modules, so the library calls the compiled versions too, as a user who
decorated the library's code would see it. ``--methods`` compiles the methods (and
staticmethods) of the package's classes as well (dunders aside). ``plain`` swaps in a
plain ``*a, **k`` wrapper instead: a test failing there is an artifact of the swap (an
identity check), not kiln's; running pytest on the package without this plugin is the
baseline. The cost model is off and the recompile limit high (benchmarks/numpy_tests.py's
runner), so calls compile.
"""
from __future__ import annotations

import functools
import os
import sys
import types

from benchmarks.numpy_tests import MODE, pytest_runtest_setup, run_pytest, runner_parser, swap_values

__all__ = ["pytest_collection_modifyitems", "pytest_runtest_setup", "pytest_terminal_summary"]
PACKAGES = [p for p in os.environ.get("KILN_LIBTESTS_PACKAGES", "").split(",") if p]
METHODS = os.environ.get("KILN_LIBTESTS_METHODS") == "1"
_compiled: dict = {}    # id(library function) -> (its replacement, the function)
_methods: list = []     # (--methods) the replacements of the classes' methods


def _is_test_module(name: str) -> bool:
    return any(p in ("tests", "test", "testing", "conftest") or p.startswith("test_")
               for p in name.split("."))


def _package_modules(include_tests: bool) -> list:
    return [m for n, m in list(sys.modules.items())
            if m is not None and any(n == p or n.startswith(p + ".") for p in PACKAGES)
            and (include_tests or not _is_test_module(n))]


def _replacement(fn):
    if MODE == "plain":
        @functools.wraps(fn)
        def wrapper(*a, **k):
            return fn(*a, **k)
        return wrapper
    import kiln
    return kiln.compile(fn, backend=MODE)


def _own_functions(ns: dict, owner: str, static: bool = False) -> list:
    """The functions defined in module ``owner`` among ``ns``'s values (``static``: those
    of its staticmethods too, geographiclib's Math.sum, as the staticmethod)."""
    def fn_of(v):
        return v.__func__ if static and type(v) is staticmethod else v
    return [(k, v) for k, v in ns.items()
            if type(fn_of(v)) is types.FunctionType and not k.startswith("__")
            and fn_of(v).__module__ == owner and "<locals>" not in fn_of(v).__qualname__]


def _compile_package() -> dict:
    """id(function) -> its replacement, for the package's module-level functions (and with
    ``--methods`` its classes' methods, replaced on the class)."""
    for mod in _package_modules(include_tests=False):
        for _, fn in _own_functions(vars(mod), mod.__name__):
            if id(fn) not in _compiled:
                _compiled[id(fn)] = (_replacement(fn), fn)
        if not METHODS:
            continue
        for cls in list(vars(mod).values()):
            if isinstance(cls, type) and cls.__module__ == mod.__name__:
                for k, fn in _own_functions(vars(cls), mod.__name__, static=True):
                    if type(fn) is staticmethod:
                        _methods.append(_replacement(fn.__func__))
                        setattr(cls, k, staticmethod(_methods[-1]))
                    else:
                        _methods.append(_replacement(fn))
                        setattr(cls, k, _methods[-1])
    return {k: w for k, (w, _) in _compiled.items()}


def _patch(mod, table: dict) -> None:
    def replace(v):
        return table.get(id(v))
    g = mod.__dict__
    for k, v in list(g.items()):
        if not k.startswith("__") and id(v) in table:
            g[k] = table[id(v)]
    for c in list(g.values()):    # funcs = [npf.npv, npf.irr] as a test class's attribute
        if isinstance(c, type) and c.__module__ == mod.__name__:
            for k, v in list(vars(c).items()):
                if not k.startswith("__") and type(v) in (list, tuple, dict):
                    setattr(c, k, swap_values(v, replace))


def pytest_collection_modifyitems(session, config, items):
    table = _compile_package()
    for mod in _package_modules(include_tests=True):
        _patch(mod, table)
    for item in items:
        spec = getattr(item, "callspec", None)
        if spec is not None:   # @parametrize("fn", [npf.fv, ...]), made at import
            for k, v in list(spec.params.items()):
                spec.params[k] = swap_values(v, lambda x: table.get(id(x)))


def pytest_terminal_summary(terminalreporter):
    """How many functions were compiled and how many hold cache entries at the end (with
    ``--reset-per-test``, those of the last test only): a run that compiled nothing says so,
    and the functions holding the most entries are named where one holds more than 10."""
    if MODE != "plain":
        compiled = [w for w, _ in _compiled.values()] + _methods
        held = [w for w in compiled if w.cache_entries]
        terminalreporter.write_line(
            f"kiln ({MODE}): {len(compiled)} functions compiled ({len(_methods)} methods), {len(held)} hold "
            f"{sum(len(w.cache_entries) for w in held)} cache entries")
        most = sorted(held, key=lambda w: -len(w.cache_entries))[:3]
        if most and len(most[0].cache_entries) > 10:   # a function recompiling per call
            terminalreporter.write_line("kiln: most entries: " + ", ".join(
                f"{w.fn.__qualname__} ({len(w.cache_entries)})" for w in most))


def main(argv: list[str]) -> int:
    parser = runner_parser(__doc__, "the packages whose tests run, e.g. numpy_financial")
    parser.add_argument("--methods", action="store_true", help="compile the classes' methods too")
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    return run_pytest("benchmarks.library_tests", args, argv,
                      {"KILN_LIBTESTS_PACKAGES": ",".join(args.targets),
                       "KILN_LIBTESTS_METHODS": str(int(args.methods))})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
