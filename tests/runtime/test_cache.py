"""The on-disk kernel cache across processes, corruption, concurrent builds, and the
no-compiler fallback."""
import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from kiln.config import config
from kiln.ir import trace
from kiln.ops import REGISTRY, F, TensorMeta
from kiln.runtime import backend, build as build_mod, cpp_backend

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A child process: compile a graph whose constant `tag` makes its source unique to the
# test, print the build counters as JSON.
CHILD = textwrap.dedent("""
    import json, sys, numpy as np
    import kiln
    from kiln.config import config
    from kiln.ir import trace
    from kiln.ops import F, TensorMeta
    from kiln.runtime import cpp_backend
    from kiln.runtime.build import stats
    config.cache_dir = sys.argv[1]
    tag = float(sys.argv[2])
    g = trace(lambda x: F.add(F.sin(x), tag), [TensorMeta((5,), np.float64)], ["x"])
    fn = cpp_backend(g, [np.zeros(5)])
    out = fn(np.arange(5.0))[0]
    assert np.allclose(out, np.sin(np.arange(5.0)) + tag), out
    print(json.dumps(stats))
""")


def run_child(cache_dir, tag):
    return subprocess.Popen([sys.executable, "-c", CHILD, str(cache_dir), repr(tag)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def child_stats(proc):
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_second_process_loads_without_compiling(tmp_path):
    first = child_stats(run_child(tmp_path, 1.25))
    assert first["builds"] == 1
    second = child_stats(run_child(tmp_path, 1.25))
    # the whole-graph artifact is found: no lowering, no g++
    assert second["builds"] == 0 and second["artifact_hits"] == 1


def test_two_processes_compiling_the_same_kernel_build_it_once(tmp_path):
    procs = [run_child(tmp_path, 2.5) for _ in range(2)]
    results = [child_stats(p) for p in procs]
    assert sorted(r["builds"] for r in results) == [0, 1]
    # one kernel library (the C launcher, kiln/runtime/launch.c, is cached beside it)
    libs = [f for _, _, files in os.walk(tmp_path / "kernels") for f in files if f.endswith(".so")]
    assert len(libs) == 1
    leftovers = [f for _, _, files in os.walk(tmp_path) for f in files if f.startswith(".tmp-")]
    assert not leftovers


def test_corrupted_library_is_detected_and_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    source = "// kiln corrupted-cache test\nextern \"C\" int kiln_answer(void) { return 42; }\n"
    so = build_mod.build(source)
    before = build_mod.stats["builds"]
    assert build_mod.build(source) == so and build_mod.stats["builds"] == before  # a hit
    with open(so, "r+b") as f:  # flip bytes in the middle of the library
        f.seek(os.path.getsize(so) // 2)
        f.write(b"\xde\xad\xbe\xef" * 8)
    assert build_mod.build(source) == so
    assert build_mod.stats["builds"] == before + 1
    import cffi
    ffi = cffi.FFI()
    ffi.cdef("int kiln_answer(void);")
    assert ffi.dlopen(so).kiln_answer() == 42


def test_cache_key_changes_with_flags(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    key = build_mod.library_key("int x;")
    monkeypatch.setattr(config, "cxx_flags", config.cxx_flags + " -DKILN_TEST_FLAG")
    assert build_mod.library_key("int x;") != key


def test_fast_math_is_refused(monkeypatch):
    monkeypatch.setattr(config, "cxx_flags", "-O3 -ffast-math")
    with pytest.raises(Exception, match="fast-math"):
        build_mod.flags()


def test_no_compiler_falls_back_to_numpy_with_one_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cxx", str(tmp_path / "no-such-g++"))
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(backend, "_warned", set())
    g = trace(lambda x: F.cos(x), [TensorMeta((3,), np.float64)], ["x"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn = cpp_backend(g, [np.zeros(3)])
        fn2 = cpp_backend(g, [np.zeros(3)])
    assert fn.__kiln_numpy_program__ is g and fn2.__kiln_numpy_program__ is g
    messages = [str(w.message) for w in caught if "C++ compiler" in str(w.message)]
    assert len(messages) == 1 and "no-such-g++" in messages[0]
    np.testing.assert_allclose(fn(np.ones(3))[0], np.cos(np.ones(3)))


def test_debug_dir_and_output_code_log(tmp_path, monkeypatch, capsys):
    import kiln
    monkeypatch.setattr(config, "debug_dir", str(tmp_path / "dump"))
    kiln.set_logs(output_code=True)
    try:
        g = trace(lambda x: F.tanh(F.add(x, 3.5)), [TensorMeta((4,), np.float32)], ["x"])
        cpp_backend(g, [np.zeros(4, np.float32)])
    finally:
        kiln.set_logs()
    err = capsys.readouterr().err
    assert "[kiln:output_code]" in err and "def call(x):" in err and "tanhf(" in err
    dumped = sorted(os.listdir(tmp_path / "dump"))
    assert dumped and {"wrapper.py", "kernels.cpp"} <= set(os.listdir(tmp_path / "dump" / dumped[0]))


def test_wrapper_module_runs_on_its_own(tmp_path):
    g = trace(lambda x: F.exp(F.negative(x)), [TensorMeta((6, 3), np.float32)], ["x"])
    fn = cpp_backend(g, [np.zeros((6, 3), np.float32)])
    path = tmp_path / "wrapper.py"
    path.write_text(fn.kiln_artifact.wrapper)
    out = subprocess.run([sys.executable, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "us per call" in out.stdout


def test_artifact_cache_skips_lowering(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    g = trace(lambda x: F.multiply(F.exp(x), 0.25), [TensorMeta((7,), np.float32)], ["x"])
    x = np.linspace(0, 1, 7, dtype=np.float32)
    first = cpp_backend(g, [x])
    hits = build_mod.stats["artifact_hits"]

    def no_lowering(*args, **kwargs):
        raise AssertionError("lowered again despite a cached artifact")
    monkeypatch.setattr(backend, "generate", no_lowering)
    second = cpp_backend(g, [x])
    assert build_mod.stats["artifact_hits"] == hits + 1
    np.testing.assert_array_equal(second(x)[0], first(x)[0])
    # a different layout is a different artifact
    monkeypatch.undo()
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    third = cpp_backend(g, [np.linspace(0, 1, 14, dtype=np.float32)[::2]])
    np.testing.assert_allclose(third(x[::1].copy())[0], np.exp(x) * np.float32(0.25), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_artifact_cache_sets_every_constant_array(tmp_path, monkeypatch, dtype):
    # a cached wrapper names its constant arrays (a complex one too); a hit sets each of
    # them from the graph (a complex constant was left None: a folded DFT matrix failed)
    from kiln.ir import Graph
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    w = (np.arange(6.0) + 1j * np.arange(6.0)[::-1]).astype(dtype) if dtype is np.complex128 \
        else np.arange(6.0)
    g = Graph("consts")
    x = g.placeholder("x", TensorMeta((6,), np.dtype(dtype)))
    g.output((g.call(REGISTRY["multiply"], (x, g.constant(w, "w"))),))
    xs = np.linspace(0, 1, 6).astype(dtype)
    first = cpp_backend(g, [xs])
    hits = build_mod.stats["artifact_hits"]
    second = cpp_backend(g, [xs])
    assert build_mod.stats["artifact_hits"] == hits + 1
    np.testing.assert_array_equal(second(xs)[0], xs * w)
    np.testing.assert_array_equal(first(xs)[0], xs * w)


@pytest.mark.parametrize("damage", ["{}", "null", "[1]", "cut"])
def test_damaged_graph_entries_are_rebuilt(tmp_path, monkeypatch, damage):
    # Valid JSON that is not an entry (or an entry cut short) is never trusted: rebuilt.
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    g = trace(lambda x: F.multiply(F.tanh(x), 3.0), [TensorMeta((6,), np.float64)], ["x"])
    x = np.linspace(-1, 1, 6)
    cpp_backend(g, [x])
    (entry,) = list((tmp_path / "graphs").rglob("*.json"))
    text = entry.read_text()
    if damage == "cut":
        data = json.loads(text)
        data["wrapper"] = data["wrapper"][: len(data["wrapper"]) // 2]
        text = json.dumps(data)
    else:
        text = damage
    entry.write_text(text)
    fn = cpp_backend(g, [x])
    np.testing.assert_allclose(fn(x)[0], np.tanh(x) * 3.0, rtol=1e-15)


def test_graph_entries_are_keyed_by_machine_and_compiler(tmp_path, monkeypatch):
    from kiln.runtime import artifacts
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    g = trace(lambda x: F.sin(x), [TensorMeta((3,), np.float64)], ["x"])
    key = artifacts.artifact_key(g, [np.zeros(3)], False)
    monkeypatch.setattr(build_mod, "cpu_features", lambda: "another cpu")
    assert artifacts.artifact_key(g, [np.zeros(3)], False) != key


def test_unwritable_cache_dir_falls_back_to_numpy_with_a_warning(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setattr(config, "cache_dir", str(blocker / "cache"))
    monkeypatch.setattr(backend, "_warned", set())
    g = trace(lambda x: F.multiply(F.cos(x), 2.0), [TensorMeta((3,), np.float64)], ["x"])
    with pytest.warns(RuntimeWarning, match="KILN_CACHE_DIR"):
        fn = cpp_backend(g, [np.zeros(3)])
    np.testing.assert_allclose(fn(np.ones(3))[0], np.cos(np.ones(3)) * 2.0)


def test_bad_quoting_in_compiler_settings_names_the_setting(monkeypatch):
    monkeypatch.setattr(config, "cxx_flags", "-O2 '-fopenmp")
    with pytest.raises(Exception, match="KILN_CXX_FLAGS"):
        build_mod.flags()


def test_a_complex_scalar_constant_is_an_artifact_hit(tmp_path, monkeypatch):
    # ``Y[:, None] * 1j`` (npbench's mandelbrot): a graph naming a Python complex was
    # never stored, so every new process lowered it again
    import kiln
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))

    def grid(x, y):
        return np.abs(x + y[:, None] * 1j)
    x, y = np.linspace(-2, 1, 7), np.linspace(-1, 1, 5)
    np.testing.assert_array_equal(kiln.compile(grid)(x, y), grid(x, y))
    hits = build_mod.stats["artifact_hits"]

    def no_lowering(*args, **kwargs):
        raise AssertionError("lowered again despite a cached artifact")
    monkeypatch.setattr(backend, "generate", no_lowering)
    np.testing.assert_array_equal(kiln.compile(grid)(x, y), grid(x, y))
    assert build_mod.stats["artifact_hits"] == hits + 1


# A scalar loop with an if/else (a C++ loop node): its body's code must not depend on the
# process's string hash seed, or each new process builds it again.
LOOP_CHILD = textwrap.dedent("""
    import json, sys, numpy as np
    import kiln
    from kiln.config import config
    from kiln.runtime.build import stats
    config.cache_dir = sys.argv[1]

    def pairs(s, tol):
        i, j, count = 0, 1, 0
        while j < len(s):
            if s[j] - s[i] <= tol:
                count += j - i
                j += 1
            else:
                i += 1
                if i == j:
                    j += 1
        return count
    s = np.sort(np.random.default_rng(0).standard_normal(40))
    assert kiln.compile(pairs)(s, 0.5) == pairs(s, 0.5)
    print(json.dumps(stats))
""")


def test_a_loop_body_builds_once_across_hash_seeds(tmp_path):
    def run(seed):
        env = dict(os.environ, PYTHONHASHSEED=str(seed), KILN_COST_MODEL="0")
        return subprocess.Popen([sys.executable, "-c", LOOP_CHILD, str(tmp_path)], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child_stats(run(1))["builds"] >= 1
    for seed in (2, 3, 4):
        assert child_stats(run(seed))["builds"] == 0


# Loop nodes: the wrapper names a loop node's body (its runner) as a global. The entry
# says where the graph holds it and a warm process takes its own graph's; before, such a
# graph was never stored and every process lowered it again. (Another process: a body's
# name counts the bodies made in the process, so an in-process recompile prints anew.)
LOOPS_CHILD = textwrap.dedent("""
    import json, sys, warnings, numpy as np
    import kiln
    from kiln.config import config
    from kiln.runtime import backend
    from kiln.runtime.build import stats
    config.cache_dir = sys.argv[1]

    def relax(u, steps):   # a graph loop node: its body compiles as a graph of its own
        for _ in range(steps):
            v = u.copy()
            v[1:-1] = 0.5 * u[1:-1] + 0.25 * (u[:-2] + u[2:])
            u = v
        return u

    def bubble(a):         # C++ loop nodes (scalar loops), one inside the other
        a = a.copy()
        n = len(a)
        for i in range(n):
            for j in range(n - 1 - i):
                if a[j] > a[j + 1]:
                    a[j], a[j + 1] = a[j + 1], a[j]
        return a

    if sys.argv[2] == "warm":
        def no_lowering(*args, **kwargs):
            raise AssertionError("lowered again despite a cached artifact")
        backend.generate = no_lowering
    warnings.simplefilter("error")   # a graph that falls back to NumPy warns
    u = np.linspace(0, 1, 50) ** 2
    a = np.random.default_rng(3).integers(0, 50, 12)
    np.testing.assert_array_equal(kiln.compile(relax)(u, 7), relax(u, 7))
    np.testing.assert_array_equal(kiln.compile(bubble)(a), bubble(a))
    print(json.dumps(stats))
""")


def test_graphs_with_loop_nodes_are_artifact_hits(tmp_path):
    def run(phase):
        return subprocess.Popen([sys.executable, "-c", LOOPS_CHILD, str(tmp_path), phase], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child_stats(run("cold"))["builds"] >= 1
    warm = child_stats(run("warm"))
    assert warm["builds"] == 0 and warm["artifact_hits"] >= 3   # relax, its body, bubble


def test_wrapper_objects_are_located_in_the_graph_or_not_stored():
    from kiln.runtime import artifacts
    g = trace(lambda x: F.sin(x), [TensorMeta((3,), np.float64)], ["x"])
    call = next(n for n in g.nodes if n.kind == "call")
    marker = object()
    call.kwargs["extra"] = (1, [marker])
    places = artifacts.locate(g, {"_const0": marker})
    assert places == {"_const0": [g.nodes.index(call), "kwargs", "extra", 1, 0]}
    assert artifacts.resolve(g, places) == {"_const0": marker}
    assert artifacts.locate(g, {"_const0": object()}) is None   # not in the graph
    assert artifacts.resolve(g, {"_const0": [99, "args", 0]}) is None


def test_the_cost_models_kernel_count_is_kept_on_disk(tmp_path, monkeypatch):
    # an unrolled loop of small steps asks how many kernels it would build; a warm
    # process answers from the cache instead of lowering the graph again
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    g = trace(lambda x: F.add(F.exp(F.sin(x)), F.cos(x)), [TensorMeta((4,), np.float64)], ["x"])
    x = np.linspace(0, 1, 4)
    count = backend.built_kernel_count(g, [x])
    assert count == 1

    def no_lowering(*args, **kwargs):
        raise AssertionError("lowered again to count kernels")
    monkeypatch.setattr(backend, "generate", no_lowering)
    assert backend.built_kernel_count(g, [x]) == count
    for path in (tmp_path / "graphs").rglob("*.kernels"):
        path.write_text("garbage")
    assert backend.built_kernel_count(g, [x]) is None   # unreadable: lowered (here: raises)


def test_the_compilers_version_is_kept_on_disk_until_the_compiler_changes(tmp_path, monkeypatch):
    # `--version` is asked once per compiler binary, not once per process; a new binary
    # (an upgrade, another alternative) is asked again, so graph keys follow the compiler
    bin_dir, log = tmp_path / "bin", tmp_path / "asked"
    bin_dir.mkdir()
    fake = bin_dir / "fakecxx"

    def install(version):
        fake.write_text(f"#!/bin/sh\necho asked >> {log}\necho 'fakecxx ({version}) 12.2'\n")
        fake.chmod(0o755)

    install("one")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    try:
        build_mod.compiler_id.cache_clear()
        assert build_mod.compiler_id("fakecxx") == "fakecxx (one) 12.2"
        build_mod.compiler_id.cache_clear()   # as a new process
        assert build_mod.compiler_id("fakecxx") == "fakecxx (one) 12.2"
        assert log.read_text().count("asked") == 1
        install("two, longer")
        build_mod.compiler_id.cache_clear()
        assert build_mod.compiler_id("fakecxx") == "fakecxx (two, longer) 12.2"
        assert log.read_text().count("asked") == 2
    finally:
        build_mod.compiler_id.cache_clear()


def test_the_sources_hash_changes_when_a_source_changes(tmp_path, monkeypatch):
    from kiln.runtime import artifacts
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    files = [tmp_path / "a.py", tmp_path / "b.py"]
    files[0].write_text("x = 1\n")
    files[1].write_text("y = 2\n")
    paths = [str(f) for f in files]
    first = artifacts.stamped_hash(paths)
    assert first == artifacts._hash_sources(paths)
    assert artifacts.stamped_hash(paths) == first             # read back from the cache
    files[1].write_text("y = 3\n")                            # same size, new bytes
    os.utime(files[1], ns=(1, 1))                             # and an mtime never seen
    second = artifacts.stamped_hash(paths)
    assert second != first and second == artifacts._hash_sources(paths)


def test_compiled_templates_are_kept_on_disk(tmp_path, monkeypatch):
    # jinja's parse and compile of the C++ templates (~40 ms a process) is done once per
    # cache: a new process loads the code; an edited template compiles again; a cache it
    # cannot write compiles in the process as before
    import jinja2

    from kiln.lowering.cpp_text import CompiledTemplates, templates
    assert isinstance(templates().bytecode_cache, CompiledTemplates)
    (tmp_path / "t").mkdir()
    source = tmp_path / "t" / "k.cpp"
    source.write_text("{% for n in names %}double {{ n }};\n{% endfor %}")
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))

    def render():   # as in a new process: a new environment
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(tmp_path / "t")),
                                 bytecode_cache=CompiledTemplates())
        compiled = []
        compile_ = env.compile
        monkeypatch.setattr(env, "compile", lambda *a, **k: compiled.append(a[1]) or compile_(*a, **k))
        return env.get_template("k.cpp").render(names=["a", "b"]), compiled

    assert render() == ("double a;\ndouble b;\n", ["k.cpp"])
    assert len(list((tmp_path / "cache" / "templates").iterdir())) == 1
    assert render() == ("double a;\ndouble b;\n", [])           # loaded, not compiled
    source.write_text("{% for n in names %}float {{ n }};\n{% endfor %}")
    assert render() == ("float a;\nfloat b;\n", ["k.cpp"])       # edited: compiled again
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setattr(config, "cache_dir", str(blocker / "cache"))
    assert render() == ("float a;\nfloat b;\n", ["k.cpp"])
    assert render() == ("float a;\nfloat b;\n", ["k.cpp"])


def test_kernels_differing_only_in_comments_share_a_library(tmp_path, monkeypatch):
    """A module's whole-line comments (the graph's name, the user's source lines) are not
    part of its library's key (build.code_of): the same kernel compiled from another
    function, or from lines an edit moved, loads the library instead of running g++."""
    import kiln
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(config, "cost_model", False)

    def first(x):
        return np.sin(x) * 2.5 + 1.0

    def second(x):


        return np.sin(x) * 2.5 + 1.0

    x = np.arange(7.0)
    builds, hits = build_mod.stats["builds"], build_mod.stats["disk_hits"]
    np.testing.assert_array_equal(kiln.compile(first)(x), first(x))
    assert build_mod.stats["builds"] == builds + 1
    np.testing.assert_array_equal(kiln.compile(second)(x), second(x))
    assert build_mod.stats["builds"] == builds + 1 and build_mod.stats["disk_hits"] == hits + 1
    [cpp] = [p for p in tmp_path.glob("kernels/*/*.cpp")]
    assert "first" in cpp.read_text()   # (the text kept is the first's)


def test_comment_lines_a_backslash_joins_stay_in_the_key():
    """Only whole logical lines of comment leave the key: a comment a backslash carries
    onto the next line (or a line carried onto it) stays, so two texts that compile
    differently never share a key."""
    code_of = build_mod.code_of
    assert code_of("// graph 'f'\nint x;   // kept\n  //   f.py:3  y = x\nint y;\n") == \
        "int x;   // kept\nint y;\n"
    commented = "// a \\\nint x;\n"               # int x is part of the comment
    assert code_of(commented) == commented
    assert code_of("int x; // a \\\n// b\nint y;\n") != code_of("int x; // a \\\nint y;\n")
    assert code_of("#define K 1 \\\n// c\nint y;\n") != code_of("#define K 1 \\\nint y;\n")
    raw = 'const char* s = R"(\n// data\n)";\n'
    assert code_of(raw) == raw
