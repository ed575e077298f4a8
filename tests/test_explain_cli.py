"""kiln.explain, the CLI (`kiln explain`, `python -m kiln explain`, --json) on real
script files, and golden text for logged graphs and guards."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln
from kiln.cli import main as cli_main

SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import kiln

    def relu(h):
        return np.maximum(h, 0.0)

    @kiln.compile
    def step(w, g, lr):
        return w - lr * relu(g)

    @kiln.compile
    def noisy(x):
        y = x * 2
        print("noisy sum", y.sum())
        return y

    w = np.ones(4)
    for i in range(3):
        w = step(w, np.full(4, 0.5), 0.1 * (i + 1))
    step(np.ones(6), np.ones(6), 0.1)
    noisy(w)
    print("args", sys.argv[1:])
''')


@pytest.fixture(autouse=True)
def _fresh():
    kiln.reset()
    kiln.set_logs()
    yield
    kiln.set_logs()


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    return str(path)


def test_explain_counts_graphs_breaks_guards():
    def helper(x):
        print("x")  # noqa: T201
        return x

    def f(x, lr):
        y = np.exp(x) * lr
        return helper(y) + 1

    out = kiln.explain(f)(np.ones(3), 0.1)
    assert out.graph_count == 2     # exp * lr before the break; + 1 after it
    assert out.ops_per_graph == [["exp", "multiply"], ["add"]]
    assert out.graph_break_count == 1 == len(out.break_reasons)
    b = out.break_reasons[0]
    assert (b.filename, b.lineno) == (__file__, helper.__code__.co_firstlineno + 1)
    assert b.source.startswith('print("x")')
    assert "type(lr) is float" in out.guards
    text = str(out)
    assert "Graph break count: 1" in text and 'print("x")' in text

    out = kiln.explain(lambda x, lr: np.exp(x) * lr)(np.ones(3), 0.1)
    assert out.graph_count == 1 and out.graph_break_count == 0
    assert out.ops_per_graph == [["exp", "multiply"]]
    assert "x.shape[0] == 3" in out.guards
    assert isinstance(out.compile_time_s, float) and out.compile_time_s > 0
    assert "def " in str(out.graphs[0])


def test_explain_uses_a_fresh_cache_and_accepts_compiled_functions():
    f = kiln.compile(lambda x: x + 1)
    f(np.ones(2))
    out = kiln.explain(f)(np.ones(2))
    assert out.graph_count == 1
    assert len(f.cache_entries) == 1  # untouched


def test_cli_human_report(script, capsys):
    status = cli_main(["explain", script, "--flag", "x"])
    out = capsys.readouterr().out
    assert status == 0
    assert "args ['--flag', 'x']" in out
    assert "== step" in out and "== noisy" in out
    assert "graphs: 2   graph breaks: 0   recompiles: 1" in out
    assert "recompile: entry 0: w.shape[0] == 4  (saw 6)" in out
    assert 'print("noisy sum", y.sum())' in out
    assert "type(lr) is float" in out


def test_cli_json_keeps_stdout_pure(script, capsys):
    status = cli_main(["explain", "--json", script])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert status == 0
    assert "noisy sum" in captured.err  # the script's prints went to stderr
    by_name = {f["name"]: f for f in report["functions"]}
    assert by_name["step"]["graph_count"] == 2
    assert by_name["step"]["compilations"][0]["ops"] == ["maximum", "multiply", "subtract"]
    # one fused kernel per graph of step, read off the built artifacts (cpp backend)
    assert by_name["step"]["backend"] == "cpp" and by_name["step"]["kernels"] == 2
    brk = by_name["noisy"]["compilations"][0]["graph_break"]
    assert brk["kind"] == "unsupported_call" and brk["lineno"] == 16


def test_python_dash_m_kiln_explain(script):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(kiln.__file__))))
    proc = subprocess.run([sys.executable, "-m", "kiln", "explain", "--json", script],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert {f["name"] for f in report["functions"]} == {"step", "noisy"}


def test_cli_reports_script_failure(tmp_path, capsys):
    path = tmp_path / "bad.py"
    path.write_text("import kiln, numpy as np\nf = kiln.compile(lambda x: x + 1)\nf(np.ones(2))\n"
                    "raise SystemExit(3)\n")
    assert cli_main(["explain", str(path)]) == 3
    assert "1 compiled function(s) called" in capsys.readouterr().out


GOLDEN_GRAPH = '''\
[kiln:graph] scaled_relu: graph 0
    def scaled_relu(x, lr):
        # test_explain_cli.py:{line}  return np.maximum(x, 0.0) * lr
        maximum = ops.maximum(x, 0.0)  # float32[2, 3]
        multiply = ops.multiply(maximum, lr)  # float32[2, 3]
        maximum = None
        return (multiply,)
[kiln:guards] scaled_relu: cache entry 0 guards
    G['np'] is <module numpy>
    G['np'].maximum is maximum
    type(x) is np.ndarray
    x.dtype == np.float32
    x.ndim == 2
    x.shape[0] == 2
    x.shape[1] == 3
    type(lr) is float
'''

GOLDEN_RECOMPILE = '''\
[kiln:recompiles] scaled_relu: recompiling (cache entry 1), because no entry's guards hold:
    entry 0: x.dtype == np.float32  (saw dtype('float64'))
'''


def scaled_relu(x, lr):
    return np.maximum(x, 0.0) * lr


def test_golden_logs(capsys):
    kiln.set_logs("graph,guards,recompiles")
    f = kiln.compile(scaled_relu)
    f(np.ones((2, 3), np.float32), 0.5)
    err = capsys.readouterr().err
    assert err == GOLDEN_GRAPH.format(line=scaled_relu.__code__.co_firstlineno + 1)
    f(np.ones((2, 3), np.float32), 0.25)
    assert capsys.readouterr().err == ""
    kiln.set_logs(recompiles=True)
    f(np.ones((2, 3)), 0.5)
    assert capsys.readouterr().err == GOLDEN_RECOMPILE


def test_logs_env_variable_and_nothing_on_stdout(tmp_path):
    path = tmp_path / "s.py"
    path.write_text("import kiln, numpy as np\nf = kiln.compile(lambda x: np.sin(x))\nf(np.ones(2))\n")
    env = dict(os.environ, KILN_LOGS="graph,guards",
               PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(kiln.__file__))))
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "[kiln:graph] <lambda>: graph 0" in proc.stderr
    assert "ops.sin(x)" in proc.stderr


def test_set_logs_rejects_unknown_artifact():
    with pytest.raises(ValueError, match="unknown kiln log artifact"):
        kiln.set_logs("graphs")


def breaks_on_print(x):
    y = x + 1
    print("y", y.shape)
    return y


def test_golden_graph_break_log(capsys):
    kiln.set_logs(graph_breaks=True)
    kiln.compile(breaks_on_print)(np.ones(2))
    line = breaks_on_print.__code__.co_firstlineno + 2
    assert capsys.readouterr().err == (
        f"[kiln:graph_breaks] breaks_on_print: graph break (unsupported_call) at {__file__}:{line}\n"
        f"    print(\"y\", y.shape)\n"
        f"    builtin print() is not supported\n"
        f"    hint: move print/logging out of the compiled function, or accept a graph break here\n"
        f"[kiln:graph_breaks] breaks_on_print: partial graph (1 ops before the break); resumes "
        f"compiled at line {line + 1}\n")


def test_explain_report_text():
    out = kiln.explain(breaks_on_print)(np.ones(2))
    text = str(out)
    assert text.splitlines()[:2] == ["Graph count: 1", "Graph break count: 1"]
    assert "[unsupported_call] builtin print() is not supported" in text
    assert f"{__file__}:{breaks_on_print.__code__.co_firstlineno + 2}: print(\"y\", y.shape)" in text
