"""The graph IR: printed text (golden), lint, DCE, CSE, the interpreter, compiled graphs."""
from __future__ import annotations

import gc
import linecache
import traceback
import weakref

import numpy as np
import pytest

import kiln
from kiln.ir import Graph, GraphLintError, Interpreter, cse, dce, lint, trace
from kiln.ops import F, Op, TensorMeta

F32 = np.float32
F64 = np.float64
MODEL = "/home/ada/project/model.py"


@pytest.fixture(autouse=True)
def debug_checks():
    """Tests run with the graph checked after every pass, as the style guide asks."""
    old = kiln.config.debug_checks
    kiln.config.debug_checks = True
    yield
    kiln.config.debug_checks = old


def small_graph() -> Graph:
    """z = x + y (broadcast (3, 1) with (4,)); return z.sum(axis=1) * 2."""
    g = Graph()
    x = g.placeholder("x", TensorMeta((3, 1), F32))
    y = g.placeholder("y", TensorMeta((4,), F32))
    z = g.call(F.add, (x, y), source=(MODEL, 12, "    z = x + y\n"))
    s = g.call(F.sum, (z,), {"axis": (1,)}, source=(MODEL, 13, "    return z.sum(axis=1) * 2"))
    m = g.call(F.multiply, (s, 2.0), source=(MODEL, 13, "    return z.sum(axis=1) * 2"))
    g.output((m,))
    return g


# ==========================================================================================
# Printing

GOLDEN = """\
def forward(x, y):
    # model.py:12  z = x + y
    add = ops.add(x, y)  # float32[3, 4]
    # model.py:13  return z.sum(axis=1) * 2
    sum = ops.sum(add, axis=(1,), keepdims=False, dtype=None)  # float32[3]
    add = None
    multiply = ops.multiply(sum, 2.0)  # float32[3]
    sum = None
    return (multiply,)
"""


def test_printed_graph_golden() -> None:
    assert str(small_graph()) == GOLDEN


def test_printed_graph_runs_as_python() -> None:
    g = small_graph()
    namespace = {"ops": F, "np": np}
    exec(compile(str(g), "<printed>", "exec"), namespace)
    x, y = np.arange(3, dtype=F32).reshape(3, 1), np.arange(4, dtype=F32)
    (want,) = g(x, y)
    (got,) = namespace["forward"](x, y)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, ((x + y).sum(axis=1) * 2))
    assert want.dtype == F32


def test_printed_constants_and_special_values() -> None:
    g = Graph()
    x = g.placeholder("x", TensorMeta((2, 3), F64))
    c = g.constant(np.array([1.0, 2.0, 3.0]), "table")
    a = g.call(F.add, (x, c))
    w = g.call(F.where, (g.call(F.isnan, (a,)), float("nan"), float("-inf")))
    t = g.call(F.astype, (w,), {"dtype": np.dtype(F32)})
    first = g.call(F.getitem, (t, (slice(None, None, -1), None, Ellipsis)))
    g.output((first,))
    text = str(g)
    assert "table = _const0  # float64[3]" in text
    assert "ops.where(isnan, float('nan'), float('-inf'))" in text
    assert "ops.astype(where, dtype=np.float32, copy=True)" in text
    assert "ops.getitem(astype, (slice(None, None, -1), None, Ellipsis))" in text
    x_val = np.array([[0.0, np.nan, 1.0], [2.0, 3.0, np.nan]])
    (got,) = g.compile()(x_val)
    (want,) = g(x_val)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, np.where(np.isnan(x_val + [1, 2, 3]), np.nan, -np.inf)
                                  .astype(F32)[::-1, None, ...])


def test_names_are_stable_and_unique() -> None:
    g = Graph()
    x = g.placeholder("x", TensorMeta((2,), F64))
    a = g.call(F.sin, (x,))
    b = g.call(F.sin, (a,))
    c = g.call(F.sin, (b,), name="lambda")  # a Python keyword gets a suffix
    g.output((c,))
    assert [n.name for n in g.nodes] == ["x", "sin", "sin_1", "lambda_", "output"]


# ==========================================================================================
# Lint

def breakages():
    """(description, function breaking a fresh small_graph, expected message)."""
    def use_before_def(g):
        add = g.calls[0]
        g.nodes.remove(add)
        g.nodes.insert(g.nodes.index(g.calls[-1]) + 1, add)

    def forget_user(g):
        x = g.placeholders[0]
        x.users.pop(g.calls[0])

    def phantom_user(g):
        g.placeholders[0].users[g.calls[-1]] = None

    def duplicate_name(g):
        g.calls[1].name = "add"

    def unregistered_op(g):
        g.calls[0].target = Op("add", "pointwise", np.add, inputs=("x", "y"))

    def wrong_arity(g):
        g.calls[0].args = (g.placeholders[0],)

    def output_not_last(g):
        g.call(F.negative, (g.calls[-1],))   # appended after the output node

    def foreign_node(g):
        g.calls[1].graph = Graph("other")

    return [
        ("use before def", use_before_def, "uses add before it is defined"),
        ("forgotten user", forget_user, "x does not list its user add"),
        ("phantom user", phantom_user, "x lists multiply as a user, but it is not"),
        ("duplicate name", duplicate_name, "duplicate node name add"),
        ("unregistered op", unregistered_op, "not a registered op"),
        ("wrong arity", wrong_arity, "add takes 2 inputs, has 1"),
        ("output not last", output_not_last, "exactly one output node, and it comes last"),
        ("foreign node", foreign_node, "belongs to another graph"),
    ]


def test_lint_accepts_a_sound_graph() -> None:
    assert lint(small_graph()) is not None


@pytest.mark.parametrize("break_it, message", [(b, m) for _, b, m in breakages()],
                         ids=[d for d, _, _ in breakages()])
def test_lint_catches_a_broken_graph(break_it, message: str) -> None:
    g = small_graph()
    break_it(g)
    with pytest.raises(GraphLintError, match=message):
        lint(g)


def test_passes_lint_their_result_with_debug_checks() -> None:
    g = small_graph()
    g.placeholders[0].users.pop(g.calls[0])
    with pytest.raises(GraphLintError):
        dce(g)


# ==========================================================================================
# Dead-code elimination

def test_dce_removes_unused_values_and_keeps_mutations() -> None:
    g = Graph()
    x = g.placeholder("x", TensorMeta((3,), F64))
    unused = g.call(F.sin, (x,))
    g.call(F.exp, (unused,))                       # unused, and makes sin used only by it
    g.constant(np.zeros(3), "dead_const")
    buf = g.call(F.copy, (x,))
    g.call(F.setitem, (buf, (0,), 5.0))            # no users, but it writes into buf
    kept = g.call(F.cos, (x,))
    g.output((buf, kept))
    x_val = np.array([0.1, 0.2, 0.3])
    before = g(x_val.copy())
    dce(g)
    assert g.op_names() == ["copy", "setitem", "cos"]
    assert [n.name for n in g.nodes if n.kind == "constant"] == []
    after = g(x_val.copy())
    np.testing.assert_array_equal(after[0], [5.0, 0.2, 0.3])
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(g.compile()(x_val.copy())[0], [5.0, 0.2, 0.3])


# ==========================================================================================
# Common-subexpression elimination

def test_cse_merges_duplicates_only() -> None:
    g = Graph()
    x = g.placeholder("x", TensorMeta((2, 3), F64))
    y = g.placeholder("y", TensorMeta((2, 3), F64))
    s1 = g.call(F.sin, (x,))
    s2 = g.call(F.sin, (x,))                     # duplicate of s1
    sy = g.call(F.sin, (y,))                     # same op, other input
    r0 = g.call(F.sum, (s1,), {"axis": (0,)})
    r1 = g.call(F.sum, (s2,), {"axis": (1,)})    # other params
    r1b = g.call(F.sum, (s2,), {"axis": (1,)})   # duplicate once s2 is s1
    g.output((r0, r1, r1b, sy))
    x_val, y_val = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    before = g(x_val, y_val)
    cse(g)
    assert g.op_names() == ["sin", "sin", "sum", "sum"]
    assert s2 not in g.nodes and r1b not in g.nodes
    assert set(s1.users) == {r0, r1}
    out = g.output_node.args[0]
    assert out[1] is out[2] is r1
    for b, a in zip(before, g(x_val, y_val)):
        np.testing.assert_array_equal(a, b)


def test_cse_does_not_merge_across_a_mutation() -> None:
    g = Graph()
    x = g.placeholder("x", TensorMeta((3,), F64))
    buf = g.call(F.copy, (x,))
    before = g.call(F.sin, (buf,))
    g.call(F.setitem, (buf, (slice(None),), 0.0))
    after = g.call(F.sin, (buf,))
    g.output((before, after))
    cse(g)
    assert g.op_names() == ["copy", "sin", "setitem", "sin"]
    b, a = g(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(b, np.sin([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(a, np.zeros(3))


# ==========================================================================================
# Interpreter

class Recorder(Interpreter):
    """Keeps a weak reference to every value computed and, at each call, which of the
    earlier values are still alive."""

    def __init__(self, graph: Graph) -> None:
        super().__init__(graph)
        self.refs: dict[str, weakref.ref] = {}
        self.alive: dict[str, set[str]] = {}

    def call(self, node, args, kwargs):
        gc.collect()
        self.alive[node.name] = {n for n, r in self.refs.items() if r() is not None}
        result = super().call(node, args, kwargs)
        self.refs[node.name] = weakref.ref(result)
        return result


def test_interpreter_frees_values_after_their_last_use() -> None:
    g = trace(lambda x: F.exp(F.add(F.sin(x), F.cos(F.sin(x)))), [TensorMeta((4,), F64)], ["x"])
    # sin_1 (the second sin) is used by cos only; sin by add; cos by add; add by exp.
    assert g.op_names() == ["sin", "sin", "cos", "add", "exp"]
    rec = Recorder(g)
    (out,) = rec.run(np.linspace(0, 1, 4))
    assert rec.alive["cos"] == {"sin", "sin_1"}
    assert rec.alive["add"] == {"sin", "cos"}      # sin_1 died after cos
    assert rec.alive["exp"] == {"add"}
    np.testing.assert_allclose(out, np.exp(np.sin(np.linspace(0, 1, 4)) + np.cos(np.sin(np.linspace(0, 1, 4)))))
    # The printed code frees the same values at the same points.
    lines = [line.strip() for line in str(g).splitlines()]
    assert lines.index("sin_1 = None") == lines.index("cos = ops.cos(sin_1)  # float64[4]") + 1
    assert lines.index("sin = cos = None") == lines.index("add = ops.add(sin, cos)  # float64[4]") + 1


def test_interpreter_checks_the_number_of_inputs() -> None:
    with pytest.raises(TypeError, match=r"graph 'forward' takes 2 inputs \(x, y\), got 1"):
        small_graph()(np.ones((3, 1), F32))


# ==========================================================================================
# Compiled graphs

def mixed_graph() -> Graph:
    def fn(x, y, i):
        a = F.multiply(F.add(x, 1.5), y)                         # broadcast (2, 3) with (3,)
        b = F.where(F.greater(a, 0.0), F.sqrt(F.absolute(a)), F.negative(a))
        c = F.sum(b, axis=(0,), keepdims=True, dtype=None)
        d = F.take(F.reshape(b, shape=(-1,)), i, axis=None)
        e = F.transpose(F.concatenate((b, c), axis=0, dtype=None, casting="same_kind"), axes=(1, 0))
        return F.astype(c, dtype=np.dtype(F32)), d, F.matmul(e, F.ones(shape=(3, 2), dtype=np.dtype(F64)))
    return trace(fn, [TensorMeta((2, 3), F64), TensorMeta((3,), F64), TensorMeta((4,), np.int64)],
                 ["x", "y", "i"])


def test_compiled_graph_equals_interpreter() -> None:
    g = mixed_graph()
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((2, 3)), rng.standard_normal(3), np.array([0, 5, -1, 2]))
    want = g(*args)
    got = g.compile()(*args)
    assert len(got) == len(want) == 3
    for w, c in zip(want, got):
        assert c.dtype == w.dtype and c.shape == w.shape
        np.testing.assert_array_equal(c, w)
    assert want[0].dtype == F32 and want[2].shape == (3, 2)


def test_numpy_program_equals_interpreter() -> None:
    """What backends run where they cannot compile: each op's NumPy kernel called from the
    printed code, none of the interpreter's per-node work; same values, dtypes, shapes."""
    from kiln.ir.printer import LazyNumpyProgram, numpy_program
    g = mixed_graph()
    rng = np.random.default_rng(1)
    args = (rng.standard_normal((2, 3)), rng.standard_normal(3), np.array([1, 0, -2, 3]))
    want = g(*args)
    for got in (numpy_program(g)(*args), LazyNumpyProgram(g)(*args)):
        assert len(got) == len(want) == 3
        for w, c in zip(want, got):
            assert c.dtype == w.dtype and c.shape == w.shape
            np.testing.assert_array_equal(c, w)
    assert "ops.matmul(" in numpy_program(g).__kiln_source__


def test_compile_is_cached_and_follows_changes() -> None:
    g = small_graph()
    fn = g.compile()
    assert g.compile() is fn
    extra = g.call(F.negative, (g.calls[-1],), before=g.output_node)
    g.output_node.args = ((extra,),)
    fn2 = g.compile()
    assert fn2 is not fn
    (got,) = fn2(np.ones((3, 1), F32), np.ones(4, F32))
    np.testing.assert_array_equal(got, np.full(3, -16.0, F32))


def test_traceback_from_a_compiled_graph_shows_the_generated_line() -> None:
    g = Graph()
    x = g.placeholder("x", TensorMeta((3,), F64))
    y = g.placeholder("y", TensorMeta((3,), F64))
    s = g.call(F.sin, (x,), source=(MODEL, 7, "    s = np.sin(x)"))
    z = g.call(F.add, (s, y), source=(MODEL, 8, "    z = s + y"))
    g.output((z,))
    fn = g.compile()
    with pytest.raises(ValueError, match="could not be broadcast") as info:
        fn(np.zeros(3), np.zeros(4))   # shapes that break the traced assumption
    frames = [f for f in traceback.extract_tb(info.value.__traceback__)
              if f.filename.startswith("<kiln graph forward")]
    assert len(frames) == 1, traceback.format_exception(info.value)
    frame = frames[0]
    assert frame.line == "add = ops.add(sin, y)  # float64[3]"
    assert linecache.getline(frame.filename, frame.lineno).strip() == frame.line
    assert linecache.getline(frame.filename, frame.lineno - 1).strip() == "# model.py:8  z = s + y"
    text = "".join(traceback.format_exception(info.value))
    assert "add = ops.add(sin, y)  # float64[3]" in text
    assert fn.__kiln_source__ == str(g)


def test_exec_source_compiles_a_text_once_and_names_each_file(monkeypatch):
    # A function's guard entries, recompiles and resume functions generate the same text
    # again and again: compiled once (~0.8 ms each), each run still names its own file
    from kiln.ir import printer
    compiled = []
    monkeypatch.setattr(printer, "compile", lambda *a: compiled.append(a) or compile(*a), raising=False)
    source = "def f(x):\n    return 1 // x\n"
    first = printer.exec_source(source, "<kiln test once #1>", {})["f"]
    second = printer.exec_source(source, "<kiln test once #2>", {})["f"]
    assert len(compiled) <= 1 and first.__code__.co_filename == "<kiln test once #1>"
    try:
        second(0)
    except ZeroDivisionError as e:
        frame = traceback.extract_tb(e.__traceback__)[-1]
    assert (frame.filename, frame.line) == ("<kiln test once #2>", "return 1 // x")
