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
    return re.findall(r"^\s+(kiln_fused\w*)\(", wrapper.split("def call")[1], re.M)


def test_unrolled_steps_share_one_kernel():
    x = np.random.default_rng(0).standard_normal((40, 30))
    compiled, seen = _compiled(jacobi)
    assert_same("jacobi", jacobi(x), compiled(x), rtol=0, atol=0)
    [art] = [c.kiln_artifact for c in seen]
    launches = _launches(art.wrapper)
    assert len(launches) >= 3, art.wrapper
    assert len(set(launches)) == 1 and art.kernel_names == launches[:1]
    assert art.cpp.count('extern "C" void kiln_fused') == 2     # the kernel and its packed entry
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
