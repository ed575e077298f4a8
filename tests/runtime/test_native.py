"""kiln's C extensions built at install time (setup.py -> kiln/_native): after a normal
install a fresh process uses them and compiles none into its cache; when one is absent or
does not import (another Python or NumPy ABI) kiln builds it into the cache at first use,
as before; one built from other sources than kiln holds now (edited since the install) is
not used."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import kiln
from kiln import _native, cext
from kiln.config import config
from kiln.guards import fastcheck

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A fresh process: W1 and a softmax compiled and checked against NumPy, then which module
# each extension came from. argv: cache dir, JSON list of kiln._native names to block.
CHILD = r"""
import json, sys
for name in json.loads(sys.argv[2]):
    sys.modules["kiln._native." + name] = None     # as if absent, or failing to import
import numpy as np
import kiln
from kiln.capture import frame_hook
from kiln.cext import shipped_extension
from kiln.guards import fastcheck
from kiln.runtime import launch
kiln.config.cache_dir = sys.argv[1]

def w1(x):
    return np.maximum(np.sin(x) + np.cos(x), 0) * 2

def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)

x = np.linspace(-4, 4, 1000)
y = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
cw1, csm = kiln.compile(w1), kiln.compile(softmax)
for _ in range(2):
    np.testing.assert_allclose(cw1(x), w1(x), rtol=1e-12)
    np.testing.assert_allclose(csm(y), softmax(y), rtol=1e-5)
fast_call = shipped_extension(launch._FAST_CALL_SOURCE, "_kiln_fast_call_", "fast_call",
                              numpy_api=True)
hook = frame_hook.load()
print(json.dumps({
    "fastcheck": fastcheck.module().__name__,
    "launch": launch.module().__name__,
    "fast_call": fast_call.__name__,
    "frame_hook": hook.__name__.removesuffix(".lib"),       # a cffi module's lib
    "dispatcher": fastcheck.module().Dispatcher in type(cw1).__mro__,
}))
"""


def _run(cache_dir, blocked=()):
    out = subprocess.run([sys.executable, "-c", CHILD, str(cache_dir), json.dumps(list(blocked))],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_installed_modules_are_used(tmp_path):
    missing = [name for name in _native.EXTENSIONS if not _installed(name)]
    assert not missing, (f"kiln/_native lacks {missing} for this Python: kiln was installed without "
                         f"building its C extensions (or before setup.py built them); reinstall with "
                         f"pip install -e '.[test]' and read the build's warnings")
    got = _run(tmp_path / "cache")
    assert got == {"fastcheck": "kiln._native.fastcheck", "launch": "kiln._native.launch",
                   "fast_call": "kiln._native.fast_call", "frame_hook": "kiln._native.frame_hook",
                   "dispatcher": True}, got
    # Nothing was compiled but the two graphs' kernels and the support object they link
    # (code_versions, compilers and linkers: the hash of kiln's sources, g++'s --version
    # and its link command, kept for the next process; no linkers where kernels link
    # through the driver; templates: jinja's code of the C++ templates, cpp_text.py).
    assert sorted(set(os.listdir(tmp_path / "cache")) - {"linkers"}) == [
        "code_versions", "compilers", "graphs", "kernels", "support", "templates", "wrappers"]


def test_modules_that_do_not_import_are_built_into_the_cache(tmp_path):
    got = _run(tmp_path / "cache", blocked=list(_native.EXTENSIONS))
    for name in ("fastcheck", "launch", "fast_call"):
        assert got[name].startswith(f"_kiln_{name}_"), got
        built = os.listdir(tmp_path / "cache" / name)
        assert any(f.startswith(got[name]) and f.endswith(cext.EXT_SUFFIX) for f in built), built
    assert got["frame_hook"].startswith("_kiln_frame_hook_"), got
    assert os.listdir(tmp_path / "cache" / "frame_hook")
    assert got["dispatcher"]     # compiled functions dispatch through the one built here


def _installed(name):
    folder = os.path.dirname(_native.__file__)
    return os.path.exists(os.path.join(folder, name + cext.EXT_SUFFIX))


@pytest.mark.skipif(not _installed("fastcheck"), reason="kiln/_native was not built at install")
def test_a_module_built_from_other_sources_is_not_used(tmp_path, monkeypatch, capsys):
    installed = cext.installed_extension("fastcheck", _native.extension_hash("fastcheck"))
    assert installed is not None and installed.__name__ == "kiln._native.fastcheck"
    assert installed.__kiln_source__ == _native.extension_hash("fastcheck")
    # One part of fastcheck (fastcheck_entry.c, not the file with the module's init) edited
    # after the install: the installed module is refused, the edited sources are built
    # into the cache, and the perf log says why.
    part = os.path.join(os.path.dirname(fastcheck._C_SOURCE), "fastcheck_entry.c")
    edited = tmp_path / "fastcheck_entry.c"
    edited.write_text(_native.read(part) + "\n/* edited */\n", encoding="utf-8")
    monkeypatch.setitem(_native.PARTS, "fastcheck",
                        tuple(str(edited) if p == part else p for p in _native.PARTS["fastcheck"]))
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    monkeypatch.setattr(cext, "_shipped", {})
    kiln.set_logs("perf")
    try:
        module = cext.shipped_extension(fastcheck._C_SOURCE, "_kiln_fastcheck_", "fastcheck")
    finally:
        kiln.set_logs()
    assert module is not None and module.__name__.startswith("_kiln_fastcheck_")
    assert not hasattr(module, "__kiln_source__")
    assert os.path.dirname(module.__file__) == str(tmp_path / "cache" / "fastcheck")
    assert "built from other sources" in capsys.readouterr().err
    x = np.ones((4, 3))
    assert module.array_matches(x, np.ndarray, np.dtype("float64"), (4, -1))
    assert not module.array_matches(x, np.ndarray, np.dtype("float32"), (4, -1))


def test_a_module_built_into_the_cache_has_no_asserts(tmp_path):
    # as setup.py's builds (Python's own CFLAGS): NDEBUG, or CPython 3.13's inline functions
    # assert on every call (~50 ns of a cache hit)
    def write_c(path):
        with open(path, "w") as f:
            f.write("#include <Python.h>\n#ifndef NDEBUG\n#error built with asserts\n#endif\n"
                    "static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, \"_kiln_ndebug\", NULL, -1, NULL};\n"
                    "PyMODINIT_FUNC PyInit__kiln_ndebug(void) { return PyModule_Create(&d); }\n")
    module = cext.build_extension(config.cxx, str(tmp_path), "_kiln_ndebug", write_c)
    assert module.__name__ == "_kiln_ndebug"


def test_no_compiler_and_no_installed_module_keeps_python(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "kiln._native.launch", None)
    monkeypatch.setattr(config, "cxx", str(tmp_path / "no-such-compiler"))
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    monkeypatch.setattr(cext, "_shipped", {})
    from kiln.runtime import launch
    assert launch.module() is None


def test_every_file_of_a_split_extension_is_built_and_hashed(monkeypatch):
    # fastcheck and launch are each several C files and an internal header (_native.PARTS):
    # every C file and header of kiln's extensions is a module's source, a part of one or
    # cext.h (a new part must be listed, or the build would leave it out), and a change in
    # any of them changes the hash that decides whether a built module is current.
    files = set()
    for folder, _, names in os.walk(os.path.join(ROOT, "kiln")):
        if os.path.basename(folder) not in ("codegen_templates", "_native"):   # (kernels' C++)
            files |= {os.path.join(folder, f) for f in names if f.endswith((".c", ".h"))}
    parts = {p for ps in _native.PARTS.values() for p in ps}
    assert files == {s for s, _, _ in _native.EXTENSIONS.values()} | parts | {_native.HEADER}
    read = _native.read
    for name, extra in _native.PARTS.items():
        before = _native.extension_hash(name)
        for path in (_native.EXTENSIONS[name][0], *extra):
            monkeypatch.setattr(_native, "read", lambda p, edited=path: read(p) + "/**/" * (p == edited))
            assert _native.extension_hash(name) != before, path
        monkeypatch.setattr(_native, "read", read)


def test_setup_lists_every_shipped_extension():
    # Every C file that defines a CPython module is built at install (setup.py reads
    # _native.EXTENSIONS); a new one must be added there.
    sources = set()
    for folder, _, files in os.walk(os.path.join(ROOT, "kiln")):
        for f in files:
            if f.endswith(".c"):
                text = open(os.path.join(folder, f), encoding="utf-8").read()
                if "KILN_INIT(" in text or "frame-evaluation hook" in text:
                    sources.add(os.path.join(folder, f))
    assert sources == {source for source, _, _ in _native.EXTENSIONS.values()}
