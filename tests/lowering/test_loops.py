"""The C++ loop printer (kiln/lowering/loops.py) against the reference: every scalar
function of a loop body on every pair of scalar types, bit for bit (NumPy's wrapping,
float32 rounding, floor division; Python's unbounded ints)."""
from __future__ import annotations

import itertools
import math
import os
import zlib

import numpy as np
import pytest

import kiln
from benchmarks.loop_kernels import edit_distance, levenshtein_rows, rule30
from kiln.explain import build_explain_output
from kiln.lowering.loop_runner import prepare_loops
from kiln.lowering.loops import _Printer
from kiln.ops.loops import SCALAR_FUNCTIONS, SCALAR_MATH, LoopBody
from kiln.ops.loops import stats as loop_stats

TYPES = ["pyint", "pyfloat", "pybool", "bool", "int8", "uint8", "int16", "int32", "uint32",
         "int64", "uint64", "float32", "float64"]
CONVERT = {"pyint": int, "pyfloat": float, "pybool": bool}
BINARY = ["{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / {b}", "{a} // {b}", "{a} % {b}",
          "{a} < {b}", "{a} <= {b}", "{a} == {b}", "{a} != {b}", "{a} & {b}", "{a} | {b}",
          "{a} ^ {b}", "{a} << {b}", "{a} >> {b}", "min({a}, {b})", "max({a}, {b})"]
# All 169 pairs with KILN_LOOP_GRID=1 (a few minutes); otherwise a spread in which every
# type appears (each pair is one g++ build, ~6 s: the suite must stay under 10 minutes).
ALL = os.environ.get("KILN_LOOP_GRID") == "1"
PAIRS = list(itertools.product(TYPES, TYPES)) if ALL else \
    list(zip(TYPES, TYPES[3:] + TYPES[:3]))[::2] + [("pyfloat", "int8"), ("uint8", "pyint"),
                                                    ("int32", "uint32")]


def _values(name: str, rng, n: int):
    """Element arrays whose conversions give the type ``name``, with edge values."""
    if name in CONVERT:
        base = {"pyint": np.int64, "pyfloat": np.float64, "pybool": np.bool_}[name]
    else:
        base = np.dtype(name).type
    dt = np.dtype(base)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind == "f":
        v = rng.standard_normal(n) * 50
        v[:4] = [0.0, -0.0, 1.5, -7.25]
        return v.astype(dt)
    info = np.iinfo(dt)
    v = rng.integers(max(info.min, -300), min(info.max, 300), n, endpoint=True).astype(dt)
    # (Python ints past int64 run in the reference by design: tests/capture/test_loops.py)
    edges = [0, 1, info.max, info.min, 2, 3] if name != "pyint" else [0, 1, 2**31, -2**31, 2, 3]
    v[:len(edges)] = np.array(edges, dtype=object).astype(dt)
    return v


def _text(expr: str, ta: str, tb: str, b: str = "b") -> str:
    """``expr`` over converted elements ``a[i]`` and ``<b>[i]``, as real source."""
    conv = {"pyint": "int", "pyfloat": "float", "pybool": "bool"}
    ca, cb = (conv.get(t, f"np.{t}") for t in (ta, tb))
    return expr.format(a=f"{ca}(a[i])", b=f"{cb}({b}[i])")


def _define(src: str, filename: str):
    namespace = {"np": np}
    exec(compile(src, filename, "exec"), namespace)
    return namespace["pairwise"]


def _make(expr: str, ta: str, tb: str):
    """``out[i] = <expr>`` over converted elements, as real source (operators, not calls)."""
    text = _text(expr, ta, tb)
    return _define(f"def pairwise(a, b, out):\n    for i in range(a.shape[0]):\n"
                   f"        out[i] = {text}\n    return out\n", f"<pairwise {text}>")


def _make_all(exprs: list, ta: str, tb: str):
    """One function with one loop per expression (``_make``'s loop, each writing its own
    output array): one build for the group. Shifts read ``s`` (small counts) for ``b``."""
    lines = [f"def pairwise(a, b, s, {', '.join(f'o{k}' for k in range(len(exprs)))}):"]
    for k, expr in enumerate(exprs):
        text = _text(expr, ta, tb, "s" if "<<" in expr or ">>" in expr else "b")
        lines += ["    for i in range(a.shape[0]):", f"        o{k}[i] = {text}"]
    lines.append(f"    return ({''.join(f'o{k}, ' for k in range(len(exprs)))})")
    return _define("\n".join(lines) + "\n", f"<pairwise {ta}, {tb}>")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("ta,tb", PAIRS)
def test_scalar_functions_match_python_bit_for_bit(ta, tb):
    rng = np.random.default_rng(zlib.crc32(f"{ta},{tb}".encode()))   # (hash() varies per process)
    a, b = _values(ta, rng, 24), _values(tb, rng, 24)
    shifts = (np.abs(b.astype(np.int64)) % 5).astype(b.dtype) if b.dtype.kind in "iu" else b
    valid, wants = [], []
    for fn in BINARY:
        b_use = shifts if "<<" in fn or ">>" in fn else b
        f = _make(fn, ta, tb)
        try:
            want = f(a, b_use, np.zeros(24, np.float64))
        except Exception as e:            # the operation raises: so must the compiled loop
            compiled = kiln.compile(f)
            with pytest.raises(type(e)):
                compiled(a, b_use, np.zeros(24, np.float64))
            continue
        valid.append(fn)
        wants.append(want)
    # the operations that do not raise: one compiled function, one loop (and output) each
    compiled = kiln.compile(_make_all(valid, ta, tb))
    before = dict(loop_stats)
    got = compiled(a, b, shifts, *[np.zeros(24, np.float64) for _ in valid])
    # (min/max of two types, say, stay unrolled: no loop run at all)
    checked = loop_stats["native"] - before["native"]
    assert loop_stats["reference"] == before["reference"], f"{valid} on ({ta}, {tb}) not native"
    assert len(got) == len(valid)
    for fn, g, want in zip(valid, got, wants):
        np.testing.assert_array_equal(g, want, err_msg=f"{fn} on ({ta}, {tb})")
    # every operation that does not raise ran natively (min/max of two types stay unrolled)
    assert checked >= len(valid) - (2 if ta != tb else 0) and checked, (checked, len(valid))


def test_every_scalar_function_has_a_cpp_spelling():
    """Each SCALAR_FUNCTIONS entry on float64 (and int64 where it takes ints) prints."""
    from kiln.ir import Graph
    from kiln.ops import REGISTRY
    missing = []
    for name in SCALAR_FUNCTIONS:
        arity = 3 if name == "select" else 1 if name in (
            "neg", "pos", "invert", "abs", "int", "float", "bool") or name in SCALAR_MATH or \
            name.startswith("np.") and name[3:] not in ("maximum", "minimum", "fmax", "fmin") else 2
        ok = False
        for example in (np.float64(1), np.int64(1), 1.0, 1):
            g = Graph("body")
            i = g.placeholder("i", 1)
            xs = [g.placeholder(f"x{k}", example) for k in range(arity)]
            try:
                g.call(REGISTRY["scalar_fn"], (tuple(xs),), {"fn": name})
            except Exception:
                continue
            g.output((xs[0],))
            body = LoopBody(g, 1, ())
            try:
                _Printer(body, "f").function()
                ok = True
                break
            except Exception:
                continue
        if not ok:
            missing.append(name)
    assert not missing, f"scalar functions the C++ loop printer cannot print: {missing}"


def test_compiled_loops_are_native():
    def count(a):
        s = 0
        for i in range(a.shape[0]):
            s += int(a[i] > 0)
        return s

    compiled = kiln.compile(count)
    a = np.random.default_rng(0).standard_normal(1000)
    assert compiled(a) == count(a) and type(compiled(a)) is int
    graph = compiled.records[0].graph
    loops = [n for n in graph.calls if n.target.name == "loop"]
    assert loops
    prepare_loops(graph)
    assert loops[0].kwargs["body"].native is not None


def _runs(fn, *args):
    """``fn(*args)`` compiled and plain: same value and type; the loop runs it did."""
    before = dict(loop_stats)
    got = kiln.compile(fn)(*args)
    want = fn(*args)
    assert type(got) is type(want)
    np.testing.assert_array_equal(got, want)
    return {k: loop_stats[k] - before[k] for k in loop_stats}


def test_indices_proven_once_before_the_loop():
    """Affine indices are tested once at entry (kiln/lowering/loop_bounds.py): inside,
    the loop writes its own array in place; a wrapping or non-contiguous access takes
    the checked variant, an out-of-range one raises as NumPy does."""
    def shifted(x, k):
        y = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            y[i] = x[i - k] * 2.0
        return y

    x = np.arange(12.0)
    runs = _runs(shifted, x, 0)
    assert runs["native"] == 1 and runs["inplace"] == 1, runs
    runs = _runs(shifted, x, 1)               # x[-1] at i = 0: NumPy wraps
    assert runs["native"] == 1 and runs["reference"] == 0, runs
    runs = _runs(shifted, x[::2], 0)          # strided: the checked variant
    assert runs["native"] == 1 and runs["reference"] == 0, runs
    with pytest.raises(IndexError):
        kiln.compile(shifted)(x, 13)
    with pytest.raises(IndexError):
        shifted(x, 13)


def test_a_ring_index_from_zero_stays_on_the_fast_variant():
    """``cur[i - 1]`` over ``range(n)`` of a static ``n`` reads ``cur[-1]`` first (NumPy's
    wrap): the entry test wanted ``i - 1`` inside the axis, so the checked variant ran,
    which leaves a loop swapping two rows to the reference (a 1-D cellular automaton, 200
    cells, 50 steps: 2.1 ms, NumPy's own time, now ~14 us). Such an index whose interval is
    known to start below zero is tested to lie in ``[-d, d)`` and wrapped per element.
    One compile serves every step count."""
    compiled = kiln.compile(rule30)
    cells = np.array([0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1], dtype=np.uint8)
    for steps in (0, 1, 4):
        before = dict(loop_stats)
        np.testing.assert_array_equal(compiled(cells, steps), rule30(cells, steps))
        assert loop_stats["reference"] == before["reference"], steps
    assert len(compiled.records) == 1


def test_an_integer_min_compares_the_carried_value_last(tmp_path, monkeypatch):
    """Edit distance's ``min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + cost)``:
    ``d[i, j - 1]`` is what the iteration before stored (loop_bounds ``on_the_chain``), so
    the other two are compared first, behind ``KILN_SETTLED`` (GCC reassociated the min and
    put two compares on the chain from one element to the next: 160x160 35 -> 27 us,
    numba 20). Integers only (any order gives the same value); values are NumPy's."""
    from kiln.config import config
    monkeypatch.setattr(config, "debug_dir", str(tmp_path / "dump"))
    a = np.array([0, 1, 1, 3, 2, 0, 1])
    b = np.array([1, 1, 0, 3, 2, 2, 0, 1, 3])
    before = dict(loop_stats)
    for fn in (edit_distance, levenshtein_rows):
        got, want = kiln.compile(fn)(a, b), fn(a, b)
        assert got == want and type(got) is type(want)
    assert loop_stats["reference"] == before["reference"]
    texts = [p.read_text() for p in sorted((tmp_path / "dump").glob("*_loops/loops.cpp"))]
    assert [t.count("KILN_SETTLED(m") for t in texts] == [1, 1]


def test_steps_and_triangles_on_the_fast_variant():
    def strided(x):
        n = x.shape[0]
        y = np.zeros(n)
        for i in range(n - 1, -1, -2):
            y[i] = x[i] + 1.0
        for i in range(1, n, 3):
            for j in range(i, n):
                y[j] -= x[j - i] * 0.5
        return y

    for n in (0, 1, 7, 10):
        runs = _runs(strided, np.arange(float(n)))
        assert runs["reference"] == 0, (n, runs)


def test_affine_python_ints_past_int64_still_rerun():
    def offsets(x, big):
        s = 0
        for i in range(x.shape[0]):
            s += (i + big) % 7 + int(x[i])
        return s

    x = np.arange(10.0)
    assert _runs(offsets, x, 5)["reference"] == 0
    runs = _runs(offsets, x, 2**63 - 3)       # i + big passes int64 at i = 3
    assert runs["reference"] == 1, runs


def _sweep(u, f, sweeps):
    for _ in range(sweeps):
        for i in range(1, u.shape[0] - 1):
            u[i] = 0.5 * (u[i - 1] + u[i + 1]) - f[i]
    return u


def test_loops_write_the_callers_array_in_place():
    """A written argument the graph donates is the loop's own array (no copy in, none
    out: kiln/lowering/loop_donate.py); where it cannot be, the loop copies as before."""
    compiled = kiln.compile(_sweep)
    rng = np.random.default_rng(0)
    f = rng.random(40)
    for sweeps in (0, 1, 3):
        mine = rng.random(40)
        theirs = mine.copy()
        before = dict(loop_stats)
        out = compiled(mine, f, sweeps)
        assert out is mine
        np.testing.assert_array_equal(mine, _sweep(theirs, f, sweeps))
        assert loop_stats["inplace"] - before["inplace"] == 1, sweeps
        assert loop_stats["reference"] == before["reference"]
    strided, theirs = rng.random(80)[::2], None
    theirs = strided.copy()
    np.testing.assert_array_equal(kiln.compile(_sweep)(strided, f, 2), _sweep(theirs, f, 2))
    np.testing.assert_array_equal(strided, theirs)
    frozen = rng.random(40)
    frozen.flags.writeable = False
    with pytest.raises(ValueError) as got:
        compiled(frozen, f, 1)
    with pytest.raises(ValueError) as want:
        _sweep(frozen, f, 1)
    assert str(got.value) == str(want.value)


def _pinned_sweep(u, f, sweeps, left):
    u[0] = left
    for _ in range(sweeps):
        for i in range(1, u.shape[0] - 1):
            u[i] = 0.5 * (u[i - 1] + u[i + 1]) - f[i]
    return u


def _read_then_sweep(u, f, sweeps, left):
    u[0] = u[1] * left
    for _ in range(sweeps):
        for i in range(1, u.shape[0] - 1):
            u[i] = 0.5 * (u[i - 1] + u[i + 1]) - f[i]
    return u


@pytest.mark.parametrize("fn, donated", [(_pinned_sweep, True), (_read_then_sweep, False)])
def test_a_write_before_a_donating_loop_is_not_copied_back(fn, donated, tmp_path, monkeypatch):
    """``u[0] = left`` before the loop: the loop carries the write's value,
    not ``u``, and was given a copy (the write's) whose final value was copied back into
    ``u`` after (loop_donate.py took only ``u`` itself). The loop now writes the write's
    array in place and that is the output: no copy back (and where the write is an extern
    the memory plan runs in place, ray_walk's ``grid[4, 5] = -1``, it is ``u`` itself: no
    copy either). A write whose value reads ``u`` keeps the
    copies (and the same values)."""
    from kiln.config import config
    monkeypatch.setattr(config, "debug_dir", str(tmp_path / "dump"))
    compiled = kiln.compile(fn)
    rng = np.random.default_rng(0)
    f = rng.random(40)
    for sweeps in (0, 1, 3):
        mine = rng.random(40)
        theirs = mine.copy()
        assert compiled(mine, f, sweeps, 2.0) is mine
        np.testing.assert_array_equal(mine, fn(theirs, f, sweeps, 2.0))
    wrapper = "".join((tmp_path / "dump" / d / "wrapper.py").read_text()
                      for d in os.listdir(tmp_path / "dump") if not d.endswith("_loops"))
    body = wrapper[wrapper.index("def call("):wrapper.index("def _example")]
    assert ("copy_into" not in body) == donated, body


def counted_sweeps(u, steps, fixed):
    err = 1.0
    best = 0.0
    fixed = 0 - fixed
    while err > 1e-3:
        err = 0.0
        for i in range(1, u.shape[0] - 1):
            new = 0.5 * (u[i - 1] + u[i + 1])
            err = max(err, float(abs(new - u[i])))
            h = max(0.0, new - 0.5, u[i] - 0.75)   # a Python float or a NumPy scalar
            if h > best:
                best = h
            u[i] = new
        steps += 1
        if err > 0.01:
            fixed -= 2
    return steps, fixed, best


def test_counters_and_bool_selects(tmp_path, monkeypatch):
    """A while loop's counters (``steps += 1``, ``if ...: fixed -= 2``) have their entry
    values tested instead of every step (kiln/lowering/loop_bounds.py): the fast variant
    cannot fail once started and sweeps the caller's array in place; a counter that
    leaves int64 still gives Python's int. A bool select with a constant side in a body
    that does not break prints as bit operations (no branch for GCC to mispredict); one
    in a body that breaks keeps its ``?:`` with a test at neutral odds (GCC threads it
    through the break test)."""
    from kiln.config import config
    monkeypatch.setattr(config, "debug_dir", str(tmp_path / "dump"))
    compiled = kiln.compile(counted_sweeps)
    u0 = np.r_[1.0, np.random.default_rng(0).random(10), 2.0]
    for steps, fixed, inplace in ((0, 0, 1), (2**63 - 3, 0, 0), (0, 2**63 - 1, 0), (-5, 7, 1)):
        mine, theirs = u0.copy(), u0.copy()
        before = dict(loop_stats)
        got, want = compiled(mine, steps, fixed), counted_sweeps(theirs, steps, fixed)
        assert [type(v) for v in got] == [type(v) for v in want] and got == want
        np.testing.assert_array_equal(mine, theirs)
        runs = {k: loop_stats[k] - before[k] for k in loop_stats}
        assert runs["inplace"] == inplace and runs["native"] + runs["reference"] == 1, runs
    cpp = "".join((tmp_path / "dump" / f / "loops.cpp").read_text()
                  for f in os.listdir(tmp_path / "dump") if f.endswith("_loops"))
    fast = cpp[cpp.index("_fast("):cpp.index("_checked(")]
    assert "? true :" not in fast and ") | (" in fast, fast
    # the while body's select of fixed - 2 tests its condition at neutral odds
    assert "__builtin_expect_with_probability(" in fast, fast


def test_an_error_after_a_donating_loop_leaves_pythons_state():
    """An op after the loop that may raise keeps the copy: aot replays the graph op by op
    on an error, which must find the argument as it was (not written twice)."""
    def lower_then_invert(u, m):
        for i in range(u.shape[0]):
            u[i, i] = u[i, i] - 1.0
        return np.linalg.inv(m)

    compiled = kiln.compile(lower_then_invert)
    mine, theirs = np.eye(4), np.eye(4)
    np.testing.assert_array_equal(compiled(mine, np.eye(4)), lower_then_invert(theirs, np.eye(4)))
    np.testing.assert_array_equal(mine, theirs)
    with pytest.raises(np.linalg.LinAlgError):
        compiled(mine, np.zeros((4, 4)))
    with pytest.raises(np.linalg.LinAlgError):
        lower_then_invert(theirs, np.zeros((4, 4)))
    np.testing.assert_array_equal(mine, theirs)


def _add_steps(w, n, i):
    for _ in range(n):
        w += 1
        w *= w[0, i] * 0 + 1   # (i out of range: IndexError on the first trip)
    return w.sum()


def test_a_graph_loop_reads_a_donated_array_uncopied(monkeypatch):
    """overlapping_windows_updated_in_a_loop x10 ran 1.48x NumPy: its graph loop node
    copied w in although the compiled body only reads it (each trip returns a new array,
    kiln/runtime/backend.py _FRESH_BODY_BYTES) and the caller copies the result into w
    anyway. Donated (loop_donate.py), it reads w itself: no copy after the first call,
    which compiles the body; w keeps its old value until the end, so an error in the
    body leaves w as NumPy does (aot replays the graph op by op on the old w)."""
    from kiln.ops import graph_loops
    copies = []
    real = graph_loops._same_layout_copy
    monkeypatch.setattr(graph_loops, "_same_layout_copy", lambda x: copies.append(x.shape) or real(x))
    compiled = kiln.compile(_add_steps)
    w0 = np.arange(320.0).reshape(20, 16)
    for n, copied in ((3, 1), (3, 0), (0, 0), (2, 0)):
        mine, theirs = w0.copy(), w0.copy()
        del copies[:]
        assert compiled(mine, n, 2) == _add_steps(theirs, n, 2)
        np.testing.assert_array_equal(mine, theirs)
        assert len(copies) == copied, (n, copies)
    mine, theirs = w0.copy(), w0.copy()
    with pytest.raises(IndexError) as want:
        _add_steps(theirs, 3, 40)
    with pytest.raises(IndexError, match=str(want.value)):
        compiled(mine, 3, 40)
    np.testing.assert_array_equal(mine, theirs)


def _factorial(n):
    r = 1
    for i in range(1, n + 1):
        r *= i
    return r


def _fill(x, n):
    for i in range(n):
        x[i] = x[i - 1] + 2.0
    return x


def test_loops_that_keep_failing_their_checks_run_as_python():
    """A Python int past int64 or an IndexError on every call: the compiled loop stops
    trying after GIVE_UP calls in a row (each failed try reruns the loop as Python, so
    results and errors are Python's throughout); then the entry holding it runs the whole
    function as Python (its graph and the loop's fallback cost more than the plain call),
    and explain says why; a call that fits later runs as Python too."""
    from kiln.ops.loops import GIVE_UP
    compiled = kiln.compile(_factorial)
    before = dict(loop_stats)
    for _ in range(GIVE_UP + 3):
        got = compiled(30)
        assert type(got) is int and got == _factorial(30)
    assert loop_stats["reference"] - before["reference"] == GIVE_UP   # then no loop node runs
    assert loop_stats["gave_up"] == before["gave_up"]
    assert compiled(12) == _factorial(12) and len(compiled.records) == 1
    assert compiled.cache_entries[0].graph is None
    assert "failed its compiled checks" in compiled.records[0].runs_as_python
    out = build_explain_output(compiled.records)
    assert out.graph_count == 0 and any("failed its compiled checks" in n for n in out.runs_as_python)
    compiled = kiln.compile(_fill)
    for _ in range(GIVE_UP + 2):
        mine, theirs = np.zeros(6), np.zeros(6)
        with pytest.raises(IndexError) as got:
            compiled(mine, 8)
        with pytest.raises(IndexError) as want:
            _fill(theirs, 8)
        assert str(got.value) == str(want.value)
        np.testing.assert_array_equal(mine, theirs)   # the writes before the error
    mine, theirs = np.zeros(6), np.zeros(6)
    np.testing.assert_array_equal(compiled(mine, 5), _fill(theirs, 5))
    np.testing.assert_array_equal(mine, theirs)


def test_the_python_spelling_of_a_body_is_the_reference():
    """LoopBody.run is the body printed as Python (kiln/ops/loop_python.py); it computes
    what the graph interpreter does, on element code, nested loops and slices."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.loop_kernels import cholesky_rows, crc32, edit_distance
    from kiln.ops.loop_python import python_runner
    rng = np.random.default_rng(5)
    a = rng.random((6, 6))
    cases = [(crc32, (rng.integers(0, 256, 20).astype(np.uint8),)),
             (edit_distance, (rng.integers(0, 3, 7), rng.integers(0, 3, 6))),
             (cholesky_rows, (a @ a.T + 6 * np.eye(6),)), (_factorial, (25,))]
    for fn, args in cases:
        graph = kiln.explain(fn)(*args).graphs[0]
        bodies = [n.kwargs["body"] for n in graph.calls if n.target.name == "loop"]
        assert bodies
        for body in bodies:
            runner = python_runner(body)
            assert runner is not None and "for " in runner.source, body
            # one integer index reads as the user writes it, x[i] (NumPy's fast path), not
            # x[i,] (a tuple NumPy parses: a loop that runs as Python paid ~20 ns a read)
            assert ",]" not in runner.source, runner.source
        got, want = kiln.compile(fn, backend="eager")(*args), fn(*args)
        if type(want) is int:
            assert type(got) is int and got == want
        else:
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_the_loop_module_goes_to_debug_dir_and_output_code(tmp_path, monkeypatch, capsys):
    from kiln.config import config
    monkeypatch.setattr(config, "debug_dir", str(tmp_path / "dump"))
    kiln.set_logs(output_code=True)
    try:
        x = np.arange(12.0)
        np.testing.assert_array_equal(kiln.compile(_fill)(x.copy(), 9), _fill(x.copy(), 9))
    finally:
        kiln.set_logs()
    err = capsys.readouterr().err
    assert "loop node(s) as C++ loops" in err and "// loop at" in err and "def native(" in err
    folders = [f for f in os.listdir(tmp_path / "dump") if f.endswith("_loops")]
    assert len(folders) == 1, os.listdir(tmp_path / "dump")
    cpp = (tmp_path / "dump" / folders[0] / "loops.cpp").read_text()
    assert "test_loops.py:" in cpp and "kiln_loop_" in cpp and "_fast(" in cpp
    assert "def native(" in (tmp_path / "dump" / folders[0] / "launchers.py").read_text()


def carried_kinds(a, n):
    n, x, flag = n + 1, 0.5, False
    u, f, b, w = np.uint64(2**63 + 5), np.float32(1.5), np.int8(-3), np.uint32(7)
    ub, h, uh, i32, i64, d = np.uint8(250), np.int16(-9), np.uint16(9), np.int32(-5), np.int64(-2), np.float64(0.25)
    nb = np.bool_(False)
    for i in range(a.shape[0]):
        n += i * 3
        x = x * 0.5 + float(a[i])
        flag = flag != bool(a[i] > 0.5)
        u += np.uint64(3)
        f = f * np.float32(1.25)
        b = b + np.int8(50)
        w = w ^ np.uint32(i)
        ub = ub + np.uint8(3)
        h = h - np.int16(1000)
        uh = uh * np.uint16(7)
        i32 = i32 * np.int32(-3)
        i64 = i64 * np.int64(5)
        d = d * np.float64(a[i])
        nb = nb ^ (a[i] > 0.5)
    return n, x, flag, u, f, b, w, ub, h, uh, i32, i64, d, nb


@pytest.mark.parametrize("fast_guards", [True, False])
def test_carried_scalars_of_every_kind_come_back(monkeypatch, fast_guards):
    # through launch.c's Launcher (the packed entry writes them over its slots) and, without
    # the extension, through cffi's call: the same values and types as Python's
    from kiln.config import config
    monkeypatch.setattr(config, "fast_guards", fast_guards)
    a = np.random.default_rng(5).random(40)
    with np.errstate(over="ignore"):
        before = dict(loop_stats)
        for n in (0, -7, 2**62):
            got, want = kiln.compile(carried_kinds)(a, n), carried_kinds(a, n)
            assert [type(v) for v in got] == [type(v) for v in want]
            assert got == want
        assert loop_stats["native"] - before["native"] == 3
        assert kiln.compile(carried_kinds)(a, 2**70) == carried_kinds(a, 2**70)   # past int64


def bit_masks(data, poly, other):
    c, d, e = poly ^ poly, other, np.int8(0)
    for k in range(data.shape[0]):
        c = c ^ poly.dtype.type(data[k])
        for _ in range(3):      # a CRC step: the low bit selects the polynomial or 0
            c = (c >> poly.dtype.type(1)) ^ (poly & (poly.dtype.type(0) - (c & poly.dtype.type(1))))
        d = d * other.dtype.type(3) + (other & -(other.dtype.type(data[k]) & other.dtype.type(1)))
        d = d ^ ((np.int8(1) & np.int8(data[k])) * other)   # 1 & b times x: no mask
        # the mask in another type than the and: uint8's 255 is no all-ones int32 mask
        e = e + np.int8(np.int32(1000) & (np.uint8(0) - (np.uint8(data[k]) & np.uint8(1))))
    return c, d, e


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("poly,other", [(np.uint32(0xEDB88320), np.int64(-77)),
                                        (np.uint64(0xC96C5795D7870F42), np.int32(-5))])
def test_a_low_bit_mask_is_a_select(tmp_path, monkeypatch, poly, other):
    """``x & (0 - (b & 1))`` prints as a select on b's low bit (a shorter carried chain
    than ``and; neg; and``: kiln/lowering/loop_scalars.py ``_low_bit_mask``), with the
    values, types and wrapping of NumPy's scalars; a mask computed in another type stays
    a mask."""
    from kiln.config import config
    monkeypatch.setattr(config, "debug_dir", str(tmp_path / "dump"))
    data = np.random.default_rng(3).integers(0, 256, 50).astype(np.uint8)
    before = dict(loop_stats)
    got, want = kiln.compile(bit_masks)(data, poly, other), bit_masks(data, poly, other)
    assert [type(v) for v in got] == [type(v) for v in want] and got == want
    assert loop_stats["native"] > before["native"] and loop_stats["reference"] == before["reference"]
    cpp = "".join((tmp_path / "dump" / f / "loops.cpp").read_text()
                  for f in os.listdir(tmp_path / "dump") if f.endswith("_loops"))
    fast = cpp[cpp.index("_fast("):cpp.index("_checked(")]
    selects = [line for line in fast.splitlines() if " & 1) ? " in line]
    # the CRC steps and -(b & 1); not the uint8 mask of the int32
    assert len(selects) >= 2 and not any("1000" in line for line in selects), fast


def libm_calls(x, y, k):
    out = np.empty(x.shape[0])
    s = 0.0
    for i in range(x.shape[0]):
        a = math.exp(-x[i]) * math.sin(x[i]) + math.log1p(abs(x[i])) + math.atan(x[i])
        b = math.tanh(y[i]) - math.cos(y[i]) + math.log(1.0 + float(y[i]) ** 2)   # float32
        out[i] = a + b + math.cosh(i * 0.01) + math.log2(k + i)                 # Python ints
        s += math.expm1(-abs(x[i]))
    return out, s


@pytest.mark.parametrize("edge,error", [(None, None), (800.0, OverflowError),
                                        (-1.5, ValueError)])
def test_math_functions_of_one_number_run_natively_with_pythons_bits(tmp_path, monkeypatch, edge, error):
    """``math.exp`` & co. of loop values (NumPy scalars, Python floats and ints, float32) are
    body functions: the C library's own, the one Python's math module calls, so the bits
    are Python's; where Python raises (``math.exp(800.0)``, ``math.log(-0.5)``) the loop
    reruns as Python, which raises. They were a graph break (the loop unrolled)."""
    from kiln.config import config
    monkeypatch.setattr(config, "debug_dir", str(tmp_path / "dump"))
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(24) * 3, rng.standard_normal(24).astype(np.float32)
    k = 3
    if edge is not None:
        x[10] = -edge if error is OverflowError else 0.0
        k = edge if error is ValueError else k   # log2(-1.5 + i) for i = 0: domain error
    before = dict(loop_stats)
    f = kiln.compile(libm_calls)
    if error is not None:
        with pytest.raises(error):
            libm_calls(x, y, k)
        with pytest.raises(error):
            f(x, y, k)
        return
    (got, gs), (want, ws) = f(x, y, k), libm_calls(x, y, k)
    assert np.array_equal(got, want) and type(gs) is float and gs == ws
    assert loop_stats["native"] - before["native"] == 1
    assert kiln.explain(libm_calls)(x, y, k).graph_break_count == 0
    text = "".join(p.read_text() for p in (tmp_path / "dump").glob("*_loops/loops.cpp"))
    assert "kiln_libm_exp(" in text and 'double kiln_libm_exp(double) noexcept __asm__("exp")' in text
    # the entry test bounds the Python int k + i in int64 without the literal g++ warns of
    assert "(__int128)(-9223372036854775807LL - 1)" in text and "9223372036854775808LL" not in text


def int_hash(a, k):
    s, q, n = np.int32(7), np.int64(0), np.uint8(0)
    for i in range(a.shape[0]):
        s = s * np.int32(31) + a[i]
        q = q + np.int64(a[i]) // k
        n = n + np.uint8(100)
    return s, q, n


def test_numpy_integer_scalars_raise_where_numpys_error_mode_says_so():
    """NumPy's scalar math warns where an integer wraps ("overflow encountered in scalar
    add") or divides by zero, and raises, calls or logs under ``np.errstate``; a native
    loop wrapped silently, so ``np.errstate(over="raise")`` (or a filter that makes the
    warning an error) raised nothing. Such a body now runs as Python where NumPy's mode
    traps, which raises at NumPy's iteration. (A native run still does not warn.)"""
    import warnings
    a = np.arange(1, 40, dtype=np.int32) * 1000
    f = kiln.compile(int_hash)
    for k in (np.int64(3), np.int64(0)):
        before = dict(loop_stats)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got, want = f(a, k), int_hash(a, k)
        assert [type(v) for v in got] == [type(v) for v in want] and got == want
        assert loop_stats["native"] - before["native"] == 1
    for g in (int_hash, f):   # (n + 100 wraps first: the third iteration)
        with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="^overflow .* scalar add"):
            g(a, np.int64(3))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(RuntimeWarning, match="^overflow .* scalar add"):
                g(a, np.int64(3))
        with np.errstate(divide="raise", over="ignore"), \
                pytest.raises(FloatingPointError, match="^divide by zero .* scalar floor_divide"):
            g(a, np.int64(0))
    with np.errstate(all="ignore"):
        assert f(a, np.int64(0)) == int_hash(a, np.int64(0))


def _sum_of_swapped_pairs_and_reversed_rows(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i, 1]
        s += x[i, 0]
    t = 0.0
    for i in range(y.shape[0]):
        for j in range(8):
            t += y[i, 7 - j]
    return s, t


def test_in_order_float_sums_read_the_right_elements():
    # GCC 12.2 (bug 110381) vectorized these in-order sums and lost the loads' order:
    # 9120 and 15184 for 8128 (a float carried in a native loop goes through the
    # prelude's KILN_OPAQUE)
    x, y = np.arange(128.0).reshape(64, 2), np.arange(128.0).reshape(16, 8)
    before = dict(loop_stats)
    got = kiln.compile(_sum_of_swapped_pairs_and_reversed_rows)(x, y)
    assert got == _sum_of_swapped_pairs_and_reversed_rows(x, y) == (8128.0, 8128.0)
    assert loop_stats["native"] > before["native"]


def _running_sum(x):
    y = np.empty_like(x)
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = y[i - 1] + x[i]
    return y


def test_a_pooled_array_a_loop_fills_is_not_its_tuple():
    # The loop's operand was a pooled buffer (>= 64 KiB): its pool took the loop's result,
    # a tuple, and the next call passed that tuple to a kernel as an array (TypeError).
    x = np.random.default_rng(0).random(9000)
    compiled = kiln.compile(_running_sum)
    for _ in range(3):
        np.testing.assert_array_equal(compiled(x), _running_sum(x))


def _record_states(x, B, u, c=0.0):
    """A state-space recorder (test_programs_real11's state_space_simulation): each trip
    writes one row of each record, which the graph loop carries."""
    n = len(u)
    xs = np.empty((n, x.shape[0]))
    total = np.zeros(n)
    for k in range(n):
        xs[k] = x + c / x if c else x
        total[k] += x.sum()
        x = B @ x + u[k]
    return xs, total, x


def _swap_rows(a, b, n):
    for _ in range(n):
        a[1:3] += 1.0
        a, b = b, a      # a's old array is b's next value; b's old array a's
    return a, b


def test_a_graph_loop_writes_the_rows_it_records_in_place(monkeypatch):
    """state_space_simulation x10 (250 trips, xs of 250x20) ran 2.3x NumPy: capture made
    ``xs[k] = x`` the functional ``index_put(xs, ...)`` the next trip carries, and the
    compiled body copied xs (and ys) every trip to write one row (3.0 ms a call against
    NumPy's 1.3). The loop's carried arrays are its own copies that nothing reads once
    the trip has their new value (GraphLoopBody.reusable), so the body is compiled with
    them donated (Graph.donated): the extern writes the row in place, no copy. An array
    another position carries on (a swap) is not written in place."""
    from kiln.ops import graph_loops, scatter
    copies = []
    real = scatter.fresh_copy
    monkeypatch.setattr(scatter, "fresh_copy", lambda x: copies.append(np.shape(x)) or real(x))
    bodies = []
    run = graph_loops.GraphLoopBody.run
    monkeypatch.setattr(graph_loops.GraphLoopBody, "run",
                        lambda self, *a: bodies.append(self) or run(self, *a))
    compiled = kiln.compile(_record_states)
    rng = np.random.default_rng(5)
    x, B = rng.standard_normal(6), rng.standard_normal((6, 6)) * 0.3
    for n in (300, 300, 7):
        u = rng.standard_normal((n, 6))
        del copies[:]
        for got, want in zip(compiled(x, B, u), _record_states(x, B, u)):
            np.testing.assert_allclose(got, want, rtol=1e-13)
        assert (n, 6) not in copies, copies   # (total[k] += s still copies: see docs)
    assert bodies and all(len(b.in_place) == 2 for b in bodies)   # xs and total
    # NumPy's error mode raising: the body runs as its NumPy program (not op by op, as a
    # graph writing the caller's arrays does), reaching the error where NumPy does or none
    x0, u = np.array([1.0, 2.0, 3.0]), np.full((300, 6), -0.25)
    for x, B2, error in ((x0, np.eye(3), True), (x0 + 0.1, np.eye(3), False)):
        with np.errstate(divide="raise"):
            if error:
                with pytest.raises(FloatingPointError) as want:
                    _record_states(x, B2, u[:, :3], 1.0)
                with pytest.raises(FloatingPointError, match=str(want.value)):
                    compiled(x, B2, u[:, :3].copy(), 1.0)
            else:
                for got, want in zip(compiled(x, B2, u[:, :3].copy(), 1.0),
                                     _record_states(x, B2, u[:, :3], 1.0)):
                    np.testing.assert_allclose(got, want, rtol=1e-13)

    compiled = kiln.compile(_swap_rows)
    del bodies[:]
    for n in (9, 5, 6, 5, 6):
        a, b = np.zeros((4, 3)), np.ones((4, 3))
        got, want = compiled(a.copy(), b.copy(), n), _swap_rows(a.copy(), b.copy(), n)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    assert bodies and all(b.next[p] != ("in", i) for b in bodies for i in b.in_place
                          for p in range(len(b.next)))
