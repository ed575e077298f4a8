"""Kernels of the same code build once (renderer.share_identical): the steps of an unrolled
loop over large arrays lower to kernels that differ only in the buffers they are handed."""
import re

import numpy as np
import pytest

import kiln
from kiln.lowering.renderer import renamed_by_position
from kiln.runtime import cpp_backend

from .helpers import assert_same


@pytest.fixture(autouse=True)
def _unrolled(monkeypatch):
    # These loops are time steps over whole arrays, which graph loop nodes take by default
    # (kiln/capture/graph_loop.py); unrolled, as they are with that off, each step is a
    # kernel of its own: what sharing is about.
    monkeypatch.setattr(kiln.config, "graph_loops", False)


def _compiled(fn):
    seen = []

    def backend(graph, example_inputs):
        seen.append(cpp_backend(graph, example_inputs))
        return seen[-1]
    return kiln.compile(fn, backend=backend), seen


def jacobi(a):
    for _ in range(6):
        b = a.copy()
        b[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
        a = b
    return a


def scaled_steps(a):
    for k in range(4):          # each step's constant differs: no two kernels alike
        b = a.copy()
        b[1:-1] = (a[:-2] + a[2:]) * (k + 1.5)
        a = b
    return a


def _launches(wrapper: str) -> list[str]:
    return re.findall(r"^\s+(kiln_fused\w*)\(", wrapper.split("def call")[1].split("\n_SECOND_BODIES")[0], re.M)


def test_unrolled_steps_share_one_kernel():
    x = np.random.default_rng(0).standard_normal((40, 30))
    compiled, seen = _compiled(jacobi)
    assert_same("jacobi", jacobi(x), compiled(x), rtol=0, atol=0)
    [art] = [c.kiln_artifact for c in seen]
    launches = _launches(art.wrapper)
    assert len(launches) >= 3, art.wrapper
    assert len(set(launches)) == 1 and art.kernel_names == launches[:1]
    # the kernel and its packed entry (a second body with its ops' predicates is a
    # library of its own, built when first wanted: runtime/fpwarn.py SecondBody)
    entries = re.findall(r'extern "C" void (kiln_fused\w+)\(', art.cpp)
    assert len(entries) == 2, entries
    assert f"this code runs as {len(launches)} kernels" in art.cpp
    y = np.random.default_rng(1).standard_normal((40, 30))
    assert_same("jacobi again", jacobi(y), compiled(y), rtol=0, atol=0)


def test_kernels_that_differ_in_a_constant_are_not_shared():
    x = np.random.default_rng(2).standard_normal(50)
    compiled, seen = _compiled(scaled_steps)
    assert_same("steps", scaled_steps(x), compiled(x), rtol=0, atol=0)
    [art] = [c.kiln_artifact for c in seen]
    launches = _launches(art.wrapper)
    assert len(launches) >= 2 and len(set(launches)) == len(launches), art.wrapper
    assert "one build:" not in art.cpp


def test_body_key_renames_the_name_and_parameters_by_position():
    one = ("// k_1\n//   a.py:3  b = a + 1\nvoid k_1_body(const double* p_a, double* p_buf0) "
           "{ p_buf0[0] = p_a[0] + 1; }")
    two = ("// k_7\n//   a.py:9  c = b + 1\nvoid k_7_body(const double* p_buf3, double* p_buf4) "
           "{ p_buf4[0] = p_buf3[0] + 1; }")
    swapped = ("// k_8\nvoid k_8_body(const double* p_buf3, double* p_buf4) "
               "{ p_buf3[0] = p_buf4[0] + 1; }")
    key = renamed_by_position(one, "k_1", ("p_a", "p_buf0"))
    assert key == renamed_by_position(two, "k_7", ("p_buf3", "p_buf4"))
    assert key != renamed_by_position(swapped, "k_8", ("p_buf3", "p_buf4"))


def heat_in_place(a, b):
    for _ in range(4):          # two half-steps per step, each writing an argument in place
        b[1:-1, 1:-1] = 0.125 * (a[2:, 1:-1] - 2.0 * a[1:-1, 1:-1] + a[:-2, 1:-1]) + a[1:-1, 1:-1]
        a[1:-1, 1:-1] = 0.125 * (b[1:-1, 2:] - 2.0 * b[1:-1, 1:-1] + b[1:-1, :-2]) + b[1:-1, 1:-1]


def test_shared_kernels_writing_arguments_in_place_leave_numpys_arguments():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((30, 20)), rng.standard_normal((30, 20))
    compiled, seen = _compiled(heat_in_place)
    want_a, want_b = a.copy(), b.copy()
    heat_in_place(want_a, want_b)
    compiled(a, b)
    assert_same("a", want_a, a, rtol=0, atol=0)
    assert_same("b", want_b, b, rtol=0, atol=0)
    [art] = [c.kiln_artifact for c in seen]
    launches = _launches(art.wrapper)
    assert len(set(launches)) < len(launches), art.wrapper


def floyd_warshall(path):   # npbench's: step k reads column k and row k
    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))


def column_smoothing(a, b):  # step k reads columns k - 1..k + 1 of a, writes column k of b
    for k in range(1, a.shape[1] - 1):
        b[:, k] = (a[:, k - 1] + a[:, k] + a[:, k + 1]) / 3.0
    return b


def reversed_relax(path):  # floyd_warshall's step over reversed views: offsets count down
    n = path.shape[0]
    for k in range(n):
        path[:] = np.minimum(path, np.add.outer(path[::-1, k], path[n - 1 - k, ::-1]) * 0.75)
    return path


@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_steps_that_differ_in_their_offsets_share_one_build(dtype):
    """Each step of floyd_warshall lowers to a kernel whose text differs from the others'
    only in the constant offsets of two loads (column k, row k): one kernel is built,
    taking the offsets that differ as arguments, and every launch passes its own."""
    n = 9
    path = np.random.default_rng(4).integers(1, 50, (n, n)).astype(dtype)
    compiled, seen = _compiled(floyd_warshall)
    want, got = path.copy(), path.copy()
    floyd_warshall(want)
    assert compiled(got) is None
    assert_same("path", want, got, rtol=0, atol=0)
    [art] = [c.kiln_artifact for c in seen]
    launches = re.findall(r"^\s+(kiln_fused\w*)\((.*)\)$", art.wrapper.split("def call")[1].split("\n_SECOND_BODIES")[0], re.M)
    assert len(launches) == n and len({name for name, _ in launches}) == 1, art.wrapper
    # the kernel and its packed entry (a second body with its ops' predicates is a
    # library of its own, built when first wanted: runtime/fpwarn.py SecondBody)
    entries = re.findall(r'extern "C" void (kiln_fused\w+)\(', art.cpp)
    assert len(entries) == 2, entries
    assert f"this code runs as {n} kernels of the graph, each launch with its own buffers and offsets" in art.cpp
    offsets = [tuple(int(v) for v in args.split(", ")[2:-1]) for _, args in launches]
    assert offsets == [(k, k * n) for k in range(n)], offsets    # column k, row k
    assert re.search(r"int64_t k_off\d+, int64_t k_off\d+, int nthreads\)", art.cpp), art.cpp
    again = np.random.default_rng(5).integers(1, 50, (n, n)).astype(dtype)
    want = again.copy()
    floyd_warshall(want)
    compiled(again)
    assert_same("path again", want, again, rtol=0, atol=0)


@pytest.mark.parametrize("fn", [column_smoothing, reversed_relax], ids=lambda f: f.__name__)
def test_offset_shared_steps_match_numpy(fn):
    rng = np.random.default_rng(6)
    args = [rng.standard_normal((7, 5)) for _ in range(2)] if fn is column_smoothing else [rng.standard_normal((6, 6))]
    want_args = [a.copy() for a in args]
    compiled, seen = _compiled(fn)
    assert_same(fn.__name__, fn(*want_args), compiled(*args), rtol=0, atol=0)
    for w, a in zip(want_args, args):
        assert_same("argument", w, a, rtol=0, atol=0)
    [art] = [c.kiln_artifact for c in seen]
    launches = _launches(art.wrapper)
    assert len(launches) >= 3 and len(set(launches)) == 1, art.wrapper   # one build


def test_resolved_offsets_read_as_an_unmarked_index():
    from kiln.lowering.loop_ir import Affine
    from kiln.lowering.renderer import offsets_blind, resolve_offsets
    for index in [Affine(0, {"x0": 6, "x1": 1}), Affine(5, {"x0": 6}), Affine(-3, {"x1": 1}),
                  Affine(7), Affine(0), Affine(2, {"x0": -1})]:
        marked = f"p[{index.render(mark=True)}] = q[{index.render(mark=True)}];"
        plain = f"p[{index.render()}] = q[{index.render()}];"
        assert resolve_offsets(marked) == (plain, (index.const, index.const))
        text, _ = resolve_offsets(marked, vary=(1,))
        assert text == f"p[{index.render()}] = q[{index.render(mark=True).split(chr(1))[0]}k_off1];"
    assert offsets_blind(f"p[{Affine(4, {'x0': 1}).render(mark=True)}]") == \
        offsets_blind(f"p[{Affine(-9, {'x0': 1}).render(mark=True)}]")


def test_shared_kernels_rerun_their_own_second_body():
    """A shared kernel whose flags ask for its second body (the predicates that say which
    op overflowed) loads the second body of its own name: the module's table held the
    last alias's, of another name, and the call raised AttributeError "undefined symbol
    ..._told_run_packed" (fuzz seed 739)."""
    def squares(acc, s):
        for i in range(14):
            acc = acc ** 2
            acc = acc + np.roll(acc, s[0]) * 0.25
        return acc
    from tests.test_programs import check_program
    check_program(squares, [(np.array([-1, 1, 0]), np.array([0]))], "cpp")
