"""npbench's NumPy kernels (benchmarks/npbench.py, which times them) at small sizes, checked
like tests/test_programs.py: values, dtypes, shapes and the arguments they write, on cpp and
eager. The benchmark found a first call of 84 s (azimint_naive's bins fused into a stage
whose every pairwise term held every bin) and 200 kernels built for floyd_warshall."""
from __future__ import annotations

import numpy as np

from benchmarks import npbench as nb
from benchmarks.npbench_more import cases as more_cases
from tests.test_programs import program_registry, program_test

PROGRAMS, program = program_registry()
_rng = np.random.default_rng(2026)


CALLS = {
    nb.lu: [(nb.spd(_rng, 9),)],
    nb.cholesky: [(nb.spd(_rng, 9),)],
    nb.gramschmidt: [(_rng.random((9, 6)),)],
    nb.durbin: [(_rng.random(12) * 0.1,)],
    nb.trisolv: [(np.tril(nb.spd(_rng, 9)), np.zeros(9), _rng.random(9))],
    nb.seidel_2d: [(3, 7, _rng.random((7, 7)))],
    nb.jacobi_1d: [(6, _rng.random(20), _rng.random(20))],
    nb.fdtd_2d: [(3, *[_rng.random((6, 7)) for _ in range(3)], _rng.random(3))],
    nb.nussinov: [(9, _rng.integers(0, 4, 9).astype(np.int32))],
    nb.floyd_warshall: [(_rng.integers(1, 100, (12, 12)).astype(np.int32),)],
    nb.go_fast: [(_rng.random((12, 12)),)],
    nb.arc_distance: [tuple(_rng.random(40) for _ in range(4))],
    nb.azimint_naive: [(_rng.random(300), _rng.random(300), 12), (_rng.random(300), _rng.random(300), 4)],
    nb.mandelbrot1: [(-2.25, 0.75, -1.25, 1.25, 9, 8, 6)],
    nb.crc16: [(_rng.integers(0, 256, 40, dtype=np.uint8),)],
    nb.spmv: [nb.csr(_rng, 12, 40)],
    nb.softmax: [(_rng.random((2, 3, 10)).astype(np.float32),), (_rng.random((3, 7)),)],
    nb.hdiff: [(_rng.random((8, 9, 3)), np.zeros((4, 5, 3)), _rng.random((4, 5, 3)))],
    nb.gemver: [(1.5, 1.2, _rng.random((8, 8)), *[_rng.random(8) for _ in range(8)])],
    nb.deriche: [(0.25, _rng.random((6, 9)))],
}
for _fn, _calls in CALLS.items():
    program(*_calls)(_fn)
# benchmarks/npbench_more.py's kernels at their test size (data from a generator of their own)
for _fn, _args in more_cases(np.random.default_rng(2027), nb.spd).values():
    program(_args)(_fn)

test_program = program_test(PROGRAMS, ["cpp", "eager"])


def test_an_element_read_before_a_loop_leaves_no_view():
    """cholesky reads and writes A[0, 0] before its loops: an element read is a NumPy scalar,
    not a view of A, so the loops that write A are still loop nodes (they ran as Python)."""
    import kiln
    report = kiln.explain(nb.cholesky)(nb.spd(np.random.default_rng(3), 12))
    assert report.graph_break_count == 0, [b.reason for b in report.break_reasons]
    assert sum("loop node" in note for note in report.loops) == 2, report.loops


def test_an_int_argument_a_loop_specialized_is_a_constant_afterwards():
    """correlation unrolls ``range(M - 1)`` (guarding ``M == 8``) and then slices
    ``data[:, i + 1:M]`` in every step: M stayed a run-time value there, so the entry
    computed and checked two sizes per step (0.65x NumPy at M = 64). Guarded, M is the
    constant from there on: no size guards, and another M compiles again and is right."""
    import kiln
    from benchmarks.npbench_more import correlation
    rng = np.random.default_rng(2028)
    report = kiln.explain(correlation)(8, 13.0, rng.random((13, 8)))
    assert "M == 8" in report.guards and not any("len(range(" in g for g in report.guards), report.guards
    compiled = kiln.compile(correlation)
    for m in (8, 6, 8):
        data = rng.random((11, m))
        np.testing.assert_allclose(compiled(m, 11.0, data.copy()), correlation(m, 11.0, data.copy()),
                                   rtol=1e-12)
